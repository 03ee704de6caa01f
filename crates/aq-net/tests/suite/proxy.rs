//! The in-process proxy: HTTP (plain and CONNECT) and SOCKS5, allowed and
//! refused.

use std::net::IpAddr;
use std::sync::Arc;

use aq_net::{Decision, FixedResolver, FrontEnd};

use super::util::{Session, Upstream, curl, have_curl, socks_name, socks5_connect};

const ALLOWED: &str = "allowed.example.invalid";
const PIN: &str = "allowed.example.invalid=127.0.0.1";
// Pinned to the same server but not allowlisted: only the list refuses it.
const OTHER_PIN: &str = "other.example.invalid=127.0.0.1";

fn allowed_session() -> Session {
    Session::start(&[ALLOWED], &[PIN, OTHER_PIN], &[])
}

#[test]
fn allowlisted_pinned_name_is_reachable_through_http_proxy_variable() {
    if !have_curl("allowlisted_pinned_name_is_reachable_through_http_proxy_variable") {
        return;
    }
    let up = Upstream::start();
    let s = allowed_session();
    let proxy = format!("http://{}", s.addr());
    let url = format!("http://{ALLOWED}:{}/hello?x=1", up.port);
    let run = curl(&[&url], &[("http_proxy", &proxy)]);
    assert_eq!(
        run.success(),
        "hello from upstream: GET /hello?x=1 HTTP/1.1\n"
    );
    let recs = s.records(1);
    assert_eq!(recs.len(), 1, "{recs:?}");
    let r = &recs[0];
    assert_eq!(
        (
            r.host.as_str(),
            r.port,
            r.decision,
            r.rule.as_str(),
            r.front_end
        ),
        (
            ALLOWED,
            up.port,
            Decision::Allowed,
            ALLOWED,
            FrontEnd::HttpPlain
        )
    );
    assert_eq!(r.pinned_addr, Some(([127, 0, 0, 1], up.port).into()));
    assert!(r.bytes_up > 0 && r.bytes_down > 0, "{r}");
    assert_eq!(r.reason, None);
}

#[test]
fn allowlisted_pinned_name_is_reachable_through_connect_tunnel() {
    if !have_curl("allowlisted_pinned_name_is_reachable_through_connect_tunnel") {
        return;
    }
    let up = Upstream::start();
    let s = allowed_session();
    let proxy = format!("http://{}", s.addr());
    let url = format!("http://{ALLOWED}:{}/t", up.port);
    // --proxytunnel: CONNECT, as for https:// through HTTPS_PROXY.
    let run = curl(&["--proxytunnel", &url], &[("http_proxy", &proxy)]);
    assert_eq!(run.success(), "hello from upstream: GET /t HTTP/1.1\n");
    let r = &s.records(1)[0];
    assert_eq!(
        (r.decision, r.front_end),
        (Decision::Allowed, FrontEnd::HttpConnect)
    );
}

#[test]
fn allowlisted_pinned_name_is_reachable_through_socks5_remote_names() {
    if !have_curl("allowlisted_pinned_name_is_reachable_through_socks5_remote_names") {
        return;
    }
    let up = Upstream::start();
    let s = allowed_session();
    let url = format!("http://{ALLOWED}:{}/s", up.port);
    let run = curl(&["--socks5-hostname", &s.addr(), &url], &[]);
    assert_eq!(run.success(), "hello from upstream: GET /s HTTP/1.1\n");
    // ALL_PROXY with socks5h:// is the same thing through a variable.
    let all = format!("socks5h://{}", s.addr());
    let run = curl(&[&url], &[("ALL_PROXY", &all)]);
    assert_eq!(run.success(), "hello from upstream: GET /s HTTP/1.1\n");
    let recs = s.records(2);
    assert!(
        recs.iter()
            .all(|r| r.front_end == FrontEnd::Socks5 && r.decision == Decision::Allowed),
        "{recs:?}"
    );
}

