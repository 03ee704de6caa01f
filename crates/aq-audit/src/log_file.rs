//! Appending events to a session's log file: the one module of this crate
//! that does I/O.
//!
//! Many processes append to one file at once (every shimmed command runs a
//! short-lived `aq` that logs its decision), and any of them may be killed at
//! any moment. [`AuditLog::append`] therefore works in this order, each step
//! for a reason:
//!
//! 1. Redact argv, `why` and `safer` (before anything is hashed or written).
//! 2. Lock: a mutex for threads sharing this `AuditLog` (they share one open
//!    file description, on which `flock` would not exclude them), then an
//!    exclusive `flock` on the file for other `AuditLog`s and processes.
//!    Holding it across steps 3–5 makes read-last-line-then-write atomic, so
//!    the chain stays linear.
//! 3. Read the tail, at most a few KiB (more only if the last line is longer):
//!    the cost does not grow with the file.
//! 4. Repair a torn tail: if the file does not end with `\n`, a writer died
//!    mid-write; truncate the file back to just after the last `\n`. **That
//!    torn event is dropped**; it was never complete, so no later line points
//!    at it.
//! 5. Write the new line, newline included, with one `write` call (the file is
//!    opened `O_APPEND`); [`AuditLog::append_all`] writes several lines in
//!    that one call. If the write fails part-way, truncate back.
//! 6. Unlock (the guard's `Drop`, also on error).
//!
//! No `fsync`: a killed process loses nothing that was written; a power loss
//! may lose the last events, which `verify` then cannot tell from a cut.
//!
//! The file is created with mode `0600`: argv are redacted, but paths and
//! command names are still nobody else's business.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustix::fs::{FlockOperation, flock};

use crate::chain::{ChainFields, hash_line};
use crate::error::LastLineError;
use crate::event::{Event, EventBody, GENESIS_PREV};
use crate::redact::{redact, redact_argv};

/// How much of the end of the file a first read looks at; doubled until the
/// whole last line is in view.
const TAIL_WINDOW: u64 = 4096;

/// An open session log, ready to append to. Cheap to keep open for the
/// whole life of a process; may be shared between threads.
#[derive(Debug)]
pub struct AuditLog {
    file: File,
    path: PathBuf,
    /// Serializes threads of this process, see the module docs (step 2).
    appending: Mutex<()>,
}

impl AuditLog {
    /// Opens (creating with mode `0600` if needed) the log at `path` for
    /// appending. Does not lock and does not read: that happens per append.
    pub fn open(path: impl AsRef<Path>) -> io::Result<AuditLog> {
        let path = path.as_ref();
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)
            .map_err(|err| with_path(err, "open audit log", path))?;
        Ok(AuditLog {
            file,
            path: path.to_path_buf(),
            appending: Mutex::new(()),
        })
    }

    /// The path the log was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event: redacts it, chains it to the last line (`seq` + 1,
    /// `prev` = hash of that line), writes it as one line and returns it as
    /// written. `ts` is the caller's RFC 3339 UTC time.
    ///
    /// Fails if the file cannot be locked, read or written, if its last line
    /// is not a valid event (the chain cannot be continued: run `aq audit
    /// verify`), or if that line belongs to another session.
    pub fn append(&self, body: EventBody, ts: String, session: &str) -> io::Result<Event> {
        let mut events = self.append_all(vec![(body, ts)], session)?;
        events
            .pop()
            .ok_or_else(|| io::Error::other("no event was appended"))
    }

    /// Appends several events in order, as [`AuditLog::append`] does one,
    /// under one lock, one read of the tail and one `write`: a background
    /// writer that fell behind catches up at the cost of one append. Each
    /// item is a body and its time. Nothing is written if any part fails.
    pub fn append_all(
        &self,
        items: Vec<(EventBody, String)>,
        session: &str,
    ) -> io::Result<Vec<Event>> {
        let items: Vec<(EventBody, String)> = items
            .into_iter()
            .map(|(b, ts)| (redact_body(b), ts))
            .collect();
        let _threads = self
            .appending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let _lock = FileLock::exclusive(&self.file)
            .map_err(|err| with_path(err, "lock audit log", &self.path))?;

        let tail = read_tail(&self.file)
            .map_err(|err| with_path(err, "read the end of audit log", &self.path))?;
        if tail.torn {
            self.file
                .set_len(tail.complete_len)
                .map_err(|err| with_path(err, "cut a torn line from audit log", &self.path))?;
        }
        let (mut seq, mut prev) = match &tail.last_line {
            None => (1, GENESIS_PREV.to_string()),
            Some(line) => {
                let last = parse_last_line(line, session).map_err(|msg| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("audit log {}: {msg}", self.path.display()),
                    )
                })?;
                (last.seq + 1, hash_line(line))
            }
        };

        let mut events = Vec::with_capacity(items.len());
        let mut lines = Vec::new();
        for (body, ts) in items {
            let event = Event {
                seq,
                ts,
                session: session.to_string(),
                prev,
                body,
            };
            let line = serde_json::to_vec(&event).map_err(io::Error::other)?;
            prev = hash_line(&line);
            seq += 1;
            lines.extend_from_slice(&line);
            lines.push(b'\n');
            events.push(event);
        }
        if let Err(err) = (&self.file).write_all(&lines) {
            // Leave no partial line behind; the next append would cut it anyway.
            let _ = self.file.set_len(tail.complete_len);
            return Err(with_path(err, "write to audit log", &self.path));
        }
        Ok(events)
    }
}

