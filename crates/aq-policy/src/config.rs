//! Policy files: TOML text in, a validated [`PolicyLayer`] out, and layers
//! merged into the effective [`Policy`] with the file that set each value.
//!
//! Pure: the caller reads the files and hands in `(source name, text)`; the
//! source name (normally the path) is only used in messages and provenance.
//!
//! The merge lives here, next to the engine, rather than in the binary,
//! because tighten-only is a security property: an untrusted layer (a
//! repository's `agent-quarantine.toml`) must not be able to weaken the
//! policy an agent runs under, and that is only testable if it is pure.
//! A loosening entry in such a layer is ignored, keeping the stricter value
//! (failing closed), and reported as an [`IgnoredEntry`]. What loosens is
//! declared once per field, as a [`crate::merge::Merge`] kind, in
//! `EffectivePolicy::merge` and the functions it calls.
//!
//! # Schema (version 1)
//!
//! ```toml
//! version = 1                          # optional; 1 is the only version
//!
//! [rules]                              # built-in rule id = allow | ask | block
//! "pkg-install" = "allow"
//!
//! [paths]
//! sensitive = ["~/.config/acme/token", "*.kdbx"]
//!
//! [[rule]]                             # a rule of your own
//! id = "no-terraform-apply"            # kebab-case, not a built-in id
//! action = "block"                     # allow | ask | block
//! risk = "high"                        # low | medium (default) | high | critical
//! why = "applies infrastructure changes"
//! safer = "run terraform plan and let a person apply"   # optional
//! program = ["terraform"]              # at least one matcher list is set:
//! subcommand = ["apply", "destroy"]    #   program, subcommand, flags,
//! flags = []                           #   args, paths
//! ```
//!
//! Unknown keys, unknown rule ids and unknown values are errors carrying the
//! file, line and column.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use crate::catalog::RuleId;
use crate::decision::{Decision, Risk};
use crate::error::{EntryError, ExportTargetError};
use crate::export::ExportTarget;
use crate::merge::{Field, Merge, Merger};
use crate::policy::{CommandMatcher, CustomRule, Policy};
use crate::profile::{DEFAULT_PROFILE, Profile, ProfileLayer, RawProfile};

/// The policy file version this build reads.
pub const POLICY_VERSION: i64 = 1;

/// How to write a glob.
const GLOB_HELP: &str = "globs use `*` (not across `/`), `**` (any directories), `?` and `[...]`; write `[[]` for a literal `[`";

/// What to say when a file does not follow the schema.
const SCHEMA_HELP: &str =
    "the schema is described in docs/policy.md; `aq policy init` writes a commented starter file";

// ---- where things are -------------------------------------------------------

/// A place in a policy file: `source:line:column`, both counted from 1.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// The file (as the caller named it).
    pub source: String,
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl Location {
    /// The line and column of a byte offset in `text`.
    pub(crate) fn at_offset(source: &str, text: &str, offset: usize) -> Self {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = text[line_start..offset].chars().count() + 1;
        Location {
            source: source.to_string(),
            line,
            column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.source, self.line, self.column)
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

// ---- errors -------------------------------------------------------------------

/// A policy file that cannot be used: where, what, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Where the problem is.
    pub at: Location,
    /// What is wrong.
    pub message: String,
    /// The offending line and a caret under the problem, when known.
    pub(crate) excerpt: Option<String>,
    /// What to do about it.
    pub help: Option<String>,
}

impl ConfigError {
    fn new(source: &str, text: &str, span: Option<Range<usize>>, message: String) -> Self {
        let span = span.unwrap_or(0..0);
        ConfigError {
            at: Location::at_offset(source, text, span.start),
            message,
            excerpt: excerpt(text, span),
            help: None,
        }
    }

    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)?;
        if let Some(excerpt) = &self.excerpt {
            write!(f, "\n{excerpt}")?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// The line holding `span.start`, with a caret line under the span.
fn excerpt(text: &str, span: Range<usize>) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    let start = floor_char_boundary(text, span.start.min(text.len()));
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = text[line_start..line_end].trim_end_matches('\r');
    let line_no = text[..start].matches('\n').count() + 1;
    let pad = text[line_start..start].chars().count();
    let end = floor_char_boundary(text, span.end.clamp(start, line_end));
    let width = text[start..end].chars().count().max(1);
    let gutter = " ".repeat(line_no.to_string().len());
    Some(format!(
        " {line_no} | {line}\n {gutter} | {}{}",
        " ".repeat(pad),
        "^".repeat(width)
    ))
}

// ---- one file -----------------------------------------------------------------

/// A built-in rule's action, as one file sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionSetting {
    /// The rule.
    pub rule: RuleId,
    /// The action the file asks for.
    pub action: Decision,
    /// Where.
    pub at: Location,
}

/// A sensitive path pattern, as one file adds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SensitivePath {
    /// The glob (`~` is the home directory).
    pub pattern: String,
    /// Where.
    pub at: Location,
}

/// A custom rule, as one file defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDefinition {
    /// The rule.
    pub rule: CustomRule,
    /// Where its `[[rule]]` table starts.
    pub at: Location,
}

/// One policy file, parsed and checked, not yet merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyLayer {
    /// The file it came from.
    pub source: String,
    /// `[rules]`, in file order.
    pub actions: Vec<ActionSetting>,
    /// `[paths] sensitive`, in file order.
    pub sensitive_paths: Vec<SensitivePath>,
    /// `[paths] unmasked`, in file order: credential paths passed back.
    /// Honoured from the user's own files only.
    pub unmasked_paths: Vec<SensitivePath>,
    /// `[[rule]]` tables, in file order.
    pub custom_rules: Vec<RuleDefinition>,
    /// `[session]`: how `aq run` sessions behave.
    pub session: SessionLayer,
    /// `[profile.NAME]` tables, by name.
    pub profiles: Vec<(String, ProfileLayer, Location)>,
    /// `[network]`: where sandboxed commands may connect through the broker.
    pub network: NetworkLayer,
    /// `[agent.NAME]` tables, by name: what an agent preset grants.
    pub agents: Vec<(String, aq_agents::PresetLayer, Location)>,
    /// `[hooks] allow`: whether an aq allow approves in an agent's hook
    /// (`true`) or defers to the agent's own rules.
    pub(crate) hooks_approve: Option<(bool, Location)>,
    /// `[mcp] deny`: `SERVER.TOOL` globs `aq mcp run` refuses.
    pub(crate) mcp_deny: Vec<(String, Location)>,
    /// `[workspace."PATH"]`: paths writable or readable in sessions whose
    /// workspace is PATH or beneath it (`aq allow --here`).
    pub(crate) workspaces: Vec<(WorkspaceGrant, Location)>,
    /// `[audit] export`: where every session's log is shipped as it is
    /// written. Honoured from the user's own files only.
    pub audit_export: Vec<(ExportTarget, Location)>,
    /// `[undo]`: the workspace's checkpoints.
    pub undo: UndoLayer,
    /// `[program.NAME]` tables, by name: what a program's subcommands do.
    pub programs: Vec<(String, crate::policy::UserProgram, Location)>,
    /// `[managed]`: what the managed file locks. Only the managed file may
    /// have it (the loader refuses it anywhere else).
    pub managed: Option<(crate::managed::ManagedSettings, Location)>,
}

/// `[undo]` as one file sets it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoLayer {
    /// Whether sessions take checkpoints (a repository cannot turn this off).
    pub enabled: Option<(bool, Location)>,
    /// Files larger than this many MiB are listed as not kept.
    pub(crate) max_file_mb: Option<(u64, Location)>,
    /// Checkpoints are kept this many days.
    pub keep_days: Option<(u32, Location)>,
    /// The store of one workspace grows to at most this many MiB.
    pub(crate) max_store_mb: Option<(u64, Location)>,
    /// Ignored paths (relative to the workspace) kept all the same.
    pub include: Vec<(String, Location)>,
    /// Ordinary commands get at most one checkpoint per this many ms.
    pub(crate) coalesce_ms: Option<(u64, Location)>,
}

/// The `[undo]` settings in force (docs/undo.md).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UndoSettings {
    /// Sessions and hooks take checkpoints (default on).
    pub enabled: bool,
    /// Files over this many MiB are recorded as not kept (default 64).
    pub max_file_mb: u64,
    /// Days a checkpoint is kept (default 14; the latest session's always are).
    pub keep_days: u32,
    /// MiB one workspace's store may take before its oldest sessions go (default 2048).
    pub max_store_mb: u64,
    /// Ignored paths kept all the same.
    pub include: Vec<String>,
    /// At most one checkpoint per this many ms before ordinary commands
    /// (default 200); one before an ask or a risky command is always taken.
    pub coalesce_ms: u64,
}

impl Default for UndoSettings {
    fn default() -> Self {
        UndoSettings {
            enabled: true,
            max_file_mb: 64,
            keep_days: 14,
            max_store_mb: 2048,
            include: Vec::new(),
            coalesce_ms: 200,
        }
    }
}

impl UndoSettings {
    /// Merges `[undo]`: a lower-trust file may only keep more (`include`);
    /// what would keep less or switch checkpoints off is the user's to say.
    #[deny(unused_variables)]
    fn merge(&mut self, layer: &UndoLayer, m: &mut Merger) {
        let UndoLayer {
            enabled,
            max_file_mb,
            keep_days,
            max_store_mb,
            include,
            coalesce_ms,
        } = layer;
        // The entry is written as the field's key: `[undo] keep_days = 3`.
        let say = |f: Field, value: &dyn fmt::Display| {
            (
                format!("{} = {value}", f.key),
                "checkpoints stay as the user's policy has them".to_string(),
            )
        };
        let f = m.field("[undo] enabled", Merge::Trusted);
        if let Some((v, at)) = enabled
            && m.admit(f, at, || true, || say(f, v))
        {
            self.enabled = *v;
        }
        for (slot, value, key) in [
            (&mut self.max_file_mb, max_file_mb, "[undo] max_file_mb"),
            (&mut self.max_store_mb, max_store_mb, "[undo] max_store_mb"),
            (&mut self.coalesce_ms, coalesce_ms, "[undo] coalesce_ms"),
        ] {
            let f = m.field(key, Merge::Trusted);
            if let Some((v, at)) = value
                && m.admit(f, at, || true, || say(f, v))
            {
                *slot = *v;
            }
        }
        let f = m.field("[undo] keep_days", Merge::Trusted);
        if let Some((v, at)) = keep_days
            && m.admit(f, at, || true, || say(f, v))
        {
            self.keep_days = *v;
        }
        let f = m.field("[undo] include", Merge::Union);
        for (p, at) in include {
            m.add(f, &mut self.include, p, at, || {
                (
                    format!("[undo] include `{p}`"),
                    "checkpoints stay as the user's policy has them".to_string(),
                )
            });
        }
    }
}

/// Grants for the sessions of one workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WorkspaceGrant {
    /// The workspace (absolute).
    pub path: String,
    /// Added to every profile's `writable`.
    pub writable: Vec<String>,
    /// Added to every profile's `readable`.
    pub readable: Vec<String>,
}

/// `[network]` as one file sets it. Entries are checked by `aq` (the
/// allowlist syntax belongs to the broker); here they are kept as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkLayer {
    /// Allowed destinations: `example.com`, `*.example.com`, with an optional `:PORT`.
    pub allow: Vec<(String, Location)>,
    /// Names pinned to addresses (`NAME:ADDR` or `NAME=ADDR`), never resolved.
    pub resolve: Vec<(String, Location)>,
    /// Private destinations permitted after all (CIDRs), e.g. a VPN's registry.
    pub permit: Vec<(String, Location)>,
    /// What a connection to a host not on the allowlist gets.
    pub unlisted: Option<(UnlistedHosts, Location)>,
    /// HTTP rules per host: `[network.http."HOST"]`.
    pub http: Vec<(String, HttpRuleSetting, Location)>,
    /// Credentials the broker adds per host: `[network.credentials."HOST"]`.
    pub credentials: Vec<(String, CredentialSetting, Location)>,
    /// Built-in credential recipes: `credential_presets = ["github", "npm"]`.
    pub credential_presets: Vec<(String, Location)>,
}

/// The built-in credential recipes `[network] credential_presets` may name.
pub(crate) const CREDENTIAL_PRESETS: &[&str] = &["github", "npm"];

/// `[network.http."HOST"]`: which requests may go to a host (the broker
/// reads them inside TLS).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HttpRuleSetting {
    /// Methods allowed (upper case); empty: any.
    pub methods: Vec<String>,
    /// Path prefixes allowed; empty: any.
    pub paths: Vec<String>,
}

/// `[network.credentials."HOST"]`: a header the broker adds to every
/// request to the host; the value names variables of the environment `aq`
/// was started in (`${NAME}`), which the sandbox then does not get.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CredentialSetting {
    /// The header's name, e.g. `Authorization`.
    pub header: String,
    /// Its value as written, e.g. `Bearer ${EXAMPLE_TOKEN}` (never the
    /// secret itself: the variable is read when a session starts).
    pub value: String,
}

/// What a connection to a host not on the session's allowlist gets:
/// asked (when someone can answer: `aq run`'s terminal, `aq approve`,
/// `aq watch`; refused at once when nobody can) or refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UnlistedHosts {
    /// Ask whoever can answer; refuse at once when nobody can.
    #[default]
    Ask,
    /// Refuse without asking.
    Refuse,
}

/// The `[network]` settings in force.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct NetworkSettings {
    /// Allowed destinations.
    pub allow: Vec<String>,
    /// Pinned names.
    pub resolve: Vec<String>,
    /// Permitted private destinations.
    pub permit: Vec<String>,
    /// What a connection to an unlisted host gets.
    pub unlisted: UnlistedHosts,
    /// HTTP rules per host (from the user's own files only).
    pub http: BTreeMap<String, HttpRuleSetting>,
    /// Credentials per host (from the user's own files only).
    pub credentials: BTreeMap<String, CredentialSetting>,
    /// Built-in credential recipes (from the user's own files only).
    pub credential_presets: Vec<String>,
}

