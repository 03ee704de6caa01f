//! The macOS sandbox: the same [`SandboxSpec`] written as a Seatbelt profile
//! (SBPL, the S-expressions `sandbox-exec -p` takes), and the `sandbox-exec`
//! command line that runs a command under it.
//!
//! Pure: text in, text out, so every rule is reviewable and tested on any
//! machine (`aq sandbox-profile --os macos` prints it). Nothing here runs
//! `sandbox-exec`; [`sandbox_exec_command`] only builds the
//! [`std::process::Command`].
//!
//! # How Seatbelt differs from the Linux plan
//!
//! - **Rules are by path, and the last matching rule wins.** The profile
//!   starts with `(deny default)`, then allows, then the denies that carve
//!   out of those allows: read-only paths inside writable ones, then the
//!   secrets, last of all, so that no allow written after them can match a
//!   secret again. A secret is denied by its path whether it exists or not,
//!   and the workspace's secret file names by pattern, so a file created
//!   later is covered too. Since a rule follows the path and not the file,
//!   the directories that hold a secret or a read-only path inside a
//!   writable area may not be renamed or removed (`file-write-unlink`), or a
//!   `mv` would take the file out from under its rule (on Linux the mask
//!   is a mount, which moves with the file).
//! - **The kernel matches the resolved path.** `/tmp`, `/var` and `/etc`
//!   are symbolic links into `/private`: every path under them is written in
//!   both spellings (the `/private` one is what matches; the other one keeps
//!   the rule readable and holds should a system not link them). Denies are
//!   also written under `/System/Volumes/Data` (the data volume's firmlinked
//!   name) and as a case-insensitive pattern, since the default macOS file
//!   system ignores case: `~/.SSH` is `~/.ssh`.
//! - **No exec guard**: every program may run; the PATH shims are the
//!   firewall on macOS.
//! - **Network**: there is no network namespace, so "off" means no socket
//!   at all but the TCP ports of [`SandboxSpec::loopback_listeners`] on the
//!   host's loopback (the session's broker listens there) and the Unix
//!   sockets of [`SandboxSpec::allowed_sockets`] (the session's
//!   supervisor). No other Unix socket: the host's ones (an agent, a
//!   multiplexer, a container daemon) are ways out.
//! - **Not expressed**: rlimits and cgroup limits (the launcher's business),
//!   the environment (passed to [`sandbox_exec_command`]), descriptors,
//!   Landlock and seccomp as such. A file bound over another
//!   ([`SandboxSpec::file_binds`]) cannot be shadowed by a rule: the real
//!   file stays readable and is not writable.
//!
//! # Escaping
//!
//! Every path enters the profile as an SBPL string literal with `"` and `\`
//! escaped, and in a `(regex ...)` every regular-expression metacharacter
//! escaped too. A path that cannot be written so that it means itself (not
//! absolute, not UTF-8, a control character, a `.` or `..` component) is an
//! error: the profile is refused rather than written with a rule that
//! matches something else.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use crate::spec::{NetworkMode, SandboxSpec};

/// Where macOS keeps `sandbox-exec`.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// What the profile is made from besides the spec.
#[derive(Clone, Copy, Debug)]
pub struct SeatbeltInputs<'a> {
    /// The sandbox, as the Linux plan gets it.
    pub spec: &'a SandboxSpec,
    /// Globs denied in the workspace, present or not: file names (`*` and
    /// `?`, as the credential catalog writes them: `.env`, `*.pem`) in any
    /// directory, and paths from its root (`config/*.key`, `**` for any
    /// depth). Matched without regard to case. The spec lists the files
    /// found at start; these cover the ones written later.
    pub masked_names: &'a [String],
    /// Lines written as comments at the top (what a printed profile's
    /// example values stand for). Control characters become `?`.
    pub notes: &'a [String],
}

