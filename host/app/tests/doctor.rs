//! `cyxla-host doctor` on this checkout after scripts/setup.sh (the .venv's
//! Python, the bundled guests, the real plugin): every line ok; then each
//! check broken in turn, which fails with exit 1 and a line naming what is
//! wrong and the fix.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{assert_exit, text};
use cyxla_tests::{Plugin, venv_python};

/// The checks' names, in the order `doctor` prints them.
const CHECKS: [&str; 10] = [
    "plugin library",
    "real PJRT plugin",
    "Python",
    "JAX",
    "JAX plugin package",
    "OpenBLAS",
    "guests folder",
    "compile cache",
    "policy",
    "kernel spec",
];

fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("doctor-helper-")
        .tempdir()
        .unwrap()
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Writes `JUPYTER/kernels/cyxla/kernel.json` with `argv`.
fn kernel_spec(jupyter: &Path, argv: &[&str]) {
    let dir = jupyter.join("kernels/cyxla");
    std::fs::create_dir_all(&dir).unwrap();
    let json = serde_json::json!({
        "argv": argv,
        "display_name": "Python 3 (cyxla)",
        "language": "python",
    });
    std::fs::write(dir.join("kernel.json"), json.to_string()).unwrap();
}

/// A good installation: this checkout's cyxla-host, the .venv's Python,
/// the bundled guests and the installed plugin; a private compile cache, a
/// home of its own and a kernel spec in `dir`; no CYXLA_* variable of the
/// caller's.
struct Good {
    dir: tempfile::TempDir,
    host: PathBuf,
    python: PathBuf,
}

impl Good {
    fn new() -> Good {
        let dir = temp_dir();
        let cache = dir.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        set_mode(&cache, 0o700);
        std::fs::create_dir(dir.path().join("home")).unwrap();
        let python = venv_python();
        let host = env!("CARGO_BIN_EXE_cyxla-host");
        kernel_spec(
            &dir.path().join("jupyter"),
            &[
                host,
                "--allow",
                "rms_norm",
                "--",
                python.to_str().unwrap(),
                "-m",
                "ipykernel_launcher",
                "-f",
                "{connection_file}",
            ],
        );
        Good {
            dir,
            host: PathBuf::from(host),
            python,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `cyxla-host ARGS doctor --python VENV` in the good installation, as
    /// `change` alters it.
    fn run(&self, args: &[&str], change: impl FnOnce(&mut Command)) -> Output {
        let mut cmd = self.command(args);
        cmd.arg("--python").arg(&self.python);
        change(&mut cmd);
        cmd.output().expect("cyxla-host runs")
    }

    /// `cyxla-host ARGS doctor` in the good installation, without `--python`.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.host);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("CYXLA_") {
                cmd.env_remove(name);
            }
        }
        cmd.env("CYXLA_CACHE_DIR", self.path("cache"))
            .env("HOME", self.path("home"))
            .env("JUPYTER_PATH", self.path("jupyter"))
            .args(args)
            .arg("doctor");
        cmd
    }
}

/// The line of check `name`, which must be there.
#[track_caller]
fn line<'t>(stdout: &'t str, name: &str) -> &'t str {
    stdout
        .lines()
        .find(|l| {
            l.get(5..)
                .is_some_and(|rest| rest.starts_with(&format!("{name}: ")))
        })
        .unwrap_or_else(|| panic!("no `{name}` line in:\n{stdout}"))
}

/// Fails unless `out` is doctor's exit 1 with check `name` failing (and
/// only the checks in `also` besides), its line holding each of `needles`
/// and a fix holding `fix`; returns the line.
#[track_caller]
fn assert_fails(out: &Output, name: &str, also: &[&str], needles: &[&str], fix: &str) -> String {
    assert_exit(out, 1, name);
    let stdout = text(&out.stdout);
    let line = line(&stdout, name);
    assert!(line.starts_with(&format!("FAIL {name}: ")), "{stdout}");
    for needle in needles {
        assert!(line.contains(needle), "`{needle}` not in:\n{line}");
    }
    let (_, given) = line
        .split_once("; fix: ")
        .unwrap_or_else(|| panic!("no fix in:\n{line}"));
    assert!(given.contains(fix), "`{fix}` not in the fix:\n{line}");
    for other in stdout.lines().filter(|l| l.starts_with("FAIL ")) {
        assert!(
            other.starts_with(&format!("FAIL {name}: "))
                || also
                    .iter()
                    .any(|a| other.starts_with(&format!("FAIL {a}: "))),
            "another check failed too:\n{stdout}"
        );
    }
    assert!(
        text(&out.stderr).contains("check(s) failed"),
        "{}",
        text(&out.stderr)
    );
    line.to_owned()
}

