//! `cyxla-host new NAME --rust|--cpp [DIR]`: scaffold a guest project that
//! builds as it is, with one target `NAME` (`y = x * factor` over an f32
//! array), a native unit test and `call_from_jax.py`, which calls the target
//! from JAX on platform `cyxla` under the launcher.
//!
//! The project refers to the guest SDK by absolute path: `--sdk PATH`, else
//! the SDK installed with the running `cyxla-host` (the wheel's
//! `site-packages/jax_plugins/cyxla/sdk`: the C/C++ headers, runtime and
//! CMake toolchain file, and the Rust crate `cyxla-guest-sdk` with the
//! crates it depends on by path), else the `guest-sdk` of the checkout it was
//! built in (`<root>/target/<profile>/cyxla-host` → `<root>/guest-sdk`).
//!
//! The build tools are the author's: for Rust, a toolchain with the
//! `wasm32-unknown-unknown` target; for C++, Debian's clang-19 wasm32
//! toolchain, binaryen and CMake. The next steps `new` prints start with what
//! to install when one is missing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use crate::process;

/// The language of a scaffolded guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// A `no_std` Rust `cdylib` on the `cyxla-guest-sdk` crate.
    Rust,
    /// A C++ handler on `xla/ffi/api/ffi.h`, built with the CMake toolchain.
    Cpp,
}

/// What [`new`] creates.
#[derive(Clone, Debug)]
pub struct NewArgs {
    /// The target name (also the crate, module and file names).
    pub name: String,
    /// Rust or C++.
    pub language: Language,
    /// The project directory (must not exist, or be empty).
    pub dir: PathBuf,
    /// The guest SDK; `None`: found from the executable.
    pub sdk: Option<PathBuf>,
}

/// The scaffolded project: its directory and the commands to go on.
#[derive(Clone, Debug)]
pub struct Scaffold {
    /// The project directory.
    pub dir: PathBuf,
    /// The files written, relative to `dir`.
    pub files: Vec<PathBuf>,
    /// What to run next (for the user), one command a line.
    pub next_steps: String,
}

/// Writes the project.
///
/// # Errors
///
/// A name that is not an identifier, a directory that exists and is not
/// empty, an SDK that cannot be found, or a file that cannot be written;
/// each says what was wrong.
pub fn new(args: &NewArgs) -> Result<Scaffold> {
    check_name(&args.name)?;
    let sdk = match &args.sdk {
        Some(sdk) => checked_sdk(sdk)?,
        None => find_sdk()?,
    };
    if args.dir.exists() {
        let mut entries = std::fs::read_dir(&args.dir)
            .with_context(|| format!("cannot read {}", args.dir.display()))?;
        if entries.next().is_some() {
            bail!(
                "{} already exists and is not empty: name a new directory",
                args.dir.display()
            );
        }
    }
    let dir = std::path::absolute(&args.dir)
        .with_context(|| format!("bad path {}", args.dir.display()))?;
    // The C/C++ toolchain a build here would use (and the command that
    // compiles the native unit test with it).
    let cpp = (args.language == Language::Cpp).then(|| CppToolchain::find(&sdk));
    let native_cxx = cpp
        .as_ref()
        .map(CppToolchain::native_cxx)
        .unwrap_or_default();
    let files = match args.language {
        Language::Rust => rust_files(&args.name, &sdk, &dir),
        Language::Cpp => cpp_files(&args.name, &sdk, &native_cxx),
    };
    let mut written = Vec::new();
    for (rel, text) in files {
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(PathBuf::from(rel));
    }
    let missing = match &cpp {
        Some(cpp) => cpp.missing(),
        None => missing_rust_tools(&dir, rust_sysroot),
    };
    let next_steps = missing + &next_steps(&args.name, args.language, &dir, &native_cxx);
    Ok(Scaffold {
        dir,
        files: written,
        next_steps,
    })
}

/// A target name the scaffold can use everywhere: a C and Rust identifier.
fn check_name(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') || name.len() > 64 {
        bail!(
            "`{name}` cannot name a scaffolded target: use 1 to 64 of [A-Za-z0-9_], not starting \
             with a digit (it is the target, crate and file name; other target names work with \
             `kernel!`/`target!`/`CYXLA_TARGET_EXPORT` by hand)"
        );
    }
    if matches!(
        name,
        "self" | "super" | "crate" | "fn" | "mod" | "type" | "use" | "struct" | "enum" | "impl"
    ) {
        bail!("`{name}` is a Rust keyword: pick another target name");
    }
    Ok(())
}

