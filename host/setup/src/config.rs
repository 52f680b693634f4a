//! The configuration of a host process that serves a PJRT client: the cyxla
//! PJRT plugin library reads it when the first client is created, and the
//! `cyxla-host ... -- COMMAND` launcher writes it for COMMAND.
//!
//! It comes from an optional TOML file named by `CYXLA_CONFIG` and from
//! environment variables, which win over the file:
//!
//! | variable | file key | meaning | default |
//! |---|---|---|---|
//! | `CYXLA_PJRT_PLUGIN` | `plugin` | the real XLA PJRT plugin (.so) | the one `scripts/setup.sh` installs |
//! | `CYXLA_GUESTS` | `guests` | the guests folder | the bundled guests |
//! | `CYXLA_ALLOW` | `allow` | targets to register (`a,b`; `*` for all) | none |
//! | `CYXLA_LIMITS` | `[limits]` | guest limits (`call_timeout=2s,memory=64MiB`) | README, "Limits" |
//! | `CYXLA_NO_LAPACK` | `lapack` | `1`: no native LAPACK targets (file: `lapack = false`) | LAPACK on |
//! | `CYXLA_ALLOW_NATIVE` | `allow_native` | may client code register native handlers | `1` (yes) |
//! | `CYXLA_DEVICES` | `devices` | CPU devices of each client | the plugin's (4) |
//! | `CYXLA_NATIVE` | `native` | trusted natives, `T=LIB:SYM` (`;`-separated) | none |
//! | `CYXLA_RELOAD` | `reload` | `0`: changed guests are not reloaded | `1` |
//! | `CYXLA_STATS` | | a JSON file of per-target statistics, kept current | none |
//! | `CYXLA_CACHE` | | `0`: no compile cache (folder: `CYXLA_CACHE_DIR`) | on |
//! | `CYXLA_RECORD` | `record` | a folder where failed guest calls are recorded, for `cyxla-host replay` | none |
//!
//! Every problem is an error that names the variable or the file (with line
//! and column) and what was expected: nothing is silently ignored.

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use crate::process::{CACHE_ENV, GUESTS_ENV, NativeSpec, PLUGIN_ENV};
use crate::process::{Host, Setup, unregistered_hint};
use cyxla_sandbox::AllowList;
use cyxla_sandbox::cache::ModuleCache;
use cyxla_sandbox::limits::LimitOverrides;
use cyxla_sandbox::toml_error::toml_error;

/// The policy file that, where it exists, decides for every process on the
/// machine (`CYXLA_POLICY` may only name it).
pub const SYSTEM_POLICY: &str = "/etc/cyxla/policy.toml";

/// The most devices a configuration may ask for.
pub const MAX_DEVICES: u32 = 256;

/// Names the policy file.
pub const POLICY_ENV: &str = "CYXLA_POLICY";
/// Names the tenant (when the policy does not map the user).
pub const TENANT_ENV: &str = "CYXLA_TENANT";

/// Names a TOML configuration file.
pub const CONFIG_ENV: &str = "CYXLA_CONFIG";
/// The targets to allow, comma-separated, or `*` for all.
pub const ALLOW_ENV: &str = "CYXLA_ALLOW";
/// Guest limits, comma-separated `NAME=VALUE`.
pub const LIMITS_ENV: &str = "CYXLA_LIMITS";
/// `1` turns the native LAPACK targets off.
pub const NO_LAPACK_ENV: &str = "CYXLA_NO_LAPACK";
/// `0` forbids native handler registrations from client code.
pub const ALLOW_NATIVE_ENV: &str = "CYXLA_ALLOW_NATIVE";
/// The number of CPU devices each client gets.
pub const DEVICES_ENV: &str = "CYXLA_DEVICES";
/// Trusted native handlers, `TARGET=LIBRARY:SYMBOL` separated by `;`.
pub const NATIVE_ENV: &str = "CYXLA_NATIVE";
/// `0` turns hot reload of changed guests off.
pub const RELOAD_ENV: &str = "CYXLA_RELOAD";
/// A JSON file the plugin keeps per-target statistics in.
pub const STATS_ENV: &str = "CYXLA_STATS";
/// A folder where failed guest calls are recorded (`cyxla-host replay`).
pub const RECORD_ENV: &str = "CYXLA_RECORD";
/// The cyxla PJRT plugin library, for the Python package (`jax_plugins.cyxla`).
pub const LIBRARY_ENV: &str = "CYXLA_PJRT_LIBRARY";
/// `cpu`: the Python package serves the guests on JAX's own `cpu` platform
/// instead of registering platform `cyxla` (`cyxla-host --platform cpu`).
pub const PLATFORM_ENV: &str = "CYXLA_PLATFORM";

