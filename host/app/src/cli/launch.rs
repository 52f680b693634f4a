//! `cyxla-host [HOST OPTIONS] -- COMMAND [ARGS]...`: runs COMMAND with the
//! cyxla PJRT plugin configured for it.
//!
//! The flags are those of the settings table ([`crate::config`]): each
//! becomes its setting's environment variable, which the plugin library
//! reads in COMMAND's process; `CYXLA_PJRT_LIBRARY` names the library
//! (beside this executable) for the Python package `jax_plugins.cyxla`, and
//! `JAX_PLATFORMS` is set to the platform (`cyxla`) unless the environment
//! already sets it. With `--platform cpu` (`CYXLA_PLATFORM=cpu`) the package
//! serves the guests on JAX's own `cpu` platform instead, and
//! `JAX_PLATFORMS=cpu` is set (unless set). The configuration is checked here first
//! (plugin, guests, policy, limits), so a mistake is reported before COMMAND
//! starts. COMMAND then replaces this process (`exec`): its exit code and
//! the signals sent to it are its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::config::{Config, PJRT_LIBRARY_ENV, PLUGIN_ENV, Platform, SETTINGS, cpu_refusal};
use crate::process::{self, NativeSpec};
use crate::settings::{Flag, FlagValue};

/// File name of the cyxla PJRT plugin library, built beside `cyxla-host`.
pub const LIBRARY_FILE: &str = "libcyxla_pjrt.so";

/// The flags of `cyxla-host` that stand for settings: the flag column of
/// the settings table ([`SETTINGS`]), each flag given with its values. A
/// flag sets its setting's variable ([`Flags::variables`]): in COMMAND's
/// environment for `-- COMMAND`, in the configuration of `run`, `list` and
/// `check` ([`Flags::config`]).
#[derive(Clone, Debug, Default)]
pub struct Flags {
    given: BTreeMap<&'static str, Vec<String>>,
}

/// Every flag of the table, with its setting's variable.
fn table_flags() -> impl Iterator<Item = (Option<&'static str>, &'static Flag)> {
    SETTINGS
        .iter()
        .flat_map(|s| s.flags.iter().map(move |f| (s.env, f)))
}

impl Flags {
    /// The values given to `--long` (a switch given: one empty value).
    pub fn values(&self, long: &str) -> &[String] {
        self.given.get(long).map_or(&[], Vec::as_slice)
    }

    /// The last value given to `--long`, if it was given.
    pub fn value(&self, long: &str) -> Option<&str> {
        self.values(long).last().map(String::as_str)
    }

    /// The variables the flags given stand for, their paths made what
    /// `path` makes them.
    ///
    /// # Errors
    ///
    /// A path `path` refuses.
    pub fn variables(
        &self,
        path: &dyn Fn(&Path) -> Result<PathBuf>,
    ) -> Result<BTreeMap<&'static str, String>> {
        let text =
            |p: &str| -> Result<String> { Ok(path(Path::new(p))?.to_string_lossy().into_owned()) };
        let mut vars = BTreeMap::new();
        for (env, flag) in table_flags() {
            let (Some(env), Some(values)) = (env, self.given.get(flag.long)) else {
                continue;
            };
            let values: Vec<String> = match flag.value {
                FlagValue::Switch(sets) => vec![sets.to_owned()],
                FlagValue::Text(_) => values.clone(),
                FlagValue::Path(_) => values.iter().map(|v| text(v)).collect::<Result<_>>()?,
                FlagValue::Native(_) => values
                    .iter()
                    .map(|v| {
                        let n: NativeSpec = v.parse().map_err(|e: String| anyhow!(e))?;
                        Ok(format!(
                            "{}={}:{}",
                            n.target,
                            text(&n.library.to_string_lossy())?,
                            n.symbol
                        ))
                    })
                    .collect::<Result<_>>()?,
            };
            vars.insert(env, values.join(flag.many.unwrap_or("")));
        }
        Ok(vars)
    }

    /// The configuration the flags alone give (`run`, `list`, `check`):
    /// the defaults, then the variables the flags stand for (paths as
    /// given); a named target no guest serves is a warning, and changed
    /// guests are not reloaded.
    ///
    /// # Errors
    ///
    /// A value the setting refuses.
    pub fn config(&self) -> Result<Config> {
        let vars = self.variables(&|p| Ok(p.to_owned()))?;
        let mut config = Config::default();
        config
            .apply_env(&|name| vars.get(name).cloned())
            .map_err(|e| anyhow!(e))?;
        config.setup.strict = false;
        config.setup.reload = false;
        Ok(config)
    }
}

