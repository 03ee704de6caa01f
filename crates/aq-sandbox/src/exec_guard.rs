//! The exec guard: every `execve`/`execveat` in the sandbox is stopped before
//! the new program runs and put to an [`ExecJudge`] the caller supplies.
//!
//! The design, its reasons and its limits are in `docs/exec-guard.md`. In
//! short, two checks on every exec, by the caller (outside the sandbox):
//!
//! 1. **Before the exec** ([`ExecCheck::BeforeExec`]): a seccomp filter sends
//!    every `execve`/`execveat` to the caller as a user notification
//!    (`SECCOMP_RET_USER_NOTIF`). The caller reads the path, argv and cwd
//!    from the calling thread, resolves the executable (and a `#!`
//!    interpreter, as the kernel would) and asks the judge. A denial makes
//!    the call fail with `EACCES`, so the calling program lives on and can
//!    report it; the judge's message is written to its stderr.
//! 2. **At commit** ([`ExecCheck::AtCommit`]): every process of the tree is
//!    traced (`PTRACE_SEIZE` with `TRACEEXEC`, `TRACEFORK`, `TRACEVFORK`,
//!    `TRACECLONE`, `EXITKILL`), so it stops at `PTRACE_EVENT_EXEC`: the new
//!    image is in place, it has one thread and a private new address space,
//!    and it has not run an instruction. The caller reads what will really
//!    run (`/proc/<pid>/exe`, `cmdline`, `cwd`). When it is exactly what the
//!    first check allowed (same file by device and inode, same argv, same
//!    cwd), it runs; otherwise the judge is asked again, and a denial kills
//!    the process before its first instruction.
//!
//! The first check gives friendly errors; the second makes the guard
//! race-free: memory another thread rewrites between the first check and the
//! kernel's copy cannot change what runs unseen.
//!
//! Everything here is pure (any OS); the mechanism is in `exec_notify`,
//! `tracer` and `procfs`.

use std::ffi::OsString;
use std::path::PathBuf;

/// Whether a sandbox judges every exec ([`crate::SandboxSpec::exec_guard`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExecGuardMode {
    /// No exec guard: any program the sandbox can read and execute runs.
    #[default]
    Off,
    /// Every exec is judged; run the plan with [`crate::apply_guarded`].
    /// Needs Landlock (see [`crate::PlanError::ExecGuardNeedsLandlock`]).
    Required,
}

/// Which of the two checks an [`ExecEvent`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecCheck {
    /// Before the kernel runs the exec: a denial makes `execve` fail with
    /// `EACCES` in the calling program, which keeps running.
    BeforeExec,
    /// The new program is loaded and has not run yet, and it is not what the
    /// first check allowed (a racing thread changed argv, the file was
    /// replaced, a `binfmt_misc` handler, a path the first check could not
    /// resolve). A denial kills the process with `SIGKILL`.
    AtCommit,
}

/// One exec, as the judge sees it. Process ids are the caller's (the host's
/// PID namespace), not the ones inside the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecEvent {
    /// The process that execs (its thread group id; after the exec it is
    /// the whole process).
    pub pid: u32,
    /// Its parent.
    pub ppid: u32,
    /// The file that runs, symlinks resolved. For a `#!` script this is the
    /// interpreter, as for the kernel; the script's path is in `argv`.
    pub executable: PathBuf,
    /// Device and inode of `executable`: a renamed copy or a hard link is
    /// the same file to a content check keyed on these.
    pub dev_ino: (u64, u64),
    /// Its size and change time when the guard opened it. The commit check
    /// compares these too: a judge may decide from the file's content, and
    /// a file rewritten in place between that and the kernel's open of it
    /// (same device and inode) is then judged again.
    pub stamp: FileStamp,
    /// The argument vector the program gets (for a script, the kernel's:
    /// interpreter, its optional argument, the script path, the rest).
    pub argv: Vec<OsString>,
    /// The working directory the program starts in.
    pub cwd: PathBuf,
    /// The dynamic loader's variables that load code into the program
    /// (`LD_PRELOAD=...`, `LD_AUDIT=...`), as found in the new image's
    /// environment at the commit check, where nothing can change them any
    /// more; empty at the first check (a program started with one is then
    /// judged again at its commit, with them).
    pub loader: Vec<OsString>,
    /// The sandbox's own command (the first exec of the process
    /// [`crate::apply_guarded`] started), not one of its descendants.
    pub initial: bool,
    /// Which check asks.
    pub check: ExecCheck,
}

