//! The bytes a shim and its supervisor exchange: one frame each way.
//!
//! This module uses `core` and `alloc` only, because two programs compile
//! it: the `aq-shim` crate (the supervisor's side, and `aq` started under a
//! program's name) and the small program the shim links point to on Linux
//! (`tiny/main.rs`), which has no C library, so that a shimmed command costs
//! about one exec and not a C runtime's start as well.
//!
//! A frame is the magic `AQS1`, the body's length (u32, little-endian) and
//! the body: fields of a tag byte, a length (u32, little-endian) and the
//! bytes. Bytes, not text: an argument that is not UTF-8 crosses unchanged
//! and the supervisor decides what it means. An unknown tag, a field twice
//! that may come once, or a frame that does not add up is an error, and an
//! error refuses the command.

use alloc::vec::Vec;

/// The first bytes of every frame (and the protocol's version).
pub const MAGIC: [u8; 4] = *b"AQS1";
/// Magic and body length.
pub const HEADER_LEN: usize = 8;
/// Longest frame body accepted (an argv of a few MiB is refused, not read forever).
pub const MAX_BODY: usize = 4 << 20;
/// The socket's file name in the session directory.
pub const SOCKET_NAME: &str = "supervisor.sock";
/// The session directory's variable, set by `aq run` for everything it starts.
pub const ENV_SESSION_DIR: &str = "AQ_SESSION_DIR";
/// The approved request whose commands a child may run without asking.
pub const ENV_GRANT: &str = "AQ_GRANT";
/// Exit code of a command the firewall refused (`aq_exit::ExitCode::Blocked`).
pub const EXIT_BLOCKED: u8 = 126;
/// Exit code when the real program does not exist (`aq_exit::ExitCode::NotFound`).
pub const EXIT_NOT_FOUND: u8 = 127;
/// What a shim started outside a session says (after `aq: NAME: `).
pub const NO_SESSION: &str = "this is an agent-quarantine shim, but AQ_SESSION_DIR is not set; run commands through `aq run`";
/// What `aq-shim` says when it is started under its own name.
pub const OWN_NAME: &str =
    "aq-shim: the shim of agent-quarantine; `aq run` links program names to it. Run `aq --help`.";

/// Request: one argument (the program's name first; repeated).
const ARG: u8 = b'a';
/// Request: the working directory.
const CWD: u8 = b'c';
/// Request: `AQ_GRANT`. Answer: the grant to set for the program.
const GRANT: u8 = b'g';
/// Request: the name of a variable of the shim's environment (repeated).
const ENV: u8 = b'e';
/// Answer: whether to run (one byte, 0 or 1).
const RUN: u8 = b'r';
/// Answer: the exit code when not running (one byte).
const EXIT: u8 = b'x';
/// Answer: what to print on stderr when not running.
const MESSAGE: u8 = b'm';
/// Answer: the shim directory, skipped when looking for the real program.
const SHIM_DIR: u8 = b's';
/// Answer: a variable to remove before running the program (repeated).
const DROP: u8 = b'd';

/// Why a frame was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireError(pub &'static str);

impl core::fmt::Display for WireError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.0)
    }
}

/// What a shim asks: may this run?
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Request<'a> {
    /// The program's name (as shimmed) and its arguments.
    pub argv: Vec<&'a [u8]>,
    /// The shim's working directory (empty when unknown).
    pub cwd: &'a [u8],
    /// `AQ_GRANT`, if set.
    pub grant: Option<&'a [u8]>,
    /// The names of the shim's environment variables (not their values):
    /// the supervisor says which to remove.
    pub env: Vec<&'a [u8]>,
}

/// The supervisor's answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer<'a> {
    /// Run the real program.
    pub run: bool,
    /// When not running: the exit code to leave with.
    pub exit_code: u8,
    /// Printed on stderr when not running (the refusal with rule, why and safer).
    pub message: &'a [u8],
    /// Set as `AQ_GRANT` for the program when a human approved it.
    pub grant: Option<&'a [u8]>,
    /// The shim directory, left out when looking for the real program.
    pub shim_dir: &'a [u8],
    /// Variables to remove from the program's environment.
    pub drop: Vec<&'a [u8]>,
}

