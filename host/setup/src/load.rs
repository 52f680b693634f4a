//! Where a process's [`Config`] comes from: the tenant policy, where one
//! decides, else the configuration file and the environment.

use std::path::{Path, PathBuf};

use crate::config::{
    CONFIG_ENV, Config, POLICY_ENV, SETTINGS, SYSTEM_POLICY, TENANT_ENV, environ_var,
    kept_from_start,
};
use crate::settings::Beside;
use crate::tenants::{Policy, UnixUser};

impl Config {
    /// The configuration of this process: `CYXLA_CONFIG`'s file, then the
    /// environment variables.
    ///
    /// # Errors
    ///
    /// A file that cannot be read or parsed, an unknown key, a bad value;
    /// the message names the file or variable.
    ///
    /// The policy and tenant a process started with (`CYXLA_POLICY`,
    /// `CYXLA_TENANT` in its initial environment, `/proc/self/environ`, as
    /// `cyxla-host --policy` sets them) hold for its lifetime: a value the
    /// process itself changed or removed later (e.g. `os.environ` in a
    /// notebook, before JAX starts) is an error, not another policy.
    pub fn from_env() -> Result<Config, String> {
        let started = std::fs::read("/proc/self/environ").unwrap_or_default();
        for name in [POLICY_ENV, TENANT_ENV] {
            let now = std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
            kept_from_start(name, environ_var(&started, name).as_deref(), now.as_deref())?;
        }
        Config::from_lookup(&|name| {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        })
    }

    /// As [`Config::from_env`], with `lookup` standing for the environment.
    ///
    /// # Errors
    ///
    /// As for [`Config::from_env`].
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config, String> {
        let set = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let system = Path::new(SYSTEM_POLICY);
        let policy = match set(POLICY_ENV) {
            Some(p) if system.is_file() && Path::new(&p) != system => {
                return Err(format!(
                    "{POLICY_ENV}={p}: this machine's policy is {SYSTEM_POLICY}, which no other \
                     file replaces"
                ));
            }
            Some(p) => Some(PathBuf::from(p)),
            None => system.is_file().then(|| system.to_owned()),
        };
        if let Some(path) = policy {
            return Config::from_policy(&path, lookup);
        }
        let mut config = Config::default();
        if let Some(path) = lookup(CONFIG_ENV).filter(|p| !p.is_empty()) {
            config.apply_config_file(Path::new(&path))?;
        }
        config.apply_env(lookup)?;
        Ok(config)
    }

    /// The configuration tenant policy `path` gives this process's tenant:
    /// the variables the policy leaves to the process, under the tenant's
    /// settings.
    fn from_policy(path: &Path, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config, String> {
        let set = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let refused = SETTINGS
            .iter()
            .filter(|s| s.beside_policy == Beside::Refused)
            .filter_map(|s| s.env);
        for var in refused {
            if set(var).is_some() {
                return Err(format!(
                    "{var} is set, but the policy {} decides what each tenant gets: unset it (and \
                     drop the launcher options that set it)",
                    path.display()
                ));
            }
        }
        let policy = Policy::load(path)?;
        let problems = policy.check();
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let user = UnixUser::current()?;
        let (name, why) = policy.select(set(TENANT_ENV).as_deref(), &user)?;
        let mut config = Config::default();
        config.apply_env(lookup)?;
        policy.apply_to(&mut config, &name, &why, Some(&user))?;
        Ok(config)
    }
}
