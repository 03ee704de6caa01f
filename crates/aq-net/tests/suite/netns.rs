//! The sandbox shape: the listener is bound inside a fresh network namespace
//! (only `lo`), handed out over a Unix socket pair, and served by a broker
//! outside that reaches a server on the host's loopback, which the namespace
//! itself cannot reach.

use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

use aq_net::ProxyServer;
use aq_net::handoff::{bind_relay_listener, recv_listener, send_listener};

use super::util::{Upstream, have_curl, session_broker};

const HELPER_ENV: &str = "AQ_NET_NETNS_HELPER";
const HELPER: &str = "suite::netns::helper_inside_namespace";

/// Run by the test below inside `unshare -rn`, with the channel on fd 3 and
/// the upstream port in the environment. Alone, it does nothing.
#[test]
fn helper_inside_namespace() {
    let Ok(port) = std::env::var(HELPER_ENV) else {
        return;
    };
    // SAFETY: the parent put the channel on fd 3 for us.
    let channel = unsafe { UnixStream::from_raw_fd(3) };
    let l = bind_relay_listener(0).unwrap();
    let proxy = l.local_addr().unwrap();
    send_listener(&channel, &l).unwrap();
    drop(l);
    drop(channel);
    // The host's loopback server is not reachable from here directly.
    let direct = TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap()));
    println!(
        "DIRECT={}",
        if direct.is_ok() {
            "connected"
        } else {
            "refused"
        }
    );
    let out = Command::new("curl")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args([
            "-sS",
            "--max-time",
            "10",
            "--socks5-hostname",
            &proxy.to_string(),
        ])
        .arg(format!("http://allowed.example.invalid:{port}/from-netns"))
        .output()
        .unwrap();
    println!("CURL={}", String::from_utf8_lossy(&out.stdout).trim());
    println!("CURL_ERR={}", String::from_utf8_lossy(&out.stderr).trim());
}

#[test]
fn listener_bound_in_a_fresh_network_namespace_is_served_from_outside() {
    let test = "listener_bound_in_a_fresh_network_namespace_is_served_from_outside";
    if !have_curl(test) {
        return;
    }
    let probe = Command::new("unshare").args(["-rn", "true"]).status();
    if !probe.is_ok_and(|s| s.success()) {
        aq_testkit::skip(&format!(
            "{test}: `unshare -rn` (user + network namespace) is not available"
        ));
        return;
    }
    let up = Upstream::start();
    let (inside, outside) = UnixStream::pair().unwrap();
    let fd = inside.as_raw_fd();
    let mut cmd = Command::new("unshare");
    cmd.args(["-rn", "sh", "-c", "ip link set lo up && exec \"$0\" \"$@\""])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", HELPER, "--nocapture", "--test-threads=1"])
        .env(HELPER_ENV, up.port.to_string());
    // SAFETY: dup2 and fcntl only, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
    drop(inside);
    let listener = recv_listener(&outside).unwrap();
    let (broker, records) = session_broker(
        &["allowed.example.invalid"],
        &["allowed.example.invalid=127.0.0.1"],
        &[],
        None,
    );
    let server = ProxyServer::serve(listener, Arc::new(broker)).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "helper failed:\n{stdout}");
    assert!(stdout.contains("DIRECT=refused\n"), "{stdout}");
    assert!(
        stdout.contains("CURL=hello from upstream: GET /from-netns HTTP/1.1\n"),
        "{stdout}"
    );
    drop(server);
    let recs = records.lock().unwrap();
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0].rule, "allowed.example.invalid");
}
