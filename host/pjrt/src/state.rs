//! The process-wide state of the plugin library: its configuration, the
//! real plugin, and the registrations, made once.

use std::sync::{Arc, OnceLock};

use cyxla_sandbox::Sandbox;
use cyxla_setup::config::Config;
use cyxla_setup::process::{self, Host};
use plugin_glue::plugin::Plugin;

/// Where a user learns how to configure the plugin; ends every
/// configuration error.
const HOW_TO_CONFIGURE: &str = "cyxla reads CYXLA_CONFIG and the CYXLA_* environment \
     variables, which `cyxla-host [HOST OPTIONS] -- COMMAND` sets from its options \
     (docs/using-jax.md, \"JAX on cyxla\")";

/// Configuration, real plugin and registrations.
pub struct State {
    /// The configuration, or what is wrong with it.
    pub config: Result<Config, String>,
    /// The real plugin, or why it could not be loaded.
    pub real: Result<Plugin, String>,
    setup: OnceLock<Result<Host, String>>,
}

static STATE: OnceLock<State> = OnceLock::new();

/// The state, loaded on first use (from `GetPjrtApi`).
pub fn get() -> &'static State {
    STATE.get_or_init(State::load)
}

impl State {
    fn load() -> State {
        init_logging();
        // SAFETY: `choose_openblas_kernels` may set OPENBLAS_CORETYPE before
        // OpenBLAS loads. It runs once, when the client first asks for the
        // API table, before any handler of ours can load OpenBLAS. Other
        // threads of the client may exist: setting a variable then is what
        // every Python `os.environ[...] = ...` does; glibc's setenv takes
        // its environment lock, and the client is not reading
        // OPENBLAS_CORETYPE (only OpenBLAS does, when we load it later).
        let kernels = unsafe { cyxla_lapack::choose_openblas_kernels() };
        tracing::debug!(%kernels, "OpenBLAS kernels");
        let config = Config::from_env()
            .map_err(|e| format!("cyxla: bad configuration: {e}; {HOW_TO_CONFIGURE}"));
        let real = match &config {
            Ok(config) => load_plugin(config),
            Err(e) => Err(e.clone()),
        };
        State {
            config,
            real,
            setup: OnceLock::new(),
        }
    }

    /// Registers the natives, the LAPACK targets and the allowed guests with
    /// the real plugin, once; later calls return the first call's outcome.
    ///
    /// # Errors
    ///
    /// The configuration's problem, or the first registration step that
    /// failed, as a message for the client.
    pub fn ready(&self) -> Result<&Host, String> {
        self.setup
            .get_or_init(|| {
                let config = self.config.as_ref().map_err(Clone::clone)?;
                let plugin = self.real.as_ref().map_err(Clone::clone)?;
                // SAFETY: the trusted natives are the operator's
                // (CYXLA_NATIVE / the configuration file): their statement
                // that each is an XLA FFI handler.
                let host =
                    unsafe { process::start_with(plugin.clone(), &config.setup) }.map_err(|e| {
                        format!(
                            "cyxla: {}; {HOW_TO_CONFIGURE}",
                            cyxla_sandbox::report(e.as_ref())
                        )
                    })?;
                serving(config, &host.sandboxes, "cyxla plugin ready");
                Ok(host)
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// What follows the set-up on either platform: the statistics file and
/// the records of failed calls start, and the log says which tenant this is
/// and what each guests folder serves.
pub(crate) fn serving(config: &Config, sandboxes: &[Arc<Sandbox>], ready: &str) {
    crate::stats_writer::start(config);
    cyxla_setup::record::start(config.record.clone());
    if let Some(tenant) = &config.tenant {
        tracing::info!(tenant = %tenant.name, by = %tenant.selected_by, "cyxla tenant");
    }
    for sandbox in sandboxes {
        tracing::info!(
            guests = %sandbox.guests().dir().display(),
            allowed = %sandbox.policy(),
            "{ready}"
        );
    }
}

fn load_plugin(config: &Config) -> Result<Plugin, String> {
    let path = process::find_plugin(config.setup.plugin.as_deref()).map_err(|e| {
        format!(
            "cyxla: {}; {HOW_TO_CONFIGURE}",
            cyxla_sandbox::report(e.as_ref())
        )
    })?;
    // SAFETY: the operator names the real XLA plugin (CYXLA_PJRT_PLUGIN, or
    // the installed one): their statement that it is a PJRT plugin.
    unsafe { Plugin::load(&path) }.map_err(|e| {
        format!(
            "cyxla: cannot load the XLA PJRT plugin {}: {e}; {HOW_TO_CONFIGURE}",
            path.display()
        )
    })
}

/// Logs to stderr, filtered by `CYXLA_LOG` (default: warnings), unless the
/// process already has a subscriber in this library's copy of `tracing`.
pub(crate) fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env(cyxla_setup::config::LOG_ENV)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // An error only means a subscriber is already installed: keep it.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
