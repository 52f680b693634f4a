//! Setting up a host: the PJRT plugin found and loaded, and every handler that
//! policy asks for registered with it (trusted native handlers from shared
//! libraries, the native LAPACK targets, sandboxed guests).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use cyxla_lapack as lapack;
use plugin_glue::ffi::xla_ffi::XLA_FFI_Handler;
use plugin_glue::plugin::Plugin;
use plugin_glue::registry;

use cyxla_sandbox::cache::ModuleCache;

use cyxla_sandbox::AllowList;
use cyxla_sandbox::Destination;
use cyxla_sandbox::Engine;
use cyxla_sandbox::Guests;
use cyxla_sandbox::Watcher;
use cyxla_sandbox::limits::Limits;
use cyxla_sandbox::{Sandbox, pin_holds};

use crate::config::{CACHE_ENV, GUESTS_ENV, PLUGIN_ENV};

/// A trusted native handler to register: `TARGET=LIBRARY:SYMBOL`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeSpec {
    /// Custom-call target name.
    pub target: String,
    /// Shared library holding the handler.
    pub library: PathBuf,
    /// Exported `XLA_FFI_Handler` symbol.
    pub symbol: String,
}

impl std::str::FromStr for NativeSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let usage = || format!("`{s}` is not TARGET=LIBRARY:SYMBOL");
        let (target, rest) = s.split_once('=').ok_or_else(usage)?;
        let (library, symbol) = rest.rsplit_once(':').ok_or_else(usage)?;
        if target.is_empty() || library.is_empty() || symbol.is_empty() {
            return Err(usage());
        }
        Ok(NativeSpec {
            target: target.to_owned(),
            library: PathBuf::from(library),
            symbol: symbol.to_owned(),
        })
    }
}

/// The `site-packages` of the Python venv `scripts/setup.sh` installs,
/// relative to the workspace root (for tests: programs look in
/// [`site_packages`]).
pub const SITE_PACKAGES: &str = ".venv/lib/python3.11/site-packages";

/// The default plugin (pip package `lammps-jax-pjrt-cpu` 0.11.2), relative
/// to a `site-packages` folder.
pub const DEFAULT_PLUGIN: &str = "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so";

/// What a host process registers: the settings shared by the `cyxla-host`
/// command line and the cyxla PJRT plugin library. The plugin's
/// [`Config`] holds one (`config.setup`), filled from the configuration
/// file, the environment or the tenant policy; the command line builds its
/// own from its flags. Fields are named as the configuration's keys.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    /// The real PJRT plugin; `None`: [`find_plugin`]'s default.
    pub plugin: Option<PathBuf>,
    /// Trusted native handlers.
    pub natives: Vec<NativeSpec>,
    /// The guests folders, in order: an earlier folder wins a target that
    /// several serve. Empty: [`default_guests_dir`].
    pub guests: Vec<PathBuf>,
    /// Which guest targets are registered (`allow`).
    pub allow: AllowList,
    /// Target → sha256 (hex) of the only module that may serve it.
    pub pins: BTreeMap<String, String>,
    /// Guest limits.
    pub limits: Limits,
    /// Whether the native LAPACK targets are registered.
    pub lapack: bool,
    /// Whether a target the policy names but no guest serves is an error
    /// (`true`) or a warning.
    pub strict: bool,
    /// Whether changed guests are reloaded while the process runs.
    pub reload: bool,
    /// The compile cache folder; `None`: guests are compiled at every start.
    pub cache: Option<PathBuf>,
}

impl Setup {
    /// The guests folders this setup uses.
    pub fn guests_dirs(&self) -> Vec<PathBuf> {
        if self.guests.is_empty() {
            vec![default_guests_dir()]
        } else {
            self.guests.clone()
        }
    }

