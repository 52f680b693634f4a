//! The dispatch benchmark's kernel, as a guest: target `copy16` copies 16
//! f32 from its operand to its result, exactly as the native C++ handler
//! `cyxla_test_copy16` (`tests/native/test_handlers.cc`) does, so the bench
//! (`benches/benches/dispatch.rs`) compares the same work sandboxed and
//! native. `copy16` is a `kernel!` (its buffers typed parameters);
//! `copy16_frame` does the same through a `CallFrame` handler (`target!`),
//! so that the bench measures both ways of writing a kernel.
//!
//! | target | operands | results |
//! |---|---|---|
//! | `copy16`, `copy16_frame` | `x: f32[...]` (16 elements) | `y: f32[...]` (16 elements) = `x` |
//!
//! Any other element count is `INVALID_ARGUMENT` ("expected 16 f32 elements
//! in and out, got N in and M out").
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use cyxla_guest_sdk::{Buffer, CallFrame, Error, Result, ResultBuffer, kernel, target};

kernel!("copy16", copy16, copy16_kernel);
target!("copy16_frame", copy16_frame, copy16_handler);

fn copy16_kernel(x: Buffer<'_, f32>, mut y: ResultBuffer<'_, f32>) -> Result<()> {
    if x.len() != 16 || y.len() != 16 {
        return Err(wrong_sizes(x.len(), y.len()));
    }
    y.copy_from_slice(&x);
    Ok(())
}

fn copy16_handler(frame: &CallFrame<'_>) -> Result<()> {
    frame.expect_arity(1, 1)?;
    copy16_kernel(frame.arg::<f32>(0)?, frame.ret::<f32>(0)?)
}

fn wrong_sizes(x: usize, y: usize) -> Error {
    Error::invalid_argument(alloc::format!(
        "expected 16 f32 elements in and out, got {x} in and {y} out"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cyxla_guest_sdk::DataType;
    use cyxla_guest_sdk::testing::FrameBuilder;

    #[test]
    fn copies_sixteen() {
        let x: [f32; 16] = core::array::from_fn(|i| i as f32 * 1.5 - 4.0);
        for (xd, yd) in [(&[16][..], &[16][..]), (&[4, 4][..], &[2, 8][..])] {
            let build = || {
                FrameBuilder::new()
                    .arg(xd, &x)
                    .ret(DataType::F32, yd)
                    .build()
            };
            let mut call = build();
            call.kernel(copy16_kernel).unwrap();
            assert_eq!(call.ret::<f32>(0), x);
            let mut call = build();
            call.call(copy16_handler).unwrap();
            assert_eq!(call.ret::<f32>(0), x);
        }
    }

    #[test]
    fn other_sizes_are_invalid() {
        let build = || {
            FrameBuilder::new()
                .arg(&[3], &[1.0f32, 2.0, 3.0])
                .ret(DataType::F32, &[3])
                .build()
        };
        let want = Err(Error::invalid_argument(
            "expected 16 f32 elements in and out, got 3 in and 3 out",
        ));
        assert_eq!(build().kernel(copy16_kernel), want);
        assert_eq!(build().call(copy16_handler), want);
    }
}
