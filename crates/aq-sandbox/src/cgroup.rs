//! cgroup v2 memory and pids limits, where the caller's cgroup is delegated to
//! it; otherwise rlimits only, said plainly ([`CgroupLimits::Unavailable`] is
//! a report, not an error).
//!
//! Decide, then do: [`CgroupFacts::probe`] reads the host, [`plan_cgroup`]
//! (pure) decides, and `apply` makes a child cgroup `aq-<pid>-<n>` of the
//! caller's own with `memory.max` (and `memory.swap.max` 0, so the limit is
//! not swapped around) and `pids.max`, moves the supervisor into it before
//! anything else (init and the command are born inside), and removes it once
//! the sandbox has ended.
//!
//! Why the caller's cgroup must already enable `memory` and `pids` in its
//! `cgroup.subtree_control`: a child only gets the controllers its parent
//! enables, and a cgroup other than the root cannot enable any while it holds
//! processes ("no internal processes"), which the caller's does: the caller.
//! Moving the caller out to make room is not this crate's business. In
//! practice that means the root cgroup (as root, with `0::/`), or a cgroup the
//! caller was started beneath after its manager enabled the controllers.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::spec::SandboxSpec;

/// The caller's cgroup v2, as far as limits need it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CgroupFacts {
    /// Where the cgroup v2 hierarchy is mounted: `/sys/fs/cgroup`, or e.g.
    /// `/sys/fs/cgroup/unified` on a hybrid (v1 + v2) host; `None` without one.
    pub mount: Option<PathBuf>,
    /// The caller's cgroup, from the `0::` line of `/proc/self/cgroup`.
    pub own: Option<PathBuf>,
    /// Whether the caller may make a child cgroup there and move into it
    /// (the directory and its `cgroup.procs` are writable).
    pub writable: bool,
    /// Controllers the caller's cgroup enables for its children (`cgroup.subtree_control`).
    pub subtree_control: Vec<String>,
    /// Controllers the caller's cgroup has (`cgroup.controllers`).
    pub controllers: Vec<String>,
}

impl CgroupFacts {
    /// The caller's cgroup directory, when both the mount and the path are known.
    pub fn dir(&self) -> Option<PathBuf> {
        let (mount, own) = (self.mount.as_ref()?, self.own.as_ref()?);
        let inner = own.strip_prefix("/").unwrap_or(own);
        Some(match inner.as_os_str().is_empty() {
            true => mount.clone(),
            false => mount.join(inner),
        })
    }

    /// Read `/proc/self/mountinfo`, `/proc/self/cgroup` and the caller's cgroup directory.
    pub fn probe() -> CgroupFacts {
        let read = |p: &Path| std::fs::read_to_string(p).ok();
        let mut facts = CgroupFacts {
            mount: read(Path::new("/proc/self/mountinfo")).and_then(|m| find_cgroup2_mount(&m)),
            own: read(Path::new("/proc/self/cgroup")).and_then(|c| find_unified_path(&c)),
            ..CgroupFacts::default()
        };
        let Some(dir) = facts.dir() else {
            return facts;
        };
        let words = |text: Option<String>| -> Vec<String> {
            text.unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect()
        };
        facts.writable = writable(&dir) && writable(&dir.join("cgroup.procs"));
        facts.subtree_control = words(read(&dir.join("cgroup.subtree_control")));
        facts.controllers = words(read(&dir.join("cgroup.controllers")));
        facts
    }
}

#[cfg(target_os = "linux")]
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: c is NUL-terminated; faccessat only reads it.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn writable(_: &Path) -> bool {
    false
}

/// The cgroup v2 mount point in a `/proc/self/mountinfo` text: `/sys/fs/cgroup`
/// when it is one, else the first.
fn find_cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    let points: Vec<&str> = mountinfo
        .lines()
        .filter(|l| {
            l.split(" - ")
                .nth(1)
                .is_some_and(|fs| fs.split(' ').next() == Some("cgroup2"))
        })
        .filter_map(|l| l.split(' ').nth(4))
        .collect();
    let point = points
        .iter()
        .find(|p| **p == "/sys/fs/cgroup")
        .or(points.first())?;
    Some(PathBuf::from(point))
}

/// The `0::PATH` entry of a `/proc/self/cgroup` text.
fn find_unified_path(text: &str) -> Option<PathBuf> {
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(PathBuf::from)
}

/// Whether the spec's memory and pids limits are enforced by a cgroup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CgroupLimits {
    /// The spec asks for no cgroup limit.
    NotRequested,
    /// A child of `parent` made for this sandbox holds it, with these limits.
    Enforced {
        /// The caller's cgroup directory.
        parent: PathBuf,
        /// `memory.max` (and `memory.swap.max` 0, where swap is accounted).
        memory_max_bytes: Option<u64>,
        /// `pids.max`.
        pids_max: Option<u64>,
    },
    /// Asked for, but no writable delegated cgroup v2 offers them: rlimits only.
    Unavailable {
        /// Why, naming the cgroup and what it lacks.
        reason: String,
    },
}

