//! Network namespace: with the network off, the host's loopback is out of
//! reach while the sandbox's own loopback works.

use aq_sandbox::NetworkMode;

use super::util::{Outcome, Scratch, run_probe};

#[test]
fn network_off_blocks_a_host_loopback_listener() {
    let s = Scratch::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let Some(got) = run_probe(&s.spec(), &format!("connect:{addr}")) else {
        return;
    };
    // Loopback is up (else ENETUNREACH) but nothing listens in this namespace.
    assert_eq!(got, Outcome::Errno(libc::ECONNREFUSED));
}

#[test]
fn network_off_keeps_the_sandbox_loopback() {
    let s = Scratch::new();
    let Some(got) = run_probe(&s.spec(), "own-loopback") else {
        return;
    };
    assert_eq!(got, Outcome::Done);
}

#[test]
fn network_host_reaches_the_host_loopback_listener() {
    let s = Scratch::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut spec = s.spec();
    spec.network = NetworkMode::Host;
    let Some(got) = run_probe(&spec, &format!("connect:{addr}")) else {
        return;
    };
    assert_eq!(got, Outcome::Done);
}
