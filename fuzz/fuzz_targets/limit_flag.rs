//! A --limit NAME=VALUE flag, parsed and applied
//! (cyxla_sandbox::fuzz::limit_flag).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cyxla_sandbox::fuzz::limit_flag(data));
