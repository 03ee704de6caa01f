//! What a shim does when it runs: ask the session's supervisor, then
//! replace itself with the real program or print the refusal.
//!
//! This runs on every command an agent starts through `PATH` (profiles
//! without the exec guard), so it is the whole program of the small
//! `aq-shim` binary the shim links point to: no flag parsing, no policy,
//! no work before the socket round trip. The full `aq` binary runs the same
//! code when it is started under another name (a link made by hand).
//! Any failure before the answer is known fails closed (exit 126).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use crate::channel::{self, Reply};
use crate::error::ShimError;
use crate::wire;

/// The session directory, set by `aq run` for everything it starts.
pub const ENV_SESSION_DIR: &str = wire::ENV_SESSION_DIR;
/// The approved request whose commands a child may run without asking.
pub(crate) const ENV_GRANT: &str = wire::ENV_GRANT;
/// Exit code of a command the firewall refused.
pub const EXIT_BLOCKED: u8 = aq_exit::ExitCode::Blocked.code();
/// Exit code when the real program does not exist.
pub const EXIT_NOT_FOUND: u8 = aq_exit::ExitCode::NotFound.code();

/// Runs as the shim for `name` with `args`. Returns only on refusal or error.
pub fn run(name: &str, args: Vec<OsString>) -> std::process::ExitCode {
    match judge_and_exec(name, args) {
        Ok(code) => std::process::ExitCode::from(code),
        Err(msg) => {
            eprintln!("aq: {name}: {msg}");
            std::process::ExitCode::from(EXIT_BLOCKED)
        }
    }
}

/// The program name a shim was started as (`argv[0]`'s file name), or
/// `None` when it is one of aq's own names: `aq`, `aq-…`, `agent-quarantine`
/// (and test binaries).
pub fn shim_name(argv0: &OsStr) -> Option<String> {
    wire::shim_name(argv0.as_bytes()).map(|n| String::from_utf8_lossy(n).into_owned())
}

/// [`shim_name`] for the shim programs: `aq` included
/// ([`wire::shim_program_name`]).
pub fn shim_program_name(argv0: &OsStr) -> Option<String> {
    wire::shim_program_name(argv0.as_bytes()).map(|n| String::from_utf8_lossy(n).into_owned())
}

fn judge_and_exec(name: &str, args: Vec<OsString>) -> Result<u8, ShimError> {
    let dir = std::env::var_os(ENV_SESSION_DIR)
        .map(PathBuf::from)
        .ok_or(ShimError::NoSession)?;
    let cwd = std::env::current_dir()
        .map(PathBuf::into_os_string)
        .unwrap_or_default();
    let grant = std::env::var_os(ENV_GRANT);
    let names: Vec<OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    let request = wire::Request {
        argv: std::iter::once(name.as_bytes())
            .chain(args.iter().map(|a| a.as_bytes()))
            .collect(),
        cwd: cwd.as_bytes(),
        grant: grant.as_deref().map(OsStr::as_bytes),
        env: names.iter().map(|n| n.as_bytes()).collect(),
    };
    let answer = channel::ask(&dir, &request).map_err(|source| ShimError::Supervisor { source })?;
    if !answer.run {
        use std::io::Write;
        let _ = std::io::stderr().write_all(&answer.message);
        return Ok(answer.exit_code);
    }
    Ok(exec_real(name, &args, &answer))
}

/// Replaces the shim with the real program; returns only when that failed,
/// with the exit code to leave with (the reason is printed here).
fn exec_real(name: &str, args: &[OsString], answer: &Reply) -> u8 {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let Some(real) = crate::find_real_program(OsStr::new(name), &path, &answer.shim_dir) else {
        eprintln!("aq: {name}: command not found");
        return EXIT_NOT_FOUND;
    };
    let mut cmd = std::process::Command::new(&real);
    cmd.arg0(name).args(args);
    cmd.env_clear();
    cmd.envs(std::env::vars_os().filter(|(k, _)| !answer.drop.iter().any(|d| d == k.as_bytes())));
    if let Some(g) = &answer.grant {
        cmd.env(ENV_GRANT, OsStr::from_bytes(g));
    }
    let err = cmd.exec();
    eprintln!("aq: {name}: cannot run {}: {err}", real.display());
    if err.kind() == std::io::ErrorKind::NotFound {
        EXIT_NOT_FOUND
    } else {
        EXIT_BLOCKED
    }
}

/// The program shim links point to: `aq-shim` beside `aq_exe` when it is
/// there (a small binary that starts fast), else `aq_exe` itself (which
/// runs the same code when started under another name).
pub fn shim_target(aq_exe: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let small = aq_exe.with_file_name("aq-shim");
    match std::fs::metadata(&small) {
        Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => small,
        _ => aq_exe.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn shim_names_are_anything_but_aq_itself() {
        assert_eq!(shim_name(OsStr::new("/s/curl")).as_deref(), Some("curl"));
        for own in ["aq", "/usr/bin/aq", "aq-shim", "agent-quarantine"] {
            assert_eq!(shim_name(OsStr::new(own)), None, "{own}");
        }
    }

    #[test]
    fn both_shims_leave_with_the_codes_aq_documents() {
        assert_eq!(wire::EXIT_BLOCKED, EXIT_BLOCKED);
        assert_eq!(wire::EXIT_NOT_FOUND, EXIT_NOT_FOUND);
    }

    #[test]
    fn links_point_to_the_small_binary_when_it_is_installed() {
        let dir = tempfile::tempdir().unwrap();
        let aq = dir.path().join("aq");
        std::fs::write(&aq, "").unwrap();
        assert_eq!(shim_target(&aq), aq);
        let small = dir.path().join("aq-shim");
        std::fs::write(&small, "").unwrap();
        assert_eq!(shim_target(&aq), aq, "not executable: not used");
        std::fs::set_permissions(&small, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(shim_target(&aq), small);
    }
}
