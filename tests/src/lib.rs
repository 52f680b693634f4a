//! Shared helpers for cyxla-host's integration tests (`tests/integration/`).
//!
//! - Where things are: [`workspace_root`], [`programs_dir`], [`venv_python`],
//!   the three PJRT CPU plugins ([`Plugin`]), and the native C++ test
//!   handlers ([`test_handlers_lib`], [`TEST_HANDLERS`]).
//! - The generated StableHLO programs of `tests/programs/`: [`manifest`]
//!   describes each one ([`ProgramEntry`]: files, inputs, outputs, expected
//!   error); [`read_npy`] reads their `.npy` files as raw bytes;
//!   [`ProgramEntry::check_output`] compares a result with the expected one.
//!
//! `tests/gen_programs.py` writes `tests/programs/`; the `programs` tests
//! check that the committed files are what it generates.
//!
//! Missing set-up (venv, plugins, headers) is never skipped: the helpers panic
//! with a message that says to run `scripts/setup.sh`.
//!
//! ```no_run
//! use cyxla_tests::{manifest, read_npy, Plugin};
//!
//! let m = manifest();
//! let attrs = m.program("attrs");
//! let (dims, descr, bytes) = read_npy(&attrs.inputs[0].path().unwrap());
//! assert_eq!((dims.as_slice(), descr.as_str()), (&[2_i64, 3][..], "<f4"));
//! # let _ = (bytes, Plugin::P115.path());
//! ```
#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use cyxla_host::process::{DEFAULT_PLUGIN, SITE_PACKAGES};
use cyxla_sandbox::{Registered, Sandbox};
use plugin_glue::DType;
use serde::Deserialize;

/// The workspace root (the directory holding the root `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    cyxla_host::process::workspace_root()
}

/// `tests/programs/`: the committed programs and `manifest.json`.
pub fn programs_dir() -> PathBuf {
    workspace_root().join("tests/programs")
}

/// `<workspace>/.venv/bin/python` (jax, jaxlib, numpy, pypjrt).
///
/// # Panics
///
/// If the venv's interpreter does not exist.
pub fn venv_python() -> PathBuf {
    let python = workspace_root().join(".venv/bin/python");
    assert!(
        python.exists(),
        "Python venv not found at {}: run scripts/setup.sh",
        python.display()
    );
    python
}

/// zig of the venv's Python package `ziglang` (the C/C++ guest compiler that
/// needs no Debian package).
///
/// # Panics
///
/// If the venv has no `ziglang`: the message says how to install it.
pub fn venv_zig() -> PathBuf {
    let found = run_ok(
        Command::new(venv_python()).args([
            "-c",
            "import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))",
        ]),
        "zig is the Python package ziglang: install it into .venv with scripts/setup.sh \
         (`.venv/bin/pip install ziglang`)",
    );
    PathBuf::from(String::from_utf8(found.stdout).expect("a path").trim())
}

/// Runs the program generator `script` (a path relative to the workspace
/// root, e.g. `tests/gen_programs.py`) with the venv's Python, writing into
/// `out` (`--out OUT`), from the workspace root.
///
/// # Panics
///
/// If it cannot start or fails: the message has its output and says how to
/// set up the venv.
pub fn run_generator(script: &str, out: &Path) {
    let root = workspace_root();
    run_ok(
        Command::new(venv_python())
            .arg(root.join(script))
            .arg("--out")
            .arg(out)
            .current_dir(&root),
        "run scripts/setup.sh if the venv is incomplete",
    );
}

