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
pub(crate) const ALLOW_FETCH: &str = "\"net-fetch\" = \"allow\"\n";

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

/// With nobody to answer, a host the allowlist does not name is refused at
/// once, and each client shows the process why and the exact command that
/// allows it: curl and git through their own standard error (where aq
/// writes the refusal: a pipe here, so the line is seen with the prefix
/// only that pipe adds), Python in the status line of the refused CONNECT.
#[test]
fn an_unlisted_host_is_refused_at_once_and_the_process_is_told_why() {
    let port = hello_server();
    let env = Env::with_policy(
        "wait_for_approver = false",
        &format!("{ALLOW_FETCH}\"interp-network\" = \"allow\"\n"),
    );
    env.write(
        &env.work().join("n.sh"),
        &format!(
            "curl -sS https://other.example.invalid:{port}/ 2>&1 | sed 's/^/curl-said: /'\n\
             git ls-remote https://other.example.invalid:{port}/r.git 2>&1 | sed 's/^/git-said: /'\n\
             python3 -c \"import urllib.request as u; u.urlopen('https://other.example.invalid:{port}/')\" 2>&1 | tail -1 | sed 's/^/python-said: /'\n\
             echo \"allowed:$(curl -s http://allowed.example.invalid:{port}/ 2>&1)\"\n\
             python3 sock.py\n\
             exit 0\n"
        ),
    );
    // A child whose standard error is a socket, as Node's child_process
    // gives it (libuv's stdio are socket pairs).
    env.write(
        &env.work().join("sock.py"),
        &format!(
            "import socket, subprocess\n\
             a, b = socket.socketpair()\n\
             p = subprocess.Popen(['curl', '-s', 'http://other.example.invalid:{port}/', '-o', '/dev/null'], stderr=b)\n\
             b.close(); p.wait(); a.settimeout(5)\n\
             print('socket-said:', a.recv(4096).decode().strip())\n"
        ),
    );
    let out = env.aq(&[
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "allowed.example.invalid:127.0.0.1",
        "--resolve",
        "other.example.invalid:127.0.0.1",
        "--",
        "sh",
        "n.sh",
    ]);
    let told = format!(
        "aq: network: other.example.invalid:{port} refused [net-not-allowlisted]: \
         other.example.invalid:{port} is not on this session's network allowlist; \
         the user can allow it with `aq allow --net other.example.invalid:{port}`"
    );
    out.code(0)
        .stdout_has(&format!("curl-said: {told}"))
        .stdout_has("curl-said: curl: (56) CONNECT tunnel failed, response 403")
        .stdout_has(&format!("git-said: {told}"))
        .stdout_has(&format!(
            "python-said: urllib.error.URLError: <urlopen error Tunnel connection failed: \
             403 Forbidden by aq: other.example.invalid:{port} is not on this session's network allowlist"
        ))
        .stdout_has("allowed:hello")
        .stdout_has(&format!("socket-said: {told}"));
    // Refused at once: no ask was filed, none waited.
    let session = env.only_session();
    assert!(
        session.shim_approvals().is_empty(),
        "{}",
        session.log_text()
    );
    let denied = session
        .events_of("network_connection")
        .into_iter()
        .filter(|c| c["host"] == "other.example.invalid" && c["decision"] == "denied")
        .count();
    assert_eq!(denied, 4, "{}", session.log_text());
}

