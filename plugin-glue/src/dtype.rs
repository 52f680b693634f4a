//! Element types: XLA's `PrimitiveType` numbering (used by `XLA_FFI_DataType`)
//! and its mapping to and from `PJRT_Buffer_Type`, which numbers them
//! differently (see the ABI reference, appendix A).

use std::fmt;

/// An XLA element type, numbered as `XLA_FFI_DataType` / `xla::PrimitiveType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(u32)]
#[expect(
    missing_docs,
    reason = "each variant is the xla::PrimitiveType of the same name"
)]
pub enum DType {
    Pred = 1,
    S8 = 2,
    S16 = 3,
    S32 = 4,
    S64 = 5,
    U8 = 6,
    U16 = 7,
    U32 = 8,
    U64 = 9,
    F16 = 10,
    F32 = 11,
    F64 = 12,
    C64 = 15,
    Bf16 = 16,
    Token = 17,
    C128 = 18,
    F8E5M2 = 19,
    F8E4M3FN = 20,
    S4 = 21,
    U4 = 22,
    F8E4M3B11FNUZ = 23,
    F8E5M2FNUZ = 24,
    F8E4M3FNUZ = 25,
    S2 = 26,
    U2 = 27,
    F8E4M3 = 28,
    F8E3M4 = 29,
    S1 = 30,
    U1 = 31,
    F4E2M1FN = 32,
    F8E8M0FNU = 33,
}

/// Every type, for iteration in tests and tables.
pub const ALL: [DType; 31] = [
    DType::Pred,
    DType::S8,
    DType::S16,
    DType::S32,
    DType::S64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::F32,
    DType::F64,
    DType::C64,
    DType::Bf16,
    DType::Token,
    DType::C128,
    DType::F8E5M2,
    DType::F8E4M3FN,
    DType::S4,
    DType::U4,
    DType::F8E4M3B11FNUZ,
    DType::F8E5M2FNUZ,
    DType::F8E4M3FNUZ,
    DType::S2,
    DType::U2,
    DType::F8E4M3,
    DType::F8E3M4,
    DType::S1,
    DType::U1,
    DType::F4E2M1FN,
    DType::F8E8M0FNU,
];

/// `(DType, PJRT_Buffer_Type)` pairs, from the ABI reference's appendix A.
const PJRT_PAIRS: [(DType, u32); 31] = [
    (DType::Pred, 1),
    (DType::S8, 2),
    (DType::S16, 3),
    (DType::S32, 4),
    (DType::S64, 5),
    (DType::U8, 6),
    (DType::U16, 7),
    (DType::U32, 8),
    (DType::U64, 9),
    (DType::F16, 10),
    (DType::F32, 11),
    (DType::F64, 12),
    (DType::Bf16, 13),
    (DType::C64, 14),
    (DType::C128, 15),
    (DType::F8E5M2, 16),
    (DType::F8E4M3FN, 17),
    (DType::F8E4M3B11FNUZ, 18),
    (DType::F8E5M2FNUZ, 19),
    (DType::F8E4M3FNUZ, 20),
    (DType::S4, 21),
    (DType::U4, 22),
    (DType::Token, 23),
    (DType::S2, 24),
    (DType::U2, 25),
    (DType::F8E4M3, 26),
    (DType::F8E3M4, 27),
    (DType::F8E8M0FNU, 28),
    (DType::F4E2M1FN, 29),
    (DType::S1, 30),
    (DType::U1, 31),
];

impl DType {
    /// The type with this `XLA_FFI_DataType` value, if there is one.
    pub fn from_xla(value: u32) -> Option<DType> {
        ALL.iter().copied().find(|t| *t as u32 == value)
    }

    /// The `XLA_FFI_DataType` value.
    pub fn to_xla(self) -> u32 {
        self as u32
    }

    /// The type with this `PJRT_Buffer_Type` value, if there is one.
    pub fn from_pjrt(value: u32) -> Option<DType> {
        PJRT_PAIRS
            .iter()
            .find(|(_, p)| *p == value)
            .map(|(t, _)| *t)
    }

    /// The `PJRT_Buffer_Type` value.
    pub fn to_pjrt(self) -> u32 {
        PJRT_PAIRS
            .iter()
            .find(|(t, _)| *t == self)
            .map(|(_, p)| *p)
            .expect("every DType has a PJRT_Buffer_Type")
    }

    /// Size of one element in bits (1 for PRED is stored as 8: one byte each).
    pub fn bits(self) -> u32 {
        use DType::*;
        match self {
            Pred | S8 | U8 => 8,
            S16 | U16 | F16 | Bf16 => 16,
            S32 | U32 | F32 => 32,
            S64 | U64 | F64 | C64 => 64,
            C128 => 128,
            F8E5M2 | F8E4M3FN | F8E4M3B11FNUZ | F8E5M2FNUZ | F8E4M3FNUZ | F8E4M3 | F8E3M4
            | F8E8M0FNU => 8,
            S4 | U4 | F4E2M1FN => 4,
            S2 | U2 => 2,
            S1 | U1 => 1,
            Token => 0,
        }
    }

    /// Bytes taken by `elements` elements, with sub-byte types packed
    /// (`ceil(n * bits / 8)`). `None` on overflow.
    pub fn byte_size(self, elements: u64) -> Option<u64> {
        let bits = elements.checked_mul(u64::from(self.bits()))?;
        Some(bits.div_ceil(8))
    }

    /// Lower-case name as numpy and XLA print it (`f32`, `bool`, `c64`, ...).
    pub fn name(self) -> &'static str {
        use DType::*;
        match self {
            Pred => "pred",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            F16 => "f16",
            F32 => "f32",
            F64 => "f64",
            C64 => "c64",
            Bf16 => "bf16",
            Token => "token",
            C128 => "c128",
            F8E5M2 => "f8e5m2",
            F8E4M3FN => "f8e4m3fn",
            S4 => "s4",
            U4 => "u4",
            F8E4M3B11FNUZ => "f8e4m3b11fnuz",
            F8E5M2FNUZ => "f8e5m2fnuz",
            F8E4M3FNUZ => "f8e4m3fnuz",
            S2 => "s2",
            U2 => "u2",
            F8E4M3 => "f8e4m3",
            F8E3M4 => "f8e3m4",
            S1 => "s1",
            U1 => "u1",
            F4E2M1FN => "f4e2m1fn",
            F8E8M0FNU => "f8e8m0fnu",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xla_and_pjrt_numbering_round_trip() {
        for t in ALL {
            assert_eq!(DType::from_xla(t.to_xla()), Some(t));
            assert_eq!(DType::from_pjrt(t.to_pjrt()), Some(t));
        }
        // The numbers that differ between the two enums.
        assert_eq!(DType::Bf16.to_xla(), 16);
        assert_eq!(DType::Bf16.to_pjrt(), 13);
        assert_eq!(DType::C64.to_pjrt(), 14);
        assert_eq!(DType::Token.to_pjrt(), 23);
        assert_eq!(DType::from_xla(13), None);
    }

    #[test]
    fn packed_sizes() {
        assert_eq!(DType::S4.byte_size(5), Some(3));
        assert_eq!(DType::S2.byte_size(5), Some(2));
        assert_eq!(DType::Pred.byte_size(3), Some(3));
        assert_eq!(DType::C128.byte_size(2), Some(32));
        assert_eq!(DType::F32.byte_size(u64::MAX), None);
    }
}