/// `[session]` as one file sets it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionLayer {
    /// How long an `ask` waits for a human.
    pub approval_timeout_secs: Option<(u64, Location)>,
    /// What an unanswered `ask` becomes.
    pub unanswered: Option<(Decision, Location)>,
    /// More program names to shim.
    pub shims: Vec<(String, Location)>,
    /// Secret-looking variables to pass on to commands anyway.
    pub env_pass: Vec<(String, Location)>,
    /// Unix sockets of the host the sandbox may connect to.
    pub(crate) host_sockets: Vec<(String, Location)>,
    /// The sandbox profile `aq run` uses by default.
    pub profile: Option<(String, Location)>,
    /// Whether `aq run` scans the workspace with `aq preflight` first.
    pub preflight: Option<(bool, Location)>,
    /// Whether an ask waits for its timeout although nobody is there to answer.
    pub wait_for_approver: Option<(bool, Location)>,
    /// `trusted_exec` entries (see [`crate::exec_trust`]), `!ENTRY` removals included.
    pub trusted_exec: Vec<(String, Location)>,
}

/// How `aq run` sessions behave: the effective `[session]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSettings {
    /// How long an `ask` waits for a human (default 120 s).
    pub approval_timeout_secs: u64,
    /// What an `ask` nobody answered becomes: [`Decision::Block`] (`"deny"`,
    /// the default) or [`Decision::Allow`].
    pub unanswered: Decision,
    /// Program names shimmed on top of the built-in list.
    pub extra_shims: Vec<String>,
    /// Secret-looking variables passed on to commands anyway.
    pub env_pass: Vec<String>,
    /// Unix sockets of the host the sandbox may connect to all the same
    /// (an absolute path, `~/PATH`, or `$VAR` for the path a variable
    /// holds, like `$SSH_AUTH_SOCK`); every other one is refused. Only the
    /// user's own files may name one.
    pub host_sockets: Vec<String>,
    /// The sandbox profile `aq run` uses when `--profile` is not given.
    pub profile: String,
    /// `aq run` scans the workspace with `aq preflight` first.
    pub preflight: bool,
    /// An ask waits for its timeout even when no `aq approve` is attached and
    /// no terminal is free to prompt on (default: it is answered at once by
    /// `unanswered`, so a headless session never stalls).
    pub wait_for_approver: bool,
    /// Where the exec guard runs unrecognised native programs without
    /// asking: [`crate::exec_trust::BUILD_OUTPUTS`] and the user's entries,
    /// less the removed ones.
    pub trusted_exec: Vec<String>,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            approval_timeout_secs: 120,
            unanswered: Decision::Block,
            extra_shims: Vec::new(),
            env_pass: Vec::new(),
            host_sockets: Vec::new(),
            profile: DEFAULT_PROFILE.to_string(),
            preflight: false,
            wait_for_approver: false,
            trusted_exec: crate::exec_trust::BUILD_OUTPUTS
                .iter()
                .map(|e| e.to_string())
                .collect(),
        }
    }
}

