//! What program an `execve` really runs, whatever it is called: the exec
//! guard judges the tool, not the file name.
//!
//! - A symbolic link is already resolved by the kernel (`/proc/<pid>/exe`).
//! - A hard link or a renamed copy of a known tool (`cp /usr/bin/curl ./c`)
//!   is recognised by device and inode, else by size and then SHA-256 of the
//!   content, against the tools the rules know found on the host's `PATH`.
//!   Hashes are cached by device, inode, size and modification time.
//! - A busybox-style multi-call binary is judged as its applet (`argv[0]`'s
//!   name, or `argv[1]` when called as `busybox APPLET`).
//! - A script run through its `#!` line arrives as the interpreter with the
//!   script path as an argument (`bash ./x.sh`): the interpreter is the
//!   program, the script path is in the argv and in the log.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

/// Programs recognised by content when copied or renamed: those the rules
/// care about most (network fetchers, shells, interpreters, encoders).
pub const KNOWN_TOOLS: &[&str] = &[
    "curl",
    "wget",
    "sh",
    "bash",
    "dash",
    "zsh",
    "busybox",
    "python3",
    "python",
    "perl",
    "ruby",
    "node",
    "nc",
    "ncat",
    "socat",
    "ssh",
    "scp",
    "rsync",
    "git",
    "base64",
    "openssl",
    "dd",
    "rm",
    "chmod",
    "sudo",
    "env",
    "xargs",
    "tar",
    "zip",
    "crontab",
    "systemctl",
    "php",
];

/// A known tool's file and name.
type Candidate = (PathBuf, &'static str);

/// Content hashes by (dev, ino, size, mtime).
type HashCache = HashMap<(u64, u64, u64, i64), [u8; 32]>;

/// Identifies executables; shared by every exec the guard sees.
pub struct Identifier {
    /// Known tools on this host: (dev, ino) → name.
    by_inode: HashMap<(u64, u64), &'static str>,
    /// size → [(path, name)], to hash only same-size candidates.
    by_size: HashMap<u64, Vec<Candidate>>,
    /// Content hashes, cached by (dev, ino, size, mtime).
    hashes: Mutex<HashCache>,
}

/// What the guard judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identified {
    /// The argv to judge: the tool's name first.
    pub argv: Vec<String>,
    /// How the name was found, for the log: `name`, `inode`, `content`, `applet`.
    pub how: &'static str,
}

