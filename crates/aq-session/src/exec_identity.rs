//! What program an `execve` really runs, whatever it is called, and where
//! it comes from: the exec guard judges the tool, not the file name, and
//! asks about a native program it cannot name that the session could have
//! written (see docs/exec-guard.md, "Identity").
//!
//! - A symbolic link is already resolved by the kernel (`/proc/<pid>/exe`).
//! - A hard link to a known tool, or the tool itself, is recognised by
//!   device and inode (the exec's own, as the guard opened the file: never
//!   a path looked up again, which another process could swap meanwhile).
//! - An exact copy (`cp /usr/bin/curl ./c`) is recognised by size and then
//!   SHA-256 of the content.
//! - An altered copy of an ELF tool (bytes appended, strings patched, the
//!   build id patched) is recognised by its `.note.gnu.build-id` (or Go's
//!   build id), else by the SHA-256 of its executable segments: it is judged
//!   as that tool, and, outside the build outputs the policy names, asks
//!   too (what else was changed cannot be told).
//! - The known tools are the programs the rules know ([`KNOWN_TOOLS`] and
//!   the `aq-knowledge` table), found on the host's `PATH`, indexed on a
//!   thread of its own at the session's start (each directory listed, each
//!   tool found `stat`ed, unless the directory is unchanged since the last
//!   session's record; the first pages of each ELF are read the first
//!   time an altered copy is looked for). Facts about a file are cached by
//!   device, inode, size, modification and change time.
//! - A busybox-style multi-call binary is judged as its applet (`argv[0]`'s
//!   name, or `argv[1]` when called as `busybox APPLET`).
//! - A script run through its `#!` line arrives as the interpreter with the
//!   script path as an argument (`bash ./x.sh`): the interpreter is the
//!   program, the script path is in the argv and in the log. Only native
//!   (ELF) programs are "unknown programs": a script's commands are each
//!   judged at their own exec.
//!
//! Where a file is ([`Places`]): beneath the workspace, beneath a writable
//! temporary directory (the session's `TMPDIR`, and `/tmp` where the profile
//! makes it writable), a memfd or a deleted file, or a file whose inode
//! changed since the session started (anywhere: a cache of `dev` that held
//! tools before the session keeps them trusted, what the session writes
//! there is not).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use aq_policy::exec_trust::{ExecPath, TrustedExec};
use sha2::{Digest, Sha256};

use crate::dir_stamps::DirStamp;

/// Programs recognised by content when copied or renamed: those the rules
/// care about most (network fetchers, shells, interpreters, encoders). The
/// `aq-knowledge` table adds the rest of the programs the rules know.
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
    "find",
    "shred",
    "mv",
    "cp",
    "ln",
    "chown",
    "kill",
    "pkill",
    "truncate",
    "wipefs",
];

/// What is indexed: [`KNOWN_TOOLS`] first (their names win for a file seen
/// under several names), then the programs of the `aq-knowledge` table;
/// looked up without a set of a thousand names: `KNOWN_TOOLS` sorted aside,
/// the table's names sorted, both binary-searched.
struct IndexedNames {
    /// `KNOWN_TOOLS` sorted, with each one's place in it.
    first: Vec<&'static str>,
    first_at: Vec<usize>,
    /// The table's names without a `/`, sorted.
    table: Vec<&'static str>,
}

impl IndexedNames {
    fn new() -> IndexedNames {
        let mut first: Vec<(&'static str, usize)> = KNOWN_TOOLS
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, i))
            .collect();
        first.sort();
        // The first place of a name listed twice.
        first.dedup_by_key(|(n, _)| *n);
        let mut table: Vec<&'static str> = aq_knowledge::programs::names()
            .filter(|n| !n.contains('/'))
            .collect();
        table.sort_unstable();
        table.dedup();
        IndexedNames {
            first_at: first.iter().map(|(_, i)| *i).collect(),
            first: first.into_iter().map(|(n, _)| n).collect(),
            table,
        }
    }

    /// Every indexed name, in order.
    fn all(&self) -> Vec<&'static str> {
        let mut all: Vec<&'static str> = KNOWN_TOOLS.to_vec();
        all.extend(
            self.table
                .iter()
                .copied()
                .filter(|n| self.first.binary_search(n).is_err()),
        );
        all
    }

    /// `name`'s spelling and place among the indexed names (a key that
    /// sorts as [`IndexedNames::all`] does), if it is one.
    fn place(&self, name: &str) -> Option<(usize, &'static str)> {
        if let Ok(i) = self.first.binary_search(&name) {
            return Some((self.first_at[i], self.first[i]));
        }
        let j = self.table.binary_search(&name).ok()?;
        Some((KNOWN_TOOLS.len() + j, self.table[j]))
    }
}

/// A known tool's file and name.
type Candidate = (PathBuf, &'static str);

/// A file as it is now: device, inode, size, modification and change time
/// (nanoseconds). Anything written to it changes the change time.
type Version = (u64, u64, u64, i128, i128);

fn version_of(m: &std::fs::Metadata) -> Version {
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    (
        m.dev(),
        m.ino(),
        m.size(),
        ns(m.mtime(), m.mtime_nsec()),
        ns(m.ctime(), m.ctime_nsec()),
    )
}

/// Which known names each directory of the `PATH` held when it was last
/// listed, kept in aq's state directory between sessions
/// ([`Identifier::remembered`]): listing `/usr/bin` and matching a thousand
/// names against it was most of a session's index.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ToolDirsRecord {
    /// Digest of the names this build indexes: another build lists again.
    names: String,
    dirs: Vec<ToolDir>,
}

#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct ToolDir {
    path: PathBuf,
    stamp: DirStamp,
    /// The known names it held (only those: not the whole listing).
    tools: Vec<ToolEntry>,
}

/// A known name a directory held.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct ToolEntry {
    name: String,
    /// A symbolic link, followed again at each start.
    link: bool,
    /// The file it named (none for a link, or what is not a regular file).
    version: Option<Version>,
}

/// How far the ELF parser reads into a file for its headers and notes.
const ELF_HEAD: usize = 64 * 1024;
/// At most this many program headers are looked at.
const MAX_PHDRS: usize = 128;

/// What the first pages of a file say about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ElfFacts {
    /// It starts with the ELF magic: a native program.
    pub native: bool,
    /// The descriptor of its GNU (or Go) build-id note.
    pub build_id: Option<Vec<u8>>,
    /// Its executable `PT_LOAD` segments in the file: (offset, size).
    pub code: Vec<(u64, u64)>,
}

impl ElfFacts {
    /// Bytes of code in the file.
    pub(crate) fn code_size(&self) -> u64 {
        self.code.iter().map(|(_, n)| n).sum()
    }
}

