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
//! The protocol is one frame each way per connection ([`crate::wire`]).

use std::io::{self, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use crate::wire;

pub use crate::wire::SOCKET_NAME;

/// Longest request accepted (an argv of a few MiB is refused, not read forever).
pub const MAX_REQUEST_BYTES: usize = wire::MAX_BODY;

/// What a shim asks, as the supervisor reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    /// The program name (as shimmed) and its arguments (not UTF-8: lossy).
    pub argv: Vec<String>,
    /// The shim's working directory.
    pub cwd: String,
    /// The approval this process runs under (`AQ_GRANT`), if any and UTF-8.
    pub grant: Option<String>,
    /// The names of the shim's environment variables, as bytes.
    pub env: Vec<Vec<u8>>,
}

/// The supervisor's decision on a request.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Variables removed whatever their names look like (keys only the
    /// agent may hold).
    pub env_scrub: Vec<String>,
}

/// The answer as a shim reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Run the real program.
    pub run: bool,
    /// When not running: the exit code to leave with.
    pub exit_code: u8,
    /// Printed on stderr when not running.
    pub message: Vec<u8>,
    /// Set as `AQ_GRANT` for the program.
    pub grant: Option<Vec<u8>>,
    /// The shim directory, left out when looking for the real program.
    pub shim_dir: PathBuf,
    /// Variables to remove from the program's environment.
    pub drop: Vec<Vec<u8>>,
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
pub fn ask(session_dir: &Path, request: &wire::Request<'_>) -> io::Result<Reply> {
    use std::os::unix::ffi::OsStrExt;
    let (addr, _dir) = address(session_dir)?;
    let mut stream = UnixStream::connect(addr)?;
    stream.write_all(&request.encode())?;
    let body = read_frame(&mut stream)?;
    let bad = |e: wire::WireError| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bad answer from the supervisor: {e}"),
        )
    };
    let answer = wire::Answer::decode(&body).map_err(bad)?;
    Ok(Reply {
        run: answer.run,
        exit_code: answer.exit_code,
        message: answer.message.to_vec(),
        grant: answer.grant.map(<[u8]>::to_vec),
        shim_dir: PathBuf::from(std::ffi::OsStr::from_bytes(answer.shim_dir)),
        drop: answer.drop.iter().map(|n| n.to_vec()).collect(),
    })
}

/// One frame's body, its header checked (a body over [`wire::MAX_BODY`] is
/// refused before it is read).
fn read_frame(mut stream: impl Read) -> io::Result<Vec<u8>> {
    let mut header = [0u8; wire::HEADER_LEN];
    stream.read_exact(&mut header)?;
    let len = wire::body_len(&header)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body)?;
    Ok(body)
}

/// Read one request (supervisor side), refusing anything over [`MAX_REQUEST_BYTES`].
pub fn read_request(stream: &UnixStream) -> io::Result<ExecRequest> {
    let body = read_frame(stream)?;
    let request = wire::Request::decode(&body)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok(ExecRequest {
        argv: request.argv.iter().map(|a| text(a)).collect(),
        cwd: text(request.cwd),
        grant: request
            .grant
            .and_then(|g| std::str::from_utf8(g).ok())
            .map(str::to_string),
        env: request.env.iter().map(|n| n.to_vec()).collect(),
    })
}

/// Write the answer (supervisor side). `env` is the shim's variable names
/// (from its request): the secret-looking ones the policy does not pass,
/// and those only the agent may hold, are named for the shim to remove.
pub fn write_answer(
    mut stream: &UnixStream,
    answer: &ExecAnswer,
    env: &[Vec<u8>],
) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let drop: Vec<&[u8]> = env
        .iter()
        .filter(|name| {
            let name = String::from_utf8_lossy(name);
            crate::env_scrub::removes(&name, &answer.env_pass)
                || answer.env_scrub.iter().any(|s| *s == name)
        })
        .map(Vec::as_slice)
        .collect();
    let frame = wire::Answer {
        run: answer.run,
        exit_code: answer.exit_code,
        message: answer.message.as_bytes(),
        grant: answer.grant.as_deref().map(str::as_bytes),
        shim_dir: answer.shim_dir.as_os_str().as_bytes(),
        drop,
    }
    .encode();
    stream.write_all(&frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(run: bool, exit_code: u8, message: &str) -> ExecAnswer {
        ExecAnswer {
            run,
            exit_code,
            message: message.into(),
            grant: None,
            shim_dir: "/s".into(),
            env_pass: vec!["OPENAI_API_KEY".into()],
            env_scrub: vec!["TOY_AUTH_CONTENT".into()],
        }
    }

    #[test]
    fn a_request_and_its_answer_cross_the_socket() {
        let dir = tempfile::tempdir().unwrap();
        let listener = bind(dir.path()).unwrap();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let req = read_request(&stream).unwrap();
            assert_eq!(req.argv, ["git", "status", "\u{fffd}"]);
            assert_eq!(req.grant, None, "not UTF-8: no grant");
            write_answer(&stream, &answer(req.argv[0] == "git", 0, ""), &req.env).unwrap();
        });
        let reply = ask(
            dir.path(),
            &wire::Request {
                argv: vec![b"git", b"status", b"\xff"],
                cwd: b"/w",
                grant: Some(b"\xfe"),
                env: vec![
                    b"HOME",
                    b"GITHUB_TOKEN",
                    b"OPENAI_API_KEY",
                    b"AWS_SECRET_ACCESS_KEY",
                    b"TOY_AUTH_CONTENT",
                    b"TOY_MODE",
                ],
            },
        )
        .unwrap();
        assert!(reply.run);
        assert_eq!(reply.shim_dir, Path::new("/s"));
        // Secret-looking names are to be removed, but not one the policy
        // passes; and a key only the agent may hold, whatever its name.
        assert_eq!(
            reply.drop,
            [
                b"GITHUB_TOKEN".to_vec(),
                b"AWS_SECRET_ACCESS_KEY".to_vec(),
                b"TOY_AUTH_CONTENT".to_vec()
            ]
        );
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
            write_answer(&stream, &answer(false, 126, "no"), &[]).unwrap();
        });
        let req = wire::Request {
            argv: vec![b"curl"],
            cwd: b"/",
            ..wire::Request::default()
        };
        let reply = ask(&long, &req).unwrap();
        assert_eq!((reply.exit_code, &reply.message[..]), (126, &b"no"[..]));
        server.join().unwrap();
    }

    #[test]
    fn a_request_that_is_too_large_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let listener = bind(dir.path()).unwrap();
        let client = UnixStream::connect(dir.path().join(SOCKET_NAME)).unwrap();
        let (server, _) = listener.accept().unwrap();
        let mut header = wire::MAGIC.to_vec();
        header.extend_from_slice(&((MAX_REQUEST_BYTES + 1) as u32).to_le_bytes());
        (&client).write_all(&header).unwrap();
        let err = read_request(&server).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("too large"), "{err}");
    }
}