#[test]
fn a_good_installation_passes_every_check() {
    let good = Good::new();
    let out = good.run(&[], |_| {});
    assert_exit(&out, 0, "doctor on a good installation");
    let stdout = text(&out.stdout);
    for l in stdout.lines() {
        assert!(l.starts_with("ok   "), "not ok:\n{stdout}");
    }
    for name in CHECKS {
        line(&stdout, name);
    }
    assert!(
        line(&stdout, "plugin library").contains("libcyxla_pjrt.so (cyxla "),
        "{stdout}"
    );
    assert!(
        line(&stdout, "real PJRT plugin").contains("(PJRT 0."),
        "{stdout}"
    );
    assert!(line(&stdout, "JAX").contains("jax 0."), "{stdout}");
    let guests = line(&stdout, "guests folder");
    assert!(
        guests.contains("guests/out") && guests.contains("rms_norm"),
        "{stdout}"
    );
    assert!(line(&stdout, "kernel spec").contains("jupyter/kernels/cyxla/kernel.json"));
}

#[test]
fn a_policy_that_maps_this_user_names_its_tenant() {
    let good = Good::new();
    let policy = good.path("policy.toml");
    std::fs::write(
        &policy,
        "default_tenant = \"student\"\n[tenants.student]\nallow = [\"rms_norm\"]\n",
    )
    .unwrap();
    let out = good.run(&["--policy", policy.to_str().unwrap()], |_| {});
    assert_exit(&out, 0, "doctor with a good policy");
    let stdout = text(&out.stdout);
    assert!(line(&stdout, "policy").contains("1 tenant(s): student"));
    assert!(
        line(&stdout, "tenant").starts_with("ok   tenant: `student` for user `"),
        "{stdout}"
    );
    assert!(line(&stdout, "guests folder").contains("allowed: `rms_norm`"));
}

#[test]
fn a_cyxla_host_without_its_plugin_library_fails() {
    let mut good = Good::new();
    // The same program in a folder of its own: no libcyxla_pjrt.so beside
    // it and no installed package, so the plugin and the guests are named.
    let bin = good.path("bin");
    std::fs::create_dir(&bin).unwrap();
    let alone = bin.join("cyxla-host");
    std::fs::hard_link(&good.host, &alone)
        .or_else(|_| std::fs::copy(&good.host, &alone).map(drop))
        .unwrap();
    good.host = alone;
    let plugin = Plugin::P115.path();
    let guests = common::bundled_guests();
    let args = [
        "--plugin",
        plugin.to_str().unwrap(),
        "--guests",
        guests.to_str().unwrap(),
    ];
    let out = good.run(&args, |_| {});
    assert_fails(
        &out,
        "plugin library",
        &[],
        &[&format!(
            "{} is missing",
            bin.join("libcyxla_pjrt.so").display()
        )],
        "cargo build -p cyxla-pjrt",
    );
}

#[test]
fn a_plugin_that_does_not_exist_fails() {
    let out = Good::new().run(&["--plugin", "/nonexistent"], |_| {});
    assert_fails(
        &out,
        "real PJRT plugin",
        &[],
        &["/nonexistent does not exist"],
        "pip install fastatomstruct-xla-cpu",
    );
}

#[test]
fn a_missing_guests_folder_fails() {
    let good = Good::new();
    let missing = good.path("no-guests");
    let out = good.run(&["--guests", missing.to_str().unwrap()], |_| {});
    assert_fails(
        &out,
        "guests folder",
        &[],
        &[&format!("{} does not exist", missing.display())],
        "--guests DIR",
    );
}

#[test]
fn an_allowed_target_no_guest_serves_fails() {
    let out = Good::new().run(&["--allow", "no_such_target"], |_| {});
    assert_fails(
        &out,
        "allowed targets",
        &[],
        &["`no_such_target`"],
        "allow only targets the guests serve",
    );
}

