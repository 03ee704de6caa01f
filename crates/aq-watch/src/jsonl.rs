//! `aq watch --json`: the followed logs as JSON lines, for programs.
//!
//! Each record is written as it was logged, one per line, flushed at once;
//! a record without a `session` field gets one (added first, the rest of
//! the line unchanged) so that lines of several sessions can be told
//! apart. Lines that are not JSON objects are skipped. Nothing here
//! answers an ask: answering needs a human at a terminal.

use std::io::Write;
use std::time::{Duration, Instant};

use aq_session::sources::{Sources, Target};

use crate::WatchError;

/// How often the logs are read.
const POLL: Duration = Duration::from_millis(100);
/// How often new sessions are looked for.
const SCAN: Duration = Duration::from_millis(500);

/// Streams the records of `target` to `out` until the one session followed
/// ended (for an id or `--latest`), or forever (every live session). A
/// reader that went away ends the stream quietly.
pub fn stream(target: Target, out: &mut impl Write) -> Result<(), WatchError> {
    let mut sources = Sources::open(target)?;
    let mut last_scan = Instant::now();
    loop {
        for line in sources.poll() {
            let Some(text) = with_session(&line.text, &line.session) else {
                continue;
            };
            let written = writeln!(out, "{text}").and_then(|()| out.flush());
            if let Err(e) = written {
                return match e.kind() {
                    std::io::ErrorKind::BrokenPipe => Ok(()),
                    _ => Err(WatchError::Write { source: e }),
                };
            }
        }
        if sources.finished() {
            return Ok(());
        }
        if last_scan.elapsed() >= SCAN {
            sources.scan();
            last_scan = Instant::now();
        }
        std::thread::sleep(POLL);
    }
}

/// `line` as it will be written: unchanged when it is a JSON object with a
/// `session` field, with `"session":ID` put first when it lacks one, `None`
/// when it is not a JSON object.
pub(crate) fn with_session(line: &str, session: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let object = value.as_object()?;
    if object.contains_key("session") {
        return Some(line.to_string());
    }
    let id = serde_json::Value::from(session).to_string();
    let rest = line.trim_start().strip_prefix('{')?;
    Some(if object.is_empty() {
        format!("{{\"session\":{id}}}")
    } else {
        format!("{{\"session\":{id},{rest}")
    })
}

#[cfg(test)]
mod tests {
    use super::with_session;

    #[test]
    fn a_record_is_kept_as_logged() {
        let line = r#"{"seq":1,"ts":"t","session":"s1","prev":"x","event":"note"}"#;
        assert_eq!(with_session(line, "other").as_deref(), Some(line));
    }

    #[test]
    fn a_missing_session_is_added_first() {
        let line = r#"{"seq":2, "event":"x\u001b[2J"}"#;
        let out = with_session(line, "s\"1").unwrap();
        assert_eq!(out, r#"{"session":"s\"1","seq":2, "event":"x\u001b[2J"}"#);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["session"], "s\"1");
        assert_eq!(v["event"], "x\u{1b}[2J");
        assert_eq!(
            with_session("{}", "s").as_deref(),
            Some(r#"{"session":"s"}"#)
        );
        assert_eq!(
            with_session(" { } ", "s").as_deref(),
            Some(r#"{"session":"s"}"#)
        );
    }

    #[test]
    fn what_is_not_an_object_is_dropped() {
        for line in ["", "[1]", "42", "{", "not json", "\"s\""] {
            assert_eq!(with_session(line, "s"), None, "{line:?}");
        }
    }
}
