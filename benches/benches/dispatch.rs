//! Per-call cost of a custom call, by kind of handler, through the real XLA
//! CPU plugin.
//!
//! Each program chains `CALLS` custom calls on an f32[16]; the baseline is
//! the same program without them. Per-call cost = (t(chain) - t(baseline)) /
//! CALLS. The summary at the end measures all variants interleaved, in one
//! run, and prints the per-call figures side by side with their ratios, and
//! the same 16-f32 copy kernel native (`--native`, C++) against sandboxed
//! (the bundled guest `copy16.wasm`, through [`cyxla_host::Sandbox`]):
//! "sandboxed − native" is the per-call cost of the sandbox.
//!
//! Run: `cargo bench -p cyxla-benches --bench dispatch`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group};
use cyxla_benches::report::{self, Met};
use cyxla_benches::{Variant, chain_program, interleaved_medians, load_default_plugin, mode};
use cyxla_host::{AllowList, Limits, Sandbox};
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

/// Names of the variants the summary compares.
const BASELINE: &str = "baseline (no custom call)";
const EMPTY: &str = "empty Rust handler";
const NATIVE_COPY16: &str = "native C++ copy16 (--native)";
const GUEST_COPY16: &str = "sandboxed guest copy16";

struct Setup {
    variants: Vec<(Variant, Executable)>,
    input: Buffer,
    /// Keeps the guests (and their instance pools) of the sandboxed variant.
    _sandbox: Sandbox,
}

fn setup() -> Setup {
    let plugin = load_default_plugin();
    registry::register(&plugin, "cyxla_bench_empty", Arc::new(Empty)).expect("register empty");
    cyxla_benches::register_test_native(&plugin, "cyxla_test_copy16");
    let sandbox = Sandbox::new(
        &cyxla_benches::bundled_guests(),
        AllowList::targets(["copy16"]),
        Limits::default(),
    )
    .expect("load the bundled guests");
    let registered = sandbox.register_allowed(&plugin).expect("register copy16");
    assert!(
        registered.iter().any(|r| r.target == "copy16"),
        "no bundled guest serves copy16 (guests/rust/copy16): run scripts/setup.sh"
    );
    let client = Client::new(&plugin, Some(1)).expect("client");
    let variants: Vec<(Variant, Executable)> = [
        Variant::new(BASELINE, None),
        Variant::new(EMPTY, Some("cyxla_bench_empty")),
        Variant::new(NATIVE_COPY16, Some("cyxla_test_copy16")),
        Variant::new(GUEST_COPY16, Some("copy16")),
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
    check_copy16(&variants, &input);
    Setup {
        variants,
        input,
        _sandbox: sandbox,
    }
}

/// Both copy16 chains return `-x`, like the baseline: the kernels ran.
fn check_copy16(variants: &[(Variant, Executable)], input: &Buffer) {
    let expected: Vec<u8> = (0..16u32)
        .flat_map(|i| (-(i as f32)).to_le_bytes())
        .collect();
    let checked = [BASELINE, NATIVE_COPY16, GUEST_COPY16];
    for (v, exe) in variants.iter().filter(|(v, _)| checked.contains(&v.name)) {
        let out = exe.execute(&[vec![input]]).expect("execute");
        let got = out[0][0].to_host().expect("result");
        assert_eq!(got, expected, "{}: wrong result", v.name);
    }
}

fn execute(exe: &Executable, input: &Buffer) {
    let out = exe.execute(&[vec![input]]).expect("execute");
    black_box(out);
}

fn bench(c: &mut Criterion) {
    let s = setup();
    if mode::sampling() {
        let mut group = c.benchmark_group("dispatch");
        for (v, exe) in &s.variants {
            group.bench_function(v.name, |b| b.iter(|| execute(exe, &s.input)));
        }
        group.finish();
    }
    summary(&s);
}

/// Interleaved rounds, medians, per-call figures and ratios.
fn summary(s: &Setup) {
    let rounds: usize = mode::pick(31, 5);
    let iters: u32 = mode::pick(200, 50);
    let medians: Vec<f64> = interleaved_medians(s.variants.len(), rounds, iters, |i| {
        execute(&s.variants[i].1, &s.input)
    })
    .iter()
    .map(|m| m.as_secs_f64() * 1e9)
    .collect();
    let base = medians[0];
    println!(
        "\nper-call cost over {CALLS} chained custom calls (median of {rounds} interleaved rounds):"
    );
    println!(
        "  {:<32} {:>12.0} ns per execution",
        s.variants[0].0.name, base
    );
    let per_call: Vec<f64> = medians.iter().map(|m| (m - base) / CALLS as f64).collect();
    for (i, (v, _)) in s.variants.iter().enumerate().skip(1) {
        println!("  {:<32} {:>12.1} ns per call", v.name, per_call[i]);
    }
    let cost = |name: &str| {
        s.variants
            .iter()
            .position(|(v, _)| v.name == name)
            .map(|i| per_call[i])
    };
    if let (Some(empty), Some(native)) = (cost(EMPTY), cost(NATIVE_COPY16))
        && native > 0.0
    {
        println!("  ratio empty Rust / native C++:   {:.2}x", empty / native);
    }
    if let (Some(native), Some(guest)) = (cost(NATIVE_COPY16), cost(GUEST_COPY16)) {
        println!("\ncopy16 (16 f32 in, 16 f32 out), per call:");
        println!("  {:<32} {:>12.1} ns", "native C++ (--native)", native);
        println!(
            "  {:<32} {:>12.1} ns",
            "sandboxed guest (copy16.wasm)", guest
        );
        println!(
            "  {:<32} {:>12.1} ns (goal: <= 250 ns)",
            "sandboxed - native",
            guest - native
        );
        if native > 0.0 {
            println!(
                "  {:<32} {:>12.2}x",
                "ratio sandboxed / native",
                guest / native
            );
        }
        let extra = guest - native;
        report::result(
            "P1",
            Met::from(extra <= GOAL_P1_NS),
            "<=+250ns",
            &[
                ("sandboxed_minus_native_ns", extra),
                ("native_ns", native),
                ("guest_ns", guest),
            ],
            &format!("native {native:.0} ns, guest {guest:.0} ns: {extra:+.0} ns"),
        );
    }
}

/// Goal P1: the sandbox adds at most this much per call (ns).
const GOAL_P1_NS: f64 = 250.0;

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    report::peak_rss("dispatch");
}
