//! Folding a session log into a [`Summary`] and rendering it for a person
//! (Markdown, `aq report`), for tools (JSON) or for the terminal (a recap,
//! `aq audit --recap`).
//!
//! Reading is forgiving: a torn last line (a writer killed mid-write) or a
//! damaged line is skipped with a note, and event kinds this version does not
//! know are listed in the timeline and counted, so a report can always be
//! made. Whether the log was tampered with is [`crate::verify`]'s question,
//! not this module's.
//!
//! Pure: reads from any [`BufRead`], returns strings.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, BufRead};

use serde::Serialize;

use crate::event::{Event, EventBody, Record};

/// How many blocked or asked commands [`Summary::recap`] lists before it
/// points at the full report.
const RECAP_LIMIT: usize = 5;

/// Longest command shown in a timeline row, in characters.
const TIMELINE_COMMAND_WIDTH: usize = 80;

/// Everything a report shows, folded from a session's events.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The session id (of the first event).
    pub session: Option<String>,
    /// The `session_start` event, if the log has one.
    pub start: Option<SessionInfo>,
    /// The `session_end` event, if the session ended cleanly.
    pub end: Option<SessionEndInfo>,
    /// Time of the first event.
    pub first_ts: Option<String>,
    /// Time of the last event.
    pub last_ts: Option<String>,
    /// The counts of the summary table.
    pub counts: Counts,
    /// Commands that were blocked, in order.
    pub blocked: Vec<DecisionEntry>,
    /// Commands that needed an approval, in order.
    pub asked: Vec<DecisionEntry>,
    /// Answers to approval requests, in order.
    pub approvals: Vec<ApprovalEntry>,
    /// Commands that ran and exited, in order.
    pub exits: Vec<ExitEntry>,
    /// Network destinations the broker saw: host:port → counts and bytes.
    pub destinations: BTreeMap<String, Destination>,
    /// System calls the sandbox refused: name → how often, and the errno.
    pub refused_syscalls: BTreeMap<String, (u64, String)>,
    /// File accesses Landlock refused: (path, rights) → how often.
    #[serde(serialize_with = "files_as_list")]
    pub refused_files: BTreeMap<(String, String), u64>,
    /// Every exec the shims and the exec guard decided, with its process
    /// and parent, for the process tree.
    pub processes: Vec<ProcessEntry>,
    /// Every event, one row each.
    pub timeline: Vec<TimelineEntry>,
    /// Lines skipped while reading, and other remarks for the reader.
    pub notes: Vec<String>,
    /// How the live export went, per target (`[audit] export`).
    pub exports: Vec<ExportEntry>,
    /// Git files the session wrote that would have run a program later,
    /// put aside (`git_change_refused`), in order.
    pub git_refused: Vec<GitRefusedEntry>,
    /// Checkpoints of the workspace the session took (`checkpoint`), in order.
    pub checkpoints: Vec<CheckpointEntry>,
    /// Why checkpoints could not be taken, if they could not.
    pub checkpoint_errors: Vec<String>,
    /// Requests the key proxy or a bridge could not take to the model:
    /// `host:port`, why (with the fix), how many times.
    pub model_unreachable: Vec<(String, String, u32)>,
}

/// What a `checkpoint` event recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CheckpointEntry {
    /// The checkpoint's id (`aq undo --to ID`).
    pub id: String,
    /// Why it was taken (`session-start`, `before-command`, ...).
    pub reason: String,
    /// The command that came next.
    pub command: Option<String>,
    /// Files added, modified and deleted since the checkpoint before.
    pub changed: (u32, u32, u32),
    /// Files over the size limit or unreadable, not kept.
    pub not_kept: Vec<String>,
}

impl Summary {
    /// Whether the session ran in learn mode (asks ran without waiting).
    pub fn learning(&self) -> bool {
        self.start
            .as_ref()
            .and_then(|s| s.mode.as_deref())
            .is_some_and(|m| m == crate::remedy::LEARNED)
    }

    /// The command that puts the workspace back as it was when this session
    /// started, when it took checkpoints.
    pub(crate) fn undo_command(&self) -> Option<String> {
        let session = self.session.as_deref()?;
        (!self.checkpoints.is_empty()).then(|| format!("aq undo --session {session}"))
    }

    /// Whether the session changed the workspace: a checkpoint after its
    /// first one records changes (the first one's are the changes made
    /// before the session, since the checkpoint before it).
    pub(crate) fn workspace_changed(&self) -> bool {
        self.checkpoints
            .iter()
            .skip(1)
            .any(|c| c.changed != (0, 0, 0))
    }

    /// One line on the session's checkpoints, for the recap and the reports.
    pub(crate) fn checkpoints_line(&self) -> Option<String> {
        if let Some(undo) = self.undo_command() {
            let n = self.checkpoints.len();
            let not_kept: usize = self.checkpoints.iter().map(|c| c.not_kept.len()).sum();
            let kept = if not_kept > 0 {
                format!(" ({not_kept} files over the size limit not kept)")
            } else {
                String::new()
            };
            Some(format!(
                "{n} checkpoint{} of the workspace{kept}; `{undo}` puts it back as it was when the session started (`aq checkpoints` lists them)",
                if n == 1 { "" } else { "s" }
            ))
        } else {
            self.checkpoint_errors.first().map(|e| {
                format!(
                    "no checkpoints of the workspace: {}",
                    crate::inert::inert(e)
                )
            })
        }
    }
}

/// What a `git_change_refused` event recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GitRefusedEntry {
    /// The file.
    pub path: String,
    /// What it is to git: `config`, `hook`, `commondir`, `attributes`.
    pub kind: String,
    /// What in it runs.
    pub what: String,
    /// What it would run.
    pub runs: String,
    /// `restored`, `removed` or `reported`.
    pub action: String,
    /// Where the session's version is kept.
    pub quarantined: Option<String>,
}

impl GitRefusedEntry {
    /// One line: the file, what it would run, what was done, where the
    /// session's version is.
    pub fn line(&self) -> String {
        let done = match self.action.as_str() {
            "restored" => "its original content is back",
            "removed" => "it was new and is gone",
            "reported" => "left as it is (outside what the session could write): check it",
            other => other,
        };
        let kept = self
            .quarantined
            .as_deref()
            .map(|q| format!("; the session's version is kept in {q}"))
            .unwrap_or_default();
        // The file's name and content come from the session: inert.
        let inert = crate::inert::inert;
        let (path, what, runs) = (inert(&self.path), inert(&self.what), inert(&self.runs));
        let says = match self.kind.as_str() {
            _ if self.what == "unjudged" => format!("could not be judged ({runs})"),
            "config" => format!("sets {what} = `{runs}`"),
            "hook" => format!("is an executable hook that runs `{runs}`"),
            "commondir" | "gitfile" if what.contains(" of ") => {
                format!("points git at a git directory whose {what} runs `{runs}`")
            }
            "commondir" => format!("sends git to `{runs}` for its config and hooks"),
            "attributes" => format!("sets `{what}`: {runs}"),
            _ => format!("{what}: `{runs}`"),
        };
        format!("{path} {says}; {done}{}", inert(&kept))
    }
}

/// What an `export` event recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExportEntry {
    /// The format and endpoint.
    pub target: String,
    /// Events the collector accepted.
    pub sent: u64,
    /// Events not exported.
    pub dropped: u64,
    /// The last failure.
    pub error: Option<String>,
}

/// What `session_start` recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionInfo {
    /// When the session started.
    pub ts: String,
    /// The `aq` version.
    pub aq_version: String,
    /// The workspace directory.
    pub workspace: String,
    /// The policy profile.
    pub profile: String,
    /// Digest of the effective policy.
    pub policy_digest: String,
    /// The agent command line.
    pub command: Vec<String>,
    /// Pid of `aq run`.
    pub pid: u32,
    /// Active protection layers.
    pub layers: Vec<String>,
    /// `learn` when asks ran without waiting (`aq run --learn`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// What `session_end` recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionEndInfo {
    /// When the session ended.
    pub ts: String,
    /// The agent's exit code.
    pub exit_code: Option<i32>,
    /// Length of the session.
    pub duration_ms: u64,
}

