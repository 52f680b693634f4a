//! Guests end to end on each plugin of the compatibility set: P115
//! (lammps-jax-pjrt-cpu 0.11.2, XLA FFI 0.4, the default), P106
//! (fastatomstruct-xla-cpu, XLA FFI 0.3) and P81 (xla-cpu-pjrt, XLA FFI 0.2).
//! Each registers its targets under a prefix of its own, so all three share
//! one process.

/// One test per `name => check`: `e2e::check(harness())`.
macro_rules! harness_checks {
    ($($test:ident => $check:ident,)*) => {
        $(
            #[test]
            fn $test() {
                e2e::$check(harness());
            }
        )*
    };
}

macro_rules! plugin_tests {
    ($name:ident, $plugin:expr, $prefix:literal) => {
        mod $name {
            use std::sync::OnceLock;

            use crate::common::e2e;

            static HARNESS: OnceLock<e2e::Harness> = OnceLock::new();

            fn harness() -> &'static e2e::Harness {
                e2e::harness(&HARNESS, $plugin, $prefix)
            }

            harness_checks! {
                guests_run_end_to_end => check_all,
                concurrent_executions_share_the_pool => check_concurrent,
                large_buffers_are_copied_exactly_with_helper_threads => check_large_buffers,
                a_bundled_rust_guest_runs_in_xla => check_bundled_rms_norm,
            }
        }
    };
}

plugin_tests!(p115, cyxla_tests::Plugin::P115, "p115_");
plugin_tests!(p106, cyxla_tests::Plugin::P106, "p106_");
plugin_tests!(p81, cyxla_tests::Plugin::P81, "p81_");
