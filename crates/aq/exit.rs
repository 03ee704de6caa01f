//! Exit codes: defined once, in `aq_session::exit` (the session's own
//! outcomes, 125 to 127, are among them).

pub use aq_session::exit::ExitCode;
