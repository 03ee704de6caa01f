//! Areas of the file system, by what a write there means: the system's
//! configuration and programs, software installed by hand, scratch space,
//! build caches, the home directory's settings, and other projects. The
//! engine judges a write, move, truncation or removal outside the
//! workspace by the area it lands in ([`area_of`]), and the `dev` sandbox
//! profile lets builds write the [`BUILD_CACHES`].
//!
//! What the protected places of [`crate::programs::places`] (startup files,
//! cron, git hooks, aq's own files) and the credential catalog
//! ([`crate::credentials`]) say comes first: an area only decides what
//! neither names.
//!
//! # How to maintain this table
//!
//! - One row per directory, `~/...` (the home directory) or `/...`
//!   (absolute), always ending in `/`: the directory and everything under
//!   it. Components are literal.
//! - The longest row a path lies in decides (`/usr/local/` inside `/usr/`),
//!   so a row may carve a softer area out of a harder one; a unit test
//!   checks that no row appears twice.
//! - The rest of the home directory, outside every row, is [`Area::HomeFiles`]
//!   for a dot name (`~/.vimrc`, `~/.config/...`) and [`Area::OtherProjects`]
//!   for the rest (`~/src/app`), unless the workspace is there.

/// What a place outside the workspace is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Area {
    /// The system's configuration and state (`/etc`, `/boot`, `/var/lib`):
    /// writing a file there asks, deleting a directory of it is deleting a
    /// system directory.
    SystemConfig,
    /// The distribution's programs and libraries (`/usr`, `/bin`, `/lib`):
    /// as [`Area::SystemConfig`].
    SystemPrograms,
    /// Software installed by hand (`/usr/local`, `/opt`, `/Applications`):
    /// writing or deleting there asks (`rm -rf /usr/local/go` is how Go is
    /// upgraded).
    LocalSoftware,
    /// Scratch space (`/tmp`, `/var/tmp`, `$TMPDIR`): ordinary work.
    Temp,
    /// Download and build caches that builds write (`~/.cache`,
    /// `~/.cargo/registry`): ordinary work for a build; deleting one by hand
    /// is still a recursive delete.
    BuildCache,
    /// The user's settings in the home directory (`~/.vimrc`, `~/.config/x`)
    /// that are neither credentials nor files that run later: writing one
    /// asks.
    HomeFiles,
    /// An agent's own directory (`~/.claude`, `~/.codex`): its notes and
    /// state. The files there that hold hooks or make something run are
    /// protected places, judged before.
    AgentState,
    /// The user's own program directory (`~/.local/bin`, `~/bin`), on the
    /// PATH: a file there is installed for every later shell, so writing
    /// one asks, and one named like a known program (`git`, `sudo`) runs
    /// in its place: persistence.
    UserPrograms,
    /// The home directory's other contents (`~/src/other-app`, `~/www`),
    /// where projects are: another project than the workspace, so writing
    /// there asks. The engine counts a path as this only when it knows the
    /// workspace (and the path is not under it).
    OtherProjects,
    /// Anywhere else outside the home that no row names (`/srv/www`,
    /// `/mnt/data`, `/media/usb`, another user's home): another project, a
    /// server's files, another disk. Writing there asks. As for
    /// [`Area::OtherProjects`], the engine counts a path as this only when
    /// it knows the workspace; device files (`/dev/null`) are not written.
    Elsewhere,
}

impl Area {
    /// Every area, in documentation order.
    pub const ALL: &'static [Area] = &[
        Area::SystemConfig,
        Area::SystemPrograms,
        Area::LocalSoftware,
        Area::Temp,
        Area::BuildCache,
        Area::HomeFiles,
        Area::AgentState,
        Area::UserPrograms,
        Area::OtherProjects,
        Area::Elsewhere,
    ];

    /// Its name in documentation and evidence: `system configuration`.
    pub fn title(self) -> &'static str {
        match self {
            Area::SystemConfig => "system configuration",
            Area::SystemPrograms => "system programs",
            Area::LocalSoftware => "locally installed software",
            Area::Temp => "scratch space",
            Area::BuildCache => "a build cache",
            Area::HomeFiles => "the user's settings",
            Area::AgentState => "an agent's own directory",
            Area::UserPrograms => "the user's program directory",
            Area::OtherProjects => "another project in the home directory",
            Area::Elsewhere => "a place outside the workspace and the home directory",
        }
    }

    /// Whether a write there is ordinary work.
    pub fn writable(self) -> bool {
        !matches!(
            self,
            Area::SystemConfig
                | Area::SystemPrograms
                | Area::LocalSoftware
                | Area::HomeFiles
                | Area::UserPrograms
                | Area::OtherProjects
                | Area::Elsewhere
        )
    }

    /// Whether deleting a directory tree there is deleting a system
    /// directory (the label rules' `rm -rf` of a system directory).
    pub fn is_system(self) -> bool {
        matches!(self, Area::SystemConfig | Area::SystemPrograms)
    }
}

