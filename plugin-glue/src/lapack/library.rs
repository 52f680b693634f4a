//! Which LAPACK library the handlers call, loaded once on first use, and how
//! OpenBLAS's threads are managed.
//!
//! # Which library
//!
//! `CYXLA_LAPACK=<path or soname>` names the library; nothing else is tried
//! then. Without it: `libopenblas.so.0` (Debian's `libopenblas0`), then
//! `liblapack.so.3` (whatever the `liblapack.so.3` alternative points to).
//! Nothing is linked at build time, and registration never loads the library:
//! when none loads, each LAPACK target's call fails with `FAILED_PRECONDITION`
//! and an installation hint, and every other target keeps working.
//!
//! # Threads
//!
//! OpenBLAS's thread count is process-global (`openblas_set_num_threads`), so
//! it cannot be chosen per call while calls run concurrently. We set it to 1
//! when the library loads and parallelise over the batch with rayon instead,
//! one LAPACK call per matrix per worker, each worker with its own workspace
//! (what jaxlib recommends with OpenBLAS, §1.5 of the target reference).
//!
//! Measured with Debian's OpenBLAS 0.3.21 (`openblas-pthread`) on the
//! 2-core development VM, `dgetrf` of one n×n matrix, 1 vs 2 OpenBLAS
//! threads, median of repeated runs (two runs, the machine shared with
//! builds, load average about 4):
//!
//! | n    | 1 thread        | 2 threads        |
//! |------|-----------------|------------------|
//! | 128  | 114 µs          | 140–145 µs       |
//! | 256  | 806–826 µs      | 879 µs – 3.0 ms  |
//! | 512  | 9.9–10.0 ms     | 8.6–10.9 ms      |
//! | 1024 | 47–71 ms        | 55 ms            |
//! | 2048 | 355–400 ms      | 392–593 ms       |
//!
//! The *mean* at small n is 1.4–2.7× worse with 2 threads (OpenBLAS's
//! helper thread spins and competes for the cores; the task brief measured
//! 47× at n=128). Two OpenBLAS threads never paid off here, so the policy
//! is:
//!
//! * by default OpenBLAS always runs single-threaded;
//! * `CYXLA_LAPACK_THREADS=<k>` (k ≥ 2) lets a *single* large matrix (batch
//!   of one, at least [`BIG_CALL_FLOPS`] estimated flops) use k OpenBLAS
//!   threads. Such a call holds a process-wide write lock while the thread
//!   count is raised, and every other LAPACK call holds the read side, so
//!   no call ever runs with a thread count it did not choose. Use it on
//!   machines with more (idle) cores than this one.
//!
//! Batches go to rayon's pool when their estimated cost exceeds 2·10⁵ flops
//! (jaxlib's threshold for its thread pool); through the plugin,
//! `lu_factor` of 512 matrices of 32×32 (f64) took 4.1 ms median with one
//! rayon worker and 4.3 ms (min 2.8 vs 3.6 ms) with two on the same busy VM,
//! and JAX's own CPU backend 4.7 ms: on par with jaxlib, and the batch
//! parallelism is there for machines with spare cores.
//!
//! The LAPACK bench (`benches/benches/lapack.rs`, quiet VM) showed why:
//! OpenBLAS calls on tiny matrices contend with each other.
//! `jnp.linalg.solve` over 4096 systems of 8×8 (`dgetrf_` + `dtrsm_` per
//! matrix) took 2.9–3.1 ms with one rayon worker and 5.2–5.6 ms with two
//! (each such call takes a buffer from OpenBLAS's shared memory pool). The
//! Rust kernels for small matrices (`small`, `small_eigh`) share nothing
//! and scale: 1.85 → 1.47 ms for that solve, 12.1 → 6.4 ms for `eigh` of
//! 4096 8×8 matrices; so do the LAPACK families with more arithmetic per
//! call (`qr` of 4096 8×8: 6.7 → 4.1 ms, `svd`: 40 → 20 ms).
//!
//! # CPU kernels
//!
//! OpenBLAS picks its kernels for the CPU when it loads, and
//! `OPENBLAS_CORETYPE` overrides the choice. Debian's OpenBLAS 0.3.21 does
//! not know recent Intel models (the development VM's Xeon, family 6 model
//! 207) and falls back to its generic `Prescott` (SSE3) kernels, where
//! jaxlib's newer OpenBLAS picks `SkylakeX` (AVX-512).
//! [`LapackLibrary::core_name`] tells which, and loading logs (at `info`) a
//! generic choice on a CPU with AVX2. The LAPACK bench
//! (`benches/benches/lapack.rs`) measured single 512×512 matrices 1.6–2.4×
//! faster with `OPENBLAS_CORETYPE=SkylakeX` on that VM. This crate never
//! sets the variable itself: it must be in the environment before the
//! library loads, and changing the environment of a running multi-threaded
//! process is not safe.
//!
//! The generic kernels of 0.3.21 also have a bug: once a `dsymv` has run on
//! a vector holding NaN (`?sytrd` or `?syevd` of an f64 matrix with NaN),
//! later `ssymv` calls — in any thread — can return NaN for clean inputs,
//! so f32 `?sytrd` / `?syevd` results go NaN (reproduced in C against the
//! library alone; not with the `Haswell` or `SkylakeX` kernels). Real
//! `?syevd` up to order 25 does not reach OpenBLAS here (`small_eigh`).

