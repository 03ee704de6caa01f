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
//!    upstream, and asks for `Connection: close`; only that request's body
//!    goes up after it (a request pipelined behind it is dropped, an
//!    upgrade goes both ways once the upstream answers `101`), and heads
//!    another parser would frame differently (a bare CR or LF, both
//!    `Content-Length` and `Transfer-Encoding`) are refused, so every
//!    request on a connection is one the proxy has seen (the client opens
//!    a new connection for the next one);
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

use crate::error::{HeadError, ProxySetupError, RewriteError, UrlError};

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
    /// Which methods and paths may go up (`None`: any); a request outside
    /// it gets a 403 that says why, and never reaches the upstream.
    pub http_rule: Option<crate::intercept::HttpRule>,
}

/// The client side of an exchange: the agent's TCP connection, or the
/// plaintext end of a TLS bridge ([`crate::intercept`]).
pub(crate) trait ClientSide: Read + Write + AsRawFd {
    /// As the std types' own.
    fn set_nonblocking(&self, on: bool) -> io::Result<()>;
    /// As the std types' own.
    fn shutdown(&self, how: Shutdown) -> io::Result<()>;
}

impl ClientSide for TcpStream {
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        TcpStream::set_nonblocking(self, on)
    }
    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        TcpStream::shutdown(self, how)
    }
}

impl ClientSide for std::os::unix::net::UnixStream {
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        std::os::unix::net::UnixStream::set_nonblocking(self, on)
    }
    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        std::os::unix::net::UnixStream::shutdown(self, how)
    }
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
    /// Refused by the host's HTTP rule (`error` says why), not failed.
    pub denied: bool,
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
pub(crate) struct Upstream {
    tls: bool,
    host: String,
    port: u16,
}

pub(crate) fn parse_upstream(url: &str) -> Result<Upstream, UrlError> {
    let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(UrlError::NotHttp {
            url: url.to_string(),
        });
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    if authority.is_empty() || authority.contains('@') {
        return Err(UrlError::NoHost {
            url: url.to_string(),
        });
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
pub fn http_target(url: &str) -> Result<(bool, String, u16), UrlError> {
    parse_upstream(url).map(|u| (u.tls, u.host, u.port))
}

/// The path part of a base URL (`https://x/v1` → `/v1`, none → ``).
#[cfg(test)]
fn base_path(url: &str) -> &str {
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
    ) -> Result<KeyProxy, ProxySetupError> {
        let upstream = parse_upstream(&config.upstream)?;
        let tls = if upstream.tls {
            Some(Arc::new(system_client_config()?))
        } else {
            None
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let shared = Arc::new((config, upstream, tls, recorder));
        listener
            .set_nonblocking(true)
            .map_err(|source| ProxySetupError::Listener { source })?;
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
            .map_err(|source| ProxySetupError::Thread { source })?;
        Ok(KeyProxy { stop })
    }
}

pub(crate) fn system_client_config() -> Result<rustls::ClientConfig, ProxySetupError> {
    client_config_for(system_roots()?)
}

/// The roots the system trusts (`SSL_CERT_FILE` when set).
pub(crate) fn system_roots() -> Result<rustls::RootCertStore, ProxySetupError> {
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    for cert in found.certs {
        let _ = roots.add(cert);
    }
    if roots.is_empty() {
        return Err(ProxySetupError::NoRoots);
    }
    Ok(roots)
}

/// A TLS client trusting `roots`, on ring.
pub(crate) fn client_config_for(
    roots: rustls::RootCertStore,
) -> Result<rustls::ClientConfig, ProxySetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|source| ProxySetupError::Protocols { source })
        .map(|b| b.with_root_certificates(roots).with_no_client_auth())
}

/// A parsed request head, rewritten for the upstream.
#[derive(Debug, PartialEq, Eq)]
struct Rewritten {
    head: Vec<u8>,
    request: String,
    keyed: bool,
    /// How the client's bytes after the head are forwarded.
    body: Body,
}

/// What may follow a request head on the client's connection: only this
/// request's body goes up, so every request the upstream sees is one the
/// proxy has read (a second one pipelined behind it is dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    /// `Content-Length` bytes (0 without one).
    Length(u64),
    /// `Transfer-Encoding: chunked`: up to the last chunk and its
    /// trailers.
    Chunked(Chunk),
    /// A protocol upgrade (a WebSocket): nothing until the upstream
    /// answers `101 Switching Protocols`, then both ways as sent; any
    /// other answer ends it.
    Upgrade,
    /// An upgrade the upstream accepted: both ways as sent.
    Tunnel,
}

