/*
 * The host functions a cyxla guest imports (module "cyxla"), one per slot of
 * the XLA_FFI_Api function table, each with exactly the C signature of that
 * API function. The cyxla runtime (guest-sdk/c/cyxla_runtime.c) puts their
 * addresses into the guest's XLA_FFI_Api; handlers normally call them through
 * `call_frame->api`, not directly.
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

/** @brief `XLA_FFI_Error_Create`: the host copies the message and returns a
 *  nonzero error handle. */
CYXLA_IMPORT(CYXLA_IMPORT_ERROR_CREATE)
XLA_FFI_Error* cyxla_import_error_create(XLA_FFI_Error_Create_Args* args);

/** @brief `XLA_FFI_Error_GetMessage`: the host copies the message into guest
 *  memory (through `cyxla_alloc`) and writes its address to `args->message`. */
CYXLA_IMPORT(CYXLA_IMPORT_ERROR_GET_MESSAGE)
void cyxla_import_error_get_message(XLA_FFI_Error_GetMessage_Args* args);

/** @brief `XLA_FFI_Error_Destroy`: releases an error handle. */
CYXLA_IMPORT(CYXLA_IMPORT_ERROR_DESTROY)
void cyxla_import_error_destroy(XLA_FFI_Error_Destroy_Args* args);

/** @brief `XLA_FFI_Handler_Register`: unsupported (UNIMPLEMENTED); a guest
 *  declares its targets with CYXLA_TARGET. */
CYXLA_IMPORT(CYXLA_IMPORT_HANDLER_REGISTER)
XLA_FFI_Error* cyxla_import_handler_register(XLA_FFI_Handler_Register_Args* args);

/** @brief `XLA_FFI_Stream_Get`: unsupported (UNIMPLEMENTED). */
CYXLA_IMPORT(CYXLA_IMPORT_STREAM_GET)
XLA_FFI_Error* cyxla_import_stream_get(XLA_FFI_Stream_Get_Args* args);

/** @brief `XLA_FFI_Type_Register`. */
CYXLA_IMPORT(CYXLA_IMPORT_TYPE_REGISTER)
XLA_FFI_Error* cyxla_import_type_register(XLA_FFI_Type_Register_Args* args);

/** @brief `XLA_FFI_ExecutionContext_Get`. */
CYXLA_IMPORT(CYXLA_IMPORT_EXECUTION_CONTEXT_GET)
XLA_FFI_Error* cyxla_import_execution_context_get(XLA_FFI_ExecutionContext_Get_Args* args);

/** @brief `XLA_FFI_State_Set`. */
CYXLA_IMPORT(CYXLA_IMPORT_STATE_SET)
XLA_FFI_Error* cyxla_import_state_set(XLA_FFI_State_Set_Args* args);

/** @brief `XLA_FFI_State_Get`. */
CYXLA_IMPORT(CYXLA_IMPORT_STATE_GET)
XLA_FFI_Error* cyxla_import_state_get(XLA_FFI_State_Get_Args* args);

/** @brief `XLA_FFI_DeviceMemory_Allocate`: unsupported (UNIMPLEMENTED). */
CYXLA_IMPORT(CYXLA_IMPORT_DEVICE_MEMORY_ALLOCATE)
XLA_FFI_Error* cyxla_import_device_memory_allocate(XLA_FFI_DeviceMemory_Allocate_Args* args);

/** @brief `XLA_FFI_DeviceMemory_Free`: unsupported (UNIMPLEMENTED). */
CYXLA_IMPORT(CYXLA_IMPORT_DEVICE_MEMORY_FREE)
XLA_FFI_Error* cyxla_import_device_memory_free(XLA_FFI_DeviceMemory_Free_Args* args);

/** @brief `XLA_FFI_ThreadPool_Schedule`: unsupported (UNIMPLEMENTED). */
CYXLA_IMPORT(CYXLA_IMPORT_THREAD_POOL_SCHEDULE)
XLA_FFI_Error* cyxla_import_thread_pool_schedule(XLA_FFI_ThreadPool_Schedule_Args* args);

/** @brief `XLA_FFI_ThreadPool_NumThreads`: unsupported (UNIMPLEMENTED). */
CYXLA_IMPORT(CYXLA_IMPORT_THREAD_POOL_NUM_THREADS)
XLA_FFI_Error* cyxla_import_thread_pool_num_threads(XLA_FFI_ThreadPool_NumThreads_Args* args);

/** @brief `XLA_FFI_Future_Create`: unsupported (UNIMPLEMENTED). */
CYXLA_IMPORT(CYXLA_IMPORT_FUTURE_CREATE)
XLA_FFI_Error* cyxla_import_future_create(XLA_FFI_Future_Create_Args* args);

/** @brief `XLA_FFI_Future_SetAvailable`: unsupported (UNIMPLEMENTED). */
CYXLA_IMPORT(CYXLA_IMPORT_FUTURE_SET_AVAILABLE)
XLA_FFI_Error* cyxla_import_future_set_available(XLA_FFI_Future_SetAvailable_Args* args);

/** @brief `XLA_FFI_Future_SetError`: unsupported (UNIMPLEMENTED). */
CYXLA_IMPORT(CYXLA_IMPORT_FUTURE_SET_ERROR)
XLA_FFI_Error* cyxla_import_future_set_error(XLA_FFI_Future_SetError_Args* args);

/** @brief `XLA_FFI_RunId_Get`. */
CYXLA_IMPORT(CYXLA_IMPORT_RUN_ID_GET)
XLA_FFI_Error* cyxla_import_run_id_get(XLA_FFI_RunId_Get_Args* args);

/** @brief `XLA_FFI_DeviceOrdinal_Get`. */
CYXLA_IMPORT(CYXLA_IMPORT_DEVICE_ORDINAL_GET)
XLA_FFI_Error* cyxla_import_device_ordinal_get(XLA_FFI_DeviceOrdinal_Get_Args* args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* __wasm32__ */

#endif /* CYXLA_IMPORTS_H_ */
