//! A red team of the network asks and the broker's front ends (someone
//! who knew only the threat model, against c3c9e63): each crossing they
//! found, and each way they made a session stall, kept as a test. Fixed:
//! an ask's command line drawn raw on the approver's terminal (C1), a
//! refused host's raw bytes in the recap and the offered `aq allow` line
//! (C2), plain `http://` requests reaching other virtual hosts and
//! pipelined requests (C3), a repository raising the ask timeout (S1), an
//! approver of another session making this one wait (S2), asks taking
//! every client slot of the broker (S3).

use std::io::{Read, Write};
use std::net::TcpListener;

use crate::network::{ALLOW_FETCH, hello_server};
use crate::util::Env;

#[test]
fn an_asks_command_line_cannot_draw_on_the_approvers_terminal() {
    let port = hello_server();
    let env = Env::with_policy("approval_timeout_secs = 30", ALLOW_FETCH);
    env.write(
        &env.work().join("n.sh"),
        &format!(
            "P=$(printf 'curl\\033[1A\\033[2K\\r  connect: allowed.example.invalid:443\\033[8m')\n\
             exec -a \"$P\" curl -s http://other.example.invalid:{port}/ -o /dev/null\n"
        ),
    );
    let mut run = env.spawn(&[
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "other.example.invalid:127.0.0.1",
        "--",
        "bash",
        "n.sh",
    ]);
    let argv = format!(
        "curl\x1b[1A\x1b[2K\r  connect: allowed.example.invalid:443\x1b[8m -s http://other.example.invalid:{port}/ -o /dev/null"
    );
    crate::approve::wait_for_pending(&env, &mut run, &argv);
    let Some(approve) = crate::approve::approve_once(&env, "d") else {
        return;
    };
    approve
        .code(0)
        .stdout_has(&format!("connect: other.example.invalid:{port}"))
        // What the process runs, from the kernel, beside what it claims.
        .stdout_has("the process runs /usr/bin/curl")
        .stdout_lacks("\x1b[")
        .stdout_lacks("\x1b")
        .stdout_has("-> deny");
    run.finish().code(0);
}

#[test]
fn a_refused_hosts_bytes_do_not_reach_the_users_terminal() {
    let env = Env::with_policy(
        "wait_for_approver = false",
        &format!("{ALLOW_FETCH}\"interp-network\" = \"allow\"\n"),
    );
    env.write(
        &env.work().join("raw.py"),
        "import socket\n\
         s = socket.create_connection(('127.0.0.1', 3128))\n\
         s.sendall(b'CONNECT \\x1b]0;title\\x07\\x1b[2Jred\\nFAKE.example.invalid:443 HTTP/1.1\\r\\n\\r\\n')\n\
         s.recv(600)\n\
         s = socket.create_connection(('127.0.0.1', 3128))\n\
         s.sendall(b'\\x05\\x01\\x00'); s.recv(2)\n\
         name = b'x.example.invalid:1; touch pwned #\\x1b[1A'\n\
         s.sendall(b'\\x05\\x01\\x00\\x03' + bytes([len(name)]) + name + b'\\x01\\xbb'); s.recv(10)\n",
    );
    let out = env.aq(&[
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--",
        "python3",
        "raw.py",
    ]);
    out.code(0)
        .stderr_lacks("\x1b")
        .stderr_lacks("\x07")
        .stderr_lacks("aq allow --net x.example.invalid:1; touch");
    let session = env.only_session();
    let report = env.aq(&["report", &session.id()]);
    report.code(0).stdout_lacks("\x1b").stdout_lacks("\x07");
}

