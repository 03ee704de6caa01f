//! The approval queue: how a human answers an `ask`.
//!
//! Agents run commands without a terminal, so a shim cannot prompt on its
//! own stdin. Instead it files a request in the session's state directory
//! (outside the workspace) and waits; `aq approve`, run by the user in
//! another terminal, reads the queue and writes the answer. Files are
//! written to a temporary name and renamed, so a reader never sees half a
//! request or half an answer.
//!
//! Layout under `<session>/approvals/`:
//! - `pending/<id>.json`: a [`Request`] waiting for an answer;
//! - `answers/<id>.json`: the [`AnswerRecord`] for it;
//! - `session-allow.jsonl`: argument vectors allowed for the rest of the session;
//! - `grants/<id>.json`: the commands an approved request runs, so their own
//!   shims do not ask again.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// A command waiting for a human.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Unique within the session.
    pub id: String,
    /// The command's argument vector.
    pub argv: Vec<String>,
    /// Its working directory.
    pub cwd: String,
    /// The waiting process.
    pub pid: u32,
    /// Rules that asked.
    pub rules: Vec<String>,
    /// Why they asked.
    pub why: Option<String>,
    /// What to do instead.
    pub safer: Option<String>,
    /// When it was filed (milliseconds since the epoch).
    pub created_ms: u64,
    /// For a network ask, the `host:port` the process wants to reach (its
    /// command line is `argv`); `None` for a command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
}

/// What the human said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// Run it this once.
    Once,
    /// Run it, and this exact command again for the rest of the session.
    Session,
    /// For a network ask: allow the host in every session (the user's
    /// policy gets the grant `aq allow --net` makes). A command ask takes
    /// it as [`Answer::Session`].
    Always,
    /// Do not run it.
    Deny,
}

impl Answer {
    /// The name used in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Once => "once",
            Answer::Session => "session",
            Answer::Always => "always",
            Answer::Deny => "deny",
        }
    }
}

/// An answer and who gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerRecord {
    /// The answer.
    pub answer: Answer,
    /// Who answered, and how (`aq approve on /dev/pts/3, uid 1000`).
    pub by: String,
}

/// One session's approval queue.
#[derive(Debug, Clone)]
pub struct Queue {
    dir: PathBuf,
}

impl Queue {
    /// The queue of the session whose state directory is `session_dir`.
    pub fn new(session_dir: &Path) -> Self {
        Queue {
            dir: session_dir.join("approvals"),
        }
    }

    fn pending_dir(&self) -> PathBuf {
        self.dir.join("pending")
    }

    fn answers_dir(&self) -> PathBuf {
        self.dir.join("answers")
    }

    /// Creates the queue's directories (mode 0700).
    pub fn create(&self) -> io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true).mode(0o700);
        b.create(self.pending_dir())?;
        b.create(self.answers_dir())
    }

    /// Files a request.
    pub fn submit(&self, request: &Request) -> io::Result<()> {
        check_id(&request.id)?;
        let body = serde_json::to_vec(request).map_err(io::Error::other)?;
        write_atomic(
            &self.pending_dir().join(format!("{}.json", request.id)),
            &body,
        )
    }

    /// Waits for the answer to request `id`, polling, until `timeout`.
    /// Returns `None` on timeout. The request is withdrawn either way.
    pub fn wait(&self, id: &str, timeout: Duration) -> io::Result<Option<AnswerRecord>> {
        check_id(id)?;
        let answer_path = self.answers_dir().join(format!("{id}.json"));
        let start = Instant::now();
        let mut pause = Duration::from_millis(5);
        let result = loop {
            match std::fs::read(&answer_path) {
                Ok(bytes) => break serde_json::from_slice(&bytes).ok(),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            if start.elapsed() >= timeout {
                break None;
            }
            std::thread::sleep(pause.min(timeout.saturating_sub(start.elapsed())));
            pause = (pause * 2).min(Duration::from_millis(100));
        };
        self.withdraw(id);
        Ok(result)
    }

    /// Removes a request and its answer.
    pub(crate) fn withdraw(&self, id: &str) {
        let _ = std::fs::remove_file(self.pending_dir().join(format!("{id}.json")));
        let _ = std::fs::remove_file(self.answers_dir().join(format!("{id}.json")));
    }

    /// The requests waiting now, oldest first.
    pub fn pending(&self) -> io::Result<Vec<Request>> {
        let mut out = Vec::new();
        let entries = match std::fs::read_dir(self.pending_dir()) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "json")
                && let Ok(bytes) = std::fs::read(&path)
                && let Ok(r) = serde_json::from_slice::<Request>(&bytes)
            {
                out.push(r);
            }
        }
        out.sort_by_key(|r| r.created_ms);
        Ok(out)
    }

    /// Answers a pending request. Fails if it is no longer pending.
    pub fn answer(&self, id: &str, record: &AnswerRecord) -> io::Result<()> {
        check_id(id)?;
        if !self.pending_dir().join(format!("{id}.json")).exists() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("request {id} is no longer pending"),
            ));
        }
        let body = serde_json::to_vec(record).map_err(io::Error::other)?;
        write_atomic(&self.answers_dir().join(format!("{id}.json")), &body)
    }

    fn allow_file(&self) -> PathBuf {
        self.dir.join("session-allow.jsonl")
    }

    /// Whether this exact command was allowed for the rest of the session.
    pub fn session_allows(&self, argv: &[String]) -> bool {
        let Ok(text) = std::fs::read_to_string(self.allow_file()) else {
            return false;
        };
        let Ok(want) = serde_json::to_string(argv) else {
            return false;
        };
        text.lines().any(|l| l == want)
    }

    /// Allows this exact command for the rest of the session.
    pub fn allow_for_session(&self, argv: &[String]) -> io::Result<()> {
        let line = serde_json::to_string(argv).map_err(io::Error::other)?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.allow_file())?;
        f.write_all(format!("{line}\n").as_bytes())
    }
}

