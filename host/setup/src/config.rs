//! The configuration of a host process that serves a PJRT client: the cyxla
//! PJRT plugin library reads it when the first client is created, and the
//! `cyxla-host ... -- COMMAND` launcher writes it for COMMAND.
//!
//! Every setting is one row of the table below (`settings!`, see
//! [`crate::settings`]): its environment variable, the launcher's flags
//! that stand for it, its key in the TOML file `CYXLA_CONFIG` names, its key
//! in a tenant's policy, the [`Config`] field it sets and its docs. The
//! file applies first, then the variables (which win); where a tenant
//! policy decides (`CYXLA_POLICY`, `/etc/cyxla/policy.toml`), the variables
//! apply under the tenant's settings, and a variable the policy decides may
//! not be set. docs/reference-settings.md is the table for users (a test
//! keeps it equal to [`SETTINGS`]).
//!
//! # Adding a setting
//!
//! A row in the table, the [`Config`] field it sets (here too), and the
//! code that uses the field: two files. A path the process writes
//! something to, say:
//!
//! ```text
//! // host/setup/src/config.rs, in the table:
//!     /// A file the process writes its metrics to
//!     metrics: OnePath => |c| &mut c.metrics,
//!         env METRICS_ENV = "CYXLA_METRICS", file metrics, policy Applies,
//!         flags [Flag::path("metrics", "PATH", "With `-- COMMAND`: write metrics to PATH")],
//!         default "none";
//! // and in `Config`: `pub metrics: Option<PathBuf>,`
//!
//! // host/pjrt/src/state.rs, where the process starts serving:
//!     metrics::start(config.metrics.clone());
//! ```
//!
//! Every problem is an error that names the variable or the file (with line
//! and column) and what was expected: nothing is silently ignored.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub use crate::process::NativeSpec;
use crate::process::{Host, Setup, unregistered_hint};
use crate::settings::{
    Allow, Devices, Elsewhere, Flag, Folders, Interval, LimitSettings, Located, Natives,
    NegatedSwitch, OnePath, OptionalFolder, Paths, Pins, PlatformKind, Switch, check_devices_flag,
    nowhere,
};
use cyxla_sandbox::AllowList;
use cyxla_sandbox::cache::ModuleCache;
use cyxla_sandbox::limits::LimitSetting;
use cyxla_sandbox::toml_error::{line_column, toml_error};

/// The policy file that, where it exists, decides for every process on the
/// machine (`CYXLA_POLICY` may only name it).
pub const SYSTEM_POLICY: &str = "/etc/cyxla/policy.toml";

/// The most devices a configuration may ask for.
pub const MAX_DEVICES: u32 = 256;

