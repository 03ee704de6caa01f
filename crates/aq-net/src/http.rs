//! HTTP proxy front end: `CONNECT host:port` and requests with an absolute
//! `http://` URI, each turned into one broker request.
//!
//! A plain request is sent upstream in origin form with `Connection: close`
//! and the proxy's own headers removed, so one client connection carries one
//! request to one destination: a keep-alive connection cannot be reused for
//! another host behind the broker's back.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use crate::allowlist::{Refusal, RefusalRule};
use crate::broker::{Broker, BrokerError, FrontEnd};
use crate::error::RequestError;

/// Longest request head accepted.
const MAX_HEAD: usize = 64 * 1024;

/// A parsed proxy request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Request {
    /// `CONNECT host:port`.
    Connect { host: String, port: u16 },
    /// An absolute-URI request, with the head to send upstream.
    Plain {
        host: String,
        port: u16,
        head: Vec<u8>,
        /// The body's length (`Content-Length`; 0 without one).
        body: u64,
    },
}

/// Reads the head (up to the blank line); returns it and whatever came after.
fn read_head(client: &mut TcpStream) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed before the end of the request head",
            ));
        }
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            let end = from + i + 4;
            let rest = buf.split_off(end);
            return Ok((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request head longer than 64 KiB",
            ));
        }
    }
}

/// Splits `host:port` (`[v6]:port`); the port is required when `default`
/// is `None`.
pub(crate) fn split_authority(
    auth: &str,
    default: Option<u16>,
) -> Result<(String, u16), RequestError> {
    let (host, port) = if auth.starts_with('[') {
        match auth.find(']') {
            Some(i) => {
                let (h, rest) = auth.split_at(i + 1);
                (h, rest.strip_prefix(':'))
            }
            None => {
                return Err(RequestError::Authority {
                    authority: auth.to_string(),
                });
            }
        }
    } else {
        match auth.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (auth, None),
        }
    };
    let port = match (port, default) {
        (Some(p), _) => {
            p.parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| RequestError::Port {
                    authority: auth.to_string(),
                })?
        }
        (None, Some(d)) => d,
        (None, None) => {
            return Err(RequestError::NoPort {
                authority: auth.to_string(),
            });
        }
    };
    if host.is_empty() {
        return Err(RequestError::NoHost {
            authority: auth.to_string(),
        });
    }
    Ok((host.to_string(), port))
}

/// Headers a proxy must not forward (hop by hop, or meant for the proxy).
const DROPPED: [&str; 5] = [
    "proxy-connection",
    "proxy-authorization",
    "connection",
    "keep-alive",
    "te",
];

/// Parses a request head; see the module docs.
pub(crate) fn parse_request(head: &[u8]) -> Result<Request, RequestError> {
    let text = std::str::from_utf8(head).map_err(|_| RequestError::NotUtf8)?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or("");
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(RequestError::MalformedLine {
            line: line.to_string(),
        });
    };
    if !version.starts_with("HTTP/1.") {
        return Err(RequestError::Version {
            version: version.to_string(),
        });
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_authority(target, None)?;
        return Ok(Request::Connect { host, port });
    }
    let rest = match target.get(..7) {
        Some(s) if s.eq_ignore_ascii_case("http://") => &target[7..],
        _ if target.starts_with('/') => {
            return Err(RequestError::OriginForm);
        }
        _ => {
            return Err(RequestError::NotHttp {
                target: target.to_string(),
            });
        }
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (auth, path) = rest.split_at(end);
    if auth.contains('@') {
        return Err(RequestError::Credentials);
    }
    let (host, port) = split_authority(auth, Some(80))?;
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('/') => p.to_string(),
        p => format!("/{p}"),
    };
    // The Host header is the URI's: the host the broker judged, never
    // another virtual host on the same address.
    let mut out = format!("{method} {path} {version}\r\nHost: {auth}\r\n");
    let mut body: Option<u64> = None;
    for h in lines.take_while(|l| !l.is_empty()) {
        if h.contains(['\r', '\n', '\0']) {
            return Err(RequestError::BareControl);
        }
        let (name, value) = h.split_once(':').unwrap_or((h, ""));
        let name = name.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(RequestError::Chunked);
        }
        if name.eq_ignore_ascii_case("content-length") {
            let n: u64 = value
                .trim()
                .parse()
                .map_err(|_| RequestError::ContentLength {
                    value: value.trim().to_string(),
                })?;
            if body.is_some_and(|b| b != n) {
                return Err(RequestError::TwoContentLengths);
            }
            body = Some(n);
        }
        if name.eq_ignore_ascii_case("host") || DROPPED.iter().any(|d| name.eq_ignore_ascii_case(d))
        {
            continue;
        }
        out.push_str(h);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(Request::Plain {
        host,
        port,
        head: out.into_bytes(),
        body: body.unwrap_or(0),
    })
}

