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
use crate::setup::{self, NativeSpec, PLUGIN_ENV, Setup};
use crate::tenants::{POLICY_ENV, TENANT_ENV};

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

/// The host options as the launcher needs them.
#[derive(Clone, Debug, Default)]
pub struct HostOptions {
    /// `--plugin`.
    pub plugin: Option<PathBuf>,
    /// `--native`.
    pub natives: Vec<NativeSpec>,
    /// `--guests`.
    pub guests: Option<PathBuf>,
    /// `--allow`.
    pub allow: Vec<String>,
    /// `--allow-all`.
    pub allow_all: bool,
    /// `--no-lapack`.
    pub no_lapack: bool,
    /// `--limit` settings, `NAME=VALUE`.
    pub limits: Vec<String>,
}

/// Checks the configuration, then replaces this process with `command`.
/// Returns only on failure.
///
/// # Errors
///
/// A bad configuration (as the plugin would report it), the plugin library
/// missing, or `command` that cannot be run.
pub fn launch(host: &HostOptions, args: &LaunchArgs, command: &[String]) -> Result<()> {
    let (program, rest) = command
        .split_first()
        .ok_or_else(|| anyhow!("no command after `--`"))?;
    let (vars, config) = configuration(host, args)?;
    let on_cpu = args.platform == CPU_PLATFORM;
    // On `cpu` the guests run on jaxlib's own CPU client: no PJRT plugin.
    let plugin = if on_cpu {
        None
    } else {
        Some(setup::find_plugin(config.plugin.as_deref())?)
    };
    for spec in &config.natives {
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
    Setup::from_config(&config).sandboxes()?;

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
    host: &HostOptions,
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
fn environment(host: &HostOptions, args: &LaunchArgs) -> Result<BTreeMap<&'static str, String>> {
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
        vars.insert(LIMITS_ENV, host.limits.join(","));
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
        && let Some(installed) = setup::installed_library()
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
