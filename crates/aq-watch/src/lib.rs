//! `aq watch`: a live console over running sessions.
//!
//! It shows the decisions of one or every running session as they are
//! logged (program, rule, decision), counts, network destinations, and the
//! asks waiting for a human, which can be answered right there with the
//! safeguards of `aq approve`. `aq watch --json` streams the same logs as
//! JSON lines for programs, and answers nothing.
//!
//! The split keeps most of it testable without a terminal: [`state`] folds
//! records and keys into a [`state::State`] (pure), [`render`] draws one
//! frame of it with ratatui, [`inert`] defuses the attacker-controlled text
//! of a log before it is drawn; `aq_session::sources` follows the logs,
//! [`console`] and [`jsonl`] are the two loops around them.

#![deny(missing_docs)]

pub mod console;
mod error;
pub mod inert;
pub mod jsonl;
pub mod render;
pub mod state;

pub use aq_session::sources::Target;
pub use error::WatchError;