/// The numbers of the summary table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Events read (known and unknown kinds).
    pub events: u64,
    /// `command_decision` events.
    pub commands: u64,
    /// Commands by decision (`allow`, `ask`, `block`, and any other value seen).
    pub decisions: BTreeMap<String, u64>,
    /// Approvals by answer (`once`, `session`, `deny`, `timeout`, `no-approver`, …).
    pub answers: BTreeMap<String, u64>,
    /// `command_exit` events.
    pub exits: u64,
    /// Exits with a non-zero code or by a signal.
    pub failed_exits: u64,
    /// Network connections by decision (`allowed`, `denied`, `failed`).
    pub connections: BTreeMap<String, u64>,
    /// Preflight findings by severity.
    pub preflight: BTreeMap<String, u64>,
    /// Events of kinds this version does not know, by kind.
    pub unknown_kinds: BTreeMap<String, u64>,
    /// Lines that could not be read (torn or damaged).
    pub skipped_lines: u64,
}

impl Counts {
    /// Commands with the given decision.
    pub fn decided(&self, decision: &str) -> u64 {
        self.decisions.get(decision).copied().unwrap_or(0)
    }

    /// Approval requests answered.
    pub fn approvals(&self) -> u64 {
        self.answers.values().sum()
    }
}

/// A blocked or asked command with its evidence.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DecisionEntry {
    /// The event's seq (its line number).
    pub seq: u64,
    /// When it was decided.
    pub ts: String,
    /// The command, redacted.
    pub argv: Vec<String>,
    /// Its working directory.
    pub cwd: String,
    /// Matching rule ids.
    pub rules: Vec<String>,
    /// Why it is risky.
    pub why: Option<String>,
    /// What to run instead.
    pub safer: Option<String>,
    /// The layer that saw it.
    pub source: String,
    /// For an asked command, the answer of the approval that followed.
    pub answer: Option<String>,
    /// What the deciding rule found (the part of the line that decided).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// The file that ran, when the exec guard saw it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exe: Option<String>,
}

/// Past this length an argv is an agent's wrapper script, and what the
/// rule found says more.
const LONG_ARGV: usize = 100;

impl DecisionEntry {
    /// The command as a person reads it: the argv, or, when it is a long
    /// wrapper, what the deciding rule found in it.
    pub fn shown(&self) -> String {
        let argv = display_argv(&self.argv);
        match &self.found {
            Some(found) if argv.chars().count() > LONG_ARGV => found.clone(),
            _ => argv,
        }
    }
}

/// `refused_files` in JSON: a list (its keys are pairs).
fn files_as_list<S: serde::Serializer>(
    files: &BTreeMap<(String, String), u64>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(files.len()))?;
    for ((path, access), n) in files {
        seq.serialize_element(&serde_json::json!({"path": path, "access": access, "count": n}))?;
    }
    seq.end()
}

/// One network destination, over the session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Destination {
    /// Connections allowed.
    pub allowed: u64,
    /// Connections refused by policy.
    pub denied: u64,
    /// Allowed but unreachable.
    pub failed: u64,
    /// Bytes sent out.
    pub bytes_up: u64,
    /// Bytes received.
    pub bytes_down: u64,
    /// The rule of the last decision (allow entry or refusal rule id).
    pub rule: String,
}

/// One decided exec, as a node of the process tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProcessEntry {
    /// The event's seq.
    pub seq: u64,
    /// The process (host pid).
    pub pid: u32,
    /// Its parent.
    pub ppid: u32,
    /// The command, redacted.
    pub argv: Vec<String>,
    /// The file that ran, when the exec guard saw it.
    pub exe: Option<String>,
    /// `allow`, `ask` or `block`.
    pub decision: String,
    /// `shim` or `exec-guard`.
    pub source: String,
}

/// [`Summary::processes`] as a tree: one node per pid, its last decided
/// exec (a shim and the program it becomes share a pid); each pid's
/// children in order; the roots, whose parent made no decided exec.
pub(crate) struct ProcessTree<'a> {
    /// The nodes, in the order their pids first appear.
    pub nodes: Vec<&'a ProcessEntry>,
    /// Indices into `nodes`, by parent pid.
    pub children: BTreeMap<u32, Vec<usize>>,
    /// Indices into `nodes`.
    pub roots: Vec<usize>,
}

impl Summary {
    /// The process tree, for the Markdown and HTML reports.
    pub(crate) fn process_tree(&self) -> ProcessTree<'_> {
        let mut nodes: Vec<&ProcessEntry> = Vec::new();
        let mut index: BTreeMap<u32, usize> = BTreeMap::new();
        for p in &self.processes {
            match index.get(&p.pid) {
                Some(&i) => nodes[i] = p,
                None => {
                    index.insert(p.pid, nodes.len());
                    nodes.push(p);
                }
            }
        }
        let mut children: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        let mut roots = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            if n.ppid != n.pid && index.contains_key(&n.ppid) {
                children.entry(n.ppid).or_default().push(i);
            } else {
                roots.push(i);
            }
        }
        ProcessTree {
            nodes,
            children,
            roots,
        }
    }
}

/// An answered approval request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ApprovalEntry {
    /// The event's seq.
    pub seq: u64,
    /// When it was answered.
    pub ts: String,
    /// The request id.
    pub request: String,
    /// The command, redacted.
    pub argv: Vec<String>,
    /// The answer.
    pub answer: String,
    /// Who answered and how.
    pub by: String,
}

/// A command that ran and exited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExitEntry {
    /// The event's seq.
    pub seq: u64,
    /// When it exited.
    pub ts: String,
    /// The command, redacted.
    pub argv: Vec<String>,
    /// Exit code, if it exited.
    pub exit_code: Option<i32>,
    /// Killing signal, if any.
    pub signal: Option<i32>,
    /// How long it ran.
    pub duration_ms: u64,
}

/// One row of the timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TimelineEntry {
    /// The event's seq, if it had one.
    pub seq: Option<u64>,
    /// The event's time, if it had one.
    pub ts: Option<String>,
    /// The `event` tag.
    pub event: String,
    /// The command the event is about, shell-quoted.
    pub command: Option<String>,
    /// The decision, answer or exit status, in a few words.
    pub outcome: String,
    /// For a command decision: `allow`, `ask` or `block`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
}

/// The process that asked for a `command_decision`, for the process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Caller {
    /// Its pid; 0 when no process asked (an old log, a hook).
    pid: u32,
    /// Its parent's pid.
    ppid: u32,
}

/// What a `network_connection` event brings to a report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Connection {
    host: String,
    port: u16,
    addr: Option<String>,
    /// `allowed`, `denied` or `failed`.
    decision: String,
    rule: String,
    reason: Option<String>,
    bytes_up: u64,
    bytes_down: u64,
    /// Which part of the broker saw it: `key-proxy` and `bridge` carry the
    /// agent's requests to its model.
    front_end: String,
}

