//! Issue 15, "Kernel authors": the errors a kernel author meets name what to
//! do, and `cyxla-host new` scaffolds guests that build, pass `check` and
//! run from JAX under the launcher, in Rust and in C++.
//!
//! Real parts only: the `cyxla-host` binary, the default PJRT plugin, the
//! bundled guests, rustup's wasm32 target, clang-19 for wasm32, cmake and
//! the venv's JAX (`scripts/setup.sh`); a missing one fails with a hint.

#[path = "../../tests/common/mod.rs"]
mod common;

use common::{assert_exit, assert_usage_error, line_after, text};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cyxla_tests::{Plugin, test_handlers_lib, venv_zig, workspace_root};

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cyxla-host"));
    cmd.env_remove("CYXLA_PJRT_PLUGIN")
        .env_remove("CYXLA_GUESTS");
    cmd
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

// ---------------------------------------------------------------------------
// `cyxla-host new`
// ---------------------------------------------------------------------------

const RUST_HINT: &str =
    "install the pinned Rust toolchain with its wasm32 target with scripts/setup.sh";
const CPP_HINT: &str = "install clang-19, lld-19, wasi-libc, libc++-19-dev-wasm32, binaryen and cmake with \
     scripts/setup.sh";

/// Runs `cmd` in `dir`, failing with its output and `hint` unless it succeeds.
#[track_caller]
fn run_in(dir: &Path, cmd: &mut Command, hint: &str) -> String {
    text(&run_in_output(dir, cmd, hint).stdout)
}

/// [`run_in`], with all the command printed.
fn run_in_output(dir: &Path, cmd: &mut Command, hint: &str) -> Output {
    let out = cmd
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}; {hint}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}); {hint}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// `cyxla-host new NAME --LANG DIR`, then `check` and the launcher on what
/// the project builds into `guests/`.
fn scaffold(name: &str, language: &str) -> (tempfile::TempDir, PathBuf) {
    let scratch = tempfile::tempdir().expect("temporary directory");
    let dir = scratch.path().join(name);
    let out = bin()
        .args(["new", name, language])
        .arg(&dir)
        .output()
        .expect("cyxla-host runs");
    assert_exit(&out, 0, "cyxla-host new");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("call_from_jax.py") && stdout.contains(&format!("--allow {name}")),
        "{stdout}"
    );
    (scratch, dir)
}

/// Copies the module built at `dir/built` to `guests/NAME.wasm`; `check`
/// accepts it with target NAME, and the launcher runs `call_from_jax.py`
/// with it.
fn check_and_call(dir: &Path, name: &str, built: &str) {
    std::fs::create_dir_all(dir.join("guests")).expect("guests folder");
    let wasm = dir.join("guests").join(format!("{name}.wasm"));
    std::fs::copy(dir.join(built), &wasm).expect("copy the module");
    let out = bin()
        .arg("check")
        .arg(&wasm)
        .output()
        .expect("cyxla-host runs");
    assert_exit(&out, 0, "cyxla-host check on the scaffold's module");
    assert!(
        text(&out.stdout).contains(&format!("target   {name} (export `{name}`)")),
        "{}",
        text(&out.stdout)
    );
    let python = workspace_root().join(".venv/bin/python");
    let out = bin()
        .current_dir(dir)
        .args(["--plugin"])
        .arg(Plugin::P115.path())
        .args(["--guests", "guests", "--allow", name, "--"])
        .arg(&python)
        .arg("call_from_jax.py")
        .output()
        .expect("cyxla-host runs");
    assert_exit(&out, 0, "call_from_jax.py under the launcher");
    assert_eq!(
        text(&out.stdout).trim(),
        "cyxla [0.0, 2.5, 5.0, 7.5]",
        "stderr:\n{}",
        text(&out.stderr)
    );
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    // The scaffold is a project of its own: nothing of this build leaks in.
    cmd.env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    cmd
}

#[test]
fn issue15_new_rust_guest_builds_passes_check_and_runs_from_jax() {
    let name = "scaffold_rs";
    let (_scratch, dir) = scaffold(name, "--rust");
    let tests = run_in(&dir, cargo().arg("test"), RUST_HINT);
    assert!(tests.contains("test result: ok. 2 passed"), "{tests}");
    run_in(
        &dir,
        cargo().args(["build", "--target", "wasm32-unknown-unknown", "--release"]),
        RUST_HINT,
    );
    check_and_call(
        &dir,
        name,
        &format!("target/wasm32-unknown-unknown/release/{name}.wasm"),
    );
}

