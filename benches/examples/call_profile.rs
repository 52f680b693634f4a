//! One kind of custom call, repeated, for an instruction profile
//! (`scripts/callgrind.sh` runs it under valgrind's callgrind).
//!
//! `call_profile VARIANT CALLS` sets everything up, makes one warm-up call,
//! then makes CALLS more inside [`measured`], the only function callgrind
//! collects in: its inclusive count divided by the calls it made (printed
//! last, `calls N`) is the instructions one call costs, and the functions
//! under it say where they go.
//!
//! Variants:
//! - `xla-guest`: a program of `CHAIN` custom calls to the bundled copy16
//!   guest, through the real XLA CPU plugin (one "call" = one custom call;
//!   XLA's own cost per execution is spread over the chain);
//! - `xla-native`: the same program on the native C++ copy16 (`--native`);
//! - `xla-baseline`: the program without custom calls (XLA's own cost of
//!   one execution, spread the same way);
//! - `host-copy16`, `host-noop`: the sandboxed call without XLA
//!   ([`cyxla_sandbox::GuestHandler::call_host`]).
//!
//! Run: `cargo run --release -p cyxla-benches --example call_profile -- host-noop 1000`.

use std::hint::black_box;

use cyxla_benches::{chain_program, load_default_plugin};
use cyxla_pjrt_client::{Buffer, Client, Executable};
use cyxla_sandbox::{AllowList, HostBuffer, HostCall, Limits, Sandbox};

/// Custom calls per XLA program.
const CHAIN: usize = 64;

const VARIANTS: &str = "xla-guest, xla-native, xla-baseline, host-copy16 or host-noop";

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = || -> ! {
        eprintln!("usage: call_profile VARIANT CALLS   (VARIANT: {VARIANTS})");
        std::process::exit(2)
    };
    let variant = args.next().unwrap_or_else(|| usage());
    let calls: usize = match args.next().map(|n| n.parse()) {
        Some(Ok(n)) if n > 0 => n,
        _ => usage(),
    };
    let plugin = load_default_plugin();
    let sandbox = Sandbox::new(
        &cyxla_benches::bundled_guests(),
        AllowList::targets(["copy16", "noop"]),
        Limits::default(),
    )
    .expect("load the bundled guests");
    let x: Vec<f32> = (0..16).map(|i| i as f32).collect();
    match variant.as_str() {
        "host-copy16" | "host-noop" => {
            let handler = sandbox
                .handler(&variant["host-".len()..])
                .expect("no bundled guest serves copy16/noop (guests/rust): run scripts/setup.sh");
            let call = HostCall::new()
                .arg(HostBuffer::f32(&[16], &x))
                .ret(HostBuffer::zeros(plugin_glue::DType::F32, &[16]));
            handler.call_host(&call).expect("warm-up call");
            measured(calls, || handler.call_host(&call).expect("call"));
            println!("calls {calls}");
        }
        "xla-guest" | "xla-native" | "xla-baseline" => {
            sandbox.register_allowed(&plugin).expect("register copy16");
            cyxla_benches::register_test_native(&plugin, "cyxla_test_copy16");
            let target = match variant.as_str() {
                "xla-guest" => Some("copy16"),
                "xla-native" => Some("cyxla_test_copy16"),
                _ => None,
            };
            let client = Client::new(&plugin, Some(1)).expect("client");
            let program = chain_program(target.unwrap_or(""), target.map_or(0, |_| CHAIN));
            let exe = client.compile(program.as_bytes(), 1).expect("compile");
            let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
            let input = client
                .buffer_from_host(&bytes, plugin_glue::DType::F32, &[16], 0)
                .expect("input");
            let expected: Vec<u8> = x.iter().flat_map(|v| (-v).to_le_bytes()).collect();
            let got = execute(&exe, &input);
            assert_eq!(got, expected, "{variant}: wrong result");
            // One execution makes CHAIN custom calls.
            let executions = calls.div_ceil(CHAIN);
            measured(executions, || {
                black_box(execute(&exe, &input));
            });
            println!("calls {}", executions * CHAIN);
        }
        _ => usage(),
    }
}

/// The calls callgrind counts (`--toggle-collect` names this function).
#[inline(never)]
fn measured(calls: usize, mut call: impl FnMut()) {
    for _ in 0..calls {
        call();
    }
}

fn execute(exe: &Executable, input: &Buffer) -> Vec<u8> {
    let out = exe.execute(&[vec![input]]).expect("execute");
    out[0][0].to_host().expect("result")
}