impl Connection {
    /// `host:port`, the key of [`Summary::destinations`].
    fn destination(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Why the agent's request could not reach its model, when this is
    /// such a failure. The reason reads `POST /v1/messages: cannot connect
    /// …`; the request line is the same for every failure and is dropped.
    fn model_unreachable(&self) -> Option<String> {
        if self.decision != "failed" || !matches!(self.front_end.as_str(), "key-proxy" | "bridge") {
            return None;
        }
        let why = self
            .reason
            .as_deref()
            .map(|r| r.split_once(": ").map_or(r, |(_, w)| w))
            .unwrap_or("no reason recorded");
        Some(why.to_string())
    }

    /// The timeline's outcome: decision, destination, rule, address, reason.
    fn outcome(&self) -> String {
        let mut outcome = format!("{} {} [{}]", self.decision, self.destination(), self.rule);
        if let Some(a) = &self.addr {
            outcome.push_str(&format!(" -> {a}"));
        }
        if let Some(r) = &self.reason {
            outcome.push_str(&format!(": {r}"));
        }
        outcome
    }
}

/// A `command_decision`'s outcome: the decision, with the rules that made it.
fn decision_outcome(decision: &str, rules: &[String]) -> String {
    if rules.is_empty() {
        decision.to_string()
    } else {
        format!("{decision} ({})", rules.join(", "))
    }
}

impl SessionInfo {
    /// The timeline's outcome: the profile, and the mode when not the usual.
    fn outcome(&self) -> String {
        match &self.mode {
            Some(m) => format!("profile {}, {m} mode", self.profile),
            None => format!("profile {}", self.profile),
        }
    }
}

impl SessionEndInfo {
    /// The timeline's outcome: how the agent ended, after how long.
    fn outcome(&self) -> String {
        format!(
            "{} after {}",
            exit_status(self.exit_code, None),
            format_duration(self.duration_ms)
        )
    }
}

impl ApprovalEntry {
    /// The timeline's outcome: the answer and who gave it.
    fn outcome(&self) -> String {
        format!("{} by {}", self.answer, self.by)
    }
}

impl ExitEntry {
    /// The timeline's outcome: how the command ended, after how long.
    fn outcome(&self) -> String {
        format!(
            "{} after {}",
            exit_status(self.exit_code, self.signal),
            format_duration(self.duration_ms)
        )
    }
}

impl CheckpointEntry {
    /// The timeline's outcome: the short id, why, what changed since the
    /// checkpoint before, and the command that came next.
    fn outcome(&self) -> String {
        let (added, modified, deleted) = self.changed;
        format!(
            "checkpoint {} ({}): +{added} ~{modified} -{deleted}{}",
            &self.id[..self.id.len().min(12)],
            self.reason,
            self.command
                .as_deref()
                .map(|c| format!(", before {}", shorten(c, TIMELINE_COMMAND_WIDTH)))
                .unwrap_or_default()
        )
    }
}

impl ExportEntry {
    /// The timeline's outcome: how many events went where.
    fn outcome(&self) -> String {
        format!(
            "{} sent, {} not exported to {}",
            self.sent, self.dropped, self.target
        )
    }
}

impl Summary {
    /// Reads a whole log and folds it. Fails only on a read error; bad lines
    /// become notes.
    pub fn from_reader(mut reader: impl BufRead) -> io::Result<Summary> {
        let mut summary = Summary::default();
        let mut buf = Vec::new();
        let mut line_no = 0u64;
        loop {
            buf.clear();
            if reader.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            line_no += 1;
            match buf.strip_suffix(b"\n") {
                Some(line) => summary.add_line(line_no, line),
                None => summary.skip(
                    line_no,
                    "is torn (a writer was killed mid-write; the next append removes it)",
                ),
            }
        }
        Ok(summary)
    }

    /// Folds one line (without its newline); `line_no` is used in notes.
    pub(crate) fn add_line(&mut self, line_no: u64, line: &[u8]) {
        let parsed = std::str::from_utf8(line)
            .map_err(|err| err.to_string())
            .and_then(|text| Record::parse(text).map_err(|err| err.to_string()));
        match parsed {
            Ok(record) => self.add(record),
            Err(err) => self.skip(line_no, &format!("is not a valid event ({err})")),
        }
    }

    fn skip(&mut self, line_no: u64, why: &str) {
        self.counts.skipped_lines += 1;
        self.notes.push(format!("line {line_no} skipped: it {why}"));
    }

    /// Folds one parsed record.
    pub fn add(&mut self, record: Record) {
        self.counts.events += 1;
        if self.session.is_none() {
            self.session = record.session().map(str::to_string);
        }
        if let Some(ts) = record.ts() {
            if self.first_ts.is_none() {
                self.first_ts = Some(ts.to_string());
            }
            self.last_ts = Some(ts.to_string());
        }
        match record {
            Record::Event(event) => self.add_event(event),
            Record::Other(value) => {
                let kind = value
                    .get("event")
                    .and_then(|v| v.as_str())
                    .unwrap_or("?")
                    .to_string();
                *self.counts.unknown_kinds.entry(kind.clone()).or_default() += 1;
                self.timeline.push(TimelineEntry {
                    seq: value.get("seq").and_then(|v| v.as_u64()),
                    ts: value.get("ts").and_then(|v| v.as_str()).map(str::to_string),
                    event: kind,
                    command: None,
                    outcome: String::new(),
                    decision: None,
                });
            }
        }
    }

    /// Folds one known event: the kind's own step updates its counts and
    /// sections and says the outcome in a few words, then the event gets its
    /// timeline row. The arms only move fields into the kind's entry type, so
    /// each step reads as what that kind means to a report.
    fn add_event(&mut self, event: Event) {
        let Event { seq, ts, body, .. } = event;
        let kind = body.kind().to_string();
        let command = body.argv().map(display_argv);
        let decision = match &body {
            EventBody::CommandDecision { decision, .. } => Some(decision.clone()),
            _ => None,
        };
        let outcome = match body {
            EventBody::SessionStart {
                aq_version,
                workspace,
                profile,
                policy_digest,
                command,
                pid,
                layers,
                mode,
                ..
            } => self.add_session_start(SessionInfo {
                ts: ts.clone(),
                aq_version,
                workspace,
                profile,
                policy_digest,
                command,
                pid,
                layers,
                mode,
            }),
            EventBody::CommandDecision {
                argv,
                cwd,
                decision,
                rules,
                why,
                safer,
                source,
                pid,
                ppid,
                exe,
                found,
                ..
            } => self.add_command_decision(
                DecisionEntry {
                    seq,
                    ts: ts.clone(),
                    argv,
                    cwd,
                    rules,
                    why,
                    safer,
                    source,
                    answer: None,
                    found,
                    exe,
                },
                decision,
                Caller { pid, ppid },
            ),
            EventBody::Approval {
                request,
                argv,
                answer,
                by,
            } => self.add_approval(ApprovalEntry {
                seq,
                ts: ts.clone(),
                request,
                argv,
                answer,
                by,
            }),
            EventBody::CommandExit {
                argv,
                exit_code,
                signal,
                duration_ms,
            } => self.add_command_exit(ExitEntry {
                seq,
                ts: ts.clone(),
                argv,
                exit_code,
                signal,
                duration_ms,
            }),
            EventBody::NetworkConnection {
                host,
                port,
                addr,
                decision,
                rule,
                reason,
                bytes_up,
                bytes_down,
                front_end,
                ..
            } => self.add_connection(Connection {
                host,
                port,
                addr,
                decision,
                rule,
                reason,
                bytes_up,
                bytes_down,
                front_end,
            }),
            EventBody::PreflightFinding {
                id,
                severity,
                path,
                line,
                title,
            } => {
                *self.counts.preflight.entry(severity.clone()).or_default() += 1;
                format!("{severity} [{id}] {path}:{line}: {title}")
            }
            EventBody::McpToolCall {
                server,
                tool,
                arguments,
                decision,
                rule,
            } => format!(
                "{decision} {server}.{tool} {}{}",
                shorten(&arguments, TIMELINE_COMMAND_WIDTH),
                rule.map(|r| format!(" [{r}]")).unwrap_or_default()
            ),
            EventBody::SyscallRefused {
                pid,
                syscall,
                errno,
            } => self.add_refused_syscall(pid, syscall, errno),
            EventBody::FileRefused { path, access } => self.add_refused_file(path, access),
            EventBody::GitChangeRefused {
                path,
                kind,
                what,
                runs,
                action,
                quarantined,
            } => self.add_git_refused(GitRefusedEntry {
                path,
                kind,
                what,
                runs,
                action,
                quarantined,
            }),
            EventBody::Checkpoint {
                id,
                reason,
                command,
                added,
                modified,
                deleted,
                not_kept,
                error,
            } => self.add_checkpoint(
                CheckpointEntry {
                    id,
                    reason,
                    command,
                    changed: (added, modified, deleted),
                    not_kept,
                },
                error,
            ),
            EventBody::SessionEnd {
                exit_code,
                duration_ms,
            } => self.add_session_end(SessionEndInfo {
                ts: ts.clone(),
                exit_code,
                duration_ms,
            }),
            EventBody::Export {
                target,
                sent,
                dropped,
                error,
            } => self.add_export(ExportEntry {
                target,
                sent,
                dropped,
                error,
            }),
        };
        self.timeline.push(TimelineEntry {
            seq: Some(seq),
            ts: Some(ts),
            event: kind,
            command,
            outcome,
            decision,
        });
    }

