//! The `cyxla` host imports (wasm32 only) and the function-pointer part of
//! the guest's `XLA_FFI_Api`, in slot order (`abi::IMPORTS`).
//!
//! Each import has the C signature of its `XLA_FFI_Api` function in wasm32:
//! the guest address of the args struct in, an error handle out (0 =
//! success), except `error_get_message` and `error_destroy`, which return
//! nothing. Imports this SDK does not call take an untyped args pointer.

use crate::args;

/// Declares the imports, in slot order, and from the one list builds
/// [`ApiFns`], checks each field's offset against its `abi::api` slot and
/// fills [`API_FNS`].
macro_rules! imports {
    ($( $vis:vis fn $name:ident(args: *mut $args:ty) $(-> $ret:ty)? => $slot:ident; )*) => {
        #[link(wasm_import_module = "cyxla")]
        unsafe extern "C" {
            $(
                #[link_name = stringify!($name)]
                $vis fn $name(args: *mut $args) $(-> $ret)?;
            )*
        }

        /// Slots 0..=17 of `XLA_FFI_Api` (wasm32: 4-byte function-table indices).
        #[repr(C)]
        pub(crate) struct ApiFns {
            $( $name: unsafe extern "C" fn(*mut $args) $(-> $ret)?, )*
        }

        const _: () = {
            use crate::abi::{API_FN_SLOTS, api};
            use core::mem::offset_of;
            const BASE: usize = api::FIRST_SLOT as usize;
            assert!(size_of::<ApiFns>() == 4 * API_FN_SLOTS);
            $( assert!(offset_of!(ApiFns, $name) + BASE == api::$slot as usize); )*
        };

        /// The table entries: taking the imports' addresses puts them in the
        /// module's function table.
        pub(crate) const API_FNS: ApiFns = ApiFns { $( $name, )* };
    };
}

imports! {
    pub(crate) fn error_create(args: *mut args::ErrorCreate) -> u32 => ERROR_CREATE;
    pub(crate) fn error_get_message(args: *mut args::ErrorGetMessage) => ERROR_GET_MESSAGE;
    pub(crate) fn error_destroy(args: *mut args::ErrorDestroy) => ERROR_DESTROY;
    fn handler_register(args: *mut u8) -> u32 => HANDLER_REGISTER;
    fn stream_get(args: *mut u8) -> u32 => STREAM_GET;
    fn type_register(args: *mut u8) -> u32 => TYPE_REGISTER;
    fn execution_context_get(args: *mut u8) -> u32 => EXECUTION_CONTEXT_GET;
    fn state_set(args: *mut u8) -> u32 => STATE_SET;
    fn state_get(args: *mut u8) -> u32 => STATE_GET;
    fn device_memory_allocate(args: *mut u8) -> u32 => DEVICE_MEMORY_ALLOCATE;
    fn device_memory_free(args: *mut u8) -> u32 => DEVICE_MEMORY_FREE;
    fn thread_pool_schedule(args: *mut u8) -> u32 => THREAD_POOL_SCHEDULE;
    fn thread_pool_num_threads(args: *mut u8) -> u32 => THREAD_POOL_NUM_THREADS;
    fn future_create(args: *mut u8) -> u32 => FUTURE_CREATE;
    fn future_set_available(args: *mut u8) -> u32 => FUTURE_SET_AVAILABLE;
    fn future_set_error(args: *mut u8) -> u32 => FUTURE_SET_ERROR;
    pub(crate) fn run_id_get(args: *mut args::RunIdGet) -> u32 => RUN_ID_GET;
    pub(crate) fn device_ordinal_get(args: *mut args::DeviceOrdinalGet) -> u32 => DEVICE_ORDINAL_GET;
}
