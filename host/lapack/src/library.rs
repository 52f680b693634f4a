//! Which LAPACK library the handlers call, loaded once on first use, and how
//! OpenBLAS's threads are managed.
//!
//! # Which library
//!
//! `CYXLA_LAPACK=<path or soname>` names the library; nothing else is tried
//! then. Without it: the libraries the program [`prefer`]s (`cyxla-host`
//! and the cyxla PJRT library name the `scipy-openblas32` OpenBLAS of the
//! Python environment they are installed in), then `libopenblas.so.0`
//! (Debian's `libopenblas0`), then `liblapack.so.3` (whatever the
//! `liblapack.so.3` alternative points to).
//! The library may export its names with the `scipy_` prefix (the
//! `scipy-openblas32` OpenBLAS that numpy and scipy wheels bundle,
//! `scipy.libs/libscipy_openblas-*.so`): the prefix is recognised
//! (docs/performance.md, "LAPACK library").
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
//! (what jaxlib recommends with OpenBLAS: docs/lapack-targets.md, "Batching").
//! Small matrices lose with OpenBLAS threads; single large ones gain
//! (docs/performance.md, "OpenBLAS threads"). So:
//!
//! * a *single* matrix (batch of one) estimated at [`BIG_CALL_FLOPS`] or
//!   more, counted in f64 flops (an f32 flop counts half, a complex one two
//!   or four real ones: `LapackScalar::FLOP_COST`), runs on OpenBLAS
//!   threads, as many as the machine has cores, at most
//!   [`MAX_DEFAULT_THREADS`] (jaxlib's OpenBLAS uses every core for every
//!   call). `CYXLA_LAPACK_THREADS=<k>` sets that number; 1 turns OpenBLAS
//!   threads off;
//! * such a call raises the thread count only when no other LAPACK call is
//!   running (it takes a process-wide lock for writing, which every other
//!   LAPACK call holds for reading); otherwise it runs on one thread, as
//!   they do. No call ever runs with a thread count it did not choose, and
//!   none waits for another to finish;
//! * everything else runs single-threaded.
//!
//! A single large real `?syevd`, and a single large square real `?gesdd`
//! with vectors, are split over threads of our own instead (`syevd::split`,
//! `gesdd::split`): the steps OpenBLAS's threads share poorly run at once,
//! one thread each (for `?gesdd`, its two final `?ormbr` products). Two
//! things decide whether a split pays on a small machine, and the split
//! deals with both:
//! * OpenBLAS's idle worker keeps spinning for a while after a threaded
//!   call (calling `sched_yield` in older builds, a busy loop in newer
//!   ones: docs/performance.md, "Thread scheduling") and holds a core. The
//!   split's first steps run on OpenBLAS's threads only when the call has
//!   more than two, and it ends the workers (`blas_thread_shutdown_`)
//!   before its own threads start.
//! * a new thread is often queued behind its busy creator rather than put
//!   on the idle core, and then runs only once the creator has finished its
//!   own half. Each helper thread therefore takes the creator's CPU out of
//!   its own affinity set, and the creator waits until its helpers run.
//!
//! Measurements: docs/performance.md, "Split LAPACK calls", "Thread scheduling".
//!
//! Batches go to rayon's pool when their estimated cost exceeds 2·10⁵ flops
//! (jaxlib's threshold for its thread pool). OpenBLAS calls on tiny
//! matrices contend with each other (each takes a buffer from OpenBLAS's
//! shared memory pool); the Rust kernels for small matrices (`small`,
//! `small_eigh`) share nothing and scale (docs/performance.md, "Batches").
//!
//! # CPU kernels
//!
//! OpenBLAS picks its kernels for the CPU when it loads, and
//! `OPENBLAS_CORETYPE` overrides the choice. Debian's OpenBLAS 0.3.21 does
//! not know recent Intel models (the development VM's Xeon, family 6 model
//! 207) and falls back to its generic `Prescott` (SSE3) kernels, where
//! jaxlib's newer OpenBLAS picks `SkylakeX` (AVX-512). The generic kernels
//! are slow (docs/performance.md, "OpenBLAS CPU kernels") and wrong:
//! once a `dsymv` has run on a vector holding NaN (`?sytrd` or `?syevd` of
//! an f64 matrix with NaN), later `ssymv` calls — in any thread — can
//! return NaN for clean inputs, so f32 `?sytrd` / `?syevd` results go NaN
//! (reproduced in C against the library alone; not with the `Haswell` or
//! `SkylakeX` kernels).
//!
//! So programs call [`choose_openblas_kernels`] first thing in `main`: when
//! `OPENBLAS_CORETYPE` is unset it names the kernels this CPU's features
//! support — `SkylakeX` with AVX-512 (F, CD, BW, DQ, VL), `Haswell` with
//! AVX2 and FMA — before the library loads. A value already set is never
//! changed. The variable must be set before the library loads and cannot
//! be set safely once other threads run, so a process that embeds
//! plugin-glue without calling it keeps OpenBLAS's own choice;
//! [`LapackLibrary::core_name`] tells which kernels run, and loading logs
//! (at `info`) a generic choice, naming the better kernels. Real `?syevd` up to
//! order 25 does not reach OpenBLAS at all (`small_eigh`).

