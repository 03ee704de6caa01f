//! What the console shows, folded from log records and pending asks.
//!
//! Pure: records and asks in, a [`State`] out, and keys in, an [`Effect`]
//! out. It reads no file or clock, so rendering and key handling are tested
//! without a terminal. Every string taken from a record or an ask is made
//! [`inert`] on the way in: nothing here can hold an escape sequence.

use std::collections::{BTreeMap, HashSet, VecDeque};

use aq_audit::{EventBody, Record};
use aq_shim::approvals::{Answer, Request};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::inert::{inert, inert_argv};

/// How many rows of history the console keeps.
pub const MAX_ROWS: usize = 2000;

/// Counts over every followed session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Commands allowed by the policy.
    pub allowed: u64,
    /// Commands that asked.
    pub asked: u64,
    /// Commands blocked by the policy.
    pub blocked: u64,
    /// Asks a human allowed (once or for the session).
    pub approved: u64,
    /// Asks denied, by a human or for want of an answer.
    pub denied: u64,
}

/// One line of history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// `HH:MM:SS` (UTC) from the record's time.
    pub time: String,
    /// The session id.
    pub session: String,
    /// What kind of event: `command`, `approval`, `exit`, `net`, ...
    pub kind: &'static str,
    /// The decision or outcome: `allow`, `ask`, `block`, `once`, `deny`, `exit 0`...
    pub decision: String,
    /// The rule ids, or who answered.
    pub rule: String,
    /// The command line, host or path.
    pub what: String,
}

/// Connections to one destination.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Destination {
    /// Connections allowed.
    pub allowed: u64,
    /// Connections refused or failed.
    pub refused: u64,
    /// Bytes sent and received.
    pub bytes: u64,
    /// The last decision's rule.
    pub rule: String,
}

/// An ask waiting for an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    /// The session id.
    pub session: String,
    /// The request id within the session.
    pub id: String,
    /// The command line, inert.
    pub command: String,
    /// The rules that asked.
    pub rules: String,
    /// Why, if said.
    pub why: String,
    /// The working directory.
    pub cwd: String,
}

impl Ask {
    /// An ask from a session's queue.
    pub(crate) fn from_request(session: &str, r: &Request) -> Ask {
        Ask {
            session: inert(session),
            id: r.id.clone(),
            command: match &r.network {
                Some(dest) => format!("connect to {} from {}", inert(dest), inert_argv(&r.argv)),
                None => inert_argv(&r.argv),
            },
            rules: inert(&r.rules.join(", ")),
            why: inert(r.why.as_deref().unwrap_or("")),
            cwd: inert(&r.cwd),
        }
    }

    fn key(&self) -> (String, String) {
        (self.session.clone(), self.id.clone())
    }
}

/// What a key asks the caller to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Nothing beyond redrawing.
    None,
    /// Leave the console.
    Quit,
    /// Answer request `request` of session `session`.
    Answer {
        /// The session id.
        session: String,
        /// The request id.
        request: String,
        /// The answer.
        answer: Answer,
    },
}

/// Whether keys go to the filter being typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Keys are commands.
    Normal,
    /// Keys edit the filter (after `/`, until Enter or Esc).
    Filtering,
}

/// Everything the console shows.
#[derive(Debug, Clone)]
pub struct State {
    /// Sessions seen, with their command line and whether they ended.
    pub sessions: BTreeMap<String, SessionView>,
    /// Counts over every followed session.
    pub counts: Counts,
    /// History, oldest first, at most [`MAX_ROWS`].
    pub rows: VecDeque<Row>,
    /// Network destinations by `host:port`.
    pub network: BTreeMap<String, Destination>,
    /// Asks pending in the queues, as last read.
    pending: Vec<Ask>,
    /// Asks answered from here, hidden until their queue drops them.
    answered: HashSet<(String, String)>,
    /// Asks skipped: listed last.
    skipped: HashSet<(String, String)>,
    /// The selected ask, an index into [`State::asks`].
    pub selected: usize,
    /// The filter text.
    pub filter: String,
    /// Whether the filter is being typed.
    pub mode: Mode,
    /// A message for the status line (an answer given, one too late).
    pub message: Option<String>,
    /// Live sessions, as last counted.
    pub live: usize,
}

