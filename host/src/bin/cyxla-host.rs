//! The `cyxla-host` command line.
fn main() {}
