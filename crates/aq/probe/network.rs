//! The network, off: aq verify's own listeners on the host's loopback, DNS,
//! a TEST-NET address, raw and netlink sockets, the interfaces.

use std::io;
use std::time::{Duration, Instant};

use super::{Context, FAIL_FAST, Outcome, errno_text};

pub(super) fn net_tcp_host(c: &Context) -> Outcome {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], c.tcp_port));
    match std::net::TcpStream::connect_timeout(&addr, FAIL_FAST) {
        Err(e) => Outcome::Held(errno_text(&e)),
        Ok(_) => Outcome::Leak(format!("connected to {addr}")),
    }
}

pub(super) fn net_udp_host(c: &Context) -> Outcome {
    let sock = match std::net::UdpSocket::bind("127.0.0.1:0") {
        Ok(s) => s,
        Err(e) => return Outcome::Held(format!("bind: {}", errno_text(&e))),
    };
    let msg = format!("aq-verify-udp-{}", c.token);
    match sock.send_to(msg.as_bytes(), ("127.0.0.1", c.udp_port)) {
        Err(e) => Outcome::Held(errno_text(&e)),
        // Sending into the sandbox's own loopback succeeds; whether it
        // reached the host is for the host to say.
        Ok(_) => Outcome::Held("sent into the sandbox's own loopback".to_string()),
    }
}

pub(super) fn net_abstract_unix(c: &Context) -> Outcome {
    use std::os::linux::net::SocketAddrExt;
    let addr = match std::os::unix::net::SocketAddr::from_abstract_name(c.abstract_name.as_bytes())
    {
        Ok(a) => a,
        Err(e) => return Outcome::Error(format!("bad abstract name: {e}")),
    };
    match std::os::unix::net::UnixStream::connect_addr(&addr) {
        Err(e) => Outcome::Held(errno_text(&e)),
        Ok(_) => Outcome::Leak("connected to the host's abstract socket".to_string()),
    }
}

pub(super) fn net_unix_host_socket(c: &Context) -> Outcome {
    use std::io::{Read, Write};
    match std::os::unix::net::UnixStream::connect(&c.unix_socket) {
        Err(e) => Outcome::Held(errno_text(&e)),
        Ok(mut s) => {
            let _ = s.set_read_timeout(Some(FAIL_FAST));
            let _ = s.write_all(format!("aq-verify-{}\n", c.token).as_bytes());
            let mut b = [0u8; 64];
            match s.read(&mut b) {
                Ok(n) if n > 0 => Outcome::Leak("exchanged a line with the host's socket".into()),
                _ => Outcome::Leak("connected to the host's socket".into()),
            }
        }
    }
}

pub(super) fn net_unix_host_datagram(c: &Context) -> Outcome {
    let sock = match std::os::unix::net::UnixDatagram::unbound() {
        Ok(s) => s,
        Err(e) => return Outcome::Held(format!("socket: {}", errno_text(&e))),
    };
    match sock.send_to(
        format!("aq-verify-{}", c.token).as_bytes(),
        &c.unix_datagram,
    ) {
        Err(e) => Outcome::Held(errno_text(&e)),
        Ok(_) => Outcome::Leak("sent a datagram to the host's socket".into()),
    }
}

