//! The pure half of the socket guard: what a `connect` address says, and
//! the kernel's `sock_diag` answers about Unix sockets.
//!
//! Who listens on a Unix socket cannot be learned from the file: the kernel
//! only says it through `NETLINK_SOCK_DIAG`, which lists every Unix socket
//! of one network namespace with its inode, its type and state, its bound
//! name and the device and inode of the file it is bound to
//! (`UNIX_DIAG_VFS`). The socket guard (`socket_guard.rs`) asks it without
//! connecting anything, so a host service never sees a connection it would
//! refuse. Everything here builds or parses bytes; nothing does I/O.

/// `AF_UNIX`.
const AF_UNIX: u16 = 1;
/// `SOCK_DIAG_BY_FAMILY`.
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `NLM_F_REQUEST | NLM_F_DUMP` (`NLM_F_ROOT | NLM_F_MATCH`).
const NLM_F_REQUEST_DUMP: u16 = 0x1 | 0x100 | 0x200;
/// `NLMSG_DONE` and `NLMSG_ERROR`.
const NLMSG_DONE: u16 = 3;
const NLMSG_ERROR: u16 = 2;
/// `UDIAG_SHOW_NAME | UDIAG_SHOW_VFS`.
const UDIAG_SHOW: u32 = 0x1 | 0x2;
/// The attribute types of a `unix_diag_msg`.
const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_VFS: u16 = 1;
/// Size of `struct nlmsghdr`, `struct unix_diag_msg`, `struct rtattr`.
const NLMSG_HDR: usize = 16;
const UNIX_DIAG_MSG: usize = 16;
const RTA_HDR: usize = 4;

/// Where a `connect` on a Unix socket goes, from its `sockaddr_un`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum UnixTarget {
    /// A file: the path as given (relative to the caller's working
    /// directory when it does not start with `/`).
    Path(Vec<u8>),
    /// An abstract name (without its leading NUL): it lives in a network
    /// namespace, not in the file system.
    Abstract(Vec<u8>),
    /// Nothing the kernel would look up (too short, unnamed, another
    /// family): the kernel's own answer is what the caller gets.
    Invalid,
}

/// Read a `sockaddr_un` of `addr.len()` bytes (the `addrlen` the caller
/// passed) as the kernel does in `unix_mkname`.
pub(crate) fn classify(addr: &[u8]) -> UnixTarget {
    if addr.len() <= 2 || u16::from_ne_bytes([addr[0], addr[1]]) != AF_UNIX {
        return UnixTarget::Invalid;
    }
    let path = &addr[2..];
    if path[0] == 0 {
        return UnixTarget::Abstract(path[1..].to_vec());
    }
    let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
    UnixTarget::Path(path[..end].to_vec())
}

/// `/proc/self/fd/N[/rest]` (or `/proc/thread-self/fd/N[/rest]`): the
/// descriptor number and the rest, without its leading `/`. A program
/// names a long socket path this way, through a directory it holds open.
pub(crate) fn own_descriptor_path(path: &[u8]) -> Option<(u32, &[u8])> {
    let after = path
        .strip_prefix(b"/proc/self/fd/")
        .or_else(|| path.strip_prefix(b"/proc/thread-self/fd/"))?;
    let end = after.iter().position(|b| *b == b'/').unwrap_or(after.len());
    let fd = std::str::from_utf8(&after[..end]).ok()?.parse().ok()?;
    let rest = after[end..].strip_prefix(b"/").unwrap_or(&after[end..]);
    Some((fd, rest))
}

/// A `sock_diag` dump request for every Unix socket of the namespace, with
/// its name and the file it is bound to.
pub(crate) fn dump_request(seq: u32) -> Vec<u8> {
    let mut req = Vec::with_capacity(NLMSG_HDR + 24);
    let len = (NLMSG_HDR + 24) as u32;
    req.extend_from_slice(&len.to_ne_bytes());
    req.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req.extend_from_slice(&NLM_F_REQUEST_DUMP.to_ne_bytes());
    req.extend_from_slice(&seq.to_ne_bytes());
    req.extend_from_slice(&0u32.to_ne_bytes()); // pid: the kernel
    // struct unix_diag_req
    req.push(AF_UNIX as u8); // sdiag_family
    req.push(0); // sdiag_protocol
    req.extend_from_slice(&0u16.to_ne_bytes()); // pad
    req.extend_from_slice(&u32::MAX.to_ne_bytes()); // udiag_states: all
    req.extend_from_slice(&0u32.to_ne_bytes()); // udiag_ino: any
    req.extend_from_slice(&UDIAG_SHOW.to_ne_bytes());
    req.extend_from_slice(&u32::MAX.to_ne_bytes()); // cookie: none
    req.extend_from_slice(&u32::MAX.to_ne_bytes());
    req
}

