//! `vendor/` is wasmtime as published on crates.io plus the patch series of
//! `vendor/series`, and the workspaces build that version.
//!
//! `scripts/vendor.sh --check` fetches the pristine crates as cargo does,
//! applies the series and fails naming each file that differs; these tests
//! run it on the checkout, and on a copy with one vendored file changed to
//! show that it can fail.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const CRATES: [&str; 3] = [
    "wasmtime",
    "wasmtime-internal-cranelift",
    "cranelift-codegen",
];

fn check(root: &Path) -> Output {
    Command::new("bash")
        .arg(root.join("scripts/vendor.sh"))
        .arg("--check")
        .current_dir(root)
        .output()
        .expect("cannot run bash scripts/vendor.sh --check")
}

/// The version in `vendor/series`.
fn series_version(root: &Path) -> String {
    let series = fs::read_to_string(root.join("vendor/series")).expect("vendor/series");
    series
        .lines()
        .find_map(|l| l.strip_prefix("version "))
        .expect("vendor/series has no version line")
        .trim()
        .to_owned()
}

#[test]
fn vendor_is_upstream_plus_the_series() {
    let root = cyxla_tests::workspace_root();
    let output = check(&root);
    assert!(
        output.status.success(),
        "vendor/ is not the pristine crates plus vendor/series (scripts/vendor.sh rewrites it; \
         it needs crates.io or cargo's cache):\n{}",
        cyxla_tests::describe(&output)
    );
}

/// A file of vendor/ that the series does not account for fails the check,
/// by name.
#[test]
fn a_vendored_edit_outside_the_series_is_named() {
    let root = cyxla_tests::workspace_root();
    let copy = tempfile::tempdir().expect("temp dir");
    let dst = copy.path();
    for part in ["scripts", "vendor"] {
        let status = Command::new("cp")
            .arg("-a")
            .arg(root.join(part))
            .arg(dst)
            .status()
            .expect("cp");
        assert!(status.success(), "cp -a {part}");
    }
    fs::copy(
        root.join("rust-toolchain.toml"),
        dst.join("rust-toolchain.toml"),
    )
    .unwrap();
    let edited = "vendor/wasmtime/src/runtime/trap.rs";
    let mut text = fs::read_to_string(dst.join(edited)).unwrap();
    text.push_str("\n// an edit outside the series\n");
    fs::write(dst.join(edited), text).unwrap();

    let output = check(dst);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && stderr.contains("src/runtime/trap.rs"),
        "scripts/vendor.sh --check should fail naming {edited}:\n{}",
        cyxla_tests::describe(&output)
    );
}

/// Both workspaces that compile guests (the root's and fuzz/) resolve the
/// three crates to vendor/ at the series' version: a pin that no longer
/// matches makes cargo ignore the `[patch]` and build the stock crate.
#[test]
fn the_workspaces_build_the_series_version() {
    let root = cyxla_tests::workspace_root();
    let version = series_version(&root);
    let codegen = {
        let toml = fs::read_to_string(root.join("vendor/cranelift-codegen/Cargo.toml")).unwrap();
        toml.lines()
            .find_map(|l| l.strip_prefix("version = \""))
            .and_then(|v| v.strip_suffix('"'))
            .expect("vendor/cranelift-codegen/Cargo.toml has a version")
            .to_owned()
    };
    for lockfile in ["Cargo.lock", "fuzz/Cargo.lock"] {
        let lock = fs::read_to_string(root.join(lockfile)).unwrap();
        for name in CRATES {
            let want = if name == "cranelift-codegen" {
                &codegen
            } else {
                &version
            };
            let entries: Vec<&str> = lock
                .split("[[package]]")
                .filter(|p| p.contains(&format!("\nname = \"{name}\"\n")))
                .collect();
            assert_eq!(
                entries.len(),
                1,
                "{lockfile} should hold {name} once (the vendored one), not {}",
                entries.len()
            );
            let entry = entries[0];
            assert!(
                entry.contains(&format!("\nversion = \"{want}\"\n")) && !entry.contains("source ="),
                "{lockfile}: {name} should be vendor/{name} at {want} (a path package, \
                 no source), got:{entry}"
            );
        }
    }
}