/// Where `needle` occurs in `haystack`, if it does.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Two Rust scaffolds of one name, in folders of other lengths and depths,
/// build into the same bytes, which name neither folder, nor the SDK's nor
/// cargo's home: the scaffold's `.cargo/config.toml` remaps them.
#[test]
fn new_rust_guest_gives_the_same_bytes_in_any_folder() {
    let name = "same_rs";
    let scratch = tempfile::tempdir().expect("temporary directory");
    let dirs = [
        scratch.path().join(name),
        scratch.path().join("deeper/folder").join(name),
    ];
    for dir in &dirs {
        let out = bin()
            .args(["new", name, "--rust"])
            .arg(dir)
            .output()
            .expect("cyxla-host runs");
        assert_exit(&out, 0, "cyxla-host new");
    }
    // Both at once: on more than two cores, half the time.
    let [a, b] = std::thread::scope(|s| {
        let built = dirs.each_ref().map(|dir| {
            s.spawn(move || {
                run_in(
                    dir,
                    cargo().args(["build", "--target", "wasm32-unknown-unknown", "--release"]),
                    RUST_HINT,
                );
                let wasm = dir.join(format!("target/wasm32-unknown-unknown/release/{name}.wasm"));
                std::fs::read(&wasm).unwrap_or_else(|e| panic!("read {}: {e}", wasm.display()))
            })
        });
        built.map(|h| h.join().expect("a build"))
    });
    assert!(
        a == b,
        "the same scaffold built in {} and {} gave other bytes ({} and {} bytes, first \
         difference at byte {:?})",
        dirs[0].display(),
        dirs[1].display(),
        a.len(),
        b.len(),
        a.iter().zip(&b).position(|(x, y)| x != y)
    );
    let cargo_home = std::env::var_os("CARGO_HOME").map_or_else(
        || Path::new(&std::env::var_os("HOME").expect("HOME is set")).join(".cargo"),
        PathBuf::from,
    );
    let sdk = workspace_root().join("guest-sdk");
    for (dir, bytes) in dirs.iter().zip([&a, &b]) {
        for folder in [dir, &sdk, &cargo_home] {
            let needle = folder.to_string_lossy();
            if let Some(at) = find(bytes, needle.as_bytes()) {
                panic!(
                    "the module built in {} names {needle} at byte {at}",
                    dir.display()
                );
            }
        }
    }
    assert!(
        find(&a, b"/cyxla/guest-sdk/src/").is_some(),
        "the module names no SDK source by its remapped folder"
    );
}

#[test]
fn issue15_new_cpp_guest_builds_passes_check_and_runs_from_jax() {
    let name = "scaffold_cc";
    let (_scratch, dir) = scaffold(name, "--cpp");
    let test_bin = format!("{name}_test");
    run_in(
        &dir,
        Command::new("clang++-19").args([
            "-std=c++17",
            &format!("{name}_test.cc"),
            "-o",
            &test_bin,
        ]),
        CPP_HINT,
    );
    let ran = run_in(&dir, &mut Command::new(dir.join(&test_bin)), CPP_HINT);
    assert_eq!(ran.trim(), format!("{name}_test: ok"));
    run_in(
        &dir,
        Command::new("cmake").args(["-S", ".", "-B", "build"]),
        CPP_HINT,
    );
    let built = run_in_output(
        &dir,
        Command::new("cmake").args(["--build", "build"]),
        CPP_HINT,
    );
    let said = format!("{}{}", text(&built.stdout), text(&built.stderr));
    // The toolchain file gives compile-only flags to compiles only: a link
    // given `-mllvm ...` warns "argument unused during compilation".
    assert!(
        !said.contains("warning"),
        "the scaffold's build warns:\n{said}"
    );
    check_and_call(&dir, name, &format!("build/{name}.wasm"));
}

