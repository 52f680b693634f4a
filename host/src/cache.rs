//! The compile cache: guests compiled once are kept on disk (wasmtime's
//! serialized modules), keyed by the module's sha256 and the engine's
//! configuration and version, so that a restart loads them without
//! compiling.
//!
//! Loading a cached artifact runs native code. The cache treats its folder
//! as ssh treats `~/.ssh`: it trusts the user running the host and root,
//! and nobody else.
//!
//! - **The way to the folder.** [`ModuleCache::open`] walks the path from
//!   `/`, one component at a time, opening each folder relative to the one
//!   before without following links, and checks each opened folder: owned
//!   by root or the user, and writable by no one else, unless sticky and
//!   owned by root (as `/tmp`, where only an entry's owner may rename or
//!   remove it). A link on the way is followed only if root or the user
//!   owns it (as the kernel's `protected_symlinks` does in sticky folders),
//!   and the walk goes on from where it leads, on the same terms. The cache
//!   folder itself must be the user's and writable by no one else. If any
//!   of this fails, the cache is not used: a warning, and guests are
//!   compiled.
//! - **The folder is held open.** Entries are opened, written and renamed
//!   relative to the folder's descriptor, so a folder renamed or replaced
//!   by a link after opening is not followed; its mode is checked again on
//!   every load.
//! - **Entries are checked as opened.** An artifact and its digest are
//!   opened without following links (a link is refused), and their owner,
//!   mode and type are read from the opened files (`fstat`): another user's
//!   file, one that others may write or that is not a regular file is
//!   refused. What is read is what was checked.
//! - **The digest binds an entry to its key.** The digest beside an
//!   artifact is the sha256 of the key and the artifact's bytes: it catches
//!   truncated and torn writes, corruption, and an entry moved or copied
//!   under another key. It authenticates nothing: whoever can write the
//!   folder can write a matching digest. Authenticity rests on the checks
//!   above: only the user and root can write the folder or any folder on
//!   the way to it, so replacing an artifact takes the user's own rights
//!   (with which they could change the host itself).
//!
//! Every refusal is a warning naming the path and what was wrong, and the
//! guest is compiled afresh: a problem with the cache never fails a call.
//! Entries are written to a new temporary file (mode 0600, created
//! exclusively) and renamed into place, digest first.
//!
//! The folder is per user (`$XDG_CACHE_HOME/cyxla` or `~/.cache/cyxla`), so
//! tenants, who are users, never share entries they could write.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::hash::{Hash, Hasher};
use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use sha2::{Digest, Sha256};
use wasmtime::Module;

/// Names the cache folder.
pub const CACHE_DIR_ENV: &str = "CYXLA_CACHE_DIR";

/// Links followed on the way to the cache folder, at most (the kernel's
/// limit for one path).
const MAX_LINKS: usize = 40;

/// A verified compile cache folder, held open.
#[derive(Clone, Debug)]
pub struct ModuleCache {
    /// The path it was opened by, for messages.
    dir: PathBuf,
    /// The folder itself: entries are opened relative to it.
    fd: Arc<OwnedFd>,
}