/// Runs the program generator `script` (as [`run_generator`]) into a
/// temporary directory and fails unless it writes exactly the files directly
/// in `committed` (a directory relative to the workspace root; its
/// subdirectories belong to other generators). Float `.npy` files may
/// differ by rounding (8 epsilons of their type times the array's largest
/// magnitude); every other file must be byte for byte the same. The
/// message names the files missing, extra and differing, and says how to
/// regenerate.
///
/// # Panics
///
/// If the generator fails or the files differ.
pub fn assert_generator_reproduces(script: &str, committed: &str) {
    let out = tempfile::tempdir().expect("temporary directory");
    run_generator(script, out.path());
    let generated = files_in(out.path());
    let committed_files = files_in(&workspace_root().join(committed));
    let missing: Vec<&String> = generated
        .keys()
        .filter(|k| !committed_files.contains_key(*k))
        .collect();
    let extra: Vec<&String> = committed_files
        .keys()
        .filter(|k| !generated.contains_key(*k))
        .collect();
    let differing: Vec<&String> = generated
        .iter()
        .filter(|(k, v)| {
            committed_files.get(*k).is_some_and(|c| {
                c != *v
                    && !same_but_rounding(
                        &out.path().join(k),
                        &workspace_root().join(committed).join(k),
                    )
            })
        })
        .map(|(k, _)| k)
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty() && differing.is_empty(),
        "{committed}/ is not what {script} generates: rerun `.venv/bin/python {script}` \
         and commit the result\n  missing: {missing:?}\n  extra: {extra:?}\n  differing: {differing:?}"
    );
}

/// Whether two files that differ are both `.npy` arrays of the same
/// floating-point type and shape whose elements differ by no more than
/// rounding: at most 8 epsilons of the type times the array's largest
/// magnitude. A generator's expected outputs come from numpy and JAX on the
/// machine that runs it, whose BLAS and LAPACK kernels (chosen for the
/// CPU) may round differently than the machine that committed them.
fn same_but_rounding(generated: &Path, committed: &Path) -> bool {
    if generated.extension().is_none_or(|e| e != "npy") {
        return false;
    }
    let (dims_g, descr_g, bytes_g) = read_npy(generated);
    let (dims_c, descr_c, bytes_c) = read_npy(committed);
    if dims_g != dims_c || descr_g != descr_c || bytes_g.len() != bytes_c.len() {
        return false;
    }
    let eps = match descr_g.as_str() {
        "<f8" | "<c16" => f64::EPSILON,
        "<f4" | "<c8" => f64::from(f32::EPSILON),
        _ => return false,
    };
    let (g, c) = (
        float_values(&descr_g, &bytes_g),
        float_values(&descr_c, &bytes_c),
    );
    let scale = c.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    g.iter()
        .zip(&c)
        .all(|(g, c)| (g - c).abs() <= 8.0 * eps * scale)
}

/// The files directly in `dir` (not its subdirectories), by name.
///
/// # Panics
///
/// If `dir` or one of its files cannot be read.
pub fn files_in(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file())
        .map(|path| {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("UTF-8 file name")
                .to_owned();
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (name, bytes)
        })
        .collect()
}

/// A command's exit status and output, for failure messages.
pub fn describe(output: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs `command`; panics with its output (and `hint`) unless it succeeds.
pub fn run_ok(command: &mut Command, hint: &str) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}; {hint}"));
    assert!(
        output.status.success(),
        "{command:?} failed; {hint}\n{}",
        describe(&output)
    );
    output
}

/// The XLA CPU PJRT plugins the project runs on (docs/abi.md, "Plugins").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Plugin {
    /// `lammps-jax-pjrt-cpu` 0.11.2: PJRT 0.115, XLA FFI runtime 0.4 (the default).
    P115,
    /// `fastatomstruct-xla-cpu`: PJRT 0.106, XLA FFI runtime 0.3.
    P106,
    /// `xla-cpu-pjrt` 0.0.1: PJRT 0.81, XLA FFI runtime 0.2.
    P81,
}

impl Plugin {
    /// Every plugin, the default first.
    pub const ALL: [Plugin; 3] = [Plugin::P115, Plugin::P106, Plugin::P81];