    /// Loads the guests of every folder and checks the policy against them,
    /// without registering anything: one sandbox per folder, each allowing
    /// what the policy allows less the targets an earlier folder serves and
    /// the pinned targets whose module there is not the pinned one.
    ///
    /// # Errors
    ///
    /// A folder is missing although guests were asked for, cannot be read,
    /// or (strict) a named target is served by no guest.
    pub fn sandboxes(&self) -> Result<Vec<Arc<Sandbox>>> {
        let explicit = !self.guests.is_empty()
            || self.allow.allows_all()
            || self.allow.named().next().is_some();
        let engine = Engine::new(&self.limits).context("cannot build the wasm engine")?;
        if let Some(dir) = &self.cache {
            match ModuleCache::open(dir) {
                Ok(cache) => engine.use_cache(cache),
                Err(e) => tracing::warn!(
                    "{e}: guests are compiled without it (the compile cache is the user's own, \
                     in their home: give the user a home they own, or set {} to a folder of \
                     theirs, or {}=0 to turn the cache off)",
                    cyxla_sandbox::cache::CACHE_DIR_ENV,
                    CACHE_ENV
                ),
            }
        }
        let mut sandboxes = Vec::new();
        let mut served: BTreeSet<String> = BTreeSet::new();
        for dir in self.guests_dirs() {
            if !dir.is_dir() {
                if explicit {
                    bail!(
                        "guests folder {} does not exist (set {} or --guests to a folder of .wasm \
                         modules; build the bundled guests with scripts/setup.sh)",
                        dir.display(),
                        GUESTS_ENV
                    );
                }
                continue;
            }
            let guests = Guests::load_dir_allowed(&engine, &dir, &self.allow)
                .with_context(|| format!("cannot load the guests in {}", dir.display()))?;
            for rejected in guests.rejected() {
                tracing::warn!(
                    "guest {} rejected: {}",
                    rejected.path.display(),
                    rejected.error
                );
            }
            let mut skip: Vec<String> = Vec::new();
            for (target, guest) in guests.targets() {
                if served.contains(target) {
                    tracing::info!(
                        "{} also serves `{target}`; an earlier guests folder serves it",
                        guest.path().display()
                    );
                    skip.push(target.to_owned());
                    continue;
                }
                if !pin_holds(&self.pins, target, guest) {
                    skip.push(target.to_owned());
                }
            }
            let policy = self.allow.except(skip.iter().map(String::as_str));
            let sandbox = Sandbox::with_guests(guests, policy).with_pins(self.pins.clone());
            served.extend(sandbox.allowed().into_iter().map(|(t, _)| t.to_owned()));
            sandboxes.push(Arc::new(sandbox));
        }
        let unserved: Vec<&str> = self
            .allow
            .named()
            .filter(|t| !served.contains(*t))
            .collect();
        if self.strict && !unserved.is_empty() {
            let why: Vec<String> = unserved
                .iter()
                .map(|t| {
                    if let Some(pin) = self.pins.get(*t) {
                        return format!(
                            "`{t}` is pinned to sha256 {}…, which no module in the folders has",
                            &pin[..pin.len().min(12)]
                        );
                    }
                    sandboxes
                        .iter()
                        .find_map(|s| s.hint_for_unregistered(t))
                        .unwrap_or_else(|| format!("no guest serves `{t}`"))
                })
                .collect();
            let all: Vec<String> = sandboxes
                .iter()
                .flat_map(|s| s.guests().targets().map(|(t, _)| t.to_owned()))
                .collect();
            let dirs: Vec<String> = self
                .guests_dirs()
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            bail!(
                "allowed target(s) not served by any guest in {}: {}; the guests there serve: {}",
                dirs.join(", "),
                why.join("; "),
                if all.is_empty() {
                    "nothing".to_owned()
                } else {
                    all.join(", ")
                }
            );
        }
        for target in unserved {
            tracing::warn!("--allow {target}: no guest serves it");
        }
        Ok(sandboxes)
    }
}

/// A loaded plugin and what serves its targets.
#[derive(Debug)]
pub struct Host {
    /// The real PJRT plugin.
    pub plugin: Plugin,
    /// The guests, one sandbox per folder.
    pub sandboxes: Vec<Arc<Sandbox>>,
    /// The folder watchers, when changed guests are reloaded.
    pub watchers: Vec<Watcher>,
}

