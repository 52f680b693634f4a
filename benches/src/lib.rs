//! Shared set-up of the benches: the default plugin, the native test
//! handlers, and generated StableHLO programs.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use cyxla_host::process::{self, NativeSpec};
use plugin_glue::plugin::Plugin;

/// One measured variant of a program.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// Name printed in reports.
    pub name: &'static str,
    /// Target the program calls; `None` for the baseline without calls.
    pub target: Option<&'static str>,
}

impl Variant {
    /// A variant.
    pub fn new(name: &'static str, target: Option<&'static str>) -> Variant {
        Variant { name, target }
    }
}

/// Loads the plugin `scripts/setup.sh` installed.
///
/// # Panics
///
/// If there is none: the message says how to install it.
pub fn load_default_plugin() -> Plugin {
    let path = process::find_plugin(None).unwrap_or_else(|e| panic!("{e:#}"));
    // SAFETY: the default XLA CPU plugin that scripts/setup.sh installs.
    unsafe { Plugin::load(&path) }.unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()))
}

/// The shared library of native C++ test handlers, built by the cyxla-tests
/// package.
pub fn test_handlers_lib() -> PathBuf {
    cyxla_tests::test_handlers_lib()
}

/// Registers native test handler `target` (same symbol name) from
/// [`test_handlers_lib`].
///
/// # Panics
///
/// If it cannot be registered.
pub fn register_test_native(plugin: &Plugin, target: &str) {
    let spec = NativeSpec {
        target: target.to_owned(),
        library: test_handlers_lib(),
        symbol: target.to_owned(),
    };
    // SAFETY: the test handlers library is built from tests/native by the
    // tests crate; each symbol is an XLA FFI handler of the same name.
    unsafe { process::register_native(plugin, &spec) }.unwrap_or_else(|e| panic!("{e:#}"));
}

/// The guests folder: `$CYXLA_GUESTS` if set, else the bundled guests
/// (`guests/out`), built first with `guests/build.sh`.
///
/// # Panics
///
/// If `guests/build.sh` fails: the message says to run `scripts/setup.sh`.
pub fn bundled_guests() -> PathBuf {
    if std::env::var_os(cyxla_host::config::GUESTS_ENV).is_some() {
        return cyxla_host::process::default_guests_dir();
    }
    cyxla_tests::bundled_guests().to_owned()
}

/// The bundled guests' modules (the `*.wasm` files in [`bundled_guests`]),
/// sorted by path.
///
/// # Panics
///
/// If the folder cannot be read.
pub fn bundled_modules() -> Vec<PathBuf> {
    let mut modules: Vec<PathBuf> = std::fs::read_dir(bundled_guests())
        .expect("the bundled guests (scripts/setup.sh builds them)")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "wasm"))
        .collect();
    modules.sort();
    modules
}

/// Times `variants` variants in `rounds` interleaved rounds: each round
/// runs `run(i)` `iters` times for each variant `i` in turn. Returns each
/// variant's median time per run.
pub fn interleaved_medians(
    variants: usize,
    rounds: usize,
    iters: u32,
    mut run: impl FnMut(usize),
) -> Vec<Duration> {
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); variants];
    for _ in 0..rounds {
        for (i, times) in samples.iter_mut().enumerate() {
            let start = Instant::now();
            for _ in 0..iters {
                run(i);
            }
            times.push(start.elapsed() / iters);
        }
    }
    samples
        .iter_mut()
        .map(|s| {
            s.sort();
            s[s.len() / 2]
        })
        .collect()
}

/// A program `f32[16] -> f32[16]` that chains `calls` custom calls to
/// `target` (none: returns its input negated, so there is work to run).
pub fn chain_program(target: &str, calls: usize) -> String {
    let mut body = String::new();
    let mut last = "%arg0".to_owned();
    for i in 0..calls {
        let _ = writeln!(
            body,
            "    %c{i} = stablehlo.custom_call @{target}({last}) {{api_version = 4 : i32, \
             backend_config = {{}}}} : (tensor<16xf32>) -> tensor<16xf32>"
        );
        last = format!("%c{i}");
    }
    format!(
        "module @bench {{\n  func.func public @main(%arg0: tensor<16xf32>) -> tensor<16xf32> {{\n\
         {body}    %r = stablehlo.negate {last} : tensor<16xf32>\n    return %r : tensor<16xf32>\n  }}\n}}\n"
    )
}

pub mod loop_shapes;
pub mod matmul_loops;