/// A session as the console knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionView {
    /// The command it wraps, inert.
    pub command: String,
    /// Whether its log says it ended.
    pub ended: bool,
    /// Checkpoints of the workspace it took (`aq undo --session ID` goes back).
    pub checkpoints: u64,
}

impl Default for State {
    fn default() -> Self {
        State::new()
    }
}

impl State {
    /// An empty console.
    pub fn new() -> State {
        State {
            sessions: BTreeMap::new(),
            counts: Counts::default(),
            rows: VecDeque::new(),
            network: BTreeMap::new(),
            pending: Vec::new(),
            answered: HashSet::new(),
            skipped: HashSet::new(),
            selected: 0,
            filter: String::new(),
            mode: Mode::Normal,
            message: None,
            live: 0,
        }
    }

    /// Folds one record of session `session`'s log.
    pub fn record(&mut self, session: &str, record: &Record) {
        let Record::Event(event) = record else {
            return;
        };
        let session = inert(session);
        let row = |kind, decision: &str, rule: &str, what: String| Row {
            time: time_of(&event.ts),
            session: session.clone(),
            kind,
            decision: inert(decision),
            rule: inert(rule),
            what,
        };
        let row = match &event.body {
            EventBody::SessionStart { command, .. } => {
                let view = self.sessions.entry(session.clone()).or_default();
                view.command = inert_argv(command);
                row("session", "start", "", inert_argv(command))
            }
            EventBody::SessionEnd { exit_code, .. } => {
                self.sessions.entry(session.clone()).or_default().ended = true;
                let how = exit_code.map_or("end".to_string(), |c| format!("end, exit {c}"));
                row("session", &how, "", String::new())
            }
            EventBody::CommandDecision {
                argv,
                decision,
                rules,
                ..
            } => {
                match decision.as_str() {
                    "allow" => self.counts.allowed += 1,
                    "ask" => self.counts.asked += 1,
                    "block" => self.counts.blocked += 1,
                    _ => {}
                }
                row("command", decision, &rules.join(", "), inert_argv(argv))
            }
            EventBody::Approval {
                request,
                argv,
                answer,
                by,
            } => {
                // `command` is the command `aq run` was given: its user
                // approved it by typing it, no ask was answered.
                if request != "command" {
                    match answer.as_str() {
                        "once" | "session" => self.counts.approved += 1,
                        "deny" | "timeout" | "no-approver" => self.counts.denied += 1,
                        _ => {}
                    }
                }
                row("approval", answer, by, inert_argv(argv))
            }
            EventBody::CommandExit {
                argv,
                exit_code,
                signal,
                ..
            } => {
                let how = match (exit_code, signal) {
                    (Some(c), _) => format!("exit {c}"),
                    (None, Some(s)) => format!("signal {s}"),
                    (None, None) => "ended".to_string(),
                };
                row("exit", &how, "", inert_argv(argv))
            }
            EventBody::NetworkConnection {
                host,
                port,
                decision,
                rule,
                bytes_up,
                bytes_down,
                ..
            } => {
                let dest = format!("{}:{port}", inert(host));
                let d = self.network.entry(dest.clone()).or_default();
                if decision == "allowed" {
                    d.allowed += 1;
                } else {
                    d.refused += 1;
                }
                d.bytes += bytes_up + bytes_down;
                d.rule = inert(rule);
                row("net", decision, rule, dest)
            }
            EventBody::FileRefused { path, access } => row("file", "refused", access, inert(path)),
            EventBody::GitChangeRefused {
                path, what, action, ..
            } => row("git", "refused", action, inert(&format!("{path} ({what})"))),
            EventBody::SyscallRefused { syscall, errno, .. } => {
                row("syscall", "refused", errno, inert(syscall))
            }
            EventBody::Checkpoint {
                id, reason, error, ..
            } => {
                let view = self.sessions.entry(session.clone()).or_default();
                if error.is_none() {
                    view.checkpoints += 1;
                }
                match error {
                    Some(e) => row("undo", "no checkpoint", reason, inert(e)),
                    None => row(
                        "undo",
                        "checkpoint",
                        reason,
                        format!(
                            "{} · aq undo --session {session}",
                            inert(&id[..id.len().min(12)])
                        ),
                    ),
                }
            }
            EventBody::McpToolCall {
                server,
                tool,
                decision,
                rule,
                ..
            } => row(
                "mcp",
                decision,
                rule.as_deref().unwrap_or(""),
                format!("{} {}", inert(server), inert(tool)),
            ),
            EventBody::PreflightFinding {
                id,
                severity,
                path,
                line,
                ..
            } => row("finding", severity, id, format!("{}:{line}", inert(path))),
            EventBody::Export {
                target,
                sent,
                dropped,
                ..
            } => row(
                "export",
                if *dropped > 0 { "dropped" } else { "sent" },
                "",
                format!("{} · {sent} sent, {dropped} dropped", inert(target)),
            ),
        };
        if self.rows.len() == MAX_ROWS {
            self.rows.pop_front();
        }
        self.rows.push_back(row);
    }