#[test]
fn issue15_new_refuses_bad_names_and_says_why() {
    let scratch = tempfile::tempdir().expect("temporary directory");
    let out = bin()
        .args(["new", "my-kernel", "--rust"])
        .arg(scratch.path().join("k"))
        .output()
        .expect("cyxla-host runs");
    assert_usage_error(
        &out,
        "a target name with a dash",
        "`my-kernel` cannot name a scaffolded target",
    );
    let out = bin().args(["new", "k"]).output().expect("cyxla-host runs");
    assert_usage_error(&out, "no language", "--rust");
}

// ---------------------------------------------------------------------------
// The kernel author's guide (guest-sdk/README.md): every block is compiled
// or run. Rust blocks are doctests of cyxla-guest-sdk (`ReadmeDoctests`);
// C++ blocks are compiled for wasm32 here; a block preceded by
// `<!-- file: PATH -->` is written to PATH in a scratch folder; shell
// blocks run there, in order, with `cyxla-host` and the venv's `python` on
// PATH and `guest-sdk` and `.venv` linked to this checkout's.
// ---------------------------------------------------------------------------

/// One fenced block of the guide.
#[derive(Debug)]
struct Block {
    line: usize,
    lang: String,
    file: Option<String>,
    code: String,
}

fn guide_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    let mut marker: Option<String> = None;
    while let Some((i, line)) = lines.next() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("<!-- file: ") {
            marker = Some(rest.trim_end_matches("-->").trim().to_owned());
            continue;
        }
        if let Some(lang) = trimmed.strip_prefix("```") {
            let mut code = String::new();
            for (_, body) in lines.by_ref() {
                if body.trim() == "```" {
                    break;
                }
                code.push_str(body);
                code.push('\n');
            }
            blocks.push(Block {
                line: i + 1,
                lang: lang.trim().to_owned(),
                file: marker.take(),
                code,
            });
            continue;
        }
        if !trimmed.is_empty() {
            marker = None;
        }
    }
    blocks
}

