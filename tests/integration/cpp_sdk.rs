//! The C/C++ guest SDK (`guest-sdk/include`, `guest-sdk/c`,
//! `guest-sdk/cmake`) end to end.
//!
//! The same C/C++ sources (`guests/cpp/*.cc`, `tests/cpp/*.{cc,c}`) are built
//! twice by `guests/cpp/build.sh`: as wasm32 guests against cyxla's headers,
//! and natively against jaxlib's real `xla/ffi/api/ffi.h`. In one process
//! on the default plugin, every target is served by its guest, and by the
//! native library under `<target>__native` (registered as `--native` does;
//! XLA keeps one handler per name). Each JAX-lowered program of
//! `tests/cpp/programs/` (`tests/gen_cpp_programs.py`) then runs as lowered
//! (guests) and with its targets renamed (natives): outputs must be
//! bit-identical; failures must carry the same code, and the guest's message
//! must be the native one behind the host's prefix.
//!
//! Also: the header constants and wasm32 layouts against
//! `abi/src/lib.rs`, each header compiled alone and twice (C and C++,
//! wasm32 and native), unsupported features failing to compile with a
//! readable message, the documented one-line command, the CMake toolchain
//! file, and the generator's reproducibility.
//!
//! Needs clang-19, lld-19, wasi-libc, libc++-19-dev-wasm32, binaryen, cmake
//! and the venv (`scripts/setup.sh`); nothing is skipped when they are
//! missing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use cyxla_guest_abi as abi;
use cyxla_host::cli::run::{self, Failure, RunArgs};
use cyxla_host::npy::HostArray;
use cyxla_host::process::{self, NativeSpec};
use cyxla_sandbox::{AllowList, Engine, Guest, Limits, Sandbox};
use cyxla_tests::{
    Plugin as PluginKind, describe, read_npy, register_guests, run_ok, workspace_root,
};
use plugin_glue::error::Error as GlueError;
use plugin_glue::plugin::Plugin;
use serde::Deserialize;

/// The C/C++ kernels: source (relative to the workspace), and per target
/// the C symbol of its handler (for the native registration).
const KERNELS: &[(&str, &[(&str, &str)])] = &[
    (
        "guests/cpp/rms_norm.cc",
        &[
            ("rms_norm_cpp", "RmsNorm"),
            ("rms_norm_cpp_fwd", "RmsNormFwd"),
            ("rms_norm_cpp_bwd", "RmsNormBwd"),
        ],
    ),
    ("guests/cpp/scale_any.cc", &[("scale_any_cpp", "ScaleAny")]),
    (
        "guests/cpp/inplace_set0.cc",
        &[
            ("inplace_set0_cpp", "InplaceSet0"),
            ("aliasing_cpp", "Aliasing"),
        ],
    ),
    (
        "tests/cpp/binding.cc",
        &[
            ("strict_cpp", "Strict"),
            ("attrs_cpp", "Attrs"),
            ("dict_cpp", "Dict"),
            ("params_cpp", "ParamsHandler"),
            ("auto_cpp", "AutoScale"),
            ("typed_data_mismatch_cpp", "TypedDataMismatch"),
            ("frame_size_cpp", "FrameSize"),
            ("probe_cpp", "Probe"),
            ("stage_cpp", "Stage"),
            ("bad_access_cpp", "BadAccess"),
        ],
    ),
    (
        "tests/cpp/raw_c_api.c",
        &[
            ("raw_fail_c", "RawFail"),
            ("raw_device_c", "RawDevice"),
            ("raw_threads_c", "RawThreads"),
        ],
    ),
    ("tests/cpp/statics.cc", &[("counter_cpp", "Counter")]),
    ("tests/cpp/relock.cc", &[("relock_cpp", "Relock")]),
];

/// The documented one-line build command (guest-sdk/README.md), run from
/// the workspace root with `kernel.cc` and `kernel.wasm` replaced.
const ONE_LINE_COMMAND: &str = "clang++-19 --target=wasm32-wasi -mexec-model=reactor -std=c++17 \
     -O3 -msimd128 -mllvm -force-vector-interleave=4 -ffp-contract=off -fno-exceptions -fno-rtti \
     -Wl,--strip-debug \
     -Iguest-sdk/include kernel.cc guest-sdk/c/cyxla_runtime.cc -o kernel.wasm";

/// The documented step after it: binaryen's optimizer, which folds constant
/// address offsets into the accesses.
const OPTIMIZE_COMMAND: &str = "wasm-opt -O3 --low-memory-unused kernel.wasm -o kernel.wasm";

const SETUP_HINT: &str = "install clang-19, lld-19, wasi-libc, libc++-19-dev-wasm32, binaryen \
     and cmake with scripts/setup.sh";

/// The name a target's native build is registered under.
fn native_name(target: &str) -> String {
    format!("{target}__native")
}

/// The module file `guests/cpp/build.sh` makes from `source` (`rms_norm.cc`
/// -> `rms_norm_cpp.wasm`, or `librms_norm_cpp.so` natively).
fn module_file(source: &str, native: bool) -> String {
    let path = Path::new(source);
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("source stem");
    let lang = if source.ends_with(".c") { "c" } else { "cpp" };
    if native {
        format!("lib{stem}_{lang}.so")
    } else {
        format!("{stem}_{lang}.wasm")
    }
}

/// Scratch space of these tests (kept between runs: the builds are
/// incremental).
fn scratch_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("cpp_sdk")
}

/// `guests/cpp/build.sh [--native] --out DIR` for every kernel.
fn build_kernels(out: &Path, native: bool) {
    let root = workspace_root();
    let mut command = Command::new("bash");
    command.arg(root.join("guests/cpp/build.sh"));
    if native {
        command.arg("--native");
    }
    command.arg("--out").arg(out);
    for (source, _) in KERNELS {
        command.arg(root.join(source));
    }
    run_ok(&mut command, SETUP_HINT);
}

