//! The inside of `aq verify`: `aq __probe NAME` (hidden, not a user command)
//! makes one real attempt to cross a sandbox boundary from inside the
//! sandbox and exits 0 when the boundary held, 1 on a leak, 2 when the
//! attempt could not be made; one line on stdout says what happened.
//!
//! `aq verify` starts `aq __probe all` as the sandboxed command; it runs
//! every probe of [`PROBES`] as a child process of its own (so one probe's
//! `setsid`, `unshare` or crash cannot spoil another), a few at a time, and
//! writes one `NAME<TAB>CODE<TAB>WHAT HAPPENED` line per probe to the
//! results file in the sandbox's `TMPDIR`. Everything a probe needs (paths,
//! ports, tokens) comes from the [`Context`] in `AQ_VERIFY_CONTEXT`.
//!
//! This module holds the catalog ([`PROBES`]), the runner and the shared
//! helpers; the attempts live in one submodule per category: `secrets`,
//! `writes` (with the positive controls), `network`, `environment`,
//! `syscalls` (with the privilege checks) and `teardown`.
//!
//! A probe never passes for the wrong reason: an attempt that could not be
//! made (a helper that did not start, a fixture that is missing) is an
//! error, never "held". Some boundaries are judged on the host after the
//! sandbox is gone ([`HostCheck`]): whether aq verify's own listeners heard
//! anything, whether a file outside changed, whether the daemon survived.

use std::io::{self, Read};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

mod environment;
mod network;
mod secrets;
mod syscalls;
mod teardown;
mod writes;

pub use environment::start_ticks;
use environment::{
    env_host_processes, env_inherited_descriptor, env_parent_environ, env_proc_1_environ,
    env_secret_variables,
};
use network::{
    net_abstract_unix, net_dns, net_interfaces, net_tcp_host, net_test_net, net_udp_host,
    net_unix_host_datagram, net_unix_host_socket,
};
pub use secrets::{catalog_files, file_handle_hex};
use secrets::{
    list_secret_dir, read_catalog, read_secret, secret_open_by_handle, secret_via_child_cwd,
    secret_via_hard_link, secret_via_symlink,
};
#[cfg(target_arch = "x86_64")]
use syscalls::sys_foreign_abi;
use syscalls::{
    status_field_check, sys_bpf, sys_clone_newuser, sys_clone3_newuser, sys_perf_event_open,
    sys_pidfd_getfd, sys_process_vm_readv, sys_setns, sys_tiocsti,
};
pub use teardown::processes_with;
use teardown::{daemonize, teardown_daemon};
use writes::{append_file, create_file, rename_git, write_must_work, write_via_symlink};

/// The variable that carries the [`Context`] into the sandbox.
pub const ENV_CONTEXT: &str = "AQ_VERIFY_CONTEXT";
/// What the fake SSH key holds.
pub const SSH_KEY_MARKER: &str = "FAKE-KEY-FOR-AQ-VERIFY";
/// What the fake AWS credentials hold.
pub const AWS_MARKER: &str = "FAKE-AWS-SECRET-FOR-AQ-VERIFY";
/// What the fake `.env` holds.
pub const DOTENV_MARKER: &str = "API_KEY=fake";
/// What the fake history, other repository, cookies and session hold.
pub const PRIVATE_MARKER: &str = "FAKE-PRIVATE-FOR-AQ-VERIFY";
/// What `aq verify` plants in every always-masked home file of the
/// credential catalog ([`catalog_files`]).
pub const CATALOG_MARKER: &str = "FAKE-CATALOG-SECRET-FOR-AQ-VERIFY";
/// What the fake `server.pem` holds.
pub const PEM_MARKER: &str = "FAKE-PEM-FOR-AQ-VERIFY";
/// Secret-looking variables `aq verify` adds to the environment the sandbox
/// is built from; the scrubbed environment must not have them. The second is
/// kept by name prefix (`CARGO_`), so it tests the secret filter itself.
pub const ENV_SECRET_NAMES: [&str; 2] = ["AQ_VERIFY_FAKE_TOKEN", "CARGO_REGISTRY_TOKEN"];
/// Their value.
pub const ENV_SECRET_VALUE: &str = "fake-token-for-aq-verify";

/// Set (to [`OWN_NAMESPACES`]) when `aq verify` runs a probe as the control
/// of [`Control::OwnNamespaces`].
const ENV_CONTROL: &str = "AQ_VERIFY_CONTROL";
const OWN_NAMESPACES: &str = "own-namespaces";

