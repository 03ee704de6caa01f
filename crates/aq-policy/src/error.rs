//! Errors that say which operation failed and on what: editing the user's
//! policy file, checking an entry, a refusal of the managed policy, an
//! export destination. Each `Display` is the sentence users read; the
//! variants keep the pieces so a caller can tell one failure from another
//! without matching on text.

use std::fmt;

/// Why `aq allow` / `aq deny` could not edit or read the user's policy file.
#[derive(Debug)]
pub enum GrantError {
    /// The file is not TOML; nothing is edited in a file that may be half
    /// written.
    ParsePolicyFile {
        /// The parser's answer.
        source: toml_edit::TomlError,
    },
    /// A `~` path with no home directory to expand it against.
    NoHome,
    /// A key the grant goes under holds something other than a table.
    NotATable {
        /// The dotted key (`profile.strict`).
        key: String,
    },
    /// A key the grant goes in holds something other than a list.
    NotAList {
        /// Where, as `aq grants` names it (`[network] allow`).
        place: String,
    },
    /// `rule` is not an array of `[[rule]]` tables.
    RulesNotTables,
    /// `aq deny --net` of a host nothing allows: the network is already off
    /// for it, so there is nothing to take out.
    HostNotAllowed {
        /// The host.
        host: String,
    },
}

impl fmt::Display for GrantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GrantError::ParsePolicyFile { source } => {
                write!(f, "your policy file does not parse as TOML: {source}")
            }
            GrantError::NoHome => f.write_str("`~` needs a home directory: set HOME"),
            GrantError::NotATable { key } => {
                write!(f, "`{key}` in your policy file is not a table")
            }
            GrantError::NotAList { place } => {
                write!(f, "{place} in your policy file is not a list")
            }
            GrantError::RulesNotTables => {
                f.write_str("`rule` in your policy file is not a list of [[rule]] tables")
            }
            GrantError::HostNotAllowed { host } => write!(
                f,
                "your policy does not allow {host}: the network is off unless something allows it \
                 (an agent preset's hosts are its own: `aq policy show` lists them)"
            ),
        }
    }
}

impl std::error::Error for GrantError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GrantError::ParsePolicyFile { source } => Some(source),
            _ => None,
        }
    }
}

/// A `trusted_exec` entry or a glob that cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryError {
    /// A `trusted_exec` entry with nothing in it (or only `!`).
    EmptyTrustedExec,
    /// A `trusted_exec` entry with spaces around the glob.
    Spaces {
        /// The entry as written.
        entry: String,
    },
    /// A `trusted_exec` entry starting with a variable other than
    /// `$TMPDIR/`, or `~` not followed by `/`.
    Variable {
        /// The entry as written.
        entry: String,
    },
    /// A `trusted_exec` entry with a `..` component.
    ParentDir {
        /// The entry as written.
        entry: String,
    },
    /// A `trusted_exec` entry that is not a glob.
    TrustedExecGlob {
        /// The entry as written.
        entry: String,
        /// The glob parser's answer ([`glob::PatternError::msg`]).
        why: &'static str,
    },
    /// A glob of a rule or a list that is not a glob: one that could never
    /// match is an error, not a rule that silently does nothing.
    Glob {
        /// The pattern as written.
        pattern: String,
        /// The glob parser's answer ([`glob::PatternError::msg`]).
        why: &'static str,
    },
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryError::EmptyTrustedExec => f.write_str("empty `trusted_exec` entry"),
            EntryError::Spaces { entry } => {
                write!(f, "`{entry}` has spaces around it; write the glob alone")
            }
            EntryError::Variable { entry } => write!(
                f,
                "`{entry}`: only `$TMPDIR/` and `~/` may start an entry; no other variable is expanded"
            ),
            EntryError::ParentDir { entry } => write!(f, "`{entry}` has a `..` component"),
            EntryError::TrustedExecGlob { entry, why } => {
                write!(f, "`{entry}` is not a glob: {why}")
            }
            EntryError::Glob { pattern, why } => write!(f, "invalid glob `{pattern}`: {why}"),
        }
    }
}

