//! A dtype-dispatching kernel, as a cyxla guest: target `scale_any`.
//!
//! `y = x * factor`, with attribute `factor: f64`, operand `x` and result
//! `y` of the same shape and dtype, f32 or f64 (any rank, size zero
//! included). For f32 the product is computed in f64 and rounded once.
//! Other dtypes fail with `UNIMPLEMENTED`:
//! ``unsupported dtype s32 for x; scale_any supports f32 and f64``.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use cyxla_guest_sdk::{CallFrame, DataType, Error, Result, target};

target!("scale_any", scale_any, scale_any_handler);

fn scale_any_handler(frame: &CallFrame<'_>) -> Result<()> {
    frame.expect_arity(1, 1)?;
    let factor: f64 = frame.attr("factor")?;
    let x = frame.any_arg(0)?;
    let y = frame.any_ret(0)?;
    if x.dtype() != y.dtype() || x.dims() != y.dims() {
        return Err(Error::invalid_argument(alloc::format!(
            "y is {} {:?}, expected x's {} {:?}",
            y.dtype(),
            y.dims(),
            x.dtype(),
            x.dims()
        )));
    }
    match x.dtype() {
        DataType::F32 => {
            let (x, mut y) = (x.typed::<f32>()?, y.typed::<f32>()?);
            for (y, x) in y.iter_mut().zip(x.iter()) {
                *y = (f64::from(*x) * factor) as f32;
            }
        }
        DataType::F64 => {
            let (x, mut y) = (x.typed::<f64>()?, y.typed::<f64>()?);
            for (y, x) in y.iter_mut().zip(x.iter()) {
                *y = x * factor;
            }
        }
        other => {
            return Err(Error::unimplemented(alloc::format!(
                "unsupported dtype {other} for x; scale_any supports f32 and f64"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cyxla_guest_sdk::testing::FrameBuilder;

    #[test]
    fn scales_f32_and_f64() {
        let mut call = FrameBuilder::new()
            .arg(&[2, 2], &[1.0f32, -2.0, 3.5, 0.0])
            .ret(DataType::F32, &[2, 2])
            .attr("factor", 2.5f64)
            .build();
        call.call(scale_any_handler).unwrap();
        assert_eq!(call.ret::<f32>(0), [2.5, -5.0, 8.75, 0.0]);
        let mut call = FrameBuilder::new()
            .arg(&[], &[4.0f64])
            .ret(DataType::F64, &[])
            .attr("factor", -0.5f64)
            .build();
        call.call(scale_any_handler).unwrap();
        assert_eq!(call.ret::<f64>(0), [-2.0]);
        let mut call = FrameBuilder::new()
            .arg::<f64>(&[0, 3], &[])
            .ret(DataType::F64, &[0, 3])
            .attr("factor", 1.0f64)
            .build();
        call.call(scale_any_handler).unwrap();
    }

    #[test]
    fn other_dtypes_are_unimplemented() {
        let mut call = FrameBuilder::new()
            .arg(&[2], &[1i32, 2])
            .ret(DataType::S32, &[2])
            .attr("factor", 2.0f64)
            .build();
        assert_eq!(
            call.call(scale_any_handler),
            Err(Error::unimplemented(
                "unsupported dtype s32 for x; scale_any supports f32 and f64"
            ))
        );
        let mut call = FrameBuilder::new()
            .arg(&[2], &[1.0f32, 2.0])
            .ret(DataType::F32, &[2])
            .build();
        let e = call.call(scale_any_handler).unwrap_err();
        assert_eq!(e.message, "missing attribute `factor` (a f64 scalar)");
    }
}
