//! [`ErrorCode`]: the code of an XLA error, numbered as `XLA_FFI_Error_Code`.

use core::fmt;

use crate::error_code;

/// `XLA_FFI_Error_Code` without `OK`: the code of an [`Error`] (abseil
/// numbering, the same numbers PJRT reports to the client).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `CANCELLED` (1).
    Cancelled = error_code::CANCELLED,
    /// `UNKNOWN` (2).
    Unknown = error_code::UNKNOWN,
    /// `INVALID_ARGUMENT` (3): bad operands or attributes.
    InvalidArgument = error_code::INVALID_ARGUMENT,
    /// `DEADLINE_EXCEEDED` (4).
    DeadlineExceeded = error_code::DEADLINE_EXCEEDED,
    /// `NOT_FOUND` (5).
    NotFound = error_code::NOT_FOUND,
    /// `ALREADY_EXISTS` (6).
    AlreadyExists = error_code::ALREADY_EXISTS,
    /// `PERMISSION_DENIED` (7).
    PermissionDenied = error_code::PERMISSION_DENIED,
    /// `RESOURCE_EXHAUSTED` (8).
    ResourceExhausted = error_code::RESOURCE_EXHAUSTED,
    /// `FAILED_PRECONDITION` (9).
    FailedPrecondition = error_code::FAILED_PRECONDITION,
    /// `ABORTED` (10).
    Aborted = error_code::ABORTED,
    /// `OUT_OF_RANGE` (11).
    OutOfRange = error_code::OUT_OF_RANGE,
    /// `UNIMPLEMENTED` (12).
    Unimplemented = error_code::UNIMPLEMENTED,
    /// `INTERNAL` (13).
    Internal = error_code::INTERNAL,
    /// `UNAVAILABLE` (14).
    Unavailable = error_code::UNAVAILABLE,
    /// `DATA_LOSS` (15).
    DataLoss = error_code::DATA_LOSS,
    /// `UNAUTHENTICATED` (16).
    Unauthenticated = error_code::UNAUTHENTICATED,
}

impl ErrorCode {
    /// The code for an `XLA_FFI_Error_Code` value; `None` for `OK` (0) and
    /// values out of range.
    pub fn from_raw(raw: u32) -> Option<ErrorCode> {
        use ErrorCode::*;
        const ALL: [ErrorCode; 16] = [
            Cancelled,
            Unknown,
            InvalidArgument,
            DeadlineExceeded,
            NotFound,
            AlreadyExists,
            PermissionDenied,
            ResourceExhausted,
            FailedPrecondition,
            Aborted,
            OutOfRange,
            Unimplemented,
            Internal,
            Unavailable,
            DataLoss,
            Unauthenticated,
        ];
        ALL.into_iter().find(|c| c.to_raw() == raw)
    }

    /// The `XLA_FFI_Error_Code` value.
    pub fn to_raw(self) -> u32 {
        self as u32
    }

    /// The code of a C `XLA_FFI_Error_Code` or `PJRT_Error_Code` (an
    /// `int`); numbers outside 1..=16 map to `UNKNOWN`, which is what XLA
    /// itself does with them.
    pub fn from_c(code: i32) -> ErrorCode {
        u32::try_from(code)
            .ok()
            .and_then(ErrorCode::from_raw)
            .unwrap_or(ErrorCode::Unknown)
    }

    /// The value as a C `XLA_FFI_Error_Code` (an `int`).
    pub fn to_c(self) -> i32 {
        self as i32
    }

    /// The abseil name, e.g. `INVALID_ARGUMENT`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::Unknown => "UNKNOWN",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::AlreadyExists => "ALREADY_EXISTS",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::ResourceExhausted => "RESOURCE_EXHAUSTED",
            ErrorCode::FailedPrecondition => "FAILED_PRECONDITION",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::OutOfRange => "OUT_OF_RANGE",
            ErrorCode::Unimplemented => "UNIMPLEMENTED",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::DataLoss => "DATA_LOSS",
            ErrorCode::Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for raw in 1..=16 {
            let code = ErrorCode::from_raw(raw).unwrap();
            assert_eq!(code.to_raw(), raw);
        }
        assert_eq!(ErrorCode::from_raw(0), None);
        assert_eq!(ErrorCode::from_raw(17), None);
        assert_eq!(ErrorCode::InvalidArgument.to_raw(), 3);
        assert_eq!(ErrorCode::Internal.name(), "INTERNAL");
    }

    #[test]
    fn c_codes_map_unknown_numbers_to_unknown() {
        for raw in 1..=16 {
            assert_eq!(ErrorCode::from_c(raw).to_c(), raw);
        }
        assert_eq!(ErrorCode::from_c(0), ErrorCode::Unknown);
        assert_eq!(ErrorCode::from_c(-3), ErrorCode::Unknown);
        assert_eq!(ErrorCode::from_c(17), ErrorCode::Unknown);
    }
}
