//! Rust types whose values are the elements of XLA buffers: the
//! [`Element`] trait, which ties a Rust type to its [`DataType`], and
//! [`Complex`], the layout of XLA's `c64` and `c128`.

use crate::DataType;

/// A complex number with the memory layout of XLA's `c64` (`Complex<f32>`)
/// and `c128` (`Complex<f64>`): real part first.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Complex<T> {
    /// Real part.
    pub re: T,
    /// Imaginary part.
    pub im: T,
}

/// A Rust type whose values are the elements of buffers of one
/// [`DataType`], so that typed slices can be made over them: `i8` to `i64`,
/// `u8` to `u64`, `f32`, `f64`, [`Complex<f32>`] (C64), [`Complex<f64>`]
/// (C128) and `bool` (PRED).
///
/// Not every bit pattern is a `bool`, so a view of PRED bytes as `bool`
/// first checks them (reading) or makes them 0 or 1 (writing), as the
/// native side does; the guest SDK, whose views of guest memory check no
/// element, takes no `bool` ([`ANY_BIT_PATTERN`](Element::ANY_BIT_PATTERN)
/// is `false`) and reads PRED as `u8`.
///
/// # Safety
///
/// `size_of::<Self>() * 8` must equal `Self::DTYPE.bits()`, and `Self` must
/// have no padding and no interior mutability. Every bit pattern of that
/// size must be a valid `Self`, unless
/// [`ANY_BIT_PATTERN`](Element::ANY_BIT_PATTERN) is `false`: then `Self` is
/// one byte whose valid values are exactly 0 and 1, as `bool`.
pub unsafe trait Element: Copy + 'static {
    /// The data type of buffers holding `Self`.
    const DTYPE: DataType;
    /// Whether every bit pattern of `Self`'s size is a valid `Self`
    /// (`false` only for one-byte types whose valid values are 0 and 1).
    const ANY_BIT_PATTERN: bool = true;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        // SAFETY: a primitive of exactly DTYPE's width with no invalid bit patterns.
        unsafe impl Element for $t {
            const DTYPE: DataType = DataType::$d;
        }
    )*};
}

element!(i8 => S8, i16 => S16, i32 => S32, i64 => S64, u8 => U8, u16 => U16, u32 => U32, u64 => U64, f32 => F32, f64 => F64);

// SAFETY: one byte whose valid values are 0 and 1, as ANY_BIT_PATTERN says.
unsafe impl Element for bool {
    const DTYPE: DataType = DataType::Pred;
    const ANY_BIT_PATTERN: bool = false;
}

// SAFETY: repr(C) pair of f32 (8 bytes, no padding), any bit pattern valid.
unsafe impl Element for Complex<f32> {
    const DTYPE: DataType = DataType::C64;
}

// SAFETY: repr(C) pair of f64 (16 bytes, no padding), any bit pattern valid.
unsafe impl Element for Complex<f64> {
    const DTYPE: DataType = DataType::C128;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `T`'s width is its dtype's, and `any` says whether every bit
    /// pattern is a `T`.
    fn check<T: Element>(any: bool) {
        assert_eq!(T::ANY_BIT_PATTERN, any, "{}", T::DTYPE);
        assert_eq!(
            core::mem::size_of::<T>() as u32 * 8,
            T::DTYPE.bits(),
            "{}",
            T::DTYPE
        );
    }

    #[test]
    fn element_sizes_match_dtypes() {
        check::<bool>(false);
        check::<i8>(true);
        check::<i16>(true);
        check::<i32>(true);
        check::<i64>(true);
        check::<u8>(true);
        check::<u16>(true);
        check::<u32>(true);
        check::<u64>(true);
        check::<f32>(true);
        check::<f64>(true);
        check::<Complex<f32>>(true);
        check::<Complex<f64>>(true);
    }
}
