//! The audit log of `aq run` sessions.
//!
//! One JSONL file per session; each line is one [`Event`]: the session's
//! start (policy digest, workspace, profile, aq version), every command
//! decision (argv, cwd, pid, decision, rule ids, why, safer), every approval
//! (who answered and how), every command exit, and the session's end.
//!
//! # Design
//!
//! - **Tamper-evident.** Each line carries `prev`, the SHA-256 of the line
//!   before it, and `seq`, its own line number; [`verify`] walks the chain
//!   and names the first bad line ([`chain`] has the table of what is caught
//!   and what is not).
//! - **Safe with many writers and sudden death.** Many shim processes append
//!   to one file at once. [`AuditLog::append`] holds an exclusive `flock`
//!   while it reads the last line (for `seq` and `prev`) and writes the new
//!   one with a single `write`, so lines never interleave and the chain stays
//!   linear. A writer killed mid-write can leave a torn last line; the next
//!   append cuts it off (that event is lost, the file stays valid).
//! - **No secrets on disk.** [`AuditLog::append`] passes argv, `why` and
//!   `safer` through [`redact_argv`]/[`redact()`] before hashing and writing.
//! - **Readable by people and tools.** [`Summary`] folds a log into counts,
//!   blocked and asked commands with their rules, approvals and a timeline,
//!   rendered as Markdown (`aq report`), JSON, or a short terminal recap
//!   (`aq audit --recap`), or as one self-contained HTML page ([`html`]);
//!   [`suggest`] turns sessions' asks into `aq allow` lines and
//!   [`team_view`] counts across sessions. Readers skip torn lines and keep event kinds added
//!   by later versions ([`Record::Other`]).
//!
//! # Purity
//!
//! Everything but [`log_file`] is pure: text or readers in, values out, no
//! clock (the caller passes timestamps), no environment. [`log_file`] is the
//! one module that opens, locks, truncates and writes files.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod chain;
mod error;
pub mod event;
pub mod follow;
pub mod html;
pub mod inert;
pub mod log_file;
pub mod redact;
pub mod remedy;
pub mod report;
pub mod suggest;
pub mod team_view;

pub use chain::{
    BadLine, ChainProblem, HOOK_CHAIN_CAVEAT, HOOK_SESSION_PREFIX, NO_SANDBOX_CHAIN_CAVEAT,
    SANDBOX_LAYERS, VerifyReport, hash_line, verify,
};
pub use error::LastLineError;
pub use event::{Event, EventBody, ExecIdentity, GENESIS_PREV, Record, SessionGrants};
pub use log_file::AuditLog;
pub use redact::{REDACTED, is_secret_name, redact, redact_argv};
pub use remedy::{Allowance, Remedy};
pub use report::Summary;
