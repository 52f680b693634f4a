//! `cyxla-host [HOST OPTIONS] -- COMMAND [ARGS]...`: runs COMMAND with the
//! cyxla PJRT plugin configured for it.
//!
//! The options become the environment variables of [`crate::config`], which
//! the plugin library reads in COMMAND's process; `CYXLA_PJRT_LIBRARY` names
//! the library (beside this executable) for the Python package
//! `jax_plugins.cyxla`, and `JAX_PLATFORMS=cyxla` is set unless the
//! environment already sets it. With `--platform cpu`, `CYXLA_PLATFORM=cpu`
//! tells the package to serve the guests on JAX's own `cpu` platform
//! instead, and `JAX_PLATFORMS=cpu` is set (unless set). The configuration is checked here first
//! (plugin, guests, policy, limits), so a mistake is reported before COMMAND
//! starts. COMMAND then replaces this process (`exec`): its exit code and
//! the signals sent to it are its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use crate::config::GUESTS_ENV;
use crate::config::RECORD_ENV;
use crate::config::{
    ALLOW_ENV, ALLOW_NATIVE_ENV, CONFIG_ENV, Config, DEVICES_ENV, LIBRARY_ENV, LIMITS_ENV,
    MAX_DEVICES, NATIVE_ENV, NO_LAPACK_ENV, PLATFORM_ENV, cpu_refusal,
};
use crate::process::{self, NativeSpec, PLUGIN_ENV, Setup};
use crate::tenants::{POLICY_ENV, TENANT_ENV};
use cyxla_sandbox::cache::ModuleCache;
use cyxla_sandbox::limits::LimitSetting;
use cyxla_sandbox::{AllowList, Limits};

/// File name of the cyxla PJRT plugin library, built beside `cyxla-host`.
pub const LIBRARY_FILE: &str = "libcyxla_pjrt.so";

/// The JAX platform name of the plugin.
pub const PLATFORM: &str = "cyxla";

/// JAX's own CPU platform, where the guests can be served instead.
pub const CPU_PLATFORM: &str = "cpu";

/// Options that only the launcher takes.
#[derive(Args, Debug, Default)]
pub struct LaunchArgs {
    /// With `-- COMMAND`: a TOML configuration file for the plugin (CYXLA_CONFIG)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// With `-- COMMAND` or `list`: the operator's tenant policy (CYXLA_POLICY)
    #[arg(long, value_name = "FILE", global = true)]
    pub policy: Option<PathBuf>,
    /// With `-- COMMAND` or `list`: the tenant, where the policy does not map the user (CYXLA_TENANT)
    #[arg(long, value_name = "NAME", global = true)]
    pub tenant: Option<String>,
    /// With `-- COMMAND`: CPU devices of each PJRT client
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_DEVICES)))]
    pub devices: Option<u32>,
    /// With `-- COMMAND`: client code may not register native handlers
    /// (jax.ffi.register_ffi_target is refused)
    #[arg(long)]
    pub deny_native: bool,
    /// With `-- COMMAND`: the JAX platform the guests are served on: `cyxla`
    /// (the cyxla PJRT plugin) or `cpu` (JAX's own CPU client, which has
    /// jax.distributed collectives; refused with --deny-native)
    #[arg(long, value_name = "PLATFORM", default_value = PLATFORM, value_parser = [PLATFORM, CPU_PLATFORM])]
    pub platform: String,
    /// With `-- COMMAND`: record each failed guest call (operands, attributes,
    /// error) in its own folder in DIR, for `cyxla-host replay` (CYXLA_RECORD)
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
}

