//! `cyxla-host policy check FILE`, and the tenant summary of
//! `cyxla-host --policy FILE --tenant T list`.

use std::fmt::Write as _;
use std::path::Path;

use crate::tenants::{Policy, Tenant};

/// What `policy check` prints, and whether the file is good.
#[derive(Debug)]
pub struct Report {
    /// The text to print.
    pub text: String,
    /// Whether the policy has no problem.
    pub ok: bool,
    /// How many problems it has.
    pub problems: usize,
}

/// Checks the policy at `path`: syntax, keys and types, then every
/// problem of its contents (unknown tenants, bad rules and pins, limits out
/// of range, pins no module satisfies), each with line and column.
pub fn check(path: &Path) -> Report {
    let policy = match Policy::load(path) {
        Ok(policy) => policy,
        Err(e) => {
            return Report {
                text: format!("error: {e}\n"),
                ok: false,
                problems: 1,
            };
        }
    };
    let mut problems = policy.check();
    problems.extend(policy.check_pins());
    let mut text = String::new();
    for problem in &problems {
        let _ = writeln!(text, "error: {problem}");
    }
    let tenants: Vec<&str> = policy.tenants().collect();
    if problems.is_empty() {
        let _ = writeln!(
            text,
            "{}: ok, {} tenant(s): {}",
            path.display(),
            tenants.len(),
            tenants.join(", ")
        );
    }
    Report {
        ok: problems.is_empty(),
        problems: problems.len(),
        text,
    }
}

/// A tenant's settings as `list` shows them.
pub fn describe(tenant: &Tenant) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "tenant `{}` ({})", tenant.name, tenant.selected_by);
    let folders: Vec<String> = tenant
        .guests
        .iter()
        .map(|g| g.display().to_string())
        .collect();
    let _ = writeln!(
        text,
        "  guests folders: {}",
        if folders.is_empty() {
            "the bundled guests".to_owned()
        } else {
            folders.join(", ")
        }
    );
    let _ = writeln!(text, "  allowed: {}", tenant.allow);
    let _ = writeln!(
        text,
        "  native LAPACK: {}; native handlers from client code: {}",
        if tenant.lapack { "on" } else { "off" },
        if tenant.allow_native {
            "allowed"
        } else {
            "refused"
        }
    );
    if let Some(devices) = tenant.devices {
        let _ = writeln!(text, "  devices: {devices}");
    }
    let _ = writeln!(
        text,
        "  limits: memory {}, call_timeout {:?}, instances {}",
        tenant.limits.memory_display(),
        tenant.limits.call_timeout,
        tenant.limits.instances
    );
    for (target, pin) in &tenant.pins {
        let _ = writeln!(text, "  pin: `{target}` only from sha256 {pin}");
    }
    text.trim_end().to_owned()
}