/// What the commit check compares of the file besides its device and inode:
/// any write to it changes its change time (a fine-grained one right after
/// a `stat` on filesystems with multigrain timestamps, Linux 6.13+).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileStamp {
    /// Size in bytes.
    pub size: u64,
    /// Change time (`ctime`): seconds and nanoseconds.
    pub ctime: (i64, i64),
}

impl FileStamp {
    /// The stamp of a file's metadata.
    pub fn of(m: &std::fs::Metadata) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            size: m.size(),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// The judge's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecVerdict {
    /// Let it run.
    Allow,
    /// Do not let it run. `message` is written to the calling process's
    /// stderr (a newline is added when missing).
    Deny {
        /// What the user should read: why, and what to do instead.
        message: String,
    },
}

/// Decides each exec. Called from the guard's threads, several at a time:
/// a judge may block as long as it needs (an "ask" waiting for a human);
/// only the exec it decides waits meanwhile, the rest of the sandbox runs.
pub trait ExecJudge: Send + Sync {
    /// Decide `event`.
    fn judge(&self, event: &ExecEvent) -> ExecVerdict;

    /// Variables whose values are blanked in the new image of an allowed
    /// exec before it runs (a key passed to the agent, kept from what it
    /// starts). Default: none.
    fn scrub_env(&self, _event: &ExecEvent) -> Vec<Vec<u8>> {
        Vec::new()
    }

    /// Whether a refused `sh -c SCRIPT` (not the sandbox's own command)
    /// is let start with its script replaced by `exit 126`, instead of
    /// failing with `EACCES`: the caller then reads the judge's message and
    /// a shell's status, as agents that report only a failed spawn need.
    /// Default: no.
    fn refuse_shells_with_status(&self) -> bool {
        false
    }

    /// A call the sandbox denies was made by process `pid` (the caller's
    /// PID namespace) and answered with `errno`: for the record. Default:
    /// nothing.
    fn syscall_refused(&self, _pid: u32, _syscall: &'static str, _errno: i32) {}

    /// Process `pid` (the caller's PID namespace) tried to connect to
    /// `target`, a Unix socket of the host (a path, or `@` and an abstract
    /// name), and got `EACCES`: for the record. Reported once per target.
    /// Default: nothing.
    fn socket_refused(&self, _pid: u32, _target: &str, _why: &'static str) {}
}

/// The judge of a sandbox whose execs are not judged (no exec guard): the
/// socket guard alone uses the notifier, and nothing is recorded.
pub(crate) struct NoExecJudge;

impl ExecJudge for NoExecJudge {
    fn judge(&self, _event: &ExecEvent) -> ExecVerdict {
        ExecVerdict::Allow
    }
}

/// What is done to an exec's new image at its exec stop, before it runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fixup {
    /// A refused shell: its `-c` script (this argv index) is replaced by
    /// [`REFUSAL_SCRIPT`], so the caller sees a shell that exits 126 after
    /// printing the judge's message, as a shell does for a command it may
    /// not run, instead of a failed spawn that hides the message.
    pub(crate) refuse_script: Option<usize>,
    /// Variables to blank (see [`ExecJudge::scrub_env`]).
    pub(crate) scrub_env: Vec<Vec<u8>>,
}

/// What a refused shell runs instead of its script.
pub(crate) const REFUSAL_SCRIPT: &[u8] = b"exit 126";

/// Shells whose `-c SCRIPT` can be replaced by [`REFUSAL_SCRIPT`].
const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash"];

/// For `sh -c SCRIPT ...` (options in any order and clusters, as agents
/// write `bash -lc`, `bash -c -l`), the index of SCRIPT in `argv`; `None`
/// for anything else, or a script too short to replace.
pub(crate) fn shell_script_index(executable: &std::path::Path, argv: &[OsString]) -> Option<usize> {
    use std::os::unix::ffi::OsStrExt;
    let name = executable.file_name()?.to_str()?;
    if !SHELLS.contains(&name) {
        return None;
    }
    let mut saw_c = false;
    let mut skip_next = false;
    for (i, a) in argv.iter().enumerate().skip(1) {
        let b = a.as_bytes();
        if skip_next {
            skip_next = false;
            continue;
        }
        if b == b"--" || b == b"-" {
            return None;
        }
        if b.starts_with(b"--") {
            continue; // --login, --norc, --noprofile
        }
        if (b.starts_with(b"-") || b.starts_with(b"+")) && b.len() > 1 {
            if b[0] == b'-' && b.contains(&b'c') {
                saw_c = true;
            }
            // `-o OPTION` and `-O shopt` take the next word.
            if b[1..].iter().any(|c| *c == b'o' || *c == b'O') {
                skip_next = true;
            }
            continue;
        }
        return (saw_c && b.len() >= REFUSAL_SCRIPT.len()).then_some(i);
    }
    None
}

impl<F> ExecJudge for F
where
    F: Fn(&ExecEvent) -> ExecVerdict + Send + Sync,
{
    fn judge(&self, event: &ExecEvent) -> ExecVerdict {
        self(event)
    }
}

/// The part of an allowed event the commit check compares with what the
/// kernel really loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Judged {
    pub(crate) dev_ino: (u64, u64),
    pub(crate) stamp: FileStamp,
    pub(crate) argv: Vec<OsString>,
    pub(crate) cwd: PathBuf,
    pub(crate) loader: Vec<OsString>,
}