    /// Replaces the pending asks with what the queues hold now; whether
    /// they changed.
    pub(crate) fn set_pending(&mut self, asks: Vec<Ask>) -> bool {
        if asks == self.pending {
            return false;
        }
        let now: HashSet<(String, String)> = asks.iter().map(Ask::key).collect();
        self.answered.retain(|k| now.contains(k));
        self.skipped.retain(|k| now.contains(k));
        self.pending = asks;
        self.clamp_selection();
        true
    }

    /// The asks to show, filtered: waiting ones first, skipped ones last;
    /// those answered from here are gone.
    pub fn asks(&self) -> Vec<&Ask> {
        let visible = |a: &&Ask| !self.answered.contains(&a.key()) && self.matches_ask(a);
        let mut out: Vec<&Ask> = self
            .pending
            .iter()
            .filter(visible)
            .filter(|a| !self.skipped.contains(&a.key()))
            .collect();
        out.extend(
            self.pending
                .iter()
                .filter(visible)
                .filter(|a| self.skipped.contains(&a.key())),
        );
        out
    }

    /// Whether an ask was skipped.
    pub(crate) fn is_skipped(&self, ask: &Ask) -> bool {
        self.skipped.contains(&ask.key())
    }

    /// The rows to show, newest first, filtered.
    pub(crate) fn visible_rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().rev().filter(|r| self.matches_row(r))
    }

    fn needle(&self) -> Option<String> {
        (!self.filter.is_empty()).then(|| self.filter.to_lowercase())
    }

    fn matches_row(&self, r: &Row) -> bool {
        self.needle().is_none_or(|n| {
            [&r.session, &r.decision, &r.rule, &r.what]
                .iter()
                .any(|f| f.to_lowercase().contains(&n))
                || r.kind.contains(&n)
        })
    }

    fn matches_ask(&self, a: &Ask) -> bool {
        self.needle().is_none_or(|n| {
            [&a.session, &a.command, &a.rules, &a.why]
                .iter()
                .any(|f| f.to_lowercase().contains(&n))
        })
    }

    fn clamp_selection(&mut self) {
        let n = self.asks().len();
        self.selected = self.selected.min(n.saturating_sub(1));
    }

    /// Handles one key press.
    pub(crate) fn on_key(&mut self, key: KeyEvent) -> Effect {
        if key.kind == KeyEventKind::Release {
            return Effect::None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return Effect::Quit;
        }
        // Ctrl-D or Alt-O are not `d` or `o`: an answer takes the bare key.
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER)
        {
            return Effect::None;
        }
        if self.mode == Mode::Filtering {
            match key.code {
                KeyCode::Enter => self.mode = Mode::Normal,
                KeyCode::Esc => {
                    self.filter.clear();
                    self.mode = Mode::Normal;
                }
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Char(c) if !c.is_control() && self.filter.len() < 200 => {
                    self.filter.push(c);
                }
                _ => {}
            }
            self.clamp_selection();
            return Effect::None;
        }
        match key.code {
            KeyCode::Char('q') => return Effect::Quit,
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => {
                self.selected += 1;
                self.clamp_selection();
            }
            KeyCode::Char('/') => {
                self.mode = Mode::Filtering;
                self.message = None;
            }
            KeyCode::Esc => {
                self.filter.clear();
                self.clamp_selection();
            }
            KeyCode::Char('k') => {
                if let Some(ask) = self.asks().get(self.selected).map(|a| a.key()) {
                    self.skipped.insert(ask);
                    self.clamp_selection();
                }
            }
            KeyCode::Char(c @ ('o' | 's' | 'a' | 'd')) => {
                let answer = match c {
                    'o' => Answer::Once,
                    's' => Answer::Session,
                    'a' => Answer::Always,
                    _ => Answer::Deny,
                };
                let Some((session, request)) = self.asks().get(self.selected).map(|a| a.key())
                else {
                    self.message = Some("no ask to answer".into());
                    return Effect::None;
                };
                return Effect::Answer {
                    session,
                    request,
                    answer,
                };
            }
            _ => {}
        }
        Effect::None
    }

    /// Records how an answer given from here went: the ask disappears, or
    /// the message says why it could not be answered (answered elsewhere,
    /// timed out, its session ended).
    pub fn answered(
        &mut self,
        session: &str,
        request: &str,
        answer: Answer,
        result: Result<(), String>,
    ) {
        let key = (session.to_string(), request.to_string());
        let command = self
            .pending
            .iter()
            .find(|a| a.key() == key)
            .map(|a| a.command.clone())
            .unwrap_or_default();
        self.message = Some(match result {
            Ok(()) => {
                self.answered.insert(key);
                format!("answered {}: {command}", answer_label(answer))
            }
            Err(e) => {
                self.skipped.remove(&key);
                self.pending.retain(|a| a.key() != key);
                format!("too late for {command}: {}", inert(&e))
            }
        });
        self.clamp_selection();
    }
}