/// Where a chunked body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// In a chunk's size line (its length so far, the size read).
    Size(usize, u64, bool),
    /// In a chunk's data: bytes left.
    Data(u64),
    /// The CRLF after a chunk's data: bytes of it seen.
    DataEnd(u8),
    /// In the trailers, after the last chunk: the current line's length.
    Trailer(usize),
}

/// The longest chunk-size or trailer line followed.
const MAX_CHUNK_LINE: usize = 4096;

/// Rewrites the head `raw` (without its final empty line) for `upstream`.
fn rewrite_head(
    raw: &str,
    config: &KeyProxyConfig,
    upstream: &Upstream,
) -> Result<Rewritten, RewriteError> {
    let mut lines = raw.split("\r\n");
    // A bare CR or LF (or a NUL) ends a line for some servers and not for
    // this proxy: a header it never saw (`Connection: keep-alive`, a second
    // `Host`) would reach the upstream.
    if let Some(line) = raw.split("\r\n").find(|l| l.contains(['\r', '\n', '\0'])) {
        return Err(RewriteError::BareControl {
            line: line.escape_debug().to_string(),
        });
    }
    let request_line = lines.next().ok_or(RewriteError::Empty)?;
    let mut parts = request_line.splitn(3, ' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(RewriteError::RequestLine {
            line: request_line.to_string(),
        });
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Err(RewriteError::NotOriginForm {
            line: request_line.to_string(),
        });
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
    let mut upgrade_header = false;
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(RewriteError::HeaderLine {
                line: line.to_string(),
            });
        };
        let lower = name.trim().to_ascii_lowercase();
        let value = value.trim();
        match lower.as_str() {
            "content-length" => {
                let n = value
                    .parse::<u64>()
                    .map_err(|_| RewriteError::ContentLength {
                        value: value.to_string(),
                    })?;
                if length.is_some_and(|l| l != n) {
                    return Err(RewriteError::TwoContentLengths);
                }
                length = Some(n);
            }
            "transfer-encoding" => {
                // Only `chunked` frames a request body this proxy can
                // follow (anything else ends at a close, RFC 9112 6.3).
                if !value.eq_ignore_ascii_case("chunked") || chunked {
                    return Err(RewriteError::TransferEncoding {
                        value: value.to_string(),
                    });
                }
                chunked = true;
            }
            "upgrade" => upgrade_header = true,
            _ => {}
        }
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
    if chunked && length.is_some() {
        // Which one frames the body is where request smuggling lives.
        return Err(RewriteError::LengthAndChunked);
    }
    // An upgrade is one with both headers and no body (a WebSocket
    // handshake); anything else is asked to close.
    let upgrade = upgrade && upgrade_header && !chunked && length.unwrap_or(0) == 0;
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
        body: if upgrade {
            Body::Upgrade
        } else if chunked {
            Body::Chunked(Chunk::Size(0, 0, false))
        } else {
            Body::Length(length.unwrap_or(0))
        },
    })
}

