//! [`Sandbox`]: the guests folder, the policy, and registration of the
//! allowed targets with a PJRT plugin.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use plugin_glue::plugin::Plugin;
use plugin_glue::{Handler, registry};

use crate::dispatch::GuestHandler;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::guest::Guest;
use crate::guests::Guests;
use crate::limits::Limits;
use crate::policy::AllowList;
use crate::pool::Pool;

/// Where a sandbox's targets go.
#[derive(Clone, Debug)]
pub enum Destination {
    /// Registered with a PJRT plugin's FFI extension (platform `cyxla`).
    Plugin(Plugin),
    /// Exported ([`registry::export`]): trampolines that a client registers
    /// itself (jaxlib's CPU client, platform `cpu`), listed by
    /// [`registry::exported`].
    Exported,
}

impl Destination {
    /// Registers or exports `handler` for `target`.
    pub(crate) fn register(
        &self,
        target: &str,
        handler: Arc<dyn Handler>,
        origin: String,
    ) -> plugin_glue::Result<()> {
        match self {
            Destination::Plugin(plugin) => {
                registry::register_with_origin(plugin, target, handler, origin)
            }
            Destination::Exported => registry::export(target, handler, origin).map(|_| ()),
        }
    }
}

/// A target registered with the plugin, and the guest that serves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registered {
    /// The custom-call target.
    pub target: String,
    /// The guest file serving it.
    pub guest: PathBuf,
}

/// The sandbox: loaded guests, the allow-list, one instance pool per guest.
///
/// # Examples
///
/// ```no_run
/// use std::path::Path;
/// use cyxla_sandbox::{AllowList, Limits, Sandbox};
/// use plugin_glue::plugin::Plugin;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = Sandbox::new(Path::new("guests/out"), AllowList::targets(["rms_norm"]), Limits::default())?;
/// // SAFETY: the XLA CPU plugin is a PJRT plugin.
/// let plugin = unsafe { Plugin::load(Path::new("pjrt_c_api_cpu_plugin.so")) }?;
/// for registered in sandbox.register_allowed(&plugin)? {
///     println!("{} -> {}", registered.target, registered.guest.display());
/// }
/// # Ok(())
/// # }
/// ```
pub struct Sandbox {
    pub(crate) guests: Guests,
    pub(crate) policy: AllowList,
    pools: Vec<Arc<Pool>>,
    /// Target → sha256 (hex) of the only module that may serve it.
    pub(crate) pins: BTreeMap<String, String>,
    /// The handler of each target handed out or registered: one slot per
    /// target, which hot reload points at a new guest.
    pub(crate) handlers: Mutex<BTreeMap<String, GuestHandler>>,
}

impl Sandbox {
    /// Builds the engine for `limits` and loads every guest in `guests_dir`
    /// for `policy`: guests none of whose targets it allows are validated,
    /// not compiled ([`Guests::load_dir_allowed`]).
    ///
    /// # Errors
    ///
    /// If the engine cannot be built or the folder cannot be read; rejected
    /// guests are not errors (see [`Guests::rejected`]).
    pub fn new(guests_dir: &Path, policy: AllowList, limits: Limits) -> Result<Sandbox> {
        let engine = Engine::new(&limits)?;
        let guests = Guests::load_dir_allowed(&engine, guests_dir, &policy)?;
        Ok(Sandbox::with_guests(guests, policy))
    }

    /// A sandbox over already loaded guests.
    pub fn with_guests(guests: Guests, policy: AllowList) -> Sandbox {
        let pools = guests
            .guests()
            .iter()
            .map(|g| Arc::new(Pool::new(Arc::clone(g))))
            .collect();
        Sandbox {
            guests,
            policy,
            pools,
            pins: BTreeMap::new(),
            handlers: Mutex::new(BTreeMap::new()),
        }
    }

    /// The loaded guests.
    pub fn guests(&self) -> &Guests {
        &self.guests
    }

    /// The allow-list.
    pub fn policy(&self) -> &AllowList {
        &self.policy
    }

    /// The limits guests run under.
    pub fn limits(&self) -> &Limits {
        self.guests.engine().limits()
    }

    /// Targets that are allowed and served by exactly one guest, sorted.
    pub fn allowed(&self) -> Vec<(&str, &Arc<Guest>)> {
        self.guests
            .targets()
            .filter(|(target, _)| self.policy.allows(target))
            .collect()
    }

    /// Targets the allow-list names explicitly that no guest serves (none
    /// declares them, or several do).
    pub fn unserved(&self) -> Vec<&str> {
        self.policy
            .named()
            .filter(|t| self.guests.serving(t).is_none())
            .collect()
    }

    /// This sandbox, with targets pinned to modules: a pinned target is
    /// served only by the module with that sha256 (hex), now and on reload.
    pub fn with_pins(mut self, pins: BTreeMap<String, String>) -> Sandbox {
        self.pins = pins;
        self
    }

    /// The handler of `target`, if it is allowed and served: the same slot
    /// every time (the one registered with XLA, once registered).
    pub fn handler(&self, target: &str) -> Option<GuestHandler> {
        let mut handlers = self.lock_handlers();
        if let Some(handler) = handlers.get(target) {
            return Some(handler.clone());
        }
        if !self.policy.allows(target) {
            return None;
        }
        let index = self.guests.serving_index(target)?;
        let handler = GuestHandler::new(Arc::clone(&self.pools[index]), target)?;
        handlers.insert(target.to_owned(), handler.clone());
        Some(handler)
    }