/// Why a profile or a `sandbox-exec` command line could not be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeatbeltError {
    /// A path the profile would name cannot be written as one.
    UnrepresentablePath {
        /// What the path is (workspace, writable, masked, ...).
        role: &'static str,
        /// The path.
        path: PathBuf,
        /// Why not.
        why: &'static str,
    },
    /// A masked name pattern cannot be written as one.
    UnrepresentableName {
        /// The pattern.
        name: String,
        /// Why not.
        why: &'static str,
    },
    /// No command to run.
    EmptyCommand,
    /// An argument or the profile holds a NUL byte (cannot be an argument).
    NulInArgument,
}

impl fmt::Display for SeatbeltError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeatbeltError::UnrepresentablePath { role, path, why } => write!(
                f,
                "seatbelt profile: {role} path {} cannot be written as a rule: {why}",
                path.display()
            ),
            SeatbeltError::UnrepresentableName { name, why } => write!(
                f,
                "seatbelt profile: masked name {name:?} cannot be written as a rule: {why}"
            ),
            SeatbeltError::EmptyCommand => write!(f, "sandbox-exec: no command to run"),
            SeatbeltError::NulInArgument => {
                write!(f, "sandbox-exec: an argument holds a NUL byte")
            }
        }
    }
}

impl std::error::Error for SeatbeltError {}

/// Readable in every profile, besides what the spec names: where macOS
/// keeps its system, its libraries and the developer tools. The spec's
/// own system list is Linux's (`/usr`, `/etc`, `/opt`, ...) and is written
/// as well; these are the roots it lacks.
const MACOS_SYSTEM_READABLE: &[&str] = &[
    "/System",
    "/Library",
    "/Applications/Xcode.app",
    "/usr",
    "/bin",
    "/sbin",
    "/private/etc",
    "/private/var/db/timezone",
    "/private/var/select",
    "/opt/homebrew",
    "/opt/local",
];

/// Roots of the spec's system list (Linux's) that a private home does not
/// read on macOS: there `/private/tmp` is every program's, and
/// `/private/var/folders` holds each user's temporary files and caches;
/// the devices have rules of their own. What macOS needs of them is in
/// [`MACOS_SYSTEM_READABLE`].
const NOT_READABLE_ON_MACOS: &[&str] = &["/tmp", "/private/tmp", "/var", "/private/var", "/dev"];

/// The data volume's own name: `/Users`, `/private/var`, `/opt` and the
/// rest of what is not the sealed system, under `/System`.
const DATA_VOLUME: &str = "/System/Volumes/Data";

/// Device files any command may read and write.
const DEVICES_READ_WRITE: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/dtracehelper",
];

/// The ptys: another terminal window's as well as the sandbox's own.
const TTYS: &str = "^/dev/ttys[0-9]+$";

/// The extension the kernel gives a process for a pty it opened through
/// `/dev/ptmx`.
const PTY_EXTENSION: &str = "com.apple.sandbox.pty";

/// Device files any command may read.
const DEVICES_READ: &[&str] = &["/dev/random", "/dev/urandom"];

/// System information a program asks for at start (CPU count, page size,
/// OS version): `hw.` and `machdep.cpu.` whole, and these `kern.` names.
/// Not `kern.procargs2`, which hands out other processes' arguments and
/// environment, nor the rest of `kern.` and `net.`.
const SYSCTL_PREFIXES: &[&str] = &["hw.", "machdep.cpu.", "kern.proc.pid.", "kern.proc.pgrp."];
const SYSCTL_NAMES: &[&str] = &[
    "kern.argmax",
    "kern.boottime",
    "kern.hostname",
    "kern.maxfiles",
    "kern.maxfilesperproc",
    "kern.maxproc",
    "kern.ngroups",
    "kern.osproductversion",
    "kern.osrelease",
    "kern.ostype",
    "kern.osvariant_status",
    "kern.osversion",
    "kern.secure_kernel",
    "kern.usrstack64",
    "kern.version",
    "sysctl.proc_cputype",
    "sysctl.proc_translated",
    "vm.loadavg",
    "vm.pagesize",
];

