//! A host session: the PJRT plugin found and loaded, and every handler that
//! policy asks for registered with it (trusted native handlers from shared
//! libraries, the native LAPACK targets, sandboxed guests).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use plugin_glue::ffi::xla_ffi::XLA_FFI_Handler;
use plugin_glue::plugin::Plugin;
use plugin_glue::{lapack, registry};

use crate::config::Config;
use crate::limits::Limits;
use crate::policy::AllowList;
use crate::sandbox::Sandbox;

/// Environment variable naming the PJRT plugin to load.
pub const PLUGIN_ENV: &str = "CYXLA_PJRT_PLUGIN";

/// Where `scripts/setup.sh` installs the default plugin, relative to the
/// workspace root.
pub const INSTALLED_PLUGIN: &str =
    ".venv/lib/python3.11/site-packages/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so";

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

/// What a host process registers: the settings shared by the `cyxla-host`
/// command line and the cyxla PJRT plugin library.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    /// The real PJRT plugin; `None`: [`find_plugin`]'s default.
    pub plugin: Option<PathBuf>,
    /// Trusted native handlers.
    pub natives: Vec<NativeSpec>,
    /// The guests folder; `None`: [`Sandbox::default_guests_dir`].
    pub guests: Option<PathBuf>,
    /// Which guest targets are registered.
    pub policy: AllowList,
    /// Guest limits.
    pub limits: Limits,
    /// Whether the native LAPACK targets are registered.
    pub lapack: bool,
    /// Whether a target the policy names but no guest serves is an error
    /// (`true`) or a warning.
    pub strict: bool,
}

impl Setup {
    /// The setup a [`Config`] describes; strict: a named target that no
    /// guest serves is an error.
    pub fn from_config(config: &Config) -> Setup {
        Setup {
            plugin: config.plugin.clone(),
            natives: config.natives.clone(),
            guests: config.guests.clone(),
            policy: config.allow.clone(),
            limits: config.limits.clone(),
            lapack: config.lapack,
            strict: true,
        }
    }

    /// The guests folder this setup uses.
    pub fn guests_dir(&self) -> PathBuf {
        self.guests
            .clone()
            .unwrap_or_else(Sandbox::default_guests_dir)
    }

    /// Loads the guests (if there is a folder, or one was asked for) and
    /// checks the policy against them, without registering anything.
    ///
    /// # Errors
    ///
    /// The folder is missing although guests were asked for, cannot be
    /// read, or (strict) a named target is served by no guest.
    pub fn sandbox(&self) -> Result<Option<Sandbox>> {
        let dir = self.guests_dir();
        let explicit = self.guests.is_some()
            || self.policy.allows_all()
            || self.policy.named().next().is_some();
        if !dir.is_dir() {
            if explicit {
                bail!(
                    "guests folder {} does not exist (set {} or --guests to a folder of .wasm \
                     modules; build the bundled guests with scripts/setup.sh)",
                    dir.display(),
                    crate::sandbox::GUESTS_ENV
                );
            }
            return Ok(None);
        }
        let sandbox = Sandbox::new(&dir, self.policy.clone(), self.limits.clone())
            .with_context(|| format!("cannot load the guests in {}", dir.display()))?;
        for rejected in sandbox.guests().rejected() {
            tracing::warn!(
                "guest {} rejected: {}",
                rejected.path.display(),
                rejected.error
            );
        }
        let unserved = sandbox.unserved();
        if self.strict && !unserved.is_empty() {
            let served: Vec<&str> = sandbox.guests().targets().map(|(t, _)| t).collect();
            let why: Vec<String> = unserved
                .iter()
                .map(|t| {
                    sandbox
                        .hint_for_unregistered(t)
                        .unwrap_or_else(|| format!("no guest serves `{t}`"))
                })
                .collect();
            bail!(
                "allowed target(s) not served by any guest in {}: {}; the guests there serve: {}",
                dir.display(),
                why.join("; "),
                if served.is_empty() {
                    "nothing".to_owned()
                } else {
                    served.join(", ")
                }
            );
        }
        for target in unserved {
            tracing::warn!("--allow {target}: no guest in {} serves it", dir.display());
        }
        Ok(Some(sandbox))
    }
}