/// The exports every guest written by hand in WAT for the benches needs
/// (guest ABI v1, docs/abi.md): its memory, `cyxla_abi_version`,
/// `cyxla_api` (a zeroed table at 1024, which the host never reads) and
/// `cyxla_alloc` (a bump allocator from 8192 that grows memory, 0 when it
/// cannot). A string literal, for `concat!` after `"(module"`, before the
/// guest's own handlers and its `cyxla.targets` section.
#[macro_export]
macro_rules! guest_prelude_wat {
    () => {
        r#"
  (memory (export "memory") 2)
  (global $bump (mut i32) (i32.const 8192))
  (func (export "cyxla_abi_version") (result i32) (i32.const 1))
  (func (export "cyxla_api") (result i32) (i32.const 1024))
  (func (export "cyxla_alloc") (param $size i32) (param $align i32) (result i32)
    (local $p i32) (local $end i32) (local $have i32)
    (local.set $p (i32.and (i32.add (global.get $bump) (i32.sub (local.get $align) (i32.const 1)))
                           (i32.xor (i32.sub (local.get $align) (i32.const 1)) (i32.const -1))))
    (local.set $end (i32.add (local.get $p) (local.get $size)))
    (local.set $have (i32.shl (memory.size) (i32.const 16)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then (if (i32.eq (memory.grow (i32.shr_u (i32.add (i32.sub (local.get $end) (local.get $have))
                                                          (i32.const 65535)) (i32.const 16)))
                        (i32.const -1))
              (then (return (i32.const 0))))))
    (global.set $bump (local.get $end))
    (local.get $p))"#
    };
}

/// How `scripts/bench.sh` runs a bench: `CYXLA_BENCH_SUMMARY_ONLY` skips
/// criterion's own sampling (only the interleaved summaries run),
/// `CYXLA_BENCH_QUICK` runs few rounds (a check that everything runs and
/// reports, not a measurement to quote).
pub mod mode {
    /// Set (to anything) by `scripts/bench.sh`: skip criterion's sampling.
    pub const SUMMARY_ONLY_ENV: &str = "CYXLA_BENCH_SUMMARY_ONLY";
    /// Set (to anything) by `scripts/bench.sh --quick`: few rounds.
    pub const QUICK_ENV: &str = "CYXLA_BENCH_QUICK";

    /// Whether criterion's sampling runs (not under `scripts/bench.sh`).
    pub fn sampling() -> bool {
        std::env::var_os(SUMMARY_ONLY_ENV).is_none() && !quick()
    }

    /// Whether this is a quick run.
    pub fn quick() -> bool {
        std::env::var_os(QUICK_ENV).is_some()
    }

    /// `full`, or `quick` in a quick run.
    pub fn pick<T>(full: T, quick: T) -> T {
        if self::quick() { quick } else { full }
    }
}

/// The machine-readable result lines `scripts/bench.sh` collects, printed
/// beside each bench's own report:
///
/// ```text
/// cyxla-bench P1 met=no goal=<=250ns guest_ns=739.1 native_ns=139.2 | native 139 ns, guest 739 ns: +600 ns
/// ```
///
/// The row id, then `key=value` pairs (no spaces; `met` is `yes`, `no` or
/// `info`, `goal` is the goal or `-`), then after ` | ` the figure as the
/// table shows it.
pub mod report {
    /// Prints one result line for table row `id`.
    pub fn result(id: &str, met: Met, goal: &str, values: &[(&str, f64)], figure: &str) {
        let mut line = format!("cyxla-bench {id} met={} goal={goal}", met.word());
        for (key, value) in values {
            line.push_str(&format!(" {key}={value:.6}"));
        }
        println!("{line} | {figure}");
    }