/// Built kernels, both ways, registered with the default plugin.
struct Setup {
    plugin: Plugin,
    wasm_dir: PathBuf,
    programs_out: PathBuf,
    _sandbox: Sandbox,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let dir = scratch_dir();
        let wasm_dir = dir.join("wasm");
        let native_dir = dir.join("native");
        let programs_out = dir.join("programs");
        std::fs::create_dir_all(&programs_out).expect("create the scratch directory");
        build_kernels(&wasm_dir, false);
        build_kernels(&native_dir, true);

        let plugin = PluginKind::P115.load();

        let targets: Vec<&str> = KERNELS
            .iter()
            .flat_map(|(_, t)| t.iter().map(|(target, _)| *target))
            .collect();
        let sandbox = Sandbox::new(
            &wasm_dir,
            AllowList::targets(targets.iter().copied()),
            Limits::default(),
        )
        .expect("load the C/C++ guests");
        let registered = register_guests(&sandbox, &plugin, "C/C++ guests");
        let mut got: Vec<&str> = registered.iter().map(|r| r.target.as_str()).collect();
        got.sort_unstable();
        let mut want = targets.clone();
        want.sort_unstable();
        assert_eq!(got, want, "registered guest targets");

        for (source, entries) in KERNELS {
            let library = native_dir.join(module_file(source, true));
            for (target, symbol) in *entries {
                let spec = NativeSpec {
                    target: native_name(target),
                    library: library.clone(),
                    symbol: (*symbol).to_owned(),
                };
                // SAFETY: the native build of the same C++ source: each
                // symbol is an XLA FFI handler.
                unsafe { process::register_native(&plugin, &spec) }
                    .unwrap_or_else(|e| panic!("register {spec:?}: {e:#}"));
            }
        }
        Setup {
            plugin,
            wasm_dir,
            programs_out,
            _sandbox: sandbox,
        }
    })
}

// ---------------------------------------------------------------------------
// The programs and their manifest (tests/gen_cpp_programs.py)
// ---------------------------------------------------------------------------

fn programs_dir() -> PathBuf {
    workspace_root().join("tests/cpp/programs")
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    generator: String,
    regenerate: String,
    jax_version: String,
    jaxlib_version: String,
    programs: Vec<ProgramEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProgramEntry {
    name: String,
    description: String,
    mlir: String,
    targets: Vec<String>,
    inputs: Vec<Tensor>,
    outputs: Vec<Tensor>,
    error: Option<ExpectedError>,
    guest_error: Option<ExpectedError>,
    guest_only: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tensor {
    file: Option<String>,
    descr: String,
    shape: Vec<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedError {
    code: String,
    code_value: i32,
    #[serde(default)]
    native_message: Option<String>,
    /// The guest's message (after the host's prefix) when it differs from
    /// the native one (layout-dependent numbers).
    #[serde(default)]
    guest_message: Option<String>,
    #[serde(default)]
    message_contains: Option<String>,
}

fn manifest() -> Manifest {
    let path = programs_dir().join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}: regenerate with .venv/bin/python tests/gen_cpp_programs.py",
            path.display()
        )
    });
    let manifest: Manifest = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is malformed: {e}", path.display()));
    assert_eq!(manifest.generator, "tests/gen_cpp_programs.py");
    manifest
}

/// A run of `text` (a program, written to `file` in the scratch directory)
/// on the inputs of `program`, on one device.
fn run_args(program: &ProgramEntry, file: &str, text: &str) -> RunArgs {
    let path = setup().programs_out.join(file);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    RunArgs {
        program: path,
        inputs: program
            .inputs
            .iter()
            .map(|t| programs_dir().join(t.file.as_ref().expect("inputs have files")))
            .collect(),
        output_dir: None,
        json: false,
        devices: 1,
    }
}

/// How a run ended: outputs, or the client's error code and message.
type RunResult = Result<Vec<HostArray>, (i32, String)>;

/// Runs `program` with its targets served by the guests, or (`native`) by
/// the native builds.
fn run_program(program: &ProgramEntry, native: bool) -> RunResult {
    let setup = setup();
    let mut text = std::fs::read_to_string(programs_dir().join(&program.mlir))
        .unwrap_or_else(|e| panic!("{}: cannot read {}: {e}", program.name, program.mlir));
    let side = if native { "native" } else { "guest" };
    if native {
        for target in &program.targets {
            let from = format!("stablehlo.custom_call @{target}(");
            assert!(
                text.contains(&from),
                "{}: no call to {target}",
                program.name
            );
            text = text.replace(
                &from,
                &format!("stablehlo.custom_call @{}(", native_name(target)),
            );
        }
    }
    let args = run_args(program, &format!("{}.{side}.mlir", program.name), &text);
    match run::run(&setup.plugin, &args, &|_| None) {
        Ok(outputs) => Ok(outputs.into_iter().map(|o| o.array).collect()),
        Err(Failure::Program(error)) => {
            let pjrt = error
                .chain()
                .find_map(|e| match e.downcast_ref::<GlueError>() {
                    Some(GlueError::Pjrt { code, message, .. }) => {
                        Some((code.to_c(), message.clone()))
                    }
                    _ => None,
                });
            match pjrt {
                Some(failure) => Err(failure),
                None => panic!(
                    "{} ({side}): failed without a PJRT error: {error:#}",
                    program.name
                ),
            }
        }
        Err(Failure::Setup(error)) => panic!("{} ({side}): set-up failed: {error:#}", program.name),
    }
}

/// Runs `program` as [`run_program`] does, expecting it to fail as
/// `expecting` says: the client's error code and message.
fn run_failing(program: &ProgramEntry, native: bool, expecting: &str) -> (i32, String) {
    match run_program(program, native) {
        Ok(out) => panic!(
            "{} ({}) succeeded ({}), expected {expecting}",
            program.name,
            if native { "native" } else { "guest" },
            describe_outputs(&out)
        ),
        Err(failure) => failure,
    }
}

/// The prefix the host puts before a guest's error message.
fn guest_prefix(program: &ProgramEntry) -> String {
    let target = &program.targets[0];
    let file = KERNELS
        .iter()
        .find(|(_, t)| t.iter().any(|(name, _)| name == target))
        .map(|(source, _)| module_file(source, false))
        .unwrap_or_else(|| panic!("{}: unknown target {target}", program.name));
    format!("target `{target}` (guest {file}): ")
}

