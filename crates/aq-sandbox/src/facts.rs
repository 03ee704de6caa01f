//! What the host offers, gathered once (I/O) so that [`crate::plan`] stays pure.
//!
//! Tests build a `HostFacts` by hand to emulate kernels and file layouts this
//! machine does not have (Landlock ABI 0, a symlinked `~/.ssh`, a hard-linked key).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::cgroup::CgroupFacts;
use crate::spec::SandboxSpec;

/// Facts about the host that the plan depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFacts {
    /// Landlock ABI version the kernel reports (0: no Landlock).
    pub landlock_abi: u32,
    /// The caller's real uid, mapped to itself inside the user namespace.
    pub uid: u32,
    /// The caller's real gid, mapped to itself inside the user namespace.
    pub gid: u32,
    /// The running kernel's `(major, minor)` version, `None` when unknown.
    pub kernel_version: Option<(u32, u32)>,
    /// The caller's working directory, `None` when it has been removed.
    pub cwd: Option<PathBuf>,
    /// The caller's cgroup v2, probed only when the spec asks for cgroup limits.
    pub cgroup: CgroupFacts,
    /// What each path named by the spec really is, keyed by the path as written
    /// (relative `read_only` entries already joined to the workspace).
    pub paths: HashMap<PathBuf, PathFacts>,
    /// The bound datagram sockets of the caller's network namespace
    /// (`/proc/net/unix`), probed only for a spec with the socket guard:
    /// the sandbox masks them (their facts are in `paths`).
    pub datagram_sockets: Vec<PathBuf>,
}

/// What one path is on the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathFacts {
    /// The path does not exist (or a symlink on it dangles).
    Missing,
    /// The path exists; `real` is it with every symlink resolved.
    Exists {
        /// Canonical path.
        real: PathBuf,
        /// File or directory (anything that is not a directory counts as a file).
        kind: PathKind,
        /// Number of hard links (a file with more than one has names we cannot mask).
        links: u64,
    },
}

/// Directory or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathKind {
    /// A directory.
    Dir,
    /// Anything else (regular file, device, socket...).
    File,
}

impl HostFacts {
    /// Probe the running kernel and stat every path in `spec`.
    pub fn probe(spec: &SandboxSpec) -> HostFacts {
        // Hashed, not ordered: hundreds of paths, looked up by the plan
        // only (ordering them compared path components at every insert).
        let mut paths = HashMap::new();
        let mut real_dirs = HashMap::new();
        for p in spec_paths(spec) {
            let facts = probe_path_in(&p, &mut real_dirs);
            paths.insert(p, facts);
        }
        let datagram_sockets = match spec.socket_guard {
            crate::spec::SocketGuardMode::Required => std::fs::read_to_string("/proc/net/unix")
                .map(|t| crate::unix_diag::datagram_paths(&t))
                .unwrap_or_default(),
            crate::spec::SocketGuardMode::Off => Vec::new(),
        };
        for p in &datagram_sockets {
            paths.entry(p.clone()).or_insert_with(|| probe_path(p));
        }
        HostFacts {
            landlock_abi: probe_landlock_abi(),
            uid: current_uid(),
            gid: current_gid(),
            kernel_version: probe_kernel_version(),
            cwd: std::env::current_dir().ok(),
            cgroup: match spec.memory_max_bytes.or(spec.pids_max) {
                Some(_) => CgroupFacts::probe(),
                None => CgroupFacts::default(),
            },
            paths,
            datagram_sockets,
        }
    }

    /// Facts for `path`, `Missing` when it was not probed.
    pub fn path(&self, path: &Path) -> &PathFacts {
        self.paths.get(path).unwrap_or(&PathFacts::Missing)
    }
}

/// Every path the plan needs facts about, as keyed in [`HostFacts::paths`].
pub(crate) fn spec_paths(spec: &SandboxSpec) -> Vec<PathBuf> {
    let mut out = vec![spec.workspace.clone()];
    out.extend(spec.writable.iter().cloned());
    out.extend(spec.read_only.iter().map(|p| spec.workspace.join(p)));
    out.extend(spec.masked.iter().cloned());
    out.extend(spec.readable.iter().flatten().cloned());
    out.extend(spec.allowed_sockets.iter().cloned());
    out.extend(spec.writable_again.iter().cloned());
    for (source, target) in &spec.file_binds {
        out.push(source.clone());
        out.push(target.clone());
    }
    out
}