/// Parse the ELF header, program headers and notes of `head` (the first
/// bytes of a file; 64-bit little-endian only, as the guard's filters run
/// no other native code). Pure: nothing is read past `head`.
pub(crate) fn parse_elf(head: &[u8]) -> ElfFacts {
    let mut facts = ElfFacts {
        native: head.starts_with(b"\x7fELF"),
        ..ElfFacts::default()
    };
    if !facts.native || head.len() < 64 || head[4] != 2 || head[5] != 1 {
        return facts;
    }
    let u16_at = |o: usize| head.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| {
        head.get(o..o + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
    };
    let u64_at = |o: usize| {
        head.get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
    };
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38))
    else {
        return facts;
    };
    let (phoff, phentsize) = (phoff as usize, phentsize as usize);
    if phentsize < 56 {
        return facts;
    }
    for i in 0..usize::from(phnum).min(MAX_PHDRS) {
        let at = phoff.saturating_add(i * phentsize);
        let (Some(kind), Some(flags), Some(offset), Some(size)) =
            (u32_at(at), u32_at(at + 4), u64_at(at + 8), u64_at(at + 32))
        else {
            break;
        };
        const PT_LOAD: u32 = 1;
        const PT_NOTE: u32 = 4;
        const PF_X: u32 = 1;
        match kind {
            PT_LOAD if flags & PF_X != 0 && size > 0 => facts.code.push((offset, size)),
            PT_NOTE if facts.build_id.is_none() => {
                facts.build_id = build_id_note(head, offset as usize, size as usize);
            }
            _ => {}
        }
    }
    facts
}

/// The build id in the notes at `head[offset..offset + size]`.
fn build_id_note(head: &[u8], offset: usize, size: usize) -> Option<Vec<u8>> {
    let notes = head.get(offset..offset.checked_add(size)?)?;
    let align = |n: usize| n.div_ceil(4) * 4;
    let mut at = 0;
    while at + 12 <= notes.len() {
        let word = |o: usize| u32::from_le_bytes(notes[o..o + 4].try_into().unwrap_or_default());
        let (namesz, descsz, kind) = (word(at) as usize, word(at + 4) as usize, word(at + 8));
        let name_at = at + 12;
        let desc_at = name_at.checked_add(align(namesz))?;
        let end = desc_at.checked_add(align(descsz))?;
        let name = notes.get(name_at..name_at + namesz)?;
        let desc = notes.get(desc_at..desc_at + descsz)?;
        const NT_GNU_BUILD_ID: u32 = 3;
        const NT_GO_BUILD_ID: u32 = 4;
        if (kind == NT_GNU_BUILD_ID && name == b"GNU\0")
            || (kind == NT_GO_BUILD_ID && name == b"Go\0\0")
        {
            return (!desc.is_empty()).then(|| desc.to_vec());
        }
        at = end;
    }
    None
}

/// How a program was recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kin {
    /// The tool itself, a hard link to it or an exact copy.
    Same,
    /// An altered copy: the same build id or the same code, other bytes.
    Altered,
    /// Not a known tool.
    Unknown,
}

/// What the guard judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identified {
    /// The argv to judge: the tool's name first.
    pub argv: Vec<String>,
    /// How the name was found, for the log: `name`, `inode`, `content`,
    /// `build-id`, `code`, `applet`.
    pub how: &'static str,
    /// Whether that name is a known tool's, and how closely.
    pub kin: Kin,
}

/// The exec as the identifier needs it: which file (by the device and inode
/// the guard opened) and how to reach it again.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The file that runs, as the guard resolved it.
    pub executable: &'a Path,
    /// Its device and inode.
    pub dev_ino: (u64, u64),
    /// The process that execs (the host's pid).
    pub pid: u32,
    /// The exec is committed (the process is stopped at its exec):
    /// `/proc/<pid>/exe` is the file.
    pub at_commit: bool,
}

impl Subject<'_> {
    /// The file and its metadata, `None` when it cannot be reached. Opened
    /// by path only when the path still leads to the same inode; a memfd, a
    /// deleted file (or a path swapped meanwhile) is reached through the
    /// process: `/proc/<pid>/exe` once committed, else the descriptor it
    /// execs from.
    pub fn open(&self) -> Option<(File, std::fs::Metadata)> {
        let same = |f: File| -> Option<(File, std::fs::Metadata)> {
            let m = f.metadata().ok()?;
            ((m.dev(), m.ino()) == self.dev_ino && m.is_file()).then_some((f, m))
        };
        if self.at_commit
            && let Some(f) = File::open(format!("/proc/{}/exe", self.pid))
                .ok()
                .and_then(same)
        {
            return Some(f);
        }
        if !is_anonymous(self.executable)
            && let Some(f) = File::open(self.executable).ok().and_then(same)
        {
            return Some(f);
        }
        // `fexecve`, `execveat(fd, "", AT_EMPTY_PATH)`: the descriptor.
        let fds = std::fs::read_dir(format!("/proc/{}/fd", self.pid)).ok()?;
        fds.flatten()
            .filter(|e| {
                std::fs::metadata(e.path()).is_ok_and(|m| (m.dev(), m.ino()) == self.dev_ino)
            })
            .find_map(|e| File::open(e.path()).ok().and_then(same))
    }

    /// The metadata alone (a `stat` of the path when it leads to the same
    /// inode: the cheap way, for every exec).
    pub fn metadata(&self) -> Option<std::fs::Metadata> {
        if !self.at_commit
            && !is_anonymous(self.executable)
            && let Ok(m) = std::fs::metadata(self.executable)
            && (m.dev(), m.ino()) == self.dev_ino
        {
            return Some(m);
        }
        self.open().map(|(_, m)| m)
    }
}

/// A memfd (`/memfd:NAME (deleted)`) or a file removed since it was opened.
fn is_anonymous(path: &Path) -> bool {
    let s = path.as_os_str().to_string_lossy();
    s.starts_with("/memfd:") || s.ends_with(" (deleted)")
}

/// Content hashes by file version.
type HashCache = HashMap<Version, [u8; 32]>;

/// The indexed tools by what an altered copy keeps.
#[derive(Default)]
struct ElfIndex {
    /// ELF build id → name.
    by_build_id: HashMap<Vec<u8>, &'static str>,
    /// Bytes of code → [(path, name)], to hash only same-size code.
    by_code_size: HashMap<u64, Vec<Candidate>>,
}