/// Status line for a refusal.
fn status(e: &BrokerError) -> &'static str {
    match e.refusal.rule {
        RefusalRule::BadRequest => "400 Bad Request",
        RefusalRule::ConnectFailed if e.io_kind == Some(io::ErrorKind::TimedOut) => {
            "504 Gateway Timeout"
        }
        RefusalRule::ResolveFailed | RefusalRule::ConnectFailed => "502 Bad Gateway",
        _ => "403 Forbidden",
    }
}

/// The status line's reason phrase for a refusal: for a policy refusal
/// the refusal itself, since many clients show only the status line of a
/// failed `CONNECT` (Python's `Tunnel connection failed: 403 ...`), never
/// its body. Printable ASCII only, and short.
fn reason_phrase(e: &BrokerError, status: &str) -> String {
    let (_, standard) = status.split_once(' ').unwrap_or(("", status));
    if !e.refusal.rule.is_policy() {
        return standard.to_string();
    }
    let text: String = format!("{standard} by aq: {}", e.refusal)
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .take(300)
        .collect();
    text
}

/// Writes an error response whose body is the refusal, rule id included.
fn write_refusal(client: &mut TcpStream, e: &BrokerError) -> io::Result<()> {
    let body = format!("aq: {}\n", e.refusal);
    let status = status(e);
    let code = status.split_once(' ').map_or(status, |(c, _)| c);
    let head = format!(
        "HTTP/1.1 {code} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         X-Aq-Rule: {}\r\nConnection: close\r\n\r\n",
        reason_phrase(e, status),
        body.len(),
        e.refusal.rule
    );
    client.write_all(head.as_bytes())?;
    client.write_all(body.as_bytes())
}