impl ModuleCache {
    /// The default folder: `$CYXLA_CACHE_DIR`, else `$XDG_CACHE_HOME/cyxla`,
    /// else `~/.cache/cyxla`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|d| !d.is_empty()) {
            return Some(PathBuf::from(dir));
        }
        if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
            return Some(PathBuf::from(dir).join("cyxla"));
        }
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("cyxla"))
    }

    /// Opens the cache at `dir`, making the folders missing on the way
    /// (mode 0700), and checks the way to it (see the module's
    /// documentation).
    ///
    /// # Errors
    ///
    /// A folder cannot be made or opened, something on the way is not a
    /// folder, or the cache folder or a folder or link on the way to it
    /// could be changed by someone other than the user or root: the
    /// message names the path and says what is wrong.
    pub fn open(dir: &Path) -> Result<ModuleCache, String> {
        let fd = open_trusted(dir)?;
        Ok(ModuleCache {
            dir: dir.to_owned(),
            fd: Arc::new(fd),
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The module of `bytes` for `engine`: from the cache if a verified
    /// entry is there, else compiled (and stored).
    ///
    /// # Errors
    ///
    /// wasmtime's, if `bytes` do not compile.
    pub(crate) fn module(
        &self,
        engine: &wasmtime::Engine,
        bytes: &[u8],
    ) -> wasmtime::Result<Module> {
        // The folder's mode may have changed since it was opened.
        let private = rustix::fs::fstat(&*self.fd)
            .map_err(|e| format!("cannot be read: {e}"))
            .and_then(|st| check_private(&st));
        if let Err(why) = private {
            tracing::warn!(
                "the compile cache {} {why}: guests are compiled without it",
                self.dir.display()
            );
            crate::stats::count(crate::stats::Event::CacheMiss);
            return Module::from_binary(engine, bytes);
        }
        let key = key(engine, bytes);
        if let Some(module) = self.load(engine, &key) {
            crate::stats::count(crate::stats::Event::CacheHit);
            return Ok(module);
        }
        crate::stats::count(crate::stats::Event::CacheMiss);
        let module = Module::from_binary(engine, bytes)?;
        match module.serialize() {
            Ok(data) => {
                if let Err(e) = self.store(&key, &data) {
                    tracing::warn!(
                        "cannot write {} to the compile cache: {e}",
                        self.dir.join(artifact_name(&key)).display()
                    );
                }
            }
            Err(e) => tracing::warn!("cannot serialize a module for the compile cache: {e}"),
        }
        Ok(module)
    }

    /// The entry of `key`, if it is there and passes every check; a
    /// warning for each one that does not.
    fn load(&self, engine: &wasmtime::Engine, key: &str) -> Option<Module> {
        let artifact = self.dir.join(artifact_name(key));
        let digest = self.dir.join(digest_name(key));
        let reject = |why: String| {
            tracing::warn!(
                "compile cache entry {} rejected ({why}); it is rebuilt",
                artifact.display()
            );
            None
        };
        let mut artifact_file = match self.open_entry(&artifact_name(key)) {
            Ok(Some(file)) => file,
            // Not cached yet.
            Ok(None) => return None,
            Err(why) => return reject(format!("it {why}")),
        };
        let mut digest_file = match self.open_entry(&digest_name(key)) {
            Ok(Some(file)) => file,
            Ok(None) => return reject(format!("its digest {} is missing", digest.display())),
            Err(why) => return reject(format!("its digest {} {why}", digest.display())),
        };
        #[cfg(feature = "fuzzing")]
        testing::between_check_and_use_hook(&self.dir, &artifact);
        let mut data = Vec::new();
        if let Err(e) = artifact_file.read_to_end(&mut data) {
            return reject(format!("cannot read it: {e}"));
        }
        // A digest is 64 hex digits; a longer file is not one.
        let mut want = Vec::new();
        if let Err(e) = (&mut digest_file).take(256).read_to_end(&mut want) {
            return reject(format!("cannot read its digest {}: {e}", digest.display()));
        }
        if want.trim_ascii() != entry_digest(key, &data).as_bytes() {
            return reject(
                "its bytes do not match the digest this host wrote for this entry: tampered, \
                 truncated, or moved from another entry"
                    .to_owned(),
            );
        }
        // SAFETY: `Module::deserialize` runs code from `data` as compiled
        // code. `data` is what this host's `Module::serialize` wrote for this
        // engine configuration and version (both are in the key): it was
        // read from the file that was checked (opened without following
        // links; a regular file of this user's that nobody else may write),
        // in a folder held open since it was checked to be this user's,
        // writable by nobody else, and reached through folders and links
        // that only this user or root could change; its sha256 with the key
        // matches the digest written beside it, checked the same way.
        match unsafe { Module::deserialize(engine, &data) } {
            Ok(module) => Some(module),
            Err(e) => reject(format!("wasmtime refused it: {e}")),
        }
    }

    /// Opens the entry file `name` for reading, without following a link,
    /// and checks what was opened: `None` if there is no such file, else
    /// what is wrong with it.
    fn open_entry(&self, name: &str) -> Result<Option<std::fs::File>, String> {
        // Non-blocking: opening a FIFO for reading would otherwise wait for
        // a writer.
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
        let fd = match rustix::fs::openat(&*self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => return Err("is a link (links are not followed)".to_owned()),
            Err(e) => return Err(format!("cannot be opened: {e}")),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| format!("cannot be read: {e}"))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err("is not a regular file".to_owned());
        }
        check_private(&st)?;
        Ok(Some(std::fs::File::from(fd)))
    }

    /// Writes the entry of `key`: digest first, so that an artifact
    /// without its digest is never loaded.
    fn store(&self, key: &str, data: &[u8]) -> std::io::Result<()> {
        self.write_entry(&digest_name(key), entry_digest(key, data).as_bytes())?;
        self.write_entry(&artifact_name(key), data)
    }

    /// Writes `bytes` to a new temporary file in the folder and renames it
    /// to `name`.
    fn write_entry(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let tmp = format!(
            "{name}.tmp{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let fd = rustix::fs::openat(
            &*self.fd,
            &tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )?;
        let mut file = std::fs::File::from(fd);
        let written = file
            .write_all(bytes)
            .and_then(|()| file.sync_data())
            .and_then(|()| {
                rustix::fs::renameat(&*self.fd, &tmp, &*self.fd, name).map_err(std::io::Error::from)
            });
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&*self.fd, &tmp, AtFlags::empty());
        }
        written
    }
}