/// Redacts the free-text fields of an event that may carry secrets.
fn redact_body(body: EventBody) -> EventBody {
    match body {
        EventBody::SessionStart {
            aq_version,
            workspace,
            profile,
            policy_digest,
            command,
            pid,
            layers,
            grants,
            mode,
        } => EventBody::SessionStart {
            aq_version,
            workspace,
            profile,
            policy_digest,
            command: redact_argv(&command),
            pid,
            layers,
            grants,
            mode,
        },
        EventBody::CommandDecision {
            argv,
            cwd,
            pid,
            ppid,
            decision,
            rules,
            why,
            safer,
            source,
            exe,
            found,
            identity,
        } => EventBody::CommandDecision {
            argv: redact_argv(&argv),
            cwd,
            pid,
            ppid,
            decision,
            rules,
            why: why.as_deref().map(redact),
            safer: safer.as_deref().map(redact),
            source,
            exe,
            found: found.as_deref().map(redact),
            identity,
        },
        EventBody::Approval {
            request,
            argv,
            answer,
            by,
        } => EventBody::Approval {
            request,
            argv: redact_argv(&argv),
            answer,
            by,
        },
        EventBody::CommandExit {
            argv,
            exit_code,
            signal,
            duration_ms,
        } => EventBody::CommandExit {
            argv: redact_argv(&argv),
            exit_code,
            signal,
            duration_ms,
        },
        EventBody::NetworkConnection {
            host,
            port,
            addr,
            decision,
            rule,
            reason,
            front_end,
            bytes_up,
            bytes_down,
            duration_ms,
        } => EventBody::NetworkConnection {
            host,
            port,
            addr,
            decision,
            rule,
            reason: reason.as_deref().map(redact),
            front_end,
            bytes_up,
            bytes_down,
            duration_ms,
        },
        EventBody::PreflightFinding {
            id,
            severity,
            path,
            line,
            title,
        } => EventBody::PreflightFinding {
            id,
            severity,
            path,
            line,
            title: redact(&title),
        },
        EventBody::McpToolCall {
            server,
            tool,
            arguments,
            decision,
            rule,
        } => EventBody::McpToolCall {
            server,
            tool,
            arguments: redact(&arguments),
            decision,
            rule,
        },
        end @ EventBody::SessionEnd { .. } => end,
        EventBody::Export {
            target,
            sent,
            dropped,
            error,
        } => EventBody::Export {
            target,
            sent,
            dropped,
            error: error.as_deref().map(redact),
        },
        refused @ (EventBody::SyscallRefused { .. } | EventBody::FileRefused { .. }) => refused,
        EventBody::Checkpoint {
            id,
            reason,
            command,
            added,
            modified,
            deleted,
            not_kept,
            error,
        } => EventBody::Checkpoint {
            id,
            reason,
            command: command.as_deref().map(redact),
            added,
            modified,
            deleted,
            not_kept,
            error,
        },
        EventBody::GitChangeRefused {
            path,
            kind,
            what,
            runs,
            action,
            quarantined,
        } => EventBody::GitChangeRefused {
            path,
            kind,
            what,
            runs: redact(&runs),
            action,
            quarantined,
        },
    }
}

