//! `aq policy suggest` and `aq audit summary`: which sessions to read
//! (the latest of this workspace, named ones, or all, as recent as asked),
//! and for suggest the policy-file entry of each line, whether the user's
//! file has it already, and writing it there as `aq allow` does.
//!
//! The reading of logs is [`aq_audit::suggest`]'s and
//! [`aq_audit::team_view`]'s; the edit of the file is
//! [`aq_policy::grants`]' and [`crate::user_grants`]'. Only ever the
//! user's file is written, never a repository's.

use std::fmt::Write as _;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use aq_audit::suggest::{NotSuggested, Suggestion, Suggestions};
use aq_audit::team_view::{Tally, TeamView};
use aq_audit::{Allowance, Summary};
use aq_policy::grants::{self, Change, Grant, Target};

pub use crate::error::SuggestError;

/// Which sessions to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Which {
    /// The newest session whose workspace is this one.
    LatestHere(PathBuf),
    /// Every session whose workspace is this one.
    AllHere(PathBuf),
    /// These (ids, unique prefixes, directories or log files).
    Named(Vec<String>),
    /// Every session on this machine.
    All,
}

/// One session chosen: its id and its log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// The session id (the directory's name).
    pub id: String,
    /// Its `log.jsonl`.
    pub log: PathBuf,
}

/// Parses `--since` (`7d`, `12h`, `30m`, `2w`).
pub fn parse_since(text: &str) -> Result<Duration, SuggestError> {
    humantime::parse_duration(text).map_err(|source| SuggestError::Since {
        text: text.to_string(),
        source,
    })
}

/// When a session started: its `session.json`'s `started`, else its log's
/// first event's time (an agent's hook session has no session file).
fn started(dir: &Path) -> Option<SystemTime> {
    let first_ts = || {
        let f = std::fs::File::open(crate::log_path(dir)).ok()?;
        let mut line = String::new();
        std::io::BufRead::read_line(&mut BufReader::new(f), &mut line).ok()?;
        let v: serde_json::Value = serde_json::from_str(&line).ok()?;
        humantime::parse_rfc3339_weak(v.get("ts")?.as_str()?).ok()
    };
    crate::read_file(dir)
        .ok()
        .and_then(|f| humantime::parse_rfc3339_weak(&f.started).ok())
        .or_else(first_ts)
}

/// The sessions `which` names, oldest first, only those started within
/// `since` when given.
pub fn choose(which: &Which, since: Option<Duration>) -> Result<Vec<Chosen>, SuggestError> {
    let id_of = |dir: &Path| {
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let recent = |dir: &Path| match since {
        None => true,
        Some(age) => started(dir).is_some_and(|t| {
            SystemTime::now()
                .duration_since(t)
                .map_or(true, |d| d <= age)
        }),
    };
    let here = |dir: &Path, ws: &Path| crate::read_file(dir).is_ok_and(|f| f.workspace == ws);
    let listed = || crate::list().map_err(SuggestError::List);
    let dirs: Vec<PathBuf> = match which {
        Which::Named(names) => {
            let mut out = Vec::new();
            for n in names {
                let log = crate::resolve_log(n).map_err(SuggestError::Lookup)?;
                let id = log
                    .parent()
                    .map(id_of)
                    .filter(|i| !i.is_empty())
                    .unwrap_or_else(|| n.clone());
                if !out.iter().any(|c: &Chosen| c.log == log) {
                    out.push(Chosen { id, log });
                }
            }
            return Ok(out);
        }
        Which::All => listed()?.into_iter().filter(|d| recent(d)).collect(),
        Which::AllHere(ws) => listed()?
            .into_iter()
            .filter(|d| here(d, ws) && recent(d))
            .collect(),
        Which::LatestHere(ws) => listed()?
            .into_iter()
            .rev()
            .find(|d| here(d, ws) && recent(d))
            .into_iter()
            .collect(),
    };
    if dirs.is_empty() {
        return Err(match which {
            Which::LatestHere(ws) | Which::AllHere(ws) => SuggestError::NoSessionsOf {
                workspace: ws.clone(),
                recent: since.is_some(),
            },
            _ => SuggestError::NoSessions,
        });
    }
    Ok(dirs
        .into_iter()
        .map(|d| Chosen {
            id: id_of(&d),
            log: crate::log_path(&d),
        })
        .collect())
}

/// Reads each chosen session's log into its summary.
pub fn summaries(chosen: &[Chosen]) -> Result<Vec<(String, Summary)>, SuggestError> {
    chosen
        .iter()
        .map(|c| {
            let f = std::fs::File::open(&c.log).map_err(|source| SuggestError::Open {
                path: c.log.clone(),
                source,
            })?;
            let s =
                Summary::from_reader(BufReader::new(f)).map_err(|source| SuggestError::Read {
                    path: c.log.clone(),
                    source,
                })?;
            Ok((c.id.clone(), s))
        })
        .collect()
}

/// The figures across the chosen sessions (`aq audit summary`).
pub fn team_view(chosen: &[Chosen]) -> Result<TeamView, SuggestError> {
    let mut tally = Tally::default();
    for c in chosen {
        let f = std::fs::File::open(&c.log).map_err(|source| SuggestError::Open {
            path: c.log.clone(),
            source,
        })?;
        tally
            .add_log(BufReader::new(f))
            .map_err(|source| SuggestError::Read {
                path: c.log.clone(),
                source,
            })?;
    }
    Ok(tally.finish())
}

/// One line proposed, with what it makes in the policy file.
#[derive(Debug, Clone, Serialize)]
pub struct Proposed {
    /// The line and its counts.
    #[serde(flatten)]
    pub suggestion: Suggestion,
    /// The entry `aq allow` would make in the user's policy file (TOML).
    pub policy_entry: String,
    /// Whether the user's file has it already (then it is not written).
    pub already_granted: bool,
    #[serde(skip)]
    grant: Grant,
}

/// What `aq policy suggest` shows (and writes, with `--write`).
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The sessions read.
    pub sessions: Vec<String>,
    /// The lines, most needed first.
    pub lines: Vec<Proposed>,
    /// What no line is proposed for.
    pub not_suggested: Vec<NotSuggested>,
    /// The user's policy file, where `--write` writes.
    pub user_file: PathBuf,
}