/// Someone at another terminal answers a network ask: the connection
/// waits, then goes through; "for the session" holds for the next
/// connection to the same host:port (asked once); a denied host gets the
/// refusal with who denied it.
#[test]
fn a_network_ask_answered_from_another_terminal_lets_the_connection_through() {
    let port = hello_server();
    let env = Env::with_policy("approval_timeout_secs = 30", ALLOW_FETCH);
    env.write(
        &env.work().join("n.sh"),
        &format!(
            "echo \"first:$(curl -s http://other.example.invalid:{port}/)\"\n\
             echo \"again:$(curl -s http://other.example.invalid:{port}/)\"\n\
             curl -s -o /dev/null -w 'third:%{{http_code}}\\n' http://third.example.invalid:{port}/\n\
             exit 0\n"
        ),
    );
    let mut run = env.spawn(&[
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "other.example.invalid:127.0.0.1",
        "--resolve",
        "third.example.invalid:127.0.0.1",
        "--",
        "sh",
        "n.sh",
    ]);
    let first = format!("curl -s http://other.example.invalid:{port}/");
    let session = crate::approve::wait_for_pending(&env, &mut run, &first);
    let Some(approve) = crate::approve::approve_once(&env, "s") else {
        return;
    };
    approve
        .code(0)
        .stdout_has(&format!("connect: other.example.invalid:{port}"))
        .stdout_has(&format!("from:    {first}"))
        .stdout_has("rule:    net-unlisted-host")
        .stdout_has("[a]lways")
        .stdout_has("-> session");
    let third = format!(
        "curl -s -o /dev/null -w third:%{{http_code}}\\n http://third.example.invalid:{port}/"
    );
    crate::approve::wait_for_pending(&env, &mut run, &third);
    crate::approve::approve_once(&env, "d")
        .expect("script ran before")
        .code(0)
        .stdout_has("-> deny");
    let out = run.finish();
    out.code(0)
        .stdout_has("first:hello")
        .stdout_has("again:hello")
        .stdout_has("third:403");
    let answers: Vec<(String, String)> = session
        .events_of("approval")
        .iter()
        .filter(|a| a["argv"][0] == "net")
        .map(|a| {
            (
                a["argv"][1].as_str().unwrap_or("").to_string(),
                a["answer"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        answers,
        [
            (
                format!("other.example.invalid:{port}"),
                "session".to_string()
            ),
            (format!("third.example.invalid:{port}"), "deny".to_string()),
        ],
        "{}",
        session.log_text()
    );
    let conns = session.events_of("network_connection");
    assert!(
        conns.iter().any(|c| c["host"] == "other.example.invalid"
            && c["decision"] == "allowed"
            && c["rule"]
                .as_str()
                .is_some_and(|r| r.starts_with("asked: allowed for the session by aq approve"))),
        "{}",
        session.log_text()
    );
    assert!(
        conns.iter().any(|c| c["host"] == "third.example.invalid"
            && c["decision"] == "denied"
            && c["reason"]
                .as_str()
                .is_some_and(|r| r.contains("(denied by aq approve"))),
        "{}",
        session.log_text()
    );
}

/// "Always" writes the grant `aq allow --net` makes into the user's own
/// policy file; `[network] unlisted = "refuse"` refuses without asking,
/// and a repository's `unlisted = "ask"` cannot undo the user's refuse.
#[test]
fn always_writes_the_users_grant_and_refuse_never_asks() {
    let port = hello_server();
    let env = Env::with_policy("approval_timeout_secs = 30", ALLOW_FETCH);
    env.write(
        &env.work().join("n.sh"),
        &format!("echo \"got:$(curl -s http://other.example.invalid:{port}/)\"\n"),
    );
    let args = [
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "other.example.invalid:127.0.0.1",
        "--",
        "sh",
        "n.sh",
    ];
    let mut run = env.spawn(&args);
    crate::approve::wait_for_pending(
        &env,
        &mut run,
        &format!("curl -s http://other.example.invalid:{port}/"),
    );
    let Some(approve) = crate::approve::approve_once(&env, "a") else {
        return;
    };
    approve.code(0).stdout_has("-> always");
    run.finish().code(0).stdout_has("got:hello");
    let policy = std::fs::read_to_string(env.user_policy()).unwrap();
    assert!(
        policy.contains(&format!("\"other.example.invalid:{port}\"")),
        "{policy}"
    );
    // The grant holds in the next session: no ask.
    let out = env.aq(&args);
    out.code(0).stdout_has("got:hello");

    // Refuse: the user's policy says so, the repository's ask is ignored.
    let env = Env::with_policy(
        "approval_timeout_secs = 30",
        &format!("{ALLOW_FETCH}\n[network]\nunlisted = \"refuse\"\n"),
    );
    env.write(
        &env.work().join("agent-quarantine.toml"),
        "version = 1\n[network]\nunlisted = \"ask\"\n",
    );
    env.write(
        &env.work().join("n.sh"),
        &format!(
            "curl -s -o /dev/null -w 'got:%{{http_code}}\\n' http://other.example.invalid:{port}/\n"
        ),
    );
    let out = env.aq(&args);
    out.code(0)
        .stdout_has("got:403")
        .stderr_has("unlisted hosts stay refused");
    let session = env.sessions().pop().unwrap();
    assert!(session.pending().is_empty());
    assert!(
        session
            .events_of("network_connection")
            .iter()
            .any(|c| c["reason"]
                .as_str()
                .is_some_and(|r| r.contains("[network] unlisted = \"refuse\""))),
        "{}",
        session.log_text()
    );
}

/// The same channel as an unprivileged user: aq finds the refused client's
/// process in the sandbox and writes to its standard error without root.
#[test]
fn an_unprivileged_users_process_is_told_why_its_connection_was_refused() {
    let port = hello_server();
    let (root, aq, uid, gid) = crate::util::user_scratch(
        "aq-net-user-",
        &["work", "home", "state", "config/agent-quarantine"],
    );
    let r = root.path();
    let write = |path: &str, text: &str| {
        std::fs::write(r.join(path), text).unwrap();
        std::os::unix::fs::chown(r.join(path), Some(uid), Some(gid)).unwrap();
    };
    write(
        "config/agent-quarantine/policy.toml",
        &format!("version = 1\n[session]\nwait_for_approver = false\n[rules]\n{ALLOW_FETCH}"),
    );
    write(
        "work/n.sh",
        &format!(
            "curl -sS http://other.example.invalid:{port}/ -o /dev/null -w 'code:%{{http_code}}\\n' 2>&1 | sed 's/^/curl-said: /'\n"
        ),
    );
    let out = crate::util::aq_as_user(
        r,
        &aq,
        (uid, gid),
        "work",
        &[
            "run",
            "--net",
            "allow:allowed.example.invalid",
            "--resolve",
            "other.example.invalid:127.0.0.1",
            "--",
            "sh",
            "n.sh",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains(&format!(
            "curl-said: aq: network: other.example.invalid:{port} refused [net-not-allowlisted]"
        )) && stdout.contains("curl-said: code:403"),
        "as uid {uid}:\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// `[network.http]` and `[network.credentials]` for one host, end to end:
/// curl in the sandbox reaches a real HTTPS server on loopback through the
/// broker, which reads the requests inside TLS. GET under `/v1/` goes with
/// the token the broker adds; POST gets a 403 that names the rule; the
/// token's variable is nowhere in the sandbox (environment, `/proc`), and
/// the client trusts the session CA through the variables aq sets.
#[test]
fn an_http_rule_and_a_credential_kept_outside_hold_for_curl_in_the_sandbox() {
    let up = aq_testkit::tls::TlsUpstream::start(&["api.example.invalid"]);
    let env = Env::with_policy(
        "wait_for_approver = false",
        &format!(
            "{ALLOW_FETCH}\"interp-network\" = \"allow\"\n[network]\nallow = [\"api.example.invalid\"]\n\
             [network.http.\"api.example.invalid\"]\nmethods = [\"GET\", \"HEAD\"]\npaths = [\"/v1/\"]\n\
             [network.credentials.\"api.example.invalid\"]\nheader = \"Authorization\"\nvalue = \"Bearer ${{EXAMPLE_TOKEN}}\"\n"
        ),
    );
    let upstream_ca = env.root().join("upstream-ca.pem");
    std::fs::write(&upstream_ca, &up.ca_pem).unwrap();
    let url = format!("https://api.example.invalid:{}", up.port);
    env.write(
        &env.work().join("n.sh"),
        &format!(
            "curl -sS {url}/v1/items?page=2\n\
             curl -sS -o /dev/null -w 'post:%{{http_code}}\\n' -X POST -d x=1 {url}/v1/items\n\
             curl -sS {url}/admin | head -c 200; echo\n\
             python3 -c \"import urllib.request as u; print('python:', u.urlopen('{url}/v1/py').read().decode().splitlines()[0])\"\n\
             echo \"token-var:${{EXAMPLE_TOKEN:-absent}}\"\n\
             cat /proc/self/environ /proc/$$/environ | tr '\\0' '\\n' | grep -c fake-token-outside || true\n\
             grep -rl fake-token-outside \"$TMPDIR\" 2>/dev/null | wc -l\n"
        ),
    );
    let out = env.aq_with(
        &[
            ("EXAMPLE_TOKEN", "fake-token-outside"),
            ("SSL_CERT_FILE", upstream_ca.to_str().unwrap()),
        ],
        &[
            "run",
            "--resolve",
            "api.example.invalid:127.0.0.1",
            "--",
            "sh",
            "n.sh",
        ],
    );
    out.code(0)
        .stdout_has("saw: GET /v1/items?page=2 HTTP/1.1\nauthorization: Bearer fake-token-outside")
        .stdout_has("post:403")
        .stdout_has("python: saw: GET /v1/py HTTP/1.1")
        .stdout_has("aq: api.example.invalid: GET /admin refused: only paths under /v1/ allowed by the host's HTTP rule [net-http-rule]")
        .stdout_has("token-var:absent\n0\n0\n");
    assert_eq!(up.heads().len(), 2, "{:?}", up.heads());
    let session = env.only_session();
    let conns = session.events_of("network_connection");
    assert!(
        conns.iter().any(|c| c["decision"] == "denied"
            && c["rule"] == "net-http-rule"
            && c["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("POST /v1/items"))),
        "{}",
        session.log_text()
    );
    assert!(
        conns.iter().any(|c| c["decision"] == "allowed"
            && c["reason"] == "GET /v1/items (credential added outside)"),
        "{}",
        session.log_text()
    );
    // The test's own greps name it; nothing else in the log does.
    assert!(
        !session
            .log_text()
            .lines()
            .any(|l| l.contains("fake-token-outside") && !l.contains("\"argv\":[\"grep\"")),
        "{}",
        session
            .log_text()
            .lines()
            .filter(|l| l.contains("fake-token-outside"))
            .collect::<Vec<_>>()
            .join("\n")
    );

    // `aq policy show` lists the rule and the credential as written (the
    // variable's name, never its value).
    let shown = env.aq_with(
        &[("EXAMPLE_TOKEN", "fake-token-outside")],
        &["policy", "show"],
    );
    shown
        .code(0)
        .stdout_has("only GET, HEAD, under /v1/")
        .stdout_has("adds Authorization: Bearer ${EXAMPLE_TOKEN}")
        .stdout_lacks("fake-token-outside");

    // A missing variable stops the session before anything runs.
    let out = env.aq_with(
        &[("SSL_CERT_FILE", upstream_ca.to_str().unwrap())],
        &["run", "--", "true"],
    );
    out.code(125)
        .stderr_has("`${EXAMPLE_TOKEN}` is not set in the environment aq was started in");
}

/// A repository's policy file cannot add a credential or an HTTP rule:
/// both are ignored and reported, and no request is read inside TLS.
#[test]
fn a_repository_cannot_set_a_credential_or_an_http_rule() {
    let env = Env::with_policy("wait_for_approver = false", ALLOW_FETCH);
    env.write(
        &env.work().join("agent-quarantine.toml"),
        "version = 1\n[network]\nallow = [\"api.example.invalid\"]\n\
         [network.http.\"api.example.invalid\"]\nmethods = [\"GET\"]\n\
         [network.credentials.\"collector.example.invalid\"]\nheader = \"Authorization\"\nvalue = \"Bearer ${HOME}\"\n",
    );
    let out = env.aq(&["run", "--net", "allow:api.example.invalid", "--", "true"]);
    out.code(0)
        .stderr_has("[network.http.\"api.example.invalid\"]")
        .stderr_has("HTTP rules come only from the user's own policy")
        .stderr_has("credentials come only from the user's own policy");
    // `aq policy show` lists them as ignored, and nothing else of them.
    let shown = env.aq(&["policy", "show"]);
    shown.code(0);
    let lines: Vec<&str> = shown
        .stdout
        .lines()
        .filter(|l| l.contains("collector.example.invalid"))
        .collect();
    assert!(
        !lines.is_empty()
            && lines
                .iter()
                .all(|l| l.contains("credentials come only from")),
        "{}",
        shown.stdout
    );
}

/// The `github` credential preset, with git: `git ls-remote` over HTTPS
/// in the sandbox reaches a smart-HTTP server (named github.com, pinned to
/// loopback) with the token the broker adds as git's Basic credential;
/// inside, `GH_TOKEN` is only a placeholder and `GITHUB_TOKEN` is absent.
#[test]
fn the_github_preset_lets_git_over_https_authenticate_without_the_token_inside() {
    let up = aq_testkit::tls::TlsUpstream::start(&["github.com"]);
    let env = Env::with_policy(
        "wait_for_approver = false",
        &format!(
            "{ALLOW_FETCH}[network]\nallow = [\"github.com\"]\ncredential_presets = [\"github\"]\n"
        ),
    );
    let upstream_ca = env.root().join("upstream-ca.pem");
    std::fs::write(&upstream_ca, &up.ca_pem).unwrap();
    env.write(
        &env.work().join("g.sh"),
        &format!(
            "git ls-remote https://github.com:{}/acme/app.git 2>&1\n\
             echo \"gh-token:$GH_TOKEN\"\n\
             echo \"github-token:${{GITHUB_TOKEN:-absent}}\"\n",
            up.port
        ),
    );
    let out = env.aq_with(
        &[
            ("GITHUB_TOKEN", "fake-gh-token-outside"),
            ("SSL_CERT_FILE", upstream_ca.to_str().unwrap()),
        ],
        &[
            "run",
            "--resolve",
            "github.com:127.0.0.1",
            "--",
            "sh",
            "g.sh",
        ],
    );
    out.code(0)
        .stdout_has(&format!("{}\tHEAD", aq_testkit::tls::GIT_HEAD))
        .stdout_has("gh-token:aq-placeholder-the-broker-adds-the-real-token")
        .stdout_has("github-token:absent");
    let heads = up.heads();
    let basic = format!(
        "Authorization: Basic {}",
        "eC1hY2Nlc3MtdG9rZW46ZmFrZS1naC10b2tlbi1vdXRzaWRl"
    );
    assert!(
        heads.iter().any(|h| h.contains("/acme/app.git/info/refs")
            && h.to_ascii_lowercase().contains(&basic.to_ascii_lowercase())),
        "{heads:?}"
    );
}

/// A red team (against 3e9d01a): an intercepted request's method, path and bad header lines are
/// recorded as sent; `aq report` printed them raw (ESC and BEL: the
/// terminal's title set, the screen cleared, lines drawn over).
#[test]
fn an_intercepted_requests_bytes_do_not_reach_the_users_terminal() {
    let up = aq_testkit::tls::TlsUpstream::start(&["api.example.invalid"]);
    let env = Env::with_policy(
        "wait_for_approver = false",
        &format!(
            "{ALLOW_FETCH}\"interp-network\" = \"allow\"\n[network]\nallow = [\"api.example.invalid\"]\n\
             [network.http.\"api.example.invalid\"]\nmethods = [\"GET\"]\npaths = [\"/v1/\"]\n"
        ),
    );
    let upstream_ca = env.root().join("upstream-ca.pem");
    std::fs::write(&upstream_ca, &up.ca_pem).unwrap();
    env.write(
        &env.work().join("esc.py"),
        &format!(
            "import os, socket, ssl\n\
             h, p = os.environ['https_proxy'].split('//')[-1].rstrip('/').rsplit(':', 1)\n\
             for req in [b'\\x1b]0;title\\x07\\x1b[2JRED /v1/a HTTP/1.1\\r\\n\\r\\n',\n\
                         b'GET /admin\\x1b[1A\\x1b[2Kfake HTTP/1.1\\r\\n\\r\\n',\n\
                         b'GET /v1/a HTTP/1.1\\r\\nbad\\x1b[31mline\\r\\n\\r\\n']:\n\
             \x20   s = socket.create_connection((h, int(p)))\n\
             \x20   s.sendall(b'CONNECT api.example.invalid:{} HTTP/1.1\\r\\n\\r\\n'); s.recv(39)\n\
             \x20   t = ssl.create_default_context(cafile=os.environ['SSL_CERT_FILE']).wrap_socket(s, server_hostname='api.example.invalid')\n\
             \x20   t.sendall(req); print(t.recv(100)[:12])\n",
            up.port
        ),
    );
    let out = env.aq_with(
        &[("SSL_CERT_FILE", upstream_ca.to_str().unwrap())],
        &[
            "run",
            "--resolve",
            "api.example.invalid:127.0.0.1",
            "--",
            "python3",
            "esc.py",
        ],
    );
    out.code(0)
        .stdout_has("b'HTTP/1.1 403'")
        .stderr_lacks("\x1b")
        .stderr_lacks("\x07");
    let session = env.only_session();
    env.aq(&["report", &session.id()])
        .code(0)
        .stdout_lacks("\x1b")
        .stdout_lacks("\x07");
    assert!(up.heads().is_empty(), "{:?}", up.heads());
}