/// Mach services of an ordinary command-line program: user and group
/// lookups, logging, notifications, preferences, its temporary directory.
/// Not the keychain (`com.apple.SecurityServer`, `com.apple.securityd.xpc`),
/// the pasteboard or launch services: those hand out secrets or start
/// programs outside the sandbox.
const MACH_SERVICES: &[&str] = &[
    "com.apple.bsd.dirhelper",
    "com.apple.cfprefsd.agent",
    "com.apple.cfprefsd.daemon",
    "com.apple.diagnosticd",
    "com.apple.logd",
    "com.apple.system.logger",
    "com.apple.system.notification_center",
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
];

/// Mach services the host network needs besides its sockets: name
/// resolution settings and certificate checks for TLS.
const MACH_SERVICES_NETWORK: &[&str] = &[
    "com.apple.SystemConfiguration.DNSConfiguration",
    "com.apple.SystemConfiguration.configd",
    "com.apple.networkd",
    "com.apple.trustd",
    "com.apple.trustd.agent",
    "com.apple.ocspd",
];

/// The resolver's socket: names are looked up through it (host network
/// only; without the network a lookup would leave as a DNS query).
const RESOLVER_SOCKET: &str = "/private/var/run/mDNSResponder";

/// The profile for `inputs`: SBPL text for `sandbox-exec -p`.
pub fn plan_seatbelt_profile(inputs: &SeatbeltInputs<'_>) -> Result<String, SeatbeltError> {
    let spec = inputs.spec;
    let workspace = clean(&spec.workspace, "workspace")?;
    let writable = spec
        .writable
        .iter()
        .map(|p| clean(p, "writable"))
        .collect::<Result<Vec<_>, _>>()?;
    let writable_again = spec
        .writable_again
        .iter()
        .map(|p| clean(p, "writable again"))
        .collect::<Result<Vec<_>, _>>()?;
    let read_only = spec
        .read_only
        .iter()
        .map(|p| clean(&workspace.join(p), "read-only"))
        .collect::<Result<Vec<_>, _>>()?;
    let bound = spec
        .file_binds
        .iter()
        .map(|(_, target)| clean(target, "bound file"))
        .collect::<Result<Vec<_>, _>>()?;
    let readable = match &spec.readable {
        None => None,
        Some(paths) => Some(
            paths
                .iter()
                .map(|p| clean(p, "readable"))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let masked = spec
        .masked
        .iter()
        .map(|p| clean(p, "masked"))
        .collect::<Result<Vec<_>, _>>()?;
    let sockets = spec
        .allowed_sockets
        .iter()
        .map(|p| clean(p, "allowed socket"))
        .collect::<Result<Vec<_>, _>>()?;
    let names = inputs
        .masked_names
        .iter()
        .map(|n| name_pattern(n))
        .collect::<Result<Vec<_>, _>>()?;

    let mut p = Profile::default();
    p.comment("agent-quarantine: the sandbox of `aq run` on macOS, for `sandbox-exec -p`.");
    p.comment("Generated from the session's sandbox spec; review it with");
    p.comment("`aq sandbox-profile --os macos`. Later rules win over earlier ones.");
    for note in inputs.notes {
        p.comment(note);
    }
    p.blank();
    p.form("(version 1)");
    p.form("(deny default)");

    p.section("Processes: every program may run (the PATH shims judge them), and see and signal only its own sandbox.");
    p.form("(allow process-exec)");
    p.form("(allow process-fork)");
    p.form("(allow signal (target same-sandbox))");
    p.form("(allow process-info* (target same-sandbox))");

    p.section("System information programs read at start (not other processes' arguments).");
    let mut sysctl: Vec<String> = SYSCTL_PREFIXES
        .iter()
        .map(|s| format!("(sysctl-name-prefix {})", string(s)))
        .collect();
    sysctl.extend(
        SYSCTL_NAMES
            .iter()
            .map(|s| format!("(sysctl-name {})", string(s))),
    );
    p.rule("allow", "sysctl-read", &sysctl);
    p.rule(
        "allow",
        "mach-lookup",
        &MACH_SERVICES
            .iter()
            .map(|s| format!("(global-name {})", string(s)))
            .collect::<Vec<_>>(),
    );
    p.form("(allow user-preference-read)");
    p.form("(allow ipc-posix-sem)");
    p.form("(allow ipc-posix-shm-read* (ipc-posix-name \"apple.shm.notification_center\"))");

    p.section("Reads. Metadata everywhere (a program stats the directories above its own, as on Linux); contents where the spec says.");
    p.form("(allow file-read-metadata file-test-existence)");
    match &readable {
        None => {
            p.comment(
                "The home is readable (read-only home): every file, but the secrets denied below.",
            );
            p.form("(allow file-read* file-map-executable)");
        }
        Some(paths) => {
            p.comment("A private home: the system, the toolchains and configuration the spec names, the workspace and the writable paths; nothing else of the home.");
            let mut roots: Vec<PathBuf> = MACOS_SYSTEM_READABLE.iter().map(PathBuf::from).collect();
            roots.extend(
                paths
                    .iter()
                    .filter(|p| {
                        !NOT_READABLE_ON_MACOS
                            .iter()
                            .any(|n| p.as_path() == Path::new(n))
                    })
                    .cloned(),
            );
            roots.push(workspace.clone());
            roots.extend(writable.iter().cloned());
            roots.extend(writable_again.iter().cloned());
            roots.extend(bound.iter().cloned());
            p.rule(
                "allow",
                "file-read* file-map-executable",
                &subpaths(&dedup(roots), Spellings::Allow),
            );
            p.comment("`/System` is readable, but not the data volume's name beneath it: that is the whole home.");
            p.rule(
                "deny",
                "file-read*",
                &denied(&[PathBuf::from(DATA_VOLUME)], Extent::Subtree),
            );
        }
    }

    p.section("Terminals and devices, after the reads so that none of them opens another terminal: the controlling one (`/dev/tty`), a pty the sandbox opened itself (`/dev/ptmx` gives it the extension), and ioctls on the one it was started on. Another window's pty is what is typed there.");
    p.form("(allow pseudo-tty)");
    p.rule(
        "allow",
        "file-read* file-write* file-ioctl",
        &DEVICES_READ_WRITE
            .iter()
            .map(|d| format!("(literal {})", string(d)))
            .collect::<Vec<_>>(),
    );
    p.rule(
        "allow",
        "file-read*",
        &DEVICES_READ
            .iter()
            .map(|d| format!("(literal {})", string(d)))
            .collect::<Vec<_>>(),
    );
    p.form("(allow file-read* file-write-data (subpath \"/dev/fd\"))");
    let ttys = format!("(regex {})", string(TTYS));
    p.form(&format!("(deny file-read-data file-write* {ttys})"));
    p.form(&format!(
        "(allow file-read* file-write* (require-all {ttys} (extension {})))",
        string(PTY_EXTENSION)
    ));
    p.form(&format!("(allow file-ioctl {ttys})"));

    p.section("Writes: the workspace and the spec's writable paths (agent state, caches, the session's TMPDIR).");
    let mut write_roots = vec![workspace.clone()];
    write_roots.extend(writable.iter().cloned());
    p.rule(
        "allow",
        "file-read* file-write*",
        &subpaths(&dedup(write_roots.clone()), Spellings::Allow),
    );

    let mut read_only_all = read_only.clone();
    read_only_all.extend(bound.iter().cloned());
    if !read_only_all.is_empty() {
        p.section("Read-only inside what is writable (git hooks and config, an agent's configuration, files a Linux session would shadow); their directories stay where they are.");
        p.rule(
            "deny",
            "file-write*",
            &denied(&dedup(read_only_all.clone()), Extent::Subtree),
        );
        let held = held_directories(&read_only_all, &write_roots);
        if !held.is_empty() {
            p.rule("deny", "file-write-unlink", &denied(&held, Extent::Itself));
        }
    }
    if !writable_again.is_empty() {
        p.section(
            "Writable again beneath a read-only path (the session's TMPDIR inside aq's state).",
        );
        p.rule(
            "allow",
            "file-read* file-write*",
            &subpaths(&dedup(writable_again.clone()), Spellings::Allow),
        );
    }

    p.section("Network.");
    match spec.network {
        NetworkMode::Host => {
            p.comment("The host's network (TCP and UDP, in and out), its resolver and certificate checks.");
            p.form("(allow network-outbound (remote ip \"*:*\"))");
            p.form("(allow network-bind network-inbound (local ip \"*:*\"))");
            p.form("(allow system-socket)");
            p.rule(
                "allow",
                "mach-lookup",
                &MACH_SERVICES_NETWORK
                    .iter()
                    .map(|s| format!("(global-name {})", string(s)))
                    .collect::<Vec<_>>(),
            );
            p.form(&format!(
                "(allow network-outbound (literal {}))",
                string(RESOLVER_SOCKET)
            ));
        }
        NetworkMode::Off => {
            p.comment("Off: no address at all but these ports on the host's loopback, where the session listens (its broker).");
            for port in &spec.loopback_listeners {
                p.form(&format!(
                    "(allow network-outbound (remote ip \"localhost:{port}\"))"
                ));
            }
        }
    }
    if !sockets.is_empty() {
        p.comment("Unix sockets: the session's own (its supervisor) and no other of the host.");
        p.rule(
            "allow",
            "network-outbound",
            &literals(&dedup(sockets), Spellings::Allow),
        );
    }

    p.section("Secrets, last so that no allow above matches them again: denied whether they exist or not, under every spelling, and the directories that hold them stay where they are.");
    let mut held_roots = write_roots.clone();
    held_roots.extend(writable_again.iter().cloned());
    for m in dedup(masked) {
        p.comment(&format!("masked: {}", m.display()));
        p.rule(
            "deny",
            "file-read* file-write*",
            &denied(std::slice::from_ref(&m), Extent::Subtree),
        );
        let held = held_directories(std::slice::from_ref(&m), &held_roots);
        if !held.is_empty() {
            p.rule("deny", "file-write-unlink", &denied(&held, Extent::Itself));
        }
    }
    if !names.is_empty() {
        p.comment("Secret file names and paths in the workspace, present or not.");
        let filters: Vec<String> = spellings(&workspace, Spellings::Deny)
            .iter()
            .flat_map(|w| {
                names
                    .iter()
                    .map(move |n| format!("(regex {})", string(&path_regex(w, n))))
            })
            .collect();
        p.rule("deny", "file-read* file-write*", &filters);
    }
    Ok(p.text)
}

/// `sandbox-exec -p PROFILE -- COMMAND ARGS...`. `sandbox-exec` reads its
/// options with getopt(3), which ends them at `--`: the command is never
/// taken for an option, whatever its first character.
pub fn sandbox_exec_argv(
    profile: &str,
    command: &[OsString],
) -> Result<Vec<OsString>, SeatbeltError> {
    if command.first().is_none_or(|c| c.is_empty()) {
        return Err(SeatbeltError::EmptyCommand);
    }
    let nul = |s: &OsStr| s.as_encoded_bytes().contains(&0);
    if profile.contains('\0') || command.iter().any(|a| nul(a)) {
        return Err(SeatbeltError::NulInArgument);
    }
    let mut argv: Vec<OsString> = vec![
        SANDBOX_EXEC.into(),
        "-p".into(),
        profile.into(),
        "--".into(),
    ];
    argv.extend(command.iter().cloned());
    Ok(argv)
}

/// The [`std::process::Command`] for [`sandbox_exec_argv`], with exactly
/// `env` as its environment (nothing inherited, as on Linux).
pub fn sandbox_exec_command(
    profile: &str,
    command: &[OsString],
    env: &[(OsString, OsString)],
) -> Result<std::process::Command, SeatbeltError> {
    let argv = sandbox_exec_argv(profile, command)?;
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]).env_clear().envs(env.iter().cloned());
    Ok(cmd)
}