/// Download and build caches that builds write, and that the `dev` profile
/// lets them write: not `~/.cargo/bin`, `~/.cargo/config.toml` or
/// `~/.rustup`, where a write would outlive the session as a program or
/// setting the user runs.
pub const BUILD_CACHES: &[&str] = &[
    "~/.cargo/registry/",
    "~/.cargo/git/",
    "~/.npm/",
    "~/.cache/",
    "~/.yarn/cache/",
    "~/.yarn/berry/cache/",
    "~/.pnpm-store/",
    "~/.local/share/pnpm/store/",
    "~/go/pkg/mod/",
    "~/.m2/repository/",
    "~/.gradle/caches/",
    "~/.bun/install/cache/",
    "~/Library/Caches/",
    // Xcode's build products and indexes, one directory a project.
    "~/Library/Developer/Xcode/DerivedData/",
];

/// The system's package caches, inside [`SYSTEM_CONFIG`]: what the package
/// manager downloads again (`apt-get update` refills `/var/lib/apt/lists`),
/// so deleting them is a change to the system (it asks), not the deletion
/// of a system directory.
pub const SYSTEM_CACHES: &[&str] = &[
    "/var/cache/",
    "/var/lib/apt/lists/",
    "/var/cache/apt/archives/",
];

/// Whether `path` (absolute, normalised) lies inside one of
/// [`SYSTEM_CACHES`] (below it, or everything in it).
pub fn in_system_cache(path: &str) -> bool {
    SYSTEM_CACHES.iter().any(|row| {
        path.strip_prefix(row.trim_end_matches('/'))
            .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
    })
}

/// The system's own configuration and programs, inside [`SYSTEM_CONFIG`]
/// and [`SYSTEM_PROGRAMS`]: what its package manager installed and its
/// services read. Removing, emptying or overwriting a file there destroys
/// it (`rm -f /etc/hosts.allow`, `: > /etc/resolv.conf`, `tee /etc/hosts`);
/// adding to one or to a directory of drop-in files ([`DROP_IN_DIRS`]) is
/// a change, which asks. `/usr/local` (software installed by hand) and the
/// [`SYSTEM_CACHES`] are carved out.
pub const SYSTEM_FILES: &[&str] = &[
    "/bin/",
    "/boot/",
    "/etc/",
    "/lib/",
    "/lib32/",
    "/lib64/",
    "/libx32/",
    "/private/etc/",
    "/sbin/",
    "/usr/",
    "/var/lib/",
];

/// Directories whose every file is read as one more piece of a service's
/// configuration: `*.d` (`conf.d`, `sources.list.d`), and Debian's
/// available/enabled pairs for nginx and Apache. A file written there is
/// most often a new one (a site, a package source), so it asks; removing
/// one is still removing a file of the system's configuration.
pub const DROP_IN_DIRS: &[&str] = &[
    "*.d",
    "conf-available",
    "conf-enabled",
    "mods-available",
    "mods-enabled",
    "sites-available",
    "sites-enabled",
];

/// Whether `parts` (an absolute path's components) name a file of
/// [`SYSTEM_FILES`] whose loss damages the system: not a backup copy
/// (`hosts.bak`, `nginx.conf.orig`, `x~`), not under `/usr/local` or a
/// package cache, not a language's own packages installed there
/// (`/usr/lib/node_modules`, `site-packages`).
pub fn is_system_file<S: AsRef<str>>(parts: &[S]) -> bool {
    let names: Vec<&str> = parts.iter().map(AsRef::as_ref).collect();
    let Some(name) = names.last() else {
        return false;
    };
    let inside = SYSTEM_FILES.iter().any(|row| {
        let row: Vec<&str> = row.trim_matches('/').split('/').collect();
        names.len() > row.len() && names[..row.len()] == row[..]
    });
    if !inside
        || !matches!(
            area_of(true, parts),
            Some(Area::SystemConfig | Area::SystemPrograms)
        )
        || in_system_cache(&format!("/{}", names.join("/")))
    {
        return false;
    }
    let backup = [
        ".bak",
        ".orig",
        ".old",
        ".save",
        ".dpkg-old",
        ".dpkg-dist",
        ".rpmsave",
        "~",
    ]
    .iter()
    .any(|s| name.ends_with(s));
    let packages = names
        .iter()
        .any(|c| matches!(*c, "node_modules" | "dist-packages" | "site-packages"));
    !backup && !packages
}

