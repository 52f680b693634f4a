//! `cyxla-host [HOST OPTIONS] doctor [--python PATH]`: checks an
//! installation as the launcher (`cyxla-host [HOST OPTIONS] -- COMMAND`)
//! would use it, and says for each check what it found and, when it
//! fails, the fix.
//!
//! The checks, in the order printed: the cyxla PJRT plugin library
//! ([`launch::library`]), the real XLA PJRT plugin ([`process::find_plugin`],
//! then loaded for its PJRT API version), the Python the launcher would run
//! (JAX, jaxlib and `jax_plugins.cyxla` in it), the OpenBLAS the native
//! LAPACK targets call, every guests folder and what it serves, the
//! compile cache's folder, the tenant policy and this user's tenant, and
//! the `cyxla` Jupyter kernel spec.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use cyxla_lapack as lapack;
use cyxla_sandbox::cache::{CACHE_DIR_ENV, ModuleCache};
use cyxla_sandbox::{Engine, Guests, Sandbox};
use plugin_glue::plugin::Plugin;

use crate::cli::kernelspec;
use crate::cli::launch::{self, Flags};
use crate::config::{
    CACHE_ENV, Config, GUESTS_ENV, NO_LAPACK_ENV, PLUGIN_ENV, POLICY_ENV, Platform, SYSTEM_POLICY,
    TENANT_ENV,
};
use crate::process;
use crate::tenants::{Policy, UnixUser};

/// The JAX versions the README states as tested: 0.10.2 up to 0.12.x.
const TESTED_JAX: (&[u32], &[u32]) = (&[0, 10, 2], &[0, 13]);

/// How the tested range is written in messages.
const TESTED_JAX_TEXT: &str = "0.10.2 to 0.12.x";

/// The name of the kernel spec looked for.
const KERNEL_NAME: &str = "cyxla";

/// What one check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// It is as the launcher needs it.
    Ok,
    /// Something worth knowing that needs nothing done.
    Info,
    /// It works, but outside what is tested.
    Warn,
    /// The launcher, or the program it runs, will fail on it.
    Fail,
}

impl Status {
    fn tag(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Info => "info",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        }
    }
}

/// One check's line: `ok   plugin library: /…/libcyxla_pjrt.so (cyxla 0.1.0)`.
#[derive(Clone, Debug)]
pub struct Check {
    /// What it found.
    pub status: Status,
    /// What was checked (`plugin library`, `real PJRT plugin`, ...).
    pub name: &'static str,
    /// What was found.
    pub detail: String,
    /// What to do about it, for a failure or a warning.
    pub fix: Option<String>,
}

impl Check {
    fn new(status: Status, name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            status,
            name,
            detail: detail.into(),
            fix: None,
        }
    }

    fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check::new(Status::Ok, name, detail)
    }

    fn fail(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check::new(Status::Fail, name, detail).with_fix(fix)
    }

    fn with_fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:<4} {}: {}", self.status.tag(), self.name, self.detail)?;
        if let Some(fix) = &self.fix {
            write!(f, "; fix: {fix}")?;
        }
        Ok(())
    }
}

/// Every check's line, in order.
#[derive(Clone, Debug)]
pub struct Report {
    /// The checks.
    pub checks: Vec<Check>,
}

impl Report {
    /// How many checks failed.
    pub fn failures(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .count()
    }

    /// What `doctor` prints: one line per check.
    pub fn text(&self) -> String {
        self.checks.iter().map(|c| format!("{c}\n")).collect()
    }
}

/// Runs every check for the host options `flags` and the Python `python`
/// (`None`: the `python` beside this cyxla-host, else the checkout's
/// `.venv/bin/python`, as `kernelspec install` takes them
/// ([`kernelspec::default_python`]); else `python3` on the `PATH`).
pub fn doctor(flags: &Flags, python: Option<&Path>) -> Report {
    let policy = policy_checks(flags);
    let mut checks = Vec::new();
    let config = match launch::configuration(flags) {
        Ok((_, config)) => config,
        Err(e) => {
            // A bad policy fails the configuration too: its own lines say why.
            if !policy.iter().any(|c| c.status == Status::Fail) {
                checks.push(Check::fail(
                    "configuration",
                    format!("{e:#}"),
                    "correct the option or CYXLA_* variable named (docs/reference-settings.md \
                     lists every setting)",
                ));
            }
            // The other checks go on with what the options alone give.
            flags.config().unwrap_or_default()
        }
    };
    checks.push(plugin_library());
    checks.push(real_plugin(&config));
    checks.extend(python_checks(python));
    checks.push(openblas(&config));
    let (cache_check, cache) = compile_cache(&config);
    checks.extend(guests_checks(&config, cache));
    checks.push(cache_check);
    checks.extend(policy);
    checks.push(kernel_spec());
    Report { checks }
}