/// One Unix socket of a dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DiagSocket {
    /// The socket's own inode (`socket:[N]` in `/proc/<pid>/fd`).
    pub(crate) inode: u32,
    /// The name it is bound to: a path, or `\0` and an abstract name.
    pub(crate) name: Option<Vec<u8>>,
    /// The file it is bound to: (device as `stat` encodes it, inode's low
    /// 32 bits, as the kernel reports them).
    pub(crate) file: Option<(u64, u32)>,
}

/// What one buffer of a dump held.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct DumpPart {
    pub(crate) sockets: Vec<DiagSocket>,
    /// The dump is complete (`NLMSG_DONE`).
    pub(crate) done: bool,
    /// The kernel refused the request (`NLMSG_ERROR` with this errno).
    pub(crate) error: Option<i32>,
}

/// Parse one `recv` of a dump. Malformed trailing bytes end the part.
pub(crate) fn parse_dump(buf: &[u8]) -> DumpPart {
    let mut part = DumpPart::default();
    let mut off = 0;
    while off + NLMSG_HDR <= buf.len() {
        let len = u32_at(buf, off) as usize;
        let kind = u16_at(buf, off + 4);
        if len < NLMSG_HDR || off + len > buf.len() {
            break;
        }
        let body = &buf[off + NLMSG_HDR..off + len];
        match kind {
            NLMSG_DONE => {
                part.done = true;
                return part;
            }
            NLMSG_ERROR => {
                let errno = if body.len() >= 4 {
                    -(u32_at(body, 0) as i32)
                } else {
                    libc_eproto()
                };
                part.error = Some(errno);
                part.done = true;
                return part;
            }
            SOCK_DIAG_BY_FAMILY if body.len() >= UNIX_DIAG_MSG => {
                part.sockets.push(parse_socket(body));
            }
            _ => {}
        }
        off += align4(len);
    }
    part
}

fn parse_socket(body: &[u8]) -> DiagSocket {
    let mut s = DiagSocket {
        inode: u32_at(body, 4),
        name: None,
        file: None,
    };
    let mut at = UNIX_DIAG_MSG;
    while at + RTA_HDR <= body.len() {
        let len = u16_at(body, at) as usize;
        let kind = u16_at(body, at + 2);
        if len < RTA_HDR || at + len > body.len() {
            break;
        }
        let value = &body[at + RTA_HDR..at + len];
        match kind {
            UNIX_DIAG_NAME => s.name = Some(value.to_vec()),
            UNIX_DIAG_VFS if value.len() >= 8 => {
                let ino = u32_at(value, 0);
                let dev = stat_dev(u32_at(value, 4));
                s.file = Some((dev, ino));
            }
            _ => {}
        }
        at += align4(len);
    }
    s
}

/// The kernel's `dev_t` (`major << 20 | minor`), as `stat` reports it
/// (`new_encode_dev`: `minor & 0xff | major << 8 | (minor & !0xff) << 12`).
pub(crate) fn stat_dev(kernel: u32) -> u64 {
    let major = u64::from(kernel >> 20);
    let minor = u64::from(kernel & 0xf_ffff);
    (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12)
}

/// Whether `name` (as a dump reports it) is the abstract name `wanted`.
pub(crate) fn is_abstract_name(name: &[u8], wanted: &[u8]) -> bool {
    name.first() == Some(&0) && &name[1..] == wanted
}

