//! `cyxla-host list`: what is in the guests folder, which targets each guest
//! serves, what policy allows, and why a file is rejected.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;

use cyxla_sandbox::AllowList;
use cyxla_sandbox::Sandbox;
use cyxla_sandbox::limits::Limits;

/// Loads `guests_dir` (with default [`Limits`]) and describes it under the
/// allow-list `allowed`.
///
/// # Errors
///
/// If the folder cannot be read or the engine cannot be built.
pub fn list(guests_dir: &Path, allowed: &AllowList) -> anyhow::Result<String> {
    list_with_limits(guests_dir, allowed, &Limits::default())
}

/// [`list`] with explicit limits (they decide, e.g., the largest module
/// accepted).
///
/// # Errors
///
/// If the folder cannot be read or the engine cannot be built.
pub fn list_with_limits(
    guests_dir: &Path,
    allowed: &AllowList,
    limits: &Limits,
) -> anyhow::Result<String> {
    // Every guest is compiled and checked, allowed or not: the list says
    // why each file is accepted or rejected.
    let context = || format!("cannot list the guests in {}", guests_dir.display());
    let engine = cyxla_sandbox::Engine::new(limits).with_context(context)?;
    let guests = cyxla_sandbox::Guests::load_dir(&engine, guests_dir).with_context(context)?;
    let sandbox = Sandbox::with_guests(guests, allowed.clone());
    Ok(report(&sandbox))
}

/// Describes an already loaded sandbox (what `list` prints).
pub fn report(sandbox: &Sandbox) -> String {
    let guests = sandbox.guests();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "guests in {}: {} loaded, {} rejected; policy allows {}",
        guests.dir().display(),
        guests.guests().len(),
        guests.rejected().len(),
        sandbox.policy()
    );
    let width = guests
        .guests()
        .iter()
        .flat_map(|g| g.targets())
        .map(|t| t.name.len())
        .max()
        .unwrap_or(0);
    for guest in guests.guests() {
        let sha = guest.sha256_hex();
        let _ = writeln!(
            out,
            "\n{}  ({}, sha256 {}{})",
            guest.file_name(),
            approximate_size(guest.size()),
            &sha[..12],
            if guest.uses_wasi() {
                ", imports WASI"
            } else {
                ""
            }
        );
        for target in guest.targets() {
            let status = if guests.conflict(&target.name).is_some() {
                "conflict: declared by several guests"
            } else if sandbox.policy().allows(&target.name) {
                "allowed"
            } else {
                "not allowed"
            };
            let _ = writeln!(
                out,
                "  {:<width$}  {:<11}  export `{}`",
                target.name, status, target.export
            );
        }
    }
    if !guests.rejected().is_empty() {
        let _ = writeln!(out, "\nrejected:");
        for rejected in guests.rejected() {
            let name = rejected
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let _ = writeln!(out, "  {name}: {}", rejected.error);
        }
    }
    if !guests.conflicts().is_empty() {
        let _ = writeln!(out, "\nconflicts:");
        for conflict in guests.conflicts() {
            let _ = writeln!(out, "  {}", conflict.to_error());
        }
    }
    let unserved = sandbox.unserved();
    if !unserved.is_empty() {
        let names: Vec<String> = unserved.iter().map(|t| format!("`{t}`")).collect();
        let _ = writeln!(
            out,
            "\nallowed but served by no guest: {}",
            names.join(", ")
        );
    }
    out
}

/// `n` bytes as `N bytes`, `N.N KiB` or `N.N MiB`.
fn approximate_size(n: u64) -> String {
    // Display only: the rounding of `as f64` does not matter here.
    let value = n as f64;
    if n < 1 << 10 {
        format!("{n} bytes")
    } else if n < 1 << 20 {
        format!("{:.1} KiB", value / 1024.0)
    } else {
        format!("{:.1} MiB", value / (1024.0 * 1024.0))
    }
}

/// The LAPACK library the native LAPACK targets call (the OpenBLAS wheels
/// preferred, as the plugin prefers them): its name, configuration and
/// kernels, as `list` and `doctor` show it; else why none loads.
///
/// # Errors
///
/// No LAPACK library loads: every library tried, with its error.
pub fn lapack_library() -> Result<String, &'static cyxla_lapack::LoadError> {
    cyxla_lapack::prefer(crate::process::openblas_wheels());
    let lib = cyxla_lapack::library()?;
    Ok(format!(
        "{} ({}); kernels {}{}",
        lib.name(),
        lib.config().unwrap_or("not OpenBLAS"),
        lib.core_name().unwrap_or("unknown"),
        cyxla_lapack::kernel_choice()
            .map(|choice| format!(", {choice}"))
            .unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_short() {
        assert_eq!(approximate_size(512), "512 bytes");
        assert_eq!(approximate_size(54901), "53.6 KiB");
        assert_eq!(approximate_size(3 << 20), "3.0 MiB");
    }
}
