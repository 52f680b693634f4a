//! The `cyxla-host` binary with wasm guests: the JAX-lowered programs of
//! `tests/programs/guests/` (`tests/gen_guest_programs.py`) served by the
//! bundled guests (`guests/out`, built by `guests/build.sh`), `--allow`,
//! `--guests DIR` with a duplicate target or a malformed module in it,
//! guest errors and traps, and `--devices 4`.

#[path = "../../tests/common/mod.rs"]
mod common;

use common::{assert_exit, many_targets, text, write, write_guest};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use cyxla_tests::{
    Plugin, ProgramEntry, bundled_guests, dtype_from_descr, guest_manifest as manifest, read_npy,
};

fn bundled(file: &str) -> PathBuf {
    bundled_guests().join(file)
}

/// `cyxla-host --plugin P --guests DIR --allow T... run PROGRAM -i X...
/// EXTRA...` (no LAPACK targets: they play no part here).
fn command(
    plugin: Plugin,
    guests: &Path,
    allow: &[&str],
    program: &Path,
    entry: &ProgramEntry,
    extra: &[&str],
) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cyxla-host"));
    cmd.env_remove("CYXLA_PJRT_PLUGIN")
        .env_remove("CYXLA_GUESTS")
        .env("NO_COLOR", "1")
        .arg("--plugin")
        .arg(plugin.path())
        .arg("--guests")
        .arg(guests)
        .arg("--no-lapack");
    for t in allow {
        cmd.args(["--allow", t]);
    }
    cmd.arg("run").arg(program);
    for t in &entry.inputs {
        cmd.arg("-i").arg(t.path().expect("inputs have files"));
    }
    cmd.args(extra);
    cmd
}

/// Runs `cmd` to completion.
fn output(mut cmd: Command) -> Output {
    cmd.output().expect("cyxla-host runs")
}

/// Runs the bytecode of `entry` (see [`command`]) to completion.
fn run_bytecode(
    plugin: Plugin,
    guests: &Path,
    allow: &[&str],
    entry: &ProgramEntry,
    extra: &[&str],
) -> Output {
    output(command(
        plugin,
        guests,
        allow,
        &entry.mlirbc_path(),
        entry,
        extra,
    ))
}

fn targets(entry: &ProgramEntry) -> Vec<&str> {
    entry.targets.iter().map(String::as_str).collect()
}

/// Runs program `name` from `program` (its text or bytecode) with exactly
/// its targets allowed: checks every output file, or the expected error
/// (exit 1, XLA's code, the guest's message with the host's prefix).
fn check_program(plugin: Plugin, name: &str, bytecode: bool) {
    let entry = manifest().program(name);
    let program = if bytecode {
        entry.mlirbc_path()
    } else {
        entry.mlir_path()
    };
    let what = format!("{name} on {} ({})", plugin.label(), program.display());
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().display().to_string();
    let out = output(command(
        plugin,
        bundled_guests(),
        &targets(entry),
        &program,
        entry,
        &["--output-dir", &out_dir],
    ));
    match &entry.expect_error {
        None => {
            assert_exit(&out, 0, &what);
            for k in 0..entry.outputs.len() {
                let (dims, descr, bytes) = read_npy(&dir.path().join(format!("out{k}.npy")));
                let dtype = dtype_from_descr(&descr).unwrap();
                entry
                    .check_output(k, dtype, &dims, &bytes)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
            }
        }
        Some(expected) => {
            assert_exit(&out, 1, &what);
            let err = text(&out.stderr);
            let needle = expected
                .message
                .as_ref()
                .or(expected.message_contains.as_ref())
                .expect("a message to look for");
            assert!(
                err.contains(&format!("{}: {needle}", expected.code)),
                "{what}: stderr lacks `{}: {needle}`:\n{err}",
                expected.code
            );
        }
    }
}

#[test]
fn every_guest_program_runs_on_the_default_plugin() {
    let m = manifest();
    assert!(m.programs.len() >= 20, "{} programs", m.programs.len());
    for p in &m.programs {
        check_program(Plugin::P115, &p.name, true);
    }
}

#[test]
fn guest_programs_run_on_the_other_plugins() {
    for plugin in [Plugin::P106, Plugin::P81] {
        for name in [
            "rms_norm_2x3x16",
            "rms_norm_0x5",
            "rms_norm_vmap",
            "rms_norm_grad_3x16",
            "echo_attrs",
            "scale_any_f64_2x5",
            "tridiag_solve_f32_4x5",
            "rms_norm_then_scale",
            "rms_norm_rank0",
        ] {
            check_program(plugin, name, false);
        }
    }
}