    /// `session_start`: the session's header.
    fn add_session_start(&mut self, start: SessionInfo) -> String {
        let outcome = start.outcome();
        self.start = Some(start);
        outcome
    }

    /// `command_decision`: the counts, the process tree (for execs the
    /// shims and the exec guard saw: `aq run`'s own check of the agent
    /// command has no process of its own) and the blocked or asked list.
    fn add_command_decision(
        &mut self,
        entry: DecisionEntry,
        decision: String,
        caller: Caller,
    ) -> String {
        if entry.source != "run" && caller.pid != 0 {
            self.processes.push(ProcessEntry {
                seq: entry.seq,
                pid: caller.pid,
                ppid: caller.ppid,
                argv: entry.argv.clone(),
                exe: entry.exe.clone(),
                decision: decision.clone(),
                source: entry.source.clone(),
            });
        }
        self.counts.commands += 1;
        *self.counts.decisions.entry(decision.clone()).or_default() += 1;
        let outcome = decision_outcome(&decision, &entry.rules);
        match decision.as_str() {
            "block" => self.blocked.push(entry),
            "ask" => self.asked.push(entry),
            _ => {}
        }
        outcome
    }

    /// `approval`: the answer goes on the latest unanswered ask of the same
    /// command, so the asked list shows what became of each.
    fn add_approval(&mut self, approval: ApprovalEntry) -> String {
        *self
            .counts
            .answers
            .entry(approval.answer.clone())
            .or_default() += 1;
        if let Some(asked) = self
            .asked
            .iter_mut()
            .rev()
            .find(|asked| asked.answer.is_none() && asked.argv == approval.argv)
        {
            asked.answer = Some(approval.answer.clone());
        }
        let outcome = approval.outcome();
        self.approvals.push(approval);
        outcome
    }

    /// `command_exit`: counted, failed when it did not exit 0.
    fn add_command_exit(&mut self, exit: ExitEntry) -> String {
        self.counts.exits += 1;
        if exit.exit_code != Some(0) {
            self.counts.failed_exits += 1;
        }
        let outcome = exit.outcome();
        self.exits.push(exit);
        outcome
    }

    /// `network_connection`: the destination's counts and bytes, and a
    /// request the key proxy or a bridge could not take to the model.
    fn add_connection(&mut self, conn: Connection) -> String {
        *self
            .counts
            .connections
            .entry(conn.decision.clone())
            .or_default() += 1;
        let d = self.destinations.entry(conn.destination()).or_default();
        match conn.decision.as_str() {
            "allowed" => d.allowed += 1,
            "denied" => d.denied += 1,
            _ => d.failed += 1,
        }
        d.bytes_up += conn.bytes_up;
        d.bytes_down += conn.bytes_down;
        d.rule = conn.rule.clone();
        if let Some(why) = conn.model_unreachable() {
            self.note_model_unreachable(conn.destination(), why);
        }
        conn.outcome()
    }

    /// Counts one more request that could not reach the model at `at` for
    /// the same reason, keeping the order in which they first happened.
    fn note_model_unreachable(&mut self, at: String, why: String) {
        match self
            .model_unreachable
            .iter_mut()
            .find(|(a, w, _)| *a == at && *w == why)
        {
            Some(entry) => entry.2 += 1,
            None => self.model_unreachable.push((at, why, 1)),
        }
    }

    /// `syscall_refused`: how often, with the last errno.
    fn add_refused_syscall(&mut self, pid: u32, syscall: String, errno: String) -> String {
        let outcome = format!("{syscall} refused ({errno}) to pid {pid}");
        let seen = self.refused_syscalls.entry(syscall).or_default();
        seen.0 += 1;
        seen.1 = errno;
        outcome
    }

    /// `file_refused`: how often, per path and rights.
    fn add_refused_file(&mut self, path: String, access: String) -> String {
        let outcome = format!("{access} refused on {path}");
        *self.refused_files.entry((path, access)).or_default() += 1;
        outcome
    }

    /// `git_change_refused`: the file put aside.
    fn add_git_refused(&mut self, refused: GitRefusedEntry) -> String {
        let outcome = format!("git change refused: {}", refused.line());
        self.git_refused.push(refused);
        outcome
    }

    /// `checkpoint`: a checkpoint taken, or why none could be.
    fn add_checkpoint(&mut self, checkpoint: CheckpointEntry, error: Option<String>) -> String {
        match error {
            Some(e) => {
                let outcome = format!("no checkpoint ({}): {e}", checkpoint.reason);
                self.checkpoint_errors.push(e);
                outcome
            }
            None => {
                let outcome = checkpoint.outcome();
                self.checkpoints.push(checkpoint);
                outcome
            }
        }
    }

    /// `session_end`: the session's last line.
    fn add_session_end(&mut self, end: SessionEndInfo) -> String {
        let outcome = end.outcome();
        self.end = Some(end);
        outcome
    }

    /// `export`: how the live export to one target went.
    fn add_export(&mut self, export: ExportEntry) -> String {
        let outcome = export.outcome();
        self.exports.push(export);
        outcome
    }

    /// Remarks to show with any rendering: skipped lines, unknown kinds, a
    /// missing start or end.
    pub(crate) fn remarks(&self) -> Vec<String> {
        let mut remarks = self.notes.clone();
        if !self.counts.unknown_kinds.is_empty() {
            let kinds: Vec<String> = self
                .counts
                .unknown_kinds
                .iter()
                .map(|(kind, n)| format!("{kind} ×{n}"))
                .collect();
            remarks.push(format!(
                "events of kinds this aq does not know are listed in the timeline only: {}",
                kinds.join(", ")
            ));
        }
        for e in self.exports.iter().filter(|e| e.dropped > 0) {
            remarks.push(format!(
                "{} events not exported to {} (collector unreachable{})",
                e.dropped,
                e.target,
                e.error
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ));
        }
        if self.counts.events > 0 && self.start.is_none() {
            remarks.push("the log has no session_start event".to_string());
        }
        // A hook session (an agent's own hook) has no end of its own.
        let hook = self
            .start
            .as_ref()
            .is_some_and(|s| s.profile.starts_with("hook:"));
        if self.counts.events > 0 && self.end.is_none() && !hook {
            remarks.push(
                "the log has no session_end event: the session is still running, or aq run \
                 was killed"
                    .to_string(),
            );
        }
        remarks
    }

    /// The session's length: from `session_end`, if there is one.
    pub fn duration_ms(&self) -> Option<u64> {
        self.end.as_ref().map(|end| end.duration_ms)
    }