use std::sync::{OnceLock, RwLock, RwLockWriteGuard, TryLockError};

use libloading::Library;

use crate::ffi::LapackSymbols;
use plugin_glue::handler::{ErrorCode, HandlerError};

/// Environment variable naming the LAPACK library to load.
pub const LAPACK_LIBRARY_ENV: &str = "CYXLA_LAPACK";
/// OpenBLAS's variable naming the CPU kernels it loads.
pub const CORETYPE_ENV: &str = "OPENBLAS_CORETYPE";
/// Environment variable enabling OpenBLAS threads for single large matrices.
pub const THREADS_ENV: &str = "CYXLA_LAPACK_THREADS";
/// Libraries tried, in order, when [`LAPACK_LIBRARY_ENV`] is not set.
pub const DEFAULT_LIBRARIES: [&str; 2] = ["libopenblas.so.0", "liblapack.so.3"];
/// Estimated flops from which a single matrix may use OpenBLAS threads
/// (module docs, "Threads").
pub const BIG_CALL_FLOPS: f64 = 1.0e9;
/// Default cap on the OpenBLAS threads of one large call.
pub const MAX_DEFAULT_THREADS: usize = 8;

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
        if threads > 1
            && let Some(exclusive) = self.exclusive()
        {
            exclusive.set_openblas_threads(threads);
            // Back to one thread when `exclusive` drops, even if `f` panics.
            return f();
        }
        // One thread: another call may hold the threads, or none is worth it.
        let _shared = THREAD_GATE.read().unwrap_or_else(|e| e.into_inner());
        f()
    }

    /// The right to choose OpenBLAS's thread count for as long as the
    /// returned value lives, for a single large call that splits work over
    /// threads of its own and so sets OpenBLAS's count step by step
    /// ([`Exclusive::set_openblas_threads`]). `None` when big calls may use
    /// only one thread or another LAPACK call is running (the call then runs
    /// as any other, on one thread); as in [`LapackLibrary::run`], nobody
    /// waits.
    pub(crate) fn exclusive(&self) -> Option<Exclusive<'_>> {
        if self.threads_for_big_calls < 2 {
            return None;
        }
        let gate = match THREAD_GATE.try_write() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(Exclusive {
            reset: ResetThreads(self),
            _gate: gate,
        })
    }
}

/// A call's exclusive right to OpenBLAS's thread count
/// ([`LapackLibrary::exclusive`]); OpenBLAS is back on one thread when it is
/// dropped.
pub(crate) struct Exclusive<'a> {
    // Field order matters: the thread count is reset before the gate opens.
    reset: ResetThreads<'a>,
    _gate: RwLockWriteGuard<'static, ()>,
}

