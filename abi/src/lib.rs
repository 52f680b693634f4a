//! The cyxla guest ABI, version 1: every name, number and wasm32 layout that a
//! host and a guest must agree on, written once.
//!
//! This crate depends on nothing but the XLA enums of `cyxla-xla-types`
//! (not even `alloc`, except [`parse_targets`]) and compiles on every
//! target: the host (x86_64) imports it to load and drive guests, the SDK
//! (wasm32) re-exports it as `cyxla_guest_sdk::abi` to build them. The C
//! header for guests `guest-sdk/include/cyxla/abi.h` is generated from it
//! (the test `c_header`: `CYXLA_BLESS=1 cargo test -p cyxla-guest-abi --test
//! c_header`), and `xla/ffi/api/c_api.h` is tested against it
//! (tests/integration/cpp_sdk.rs). The host imports are listed once, in
//! [`for_each_import!`]; docs/abi.md, "Adding a host function", says which
//! files a new one touches.
//!
//! # The contract in one page
//!
//! * A guest is a core wasm32 module. It lists the targets it serves in a
//!   custom section named [`TARGETS_SECTION`], as records
//!   `cyxla-target v1 <target> <export>\n` ([`RECORD_PREFIX`]); NUL bytes
//!   between records are ignored. Names match `[A-Za-z0-9_.$-]+` and are at
//!   most [`MAX_NAME_LEN`] bytes ([`is_valid_name`]). [`parse_targets`]
//!   reads the section.
//! * Required exports: [`EXPORT_MEMORY`], [`EXPORT_ABI_VERSION`]
//!   (`() -> i32`, returns [`ABI_VERSION`]), [`EXPORT_API`] (`() -> i32`, the
//!   guest address of its static `XLA_FFI_Api`, laid out as [`api`]) and
//!   [`EXPORT_ALLOC`] (`(size: i32, align: i32) -> i32`, 0 on failure), plus one
//!   export per target with the handler signature `(frame: i32) -> i32`.
//!   Optional: [`EXPORT_INITIALIZE`], [`EXPORT_FREE`], [`EXPORT_LAST_PANIC`].
//! * Imports come only from module [`IMPORT_MODULE`] ([`IMPORTS`], one per
//!   `XLA_FFI_Api` slot, see [`IMPORT_TABLE`] for their signatures) and,
//!   optionally, from [`WASI_MODULE`].
//! * The host writes a wasm32 `XLA_FFI_CallFrame` ([`call_frame`]) and
//!   everything it points to into guest memory and calls the target's export
//!   with the frame's guest address.
//!
//! Layout modules give, for each struct of `xla/ffi/api/c_api.h` (FFI API
//! [`FFI_API_MAJOR`].[`FFI_API_MINOR`]) in its **wasm32** layout: `SIZE`
//! (`sizeof`), `ALIGN`, `STRUCT_SIZE` (the value its `struct_size` field must
//! hold, which is *not* always `SIZE`) where the struct has one, and one
//! constant per field holding that field's byte offset, named after the field
//! in upper case. The `struct_size` field itself is always at offset
//! `STRUCT_SIZE_OFFSET` (0). Enum values are in [`data_type`],
//! [`error_code`], [`attr_type`], [`arg_type`], [`ret_type`],
//! [`execution_stage`] and [`extension_type`].

#![no_std]
#![deny(missing_docs)]

extern crate alloc;

/// Version of this ABI; returned by the guest's [`EXPORT_ABI_VERSION`] export.
pub const ABI_VERSION: u32 = 1;

/// Name of the custom section in which a guest lists its targets.
pub const TARGETS_SECTION: &str = "cyxla.targets";

/// Every record in [`TARGETS_SECTION`] starts with this prefix, followed by
/// `<target> <export>\n`.
pub const RECORD_PREFIX: &str = "cyxla-target v1 ";

/// Maximum length in bytes of a target or export name in a record.
pub const MAX_NAME_LEN: usize = 255;