impl clap::FromArgMatches for Flags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Flags, clap::Error> {
        let mut flags = Flags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for (_, flag) in table_flags() {
            let values: Vec<String> = match flag.value {
                FlagValue::Switch(_) => {
                    if !matches.get_flag(flag.long) {
                        continue;
                    }
                    vec![String::new()]
                }
                // Paths are `PathBuf`s, as a subcommand's own argument of
                // the same name (`kernelspec install --policy`) has them.
                FlagValue::Path(_) => match matches.get_many::<PathBuf>(flag.long) {
                    Some(values) => values.map(|p| p.to_string_lossy().into_owned()).collect(),
                    None => continue,
                },
                _ => match matches.get_many::<String>(flag.long) {
                    Some(values) => values.cloned().collect(),
                    None => continue,
                },
            };
            self.given.insert(flag.long, values);
        }
        Ok(())
    }
}

impl clap::Args for Flags {
    fn augment_args(mut cmd: Command) -> Command {
        for setting in SETTINGS {
            for flag in setting.flags {
                let mut arg = Arg::new(flag.long)
                    .long(flag.long)
                    .help(flag.help)
                    .global(flag.global);
                arg = match flag.value {
                    FlagValue::Switch(_) => arg.action(ArgAction::SetTrue),
                    FlagValue::Text(name) | FlagValue::Path(name) | FlagValue::Native(name) => {
                        let check = flag.check;
                        let arg = arg.value_name(name).action(if flag.many.is_some() {
                            ArgAction::Append
                        } else {
                            ArgAction::Set
                        });
                        if let FlagValue::Path(_) = flag.value {
                            arg.value_parser(clap::value_parser!(PathBuf))
                        } else if flag.choices.is_empty() {
                            arg.value_parser(move |s: &str| check(s).map(|()| s.to_owned()))
                        } else {
                            arg.value_parser(flag.choices.to_vec())
                        }
                    }
                };
                if flag.env_default
                    && let Some(env) = setting.env
                {
                    arg = arg.env(env);
                }
                // A switch and a value of one setting exclude each other
                // (`--allow-all`, `--allow`).
                for other in setting.flags {
                    if other.long != flag.long
                        && matches!(flag.value, FlagValue::Switch(_))
                            != matches!(other.value, FlagValue::Switch(_))
                    {
                        arg = arg.conflicts_with(other.long);
                    }
                }
                cmd = cmd.arg(arg);
            }
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Flags::augment_args(cmd)
    }
}

/// Checks the configuration, then replaces this process with `command`.
/// Returns only on failure.
///
/// # Errors
///
/// A bad configuration (as the plugin would report it), the plugin library
/// missing, or `command` that cannot be run.
pub fn launch(flags: &Flags, command: &[String]) -> Result<()> {
    let (program, rest) = command
        .split_first()
        .ok_or_else(|| anyhow!("no command after `--`"))?;
    let (vars, config) = configuration(flags)?;
    let on_cpu = config.platform == Platform::Cpu;
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
    cmd.env(PJRT_LIBRARY_ENV, library()?);
    if std::env::var_os("JAX_PLATFORMS").is_none() {
        cmd.env("JAX_PLATFORMS", config.platform.name());
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

/// The environment variables the flags given stand for (paths absolute),
/// and the configuration the plugin will read in COMMAND's process (this
/// process's environment with them on top).
///
/// # Errors
///
/// A bad flag or configuration.
pub fn configuration(flags: &Flags) -> Result<(BTreeMap<&'static str, String>, Config)> {
    let vars = flags.variables(&|p| absolute(p))?;
    let lookup = |name: &str| {
        vars.get(name)
            .cloned()
            .or_else(|| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    };
    let config = Config::from_lookup(&lookup).map_err(|e| anyhow!("bad configuration: {e}"))?;
    Ok((vars, config))
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