/// A DNS query for `example.invalid`, type A.
pub(super) fn dns_query() -> Vec<u8> {
    let mut q = vec![0xa9, 0x71, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in ["example", "invalid"] {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.extend_from_slice(&[0, 0, 1, 0, 1]);
    q
}

/// Sockets of local resolver daemons, which would carry a lookup out of the
/// network namespace (they are not in it).
pub(super) const RESOLVER_SOCKETS: &[&str] = &[
    "/run/systemd/resolve/io.systemd.Resolve",
    "/run/nscd/socket",
    "/var/run/nscd/socket",
];

pub(super) fn net_dns(_: &Context) -> Outcome {
    let mut notes = Vec::new();
    let mut leaks = Vec::new();
    let started = Instant::now();
    let host = c"example.invalid";
    // SAFETY: zeroed hints are valid; res is freed below when set.
    let rc = unsafe {
        let mut hints: libc::addrinfo = std::mem::zeroed();
        hints.ai_family = libc::AF_UNSPEC;
        hints.ai_socktype = libc::SOCK_STREAM;
        let mut res: *mut libc::addrinfo = std::ptr::null_mut();
        let rc = libc::getaddrinfo(host.as_ptr(), std::ptr::null(), &hints, &mut res);
        if !res.is_null() {
            libc::freeaddrinfo(res);
        }
        rc
    };
    let elapsed = started.elapsed().as_millis();
    if rc == 0 {
        leaks.push("getaddrinfo resolved example.invalid".to_string());
    } else {
        // SAFETY: gai_strerror returns a static string.
        let text = unsafe { std::ffi::CStr::from_ptr(libc::gai_strerror(rc)) };
        let name = match rc {
            libc::EAI_AGAIN => "EAI_AGAIN",
            libc::EAI_NONAME => "EAI_NONAME",
            libc::EAI_FAIL => "EAI_FAIL",
            libc::EAI_SYSTEM => "EAI_SYSTEM",
            _ => "EAI",
        };
        notes.push(format!(
            "getaddrinfo: {name} ({}) in {elapsed} ms",
            text.to_string_lossy()
        ));
    }
    let conf = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    let mut servers: Vec<std::net::IpAddr> = conf
        .lines()
        .filter_map(|l| l.trim().strip_prefix("nameserver"))
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    if servers.is_empty() {
        servers.push(std::net::IpAddr::from([127, 0, 0, 1]));
    }
    for server in servers.iter().take(3) {
        let bind: std::net::SocketAddr = if server.is_ipv4() {
            "0.0.0.0:0"
                .parse()
                .unwrap_or_else(|_| ([0, 0, 0, 0], 0).into())
        } else {
            "[::]:0".parse().unwrap_or_else(|_| ([0u16; 8], 0).into())
        };
        let result = std::net::UdpSocket::bind(bind).and_then(|s| {
            s.set_read_timeout(Some(Duration::from_millis(400)))?;
            s.connect((*server, 53))?;
            s.send(&dns_query())?;
            let mut buf = [0u8; 512];
            s.recv(&mut buf)
        });
        match result {
            Ok(_) => leaks.push(format!("nameserver {server} answered")),
            Err(e) => notes.push(format!("nameserver {server}: {}", errno_text(&e))),
        }
    }
    for path in RESOLVER_SOCKETS {
        if let Ok(_s) = std::os::unix::net::UnixStream::connect(path) {
            leaks.push(format!("the resolver socket {path} accepts connections"));
        }
    }
    if leaks.is_empty() {
        Outcome::Held(notes.join("; "))
    } else {
        Outcome::Leak(leaks.join("; "))
    }
}

pub(super) fn net_test_net(_: &Context) -> Outcome {
    let addr = std::net::SocketAddr::from(([203, 0, 113, 1], 80));
    let started = Instant::now();
    match std::net::TcpStream::connect_timeout(&addr, FAIL_FAST) {
        Ok(_) => Outcome::Leak(format!("connected to {addr}")),
        Err(e) if e.kind() == io::ErrorKind::TimedOut => Outcome::Leak(format!(
            "no answer within {} ms: the packet left the sandbox",
            FAIL_FAST.as_millis()
        )),
        Err(e) => Outcome::Held(format!(
            "{} in {} ms",
            errno_text(&e),
            started.elapsed().as_millis()
        )),
    }
}

pub(super) fn net_interfaces(_: &Context) -> Outcome {
    let text = match std::fs::read_to_string("/proc/net/dev") {
        Ok(t) => t,
        Err(e) => return Outcome::Error(format!("/proc/net/dev: {}", errno_text(&e))),
    };
    let names: Vec<&str> = text
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect();
    let others: Vec<&str> = names.iter().copied().filter(|n| *n != "lo").collect();
    if others.is_empty() {
        Outcome::Held(format!("only {}", names.join(", ")))
    } else {
        Outcome::Leak(format!("the host's interfaces: {}", others.join(", ")))
    }
}
