//! Hot reload: a changed or new `.wasm` in a guests folder serves from the
//! next call on, without restarting the process or recompiling the XLA
//! program.
//!
//! The trampoline XLA holds stays registered; the [`GuestHandler`] behind it
//! is pointed at the new guest's pool ([`GuestHandler::serve`]), so a call
//! that has started finishes on the version it started with. A file watcher
//! (the `notify` crate: inotify, no stat on the call path) reports changes;
//! changes settle for [`SETTLE`] before a file is read, and a file whose size
//! or time changes while it is read is read again later, so a module being
//! copied is not loaded half-written (and if it were read, it would fail
//! validation and be rejected).
//!
//! | change | effect |
//! |---|---|
//! | a module changes | its targets are served by the new version |
//! | the new version is broken | rejected with a log line naming the file and the reason; the old one keeps serving |
//! | a new module, or a new target | allowed targets are registered: programs compiled after it can call them (XLA looks handlers up at compile time); exported ones ([`Destination::Exported`], platform `cpu`) are listed by `registry::exported` for the client to register |
//! | a module is removed | its targets fail with UNAVAILABLE, naming the file |
//! | a target disappears from a module | it fails the same way |

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, SystemTime};

use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::audit;
use crate::dispatch::GuestHandler;
use crate::guest::Guest;
use crate::pool::Pool;
use crate::sandbox::{Destination, Sandbox, pin_holds};
use crate::stats;

/// How long a folder must be quiet before changed files are read.
pub const SETTLE: Duration = Duration::from_millis(150);

/// Native stack of the reload thread, which compiles and instantiates guests
/// (room for the largest wasm stack the limits allow).
const STACK: usize = 8 << 20 | 512 << 10;

/// Watches a sandbox's folder while it lives.
pub struct Watcher {
    _watcher: notify::RecommendedWatcher,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

impl Sandbox {
    /// Reloads the module at `path` (in this sandbox's folder): serves its
    /// new version, registers its new allowed targets to `destination`, or
    /// retires the targets of a removed module. Returns what it did, for the
    /// log.
    pub fn reload(&self, destination: &Destination, path: &Path) -> String {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !path.is_file() {
            let mut retired = Vec::new();
            for (target, handler) in self.lock_handlers().iter() {
                if serves_from(handler, path) {
                    handler.retire(format!(
                        "its guest {name} was removed from {}",
                        self.guests.dir().display()
                    ));
                    retired.push(target.clone());
                }
            }
            let what = format!("guest {name} removed; retired: {}", list(&retired));
            audit::reload_refused("removed", path, &what);
            return what;
        }
        let guest = match Guest::load(self.guests.engine(), path) {
            Ok(guest) => Arc::new(guest),
            Err(e) => {
                let what = format!(
                    "guest {}: the new version is rejected, the previous one keeps serving: {e}",
                    path.display()
                );
                tracing::warn!("{what}");
                stats::count(stats::Event::ReloadRejected);
                audit::reload_refused("rejected", path, &what);
                return what;
            }
        };
        let pool = Arc::new(Pool::new(Arc::clone(&guest)));
        let declared: BTreeSet<&str> = guest.targets().iter().map(|t| t.name.as_str()).collect();
        let mut served = Vec::new();
        let mut added = Vec::new();
        let mut retired = Vec::new();
        let mut handlers = self.lock_handlers();
        for (target, handler) in handlers.iter() {
            if serves_from(handler, path) && !declared.contains(target.as_str()) {
                handler.retire(format!("its guest {name} no longer declares it"));
                retired.push(target.clone());
            }
        }
        for target in declared {
            if !self.policy.allows(target) {
                continue;
            }
            if !pin_holds(&self.pins, target, &guest) {
                continue;
            }
            match handlers.get(target) {
                Some(handler) => {
                    let other = handler
                        .guest()
                        .filter(|g| g.path().file_name() != path.file_name() && g.path().is_file());
                    if let Some(other) = other {
                        tracing::warn!(
                            "{} declares `{target}`, which {} serves: the latter keeps it",
                            path.display(),
                            other.path().display()
                        );
                        continue;
                    }
                    if handler.serve(Arc::clone(&pool)) {
                        served.push(target.to_owned());
                    }
                }
                None => {
                    let Some(handler) = GuestHandler::new(Arc::clone(&pool), target) else {
                        continue;
                    };
                    let origin = format!("guest {}", guest.file_name());
                    match destination.register(target, Arc::new(handler.clone()), origin) {
                        Ok(()) => {
                            handlers.insert(target.to_owned(), handler);
                            added.push(target.to_owned());
                        }
                        Err(e) => {
                            tracing::warn!("{}: `{target}` not registered: {e}", path.display())
                        }
                    }
                }
            }
        }
        let what = format!(
            "guest {} (sha256 {}) reloaded: serves {}; new targets {}; retired {}",
            path.display(),
            &guest.sha256_hex()[..12],
            list(&served),
            list(&added),
            list(&retired)
        );
        tracing::info!("{what}");
        stats::count(stats::Event::GuestReloaded);
        audit::reloaded(&guest, &what);
        what
    }

