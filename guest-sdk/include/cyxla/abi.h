/*
 * cyxla guest ABI v1: names and numbers a wasm32 guest and the cyxla host
 * agree on.
 *
 * The ABI is written once, in Rust, in `guest-sdk/abi/src/lib.rs`; this header
 * mirrors it for C and C++ guests. The test `cpp_sdk::header_constants_match_abi_rs`
 * (tests/integration/cpp_sdk.rs) checks every value here, and every wasm32
 * struct layout of `xla/ffi/api/c_api.h`, against that file.
 *
 * Plain C; usable from C and C++ on any target.
 */
#ifndef CYXLA_ABI_H_
#define CYXLA_ABI_H_

/** @file
 *  @brief The constants of the cyxla guest ABI (mirror of `guest-sdk/abi/src/lib.rs`). */

/** @brief Version of the guest ABI; the export `cyxla_abi_version` returns it. */
#define CYXLA_ABI_VERSION 1

/** @brief Name of the custom section in which a guest lists its targets. */
#define CYXLA_TARGETS_SECTION "cyxla.targets"

/** @brief Every record in #CYXLA_TARGETS_SECTION starts with this prefix,
 *  followed by `<target> <export>\n`. */
#define CYXLA_RECORD_PREFIX "cyxla-target v1 "

/** @brief Maximum length in bytes of a target or export name. Names match
 *  `[A-Za-z0-9_.$-]+`. */
#define CYXLA_MAX_NAME_LEN 255

/** @brief Import module of the host functions offered to guests. */
#define CYXLA_IMPORT_MODULE "cyxla"

/** @brief WASI preview 1 module a guest may also import from (nothing is
 *  granted by default). */
#define CYXLA_WASI_MODULE "wasi_snapshot_preview1"

/** @brief Major version of the XLA FFI C API of the guest-side `XLA_FFI_Api`. */
#define CYXLA_FFI_API_MAJOR 0
/** @brief Minor version of the XLA FFI C API of the guest-side `XLA_FFI_Api`. */
#define CYXLA_FFI_API_MINOR 3

/** @brief Required export: the guest's linear memory. */
#define CYXLA_EXPORT_MEMORY "memory"
/** @brief Required export `() -> i32`: returns #CYXLA_ABI_VERSION. */
#define CYXLA_EXPORT_ABI_VERSION "cyxla_abi_version"
/** @brief Required export `() -> i32`: guest address of the guest's static
 *  `XLA_FFI_Api`. */
#define CYXLA_EXPORT_API "cyxla_api"
/** @brief Required export `(size: i32, align: i32) -> i32`: allocates in guest
 *  memory; 0 on failure. */
#define CYXLA_EXPORT_ALLOC "cyxla_alloc"
/** @brief Optional export `(ptr: i32, size: i32, align: i32)`: frees what
 *  #CYXLA_EXPORT_ALLOC returned. */
#define CYXLA_EXPORT_FREE "cyxla_free"
/** @brief Optional export `() -> i32`: guest address of a NUL-terminated
 *  message describing the last panic (trap), or 0. */
#define CYXLA_EXPORT_LAST_PANIC "cyxla_last_panic"
/** @brief Optional export `()`: WASI reactor initialisation, called once after
 *  instantiation. */
#define CYXLA_EXPORT_INITIALIZE "_initialize"

/** @brief Number of function slots of the version-0.3 `XLA_FFI_Api`, and of
 *  host imports. */
#define CYXLA_API_FN_SLOTS 18

/** @brief Import for `XLA_FFI_Error_Create` (slot 0): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_ERROR_CREATE "error_create"
/** @brief Import for `XLA_FFI_Error_GetMessage` (slot 1): `(args: i32)`. */
#define CYXLA_IMPORT_ERROR_GET_MESSAGE "error_get_message"
/** @brief Import for `XLA_FFI_Error_Destroy` (slot 2): `(args: i32)`. */
#define CYXLA_IMPORT_ERROR_DESTROY "error_destroy"
/** @brief Import for `XLA_FFI_Handler_Register` (slot 3): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_HANDLER_REGISTER "handler_register"
/** @brief Import for `XLA_FFI_Stream_Get` (slot 4): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_STREAM_GET "stream_get"
/** @brief Import for `XLA_FFI_Type_Register` (slot 5): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_TYPE_REGISTER "type_register"
/** @brief Import for `XLA_FFI_ExecutionContext_Get` (slot 6): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_EXECUTION_CONTEXT_GET "execution_context_get"
/** @brief Import for `XLA_FFI_State_Set` (slot 7): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_STATE_SET "state_set"
/** @brief Import for `XLA_FFI_State_Get` (slot 8): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_STATE_GET "state_get"
/** @brief Import for `XLA_FFI_DeviceMemory_Allocate` (slot 9): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_DEVICE_MEMORY_ALLOCATE "device_memory_allocate"
/** @brief Import for `XLA_FFI_DeviceMemory_Free` (slot 10): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_DEVICE_MEMORY_FREE "device_memory_free"
/** @brief Import for `XLA_FFI_ThreadPool_Schedule` (slot 11): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_THREAD_POOL_SCHEDULE "thread_pool_schedule"
/** @brief Import for `XLA_FFI_ThreadPool_NumThreads` (slot 12): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_THREAD_POOL_NUM_THREADS "thread_pool_num_threads"
/** @brief Import for `XLA_FFI_Future_Create` (slot 13): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_FUTURE_CREATE "future_create"
/** @brief Import for `XLA_FFI_Future_SetAvailable` (slot 14): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_FUTURE_SET_AVAILABLE "future_set_available"
/** @brief Import for `XLA_FFI_Future_SetError` (slot 15): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_FUTURE_SET_ERROR "future_set_error"
/** @brief Import for `XLA_FFI_RunId_Get` (slot 16): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_RUN_ID_GET "run_id_get"
/** @brief Import for `XLA_FFI_DeviceOrdinal_Get` (slot 17): `(args: i32) -> i32`. */
#define CYXLA_IMPORT_DEVICE_ORDINAL_GET "device_ordinal_get"

#endif /* CYXLA_ABI_H_ */