#[test]
fn name_not_on_the_list_is_refused_with_403_and_the_reason() {
    if !have_curl("name_not_on_the_list_is_refused_with_403_and_the_reason") {
        return;
    }
    let up = Upstream::start();
    let s = allowed_session();
    let proxy = format!("http://{}", s.addr());
    let url = format!("http://other.example.invalid:{}/", up.port);
    let run = curl(&["-i", &url], &[("http_proxy", &proxy)]);
    let out = run.success();
    let refusal = format!(
        "other.example.invalid:{p} is not on this session's network allowlist; the user can \
         allow it with `aq allow --net other.example.invalid:{p}` [net-not-allowlisted]",
        p = up.port
    );
    // The status line carries the refusal too: clients that show only the
    // status of a failed CONNECT (Python's http.client) show it.
    assert!(
        out.starts_with(&format!("HTTP/1.1 403 Forbidden by aq: {refusal}\r\n")),
        "{run}"
    );
    assert!(out.contains("X-Aq-Rule: net-not-allowlisted\r\n"), "{run}");
    assert!(out.ends_with(&format!("aq: {refusal}\n")), "{run}");
    // CONNECT: curl reports the proxy's answer.
    let run = curl(&["--proxytunnel", &url], &[("http_proxy", &proxy)]);
    assert_eq!(run.code(), Some(56), "{run}");
    assert!(
        run.stderr().contains("CONNECT tunnel failed, response 403"),
        "{run}"
    );
    // SOCKS5: reply 2, "connection not allowed by ruleset".
    let run = curl(&["--socks5-hostname", &s.addr(), &url], &[]);
    assert_eq!(run.code(), Some(97), "{run}");
    assert_eq!(
        socks5_connect(&s.addr(), &socks_name("other.example.invalid"), up.port),
        2
    );
    assert_eq!(up.hits(), 0, "the refused requests reached the server");
    let recs = s.records(4);
    assert_eq!(recs.len(), 4, "{recs:?}");
    for r in &recs {
        assert_eq!(
            (r.host.as_str(), r.decision, r.rule.as_str(), r.pinned_addr),
            (
                "other.example.invalid",
                Decision::Denied,
                "net-not-allowlisted",
                None
            ),
            "{r}"
        );
    }
}

#[test]
fn ip_literal_is_refused() {
    if !have_curl("ip_literal_is_refused") {
        return;
    }
    let up = Upstream::start();
    let s = allowed_session();
    let proxy = format!("http://{}", s.addr());
    let url = format!("http://127.0.0.1:{}/", up.port);
    let run = curl(
        &["-w", "%{http_code}", "-o", "/dev/null", &url],
        &[("http_proxy", &proxy)],
    );
    assert_eq!(run.success(), "403", "{run}");
    let run = curl(&[&url], &[("http_proxy", &proxy)]);
    assert_eq!(
        run.success(),
        format!(
            "aq: IP address 127.0.0.1 (loopback) refused: request a host name, or allow \
             `127.0.0.1:{}` explicitly [net-ip-literal]\n",
            up.port
        )
    );
    // SOCKS5 with an address (curl --socks5 resolves locally and sends one).
    assert_eq!(socks5_connect(&s.addr(), &[1, 127, 0, 0, 1], up.port), 2);
    let mut v6 = vec![4];
    v6.extend_from_slice(&"::1".parse::<std::net::Ipv6Addr>().unwrap().octets());
    assert_eq!(socks5_connect(&s.addr(), &v6, up.port), 2);
    // Other spellings of the same address are addresses too.
    assert_eq!(
        socks5_connect(&s.addr(), &socks_name("2130706433"), up.port),
        2
    );
    assert_eq!(socks5_connect(&s.addr(), &socks_name("0x7f.1"), up.port), 2);
    assert_eq!(up.hits(), 0);
    let recs = s.records(6);
    assert!(recs.iter().all(|r| r.rule == "net-ip-literal"), "{recs:?}");
}

#[test]
fn name_resolving_to_loopback_is_refused_unless_permitted() {
    if !have_curl("name_resolving_to_loopback_is_refused_unless_permitted") {
        return;
    }
    let up = Upstream::start();
    let url = format!("http://localhost:{}/lo", up.port);
    // localhost is allowlisted but not pinned: the system resolver answers.
    let s = Session::start(&["localhost"], &[], &[]);
    let proxy = format!("http://{}", s.addr());
    let run = curl(&["-i", &url], &[("http_proxy", &proxy)]);
    let out = run.success();
    assert!(out.starts_with("HTTP/1.1 403 Forbidden by aq: "), "{run}");
    assert!(out.contains("aq: localhost resolves to "), "{run}");
    assert!(
        out.contains(", a loopback address: refused; to reach it permit `"),
        "{run}"
    );
    assert!(out.contains("[net-refused-address]"), "{run}");
    assert_eq!(
        socks5_connect(&s.addr(), &socks_name("localhost"), up.port),
        2
    );
    assert_eq!(up.hits(), 0);
    let r = &s.records(1)[0];
    assert_eq!(
        (r.decision, r.rule.as_str()),
        (Decision::Denied, "net-refused-address")
    );
    assert!(r.pinned_addr.is_some_and(|a| a.ip().is_loopback()), "{r}");

    // Permitted: the same request goes through.
    let s = Session::start(&["localhost"], &[], &["127.0.0.0/8", "::1"]);
    let proxy = format!("http://{}", s.addr());
    let run = curl(&[&url], &[("http_proxy", &proxy)]);
    assert_eq!(run.success(), "hello from upstream: GET /lo HTTP/1.1\n");
    let r = &s.records(1)[0];
    assert_eq!(
        (r.decision, r.rule.as_str()),
        (Decision::Allowed, "localhost")
    );
    assert_eq!(r.pinned_addr, Some(([127, 0, 0, 1], up.port).into()));
}

