//! Throughput of concurrent guest calls on 4 devices against 1 device
//! (goal P8), and the memory of a process serving 10 guests.
//!
//! One process, as a server would be: 10 guests (the C++ matmul kernel of
//! `benches/kernels/matmul.cc` and 9 bundled guests, `copy16` among them)
//! loaded, all allowed and registered with the real CPU plugin, and one
//! client with 4 devices.
//!
//! - P8: the same program compiled for 1 device and for 4 (4 replicas,
//!   executed with 4 argument lists, as `jax.pmap` does); throughput ratio
//!   = 4 · t(1 device) / t(4 devices), interleaved rounds, median of the
//!   per-round ratios. Compute-bound: one matmul f32 256×256 guest call
//!   per execution (the goal's figure). Information: the native build of
//!   the same matmul source (what XLA's devices give without the sandbox),
//!   and dispatch-bound, 64 chained `copy16` calls, guest and native (the
//!   C++ handler of the dispatch bench), beside the program without calls:
//!   XLA's own cost of executing 4 replicas, which bounds such short
//!   programs.
//! - Memory: the resident set once started and idle, its peak during the
//!   4-device load (`VmHWM`, reset before the load), and the memory of one
//!   idle instance: the growth of the resident set when 8 threads calling
//!   `noop` concurrently make its pool grow, divided by the instances made.
//!
//! Run: `cargo bench -p cyxla-benches --bench devices`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cyxla_benches::kernels;
use cyxla_benches::report::{self, Met, median, status_kib};
use cyxla_benches::{chain_program, data, f32_bytes, load_default_plugin, mode};
use cyxla_pjrt_client::{Buffer, Client, Executable};
use cyxla_sandbox::{AllowList, HostBuffer, HostCall, Limits, Sandbox};
use plugin_glue::DType;

const DEVICES: usize = 4;
const GUESTS: usize = 10;
/// Goal P8: 4 devices give at least this much of one device's throughput.
const GOAL_P8: f64 = 1.8;
/// Chained `copy16` calls of the dispatch-bound program.
const CHAIN: usize = 64;
/// The C++ copy16 handler of the dispatch bench (`tests/native`).
const NATIVE_COPY16: &str = "cyxla_test_copy16";
/// Threads (and at most instances) of the per-instance measurement.
const THREADS: usize = 8;

/// A folder of the matmul guest and 9 bundled guests.
fn guest_folder(dir: &Path, matmul: &Path) -> PathBuf {
    let folder = dir.join("guests");
    std::fs::create_dir_all(&folder).expect("guests folder");
    let mut bundled = cyxla_benches::bundled_modules();
    bundled.truncate(GUESTS - 1);
    let names: Vec<&str> = bundled
        .iter()
        .filter_map(|p| p.file_name()?.to_str())
        .collect();
    for needed in ["copy16.wasm", "noop.wasm"] {
        assert!(
            names.contains(&needed),
            "the first {} bundled guests {names:?} lack {needed}",
            GUESTS - 1
        );
    }
    for m in bundled.iter().chain([&matmul.to_path_buf()]) {
        std::fs::copy(m, folder.join(m.file_name().expect("a file"))).expect("copy a guest");
    }
    folder
}

fn matmul_program(target: &str) -> String {
    let t = "tensor<256x256xf32>";
    format!(
        "module @bench {{\n  func.func public @main(%a: {t}, %b: {t}) -> {t} {{\n    \
         %0 = stablehlo.custom_call @{target}(%a, %b) {{api_version = 4 : i32, backend_config = {{}}}} \
         : ({t}, {t}) -> {t}\n    return %0 : {t}\n  }}\n}}\n"
    )
}

/// A program compiled for 1 and for 4 devices, with its inputs on each.
struct Workload {
    name: &'static str,
    one: Executable,
    four: Executable,
    /// `inputs[d]`: the arguments on device `d`.
    inputs: Vec<Vec<Buffer>>,
}

impl Workload {
    fn new(
        client: &Client,
        name: &'static str,
        text: &str,
        inputs: &[(Vec<f32>, Vec<i64>)],
    ) -> Self {
        let one = client
            .compile(text.as_bytes(), 1)
            .expect("compile for 1 device");
        let four = client
            .compile(text.as_bytes(), DEVICES)
            .expect("compile for 4 devices");
        let inputs = (0..DEVICES)
            .map(|d| {
                inputs
                    .iter()
                    .map(|(v, dims)| {
                        client
                            .buffer_from_host(&f32_bytes(v), DType::F32, dims, d)
                            .expect("input buffer")
                    })
                    .collect()
            })
            .collect();
        Workload {
            name,
            one,
            four,
            inputs,
        }
    }

