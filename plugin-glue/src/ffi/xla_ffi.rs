//! Raw XLA FFI C API types, LP64 layout (x86_64 and aarch64 alike: the
//! layout proofs at the end compile for both).
//!
//! Mirrors `xla/ffi/api/c_api.h` as shipped in jaxlib 0.10.2, XLA FFI API
//! version **0.3** (`XLA_FFI_API_MAJOR` / `XLA_FFI_API_MINOR`). The runtimes
//! inside the plugins speak 0.2 (P81), 0.3 (P106) and 0.4 (P115); the frame
//! layouts are byte-identical in all three, and 0.4 only appends one function
//! slot to [`XLA_FFI_Api`] (not declared here: do not call it).
//!
//! Every struct keeps its C name and field names. `*_STRUCT_SIZE` is
//! `offsetof(last field named in the header's traits macro) + its size`, which
//! is not always `size_of` (e.g. [`XLA_FFI_CallFrame_STRUCT_SIZE`] is 168 while
//! the struct is 176 bytes). Sizes, alignments, offsets and struct sizes are
//! asserted at compile time against the measured tables of docs/abi.md
//! ("XLA FFI C API").
//!
//! C enums are 4 bytes; they are declared as integer type aliases plus one
//! `const` per enumerator, because a value outside the enumerators (sent by a
//! newer runtime) must not be undefined behaviour on our side.
#![expect(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    reason = "C names from xla/ffi/api/c_api.h"
)]

use std::ffi::{c_char, c_int, c_void};
use std::mem::{offset_of, size_of};

use cyxla_xla_types::{data_type, error_code};

/// `XLA_FFI_API_MAJOR` of the header this module mirrors.
pub const XLA_FFI_API_MAJOR: c_int = 0;
/// `XLA_FFI_API_MINOR` of the header this module mirrors.
pub const XLA_FFI_API_MINOR: c_int = 3;

// ---------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------

/// `XLA_FFI_Extension_Type`.
pub type XLA_FFI_Extension_Type = u32;
/// The metadata extension carried by the registration probe.
pub const XLA_FFI_Extension_Metadata: XLA_FFI_Extension_Type = 1;

/// `XLA_FFI_Error_Code` (abseil numbering, same as `PJRT_Error_Code`).
pub type XLA_FFI_Error_Code = i32;
/// `OK` (an error created with it reaches the client as INTERNAL).
pub const XLA_FFI_Error_Code_OK: XLA_FFI_Error_Code = error_code::OK as XLA_FFI_Error_Code;
/// `CANCELLED`.
pub const XLA_FFI_Error_Code_CANCELLED: XLA_FFI_Error_Code =
    error_code::CANCELLED as XLA_FFI_Error_Code;
/// `UNKNOWN`.
pub const XLA_FFI_Error_Code_UNKNOWN: XLA_FFI_Error_Code =
    error_code::UNKNOWN as XLA_FFI_Error_Code;
/// `INVALID_ARGUMENT`.
pub const XLA_FFI_Error_Code_INVALID_ARGUMENT: XLA_FFI_Error_Code =
    error_code::INVALID_ARGUMENT as XLA_FFI_Error_Code;
/// `DEADLINE_EXCEEDED`.
pub const XLA_FFI_Error_Code_DEADLINE_EXCEEDED: XLA_FFI_Error_Code =
    error_code::DEADLINE_EXCEEDED as XLA_FFI_Error_Code;
/// `NOT_FOUND`.
pub const XLA_FFI_Error_Code_NOT_FOUND: XLA_FFI_Error_Code =
    error_code::NOT_FOUND as XLA_FFI_Error_Code;
/// `ALREADY_EXISTS`.
pub const XLA_FFI_Error_Code_ALREADY_EXISTS: XLA_FFI_Error_Code =
    error_code::ALREADY_EXISTS as XLA_FFI_Error_Code;
/// `PERMISSION_DENIED`.
pub const XLA_FFI_Error_Code_PERMISSION_DENIED: XLA_FFI_Error_Code =
    error_code::PERMISSION_DENIED as XLA_FFI_Error_Code;
/// `RESOURCE_EXHAUSTED`.
pub const XLA_FFI_Error_Code_RESOURCE_EXHAUSTED: XLA_FFI_Error_Code =
    error_code::RESOURCE_EXHAUSTED as XLA_FFI_Error_Code;
/// `FAILED_PRECONDITION`.
pub const XLA_FFI_Error_Code_FAILED_PRECONDITION: XLA_FFI_Error_Code =
    error_code::FAILED_PRECONDITION as XLA_FFI_Error_Code;
/// `ABORTED`.
pub const XLA_FFI_Error_Code_ABORTED: XLA_FFI_Error_Code =
    error_code::ABORTED as XLA_FFI_Error_Code;
/// `OUT_OF_RANGE`.
pub const XLA_FFI_Error_Code_OUT_OF_RANGE: XLA_FFI_Error_Code =
    error_code::OUT_OF_RANGE as XLA_FFI_Error_Code;
/// `UNIMPLEMENTED`.
pub const XLA_FFI_Error_Code_UNIMPLEMENTED: XLA_FFI_Error_Code =
    error_code::UNIMPLEMENTED as XLA_FFI_Error_Code;
/// `INTERNAL`.
pub const XLA_FFI_Error_Code_INTERNAL: XLA_FFI_Error_Code =
    error_code::INTERNAL as XLA_FFI_Error_Code;
/// `UNAVAILABLE`.
pub const XLA_FFI_Error_Code_UNAVAILABLE: XLA_FFI_Error_Code =
    error_code::UNAVAILABLE as XLA_FFI_Error_Code;
/// `DATA_LOSS`.
pub const XLA_FFI_Error_Code_DATA_LOSS: XLA_FFI_Error_Code =
    error_code::DATA_LOSS as XLA_FFI_Error_Code;
/// `UNAUTHENTICATED`.
pub const XLA_FFI_Error_Code_UNAUTHENTICATED: XLA_FFI_Error_Code =
    error_code::UNAUTHENTICATED as XLA_FFI_Error_Code;

