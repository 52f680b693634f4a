//! End-to-end tests of the native LAPACK handlers on the real XLA CPU plugin.
//!
//! `tests/gen_lapack_programs.py` lowered JAX functions (jnp.linalg.inv,
//! solve, cholesky, det, qr, eigh, svd, eig, schur, ...) with `jax.export`
//! into `tests/programs/lapack/`, together with random inputs and JAX's own
//! CPU results. Each test here registers `cyxla_lapack::targets()`
//! with the bare plugin (which has no LAPACK targets of its own), compiles
//! the programs of one family, runs them and compares with JAX's results as
//! the manifest says (`close`, `exact`, or up to the phase of each column or
//! row for singular vectors and eigenvectors).
//!
//! The plugin is `.venv/lib/python3.11/site-packages/lammps_jax_pjrt_cpu/
//! pjrt_c_api_cpu_plugin.so` in the workspace (override with
//! `CYXLA_PLUGIN`); `scripts/setup.sh` installs it, JAX and OpenBLAS.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use cyxla_pjrt_client::Client;
use num_complex::Complex;
use plugin_glue::DType;
use plugin_glue::plugin::Plugin;
use serde_json::Value;

fn workspace() -> PathBuf {
    // host/lapack → the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("host/lapack is two levels down")
        .to_path_buf()
}

fn programs_dir() -> PathBuf {
    workspace().join("tests/programs/lapack")
}

fn plugin_path() -> PathBuf {
    match std::env::var_os("CYXLA_PLUGIN") {
        Some(p) => PathBuf::from(p),
        None => workspace().join(
            ".venv/lib/python3.11/site-packages/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so",
        ),
    }
}

/// The plugin with every native target registered, and a one-device client.
fn client() -> &'static Client {
    static CLIENT: OnceLock<Result<Client, String>> = OnceLock::new();
    let setup = || -> Result<Client, String> {
        let path = plugin_path();
        if !path.exists() {
            return Err(format!(
                "the XLA CPU plugin {} is missing: run scripts/setup.sh (it installs the Python venv with the PJRT plugins)",
                path.display()
            ));
        }
        // SAFETY: the default XLA CPU plugin that scripts/setup.sh installs.
        let plugin = unsafe { Plugin::load(&path) }
            .map_err(|e| format!("loading {}: {e}", path.display()))?;
        for (name, handler) in cyxla_lapack::targets() {
            plugin_glue::registry::register(&plugin, name, handler)
                .map_err(|e| format!("registering {name}: {e}"))?;
        }
        Client::new(&plugin, Some(1)).map_err(|e| format!("creating a client: {e}"))
    };
    match CLIENT.get_or_init(setup) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

fn manifest() -> &'static Value {
    static MANIFEST: OnceLock<Value> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let path = programs_dir().join("manifest.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; regenerate with `.venv/bin/python tests/gen_lapack_programs.py`",
                path.display()
            )
        });
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    })
}

fn programs() -> &'static [Value] {
    manifest()["programs"]
        .as_array()
        .expect("manifest has a programs array")
}

fn dtype(name: &str) -> DType {
    match name {
        "f32" => DType::F32,
        "f64" => DType::F64,
        "c64" => DType::C64,
        "c128" => DType::C128,
        "s32" => DType::S32,
        "s64" => DType::S64,
        "pred" => DType::Pred,
        other => panic!("manifest dtype {other} is not handled by this test"),
    }
}

/// A `.npy` file's data bytes (little-endian, C order), after checking its
/// header against the manifest's shape.
fn read_npy(path: &Path, shape: &[i64]) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        bytes.starts_with(b"\x93NUMPY"),
        "{} is not a .npy file",
        path.display()
    );
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
    };
    let header = std::str::from_utf8(&bytes[start..start + header_len]).expect("ASCII header");
    assert!(
        header.contains("'fortran_order': False"),
        "{}: Fortran order is not supported",
        path.display()
    );
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let want = match dims.len() {
        0 => "()".to_string(),
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    assert!(
        header.contains(&format!("'shape': {want}")),
        "{}: header {header} does not have shape {want}",
        path.display()
    );
    bytes[start + header_len..].to_vec()
}

/// Values as complex f64 (real types get im = 0), for the float comparisons.
fn as_complex(bytes: &[u8], dt: DType) -> Vec<Complex<f64>> {
    let f32s = |c: &[u8]| f32::from_le_bytes(c.try_into().unwrap()) as f64;
    let f64s = |c: &[u8]| f64::from_le_bytes(c.try_into().unwrap());
    match dt {
        DType::F32 => bytes
            .chunks_exact(4)
            .map(|c| Complex::new(f32s(c), 0.0))
            .collect(),
        DType::F64 => bytes
            .chunks_exact(8)
            .map(|c| Complex::new(f64s(c), 0.0))
            .collect(),
        DType::C64 => bytes
            .chunks_exact(8)
            .map(|c| Complex::new(f32s(&c[..4]), f32s(&c[4..])))
            .collect(),
        DType::C128 => bytes
            .chunks_exact(16)
            .map(|c| Complex::new(f64s(&c[..8]), f64s(&c[8..])))
            .collect(),
        other => panic!("{other:?} is not a floating-point type"),
    }
}