#[test]
fn metadata_address_is_refused() {
    if !have_curl("metadata_address_is_refused") {
        return;
    }
    // A name whose answer includes the metadata address, next to a public
    // one (documentation range): the whole answer is refused, nothing is
    // connected to. The permitted link-local range does not cover it.
    let answer: Vec<IpAddr> = vec![
        "203.0.113.10".parse().unwrap(),
        "169.254.169.254".parse().unwrap(),
    ];
    let resolver = FixedResolver(vec![("meta.example.invalid".into(), answer)]);
    let s = Session::start_with(
        &["meta.example.invalid", "169.254.169.254"],
        &[],
        &["169.254.0.0/16"],
        Some(Arc::new(resolver)),
    );
    let proxy = format!("http://{}", s.addr());
    let run = curl(
        &["-i", "http://meta.example.invalid/latest/meta-data/"],
        &[("http_proxy", &proxy)],
    );
    let out = run.success();
    assert!(out.starts_with("HTTP/1.1 403 Forbidden by aq: "), "{run}");
    assert!(
        out.ends_with(
            "aq: meta.example.invalid resolves to 169.254.169.254, a cloud metadata address: \
             refused; to reach it permit `169.254.169.254` by itself [net-refused-address]\n"
        ),
        "{run}"
    );
    // The literal, even allowlisted, is still a metadata address.
    let run = curl(
        &["-i", "http://169.254.169.254/latest/"],
        &[("http_proxy", &proxy)],
    );
    assert!(
        run.success().contains("a cloud metadata address: refused"),
        "{run}"
    );
    assert_eq!(socks5_connect(&s.addr(), &[1, 169, 254, 169, 254], 80), 2);
    let mut v6 = vec![4];
    v6.extend_from_slice(
        &"fd00:ec2::254"
            .parse::<std::net::Ipv6Addr>()
            .unwrap()
            .octets(),
    );
    assert_eq!(socks5_connect(&s.addr(), &v6, 80), 2);
    let recs = s.records(4);
    assert_eq!(recs.len(), 4, "{recs:?}");
    assert!(
        recs.iter().all(|r| r.decision == Decision::Denied),
        "{recs:?}"
    );
}

