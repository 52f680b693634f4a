//! `cyxla-host policy check FILE`, and the tenant summary of
//! `cyxla-host --policy FILE --tenant T list`.

use std::fmt::Write as _;
use std::path::Path;

use crate::config::Config;
use crate::tenants::Policy;

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

/// A tenant's configuration as `list` shows it.
pub fn describe(config: &Config) -> String {
    let mut text = String::new();
    if let Some(tenant) = &config.tenant {
        let _ = writeln!(text, "tenant `{}` ({})", tenant.name, tenant.selected_by);
    }
    let setup = &config.setup;
    let folders: Vec<String> = setup
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
    let _ = writeln!(text, "  allowed: {}", setup.allow);
    let _ = writeln!(
        text,
        "  native LAPACK: {}; native handlers from client code: {}",
        if setup.lapack { "on" } else { "off" },
        if config.allow_native {
            "allowed"
        } else {
            "refused"
        }
    );
    if let Some(devices) = config.devices {
        let _ = writeln!(text, "  devices: {devices}");
    }
    let _ = writeln!(
        text,
        "  limits: memory {}, call_timeout {:?}, instances {}",
        setup.limits.memory_display(),
        setup.limits.call_timeout,
        setup.limits.instances
    );
    for (target, pin) in &setup.pins {
        let _ = writeln!(text, "  pin: `{target}` only from sha256 {pin}");
    }
    text.trim_end().to_owned()
}
