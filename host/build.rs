//! The engine's patch series (`vendor/series` and every patch it lists),
//! as one text for the compile cache's key (`src/cache.rs`): code compiled
//! by an engine with other patches is never loaded.

use std::fs;
use std::path::Path;

fn main() {
    // Read when the script runs, not baked in when it is compiled: a build
    // script compiled in one checkout keeps running from a target/ moved to
    // another (or shared between clones).
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let vendor = Path::new(&manifest_dir).join("../vendor");
    let series_path = vendor.join("series");
    println!("cargo::rerun-if-changed={}", series_path.display());
    let series = fs::read_to_string(&series_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", series_path.display()));
    let mut text = series.clone();
    for line in series.lines() {
        let line = line.trim();
        // Blank lines, comments, and the lines naming versions (`version`,
        // `crate NAME VERSION`): those are in `text` already.
        if line.is_empty()
            || line.starts_with('#')
            || line.starts_with("version ")
            || line.starts_with("crate ")
        {
            continue;
        }
        let patch = vendor.join("patches").join(line);
        println!("cargo::rerun-if-changed={}", patch.display());
        let body = fs::read_to_string(&patch)
            .unwrap_or_else(|e| panic!("vendor/series names {line}, which cannot be read: {e}"));
        text.push_str(&body);
    }
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("engine_series.txt");
    fs::write(&out, text).expect("write engine_series.txt");
}