/// The import module of the host functions offered to guests.
pub const IMPORT_MODULE: &str = "cyxla";

/// The WASI preview1 module a guest may also import from (nothing granted by
/// default).
pub const WASI_MODULE: &str = "wasi_snapshot_preview1";

/// Major version of the XLA FFI C API the guest-side `XLA_FFI_Api` reports.
pub const FFI_API_MAJOR: i32 = 0;
/// Minor version of the XLA FFI C API the guest-side `XLA_FFI_Api` reports.
pub const FFI_API_MINOR: i32 = 5;
/// `(major, minor)` of the XLA FFI C API: `(0, 5)`.
pub const FFI_API_VERSION: (i32, i32) = (FFI_API_MAJOR, FFI_API_MINOR);

// ---------------------------------------------------------------------------
// Exports
// ---------------------------------------------------------------------------

/// Required export: the guest's linear memory.
pub const EXPORT_MEMORY: &str = "memory";
/// Required export `() -> i32`: returns [`ABI_VERSION`].
pub const EXPORT_ABI_VERSION: &str = "cyxla_abi_version";
/// Required export `() -> i32`: guest address of the guest's static
/// `XLA_FFI_Api` (wasm32 layout, see [`api`]).
pub const EXPORT_API: &str = "cyxla_api";
/// Required export `(size: i32, align: i32) -> i32`: allocates `size` bytes
/// aligned to `align` in guest memory; returns 0 on failure.
pub const EXPORT_ALLOC: &str = "cyxla_alloc";
/// Optional export `(ptr: i32, size: i32, align: i32)`: frees a block that
/// [`EXPORT_ALLOC`] returned for the same `size` and `align`. The Rust SDK
/// provides it.
pub const EXPORT_FREE: &str = "cyxla_free";
/// Optional export `() -> i32`: guest address of a NUL-terminated UTF-8
/// message describing the last panic, or 0 if the guest has not panicked.
/// A panicking Rust guest stores the message and then traps (`unreachable`);
/// the host reads this export after the trap to name the panic in its error.
pub const EXPORT_LAST_PANIC: &str = "cyxla_last_panic";
/// Optional export `()`: WASI reactor initialisation, called once after
/// instantiation.
pub const EXPORT_INITIALIZE: &str = "_initialize";

/// Exports every guest must have (besides one export per target).
pub const REQUIRED_EXPORTS: [&str; 4] =
    [EXPORT_MEMORY, EXPORT_ABI_VERSION, EXPORT_API, EXPORT_ALLOC];

// ---------------------------------------------------------------------------
// Imports
// ---------------------------------------------------------------------------