impl SessionSettings {
    /// Merges `[session]`, each key with its [`Merge`] kind (see
    /// [`EffectivePolicy::merge`]).
    #[deny(unused_variables)]
    fn merge(&mut self, layer: &SessionLayer, m: &mut Merger) {
        let SessionLayer {
            approval_timeout_secs,
            unanswered,
            shims,
            env_pass,
            host_sockets,
            profile,
            preflight,
            wait_for_approver,
            trusted_exec,
        } = layer;
        // A repository may make asks wait less, never longer: a long wait
        // stalls a session nobody answers.
        let f = m.field("[session] approval_timeout_secs", Merge::Tighten);
        if let Some((secs, at)) = approval_timeout_secs
            && m.admit(
                f,
                at,
                || *secs > self.approval_timeout_secs,
                || {
                    (
                        format!("`approval_timeout_secs = {secs}`"),
                        format!(
                            "asks wait at most {} s, as the user's policy has it",
                            self.approval_timeout_secs
                        ),
                    )
                },
            )
        {
            self.approval_timeout_secs = *secs;
        }
        let f = m.field("[session] unanswered", Merge::Tighten);
        if let Some((d, at)) = unanswered
            && m.admit(
                f,
                at,
                || *d < self.unanswered,
                || {
                    (
                        "`unanswered = \"allow\"`".to_string(),
                        "unanswered asks stay denied".to_string(),
                    )
                },
            )
        {
            self.unanswered = *d;
        }
        let f = m.field("[session] shims", Merge::Union);
        for (name, at) in shims {
            m.add(f, &mut self.extra_shims, name, at, || {
                (
                    format!("`shims` entry `{name}`"),
                    "the program is not shimmed".to_string(),
                )
            });
        }
        let f = m.field("[session] env_pass", Merge::Trusted);
        for (var, at) in env_pass {
            m.add(f, &mut self.env_pass, var, at, || {
                (
                    format!("`env_pass` of `{var}`"),
                    format!("`{var}` is still removed from commands' environment"),
                )
            });
        }
        let f = m.field("[session] host_sockets", Merge::Trusted);
        for (path, at) in host_sockets {
            m.add(f, &mut self.host_sockets, path, at, || {
                (
                    format!("`host_sockets` entry `{path}`"),
                    "the host's Unix sockets stay out of the sandbox's reach".to_string(),
                )
            });
        }
        let f = m.field("[session] preflight", Merge::Tighten);
        if let Some((on, at)) = preflight
            && m.admit(
                f,
                at,
                || !on && self.preflight,
                || {
                    (
                        "`preflight = false`".to_string(),
                        "sessions still scan the workspace first".to_string(),
                    )
                },
            )
        {
            self.preflight = *on;
        }
        let f = m.field("[session] wait_for_approver", Merge::Trusted);
        if let Some((on, at)) = wait_for_approver
            && m.admit(
                f,
                at,
                || true,
                || {
                    (
                        format!("`wait_for_approver = {on}`"),
                        "the user's setting stays".to_string(),
                    )
                },
            )
        {
            self.wait_for_approver = *on;
        }
        // Removing an entry (`!ENTRY`) only tightens: any file may.
        let f = m.field("[session] trusted_exec", Merge::Tighten);
        for (entry, at) in trusted_exec {
            let taken = m.admit(
                f,
                at,
                || !entry.starts_with('!'),
                || {
                    (
                        format!("`trusted_exec` entry `{entry}`"),
                        "unrecognised programs there still ask; only your own policy file names build outputs".to_string(),
                    )
                },
            );
            if !taken {
                continue;
            }
            let list = &mut self.trusted_exec;
            if let Some(removed) = entry.strip_prefix('!') {
                list.retain(|e| e != removed);
            } else if !list.contains(entry) {
                list.push(entry.clone());
            }
        }
        let f = m.field("[session] profile", Merge::Tighten);
        if let Some((name, at)) = profile
            && m.admit(
                f,
                at,
                || *name != self.profile,
                || {
                    (
                        format!("`profile = \"{name}\"`"),
                        format!("sessions keep the `{}` profile", self.profile),
                    )
                },
            )
        {
            self.profile = name.clone();
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    version: Option<Spanned<i64>>,
    #[serde(default)]
    rules: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    paths: RawPaths,
    #[serde(default)]
    rule: Vec<Spanned<RawRule>>,
    #[serde(default)]
    session: RawSession,
    #[serde(default)]
    profile: BTreeMap<Spanned<String>, Spanned<RawProfile>>,
    #[serde(default)]
    network: RawNetwork,
    #[serde(default)]
    agent: BTreeMap<Spanned<String>, Spanned<aq_agents::RawPreset>>,
    #[serde(default)]
    hooks: RawHooks,
    #[serde(default)]
    mcp: RawMcp,
    #[serde(default)]
    workspace: BTreeMap<Spanned<String>, Spanned<RawWorkspace>>,
    #[serde(default)]
    audit: RawAudit,
    #[serde(default)]
    undo: RawUndo,
    #[serde(default)]
    program: BTreeMap<Spanned<String>, Spanned<RawProgram>>,
    managed: Option<Spanned<crate::managed::RawManaged>>,
}

/// `[program.NAME]`: what a platform CLI's subcommands do.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProgram {
    default: Option<Spanned<String>>,
    #[serde(default)]
    subs: BTreeMap<Spanned<String>, Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUndo {
    enabled: Option<Spanned<bool>>,
    max_file_mb: Option<Spanned<u64>>,
    keep_days: Option<Spanned<u32>>,
    max_store_mb: Option<Spanned<u64>>,
    #[serde(default)]
    include: Vec<Spanned<String>>,
    coalesce_ms: Option<Spanned<u64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAudit {
    #[serde(default)]
    export: Vec<Spanned<RawExport>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExport {
    format: Spanned<String>,
    endpoint: Spanned<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkspace {
    #[serde(default)]
    writable: Vec<Spanned<String>>,
    #[serde(default)]
    readable: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMcp {
    #[serde(default)]
    deny: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHooks {
    allow: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    #[serde(default)]
    allow: Vec<Spanned<String>>,
    #[serde(default)]
    resolve: Vec<Spanned<String>>,
    #[serde(default)]
    permit: Vec<Spanned<String>>,
    unlisted: Option<Spanned<String>>,
    #[serde(default)]
    http: BTreeMap<Spanned<String>, RawHttpRule>,
    #[serde(default)]
    credentials: BTreeMap<Spanned<String>, RawCredential>,
    #[serde(default)]
    credential_presets: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttpRule {
    #[serde(default)]
    methods: Vec<Spanned<String>>,
    #[serde(default)]
    paths: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCredential {
    header: Spanned<String>,
    value: Spanned<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSession {
    approval_timeout_secs: Option<Spanned<u64>>,
    unanswered: Option<Spanned<String>>,
    #[serde(default)]
    shims: Vec<Spanned<String>>,
    #[serde(default)]
    env_pass: Vec<Spanned<String>>,
    #[serde(default)]
    host_sockets: Vec<Spanned<String>>,
    profile: Option<Spanned<String>>,
    preflight: Option<Spanned<bool>>,
    wait_for_approver: Option<Spanned<bool>>,
    #[serde(default)]
    trusted_exec: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPaths {
    #[serde(default)]
    sensitive: Vec<Spanned<String>>,
    #[serde(default)]
    unmasked: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: Spanned<String>,
    action: Spanned<String>,
    risk: Option<Spanned<String>>,
    why: Spanned<String>,
    safer: Option<String>,
    #[serde(default)]
    program: Vec<Spanned<String>>,
    #[serde(default)]
    subcommand: Vec<Spanned<String>>,
    #[serde(default)]
    flags: Vec<Spanned<String>>,
    #[serde(default)]
    args: Vec<Spanned<String>>,
    #[serde(default)]
    paths: Vec<Spanned<String>>,
}

/// Parses and checks one policy file.
///
/// `source` names the file in messages and provenance; nothing is read.
pub fn parse_layer(source: &str, text: &str) -> Result<PolicyLayer, ConfigError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        ConfigError::new(source, text, e.span(), e.message().trim().to_string()).help(SCHEMA_HELP)
    })?;
    let cx = FileCx { source, text };
    check_version(cx, raw.version.as_ref())?;
    // Custom rules first: `[rules]` errors can then say when an id is one of them.
    let custom_rules = parse_custom_rules(cx, &raw.rule)?;
    let actions = parse_actions(cx, &raw.rules, &custom_rules)?;
    let sensitive_paths = parse_sensitive_paths(cx, &raw.paths.sensitive)?;
    let unmasked_paths = parse_unmasked_paths(cx, &raw.paths.unmasked)?;
    let session = parse_session(cx, &raw.session)?;
    let profiles = parse_profiles(cx, raw.profile)?;
    let hooks_approve = parse_hooks_allow(cx, raw.hooks.allow.as_ref())?;
    let mcp_deny = parse_mcp_deny(cx, &raw.mcp.deny)?;
    let agents = parse_agents(cx, raw.agent)?;
    let network = parse_network(cx, &raw.network)?;
    let workspaces = parse_workspaces(cx, raw.workspace)?;
    let audit_export = parse_audit_export(cx, &raw.audit.export)?;
    let undo = parse_undo(cx, &raw.undo)?;
    let programs = parse_programs(cx, raw.program)?;
    let managed = parse_managed(cx, raw.managed.as_ref())?;

    Ok(PolicyLayer {
        source: source.to_string(),
        managed,
        programs,
        actions,
        sensitive_paths,
        unmasked_paths,
        custom_rules,
        session,
        profiles,
        network,
        agents,
        hooks_approve,
        mcp_deny,
        workspaces,
        audit_export,
        undo,
    })
}

/// The file being parsed, so that every section's errors and locations point into it.
#[derive(Clone, Copy)]
struct FileCx<'a> {
    source: &'a str,
    text: &'a str,
}

impl FileCx<'_> {
    /// An error about the text at `span`.
    fn err(self, span: Range<usize>, message: String) -> ConfigError {
        ConfigError::new(self.source, self.text, Some(span), message)
    }

    /// Where byte `offset` of the file is.
    fn loc(self, offset: usize) -> Location {
        Location::at_offset(self.source, self.text, offset)
    }

    /// A value with where it was written, for settings that need no check.
    fn spanned<T: Copy>(self, v: Option<&Spanned<T>>) -> Option<(T, Location)> {
        v.map(|v| (*v.get_ref(), self.loc(v.span().start)))
    }
}

/// `version`: only the version this aq reads is accepted.
fn check_version(cx: FileCx, version: Option<&Spanned<i64>>) -> Result<(), ConfigError> {
    if let Some(v) = version
        && *v.get_ref() != POLICY_VERSION
    {
        return Err(cx
            .err(
                v.span(),
                format!("unsupported policy file version {}", v.get_ref()),
            )
            .help(format!(
                "this aq reads version {POLICY_VERSION}; write `version = {POLICY_VERSION}` and follow docs/policy.md"
            )));
    }
    Ok(())
}

/// `[[rule]]` tables, in file order, each with an id of its own.
fn parse_custom_rules(
    cx: FileCx,
    tables: &[Spanned<RawRule>],
) -> Result<Vec<RuleDefinition>, ConfigError> {
    let mut custom_rules = Vec::new();
    let mut seen_ids = BTreeSet::new();
    for table in tables {
        check_rule_id(cx, &table.get_ref().id, &mut seen_ids)?;
        custom_rules.push(parse_custom_rule(cx, table)?);
    }
    Ok(custom_rules)
}

/// A custom rule's id: not a built-in one, kebab-case, and not seen before in the file.
fn check_rule_id(
    cx: FileCx,
    id: &Spanned<String>,
    seen_ids: &mut BTreeSet<String>,
) -> Result<(), ConfigError> {
    let span = id.span();
    let id = id.get_ref();
    if let Ok(builtin) = id.parse::<RuleId>() {
        return Err(cx.err(span, format!("`{id}` is a built-in rule id")).help(format!(
            "pick another id for your own rule; to change the built-in rule's action write `\"{builtin}\" = \"block\"` under [rules]"
        )));
    }
    if !is_kebab_case(id) {
        return Err(cx.err(span, format!("rule id `{id}` is not kebab-case"))
            .help("use lowercase letters, digits and single dashes, starting with a letter, e.g. `no-terraform-apply`"));
    }
    if !seen_ids.insert(id.clone()) {
        return Err(cx
            .err(
                span,
                format!("rule id `{id}` is defined twice in this file"),
            )
            .help("give each [[rule]] its own id"));
    }
    Ok(())
}

/// One `[[rule]]` table whose id is already checked: its action, risk, `why` and patterns.
fn parse_custom_rule(cx: FileCx, table: &Spanned<RawRule>) -> Result<RuleDefinition, ConfigError> {
    let r = table.get_ref();
    let id = r.id.get_ref();
    let action = r
        .action
        .get_ref()
        .parse::<Decision>()
        .map_err(|m| cx.err(r.action.span(), format!("rule `{id}`: {m}")))?;
    let risk = match &r.risk {
        Some(risk) => risk
            .get_ref()
            .parse::<Risk>()
            .map_err(|m| cx.err(risk.span(), format!("rule `{id}`: {m}")))?,
        None => Risk::Medium,
    };
    if r.why.get_ref().trim().is_empty() {
        return Err(cx
            .err(r.why.span(), format!("rule `{id}` has an empty `why`"))
            .help("say in a sentence why the rule matters; it is shown when the rule fires"));
    }
    let lists = [
        ("program", &r.program),
        ("subcommand", &r.subcommand),
        ("flags", &r.flags),
        ("args", &r.args),
        ("paths", &r.paths),
    ];
    for (name, list) in lists {
        check_rule_patterns(cx, id, name, list)?;
    }
    if lists.iter().all(|(_, list)| list.is_empty()) {
        return Err(cx.err(table.span(), format!("rule `{id}` matches nothing"))
            .help("set at least one of `program`, `subcommand`, `flags`, `args` or `paths`, e.g. program = [\"terraform\"]"));
    }
    let strings = |list: &[Spanned<String>]| -> Vec<String> {
        list.iter().map(|s| s.get_ref().clone()).collect()
    };
    Ok(RuleDefinition {
        rule: CustomRule {
            id: id.clone(),
            action,
            risk,
            why: r.why.get_ref().clone(),
            safer: r.safer.clone().filter(|s| !s.trim().is_empty()),
            matcher: CommandMatcher {
                program: strings(&r.program),
                subcommand: strings(&r.subcommand),
                flags: strings(&r.flags),
                args: strings(&r.args),
                paths: strings(&r.paths),
            },
        },
        at: cx.loc(table.span().start),
    })
}

/// One pattern list of a custom rule: valid globs (flags are not globs) and no empty pattern.
fn check_rule_patterns(
    cx: FileCx,
    id: &str,
    name: &str,
    list: &[Spanned<String>],
) -> Result<(), ConfigError> {
    if name != "flags"
        && let Some((p, m)) = list
            .iter()
            .find_map(|p| check_glob(p.get_ref()).err().map(|m| (p, m)))
    {
        return Err(cx
            .err(p.span(), format!("rule `{id}`, `{name}`: {m}"))
            .help(GLOB_HELP));
    }
    if let Some(empty) = list.iter().find(|p| p.get_ref().trim().is_empty()) {
        return Err(cx
            .err(
                empty.span(),
                format!("rule `{id}`: empty pattern in `{name}`"),
            )
            .help("remove the empty string; an empty pattern would match nothing or everything"));
    }
    Ok(())
}

/// `[rules]`: built-in rules' actions, in file order.
fn parse_actions(
    cx: FileCx,
    rules: &BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    custom_rules: &[RuleDefinition],
) -> Result<Vec<ActionSetting>, ConfigError> {
    let mut entries: Vec<_> = rules.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut actions = Vec::new();
    for (key, value) in entries {
        let rule = builtin_rule_id(cx, key, custom_rules)?;
        let action = match value.get_ref() {
            toml::Value::String(s) => s.parse::<Decision>().map_err(|e| e.to_string()),
            other => Err(format!(
                "expected \"allow\", \"ask\" or \"block\", found {} `{other}`",
                other.type_str()
            )),
        }
        .map_err(|m| cx.err(value.span(), format!("`{rule}`: {m}")))?;
        actions.push(ActionSetting {
            rule,
            action,
            at: cx.loc(key.span().start),
        });
    }
    Ok(actions)
}

/// A `[rules]` key: a built-in rule id, else an error that names the custom rule or the nearest id.
fn builtin_rule_id(
    cx: FileCx,
    key: &Spanned<String>,
    custom_rules: &[RuleDefinition],
) -> Result<RuleId, ConfigError> {
    let name = key.get_ref();
    match name.parse::<RuleId>() {
        Ok(rule) => Ok(rule),
        Err(_) if custom_rules.iter().any(|d| d.rule.id == *name) => Err(cx
            .err(
                key.span(),
                format!("`{name}` is one of your own rules, not a built-in one"),
            )
            .help(format!(
                "set its action with `action = ...` in the [[rule]] whose id is `{name}`"
            ))),
        Err(_) => {
            let hint = match closest_rule_id(name) {
                Some(near) => format!(
                    "did you mean `{near}`? `aq explain --rules` lists every built-in rule id"
                ),
                None => "`aq explain --rules` lists every built-in rule id".to_string(),
            };
            Err(cx
                .err(key.span(), format!("unknown rule id `{name}`"))
                .help(hint))
        }
    }
}

/// `[paths] sensitive`: non-empty globs, trimmed.
fn parse_sensitive_paths(
    cx: FileCx,
    sensitive: &[Spanned<String>],
) -> Result<Vec<SensitivePath>, ConfigError> {
    let mut sensitive_paths = Vec::new();
    for p in sensitive {
        let pattern = p.get_ref().trim();
        if pattern.is_empty() {
            return Err(cx.err(p.span(), "empty pattern in `sensitive`".to_string())
                .help("remove the empty string, or name a path or glob such as \"~/.config/acme/token\" or \"*.kdbx\""));
        }
        check_glob(pattern).map_err(|m| cx.err(p.span(), m.to_string()).help(GLOB_HELP))?;
        sensitive_paths.push(SensitivePath {
            pattern: pattern.to_string(),
            at: cx.loc(p.span().start),
        });
    }
    Ok(sensitive_paths)
}

/// `[paths] unmasked`: globs that name a credential, never the whole home or root.
fn parse_unmasked_paths(
    cx: FileCx,
    unmasked: &[Spanned<String>],
) -> Result<Vec<SensitivePath>, ConfigError> {
    let mut unmasked_paths = Vec::new();
    for p in unmasked {
        let pattern = p.get_ref().trim();
        if pattern.is_empty() || pattern == "~" || pattern == "~/" || pattern == "/" {
            return Err(cx.err(p.span(), format!("`{pattern}` in `unmasked` names no credential"))
                .help("name the masked path to pass back, as `aq policy show` lists it, such as \"~/.m2/settings.xml\" or \"terraform.tfstate\""));
        }
        check_glob(pattern).map_err(|m| cx.err(p.span(), m.to_string()).help(GLOB_HELP))?;
        unmasked_paths.push(SensitivePath {
            pattern: pattern.to_string(),
            at: cx.loc(p.span().start),
        });
    }
    Ok(unmasked_paths)
}

/// `[session]`, its settings checked in the order they are declared.
fn parse_session(cx: FileCx, raw: &RawSession) -> Result<SessionLayer, ConfigError> {
    let approval_timeout_secs = session_timeout(cx, raw.approval_timeout_secs.as_ref())?;
    let unanswered = session_unanswered(cx, raw.unanswered.as_ref())?;
    let shims = session_shims(cx, &raw.shims)?;
    let env_pass = session_env_pass(cx, &raw.env_pass)?;
    let host_sockets = session_host_sockets(cx, &raw.host_sockets)?;
    let profile = raw
        .profile
        .as_ref()
        .map(|p| (p.get_ref().clone(), cx.loc(p.span().start)));
    let preflight = cx.spanned(raw.preflight.as_ref());
    let wait_for_approver = cx.spanned(raw.wait_for_approver.as_ref());
    let trusted_exec = session_trusted_exec(cx, &raw.trusted_exec)?;
    Ok(SessionLayer {
        approval_timeout_secs,
        unanswered,
        shims,
        env_pass,
        host_sockets,
        profile,
        preflight,
        wait_for_approver,
        trusted_exec,
    })
}

/// `[session] approval_timeout_secs`: from a second to a day.
fn session_timeout(
    cx: FileCx,
    t: Option<&Spanned<u64>>,
) -> Result<Option<(u64, Location)>, ConfigError> {
    let Some(t) = t else { return Ok(None) };
    if !(1..=86_400).contains(t.get_ref()) {
        return Err(cx
            .err(
                t.span(),
                format!("approval_timeout_secs = {} is out of range", t.get_ref()),
            )
            .help("give a number of seconds from 1 to 86400"));
    }
    Ok(Some((*t.get_ref(), cx.loc(t.span().start))))
}

/// `[session] unanswered`: `"deny"` blocks, `"allow"` allows.
fn session_unanswered(
    cx: FileCx,
    u: Option<&Spanned<String>>,
) -> Result<Option<(Decision, Location)>, ConfigError> {
    let Some(u) = u else { return Ok(None) };
    let d = match u.get_ref().as_str() {
        "deny" => Decision::Block,
        "allow" => Decision::Allow,
        other => {
            return Err(cx
                .err(u.span(), format!("unknown value `{other}` for unanswered"))
                .help("write `unanswered = \"deny\"` (the default) or `\"allow\"`"));
        }
    };
    Ok(Some((d, cx.loc(u.span().start))))
}

/// `[session] shims`: program names as looked up on PATH, never aq itself.
fn session_shims(
    cx: FileCx,
    shims: &[Spanned<String>],
) -> Result<Vec<(String, Location)>, ConfigError> {
    let mut out = Vec::new();
    for name in shims {
        let n = name.get_ref();
        if n.is_empty() || n.contains('/') || n == "aq" || n == "." || n == ".." {
            return Err(cx
                .err(name.span(), format!("`{n}` cannot be a shim name"))
                .help("give a program name as it is looked up on PATH, like `terraform`"));
        }
        out.push((n.clone(), cx.loc(name.span().start)));
    }
    Ok(out)
}

/// `[session] env_pass`: environment variable names.
fn session_env_pass(
    cx: FileCx,
    env_pass: &[Spanned<String>],
) -> Result<Vec<(String, Location)>, ConfigError> {
    let mut out = Vec::new();
    for var in env_pass {
        let v = var.get_ref();
        if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(cx
                .err(
                    var.span(),
                    format!("`{v}` is not an environment variable name"),
                )
                .help("use letters, digits and underscores, like `OPENAI_API_KEY`"));
        }
        out.push((v.clone(), cx.loc(var.span().start)));
    }
    Ok(out)
}

/// `[session] host_sockets`: absolute or home paths, or `$VAR` naming one.
fn session_host_sockets(
    cx: FileCx,
    host_sockets: &[Spanned<String>],
) -> Result<Vec<(String, Location)>, ConfigError> {
    let mut out = Vec::new();
    for s in host_sockets {
        let v = s.get_ref();
        let var_ok = v.strip_prefix('$').is_some_and(|n| {
            !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if !(v.starts_with('/') || v.starts_with("~/") || var_ok) {
            return Err(cx.err(
                s.span(),
                format!("`{v}` is not a socket path"),
            )
            .help("give an absolute path, `~/PATH`, or `$VAR` for the path a variable holds, like `$SSH_AUTH_SOCK`"));
        }
        out.push((v.clone(), cx.loc(s.span().start)));
    }
    Ok(out)
}

/// `[session] trusted_exec`: entries as [`crate::exec_trust`] reads them.
fn session_trusted_exec(
    cx: FileCx,
    trusted_exec: &[Spanned<String>],
) -> Result<Vec<(String, Location)>, ConfigError> {
    let mut out = Vec::new();
    for entry in trusted_exec {
        crate::exec_trust::check_entry(entry.get_ref()).map_err(|m| {
            cx.err(entry.span(), m.to_string())
                .help(crate::exec_trust::ENTRY_HELP)
        })?;
        out.push((entry.get_ref().clone(), cx.loc(entry.span().start)));
    }
    Ok(out)
}

/// `[profile.NAME]` tables, each checked by the profile module.
fn parse_profiles(
    cx: FileCx,
    raw: BTreeMap<Spanned<String>, Spanned<RawProfile>>,
) -> Result<Vec<(String, ProfileLayer, Location)>, ConfigError> {
    let mut profiles = Vec::new();
    for (name, table) in raw {
        let at = cx.loc(name.span().start);
        let span = name.span();
        let layer = crate::profile::check_layer(name.get_ref(), table.into_inner())
            .map_err(|(message, help)| cx.err(span, message).help(help))?;
        profiles.push((name.into_inner(), layer, at));
    }
    Ok(profiles)
}

/// `[hooks] allow`: `"approve"` when an aq allow approves in the agent's hook, `"defer"` when not.
fn parse_hooks_allow(
    cx: FileCx,
    allow: Option<&Spanned<String>>,
) -> Result<Option<(bool, Location)>, ConfigError> {
    let Some(a) = allow else { return Ok(None) };
    let approve = match a.get_ref().as_str() {
        "defer" => false,
        "approve" => true,
        other => {
            return Err(cx.err(a.span(), format!("unknown value `{other}` for [hooks] allow"))
                .help("write `allow = \"defer\"` (the agent's own rules decide what aq allows; the default) or `\"approve\"`"));
        }
    };
    Ok(Some((approve, cx.loc(a.span().start))))
}

/// `[mcp] deny`: `SERVER.TOOL` globs.
fn parse_mcp_deny(
    cx: FileCx,
    deny: &[Spanned<String>],
) -> Result<Vec<(String, Location)>, ConfigError> {
    let mut mcp_deny = Vec::new();
    for d in deny {
        let v = d.get_ref();
        if !v.contains('.') {
            return Err(cx.err(d.span(), format!("`{v}` is not SERVER.TOOL"))
                .help("write the server's name, a dot and the tool's, globs allowed: `files.write_*`, `*.delete`"));
        }
        check_glob(v).map_err(|m| cx.err(d.span(), m.to_string()))?;
        mcp_deny.push((v.clone(), cx.loc(d.span().start)));
    }
    Ok(mcp_deny)
}

/// `[agent.NAME]` tables, each checked by the agents crate.
fn parse_agents(
    cx: FileCx,
    raw: BTreeMap<Spanned<String>, Spanned<aq_agents::RawPreset>>,
) -> Result<Vec<(String, aq_agents::PresetLayer, Location)>, ConfigError> {
    let mut agents = Vec::new();
    for (name, table) in raw {
        let at = cx.loc(name.span().start);
        let span = name.span();
        let layer = aq_agents::check_layer(name.get_ref(), table.into_inner())
            .map_err(|(message, help)| cx.err(span, message).help(help))?;
        agents.push((name.into_inner(), layer, at));
    }
    Ok(agents)
}

/// `[network]`: its lists, then `unlisted`, the HTTP rules, the credential presets and the credentials.
fn parse_network(cx: FileCx, raw: &RawNetwork) -> Result<NetworkLayer, ConfigError> {
    let allow = network_entries(cx, &raw.allow)?;
    let resolve = network_entries(cx, &raw.resolve)?;
    let permit = network_entries(cx, &raw.permit)?;
    let unlisted = network_unlisted(cx, raw.unlisted.as_ref())?;
    let http = network_http(cx, &raw.http)?;
    let credential_presets = network_credential_presets(cx, &raw.credential_presets)?;
    let credentials = network_credentials(cx, &raw.credentials)?;
    Ok(NetworkLayer {
        allow,
        resolve,
        permit,
        unlisted,
        http,
        credentials,
        credential_presets,
    })
}

/// One of `[network]`'s `allow`, `resolve` or `permit`: single words, trimmed.
fn network_entries(
    cx: FileCx,
    entries: &[Spanned<String>],
) -> Result<Vec<(String, Location)>, ConfigError> {
    let mut list = Vec::new();
    for e in entries {
        let v = e.get_ref().trim();
        if v.is_empty() || v.contains(char::is_whitespace) {
            return Err(cx.err(e.span(), format!("`{v}` is not a network entry"))
                .help("write a host (`registry.npmjs.org`, `*.example.com:443`), `NAME:ADDR` under resolve, or a CIDR under permit"));
        }
        list.push((v.to_string(), cx.loc(e.span().start)));
    }
    Ok(list)
}

/// `[network] unlisted`: `"ask"` or `"refuse"`.
fn network_unlisted(
    cx: FileCx,
    u: Option<&Spanned<String>>,
) -> Result<Option<(UnlistedHosts, Location)>, ConfigError> {
    let Some(u) = u else { return Ok(None) };
    let value = match u.get_ref().as_str() {
        "ask" => UnlistedHosts::Ask,
        "refuse" => UnlistedHosts::Refuse,
        other => {
            return Err(cx
                .err(
                    u.span(),
                    format!("`{other}` is not a choice for unlisted hosts"),
                )
                .help("write unlisted = \"ask\" (ask whoever can answer) or \"refuse\""));
        }
    };
    Ok(Some((value, cx.loc(u.span().start))))
}

/// A host of a `[network.http]` or `[network.credentials]` table: one
/// name, lower case, no wildcard, no port.
fn network_host(cx: FileCx, host: &Spanned<String>) -> Result<String, ConfigError> {
    let v = host.get_ref().trim_end_matches('.').to_ascii_lowercase();
    if v.is_empty()
        || !v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
    {
        return Err(cx
            .err(
                host.span(),
                format!("`{}` is not a host name", host.get_ref()),
            )
            .help(
                "name one host, without a port or wildcard: [network.http.\"api.example.com\"]",
            ));
    }
    Ok(v)
}

/// `[network.http."HOST"]` tables: upper-case methods and path prefixes per host.
fn network_http(
    cx: FileCx,
    raw: &BTreeMap<Spanned<String>, RawHttpRule>,
) -> Result<Vec<(String, HttpRuleSetting, Location)>, ConfigError> {
    let mut http = Vec::new();
    for (host, rule) in raw {
        let name = network_host(cx, host)?;
        let mut setting = HttpRuleSetting::default();
        for m in &rule.methods {
            let v = m.get_ref();
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_uppercase()) {
                return Err(cx
                    .err(m.span(), format!("`{v}` is not an HTTP method"))
                    .help("write methods in upper case: methods = [\"GET\", \"HEAD\"]"));
            }
            setting.methods.push(v.clone());
        }
        for p in &rule.paths {
            let v = p.get_ref();
            if !v.starts_with('/') || v.contains(['?', '#', ' ']) {
                return Err(cx
                    .err(p.span(), format!("`{v}` is not a path prefix"))
                    .help(
                        "write a path that starts with `/`, without a query: paths = [\"/v1/\"]",
                    ));
            }
            setting.paths.push(v.clone());
        }
        http.push((name, setting, cx.loc(host.span().start)));
    }
    Ok(http)
}

/// `[network] credential_presets`: names of the built-in recipes.
fn network_credential_presets(
    cx: FileCx,
    presets: &[Spanned<String>],
) -> Result<Vec<(String, Location)>, ConfigError> {
    let mut out = Vec::new();
    for p in presets {
        let v = p.get_ref();
        if !CREDENTIAL_PRESETS.contains(&v.as_str()) {
            return Err(cx
                .err(p.span(), format!("`{v}` is not a credential preset"))
                .help(format!("the presets are {}", CREDENTIAL_PRESETS.join(", "))));
        }
        out.push((v.clone(), cx.loc(p.span().start)));
    }
    Ok(out)
}

/// `[network.credentials."HOST"]` tables: a header name and a value that names its secret.
fn network_credentials(
    cx: FileCx,
    raw: &BTreeMap<Spanned<String>, RawCredential>,
) -> Result<Vec<(String, CredentialSetting, Location)>, ConfigError> {
    let mut credentials = Vec::new();
    for (host, cred) in raw {
        let name = network_host(cx, host)?;
        let header = cred.header.get_ref();
        if header.is_empty()
            || !header
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(cx
                .err(
                    cred.header.span(),
                    format!("`{header}` is not a header name"),
                )
                .help("write a header name such as `Authorization` or `X-Api-Key`"));
        }
        let value = cred.value.get_ref();
        if value.contains(['\r', '\n', '\0']) {
            return Err(cx.err(
                cred.value.span(),
                "a header value cannot hold a line break".to_string(),
            ));
        }
        if !value.contains("${") {
            return Err(cx.err(cred.value.span(), "the value holds no `${NAME}`: a secret written into a policy file is a secret on disk".to_string())
                .help("name the variable that holds it: value = \"Bearer ${EXAMPLE_TOKEN}\""));
        }
        credentials.push((
            name,
            CredentialSetting {
                header: header.clone(),
                value: value.clone(),
            },
            cx.loc(host.span().start),
        ));
    }
    Ok(credentials)
}

/// `[workspace."PATH"]` tables: an absolute workspace and the absolute paths it grants.
fn parse_workspaces(
    cx: FileCx,
    raw: BTreeMap<Spanned<String>, Spanned<RawWorkspace>>,
) -> Result<Vec<(WorkspaceGrant, Location)>, ConfigError> {
    let mut workspaces = Vec::new();
    for (path, table) in raw {
        let at = cx.loc(path.span().start);
        if !path.get_ref().starts_with('/') {
            return Err(cx
                .err(
                    path.span(),
                    format!("workspace `{}` is not an absolute path", path.get_ref()),
                )
                .help(
                    "name the workspace by its absolute path: [workspace.\"/home/me/src/app\"]",
                ));
        }
        let t = table.into_inner();
        let mut grant = WorkspaceGrant {
            path: path.into_inner(),
            ..WorkspaceGrant::default()
        };
        for (list, entries) in [
            (&mut grant.writable, &t.writable),
            (&mut grant.readable, &t.readable),
        ] {
            for e in entries {
                let v = e.get_ref();
                if !(v.starts_with('/') || v.starts_with("~/")) {
                    return Err(cx
                        .err(e.span(), format!("`{v}` is not an absolute path"))
                        .help("write an absolute path or one under the home directory (`~/...`)"));
                }
                list.push(v.clone());
            }
        }
        workspaces.push((grant, at));
    }
    Ok(workspaces)
}

/// `[audit] export`: targets as [`ExportTarget`] reads them.
fn parse_audit_export(
    cx: FileCx,
    export: &[Spanned<RawExport>],
) -> Result<Vec<(ExportTarget, Location)>, ConfigError> {
    let mut audit_export = Vec::new();
    for e in export {
        let RawExport { format, endpoint } = e.get_ref();
        let target = ExportTarget::parse(format.get_ref(), endpoint.get_ref()).map_err(|m| {
            let span = if matches!(m, ExportTargetError::UnknownFormat { .. }) {
                format.span()
            } else {
                endpoint.span()
            };
            cx.err(span, format!("[audit] export: {m}")).help(
                "write `export = [{ format = \"otlp\", endpoint = \"http://127.0.0.1:4318\" }]`; syslog takes unix:///dev/log, udp://HOST:PORT or tcp://HOST:PORT",
            )
        })?;
        audit_export.push((target, cx.loc(e.span().start)));
    }
    Ok(audit_export)
}

/// `[undo]`: its numbers as written, `include` paths inside the workspace, and a file size of at least 1 MiB.
fn parse_undo(cx: FileCx, raw: &RawUndo) -> Result<UndoLayer, ConfigError> {
    let mut undo = UndoLayer {
        enabled: cx.spanned(raw.enabled.as_ref()),
        max_file_mb: cx.spanned(raw.max_file_mb.as_ref()),
        keep_days: cx.spanned(raw.keep_days.as_ref()),
        max_store_mb: cx.spanned(raw.max_store_mb.as_ref()),
        include: Vec::new(),
        coalesce_ms: cx.spanned(raw.coalesce_ms.as_ref()),
    };
    for e in &raw.include {
        let v = e.get_ref();
        let bad = v.is_empty()
            || v.starts_with('/')
            || v.starts_with('~')
            || std::path::Path::new(v)
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)));
        if bad {
            return Err(cx
                .err(
                    e.span(),
                    format!("[undo] include: `{v}` is not a path inside the workspace"),
                )
                .help(
                    "write a path relative to the workspace, like `include = [\"data/fixtures\"]`",
                ));
        }
        undo.include.push((v.clone(), cx.loc(e.span().start)));
    }
    if let Some(v) = &raw.max_file_mb
        && *v.get_ref() == 0
    {
        return Err(cx
            .err(
                v.span(),
                "[undo] max_file_mb must be at least 1".to_string(),
            )
            .help("files over this size are listed as not kept; the default is 64"));
    }
    Ok(undo)
}

/// `[program.NAME]` tables: what a program and its subcommands do.
fn parse_programs(
    cx: FileCx,
    raw: BTreeMap<Spanned<String>, Spanned<RawProgram>>,
) -> Result<Vec<(String, crate::policy::UserProgram, Location)>, ConfigError> {
    let mut programs = Vec::new();
    for (name, table) in raw {
        let at = cx.loc(name.span().start);
        let n = name.get_ref();
        if n.is_empty() || n.contains(['/', ' ', '\t']) {
            return Err(cx
                .err(name.span(), format!("`{n}` is not a program name"))
                .help("name the program as it is run, without a path: [program.acme]"));
        }
        let t = table.into_inner();
        let mut entry = crate::policy::UserProgram {
            default: t
                .default
                .as_ref()
                .map(|v| program_effect(cx, v))
                .transpose()?,
            subs: Vec::new(),
            known: false,
        };
        for (sub, e) in &t.subs {
            let words: Vec<&str> = sub.get_ref().split_whitespace().collect();
            if words.is_empty() || words.iter().any(|w| w.starts_with('-')) {
                return Err(cx.err(sub.span(), format!("`{}` is not a subcommand", sub.get_ref()))
                    .help("write the subcommand's words, without options: subs = { \"repo delete\" = \"delete\" }"));
            }
            entry.subs.push((words.join(" "), program_effect(cx, e)?));
        }
        entry.sort_subs();
        programs.push((n.clone(), entry, at));
    }
    Ok(programs)
}

/// An effect a `[program.NAME]` table names, by its canonical name.
fn program_effect(cx: FileCx, v: &Spanned<String>) -> Result<String, ConfigError> {
    aq_knowledge::programs::Effect::from_name(v.get_ref())
        .map(|e| e.name().to_string())
        .ok_or_else(|| {
            let names: Vec<&str> = aq_knowledge::programs::Effect::ALL
                .iter()
                .map(|(n, _)| *n)
                .collect();
            cx.err(v.span(), format!("`{}` is not an effect", v.get_ref()))
                .help(format!("write one of: {}", names.join(", ")))
        })
}

/// `[managed]`: what the managed file locks, as the managed module checks it.
fn parse_managed(
    cx: FileCx,
    managed: Option<&Spanned<crate::managed::RawManaged>>,
) -> Result<Option<(crate::managed::ManagedSettings, Location)>, ConfigError> {
    let Some(m) = managed else { return Ok(None) };
    let settings =
        crate::managed::check(m.get_ref()).map_err(|e| cx.err(m.span(), e.to_string()))?;
    Ok(Some((settings, cx.loc(m.span().start))))
}

/// A glob that can never match is an error, not a rule that silently does
/// nothing.
fn check_glob(pattern: &str) -> Result<(), EntryError> {
    glob::Pattern::new(pattern)
        .map(drop)
        .map_err(|e| EntryError::Glob {
            pattern: pattern.to_string(),
            why: e.msg,
        })
}

/// `a-z0-9` words joined by single dashes, starting with a letter.
fn is_kebab_case(id: &str) -> bool {
    id.starts_with(|c: char| c.is_ascii_lowercase())
        && id.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// The built-in id nearest to a misspelled one, when it is close.
fn closest_rule_id(name: &str) -> Option<RuleId> {
    RuleId::ALL
        .iter()
        .map(|id| (edit_distance(name, id.as_str()), *id))
        .filter(|(d, _)| *d <= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, id)| id)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

// ---- layers -------------------------------------------------------------------

/// How much a layer may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Anything: the user's own file, `--policy FILE`, a trusted project file.
    Full,
    /// Only make the policy stricter: an untrusted project file. Loosening
    /// entries are ignored and reported.
    TightenOnly,
}

/// A loosening entry of a [`Trust::TightenOnly`] layer that was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredEntry {
    /// The field it belongs to, as its [`Field`] names it
    /// (`[session] env_pass`).
    pub(crate) field: &'static str,
    /// Where it is written.
    pub at: Location,
    /// The entry, as written (`"pkg-install" = "allow"`, `[[rule]] id = "x"`).
    pub entry: String,
    /// What stays in force instead.
    pub kept: String,
    /// The managed file that locks it, when that is why (else the layer
    /// was an untrusted project file).
    pub managed: Option<String>,
}

impl fmt::Display for IgnoredEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.managed {
            Some(file) => write!(
                f,
                "{}: refused {}: the managed policy {file} may only be tightened below it ({}); ask whoever manages this machine",
                self.at, self.entry, self.kept
            ),
            None => write!(
                f,
                "{}: ignored {}: an untrusted project file may only tighten the policy ({}); if you trust this file, run `aq policy trust {}`",
                self.at, self.entry, self.kept, self.at.source
            ),
        }
    }
}