/// The paths of the bound datagram sockets listed in `/proc/net/unix`
/// (`Type` 0002, a path rather than an abstract `@name`): the host's
/// loggers and notification sockets, which take datagrams sent with an
/// address and no `connect`.
pub(crate) fn datagram_paths(proc_net_unix: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for line in proc_net_unix.lines().skip(1) {
        // Num RefCount Protocol Flags Type St Inode Path
        let mut fields = line.splitn(8, ' ').filter(|f| !f.is_empty());
        let kind = fields.nth(4);
        let path = line.split_whitespace().nth(7);
        if kind == Some("0002")
            && let Some(p) = path
            && p.starts_with('/')
        {
            let p = std::path::PathBuf::from(p);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// `EPROTO`, without depending on libc in this pure module.
fn libc_eproto() -> i32 {
    71
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sockaddr(path: &[u8]) -> Vec<u8> {
        let mut a = AF_UNIX.to_ne_bytes().to_vec();
        a.extend_from_slice(path);
        a
    }

    #[test]
    fn addresses_are_read_as_the_kernel_reads_them() {
        assert_eq!(
            classify(&sockaddr(b"/run/user/0/bus\0")),
            UnixTarget::Path(b"/run/user/0/bus".to_vec())
        );
        // No NUL: the length ends the path (the kernel adds one).
        assert_eq!(
            classify(&sockaddr(b"rel.sock")),
            UnixTarget::Path(b"rel.sock".to_vec())
        );
        // Bytes after the first NUL are not part of a path.
        assert_eq!(
            classify(&sockaddr(b"/a\0/b")),
            UnixTarget::Path(b"/a".to_vec())
        );
        assert_eq!(
            classify(&sockaddr(b"\0dbus-x\0y")),
            UnixTarget::Abstract(b"dbus-x\0y".to_vec())
        );
        assert_eq!(classify(&sockaddr(b"")), UnixTarget::Invalid);
        assert_eq!(classify(&[1]), UnixTarget::Invalid);
        let mut inet = 2u16.to_ne_bytes().to_vec();
        inet.extend_from_slice(b"/x");
        assert_eq!(classify(&inet), UnixTarget::Invalid);
    }

    #[test]
    fn a_path_through_an_open_descriptor_is_split() {
        assert_eq!(
            own_descriptor_path(b"/proc/self/fd/7/supervisor.sock"),
            Some((7, &b"supervisor.sock"[..]))
        );
        assert_eq!(
            own_descriptor_path(b"/proc/thread-self/fd/12"),
            Some((12, &b""[..]))
        );
        assert_eq!(own_descriptor_path(b"/proc/self/fd/x/s"), None);
        assert_eq!(own_descriptor_path(b"/proc/1/fd/3/s"), None);
        assert_eq!(own_descriptor_path(b"/tmp/s"), None);
    }

    #[test]
    fn devices_are_encoded_as_stat_encodes_them() {
        // 254:0 (a virtio disk) and 0:45 (a tmpfs), and a large minor.
        assert_eq!(stat_dev(254 << 20), 0xfe00);
        assert_eq!(stat_dev(45), 45);
        assert_eq!(
            stat_dev((8 << 20) | 0x1234),
            0x34 | (8 << 8) | (0x1200 << 12)
        );
    }

    fn rta(kind: u16, value: &[u8]) -> Vec<u8> {
        let mut a = ((RTA_HDR + value.len()) as u16).to_ne_bytes().to_vec();
        a.extend_from_slice(&kind.to_ne_bytes());
        a.extend_from_slice(value);
        while !a.len().is_multiple_of(4) {
            a.push(0);
        }
        a
    }

    fn message(kind: u16, body: &[u8]) -> Vec<u8> {
        let mut m = ((NLMSG_HDR + body.len()) as u32).to_ne_bytes().to_vec();
        m.extend_from_slice(&kind.to_ne_bytes());
        m.extend_from_slice(&[0; 10]);
        m.extend_from_slice(body);
        while !m.len().is_multiple_of(4) {
            m.push(0);
        }
        m
    }

    #[test]
    fn a_dump_yields_each_socket_with_its_name_and_file() {
        let mut body = vec![1, 1, 10, 0];
        body.extend_from_slice(&4242u32.to_ne_bytes());
        body.extend_from_slice(&[0; 8]);
        body.extend(rta(UNIX_DIAG_NAME, b"/tmp/s.sock\0"));
        let mut vfs = 777u32.to_ne_bytes().to_vec();
        vfs.extend_from_slice(&(254u32 << 20).to_ne_bytes());
        body.extend(rta(UNIX_DIAG_VFS, &vfs));
        let mut buf = message(SOCK_DIAG_BY_FAMILY, &body);
        buf.extend(message(NLMSG_DONE, &[0; 4]));
        let part = parse_dump(&buf);
        assert!(part.done);
        assert_eq!(
            part.sockets,
            vec![DiagSocket {
                inode: 4242,
                name: Some(b"/tmp/s.sock\0".to_vec()),
                file: Some((0xfe00, 777)),
            }]
        );
        // A refusal and garbage.
        let err = message(NLMSG_ERROR, &(-13i32).to_ne_bytes());
        assert_eq!(parse_dump(&err).error, Some(13));
        assert_eq!(parse_dump(&[0xff; 7]), DumpPart::default());
        let mut short = message(SOCK_DIAG_BY_FAMILY, &body);
        short.truncate(30);
        assert!(parse_dump(&short).sockets.is_empty());
    }

    #[test]
    fn bound_datagram_sockets_are_found_in_proc_net_unix() {
        let text = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00000000 0002 01 16281 /run/systemd/notify\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 16283 /run/systemd/private\n\
            0000000000000000: 00000003 00000000 00000000 0002 01 16290 /run/systemd/journal/dev-log\n\
            0000000000000000: 00000002 00000000 00000000 0002 01 16291 @/org/abstract\n\
            0000000000000000: 00000002 00000000 00000000 0002 01 16292\n\
            0000000000000000: 00000002 00000000 00000000 0002 01 16290 /run/systemd/journal/dev-log\n";
        assert_eq!(
            datagram_paths(text),
            vec![
                std::path::PathBuf::from("/run/systemd/notify"),
                std::path::PathBuf::from("/run/systemd/journal/dev-log"),
            ]
        );
    }

    #[test]
    fn the_request_asks_for_names_and_files_of_every_unix_socket() {
        let r = dump_request(7);
        assert_eq!(r.len(), 40);
        assert_eq!(u32_at(&r, 0), 40);
        assert_eq!(u16_at(&r, 4), SOCK_DIAG_BY_FAMILY);
        assert_eq!(r[16], 1);
        assert_eq!(u32_at(&r, 28), UDIAG_SHOW);
        assert!(is_abstract_name(b"\0x", b"x") && !is_abstract_name(b"/x", b"x"));
    }
}