/// Calls the macro `$callback!` with the list of host imports: the one
/// place the guest ABI's imports are written. [`IMPORTS`], [`IMPORT_TABLE`]
/// and the `IMPORT_*` constants come from it, and so do the Rust SDK's import
/// declarations and `XLA_FFI_Api` table, the host's linker and the C header
/// `cyxla/abi.h` (generated by the test `c_header` of this crate).
///
/// One row per import, in `XLA_FFI_Api` slot order:
///
/// ```text
/// $(#[doc = "…"])* slot name CONST c_function args returns host sdk;
/// ```
///
/// * `slot`: the index of the `XLA_FFI_Api` function slot it fills
///   (0, 1, 2, … in row order);
/// * `name`: its name in module [`IMPORT_MODULE`];
/// * `CONST`: the name of this crate's constant holding `name`;
/// * `c_function`: the C API function it implements, whose argument struct
///   is `<c_function>_Args`;
/// * `args`: this crate's layout module of that struct;
/// * `returns`: `error`, signature `(args: i32) -> i32` (an error handle,
///   0 = success), or `void`, signature `(args: i32)`;
/// * `host`: `served` (the host implements it in a function called `name`)
///   or `unimplemented` (the host answers UNIMPLEMENTED);
/// * `sdk`: the Rust SDK's struct for the arguments (in its module `args`)
///   where the SDK calls the import, else `_` (declared with a byte
///   pointer);
/// * the doc lines, if any, say more about it to guest authors.
///
/// Imports are named after their C function in snake case, except the two
/// whose function XLA FFI 0.5 renamed: slot 1 (`XLA_FFI_Error_GetMessage`,
/// now `XLA_FFI_Error_GetDetails`) and slot 6 (`XLA_FFI_ExecutionContext_Get`,
/// now `XLA_FFI_InvokeContext_Get`) keep their 0.3 names, so that guests
/// built against 0.3 load on this host unchanged. Slots 18 and 19 are new in
/// 0.5: a guest built with this SDK imports them, and a host older than them
/// refuses it, naming the import.
///
/// A callback matches every row and uses what it needs:
///
/// ```
/// macro_rules! names {
///     ($( $(#[doc = $doc:literal])*
///         $slot:literal $name:ident $konst:ident $c_function:ident
///         $args:ident $returns:ident $host:ident $sdk:tt; )*) => {
///         [$(stringify!($name)),*]
///     };
/// }
/// assert_eq!(cyxla_guest_abi::for_each_import!(names), cyxla_guest_abi::IMPORTS);
/// ```
#[macro_export]
macro_rules! for_each_import {
    ($callback:ident) => {
        $callback! {
            // slot name                 CONST                          c_function                      args                          returns host  sdk
            /// The host copies the message and returns a nonzero error handle.
            0  error_create              IMPORT_ERROR_CREATE            XLA_FFI_Error_Create            error_create_args             error served ErrorCreate;
            /// The host copies the message into guest memory (through
            /// `cyxla_alloc`) and writes its address to `args->message`, and
            /// the error's code to `args->errc` when `struct_size` covers it
            /// (`XLA_FFI_Error_GetDetails_Args`, 0.5); the 0.3 struct
            /// `XLA_FFI_Error_GetMessage_Args` (16 bytes) gets the message alone.
            1  error_get_message         IMPORT_ERROR_GET_MESSAGE       XLA_FFI_Error_GetDetails        error_get_details_args        void  served ErrorGetDetails;
            /// Releases an error handle.
            2  error_destroy             IMPORT_ERROR_DESTROY           XLA_FFI_Error_Destroy           error_destroy_args            void  served ErrorDestroy;
            /// A guest lists its targets in its targets section instead
            /// (`CYXLA_TARGET` in C and C++).
            3  handler_register          IMPORT_HANDLER_REGISTER        XLA_FFI_Handler_Register        handler_register_args         error unimplemented _;
            4  stream_get                IMPORT_STREAM_GET              XLA_FFI_Stream_Get              stream_get_args               error unimplemented _;
            5  type_register             IMPORT_TYPE_REGISTER           XLA_FFI_Type_Register           type_register_args            error served _;
            6  execution_context_get     IMPORT_EXECUTION_CONTEXT_GET   XLA_FFI_InvokeContext_Get       execution_context_get_args    error served _;
            7  state_set                 IMPORT_STATE_SET               XLA_FFI_State_Set               state_set_args                error served _;
            8  state_get                 IMPORT_STATE_GET               XLA_FFI_State_Get               state_get_args                error served _;
            9  device_memory_allocate    IMPORT_DEVICE_MEMORY_ALLOCATE  XLA_FFI_DeviceMemory_Allocate   device_memory_allocate_args   error unimplemented _;
            10 device_memory_free        IMPORT_DEVICE_MEMORY_FREE      XLA_FFI_DeviceMemory_Free       device_memory_free_args       error unimplemented _;
            11 thread_pool_schedule      IMPORT_THREAD_POOL_SCHEDULE    XLA_FFI_ThreadPool_Schedule     thread_pool_schedule_args     error unimplemented _;
            12 thread_pool_num_threads   IMPORT_THREAD_POOL_NUM_THREADS XLA_FFI_ThreadPool_NumThreads   thread_pool_num_threads_args  error unimplemented _;
            13 future_create             IMPORT_FUTURE_CREATE           XLA_FFI_Future_Create           future_create_args            error unimplemented _;
            14 future_set_available      IMPORT_FUTURE_SET_AVAILABLE    XLA_FFI_Future_SetAvailable     future_set_available_args     error unimplemented _;
            15 future_set_error          IMPORT_FUTURE_SET_ERROR        XLA_FFI_Future_SetError         future_set_error_args         error unimplemented _;
            16 run_id_get                IMPORT_RUN_ID_GET              XLA_FFI_RunId_Get               run_id_get_args               error served RunIdGet;
            17 device_ordinal_get        IMPORT_DEVICE_ORDINAL_GET      XLA_FFI_DeviceOrdinal_Get       device_ordinal_get_args       error served DeviceOrdinalGet;
            /// Writes NULL to `args->extension`: the sandbox attaches no
            /// extension to a guest's context (XLA's are collectives and
            /// command-buffer recording).
            18 invoke_context_find_extension IMPORT_INVOKE_CONTEXT_FIND_EXTENSION XLA_FFI_InvokeContext_FindExtension invoke_context_find_extension_args error served _;
            /// Writes to `args->attrs` the guest address of an empty
            /// `XLA_FFI_Attrs`: the sandbox passes no per-execution options.
            19 custom_options_get        IMPORT_CUSTOM_OPTIONS_GET      XLA_FFI_CustomOptions_Get       custom_options_get_args       error served _;
        }
    };
}

