//! The rule engine of agent-quarantine: every command a line would run is
//! checked by deterministic rules, each with a stable id, a default action
//! (allow, ask, block), a risk, a plain-language *why* and a *safer*
//! alternative; the strictest action wins.
//!
//! Design: rules judge the commands that `aq-shell` found after unwrapping,
//! never the raw text, so quoting, wrappers and absolute paths do not change
//! the outcome, and words that are only data (an `echo`ed string, a commit
//! message, a grep pattern) do not trigger anything. A program that no rule
//! knows asks; a line that cannot be read asks. Nothing unknown is allowed.
//!
//! Pure: no files, clock or environment. Policy files are parsed from text
//! handed in by the caller.

#![deny(missing_docs)]

mod catalog;
mod config;
mod decision;
mod engine;
mod error;
pub mod exec_trust;
pub mod export;
pub mod grants;
pub mod lint;
pub mod managed;
pub mod merge;
pub mod paths;
pub mod places;
mod policy;
pub mod profile;
mod rules;

pub use catalog::{RuleId, RuleInfo};
pub use config::{
    ActionSetting, ConfigError, EffectivePolicy, IgnoredEntry, Location, ManagedInForce,
    NetworkLayer, NetworkSettings, POLICY_VERSION, PathAccess, PathOrigin, PolicyLayer, ProfileSet,
    Provenance, RuleDefinition, SensitivePath, SessionLayer, SessionSettings, Trust, UndoLayer,
    UndoSettings, UnlistedHosts, parse_layer,
};
pub use decision::{Decision, Risk};
pub use engine::{CommandReport, Engine, RuleMatch, Verdict, evaluate, is_builtin_rule};
pub use error::{EntryError, GrantError, ManagedError, UnknownName};
pub use export::{Endpoint, ExportFormat, ExportTarget, ExportTargetError};
pub use policy::{CommandMatcher, CustomRule, Policy, UserProgram};
pub use profile::{
    HomeAccess, Limits, NetworkSetting, Profile, ProfileLine, SessionMode, SummaryFormat,
};
