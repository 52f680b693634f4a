//! End-to-end tests.

mod cpp_sdk;
mod doc_citations;
mod guests;
mod programs;
mod vendor;
