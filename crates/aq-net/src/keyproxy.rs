//! The key proxy: an agent's model API, served on a loopback port inside the
//! sandbox, so the API key never enters it.
//!
//! The agent's base URL points at `http://127.0.0.1:PORT` (a listener handed
//! out of the sandbox like the broker's) and it holds a placeholder key. For
//! each request the proxy, outside:
//!
//! 1. reads the request head (at most [`MAX_HEAD`] bytes);
//! 2. puts the real key into the headers that carry one (and the query
//!    parameter, for APIs that take the key there), sets `Host` to the
//!    upstream, and asks for `Connection: close`, so every request on a
//!    connection is one the proxy has seen (the client opens a new
//!    connection for the next one);
//! 3. connects to the one upstream it serves (TLS for `https://`, checked
//!    against the system's roots) and copies both ways, streaming.
//!
//! It only ever talks to that upstream: a command in the sandbox can use it
//! to reach the model API with the user's key, as the agent does (the same
//! power the agent has), but not to reach anything else or read the key.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The longest request head accepted.
pub const MAX_HEAD: usize = 64 * 1024;

/// What the proxy serves.
#[derive(Clone, Debug)]
pub struct KeyProxyConfig {
    /// `https://api.example.invalid` or `http://127.0.0.1:8080` (a path is
    /// not used: the client keeps its own path).
    pub upstream: String,
    /// Header name (lower case), the text before the key, and the key.
    pub headers: Vec<(String, String, String)>,
    /// A query parameter that carries the key, and the key.
    pub query_key: Option<(String, String)>,
    /// Names pinned to an address (`--resolve`, `[network] resolve`),
    /// normalised (lower case, no final dot): the proxy connects there
    /// instead of asking the resolver, as the broker does.
    pub pins: Vec<(String, std::net::IpAddr)>,
}

/// One forwarded request, for the session log.
#[derive(Clone, Debug)]
pub struct KeyProxyRecord {
    /// The upstream host.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// `POST /v1/messages` (the query left out: it may hold the key).
    pub request: String,
    /// Whether a key was put in.
    pub keyed: bool,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// Bytes from the client (after the head) and to it.
    pub bytes_up: u64,
    /// Bytes to the client.
    pub bytes_down: u64,
    /// How long the exchange took.
    pub duration_ms: u64,
}

/// Called for each request.
pub type KeyProxyRecorder = Arc<dyn Fn(&KeyProxyRecord) + Send + Sync>;

/// Where the upstream is.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Upstream {
    tls: bool,
    host: String,
    port: u16,
}

