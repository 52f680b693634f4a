//! Guest kernels against the same C++ source built natively, per call
//! through a real XLA program on the real CPU plugin (goals P2 and P3).
//!
//! One source, built by `guests/cpp/build.sh` three ways
//! ([`cyxla_benches::kernels`]): natively as a kernel author's wheel would
//! be (`clang++ -O3 -ffp-contract=off`, the compiler's default x86-64
//! target, against jaxlib's `ffi.h`), as a wasm guest with the SDK's build
//! (`-O3 -msimd128 ...`, then `wasm-opt -O3 --low-memory-unused`), and
//! natively with `-march=native` (information only).
//! Each build serves its own target; each program is one custom call. The
//! guest runs under the deadline mechanism (poll pages: a check in every
//! loop header). A second sandbox, registered under a second target name,
//! copies each buffer on the calling thread alone (`copy_threads=1`, as
//! information: the default shares a copy of 8 MiB or more with helper
//! threads).
//!
//! - P2, memory-bound: `rms_norm_cpp` (`guests/cpp/rms_norm.cc`) over
//!   f32[256, 4096] (1M) and f32[4096, 4096] (16M). The guest copies its
//!   operand in and its result out once, so `(native + copies) / native` is
//!   the ratio a copying sandbox cannot beat (the copy-bound limit). The
//!   copies are timed two ways: by the host's own counters in the guest's
//!   calls (`cyxla_sandbox::stats`, which also time the guest's code), and as a
//!   `memcpy` of the buffer, twice, between two buffers hot in cache beside
//!   it, a lower bound that leaves out the cache misses a call's copies
//!   meet (four buffers of this size, besides the kernel's own traffic).
//! - P3, compute-bound: f32 matmul 256×256 with naive i-k-j loops
//!   (`benches/kernels/matmul.cc`).
//!
//! Before timing, every build's output must be bit-identical to the
//! native one: the source sums in a fixed order and `-ffp-contract=off`
//! forbids fused multiply-adds, so IEEE arithmetic gives the same bits on
//! x86-64 and in wasm (whose f32 operations are IEEE, NaNs aside); the
//! native output is also checked against an f64 reference in Rust.
//!
//! The sides run interleaved, in rounds; the ratio is the median of the
//! per-round ratios.
//!
//! Run: `cargo bench -p cyxla-benches --bench kernels`.

use std::hint::black_box;
use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use cyxla_benches::kernels::{self, Build, Kernel};
use cyxla_benches::report::{self, Met, median};
use cyxla_benches::{data, f32_bytes, f32_values, load_default_plugin, mode};
use cyxla_pjrt_client::{Buffer, Client, Executable};
use cyxla_sandbox::{AllowList, GuestHandler, Limits, Sandbox};
use plugin_glue::DType;
use plugin_glue::registry;

/// The sides, in the order they run in each round; with [`zig_sides`],
/// also the guest built with zig, with and without wasm-opt (information).
static BUILDS: LazyLock<Vec<Build>> = LazyLock::new(|| {
    let mut builds = vec![
        Build::Native,
        Build::Guest,
        Build::MarchNative,
        Build::GuestOneCopyThread,
    ];
    if zig_sides() {
        builds.extend([Build::GuestZig, Build::GuestZigNoWasmOpt]);
    }
    builds
});

/// Whether `CYXLA_BENCH_ZIG=1` asks for the zig builds of the guests as
/// well (the C/C++ toolchain without Debian's packages, guest-sdk/README.md).
fn zig_sides() -> bool {
    std::env::var_os("CYXLA_BENCH_ZIG").is_some_and(|v| !v.is_empty() && v != "0")
}

/// One measured case: a kernel on given shapes.
struct Case {
    /// Row id of the table.
    id: &'static str,
    /// Name in the report.
    name: &'static str,
    kernel: Kernel,
    /// Operand shapes (all f32) and the result shape.
    operands: Vec<Vec<i64>>,
    result: Vec<i64>,
    /// `backend_config` of the custom call.
    attrs: &'static str,
    /// Goal: guest / native at most this.
    goal: f64,
    /// Whether to time a memcpy of the result's size beside it.
    memcpy: bool,
}

