//! Per-target statistics for operators: a JSON file (`CYXLA_STATS`) kept
//! current while the process runs, and a table in the log (stderr) when it
//! exits, if the log shows information (`CYXLA_LOG=info`) or the file is
//! configured. With a metrics folder (`CYXLA_METRICS`), the process's
//! figures for `cyxla-host metrics` are kept there the same way; with an
//! audit folder (`CYXLA_AUDIT`), its audit file starts there.

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cyxla_sandbox::{audit, stats};
use cyxla_setup::config::Config;
use cyxla_setup::tenants::UnixUser;

/// The statistics file, if any.
static PATH: OnceLock<PathBuf> = OnceLock::new();

/// This process's file in the metrics folder, and its tenant.
static METRICS: OnceLock<(PathBuf, Option<String>)> = OnceLock::new();

/// Whether the table goes to stderr at exit.
static TABLE_AT_EXIT: AtomicBool = AtomicBool::new(false);

/// Logs the table at exit if the log shows information; with a statistics
/// file (`config.stats`), also times calls and rewrites the file every
/// `config.stats_interval` and at exit; with a metrics folder, samples
/// call times and keeps this process's figures there the same way; with an
/// audit folder, starts this process's audit file.
pub fn start(config: &Config) {
    let log = tracing::enabled!(target: "cyxla_pjrt", tracing::Level::INFO);
    TABLE_AT_EXIT.store(log || config.stats.is_some(), Ordering::Relaxed);
    // SAFETY: `at_exit` is an `extern "C" fn()` that does not unwind (it
    // catches panics) and only uses process-lifetime statics.
    if unsafe { libc::atexit(at_exit) } != 0 {
        tracing::warn!("cannot write the statistics at exit (atexit failed)");
    }
    let user = UnixUser::current().map_or_else(|_| uid_name(), |u| u.name);
    let tenant = config.tenant.as_ref().map(|t| t.name.clone());
    if let Some(folder) = &config.audit {
        match audit::open(folder, &user, tenant.as_deref()) {
            Ok(path) => tracing::info!("audit lines go to {}", path.display()),
            Err(e) => tracing::warn!("{e}"),
        }
    }
    if let Some(path) = &config.stats {
        stats::enable_timing();
        if PATH.set(path.clone()).is_ok() {
            every(config.stats_interval, path.clone(), write_stats);
        }
    }
    if let Some(folder) = &config.metrics {
        stats::enable_sampled_timing();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = folder.join(format!("{user}-{}-{nanos}.json", std::process::id()));
        if METRICS.set((path.clone(), tenant)).is_ok() {
            every(config.stats_interval, path, write_metrics);
        }
    }
}

/// The name of this process's user where the user database has none: its
/// uid.
fn uid_name() -> String {
    // SAFETY: getuid cannot fail and touches no memory of ours.
    unsafe { libc::getuid() }.to_string()
}

/// Calls `write(&path)` every `interval` on a thread of its own. A failure is a warning, once until a write succeeds again (a
/// missing folder does not fill the log every interval).
fn every(interval: Duration, path: PathBuf, write: fn(&Path) -> std::io::Result<()>) {
    let spawned = std::thread::Builder::new()
        .name("cyxla-stats".to_owned())
        .spawn({
            let path = path.clone();
            move || {
                let mut failing = false;
                loop {
                    std::thread::sleep(interval);
                    match write(&path) {
                        Ok(()) => failing = false,
                        Err(e) if !failing => {
                            failing = true;
                            tracing::warn!(
                                "cannot write {}: {e} (retrying every {interval:?}, silently)",
                                path.display()
                            );
                        }
                        Err(_) => {}
                    }
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("{} is written only at exit: {e}", path.display());
    }
}

/// Writes this process's figures to `path`, its file in the metrics folder
/// (private to its user: mode 0600).
fn write_metrics(path: &Path) -> std::io::Result<()> {
    let tenant = METRICS.get().and_then(|(_, tenant)| tenant.clone());
    replace(path, &stats::ProcessFigures::now(tenant).to_json(), 0o600)
}

/// Writes the snapshot to `path`.
fn write_stats(path: &Path) -> std::io::Result<()> {
    replace(path, &stats::json(&stats::snapshot()), 0o666)
}

/// Replaces the file at `path` with `text` through a new temporary file
/// (created with `mode`, less the umask) and a rename, so a reader never
/// sees half a document.
fn replace(path: &Path, text: &str, mode: u32) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)?;
    std::io::Write::write_all(&mut file, text.as_bytes())?;
    drop(file);
    std::fs::rename(&tmp, path)
}

/// At exit thread-locals may be gone, so neither `tracing` nor `eprintln!`
/// is used: bytes go to file descriptor 2 directly.
extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let rows = stats::snapshot();
        let mut text = String::new();
        if let Some(path) = PATH.get()
            && let Err(e) = write_stats(path)
        {
            text.push_str(&format!(
                "cyxla: cannot write the statistics to {}: {e}\n",
                path.display()
            ));
        }
        if let Some((path, _)) = METRICS.get()
            && let Err(e) = write_metrics(path)
        {
            text.push_str(&format!(
                "cyxla: cannot write the metrics to {}: {e}\n",
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