/// The wasm signature of an import that returns `error` or `void`.
macro_rules! signature {
    (error) => {
        "(args: i32) -> i32"
    };
    (void) => {
        "(args: i32)"
    };
}

/// Whether an import that returns `error` or `void` returns an error handle.
macro_rules! returns_error {
    (error) => {
        true
    };
    (void) => {
        false
    };
}

/// What a guest gets from the cyxla host for an import that is `served` or
/// `unimplemented`, said in its docs.
macro_rules! host_note {
    (served) => {
        ""
    };
    (unimplemented) => {
        " The cyxla host answers it with an UNIMPLEMENTED error."
    };
}

/// From the list of [`for_each_import!`]: the `IMPORT_*` constants,
/// [`API_FN_SLOTS`], [`IMPORTS`] and [`IMPORT_TABLE`].
macro_rules! define_imports {
    ($( $(#[doc = $doc:literal])*
        $slot:literal $name:ident $konst:ident $c_function:ident
        $args:ident $returns:ident $host:ident $sdk:tt; )*) => {
        $(
            #[doc = concat!(
                "Import for `", stringify!($c_function), "` (slot ", stringify!($slot),
                "): `", signature!($returns), "`.", host_note!($host)
            )]
            $(#[doc = $doc])*
            pub const $konst: &str = stringify!($name);
        )*

        /// Number of function slots in the version-0.5 `XLA_FFI_Api` (and of imports).
        pub const API_FN_SLOTS: usize = [$($slot),*].len();

        /// The imports of module [`IMPORT_MODULE`], in `XLA_FFI_Api` slot order:
        /// `IMPORTS[i]` fills slot `i`, at offset [`api::slot_offset`]`(i)`.
        pub const IMPORTS: [&str; API_FN_SLOTS] = [$($konst),*];

        /// Every import with its signature, in slot order (`IMPORT_TABLE[i].name ==
        /// IMPORTS[i]`).
        pub const IMPORT_TABLE: [Import; API_FN_SLOTS] = [$(
            Import {
                name: $konst,
                slot: $slot,
                c_name: stringify!($c_function),
                args_struct_size: $args::STRUCT_SIZE,
                returns_error: returns_error!($returns),
            },
        )*];
    };
}