    /// The report as JSON, for tools.
    pub fn to_json(&self) -> serde_json::Result<String> {
        let mut v = serde_json::to_value(self)?;
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "remedies".to_string(),
                serde_json::to_value(self.remedies())?,
            );
        }
        serde_json::to_string_pretty(&v)
    }

    /// The report as Markdown, for a person: header, summary table, blocked
    /// and asked commands with rules, why and safer, approvals, timeline.
    pub fn to_markdown(&self) -> String {
        let mut md = String::new();
        let session = self.session.as_deref().unwrap_or("(unknown)");
        let _ = writeln!(md, "# aq session report: {}\n", escape_text(session));
        self.write_header(&mut md);
        self.write_counts(&mut md);
        write_decisions(&mut md, "Blocked", &self.blocked);
        write_decisions(&mut md, "Asked", &self.asked);
        self.write_approvals(&mut md);
        self.write_process_tree(&mut md);
        self.write_destinations(&mut md);
        if let Some(line) = self.checkpoints_line() {
            md.push_str("## Undo\n\n");
            let _ = writeln!(md, "{}\n", escape_text(&line));
        }
        if !self.git_refused.is_empty() {
            md.push_str("## Git changes refused\n\n");
            md.push_str("Files the session wrote that git would have run a program from, later, outside aq.\n\n");
            md.push_str(
                "| file | what | would run | done | session's version |\n|---|---|---|---|---|\n",
            );
            for g in &self.git_refused {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} |",
                    cell(&g.path),
                    cell(&g.what),
                    cell(&g.runs),
                    cell(&g.action),
                    cell(g.quarantined.as_deref().unwrap_or(""))
                );
            }
            md.push('\n');
        }
        let remedies = self.remedies();
        if !remedies.is_empty() {
            md.push_str("## Refused, and how to allow it next time\n\n");
            md.push_str("| refused | next time | beware |\n|---|---|---|\n");
            for r in &remedies {
                let _ = writeln!(
                    md,
                    "| {} {} | {} | {} |",
                    r.kind,
                    cell(&r.what),
                    cell(&r.line),
                    cell(r.warning.as_deref().unwrap_or(""))
                );
            }
            md.push('\n');
        }
        self.write_timeline(&mut md);
        let remarks = self.remarks();
        if !remarks.is_empty() {
            md.push_str("## Notes\n\n");
            for remark in remarks {
                let _ = writeln!(md, "- {}", escape_text(&remark));
            }
            md.push('\n');
        }
        md
    }

    fn write_header(&self, md: &mut String) {
        md.push_str("| | |\n|---|---|\n");
        let mut row = |name: &str, value: String| {
            let _ = writeln!(md, "| {name} | {value} |");
        };
        if let Some(start) = &self.start {
            row("Workspace", code(&start.workspace));
            row("Profile", cell(&start.profile));
            row("Agent command", code(&display_argv(&start.command)));
            row("Layers", cell(&start.layers.join(", ")));
            row("aq version", cell(&start.aq_version));
            row("Policy digest", code(&start.policy_digest));
        }
        if let Some(first) = &self.first_ts {
            row("Started", cell(first));
        }
        match &self.end {
            Some(end) => {
                row(
                    "Ended",
                    cell(&format!(
                        "{} ({})",
                        end.ts,
                        exit_status(end.exit_code, None)
                    )),
                );
                row("Duration", format_duration(end.duration_ms));
            }
            None => row("Ended", "not recorded".to_string()),
        }
        md.push('\n');
    }

    fn write_counts(&self, md: &mut String) {
        let c = &self.counts;
        md.push_str("## Summary\n\n| | Count |\n|---|---:|\n");
        let _ = writeln!(md, "| Commands checked | {} |", c.commands);
        for (label, decision) in [("Allowed", "allow"), ("Asked", "ask"), ("Blocked", "block")] {
            let _ = writeln!(md, "| {label} | {} |", c.decided(decision));
        }
        for (decision, n) in &c.decisions {
            if !["allow", "ask", "block"].contains(&decision.as_str()) {
                let _ = writeln!(md, "| Decision {} | {n} |", cell(decision));
            }
        }
        let _ = writeln!(md, "| Approvals answered | {} |", c.approvals());
        for (answer, n) in &c.answers {
            let _ = writeln!(md, "| … {} | {n} |", cell(answer));
        }
        let _ = writeln!(md, "| Commands run to exit | {} |", c.exits);
        let _ = writeln!(md, "| … failed (non-zero or signal) | {} |", c.failed_exits);
        if c.skipped_lines > 0 {
            let _ = writeln!(md, "| Lines skipped | {} |", c.skipped_lines);
        }
        md.push('\n');
    }

    fn write_approvals(&self, md: &mut String) {
        md.push_str("## Approvals\n\n");
        if self.approvals.is_empty() {
            md.push_str("None.\n\n");
            return;
        }
        md.push_str("| Time | Command | Answer | By |\n|---|---|---|---|\n");
        for a in &self.approvals {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                cell(&a.ts),
                code(&display_argv(&a.argv)),
                cell(&a.answer),
                cell(&a.by)
            );
        }
        md.push('\n');
    }

    /// Where the network broker let the session connect, or refused to.
    fn write_destinations(&self, md: &mut String) {
        if self.destinations.is_empty() {
            return;
        }
        md.push_str("## Network destinations\n\n| Destination | Allowed | Denied | Failed | Bytes out | Bytes in | Rule |\n|---|---:|---:|---:|---:|---:|---|\n");
        for (dest, d) in &self.destinations {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} |",
                code(dest),
                d.allowed,
                d.denied,
                d.failed,
                d.bytes_up,
                d.bytes_down,
                cell(&d.rule)
            );
        }
        md.push('\n');
    }

    /// What ran, as a tree of processes: each decided exec under the
    /// nearest decided exec of its parent process (a shim and the real
    /// program it becomes share a pid, so they are one line).
    fn write_process_tree(&self, md: &mut String) {
        if self.processes.is_empty() {
            return;
        }
        md.push_str("## Process tree\n\n```text\n");
        let tree = self.process_tree();
        fn walk(md: &mut String, tree: &ProcessTree<'_>, i: usize, depth: usize) {
            let n = tree.nodes[i];
            let _ = writeln!(
                md,
                "{}{} [{}] pid {}{}",
                "  ".repeat(depth),
                display_argv(&n.argv),
                n.decision,
                n.pid,
                n.exe
                    .as_ref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            );
            if depth < 64 {
                for &c in tree.children.get(&n.pid).into_iter().flatten() {
                    walk(md, tree, c, depth + 1);
                }
            }
        }
        for &r in &tree.roots {
            walk(md, &tree, r, 0);
        }
        md.push_str("```\n\n");
    }

    fn write_timeline(&self, md: &mut String) {
        md.push_str("## Timeline\n\n");
        if self.timeline.is_empty() {
            md.push_str("No events.\n\n");
            return;
        }
        md.push_str("| # | Time | Event | Command | Outcome |\n|---:|---|---|---|---|\n");
        for row in &self.timeline {
            let seq = row.seq.map(|s| s.to_string()).unwrap_or_default();
            let command = row
                .command
                .as_deref()
                .map(|c| code(&shorten(c, TIMELINE_COMMAND_WIDTH)))
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "| {seq} | {} | {} | {command} | {} |",
                cell(row.ts.as_deref().unwrap_or("")),
                cell(&row.event),
                cell(&row.outcome)
            );
        }
        md.push('\n');
    }

    /// A few lines for the terminal: counts, then the blocked and asked
    /// commands (at most five each).
    pub fn recap(&self) -> String {
        let c = &self.counts;
        let mut out = String::new();
        let session = self.session.as_deref().unwrap_or("(unknown)");
        let duration = self
            .duration_ms()
            .map(|ms| format!(", {}", format_duration(ms)))
            .unwrap_or_else(|| ", not ended".to_string());
        let _ = writeln!(
            out,
            "aq session {session}{duration}: {} commands: {} allowed, {} asked, {} blocked; \
             {} approvals",
            c.commands,
            c.decided("allow"),
            c.decided("ask"),
            c.decided("block"),
            c.approvals(),
        );
        if self.learning() {
            let learned = self
                .asked
                .iter()
                .filter(|e| e.answer.as_deref() == Some(crate::remedy::LEARNED))
                .count();
            let _ = writeln!(
                out,
                "{:<8}learn mode: {learned} ask{} ran without waiting; `aq policy suggest --session {session}` proposes the lines that allow them",
                "learn",
                if learned == 1 { "" } else { "s" },
            );
        }
        recap_list(&mut out, "blocked", &self.blocked);
        recap_list(&mut out, "asked", &self.asked);
        for g in &self.git_refused {
            let _ = writeln!(out, "{:<8}{}", "git", g.line());
        }
        for (at, why, n) in self.model_unreachable.iter().take(RECAP_LIMIT) {
            let _ = writeln!(
                out,
                "{:<8}the model at {at} could not be reached ({n} {}): {why}",
                "model",
                if *n == 1 { "request" } else { "requests" }
            );
        }
        // Only when there is something to undo: a session that changed
        // nothing in the workspace says nothing about it.
        if let Some(line) = self
            .checkpoints_line()
            .filter(|_| self.workspace_changed() || self.checkpoints.is_empty())
        {
            let _ = writeln!(out, "{:<8}{line}", "undo");
        }
        let remedies = self.remedies();
        if !remedies.is_empty() {
            out.push_str("refused, and the line that allows it next time:\n");
            for r in remedies.iter().take(RECAP_LIMIT) {
                let _ = writeln!(
                    out,
                    "  {:<8}{}",
                    r.kind,
                    shorten(&r.what, TIMELINE_COMMAND_WIDTH)
                );
                let _ = writeln!(out, "          {}", r.line);
                if let Some(w) = &r.warning {
                    let _ = writeln!(out, "          ! {w}");
                }
            }
        }
        let remarks = self.remarks();
        if !remarks.is_empty() {
            let _ = writeln!(out, "note: {}", remarks.join("; "));
        }
        out
    }
}

