//! The native LAPACK targets through the `cyxla-host` binary: registered by
//! default, so JAX-lowered linalg programs run and match JAX; turned off by
//! `--no-lapack`, so they fail with XLA's message and our hint; and without
//! a loadable LAPACK library, LAPACK calls fail with an installation hint
//! while everything else keeps working.
//!
//! The programs, inputs and JAX's outputs are those of
//! `tests/programs/lapack/` (`tests/gen_lapack_programs.py`) and the demo's
//! `examples/linalg.mlir` (`examples/gen_examples.py`).

#[path = "../../tests/common/mod.rs"]
mod common;

use common::{assert_exit, text};
use std::path::PathBuf;
use std::process::{Command, Output};

use cyxla_tests::{Plugin, manifest, programs_dir, read_npy};
use plugin_glue::DType;
use serde_json::Value;

/// A library path that does not exist, for `CYXLA_LAPACK`.
const NO_SUCH_LAPACK: &str = "/nonexistent/libcyxla-no-lapack.so.0";

fn lapack_dir() -> PathBuf {
    programs_dir().join("lapack")
}

/// `tests/programs/lapack/manifest.json`'s entry for program `name`.
fn lapack_program(name: &str) -> Value {
    let path = lapack_dir().join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; regenerate with .venv/bin/python tests/gen_lapack_programs.py",
            path.display()
        )
    });
    let manifest: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    manifest["programs"]
        .as_array()
        .expect("a programs array")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no program {name} in {}", path.display()))
        .clone()
}

/// `cyxla-host [host_args] --plugin P115 run PROGRAM --input ... --output-dir
/// DIR`, with `CYXLA_LAPACK` set to `lapack` (or removed).
fn run(
    host_args: &[&str],
    program: &std::path::Path,
    inputs: &[PathBuf],
    out_dir: &std::path::Path,
    lapack: Option<&str>,
) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cyxla-host"));
    cmd.env_remove("CYXLA_PJRT_PLUGIN");
    match lapack {
        Some(lib) => cmd.env("CYXLA_LAPACK", lib),
        None => cmd.env_remove("CYXLA_LAPACK"),
    };
    cmd.args(host_args)
        .arg("--plugin")
        .arg(Plugin::P115.path())
        .arg("run")
        .arg(program);
    for input in inputs {
        cmd.arg("--input").arg(input);
    }
    cmd.arg("--output-dir").arg(out_dir);
    cmd.output().expect("cyxla-host runs")
}

/// Float values of `.npy` data bytes (f32 or f64).
fn floats(descr: &str, bytes: &[u8]) -> Vec<f64> {
    match cyxla_tests::dtype_from_descr(descr) {
        Some(DType::F32) => bytes
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes(c.try_into().expect("4 bytes"))))
            .collect(),
        Some(DType::F64) => bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        _ => panic!("these tests compare f32 and f64 outputs, got {descr}"),
    }
}

/// Runs LAPACK program `name` through the CLI (`CYXLA_LAPACK` as given) and
/// returns the output, the program's manifest entry and the output folder.
fn run_lapack_program(
    name: &str,
    host_args: &[&str],
    lapack: Option<&str>,
) -> (Output, Value, tempfile::TempDir) {
    let entry = lapack_program(name);
    let inputs: Vec<PathBuf> = entry["inputs"]
        .as_array()
        .expect("inputs")
        .iter()
        .map(|t| lapack_dir().join(t["file"].as_str().expect("file")))
        .collect();
    let program = lapack_dir().join(entry["mlir"].as_str().expect("mlir"));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = run(host_args, &program, &inputs, dir.path(), lapack);
    (out, entry, dir)
}

/// Every output in `dir` equals JAX's within the manifest's tolerance,
/// relative to the largest expected magnitude (at least 1).
fn check_outputs(entry: &Value, dir: &std::path::Path) {
    let name = entry["name"].as_str().expect("name");
    let tol = entry["tolerance"].as_f64().expect("tolerance");
    for (k, want) in entry["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .enumerate()
    {
        let (got_dims, got_descr, got) = read_npy(&dir.join(format!("out{k}.npy")));
        let (want_dims, want_descr, want) =
            read_npy(&lapack_dir().join(want["file"].as_str().expect("file")));
        assert_eq!(
            (got_dims, &got_descr),
            (want_dims, &want_descr),
            "{name} output {k}: shape and type"
        );
        let (got, want) = (floats(&got_descr, &got), floats(&want_descr, &want));
        let scale = want
            .iter()
            .filter(|w| !w.is_nan())
            .fold(1.0f64, |m, w| m.max(w.abs()));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                if w.is_nan() {
                    g.is_nan()
                } else {
                    (g - w).abs() <= tol * scale
                },
                "{name} output {k} value {i}: {g}, JAX computed {w} (tolerance {tol} × {scale})"
            );
        }
    }
}

