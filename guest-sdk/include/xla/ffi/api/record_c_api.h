/*
 * The XLA FFI record extension's C identifiers (XLA FFI 0.5), for cyxla
 * guests. The extension records GPU command buffers (CUDA graphs) during the
 * RECORD execution stage; a cyxla guest is called only to execute, on the
 * CPU, and its context never holds this extension. The identifiers below
 * exist so that code naming them compiles; the C++ wrappers of
 * xla/ffi/api/record_api.h fail to compile for a guest.
 *
 * Plain C (C11 or later) and C++.
 */
#ifndef XLA_FFI_API_RECORD_C_API_H_
#define XLA_FFI_API_RECORD_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "xla/ffi/api/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Extension type of the record extension. */
#define XLA_FFI_Extension_Record 128
/** @brief Its major version. */
#define XLA_FFI_Extension_Record_MajorVersion 0
/** @brief Its minor version. */
#define XLA_FFI_Extension_Record_MinorVersion 2

/** @brief Opaque recording context. */
typedef struct XLA_FFI_RecordContext XLA_FFI_RecordContext;
/** @brief Opaque recorded command. */
typedef struct XLA_FFI_Command XLA_FFI_Command;
/** @brief The record frame (never present in a cyxla guest). */
typedef struct XLA_FFI_RecordFrame XLA_FFI_RecordFrame;
/** @brief The extension (never present in a cyxla guest). */
typedef struct XLA_FFI_Record_Extension XLA_FFI_Record_Extension;

/** @brief Create or update the recorded commands. */
typedef enum XLA_FFI_RecordAction {
  XLA_FFI_RecordAction_Create = 0, /**< Create. */
  XLA_FFI_RecordAction_Update = 1, /**< Update. */
} XLA_FFI_RecordAction;

/** @brief Format of a kernel's code. */
typedef enum XLA_FFI_SourceFormat {
  XLA_FFI_SourceFormat_PTX = 0,          /**< PTX. */
  XLA_FFI_SourceFormat_CUBIN = 1,        /**< CUBIN. */
  XLA_FFI_SourceFormat_FUNCTION_PTR = 2, /**< A device function pointer. */
} XLA_FFI_SourceFormat;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XLA_FFI_API_RECORD_C_API_H_ */
