//! Exit codes: defined once, in `aq-exit` (the sandbox's, the shim's and
//! the session's outcomes, 125 to 127, are among them).

pub use aq_exit::ExitCode;