#[test]
fn linalg_programs_run_on_native_lapack_by_default_and_match_jax() {
    // jnp.linalg.solve (f64) and jnp.linalg.inv of a batch (f32): getrf + trsm.
    for name in ["getrf_solve_d", "getrf_inv_s"] {
        let (out, entry, dir) = run_lapack_program(name, &[], None);
        assert_exit(&out, 0, name);
        check_outputs(&entry, dir.path());
        let stdout = text(&out.stdout);
        assert!(
            stdout.starts_with("out0: "),
            "{name}: one line per output, got:\n{stdout}"
        );
    }
}

/// The linalg example that `scripts/demo.sh` runs (`examples/linalg.mlir`,
/// written by `examples/gen_examples.py` with JAX's outputs) gives JAX's
/// results: solve, det and inv of a 4×4 matrix.
#[test]
fn bundled_linalg_example_matches_jax() {
    let examples = cyxla_tests::workspace_root().join("examples");
    let inputs = [examples.join("linalg.a.npy"), examples.join("linalg.b.npy")];
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = run(
        &[],
        &examples.join("linalg.mlir"),
        &inputs,
        dir.path(),
        None,
    );
    assert_exit(&out, 0, "examples/linalg.mlir");
    for k in 0..3 {
        let (dims, descr, got) = read_npy(&dir.path().join(format!("out{k}.npy")));
        let (want_dims, want_descr, want) = read_npy(&examples.join(format!("linalg.out{k}.npy")));
        assert_eq!((dims, &descr), (want_dims, &want_descr), "output {k}");
        for (g, w) in floats(&descr, &got).iter().zip(floats(&descr, &want)) {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                "examples/linalg.mlir output {k}: {g}, JAX computed {w}; \
                 regenerate with .venv/bin/python examples/gen_examples.py"
            );
        }
    }
}

/// Debian's OpenBLAS 0.3.21 on its generic kernels (what it runs on CPUs it
/// does not know) returns NaN from `ssytrd` once a `dsytrd` has seen NaN.
/// The CLI names the kernels of the CPU's features before the library loads
/// (`cyxla_lapack::choose_openblas_kernels`), so an f32 `eigvalsh`
/// after an f64 one on a matrix holding NaN gives JAX's finite values.
#[test]
fn f32_eigvalsh_after_an_f64_one_on_nan_matches_jax() {
    let (out, entry, dir) = run_lapack_program("cli_eigvalsh_nan_f64_then_f32", &[], None);
    assert_exit(&out, 0, "eigvalsh of NaN (f64), then of a clean f32 matrix");
    check_outputs(&entry, dir.path());
}

/// `cyxla-host list` ends with the native LAPACK line: the library, the
/// kernels OpenBLAS runs and who chose them; `--no-lapack` says they are off.
#[test]
fn list_names_the_lapack_library_and_its_kernels() {
    let list = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_cyxla-host"))
            .env_remove("CYXLA_LAPACK")
            .args(extra)
            .arg("list")
            .output()
            .expect("cyxla-host runs");
        assert_exit(&out, 0, "cyxla-host list");
        text(&out.stdout)
    };
    let stdout = list(&[]);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("native LAPACK: "))
        .unwrap_or_else(|| panic!("no native LAPACK line in:\n{stdout}"));
    assert!(
        line.contains("62 targets on libopenblas.so.0 (OpenBLAS "),
        "the library and its configuration: {line}"
    );
    // Whatever the environment says is kept; otherwise the CPU decides.
    let expected = match std::env::var("OPENBLAS_CORETYPE") {
        Ok(v) => format!("OPENBLAS_CORETYPE={v} (from the environment)"),
        Err(_) => cpu_kernels().to_owned(),
    };
    assert!(line.contains(&expected), "expected `{expected}` in: {line}");

    let stdout = list(&["--no-lapack"]);
    assert!(
        stdout.contains("native LAPACK: 62 targets, not registered (--no-lapack)"),
        "{stdout}"
    );
}