/// The cyxla PJRT library the launcher hands the Python package
/// (`CYXLA_PJRT_LIBRARY`).
fn plugin_library() -> Check {
    const NAME: &str = "plugin library";
    let fix = "build it with `cargo build -p cyxla-pjrt` in the checkout (the profile of this \
               cyxla-host), or install the cyxla wheel again (it holds the library)";
    let path = match launch::library() {
        Ok(path) => path,
        Err(e) => return Check::fail(NAME, format!("{e:#}"), fix),
    };
    let mut magic = [0u8; 4];
    let read =
        std::fs::File::open(&path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic));
    match read {
        Ok(()) if &magic == b"\x7fELF" => Check::ok(
            NAME,
            format!("{} (cyxla {})", path.display(), env!("CARGO_PKG_VERSION")),
        ),
        Ok(()) => Check::fail(
            NAME,
            format!("{} is not a shared library", path.display()),
            fix,
        ),
        Err(e) => Check::fail(NAME, format!("cannot read {}: {e}", path.display()), fix),
    }
}

/// The real XLA CPU PJRT plugin the cyxla library wraps: found as the
/// launcher finds it, then loaded for the PJRT API version it reports.
fn real_plugin(config: &Config) -> Check {
    const NAME: &str = "real PJRT plugin";
    if config.platform == Platform::Cpu {
        return Check::ok(
            NAME,
            "not needed: the guests are served on JAX's own `cpu` platform (--platform cpu)",
        );
    }
    // The plugins on PyPI are x86-64 builds only.
    let install = if cfg!(target_arch = "x86_64") {
        "pip install fastatomstruct-xla-cpu (any JAX; the cyxla wheel's extra `pjrt`) \
         or lammps-jax-pjrt-cpu==0.11.2 (JAX up to 0.11.2) into the environment cyxla \
         is installed in (in a checkout: scripts/setup.sh), or serve the guests on \
         JAX's own CPU backend with --platform cpu"
    } else {
        "serve the guests on JAX's own CPU backend with --platform cpu (PyPI has no build \
         of a real XLA CPU PJRT plugin for this machine, so the cyxla wheel's extra `pjrt` \
         installs nothing here), or name a build of one with --plugin"
    };
    let explicit = config.setup.plugin.as_deref();
    let path = match process::find_plugin(explicit) {
        Ok(path) => path,
        Err(e) => {
            let (detail, fix) = match explicit {
                Some(_) => (
                    format!("{e:#} (--plugin or {PLUGIN_ENV})"),
                    format!(
                        "name an XLA CPU PJRT plugin that exists, or drop --plugin and \
                         {PLUGIN_ENV} for the installed one; to install one: {install}"
                    ),
                ),
                None => {
                    let looked: Vec<String> = process::site_packages()
                        .iter()
                        .map(|f| f.display().to_string())
                        .collect();
                    (
                        format!(
                            "not found (looked for {} in {})",
                            process::PLUGIN_PACKAGES.join(" and "),
                            if looked.is_empty() {
                                "no Python environment beside cyxla".to_owned()
                            } else {
                                looked.join(", ")
                            }
                        ),
                        format!("{install}; or pass --plugin PATH"),
                    )
                }
            };
            return Check::fail(NAME, detail, fix);
        }
    };
    // SAFETY: the operator names the plugin (--plugin, CYXLA_PJRT_PLUGIN)
    // or it is the installed one: the library the program under the
    // launcher would load as a PJRT plugin, which is their statement that
    // it is one (as for `cyxla-host run`).
    match unsafe { Plugin::load(&path) } {
        Ok(plugin) => {
            let (major, minor) = plugin.api_version();
            Check::ok(NAME, format!("{} (PJRT {major}.{minor})", path.display()))
        }
        Err(e) => Check::fail(
            NAME,
            format!("{} does not load: {e}", path.display()),
            format!("name an XLA CPU PJRT plugin with --plugin; to install one: {install}"),
        ),
    }
}