/// A loaded plugin and what serves its targets.
#[derive(Debug)]
pub struct Host {
    /// The real PJRT plugin.
    pub plugin: Plugin,
    /// The guests, if a folder was loaded.
    pub sandbox: Option<Sandbox>,
}

/// Loads the plugin and registers every handler `setup` asks for: natives,
/// the LAPACK targets (unless turned off), then the allowed guest targets.
///
/// # Errors
///
/// Each step's, with what it was doing and which plugin, file or target.
pub fn start(setup: &Setup) -> Result<Host> {
    let path = find_plugin(setup.plugin.as_deref())?;
    let plugin = Plugin::load(&path)
        .with_context(|| format!("cannot load PJRT plugin {}", path.display()))?;
    start_with(plugin, setup)
}

/// [`start`] with an already loaded plugin.
///
/// # Errors
///
/// As for [`start`].
pub fn start_with(plugin: Plugin, setup: &Setup) -> Result<Host> {
    let sandbox = setup.sandbox()?;
    for spec in &setup.natives {
        register_native(&plugin, spec)?;
    }
    if setup.lapack {
        for (target, handler) in lapack::targets() {
            if setup.natives.iter().any(|n| n.target == target) {
                continue;
            }
            registry::register_with_origin(&plugin, target, handler, "native LAPACK".into())
                .with_context(|| format!("cannot register LAPACK target `{target}`"))?;
        }
    }
    if let Some(sandbox) = &sandbox {
        sandbox
            .register_allowed(&plugin)
            .context("cannot register the allowed guest targets")?;
    }
    Ok(Host { plugin, sandbox })
}

/// Finds the PJRT plugin: `explicit` (from `--plugin` or the
/// `CYXLA_PJRT_PLUGIN` environment variable), else the one `scripts/setup.sh`
/// installed next to this build.
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
    for root in workspace_roots() {
        let candidate = root.join(INSTALLED_PLUGIN);
        if candidate.exists() {
            return Ok(candidate);
        }
    }
    bail!(
        "no PJRT plugin found: pass --plugin PATH or set {PLUGIN_ENV}, or run scripts/setup.sh \
         to install the default plugin (pip package lammps-jax-pjrt-cpu==0.11.2)"
    )
}

/// Candidate workspace roots: above the running executable
/// (`target/<profile>/cyxla-host`), then the one this crate was built in.
pub fn workspace_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).take(4).map(Path::to_owned));
    }
    if let Some(root) = Path::new(env!("CARGO_MANIFEST_DIR")).parent() {
        roots.push(root.to_owned());
    }
    roots
}

/// Loads a native handler library (never unloaded: XLA keeps the handler
/// for the life of the process) and registers `spec.symbol` under
/// `spec.target`.
///
/// # Errors
///
/// The library cannot be loaded, has no such symbol, or XLA refuses the
/// registration; each names the library, symbol and target.
pub fn register_native(plugin: &Plugin, spec: &NativeSpec) -> Result<()> {
    // SAFETY: loading a library runs its initialisers. `--native` is the
    // operator's explicit statement that this library is trusted native code.
    let library = unsafe { libloading::Library::new(&spec.library) }.with_context(|| {
        format!(
            "cannot load native handler library {}",
            spec.library.display()
        )
    })?;
    // The handler must outlive every executable: keep the library forever.
    let library: &'static libloading::Library = Box::leak(Box::new(library));
    // SAFETY: the symbol is declared by the operator to be an XLA FFI
    // handler (`XLA_FFI_Error* (XLA_FFI_CallFrame*)`); the library is never
    // unloaded, so the pointer stays valid.
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
    let origin = format!("native {}:{}", spec.library.display(), spec.symbol);
    registry::register_foreign(plugin, &spec.target, handler, origin)
        .with_context(|| format!("cannot register native target `{}`", spec.target))?;
    Ok(())
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
}