/// `XLA_FFI_DataType` (`xla::PrimitiveType` numbering, not `PJRT_Buffer_Type`;
/// [`crate::DType`] is the checked Rust view).
pub type XLA_FFI_DataType = u32;
/// `INVALID`.
pub const XLA_FFI_DataType_INVALID: XLA_FFI_DataType = data_type::INVALID;
/// `PRED` (one byte per element, 0 or 1).
pub const XLA_FFI_DataType_PRED: XLA_FFI_DataType = data_type::PRED;
/// `S8`.
pub const XLA_FFI_DataType_S8: XLA_FFI_DataType = data_type::S8;
/// `S16`.
pub const XLA_FFI_DataType_S16: XLA_FFI_DataType = data_type::S16;
/// `S32`.
pub const XLA_FFI_DataType_S32: XLA_FFI_DataType = data_type::S32;
/// `S64`.
pub const XLA_FFI_DataType_S64: XLA_FFI_DataType = data_type::S64;
/// `U8`.
pub const XLA_FFI_DataType_U8: XLA_FFI_DataType = data_type::U8;
/// `U16`.
pub const XLA_FFI_DataType_U16: XLA_FFI_DataType = data_type::U16;
/// `U32`.
pub const XLA_FFI_DataType_U32: XLA_FFI_DataType = data_type::U32;
/// `U64`.
pub const XLA_FFI_DataType_U64: XLA_FFI_DataType = data_type::U64;
/// `F16`.
pub const XLA_FFI_DataType_F16: XLA_FFI_DataType = data_type::F16;
/// `F32`.
pub const XLA_FFI_DataType_F32: XLA_FFI_DataType = data_type::F32;
/// `F64`.
pub const XLA_FFI_DataType_F64: XLA_FFI_DataType = data_type::F64;
/// `C64`.
pub const XLA_FFI_DataType_C64: XLA_FFI_DataType = data_type::C64;
/// `BF16`.
pub const XLA_FFI_DataType_BF16: XLA_FFI_DataType = data_type::BF16;
/// `TOKEN`.
pub const XLA_FFI_DataType_TOKEN: XLA_FFI_DataType = data_type::TOKEN;
/// `C128`.
pub const XLA_FFI_DataType_C128: XLA_FFI_DataType = data_type::C128;
/// `F8E5M2`.
pub const XLA_FFI_DataType_F8E5M2: XLA_FFI_DataType = data_type::F8E5M2;
/// `F8E4M3FN`.
pub const XLA_FFI_DataType_F8E4M3FN: XLA_FFI_DataType = data_type::F8E4M3FN;
/// `S4` (packed, two per byte).
pub const XLA_FFI_DataType_S4: XLA_FFI_DataType = data_type::S4;
/// `U4` (packed, two per byte).
pub const XLA_FFI_DataType_U4: XLA_FFI_DataType = data_type::U4;
/// `F8E4M3B11FNUZ`.
pub const XLA_FFI_DataType_F8E4M3B11FNUZ: XLA_FFI_DataType = data_type::F8E4M3B11FNUZ;
/// `F8E5M2FNUZ`.
pub const XLA_FFI_DataType_F8E5M2FNUZ: XLA_FFI_DataType = data_type::F8E5M2FNUZ;
/// `F8E4M3FNUZ`.
pub const XLA_FFI_DataType_F8E4M3FNUZ: XLA_FFI_DataType = data_type::F8E4M3FNUZ;
/// `S2` (packed, four per byte).
pub const XLA_FFI_DataType_S2: XLA_FFI_DataType = data_type::S2;
/// `U2` (packed, four per byte).
pub const XLA_FFI_DataType_U2: XLA_FFI_DataType = data_type::U2;
/// `F8E4M3`.
pub const XLA_FFI_DataType_F8E4M3: XLA_FFI_DataType = data_type::F8E4M3;
/// `F8E3M4`.
pub const XLA_FFI_DataType_F8E3M4: XLA_FFI_DataType = data_type::F8E3M4;
/// `S1` (packed, eight per byte).
pub const XLA_FFI_DataType_S1: XLA_FFI_DataType = data_type::S1;
/// `U1` (packed, eight per byte).
pub const XLA_FFI_DataType_U1: XLA_FFI_DataType = data_type::U1;
/// `F4E2M1FN`.
pub const XLA_FFI_DataType_F4E2M1FN: XLA_FFI_DataType = data_type::F4E2M1FN;
/// `F8E8M0FNU`.
pub const XLA_FFI_DataType_F8E8M0FNU: XLA_FFI_DataType = data_type::F8E8M0FNU;

/// `XLA_FFI_ArgType`.
pub type XLA_FFI_ArgType = u32;
/// An argument that is a buffer (tokens too).
pub const XLA_FFI_ArgType_BUFFER: XLA_FFI_ArgType = 1;

/// `XLA_FFI_RetType`.
pub type XLA_FFI_RetType = u32;
/// A result that is a buffer.
pub const XLA_FFI_RetType_BUFFER: XLA_FFI_RetType = 1;

/// `XLA_FFI_AttrType`.
pub type XLA_FFI_AttrType = u32;
/// The value is an [`XLA_FFI_Array`].
pub const XLA_FFI_AttrType_ARRAY: XLA_FFI_AttrType = 1;
/// The value is a nested [`XLA_FFI_Attrs`].
pub const XLA_FFI_AttrType_DICTIONARY: XLA_FFI_AttrType = 2;
/// The value is an [`XLA_FFI_Scalar`].
pub const XLA_FFI_AttrType_SCALAR: XLA_FFI_AttrType = 3;
/// The value is an [`XLA_FFI_ByteSpan`].
pub const XLA_FFI_AttrType_STRING: XLA_FFI_AttrType = 4;

/// `XLA_FFI_ExecutionStage`.
pub type XLA_FFI_ExecutionStage = u32;
/// `INSTANTIATE` (only for bundles registered through the XLA FFI API).
pub const XLA_FFI_ExecutionStage_INSTANTIATE: XLA_FFI_ExecutionStage = 0;
/// `PREPARE` (never called on XLA:CPU).
pub const XLA_FFI_ExecutionStage_PREPARE: XLA_FFI_ExecutionStage = 1;
/// `INITIALIZE` (never called on XLA:CPU).
pub const XLA_FFI_ExecutionStage_INITIALIZE: XLA_FFI_ExecutionStage = 2;
/// `EXECUTE` (also the stage of the metadata probe).
pub const XLA_FFI_ExecutionStage_EXECUTE: XLA_FFI_ExecutionStage = 3;