for_each_import!(define_imports);

// The rows are in slot order, 0, 1, 2, …
const _: () = {
    let mut i = 0;
    while i < API_FN_SLOTS {
        assert!(IMPORT_TABLE[i].slot == i);
        i += 1;
    }
};

/// One host import: its name, its `XLA_FFI_Api` slot, the C function it
/// stands for and its wasm signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Import {
    /// Import name in module [`IMPORT_MODULE`].
    pub name: &'static str,
    /// Index of the `XLA_FFI_Api` function slot it fills.
    pub slot: usize,
    /// The C API function it implements.
    pub c_name: &'static str,
    /// Guest-visible size (`STRUCT_SIZE`) of its argument struct.
    pub args_struct_size: u32,
    /// `true`: signature `(args: i32) -> i32` (returns an error handle, 0 =
    /// success); `false`: `(args: i32)` (returns nothing).
    pub returns_error: bool,
}

/// The [`Import`] called `name` in module [`IMPORT_MODULE`], if any.
pub fn find_import(name: &str) -> Option<&'static Import> {
    IMPORT_TABLE.iter().find(|i| i.name == name)
}

// ---------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------

pub use cyxla_xla_types::{data_type, error_code};

/// `XLA_FFI_AttrType` values.
pub mod attr_type {
    /// `XLA_FFI_AttrType_ARRAY`: value is an [`array`](super::array).
    pub const ARRAY: u32 = 1;
    /// `XLA_FFI_AttrType_DICTIONARY`: value is a nested [`attrs`](super::attrs).
    pub const DICTIONARY: u32 = 2;
    /// `XLA_FFI_AttrType_SCALAR`: value is a [`scalar`](super::scalar).
    pub const SCALAR: u32 = 3;
    /// `XLA_FFI_AttrType_STRING`: value is a [`byte_span`](super::byte_span).
    pub const STRING: u32 = 4;
}

/// `XLA_FFI_ArgType` values.
pub mod arg_type {
    /// `XLA_FFI_ArgType_BUFFER` (the only member; tokens are buffers too).
    pub const BUFFER: u32 = 1;
}

/// `XLA_FFI_RetType` values.
pub mod ret_type {
    /// `XLA_FFI_RetType_BUFFER` (the only member).
    pub const BUFFER: u32 = 1;
}

/// `XLA_FFI_ExecutionStage` values.
pub mod execution_stage {
    /// `XLA_FFI_ExecutionStage_INSTANTIATE`.
    pub const INSTANTIATE: u32 = 0;
    /// `XLA_FFI_ExecutionStage_PREPARE`.
    pub const PREPARE: u32 = 1;
    /// `XLA_FFI_ExecutionStage_INITIALIZE`.
    pub const INITIALIZE: u32 = 2;
    /// `XLA_FFI_ExecutionStage_EXECUTE`: the only stage the host delivers.
    pub const EXECUTE: u32 = 3;
    /// `XLA_FFI_ExecutionStage_RECORD` (0.5): command-buffer recording, GPU
    /// only.
    pub const RECORD: u32 = 4;
}

/// `XLA_FFI_InternalExtension_Type` (0.3: `XLA_FFI_Extension_Type`) values.
pub mod extension_type {
    /// `XLA_FFI_Extension_Metadata` (the only member).
    pub const METADATA: u32 = 1;
}

// ---------------------------------------------------------------------------
// wasm32 layouts of the frame-side structs
// (docs/abi.md, "Frame-side structs", "STRUCT_SIZE values")
// ---------------------------------------------------------------------------