#[test]
fn a_bad_policy_file_fails() {
    let good = Good::new();
    let policy = good.path("policy.toml");
    std::fs::write(&policy, "[tenants.student]\ncolour = 1\n").unwrap();
    let out = good.run(&["--policy", policy.to_str().unwrap()], |_| {});
    assert_fails(
        &out,
        "policy",
        &[],
        &["policy.toml", "line 2", "unknown field `colour`"],
        "cyxla-host policy check",
    );
}

#[test]
fn a_cache_folder_others_may_write_fails() {
    let good = Good::new();
    let shared = good.path("shared-cache");
    std::fs::create_dir(&shared).unwrap();
    set_mode(&shared, 0o777);
    let out = good.run(&[], |cmd| {
        cmd.env("CYXLA_CACHE_DIR", &shared);
    });
    assert_fails(
        &out,
        "compile cache",
        &[],
        &[&shared.display().to_string(), "written by others"],
        "chmod go-w",
    );
}

/// Without `--python`, doctor checks the Python of cyxla-host's own
/// environment (the `python` beside it, else the checkout's `.venv`, as
/// `kernelspec install` takes it), not whatever `python3` the `PATH` has:
/// here one that cannot import JAX.
#[test]
fn without_python_it_checks_the_python_of_cyxla_hosts_environment() {
    let good = Good::new();
    let bin = good.path("bin");
    std::fs::create_dir(&bin).unwrap();
    let other = bin.join("python3");
    std::fs::write(
        &other,
        "#!/bin/sh\necho 'not the Python to check' >&2\nexit 1\n",
    )
    .unwrap();
    set_mode(&other, 0o755);
    let out = good
        .command(&[])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .expect("cyxla-host runs");
    let stdout = text(&out.stdout);
    let python = line(&stdout, "Python");
    assert!(
        python.starts_with("ok")
            && python.contains(&format!(
                "{} (cyxla-host's environment)",
                venv_python().display()
            )),
        "{stdout}"
    );
    assert!(line(&stdout, "JAX").starts_with("ok"), "{stdout}");
}

#[test]
fn a_python_without_jax_fails() {
    let good = Good::new();
    let venv = good.path("venv");
    let made = Command::new(venv_python())
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .output()
        .expect("python -m venv runs");
    assert_exit(&made, 0, "python -m venv");
    let mut good = good;
    good.python = venv.join("bin/python");
    let out = good.run(&[], |_| {});
    let line = assert_fails(
        &out,
        "JAX",
        &["JAX plugin package"],
        &["No module named 'jax'"],
        "pip install",
    );
    assert!(line.contains(&venv.display().to_string()), "{line}");
    assert!(
        line_of(&out, "JAX plugin package").contains("jax_plugins.cyxla is not installed"),
        "{}",
        text(&out.stdout)
    );
}

fn line_of(out: &Output, name: &str) -> String {
    line(&text(&out.stdout), name).to_owned()
}

#[test]
fn a_kernel_spec_naming_a_missing_program_fails() {
    let good = Good::new();
    let jupyter = good.path("other-jupyter");
    let missing = good.path("missing-python");
    kernel_spec(
        &jupyter,
        &[
            env!("CARGO_BIN_EXE_cyxla-host"),
            "--",
            missing.to_str().unwrap(),
            "-m",
            "ipykernel_launcher",
        ],
    );
    let out = good.run(&[], |cmd| {
        cmd.env("JUPYTER_PATH", &jupyter);
    });
    assert_fails(
        &out,
        "kernel spec",
        &[],
        &[
            "other-jupyter/kernels/cyxla/kernel.json",
            &format!("{}, which does not exist", missing.display()),
        ],
        "cyxla-host kernelspec install",
    );
}

#[test]
fn a_lapack_library_that_does_not_load_fails() {
    let out = Good::new().run(&[], |cmd| {
        cmd.env("CYXLA_LAPACK", "/nonexistent.so");
    });
    assert_fails(
        &out,
        "OpenBLAS",
        &[],
        &["/nonexistent.so", "every native LAPACK call will fail"],
        "CYXLA_LAPACK",
    );
}
