//! An in-place update, as a cyxla guest: target `inplace_set0`.
//!
//! Operand `x` and result `y` of the same shape and dtype, f32 or f64, with
//! `y` aliased with `x` (`input_output_aliases={0: 0}`, or a donated
//! argument): writes the attribute `value: f64` (rounded to f32 for f32
//! arrays) over the first element of every row of `y` (along the last axis;
//! the one element of a rank-0 array) and nothing else, so the rest keeps
//! `x`'s values. `x` is never viewed: its values are in `y` (the SDK refuses
//! to view an operand aliased with a taken result). Called without aliasing,
//! the other elements of `y` keep whatever the result buffer held (zeros in
//! the sandbox, unspecified natively: XLA does not zero results).
//! [`CallFrame::aliased_arg`] would tell the two cases apart; this kernel
//! does not, so that a sandbox that failed to alias shows. Other dtypes fail
//! with `UNIMPLEMENTED`:
//! ``unsupported dtype s32 for y; inplace_set0 supports f32 and f64``.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use cyxla_guest_sdk::{AnyResultBuffer, CallFrame, DataType, Element, Error, Result, target};

target!("inplace_set0", inplace_set0, inplace_set0_handler);

fn inplace_set0_handler(frame: &CallFrame<'_>) -> Result<()> {
    frame.expect_arity(1, 1)?;
    let value: f64 = frame.attr("value")?;
    let y = frame.any_ret(0)?;
    match y.dtype() {
        DataType::F32 => set_row_starts(y, value as f32),
        DataType::F64 => set_row_starts(y, value),
        other => Err(Error::unimplemented(alloc::format!(
            "unsupported dtype {other} for y; inplace_set0 supports f32 and f64"
        ))),
    }
}

/// Writes `value` over the first element of each row of `y`.
fn set_row_starts<T: Element>(y: AnyResultBuffer<'_>, value: T) -> Result<()> {
    let row = y.last_dim().unwrap_or(1);
    let mut y = y.typed::<T>()?;
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
    use cyxla_guest_sdk::testing::{FrameBuilder, RESULT_FILL};

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
    fn without_aliasing_only_the_first_elements_are_written() {
        let mut call = FrameBuilder::new()
            .arg(&[2, 2], &[1.0f64, 2.0, 3.0, 4.0])
            .ret(DataType::F64, &[2, 2])
            .attr("value", 9.0f64)
            .build();
        call.call(inplace_set0_handler).unwrap();
        let fill = f64::from_le_bytes([RESULT_FILL; 8]);
        let got = call.ret::<f64>(0);
        assert_eq!(got[0], 9.0);
        assert_eq!(got[2], 9.0);
        assert_eq!(got[1].to_bits(), fill.to_bits());
        assert_eq!(got[3].to_bits(), fill.to_bits());
    }

    #[test]
    fn other_dtypes_are_unimplemented() {
        let mut call = FrameBuilder::new()
            .arg(&[2], &[1i32, 2])
            .ret_alias(0)
            .attr("value", 2.0f64)
            .build();
        assert_eq!(
            call.call(inplace_set0_handler),
            Err(Error::unimplemented(
                "unsupported dtype s32 for y; inplace_set0 supports f32 and f64"
            ))
        );
    }
}