/// Why the guests are not served on JAX's `cpu` platform where the
/// configuration forbids native code from client code: on `cpu`, client
/// code registers native handlers with jaxlib directly, out of our reach.
pub fn cpu_refusal() -> String {
    format!(
        "serving guests on JAX's `cpu` platform is refused: this host's policy forbids native \
         code from client code ({ALLOW_NATIVE_ENV}=0, `cyxla-host --deny-native`, or \
         allow_native = false in {CONFIG_ENV} or the tenant policy), which cannot hold on `cpu`, \
         where client code registers native handlers with jaxlib directly; use platform `cyxla` \
         (`cyxla-host --platform cyxla`, the default), where the policy applies"
    )
}

/// Every variable this module reads, for the launcher and for messages.
pub const VARIABLES: [&str; 15] = [
    CACHE_ENV,
    RECORD_ENV,
    STATS_ENV,
    RELOAD_ENV,
    POLICY_ENV,
    TENANT_ENV,
    CONFIG_ENV,
    PLUGIN_ENV,
    GUESTS_ENV,
    ALLOW_ENV,
    LIMITS_ENV,
    NO_LAPACK_ENV,
    ALLOW_NATIVE_ENV,
    DEVICES_ENV,
    NATIVE_ENV,
];

/// A host configuration, resolved from the file and the environment, or
/// from the tenant policy.
#[derive(Clone, Debug)]
pub struct Config {
    /// What the process registers: plugin, natives, guests folders,
    /// allowed targets, pins, limits, LAPACK, reload, compile cache.
    pub setup: Setup,
    /// Whether client code may register native handlers.
    pub allow_native: bool,
    /// CPU devices per client; `None`: the plugin's default.
    pub devices: Option<u32>,
    /// The tenant, when a policy file decides.
    pub tenant: Option<Tenant>,
    /// Where per-target statistics are written (JSON), if anywhere.
    pub stats: Option<PathBuf>,
    /// Where failed guest calls are recorded; `None`: nowhere.
    pub record: Option<PathBuf>,
}

impl Default for Config {
    /// Nothing allowed, default limits, LAPACK on, reload on, client natives
    /// allowed, the installed plugin and the bundled guests; strict (a
    /// named target that no guest serves is an error).
    fn default() -> Config {
        Config {
            setup: Setup {
                allow: AllowList::none(),
                lapack: true,
                strict: true,
                reload: true,
                cache: ModuleCache::default_dir(),
                ..Setup::default()
            },
            allow_native: true,
            devices: None,
            tenant: None,
            stats: None,
            record: None,
        }
    }
}

/// Which tenant a process is, and who decided: what the tenant gets is the
/// [`Config`] [`Policy::resolve`] returns, which holds this.
#[derive(Clone, Debug)]
pub struct Tenant {
    /// Its name.
    pub name: String,
    /// Why this process is this tenant (e.g. "user `alice` in `[users]`").
    pub selected_by: String,
    /// The policy file that decided.
    pub policy: PathBuf,
}

/// The configuration file: every key optional, unknown keys rejected.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    plugin: Option<PathBuf>,
    guests: Option<OneOrMany>,
    allow: Option<Vec<String>>,
    limits: Option<LimitOverrides>,
    lapack: Option<bool>,
    allow_native: Option<bool>,
    devices: Option<u32>,
    native: Option<Vec<String>>,
    reload: Option<bool>,
    record: Option<PathBuf>,
}

/// A path, or a list of them.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(PathBuf),
    Many(Vec<PathBuf>),
}

/// The settings a policy file decides, which may not be set beside it.
pub(crate) const DECIDED_BY_POLICY: [&str; 8] = [
    CONFIG_ENV,
    RECORD_ENV,
    GUESTS_ENV,
    ALLOW_ENV,
    LIMITS_ENV,
    NO_LAPACK_ENV,
    ALLOW_NATIVE_ENV,
    NATIVE_ENV,
];