/// The profile's text, written a form at a time.
#[derive(Default)]
struct Profile {
    text: String,
}

impl Profile {
    fn comment(&mut self, line: &str) {
        let safe: String = line
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
        let _ = writeln!(self.text, "; {safe}");
    }

    fn blank(&mut self) {
        self.text.push('\n');
    }

    fn section(&mut self, title: &str) {
        self.blank();
        self.comment(title);
    }

    fn form(&mut self, form: &str) {
        self.text.push_str(form);
        self.text.push('\n');
    }

    /// `(ACTION OPS FILTER...)`, a filter a line. No filter: nothing (an
    /// action with no filter would apply everywhere).
    fn rule(&mut self, action: &str, ops: &str, filters: &[String]) {
        if filters.is_empty() {
            return;
        }
        let _ = write!(self.text, "({action} {ops}");
        for f in filters {
            let _ = write!(self.text, "\n  {f}");
        }
        self.text.push_str(")\n");
    }
}

/// Which spellings of a path a rule names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Spellings {
    /// The path and its `/private` twin.
    Allow,
    /// Those and the data volume's name: a deny must hold under every name.
    Deny,
}

/// The names the kernel may see for `path`.
fn spellings(path: &Path, which: Spellings) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    let private = Path::new("/private");
    let linked = ["tmp", "var", "etc"];
    if let Ok(rest) = path.strip_prefix(private) {
        if rest
            .components()
            .next()
            .is_some_and(|c| linked.iter().any(|l| c.as_os_str() == *l))
        {
            out.push(Path::new("/").join(rest));
        }
    } else if path
        .components()
        .nth(1)
        .is_some_and(|c| linked.iter().any(|l| c.as_os_str() == *l))
    {
        out.push(private.join(path.strip_prefix("/").unwrap_or(path)));
    }
    if which == Spellings::Deny {
        let data = Path::new(DATA_VOLUME);
        let extra: Vec<PathBuf> = out
            .iter()
            .filter(|p| !p.starts_with("/System") && !p.starts_with("/dev"))
            .filter(|p| !linked.iter().any(|l| p.starts_with(Path::new("/").join(l))))
            .map(|p| data.join(p.strip_prefix("/").unwrap_or(p)))
            .collect();
        out.extend(extra);
    }
    out
}

