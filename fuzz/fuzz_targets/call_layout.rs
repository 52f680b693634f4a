//! A native call (operands, results, nested attributes) laid out as a wasm32
//! frame, decoded back and compared (cyxla_sandbox::fuzz::call_layout).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cyxla_sandbox::fuzz::call_layout(data));