    /// Watches this sandbox's folder and reloads what changes, on a thread
    /// of its own, for as long as the returned [`Watcher`] lives.
    ///
    /// # Errors
    ///
    /// The folder cannot be watched (e.g. no inotify instances left).
    pub fn watch(self: &Arc<Self>, destination: Destination) -> std::io::Result<Watcher> {
        let (tx, rx) = channel::<PathBuf>();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if let Ok(event) = event
                    && changes(event.kind)
                {
                    for path in event.paths {
                        let _ = tx.send(path);
                    }
                }
            })
            .map_err(std::io::Error::other)?;
        watcher
            .watch(self.guests.dir(), RecursiveMode::NonRecursive)
            .map_err(std::io::Error::other)?;
        let sandbox = Arc::clone(self);
        std::thread::Builder::new()
            .name("cyxla-reload".to_owned())
            .stack_size(STACK)
            .spawn(move || reload_loop(&sandbox, &destination, &rx))?;
        Ok(Watcher { _watcher: watcher })
    }
}

/// Whether an event of `kind` may have changed a file. A file opened,
/// read, or closed without writing has not: a reload reads the module, and
/// counting that as a change would reload it again, without end.
fn changes(kind: EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// Collects changed paths until the folder is quiet, reloads each module,
/// and again until the watcher is dropped.
fn reload_loop(sandbox: &Sandbox, destination: &Destination, rx: &Receiver<PathBuf>) {
    let mut pending: BTreeMap<PathBuf, Option<(u64, SystemTime)>> = BTreeMap::new();
    loop {
        let wait = if pending.is_empty() {
            Duration::from_secs(3600)
        } else {
            SETTLE
        };
        match rx.recv_timeout(wait) {
            Ok(path) => {
                let module = match path.to_string_lossy().strip_suffix(".limits.toml") {
                    Some(stem) => PathBuf::from(format!("{stem}.wasm")),
                    None => path,
                };
                if module.extension().is_some_and(|e| e == "wasm") {
                    pending.insert(module, None);
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                // Quiet for SETTLE: read what settled, look again at what
                // still moves.
                let mut again = BTreeMap::new();
                for (path, seen) in std::mem::take(&mut pending) {
                    let now = stamp(&path);
                    if now.is_some() && now != seen && seen.is_some() {
                        again.insert(path, now);
                        continue;
                    }
                    if seen.is_none() && now.is_some() {
                        // First look: let it prove it is still for one more round.
                        again.insert(path, now);
                        continue;
                    }
                    sandbox.reload(destination, &path);
                }
                pending = again;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Size and modification time of a file, if it exists.
fn stamp(path: &Path) -> Option<(u64, SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// Whether `handler` is served by the module at `path` (a sandbox watches
/// one folder: the file name says which module).
fn serves_from(handler: &GuestHandler, path: &Path) -> bool {
    handler
        .guest()
        .is_some_and(|g| g.path().file_name() == path.file_name())
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}
