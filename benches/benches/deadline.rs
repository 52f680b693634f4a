//! What deadlines cost guest code (`Limits::interrupt`):
//!
//! - `unchecked`: no deadline at all (the reference; never for real guests),
//! - `poll`: poll pages (a check in every function entry and loop header
//!   that loads a byte from a page the host protects at the deadline), the
//!   deadline mechanism.
//!
//! Kernels, each a whole sandboxed call with host-owned buffers (copy in,
//! run, copy out): the bundled `noop` guest (the cost of arming a deadline
//! per call), the bundled `rms_norm` guest on f32[256, 4096] and on
//! f32[8192, 32] (short rows: more loop overhead), and a tight scalar loop
//! (`spin_sum`: Σ i·i over 10⁷ iterations, a loop-carried dependency, WAT).
//! Then native copies of `spin_sum`'s loop in the shapes checks can give
//! it (`cyxla_benches::loop_shapes`), how far past its deadline `loop {}`
//! is stopped, and what
//! protection against data remanence costs (scrubbed reuse versus a fresh
//! instance per call).
//!
//! The summary measures every variant interleaved, in one run, and prints
//! medians and the ratio to `unchecked`.
//!
//! Run: `cargo bench -p cyxla-benches --bench deadline`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use cyxla_benches::report::{self, Met};
use cyxla_benches::{interleaved_medians, loop_shapes, mode};
use cyxla_sandbox::limits::Interrupt;
use cyxla_sandbox::{
    AllowList, GuestHandler, HostAttr, HostBuffer, HostCall, Limits, Sandbox, Scalar,
};
use plugin_glue::DType;

/// A guest serving `spin_sum` (Σ i·i for i < dims[0] of operand 0, into an
/// s64 result) and `spin` (`loop {}`), implementing guest ABI v1 by hand.
const SPIN_GUEST: &str = concat!(
    "(module",
    cyxla_benches::guest_prelude_wat!(),
    r#"
  (func (export "spin_sum") (param $f i32) (result i32)
    (local $i i64) (local $n i64) (local $acc i64)
    ;; n = args[0].dims[0]
    (local.set $n (i64.load (i32.load offset=24 (i32.load (i32.load offset=44 (local.get $f))))))
    (block $done (loop $next
      (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
      (local.set $acc (i64.add (local.get $acc) (i64.mul (local.get $i) (local.get $i))))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br $next)))
    ;; rets[0].data = acc
    (i64.store (i32.load offset=12 (i32.load (i32.load offset=68 (local.get $f)))) (local.get $acc))
    (i32.const 0))
  (func (export "spin") (param i32) (result i32) (loop $l (br $l)) (i32.const 0))
  (@custom "cyxla.targets" "cyxla-target v1 spin_sum spin_sum\0acyxla-target v1 spin spin\0a"))"#
);

const SPIN_N: i64 = 10_000_000;

struct Variant {
    name: &'static str,
    _dir: tempfile::TempDir,
    rms_norm: GuestHandler,
    noop: GuestHandler,
    spin_sum: GuestHandler,
    spin: GuestHandler,
}

fn bundled_guests() -> std::path::PathBuf {
    let dir = cyxla_host::process::default_guests_dir();
    assert!(
        dir.join("rms_norm.wasm").is_file(),
        "{} has no rms_norm.wasm: build the bundled guests with scripts/setup.sh (guests/build.sh)",
        dir.display()
    );
    dir
}

