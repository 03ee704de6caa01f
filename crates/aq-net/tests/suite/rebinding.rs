//! DNS rebinding: a resolver whose answer changes between calls.
//!
//! The attack: an allowlisted name first answers with a harmless public
//! address, which passes the address check, then, when asked again, with
//! loopback or a private address. A broker that vetted one answer and
//! connected by name (or resolved again for any other reason) would reach
//! the second. The broker must ask once per connection, vet every address of
//! that answer, refuse the whole answer if one address is refused, and
//! connect only to an address of the answer it vetted.
//!
//! Only the [`Resolve`] seam is faked. Nothing leaves the machine: the
//! connection that is made goes to a listener on 127.0.0.0/8 (the vetted
//! first answer is a loopback address the test permits, the rebound one
//! another that it does not); the public answers (documentation addresses,
//! 203.0.113.0/24 and 198.51.100.0/24) appear only in answers refused
//! before any connect.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aq_net::{Broker, ConnectionRecord, Decision, FrontEnd, ProxyServer, RefusalRule, Resolve};

use super::util::session_broker;

const NAME: &str = "rebind.example.invalid";

/// Answers call `n` with `answers[n]` (the last one from then on) and
/// remembers every name it was asked.
struct Rebinding {
    answers: Vec<Vec<IpAddr>>,
    asked: Mutex<Vec<String>>,
}