settings! {
    /// A TOML configuration file: its keys are this table's file keys;
    /// relative paths in it are relative to its folder
    config: Elsewhere => nowhere, env CONFIG_ENV = "CYXLA_CONFIG", policy Refused,
        flags [Flag::path("config", "FILE",
            "With `-- COMMAND`: a TOML configuration file for the plugin (CYXLA_CONFIG)")],
        default "none";
    /// The operator's tenant policy (where /etc/cyxla/policy.toml exists,
    /// it may only name that)
    policy: Elsewhere => nowhere, env POLICY_ENV = "CYXLA_POLICY", policy Applies,
        flags [Flag::path("policy", "FILE",
            "With `-- COMMAND` or `list`: the operator's tenant policy (CYXLA_POLICY)").global()],
        default "/etc/cyxla/policy.toml if it exists";
    /// The tenant, where the policy does not map the user
    tenant: Elsewhere => nowhere, env TENANT_ENV = "CYXLA_TENANT", policy Applies,
        flags [Flag::text("tenant", "NAME",
            "With `-- COMMAND` or `list`: the tenant, where the policy does not map the user \
             (CYXLA_TENANT)").global()],
        default "the policy's `[users]`/`[groups]`, else its `default_tenant`";
    /// The real XLA PJRT plugin (.so)
    plugin: OnePath => |c| &mut c.setup.plugin,
        env PLUGIN_ENV = "CYXLA_PJRT_PLUGIN", file plugin, policy Applies,
        flags [Flag::path("plugin", "PATH",
            "The PJRT plugin (.so) to load [default: $CYXLA_PJRT_PLUGIN, else the first found in \
             the site-packages of cyxla's Python environment, then of the checkout's .venv: \
             lammps-jax-pjrt-cpu's, then fastatomstruct-xla-cpu's (the wheel's extra `pjrt`)]")
            .global().env_default()],
        default "the first found in the site-packages of cyxla's Python environment, then of the \
            checkout's `.venv`: `lammps-jax-pjrt-cpu`'s, then `fastatomstruct-xla-cpu`'s (the \
            wheel's extra `pjrt`)";
    /// The guests folders, `:`-separated (a file or policy: one or a list);
    /// an earlier folder wins a target
    guests: Folders => |c| &mut c.setup.guests,
        env GUESTS_ENV = "CYXLA_GUESTS", file guests, tenant guests, policy Refused,
        flags [Flag::path("guests", "DIR",
            "Folder of guest .wasm modules [default: $CYXLA_GUESTS, else the bundled guests]")
            .global()],
        default "the bundled guests";
    /// Targets to register: names or globs, `a,b` (`*`: all)
    allow: Allow => |c| &mut c.setup.allow,
        env ALLOW_ENV = "CYXLA_ALLOW", file allow, tenant allow, policy Refused,
        flags [
            Flag::text("allow", "TARGET",
                "Register this target if a guest serves it (repeatable); nothing else is registered")
                .many(",").global().check(check_allow),
            Flag::switch("allow-all", "*", "Register every target the guests serve").global(),
        ],
        default "none";
    /// Guest limits, `call_timeout=2s,memory=64MiB` (a file or policy: a
    /// `[limits]` table)
    limits: LimitSettings => |c| &mut c.setup.limits,
        env LIMITS_ENV = "CYXLA_LIMITS", file limits, tenant limits, policy Refused,
        flags [Flag::text("limit", "NAME=VALUE",
            "Override a guest limit for every guest (repeatable), e.g. memory=64MiB, \
             call_timeout=2s; a guest's x.limits.toml overrides these (docs/reference-limits.md)")
            .many(",").global().check(check_limit)],
        default "docs/reference-limits.md";
    /// Whether the native LAPACK targets are registered (the variable says
    /// the opposite: `1`, no LAPACK; the keys: `lapack = false`)
    lapack: NegatedSwitch => |c| &mut c.setup.lapack,
        env NO_LAPACK_ENV = "CYXLA_NO_LAPACK", file lapack, tenant lapack, policy Refused,
        flags [Flag::switch("no-lapack", "1",
            "Do not register the native LAPACK targets (lapack_*_ffi and friends)").global()],
        default "LAPACK on";
    /// Trusted native handlers, `T=LIB:SYM`, `;`-separated
    native: Natives => |c| &mut c.setup.natives,
        env NATIVE_ENV = "CYXLA_NATIVE", file native, policy Refused,
        flags [Flag::native("native",
            "Register a trusted native XLA FFI handler from a shared library").many(";").global()],
        default "none";
    /// Whether client code may register native handlers
    allow_native: Switch => |c| &mut c.allow_native,
        env ALLOW_NATIVE_ENV = "CYXLA_ALLOW_NATIVE", file allow_native, tenant allow_native,
        policy Refused,
        flags [Flag::switch("deny-native", "0",
            "With `-- COMMAND`: client code may not register native handlers \
             (jax.ffi.register_ffi_target is refused)")],
        default "`1` (yes)";
    /// CPU devices of each client (a tenant's policy wins over the variable)
    devices: Devices => |c| &mut c.devices,
        env DEVICES_ENV = "CYXLA_DEVICES", file devices, tenant devices, policy Applies,
        flags [Flag::text("devices", "N", "With `-- COMMAND`: CPU devices of each PJRT client")
            .check(check_devices_flag)],
        default "the plugin's (4)";
    /// The JAX platform the guests are served on: `cyxla` (the cyxla PJRT
    /// plugin) or `cpu` (JAX's own CPU client; refused where client code
    /// may not register native handlers)
    platform: PlatformKind => |c| &mut c.platform, env PLATFORM_ENV = "CYXLA_PLATFORM",
        policy Applies,
        flags [Flag::text("platform", "PLATFORM",
            "With `-- COMMAND`: the JAX platform the guests are served on: `cyxla` (the cyxla \
             PJRT plugin) or `cpu` (JAX's own CPU client, which has jax.distributed \
             collectives; refused with --deny-native) [default: cyxla]")
            .choices(&["cyxla", "cpu"])],
        default "`cyxla`";
    /// Whether changed guests are reloaded while the process runs
    reload: Switch => |c| &mut c.setup.reload,
        env RELOAD_ENV = "CYXLA_RELOAD", file reload, policy Applies, default "`1`";
    /// The compile cache: `0` turns it off (its folder: `CYXLA_CACHE_DIR`)
    cache: OptionalFolder => |c| &mut c.setup.cache, env CACHE_ENV = "CYXLA_CACHE",
        policy Applies,
        flags [Flag::switch("no-cache", "0",
            "Compile every guest, without the compile cache ($CYXLA_CACHE_DIR, else \
             ~/.cache/cyxla)").global()],
        default "on";
    /// The compile cache's folder (read by the sandbox library)
    cache_dir: Elsewhere => nowhere,
        env CACHE_DIR_ENV = cyxla_sandbox::cache::CACHE_DIR_ENV, policy Applies,
        default "`$XDG_CACHE_HOME/cyxla`, else `~/.cache/cyxla`";
    /// A JSON file of per-target statistics, rewritten every
    /// `CYXLA_STATS_INTERVAL` and at exit
    stats: OnePath => |c| &mut c.stats, env STATS_ENV = "CYXLA_STATS", policy Applies,
        default "none";
    /// How often the statistics file is rewritten: a time such as `500ms`
    /// or `10s`, at least 100ms
    stats_interval: Interval => |c| &mut c.stats_interval,
        env STATS_INTERVAL_ENV = "CYXLA_STATS_INTERVAL", file stats_interval, policy Applies,
        default "`2s`";
    /// A folder where each failed guest call is recorded, for `cyxla-host
    /// replay`
    record: OnePath => |c| &mut c.record,
        env RECORD_ENV = "CYXLA_RECORD", file record, tenant record, policy Refused,
        flags [Flag::path("record", "DIR",
            "With `-- COMMAND`: record each failed guest call (operands, attributes, error) in \
             its own folder in DIR, for `cyxla-host replay` (CYXLA_RECORD)")],
        default "none";
    /// A folder where the process keeps its figures for `cyxla-host
    /// metrics` (a file of its own, rewritten every `CYXLA_STATS_INTERVAL`
    /// and at exit); one call in 64 per thread is timed for the histogram
    metrics: OnePath => |c| &mut c.metrics,
        env METRICS_ENV = "CYXLA_METRICS", file metrics, tenant metrics, policy Refused,
        default "none";
    /// A folder where the process appends its audit lines (JSON: refused
    /// targets, failed calls, reloads) to a file of its own
    audit: OnePath => |c| &mut c.audit,
        env AUDIT_ENV = "CYXLA_AUDIT", file audit, tenant audit, policy Refused,
        default "none";
    /// Target → sha256 of the only module that may serve it (a tenant's
    /// policy only)
    pins: Pins => |c| &mut c.setup.pins, tenant pins, policy Applies, default "none";
    /// The cyxla PJRT plugin library, for the Python package
    /// (`jax_plugins.cyxla`)
    library: Elsewhere => nowhere, env PJRT_LIBRARY_ENV = "CYXLA_PJRT_LIBRARY", policy Applies,
        default "set by the launcher; else the package's own";
    /// What is logged to stderr (`tracing` filter, e.g. `cyxla_sandbox=debug`)
    log: Elsewhere => nowhere, env LOG_ENV = "CYXLA_LOG", policy Applies, default "`warn`";
    /// `1`: a perf map of guest code, for `perf report` (read by the sandbox
    /// library)
    perf_map: Elsewhere => nowhere,
        env PERF_MAP_ENV = cyxla_sandbox::PERF_MAP_ENV, policy Applies, default "off";
}

