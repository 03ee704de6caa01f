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
//!     git-guard/      the git guard's snapshot of the workspace's git files
//!     git-quarantine/ git files the session wrote that were put aside
//!   walk-records/     per workspace, the directories the last walks listed
//!                     (git guard, secret search), see walk_records
//! ```
//!
//! This crate is the runtime of a session, which the verbs of `crates/aq`
//! call (STYLE §6: the CLI crate stays a layer of verbs):
//!
//! - [`policy_files`]: the user's, the repository's and `--policy` files on
//!   disk, and the trust store; [`grant_dates`]: when `aq allow` made each
//!   grant;
//! - [`in_force`]: what a session started here gets (its profile, network
//!   and grants, each with where it came from), for `aq run` and
//!   `aq policy show` alike;
//! - [`files`]: the session directory and its files;
//! - [`supervisor`]: judging what shims and the exec guard send, logging,
//!   asking a human; [`exec_judge`] and [`exec_identity`] for the exec
//!   guard; [`refusal`] is what a refused command is told;
//! - [`workspace`]: which directory may be a session's workspace, and
//!   aq's own places that stay read-only whatever it is;
//! - [`git_guard`]: git files that would run a program later, outside aq,
//!   read-only in the sandbox or put aside when the session ends;
//! - [`network`]: the broker and key proxy wired to a session;
//!   [`sandbox_spec`]: a profile turned into the sandbox's spec, and
//!   [`seatbelt_launch`] that spec run under macOS's Seatbelt;
//!   [`denials`]: Landlock's refusals read back from the kernel's audit;
//! - [`sources`]: following the logs of one or every live session (an
//!   agent's hook sessions included), for `aq watch` and
//!   `aq audit export --all --follow`; [`suggest`]: which sessions
//!   `aq policy suggest` and `aq audit summary` read, and the lines
//!   suggest writes into the user's file;
//! - [`answerer`]: who may answer an ask (a human in a terminal of their
//!   own, never a process of the session);
//! - [`run`]: `aq run` itself, a supervised session around a command,
//!   with [`agent`] for an agent preset's part in it.

#![deny(missing_docs)]

pub mod agent;
pub mod answerer;
pub mod checkpoints;
// Linux only: Landlock's refusals, read back from the kernel's audit log.
#[cfg(target_os = "linux")]
pub mod denials;
/// Elsewhere there is no Landlock, so no refusals to read back: a watch
/// that never starts.
#[cfg(not(target_os = "linux"))]
pub mod denials {
    use std::sync::Arc;

    use crate::supervisor::Supervisor;

    /// Never made here.
    pub(crate) enum DenialWatch {}

    impl DenialWatch {
        /// `None`: nothing to watch on this system.
        pub fn begin(_wanted: bool) -> Option<DenialWatch> {
            None
        }

        /// Never called.
        pub fn attach(self, _: Arc<Supervisor>) -> DenialWatch {
            match self {}
        }

        /// Never called.
        pub fn is_on(&self) -> bool {
            match *self {}
        }

        /// Nothing to end.
        pub fn stop(self) {
            match self {}
        }
    }
}
mod dir_stamps;
pub mod error;
pub mod exec_identity;
pub mod exec_judge;
pub mod exit;
pub mod files;
pub mod git_guard;
pub mod grant_dates;
pub mod in_force;
pub mod managed_pull;
mod masks;
pub mod model_routes;
pub mod net_asks;
pub mod net_intercept;
pub mod network;
mod peer_cred;
pub mod policy_files;
pub mod refusal;
pub mod run;
pub mod sandbox_spec;
pub mod seatbelt_launch;
pub mod seatbelt_profile;
mod shim_presence;
pub mod sources;
mod state_records;
pub mod suggest;
pub mod supervisor;
pub mod user_grants;
mod walk_records;
pub mod workspace;

pub use files::*;
