//! Native handlers for jaxlib's 62 CPU custom-call targets (LAPACK on
//! OpenBLAS, the perturbed tridiagonal solve and CSR × dense), so that
//! programs JAX lowers for `cpu` run on a bare XLA CPU plugin.
//!
//! Each target keeps jaxlib's name, operands, results, layouts (batches of
//! column-major matrices), aliasing, attributes and `info` semantics, as
//! specified in docs/lapack-targets.md:
//!
//! ```text
//! targets() ── NativeTarget (Handler) ── frame → Call (buffers, attrs)
//!                   │                         │
//!                   │            family::run: checks shapes, aliases
//!                   │                         │
//!                   └── library() ─── family kernel on slices, batch over rayon
//!                        (OpenBLAS, loaded on first call)   └── LapackScalar::getrf … (ffi::lapack)
//! ```
//!
//! Small real matrices skip the library: an OpenBLAS call on an 8×8 matrix
//! costs more in overhead than in arithmetic, which dominates batches of
//! small matrices. LU (`?getrf`, up to 32×32), triangular solves (`?trsm`,
//! triangles up to 32×32 with up to 64 right-hand sides) and the symmetric
//! eigensolver with vectors (`?syevd`, order up to 25) run Rust versions of
//! the same algorithms there (`small`, `small_eigh`: same pivots, same
//! eigenvector signs, rounding aside). The library is still required: the
//! targets fail without it, whatever the size, so behaviour does not depend
//! on the shapes.
//!
//! A single large real matrix goes the other way for `?syevd` and square
//! `?gesdd`: their steps are called one by one and the ones OpenBLAS's
//! threads share poorly run on threads of our own (`split::syevd`,
//! `split::gesdd`), with LAPACK's results up to rounding.
//!
//! The LAPACK library is loaded at run time on the first call (see
//! [`library()`], and [`mod@library`] for which library and how OpenBLAS
//! threads are handled). When none can be loaded, registration still
//! succeeds and each LAPACK target's call fails with `FAILED_PRECONDITION`
//! saying how to install OpenBLAS;
//! `tridiagonal_solve_perturbed_ffi` and `cpu_csr_sparse_dense_ffi` need no
//! LAPACK and always work.
//!
//! A program embedding these handlers should call
//! [`choose_openblas_kernels`] first thing in `main`, as `cyxla-host` does:
//! Debian's OpenBLAS otherwise runs generic kernels on CPUs it does not
//! know, slower and with a NaN bug (see [`mod@library`], "CPU kernels").
//!
//! # Examples
//!
//! ```no_run
//! # fn main() -> plugin_glue::Result<()> {
//! use plugin_glue::plugin::Plugin;
//!
//! // SAFETY: first thing in main, before any other thread exists.
//! unsafe { cyxla_lapack::choose_openblas_kernels() };
//! // SAFETY: the XLA CPU plugin is a PJRT plugin.
//! let plugin = unsafe { Plugin::load(std::path::Path::new("pjrt_c_api_cpu_plugin.so")) }?;
//! for (name, handler) in cyxla_lapack::targets() {
//!     plugin_glue::registry::register(&plugin, name, handler)?;
//! }
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use plugin_glue::frame::CallFrame;
use plugin_glue::handler::{Handler, HandlerError};

mod call;
mod checked;
mod fast_path;
pub mod ffi;
mod frame_adapter;
mod gees;
mod geev;
mod gehrd;
mod geqp3;
mod geqrf;
mod gesdd;
mod gesvd;
mod getrf;
mod gtsv;
pub mod library;
mod orgqr;
mod ormqr;
mod own_threads;
mod potrf;
mod scalar;
mod small;
mod small_eigh;
mod sparse;
mod split;
mod syevd;
mod sytrd;
mod tridiagonal;
mod trsm;

pub use library::{
    KernelChoice, LapackLibrary, LoadError, choose_openblas_kernels, kernel_choice, library, prefer,
};

use call::{Call, Ctx};
use num_complex::Complex;
use scalar::LapackScalar;

/// `c` routines and XLA's `C64` (two `f32`s).
type C64 = Complex<f32>;
/// `z` routines and XLA's `C128` (two `f64`s).
type C128 = Complex<f64>;

/// A family entry point that calls LAPACK.
type LapackRun = fn(&Ctx<'_>, &Call<'_>) -> Result<(), HandlerError>;
/// A target that needs no LAPACK.
type PlainRun = fn(&Call<'_>) -> Result<(), HandlerError>;

#[derive(Clone, Copy)]
enum Run {
    /// A LAPACK handler and what one flop of its element type costs
    /// relative to an f64 flop (`LapackScalar::FLOP_COST`).
    Lapack(LapackRun, f64),
    Plain(PlainRun),
}

/// One of jaxlib's CPU targets, implemented natively.
pub struct NativeTarget {
    name: &'static str,
    run: Run,
}

impl std::fmt::Debug for NativeTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeTarget")
            .field("name", &self.name)
            .field("needs_lapack", &self.needs_lapack())
            .finish()
    }
}

impl NativeTarget {
    /// jaxlib's target name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether the target calls LAPACK (all but the perturbed tridiagonal
    /// solve and the sparse product).
    pub fn needs_lapack(&self) -> bool {
        matches!(self.run, Run::Lapack(..))
    }

    fn invoke(&self, call: &Call<'_>) -> Result<(), HandlerError> {
        match self.run {
            Run::Lapack(run, flop_cost) => {
                let lib = library::library_for(self.name)?;
                run(
                    &Ctx {
                        lib,
                        target: self.name,
                        flop_cost,
                    },
                    call,
                )
            }
            Run::Plain(run) => run(call),
        }
    }
}

