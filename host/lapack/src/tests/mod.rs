//! Unit tests of the handlers on small matrices, without XLA: each test
//! builds a [`Call`] over host vectors, runs a target's entry point and checks
//! a hand-computed result or the defining invariant (L·U = P·A, Q·R = A,
//! A·V = V·Λ, U·S·Vᴴ = A, ...), in all four dtypes.

use num_complex::Complex;

use super::call::{AttrValue, Buf, Call, Ctx};
use super::fast_path::FastPath;
use super::scalar::{Elem, RealScalar};
use super::*;
use plugin_glue::frame::Scalar;
use plugin_glue::handler::HandlerError;

// ---------------------------------------------------------------- helpers

fn lib() -> &'static LapackLibrary {
    library().unwrap_or_else(|e| panic!("{e}"))
}

/// A context counting flops as f64 ones, whatever the dtype: these tests
/// check results, not the thresholds for threads.
fn ctx(target: &'static str) -> Ctx<'static> {
    Ctx {
        lib: lib(),
        target,
        flop_cost: 1.0,
    }
}

/// A host buffer with its dims.
struct Host<T> {
    data: Vec<T>,
    dims: Vec<i64>,
}

impl<T: Elem> Host<T> {
    fn new(data: Vec<T>, dims: &[i64]) -> Self {
        assert_eq!(
            data.len() as i64,
            dims.iter().product::<i64>(),
            "test buffer size"
        );
        Host {
            data,
            dims: dims.to_vec(),
        }
    }
    fn buf(&mut self) -> Buf<'_> {
        Buf {
            dtype: T::DTYPE,
            dims: &self.dims,
            ptr: self.data.as_mut_ptr().cast(),
        }
    }
}

fn zeros<T: Elem + Default>(dims: &[i64]) -> Host<T> {
    Host::new(
        vec![T::default(); dims.iter().product::<i64>() as usize],
        dims,
    )
}

/// A call of `target` on `args`, with results `rets` and attributes
/// `attrs`.
fn call_of<'a>(
    target: &'a str,
    args: Vec<Buf<'a>>,
    rets: Vec<Buf<'a>>,
    attrs: Vec<(&'a [u8], AttrValue)>,
) -> Call<'a> {
    Call {
        target,
        args,
        rets,
        attrs,
    }
}

fn ch(name: &'static str, c: u8) -> (&'static [u8], AttrValue) {
    (name.as_bytes(), AttrValue::Scalar(Scalar::U8(c)))
}

/// A wrong attribute is an error that names the target, the attribute and
/// what came instead; integers and PRED stand in for each other only where
/// LAPACK's conventions allow.
#[test]
fn attribute_errors_name_the_attribute_and_what_came() {
    let attr = |name: &'static str, v: AttrValue| (name.as_bytes(), v);
    let call = call_of(
        "potrf",
        vec![],
        vec![],
        vec![
            attr("uplo", AttrValue::Scalar(Scalar::F32(1.5))),
            ch("c", b'X'),
            attr("s", AttrValue::Scalar(Scalar::S8(b'L' as i8))),
            attr("flag", AttrValue::Scalar(Scalar::S32(2))),
            attr("yes", AttrValue::Scalar(Scalar::Pred(true))),
            attr("one", AttrValue::Scalar(Scalar::S64(1))),
            attr("text", AttrValue::Other("string")),
            attr("list", AttrValue::Other("array")),
            attr("big", AttrValue::Scalar(Scalar::U64(u64::MAX))),
            attr("n", AttrValue::Scalar(Scalar::U32(7))),
        ],
    );
    let message = |r: Result<i64, HandlerError>| r.unwrap_err().message;
    let wide = |r: Result<u8, HandlerError>| r.map(i64::from);
    assert_eq!(
        message(wide(call.char_attr("uplo", b"UL"))),
        "potrf: attribute `uplo` must be a ui8 (or i8) character, got a f32 scalar, 1.5"
    );
    assert_eq!(
        message(wide(call.char_attr("c", b"UL"))),
        "potrf: attribute `c` is 88 ('X'), expected one of 'U', 'L'"
    );
    assert_eq!(call.char_attr("s", b"UL").unwrap(), b'L');
    assert_eq!(
        message(call.bool_attr("flag").map(i64::from)),
        "potrf: attribute `flag` must be a boolean, got a s32 scalar, 2"
    );
    assert!(call.bool_attr("yes").unwrap());
    assert!(call.bool_attr("one").unwrap());
    assert_eq!(
        message(call.int_attr("text")),
        "potrf: attribute `text` must be an integer, got a string"
    );
    assert_eq!(
        message(call.int_attr("list")),
        "potrf: attribute `list` must be an integer, got an array"
    );
    assert_eq!(
        message(call.int_attr("yes")),
        "potrf: attribute `yes` must be an integer, got a pred scalar, 1"
    );
    assert_eq!(
        message(call.int_attr("big")),
        "potrf: attribute `big` must be an integer of at most 64 bits, got a u64 scalar, \
         18446744073709552000"
    );
    assert_eq!(call.int_attr("n").unwrap(), 7);
    assert_eq!(
        message(call.int_attr("absent")),
        "potrf: missing attribute `absent`"
    );
}