impl Identifier {
    /// Index the known tools found in `path_dirs` (stat only; no hashing yet).
    /// A directory named twice (`/bin` is `/usr/bin` on most systems) is
    /// looked in once.
    pub fn new<'a>(path_dirs: impl IntoIterator<Item = &'a Path>) -> Identifier {
        let mut by_inode = HashMap::new();
        let mut by_size: HashMap<u64, Vec<Candidate>> = HashMap::new();
        let mut dirs_seen = std::collections::HashSet::new();
        for dir in path_dirs {
            if !std::fs::metadata(dir).is_ok_and(|m| dirs_seen.insert((m.dev(), m.ino()))) {
                continue;
            }
            for name in KNOWN_TOOLS {
                // One stat a candidate (it follows links): this runs at every
                // session start, over every `PATH` directory.
                let p = dir.join(name);
                let Ok(m) = std::fs::metadata(&p) else {
                    continue;
                };
                if !m.is_file() {
                    continue;
                }
                // The first name found for an inode wins (python3 before python);
                // a file seen before (another link to it) is a candidate once.
                if let std::collections::hash_map::Entry::Vacant(e) =
                    by_inode.entry((m.dev(), m.ino()))
                {
                    e.insert(*name);
                    by_size.entry(m.size()).or_default().push((p, *name));
                }
            }
        }
        Identifier {
            by_inode,
            by_size,
            hashes: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `executable` is one of the known tools found on the host's
    /// `PATH` (the same file, by device and inode), not a copy elsewhere.
    pub fn is_installed_tool(&self, executable: &Path) -> bool {
        std::fs::metadata(executable).is_ok_and(|m| self.by_inode.contains_key(&(m.dev(), m.ino())))
    }

    /// The argv to judge for `executable` run with `argv`.
    pub fn identify(&self, executable: &Path, argv: &[String]) -> Identified {
        let file_name = executable
            .file_name()
            .map(OsStr::to_string_lossy)
            .unwrap_or_default()
            .into_owned();
        let (name, how) = match self.known_by_identity(executable) {
            Some((tool, how)) => (tool.to_string(), how),
            None => (file_name, "name"),
        };
        let rest = argv.get(1..).unwrap_or_default();
        if name == "busybox" {
            let arg0 = argv.first().map(|a| base_name(a)).unwrap_or_default();
            if !arg0.is_empty() && arg0 != "busybox" {
                return Identified {
                    argv: std::iter::once(arg0).chain(rest.iter().cloned()).collect(),
                    how: "applet",
                };
            }
            if let Some((applet, tail)) = rest.split_first() {
                return Identified {
                    argv: std::iter::once(base_name(applet))
                        .chain(tail.iter().cloned())
                        .collect(),
                    how: "applet",
                };
            }
        }
        Identified {
            argv: std::iter::once(name).chain(rest.iter().cloned()).collect(),
            how,
        }
    }

    /// A known tool by inode (hard link, the file itself) or by content (a copy).
    fn known_by_identity(&self, executable: &Path) -> Option<(&'static str, &'static str)> {
        let m = std::fs::metadata(executable).ok()?;
        if let Some(name) = self.by_inode.get(&(m.dev(), m.ino())) {
            let same_name = executable.file_name() == Some(OsStr::new(name));
            return Some((name, if same_name { "name" } else { "inode" }));
        }
        let candidates = self.by_size.get(&m.size())?;
        let digest = self.hash(executable, &m)?;
        for (path, name) in candidates {
            let pm = std::fs::metadata(path).ok()?;
            if self.hash(path, &pm) == Some(digest) {
                return Some((name, "content"));
            }
        }
        None
    }

    fn hash(&self, path: &Path, m: &std::fs::Metadata) -> Option<[u8; 32]> {
        let key = (m.dev(), m.ino(), m.size(), m.mtime());
        if let Some(h) = self.hashes.lock().ok()?.get(&key) {
            return Some(*h);
        }
        let mut f = std::fs::File::open(path).ok()?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = f.read(&mut buf).ok()?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        let digest: [u8; 32] = hasher.finalize().into();
        self.hashes.lock().ok()?.insert(key, digest);
        Some(digest)
    }
}

/// An [`Identifier`] indexed on a thread of its own, so a session's start
/// does not wait for a few hundred `stat` calls: the first exec that needs
/// it waits for what is left.
pub struct Background {
    dirs: Vec<PathBuf>,
    pending: Mutex<Option<std::thread::JoinHandle<Identifier>>>,
    ready: std::sync::OnceLock<Identifier>,
}

impl Background {
    /// Start indexing the known tools in `dirs`.
    pub fn start(dirs: Vec<PathBuf>) -> Background {
        let copy = dirs.clone();
        let pending = std::thread::Builder::new()
            .name("aq-tool-index".into())
            .spawn(move || Identifier::new(copy.iter().map(PathBuf::as_path)))
            .ok();
        Background {
            dirs,
            pending: Mutex::new(pending),
            ready: std::sync::OnceLock::new(),
        }
    }

    /// The index, once built (built here if the thread could not be).
    pub fn get(&self) -> &Identifier {
        self.ready.get_or_init(|| {
            let pending = self.pending.lock().ok().and_then(|mut p| p.take());
            pending
                .and_then(|h| h.join().ok())
                .unwrap_or_else(|| Identifier::new(self.dirs.iter().map(PathBuf::as_path)))
        })
    }
}

fn base_name(arg: &str) -> String {
    Path::new(arg)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| arg.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// A fake tool directory: "curl" and "busybox" are small files here.
    fn host() -> (tempfile::TempDir, Identifier) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("curl"), b"\x7fELF fake curl body").unwrap();
        std::fs::write(dir.path().join("busybox"), b"\x7fELF fake busybox, longer").unwrap();
        std::fs::write(dir.path().join("ls"), b"\x7fELF fake ls").unwrap();
        let id = Identifier::new([dir.path()]);
        (dir, id)
    }

    #[test]
    fn a_renamed_copy_is_known_by_content() {
        let (dir, id) = host();
        let copy = dir.path().join("c");
        std::fs::copy(dir.path().join("curl"), &copy).unwrap();
        let got = id.identify(&copy, &argv(&["./c", "https://example.invalid/"]));
        assert_eq!(got.argv, argv(&["curl", "https://example.invalid/"]));
        assert_eq!(got.how, "content");
    }

    #[test]
    fn the_background_index_is_the_same_index() {
        let (dir, _) = host();
        // The same directory named twice, once through a link to it.
        let alias = dir.path().with_extension("alias");
        std::os::unix::fs::symlink(dir.path(), &alias).unwrap();
        let bg = Background::start(vec![dir.path().to_path_buf(), alias.clone()]);
        let copy = dir.path().join("c");
        std::fs::copy(dir.path().join("curl"), &copy).unwrap();
        let got = bg.get().identify(&copy, &argv(&["./c"]));
        assert_eq!((got.argv, got.how), (argv(&["curl"]), "content"));
        // curl and busybox, once each (ls is not a tool the rules single out).
        assert_eq!(bg.get().by_size.values().map(Vec::len).sum::<usize>(), 2);
        std::fs::remove_file(alias).unwrap();
    }

    #[test]
    fn a_hard_link_is_known_by_inode() {
        let (dir, id) = host();
        let link = dir.path().join("innocent");
        std::fs::hard_link(dir.path().join("curl"), &link).unwrap();
        let got = id.identify(&link, &argv(&["innocent", "-O", "x"]));
        assert_eq!(got.argv, argv(&["curl", "-O", "x"]));
        assert_eq!(got.how, "inode");
    }

    #[test]
    fn busybox_is_judged_as_its_applet() {
        let (dir, id) = host();
        let bb = dir.path().join("busybox");
        assert_eq!(
            id.identify(&bb, &argv(&["wget", "-O-", "http://example.invalid"]))
                .argv,
            argv(&["wget", "-O-", "http://example.invalid"])
        );
        assert_eq!(
            id.identify(&bb, &argv(&["busybox", "wget", "-q"])).argv,
            argv(&["wget", "-q"])
        );
    }

    #[test]
    fn an_unknown_program_keeps_its_name() {
        let (dir, id) = host();
        let other = dir.path().join("mytool");
        std::fs::write(&other, b"something else entirely").unwrap();
        let got = id.identify(&other, &argv(&["mytool", "--x"]));
        assert_eq!(got.argv, argv(&["mytool", "--x"]));
        assert_eq!(got.how, "name");
        // ls is not a known tool: a copy keeps the copy's name.
        let ls_copy = dir.path().join("l");
        std::fs::copy(dir.path().join("ls"), &ls_copy).unwrap();
        assert_eq!(id.identify(&ls_copy, &argv(&["l"])).argv, argv(&["l"]));
    }
}