    /// Short label (`"P115"`), as docs/abi.md and test names use it.
    pub fn label(self) -> &'static str {
        match self {
            Plugin::P115 => "P115",
            Plugin::P106 => "P106",
            Plugin::P81 => "P81",
        }
    }

    /// The PyPI package that ships the plugin.
    pub fn package(self) -> &'static str {
        match self {
            Plugin::P115 => "lammps-jax-pjrt-cpu",
            Plugin::P106 => "fastatomstruct-xla-cpu",
            Plugin::P81 => "xla-cpu-pjrt",
        }
    }

    /// The plugin library's path relative to the venv's `site-packages`.
    pub fn relative_path(self) -> &'static str {
        match self {
            Plugin::P115 => DEFAULT_PLUGIN,
            Plugin::P106 => "fastatomstruct_xla_cpu/libpjrt_cpu.so",
            Plugin::P81 => "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so",
        }
    }

    /// The XLA FFI API version (major, minor) of the plugin's runtime, as
    /// measured (docs/abi.md, "Plugins").
    pub fn xla_ffi_version(self) -> (i32, i32) {
        match self {
            Plugin::P115 => (0, 4),
            Plugin::P106 => (0, 3),
            Plugin::P81 => (0, 2),
        }
    }

    /// Absolute path of the plugin library.
    ///
    /// # Panics
    ///
    /// If the library is not installed.
    pub fn path(self) -> PathBuf {
        let path = workspace_root()
            .join(SITE_PACKAGES)
            .join(self.relative_path());
        assert!(
            path.is_file(),
            "PJRT plugin {} not installed at {}: run scripts/setup.sh",
            self.package(),
            path.display()
        );
        path
    }

    /// Loads the plugin library.
    ///
    /// # Panics
    ///
    /// If the library is not installed or does not load.
    pub fn load(self) -> plugin_glue::plugin::Plugin {
        let path = self.path();
        // SAFETY: one of the XLA CPU plugins that scripts/setup.sh installs.
        unsafe { plugin_glue::plugin::Plugin::load(&path) }
            .unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()))
    }
}

/// Registers the targets `sandbox` allows with `plugin`, after checking that
/// it rejected none of its guests (`what` names them in the messages).
///
/// # Panics
///
/// If a guest was rejected or a target cannot be registered.
pub fn register_guests(
    sandbox: &Sandbox,
    plugin: &plugin_glue::plugin::Plugin,
    what: &str,
) -> Vec<Registered> {
    assert!(
        sandbox.guests().rejected().is_empty(),
        "{what} rejected: {:#?}",
        sandbox.guests().rejected()
    );
    sandbox
        .register_allowed(plugin)
        .unwrap_or_else(|e| panic!("{what}: cannot register the guest targets: {e}"))
}

/// Handlers exported by [`test_handlers_lib`] (C names, also the custom-call
/// targets of the programs that use them).
pub const TEST_HANDLERS: [&str; 5] = [
    "cyxla_test_attrs",
    "cyxla_test_fail",
    "cyxla_test_add_one",
    "cyxla_test_copy16",
    "cyxla_test_device",
];

/// `libcyxla_test_handlers.so`, built by `tests/build.rs` from
/// `tests/native/test_handlers.cc` with jaxlib's `xla/ffi/api/ffi.h`.
///
/// Its handlers answer the metadata probe with the header version 0.3 (a
/// runtime at 0.2, P81, drops them unless the probe answer is clamped).
pub fn test_handlers_lib() -> PathBuf {
    PathBuf::from(env!("CYXLA_TEST_HANDLERS"))
}

