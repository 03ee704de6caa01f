//! The effective policy as plain values: what the engine needs to decide.
//! Reading and layering policy files is `config.rs`'s job; this is the result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::catalog::RuleId;
use crate::decision::{Decision, Risk};

/// The effective policy: built-in defaults plus what policy files changed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Policy {
    /// Actions changed by rule id (`[rules]` in a policy file).
    pub actions: BTreeMap<RuleId, Decision>,
    /// Extra sensitive paths (globs; `~` is the home directory), treated like
    /// built-in credential files.
    pub sensitive_paths: Vec<String>,
    /// Credential paths the user's own policy passed back (`[paths]
    /// unmasked`): not masked in the sandbox, and reading them is not a
    /// secret read. Never from a repository's policy file.
    #[serde(default)]
    pub unmasked_paths: Vec<String>,
    /// The user's own rules.
    pub custom_rules: Vec<CustomRule>,
    /// aq's own directories on this machine (its configuration, state and
    /// launchers, where `$XDG_CONFIG_HOME` and the like put them), given by
    /// the caller: what is written, moved or deleted there is judged as
    /// aq's own files, as their default places are.
    #[serde(default)]
    pub own_dirs: Vec<String>,
    /// The user's home directory on this machine (`$HOME`), given by the
    /// caller: a path under it is judged as the same path spelled `~/...`
    /// (a home outside `/home`, `/root` and `/Users` too).
    #[serde(default)]
    pub home: Option<String>,
    /// The workspace on this machine (canonical), given by the caller: a
    /// write under it is ordinary work even when spelled as an absolute or
    /// home path. Without it, only relative paths are the workspace.
    #[serde(default)]
    pub workspace: Option<String>,
    /// What the session's agent preset makes writable besides the workspace
    /// (its own state: `~/.codex/sessions/`, a history file), given by the
    /// caller: a new file or an append there is the agent's own work, not a
    /// write to the home. Removing it is still judged as the place it is.
    #[serde(default)]
    pub agent_state: Vec<String>,
    /// `[program.NAME]` entries of policy files, by program name: what a
    /// platform CLI's subcommands do, beside or over `programs.toml`.
    #[serde(default)]
    pub programs: BTreeMap<String, UserProgram>,
    /// Rules whose action the managed policy sets: a custom `allow` rule of
    /// a file below it does not lift their asks.
    #[serde(default)]
    pub locked: Vec<RuleId>,
}

/// A policy file's entry for one program (`[program.acme]`): effect names
/// as `programs.toml` spells them (`read`, `change`, `delete`, `secret-read`
/// ...). A listed subcommand decides over the built-in entry; `default`
/// only decides what neither lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserProgram {
    /// What a subcommand neither this entry nor the built-in one lists does.
    pub default: Option<String>,
    /// Subcommands (`"repo delete"`) and what each does, most specific first
    /// when two overlap.
    pub(crate) subs: Vec<(String, String)>,
    /// Whether a file of the user's own (not a repository's) describes it:
    /// then the program is known, not `exec-unknown-program`.
    #[serde(default)]
    pub(crate) known: bool,
}

impl Policy {
    /// The action of a built-in rule under this policy.
    pub fn action(&self, id: RuleId) -> Decision {
        self.actions.get(&id).copied().unwrap_or(id.info().action)
    }
}

impl UserProgram {
    /// The longest subcommand first (`repo delete` before `repo`), so the
    /// most specific listed one matches.
    pub(crate) fn sort_subs(&mut self) {
        self.subs.sort_by(|a, b| {
            b.0.split(' ')
                .count()
                .cmp(&a.0.split(' ').count())
                .then(a.0.cmp(&b.0))
        });
    }
}

/// A rule written in a policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomRule {
    /// Its id (kebab-case, distinct from built-in ids).
    pub id: String,
    /// What happens when it matches.
    pub action: Decision,
    /// How bad a match is.
    pub risk: Risk,
    /// Why, for a person.
    pub why: String,
    /// What to do instead.
    pub safer: Option<String>,
    /// What it matches.
    pub matcher: CommandMatcher,
}

/// What a custom rule matches. Every field that is set must match; within a
/// list any entry may match. Program and argument entries are globs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandMatcher {
    /// Program names (`curl`, `terraform`), matched on the base name.
    pub program: Vec<String>,
    /// The first non-option argument (`push`, `apply`).
    pub subcommand: Vec<String>,
    /// Options, any of which must be present (`--force`, `-f`).
    pub flags: Vec<String>,
    /// Argument globs, any of which must match some argument.
    pub args: Vec<String>,
    /// Path globs, any of which must match some path-like argument or
    /// redirection target (`~/.config/secret/*`, `*.sqlite`).
    pub paths: Vec<String>,
}
