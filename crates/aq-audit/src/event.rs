//! The event schema: one JSON object per line.
//!
//! Every line carries the same envelope (`seq`, `ts`, `session`, `prev`) and
//! an `event` tag naming its kind; the kind's own fields sit beside them in
//! the same object:
//!
//! ```json
//! {"seq":2,"ts":"2025-01-01T10:00:01Z","session":"s1","prev":"9f86…","event":"command_decision","argv":["git","push","--force"],…}
//! ```
//!
//! Readers must accept kinds they do not know (later versions add sandbox
//! and network events): [`Record::parse`] keeps such a line as raw JSON in
//! [`Record::Other`] instead of failing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `prev` of the first event of a file: 64 zeros.
pub const GENESIS_PREV: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One audit event, as written on one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Position in the file, counting from 1: event `n` is line `n`.
    pub seq: u64,
    /// RFC 3339 UTC time, given by the caller (this crate reads no clock).
    pub ts: String,
    /// The session id; one file holds one session.
    pub session: String,
    /// Hex SHA-256 of the previous line's bytes without its newline,
    /// [`GENESIS_PREV`] for the first line.
    pub prev: String,
    /// What happened.
    #[serde(flatten)]
    pub body: EventBody,
}

/// How the exec guard identified the file that ran, on a `command_decision`
/// of source `exec-guard` where there is more to say than its name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecIdentity {
    /// How the program's name (`argv[0]` of the event) was found: `name`,
    /// `inode` (a hard link), `content` (an exact copy), `build-id` or
    /// `code` (an altered copy: the same ELF build id, or the same code as
    /// the tool), `applet` (a busybox applet).
    pub how: String,
    /// Where the file is, when the session can write there: `workspace`,
    /// `temporary directory`, `memfd`, `deleted file`, `changed during the
    /// session`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
    /// What the guard made of it: `unknown-native-in-writable-place` (it
    /// asks), `altered-copy` (judged as the tool, and it asks),
    /// `trusted-build-output` (a `trusted_exec` entry covers it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
    /// The `trusted_exec` entry that covers the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted_by: Option<String>,
}

/// What a session was allowed, as `session_start` records it: names and
/// paths only, never a variable's value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionGrants {
    /// The agent preset in force (`claude`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Variables passed to the command by name (values never logged).
    #[serde(default)]
    pub env_passed: Vec<String>,
    /// Variables `aq` set for it.
    #[serde(default)]
    pub env_set: Vec<String>,
    /// Keys kept outside the sandbox (served by the key proxy).
    #[serde(default)]
    pub keys_outside: Vec<String>,
    /// Keys passed to the agent itself (removed from what it runs).
    #[serde(default)]
    pub keys_passed: Vec<String>,
    /// Writable paths besides the workspace.
    #[serde(default)]
    pub writable: Vec<String>,
    /// Read-only paths.
    #[serde(default)]
    pub read_only: Vec<String>,
    /// The network allowlist (empty: none, or no broker).
    #[serde(default)]
    pub network_allow: Vec<String>,
    /// The model API the key proxy serves, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_api: Option<String>,
    /// Model endpoints the agent's own configuration names, each with how
    /// it is reached: `http://127.0.0.1:4000/v1 (~/.codex/config.toml
    /// model_providers.local.base_url): bridged to the host's 127.0.0.1:4000`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_endpoints: Vec<String>,
}

