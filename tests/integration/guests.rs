//! The bundled wasm guests serve JAX-lowered programs through the library,
//! on each of the three plugins.
//!
//! The guests are `guests/out/*.wasm` (built from `guests/rust/*` by
//! `guests/build.sh`, which these tests run first). The programs are
//! `tests/programs/guests/` (written by `tests/gen_guest_programs.py`, with
//! numpy's float64 results as the expected outputs). Each plugin gets one
//! [`Sandbox`] over the bundled guests whose allowed targets are registered
//! once per process: XLA keeps the first handler registered under a name in
//! each plugin image for the life of the process.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use cyxla_pjrt_client::{Buffer, Client, Executable};
use cyxla_sandbox::{AllowList, Limits, Registered, Sandbox};
use cyxla_tests::{
    Plugin, ProgramEntry, bundled_guests, guest_manifest as manifest, programs_dir, read_npy,
    register_guests,
};
use plugin_glue::{DType, Error, ErrorCode};

const REGENERATE: &str = ".venv/bin/python tests/gen_guest_programs.py";

/// The targets each plugin's sandbox allows: every target the programs call
/// but the C++ in-place ones (`inplace_set0_cpp`, `aliasing_cpp`), which
/// `cpp_sdk` registers in this process from its own build of the same
/// source (a target has one handler per process); `cpp_sdk` checks their
/// programs against the native build, and `cli_guests` runs these programs
/// through the binary.
const ALLOWED: [&str; 9] = [
    "rms_norm",
    "rms_norm_fwd",
    "rms_norm_bwd",
    "echo_attrs",
    "scale_any",
    "tridiag_solve",
    "inplace_set0",
    "fail",
    "trap",
];

/// The targets of these programs that `cpp_sdk` registers (see ALLOWED).
const CPP_SDK_TARGETS: [&str; 2] = ["inplace_set0_cpp", "aliasing_cpp"];

/// Devices of each client (the concurrency test runs on all of them).
const DEVICES: usize = 4;

/// The `eps` attribute of the rms_norm programs.
const EPS: f32 = 1e-5;

// ---------------------------------------------------------------------------
// Set-up
// ---------------------------------------------------------------------------

/// `tests/programs/guests/`.
fn guest_programs_dir() -> PathBuf {
    programs_dir().join("guests")
}

/// One plugin with the bundled guests registered, and a client on it.
struct Host {
    plugin: Plugin,
    client: Client,
    sandbox: Sandbox,
    registered: Vec<Registered>,
}

/// The host of `plugin`, set up on first use.
fn host(plugin: Plugin) -> &'static Host {
    static P115: OnceLock<Host> = OnceLock::new();
    static P106: OnceLock<Host> = OnceLock::new();
    static P81: OnceLock<Host> = OnceLock::new();
    let cell = match plugin {
        Plugin::P115 => &P115,
        Plugin::P106 => &P106,
        Plugin::P81 => &P81,
    };
    cell.get_or_init(|| start(plugin))
}

fn start(which: Plugin) -> Host {
    let plugin = which.load();
    let dir = bundled_guests();
    let sandbox = Sandbox::new(dir, AllowList::targets(ALLOWED), Limits::default())
        .unwrap_or_else(|e| panic!("cannot load the guests in {}: {e}", dir.display()));
    let registered = register_guests(
        &sandbox,
        &plugin,
        &format!("{} bundled guests", which.label()),
    );
    let client = Client::new(&plugin, Some(DEVICES))
        .unwrap_or_else(|e| panic!("{}: cannot create a client: {e}", which.label()));
    Host {
        plugin: which,
        client,
        sandbox,
        registered,
    }
}

// ---------------------------------------------------------------------------
// Running programs
// ---------------------------------------------------------------------------

/// Which file of a program to compile.
#[derive(Clone, Copy, Debug)]
enum Form {
    Text,
    Bytecode,
}

const FORMS: [Form; 2] = [Form::Text, Form::Bytecode];

