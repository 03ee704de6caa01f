//! `aq doctor`: what this machine offers the kernel sandbox, which profiles
//! will work, and (`--fix`) the commands that enable what is missing.
//!
//! Decide, then do: [`Host::probe`] gathers the facts (namespaces are tried
//! for real in forked children through `aq_sandbox`, the rest is read from
//! `/proc` and `/sys`); [`diagnose`] turns them into [`Check`]s without any
//! I/O, so every diagnosis is unit-tested with faked facts. Fix commands are
//! printed, never run.
//!
//! Outside Linux none of these checks apply: [`run`] says so, says whether
//! macOS's `sandbox-exec` is there (`aq run` starts sandboxed profiles
//! with it), and which profiles work (`elsewhere`).
// The Linux checks build everywhere (they are pure), but only Linux runs them.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use aq_sandbox::{HostFacts, LANDLOCK_MAX_ABI, LANDLOCK_MIN_ABI, SandboxSpec};
use serde::Serialize;

use crate::cli::DoctorArgs;
use crate::exit::ExitCode;

/// The profile `aq run` uses unless told otherwise.
const DEFAULT_PROFILE: &str = "strict";

/// Profiles built on the kernel sandbox, and the checks each one needs.
const KERNEL_PROFILES: [&str; 4] = ["strict", "dev", "network-isolated", "ci"];
const KERNEL_NEEDS: [&str; 8] = [
    "user-namespace",
    "mount-namespace",
    "pid-namespace",
    "ipc-namespace",
    "network-namespace",
    "landlock",
    "seccomp",
    "exec-guard",
];

// errno values the diagnosis names.
const EPERM: i32 = 1;
const EINVAL: i32 = 22;
const ENOSPC: i32 = 28;
const ENOSYS: i32 = 38;

