//! Exit codes: defined once, in `aq-exit`, which the sandbox and the shim
//! use as well.

pub use aq_exit::ExitCode;