/// Which file set each value that differs from the built-in policy. The
/// vectors run parallel to those of [`Policy`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    /// Who set each changed action.
    pub actions: BTreeMap<RuleId, Location>,
    /// Who added each of [`Policy::sensitive_paths`].
    pub sensitive_paths: Vec<Location>,
    /// Who defined each of [`Policy::custom_rules`].
    pub custom_rules: Vec<Location>,
    /// Who added each of [`NetworkSettings::allow`].
    pub network_allow: Vec<Location>,
    /// Who added each of [`NetworkSettings::resolve`].
    pub network_resolve: Vec<Location>,
    /// Who added each of [`NetworkSettings::permit`].
    pub network_permit: Vec<Location>,
    /// Who defined each of [`EffectivePolicy::workspaces`] (its table).
    pub(crate) workspaces: Vec<Location>,
    /// Who added each writable or readable path of a profile that its
    /// built-in lists lack; a path not here is built in.
    pub(crate) profile_paths: BTreeMap<(String, PathAccess, String), PathOrigin>,
}

/// Which list of a profile a path is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathAccess {
    /// `writable`.
    Write,
    /// `readable`.
    Read,
}

impl PathAccess {
    /// The key of the list in a profile or workspace table.
    pub fn key(self) -> &'static str {
        match self {
            PathAccess::Write => "writable",
            PathAccess::Read => "readable",
        }
    }
}