impl Handler for NativeTarget {
    fn execute(&self, frame: &CallFrame<'_>) -> Result<(), HandlerError> {
        let call = frame_adapter::call_from_frame(self.name, frame)?;
        self.invoke(&call)
    }
}

macro_rules! four {
    ($family:ident, $s:literal, $d:literal, $c:literal, $z:literal) => {
        four!($family, real run, complex run, $s, $d, $c, $z)
    };
    ($family:ident, real $real:ident, complex $complex:ident,
     $s:literal, $d:literal, $c:literal, $z:literal) => {
        [
            (
                $s,
                Run::Lapack($family::$real::<f32>, <f32 as LapackScalar>::FLOP_COST),
            ),
            (
                $d,
                Run::Lapack($family::$real::<f64>, <f64 as LapackScalar>::FLOP_COST),
            ),
            (
                $c,
                Run::Lapack($family::$complex::<C64>, <C64 as LapackScalar>::FLOP_COST),
            ),
            (
                $z,
                Run::Lapack($family::$complex::<C128>, <C128 as LapackScalar>::FLOP_COST),
            ),
        ]
    };
}

fn table() -> Vec<(&'static str, Run)> {
    let families: [[(&'static str, Run); 4]; 15] = [
        four!(
            trsm,
            "lapack_strsm_ffi",
            "lapack_dtrsm_ffi",
            "lapack_ctrsm_ffi",
            "lapack_ztrsm_ffi"
        ),
        four!(
            getrf,
            "lapack_sgetrf_ffi",
            "lapack_dgetrf_ffi",
            "lapack_cgetrf_ffi",
            "lapack_zgetrf_ffi"
        ),
        four!(
            potrf,
            "lapack_spotrf_ffi",
            "lapack_dpotrf_ffi",
            "lapack_cpotrf_ffi",
            "lapack_zpotrf_ffi"
        ),
        four!(
            geqrf,
            "lapack_sgeqrf_ffi",
            "lapack_dgeqrf_ffi",
            "lapack_cgeqrf_ffi",
            "lapack_zgeqrf_ffi"
        ),
        four!(
            geqp3,
            "lapack_sgeqp3_ffi",
            "lapack_dgeqp3_ffi",
            "lapack_cgeqp3_ffi",
            "lapack_zgeqp3_ffi"
        ),
        four!(
            orgqr,
            "lapack_sorgqr_ffi",
            "lapack_dorgqr_ffi",
            "lapack_cungqr_ffi",
            "lapack_zungqr_ffi"
        ),
        four!(
            ormqr,
            "lapack_sormqr_ffi",
            "lapack_dormqr_ffi",
            "lapack_cunmqr_ffi",
            "lapack_zunmqr_ffi"
        ),
        four!(
            syevd,
            "lapack_ssyevd_ffi",
            "lapack_dsyevd_ffi",
            "lapack_cheevd_ffi",
            "lapack_zheevd_ffi"
        ),
        four!(
            gesdd,
            "lapack_sgesdd_ffi",
            "lapack_dgesdd_ffi",
            "lapack_cgesdd_ffi",
            "lapack_zgesdd_ffi"
        ),
        four!(
            gesvd,
            "lapack_sgesvd_ffi",
            "lapack_dgesvd_ffi",
            "lapack_cgesvd_ffi",
            "lapack_zgesvd_ffi"
        ),
        four!(geev, real run_real, complex run_complex,
            "lapack_sgeev_ffi", "lapack_dgeev_ffi", "lapack_cgeev_ffi", "lapack_zgeev_ffi"),
        four!(gees, real run_real, complex run_complex,
            "lapack_sgees_ffi", "lapack_dgees_ffi", "lapack_cgees_ffi", "lapack_zgees_ffi"),
        four!(
            gehrd,
            "lapack_sgehrd_ffi",
            "lapack_dgehrd_ffi",
            "lapack_cgehrd_ffi",
            "lapack_zgehrd_ffi"
        ),
        four!(
            sytrd,
            "lapack_ssytrd_ffi",
            "lapack_dsytrd_ffi",
            "lapack_chetrd_ffi",
            "lapack_zhetrd_ffi"
        ),
        four!(
            gtsv,
            "lapack_sgtsv_ffi",
            "lapack_dgtsv_ffi",
            "lapack_cgtsv_ffi",
            "lapack_zgtsv_ffi"
        ),
    ];
    let plain = [
        (
            "tridiagonal_solve_perturbed_ffi",
            Run::Plain(tridiagonal::run as PlainRun),
        ),
        ("cpu_csr_sparse_dense_ffi", Run::Plain(sparse::run)),
    ];
    families.into_iter().flatten().chain(plain).collect()
}

/// Every native target, with jaxlib's exact names (62: 15 LAPACK families in
/// four dtypes, `tridiagonal_solve_perturbed_ffi` and
/// `cpu_csr_sparse_dense_ffi`), ready for
/// [`registry::register`](plugin_glue::registry::register). Loads no library.
pub fn targets() -> Vec<(&'static str, Arc<dyn Handler>)> {
    native_targets()
        .into_iter()
        .map(|t| (t.name, Arc::new(t) as Arc<dyn Handler>))
        .collect()
}

/// The same targets as [`targets`], as concrete values.
pub fn native_targets() -> Vec<NativeTarget> {
    table()
        .into_iter()
        .map(|(name, run)| NativeTarget { name, run })
        .collect()
}

/// The names [`targets`] registers.
pub fn target_names() -> Vec<&'static str> {
    table().into_iter().map(|(name, _)| name).collect()
}

#[cfg(test)]
mod tests;