fn describe_outputs(outputs: &[HostArray]) -> String {
    outputs
        .iter()
        .map(|a| format!("{:?}{:?}", a.dtype, a.dims))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------
// Programs: native and sandboxed agree
// ---------------------------------------------------------------------------

#[test]
fn same_source_gives_bit_identical_results_native_and_sandboxed() {
    let m = manifest();
    let mut checked = 0;
    let mut against_numpy = 0;
    for program in m
        .programs
        .iter()
        .filter(|p| p.error.is_none() && p.guest_error.is_none())
    {
        let native = run_program(program, true)
            .unwrap_or_else(|e| panic!("{} (native) failed: {e:?}", program.name));
        let guest = run_program(program, false)
            .unwrap_or_else(|e| panic!("{} (guest) failed: {e:?}", program.name));
        assert_eq!(
            native.len(),
            program.outputs.len(),
            "{}: native outputs {}",
            program.name,
            describe_outputs(&native)
        );
        assert_eq!(
            guest.len(),
            native.len(),
            "{}: number of outputs",
            program.name
        );
        for (k, (n, g)) in native.iter().zip(&guest).enumerate() {
            assert_eq!(
                (n.dtype, &n.dims),
                (g.dtype, &g.dims),
                "{}: output {k} type",
                program.name
            );
            if let Some(i) = n.bytes.iter().zip(&g.bytes).position(|(a, b)| a != b) {
                panic!(
                    "{}: output {k} ({:?}{:?}) differs between the native and the sandboxed \
                     build at byte {i}",
                    program.name, n.dtype, n.dims
                );
            }
            assert_eq!(
                n.bytes.len(),
                g.bytes.len(),
                "{}: output {k} size",
                program.name
            );
            assert_eq!(
                n.dims, program.outputs[k].shape,
                "{}: output {k} shape against the manifest",
                program.name
            );
            // The numpy oracle reproduces the handlers' float32 arithmetic
            // step by step, so it matches exactly too.
            if let Some(file) = &program.outputs[k].file {
                let (dims, descr, want) = read_npy(&programs_dir().join(file));
                assert_eq!(descr, program.outputs[k].descr, "{}: {file}", program.name);
                assert_eq!(dims, g.dims, "{}: {file} shape", program.name);
                assert!(
                    want == g.bytes,
                    "{}: output {k} differs from the numpy oracle {file}",
                    program.name
                );
                against_numpy += 1;
            }
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} programs ran");
    assert!(
        against_numpy >= 10,
        "only {against_numpy} outputs had a numpy oracle"
    );
}

/// Issue 15: locking a `std::mutex` the guest already holds (natively a
/// deadlock) traps with cyxla/mutex.h's message, which reaches the client;
/// the next call works. Guest only: the native build would hang.
#[test]
fn relocking_a_std_mutex_traps_with_its_message() {
    let m = manifest();
    let counter = m
        .programs
        .iter()
        .find(|p| p.name == "statics_counter")
        .expect("the statics_counter program");
    let text = std::fs::read_to_string(programs_dir().join(&counter.mlir)).expect("read");
    let relock = ProgramEntry {
        name: "relock".into(),
        description: String::new(),
        mlir: String::new(),
        targets: vec!["relock_cpp".into()],
        inputs: Vec::new(),
        outputs: Vec::new(),
        error: None,
        guest_error: None,
        guest_only: true,
    };
    let text = text.replace("@counter_cpp(", "@relock_cpp(");
    let args = run_args(counter, "relock.guest.mlir", &text);
    for _ in 0..2 {
        let error = match run::run(&setup().plugin, &args, &|_| None) {
            Ok(_) => panic!("relock_cpp did not fail"),
            Err(e) => format!("{:#}", e.error()),
        };
        let want = format!(
            "{}the guest panicked: std::mutex::lock: the mutex is already locked by this thread \
             (a deadlock; a cyxla guest runs on one thread)",
            guest_prefix(&relock)
        );
        assert!(error.contains("INTERNAL"), "{error}");
        assert!(error.contains(&want), "{error}\nwant: {want}");
    }
}

#[test]
fn error_paths_reach_the_client_with_code_and_message() {
    let m = manifest();
    let mut checked = 0;
    for program in &m.programs {
        if let Some(expected) = &program.error {
            let want = expected.native_message.as_deref().expect("native_message");
            let expecting = format!("{} {want:?}", expected.code);
            let (code, message) = run_failing(program, true, &expecting);
            assert_eq!(
                (code, message.as_str()),
                (expected.code_value, want),
                "{} (native, jaxlib's headers): code and message",
                program.name
            );
            let (code, message) = run_failing(program, false, &expecting);
            let guest_want = expected.guest_message.as_deref().unwrap_or(want);
            let full = format!("{}{guest_want}", guest_prefix(program));
            assert_eq!(
                (code, message.as_str()),
                (expected.code_value, full.as_str()),
                "{} (guest, cyxla's headers): code and message",
                program.name
            );
            checked += 1;
        }
        if let Some(expected) = &program.guest_error {
            let want = expected
                .message_contains
                .as_deref()
                .expect("message_contains");
            if !program.guest_only {
                let native = run_program(program, true)
                    .unwrap_or_else(|e| panic!("{} (native) failed: {e:?}", program.name));
                if let Some(file) = &program.outputs[0].file {
                    let (_, _, bytes) = read_npy(&programs_dir().join(file));
                    assert_eq!(native[0].bytes, bytes, "{} (native): output", program.name);
                }
            }
            let expecting = format!("{} containing {want:?}", expected.code);
            let (code, message) = run_failing(program, false, &expecting);
            assert_eq!(
                code, expected.code_value,
                "{}: code of {message:?}",
                program.name
            );
            assert!(
                message.starts_with(&guest_prefix(program)) && message.contains(want),
                "{}: guest message {message:?} should name the target and contain {want:?}",
                program.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 14, "only {checked} error programs ran");
}

#[test]
fn generator_reproduces_programs() {
    cyxla_tests::assert_generator_reproduces("tests/gen_cpp_programs.py", "tests/cpp/programs");
    let m = manifest();
    assert!(m.regenerate.contains("gen_cpp_programs.py"));
    assert!(!m.jax_version.is_empty() && !m.jaxlib_version.is_empty());
    for p in &m.programs {
        assert!(!p.description.is_empty(), "{}: description", p.name);
        for t in p.inputs.iter().chain(&p.outputs) {
            assert!(t.descr.len() >= 3, "{}: descr {}", p.name, t.descr);
        }
    }
}

// ---------------------------------------------------------------------------
// The modules
// ---------------------------------------------------------------------------

#[test]
fn bundled_cpp_guests_declare_their_targets_and_import_only_cyxla() {
    let setup = setup();
    let engine = Engine::new(&Limits::default()).expect("engine");
    for (source, entries) in KERNELS {
        let path = setup.wasm_dir.join(module_file(source, false));
        let guest =
            Guest::load(&engine, &path).unwrap_or_else(|e| panic!("load {}: {e}", path.display()));
        let mut got: Vec<(String, String)> = guest
            .targets()
            .iter()
            .map(|t| (t.name.clone(), t.export.clone()))
            .collect();
        got.sort();
        let mut want: Vec<(String, String)> = entries
            .iter()
            .map(|(t, _)| ((*t).to_owned(), (*t).to_owned()))
            .collect();
        want.sort();
        assert_eq!(got, want, "{source}: declared targets");
        let mut cyxla: Vec<&str> = guest
            .imports()
            .iter()
            .filter(|(m, _)| m == abi::IMPORT_MODULE)
            .map(|(_, n)| n.as_str())
            .collect();
        cyxla.sort_unstable();
        let mut all = abi::IMPORTS.to_vec();
        all.sort_unstable();
        assert_eq!(
            cyxla, all,
            "{source}: the API table imports every host function"
        );
        if source.starts_with("guests/") {
            // The bundled kernels need nothing from WASI (the C test kernel
            // uses snprintf, whose stdio pulls some in; that is allowed).
            assert!(
                !guest.uses_wasi(),
                "{source}: imports {:?}; bundled C++ guests should import only `cyxla`",
                guest.imports()
            );
            assert!(
                guest.size() < 256 * 1024,
                "{source}: {} bytes; guests should stay small",
                guest.size()
            );
        }
    }
}

#[test]
fn one_line_command_builds_a_guest() {
    let readme = std::fs::read_to_string(workspace_root().join("guest-sdk/README.md"))
        .expect("read guest-sdk/README.md");
    let readme_flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let out = tempfile::tempdir().expect("temporary directory");
    let wasm = out.path().join("rms_norm.wasm");
    let kernel = workspace_root().join("guests/cpp/rms_norm.cc");
    for command in [ONE_LINE_COMMAND, OPTIMIZE_COMMAND] {
        let documented = command.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            readme_flat.contains(&documented),
            "guest-sdk/README.md must document the command `{documented}`"
        );
        let args: Vec<String> = command
            .split_whitespace()
            .map(|a| match a {
                "kernel.cc" => kernel.display().to_string(),
                "kernel.wasm" => wasm.display().to_string(),
                other => other.to_owned(),
            })
            .collect();
        run_ok(
            Command::new(&args[0])
                .args(&args[1..])
                .current_dir(workspace_root()),
            SETUP_HINT,
        );
    }
    let engine = Engine::new(&Limits::default()).expect("engine");
    let guest = Guest::load(&engine, &wasm).unwrap_or_else(|e| panic!("load: {e}"));
    let names: Vec<&str> = guest.targets().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["rms_norm_cpp", "rms_norm_cpp_fwd", "rms_norm_cpp_bwd"]
    );
    assert!(!guest.uses_wasi(), "imports {:?}", guest.imports());
}

/// Issue 15: forgetting the runtime file fails to link with a symbol name
/// that says what to do.
#[test]
fn forgetting_the_runtime_names_it_in_the_link_error() {
    let out = tempfile::tempdir().expect("temporary directory");
    let wasm = out.path().join("rms_norm.wasm");
    let kernel = workspace_root().join("guests/cpp/rms_norm.cc");
    // The one-line command without `guest-sdk/c/cyxla_runtime.cc`, and with
    // -DNDEBUG (no assertions: the CYXLA_TARGET entry alone refers to it).
    let args: Vec<String> = ONE_LINE_COMMAND
        .split_whitespace()
        .filter(|a| *a != "guest-sdk/c/cyxla_runtime.cc")
        .map(|a| match a {
            "kernel.cc" => kernel.display().to_string(),
            "kernel.wasm" => wasm.display().to_string(),
            other => other.to_owned(),
        })
        .chain(["-DNDEBUG".to_owned()])
        .collect();
    let output = Command::new(&args[0])
        .args(&args[1..])
        .current_dir(workspace_root())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {SETUP_HINT}", args[0]));
    assert!(!output.status.success(), "linked without the runtime");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "undefined symbol: cyxla_panic__link_guest_sdk_c_cyxla_runtime_cc_or_use_the_cmake_toolchain"
        ),
        "the link error does not name the runtime:\n{stderr}"
    );
}