/// Serves one HTTP proxy client.
pub(crate) fn serve(mut client: TcpStream, broker: &Broker) -> io::Result<()> {
    let started = Instant::now();
    let (head, rest) = read_head(&mut client)?;
    let request = match parse_request(&head) {
        Ok(r) => r,
        Err(e) => {
            let why = e.to_string();
            broker.record_bad_request(FrontEnd::HttpPlain, &why, started);
            let e = BrokerError {
                refusal: Refusal::new(RefusalRule::BadRequest, why),
                addr: None,
                io_kind: None,
            };
            return write_refusal(&mut client, &e);
        }
    };
    let (host, port, front, first) = match request {
        Request::Connect { host, port } => (host, port, FrontEnd::HttpConnect, None),
        Request::Plain {
            host,
            port,
            head,
            body,
        } => (host, port, FrontEnd::HttpPlain, Some((head, body))),
    };
    let mut tunnel = match broker.open_from(&host, port, front, client.peer_addr().ok()) {
        Ok(t) => t,
        Err(e) => return write_refusal(&mut client, &e),
    };
    if let Some(intercept) = broker.intercept_for(tunnel.host()) {
        let host = tunnel.host().to_string();
        if first.is_some() {
            // Plain http:// to a host whose requests are judged: HTTPS only.
            let e = BrokerError {
                refusal: Refusal::new(
                    RefusalRule::HttpRule,
                    format!(
                        "{host} takes HTTPS only: its requests are judged by an HTTP rule or carry a credential"
                    ),
                ),
                addr: None,
                io_kind: None,
            };
            return write_refusal(&mut client, &e);
        }
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
        client.set_read_timeout(None)?;
        if let Some(up) = tunnel.take_upstream() {
            intercept.serve(client, up, &host, port);
        }
        return Ok(());
    }
    if let Some((head, body)) = first {
        // One request: its head, exactly its body, then only the answer
        // comes back (a request pipelined behind it is never sent).
        tunnel.send_up(&head)?;
        let mut left = body;
        let now = rest.len().min(left as usize);
        tunnel.send_up(&rest[..now])?;
        left -= now as u64;
        let mut buf = vec![0u8; 64 * 1024];
        while left > 0 {
            let want = buf.len().min(left as usize);
            let n = client.read(&mut buf[..want])?;
            if n == 0 {
                break;
            }
            tunnel.send_up(&buf[..n])?;
            left -= n as u64;
        }
        client.set_read_timeout(None)?;
        tunnel.relay_down(client);
        return Ok(());
    }
    client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
    if !rest.is_empty() {
        tunnel.send_up(&rest)?;
    }
    client.set_read_timeout(None)?;
    tunnel.splice(client);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(head: &str) -> (String, u16, String) {
        match parse_request(head.as_bytes()).unwrap() {
            Request::Plain {
                host, port, head, ..
            } => (host, port, String::from_utf8(head).unwrap()),
            r => panic!("{r:?}"),
        }
    }

    #[test]
    fn connect_targets() {
        for (line, host, port) in [
            ("CONNECT example.com:443 HTTP/1.1", "example.com", 443),
            ("connect [2001:db8::1]:8443 HTTP/1.0", "[2001:db8::1]", 8443),
        ] {
            let head = format!("{line}\r\nHost: x\r\n\r\n");
            assert_eq!(
                parse_request(head.as_bytes()),
                Ok(Request::Connect {
                    host: host.into(),
                    port
                }),
                "{line}"
            );
        }
        for bad in [
            "CONNECT example.com HTTP/1.1",
            "CONNECT example.com:0 HTTP/1.1",
            "CONNECT :80 HTTP/1.1",
        ] {
            assert!(
                parse_request(format!("{bad}\r\n\r\n").as_bytes()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn plain_request_is_rewritten_to_origin_form_with_connection_close() {
        let (host, port, head) = plain(
            "GET http://Allowed.example.invalid:8080/a/b?q=1 HTTP/1.1\r\nHost: Allowed.example.invalid:8080\r\n\
             Proxy-Connection: Keep-Alive\r\nProxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\n\
             Accept: */*\r\n\r\n",
        );
        assert_eq!((host.as_str(), port), ("Allowed.example.invalid", 8080));
        assert_eq!(
            head,
            "GET /a/b?q=1 HTTP/1.1\r\nHost: Allowed.example.invalid:8080\r\nAccept: */*\r\n\
             Connection: close\r\n\r\n"
        );
        let (_, port, head) = plain("GET http://e.example HTTP/1.0\r\n\r\n");
        assert_eq!(port, 80);
        assert_eq!(
            head,
            "GET / HTTP/1.0\r\nHost: e.example\r\nConnection: close\r\n\r\n"
        );
        let (_, _, head) = plain("GET http://e.example?x HTTP/1.1\r\n\r\n");
        assert!(head.starts_with("GET /?x HTTP/1.1\r\n"), "{head}");
    }

    #[test]
    fn requests_a_proxy_does_not_forward() {
        for (head, why) in [
            ("GET / HTTP/1.1\r\n\r\n", "send an absolute URI"),
            ("GET https://e.example/ HTTP/1.1\r\n\r\n", "use CONNECT"),
            ("GET http://u:p@e.example/ HTTP/1.1\r\n\r\n", "credentials"),
            (
                "GET http://e.example/ SPDY/3\r\n\r\n",
                "unsupported version",
            ),
            (
                "GET  http://e.example/ HTTP/1.1\r\n\r\n",
                "malformed request line",
            ),
        ] {
            let e = parse_request(head.as_bytes()).unwrap_err().to_string();
            assert!(e.contains(why), "{head:?}: {e}");
        }
    }
}
