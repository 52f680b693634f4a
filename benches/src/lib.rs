//! Shared set-up of the benches: the default plugin, the native test
//! handlers, and generated StableHLO programs.

use std::fmt::Write as _;
use std::path::PathBuf;

use cyxla_host::Sandbox;
use cyxla_host::session::{self, NativeSpec};
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
    let path = session::find_plugin(None).unwrap_or_else(|e| panic!("{e:#}"));
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
    unsafe { session::register_native(plugin, &spec) }.unwrap_or_else(|e| panic!("{e:#}"));
}

/// The guests folder: `$CYXLA_GUESTS` if set, else the bundled guests
/// (`guests/out`), built first with `guests/build.sh`.
///
/// # Panics
///
/// If `guests/build.sh` fails: the message says to run `scripts/setup.sh`.
pub fn bundled_guests() -> PathBuf {
    if std::env::var_os(cyxla_host::GUESTS_ENV).is_some() {
        return Sandbox::default_guests_dir();
    }
    cyxla_tests::bundled_guests().to_owned()
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