fn code(entry: &ProgramEntry, form: Form) -> Vec<u8> {
    let path = match form {
        Form::Text => entry.mlir_path(),
        Form::Bytecode => entry.mlirbc_path(),
    };
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// One result: type, dimensions, bytes.
type Output = (DType, Vec<i64>, Vec<u8>);

impl Host {
    fn what(&self, entry: &ProgramEntry, form: Form) -> String {
        format!("{} ({form:?}) on {}", entry.name, self.plugin.label())
    }

    fn compile(
        &self,
        entry: &ProgramEntry,
        form: Form,
        replicas: usize,
    ) -> Result<Executable, Error> {
        self.client.compile(&code(entry, form), replicas)
    }

    /// The program's inputs (from its `.npy` files) on `device`.
    fn inputs(&self, entry: &ProgramEntry, device: usize) -> Vec<Buffer> {
        entry
            .read_inputs()
            .iter()
            .zip(&entry.inputs)
            .map(|((dims, _, bytes), t)| {
                self.client
                    .buffer_from_host(bytes, t.dtype(), dims, device)
                    .unwrap_or_else(|e| panic!("{}: input: {e}", entry.name))
            })
            .collect()
    }

    /// Runs a compiled single-device program on its inputs.
    fn execute(&self, entry: &ProgramEntry, exe: &Executable) -> Result<Vec<Output>, Error> {
        let inputs = self.inputs(entry, 0);
        let args: Vec<&Buffer> = inputs.iter().collect();
        let results = exe.execute(&[args])?;
        results[0].iter().map(fetch).collect()
    }

    fn run(&self, entry: &ProgramEntry, form: Form) -> Result<Vec<Output>, Error> {
        let exe = self.compile(entry, form, 1)?;
        self.execute(entry, &exe)
    }

    /// Runs `name` as text and as bytecode: its outputs must match the
    /// expected ones, or it must fail as the manifest says.
    fn check_program(&self, name: &str) {
        let entry = manifest().program(name);
        for form in FORMS {
            let what = self.what(entry, form);
            match &entry.expect_error {
                None => {
                    let outputs = self
                        .run(entry, form)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    check_outputs(entry, &outputs, &what);
                }
                Some(_) => {
                    let exe = self
                        .compile(entry, form, 1)
                        .unwrap_or_else(|e| panic!("{what}: compile: {e}"));
                    match self.execute(entry, &exe) {
                        Ok(_) => panic!("{what}: succeeded, expected an error"),
                        Err(error) => check_error(entry, &error, &what),
                    }
                }
            }
        }
    }
}

fn fetch(buffer: &Buffer) -> Result<Output, Error> {
    Ok((buffer.dtype()?, buffer.dims()?, buffer.to_host()?))
}

fn check_outputs(entry: &ProgramEntry, outputs: &[Output], what: &str) {
    assert_eq!(
        outputs.len(),
        entry.outputs.len(),
        "{what}: number of outputs"
    );
    for (k, (dtype, dims, bytes)) in outputs.iter().enumerate() {
        entry
            .check_output(k, *dtype, dims, bytes)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

/// `error` is the execute-stage error the manifest expects: XLA's code, and
/// the guest's message with the host's prefix.
fn check_error(entry: &ProgramEntry, error: &Error, what: &str) {
    let expected = entry.expect_error.as_ref().expect("an expected error");
    assert_eq!(
        expected.stage, "execute",
        "{what}: only execute errors are expected"
    );
    let Error::Pjrt { code, message, .. } = error else {
        panic!("{what}: expected an XLA error, got {error:?}");
    };
    assert_eq!(
        (code.name(), code.to_c()),
        (expected.code.as_str(), expected.code_value),
        "{what}: {message}"
    );
    if let Some(exact) = &expected.message {
        assert_eq!(message, exact, "{what}");
    }
    if let Some(part) = &expected.message_contains {
        assert!(
            message.contains(part.as_str()),
            "{what}: {message:?} lacks {part:?}"
        );
    }
}

/// Runs each program of `names` on each plugin, checking its outputs or
/// its expected error.
fn check_on_every_plugin(names: &[&str]) {
    for plugin in Plugin::ALL {
        for name in names {
            host(plugin).check_program(name);
        }
    }
}

fn names_starting_with(prefix: &str) -> Vec<&'static str> {
    manifest()
        .programs
        .iter()
        .filter(|p| p.name.starts_with(prefix))
        .map(|p| p.name.as_str())
        .collect()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// RMS normalisation of each row of `n` values, in f64, rounded once: the
/// same reference as the generator's numpy oracle.
fn rms_norm_reference(x: &[f32], n: usize) -> Vec<f32> {
    x.chunks_exact(n)
        .flat_map(|row| {
            let mean = row
                .iter()
                .map(|&v| f64::from(v) * f64::from(v))
                .sum::<f64>()
                / n as f64;
            let scale = 1.0 / (mean + f64::from(EPS)).sqrt();
            row.iter().map(move |&v| (f64::from(v) * scale) as f32)
        })
        .collect()
}

/// Every `got[i]` within `rtol` of `want[i]`, relatively.
fn assert_relative(got: &[f32], want: &[f32], rtol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (f64::from(*g) - f64::from(*w)).abs();
        assert!(
            err <= rtol * f64::from(*w).abs(),
            "{what}: element {i} is {g}, expected {w} (relative error {:.2e} > {rtol:.0e})",
            err / f64::from(*w).abs()
        );
    }
}

// ---------------------------------------------------------------------------
// The programs and their manifest
// ---------------------------------------------------------------------------

#[test]
fn generator_reproduces_committed_programs() {
    cyxla_tests::assert_generator_reproduces(
        "tests/gen_guest_programs.py",
        "tests/programs/guests",
    );
}

#[test]
fn manifest_agrees_with_files_and_guests() {
    let m = manifest();
    assert_eq!(m.generator, "tests/gen_guest_programs.py");
    let dir = bundled_guests();
    let sandbox = Sandbox::new(dir, AllowList::all(), Limits::default()).unwrap();
    let mut referenced = std::collections::BTreeSet::from(["manifest.json".to_owned()]);
    for p in &m.programs {
        p.checked_mlir_text();
        assert!(
            !p.targets.is_empty(),
            "{}: every program calls a guest",
            p.name
        );
        for t in &p.targets {
            assert!(
                ALLOWED.contains(&t.as_str()) || CPP_SDK_TARGETS.contains(&t.as_str()),
                "{}: {t} is not in ALLOWED",
                p.name
            );
            assert!(
                sandbox.guests().serving(t).is_some(),
                "{}: no bundled guest in {} serves {t}",
                p.name,
                dir.display()
            );
        }
        let bytecode = std::fs::read(p.mlirbc_path()).unwrap();
        assert!(
            bytecode.starts_with(b"ML\xefR"),
            "{}: not MLIR bytecode",
            p.name
        );
        let mut names = vec![p.mlir.clone(), p.mlirbc.clone()];
        for t in p.inputs.iter().chain(&p.outputs) {
            if t.read_checked(&p.name).is_some() {
                names.push(t.file.clone().unwrap());
            }
        }
        for name in names {
            let local = name
                .strip_prefix("guests/")
                .unwrap_or_else(|| panic!("{}: {name} is not under guests/", p.name));
            referenced.insert(local.to_owned());
        }
        assert_eq!(
            p.outputs.iter().all(|t| t.file.is_some()),
            p.expect_error.is_none(),
            "{}: expected outputs exactly when no error is expected",
            p.name
        );
    }
    let on_disk: std::collections::BTreeSet<String> = cyxla_tests::files_in(&guest_programs_dir())
        .into_keys()
        .collect();
    assert_eq!(
        on_disk, referenced,
        "tests/programs/guests/ and its manifest disagree: rerun `{REGENERATE}`"
    );
}

// ---------------------------------------------------------------------------
// The guests on the three plugins
// ---------------------------------------------------------------------------

#[test]
fn every_allowed_target_is_registered_with_its_guest() {
    for plugin in Plugin::ALL {
        let h = host(plugin);
        let mut got: Vec<(&str, String)> = h
            .registered
            .iter()
            .map(|r| {
                let file = r.guest.file_name().unwrap().to_string_lossy().into_owned();
                (r.target.as_str(), file)
            })
            .collect();
        got.sort();
        let mut want: Vec<(&str, String)> = ALLOWED
            .iter()
            .map(|&t| {
                let file = match t {
                    "rms_norm" | "rms_norm_fwd" | "rms_norm_bwd" => "rms_norm.wasm",
                    "fail" | "trap" => "trap.wasm",
                    other => return (other, format!("{other}.wasm")),
                };
                (t, file.to_owned())
            })
            .collect();
        want.sort();
        assert_eq!(got, want, "{}", plugin.label());
    }
}

#[test]
fn rms_norm_matches_numpy_over_batch_size_one_and_zero_size_shapes() {
    let names: Vec<&str> = names_starting_with("rms_norm_")
        .into_iter()
        .filter(|n| {
            !n.contains("grad")
                && !n.contains("vmap")
                && !n.contains("then")
                && *n != "rms_norm_rank0"
        })
        .collect();
    for shape in ["8", "2x3x16", "8x1024", "1x1", "4x1", "0x5", "3x0", "2x0x4"] {
        assert!(
            names.contains(&&*format!("rms_norm_{shape}")),
            "rms_norm_{shape} in {names:?}"
        );
    }
    check_on_every_plugin(&names);
}

#[test]
fn rms_norm_of_a_rank0_input_is_the_guests_invalid_argument() {
    check_on_every_plugin(&["rms_norm_rank0"]);
}

#[test]
fn vmap_of_the_call_is_one_batched_guest_call() {
    check_on_every_plugin(&["rms_norm_vmap", "rms_norm_vmap_axis1"]);
}

#[test]
fn grad_through_custom_vjp_runs_fwd_and_bwd_in_guests() {
    let names = names_starting_with("rms_norm_grad_");
    assert!(names.len() >= 2, "{names:?}");
    check_on_every_plugin(&names);
}

#[test]
fn every_attribute_kind_reaches_the_guest_intact() {
    let entry = manifest().program("echo_attrs");
    let (_, _, bytes) = read_npy(&entry.outputs[0].path().unwrap());
    let expected: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // [M, count, ...]: the expected vector is not trivially short.
    assert!(
        expected[0] > 300.0 && expected[1] >= 29.0,
        "{:?}",
        &expected[..2]
    );
    for plugin in Plugin::ALL {
        host(plugin).check_program("echo_attrs");
    }
}

#[test]
fn scale_any_dispatches_on_f32_and_f64() {
    let names = names_starting_with("scale_any_");
    let dtypes: std::collections::BTreeSet<&str> = names
        .iter()
        .map(|n| manifest().program(n).inputs[0].xla_dtype.as_str())
        .collect();
    assert_eq!(dtypes, ["f32", "f64"].into());
    check_on_every_plugin(&names);
}

#[test]
fn tridiag_solve_matches_a_dense_solve() {
    let names = names_starting_with("tridiag_solve_");
    assert_eq!(names.len(), 2, "{names:?}");
    check_on_every_plugin(&names);
}

#[test]
fn in_place_updates_through_aliasing_and_donation_match_numpy() {
    // Rust and C++, f32 and f64, a batch dim, input_output_aliases and
    // donate_argnums: the handler writes only y[..., 0], the rest is x's.
    // The C++ programs run in cpp_sdk (see ALLOWED); all are lowered here.
    let names = names_starting_with("inplace_set0");
    assert_eq!(names.len(), 6, "{names:?}");
    for target in ["inplace_set0_", "inplace_set0_cpp_"] {
        for how in ["aliased_f32", "aliased_f64", "donated"] {
            assert!(
                names
                    .iter()
                    .any(|n| n.starts_with(target) && n.contains(how)),
                "no {target}{how}* program in {names:?}"
            );
        }
    }
    for name in &names {
        let text = std::fs::read_to_string(manifest().program(name).mlir_path()).unwrap();
        assert!(
            text.contains("output_operand_aliases = [#stablehlo.output_operand_alias<"),
            "{name}: the call declares no aliasing"
        );
        assert_eq!(
            name.contains("donated"),
            text.contains("tf.aliasing_output = 0"),
            "{name}: donation"
        );
    }
    let rust: Vec<&str> = names
        .into_iter()
        .filter(|n| !n.starts_with("inplace_set0_cpp"))
        .collect();
    check_on_every_plugin(&rust);
}

#[test]
fn two_guests_serve_one_program() {
    let entry = manifest().program("rms_norm_then_scale");
    assert_eq!(entry.targets, ["rms_norm", "scale_any"]);
    for plugin in Plugin::ALL {
        host(plugin).check_program("rms_norm_then_scale");
    }
}

#[test]
fn a_guest_error_reaches_the_client_with_its_code_and_message() {
    let expected = manifest().program("fail").expect_error.as_ref().unwrap();
    assert_eq!(expected.code, "RESOURCE_EXHAUSTED");
    for plugin in Plugin::ALL {
        host(plugin).check_program("fail");
    }
}

/// After a trap the trapped instance is gone, and calls go on: the same
/// target again (its own trap, from a fresh instance, not a wedged one),
/// another target of the same guest (`fail`, its own error), and another
/// guest's target (`rms_norm`, a correct result). No process-level damage.
#[test]
fn a_trap_is_named_and_the_next_calls_succeed() {
    let m = manifest();
    let trap = m.program("trap");
    let fail = m.program("fail");
    let ok = m.program("rms_norm_3x5");
    for plugin in Plugin::ALL {
        let h = host(plugin);
        let trap_exe = h.compile(trap, Form::Bytecode, 1).unwrap();
        let fail_exe = h.compile(fail, Form::Bytecode, 1).unwrap();
        let ok_exe = h.compile(ok, Form::Bytecode, 1).unwrap();
        for round in 0..3 {
            let what = format!("{} round {round}", plugin.label());
            let error = h.execute(trap, &trap_exe).expect_err("trap must fail");
            check_error(trap, &error, &format!("{what}: trap"));
            let Error::Pjrt { code, .. } = &error else {
                unreachable!()
            };
            assert_eq!(*code, ErrorCode::Internal);
            // The next call of the same target: the same trap, named again.
            let again = h.execute(trap, &trap_exe).expect_err("trap must fail");
            assert_eq!(again.to_string(), error.to_string(), "{what}");
            // Another target of the same guest works as written.
            let error = h.execute(fail, &fail_exe).expect_err("fail must fail");
            check_error(fail, &error, &format!("{what}: fail"));
            // Another guest's target succeeds.
            let outputs = h
                .execute(ok, &ok_exe)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            check_outputs(ok, &outputs, &what);
        }
        let handler = h.sandbox.handler("trap").expect("trap is allowed");
        assert!(
            handler.live_instances() <= h.sandbox.limits().instances,
            "{}: trapped instances are not leaked",
            plugin.label()
        );
    }
}

/// A program replicated on four devices, executed 200 times (two threads,
/// 100 each): every call runs in a guest, several at once, and every
/// device's result is checked against the reference, with inputs that
/// differ per device and per execution so a mixed-up buffer shows.
#[test]
fn four_devices_call_the_guest_concurrently_every_result_checked() {
    const THREADS: usize = 2;
    const EXECUTIONS: usize = 100;
    let entry = manifest().program("rms_norm_2x3x16");
    let dims = entry.inputs[0].shape.clone();
    let n = usize::try_from(*dims.last().unwrap()).unwrap();
    let len: usize = dims.iter().map(|&d| usize::try_from(d).unwrap()).product();
    // The Rust reference agrees with the generator's numpy oracle.
    let (_, _, x) = read_npy(&entry.inputs[0].path().unwrap());
    let (_, _, y) = read_npy(&entry.outputs[0].path().unwrap());
    assert_relative(
        &rms_norm_reference(&f32s(&x), n),
        &f32s(&y),
        2e-7,
        "reference vs numpy",
    );

    for plugin in Plugin::ALL {
        let h = host(plugin);
        let exe = Arc::new(h.compile(entry, Form::Bytecode, DEVICES).unwrap());
        assert_eq!(exe.num_devices(), DEVICES);
        std::thread::scope(|scope| {
            for t in 0..THREADS {
                let exe = Arc::clone(&exe);
                let dims = &dims;
                scope.spawn(move || {
                    for i in 0..EXECUTIONS {
                        let inputs: Vec<Vec<f32>> = (0..DEVICES)
                            .map(|d| pseudo_normal(len, (t * EXECUTIONS + i) * DEVICES + d))
                            .collect();
                        let buffers: Vec<Buffer> = inputs
                            .iter()
                            .enumerate()
                            .map(|(d, x)| {
                                h.client
                                    .buffer_from_host(&f32_bytes(x), DType::F32, dims, d)
                                    .unwrap()
                            })
                            .collect();
                        let args: Vec<Vec<&Buffer>> = buffers.iter().map(|b| vec![b]).collect();
                        let what = format!("{} thread {t} execution {i}", plugin.label());
                        let results = exe.execute(&args).unwrap_or_else(|e| panic!("{what}: {e}"));
                        assert_eq!(results.len(), DEVICES, "{what}");
                        for (d, (out, x)) in results.iter().zip(&inputs).enumerate() {
                            let (dtype, got_dims, bytes) = fetch(&out[0]).unwrap();
                            assert_eq!((dtype, &got_dims), (DType::F32, dims), "{what}");
                            let want = rms_norm_reference(x, n);
                            assert_relative(
                                &f32s(&bytes),
                                &want,
                                1e-6,
                                &format!("{what} device {d}"),
                            );
                        }
                    }
                });
            }
        });
    }
}

/// Deterministic standard-normal-ish values (sum of uniforms), distinct per
/// `seed`.
fn pseudo_normal(len: usize, seed: usize) -> Vec<f32> {
    let mut s = (seed as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d;
    let mut uniform = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..len)
        .map(|_| ((0..4).map(|_| uniform()).sum::<f64>() - 2.0) as f32 * 1.7)
        .collect()
}