/// What an event records; serialized as `"event": "<snake_case kind>"` plus
/// the variant's fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventBody {
    /// `aq run` started a session.
    SessionStart {
        /// Version of the `aq` that wrote the log.
        aq_version: String,
        /// The workspace directory the agent works in.
        workspace: String,
        /// The policy profile in force (e.g. `default`, `strict`).
        profile: String,
        /// Digest of the effective policy, so a report can tell which rules applied.
        policy_digest: String,
        /// The agent command line `aq run` started (redacted on append).
        command: Vec<String>,
        /// Pid of the `aq run` process.
        pid: u32,
        /// The protection layers active, e.g. `shims`, `landlock`, `seccomp`.
        layers: Vec<String>,
        /// What the session was allowed beyond the profile's baseline (the
        /// agent preset's grants); absent in logs of older versions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grants: Option<SessionGrants>,
        /// `learn` when asks ran without waiting (`aq run --learn`);
        /// absent when asks waited as usual, and in older logs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<String>,
    },
    /// A command was checked against the policy.
    CommandDecision {
        /// The command (redacted on append).
        argv: Vec<String>,
        /// Its working directory.
        cwd: String,
        /// Pid of the process that asked (the shim, hook or exec guard).
        pid: u32,
        /// Its parent pid: usually the agent's shell.
        ppid: u32,
        /// `allow`, `ask` or `block` (the lowercase name of `aq_policy::Decision`).
        decision: String,
        /// Ids of the rules that matched, strictest first.
        rules: Vec<String>,
        /// Why the command is risky (redacted on append).
        why: Option<String>,
        /// A safer command to use instead (redacted on append).
        safer: Option<String>,
        /// Which layer saw it: `shim`, `run`, `hook` or `exec-guard`.
        source: String,
        /// The file that ran, when the exec guard saw it (symlinks resolved;
        /// `argv[0]` then names the tool it was identified as).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exe: Option<String>,
        /// What the deciding rule found, in the words of the line (`sh`
        /// runs code from `curl ...`): the part that decided, where the
        /// argv is an agent's long wrapper script (redacted on append).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        found: Option<String>,
        /// How the exec guard identified the file (exec guard only, and
        /// only when there is more to say than its name).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        identity: Option<ExecIdentity>,
    },
    /// A person (or the lack of one) answered an `ask`.
    Approval {
        /// The approval request id.
        request: String,
        /// The command that was asked about (redacted on append).
        argv: Vec<String>,
        /// `once`, `session`, `deny`, `timeout`, `no-approver`,
        /// `headless`, `granted`, or `learn` (let through by learn mode).
        answer: String,
        /// Who answered and how, e.g. `aq approve (tty /dev/pts/3, uid 1000)`.
        by: String,
    },
    /// A command that was let through finished.
    CommandExit {
        /// The command (redacted on append).
        argv: Vec<String>,
        /// Its exit code, if it exited.
        exit_code: Option<i32>,
        /// The signal that killed it, if one did.
        signal: Option<i32>,
        /// Wall time from start to exit.
        duration_ms: u64,
    },
    /// The network broker allowed, refused or failed a connection.
    NetworkConnection {
        /// The host as requested (normalised when it could be).
        host: String,
        /// The requested port.
        port: u16,
        /// The address connected to (resolved once, or pinned), if any.
        addr: Option<String>,
        /// `allowed`, `denied` or `failed`.
        decision: String,
        /// The allow entry that allowed it, or the refusal's rule id.
        rule: String,
        /// Why it was refused or failed.
        reason: Option<String>,
        /// `http-connect`, `http-forward` or `socks5`.
        front_end: String,
        /// Bytes sent out.
        bytes_up: u64,
        /// Bytes received.
        bytes_down: u64,
        /// From the request to the end of the connection.
        duration_ms: u64,
    },
    /// `aq preflight` found something in the workspace before the session ran.
    PreflightFinding {
        /// The detector's stable id.
        id: String,
        /// `low`, `medium`, `high` or `critical`.
        severity: String,
        /// The file, relative to the workspace.
        path: String,
        /// Its line (0: the whole file).
        line: usize,
        /// What was found (a secret is already masked).
        title: String,
    },
    /// A tool call an MCP client sent to a server run by `aq mcp run`.
    McpToolCall {
        /// The server's name (`--name`, else its program).
        server: String,
        /// The tool called.
        tool: String,
        /// Its arguments as JSON text (redacted on append).
        arguments: String,
        /// `allow` (passed on) or `block` (refused by the policy).
        decision: String,
        /// The policy entry that refused it.
        rule: Option<String>,
    },
    /// The seccomp filter of the sandbox refused a system call (answered,
    /// and reported, by the exec guard's notifier).
    SyscallRefused {
        /// The process that made it (the host's pid).
        pid: u32,
        /// The call's name (`bpf`, `ptrace`).
        syscall: String,
        /// The errno it got (`EPERM`).
        errno: String,
    },
    /// Landlock refused a file access of the command (read from the
    /// kernel's audit log, where the kernel reports it).
    FileRefused {
        /// The path the kernel names (for a file created: its directory).
        path: String,
        /// The refused rights, as the kernel names them (`fs.write_file`).
        access: String,
    },
    /// A git file the session wrote would make git run a program later,
    /// outside aq (a submodule's `core.fsmonitor`, a nested repository's
    /// hook, a `commondir`): found when the session ended, or by the next
    /// session in the workspace when this one's supervisor was killed, and
    /// put aside.
    GitChangeRefused {
        /// The file, relative to the workspace (absolute when outside it).
        path: String,
        /// What it is to git: `config`, `hook`, `commondir`, `attributes`,
        /// `gitfile`.
        kind: String,
        /// What in it runs: `core.fsmonitor`, `hook pre-commit`, `commondir`.
        what: String,
        /// What it would run, or where it points.
        runs: String,
        /// `restored` (the original content is back), `removed` (the file
        /// was new and is gone), or `reported` (outside what the session
        /// could write: left as it is).
        action: String,
        /// Where the session's version is kept (under the session directory).
        quarantined: Option<String>,
    },
    /// aq took a checkpoint of the workspace (docs/undo.md): `aq undo --to
    /// ID` puts the workspace back as it was then.
    Checkpoint {
        /// The checkpoint (empty when none could be taken: see `error`).
        id: String,
        /// `session-start`, `before-command`, `before-undo`, `session-end`.
        reason: String,
        /// The command that came next.
        command: Option<String>,
        /// Files added, modified and deleted since the checkpoint before.
        added: u32,
        /// Files modified since the checkpoint before.
        modified: u32,
        /// Files deleted since the checkpoint before.
        deleted: u32,
        /// Files not kept (over the size limit, unreadable).
        not_kept: Vec<String>,
        /// Why no checkpoint was taken.
        error: Option<String>,
    },
    /// The agent exited and `aq run` closed the session.
    SessionEnd {
        /// The agent's exit code, if it exited.
        exit_code: Option<i32>,
        /// Wall time of the whole session.
        duration_ms: u64,
    },
    /// How the live export of this log (`[audit] export`) went; written
    /// after `session_end`, once per target.
    Export {
        /// The format and endpoint (`otlp http://127.0.0.1:4318/v1/logs`).
        target: String,
        /// Events the collector accepted.
        sent: u64,
        /// Events that never got there: the queue was full, or the
        /// collector was still unreachable when the session ended.
        dropped: u64,
        /// The last failure, if any.
        error: Option<String>,
    },
}