#[test]
fn guide_every_block_is_compiled_or_run() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("guest-sdk/README.md"))
        .expect("read guest-sdk/README.md");
    let lib = std::fs::read_to_string(root.join("guest-sdk/src/lib.rs")).expect("read lib.rs");
    assert!(
        lib.contains("#[doc = include_str!(\"../README.md\")]"),
        "guest-sdk/src/lib.rs must run the guide's Rust blocks as doctests"
    );
    let blocks = guide_blocks(&readme);
    let scratch = tempfile::tempdir().expect("temporary directory");
    let dir = scratch.path();
    std::os::unix::fs::symlink(root.join("guest-sdk"), dir.join("guest-sdk")).expect("link");
    std::os::unix::fs::symlink(root.join(".venv"), dir.join(".venv")).expect("link");

    let (mut rust, mut cpp, mut sh, mut files) = (0, 0, 0, 0);
    for block in &blocks {
        if let Some(file) = &block.file {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("create folders");
            let code = block
                .code
                .replace("/path/to/cyxla", &root.display().to_string());
            std::fs::write(&path, code).expect("write the block's file");
            files += 1;
        }
        match block.lang.as_str() {
            "rust" => rust += 1,
            "cpp" => {
                let source = dir.join(format!("block_{}.cc", block.line));
                std::fs::write(&source, &block.code).expect("write the block");
                run_in(
                    dir,
                    Command::new("clang++-19")
                        .args(["--target=wasm32-wasi", "-std=c++17", "-O2", "-msimd128"])
                        .args(["-fno-exceptions", "-fno-rtti", "-Wall", "-Werror", "-c"])
                        .arg("-Iguest-sdk/include")
                        .arg(&source)
                        .arg("-o")
                        .arg(dir.join(format!("block_{}.o", block.line))),
                    &format!("guest-sdk/README.md line {}: {CPP_HINT}", block.line),
                );
                cpp += 1;
            }
            "sh" => sh += 1,
            other => assert!(
                block.file.is_some(),
                "guest-sdk/README.md line {}: a ```{other} block that is neither compiled nor \
                 run (give it a `<!-- file: PATH -->` line that a shell block uses)",
                block.line
            ),
        }
    }
    // Shell blocks last, in order: they use the files above.
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_cyxla-host"))
        .parent()
        .expect("bin dir")
        .to_owned();
    let path = std::env::join_paths([bin_dir, root.join(".venv/bin")].into_iter().chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    for block in blocks.iter().filter(|b| b.lang == "sh") {
        let mut cmd = Command::new("bash");
        cmd.args(["-euo", "pipefail", "-c", &block.code])
            .env("PATH", &path)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CYXLA_GUESTS")
            .env_remove("CYXLA_PJRT_PLUGIN");
        let out = run_in(
            dir,
            &mut cmd,
            &format!(
                "guest-sdk/README.md line {}: the shell block failed; {RUST_HINT}; {CPP_HINT}",
                block.line
            ),
        );
        if block.code.contains("python call_from_jax.py") {
            assert!(
                out.contains("cyxla [0.0, 2.5, 5.0, 7.5]"),
                "line {}: {out}",
                block.line
            );
        }
        if block.code.contains("python call_my_norm.py") {
            assert!(
                out.contains("my_norm ok on cyxla"),
                "line {}: {out}",
                block.line
            );
        }
    }
    // docs/writing-kernels.md shows the same path: run it too.
    let top = std::fs::read_to_string(root.join("docs/writing-kernels.md"))
        .expect("read docs/writing-kernels.md");
    let section = &top[top
        .find("## From a scaffold")
        .expect("docs/writing-kernels.md: From a scaffold")..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let readme_scratch = tempfile::tempdir().expect("temporary directory");
    let readme_sh: Vec<Block> = guide_blocks(section)
        .into_iter()
        .filter(|b| b.lang == "sh")
        .collect();
    assert_eq!(
        readme_sh.len(),
        1,
        "docs/writing-kernels.md: one shell block"
    );
    for block in &readme_sh {
        let out = run_in(
            readme_scratch.path(),
            Command::new("bash")
                .args(["-euo", "pipefail", "-c", &block.code])
                .env("PATH", &path)
                .env_remove("CARGO_TARGET_DIR")
                .env_remove("RUSTFLAGS")
                .env_remove("CARGO_ENCODED_RUSTFLAGS")
                .env_remove("CYXLA_GUESTS")
                .env_remove("CYXLA_PJRT_PLUGIN"),
            &format!("docs/writing-kernels.md: {RUST_HINT}"),
        );
        assert!(out.contains("cyxla [0.0, 2.5, 5.0, 7.5]"), "{out}");
    }
    assert!(rust >= 7, "only {rust} Rust blocks");
    assert!(cpp >= 5, "only {cpp} C++ blocks");
    assert!(sh >= 8, "only {sh} shell blocks");
    assert!(files >= 7, "only {files} file blocks");
}

#[test]
fn issue15_a_std_guest_with_the_sdk_panic_handler_is_told_what_to_do() {
    let scratch = tempfile::tempdir().expect("temporary directory");
    let dir = scratch.path();
    let sdk = workspace_root().join("guest-sdk");
    std::fs::create_dir_all(dir.join("src")).expect("create src");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"std_guest\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [lib]\ncrate-type = [\"cdylib\"]\n\n[dependencies]\n\
             cyxla-guest-sdk = {{ path = \"{}\" }}\n\n[workspace]\n",
            sdk.display()
        ),
    )
    .expect("write Cargo.toml");
    // No `no_std`: the guest links std, and the SDK's default features
    // bring the SDK's panic handler too.
    std::fs::write(
        dir.join("src/lib.rs"),
        "use cyxla_guest_sdk::{CallFrame, Result, target};\n\
         pub fn h(_frame: &CallFrame<'_>) -> Result<()> { Ok(()) }\n\
         target!(\"std_guest\", std_guest, h);\n",
    )
    .expect("write lib.rs");
    let out = cargo()
        .args(["build", "--target", "wasm32-unknown-unknown"])
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo: {e}; {RUST_HINT}"));
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success(),
        "a std guest built with the SDK's panic handler"
    );
    assert!(
        stderr.contains(
            "duplicate lang item in crate `cyxla_guest_sdk_panic_handler_a_guest_with_std_needs\
             _the_sdk_with_default_features_false_features_allocator`"
        ),
        "the error does not say what to do ({RUST_HINT} if the wasm32 target is missing):\n{stderr}"
    );
}