impl Queue {
    fn grant_file(&self, id: &str) -> PathBuf {
        self.dir.join("grants").join(format!("{id}.json"))
    }

    /// Records what an approved request runs (`bash -c 'npm ci && npm test'`
    /// runs `npm ci` and `npm test`), so the shims of those commands do not
    /// ask the same human again. Children find it through `AQ_GRANT`.
    pub fn grant(&self, id: &str, commands: &[Vec<String>]) -> io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        check_id(id)?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(self.dir.join("grants"))?;
        let body = serde_json::to_vec(commands).map_err(io::Error::other)?;
        write_atomic(&self.grant_file(id), &body)
    }

    /// Whether approved request `id` covers this exact command.
    pub fn granted(&self, id: &str, argv: &[String]) -> bool {
        if check_id(id).is_err() {
            return false;
        }
        let Ok(bytes) = std::fs::read(self.grant_file(id)) else {
            return false;
        };
        let Ok(commands) = serde_json::from_slice::<Vec<Vec<String>>>(&bytes) else {
            return false;
        };
        commands.iter().any(|c| c.as_slice() == argv)
    }
}

fn check_id(id: &str) -> io::Result<()> {
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad request id `{id}`"),
        ));
    }
    Ok(())
}

fn write_atomic(path: &Path, body: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(body)?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: &str) -> Request {
        Request {
            id: id.into(),
            argv: vec!["npm".into(), "install".into()],
            cwd: "/w".into(),
            pid: 1,
            rules: vec!["pkg-install".into()],
            why: None,
            safer: None,
            created_ms: 1,
            network: None,
        }
    }

    #[test]
    fn a_request_is_answered_through_the_files() {
        let tmp = tempfile::tempdir().unwrap();
        let q = Queue::new(tmp.path());
        q.create().unwrap();
        q.submit(&request("r1")).unwrap();
        assert_eq!(q.pending().unwrap().len(), 1);
        let q2 = q.clone();
        let t = std::thread::spawn(move || q2.wait("r1", Duration::from_secs(5)).unwrap());
        q.answer(
            "r1",
            &AnswerRecord {
                answer: Answer::Session,
                by: "test".into(),
            },
        )
        .unwrap();
        let got = t.join().unwrap().unwrap();
        assert_eq!(got.answer, Answer::Session);
        assert!(
            q.pending().unwrap().is_empty(),
            "withdrawn after the answer"
        );
        assert!(
            q.answer(
                "r1",
                &AnswerRecord {
                    answer: Answer::Once,
                    by: "x".into()
                }
            )
            .is_err()
        );
    }

    #[test]
    fn no_answer_times_out() {
        let tmp = tempfile::tempdir().unwrap();
        let q = Queue::new(tmp.path());
        q.create().unwrap();
        q.submit(&request("r2")).unwrap();
        assert_eq!(q.wait("r2", Duration::from_millis(50)).unwrap(), None);
    }

    #[test]
    fn session_allow_is_exact() {
        let tmp = tempfile::tempdir().unwrap();
        let q = Queue::new(tmp.path());
        q.create().unwrap();
        let argv = vec!["npm".to_string(), "install".to_string()];
        assert!(!q.session_allows(&argv));
        q.allow_for_session(&argv).unwrap();
        assert!(q.session_allows(&argv));
        assert!(!q.session_allows(&["npm".to_string(), "install".to_string(), "x".to_string()]));
    }

    #[test]
    fn a_grant_covers_exactly_its_commands() {
        let tmp = tempfile::tempdir().unwrap();
        let q = Queue::new(tmp.path());
        q.create().unwrap();
        let npm = vec!["npm".to_string(), "ci".to_string()];
        q.grant("g1", std::slice::from_ref(&npm)).unwrap();
        assert!(q.granted("g1", &npm));
        assert!(!q.granted("g1", &["npm".to_string(), "install".to_string()]));
        assert!(!q.granted("g2", &npm));
        assert!(!q.granted("../g1", &npm));
    }

    #[test]
    fn ids_cannot_escape_the_queue() {
        let tmp = tempfile::tempdir().unwrap();
        let q = Queue::new(tmp.path());
        assert!(q.submit(&request("../x")).is_err());
    }
}
