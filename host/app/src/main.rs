//! The `cyxla-host` command line.
//!
//! Exit codes: 0 success, 1 program or handler error, 2 usage or set-up
//! error. Logging goes to stderr, filtered by `CYXLA_LOG`, a `tracing`
//! filter (default `warn`). Each crate logs under its own name: this
//! program `cyxla_host`, the sandbox `cyxla_sandbox`, the set-up
//! `cyxla_setup`, the native side `plugin_glue` and `cyxla_lapack`. A filter
//! that names only targets turns every other one off, warnings included,
//! so give a level first, e.g.
//! `CYXLA_LOG=warn,cyxla_host=debug,cyxla_sandbox=debug`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use cyxla_host::cli::launch::{self, Flags};
use cyxla_host::cli::new::{self as scaffold, Language, NewArgs};
use cyxla_host::cli::run::{self, Failure, RunArgs};
use cyxla_host::cli::{check, kernelspec, list, metrics, policy, sdk};
use cyxla_host::process;
use cyxla_lapack as lapack;
use cyxla_sandbox::stats;

/// Run XLA custom-call kernels on a PJRT plugin: trusted natives, the
/// native LAPACK targets, and wasm guests in sandboxes.
///
/// `cyxla-host [HOST OPTIONS] -- COMMAND [ARGS]...` runs COMMAND (a Python
/// script, jupyter, a notebook kernel) with the cyxla PJRT plugin
/// configured by these options: JAX inside it runs on platform `cyxla`.
#[derive(Parser, Debug)]
#[command(name = "cyxla-host", version, propagate_version = true)]
#[command(subcommand_negates_reqs = true)]
struct Cli {
    #[command(flatten)]
    flags: Flags,
    #[command(subcommand)]
    command: Option<Command>,
    /// The command to run with the cyxla PJRT plugin (after `--`)
    #[arg(last = true, value_name = "COMMAND")]
    exec: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compile and run a StableHLO program (MLIR text or bytecode)
    Run(RunCmd),
    /// Show the guests: file, sha256, targets, allowed or not, rejections
    List,
    /// Validate one guest module (or a folder): its targets and imports
    Check {
        /// The .wasm file or folder to check
        path: PathBuf,
    },
    /// Tenant policy files: `policy check FILE`
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Scaffold a guest project (Rust or C++) with one target, a native
    /// unit test and call_from_jax.py
    New(NewCmd),
    /// Where the guest SDK is (headers, runtime, CMake toolchain file, Rust
    /// crate), its ABI and XLA FFI versions, and the build tools it will use
    Sdk {
        /// The guest SDK [default: the one `new` would use]
        #[arg(long, value_name = "PATH")]
        sdk: Option<PathBuf>,
    },
    /// Jupyter kernel specs: `kernelspec install` (kernels under cyxla-host
    /// with a tenant policy)
    Kernelspec {
        #[command(subcommand)]
        command: KernelspecCommand,
    },
    /// Run a recorded failed call again (`--record DIR` records them), on the
    /// recorded guest or on the one --guests serves the target from
    Replay {
        /// The record: a folder recording wrote (or its call.toml)
        record: PathBuf,
        /// Print each operand's type, shape and first elements, and the
        /// attributes
        #[arg(long)]
        show: bool,
        /// After a successful replay, write each result as out<k>.npy here
        #[arg(long, value_name = "DIR")]
        output_dir: Option<PathBuf>,
    },
    /// Check the installation as the launcher would use it: the plugin
    /// library, the real PJRT plugin, the Python and its JAX, OpenBLAS, the
    /// guests, the compile cache, the policy and tenant, the kernel spec
    Doctor {
        /// The Python the launcher runs programs with [default: the
        /// `python` beside cyxla-host (its venv's), else the checkout's
        /// .venv/bin/python, else `python3` on the PATH]
        #[arg(long, value_name = "PATH")]
        python: Option<PathBuf>,
    },
    /// Every cyxla process's figures on this machine (the metrics folder,
    /// CYXLA_METRICS), per tenant, user and target, in Prometheus's text
    /// format: printed, written for node_exporter, or served over HTTP
    Metrics {
        /// The metrics folder the processes write to
        #[arg(long, value_name = "DIR")]
        folder: PathBuf,
        /// Serve the figures at http://ADDR/metrics (e.g. 127.0.0.1:9477)
        /// until killed
        #[arg(long, value_name = "ADDR", conflicts_with = "textfile")]
        listen: Option<String>,
        /// Write the figures to FILE (for node_exporter's textfile
        /// collector) instead of printing them
        #[arg(long, value_name = "FILE")]
        textfile: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum KernelspecCommand {
    /// Write PREFIX/share/jupyter/kernels/NAME/kernel.json, whose kernels
    /// start as `cyxla-host --policy POLICY -- PYTHON -m ipykernel_launcher`
    Install {
        /// The tenant policy [default: /etc/cyxla/policy.toml]
        #[arg(long, value_name = "FILE")]
        policy: Option<PathBuf>,
        /// The installation prefix (system-wide: every user's Jupyter sees it)
        #[arg(long, value_name = "DIR", default_value = "/usr/local")]
        prefix: PathBuf,
        /// The kernel's name
        #[arg(long, default_value = "cyxla")]
        name: String,
        /// What JupyterLab shows
        #[arg(long, default_value = "Python 3 (cyxla)")]
        display_name: String,
        /// The Python with JAX and ipykernel [default: the `python` beside
        /// cyxla-host (its venv's), else the checkout's .venv/bin/python]
        #[arg(long, value_name = "PATH")]
        python: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum PolicyCommand {
    /// Validate a policy file: every problem, with line and column
    Check {
        /// The policy file (TOML)
        file: PathBuf,
    },
}

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("language").required(true).args(["rust", "cpp"]))]
struct NewCmd {
    /// The target name (also the crate or module name): [A-Za-z_][A-Za-z0-9_]*
    name: String,
    /// The project directory [default: ./NAME]
    dir: Option<PathBuf>,
    /// A Rust guest (cyxla-guest-sdk crate)
    #[arg(long)]
    rust: bool,
    /// A C++ guest (xla/ffi/api/ffi.h, CMake toolchain)
    #[arg(long)]
    cpp: bool,
    /// The guest SDK [default: the one installed with this cyxla-host (the wheel's jax_plugins/cyxla/sdk), else guest-sdk of the checkout it was built in]
    #[arg(long, value_name = "PATH")]
    sdk: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct RunCmd {
    /// The program: StableHLO text, or the bytecode jax.export serializes
    program: PathBuf,
    /// An input .npy file, one per program parameter, in order
    #[arg(long = "input", short = 'i', value_name = "X.npy")]
    inputs: Vec<PathBuf>,
    /// Write each output as out<k>.npy into this directory
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Print one JSON document instead of one line per output
    #[arg(long)]
    json: bool,
    /// Run replicated over this many devices, the same inputs on each
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    devices: u16,
    /// Print per-target statistics (calls, errors by kind, time in the
    /// guest and copying, bytes, instances) to stderr at the end
    #[arg(long)]
    stats: bool,
}

fn main() -> ExitCode {
    quiet_xla_logging();
    // SAFETY: first thing in main, before any other thread exists.
    let kernels = unsafe { lapack::choose_openblas_kernels() };
    let cli = Cli::parse();
    init_logging();
    tracing::debug!(%kernels, "OpenBLAS kernels");
    match real_main(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {}", cyxla_sandbox::report(failure.error().as_ref()));
            ExitCode::from(failure.exit_code())
        }
    }
}

/// The native LAPACK line of `list`: off, or the library and its kernels.
fn lapack_summary(no_lapack: bool) -> String {
    let count = lapack::target_names().len();
    if no_lapack {
        return format!("native LAPACK: {count} targets, not registered (--no-lapack)");
    }
    match list::lapack_library() {
        Ok(lib) => format!("native LAPACK: {count} targets on {lib}"),
        Err(e) => format!("native LAPACK: {count} targets, calls will fail: {e}"),
    }
}

/// Prints a checker's report and, unless it is clean, fails as a program
/// error saying `problem`.
fn print_report(text: &str, ok: bool, problem: impl FnOnce() -> String) -> Result<(), Failure> {
    print!("{text}");
    if ok {
        Ok(())
    } else {
        Err(Failure::Program(anyhow::anyhow!(problem())))
    }
}

/// XLA's plugins log at INFO to stderr through TSL logging ("cpu_device_count
/// set via create_options"); keep them to warnings unless the user chose.
fn quiet_xla_logging() {
    if std::env::var_os("TF_CPP_MIN_LOG_LEVEL").is_none() {
        // SAFETY: called first thing in main, before any other thread exists,
        // so nothing reads the environment concurrently.
        unsafe { std::env::set_var("TF_CPP_MIN_LOG_LEVEL", "1") };
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env(cyxla_host::config::LOG_ENV)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

fn real_main(cli: Cli) -> Result<(), Failure> {
    let command = match cli.command {
        Some(command) => {
            if !cli.exec.is_empty() {
                return Err(Failure::Setup(anyhow::anyhow!(
                    "`-- {}` runs a command; it cannot follow a subcommand",
                    cli.exec.join(" ")
                )));
            }
            command
        }
        None if !cli.exec.is_empty() => {
            return launch::launch(&cli.flags, &cli.exec).map_err(Failure::Setup);
        }
        None => {
            return Err(Failure::Setup(anyhow::anyhow!(
                "nothing to do: give a subcommand (run, list, check, new) or `-- COMMAND` \
                 (see cyxla-host --help)"
            )));
        }
    };
    match command {
        Command::Replay {
            record,
            show,
            output_dir,
        } => {
            let args = cyxla_host::cli::replay::ReplayArgs {
                record,
                guests: cli.flags.value("guests").map(PathBuf::from),
                show,
                output_dir,
            };
            print!("{}", cyxla_host::cli::replay::replay(&args)?);
            Ok(())
        }
        Command::Run(cmd) => {
            if cmd.stats {
                stats::enable_timing();
            }
            let show_stats = cmd.stats;
            let setup = cli.flags.config().map_err(Failure::Setup)?.setup;
            // SAFETY: the operator names the plugin (--plugin, or the
            // installed one) and the trusted natives (--native): this is
            // their statement that both are native code to run.
            let host = unsafe { process::start(&setup) }.map_err(Failure::Setup)?;
            let args = RunArgs {
                program: cmd.program,
                inputs: cmd.inputs,
                output_dir: cmd.output_dir,
                json: cmd.json,
                devices: usize::from(cmd.devices),
            };
            let no_lapack = !setup.lapack;
            let hint = |target: &str| {
                if no_lapack && lapack::target_names().contains(&target) {
                    return Some(format!(
                        "`{target}` is a native LAPACK target, turned off by --no-lapack: \
                         drop the flag"
                    ));
                }
                host.hint_for_unregistered(target)
            };
            let outputs = run::run(&host.plugin, &args, &hint);
            if show_stats {
                eprint!("{}", stats::table(&stats::snapshot()));
            }
            let outputs = outputs?;
            if args.json {
                print!("{}", run::format_json(&args.program, &outputs));
            } else {
                print!("{}", run::format_lines(&outputs, args.devices));
            }
            Ok(())
        }
        Command::List if cli.flags.value("policy").is_some() => {
            let (_, config) = launch::configuration(&cli.flags).map_err(Failure::Setup)?;
            if config.tenant.is_none() {
                return Err(Failure::Setup(anyhow::anyhow!("--policy gave no tenant")));
            }
            println!("{}", policy::describe(&config));
            let setup = &config.setup;
            for dir in &setup.guests {
                println!("\n== {}", dir.display());
                if !dir.is_dir() {
                    println!("(no such folder)");
                    continue;
                }
                let text = list::list_with_limits(dir, &setup.allow, &setup.limits)
                    .map_err(Failure::Setup)?;
                print!("{text}");
            }
            println!("\n{}", lapack_summary(!setup.lapack));
            Ok(())
        }
        Command::List => {
            let setup = cli.flags.config().map_err(Failure::Setup)?.setup;
            for dir in setup.guests_dirs() {
                let text = list::list_with_limits(&dir, &setup.allow, &setup.limits)
                    .map_err(Failure::Setup)?;
                print!("{text}");
            }
            println!("\n{}", lapack_summary(!setup.lapack));
            Ok(())
        }
        Command::Policy {
            command: PolicyCommand::Check { file },
        } => {
            let report = policy::check(&file);
            print_report(&report.text, report.ok, || {
                format!("{} has {} problem(s)", file.display(), report.problems)
            })
        }
        Command::New(cmd) => {
            let args = NewArgs {
                dir: cmd.dir.unwrap_or_else(|| PathBuf::from(&cmd.name)),
                name: cmd.name,
                language: if cmd.rust {
                    Language::Rust
                } else {
                    Language::Cpp
                },
                sdk: cmd.sdk,
            };
            let made = scaffold::new(&args).map_err(Failure::Setup)?;
            println!("created {}:", made.dir.display());
            for file in &made.files {
                println!("  {}", file.display());
            }
            println!("next:");
            for line in made.next_steps.lines() {
                println!("  {line}");
            }
            Ok(())
        }
        Command::Sdk { sdk: path } => {
            let report = sdk::describe(path.as_deref()).map_err(Failure::Setup)?;
            print!("{}", report.text);
            Ok(())
        }
        Command::Kernelspec {
            command:
                KernelspecCommand::Install {
                    policy,
                    prefix,
                    name,
                    display_name,
                    python,
                },
        } => {
            let python = python.or_else(kernelspec::default_python).ok_or_else(|| {
                Failure::Setup(anyhow::anyhow!(
                    "no Python found beside this cyxla-host (its venv's bin/python, or the \
                     checkout's .venv/bin/python): pass --python PATH"
                ))
            })?;
            let host = std::env::current_exe().map_err(|e| {
                Failure::Setup(anyhow::anyhow!(
                    "cannot find the cyxla-host executable: {e}"
                ))
            })?;
            let spec = kernelspec::KernelSpec {
                name,
                display_name,
                host,
                policy: policy.unwrap_or_else(kernelspec::default_policy),
                python,
                prefix,
            };
            let file = kernelspec::install(&spec).map_err(Failure::Setup)?;
            println!("installed {}", file.display());
            Ok(())
        }
        Command::Metrics {
            folder,
            listen,
            textfile,
        } => {
            let output = match (listen, textfile) {
                (Some(addr), _) => metrics::Output::Listen(addr),
                (None, Some(file)) => metrics::Output::Textfile(file),
                (None, None) => metrics::Output::Print,
            };
            let policy = cli
                .flags
                .value("policy")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os(cyxla_host::config::POLICY_ENV).map(PathBuf::from))
                .or_else(|| Some(kernelspec::default_policy()).filter(|p| p.is_file()));
            metrics::run(&folder, policy.as_deref(), &output).map_err(Failure::Setup)
        }
        Command::Doctor { python } => {
            let report = cyxla_host::cli::doctor::doctor(&cli.flags, python.as_deref());
            print_report(&report.text(), report.failures() == 0, || {
                format!("{} check(s) failed", report.failures())
            })
        }
        Command::Check { path } => {
            let limits = cli.flags.config().map_err(Failure::Setup)?.setup.limits;
            let report = check::check_with_limits(&path, &limits).map_err(Failure::Setup)?;
            print_report(&report.text, report.ok, || {
                format!("{} was rejected", path.display())
            })
        }
    }
}