/// Reads a little-endian, C-order `.npy` file: returns its dimensions, its
/// numpy type string (`"<f4"`, `"|b1"`, `"<c8"`, as in the manifest's
/// `descr`) and the raw element bytes.
///
/// # Panics
///
/// If the file cannot be read, is not a plain `.npy` array, is big-endian or
/// Fortran-ordered, or its data length does not match its header; the message
/// names the path.
pub fn read_npy(path: &Path) -> (Vec<i64>, String, Vec<u8>) {
    let file = File::open(path).unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    let npy = npyz::NpyFile::new(BufReader::new(file))
        .unwrap_or_else(|e| panic!("{} is not a .npy file: {e}", path.display()));
    let npyz::DType::Plain(ty) = npy.dtype() else {
        panic!(
            "{}: structured dtype {:?} is not supported",
            path.display(),
            npy.dtype()
        );
    };
    assert!(
        ty.endianness() != npyz::Endianness::Big,
        "{}: big-endian data ({ty}) is not supported",
        path.display()
    );
    assert!(
        npy.order() == npyz::Order::C,
        "{}: Fortran order is not supported",
        path.display()
    );
    let dims: Vec<i64> = npy
        .shape()
        .iter()
        .map(|&d| {
            i64::try_from(d)
                .unwrap_or_else(|_| panic!("{}: dimension {d} too large", path.display()))
        })
        .collect();
    let item = ty
        .num_bytes()
        .unwrap_or_else(|| panic!("{}: type {ty} has no fixed size", path.display()));
    let expected_len = usize::try_from(npy.len())
        .ok()
        .and_then(|n| n.checked_mul(item))
        .unwrap_or_else(|| panic!("{}: array too large", path.display()));
    let descr = ty.to_string();
    let mut bytes = Vec::with_capacity(expected_len);
    npy.into_inner()
        .read_to_end(&mut bytes)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert_eq!(
        bytes.len(),
        expected_len,
        "{}: {} data bytes, the header ({descr} {dims:?}) says {expected_len}",
        path.display(),
        bytes.len()
    );
    (dims, descr, bytes)
}

/// The XLA type of a numpy type string (`"<f4"` → F32), for the types the
/// programs use (bool, s8..s64, u8..u64, f16, f32, f64, c64, c128).
pub fn dtype_from_descr(descr: &str) -> Option<DType> {
    Some(match descr {
        "|b1" => DType::Pred,
        "|i1" => DType::S8,
        "<i2" => DType::S16,
        "<i4" => DType::S32,
        "<i8" => DType::S64,
        "|u1" => DType::U8,
        "<u2" => DType::U16,
        "<u4" => DType::U32,
        "<u8" => DType::U64,
        "<f2" => DType::F16,
        "<f4" => DType::F32,
        "<f8" => DType::F64,
        "<c8" => DType::C64,
        "<c16" => DType::C128,
        _ => return None,
    })
}

/// `tests/programs/manifest.json`, written by `tests/gen_programs.py`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The script that wrote it (`tests/gen_programs.py`).
    pub generator: String,
    /// The command that regenerates the programs.
    pub regenerate: String,
    /// JAX version that lowered the programs.
    pub jax_version: String,
    /// jaxlib version that lowered the programs.
    pub jaxlib_version: String,
    /// Every program, in generation order.
    pub programs: Vec<ProgramEntry>,
}

impl Manifest {
    /// The program called `name`.
    ///
    /// # Panics
    ///
    /// If there is none (the message lists the programs).
    pub fn program(&self, name: &str) -> &ProgramEntry {
        self.programs
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| {
                let names: Vec<&str> = self.programs.iter().map(|p| p.name.as_str()).collect();
                panic!("no program {name:?} in tests/programs/manifest.json; there are {names:?}")
            })
    }
}

/// One program of the manifest.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramEntry {
    /// Name; also the stem of its files.
    pub name: String,
    /// What it computes, including the handler formula for custom calls.
    pub description: String,
    /// StableHLO text file name (in [`programs_dir`]).
    pub mlir: String,
    /// StableHLO portable artifact (bytecode) file name.
    pub mlirbc: String,
    /// Custom-call targets the program calls (empty: no custom call).
    pub targets: Vec<String>,
    /// Parameters, in order.
    pub inputs: Vec<TensorEntry>,
    /// Results, in order; `file` is `None` when an error is expected.
    pub outputs: Vec<TensorEntry>,
    /// How close results must be to the expected outputs.
    pub tolerance: Tolerance,
    /// Set when compiling or running the program must fail.
    pub expect_error: Option<ExpectedError>,
    /// Where the expected outputs come from.
    pub oracle: String,
    /// `attrs` only: the constant `c` the attribute formula adds.
    #[serde(default)]
    pub attrs_constant: Option<f64>,
    /// `device` only: how the output differs per device.
    #[serde(default)]
    pub per_device: Option<String>,
}

