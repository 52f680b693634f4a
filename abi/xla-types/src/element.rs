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
/// [`DataType`], so that typed slices can be made over them.
///
/// # Safety
///
/// `size_of::<Self>() * 8` must equal `Self::DTYPE.bits()`, every bit
/// pattern of that size must be a valid `Self`, and `Self` must have no
/// padding and no interior mutability. (`bool` is therefore not an element:
/// PRED bytes other than 0 and 1 would be undefined behaviour; read PRED
/// buffers as bytes.)
pub unsafe trait Element: Copy + 'static {
    /// The data type of buffers holding `Self`.
    const DTYPE: DataType;
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

    fn check<T: Element>() {
        assert_eq!(
            core::mem::size_of::<T>() as u32 * 8,
            T::DTYPE.bits(),
            "{}",
            T::DTYPE
        );
    }

    #[test]
    fn element_sizes_match_dtypes() {
        check::<i8>();
        check::<i16>();
        check::<i32>();
        check::<i64>();
        check::<u8>();
        check::<u16>();
        check::<u32>();
        check::<u64>();
        check::<f32>();
        check::<f64>();
        check::<Complex<f32>>();
        check::<Complex<f64>>();
    }
}