fn variant(name: &'static str, interrupt: Interrupt) -> Variant {
    let mut limits = Limits::default();
    limits.interrupt = interrupt;
    // Generous for the kernels (a loaded machine can stall a call), short
    // for `spin` below.
    limits.call_timeout = Duration::from_secs(2);
    let bundled = Sandbox::new(
        &bundled_guests(),
        AllowList::targets(["rms_norm", "noop"]),
        limits.clone(),
    )
    .expect("load the bundled guests");
    let dir = tempfile::tempdir().expect("temp dir");
    let wasm = wat::parse_str(SPIN_GUEST).expect("spin guest WAT");
    std::fs::write(dir.path().join("spin.wasm"), wasm).expect("write spin.wasm");
    limits.call_timeout = Duration::from_millis(100);
    let spin = Sandbox::new(dir.path(), AllowList::all(), limits).expect("load spin.wasm");
    assert_eq!(
        spin.guests().engine().interrupt(),
        interrupt,
        "{name}: this machine does not support the mechanism"
    );
    Variant {
        name,
        rms_norm: bundled.handler("rms_norm").expect("rms_norm is served"),
        noop: bundled.handler("noop").expect("noop is served"),
        spin_sum: spin.handler("spin_sum").expect("spin_sum is served"),
        spin: spin.handler("spin").expect("spin is served"),
        _dir: dir,
    }
}

fn rms_norm_call(rows: i64, n: i64) -> HostCall {
    let x: Vec<f32> = (0..rows * n)
        .map(|i| ((i % 13) as f32 - 6.0) * 0.37)
        .collect();
    HostCall::new()
        .arg(HostBuffer::f32(&[rows, n], &x))
        .ret(HostBuffer::zeros(DType::F32, &[rows, n]))
        .attr("eps", HostAttr::Scalar(Scalar::F32(1e-5)))
}

fn spin_sum_call() -> HostCall {
    HostCall::new()
        .arg(HostBuffer::new(
            DType::U8,
            &[SPIN_N],
            vec![0; SPIN_N as usize],
        ))
        .ret(HostBuffer::zeros(DType::S64, &[]))
}

struct Kernel {
    name: &'static str,
    call: HostCall,
    run: fn(&Variant, &HostCall),
}

fn kernels() -> Vec<Kernel> {
    vec![
        Kernel {
            name: "noop f32[16] (per call)",
            call: HostCall::new()
                .arg(HostBuffer::zeros(DType::F32, &[16]))
                .ret(HostBuffer::zeros(DType::F32, &[16])),
            run: |v, c| v.noop.call_host(c).expect("noop"),
        },
        Kernel {
            name: "rms_norm f32[256,4096]",
            call: rms_norm_call(256, 4096),
            run: |v, c| v.rms_norm.call_host(c).expect("rms_norm"),
        },
        Kernel {
            name: "rms_norm f32[8192,32]",
            call: rms_norm_call(8192, 32),
            run: |v, c| v.rms_norm.call_host(c).expect("rms_norm"),
        },
        Kernel {
            name: "spin_sum 1e7 (scalar loop)",
            call: spin_sum_call(),
            run: |v, c| v.spin_sum.call_host(c).expect("spin_sum"),
        },
    ]
}

fn check(variants: &[Variant], kernels: &[Kernel]) {
    for v in variants {
        for k in kernels {
            (k.run)(v, &k.call);
        }
        let want: i64 = (0..SPIN_N).fold(0i64, |a, i| a.wrapping_add(i.wrapping_mul(i)));
        let spin = kernels.iter().find(|k| k.name.starts_with("spin")).unwrap();
        let got = i64::from_le_bytes(spin.call.result(0).bytes().try_into().unwrap());
        assert_eq!(got, want, "{}: spin_sum", v.name);
    }
}

fn bench(c: &mut Criterion) {
    let variants = [
        variant("unchecked", Interrupt::Unchecked),
        variant("poll", Interrupt::Poll),
    ];
    let kernels = kernels();
    check(&variants, &kernels);
    if mode::sampling() {
        let mut group = c.benchmark_group("deadline");
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(2))
            .warm_up_time(Duration::from_millis(500));
        for k in &kernels {
            for v in &variants {
                group.bench_function(format!("{}/{}", k.name, v.name), |b| {
                    b.iter(|| (k.run)(v, black_box(&k.call)))
                });
            }
        }
        group.finish();
    }
    let ratios = summary(&variants, &kernels);
    report_p4(&variants, &ratios);
    loop_shapes();
    stop_latency(&variants[1..]);
    isolation_cost();
}