/// Issue 49: `cyxla-host sdk` names the SDK `new` uses (this checkout's
/// `guest-sdk`), every folder and file it lists exists, its versions are the
/// headers' and the ABI's, and it names this machine's toolchains; a path
/// that is no SDK is refused with what was looked for.
#[test]
fn sdk_names_its_folders_versions_and_toolchains() {
    let out = bin().arg("sdk").output().expect("cyxla-host runs");
    assert_exit(&out, 0, "cyxla-host sdk");
    let said = text(&out.stdout);
    let field = |name: &str| -> String {
        line_after(&said, &format!("{name}:"))
            .unwrap_or_else(|| panic!("no `{name}:` line in\n{said}"))
            .to_owned()
    };
    let sdk = workspace_root().join("guest-sdk");
    assert_eq!(Path::new(&field("guest SDK")), sdk, "{said}");
    assert_eq!(Path::new(&field("C/C++ include")), sdk.join("include"));
    assert_eq!(
        Path::new(&field("CMake toolchain")),
        sdk.join("cmake/wasm32-cyxla.cmake")
    );
    for path in [
        field("C/C++ include"),
        field("CMake toolchain"),
        sdk.join("c/cyxla_runtime.cc").display().to_string(),
    ] {
        assert!(Path::new(&path).exists(), "{path} does not exist");
    }
    assert!(
        field("C/C++ runtime").contains(&sdk.join("c/cyxla_runtime.cc").display().to_string()),
        "{said}"
    );
    let header = std::fs::read_to_string(sdk.join("include/xla/ffi/api/c_api.h")).expect("c_api.h");
    let define = |name: &str| {
        line_after(&header, &format!("#define {name} "))
            .unwrap_or_else(|| panic!("c_api.h defines no {name}"))
            .to_owned()
    };
    assert!(
        field("XLA FFI API").starts_with(&format!(
            "{}.{} ",
            define("XLA_FFI_API_MAJOR"),
            define("XLA_FFI_API_MINOR")
        )),
        "{said}"
    );
    assert_eq!(
        field("guest ABI"),
        format!("version {}", cyxla_guest_abi::ABI_VERSION)
    );
    assert_eq!(
        field("Rust crate"),
        format!("cyxla-guest-sdk = {{ path = \"{}\" }}", sdk.display())
    );
    // The set-up installs both toolchains: each is named, none is missing.
    assert!(
        field("Rust toolchain").starts_with("rustc ")
            && field("Rust toolchain").ends_with("target wasm32-unknown-unknown installed"),
        "{said}"
    );
    assert!(
        field("C/C++ toolchain").contains("clang++-19")
            && field("C/C++ toolchain").contains("wasm-opt")
            && !said.contains("missing"),
        "{said}"
    );

    let scratch = tempfile::tempdir().expect("temporary directory");
    let out = bin()
        .args(["sdk", "--sdk"])
        .arg(scratch.path())
        .output()
        .expect("cyxla-host runs");
    assert_usage_error(
        &out,
        "cyxla-host sdk --sdk <not an SDK>",
        "is not the cyxla guest SDK",
    );
}

// ---------------------------------------------------------------------------
// C/C++ without Debian's clang-19: zig (the Python package `ziglang`, which
// scripts/setup.sh installs into .venv), found by guests/cpp/build.sh and the
// SDK's CMake toolchain file when clang-19 is not on the PATH.
// ---------------------------------------------------------------------------

const ZIG_HINT: &str = "zig comes from the Python package ziglang, which scripts/setup.sh installs \
     into .venv (`.venv/bin/pip install ziglang`); its first build compiles zig's libc++ and \
     wasi-libc into zig's cache (about a minute)";

