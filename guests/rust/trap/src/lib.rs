//! Guests that fail on purpose, for the host's tests: targets `trap`, `fail`,
//! `panic` and `spin`.
//!
//! | target | does |
//! |---|---|
//! | `trap` | executes `unreachable` (a wasm trap; no operands or results needed) |
//! | `fail` | returns an error: code from the optional attribute `code` (an integer scalar, default 9 = `FAILED_PRECONDITION`), message from the optional string attribute `message` (default ``the `fail` target always fails``) |
//! | `panic` | panics with ``deliberate panic: <message>`` (attribute `message`, default `no message`); the SDK stores the message (export `cyxla_last_panic`) and traps |
//! | `spin` | loops forever (until its deadline stops it) |
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use cyxla_guest_sdk::{CallFrame, Error, ErrorCode, Result, Scalar, target};

target!("trap", trap, trap_handler);
target!("fail", fail, fail_handler);
target!("panic", panic_now, panic_handler);
target!("spin", spin, spin_handler);

fn trap_handler(_frame: &CallFrame<'_>) -> Result<()> {
    #[cfg(target_arch = "wasm32")]
    core::arch::wasm32::unreachable();
    #[cfg(not(target_arch = "wasm32"))]
    Err(Error::internal("`trap` only traps in a wasm32 guest"))
}

#[cfg_attr(
    target_arch = "wasm32",
    allow(clippy::empty_loop, reason = "the deadline stops it: that is the test")
)]
fn spin_handler(_frame: &CallFrame<'_>) -> Result<()> {
    #[cfg(target_arch = "wasm32")]
    loop {}
    #[cfg(not(target_arch = "wasm32"))]
    Err(Error::internal("`spin` only loops in a wasm32 guest"))
}

fn fail_handler(frame: &CallFrame<'_>) -> Result<()> {
    let code = match frame.attrs().get_opt::<Scalar>("code")? {
        None => ErrorCode::FailedPrecondition,
        Some(s) => s
            .to_i64()
            .and_then(|c| u32::try_from(c).ok())
            .and_then(ErrorCode::from_raw)
            .ok_or_else(|| {
                Error::invalid_argument(alloc::format!(
                    "attribute `code` must be an integer error code 1..=16, got a {} scalar",
                    s.dtype()
                ))
            })?,
    };
    let message: Option<&str> = frame.attrs().get_opt("message")?;
    Err(Error::new(
        code,
        message.unwrap_or("the `fail` target always fails"),
    ))
}

fn panic_handler(frame: &CallFrame<'_>) -> Result<()> {
    let message: Option<&str> = frame.attrs().get_opt("message")?;
    panic!("deliberate panic: {}", message.unwrap_or("no message"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use cyxla_guest_sdk::testing::FrameBuilder;

    #[test]
    fn fail_uses_code_and_message() {
        let e = FrameBuilder::new().build().call(fail_handler).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                ErrorCode::FailedPrecondition,
                "the `fail` target always fails"
            )
        );
        let e = FrameBuilder::new()
            .attr("code", 8i64)
            .attr("message", "out of quota")
            .build()
            .call(fail_handler)
            .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::ResourceExhausted, "out of quota")
        );
        let e = FrameBuilder::new()
            .attr("code", 99i32)
            .build()
            .call(fail_handler)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
    }

    #[test]
    #[should_panic(expected = "deliberate panic: boom")]
    fn panic_panics() {
        let _ = FrameBuilder::new()
            .attr("message", "boom")
            .build()
            .call(panic_handler);
    }
}
