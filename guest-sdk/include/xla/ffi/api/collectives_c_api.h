/*
 * The XLA FFI collectives extension's C types (XLA FFI 0.5), for cyxla
 * guests: the same names and values as XLA's `xla/ffi/api/collectives_c_api.h`,
 * so that sources naming them compile. A cyxla guest's context never holds
 * this extension (XLA_FFI_InvokeContext_FindExtension answers NULL): a
 * sandboxed guest runs on one device with no communicator, and the C++
 * wrappers of xla/ffi/api/collectives_api.h fail to compile for it.
 *
 * Plain C (C11 or later) and C++.
 */
#ifndef XLA_FFI_API_COLLECTIVES_C_API_H_
#define XLA_FFI_API_COLLECTIVES_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "xla/ffi/api/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Extension type of the collectives extension. */
#define XLA_FFI_Extension_Collectives 129
/** @brief Its major version. */
#define XLA_FFI_Extension_Collectives_MajorVersion 0
/** @brief Its minor version. */
#define XLA_FFI_Extension_Collectives_MinorVersion 2

/** @brief How replica groups are read. */
typedef enum XLA_FFI_CollectiveGroupMode {
  XLA_FFI_GROUP_CROSS_REPLICA = 0,               /**< Across replicas. */
  XLA_FFI_GROUP_CROSS_PARTITION = 1,             /**< Across partitions. */
  XLA_FFI_GROUP_CROSS_REPLICA_AND_PARTITION = 2, /**< Across both. */
  XLA_FFI_GROUP_FLATTENED_ID = 3,                /**< Flattened ids. */
} XLA_FFI_CollectiveGroupMode;

/** @brief A replica group. */
typedef struct XLA_FFI_ReplicaGroup {
  const int64_t* ids; /**< Its ids. */
  size_t size;        /**< Their number. */
} XLA_FFI_ReplicaGroup;

/** @brief The extension (never present in a cyxla guest). */
typedef struct XLA_FFI_Collectives_Extension XLA_FFI_Collectives_Extension;
/** @brief Opaque collectives state. */
typedef struct XLA_FFI_CollectivesState XLA_FFI_CollectivesState;
/** @brief Opaque communicator. */
typedef struct XLA_FFI_Communicator XLA_FFI_Communicator;
/** @brief Opaque memory window. */
typedef struct XLA_FFI_Window XLA_FFI_Window;

/** @brief A registered memory region. */
typedef struct XLA_FFI_CollectiveMemoryRegion {
  const void* buffer; /**< Its address. */
  size_t byte_size;   /**< Its size. */
  uint64_t flags;     /**< Backend flags. */
} XLA_FFI_CollectiveMemoryRegion;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XLA_FFI_API_COLLECTIVES_C_API_H_ */
