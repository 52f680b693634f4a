//! The `cyxla` host imports (wasm32 only) and the function-pointer part of
//! the guest's `XLA_FFI_Api`, in slot order (`abi::IMPORTS`).
//!
//! Each import has the C signature of its `XLA_FFI_Api` function in wasm32:
//! the guest address of the args struct in, an error handle out (0 =
//! success), except `error_get_message` and `error_destroy`, which return
//! nothing. Imports this SDK does not call take an untyped args pointer.

use crate::args;

#[link(wasm_import_module = "cyxla")]
unsafe extern "C" {
    #[link_name = "error_create"]
    pub(crate) fn error_create(args: *mut args::ErrorCreate) -> u32;
    #[link_name = "error_get_message"]
    pub(crate) fn error_get_message(args: *mut args::ErrorGetMessage);
    #[link_name = "error_destroy"]
    pub(crate) fn error_destroy(args: *mut args::ErrorDestroy);
    #[link_name = "handler_register"]
    fn handler_register(args: *mut u8) -> u32;
    #[link_name = "stream_get"]
    fn stream_get(args: *mut u8) -> u32;
    #[link_name = "type_register"]
    fn type_register(args: *mut u8) -> u32;
    #[link_name = "execution_context_get"]
    fn execution_context_get(args: *mut u8) -> u32;
    #[link_name = "state_set"]
    fn state_set(args: *mut u8) -> u32;
    #[link_name = "state_get"]
    fn state_get(args: *mut u8) -> u32;
    #[link_name = "device_memory_allocate"]
    fn device_memory_allocate(args: *mut u8) -> u32;
    #[link_name = "device_memory_free"]
    fn device_memory_free(args: *mut u8) -> u32;
    #[link_name = "thread_pool_schedule"]
    fn thread_pool_schedule(args: *mut u8) -> u32;
    #[link_name = "thread_pool_num_threads"]
    fn thread_pool_num_threads(args: *mut u8) -> u32;
    #[link_name = "future_create"]
    fn future_create(args: *mut u8) -> u32;
    #[link_name = "future_set_available"]
    fn future_set_available(args: *mut u8) -> u32;
    #[link_name = "future_set_error"]
    fn future_set_error(args: *mut u8) -> u32;
    #[link_name = "run_id_get"]
    pub(crate) fn run_id_get(args: *mut args::RunIdGet) -> u32;
    #[link_name = "device_ordinal_get"]
    pub(crate) fn device_ordinal_get(args: *mut args::DeviceOrdinalGet) -> u32;
}

type Call<A> = unsafe extern "C" fn(*mut A) -> u32;
type CallVoid<A> = unsafe extern "C" fn(*mut A);

/// Slots 0..=17 of `XLA_FFI_Api` (wasm32: 4-byte function-table indices).
#[repr(C)]
pub(crate) struct ApiFns {
    error_create: Call<args::ErrorCreate>,
    error_get_message: CallVoid<args::ErrorGetMessage>,
    error_destroy: CallVoid<args::ErrorDestroy>,
    handler_register: Call<u8>,
    stream_get: Call<u8>,
    type_register: Call<u8>,
    execution_context_get: Call<u8>,
    state_set: Call<u8>,
    state_get: Call<u8>,
    device_memory_allocate: Call<u8>,
    device_memory_free: Call<u8>,
    thread_pool_schedule: Call<u8>,
    thread_pool_num_threads: Call<u8>,
    future_create: Call<u8>,
    future_set_available: Call<u8>,
    future_set_error: Call<u8>,
    run_id_get: Call<args::RunIdGet>,
    device_ordinal_get: Call<args::DeviceOrdinalGet>,
}

const _: () = {
    use crate::abi::{API_FN_SLOTS, api};
    use core::mem::offset_of;
    const BASE: usize = api::FIRST_SLOT as usize;
    assert!(size_of::<ApiFns>() == 4 * API_FN_SLOTS);
    assert!(offset_of!(ApiFns, error_create) + BASE == api::ERROR_CREATE as usize);
    assert!(offset_of!(ApiFns, error_get_message) + BASE == api::ERROR_GET_MESSAGE as usize);
    assert!(offset_of!(ApiFns, error_destroy) + BASE == api::ERROR_DESTROY as usize);
    assert!(offset_of!(ApiFns, handler_register) + BASE == api::HANDLER_REGISTER as usize);
    assert!(offset_of!(ApiFns, stream_get) + BASE == api::STREAM_GET as usize);
    assert!(offset_of!(ApiFns, type_register) + BASE == api::TYPE_REGISTER as usize);
    assert!(
        offset_of!(ApiFns, execution_context_get) + BASE == api::EXECUTION_CONTEXT_GET as usize
    );
    assert!(offset_of!(ApiFns, state_set) + BASE == api::STATE_SET as usize);
    assert!(offset_of!(ApiFns, state_get) + BASE == api::STATE_GET as usize);
    assert!(
        offset_of!(ApiFns, device_memory_allocate) + BASE == api::DEVICE_MEMORY_ALLOCATE as usize
    );
    assert!(offset_of!(ApiFns, device_memory_free) + BASE == api::DEVICE_MEMORY_FREE as usize);
    assert!(offset_of!(ApiFns, thread_pool_schedule) + BASE == api::THREAD_POOL_SCHEDULE as usize);
    assert!(
        offset_of!(ApiFns, thread_pool_num_threads) + BASE == api::THREAD_POOL_NUM_THREADS as usize
    );
    assert!(offset_of!(ApiFns, future_create) + BASE == api::FUTURE_CREATE as usize);
    assert!(offset_of!(ApiFns, future_set_available) + BASE == api::FUTURE_SET_AVAILABLE as usize);
    assert!(offset_of!(ApiFns, future_set_error) + BASE == api::FUTURE_SET_ERROR as usize);
    assert!(offset_of!(ApiFns, run_id_get) + BASE == api::RUN_ID_GET as usize);
    assert!(offset_of!(ApiFns, device_ordinal_get) + BASE == api::DEVICE_ORDINAL_GET as usize);
};

/// The table entries: taking the imports' addresses puts them in the
/// module's function table.
pub(crate) const API_FNS: ApiFns = ApiFns {
    error_create,
    error_get_message,
    error_destroy,
    handler_register,
    stream_get,
    type_register,
    execution_context_get,
    state_set,
    state_get,
    device_memory_allocate,
    device_memory_free,
    thread_pool_schedule,
    thread_pool_num_threads,
    future_create,
    future_set_available,
    future_set_error,
    run_id_get,
    device_ordinal_get,
};