/// How long one probe may take before it is killed and reported as an error.
const PROBE_DEADLINE: Duration = Duration::from_secs(8);
/// Probes running at once.
const PARALLEL: usize = 6;
/// A connection to an address that is not routable must fail within this.
const FAIL_FAST: Duration = Duration::from_millis(1500);

/// What `aq verify` tells the probes, as JSON in [`ENV_CONTEXT`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Context {
    /// The throwaway workspace.
    pub workspace: PathBuf,
    /// The fake home directory (`HOME` inside).
    pub home: PathBuf,
    /// A directory next to the workspace, outside it.
    pub outside: PathBuf,
    /// A fake sessions directory of aq's (another session's log and ask).
    pub sessions: PathBuf,
    /// Where `aq __probe all` writes the results (in the sandbox's `TMPDIR`).
    pub results: PathBuf,
    /// A token unique to this run (file names, the daemon's argv, datagrams).
    pub token: String,
    /// aq verify's TCP listener on the host's 127.0.0.1.
    pub tcp_port: u16,
    /// aq verify's UDP socket on the host's 127.0.0.1.
    pub udp_port: u16,
    /// aq verify's abstract unix socket (without the leading NUL).
    pub abstract_name: String,
    /// aq verify's Unix socket at a path outside the workspace (a host
    /// service: a session bus, an ssh agent, docker.sock).
    pub unix_socket: PathBuf,
    /// aq verify's datagram socket at a path (a host logger).
    pub unix_datagram: PathBuf,
    /// A descriptor of the fake key aq verify holds open without
    /// close-on-exec, as a launcher may leave one.
    pub inherited_fd: Option<i32>,
    /// The slave of a pseudo-terminal opened by aq verify, inherited.
    pub pty_fd: Option<i32>,
    /// When aq verify started (clock ticks after boot, `/proc/<pid>/stat`):
    /// any process visible inside that started earlier is the host's.
    pub host_start_ticks: Option<u64>,
    /// aq verify's pid on the host: its `environ` is the unscrubbed one.
    pub caller_pid: u32,
    /// A file handle of the fake key taken on the host (`name_to_handle_at`), hex.
    pub key_handle: Option<String>,
}

impl Context {
    /// The fake SSH key.
    pub fn ssh_key(&self) -> PathBuf {
        self.home.join(".ssh/id_ed25519")
    }
}

/// Files outside the workspace (or protected inside it) a probe tries to
/// change; the host checks them again after the sandbox is gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `/tmp/aq-verify-probe-<token>`.
    TmpFile,
    /// `~/aq-verify-probe`.
    HomeFile,
    /// `~/.bashrc`.
    Bashrc,
    /// `/etc/aq-verify-probe-<token>`.
    EtcFile,
    /// A file next to the workspace.
    OutsideFile,
    /// `.git/hooks/pre-commit`.
    GitHook,
    /// `.git/config`.
    GitConfig,
    /// `.git/HEAD` (gone when `.git` was renamed away).
    GitHead,
    /// The workspace's `.env`.
    DotEnv,
}

impl Target {
    /// Where it is.
    pub fn path(self, ctx: &Context) -> PathBuf {
        match self {
            Target::TmpFile => PathBuf::from(format!("/tmp/aq-verify-probe-{}", ctx.token)),
            Target::HomeFile => ctx.home.join("aq-verify-probe"),
            Target::Bashrc => ctx.home.join(".bashrc"),
            Target::EtcFile => PathBuf::from(format!("/etc/aq-verify-probe-{}", ctx.token)),
            Target::OutsideFile => ctx.outside.join("aq-verify-probe"),
            Target::GitHook => ctx.workspace.join(".git/hooks/pre-commit"),
            Target::GitConfig => ctx.workspace.join(".git/config"),
            Target::GitHead => ctx.workspace.join(".git/HEAD"),
            Target::DotEnv => ctx.workspace.join(".env"),
        }
    }
}

/// What the host checks after the sandbox is gone, on top of the probe's own answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostCheck {
    /// Nothing.
    None,
    /// aq verify's TCP listener accepted no connection.
    TcpListener,
    /// aq verify's UDP socket received no datagram.
    UdpSocket,
    /// aq verify's abstract unix socket accepted no connection.
    AbstractSocket,
    /// aq verify's Unix socket at a path accepted no connection.
    UnixSocket,
    /// aq verify's datagram socket at a path received nothing.
    UnixDatagram,
    /// This file is as it was before the sandbox ran.
    Untouched(Target),
    /// No process carries the daemon's token.
    DaemonGone,
}

