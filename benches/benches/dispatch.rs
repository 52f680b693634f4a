//! Per-call cost of a custom call, by kind of handler, through the real XLA
//! CPU plugin.
//!
//! Each program chains `CALLS` custom calls on an f32[16]; the baseline is
//! the same program without them. Per-call cost = (t(chain) - t(baseline)) /
//! CALLS. The summary at the end measures all variants interleaved, in one
//! run, and prints the per-call figures side by side with their ratios.
//!
//! Run: `cargo bench -p cyxla-benches --bench dispatch`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use cyxla_benches::{Variant, chain_program, load_default_plugin};
use plugin_glue::client::{Buffer, Client, Executable};
use plugin_glue::frame::CallFrame;
use plugin_glue::{Handler, HandlerError, registry};

/// Custom calls per program.
const CALLS: usize = 64;

/// A Rust handler that does nothing: the dispatcher's own cost.
struct Empty;
impl Handler for Empty {
    fn execute(&self, _frame: &CallFrame<'_>) -> Result<(), HandlerError> {
        Ok(())
    }
}

struct Setup {
    variants: Vec<(Variant, Executable)>,
    input: Buffer,
}

fn setup() -> Setup {
    let plugin = load_default_plugin();
    registry::register(&plugin, "cyxla_bench_empty", Arc::new(Empty)).expect("register empty");
    cyxla_benches::register_test_native(&plugin, "cyxla_test_copy16");
    let client = Client::new(&plugin, Some(1)).expect("client");
    let variants = [
        Variant::new("baseline (no custom call)", None),
        Variant::new("empty Rust handler", Some("cyxla_bench_empty")),
        Variant::new("native C++ copy16 (--native)", Some("cyxla_test_copy16")),
    ]
    .into_iter()
    .map(|v| {
        let calls = if v.target.is_some() { CALLS } else { 0 };
        let program = chain_program(v.target.unwrap_or(""), calls);
        let exe = client.compile(program.as_bytes(), 1).expect("compile");
        (v, exe)
    })
    .collect();
    let bytes: Vec<u8> = (0..16u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let input = client
        .buffer_from_host(&bytes, plugin_glue::DType::F32, &[16], 0)
        .expect("input");
    Setup { variants, input }
}

fn execute(exe: &Executable, input: &Buffer) {
    let out = exe.execute(&[vec![input]]).expect("execute");
    black_box(out);
}

fn bench(c: &mut Criterion) {
    let s = setup();
    let mut group = c.benchmark_group("dispatch");
    for (v, exe) in &s.variants {
        group.bench_function(v.name, |b| b.iter(|| execute(exe, &s.input)));
    }
    group.finish();
    summary(&s);
}

/// Interleaved rounds, medians, per-call figures and ratios.
fn summary(s: &Setup) {
    const ROUNDS: usize = 31;
    const ITERS: u32 = 200;
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); s.variants.len()];
    for _ in 0..ROUNDS {
        for (i, (_, exe)) in s.variants.iter().enumerate() {
            let start = Instant::now();
            for _ in 0..ITERS {
                execute(exe, &s.input);
            }
            samples[i].push(start.elapsed() / ITERS);
        }
    }
    let medians: Vec<f64> = samples
        .iter_mut()
        .map(|v| {
            v.sort();
            v[v.len() / 2].as_secs_f64() * 1e9
        })
        .collect();
    let base = medians[0];
    println!(
        "\nper-call cost over {CALLS} chained custom calls (median of {ROUNDS} interleaved rounds):"
    );
    println!(
        "  {:<32} {:>12.0} ns per execution",
        s.variants[0].0.name, base
    );
    let per_call: Vec<f64> = medians.iter().map(|m| (m - base) / CALLS as f64).collect();
    for (i, (v, _)) in s.variants.iter().enumerate().skip(1) {
        println!("  {:<32} {:>12.1} ns per call", v.name, per_call[i]);
    }
    if per_call.len() > 2 && per_call[2] > 0.0 {
        println!(
            "  ratio empty Rust / native C++:   {:.2}x",
            per_call[1] / per_call[2]
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