impl Exclusive<'_> {
    /// Threads the call may use, OpenBLAS's or its own (at least 2).
    pub(crate) fn threads(&self) -> usize {
        self.reset.0.threads_for_big_calls
    }

    /// Whether a split call's first steps (`?sytrd`; `?gebrd` and `?bdsdc`)
    /// may run on OpenBLAS's threads: only when the call has more than two
    /// threads. With two, OpenBLAS's worker has to be ended before the
    /// split's own two threads start (module docs), and starting it for
    /// each call cost more than its share of those steps gained: a restarted
    /// worker spins on a core after the call, where XLA runs the program's
    /// next operations, and one started right before the step is queued
    /// behind its creator (docs/performance.md, "Thread scheduling").
    pub(crate) fn openblas_threads_before_split(&self) -> bool {
        self.threads() > 2
    }

    /// Sets OpenBLAS's thread count, at most [`Exclusive::threads`].
    pub(crate) fn set_openblas_threads(&self, n: usize) {
        self.reset.0.set_threads(n.clamp(1, self.threads()));
    }

    /// Puts OpenBLAS on the threads the policy above gives a single matrix
    /// costing about `flops` (in f64 flops); whether that is more than one.
    pub(crate) fn raise_for(&self, flops: f64) -> bool {
        let threads = openblas_threads(self.threads(), flops, true);
        self.set_openblas_threads(threads);
        threads > 1
    }

    /// Puts OpenBLAS on one thread and ends its idle workers, which would
    /// otherwise keep spinning on the cores the call's own threads need
    /// next (module docs). The next threaded call starts them again.
    ///
    /// Safe as long as every call into this OpenBLAS goes through the gate,
    /// as plugin-glue's do: a program that also calls the same library
    /// elsewhere, on OpenBLAS threads, could have work queued on the
    /// workers this ends.
    pub(crate) fn end_openblas_workers(&self) {
        let lib = self.reset.0;
        lib.set_threads(1);
        if let Some(shutdown) = lib.symbols.blas_thread_shutdown {
            // SAFETY: no other LAPACK call runs while the gate is held for
            // writing, so no OpenBLAS work is queued on the workers being
            // joined; OpenBLAS starts its server again on demand.
            unsafe { shutdown() };
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

/// The gate held as a single-threaded call holds it, for tests that call the
/// library directly for their reference results: without it, a split call
/// in a test running beside them could raise OpenBLAS's thread count or end
/// its workers under them (see [`LapackLibrary::end_openblas_workers`]).
#[cfg(test)]
pub(crate) fn shared_gate() -> std::sync::RwLockReadGuard<'static, ()> {
    THREAD_GATE.read().unwrap_or_else(|e| e.into_inner())
}

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
            "); install OpenBLAS with `pip install scipy-openblas32` (into the environment cyxla \
             is installed in) or `apt-get install libopenblas0` (or run scripts/setup.sh), \
             or set {LAPACK_LIBRARY_ENV} to a LAPACK shared library built with gfortran and 32-bit integers"
        )
    }
}

impl std::error::Error for LoadError {}

static LIBRARY: OnceLock<Result<LapackLibrary, LoadError>> = OnceLock::new();

/// Libraries tried before [`DEFAULT_LIBRARIES`] (see [`prefer`]).
static PREFERRED: OnceLock<Vec<String>> = OnceLock::new();

/// Names the libraries to try, in order, before [`DEFAULT_LIBRARIES`] when
/// [`LAPACK_LIBRARY_ENV`] is not set: what a program knows of its installation
/// (the OpenBLAS wheel beside it). The first call wins and only counts
/// before the library loads; returns whether it was that call.
pub fn prefer(libraries: Vec<String>) -> bool {
    PREFERRED.set(libraries).is_ok() && LIBRARY.get().is_none()
}

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
    let candidates: Vec<String> = match std::env::var(LAPACK_LIBRARY_ENV) {
        Ok(v) if !v.is_empty() => vec![v],
        _ => PREFERRED
            .get()
            .into_iter()
            .flatten()
            .cloned()
            .chain(DEFAULT_LIBRARIES.iter().map(|s| s.to_string()))
            .collect(),
    };
    let mut attempts = Vec::new();
    for name in candidates {
        // SAFETY: loading runs the library's initialisers; the candidates are
        // system LAPACK/BLAS libraries, the OpenBLAS the program installed
        // beside itself, or the one the operator named, whose initialisers
        // only set up their thread pools.
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
            .unwrap_or_else(default_threads)
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
        if let (Some("Prescott"), Some(better)) = (lib.core_name.as_deref(), kernels_for_cpu()) {
            tracing::info!(
                "{}: OpenBLAS does not recognise this CPU and runs its generic SSE3 kernels; \
                 OPENBLAS_CORETYPE={better} selects faster ones (choose_openblas_kernels)",
                lib.name
            );
        }
        return Ok(lib);
    }
    Err(LoadError { attempts })
}

/// What [`choose_openblas_kernels`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelChoice {
    /// `OPENBLAS_CORETYPE` was already set (to this value) and was kept.
    Kept(String),
    /// `OPENBLAS_CORETYPE` was unset and is now this.
    Chose(&'static str),
    /// `OPENBLAS_CORETYPE` was unset and stays unset: the CPU has neither
    /// AVX-512 nor AVX2 with FMA, so OpenBLAS's own choice stands.
    LeftToOpenBlas,
}