/// `CYXLA_ZIG` chooses zig in the SDK's CMake toolchain file even when
/// `CYXLA_CXX` (and `CYXLA_CC`) are set too, as it does in `cyxla-host new`
/// and guests/cpp/build.sh: here the clang they name does not exist, so the
/// configure step fails if the toolchain takes it.
#[test]
fn cyxla_zig_wins_over_cyxla_cxx_in_the_cmake_toolchain() {
    let root = workspace_root();
    let zig = venv_zig().display().to_string();
    let project = tempfile::tempdir().expect("temporary directory");
    std::fs::write(
        project.path().join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.20)\nproject(cyxla_zig_wins C CXX)\n\
         message(STATUS \"compiler: ${CMAKE_CXX_COMPILER} ${CMAKE_CXX_COMPILER_ARG1}\")\n",
    )
    .expect("write CMakeLists.txt");
    let out = Command::new("cmake")
        .arg("-S")
        .arg(project.path())
        .arg("-B")
        .arg(project.path().join("build"))
        .arg(format!(
            "-DCMAKE_TOOLCHAIN_FILE={}",
            root.join("guest-sdk/cmake/wasm32-cyxla.cmake").display()
        ))
        .env("CYXLA_ZIG", &zig)
        .env("CYXLA_CXX", "/nonexistent/clang++")
        .env("CYXLA_CC", "/nonexistent/clang")
        .output()
        .expect("cmake runs (apt install cmake)");
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "configure failed:\n{said}");
    assert!(
        said.contains(&format!("compiler: {zig} c++")),
        "the toolchain did not take CYXLA_ZIG:\n{said}"
    );
}

/// A `PATH` of one folder, `dir`, of links to the programs of this `PATH`
/// but Debian's wasm32 C/C++ toolchain (`clang*`, `*-19`, `lld*`,
/// `llvm-*`) and, unless `wasm_opt`, binaryen's `wasm-opt`; `.venv/bin`
/// (its `python3` has zig) before it. Asserts that no clang-19 is on it.
fn path_without_clang19(dir: &Path, wasm_opt: bool) -> std::ffi::OsString {
    std::fs::create_dir_all(dir).expect("create the PATH folder");
    let excluded = |name: &str| {
        name.starts_with("clang")
            || name.ends_with("-19")
            || name.starts_with("lld")
            || name.starts_with("ld.lld")
            || name.starts_with("llvm-")
            || (!wasm_opt && name == "wasm-opt")
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    for folder in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let link = dir.join(name);
            if excluded(name) || link.symlink_metadata().is_ok() || !entry.path().is_file() {
                continue;
            }
            std::os::unix::fs::symlink(entry.path(), &link).expect("link a program");
        }
    }
    let path =
        std::env::join_paths([workspace_root().join(".venv/bin"), dir.to_owned()]).expect("PATH");
    for tool in ["clang++-19", "clang-19", "wasm-ld-19"]
        .into_iter()
        .chain((!wasm_opt).then_some("wasm-opt"))
    {
        let found = Command::new("bash")
            .args(["-c", &format!("command -v {tool}")])
            .env("PATH", &path)
            .output()
            .expect("bash runs");
        assert!(
            !found.status.success(),
            "{tool} is on the PATH meant to be without it: {}",
            text(&found.stdout)
        );
    }
    path
}