/// Identifies executables; shared by every exec the guard sees.
pub struct Identifier {
    /// Known tools on this host: (dev, ino) → name.
    by_inode: HashMap<(u64, u64), &'static str>,
    /// size → [(path, name)], to hash only same-size candidates.
    by_size: HashMap<u64, Vec<Candidate>>,
    /// The indexed tools with their version when the index was made: what
    /// [`Identifier::elf_index`] reads, the first time an altered copy is
    /// looked for.
    tools: Vec<(PathBuf, &'static str, Version)>,
    /// Build ids and code sizes of the indexed tools, read on first need:
    /// most sessions never run a native program from a writable place, and
    /// reading the first pages of a few hundred tools at every start cost
    /// more than the rest of the index.
    elf: std::sync::OnceLock<ElfIndex>,
    /// Whole-file hashes.
    hashes: Mutex<HashCache>,
    /// Hashes of the executable segments.
    code_hashes: Mutex<HashCache>,
    /// ELF facts of the files looked into.
    facts: Mutex<HashMap<Version, Arc<ElfFacts>>>,
}

impl Identifier {
    /// Index the known tools found in `path_dirs`: each directory listed
    /// once, a `stat` of each known name it holds, then the first pages of
    /// each file found. A directory named twice (`/bin` is `/usr/bin` on most
    /// systems) is looked in once. Listing, not a `stat` per name: the rules
    /// know about a thousand names, most absent from any one directory, and
    /// this runs at every session start.
    pub fn new<'a>(path_dirs: impl IntoIterator<Item = &'a Path>) -> Identifier {
        Identifier::listing(path_dirs, None).0
    }

    /// [`Identifier::new`], taking which known names a directory holds,
    /// and the files they name, from `record` (what the last session saw)
    /// where the directory is unchanged since: same device, inode,
    /// modification and change time (kept only for a directory on a local
    /// file system, unchanged for two seconds when it was listed). Adding,
    /// removing or renaming an entry changes the last two, so an entry that
    /// is not a symbolic link still names the same file; a link is followed
    /// again, since where it leads can change unseen. A file written in
    /// place since keeps its inode (and its name here) but not its version,
    /// so [`Identifier::elf_index`] leaves it out, as it does a tool changed
    /// during a session. A name the record holds that is no known name is
    /// nothing. Returns the record to keep for the next session.
    pub fn remembered<'a>(
        path_dirs: impl IntoIterator<Item = &'a Path>,
        record: Option<&ToolDirsRecord>,
    ) -> (Identifier, ToolDirsRecord) {
        Identifier::listing(path_dirs, Some(record))
    }

    fn listing<'a>(
        path_dirs: impl IntoIterator<Item = &'a Path>,
        record: Option<Option<&ToolDirsRecord>>,
    ) -> (Identifier, ToolDirsRecord) {
        let places = IndexedNames::new();
        let names = places.all();
        let digest = crate::dir_stamps::names_digest(&names);
        let known = record
            .flatten()
            .filter(|r| r.names == digest)
            .map(|r| &r.dirs[..])
            .unwrap_or_default();
        let mut kept = ToolDirsRecord {
            names: digest,
            dirs: Vec::new(),
        };
        let mut id = Identifier {
            by_inode: HashMap::new(),
            by_size: HashMap::new(),
            tools: Vec::new(),
            elf: std::sync::OnceLock::new(),
            hashes: Mutex::new(HashMap::new()),
            code_hashes: Mutex::new(HashMap::new()),
            facts: Mutex::new(HashMap::new()),
        };
        let now = SystemTime::now();
        let mut dirs_seen = std::collections::HashSet::new();
        for dir in path_dirs {
            let Ok(meta) = std::fs::metadata(dir) else {
                continue;
            };
            if !dirs_seen.insert((meta.dev(), meta.ino())) {
                continue;
            }
            let stamp = DirStamp::of(&meta);
            let remembered = known.iter().find(|d| d.path == dir && d.stamp == stamp);
            let candidates = match remembered {
                Some(d) => recalled(dir, &d.tools, &places),
                None => {
                    let Ok(entries) = std::fs::read_dir(dir) else {
                        continue;
                    };
                    listed(dir, entries, &names)
                }
            };
            for c in &candidates {
                let Some(version) = c.version else {
                    continue;
                };
                let (dev, ino, size, ..) = version;
                // The first name found for an inode wins (python3 before python);
                // a file seen before (another link to it) is a candidate once.
                let std::collections::hash_map::Entry::Vacant(e) = id.by_inode.entry((dev, ino))
                else {
                    continue;
                };
                e.insert(c.name);
                let p = dir.join(c.name);
                id.by_size
                    .entry(size)
                    .or_default()
                    .push((p.clone(), c.name));
                id.tools.push((p, c.name, version));
            }
            // A directory changed in the last seconds may change again
            // within the same timestamp, and one on a file system that may
            // not keep its times the kernel's way (FUSE, NFS) may change
            // unseen: either is listed again next time.
            if stamp.keepable(dir, now) {
                kept.dirs.push(ToolDir {
                    path: dir.to_path_buf(),
                    stamp,
                    tools: candidates
                        .into_iter()
                        .map(|c| ToolEntry {
                            name: c.name.to_string(),
                            link: c.link,
                            version: if c.link { None } else { c.version },
                        })
                        .collect(),
                });
            }
        }
        (id, kept)
    }
}

/// A known name a directory holds: the file it names now (`None`: not a
/// regular file, or gone), and whether the entry is a symbolic link.
struct Found {
    name: &'static str,
    link: bool,
    version: Option<Version>,
}

/// The version of the file `path` leads to now, if it is a regular file
/// (one `stat`, following links).
fn file_version(path: &Path) -> Option<Version> {
    std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| version_of(&m))
}