impl ProgramEntry {
    /// Path of the StableHLO text.
    pub fn mlir_path(&self) -> PathBuf {
        programs_dir().join(&self.mlir)
    }

    /// Path of the StableHLO bytecode (portable artifact).
    pub fn mlirbc_path(&self) -> PathBuf {
        programs_dir().join(&self.mlirbc)
    }

    /// Reads the StableHLO text, failing unless it calls every one of
    /// [`targets`](Self::targets) and carries no Python source locations.
    ///
    /// # Panics
    ///
    /// If the file cannot be read or fails a check.
    pub fn checked_mlir_text(&self) -> String {
        let path = self.mlir_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: cannot read {}: {e}", self.name, path.display()));
        assert!(
            !text.contains(".py\""),
            "{}: {} carries Python source locations",
            self.name,
            self.mlir
        );
        for t in &self.targets {
            assert!(
                text.contains(&format!("stablehlo.custom_call @{t}(")),
                "{}: {} does not call {t}",
                self.name,
                self.mlir
            );
        }
        text
    }

    /// Checks output 0 as `cyxla-host run --devices N --output-dir DIR`
    /// writes it for each of `devices` devices: `out0.npy` for device 0,
    /// `out0.dev<d>.npy` for the others.
    ///
    /// # Panics
    ///
    /// If a file cannot be read or differs from the expected output; the
    /// message starts with `what` and the file name.
    pub fn check_device_outputs(&self, dir: &Path, devices: usize, what: &str) {
        for device in 0..devices {
            let file = if device == 0 {
                "out0.npy".to_owned()
            } else {
                format!("out0.dev{device}.npy")
            };
            let (dims, descr, bytes) = read_npy(&dir.join(&file));
            let dtype = dtype_from_descr(&descr)
                .unwrap_or_else(|| panic!("{what} {file}: unsupported type {descr}"));
            self.check_output(0, dtype, &dims, &bytes)
                .unwrap_or_else(|e| panic!("{what} {file}: {e}"));
        }
    }

    /// Reads every input: `(dims, descr, bytes)` per parameter.
    ///
    /// # Panics
    ///
    /// As [`read_npy`]; also if an input has no file.
    pub fn read_inputs(&self) -> Vec<(Vec<i64>, String, Vec<u8>)> {
        self.inputs
            .iter()
            .map(|t| {
                read_npy(
                    &t.path()
                        .unwrap_or_else(|| panic!("{}: input without a file", self.name)),
                )
            })
            .collect()
    }

    /// Compares result `index` (type `dtype`, dimensions `dims`, raw bytes)
    /// with the expected output: byte for byte when the tolerance is exact,
    /// else elementwise `|got - want| <= atol + rtol * |want|` (real and
    /// imaginary parts apart).
    ///
    /// # Errors
    ///
    /// A message naming the program, the output and the first difference.
    ///
    /// # Panics
    ///
    /// If the program has no expected output `index` (see [`read_npy`]).
    pub fn check_output(
        &self,
        index: usize,
        dtype: DType,
        dims: &[i64],
        bytes: &[u8],
    ) -> Result<(), String> {
        let entry = self.outputs.get(index).unwrap_or_else(|| {
            panic!(
                "program {} has {} outputs, not {}",
                self.name,
                self.outputs.len(),
                index + 1
            )
        });
        let path = entry
            .path()
            .unwrap_or_else(|| panic!("program {} has no expected output {index}", self.name));
        let (want_dims, descr, want) = read_npy(&path);
        let what = format!("program {} output {index}", self.name);
        if dtype != entry.dtype() || dims != want_dims.as_slice() {
            return Err(format!(
                "{what}: got {}{dims:?}, expected {}{want_dims:?}",
                dtype.name(),
                entry.xla_dtype
            ));
        }
        if bytes.len() != want.len() {
            return Err(format!(
                "{what}: got {} bytes, expected {}",
                bytes.len(),
                want.len()
            ));
        }
        if self.tolerance.is_exact() || !is_float(&descr) {
            return match bytes.iter().zip(&want).position(|(a, b)| a != b) {
                None => Ok(()),
                Some(i) => Err(format!(
                    "{what}: differs from {} at byte {i} (exact match required)",
                    path.display()
                )),
            };
        }
        let got = float_values(&descr, bytes);
        let exp = float_values(&descr, &want);
        for (i, (g, w)) in got.iter().zip(&exp).enumerate() {
            let close = g == w
                || (g.is_nan() && w.is_nan())
                || (g - w).abs() <= self.tolerance.atol + self.tolerance.rtol * w.abs();
            if !close {
                return Err(format!(
                    "{what}: value {i} is {g}, expected {w} (rtol {}, atol {})",
                    self.tolerance.rtol, self.tolerance.atol
                ));
            }
        }
        Ok(())
    }
}