impl Config {
    /// Applies the TOML file at `path`; relative paths in it are relative to
    /// the file's folder.
    pub(crate) fn apply_file(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "cannot read the configuration file {} ({CONFIG_ENV}): {e}",
                path.display()
            )
        })?;
        let file: File = toml::from_str(&text)
            .map_err(|e| format!("configuration file {}", toml_error(path, &text, &e)))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let relative = |p: PathBuf| if p.is_relative() { base.join(p) } else { p };
        let in_file = |what: String| format!("configuration file {}: {what}", path.display());
        if let Some(p) = file.plugin {
            self.setup.plugin = Some(relative(p));
        }
        match file.guests {
            Some(OneOrMany::One(g)) => self.setup.guests = vec![relative(g)],
            Some(OneOrMany::Many(g)) => self.setup.guests = g.into_iter().map(relative).collect(),
            None => {}
        }
        if let Some(allow) = file.allow {
            self.setup.allow = parse_allow(allow.iter().map(String::as_str)).map_err(in_file)?;
        }
        if let Some(limits) = &file.limits {
            self.setup.limits.apply(limits).map_err(in_file)?;
        }
        if let Some(lapack) = file.lapack {
            self.setup.lapack = lapack;
        }
        if let Some(reload) = file.reload {
            self.setup.reload = reload;
        }
        if let Some(record) = file.record {
            self.record = Some(base.join(record));
        }
        if let Some(allow_native) = file.allow_native {
            self.allow_native = allow_native;
        }
        if let Some(devices) = file.devices {
            self.devices = Some(check_devices(devices).map_err(in_file)?);
        }
        if let Some(native) = file.native {
            self.setup.natives = native
                .iter()
                .map(|s| {
                    s.parse::<NativeSpec>()
                        .map_err(|e| in_file(format!("native: {e}")))
                })
                .collect::<Result<_, _>>()?;
        }
        Ok(())
    }

    pub(crate) fn apply_env(
        &mut self,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), String> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let bad = |name: &str, value: &str, what: &str| format!("{name}={value}: {what}");
        if let Some(p) = var(PLUGIN_ENV) {
            self.setup.plugin = Some(PathBuf::from(p));
        }
        if let Some(g) = var(GUESTS_ENV) {
            self.setup.guests = std::env::split_paths(&g).collect();
        }
        if let Some(allow) = var(ALLOW_ENV) {
            self.setup.allow =
                parse_allow(allow.split(',')).map_err(|e| bad(ALLOW_ENV, &allow, &e))?;
        }
        if let Some(limits) = var(LIMITS_ENV) {
            for setting in limits.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let (name, value) = setting.split_once('=').ok_or_else(|| {
                    bad(
                        LIMITS_ENV,
                        &limits,
                        &format!("`{setting}` is not NAME=VALUE (e.g. call_timeout=2s)"),
                    )
                })?;
                self.setup
                    .limits
                    .set(name.trim(), value.trim())
                    .map_err(|e| format!("{LIMITS_ENV}: {}", e.message))?;
            }
        }
        if let Some(v) = var(NO_LAPACK_ENV) {
            self.setup.lapack = !parse_bool(&v).map_err(|e| bad(NO_LAPACK_ENV, &v, &e))?;
        }
        if let Some(v) = var(CACHE_ENV)
            && !parse_bool(&v).map_err(|e| bad(CACHE_ENV, &v, &e))?
        {
            self.setup.cache = None;
        }
        if let Some(v) = var(STATS_ENV) {
            self.stats = Some(PathBuf::from(v));
        }
        if let Some(v) = var(RECORD_ENV) {
            self.record = Some(PathBuf::from(v));
        }
        if let Some(v) = var(RELOAD_ENV) {
            self.setup.reload = parse_bool(&v).map_err(|e| bad(RELOAD_ENV, &v, &e))?;
        }
        if let Some(v) = var(ALLOW_NATIVE_ENV) {
            self.allow_native = parse_bool(&v).map_err(|e| bad(ALLOW_NATIVE_ENV, &v, &e))?;
        }
        if let Some(v) = var(DEVICES_ENV) {
            self.devices = Some(devices_from_env(&v)?);
        }
        if let Some(v) = var(NATIVE_ENV) {
            self.setup.natives = v
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.parse::<NativeSpec>()
                        .map_err(|e| format!("{NATIVE_ENV}: {e}"))
                })
                .collect::<Result<_, _>>()?;
        }
        Ok(())
    }
}

/// An allow-list from rules: names, glob patterns, or `*` alone for all.
fn parse_allow<'a>(names: impl Iterator<Item = &'a str>) -> Result<AllowList, String> {
    AllowList::from_rules(names)
}