    fn args(&self, devices: usize) -> Vec<Vec<&Buffer>> {
        self.inputs[..devices]
            .iter()
            .map(|list| list.iter().collect())
            .collect()
    }

    fn run(&self, devices: usize) -> Vec<Vec<Buffer>> {
        let exe = if devices == 1 { &self.one } else { &self.four };
        exe.execute(&self.args(devices))
            .unwrap_or_else(|e| panic!("{} on {devices} device(s): {e}", self.name))
    }

    /// Every device computes what one device does.
    fn check(&self) {
        let want = self.run(1)[0][0].to_host().expect("result");
        for (d, out) in self.run(DEVICES).iter().enumerate() {
            let got = out[0].to_host().expect("result");
            assert!(
                got == want,
                "{}: device {d} computed something else",
                self.name
            );
        }
    }

    /// Seconds per execution over `iters` executions.
    fn time(&self, devices: usize, iters: usize) -> f64 {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(self.run(devices));
        }
        start.elapsed().as_secs_f64() / iters as f64
    }

    /// Interleaved rounds; returns (ratio, t1, t4).
    fn measure(&self) -> (f64, f64, f64) {
        let rounds = mode::pick(15, 3);
        let once = median(&mut [self.time(1, 1), self.time(1, 1), self.time(1, 1)]);
        let iters = ((mode::pick(0.2, 0.04) / once).round() as usize).clamp(1, 2000);
        let (mut t1, mut t4, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let a = self.time(1, iters);
            let b = self.time(DEVICES, iters);
            t1.push(a);
            t4.push(b);
            ratios.push(DEVICES as f64 * a / b);
        }
        let (ratio, t1, t4) = (median(&mut ratios), median(&mut t1), median(&mut t4));
        println!(
            "  {:<34} 1 device {:>9.3} ms   4 devices {:>9.3} ms   throughput {ratio:.2}x",
            self.name,
            t1 * 1e3,
            t4 * 1e3
        );
        (ratio, t1, t4)
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Memory of one idle instance of `noop`: threads calling it concurrently
/// grow its pool; the resident set's growth over the instances made.
fn per_instance(sandbox: &Sandbox) -> (f64, usize) {
    let handler = sandbox.handler("noop").expect("noop is served");
    let spin = |threads: usize, work: bool| {
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    let call = HostCall::new()
                        .arg(HostBuffer::zeros(DType::F32, &[16]))
                        .ret(HostBuffer::zeros(DType::F32, &[16]));
                    while work && !stop.load(Ordering::Relaxed) {
                        handler.call_host(&call).expect("noop");
                    }
                });
            }
            std::thread::sleep(Duration::from_millis(if work { 300 } else { 10 }));
            stop.store(true, Ordering::Relaxed);
        });
    };
    // Threads and their stacks once, so that only instances differ below.
    spin(THREADS, false);
    let before_instances = handler.live_instances();
    let before = status_kib("VmRSS");
    spin(THREADS, true);
    let made = handler.live_instances() - before_instances;
    let after = status_kib("VmRSS");
    assert!(made > 0, "no instance of noop was made");
    (after.saturating_sub(before) as f64 / made as f64, made)
}

