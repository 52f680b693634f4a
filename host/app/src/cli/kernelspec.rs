//! `cyxla-host kernelspec install`: a Jupyter kernel spec whose kernels start
//! under this `cyxla-host` with a tenant policy, system-wide by default
//! (`/usr/local/share/jupyter/kernels/cyxla/kernel.json`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::config::SYSTEM_POLICY;
use crate::process::workspace_roots;
use crate::tenants::Policy;

/// What to install.
#[derive(Clone, Debug)]
pub struct KernelSpec {
    /// The kernel's name (its folder).
    pub name: String,
    /// What JupyterLab shows.
    pub display_name: String,
    /// The `cyxla-host` the kernels start under.
    pub host: PathBuf,
    /// The tenant policy the kernels run under.
    pub policy: PathBuf,
    /// The Python with JAX, ipykernel and `jax_plugins.cyxla`.
    pub python: PathBuf,
    /// The prefix: the spec goes into `PREFIX/share/jupyter/kernels/NAME`.
    pub prefix: PathBuf,
}

/// The Python of the environment this `cyxla-host` is installed in (the
/// `python` beside it, as in a venv's `bin/` where the wheel puts it), else
/// the venv of the workspace it was built in (`.venv/bin/python`), if there
/// is one.
pub fn default_python() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("python")));
    beside
        .into_iter()
        .chain(
            workspace_roots()
                .into_iter()
                .map(|root| root.join(".venv/bin/python")),
        )
        .find(|p| p.is_file())
}

/// The default policy: the machine's.
pub fn default_policy() -> PathBuf {
    PathBuf::from(SYSTEM_POLICY)
}

/// `kernel.json`'s text.
pub fn kernel_json(spec: &KernelSpec) -> String {
    let text = |p: &Path| p.to_string_lossy().into_owned();
    let json = serde_json::json!({
        "argv": [
            text(&spec.host), "--policy", text(&spec.policy), "--",
            text(&spec.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"
        ],
        "display_name": spec.display_name,
        "language": "python",
        "metadata": {"debugger": false},
    });
    let mut out = serde_json::to_string_pretty(&json).unwrap_or_default();
    out.push('\n');
    out
}

/// Checks `spec` (the policy parses and has no problem, the Python and the
/// host exist, the name is a folder name) and writes its `kernel.json`
/// (folders mode 0755, the file 0644: every user reads it).
///
/// # Errors
///
/// What is wrong with `spec`, or what could not be written.
pub fn install(spec: &KernelSpec) -> Result<PathBuf> {
    if spec.name.is_empty()
        || !spec
            .name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    {
        bail!(
            "kernel name `{}`: use letters, digits, `-`, `_`, `.`",
            spec.name
        );
    }
    for (what, path) in [("cyxla-host", &spec.host), ("Python", &spec.python)] {
        if !path.is_absolute() || !path.is_file() {
            bail!(
                "the {what} {} is not an existing absolute path",
                path.display()
            );
        }
    }
    if !spec.policy.is_absolute() {
        bail!(
            "the policy {} must be an absolute path (kernels start in the user's folder)",
            spec.policy.display()
        );
    }
    let policy = Policy::load(&spec.policy).map_err(anyhow::Error::msg)?;
    let problems = policy.check();
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    // The kernel spec's command names no tenant: a policy that gives nobody
    // one would let every kernel it starts fail at start-up.
    if let Some(why) = policy.unmapped() {
        bail!(
            "{why}: every kernel of this spec would fail to start (\"no tenant for user\"); \
             add `default_tenant = \"NAME\"` with a `[tenants.NAME]`, or map users in `[users]` \
             or `[groups]`"
        );
    }
    let dir = spec.prefix.join("share/jupyter/kernels").join(&spec.name);
    create_dirs(&dir)?;
    let file = dir.join("kernel.json");
    std::fs::write(&file, kernel_json(spec))
        .with_context(|| format!("cannot write {}", file.display()))?;
    set_mode(&file, 0o644)?;
    Ok(file)
}

fn create_dirs(dir: &Path) -> Result<()> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at
        && !d.exists()
    {
        missing.push(d.to_owned());
        at = d.parent();
    }
    for d in missing.iter().rev() {
        std::fs::create_dir(d).with_context(|| format!("cannot create {}", d.display()))?;
        set_mode(d, 0o755)?;
    }
    Ok(())
}

fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the mode of {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_kernel_spec_under_the_policy() {
        let tmp = std::env::temp_dir().join(format!("cyxla-kernelspec-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let policy = tmp.join("policy.toml");
        std::fs::write(&policy, "[tenants.t]\n[users]\nalice = \"t\"\n").unwrap();
        let exe = std::env::current_exe().unwrap();
        let spec = KernelSpec {
            name: "cyxla".into(),
            display_name: "Python 3 (cyxla)".into(),
            host: exe.clone(),
            policy: policy.clone(),
            python: exe.clone(),
            prefix: tmp.join("prefix"),
        };
        let file = install(&spec).unwrap();
        assert_eq!(
            file,
            tmp.join("prefix/share/jupyter/kernels/cyxla/kernel.json")
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let argv: Vec<&str> = json["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(argv[1..4], ["--policy", policy.to_str().unwrap(), "--"]);
        assert_eq!(
            argv[5..],
            ["-m", "ipykernel_launcher", "-f", "{connection_file}"]
        );
        std::fs::write(&policy, "[users]\nalice = \"ghost\"\n").unwrap();
        let e = install(&spec).unwrap_err().to_string();
        assert!(e.contains("ghost"), "{e}");
        // A policy that gives nobody a tenant: no tenant at all, or tenants
        // that nothing maps.
        for (text, says) in [
            ("[defaults]\ndevices = 2\n", "has no tenant"),
            ("[tenants.t]\n", "maps no user or group"),
        ] {
            std::fs::write(&policy, text).unwrap();
            let e = install(&spec).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("default_tenant"), "{e}");
        }
        std::fs::write(&policy, "default_tenant = \"t\"\n[tenants.t]\n").unwrap();
        install(&spec).unwrap();
        let e = install(&KernelSpec {
            name: "../x".into(),
            ..spec
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("kernel name"), "{e}");
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