#[test]
fn a_perf_map_names_the_guest_functions_when_asked_for() {
    let entry = manifest().program("rms_norm_3x5");
    let mut cmd = command(
        Plugin::P115,
        bundled_guests(),
        &["rms_norm"],
        &entry.mlir_path(),
        entry,
        &[],
    );
    let child = cmd
        .env(cyxla_sandbox::PERF_MAP_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cyxla-host starts");
    let map = PathBuf::from(format!("/tmp/perf-{}.map", child.id()));
    let out = child.wait_with_output().expect("cyxla-host runs");
    let text = std::fs::read_to_string(&map);
    let _ = std::fs::remove_file(&map);
    assert_exit(&out, 0, "rms_norm_3x5 with a perf map");
    let text = text.unwrap_or_else(|e| panic!("{}: {e}", map.display()));
    // The kernel's export (into which the SDK inlines its handler) by its
    // name, and the SDK's functions by their path.
    let named = |name: &str| text.lines().any(|l| l.ends_with(&format!(" {name}")));
    assert!(
        named("rms_norm"),
        "{} names no function rms_norm:\n{text}",
        map.display()
    );
    assert!(
        text.lines().any(|l| l.contains("cyxla_guest_sdk")),
        "{} names no function of cyxla_guest_sdk:\n{text}",
        map.display()
    );
}

#[test]
fn guest_error_and_trap_exit_1_naming_target_and_guest_file() {
    for plugin in Plugin::ALL {
        // Each program calls the target of its name.
        for (name, message) in [
            (
                "fail",
                "RESOURCE_EXHAUSTED: target `fail` (guest trap.wasm): tenant quota exceeded",
            ),
            (
                "trap",
                "INTERNAL: target `trap` (guest trap.wasm): trapped: wasm `unreachable` instruction executed",
            ),
        ] {
            let out = run_bytecode(
                plugin,
                bundled_guests(),
                &[name],
                manifest().program(name),
                &[],
            );
            assert_exit(&out, 1, name);
            let err = text(&out.stderr);
            assert!(err.contains(message), "{}: {err}", plugin.label());
        }
    }
}

#[test]
fn an_unallowed_target_gets_xlas_message_and_the_allow_hint() {
    let entry = manifest().program("rms_norm_then_scale");
    let guests = bundled_guests();
    for plugin in Plugin::ALL {
        let out = run_bytecode(plugin, guests, &["rms_norm"], entry, &[]);
        assert_exit(&out, 1, "scale_any not allowed");
        let err = text(&out.stderr);
        assert!(
            err.contains("No FFI handler registered for scale_any"),
            "{}: XLA's message: {err}",
            plugin.label()
        );
        let hint = format!(
            "target `scale_any` is served by {} but not allowed: add --allow scale_any",
            guests.join("scale_any.wasm").display()
        );
        assert!(err.contains(&hint), "{}: {hint}\n{err}", plugin.label());
    }
}

fn copy_into(dir: &Path, from: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to)
        .unwrap_or_else(|e| panic!("cannot copy {} to {}: {e}", from.display(), to.display()));
    to
}

#[test]
fn a_duplicate_target_is_an_error_naming_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let first = copy_into(dir.path(), &bundled("rms_norm.wasm"), "rms_norm.wasm");
    let second = copy_into(
        dir.path(),
        &bundled("rms_norm.wasm"),
        "tenant_rms_norm.wasm",
    );
    copy_into(dir.path(), &bundled("scale_any.wasm"), "scale_any.wasm");
    let entry = manifest().program("rms_norm_3x5");
    let out = run_bytecode(Plugin::P115, dir.path(), &["rms_norm"], entry, &[]);
    assert_exit(&out, 2, "duplicate target");
    let err = text(&out.stderr);
    let expected = format!(
        "target `rms_norm` is declared by more than one guest ({}, {}); none of them serves it",
        first.display(),
        second.display()
    );
    assert!(err.contains(&expected), "{expected}\n{err}");

    // A target no other guest declares still serves.
    let entry = manifest().program("scale_any_f32_3x4");
    let out = run_bytecode(Plugin::P115, dir.path(), &["scale_any"], entry, &["--json"]);
    assert_exit(&out, 0, "scale_any next to the duplicate");
}