/// The kind of boundary a probe tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Reading the fake secrets, by every route.
    Secrets,
    /// Reading what a private home keeps out of reach.
    Reads,
    /// Writing outside the workspace, or to what stays read-only in it.
    Writes,
    /// Usability: what must work does.
    Control,
    /// Reaching the host or the world over the network.
    Network,
    /// The caller's environment and processes.
    Environment,
    /// System calls the seccomp filter denies.
    Syscalls,
    /// Capabilities, no_new_privs, seccomp mode.
    Privileges,
    /// Nothing outlives the sandbox.
    Teardown,
}

impl Category {
    /// The name shown in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Secrets => "secrets",
            Category::Reads => "reads",
            Category::Writes => "writes",
            Category::Control => "control",
            Category::Network => "network",
            Category::Environment => "environment",
            Category::Syscalls => "syscalls",
            Category::Privileges => "privileges",
            Category::Teardown => "teardown",
        }
    }
}

/// The answer of one attempt: exit code 0, 1 or 2, and what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The boundary held.
    Held(String),
    /// It did not.
    Leak(String),
    /// The attempt could not be made (never counted as held).
    Error(String),
}

impl Outcome {
    /// The probe's exit code.
    pub fn code(&self) -> u8 {
        match self {
            Outcome::Held(_) => 0,
            Outcome::Leak(_) => 1,
            Outcome::Error(_) => 2,
        }
    }

    /// What happened.
    pub fn detail(&self) -> &str {
        match self {
            Outcome::Held(d) | Outcome::Leak(d) | Outcome::Error(d) => d,
        }
    }
}

/// Where `aq verify` makes the same attempt without the sandbox, to show
/// that it succeeds there: a probe that fails outside too proves nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// None: the probe is itself a positive control (it must work inside).
    Itself,
    /// A plain process on the host, on the same throwaway fixtures.
    Host,
    /// On the host, in fresh user, mount and network namespaces of its own
    /// and without a seccomp filter: for attempts that would change the host
    /// (a mount, a kexec) or need a namespace the process owns (`setns`).
    OwnNamespaces,
}

/// One probe: its name, what it tries (`~` is the fake home), its host check.
pub struct Probe {
    /// Kebab-case, `<category>-<what>`.
    pub name: &'static str,
    /// Its category.
    pub category: Category,
    /// What is tried, for the report.
    pub tried: &'static str,
    /// What the host checks afterwards.
    pub host: HostCheck,
    /// Where its positive control runs.
    pub control: Control,
    run: fn(&Context) -> Outcome,
}

impl Probe {
    /// Its control runs in namespaces of its own, not on the host itself.
    const fn in_own_namespaces(self) -> Probe {
        Probe {
            control: Control::OwnNamespaces,
            ..self
        }
    }
}

macro_rules! probe {
    ($name:literal, $cat:ident, $tried:literal, $run:expr) => {
        probe!($name, $cat, $tried, HostCheck::None, $run)
    };
    ($name:literal, $cat:ident, $tried:literal, $host:expr, $run:expr) => {
        Probe {
            name: $name,
            category: Category::$cat,
            tried: $tried,
            host: $host,
            control: match Category::$cat {
                Category::Control => Control::Itself,
                _ => Control::Host,
            },
            run: $run,
        }
    };
}

