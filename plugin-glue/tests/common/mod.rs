//! What the tests against the real CPU plugins share: which plugins there
//! are and where `scripts/setup.sh` installs them (the workspace's `.venv`).
//! A missing plugin fails the test with that hint; it never skips.
#![allow(dead_code, reason = "each test binary uses part of this module")]

use std::path::{Path, PathBuf};

use plugin_glue::plugin::Plugin;

/// Little-endian bytes of f32 values.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// f32 values of little-endian bytes.
pub fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The three plugins of the compatibility set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    P115,
    P106,
    P81,
}

pub const ALL: [Which; 3] = [Which::P115, Which::P106, Which::P81];

impl Which {
    /// The label, the path under `site-packages` and the XLA FFI API
    /// version of the runtime inside the plugin.
    fn facts(self) -> (&'static str, &'static str, (i32, i32)) {
        match self {
            Which::P115 => (
                "p115",
                "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so",
                (0, 4),
            ),
            Which::P106 => ("p106", "fastatomstruct_xla_cpu/libpjrt_cpu.so", (0, 3)),
            Which::P81 => ("p81", "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so", (0, 2)),
        }
    }

    /// Path under `site-packages`.
    pub fn relative(self) -> &'static str {
        self.facts().1
    }

    pub fn label(self) -> &'static str {
        self.facts().0
    }

    /// The XLA FFI API version of the runtime inside the plugin.
    pub fn runtime_ffi(self) -> (i32, i32) {
        self.facts().2
    }

    /// `<workspace>/.venv/lib/python*/site-packages/<relative>`.
    pub fn path(self) -> PathBuf {
        let lib = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("plugin-glue lives inside the workspace")
            .join(".venv")
            .join("lib");
        let found = std::fs::read_dir(&lib).ok().and_then(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path().join("site-packages").join(self.relative()))
                .find(|p| p.is_file())
        });
        found.unwrap_or_else(|| {
            panic!(
                "PJRT plugin {self:?} ({}) not found under {}/python*/site-packages: \
                 run scripts/setup.sh to create the venv and install the plugins",
                self.relative(),
                lib.display()
            )
        })
    }

    pub fn load(self) -> Plugin {
        let path = self.path();
        // SAFETY: one of the XLA CPU plugins that scripts/setup.sh installs.
        unsafe { Plugin::load(&path) }.unwrap_or_else(|e| panic!("loading {self:?}: {e}"))
    }
}
