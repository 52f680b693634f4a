//! wasm32 argument structs of the host imports this SDK calls. Pointers are
//! guest addresses (`u32`), so the layout is the same on every target.

use crate::abi;
use core::mem::{align_of, offset_of, size_of};

/// `XLA_FFI_Error_Create_Args`.
#[repr(C)]
pub(crate) struct ErrorCreate {
    pub(crate) struct_size: u32,
    pub(crate) extension_start: u32,
    pub(crate) message: u32,
    pub(crate) errc: u32,
}

/// `XLA_FFI_Error_GetMessage_Args`.
#[repr(C)]
pub(crate) struct ErrorGetMessage {
    pub(crate) struct_size: u32,
    pub(crate) extension_start: u32,
    pub(crate) error: u32,
    pub(crate) message: u32,
}

/// `XLA_FFI_Error_Destroy_Args`.
#[repr(C)]
pub(crate) struct ErrorDestroy {
    pub(crate) struct_size: u32,
    pub(crate) extension_start: u32,
    pub(crate) error: u32,
}

/// `XLA_FFI_RunId_Get_Args`.
#[repr(C)]
pub(crate) struct RunIdGet {
    pub(crate) struct_size: u32,
    pub(crate) extension_start: u32,
    pub(crate) ctx: u32,
    pub(crate) run_id: i64,
}

/// `XLA_FFI_DeviceOrdinal_Get_Args`.
#[repr(C)]
pub(crate) struct DeviceOrdinalGet {
    pub(crate) struct_size: u32,
    pub(crate) extension_start: u32,
    pub(crate) ctx: u32,
    pub(crate) device_ordinal: i32,
}

/// `XLA_FFI_Api_Version`.
#[repr(C)]
pub(crate) struct ApiVersion {
    pub(crate) struct_size: u32,
    pub(crate) extension_start: u32,
    pub(crate) major_version: i32,
    pub(crate) minor_version: i32,
}

macro_rules! assert_layout {
    ($t:ty, $m:ident { $($field:ident = $off:ident),* }) => {
        const _: () = {
            assert!(size_of::<$t>() == abi::$m::SIZE as usize);
            assert!(align_of::<$t>() == abi::$m::ALIGN as usize);
            $(assert!(offset_of!($t, $field) == abi::$m::$off as usize);)*
        };
    };
}

assert_layout!(ErrorCreate, error_create_args {
    struct_size = STRUCT_SIZE_OFFSET, extension_start = EXTENSION_START, message = MESSAGE, errc = ERRC
});
assert_layout!(ErrorGetMessage, error_get_message_args {
    struct_size = STRUCT_SIZE_OFFSET, extension_start = EXTENSION_START, error = ERROR, message = MESSAGE
});
assert_layout!(ErrorDestroy, error_destroy_args {
    struct_size = STRUCT_SIZE_OFFSET, extension_start = EXTENSION_START, error = ERROR
});
assert_layout!(RunIdGet, run_id_get_args {
    struct_size = STRUCT_SIZE_OFFSET, extension_start = EXTENSION_START, ctx = CTX, run_id = RUN_ID
});
assert_layout!(DeviceOrdinalGet, device_ordinal_get_args {
    struct_size = STRUCT_SIZE_OFFSET, extension_start = EXTENSION_START, ctx = CTX,
    device_ordinal = DEVICE_ORDINAL
});
assert_layout!(ApiVersion, api_version {
    struct_size = STRUCT_SIZE_OFFSET, extension_start = EXTENSION_START,
    major_version = MAJOR_VERSION, minor_version = MINOR_VERSION
});