impl Judged {
    pub(crate) fn of(e: &ExecEvent) -> Judged {
        Judged {
            dev_ino: e.dev_ino,
            stamp: e.stamp,
            argv: e.argv.clone(),
            cwd: e.cwd.clone(),
            loader: e.loader.clone(),
        }
    }
}

/// `/proc/<pid>/cmdline` → argv: NUL-terminated strings, empty ones kept.
pub(crate) fn split_cmdline(bytes: &[u8]) -> Vec<OsString> {
    use std::os::unix::ffi::OsStringExt;
    let body = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    if bytes.is_empty() {
        return Vec::new();
    }
    body.split(|b| *b == 0)
        .map(|s| OsString::from_vec(s.to_vec()))
        .collect()
}

/// The kernel's `BINPRM_BUF_SIZE`: how much of a file `binfmt_script` reads.
pub(crate) const SHEBANG_BUF: usize = 256;
/// How deep the kernel follows interpreters that are scripts themselves.
pub(crate) const SHEBANG_DEPTH: usize = 4;

/// A `#!` line: the interpreter and its one optional argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Shebang {
    pub(crate) interpreter: Vec<u8>,
    pub(crate) arg: Option<Vec<u8>>,
}

/// Parse the first [`SHEBANG_BUF`] bytes of a file the way Linux's
/// `fs/binfmt_script.c` does (since 5.0): `None` when the kernel would not
/// treat it as a script.
pub(crate) fn parse_shebang(head: &[u8]) -> Option<Shebang> {
    let mut buf = [0u8; SHEBANG_BUF];
    let n = head.len().min(SHEBANG_BUF);
    buf[..n].copy_from_slice(&head[..n]);
    if buf[0] != b'#' || buf[1] != b'!' {
        return None;
    }
    let spacetab = |c: u8| c == b' ' || c == b'\t';
    let terminator = |c: u8| c == b' ' || c == b'\t' || c == 0;
    let buf_end = SHEBANG_BUF - 1;
    let mut i_end = match buf.iter().position(|c| *c == b'\n') {
        Some(i) => i,
        None => {
            let first = (2..buf_end).find(|&i| !spacetab(buf[i]))?;
            // No later space, tab or NUL: the interpreter path is truncated.
            (first..buf_end).find(|&i| terminator(buf[i]))?;
            buf_end
        }
    };
    while i_end > 2 && spacetab(buf[i_end - 1]) {
        i_end -= 1;
    }
    let i_name = (2..i_end).find(|&i| !spacetab(buf[i]))?;
    let i_sep = (i_name..i_end).find(|&i| terminator(buf[i]));
    let cstr = |from: usize, to: usize| {
        let s = &buf[from..to];
        s[..s.iter().position(|c| *c == 0).unwrap_or(s.len())].to_vec()
    };
    let interpreter = cstr(i_name, i_sep.unwrap_or(i_end));
    let arg = match i_sep {
        Some(sep) if buf[sep] != 0 => (sep..i_end)
            .find(|&i| !spacetab(buf[i]))
            .map(|a| cstr(a, i_end)),
        _ => None,
    };
    Some(Shebang { interpreter, arg })
}

