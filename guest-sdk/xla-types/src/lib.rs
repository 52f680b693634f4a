//! XLA's enums as the XLA FFI C API (`xla/ffi/api/c_api.h`) numbers them,
//! written once for every crate of cyxla: the element types
//! ([`DataType`], raw values in [`data_type`]) and the error codes
//! ([`ErrorCode`], raw values in [`error_code`]).
//!
//! `no_std` and without dependencies, so that the guest SDK (compiled to
//! wasm32), the native glue and the host share the same table.
//!
//! ```
//! use cyxla_xla_types::{DataType, ErrorCode};
//! assert_eq!(DataType::from_raw(11), Some(DataType::F32));
//! assert_eq!(DataType::Bf16.byte_size(3), Some(6));
//! assert_eq!(ErrorCode::InvalidArgument.to_string(), "INVALID_ARGUMENT");
//! ```
#![no_std]
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

#[cfg(test)]
extern crate std;

mod dtype;
mod error;

pub use dtype::DataType;
pub use error::ErrorCode;

/// `XLA_FFI_DataType` values (they mirror `xla::PrimitiveType`, not
/// `PJRT_Buffer_Type`).
pub mod data_type {
    #![expect(
        missing_docs,
        reason = "one constant per XLA_FFI_DataType member, named after it"
    )]
    pub const INVALID: u32 = 0;
    pub const PRED: u32 = 1;
    pub const S8: u32 = 2;
    pub const S16: u32 = 3;
    pub const S32: u32 = 4;
    pub const S64: u32 = 5;
    pub const U8: u32 = 6;
    pub const U16: u32 = 7;
    pub const U32: u32 = 8;
    pub const U64: u32 = 9;
    pub const F16: u32 = 10;
    pub const F32: u32 = 11;
    pub const F64: u32 = 12;
    pub const C64: u32 = 15;
    pub const BF16: u32 = 16;
    pub const TOKEN: u32 = 17;
    pub const C128: u32 = 18;
    pub const F8E5M2: u32 = 19;
    pub const F8E4M3FN: u32 = 20;
    pub const S4: u32 = 21;
    pub const U4: u32 = 22;
    pub const F8E4M3B11FNUZ: u32 = 23;
    pub const F8E5M2FNUZ: u32 = 24;
    pub const F8E4M3FNUZ: u32 = 25;
    pub const S2: u32 = 26;
    pub const U2: u32 = 27;
    pub const F8E4M3: u32 = 28;
    pub const F8E3M4: u32 = 29;
    pub const S1: u32 = 30;
    pub const U1: u32 = 31;
    pub const F4E2M1FN: u32 = 32;
    pub const F8E8M0FNU: u32 = 33;
}

/// `XLA_FFI_Error_Code` values (abseil numbering).
pub mod error_code {
    #![expect(
        missing_docs,
        reason = "one constant per XLA_FFI_Error_Code member, named after it"
    )]
    pub const OK: u32 = 0;
    pub const CANCELLED: u32 = 1;
    pub const UNKNOWN: u32 = 2;
    pub const INVALID_ARGUMENT: u32 = 3;
    pub const DEADLINE_EXCEEDED: u32 = 4;
    pub const NOT_FOUND: u32 = 5;
    pub const ALREADY_EXISTS: u32 = 6;
    pub const PERMISSION_DENIED: u32 = 7;
    pub const RESOURCE_EXHAUSTED: u32 = 8;
    pub const FAILED_PRECONDITION: u32 = 9;
    pub const ABORTED: u32 = 10;
    pub const OUT_OF_RANGE: u32 = 11;
    pub const UNIMPLEMENTED: u32 = 12;
    pub const INTERNAL: u32 = 13;
    pub const UNAVAILABLE: u32 = 14;
    pub const DATA_LOSS: u32 = 15;
    pub const UNAUTHENTICATED: u32 = 16;
}