#[test]
fn cmake_toolchain_builds_guests() {
    let root = workspace_root();
    let project = tempfile::tempdir().expect("temporary directory");
    let cmake_path = |p: &Path| p.display().to_string().replace('\\', "/");
    let lists = format!(
        "cmake_minimum_required(VERSION 3.20)\nproject(cyxla_cmake_test C CXX)\n\
         cyxla_add_guest(rms_norm_cpp \"{}\")\ncyxla_add_guest(raw_c_api_c \"{}\")\n\
         cyxla_add_guest(statics_cpp \"{}\")\n",
        cmake_path(&root.join("guests/cpp/rms_norm.cc")),
        cmake_path(&root.join("tests/cpp/raw_c_api.c")),
        // <mutex> through guest-sdk/include/mutex (single-threaded std::mutex).
        cmake_path(&root.join("tests/cpp/statics.cc")),
    );
    std::fs::write(project.path().join("CMakeLists.txt"), lists).expect("write CMakeLists.txt");
    let build = project.path().join("build");
    run_ok(
        Command::new("cmake")
            .arg("-S")
            .arg(project.path())
            .arg("-B")
            .arg(&build)
            .arg(format!(
                "-DCMAKE_TOOLCHAIN_FILE={}",
                root.join("guest-sdk/cmake/wasm32-cyxla.cmake").display()
            )),
        SETUP_HINT,
    );
    let built = run_ok(Command::new("cmake").arg("--build").arg(&build), SETUP_HINT);
    let said = describe(&built);
    // Compile-only flags (`-mllvm ...`) reach compiles only: given to the
    // link, clang warns "argument unused during compilation".
    assert!(!said.contains("warning"), "the CMake build warns:\n{said}");
    let engine = Engine::new(&Limits::default()).expect("engine");
    for (file, targets) in [
        (
            "rms_norm_cpp.wasm",
            &["rms_norm_cpp", "rms_norm_cpp_fwd", "rms_norm_cpp_bwd"][..],
        ),
        (
            "raw_c_api_c.wasm",
            &["raw_fail_c", "raw_device_c", "raw_threads_c"][..],
        ),
        ("statics_cpp.wasm", &["counter_cpp"][..]),
    ] {
        let guest = Guest::load(&engine, &build.join(file))
            .unwrap_or_else(|e| panic!("load the CMake-built {file}: {e}"));
        let names: Vec<&str> = guest.targets().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, targets, "{file}: targets");
    }
}