pub(crate) fn checked_sdk(sdk: &Path) -> Result<PathBuf> {
    let sdk = std::path::absolute(sdk).with_context(|| format!("bad path {}", sdk.display()))?;
    if !sdk.join("Cargo.toml").is_file() || !sdk.join("include/xla/ffi/api/ffi.h").is_file() {
        bail!(
            "{} is not the cyxla guest SDK (no Cargo.toml and include/xla/ffi/api/ffi.h): \
             pass --sdk <cyxla checkout>/guest-sdk",
            sdk.display()
        );
    }
    Ok(sdk)
}

/// The SDK folder of the installed Python package (from the wheel).
pub const INSTALLED_SDK: &str = "sdk";

/// The SDK installed with this binary (the wheel's
/// `jax_plugins/cyxla/sdk`), else the `guest-sdk` of the checkout it
/// belongs to.
pub(crate) fn find_sdk() -> Result<PathBuf> {
    let installed = process::installed_library()
        .and_then(|library| library.parent().map(|dir| dir.join(INSTALLED_SDK)));
    let roots = process::workspace_roots();
    let candidates: Vec<PathBuf> = installed
        .into_iter()
        .chain(roots.iter().map(|root| root.join("guest-sdk")))
        .collect();
    for candidate in &candidates {
        if let Ok(sdk) = checked_sdk(candidate) {
            return Ok(sdk);
        }
    }
    bail!(
        "cannot find the cyxla guest SDK installed with the cyxla-host executable or above it \
         (looked in {}): reinstall the cyxla wheel, or pass --sdk <cyxla checkout>/guest-sdk",
        candidates
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The Rust target guests build for.
pub const RUST_TARGET: &str = "wasm32-unknown-unknown";

/// Debian's packages of the C/C++ guest toolchain (`apt-get install ...`).
pub const CPP_PACKAGES: &str = "clang-19 lld-19 wasi-libc libc++-19-dev-wasm32 \
                                libc++abi-19-dev-wasm32 libclang-rt-19-dev-wasm32 binaryen cmake";

/// What installs zig, the C/C++ compiler that needs no Debian package (nor
/// root): the Python package `ziglang` (clang with its own libc++ and
/// wasi-libc for wasm32), into the environment `cyxla-host` is installed in.
pub const ZIG_INSTALL: &str = "pip install ziglang";

/// The wasm32 C/C++ compiler of a guest build, as the SDK's CMake toolchain
/// file (`cmake/wasm32-cyxla.cmake`) and `guests/cpp/build.sh` pick it:
/// `CYXLA_ZIG` (zig), else `CYXLA_CXX`, else Debian's clang-19 when
/// `clang-19` and `clang++-19` are on the `PATH`, else zig
/// ([`find_zig`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CppCompiler {
    /// A clang command: Debian's `clang++-19`, or `CYXLA_CXX`.
    Clang(String),
    /// zig (`zig c++`): how to run it (`zig` when that is on the `PATH`,
    /// else its path).
    Zig(PathBuf),
}

/// The C/C++ guest toolchain a build here would use.
#[derive(Clone, Debug)]
pub(crate) struct CppToolchain {
    /// The compiler, if there is one.
    pub compiler: Option<CppCompiler>,
    /// Debian's wasm32 linker (lld-19), needed with Debian's clang-19
    /// (zig brings its own).
    pub wasm_ld: Option<PathBuf>,
    /// binaryen's `wasm-opt` (`CYXLA_WASM_OPT`, else on the `PATH`); the
    /// build runs without it, warning.
    pub wasm_opt: Option<PathBuf>,
    /// CMake, which the scaffold's build runs.
    pub cmake: Option<PathBuf>,
}

impl CppToolchain {
    /// The toolchain for the SDK at `sdk` (where zig may be installed beside
    /// it).
    pub(crate) fn find(sdk: &Path) -> Self {
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let compiler = if let Some(zig) = env("CYXLA_ZIG") {
            Some(CppCompiler::Zig(PathBuf::from(zig)))
        } else if let Some(cxx) = env("CYXLA_CXX") {
            Some(CppCompiler::Clang(cxx.to_string_lossy().into_owned()))
        } else if on_path("clang-19") && on_path("clang++-19") {
            Some(CppCompiler::Clang("clang++-19".to_owned()))
        } else {
            find_zig(sdk).map(CppCompiler::Zig)
        };
        let wasm_opt = match env("CYXLA_WASM_OPT") {
            Some(tool) if Path::new(&tool).components().count() > 1 => {
                Some(PathBuf::from(tool)).filter(|p| p.is_file())
            }
            Some(tool) => which(&tool.to_string_lossy()),
            None => which("wasm-opt"),
        };
        Self {
            wasm_ld: which("wasm-ld-19"),
            compiler,
            wasm_opt,
            cmake: which("cmake"),
        }
    }

    /// The command that compiles the scaffold's native unit test (native
    /// code, for this machine): `clang++-19`, else the machine's `c++`,
    /// else zig's (`zig c++`, whose first native build compiles zig's
    /// libc++ for this machine: a few minutes).
    pub(crate) fn native_cxx(&self) -> String {
        if on_path("clang++-19") {
            return "clang++-19".to_owned();
        }
        match &self.compiler {
            _ if on_path("c++") => "c++".to_owned(),
            Some(CppCompiler::Zig(zig)) => {
                format!("{} c++", shell_word(&zig.display().to_string()))
            }
            _ => "c++".to_owned(),
        }
    }

    /// Lines for the top of `new`'s next steps: what to install, for each
    /// tool that is missing (nothing when all are there). A missing
    /// `wasm-opt` is said but not required.
    pub(crate) fn missing(&self) -> String {
        let mut s = String::new();
        let apt = format!(
            "sudo apt-get install {}",
            CPP_PACKAGES
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        );
        match &self.compiler {
            None => {
                let _ = writeln!(
                    s,
                    "# no wasm32 C/C++ compiler (neither Debian's clang-19 nor zig); without root:"
                );
                let _ = writeln!(s, "{ZIG_INSTALL}");
                let _ = writeln!(s, "# or Debian's toolchain: {apt}");
            }
            Some(CppCompiler::Clang(cxx)) if cxx == "clang++-19" && self.wasm_ld.is_none() => {
                let _ = writeln!(
                    s,
                    "# wasm-ld-19 not found: install Debian's C/C++ wasm32 toolchain:"
                );
                let _ = writeln!(s, "{apt}");
            }
            Some(_) => {}
        }
        if self.cmake.is_none() {
            let _ = writeln!(s, "# cmake not found (or: sudo apt-get install cmake):");
            let _ = writeln!(s, "pip install cmake");
        }
        if self.wasm_opt.is_none() {
            let _ = writeln!(
                s,
                "# wasm-opt (binaryen) not found: the build runs without it, and the module is \
                 larger and its loops slower (the SDK's README.md, \"C/C++ without apt: zig\"); \
                 sudo apt-get install binaryen, or cargo install wasm-opt"
            );
        }
        s
    }
}

/// zig where the SDK's CMake toolchain file looks for it when Debian's
/// clang-19 is absent: `zig` on the `PATH`, else the Python package
/// `ziglang`'s installed beside the SDK (the wheel's SDK is
/// `site-packages/jax_plugins/cyxla/sdk`), in the `.venv` of the checkout
/// the SDK is in, or for the `python3` on the `PATH`.
pub(crate) fn find_zig(sdk: &Path) -> Option<PathBuf> {
    if on_path("zig") {
        return Some(PathBuf::from("zig"));
    }
    let beside = sdk.join("../../../ziglang/zig");
    let in_venv = std::fs::read_dir(sdk.join("../.venv/lib"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("site-packages/ziglang/zig"));
    if let Some(zig) = std::iter::once(beside).chain(in_venv).find(|p| p.is_file()) {
        return Some(zig.canonicalize().unwrap_or(zig));
    }
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))",
        ])
        .output()
        .ok()?;
    let zig = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    (out.status.success() && zig.is_file()).then_some(zig)
}

