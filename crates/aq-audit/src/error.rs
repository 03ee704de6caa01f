//! Why an audit log cannot be appended to: its last line does not continue
//! the chain this session would write. The `Display` is the sentence inside
//! the `audit log PATH: ...` error users read.

use std::fmt;

/// The last line of an existing log, read before appending to it.
#[derive(Debug)]
pub enum LastLineError {
    /// The line is not an event: appending would chain onto garbage.
    NotAnEvent {
        /// The parser's answer.
        source: serde_json::Error,
    },
    /// The line is another session's event: one log holds one session.
    OtherSession {
        /// The session the log belongs to.
        found: String,
        /// The session that would append.
        expected: String,
    },
}

impl fmt::Display for LastLineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LastLineError::NotAnEvent { source } => write!(
                f,
                "the last line is not a valid event ({source}); run `aq audit verify`"
            ),
            LastLineError::OtherSession { found, expected } => {
                write!(f, "the log belongs to session {found:?}, not {expected:?}")
            }
        }
    }
}

impl std::error::Error for LastLineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LastLineError::NotAnEvent { source } => Some(source),
            LastLineError::OtherSession { .. } => None,
        }
    }
}
