//! Test harness: a loopback HTTP server, a proxy session with its records,
//! and curl with a clean environment.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use aq_net::{Allowlist, Broker, ConnectionRecord, ProxyServer, Resolve};

/// A plain HTTP server on 127.0.0.1 that answers every request with its
/// request line, and counts the requests.
pub struct Upstream {
    pub port: u16,
    pub hits: Arc<AtomicUsize>,
}

impl Upstream {
    pub fn start() -> Upstream {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let h2 = Arc::clone(&hits);
        thread::spawn(move || {
            for c in l.incoming() {
                let Ok(mut c) = c else { continue };
                let hits = Arc::clone(&h2);
                thread::spawn(move || {
                    let mut head = Vec::new();
                    let mut b = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        match c.read(&mut b) {
                            Ok(1) => head.push(b[0]),
                            _ => return,
                        }
                    }
                    hits.fetch_add(1, Ordering::SeqCst);
                    let text = String::from_utf8_lossy(&head);
                    let line = text.lines().next().unwrap_or("");
                    let body = format!("hello from upstream: {line}\n");
                    let _ = write!(
                        c,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        Upstream { port, hits }
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// A broker and its in-process proxy, keeping every record.
pub struct Session {
    pub proxy: ProxyServer,
    pub records: Arc<Mutex<Vec<ConnectionRecord>>>,
}

impl Session {
    pub fn start(allow: &[&str], pins: &[&str], permit: &[&str]) -> Session {
        Self::start_with(allow, pins, permit, None)
    }

    pub fn start_with(
        allow: &[&str],
        pins: &[&str],
        permit: &[&str],
        resolver: Option<Arc<dyn Resolve>>,
    ) -> Session {
        let broker = session_broker(allow, pins, permit, resolver);
        let (broker, records) = broker;
        let proxy = ProxyServer::bind(Arc::new(broker)).unwrap();
        Session { proxy, records }
    }

    pub fn addr(&self) -> String {
        self.proxy.local_addr().to_string()
    }

    /// The records so far; the tunnel's record lands when it closes, so
    /// wait a little for it.
    pub fn records(&self, want: usize) -> Vec<ConnectionRecord> {
        for _ in 0..200 {
            if self.records.lock().unwrap().len() >= want {
                break;
            }
            thread::sleep(std::time::Duration::from_millis(10));
        }
        self.records.lock().unwrap().clone()
    }
}

pub fn session_broker(
    allow: &[&str],
    pins: &[&str],
    permit: &[&str],
    resolver: Option<Arc<dyn Resolve>>,
) -> (Broker, Arc<Mutex<Vec<ConnectionRecord>>>) {
    let list = Allowlist::from_entries(allow, pins, permit).unwrap();
    let records = Arc::new(Mutex::new(Vec::new()));
    let r2 = Arc::clone(&records);
    let mut broker = Broker::new(list).with_records(Arc::new(move |r: &ConnectionRecord| {
        r2.lock().unwrap().push(r.clone())
    }));
    if let Some(r) = resolver {
        broker = broker.with_resolver(r);
    }
    (broker, records)
}

/// Whether curl can run; a test that needs it says why it skipped.
pub fn have_curl(test: &str) -> bool {
    let ok = Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("AQ_NET_REQUIRE_CURL").is_none(),
            "{test}: curl is required (AQ_NET_REQUIRE_CURL) but cannot run"
        );
        aq_testkit::skip(&format!("{test}: curl not found"));
    }
    ok
}

/// Runs curl with only PATH and `env` in its environment (no stray proxy
/// variables from the caller).
pub fn curl(args: &[&str], env: &[(&str, &str)]) -> CurlRun {
    let mut c = Command::new("curl");
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args(["-sS", "--max-time", "20"])
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("run curl");
    CurlRun {
        cmd: format!("{env:?} curl {}", args.join(" ")),
        out,
    }
}

pub struct CurlRun {
    pub cmd: String,
    pub out: Output,
}

impl CurlRun {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    pub fn code(&self) -> Option<i32> {
        self.out.status.code()
    }

    /// Panics with the whole run unless curl exited 0.
    pub fn success(&self) -> String {
        assert!(self.out.status.success(), "{self}");
        self.stdout()
    }
}

impl std::fmt::Display for CurlRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "command: {}\nstatus: {:?}\nstdout: {}\nstderr: {}",
            self.cmd,
            self.out.status,
            self.stdout(),
            self.stderr()
        )
    }
}

/// A SOCKS5 client that returns the reply code of a CONNECT.
pub fn socks5_connect(proxy: &str, atyp_and_addr: &[u8], port: u16) -> u8 {
    let mut s = TcpStream::connect(proxy).unwrap();
    s.write_all(&[5, 1, 0]).unwrap();
    let mut hello = [0u8; 2];
    s.read_exact(&mut hello).unwrap();
    assert_eq!(hello, [5, 0]);
    let mut req = vec![5, 1, 0];
    req.extend_from_slice(atyp_and_addr);
    req.extend_from_slice(&port.to_be_bytes());
    s.write_all(&req).unwrap();
    let mut reply = [0u8; 10];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(reply[0], 5);
    reply[1]
}

/// SOCKS5 address bytes for a domain name.
pub fn socks_name(name: &str) -> Vec<u8> {
    let mut v = vec![3, name.len() as u8];
    v.extend_from_slice(name.as_bytes());
    v
}