/// Builds a frame field by field.
struct Frame(Vec<u8>);

impl Frame {
    fn new() -> Frame {
        let mut bytes = Vec::with_capacity(256);
        bytes.extend_from_slice(&MAGIC);
        bytes.extend_from_slice(&[0; 4]);
        Frame(bytes)
    }

    fn field(&mut self, tag: u8, value: &[u8]) {
        self.0.push(tag);
        self.0
            .extend_from_slice(&(value.len() as u32).to_le_bytes());
        self.0.extend_from_slice(value);
    }

    fn finish(mut self) -> Vec<u8> {
        let body = (self.0.len() - HEADER_LEN) as u32;
        self.0[4..HEADER_LEN].copy_from_slice(&body.to_le_bytes());
        self.0
    }
}

/// The body length a frame's header announces, checked against [`MAX_BODY`].
pub fn body_len(header: &[u8; HEADER_LEN]) -> Result<usize, WireError> {
    if header[..4] != MAGIC {
        return Err(WireError("not a frame of this version of aq"));
    }
    let len = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
    if len > MAX_BODY {
        return Err(WireError("request too large"));
    }
    Ok(len)
}

/// The fields of a frame's body, in order.
fn fields(mut body: &[u8]) -> impl Iterator<Item = Result<(u8, &[u8]), WireError>> {
    core::iter::from_fn(move || {
        if body.is_empty() {
            return None;
        }
        if body.len() < 5 {
            body = &[];
            return Some(Err(WireError("a field is cut short")));
        }
        let tag = body[0];
        let len = u32::from_le_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let rest = &body[5..];
        if len > rest.len() {
            body = &[];
            return Some(Err(WireError("a field is cut short")));
        }
        let (value, next) = rest.split_at(len);
        body = next;
        Some(Ok((tag, value)))
    })
}

/// Sets a field that may come once.
fn once<T>(slot: &mut Option<T>, value: T) -> Result<(), WireError> {
    if slot.is_some() {
        return Err(WireError("a field comes twice"));
    }
    *slot = Some(value);
    Ok(())
}

impl<'a> Request<'a> {
    /// The whole frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut frame = Frame::new();
        for arg in &self.argv {
            frame.field(ARG, arg);
        }
        frame.field(CWD, self.cwd);
        if let Some(grant) = self.grant {
            frame.field(GRANT, grant);
        }
        for name in &self.env {
            frame.field(ENV, name);
        }
        frame.finish()
    }

    /// Reads a frame's body (after its header).
    pub fn decode(body: &'a [u8]) -> Result<Request<'a>, WireError> {
        let mut request = Request::default();
        let (mut cwd, mut grant) = (None, None);
        for field in fields(body) {
            match field? {
                (ARG, v) => request.argv.push(v),
                (CWD, v) => once(&mut cwd, v)?,
                (GRANT, v) => once(&mut grant, v)?,
                (ENV, v) => request.env.push(v),
                _ => return Err(WireError("an unknown field")),
            }
        }
        if request.argv.is_empty() {
            return Err(WireError("no program named"));
        }
        request.cwd = cwd.ok_or(WireError("no working directory"))?;
        request.grant = grant;
        Ok(request)
    }
}