fn cases() -> Vec<Case> {
    let rms = |id, name, rows, n| Case {
        id,
        name,
        kernel: kernels::RMS_NORM,
        operands: vec![vec![rows, n]],
        result: vec![rows, n],
        attrs: "{eps = 1.000000e-05 : f32}",
        goal: if id == "P2-1M" { 1.15 } else { 1.45 },
        memcpy: true,
    };
    vec![
        rms("P2-1M", "rms_norm f32[256,4096] (1M)", 256, 4096),
        rms("P2-16M", "rms_norm f32[4096,4096] (16M)", 4096, 4096),
        Case {
            id: "P3",
            name: "matmul f32 256x256 (i-k-j)",
            kernel: kernels::MATMUL,
            operands: vec![vec![256, 256], vec![256, 256]],
            result: vec![256, 256],
            attrs: "{}",
            goal: 1.10,
            memcpy: false,
        },
    ]
}

fn tensor(dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("tensor<{}xf32>", dims.join("x"))
}

/// A program with one custom call of `target` on the case's shapes.
fn program(case: &Case, target: &str) -> String {
    let params: Vec<String> = case
        .operands
        .iter()
        .enumerate()
        .map(|(i, d)| format!("%arg{i}: {}", tensor(d)))
        .collect();
    let args: Vec<String> = (0..case.operands.len())
        .map(|i| format!("%arg{i}"))
        .collect();
    let types: Vec<String> = case.operands.iter().map(|d| tensor(d)).collect();
    let result = tensor(&case.result);
    format!(
        "module @bench {{\n  func.func public @main({}) -> {result} {{\n    \
         %0 = stablehlo.custom_call @{target}({}) {{api_version = 4 : i32, backend_config = {}}} \
         : ({}) -> {result}\n    return %0 : {result}\n  }}\n}}\n",
        params.join(", "),
        args.join(", "),
        case.attrs,
        types.join(", "),
    )
}

/// A case compiled for every build, with its inputs on the device.
struct Loaded {
    case: Case,
    exes: Vec<Executable>,
    inputs: Vec<Buffer>,
    host_inputs: Vec<Vec<f32>>,
}

impl Loaded {
    fn run(&self, build: usize) -> Buffer {
        let args: Vec<&Buffer> = self.inputs.iter().collect();
        let mut out = self.exes[build]
            .execute(&[args])
            .unwrap_or_else(|e| panic!("{} ({:?}): {e}", self.case.name, BUILDS[build]));
        out.swap_remove(0).swap_remove(0)
    }

    /// Seconds per call over `iters` calls.
    fn time(&self, build: usize, iters: usize) -> f64 {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(self.run(build));
        }
        start.elapsed().as_secs_f64() / iters as f64
    }
}

fn load(client: &Client, case: Case) -> Loaded {
    let exes = BUILDS
        .iter()
        .map(|b| {
            let text = program(&case, &b.target(&case.kernel));
            client
                .compile(text.as_bytes(), 1)
                .unwrap_or_else(|e| panic!("{} ({b:?}): compile: {e}", case.name))
        })
        .collect();
    let host_inputs: Vec<Vec<f32>> = case
        .operands
        .iter()
        .enumerate()
        .map(|(i, d)| data(d.iter().product::<i64>() as usize, i as u64 + 1))
        .collect();
    let inputs = host_inputs
        .iter()
        .zip(&case.operands)
        .map(|(v, d)| {
            client
                .buffer_from_host(&f32_bytes(v), DType::F32, d, 0)
                .expect("input buffer")
        })
        .collect();
    Loaded {
        case,
        exes,
        inputs,
        host_inputs,
    }
}

/// The f64 reference of the case's kernel.
fn reference(l: &Loaded) -> Vec<f64> {
    let x = &l.host_inputs;
    if l.case.kernel.target == kernels::MATMUL.target {
        let (m, k, n) = (
            l.case.operands[0][0] as usize,
            l.case.operands[0][1] as usize,
            l.case.operands[1][1] as usize,
        );
        let mut c = vec![0.0f64; m * n];
        for i in 0..m {
            for p in 0..k {
                let a = f64::from(x[0][i * k + p]);
                for j in 0..n {
                    c[i * n + j] += a * f64::from(x[1][p * n + j]);
                }
            }
        }
        c
    } else {
        let n = *l.case.operands[0].last().expect("rank 2") as usize;
        x[0].chunks(n)
            .flat_map(|row| {
                let ms = row.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>() / n as f64;
                let inv = 1.0 / (ms + 1e-5).sqrt();
                row.iter().map(move |v| f64::from(*v) * inv)
            })
            .collect()
    }
}