impl Host {
    /// Why `target` is not registered, if a sandbox can tell.
    pub fn hint_for_unregistered(&self, target: &str) -> Option<String> {
        self.sandboxes
            .iter()
            .find_map(|s| s.hint_for_unregistered(target))
    }
}

/// Loads the plugin and registers every handler `setup` asks for: natives,
/// the LAPACK targets (unless turned off), then the allowed guest targets.
///
/// # Errors
///
/// Each step's, with what it was doing and which plugin, file or target.
///
/// # Safety
///
/// The plugin `setup` names (or the installed one) must be a PJRT plugin,
/// and its trusted natives XLA FFI handlers: both are native code this
/// process runs (see [`Plugin::load`] and [`register_native`]).
pub unsafe fn start(setup: &Setup) -> Result<Host> {
    let path = find_plugin(setup.plugin.as_deref())?;
    // SAFETY: the caller vouches for the plugin (this function's contract).
    let plugin = unsafe { Plugin::load(&path) }
        .with_context(|| format!("cannot load PJRT plugin {}", path.display()))?;
    // SAFETY: the caller vouches for the natives (this function's contract).
    unsafe { start_with(plugin, setup) }
}

/// [`start`] with an already loaded plugin.
///
/// # Errors
///
/// As for [`start`].
///
/// # Safety
///
/// The trusted natives of `setup` must be XLA FFI handlers (see
/// [`register_native`]).
pub unsafe fn start_with(plugin: Plugin, setup: &Setup) -> Result<Host> {
    let sandboxes = setup.sandboxes()?;
    for spec in &setup.natives {
        // SAFETY: the caller vouches for the natives (this function's contract).
        unsafe { register_native(&plugin, spec) }?;
    }
    if setup.lapack {
        lapack::prefer(openblas_wheels());
        for (target, handler) in lapack::targets() {
            if setup.natives.iter().any(|n| n.target == target) {
                continue;
            }
            registry::register_with_origin(&plugin, target, handler, "native LAPACK".into())
                .with_context(|| format!("cannot register LAPACK target `{target}`"))?;
        }
    }
    for sandbox in &sandboxes {
        sandbox.register_allowed(&plugin).with_context(|| {
            format!(
                "cannot register the allowed guest targets of {}",
                sandbox.guests().dir().display()
            )
        })?;
    }
    let watchers = watch(setup, &sandboxes, || Destination::Plugin(plugin.clone()));
    Ok(Host {
        plugin,
        sandboxes,
        watchers,
    })
}

/// What serves the targets a client registers itself (jaxlib's CPU
/// client, platform `cpu`): the same sandboxes as [`Host`], their
/// trampolines exported instead of registered with a PJRT plugin.
#[derive(Debug)]
pub struct ExportedHost {
    /// The guests, one sandbox per folder.
    pub sandboxes: Vec<Arc<Sandbox>>,
    /// The folder watchers, when changed guests are reloaded.
    pub watchers: Vec<Watcher>,
}

impl ExportedHost {
    /// Every exported target and its trampoline, new targets of reloaded
    /// guests included (`plugin_glue::registry::exported`).
    pub fn targets(&self) -> Vec<(String, XLA_FFI_Handler)> {
        registry::exported()
    }
}

/// [`start_with`] for a client that registers handlers itself: builds the
/// sandboxes (limits, cache, pins, reload) and exports the trusted natives
/// and the allowed guest targets. The native LAPACK targets are not
/// exported: jaxlib's CPU client has its own.
///
/// # Errors
///
/// As for [`start_with`].
///
/// # Safety
///
/// As for [`start_with`]: the trusted natives of `setup` must be XLA FFI
/// handlers.
pub unsafe fn start_exported(setup: &Setup) -> Result<ExportedHost> {
    let sandboxes = setup.sandboxes()?;
    for spec in &setup.natives {
        // SAFETY: the caller vouches for the natives (this function's contract).
        let handler = unsafe { load_native(spec) }?;
        let origin = format!("native {}:{}", spec.library.display(), spec.symbol);
        registry::export_foreign(&spec.target, handler, origin)
            .with_context(|| format!("cannot export native target `{}`", spec.target))?;
    }
    for sandbox in &sandboxes {
        sandbox.export_allowed().with_context(|| {
            format!(
                "cannot export the allowed guest targets of {}",
                sandbox.guests().dir().display()
            )
        })?;
    }
    let watchers = watch(setup, &sandboxes, || Destination::Exported);
    Ok(ExportedHost {
        sandboxes,
        watchers,
    })
}

