//! The guests folder: every `*.wasm` in it, loaded and compiled in
//! parallel, the rejected ones with their reasons, and which guest serves
//! which target. Loaded for an allow-list, a guest none of whose targets is
//! allowed is validated and not compiled ([`Guests::idle`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::guest::{Guest, Idle, Loaded, Rejected};
use crate::policy::AllowList;

/// A target that more than one guest declares: none of them serves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The target.
    pub target: String,
    /// Every guest file that declares it, sorted.
    pub files: Vec<PathBuf>,
}

impl Conflict {
    /// The error for this conflict.
    pub fn to_error(&self) -> Error {
        Error::DuplicateTarget {
            target: self.target.clone(),
            files: self.files.clone(),
        }
    }
}

/// The loaded contents of a guests folder.
#[derive(Debug)]
pub struct Guests {
    dir: PathBuf,
    engine: Engine,
    guests: Vec<Arc<Guest>>,
    rejected: Vec<Rejected>,
    idle: Vec<Idle>,
    conflicts: Vec<Conflict>,
    by_target: BTreeMap<String, usize>,
}

impl Guests {
    /// Loads every `*.wasm` file of `dir` (not recursively), compiling them
    /// in parallel. A file that fails a check is kept in
    /// [`Guests::rejected`] with its reason; a target declared by two or more
    /// guests is served by none of them and listed in
    /// [`Guests::conflicts`].
    ///
    /// # Errors
    ///
    /// [`Error::Io`] only if `dir` itself cannot be read.
    pub fn load_dir(engine: &Engine, dir: &Path) -> Result<Guests> {
        Guests::load_files(engine, dir, None)
    }

    /// [`Guests::load_dir`] for an allow-list: a guest none of whose
    /// declared targets `policy` allows is only validated (the checks
    /// before compiling and wasmtime's validation; a failure rejects it as
    /// usual) and listed in [`Guests::idle`], not compiled. Serving then
    /// starts without compiling what cannot be called.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] only if `dir` itself cannot be read.
    pub fn load_dir_allowed(engine: &Engine, dir: &Path, policy: &AllowList) -> Result<Guests> {
        Guests::load_files(engine, dir, Some(&|target: &str| policy.allows(target)))
    }

    fn load_files(
        engine: &Engine,
        dir: &Path,
        wanted: Option<&(dyn Fn(&str) -> bool + Sync)>,
    ) -> Result<Guests> {
        let io = |source| Error::Io {
            path: dir.to_owned(),
            source,
        };
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.extension().is_some_and(|e| e == "wasm") && path.is_file() {
                files.push(path);
            }
        }
        files.sort();
        // On the engine's compile threads, as many as the limits allow:
        // they have native stack for the largest wasm stack (trial
        // instantiations run guest code), and their number bounds the
        // memory of the compilations running at once. Without them (the
        // threads could not start), rayon's global threads load them
        // (instantiation moves to a helper thread where a thread has too
        // little stack).
        let loaded: Vec<std::result::Result<Loaded, Box<Rejected>>> =
            engine.on_compile_threads(|| {
                files
                    .par_iter()
                    .map(|path| Guest::load_detailed(engine, path, wanted))
                    .collect()
            });
        let mut guests = Vec::new();
        let mut rejected = Vec::new();
        let mut idle = Vec::new();
        for result in loaded {
            match result {
                Ok(Loaded::Guest(guest)) => guests.push(Arc::new(*guest)),
                Ok(Loaded::Idle(i)) => {
                    tracing::debug!(guest = %i.path.display(), "validated, not compiled: none of its targets is allowed");
                    idle.push(i);
                }
                Err(r) => {
                    tracing::warn!(guest = %r.path.display(), "{}", r.error);
                    rejected.push(*r);
                }
            }
        }
        let mut loaded = Guests::from_guests(dir, engine, guests, rejected);
        loaded.idle = idle;
        Ok(loaded)
    }

    /// A collection of guests loaded one by one (e.g. with
    /// [`Guest::load`]), as if from `dir`.
    pub fn from_loaded(dir: &Path, engine: &Engine, guests: Vec<Arc<Guest>>) -> Guests {
        Guests::from_guests(dir, engine, guests, Vec::new())
    }

    /// Builds the target index over already loaded guests.
    pub(crate) fn from_guests(
        dir: &Path,
        engine: &Engine,
        guests: Vec<Arc<Guest>>,
        rejected: Vec<Rejected>,
    ) -> Guests {
        let mut declared: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, guest) in guests.iter().enumerate() {
            for target in guest.targets() {
                declared.entry(target.name.clone()).or_default().push(i);
            }
        }
        let mut by_target = BTreeMap::new();
        let mut conflicts = Vec::new();
        for (target, owners) in declared {
            if let [only] = owners[..] {
                by_target.insert(target, only);
            } else {
                let files: Vec<PathBuf> = owners
                    .iter()
                    .map(|&i| guests[i].path().to_owned())
                    .collect();
                let conflict = Conflict { target, files };
                tracing::warn!("{}", conflict.to_error());
                conflicts.push(conflict);
            }
        }
        Guests {
            dir: dir.to_owned(),
            engine: engine.clone(),
            guests,
            rejected,
            idle: Vec::new(),
            conflicts,
            by_target,
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The engine the guests were compiled with.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The guests that loaded, sorted by file name.
    pub fn guests(&self) -> &[Arc<Guest>] {
        &self.guests
    }

    /// The files that were rejected, with their reasons.
    pub fn rejected(&self) -> &[Rejected] {
        &self.rejected
    }

    /// The guests validated and not compiled, because the allow-list they
    /// were loaded for allows none of their targets (see
    /// [`Guests::load_dir_allowed`]), sorted by file name.
    pub fn idle(&self) -> &[Idle] {
        &self.idle
    }

    /// The idle guest declaring `target`, if any.
    pub fn idle_declaring(&self, target: &str) -> Option<&Idle> {
        self.idle
            .iter()
            .find(|i| i.targets.iter().any(|t| t == target))
    }

    /// Targets declared by more than one guest.
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    /// The guest that serves `target`, if exactly one declares it.
    pub fn serving(&self, target: &str) -> Option<&Arc<Guest>> {
        self.by_target.get(target).map(|&i| &self.guests[i])
    }

    /// Index of the guest serving `target` in [`Guests::guests`].
    pub(crate) fn serving_index(&self, target: &str) -> Option<usize> {
        self.by_target.get(target).copied()
    }

    /// Every served target and its guest, sorted by target.
    pub fn targets(&self) -> impl Iterator<Item = (&str, &Arc<Guest>)> {
        self.by_target
            .iter()
            .map(|(t, &i)| (t.as_str(), &self.guests[i]))
    }

    /// The conflict over `target`, if any.
    pub fn conflict(&self, target: &str) -> Option<&Conflict> {
        self.conflicts.iter().find(|c| c.target == target)
    }
}
