//! The `cyxla` host imports (wasm32 only) and the function-pointer part of
//! the guest's `XLA_FFI_Api`, in slot order, both from the ABI crate's one
//! list of imports (`abi::for_each_import!`).
//!
//! Each import has the C signature of its `XLA_FFI_Api` function in wasm32:
//! the guest address of the args struct in, an error handle out (0 =
//! success), except those that return nothing (`void` in the list). Imports
//! this SDK does not call take an untyped args pointer.

use crate::args;

/// The args struct type the SDK passes to an import, from the `sdk` column
/// of its row in `for_each_import!`: the SDK's own struct (module `args`)
/// for the imports it calls, bytes (`_`) otherwise.
macro_rules! args_type {
    (_) => {
        u8
    };
    ($sdk:ident) => {
        args::$sdk
    };
}

/// The return type of an import that returns `error` or `void`.
macro_rules! return_type {
    (error) => {
        u32
    };
    (void) => {
        ()
    };
}

/// Declares the imports, in slot order, and from the one list builds
/// [`ApiFns`], checks each field's offset against its `abi::api` slot and
/// fills [`API_FNS`].
macro_rules! imports {
    ($( $(#[doc = $doc:literal])*
        $slot:literal $name:ident $konst:ident $c_function:ident
        $args:ident $returns:ident $host:ident $sdk:tt; )*) => {
        #[link(wasm_import_module = "cyxla")]
        unsafe extern "C" {
            $(
                #[link_name = stringify!($name)]
                pub(crate) fn $name(args: *mut args_type!($sdk)) -> return_type!($returns);
            )*
        }

        /// The function slots of `XLA_FFI_Api` (wasm32: 4-byte function-table
        /// indices).
        #[repr(C)]
        pub(crate) struct ApiFns {
            $( $name: unsafe extern "C" fn(*mut args_type!($sdk)) -> return_type!($returns), )*
        }

        const _: () = {
            use crate::abi::{API_FN_SLOTS, api};
            use core::mem::offset_of;
            const BASE: usize = api::FIRST_SLOT as usize;
            assert!(size_of::<ApiFns>() == 4 * API_FN_SLOTS);
            $( assert!(offset_of!(ApiFns, $name) + BASE == api::slot_offset($slot) as usize); )*
        };

        /// The table entries: taking the imports' addresses puts them in the
        /// module's function table.
        pub(crate) const API_FNS: ApiFns = ApiFns { $( $name, )* };
    };
}

crate::abi::for_each_import!(imports);