/// Runs the checks and prints them.
#[cfg(target_os = "linux")]
pub fn run(args: &DoctorArgs) -> Result<ExitCode, String> {
    let checks = diagnose(&Host::probe());
    let profiles = profiles(&checks);
    if args.json {
        let out = serde_json::json!({ "checks": checks, "profiles": profiles });
        println!("{out}");
    } else {
        print!("{}", render_text(&checks, &profiles, args.fix));
    }
    let default_works = profiles
        .iter()
        .any(|p| p.name == DEFAULT_PROFILE && p.works);
    Ok(if default_works {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// Says that the Linux checks do not apply here, what was checked instead,
/// and which profiles work; exits as on Linux (findings when the default
/// profile fails closed).
#[cfg(not(target_os = "linux"))]
pub fn run(args: &DoctorArgs) -> Result<ExitCode, String> {
    let os = std::env::consts::OS;
    let exec = Path::new(elsewhere::SANDBOX_EXEC);
    let checks = elsewhere::checks(os, exec.is_file().then_some(exec));
    let profiles = elsewhere::profiles(os, &checks);
    if args.json {
        let out = serde_json::json!({ "checks": checks, "profiles": profiles });
        println!("{out}");
    } else {
        print!("{}", elsewhere::render_text(os, &checks, &profiles));
    }
    let default_works = profiles
        .iter()
        .any(|p| p.name == DEFAULT_PROFILE && p.works);
    Ok(if default_works {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// `aq doctor` where there is no Linux kernel sandbox. Pure, so that it is
/// tested where CI runs.
#[cfg_attr(target_os = "linux", allow(dead_code))]
mod elsewhere {
    use std::fmt::Write as _;
    use std::path::Path;

    use super::{Check, KERNEL_PROFILES, Profile, Status};

    /// macOS's sandbox launcher (Seatbelt), the one `aq run` starts.
    pub use aq_sandbox::SANDBOX_EXEC;

    /// The name of the check that stands for every Linux one.
    const LINUX_SANDBOX: &str = "linux-sandbox";

    /// The name of the `sandbox-exec` check.
    const SANDBOX_EXEC_CHECK: &str = "sandbox-exec";

    /// What was checked on `os`: the Linux sandbox is not there (so its
    /// checks do not apply), and whether `sandbox-exec` is, which `aq run`
    /// starts sandboxed profiles with on macOS.
    pub fn checks(os: &str, sandbox_exec: Option<&Path>) -> Vec<Check> {
        let used = if os == "macos" {
            "`aq run` starts the sandboxed profiles under Seatbelt with it"
        } else {
            "aq uses it on macOS only"
        };
        vec![
            Check {
                name: LINUX_SANDBOX,
                status: Status::Missing,
                detail: format!(
                    "the kernel sandbox needs Linux and this system is {os}: its checks do not apply"
                ),
                fix: Vec::new(),
            },
            Check {
                name: SANDBOX_EXEC_CHECK,
                status: if sandbox_exec.is_some() {
                    Status::Ok
                } else {
                    Status::Missing
                },
                detail: match sandbox_exec {
                    Some(p) => format!("{} is present ({used})", p.display()),
                    None => format!("{SANDBOX_EXEC} not found ({used})"),
                },
                fix: Vec::new(),
            },
        ]
    }

    /// Whether the sandboxed profiles run on `os`: on macOS under Seatbelt
    /// when `sandbox-exec` is there; elsewhere they fail closed (exit 125).
    /// `shims-only` works everywhere.
    pub fn profiles(os: &str, checks: &[Check]) -> Vec<Profile> {
        let seatbelt = os == "macos"
            && checks
                .iter()
                .any(|c| c.name == SANDBOX_EXEC_CHECK && c.status == Status::Ok);
        let mut out: Vec<Profile> = KERNEL_PROFILES
            .iter()
            .map(|&name| Profile {
                name,
                works: seatbelt,
                missing: match (seatbelt, os) {
                    (true, _) => Vec::new(),
                    (false, "macos") => vec![SANDBOX_EXEC_CHECK],
                    (false, _) => vec![LINUX_SANDBOX],
                },
            })
            .collect();
        out.push(Profile {
            name: "shims-only",
            works: true,
            missing: Vec::new(),
        });
        out
    }

    /// The human-readable report.
    pub fn render_text(os: &str, checks: &[Check], profiles: &[Profile]) -> String {
        let mut s = super::render_checks(checks);
        let names = |works: bool| super::profile_names(profiles, works);
        let failing = names(false);
        let needs = if os == "macos" {
            "they need sandbox-exec"
        } else {
            "they need the Linux kernel sandbox, or Seatbelt on macOS"
        };
        let _ = write!(
            s,
            "profiles: works: {} (no exec guard: the PATH shims are the firewall",
            names(true)
        );
        if os == "macos" && failing.is_empty() {
            s.push_str("; the sandboxed ones run under a Seatbelt profile, with the network only through the broker on the host's loopback, and refuse an agent preset that needs the key proxy or model bridges");
        }
        s.push(')');
        if !failing.is_empty() {
            let _ = write!(s, "; fails closed: {failing} (exit 125: {needs})");
        }
        s.push('\n');
        s
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn works(os: &str, checks: &[Check]) -> Vec<(&'static str, bool)> {
            profiles(os, checks)
                .iter()
                .map(|p| (p.name, p.works))
                .collect()
        }

        #[test]
        fn on_macos_with_sandbox_exec_every_profile_works() {
            let checks = checks("macos", Some(Path::new(SANDBOX_EXEC)));
            assert_eq!(
                works("macos", &checks),
                [
                    ("strict", true),
                    ("dev", true),
                    ("network-isolated", true),
                    ("ci", true),
                    ("shims-only", true)
                ]
            );
            let text = render_text("macos", &checks, &profiles("macos", &checks));
            assert!(
                text.contains("missing  linux-sandbox ")
                    && text.contains("this system is macos: its checks do not apply")
                    && text.contains("ok       sandbox-exec   /usr/bin/sandbox-exec is present (`aq run` starts the sandboxed profiles under Seatbelt with it)")
                    && text.contains("profiles: works: strict, dev, network-isolated, ci, shims-only (no exec guard")
                    && !text.contains("fails closed")
                    && !text.contains("does not use it yet"),
                "{text}"
            );
        }

        #[test]
        fn without_sandbox_exec_or_off_macos_only_shims_only_works() {
            let want = [
                ("strict", false),
                ("dev", false),
                ("network-isolated", false),
                ("ci", false),
                ("shims-only", true),
            ];
            let mac = checks("macos", None);
            assert_eq!(works("macos", &mac), want);
            let text = render_text("macos", &mac, &profiles("macos", &mac));
            assert!(
                text.contains("missing  sandbox-exec   /usr/bin/sandbox-exec not found")
                    && text.contains("fails closed: strict, dev, network-isolated, ci (exit 125: they need sandbox-exec)"),
                "{text}"
            );
            // Another system: sandbox-exec there or not, nothing aq uses.
            let bsd = checks("freebsd", Some(Path::new(SANDBOX_EXEC)));
            assert_eq!(works("freebsd", &bsd), want);
            let text = render_text("freebsd", &bsd, &profiles("freebsd", &bsd));
            assert!(
                text.contains("(aq uses it on macOS only)")
                    && text.contains(
                        "exit 125: they need the Linux kernel sandbox, or Seatbelt on macOS"
                    ),
                "{text}"
            );
        }
    }
}

/// How well one sandbox mechanism is supported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Fully available.
    Ok,
    /// Usable, with less than the sandbox can use.
    Limited,
    /// Not available: profiles that need it will fail closed.
    Missing,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Limited => "limited",
            Status::Missing => "missing",
        }
    }
}

/// One check: a mechanism, its status, why, and the commands that fix it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Kebab-case name, e.g. `user-namespace`.
    pub name: &'static str,
    /// Ok, limited or missing.
    pub status: Status,
    /// One line: what was found and, when not ok, the likely cause.
    pub detail: String,
    /// Commands to run (lines starting with `#` are instructions); empty when ok.
    pub fix: Vec<String>,
}

/// Whether a profile will work here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Profile {
    /// Profile name.
    pub name: &'static str,
    /// True when nothing it needs is missing.
    pub works: bool,
    /// The missing checks it needs.
    pub missing: Vec<&'static str>,
}

/// A refused probe: the errno when the kernel gave one, and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    errno: Option<i32>,
    message: String,
}