impl std::error::Error for EntryError {}

/// A `[managed]` table that cannot be read, or something a session asked
/// for that the managed policy refuses. Each refusal names the managed file
/// and the key that holds, and tells the user whom to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManagedError {
    /// `[managed] forbid-profiles` holds an empty name.
    ForbidProfilesName {
        /// The name as written.
        name: String,
    },
    /// `[managed] public-key` is not a minisign public key.
    PublicKey,
    /// The profile may not be used.
    ProfileRefused {
        /// The profile.
        profile: String,
        /// Why, in words.
        why: &'static str,
        /// The managed key (or the managed rules) that forbids it.
        key: &'static str,
        /// The managed file.
        file: String,
    },
    /// `--resolve` pins under `[managed] lock-network`.
    ResolveRefused {
        /// The managed file.
        file: String,
    },
    /// A host the locked network does not allow.
    HostRefused {
        /// The host.
        host: String,
        /// The managed file.
        file: String,
        /// The hosts it lets be reached, in words (`only `a`, `b``).
        allowed: String,
    },
    /// `--policy FILE` under `[managed] forbid-policy-flag`.
    PolicyFlagRefused {
        /// The managed file.
        file: String,
    },
    /// Learn mode under `[managed] forbid-learn`.
    LearnRefused {
        /// The managed file.
        file: String,
    },
}

impl fmt::Display for ManagedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ASK: &str = "ask whoever manages this machine";
        match self {
            ManagedError::ForbidProfilesName { name } => {
                write!(f, "[managed] forbid-profiles: `{name}` is not a profile name")
            }
            ManagedError::PublicKey => f.write_str(
                "[managed] public-key: not a minisign public key (the `RW...` line of a .pub file, 56 characters)",
            ),
            ManagedError::ProfileRefused {
                profile,
                why,
                key,
                file,
            } => write!(
                f,
                "the profile `{profile}` is refused: {why}: the managed policy {file} forbids it ({key}); {ASK}"
            ),
            ManagedError::ResolveRefused { file } => write!(
                f,
                "--resolve is refused: the managed policy {file} locks the network ([managed] lock-network), and a pin would send an allowed name elsewhere; {ASK}"
            ),
            ManagedError::HostRefused {
                host,
                file,
                allowed,
            } => write!(
                f,
                "`{host}` is refused: the managed policy {file} lets {allowed} be reached ([network] allow, [managed] lock-network); {ASK}"
            ),
            ManagedError::PolicyFlagRefused { file } => write!(
                f,
                "--policy is refused: the managed policy {file} forbids it ([managed] forbid-policy-flag); {ASK}"
            ),
            ManagedError::LearnRefused { file } => write!(
                f,
                "learn mode is refused: the managed policy {file} forbids it ([managed] forbid-learn); {ASK}"
            ),
        }
    }
}

impl std::error::Error for ManagedError {}

/// Why an `[audit] export` destination (or `aq export`'s) is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportTargetError {
    /// A format other than `otlp` and `syslog`.
    UnknownFormat {
        /// The format as written.
        format: String,
    },
    /// Empty, or with spaces or control characters.
    NotAUrl {
        /// The endpoint as written (trimmed).
        endpoint: String,
    },
    /// No `SCHEME://`.
    NoScheme {
        /// The endpoint as written.
        endpoint: String,
    },
    /// An OTLP URL with a query or a fragment.
    OtlpQuery {
        /// The endpoint as written.
        endpoint: String,
    },
    /// A `unix://` socket not named by an absolute path.
    UnixNotAbsolute {
        /// The endpoint as written.
        endpoint: String,
    },
    /// A scheme OTLP/HTTP does not speak.
    NotOtlpScheme {
        /// The scheme.
        scheme: String,
    },
    /// A scheme that is not a syslog transport.
    NotSyslogScheme {
        /// The scheme.
        scheme: String,
    },
    /// `user:password@` in the URL. The authority is not kept: the part
    /// before `@` may be a password.
    Credentials,
    /// `[` without `]`.
    UnclosedBracket {
        /// The authority (`HOST[:PORT]`).
        authority: String,
    },
    /// Between `[` and `]`, something that is not an IPv6 address.
    NotIpv6 {
        /// What is between the brackets.
        address: String,
    },
    /// Something other than `:PORT` after `]`.
    AfterBracket {
        /// The authority.
        authority: String,
    },
    /// No host, or one with characters a host name does not have.
    NoHost {
        /// The authority.
        authority: String,
    },
    /// A port that is not 1-65535.
    BadPort {
        /// The port as written.
        port: String,
    },
    /// A syslog transport without a port.
    NoPort {
        /// The authority.
        authority: String,
    },
}