/// Watches every guests folder for changed guests, where `setup` reloads
/// them; a folder that cannot be watched is logged and served as it is.
fn watch(
    setup: &Setup,
    sandboxes: &[Arc<Sandbox>],
    destination: impl Fn() -> Destination,
) -> Vec<Watcher> {
    if !setup.reload {
        return Vec::new();
    }
    sandboxes
        .iter()
        .filter_map(|sandbox| match sandbox.watch(destination()) {
            Ok(watcher) => Some(watcher),
            Err(e) => {
                tracing::warn!(
                    "{} is not watched, changed guests will not be reloaded: {e}",
                    sandbox.guests().dir().display()
                );
                None
            }
        })
        .collect()
}

/// Finds the PJRT plugin: `explicit` (from `--plugin` or the
/// `CYXLA_PJRT_PLUGIN` environment variable), else the first of
/// [`PLUGIN_PACKAGES`] installed in one of the [`site_packages`] folders (the
/// Python environment cyxla is installed in, or the checkout's `.venv`).
///
/// # Errors
///
/// A named plugin that does not exist, or no installed plugin; the message
/// says how to get one.
pub fn find_plugin(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = explicit {
        if !path.exists() {
            bail!("PJRT plugin {} does not exist", path.display());
        }
        return Ok(path.to_owned());
    }
    let folders = site_packages();
    for folder in &folders {
        for package in PLUGIN_PACKAGES {
            let candidate = folder.join(package);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    let looked: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
    bail!(
        "no PJRT plugin found (looked in {}): pass --plugin PATH or set {PLUGIN_ENV}, or install \
         one beside cyxla: the wheel's extra `pjrt` (pip package fastatomstruct-xla-cpu, any \
         JAX) or lammps-jax-pjrt-cpu==0.11.2 (JAX up to 0.11.2; in a checkout, scripts/setup.sh \
         installs it); or serve the guests on JAX's own CPU backend instead (`cyxla-host \
         --platform cpu`, no PJRT plugin needed)",
        if looked.is_empty() {
            "nowhere".to_owned()
        } else {
            looked.join(", ")
        }
    )
}

/// The real PJRT plugins [`find_plugin`] looks for, in order, relative to a
/// `site-packages` folder: the default (PJRT 0.115, for JAX up to 0.11.2),
/// then pip package `fastatomstruct-xla-cpu` (PJRT 0.106, no JAX pin: the
/// wheel's extra `pjrt`).
pub const PLUGIN_PACKAGES: [&str; 2] = [DEFAULT_PLUGIN, "fastatomstruct_xla_cpu/libpjrt_cpu.so"];

/// The `scipy-openblas32` OpenBLAS, relative to a `site-packages` folder: the
/// LAPACK library preferred when installed there (see [`openblas_wheels`]).
pub const OPENBLAS_WHEEL: &str = "scipy_openblas32/lib/libscipy_openblas.so";

/// The `scipy-openblas32` OpenBLAS of each [`site_packages`] folder that has
/// one: the LAPACK libraries the native LAPACK targets try first (before
/// Debian's; `CYXLA_LAPACK` overrides both).
pub fn openblas_wheels() -> Vec<String> {
    site_packages()
        .into_iter()
        .map(|folder| folder.join(OPENBLAS_WHEEL))
        .filter(|path| path.is_file())
        .map(|path| path.to_string_lossy().into_owned())
        .collect()
}

/// Where the bundled guests are built, relative to the workspace root.
pub const BUNDLED_GUESTS: &str = "guests/out";

/// Where the wheel puts the bundled guests, relative to the folder of the
/// plugin library (`site-packages/jax_plugins/cyxla`).
pub const INSTALLED_GUESTS: &str = "guests";

/// The guests folder: `$CYXLA_GUESTS` if set, else the bundled guests: those
/// installed beside the plugin library (`jax_plugins/cyxla/guests`, from the
/// wheel), or a checkout's `guests/out`. With none there, the first of those
/// (which the set-up then reports as missing).
pub fn default_guests_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(GUESTS_ENV) {
        return PathBuf::from(dir);
    }
    let candidates: Vec<PathBuf> = package_dirs()
        .into_iter()
        .map(|dir| dir.join(INSTALLED_GUESTS))
        .chain(
            workspace_roots()
                .into_iter()
                .map(|root| root.join(BUNDLED_GUESTS)),
        )
        .collect();
    candidates
        .iter()
        .find(|dir| dir.is_dir())
        .or(candidates.first())
        .cloned()
        .unwrap_or_else(|| PathBuf::from(BUNDLED_GUESTS))
}

/// The workspace root this crate was built in (two levels above its
/// manifest, `host/app`). For tests and benches only: installed programs
/// find what they need relative to where they are ([`install_dir`]).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().nth(2).unwrap_or(manifest).to_owned()
}

