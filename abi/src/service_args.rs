//! wasm32 layouts of the service-call argument structs
//! (docs/abi.md, "Service-call argument structs"): what the guest passes to
//! each host import.

layouts! {
    /// `XLA_FFI_Error_Create_Args` in wasm32 (import `error_create`).
    error_create_args: size 16, align 4, struct_size 16 {
        /// Offset of `message` (`const char*`, NUL-terminated).
        MESSAGE = 8,
        /// Offset of `errc` (`XLA_FFI_Error_Code`).
        ERRC = 12,
    }

    /// `XLA_FFI_Error_GetDetails_Args` in wasm32 (0.5; import `error_get_message`).
    error_get_details_args: size 20, align 4, struct_size 20 {
        /// Offset of `error` (`XLA_FFI_Error*`).
        ERROR = 8,
        /// Offset of `message` (`const char*`, out: the host writes a guest address).
        MESSAGE = 12,
        /// Offset of `errc` (`XLA_FFI_Error_Code`, out).
        ERRC = 16,
    }

    /// `XLA_FFI_Error_GetMessage_Args` in wasm32 (0.3; import
    /// `error_get_message`): [`error_get_details_args`] without `errc`.
    error_get_message_args: size 16, align 4, struct_size 16 {
        /// Offset of `error` (`XLA_FFI_Error*`).
        ERROR = 8,
        /// Offset of `message` (`const char*`, out: the host writes a guest address).
        MESSAGE = 12,
    }

    /// `XLA_FFI_Error_Destroy_Args` in wasm32 (import `error_destroy`).
    error_destroy_args: size 12, align 4, struct_size 12 {
        /// Offset of `error` (`XLA_FFI_Error*`).
        ERROR = 8,
    }

    /// `XLA_FFI_TypeInfo` in wasm32.
    type_info: size 12, align 4, struct_size 12 {
        /// Offset of `deleter` (`void (*)(void*)`).
        DELETER = 8,
    }

    /// `XLA_FFI_Future_Create_Args` in wasm32 (import `future_create`).
    /// `STRUCT_SIZE` (8) does not cover the `future` out-field.
    future_create_args: size 12, align 4, struct_size 8 {
        /// Offset of `future` (`XLA_FFI_Future*`, out).
        FUTURE = 8,
    }

    /// `XLA_FFI_Future_SetAvailable_Args` in wasm32 (import `future_set_available`).
    future_set_available_args: size 12, align 4, struct_size 12 {
        /// Offset of `future` (`XLA_FFI_Future*`).
        FUTURE = 8,
    }

    /// `XLA_FFI_Future_SetError_Args` in wasm32 (import `future_set_error`).
    future_set_error_args: size 16, align 4, struct_size 16 {
        /// Offset of `future` (`XLA_FFI_Future*`).
        FUTURE = 8,
        /// Offset of `error` (`XLA_FFI_Error*`).
        ERROR = 12,
    }

    /// `XLA_FFI_Handler_Bundle` in wasm32 (no `struct_size`).
    handler_bundle: size 20, align 4 {
        /// Offset of `instantiate` (`XLA_FFI_Handler*`).
        INSTANTIATE = 0,
        /// Offset of `prepare` (`XLA_FFI_Handler*`).
        PREPARE = 4,
        /// Offset of `initialize` (`XLA_FFI_Handler*`).
        INITIALIZE = 8,
        /// Offset of `execute` (`XLA_FFI_Handler*`).
        EXECUTE = 12,
        /// Offset of `record` (`XLA_FFI_Handler*`, 0.5).
        RECORD = 16,
    }

    /// `XLA_FFI_Handler_Register_Args` in wasm32 (import `handler_register`).
    handler_register_args: size 48, align 4, struct_size 48 {
        /// Offset of the inline `name` (`XLA_FFI_ByteSpan`).
        NAME = 8,
        /// Offset of the inline `platform` (`XLA_FFI_ByteSpan`).
        PLATFORM = 16,
        /// Offset of the inline `bundle` (`XLA_FFI_Handler_Bundle`).
        BUNDLE = 24,
        /// Offset of `traits` (`XLA_FFI_Handler_Traits`, `uint32_t`).
        TRAITS = 44,
    }

    /// `XLA_FFI_Type_Register_Args` in wasm32 (import `type_register`).
    /// `STRUCT_SIZE` (20) does not cover `type_info`.
    type_register_args: size 24, align 4, struct_size 20 {
        /// Offset of the inline `name` (`XLA_FFI_ByteSpan`).
        NAME = 8,
        /// Offset of `type_id` (`XLA_FFI_TypeId*`, in/out).
        TYPE_ID = 16,
        /// Offset of `type_info` (`const XLA_FFI_TypeInfo*`).
        TYPE_INFO = 20,
    }

    /// `XLA_FFI_InvokeContext_Get_Args` (0.3: `XLA_FFI_ExecutionContext_Get_Args`)
    /// in wasm32 (import `execution_context_get`).
    execution_context_get_args: size 20, align 4, struct_size 20, ctx ExecutionContext {
        /// Offset of `type_id` (`XLA_FFI_TypeId*`).
        TYPE_ID = 12,
        /// Offset of `data` (`void*`, out).
        DATA = 16,
    }

    /// `XLA_FFI_State_Set_Args` in wasm32 (import `state_set`).
    state_set_args: size 24, align 4, struct_size 24, ctx ExecutionContext {
        /// Offset of `stage` (`XLA_FFI_ExecutionStage`).
        STAGE = 12,
        /// Offset of `type_id` (`XLA_FFI_TypeId*`).
        TYPE_ID = 16,
        /// Offset of `state` (`void*`).
        STATE = 20,
    }

    /// `XLA_FFI_Stream_Get_Args` in wasm32 (import `stream_get`).
    stream_get_args: size 16, align 4, struct_size 16, ctx ExecutionContext {
        /// Offset of `stream` (`void*`, out).
        STREAM = 12,
    }

    /// `XLA_FFI_DeviceMemory_Allocate_Args` in wasm32 (import `device_memory_allocate`).
    device_memory_allocate_args: size 24, align 4, struct_size 24, ctx ExecutionContext {
        /// Offset of `size` (`size_t`).
        SIZE_FIELD = 12,
        /// Offset of `alignment` (`size_t`).
        ALIGNMENT = 16,
        /// Offset of `data` (`void*`, out).
        DATA = 20,
    }

    /// `XLA_FFI_DeviceMemory_Free_Args` in wasm32 (import `device_memory_free`).
    device_memory_free_args: size 20, align 4, struct_size 20, ctx ExecutionContext {
        /// Offset of `size` (`size_t`).
        SIZE_FIELD = 12,
        /// Offset of `data` (`void*`).
        DATA = 16,
    }

    /// `XLA_FFI_ThreadPool_Schedule_Args` in wasm32 (import `thread_pool_schedule`).
    thread_pool_schedule_args: size 20, align 4, struct_size 20, ctx ExecutionContext {
        /// Offset of `task` (`XLA_FFI_Task*`).
        TASK = 12,
        /// Offset of `data` (`void*`).
        DATA = 16,
    }

    /// `XLA_FFI_ThreadPool_NumThreads_Args` in wasm32 (import `thread_pool_num_threads`).
    thread_pool_num_threads_args: size 16, align 4, struct_size 16, ctx ExecutionContext {
        /// Offset of `num_threads` (`int64_t*`, out).
        NUM_THREADS = 12,
    }

    /// `XLA_FFI_RunId_Get_Args` in wasm32 (import `run_id_get`). Note the
    /// 4 bytes of padding before `run_id`.
    run_id_get_args: size 24, align 8, struct_size 24, ctx ExecutionContext {
        /// Offset of `run_id` (`int64_t`, out).
        RUN_ID = 16,
    }

    /// `XLA_FFI_DeviceOrdinal_Get_Args` in wasm32 (import `device_ordinal_get`).
    device_ordinal_get_args: size 16, align 4, struct_size 16, ctx ExecutionContext {
        /// Offset of `device_ordinal` (`int32_t`, out).
        DEVICE_ORDINAL = 12,
    }

    /// `XLA_FFI_InvokeContext_FindExtension_Args` in wasm32 (0.5; import
    /// `invoke_context_find_extension`). `STRUCT_SIZE` (28) < `SIZE` (32).
    invoke_context_find_extension_args: size 32, align 8, struct_size 28, ctx InvokeContext {
        /// Offset of `extension_type` (`int64_t`).
        EXTENSION_TYPE = 16,
        /// Offset of `extension` (`const XLA_FFI_Extension*`, out).
        EXTENSION = 24,
    }

    /// `XLA_FFI_CustomOptions_Get_Args` in wasm32 (0.5; import `custom_options_get`).
    custom_options_get_args: size 16, align 4, struct_size 16, ctx InvokeContext {
        /// Offset of `attrs` (`const XLA_FFI_Attrs*`, out).
        ATTRS = 12,
    }
}

/// `XLA_FFI_State_Get_Args` in wasm32 (import `state_get`): the layout of
/// [`state_set_args`], with `state` an out-field (`void*`: the host writes it).
pub mod state_get_args {
    pub use super::state_set_args::*;
}