/// What the Python prints: its version, JAX's and jaxlib's (or why they do
/// not import), and where `jax_plugins.cyxla` is.
const PYTHON_SCRIPT: &str = r#"
import importlib.util, json, sys
r = {"executable": sys.executable, "version": sys.version.split()[0]}
try:
    import jax, jaxlib
    r["jax"] = jax.__version__
    r["jaxlib"] = jaxlib.__version__
except Exception as e:
    r["error"] = f"{type(e).__name__}: {e}"
try:
    spec = importlib.util.find_spec("jax_plugins.cyxla")
    r["cyxla"] = spec.origin if spec else None
except Exception:
    r["cyxla"] = None
print(json.dumps(r))
"#;

/// The Python the launcher would run, and JAX and the cyxla package in it.
fn python_checks(python: Option<&Path>) -> Vec<Check> {
    let (program, named) = match python {
        Some(p) => (p.to_owned(), p.display().to_string()),
        None => match kernelspec::default_python() {
            Some(p) => {
                let named = format!("{} (cyxla-host's environment)", p.display());
                (p, named)
            }
            None => (PathBuf::from("python3"), "`python3` on the PATH".to_owned()),
        },
    };
    let other = "pass --python PATH: the Python your programs run under, with JAX";
    let output = match Command::new(&program).arg("-c").arg(PYTHON_SCRIPT).output() {
        Ok(output) => output,
        Err(e) => {
            return vec![Check::fail(
                "Python",
                format!("cannot run {named}: {e}"),
                other,
            )];
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let found: Option<serde_json::Value> = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok());
    let Some(found) = found.filter(|_| output.status.success()) else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return vec![Check::fail(
            "Python",
            format!(
                "{named} failed ({}): {}",
                output.status,
                stderr.trim().lines().last().unwrap_or("no output")
            ),
            other,
        )];
    };
    let field = |key: &str| found.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let executable = field("executable").unwrap_or_else(|| named.clone());
    let version = field("version").unwrap_or_default();
    let mut checks = vec![Check::ok(
        "Python",
        match python {
            Some(_) => format!("{executable} (Python {version})"),
            None => format!("{named} is {executable} (Python {version})"),
        },
    )];
    let pip = format!(
        "{} -m pip install \"cyxla_jax_plugin-*.whl[pjrt]\"",
        program.display()
    );
    checks.push(match (field("jax"), field("jaxlib")) {
        (Some(jax), Some(jaxlib)) => {
            let detail = format!("jax {jax}, jaxlib {jaxlib}");
            if in_tested_range(&jax) {
                Check::ok("JAX", format!("{detail} (tested: {TESTED_JAX_TEXT})"))
            } else {
                Check::new(
                    Status::Warn,
                    "JAX",
                    format!("{detail}: outside the tested range, {TESTED_JAX_TEXT}"),
                )
                .with_fix(format!(
                    "{} -m pip install \"jax>=0.10.2,<0.13\"",
                    program.display()
                ))
            }
        }
        _ => Check::fail(
            "JAX",
            format!(
                "not importable in {executable}: {}",
                field("error").unwrap_or_else(|| "no version".to_owned())
            ),
            format!("{pip} (it brings JAX), or {other}"),
        ),
    });
    checks.push(match field("cyxla") {
        Some(origin) => Check::ok(
            "JAX plugin package",
            format!("jax_plugins.cyxla at {origin}"),
        ),
        None => Check::fail(
            "JAX plugin package",
            format!("jax_plugins.cyxla is not installed in {executable}: JAX will not find platform `cyxla`"),
            format!(
                "{pip}, or in a checkout {} -m pip install ./host/python",
                program.display()
            ),
        ),
    });
    checks
}

