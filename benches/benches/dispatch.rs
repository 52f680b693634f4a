//! Per-call cost of a custom call, by kind of handler, through the real XLA
//! CPU plugin.
//!
//! Each program chains `CALLS` custom calls on an f32[16]; the baseline is
//! the same program without them. Per-call cost = (t(chain) - t(baseline)) /
//! CALLS. The summary at the end measures all variants interleaved, in one
//! run, and prints the per-call figures side by side with their ratios, and
//! the same 16-f32 copy kernel native (`--native`, C++) against sandboxed
//! (the bundled guest `copy16.wasm`, through [`cyxla_sandbox::Sandbox`]; its
//! `copy16` is a `kernel!`): "sandboxed − native" is the per-call cost of
//! the sandbox.
//!
//! A second interleaved run splits the sandboxed call into parts, each
//! measured on its own: XLA's custom call into a Rust handler, a bare
//! wasmtime call with poll checks, a sandboxed
//! call with no buffer work in the guest (the bundled `noop`, through
//! [`cyxla_sandbox::GuestHandler::call_host`], without XLA) and the same call
//! to copy16. What is left of the call through XLA is the cost of XLA's
//! frames over the host's own, and of the caches XLA's executor cools
//! between calls (a `call_host` loop keeps everything hot). It also times
//! the noop call with four attributes that stay the same from call to call,
//! as a call site's do: what attributes add to a call; and the noop call with
//! the metrics' sampled timing on (as under `CYXLA_METRICS`): what the
//! metrics add to a call. The same copy written as a `CallFrame` handler
//! (`copy16_frame`, `target!`) says what a kernel saves over one.
//!
//! Run: `cargo bench -p cyxla-benches --bench dispatch`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group};
use cyxla_benches::report::{self, Met};
use cyxla_benches::{Variant, chain_program, interleaved_medians, load_default_plugin, mode};
use cyxla_pjrt_client::{Buffer, Client, Executable};
use cyxla_sandbox::{
    AllowList, GuestHandler, HostAttr, HostBuffer, HostCall, Limits, Sandbox, Scalar,
};
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

/// A guest without the SDK, the floor of a guest's own cost: `frame_noop`
/// returns at once, `frame_copy16` copies 16 f32 from operand 0 to result 0
/// reading the data pointers at fixed offsets of the frame (wasm32
/// `XLA_FFI_CallFrame`: the args' and rets' pointer arrays at 44 and 68,
/// a buffer's data at 12; docs/abi.md), no stage or shape checked, four
/// 16-byte loads and stores.
const FRAME_GUEST: &str = concat!(
    "(module",
    cyxla_benches::guest_prelude_wat!(),
    r#"
  (func (export "frame_noop") (param $f i32) (result i32) (i32.const 0))
  (func (export "frame_copy16") (param $f i32) (result i32)
    (local $s i32) (local $d i32)
    (local.set $s (i32.load offset=12 (i32.load (i32.load offset=44 (local.get $f)))))
    (local.set $d (i32.load offset=12 (i32.load (i32.load offset=68 (local.get $f)))))
    (v128.store offset=0 (local.get $d) (v128.load offset=0 (local.get $s)))
    (v128.store offset=16 (local.get $d) (v128.load offset=16 (local.get $s)))
    (v128.store offset=32 (local.get $d) (v128.load offset=32 (local.get $s)))
    (v128.store offset=48 (local.get $d) (v128.load offset=48 (local.get $s)))
    (i32.const 0))
  (@custom "cyxla.targets" "cyxla-target v1 frame_noop frame_noop\0acyxla-target v1 frame_copy16 frame_copy16\0a"))"#
);

struct Setup {
    variants: Vec<(Variant, Executable)>,
    input: Buffer,
    /// The bundled `noop`, `copy16` (a `kernel!`) and `copy16_frame` (the
    /// same copy, a `CallFrame` handler) targets, called without XLA.
    noop: GuestHandler,
    copy16: GuestHandler,
    copy16_frame: GuestHandler,
    /// [`FRAME_GUEST`]'s two targets.
    frame_noop: GuestHandler,
    frame_copy16: GuestHandler,
    /// Keeps the guests (and their instance pools) of the sandboxed variant,
    /// and [`FRAME_GUEST`]'s folder and guest.
    _sandbox: Sandbox,
    _frame_guest: (tempfile::TempDir, Sandbox),
}