/// `XLA_FFI_Handler_Traits` (a bit set of `XLA_FFI_Handler_TraitsBits`).
pub type XLA_FFI_Handler_Traits = u32;
/// `XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE` (bit 0; irrelevant on CPU).
pub const XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE: XLA_FFI_Handler_Traits = 1;

// ---------------------------------------------------------------------------
// Opaque types
// ---------------------------------------------------------------------------

/// Opaque error handle, created by `XLA_FFI_Error_Create`; XLA owns a
/// returned one.
#[repr(C)]
pub struct XLA_FFI_Error {
    _private: [u8; 0],
}

/// Opaque per-call execution context (`frame->ctx`).
#[repr(C)]
pub struct XLA_FFI_ExecutionContext {
    _private: [u8; 0],
}

/// Opaque future (`frame->future`).
#[repr(C)]
pub struct XLA_FFI_Future {
    _private: [u8; 0],
}

/// Opaque runtime-internal API table (`XLA_FFI_Api.internal_api`).
#[repr(C)]
pub struct XLA_FFI_InternalApi {
    _private: [u8; 0],
}

// ---------------------------------------------------------------------------
// Extensions, versions, metadata
// ---------------------------------------------------------------------------

/// `XLA_FFI_Extension_Base`: head of every extension in a chain.
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Extension_Base {
    /// Size of the whole extension struct.
    pub struct_size: usize,
    /// Which extension this is.
    pub type_: XLA_FFI_Extension_Type,
    /// Next extension, or NULL.
    pub next: *mut XLA_FFI_Extension_Base,
}

/// `XLA_FFI_Api_Version`.
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Api_Version {
    /// [`XLA_FFI_Api_Version_STRUCT_SIZE`].
    pub struct_size: usize,
    /// Unused, NULL.
    pub extension_start: *mut XLA_FFI_Extension_Base,
    /// Major version.
    pub major_version: c_int,
    /// Minor version.
    pub minor_version: c_int,
}

/// `XLA_FFI_TypeId`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct XLA_FFI_TypeId {
    /// 0 means "unknown / assign one".
    pub type_id: i64,
}

/// `XLA_FFI_Metadata`: what a handler reports in the registration probe.
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Metadata {
    /// [`XLA_FFI_Metadata_STRUCT_SIZE`] (36; `state_type_id` lies outside).
    pub struct_size: usize,
    /// The FFI API version the handler speaks (out).
    pub api_version: XLA_FFI_Api_Version,
    /// Handler traits (out).
    pub traits: XLA_FFI_Handler_Traits,
    /// Type of the handler's state (out; 0 = none).
    pub state_type_id: XLA_FFI_TypeId,
}

/// `XLA_FFI_Metadata_Extension`: found on `frame->extension_start` in the probe.
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Metadata_Extension {
    /// `type_` = [`XLA_FFI_Extension_Metadata`].
    pub extension_base: XLA_FFI_Extension_Base,
    /// The metadata to fill.
    pub metadata: *mut XLA_FFI_Metadata,
}

// ---------------------------------------------------------------------------
// Frame-side structs
// ---------------------------------------------------------------------------

/// `XLA_FFI_ByteSpan` (not NUL-terminated by contract).
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_ByteSpan {
    /// First byte (may be NULL when `len` is 0).
    pub ptr: *const c_char,
    /// Number of bytes.
    pub len: usize,
}

/// `XLA_FFI_Scalar`: a scalar attribute.
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Scalar {
    /// Element type of the value.
    pub dtype: XLA_FFI_DataType,
    /// Points at the native value.
    pub value: *mut c_void,
}

/// `XLA_FFI_Array`: an array attribute (flattened row-major).
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Array {
    /// Element type.
    pub dtype: XLA_FFI_DataType,
    /// Element count.
    pub size: usize,
    /// Contiguous native elements.
    pub data: *mut c_void,
}

/// `XLA_FFI_Buffer`: one argument or result.
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Buffer {
    /// [`XLA_FFI_Buffer_STRUCT_SIZE`] (48).
    pub struct_size: usize,
    /// NULL.
    pub extension_start: *mut XLA_FFI_Extension_Base,
    /// Element type.
    pub dtype: XLA_FFI_DataType,
    /// Device (= host) address of the data.
    pub data: *mut c_void,
    /// Number of dimensions.
    pub rank: i64,
    /// `rank` dimensions (row-major unless the program said otherwise).
    pub dims: *mut i64,
}

/// `XLA_FFI_Args`.
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Args {
    /// [`XLA_FFI_Args_STRUCT_SIZE`] (40).
    pub struct_size: usize,
    /// NULL.
    pub extension_start: *mut XLA_FFI_Extension_Base,
    /// Number of arguments.
    pub size: i64,
    /// `size` argument types.
    pub types: *mut XLA_FFI_ArgType,
    /// `size` pointers, each to an [`XLA_FFI_Buffer`].
    pub args: *mut *mut c_void,
}

/// `XLA_FFI_Rets`.
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Rets {
    /// [`XLA_FFI_Rets_STRUCT_SIZE`] (40).
    pub struct_size: usize,
    /// NULL.
    pub extension_start: *mut XLA_FFI_Extension_Base,
    /// Number of results.
    pub size: i64,
    /// `size` result types.
    pub types: *mut XLA_FFI_RetType,
    /// `size` pointers, each to an [`XLA_FFI_Buffer`].
    pub rets: *mut *mut c_void,
}

/// `XLA_FFI_Attrs`: attributes, sorted byte-wise by name (also nested ones).
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Attrs {
    /// [`XLA_FFI_Attrs_STRUCT_SIZE`] (48).
    pub struct_size: usize,
    /// NULL.
    pub extension_start: *mut XLA_FFI_Extension_Base,
    /// Number of attributes.
    pub size: i64,
    /// `size` attribute types.
    pub types: *mut XLA_FFI_AttrType,
    /// `size` pointers to names.
    pub names: *mut *mut XLA_FFI_ByteSpan,
    /// `size` pointers to values (type selected by `types[i]`).
    pub attrs: *mut *mut c_void,
}

