//! Session state on disk, outside the workspace, so that an agent working in
//! the repository cannot edit its own log or approve its own commands:
//!
//! ```text
//! $XDG_STATE_HOME/agent-quarantine/      (default ~/.local/state/agent-quarantine)
//!   sessions/<id>/
//!     session.json    the session's settings and effective policy (for
//!                     aq approve, aq audit list and the supervisor)
//!     log.jsonl       the audit log
//!     shims/          links to the aq binary, first on PATH
//!     approvals/      the approval queue (see aq_shim::approvals)
//!     supervisor.sock where the shims ask `aq run` (see aq_shim::channel)
//!     tmp/            the sandboxed command's private TMPDIR
//! ```
//!
//! This crate is the session state every verb shares: [`files`] (the
//! session directory and its files), [`answerer`] (who may answer an ask:
//! a human in a terminal of their own, never a process of the session),
//! and [`follow`] (reading a log as it grows, for `aq watch` and
//! `aq audit export --follow`).

#![deny(missing_docs)]

pub mod answerer;
pub mod files;
pub mod follow;

pub use files::*;