/// Whether JAX version `version` (`0.12.0.1`, `0.11.0rc1`) is in the
/// tested range.
fn in_tested_range(version: &str) -> bool {
    let numbers: Vec<u32> = version
        .split('.')
        .map_while(|part| {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect();
    let (low, high) = TESTED_JAX;
    numbers.as_slice() >= low && numbers.as_slice() < high
}

/// The OpenBLAS the native LAPACK targets call, found as the plugin library
/// finds it (`CYXLA_LAPACK`, else the `scipy-openblas32` wheel beside cyxla,
/// else Debian's).
fn openblas(config: &Config) -> Check {
    const NAME: &str = "OpenBLAS";
    if !config.setup.lapack {
        return Check::new(
            Status::Info,
            NAME,
            format!(
                "not used: the native LAPACK targets are off (--no-lapack, {NO_LAPACK_ENV}=1 or \
                 the tenant's policy)"
            ),
        );
    }
    match crate::cli::list::lapack_library() {
        Ok(lib) => Check::ok(NAME, lib),
        Err(e) => {
            let tried: Vec<String> = e
                .attempts
                .iter()
                .map(|(name, error)| format!("{name}: {error}"))
                .collect();
            let env = lapack::library::LAPACK_LIBRARY_ENV;
            let fix = if std::env::var_os(env).is_some() {
                format!(
                    "set {env} to a LAPACK library that loads (e.g. Debian's libopenblas.so.0), \
                     or unset it"
                )
            } else {
                "pip install scipy-openblas32 (into the environment cyxla is installed in) or \
                 apt-get install libopenblas0"
                    .to_owned()
            };
            Check::fail(
                NAME,
                format!(
                    "no LAPACK library loads, so every native LAPACK call will fail ({})",
                    tried.join("; ")
                ),
                format!("{fix}; or turn the native LAPACK targets off with --no-lapack"),
            )
        }
    }
}

/// The compile cache's folder: trusted (the user's, writable by no one
/// else, and so the way to it), or off. The opened cache, for loading the
/// guests.
fn compile_cache(config: &Config) -> (Check, Option<ModuleCache>) {
    const NAME: &str = "compile cache";
    let Some(dir) = &config.setup.cache else {
        return (
            Check::new(
                Status::Info,
                NAME,
                format!("off ({CACHE_ENV}=0 or --no-cache): guests are compiled at every start"),
            ),
            None,
        );
    };
    match ModuleCache::open(dir) {
        Ok(cache) => (
            Check::ok(
                NAME,
                format!(
                    "{}: this user's, and no one else can write it or the folders on the way",
                    dir.display()
                ),
            ),
            Some(cache),
        ),
        Err(e) => (
            Check::fail(
                NAME,
                format!("{e}: guests would be compiled without it"),
                format!(
                    "make the folder named this user's and writable by no one else (chmod \
                     go-w), or set {CACHE_DIR_ENV} to a folder of yours, or {CACHE_ENV}=0 to \
                     turn the cache off"
                ),
            ),
            None,
        ),
    }
}

/// Every guests folder and what it serves, as `list` loads them; then the
/// allowed targets, as the launcher checks them.
fn guests_checks(config: &Config, cache: Option<ModuleCache>) -> Vec<Check> {
    const NAME: &str = "guests folder";
    let setup = &config.setup;
    let engine = match Engine::new(&setup.limits) {
        Ok(engine) => engine,
        Err(e) => {
            return vec![Check::fail(
                NAME,
                format!("cannot build the wasm engine: {e}"),
                "check the limits given (--limit, CYXLA_LIMITS, the tenant's policy)",
            )];
        }
    };
    if let Some(cache) = cache {
        engine.use_cache(cache);
    }
    let mut checks = Vec::new();
    for dir in setup.guests_dirs() {
        if !dir.is_dir() {
            checks.push(Check::fail(
                NAME,
                format!("{} does not exist", dir.display()),
                format!(
                    "pass --guests DIR or set {GUESTS_ENV} to a folder of .wasm modules, or \
                     build the bundled guests (in a checkout: scripts/setup.sh)"
                ),
            ));
            continue;
        }
        let guests = match Guests::load_dir(&engine, &dir) {
            Ok(guests) => guests,
            Err(e) => {
                checks.push(Check::fail(
                    NAME,
                    format!("cannot read {}: {e}", dir.display()),
                    "make it readable by this user",
                ));
                continue;
            }
        };
        let sandbox = Sandbox::with_guests(guests, setup.allow.clone());
        let guests = sandbox.guests();
        let targets: Vec<&str> = guests.targets().map(|(t, _)| t).collect();
        let detail = format!(
            "{}: {} guest(s) serving {}; allowed: {}",
            dir.display(),
            guests.guests().len(),
            if targets.is_empty() {
                "nothing".to_owned()
            } else {
                targets.join(", ")
            },
            sandbox.policy()
        );
        let rejected: Vec<String> = guests
            .rejected()
            .iter()
            .map(|r| format!("{}: {}", r.path.display(), r.error))
            .collect();
        checks.push(if rejected.is_empty() {
            Check::ok(NAME, detail)
        } else {
            Check::new(
                Status::Warn,
                NAME,
                format!("{detail}; rejected: {}", rejected.join("; ")),
            )
            .with_fix("`cyxla-host check FILE` says what is wrong with each module")
        });
    }
    if checks.iter().all(|c| c.status != Status::Fail) {
        // The launcher's own check of the allowed targets (the cache has
        // its own line).
        let mut launcher = setup.clone();
        launcher.cache = None;
        launcher.reload = false;
        if let Err(e) = launcher.sandboxes() {
            checks.push(Check::fail(
                "allowed targets",
                format!("{e:#}"),
                "allow only targets the guests serve (--allow, CYXLA_ALLOW, the tenant's \
                 policy), or add the guest that serves it",
            ));
        }
    }
    checks
}

/// The tenant policy the launcher would apply (the global --policy,
/// `CYXLA_POLICY`, else the machine's if it exists), and this user's
/// tenant in it.
fn policy_checks(flags: &Flags) -> Vec<Check> {
    const NAME: &str = "policy";
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let system = Path::new(SYSTEM_POLICY);
    let chosen = flags
        .value("policy")
        .map(|p| (PathBuf::from(p), "--policy".to_owned()))
        .or_else(|| env(POLICY_ENV).map(|p| (PathBuf::from(p), POLICY_ENV.to_owned())))
        .or_else(|| {
            system
                .is_file()
                .then(|| (system.to_owned(), "this machine's".to_owned()))
        });
    let Some((path, by)) = chosen else {
        return vec![Check::ok(
            NAME,
            format!(
                "none (no --policy, {POLICY_ENV} or {SYSTEM_POLICY}): the launcher's options and \
                 the CYXLA_* variables decide"
            ),
        )];
    };
    let fix = format!(
        "correct the policy (`cyxla-host policy check {}` lists every problem with its line)",
        path.display()
    );
    let policy = match Policy::load(&path) {
        Ok(policy) => policy,
        Err(e) => return vec![Check::fail(NAME, format!("{e} ({by})"), fix)],
    };
    let mut problems = policy.check();
    problems.extend(policy.check_pins());
    if !problems.is_empty() {
        return vec![Check::fail(
            NAME,
            format!("{} ({by}): {}", path.display(), problems.join("; ")),
            fix,
        )];
    }
    let tenants: Vec<&str> = policy.tenants().collect();
    let mut checks = vec![Check::ok(
        NAME,
        format!(
            "{} ({by}): {} tenant(s): {}",
            path.display(),
            tenants.len(),
            tenants.join(", ")
        ),
    )];
    let user = match UnixUser::current() {
        Ok(user) => user,
        Err(e) => {
            checks.push(Check::fail(
                "tenant",
                e,
                "run as a user the user database knows",
            ));
            return checks;
        }
    };
    let requested = flags
        .value("tenant")
        .map(str::to_owned)
        .or_else(|| env(TENANT_ENV));
    let tenant = policy
        .select(requested.as_deref(), &user)
        .and_then(|(name, why)| {
            policy
                .resolve(&name, &why, Some(&user))
                .map(|_| format!("`{name}` for user `{}` ({why})", user.name))
        });
    checks.push(match tenant {
        Ok(detail) => Check::ok("tenant", detail),
        Err(e) => Check::fail(
            "tenant",
            e,
            format!(
                "map user `{}` (or a group of it) to a tenant in the policy's [users] or \
                 [groups], or give the policy a default_tenant, or pass --tenant NAME",
                user.name
            ),
        ),
    });
    checks
}

/// The folders Jupyter finds kernel specs in, in its order: `$JUPYTER_PATH`,
/// the user's, then the system's.
fn kernel_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("JUPYTER_PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| p.join("kernels"))
                .collect()
        })
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".local/share/jupyter/kernels"));
    }
    dirs.push(PathBuf::from("/usr/local/share/jupyter/kernels"));
    dirs.push(PathBuf::from("/usr/share/jupyter/kernels"));
    dirs
}