impl fmt::Display for ExportTargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportTargetError::UnknownFormat { format } => write!(
                f,
                "unknown export format `{format}`: expected \"otlp\" or \"syslog\""
            ),
            ExportTargetError::NotAUrl { endpoint } => {
                write!(f, "`{endpoint}` is not an endpoint URL")
            }
            ExportTargetError::NoScheme { endpoint } => {
                write!(f, "`{endpoint}` has no scheme (`SCHEME://...`)")
            }
            ExportTargetError::OtlpQuery { endpoint } => write!(
                f,
                "`{endpoint}`: a query or fragment is not allowed in an OTLP endpoint"
            ),
            ExportTargetError::UnixNotAbsolute { endpoint } => write!(
                f,
                "`{endpoint}`: a unix socket is named by its absolute path, as in unix:///dev/log"
            ),
            ExportTargetError::NotOtlpScheme { scheme } => write!(
                f,
                "`{scheme}://` is not an OTLP/HTTP endpoint: write http://HOST:PORT or https://HOST"
            ),
            ExportTargetError::NotSyslogScheme { scheme } => write!(
                f,
                "`{scheme}://` is not a syslog transport: write unix:///dev/log, udp://HOST:PORT or tcp://HOST:PORT"
            ),
            ExportTargetError::Credentials => {
                f.write_str("credentials in the URL are not supported (they would be logged)")
            }
            ExportTargetError::UnclosedBracket { authority } => {
                write!(f, "`{authority}`: unclosed `[` around an IPv6 address")
            }
            ExportTargetError::NotIpv6 { address } => {
                write!(f, "`{address}` is not an IPv6 address")
            }
            ExportTargetError::AfterBracket { authority } => {
                write!(f, "`{authority}`: expected `:PORT` after `]`")
            }
            ExportTargetError::NoHost { authority } => {
                write!(f, "`{authority}` does not name a host")
            }
            ExportTargetError::BadPort { port } => {
                write!(f, "`{port}` is not a port number (1-65535)")
            }
            ExportTargetError::NoPort { authority } => {
                write!(f, "`{authority}`: give a port, as in HOST:514")
            }
        }
    }
}

impl std::error::Error for ExportTargetError {}

/// A name that is none of the values it could be. Strings live only at the
/// edges: each is parsed into its enum, and the refusal lists what is
/// accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownName {
    /// Not `allow`, `ask` or `block`.
    Decision(String),
    /// Not `low`, `medium`, `high` or `critical`.
    Risk(String),
    /// Not a built-in rule id.
    RuleId(String),
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownName::Decision(name) => write!(
                f,
                "unknown decision `{name}`; expected one of: allow, ask, block"
            ),
            UnknownName::Risk(name) => write!(
                f,
                "unknown risk `{name}`; expected one of: low, medium, high, critical"
            ),
            UnknownName::RuleId(name) => write!(
                f,
                "unknown rule id `{name}` (see `aq explain --rules` for the list)"
            ),
        }
    }
}

impl std::error::Error for UnknownName {}

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

into_string!(
    GrantError,
    EntryError,
    ManagedError,
    ExportTargetError,
    UnknownName
);