/// One parameter or result.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorEntry {
    /// `.npy` file name in [`programs_dir`] (`None`: no expected value).
    pub file: Option<String>,
    /// numpy name (`"float32"`).
    pub dtype: String,
    /// XLA name, as [`DType::name`] prints it (`"f32"`).
    pub xla_dtype: String,
    /// numpy type string, as [`read_npy`] returns it (`"<f4"`).
    pub descr: String,
    /// Dimensions (empty for rank 0).
    pub shape: Vec<i64>,
}

impl TensorEntry {
    /// Absolute path of the `.npy` file, if there is one.
    pub fn path(&self) -> Option<PathBuf> {
        self.file.as_ref().map(|f| programs_dir().join(f))
    }

    /// Reads the `.npy` file, if there is one, and returns its data bytes.
    ///
    /// # Panics
    ///
    /// As [`read_npy`]; also unless its header has this entry's shape and
    /// type (the message names `program` and the file).
    pub fn read_checked(&self, program: &str) -> Option<Vec<u8>> {
        let path = self.path()?;
        let (dims, descr, bytes) = read_npy(&path);
        assert_eq!(
            (&dims, &descr),
            (&self.shape, &self.descr),
            "{program}: header of {}",
            path.display()
        );
        Some(bytes)
    }

    /// The element type.
    ///
    /// # Panics
    ///
    /// If `descr` is not one of the types of [`dtype_from_descr`].
    pub fn dtype(&self) -> DType {
        dtype_from_descr(&self.descr)
            .unwrap_or_else(|| panic!("manifest type {:?} is not supported", self.descr))
    }
}

/// Allowed difference between a result and its expected value.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
}

impl Tolerance {
    /// Both zero: results must match byte for byte.
    pub fn is_exact(&self) -> bool {
        self.rtol == 0.0 && self.atol == 0.0
    }
}

/// The failure a program must produce.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedError {
    /// `"compile"` or `"execute"`.
    pub stage: String,
    /// XLA status code name (`"FAILED_PRECONDITION"`).
    pub code: String,
    /// Its number (`XLA_FFI_Error_Code` / absl value, e.g. 9).
    pub code_value: i32,
    /// The exact message the handler produces, when known.
    #[serde(default)]
    pub message: Option<String>,
    /// A substring the message must contain.
    #[serde(default)]
    pub message_contains: Option<String>,
}

/// Reads and parses `tests/programs/manifest.json`.
///
/// # Panics
///
/// If it is missing or malformed (regenerate with
/// `.venv/bin/python tests/gen_programs.py`).
pub fn manifest() -> Manifest {
    load_manifest(
        &programs_dir().join("manifest.json"),
        ".venv/bin/python tests/gen_programs.py",
    )
}

/// `tests/programs/guests/manifest.json`, the guest programs of
/// `tests/gen_guest_programs.py` (file names in it are relative to
/// `tests/programs/`, so [`ProgramEntry`]'s paths work); read once per
/// process.
///
/// # Panics
///
/// If it is missing or malformed (regenerate with
/// `.venv/bin/python tests/gen_guest_programs.py`).
pub fn guest_manifest() -> &'static Manifest {
    static MANIFEST: OnceLock<Manifest> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        load_manifest(
            &programs_dir().join("guests/manifest.json"),
            ".venv/bin/python tests/gen_guest_programs.py",
        )
    })
}

