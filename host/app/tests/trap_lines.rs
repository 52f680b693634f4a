//! Issue 36, "Kernel authors: find out why a kernel failed": a guest built
//! with line tables (the Rust scaffold's release profile) traps with the
//! source file and line of each frame.
//!
//! Real parts only: the `cyxla-host` binary (for `new`), rustup's wasm32
//! target (`scripts/setup.sh`); a missing
//! one fails with a hint.

#[path = "../../tests/common/mod.rs"]
mod common;

use common::{assert_exit, text};
use std::path::{Path, PathBuf};
use std::process::Command;

use cyxla_sandbox::{AllowList, HostBuffer, HostCall, Limits, Sandbox};
use plugin_glue::DType;

/// The error of calling `target` (one f32[4] result, no operands) from the
/// guests in `dir`.
fn trap_message(dir: &Path, target: &str) -> String {
    let sandbox = Sandbox::new(dir, AllowList::all(), Limits::default()).expect("a sandbox");
    let handler = sandbox
        .handler(target)
        .unwrap_or_else(|| panic!("no handler for {target}: {:?}", sandbox.guests().rejected()));
    let call = HostCall::new().ret(HostBuffer::zeros(DType::F32, &[4]));
    match handler.call_host(&call) {
        Ok(()) => panic!("`{target}` succeeded; it should trap"),
        Err(error) => error.message,
    }
}

/// The 1-based line of `source` holding `needle`.
fn line_of(source: &str, needle: &str) -> usize {
    source
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` is not in the source"))
        + 1
}

/// The trap message names `file` and the line of `source` marked `the trap`.
fn assert_names_line(message: &str, source: &str, file: &str) {
    let line = line_of(source, "the trap");
    assert!(
        message.contains("trapped: wasm `unreachable` instruction executed")
            && message.contains(&format!("{file}:{line})")),
        "expected {file}:{line} in: {message}"
    );
}

/// `cyxla-host new name --lang` in a temporary folder, which must succeed,
/// with `file` of the new project replaced by `source`: the temporary
/// folder and the project's.
fn scaffold(name: &str, lang: &str, file: &str, source: &str) -> (tempfile::TempDir, PathBuf) {
    let scratch = tempfile::tempdir().expect("temporary directory");
    let dir = scratch.path().join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_cyxla-host"))
        .args(["new", name, lang])
        .arg(&dir)
        .output()
        .expect("cyxla-host runs");
    assert_exit(&out, 0, &format!("cyxla-host new {lang}"));
    std::fs::write(dir.join(file), source).expect("write the source");
    (scratch, dir)
}

/// A folder `guests` in `dir` holding a copy of `module` as `name`.wasm.
fn guests_of(dir: &Path, module: &Path, name: &str) -> PathBuf {
    let guests = dir.join("guests");
    std::fs::create_dir_all(&guests).expect("guests folder");
    std::fs::copy(module, guests.join(format!("{name}.wasm"))).expect("copy the module");
    guests
}

/// The handler traps on the line marked `the trap`, under an `if` on the
/// line before it: the compiler turns the branch into a conditional trap,
/// which must keep the trap's line, not take the `if`'s
/// (`vendor/cranelift-codegen/CYXLA-PATCH.md`, section 4). The result is
/// filled rather than indexed: with LTO, LLVM merges the `unreachable` of a
/// bounds check's panic with this one, and a merged instruction has line 0
/// in the line table (the guide's "Finding out why a kernel failed").
const RUST_SOURCE: &str = r#"//! A guest that traps at a known line.
#![no_std]

use cyxla_guest_sdk::{CallFrame, Result, target};

target!("trap_line_rs", trap_line_rs, handler);

fn handler(frame: &CallFrame<'_>) -> Result<()> {
    let mut y = frame.ret::<f32>(0)?;
    y.fill(1.0);
    if y.element_count() == 4 {
        core::arch::wasm32::unreachable() // the trap
    }
    Ok(())
}
"#;

#[test]
fn issue36_rust_scaffold_release_build_traps_naming_its_source_line() {
    let (_scratch, dir) = scaffold("trap_line_rs", "--rust", "src/lib.rs", RUST_SOURCE);
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .current_dir(&dir)
        .args(["build", "--release", "--target", "wasm32-unknown-unknown"])
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo build failed (install the pinned Rust toolchain with its wasm32 target with \
         scripts/setup.sh):\n{}",
        text(&out.stderr)
    );
    let module = dir.join("target/wasm32-unknown-unknown/release/trap_line_rs.wasm");
    let guests = guests_of(&dir, &module, "trap_line_rs");
    assert_names_line(
        &trap_message(&guests, "trap_line_rs"),
        RUST_SOURCE,
        "lib.rs",
    );
}

/// A C++ handler that traps on the line marked `the trap`, under an `if`
/// on the line before it (as [`RUST_SOURCE`]).
const CPP_SOURCE: &str = r#"// A guest that traps at a known line.
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error Impl(ffi::Result<ffi::Buffer<ffi::F32>> y) {
  y->typed_data()[0] = 1.0f;
  if (y->element_count() == 4) {
    __builtin_trap();  // the trap
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(TrapLine, Impl, ffi::Ffi::Bind().Ret<ffi::Buffer<ffi::F32>>());
CYXLA_TARGET(trap_line_cpp, TrapLine);
"#;

fn workspace_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The trap names `trap_line_cpp.cc` and the line of `the trap`.
fn assert_names_cpp_line(message: &str) {
    assert_names_line(message, CPP_SOURCE, "trap_line_cpp.cc");
}

#[test]
fn issue36_cpp_build_script_with_debug_info_traps_naming_its_source_line() {
    let scratch = tempfile::tempdir().expect("temporary directory");
    let source = scratch.path().join("trap_line_cpp.cc");
    std::fs::write(&source, CPP_SOURCE).expect("write the source");
    let guests = scratch.path().join("guests");
    let out = Command::new("bash")
        .arg(workspace_root().join("guests/cpp/build.sh"))
        .arg("--debug-info")
        .arg("--out")
        .arg(&guests)
        .arg(&source)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "guests/cpp/build.sh --debug-info failed (install clang-19, lld-19, wasi-libc, \
         libc++-19-dev-wasm32 and binaryen with scripts/setup.sh):\n{}",
        text(&out.stderr)
    );
    assert_names_cpp_line(&trap_message(&guests, "trap_line_cpp"));
}

#[test]
fn issue36_cpp_cmake_toolchain_with_debug_info_traps_naming_its_source_line() {
    let (_scratch, dir) = scaffold("trap_line_cpp", "--cpp", "trap_line_cpp.cc", CPP_SOURCE);
    let build = dir.join("build");
    for args in [
        vec![
            "-S".into(),
            dir.display().to_string(),
            "-B".into(),
            build.display().to_string(),
            "-DCYXLA_DEBUG_INFO=ON".into(),
        ],
        vec!["--build".into(), build.display().to_string()],
    ] {
        let out = Command::new("cmake")
            .args(&args)
            .output()
            .expect("cmake runs (install cmake with scripts/setup.sh)");
        assert!(
            out.status.success(),
            "cmake {args:?} failed (install cmake, clang-19, lld-19, wasi-libc, \
             libc++-19-dev-wasm32 and binaryen with scripts/setup.sh):\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let guests = guests_of(&dir, &build.join("trap_line_cpp.wasm"), "trap_line_cpp");
    assert_names_cpp_line(&trap_message(&guests, "trap_line_cpp"));
}