/// Where a profile's path came from: the file and the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathOrigin {
    /// The table (`[profile.strict]` or `[workspace."/src/app"]`).
    pub at: Location,
    /// The list, as `aq grants` names it: `[profile.strict] writable`,
    /// `[workspace."/src/app"] readable`.
    pub place: String,
}

/// The policy in force after some layers, with where each change came from.
/// Starts as the built-in policy; [`EffectivePolicy::apply`] adds a layer.
#[derive(Debug, Clone, Default)]
pub struct EffectivePolicy {
    /// What the engine runs with.
    pub policy: Policy,
    /// Which file set what.
    pub provenance: Provenance,
    /// Loosening entries of untrusted layers that were left out.
    pub ignored: Vec<IgnoredEntry>,
    /// `[session]` settings in force.
    pub session: SessionSettings,
    /// Sandbox profiles: the built-in ones as extended, then the user's own.
    pub profiles: ProfileSet,
    /// `[network]` in force.
    pub network: NetworkSettings,
    /// Agent presets: the built-in ones as extended, then the user's own.
    pub agents: aq_agents::PresetSet,
    /// Whether an aq allow approves in an agent's native hook (`[hooks]
    /// allow = "approve"`) instead of deferring to the agent's own rules.
    pub hooks_approve: bool,
    /// `[mcp] deny`: `SERVER.TOOL` globs `aq mcp run` refuses (any file
    /// may add them: refusing only tightens).
    pub mcp_deny: Vec<String>,
    /// `[workspace."PATH"]` grants of trusted files; see [`Self::for_workspace`].
    pub(crate) workspaces: Vec<WorkspaceGrant>,
    /// `[audit] export` targets of the user's files.
    pub audit_export: Vec<ExportTarget>,
    /// `[undo]` in force.
    pub undo: UndoSettings,
    /// The managed layer, when a managed file is in force: what it locks.
    pub managed: Option<ManagedInForce>,
}

/// What the managed file in force locks (`aq policy show` prints it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedInForce {
    /// The managed file.
    pub file: String,
    /// Its `[managed]` table.
    pub settings: crate::managed::ManagedSettings,
    /// The rule actions it sets: no file below lowers them.
    pub(crate) locked_rules: Vec<(RuleId, Decision)>,
    /// With `lock-network`, the only hosts that may be reached.
    pub hosts: Option<Vec<String>>,
}

/// The sandbox profiles in force (starts as [`Profile::builtins`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileSet(pub Vec<Profile>);

impl Default for ProfileSet {
    fn default() -> Self {
        ProfileSet(Profile::builtins())
    }
}

impl ProfileSet {
    /// The profile called `name`.
    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.0.iter().find(|p| p.name == name)
    }

    /// Every profile name, for messages.
    pub fn names(&self) -> Vec<&str> {
        self.0.iter().map(|p| p.name.as_str()).collect()
    }
}

impl EffectivePolicy {
    /// The built-in policy, no file applied.
    pub fn builtin() -> Self {
        Self::default()
    }

    /// Adds the `[workspace."PATH"]` grants whose PATH is `workspace` or
    /// holds it to every profile (once all layers are applied).
    pub fn for_workspace(&mut self, workspace: &std::path::Path) {
        for (grant, at) in self.workspaces.iter().zip(&self.provenance.workspaces) {
            if !workspace.starts_with(&grant.path) {
                continue;
            }
            for profile in &mut self.profiles.0 {
                for (list, add, access) in [
                    (&mut profile.writable, &grant.writable, PathAccess::Write),
                    (&mut profile.readable, &grant.readable, PathAccess::Read),
                ] {
                    for p in add {
                        if !list.contains(p) {
                            list.push(p.clone());
                            self.provenance.profile_paths.insert(
                                (profile.name.clone(), access, p.clone()),
                                PathOrigin {
                                    at: at.clone(),
                                    place: format!(
                                        "[workspace.\"{}\"] {}",
                                        grant.path,
                                        access.key()
                                    ),
                                },
                            );
                        }
                    }
                }
            }
        }
    }

    /// Where a profile's writable or readable path came from; `None` for
    /// one that is built in.
    pub fn path_origin(
        &self,
        profile: &str,
        access: PathAccess,
        path: &str,
    ) -> Option<&PathOrigin> {
        self.provenance
            .profile_paths
            .get(&(profile.to_string(), access, path.to_string()))
    }

    /// Applies one more layer on top; later layers win. Under
    /// [`Trust::TightenOnly`], what would loosen the policy in force is
    /// ignored (recorded in [`Self::ignored`]); each field says what that
    /// is by its [`Merge`] kind, declared in `EffectivePolicy::merge`.
    ///
    /// Fails when a custom rule id is already defined by an earlier layer.
    pub fn apply(&mut self, layer: &PolicyLayer, trust: Trust) -> Result<(), ConfigError> {
        // Check first, so a failed layer changes nothing.
        for def in &layer.custom_rules {
            if let Some(i) = self
                .policy
                .custom_rules
                .iter()
                .position(|r| r.id == def.rule.id)
            {
                let earlier = &self.provenance.custom_rules[i];
                return Err(ConfigError {
                    at: def.at.clone(),
                    message: format!("rule id `{}` is already defined at {earlier}", def.rule.id),
                    excerpt: None,
                    help: Some("rename one of the two rules: custom rule ids are unique across the user, project and --policy files".to_string()),
                });
            }
        }
        let mut m = Merger::new(trust);
        let merged = self.merge(layer, &mut m);
        self.ignored.append(&mut m.ignored);
        merged
    }

    /// Every field of a layer with how it merges, as [`Self::merge`]
    /// declares them (a profile table's included).
    #[cfg(test)]
    pub(crate) fn declared_fields() -> Vec<Field> {
        let mut m = Merger::new(Trust::Full);
        let layer =
            parse_layer("fields.toml", "[profile.strict]\n").unwrap_or_else(|e| panic!("{e}"));
        EffectivePolicy::builtin()
            .merge(&layer, &mut m)
            .unwrap_or_else(|e| panic!("{e}"));
        m.fields
    }