/// Whether the directory a file is in (the second-to-last of `parts`) is
/// one of [`DROP_IN_DIRS`].
pub fn in_drop_in_dir<S: AsRef<str>>(parts: &[S]) -> bool {
    let Some(dir) = parts.len().checked_sub(2).map(|k| parts[k].as_ref()) else {
        return false;
    };
    DROP_IN_DIRS.iter().any(|d| match d.strip_prefix('*') {
        Some(suffix) => dir.ends_with(suffix) && dir.len() > suffix.len(),
        None => dir == *d,
    })
}

/// Scratch space. `$TMPDIR` is read by the engine as `/tmp` when it cannot
/// know it; macOS puts it under `/private/var/folders`.
pub const TEMP: &[&str] = &[
    "/dev/shm/",
    "/private/tmp/",
    "/private/var/folders/",
    "/private/var/tmp/",
    "/tmp/",
    "/var/folders/",
    "/var/tmp/",
];

/// The system's configuration and state (`/var` too: its logs are judged
/// before, as logs; its scratch space is carved out as [`TEMP`]).
pub const SYSTEM_CONFIG: &[&str] = &[
    "/Library/",
    "/System/",
    "/boot/",
    "/etc/",
    "/private/etc/",
    "/proc/",
    "/sys/",
    "/var/",
];

/// The distribution's programs and libraries.
pub const SYSTEM_PROGRAMS: &[&str] = &[
    "/bin/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/sbin/", "/usr/",
];

/// Software installed by hand, carved out of the system's programs.
pub(crate) const LOCAL_SOFTWARE: &[&str] = &["/Applications/", "/opt/", "/snap/", "/usr/local/"];

/// Agents' own directories.
pub(crate) const AGENT_STATE: &[&str] = &["~/.claude/", "~/.codex/", "~/.cursor/", "~/.gemini/"];

/// The user's program directories: their own, and the ones language
/// toolchains put on the `PATH` for what they install (`cargo install`,
/// `go install`, bun, deno, a user-level npm prefix, Yarn 1's global bin).
pub const USER_PROGRAMS: &[&str] = &[
    "~/.bun/bin/",
    "~/.cargo/bin/",
    "~/.deno/bin/",
    "~/.local/bin/",
    "~/.npm-global/bin/",
    "~/.yarn/bin/",
    "~/bin/",
    "~/go/bin/",
];

/// Directories of software installed by hand that are on every `PATH`
/// before the system's own (`/usr/local/bin` before `/usr/bin`): a file
/// there named like a known program runs instead of it, as in
/// [`USER_PROGRAMS`].
pub const LOCAL_PROGRAM_DIRS: &[&str] = &[
    "/opt/homebrew/bin/",
    "/opt/local/bin/",
    "/usr/local/bin/",
    "/usr/local/sbin/",
];

/// Whether `parts` (an absolute path's components) name a file right in
/// one of [`LOCAL_PROGRAM_DIRS`].
pub fn in_local_program_dir<S: AsRef<str>>(parts: &[S]) -> bool {
    LOCAL_PROGRAM_DIRS.iter().any(|d| {
        let want: Vec<&str> = d.trim_matches('/').split('/').collect();
        parts.len() == want.len() + 1 && parts.iter().zip(&want).all(|(a, b)| a.as_ref() == *b)
    })
}

/// Every row, by area.
pub(crate) const AREAS: &[(Area, &[&str])] = &[
    (Area::SystemConfig, SYSTEM_CONFIG),
    (Area::SystemPrograms, SYSTEM_PROGRAMS),
    (Area::LocalSoftware, LOCAL_SOFTWARE),
    (Area::Temp, TEMP),
    (Area::BuildCache, BUILD_CACHES),
    (Area::AgentState, AGENT_STATE),
    (Area::UserPrograms, USER_PROGRAMS),
];

