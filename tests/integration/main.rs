//! End-to-end tests.

mod cpp_sdk;
mod doc_citations;
mod guests;
mod product_features;
mod programs;
mod vendor;
