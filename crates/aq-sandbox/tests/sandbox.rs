//! Kernel-boundary tests: one binary, one module per boundary. The
//! boundaries are Linux's: elsewhere this binary is empty.
#![cfg(target_os = "linux")]

mod suite;
