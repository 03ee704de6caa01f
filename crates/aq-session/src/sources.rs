//! Which session logs to follow, and following them: for `aq watch` and
//! `aq audit export --all --follow`.
//!
//! All running sessions (picking up those that start later, even one that
//! ended between two looks), or one
//! session named by an id prefix or as the newest. A followed log is read
//! from its beginning; a session's log is done once it ended (its
//! `session_end` is read, or its supervisor is gone) and nothing more came.
//!
//! An agent's own hook (`aq enable claude --hook`, no `aq run`) logs to a
//! session of its own with no supervisor and no end: such a session is
//! followed when its log was written in the last [`HOOK_RECENT`], and is
//! never done, since the agent may call its hook again at any time.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

pub use crate::error::SessionLookupError;
use crate::{files, pid_alive};
use aq_audit::Record;
use aq_audit::follow::Follower;

/// Which sessions to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Every running session, and those that start later.
    AllLive,
    /// The session whose id starts with this.
    Session(String),
    /// The newest session.
    Latest,
}

/// One line read from a followed log.
#[derive(Debug, Clone)]
pub struct Line {
    /// The session id.
    pub session: String,
    /// The line as logged, without its newline.
    pub text: String,
    /// It parsed, if it did.
    pub record: Option<Record>,
}

/// How recently a hook session's log must have been written to count as
/// live.
pub const HOOK_RECENT: Duration = Duration::from_secs(30 * 60);

struct Followed {
    follower: Follower,
    supervisor: Option<u32>,
    /// A hook session: no supervisor (pid 0), no end.
    hook: bool,
    ended: bool,
    done: bool,
}

impl Followed {
    /// Whether the session may still write: its supervisor runs, or it is
    /// a hook session written to lately.
    fn live(&self) -> bool {
        if self.hook {
            return recently_written(self.follower.path());
        }
        !self.ended && self.supervisor.is_some_and(pid_alive)
    }
}

fn recently_written(log: &std::path::Path) -> bool {
    std::fs::metadata(log)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age <= HOOK_RECENT)
}

/// The logs followed.
pub struct Sources {
    target: Target,
    /// The one session followed, for [`Target::Session`] and [`Target::Latest`].
    only: Option<String>,
    followed: BTreeMap<String, Followed>,
    /// When following began: a session started since is followed even if
    /// it already ended (it may have lasted less than a scan's interval).
    since: SystemTime,
}

impl Sources {
    /// Resolves `target` to sessions; fails for an unknown or ambiguous id
    /// or when there is no session at all for `--latest`.
    pub fn open(target: Target) -> Result<Sources, SessionLookupError> {
        let sessions = files::list().map_err(SessionLookupError::List)?;
        let only = match &target {
            Target::AllLive => None,
            Target::Session(prefix) => {
                if prefix.is_empty() {
                    return Err(SessionLookupError::EmptyId);
                }
                let matches: Vec<&PathBuf> = sessions
                    .iter()
                    .filter(|d| id_of(d).starts_with(prefix.as_str()))
                    .collect();
                match matches.as_slice() {
                    [one] => Some(id_of(one)),
                    [] => {
                        return Err(SessionLookupError::NoSuch {
                            what: prefix.clone(),
                        });
                    }
                    _ => {
                        return Err(SessionLookupError::Ambiguous {
                            what: prefix.clone(),
                            count: matches.len(),
                        });
                    }
                }
            }
            Target::Latest => Some(
                sessions
                    .last()
                    .map(|d| id_of(d))
                    .ok_or(SessionLookupError::NoSessions)?,
            ),
        };
        let mut sources = Sources {
            target,
            only,
            followed: BTreeMap::new(),
            since: SystemTime::now(),
        };
        if let Some(id) = sources.only.clone() {
            let dir = files::sessions_dir()
                .map_err(SessionLookupError::SessionsDir)?
                .join(&id);
            sources.follow(id, dir);
        }
        sources.scan();
        Ok(sources)
    }

    /// The one session followed, if the target names one.
    pub fn only(&self) -> Option<&str> {
        self.only.as_deref()
    }

    fn follow(&mut self, id: String, dir: PathBuf) {
        let supervisor = files::read_file(&dir).ok().map(|f| f.supervisor_pid);
        self.followed.insert(
            id,
            Followed {
                follower: Follower::new(files::log_path(&dir)),
                supervisor,
                hook: supervisor == Some(0),
                ended: false,
                done: false,
            },
        );
    }

    /// Starts following sessions that started since the last scan (only
    /// for [`Target::AllLive`]).
    pub fn scan(&mut self) {
        if self.target != Target::AllLive {
            return;
        }
        for dir in files::list().unwrap_or_default() {
            let id = id_of(&dir);
            if self.followed.contains_key(&id) {
                continue;
            }
            // A session directory appears before its session file: the
            // next scan picks it up.
            let Ok(file) = files::read_file(&dir) else {
                continue;
            };
            let started_since = std::fs::metadata(dir.join("session.json"))
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= self.since);
            let hook_lately = file.supervisor_pid == 0 && recently_written(&files::log_path(&dir));
            if pid_alive(file.supervisor_pid) || started_since || hook_lately {
                self.follow(id, dir);
            }
        }
    }

    /// The lines added to every followed log since the last call, in order
    /// within each log.
    pub fn poll(&mut self) -> Vec<Line> {
        let mut out = Vec::new();
        for (id, f) in self.followed.iter_mut().filter(|(_, f)| !f.done) {
            // Whether the log was finished before reading: what is read now
            // is then all there is.
            let finished = !f.hook && (f.ended || !f.supervisor.is_some_and(pid_alive));
            let lines = f.follower.poll_lines().unwrap_or_default();
            if lines.is_empty() && finished {
                f.done = true;
            }
            for text in lines {
                let record = Record::parse(&text).ok();
                if record.as_ref().is_some_and(|r| r.kind() == "session_end") {
                    f.ended = true;
                }
                out.push(Line {
                    session: id.clone(),
                    text,
                    record,
                });
            }
        }
        out
    }

    /// Whether every followed log is done: the one session followed has
    /// ended and its log was read to the end. Never for
    /// [`Target::AllLive`], which waits for sessions to come.
    pub fn finished(&self) -> bool {
        self.only.is_some() && self.followed.values().all(|f| f.done)
    }

    /// Sessions followed that may still write: their supervisor runs, or
    /// they are hook sessions written to lately.
    pub fn live(&self) -> usize {
        self.followed.values().filter(|f| f.live()).count()
    }
}

fn id_of(dir: &std::path::Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