fn artifact_name(key: &str) -> String {
    format!("{key}.cwasm")
}

fn digest_name(key: &str) -> String {
    format!("{key}.sha256")
}

/// What the digest file of `key`'s entry holds: the sha256 of the key and
/// the artifact, in hex.
fn entry_digest(key: &str, data: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(key.as_bytes());
    hasher.update(b"\n");
    hasher.update(data);
    hex::encode(hasher.finalize())
}

/// What compiled guest code depends on beyond wasmtime's version and
/// configuration: the engine's patch series, `vendor/series` and the text of
/// every patch it lists (deadline checks that load from a poll page, short
/// loops unrolled, x64 lowering; vendor/README.md), as `build.rs` gathers
/// it. Part of the key, so that code compiled by an engine with other
/// patches is not loaded: code with the stock epoch checks would compare
/// the epoch with the poll page's address and never stop.
const CODEGEN_PATCH: &str = include_str!(concat!(env!("OUT_DIR"), "/engine_series.txt"));

/// The layout of an entry (its digest's form); part of the key, so that
/// entries of an earlier layout are not found rather than rejected.
const ENTRY_FORMAT: &str = "entry 2: digest of key and artifact";

/// The key of `bytes` compiled by `engine`: the module's sha256 and a hash
/// of everything about the engine that a compiled artifact depends on.
fn key(engine: &wasmtime::Engine, bytes: &[u8]) -> String {
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    CODEGEN_PATCH.hash(&mut hasher);
    ENTRY_FORMAT.hash(&mut hasher);
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    format!(
        "{}-{:016x}",
        hex::encode(Sha256::digest(bytes)),
        hasher.finish()
    )
}

/// The user running the host.
fn me() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Owned by this user, and writable by nobody else: the cache folder and
/// its entries.
fn check_private(st: &Stat) -> Result<(), String> {
    let me = me();
    if st.st_uid != me {
        return Err(format!(
            "is owned by uid {}, not this user (uid {me})",
            st.st_uid
        ));
    }
    if st.st_mode & 0o022 != 0 {
        return Err(format!(
            "may be written by others (mode {:o})",
            st.st_mode & 0o7777
        ));
    }
    Ok(())
}

/// Owned by root or this user, and writable by nobody else unless sticky
/// and root's: a folder on the way to the cache folder.
fn check_on_the_way(st: &Stat) -> Result<(), String> {
    let me = me();
    if st.st_uid != 0 && st.st_uid != me {
        return Err(format!(
            "is owned by uid {}, neither this user (uid {me}) nor root, who may replace what is in it",
            st.st_uid
        ));
    }
    let sticky = st.st_mode & 0o1000 != 0;
    if st.st_mode & 0o022 != 0 && !(sticky && st.st_uid == 0) {
        return Err(format!(
            "may be written by others (mode {:o}), who may replace what is in it",
            st.st_mode & 0o7777
        ));
    }
    Ok(())
}