/// Defines one layout module per row: `SIZE` and `ALIGN`; where the row
/// gives a `struct_size`, its `STRUCT_SIZE` and the `struct_size` and
/// `extension_start` fields at 0 and 4; where it says `ctx T`, `ctx`
/// (`XLA_FFI_T*`) at 8; then the listed fields.
macro_rules! layouts {
    ($(
        $(#[$doc:meta])*
        $name:ident: size $size:literal, align $align:literal
            $(, struct_size $ss:literal)? $(, ctx $ctx:ident)? {
            $( $(#[$fdoc:meta])* $field:ident = $off:literal, )*
        }
    )*) => {$(
        $(#[$doc])*
        pub mod $name {
            /// `sizeof`.
            pub const SIZE: u32 = $size;
            /// Alignment.
            pub const ALIGN: u32 = $align;
            $(
                /// Value of the `struct_size` field.
                pub const STRUCT_SIZE: u32 = $ss;
                /// Offset of `struct_size` (`size_t`).
                pub const STRUCT_SIZE_OFFSET: u32 = 0;
                /// Offset of `extension_start` (`XLA_FFI_Extension_Base*`).
                pub const EXTENSION_START: u32 = 4;
            )?
            $(
                #[doc = concat!("Offset of `ctx` (`XLA_FFI_", stringify!($ctx), "*`).")]
                pub const CTX: u32 = 8;
            )?
            $( $(#[$fdoc])* pub const $field: u32 = $off; )*
        }
    )*};
}

/// Offset of the `struct_size` field in every struct that has one.
pub const STRUCT_SIZE_OFFSET: u32 = 0;

/// Defines the layout module of `XLA_FFI_Args` or `XLA_FFI_Rets`, which
/// differ only in names.
macro_rules! buffer_list {
    ($name:ident, $c_name:literal, $what:literal, $type_enum:literal, $array:ident, $array_name:literal) => {
        #[doc = concat!("`", $c_name, "` in wasm32.")]
        pub mod $name {
            /// `sizeof`.
            pub const SIZE: u32 = 24;
            /// Alignment.
            pub const ALIGN: u32 = 8;
            /// Value of the `struct_size` field.
            pub const STRUCT_SIZE: u32 = 24;
            /// Offset of `struct_size`.
            pub const STRUCT_SIZE_OFFSET: u32 = 0;
            /// Offset of `extension_start`.
            pub const EXTENSION_START: u32 = 4;
            #[doc = concat!("Offset of `size` (`int64_t`: number of ", $what, ").")]
            pub const SIZE_FIELD: u32 = 8;
            #[doc = concat!("Offset of `types` (`", $type_enum, "*`, 4-byte entries).")]
            pub const TYPES: u32 = 16;
            #[doc = concat!("Offset of `", $array_name, "` (`void**`: array of `XLA_FFI_Buffer*`).")]
            pub const $array: u32 = 20;
        }
    };
}

buffer_list! { args, "XLA_FFI_Args", "arguments", "XLA_FFI_ArgType", ARGS, "args" }
buffer_list! { rets, "XLA_FFI_Rets", "results", "XLA_FFI_RetType", RETS, "rets" }

layouts! {
    /// `XLA_FFI_CallFrame` in wasm32. Note `STRUCT_SIZE` (104) < `SIZE` (112):
    /// `future` lies outside the declared size, so reserve `SIZE` bytes.
    call_frame: size 112, align 8 {
        /// Value of the `struct_size` field (`XLA_FFI_CallFrame_STRUCT_SIZE`).
        STRUCT_SIZE = 104,
        /// Offset of `struct_size` (`size_t`).
        STRUCT_SIZE_OFFSET = 0,
        /// Offset of `extension_start` (`XLA_FFI_Extension_Base*`).
        EXTENSION_START = 4,
        /// Offset of `api` (`const XLA_FFI_Api*`).
        API = 8,
        /// Offset of `ctx` (`XLA_FFI_ExecutionContext*`).
        CTX = 12,
        /// Offset of `stage` (`XLA_FFI_ExecutionStage`, 4 bytes).
        STAGE = 16,
        /// Offset of the inline `XLA_FFI_Args` ([`args`](super::args)).
        ARGS = 24,
        /// Offset of the inline `XLA_FFI_Rets` ([`rets`](super::rets)).
        RETS = 48,
        /// Offset of the inline `XLA_FFI_Attrs` ([`attrs`](super::attrs)).
        ATTRS = 72,
        /// Offset of `future` (`XLA_FFI_Future*`, out).
        FUTURE = 104,
    }

    /// `XLA_FFI_Attrs` in wasm32 (also used for nested dictionaries).
    /// `STRUCT_SIZE` (28) < `SIZE` (32).
    attrs: size 32, align 8, struct_size 28 {
        /// Offset of `size` (`int64_t`: number of attributes).
        SIZE_FIELD = 8,
        /// Offset of `types` (`XLA_FFI_AttrType*`, 4-byte entries).
        TYPES = 16,
        /// Offset of `names` (`XLA_FFI_ByteSpan**`: array of pointers).
        NAMES = 20,
        /// Offset of `attrs` (`void**`: array of pointers to the values).
        ATTRS = 24,
    }

    /// `XLA_FFI_Buffer` in wasm32. `STRUCT_SIZE` (28) < `SIZE` (32).
    buffer: size 32, align 8, struct_size 28 {
        /// Offset of `dtype` (`XLA_FFI_DataType`, 4 bytes).
        DTYPE = 8,
        /// Offset of `data` (`void*`).
        DATA = 12,
        /// Offset of `rank` (`int64_t`).
        RANK = 16,
        /// Offset of `dims` (`int64_t*`, `rank` entries, 8-byte aligned).
        DIMS = 24,
    }

    /// `XLA_FFI_ByteSpan` in wasm32 (no `struct_size`).
    byte_span: size 8, align 4 {
        /// Offset of `ptr` (`const char*`, not NUL-terminated by contract).
        PTR = 0,
        /// Offset of `len` (`size_t`).
        LEN = 4,
    }

    /// `XLA_FFI_Scalar` in wasm32 (no `struct_size`).
    scalar: size 8, align 4 {
        /// Offset of `dtype` (`XLA_FFI_DataType`).
        DTYPE = 0,
        /// Offset of `value` (`void*`, points at the native value).
        VALUE = 4,
    }

    /// `XLA_FFI_Array` in wasm32 (no `struct_size`).
    array: size 12, align 4 {
        /// Offset of `dtype` (`XLA_FFI_DataType`).
        DTYPE = 0,
        /// Offset of `size` (`size_t`: element count).
        SIZE_FIELD = 4,
        /// Offset of `data` (`void*`: contiguous elements).
        DATA = 8,
    }

    /// `XLA_FFI_Api_Version` in wasm32.
    api_version: size 16, align 4, struct_size 16 {
        /// Offset of `major_version` (`int`).
        MAJOR_VERSION = 8,
        /// Offset of `minor_version` (`int`).
        MINOR_VERSION = 12,
    }

    /// `XLA_FFI_TypeId` in wasm32.
    type_id: size 8, align 8 {
        /// Offset of `type_id` (`int64_t`).
        TYPE_ID = 0,
    }

    /// `XLA_FFI_InternalExtension` (0.3: `XLA_FFI_Extension_Base`) in wasm32.
    extension_base: size 12, align 4 {
        /// Value of the `struct_size` field.
        STRUCT_SIZE = 12,
        /// Offset of `struct_size`.
        STRUCT_SIZE_OFFSET = 0,
        /// Offset of `type` (`XLA_FFI_Extension_Type`).
        TYPE = 4,
        /// Offset of `next` (`XLA_FFI_Extension_Base*`).
        NEXT = 8,
    }

    /// `XLA_FFI_ExtensionId` in wasm32 (no `struct_size`).
    extension_id: size 16, align 8 {
        /// `XLA_FFI_ExtensionId_STRUCT_SIZE` (up to `minor_version`).
        STRUCT_SIZE = 16,
        /// Offset of `extension_type` (`int64_t`).
        EXTENSION_TYPE = 0,
        /// Offset of `major_version` (`int32_t`).
        MAJOR_VERSION = 8,
        /// Offset of `minor_version` (`int32_t`).
        MINOR_VERSION = 12,
    }

    /// `XLA_FFI_Extension` in wasm32: the header of an extension of the invoke
    /// context (0.5). `STRUCT_SIZE` (28) < `SIZE` (32).
    extension: size 32, align 8 {
        /// `XLA_FFI_Extension_STRUCT_SIZE` (up to `next`).
        STRUCT_SIZE = 28,
        /// Offset of `struct_size` (`size_t`).
        STRUCT_SIZE_OFFSET = 0,
        /// Offset of the inline `id` ([`extension_id`](super::extension_id)).
        ID = 8,
        /// Offset of `next` (`const XLA_FFI_Extension*`).
        NEXT = 24,
    }

    /// `XLA_FFI_Metadata_Extension` in wasm32.
    metadata_extension: size 16, align 4 {
        /// Value of the `struct_size` field (of the inline extension base).
        STRUCT_SIZE = 16,
        /// Offset of the inline `extension_base`.
        EXTENSION_BASE = 0,
        /// Offset of `metadata` (`XLA_FFI_Metadata*`).
        METADATA = 12,
    }

    /// `XLA_FFI_Metadata` in wasm32. `STRUCT_SIZE` (24) < `SIZE` (32).
    metadata: size 32, align 8 {
        /// Value of the `struct_size` field.
        STRUCT_SIZE = 24,
        /// Offset of `struct_size`.
        STRUCT_SIZE_OFFSET = 0,
        /// Offset of the inline `api_version` ([`api_version`](super::api_version)).
        API_VERSION = 4,
        /// Offset of `traits` (`uint32_t`).
        TRAITS = 20,
        /// Offset of `state_type_id` (`XLA_FFI_TypeId`, outside `STRUCT_SIZE`).
        STATE_TYPE_ID = 24,
    }
}

/// `XLA_FFI_Api` (version 0.5) in wasm32: a header, then
/// [`API_FN_SLOTS`] function pointers (function-table
/// indices) in [`IMPORTS`] order.
pub mod api {
    /// `sizeof`: 108, the header and [`API_FN_SLOTS`](super::API_FN_SLOTS)
    /// (20) function slots.
    pub const SIZE: u32 = slot_offset(super::API_FN_SLOTS);
    /// Alignment.
    pub const ALIGN: u32 = 4;
    /// Value of the `struct_size` field (version 0.5: 20 slots).
    pub const STRUCT_SIZE: u32 = SIZE;
    /// `sizeof` of the version-0.3 table (18 slots), which guests built
    /// with the 0.3 SDK have: the least a host may ask for.
    pub const SIZE_0_3: u32 = slot_offset(18);
    /// Offset of `struct_size`.
    pub const STRUCT_SIZE_OFFSET: u32 = 0;
    /// Offset of `extension_start`.
    pub const EXTENSION_START: u32 = 4;
    /// Offset of the inline `api_version` ([`api_version`](super::api_version)).
    pub const API_VERSION: u32 = 8;
    /// Offset of `internal_api` (`XLA_FFI_InternalApi*`).
    pub const INTERNAL_API: u32 = 24;
    /// Offset of the first function slot (`XLA_FFI_Error_Create`).
    pub const FIRST_SLOT: u32 = 28;
    /// Offset of the function pointer in slot `slot` (0-based; 4 bytes each).
    pub const fn slot_offset(slot: usize) -> u32 {
        FIRST_SLOT + 4 * slot as u32
    }
}

mod service_args;
pub use service_args::*;

mod targets;
pub use targets::{
    TargetRecord, TargetRecords, TargetsError, is_valid_name, parse_targets, target_records,
};

#[cfg(test)]
mod tests;