/// Why no line is proposed for an allowance: the path it names is not
/// one a grant can be, or `aq allow` refuses it.
#[derive(Debug)]
enum RefusedGrant {
    /// The path cannot be normalized.
    Path(aq_policy::GrantError),
    /// `aq allow` refuses it (too broad, a credential's place).
    Refused(String),
}

impl std::fmt::Display for RefusedGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefusedGrant::Path(e) => write!(f, "{e}"),
            RefusedGrant::Refused(why) => f.write_str(why),
        }
    }
}

/// The grant an allowance makes, as `aq allow` would make it: a path
/// normalized (under the home as `~/...`) and refused where `aq allow`
/// refuses it (too broad, a credential's place).
fn grant_of(a: &Allowance, profile: &str, home: Option<&Path>) -> Result<Grant, RefusedGrant> {
    let (target, read_only) = match a {
        Allowance::Command {
            program,
            subcommand,
        } => (
            Target::Command {
                program: program.clone(),
                subcommand: subcommand.clone(),
            },
            false,
        ),
        Allowance::Net { host } => (Target::Net(host.to_ascii_lowercase()), false),
        Allowance::Write { path } | Allowance::Read { path } => {
            let p =
                grants::normalize_path(path, Path::new("/"), home).map_err(RefusedGrant::Path)?;
            if let Some(why) = grants::refuse_path(&p, true) {
                return Err(RefusedGrant::Refused(why));
            }
            (Target::Path(p), matches!(a, Allowance::Read { .. }))
        }
    };
    Ok(Grant {
        allow: true,
        read_only,
        target,
        profile: profile.to_string(),
        here: None,
    })
}