/// The OpenBLAS that scipy's wheel bundles (`scipy.libs/libscipy_openblas-*.so`
/// in the venv `scripts/setup.sh` makes: jax depends on scipy). It exports
/// every name with a `scipy_` prefix (`scipy_dgetrf_`).
fn scipy_openblas() -> PathBuf {
    let libs = cyxla_tests::workspace_root().join(".venv/lib");
    let found = std::fs::read_dir(&libs)
        .unwrap_or_else(|e| panic!("{}: {e}; run scripts/setup.sh", libs.display()))
        .filter_map(|python| {
            let dir = python.ok()?.path().join("site-packages/scipy.libs");
            std::fs::read_dir(dir).ok()
        })
        .flatten()
        .filter_map(|f| f.ok().map(|f| f.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libscipy_openblas-") && n.ends_with(".so"))
        });
    found.unwrap_or_else(|| {
        panic!(
            "no scipy.libs/libscipy_openblas-*.so under {}: run scripts/setup.sh (jax installs scipy)",
            libs.display()
        )
    })
}

/// `CYXLA_LAPACK` may name an OpenBLAS whose symbols carry the `scipy_`
/// prefix: `list` names it, and getrf/trsm, syevd and gesdd programs give
/// JAX's results on it.
#[test]
fn cyxla_lapack_may_name_scipys_prefixed_openblas() {
    let lib = scipy_openblas();
    let lib = lib.to_str().expect("a UTF-8 path");
    let out = Command::new(env!("CARGO_BIN_EXE_cyxla-host"))
        .env("CYXLA_LAPACK", lib)
        .arg("list")
        .output()
        .expect("cyxla-host runs");
    assert_exit(&out, 0, "cyxla-host list");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("native LAPACK: 62 targets on {lib} (OpenBLAS ")),
        "{stdout}"
    );
    for name in ["getrf_solve_d", "getrf_inv_s", "eigvalsh_d", "svdvals_s"] {
        let (out, entry, dir) = run_lapack_program(name, &[], Some(lib));
        assert_exit(&out, 0, name);
        check_outputs(&entry, dir.path());
    }
}

#[test]
fn no_lapack_fails_with_xla_message_and_a_hint_naming_the_flag() {
    let (out, _, _dir) = run_lapack_program("getrf_solve_d", &["--no-lapack"], None);
    assert_exit(&out, 1, "--no-lapack");
    let err = text(&out.stderr);
    assert!(
        err.contains("No FFI handler registered for lapack_dgetrf_ffi"),
        "XLA's message: {err}"
    );
    assert!(err.contains("hint:"), "a hint: {err}");
    assert!(
        err.contains("--no-lapack"),
        "the hint names the flag that turned the target off: {err}"
    );
}

#[test]
fn missing_lapack_library_fails_the_call_with_an_install_hint_and_nothing_else() {
    // A LAPACK target: registered (the program compiles), but its call fails.
    let (out, _, _dir) = run_lapack_program("getrf_solve_d", &[], Some(NO_SUCH_LAPACK));
    assert_exit(&out, 1, "CYXLA_LAPACK pointing nowhere");
    let err = text(&out.stderr);
    for needle in [
        "FAILED_PRECONDITION",
        "lapack_dgetrf_ffi",
        NO_SUCH_LAPACK,
        "apt-get install libopenblas0",
        "scripts/setup.sh",
    ] {
        assert!(err.contains(needle), "stderr lacks `{needle}`: {err}");
    }

    // A native target that needs no LAPACK still runs and matches JAX.
    let (out, entry, dir) =
        run_lapack_program("tridiagonal_perturbed_d", &[], Some(NO_SUCH_LAPACK));
    assert_exit(&out, 0, "tridiagonal_solve_perturbed_ffi without LAPACK");
    check_outputs(&entry, dir.path());

    // So does a program without custom calls.
    let m = manifest();
    let plain = m.program("no_custom_call");
    let inputs: Vec<PathBuf> = plain
        .inputs
        .iter()
        .map(|t| t.path().expect("an input file"))
        .collect();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = run(
        &[],
        &plain.mlir_path(),
        &inputs,
        dir.path(),
        Some(NO_SUCH_LAPACK),
    );
    assert_exit(&out, 0, "a program without LAPACK");
    for k in 0..plain.outputs.len() {
        let (dims, descr, bytes) = read_npy(&dir.path().join(format!("out{k}.npy")));
        let dtype = cyxla_tests::dtype_from_descr(&descr).expect("a known type");
        plain
            .check_output(k, dtype, &dims, &bytes)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// What `cyxla-host list` says of OpenBLAS's kernels when the environment
/// names none: x86-64 chooses them from the CPU's features; elsewhere
/// OpenBLAS chooses.
fn cpu_kernels() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw") {
            return "kernels SkylakeX, OPENBLAS_CORETYPE=SkylakeX (chosen from the CPU's features)";
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return "kernels Haswell, OPENBLAS_CORETYPE=Haswell (chosen from the CPU's features)";
        }
    }
    "OpenBLAS's own choice"
}
