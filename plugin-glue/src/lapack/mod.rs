//! Native LAPACK handlers (being written).