impl From<std::io::Error> for Refusal {
    fn from(e: std::io::Error) -> Refusal {
        Refusal {
            errno: e.raw_os_error(),
            message: e.to_string(),
        }
    }
}

/// What the host offers, gathered by [`Host::probe`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    uid: u32,
    kernel: Option<String>,
    /// `unshare(CLONE_NEWUSER)` in a child.
    user_ns: Result<(), Refusal>,
    /// Each other namespace, unshared together with a user namespace.
    other_ns: Vec<(&'static str, &'static str, Result<(), Refusal>)>,
    unprivileged_userns_clone: Option<String>,
    max_user_namespaces: Option<String>,
    apparmor_restrict_userns: Option<String>,
    /// The `Seccomp:` field of `/proc/self/status` (None: no seccomp).
    seccomp_mode: Option<u32>,
    /// `Seccomp_filters:` present, or `/proc/sys/kernel/seccomp/actions_avail`.
    seccomp_filter: bool,
    seccomp_actions: Option<String>,
    container: Option<&'static str>,
    landlock_abi: u32,
    lsm: Option<String>,
    cgroup: Cgroup,
    /// `/proc/sys/kernel/yama/ptrace_scope` (None: no Yama).
    ptrace_scope: Option<String>,
}

/// cgroup facts: the filesystem at `/sys/fs/cgroup` and this process's cgroup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cgroup {
    fs_type: Option<String>,
    /// The `0::PATH` entry of `/proc/self/cgroup`.
    path: Option<String>,
    controllers: Option<String>,
    /// Which of the files that delegation needs are writable.
    writable: Vec<(&'static str, bool)>,
}

impl Host {
    /// Probe this machine. Namespaces are created for real in short-lived
    /// children; nothing is changed.
    pub fn probe() -> Host {
        let facts = HostFacts::probe(&SandboxSpec::strict("/"));
        let status = read("/proc/self/status").unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
        };
        let seccomp_actions = read("/proc/sys/kernel/seccomp/actions_avail");
        Host {
            uid: facts.uid,
            kernel: read("/proc/sys/kernel/osrelease"),
            user_ns: probe_ns(&[aq_sandbox::Namespace::User]),
            other_ns: probe_other_ns(),
            unprivileged_userns_clone: read("/proc/sys/kernel/unprivileged_userns_clone"),
            max_user_namespaces: read("/proc/sys/user/max_user_namespaces"),
            apparmor_restrict_userns: read(
                "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
            ),
            seccomp_mode: field("Seccomp:").and_then(|v| v.parse().ok()),
            seccomp_filter: field("Seccomp_filters:").is_some() || seccomp_actions.is_some(),
            seccomp_actions,
            container: detect_container(),
            landlock_abi: facts.landlock_abi,
            lsm: read("/sys/kernel/security/lsm"),
            cgroup: probe_cgroup(),
            ptrace_scope: read("/proc/sys/kernel/yama/ptrace_scope"),
        }
    }
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

#[cfg(target_os = "linux")]
fn probe_ns(namespaces: &[aq_sandbox::Namespace]) -> Result<(), Refusal> {
    aq_sandbox::Namespace::probe_unshare(namespaces).map_err(Refusal::from)
}

#[cfg(not(target_os = "linux"))]
fn probe_ns(_: &[aq_sandbox::Namespace]) -> Result<(), Refusal> {
    Err(Refusal {
        errno: Some(ENOSYS),
        message: "not Linux".to_string(),
    })
}

fn probe_other_ns() -> Vec<(&'static str, &'static str, Result<(), Refusal>)> {
    use aq_sandbox::Namespace as N;
    [
        ("mount-namespace", "ns", N::Mount),
        ("pid-namespace", "pid", N::Pid),
        ("ipc-namespace", "ipc", N::Ipc),
        ("network-namespace", "net", N::Net),
    ]
    .into_iter()
    .map(|(name, short, ns)| (name, short, probe_ns(&[N::User, ns])))
    .collect()
}

fn detect_container() -> Option<&'static str> {
    if Path::new("/.dockerenv").exists() {
        Some("docker")
    } else if Path::new("/run/.containerenv").exists() {
        Some("podman")
    } else if std::env::var_os("container").is_some() {
        Some("a container")
    } else {
        None
    }
}