/// Calls every target of the bundled C++ guests in `guests` from JAX under
/// the launcher, and returns one line per call: its name and the sha256 of
/// its results (dtype, shape and bytes), or its error message. Asserts the
/// results are right on the way (rms_norm against numpy in f64, the
/// in-place update exactly).
fn cpp_guest_results(guests: &Path, scratch: &Path) -> String {
    let script = scratch.join("cpp_guest_results.py");
    std::fs::write(
        &script,
        r#"import hashlib
import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
EPS = np.float32(1e-5)
rng = np.random.default_rng(7)
lines = []


def record(name, *arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.asarray(a)
        h.update(f"{a.dtype} {a.shape}".encode())
        h.update(a.tobytes())
    lines.append(f"{name} {h.hexdigest()}")


def call(target, results, *args, **attrs):
    return jax.ffi.ffi_call(target, results)(*args, **attrs)


x = rng.standard_normal((64, 1024)).astype(np.float32)
f32 = jax.ShapeDtypeStruct(x.shape, np.float32)
y = call("rms_norm_cpp", f32, x, eps=EPS)
want = x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True) + 1e-5)
assert np.allclose(np.asarray(y), want, rtol=2e-6, atol=1e-6)
record("rms_norm_cpp", y)
y, res = call("rms_norm_cpp_fwd", (f32, jax.ShapeDtypeStruct(x.shape[:-1], np.float32)), x, eps=EPS)
record("rms_norm_cpp_fwd", y, res)
ct = rng.standard_normal(x.shape).astype(np.float32)
record("rms_norm_cpp_bwd", call("rms_norm_cpp_bwd", f32, res, x, ct))
for dtype in ["float32", "float64", "complex64", "int8", "int32", "int64", "uint8"]:
    v = (rng.standard_normal(1000) * 60).astype(dtype)
    s = call("scale_any_cpp", jax.ShapeDtypeStruct(v.shape, v.dtype), v, factor=np.float64(1.37))
    record(f"scale_any_cpp {dtype}", s)
for target, args in [("scale_any_cpp", {"factor": np.float64(2)}), ("rms_norm_cpp", {"eps": EPS})]:
    v = np.ones((2, 3), np.int16)
    try:
        call(target, jax.ShapeDtypeStruct(v.shape, v.dtype), v, **args).block_until_ready()
        lines.append(f"{target} int16: no error")
    except Exception as e:
        lines.append(f"{target} int16: {type(e).__name__}: {' '.join(str(e).split())}")
xs = (np.arange(60).reshape(3, 4, 5) * 2 + 1).astype(np.float64)
z = jax.jit(
    lambda x: jax.ffi.ffi_call("inplace_set0_cpp", jax.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases={0: 0})(
        x, value=np.float64(42)
    )
)(xs)
want = xs.copy()
want[..., 0] = 42
assert np.array_equal(np.asarray(z), want)
record("inplace_set0_cpp", z)
print("\n".join(lines))
"#,
    )
    .expect("write the script");
    let out = bin()
        .args(["--plugin"])
        .arg(Plugin::P115.path())
        .arg("--guests")
        .arg(guests)
        .args(["--allow-all", "--"])
        .arg(workspace_root().join(".venv/bin/python"))
        .arg(&script)
        .output()
        .expect("cyxla-host runs");
    assert_exit(&out, 0, &format!("the C++ guests of {}", guests.display()));
    text(&out.stdout)
}

#[test]
fn zig_builds_the_bundled_cpp_guests_without_clang19_with_clang19s_results() {
    let root = workspace_root();
    let scratch = tempfile::tempdir().expect("temporary directory");
    let build = |out: &str, path: Option<&std::ffi::OsStr>, hint: &str| -> Output {
        let mut cmd = Command::new("bash");
        cmd.arg(root.join("guests/cpp/build.sh"))
            .arg("--out")
            .arg(scratch.path().join(out));
        for var in ["CYXLA_CXX", "CYXLA_CC", "CYXLA_ZIG", "CYXLA_WASM_OPT"] {
            cmd.env_remove(var);
        }
        if let Some(path) = path {
            cmd.env("PATH", path);
        }
        run_in_output(&root, &mut cmd, hint)
    };
    let clang19 = build("clang19", None, CPP_HINT);
    let with_opt = path_without_clang19(&scratch.path().join("bin"), true);
    let zig = build("zig", Some(&with_opt), ZIG_HINT);
    let without_opt = path_without_clang19(&scratch.path().join("bin-no-wasm-opt"), false);
    let zig_no_opt = build("zig-no-wasm-opt", Some(&without_opt), ZIG_HINT);

    let guests = ["inplace_set0_cpp", "rms_norm_cpp", "scale_any_cpp"];
    for (out, said, toolchain) in [
        ("clang19", &clang19, "clang++-19)"),
        ("zig", &zig, "zig 0."),
        ("zig-no-wasm-opt", &zig_no_opt, "zig 0."),
    ] {
        let stdout = text(&said.stdout);
        for guest in guests {
            let line = stdout
                .lines()
                .find(|l| l.contains(&format!("/{guest}.wasm (")))
                .unwrap_or_else(|| panic!("{out}: {guest} not built:\n{stdout}"));
            assert!(line.contains(toolchain), "{out}: {line}");
        }
    }
    assert!(
        text(&zig_no_opt.stderr).contains("warning: wasm-opt (binaryen) not found")
            && !text(&zig.stderr).contains("warning"),
        "zig:\n{}\nzig without wasm-opt:\n{}",
        text(&zig.stderr),
        text(&zig_no_opt.stderr)
    );
    // Other compilers, other bytes (and wasm-opt makes them smaller) ...
    for guest in guests {
        let size = |out: &str| {
            std::fs::metadata(scratch.path().join(out).join(format!("{guest}.wasm")))
                .expect("the module")
                .len()
        };
        let (c, z, n) = (size("clang19"), size("zig"), size("zig-no-wasm-opt"));
        eprintln!("{guest}: clang-19 {c} bytes, zig {z}, zig without wasm-opt {n}");
        assert!(c != z && z < n, "{guest}: {c}, {z}, {n}");
    }
    // ... the same results, bit for bit, and the same errors.
    let want = cpp_guest_results(&scratch.path().join("clang19"), scratch.path());
    assert_eq!(want.lines().count(), 13, "{want}");
    assert!(
        want.contains("scale_any_cpp int16: ") && want.contains("unsupported dtype s16"),
        "{want}"
    );
    for out in ["zig", "zig-no-wasm-opt"] {
        let got = cpp_guest_results(&scratch.path().join(out), scratch.path());
        assert_eq!(got, want, "the guests built by {out} give other results");
    }
}