fn recap_list(out: &mut String, label: &str, entries: &[DecisionEntry]) {
    for entry in entries.iter().take(RECAP_LIMIT) {
        let _ = write!(
            out,
            "{label:<8}{} [{}]",
            shorten(&entry.shown(), TIMELINE_COMMAND_WIDTH),
            entry.rules.join(", ")
        );
        if let Some(answer) = &entry.answer {
            let _ = write!(out, " -> {answer}");
        }
        out.push('\n');
    }
    if entries.len() > RECAP_LIMIT {
        let _ = writeln!(
            out,
            "{:<8}… and {} more (aq report)",
            "",
            entries.len() - RECAP_LIMIT
        );
    }
}

fn write_decisions(md: &mut String, title: &str, entries: &[DecisionEntry]) {
    let _ = writeln!(md, "## {title}\n");
    if entries.is_empty() {
        md.push_str("None.\n\n");
        return;
    }
    for (i, e) in entries.iter().enumerate() {
        let _ = writeln!(md, "### {}. {}\n", i + 1, code(&display_argv(&e.argv)));
        if let Some(found) = &e.found {
            let _ = writeln!(md, "- found: {found}");
        }
        let rules: Vec<String> = e.rules.iter().map(|r| code(r)).collect();
        let rules = if rules.is_empty() {
            "none recorded".to_string()
        } else {
            rules.join(", ")
        };
        let _ = writeln!(md, "- Rules: {rules}");
        if let Some(why) = &e.why {
            let _ = writeln!(md, "- Why: {}", escape_text(why));
        }
        if let Some(safer) = &e.safer {
            let _ = writeln!(md, "- Safer: {}", code(safer));
        }
        if let Some(answer) = &e.answer {
            let _ = writeln!(md, "- Answer: {}", escape_text(answer));
        }
        let _ = writeln!(
            md,
            "- When: {}, in {} (seen by {}, line {})\n",
            escape_text(&e.ts),
            code(&e.cwd),
            escape_text(&e.source),
            e.seq
        );
    }
}

/// `exit 0`, `exit 2`, `signal 9`, `exit unknown`.
pub(crate) fn exit_status(exit_code: Option<i32>, signal: Option<i32>) -> String {
    match (exit_code, signal) {
        (_, Some(signal)) => format!("signal {signal}"),
        (Some(code), None) => format!("exit {code}"),
        (None, None) => "exit unknown".to_string(),
    }
}

/// `850 ms`, `12.3 s`, `12m 03s`, `1h 02m`.
pub(crate) fn format_duration(ms: u64) -> String {
    let secs = ms / 1000;
    if ms < 1000 {
        format!("{ms} ms")
    } else if secs < 60 {
        format!("{}.{} s", secs, (ms % 1000) / 100)
    } else if secs < 3600 {
        format!("{}m {:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h {:02}m", secs / 3600, (secs % 3600) / 60)
    }
}