    pub(crate) fn lock_handlers(&self) -> MutexGuard<'_, BTreeMap<String, GuestHandler>> {
        // Each update is one insert: a panic cannot leave the map torn.
        self.handlers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers every allowed, served target with `plugin`, guest by
    /// guest.
    ///
    /// Targets allowed only by `--allow-all` never fail the others: a guest
    /// whose targets do not all fit the free handler slots
    /// ([`registry::CAPACITY`]) is refused whole, and a target the plugin
    /// glue refuses (one already registered, e.g. a native LAPACK target)
    /// is skipped; each is logged with its reason. A target the allow-list
    /// names explicitly is registered or its error returned.
    ///
    /// # Errors
    ///
    /// [`Error::DuplicateTarget`] (before registering anything) if a target
    /// the allow-list names explicitly is declared by several guests;
    /// [`Error::Register`] if plugin-glue refuses an explicitly allowed
    /// target (those before it stay registered).
    pub fn register_allowed(&self, plugin: &Plugin) -> Result<Vec<Registered>> {
        self.register_to(&Destination::Plugin(plugin.clone()))
    }

    /// [`Sandbox::register_allowed`], exporting the trampolines instead
    /// ([`Destination::Exported`]): a client registers them itself.
    ///
    /// # Errors
    ///
    /// As for [`Sandbox::register_allowed`].
    pub fn export_allowed(&self) -> Result<Vec<Registered>> {
        self.register_to(&Destination::Exported)
    }

    /// [`Sandbox::register_allowed`] to `destination`.
    ///
    /// # Errors
    ///
    /// As for [`Sandbox::register_allowed`].
    pub fn register_to(&self, destination: &Destination) -> Result<Vec<Registered>> {
        for target in self.policy.named() {
            if let Some(conflict) = self.guests.conflict(target) {
                return Err(conflict.to_error());
            }
        }
        let named: std::collections::HashSet<&str> = self.policy.named().collect();
        let mut by_guest: std::collections::BTreeMap<usize, Vec<&str>> =
            std::collections::BTreeMap::new();
        for (target, _) in self.allowed() {
            if let Some(index) = self.guests.serving_index(target) {
                by_guest.entry(index).or_default().push(target);
            }
        }
        let mut registered = Vec::new();
        for (index, targets) in by_guest {
            let guest = &self.guests.guests()[index];
            let free = registry::CAPACITY.saturating_sub(registry::registered().len());
            let targets: Vec<&str> = if targets.len() > free {
                tracing::warn!(
                    guest = %guest.path().display(),
                    "guest not registered: its {} allowed targets do not fit the {free} free handler slots (of {}); allow fewer of its targets by name",
                    targets.len(),
                    registry::CAPACITY
                );
                // Explicitly allowed ones still get their own error.
                targets.into_iter().filter(|t| named.contains(t)).collect()
            } else {
                targets
            };
            for target in targets {
                let Some(handler) = self.handler(target) else {
                    continue;
                };
                let origin = format!("guest {}", guest.file_name());
                match destination.register(target, Arc::new(handler), origin) {
                    Ok(()) => {}
                    Err(source) if !named.contains(target) => {
                        tracing::warn!(
                            target = %target,
                            guest = %guest.path().display(),
                            "target not registered (allowed by --allow-all): {source}"
                        );
                        continue;
                    }
                    Err(source) => {
                        return Err(Error::Register {
                            target: target.to_owned(),
                            guest: guest.path().to_owned(),
                            source: Box::new(source),
                        });
                    }
                }
                tracing::info!(target = %target, guest = %guest.path().display(), "registered sandboxed target");
                registered.push(Registered {
                    target: target.to_owned(),
                    guest: guest.path().to_owned(),
                });
            }
        }
        registered.sort_by(|a, b| a.target.cmp(&b.target));
        Ok(registered)
    }

    /// Why `target` is not registered, when the sandbox can tell: for the
    /// CLI to add to XLA's "no handler registered" compile error.
    ///
    /// ```text
    /// target `t` is served by guests/out/x.wasm but not allowed: add --allow t
    /// ```
    pub fn hint_for_unregistered(&self, target: &str) -> Option<String> {
        if let Some(guest) = self.guests.serving(target) {
            if self.policy.allows(target) {
                return None;
            }
            return Some(format!(
                "target `{target}` is served by {} but not allowed: add --allow {target}",
                guest.path().display()
            ));
        }
        if let Some(idle) = self.guests.idle_declaring(target) {
            return Some(format!(
                "target `{target}` is served by {} but not allowed: add --allow {target}",
                idle.path.display()
            ));
        }
        if let Some(conflict) = self.guests.conflict(target) {
            return Some(format!("{}: keep only one of them", conflict.to_error()));
        }
        if let Some(rejected) = self
            .guests
            .rejected()
            .iter()
            .find(|r| r.declared.iter().any(|t| t == target))
        {
            return Some(format!(
                "target `{target}` is declared by {}, which was rejected: {}",
                rejected.path.display(),
                rejected.error
            ));
        }
        if self.policy.named().any(|t| t == target) {
            return Some(format!(
                "target `{target}` is allowed, but no guest in {} serves it",
                self.guests.dir().display()
            ));
        }
        None
    }
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("dir", &self.guests.dir())
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// Whether `guest` may serve `target` under `pins` (a pinned target only
/// from the module with that sha256); logs the refusal.
pub fn pin_holds(pins: &BTreeMap<String, String>, target: &str, guest: &Guest) -> bool {
    let Some(pin) = pins.get(target) else {
        return true;
    };
    let got = guest.sha256_hex();
    if got == *pin {
        return true;
    }
    tracing::warn!(
        "`{target}` is pinned to sha256 {}…, but {} has sha256 {}…: not served by it",
        &pin[..pin.len().min(12)],
        guest.path().display(),
        &got[..12]
    );
    false
}