/// What the check costs `spin_sum`'s loop by itself, against what the
/// loop's shape costs: native copies of the loop Cranelift emits with and
/// without checks (checked to be that code), and of other shapes
/// (`cyxla_benches::loop_shapes`).
fn loop_shapes() {
    let wasm = wat::parse_str(SPIN_GUEST).expect("spin guest WAT");
    let module = |interrupt| {
        let mut limits = Limits::default();
        limits.interrupt = interrupt;
        cyxla_sandbox::Engine::new(&limits)
            .expect("an engine")
            .precompile(&wasm)
            .expect("compile the spin guest")
    };
    loop_shapes::check_emitted(&module(Interrupt::Unchecked), &module(Interrupt::Poll));
    loop_shapes::report(SPIN_N as u64, mode::pick(21, 3));
}

/// What data-remanence protection costs per call: an instance reused with
/// its scratch region scrubbed (the default) versus a fresh instance per
/// call (`fresh_instances`), and the zeroing itself.
fn isolation_cost() {
    let rounds: usize = mode::pick(15, 3);
    let handlers: Vec<(&str, GuestHandler, GuestHandler)> = ["noop", "rms_norm"]
        .iter()
        .map(|&target| {
            let make = |fresh: bool| {
                let mut limits = Limits::default();
                limits.fresh_instances = fresh;
                limits.call_timeout = Duration::from_secs(2);
                Sandbox::new(&bundled_guests(), AllowList::targets([target]), limits)
                    .expect("load the bundled guests")
                    .handler(target)
                    .expect("served")
            };
            (target, make(false), make(true))
        })
        .collect();
    let noop_call = HostCall::new()
        .arg(HostBuffer::zeros(DType::F32, &[16]))
        .ret(HostBuffer::zeros(DType::F32, &[16]));
    let rms_call = rms_norm_call(256, 4096);
    println!("\nper call, median of {rounds} interleaved rounds:");
    println!(
        "  {:<28} {:>18} {:>18} {:>8}",
        "kernel", "reused + scrubbed", "fresh instance", "ratio"
    );
    for (target, reused, fresh) in &handlers {
        let (call, iters) = if *target == "noop" {
            (&noop_call, 200)
        } else {
            (&rms_call, 10)
        };
        let mut samples = [Vec::new(), Vec::new()];
        for _ in 0..rounds {
            for (i, h) in [reused, fresh].into_iter().enumerate() {
                let start = Instant::now();
                for _ in 0..iters {
                    h.call_host(call).expect("call");
                }
                samples[i].push(start.elapsed() / iters);
            }
        }
        let [a, b] = samples.map(|mut s| {
            s.sort();
            s[s.len() / 2].as_secs_f64() * 1e3
        });
        println!(
            "  {:<28} {:>15.4} ms {:>15.4} ms {:>7.2}x",
            if *target == "noop" {
                "noop f32[16]"
            } else {
                "rms_norm f32[256,4096]"
            },
            a,
            b,
            b / a
        );
    }
    // The scratch region is scrubbed lazily: a call zeroes only what it does
    // not overwrite of what earlier calls wrote (padding, and the tail of a
    // larger earlier call). Calls of one size pay nothing more; a small call
    // after a large one zeroes the large one's tail, at memset speed.
    let mut scratch = vec![1u8; 8 << 20];
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            scratch.fill(0);
            black_box(&mut scratch);
            start.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "  zeroing 8 MiB (a small call after an rms_norm f32[256,4096] call): {:.4} ms",
        times[rounds / 2].as_secs_f64() * 1e3
    );
}

