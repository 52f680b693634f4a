//! [`DataType`]: the element type of a buffer or attribute, numbered as
//! `XLA_FFI_DataType`.

c_enum! {
    /// `XLA_FFI_DataType` values (they mirror `xla::PrimitiveType`, not
    /// `PJRT_Buffer_Type`).
    pub mod data_type: "XLA_FFI_DataType";

    /// `XLA_FFI_DataType`: the element type of a buffer, array attribute or
    /// scalar attribute. Values mirror `xla::PrimitiveType` (not
    /// `PJRT_Buffer_Type`).
    pub enum DataType;
    /// Every data type, in numeric order.
    pub const ALL;
    /// The lower-case name JAX and XLA print, e.g. `f32`, `pred`, `bf16`.
    fn name;
    {
        Invalid = INVALID = 0, "invalid";
        Pred = PRED = 1, "pred";
        S8 = S8 = 2, "s8";
        S16 = S16 = 3, "s16";
        S32 = S32 = 4, "s32";
        S64 = S64 = 5, "s64";
        U8 = U8 = 6, "u8";
        U16 = U16 = 7, "u16";
        U32 = U32 = 8, "u32";
        U64 = U64 = 9, "u64";
        F16 = F16 = 10, "f16";
        F32 = F32 = 11, "f32";
        F64 = F64 = 12, "f64";
        C64 = C64 = 15, "c64";
        Bf16 = BF16 = 16, "bf16";
        Token = TOKEN = 17, "token";
        C128 = C128 = 18, "c128";
        F8E5M2 = F8E5M2 = 19, "f8e5m2";
        F8E4M3FN = F8E4M3FN = 20, "f8e4m3fn";
        S4 = S4 = 21, "s4";
        U4 = U4 = 22, "u4";
        F8E4M3B11FNUZ = F8E4M3B11FNUZ = 23, "f8e4m3b11fnuz";
        F8E5M2FNUZ = F8E5M2FNUZ = 24, "f8e5m2fnuz";
        F8E4M3FNUZ = F8E4M3FNUZ = 25, "f8e4m3fnuz";
        S2 = S2 = 26, "s2";
        U2 = U2 = 27, "u2";
        F8E4M3 = F8E4M3 = 28, "f8e4m3";
        F8E3M4 = F8E3M4 = 29, "f8e3m4";
        S1 = S1 = 30, "s1";
        U1 = U1 = 31, "u1";
        F4E2M1FN = F4E2M1FN = 32, "f4e2m1fn";
        F8E8M0FNU = F8E8M0FNU = 33, "f8e8m0fnu";
    }
}

impl DataType {
    /// The element type of an XLA buffer or attribute with this
    /// `XLA_FFI_DataType` value: as [`from_raw`](Self::from_raw), but `None`
    /// for `INVALID` too.
    pub fn from_xla(raw: u32) -> Option<DataType> {
        DataType::from_raw(raw).filter(|&d| d != DataType::Invalid)
    }

    /// The `XLA_FFI_DataType` value (the same as [`to_raw`](Self::to_raw)).
    pub fn to_xla(self) -> u32 {
        self.to_raw()
    }

    /// The type with this `PJRT_Buffer_Type` value, if there is one (`None`
    /// for `PJRT_Buffer_Type_INVALID`, 0).
    pub fn from_pjrt(value: u32) -> Option<DataType> {
        PJRT_PAIRS
            .iter()
            .find(|(_, p)| *p == value)
            .map(|(t, _)| *t)
    }

    /// The `PJRT_Buffer_Type` value; 0 (`PJRT_Buffer_Type_INVALID`) for
    /// `Invalid`.
    pub fn to_pjrt(self) -> u32 {
        PJRT_PAIRS
            .iter()
            .find(|(t, _)| *t == self)
            .map_or(0, |(_, p)| *p)
    }

    /// Bits per element (PRED: 8; TOKEN and INVALID: 0).
    pub fn bits(self) -> u32 {
        use DataType::*;
        match self {
            Invalid | Token => 0,
            S1 | U1 => 1,
            S2 | U2 => 2,
            S4 | U4 | F4E2M1FN => 4,
            Pred | S8 | U8 | F8E5M2 | F8E4M3FN | F8E4M3B11FNUZ | F8E5M2FNUZ | F8E4M3FNUZ
            | F8E4M3 | F8E3M4 | F8E8M0FNU => 8,
            S16 | U16 | F16 | Bf16 => 16,
            S32 | U32 | F32 => 32,
            S64 | U64 | F64 | C64 => 64,
            C128 => 128,
        }
    }