/// `XLA_FFI_CallFrame`: what a handler receives.
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_CallFrame {
    /// [`XLA_FFI_CallFrame_STRUCT_SIZE`] (168; `future` lies outside).
    pub struct_size: usize,
    /// The metadata extension in the probe, NULL in execute frames.
    pub extension_start: *mut XLA_FFI_Extension_Base,
    /// The runtime's API table.
    pub api: *const XLA_FFI_Api,
    /// Per-call context (NULL in the probe).
    pub ctx: *mut XLA_FFI_ExecutionContext,
    /// Execution stage.
    pub stage: XLA_FFI_ExecutionStage,
    /// Arguments.
    pub args: XLA_FFI_Args,
    /// Results.
    pub rets: XLA_FFI_Rets,
    /// Attributes.
    pub attrs: XLA_FFI_Attrs,
    /// Out: a future the execution waits for.
    pub future: *mut XLA_FFI_Future,
}

/// `XLA_FFI_Error* XLA_FFI_Handler(XLA_FFI_CallFrame*)`: NULL = success.
pub type XLA_FFI_Handler = unsafe extern "C" fn(*mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error;

/// `XLA_FFI_Handler_Bundle`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct XLA_FFI_Handler_Bundle {
    /// Optional.
    pub instantiate: Option<XLA_FFI_Handler>,
    /// Optional.
    pub prepare: Option<XLA_FFI_Handler>,
    /// Optional.
    pub initialize: Option<XLA_FFI_Handler>,
    /// Required.
    pub execute: Option<XLA_FFI_Handler>,
}

// ---------------------------------------------------------------------------
// Service-call argument structs
// ---------------------------------------------------------------------------

/// Declares an `*_Args` struct: `struct_size` and `extension_start` first.
macro_rules! args_struct {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Debug)]
        pub struct $name {
            /// The header's `*_STRUCT_SIZE`.
            pub struct_size: usize,
            /// NULL.
            pub extension_start: *mut XLA_FFI_Extension_Base,
            $($(#[$fdoc])* pub $field: $ty,)*
        }
    };
}

args_struct!(
    /// `XLA_FFI_Error_Create_Args`.
    XLA_FFI_Error_Create_Args {
        /// NUL-terminated message (copied by the runtime).
        message: *const c_char,
        /// Error code.
        errc: XLA_FFI_Error_Code,
    }
);
args_struct!(
    /// `XLA_FFI_Error_GetMessage_Args`.
    XLA_FFI_Error_GetMessage_Args {
        /// The error.
        error: *mut XLA_FFI_Error,
        /// Out: NUL-terminated message, valid until the error is destroyed.
        message: *const c_char,
    }
);
args_struct!(
    /// `XLA_FFI_Error_Destroy_Args`.
    XLA_FFI_Error_Destroy_Args {
        /// The error.
        error: *mut XLA_FFI_Error,
    }
);
args_struct!(
    /// `XLA_FFI_Handler_Register_Args`.
    XLA_FFI_Handler_Register_Args {
        /// Target name.
        name: XLA_FFI_ByteSpan,
        /// Platform name (case-insensitive, e.g. `Host`).
        platform: XLA_FFI_ByteSpan,
        /// Handlers per stage.
        bundle: XLA_FFI_Handler_Bundle,
        /// Traits.
        traits: XLA_FFI_Handler_Traits,
    }
);
args_struct!(
    /// `XLA_FFI_TypeInfo`.
    XLA_FFI_TypeInfo {
        /// Destroys an object of the type.
        deleter: Option<unsafe extern "C" fn(object: *mut c_void)>,
    }
);
args_struct!(
    /// `XLA_FFI_Type_Register_Args`.
    XLA_FFI_Type_Register_Args {
        /// Type name.
        name: XLA_FFI_ByteSpan,
        /// In/out type id.
        type_id: *mut XLA_FFI_TypeId,
        /// Type info (outside the declared struct size).
        type_info: *const XLA_FFI_TypeInfo,
    }
);
args_struct!(
    /// `XLA_FFI_ExecutionContext_Get_Args`.
    XLA_FFI_ExecutionContext_Get_Args {
        /// `frame->ctx`.
        ctx: *mut XLA_FFI_ExecutionContext,
        /// Type of the user data.
        type_id: *mut XLA_FFI_TypeId,
        /// Out: the user data.
        data: *mut c_void,
    }
);
args_struct!(
    /// `XLA_FFI_State_Set_Args`.
    XLA_FFI_State_Set_Args {
        /// `frame->ctx`.
        ctx: *mut XLA_FFI_ExecutionContext,
        /// Stage the state belongs to.
        stage: XLA_FFI_ExecutionStage,
        /// Type of the state.
        type_id: *mut XLA_FFI_TypeId,
        /// The state.
        state: *mut c_void,
    }
);
args_struct!(
    /// `XLA_FFI_State_Get_Args`.
    XLA_FFI_State_Get_Args {
        /// `frame->ctx`.
        ctx: *mut XLA_FFI_ExecutionContext,
        /// Stage the state belongs to.
        stage: XLA_FFI_ExecutionStage,
        /// Type of the state.
        type_id: *mut XLA_FFI_TypeId,
        /// Out: the state.
        state: *mut c_void,
    }
);
args_struct!(
    /// `XLA_FFI_Stream_Get_Args`.
    XLA_FFI_Stream_Get_Args {
        /// `frame->ctx`.
        ctx: *mut XLA_FFI_ExecutionContext,
        /// Out: the stream (GPU only).
        stream: *mut c_void,
    }
);
args_struct!(
    /// `XLA_FFI_DeviceMemory_Allocate_Args`.
    XLA_FFI_DeviceMemory_Allocate_Args {
        /// `frame->ctx`.
        ctx: *mut XLA_FFI_ExecutionContext,
        /// Bytes.
        size: usize,
        /// Alignment.
        alignment: usize,
        /// Out: the memory.
        data: *mut c_void,
    }
);
args_struct!(
    /// `XLA_FFI_DeviceMemory_Free_Args`.
    XLA_FFI_DeviceMemory_Free_Args {
        /// `frame->ctx`.
        ctx: *mut XLA_FFI_ExecutionContext,
        /// Bytes.
        size: usize,
        /// The memory.
        data: *mut c_void,
    }
);
args_struct!(
    /// `XLA_FFI_ThreadPool_Schedule_Args`.
    XLA_FFI_ThreadPool_Schedule_Args {
        /// `frame->ctx`.
        ctx: *mut XLA_FFI_ExecutionContext,
        /// `XLA_FFI_Task`: `void(void*)`.
        task: Option<unsafe extern "C" fn(data: *mut c_void)>,
        /// Argument of the task.
        data: *mut c_void,
    }
);
args_struct!(
    /// `XLA_FFI_ThreadPool_NumThreads_Args`.
    XLA_FFI_ThreadPool_NumThreads_Args {
        /// `frame->ctx`.
        ctx: *mut XLA_FFI_ExecutionContext,
        /// Out: number of threads.
        num_threads: *mut i64,
    }
);
args_struct!(
    /// `XLA_FFI_Future_Create_Args`.
    XLA_FFI_Future_Create_Args {
        /// Out: the future (outside the declared struct size).
        future: *mut XLA_FFI_Future,
    }
);
args_struct!(
    /// `XLA_FFI_Future_SetAvailable_Args`.
    XLA_FFI_Future_SetAvailable_Args {
        /// The future.
        future: *mut XLA_FFI_Future,
    }
);
args_struct!(
    /// `XLA_FFI_Future_SetError_Args`.
    XLA_FFI_Future_SetError_Args {
        /// The future.
        future: *mut XLA_FFI_Future,
        /// The error (ownership passes to XLA).
        error: *mut XLA_FFI_Error,
    }
);
args_struct!(
    /// `XLA_FFI_RunId_Get_Args`.
    XLA_FFI_RunId_Get_Args {
        /// `frame->ctx`.
        ctx: *mut XLA_FFI_ExecutionContext,
        /// Out: the run id.
        run_id: i64,
    }
);
args_struct!(
    /// `XLA_FFI_DeviceOrdinal_Get_Args`.
    XLA_FFI_DeviceOrdinal_Get_Args {
        /// `frame->ctx`.
        ctx: *mut XLA_FFI_ExecutionContext,
        /// Out: the device ordinal.
        device_ordinal: i32,
    }
);

