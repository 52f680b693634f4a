//! What the SDK's integration tests share: the bundled guests, built.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the bundled guests (`guests/build.sh`, idempotent) and returns
/// `guests/out`.
///
/// # Panics
///
/// If the build fails: the message has its output and says how to install
/// the toolchain.
pub fn build_guests() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("guest-sdk lives in a subdirectory of the workspace")
        .to_path_buf();
    let out = Command::new("bash")
        .arg(root.join("guests/build.sh"))
        .output()
        .expect("run bash guests/build.sh");
    assert!(
        out.status.success(),
        "guests/build.sh failed ({}); install the toolchain with scripts/setup.sh\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    root.join("guests/out")
}
