//! Raw types for the part of the PJRT C API that cyxla-host uses.
//!
//! Source: `xla/pjrt/c/pjrt_c_api.h` at PJRT API **0.81** (the header shipped
//! in the `xla-cpu-pjrt` wheel) and `xla/pjrt/c/pjrt_c_api_ffi_extension.h`
//! (FFI extension layout version 3, as vendored by pypjrt at PJRT 0.114),
//! LP64: x86_64 and aarch64 alike (the layout proofs at the end compile for
//! both). Every struct used here has the same layout in 0.81, 0.104
//! and 0.114 (docs/abi.md, "Client structs"); the one that grows, `PJRT_ExecuteOptions`,
//! is declared in its 0.81 form, which all three plugins accept.
//!
//! Conventions:
//!
//! * Names are the C names. C enums are 4-byte integers: they are type
//!   aliases here, with their values as consts.
//! * `*_STRUCT_SIZE` is `offsetof(last field) + sizeof(last field)` as in the
//!   header's `PJRT_DEFINE_STRUCT_TRAITS`, **not** `sizeof`.
//! * Every args struct has exactly one constructor, `new`, which sets
//!   `struct_size` from its `*_STRUCT_SIZE` and zeroes everything else. There
//!   is deliberately no `Default`.
//! * `PJRT_Api` is declared as its 40-byte header; the function table that
//!   follows it has a plugin-dependent length and is read through [`ApiFunction`]s,
//!   after checking the plugin's `struct_size` (see `crate::plugin`).
//! * Layouts are proven at compile time: size, alignment and every field
//!   offset, as docs/abi.md gives them.
#![expect(
    non_camel_case_types,
    non_upper_case_globals,
    reason = "C names from xla/pjrt/c/pjrt_c_api.h and pjrt_c_api_ffi_extension.h"
)]

use std::ffi::{c_char, c_void};
use std::marker::PhantomData;
use std::mem::{align_of, offset_of, size_of};

/// `PJRT_API_MAJOR` of the header these types mirror.
pub const PJRT_API_MAJOR: i32 = 0;
/// `PJRT_API_MINOR` of the header these types mirror.
pub const PJRT_API_MINOR: i32 = 81;

// ---------------------------------------------------------------------------
// Opaque handles
// ---------------------------------------------------------------------------

