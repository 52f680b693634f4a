//! Builds `native/test_handlers.cc` (XLA FFI handlers in C++ against jaxlib's
//! real `xla/ffi/api/ffi.h`) into `$OUT_DIR/libcyxla_test_handlers.so` and
//! exposes its path to the crate as `CYXLA_TEST_HANDLERS`.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `scripts/setup.sh` installs jaxlib's headers, relative to the workspace root.
const JAXLIB_INCLUDE: &str = ".venv/lib/python3.11/site-packages/jaxlib/include";

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let workspace = manifest_dir
        .parent()
        .expect("tests/ has a parent directory");

    let include = workspace.join(JAXLIB_INCLUDE);
    let ffi_h = include.join("xla/ffi/api/ffi.h");
    if !ffi_h.is_file() {
        panic!(
            "jaxlib headers not found at {}: run scripts/setup.sh",
            include.display()
        );
    }

    let source = manifest_dir.join("native/test_handlers.cc");
    let version_script = manifest_dir.join("native/test_handlers.map");
    let lib = out_dir.join("libcyxla_test_handlers.so");

    for path in [&source, &version_script] {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    for header in ["ffi.h", "api.h", "c_api.h"] {
        println!(
            "cargo:rerun-if-changed={}",
            include.join("xla/ffi/api").join(header).display()
        );
    }
    println!("cargo:rerun-if-env-changed=CXX");

    compile(&source, &version_script, &include, &lib);
    println!("cargo:rustc-env=CYXLA_TEST_HANDLERS={}", lib.display());
}

/// Runs `$CXX` (default `c++`) to build the shared library `lib`.
fn compile(source: &Path, version_script: &Path, include: &Path, lib: &Path) {
    let cxx = env::var_os("CXX").unwrap_or_else(|| "c++".into());
    let mut cmd = Command::new(&cxx);
    cmd.args([
        "-std=c++17",
        "-O2",
        "-fPIC",
        "-shared",
        "-ffp-contract=off",
        "-Wall",
    ])
    .arg("-isystem")
    .arg(include)
    .arg(format!("-Wl,--version-script={}", version_script.display()))
    .arg(source)
    .arg("-o")
    .arg(lib);
    let output = match cmd.output() {
        Ok(output) => output,
        Err(err) => panic!(
            "cannot run the C++ compiler {:?} to build {}: {err}: install a C++17 compiler (scripts/setup.sh) or set CXX",
            cxx,
            source.display()
        ),
    };
    if !output.status.success() {
        panic!(
            "{:?} failed ({}) building {}:\n{}{}",
            cmd,
            output.status,
            source.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
