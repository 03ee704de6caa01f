//! Why a shim refused to run a command before the supervisor answered.
//! Each `Display` is the sentence the shim prints (after `aq: NAME: `);
//! either way it fails closed.

use std::fmt;
use std::io;

/// Why a shim could not ask the session's supervisor.
#[derive(Debug)]
pub(crate) enum ShimError {
    /// Started outside a session: no session directory to ask in.
    NoSession,
    /// The supervisor's socket could not be reached or did not answer.
    Supervisor {
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for ShimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShimError::NoSession => f.write_str(crate::wire::NO_SESSION),
            ShimError::Supervisor { source } => write!(
                f,
                "cannot reach the session's supervisor ({source}); refusing to run unchecked"
            ),
        }
    }
}

impl std::error::Error for ShimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ShimError::NoSession => None,
            ShimError::Supervisor { source } => Some(source),
        }
    }
}
