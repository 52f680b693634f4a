//! The shipped program and plugin library are the same whichever way they
//! are built: `scripts/build.sh` (`cargo build -p cyxla-host -p cyxla-pjrt`)
//! or `cargo build --workspace`. Cargo unifies the features of normal
//! dependencies across the crates of one build, so a test or bench crate
//! that turned on a test hook (`cyxla-sandbox`'s `fuzzing` or `bench`) as a
//! normal dependency put it into the product of a workspace build. Those
//! hooks are dev-dependencies; this test holds every crate of the product
//! to it, our own and third-party alike.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each package of the normal and build dependency graph of a build with
/// the `cargo` arguments `packages`, with the feature sets it is built
/// with (more than one where it is both a build and a normal dependency).
fn features_of(packages: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    features_along("normal,build", packages)
}

/// [`features_of`] along the dependency edges `edges` (`cargo tree
/// --edges`): with `dev`, a build of tests and benches.
fn features_along(edges: &str, packages: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let root = cyxla_tests::workspace_root();
    let out = Command::new(env!("CARGO"))
        .current_dir(&root)
        .args(["tree", "--offline", "--prefix", "none"])
        .args(["--edges", edges, "--format", "{p}|{f}"])
        .args(packages)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree {packages:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(out.stdout).expect("UTF-8").lines() {
        let line = line.trim_end_matches(" (*)");
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        graph
            .entry(package.to_owned())
            .or_default()
            .insert(features.to_owned());
    }
    graph
}

#[test]
fn a_workspace_build_builds_the_product_with_the_features_of_scripts_build() {
    let product = features_of(&["-p", "cyxla-host", "-p", "cyxla-pjrt"]);
    let workspace = features_of(&["--workspace"]);
    let host = product
        .keys()
        .find(|p| p.starts_with("cyxla-host "))
        .expect("the product depends on cyxla-host");
    assert_eq!(
        product[host],
        BTreeSet::from([String::new()]),
        "scripts/build.sh builds cyxla-host without test hooks"
    );
    let differ: Vec<String> = product
        .iter()
        .filter(|(package, features)| workspace.get(*package) != Some(features))
        .map(|(package, features)| {
            format!(
                "{package}: {features:?} (scripts/build.sh) vs {:?} (cargo build --workspace)",
                workspace.get(package)
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "a crate of the program or plugin gets other features in `cargo build --workspace` \
         than in scripts/build.sh (a test or bench crate turns them on through a normal \
         dependency; make it a dev-dependency):\n{}",
        differ.join("\n")
    );
}

/// The crates of the product that are not this workspace's own (crates.io's
/// and `vendor/`'s) whose features differ between the product's build
/// (`product`) and a build of tests (`tests`), each as a line of the message.
fn third_party_differences(
    product: &BTreeMap<String, BTreeSet<String>>,
    tests: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let root = cyxla_tests::workspace_root();
    let ours = format!("({}", root.display());
    let vendor = format!("({}", root.join("vendor").display());
    product
        .iter()
        .filter(|(package, _)| !package.contains(&ours) || package.contains(&vendor))
        .filter(|(package, features)| tests.get(*package) != Some(features))
        .map(|(package, features)| {
            format!(
                "{package}: {features:?} (product) vs {:?} (tests)",
                tests.get(package)
            )
        })
        .collect()
}

/// CI builds the product, then its tests beside it: `cargo build --workspace
/// --all-targets` after scripts/build.sh, and on aarch64 the sandbox's tests
/// after the wheel (scripts/aarch64.sh). A third-party crate built with
/// other features in the second build is compiled again, with every crate
/// that depends on it: a feature of `arbitrary` that wasm-smith turns on
/// compiled Cranelift and wasmtime twice. `cyxla-sandbox`'s Cargo.toml turns
/// such features on for every build.
#[test]
fn the_tests_builds_reuse_the_products_compiled_dependencies() {
    let product_args = ["-p", "cyxla-host", "-p", "cyxla-pjrt"];
    let product = features_of(&product_args);
    let workspace = features_along("normal,build,dev", &["--workspace"]);
    let differ = third_party_differences(&product, &workspace);
    assert!(
        differ.is_empty(),
        "`cargo build --workspace --all-targets` builds a dependency of the product with \
         other features than scripts/build.sh, so compiles it and what depends on it again \
         (turn the feature on in host/Cargo.toml's list for every build):\n{}",
        differ.join("\n")
    );
    let aarch64 = ["--target", "aarch64-unknown-linux-gnu"];
    let product = features_of(&[&aarch64[..], &product_args[..]].concat());
    let sandbox_tests = features_along(
        "normal,build,dev",
        &[&aarch64[..], &["-p", "cyxla-sandbox"]].concat(),
    );
    let differ = third_party_differences(&product, &sandbox_tests);
    assert!(
        differ.is_empty(),
        "scripts/aarch64.sh's tests build a dependency of the aarch64 wheel with other \
         features than the wheel's build, so compile it and what depends on it again \
         (turn the feature on in host/Cargo.toml's list for every build):\n{}",
        differ.join("\n")
    );
}