/// The battery, in report order.
pub const PROBES: &[Probe] = &[
    // Secrets: the fake key, credentials, .env and .pem must read empty or not at all.
    probe!("secret-ssh-key", Secrets, "read ~/.ssh/id_ed25519", |c| {
        read_secret(&c.ssh_key(), SSH_KEY_MARKER)
    }),
    probe!(
        "secret-catalog",
        Secrets,
        "read a fake file in every place of the credential catalog masked whatever it holds",
        read_catalog
    ),
    probe!("secret-ssh-dir", Secrets, "list ~/.ssh", |c| {
        list_secret_dir(&c.home.join(".ssh"))
    }),
    probe!(
        "secret-aws-credentials",
        Secrets,
        "read ~/.aws/credentials",
        |c| { read_secret(&c.home.join(".aws/credentials"), AWS_MARKER) }
    ),
    probe!(
        "secret-via-symlink",
        Secrets,
        "symlink in the workspace to ~/.ssh/id_ed25519, read it",
        secret_via_symlink
    ),
    probe!(
        "secret-via-hard-link",
        Secrets,
        "hard-link ~/.ssh/id_ed25519 into the workspace, read it",
        secret_via_hard_link
    ),
    probe!(
        "secret-via-proc-root",
        Secrets,
        "read /proc/self/root/~/.ssh/id_ed25519",
        |c| {
            let mut p = PathBuf::from("/proc/self/root");
            p.push(c.ssh_key().strip_prefix("/").unwrap_or(&c.ssh_key()));
            read_secret(&p, SSH_KEY_MARKER)
        }
    ),
    probe!(
        "secret-via-child-cwd",
        Secrets,
        "start a child in ~, read /proc/<child>/cwd/.ssh/id_ed25519",
        secret_via_child_cwd
    ),
    probe!(
        "secret-via-dotdot",
        Secrets,
        "read <workspace>/../home/.ssh/id_ed25519",
        |c| read_secret(&c.workspace.join("../home/.ssh/id_ed25519"), SSH_KEY_MARKER)
    ),
    probe!("secret-dotenv", Secrets, "read <workspace>/.env", |c| {
        read_secret(&c.workspace.join(".env"), DOTENV_MARKER)
    }),
    probe!("secret-pem", Secrets, "read <workspace>/server.pem", |c| {
        read_secret(&c.workspace.join("server.pem"), PEM_MARKER)
    }),
    probe!(
        "secret-open-by-handle",
        Secrets,
        "open_by_handle_at with a handle of the key taken on the host",
        secret_open_by_handle
    ),
    // A private home: what is not the work's stays unread.
    probe!("read-shell-history", Reads, "read ~/.bash_history", |c| {
        read_secret(&c.home.join(".bash_history"), PRIVATE_MARKER)
    }),
    probe!(
        "read-other-repository",
        Reads,
        "read ~/src/other-project/notes.txt",
        |c| read_secret(&c.home.join("src/other-project/notes.txt"), PRIVATE_MARKER)
    ),
    probe!(
        "read-browser-cookies",
        Reads,
        "read ~/.config/google-chrome/Default/Cookies",
        |c| read_secret(
            &c.home.join(".config/google-chrome/Default/Cookies"),
            PRIVATE_MARKER
        )
    ),
    probe!(
        "read-other-session",
        Reads,
        "read another aq session's log and pending ask",
        |c| {
            let dir = c.sessions.join("20261130T000000Z-0ther000");
            match read_secret(&dir.join("log.jsonl"), PRIVATE_MARKER) {
                Outcome::Held(d) => {
                    match read_secret(&dir.join("approvals/pending/1.json"), PRIVATE_MARKER) {
                        Outcome::Held(e) => Outcome::Held(format!("log: {d}; ask: {e}")),
                        other => other,
                    }
                }
                other => other,
            }
        }
    ),
    probe!("read-home-listing", Reads, "list ~", |c| {
        match std::fs::read_dir(&c.home) {
            Err(e) => Outcome::Held(errno_text(&e)),
            Ok(entries) => Outcome::Leak(format!("lists {} entries", entries.count())),
        }
    }),
    // Writes outside the workspace, and to what stays read-only inside it.
    probe!(
        "write-tmp",
        Writes,
        "create /tmp/aq-verify-probe-<token>",
        HostCheck::Untouched(Target::TmpFile),
        |c| create_file(&Target::TmpFile.path(c))
    ),
    probe!(
        "write-home",
        Writes,
        "create ~/aq-verify-probe",
        HostCheck::Untouched(Target::HomeFile),
        |c| create_file(&Target::HomeFile.path(c))
    ),
    probe!(
        "write-bashrc",
        Writes,
        "append to ~/.bashrc",
        HostCheck::Untouched(Target::Bashrc),
        |c| append_file(&Target::Bashrc.path(c))
    ),
    probe!(
        "write-etc",
        Writes,
        "create /etc/aq-verify-probe-<token>",
        HostCheck::Untouched(Target::EtcFile),
        |c| create_file(&Target::EtcFile.path(c))
    ),
    probe!(
        "write-outside-workspace",
        Writes,
        "create a file next to the workspace",
        HostCheck::Untouched(Target::OutsideFile),
        |c| create_file(&Target::OutsideFile.path(c))
    ),
    probe!(
        "write-git-hook",
        Writes,
        "create .git/hooks/pre-commit",
        HostCheck::Untouched(Target::GitHook),
        |c| create_file(&Target::GitHook.path(c))
    ),
    probe!(
        "write-git-config",
        Writes,
        "append to .git/config",
        HostCheck::Untouched(Target::GitConfig),
        |c| append_file(&Target::GitConfig.path(c))
    ),
    probe!(
        "write-rename-git",
        Writes,
        "rename .git to .git-moved",
        HostCheck::Untouched(Target::GitHead),
        rename_git
    ),
    probe!(
        "write-dotenv",
        Writes,
        "overwrite <workspace>/.env",
        HostCheck::Untouched(Target::DotEnv),
        |c| append_file(&Target::DotEnv.path(c))
    ),
    probe!(
        "write-via-symlink",
        Writes,
        "symlink in the workspace to ~/.bashrc, append through it",
        HostCheck::Untouched(Target::Bashrc),
        write_via_symlink
    ),
    // Positive controls: a sandbox nothing can work in is no sandbox to use.
    probe!(
        "control-write-workspace",
        Control,
        "create, write and read back a file in the workspace",
        |c| write_must_work(&c.workspace.join("aq-verify-ok.txt"))
    ),
    probe!(
        "control-write-tmpdir",
        Control,
        "create a file in $TMPDIR",
        |_| write_must_work(&std::env::temp_dir().join("aq-verify-ok.txt"))
    ),
    // Network, with the network off.
    probe!(
        "net-tcp-host-loopback",
        Network,
        "TCP connect to aq verify's listener on the host's 127.0.0.1",
        HostCheck::TcpListener,
        net_tcp_host
    ),
    probe!(
        "net-udp-host-loopback",
        Network,
        "UDP send to aq verify's socket on the host's 127.0.0.1",
        HostCheck::UdpSocket,
        net_udp_host
    ),
    probe!(
        "net-abstract-unix",
        Network,
        "connect to aq verify's abstract unix socket",
        HostCheck::AbstractSocket,
        net_abstract_unix
    ),
    probe!(
        "net-unix-host-socket",
        Network,
        "connect to aq verify's Unix socket outside the workspace and exchange a line",
        HostCheck::UnixSocket,
        net_unix_host_socket
    ),
    probe!(
        "net-unix-host-datagram",
        Network,
        "send a datagram to aq verify's Unix datagram socket at a path",
        HostCheck::UnixDatagram,
        net_unix_host_datagram
    ),
    probe!(
        "net-dns",
        Network,
        "getaddrinfo(example.invalid); query each resolv.conf nameserver",
        net_dns
    ),
    probe!(
        "net-test-net",
        Network,
        "TCP connect to 203.0.113.1:80 (TEST-NET-3)",
        net_test_net
    ),
    probe!(
        "net-raw-icmp",
        Network,
        "socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)",
        |_| socket_denied(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP)
    )
    .in_own_namespaces(),
    probe!(
        "net-netlink-route",
        Network,
        "socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)",
        |_| socket_denied(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE)
    ),
    probe!(
        "net-interfaces",
        Network,
        "list the interfaces in /proc/net/dev",
        net_interfaces
    ),
    // The caller's environment and processes.
    probe!(
        "env-secret-variables",
        Environment,
        "look for AQ_VERIFY_FAKE_TOKEN and CARGO_REGISTRY_TOKEN, set by aq verify",
        env_secret_variables
    ),
    probe!(
        "env-inherited-descriptor",
        Environment,
        "read the fake key through a descriptor aq verify left open (not close-on-exec)",
        env_inherited_descriptor
    ),
    probe!(
        "env-proc-1-environ",
        Environment,
        "read /proc/1/environ (init, a copy of aq verify) and aq verify's own",
        env_proc_1_environ
    ),
    probe!(
        "env-parent-environ",
        Environment,
        "read the environ and cwd of the process that started it (an agent's key lives there)",
        env_parent_environ
    ),
    probe!(
        "env-host-processes",
        Environment,
        "look in /proc for a process started before aq verify",
        env_host_processes
    ),
    // System calls the seccomp filter denies.
    probe!("sys-ptrace", Syscalls, "ptrace(PTRACE_TRACEME)", |_| {
        // SAFETY: PTRACE_TRACEME takes no pointers.
        syscall_denied(unsafe { libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) })
    }),
    probe!(
        "sys-process-vm-readv",
        Syscalls,
        "process_vm_readv of its own memory",
        sys_process_vm_readv
    ),
    probe!(
        "sys-pidfd-getfd",
        Syscalls,
        "pidfd_getfd of its own stdin",
        sys_pidfd_getfd
    ),
    probe!(
        "sys-bpf",
        Syscalls,
        "bpf(BPF_PROG_LOAD) of a two-instruction socket filter",
        sys_bpf
    ),
    probe!(
        "sys-userfaultfd",
        Syscalls,
        "userfaultfd(UFFD_USER_MODE_ONLY)",
        |_| close_fd(
            // SAFETY: integer flags only.
            unsafe { libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC | 1) }
        )
    ),
    probe!(
        "sys-perf-event-open",
        Syscalls,
        "perf_event_open(software CPU clock)",
        sys_perf_event_open
    ),
    probe!(
        "sys-kexec-load",
        Syscalls,
        "kexec_load(no segments)",
        |_| {
            // SAFETY: no segments, a null segment pointer.
            syscall_denied(unsafe {
                libc::syscall(libc::SYS_kexec_load, 0usize, 0usize, 0usize, 0usize)
            })
        }
    )
    .in_own_namespaces(),
    probe!(
        "sys-init-module",
        Syscalls,
        "init_module(empty image)",
        |_| {
            // SAFETY: an empty image and an empty, NUL-terminated parameter string.
            syscall_denied(unsafe {
                libc::syscall(libc::SYS_init_module, 0usize, 0usize, c"".as_ptr())
            })
        }
    )
    .in_own_namespaces(),
    probe!("sys-mount", Syscalls, "mount(tmpfs on /tmp)", |_| {
        // SAFETY: NUL-terminated strings and no data.
        syscall_denied(
            unsafe {
                libc::mount(
                    c"none".as_ptr(),
                    c"/tmp".as_ptr(),
                    c"tmpfs".as_ptr(),
                    0,
                    std::ptr::null(),
                )
            }
            .into(),
        )
    })
    .in_own_namespaces(),
    probe!(
        "sys-unshare-user",
        Syscalls,
        "unshare(CLONE_NEWUSER)",
        |_| {
            // SAFETY: integer flags only.
            syscall_denied(unsafe { libc::unshare(libc::CLONE_NEWUSER) }.into())
        }
    ),
    probe!(
        "sys-clone-newuser",
        Syscalls,
        "clone(CLONE_NEWUSER)",
        sys_clone_newuser
    ),
    probe!(
        "sys-clone3-newuser",
        Syscalls,
        "clone3(CLONE_NEWUSER)",
        sys_clone3_newuser
    ),
    probe!(
        "sys-setns",
        Syscalls,
        "setns(/proc/self/ns/net, CLONE_NEWNET)",
        sys_setns
    )
    .in_own_namespaces(),
    probe!(
        "sys-io-uring-setup",
        Syscalls,
        "io_uring_setup(1 entry)",
        |_| {
            let mut params = [0u8; 120];
            // SAFETY: params is a zeroed io_uring_params, large enough.
            close_fd(unsafe { libc::syscall(libc::SYS_io_uring_setup, 1, params.as_mut_ptr()) })
        }
    ),
    probe!(
        "sys-keyctl",
        Syscalls,
        "keyctl(KEYCTL_GET_KEYRING_ID, session keyring)",
        |_| {
            // SAFETY: integer arguments only.
            syscall_denied(unsafe { libc::syscall(libc::SYS_keyctl, 0, -3, 0) })
        }
    ),
    probe!(
        "sys-tiocsti",
        Syscalls,
        "ioctl(TIOCSTI) on its own controlling terminal",
        sys_tiocsti
    ),
    probe!(
        "sys-socket-packet",
        Syscalls,
        "socket(AF_PACKET, SOCK_RAW)",
        |_| socket_denied(libc::AF_PACKET, libc::SOCK_RAW, 0)
    )
    .in_own_namespaces(),
    #[cfg(target_arch = "x86_64")]
    probe!(
        "sys-foreign-abi",
        Syscalls,
        "getpid through the i386 table (int 0x80)",
        sys_foreign_abi
    ),
    // Privileges.
    probe!(
        "priv-capabilities",
        Privileges,
        "read the capability sets in /proc/self/status",
        |_| status_field_check(
            &["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"],
            "0000000000000000"
        )
    ),
    probe!(
        "priv-no-new-privs",
        Privileges,
        "read NoNewPrivs in /proc/self/status",
        |_| status_field_check(&["NoNewPrivs"], "1")
    ),
    probe!(
        "priv-seccomp",
        Privileges,
        "read Seccomp in /proc/self/status",
        |_| status_field_check(&["Seccomp"], "2")
    ),
    // Teardown.
    probe!(
        "teardown-daemon",
        Teardown,
        "double-fork and setsid a sleeping daemon, then let the sandbox end",
        HostCheck::DaemonGone,
        teardown_daemon
    ),
];