/// The known names among `entries` of `dir`, in `names`' order, each
/// `stat`ed.
fn listed(dir: &Path, entries: std::fs::ReadDir, names: &[&'static str]) -> Vec<Found> {
    let present: HashMap<std::ffi::OsString, bool> = entries
        .flatten()
        .map(|e| {
            let link = e.file_type().is_ok_and(|t| t.is_symlink());
            (e.file_name(), link)
        })
        .collect();
    names
        .iter()
        .filter_map(|name| {
            let link = *present.get(OsStr::new(name))?;
            Some(Found {
                name,
                link,
                version: file_version(&dir.join(name)),
            })
        })
        .collect()
}

/// The known names the record of `dir` (unchanged since) holds, in
/// `names`' order. An entry that is not a symbolic link names the same
/// file as long as the directory is unchanged (renaming, linking or
/// removing an entry changes it), so its recorded version stands; a link
/// may lead elsewhere now and is `stat`ed again. A name that is no known
/// name is nothing.
fn recalled(dir: &Path, tools: &[ToolEntry], names: &IndexedNames) -> Vec<Found> {
    let mut found: Vec<(usize, Found)> = tools
        .iter()
        .filter_map(|t| {
            let (place, name) = names.place(&t.name)?;
            let version = if t.link {
                file_version(&dir.join(name))
            } else {
                t.version
            };
            Some((
                place,
                Found {
                    name,
                    link: t.link,
                    version,
                },
            ))
        })
        .collect();
    found.sort_by_key(|(place, _)| *place);
    found.dedup_by_key(|(place, _)| *place);
    found.into_iter().map(|(_, f)| f).collect()
}

impl Identifier {
    /// Build ids and code sizes of the indexed tools, read once. A tool
    /// whose file changed since the index was made is left out: the index
    /// says what was installed when the session started.
    fn elf_index(&self) -> &ElfIndex {
        self.elf.get_or_init(|| {
            let mut elf = ElfIndex::default();
            for (path, name, version) in &self.tools {
                let Some((file, m)) = File::open(path)
                    .ok()
                    .and_then(|f| Some((f.metadata().ok()?, f)))
                    .map(|(m, f)| (f, m))
                else {
                    continue;
                };
                if version_of(&m) != *version {
                    continue;
                }
                let facts = self.facts_of(&file, &m);
                if let Some(b) = &facts.build_id {
                    elf.by_build_id.entry(b.clone()).or_insert(name);
                }
                if facts.code_size() > 0 {
                    elf.by_code_size
                        .entry(facts.code_size())
                        .or_default()
                        .push((path.clone(), *name));
                }
            }
            elf
        })
    }

    /// How many files are indexed (for the benchmark and the tests).
    pub fn len(&self) -> usize {
        self.by_inode.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.by_inode.is_empty()
    }

    /// Whether `dev_ino` is one of the known tools found on the host's
    /// `PATH` (the same file), not a copy elsewhere.
    pub fn is_installed(&self, dev_ino: (u64, u64)) -> bool {
        self.by_inode.contains_key(&dev_ino)
    }

    /// The argv to judge for `subject` run with `argv`. `deep`: the file is
    /// where the session can write, so an altered copy is looked for too
    /// (the file's first pages are read, once per version of the file).
    /// Returns also the file's ELF facts when they were read.
    pub fn identify(
        &self,
        subject: &Subject<'_>,
        argv: &[String],
        deep: bool,
    ) -> (Identified, Option<Arc<ElfFacts>>) {
        let file_name = subject
            .executable
            .file_name()
            .map(OsStr::to_string_lossy)
            .unwrap_or_default()
            .into_owned();
        let (found, facts) = self.known_by_identity(subject, deep);
        let (name, how, kin) = match found {
            Some((tool, how, kin)) => (tool.to_string(), how, kin),
            None => (file_name, "name", Kin::Unknown),
        };
        let rest = argv.get(1..).unwrap_or_default();
        if name == "busybox" {
            let arg0 = argv.first().map(|a| base_name(a)).unwrap_or_default();
            let applet = if !arg0.is_empty() && arg0 != "busybox" {
                Some(std::iter::once(arg0).chain(rest.iter().cloned()).collect())
            } else {
                rest.split_first().map(|(applet, tail)| {
                    std::iter::once(base_name(applet))
                        .chain(tail.iter().cloned())
                        .collect()
                })
            };
            if let Some(argv) = applet {
                let how = if kin == Kin::Same { "applet" } else { how };
                return (Identified { argv, how, kin }, facts);
            }
        }
        let argv = std::iter::once(name).chain(rest.iter().cloned()).collect();
        (Identified { argv, how, kin }, facts)
    }

    /// A known tool by inode (hard link, the file itself), by content (a
    /// copy), or, when `deep`, by build id or code (an altered copy).
    #[allow(clippy::type_complexity)]
    fn known_by_identity(
        &self,
        subject: &Subject<'_>,
        deep: bool,
    ) -> (
        Option<(&'static str, &'static str, Kin)>,
        Option<Arc<ElfFacts>>,
    ) {
        if let Some(name) = self.by_inode.get(&subject.dev_ino) {
            let same_name = subject.executable.file_name() == Some(OsStr::new(name));
            return (
                Some((name, if same_name { "name" } else { "inode" }, Kin::Same)),
                None,
            );
        }
        let opened = if deep {
            subject.open()
        } else {
            // Only a same-size candidate makes the file worth opening.
            subject
                .metadata()
                .filter(|m| self.by_size.contains_key(&m.size()))
                .and_then(|_| subject.open())
        };
        let Some((file, meta)) = opened else {
            return (None, None);
        };
        if let Some(candidates) = self.by_size.get(&meta.size())
            && let Some(digest) = self.hash(&file, &meta)
        {
            for (path, name) in candidates {
                let same = File::open(path)
                    .ok()
                    .and_then(|f| Some((f.metadata().ok()?, f)))
                    .and_then(|(pm, f)| self.hash(&f, &pm));
                if same == Some(digest) {
                    return (Some((name, "content", Kin::Same)), None);
                }
            }
        }
        if !deep {
            return (None, None);
        }
        let facts = self.facts_of(&file, &meta);
        if let Some(name) = facts
            .build_id
            .as_ref()
            .and_then(|b| self.elf_index().by_build_id.get(b))
        {
            return (Some((name, "build-id", Kin::Altered)), Some(facts));
        }
        if let Some(candidates) = self.elf_index().by_code_size.get(&facts.code_size())
            && let Some(digest) = self.code_hash(&file, &meta, &facts)
        {
            for (path, name) in candidates {
                let same = File::open(path).ok().and_then(|f| {
                    let pm = f.metadata().ok()?;
                    let pf = self.facts_of(&f, &pm);
                    self.code_hash(&f, &pm, &pf)
                });
                if same == Some(digest) {
                    return (Some((name, "code", Kin::Altered)), Some(facts));
                }
            }
        }
        (None, Some(facts))
    }

    /// The ELF facts of `file`, cached by its version.
    fn facts_of(&self, file: &File, meta: &std::fs::Metadata) -> Arc<ElfFacts> {
        let key = version_of(meta);
        if let Some(f) = self.facts.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return f;
        }
        let mut head = vec![0u8; ELF_HEAD.min(meta.size() as usize)];
        let n = read_at(file, &mut head, 0);
        head.truncate(n);
        let facts = Arc::new(parse_elf(&head));
        if let Ok(mut c) = self.facts.lock() {
            c.insert(key, facts.clone());
        }
        facts
    }

    fn hash(&self, file: &File, m: &std::fs::Metadata) -> Option<[u8; 32]> {
        let key = version_of(m);
        if let Some(h) = self.hashes.lock().ok()?.get(&key) {
            return Some(*h);
        }
        let digest = sha256_of(file, &[(0, m.size())])?;
        self.hashes.lock().ok()?.insert(key, digest);
        Some(digest)
    }

    fn code_hash(&self, file: &File, m: &std::fs::Metadata, facts: &ElfFacts) -> Option<[u8; 32]> {
        let key = version_of(m);
        if let Some(h) = self.code_hashes.lock().ok()?.get(&key) {
            return Some(*h);
        }
        let digest = sha256_of(file, &facts.code)?;
        self.code_hashes.lock().ok()?.insert(key, digest);
        Some(digest)
    }
}