    /// Bytes taken by `elements` elements: `ceil(elements * bits / 8)`
    /// (sub-byte types are packed). `None` on overflow.
    pub fn byte_size(self, elements: u64) -> Option<u64> {
        elements
            .checked_mul(u64::from(self.bits()))
            .map(|b| b.div_ceil(8))
    }

    /// [`byte_size`](Self::byte_size) for a count in memory: `None` if the
    /// bytes overflow `u64` or `usize`.
    #[inline]
    pub fn byte_len(self, elements: usize) -> Option<usize> {
        self.byte_size(elements as u64)
            .and_then(|b| usize::try_from(b).ok())
    }
}

/// `(DataType, PJRT_Buffer_Type)` pairs (docs/abi.md, "Data types"): PJRT
/// numbers the types differently from `XLA_FFI_DataType`.
const PJRT_PAIRS: [(DataType, u32); 31] = [
    (DataType::Pred, 1),
    (DataType::S8, 2),
    (DataType::S16, 3),
    (DataType::S32, 4),
    (DataType::S64, 5),
    (DataType::U8, 6),
    (DataType::U16, 7),
    (DataType::U32, 8),
    (DataType::U64, 9),
    (DataType::F16, 10),
    (DataType::F32, 11),
    (DataType::F64, 12),
    (DataType::Bf16, 13),
    (DataType::C64, 14),
    (DataType::C128, 15),
    (DataType::F8E5M2, 16),
    (DataType::F8E4M3FN, 17),
    (DataType::F8E4M3B11FNUZ, 18),
    (DataType::F8E5M2FNUZ, 19),
    (DataType::F8E4M3FNUZ, 20),
    (DataType::S4, 21),
    (DataType::U4, 22),
    (DataType::Token, 23),
    (DataType::S2, 24),
    (DataType::U2, 25),
    (DataType::F8E4M3, 26),
    (DataType::F8E3M4, 27),
    (DataType::F8E8M0FNU, 28),
    (DataType::F4E2M1FN, 29),
    (DataType::S1, 30),
    (DataType::U1, 31),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_round_trip_and_sizes() {
        for d in DataType::ALL {
            assert_eq!(DataType::from_raw(d.to_raw()), Some(d));
        }
        assert_eq!(DataType::from_raw(13), None);
        assert_eq!(DataType::from_raw(14), None);
        assert_eq!(DataType::from_raw(34), None);
        assert_eq!(DataType::F32.to_raw(), 11);
        assert_eq!(DataType::Bf16.to_raw(), 16);
        assert_eq!(DataType::C128.to_raw(), 18);
        assert_eq!(DataType::S4.byte_size(5), Some(3));
        assert_eq!(DataType::Pred.byte_size(3), Some(3));
        assert_eq!(DataType::C64.byte_size(2), Some(16));
        assert_eq!(DataType::Token.byte_size(1), Some(0));
        assert_eq!(DataType::F64.byte_size(u64::MAX), None);
    }

    #[test]
    fn xla_and_pjrt_numbering_round_trip() {
        for t in DataType::ALL {
            if t == DataType::Invalid {
                continue;
            }
            assert_eq!(DataType::from_xla(t.to_xla()), Some(t));
            assert_eq!(DataType::from_pjrt(t.to_pjrt()), Some(t));
        }
        // The numbers that differ between the two enums.
        assert_eq!(DataType::Bf16.to_xla(), 16);
        assert_eq!(DataType::Bf16.to_pjrt(), 13);
        assert_eq!(DataType::C64.to_pjrt(), 14);
        assert_eq!(DataType::Token.to_pjrt(), 23);
        assert_eq!(DataType::from_xla(13), None);
        // INVALID is a raw value but no element type.
        assert_eq!(DataType::from_raw(0), Some(DataType::Invalid));
        assert_eq!(DataType::from_xla(0), None);
        assert_eq!(DataType::from_pjrt(0), None);
        assert_eq!(DataType::Invalid.to_pjrt(), 0);
    }
}