/// [`probe_path`], resolving a path that is not a link through its
/// directory's real path, resolved once for all its entries (`real_dirs`): a
/// readable `/tmp` cut into its hundreds of entries took two `readlink`s and
/// a `stat` for each.
fn probe_path_in(path: &Path, real_dirs: &mut HashMap<PathBuf, Option<PathBuf>>) -> PathFacts {
    use std::os::unix::fs::MetadataExt;
    let plain = path.is_absolute()
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::RootDir | std::path::Component::Normal(_)
            )
        });
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return probe_path(path);
    };
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return PathFacts::Missing;
    };
    if !plain || meta.file_type().is_symlink() {
        return probe_path(path);
    }
    if !real_dirs.contains_key(dir) {
        real_dirs.insert(dir.to_path_buf(), std::fs::canonicalize(dir).ok());
    }
    let real_dir = &real_dirs[dir];
    match real_dir {
        Some(real_dir) => PathFacts::Exists {
            real: real_dir.join(name),
            kind: if meta.is_dir() {
                PathKind::Dir
            } else {
                PathKind::File
            },
            links: meta.nlink(),
        },
        None => probe_path(path),
    }
}

fn probe_path(path: &Path) -> PathFacts {
    use std::os::unix::fs::MetadataExt;
    // Most masked paths do not exist: one stat says so, where resolving the
    // path first would read every component's link.
    let Ok(meta) = std::fs::metadata(path) else {
        return PathFacts::Missing;
    };
    match std::fs::canonicalize(path) {
        Ok(real) => PathFacts::Exists {
            real,
            kind: if meta.is_dir() {
                PathKind::Dir
            } else {
                PathKind::File
            },
            links: meta.nlink(),
        },
        Err(_) => PathFacts::Missing,
    }
}

#[cfg(target_os = "linux")]
pub(crate) fn probe_landlock_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1;
    // SAFETY: with a null attribute pointer and size 0 and the VERSION flag the
    // syscall only returns the ABI version (or -1 with errno); it touches no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(v).unwrap_or(0)
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn probe_landlock_abi() -> u32 {
    0
}

/// `(major, minor)` from the kernel's release string (`uname -r`).
fn probe_kernel_version() -> Option<(u32, u32)> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    parse_kernel_version(&release)
}

/// `"6.18.44-fc-v595"` → `(6, 18)`.
fn parse_kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.trim().split(['.', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(target_os = "linux")]
fn current_uid() -> u32 {
    // SAFETY: getuid cannot fail and has no arguments.
    unsafe { libc::getuid() }
}

#[cfg(target_os = "linux")]
fn current_gid() -> u32 {
    // SAFETY: getgid cannot fail and has no arguments.
    unsafe { libc::getgid() }
}

#[cfg(not(target_os = "linux"))]
fn current_uid() -> u32 {
    0
}

#[cfg(not(target_os = "linux"))]
fn current_gid() -> u32 {
    0
}

#[cfg(test)]
mod tests {
    use super::{parse_kernel_version, probe_path, probe_path_in};

    #[test]
    fn a_path_resolved_through_its_directory_is_what_resolving_it_whole_gives() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("real/dir")).unwrap();
        std::fs::write(root.join("real/file"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("real/file"), root.join("real/to-file")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("real/dangling")).unwrap();
        let mut real_dirs = Default::default();
        for p in [
            "real/dir",
            "real/file",
            "link/file",
            "link/dir",
            "real/to-file",
            "real/dangling",
            "real/missing",
            "link/../real/file",
            "real/./file",
            "",
        ] {
            let path = root.join(p);
            assert_eq!(
                probe_path_in(&path, &mut real_dirs),
                probe_path(&path),
                "{}",
                path.display()
            );
        }
        let root_dir = std::path::Path::new("/");
        assert_eq!(
            probe_path_in(root_dir, &mut real_dirs),
            probe_path(root_dir)
        );
    }

    #[test]
    fn kernel_version_is_major_and_minor_of_the_release() {
        assert_eq!(parse_kernel_version("6.18.44-fc-v595\n"), Some((6, 18)));
        assert_eq!(parse_kernel_version("5.15.0-105-generic"), Some((5, 15)));
        assert_eq!(parse_kernel_version("6.14-rc1"), Some((6, 14)));
        assert_eq!(parse_kernel_version("garbage"), None);
    }
}