/// Candidate workspace roots: above the code running this
/// ([`install_dir`]: `target/<profile>/libcyxla_pjrt.so` or
/// `target/<profile>/cyxla-host`), then above the running executable.
pub fn workspace_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_owned));
    for dir in install_dir().into_iter().chain(exe_dir) {
        for root in dir.ancestors().take(4) {
            if !roots.iter().any(|r| r == root) {
                roots.push(root.to_owned());
            }
        }
    }
    roots
}

/// The folder of the code running this: the shared library's when it runs
/// in one (the cyxla PJRT library, `libcyxla_pjrt.so`), else the running
/// executable's. Everything an installation holds is found from here.
pub fn install_dir() -> Option<PathBuf> {
    if let Some(library) = containing_library() {
        return library.parent().map(Path::to_owned);
    }
    let exe = std::env::current_exe().ok()?;
    exe.parent().map(Path::to_owned)
}

/// The shared library this code is linked into, or `None` in an executable.
fn containing_library() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt as _;
    // SAFETY: `Dl_info` is plain old data (pointers and integers), for
    // which all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let address = containing_library as fn() -> Option<PathBuf> as *const libc::c_void;
    // SAFETY: `address` is an address of this object's code and `info` a
    // writable `Dl_info`; dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(address, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: `dli_fname` is a NUL-terminated string the loader keeps for
    // as long as the object is loaded, and this object stays loaded while
    // its code runs.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let path = Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
    // For the main program, glibc's dladdr answers with argv[0].
    let file = path.file_name()?.to_string_lossy();
    if !(file.ends_with(".so") || file.contains(".so.")) {
        return None;
    }
    std::path::absolute(path).ok()
}

/// Folders that may hold the installed Python package `jax_plugins.cyxla`
/// with the plugin library, its guests and SDK: [`install_dir`] itself when
/// it is such a package, and for an executable in a prefix's `bin/` (a
/// venv's, `~/.local`'s) the package in that prefix's `site-packages`.
fn package_dirs() -> Vec<PathBuf> {
    let Some(dir) = install_dir() else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    if dir.join(LIBRARY_FILE).is_file() && dir.ends_with(PACKAGE_DIR) {
        dirs.push(dir.clone());
    }
    if let Some(prefix) = dir.parent() {
        for folder in python_folders(prefix) {
            let package = folder.join(PACKAGE_DIR);
            if package.join(LIBRARY_FILE).is_file() {
                dirs.push(package);
            }
        }
    }
    dirs
}

/// The cyxla PJRT library of the installed Python package (from the
/// wheel) that the running executable belongs to, if there is one.
pub fn installed_library() -> Option<PathBuf> {
    package_dirs()
        .into_iter()
        .map(|dir| dir.join(LIBRARY_FILE))
        .next()
}

/// The Python package the wheel installs, relative to `site-packages`.
pub const PACKAGE_DIR: &str = "jax_plugins/cyxla";

/// The cyxla PJRT library's file name.
const LIBRARY_FILE: &str = "libcyxla_pjrt.so";