fn parse_last_line(line: &[u8], session: &str) -> Result<ChainFields, LastLineError> {
    let last: ChainFields =
        serde_json::from_slice(line).map_err(|source| LastLineError::NotAnEvent { source })?;
    if last.session != session {
        return Err(LastLineError::OtherSession {
            found: last.session,
            expected: session.to_string(),
        });
    }
    Ok(last)
}

/// What the end of the file holds.
#[derive(Debug, PartialEq, Eq)]
struct Tail {
    /// The last newline-terminated line, without its newline.
    last_line: Option<Vec<u8>>,
    /// Length of the file up to and including the last newline.
    complete_len: u64,
    /// Bytes follow the last newline: a torn write.
    torn: bool,
}

/// Reads the last complete line, looking at [`TAIL_WINDOW`] bytes first and
/// twice as many each time the line does not fit.
fn read_tail(file: &File) -> io::Result<Tail> {
    let len = file.metadata()?.len();
    let mut window = TAIL_WINDOW;
    let mut buf = Vec::new();
    loop {
        let start = len.saturating_sub(window);
        buf.resize(usize::try_from(len - start).map_err(io::Error::other)?, 0);
        file.read_exact_at(&mut buf, start)?;
        if let Some(tail) = find_tail(&buf, start, len) {
            return Ok(tail);
        }
        window = window.saturating_mul(2);
    }
}

/// Finds the last complete line in `buf`, the bytes `start..len` of the file;
/// `None` when more of the file must be read to see where it begins.
fn find_tail(buf: &[u8], start: u64, len: u64) -> Option<Tail> {
    let at_start = start == 0;
    let Some(last_nl) = buf.iter().rposition(|&b| b == b'\n') else {
        // No newline in view: all of it is torn, if this is the whole file.
        return at_start.then_some(Tail {
            last_line: None,
            complete_len: 0,
            torn: len > 0,
        });
    };
    let complete_len = start + last_nl as u64 + 1;
    let line_start = match buf[..last_nl].iter().rposition(|&b| b == b'\n') {
        Some(nl) => nl + 1,
        None if at_start => 0,
        None => return None,
    };
    Some(Tail {
        last_line: Some(buf[line_start..last_nl].to_vec()),
        complete_len,
        torn: complete_len < len,
    })
}

/// An exclusive `flock` on a file, released when dropped.
struct FileLock<'a> {
    file: &'a File,
}

