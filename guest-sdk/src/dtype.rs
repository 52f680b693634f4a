//! Element types: [`DataType`] (XLA numbering) and the [`Element`] trait that
//! ties a Rust type to one, both the contract's (`cyxla_xla_types`).

pub use cyxla_xla_types::DataType;
pub use cyxla_xla_types::element::{Complex, Element};

/// Stops the build of a guest that views guest memory as elements of a type
/// not every bit pattern is valid for (`bool`, see
/// [`Element::ANY_BIT_PATTERN`]): the SDK's views check no element, so it
/// reads PRED buffers and attributes as `u8`. Every view of memory as `T`
/// calls it; the assertion is evaluated when that view is compiled for `T`.
///
/// ```compile_fail
/// use cyxla_guest_sdk::{CallFrame, Result};
///
/// pub fn first(frame: &CallFrame<'_>) -> Result<bool> {
///     Ok(frame.arg::<bool>(0)?[0])
/// }
/// # fn main() {
/// #     let _built: fn(&CallFrame<'_>) -> Result<bool> = first;
/// # }
/// ```
///
/// The same handler on `u8` builds:
///
/// ```no_run
/// use cyxla_guest_sdk::{CallFrame, Result};
///
/// pub fn first(frame: &CallFrame<'_>) -> Result<bool> {
///     Ok(frame.arg::<u8>(0)?[0] != 0)
/// }
/// # fn main() {
/// #     let _built: fn(&CallFrame<'_>) -> Result<bool> = first;
/// # }
/// ```
#[inline(always)]
pub(crate) fn any_bit_pattern<T: Element>() {
    const {
        assert!(
            T::ANY_BIT_PATTERN,
            "the guest SDK views no bool: read PRED buffers and attributes as u8"
        )
    }
}
