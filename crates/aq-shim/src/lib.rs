//! PATH shims: the command-firewall layer that works on any machine.
//!
//! A session puts a directory of symbolic links to the `aq` binary first on
//! `PATH`, one per program name users were promised (`curl`, `git`, `sh`,
//! ...). When the agent runs `curl`, the kernel runs `aq` with `argv[0]` set
//! to `curl`; `aq` judges the argument vector and, if allowed, replaces
//! itself with the real program (found on the original `PATH` without the
//! shim directory) through `execve`: no extra process stays behind.
//!
//! This crate holds the mechanics around that decision: installing the
//! links, finding the real program, scrubbing the environment passed on, and
//! the file-based queue through which a human answers an `ask`. The decision
//! itself is `aq-policy`'s; the audit log is `aq-audit`'s.
//!
//! Current limitations: shims only see programs looked up through `PATH`.
//! An absolute path (`/usr/bin/curl`) or a copied binary walks past them;
//! the kernel exec guard closes that gap under the sandbox.

#![deny(missing_docs)]

extern crate alloc;

pub mod approvals;
pub mod channel;
pub mod entry;
pub mod env_scrub;
mod error;
pub mod install;
pub mod lookup;
pub mod tiny;
pub mod wire;

pub use install::{DEFAULT_SHIMS, install_shims, shared_shims};
pub use lookup::{find_command, find_real_program, is_program, program_dirs, programs_present};