impl EventBody {
    /// The `event` tags this version knows, in declaration order.
    pub(crate) const KINDS: [&'static str; 13] = [
        "session_start",
        "command_decision",
        "approval",
        "command_exit",
        "network_connection",
        "preflight_finding",
        "mcp_tool_call",
        "syscall_refused",
        "file_refused",
        "git_change_refused",
        "checkpoint",
        "session_end",
        "export",
    ];

    /// The `event` tag of this body.
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::SessionStart { .. } => "session_start",
            EventBody::CommandDecision { .. } => "command_decision",
            EventBody::Approval { .. } => "approval",
            EventBody::CommandExit { .. } => "command_exit",
            EventBody::NetworkConnection { .. } => "network_connection",
            EventBody::PreflightFinding { .. } => "preflight_finding",
            EventBody::McpToolCall { .. } => "mcp_tool_call",
            EventBody::SyscallRefused { .. } => "syscall_refused",
            EventBody::FileRefused { .. } => "file_refused",
            EventBody::GitChangeRefused { .. } => "git_change_refused",
            EventBody::Checkpoint { .. } => "checkpoint",
            EventBody::SessionEnd { .. } => "session_end",
            EventBody::Export { .. } => "export",
        }
    }

    /// The command line the event is about, if any.
    pub fn argv(&self) -> Option<&[String]> {
        match self {
            EventBody::SessionStart { command, .. } => Some(command),
            EventBody::CommandDecision { argv, .. }
            | EventBody::Approval { argv, .. }
            | EventBody::CommandExit { argv, .. } => Some(argv),
            EventBody::NetworkConnection { .. }
            | EventBody::PreflightFinding { .. }
            | EventBody::McpToolCall { .. }
            | EventBody::SyscallRefused { .. }
            | EventBody::FileRefused { .. }
            | EventBody::GitChangeRefused { .. }
            | EventBody::Checkpoint { .. }
            | EventBody::SessionEnd { .. }
            | EventBody::Export { .. } => None,
        }
    }
}