/// The area a path is in, from its components after the root (`absolute`)
/// or after the home directory (`!absolute`): `["etc", "hosts"]` is
/// [`Area::SystemConfig`]. `None` for an absolute path no row names (it
/// may be the workspace). The caller has already read `~`, `$HOME` and
/// the user's home directory as the home.
pub fn area_of<S: AsRef<str>>(absolute: bool, parts: &[S]) -> Option<Area> {
    let mut best: Option<(usize, Area)> = None;
    for (area, rows) in AREAS {
        for row in *rows {
            let Some(rest) = (if absolute {
                row.strip_prefix('/')
            } else {
                row.strip_prefix("~/")
            }) else {
                continue;
            };
            let n = rest.trim_end_matches('/').split('/').count();
            let inside = parts.len() >= n
                && rest
                    .trim_end_matches('/')
                    .split('/')
                    .zip(parts)
                    .all(|(r, p)| r == p.as_ref());
            if inside && best.is_none_or(|(m, _)| n > m) {
                best = Some((n, *area));
            }
        }
    }
    if let Some((_, area)) = best {
        return Some(area);
    }
    if absolute {
        return None;
    }
    match parts.first().map(AsRef::as_ref) {
        Some(first) if first.starts_with('.') || first == "Library" => Some(Area::HomeFiles),
        Some(_) => Some(Area::OtherProjects),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(path: &str) -> Option<Area> {
        let (absolute, rest) = match path.strip_prefix("~/") {
            Some(r) => (false, r),
            None => (true, path.strip_prefix('/').unwrap()),
        };
        let parts: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        area_of(absolute, &parts)
    }

    #[test]
    fn rows_are_directories_written_once() {
        let mut seen = std::collections::HashSet::new();
        for (_, rows) in AREAS {
            for r in *rows {
                assert!(r.ends_with('/'), "{r}");
                assert!(r.starts_with('/') || r.starts_with("~/"), "{r}");
                assert!(!r.contains('*') && !r.contains("//"), "{r}");
                assert!(seen.insert(*r), "{r} appears twice");
            }
        }
    }

    #[test]
    fn the_longest_row_decides() {
        for (path, want) in [
            ("/etc/hosts", Some(Area::SystemConfig)),
            ("/etc", Some(Area::SystemConfig)),
            ("/var/lib/dpkg", Some(Area::SystemConfig)),
            ("/usr/lib/python3", Some(Area::SystemPrograms)),
            ("/usr/local/bin/tool", Some(Area::LocalSoftware)),
            ("/opt/app", Some(Area::LocalSoftware)),
            ("/tmp/x", Some(Area::Temp)),
            ("/var/tmp/x", Some(Area::Temp)),
            ("/work/project/src", None),
            ("/var/www/html", Some(Area::SystemConfig)),
            ("~/.cache/pip", Some(Area::BuildCache)),
            ("~/.cargo/registry/src", Some(Area::BuildCache)),
            ("~/.cargo/bin/tool", Some(Area::UserPrograms)),
            ("~/.cargo/env", Some(Area::HomeFiles)),
            ("~/go/bin/gopls", Some(Area::UserPrograms)),
            ("~/.vimrc", Some(Area::HomeFiles)),
            ("~/Library/Preferences/x.plist", Some(Area::HomeFiles)),
            ("~/Library/Caches/x", Some(Area::BuildCache)),
            ("~/src/other", Some(Area::OtherProjects)),
            ("~/.claude/notes.json", Some(Area::AgentState)),
            ("~/.local/bin/aq", Some(Area::UserPrograms)),
            ("~/go/pkg/mod/x", Some(Area::BuildCache)),
        ] {
            assert_eq!(area(path), want, "{path}");
        }
    }

    fn parts(path: &str) -> Vec<&str> {
        path.split('/').filter(|s| !s.is_empty()).collect()
    }

    #[test]
    fn system_files_are_the_systems_own() {
        for path in [
            "/etc/hosts",
            "/etc/nginx/sites-enabled/default",
            "/usr/bin/python3",
            "/boot/grub/grub.cfg",
            "/var/lib/dpkg/status",
            "/private/etc/hosts",
        ] {
            assert!(is_system_file(&parts(path)), "{path}");
        }
        for path in [
            "/etc",
            "/etc/hosts.allow.bak",
            "/etc/nginx/nginx.conf.orig",
            "/usr/local/bin/tool",
            "/var/lib/apt/lists/x",
            "/var/www/html/index.html",
            "/var/log/syslog",
            "/usr/lib/node_modules/x/package.json",
            "/tmp/hosts",
            "/opt/app/config",
        ] {
            assert!(!is_system_file(&parts(path)), "{path}");
        }
    }

    #[test]
    fn local_program_directories_hold_programs_right_in_them() {
        for path in ["/usr/local/bin/git", "/opt/homebrew/bin/python3"] {
            assert!(in_local_program_dir(&parts(path)), "{path}");
        }
        for path in [
            "/usr/local/bin",
            "/usr/local/lib/x",
            "/usr/local/bin/sub/x",
            "/usr/bin/git",
        ] {
            assert!(!in_local_program_dir(&parts(path)), "{path}");
        }
    }

    #[test]
    fn drop_in_directories_are_told_by_their_name() {
        for path in [
            "/etc/nginx/conf.d/app.conf",
            "/etc/apt/sources.list.d/x.list",
            "/etc/nginx/sites-available/site",
        ] {
            assert!(in_drop_in_dir(&parts(path)), "{path}");
        }
        for path in ["/etc/hosts", "/etc/nginx/nginx.conf", "/etc/sysctl.d"] {
            assert!(!in_drop_in_dir(&parts(path)), "{path}");
        }
    }
}
