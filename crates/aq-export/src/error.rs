//! Errors of the exporters' own steps, each naming what was read or which
//! peer was reached: the OTLP headers from the environment, a syslog
//! socket. Each `Display` is the sentence `aq` prints and the audit record
//! keeps; the variants keep the pieces.

use std::fmt;
use std::io;

/// OTLP headers (`key=value,key2=value2`) that cannot be sent. No variant
/// holds a value: a header value is often a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadersError {
    /// An entry without `=`.
    NotNameValue {
        /// The entry's place in the list, from 1.
        entry: usize,
    },
    /// A name that is not an HTTP token.
    Name {
        /// The entry's place in the list, from 1.
        entry: usize,
    },
    /// A value with a bad `%XX` escape.
    PercentEncoding {
        /// The entry's place in the list, from 1.
        entry: usize,
        /// The header name.
        name: String,
    },
    /// A value holding CR, LF or NUL, which would smuggle another line into
    /// the request.
    LineBreak {
        /// The entry's place in the list, from 1.
        entry: usize,
        /// The header name.
        name: String,
    },
    /// One of the above, in the environment variable `var`.
    InVariable {
        /// The variable (`OTEL_EXPORTER_OTLP_LOGS_HEADERS`, ...).
        var: &'static str,
        /// What is wrong with its value.
        error: Box<HeadersError>,
    },
}

impl fmt::Display for HeadersError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadersError::NotNameValue { entry } => {
                write!(f, "entry {entry} is not `name=value`")
            }
            HeadersError::Name { entry } => {
                write!(f, "entry {entry}: the name is not an HTTP header name")
            }
            HeadersError::PercentEncoding { entry, name } => {
                write!(f, "entry {entry} (`{name}`): bad percent-encoding")
            }
            HeadersError::LineBreak { entry, name } => {
                write!(
                    f,
                    "entry {entry} (`{name}`): a value may not hold a line break"
                )
            }
            HeadersError::InVariable { var, error } => write!(f, "{var}: {error}"),
        }
    }
}

impl std::error::Error for HeadersError {}

/// Why a syslog message was not sent. Resolving and connecting happen on
/// the first send and again after a failed one.
#[derive(Debug)]
pub enum SyslogError {
    /// Making or setting up the local socket failed.
    Socket {
        /// The error.
        source: io::Error,
    },
    /// The address did not resolve.
    Resolve {
        /// `HOST:PORT`.
        addr: String,
        /// The resolver's answer.
        source: io::Error,
    },
    /// The address resolved to nothing.
    NoAddress {
        /// `HOST:PORT`.
        addr: String,
    },
    /// Connecting failed.
    Connect {
        /// The socket path or `HOST:PORT`.
        to: String,
        /// The error.
        source: io::Error,
    },
    /// A target whose format and transport do not go together.
    Mismatch {
        /// The target, as `ExportTarget` shows it.
        place: String,
    },
    /// Sending failed.
    Send {
        /// The target, as `ExportTarget` shows it.
        place: String,
        /// The error.
        source: io::Error,
    },
    /// No socket to send on.
    NotConnected {
        /// The target, as `ExportTarget` shows it.
        place: String,
    },
}

impl fmt::Display for SyslogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyslogError::Socket { source } => write!(f, "{source}"),
            SyslogError::Resolve { addr, source } => write!(f, "cannot resolve {addr}: {source}"),
            SyslogError::NoAddress { addr } => write!(f, "{addr} resolves to no address"),
            SyslogError::Connect { to, source } => write!(f, "cannot connect to {to}: {source}"),
            SyslogError::Mismatch { place } => {
                write!(f, "{place}: the format and transport do not match")
            }
            SyslogError::Send { place, source } => write!(f, "cannot send to {place}: {source}"),
            SyslogError::NotConnected { place } => {
                write!(f, "cannot send to {place}: not connected")
            }
        }
    }
}

impl std::error::Error for SyslogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SyslogError::Socket { source }
            | SyslogError::Resolve { source, .. }
            | SyslogError::Connect { source, .. }
            | SyslogError::Send { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Callers whose own errors are still sentences (`Result<_, String>`) use
/// `?` on it as before; the text is the `Display` above.
impl From<HeadersError> for String {
    fn from(e: HeadersError) -> String {
        e.to_string()
    }
}