impl std::fmt::Display for KernelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelChoice::Kept(v) => write!(f, "{CORETYPE_ENV}={v} (from the environment)"),
            KernelChoice::Chose(v) => {
                write!(f, "{CORETYPE_ENV}={v} (chosen from the CPU's features)")
            }
            KernelChoice::LeftToOpenBlas => write!(f, "OpenBLAS's own choice"),
        }
    }
}

static CHOICE: OnceLock<KernelChoice> = OnceLock::new();

/// What [`choose_openblas_kernels`] did, if this process called it.
pub fn kernel_choice() -> Option<&'static KernelChoice> {
    CHOICE.get()
}

/// Names OpenBLAS's CPU kernels for this process from the CPU's features
/// when `OPENBLAS_CORETYPE` is unset (see the module docs): `SkylakeX` with
/// AVX-512, `Haswell` with AVX2 and FMA. A value already set is kept.
/// Does nothing once the LAPACK library has loaded (OpenBLAS reads the
/// variable only then), and returns the first call's choice when called
/// again.
///
/// # Safety
///
/// It may change the process environment (`std::env::set_var`): call it
/// before any other thread exists — first thing in `main` — so that nothing
/// reads the environment concurrently.
pub unsafe fn choose_openblas_kernels() -> KernelChoice {
    CHOICE
        .get_or_init(|| {
            if let Some(v) = std::env::var_os(CORETYPE_ENV) {
                return KernelChoice::Kept(v.to_string_lossy().into_owned());
            }
            if LIBRARY.get().is_some() {
                return KernelChoice::LeftToOpenBlas;
            }
            match kernels_for_cpu() {
                Some(name) => {
                    // SAFETY: the caller guarantees that no other thread
                    // exists, so nothing reads the environment concurrently.
                    unsafe { std::env::set_var(CORETYPE_ENV, name) };
                    KernelChoice::Chose(name)
                }
                None => KernelChoice::LeftToOpenBlas,
            }
        })
        .clone()
}

/// The OpenBLAS kernel set this CPU's features support, best first.
fn kernels_for_cpu() -> Option<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        // The instruction sets OpenBLAS's SkylakeX kernels use (checked with
        // the OS's support for the AVX-512 state, as the macro does).
        if has!("avx512f")
            && has!("avx512cd")
            && has!("avx512bw")
            && has!("avx512dq")
            && has!("avx512vl")
        {
            return Some("SkylakeX");
        }
        if has!("avx2") && has!("fma") {
            return Some("Haswell");
        }
        None
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// OpenBLAS threads for one large call when [`THREADS_ENV`] is unset: the
/// cores this process may use, at most [`MAX_DEFAULT_THREADS`].
fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_DEFAULT_THREADS)
}

#[cfg(test)]
mod tests {
    use super::{BIG_CALL_FLOPS, THREAD_GATE, library, openblas_threads};

    #[test]
    fn only_big_single_matrices_get_openblas_threads() {
        assert_eq!(openblas_threads(1, 1e12, true), 1, "1 turns threads off");
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

    /// A big call raises OpenBLAS's thread count only while no other LAPACK
    /// call runs, and always puts it back to one.
    #[test]
    fn a_big_call_stays_on_one_thread_while_another_call_runs() {
        let lib = library().unwrap_or_else(|e| panic!("{e}"));
        let get = lib
            .symbols()
            .openblas_get_num_threads
            .expect("the LAPACK library is OpenBLAS (scripts/setup.sh installs it)");
        // SAFETY: `openblas_get_num_threads(void)` has no preconditions.
        let threads = || unsafe { get() };
        let configured = i32::try_from(lib.threads_for_big_calls()).expect("a few threads");
        // Other tests may run LAPACK calls concurrently: then this one keeps
        // one thread too.
        let alone = lib.run(1e12, true, threads);
        assert!(
            alone == configured || alone == 1,
            "{alone} threads, configured {configured}"
        );
        assert_eq!(threads(), 1, "back to one thread after the call");
        {
            let _another_call = THREAD_GATE.read().expect("the gate");
            assert_eq!(lib.run(1e12, true, threads), 1);
        }
        assert_eq!(threads(), 1);
    }
}
