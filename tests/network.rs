//! The session's network, end to end: off, or only allowlisted names through
//! the broker, against real servers this test starts on the host's
//! loopback (names under example.invalid are pinned to them).

use std::io::{Read, Write};
use std::net::TcpListener;

use crate::util::{Env, echo_server};

/// An HTTP server on the host's 127.0.0.1 answering `hello` to each request.
pub(crate) fn hello_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf);
                let _ = conn.write_all(
                    b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                );
            });
        }
    });
    port
}

/// Fetching is what these tests do; the firewall allows it here.
const ALLOW_FETCH: &str = "\"net-fetch\" = \"allow\"\n";

#[test]
fn only_allowlisted_names_are_reachable_through_the_broker() {
    let port = hello_server();
    let env = Env::with_policy("", ALLOW_FETCH);
    env.write(
        &env.work().join("n.sh"),
        &format!(
            "echo \"proxy:$(curl -s http://allowed.example.invalid:{port}/)\"\n\
             echo \"socks:$(curl -s --socks5-hostname 127.0.0.1:3128 http://allowed.example.invalid:{port}/)\"\n\
             curl -s -o /dev/null -w 'other:%{{http_code}}\\n' http://other.example.invalid:{port}/\n\
             curl -s -o /dev/null -w 'literal:%{{http_code}}\\n' --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:{port}/\n\
             curl -s -o /dev/null -w 'direct:%{{http_code}}\\n' --noproxy '*' http://127.0.0.1:{port}/\n\
             exit 0\n"
        ),
    );
    let out = env.aq(&[
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "allowed.example.invalid:127.0.0.1",
        "--",
        "sh",
        "n.sh",
    ]);
    out.code(0)
        .stdout_has("proxy:hello")
        .stdout_has("socks:hello")
        .stdout_has("other:403")
        .stdout_has("literal:403")
        .stdout_has("direct:000");
    let session = env.only_session();
    let conns = session.events_of("network_connection");
    assert!(
        conns
            .iter()
            .any(|c| c["host"] == "allowed.example.invalid" && c["decision"] == "allowed"),
        "{}",
        session.log_text()
    );
    assert!(
        conns.iter().any(|c| c["host"] == "other.example.invalid"
            && c["decision"] == "denied"
            && c["rule"] == "net-not-allowlisted"),
        "{}",
        session.log_text()
    );
    let report = env.aq(&["report", &session.id()]);
    report.code(0).stdout_has("## Network destinations");
}

#[test]
fn a_name_resolving_to_loopback_is_refused_unless_permitted() {
    let port = hello_server();
    let env = Env::with_policy("", ALLOW_FETCH);
    env.write(
        &env.work().join("n.sh"),
        &format!(
            "curl -s -o /dev/null -w 'localhost:%{{http_code}}\\n' --noproxy '' -x http://127.0.0.1:3128 http://localhost:{port}/\n"
        ),
    );
    // localhost is allowed by name, but it resolves to a loopback address.
    // (NO_PROXY keeps localhost on the sandbox's own loopback; here the
    // proxy is forced, as a name that resolves to loopback would go.)
    env.aq(&["run", "--net", "allow:localhost", "--", "sh", "n.sh"])
        .code(0)
        .stdout_has("localhost:403");
    // Permitted explicitly (a local registry): reachable.
    let env2 = Env::with_policy(
        "",
        &format!("{ALLOW_FETCH}\n[network]\npermit = [\"127.0.0.0/8\"]\n"),
    );
    env2.write(
        &env2.work().join("n.sh"),
        &format!(
            "curl -s -o /dev/null -w 'localhost:%{{http_code}}\\n' --noproxy '' -x http://127.0.0.1:3128 http://localhost:{port}/\n"
        ),
    );
    env2.aq(&["run", "--net", "allow:localhost", "--", "sh", "n.sh"])
        .code(0)
        .stdout_has("localhost:200");
}

#[test]
fn with_the_network_off_nothing_leaves() {
    let port = hello_server();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(std::time::Duration::from_millis(300)))
        .unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let env = Env::with_policy("", ALLOW_FETCH);
    env.write(
        &env.work().join("n.sh"),
        &format!(
            "curl -s -o /dev/null -w 'tcp:%{{http_code}}\\n' --noproxy '*' http://127.0.0.1:{port}/\n\
             if exec 3<>/dev/tcp/127.0.0.1/{port}; then echo raw:connected; else echo raw:refused; fi\n\
             echo ping > /dev/udp/127.0.0.1/{udp_port}; echo udp:sent\n\
             if getent hosts example.com >/dev/null; then echo dns:resolved; else echo dns:failed; fi\n"
        ),
    );
    let out = env.aq(&["run", "--net", "off", "--", "bash", "n.sh"]);
    out.code(0)
        .stdout_has("tcp:000")
        .stdout_has("raw:refused")
        .stdout_has("dns:failed")
        .stdout_lacks("connected")
        .stdout_lacks("resolved");
    // The datagram went to the sandbox's own loopback, not the host's.
    let mut buf = [0u8; 16];
    assert!(
        udp.recv(&mut buf).is_err(),
        "a UDP datagram reached the host"
    );
}

#[test]
fn bad_network_flags_are_usage_errors() {
    let env = Env::with_policy("", "");
    env.aq(&["run", "--net", "on", "--", "true"])
        .code(2)
        .stderr_has("--net off");
    env.aq(&["run", "--net", "allow:", "--", "true"]).code(2);
    env.aq(&[
        "run",
        "--profile",
        "shims-only",
        "--net",
        "allow:x.example.invalid",
        "--",
        "true",
    ])
    .code(2)
    .stderr_has("needs the kernel sandbox");
}

/// An echo server on the host's loopback, standing in for an SSH server.

#[test]
fn the_ssh_proxy_command_reaches_an_allowlisted_host_and_port_only() {
    // Two listening ports on loopback: the listed one, and another that the
    // listed name also resolves to but the allowlist does not name.
    let port = echo_server();
    let other_port = echo_server();
    let env = Env::with_policy("", "");
    let aq = crate::util::aq_exe();
    env.write(
        &env.work().join("n.sh"),
        &format!(
            "echo \"git:$GIT_SSH_COMMAND\"\n\
             echo ping | {aq} __connect git.example.invalid {port}; echo \"tunnel exit $?\"\n\
             echo ping | {aq} __connect other.example.invalid {port}; echo \"refused exit $?\"\n\
             echo ping | {aq} __connect git.example.invalid {other_port}; echo \"other port exit $?\"\n\
             echo ping | {aq} __connect 127.0.0.1 {port}; echo \"literal exit $?\"\n\
             smuggle=$(printf 'other.example.invalid:{port} HTTP/1.1\\r\\nHost: git.example.invalid:{port}\\r\\n\\r\\nCONNECT git.example.invalid')\n\
             echo ping | {aq} __connect \"$smuggle\" {port}; echo \"smuggled exit $?\"\n"
        ),
    );
    let out = env.aq(&[
        "run",
        "--net",
        &format!("allow:git.example.invalid:{port}"),
        "--resolve",
        "git.example.invalid:127.0.0.1",
        "--",
        "sh",
        "n.sh",
    ]);
    out.code(0)
        .stdout_has("__connect %h %p")
        .stdout_has("ping\ntunnel exit 0")
        .stdout_has("refused exit 1")
        .stdout_has("other port exit 1")
        .stdout_has("literal exit 1")
        .stdout_has("smuggled exit 1")
        .stderr_has("other.example.invalid");
    // The listed tunnel is the only one that carried anything.
    assert_eq!(out.stdout.matches("ping").count(), 1, "{}", out.dump());
}
