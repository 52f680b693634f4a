//! Shared set-up of the benches: the default plugin, the native test
//! handlers, and generated StableHLO programs.

use std::fmt::Write as _;
use std::path::PathBuf;

use cyxla_host::Sandbox;
use cyxla_host::session::{self, NativeSpec};
use plugin_glue::plugin::Plugin;

/// One measured variant of a program.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// Name printed in reports.
    pub name: &'static str,
    /// Target the program calls; `None` for the baseline without calls.
    pub target: Option<&'static str>,
}

impl Variant {
    /// A variant.
    pub fn new(name: &'static str, target: Option<&'static str>) -> Variant {
        Variant { name, target }
    }
}

/// Loads the plugin `scripts/setup.sh` installed.
///
/// # Panics
///
/// If there is none: the message says how to install it.
pub fn load_default_plugin() -> Plugin {
    let path = session::find_plugin(None).unwrap_or_else(|e| panic!("{e:#}"));
    // SAFETY: the default XLA CPU plugin that scripts/setup.sh installs.
    unsafe { Plugin::load(&path) }.unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()))
}

/// The shared library of native C++ test handlers, built by the cyxla-tests
/// package.
pub fn test_handlers_lib() -> PathBuf {
    cyxla_tests::test_handlers_lib()
}

/// Registers native test handler `target` (same symbol name) from
/// [`test_handlers_lib`].
///
/// # Panics
///
/// If it cannot be registered.
pub fn register_test_native(plugin: &Plugin, target: &str) {
    let spec = NativeSpec {
        target: target.to_owned(),
        library: test_handlers_lib(),
        symbol: target.to_owned(),
    };
    // SAFETY: the test handlers library is built from tests/native by the
    // tests crate; each symbol is an XLA FFI handler of the same name.
    unsafe { session::register_native(plugin, &spec) }.unwrap_or_else(|e| panic!("{e:#}"));
}

/// The guests folder: `$CYXLA_GUESTS` if set, else the bundled guests
/// (`guests/out`), built first with `guests/build.sh`.
///
/// # Panics
///
/// If `guests/build.sh` fails: the message says to run `scripts/setup.sh`.
pub fn bundled_guests() -> PathBuf {
    if std::env::var_os(cyxla_host::GUESTS_ENV).is_some() {
        return Sandbox::default_guests_dir();
    }
    cyxla_tests::bundled_guests().to_owned()
}

/// A program `f32[16] -> f32[16]` that chains `calls` custom calls to
/// `target` (none: returns its input negated, so there is work to run).
pub fn chain_program(target: &str, calls: usize) -> String {
    let mut body = String::new();
    let mut last = "%arg0".to_owned();
    for i in 0..calls {
        let _ = writeln!(
            body,
            "    %c{i} = stablehlo.custom_call @{target}({last}) {{api_version = 4 : i32, \
             backend_config = {{}}}} : (tensor<16xf32>) -> tensor<16xf32>"
        );
        last = format!("%c{i}");
    }
    format!(
        "module @bench {{\n  func.func public @main(%arg0: tensor<16xf32>) -> tensor<16xf32> {{\n\
         {body}    %r = stablehlo.negate {last} : tensor<16xf32>\n    return %r : tensor<16xf32>\n  }}\n}}\n"
    )
}