// ---------------------------------------------------------------------------
// The headers
// ---------------------------------------------------------------------------

/// Compiles `code` (`lang` "c" or "c++") for `target` with the SDK's
/// include directory, syntax only; returns the compiler's output.
fn compile_snippet(code: &str, lang: &str, target: &str, extra: &[&str]) -> Output {
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join(if lang == "c" { "t.c" } else { "t.cc" });
    std::fs::write(&file, code).expect("write the snippet");
    let (compiler, std) = if lang == "c" {
        ("clang-19", "-std=c11")
    } else {
        ("clang++-19", "-std=c++17")
    };
    let mut command = Command::new(compiler);
    command
        .arg(format!("--target={target}"))
        .arg(std)
        .args(["-fsyntax-only", "-Wall", "-Wextra", "-Werror"])
        .args(extra)
        .arg("-I")
        .arg(workspace_root().join("guest-sdk/include"))
        .arg(&file);
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}; {SETUP_HINT}"))
}

/// Every header of guest-sdk/include, relative to it, and whether it is C.
fn headers() -> Vec<(String, bool)> {
    let include = workspace_root().join("guest-sdk/include");
    let mut found = Vec::new();
    let mut stack = vec![include.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("list headers") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "h") {
                let rel = path
                    .strip_prefix(&include)
                    .expect("under include")
                    .display()
                    .to_string();
                let is_c = rel.starts_with("cyxla/") || rel == "xla/ffi/api/c_api.h";
                found.push((rel, is_c));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn every_header_compiles_alone_and_twice() {
    let found = headers();
    let names: Vec<&str> = found.iter().map(|(h, _)| h.as_str()).collect();
    for expected in [
        "cyxla/abi.h",
        "cyxla/imports.h",
        "cyxla/runtime.h",
        "cyxla/target.h",
        "xla/ffi/api/api.h",
        "xla/ffi/api/c_api.h",
        "xla/ffi/api/ffi.h",
    ] {
        assert!(
            names.contains(&expected),
            "missing header {expected}: {names:?}"
        );
    }
    let mut compiled = 0;
    for (header, is_c) in &found {
        // (A declaration of our own: a header of macros alone would leave an
        // empty translation unit, which -pedantic refuses.)
        let code = format!(
            "#include \"{header}\"\n#include \"{header}\"\ntypedef int header_test_unused;\n"
        );
        let langs: &[&str] = if *is_c { &["c", "c++"] } else { &["c++"] };
        for lang in langs {
            for target in ["wasm32-wasi", "x86_64-linux-gnu"] {
                let extra: &[&str] = if *lang == "c" { &["-pedantic"] } else { &[] };
                let out = compile_snippet(&code, lang, target, extra);
                assert!(
                    out.status.success(),
                    "{header} included twice does not compile as {lang} for {target}:\n{}",
                    describe(&out)
                );
                compiled += 1;
            }
        }
    }
    assert!(compiled >= 22, "only {compiled} compilations");
}

#[test]
fn unsupported_features_fail_to_compile_with_a_readable_message() {
    let dir = workspace_root().join("tests/cpp/unsupported");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("list {}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 7,
        "only {} cases in {}",
        cases.len(),
        dir.display()
    );
    for case in &cases {
        let code = std::fs::read_to_string(case).expect("read the case");
        let expect = code
            .lines()
            .find_map(|l| l.strip_prefix("// expect: "))
            .unwrap_or_else(|| panic!("{}: no `// expect:` line", case.display()));
        let out = compile_snippet(
            &code,
            "c++",
            "wasm32-wasi",
            &["-fno-exceptions", "-fno-rtti", "-Wno-error"],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{} compiled; it should fail with {expect:?}",
            case.display()
        );
        let first_error = stderr
            .lines()
            .find(|l| l.contains("error:"))
            .unwrap_or_default();
        assert!(
            first_error.contains(expect),
            "{}: the first error should say {expect:?}, it is {first_error:?}\n{stderr}",
            case.display()
        );
    }
}

/// One wasm32 layout of abi/src/lib.rs and the C struct it describes.
struct Layout {
    c_name: &'static str,
    size: u32,
    align: u32,
    struct_size: Option<u32>,
    fields: Vec<(String, u32)>,
}

fn layout(
    c_name: &'static str,
    (size, align, struct_size): (u32, u32, Option<u32>),
    fields: &[(&str, u32)],
) -> Layout {
    Layout {
        c_name,
        size,
        align,
        struct_size,
        fields: fields.iter().map(|&(f, o)| (f.to_owned(), o)).collect(),
    }
}

/// The wasm32 layouts of abi.rs, with C field names.
fn layouts() -> Vec<Layout> {
    use abi::*;
    let header = |ext: u32| {
        [
            ("struct_size", STRUCT_SIZE_OFFSET),
            ("extension_start", ext),
        ]
    };
    let mut api_fields: Vec<(&'static str, u32)> = vec![
        ("struct_size", api::STRUCT_SIZE_OFFSET),
        ("extension_start", api::EXTENSION_START),
        ("api_version", api::API_VERSION),
        ("internal_api", api::INTERNAL_API),
    ];
    for import in IMPORT_TABLE {
        api_fields.push((import.c_name, api::slot_offset(import.slot)));
    }
    // The C name of a field: its abi.rs constant's name in lower case
    // (`TYPE_ID`: `type_id`), unless given (`SIZE_FIELD = "size"`).
    macro_rules! c_field {
        ($o:ident) => {
            stringify!($o).to_lowercase()
        };
        ($o:ident = $f:literal) => {
            String::from($f)
        };
    }
    // A struct of the API without a header: the fields of `$m`.
    macro_rules! plain {
        ($c:literal, $m:ident, $struct_size:expr, [$($o:ident $(= $f:literal)?),*]) => {
            layout(
                $c,
                ($m::SIZE, $m::ALIGN, $struct_size),
                &[$((c_field!($o $(= $f)?).as_str(), $m::$o)),*],
            )
        };
    }
    // An args struct of the API: its header, then the fields of `$m`.
    macro_rules! args {
        ($c:literal, $m:ident, [$($o:ident $(= $f:literal)?),*]) => {
            layout(
                $c,
                ($m::SIZE, $m::ALIGN, Some($m::STRUCT_SIZE)),
                &[header($m::EXTENSION_START)[0], header($m::EXTENSION_START)[1] $(, (c_field!($o $(= $f)?).as_str(), $m::$o))*],
            )
        };
    }
    vec![
        args!(
            "XLA_FFI_CallFrame",
            call_frame,
            [API, CTX, STAGE, ARGS, RETS, ATTRS, FUTURE]
        ),
        args!("XLA_FFI_Args", args, [SIZE_FIELD = "size", TYPES, ARGS]),
        args!("XLA_FFI_Rets", rets, [SIZE_FIELD = "size", TYPES, RETS]),
        args!(
            "XLA_FFI_Attrs",
            attrs,
            [SIZE_FIELD = "size", TYPES, NAMES, ATTRS]
        ),
        args!("XLA_FFI_Buffer", buffer, [DTYPE, DATA, RANK, DIMS]),
        plain!("XLA_FFI_ByteSpan", byte_span, None, [PTR, LEN]),
        plain!("XLA_FFI_Scalar", scalar, None, [DTYPE, VALUE]),
        plain!(
            "XLA_FFI_Array",
            array,
            None,
            [DTYPE, SIZE_FIELD = "size", DATA]
        ),
        plain!(
            "XLA_FFI_Extension_Base",
            extension_base,
            Some(extension_base::STRUCT_SIZE),
            [STRUCT_SIZE_OFFSET = "struct_size", TYPE, NEXT]
        ),
        plain!(
            "XLA_FFI_Metadata_Extension",
            metadata_extension,
            Some(metadata_extension::STRUCT_SIZE),
            [EXTENSION_BASE, METADATA]
        ),
        plain!(
            "XLA_FFI_Metadata",
            metadata,
            Some(metadata::STRUCT_SIZE),
            [
                STRUCT_SIZE_OFFSET = "struct_size",
                API_VERSION,
                TRAITS,
                STATE_TYPE_ID
            ]
        ),
        args!(
            "XLA_FFI_Api_Version",
            api_version,
            [MAJOR_VERSION, MINOR_VERSION]
        ),
        plain!("XLA_FFI_TypeId", type_id, None, [TYPE_ID]),
        layout(
            "XLA_FFI_Api",
            (api::SIZE, api::ALIGN, Some(api::STRUCT_SIZE)),
            &api_fields,
        ),
        plain!(
            "XLA_FFI_Handler_Bundle",
            handler_bundle,
            None,
            [INSTANTIATE, PREPARE, INITIALIZE, EXECUTE, RECORD]
        ),
        args!(
            "XLA_FFI_Error_Create_Args",
            error_create_args,
            [MESSAGE, ERRC]
        ),
        args!(
            "XLA_FFI_Error_GetMessage_Args",
            error_get_message_args,
            [ERROR, MESSAGE]
        ),
        args!(
            "XLA_FFI_Error_GetDetails_Args",
            error_get_details_args,
            [ERROR, MESSAGE, ERRC]
        ),
        args!(
            "XLA_FFI_InvokeContext_FindExtension_Args",
            invoke_context_find_extension_args,
            [CTX, EXTENSION_TYPE, EXTENSION]
        ),
        args!(
            "XLA_FFI_CustomOptions_Get_Args",
            custom_options_get_args,
            [CTX, ATTRS]
        ),
        plain!(
            "XLA_FFI_ExtensionId",
            extension_id,
            Some(extension_id::STRUCT_SIZE),
            [EXTENSION_TYPE, MAJOR_VERSION, MINOR_VERSION]
        ),
        plain!(
            "XLA_FFI_Extension",
            extension,
            Some(extension::STRUCT_SIZE),
            [STRUCT_SIZE_OFFSET = "struct_size", ID, NEXT]
        ),
        plain!(
            "XLA_FFI_InternalExtension",
            extension_base,
            Some(extension_base::STRUCT_SIZE),
            [STRUCT_SIZE_OFFSET = "struct_size", TYPE, NEXT]
        ),
        args!("XLA_FFI_Error_Destroy_Args", error_destroy_args, [ERROR]),
        args!("XLA_FFI_TypeInfo", type_info, [DELETER]),
        args!("XLA_FFI_Future_Create_Args", future_create_args, [FUTURE]),
        args!(
            "XLA_FFI_Future_SetAvailable_Args",
            future_set_available_args,
            [FUTURE]
        ),
        args!(
            "XLA_FFI_Future_SetError_Args",
            future_set_error_args,
            [FUTURE, ERROR]
        ),
        args!(
            "XLA_FFI_Handler_Register_Args",
            handler_register_args,
            [NAME, PLATFORM, BUNDLE, TRAITS]
        ),
        args!(
            "XLA_FFI_Type_Register_Args",
            type_register_args,
            [NAME, TYPE_ID, TYPE_INFO]
        ),
        args!(
            "XLA_FFI_ExecutionContext_Get_Args",
            execution_context_get_args,
            [CTX, TYPE_ID, DATA]
        ),
        args!(
            "XLA_FFI_InvokeContext_Get_Args",
            execution_context_get_args,
            [CTX, TYPE_ID, DATA]
        ),
        args!(
            "XLA_FFI_State_Set_Args",
            state_set_args,
            [CTX, STAGE, TYPE_ID, STATE]
        ),
        args!(
            "XLA_FFI_State_Get_Args",
            state_get_args,
            [CTX, STAGE, TYPE_ID, STATE]
        ),
        args!("XLA_FFI_Stream_Get_Args", stream_get_args, [CTX, STREAM]),
        args!(
            "XLA_FFI_DeviceMemory_Allocate_Args",
            device_memory_allocate_args,
            [CTX, SIZE_FIELD = "size", ALIGNMENT, DATA]
        ),
        args!(
            "XLA_FFI_DeviceMemory_Free_Args",
            device_memory_free_args,
            [CTX, SIZE_FIELD = "size", DATA]
        ),
        args!(
            "XLA_FFI_ThreadPool_Schedule_Args",
            thread_pool_schedule_args,
            [CTX, TASK, DATA]
        ),
        args!(
            "XLA_FFI_ThreadPool_NumThreads_Args",
            thread_pool_num_threads_args,
            [CTX, NUM_THREADS]
        ),
        args!("XLA_FFI_RunId_Get_Args", run_id_get_args, [CTX, RUN_ID]),
        args!(
            "XLA_FFI_DeviceOrdinal_Get_Args",
            device_ordinal_get_args,
            [CTX, DEVICE_ORDINAL]
        ),
    ]
}

/// Integer constants: (C expression, value in abi.rs).
fn integer_constants() -> Vec<(String, i64)> {
    use abi::*;
    let mut out: Vec<(String, i64)> = vec![
        ("CYXLA_ABI_VERSION".into(), ABI_VERSION.into()),
        ("CYXLA_MAX_NAME_LEN".into(), MAX_NAME_LEN as i64),
        ("CYXLA_FFI_API_MAJOR".into(), FFI_API_MAJOR.into()),
        ("CYXLA_FFI_API_MINOR".into(), FFI_API_MINOR.into()),
        ("XLA_FFI_API_MAJOR".into(), FFI_API_MAJOR.into()),
        ("XLA_FFI_API_MINOR".into(), FFI_API_MINOR.into()),
        ("CYXLA_API_FN_SLOTS".into(), API_FN_SLOTS as i64),
    ];
    // The members of an enum: each abi.rs constant of `$m` is named as the
    // C enumerator, after the prefix.
    macro_rules! members {
        ($m:ident => [$($name:ident),* $(,)?]) => {
            &[$((stringify!($name), $m::$name)),*]
        };
    }
    let enums: [(&str, &[(&str, u32)]); 7] = [
        (
            "XLA_FFI_DataType_",
            members!(data_type => [
                INVALID, PRED, S8, S16, S32, S64, U8, U16, U32, U64, F16, F32, F64, C64, BF16,
                TOKEN, C128, F8E5M2, F8E4M3FN, S4, U4, F8E4M3B11FNUZ, F8E5M2FNUZ, F8E4M3FNUZ, S2,
                U2, F8E4M3, F8E3M4, S1, U1, F4E2M1FN, F8E8M0FNU,
            ]),
        ),
        (
            "XLA_FFI_Error_Code_",
            members!(error_code => [
                OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND,
                ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED,
                OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED,
            ]),
        ),
        (
            "XLA_FFI_AttrType_",
            members!(attr_type => [ARRAY, DICTIONARY, SCALAR, STRING]),
        ),
        ("XLA_FFI_ArgType_", members!(arg_type => [BUFFER])),
        ("XLA_FFI_RetType_", members!(ret_type => [BUFFER])),
        (
            "XLA_FFI_ExecutionStage_",
            members!(execution_stage => [INSTANTIATE, PREPARE, INITIALIZE, EXECUTE]),
        ),
        (
            "XLA_FFI_Extension_",
            &[("Metadata", extension_type::METADATA)],
        ),
    ];
    for (prefix, members) in enums {
        for (name, value) in members {
            out.push((format!("{prefix}{name}"), i64::from(*value)));
        }
    }
    for l in layouts() {
        let c = l.c_name;
        out.push((format!("sizeof({c})"), l.size.into()));
        out.push((format!("_Alignof({c})"), l.align.into()));
        if let Some(s) = l.struct_size {
            out.push((format!("{c}_STRUCT_SIZE"), s.into()));
        }
        for (field, offset) in &l.fields {
            out.push((format!("offsetof({c}, {field})"), (*offset).into()));
        }
    }
    out
}

/// String constants: (C macro, value in abi.rs).
fn string_constants() -> Vec<(String, String)> {
    use abi::*;
    let mut out: Vec<(String, String)> = [
        ("CYXLA_TARGETS_SECTION", TARGETS_SECTION),
        ("CYXLA_RECORD_PREFIX", RECORD_PREFIX),
        ("CYXLA_IMPORT_MODULE", IMPORT_MODULE),
        ("CYXLA_WASI_MODULE", WASI_MODULE),
        ("CYXLA_EXPORT_MEMORY", EXPORT_MEMORY),
        ("CYXLA_EXPORT_ABI_VERSION", EXPORT_ABI_VERSION),
        ("CYXLA_EXPORT_API", EXPORT_API),
        ("CYXLA_EXPORT_ALLOC", EXPORT_ALLOC),
        ("CYXLA_EXPORT_FREE", EXPORT_FREE),
        ("CYXLA_EXPORT_LAST_PANIC", EXPORT_LAST_PANIC),
        ("CYXLA_EXPORT_INITIALIZE", EXPORT_INITIALIZE),
    ]
    .iter()
    .map(|(m, v)| ((*m).to_owned(), (*v).to_owned()))
    .collect();
    for import in IMPORTS {
        out.push((
            format!("CYXLA_IMPORT_{}", import.to_uppercase()),
            import.to_owned(),
        ));
    }
    out
}

/// A C11 translation unit of `_Static_assert`s, one per integer constant,
/// and a C++17 one comparing the strings.
fn abi_assertions(ints: &[(String, i64)], strings: &[(String, String)]) -> (String, String) {
    let mut c = String::from(
        "#include <stddef.h>\n#include \"cyxla/abi.h\"\n#include \"xla/ffi/api/c_api.h\"\n",
    );
    for (expr, value) in ints {
        let _ = writeln!(
            c,
            "_Static_assert((long long)({expr}) == {value}LL, \"{expr} must be {value} \
             (abi/src/lib.rs)\");"
        );
    }
    let mut cc = String::from(
        "#include <string_view>\n#include \"cyxla/abi.h\"\n#include \"xla/ffi/api/c_api.h\"\n",
    );
    for (macro_name, value) in strings {
        let _ = writeln!(
            cc,
            "static_assert(std::string_view({macro_name}) == std::string_view({value:?}), \
             \"{macro_name} must be {} (abi/src/lib.rs)\");",
            value.escape_default()
        );
    }
    (c, cc)
}

#[test]
fn header_constants_match_abi_rs() {
    let ints = integer_constants();
    let strings = string_constants();
    assert!(ints.len() > 250, "only {} integer checks", ints.len());
    let (c, cc) = abi_assertions(&ints, &strings);
    let out = compile_snippet(&c, "c", "wasm32-wasi", &[]);
    assert!(
        out.status.success(),
        "cyxla/abi.h or xla/ffi/api/c_api.h disagree with abi/src/lib.rs:\n{}",
        describe(&out)
    );
    let out = compile_snippet(&cc, "c++", "wasm32-wasi", &[]);
    assert!(
        out.status.success(),
        "cyxla/abi.h strings disagree with abi/src/lib.rs:\n{}",
        describe(&out)
    );

    // The check can fail: a wrong value or a wrong string is refused.
    let mut wrong_ints = ints.clone();
    let frame = wrong_ints
        .iter_mut()
        .find(|(e, _)| e == "XLA_FFI_CallFrame_STRUCT_SIZE")
        .expect("the frame's struct size is checked");
    frame.1 += 4;
    let (c, _) = abi_assertions(&wrong_ints, &strings);
    let out = compile_snippet(&c, "c", "wasm32-wasi", &[]);
    assert!(
        !out.status.success(),
        "a wrong frame struct_size was accepted"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("XLA_FFI_CallFrame_STRUCT_SIZE must be 108"),
        "{}",
        describe(&out)
    );
    let mut wrong_strings = strings.clone();
    wrong_strings[2].1 = "cyxla2".to_owned();
    let (_, cc) = abi_assertions(&ints, &wrong_strings);
    let out = compile_snippet(&cc, "c++", "wasm32-wasi", &[]);
    assert!(
        !out.status.success(),
        "a wrong import module name was accepted"
    );
}

#[test]
fn api_surface_compiles_with_both_header_sets() {
    let root = workspace_root();
    let source = root.join("tests/cpp/api_surface.cc");
    let jaxlib = root.join(".venv/lib/python3.11/site-packages/jaxlib/include");
    assert!(
        jaxlib.join("xla/ffi/api/ffi.h").is_file(),
        "jaxlib's headers are missing from {}: run scripts/setup.sh",
        jaxlib.display()
    );
    let sdk = root.join("guest-sdk/include");
    // `clang++-19`, natively, checking the syntax only.
    let syntax_only = || {
        let mut command = Command::new("clang++-19");
        command.args(["-std=c++17", "-fsyntax-only", "-Wall"]);
        command
    };
    // Natively against XLA's own headers (as jaxlib ships them).
    run_ok(
        syntax_only()
            .args(["-Wno-return-type", "-I"])
            .arg(&jaxlib)
            .arg("-idirafter")
            .arg(&sdk)
            .args(["-include", "cyxla/target.h"])
            .arg(&source),
        SETUP_HINT,
    );
    // Natively against cyxla's headers.
    run_ok(
        syntax_only()
            .args(["-Wextra", "-Werror", "-I"])
            .arg(&sdk)
            .arg(&source),
        SETUP_HINT,
    );
    // As a guest, linked, and loaded by the host.
    let out = tempfile::tempdir().expect("temporary directory");
    let wasm = out.path().join("api_surface.wasm");
    run_ok(
        Command::new("clang++-19")
            .args([
                "--target=wasm32-wasi",
                "-mexec-model=reactor",
                "-std=c++17",
                "-O3",
                "-fno-exceptions",
                "-fno-rtti",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-I",
            ])
            .arg(&sdk)
            .arg(&source)
            .arg(root.join("guest-sdk/c/cyxla_runtime.cc"))
            .arg("-o")
            .arg(&wasm),
        SETUP_HINT,
    );
    let engine = Engine::new(&Limits::default()).expect("engine");
    let guest = Guest::load(&engine, &wasm).unwrap_or_else(|e| panic!("load: {e}"));
    let targets: Vec<(&str, &str)> = guest
        .targets()
        .iter()
        .map(|t| (t.name.as_str(), t.export.as_str()))
        .collect();
    assert_eq!(
        targets,
        [
            ("surface_everything", "surface_everything"),
            ("surface_state", "surface_state"),
            ("surface_user_data", "surface_user_data"),
            ("surface_variadic", "surface_variadic"),
            ("surface.scoped-v1$", "surface_scoped"),
            ("surface_lambda", "surface_lambda"),
        ]
    );
}