/// Reads until the end of the head; returns the head (without the empty
/// line) and what was read past it.
fn read_head(client: &mut impl Read) -> Result<(String, Vec<u8>), HeadError> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    // A head trickled a byte at a time still ends in time.
    let started = Instant::now();
    loop {
        if started.elapsed() > crate::server::HANDSHAKE_TIMEOUT {
            return Err(HeadError::Timeout);
        }
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8(buf[..end].to_vec()).map_err(|_| HeadError::NotUtf8)?;
            return Ok((head, buf[end + 4..].to_vec()));
        }
        if buf.len() > MAX_HEAD {
            return Err(HeadError::TooLong { max: MAX_HEAD });
        }
        let n = client
            .read(&mut chunk)
            .map_err(|source| HeadError::Read { source })?;
        if n == 0 {
            return Err(HeadError::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// `text` with every character that is not printable ASCII shown as `?`,
/// and at most 300 of them.
fn printable(text: &str) -> String {
    text.chars()
        .take(300)
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn handle(
    client: TcpStream,
    config: &KeyProxyConfig,
    upstream: &Upstream,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> KeyProxyRecord {
    handle_with(client, config, upstream, tls, None, refusal_response)
}

/// [`handle`] for any client side, to an upstream the caller may have
/// connected already (the broker, at the address it vetted).
pub(crate) fn handle_with<C: ClientSide>(
    mut client: C,
    config: &KeyProxyConfig,
    upstream: &Upstream,
    tls: Option<Arc<rustls::ClientConfig>>,
    connected: Option<TcpStream>,
    error_answer: fn(&str) -> Vec<u8>,
) -> KeyProxyRecord {
    let started = Instant::now();
    let mut record = KeyProxyRecord {
        host: upstream.host.clone(),
        port: upstream.port,
        request: String::new(),
        keyed: false,
        error: None,
        denied: false,
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
        let checked = match &config.http_rule {
            // An upgrade (a WebSocket) would carry anything both ways once
            // accepted: a host whose requests are judged gets none.
            Some(_) if rewritten.body == Body::Upgrade => Some(Err(format!(
                "{}: a protocol upgrade is not carried to a host with an HTTP rule",
                rewritten.request
            ))),
            Some(rule) => Some(
                rule.check_request(&rewritten.request, &head)
                    .map_err(|e| e.to_string()),
            ),
            None => None,
        };
        if let Some(Err(why)) = checked {
            let answer = crate::intercept::refusal_403(&upstream.host, &why);
            let _ = client.write_all(&answer);
            record.bytes_down = answer.len() as u64;
            record.denied = true;
            return Err(why);
        }
        let server = match connected {
            Some(s) => Ok(s),
            None => TcpStream::connect(upstream_addr(upstream, &config.pins)?),
        }
        .map_err(|e| {
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
        let mut gate = Gate::new(rewritten.body);
        let mut first = rewritten.head;
        gate.client_sent(&rest, &mut first);
        record.bytes_up += rest.len() as u64;
        let mut tls_conn = match &tls {
            Some(cfg) => {
                let name = rustls::pki_types::ServerName::try_from(upstream.host.clone())
                    .map_err(|e| format!("{}: {e}", upstream.host))?;
                Some(rustls::ClientConnection::new(cfg.clone(), name).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        pump(
            &mut client,
            server,
            tls_conn.as_mut(),
            first,
            gate,
            &mut record,
        )
    })();
    if let Err(e) = result {
        if record.bytes_down == 0 {
            let _ = client.write_all(&error_answer(&e));
        }
        record.error = Some(e);
    }
    let _ = client.shutdown(Shutdown::Both);
    record.duration_ms = started.elapsed().as_millis() as u64;
    // The request line and the reasons quote what the client sent: the log,
    // the recap and the reports show them, so only printable text.
    record.request = printable(&record.request);
    record.error = record.error.as_deref().map(printable);
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

/// What of the client's bytes goes up: the request's body, then nothing
/// (a request pipelined behind it is dropped, unseen requests never reach
/// the upstream), or after an accepted upgrade everything.
struct Gate {
    body: Body,
    /// Bytes sent past the request while an upgrade awaits its answer.
    held: Vec<u8>,
    /// The upstream's answer so far, while an upgrade awaits it.
    answer: Vec<u8>,
    /// Past the request: what the client sends is dropped.
    closed: bool,
}

impl Gate {
    fn new(body: Body) -> Gate {
        Gate {
            body,
            held: Vec::new(),
            answer: Vec::new(),
            closed: false,
        }
    }

    /// Moves what may go up of `data` (from the client) to `up`.
    fn client_sent(&mut self, data: &[u8], up: &mut Vec<u8>) {
        if self.closed {
            return;
        }
        match &mut self.body {
            Body::Tunnel => up.extend_from_slice(data),
            Body::Chunked(chunk) => {
                let mut i = 0;
                while i < data.len() {
                    let b = data[i];
                    match chunk {
                        Chunk::Data(left) => {
                            let take = (*left).min((data.len() - i) as u64) as usize;
                            up.extend_from_slice(&data[i..i + take]);
                            *left -= take as u64;
                            i += take;
                            if *left == 0 {
                                *chunk = Chunk::DataEnd(0);
                            }
                            continue;
                        }
                        Chunk::Size(len, size, ext) => {
                            *len += 1;
                            if *len > MAX_CHUNK_LINE {
                                self.closed = true;
                            } else if b == b'\n' {
                                *chunk = if *size == 0 {
                                    Chunk::Trailer(0)
                                } else {
                                    Chunk::Data(*size)
                                };
                            } else if b == b';' || b == b' ' || b == b'\t' || b == b'\r' {
                                *ext = true;
                            } else if !*ext {
                                match (b as char).to_digit(16) {
                                    Some(d) if *size >> 60 == 0 => *size = *size * 16 + d as u64,
                                    _ => self.closed = true,
                                }
                            }
                        }
                        Chunk::DataEnd(seen) => {
                            *seen += 1;
                            if b == b'\n' {
                                *chunk = Chunk::Size(0, 0, false);
                            } else if *seen > 2 {
                                self.closed = true;
                            }
                        }
                        Chunk::Trailer(len) => {
                            *len += 1;
                            if b == b'\n' {
                                if *len <= 2 {
                                    // The empty line: the body is whole.
                                    up.push(b);
                                    self.closed = true;
                                    return;
                                }
                                *len = 0;
                            } else if *len > MAX_CHUNK_LINE {
                                self.closed = true;
                            }
                        }
                    }
                    if self.closed {
                        return;
                    }
                    up.push(b);
                    i += 1;
                }
            }
            Body::Length(left) => {
                let take = (*left).min(data.len() as u64) as usize;
                up.extend_from_slice(&data[..take]);
                *left -= take as u64;
                if take < data.len() {
                    self.closed = true;
                }
            }
            Body::Upgrade => {
                self.held.extend_from_slice(data);
                if self.held.len() > MAX_HEAD {
                    self.held.clear();
                    self.closed = true;
                }
            }
        }
    }

    /// Sees `data` from the upstream: for a pending upgrade, its answer
    /// decides (`101`: both ways from now on, what was held goes up).
    fn server_sent(&mut self, data: &[u8], up: &mut Vec<u8>) {
        if self.body != Body::Upgrade || self.closed {
            return;
        }
        self.answer.extend_from_slice(data);
        if find(&self.answer, b"\r\n\r\n").is_none() {
            if self.answer.len() > MAX_HEAD {
                self.closed = true;
            }
            return;
        }
        let switching = self
            .answer
            .split(|b| *b == b' ')
            .nth(1)
            .is_some_and(|code| code == b"101");
        if switching {
            self.body = Body::Tunnel;
            up.append(&mut self.held);
        } else {
            self.held.clear();
            self.closed = true;
        }
        self.answer = Vec::new();
    }
}

/// Copies both ways until the upstream is done: `first` (the head and any
/// body bytes read with it) goes up first, then what `gate` lets through.
/// One thread, `poll` on both sockets, so TLS state is never shared
/// between threads.
fn pump<C: ClientSide>(
    client: &mut C,
    mut server: TcpStream,
    mut tls: Option<&mut rustls::ClientConnection>,
    first: Vec<u8>,
    mut gate: Gate,
    record: &mut KeyProxyRecord,
) -> Result<(), String> {
    let mut up: Vec<u8> = first; // plaintext waiting to go upstream
    let mut down: Vec<u8> = Vec::new(); // bytes waiting to go to the client
    let mut client_open = true;
    let mut server_open = true;
    // The client's end of the exchange passed on (a shutdown of the write
    // side, TLS's close_notify), so an upstream that keeps its connection
    // open sees the client go.
    let mut up_shut = false;
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
        if !client_open && !up_shut && up.is_empty() {
            up_shut = true;
            match tls.as_deref_mut() {
                Some(t) => {
                    t.send_close_notify();
                    while t.wants_write() {
                        match t.write_tls(&mut server) {
                            Ok(_) => {}
                            Err(_) => break,
                        }
                    }
                }
                None => {
                    let _ = server.shutdown(Shutdown::Write);
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
                    gate.client_sent(&buf[..n], &mut up);
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
                                Ok(n) => {
                                    gate.server_sent(&buf[..n], &mut up);
                                    down.extend_from_slice(&buf[..n]);
                                }
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
                    Ok(n) => {
                        gate.server_sent(&buf[..n], &mut up);
                        down.extend_from_slice(&buf[..n]);
                    }
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
            http_rule: None,
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
    fn heads_that_frame_differently_elsewhere_are_refused() {
        let u = parse_upstream(&config().upstream).unwrap();
        for bad in [
            // A bare LF ends a header line for many servers, not here.
            "GET / HTTP/1.1\r\nX-A: b\nConnection: keep-alive",
            "GET / HTTP/1.1\r\nX-A: b\rHost: elsewhere",
            "GET / HTTP/1.1\nHost: elsewhere",
            "GET / HTTP/1.1\r\nX-A: b\0c",
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked",
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 50",
            "POST / HTTP/1.1\r\nContent-Length: -1",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
        ] {
            assert!(rewrite_head(bad, &config(), &u).is_err(), "{bad:?}");
        }
        // `Connection: upgrade` without an `Upgrade` (or with a body) is
        // asked to close like any other request.
        for head in [
            "GET / HTTP/1.1\r\nConnection: upgrade",
            "POST / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\nContent-Length: 3",
        ] {
            let r = rewrite_head(head, &config(), &u).unwrap();
            let text = String::from_utf8(r.head).unwrap();
            assert!(text.ends_with("Connection: close\r\n\r\n"), "{text}");
            assert_ne!(r.body, Body::Upgrade);
        }
        let ws = rewrite_head(
            "GET /v1/responses HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket",
            &config(),
            &u,
        )
        .unwrap();
        assert_eq!(ws.body, Body::Upgrade);
    }

    /// An upstream that keeps its connection open (as servers do when not
    /// told to close): answers `answer` to the first head, records every
    /// byte it gets until the client's side ends, and returns them.
    fn keep_alive_upstream(answer: &'static [u8]) -> (u16, std::thread::JoinHandle<String>) {
        let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = upstream.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = upstream.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut got = Vec::new();
            let mut b = [0u8; 4096];
            let mut answered = false;
            loop {
                match s.read(&mut b) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&b[..n]),
                }
                if !answered && find(&got, b"\r\n\r\n").is_some() {
                    answered = true;
                    s.write_all(answer).unwrap();
                }
            }
            String::from_utf8_lossy(&got).into_owned()
        });
        (port, server)
    }

    fn bridge_to(port: u16) -> (KeyProxy, std::net::SocketAddr) {
        let inside = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = inside.local_addr().unwrap();
        let proxy = KeyProxy::serve(
            inside,
            KeyProxyConfig {
                upstream: format!("http://127.0.0.1:{port}"),
                headers: vec![],
                query_key: None,
                pins: vec![],
                http_rule: None,
            },
            Arc::new(|_: &KeyProxyRecord| {}),
        )
        .unwrap();
        (proxy, addr)
    }

    /// Sends `data`, reads for a moment, closes; what came back.
    fn exchange(addr: std::net::SocketAddr, data: &[u8], then: &[u8]) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(data).unwrap();
        c.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut got = Vec::new();
        let mut b = [0u8; 4096];
        while let Ok(n) = c.read(&mut b) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&b[..n]);
        }
        let _ = c.write_all(then);
        std::thread::sleep(Duration::from_millis(200));
        drop(c);
        String::from_utf8_lossy(&got).into_owned()
    }

    #[test]
    fn a_request_pipelined_behind_another_never_reaches_the_upstream() {
        let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        // Behind a request with a body, and behind one without.
        for first in [
            &b"POST /one HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"[..],
            &b"GET /one HTTP/1.1\r\nHost: x\r\n\r\n"[..],
            &b"POST /one HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\n{}\r\n0\r\nX-T: 1\r\n\r\n"[..],
        ] {
            let (port, server) = keep_alive_upstream(answer);
            let (_proxy, addr) = bridge_to(port);
            let mut data = first.to_vec();
            data.extend_from_slice(b"GET /two HTTP/1.1\r\nHost: elsewhere\r\n\r\n");
            let back = exchange(
                addr,
                &data,
                b"GET /three HTTP/1.1\r\nHost: elsewhere\r\n\r\n",
            );
            assert!(back.ends_with("ok"), "{back}");
            let got = server.join().unwrap();
            assert!(got.contains("/one"), "{got}");
            if got.contains("chunked") {
                assert!(got.ends_with("0\r\nX-T: 1\r\n\r\n"), "{got}");
            }
            assert!(!got.contains("/two") && !got.contains("/three"), "{got}");
        }
    }

    #[test]
    fn an_upgrade_is_both_ways_only_once_the_upstream_switches() {
        // Declined: what the client sent after the handshake is dropped.
        let (port, server) = keep_alive_upstream(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno");
        let (_proxy, addr) = bridge_to(port);
        let back = exchange(
            addr,
            b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET /two HTTP/1.1\r\nHost: elsewhere\r\n\r\n",
            b"GET /three HTTP/1.1\r\nHost: elsewhere\r\n\r\n",
        );
        assert!(back.ends_with("no"), "{back}");
        let got = server.join().unwrap();
        assert!(got.contains("Connection: Upgrade\r\n"), "{got}");
        assert!(!got.contains("/two") && !got.contains("/three"), "{got}");
        // Accepted: the frames flow both ways, also those sent early.
        let (port, server) = keep_alive_upstream(
            b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
        );
        let (_proxy, addr) = bridge_to(port);
        let back = exchange(
            addr,
            b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nframe-one",
            b"frame-two",
        );
        assert!(back.starts_with("HTTP/1.1 101"), "{back}");
        let got = server.join().unwrap();
        assert!(
            got.contains("frame-one") && got.contains("frame-two"),
            "{got}"
        );
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
                http_rule: None,
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
            http_rule: None,
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
            http_rule: None,
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
            http_rule: None,
        });
        assert!(
            answer.contains("is the model server running there?"),
            "{answer}"
        );
    }
}