/// Every build's output equals the native one bit for bit, and the native
/// one is close to the f64 reference.
fn check(l: &Loaded) {
    let outputs: Vec<Vec<u8>> = (0..BUILDS.len())
        .map(|b| l.run(b).to_host().expect("result to host"))
        .collect();
    let native = f32_values(&outputs[0]);
    let want = reference(l);
    let scale = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
    let worst = native
        .iter()
        .zip(&want)
        .map(|(g, w)| (f64::from(*g) - w).abs())
        .fold(0.0f64, f64::max);
    assert!(
        worst <= 1e-4 * scale,
        "{}: the native build differs from the f64 reference by {worst:e}",
        l.case.name
    );
    for (b, out) in BUILDS.iter().zip(&outputs).skip(1) {
        if out != &outputs[0] {
            let got = f32_values(out);
            let differ = got
                .iter()
                .zip(&native)
                .filter(|(g, n)| g.to_bits() != n.to_bits())
                .count();
            panic!(
                "{}: the {b:?} build's output differs from the native one in {differ} of {} \
                 elements (the same source must give the same bits)",
                l.case.name,
                native.len()
            );
        }
    }
}

/// The calls of the (default) guest's target so far, and their time copying
/// and in guest code, in seconds (the host's own counters for this
/// sandbox's target; timing is on in this bench).
fn guest_split(guest: &GuestHandler) -> (u64, f64, f64) {
    let s = guest.stats();
    (s.calls, s.copy_ns as f64 * 1e-9, s.guest_ns as f64 * 1e-9)
}

/// Seconds per copy of `src` into `dst` over `iters` copies.
fn memcpy_time(src: &[u8], dst: &mut [u8], iters: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        dst.copy_from_slice(black_box(src));
        black_box(&mut *dst);
    }
    start.elapsed().as_secs_f64() / iters as f64
}

fn ms(seconds: f64) -> String {
    if seconds >= 1e-2 {
        format!("{:.1} ms", seconds * 1e3)
    } else {
        format!("{:.3} ms", seconds * 1e3)
    }
}