/// The `site-packages` folders where the real PJRT plugin and the OpenBLAS
/// wheel are looked for, in order: the one holding the installed package
/// (`package_dirs`), those of the prefix whose `bin/` holds the running
/// executable, then a checkout's `.venv` above it ([`workspace_roots`]).
pub fn site_packages() -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = Vec::new();
    let mut add = |folder: PathBuf| {
        if folder.is_dir() && !folders.contains(&folder) {
            folders.push(folder);
        }
    };
    for package in package_dirs() {
        if let Some(folder) = package.ancestors().nth(2) {
            add(folder.to_owned());
        }
    }
    if let Some(prefix) = install_dir().as_deref().and_then(Path::parent) {
        python_folders(prefix).into_iter().for_each(&mut add);
    }
    for root in workspace_roots() {
        python_folders(&root.join(".venv"))
            .into_iter()
            .for_each(&mut add);
    }
    folders
}

/// `PREFIX/lib/python3.*/{site,dist}-packages` that exist, newest Python
/// first.
fn python_folders(prefix: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
        return Vec::new();
    };
    let mut versions: Vec<(u32, PathBuf)> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name();
            let minor: u32 = name.to_str()?.strip_prefix("python3.")?.parse().ok()?;
            Some((minor, entry.path()))
        })
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    versions
        .into_iter()
        .flat_map(|(_, lib)| [lib.join("site-packages"), lib.join("dist-packages")])
        .filter(|folder| folder.is_dir())
        .collect()
}

/// Loads a native handler library (never unloaded: XLA keeps the handler
/// for the life of the process) and registers `spec.symbol` under
/// `spec.target`.
///
/// # Errors
///
/// The library cannot be loaded, has no such symbol, or XLA refuses the
/// registration; each names the library, symbol and target.
///
/// # Safety
///
/// `spec.library` is loaded (its initialisers run) and `spec.symbol` is
/// registered with XLA as an `XLA_FFI_Handler`, which XLA then calls from
/// any thread: the caller vouches that the library is trusted native code
/// and the symbol such a handler (what `--native` states).
pub unsafe fn register_native(plugin: &Plugin, spec: &NativeSpec) -> Result<()> {
    // SAFETY: the caller vouches for the library and symbol (this
    // function's contract).
    let handler = unsafe { load_native(spec) }?;
    let origin = format!("native {}:{}", spec.library.display(), spec.symbol);
    registry::register_foreign(plugin, &spec.target, handler, origin)
        .with_context(|| format!("cannot register native target `{}`", spec.target))?;
    Ok(())
}

/// Loads a native handler library (never unloaded) and returns its
/// `spec.symbol`.
///
/// # Errors
///
/// The library cannot be loaded or has no such symbol.
///
/// # Safety
///
/// As for [`register_native`].
unsafe fn load_native(spec: &NativeSpec) -> Result<XLA_FFI_Handler> {
    let path = native_library_path(&spec.library);
    // SAFETY: loading a library runs its initialisers; the caller vouches
    // that it is trusted native code (this function's contract).
    let library = unsafe { libloading::Library::new(&path) }.with_context(|| {
        let searched = if has_slash(&spec.library) {
            String::new()
        } else {
            format!(
                " (no such file in the current directory, so the dynamic loader searched its \
                 path for it; name a file with a slash, e.g. ./{})",
                spec.library.display()
            )
        };
        format!(
            "cannot load native handler library {}{searched}",
            spec.library.display()
        )
    })?;
    // The handler must outlive every executable: keep the library forever.
    let library: &'static libloading::Library = Box::leak(Box::new(library));
    // SAFETY: the caller vouches that the symbol is an XLA FFI handler
    // (`XLA_FFI_Error* (XLA_FFI_CallFrame*)`, this function's contract); the
    // library is never unloaded, so the pointer stays valid.
    let handler: XLA_FFI_Handler = unsafe {
        *library
            .get::<XLA_FFI_Handler>(spec.symbol.as_bytes())
            .map_err(|e| {
                anyhow!(
                    "symbol `{}` not found in {}: {e}",
                    spec.symbol,
                    spec.library.display()
                )
            })?
    };
    Ok(handler)
}

