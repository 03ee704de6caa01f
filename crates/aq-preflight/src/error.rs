//! Errors of reading what the scanner is given: a git index file, a
//! severity name. Each `Display` is the sentence users read (in a
//! `--fail-on` refusal, or a note that a repository's gitlinks were not
//! followed); the variants keep the pieces.

use std::fmt;

/// Why a git index file was not read (its gitlinks are then not followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexError {
    /// The file does not start with `DIRC`.
    NoSignature,
    /// The 12-byte header is cut short.
    TruncatedHeader,
    /// A version other than 2, 3 and 4.
    Version {
        /// The version the header names.
        version: u32,
    },
    /// An entry is cut short.
    TruncatedEntry {
        /// The index version.
        version: u32,
    },
    /// A version-4 path strips more of the path before it than it has.
    Strip,
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::NoSignature => f.write_str("not a git index (no DIRC signature)"),
            IndexError::TruncatedHeader => f.write_str("truncated header"),
            IndexError::Version { version } => {
                write!(f, "index version {version} is not 2, 3 or 4")
            }
            IndexError::TruncatedEntry { version } => {
                write!(f, "truncated entry (version {version})")
            }
            IndexError::Strip => f.write_str("a path strips more than the one before has"),
        }
    }
}

impl std::error::Error for IndexError {}

/// A severity name that is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownSeverity {
    /// The name as given.
    pub name: String,
}

impl fmt::Display for UnknownSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown severity `{}`; expected one of: low, medium, high, critical",
            self.name
        )
    }
}

impl std::error::Error for UnknownSeverity {}

/// Callers whose own errors are still sentences (`Result<_, String>`) use
/// `?` on it as before; the text is the `Display` above.
impl From<UnknownSeverity> for String {
    fn from(e: UnknownSeverity) -> String {
        e.to_string()
    }
}