/// Goal P4: deadlines cost at most this factor with the default mechanism,
/// on every kernel of the bench (issue 34).
const GOAL_P4: f64 = 1.05;

/// Row P4: the largest ratio over the kernels of the default mechanism
/// (what `Limits::default()` resolves to).
fn report_p4(variants: &[Variant], ratios: &[Vec<f64>]) {
    let default = cyxla_sandbox::Engine::new(&Limits::default())
        .expect("an engine with the default limits")
        .interrupt();
    let range = |v: usize| {
        let r: Vec<f64> = ratios.iter().map(|k| k[v]).collect();
        (
            r.iter().copied().fold(f64::INFINITY, f64::min),
            r.iter().copied().fold(0.0, f64::max),
        )
    };
    let index = variants
        .iter()
        .position(|v| v.name == interrupt_name(default))
        .unwrap_or_else(|| panic!("no variant for the default mechanism {default:?}"));
    let (lo, hi) = range(index);
    report::result(
        "P4",
        Met::from(hi <= GOAL_P4),
        &format!("<={GOAL_P4:.2}x"),
        &[("default_max_ratio", hi), ("default_min_ratio", lo)],
        &format!(
            "{} (default) {lo:.2}-{hi:.2}x over {} kernels",
            variants[index].name,
            ratios.len(),
        ),
    );
}

/// The variant name of a mechanism.
fn interrupt_name(interrupt: Interrupt) -> &'static str {
    match interrupt {
        Interrupt::Poll => "poll",
        _ => "unchecked",
    }
}

/// Interleaved rounds: median per call, and the ratio to `unchecked`.
/// Returns, per kernel, each variant's ratio to `unchecked`.
fn summary(variants: &[Variant], kernels: &[Kernel]) -> Vec<Vec<f64>> {
    let rounds: usize = mode::pick(21, 3);
    println!("\nwhole sandboxed call, median of {rounds} interleaved rounds:");
    println!(
        "  {:<28} {:>12} {:>12} {:>8}",
        "kernel", "unchecked", "poll", "poll"
    );
    let mut ratios = Vec::new();
    for k in kernels {
        let iters = if k.name.starts_with("spin") {
            3
        } else if k.name.starts_with("noop") {
            mode::pick(2000, 200)
        } else {
            mode::pick(10, 3)
        };
        let medians: Vec<f64> = interleaved_medians(variants.len(), rounds, iters, |i| {
            (k.run)(&variants[i], &k.call)
        })
        .iter()
        .map(|m| m.as_secs_f64() * 1e3)
        .collect();
        println!(
            "  {:<28} {:>9.4} ms {:>9.4} ms {:>7.2}x",
            k.name,
            medians[0],
            medians[1],
            medians[1] / medians[0]
        );
        ratios.push(medians.iter().map(|m| m / medians[0]).collect());
    }
    ratios
}

/// How long after its 100 ms deadline `loop {}` is stopped.
fn stop_latency(variants: &[Variant]) {
    let tries: usize = mode::pick(9, 2);
    println!("\n`loop {{}}` with a 100 ms deadline: time to the error (median, max of {tries}):");
    for v in variants {
        let mut took: Vec<Duration> = (0..tries)
            .map(|_| {
                let call = HostCall::new()
                    .arg(HostBuffer::zeros(DType::F32, &[1]))
                    .ret(HostBuffer::zeros(DType::F32, &[1]));
                let start = Instant::now();
                let error = v.spin.call_host(&call).expect_err("spin must fail");
                assert!(
                    error.message.contains("exceeded its deadline"),
                    "{}",
                    error.message
                );
                start.elapsed()
            })
            .collect();
        took.sort();
        println!(
            "  {:<10} median {:>7.1} ms, max {:>7.1} ms",
            v.name,
            took[tries / 2].as_secs_f64() * 1e3,
            took[tries - 1].as_secs_f64() * 1e3
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    report::peak_rss("deadline");
}