fn parse_bool(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err("expected 1 or 0 (true/false, yes/no, on/off)".to_owned()),
    }
}

/// `CYXLA_DEVICES`'s value, checked.
pub(crate) fn devices_from_env(v: &str) -> Result<u32, String> {
    let n = v
        .trim()
        .parse::<u32>()
        .map_err(|_| format!("{DEVICES_ENV}={v}: expected a number of devices, e.g. 2"))?;
    check_devices(n).map_err(|e| format!("{DEVICES_ENV}={v}: {e}"))
}

fn check_devices(n: u32) -> Result<u32, String> {
    if (1..=MAX_DEVICES).contains(&n) {
        Ok(n)
    } else {
        Err(format!("devices must be 1 to {MAX_DEVICES}, got {n}"))
    }
}

/// The value of `name` in `environ` (`NAME=VALUE` entries separated by NUL,
/// as in `/proc/self/environ`).
pub(crate) fn environ_var(environ: &[u8], name: &str) -> Option<String> {
    environ.split(|b| *b == 0).find_map(|entry| {
        let rest = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        Some(String::from_utf8_lossy(rest).into_owned())
    })
}

/// `Ok` unless `name` was set (non-empty) when the process started and is
/// now something else or unset.
pub(crate) fn kept_from_start(
    name: &str,
    started: Option<&str>,
    now: Option<&str>,
) -> Result<(), String> {
    match started.filter(|s| !s.trim().is_empty()) {
        Some(s) if now != Some(s) => Err(format!(
            "{name} was `{s}` when this process started and is now {}: the policy and tenant a \
             process starts with hold for its lifetime (start a new process under `cyxla-host \
             --policy FILE`)",
            now.map_or_else(|| "unset".to_owned(), |n| format!("`{n}`"))
        )),
        _ => Ok(()),
    }
}

