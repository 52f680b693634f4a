//! The smallest guests, for benchmarks and host tests:
//!
//! | target | does |
//! |---|---|
//! | `noop` | accepts any operands, results and attributes and does nothing (results are left as they are): the cost of a sandboxed call itself |
//! | `frame_info` | writes `[device_ordinal, run_id]` (from the host imports) into its one result, `s64[2]` |
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use cyxla_guest_sdk::{CallFrame, Error, Result, target};

target!("noop", noop, |_frame| Ok(()));
target!("frame_info", frame_info, frame_info_handler);

fn frame_info_handler(frame: &CallFrame<'_>) -> Result<()> {
    frame.expect_arity(0, 1)?;
    let mut out = frame.ret::<i64>(0)?;
    if out.dims() != [2] {
        return Err(Error::invalid_argument(alloc::format!(
            "result must be s64[2], got s64{:?}",
            out.dims()
        )));
    }
    out[0] = i64::from(frame.device_ordinal()?);
    out[1] = frame.run_id()?;
    Ok(())
}