/// `word` for a POSIX shell line: as it is when it needs no quotes.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Lines for the top of a Rust scaffold's next steps: what to install
/// first when rustc or its wasm32 target is missing (nothing when both are
/// there), with `sysroot` for [`rust_sysroot`].
fn missing_rust_tools(dir: &Path, sysroot: impl Fn(&Path) -> Option<PathBuf>) -> String {
    let mut s = String::new();
    match sysroot(dir) {
        None => {
            let _ = writeln!(
                s,
                "# no Rust toolchain (rustc) on the PATH: install rustup (https://rustup.rs), then"
            );
            let _ = writeln!(s, "rustup target add {RUST_TARGET}");
        }
        Some(sysroot) if !has_rust_target(&sysroot) => {
            let _ = writeln!(
                s,
                "# the Rust target {RUST_TARGET} is not installed ({}):",
                sysroot.display()
            );
            let _ = writeln!(s, "rustup target add {RUST_TARGET}");
        }
        Some(_) => {}
    }
    s
}

/// Whether the toolchain at `sysroot` has the target guests build for.
pub(crate) fn has_rust_target(sysroot: &Path) -> bool {
    sysroot.join("lib/rustlib").join(RUST_TARGET).is_dir()
}

/// The sysroot of the `rustc` that builds in `dir` (rustup's choice there),
/// or `None` without one.
pub(crate) fn rust_sysroot(dir: &Path) -> Option<PathBuf> {
    let output = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .current_dir(dir)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    Some(PathBuf::from(text.trim()))
}