/// The JAX platform the guests are served on ([`Config::platform`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// The cyxla PJRT plugin (platform `cyxla`).
    #[default]
    Cyxla,
    /// JAX's own CPU client (platform `cpu`).
    Cpu,
}

impl Platform {
    /// Its name, as JAX writes it.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Cyxla => "cyxla",
            Platform::Cpu => "cpu",
        }
    }
}

/// `--allow`'s value: rules as `CYXLA_ALLOW` takes them (`a,b` too).
fn check_allow(text: &str) -> Result<(), String> {
    AllowList::from_rules(text.split(',')).map(drop)
}

fn check_limit(text: &str) -> Result<(), String> {
    text.parse::<LimitSetting>().map(drop)
}

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

/// A host configuration, resolved from the file and the environment, or
/// from the tenant policy. Its fields are set by the table's rows.
#[derive(Clone, Debug)]
pub struct Config {
    /// What the process registers: plugin, natives, guests folders,
    /// allowed targets, pins, limits, LAPACK, reload, compile cache.
    pub setup: Setup,
    /// Whether client code may register native handlers.
    pub allow_native: bool,
    /// CPU devices per client; `None`: the plugin's default.
    pub devices: Option<u32>,
    /// The JAX platform the guests are served on.
    pub platform: Platform,
    /// The tenant, when a policy file decides.
    pub tenant: Option<Tenant>,
    /// Where per-target statistics are written (JSON), if anywhere.
    pub stats: Option<PathBuf>,
    /// How often they are written there.
    pub stats_interval: Duration,
    /// Where failed guest calls are recorded; `None`: nowhere.
    pub record: Option<PathBuf>,
    /// The folder of the metrics' per-process files, if any.
    pub metrics: Option<PathBuf>,
    /// The folder of the audit log's per-process files, if any.
    pub audit: Option<PathBuf>,
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
            platform: Platform::Cyxla,
            tenant: None,
            stats: None,
            stats_interval: Duration::from_secs(2),
            record: None,
            metrics: None,
            audit: None,
        }
    }
}

