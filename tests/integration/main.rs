//! End-to-end tests.

mod programs;