fn probe_cgroup() -> Cgroup {
    let fs_type = read("/proc/self/mountinfo").and_then(|m| mount_fs_type(&m, "/sys/fs/cgroup"));
    let path = read("/proc/self/cgroup").and_then(|c| unified_cgroup_path(&c));
    let dir = path
        .as_deref()
        .map(|p| PathBuf::from("/sys/fs/cgroup").join(p.trim_start_matches('/')));
    let controllers = dir
        .as_ref()
        .and_then(|d| read(d.join("cgroup.controllers")));
    // Opening for writing changes nothing until something is written.
    let writable = [
        "cgroup.procs",
        "cgroup.subtree_control",
        "memory.max",
        "pids.max",
    ]
    .into_iter()
    .map(|f| {
        let ok = dir.as_ref().is_some_and(|d| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(d.join(f))
                .is_ok()
        });
        (f, ok)
    })
    .collect();
    Cgroup {
        fs_type,
        path,
        controllers,
        writable,
    }
}

/// The filesystem type mounted on `mount_point` (the topmost mount) in a
/// `/proc/self/mountinfo` text.
fn mount_fs_type(mountinfo: &str, mount_point: &str) -> Option<String> {
    mountinfo
        .lines()
        .filter(|l| l.split(' ').nth(4) == Some(mount_point))
        .filter_map(|l| l.split(" - ").nth(1)?.split(' ').next())
        .next_back()
        .map(str::to_string)
}

/// The cgroup v2 path (`0::PATH`) in a `/proc/self/cgroup` text.
fn unified_cgroup_path(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(str::to_string)
}

/// Every check, in a fixed order.
pub fn diagnose(host: &Host) -> Vec<Check> {
    let mut checks = vec![check_user_ns(host)];
    for (name, short, result) in &host.other_ns {
        checks.push(check_other_ns(host, name, short, result));
    }
    checks.push(check_landlock(host));
    checks.push(check_seccomp(host));
    checks.push(check_exec_guard(host));
    checks.push(check_cgroup(host));
    checks
}

/// A sysctl and the commands that set it now and at every boot.
fn sysctl_fix(key: &str, value: &str) -> Vec<String> {
    vec![
        format!("sudo sysctl -w {key}={value}"),
        format!("echo '{key} = {value}' | sudo tee /etc/sysctl.d/60-aq-sandbox.conf"),
    ]
}

/// The likely causes of a refused `unshare` (with their fixes), most specific first.
fn unshare_causes(host: &Host, refusal: &Refusal) -> Vec<(String, Vec<String>)> {
    let mut causes = Vec::new();
    let unprivileged = host.uid != 0;
    let is = |v: &Option<String>, want: &str| v.as_deref() == Some(want);
    if unprivileged && is(&host.unprivileged_userns_clone, "0") {
        causes.push((
            "kernel.unprivileged_userns_clone = 0".to_string(),
            sysctl_fix("kernel.unprivileged_userns_clone", "1"),
        ));
    }
    if is(&host.max_user_namespaces, "0") {
        causes.push((
            "user.max_user_namespaces = 0".to_string(),
            sysctl_fix("user.max_user_namespaces", "15000"),
        ));
    } else if refusal.errno == Some(ENOSPC) {
        let limit = host.max_user_namespaces.as_deref().unwrap_or("?");
        causes.push((
            format!("the namespace limit is exhausted (user.max_user_namespaces = {limit})"),
            sysctl_fix("user.max_user_namespaces", "15000"),
        ));
    }
    if unprivileged && is(&host.apparmor_restrict_userns, "1") {
        causes.push((
            "AppArmor restricts unprivileged user namespaces \
             (kernel.apparmor_restrict_unprivileged_userns = 1)"
                .to_string(),
            sysctl_fix("kernel.apparmor_restrict_unprivileged_userns", "0"),
        ));
    }
    let denied = matches!(refusal.errno, Some(EPERM) | None);
    if denied && (host.seccomp_mode == Some(2) || host.container.is_some()) {
        let place = host.container.unwrap_or("this process");
        causes.push((
            format!("a seccomp filter ({place}) may deny unshare"),
            vec![
                "# run the container with a seccomp profile that allows unshare and \
                 clone with namespace flags, e.g.:"
                    .to_string(),
                "docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined ..."
                    .to_string(),
            ],
        ));
    }
    if matches!(refusal.errno, Some(EINVAL) | Some(ENOSYS)) && causes.is_empty() {
        causes.push((
            "the kernel lacks namespace support (CONFIG_USER_NS and friends)".to_string(),
            vec!["# boot a kernel built with CONFIG_USER_NS=y and CONFIG_NAMESPACES=y".to_string()],
        ));
    }
    if refusal.errno.is_none() && causes.is_empty() {
        causes.push((
            "a seccomp filter kills the call".to_string(),
            vec!["# run aq where no seccomp filter forbids unshare".to_string()],
        ));
    }
    causes
}