impl fmt::Display for CgroupLimits {
    /// `limits: rlimits only (no writable cgroup v2 delegation: <reason>)` and the like.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CgroupLimits::NotRequested => write!(f, "limits: no cgroup limits asked"),
            CgroupLimits::Enforced {
                parent,
                memory_max_bytes,
                pids_max,
            } => {
                let mut set = Vec::new();
                if let Some(m) = memory_max_bytes {
                    set.push(format!("memory.max {m}"));
                }
                if let Some(p) = pids_max {
                    set.push(format!("pids.max {p}"));
                }
                write!(
                    f,
                    "limits: cgroup v2 {} (beneath {})",
                    set.join(", "),
                    parent.display()
                )
            }
            CgroupLimits::Unavailable { reason } => write!(
                f,
                "limits: rlimits only (no writable cgroup v2 delegation: {reason})"
            ),
        }
    }
}

/// Decide whether the spec's cgroup limits can be enforced on this host. Pure.
pub(crate) fn plan_cgroup(spec: &SandboxSpec, facts: &CgroupFacts, uid: u32) -> CgroupLimits {
    let mut needed = Vec::new();
    if spec.memory_max_bytes.is_some() {
        needed.push("memory");
    }
    if spec.pids_max.is_some() {
        needed.push("pids");
    }
    if needed.is_empty() {
        return CgroupLimits::NotRequested;
    }
    let unavailable = |reason: String| CgroupLimits::Unavailable { reason };
    if facts.mount.is_none() {
        return unavailable("no cgroup v2 hierarchy is mounted".to_string());
    }
    let Some(dir) = facts.dir() else {
        return unavailable("/proc/self/cgroup has no cgroup v2 (0::) entry".to_string());
    };
    if !facts.writable {
        return unavailable(format!(
            "{} is not writable by uid {uid} (not delegated)",
            dir.display()
        ));
    }
    let missing: Vec<&str> = needed
        .into_iter()
        .filter(|c| !facts.subtree_control.iter().any(|s| s == c))
        .collect();
    if !missing.is_empty() {
        let list = |v: &[String]| match v.is_empty() {
            true => "none".to_string(),
            false => v.join(" "),
        };
        return unavailable(format!(
            "{} does not enable {} for its children (cgroup.subtree_control: {}; \
             cgroup.controllers: {})",
            dir.display(),
            missing.join(", "),
            list(&facts.subtree_control),
            list(&facts.controllers),
        ));
    }
    CgroupLimits::Enforced {
        parent: dir,
        memory_max_bytes: spec.memory_max_bytes,
        pids_max: spec.pids_max,
    }
}

