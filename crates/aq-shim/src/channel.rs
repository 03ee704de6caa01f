//! The shim's line to its session's supervisor (`aq run`, outside any sandbox).
//!
//! A shim does not decide, log or wait for approvals itself: it sends the
//! argument vector to the supervisor over a Unix socket in the session
//! directory and runs the program only if the answer says so. Why:
//!
//! - Under the kernel sandbox the shim cannot write the log or the approval
//!   queue (they are outside the workspace), and must not be able to: a
//!   command that could write them could approve itself.
//! - The supervisor learns who is asking from the kernel (`SO_PEERCRED`),
//!   not from the message.
//! - One judge and one log writer per session.
//!
//! A socket path, not an inherited descriptor: programs such as Python's
//! `subprocess` close every inherited descriptor by default, which would cut
//! their children off. Connecting to a Unix socket is not a write that
//! Landlock or the mount namespace controls, so it works from inside.
//!
//! The protocol is one JSON line each way per connection.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The socket's file name in the session directory.
pub const SOCKET_NAME: &str = "supervisor.sock";

/// Longest request accepted (an argv of a few MiB is refused, not read forever).
pub const MAX_REQUEST_BYTES: usize = 4 << 20;

/// What a shim asks: may this run?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecRequest {
    /// The program name (as shimmed) and its arguments.
    pub argv: Vec<String>,
    /// The shim's working directory.
    pub cwd: String,
    /// The approval this process runs under (`AQ_GRANT`), if any.
    pub grant: Option<String>,
}

/// The supervisor's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecAnswer {
    /// Run the real program.
    pub run: bool,
    /// When not running: the exit code to leave with (126).
    pub exit_code: u8,
    /// Printed on the shim's stderr (the refusal with rule, why and safer).
    pub message: String,
    /// Set as `AQ_GRANT` for the program when a human approved it.
    pub grant: Option<String>,
    /// The shim directory, left out when looking for the real program.
    pub shim_dir: PathBuf,
    /// Secret-looking variables passed on anyway.
    pub env_pass: Vec<String>,
}

/// Where the socket is, as an address short enough for `sun_path` (108
/// bytes). A long session path is reached through `/proc/self/fd/N/` of an
/// open directory descriptor, returned to be kept open while it is used.
fn address(session_dir: &Path) -> io::Result<(PathBuf, Option<std::fs::File>)> {
    let direct = session_dir.join(SOCKET_NAME);
    if direct.as_os_str().len() < 100 {
        return Ok((direct, None));
    }
    let dir = std::fs::File::open(session_dir)?;
    use std::os::fd::AsRawFd;
    let via = PathBuf::from(format!("/proc/self/fd/{}/{SOCKET_NAME}", dir.as_raw_fd()));
    Ok((via, Some(dir)))
}

/// Create the listening socket (supervisor side).
pub fn bind(session_dir: &Path) -> io::Result<UnixListener> {
    let (addr, _dir) = address(session_dir)?;
    UnixListener::bind(addr)
}

/// Ask the supervisor of the session in `session_dir` (shim side).
pub fn ask(session_dir: &Path, request: &ExecRequest) -> io::Result<ExecAnswer> {
    let (addr, _dir) = address(session_dir)?;
    let mut stream = UnixStream::connect(addr)?;
    let mut line = serde_json::to_vec(request)?;
    line.push(b'\n');
    stream.write_all(&line)?;
    let mut reader = BufReader::new(stream);
    let mut answer = String::new();
    reader.read_line(&mut answer)?;
    serde_json::from_str(&answer).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bad answer from the supervisor: {e}"),
        )
    })
}

/// Read one request (supervisor side), refusing anything over [`MAX_REQUEST_BYTES`].
pub fn read_request(stream: &UnixStream) -> io::Result<ExecRequest> {
    use std::io::Read;
    let mut line = Vec::new();
    BufReader::new(stream.take(MAX_REQUEST_BYTES as u64 + 1)).read_until(b'\n', &mut line)?;
    if line.len() > MAX_REQUEST_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "request too large",
        ));
    }
    serde_json::from_slice(&line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Write the answer (supervisor side).
pub fn write_answer(mut stream: &UnixStream, answer: &ExecAnswer) -> io::Result<()> {
    let mut line = serde_json::to_vec(answer)?;
    line.push(b'\n');
    stream.write_all(&line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_and_its_answer_cross_the_socket() {
        let dir = tempfile::tempdir().unwrap();
        let listener = bind(dir.path()).unwrap();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let req = read_request(&stream).unwrap();
            write_answer(
                &stream,
                &ExecAnswer {
                    run: req.argv[0] == "git",
                    exit_code: 0,
                    message: String::new(),
                    grant: None,
                    shim_dir: "/s".into(),
                    env_pass: vec![],
                },
            )
            .unwrap();
        });
        let answer = ask(
            dir.path(),
            &ExecRequest {
                argv: vec!["git".into(), "status".into()],
                cwd: "/w".into(),
                grant: None,
            },
        )
        .unwrap();
        assert!(answer.run);
        server.join().unwrap();
    }

    #[test]
    fn a_long_session_path_goes_through_proc_self_fd() {
        let dir = tempfile::tempdir().unwrap();
        let long = dir.path().join("d".repeat(120));
        std::fs::create_dir(&long).unwrap();
        let listener = bind(&long).unwrap();
        assert!(long.join(SOCKET_NAME).exists());
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let _ = read_request(&stream).unwrap();
            write_answer(
                &stream,
                &ExecAnswer {
                    run: false,
                    exit_code: 126,
                    message: "no".into(),
                    grant: None,
                    shim_dir: "/s".into(),
                    env_pass: vec![],
                },
            )
            .unwrap();
        });
        let req = ExecRequest {
            argv: vec!["curl".into()],
            cwd: "/".into(),
            grant: None,
        };
        assert_eq!(ask(&long, &req).unwrap().exit_code, 126);
        server.join().unwrap();
    }
}
