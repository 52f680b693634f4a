//! The side file of a guest: `x.limits.toml` next to `x.wasm`.

use std::path::{Path, PathBuf};

use super::{LimitError, LimitOverrides, Limits};

impl Limits {
    /// These limits with the side file of the guest at `wasm` applied, if
    /// it has one; returns the side file's path too.
    ///
    /// # Errors
    ///
    /// If the side file exists but cannot be read, does not parse, names an
    /// unknown or engine-wide setting, or sets a value out of range.
    pub fn for_guest(&self, wasm: &Path) -> Result<(Limits, Option<PathBuf>), LimitError> {
        let path = side_file(wasm);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((self.clone(), None)),
            Err(e) => {
                return Err(LimitError {
                    message: format!("cannot read limits file {}: {e}", path.display()),
                    source: Some(path),
                    cause: Some(std::sync::Arc::new(e)),
                });
            }
        };
        let overrides = LimitOverrides::parse(&text).map_err(|message| LimitError {
            message: format!("limits file {} is invalid: {message}", path.display()),
            source: Some(path.clone()),
            cause: None,
        })?;
        let wide = overrides
            .names()
            .into_iter()
            .find_map(|name| Some((name, Limits::scope(name)?.wide()?)));
        if let Some((name, scope)) = wide {
            return Err(LimitError {
                message: format!(
                    "limits file {} is invalid: `{name}` is {scope}; set it with --limit {name}=...",
                    path.display()
                ),
                source: Some(path),
                cause: None,
            });
        }
        let mut limits = self.clone();
        limits.apply(&overrides).map_err(|message| LimitError {
            message: format!("limits file {} is invalid: {message}", path.display()),
            source: Some(path.clone()),
            cause: None,
        })?;
        Ok((limits, Some(path)))
    }
}

/// The side file of the guest module at `wasm`: `x.limits.toml` for
/// `x.wasm`, in the same folder.
pub fn side_file(wasm: &Path) -> PathBuf {
    wasm.with_extension("limits.toml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_file_sits_next_to_the_module() {
        assert_eq!(
            side_file(Path::new("guests/rms_norm.wasm")),
            Path::new("guests/rms_norm.limits.toml")
        );
    }

    #[test]
    fn unreadable_side_file_keeps_the_os_error() {
        let dir = tempfile::tempdir().unwrap();
        let wasm = dir.path().join("g.wasm");
        // A directory where the side file should be: reading it fails.
        std::fs::create_dir(side_file(&wasm)).unwrap();
        let e = Limits::default().for_guest(&wasm).unwrap_err();
        assert!(e.message.starts_with("cannot read limits file "), "{e}");
        let source = std::error::Error::source(&e).expect("a source");
        assert!(
            source.downcast_ref::<std::io::Error>().is_some(),
            "{source:?}"
        );
    }
}