/// Test-only arithmetic on the four types.
trait T: FastPath {
    fn conj(self) -> Self;
    fn tol() -> f64;
    fn mag(self) -> f64 {
        self.abs().to_f64()
    }
    fn from_f64(re: f64, im: f64) -> Self;
    fn to_c64(self) -> Complex<f64>;
}
/// `T` for a real type, whose tolerance is `$tol`.
macro_rules! real_t {
    ($t:ty, $tol:expr) => {
        impl T for $t {
            fn conj(self) -> $t {
                self
            }
            fn tol() -> f64 {
                $tol
            }
            fn from_f64(re: f64, _: f64) -> $t {
                re as $t
            }
            fn to_c64(self) -> Complex<f64> {
                Complex::new(f64::from(self), 0.0)
            }
        }
    };
}
real_t!(f32, 2e-4);
real_t!(f64, 1e-11);
/// `T` for a complex type with `$r` parts, whose tolerance is `$tol`.
macro_rules! complex_t {
    ($r:ty, $tol:expr) => {
        impl T for Complex<$r> {
            fn conj(self) -> Self {
                Complex::conj(&self)
            }
            fn tol() -> f64 {
                $tol
            }
            fn from_f64(re: f64, im: f64) -> Self {
                Complex::new(re as $r, im as $r)
            }
            fn to_c64(self) -> Complex<f64> {
                Complex::new(f64::from(self.re), f64::from(self.im))
            }
        }
    };
}
complex_t!(f32, 2e-4);
complex_t!(f64, 1e-11);

