//! The dispatch benchmark's kernel, as a guest: target `copy16` copies 16
//! f32 from its operand to its result, exactly as the native C++ handler
//! `cyxla_test_copy16` (`tests/native/test_handlers.cc`) does, so the bench
//! (`benches/benches/dispatch.rs`) compares the same work sandboxed and
//! native.
//!
//! | target | operands | results |
//! |---|---|---|
//! | `copy16` | `x: f32[...]` (16 elements) | `y: f32[...]` (16 elements) = `x` |
//!
//! Any other element count is `INVALID_ARGUMENT` ("expected 16 f32 elements
//! in and out, got N in and M out").
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use cyxla_guest_sdk::{CallFrame, Error, Result, target};

target!("copy16", copy16, copy16_handler);

fn copy16_handler(frame: &CallFrame<'_>) -> Result<()> {
    frame.expect_arity(1, 1)?;
    let x = frame.arg::<f32>(0)?;
    let mut y = frame.ret::<f32>(0)?;
    if x.len() != 16 || y.len() != 16 {
        return Err(Error::invalid_argument(alloc::format!(
            "expected 16 f32 elements in and out, got {} in and {} out",
            x.len(),
            y.len()
        )));
    }
    y.copy_from_slice(&x);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cyxla_guest_sdk::DataType;
    use cyxla_guest_sdk::testing::FrameBuilder;

    #[test]
    fn copies_sixteen() {
        let x: [f32; 16] = core::array::from_fn(|i| i as f32 * 1.5 - 4.0);
        let mut call = FrameBuilder::new()
            .arg(&[16], &x)
            .ret(DataType::F32, &[16])
            .build();
        call.call(copy16_handler).unwrap();
        assert_eq!(call.ret::<f32>(0), x);
        let mut call = FrameBuilder::new()
            .arg(&[4, 4], &x)
            .ret(DataType::F32, &[2, 8])
            .build();
        call.call(copy16_handler).unwrap();
        assert_eq!(call.ret::<f32>(0), x);
    }

    #[test]
    fn other_sizes_are_invalid() {
        let mut call = FrameBuilder::new()
            .arg(&[3], &[1.0f32, 2.0, 3.0])
            .ret(DataType::F32, &[3])
            .build();
        assert_eq!(
            call.call(copy16_handler),
            Err(Error::invalid_argument(
                "expected 16 f32 elements in and out, got 3 in and 3 out"
            ))
        );
    }
}