#[test]
fn a_malformed_wasm_is_reported_and_the_other_guests_keep_serving() {
    let dir = tempfile::tempdir().unwrap();
    copy_into(dir.path(), &bundled("rms_norm.wasm"), "rms_norm.wasm");
    copy_into(dir.path(), &bundled("scale_any.wasm"), "scale_any.wasm");
    let broken = dir.path().join("broken.wasm");
    std::fs::write(&broken, b"\0asm\x01\0\0\0 not a module").unwrap();
    let empty = dir.path().join("empty.wasm");
    std::fs::write(&empty, b"").unwrap();

    let entry = manifest().program("rms_norm_then_scale");
    let out_dir = tempfile::tempdir().unwrap();
    let out = run_bytecode(
        Plugin::P115,
        dir.path(),
        &["rms_norm", "scale_any"],
        entry,
        &["--output-dir", &out_dir.path().display().to_string()],
    );
    assert_exit(&out, 0, "two guests next to malformed ones");
    let (dims, descr, bytes) = read_npy(&out_dir.path().join("out0.npy"));
    entry
        .check_output(0, dtype_from_descr(&descr).unwrap(), &dims, &bytes)
        .unwrap();
    let err = text(&out.stderr);
    for bad in [&broken, &empty] {
        assert!(
            err.contains(&format!("guest {} rejected: ", bad.display())),
            "{} is reported:\n{err}",
            bad.display()
        );
    }
    assert!(
        err.contains("is not valid WebAssembly"),
        "the reason is given:\n{err}"
    );

    // `list` shows the rejection and its reason; `check` exits 1 on it.
    let out = Command::new(env!("CARGO_BIN_EXE_cyxla-host"))
        .env("NO_COLOR", "1")
        .arg("--guests")
        .arg(dir.path())
        .args(["--allow", "rms_norm", "list"])
        .output()
        .unwrap();
    assert_exit(&out, 0, "list");
    let listing = text(&out.stdout);
    assert!(
        listing.contains("2 loaded, 2 rejected") && listing.contains("broken.wasm: "),
        "{listing}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cyxla-host"))
        .env("NO_COLOR", "1")
        .arg("check")
        .arg(&broken)
        .output()
        .unwrap();
    assert_exit(&out, 1, "check broken.wasm");
}

#[test]
fn four_devices_each_run_the_guest_and_each_result_is_checked() {
    let entry = manifest().program("rms_norm_2x3x16");
    for plugin in Plugin::ALL {
        let dir = tempfile::tempdir().unwrap();
        let out = run_bytecode(
            plugin,
            bundled_guests(),
            &["rms_norm"],
            entry,
            &[
                "--devices",
                "4",
                "--output-dir",
                &dir.path().display().to_string(),
            ],
        );
        assert_exit(&out, 0, "--devices 4");
        entry.check_device_outputs(dir.path(), 4, plugin.label());
        assert_eq!(text(&out.stdout).lines().count(), 4, "one line per device");
    }
}

// ---------------------------------------------------------------------------
// One guest cannot stop everyone's --allow-all (issue 16)
// ---------------------------------------------------------------------------

/// `cyxla-host --plugin (default) --guests DIR ALLOW... run
/// no_custom_call.mlir`, logging at INFO.
fn run_copy16(guests: &std::path::Path, allow: &[&str]) -> std::process::Output {
    let programs = cyxla_tests::programs_dir();
    std::process::Command::new(env!("CARGO_BIN_EXE_cyxla-host"))
        .env_remove("CYXLA_PJRT_PLUGIN")
        .env_remove("CYXLA_GUESTS")
        .env("NO_COLOR", "1")
        .env("CYXLA_LOG", "info")
        .arg("--plugin")
        .arg(cyxla_tests::Plugin::P115.path())
        .arg("--guests")
        .arg(guests)
        .args(allow)
        .arg("run")
        .arg(programs.join("no_custom_call.mlir"))
        .arg("-i")
        .arg(programs.join("no_custom_call.in0.npy"))
        .arg("-i")
        .arg(programs.join("no_custom_call.in1.npy"))
        .output()
        .unwrap()
}

#[test]
fn allow_all_refuses_what_cannot_register_and_serves_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        bundled_guests().join("copy16.wasm"),
        dir.path().join("copy16.wasm"),
    )
    .unwrap();
    // More targets than the registry has slots (4096).
    write(dir.path(), "big.wasm", &many_targets(5000));
    write(dir.path(), "big.limits.toml", b"targets = 5000\n");
    // A native LAPACK target, and one of its own.
    write_guest(
        dir.path(),
        "lapack.wasm",
        &[("lapack_sgetrf_ffi", "double"), ("own_double", "double")],
    );
    let out = run_copy16(dir.path(), &["--allow-all"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("guest not registered: its 5000 allowed targets do not fit the")
            && stderr.contains("big.wasm"),
        "{stderr}"
    );
    assert!(
        stderr.contains("target not registered (allowed by --allow-all)")
            && stderr.contains("lapack_sgetrf_ffi"),
        "{stderr}"
    );
    for served in ["target=copy16", "target=own_double"] {
        assert!(
            stderr.contains(&format!("registered sandboxed target {served}")),
            "{served}: {stderr}"
        );
    }
    // Named explicitly, the refused target is an error again.
    let out = run_copy16(
        dir.path(),
        &[
            "--allow",
            "lapack_sgetrf_ffi",
            "--allow",
            "cyxla_test_copy16",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("lapack_sgetrf_ffi"), "{stderr}");
}