impl<'a> FileLock<'a> {
    fn exclusive(file: &'a File) -> io::Result<FileLock<'a>> {
        loop {
            match flock(file, FlockOperation::LockExclusive) {
                Ok(()) => return Ok(FileLock { file }),
                Err(rustix::io::Errno::INTR) => continue,
                Err(errno) => return Err(errno.into()),
            }
        }
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        // Closing the file would release it too; an error here leaves the
        // lock to that.
        let _ = flock(self.file, FlockOperation::Unlock);
    }
}

fn with_path(err: io::Error, operation: &str, path: &Path) -> io::Error {
    io::Error::new(err.kind(), format!("{operation} {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::verify;
    use std::os::unix::fs::PermissionsExt;

    fn end(ms: u64) -> EventBody {
        EventBody::SessionEnd {
            exit_code: Some(0),
            duration_ms: ms,
        }
    }

    fn exit(argv: &[&str]) -> EventBody {
        EventBody::CommandExit {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            exit_code: Some(0),
            signal: None,
            duration_ms: 1,
        }
    }

    fn verified_lines(path: &Path) -> u64 {
        let report = verify(io::BufReader::new(File::open(path).unwrap())).unwrap();
        assert!(report.ok, "{report}");
        assert!(!report.torn_tail, "{report}");
        report.lines
    }

    #[test]
    fn appends_chain_from_genesis() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let log = AuditLog::open(&path).unwrap();
        let first = log.append(end(1), "t1".into(), "s").unwrap();
        let second = log.append(end(2), "t2".into(), "s").unwrap();
        assert_eq!((first.seq, first.prev.as_str()), (1, GENESIS_PREV));
        let text = std::fs::read_to_string(&path).unwrap();
        let line1 = text.lines().next().unwrap();
        assert_eq!(second.seq, 2);
        assert_eq!(second.prev, hash_line(line1.as_bytes()));
        assert_eq!(verified_lines(&path), 2);
    }

    #[test]
    fn reopening_continues_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        AuditLog::open(&path)
            .unwrap()
            .append(end(1), "t".into(), "s")
            .unwrap();
        let event = AuditLog::open(&path)
            .unwrap()
            .append(end(2), "t".into(), "s")
            .unwrap();
        assert_eq!(event.seq, 2);
        assert_eq!(verified_lines(&path), 2);
    }

    #[test]
    fn file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        AuditLog::open(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn torn_tail_is_cut_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let log = AuditLog::open(&path).unwrap();
        log.append(end(1), "t".into(), "s").unwrap();
        (&File::options().append(true).open(&path).unwrap())
            .write_all(b"{\"seq\":2,\"ts\":\"t\",\"sess")
            .unwrap();
        let event = log.append(end(2), "t".into(), "s").unwrap();
        assert_eq!(event.seq, 2, "the torn event is dropped, its seq reused");
        assert_eq!(verified_lines(&path), 2);
    }

    #[test]
    fn file_holding_only_a_torn_line_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "{\"seq\":1,\"ts").unwrap();
        let event = AuditLog::open(&path)
            .unwrap()
            .append(end(1), "t".into(), "s")
            .unwrap();
        assert_eq!((event.seq, event.prev.as_str()), (1, GENESIS_PREV));
        assert_eq!(verified_lines(&path), 1);
    }

    #[test]
    fn long_last_line_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let log = AuditLog::open(&path).unwrap();
        let long = "x".repeat(3 * TAIL_WINDOW as usize);
        log.append(exit(&["echo", &long]), "t".into(), "s").unwrap();
        log.append(exit(&["echo", &long]), "t".into(), "s").unwrap();
        log.append(end(1), "t".into(), "s").unwrap();
        assert_eq!(verified_lines(&path), 3);
    }

    #[test]
    fn argv_is_redacted_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let log = AuditLog::open(&path).unwrap();
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let event = log
            .append(
                exit(&["git", "clone", &format!("https://{token}@github.com/o/r")]),
                "t".into(),
                "s",
            )
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(token), "{text}");
        let written = "https://ghp_[REDACTED]@github.com/o/r";
        assert!(text.contains(written), "{text}");
        assert_eq!(
            event.body.argv().unwrap()[2],
            written,
            "the returned event is what was written"
        );
    }

    #[test]
    fn another_sessions_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let log = AuditLog::open(&path).unwrap();
        log.append(end(1), "t".into(), "s").unwrap();
        let err = log.append(end(1), "t".into(), "other").unwrap_err();
        assert!(err.to_string().contains("belongs to session"), "{err}");
    }

    #[test]
    fn corrupt_last_line_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "not json\n").unwrap();
        let err = AuditLog::open(&path)
            .unwrap()
            .append(end(1), "t".into(), "s")
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("s.jsonl"), "{err}");
        assert!(err.to_string().contains("aq audit verify"), "{err}");
    }

    #[test]
    fn open_error_names_the_path() {
        let err = AuditLog::open("/nonexistent-dir/x/s.jsonl").unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent-dir/x/s.jsonl"),
            "{err}"
        );
    }

    #[test]
    fn find_tail_cases() {
        let whole = |text: &str| find_tail(text.as_bytes(), 0, text.len() as u64).unwrap();
        assert_eq!(
            whole(""),
            Tail {
                last_line: None,
                complete_len: 0,
                torn: false
            }
        );
        assert_eq!(whole("a\nbc\n").last_line.as_deref(), Some(&b"bc"[..]));
        let torn = whole("a\nbc\nde");
        assert_eq!(torn.last_line.as_deref(), Some(&b"bc"[..]));
        assert_eq!((torn.complete_len, torn.torn), (5, true));
        assert_eq!(whole("only\n").last_line.as_deref(), Some(&b"only"[..]));
        // A window that starts mid-line needs more bytes.
        assert_eq!(find_tail(b"bc\n", 2, 5), None);
        assert_eq!(find_tail(b"de", 5, 7), None);
    }

    #[test]
    fn threads_sharing_one_log_keep_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let log = AuditLog::open(&path).unwrap();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for i in 0..50 {
                        log.append(end(i), "t".into(), "s").unwrap();
                    }
                });
            }
        });
        assert_eq!(verified_lines(&path), 200);
    }
}
