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

/// A loopback listener in the sandbox's own network namespace, served from
/// outside by the caller: the one way out a relay gives, with no socket path.
#[test]
fn a_loopback_listener_is_served_by_the_caller_from_outside() {
    use std::io::Write;
    let s = Scratch::new();
    let mut spec = s.spec();
    spec.loopback_listeners = vec![18431];
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    let facts = aq_sandbox::HostFacts::probe(&spec);
    let plan = match aq_sandbox::plan(&spec, &facts) {
        Ok(p) => p,
        Err(e) => {
            super::util::skip(&format!("no plan: {e}"));
            return;
        }
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let sink: aq_sandbox::ListenerSink = Box::new(move |fds| {
        let listener = std::net::TcpListener::from(fds.into_iter().next().unwrap());
        // The caller's side: accept in the host's namespace and answer.
        if let Ok((mut conn, _)) = listener.accept() {
            let _ = conn.write_all(b"hello from outside\n");
            let _ = tx.send(());
        }
    });
    let argv: Vec<std::ffi::OsString> = [
        "/bin/bash",
        "-c",
        "exec 3<>/dev/tcp/127.0.0.1/18431 && read -r line <&3 && [ \"$line\" = 'hello from outside' ]",
    ]
    .iter()
    .map(Into::into)
    .collect();
    match aq_sandbox::apply_with(&plan, &spec.env, &argv, None, Some(sink)) {
        Ok(status) => assert!(status.success(), "{status:?}"),
        Err(e) if super::util::missing_feature(&e) => super::util::skip(&e.to_string()),
        Err(e) => panic!("{e}"),
    }
    assert!(rx.try_recv().is_ok(), "the caller served no connection");
}

#[test]
fn loopback_listeners_need_the_network_off() {
    let s = Scratch::new();
    let mut spec = s.spec();
    spec.network = NetworkMode::Host;
    spec.loopback_listeners = vec![18432];
    let facts = aq_sandbox::HostFacts::probe(&spec);
    assert_eq!(
        aq_sandbox::plan(&spec, &facts).unwrap_err(),
        aq_sandbox::PlanError::ListenersNeedNetworkOff
    );
}