use std::sync::{OnceLock, RwLock};

use libloading::Library;

use crate::ffi::lapack::LapackSymbols;
use crate::handler::{ErrorCode, HandlerError};

/// Environment variable naming the LAPACK library to load.
pub const LIBRARY_ENV: &str = "CYXLA_LAPACK";
/// Environment variable enabling OpenBLAS threads for single large matrices.
pub const THREADS_ENV: &str = "CYXLA_LAPACK_THREADS";
/// Libraries tried, in order, when [`LIBRARY_ENV`] is not set.
pub const DEFAULT_LIBRARIES: [&str; 2] = ["libopenblas.so.0", "liblapack.so.3"];
/// Estimated flops from which a single matrix may use OpenBLAS threads (when
/// [`THREADS_ENV`] allows it): about a 1000×1000 LU.
pub const BIG_CALL_FLOPS: f64 = 6.0e8;

/// A loaded LAPACK library.
pub struct LapackLibrary {
    symbols: LapackSymbols,
    name: String,
    config: Option<String>,
    core_name: Option<String>,
    threads_for_big_calls: usize,
}

impl LapackLibrary {
    /// The resolved routines.
    pub(crate) fn symbols(&self) -> &LapackSymbols {
        &self.symbols
    }

    /// The name or path the library was loaded from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// OpenBLAS's build configuration (`openblas_get_config`), when the
    /// library is OpenBLAS.
    pub fn config(&self) -> Option<&str> {
        self.config.as_deref()
    }

    /// The CPU kernels OpenBLAS chose (`openblas_get_corename`, e.g.
    /// `Haswell`, `SkylakeX`), when the library is OpenBLAS. OpenBLAS 0.3.21
    /// falls back to its generic `Prescott` kernels on CPUs it does not know;
    /// `OPENBLAS_CORETYPE` overrides its choice.
    pub fn core_name(&self) -> Option<&str> {
        self.core_name.as_deref()
    }

    /// OpenBLAS threads a single large matrix may use (1 = never threaded).
    pub fn threads_for_big_calls(&self) -> usize {
        self.threads_for_big_calls
    }

    fn set_threads(&self, n: usize) {
        if let Some(set) = self.symbols.openblas_set_num_threads {
            let n = i32::try_from(n).unwrap_or(i32::MAX);
            // SAFETY: `openblas_set_num_threads(int)` has no preconditions.
            unsafe { set(n) };
        }
    }

    /// Runs `f`, which makes LAPACK calls costing about `flops` in total on
    /// one matrix (`single`) or several, under the thread policy above.
    pub(crate) fn run<R>(&self, flops: f64, single: bool, f: impl FnOnce() -> R) -> R {
        let threads = openblas_threads(self.threads_for_big_calls, flops, single);
        if threads > 1 {
            let _exclusive = THREAD_GATE.write().unwrap_or_else(|e| e.into_inner());
            self.set_threads(threads);
            // Back to one thread even if `f` panics.
            let _reset = ResetThreads(self);
            f()
        } else {
            let _shared = THREAD_GATE.read().unwrap_or_else(|e| e.into_inner());
            f()
        }
    }
}

/// Sets OpenBLAS back to one thread when dropped.
struct ResetThreads<'a>(&'a LapackLibrary);

impl Drop for ResetThreads<'_> {
    fn drop(&mut self) {
        self.0.set_threads(1);
    }
}

/// OpenBLAS threads for a call of about `flops` on one matrix (`single`) or
/// a batch, when big single calls may use `configured` threads.
fn openblas_threads(configured: usize, flops: f64, single: bool) -> usize {
    if single && configured > 1 && flops >= BIG_CALL_FLOPS {
        configured
    } else {
        1
    }
}

/// Held for reading by every single-threaded LAPACK call and for writing by a
/// call that raises OpenBLAS's global thread count.
static THREAD_GATE: RwLock<()> = RwLock::new(());