/// `aq __probe ARGS`: `all`, a probe's name, or a helper another probe starts.
pub fn main(args: &[String]) -> ExitCode {
    let name = args.first().map(String::as_str).unwrap_or_default();
    // Helpers started by probes; they need no context.
    match name {
        "helper-hold" => {
            std::thread::sleep(Duration::from_secs(10));
            return ExitCode::SUCCESS;
        }
        "helper-daemon" => {
            // The daemon: sleeps, bounded in case it leaks.
            std::thread::sleep(Duration::from_secs(30));
            return ExitCode::SUCCESS;
        }
        "helper-daemonize" => return daemonize(args.get(1).map(String::as_str)),
        #[cfg(target_arch = "x86_64")]
        "helper-i386-getpid" => {
            // SAFETY: `int 0x80` with eax = 20 is the i386 getpid; it reads no memory.
            unsafe {
                std::arch::asm!("int 0x80", inout("eax") 20 => _, options(nostack));
            }
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    let ctx = match context() {
        Ok(c) => c,
        Err(e) => {
            println!("{e}");
            return ExitCode::from(2);
        }
    };
    if name == "all" {
        return match run_all(&ctx) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("aq __probe all: {e}");
                ExitCode::from(2)
            }
        };
    }
    let Some(probe) = PROBES.iter().find(|p| p.name == name) else {
        println!("no probe named `{name}`");
        return ExitCode::from(2);
    };
    if std::env::var_os(ENV_CONTROL).is_some_and(|v| v == OWN_NAMESPACES)
        && let Err(e) = enter_own_namespaces()
    {
        println!("cannot enter namespaces of its own for the control: {e}");
        return ExitCode::from(2);
    }
    let outcome = (probe.run)(&ctx);
    println!("{}", outcome.detail());
    ExitCode::from(outcome.code())
}

