//! Why `aq watch` stopped: a step of its own (the terminal, the output)
//! with its cause, or a refusal from the session layer, kept as it came.
//! Each `Display` is the sentence `aq` prints.

use std::fmt;
use std::io;

/// Why the console or the JSON stream ended with an error.
#[derive(Debug)]
pub enum WatchError {
    /// The session layer could not open what is watched (no such session,
    /// or none at all).
    Session(aq_session::sources::SessionLookupError),
    /// `aq watch` may not run here: inside a session, or without a
    /// terminal.
    Refused(aq_session::answerer::AnswererRefusal),
    /// Writing a JSON line failed (a reader that went away is not one).
    Write {
        /// The error.
        source: io::Error,
    },
    /// The terminal could not be put into the console's mode.
    SetUpTerminal {
        /// The error.
        source: io::Error,
    },
    /// Drawing a frame failed.
    Draw {
        /// The error.
        source: io::Error,
    },
    /// Reading a key or an event from the terminal failed.
    ReadTerminal {
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for WatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchError::Session(e) => write!(f, "{e}"),
            WatchError::Refused(e) => write!(f, "{e}"),
            WatchError::Write { source } => write!(f, "cannot write: {source}"),
            WatchError::SetUpTerminal { source } => {
                write!(f, "cannot set up the terminal: {source}")
            }
            WatchError::Draw { source } => write!(f, "cannot draw: {source}"),
            WatchError::ReadTerminal { source } => write!(f, "cannot read the terminal: {source}"),
        }
    }
}

impl std::error::Error for WatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WatchError::Session(e) => Some(e),
            WatchError::Refused(e) => Some(e),
            WatchError::Write { source }
            | WatchError::SetUpTerminal { source }
            | WatchError::Draw { source }
            | WatchError::ReadTerminal { source } => Some(source),
        }
    }
}

impl From<aq_session::sources::SessionLookupError> for WatchError {
    fn from(e: aq_session::sources::SessionLookupError) -> WatchError {
        WatchError::Session(e)
    }
}

impl From<aq_session::answerer::AnswererRefusal> for WatchError {
    fn from(e: aq_session::answerer::AnswererRefusal) -> WatchError {
        WatchError::Refused(e)
    }
}

/// `aq watch` returns sentences; `?` works on this as before.
impl From<WatchError> for String {
    fn from(e: WatchError) -> String {
        e.to_string()
    }
}