impl<'a> Answer<'a> {
    /// The whole frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut frame = Frame::new();
        frame.field(RUN, &[self.run as u8]);
        frame.field(EXIT, &[self.exit_code]);
        frame.field(MESSAGE, self.message);
        if let Some(grant) = self.grant {
            frame.field(GRANT, grant);
        }
        frame.field(SHIM_DIR, self.shim_dir);
        for name in &self.drop {
            frame.field(DROP, name);
        }
        frame.finish()
    }

    /// Reads a frame's body (after its header).
    pub fn decode(body: &'a [u8]) -> Result<Answer<'a>, WireError> {
        let mut answer = Answer::default();
        let (mut run, mut exit, mut message, mut grant, mut shim_dir) =
            (None, None, None, None, None);
        for field in fields(body) {
            match field? {
                (RUN, [b]) if *b <= 1 => once(&mut run, *b == 1)?,
                (EXIT, [code]) => once(&mut exit, *code)?,
                (MESSAGE, v) => once(&mut message, v)?,
                (GRANT, v) => once(&mut grant, v)?,
                (SHIM_DIR, v) => once(&mut shim_dir, v)?,
                (DROP, v) => answer.drop.push(v),
                _ => return Err(WireError("an unknown field")),
            }
        }
        answer.run = run.ok_or(WireError("no verdict"))?;
        answer.exit_code = exit.ok_or(WireError("no exit code"))?;
        answer.message = message.unwrap_or_default();
        answer.grant = grant;
        answer.shim_dir = shim_dir.ok_or(WireError("no shim directory"))?;
        Ok(answer)
    }
}

/// The name of an environment entry (`NAME=value`) as Rust's standard
/// library reads it: up to the first `=` after the first byte; `None` for
/// an entry without one.
pub fn env_name(entry: &[u8]) -> Option<&[u8]> {
    let eq = entry.iter().skip(1).position(|&b| b == b'=')? + 1;
    Some(&entry[..eq])
}

/// The program name a shim was started as (`argv[0]`'s last component), or
/// `None` when it is one of aq's own names: `aq`, `aq-…`,
/// `agent-quarantine` (and test binaries).
pub fn shim_name(argv0: &[u8]) -> Option<&[u8]> {
    let name = last_component(argv0)?;
    let own = name == b"aq"
        || name.starts_with(b"aq-")
        || name.starts_with(b"integration-")
        || name == b"agent-quarantine"
        || name == b"."
        || name == b"..";
    (!own).then_some(name)
}

/// The name a shim program (the one without a C library, `aq-shim`) was
/// started as: [`shim_name`]'s, and also `aq`, whose link in the shim
/// directory has `aq`'s own verbs judged (an agent's `aq allow` is the
/// agent loosening its guard). `aq` itself never asks this.
pub fn shim_program_name(argv0: &[u8]) -> Option<&[u8]> {
    match last_component(argv0) {
        Some(name) if name == b"aq" => Some(name),
        _ => shim_name(argv0),
    }
}

/// `argv[0]`'s last path component (trailing `/` ignored).
fn last_component(argv0: &[u8]) -> Option<&[u8]> {
    let end = argv0.iter().rposition(|&b| b != b'/')?;
    let trimmed = &argv0[..=end];
    Some(match trimmed.iter().rposition(|&b| b == b'/') {
        Some(slash) => &trimmed[slash + 1..],
        None => trimmed,
    })
}