fn context() -> Result<Context, String> {
    let text = std::env::var(ENV_CONTEXT)
        .map_err(|_| format!("{ENV_CONTEXT} is not set: `aq __probe` runs inside `aq verify`"))?;
    serde_json::from_str(&text).map_err(|e| format!("{ENV_CONTEXT}: {e}"))
}

/// Run every probe as a child, a few at a time; write the results file.
fn run_all(ctx: &Context) -> io::Result<()> {
    let exe = std::env::current_exe()?;
    let all: Vec<&Probe> = PROBES.iter().collect();
    let results = in_parallel(&all, |p| {
        let mut cmd = Command::new(&exe);
        cmd.args(["__probe", p.name]);
        run_child(cmd)
    });
    let mut text = String::new();
    for (p, (code, detail)) in PROBES.iter().zip(results) {
        text.push_str(&format!("{}\t{code}\t{}\n", p.name, one_line(&detail)));
    }
    std::fs::write(&ctx.results, text)
}

/// The positive control of each probe in `which`, in order: the same attempt
/// made outside the sandbox (see [`Control`]), on the same fixtures, with the
/// environment the sandbox was built from (`env`, which holds the fake
/// secrets) and the same context. A probe that moves `.git` away runs after
/// the others, which need it in place.
pub fn run_controls(
    which: &[&'static Probe],
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    ctx_json: &str,
) -> io::Result<Vec<Outcome>> {
    let exe = std::env::current_exe()?;
    let moves_git = |p: &Probe| p.host == HostCheck::Untouched(Target::GitHead);
    let control = |p: &Probe| {
        let mut cmd = Command::new(&exe);
        cmd.args(["__probe", p.name])
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env(ENV_CONTEXT, ctx_json);
        if p.control == Control::OwnNamespaces {
            cmd.env(ENV_CONTROL, OWN_NAMESPACES);
        }
        match run_child(cmd) {
            (0, d) => Outcome::Held(d),
            (1, d) => Outcome::Leak(d),
            (_, d) => Outcome::Error(d),
        }
    };
    let first: Vec<&Probe> = which.iter().copied().filter(|p| !moves_git(p)).collect();
    let last: Vec<&Probe> = which.iter().copied().filter(|p| moves_git(p)).collect();
    let mut done: Vec<(&str, Outcome)> = first
        .iter()
        .map(|p| p.name)
        .zip(in_parallel(&first, control))
        .collect();
    done.extend(last.iter().map(|p| p.name).zip(in_parallel(&last, control)));
    Ok(which
        .iter()
        .map(|p| {
            done.iter()
                .position(|(n, _)| *n == p.name)
                .map(|i| done.swap_remove(i).1)
                .unwrap_or_else(|| Outcome::Error("its control did not run".to_string()))
        })
        .collect())
}

/// `f` over `probes`, [`PARALLEL`] at a time; the results in order.
fn in_parallel<T: Send>(probes: &[&Probe], f: impl Fn(&Probe) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(probes.len()));
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(probe) = probes.get(i) else { break };
                    let r = f(probe);
                    if let Ok(mut l) = results.lock() {
                        l.push((i, r));
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Enter fresh user, mount and network namespaces (as root inside, mapped
/// to the caller), with mounts private: a mount made now reaches nothing
/// outside this process. No seccomp filter, no Landlock.
fn enter_own_namespaces() -> io::Result<()> {
    // SAFETY: plain libc calls with integer flags and NUL-terminated strings.
    unsafe {
        let (uid, gid) = (libc::getuid(), libc::getgid());
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET) == -1 {
            return Err(io::Error::last_os_error());
        }
        std::fs::write("/proc/self/setgroups", "deny")?;
        std::fs::write("/proc/self/uid_map", format!("0 {uid} 1"))?;
        std::fs::write("/proc/self/gid_map", format!("0 {gid} 1"))?;
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) == -1
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// One probe in a child process: its exit code (2 when it did not exit by
/// itself with 0, 1 or 2) and what it said.
fn run_child(mut cmd: Command) -> (u8, String) {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return (2, format!("cannot start the probe: {}", errno_text(&e))),
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > PROBE_DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => break None,
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let said = if out.trim().is_empty() {
        err.trim().to_string()
    } else {
        out.trim().to_string()
    };
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => (
            2,
            format!("did not finish within {} s", PROBE_DEADLINE.as_secs()),
        ),
        Some(s) => match (s.code(), s.signal()) {
            (Some(c @ 0..=2), _) => (c as u8, said),
            (Some(c), _) => (2, format!("the probe exited with {c}: {said}")),
            (None, Some(sig)) => (2, format!("the probe was killed by signal {sig}: {said}")),
            _ => (2, format!("the probe ended with {s}")),
        },
    }
}

fn one_line(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

// ---- Helpers shared by the probes -----------------------------------------

/// `EACCES (Permission denied)`.
pub fn errno_text(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => {
            let text = io::Error::from_raw_os_error(n).to_string();
            let text = text.split(" (os error").next().unwrap_or(&text).to_string();
            format!("{} ({text})", errno_name(n))
        }
        None => e.to_string(),
    }
}

fn errno_name(n: i32) -> &'static str {
    match n {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENOTTY => "ENOTTY",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EAFNOSUPPORT => "EAFNOSUPPORT",
        libc::EADDRNOTAVAIL => "EADDRNOTAVAIL",
        libc::ENETUNREACH => "ENETUNREACH",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EHOSTUNREACH => "EHOSTUNREACH",
        libc::EPROTONOSUPPORT => "EPROTONOSUPPORT",
        libc::ESOCKTNOSUPPORT => "ESOCKTNOSUPPORT",
        _ => "errno",
    }
}

/// A syscall's return value: `-1` means the boundary held (with the errno).
fn syscall_denied(ret: libc::c_long) -> Outcome {
    if ret == -1 {
        Outcome::Held(errno_text(&io::Error::last_os_error()))
    } else {
        Outcome::Leak(format!("the call succeeded (returned {ret})"))
    }
}

/// Like [`syscall_denied`], closing the fd a success returned.
fn close_fd(ret: libc::c_long) -> Outcome {
    let outcome = syscall_denied(ret);
    if ret >= 0 {
        // SAFETY: our fd.
        unsafe { libc::close(ret as libc::c_int) };
    }
    outcome
}

fn socket_denied(family: libc::c_int, kind: libc::c_int, protocol: libc::c_int) -> Outcome {
    // SAFETY: integer arguments; a returned fd is closed.
    close_fd(unsafe { libc::socket(family, kind, protocol) }.into())
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_names_are_unique_kebab_case_and_enough() {
        let mut names: Vec<&str> = PROBES.iter().map(|p| p.name).collect();
        assert!(names.len() >= 30, "{}", names.len());
        for n in &names {
            assert!(
                n.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{n}"
            );
            assert!(!n.starts_with("helper-") && *n != "all", "{n}");
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PROBES.len());
    }

    #[test]
    fn start_ticks_reads_field_22_past_a_name_with_spaces() {
        let stat = "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10";
        assert_eq!(start_ticks(stat), Some(123456));
    }

    #[test]
    fn errno_text_names_the_errno() {
        let e = io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(errno_text(&e), "EACCES (Permission denied)");
    }
}
