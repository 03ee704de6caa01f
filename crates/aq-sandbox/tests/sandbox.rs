//! Kernel-boundary tests: one binary, one module per boundary.

mod suite;