/// Interleaved rounds of every build (and the memcpy) of one case.
fn measure(l: &Loaded, guest: &GuestHandler) {
    let rounds = mode::pick(15, 3);
    let round_time = mode::pick(0.15, 0.03);
    let once = median(&mut [l.time(0, 1), l.time(0, 1), l.time(0, 1)]);
    let iters = ((round_time / once).round() as usize).clamp(1, 1000);
    let bytes = l.case.result.iter().product::<i64>() as usize * 4;
    let (src, mut dst) = if l.case.memcpy {
        (vec![1u8; bytes], vec![0u8; bytes])
    } else {
        (Vec::new(), Vec::new())
    };
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); BUILDS.len()];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); BUILDS.len()];
    let mut copies = Vec::new();
    let (mut in_copies, mut in_guest) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let before = guest_split(guest);
        let t: Vec<f64> = (0..BUILDS.len()).map(|b| l.time(b, iters)).collect();
        let after = guest_split(guest);
        let calls = (after.0 - before.0) as f64;
        in_copies.push((after.1 - before.1) / calls);
        in_guest.push((after.2 - before.2) / calls);
        for ((ratio, time), t_b) in ratios.iter_mut().zip(&mut times).zip(&t) {
            ratio.push(t_b / t[0]);
            time.push(*t_b);
        }
        if l.case.memcpy {
            copies.push(memcpy_time(&src, &mut dst, iters.max(3)));
        }
    }
    // Each build against the SDK's (clang-19) guest, round by round.
    let over_guest: Vec<f64> = times
        .iter()
        .map(|tb| {
            let mut r: Vec<f64> = tb.iter().zip(&times[1]).map(|(x, g)| x / g).collect();
            median(&mut r)
        })
        .collect();
    let t: Vec<f64> = times.iter_mut().map(|v| median(v)).collect();
    let r: Vec<f64> = ratios.iter_mut().map(|v| median(v)).collect();
    let (native, guest, march, one_copy) = (t[0], t[1], t[2], t[3]);
    let (ratio, march_ratio, one_copy_ratio) = (r[1], r[2], r[3]);
    println!(
        "\n{} ({iters} calls per round, median of {rounds} interleaved rounds):",
        l.case.name
    );
    println!("  native (-O3, default x86-64)   {:>12}", ms(native));
    println!(
        "  guest (the SDK's build)        {:>12}   {ratio:.2}x native (goal <= {:.2}x)",
        ms(guest),
        l.case.goal
    );
    println!(
        "  native -march=native           {:>12}   {march_ratio:.2}x native (information)",
        ms(march)
    );
    println!(
        "  guest, copies on one thread    {:>12}   {one_copy_ratio:.2}x native (information)",
        ms(one_copy)
    );
    let mut zig_values = Vec::new();
    let mut zig_figure = String::new();
    for (b, build) in BUILDS.iter().enumerate().skip(4) {
        let (label, key) = match build {
            Build::GuestZig => ("guest built with zig", "zig"),
            _ => ("zig, without wasm-opt", "zig_no_wasm_opt"),
        };
        println!(
            "  {label:<30} {:>12}   {:.2}x native, {:.2}x the clang-19 guest (information)",
            ms(t[b]),
            r[b],
            over_guest[b]
        );
        zig_values.push((key, t[b] * 1e3, over_guest[b]));
        zig_figure.push_str(&format!(
            "; {label} {} ({:.2}x the clang-19 guest)",
            ms(t[b]),
            over_guest[b]
        ));
    }
    let mut values = vec![
        ("guest_over_native", ratio),
        ("native_ms", native * 1e3),
        ("guest_ms", guest * 1e3),
        ("march_native_ms", march * 1e3),
        ("guest_one_copy_thread_over_native", one_copy_ratio),
        ("guest_one_copy_thread_ms", one_copy * 1e3),
    ];
    let mut figure = format!(
        "guest {} / native {}: {ratio:.2}x; -march=native {}; guest copying on one thread {} ({one_copy_ratio:.2}x)",
        ms(guest),
        ms(native),
        ms(march),
        ms(one_copy)
    );
    for (key, ms, over) in zig_values {
        let (ms_key, over_key): (&'static str, &'static str) = if key == "zig" {
            ("zig_guest_ms", "zig_over_guest")
        } else {
            ("zig_no_wasm_opt_ms", "zig_no_wasm_opt_over_guest")
        };
        values.push((ms_key, ms));
        values.push((over_key, over));
    }
    figure.push_str(&zig_figure);
    let (copied, in_code) = (median(&mut in_copies), median(&mut in_guest));
    let copied_limit = (native + copied) / native;
    println!(
        "  guest's own copies (counted)   {:>12}   copy-bound limit (native + copies) / native = {copied_limit:.2}x",
        ms(copied)
    );
    println!(
        "  guest's code (counted)         {:>12}   {:.2}x native's whole call (information)",
        ms(in_code),
        in_code / native
    );
    values.push(("guest_copies_ms", copied * 1e3));
    values.push(("guest_code_ms", in_code * 1e3));
    values.push(("copies_limit", copied_limit));
    figure.push_str(&format!(
        "; the guest's own copies in and out {} (copy limit {copied_limit:.2}x), its code {} ({:.2}x native)",
        ms(copied),
        ms(in_code),
        in_code / native
    ));
    if l.case.memcpy {
        let copy = median(&mut copies);
        let limit = (native + 2.0 * copy) / native;
        println!(
            "  memcpy of {} MiB (one thread)  {:>12}   copy-bound limit (native + 2 memcpy) / native = {limit:.2}x",
            bytes >> 20,
            ms(copy)
        );
        values.push(("memcpy_ms", copy * 1e3));
        values.push(("copy_limit", limit));
        figure.push_str(&format!(
            "; one thread's memcpy of {} MiB, hot in cache, {} (limit {limit:.2}x)",
            bytes >> 20,
            ms(copy)
        ));
    }
    report::result(
        l.case.id,
        Met::from(ratio <= l.case.goal),
        &format!("<={:.2}x", l.case.goal),
        &values,
        &figure,
    );
}