    /// Whether a row's goal is met.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Met {
        /// Measured and within the goal.
        Yes,
        /// Measured and outside the goal.
        No,
        /// A row without a goal.
        Info,
    }

    impl Met {
        /// `Yes` if `ok`, else `No`.
        pub fn from(ok: bool) -> Met {
            if ok { Met::Yes } else { Met::No }
        }

        fn word(self) -> &'static str {
            match self {
                Met::Yes => "yes",
                Met::No => "no",
                Met::Info => "info",
            }
        }
    }

    /// A field of `/proc/self/status` in KiB (`VmHWM`, `VmRSS`).
    ///
    /// # Panics
    ///
    /// If `/proc/self/status` has no such field (not Linux).
    pub fn status_kib(field: &str) -> u64 {
        let status = std::fs::read_to_string("/proc/self/status")
            .unwrap_or_else(|e| panic!("cannot read /proc/self/status (Linux only): {e}"));
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("/proc/self/status has no {field} field"))
    }

    /// Resets this process's peak RSS (`VmHWM`) to its current RSS
    /// (`/proc/self/clear_refs`, Linux ≥ 4.0).
    ///
    /// # Panics
    ///
    /// If the kernel refuses.
    pub fn reset_peak_rss() {
        std::fs::write("/proc/self/clear_refs", "5")
            .unwrap_or_else(|e| panic!("cannot reset the peak RSS (/proc/self/clear_refs): {e}"));
    }

    /// Prints this bench process's peak RSS as a result line (`RSS-<bench>`),
    /// for the table's list of bench processes.
    pub fn peak_rss(bench: &str) {
        let kib = status_kib("VmHWM");
        result(
            &format!("RSS-{bench}"),
            Met::Info,
            "-",
            &[("peak_mib", kib as f64 / 1024.0)],
            &format!("{:.0} MiB", kib as f64 / 1024.0),
        );
    }

    /// The 1, 5 and 15 minute load averages (`/proc/loadavg`).
    pub fn load_average() -> String {
        std::fs::read_to_string("/proc/loadavg")
            .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "unknown".to_owned())
    }

    /// The median of `v` (sorted in place; the mean of the middle two for
    /// an even length).
    ///
    /// # Panics
    ///
    /// If `v` is empty.
    pub fn median(v: &mut [f64]) -> f64 {
        assert!(!v.is_empty(), "median of no samples");
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }
}

/// The C++ kernels of the native-versus-guest benches, each built from one
/// source both ways by `guests/cpp/build.sh`: natively as a kernel author's
/// wheel would be (`--native`: `clang++ -O3 -ffp-contract=off -fPIC
/// -shared`, the compiler's default x86-64 target, against jaxlib's
/// `xla/ffi/api/ffi.h`), as a guest with the SDK's build (`-O3 -msimd128
/// ...`, then wasm-opt), and natively with `-march=native` (for
/// information). The guest also serves a second target from a sandbox
/// that copies each buffer on the calling thread alone (`copy_threads=1`,
/// for information: what the copy helpers buy).
pub mod kernels {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use cyxla_host::process::{self, NativeSpec};
    use plugin_glue::plugin::Plugin;

    /// A kernel: its source (relative to the workspace), target and the
    /// symbol of its handler.
    #[derive(Clone, Copy, Debug)]
    pub struct Kernel {
        /// Source, relative to the workspace root.
        pub source: &'static str,
        /// The target the guest serves.
        pub target: &'static str,
        /// The C symbol of the handler (for the native builds).
        pub symbol: &'static str,
    }

    /// rms_norm of the bundled C++ guests (`eps` attribute, x -> y).
    pub const RMS_NORM: Kernel = Kernel {
        source: "guests/cpp/rms_norm.cc",
        target: "rms_norm_cpp",
        symbol: "RmsNorm",
    };

    /// Naive i-k-j f32 matmul (a, b -> c), `benches/kernels/matmul.cc`.
    pub const MATMUL: Kernel = Kernel {
        source: "benches/kernels/matmul.cc",
        target: "bench_matmul_cpp",
        symbol: "BenchMatmul",
    };