fn setup() -> Setup {
    let plugin = load_default_plugin();
    registry::register(&plugin, "cyxla_bench_empty", Arc::new(Empty)).expect("register empty");
    cyxla_benches::register_test_native(&plugin, "cyxla_test_copy16");
    let sandbox = Sandbox::new(
        &cyxla_benches::bundled_guests(),
        AllowList::targets(["copy16", "copy16_frame", "noop"]),
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
    let handler = |target: &str| {
        sandbox.handler(target).unwrap_or_else(|| {
            panic!("no bundled guest serves {target} (guests/rust): run scripts/setup.sh")
        })
    };
    let (noop, copy16, copy16_frame) =
        (handler("noop"), handler("copy16"), handler("copy16_frame"));
    let dir = tempfile::tempdir().expect("a temporary folder");
    let wasm = wat::parse_str(FRAME_GUEST).expect("the frame guest's WAT");
    std::fs::write(dir.path().join("frame.wasm"), wasm).expect("write the frame guest");
    let frame_sandbox = Sandbox::new(
        dir.path(),
        AllowList::targets(["frame_noop", "frame_copy16"]),
        Limits::default(),
    )
    .expect("load the frame guest");
    let frame_handler = |target: &str| {
        frame_sandbox
            .handler(target)
            .unwrap_or_else(|| panic!("the frame guest serves {target}"))
    };
    let (frame_noop, frame_copy16) = (frame_handler("frame_noop"), frame_handler("frame_copy16"));
    Setup {
        variants,
        input,
        noop,
        copy16,
        copy16_frame,
        frame_noop,
        frame_copy16,
        _sandbox: sandbox,
        _frame_guest: (dir, frame_sandbox),
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
    breakdown(&s);
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
            "  {:<32} {:>12.1} ns (goal: <= {GOAL_P1_NS} ns)",
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
            &format!("<=+{GOAL_P1_NS}ns"),
            &[
                ("sandboxed_minus_native_ns", extra),
                ("native_ns", native),
                ("guest_ns", guest),
            ],
            &format!("native {native:.0} ns, guest {guest:.0} ns: {extra:+.0} ns"),
        );
    }
}

/// A bare wasmtime call, for [`breakdown`]: a store of a module whose
/// function returns its argument, entered as cyxla enters a guest (typed,
/// after setting its deadline checks' poll page).
struct BareCall {
    store: wasmtime::Store<()>,
    func: wasmtime::TypedFunc<i32, i32>,
}

impl BareCall {
    fn new() -> BareCall {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        let engine = wasmtime::Engine::new(&config).expect("wasmtime engine");
        let module = wasmtime::Module::new(
            &engine,
            r#"(module (func (export "f") (param i32) (result i32) local.get 0))"#,
        )
        .expect("bare module");
        let mut store = wasmtime::Store::new(&engine, ());
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).expect("bare instance");
        let func = instance
            .get_typed_func::<i32, i32>(&mut store, "f")
            .expect("bare export");
        BareCall { store, func }
    }

    fn call(&mut self, x: i32) -> i32 {
        // The deadline checks' poll page (the engine's epoch never moves:
        // the store's deadline field holds the address as given). cyxla's
        // host sets its own page per call the same way.
        static PAGE: u8 = 0;
        self.store
            .set_epoch_deadline(std::ptr::from_ref(&PAGE) as u64);
        self.func.call(&mut self.store, x).expect("bare call")
    }
}