impl Host {
    /// What to add to XLA's "No FFI handler registered for `target`" for a
    /// client of the plugin configured by `config`. A tenant's user cannot
    /// `--allow` anything: for a tenant it is the policy's decision, with the
    /// module that serves the target if one of the tenant's folders has it.
    pub fn hint_for_client(&self, config: &Config, target: &str) -> Option<String> {
        if !config.setup.lapack && cyxla_lapack::target_names().contains(&target) {
            let by = match &config.tenant {
                Some(t) => format!(
                    "for tenant `{}` by the policy {}",
                    t.name,
                    t.policy.display()
                ),
                None => "(--no-lapack, CYXLA_NO_LAPACK=1)".to_owned(),
            };
            return Some(format!(
                "hint: `{target}` is a native LAPACK target, and LAPACK is turned off {by}"
            ));
        }
        let Some(tenant) = &config.tenant else {
            return Some(unregistered_hint(
                target,
                self.hint_for_unregistered(target),
            ));
        };
        if config.setup.allow.allows(target) {
            return self
                .hint_for_unregistered(target)
                .map(|h| format!("hint: {h}"));
        }
        let served = self
            .sandboxes
            .iter()
            .find_map(|s| {
                let guests = s.guests();
                (guests.serving(target).map(|g| g.path().to_owned()))
                    .or_else(|| guests.idle_declaring(target).map(|i| i.path.clone()))
            })
            .map(|path| format!("served by {}, but ", path.display()))
            .unwrap_or_default();
        Some(format!(
            "hint: target `{target}` is {served}not allowed for tenant `{}` ({}) by the policy {} \
             (allowed: {}); the policy's operator decides what each tenant may call",
            tenant.name,
            tenant.selected_by,
            tenant.policy.display(),
            config.setup.allow
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn load(vars: &[(&str, &str)]) -> Result<Config, String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Config::from_lookup(&|name| map.get(name).cloned())
    }

    #[test]
    fn the_policy_a_process_started_with_holds() {
        let environ = b"HOME=/h\0CYXLA_POLICY=/etc/p.toml\0CYXLA_POLICY_X=1\0";
        assert_eq!(
            environ_var(environ, POLICY_ENV).as_deref(),
            Some("/etc/p.toml")
        );
        assert_eq!(environ_var(environ, TENANT_ENV), None);
        let p = Some("/etc/p.toml");
        assert!(kept_from_start(POLICY_ENV, p, p).is_ok());
        assert!(kept_from_start(POLICY_ENV, None, Some("/other.toml")).is_ok());
        assert!(kept_from_start(POLICY_ENV, Some(""), None).is_ok());
        let e = kept_from_start(POLICY_ENV, p, None).unwrap_err();
        assert!(
            e.contains("CYXLA_POLICY was `/etc/p.toml`") && e.contains("now unset"),
            "{e}"
        );
        let e = kept_from_start(TENANT_ENV, Some("student"), Some("research")).unwrap_err();
        assert!(e.contains("now `research`"), "{e}");
    }

    #[test]
    fn defaults_deny_every_target_and_keep_lapack() {
        let config = load(&[]).unwrap();
        assert!(!config.setup.allow.allows("rms_norm"));
        assert!(config.setup.lapack && config.allow_native);
        assert_eq!(config.devices, None);
    }

    #[test]
    fn environment_settings_are_read() {
        let config = load(&[
            (ALLOW_ENV, "rms_norm, scale_any"),
            (LIMITS_ENV, "call_timeout=2s,memory=64MiB"),
            (NO_LAPACK_ENV, "1"),
            (ALLOW_NATIVE_ENV, "0"),
            (DEVICES_ENV, "2"),
            (NATIVE_ENV, "t=lib.so:sym; u=./x.so:y"),
        ])
        .unwrap();
        assert!(config.setup.allow.allows("scale_any") && !config.setup.allow.allows("trap"));
        assert_eq!(
            config.setup.limits.call_timeout,
            std::time::Duration::from_secs(2)
        );
        assert_eq!(config.setup.limits.memory, 64 << 20);
        assert!(!config.setup.lapack && !config.allow_native);
        assert_eq!(config.devices, Some(2));
        assert_eq!(config.setup.natives.len(), 2);
        assert!(load(&[(ALLOW_ENV, "*")]).unwrap().setup.allow.allows_all());
    }

    #[test]
    fn bad_values_name_the_variable() {
        for (vars, want) in [
            (vec![(LIMITS_ENV, "speed=3")], LIMITS_ENV),
            (vec![(LIMITS_ENV, "memory")], "not NAME=VALUE"),
            (vec![(DEVICES_ENV, "0")], "devices must be 1 to"),
            (vec![(DEVICES_ENV, "two")], DEVICES_ENV),
            (vec![(ALLOW_NATIVE_ENV, "maybe")], ALLOW_NATIVE_ENV),
            (vec![(ALLOW_ENV, "*,rms_norm")], "cannot be combined"),
            (vec![(ALLOW_ENV, "a b")], "is not a target name"),
            (vec![(NATIVE_ENV, "nonsense")], NATIVE_ENV),
            (vec![(CONFIG_ENV, "/nonexistent/cyxla.toml")], "cannot read"),
        ] {
            let err = load(&vars).unwrap_err();
            assert!(err.contains(want), "{vars:?}: {err}");
        }
    }

    #[test]
    fn the_file_is_read_and_the_environment_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cyxla.toml");
        std::fs::write(
            &path,
            "guests = \"kernels\"\nallow = [\"rms_norm\"]\nlapack = false\ndevices = 3\n\
             [limits]\ncall_timeout = \"3s\"\n",
        )
        .unwrap();
        let file = path.to_str().unwrap();
        let config = load(&[(CONFIG_ENV, file)]).unwrap();
        assert_eq!(config.setup.guests, [dir.path().join("kernels")]);
        assert!(config.setup.allow.allows("rms_norm") && !config.setup.lapack);
        assert_eq!(config.devices, Some(3));
        assert_eq!(
            config.setup.limits.call_timeout,
            std::time::Duration::from_secs(3)
        );
        let config = load(&[(CONFIG_ENV, file), (DEVICES_ENV, "1"), (ALLOW_ENV, "trap")]).unwrap();
        assert_eq!(config.devices, Some(1));
        assert!(config.setup.allow.allows("trap") && !config.setup.allow.allows("rms_norm"));
    }

    #[test]
    fn file_errors_give_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cyxla.toml");
        for (text, want) in [
            ("allow = [\"a\"]\ncolour = 1\n", "line 2, column 1"),
            ("devices = \"x\"\n", "line 1"),
            ("[limits]\nspeed = \"1s\"\n", "line 2"),
            ("allow = [\n", "line"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = load(&[(CONFIG_ENV, path.to_str().unwrap())]).unwrap_err();
            assert!(
                err.contains(want) && err.contains("cyxla.toml"),
                "{text:?}: {err}"
            );
        }
    }
}