fn parse_upstream(url: &str) -> Result<Upstream, String> {
    let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(format!("`{url}` is not an http:// or https:// URL"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    if authority.is_empty() || authority.contains('@') {
        return Err(format!("`{url}` has no usable host"));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => match p.parse::<u16>() {
            Ok(port) if !h.contains(':') || h.starts_with('[') => (h.to_string(), port),
            _ => (authority.to_string(), if tls { 443 } else { 80 }),
        },
        _ => (authority.to_string(), if tls { 443 } else { 80 }),
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    Ok(Upstream { tls, host, port })
}

/// `(tls, host, port)` of an `http://` or `https://` URL (a bracketed IPv6
/// host without its brackets; the scheme's port when none is written).
pub fn http_target(url: &str) -> Result<(bool, String, u16), String> {
    parse_upstream(url).map(|u| (u.tls, u.host, u.port))
}

/// The path part of a base URL (`https://x/v1` → `/v1`, none → ``).
pub fn base_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    match rest.find('/') {
        Some(i) => rest[i..].trim_end_matches('/'),
        None => "",
    }
}

/// A running key proxy; dropping it stops accepting.
pub struct KeyProxy {
    stop: Arc<AtomicBool>,
}

impl Drop for KeyProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl KeyProxy {
    /// Serve `listener` (handed out of the sandbox) with `config`.
    pub fn serve(
        listener: TcpListener,
        config: KeyProxyConfig,
        recorder: KeyProxyRecorder,
    ) -> Result<KeyProxy, String> {
        let upstream = parse_upstream(&config.upstream)?;
        let tls = if upstream.tls {
            Some(Arc::new(client_config()?))
        } else {
            None
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let shared = Arc::new((config, upstream, tls, recorder));
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("key proxy listener: {e}"))?;
        std::thread::Builder::new()
            .name("aq-key-proxy".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((client, _)) => {
                            let shared = shared.clone();
                            let _ = std::thread::Builder::new()
                                .name("aq-key-proxy-conn".into())
                                .spawn(move || {
                                    let (config, upstream, tls, recorder) = &*shared;
                                    let record = handle(client, config, upstream, tls.clone());
                                    recorder(&record);
                                });
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            wait_readable(listener.as_raw_fd(), 100);
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            })
            .map_err(|e| format!("key proxy thread: {e}"))?;
        Ok(KeyProxy { stop })
    }
}

fn client_config() -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    for cert in found.certs {
        let _ = roots.add(cert);
    }
    if roots.is_empty() {
        return Err(
            "no trusted root certificates found on this system (install ca-certificates, or set SSL_CERT_FILE)"
                .to_string(),
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())
        .map(|b| b.with_root_certificates(roots).with_no_client_auth())
}

/// A parsed request head, rewritten for the upstream.
#[derive(Debug, PartialEq, Eq)]
struct Rewritten {
    head: Vec<u8>,
    request: String,
    keyed: bool,
}

/// Rewrites the head `raw` (without its final empty line) for `upstream`.
fn rewrite_head(
    raw: &str,
    config: &KeyProxyConfig,
    upstream: &Upstream,
) -> Result<Rewritten, String> {
    let mut lines = raw.split("\r\n");
    let request_line = lines.next().ok_or("empty request")?;
    let mut parts = request_line.splitn(3, ' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("bad request line `{request_line}`"));
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Err(format!(
            "not an HTTP/1 origin-form request: `{request_line}`"
        ));
    }
    let mut keyed = false;
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    let query = query.map(|q| {
        q.split('&')
            .map(|pair| match (&config.query_key, pair.split_once('=')) {
                (Some((name, key)), Some((k, _))) if k == name => {
                    keyed = true;
                    format!("{k}={key}")
                }
                _ => pair.to_string(),
            })
            .collect::<Vec<_>>()
            .join("&")
    });
    let mut out = String::new();
    out.push_str(method);
    out.push(' ');
    out.push_str(path);
    if let Some(q) = &query {
        out.push('?');
        out.push_str(q);
    }
    out.push_str(" HTTP/1.1\r\n");
    let mut upgrade = false;
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("bad header line `{line}`"));
        };
        let lower = name.trim().to_ascii_lowercase();
        let value = value.trim();
        match lower.as_str() {
            "host" | "connection" | "keep-alive" | "proxy-connection" | "proxy-authorization" => {
                if lower == "connection" && value.to_ascii_lowercase().contains("upgrade") {
                    upgrade = true;
                }
                continue;
            }
            _ => {}
        }
        if let Some((_, prefix, key)) = config.headers.iter().find(|(h, _, _)| *h == lower) {
            keyed = true;
            headers.push((name.trim().to_string(), format!("{prefix}{key}")));
            continue;
        }
        headers.push((name.trim().to_string(), value.to_string()));
    }
    // An agent that sent no key header (Codex `exec` with only
    // OPENAI_API_KEY set) gets the first one: the proxy holds the key.
    let header_keyed = config
        .headers
        .iter()
        .any(|(h, _, _)| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(h)));
    if !header_keyed && let Some((h, prefix, key)) = config.headers.first() {
        keyed = true;
        headers.push((h.clone(), format!("{prefix}{key}")));
    }
    let default_port = if upstream.tls { 443 } else { 80 };
    let host = if upstream.host.contains(':') {
        format!("[{}]", upstream.host)
    } else {
        upstream.host.clone()
    };
    out.push_str("Host: ");
    out.push_str(&host);
    if upstream.port != default_port {
        out.push_str(&format!(":{}", upstream.port));
    }
    out.push_str("\r\n");
    for (name, value) in &headers {
        out.push_str(name);
        out.push_str(": ");
        out.push_str(value);
        out.push_str("\r\n");
    }
    out.push_str(if upgrade {
        "Connection: Upgrade\r\n"
    } else {
        "Connection: close\r\n"
    });
    out.push_str("\r\n");
    Ok(Rewritten {
        head: out.into_bytes(),
        request: format!("{method} {path}"),
        keyed,
    })
}