/// Where the sandboxed copy16 call's time goes: each part measured on its
/// own, interleaved in one run, per call. Parts are differences of
/// medians, so they add up only roughly.
fn breakdown(s: &Setup) {
    let rounds: usize = mode::pick(31, 5);
    let iters: u32 = mode::pick(200, 50);
    let mut bare = BareCall::new();
    let x: Vec<f32> = (0..16).map(|i| i as f32).collect();
    let call = HostCall::new()
        .arg(HostBuffer::f32(&[16], &x))
        .ret(HostBuffer::zeros(plugin_glue::DType::F32, &[16]));
    // Four attributes, as a kernel's call site may have (the same on every
    // call, as XLA gives them): what the frame pays for them.
    let with_attrs = HostCall::new()
        .arg(HostBuffer::f32(&[16], &x))
        .ret(HostBuffer::zeros(plugin_glue::DType::F32, &[16]))
        .attr("axis", HostAttr::Scalar(Scalar::S64(1)))
        .attr("eps", HostAttr::Scalar(Scalar::F32(1e-6)))
        .attr("mode", HostAttr::String(b"fast".to_vec()))
        .attr(
            "shape",
            HostAttr::Array(
                plugin_glue::DType::S64,
                2,
                [4i64, 4].iter().flat_map(|d| d.to_le_bytes()).collect(),
            ),
        );
    s.noop.call_host(&with_attrs).expect("noop with attributes");
    for (name, guest) in [("copy16", &s.copy16), ("copy16_frame", &s.copy16_frame)] {
        let call = HostCall::new()
            .arg(HostBuffer::f32(&[16], &x))
            .ret(HostBuffer::zeros(plugin_glue::DType::F32, &[16]));
        guest.call_host(&call).expect("copy16 through call_host");
        assert_eq!(
            call.result(0).bytes(),
            cyxla_benches::f32_bytes(&x),
            "{name}: wrong result"
        );
    }
    let frame_call = HostCall::new()
        .arg(HostBuffer::f32(&[16], &x))
        .ret(HostBuffer::zeros(plugin_glue::DType::F32, &[16]));
    s.frame_copy16
        .call_host(&frame_call)
        .expect("the frame guest's copy16");
    assert_eq!(
        frame_call.result(0).bytes(),
        cyxla_benches::f32_bytes(&x),
        "the frame guest's copy16: wrong result"
    );
    let xla = |name: &str| {
        &s.variants
            .iter()
            .find(|(v, _)| v.name == name)
            .expect("a variant of the chain")
            .1
    };
    let (base, empty, guest) = (xla(BASELINE), xla(EMPTY), xla(GUEST_COPY16));
    // Every variant does CALLS units per run, as an execution of a chain.
    let medians = interleaved_medians(11, rounds, iters, |i| match i {
        0 => execute(base, &s.input),
        1 => execute(empty, &s.input),
        2 => execute(guest, &s.input),
        3 => (0..CALLS as i32).for_each(|k| {
            black_box(bare.call(black_box(k)));
        }),
        4 => (0..CALLS).for_each(|_| s.noop.call_host(&call).expect("noop")),
        5 => (0..CALLS).for_each(|_| s.noop.call_host(&with_attrs).expect("noop")),
        6 => (0..CALLS).for_each(|_| s.copy16.call_host(&call).expect("copy16")),
        8 => (0..CALLS).for_each(|_| s.frame_noop.call_host(&call).expect("frame noop")),
        9 => (0..CALLS).for_each(|_| {
            s.frame_copy16.call_host(&frame_call).expect("frame copy16");
        }),
        10 => (0..CALLS).for_each(|_| s.copy16_frame.call_host(&call).expect("copy16_frame")),
        _ => {
            // As a process with a metrics folder (CYXLA_METRICS) runs.
            cyxla_sandbox::stats::set_sampled_timing(true);
            (0..CALLS).for_each(|_| s.noop.call_host(&call).expect("noop"));
            cyxla_sandbox::stats::set_sampled_timing(false);
        }
    });
    let per_call: Vec<f64> = medians
        .iter()
        .map(|m| m.as_secs_f64() * 1e9 / CALLS as f64)
        .collect();
    let through_xla = |v: f64| v - per_call[0];
    let (empty, guest) = (through_xla(per_call[1]), through_xla(per_call[2]));
    let (bare, noop, copy16) = (per_call[3], per_call[4], per_call[6]);
    let noop_attrs = per_call[5];
    println!(
        "\nwhere the sandboxed copy16 call goes, per call (medians of {rounds} interleaved rounds):"
    );
    let row = |what: &str, ns: f64| println!("  {what:<56} {ns:>8.1} ns");
    row("sandboxed guest copy16 through XLA", guest);
    row(
        "  XLA's custom call into a handler (empty Rust handler)",
        empty,
    );
    row(
        "  the rest through XLA (frames, caches between calls)",
        guest - empty - copy16,
    );
    row(
        "  the sandboxed call without XLA (call_host copy16)",
        copy16,
    );
    row(
        "    the guest SDK's two buffers (copy16 - noop)",
        copy16 - noop,
    );
    row("    a call of the noop guest (call_host noop)", noop);
    row(
        "      wasmtime's entry and exit (bare call, poll checks)",
        bare,
    );
    row(
        "      the rest (host frame, copies, pool, deadline)",
        noop - bare,
    );
    let (frame_noop, frame_copy16) = (per_call[8], per_call[9]);
    println!("and a guest without the SDK (WAT reading the frame at fixed offsets):");
    row("a call of its noop", frame_noop);
    row("a call of its copy of 16 f32", frame_copy16);
    row(
        "  the guest SDK's own cost in copy16 (copy16 - that copy)",
        copy16 - frame_copy16,
    );
    row(
        "  of which in any call (noop - its noop)",
        noop - frame_noop,
    );
    let copy16_frame = per_call[10];
    println!("and the same copy written with a CallFrame (copy16_frame, target!):");
    row("a call of copy16_frame (call_host)", copy16_frame);
    row(
        "  what the CallFrame costs over the kernel (- copy16)",
        copy16_frame - copy16,
    );
    println!("and on a call with attributes:");
    row(
        "four attributes, the same each call (with - without)",
        noop_attrs - noop,
    );
    let metrics = per_call[7];
    println!("and with the metrics' sampled timing on (CYXLA_METRICS):");
    row("a call of the noop guest, sampled timing", metrics);
    row("  what the metrics add (sampled - without)", metrics - noop);
    println!(
        "  ratio sampled / without: {:.3} (goal: under 10 ns added)",
        metrics / noop
    );
}

/// Goal P1: the sandbox adds at most this much per call (ns), on any x86-64
/// machine (issue 47; +200 ns before, issue 34).
const GOAL_P1_NS: f64 = 100.0;

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    report::peak_rss("dispatch");
}
