//! End-to-end tests.

mod cpp_sdk;
mod guests;
mod programs;
