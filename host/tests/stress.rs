//! Concurrency stress (issue 6): 4 devices × many sandboxed calls through the
//! real XLA CPU plugin (P115), more than 10⁵ calls in all, every result
//! checked, resident memory flat.

mod common;

use std::fmt::Write as _;
use std::sync::Arc;

use common::{full_guest, test_limits};
use cyxla_pjrt_client::Client;
use cyxla_sandbox::{AllowList, Sandbox};
use plugin_glue::DType;

const DEVICES: usize = 4;
/// Custom calls chained in one program.
const CHAIN: usize = 64;
const EXECUTIONS: usize = 400;

/// `f32[16] -> f32[16]`: `CHAIN` calls of `target` (each doubles).
fn chain(target: &str) -> String {
    let mut body = String::new();
    let mut last = "%arg0".to_owned();
    for i in 0..CHAIN {
        let _ = writeln!(
            body,
            "    %c{i} = stablehlo.custom_call @{target}({last}) {{api_version = 4 : i32, backend_config = {{}}}} : (tensor<16xf32>) -> tensor<16xf32>"
        );
        last = format!("%c{i}");
    }
    format!(
        "module @stress {{\n  func.func public @main(%arg0: tensor<16xf32>) -> tensor<16xf32> {{\n{body}    return {last} : tensor<16xf32>\n  }}\n}}\n"
    )
}

/// Resident set size in bytes, from /proc/self/statm.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("read /proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("statm's resident field");
    pages * 4096
}

#[test]
fn four_devices_run_a_hundred_thousand_sandboxed_calls() {
    let plugin = cyxla_tests::Plugin::P115.load();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.wasm"), full_guest("stress_")).unwrap();
    let sandbox = Sandbox::new(
        dir.path(),
        AllowList::targets(["stress_double"]),
        test_limits(),
    )
    .unwrap();
    sandbox.register_allowed(&plugin).unwrap();
    let handler = sandbox.handler("stress_double").unwrap();
    let client = Client::new(&plugin, Some(DEVICES)).expect("a 4-device client");
    assert_eq!(client.addressable_device_count().unwrap(), DEVICES);
    let exe = Arc::new(
        client
            .compile(chain("stress_double").as_bytes(), DEVICES)
            .expect("compile the chain"),
    );
    let scale = 2f32.powi(CHAIN as i32);

    let run = |round: usize| {
        let inputs: Vec<Vec<f32>> = (0..DEVICES)
            .map(|d| {
                (0..16)
                    .map(|i| (round * 64 + d * 16 + i) as f32 - 100.0)
                    .collect()
            })
            .collect();
        let buffers: Vec<_> = inputs
            .iter()
            .enumerate()
            .map(|(d, x)| {
                let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
                client
                    .buffer_from_host(&bytes, DType::F32, &[16], d)
                    .unwrap()
            })
            .collect();
        let args: Vec<Vec<_>> = buffers.iter().map(|b| vec![b]).collect();
        let outputs = exe.execute(&args).expect("execute");
        assert_eq!(outputs.len(), DEVICES);
        for (d, out) in outputs.iter().enumerate() {
            let got: Vec<f32> = out[0]
                .to_host()
                .unwrap()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            let want: Vec<f32> = inputs[d].iter().map(|v| v * scale).collect();
            assert_eq!(got, want, "round {round}, device {d}");
        }
    };

    for round in 0..50 {
        run(round);
    }
    let before = rss();
    for round in 50..EXECUTIONS {
        run(round);
    }
    let after = rss();
    let calls = EXECUTIONS * DEVICES * CHAIN;
    assert!(calls >= 100_000, "{calls}");
    let growth = after.saturating_sub(before);
    eprintln!(
        "{calls} calls; RSS {} MiB after warm-up, {} MiB at the end; {} instances",
        before >> 20,
        after >> 20,
        handler.live_instances()
    );
    assert!(
        growth < 16 << 20,
        "resident memory grew by {} KiB over {} calls",
        growth >> 10,
        (EXECUTIONS - 50) * DEVICES * CHAIN
    );
    assert!((1..=3).contains(&handler.live_instances()));
}