/// Which tenant a process is, and who decided: what the tenant gets is the
/// [`Config`] [`crate::tenants::Policy::resolve`] returns, which holds this.
#[derive(Clone, Debug)]
pub struct Tenant {
    /// Its name.
    pub name: String,
    /// Why this process is this tenant (e.g. "user `alice` in `[users]`").
    pub selected_by: String,
    /// The policy file that decided.
    pub policy: PathBuf,
}

impl Config {
    /// Applies the TOML configuration file at `path`; relative paths in it
    /// are relative to the file's folder.
    pub(crate) fn apply_config_file(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "cannot read the configuration file {} ({CONFIG_ENV}): {e}",
                path.display()
            )
        })?;
        let file: File = toml::from_str(&text)
            .map_err(|e| format!("configuration file {}", toml_error(path, &text, &e)))?;
        let at = Paths {
            base: path.parent().unwrap_or(Path::new(".")),
            user: None,
        };
        self.apply_file(file, &at)
            .map_err(|(key, e): (&str, Located)| {
                let place = e
                    .span
                    .map(|span| {
                        let (line, column) = line_column(&text, span.start);
                        format!(" at line {line}, column {column}")
                    })
                    .unwrap_or_default();
                format!(
                    "configuration file {}{place}: {key}: {}",
                    path.display(),
                    e.message
                )
            })
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
    fn the_table_spells_every_setting_once() {
        let mut seen = std::collections::BTreeSet::new();
        for s in SETTINGS {
            let flags = s.flags.iter().map(|f| format!("--{}", f.long));
            for spelling in [Some(format!("name {}", s.name)), s.env.map(str::to_owned)]
                .into_iter()
                .flatten()
                .chain(flags)
            {
                assert!(seen.insert(spelling.clone()), "{spelling} twice");
            }
            // Every key is one the file and the policy read.
            for (key, parse) in [
                (
                    s.file,
                    (|t| toml::from_str::<File>(t).map(drop)) as fn(&str) -> _,
                ),
                (s.tenant, |t| toml::from_str::<TenantSettings>(t).map(drop)),
            ] {
                if let Some(key) = key {
                    let e = parse(&format!("{key} = []")).err().map(|e| e.to_string());
                    assert!(!e.is_some_and(|e| e.contains("unknown field")), "{key}");
                }
            }
        }
        assert!(
            toml::from_str::<File>("pins = {}").is_err(),
            "pins: a policy key only"
        );
    }

    #[test]
    fn under_a_policy_only_its_own_settings_are_refused() {
        let refused: Vec<&str> = SETTINGS
            .iter()
            .filter(|s| s.beside_policy == crate::settings::Beside::Refused)
            .filter_map(|s| s.env)
            .collect();
        for var in [CONFIG_ENV, GUESTS_ENV, ALLOW_ENV, LIMITS_ENV, NO_LAPACK_ENV] {
            assert!(refused.contains(&var), "{var}");
        }
        for var in [DEVICES_ENV, PLUGIN_ENV, CACHE_ENV, RELOAD_ENV, STATS_ENV] {
            assert!(!refused.contains(&var), "{var}");
        }
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
            (vec![(STATS_INTERVAL_ENV, "fast")], STATS_INTERVAL_ENV),
            (
                vec![(STATS_INTERVAL_ENV, "50ms")],
                "shorter than the shortest interval, 100ms",
            ),
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
    fn the_statistics_interval_comes_from_the_file_or_the_variable() {
        use std::time::Duration;
        assert_eq!(load(&[]).unwrap().stats_interval, Duration::from_secs(2));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cyxla.toml");
        std::fs::write(&path, "stats_interval = \"1min\"\n").unwrap();
        let file = path.to_str().unwrap();
        let config = load(&[(CONFIG_ENV, file)]).unwrap();
        assert_eq!(config.stats_interval, Duration::from_secs(60));
        let config = load(&[(CONFIG_ENV, file), (STATS_INTERVAL_ENV, "250ms")]).unwrap();
        assert_eq!(config.stats_interval, Duration::from_millis(250));
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
            ("\nstats_interval = \"2\"\n", "line 2, column 18"),
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