/// The components of `path` to walk, in order (`/` and `.` dropped).
fn components(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Opens the folder `dir`, walking from `/` as the module's documentation
/// says and making missing folders (mode 0700).
fn open_trusted(dir: &Path) -> Result<OwnedFd, String> {
    let shown = dir.display();
    let absolute = std::path::absolute(dir)
        .map_err(|e| format!("cannot find the compile cache {shown}: {e}"))?;
    // `O_PATH`: a folder on the way need only be searchable, not readable
    // (as a home under a `0711` folder); an `O_PATH` descriptor serves
    // `fstat` and the `*at` calls.
    let folder = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let root = || {
        rustix::fs::open("/", folder, Mode::empty())
            .map_err(|e| format!("cannot open / on the way to the compile cache {shown}: {e}"))
    };
    let mut todo = components(&absolute);
    let mut current = root()?;
    let mut at = PathBuf::from("/");
    let mut links = 0;
    let mut made = 0;
    let on_the_way = |st: &Stat, at: &Path| {
        check_on_the_way(st).map_err(|why| {
            format!(
                "the compile cache {shown} is not used: the folder {} on the way to it {why}",
                at.display()
            )
        })
    };
    if todo.is_empty() {
        let st = rustix::fs::fstat(&current).map_err(|e| format!("cannot read /: {e}"))?;
        check_private(&st).map_err(|why| format!("the compile cache {shown} {why}"))?;
        return Ok(current);
    }
    on_the_way(
        &rustix::fs::fstat(&current).map_err(|e| format!("cannot read /: {e}"))?,
        &at,
    )?;
    while let Some(name) = todo.pop_front() {
        let here = at.join(&name);
        match rustix::fs::openat(&current, name.as_os_str(), folder, Mode::empty()) {
            Ok(fd) => {
                let st = rustix::fs::fstat(&fd)
                    .map_err(|e| format!("cannot read {}: {e}", here.display()))?;
                if todo.is_empty() {
                    check_private(&st).map_err(|why| {
                        if here == absolute {
                            format!("the compile cache {shown} {why}")
                        } else {
                            format!("the compile cache {shown} ({}) {why}", here.display())
                        }
                    })?;
                } else {
                    on_the_way(&st, &here)?;
                }
                current = fd;
                at = here;
            }
            Err(Errno::NOENT) if made < 2 * MAX_LINKS + 64 => {
                match rustix::fs::mkdirat(&current, name.as_os_str(), Mode::RWXU) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => {
                        return Err(format!(
                            "cannot create the compile cache {shown}: cannot make {}: {e}",
                            here.display()
                        ));
                    }
                }
                made += 1;
                todo.push_front(name);
            }
            Err(Errno::LOOP | Errno::NOTDIR) => {
                let st = rustix::fs::statat(&current, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|e| format!("cannot read {}: {e}", here.display()))?;
                if FileType::from_raw_mode(st.st_mode) != FileType::Symlink {
                    return Err(if todo.is_empty() {
                        format!("the compile cache {shown} is not a folder")
                    } else {
                        format!(
                            "cannot create the compile cache {shown}: {} is not a folder",
                            here.display()
                        )
                    });
                }
                let me = me();
                if st.st_uid != 0 && st.st_uid != me {
                    return Err(format!(
                        "the compile cache {shown} is not used: {} is a link owned by uid {} \
                         (only links this user, uid {me}, or root made are followed)",
                        here.display(),
                        st.st_uid
                    ));
                }
                links += 1;
                if links > MAX_LINKS {
                    return Err(format!(
                        "the compile cache {shown} is not used: more than {MAX_LINKS} links on \
                         the way to it"
                    ));
                }
                let target = rustix::fs::readlinkat(&current, name.as_os_str(), Vec::new())
                    .map_err(|e| format!("cannot read the link {}: {e}", here.display()))?;
                let target = Path::new(OsStr::from_bytes(target.as_bytes()));
                let mut next = components(target);
                next.extend(todo.drain(..));
                todo = next;
                if target.is_absolute() {
                    current = root()?;
                    at = PathBuf::from("/");
                }
            }
            Err(e) => {
                return Err(format!(
                    "cannot open {} on the way to the compile cache {shown}: {e}",
                    here.display()
                ));
            }
        }
    }
    Ok(current)
}

/// Test hooks, built for tests only (the `fuzzing` feature).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod testing {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    /// Called with an artifact's path.
    pub type Hook = Box<dyn Fn(&Path) + Send + Sync>;

    static HOOK: Mutex<Option<(PathBuf, Hook)>> = Mutex::new(None);

    /// Runs `hook` whenever an entry of the cache opened as `dir` has been
    /// checked and before it is read (a test swaps files there); `None`
    /// removes it.
    pub fn between_check_and_use(dir: &Path, hook: Option<Hook>) {
        *HOOK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            hook.map(|hook| (dir.to_owned(), hook));
    }

    pub(super) fn between_check_and_use_hook(dir: &Path, artifact: &Path) {
        let hook = HOOK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, hook)) = &*hook
            && at == dir
        {
            hook(artifact);
        }
    }
}
