//! Issue 15, "Kernel authors": the errors a kernel author meets name what to
//! do, and `cyxla-host new` scaffolds guests that build, pass `check` and
//! run from JAX under the launcher, in Rust and in C++.
//!
//! Real parts only: the `cyxla-host` binary, the default PJRT plugin, the
//! bundled guests, rustup's wasm32 target, clang-19 for wasm32, cmake and
//! the venv's JAX (`scripts/setup.sh`); a missing one fails with a hint.

use std::path::PathBuf;
use std::process::{Command, Output};

use cyxla_tests::{Plugin, test_handlers_lib, workspace_root};

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cyxla-host"));
    cmd.env_remove("CYXLA_PJRT_PLUGIN")
        .env_remove("CYXLA_GUESTS");
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[track_caller]
fn assert_exit(out: &Output, code: i32, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: expected exit {code}\nstdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// The program without custom calls (registration happens before it runs).
fn plain_program() -> (PathBuf, [PathBuf; 2]) {
    let dir = workspace_root().join("tests/programs");
    (
        dir.join("no_custom_call.mlir"),
        [
            dir.join("no_custom_call.in0.npy"),
            dir.join("no_custom_call.in1.npy"),
        ],
    )
}

fn run_plain(cmd: &mut Command) -> Output {
    let (program, [a, b]) = plain_program();
    cmd.arg("--plugin")
        .arg(Plugin::P115.path())
        .arg("run")
        .arg(program)
        .arg("-i")
        .arg(a)
        .arg("-i")
        .arg(b)
        .output()
        .expect("cyxla-host runs")
}

#[test]
fn issue15_native_and_allow_for_one_target_say_who_wins_once() {
    let guests = cyxla_tests::bundled_guests();
    let out = run_plain(bin().arg("--guests").arg(guests).args([
        "--allow",
        "copy16",
        "--native",
        &format!("copy16={}:cyxla_test_copy16", test_handlers_lib().display()),
    ]));
    assert_exit(&out, 2, "--native and --allow for copy16");
    let err = text(&out.stderr);
    let reason = "target `copy16` is already registered by native";
    assert!(err.contains(reason), "{err}");
    assert!(
        err.contains("cyxla_test_copy16, which keeps serving it")
            && err.contains("guest copy16.wasm cannot serve it too"),
        "{err}"
    );
    assert_eq!(err.matches(reason).count(), 1, "reason repeated:\n{err}");
}

#[test]
fn issue15_native_library_without_a_slash_is_the_file_in_the_current_directory() {
    let lib = test_handlers_lib();
    let dir = lib.parent().expect("library directory");
    let name = lib.file_name().expect("library name").to_str().unwrap();
    let out = run_plain(bin().current_dir(dir).args([
        "--native",
        &format!("cyxla_test_copy16={name}:cyxla_test_copy16"),
    ]));
    assert_exit(&out, 0, "--native with a bare file name");

    // A bare name that is no file here: the message says what was searched.
    let scratch = tempfile::tempdir().expect("temporary directory");
    let out = run_plain(
        bin()
            .current_dir(scratch.path())
            .args(["--native", "t=libnowhere.so:sym"]),
    );
    assert_exit(&out, 2, "--native with a missing bare file name");
    let err = text(&out.stderr);
    assert!(
        err.contains("libnowhere.so (no such file in the current directory")
            && err.contains("e.g. ./libnowhere.so"),
        "{err}"
    );
}