/// One line of a log as read back: an event of a known kind, or any other
/// JSON object (a kind added by a later version), kept as is.
#[derive(Debug, Clone, PartialEq)]
// Records are read and folded one at a time; boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Record {
    /// A known kind.
    Event(Event),
    /// A JSON object whose `event` tag this version does not know.
    Other(Value),
}

impl Record {
    /// Parses one line (without its newline).
    ///
    /// Fails when the line is not a JSON object, or when it names a known
    /// kind but lacks that kind's fields. An unknown or missing `event` tag
    /// gives [`Record::Other`].
    pub fn parse(line: &str) -> Result<Record, serde_json::Error> {
        let value: Value = serde_json::from_str(line)?;
        if !value.is_object() {
            return Err(serde::de::Error::custom("an event must be a JSON object"));
        }
        let known = value
            .get("event")
            .and_then(Value::as_str)
            .is_some_and(|kind| EventBody::KINDS.contains(&kind));
        if known {
            serde_json::from_value(value).map(Record::Event)
        } else {
            Ok(Record::Other(value))
        }
    }

    /// The `event` tag, `"?"` when an unknown line has none.
    pub fn kind(&self) -> &str {
        match self {
            Record::Event(event) => event.body.kind(),
            Record::Other(value) => value.get("event").and_then(Value::as_str).unwrap_or("?"),
        }
    }

    /// The `seq` field, if present.
    pub fn seq(&self) -> Option<u64> {
        match self {
            Record::Event(event) => Some(event.seq),
            Record::Other(value) => value.get("seq").and_then(Value::as_u64),
        }
    }

    /// The `ts` field, if present.
    pub fn ts(&self) -> Option<&str> {
        match self {
            Record::Event(event) => Some(&event.ts),
            Record::Other(value) => value.get("ts").and_then(Value::as_str),
        }
    }