    /// Merges every field of `layer`, each with its [`Merge`] kind, in the
    /// order their ignored entries are reported. The layer is destructured
    /// without `..`: a field added to [`PolicyLayer`] does not compile
    /// until it is merged here, and merging it means declaring its kind.
    #[deny(unused_variables)]
    fn merge(&mut self, layer: &PolicyLayer, m: &mut Merger) -> Result<(), ConfigError> {
        let PolicyLayer {
            // The file's name, not a setting.
            source: _,
            actions,
            sensitive_paths,
            unmasked_paths,
            custom_rules,
            session,
            profiles,
            network,
            agents,
            hooks_approve,
            mcp_deny,
            workspaces,
            audit_export,
            undo,
            programs,
            // The managed file's own table: `managed::combine` reads it,
            // and the loader refuses it in any other file.
            managed: _,
        } = layer;

        let f = m.field("[rules]", Merge::Tighten);
        for set in actions {
            let current = self.policy.action(set.rule);
            let taken = m.admit(
                f,
                &set.at,
                || set.action < current,
                || {
                    let by = match self.provenance.actions.get(&set.rule) {
                        Some(at) => format!("set at {at}"),
                        None => "built-in".to_string(),
                    };
                    (
                        format!("`\"{}\" = \"{}\"`", set.rule, set.action),
                        format!("`{}` stays `{current}`, {by}", set.rule),
                    )
                },
            );
            if taken {
                self.policy.actions.insert(set.rule, set.action);
                self.provenance.actions.insert(set.rule, set.at.clone());
            }
        }

        let f = m.field("[paths] sensitive", Merge::Union);
        for p in sensitive_paths {
            let taken = m.admit(
                f,
                &p.at,
                || true,
                || {
                    (
                        format!("[paths] sensitive `{}`", p.pattern),
                        "the path is not treated as a secret".to_string(),
                    )
                },
            );
            if taken && !self.policy.sensitive_paths.contains(&p.pattern) {
                self.policy.sensitive_paths.push(p.pattern.clone());
                self.provenance.sensitive_paths.push(p.at.clone());
            }
        }

        let f = m.field("[paths] unmasked", Merge::Trusted);
        for p in unmasked_paths {
            m.add(
                f,
                &mut self.policy.unmasked_paths,
                &p.pattern,
                &p.at,
                || {
                    (
                        format!("[paths] unmasked `{}`", p.pattern),
                        "it stays masked and a secret".to_string(),
                    )
                },
            );
        }

        self.session.merge(session, m);

        let f = m.field("[profile.NAME]", Merge::Tighten);
        for (name, pl, at) in profiles {
            let existing = self.profiles.0.iter().position(|p| &p.name == name);
            // A new profile is looser: it can start from any other.
            let taken = m.admit(
                f,
                at,
                || existing.is_none(),
                || {
                    (
                        format!("new profile `{name}`"),
                        "an untrusted file can only tighten existing profiles".to_string(),
                    )
                },
            );
            if !taken {
                continue;
            }
            let index = match existing {
                Some(i) => i,
                None => {
                    let base = pl.extends.as_deref().unwrap_or(DEFAULT_PROFILE);
                    let Some(mut p) = self.profiles.get(base).cloned() else {
                        return Err(ConfigError {
                            at: at.clone(),
                            message: format!(
                                "profile `{name}` extends `{base}`, which is not defined"
                            ),
                            excerpt: None,
                            help: Some(format!(
                                "extend one of: {}",
                                self.profiles.names().join(", ")
                            )),
                        });
                    };
                    p.name = name.clone();
                    p.description = format!("{base}, extended by {}", at.source);
                    // Its paths came from where the base's did.
                    let inherited: Vec<_> = self
                        .provenance
                        .profile_paths
                        .iter()
                        .filter(|((n, _, _), _)| n == base)
                        .map(|((_, a, path), o)| ((name.clone(), *a, path.clone()), o.clone()))
                        .collect();
                    self.provenance.profile_paths.extend(inherited);
                    self.profiles.0.push(p);
                    self.profiles.0.len() - 1
                }
            };
            let before = self.profiles.0[index].clone();
            let from = m.ignored.len();
            self.profiles.0[index].merge(pl, m, at);
            for e in &mut m.ignored[from..] {
                e.entry = format!("{} in [profile.{name}]", e.entry);
            }
            let after = &self.profiles.0[index];
            for (access, was, now) in [
                (PathAccess::Write, &before.writable, &after.writable),
                (PathAccess::Read, &before.readable, &after.readable),
            ] {
                for p in now.iter().filter(|p| !was.contains(p)) {
                    self.provenance.profile_paths.insert(
                        (name.clone(), access, p.clone()),
                        PathOrigin {
                            at: at.clone(),
                            place: format!("[profile.{name}] {}", access.key()),
                        },
                    );
                }
            }
        }

        let f = m.field("[hooks] allow", Merge::Tighten);
        if let Some((approve, at)) = hooks_approve
            && m.admit(
                f,
                at,
                || *approve,
                || {
                    (
                        "[hooks] `allow = \"approve\"`".to_string(),
                        "the agent's own rules still decide what aq allows".to_string(),
                    )
                },
            )
        {
            self.hooks_approve = *approve;
        }

        let f = m.field("[mcp] deny", Merge::Union);
        for (d, at) in mcp_deny {
            m.add(f, &mut self.mcp_deny, d, at, || {
                (
                    format!("[mcp] deny `{d}`"),
                    "the tool stays as the user's policy has it".to_string(),
                )
            });
        }

        let subs = m.field("[program.NAME] subs", Merge::Tighten);
        let default = m.field("[program.NAME] default", Merge::Tighten);
        for (name, entry, at) in programs {
            self.merge_program(name, entry, at, m, [subs, default]);
        }

        let f = m.field("[workspace.PATH]", Merge::Trusted);
        for (grant, at) in workspaces {
            let taken = m.admit(
                f,
                at,
                || true,
                || {
                    (
                        format!("[workspace.\"{}\"]", grant.path),
                        "grants are the user's, not the repository's".to_string(),
                    )
                },
            );
            if taken {
                self.workspaces.push(grant.clone());
                self.provenance.workspaces.push(at.clone());
            }
        }

        let f = m.field("[audit] export", Merge::Trusted);
        for (target, at) in audit_export {
            m.add(f, &mut self.audit_export, target, at, || {
                (
                    format!("[audit] export to {target}"),
                    "audit logs go only where the user's own policy sends them".to_string(),
                )
            });
        }

        self.undo.merge(undo, m);

        // The preset's own fields are decided by `aq_agents`, tightening
        // when this field's kind asks for it.
        let f = m.field("[agent.NAME]", Merge::Tighten);
        for (name, pl, at) in agents {
            for entry in self.agents.apply(pl, m.tightens(f)) {
                m.refuse(f, at, || {
                    (
                        format!("{entry} in [agent.{name}]"),
                        format!("the `{name}` agent preset is not loosened"),
                    )
                });
            }
        }

        self.merge_network(network, m);

        let f = m.field("[[rule]]", Merge::Tighten);
        for def in custom_rules {
            let taken = m.admit(
                f,
                &def.at,
                || def.rule.action == Decision::Allow,
                || {
                    (
                        format!("custom rule `{}` with action `allow`", def.rule.id),
                        "built-in rules keep asking for what it would allow".to_string(),
                    )
                },
            );
            if taken {
                self.policy.custom_rules.push(def.rule.clone());
                self.provenance.custom_rules.push(def.at.clone());
            }
        }
        Ok(())
    }

    /// `[network]`: hosts, pins, private destinations, HTTP rules and
    /// credentials come from trusted files only; any file may refuse
    /// unlisted hosts.
    #[deny(unused_variables)]
    fn merge_network(&mut self, layer: &NetworkLayer, m: &mut Merger) {
        let NetworkLayer {
            allow,
            resolve,
            permit,
            unlisted,
            http,
            credentials,
            credential_presets,
        } = layer;
        let prov = &mut self.provenance;
        for (list, from, entries, key, what) in [
            (
                &mut self.network.allow,
                &mut prov.network_allow,
                allow,
                "[network] allow",
                "allow",
            ),
            (
                &mut self.network.resolve,
                &mut prov.network_resolve,
                resolve,
                "[network] resolve",
                "resolve",
            ),
            (
                &mut self.network.permit,
                &mut prov.network_permit,
                permit,
                "[network] permit",
                "permit",
            ),
        ] {
            let f = m.field(key, Merge::Trusted);
            for (entry, at) in entries {
                let taken = m.admit(
                    f,
                    at,
                    || true,
                    || {
                        (
                            format!("[network] {what} `{entry}`"),
                            "the network stays as the user's policy has it".to_string(),
                        )
                    },
                );
                if taken && !list.contains(entry) {
                    list.push(entry.clone());
                    from.push(at.clone());
                }
            }
        }

        let f = m.field("[network.http.HOST]", Merge::Trusted);
        for (host, rule, at) in http {
            let taken = m.admit(
                f,
                at,
                || true,
                || {
                    (
                        format!("[network.http.\"{host}\"]"),
                        "HTTP rules come only from the user's own policy".to_string(),
                    )
                },
            );
            if taken {
                self.network.http.insert(host.clone(), rule.clone());
            }
        }
        const NO_CREDENTIALS: &str = "credentials come only from the user's own policy: a repository can neither set nor read one";
        let f = m.field("[network.credentials.HOST]", Merge::Trusted);
        for (host, cred, at) in credentials {
            let taken = m.admit(
                f,
                at,
                || true,
                || {
                    (
                        format!("[network.credentials.\"{host}\"]"),
                        NO_CREDENTIALS.to_string(),
                    )
                },
            );
            if taken {
                self.network.credentials.insert(host.clone(), cred.clone());
            }
        }
        let f = m.field("[network] credential_presets", Merge::Trusted);
        for (preset, at) in credential_presets {
            m.add(f, &mut self.network.credential_presets, preset, at, || {
                (
                    format!("[network] credential_presets `{preset}`"),
                    NO_CREDENTIALS.to_string(),
                )
            });
        }
        let f = m.field("[network] unlisted", Merge::Tighten);
        if let Some((value, at)) = unlisted
            && m.admit(
                f,
                at,
                || *value == UnlistedHosts::Ask && self.network.unlisted == UnlistedHosts::Refuse,
                || {
                    (
                        "[network] unlisted = \"ask\"".to_string(),
                        "unlisted hosts stay refused, as the user's policy has it".to_string(),
                    )
                },
            )
        {
            self.network.unlisted = *value;
        }
    }

    /// A `[program.NAME]` entry: the user's own files may add, override and
    /// lower; a repository's may add and raise only (an entry that would
    /// lower what is decided today is reported and not applied).
    fn merge_program(
        &mut self,
        name: &str,
        entry: &crate::policy::UserProgram,
        at: &Location,
        m: &mut Merger,
        [subs, default]: [Field; 2],
    ) {
        use crate::rules::platforms::{decide, severity};
        use aq_knowledge::programs::Effect;
        let rank = |e: &str| Effect::from_name(e).map(severity).unwrap_or(0);
        let builtin = aq_knowledge::programs::lookup(name)
            .filter(|p| p.default.is_some() || !p.subs.is_empty());
        let current = self.policy.programs.get(name).cloned().unwrap_or_default();
        let mut merged = current.clone();
        // What a subcommand does today: an earlier file's entry, else the
        // built-in one.
        let today = |words: &str| -> Option<String> {
            if let Some((_, e)) = current.subs.iter().find(|(s, _)| s == words) {
                return Some(e.clone());
            }
            let args: Vec<&str> = words.split(' ').collect();
            builtin
                .and_then(|p| decide(p, &args))
                .map(|(e, _)| e.name().to_string())
        };
        for (words, effect) in &entry.subs {
            let now = today(words);
            let taken = m.admit(
                subs,
                at,
                || now.as_deref().is_some_and(|now| rank(effect) < rank(now)),
                || {
                    let now = now.as_deref().unwrap_or_default();
                    (
                        format!("[program.{name}] subs \"{words}\" = \"{effect}\""),
                        format!("`{name} {words}` stays `{now}`: a repository only raises"),
                    )
                },
            );
            if taken {
                merged.subs.retain(|(s, _)| s != words);
                merged.subs.push((words.clone(), effect.clone()));
            }
        }
        if let Some(d) = &entry.default {
            let now = current.default.clone().or_else(|| {
                builtin
                    .and_then(|p| p.default)
                    .map(|e| e.name().to_string())
            });
            let taken = m.admit(
                default,
                at,
                || now.as_deref().is_some_and(|now| rank(d) < rank(now)),
                || {
                    let now = now.as_deref().unwrap_or_default();
                    (
                        format!("[program.{name}] default = \"{d}\""),
                        format!("`{name}`'s default stays `{now}`: a repository only raises"),
                    )
                },
            );
            if taken {
                merged.default = Some(d.clone());
            }
        }
        // A table the kinds let through whole (a trusted file's) makes the
        // program known: it no longer asks as an unknown program.
        merged.known |= !m.tightens(subs);
        merged.sort_subs();
        self.policy.programs.insert(name.to_string(), merged);
    }

    /// The `[session]` settings in force.
    pub fn session_settings(&self) -> SessionSettings {
        self.session.clone()
    }

