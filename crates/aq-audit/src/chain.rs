//! The hash chain that makes a log tamper-evident, and its verification.
//!
//! Each line's `prev` is the hex SHA-256 of the previous line's bytes
//! (without the newline), [`GENESIS_PREV`] for line 1, and `seq` equals the
//! line number. So changing, removing, inserting or reordering a line breaks
//! the link *into the next line*, and [`verify`] names the first line whose
//! own checks fail:
//!
//! | what was done                    | line named                        |
//! |----------------------------------|-----------------------------------|
//! | a byte of line 5 changed         | 5 if it is no longer a valid event line, else 6 (its `prev` no longer matches) |
//! | line 5 removed                   | 5 (the old line 6 now there has `seq` 6) |
//! | a line inserted before line 5    | 5                                 |
//! | lines cut from the start         | 1 (`seq` is not 1)                |
//!
//! Limits: the chain lives in the file alone, so an edit of the *last* line,
//! a cut of the last lines, or a whole-file rewrite with fresh hashes is not
//! detected by the chain itself; anchor the last hash elsewhere (e.g. print
//! it at session end) to catch those.
//!
//! Pure: reads from any [`BufRead`].

use std::fmt;
use std::io::{self, BufRead};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::event::GENESIS_PREV;

/// Hex SHA-256 of one line's bytes, without its newline.
pub fn hash_line(line: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(line);
    let mut out = String::with_capacity(64);
    for byte in digest.iter() {
        out.push(HEX[usize::from(byte >> 4)] as char);
        out.push(HEX[usize::from(byte & 0x0f)] as char);
    }
    out
}

/// The envelope fields the chain needs; every other field is ignored, so
/// event kinds this version does not know verify as well.
#[derive(Deserialize)]
pub(crate) struct ChainFields {
    pub(crate) seq: u64,
    pub(crate) prev: String,
    pub(crate) session: String,
}

/// How the id of a session seen through an agent's hook (`aq hook AGENT`)
/// starts: `hook-claude-<agent session>`.
pub const HOOK_SESSION_PREFIX: &str = "hook-";

/// What an intact chain proves of a hook session's log, in one line. Such
/// a log is written by `aq hook` as the user, with no process of aq's
/// around the agent to keep it: whoever can write the file can rewrite it
/// with fresh hashes, and the chain still verifies.
pub const HOOK_CHAIN_CAVEAT: &str = "note: a hook session's chain is not keyed: it shows damage, not tampering (a rewrite with fresh hashes verifies); the record that resists tampering is a live export (aq audit export --all --follow, docs/export.md)";

/// How a session's start record names the sandbox among its layers
/// (`layers` of `session_start`): `kernel sandbox: ...` on Linux,
/// `seatbelt sandbox: ...` on macOS.
pub const SANDBOX_LAYERS: [&str; 2] = ["kernel sandbox", "seatbelt sandbox"];

/// What an intact chain proves of the log of a session that ran without
/// aq's sandbox (`shims-only`): the programs the agent ran could write it.
pub const NO_SANDBOX_CHAIN_CAVEAT: &str = "note: this session ran without aq's sandbox, so the programs the agent ran could write its log, and the chain is not keyed: it shows damage, not tampering (a rewrite with fresh hashes verifies); the record that resists tampering is a live export (aq audit export --all --follow, docs/export.md)";

/// The outcome of [`verify`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// Complete (newline-terminated) lines in the file, all of them, also
    /// those after the first bad one.
    pub lines: u64,
    /// True when every complete line passed.
    pub ok: bool,
    /// The first line that failed, with the reason.
    pub first_bad: Option<BadLine>,
    /// The file ends with bytes after the last newline: an event torn by a
    /// writer killed mid-write. It is not counted in `lines`, does not make
    /// the report fail, and the next append removes it.
    pub torn_tail: bool,
    /// The session id of line 1.
    pub session: Option<String>,
    /// Hash of the last complete line: anchor it elsewhere to detect later
    /// edits of the end of the file.
    pub last_hash: Option<String>,
    /// Line 1 is the start of a session without aq's sandbox: no
    /// [`SANDBOX_LAYERS`] entry among its layers.
    pub without_sandbox: bool,
}