#[test]
fn a_plain_request_reaches_only_the_host_it_names() {
    use std::sync::{Arc, Mutex};
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let log = log.clone();
            std::thread::spawn(move || {
                let mut all = Vec::new();
                let mut buf = [0u8; 4096];
                conn.set_read_timeout(Some(std::time::Duration::from_secs(2)))
                    .ok();
                while let Ok(n) = conn.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    all.extend_from_slice(&buf[..n]);
                    let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                }
                log.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&all).into_owned());
            });
        }
    });
    let env = Env::with_policy(
        "",
        &format!("{ALLOW_FETCH}\"interp-network\" = \"allow\"\n"),
    );
    env.write(
        &env.work().join("front.py"),
        &format!(
            "import socket, time\n\
             s = socket.create_connection(('127.0.0.1', 3128))\n\
             s.sendall(b'GET http://allowed.example.invalid:{port}/ HTTP/1.1\\r\\nHost: secret-vhost.example.invalid\\r\\n\\r\\n'\n\
                       b'GET /two HTTP/1.1\\r\\nHost: second-vhost.example.invalid\\r\\n\\r\\n')\n\
             time.sleep(1); print('got', s.recv(4000))\n"
        ),
    );
    env.aq(&[
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "allowed.example.invalid:127.0.0.1",
        "--",
        "python3",
        "front.py",
    ])
    .code(0);
    std::thread::sleep(std::time::Duration::from_secs(3));
    let seen = seen.lock().unwrap().join("\n---\n");
    assert!(
        !seen.contains("secret-vhost"),
        "the Host header went through: {seen}"
    );
    assert!(
        !seen.contains("second-vhost"),
        "a pipelined request went through: {seen}"
    );
}

#[test]
fn a_repository_cannot_make_asks_wait_longer() {
    let port = hello_server();
    let env = Env::with_policy("approval_timeout_secs = 2", ALLOW_FETCH);
    env.write(
        &env.work().join("agent-quarantine.toml"),
        "version = 1\n[session]\napproval_timeout_secs = 86400\n",
    );
    env.write(
        &env.work().join("n.sh"),
        &format!("curl -s -o /dev/null -w 'code:%{{http_code}}\\n' http://other.example.invalid:{port}/\n"),
    );
    let out = env.aq(&[
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "other.example.invalid:127.0.0.1",
        "--",
        "sh",
        "n.sh",
    ]);
    out.code(0)
        .stdout_has("code:403")
        .stderr_has("(timeout 2s)")
        .stderr_lacks("86400s");
    assert!(
        out.elapsed < std::time::Duration::from_secs(20),
        "took {:?}",
        out.elapsed
    );
}

#[test]
fn an_approver_for_another_session_does_not_make_this_one_wait() {
    let port = hello_server();
    let env = Env::with_policy(
        "approval_timeout_secs = 20\nwait_for_approver = false",
        ALLOW_FETCH,
    );
    let line = crate::util::aq_line(&["approve", "--session", "19990101T000000Z-deadbeef"]);
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-q", "-e", "-c", &line, "/dev/null"])
        .current_dir(env.work())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null());
    env.configure(&mut cmd);
    let Ok(mut approver) = cmd.spawn() else {
        return;
    };
    std::thread::sleep(std::time::Duration::from_secs(1));
    env.write(
        &env.work().join("n.sh"),
        &format!("curl -s -o /dev/null -w 'code:%{{http_code}}\\n' http://other.example.invalid:{port}/\n"),
    );
    let out = env.aq(&[
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "other.example.invalid:127.0.0.1",
        "--",
        "sh",
        "n.sh",
    ]);
    let _ = approver.kill();
    let _ = approver.wait();
    out.code(0)
        .stdout_has("code:403")
        .stderr_lacks("waiting for approval");
    assert!(
        out.elapsed < std::time::Duration::from_secs(10),
        "took {:?}",
        out.elapsed
    );
}

#[test]
fn waiting_asks_do_not_starve_allowed_connections() {
    let port = hello_server();
    let env = Env::with_policy(
        "approval_timeout_secs = 20",
        &format!("{ALLOW_FETCH}\"interp-network\" = \"allow\"\n"),
    );
    env.write(
        &env.work().join("flood.py"),
        &format!(
            "import socket, subprocess, time\n\
             held = []\n\
             for i in range(600):\n\
             \x20   s = socket.create_connection(('127.0.0.1', 3128))\n\
             \x20   s.sendall(b'CONNECT h%d.example.invalid:443 HTTP/1.1\\r\\n\\r\\n' % i)\n\
             \x20   held.append(s)\n\
             time.sleep(2)\n\
             r = subprocess.run(['curl', '-s', '--max-time', '5', 'http://allowed.example.invalid:{port}/'], capture_output=True, text=True)\n\
             print('allowed:' + r.stdout)\n"
        ),
    );
    let out = env.aq(&[
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "allowed.example.invalid:127.0.0.1",
        "--",
        "python3",
        "flood.py",
    ]);
    out.code(0).stdout_has("allowed:hello");
    let session = env.only_session();
    assert!(
        session.pending().len() <= 8,
        "{} asks pending",
        session.pending().len()
    );
}