/// The manifest at `path`; a panic names the file and `regenerate`.
fn load_manifest(path: &Path, regenerate: &str) -> Manifest {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}: regenerate with {regenerate}",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{} is malformed: {e}: regenerate with {regenerate}",
            path.display()
        )
    })
}

/// `guests/out`, after running `guests/build.sh` (once per process).
///
/// # Panics
///
/// If the script fails, with its output and how to install the wasm32
/// target.
pub fn bundled_guests() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = workspace_root();
        run_ok(
            Command::new("bash").arg(root.join("guests/build.sh")),
            "install Rust's wasm32 target with scripts/setup.sh",
        );
        root.join("guests/out")
    })
}

fn is_float(descr: &str) -> bool {
    matches!(&descr[1..2], "f" | "c")
}

/// The float values (complex: real and imaginary parts in turn) of raw
/// little-endian bytes of type `descr` (`<f2`, `<f4`, `<f8`, `<c8`, `<c16`).
fn float_values(descr: &str, bytes: &[u8]) -> Vec<f64> {
    match descr {
        "<f2" => bytes
            .chunks_exact(2)
            .map(|c| f16_to_f64(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
        "<f4" | "<c8" => bytes
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        "<f8" | "<c16" => bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("chunks of 8")))
            .collect(),
        other => panic!("no float comparison for type {other:?}"),
    }
}

/// IEEE binary16 to f64.
fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f64::from(h & 0x3ff);
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        0x1f if frac == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        _ => (1.0 + frac / 1024.0) * 2f64.powi(exp - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a version 1.0 `.npy` file of `descr` and `shape` around `data`.
    fn write_npy(path: &Path, descr: &str, shape: &str, data: &[u8]) {
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        std::fs::write(path, bytes).unwrap();
    }

    fn f64_bytes(values: &[f64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn only_rounding_differences_of_float_arrays_are_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        let base = [1.0, -0.5, 1e-3];
        write_npy(&at("c.npy"), "<f8", "(3,)", &f64_bytes(&base));
        let one_ulp = [f64::from_bits(1.0_f64.to_bits() + 1), -0.5, 1e-3 + 1e-18];
        write_npy(&at("ulp.npy"), "<f8", "(3,)", &f64_bytes(&one_ulp));
        assert!(same_but_rounding(&at("ulp.npy"), &at("c.npy")));
        let off = [1.0, -0.5, 1e-3 + 1e-9];
        write_npy(&at("off.npy"), "<f8", "(3,)", &f64_bytes(&off));
        assert!(!same_but_rounding(&at("off.npy"), &at("c.npy")));
        write_npy(&at("shape.npy"), "<f8", "(3, 1)", &f64_bytes(&one_ulp));
        assert!(!same_but_rounding(&at("shape.npy"), &at("c.npy")));
        let ints: Vec<u8> = [1_i64, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        write_npy(&at("i1.npy"), "<i8", "(3,)", &ints);
        let other: Vec<u8> = [1_i64, 2, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
        write_npy(&at("i2.npy"), "<i8", "(3,)", &other);
        assert!(!same_but_rounding(&at("i1.npy"), &at("i2.npy")));
        std::fs::write(at("a.txt"), "a").unwrap();
        std::fs::write(at("b.txt"), "b").unwrap();
        assert!(!same_but_rounding(&at("a.txt"), &at("b.txt")));
    }

    #[test]
    fn f16_conversion() {
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0xc000), -2.0);
        assert_eq!(f16_to_f64(0x3e00), 1.5);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(f16_to_f64(0x7c00), f64::INFINITY);
        assert!(f16_to_f64(0x7e00).is_nan());
        assert_eq!(f16_to_f64(0x8000), 0.0);
    }

    #[test]
    fn descr_mapping_covers_every_manifest_dtype() {
        for d in [
            "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8",
            "<c8", "<c16",
        ] {
            assert!(dtype_from_descr(d).is_some(), "{d}");
        }
        assert_eq!(dtype_from_descr("<c8"), Some(DType::C64));
        assert_eq!(dtype_from_descr(">f4"), None);
    }
}