fn main() {
    cyxla_sandbox::stats::enable_timing();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernels");
    let wasm = kernels::build(&out, &[kernels::RMS_NORM, kernels::MATMUL]);
    let plugin = load_default_plugin();
    let targets = [kernels::RMS_NORM.target, kernels::MATMUL.target];
    let sandbox = Sandbox::new(&wasm, AllowList::targets(targets), Limits::default())
        .expect("load the C++ guests");
    let registered = sandbox
        .register_allowed(&plugin)
        .expect("register the guests");
    assert_eq!(registered.len(), 2, "both guests serve: {registered:?}");
    // The same guests with copies on the calling thread alone, under a
    // second target name.
    let mut limits = Limits::default();
    limits.copy_threads = 1;
    let one_copy_thread = Sandbox::new(&wasm, AllowList::targets(targets), limits)
        .expect("load the C++ guests with copy_threads=1");
    for k in [kernels::RMS_NORM, kernels::MATMUL] {
        kernels::register_natives(&plugin, &out, &k);
        let origin = "guest, copies on one thread";
        let handler = one_copy_thread
            .handler(k.target)
            .expect("the guest serves its target");
        registry::register_with_origin(
            &plugin,
            &Build::GuestOneCopyThread.target(&k),
            Arc::new(handler),
            origin.into(),
        )
        .unwrap_or_else(|e| panic!("register the {origin}: {e}"));
    }
    // With CYXLA_BENCH_ZIG: the same guests built with zig, with and
    // without wasm-opt, each under a target name of its own.
    let mut zig_sandboxes = Vec::new();
    if zig_sides() {
        kernels::build_zig(&out, &[kernels::RMS_NORM, kernels::MATMUL]);
        for build in [Build::GuestZig, Build::GuestZigNoWasmOpt] {
            // 512 MiB of memory, not 256: zig's libc malloc (Zig's
            // WasmAllocator) rounds a large block up to a power of two, so
            // the 16M case's 128 MiB of buffers take 256 MiB, and zig's
            // modules reserve a 16 MiB stack (guest-sdk/README.md).
            let mut limits = Limits::default();
            limits.memory = 512 << 20;
            let sandbox = Sandbox::new(&out.join(build.dir()), AllowList::targets(targets), limits)
                .unwrap_or_else(|e| panic!("load the {build:?} guests: {e}"));
            for k in [kernels::RMS_NORM, kernels::MATMUL] {
                let handler = sandbox
                    .handler(k.target)
                    .expect("the guest serves its target");
                registry::register_with_origin(
                    &plugin,
                    &build.target(&k),
                    Arc::new(handler),
                    format!("{build:?}"),
                )
                .unwrap_or_else(|e| panic!("register the {build:?} guest: {e}"));
            }
            zig_sandboxes.push(sandbox);
        }
    }
    let client = Client::new(&plugin, Some(1)).expect("client");
    println!("load average before: {}", report::load_average());
    for case in cases() {
        let loaded = load(&client, case);
        check(&loaded);
        let guest = sandbox
            .handler(loaded.case.kernel.target)
            .expect("the guest serves its target");
        measure(&loaded, &guest);
    }
    matmul_loops(&out);
    println!("load average after: {}", report::load_average());
    report::peak_rss("kernels");
}

/// P3's inner loop by itself: native copies of the loop the sandbox
/// compiles for the matmul guest and of the native build's loop (checked
/// to be that code), and of other shapes, under one driver
/// (`cyxla_benches::matmul_loops`).
fn matmul_loops(out: &Path) {
    let read = |build| {
        let path = kernels::module_path(out, &kernels::MATMUL, build);
        std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    };
    let guest = cyxla_sandbox::Engine::new(&Limits::default())
        .expect("an engine")
        .precompile(&read(Build::Guest))
        .expect("compile the matmul guest");
    cyxla_benches::matmul_loops::check_emitted(&guest, &read(Build::Native));
    cyxla_benches::matmul_loops::report(mode::pick(31, 3));
}