/// A command line as a person would type it: words with shell-special
/// characters in single quotes.
pub fn display_argv(argv: &[String]) -> String {
    let quoted: Vec<String> = argv
        .iter()
        .map(|arg| {
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_alphanumeric() || "_@%+=:,./-[]~^".contains(c));
            if plain {
                arg.clone()
            } else if arg.chars().any(crate::inert::is_unsafe) {
                ansi_c_quote(arg)
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect();
    quoted.join(" ")
}

/// Bash's `$'…'` quoting, as `printf %q` writes it: the word stays one
/// word a shell reads back as it was, and every control is spelled out.
fn ansi_c_quote(arg: &str) -> String {
    let mut out = String::from("$'");
    for c in arg.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\E"),
            c if crate::inert::is_unsafe(c) && (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if crate::inert::is_unsafe(c) => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// At most `width` characters, with `…` when cut.
fn shorten(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut short: String = text.chars().take(width.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// Inline code that survives any backticks inside and table pipes.
fn code(text: &str) -> String {
    let text = one_line(text).replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// Text for a table cell.
fn cell(text: &str) -> String {
    escape_text(text).replace('|', "\\|")
}

/// Text that Markdown shows as written, on one line.
fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in one_line(text).chars() {
        if "\\`*_[]<>#".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::GENESIS_PREV;

    fn s(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn line(seq: u64, body: EventBody) -> String {
        let event = Event {
            seq,
            ts: format!("2025-01-01T10:00:{seq:02}Z"),
            session: "s1".into(),
            prev: GENESIS_PREV.into(),
            body,
        };
        serde_json::to_string(&event).unwrap()
    }

    fn decision(argv: &[&str], decision: &str, rules: &[&str]) -> EventBody {
        EventBody::CommandDecision {
            argv: s(argv),
            cwd: "/w".into(),
            pid: 2,
            ppid: 1,
            decision: decision.into(),
            rules: s(rules),
            why: (decision != "allow").then(|| "it is risky".into()),
            safer: (decision == "block").then(|| "git push --force-with-lease".into()),
            source: "shim".into(),
            exe: None,
            found: None,
            identity: None,
        }
    }

    #[test]
    fn a_decision_outcome_names_its_rules_when_there_are_any() {
        assert_eq!(decision_outcome("allow", &[]), "allow");
        assert_eq!(
            decision_outcome("block", &s(&["git-push-force", "net-curl-pipe-shell"])),
            "block (git-push-force, net-curl-pipe-shell)"
        );
    }

    fn connection(decision: &str, front_end: &str, reason: Option<&str>) -> Connection {
        Connection {
            host: "api.example".into(),
            port: 443,
            addr: None,
            decision: decision.into(),
            rule: "r".into(),
            reason: reason.map(String::from),
            bytes_up: 0,
            bytes_down: 0,
            front_end: front_end.into(),
        }
    }

    #[test]
    fn only_failed_model_requests_are_model_unreachable_without_their_request_line() {
        let reason = Some("POST /v1/messages: cannot connect: refused");
        let cases = [
            (
                connection("failed", "key-proxy", reason),
                Some("cannot connect: refused"),
            ),
            (
                connection("failed", "bridge", None),
                Some("no reason recorded"),
            ),
            (connection("failed", "bridge", Some("plain")), Some("plain")),
            (connection("failed", "proxy", reason), None),
            (connection("denied", "key-proxy", reason), None),
            (connection("allowed", "bridge", None), None),
        ];
        for (conn, want) in cases {
            assert_eq!(conn.model_unreachable().as_deref(), want, "{conn:?}");
        }
    }

    #[test]
    fn a_connection_outcome_adds_the_address_and_reason_it_has() {
        assert_eq!(
            connection("allowed", "proxy", None).outcome(),
            "allowed api.example:443 [r]"
        );
        let mut conn = connection("failed", "proxy", Some("timed out"));
        conn.addr = Some("192.0.2.1:443".into());
        assert_eq!(
            conn.outcome(),
            "failed api.example:443 [r] -> 192.0.2.1:443: timed out"
        );
    }

    #[test]
    fn a_checkpoint_outcome_shortens_the_id_and_the_next_command() {
        let checkpoint = CheckpointEntry {
            id: "0123456789abcdef".into(),
            reason: "before-command".into(),
            command: Some("x".repeat(100)),
            changed: (1, 2, 3),
            not_kept: vec![],
        };
        let outcome = checkpoint.outcome();
        assert_eq!(
            outcome,
            format!(
                "checkpoint 0123456789ab (before-command): +1 ~2 -3, before {}",
                shorten(&"x".repeat(100), TIMELINE_COMMAND_WIDTH)
            )
        );
        let first = CheckpointEntry {
            id: "ab".into(),
            reason: "session-start".into(),
            ..CheckpointEntry::default()
        };
        assert_eq!(first.outcome(), "checkpoint ab (session-start): +0 ~0 -0");
    }

    #[test]
    fn session_and_exit_outcomes_read_as_the_timeline_shows_them() {
        let start = SessionInfo {
            profile: "strict".into(),
            ..SessionInfo::default()
        };
        assert_eq!(start.outcome(), "profile strict");
        let learning = SessionInfo {
            mode: Some("learn".into()),
            ..start
        };
        assert_eq!(learning.outcome(), "profile strict, learn mode");
        let exit = ExitEntry {
            exit_code: Some(0),
            duration_ms: 12,
            ..ExitEntry::default()
        };
        assert_eq!(
            exit.outcome(),
            format!(
                "{} after {}",
                exit_status(Some(0), None),
                format_duration(12)
            )
        );
        let end = SessionEndInfo {
            exit_code: Some(3),
            duration_ms: 723_000,
            ..SessionEndInfo::default()
        };
        assert_eq!(
            end.outcome(),
            format!(
                "{} after {}",
                exit_status(Some(3), None),
                format_duration(723_000)
            )
        );
        let approval = ApprovalEntry {
            answer: "deny".into(),
            by: "aq approve".into(),
            ..ApprovalEntry::default()
        };
        assert_eq!(approval.outcome(), "deny by aq approve");
        let export = ExportEntry {
            target: "otlp".into(),
            sent: 5,
            dropped: 1,
            error: None,
        };
        assert_eq!(export.outcome(), "5 sent, 1 not exported to otlp");
    }

    #[test]
    fn the_report_draws_the_process_tree_of_what_ran() {
        let exec = |pid: u32, ppid: u32, argv: &[&str], decision: &str, exe: Option<&str>| {
            EventBody::CommandDecision {
                argv: s(argv),
                cwd: "/w".into(),
                pid,
                ppid,
                decision: decision.into(),
                rules: vec![],
                why: None,
                safer: None,
                source: "exec-guard".into(),
                exe: exe.map(String::from),
                found: None,
                identity: None,
            }
        };
        let log = [
            line(
                1,
                exec(
                    20,
                    10,
                    &["bash", "-c", "make test"],
                    "allow",
                    Some("/usr/bin/bash"),
                ),
            ),
            line(
                2,
                exec(21, 20, &["make", "test"], "allow", Some("/usr/bin/make")),
            ),
            line(
                3,
                exec(
                    22,
                    21,
                    &["curl", "https://example.invalid/"],
                    "block",
                    Some("/w/c"),
                ),
            ),
        ]
        .join("\n")
            + "\n";
        let summary = Summary::from_reader(log.as_bytes()).unwrap();
        let md = summary.to_markdown();
        assert!(md.contains("## Process tree"), "{md}");
        assert!(
            md.contains("bash -c 'make test' [allow] pid 20 (/usr/bin/bash)\n  make test [allow] pid 21 (/usr/bin/make)\n    curl https://example.invalid/ [block] pid 22 (/w/c)"),
            "{md}"
        );
    }

    fn sample_log() -> String {
        let lines = [
            line(
                1,
                EventBody::SessionStart {
                    aq_version: "0.1.0".into(),
                    workspace: "/w".into(),
                    profile: "default".into(),
                    policy_digest: "sha256:abc".into(),
                    command: s(&["claude", "--print"]),
                    pid: 1,
                    layers: s(&["shims"]),
                    grants: None,
                    mode: None,
                },
            ),
            line(2, decision(&["ls", "-la"], "allow", &[])),
            line(
                3,
                EventBody::CommandExit {
                    argv: s(&["ls", "-la"]),
                    exit_code: Some(0),
                    signal: None,
                    duration_ms: 12,
                },
            ),
            line(4, decision(&["git", "push", "--force"], "block", &["git-push-force"])),
            line(5, decision(&["npm", "publish"], "ask", &["pkg-publish"])),
            line(
                6,
                EventBody::Approval {
                    request: "r1".into(),
                    argv: s(&["npm", "publish"]),
                    answer: "deny".into(),
                    by: "aq approve (tty /dev/pts/3, uid 1000)".into(),
                },
            ),
            r#"{"seq":7,"ts":"2025-01-01T10:00:07Z","session":"s1","prev":"x","event":"net_connect","host":"example.com"}"#.to_string(),
            line(
                8,
                EventBody::SessionEnd {
                    exit_code: Some(0),
                    duration_ms: 723_000,
                },
            ),
        ];
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    fn summary(text: &str) -> Summary {
        Summary::from_reader(text.as_bytes()).unwrap()
    }

    #[test]
    fn folds_counts_and_sections() {
        let sum = summary(&sample_log());
        assert_eq!(sum.session.as_deref(), Some("s1"));
        assert_eq!(sum.counts.events, 8);
        assert_eq!(sum.counts.commands, 3);
        assert_eq!(
            (
                sum.counts.decided("allow"),
                sum.counts.decided("ask"),
                sum.counts.decided("block")
            ),
            (1, 1, 1)
        );
        assert_eq!(sum.counts.approvals(), 1);
        assert_eq!(sum.counts.unknown_kinds.get("net_connect"), Some(&1));
        assert_eq!(sum.blocked.len(), 1);
        assert_eq!(sum.blocked[0].rules, ["git-push-force"]);
        assert_eq!(sum.asked[0].answer.as_deref(), Some("deny"));
        assert_eq!(sum.exits.len(), 1);
        assert_eq!(sum.timeline.len(), 8);
        assert_eq!(sum.first_ts.as_deref(), Some("2025-01-01T10:00:01Z"));
        assert_eq!(sum.last_ts.as_deref(), Some("2025-01-01T10:00:08Z"));
        assert_eq!(sum.duration_ms(), Some(723_000));
        assert_eq!(sum.start.as_ref().unwrap().profile, "default");
    }

    #[test]
    fn markdown_has_every_section() {
        let md = summary(&sample_log()).to_markdown();
        for needle in [
            "# aq session report: s1",
            "| Workspace | `/w` |",
            "| Profile | default |",
            "| Duration | 12m 03s |",
            "## Summary",
            "| Blocked | 1 |",
            "## Blocked",
            "### 1. `git push --force`",
            "- Rules: `git-push-force`",
            "- Why: it is risky",
            "- Safer: `git push --force-with-lease`",
            "## Asked",
            "- Answer: deny",
            "## Approvals",
            "| `npm publish` | deny | aq approve (tty /dev/pts/3, uid 1000) |",
            "## Timeline",
            "| 4 | 2025-01-01T10:00:04Z | command\\_decision | `git push --force` | block (git-push-force) |",
            "| 7 | 2025-01-01T10:00:07Z | net\\_connect |  |  |",
            "net\\_connect ×1",
        ] {
            assert!(md.contains(needle), "missing {needle:?} in\n{md}");
        }
        assert!(!md.contains("no session_end"), "{md}");
    }

    #[test]
    fn recap_is_short_and_names_blocked_commands() {
        let recap = summary(&sample_log()).recap();
        assert!(
            recap.starts_with(
                "aq session s1, 12m 03s: 3 commands: 1 allowed, 1 asked, 1 blocked; 1 approvals\n"
            ),
            "{recap}"
        );
        assert!(
            recap.contains("blocked git push --force [git-push-force]\n"),
            "{recap}"
        );
        assert!(
            recap.contains("asked   npm publish [pkg-publish] -> deny\n"),
            "{recap}"
        );
        // The counts, one line per refusal, then what would allow them.
        let (lists, remedies) = recap
            .split_once("refused, and the line that allows it next time:\n")
            .unwrap_or((&recap, ""));
        assert_eq!(lists.lines().count(), 3, "{recap}");
        assert!(remedies.contains("[rules] git-push-force"), "{recap}");
        assert!(
            remedies.contains("aq allow --command 'npm publish'"),
            "{recap}"
        );
    }

    #[test]
    fn a_refused_git_change_is_in_the_recap_and_the_report() {
        let text = line(
            1,
            EventBody::GitChangeRefused {
                path: ".git/modules/a/config".into(),
                kind: "config".into(),
                what: "core.fsmonitor".into(),
                runs: "touch /tmp/x".into(),
                action: "restored".into(),
                quarantined: Some("/state/s1/git-quarantine/1-config".into()),
            },
        ) + "\n";
        let s = summary(&text);
        let want = ".git/modules/a/config sets core.fsmonitor = `touch /tmp/x`; its original content is back; the session's version is kept in /state/s1/git-quarantine/1-config";
        assert!(
            s.recap().contains(&format!("git     {want}\n")),
            "{}",
            s.recap()
        );
        let md = s.to_markdown();
        assert!(md.contains("## Git changes refused"), "{md}");
        assert!(md.contains("core.fsmonitor"), "{md}");
    }

    #[test]
    fn checkpoints_are_counted_with_the_command_that_undoes_them() {
        let cp = |seq, error: Option<&str>| {
            line(
                seq,
                EventBody::Checkpoint {
                    id: if error.is_some() {
                        String::new()
                    } else {
                        format!("{seq:040}")
                    },
                    reason: "before-command".into(),
                    command: Some("rm -rf src".into()),
                    added: 0,
                    modified: 1,
                    deleted: 2,
                    not_kept: vec!["big.bin (over the size limit)".into()],
                    error: error.map(str::to_string),
                },
            ) + "\n"
        };
        let s = summary(&(cp(1, None) + &cp(2, None)));
        let recap = s.recap();
        assert!(
            recap.contains("undo    2 checkpoints of the workspace (2 files over the size limit not kept); `aq undo --session s1`"),
            "{recap}"
        );
        assert!(s.to_markdown().contains("## Undo"));
        assert!(s.to_html().contains("aq undo --session s1"));
        // A session whose only checkpoint is its first changed nothing.
        let one = summary(&cp(1, None));
        assert!(!one.recap().contains("undo "), "{}", one.recap());
        assert!(one.to_markdown().contains("## Undo"));
        let failed = summary(&cp(1, Some("disk full")));
        assert!(
            failed
                .recap()
                .contains("no checkpoints of the workspace: disk full"),
            "{}",
            failed.recap()
        );
    }

    #[test]
    fn recap_caps_long_lists() {
        let mut text = String::new();
        for seq in 1..=8 {
            text += &line(
                seq,
                decision(&["rm", "-rf", "/"], "block", &["fs-rm-recursive-root"]),
            );
            text.push('\n');
        }
        let recap = summary(&text).recap();
        assert!(recap.contains("… and 3 more (aq report)"), "{recap}");
        assert!(recap.contains("not ended"), "{recap}");
    }

    #[test]
    fn events_not_exported_are_said_in_every_rendering() {
        let export = |sent, dropped, error: Option<&str>| EventBody::Export {
            target: "otlp http://127.0.0.1:9/v1/logs".into(),
            sent,
            dropped,
            error: error.map(str::to_string),
        };
        let text = format!(
            "{}\n{}\n",
            line(1, export(0, 7, Some("connection refused"))),
            line(2, export(9, 0, None))
        );
        let sum = summary(&text);
        let want = "7 events not exported to otlp http://127.0.0.1:9/v1/logs (collector unreachable: connection refused)";
        assert!(sum.recap().contains(want), "{}", sum.recap());
        assert!(sum.to_markdown().contains(want), "{}", sum.to_markdown());
        assert_eq!(
            sum.remarks()
                .iter()
                .filter(|r| r.contains("not exported"))
                .count(),
            1
        );
        let json: serde_json::Value = serde_json::from_str(&sum.to_json().unwrap()).unwrap();
        assert_eq!(json["exports"][0]["dropped"], 7);
        assert_eq!(json["exports"][1]["sent"], 9);
    }

    #[test]
    fn json_round_trips_through_serde_value() {
        let json = summary(&sample_log()).to_json().unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["counts"]["decisions"]["block"], 1);
        assert_eq!(value["blocked"][0]["safer"], "git push --force-with-lease");
        assert_eq!(value["start"]["workspace"], "/w");
    }

    #[test]
    fn torn_and_damaged_lines_become_notes() {
        let mut text = sample_log();
        text.insert_str(0, "garbage\n");
        text.push_str("{\"seq\":9,\"ts\":");
        let sum = summary(&text);
        assert_eq!(sum.counts.skipped_lines, 2);
        assert_eq!(sum.counts.events, 8);
        assert!(sum.notes[0].starts_with("line 1 skipped: it is not a valid event"));
        assert!(sum.notes[1].starts_with("line 10 skipped: it is torn"));
        assert!(sum.to_markdown().contains("## Notes"));
    }

    #[test]
    fn empty_log_renders() {
        let sum = summary("");
        assert!(sum.to_markdown().contains("No events."));
        assert!(
            sum.recap()
                .starts_with("aq session (unknown), not ended: 0 commands")
        );
    }

    #[test]
    fn markdown_escapes_hostile_commands() {
        let text = line(
            1,
            decision(&["sh", "-c", "a | b `c` *d*\nrm"], "block", &["x"]),
        ) + "\n";
        let md = summary(&text).to_markdown();
        assert!(
            md.contains("### 1. ``sh -c $'a \\| b `c` *d*\\nrm'``"),
            "{md}"
        );
        for row in md.lines().filter(|l| l.starts_with("| 1 |")) {
            // Five cells: six unescaped pipes.
            let pipes = row.matches('|').count() - row.matches("\\|").count();
            assert_eq!(pipes, 6, "{row}");
        }
    }

    #[test]
    fn display_argv_quotes_like_a_shell() {
        assert_eq!(display_argv(&s(&["ls", "-la", "/tmp"])), "ls -la /tmp");
        assert_eq!(
            display_argv(&s(&["echo", "a b", "it's", ""])),
            r"echo 'a b' 'it'\''s' ''"
        );
        assert_eq!(
            display_argv(&s(&["x", "TOKEN=[REDACTED]"])),
            "x TOKEN=[REDACTED]"
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(850), "850 ms");
        assert_eq!(format_duration(12_345), "12.3 s");
        assert_eq!(format_duration(723_000), "12m 03s");
        assert_eq!(format_duration(3_720_000), "1h 02m");
    }
}

#[cfg(test)]
mod quoting_tests {
    use super::display_argv;

    /// What bash reads back from `display_argv`'s words.
    fn bash_reads(shown: &str) -> Vec<String> {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("printf '%s\\0' {shown}"))
            .output()
            .expect("bash");
        String::from_utf8(out.stdout)
            .unwrap()
            .split_terminator('\0')
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn controls_are_spelled_out_and_read_back_by_bash_as_they_were() {
        let argv: Vec<String> = [
            "plain",
            "it's",
            "\u{1b}[2J\u{1b}]0;title\u{7}",
            "a\nb\tc\rd \\ ' \"",
            "\u{202e}txt.exe",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let shown = display_argv(&argv);
        assert!(
            !shown.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{shown:?}"
        );
        assert!(shown.contains("$'\\E[2J\\E]0;title\\x07'"), "{shown}");
        assert_eq!(bash_reads(&shown), argv, "{shown}");
    }
}