/// Whether `path` names a file by a path (with a slash) rather than a bare
/// name the dynamic loader would look up on its search path.
fn has_slash(path: &Path) -> bool {
    path.as_os_str().as_encoded_bytes().contains(&b'/')
}

/// The path to hand `dlopen` for `--native`'s LIBRARY: a bare name that is
/// a file in the current directory means that file (`dlopen("libx.so")`
/// would search the loader's path and miss it); anything else as given.
fn native_library_path(library: &Path) -> PathBuf {
    if !has_slash(library) && library.is_file() {
        Path::new(".").join(library)
    } else {
        library.to_owned()
    }
}

/// The target named by XLA's `No FFI handler registered for <target>`
/// message, if `message` is one.
pub fn unregistered_target(message: &str) -> Option<&str> {
    const MARKER: &str = "No FFI handler registered for ";
    let rest = &message[message.find(MARKER)? + MARKER.len()..];
    let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The hint printed after XLA's message when `target` has no handler: what
/// is registered, and how to register the missing target.
pub fn unregistered_hint(target: &str, extra: Option<String>) -> String {
    let listed = registered_summary();
    let how = extra.unwrap_or_else(|| {
        format!(
            "register it with --native {target}=LIBRARY:SYMBOL, or serve it from a guest \
             (--guests DIR) and allow it with --allow {target}"
        )
    });
    format!("hint: target `{target}` has no handler; {listed}; {how}")
}

/// What is registered, grouped by origin: small groups by name, large ones
/// (the 62 LAPACK targets) by count.
fn registered_summary() -> String {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in registry::registered() {
        groups.entry(r.origin).or_default().push(r.target);
    }
    if groups.is_empty() {
        return "nothing is registered".to_owned();
    }
    let parts: Vec<String> = groups
        .into_iter()
        .map(|(origin, mut targets)| {
            targets.sort();
            if targets.len() > 4 {
                format!("{} targets ({origin})", targets.len())
            } else {
                targets
                    .iter()
                    .map(|t| format!("{t} ({origin})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        })
        .collect();
    format!("registered: {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_spec_parses() {
        let s: NativeSpec = "t=lib/x.so:sym".parse().unwrap();
        assert_eq!(s.target, "t");
        assert_eq!(s.library, PathBuf::from("lib/x.so"));
        assert_eq!(s.symbol, "sym");
        assert!("t=lib.so".parse::<NativeSpec>().is_err());
        assert!("=lib.so:s".parse::<NativeSpec>().is_err());
    }

    #[test]
    fn finds_unregistered_target_in_xla_message() {
        let m = "NOT_FOUND: No FFI handler registered for my_t on a platform Host (canonical host)";
        assert_eq!(unregistered_target(m), Some("my_t"));
        assert_eq!(unregistered_target("other"), None);
    }

    #[test]
    fn python_folders_newest_python_first() {
        let prefix = tempfile::tempdir().unwrap();
        for folder in [
            "lib/python3.11/site-packages",
            "lib/python3.13/site-packages",
            "lib/python3.12",
            "lib/python3.9/dist-packages",
            "lib/pythonX/site-packages",
        ] {
            std::fs::create_dir_all(prefix.path().join(folder)).unwrap();
        }
        let lib = prefix.path().join("lib");
        assert_eq!(
            python_folders(prefix.path()),
            [
                lib.join("python3.13/site-packages"),
                lib.join("python3.11/site-packages"),
                lib.join("python3.9/dist-packages"),
            ]
        );
        assert!(python_folders(&prefix.path().join("none")).is_empty());
    }

    #[test]
    fn an_executable_is_found_from_its_own_folder() {
        // This test runs in an executable, not in a shared library.
        assert_eq!(containing_library(), None);
        let exe = std::env::current_exe().unwrap();
        assert_eq!(install_dir().as_deref(), exe.parent());
        // target/<profile>/deps/<test>: the checkout is among the roots.
        let root = workspace_root();
        assert!(workspace_roots().contains(&root), "{:?}", workspace_roots());
    }
}