/// The `cyxla` kernel spec Jupyter would use, and whether the programs its
/// argv runs exist.
fn kernel_spec() -> Check {
    const NAME: &str = "kernel spec";
    let dirs = kernel_dirs();
    let specs: Vec<PathBuf> = dirs
        .iter()
        .map(|d| d.join(KERNEL_NAME).join("kernel.json"))
        .filter(|f| f.is_file())
        .collect();
    let Some(file) = specs.first() else {
        let looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Check::new(
            Status::Info,
            NAME,
            format!(
                "no `{KERNEL_NAME}` kernel spec installed (looked in {}); `cyxla-host kernelspec \
                 install` installs one",
                looked.join(", ")
            ),
        );
    };
    let reinstall = "install it again with `cyxla-host kernelspec install` (--python PATH for the \
                     kernel's Python), or correct its argv";
    let argv: Result<Vec<String>, String> = std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            serde_json::from_str::<serde_json::Value>(&text).map_err(|e| e.to_string())
        })
        .and_then(|json| {
            json.get("argv")
                .and_then(|a| a.as_array())
                .ok_or_else(|| "it has no argv list".to_owned())?
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| "argv holds a non-string".to_owned())
                })
                .collect()
        });
    let argv = match argv {
        Ok(argv) if !argv.is_empty() => argv,
        Ok(_) => {
            return Check::fail(
                NAME,
                format!("{}: its argv is empty", file.display()),
                reinstall,
            );
        }
        Err(e) => return Check::fail(NAME, format!("{}: {e}", file.display()), reinstall),
    };
    // The launcher, and the program it runs after `--` (the kernel's Python).
    let mut programs = vec![argv[0].as_str()];
    if let Some(after) = argv
        .iter()
        .position(|a| a == "--")
        .and_then(|i| argv.get(i + 1))
    {
        programs.push(after);
    }
    let missing: Vec<&str> = programs
        .iter()
        .copied()
        .filter(|p| find_program(p).is_none())
        .collect();
    if !missing.is_empty() {
        return Check::fail(
            NAME,
            format!(
                "{}: its argv runs {}, which {} not exist or {} not executable",
                file.display(),
                missing.join(" and "),
                if missing.len() == 1 { "does" } else { "do" },
                if missing.len() == 1 { "is" } else { "are" },
            ),
            reinstall,
        );
    }
    let shadowed = if specs.len() > 1 {
        let others: Vec<String> = specs[1..].iter().map(|f| f.display().to_string()).collect();
        format!(" (Jupyter uses this one, not {})", others.join(", "))
    } else {
        String::new()
    };
    Check::ok(
        NAME,
        format!(
            "{}: runs {}{shadowed}",
            file.display(),
            programs.join(" -- ")
        ),
    )
}

/// `program` as `exec` finds it: a path with a slash as it is, a bare name
/// on the `PATH`; only an executable file counts.
fn find_program(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tested_jax_range_is_the_readmes() {
        for v in ["0.10.2", "0.11.0", "0.12.0.1", "0.12.9", "0.11.0rc1"] {
            assert!(in_tested_range(v), "{v}");
        }
        for v in ["0.10.1", "0.9.9", "0.13.0", "1.0.0", "", "x"] {
            assert!(!in_tested_range(v), "{v}");
        }
    }

    #[test]
    fn lines_say_status_name_detail_and_fix() {
        assert_eq!(
            Check::ok("plugin library", "/x.so").to_string(),
            "ok   plugin library: /x.so"
        );
        assert_eq!(
            Check::fail("real PJRT plugin", "not found", "pip install y").to_string(),
            "FAIL real PJRT plugin: not found; fix: pip install y"
        );
    }

    #[test]
    fn programs_are_found_as_exec_finds_them() {
        assert!(find_program("/nonexistent/python").is_none());
        assert!(find_program("sh").is_some());
        let exe = std::env::current_exe().unwrap();
        assert_eq!(find_program(exe.to_str().unwrap()), Some(exe));
    }
}