fn on_path(tool: &str) -> bool {
    which(tool).is_some()
}

/// Where `tool` is on the `PATH`, if it is.
pub(crate) fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(tool))
        .find(|file| file.is_file())
}

/// Where `tool` is: itself when it names a folder, else on the `PATH`
/// (itself when it is not there either).
pub(crate) fn which_or(tool: &Path) -> PathBuf {
    if tool.components().count() > 1 {
        return tool.to_owned();
    }
    which(&tool.to_string_lossy()).unwrap_or_else(|| tool.to_owned())
}

/// A path for a TOML or CMake string (both take `/` on every platform).
fn quoted(path: &Path) -> String {
    path.display()
        .to_string()
        .replace('\\', "/")
        .replace('"', "\\\"")
}

/// `native_cxx`: the command that compiles the C++ native unit test.
fn next_steps(name: &str, language: Language, dir: &Path, native_cxx: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "cd {}", dir.display());
    match language {
        Language::Rust => {
            let _ = writeln!(
                s,
                "cargo test                                       # the native unit test"
            );
            let _ = writeln!(s, "cargo build --target wasm32-unknown-unknown --release");
            let _ = writeln!(
                s,
                "mkdir -p guests && cp target/wasm32-unknown-unknown/release/{name}.wasm guests/"
            );
        }
        Language::Cpp => {
            let _ = writeln!(
                s,
                "{native_cxx} -std=c++17 {name}_test.cc -o {name}_test && ./{name}_test   # the native unit test"
            );
            let _ = writeln!(s, "cmake -S . -B build && cmake --build build");
            let _ = writeln!(s, "mkdir -p guests && cp build/{name}.wasm guests/");
        }
    }
    let _ = writeln!(s, "cyxla-host check guests/{name}.wasm");
    let _ = writeln!(
        s,
        "cyxla-host --guests guests --allow {name} -- python call_from_jax.py"
    );
    s
}