// ---------------------------------------------------------------------------
// The API table
// ---------------------------------------------------------------------------

/// `XLA_FFI_Error* XLA_FFI_Error_Create(XLA_FFI_Error_Create_Args*)`.
pub type XLA_FFI_Error_Create =
    unsafe extern "C" fn(args: *mut XLA_FFI_Error_Create_Args) -> *mut XLA_FFI_Error;
/// `void XLA_FFI_Error_GetMessage(XLA_FFI_Error_GetMessage_Args*)`.
pub type XLA_FFI_Error_GetMessage = unsafe extern "C" fn(args: *mut XLA_FFI_Error_GetMessage_Args);
/// `void XLA_FFI_Error_Destroy(XLA_FFI_Error_Destroy_Args*)`.
pub type XLA_FFI_Error_Destroy = unsafe extern "C" fn(args: *mut XLA_FFI_Error_Destroy_Args);
/// `XLA_FFI_Handler_Register`.
pub type XLA_FFI_Handler_Register =
    unsafe extern "C" fn(args: *mut XLA_FFI_Handler_Register_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_Stream_Get`.
pub type XLA_FFI_Stream_Get =
    unsafe extern "C" fn(args: *mut XLA_FFI_Stream_Get_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_Type_Register`.
pub type XLA_FFI_Type_Register =
    unsafe extern "C" fn(args: *mut XLA_FFI_Type_Register_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_ExecutionContext_Get`.
pub type XLA_FFI_ExecutionContext_Get =
    unsafe extern "C" fn(args: *mut XLA_FFI_ExecutionContext_Get_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_State_Set`.
pub type XLA_FFI_State_Set =
    unsafe extern "C" fn(args: *mut XLA_FFI_State_Set_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_State_Get`.
pub type XLA_FFI_State_Get =
    unsafe extern "C" fn(args: *mut XLA_FFI_State_Get_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_DeviceMemory_Allocate`.
pub type XLA_FFI_DeviceMemory_Allocate =
    unsafe extern "C" fn(args: *mut XLA_FFI_DeviceMemory_Allocate_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_DeviceMemory_Free`.
pub type XLA_FFI_DeviceMemory_Free =
    unsafe extern "C" fn(args: *mut XLA_FFI_DeviceMemory_Free_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_ThreadPool_Schedule`.
pub type XLA_FFI_ThreadPool_Schedule =
    unsafe extern "C" fn(args: *mut XLA_FFI_ThreadPool_Schedule_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_ThreadPool_NumThreads`.
pub type XLA_FFI_ThreadPool_NumThreads =
    unsafe extern "C" fn(args: *mut XLA_FFI_ThreadPool_NumThreads_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_Future_Create`.
pub type XLA_FFI_Future_Create =
    unsafe extern "C" fn(args: *mut XLA_FFI_Future_Create_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_Future_SetAvailable`.
pub type XLA_FFI_Future_SetAvailable =
    unsafe extern "C" fn(args: *mut XLA_FFI_Future_SetAvailable_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_Future_SetError`.
pub type XLA_FFI_Future_SetError =
    unsafe extern "C" fn(args: *mut XLA_FFI_Future_SetError_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_RunId_Get`.
pub type XLA_FFI_RunId_Get =
    unsafe extern "C" fn(args: *mut XLA_FFI_RunId_Get_Args) -> *mut XLA_FFI_Error;
/// `XLA_FFI_DeviceOrdinal_Get`.
pub type XLA_FFI_DeviceOrdinal_Get =
    unsafe extern "C" fn(args: *mut XLA_FFI_DeviceOrdinal_Get_Args) -> *mut XLA_FFI_Error;

/// `XLA_FFI_Api`, version 0.3 layout (18 function slots; 0.2 has the same
/// slots, 0.4 appends a 19th that is not declared here).
///
/// Before calling a slot, check that `struct_size` covers it (see
/// [`XLA_FFI_Api::covers`]) and that it is not NULL.
#[repr(C)]
#[derive(Debug)]
pub struct XLA_FFI_Api {
    /// 192 (0.2, 0.3) or 200 (0.4).
    pub struct_size: usize,
    /// NULL.
    pub extension_start: *mut XLA_FFI_Extension_Base,
    /// The runtime's FFI API version.
    pub api_version: XLA_FFI_Api_Version,
    /// Runtime-internal.
    pub internal_api: *const XLA_FFI_InternalApi,
    /// Slot 0.
    pub XLA_FFI_Error_Create: Option<XLA_FFI_Error_Create>,
    /// Slot 1.
    pub XLA_FFI_Error_GetMessage: Option<XLA_FFI_Error_GetMessage>,
    /// Slot 2.
    pub XLA_FFI_Error_Destroy: Option<XLA_FFI_Error_Destroy>,
    /// Slot 3.
    pub XLA_FFI_Handler_Register: Option<XLA_FFI_Handler_Register>,
    /// Slot 4.
    pub XLA_FFI_Stream_Get: Option<XLA_FFI_Stream_Get>,
    /// Slot 5.
    pub XLA_FFI_Type_Register: Option<XLA_FFI_Type_Register>,
    /// Slot 6.
    pub XLA_FFI_ExecutionContext_Get: Option<XLA_FFI_ExecutionContext_Get>,
    /// Slot 7.
    pub XLA_FFI_State_Set: Option<XLA_FFI_State_Set>,
    /// Slot 8.
    pub XLA_FFI_State_Get: Option<XLA_FFI_State_Get>,
    /// Slot 9.
    pub XLA_FFI_DeviceMemory_Allocate: Option<XLA_FFI_DeviceMemory_Allocate>,
    /// Slot 10.
    pub XLA_FFI_DeviceMemory_Free: Option<XLA_FFI_DeviceMemory_Free>,
    /// Slot 11.
    pub XLA_FFI_ThreadPool_Schedule: Option<XLA_FFI_ThreadPool_Schedule>,
    /// Slot 12.
    pub XLA_FFI_ThreadPool_NumThreads: Option<XLA_FFI_ThreadPool_NumThreads>,
    /// Slot 13.
    pub XLA_FFI_Future_Create: Option<XLA_FFI_Future_Create>,
    /// Slot 14.
    pub XLA_FFI_Future_SetAvailable: Option<XLA_FFI_Future_SetAvailable>,
    /// Slot 15.
    pub XLA_FFI_Future_SetError: Option<XLA_FFI_Future_SetError>,
    /// Slot 16.
    pub XLA_FFI_RunId_Get: Option<XLA_FFI_RunId_Get>,
    /// Slot 17.
    pub XLA_FFI_DeviceOrdinal_Get: Option<XLA_FFI_DeviceOrdinal_Get>,
}

impl XLA_FFI_Api {
    /// Whether a table whose `struct_size` is `struct_size` contains the
    /// field that starts at `offset` (an `offset_of!(XLA_FFI_Api, ...)` of a
    /// function slot): `offset + 8 <= struct_size`.
    pub const fn covers(struct_size: usize, offset: usize) -> bool {
        match offset.checked_add(size_of::<usize>()) {
            Some(end) => end <= struct_size,
            None => false,
        }
    }
}

/// Offset of function slot `index` (0..=17) in [`XLA_FFI_Api`].
pub const fn api_slot_offset(index: usize) -> usize {
    offset_of!(XLA_FFI_Api, XLA_FFI_Error_Create) + index * size_of::<usize>()
}

// ---------------------------------------------------------------------------
// STRUCT_SIZE constants: offsetof(last traits field) + its size
// ---------------------------------------------------------------------------

/// Defines each `NAME` (a `usize`) as the end of the given last field of its
/// struct: `offset_of!(T, field) + size_of::<FieldType>()`.
macro_rules! struct_sizes {
    ($($(#[$doc:meta])* $name:ident = $t:ty, $field:ident: $fty:ty;)*) => {$(
        $(#[$doc])*
        pub const $name: usize = offset_of!($t, $field) + size_of::<$fty>();
    )*};
}

struct_sizes! {
    /// `XLA_FFI_Extension_Base_STRUCT_SIZE` (24).
    XLA_FFI_Extension_Base_STRUCT_SIZE = XLA_FFI_Extension_Base, next: *mut XLA_FFI_Extension_Base;
    /// `XLA_FFI_Api_Version_STRUCT_SIZE` (24).
    XLA_FFI_Api_Version_STRUCT_SIZE = XLA_FFI_Api_Version, minor_version: c_int;
    /// `XLA_FFI_Metadata_STRUCT_SIZE` (36).
    XLA_FFI_Metadata_STRUCT_SIZE = XLA_FFI_Metadata, traits: XLA_FFI_Handler_Traits;
    /// `XLA_FFI_Metadata_Extension_STRUCT_SIZE` (32).
    XLA_FFI_Metadata_Extension_STRUCT_SIZE =
        XLA_FFI_Metadata_Extension, metadata: *mut XLA_FFI_Metadata;
    /// `XLA_FFI_Buffer_STRUCT_SIZE` (48).
    XLA_FFI_Buffer_STRUCT_SIZE = XLA_FFI_Buffer, dims: *mut i64;
    /// `XLA_FFI_Args_STRUCT_SIZE` (40).
    XLA_FFI_Args_STRUCT_SIZE = XLA_FFI_Args, args: *mut *mut c_void;
    /// `XLA_FFI_Rets_STRUCT_SIZE` (40).
    XLA_FFI_Rets_STRUCT_SIZE = XLA_FFI_Rets, rets: *mut *mut c_void;
    /// `XLA_FFI_Attrs_STRUCT_SIZE` (48).
    XLA_FFI_Attrs_STRUCT_SIZE = XLA_FFI_Attrs, attrs: *mut *mut c_void;
    /// `XLA_FFI_CallFrame_STRUCT_SIZE` (168; excludes `future`).
    XLA_FFI_CallFrame_STRUCT_SIZE = XLA_FFI_CallFrame, attrs: XLA_FFI_Attrs;
    /// `XLA_FFI_Error_Create_Args_STRUCT_SIZE` (28).
    XLA_FFI_Error_Create_Args_STRUCT_SIZE = XLA_FFI_Error_Create_Args, errc: XLA_FFI_Error_Code;
    /// `XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE` (32).
    XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE =
        XLA_FFI_Error_GetMessage_Args, message: *const c_char;
    /// `XLA_FFI_Error_Destroy_Args_STRUCT_SIZE` (24).
    XLA_FFI_Error_Destroy_Args_STRUCT_SIZE = XLA_FFI_Error_Destroy_Args, error: *mut XLA_FFI_Error;
    /// `XLA_FFI_Handler_Register_Args_STRUCT_SIZE` (84).
    XLA_FFI_Handler_Register_Args_STRUCT_SIZE =
        XLA_FFI_Handler_Register_Args, traits: XLA_FFI_Handler_Traits;
    /// `XLA_FFI_TypeInfo_STRUCT_SIZE` (24).
    XLA_FFI_TypeInfo_STRUCT_SIZE =
        XLA_FFI_TypeInfo, deleter: Option<unsafe extern "C" fn(*mut c_void)>;
    /// `XLA_FFI_Type_Register_Args_STRUCT_SIZE` (40; excludes `type_info`).
    XLA_FFI_Type_Register_Args_STRUCT_SIZE =
        XLA_FFI_Type_Register_Args, type_id: *mut XLA_FFI_TypeId;
    /// `XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE` (40).
    XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE =
        XLA_FFI_ExecutionContext_Get_Args, data: *mut c_void;
    /// `XLA_FFI_State_Set_Args_STRUCT_SIZE` (48).
    XLA_FFI_State_Set_Args_STRUCT_SIZE = XLA_FFI_State_Set_Args, state: *mut c_void;
    /// `XLA_FFI_State_Get_Args_STRUCT_SIZE` (48).
    XLA_FFI_State_Get_Args_STRUCT_SIZE = XLA_FFI_State_Get_Args, state: *mut c_void;
    /// `XLA_FFI_Stream_Get_Args_STRUCT_SIZE` (32).
    XLA_FFI_Stream_Get_Args_STRUCT_SIZE = XLA_FFI_Stream_Get_Args, stream: *mut c_void;
    /// `XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE` (48).
    XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE =
        XLA_FFI_DeviceMemory_Allocate_Args, data: *mut c_void;
    /// `XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE` (40).
    XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE = XLA_FFI_DeviceMemory_Free_Args, data: *mut c_void;
    /// `XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE` (40).
    XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE =
        XLA_FFI_ThreadPool_Schedule_Args, data: *mut c_void;
    /// `XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE` (32).
    XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE =
        XLA_FFI_ThreadPool_NumThreads_Args, num_threads: *mut i64;
    /// `XLA_FFI_Future_Create_Args_STRUCT_SIZE` (16; excludes the `future`
    /// out-field, which the runtime still writes: allocate `size_of`).
    XLA_FFI_Future_Create_Args_STRUCT_SIZE =
        XLA_FFI_Future_Create_Args, extension_start: *mut XLA_FFI_Extension_Base;
    /// `XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE` (24).
    XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE =
        XLA_FFI_Future_SetAvailable_Args, future: *mut XLA_FFI_Future;
    /// `XLA_FFI_Future_SetError_Args_STRUCT_SIZE` (32).
    XLA_FFI_Future_SetError_Args_STRUCT_SIZE =
        XLA_FFI_Future_SetError_Args, error: *mut XLA_FFI_Error;
    /// `XLA_FFI_RunId_Get_Args_STRUCT_SIZE` (32).
    XLA_FFI_RunId_Get_Args_STRUCT_SIZE = XLA_FFI_RunId_Get_Args, run_id: i64;
    /// `XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE` (28).
    XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE =
        XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal: i32;
    /// `XLA_FFI_Api_STRUCT_SIZE` (192 for the 0.3 table).
    XLA_FFI_Api_STRUCT_SIZE =
        XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get: Option<XLA_FFI_DeviceOrdinal_Get>;
}

// ---------------------------------------------------------------------------
// Compile-time layout proofs (x86_64 / LP64 column of docs/abi.md, "XLA FFI C API",
// which aarch64 shares: these asserts compile for it too)
// ---------------------------------------------------------------------------

/// Asserts size, alignment, declared struct size and every field offset;
/// `header` stands for `struct_size` and `struct_size @ 0, extension_start @ 8`.
macro_rules! assert_layout {
    ($t:ty, size $size:expr, align $align:expr, header $ss:expr, { $($fields:tt)* }) => {
        assert_layout!($t, size $size, align $align, struct_size $ss, {
            struct_size @ 0, extension_start @ 8, $($fields)*
        });
    };
    ($t:ty, size $size:expr, align $align:expr, $(struct_size $ss:expr,)? { $($field:ident @ $off:expr),* $(,)? }) => {
        const _: () = {
            assert!(size_of::<$t>() == $size, concat!("size of ", stringify!($t)));
            assert!(
                std::mem::align_of::<$t>() == $align,
                concat!("align of ", stringify!($t))
            );
            $(assert!($ss.0 == $ss.1, concat!("STRUCT_SIZE of ", stringify!($t)));)?
            $(assert!(
                offset_of!($t, $field) == $off,
                concat!("offset of ", stringify!($t), ".", stringify!($field))
            );)*
        };
    };
}

#[cfg(target_pointer_width = "64")]
mod layout {
    use super::*;

    assert_layout!(XLA_FFI_CallFrame, size 176, align 8,
        header (XLA_FFI_CallFrame_STRUCT_SIZE, 168), {
        api @ 16, ctx @ 24, stage @ 32, args @ 40, rets @ 80, attrs @ 120, future @ 168,
    });
    assert_layout!(XLA_FFI_Args, size 40, align 8,
        header (XLA_FFI_Args_STRUCT_SIZE, 40), { size @ 16, types @ 24, args @ 32 });
    assert_layout!(XLA_FFI_Rets, size 40, align 8,
        header (XLA_FFI_Rets_STRUCT_SIZE, 40), { size @ 16, types @ 24, rets @ 32 });
    assert_layout!(XLA_FFI_Attrs, size 48, align 8,
        header (XLA_FFI_Attrs_STRUCT_SIZE, 48), { size @ 16, types @ 24, names @ 32, attrs @ 40 });
    assert_layout!(XLA_FFI_Buffer, size 48, align 8,
        header (XLA_FFI_Buffer_STRUCT_SIZE, 48), { dtype @ 16, data @ 24, rank @ 32, dims @ 40 });
    assert_layout!(XLA_FFI_ByteSpan, size 16, align 8, { ptr @ 0, len @ 8 });
    assert_layout!(XLA_FFI_Scalar, size 16, align 8, { dtype @ 0, value @ 8 });
    assert_layout!(XLA_FFI_Array, size 24, align 8, { dtype @ 0, size @ 8, data @ 16 });
    assert_layout!(XLA_FFI_Extension_Base, size 24, align 8,
        struct_size (XLA_FFI_Extension_Base_STRUCT_SIZE, 24), {
        struct_size @ 0, type_ @ 8, next @ 16,
    });
    assert_layout!(XLA_FFI_Metadata_Extension, size 32, align 8,
        struct_size (XLA_FFI_Metadata_Extension_STRUCT_SIZE, 32), {
        extension_base @ 0, metadata @ 24,
    });
    assert_layout!(XLA_FFI_Metadata, size 48, align 8,
        struct_size (XLA_FFI_Metadata_STRUCT_SIZE, 36), {
        struct_size @ 0, api_version @ 8, traits @ 32, state_type_id @ 40,
    });
    assert_layout!(XLA_FFI_Api_Version, size 24, align 8,
        header (XLA_FFI_Api_Version_STRUCT_SIZE, 24), { major_version @ 16, minor_version @ 20 });
    assert_layout!(XLA_FFI_TypeId, size 8, align 8, { type_id @ 0 });
    assert_layout!(XLA_FFI_Error_Create_Args, size 32, align 8,
        header (XLA_FFI_Error_Create_Args_STRUCT_SIZE, 28), { message @ 16, errc @ 24 });
    assert_layout!(XLA_FFI_Error_GetMessage_Args, size 32, align 8,
        header (XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, 32), { error @ 16, message @ 24 });
    assert_layout!(XLA_FFI_Error_Destroy_Args, size 24, align 8,
        header (XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, 24), { error @ 16 });
    assert_layout!(XLA_FFI_TypeInfo, size 24, align 8,
        header (XLA_FFI_TypeInfo_STRUCT_SIZE, 24), { deleter @ 16 });
    assert_layout!(XLA_FFI_Future_Create_Args, size 24, align 8,
        header (XLA_FFI_Future_Create_Args_STRUCT_SIZE, 16), { future @ 16 });
    assert_layout!(XLA_FFI_Future_SetAvailable_Args, size 24, align 8,
        header (XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, 24), { future @ 16 });
    assert_layout!(XLA_FFI_Future_SetError_Args, size 32, align 8,
        header (XLA_FFI_Future_SetError_Args_STRUCT_SIZE, 32), { future @ 16, error @ 24 });
    assert_layout!(XLA_FFI_Handler_Bundle, size 32, align 8, {
        instantiate @ 0, prepare @ 8, initialize @ 16, execute @ 24,
    });
    assert_layout!(XLA_FFI_Handler_Register_Args, size 88, align 8,
        header (XLA_FFI_Handler_Register_Args_STRUCT_SIZE, 84), {
        name @ 16, platform @ 32, bundle @ 48, traits @ 80,
    });
    assert_layout!(XLA_FFI_Type_Register_Args, size 48, align 8,
        header (XLA_FFI_Type_Register_Args_STRUCT_SIZE, 40), {
        name @ 16, type_id @ 32, type_info @ 40,
    });
    assert_layout!(XLA_FFI_ExecutionContext_Get_Args, size 40, align 8,
        header (XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, 40), {
        ctx @ 16, type_id @ 24, data @ 32,
    });
    assert_layout!(XLA_FFI_State_Set_Args, size 48, align 8,
        header (XLA_FFI_State_Set_Args_STRUCT_SIZE, 48), {
        ctx @ 16, stage @ 24, type_id @ 32, state @ 40,
    });
    assert_layout!(XLA_FFI_State_Get_Args, size 48, align 8,
        header (XLA_FFI_State_Get_Args_STRUCT_SIZE, 48), {
        ctx @ 16, stage @ 24, type_id @ 32, state @ 40,
    });
    assert_layout!(XLA_FFI_Stream_Get_Args, size 32, align 8,
        header (XLA_FFI_Stream_Get_Args_STRUCT_SIZE, 32), { ctx @ 16, stream @ 24 });
    assert_layout!(XLA_FFI_DeviceMemory_Allocate_Args, size 48, align 8,
        header (XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, 48), {
        ctx @ 16, size @ 24, alignment @ 32, data @ 40,
    });
    assert_layout!(XLA_FFI_DeviceMemory_Free_Args, size 40, align 8,
        header (XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, 40), {
        ctx @ 16, size @ 24, data @ 32,
    });
    assert_layout!(XLA_FFI_ThreadPool_Schedule_Args, size 40, align 8,
        header (XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, 40), {
        ctx @ 16, task @ 24, data @ 32,
    });
    assert_layout!(XLA_FFI_ThreadPool_NumThreads_Args, size 32, align 8,
        header (XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE, 32), {
        ctx @ 16, num_threads @ 24,
    });
    assert_layout!(XLA_FFI_RunId_Get_Args, size 32, align 8,
        header (XLA_FFI_RunId_Get_Args_STRUCT_SIZE, 32), { ctx @ 16, run_id @ 24 });
    assert_layout!(XLA_FFI_DeviceOrdinal_Get_Args, size 32, align 8,
        header (XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, 28), { ctx @ 16, device_ordinal @ 24 });
    assert_layout!(XLA_FFI_Api, size 192, align 8, header (XLA_FFI_Api_STRUCT_SIZE, 192), {
        api_version @ 16, internal_api @ 40,
        XLA_FFI_Error_Create @ 48,
        XLA_FFI_Error_GetMessage @ 56,
        XLA_FFI_Error_Destroy @ 64,
        XLA_FFI_Handler_Register @ 72,
        XLA_FFI_Stream_Get @ 80,
        XLA_FFI_Type_Register @ 88,
        XLA_FFI_ExecutionContext_Get @ 96,
        XLA_FFI_State_Set @ 104,
        XLA_FFI_State_Get @ 112,
        XLA_FFI_DeviceMemory_Allocate @ 120,
        XLA_FFI_DeviceMemory_Free @ 128,
        XLA_FFI_ThreadPool_Schedule @ 136,
        XLA_FFI_ThreadPool_NumThreads @ 144,
        XLA_FFI_Future_Create @ 152,
        XLA_FFI_Future_SetAvailable @ 160,
        XLA_FFI_Future_SetError @ 168,
        XLA_FFI_RunId_Get @ 176,
        XLA_FFI_DeviceOrdinal_Get @ 184,
    });

    // The version fields read from `frame->api` (docs/abi.md, "Version rule").
    const _: () = assert!(
        offset_of!(XLA_FFI_Api, api_version) + offset_of!(XLA_FFI_Api_Version, major_version) == 32
    );
    const _: () = assert!(api_slot_offset(17) == 184);
    // Nullable function pointers are one pointer wide (niche optimisation).
    const _: () = assert!(size_of::<Option<XLA_FFI_Handler>>() == 8);
}