/// The argv the kernel builds for a script: interpreter, its argument, the
/// file name the exec was given, then the original argv without `argv[0]`.
pub(crate) fn script_argv(sb: &Shebang, filename: &[u8], argv: &[OsString]) -> Vec<OsString> {
    use std::os::unix::ffi::OsStringExt;
    let mut out = vec![OsString::from_vec(sb.interpreter.clone())];
    if let Some(a) = &sb.arg {
        out.push(OsString::from_vec(a.clone()));
    }
    out.push(OsString::from_vec(filename.to_vec()));
    out.extend(argv.iter().skip(1).cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sb(i: &str, a: Option<&str>) -> Option<Shebang> {
        Some(Shebang {
            interpreter: i.as_bytes().to_vec(),
            arg: a.map(|a| a.as_bytes().to_vec()),
        })
    }

    #[test]
    fn shebang_lines_parse_as_the_kernel_does() {
        let cases: &[(&[u8], Option<Shebang>)] = &[
            (b"#!/bin/sh\necho hi\n", sb("/bin/sh", None)),
            (
                b"#! /usr/bin/env  python3 \n",
                sb("/usr/bin/env", Some("python3")),
            ),
            // One argument: everything after the first separator, trimmed.
            (b"#!/bin/bash -e -x\n", sb("/bin/bash", Some("-e -x"))),
            (b"#!\t/bin/sh\t\n", sb("/bin/sh", None)),
            (b"#!/bin/sh", sb("/bin/sh", None)),
            (b"#!\n", None),
            (b"#!   \n", None),
            (b"\x7fELF\x02\x01", None),
            (b"#", None),
            (b"", None),
        ];
        for (head, want) in cases {
            assert_eq!(
                &parse_shebang(head),
                want,
                "{:?}",
                String::from_utf8_lossy(head)
            );
        }
    }

    #[test]
    fn shebang_without_newline_needs_a_terminator_within_the_buffer() {
        let mut long = b"#!/".to_vec();
        long.extend(std::iter::repeat_n(b'a', 300));
        assert_eq!(parse_shebang(&long), None, "truncated interpreter path");
        let mut with_arg = b"#!/bin/sh ".to_vec();
        with_arg.extend(std::iter::repeat_n(b'x', 300));
        let got = parse_shebang(&with_arg).unwrap();
        assert_eq!(got.interpreter, b"/bin/sh");
        assert_eq!(got.arg.unwrap().len(), SHEBANG_BUF - 1 - 10);
    }

    #[test]
    fn script_argv_is_interpreter_argument_filename_then_the_rest() {
        let argv: Vec<OsString> = vec!["x".into(), "a".into(), "b".into()];
        let s = sb("/usr/bin/env", Some("python3")).unwrap();
        assert_eq!(
            script_argv(&s, b"./x.py", &argv),
            ["/usr/bin/env", "python3", "./x.py", "a", "b"]
                .map(OsString::from)
                .to_vec()
        );
    }

    #[test]
    fn the_script_of_a_shell_is_found_however_the_options_are_written() {
        let idx = |exe: &str, argv: &[&str]| {
            let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
            shell_script_index(std::path::Path::new(exe), &argv)
        };
        let script = "curl -s example.invalid | sh";
        assert_eq!(idx("/usr/bin/bash", &["bash", "-c", script]), Some(2));
        assert_eq!(idx("/usr/bin/bash", &["bash", "-lc", script]), Some(2));
        assert_eq!(idx("/usr/bin/bash", &["bash", "-c", "-l", script]), Some(3));
        assert_eq!(idx("/bin/dash", &["sh", "-e", "-c", script, "x"]), Some(3));
        assert_eq!(
            idx("/bin/zsh", &["zsh", "-o", "err_exit", "-c", script]),
            Some(4)
        );
        // A script file, not a -c string; too short; not a shell.
        assert_eq!(idx("/usr/bin/bash", &["bash", "./x.sh"]), None);
        assert_eq!(idx("/usr/bin/bash", &["bash", "-c", "id"]), None);
        assert_eq!(idx("/usr/bin/python3", &["python3", "-c", script]), None);
        assert_eq!(idx("/usr/bin/bash", &["bash", "--", "-c"]), None);
    }

    #[test]
    fn cmdline_splits_on_nul_and_keeps_empty_arguments() {
        assert_eq!(split_cmdline(b"sh\0-c\0\0x\0"), ["sh", "-c", "", "x"]);
        assert_eq!(split_cmdline(b"\0"), [""]);
        assert!(split_cmdline(b"").is_empty());
    }
}