/// The TOML an entry adds to an empty policy file (without `version`).
fn entry_text(grant: &Grant) -> String {
    grants::edit("", grant, false)
        .map(|(text, _)| {
            text.lines()
                .filter(|l| !l.starts_with("version"))
                .collect::<Vec<_>>()
                .join("\n")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

/// Gives each suggested line its policy entry and whether the user's file
/// (`user_text`) has it already; a line `aq allow` would refuse moves to
/// the not-suggested list with the reason.
pub fn plan(
    suggestions: Suggestions,
    user_text: &str,
    user_file: PathBuf,
    profile: &str,
    home: Option<&Path>,
) -> Plan {
    let mut not_suggested = suggestions.not_suggested;
    let mut lines = Vec::new();
    for s in suggestions.lines {
        match grant_of(&s.allowance, profile, home) {
            Ok(grant) => {
                let already = matches!(
                    grants::edit(user_text, &grant, false),
                    Ok((_, Change::AlreadyThere(_)))
                );
                lines.push(Proposed {
                    policy_entry: entry_text(&grant),
                    already_granted: already,
                    suggestion: s,
                    grant,
                });
            }
            Err(why) => not_suggested.push(NotSuggested {
                kind: "refused-grant",
                what: s.examples.first().cloned().unwrap_or_default(),
                rule: s.rules.first().cloned(),
                line: format!("{}: refused ({why})", s.line),
                warning: s.warning,
                count: s.needed,
                sessions: s.sessions,
            }),
        }
    }
    Plan {
        sessions: suggestions.sessions,
        lines,
        not_suggested,
        user_file,
    }
}

/// Builds the plan for `which`: reads the sessions, the user's file and
/// the profile a grant goes to.
pub fn plan_for(
    which: &Which,
    since: Option<Duration>,
    workspace: &Path,
) -> Result<Plan, SuggestError> {
    let chosen = choose(which, since)?;
    let suggestions = aq_audit::suggest::suggest(&summaries(&chosen)?);
    let user_file = crate::policy_files::user_file().ok_or(SuggestError::NoPolicyFile)?;
    let user_text = match std::fs::read_to_string(&user_file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(SuggestError::Read {
                path: user_file,
                source,
            });
        }
    };
    let loaded = crate::policy_files::load_for(workspace, None).map_err(SuggestError::Policy)?;
    let profile = crate::in_force::profile_named(&loaded.effective, None)
        .map_err(SuggestError::InForce)?
        .name;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    Ok(plan(
        suggestions,
        &user_text,
        user_file,
        &profile,
        home.as_deref(),
    ))
}

/// Writes every line the user's file does not have yet, as `aq allow`
/// does (checked, backed up, renamed into place); what each did.
pub fn write(plan: &Plan) -> Result<Vec<String>, SuggestError> {
    let mut done = Vec::new();
    for p in plan.lines.iter().filter(|p| !p.already_granted) {
        let applied = crate::user_grants::apply(&p.grant, false).map_err(SuggestError::Grant)?;
        let file = applied.file.display();
        done.push(match applied.change {
            Change::Added(what) => format!("added {what} ({file}): {}", p.suggestion.line),
            Change::AlreadyThere(what) => format!("{what} already ({file})"),
            Change::Removed(what) | Change::NotThere(what) => format!("{what} ({file})"),
        });
    }
    Ok(done)
}

impl Plan {
    /// The lines still to write.
    pub fn to_write(&self) -> usize {
        self.lines.iter().filter(|p| !p.already_granted).count()
    }

    /// The plan for a person.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let n = self.sessions.len();
        let _ = writeln!(
            out,
            "read {n} session{}: {}",
            if n == 1 { "" } else { "s" },
            self.sessions.join(", ")
        );
        let (new, had): (Vec<&Proposed>, Vec<&Proposed>) =
            self.lines.iter().partition(|p| !p.already_granted);
        if new.is_empty() {
            out.push_str("nothing to suggest: no ask or refusal that a line of yours does not already allow\n");
        } else {
            let _ = writeln!(
                out,
                "{} line{} would have let what asked or was refused run:",
                new.len(),
                if new.len() == 1 { "" } else { "s" }
            );
        }
        for p in &new {
            let s = &p.suggestion;
            let answers: Vec<String> = s.answers.iter().map(|(a, n)| format!("{n} {a}")).collect();
            let _ = writeln!(out, "  {}", s.line);
            let _ = writeln!(
                out,
                "      needed {}, in {} session{} [{}]{}",
                times(s.needed),
                s.sessions.len(),
                if s.sessions.len() == 1 { "" } else { "s" },
                s.rules.join(", "),
                if answers.is_empty() {
                    String::new()
                } else {
                    format!("; answered: {}", answers.join(", "))
                }
            );
            for e in &s.examples {
                let _ = writeln!(out, "      e.g. {}", aq_audit::inert::inert(e));
            }
            if !s.covers.is_empty() {
                let _ = writeln!(out, "      covers {}", s.covers.join(", "));
            }
            for l in p.policy_entry.lines() {
                let _ = writeln!(out, "      | {l}");
            }
            if let Some(w) = &s.warning {
                let _ = writeln!(out, "      ! {w}");
            }
        }
        if !had.is_empty() {
            out.push_str("already in your policy file:\n");
            for p in had {
                let _ = writeln!(out, "  {}", p.suggestion.line);
            }
        }
        if !self.not_suggested.is_empty() {
            out.push_str("not suggested:\n");
            for b in &self.not_suggested {
                let rule = b
                    .rule
                    .as_deref()
                    .map(|r| format!(" (rule {r})"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "  {:<8}{}{rule}, {}",
                    b.kind,
                    aq_audit::inert::inert(&b.what),
                    times(b.count)
                );
                let _ = writeln!(out, "          {}", b.line);
                if let Some(w) = &b.warning {
                    let _ = writeln!(out, "          ! {w}");
                }
            }
        }
        out
    }
}

fn times(n: u64) -> String {
    if n == 1 {
        "once".to_string()
    } else {
        format!("{n} times")
    }
}
