//! `cyxla-host check GUEST`: load one guest file (or every `.wasm` in a
//! folder) exactly as the sandbox would, and say whether it is accepted and
//! why not.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use cyxla_guest_abi as abi;

use cyxla_sandbox::Engine;
use cyxla_sandbox::Guests;
use cyxla_sandbox::limits::Limits;
use cyxla_sandbox::{Guest, Rejected};

/// The outcome of [`check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckReport {
    /// Whether every checked file was accepted.
    pub ok: bool,
    /// What to print.
    pub text: String,
}

impl CheckReport {
    /// The exit code: 0 if every file was accepted, 1 if one was rejected.
    pub fn exit_code(&self) -> std::process::ExitCode {
        if self.ok {
            std::process::ExitCode::SUCCESS
        } else {
            std::process::ExitCode::from(1)
        }
    }
}

/// Checks the guest at `path` (a `.wasm` file, or a folder of them) with
/// default [`Limits`].
///
/// # Errors
///
/// Only if `path` cannot be read at all or the engine cannot be built; a
/// rejected guest is a report with `ok == false`.
pub fn check(path: &Path) -> anyhow::Result<CheckReport> {
    check_with_limits(path, &Limits::default())
}

/// [`check`] with explicit limits.
///
/// # Errors
///
/// As [`check`].
pub fn check_with_limits(path: &Path, limits: &Limits) -> anyhow::Result<CheckReport> {
    let engine = Engine::new(limits)?;
    let mut text = String::new();
    let mut ok = true;
    if path.is_dir() {
        let guests = Guests::load_dir(&engine, path)?;
        for guest in guests.guests() {
            describe_accepted(&mut text, guest);
        }
        for rejected in guests.rejected() {
            ok = false;
            describe_rejected(&mut text, rejected);
        }
        for conflict in guests.conflicts() {
            ok = false;
            let _ = writeln!(text, "conflict: {}", conflict.to_error());
        }
        if guests.guests().is_empty() && guests.rejected().is_empty() {
            let _ = writeln!(text, "no .wasm files in {}", path.display());
        }
    } else {
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        match Guest::load_or_reject(&engine, path) {
            Ok(guest) => describe_accepted(&mut text, &guest),
            Err(rejected) => {
                ok = false;
                describe_rejected(&mut text, &rejected);
            }
        }
    }
    Ok(CheckReport { ok, text })
}

fn describe_accepted(out: &mut String, guest: &Guest) {
    let _ = writeln!(out, "ok: {}", guest.path().display());
    let _ = writeln!(out, "  sha256   {}", guest.sha256_hex());
    let _ = writeln!(out, "  size     {} bytes", guest.size());
    let limits = guest.limits();
    let _ = writeln!(
        out,
        "  limits   memory {}, stack {}, instances {}, call {:?}, instantiate {:?} ({})",
        limits.memory_display(),
        cyxla_sandbox::limits::bytes_display(limits.stack as u64),
        limits.instances,
        limits.call_timeout,
        limits.instantiate_timeout,
        match guest.limits_file() {
            Some(file) => format!("with {}", file.display()),
            None => "defaults and flags".to_owned(),
        }
    );
    for target in guest.targets() {
        let _ = writeln!(
            out,
            "  target   {} (export `{}`)",
            target.name, target.export
        );
    }
    let mut modules: Vec<&str> = guest.imports().iter().map(|(m, _)| m.as_str()).collect();
    modules.dedup();
    for module in modules {
        let names: Vec<&str> = guest
            .imports()
            .iter()
            .filter(|(m, _)| m == module)
            .map(|(_, n)| n.as_str())
            .collect();
        if module == abi::IMPORT_MODULE && names.len() == abi::IMPORTS.len() {
            let _ = writeln!(
                out,
                "  imports  {module}: all {} host functions",
                names.len()
            );
        } else {
            let _ = writeln!(out, "  imports  {module}: {}", names.join(", "));
        }
    }
}

fn describe_rejected(out: &mut String, rejected: &Rejected) {
    let _ = writeln!(out, "rejected: {}", rejected.path.display());
    let _ = writeln!(out, "  {}", rejected.error);
    if !rejected.declared.is_empty() {
        let _ = writeln!(out, "  declares {}", rejected.declared.join(", "));
    }
}