/// SHA-256 of the byte ranges `(offset, length)` of `file`, in order;
/// `None` if any is short.
fn sha256_of(file: &File, ranges: &[(u64, u64)]) -> Option<[u8; 32]> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    for &(offset, len) in ranges {
        let mut done = 0u64;
        while done < len {
            let want = buf.len().min((len - done) as usize);
            let n = read_at(file, &mut buf[..want], offset + done);
            if n == 0 {
                return None;
            }
            hasher.update(&buf[..n]);
            done += n as u64;
        }
    }
    Some(hasher.finalize().into())
}

/// `pread` until `buf` is full or the file ends; how many bytes were read.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> usize {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    got
}

/// Where an executable is, when the session can write there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Beneath the workspace.
    Workspace,
    /// Beneath a writable temporary directory (the session's `TMPDIR`, `/tmp`
    /// in `dev`).
    Temporary,
    /// A memfd: its content can change while it runs (it is never
    /// `ETXTBSY`), so it always asks.
    Memfd,
    /// A file removed since it was opened.
    Deleted,
    /// Anywhere else, its inode changed since the session started.
    ChangedDuringSession,
}

impl Place {
    /// As logged and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Place::Workspace => "workspace",
            Place::Temporary => "temporary directory",
            Place::Memfd => "memfd",
            Place::Deleted => "deleted file",
            Place::ChangedDuringSession => "changed during the session",
        }
    }
}

/// The places of one session, and the build outputs it trusts.
pub struct Places {
    workspace: PathBuf,
    tmpdir: Option<PathBuf>,
    /// Writable temporary directories (the session's `TMPDIR` first).
    temporary: Vec<PathBuf>,
    /// Files whose inode changed after this were written during the session.
    started: SystemTime,
    trusted: TrustedExec,
}

/// Temporary directories of the system: writable ones among the sandbox's
/// writable paths are temporary places.
const SYSTEM_TEMP: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

/// Change times this much before the session started still count as the
/// session's (the kernel stamps files from a coarse clock).
const CLOCK_SLACK: Duration = Duration::from_secs(2);

impl Places {
    /// The places of a session in `workspace` whose sandbox may write
    /// `writable` (real paths, as Landlock has them) and whose `TMPDIR` is
    /// `tmpdir`, started at `started`; `trusted_exec` and the home for its
    /// `~/` entries.
    pub fn new(
        workspace: &Path,
        writable: &[PathBuf],
        tmpdir: Option<&Path>,
        started: SystemTime,
        trusted_exec: &[String],
        home: Option<&str>,
    ) -> Places {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let tmpdir = tmpdir.map(canon);
        let mut temporary: Vec<PathBuf> = tmpdir.iter().cloned().collect();
        for w in writable {
            if SYSTEM_TEMP.iter().any(|t| w.starts_with(t)) && !temporary.contains(w) {
                temporary.push(w.clone());
            }
        }
        Places {
            workspace: canon(workspace),
            tmpdir,
            temporary,
            started: started.checked_sub(CLOCK_SLACK).unwrap_or(started),
            trusted: TrustedExec::new(trusted_exec, home),
        }
    }

    /// Where `executable` is, if the session can have written it; `meta`
    /// is its metadata when it could be read.
    pub fn classify(&self, executable: &Path, meta: Option<&std::fs::Metadata>) -> Option<Place> {
        let s = executable.as_os_str().to_string_lossy();
        if s.starts_with("/memfd:") {
            return Some(Place::Memfd);
        }
        if s.ends_with(" (deleted)") {
            return Some(Place::Deleted);
        }
        if executable.starts_with(&self.workspace) {
            return Some(Place::Workspace);
        }
        if self.temporary.iter().any(|t| executable.starts_with(t)) {
            return Some(Place::Temporary);
        }
        let changed = meta.map(|m| {
            SystemTime::UNIX_EPOCH
                + Duration::new(
                    m.ctime().max(0) as u64,
                    m.ctime_nsec().clamp(0, 999_999_999) as u32,
                )
        });
        match changed {
            Some(t) if t >= self.started => Some(Place::ChangedDuringSession),
            // Unreadable: fail closed.
            None => Some(Place::ChangedDuringSession),
            Some(_) => None,
        }
    }

    /// The `trusted_exec` entry covering `executable`, if any (never a
    /// memfd or a deleted file).
    pub fn trusted_by(&self, executable: &Path) -> Option<&str> {
        if is_anonymous(executable) {
            return None;
        }
        let abs = executable.to_str()?;
        let rel = |root: &Path| {
            executable
                .strip_prefix(root)
                .ok()
                .and_then(Path::to_str)
                .filter(|r| !r.is_empty())
        };
        self.trusted.covering(&ExecPath {
            absolute: abs,
            in_workspace: rel(&self.workspace),
            in_tmpdir: self.tmpdir.as_deref().and_then(rel),
        })
    }

    /// Whether `executable` is beneath the workspace or a writable
    /// temporary directory (its path only).
    pub(crate) fn beneath_writable(&self, executable: &Path) -> bool {
        executable.starts_with(&self.workspace)
            || self.temporary.iter().any(|t| executable.starts_with(t))
    }
}

/// The session's [`Identifier`], indexed when the first exec needs it
/// (with the last session's record of the directories, when there is
/// one). Indexed on a thread from the sandbox's start instead, beside the
/// sandbox's own setup, a strict start was 0.5 ms slower (300 pairs, two
/// vCPUs): the thread competed for the CPU the setup needed and was not
/// free to start, and the record makes the index a quarter of a
/// millisecond of work.
pub(crate) struct ToolIndex {
    dirs: Vec<PathBuf>,
    /// Where the record of the directories is kept, if anywhere.
    record: Option<PathBuf>,
    ready: std::sync::OnceLock<Identifier>,
}

impl ToolIndex {
    /// The known tools in `dirs`, listed in full.
    pub fn new(dirs: Vec<PathBuf>) -> ToolIndex {
        ToolIndex::with(dirs, None)
    }

    /// [`ToolIndex::new`], sparing the listing of the directories
    /// unchanged since the record at `record` was kept, and keeping a new
    /// one there ([`Identifier::remembered`]).
    pub fn remembered(dirs: Vec<PathBuf>, record: PathBuf) -> ToolIndex {
        ToolIndex::with(dirs, Some(record))
    }

    fn with(dirs: Vec<PathBuf>, record: Option<PathBuf>) -> ToolIndex {
        ToolIndex {
            dirs,
            record,
            ready: std::sync::OnceLock::new(),
        }
    }