    /// The `session` field, if present.
    pub fn session(&self) -> Option<&str> {
        match self {
            Record::Event(event) => Some(&event.session),
            Record::Other(value) => value.get("session").and_then(Value::as_str),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_bodies() -> Vec<EventBody> {
        vec![
            EventBody::SessionStart {
                aq_version: "0.1.0".into(),
                workspace: "/home/u/proj".into(),
                profile: "default".into(),
                policy_digest: "sha256:abc".into(),
                command: vec!["claude".into()],
                pid: 10,
                layers: vec!["shims".into()],
                grants: Some(SessionGrants {
                    agent: Some("claude".into()),
                    env_passed: vec!["ANTHROPIC_BASE_URL".into()],
                    keys_outside: vec!["ANTHROPIC_API_KEY".into()],
                    writable: vec!["/home/u/.claude/projects".into()],
                    ..SessionGrants::default()
                }),
                mode: None,
            },
            EventBody::CommandDecision {
                argv: vec!["git".into(), "push".into(), "--force".into()],
                cwd: "/home/u/proj".into(),
                pid: 11,
                ppid: 10,
                decision: "block".into(),
                rules: vec!["git-push-force".into()],
                why: Some("rewrites shared history".into()),
                safer: Some("git push --force-with-lease".into()),
                source: "shim".into(),
                exe: None,
                found: None,
                identity: None,
            },
            EventBody::Approval {
                request: "r1".into(),
                argv: vec!["npm".into(), "publish".into()],
                answer: "once".into(),
                by: "aq approve (tty /dev/pts/3, uid 1000)".into(),
            },
            EventBody::CommandExit {
                argv: vec!["ls".into()],
                exit_code: Some(0),
                signal: None,
                duration_ms: 3,
            },
            EventBody::NetworkConnection {
                host: "registry.npmjs.org".into(),
                port: 443,
                addr: Some("203.0.113.7:443".into()),
                decision: "allowed".into(),
                rule: "*.npmjs.org".into(),
                reason: None,
                front_end: "http-connect".into(),
                bytes_up: 512,
                bytes_down: 4096,
                duration_ms: 120,
            },
            EventBody::PreflightFinding {
                id: "npm-lifecycle-script".into(),
                severity: "critical".into(),
                path: "package.json".into(),
                line: 5,
                title: "postinstall pipes a download into a shell".into(),
            },
            EventBody::McpToolCall {
                server: "files".into(),
                tool: "read_file".into(),
                arguments: "{\"path\":\"~/.ssh/id_rsa\"}".into(),
                decision: "allow".into(),
                rule: None,
            },
            EventBody::SyscallRefused {
                pid: 42,
                syscall: "bpf".into(),
                errno: "EPERM".into(),
            },
            EventBody::FileRefused {
                path: "/etc".into(),
                access: "fs.make_reg".into(),
            },
            EventBody::GitChangeRefused {
                path: ".git/modules/a/config".into(),
                kind: "config".into(),
                what: "core.fsmonitor".into(),
                runs: "touch /tmp/x".into(),
                action: "restored".into(),
                quarantined: Some("/s/git-quarantine/1-config".into()),
            },
            EventBody::Checkpoint {
                id: "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
                reason: "before-command".into(),
                command: Some("rm -rf src".into()),
                added: 1,
                modified: 2,
                deleted: 0,
                not_kept: vec!["data/big.bin".into()],
                error: None,
            },
            EventBody::SessionEnd {
                exit_code: Some(0),
                duration_ms: 1000,
            },
            EventBody::Export {
                target: "otlp http://127.0.0.1:4318/v1/logs".into(),
                sent: 3,
                dropped: 2,
                error: Some("connection refused".into()),
            },
        ]
    }

    #[test]
    fn every_kind_round_trips_through_json() {
        for (i, body) in sample_bodies().into_iter().enumerate() {
            let event = Event {
                seq: i as u64 + 1,
                ts: "2025-01-01T10:00:00Z".into(),
                session: "s1".into(),
                prev: GENESIS_PREV.into(),
                body,
            };
            let line = serde_json::to_string(&event).unwrap();
            assert!(
                line.contains(&format!("\"event\":\"{}\"", event.body.kind())),
                "{line}"
            );
            assert_eq!(Record::parse(&line).unwrap(), Record::Event(event.clone()));
        }
    }

    #[test]
    fn kinds_list_matches_kind() {
        let kinds: Vec<&str> = sample_bodies().iter().map(EventBody::kind).collect();
        assert_eq!(kinds, EventBody::KINDS);
    }

    #[test]
    fn envelope_comes_first_on_the_line() {
        let event = Event {
            seq: 1,
            ts: "t".into(),
            session: "s".into(),
            prev: GENESIS_PREV.into(),
            body: EventBody::SessionEnd {
                exit_code: None,
                duration_ms: 0,
            },
        };
        let line = serde_json::to_string(&event).unwrap();
        assert!(line.starts_with("{\"seq\":1,\"ts\":\"t\",\"session\":\"s\",\"prev\":\"000"));
        assert!(line.ends_with("\"event\":\"session_end\",\"exit_code\":null,\"duration_ms\":0}"));
    }

    #[test]
    fn unknown_kind_is_kept_as_raw_json() {
        let line = r#"{"seq":7,"ts":"t","session":"s","prev":"x","event":"net_connect","host":"example.com"}"#;
        let record = Record::parse(line).unwrap();
        assert!(matches!(record, Record::Other(_)));
        assert_eq!(record.kind(), "net_connect");
        assert_eq!(record.seq(), Some(7));
        assert_eq!(record.ts(), Some("t"));
        assert_eq!(record.session(), Some("s"));
    }

    #[test]
    fn broken_lines_are_errors() {
        for line in [
            "",
            "{",
            "[1,2]",
            "42",
            r#"{"seq":1,"ts":"t","session":"s","prev":"x","event":"session_end"}"#,
        ] {
            assert!(Record::parse(line).is_err(), "{line:?} should not parse");
        }
    }
}