fn python_snippet(name: &str) -> String {
    format!(
        r#""""Calls the cyxla guest target `{name}` from JAX, on platform cyxla.

Build the guest (see README.md), then run this under the launcher:

    cyxla-host --guests guests --allow {name} -- python call_from_jax.py

The launcher configures the cyxla PJRT plugin and picks the platform; the
code below is plain JAX.
"""

import jax
import jax.numpy as jnp
import numpy as np


def {name}(x, factor):
    # y = x * factor, computed by the sandboxed guest.
    return jax.ffi.ffi_call("{name}", jax.ShapeDtypeStruct(x.shape, x.dtype))(
        x, factor=np.float32(factor)
    )


x = jnp.arange(4, dtype=jnp.float32)
y = jax.jit({name}, static_argnums=1)(x, 2.5)
print(jax.config.jax_platforms, np.asarray(y).tolist())
"#
    )
}

/// `--remap-path-prefix` entries of a TOML array naming `dir` `to`, also by
/// its real path when a symlink leads to it (rustc names the folder it runs
/// in by its real path).
fn remaps(dir: &Path, to: &str) -> String {
    let real = dir
        .ancestors()
        .find_map(|a| Some(a.canonicalize().ok()?.join(dir.strip_prefix(a).ok()?)));
    let mut dirs = vec![dir.to_owned()];
    dirs.extend(real.filter(|real| real != dir));
    dirs.iter()
        .map(|d| {
            let d = d.display().to_string();
            let d = d.replace('\\', "\\\\").replace('"', "\\\"");
            format!("    \"--remap-path-prefix={d}={to}\",\n")
        })
        .collect()
}

fn rust_files(name: &str, sdk: &Path, dir: &Path) -> Vec<(String, String)> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")));
    let remaps = cargo_home.map_or_else(String::new, |home| remaps(&home, "/cargo"))
        + &remaps(dir, &format!("/{name}"))
        + &remaps(sdk, "/cyxla/guest-sdk")
        // A checkout's SDK depends on the guest ABI beside it (`../abi`); the
        // wheel's holds it inside (`abi/`), under the remap above.
        + &sdk
            .parent()
            .map(|root| root.join("abi"))
            .filter(|abi| abi.join("Cargo.toml").is_file())
            .map_or_else(String::new, |abi| remaps(&abi, "/cyxla/abi"));
    let sdk = quoted(sdk);
    let cargo = format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
cyxla-guest-sdk = {{ path = "{sdk}" }}

[dev-dependencies]
# `testing`: build call frames in a buffer and run the handler natively.
cyxla-guest-sdk = {{ path = "{sdk}", features = ["testing"] }}

[profile.release]
opt-level = 3
lto = true
panic = "abort"
# DWARF line tables: a trap names each frame's source file and line. The
# code is the same without them (only the module is larger); to drop them,
# set `debug = false` and `strip = "debuginfo"`.
debug = "line-tables-only"

[profile.dev]
panic = "abort"

# A project of its own, even inside another Cargo workspace.
[workspace]
"#
    );
    let config = format!(
        r#"# wasm32 guests may use SIMD (wasmtime supports it).
#
# The remaps keep this machine's folders out of the module: its panic
# messages and line tables name cargo's home /cargo, this project /{name} and
# the SDK /cyxla/guest-sdk. The same sources then give the same bytes in any
# folder, against the SDK in the same folder (cargo hashes a dependency
# outside the project by its folder, and the hash orders the module's
# functions). `cyxla-host new` wrote these folders: after moving one, edit
# its line.
[target.wasm32-unknown-unknown]
rustflags = [
    "-C", "target-feature=+simd128",
{remaps}]
"#
    );
    let lib = format!(
        r#"//! Guest `{name}`: custom-call target `{name}`, `y = x * factor` for
//! `x: f32[...]` and attribute `factor: f32`.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use cyxla_guest_sdk::{{Attrs, Buffer, Error, Result, ResultBuffer, kernel}};

kernel!("{name}", {name}, {name}_kernel);

/// `y = x * factor`: one f32 operand, one f32 result of the same shape.
/// The export checks each call against these parameters (as many operands
/// and results, of these dtypes) before the kernel runs; a target that
/// updates a buffer in place takes a `CallFrame` instead (`target!`).
pub fn {name}_kernel(
    x: Buffer<'_, f32>,
    mut y: ResultBuffer<'_, f32>,
    attrs: Attrs<'_>,
) -> Result<()> {{
    let factor: f32 = attrs.get("factor")?;
    if y.dims() != x.dims() {{
        return Err(Error::invalid_argument(alloc::format!(
            "y has shape {{:?}}, expected x's {{:?}}",
            y.dims(),
            x.dims()
        )));
    }}
    for (y, x) in y.iter_mut().zip(x.iter()) {{
        *y = x * factor;
    }}
    Ok(())
}}

#[cfg(test)]
mod tests {{
    use super::*;
    use cyxla_guest_sdk::DataType;
    use cyxla_guest_sdk::testing::{{FrameBuilder, TestCall}};

    /// A call with `x = [1, -2, 0.5]`, `factor = 2` and an f32 `y` of
    /// shape `y_dims`.
    fn call_with_y(y_dims: &[i64]) -> TestCall {{
        FrameBuilder::new()
            .arg(&[3], &[1.0f32, -2.0, 0.5])
            .ret(DataType::F32, y_dims)
            .attr("factor", 2.0f32)
            .build()
    }}

    #[test]
    fn scales_by_factor() {{
        let mut call = call_with_y(&[3]);
        call.kernel({name}_kernel).unwrap();
        assert_eq!(call.ret::<f32>(0), [2.0, -4.0, 1.0]);
    }}

    #[test]
    fn refuses_a_result_of_another_shape() {{
        let mut call = call_with_y(&[2]);
        let error = call.kernel({name}_kernel).unwrap_err();
        assert_eq!(error.message, "y has shape [2], expected x's [3]");
    }}
}}
"#
    );
    let readme = format!(
        r#"# {name}: a cyxla guest in Rust

Target `{name}`: `y = x * factor` (`x: f32[...]`, attribute `factor: f32`),
in `src/lib.rs`. Guest SDK: `{sdk}` (`cargo doc -p cyxla-guest-sdk --open`).

Builds with a Rust toolchain (1.95 or newer) with the `{target}` target
(`rustup target add {target}`); the SDK's crates.io dependencies are
fetched on the first build.

```sh
{steps}```
"#,
        steps = readme_steps(name, Language::Rust, ""),
        target = RUST_TARGET,
    );
    vec![
        ("Cargo.toml".to_owned(), cargo),
        (".cargo/config.toml".to_owned(), config),
        ("src/lib.rs".to_owned(), lib),
        ("call_from_jax.py".to_owned(), python_snippet(name)),
        ("README.md".to_owned(), readme),
        (".gitignore".to_owned(), "/target\n/guests\n".to_owned()),
    ]
}

/// The next steps for a README's shell block: those for the project's own
/// folder, without their heading line.
fn readme_steps(name: &str, language: Language, native_cxx: &str) -> String {
    next_steps(name, language, Path::new("."), native_cxx)
        .lines()
        .skip(1)
        .fold(String::new(), |acc, l| acc + l + "\n")
}

fn cpp_files(name: &str, sdk: &Path, native_cxx: &str) -> Vec<(String, String)> {
    let sdk = quoted(sdk);
    let kernel_h = format!(
        r#"// The computation of target `{name}`, free of XLA types: the handler in
// {name}.cc calls it, and {name}_test.cc tests it natively.
#pragma once

#include <cstddef>

namespace {name}_kernel {{

// y[i] = x[i] * factor for i < n.
inline void Scale(const float* x, float* y, std::size_t n, float factor) {{
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * factor;
}}

}}  // namespace {name}_kernel
"#
    );
    let kernel_cc = format!(
        r#"// Guest `{name}`: custom-call target `{name}`, y = x * factor for
// x: f32[...] and attribute factor: f32. An ordinary XLA FFI handler; the
// CYXLA_TARGET line at the end makes it a cyxla guest.
#include "xla/ffi/api/ffi.h"
#include "{name}_kernel.h"

namespace ffi = xla::ffi;

static ffi::Error {name}_impl(float factor, ffi::Buffer<ffi::F32> x,
                              ffi::ResultBuffer<ffi::F32> y) {{
  auto xd = x.dimensions();
  auto yd = y->dimensions();
  if (xd.size() != yd.size()) {{
    return ffi::Error::InvalidArgument("y must have the shape of x");
  }}
  for (size_t i = 0; i < xd.size(); ++i) {{
    if (xd[i] != yd[i]) {{
      return ffi::Error::InvalidArgument("y must have the shape of x");
    }}
  }}
  {name}_kernel::Scale(x.typed_data(), y->typed_data(), x.element_count(), factor);
  return ffi::Error::Success();
}}

XLA_FFI_DEFINE_HANDLER_SYMBOL({name}_handler, {name}_impl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("factor")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

CYXLA_TARGET({name}, {name}_handler);
"#
    );
    let test_cc = format!(
        r#"// Native unit test of {name}'s computation:
//   {native_cxx} -std=c++17 {name}_test.cc -o {name}_test && ./{name}_test
#include <cstdio>

#include "{name}_kernel.h"

int main() {{
  const float x[3] = {{1.0f, -2.0f, 0.5f}};
  const float want[3] = {{2.0f, -4.0f, 1.0f}};
  float y[3] = {{0, 0, 0}};
  {name}_kernel::Scale(x, y, 3, 2.0f);
  for (int i = 0; i < 3; ++i) {{
    if (y[i] != want[i]) {{
      std::fprintf(stderr, "y[%d] = %g, expected %g\n", i, y[i], want[i]);
      return 1;
    }}
  }}
  std::puts("{name}_test: ok");
  return 0;
}}
"#
    );
    let cmake = format!(
        r#"# Builds build/{name}.wasm with the cyxla guest SDK's toolchain:
#   cmake -S . -B build && cmake --build build
cmake_minimum_required(VERSION 3.20)
if(NOT CMAKE_TOOLCHAIN_FILE)
  set(CMAKE_TOOLCHAIN_FILE "{sdk}/cmake/wasm32-cyxla.cmake")
endif()
project({name} C CXX)

cyxla_add_guest({name} {name}.cc)
"#
    );
    let readme = format!(
        r#"# {name}: a cyxla guest in C++

Target `{name}`: `y = x * factor` (`x: f32[...]`, attribute `factor: f32`):
the handler in `{name}.cc`, its computation in `{name}_kernel.h`. Guest
SDK: `{sdk}` (see its README.md).

Builds with CMake and Debian's clang-19 wasm32 toolchain and binaryen
(`sudo apt-get install {packages}`), or without them with zig and CMake
from PyPI (`{ZIG_INSTALL} cmake`), which the SDK's CMake toolchain file
uses when clang-19 is absent.

```sh
{steps}```
"#,
        steps = readme_steps(name, Language::Cpp, native_cxx),
        packages = CPP_PACKAGES
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    );
    vec![
        (format!("{name}_kernel.h"), kernel_h),
        (format!("{name}.cc"), kernel_cc),
        (format!("{name}_test.cc"), test_cc),
        ("CMakeLists.txt".to_owned(), cmake),
        ("call_from_jax.py".to_owned(), python_snippet(name)),
        ("README.md".to_owned(), readme),
        (
            ".gitignore".to_owned(),
            format!("/build\n/guests\n/{name}_test\n"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_identifiers() {
        for good in ["my_kernel", "_x", "K2"] {
            check_name(good).unwrap();
        }
        for bad in ["", "2k", "my-kernel", "a.b", "fn"] {
            let e = check_name(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("`{bad}`")), "{e}");
        }
    }

    #[test]
    fn refuses_a_directory_with_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x"), "").unwrap();
        let sdk = crate::process::workspace_root().join("guest-sdk");
        let e = new(&NewArgs {
            name: "k".into(),
            language: Language::Rust,
            dir: dir.path().to_owned(),
            sdk: Some(sdk),
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("already exists and is not empty"), "{e}");
    }

    #[test]
    fn the_checkout_sdk_is_found_and_scaffolds_name_no_missing_tool_here() {
        // This machine has every tool (scripts/setup.sh): no install line.
        let dir = tempfile::tempdir().unwrap();
        for language in [Language::Rust, Language::Cpp] {
            let made = new(&NewArgs {
                name: "k".into(),
                language,
                dir: dir.path().join(format!("{language:?}")),
                sdk: None,
            })
            .unwrap();
            assert!(made.next_steps.starts_with("cd "), "{}", made.next_steps);
        }
        assert_eq!(
            find_sdk().unwrap(),
            crate::process::workspace_root().join("guest-sdk")
        );
    }

    #[test]
    fn a_missing_wasm32_target_or_rustc_says_what_to_install() {
        // A sysroot without the wasm32 target, as rustup installs a
        // toolchain by default.
        let sysroot = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(sysroot.path().join("lib/rustlib/x86_64-unknown-linux-gnu"))
            .unwrap();
        let lines = missing_rust_tools(sysroot.path(), |_| Some(sysroot.path().to_owned()));
        assert!(
            lines.contains("is not installed")
                && lines.ends_with("rustup target add wasm32-unknown-unknown\n"),
            "{lines}"
        );
        let lines = missing_rust_tools(sysroot.path(), |_| None);
        assert!(
            lines.contains("install rustup (https://rustup.rs)"),
            "{lines}"
        );
        std::fs::create_dir_all(sysroot.path().join("lib/rustlib/wasm32-unknown-unknown")).unwrap();
        let lines = missing_rust_tools(sysroot.path(), |_| Some(sysroot.path().to_owned()));
        assert_eq!(lines, "");
    }

    #[test]
    fn refuses_a_directory_that_is_not_the_sdk() {
        let dir = tempfile::tempdir().unwrap();
        let e = checked_sdk(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is not the cyxla guest SDK"), "{e}");
    }
}