fn refused(what: &str, host: &Host, refusal: &Refusal) -> (String, Vec<String>) {
    let causes = unshare_causes(host, refusal);
    let cause = if causes.is_empty() {
        "cause unknown".to_string()
    } else {
        format!(
            "likely cause: {}",
            causes
                .iter()
                .map(|(c, _)| c.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    let detail = format!("{what}: {}; {cause}", refusal.message);
    (detail, causes.into_iter().flat_map(|(_, f)| f).collect())
}

fn check_user_ns(host: &Host) -> Check {
    let name = "user-namespace";
    match &host.user_ns {
        Ok(()) => Check {
            name,
            status: Status::Ok,
            detail: format!("unshare(CLONE_NEWUSER) works (uid {})", host.uid),
            fix: Vec::new(),
        },
        Err(refusal) => {
            let (detail, fix) = refused("unshare(CLONE_NEWUSER) failed", host, refusal);
            Check {
                name,
                status: Status::Missing,
                detail,
                fix,
            }
        }
    }
}

fn check_other_ns(
    host: &Host,
    name: &'static str,
    short: &str,
    result: &Result<(), Refusal>,
) -> Check {
    let what = format!("unshare(CLONE_NEWUSER|CLONE_NEW{})", short.to_uppercase());
    // The limit sysctl is named after the namespace, not after its clone flag.
    let limit = if short == "ns" { "mnt" } else { short };
    match (result, &host.user_ns) {
        (Ok(()), _) => Check {
            name,
            status: Status::Ok,
            detail: format!("{what} works"),
            fix: Vec::new(),
        },
        (Err(refusal), Err(_)) => Check {
            name,
            status: Status::Missing,
            detail: format!(
                "{what} failed: {}; needs a user namespace (see user-namespace)",
                refusal.message
            ),
            fix: vec!["# fix user-namespace first".to_string()],
        },
        (Err(refusal), Ok(())) => {
            let (detail, mut fix) = if refusal.errno == Some(ENOSPC) {
                let key = format!("user.max_{limit}_namespaces");
                (
                    format!(
                        "{what} failed: {}; likely cause: {key} = 0",
                        refusal.message
                    ),
                    sysctl_fix(&key, "15000"),
                )
            } else {
                refused(&format!("{what} failed"), host, refusal)
            };
            if fix.is_empty() && refusal.errno == Some(EPERM) {
                fix.push("# an LSM or seccomp filter denies it; run aq outside it".to_string());
            }
            Check {
                name,
                status: Status::Missing,
                detail,
                fix,
            }
        }
    }
}

fn check_landlock(host: &Host) -> Check {
    let name = "landlock";
    let abi = host.landlock_abi;
    let kernel = host.kernel.as_deref().unwrap_or("unknown");
    let need = format!("the sandbox needs ABI {LANDLOCK_MIN_ABI}, uses up to {LANDLOCK_MAX_ABI}");
    if abi == 0 {
        let lsm_fix = match host.lsm.as_deref() {
            Some(list) if !list.split(',').any(|m| m == "landlock") => vec![
                format!(
                    "# add lsm=landlock,{list} to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub), then:"
                ),
                "sudo update-grub && sudo reboot".to_string(),
            ],
            _ => vec![
                "# boot a kernel >= 6.2 built with CONFIG_SECURITY_LANDLOCK=y and \
                 lsm=landlock,... on its command line (GRUB_CMDLINE_LINUX in /etc/default/grub), then:"
                    .to_string(),
                "sudo update-grub && sudo reboot".to_string(),
            ],
        };
        return Check {
            name,
            status: Status::Missing,
            detail: format!(
                "not available (kernel {kernel}; active LSMs: {}); {need}",
                host.lsm.as_deref().unwrap_or("unknown")
            ),
            fix: lsm_fix,
        };
    }
    if abi < LANDLOCK_MIN_ABI {
        return Check {
            name,
            status: Status::Missing,
            detail: format!("ABI {abi} (kernel {kernel}) is too old; {need}"),
            fix: vec!["# boot a kernel >= 6.2 (Landlock ABI 3)".to_string()],
        };
    }
    if abi < LANDLOCK_MAX_ABI {
        return Check {
            name,
            status: Status::Limited,
            detail: format!(
                "ABI {abi}: enough, but without signal and abstract-socket scoping; {need}"
            ),
            fix: vec!["# boot a kernel >= 6.12 (Landlock ABI 6) for scoping".to_string()],
        };
    }
    Check {
        name,
        status: Status::Ok,
        detail: format!("ABI {abi} (kernel {kernel}); {need}"),
        fix: Vec::new(),
    }
}

fn check_seccomp(host: &Host) -> Check {
    let name = "seccomp";
    let Some(mode) = host.seccomp_mode else {
        return Check {
            name,
            status: Status::Missing,
            detail: "no Seccomp field in /proc/self/status: kernel without CONFIG_SECCOMP"
                .to_string(),
            fix: vec!["# boot a kernel built with CONFIG_SECCOMP_FILTER=y".to_string()],
        };
    };
    if !host.seccomp_filter {
        return Check {
            name,
            status: Status::Missing,
            detail: "seccomp without filter mode (CONFIG_SECCOMP_FILTER)".to_string(),
            fix: vec!["# boot a kernel built with CONFIG_SECCOMP_FILTER=y".to_string()],
        };
    }
    let actions = host.seccomp_actions.as_deref().unwrap_or("unknown");
    let already = if mode == 2 {
        "; a filter is already active on aq (filters stack)"
    } else {
        ""
    };
    Check {
        name,
        status: Status::Ok,
        detail: format!("filter mode (actions: {actions}){already}"),
        fix: Vec::new(),
    }
}

/// The exec guard traces the sandboxed tree (ptrace, as its parent) and
/// receives each `execve` as a seccomp user notification.
fn check_exec_guard(host: &Host) -> Check {
    let name = "exec-guard";
    let notif = host
        .seccomp_actions
        .as_deref()
        .is_some_and(|a| a.split_whitespace().any(|w| w == "user_notif"));
    if !notif {
        return Check {
            name,
            status: Status::Missing,
            detail: "seccomp user notification is not available (kernel older than 5.0?)"
                .to_string(),
            fix: vec!["# boot a kernel of 5.9 or newer".to_string()],
        };
    }
    match host.ptrace_scope.as_deref() {
        Some("3") => Check {
            name,
            status: Status::Missing,
            detail: "Yama ptrace_scope is 3: no process may trace another, so execs cannot be stopped at commit".to_string(),
            fix: vec!["# ptrace_scope 3 cannot be lowered until reboot; set kernel.yama.ptrace_scope=1 in /etc/sysctl.d/10-ptrace.conf and reboot".to_string()],
        },
        Some("2") if host.uid != 0 => Check {
            name,
            status: Status::Missing,
            detail: "Yama ptrace_scope is 2: only CAP_SYS_PTRACE may trace, so the exec guard cannot attach".to_string(),
            fix: sysctl_fix("kernel.yama.ptrace_scope", "1"),
        },
        scope => Check {
            name,
            status: Status::Ok,
            detail: format!(
                "seccomp user notification, and ptrace of its own children (Yama ptrace_scope {})",
                scope.unwrap_or("absent")
            ),
            fix: Vec::new(),
        },
    }
}

fn check_cgroup(host: &Host) -> Check {
    let name = "cgroup-v2";
    let cg = &host.cgroup;
    let fs = cg.fs_type.as_deref().unwrap_or("nothing");
    if fs != "cgroup2" {
        return Check {
            name,
            status: Status::Limited,
            detail: format!(
                "/sys/fs/cgroup is {fs}, not cgroup2 (cgroup v1 or none): rlimits only"
            ),
            fix: vec![
                "# boot with systemd.unified_cgroup_hierarchy=1 on the kernel command line \
                 (GRUB_CMDLINE_LINUX in /etc/default/grub), then:"
                    .to_string(),
                "sudo update-grub && sudo reboot".to_string(),
            ],
        };
    }
    let path = cg.path.as_deref().unwrap_or("?");
    let controllers = cg.controllers.as_deref().unwrap_or("");
    let has = |c: &str| controllers.split(' ').any(|x| x == c);
    let writable = |f: &str| cg.writable.iter().any(|(n, w)| *n == f && *w);
    let delegated = writable("cgroup.procs") && writable("cgroup.subtree_control");
    if delegated && has("memory") && has("pids") {
        return Check {
            name,
            status: Status::Ok,
            detail: format!("cgroup {path} is writable, with memory and pids controllers"),
            fix: Vec::new(),
        };
    }
    let why = if delegated {
        format!("cgroup {path} lacks the memory or pids controller (has: {controllers})")
    } else {
        format!("cgroup {path} is not delegated to uid {}", host.uid)
    };
    Check {
        name,
        status: Status::Limited,
        detail: format!("{why}: rlimits only"),
        fix: vec![
            "# run aq in a delegated scope:".to_string(),
            "systemd-run --user --scope -p Delegate=yes aq run -- COMMAND".to_string(),
        ],
    }
}

/// Which profiles work, given the checks.
pub fn profiles(checks: &[Check]) -> Vec<Profile> {
    let missing: Vec<&'static str> = checks
        .iter()
        .filter(|c| c.status == Status::Missing && KERNEL_NEEDS.contains(&c.name))
        .map(|c| c.name)
        .collect();
    let mut out: Vec<Profile> = KERNEL_PROFILES
        .iter()
        .map(|&name| Profile {
            name,
            works: missing.is_empty(),
            missing: missing.clone(),
        })
        .collect();
    out.push(Profile {
        name: "shims-only",
        works: true,
        missing: Vec::new(),
    });
    out
}

/// One line per check, names aligned: the report's table on every system.
fn render_checks(checks: &[Check]) -> String {
    let mut s = String::new();
    let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in checks {
        let _ = writeln!(
            s,
            "{:<7}  {:<width$}  {}",
            c.status.label(),
            c.name,
            c.detail
        );
    }
    s
}

/// The profiles that work (or do not), comma-separated.
fn profile_names(profiles: &[Profile], works: bool) -> String {
    profiles
        .iter()
        .filter(|p| p.works == works)
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The human-readable report.
pub fn render_text(checks: &[Check], profiles: &[Profile], fix: bool) -> String {
    let mut s = render_checks(checks);
    let names = |works: bool| profile_names(profiles, works);
    let _ = write!(s, "profiles: works: {}", names(true));
    if let Some(broken) = profiles.iter().find(|p| !p.works) {
        let _ = write!(
            s,
            "; fails closed: {} (missing: {})",
            names(false),
            broken.missing.join(", ")
        );
    }
    s.push('\n');
    s.push_str(
        "reads: strict keeps a private home (a refused read is EACCES); to see whether it is why, \
         run the same command with `aq run --home read-only -- ...`\n",
    );
    for c in checks.iter().filter(|c| c.status != Status::Ok) {
        if fix {
            let _ = writeln!(s, "to fix: {}:", c.name);
            for line in &c.fix {
                let _ = writeln!(s, "  {line}");
            }
        } else {
            let first = c.fix.first().map_or("", |l| l.trim_start_matches("# "));
            let _ = writeln!(
                s,
                "to fix: {}: {first}  (aq doctor --fix: all steps)",
                c.name
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn healthy() -> Host {
        Host {
            uid: 1000,
            kernel: Some("6.18.0".to_string()),
            user_ns: Ok(()),
            other_ns: vec![
                ("mount-namespace", "ns", Ok(())),
                ("pid-namespace", "pid", Ok(())),
                ("ipc-namespace", "ipc", Ok(())),
                ("network-namespace", "net", Ok(())),
            ],
            unprivileged_userns_clone: None,
            max_user_namespaces: Some("63000".to_string()),
            apparmor_restrict_userns: None,
            seccomp_mode: Some(0),
            seccomp_filter: true,
            seccomp_actions: Some(
                "kill_process kill_thread trap errno user_notif trace log allow".to_string(),
            ),
            container: None,
            landlock_abi: 7,
            lsm: Some("lockdown,capability,landlock,yama".to_string()),
            ptrace_scope: Some("1".to_string()),
            cgroup: Cgroup {
                fs_type: Some("cgroup2".to_string()),
                path: Some("/user.slice/user-1000.slice/user@1000.service/app.slice".to_string()),
                controllers: Some("cpu memory pids".to_string()),
                writable: vec![
                    ("cgroup.procs", true),
                    ("cgroup.subtree_control", true),
                    ("memory.max", true),
                    ("pids.max", true),
                ],
            },
        }
    }

    fn eperm() -> Refusal {
        Refusal {
            errno: Some(EPERM),
            message: "Operation not permitted (os error 1)".to_string(),
        }
    }

    fn find<'a>(checks: &'a [Check], name: &str) -> &'a Check {
        checks.iter().find(|c| c.name == name).expect(name)
    }

    #[test]
    fn yama_scope_3_stops_the_sandboxed_profiles() {
        let mut host = healthy();
        host.ptrace_scope = Some("3".to_string());
        let checks = diagnose(&host);
        let guard = checks.iter().find(|c| c.name == "exec-guard").unwrap();
        assert_eq!(guard.status, Status::Missing);
        let strict = &profiles(&checks)[0];
        assert!(!strict.works && strict.missing.contains(&"exec-guard"));
    }

    #[test]
    fn healthy_host_is_all_ok_and_every_profile_works() {
        let checks = diagnose(&healthy());
        for c in &checks {
            assert_eq!(c.status, Status::Ok, "{c:?}");
            assert!(c.fix.is_empty(), "{c:?}");
        }
        assert!(profiles(&checks).iter().all(|p| p.works));
    }

    #[test]
    fn apparmor_restriction_is_named_with_its_sysctl() {
        let mut host = healthy();
        host.user_ns = Err(eperm());
        host.apparmor_restrict_userns = Some("1".to_string());
        let checks = diagnose(&host);
        let c = find(&checks, "user-namespace");
        assert_eq!(c.status, Status::Missing);
        assert!(
            c.detail
                .contains("apparmor_restrict_unprivileged_userns = 1"),
            "{c:?}"
        );
        assert_eq!(
            c.fix[0],
            "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
        );
        let strict = &profiles(&checks)[0];
        assert_eq!((strict.name, strict.works), ("strict", false));
        assert_eq!(strict.missing, vec!["user-namespace"]);
    }

    #[test]
    fn userns_clone_sysctl_is_named_for_unprivileged_users_only() {
        let mut host = healthy();
        host.user_ns = Err(eperm());
        host.unprivileged_userns_clone = Some("0".to_string());
        let c = check_user_ns(&host);
        assert_eq!(
            c.fix[0],
            "sudo sysctl -w kernel.unprivileged_userns_clone=1"
        );
        host.uid = 0;
        let c = check_user_ns(&host);
        assert!(!c.detail.contains("unprivileged_userns_clone"), "{c:?}");
    }

    #[test]
    fn zero_max_user_namespaces_is_the_cause_of_enospc() {
        let mut host = healthy();
        host.user_ns = Err(Refusal {
            errno: Some(ENOSPC),
            message: "No space left on device (os error 28)".to_string(),
        });
        host.max_user_namespaces = Some("0".to_string());
        let c = check_user_ns(&host);
        assert!(c.detail.contains("user.max_user_namespaces = 0"), "{c:?}");
        assert_eq!(c.fix[0], "sudo sysctl -w user.max_user_namespaces=15000");
    }

    #[test]
    fn container_seccomp_is_named() {
        let mut host = healthy();
        host.user_ns = Err(eperm());
        host.seccomp_mode = Some(2);
        host.container = Some("docker");
        let c = check_user_ns(&host);
        assert!(c.detail.contains("seccomp filter (docker)"), "{c:?}");
        assert!(c.fix.iter().any(|l| l.contains("seccomp=unconfined")));
    }

    #[test]
    fn landlock_levels() {
        let mut host = healthy();
        host.landlock_abi = 0;
        host.lsm = Some("lockdown,capability,yama".to_string());
        let c = check_landlock(&host);
        assert_eq!(c.status, Status::Missing);
        assert!(
            c.fix[0].contains("lsm=landlock,lockdown,capability,yama"),
            "{c:?}"
        );
        host.landlock_abi = LANDLOCK_MIN_ABI - 1;
        assert_eq!(check_landlock(&host).status, Status::Missing);
        host.landlock_abi = LANDLOCK_MIN_ABI;
        assert_eq!(check_landlock(&host).status, Status::Limited);
        host.landlock_abi = LANDLOCK_MAX_ABI;
        assert_eq!(check_landlock(&host).status, Status::Ok);
    }

    #[test]
    fn cgroup_v1_or_undelegated_means_rlimits_only() {
        let mut host = healthy();
        host.cgroup.writable[1].1 = false;
        let c = check_cgroup(&host);
        assert_eq!(c.status, Status::Limited);
        assert!(c.detail.ends_with("rlimits only"), "{c:?}");
        assert!(c.fix.iter().any(|l| l.contains("Delegate=yes")));
        host.cgroup.fs_type = Some("tmpfs".to_string());
        let c = check_cgroup(&host);
        assert!(c.detail.contains("tmpfs, not cgroup2"), "{c:?}");
        // Limited does not break a profile.
        assert!(profiles(&diagnose(&host)).iter().all(|p| p.works));
    }

    #[test]
    fn mountinfo_and_cgroup_parsing() {
        let mi = "30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro\n\
                  31 30 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n\
                  32 30 0:28 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
        assert_eq!(
            mount_fs_type(mi, "/sys/fs/cgroup").as_deref(),
            Some("cgroup2")
        );
        assert_eq!(mount_fs_type(mi, "/nope"), None);
        assert_eq!(
            unified_cgroup_path("4:memory:/x\n0::/user.slice\n").as_deref(),
            Some("/user.slice")
        );
        assert_eq!(unified_cgroup_path("4:memory:/x\n"), None);
    }

    #[test]
    fn text_report_has_one_line_per_check_then_profiles_then_fixes() {
        let mut host = healthy();
        host.user_ns = Err(eperm());
        host.apparmor_restrict_userns = Some("1".to_string());
        let checks = diagnose(&host);
        let text = render_text(&checks, &profiles(&checks), false);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("missing  user-namespace"), "{text}");
        assert!(
            lines[checks.len()].starts_with("profiles: works: shims-only; fails closed: strict"),
            "{text}"
        );
        assert!(
            text.contains("to fix: user-namespace: sudo sysctl -w"),
            "{text}"
        );
        let fixed = render_text(&checks, &profiles(&checks), true);
        assert!(fixed.contains("to fix: user-namespace:\n  sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\n"), "{fixed}");
    }
}