impl Rebinding {
    fn new(answers: &[&[&str]]) -> Arc<Rebinding> {
        Arc::new(Rebinding {
            answers: answers
                .iter()
                .map(|a| a.iter().map(|s| s.parse().unwrap()).collect())
                .collect(),
            asked: Mutex::new(Vec::new()),
        })
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl Resolve for Rebinding {
    fn resolve(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        let mut asked = self.asked.lock().unwrap();
        let n = asked.len().min(self.answers.len() - 1);
        asked.push(name.to_string());
        Ok(self.answers[n].clone())
    }
}

fn sa(ip: &str, port: u16) -> SocketAddr {
    SocketAddr::new(ip.parse().unwrap(), port)
}

/// Whether a connection is waiting on `l` (the kernel queues it before the
/// connecting side's `connect` returns, so there is no race to lose).
fn has_pending(l: &TcpListener) -> bool {
    l.set_nonblocking(true).unwrap();
    match l.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept: {e}"),
    }
}

/// The next connection on `l`, waiting up to 5 s (a broker that went
/// elsewhere must fail the test, not hang it).
fn accept_within_5s(l: &TcpListener) -> Option<(TcpStream, SocketAddr)> {
    l.set_nonblocking(true).unwrap();
    for _ in 0..500 {
        match l.accept() {
            Ok((s, from)) => {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                return Some((s, from));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
    None
}

/// Listeners on 127.0.0.1 and 127.0.0.2 with the same port (a request names
/// one port; the two answers differ only in the address).
fn listener_pair() -> (TcpListener, TcpListener, u16) {
    for _ in 0..50 {
        let a = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = a.local_addr().unwrap().port();
        if let Ok(b) = TcpListener::bind(("127.0.0.2", port)) {
            return (a, b, port);
        }
    }
    panic!("no port free on both 127.0.0.1 and 127.0.0.2");
}

fn broker(
    resolver: &Arc<Rebinding>,
    permit: &[&str],
) -> (Broker, Arc<Mutex<Vec<ConnectionRecord>>>) {
    let resolver: Arc<dyn Resolve> = Arc::clone(resolver) as _;
    let (b, records) = session_broker(&[NAME], &[], permit, Some(resolver));
    // A lenient broker would try the documentation address first; do not
    // wait 10 s for it.
    (b.with_connect_timeout(Duration::from_millis(500)), records)
}

/// Public answer first, loopback on the next call. The loopback listener
/// on the requested port is the trap: a broker that resolved again before
/// connecting (or connected by name) would reach it and succeed there.
/// The same attack entirely on loopback, so the connect really happens and
/// bytes really flow: the first answer (127.0.0.1, which the user
/// permitted) is vetted, the second (127.0.0.2, not permitted) is the trap.
/// Through the HTTP `CONNECT` front end, so the proxy adds no lookup of its
/// own.
#[test]
fn tunnel_goes_to_the_vetted_address_not_the_rebound_one() {
    let (vetted, trap, port) = listener_pair();
    let resolver = Rebinding::new(&[&["127.0.0.1"], &["127.0.0.2"]]);
    let (b, records) = broker(&resolver, &["127.0.0.1"]);
    let proxy = ProxyServer::bind(Arc::new(b)).unwrap();

    let connect = |expect_head: &str| {
        let mut c = TcpStream::connect(proxy.local_addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            c,
            "CONNECT {NAME}:{port} HTTP/1.1\r\nHost: {NAME}:{port}\r\n\r\n"
        )
        .unwrap();
        let mut head = vec![0u8; expect_head.len()];
        c.read_exact(&mut head).unwrap();
        assert_eq!(String::from_utf8_lossy(&head), expect_head);
        c
    };

    let mut client = connect("HTTP/1.1 200 Connection established\r\n\r\n");
    client.write_all(b"ping").unwrap();
    let (mut up, from) = accept_within_5s(&vetted).expect("the vetted address got no connection");
    let mut got = [0u8; 4];
    up.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"ping");
    assert!(from.ip().is_loopback());
    assert!(!has_pending(&trap), "the rebound address was connected to");
    assert_eq!(resolver.asked(), [NAME], "resolved once per connection");
    drop(up);
    drop(client);

    // The next connection gets the rebound answer, and it is refused.
    let mut refused = connect("HTTP/1.1 403 Forbidden by aq: ");
    let mut rest = String::new();
    refused.read_to_string(&mut rest).unwrap();
    assert!(
        rest.contains("X-Aq-Rule: net-refused-address\r\n"),
        "{rest}"
    );
    assert!(
        rest.ends_with(&format!(
            "\r\n\r\naq: {NAME} resolves to 127.0.0.2, a loopback address: refused; \
             to reach it permit `127.0.0.2` (or its network) or pin the name \
             [net-refused-address]\n"
        )),
        "{rest}"
    );
    assert_eq!(resolver.asked(), [NAME, NAME]);
    assert!(!has_pending(&trap));

    // Records: the tunnel's (when it ends) names the vetted address.
    let mut recs = Vec::new();
    for _ in 0..200 {
        recs = records.lock().unwrap().clone();
        if recs.len() >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    recs.sort_by_key(|r| r.decision.as_str());
    let summary: Vec<_> = recs
        .iter()
        .map(|r| (r.decision, r.rule.as_str(), r.pinned_addr))
        .collect();
    assert_eq!(
        summary,
        [
            (Decision::Allowed, NAME, Some(sa("127.0.0.1", port))),
            (
                Decision::Denied,
                "net-refused-address",
                Some(sa("127.0.0.2", port))
            ),
        ]
    );
}

/// An answer that mixes public and non-public addresses is refused whole,
/// in any order, and nothing is connected to: not the refused address and
/// not the public one next to it.
#[test]
fn mixed_answer_is_refused_whole() {
    let trap = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = trap.local_addr().unwrap().port();
    for (answer, bad, class) in [
        (&["203.0.113.7", "127.0.0.1"][..], "127.0.0.1", "loopback"),
        (&["203.0.113.7", "10.0.0.1"][..], "10.0.0.1", "private"),
        (&["127.0.0.1", "203.0.113.7"][..], "127.0.0.1", "loopback"),
        (
            &["203.0.113.7", "198.51.100.7", "127.0.0.1"][..],
            "127.0.0.1",
            "loopback",
        ),
    ] {
        let resolver = Rebinding::new(&[answer]);
        let (b, records) = broker(&resolver, &[]);
        let e = b.open(NAME, port, FrontEnd::Direct).unwrap_err();
        assert_eq!(
            e.refusal.rule,
            RefusalRule::RefusedAddress,
            "{answer:?}: {e}"
        );
        assert_eq!(e.addr, Some(sa(bad, port)), "{answer:?}");
        let reason = format!(
            "{NAME} resolves to {bad}, a {class} address: refused; \
             to reach it permit `{bad}` (or its network) or pin the name"
        );
        assert_eq!(e.refusal.reason, reason, "{answer:?}");
        assert_eq!(resolver.asked(), [NAME], "{answer:?}");
        assert!(!has_pending(&trap), "{answer:?}: connected to loopback");
        let recs = records.lock().unwrap();
        assert_eq!(recs.len(), 1, "{answer:?}: {recs:?}");
        assert_eq!(
            (
                recs[0].decision,
                recs[0].rule.as_str(),
                recs[0].reason.as_deref()
            ),
            (
                Decision::Denied,
                "net-refused-address",
                Some(reason.as_str())
            ),
            "{answer:?}"
        );
    }
}