fn main() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernels");
    let wasm = kernels::build(&out, &[kernels::MATMUL]);
    let folder = guest_folder(tmp.path(), &wasm.join("matmul_cpp.wasm"));

    let plugin = load_default_plugin();
    let sandbox =
        Sandbox::new(&folder, AllowList::all(), Limits::default()).expect("load the guests");
    assert_eq!(sandbox.guests().guests().len(), GUESTS, "every guest loads");
    let registered = sandbox
        .register_allowed(&plugin)
        .expect("register the guests");
    for target in ["copy16", kernels::MATMUL.target] {
        assert!(
            registered.iter().any(|r| r.target == target),
            "{target} is not registered: {registered:?}"
        );
    }
    kernels::register_natives(&plugin, &out, &kernels::MATMUL);
    cyxla_benches::register_test_native(&plugin, NATIVE_COPY16);
    let client = Client::new(&plugin, Some(DEVICES)).expect("a client with 4 devices");
    let matmul_inputs = [
        (data(256 * 256, 1), vec![256, 256]),
        (data(256 * 256, 2), vec![256, 256]),
    ];
    let matmul = Workload::new(
        &client,
        "matmul f32 256x256 guest (1 call)",
        &matmul_program(kernels::MATMUL.target),
        &matmul_inputs,
    );
    let native = Workload::new(
        &client,
        "matmul f32 256x256 native (1 call)",
        &matmul_program(&kernels::Build::Native.target(&kernels::MATMUL)),
        &matmul_inputs,
    );
    let copies = Workload::new(
        &client,
        "copy16 guest (64 chained calls)",
        &chain_program("copy16", CHAIN),
        &[(data(16, 3), vec![16])],
    );
    let native_copies = Workload::new(
        &client,
        "copy16 native (64 chained calls)",
        &chain_program(NATIVE_COPY16, CHAIN),
        &[(data(16, 3), vec![16])],
    );
    let empty = Workload::new(
        &client,
        "the same program without calls",
        &chain_program("", 0),
        &[(data(16, 3), vec![16])],
    );

    // Idle: started, registered, programs compiled, no call yet.
    std::thread::sleep(Duration::from_millis(200));
    let idle = status_kib("VmRSS");
    let start_peak = status_kib("VmHWM");
    println!("load average before: {}", report::load_average());
    println!(
        "\n{GUESTS} guests served, 4 devices, idle: RSS {:.0} MiB (peak while starting {:.0} MiB)",
        mib(idle),
        mib(start_peak)
    );

    matmul.check();
    native.check();
    copies.check();
    native_copies.check();
    assert!(
        copies.run(1)[0][0].to_host().expect("result")
            == native_copies.run(1)[0][0].to_host().expect("result"),
        "copy16: the guest and the native chain differ"
    );
    report::reset_peak_rss();
    println!(
        "\nthroughput, {DEVICES} devices executing concurrently vs 1 device (median of interleaved rounds):"
    );
    let (ratio, t1, t4) = matmul.measure();
    let (native_ratio, _, _) = native.measure();
    let (chain_ratio, _, _) = copies.measure();
    let (native_chain_ratio, _, _) = native_copies.measure();
    let (empty_ratio, _, _) = empty.measure();
    let load_peak = status_kib("VmHWM");
    println!(
        "peak RSS under the 4-device load: {:.0} MiB",
        mib(load_peak)
    );
    let (instance_kib, made) = per_instance(&sandbox);
    println!(
        "one idle instance of noop.wasm: {instance_kib:.0} KiB ({made} instances made by {THREADS} threads)"
    );
    println!("load average after: {}", report::load_average());

    report::result(
        "P8",
        Met::from(ratio >= GOAL_P8),
        ">=1.8x",
        &[
            ("throughput_ratio", ratio),
            ("one_device_ms", t1 * 1e3),
            ("four_devices_ms", t4 * 1e3),
            ("native_ratio", native_ratio),
            ("dispatch_bound_ratio", chain_ratio),
            ("dispatch_bound_native_ratio", native_chain_ratio),
            ("no_calls_ratio", empty_ratio),
        ],
        &format!(
            "matmul 256 guest: {ratio:.2}x (1 device {:.2} ms, 4 devices {:.2} ms per execution); \
             same matmul native: {native_ratio:.2}x; 64 chained copy16 calls: {chain_ratio:.2}x \
             (native {native_chain_ratio:.2}x; the program without calls {empty_ratio:.2}x)",
            t1 * 1e3,
            t4 * 1e3
        ),
    );
    report::result(
        "M-idle",
        Met::Info,
        "-",
        &[("rss_mib", mib(idle)), ("start_peak_mib", mib(start_peak))],
        &format!(
            "RSS {:.0} MiB serving {GUESTS} guests, 4 devices, idle (peak while starting {:.0} MiB)",
            mib(idle),
            mib(start_peak)
        ),
    );
    report::result(
        "M-load",
        Met::Info,
        "-",
        &[("peak_rss_mib", mib(load_peak))],
        &format!("peak RSS {:.0} MiB under the 4-device load", mib(load_peak)),
    );
    report::result(
        "M-instance",
        Met::Info,
        "-",
        &[("kib", instance_kib), ("instances", made as f64)],
        &format!("{instance_kib:.0} KiB per idle instance (noop.wasm, {made} instances)"),
    );
    report::peak_rss("devices");
}