fn is_nan(c: Complex<f64>) -> bool {
    c.re.is_nan() || c.im.is_nan()
}

/// `close` comparison; `Err` describes the worst element.
fn compare_close(got: &[Complex<f64>], want: &[Complex<f64>], tol: f64) -> Result<(), String> {
    let scale = want
        .iter()
        .filter(|w| !is_nan(**w))
        .map(|w| w.norm())
        .fold(1.0, f64::max);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if is_nan(*w) {
            if !is_nan(*g) {
                return Err(format!("element {i}: got {g}, want NaN"));
            }
            continue;
        }
        let diff = (g - w).norm();
        if diff.is_nan() || diff > tol * scale {
            return Err(format!(
                "element {i}: got {g}, want {w} (|diff| {diff:e} > {:e})",
                tol * scale
            ));
        }
    }
    Ok(())
}

/// Scales each column (`columns = true`) or row of every matrix in `got` by
/// the unit factor that maps it onto `want` at `want`'s largest entry.
fn align_phases(got: &mut [Complex<f64>], want: &[Complex<f64>], shape: &[i64], columns: bool) {
    let (m, n) = match shape {
        [.., m, n] => (*m as usize, *n as usize),
        _ => return,
    };
    if m * n == 0 {
        return;
    }
    let (vectors, len) = if columns { (n, m) } else { (m, n) };
    let at = |j: usize, i: usize| if columns { i * n + j } else { j * n + i };
    for base in (0..got.len()).step_by(m * n) {
        for j in 0..vectors {
            let k = (0..len)
                .max_by(|&a, &b| {
                    want[base + at(j, a)]
                        .norm()
                        .total_cmp(&want[base + at(j, b)].norm())
                })
                .unwrap();
            let (g, w) = (got[base + at(j, k)], want[base + at(j, k)]);
            if g.norm() == 0.0 || is_nan(g) || is_nan(w) {
                continue;
            }
            let ratio = w / g;
            let factor = ratio / ratio.norm();
            (0..len).for_each(|i| got[base + at(j, i)] *= factor);
        }
    }
}