/// Deterministic values in [-1, 1): a 64-bit linear congruential stream
/// from `seed`, the test data of every test here.
pub(crate) fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let step = |s: u64| {
        s.wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
    };
    let mut state = step(seed);
    move || {
        state = step(state);
        ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// Deterministic values in [-1, 1) (complex types get an imaginary part).
fn random<S: T>(len: usize, seed: u64) -> Vec<S> {
    let mut next = uniform(seed);
    (0..len).map(|_| S::from_f64(next(), next())).collect()
}

/// Column-major matrix.
#[derive(Clone, Debug)]
struct Mat<S> {
    m: usize,
    n: usize,
    d: Vec<S>,
}

impl<S: T> Mat<S> {
    fn from(m: usize, n: usize, d: &[S]) -> Self {
        assert_eq!(d.len(), m * n);
        Mat {
            m,
            n,
            d: d.to_vec(),
        }
    }
    fn eye(n: usize) -> Self {
        let mut d = vec![S::default(); n * n];
        (0..n).for_each(|i| d[i + i * n] = one());
        Mat { m: n, n, d }
    }
    fn at(&self, i: usize, j: usize) -> S {
        self.d[i + j * self.m]
    }
    fn mul(&self, o: &Mat<S>) -> Mat<S> {
        assert_eq!(self.n, o.m);
        let mut d = vec![S::default(); self.m * o.n];
        for j in 0..o.n {
            for k in 0..self.n {
                let b = o.at(k, j);
                for i in 0..self.m {
                    d[i + j * self.m] = d[i + j * self.m] + self.at(i, k) * b;
                }
            }
        }
        Mat {
            m: self.m,
            n: o.n,
            d,
        }
    }
    fn adjoint(&self) -> Mat<S> {
        let mut d = vec![S::default(); self.m * self.n];
        for j in 0..self.n {
            for i in 0..self.m {
                d[j + i * self.n] = self.at(i, j).conj();
            }
        }
        Mat {
            m: self.n,
            n: self.m,
            d,
        }
    }
    /// Keeps entries with `lo <= j - i <= hi`.
    fn band(&self, lo: i64, hi: i64) -> Mat<S> {
        let mut r = self.clone();
        for j in 0..self.n {
            for i in 0..self.m {
                let k = j as i64 - i as i64;
                if k < lo || k > hi {
                    r.d[i + j * self.m] = S::default();
                }
            }
        }
        r
    }
    /// Column j multiplied by `f(j)`.
    fn scale_cols(&self, f: impl Fn(usize) -> S) -> Mat<S> {
        let mut r = self.clone();
        r.d.chunks_mut(self.m.max(1))
            .enumerate()
            .for_each(|(j, c)| c.iter_mut().for_each(|x| *x = *x * f(j)));
        r
    }
    fn cols(&self, n: usize) -> Mat<S> {
        Mat {
            m: self.m,
            n,
            d: self.d[..self.m * n].to_vec(),
        }
    }
    fn rows(&self, m: usize) -> Mat<S> {
        let mut d = Vec::with_capacity(m * self.n);
        (0..self.n).for_each(|j| d.extend_from_slice(&self.d[j * self.m..j * self.m + m]));
        Mat { m, n: self.n, d }
    }
}

fn one<S: T>() -> S {
    S::from_real(<S::Real as RealScalar>::ONE)
}

/// max |a - b| relative to max(1, max |b|).
#[track_caller]
fn assert_close<S: T>(a: &Mat<S>, b: &Mat<S>, what: &str) {
    assert_eq!((a.m, a.n), (b.m, b.n), "{what}: shapes");
    let scale = b.d.iter().map(|x| x.mag()).fold(1.0, f64::max);
    let diff =
        a.d.iter()
            .zip(&b.d)
            .map(|(x, y)| (*x - *y).mag())
            .fold(0.0, f64::max);
    assert!(
        diff <= S::tol() * 10.0 * scale,
        "{what}: max diff {diff:e} (scale {scale})\n{a:?}\nvs\n{b:?}"
    );
}

/// Runs a test body for the four dtypes.
macro_rules! all_dtypes {
    ($name:ident, $body:ident) => {
        #[test]
        fn $name() {
            $body::<f32>("s");
            $body::<f64>("d");
            $body::<Complex<f32>>("c");
            $body::<Complex<f64>>("z");
        }
    };
}

// ------------------------------------------------------------------ table

#[test]
fn sixty_two_distinct_targets() {
    let names = target_names();
    assert_eq!(names.len(), 62);
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 62);
    for n in [
        "lapack_sgetrf_ffi",
        "lapack_zungqr_ffi",
        "lapack_cheevd_ffi",
        "lapack_dormqr_ffi",
        "tridiagonal_solve_perturbed_ffi",
        "cpu_csr_sparse_dense_ffi",
    ] {
        assert!(names.contains(&n), "{n}");
    }
    assert_eq!(
        native_targets()
            .iter()
            .filter(|t| !t.needs_lapack())
            .count(),
        2
    );
}

#[test]
fn flop_costs_follow_the_dtype_letter() {
    let mut lapack = 0;
    for (name, run) in table() {
        if let Run::Lapack(_, cost) = run {
            let letter = name.strip_prefix("lapack_").and_then(|n| n.chars().next());
            let want = match letter {
                Some('s') => 0.5,
                Some('d') => 1.0,
                Some('c') => 2.0,
                Some('z') => 4.0,
                other => panic!("{name}: unexpected dtype letter {other:?}"),
            };
            assert_eq!(cost, want, "{name}");
            lapack += 1;
        }
    }
    assert_eq!(lapack, 60);
}

#[test]
fn load_error_says_how_to_install() {
    let e = LoadError {
        attempts: vec![("libopenblas.so.0".into(), "not found".into())],
    };
    let s = e.to_string();
    assert!(
        s.contains("libopenblas.so.0: not found")
            && s.contains("apt-get install libopenblas0")
            && s.contains("scripts/setup.sh"),
        "{s}"
    );
}

/// Q (m×qc) from reflectors via the orgqr handler.
fn form_q<S: T>(refl: &Mat<S>, tau: &[S], qc: usize) -> Mat<S> {
    let m = refl.m;
    let mut padded = vec![S::default(); m * qc];
    let c = refl.n.min(qc);
    padded[..m * c].copy_from_slice(&refl.d[..m * c]);
    let mut q = Host::new(padded, &[m as i64, qc as i64]);
    let mut t = Host::new(tau.to_vec(), &[tau.len() as i64]);
    let qb = q.buf();
    let call = call_of("orgqr", vec![qb, t.buf()], vec![qb], vec![]);
    orgqr::run::<S>(&ctx("orgqr"), &call).unwrap();
    Mat::from(m, qc, &q.data)
}

mod factor;
mod solvers;
mod spectral;