#[test]
fn zig_new_cpp_guest_builds_without_clang19_or_wasm_opt_and_runs_from_jax() {
    let scratch = tempfile::tempdir().expect("temporary directory");
    let path = path_without_clang19(&scratch.path().join("bin"), false);
    let clean = |cmd: &mut Command| {
        cmd.env("PATH", &path);
        for var in ["CYXLA_CXX", "CYXLA_CC", "CYXLA_ZIG", "CYXLA_WASM_OPT"] {
            cmd.env_remove(var);
        }
    };

    // `sdk` names zig as the C/C++ compiler, and wasm-opt as absent.
    let mut sdk = bin();
    clean(sdk.arg("sdk"));
    let said = text(&run_in_output(scratch.path(), &mut sdk, ZIG_HINT).stdout);
    let line = said
        .lines()
        .find(|l| l.starts_with("C/C++ toolchain:"))
        .unwrap_or_else(|| panic!("no C/C++ toolchain line:\n{said}"));
    assert!(
        line.contains("zig 0.")
            && line.contains("Debian's clang-19 is not on the PATH")
            && line.contains("no wasm-opt (optional")
            && !line.contains("missing"),
        "{line}"
    );

    let name = "scaffold_zig";
    let dir = scratch.path().join(name);
    let mut new = bin();
    clean(new.args(["new", name, "--cpp"]).arg(&dir));
    let said = text(&run_in_output(scratch.path(), &mut new, ZIG_HINT).stdout);
    assert!(
        !said.contains("apt-get install clang") && said.contains("# wasm-opt (binaryen) not found"),
        "{said}"
    );
    // The native unit test, with the command the next steps give (this
    // machine's c++: clang++-19 is not on the PATH).
    let native = said
        .lines()
        .find(|l| l.contains("# the native unit test"))
        .unwrap_or_else(|| panic!("no native unit test step:\n{said}"))
        .trim();
    assert!(native.starts_with("c++ -std=c++17"), "{native}");
    let mut cmd = Command::new("bash");
    clean(cmd.args(["-euo", "pipefail", "-c", native]));
    let ran = run_in(&dir, &mut cmd, ZIG_HINT);
    assert_eq!(ran.trim(), format!("{name}_test: ok"));

    let mut configure = Command::new("cmake");
    clean(configure.args(["-S", ".", "-B", "build"]));
    let configured = run_in_output(&dir, &mut configure, ZIG_HINT);
    let said = format!("{}{}", text(&configured.stdout), text(&configured.stderr));
    assert!(
        said.contains("The CXX compiler identification is Clang 2")
            && said.contains("ziglang/zig")
            && said.matches("wasm-opt (binaryen) not found").count() == 1,
        "{said}"
    );
    let mut build = Command::new("cmake");
    clean(build.args(["--build", "build"]));
    let built = run_in_output(&dir, &mut build, ZIG_HINT);
    let said = format!("{}{}", text(&built.stdout), text(&built.stderr));
    assert!(
        !said.contains("warning"),
        "the scaffold's build warns:\n{said}"
    );
    check_and_call(&dir, name, &format!("build/{name}.wasm"));
}