    /// The index, built by the first caller (the others wait for it).
    pub fn get(&self) -> &Identifier {
        self.ready
            .get_or_init(|| index(&self.dirs, self.record.as_deref()))
    }
}

/// The index of `dirs`, with the record at `record` when there is one.
fn index(dirs: &[PathBuf], record: Option<&Path>) -> Identifier {
    let Some(path) = record else {
        return Identifier::new(dirs.iter().map(PathBuf::as_path));
    };
    let old = crate::state_records::load::<ToolDirsRecord>(path);
    let (id, new) = Identifier::remembered(dirs.iter().map(PathBuf::as_path), old.as_ref());
    if old.as_ref().is_none_or(|o| o.dirs != new.dirs) {
        crate::state_records::save(path, &new);
    }
    id
}

fn base_name(arg: &str) -> String {
    Path::new(arg)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| arg.to_string())
}

/// Reads the whole of `path` (tests and the benchmark).
#[doc(hidden)]
pub fn read_all(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut v = Vec::new();
    File::open(path)?.read_to_end(&mut v)?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn dev_ino(p: &Path) -> (u64, u64) {
        let m = std::fs::metadata(p).unwrap();
        (m.dev(), m.ino())
    }

    fn subject(p: &Path) -> Subject<'_> {
        Subject {
            executable: p,
            dev_ino: dev_ino(p),
            pid: std::process::id(),
            at_commit: false,
        }
    }

    fn identify(id: &Identifier, p: &Path, args: &[&str]) -> Identified {
        id.identify(&subject(p), &argv(args), true).0
    }

    /// A small ELF64 file: header, two program headers (code, notes) and a
    /// GNU build-id note, then `code`.
    fn elf(build_id: &[u8], code: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 64];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        f[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        f[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        f[0x38..0x3a].copy_from_slice(&2u16.to_le_bytes());
        let note_at = 64 + 2 * 56;
        let mut note = Vec::new();
        note.extend(4u32.to_le_bytes());
        note.extend((build_id.len() as u32).to_le_bytes());
        note.extend(3u32.to_le_bytes());
        note.extend(b"GNU\0");
        note.extend(build_id);
        while note.len() % 4 != 0 {
            note.push(0);
        }
        let code_at = note_at + note.len();
        let phdr = |kind: u32, flags: u32, offset: usize, size: usize| {
            let mut p = vec![0u8; 56];
            p[..4].copy_from_slice(&kind.to_le_bytes());
            p[4..8].copy_from_slice(&flags.to_le_bytes());
            p[8..16].copy_from_slice(&(offset as u64).to_le_bytes());
            p[32..40].copy_from_slice(&(size as u64).to_le_bytes());
            p
        };
        f.extend(phdr(1, 5, code_at, code.len()));
        f.extend(phdr(4, 4, note_at, note.len()));
        f.extend(note);
        f.extend(code);
        f
    }

    /// A fake tool directory: "curl", "busybox" and "rm" are small ELF
    /// files here, "ls" is not a tool the rules single out.
    fn host() -> (tempfile::TempDir, Identifier) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("curl"), elf(b"curl-id", b"curl code")).unwrap();
        std::fs::write(
            dir.path().join("busybox"),
            elf(b"bb-id", b"busybox code, longer"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("rm"),
            elf(b"rm-build-id", b"the code of rm"),
        )
        .unwrap();
        std::fs::write(dir.path().join("frobnicate"), b"\x7fELF fake frobnicate").unwrap();
        let id = Identifier::new([dir.path()]);
        (dir, id)
    }

    #[test]
    fn elf_headers_give_the_build_id_and_the_code() {
        let f = elf(b"\x01\x02\x03", b"CODE");
        let facts = parse_elf(&f);
        assert!(facts.native);
        assert_eq!(facts.build_id.as_deref(), Some(&b"\x01\x02\x03"[..]));
        assert_eq!(facts.code_size(), 4);
        let (at, n) = facts.code[0];
        assert_eq!(&f[at as usize..(at + n) as usize], b"CODE");
        // Truncated or foreign files say only what they can.
        assert_eq!(parse_elf(&f[..40]).build_id, None);
        assert!(!parse_elf(b"#!/bin/sh\n").native);
        let mut be = f.clone();
        be[5] = 2;
        assert_eq!(
            parse_elf(&be),
            ElfFacts {
                native: true,
                ..ElfFacts::default()
            }
        );
        // The real thing, where there is one: this test binary has a build id.
        let me = read_all(&std::env::current_exe().unwrap()).unwrap();
        let facts = parse_elf(&me[..ELF_HEAD.min(me.len())]);
        assert!(facts.native && facts.code_size() > 0, "{facts:?}");
    }

    #[test]
    fn a_renamed_copy_is_known_by_content() {
        let (dir, id) = host();
        let copy = dir.path().join("c");
        std::fs::copy(dir.path().join("curl"), &copy).unwrap();
        let got = identify(&id, &copy, &["./c", "https://example.invalid/"]);
        assert_eq!(got.argv, argv(&["curl", "https://example.invalid/"]));
        assert_eq!((got.how, got.kin), ("content", Kin::Same));
    }

    #[test]
    fn an_altered_copy_is_known_by_build_id_then_by_code() {
        let (dir, id) = host();
        // One byte appended: same build id.
        let r = dir.path().join("r");
        let mut bytes = std::fs::read(dir.path().join("rm")).unwrap();
        bytes.push(b'x');
        std::fs::write(&r, &bytes).unwrap();
        let got = identify(&id, &r, &["./r", "-rf", ".git/objects"]);
        assert_eq!(got.argv, argv(&["rm", "-rf", ".git/objects"]));
        assert_eq!((got.how, got.kin), ("build-id", Kin::Altered));
        // The build id patched too: the same code.
        let at = bytes.windows(11).position(|w| w == b"rm-build-id").unwrap();
        bytes[at..at + 2].copy_from_slice(b"xx");
        let r2 = dir.path().join("r2");
        std::fs::write(&r2, &bytes).unwrap();
        let got = identify(&id, &r2, &["./r2", "-rf", "x"]);
        assert_eq!(
            (got.argv[0].as_str(), got.how, got.kin),
            ("rm", "code", Kin::Altered)
        );
        // Not looked for unless asked to (a file the session cannot write).
        let shallow = id.identify(&subject(&r), &argv(&["./r"]), false).0;
        assert_eq!((shallow.argv[0].as_str(), shallow.kin), ("r", Kin::Unknown));
    }

    #[test]
    fn a_tool_rewritten_after_the_start_is_not_what_altered_copies_are_known_by() {
        // The ELF facts are read when first needed; by then `rm` was rewritten
        // (by the session, say) into something else: the index still says
        // what was installed at the start, so a copy of the new content is
        // not taken for `rm`.
        let (dir, id) = host();
        let planted = elf(b"planted-id", b"planted code");
        std::fs::write(dir.path().join("rm"), &planted).unwrap();
        let copy = dir.path().join("c");
        let mut bytes = planted.clone();
        bytes.push(b'x');
        std::fs::write(&copy, &bytes).unwrap();
        let got = identify(&id, &copy, &["./c"]);
        assert_eq!((got.argv[0].as_str(), got.kin), ("c", Kin::Unknown));
        // Control: a tool left as it was is still found by build id.
        let mut curl = std::fs::read(dir.path().join("curl")).unwrap();
        curl.push(b'x');
        let c2 = dir.path().join("c2");
        std::fs::write(&c2, &curl).unwrap();
        let got = identify(&id, &c2, &["./c2"]);
        assert_eq!((got.argv[0].as_str(), got.how), ("curl", "build-id"));
    }

    /// `dir`'s modification time an hour back, as a directory nobody
    /// changed lately has.
    fn settle(dir: &Path) {
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        File::open(dir).unwrap().set_modified(hour_ago).unwrap();
    }

    fn indexed(id: &Identifier) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = id.by_inode.values().copied().collect();
        v.sort();
        v
    }

    #[test]
    fn a_remembered_listing_gives_the_same_index_and_spares_the_listing() {
        let (dir, fresh) = host();
        settle(dir.path());
        let (first, record) = Identifier::remembered([dir.path()], None);
        assert_eq!(indexed(&first), indexed(&fresh));
        assert_eq!(indexed(&first), ["busybox", "curl", "rm"]);
        // Only known names are kept, not the whole listing.
        assert_eq!(record.dirs.len(), 1);
        let mut kept: Vec<&str> = record.dirs[0]
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        kept.sort();
        assert_eq!(kept, ["busybox", "curl", "rm"]);
        let (again, record2) = Identifier::remembered([dir.path()], Some(&record));
        assert_eq!(indexed(&again), indexed(&fresh));
        assert_eq!(record2.dirs, record.dirs);
        // The listing is what the record spares: a record that leaves a
        // name out of an unchanged directory leaves that tool out.
        let mut partial = record;
        partial.dirs[0].tools.retain(|t| t.name != "rm");
        let (spared, _) = Identifier::remembered([dir.path()], Some(&partial));
        assert_eq!(indexed(&spared), ["busybox", "curl"]);
    }

    #[test]
    fn a_recorded_name_takes_its_place_among_the_indexed_names() {
        let places = IndexedNames::new();
        let all = places.all();
        let mut last = None;
        let mut seen = std::collections::HashSet::new();
        for n in all.iter().filter(|n| seen.insert(**n)) {
            let (at, spelled) = places.place(n).unwrap();
            assert_eq!(spelled, *n);
            assert!(last.is_none_or(|l| at > l), "{n} at {at} after {last:?}");
            last = Some(at);
        }
        assert!(places.place("frobnicate").is_none());
        // A name of both lists has its first list's place.
        assert_eq!(places.place("curl").map(|p| p.0), Some(0));
    }

    #[test]
    fn a_changed_directory_is_listed_again() {
        let (dir, _) = host();
        settle(dir.path());
        let (_, record) = Identifier::remembered([dir.path()], None);
        std::fs::write(dir.path().join("wget"), elf(b"wget-id", b"wget code")).unwrap();
        let (id, kept) = Identifier::remembered([dir.path()], Some(&record));
        assert!(indexed(&id).contains(&"wget"), "{:?}", indexed(&id));
        // Changed just now: not kept, so a change within the same
        // timestamp tick cannot hide behind it.
        assert!(kept.dirs.is_empty(), "{kept:?}");
        // A removed tool: listed again, gone.
        settle(dir.path());
        let (_, record) = Identifier::remembered([dir.path()], None);
        std::fs::remove_file(dir.path().join("curl")).unwrap();
        let (id, _) = Identifier::remembered([dir.path()], Some(&record));
        assert!(!indexed(&id).contains(&"curl"));
    }

    #[test]
    fn a_record_adds_nothing_a_listing_would_not_find() {
        let (dir, _) = host();
        settle(dir.path());
        let (_, mut record) = Identifier::remembered([dir.path()], None);
        // A name no table knows, a known name with no file, a path
        // outside: nothing.
        for name in ["frobnicate", "wget", "../etc/passwd"] {
            record.dirs[0].tools.push(ToolEntry {
                name: name.into(),
                link: true,
                version: None,
            });
        }
        let (id, _) = Identifier::remembered([dir.path()], Some(&record));
        assert_eq!(indexed(&id), ["busybox", "curl", "rm"]);
        // Another build's names: listed again.
        record.names = "another build".into();
        record.dirs[0].tools.clear();
        let (id, _) = Identifier::remembered([dir.path()], Some(&record));
        assert_eq!(indexed(&id), ["busybox", "curl", "rm"]);
    }

    #[test]
    fn a_link_is_followed_again_where_it_leads_can_change_unseen() {
        let (dir, _) = host();
        let elsewhere = tempfile::tempdir().unwrap();
        let real = elsewhere.path().join("real");
        std::fs::write(&real, elf(b"wget-1", b"wget one")).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("wget")).unwrap();
        settle(dir.path());
        let (id, record) = Identifier::remembered([dir.path()], None);
        let first = std::fs::metadata(&real).unwrap();
        assert!(id.is_installed((first.dev(), first.ino())));
        // Another file where the link leads: the directory holding the
        // link did not change.
        let replacement = elsewhere.path().join("new");
        std::fs::write(&replacement, elf(b"wget-2", b"wget two, longer")).unwrap();
        std::fs::rename(&replacement, &real).unwrap();
        let second = std::fs::metadata(&real).unwrap();
        assert_ne!(first.ino(), second.ino());
        let (id, _) = Identifier::remembered([dir.path()], Some(&record));
        assert!(id.is_installed((second.dev(), second.ino())));
        assert!(!id.is_installed((first.dev(), first.ino())));
    }

    #[test]
    fn the_session_index_keeps_its_record_for_the_next_session() {
        let (dir, _) = host();
        settle(dir.path());
        let state = tempfile::tempdir().unwrap();
        let at = state.path().join("tool-dirs.json");
        let bg = ToolIndex::remembered(vec![dir.path().to_path_buf()], at.clone());
        assert_eq!(indexed(bg.get()), ["busybox", "curl", "rm"]);
        let kept: ToolDirsRecord = crate::state_records::load(&at).unwrap();
        assert_eq!(kept.dirs.len(), 1);
        // A record that cannot be read is no record.
        std::fs::write(&at, b"{ not json").unwrap();
        let bg = ToolIndex::remembered(vec![dir.path().to_path_buf()], at.clone());
        assert_eq!(indexed(bg.get()), ["busybox", "curl", "rm"]);
    }

    #[test]
    fn the_session_index_is_the_same_index() {
        let (dir, _) = host();
        // The same directory named twice, once through a link to it.
        let alias = dir.path().with_extension("alias");
        std::os::unix::fs::symlink(dir.path(), &alias).unwrap();
        let bg = ToolIndex::new(vec![dir.path().to_path_buf(), alias.clone()]);
        let copy = dir.path().join("c");
        std::fs::copy(dir.path().join("curl"), &copy).unwrap();
        let got = identify(bg.get(), &copy, &["./c"]);
        assert_eq!((got.argv, got.how), (argv(&["curl"]), "content"));
        // curl, busybox and rm, once each (frobnicate is in no table).
        assert_eq!(bg.get().len(), 3);
        std::fs::remove_file(alias).unwrap();
    }

    #[test]
    fn a_hard_link_is_known_by_inode() {
        let (dir, id) = host();
        let link = dir.path().join("innocent");
        std::fs::hard_link(dir.path().join("curl"), &link).unwrap();
        let got = identify(&id, &link, &["innocent", "-O", "x"]);
        assert_eq!(got.argv, argv(&["curl", "-O", "x"]));
        assert_eq!(got.how, "inode");
    }

    #[test]
    fn identity_is_the_file_the_guard_opened_not_what_the_path_leads_to_now() {
        let (dir, id) = host();
        let x = dir.path().join("x");
        std::fs::write(&x, b"\x7fELF something else").unwrap();
        // The guard opened x; then x was swapped for a link to curl.
        let opened = dev_ino(&x);
        std::fs::remove_file(&x).unwrap();
        std::fs::hard_link(dir.path().join("curl"), &x).unwrap();
        let s = Subject {
            executable: &x,
            dev_ino: opened,
            pid: std::process::id(),
            at_commit: false,
        };
        let (got, _) = id.identify(&s, &argv(&["x"]), true);
        assert_eq!((got.argv[0].as_str(), got.kin), ("x", Kin::Unknown));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_memfd_is_reached_through_the_descriptor() {
        let (dir, id) = host();
        // SAFETY: a name and flags; the fd returned is ours.
        let fd = unsafe { libc::memfd_create(c"r".as_ptr(), 0) };
        assert!(fd >= 0);
        // SAFETY: a fresh fd we own.
        let f = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        let mut bytes = std::fs::read(dir.path().join("rm")).unwrap();
        bytes.extend(b"tail");
        f.write_all_at(&bytes, 0).unwrap();
        let m = f.metadata().unwrap();
        let shown = PathBuf::from("/memfd:r (deleted)");
        let s = Subject {
            executable: &shown,
            dev_ino: (m.dev(), m.ino()),
            pid: std::process::id(),
            at_commit: false,
        };
        let (got, _) = id.identify(&s, &argv(&["x", "-rf", "."]), true);
        assert_eq!((got.argv[0].as_str(), got.how), ("rm", "build-id"));
    }

    #[test]
    fn busybox_is_judged_as_its_applet() {
        let (dir, id) = host();
        let bb = dir.path().join("busybox");
        assert_eq!(
            identify(&id, &bb, &["wget", "-O-", "http://example.invalid"]).argv,
            argv(&["wget", "-O-", "http://example.invalid"])
        );
        assert_eq!(
            identify(&id, &bb, &["busybox", "wget", "-q"]).argv,
            argv(&["wget", "-q"])
        );
    }

    #[test]
    fn an_unknown_program_keeps_its_name() {
        let (dir, id) = host();
        let other = dir.path().join("mytool");
        std::fs::write(&other, b"something else entirely").unwrap();
        let got = identify(&id, &other, &["mytool", "--x"]);
        assert_eq!(got.argv, argv(&["mytool", "--x"]));
        assert_eq!((got.how, got.kin), ("name", Kin::Unknown));
        // frobnicate is not a known tool: a copy keeps the copy's name.
        let copy = dir.path().join("l");
        std::fs::copy(dir.path().join("frobnicate"), &copy).unwrap();
        assert_eq!(identify(&id, &copy, &["l"]).argv, argv(&["l"]));
    }

    #[test]
    fn places_are_the_workspace_temporary_directories_anonymous_files_and_new_files() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("work");
        let tmp = root.path().join("session-tmp");
        let cache = root.path().join("cache");
        for d in [&ws, &tmp, &cache] {
            std::fs::create_dir_all(d).unwrap();
        }
        let old = cache.join("old-tool");
        std::fs::write(&old, b"\x7fELF").unwrap();
        let started = SystemTime::now() + Duration::from_secs(60);
        let trusted: Vec<String> = aq_policy::exec_trust::BUILD_OUTPUTS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let places = Places::new(
            &ws,
            &[ws.clone(), tmp.clone()],
            Some(&tmp),
            started,
            &trusted,
            None,
        );
        let meta = std::fs::metadata(&old).unwrap();
        assert_eq!(
            places.classify(&ws.join("r"), Some(&meta)),
            Some(Place::Workspace)
        );
        assert_eq!(
            places.classify(&tmp.join("x"), Some(&meta)),
            Some(Place::Temporary)
        );
        assert_eq!(
            places.classify(Path::new("/memfd:x (deleted)"), None),
            Some(Place::Memfd)
        );
        assert_eq!(
            places.classify(Path::new("/usr/bin/x (deleted)"), Some(&meta)),
            Some(Place::Deleted)
        );
        // Elsewhere (a cache of `dev` that held tools before the session)
        // only what changed since it started is the session's.
        assert_eq!(places.classify(&old, Some(&meta)), None);
        let now = Places::new(
            &ws,
            &[],
            Some(&tmp),
            SystemTime::now() - Duration::from_secs(60),
            &trusted,
            None,
        );
        assert_eq!(
            now.classify(&old, Some(&meta)),
            Some(Place::ChangedDuringSession)
        );
        assert_eq!(now.classify(&old, None), Some(Place::ChangedDuringSession));
        // Build outputs, in the workspace and in TMPDIR.
        assert_eq!(
            places.trusted_by(&ws.join("target/debug/app")),
            Some("**/target/**")
        );
        assert_eq!(
            places.trusted_by(&tmp.join("go-build123/b001/x.test")),
            Some("$TMPDIR/go-build*/**")
        );
        assert_eq!(places.trusted_by(&ws.join("hello")), None);
        assert_eq!(
            places.trusted_by(Path::new("/memfd:target (deleted)")),
            None
        );
    }
}