#[test]
fn malformed_and_unsupported_requests_get_clear_errors() {
    if !have_curl("malformed_and_unsupported_requests_get_clear_errors") {
        return;
    }
    let s = allowed_session();
    // Talking to the proxy as if it were the server.
    let run = curl(&["-i", &format!("http://{}/", s.addr())], &[]);
    let out = run.success();
    assert!(out.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{run}");
    assert!(
        out.contains("this is a proxy: send an absolute URI"),
        "{run}"
    );
    // An allowed name that does not answer: 502, not 403.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let proxy = format!("http://{}", s.addr());
    let run = curl(
        &["-i", &format!("http://{ALLOWED}:{port}/")],
        &[("http_proxy", &proxy)],
    );
    let out = run.success();
    assert!(out.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{run}");
    assert!(out.contains("[net-connect-failed]"), "{run}");
    assert_eq!(socks5_connect(&s.addr(), &socks_name(ALLOWED), port), 5);
}

/// An unlisted name is put to the asker: refused when it says no (the
/// reason added), let through once, or for the rest of the session (asked
/// once). IP literals are never asked about.
#[test]
fn unlisted_names_are_asked_about_and_answers_hold() {
    if !have_curl("unlisted_names_are_asked_about_and_answers_hold") {
        return;
    }
    use aq_net::{UnlistedAnswer, UnlistedRequest};
    use std::sync::Mutex;
    let up = Upstream::start();
    let asked: Arc<Mutex<Vec<UnlistedRequest>>> = Arc::default();
    let seen = asked.clone();
    let (broker, records) = super::util::session_broker(
        &[ALLOWED],
        &[PIN, OTHER_PIN, "third.example.invalid=127.0.0.1"],
        &[],
        None,
    );
    let broker = broker.with_unlisted(Arc::new(move |r: &UnlistedRequest| {
        seen.lock().unwrap().push(r.clone());
        match r.host.as_str() {
            "other.example.invalid" => UnlistedAnswer::Session("asked: for the session".into()),
            "third.example.invalid" => UnlistedAnswer::Once("asked: once".into()),
            _ => UnlistedAnswer::Refuse("denied by the test".into()),
        }
    }));
    let proxy = aq_net::ProxyServer::bind(Arc::new(broker)).unwrap();
    let via = format!("http://{}", proxy.local_addr());
    let get = |host: &str| {
        curl(
            &[
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--proxytunnel",
                &format!("http://{host}:{}/", up.port),
            ],
            &[("http_proxy", &via)],
        )
    };
    for _ in 0..2 {
        assert_eq!(get("other.example.invalid").stdout(), "200");
        assert_eq!(get("third.example.invalid").stdout(), "200");
    }
    let refused = get("denied.example.invalid");
    assert_eq!(refused.stdout(), "000", "{refused}");
    let hosts: Vec<String> = asked
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.host.clone())
        .collect();
    assert_eq!(
        hosts,
        [
            "other.example.invalid",
            "third.example.invalid",
            "third.example.invalid",
            "denied.example.invalid"
        ],
        "a session answer is asked once; a once answer every time"
    );
    assert!(
        asked
            .lock()
            .unwrap()
            .iter()
            .all(|r| r.client.is_some() && r.port == up.port)
    );
    // An IP literal is refused unasked.
    let run = get("127.0.0.1");
    assert_eq!(run.stdout(), "000", "{run}");
    assert_eq!(asked.lock().unwrap().len(), 4);
    let recs = records.lock().unwrap().clone();
    let denied = recs
        .iter()
        .find(|r| r.host == "denied.example.invalid")
        .expect("a record");
    assert_eq!(denied.decision, Decision::Denied);
    assert!(
        denied
            .reason
            .as_deref()
            .unwrap_or("")
            .ends_with("(denied by the test)"),
        "{denied}"
    );
    assert!(
        recs.iter()
            .any(|r| r.host == "other.example.invalid" && r.rule == "asked: for the session")
    );
    assert_eq!(
        up.hits(),
        4,
        "each allowed request reached the server, no other"
    );
}

/// A plain http:// request reaches the host the broker judged and nothing
/// else: the client's own `Host` (another virtual host on the same
/// address) is replaced by the URI's, a request pipelined behind the first
/// is never sent, and a chunked body is refused.
#[test]
fn a_plain_request_goes_to_the_judged_host_only_and_alone() {
    use std::io::{Read, Write};
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    let seen: Arc<std::sync::Mutex<Vec<u8>>> = Arc::default();
    let kept = seen.clone();
    std::thread::spawn(move || {
        for c in server.incoming() {
            let Ok(mut c) = c else { continue };
            c.set_read_timeout(Some(std::time::Duration::from_millis(500)))
                .unwrap();
            let mut buf = [0u8; 4096];
            loop {
                match c.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => kept.lock().unwrap().extend_from_slice(&buf[..n]),
                }
            }
            let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    let s = allowed_session();
    let mut c = std::net::TcpStream::connect(s.addr()).unwrap();
    write!(
        c,
        "POST http://{ALLOWED}:{port}/a HTTP/1.1\r\nHost: secret-vhost.example.invalid\r\nContent-Length: 3\r\n\r\nabc\
         GET /second HTTP/1.1\r\nHost: secret-vhost.example.invalid\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    c.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let _ = c.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    let got = String::from_utf8_lossy(&seen.lock().unwrap()).into_owned();
    assert!(got.starts_with("POST /a HTTP/1.1\r\n"), "{got}");
    assert!(
        got.contains(&format!("Host: {ALLOWED}:{port}\r\n")),
        "{got}"
    );
    assert!(!got.contains("secret-vhost"), "{got}");
    assert!(
        got.ends_with("\r\n\r\nabc"),
        "only the body after the head: {got}"
    );
    // Chunked: refused with 400.
    let mut c = std::net::TcpStream::connect(s.addr()).unwrap();
    write!(
        c,
        "POST http://{ALLOWED}:{port}/b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = c.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request"), "{answer}");
}