fn subpaths(paths: &[PathBuf], which: Spellings) -> Vec<String> {
    filters("subpath", paths, which)
}

fn literals(paths: &[PathBuf], which: Spellings) -> Vec<String> {
    filters("literal", paths, which)
}

/// What a deny names: the path or its subtree.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Extent {
    /// The path alone (a directory that may not be renamed).
    Itself,
    /// The path and everything beneath it.
    Subtree,
}

/// The filters of a deny of `paths`: every spelling, and each of them as
/// a case-insensitive pattern (the default file system ignores case, so
/// `.GIT/hooks` is `.git/hooks`, and a deny spelled one way only is
/// walked around by another).
fn denied(paths: &[PathBuf], extent: Extent) -> Vec<String> {
    let (mut out, tail) = match extent {
        Extent::Itself => (literals(paths, Spellings::Deny), "$"),
        Extent::Subtree => (subpaths(paths, Spellings::Deny), "(/.*)?$"),
    };
    for p in paths {
        for s in spellings(p, Spellings::Deny) {
            let f = format!("(regex {})", string(&path_regex(&s, tail)));
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

fn filters(kind: &str, paths: &[PathBuf], which: Spellings) -> Vec<String> {
    let mut out = Vec::new();
    for p in paths {
        for s in spellings(p, which) {
            let f = format!("({kind} {})", string(&s.to_string_lossy()));
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// The directories that hold one of `paths` (the path itself included)
/// at or beneath one of the writable `roots`: renaming or removing them
/// would move a protected path out from under its rule.
fn held_directories(paths: &[PathBuf], roots: &[PathBuf]) -> Vec<PathBuf> {
    let roots: Vec<PathBuf> = roots
        .iter()
        .flat_map(|r| spellings(r, Spellings::Allow))
        .collect();
    let mut out = Vec::new();
    for p in paths {
        for a in p.ancestors().skip(1) {
            if roots.iter().any(|r| a.starts_with(r)) && !out.iter().any(|o: &PathBuf| o == a) {
                out.push(a.to_path_buf());
            }
        }
    }
    out
}

fn dedup(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// `path` as the profile may name it: absolute, UTF-8, no control
/// character, no `.` or `..` (the kernel matches resolved paths, so such a
/// rule would match nothing: an allow that does not hold, a deny that does
/// not deny). Rebuilt from its components (`//` and a trailing `/` go).
fn clean(path: &Path, role: &'static str) -> Result<PathBuf, SeatbeltError> {
    let err = |why| SeatbeltError::UnrepresentablePath {
        role,
        path: path.to_path_buf(),
        why,
    };
    let text = path.to_str().ok_or_else(|| err("not UTF-8"))?;
    if text.chars().any(char::is_control) {
        return Err(err("it holds a control character"));
    }
    if !path.is_absolute() {
        return Err(err("not absolute"));
    }
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir => {}
            Component::Normal(n) => out.push(n),
            Component::CurDir | Component::ParentDir => {
                return Err(err("it holds a `.` or `..` component"));
            }
            Component::Prefix(_) => return Err(err("not a Unix path")),
        }
    }
    Ok(out)
}

/// `s` as an SBPL string literal: `"` and `\` escaped. Callers have refused
/// control characters already ([`clean`], [`name_pattern`]).
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// One character of a path in a regular expression matching it exactly,
/// ASCII letters in either case (the default file system ignores case).
fn push_literal(out: &mut String, c: char) {
    if c.is_ascii_alphabetic() {
        out.push('[');
        out.push(c.to_ascii_lowercase());
        out.push(c.to_ascii_uppercase());
        out.push(']');
    } else if "\\.^$|?*+()[]{}".contains(c) {
        out.push('\\');
        out.push(c);
    } else {
        out.push(c);
    }
}

/// `^PATH` + `tail`, `PATH` matched literally.
fn path_regex(path: &Path, tail: &str) -> String {
    let mut out = String::from("^");
    for c in path.to_string_lossy().chars() {
        push_literal(&mut out, c);
    }
    out.push_str(tail);
    out
}

/// A masked glob as the part of a regular expression after the
/// workspace's `/`. Without a `/` it is a file name, matched in any
/// directory; with one, a path from the workspace's root. `*` is any run
/// and `?` any one character but `/`, `**` any run at all, everything else
/// literal. Broader than the catalog's matching where that errs on the
/// side of denying (a leading `*` matches a leading dot here). Character
/// classes (`[...]`) are refused: they are not written as rules yet.
fn name_pattern(name: &str) -> Result<String, SeatbeltError> {
    let err = |why| SeatbeltError::UnrepresentableName {
        name: name.to_string(),
        why,
    };
    let name = name.trim_end_matches('/');
    if name.is_empty() || name.starts_with('/') {
        return Err(err("not a name or a path inside the workspace"));
    }
    if name
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(err("it holds an empty, `.` or `..` component"));
    }
    if name.chars().any(char::is_control) {
        return Err(err("it holds a control character"));
    }
    if name.contains('[') {
        return Err(err("character classes are not supported"));
    }
    let mut out = String::from(if name.contains('/') { "/" } else { "/(.*/)?" });
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                out.push_str(".*");
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            c => push_literal(&mut out, c),
        }
    }
    out.push_str("(/.*)?$");
    Ok(out)
}

#[cfg(test)]
#[path = "seatbelt_tests.rs"]
mod tests;