/// Why no LAPACK library could be loaded: every candidate and its error.
#[derive(Clone, Debug)]
pub struct LoadError {
    /// `(candidate, error)` for each library tried.
    pub attempts: Vec<(String, String)>,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no LAPACK library could be loaded (")?;
        for (i, (name, err)) in self.attempts.iter().enumerate() {
            if i > 0 {
                write!(f, "; ")?;
            }
            write!(f, "{name}: {err}")?;
        }
        write!(
            f,
            "); install OpenBLAS with `apt-get install libopenblas0` (or run scripts/setup.sh), \
             or set {LIBRARY_ENV} to a LAPACK shared library built with gfortran and 32-bit integers"
        )
    }
}

impl std::error::Error for LoadError {}

static LIBRARY: OnceLock<Result<LapackLibrary, LoadError>> = OnceLock::new();

/// The LAPACK library, loaded on first use (see the module docs).
///
/// # Errors
///
/// Every candidate that failed, with an installation hint.
pub fn library() -> Result<&'static LapackLibrary, &'static LoadError> {
    LIBRARY.get_or_init(load).as_ref()
}

/// The library for target `target`, or the `FAILED_PRECONDITION` error its
/// call returns.
pub(crate) fn library_for(target: &str) -> Result<&'static LapackLibrary, HandlerError> {
    library().map_err(|e| {
        HandlerError::new(
            ErrorCode::FailedPrecondition,
            format!("{target}: cannot run the native LAPACK handler: {e}"),
        )
    })
}

fn load() -> Result<LapackLibrary, LoadError> {
    let candidates: Vec<String> = match std::env::var(LIBRARY_ENV) {
        Ok(v) if !v.is_empty() => vec![v],
        _ => DEFAULT_LIBRARIES.iter().map(|s| s.to_string()).collect(),
    };
    let mut attempts = Vec::new();
    for name in candidates {
        // SAFETY: loading runs the library's initialisers; the candidates are
        // system LAPACK/BLAS libraries (or the one the operator named), whose
        // initialisers only set up their thread pools.
        let library = match unsafe { Library::new(&name) } {
            Ok(l) => l,
            Err(e) => {
                attempts.push((name, e.to_string()));
                continue;
            }
        };
        // SAFETY: the candidates export the gfortran LP64 interface that
        // `LapackSymbols::load` requires (Debian's OpenBLAS and reference
        // LAPACK both do; `CYXLA_LAPACK` is documented to need it).
        let symbols = match unsafe { LapackSymbols::load(library) } {
            Ok(s) => s,
            Err((symbol, e)) => {
                attempts.push((name, format!("missing symbol `{symbol}`: {e}")));
                continue;
            }
        };
        let static_string = |get: unsafe extern "C" fn() -> *const std::ffi::c_char| {
            // SAFETY: `openblas_get_config` and `openblas_get_corename` take
            // no arguments and return a static NUL-terminated string (or
            // NULL, checked).
            let p = unsafe { get() };
            (!p.is_null()).then(|| {
                // SAFETY: non-null, static and NUL-terminated per OpenBLAS.
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_string_lossy()
                    .trim()
                    .to_owned()
            })
        };
        let config = symbols.openblas_get_config.and_then(static_string);
        let core_name = symbols.openblas_get_corename.and_then(static_string);
        let threads_for_big_calls = std::env::var(THREADS_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(1)
            .max(1);
        let lib = LapackLibrary {
            symbols,
            name,
            config,
            core_name,
            threads_for_big_calls,
        };
        lib.set_threads(1);
        tracing::debug!(
            library = %lib.name,
            config = ?lib.config,
            core = ?lib.core_name,
            "loaded LAPACK"
        );
        if lib.core_name.as_deref() == Some("Prescott") && cpu_has_avx2() {
            tracing::info!(
                "{}: OpenBLAS does not recognise this CPU and runs its generic SSE3 kernels; \
                 OPENBLAS_CORETYPE=Haswell (AVX2) or SkylakeX (AVX-512) selects faster ones",
                lib.name
            );
        }
        return Ok(lib);
    }
    Err(LoadError { attempts })
}

/// Whether the CPU has AVX2 (so that a generic OpenBLAS kernel choice is
/// worth reporting).
fn cpu_has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::{BIG_CALL_FLOPS, openblas_threads};

    #[test]
    fn only_big_single_matrices_get_openblas_threads() {
        assert_eq!(openblas_threads(1, 1e12, true), 1, "threads are opt-in");
        assert_eq!(openblas_threads(2, BIG_CALL_FLOPS, true), 2);
        assert_eq!(
            openblas_threads(2, BIG_CALL_FLOPS / 2.0, true),
            1,
            "small matrices stay single-threaded"
        );
        assert_eq!(
            openblas_threads(4, 1e12, false),
            1,
            "batches use rayon, not OpenBLAS threads"
        );
    }
}