/// Options that set up the host, shared by every subcommand.
#[derive(Args, Debug, Default)]
pub struct HostArgs {
    /// The PJRT plugin (.so) to load [default: the one scripts/setup.sh installed]
    #[arg(long, global = true, env = process::PLUGIN_ENV, value_name = "PATH")]
    pub plugin: Option<PathBuf>,
    /// Register a trusted native XLA FFI handler from a shared library
    #[arg(long = "native", global = true, value_name = "TARGET=LIBRARY:SYMBOL")]
    pub natives: Vec<NativeSpec>,
    /// Folder of guest .wasm modules [default: $CYXLA_GUESTS, else the bundled guests]
    #[arg(long, global = true, value_name = "DIR")]
    pub guests: Option<PathBuf>,
    /// Register this target if a guest serves it (repeatable); nothing else is registered
    #[arg(long = "allow", global = true, value_name = "TARGET")]
    pub allow: Vec<String>,
    /// Register every target the guests serve
    #[arg(long, global = true, conflicts_with = "allow")]
    pub allow_all: bool,
    /// Do not register the native LAPACK targets (lapack_*_ffi and friends)
    #[arg(long, global = true)]
    pub no_lapack: bool,
    /// Override a guest limit for every guest (repeatable), e.g. memory=64MiB,
    /// call_timeout=2s; a guest's x.limits.toml overrides these (README, "Limits")
    #[arg(long = "limit", global = true, value_name = "NAME=VALUE")]
    pub limits: Vec<LimitSetting>,
    /// Compile every guest, without the compile cache ($CYXLA_CACHE_DIR,
    /// else ~/.cache/cyxla)
    #[arg(long, global = true)]
    pub no_cache: bool,
}

impl HostArgs {
    /// What these options set up (`cyxla-host run`, `list`, `check`).
    pub fn setup(&self) -> Setup {
        Setup {
            plugin: self.plugin.clone(),
            natives: self.natives.clone(),
            guests: self.guests.clone().into_iter().collect(),
            allow: self.allow_list(),
            pins: Default::default(),
            limits: self.limits(),
            lapack: !self.no_lapack,
            strict: false,
            reload: false,
            cache: if self.no_cache {
                None
            } else {
                ModuleCache::default_dir()
            },
        }
    }

    /// `--allow`, or `--allow-all`.
    pub fn allow_list(&self) -> AllowList {
        if self.allow_all {
            AllowList::all()
        } else {
            AllowList::targets(self.allow.iter().cloned())
        }
    }

    /// The limits `--limit` sets.
    pub fn limits(&self) -> Limits {
        let mut limits = Limits::default();
        for setting in &self.limits {
            // Each setting was checked when the flag was parsed; settings
            // only ever narrow or widen independent fields.
            if let Err(e) = limits.set(&setting.name, &setting.value) {
                tracing::warn!("{e}");
            }
        }
        limits
    }
}

/// Checks the configuration, then replaces this process with `command`.
/// Returns only on failure.
///
/// # Errors
///
/// A bad configuration (as the plugin would report it), the plugin library
/// missing, or `command` that cannot be run.
pub fn launch(host: &HostArgs, args: &LaunchArgs, command: &[String]) -> Result<()> {
    let (program, rest) = command
        .split_first()
        .ok_or_else(|| anyhow!("no command after `--`"))?;
    let (vars, config) = configuration(host, args)?;
    let on_cpu = args.platform == CPU_PLATFORM;
    // On `cpu` the guests run on jaxlib's own CPU client: no PJRT plugin.
    let plugin = if on_cpu {
        None
    } else {
        Some(process::find_plugin(config.setup.plugin.as_deref())?)
    };
    for spec in &config.setup.natives {
        if !spec.library.is_file() {
            bail!(
                "--native {}: library {} does not exist",
                spec.target,
                spec.library.display()
            );
        }
    }
    if on_cpu && !config.allow_native {
        bail!("{}", cpu_refusal());
    }
    config.setup.sandboxes()?;

    let mut cmd = std::process::Command::new(program);
    cmd.args(rest).envs(&vars);
    if let Some(plugin) = &plugin {
        cmd.env(PLUGIN_ENV, absolute(plugin)?);
    }
    cmd.env(LIBRARY_ENV, library()?);
    if on_cpu {
        cmd.env(PLATFORM_ENV, CPU_PLATFORM);
    }
    if std::env::var_os("JAX_PLATFORMS").is_none() {
        cmd.env(
            "JAX_PLATFORMS",
            if on_cpu { CPU_PLATFORM } else { PLATFORM },
        );
    }
    tracing::debug!(?vars, program, "launching");
    exec(cmd, program)
}