/// How an answer reads on screen.
pub(crate) fn answer_label(answer: Answer) -> &'static str {
    match answer {
        Answer::Once => "allow once",
        Answer::Session => "allow for the session",
        Answer::Always => "allow always",
        Answer::Deny => "deny",
    }
}

/// `HH:MM:SS` from an RFC 3339 time (`2026-11-30T10:00:01.123Z`).
fn time_of(ts: &str) -> String {
    ts.split_once('T')
        .map(|(_, t)| t.chars().take(8).collect::<String>())
        .map(|t| inert(&t))
        .unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn record(seq: u64, body: EventBody) -> Record {
        Record::Event(aq_audit::Event {
            seq,
            ts: format!("2026-11-30T10:00:{:02}.000Z", seq % 60),
            session: "s1".into(),
            prev: aq_audit::GENESIS_PREV.into(),
            body,
        })
    }

    pub(crate) fn decision(seq: u64, argv: &[&str], decision: &str, rule: &str) -> Record {
        record(
            seq,
            EventBody::CommandDecision {
                argv: argv.iter().map(|s| s.to_string()).collect(),
                cwd: "/w".into(),
                pid: 1,
                ppid: 1,
                decision: decision.into(),
                rules: if rule.is_empty() {
                    vec![]
                } else {
                    vec![rule.into()]
                },
                why: None,
                safer: None,
                source: "shim".into(),
                exe: None,
                found: None,
                identity: None,
            },
        )
    }

    pub(crate) fn approval(seq: u64, request: &str, argv: &[&str], answer: &str) -> Record {
        record(
            seq,
            EventBody::Approval {
                request: request.into(),
                argv: argv.iter().map(|s| s.to_string()).collect(),
                answer: answer.into(),
                by: "aq watch on /dev/pts/1, uid 0".into(),
            },
        )
    }

    pub(crate) fn net(seq: u64, host: &str, decision: &str) -> Record {
        record(
            seq,
            EventBody::NetworkConnection {
                host: host.into(),
                port: 443,
                addr: None,
                decision: decision.into(),
                rule: if decision == "allowed" {
                    "*.example.invalid".into()
                } else {
                    "net-not-allowed".into()
                },
                reason: None,
                front_end: "http-connect".into(),
                bytes_up: 10,
                bytes_down: 90,
                duration_ms: 5,
            },
        )
    }

    pub(crate) fn ask(session: &str, id: &str, argv: &[&str]) -> Ask {
        Ask::from_request(
            session,
            &Request {
                id: id.into(),
                argv: argv.iter().map(|s| s.to_string()).collect(),
                cwd: "/w".into(),
                pid: 7,
                rules: vec!["fs-permissions".into()],
                why: Some("changes file modes".into()),
                safer: None,
                created_ms: 1,
                network: None,
            },
        )
    }

    pub(crate) fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn records_fold_into_counts_rows_and_destinations() {
        let mut s = State::new();
        s.record("s1", &decision(1, &["ls"], "allow", ""));
        s.record(
            "s1",
            &decision(2, &["chmod", "+x", "f"], "ask", "fs-permissions"),
        );
        s.record("s1", &approval(3, "r1", &["chmod", "+x", "f"], "once"));
        s.record("s1", &approval(4, "command", &["sh", "s.sh"], "once"));
        s.record(
            "s1",
            &decision(5, &["git", "push", "-f"], "block", "git-push-force"),
        );
        s.record("s1", &approval(6, "r2", &["chmod", "-x", "f"], "timeout"));
        s.record("s1", &net(7, "api.example.invalid", "allowed"));
        s.record("s1", &net(8, "api.example.invalid", "allowed"));
        s.record("s1", &net(9, "evil.example.invalid", "denied"));
        assert_eq!(
            s.counts,
            Counts {
                allowed: 1,
                asked: 1,
                blocked: 1,
                approved: 1,
                denied: 1,
            },
            "the top-level command's approval is not an answered ask"
        );
        assert_eq!(
            s.network["api.example.invalid:443"],
            Destination {
                allowed: 2,
                refused: 0,
                bytes: 200,
                rule: "*.example.invalid".into()
            }
        );
        assert_eq!(s.network["evil.example.invalid:443"].refused, 1);
        let newest = s.visible_rows().next().unwrap();
        assert_eq!(
            (newest.time.as_str(), newest.kind, newest.decision.as_str()),
            ("10:00:09", "net", "denied")
        );
        let push = s.rows.iter().find(|r| r.what == "git push -f").unwrap();
        assert_eq!(
            (push.decision.as_str(), push.rule.as_str()),
            ("block", "git-push-force")
        );
    }

    #[test]
    fn history_is_bounded() {
        let mut s = State::new();
        for i in 0..(MAX_ROWS as u64 + 10) {
            s.record("s1", &decision(i, &["ls"], "allow", ""));
        }
        assert_eq!(s.rows.len(), MAX_ROWS);
        assert_eq!(s.counts.allowed, MAX_ROWS as u64 + 10);
    }

    #[test]
    fn keys_answer_the_selected_ask() {
        let mut s = State::new();
        s.set_pending(vec![
            ask("s1", "a", &["chmod", "+x", "a"]),
            ask("s2", "b", &["chmod", "+x", "b"]),
        ]);
        assert_eq!(
            s.on_key(key(KeyCode::Char('o'))),
            Effect::Answer {
                session: "s1".into(),
                request: "a".into(),
                answer: Answer::Once
            }
        );
        s.on_key(key(KeyCode::Down));
        s.on_key(key(KeyCode::Down)); // stays on the last one
        assert_eq!(s.selected, 1);
        assert_eq!(
            s.on_key(key(KeyCode::Char('d'))),
            Effect::Answer {
                session: "s2".into(),
                request: "b".into(),
                answer: Answer::Deny
            }
        );
        s.on_key(key(KeyCode::Up));
        assert!(matches!(
            s.on_key(key(KeyCode::Char('s'))),
            Effect::Answer {
                answer: Answer::Session,
                ..
            }
        ));
        assert_eq!(s.on_key(key(KeyCode::Char('q'))), Effect::Quit);
        assert_eq!(
            s.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Effect::Quit
        );
    }

    #[test]
    fn modified_keys_answer_nothing() {
        let mut s = State::new();
        s.set_pending(vec![ask("s1", "a", &["chmod", "+x", "a"])]);
        for m in [KeyModifiers::CONTROL, KeyModifiers::ALT] {
            for c in ['o', 's', 'd', 'k', 'q'] {
                assert_eq!(s.on_key(KeyEvent::new(KeyCode::Char(c), m)), Effect::None);
            }
        }
        assert_eq!(s.asks().len(), 1, "not skipped either");
        // Shift is how `O` is typed; it is not `o` either.
        assert_eq!(
            s.on_key(KeyEvent::new(KeyCode::Char('O'), KeyModifiers::SHIFT)),
            Effect::None
        );
    }

    #[test]
    fn an_answered_ask_disappears_and_a_late_one_says_so() {
        let mut s = State::new();
        s.set_pending(vec![
            ask("s1", "a", &["chmod", "+x", "a"]),
            ask("s1", "b", &["chmod", "+x", "b"]),
        ]);
        s.answered("s1", "a", Answer::Once, Ok(()));
        assert_eq!(
            s.message.as_deref(),
            Some("answered allow once: chmod +x a")
        );
        let ids: Vec<&str> = s.asks().iter().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["b"]);
        s.answered(
            "s1",
            "b",
            Answer::Deny,
            Err("request b is no longer pending".into()),
        );
        assert_eq!(
            s.message.as_deref(),
            Some("too late for chmod +x b: request b is no longer pending")
        );
        assert!(s.asks().is_empty());
        assert_eq!(
            s.on_key(key(KeyCode::Char('o'))),
            Effect::None,
            "nothing to answer"
        );
        assert_eq!(s.message.as_deref(), Some("no ask to answer"));
        // The queue dropped them: forgotten.
        assert!(s.set_pending(vec![]));
        assert!(!s.set_pending(vec![]), "no change");
        assert!(s.answered.is_empty());
    }

    #[test]
    fn skip_moves_an_ask_last() {
        let mut s = State::new();
        s.set_pending(vec![
            ask("s1", "a", &["chmod", "+x", "a"]),
            ask("s1", "b", &["chmod", "+x", "b"]),
        ]);
        s.on_key(key(KeyCode::Char('k')));
        let ids: Vec<&str> = s.asks().iter().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["b", "a"]);
        assert!(s.is_skipped(s.asks()[1]));
        assert!(matches!(
            s.on_key(key(KeyCode::Char('o'))),
            Effect::Answer { request, .. } if request == "b"
        ));
    }

    #[test]
    fn slash_types_a_filter_and_keys_stop_being_commands() {
        let mut s = State::new();
        s.record("s1", &decision(1, &["ls"], "allow", ""));
        s.record(
            "s1",
            &decision(2, &["git", "push", "-f"], "block", "git-push-force"),
        );
        s.set_pending(vec![
            ask("s1", "a", &["chmod", "+x", "a"]),
            ask("s1", "b", &["rm", "-r", "b"]),
        ]);
        s.on_key(key(KeyCode::Char('/')));
        assert_eq!(s.mode, Mode::Filtering);
        for c in "PUSH".chars() {
            // `q`, `o`, `d` and the rest are text here, not commands.
            assert_eq!(s.on_key(key(KeyCode::Char(c))), Effect::None);
        }
        assert_eq!(s.filter, "PUSH");
        let rows: Vec<&str> = s.visible_rows().map(|r| r.what.as_str()).collect();
        assert_eq!(rows, ["git push -f"], "case-insensitive");
        assert!(s.asks().is_empty());
        for _ in 0..4 {
            s.on_key(key(KeyCode::Backspace));
        }
        for c in "rm -".chars() {
            s.on_key(key(KeyCode::Char(c)));
        }
        s.on_key(key(KeyCode::Enter));
        assert_eq!(s.mode, Mode::Normal);
        assert_eq!(s.asks().len(), 1);
        assert!(matches!(
            s.on_key(key(KeyCode::Char('d'))),
            Effect::Answer { request, .. } if request == "b"
        ));
        s.on_key(key(KeyCode::Esc));
        assert_eq!(s.filter, "");
        assert_eq!(s.asks().len(), 2);
        assert_eq!(s.visible_rows().count(), 2);
    }

    #[test]
    fn hostile_strings_are_stored_inert() {
        let mut s = State::new();
        s.record(
            "s1",
            &decision(1, &["echo", "\x1b[2J<script>"], "ask", "x\x1b]0;t\x07"),
        );
        s.set_pending(vec![ask("s\x1b[H", "a", &["rm", "\x1b[31m"])]);
        let row = &s.rows[0];
        assert_eq!(row.what, "echo ␛[2J<script>");
        assert_eq!(row.rule, "x␛]0;t␇");
        assert_eq!(s.asks()[0].command, "rm ␛[31m");
        assert_eq!(s.asks()[0].session, "s␛[H");
    }
}