/// Whether two directory paths name the same path component by component
/// (as `Path`'s equality has it: repeated and trailing `/` and `.`
/// components do not count).
pub fn same_path(a: &[u8], b: &[u8]) -> bool {
    fn parts(p: &[u8]) -> impl Iterator<Item = &[u8]> {
        p.split(|&c| c == b'/')
            .filter(|c| !c.is_empty() && *c != b".")
    }
    a.starts_with(b"/") == b.starts_with(b"/") && parts(a).eq(parts(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(frame: &[u8]) -> &[u8] {
        let header: &[u8; HEADER_LEN] = frame[..HEADER_LEN].try_into().unwrap();
        let len = body_len(header).unwrap();
        assert_eq!(len, frame.len() - HEADER_LEN);
        &frame[HEADER_LEN..]
    }

    #[test]
    fn a_request_and_an_answer_come_back_as_they_went() {
        let request = Request {
            argv: vec![b"git", b"status", b"\xff\xfe not utf-8", b""],
            cwd: b"/w",
            grant: Some(b"r-1"),
            env: vec![b"HOME", b"GITHUB_TOKEN"],
        };
        let frame = request.encode();
        assert_eq!(Request::decode(body(&frame)).unwrap(), request);
        let answer = Answer {
            run: false,
            exit_code: 126,
            message: "aq: blocked ✗\n".as_bytes(),
            grant: None,
            shim_dir: b"/s/shims",
            drop: vec![b"GITHUB_TOKEN"],
        };
        let frame = answer.encode();
        assert_eq!(Answer::decode(body(&frame)).unwrap(), answer);
    }

    #[test]
    fn a_frame_that_does_not_add_up_is_refused() {
        let good = Answer {
            run: true,
            shim_dir: b"/s",
            ..Answer::default()
        }
        .encode();
        let mut header: [u8; HEADER_LEN] = good[..HEADER_LEN].try_into().unwrap();
        header[0] = b'X';
        assert!(body_len(&header).is_err(), "magic");
        let mut header: [u8; HEADER_LEN] = good[..HEADER_LEN].try_into().unwrap();
        header[4..].copy_from_slice(&((MAX_BODY + 1) as u32).to_le_bytes());
        assert!(body_len(&header).is_err(), "too large");
        let body = &good[HEADER_LEN..];
        for cut in 1..body.len() {
            assert!(Answer::decode(&body[..cut]).is_err(), "cut at {cut}");
        }
        let mut twice = body.to_vec();
        twice.extend_from_slice(&[RUN, 1, 0, 0, 0, 1]);
        assert!(Answer::decode(&twice).is_err(), "twice");
        let mut unknown = body.to_vec();
        unknown.extend_from_slice(&[b'z', 0, 0, 0, 0]);
        assert!(Answer::decode(&unknown).is_err(), "unknown");
        let mut not_a_bool = body.to_vec();
        not_a_bool[5] = 2;
        assert!(Answer::decode(&not_a_bool).is_err(), "run = 2");
        assert!(Request::decode(&[CWD, 0, 0, 0, 0]).is_err(), "no argv");
        assert!(Request::decode(&[ARG, 1, 0, 0, 0, b'x']).is_err(), "no cwd");
    }

    #[test]
    fn names_are_read_as_the_standard_library_reads_them() {
        assert_eq!(env_name(b"HOME=/h"), Some(&b"HOME"[..]));
        assert_eq!(env_name(b"A=b=c"), Some(&b"A"[..]));
        assert_eq!(env_name(b"=C:=x"), Some(&b"=C:"[..]));
        assert_eq!(env_name(b"NOVALUE"), None);
        assert_eq!(env_name(b""), None);
        assert_eq!(shim_name(b"/s/curl"), Some(&b"curl"[..]));
        assert_eq!(shim_name(b"git"), Some(&b"git"[..]));
        assert_eq!(shim_name(b"/s/git/"), Some(&b"git"[..]));
        for own in [
            &b"aq"[..],
            b"/usr/bin/aq",
            b"aq-shim",
            b"agent-quarantine",
            b"",
            b"/",
        ] {
            assert_eq!(shim_name(own), None, "{own:?}");
        }
        // A shim program named `aq` is the link that judges aq's verbs.
        assert_eq!(shim_program_name(b"/s/aq"), Some(&b"aq"[..]));
        assert_eq!(shim_program_name(b"/s/git"), Some(&b"git"[..]));
        for own in [
            &b"aq-shim"[..],
            b"/x/aq-shim-0123",
            b"agent-quarantine",
            b"",
        ] {
            assert_eq!(shim_program_name(own), None, "{own:?}");
        }
        assert!(same_path(b"/a/b", b"/a//b/"));
        assert!(same_path(b"/a/./b", b"/a/b"));
        assert!(!same_path(b"/a/b", b"a/b"));
        assert!(!same_path(b"/a/b", b"/a/b/c"));
        assert!(!same_path(b"/a/../b", b"/b"), "`..` is not resolved");
    }
}