macro_rules! opaque {
    ($($(#[$doc:meta])* $name:ident;)*) => {
        $(
            $(#[$doc])*
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
            }
        )*
    };
}

opaque! {
    /// An error returned by a PJRT call; the caller destroys it.
    PJRT_Error;
    /// A PJRT client.
    PJRT_Client;
    /// A device of a client.
    PJRT_Device;
    /// A memory space of a device.
    PJRT_Memory;
    /// A buffer on a device.
    PJRT_Buffer;
    /// An asynchronous event; the caller destroys it.
    PJRT_Event;
    /// A compiled, loaded executable.
    PJRT_LoadedExecutable;
    /// The executable behind a loaded executable.
    PJRT_Executable;
    /// Per-execution context (FFI user data).
    PJRT_ExecuteContext;
    /// A device memory layout description.
    PJRT_Buffer_MemoryLayout;
    /// Send callback description (unused: always NULL).
    PJRT_SendCallbackInfo;
    /// Receive callback description (unused: always NULL).
    PJRT_RecvCallbackInfo;
}

// ---------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------

/// `PJRT_Extension_Type` (C enum).
pub type PJRT_Extension_Type = u32;
/// `PJRT_Extension_Type_Gpu_Custom_Call`.
pub const PJRT_Extension_Type_Gpu_Custom_Call: PJRT_Extension_Type = 0;
/// `PJRT_Extension_Type_Profiler`.
pub const PJRT_Extension_Type_Profiler: PJRT_Extension_Type = 1;
/// `PJRT_Extension_Type_Custom_Partitioner`.
pub const PJRT_Extension_Type_Custom_Partitioner: PJRT_Extension_Type = 2;
/// `PJRT_Extension_Type_Stream`.
pub const PJRT_Extension_Type_Stream: PJRT_Extension_Type = 3;
/// `PJRT_Extension_Type_Layouts`.
pub const PJRT_Extension_Type_Layouts: PJRT_Extension_Type = 4;
/// `PJRT_Extension_Type_FFI`.
pub const PJRT_Extension_Type_FFI: PJRT_Extension_Type = 5;
/// `PJRT_Extension_Type_MemoryDescriptions`.
pub const PJRT_Extension_Type_MemoryDescriptions: PJRT_Extension_Type = 6;
/// `PJRT_Extension_Type_Triton`.
pub const PJRT_Extension_Type_Triton: PJRT_Extension_Type = 7;
/// `PJRT_Extension_Type_RawBuffer`.
pub const PJRT_Extension_Type_RawBuffer: PJRT_Extension_Type = 8;
/// `PJRT_Extension_Type_PhaseCompile`.
pub const PJRT_Extension_Type_PhaseCompile: PJRT_Extension_Type = 9;
/// `PJRT_Extension_Type_Example`.
pub const PJRT_Extension_Type_Example: PJRT_Extension_Type = 10;
/// `PJRT_Extension_Type_Unknown`.
pub const PJRT_Extension_Type_Unknown: PJRT_Extension_Type = 11;
/// `PJRT_Extension_Type_CrossHostTransfers`.
pub const PJRT_Extension_Type_CrossHostTransfers: PJRT_Extension_Type = 12;
/// `PJRT_Extension_Type_ExecutableMetadata`.
pub const PJRT_Extension_Type_ExecutableMetadata: PJRT_Extension_Type = 13;
/// `PJRT_Extension_Type_Callback`.
pub const PJRT_Extension_Type_Callback: PJRT_Extension_Type = 14;
/// `PJRT_Extension_Type_HostAllocator`.
pub const PJRT_Extension_Type_HostAllocator: PJRT_Extension_Type = 15;

/// The names of the extension types known to the 0.114 header, by value
/// (0–15 are identical in 0.81; docs/abi.md, "PJRT_Api and version negotiation").
pub const PJRT_EXTENSION_TYPE_NAMES: [&str; 25] = [
    "Gpu_Custom_Call",
    "Profiler",
    "Custom_Partitioner",
    "Stream",
    "Layouts",
    "FFI",
    "MemoryDescriptions",
    "Triton",
    "RawBuffer",
    "PhaseCompile",
    "Example",
    "Unknown",
    "CrossHostTransfers",
    "ExecutableMetadata",
    "Callback",
    "HostAllocator",
    "TpuTopology",
    "TpuExecutable",
    "Megascale",
    "Shardings",
    "AbiVersion",
    "Collectives",
    "MultiSlice",
    "HostMemoryAllocator",
    "XlaTransform",
];

/// `PJRT_Error_Code` (C enum; abseil numbering).
pub type PJRT_Error_Code = i32;

/// `PJRT_NamedValue_Type` (C enum).
pub type PJRT_NamedValue_Type = u32;
/// `PJRT_NamedValue_kString`.
pub const PJRT_NamedValue_kString: PJRT_NamedValue_Type = 0;
/// `PJRT_NamedValue_kInt64`.
pub const PJRT_NamedValue_kInt64: PJRT_NamedValue_Type = 1;
/// `PJRT_NamedValue_kInt64List`.
pub const PJRT_NamedValue_kInt64List: PJRT_NamedValue_Type = 2;
/// `PJRT_NamedValue_kFloat`.
pub const PJRT_NamedValue_kFloat: PJRT_NamedValue_Type = 3;
/// `PJRT_NamedValue_kBool`.
pub const PJRT_NamedValue_kBool: PJRT_NamedValue_Type = 4;

/// `PJRT_Buffer_Type` (C enum; see [`crate::DType::to_pjrt`]).
pub type PJRT_Buffer_Type = u32;

/// `PJRT_HostBufferSemantics` (C enum).
pub type PJRT_HostBufferSemantics = u32;
/// The host buffer may be reused as soon as the call returns.
pub const PJRT_HostBufferSemantics_kImmutableOnlyDuringCall: PJRT_HostBufferSemantics = 0;
/// The host buffer must live until `done_with_host_buffer` fires.
pub const PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes: PJRT_HostBufferSemantics = 1;
/// The device buffer may alias the host buffer (read-only).
pub const PJRT_HostBufferSemantics_kImmutableZeroCopy: PJRT_HostBufferSemantics = 2;
/// The device buffer may alias the host buffer (read-write).
pub const PJRT_HostBufferSemantics_kMutableZeroCopy: PJRT_HostBufferSemantics = 3;

/// `PJRT_FFI_Handler_TraitsBits` (C enum, a bit set).
pub type PJRT_FFI_Handler_TraitsBits = u32;
/// The handler may be recorded into command buffers (GPU only).
pub const PJRT_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE: PJRT_FFI_Handler_TraitsBits = 1;

// ---------------------------------------------------------------------------
// Header, version, extensions
// ---------------------------------------------------------------------------

/// `PJRT_Extension_Base`: the head of every extension in the chain.
#[repr(C)]
#[derive(Debug)]
pub struct PJRT_Extension_Base {
    /// Size of the whole extension struct.
    pub struct_size: usize,
    /// Which extension this is.
    pub type_: PJRT_Extension_Type,
    /// The next extension, or NULL.
    pub next: *mut PJRT_Extension_Base,
}
/// `PJRT_Extension_Base_STRUCT_SIZE`.
pub const PJRT_Extension_Base_STRUCT_SIZE: usize = 24;

/// `PJRT_Api_Version`: the plugin's header version.
#[repr(C)]
#[derive(Debug)]
pub struct PJRT_Api_Version {
    /// `PJRT_Api_Version_STRUCT_SIZE` of the plugin.
    pub struct_size: usize,
    /// Extension chain (unused).
    pub extension_start: *mut PJRT_Extension_Base,
    /// `PJRT_API_MAJOR` the plugin was built with.
    pub major_version: i32,
    /// `PJRT_API_MINOR` the plugin was built with.
    pub minor_version: i32,
}
/// `PJRT_Api_Version_STRUCT_SIZE`.
pub const PJRT_Api_Version_STRUCT_SIZE: usize = 24;

/// The fixed header of `PJRT_Api`. The function table follows at
/// [`PJRT_API_FUNCTIONS_OFFSET`], one pointer per [`ApiFunction`], for as many slots
/// as `struct_size` covers.
#[repr(C)]
#[derive(Debug)]
pub struct PJRT_Api {
    /// Size of the whole table, header included.
    pub struct_size: usize,
    /// First extension, or NULL.
    pub extension_start: *mut PJRT_Extension_Base,
    /// The header version the plugin was built with.
    pub pjrt_api_version: PJRT_Api_Version,
}
/// Byte offset of the first function pointer in `PJRT_Api`.
pub const PJRT_API_FUNCTIONS_OFFSET: usize = 40;

/// One function slot of `PJRT_Api`: its index, its C name and (as `F`) its C
/// signature. Slots are only created in this module, from the header.
#[derive(Debug)]
pub struct ApiFunction<F> {
    index: usize,
    name: &'static str,
    signature: PhantomData<F>,
}

impl<F> Clone for ApiFunction<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F> Copy for ApiFunction<F> {}

impl<F> ApiFunction<F> {
    /// Private: `F` must be the header's signature of the function at `index`.
    const fn new(index: usize, name: &'static str) -> ApiFunction<F> {
        ApiFunction {
            index,
            name,
            signature: PhantomData,
        }
    }

    /// Index in the function table (0 = `PJRT_Error_Destroy`).
    pub const fn index(&self) -> usize {
        self.index
    }

    /// The C name of the function.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Byte offset of the function pointer in `PJRT_Api`.
    pub const fn offset(&self) -> usize {
        PJRT_API_FUNCTIONS_OFFSET + self.index * size_of::<*const c_void>()
    }

    /// The smallest `PJRT_Api.struct_size` that contains this slot.
    pub const fn end(&self) -> usize {
        self.offset() + size_of::<*const c_void>()
    }
}

impl<F: Copy> ApiFunction<F> {
    /// The function in this slot of a table given as its 8-byte words
    /// (header first, as `PJRT_Api` lays it out); `None` where the table is
    /// too short to have the slot or holds NULL there.
    ///
    /// # Safety
    ///
    /// `words` must be a `PJRT_Api` table whose every function slot holds
    /// NULL or a function with the header's signature for that slot.
    pub unsafe fn read(&self, words: &[u64]) -> Option<F> {
        const { assert!(size_of::<F>() == size_of::<u64>()) };
        let word = *words.get(self.offset() / size_of::<u64>())?;
        if word == 0 {
            return None;
        }
        // SAFETY: `F` is the `unsafe extern "C" fn` type of this slot (slots
        // are only made in this module, each with its header signature), the
        // size of a word (asserted above); the word is non-NULL and, by the
        // caller's contract, a function of that signature.
        Some(unsafe { std::mem::transmute_copy::<u64, F>(&word) })
    }

    /// `f` as the word that fills this slot: `f`'s type is the slot's
    /// signature, so a function of another signature does not compile.
    pub fn word(&self, f: F) -> u64 {
        const { assert!(size_of::<F>() == size_of::<u64>()) };
        // SAFETY: `F` is a function pointer type (see `read`), the size of a
        // word; reading its bits as an integer is what the table holds.
        unsafe { std::mem::transmute_copy::<F, u64>(&f) }
    }
}

/// Number of function slots a table of `struct_size` bytes holds.
pub const fn slot_count(struct_size: usize) -> usize {
    struct_size.saturating_sub(PJRT_API_FUNCTIONS_OFFSET) / size_of::<*const c_void>()
}

// ---------------------------------------------------------------------------
// Function signatures
// ---------------------------------------------------------------------------

/// `void PJRT_Error_Destroy(PJRT_Error_Destroy_Args*)`.
pub type PJRT_Error_Destroy_Fn = unsafe extern "C" fn(args: *mut PJRT_Error_Destroy_Args);
/// `void PJRT_Error_Message(PJRT_Error_Message_Args*)`.
pub type PJRT_Error_Message_Fn = unsafe extern "C" fn(args: *mut PJRT_Error_Message_Args);

macro_rules! fallible_fns {
    ($($(#[$doc:meta])* $fn_name:ident($args:ident);)*) => {
        $(
            $(#[$doc])*
            pub type $fn_name = unsafe extern "C" fn(args: *mut $args) -> *mut PJRT_Error;
        )*
    };
}

fallible_fns! {
    /// `PJRT_Error* PJRT_Error_GetCode(PJRT_Error_GetCode_Args*)`.
    PJRT_Error_GetCode_Fn(PJRT_Error_GetCode_Args);
    /// `PJRT_Error* PJRT_Error_ForEachPayload(PJRT_Error_ForEachPayload_Args*)`.
    PJRT_Error_ForEachPayload_Fn(PJRT_Error_ForEachPayload_Args);
    /// `PJRT_Error* PJRT_Plugin_Initialize(PJRT_Plugin_Initialize_Args*)`.
    PJRT_Plugin_Initialize_Fn(PJRT_Plugin_Initialize_Args);
    /// `PJRT_Error* PJRT_Plugin_Attributes(PJRT_Plugin_Attributes_Args*)`.
    PJRT_Plugin_Attributes_Fn(PJRT_Plugin_Attributes_Args);
    /// `PJRT_Error* PJRT_Event_Destroy(PJRT_Event_Destroy_Args*)`.
    PJRT_Event_Destroy_Fn(PJRT_Event_Destroy_Args);
    /// `PJRT_Error* PJRT_Event_Await(PJRT_Event_Await_Args*)`.
    PJRT_Event_Await_Fn(PJRT_Event_Await_Args);
    /// `PJRT_Error* PJRT_Client_Create(PJRT_Client_Create_Args*)`.
    PJRT_Client_Create_Fn(PJRT_Client_Create_Args);
    /// `PJRT_Error* PJRT_Client_Destroy(PJRT_Client_Destroy_Args*)`.
    PJRT_Client_Destroy_Fn(PJRT_Client_Destroy_Args);
    /// `PJRT_Error* PJRT_Client_PlatformName(PJRT_Client_PlatformName_Args*)`.
    PJRT_Client_PlatformName_Fn(PJRT_Client_PlatformName_Args);
    /// `PJRT_Error* PJRT_Client_AddressableDevices(PJRT_Client_AddressableDevices_Args*)`.
    PJRT_Client_AddressableDevices_Fn(PJRT_Client_AddressableDevices_Args);
    /// `PJRT_Error* PJRT_Client_Compile(PJRT_Client_Compile_Args*)`.
    PJRT_Client_Compile_Fn(PJRT_Client_Compile_Args);
    /// `PJRT_Error* PJRT_Client_BufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args*)`.
    PJRT_Client_BufferFromHostBuffer_Fn(PJRT_Client_BufferFromHostBuffer_Args);
    /// `PJRT_Error* PJRT_Executable_Destroy(PJRT_Executable_Destroy_Args*)`.
    PJRT_Executable_Destroy_Fn(PJRT_Executable_Destroy_Args);
    /// `PJRT_Error* PJRT_Executable_NumOutputs(PJRT_Executable_NumOutputs_Args*)`.
    PJRT_Executable_NumOutputs_Fn(PJRT_Executable_NumOutputs_Args);
    /// `PJRT_Error* PJRT_Executable_OptimizedProgram(PJRT_Executable_OptimizedProgram_Args*)`.
    PJRT_Executable_OptimizedProgram_Fn(PJRT_Executable_OptimizedProgram_Args);
    /// `PJRT_Error* PJRT_LoadedExecutable_Destroy(PJRT_LoadedExecutable_Destroy_Args*)`.
    PJRT_LoadedExecutable_Destroy_Fn(PJRT_LoadedExecutable_Destroy_Args);
    /// `PJRT_Error* PJRT_LoadedExecutable_GetExecutable(PJRT_LoadedExecutable_GetExecutable_Args*)`.
    PJRT_LoadedExecutable_GetExecutable_Fn(PJRT_LoadedExecutable_GetExecutable_Args);
    /// `PJRT_Error* PJRT_LoadedExecutable_AddressableDevices(PJRT_LoadedExecutable_AddressableDevices_Args*)`.
    PJRT_LoadedExecutable_AddressableDevices_Fn(PJRT_LoadedExecutable_AddressableDevices_Args);
    /// `PJRT_Error* PJRT_LoadedExecutable_Execute(PJRT_LoadedExecutable_Execute_Args*)`.
    PJRT_LoadedExecutable_Execute_Fn(PJRT_LoadedExecutable_Execute_Args);
    /// `PJRT_Error* PJRT_Buffer_Destroy(PJRT_Buffer_Destroy_Args*)`.
    PJRT_Buffer_Destroy_Fn(PJRT_Buffer_Destroy_Args);
    /// `PJRT_Error* PJRT_Buffer_ElementType(PJRT_Buffer_ElementType_Args*)`.
    PJRT_Buffer_ElementType_Fn(PJRT_Buffer_ElementType_Args);
    /// `PJRT_Error* PJRT_Buffer_Dimensions(PJRT_Buffer_Dimensions_Args*)`.
    PJRT_Buffer_Dimensions_Fn(PJRT_Buffer_Dimensions_Args);
    /// `PJRT_Error* PJRT_Buffer_ToHostBuffer(PJRT_Buffer_ToHostBuffer_Args*)`.
    PJRT_Buffer_ToHostBuffer_Fn(PJRT_Buffer_ToHostBuffer_Args);
    /// `PJRT_Error* PJRT_Buffer_ReadyEvent(PJRT_Buffer_ReadyEvent_Args*)`.
    PJRT_Buffer_ReadyEvent_Fn(PJRT_Buffer_ReadyEvent_Args);
    /// `PJRT_Error* PJRT_Executable_OutputElementTypes(PJRT_Executable_OutputElementTypes_Args*)`.
    PJRT_Executable_OutputElementTypes_Fn(PJRT_Executable_OutputElementTypes_Args);
    /// `PJRT_Error* PJRT_Executable_OutputDimensions(PJRT_Executable_OutputDimensions_Args*)`.
    PJRT_Executable_OutputDimensions_Fn(PJRT_Executable_OutputDimensions_Args);
    /// `PJRT_Error* PJRT_ExecuteContext_Create(PJRT_ExecuteContext_Create_Args*)`.
    PJRT_ExecuteContext_Create_Fn(PJRT_ExecuteContext_Create_Args);
    /// `PJRT_Error* PJRT_ExecuteContext_Destroy(PJRT_ExecuteContext_Destroy_Args*)`.
    PJRT_ExecuteContext_Destroy_Fn(PJRT_ExecuteContext_Destroy_Args);
    /// `PJRT_Error* (*register_handler)(PJRT_FFI_Register_Handler_Args*)` of the FFI extension.
    PJRT_FFI_Register_Handler_Fn(PJRT_FFI_Register_Handler_Args);
    /// `PJRT_Error* (*type_register)(PJRT_FFI_Type_Register_Args*)` of the FFI extension.
    PJRT_FFI_Type_Register_Fn(PJRT_FFI_Type_Register_Args);
    /// `PJRT_Error* (*user_data_add)(PJRT_FFI_UserData_Add_Args*)` of the FFI extension.
    PJRT_FFI_UserData_Add_Fn(PJRT_FFI_UserData_Add_Args);
}

/// The function slots of `PJRT_Api` that cyxla-host calls, by index
/// (identical in 0.81, 0.104/0.106 and 0.114/0.115: the table is append-only).
pub mod slot {
    use super::*;

    macro_rules! slots {
        ($($name:ident: $fn_type:ident = $index:expr;)*) => {
            $(
                #[doc = concat!("The function slot of `", stringify!($name), "`.")]
                pub const $name: ApiFunction<$fn_type> = ApiFunction::new($index, stringify!($name));
            )*
        };
    }

    slots! {
        PJRT_Error_Destroy: PJRT_Error_Destroy_Fn = 0;
        PJRT_Error_Message: PJRT_Error_Message_Fn = 1;
        PJRT_Error_GetCode: PJRT_Error_GetCode_Fn = 2;
        PJRT_Plugin_Initialize: PJRT_Plugin_Initialize_Fn = 3;
        PJRT_Plugin_Attributes: PJRT_Plugin_Attributes_Fn = 4;
        PJRT_Event_Destroy: PJRT_Event_Destroy_Fn = 5;
        PJRT_Event_Await: PJRT_Event_Await_Fn = 8;
        PJRT_Client_Create: PJRT_Client_Create_Fn = 10;
        PJRT_Client_Destroy: PJRT_Client_Destroy_Fn = 11;
        PJRT_Client_PlatformName: PJRT_Client_PlatformName_Fn = 12;
        PJRT_Client_AddressableDevices: PJRT_Client_AddressableDevices_Fn = 16;
        PJRT_Client_Compile: PJRT_Client_Compile_Fn = 20;
        PJRT_Client_BufferFromHostBuffer: PJRT_Client_BufferFromHostBuffer_Fn = 22;
        PJRT_Executable_Destroy: PJRT_Executable_Destroy_Fn = 40;
        PJRT_Executable_NumOutputs: PJRT_Executable_NumOutputs_Fn = 44;
        PJRT_Executable_OptimizedProgram: PJRT_Executable_OptimizedProgram_Fn = 48;
        PJRT_LoadedExecutable_Destroy: PJRT_LoadedExecutable_Destroy_Fn = 50;
        PJRT_LoadedExecutable_GetExecutable: PJRT_LoadedExecutable_GetExecutable_Fn = 51;
        PJRT_LoadedExecutable_AddressableDevices: PJRT_LoadedExecutable_AddressableDevices_Fn = 52;
        PJRT_LoadedExecutable_Execute: PJRT_LoadedExecutable_Execute_Fn = 55;
        PJRT_Buffer_Destroy: PJRT_Buffer_Destroy_Fn = 58;
        PJRT_Buffer_ElementType: PJRT_Buffer_ElementType_Fn = 59;
        PJRT_Buffer_Dimensions: PJRT_Buffer_Dimensions_Fn = 60;
        PJRT_Buffer_ToHostBuffer: PJRT_Buffer_ToHostBuffer_Fn = 70;
        PJRT_Buffer_ReadyEvent: PJRT_Buffer_ReadyEvent_Fn = 72;
        PJRT_Executable_OutputElementTypes: PJRT_Executable_OutputElementTypes_Fn = 90;
        PJRT_Executable_OutputDimensions: PJRT_Executable_OutputDimensions_Fn = 91;
        PJRT_ExecuteContext_Create: PJRT_ExecuteContext_Create_Fn = 98;
        PJRT_ExecuteContext_Destroy: PJRT_ExecuteContext_Destroy_Fn = 99;
        PJRT_Error_ForEachPayload: PJRT_Error_ForEachPayload_Fn = 132;
    }
}

// ---------------------------------------------------------------------------
// Args structs
// ---------------------------------------------------------------------------

/// Declares one `#[repr(C)]` args struct, its `*_STRUCT_SIZE` const and a
/// zeroing `new()` that sets `struct_size`. Every field is a pointer, an
/// integer, an `Option` of a function pointer or an inline struct of those,
/// so all-zero is a valid value.
macro_rules! args_struct {
    (
        $(#[$doc:meta])*
        $name:ident, $size_const:ident = $size:literal {
            $($(#[$fdoc:meta])* $field:ident: $ty:ty,)*
        }
    ) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Debug)]
        pub struct $name {
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        #[doc = concat!("`", stringify!($size_const), "`: offset + size of the last field.")]
        pub const $size_const: usize = $size;

        impl $name {
            #[expect(
                clippy::new_without_default,
                reason = "struct_size is set in this one constructor; no Default on purpose"
            )]
            #[doc = concat!("A zeroed `", stringify!($name), "` with `struct_size = ", stringify!($size_const), "`.")]
            pub fn new() -> $name {
                // SAFETY: every field is an integer, a raw pointer, an
                // `Option<extern fn>` or an inline struct of those (see the
                // macro's contract), for all of which all-zero bytes are a
                // valid value (0, NULL, None).
                let mut value: $name = unsafe { std::mem::zeroed() };
                value.struct_size = $size_const;
                value
            }
        }
    };
}

/// Declares args structs with `args_struct!`, each opening with the
/// header every PJRT args struct shares: `struct_size` and an unused
/// `extension_start`. Only the fields after that header are listed.
macro_rules! args_structs {
    ($(
        $(#[$doc:meta])*
        $name:ident, $size_const:ident = $size:literal {
            $($(#[$fdoc:meta])* $field:ident: $ty:ty,)*
        }
    )*) => {
        $(
            args_struct! {
                $(#[$doc])*
                $name, $size_const = $size {
                    #[doc = concat!("`", stringify!($size_const), "`.")]
                    struct_size: usize,
                    /// Unused.
                    extension_start: *mut PJRT_Extension_Base,
                    $($(#[$fdoc])* $field: $ty,)*
                }
            }
        )*
    };
}

args_structs! {
    /// `PJRT_Error_Destroy_Args`.
    PJRT_Error_Destroy_Args, PJRT_Error_Destroy_Args_STRUCT_SIZE = 24 {
        /// The error to free.
        error: *mut PJRT_Error,
    }

    /// `PJRT_Error_Message_Args`.
    PJRT_Error_Message_Args, PJRT_Error_Message_Args_STRUCT_SIZE = 40 {
        /// The error.
        error: *const PJRT_Error,
        /// Out: message bytes, valid until the error is destroyed.
        message: *const c_char,
        /// Out: message length (not NUL-terminated by contract).
        message_size: usize,
    }

    /// `PJRT_Error_GetCode_Args`.
    PJRT_Error_GetCode_Args, PJRT_Error_GetCode_Args_STRUCT_SIZE = 28 {
        /// The error.
        error: *const PJRT_Error,
        /// Out: the code.
        code: PJRT_Error_Code,
    }

    /// `PJRT_Error_ForEachPayload_Args`: an error, and a callback called
    /// with each of its payloads' key and value.
    PJRT_Error_ForEachPayload_Args, PJRT_Error_ForEachPayload_Args_STRUCT_SIZE = 40 {
        /// The error.
        error: *const PJRT_Error,
        /// The callback.
        callback: *mut c_void,
        /// The callback's argument.
        user_arg: *mut c_void,
    }

    /// `PJRT_Plugin_Initialize_Args`.
    PJRT_Plugin_Initialize_Args, PJRT_Plugin_Initialize_Args_STRUCT_SIZE = 16 {
    }

    /// `PJRT_Plugin_Attributes_Args`.
    PJRT_Plugin_Attributes_Args, PJRT_Plugin_Attributes_Args_STRUCT_SIZE = 32 {
        /// Out: attributes, alive for the life of the process.
        attributes: *const PJRT_NamedValue,
        /// Out: number of attributes.
        num_attributes: usize,
    }

    /// `PJRT_Event_Destroy_Args`.
    PJRT_Event_Destroy_Args, PJRT_Event_Destroy_Args_STRUCT_SIZE = 24 {
        /// The event to free.
        event: *mut PJRT_Event,
    }

    /// `PJRT_Event_Await_Args`.
    PJRT_Event_Await_Args, PJRT_Event_Await_Args_STRUCT_SIZE = 24 {
        /// The event to wait for; its error is returned.
        event: *mut PJRT_Event,
    }

    /// `PJRT_NamedValue`: one key-value option or attribute.
    PJRT_NamedValue, PJRT_NamedValue_STRUCT_SIZE = 56 {
        /// Name bytes (not NUL-terminated by contract).
        name: *const c_char,
        /// Name length.
        name_size: usize,
        /// Which member of `value` is set.
        type_: PJRT_NamedValue_Type,
        /// The value.
        value: PJRT_NamedValue_Value,
        /// Number of elements for strings and lists, 1 for scalars.
        value_size: usize,
    }

    /// `PJRT_Client_Create_Args`.
    PJRT_Client_Create_Args, PJRT_Client_Create_Args_STRUCT_SIZE = 88 {
        /// Options (array of `num_options`).
        create_options: *const PJRT_NamedValue,
        /// Number of options.
        num_options: usize,
        /// `PJRT_KeyValueGetCallback` (NULL: single process).
        kv_get_callback: *mut c_void,
        /// User argument of `kv_get_callback`.
        kv_get_user_arg: *mut c_void,
        /// `PJRT_KeyValuePutCallback` (NULL: single process).
        kv_put_callback: *mut c_void,
        /// User argument of `kv_put_callback`.
        kv_put_user_arg: *mut c_void,
        /// Out: the client.
        client: *mut PJRT_Client,
        /// `PJRT_KeyValueTryGetCallback` (NULL: single process).
        kv_try_get_callback: *mut c_void,
        /// User argument of `kv_try_get_callback`.
        kv_try_get_user_arg: *mut c_void,
    }

    /// `PJRT_Client_Destroy_Args`.
    PJRT_Client_Destroy_Args, PJRT_Client_Destroy_Args_STRUCT_SIZE = 24 {
        /// The client to free.
        client: *mut PJRT_Client,
    }

    /// `PJRT_Client_PlatformName_Args`.
    PJRT_Client_PlatformName_Args, PJRT_Client_PlatformName_Args_STRUCT_SIZE = 40 {
        /// The client.
        client: *mut PJRT_Client,
        /// Out: name bytes, owned by the client.
        platform_name: *const c_char,
        /// Out: name length.
        platform_name_size: usize,
    }

    /// `PJRT_Client_AddressableDevices_Args`.
    PJRT_Client_AddressableDevices_Args, PJRT_Client_AddressableDevices_Args_STRUCT_SIZE = 40 {
        /// The client.
        client: *mut PJRT_Client,
        /// Out: devices, owned by the client.
        addressable_devices: *const *mut PJRT_Device,
        /// Out: number of devices.
        num_addressable_devices: usize,
    }

    /// `PJRT_Program`: code and its format.
    PJRT_Program, PJRT_Program_STRUCT_SIZE = 48 {
        /// Program bytes (in for compile, out for OptimizedProgram).
        code: *mut c_char,
        /// Length of `code`.
        code_size: usize,
        /// Format name: `mlir`, `hlo`, `hlo_with_config`.
        format: *const c_char,
        /// Length of `format`.
        format_size: usize,
    }

    /// `PJRT_Client_Compile_Args`.
    PJRT_Client_Compile_Args, PJRT_Client_Compile_Args_STRUCT_SIZE = 56 {
        /// The client.
        client: *mut PJRT_Client,
        /// The program.
        program: *const PJRT_Program,
        /// Serialized `xla.CompileOptionsProto`.
        compile_options: *const c_char,
        /// Length of `compile_options`.
        compile_options_size: usize,
        /// Out: the loaded executable.
        executable: *mut PJRT_LoadedExecutable,
    }

    /// `PJRT_Client_BufferFromHostBuffer_Args`.
    PJRT_Client_BufferFromHostBuffer_Args, PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE = 120 {
        /// The client.
        client: *mut PJRT_Client,
        /// Host data.
        data: *const c_void,
        /// Element type.
        type_: PJRT_Buffer_Type,
        /// Dimensions.
        dims: *const i64,
        /// Rank.
        num_dims: usize,
        /// Byte strides (NULL: dense row-major).
        byte_strides: *const i64,
        /// Number of byte strides.
        num_byte_strides: usize,
        /// How long `data` must stay valid.
        host_buffer_semantics: PJRT_HostBufferSemantics,
        /// Target device.
        device: *mut PJRT_Device,
        /// Target memory (NULL: the device's default).
        memory: *mut PJRT_Memory,
        /// Device layout (NULL: default).
        device_layout: *mut PJRT_Buffer_MemoryLayout,
        /// Out: fires when `data` may be reused (caller destroys).
        done_with_host_buffer: *mut PJRT_Event,
        /// Out: the new buffer.
        buffer: *mut PJRT_Buffer,
    }

    /// `PJRT_ExecuteOptions` in its 0.81 form (accepted by 0.81–0.115 plugins).
    PJRT_ExecuteOptions, PJRT_ExecuteOptions_STRUCT_SIZE = 112 {
        /// Send callbacks (NULL).
        send_callbacks: *mut *mut PJRT_SendCallbackInfo,
        /// Receive callbacks (NULL).
        recv_callbacks: *mut *mut PJRT_RecvCallbackInfo,
        /// Number of send ops.
        num_send_ops: usize,
        /// Number of receive ops.
        num_recv_ops: usize,
        /// Launch id (0).
        launch_id: i32,
        /// Inputs that must not be donated.
        non_donatable_input_indices: *const i64,
        /// Length of `non_donatable_input_indices`.
        num_non_donatable_input_indices: usize,
        /// Per-execution context (FFI user data), or NULL.
        context: *mut PJRT_ExecuteContext,
        /// Call location for diagnostics, or NULL.
        call_location: *const c_char,
        /// Number of tasks (0).
        num_tasks: usize,
        /// Task ids (NULL).
        task_ids: *mut i32,
        /// Incarnation ids (NULL).
        incarnation_ids: *mut i64,
    }

    /// `PJRT_LoadedExecutable_Execute_Args`.
    PJRT_LoadedExecutable_Execute_Args, PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE = 80 {
        /// The executable.
        executable: *mut PJRT_LoadedExecutable,
        /// Options.
        options: *mut PJRT_ExecuteOptions,
        /// `[num_devices][num_args]` argument buffers.
        argument_lists: *const *const *mut PJRT_Buffer,
        /// Number of devices (argument lists).
        num_devices: usize,
        /// Number of arguments per device.
        num_args: usize,
        /// In/out: caller-allocated `[num_devices][num_outputs]` slots.
        output_lists: *const *mut *mut PJRT_Buffer,
        /// In/out: caller-allocated `[num_devices]` events, or NULL.
        device_complete_events: *mut *mut PJRT_Event,
        /// Device to run a single-device executable on, or NULL.
        execute_device: *mut PJRT_Device,
    }

    /// `PJRT_LoadedExecutable_Destroy_Args`.
    PJRT_LoadedExecutable_Destroy_Args, PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE = 24 {
        /// The executable to free.
        executable: *mut PJRT_LoadedExecutable,
    }

    /// `PJRT_LoadedExecutable_GetExecutable_Args`.
    PJRT_LoadedExecutable_GetExecutable_Args, PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE = 32 {
        /// The loaded executable.
        loaded_executable: *mut PJRT_LoadedExecutable,
        /// Out: the executable (caller destroys it with `PJRT_Executable_Destroy`).
        executable: *mut PJRT_Executable,
    }

    /// `PJRT_LoadedExecutable_AddressableDevices_Args`.
    PJRT_LoadedExecutable_AddressableDevices_Args, PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE = 40 {
        /// The loaded executable.
        executable: *mut PJRT_LoadedExecutable,
        /// Out: devices it runs on, owned by the executable.
        addressable_devices: *const *mut PJRT_Device,
        /// Out: number of devices.
        num_addressable_devices: usize,
    }

    /// `PJRT_Executable_Destroy_Args`.
    PJRT_Executable_Destroy_Args, PJRT_Executable_Destroy_Args_STRUCT_SIZE = 24 {
        /// The executable to free.
        executable: *mut PJRT_Executable,
    }

    /// `PJRT_Executable_NumOutputs_Args`.
    PJRT_Executable_NumOutputs_Args, PJRT_Executable_NumOutputs_Args_STRUCT_SIZE = 32 {
        /// The executable.
        executable: *mut PJRT_Executable,
        /// Out: number of outputs.
        num_outputs: usize,
    }

    /// `PJRT_Executable_OptimizedProgram_Args`.
    PJRT_Executable_OptimizedProgram_Args, PJRT_Executable_OptimizedProgram_Args_STRUCT_SIZE = 32 {
        /// The executable.
        executable: *mut PJRT_Executable,
        /// In/out: `code` NULL to query `code_size`, then a buffer to fill.
        program: *mut PJRT_Program,
    }

    /// `PJRT_Executable_OutputElementTypes_Args`.
    PJRT_Executable_OutputElementTypes_Args, PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE = 40 {
        /// The executable.
        executable: *mut PJRT_Executable,
        /// Out: element types, owned by the executable.
        output_types: *const PJRT_Buffer_Type,
        /// Out: number of outputs.
        num_output_types: usize,
    }

    /// `PJRT_Executable_OutputDimensions_Args`.
    PJRT_Executable_OutputDimensions_Args, PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE = 48 {
        /// The executable.
        executable: *mut PJRT_Executable,
        /// Out: number of outputs.
        num_outputs: usize,
        /// Out: all outputs' dimensions, concatenated.
        dims: *const i64,
        /// Out: rank of each output (`num_outputs` entries).
        dim_sizes: *const usize,
    }

    /// `PJRT_Buffer_Destroy_Args`.
    PJRT_Buffer_Destroy_Args, PJRT_Buffer_Destroy_Args_STRUCT_SIZE = 24 {
        /// The buffer to free.
        buffer: *mut PJRT_Buffer,
    }

    /// `PJRT_Buffer_ElementType_Args`.
    PJRT_Buffer_ElementType_Args, PJRT_Buffer_ElementType_Args_STRUCT_SIZE = 28 {
        /// The buffer.
        buffer: *mut PJRT_Buffer,
        /// Out: element type.
        type_: PJRT_Buffer_Type,
    }

    /// `PJRT_Buffer_Dimensions_Args`.
    PJRT_Buffer_Dimensions_Args, PJRT_Buffer_Dimensions_Args_STRUCT_SIZE = 40 {
        /// The buffer.
        buffer: *mut PJRT_Buffer,
        /// Out: dimensions, owned by the buffer.
        dims: *const i64,
        /// Out: rank.
        num_dims: usize,
    }

    /// `PJRT_Buffer_ToHostBuffer_Args`.
    PJRT_Buffer_ToHostBuffer_Args, PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE = 56 {
        /// The buffer to read.
        src: *mut PJRT_Buffer,
        /// Host layout (NULL: dense row-major).
        host_layout: *mut PJRT_Buffer_MemoryLayout,
        /// Destination, or NULL to query `dst_size`.
        dst: *mut c_void,
        /// In/out: size of `dst`.
        dst_size: usize,
        /// Out: fires when `dst` is filled (caller destroys).
        event: *mut PJRT_Event,
    }

    /// `PJRT_Buffer_ReadyEvent_Args`.
    PJRT_Buffer_ReadyEvent_Args, PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE = 32 {
        /// The buffer.
        buffer: *mut PJRT_Buffer,
        /// Out: fires when the buffer is ready or failed (caller destroys).
        event: *mut PJRT_Event,
    }

    /// `PJRT_ExecuteContext_Create_Args`.
    PJRT_ExecuteContext_Create_Args, PJRT_ExecuteContext_Create_Args_STRUCT_SIZE = 24 {
        /// Out: the context.
        context: *mut PJRT_ExecuteContext,
    }

    /// `PJRT_ExecuteContext_Destroy_Args`.
    PJRT_ExecuteContext_Destroy_Args, PJRT_ExecuteContext_Destroy_Args_STRUCT_SIZE = 24 {
        /// The context to free.
        context: *mut PJRT_ExecuteContext,
    }

    /// `PJRT_FFI_Type_Register_Args`.
    PJRT_FFI_Type_Register_Args, PJRT_FFI_Type_Register_Args_STRUCT_SIZE = 48 {
        /// Type name bytes.
        type_name: *const c_char,
        /// Type name length.
        type_name_size: usize,
        /// In/out: type id (0 = let XLA assign one).
        type_id: i64,
        /// Type callbacks (placeholders in XLA).
        type_info: *mut PJRT_FFI_Type_Info,
    }

    /// `PJRT_FFI_UserData_Add_Args`.
    PJRT_FFI_UserData_Add_Args, PJRT_FFI_UserData_Add_Args_STRUCT_SIZE = 40 {
        /// The context to add to.
        context: *mut PJRT_ExecuteContext,
        /// The data (inline).
        user_data: PJRT_FFI_UserData,
    }
}

args_struct! {
    /// `PJRT_FFI_Register_Handler_Args`. Unlike every other args struct it has
    /// **no** `extension_start` (docs/abi.md, "PJRT_FFI_Extension").
    PJRT_FFI_Register_Handler_Args, PJRT_FFI_Register_Handler_Args_STRUCT_SIZE = 52 {
        /// `PJRT_FFI_Register_Handler_Args_STRUCT_SIZE`.
        struct_size: usize,
        /// Target name bytes.
        target_name: *const c_char,
        /// Target name length.
        target_name_size: usize,
        /// The `XLA_FFI_Handler*`.
        handler: *mut c_void,
        /// Platform name bytes (`Host`).
        platform_name: *const c_char,
        /// Platform name length.
        platform_name_size: usize,
        /// Handler traits bits.
        traits: PJRT_FFI_Handler_TraitsBits,
    }
}

/// The value union of `PJRT_NamedValue`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union PJRT_NamedValue_Value {
    /// `kString`: string bytes (`value_size` long).
    pub string_value: *const c_char,
    /// `kInt64`.
    pub int64_value: i64,
    /// `kInt64List`: `value_size` elements.
    pub int64_array_value: *const i64,
    /// `kFloat`.
    pub float_value: f32,
    /// `kBool`.
    pub bool_value: bool,
}

impl std::fmt::Debug for PJRT_NamedValue_Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Which member is live depends on `PJRT_NamedValue::type_`.
        f.write_str("PJRT_NamedValue_Value { .. }")
    }
}

/// `PJRT_FFI_Type_Info`: callbacks of a registered type.
#[repr(C)]
#[derive(Debug)]
pub struct PJRT_FFI_Type_Info {
    /// `void (*deleter)(void*)`.
    pub deleter: Option<unsafe extern "C" fn(*mut c_void)>,
    /// Placeholder.
    pub serialize: *mut c_void,
    /// Placeholder.
    pub deserialize: *mut c_void,
}

/// `PJRT_FFI_UserData`: one typed pointer in an execute context.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PJRT_FFI_UserData {
    /// The type id from `type_register`.
    pub type_id: i64,
    /// The data (not owned: no deleter in this layout).
    pub data: *mut c_void,
}

/// `PJRT_FFI_Extension` (layout version 3: 0.81, 0.106, 0.115 plugins).
#[repr(C)]
#[derive(Debug)]
pub struct PJRT_FFI_Extension {
    /// `type = PJRT_Extension_Type_FFI`.
    pub base: PJRT_Extension_Base,
    /// Registers an FFI type id.
    pub type_register: Option<PJRT_FFI_Type_Register_Fn>,
    /// Adds user data to an execute context.
    pub user_data_add: Option<PJRT_FFI_UserData_Add_Fn>,
    /// Registers a handler for a custom-call target.
    pub register_handler: Option<PJRT_FFI_Register_Handler_Fn>,
}
/// `PJRT_FFI_Extension_STRUCT_SIZE`.
pub const PJRT_FFI_Extension_STRUCT_SIZE: usize = 48;

/// Platform name the FFI extension registers host handlers under (docs/abi.md, "Platform name").
pub const PJRT_FFI_PLATFORM_HOST: &str = "Host";

impl PJRT_NamedValue {
    /// A `kInt64` option `name = value`. `name` must outlive every use of
    /// the returned struct.
    pub fn int64(name: &'static str, value: i64) -> PJRT_NamedValue {
        let mut named = PJRT_NamedValue::new();
        named.name = name.as_ptr().cast();
        named.name_size = name.len();
        named.type_ = PJRT_NamedValue_kInt64;
        named.value = PJRT_NamedValue_Value { int64_value: value };
        named.value_size = 1;
        named
    }
}

impl PJRT_FFI_Register_Handler_Args {
    /// Arguments for registering `handler` under `target` on `platform`.
    /// The strings must outlive the call.
    pub fn for_target(
        target: &str,
        handler: *mut c_void,
        platform: &str,
        traits: PJRT_FFI_Handler_TraitsBits,
    ) -> PJRT_FFI_Register_Handler_Args {
        let mut args = PJRT_FFI_Register_Handler_Args::new();
        args.target_name = target.as_ptr().cast();
        args.target_name_size = target.len();
        args.handler = handler;
        args.platform_name = platform.as_ptr().cast();
        args.platform_name_size = platform.len();
        args.traits = traits;
        args
    }
}

// ---------------------------------------------------------------------------
// Layout proofs, LP64: x86_64 and aarch64 alike
// (offsets from docs/abi.md, "PJRT_Api and version negotiation",
// "PJRT_FFI_Extension", "Client structs")
// ---------------------------------------------------------------------------

/// Asserts size, alignment and every field offset; `header` stands for
/// `struct_size @ 0, extension_start @ 8`.
macro_rules! assert_layout {
    ($name:ident, size $size:expr, align $align:expr, header $(, $field:ident @ $off:expr)* $(,)?) => {
        assert_layout!($name, size $size, align $align,
            struct_size @ 0, extension_start @ 8 $(, $field @ $off)*);
    };
    ($name:ident, size $size:expr, align $align:expr, $($field:ident @ $off:expr),* $(,)?) => {
        const _: () = {
            assert!(size_of::<$name>() == $size);
            assert!(align_of::<$name>() == $align);
            $(assert!(offset_of!($name, $field) == $off);)*
        };
    };
}

#[cfg(target_pointer_width = "64")]
mod layout {
    use super::*;

    assert_layout!(PJRT_Extension_Base, size 24, align 8, struct_size @ 0, type_ @ 8, next @ 16);
    assert_layout!(PJRT_Api_Version, size 24, align 8,
        header, major_version @ 16, minor_version @ 20);
    assert_layout!(PJRT_Api, size 40, align 8, header, pjrt_api_version @ 16);
    const _: () = assert!(
        offset_of!(PJRT_Api, pjrt_api_version) + offset_of!(PJRT_Api_Version, major_version) == 32
    );
    const _: () = assert!(
        offset_of!(PJRT_Api, pjrt_api_version) + offset_of!(PJRT_Api_Version, minor_version) == 36
    );

    assert_layout!(PJRT_Error_Destroy_Args, size 24, align 8, header, error @ 16);
    assert_layout!(PJRT_Error_Message_Args, size 40, align 8,
        header, error @ 16, message @ 24, message_size @ 32);
    assert_layout!(PJRT_Error_GetCode_Args, size 32, align 8, header, error @ 16, code @ 24);
    assert_layout!(PJRT_NamedValue, size 56, align 8,
        header, name @ 16, name_size @ 24, type_ @ 32, value @ 40,
        value_size @ 48);
    const _: () = assert!(size_of::<PJRT_NamedValue_Value>() == 8);
    assert_layout!(PJRT_Error_ForEachPayload_Args, size 40, align 8,
        header, error @ 16, callback @ 24, user_arg @ 32);
    assert_layout!(PJRT_Plugin_Initialize_Args, size 16, align 8, header);
    assert_layout!(PJRT_Plugin_Attributes_Args, size 32, align 8,
        header, attributes @ 16, num_attributes @ 24);
    assert_layout!(PJRT_Event_Destroy_Args, size 24, align 8, header, event @ 16);
    assert_layout!(PJRT_Event_Await_Args, size 24, align 8, header, event @ 16);
    assert_layout!(PJRT_Client_Create_Args, size 88, align 8,
        header, create_options @ 16, num_options @ 24,
        kv_get_callback @ 32, kv_get_user_arg @ 40, kv_put_callback @ 48, kv_put_user_arg @ 56,
        client @ 64, kv_try_get_callback @ 72, kv_try_get_user_arg @ 80);
    assert_layout!(PJRT_Client_Destroy_Args, size 24, align 8, header, client @ 16);
    assert_layout!(PJRT_Client_PlatformName_Args, size 40, align 8,
        header, client @ 16, platform_name @ 24, platform_name_size @ 32);
    assert_layout!(PJRT_Client_AddressableDevices_Args, size 40, align 8,
        header, client @ 16, addressable_devices @ 24,
        num_addressable_devices @ 32);
    assert_layout!(PJRT_Program, size 48, align 8,
        header, code @ 16, code_size @ 24, format @ 32, format_size @ 40);
    assert_layout!(PJRT_Client_Compile_Args, size 56, align 8,
        header, client @ 16, program @ 24, compile_options @ 32,
        compile_options_size @ 40, executable @ 48);
    assert_layout!(PJRT_Client_BufferFromHostBuffer_Args, size 120, align 8,
        header, client @ 16, data @ 24, type_ @ 32, dims @ 40,
        num_dims @ 48, byte_strides @ 56, num_byte_strides @ 64, host_buffer_semantics @ 72,
        device @ 80, memory @ 88, device_layout @ 96, done_with_host_buffer @ 104, buffer @ 112);
    assert_layout!(PJRT_ExecuteOptions, size 112, align 8,
        header, send_callbacks @ 16, recv_callbacks @ 24,
        num_send_ops @ 32, num_recv_ops @ 40, launch_id @ 48, non_donatable_input_indices @ 56,
        num_non_donatable_input_indices @ 64, context @ 72, call_location @ 80, num_tasks @ 88,
        task_ids @ 96, incarnation_ids @ 104);
    assert_layout!(PJRT_LoadedExecutable_Execute_Args, size 80, align 8,
        header, executable @ 16, options @ 24, argument_lists @ 32,
        num_devices @ 40, num_args @ 48, output_lists @ 56, device_complete_events @ 64,
        execute_device @ 72);
    assert_layout!(PJRT_LoadedExecutable_Destroy_Args, size 24, align 8, header, executable @ 16);
    assert_layout!(PJRT_LoadedExecutable_GetExecutable_Args, size 32, align 8,
        header, loaded_executable @ 16, executable @ 24);
    assert_layout!(PJRT_LoadedExecutable_AddressableDevices_Args, size 40, align 8,
        header, executable @ 16, addressable_devices @ 24,
        num_addressable_devices @ 32);
    assert_layout!(PJRT_Executable_Destroy_Args, size 24, align 8, header, executable @ 16);
    assert_layout!(PJRT_Executable_NumOutputs_Args, size 32, align 8,
        header, executable @ 16, num_outputs @ 24);
    assert_layout!(PJRT_Executable_OptimizedProgram_Args, size 32, align 8,
        header, executable @ 16, program @ 24);
    assert_layout!(PJRT_Executable_OutputElementTypes_Args, size 40, align 8,
        header, executable @ 16, output_types @ 24,
        num_output_types @ 32);
    assert_layout!(PJRT_Executable_OutputDimensions_Args, size 48, align 8,
        header, executable @ 16, num_outputs @ 24, dims @ 32,
        dim_sizes @ 40);
    assert_layout!(PJRT_Buffer_Destroy_Args, size 24, align 8, header, buffer @ 16);
    assert_layout!(PJRT_Buffer_ElementType_Args, size 32, align 8, header, buffer @ 16, type_ @ 24);
    assert_layout!(PJRT_Buffer_Dimensions_Args, size 40, align 8,
        header, buffer @ 16, dims @ 24, num_dims @ 32);
    assert_layout!(PJRT_Buffer_ToHostBuffer_Args, size 56, align 8,
        header, src @ 16, host_layout @ 24, dst @ 32, dst_size @ 40,
        event @ 48);
    assert_layout!(PJRT_Buffer_ReadyEvent_Args, size 32, align 8, header, buffer @ 16, event @ 24);
    assert_layout!(PJRT_ExecuteContext_Create_Args, size 24, align 8, header, context @ 16);
    assert_layout!(PJRT_ExecuteContext_Destroy_Args, size 24, align 8, header, context @ 16);

    assert_layout!(PJRT_FFI_Extension, size 48, align 8,
        base @ 0, type_register @ 24, user_data_add @ 32, register_handler @ 40);
    assert_layout!(PJRT_FFI_Register_Handler_Args, size 56, align 8,
        struct_size @ 0, target_name @ 8, target_name_size @ 16, handler @ 24, platform_name @ 32,
        platform_name_size @ 40, traits @ 48);
    assert_layout!(PJRT_FFI_Type_Register_Args, size 48, align 8,
        header, type_name @ 16, type_name_size @ 24, type_id @ 32,
        type_info @ 40);
    assert_layout!(PJRT_FFI_Type_Info, size 24, align 8, deleter @ 0, serialize @ 8, deserialize @ 16);
    assert_layout!(PJRT_FFI_UserData, size 16, align 8, type_id @ 0, data @ 8);
    assert_layout!(PJRT_FFI_UserData_Add_Args, size 40, align 8,
        header, context @ 16, user_data @ 24);

    // STRUCT_SIZE = offset + size of the last field (the header's traits).
    macro_rules! assert_struct_size {
        ($($name:ident.$last:ident == $size_const:ident;)*) => {
            $(const _: () = assert!(
                offset_of!($name, $last) + size_of_field(|s: &$name| &s.$last) == $size_const
            );)*
        };
    }

    /// Size of a field, given a projection to it (const-evaluable helper).
    const fn size_of_field<S, T>(_project: fn(&S) -> &T) -> usize {
        size_of::<T>()
    }

    assert_struct_size! {
        PJRT_Extension_Base.next == PJRT_Extension_Base_STRUCT_SIZE;
        PJRT_Api_Version.minor_version == PJRT_Api_Version_STRUCT_SIZE;
        PJRT_Error_Destroy_Args.error == PJRT_Error_Destroy_Args_STRUCT_SIZE;
        PJRT_Error_Message_Args.message_size == PJRT_Error_Message_Args_STRUCT_SIZE;
        PJRT_Error_GetCode_Args.code == PJRT_Error_GetCode_Args_STRUCT_SIZE;
        PJRT_NamedValue.value_size == PJRT_NamedValue_STRUCT_SIZE;
        PJRT_Error_ForEachPayload_Args.user_arg == PJRT_Error_ForEachPayload_Args_STRUCT_SIZE;
        PJRT_Plugin_Initialize_Args.extension_start == PJRT_Plugin_Initialize_Args_STRUCT_SIZE;
        PJRT_Plugin_Attributes_Args.num_attributes == PJRT_Plugin_Attributes_Args_STRUCT_SIZE;
        PJRT_Event_Destroy_Args.event == PJRT_Event_Destroy_Args_STRUCT_SIZE;
        PJRT_Event_Await_Args.event == PJRT_Event_Await_Args_STRUCT_SIZE;
        PJRT_Client_Create_Args.kv_try_get_user_arg == PJRT_Client_Create_Args_STRUCT_SIZE;
        PJRT_Client_Destroy_Args.client == PJRT_Client_Destroy_Args_STRUCT_SIZE;
        PJRT_Client_PlatformName_Args.platform_name_size == PJRT_Client_PlatformName_Args_STRUCT_SIZE;
        PJRT_Client_AddressableDevices_Args.num_addressable_devices == PJRT_Client_AddressableDevices_Args_STRUCT_SIZE;
        PJRT_Program.format_size == PJRT_Program_STRUCT_SIZE;
        PJRT_Client_Compile_Args.executable == PJRT_Client_Compile_Args_STRUCT_SIZE;
        PJRT_Client_BufferFromHostBuffer_Args.buffer == PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
        PJRT_ExecuteOptions.incarnation_ids == PJRT_ExecuteOptions_STRUCT_SIZE;
        PJRT_LoadedExecutable_Execute_Args.execute_device == PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
        PJRT_LoadedExecutable_Destroy_Args.executable == PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE;
        PJRT_LoadedExecutable_GetExecutable_Args.executable == PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
        PJRT_LoadedExecutable_AddressableDevices_Args.num_addressable_devices == PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE;
        PJRT_Executable_Destroy_Args.executable == PJRT_Executable_Destroy_Args_STRUCT_SIZE;
        PJRT_Executable_NumOutputs_Args.num_outputs == PJRT_Executable_NumOutputs_Args_STRUCT_SIZE;
        PJRT_Executable_OptimizedProgram_Args.program == PJRT_Executable_OptimizedProgram_Args_STRUCT_SIZE;
        PJRT_Executable_OutputElementTypes_Args.num_output_types == PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE;
        PJRT_Executable_OutputDimensions_Args.dim_sizes == PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE;
        PJRT_Buffer_Destroy_Args.buffer == PJRT_Buffer_Destroy_Args_STRUCT_SIZE;
        PJRT_Buffer_ElementType_Args.type_ == PJRT_Buffer_ElementType_Args_STRUCT_SIZE;
        PJRT_Buffer_Dimensions_Args.num_dims == PJRT_Buffer_Dimensions_Args_STRUCT_SIZE;
        PJRT_Buffer_ToHostBuffer_Args.event == PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
        PJRT_Buffer_ReadyEvent_Args.event == PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE;
        PJRT_ExecuteContext_Create_Args.context == PJRT_ExecuteContext_Create_Args_STRUCT_SIZE;
        PJRT_ExecuteContext_Destroy_Args.context == PJRT_ExecuteContext_Destroy_Args_STRUCT_SIZE;
        PJRT_FFI_Extension.register_handler == PJRT_FFI_Extension_STRUCT_SIZE;
        PJRT_FFI_Register_Handler_Args.traits == PJRT_FFI_Register_Handler_Args_STRUCT_SIZE;
        PJRT_FFI_Type_Register_Args.type_info == PJRT_FFI_Type_Register_Args_STRUCT_SIZE;
        PJRT_FFI_UserData_Add_Args.user_data == PJRT_FFI_UserData_Add_Args_STRUCT_SIZE;
    }

    // Function slot byte offsets from docs/abi.md, "Function slots".
    const _: () = {
        assert!(slot::PJRT_Error_Destroy.offset() == 40);
        assert!(slot::PJRT_Error_Message.offset() == 48);
        assert!(slot::PJRT_Error_GetCode.offset() == 56);
        assert!(slot::PJRT_Plugin_Initialize.offset() == 64);
        assert!(slot::PJRT_Plugin_Attributes.offset() == 72);
        assert!(slot::PJRT_Event_Destroy.offset() == 80);
        assert!(slot::PJRT_Event_Await.offset() == 104);
        assert!(slot::PJRT_Client_Create.offset() == 120);
        assert!(slot::PJRT_Client_Destroy.offset() == 128);
        assert!(slot::PJRT_Client_PlatformName.offset() == 136);
        assert!(slot::PJRT_Client_AddressableDevices.offset() == 168);
        assert!(slot::PJRT_Client_Compile.offset() == 200);
        assert!(slot::PJRT_Client_BufferFromHostBuffer.offset() == 216);
        assert!(slot::PJRT_Executable_Destroy.offset() == 360);
        assert!(slot::PJRT_Executable_NumOutputs.offset() == 392);
        assert!(slot::PJRT_Executable_OptimizedProgram.offset() == 424);
        assert!(slot::PJRT_LoadedExecutable_Destroy.offset() == 440);
        assert!(slot::PJRT_LoadedExecutable_GetExecutable.offset() == 448);
        assert!(slot::PJRT_LoadedExecutable_AddressableDevices.offset() == 456);
        assert!(slot::PJRT_LoadedExecutable_Execute.offset() == 480);
        assert!(slot::PJRT_Buffer_Destroy.offset() == 504);
        assert!(slot::PJRT_Buffer_ElementType.offset() == 512);
        assert!(slot::PJRT_Buffer_Dimensions.offset() == 520);
        assert!(slot::PJRT_Buffer_ToHostBuffer.offset() == 600);
        assert!(slot::PJRT_Buffer_ReadyEvent.offset() == 616);
        assert!(slot::PJRT_Executable_OutputElementTypes.offset() == 760);
        assert!(slot::PJRT_Executable_OutputDimensions.offset() == 768);
        assert!(slot::PJRT_ExecuteContext_Create.offset() == 824);
        assert!(slot::PJRT_ExecuteContext_Destroy.offset() == 832);
        // The smallest plugin examined (P81, 984 bytes) has every slot used.
        assert!(slot::PJRT_ExecuteContext_Destroy.end() <= 984);
        assert!(slot_count(984) == 118);
    };
}
