//! Per-target statistics for operators: a JSON file (`CYXLA_STATS`) kept
//! current while the process runs, and a table in the log (stderr) when it
//! exits, if the log shows information (`CYXLA_LOG=info`) or the file is
//! configured.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use cyxla_sandbox::stats;
use cyxla_setup::config::Config;

static PATH: OnceLock<PathBuf> = OnceLock::new();

/// Whether the table goes to stderr at exit.
static TABLE_AT_EXIT: AtomicBool = AtomicBool::new(false);

/// Logs the table at exit if the log shows information; with a statistics
/// file (`config.stats`), also times calls and rewrites the file every
/// `config.stats_interval` and at exit.
pub fn start(config: &Config) {
    let path = config.stats.clone();
    let interval = config.stats_interval;
    let log = tracing::enabled!(target: "cyxla_pjrt", tracing::Level::INFO);
    TABLE_AT_EXIT.store(log || path.is_some(), Ordering::Relaxed);
    // SAFETY: `at_exit` is an `extern "C" fn()` that does not unwind (it
    // catches panics) and only uses process-lifetime statics.
    if unsafe { libc::atexit(at_exit) } != 0 {
        tracing::warn!("cannot write the statistics at exit (atexit failed)");
    }
    let Some(path) = path else {
        return;
    };
    stats::enable_timing();
    if PATH.set(path.clone()).is_err() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("cyxla-stats".to_owned())
        .spawn(move || {
            loop {
                std::thread::sleep(interval);
                if let Err(e) = write(&path) {
                    tracing::warn!("cannot write the statistics to {}: {e}", path.display());
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("statistics are written only at exit: {e}");
    }
}

/// Writes the snapshot to `path`, through a temporary file and a rename so a
/// reader never sees half a document.
fn write(path: &Path) -> std::io::Result<()> {
    let text = stats::json(&stats::snapshot());
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path))
}

/// At exit thread-locals may be gone, so neither `tracing` nor `eprintln!`
/// is used: bytes go to file descriptor 2 directly.
extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let rows = stats::snapshot();
        let mut text = String::new();
        if let Some(path) = PATH.get()
            && let Err(e) = write(path)
        {
            text.push_str(&format!(
                "cyxla: cannot write the statistics to {}: {e}\n",
                path.display()
            ));
        }
        if TABLE_AT_EXIT.load(Ordering::Relaxed) && rows.iter().any(|r| r.calls > 0) {
            text.push_str("cyxla per-target statistics:\n");
            text.push_str(&stats::table(&rows));
        }
        let mut bytes = text.as_bytes();
        while !bytes.is_empty() {
            // SAFETY: writes `bytes.len()` bytes from a live buffer to fd 2.
            let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
            let Ok(n) = usize::try_from(n) else { break };
            if n == 0 {
                break;
            }
            bytes = &bytes[n..];
        }
    });
}