#[cfg(target_os = "linux")]
pub(crate) use linux::{ChildCgroup, apply_join};

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::{CStr, CString};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU32, Ordering};

    use crate::error::SandboxError;
    use crate::syscall::{Fail, write_file};

    /// A child cgroup made for one sandbox; removed when dropped (in the caller,
    /// after the sandbox has ended: a cgroup can be removed once it is empty).
    pub(crate) struct ChildCgroup {
        dir: PathBuf,
        /// `<dir>/cgroup.procs`, for the supervisor to join.
        pub(crate) procs: CString,
    }

    impl ChildCgroup {
        /// `mkdir <parent>/aq-<pid>-<n>`, then write the limits.
        pub(crate) fn create(
            parent: &Path,
            memory_max_bytes: Option<u64>,
            pids_max: Option<u64>,
        ) -> Result<ChildCgroup, SandboxError> {
            static SEQ: AtomicU32 = AtomicU32::new(0);
            let name = format!(
                "aq-{}-{}",
                std::process::id(),
                SEQ.fetch_add(1, Ordering::Relaxed)
            );
            let dir = parent.join(name);
            let setup = |syscall, path: &Path, source| SandboxError::Setup {
                boundary: "cgroup limits",
                syscall,
                path: Some(path.to_path_buf()),
                source,
            };
            std::fs::create_dir(&dir).map_err(|e| setup("mkdir", &dir, e))?;
            let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
                .map_err(|e| setup("open", &dir, std::io::Error::other(e)))?;
            // From here on, dropping `cgroup` removes the directory.
            let cgroup = ChildCgroup { dir, procs };
            let write = |file: &str, value: String| {
                let path = cgroup.dir.join(file);
                std::fs::write(&path, value).map_err(|e| setup("write", &path, e))
            };
            if let Some(m) = memory_max_bytes {
                write("memory.max", m.to_string())?;
                if cgroup.dir.join("memory.swap.max").exists() {
                    write("memory.swap.max", "0".to_string())?;
                }
            }
            if let Some(p) = pids_max {
                write("pids.max", p.to_string())?;
            }
            Ok(cgroup)
        }
    }

    impl Drop for ChildCgroup {
        fn drop(&mut self) {
            // The last processes may still be leaving (EBUSY): retry briefly.
            for _ in 0..50 {
                match std::fs::remove_dir(&self.dir) {
                    Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                    _ => return,
                }
            }
        }
    }

    /// In the supervisor: move this process into the cgroup (`0` is the writer).
    pub(crate) fn apply_join(procs: &CStr, step: u32) -> Result<(), Fail> {
        write_file(procs, b"0", step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delegated() -> CgroupFacts {
        CgroupFacts {
            mount: Some("/sys/fs/cgroup".into()),
            own: Some("/user.slice/aq.scope".into()),
            writable: true,
            subtree_control: vec!["memory".into(), "pids".into()],
            controllers: vec!["cpu".into(), "memory".into(), "pids".into()],
        }
    }

    fn limited() -> SandboxSpec {
        let mut spec = SandboxSpec::strict("/ws");
        spec.memory_max_bytes = Some(1 << 30);
        spec.pids_max = Some(256);
        spec
    }

    #[test]
    fn no_limit_asked_needs_no_cgroup() {
        let spec = SandboxSpec::strict("/ws");
        assert_eq!(
            plan_cgroup(&spec, &CgroupFacts::default(), 1000),
            CgroupLimits::NotRequested
        );
    }

    #[test]
    fn delegated_cgroup_with_the_controllers_enforces_the_limits() {
        let got = plan_cgroup(&limited(), &delegated(), 1000);
        assert_eq!(
            got,
            CgroupLimits::Enforced {
                parent: "/sys/fs/cgroup/user.slice/aq.scope".into(),
                memory_max_bytes: Some(1 << 30),
                pids_max: Some(256),
            }
        );
        assert_eq!(
            got.to_string(),
            "limits: cgroup v2 memory.max 1073741824, pids.max 256 \
             (beneath /sys/fs/cgroup/user.slice/aq.scope)"
        );
    }

    #[test]
    fn each_missing_piece_is_rlimits_only_with_the_reason() {
        let cases: Vec<(&str, CgroupFacts, &str)> = vec![
            (
                "no cgroup2 mount",
                CgroupFacts {
                    mount: None,
                    ..delegated()
                },
                "no cgroup v2 hierarchy is mounted",
            ),
            (
                "no 0:: line",
                CgroupFacts {
                    own: None,
                    ..delegated()
                },
                "/proc/self/cgroup has no cgroup v2 (0::) entry",
            ),
            (
                "not delegated",
                CgroupFacts {
                    writable: false,
                    ..delegated()
                },
                "/sys/fs/cgroup/user.slice/aq.scope is not writable by uid 1000 (not delegated)",
            ),
            (
                // This machine: hybrid, memory and pids bound to cgroup v1.
                "hybrid host",
                CgroupFacts {
                    mount: Some("/sys/fs/cgroup/unified".into()),
                    own: Some("/".into()),
                    writable: true,
                    subtree_control: Vec::new(),
                    controllers: vec!["hugetlb".into()],
                },
                "/sys/fs/cgroup/unified does not enable memory, pids for its children \
                 (cgroup.subtree_control: none; cgroup.controllers: hugetlb)",
            ),
        ];
        for (name, facts, reason) in cases {
            let got = plan_cgroup(&limited(), &facts, 1000);
            assert_eq!(
                got,
                CgroupLimits::Unavailable {
                    reason: reason.to_string()
                },
                "{name}"
            );
            assert_eq!(
                got.to_string(),
                format!("limits: rlimits only (no writable cgroup v2 delegation: {reason})")
            );
        }
    }

    #[test]
    fn only_the_controllers_asked_for_are_needed() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.pids_max = Some(64);
        let facts = CgroupFacts {
            subtree_control: vec!["pids".into()],
            ..delegated()
        };
        assert!(matches!(
            plan_cgroup(&spec, &facts, 1000),
            CgroupLimits::Enforced {
                memory_max_bytes: None,
                pids_max: Some(64),
                ..
            }
        ));
    }

    #[test]
    fn cgroup2_mount_and_own_path_are_found() {
        let hybrid = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
                      39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            find_cgroup2_mount(hybrid),
            Some("/sys/fs/cgroup/unified".into())
        );
        let unified = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(find_cgroup2_mount(unified), Some("/sys/fs/cgroup".into()));
        assert_eq!(find_cgroup2_mount(""), None);
        assert_eq!(
            find_unified_path("4:memory:/x\n0::/user.slice/a.scope\n"),
            Some("/user.slice/a.scope".into())
        );
        assert_eq!(find_unified_path("4:memory:/x\n"), None);
    }
}
