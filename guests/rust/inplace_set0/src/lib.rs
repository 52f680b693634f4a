//! An in-place update, as a cyxla guest: target `inplace_set0`.
//!
//! `y = x` with the first element of every row (along the last axis; the one
//! element of a rank-0 array) set to the attribute `value: f64` (rounded to
//! f32 for f32 arrays). Operand `x` and result `y` have the same shape and
//! dtype, f32 or f64. Meant to be called with `y` aliased with `x`
//! (`input_output_aliases={0: 0}`, or a donated argument): then only the
//! first element of each row is written and the rest keeps `x`'s values,
//! read through `y`. Without aliasing, `x` is copied into `y` first. Other
//! dtypes fail with `UNIMPLEMENTED`:
//! ``unsupported dtype s32 for y; inplace_set0 supports f32 and f64``.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use cyxla_guest_sdk::{
    AnyBuffer, AnyResultBuffer, CallFrame, DataType, Element, Error, Result, target,
};

target!("inplace_set0", inplace_set0, inplace_set0_handler);

fn inplace_set0_handler(frame: &CallFrame<'_>) -> Result<()> {
    frame.expect_arity(1, 1)?;
    let value: f64 = frame.attr("value")?;
    // An aliased result holds x's values; x itself can then not be viewed
    // (its values are in y), so ask before taking y.
    let in_place = frame.aliased_arg(0)? == Some(0);
    let y = frame.any_ret(0)?;
    let x = if in_place {
        None
    } else {
        let x = frame.any_arg(0)?;
        if x.dtype() != y.dtype() || x.dims() != y.dims() {
            return Err(Error::invalid_argument(alloc::format!(
                "y is {} {:?}, expected x's {} {:?}",
                y.dtype(),
                y.dims(),
                x.dtype(),
                x.dims()
            )));
        }
        Some(x)
    };
    match y.dtype() {
        DataType::F32 => set_row_starts(x, y, value as f32),
        DataType::F64 => set_row_starts(x, y, value),
        other => Err(Error::unimplemented(alloc::format!(
            "unsupported dtype {other} for y; inplace_set0 supports f32 and f64"
        ))),
    }
}

/// Copies `x` into `y` (unless `y` already holds it) and writes `value`
/// over the first element of each row of `y`.
fn set_row_starts<T: Element>(
    x: Option<AnyBuffer<'_>>,
    y: AnyResultBuffer<'_>,
    value: T,
) -> Result<()> {
    let row = y.last_dim().unwrap_or(1);
    let mut y = y.typed::<T>()?;
    if let Some(x) = x {
        y.copy_from_slice(&x.typed::<T>()?);
    }
    if row > 0 {
        for first in y.iter_mut().step_by(row) {
            *first = value;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cyxla_guest_sdk::ErrorCode;
    use cyxla_guest_sdk::testing::FrameBuilder;

    #[test]
    fn aliased_updates_only_the_first_element_of_each_row() {
        let mut call = FrameBuilder::new()
            .arg(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
            .ret_alias(0)
            .attr("value", 42.0f64)
            .build();
        call.call(inplace_set0_handler).unwrap();
        assert_eq!(call.ret::<f32>(0), [42.0, 2.0, 3.0, 42.0, 5.0, 6.0]);
        let mut call = FrameBuilder::new()
            .arg(&[], &[4.0f64])
            .ret_alias(0)
            .attr("value", -0.5f64)
            .build();
        call.call(inplace_set0_handler).unwrap();
        assert_eq!(call.ret::<f64>(0), [-0.5]);
        let mut call = FrameBuilder::new()
            .arg::<f64>(&[3, 0], &[])
            .ret_alias(0)
            .attr("value", 1.0f64)
            .build();
        call.call(inplace_set0_handler).unwrap();
    }

    #[test]
    fn without_aliasing_x_is_copied_first() {
        let mut call = FrameBuilder::new()
            .arg(&[4], &[1.0f64, 2.0, 3.0, 4.0])
            .ret(DataType::F64, &[4])
            .attr("value", 9.0f64)
            .build();
        call.call(inplace_set0_handler).unwrap();
        assert_eq!(call.ret::<f64>(0), [9.0, 2.0, 3.0, 4.0]);
        let mut call = FrameBuilder::new()
            .arg(&[2], &[1.0f32, 2.0])
            .ret(DataType::F32, &[3])
            .attr("value", 9.0f64)
            .build();
        let e = call.call(inplace_set0_handler).unwrap_err();
        assert_eq!(e.message, "y is f32 [3], expected x's f32 [2]");
    }

    #[test]
    fn other_dtypes_are_unimplemented() {
        let mut call = FrameBuilder::new()
            .arg(&[2], &[1i32, 2])
            .ret_alias(0)
            .attr("value", 2.0f64)
            .build();
        let e = call.call(inplace_set0_handler).unwrap_err();
        assert_eq!(e.code, ErrorCode::Unimplemented);
        assert_eq!(
            e.message,
            "unsupported dtype s32 for y; inplace_set0 supports f32 and f64"
        );
    }
}