#[cfg(unix)]
fn exec(mut cmd: std::process::Command, program: &str) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let error = cmd.exec();
    Err(anyhow!("cannot run `{program}`: {error}"))
}

#[cfg(not(unix))]
fn exec(mut cmd: std::process::Command, program: &str) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot run `{program}`"))?;
    std::process::exit(status.code().unwrap_or(1));
}

/// The environment variables the options given stand for, and the
/// configuration the plugin will read in COMMAND's process (this process's
/// environment with them on top).
///
/// # Errors
///
/// A bad option or configuration.
pub fn configuration(
    host: &HostArgs,
    args: &LaunchArgs,
) -> Result<(BTreeMap<&'static str, String>, Config)> {
    let vars = environment(host, args)?;
    let lookup = |name: &str| {
        vars.get(name)
            .cloned()
            .or_else(|| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    };
    let config = Config::from_lookup(&lookup).map_err(|e| anyhow!("bad configuration: {e}"))?;
    Ok((vars, config))
}

/// The environment variables the options given stand for.
fn environment(host: &HostArgs, args: &LaunchArgs) -> Result<BTreeMap<&'static str, String>> {
    let mut vars = BTreeMap::new();
    let text = |p: &Path| -> Result<String> { Ok(absolute(p)?.to_string_lossy().into_owned()) };
    if let Some(config) = &args.config {
        vars.insert(CONFIG_ENV, text(config)?);
    }
    if let Some(policy) = &args.policy {
        vars.insert(POLICY_ENV, text(policy)?);
    }
    if let Some(tenant) = &args.tenant {
        vars.insert(TENANT_ENV, tenant.clone());
    }
    if let Some(plugin) = &host.plugin {
        vars.insert(PLUGIN_ENV, text(plugin)?);
    }
    if let Some(guests) = &host.guests {
        vars.insert(GUESTS_ENV, text(guests)?);
    }
    if host.allow_all {
        vars.insert(ALLOW_ENV, "*".to_owned());
    } else if !host.allow.is_empty() {
        vars.insert(ALLOW_ENV, host.allow.join(","));
    }
    if !host.limits.is_empty() {
        let limits: Vec<String> = host
            .limits
            .iter()
            .map(|l| format!("{}={}", l.name, l.value))
            .collect();
        vars.insert(LIMITS_ENV, limits.join(","));
    }
    if host.no_lapack {
        vars.insert(NO_LAPACK_ENV, "1".to_owned());
    }
    if args.deny_native {
        vars.insert(ALLOW_NATIVE_ENV, "0".to_owned());
    }
    if let Some(devices) = args.devices {
        vars.insert(DEVICES_ENV, devices.to_string());
    }
    if let Some(record) = &args.record {
        vars.insert(RECORD_ENV, text(record)?);
    }
    if !host.natives.is_empty() {
        let specs: Vec<String> = host
            .natives
            .iter()
            .map(|n| Ok(format!("{}={}:{}", n.target, text(&n.library)?, n.symbol)))
            .collect::<Result<_>>()?;
        vars.insert(NATIVE_ENV, specs.join(";"));
    }
    Ok(vars)
}

/// The plugin library beside the running executable (a build's
/// `target/<profile>/`), else the one in the Python package installed with
/// it (the wheel's `jax_plugins/cyxla`).
///
/// # Errors
///
/// It is not there; the message says how to build it.
pub fn library() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the cyxla-host executable")?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let path = dir.join(LIBRARY_FILE);
    if !path.is_file()
        && let Some(installed) = process::installed_library()
    {
        return Ok(installed);
    }
    if !path.is_file() {
        bail!(
            "the cyxla PJRT plugin library {} is missing: build it with `cargo build -p cyxla-pjrt` \
             (the same profile as this cyxla-host)",
            path.display()
        );
    }
    Ok(path)
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("bad path {}", path.display()))
}