    /// The file that set a built-in rule's action, or `None` for built-in.
    pub fn action_source(&self, rule: RuleId) -> Option<&Location> {
        self.provenance.actions.get(&rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    fn layer(text: &str) -> PolicyLayer {
        parse_layer("policy.toml", text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(text: &str) -> ConfigError {
        match parse_layer("policy.toml", text) {
            Ok(l) => panic!("expected an error, parsed {l:?}"),
            Err(e) => e,
        }
    }

    fn effective(layers: &[(&str, &str, Trust)]) -> EffectivePolicy {
        let mut eff = EffectivePolicy::builtin();
        for (source, text, trust) in layers {
            let l = parse_layer(source, text).unwrap_or_else(|e| panic!("{e}"));
            eff.apply(&l, *trust).unwrap_or_else(|e| panic!("{e}"));
        }
        eff
    }

    const TERRAFORM: &str = r#"
version = 1

[[rule]]
id = "no-terraform-apply"
action = "block"
risk = "high"
why = "applies infrastructure changes to real accounts"
safer = "run terraform plan and let a person apply"
program = ["terraform"]
subcommand = ["apply", "destroy"]
"#;

    #[test]
    fn empty_file_is_the_builtin_policy() {
        let l = layer("");
        assert!(l.actions.is_empty() && l.sensitive_paths.is_empty() && l.custom_rules.is_empty());
        let eff = effective(&[("policy.toml", "# nothing\n", Trust::Full)]);
        assert!(eff.policy.actions.is_empty());
        assert!(eff.ignored.is_empty());
    }

    /// `[paths] unmasked` passes a credential back, for the sandbox and
    /// the rules alike; an untrusted project file cannot.
    #[test]
    fn unmasked_paths_come_from_trusted_files_only() {
        let text = "version = 1\n[paths]\nunmasked = [\"~/.m2/settings.xml\", \"*.tfvars\"]\n";
        let eff = effective(&[("policy.toml", text, Trust::Full)]);
        assert_eq!(
            eff.policy.unmasked_paths,
            ["~/.m2/settings.xml", "*.tfvars"]
        );
        let engine = Engine::new(eff.policy.clone());
        assert_eq!(
            engine.evaluate("cat ~/.m2/settings.xml").decision,
            Decision::Allow
        );
        assert_eq!(
            engine.evaluate("cat ~/.m2/settings-security.xml").decision,
            Decision::Block
        );
        let eff = effective(&[("project.toml", text, Trust::TightenOnly)]);
        assert!(eff.policy.unmasked_paths.is_empty());
        assert_eq!(eff.ignored.len(), 2, "{:?}", eff.ignored);
        assert!(
            eff.ignored[0]
                .to_string()
                .contains("[paths] unmasked `~/.m2/settings.xml`")
        );
        let engine = Engine::new(eff.policy.clone());
        assert_eq!(
            engine.evaluate("cat ~/.m2/settings.xml").decision,
            Decision::Block
        );
        for bad in ["\"\"", "\"~\"", "\"/\"", "\"[\""] {
            let e = error(&format!("version = 1\n[paths]\nunmasked = [{bad}]\n"));
            assert_eq!(e.at.line, 3, "{e}");
        }
    }

    #[test]
    fn full_file_parses_into_the_policy_structs() {
        let text = r#"version = 1
[rules]
"pkg-install" = "allow"
"git-push" = "block"

[paths]
sensitive = ["~/.config/acme/token", "*.kdbx"]
"#;
        let l = layer(&format!("{text}{}", TERRAFORM.replace("version = 1\n", "")));
        assert_eq!(
            l.actions,
            vec![
                ActionSetting {
                    rule: RuleId::PkgInstall,
                    action: Decision::Allow,
                    at: Location {
                        source: "policy.toml".into(),
                        line: 3,
                        column: 1
                    },
                },
                ActionSetting {
                    rule: RuleId::GitPush,
                    action: Decision::Block,
                    at: Location {
                        source: "policy.toml".into(),
                        line: 4,
                        column: 1
                    },
                },
            ]
        );
        let patterns: Vec<_> = l
            .sensitive_paths
            .iter()
            .map(|p| p.pattern.as_str())
            .collect();
        assert_eq!(patterns, ["~/.config/acme/token", "*.kdbx"]);
        assert_eq!(l.sensitive_paths[1].at.line, 7);
        assert_eq!(
            l.custom_rules[0].rule,
            CustomRule {
                id: "no-terraform-apply".into(),
                action: Decision::Block,
                risk: Risk::High,
                why: "applies infrastructure changes to real accounts".into(),
                safer: Some("run terraform plan and let a person apply".into()),
                matcher: CommandMatcher {
                    program: vec!["terraform".into()],
                    subcommand: vec!["apply".into(), "destroy".into()],
                    ..CommandMatcher::default()
                },
            }
        );
        assert_eq!(l.custom_rules[0].at.line, 10);
    }

    #[test]
    fn unknown_key_is_an_error_at_its_line_and_column() {
        let e = error("version = 1\n\n[paths]\n  sensitve = [\"x\"]\n");
        assert_eq!(
            e.at,
            Location {
                source: "policy.toml".into(),
                line: 4,
                column: 3
            }
        );
        assert!(e.message.contains("unknown field `sensitve`"), "{e}");
        assert!(
            e.message.contains("`sensitive`"),
            "lists the accepted keys: {e}"
        );
        let shown = e.to_string();
        assert!(
            shown.starts_with("policy.toml:4:3: unknown field"),
            "{shown}"
        );
        assert!(
            shown.contains(" 4 |   sensitve = [\"x\"]\n   |   ^^^^^^^^"),
            "{shown}"
        );
        assert!(shown.contains("help: "), "{shown}");

        let e = error("colour = \"red\"\n");
        assert_eq!((e.at.line, e.at.column), (1, 1));
        let e = error(&format!("{TERRAFORM}prgram = [\"x\"]\n"));
        assert!(e.message.contains("unknown field `prgram`"), "{e}");
        assert_eq!(e.at.line, 12);
    }

    #[test]
    fn syntax_error_has_a_location() {
        let e = error("[rules]\n\"pkg-install\" = allow\n");
        assert_eq!((e.at.line, e.at.column), (2, 17), "{e}");
    }

    #[test]
    fn bad_action_value_lists_the_accepted_values() {
        let e = error("[rules]\n\"pkg-install\" = \"deny\"\n");
        assert_eq!((e.at.line, e.at.column), (2, 17), "{e}");
        assert_eq!(
            e.message,
            "`pkg-install`: unknown decision `deny`; expected one of: allow, ask, block"
        );
        let e = error("[rules]\n\"pkg-install\" = 1\n");
        assert!(e.message.contains("found integer `1`"), "{e}");

        let e = error(&TERRAFORM.replace("risk = \"high\"", "risk = \"severe\""));
        assert_eq!((e.at.line, e.at.column), (7, 8), "{e}");
        assert!(
            e.message
                .contains("expected one of: low, medium, high, critical"),
            "{e}"
        );
        let e = error(&TERRAFORM.replace("action = \"block\"", "action = \"Block\""));
        assert!(e.message.contains("unknown decision `Block`"), "{e}");
        let e = error(&TERRAFORM.replace("action = \"block\"", "action = true"));
        assert!(e.message.contains("invalid type: boolean `true`"), "{e}");
    }

    #[test]
    fn unknown_rule_id_says_how_to_list_the_ids() {
        let e = error("[rules]\n\"pkg-instal\" = \"allow\"\n");
        assert_eq!((e.at.line, e.at.column), (2, 1), "{e}");
        assert_eq!(e.message, "unknown rule id `pkg-instal`");
        let help = e.help.unwrap_or_default();
        assert!(help.contains("did you mean `pkg-install`?"), "{help}");
        assert!(help.contains("aq explain --rules"), "{help}");

        // The key is checked before the value.
        let e = error("[rules]\ncolour = 3\n");
        assert_eq!(e.message, "unknown rule id `colour`");
        let e = error("[rules]\nfrobnicate = \"allow\"\n");
        assert!(!e.help.unwrap_or_default().contains("did you mean"));

        let e = error(&format!(
            "{TERRAFORM}\n[rules]\n\"no-terraform-apply\" = \"ask\"\n"
        ));
        assert!(e.message.contains("one of your own rules"), "{e}");
    }

    #[test]
    fn custom_rules_are_checked() {
        let cases = [
            (
                TERRAFORM.replace("no-terraform-apply", "secret-read"),
                "is a built-in rule id",
            ),
            (
                TERRAFORM.replace("no-terraform-apply", "No_Terraform"),
                "is not kebab-case",
            ),
            (
                TERRAFORM.replace("no-terraform-apply", "no--apply"),
                "is not kebab-case",
            ),
            (
                format!("{TERRAFORM}{TERRAFORM}").replace("version = 1", ""),
                "defined twice",
            ),
            (
                TERRAFORM.replace(
                    "program = [\"terraform\"]\nsubcommand = [\"apply\", \"destroy\"]\n",
                    "",
                ),
                "matches nothing",
            ),
            (
                TERRAFORM.replace("[\"terraform\"]", "[\"\"]"),
                "empty pattern in `program`",
            ),
            (
                TERRAFORM.replace("[\"terraform\"]", "[\"terra[form\"]"),
                "invalid glob `terra[form`",
            ),
            (
                TERRAFORM.replace(
                    "why = \"applies infrastructure changes to real accounts\"\n",
                    "",
                ),
                "missing field `why`",
            ),
            (
                TERRAFORM.replace(
                    "\"applies infrastructure changes to real accounts\"",
                    "\"  \"",
                ),
                "empty `why`",
            ),
            (
                TERRAFORM.replace("[\"terraform\"]", "\"terraform\""),
                "invalid type",
            ),
        ];
        for (text, want) in cases {
            let e = error(&text);
            assert!(
                e.message.contains(want),
                "want {want:?}, got: {e}\nfor:\n{text}"
            );
            assert!(e.at.line > 1, "{e}");
        }
    }

    #[test]
    fn invalid_sensitive_glob_is_an_error() {
        let e = error("[paths]\nsensitive = [\"ok\", \"[unclosed\"]\n");
        assert_eq!((e.at.line, e.at.column), (2, 20), "{e}");
        assert!(e.message.starts_with("invalid glob `[unclosed`"), "{e}");
        assert!(e.help.unwrap_or_default().contains("`[[]`"));
    }

    #[test]
    fn only_version_one_is_read() {
        let e = error("version = 2\n");
        assert_eq!((e.at.line, e.at.column), (1, 11));
        assert!(e.help.unwrap_or_default().contains("version = 1"));
    }

    #[test]
    fn user_layer_can_lower_and_raise() {
        let eff = effective(&[(
            "user.toml",
            "[rules]\n\"pkg-install\" = \"allow\"\n\"git-push\" = \"block\"\n",
            Trust::Full,
        )]);
        assert_eq!(eff.policy.action(RuleId::PkgInstall), Decision::Allow);
        assert_eq!(eff.policy.action(RuleId::GitPush), Decision::Block);
        assert_eq!(
            eff.action_source(RuleId::PkgInstall).map(|l| l.line),
            Some(2)
        );
        assert_eq!(eff.action_source(RuleId::SecretRead), None);
        assert!(eff.ignored.is_empty());
    }

    #[test]
    fn untrusted_project_cannot_lower_but_can_raise() {
        let project = r#"
[rules]
"secret-read" = "allow"
"pkg-install" = "allow"
"git-push" = "block"
"#;
        let eff = effective(&[("project.toml", project, Trust::TightenOnly)]);
        assert_eq!(eff.policy.action(RuleId::SecretRead), Decision::Block);
        assert_eq!(eff.policy.action(RuleId::PkgInstall), Decision::Ask);
        assert_eq!(eff.policy.action(RuleId::GitPush), Decision::Block);
        assert_eq!(
            eff.action_source(RuleId::GitPush)
                .map(|l| l.source.as_str()),
            Some("project.toml")
        );
        assert_eq!(eff.action_source(RuleId::PkgInstall), None);
        let ignored: Vec<_> = eff
            .ignored
            .iter()
            .map(|i| (i.at.line, i.entry.as_str()))
            .collect();
        assert_eq!(
            ignored,
            [
                (3, "`\"secret-read\" = \"allow\"`"),
                (4, "`\"pkg-install\" = \"allow\"`")
            ]
        );
        let shown = eff.ignored[1].to_string();
        assert!(shown.starts_with("project.toml:4:1: ignored"), "{shown}");
        assert!(
            shown.contains("`pkg-install` stays `ask`, built-in"),
            "{shown}"
        );
        assert!(shown.contains("aq policy trust project.toml"), "{shown}");
    }

    #[test]
    fn untrusted_project_is_measured_against_the_user_layer() {
        let user = "[rules]\n\"pkg-install\" = \"allow\"\n\"git-push\" = \"allow\"\n";
        let project = "[rules]\n\"pkg-install\" = \"allow\"\n\"git-push\" = \"ask\"\n\"docker-run\" = \"allow\"\n";
        let eff = effective(&[
            ("user.toml", user, Trust::Full),
            ("project.toml", project, Trust::TightenOnly),
        ]);
        // Equal to what the user set: kept. Raised: applied. Lowered: ignored.
        assert_eq!(eff.policy.action(RuleId::PkgInstall), Decision::Allow);
        assert_eq!(eff.policy.action(RuleId::GitPush), Decision::Ask);
        assert_eq!(eff.policy.action(RuleId::DockerRun), Decision::Ask);
        assert_eq!(eff.ignored.len(), 1);
        assert!(eff.ignored[0].entry.contains("docker-run"));

        // And a project that lowers what the user raised keeps the user's value.
        let user = "[rules]\n\"pkg-install\" = \"block\"\n";
        let project = "[rules]\n\"pkg-install\" = \"ask\"\n";
        let eff = effective(&[
            ("user.toml", user, Trust::Full),
            ("project.toml", project, Trust::TightenOnly),
        ]);
        assert_eq!(eff.policy.action(RuleId::PkgInstall), Decision::Block);
        assert!(
            eff.ignored[0].kept.contains("set at user.toml:2:1"),
            "{:?}",
            eff.ignored
        );
    }

    #[test]
    fn trusted_project_can_lower() {
        let project = "[rules]\n\"pkg-install\" = \"allow\"\n\"secret-read\" = \"ask\"\n";
        let eff = effective(&[("project.toml", project, Trust::Full)]);
        assert_eq!(eff.policy.action(RuleId::PkgInstall), Decision::Allow);
        assert_eq!(eff.policy.action(RuleId::SecretRead), Decision::Ask);
        assert!(eff.ignored.is_empty());
    }

    #[test]
    fn untrusted_project_cannot_add_allow_rules_but_can_add_the_rest() {
        let project = r#"
[paths]
sensitive = ["*.kdbx"]

[[rule]]
id = "allow-npm"
action = "allow"
why = "npm is fine here"
program = ["npm"]

[[rule]]
id = "ask-make-deploy"
action = "ask"
why = "deploys"
program = ["make"]
args = ["deploy"]
"#;
        let eff = effective(&[("project.toml", project, Trust::TightenOnly)]);
        let ids: Vec<_> = eff
            .policy
            .custom_rules
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(ids, ["ask-make-deploy"]);
        assert_eq!(eff.provenance.custom_rules[0].line, 11);
        assert_eq!(eff.policy.sensitive_paths, ["*.kdbx"]);
        assert_eq!(eff.ignored.len(), 1);
        assert_eq!(eff.ignored[0].at.line, 5);
        assert!(eff.ignored[0].entry.contains("allow-npm"));

        let engine = Engine::new(eff.policy);
        assert_eq!(
            engine.evaluate("npm install left-pad").decision,
            Decision::Ask
        );
        assert_eq!(engine.evaluate("cat vault.kdbx").decision, Decision::Block);
    }

    #[test]
    fn trusted_exec_grows_from_the_users_files_and_only_shrinks_from_a_repository() {
        let builtin = EffectivePolicy::builtin().session.trusted_exec;
        assert!(builtin.iter().any(|e| e == "**/target/**"));
        let user = "[session]\ntrusted_exec = [\"tools/bin/*\", \"!**/dist/**\"]\n";
        let project = "[session]\ntrusted_exec = [\"**\", \"!**/node_modules/**\"]\n";
        let eff = effective(&[
            ("user.toml", user, Trust::Full),
            ("project.toml", project, Trust::TightenOnly),
        ]);
        let list = &eff.session.trusted_exec;
        assert!(list.iter().any(|e| e == "tools/bin/*"), "{list:?}");
        assert!(!list.iter().any(|e| e == "**/dist/**"), "{list:?}");
        assert!(!list.iter().any(|e| e == "**"), "{list:?}");
        assert!(!list.iter().any(|e| e == "**/node_modules/**"), "{list:?}");
        assert!(list.iter().any(|e| e == "**/target/**"), "{list:?}");
        assert_eq!(eff.ignored.len(), 1, "{:?}", eff.ignored);
        let ignored = eff.ignored[0].to_string();
        assert!(
            ignored.contains("project.toml:2:17: ignored `trusted_exec` entry `**`"),
            "{ignored}"
        );
        // A bad entry is an error with its place and how to write one.
        let e = error("[session]\ntrusted_exec = [\"$HOME/bin/*\"]\n");
        assert_eq!((e.at.line, e.at.column), (2, 17));
        assert!(
            e.message.contains("only `$TMPDIR/` and `~/`"),
            "{}",
            e.message
        );
        assert!(e.help.unwrap().contains("relative to the workspace"));
    }

    #[test]
    fn custom_rule_ids_are_unique_across_layers() {
        let mut eff = EffectivePolicy::builtin();
        eff.apply(&layer(TERRAFORM), Trust::Full).unwrap();
        let again = parse_layer("project.toml", TERRAFORM).unwrap();
        let e = eff.apply(&again, Trust::TightenOnly).unwrap_err();
        assert!(e.to_string().starts_with("project.toml:4:1: rule id `no-terraform-apply` is already defined at policy.toml:4:1"), "{e}");
        assert_eq!(eff.policy.custom_rules.len(), 1);
    }

    const ACME: &str = r#"
version = 1

[program.acme]
default = "change"
subs = { "status" = "read", "nuke" = "delete", "token" = "secret-read" }

[program.gh]
subs = { "pr merge" = "read" }
"#;

    #[test]
    fn the_users_program_entries_add_and_override() {
        let eff = effective(&[("user.toml", ACME, Trust::Full)]);
        let engine = Engine::new(eff.policy);
        let decision = |line: &str| engine.evaluate(line).decision;
        // Known now: its read is ordinary, its other verbs judged.
        assert_eq!(decision("acme status --json"), Decision::Allow);
        assert_eq!(decision("acme deploy prod"), Decision::Ask);
        assert_eq!(decision("acme nuke --all"), Decision::Ask);
        assert_eq!(decision("acme token"), Decision::Block);
        assert!(
            engine
                .evaluate("acme nuke")
                .rules
                .iter()
                .any(|r| r.id == "cloud-delete")
        );
        // The user's own file may lower a built-in entry.
        assert_eq!(decision("gh pr merge 12 --squash"), Decision::Allow);
        assert_eq!(decision("gh pr close 12"), Decision::Ask);
    }

    #[test]
    fn a_repositorys_program_entries_only_raise() {
        let repo = r#"
version = 1

[program.gh]
subs = { "pr merge" = "read", "pr view" = "delete" }

[program.acme]
default = "read"
"#;
        let eff = effective(&[("repo.toml", repo, Trust::TightenOnly)]);
        assert_eq!(eff.ignored.len(), 1, "{:?}", eff.ignored);
        assert!(
            eff.ignored[0].entry.contains("pr merge"),
            "{:?}",
            eff.ignored
        );
        let engine = Engine::new(eff.policy);
        assert_eq!(engine.evaluate("gh pr merge 12").decision, Decision::Ask);
        assert_eq!(engine.evaluate("gh pr view 12").decision, Decision::Ask);
        // A program a repository describes stays unknown: it still asks.
        let v = engine.evaluate("acme status");
        assert_eq!(v.decision, Decision::Ask);
        assert!(
            v.rules.iter().any(|r| r.id == "exec-unknown-program"),
            "{:?}",
            v.rules
        );
        // Under the user's entry, a repository cannot lower it either.
        let eff = effective(&[
            ("user.toml", ACME, Trust::Full),
            (
                "repo.toml",
                "version = 1\n[program.acme]\nsubs = { \"nuke\" = \"read\" }\n",
                Trust::TightenOnly,
            ),
        ]);
        assert_eq!(eff.ignored.len(), 1, "{:?}", eff.ignored);
        assert_eq!(
            Engine::new(eff.policy).evaluate("acme nuke").decision,
            Decision::Ask
        );
    }

    #[test]
    fn bad_program_entries_are_errors() {
        for (text, says) in [
            (
                "version = 1\n[program.acme]\ndefault = \"harmless\"\n",
                "is not an effect",
            ),
            (
                "version = 1\n[program.acme]\nsubs = { \"--force\" = \"read\" }\n",
                "is not a subcommand",
            ),
            (
                "version = 1\n[program.acme]\nverbs = true\n",
                "unknown field",
            ),
            (
                "version = 1\n[program.\"bin/acme\"]\ndefault = \"read\"\n",
                "is not a program name",
            ),
        ] {
            let e = parse_layer("p.toml", text).expect_err(text);
            assert!(e.to_string().contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn custom_block_rule_fires_through_the_engine() {
        let eff = effective(&[("policy.toml", TERRAFORM, Trust::TightenOnly)]);
        let engine = Engine::new(eff.policy);
        for line in [
            "terraform apply -auto-approve",
            "cd infra && terraform destroy",
            "sudo terraform apply",
            "bash -lc 'terraform apply'",
        ] {
            let v = engine.evaluate(line);
            assert_eq!(v.decision, Decision::Block, "{line}");
            let rule = v.deciding_rule().unwrap();
            assert_eq!(rule.id, "no-terraform-apply", "{line}");
            assert_eq!(rule.risk, Risk::High);
            assert_eq!(rule.why, "applies infrastructure changes to real accounts");
            assert_eq!(
                rule.safer.as_deref(),
                Some("run terraform plan and let a person apply")
            );
        }
        let v = engine.evaluate("terraform plan");
        assert!(
            v.rules.iter().all(|r| r.id != "no-terraform-apply"),
            "{:?}",
            v.rules
        );
    }

    #[test]
    fn custom_allow_rule_lifts_asks_in_a_trusted_layer() {
        let text = "[[rule]]\nid = \"allow-npm-ci\"\naction = \"allow\"\nwhy = \"reproducible installs\"\nprogram = [\"npm\"]\nsubcommand = [\"ci\"]\n";
        let eff = effective(&[("policy.toml", text, Trust::Full)]);
        let engine = Engine::new(eff.policy);
        assert_eq!(engine.evaluate("npm ci").decision, Decision::Allow);
        assert_eq!(engine.evaluate("npm install x").decision, Decision::Ask);
    }

    #[test]
    fn location_counts_characters_from_one() {
        let text = "a\nbé c\n";
        let l = Location::at_offset("f", text, text.find('c').unwrap());
        assert_eq!((l.line, l.column), (2, 4));
        assert_eq!(Location::at_offset("f", text, 0).to_string(), "f:1:1");
        assert_eq!(Location::at_offset("f", text, 999).line, 3);
    }

    #[test]
    fn profiles_are_extended_defined_and_selected() {
        let eff = effective(&[(
            "user.toml",
            "[session]\nprofile = \"mine\"\n[profile.dev]\nwritable = [\"~/.cache/acme\"]\n[profile.mine]\nextends = \"dev\"\nnetwork = \"off\"\nenv = [\"ANTHROPIC_API_KEY\"]\nlimits = { processes = 100 }\n",
            Trust::Full,
        )]);
        assert_eq!(eff.session.profile, "mine");
        let dev = eff.profiles.get("dev").unwrap();
        assert!(dev.writable.contains(&"~/.cache/acme".to_string()));
        let mine = eff.profiles.get("mine").unwrap();
        assert!(mine.writable.contains(&"~/.cache/acme".to_string()));
        assert_eq!(mine.network, crate::NetworkSetting::Off);
        assert_eq!(mine.limits.processes, Some(100));
        assert_eq!(mine.env, vec!["ANTHROPIC_API_KEY".to_string()]);
    }

    #[test]
    fn an_untrusted_file_cannot_loosen_or_switch_profiles() {
        let eff = effective(&[(
            "project.toml",
            "[session]\nprofile = \"dev\"\n[profile.strict]\nnetwork = \"host\"\nmasked = [\"secrets/\"]\n[profile.evil]\nsandbox = false\n",
            Trust::TightenOnly,
        )]);
        assert_eq!(eff.session.profile, "strict");
        let strict = eff.profiles.get("strict").unwrap();
        assert_eq!(strict.network, crate::NetworkSetting::Off);
        assert!(strict.masked.contains(&"secrets/".to_string()));
        assert!(eff.profiles.get("evil").is_none());
        assert_eq!(eff.ignored.len(), 3, "{:?}", eff.ignored);
    }

    #[test]
    fn profile_mistakes_are_errors_with_a_place() {
        let e = error("[profile.x]\nnetwork = \"on\"\n");
        assert!(e.to_string().contains("unknown network"), "{e}");
        let e = error("[profile.x]\nwriteable = [\"/tmp\"]\n");
        assert!(e.to_string().contains("writeable"), "{e}");
        let mut eff = EffectivePolicy::builtin();
        let e = eff
            .apply(&layer("[profile.x]\nextends = \"nope\"\n"), Trust::Full)
            .unwrap_err();
        assert!(e.message.contains("not defined"), "{e}");
    }

    #[test]
    fn audit_export_is_read_checked_and_the_users_alone() {
        let text = "[audit]\nexport = [\n  { format = \"otlp\", endpoint = \"http://127.0.0.1:4318\" },\n  { format = \"syslog\", endpoint = \"udp://127.0.0.1:514\" },\n]\n";
        let l = layer(text);
        let targets: Vec<String> = l.audit_export.iter().map(|(t, _)| t.to_string()).collect();
        assert_eq!(
            targets,
            [
                "otlp http://127.0.0.1:4318/v1/logs",
                "syslog udp://127.0.0.1:514"
            ]
        );
        assert_eq!(l.audit_export[1].1.line, 4);
        let user = effective(&[("user.toml", text, Trust::Full)]);
        assert_eq!(user.audit_export.len(), 2);
        // A file that may only tighten cannot send the logs anywhere.
        let repo = effective(&[("project.toml", text, Trust::TightenOnly)]);
        assert!(repo.audit_export.is_empty());
        assert_eq!(repo.ignored.len(), 2, "{:?}", repo.ignored);
        assert!(repo.ignored[0].entry.contains("[audit] export to otlp"));
    }

    #[test]
    fn audit_export_mistakes_are_errors_with_a_place() {
        let e = error("[audit]\nexport = [{ format = \"otlp\", endpoint = \"ftp://x\" }]\n");
        assert_eq!((e.at.line, e.at.column), (2, 41), "{e}");
        assert!(e.message.contains("not an OTLP/HTTP endpoint"), "{e}");
        let e = error("[audit]\nexport = [{ format = \"gelf\", endpoint = \"udp://x:1\" }]\n");
        assert_eq!(e.at.column, 22, "{e}");
        let e = error(
            "[audit]\nexport = [{ format = \"otlp\", endpoint = \"http://x\", headers = 1 }]\n",
        );
        assert!(e.to_string().contains("headers"), "{e}");
        let e = error("[audit]\nsink = 1\n");
        assert!(e.to_string().contains("sink"), "{e}");
    }

    #[test]
    fn undo_is_the_users_to_switch_off_and_a_repository_may_only_keep_more() {
        let user = "[undo]\nenabled = false\nmax_file_mb = 8\n";
        let repo = "[undo]\nenabled = false\nkeep_days = 1\ninclude = [\"fixtures\"]\n";
        let eff = effective(&[("repo.toml", repo, Trust::TightenOnly)]);
        assert!(eff.undo.enabled, "a repository cannot turn checkpoints off");
        assert_eq!(eff.undo.keep_days, 14);
        assert_eq!(eff.undo.include, vec!["fixtures".to_string()]);
        assert_eq!(eff.ignored.len(), 2, "{:?}", eff.ignored);
        let eff = effective(&[("policy.toml", user, Trust::Full)]);
        assert!(!eff.undo.enabled);
        assert_eq!(eff.undo.max_file_mb, 8);
        let e = error("[undo]\nenable = true\n");
        assert!(e.to_string().contains("enable"), "{e}");
        let e = error("[undo]\ninclude = [\"../outside\"]\n");
        assert!(
            e.to_string().contains("not a path inside the workspace"),
            "{e}"
        );
    }

    #[test]
    fn grants_in_force_remember_the_file_and_table_they_came_from() {
        let user = "[network]\nallow = [\"a.example.invalid\"]\nresolve = [\"a.example.invalid:127.0.0.1\"]\n\n\
                    [profile.strict]\nwritable = [\"~/.cache/acme\"]\n\n\
                    [workspace.\"/src/app\"]\nreadable = [\"/srv/fixtures\"]\n";
        let flag = "[profile.mine]\nreadable = [\"~/data\"]\n";
        let repo = "[network]\nallow = [\"evil.example.invalid\"]\n\n[profile.strict]\nwritable = [\"/etc\"]\n";
        let mut eff = effective(&[
            ("policy.toml", user, Trust::Full),
            ("repo.toml", repo, Trust::TightenOnly),
            ("flag.toml", flag, Trust::Full),
        ]);
        eff.for_workspace(std::path::Path::new("/src/app/sub"));
        assert_eq!(eff.network.allow, ["a.example.invalid"]);
        assert_eq!(eff.provenance.network_allow.len(), 1);
        assert_eq!(
            eff.provenance.network_allow[0].to_string(),
            "policy.toml:2:10"
        );
        assert_eq!(eff.provenance.network_resolve[0].line, 3);
        let w = eff
            .path_origin("strict", PathAccess::Write, "~/.cache/acme")
            .unwrap();
        assert_eq!(
            (w.at.source.as_str(), w.place.as_str()),
            ("policy.toml", "[profile.strict] writable")
        );
        // A new profile's own paths, and those it inherits, keep their files.
        let r = eff.path_origin("mine", PathAccess::Read, "~/data").unwrap();
        assert_eq!(
            (r.at.source.as_str(), r.place.as_str()),
            ("flag.toml", "[profile.mine] readable")
        );
        let inherited = eff
            .path_origin("mine", PathAccess::Write, "~/.cache/acme")
            .unwrap();
        assert_eq!(inherited.place, "[profile.strict] writable");
        let ws = eff
            .path_origin("dev", PathAccess::Read, "/srv/fixtures")
            .unwrap();
        assert_eq!(ws.place, "[workspace.\"/src/app\"] readable");
        assert_eq!(ws.at.line, 8);
        // Built in, and left out of an untrusted file: no origin.
        assert!(
            eff.path_origin("strict", PathAccess::Write, "/dev/null")
                .is_none()
        );
        assert!(
            eff.path_origin("strict", PathAccess::Write, "/etc")
                .is_none()
        );
        assert_eq!(eff.ignored.len(), 2, "{:?}", eff.ignored);
    }
}
