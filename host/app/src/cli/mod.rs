//! The subcommands of the `cyxla-host` binary, as library functions so that
//! tests and other front ends can call them.

pub mod check;
pub mod doctor;
pub mod kernelspec;
pub mod launch;
pub mod list;
pub mod metrics;
pub mod new;
pub mod policy;
pub mod replay;
pub mod run;
pub mod sdk;