/// Reads until the end of the head; returns the head (without the empty
/// line) and what was read past it.
fn read_head(client: &mut TcpStream) -> Result<(String, Vec<u8>), String> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8(buf[..end].to_vec())
                .map_err(|_| "the request head is not UTF-8".to_string())?;
            return Ok((head, buf[end + 4..].to_vec()));
        }
        if buf.len() > MAX_HEAD {
            return Err(format!("request head over {MAX_HEAD} bytes"));
        }
        let n = client.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the client closed before a whole request".to_string());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn handle(
    mut client: TcpStream,
    config: &KeyProxyConfig,
    upstream: &Upstream,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> KeyProxyRecord {
    let started = Instant::now();
    let mut record = KeyProxyRecord {
        host: upstream.host.clone(),
        port: upstream.port,
        request: String::new(),
        keyed: false,
        error: None,
        bytes_up: 0,
        bytes_down: 0,
        duration_ms: 0,
    };
    let _ = client.set_nonblocking(false);
    let result = (|| -> Result<(), String> {
        let (head, rest) = read_head(&mut client)?;
        let rewritten = rewrite_head(&head, config, upstream)?;
        record.request = rewritten.request.clone();
        record.keyed = rewritten.keyed;
        let server = TcpStream::connect(upstream_addr(upstream, &config.pins)?).map_err(|e| {
            format!(
                "cannot connect to {}:{}: {e}{}",
                upstream.host,
                upstream.port,
                if e.kind() == io::ErrorKind::ConnectionRefused {
                    " (is the model server running there?)"
                } else {
                    ""
                }
            )
        })?;
        let _ = server.set_nodelay(true);
        let mut first = rewritten.head;
        first.extend_from_slice(&rest);
        record.bytes_up += rest.len() as u64;
        let mut tls_conn = match &tls {
            Some(cfg) => {
                let name = rustls::pki_types::ServerName::try_from(upstream.host.clone())
                    .map_err(|e| format!("{}: {e}", upstream.host))?;
                Some(rustls::ClientConnection::new(cfg.clone(), name).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        pump(&mut client, server, tls_conn.as_mut(), first, &mut record)
    })();
    if let Err(e) = result {
        if record.bytes_down == 0 {
            let _ = client.write_all(&refusal_response(&e));
        }
        record.error = Some(e);
    }
    let _ = client.shutdown(Shutdown::Both);
    record.duration_ms = started.elapsed().as_millis() as u64;
    record
}

/// Where to connect for `upstream`: its pinned address, or what the
/// resolver answers.
fn upstream_addr(
    upstream: &Upstream,
    pins: &[(String, std::net::IpAddr)],
) -> Result<std::net::SocketAddr, String> {
    let name = upstream.host.trim_end_matches('.').to_ascii_lowercase();
    if let Some((_, addr)) = pins.iter().find(|(n, _)| *n == name) {
        return Ok(std::net::SocketAddr::new(*addr, upstream.port));
    }
    (upstream.host.as_str(), upstream.port)
        .to_socket_addrs()
        .map_err(|e| {
            format!(
                "cannot resolve {}: {e} (pin the name with `aq run --resolve {}:ADDR`, or check the agent's base URL)",
                upstream.host, upstream.host
            )
        })?
        .next()
        .ok_or_else(|| format!("{} has no address", upstream.host))
}

/// The answer when the model API cannot be reached: `421 Misdirected
/// Request`, a status no agent retries (they retry 429 and 5xx, Gemini CLI
/// for minutes), so the agent stops at once and shows aq's reason. The
/// body fits the Anthropic, OpenAI and Gemini error shapes at once
/// (`error.message`), so each agent prints the message itself.
fn refusal_response(reason: &str) -> Vec<u8> {
    let message = format!("aq key proxy: {reason}");
    let body = serde_json::json!({
        "type": "error",
        "error": {
            "type": "aq_key_proxy_error",
            "code": 421,
            "status": "UNAVAILABLE",
            "message": message,
        }
    })
    .to_string();
    format!(
        "HTTP/1.1 421 Misdirected Request\r\nContent-Type: application/json\r\nx-should-retry: false\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn wait_readable(fd: i32, timeout_ms: i32) {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, timeout_ms) };
}

/// Copies both ways until the upstream is done: `first` (the head and any
/// body bytes read with it) goes up first. One thread, `poll` on both
/// sockets, so TLS state is never shared between threads.
fn pump(
    client: &mut TcpStream,
    mut server: TcpStream,
    mut tls: Option<&mut rustls::ClientConnection>,
    first: Vec<u8>,
    record: &mut KeyProxyRecord,
) -> Result<(), String> {
    let mut up: Vec<u8> = first; // plaintext waiting to go upstream
    let mut down: Vec<u8> = Vec::new(); // bytes waiting to go to the client
    let mut client_open = true;
    let mut server_open = true;
    client.set_nonblocking(true).map_err(|e| e.to_string())?;
    server.set_nonblocking(true).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // Hand plaintext to TLS (or write it directly).
        if !up.is_empty() {
            match tls.as_deref_mut() {
                Some(t) => {
                    let n = t.writer().write(&up).map_err(|e| e.to_string())?;
                    up.drain(..n);
                }
                None => match server.write(&up) {
                    Ok(n) => {
                        up.drain(..n);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(format!("upstream write: {e}")),
                },
            }
        }
        if let Some(t) = tls.as_deref_mut() {
            while t.wants_write() {
                match t.write_tls(&mut server) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(format!("upstream write: {e}")),
                }
            }
        }
        if !down.is_empty() {
            match client.write(&down) {
                Ok(n) => {
                    record.bytes_down += n as u64;
                    down.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return Ok(()), // the client went away
            }
        }
        if !server_open && down.is_empty() {
            return Ok(());
        }
        let server_wants_out = match tls.as_deref() {
            Some(t) => t.wants_write(),
            None => !up.is_empty(),
        };
        let mut fds = [
            libc::pollfd {
                fd: client.as_raw_fd(),
                events: (if client_open && up.len() < buf.len() {
                    libc::POLLIN
                } else {
                    0
                }) | (if down.is_empty() { 0 } else { libc::POLLOUT }),
                revents: 0,
            },
            libc::pollfd {
                fd: server.as_raw_fd(),
                events: (if server_open && down.len() < buf.len() {
                    libc::POLLIN
                } else {
                    0
                }) | (if server_wants_out { libc::POLLOUT } else { 0 }),
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, 300_000) };
        if r == 0 {
            return Err("no traffic for 300 s".to_string());
        }
        if r < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(io::Error::last_os_error().to_string());
        }
        if fds[0].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 && client_open {
            match client.read(&mut buf) {
                Ok(0) => client_open = false,
                Ok(n) => {
                    record.bytes_up += n as u64;
                    up.extend_from_slice(&buf[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => client_open = false,
            }
        }
        if fds[1].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 && server_open {
            match tls.as_deref_mut() {
                Some(t) => match t.read_tls(&mut server) {
                    Ok(0) => server_open = false,
                    Ok(_) => {
                        t.process_new_packets()
                            .map_err(|e| format!("TLS with the upstream: {e}"))?;
                        loop {
                            match t.reader().read(&mut buf) {
                                Ok(0) => {
                                    server_open = false;
                                    break;
                                }
                                Ok(n) => down.extend_from_slice(&buf[..n]),
                                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                                    server_open = false;
                                    break;
                                }
                                Err(e) => return Err(format!("TLS read: {e}")),
                            }
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(format!("upstream read: {e}")),
                },
                None => match server.read(&mut buf) {
                    Ok(0) => server_open = false,
                    Ok(n) => down.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(format!("upstream read: {e}")),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> KeyProxyConfig {
        KeyProxyConfig {
            upstream: "https://api.example.invalid/v1".into(),
            headers: vec![
                ("x-api-key".into(), String::new(), "sk-real".into()),
                ("authorization".into(), "Bearer ".into(), "sk-real".into()),
            ],
            query_key: Some(("key".into(), "g-real".into())),
            pins: vec![],
        }
    }

    #[test]
    fn upstreams_parse() {
        let u = parse_upstream("https://api.example.invalid/v1").unwrap();
        assert_eq!(
            (u.tls, u.host.as_str(), u.port),
            (true, "api.example.invalid", 443)
        );
        let u = parse_upstream("http://127.0.0.1:8080").unwrap();
        assert_eq!((u.tls, u.host.as_str(), u.port), (false, "127.0.0.1", 8080));
        let u = parse_upstream("http://[::1]:9/x").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 9));
        assert!(parse_upstream("ftp://x").is_err());
        assert!(parse_upstream("https://user@x").is_err());
        assert_eq!(base_path("https://api.example.invalid/v1/"), "/v1");
        assert_eq!(base_path("http://127.0.0.1:3"), "");
    }

    #[test]
    fn the_real_key_replaces_the_placeholder_and_nothing_else_changes() {
        let u = parse_upstream(&config().upstream).unwrap();
        let head = "POST /v1/messages?beta=true&key=placeholder HTTP/1.1\r\nHost: 127.0.0.1:3129\r\nX-Api-Key: placeholder\r\nConnection: keep-alive\r\nContent-Length: 2\r\nAnthropic-Version: 2023-06-01";
        let r = rewrite_head(head, &config(), &u).unwrap();
        let text = String::from_utf8(r.head).unwrap();
        assert_eq!(
            text,
            "POST /v1/messages?beta=true&key=g-real HTTP/1.1\r\nHost: api.example.invalid\r\nX-Api-Key: sk-real\r\nContent-Length: 2\r\nAnthropic-Version: 2023-06-01\r\nConnection: close\r\n\r\n"
        );
        assert!(r.keyed);
        assert_eq!(r.request, "POST /v1/messages");
        let bearer = rewrite_head(
            "GET /v1/models HTTP/1.1\r\nAuthorization: Bearer placeholder",
            &config(),
            &u,
        )
        .unwrap();
        assert!(
            String::from_utf8(bearer.head)
                .unwrap()
                .contains("Authorization: Bearer sk-real\r\n")
        );
        // No key header sent: the first one is added.
        let none = rewrite_head("GET / HTTP/1.1\r\nAccept: */*", &config(), &u).unwrap();
        assert!(none.keyed);
        assert!(
            String::from_utf8(none.head)
                .unwrap()
                .contains("x-api-key: sk-real\r\n")
        );
    }

    #[test]
    fn bad_heads_are_refused() {
        let u = parse_upstream(&config().upstream).unwrap();
        for bad in [
            "GET http://elsewhere.example.invalid/ HTTP/1.1",
            "CONNECT elsewhere.example.invalid:443 HTTP/1.1",
            "GET / HTTP/2",
            "GET /\r\nno-colon",
        ] {
            assert!(rewrite_head(bad, &config(), &u).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_request_is_forwarded_with_the_key_and_the_response_streams_back() {
        let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = upstream.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = upstream.accept().unwrap();
            let mut got = Vec::new();
            let mut b = [0u8; 1024];
            while find(&got, b"hello").is_none() {
                let n = s.read(&mut b).unwrap();
                got.extend_from_slice(&b[..n]);
            }
            s.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ndata: one\n\n")
                .unwrap();
            std::thread::sleep(Duration::from_millis(50));
            s.write_all(b"data: two\n\n").unwrap();
            String::from_utf8(got).unwrap()
        });
        let inside = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = inside.local_addr().unwrap();
        let records = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = records.clone();
        let _proxy = KeyProxy::serve(
            inside,
            KeyProxyConfig {
                upstream: format!("http://127.0.0.1:{port}"),
                headers: vec![("x-api-key".into(), String::new(), "sk-real".into())],
                query_key: None,
                pins: vec![],
            },
            Arc::new(move |r: &KeyProxyRecord| seen.lock().unwrap().push(r.clone())),
        )
        .unwrap();
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: placeholder\r\nContent-Length: 5\r\n\r\nhello")
            .unwrap();
        let mut answer = String::new();
        c.read_to_string(&mut answer).unwrap();
        assert!(answer.ends_with("data: one\n\ndata: two\n\n"), "{answer}");
        let got = server.join().unwrap();
        assert!(got.contains("x-api-key: sk-real\r\n"), "{got}");
        assert!(!got.contains("placeholder"), "{got}");
        for _ in 0..100 {
            if !records.lock().unwrap().is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let r = records.lock().unwrap()[0].clone();
        assert!(r.keyed && r.error.is_none(), "{r:?}");
        assert_eq!(r.request, "POST /v1/messages");
    }

    /// One request through a proxy serving `config`; the answer.
    fn one_request(config: KeyProxyConfig) -> (String, KeyProxyRecord) {
        let inside = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = inside.local_addr().unwrap();
        let records = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = records.clone();
        let _proxy = KeyProxy::serve(
            inside,
            config,
            Arc::new(move |r: &KeyProxyRecord| seen.lock().unwrap().push(r.clone())),
        )
        .unwrap();
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
        )
        .unwrap();
        let mut answer = String::new();
        c.read_to_string(&mut answer).unwrap();
        for _ in 0..200 {
            if !records.lock().unwrap().is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let r = records.lock().unwrap()[0].clone();
        (answer, r)
    }

    #[test]
    fn a_pinned_name_is_reached_at_its_pin_without_the_resolver() {
        let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = upstream.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = upstream.accept().unwrap();
            let mut got = Vec::new();
            let mut b = [0u8; 1024];
            while find(&got, b"\r\n\r\n{}").is_none() {
                let n = s.read(&mut b).unwrap();
                got.extend_from_slice(&b[..n]);
            }
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                .unwrap();
            String::from_utf8(got).unwrap()
        });
        // `.invalid` never resolves: only the pin can make this work.
        let (answer, record) = one_request(KeyProxyConfig {
            upstream: format!("http://Model.Example.Invalid.:{port}/v1"),
            headers: vec![],
            query_key: None,
            pins: vec![("model.example.invalid".into(), "127.0.0.1".parse().unwrap())],
        });
        assert!(answer.ends_with("ok"), "{answer}");
        assert!(record.error.is_none(), "{record:?}");
        let got = server.join().unwrap();
        // The upstream sees its own name; no key was added (none is held).
        assert!(got.contains("Host: Model.Example.Invalid.:"), "{got}");
        assert!(!record.keyed);
    }

    #[test]
    fn an_unreachable_model_api_gets_an_answer_no_agent_retries_with_the_fix() {
        let (answer, record) = one_request(KeyProxyConfig {
            upstream: "http://model.example.invalid:9/v1".into(),
            headers: vec![],
            query_key: None,
            pins: vec![],
        });
        assert!(
            answer.starts_with("HTTP/1.1 421 Misdirected Request\r\n"),
            "{answer}"
        );
        assert!(answer.contains("x-should-retry: false"), "{answer}");
        let body: serde_json::Value =
            serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("cannot resolve model.example.invalid"),
            "{message}"
        );
        assert!(
            message.contains("--resolve model.example.invalid:ADDR"),
            "{message}"
        );
        assert!(record.error.is_some());
        // A port where nothing listens: the refusal says so.
        let closed = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let (answer, _) = one_request(KeyProxyConfig {
            upstream: format!("http://127.0.0.1:{port}"),
            headers: vec![],
            query_key: None,
            pins: vec![],
        });
        assert!(
            answer.contains("is the model server running there?"),
            "{answer}"
        );
    }
}
