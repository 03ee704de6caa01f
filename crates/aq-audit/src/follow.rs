//! Reading a session's log as it grows.
//!
//! The log is appended to by many writers under a lock, one whole line per
//! `write`, but a reader can still catch a line half-written by a writer
//! that was killed, or one being written right now. A [`Follower`] keeps
//! the bytes after the last newline and hands out only complete lines;
//! lines that do not parse are counted and skipped (the file stays the
//! source of truth, [`crate::verify`] names them).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::Record;

/// Reads the complete lines added to a log since the last call.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
    /// Lines that were not JSON the reader understands.
    pub unreadable: u64,
}

/// Lines longer than this are dropped (a log line is a few KiB at most).
const MAX_LINE: usize = 4 << 20;

impl Follower {
    /// Follows `path` from its beginning.
    pub fn new(path: impl AsRef<Path>) -> Follower {
        Follower {
            path: path.as_ref().to_path_buf(),
            offset: 0,
            partial: Vec::new(),
            unreadable: 0,
        }
    }

    /// Follows `path` from its current end: only events written from now.
    pub fn from_end(path: impl AsRef<Path>) -> io::Result<Follower> {
        let mut f = Follower::new(path);
        f.offset = std::fs::metadata(&f.path)?.len();
        Ok(f)
    }

    /// The log followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The records completed since the last call, in order. A log that does
    /// not exist yet gives nothing; a log that shrank (rewritten) is read
    /// again from its start.
    pub fn poll(&mut self) -> io::Result<Vec<Record>> {
        Ok(self
            .poll_lines()?
            .into_iter()
            .filter_map(|line| match Record::parse(&line) {
                Ok(r) => Some(r),
                Err(_) => {
                    self.unreadable += 1;
                    None
                }
            })
            .collect())
    }

    /// Like [`Follower::poll`], the raw lines (without their newline).
    pub fn poll_lines(&mut self) -> io::Result<Vec<String>> {
        let mut file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let len = file.metadata()?.len();
        if len < self.offset {
            self.offset = 0;
            self.partial.clear();
        }
        if len == self.offset {
            return Ok(Vec::new());
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut buf = Vec::new();
        (&mut file).take(len - self.offset).read_to_end(&mut buf)?;
        self.offset += buf.len() as u64;
        self.partial.extend_from_slice(&buf);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(nl) = self.partial[start..].iter().position(|&b| b == b'\n') {
            let line = &self.partial[start..start + nl];
            start += nl + 1;
            if line.is_empty() {
                continue;
            }
            match std::str::from_utf8(line) {
                Ok(s) => out.push(s.to_string()),
                Err(_) => self.unreadable += 1,
            }
        }
        self.partial.drain(..start);
        if self.partial.len() > MAX_LINE {
            self.partial.clear();
            self.unreadable += 1;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::Follower;
    use std::io::Write;

    fn line(seq: u64) -> String {
        format!(
            r#"{{"seq":{seq},"prev":"x","ts":"2026-11-30T00:00:00.000Z","session":"s","event":"note","text":"hi"}}"#
        )
    }

    #[test]
    fn a_half_written_line_waits_for_its_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let mut f = Follower::new(&path);
        assert!(f.poll_lines().unwrap().is_empty(), "a missing log is empty");
        let mut w = std::fs::File::create(&path).unwrap();
        let l1 = line(1);
        let l2 = line(2);
        write!(w, "{l1}\n{}", &l2[..10]).unwrap();
        assert_eq!(f.poll_lines().unwrap(), vec![l1.clone()]);
        assert!(f.poll_lines().unwrap().is_empty());
        writeln!(w, "{}", &l2[10..]).unwrap();
        assert_eq!(f.poll_lines().unwrap(), vec![l2]);
    }

    #[test]
    fn garbage_is_counted_not_returned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, b"not json\n\xff\xfe\n").unwrap();
        let mut f = Follower::new(&path);
        assert!(f.poll().unwrap().is_empty());
        assert_eq!(f.unreadable, 2);
    }

    #[test]
    fn from_end_skips_what_was_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, format!("{}\n", line(1))).unwrap();
        let mut f = Follower::from_end(&path).unwrap();
        assert!(f.poll_lines().unwrap().is_empty());
        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(w, "{}", line(2)).unwrap();
        assert_eq!(f.poll_lines().unwrap(), vec![line(2)]);
    }
}
