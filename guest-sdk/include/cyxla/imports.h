/*
 * The host functions a cyxla guest imports (module "cyxla"), one per slot of
 * the XLA_FFI_Api function table, each with exactly the C signature of that
 * API function, declared from the list CYXLA_IMPORTS of cyxla/abi.h. The
 * cyxla runtime (guest-sdk/c/cyxla_runtime.c) puts their addresses into the
 * guest's XLA_FFI_Api; handlers normally call them through `call_frame->api`,
 * not directly.
 *
 * Only declared on wasm32 (elsewhere there is no host to import from).
 * Plain C; usable from C and C++.
 */
#ifndef CYXLA_IMPORTS_H_
#define CYXLA_IMPORTS_H_

/** @file
 *  @brief Declarations of the `cyxla` host imports (wasm32 only). */

#include "cyxla/abi.h"
#include "xla/ffi/api/c_api.h"

#if defined(__wasm32__) || defined(CYXLA_DOXYGEN)

/** @brief Declares a function imported from module #CYXLA_IMPORT_MODULE under
 *  `name`. */
#define CYXLA_IMPORT(name) \
  __attribute__((import_module(CYXLA_IMPORT_MODULE), import_name(name)))

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Declares `cyxla_import_<name>`, the import `name` of #CYXLA_IMPORTS,
 *  with the C signature of its `XLA_FFI_Api` function: for example
 *  `XLA_FFI_Error* cyxla_import_error_create(XLA_FFI_Error_Create_Args* args)`.
 *  cyxla/abi.h says what each import does. */
#define CYXLA_DECLARE_IMPORT(name, NAME, function, returns) \
  CYXLA_IMPORT(CYXLA_IMPORT_##NAME) returns cyxla_import_##name(function##_Args* args);

CYXLA_IMPORTS(CYXLA_DECLARE_IMPORT)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* __wasm32__ */

#endif /* CYXLA_IMPORTS_H_ */
