//! A guest's limits side file (x.limits.toml), parsed and applied
//! (cyxla_sandbox::fuzz::limits_file).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cyxla_sandbox::fuzz::limits_file(data));