    /// How a kernel was built.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Build {
        /// Native, as a wheel: `-O3`, default x86-64 target.
        Native,
        /// The wasm guest (`guests/cpp/build.sh`: clang, then wasm-opt).
        Guest,
        /// Native with `-march=native`.
        MarchNative,
        /// The same wasm guest, in a sandbox that copies on one thread.
        GuestOneCopyThread,
        /// The wasm guest built with zig instead of Debian's clang-19
        /// (`guests/cpp/build.sh` with `CYXLA_ZIG`), then wasm-opt.
        GuestZig,
        /// The zig build without the wasm-opt step (`--no-wasm-opt`).
        GuestZigNoWasmOpt,
    }

    impl Build {
        /// The name the build's handler is registered under for `kernel`.
        pub fn target(self, kernel: &Kernel) -> String {
            match self {
                Build::Guest => kernel.target.to_owned(),
                Build::Native => format!("{}__native", kernel.target),
                Build::MarchNative => format!("{}__march_native", kernel.target),
                Build::GuestOneCopyThread => format!("{}__one_copy_thread", kernel.target),
                Build::GuestZig => format!("{}__zig", kernel.target),
                Build::GuestZigNoWasmOpt => format!("{}__zig_no_wasm_opt", kernel.target),
            }
        }

        /// The folder of this build's module or library under `build`'s
        /// `out`.
        pub fn dir(self) -> &'static str {
            match self {
                Build::Guest | Build::GuestOneCopyThread => "wasm",
                Build::GuestZig => "wasm-zig",
                Build::GuestZigNoWasmOpt => "wasm-zig-no-wasm-opt",
                Build::Native => "native",
                Build::MarchNative => "march-native",
            }
        }
    }

    /// The module `guests/cpp/build.sh` makes from `source` in `build`.
    fn module_file(source: &str, build: Build) -> String {
        let stem = Path::new(source)
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a source file name");
        match build {
            Build::Guest
            | Build::GuestOneCopyThread
            | Build::GuestZig
            | Build::GuestZigNoWasmOpt => format!("{stem}_cpp.wasm"),
            Build::Native | Build::MarchNative => format!("lib{stem}_cpp.so"),
        }
    }

    /// The module of `kernel` in `build`, built by [`build`] under `out`.
    pub fn module_path(out: &Path, kernel: &Kernel, build: Build) -> PathBuf {
        out.join(build.dir())
            .join(module_file(kernel.source, build))
    }

    /// Builds `kernels` all three ways under `out` (incrementally) and
    /// returns the folder of the wasm guests.
    ///
    /// # Panics
    ///
    /// If a build fails: the message has the compiler's output and says
    /// how to install the toolchain.
    pub fn build(out: &Path, kernels: &[Kernel]) -> PathBuf {
        let root = crate::workspace_root();
        for build in [Build::Guest, Build::Native, Build::MarchNative] {
            let mut command = Command::new("bash");
            command.arg(root.join("guests/cpp/build.sh"));
            if build != Build::Guest {
                command.arg("--native");
            }
            if build == Build::MarchNative {
                command.env("CYXLA_NATIVE_FLAGS", "-march=native");
            } else {
                command.env_remove("CYXLA_NATIVE_FLAGS");
            }
            command.arg("--out").arg(out.join(build.dir()));
            for k in kernels {
                command.arg(root.join(k.source));
            }
            cyxla_tests::run_ok(
                &mut command,
                "install clang-19, lld-19, wasi-libc, libc++-19-dev-wasm32 and binaryen and create the \
                 venv with scripts/setup.sh",
            );
        }
        out.join(Build::Guest.dir())
    }

    /// Builds `kernels` with zig (the Python package `ziglang` of the
    /// checkout's venv), with and without wasm-opt, under `out`
    /// ([`Build::GuestZig`], [`Build::GuestZigNoWasmOpt`]).
    ///
    /// # Panics
    ///
    /// If zig is not installed or a build fails.
    pub fn build_zig(out: &Path, kernels: &[Kernel]) {
        let root = crate::workspace_root();
        let hint = "zig is the Python package ziglang: install it into .venv with scripts/setup.sh";
        let zig = cyxla_tests::venv_zig();
        for build in [Build::GuestZig, Build::GuestZigNoWasmOpt] {
            let mut command = Command::new("bash");
            command
                .arg(root.join("guests/cpp/build.sh"))
                .env("CYXLA_ZIG", &zig)
                .arg("--out")
                .arg(out.join(build.dir()));
            if build == Build::GuestZigNoWasmOpt {
                command.arg("--no-wasm-opt");
            }
            for k in kernels {
                command.arg(root.join(k.source));
            }
            cyxla_tests::run_ok(&mut command, hint);
        }
    }

    /// Registers the two native builds of `kernel` (built by [`build`]
    /// under `out`) under [`Build::target`].
    ///
    /// # Panics
    ///
    /// If a library or symbol cannot be registered.
    pub fn register_natives(plugin: &Plugin, out: &Path, kernel: &Kernel) {
        for build in [Build::Native, Build::MarchNative] {
            let spec = NativeSpec {
                target: build.target(kernel),
                library: module_path(out, kernel, build),
                symbol: kernel.symbol.to_owned(),
            };
            // SAFETY: a native build of the kernel's C++ source by
            // guests/cpp/build.sh: the symbol is an XLA FFI handler.
            unsafe { process::register_native(plugin, &spec) }
                .unwrap_or_else(|e| panic!("register {spec:?}: {e:#}"));
        }
    }
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    cyxla_tests::workspace_root()
}

/// Deterministic f32 test data in [-1, 1) (a linear congruential sequence).
pub fn data(len: usize, seed: u64) -> Vec<f32> {
    let step = |state: u64| {
        state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
    };
    let mut state = step(seed);
    (0..len)
        .map(|_| {
            state = step(state);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// Little-endian bytes of f32 values.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// f32 values of little-endian bytes.
pub fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect()
}