/// Compiles and runs one program; `Err` says what differs.
fn run_program(client: &Client, prog: &Value) -> Result<(), String> {
    let dir = programs_dir();
    let text =
        std::fs::read(dir.join(prog["mlir"].as_str().unwrap())).map_err(|e| e.to_string())?;
    let exe = client
        .compile(&text, 1)
        .map_err(|e| format!("compile: {e}"))?;
    let shape = |v: &Value| -> Vec<i64> {
        v["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_i64().unwrap())
            .collect()
    };
    let mut inputs = Vec::new();
    for input in prog["inputs"].as_array().unwrap() {
        let dims = shape(input);
        let bytes = read_npy(&dir.join(input["file"].as_str().unwrap()), &dims);
        let dt = dtype(input["xla_dtype"].as_str().unwrap());
        inputs.push(
            client
                .buffer_from_host(&bytes, dt, &dims, 0)
                .map_err(|e| format!("upload: {e}"))?,
        );
    }
    let args: Vec<&_> = inputs.iter().collect();
    let outputs = exe.execute(&[args]).map_err(|e| format!("execute: {e}"))?;
    let outputs = &outputs[0];
    let expected = prog["outputs"].as_array().unwrap();
    if outputs.len() != expected.len() {
        return Err(format!(
            "{} outputs, expected {}",
            outputs.len(),
            expected.len()
        ));
    }
    let tol = prog["tolerance"].as_f64().unwrap();
    for (k, (out, want)) in outputs.iter().zip(expected).enumerate() {
        let dims = shape(want);
        let dt = dtype(want["xla_dtype"].as_str().unwrap());
        let got_dt = out.dtype().map_err(|e| e.to_string())?;
        let got_dims = out.dims().map_err(|e| e.to_string())?;
        if got_dt != dt || got_dims != dims {
            return Err(format!(
                "output {k}: {got_dt:?}{got_dims:?}, expected {dt:?}{dims:?}"
            ));
        }
        let got = out.to_host().map_err(|e| format!("output {k}: {e}"))?;
        let want_bytes = read_npy(&dir.join(want["file"].as_str().unwrap()), &dims);
        let mode = want["compare"].as_str().unwrap();
        let result = match mode {
            "exact" => (got == want_bytes)
                .then_some(())
                .ok_or_else(|| "bytes differ".to_string()),
            "close" | "cols_phase" | "rows_phase" => {
                let mut g = as_complex(&got, dt);
                let w = as_complex(&want_bytes, dt);
                if mode != "close" {
                    align_phases(&mut g, &w, &dims, mode == "cols_phase");
                }
                compare_close(&g, &w, tol)
            }
            other => Err(format!("unknown comparison {other}")),
        };
        result.map_err(|e| format!("output {k} ({mode}): {e}"))?;
    }
    Ok(())
}

/// Runs every program whose name starts with one of `prefixes`.
fn run_family(prefixes: &[&str]) {
    if let Err(e) = cyxla_lapack::library() {
        panic!("{e}");
    }
    let client = client();
    let mut ran = 0;
    let mut failures = Vec::new();
    for prog in programs() {
        let name = prog["name"].as_str().unwrap();
        if !prefixes.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        ran += 1;
        if let Err(e) = run_program(client, prog) {
            failures.push(format!(
                "{name} [{}]: {e}",
                prog["description"].as_str().unwrap_or("")
            ));
        }
    }
    assert!(
        ran > 0,
        "no program matches {prefixes:?}: regenerate tests/programs/lapack"
    );
    assert!(
        failures.is_empty(),
        "{} of {ran} programs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_target_has_a_program() {
    let mut covered: Vec<&str> = programs()
        .iter()
        .flat_map(|p| {
            p["targets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
        })
        .collect();
    covered.sort();
    covered.dedup();
    let mut ours = cyxla_lapack::target_names();
    ours.sort();
    assert_eq!(
        covered, ours,
        "the programs must exercise exactly the 62 registered targets"
    );
}

/// One test per family: `name: [prefixes]` runs the programs whose names
/// start with one of the prefixes (see [`run_family`]).
macro_rules! families {
    ($($name:ident: [$($prefix:literal),+],)*) => {
        $(
            #[test]
            fn $name() {
                run_family(&[$($prefix),+]);
            }
        )*
    };
}

families! {
    trsm: ["trsm_"],
    getrf: ["getrf_"],
    potrf: ["potrf_"],
    qr: ["qr_", "geqp3_", "ormqr_", "orgqr_"],
    eigh: ["eigh", "eigvalsh"],
    svd: ["svd", "gesvd_"],
    eig: ["eig_", "eigvals"],
    schur: ["schur", "sqrtm"],
    hessenberg: ["hessenberg"],
    tridiagonal: ["tridiagonal_", "gtsv"],
    csr: ["csr_"],
}

/// Environment variable that tells the child process of
/// `missing_library_fails_with_install_hint` it is the child.
const CHILD_ENV: &str = "CYXLA_LAPACK_TEST_CHILD";

#[test]
fn missing_library_fails_with_install_hint() {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(exe)
        .args([
            "--exact",
            "missing_library_child",
            "--include-ignored",
            "--nocapture",
        ])
        .env("CYXLA_LAPACK", "/nonexistent/libcyxla-no-lapack.so.0")
        .env(CHILD_ENV, "1")
        .output()
        .expect("running the test binary again");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("1 passed"),
        "the child test failed:\n{text}"
    );
}

/// With `CYXLA_LAPACK` naming a library that does not exist: registration
/// works, a LAPACK target fails with FAILED_PRECONDITION and an installation
/// hint, and the targets that need no LAPACK still run.
#[test]
#[ignore = "runs in a child process with CYXLA_LAPACK pointing nowhere; see missing_library_fails_with_install_hint"]
fn missing_library_child() {
    assert_eq!(
        std::env::var(CHILD_ENV).as_deref(),
        Ok("1"),
        "run through missing_library_fails_with_install_hint"
    );
    assert!(
        cyxla_lapack::library().is_err(),
        "CYXLA_LAPACK points nowhere, yet a library loaded"
    );
    let client = client();
    let find = |name: &str| {
        programs()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no program {name}"))
    };
    let err = run_program(client, find("getrf_inv_s"))
        .expect_err("a LAPACK target must fail without LAPACK");
    for needle in [
        "FAILED_PRECONDITION",
        "lapack_sgetrf_ffi",
        "/nonexistent/libcyxla-no-lapack.so.0",
        "apt-get install libopenblas0",
        "scripts/setup.sh",
    ] {
        assert!(err.contains(needle), "error lacks `{needle}`: {err}");
    }
    run_program(client, find("csr_matmat_i32_d")).expect("the CSR target needs no LAPACK");
    run_program(client, find("tridiagonal_perturbed_d"))
        .expect("the perturbed solve needs no LAPACK");
}
