//! wasm32 argument structs of the host imports this SDK calls. Pointers are
//! guest addresses (`u32`), so the layout is the same on every target.

use crate::abi;
use core::mem::{align_of, offset_of, size_of};

/// Defines an args struct that opens with `struct_size` and
/// `extension_start`, a `const` constructor that sets `struct_size` from
/// `abi::$layout::STRUCT_SIZE` (and no extension), and compile-time checks
/// of its size, alignment and every offset against `abi::$layout`.
macro_rules! args_struct {
    (
        $(#[$doc:meta])*
        $name:ident, $layout:ident {
            $( $field:ident: $ty:ty = $off:ident ),* $(,)?
        }
    ) => {
        $(#[$doc])*
        #[repr(C)]
        pub(crate) struct $name {
            pub(crate) struct_size: u32,
            pub(crate) extension_start: u32,
            $( pub(crate) $field: $ty, )*
        }

        // Only the wasm32 guest calls the imports that take these.
        #[cfg(target_arch = "wasm32")]
        impl $name {
            /// The struct with `struct_size` set and no extension.
            pub(crate) const fn new($( $field: $ty ),*) -> $name {
                $name {
                    struct_size: abi::$layout::STRUCT_SIZE,
                    extension_start: 0,
                    $( $field, )*
                }
            }
        }

        const _: () = {
            assert!(size_of::<$name>() == abi::$layout::SIZE as usize);
            assert!(align_of::<$name>() == abi::$layout::ALIGN as usize);
            assert!(offset_of!($name, struct_size) == abi::$layout::STRUCT_SIZE_OFFSET as usize);
            assert!(offset_of!($name, extension_start) == abi::$layout::EXTENSION_START as usize);
            $( assert!(offset_of!($name, $field) == abi::$layout::$off as usize); )*
        };
    };
}

args_struct! {
    /// `XLA_FFI_Error_Create_Args`.
    ErrorCreate, error_create_args { message: u32 = MESSAGE, errc: u32 = ERRC }
}

args_struct! {
    /// `XLA_FFI_Error_GetDetails_Args` (0.5: the message and the code).
    ErrorGetDetails, error_get_details_args { error: u32 = ERROR, message: u32 = MESSAGE, errc: i32 = ERRC }
}

args_struct! {
    /// `XLA_FFI_Error_Destroy_Args`.
    ErrorDestroy, error_destroy_args { error: u32 = ERROR }
}

args_struct! {
    /// `XLA_FFI_RunId_Get_Args`.
    RunIdGet, run_id_get_args { ctx: u32 = CTX, run_id: i64 = RUN_ID }
}

args_struct! {
    /// `XLA_FFI_DeviceOrdinal_Get_Args`.
    DeviceOrdinalGet, device_ordinal_get_args { ctx: u32 = CTX, device_ordinal: i32 = DEVICE_ORDINAL }
}

args_struct! {
    /// `XLA_FFI_Api_Version`.
    ApiVersion, api_version { major_version: i32 = MAJOR_VERSION, minor_version: i32 = MINOR_VERSION }
}