/// A line that failed verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BadLine {
    /// Line number, counting from 1.
    pub line: u64,
    /// What is wrong with it.
    pub problem: ChainProblem,
}

/// Why a line failed verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum ChainProblem {
    /// Not a JSON object with `seq`, `prev` and `session`.
    Malformed {
        /// The parser's message.
        error: String,
    },
    /// `seq` is not the line number.
    SeqMismatch {
        /// The line number.
        expected: u64,
        /// The `seq` written on the line.
        found: u64,
    },
    /// Line 1's `prev` is not [`GENESIS_PREV`].
    NotGenesis,
    /// `prev` is not the hash of the line before.
    PrevMismatch {
        /// The number of the line before, whose hash was expected.
        previous_line: u64,
    },
    /// The `session` differs from line 1's.
    SessionChanged {
        /// Line 1's session.
        expected: String,
        /// This line's session.
        found: String,
    },
}

impl fmt::Display for ChainProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainProblem::Malformed { error } => {
                write!(f, "not a valid event line ({error})")
            }
            ChainProblem::SeqMismatch { expected, found } => write!(
                f,
                "seq is {found}, expected {expected}: a line was removed, inserted or moved"
            ),
            ChainProblem::NotGenesis => write!(
                f,
                "prev of the first line is not the genesis value: lines were cut from the start"
            ),
            ChainProblem::PrevMismatch { previous_line } => write!(
                f,
                "prev does not match the hash of line {previous_line}: \
                 line {previous_line} was changed (or this line's prev was)"
            ),
            ChainProblem::SessionChanged { expected, found } => write!(
                f,
                "session is {found:?}, line 1 says {expected:?}: lines from another session"
            ),
        }
    }
}

impl fmt::Display for BadLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.problem)
    }
}

impl VerifyReport {
    /// What the report cannot promise, when the log is a hook session's
    /// ([`HOOK_CHAIN_CAVEAT`]).
    pub fn caveat(&self) -> Option<&'static str> {
        if self
            .session
            .as_deref()
            .is_some_and(|s| s.starts_with(HOOK_SESSION_PREFIX))
        {
            return Some(HOOK_CHAIN_CAVEAT);
        }
        self.without_sandbox.then_some(NO_SANDBOX_CHAIN_CAVEAT)
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.first_bad {
            Some(bad) => write!(f, "chain broken at {bad} ({} lines)", self.lines)?,
            None => write!(f, "chain intact: {} lines", self.lines)?,
        }
        if self.torn_tail {
            write!(
                f,
                "; the file ends with a torn event (a writer was killed), dropped at the next append"
            )?;
        }
        Ok(())
    }
}

/// Checks every line of a log: valid JSON with `seq` equal to the line
/// number, `prev` equal to the hash of the line before, and the same
/// `session` throughout. Stops checking at the first bad line but goes on
/// counting lines. Fails only on a read error.
pub fn verify(mut reader: impl BufRead) -> io::Result<VerifyReport> {
    let mut report = VerifyReport {
        lines: 0,
        ok: true,
        first_bad: None,
        torn_tail: false,
        session: None,
        last_hash: None,
        without_sandbox: false,
    };
    let mut buf = Vec::new();
    let mut prev_hash = GENESIS_PREV.to_string();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        let Some(line) = buf.strip_suffix(b"\n") else {
            report.torn_tail = true;
            break;
        };
        report.lines += 1;
        if report.first_bad.is_some() {
            continue;
        }
        let number = report.lines;
        if number == 1 {
            report.without_sandbox = started_without_sandbox(line);
        }
        let hash = hash_line(line);
        if let Some(problem) = check_line(line, number, &prev_hash, &mut report.session) {
            report.ok = false;
            report.first_bad = Some(BadLine {
                line: number,
                problem,
            });
        }
        prev_hash = hash;
    }
    if report.ok && report.lines > 0 {
        report.last_hash = Some(prev_hash);
    }
    Ok(report)
}

/// Whether `line` is a `session_start` whose layers name no sandbox.
fn started_without_sandbox(line: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Start {
        event: String,
        #[serde(default)]
        layers: Vec<String>,
    }
    serde_json::from_slice::<Start>(line).is_ok_and(|s| {
        s.event == "session_start"
            && !s
                .layers
                .iter()
                .any(|l| SANDBOX_LAYERS.iter().any(|p| l.starts_with(p)))
    })
}

