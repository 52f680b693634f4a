//! The compile cache: guests compiled once are kept on disk (wasmtime's
//! serialized modules), keyed by the module's sha256 and the engine's
//! configuration and version, so that a restart loads them without
//! compiling.
//!
//! Loading a cached artifact runs native code, so only artifacts this host
//! wrote are loaded:
//! - the cache folder must be owned by the user running the host and not
//!   writable by anyone else (else it is not used: a warning, and guests are
//!   compiled);
//! - each entry is the artifact and its sha256, written by this host; an
//!   artifact whose bytes do not match (tampered, truncated), that another
//!   user owns or others may write, or that wasmtime refuses, is rejected
//!   with a warning and rebuilt;
//! - entries are written to a temporary file and renamed, mode 0600.
//!
//! The folder is per user (`$XDG_CACHE_HOME/cyxla` or `~/.cache/cyxla`), so
//! tenants, who are users, never share entries they could write.

use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Module;

/// Names the cache folder.
pub const CACHE_DIR_ENV: &str = "CYXLA_CACHE_DIR";

/// A verified compile cache folder.
#[derive(Clone, Debug)]
pub struct ModuleCache {
    dir: PathBuf,
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

    /// Opens (creating, mode 0700) the cache at `dir`.
    ///
    /// # Errors
    ///
    /// The folder cannot be made, is not owned by this user, or may be
    /// written by others: the message says which.
    pub fn open(dir: &Path) -> Result<ModuleCache, String> {
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| format!("cannot create the compile cache {}: {e}", dir.display()))?;
        }
        let meta = std::fs::metadata(dir)
            .map_err(|e| format!("cannot read the compile cache {}: {e}", dir.display()))?;
        if !meta.is_dir() {
            return Err(format!(
                "the compile cache {} is not a folder",
                dir.display()
            ));
        }
        check_private(&meta).map_err(|why| format!("the compile cache {} {why}", dir.display()))?;
        Ok(ModuleCache {
            dir: dir.to_owned(),
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
        let key = key(engine, bytes);
        let artifact = self.dir.join(format!("{key}.cwasm"));
        let digest = self.dir.join(format!("{key}.sha256"));
        if let Some(module) = self.load(engine, &artifact, &digest) {
            return Ok(module);
        }
        let module = Module::from_binary(engine, bytes)?;
        match module.serialize() {
            Ok(data) => {
                if let Err(e) = self.store(&artifact, &digest, &data) {
                    tracing::warn!(
                        "cannot write {} to the compile cache: {e}",
                        artifact.display()
                    );
                }
            }
            Err(e) => tracing::warn!("cannot serialize a module for the compile cache: {e}"),
        }
        Ok(module)
    }

    fn load(&self, engine: &wasmtime::Engine, artifact: &Path, digest: &Path) -> Option<Module> {
        let meta = std::fs::symlink_metadata(artifact).ok()?;
        let reject = |why: String| {
            tracing::warn!(
                "compile cache entry {} rejected ({why}); it is rebuilt",
                artifact.display()
            );
            None
        };
        if !meta.is_file() {
            return reject("not a regular file".to_owned());
        }
        if let Err(why) = check_private(&meta) {
            return reject(why);
        }
        let data = std::fs::read(artifact).ok()?;
        let want = std::fs::read_to_string(digest).unwrap_or_default();
        let got = hex::encode(Sha256::digest(&data));
        if want.trim() != got {
            return reject(
                "its bytes do not match the digest this host wrote: tampered or truncated"
                    .to_owned(),
            );
        }
        // SAFETY: `Module::deserialize` runs code from `data` as compiled
        // code. `data` is what this host's `Module::serialize` wrote for this
        // engine configuration and version (both are in the key): it is in a
        // folder that only this user may write (checked at open), in a file
        // only this user may write (checked above), and its sha256 matches
        // the digest written beside it when it was stored.
        match unsafe { Module::deserialize(engine, &data) } {
            Ok(module) => Some(module),
            Err(e) => reject(format!("wasmtime refused it: {e}")),
        }
    }

    fn store(&self, artifact: &Path, digest: &Path, data: &[u8]) -> std::io::Result<()> {
        let write = |path: &Path, bytes: &[u8]| -> std::io::Result<()> {
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            file.write_all(bytes)?;
            file.sync_data()?;
            std::fs::rename(&tmp, path)
        };
        // Digest first: an artifact without its digest is never loaded.
        write(digest, hex::encode(Sha256::digest(data)).as_bytes())?;
        write(artifact, data)
    }
}

/// What compiled guest code depends on beyond wasmtime's version and
/// configuration: the patches of `vendor/wasmtime-internal-cranelift` (epoch
/// checks trap in place) and of `vendor/cranelift-codegen` (x64 addresses
/// without three-component `lea`, loads sunk through vector bitcasts); see
/// each one's `CYXLA-PATCH.md`. Part of the key, so that code compiled
/// without them is not loaded.
const CODEGEN_PATCH: &str = "wasmtime-internal-cranelift 48.0.8: epoch checks trapnz in place; \
                             cranelift-codegen 0.135.8: lea without nested iadd, loads sunk through vector bitcasts";

/// The key of `bytes` compiled by `engine`: the module's sha256 and a hash
/// of everything about the engine that a compiled artifact depends on.
fn key(engine: &wasmtime::Engine, bytes: &[u8]) -> String {
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    CODEGEN_PATCH.hash(&mut hasher);
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    format!(
        "{}-{:016x}",
        hex::encode(Sha256::digest(bytes)),
        hasher.finish()
    )
}

/// Owned by this user, and writable by nobody else.
fn check_private(meta: &std::fs::Metadata) -> Result<(), String> {
    // SAFETY: geteuid cannot fail and touches no memory of ours.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!(
            "is owned by uid {}, not this user (uid {me})",
            meta.uid()
        ));
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return Err(format!(
            "may be written by others (mode {:o})",
            meta.permissions().mode() & 0o777
        ));
    }
    Ok(())
}
