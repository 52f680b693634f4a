//! Reproducible guests: the bundled guests (Rust and C/C++) built from two
//! copies of their sources at different paths are the same bytes, and
//! neither names the folder it was built in.
//!
//! Each copy holds what `guests/build.sh` reads: the root `Cargo.toml`
//! (whose `[workspace.package]` and lints the SDK's crates inherit),
//! `rust-toolchain.toml`, `guests/` (without `out/` and `target/`) and
//! `guest-sdk/`. Each builds with its own `guests/build.sh` into its own
//! target folder (`CYXLA_GUESTS_TARGET_DIR` is not passed on): nothing of one
//! build is reused by the other, so a path that reaches the bytes makes them
//! differ. Before `guests/sdk` (`guests/Cargo.toml` says why), cargo hashed
//! the SDK's crates by their absolute folder and the Rust modules differed.
//!
//! Needs the `wasm32-unknown-unknown` Rust target, clang-19 for wasm32 and
//! binaryen (`scripts/setup.sh`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The checkout this test belongs to.
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("guest-sdk lives in a subdirectory of the checkout")
        .to_path_buf()
}

/// Copies the tree `from` to `to`, symlinks as symlinks, without the
/// folders named `target` and without `skip` (paths relative to `from`).
fn copy_tree(from: &Path, to: &Path, skip: &[&str]) {
    copy_dir(from, to, Path::new(""), skip);
}

fn copy_dir(from: &Path, to: &Path, rel: &Path, skip: &[&str]) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("create {}: {e}", to.display()));
    let entries =
        std::fs::read_dir(from).unwrap_or_else(|e| panic!("list {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.expect("a directory entry");
        let name = entry.file_name();
        let rel = rel.join(&name);
        if name == "target" || skip.iter().any(|s| rel == Path::new(s)) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let kind = entry.file_type().expect("the entry's type");
        if kind.is_symlink() {
            let link = std::fs::read_link(&src).expect("read a symlink");
            std::os::unix::fs::symlink(&link, &dst)
                .unwrap_or_else(|e| panic!("symlink {}: {e}", dst.display()));
        } else if kind.is_dir() {
            copy_dir(&src, &dst, &rel, skip);
        } else {
            std::fs::copy(&src, &dst).unwrap_or_else(|e| panic!("copy {}: {e}", src.display()));
        }
    }
}

/// A copy of the guests' sources at `root`.
fn copy_sources(root: &Path) {
    let from = checkout();
    for file in ["Cargo.toml", "rust-toolchain.toml"] {
        std::fs::create_dir_all(root).expect("create the copy's root");
        std::fs::copy(from.join(file), root.join(file))
            .unwrap_or_else(|e| panic!("copy {file}: {e}"));
    }
    copy_tree(&from.join("guests"), &root.join("guests"), &["out"]);
    copy_tree(&from.join("guest-sdk"), &root.join("guest-sdk"), &[]);
    copy_tree(&from.join("abi"), &root.join("abi"), &[]);
}

/// Runs the copy's `guests/build.sh`; returns its `guests/out/*.wasm` by
/// file name.
fn build(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let out = Command::new("bash")
        .arg(root.join("guests/build.sh"))
        .env_remove("CYXLA_GUESTS_TARGET_DIR")
        .output()
        .expect("run bash guests/build.sh");
    assert!(
        out.status.success(),
        "{}/guests/build.sh failed ({}); install the toolchains with scripts/setup.sh\n\
         stdout:\n{}\nstderr:\n{}",
        root.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = root.join("guests/out");
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("list {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("read a module"))
        })
        .collect()
}

/// Where `needle` occurs in `haystack`, if it does.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn bundled_guests_built_from_two_folders_are_the_same_bytes() {
    let scratch = tempfile::tempdir().expect("a temporary folder");
    // Different lengths and depths: nothing lines up by chance.
    let roots = [
        scratch.path().join("a"),
        scratch.path().join("deeper/checkout-b"),
    ];
    for root in &roots {
        copy_sources(root);
    }
    // Both at once: on more than two cores, half the time.
    let [a, b] = std::thread::scope(|s| {
        let built = roots.each_ref().map(|root| s.spawn(move || build(root)));
        built.map(|h| h.join().expect("a build"))
    });

    let names: Vec<&String> = a.keys().collect();
    assert_eq!(
        names,
        b.keys().collect::<Vec<_>>(),
        "the two builds made other modules"
    );
    let rust = names.iter().filter(|n| !n.ends_with("_cpp.wasm")).count();
    let cpp = names.len() - rust;
    assert!(
        rust >= 8 && cpp >= 3,
        "only {rust} Rust and {cpp} C++ modules: {names:?}"
    );
    for (root, modules) in roots.iter().zip([&a, &b]) {
        let needle = root.to_string_lossy();
        for (name, bytes) in modules {
            if let Some(at) = find(bytes, needle.as_bytes()) {
                panic!("{name} names the folder it was built in, {needle}, at byte {at}");
            }
        }
    }
    let differ: Vec<String> = names
        .iter()
        .filter(|n| a[**n] != b[**n])
        .map(|n| {
            let (x, y) = (&a[*n], &b[*n]);
            let at = x.iter().zip(y).position(|(x, y)| x != y);
            format!(
                "{n}: {} and {} bytes, first difference at byte {}",
                x.len(),
                y.len(),
                at.map_or_else(|| "(none: one is a prefix)".to_owned(), |at| at.to_string())
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "the same sources built in {} and {} gave other bytes:\n{}",
        roots[0].display(),
        roots[1].display(),
        differ.join("\n")
    );
}