fn check_line(
    line: &[u8],
    number: u64,
    prev_hash: &str,
    session: &mut Option<String>,
) -> Option<ChainProblem> {
    let fields: ChainFields = match serde_json::from_slice(line) {
        Ok(fields) => fields,
        Err(err) => {
            return Some(ChainProblem::Malformed {
                error: err.to_string(),
            });
        }
    };
    if fields.seq != number {
        return Some(ChainProblem::SeqMismatch {
            expected: number,
            found: fields.seq,
        });
    }
    if fields.prev != prev_hash {
        return Some(if number == 1 {
            ChainProblem::NotGenesis
        } else {
            ChainProblem::PrevMismatch {
                previous_line: number - 1,
            }
        });
    }
    match session {
        None => *session = Some(fields.session),
        Some(expected) if *expected != fields.session => {
            return Some(ChainProblem::SessionChanged {
                expected: expected.clone(),
                found: fields.session,
            });
        }
        Some(_) => {}
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a valid chained log of `n` minimal lines.
    fn chained(n: u64) -> Vec<String> {
        let mut lines = Vec::new();
        let mut prev = GENESIS_PREV.to_string();
        for seq in 1..=n {
            let line = format!(
                r#"{{"seq":{seq},"ts":"t","session":"s","prev":"{prev}","event":"session_end","exit_code":0,"duration_ms":{seq}}}"#
            );
            prev = hash_line(line.as_bytes());
            lines.push(line);
        }
        lines
    }

    fn file(lines: &[String]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    fn bad_line(text: &str) -> Option<(u64, ChainProblem)> {
        let report = verify(text.as_bytes()).unwrap();
        assert_eq!(report.ok, report.first_bad.is_none());
        report.first_bad.map(|bad| (bad.line, bad.problem))
    }

    #[test]
    fn hash_line_is_hex_sha256() {
        assert_eq!(
            hash_line(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(hash_line(b"").len(), 64);
    }

    #[test]
    fn intact_chain_verifies() {
        let lines = chained(10);
        let report = verify(file(&lines).as_bytes()).unwrap();
        assert!(report.ok, "{report}");
        assert_eq!(report.lines, 10);
        assert_eq!(report.session.as_deref(), Some("s"));
        assert_eq!(report.last_hash, Some(hash_line(lines[9].as_bytes())));
        assert!(!report.torn_tail);
    }

    /// A hook session's log verifies like any other, and the report says
    /// what that does not prove; an `aq run` session's says nothing more.
    #[test]
    fn a_hook_sessions_report_says_its_chain_is_not_keyed() {
        let lines: Vec<String> = chained(3)
            .iter()
            .map(|l| l.replace("\"session\":\"s\"", "\"session\":\"hook-claude-x\""))
            .collect();
        // Rechained with the new session name: what a rewrite does.
        let mut prev = GENESIS_PREV.to_string();
        let lines: Vec<String> = lines
            .into_iter()
            .map(|l| {
                let (head, tail) = l.split_once("\"prev\":\"").unwrap();
                let tail = &tail[tail.find('"').unwrap()..];
                let line = format!("{head}\"prev\":\"{prev}{tail}");
                prev = hash_line(line.as_bytes());
                line
            })
            .collect();
        let report = verify(file(&lines).as_bytes()).unwrap();
        assert!(report.ok, "{report}");
        assert_eq!(report.caveat(), Some(HOOK_CHAIN_CAVEAT));
        assert!(HOOK_CHAIN_CAVEAT.contains("not keyed") && HOOK_CHAIN_CAVEAT.contains("export"));
        let run = verify(file(&chained(3)).as_bytes()).unwrap();
        assert_eq!(run.caveat(), None);
    }

    /// A session that started without aq's sandbox (no sandbox layer in
    /// its `session_start`) gets the caveat; one with it does not.
    #[test]
    fn a_session_without_the_sandbox_says_its_log_was_within_reach() {
        let start = |layers: &str| {
            let line = format!(
                r#"{{"seq":1,"ts":"t","session":"s","prev":"{GENESIS_PREV}","event":"session_start","layers":{layers}}}"#
            );
            verify(file(&[line]).as_bytes()).unwrap()
        };
        let shims = start(r#"["shims (51)"]"#);
        assert!(shims.ok, "{shims}");
        assert_eq!(shims.caveat(), Some(NO_SANDBOX_CHAIN_CAVEAT));
        let kernel = start(r#"["kernel sandbox: namespaces user", "network off"]"#);
        assert_eq!(kernel.caveat(), None);
        let seatbelt = start(r#"["shims (3)", "seatbelt sandbox: files"]"#);
        assert_eq!(seatbelt.caveat(), None);
    }

    #[test]
    fn empty_file_verifies() {
        let report = verify(&b""[..]).unwrap();
        assert!(report.ok);
        assert_eq!(report.lines, 0);
    }

    #[test]
    fn changed_value_is_named_by_the_next_line() {
        let mut lines = chained(10);
        lines[4] = lines[4].replace("\"duration_ms\":5", "\"duration_ms\":6");
        assert_eq!(
            bad_line(&file(&lines)),
            Some((6, ChainProblem::PrevMismatch { previous_line: 5 }))
        );
    }

    #[test]
    fn line_made_invalid_is_named_itself() {
        let mut lines = chained(10);
        lines[4] = lines[4].replacen('{', "[", 1);
        let (line, problem) = bad_line(&file(&lines)).unwrap();
        assert_eq!(line, 5);
        assert!(matches!(problem, ChainProblem::Malformed { .. }));
    }

    #[test]
    fn removed_line_is_named_at_its_place() {
        let mut lines = chained(10);
        lines.remove(4);
        assert_eq!(
            bad_line(&file(&lines)),
            Some((
                5,
                ChainProblem::SeqMismatch {
                    expected: 5,
                    found: 6
                }
            ))
        );
    }

    #[test]
    fn swapped_lines_are_caught() {
        let mut lines = chained(10);
        lines.swap(3, 4);
        assert_eq!(bad_line(&file(&lines)).map(|(line, _)| line), Some(4));
    }

    #[test]
    fn cut_start_is_caught_at_line_one() {
        let lines = chained(10);
        assert_eq!(
            bad_line(&file(&lines[3..])),
            Some((
                1,
                ChainProblem::SeqMismatch {
                    expected: 1,
                    found: 4
                }
            ))
        );
    }

    #[test]
    fn forged_first_prev_is_caught() {
        let mut lines = chained(3);
        lines[0] = lines[0].replace(GENESIS_PREV, &"1".repeat(64));
        assert_eq!(bad_line(&file(&lines)), Some((1, ChainProblem::NotGenesis)));
    }

    #[test]
    fn other_session_is_caught() {
        let mut lines = chained(2);
        let third = format!(
            r#"{{"seq":3,"ts":"t","session":"other","prev":"{}","event":"x"}}"#,
            hash_line(lines[1].as_bytes())
        );
        lines.push(third);
        let (line, problem) = bad_line(&file(&lines)).unwrap();
        assert_eq!(line, 3);
        assert!(matches!(problem, ChainProblem::SessionChanged { .. }));
    }

    #[test]
    fn non_json_line_is_named() {
        let mut lines = chained(4);
        lines.insert(2, "hello".to_string());
        let (line, problem) = bad_line(&file(&lines)).unwrap();
        assert_eq!(line, 3);
        assert!(matches!(problem, ChainProblem::Malformed { .. }));
        let report = verify(file(&lines).as_bytes()).unwrap();
        assert_eq!(report.lines, 5, "lines after the bad one are still counted");
        assert!(report.to_string().contains("line 3"), "{report}");
    }

    #[test]
    fn unknown_event_kinds_verify() {
        let line = format!(
            r#"{{"seq":1,"ts":"t","session":"s","prev":"{GENESIS_PREV}","event":"net_connect","host":"h"}}"#
        );
        assert_eq!(bad_line(&format!("{line}\n")), None);
    }

    #[test]
    fn torn_tail_is_reported_but_not_fatal() {
        let lines = chained(3);
        let text = format!("{}{{\"seq\":4,\"ts", file(&lines));
        let report = verify(text.as_bytes()).unwrap();
        assert!(report.ok);
        assert!(report.torn_tail);
        assert_eq!(report.lines, 3);
        assert!(report.to_string().contains("torn"), "{report}");
    }
}
