//! `cyxla-host sdk [--sdk PATH]`: where the guest SDK is that `new` would
//! use (its C/C++ headers and runtime, the CMake toolchain file, the Rust
//! crate), which guest ABI and XLA FFI API version it speaks, and which
//! build tools a guest build will use, with what to install when one is
//! missing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result};
use cyxla_guest_abi as abi;

use super::new::{
    self as scaffold, CPP_PACKAGES, CppCompiler, CppToolchain, RUST_TARGET, ZIG_INSTALL,
};

/// What [`describe`] found: the text to print, and whether every build
/// tool is there.
#[derive(Clone, Debug)]
pub struct SdkReport {
    /// The SDK's folder.
    pub sdk: PathBuf,
    /// One line per item, `name: value`.
    pub text: String,
    /// Whether the Rust and the C/C++ guest toolchains are both complete.
    pub tools_ok: bool,
}

/// Describes the guest SDK at `sdk`, else the one `cyxla-host new` would
/// find (installed with this binary, else the checkout's `guest-sdk`).
///
/// # Errors
///
/// When no SDK is found, or `sdk` is not one; the message says where it
/// looked.
pub fn describe(sdk: Option<&Path>) -> Result<SdkReport> {
    let sdk = match sdk {
        Some(sdk) => scaffold::checked_sdk(sdk)?,
        None => scaffold::find_sdk()?,
    };
    let (major, minor) = ffi_version(&sdk.join("include/xla/ffi/api/c_api.h"))?;
    let mut text = String::new();
    let mut line = |name: &str, value: String| {
        let _ = writeln!(text, "{:<22}{value}", format!("{name}:"));
    };
    line("guest SDK", sdk.display().to_string());
    line("guest ABI", format!("version {}", abi::ABI_VERSION));
    line(
        "XLA FFI API",
        format!("{major}.{minor} (the headers' XLA_FFI_API_MAJOR.MINOR)"),
    );
    line("C/C++ include", sdk.join("include").display().to_string());
    line(
        "C/C++ runtime",
        format!(
            "{} (C++), {} (C)",
            sdk.join("c/cyxla_runtime.cc").display(),
            sdk.join("c/cyxla_runtime.c").display()
        ),
    );
    line(
        "CMake toolchain",
        sdk.join("cmake/wasm32-cyxla.cmake").display().to_string(),
    );
    line(
        "Rust crate",
        format!(
            "cyxla-guest-sdk = {{ path = \"{}\" }}",
            sdk.display().to_string().replace('\\', "/")
        ),
    );

    let mut tools_ok = true;
    match rustc_version() {
        None => {
            tools_ok = false;
            line(
                "Rust toolchain",
                format!(
                    "missing: no rustc on the PATH; install rustup (https://rustup.rs), then \
                     `rustup target add {RUST_TARGET}`"
                ),
            );
        }
        Some((version, sysroot)) => {
            let installed = scaffold::has_rust_target(&sysroot);
            tools_ok &= installed;
            line(
                "Rust toolchain",
                if installed {
                    format!("{version}, target {RUST_TARGET} installed")
                } else {
                    format!(
                        "{version}; missing: the target {RUST_TARGET}: `rustup target add {RUST_TARGET}`"
                    )
                },
            );
        }
    }
    let (ok, cpp) = cpp_toolchain(&CppToolchain::find(&sdk));
    tools_ok &= ok;
    line("C/C++ toolchain", cpp);
    Ok(SdkReport {
        sdk,
        text,
        tools_ok,
    })
}

/// The `C/C++ toolchain` line for `tools` (as `new` and the CMake toolchain
/// file find them), and whether a build can run with them: the compiler
/// (Debian's clang-19 with its wasm32 linker, or zig) and CMake are needed,
/// binaryen's wasm-opt is not (the build warns without it).
fn cpp_toolchain(tools: &CppToolchain) -> (bool, String) {
    let apt = format!("`sudo apt-get install {CPP_PACKAGES}`");
    let mut missing = Vec::new();
    let mut found = Vec::new();
    match &tools.compiler {
        None => missing.push(format!(
            "a wasm32 C/C++ compiler (neither clang-19 nor zig): `{ZIG_INSTALL}` (no root \
             needed), or Debian's toolchain: {apt}"
        )),
        Some(CppCompiler::Zig(zig)) => found.push(format!(
            "zig {} ({}; `zig c++`, with its own libc++ and wasi-libc: {})",
            zig_version(zig).unwrap_or_else(|| "(does not run)".to_owned()),
            scaffold::which_or(zig).display(),
            if std::env::var_os("CYXLA_ZIG").is_some_and(|v| !v.is_empty()) {
                "chosen by CYXLA_ZIG"
            } else {
                "Debian's clang-19 is not on the PATH"
            }
        )),
        Some(CppCompiler::Clang(cxx)) => {
            found.push(scaffold::which_or(Path::new(cxx)).display().to_string());
            if cxx == "clang++-19" {
                match &tools.wasm_ld {
                    Some(ld) => found.push(ld.display().to_string()),
                    None => missing.push(format!("wasm-ld-19: {apt}")),
                }
            }
        }
    }
    let ok = missing.is_empty() && tools.cmake.is_some();
    match &tools.wasm_opt {
        Some(opt) => found.push(opt.display().to_string()),
        None => found.push(
            "no wasm-opt (optional: modules build without it, larger and with slower loops; \
             `sudo apt-get install binaryen` or `cargo install wasm-opt`)"
                .to_owned(),
        ),
    }
    match &tools.cmake {
        Some(cmake) => found.push(cmake.display().to_string()),
        None => {
            missing.push("cmake: `pip install cmake`, or `sudo apt-get install cmake`".to_owned())
        }
    }
    if missing.is_empty() {
        (ok, found.join(", "))
    } else {
        (
            ok,
            format!(
                "missing: {}; found: {}",
                missing.join("; "),
                found.join(", ")
            ),
        )
    }
}

/// `zig version`, if zig runs.
fn zig_version(zig: &Path) -> Option<String> {
    let out = Command::new(zig).arg("version").output().ok()?;
    out.status.success().then_some(())?;
    Some(String::from_utf8(out.stdout).ok()?.trim().to_owned())
}

/// `XLA_FFI_API_MAJOR` and `XLA_FFI_API_MINOR` of the SDK's `c_api.h`.
fn ffi_version(header: &Path) -> Result<(u32, u32)> {
    let text = std::fs::read_to_string(header)
        .with_context(|| format!("cannot read the SDK's {}", header.display()))?;
    let define = |name: &str| -> Result<u32> {
        text.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("#define ")?
                    .strip_prefix(name)?
                    .trim()
                    .parse()
                    .ok()
            })
            .with_context(|| format!("{} has no `#define {name} N`", header.display()))
    };
    Ok((define("XLA_FFI_API_MAJOR")?, define("XLA_FFI_API_MINOR")?))
}

/// `rustc --version` and the sysroot of the toolchain a build here uses
/// ([`scaffold::rust_sysroot`]), if rustc runs.
fn rustc_version() -> Option<(String, PathBuf)> {
    let out = Command::new("rustc").arg("--version").output().ok()?;
    out.status.success().then_some(())?;
    let version = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    Some((version, scaffold::rust_sysroot(Path::new("."))?))
}
