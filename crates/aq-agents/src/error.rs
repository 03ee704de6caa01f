//! Errors that name the file an agent integration read or edited and what
//! was wrong with it: a hook event on stdin, a hooks or config file `aq
//! enable` edits, a shadowed settings file written back. Each `Display` is
//! the sentence users read; the variants keep the pieces and the cause.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// A hook event (the agent's JSON on stdin) that cannot be read.
#[derive(Debug)]
pub enum HookEventError {
    /// Not JSON.
    NotJson {
        /// The agent's name (`claude`, `codex`, ...).
        agent: &'static str,
        /// The parser's answer.
        source: serde_json::Error,
    },
    /// JSON, but not an object.
    NotAnObject {
        /// The agent's name.
        agent: &'static str,
    },
}

impl fmt::Display for HookEventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookEventError::NotJson { agent, source } => {
                write!(f, "the {agent} hook event is not JSON: {source}")
            }
            HookEventError::NotAnObject { agent } => {
                write!(f, "the {agent} hook event is not a JSON object")
            }
        }
    }
}

impl std::error::Error for HookEventError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HookEventError::NotJson { source, .. } => Some(source),
            HookEventError::NotAnObject { .. } => None,
        }
    }
}

/// Why `aq enable` / `aq disable` leaves an agent's hooks file or Codex's
/// `config.toml` as it is: aq edits only a file it can read back whole.
#[derive(Debug)]
pub enum InstallError {
    /// A hook file wholly owned by an integration is there and is not aq's.
    ForeignHookFile,
    /// The hooks file is not JSON.
    NotJson {
        /// The parser's answer.
        source: serde_json::Error,
    },
    /// The hooks file is JSON, but not an object.
    NotAnObject,
    /// The key the hook list goes in holds something other than a list.
    NotAList {
        /// The dotted key (`hooks.PreToolUse`).
        key: String,
    },
    /// A key on the way to the hook list holds something other than an
    /// object.
    NotAnObjectAt {
        /// The key.
        key: String,
    },
    /// A key of `config.toml` on the way to the trust entries holds
    /// something other than a table.
    NotATomlTable {
        /// The dotted key (`hooks.state`).
        key: &'static str,
    },
    /// `config.toml` is not TOML.
    NotToml {
        /// The parser's answer.
        source: toml_edit::TomlError,
    },
}

impl fmt::Display for InstallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstallError::ForeignHookFile => f.write_str(
                "a hook file of someone else's is already there; aq does not overwrite it",
            ),
            InstallError::NotJson { source } => {
                write!(f, "the file is not JSON ({source}); aq does not edit it")
            }
            InstallError::NotAnObject => {
                f.write_str("the file is not a JSON object; aq does not edit it")
            }
            InstallError::NotAList { key } => {
                write!(f, "`{key}` is not a list; aq does not edit it")
            }
            InstallError::NotAnObjectAt { key } => {
                write!(f, "`{key}` is not an object; aq does not edit it")
            }
            InstallError::NotATomlTable { key } => {
                write!(
                    f,
                    "`{key}` in config.toml is not a table; aq does not edit it"
                )
            }
            InstallError::NotToml { source } => {
                write!(f, "config.toml is not TOML ({source}); aq does not edit it")
            }
        }
    }
}

impl std::error::Error for InstallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InstallError::NotJson { source } => Some(source),
            InstallError::NotToml { source } => Some(source),
            _ => None,
        }
    }
}

/// Why `aq mcp wrap` / `unwrap` leaves an MCP client's configuration file
/// as it is.
#[derive(Debug)]
pub enum McpConfigError {
    /// Codex's `config.toml` is not TOML.
    NotToml {
        /// The parser's answer.
        source: toml_edit::TomlError,
    },
    /// A JSON client's file is not JSON.
    NotJson {
        /// The parser's answer.
        source: serde_json::Error,
    },
}

impl fmt::Display for McpConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpConfigError::NotToml { source } => {
                write!(f, "not TOML ({source}); aq does not edit it")
            }
            McpConfigError::NotJson { source } => {
                write!(f, "not JSON ({source}); aq does not edit it")
            }
        }
    }
}

impl std::error::Error for McpConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            McpConfigError::NotToml { source } => Some(source),
            McpConfigError::NotJson { source } => Some(source),
        }
    }
}

/// Why a shadowed settings file was not written back at the end of a
/// session (the user's file is then left as it was).
#[derive(Debug)]
pub enum ShadowError {
    /// The session's copy cannot be read.
    ReadCopy {
        /// The copy.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The session's copy is not JSON.
    CopyNotJson {
        /// The user's file.
        real: PathBuf,
        /// The parser's answer.
        source: serde_json::Error,
    },
    /// The merged settings could not be encoded.
    Encode {
        /// The encoder's answer.
        source: serde_json::Error,
    },
    /// The new file (renamed over the user's) could not be made.
    CreateTemp {
        /// The new file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Writing the new file failed.
    WriteTemp {
        /// The error.
        source: io::Error,
    },
    /// Renaming the new file over the user's failed.
    Replace {
        /// The user's file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for ShadowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShadowError::ReadCopy { path, source }
            | ShadowError::CreateTemp { path, source }
            | ShadowError::Replace { path, source } => write!(f, "{}: {source}", path.display()),
            ShadowError::CopyNotJson { real, source } => write!(
                f,
                "the session's copy of {} is not JSON ({source}); the file is left as it was",
                real.display()
            ),
            ShadowError::Encode { source } => write!(f, "{source}"),
            ShadowError::WriteTemp { source } => write!(f, "{source}"),
        }
    }
}

impl std::error::Error for ShadowError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ShadowError::ReadCopy { source, .. }
            | ShadowError::CreateTemp { source, .. }
            | ShadowError::Replace { source, .. }
            | ShadowError::WriteTemp { source } => Some(source),
            ShadowError::CopyNotJson { source, .. } | ShadowError::Encode { source } => {
                Some(source)
            }
        }
    }
}

/// Callers whose own errors are still sentences (`Result<_, String>`) use
/// `?` on these as before; the text is the `Display` above.
macro_rules! into_string {
    ($($t:ty),*) => {$(
        impl From<$t> for String {
            fn from(e: $t) -> String {
                e.to_string()
            }
        }
    )*};
}

into_string!(HookEventError, InstallError, McpConfigError, ShadowError);
