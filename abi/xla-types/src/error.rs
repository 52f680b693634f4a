//! [`ErrorCode`]: the code of an XLA error, numbered as `XLA_FFI_Error_Code`.

c_enum! {
    /// `XLA_FFI_Error_Code` values (abseil numbering).
    pub mod error_code: "XLA_FFI_Error_Code";
    raw_only OK = 0;

    /// `XLA_FFI_Error_Code` without `OK`: the code of an XLA error (abseil
    /// numbering, the same numbers PJRT reports to the client).
    pub enum ErrorCode;
    /// Every code, in numeric order.
    const ALL;
    /// The abseil name, e.g. `INVALID_ARGUMENT`.
    fn name;
    {
        Cancelled = CANCELLED = 1;
        Unknown = UNKNOWN = 2;
        /// Bad operands or attributes.
        InvalidArgument = INVALID_ARGUMENT = 3;
        DeadlineExceeded = DEADLINE_EXCEEDED = 4;
        NotFound = NOT_FOUND = 5;
        AlreadyExists = ALREADY_EXISTS = 6;
        PermissionDenied = PERMISSION_DENIED = 7;
        ResourceExhausted = RESOURCE_EXHAUSTED = 8;
        FailedPrecondition = FAILED_PRECONDITION = 9;
        Aborted = ABORTED = 10;
        OutOfRange = OUT_OF_RANGE = 11;
        Unimplemented = UNIMPLEMENTED = 12;
        Internal = INTERNAL = 13;
        Unavailable = UNAVAILABLE = 14;
        DataLoss = DATA_LOSS = 15;
        Unauthenticated = UNAUTHENTICATED = 16;
    }
}

impl ErrorCode {
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
