//! The audit log: one JSON line per refused target, failed call and guest
//! reload, in a file of this process's own in the folder the operator
//! configures (`CYXLA_AUDIT`, the policy's `audit`).
//!
//! ```text
//! {"time":"2026-12-05T08:01:02.345Z","user":"alice","tenant":"research","pid":4242,
//!  "event":"failed_call","kind":"trap","target":"trap","guest":"/srv/cyxla/shared/trap.wasm",
//!  "sha256":"9f2c…","message":"…"}
//! ```
//!
//! `event` is `failed_call` (`kind`: `bad_input`, `guest_error`, `trap`,
//! `limit`, `deadline`, `other`), `refused_target` (`kind`: `refused`: a program
//! called a target that is not registered, and its compile failed) or
//! `reload` (`kind`: `reloaded`, `rejected`, `removed`).
//!
//! Each process appends to `USER-PID-NANOS.jsonl`, created new (never an
//! existing file) with mode 0600: on a shared machine the folder is the
//! operator's, writable by all with the sticky bit and not listable
//! (`1733`), so no user reads, replaces or removes another's file, and a
//! file's owner says whose process wrote it, whatever its lines claim.
//! Writing costs nothing on a call that succeeds.

use std::fs::File;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::guest::Guest;
use crate::stats::Ending;

/// Where this process's lines go.
struct Sink {
    file: Mutex<File>,
    path: PathBuf,
    user: String,
    tenant: Option<String>,
}

static SINK: OnceLock<Sink> = OnceLock::new();

/// Starts this process's audit file in `folder`, its lines naming `user`
/// and `tenant`; returns the file's path. Once per process: a second call
/// returns the first file.
///
/// # Errors
///
/// The file cannot be created in `folder` (named, with the reason).
pub fn open(folder: &Path, user: &str, tenant: Option<&str>) -> Result<PathBuf, String> {
    if let Some(sink) = SINK.get() {
        return Ok(sink.path.clone());
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let path = folder.join(format!("{user}-{}-{nanos}.jsonl", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| {
            format!(
                "cannot create the audit file {} (CYXLA_AUDIT, the policy's `audit`): {e}",
                path.display()
            )
        })?;
    let sink = SINK.get_or_init(|| Sink {
        file: Mutex::new(file),
        path,
        user: user.to_owned(),
        tenant: tenant.map(str::to_owned),
    });
    Ok(sink.path.clone())
}

/// The audit file of this process, once [`open`]ed.
pub fn path() -> Option<&'static Path> {
    SINK.get().map(|s| s.path.as_path())
}

/// One line of the log.
#[derive(Serialize)]
struct Line<'a> {
    time: String,
    user: &'a str,
    tenant: Option<&'a str>,
    pid: u32,
    event: &'a str,
    kind: &'a str,
    target: Option<&'a str>,
    guest: Option<&'a Path>,
    sha256: Option<String>,
    message: &'a str,
}

/// Appends one line, if the log is on. A line that cannot be written is
/// a warning: the call's own outcome stands.
fn write(
    event: &str,
    kind: &str,
    target: Option<&str>,
    guest: Option<(&Path, Option<String>)>,
    message: &str,
) {
    let Some(sink) = SINK.get() else {
        return;
    };
    let (guest, sha256) = match guest {
        Some((path, sha)) => (Some(path), sha),
        None => (None, None),
    };
    let line = Line {
        time: format!("{:.3}", jiff::Timestamp::now()),
        user: &sink.user,
        tenant: sink.tenant.as_deref(),
        pid: std::process::id(),
        event,
        kind,
        target,
        guest,
        sha256,
        message,
    };
    let Ok(mut text) = serde_json::to_string(&line) else {
        return;
    };
    text.push('\n');
    let mut file = sink.file.lock().unwrap_or_else(PoisonError::into_inner);
    if let Err(e) = file.write_all(text.as_bytes()) {
        tracing::warn!(
            "cannot append to the audit file {}: {e}",
            sink.path.display()
        );
    }
}

/// A failed call of `target`, served by `guest`, that ended as `ending`.
pub(crate) fn failed_call(target: &str, guest: Option<&Guest>, ending: Ending, message: &str) {
    if SINK.get().is_none() {
        return;
    }
    let guest = guest.map(|g| (g.path(), Some(g.sha256_hex())));
    write("failed_call", ending.name(), Some(target), guest, message);
}

/// A program called `target`, which is not registered here: `message` is
/// why its compile failed.
pub fn refused_target(target: &str, message: &str) {
    write("refused_target", "refused", Some(target), None, message);
}

/// A reload that serves `guest`'s new version: its sha256 is the loaded
/// module's, whatever the file holds by now.
pub(crate) fn reloaded(guest: &Guest, message: &str) {
    if SINK.get().is_none() {
        return;
    }
    write(
        "reload",
        "reloaded",
        None,
        Some((guest.path(), Some(guest.sha256_hex()))),
        message,
    );
}

/// A reload of the guest at `path` that serves nothing new: `kind` is
/// `rejected` (the sha256 is of the file that was refused, as it is now) or
/// `removed` (no file, no sha256).
pub(crate) fn reload_refused(kind: &str, path: &Path, message: &str) {
    if SINK.get().is_none() {
        return;
    }
    let sha256 = std::fs::read(path)
        .ok()
        .map(|bytes| crate::guest::sha256_hex_of(&bytes));
    write("reload", kind, None, Some((path, sha256)), message);
}
