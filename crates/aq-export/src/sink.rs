//! Sending formatted records: OTLP over HTTP(S) with a blocking client,
//! syslog over a unix datagram socket, UDP or TCP. Nothing connects until
//! the first send, and a failed connection is tried again at the next, so
//! a collector that comes up late still gets the rest.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::time::{Duration, SystemTime};

use aq_audit::Record;
use aq_policy::{Endpoint, ExportFormat, ExportTarget};

use crate::error::{HeadersError, SyslogError};
use crate::{otlp, syslog};

/// How long to wait for a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one request (or one write) may take in all.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How much of a collector's error answer is quoted.
const ANSWER_QUOTE: u64 = 512;

/// A failed send: what went wrong, and how many of the batch got there
/// before it did (syslog sends one message at a time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendError {
    /// What went wrong, with the HTTP status when there was one.
    pub message: String,
    /// The HTTP status the collector answered, if it answered.
    pub status: Option<u16>,
    /// Records of the batch delivered before the failure.
    pub delivered: usize,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn failed(message: String) -> SendError {
    SendError {
        message,
        status: None,
        delivered: 0,
    }
}

/// Where records go, connected on demand.
pub struct Sink {
    target: ExportTarget,
    host: Option<String>,
    conn: Conn,
    /// OTLP headers from the environment (see [`crate::otel_env`]), or why
    /// they could not be read: then every send fails with that reason
    /// rather than going out without the collector's key.
    headers: Result<Vec<(String, String)>, HeadersError>,
}

/// Whether an http(s) URL names this machine (`localhost`, 127.0.0.0/8, `::1`).
fn is_loopback_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

enum Conn {
    Http(ureq::Agent),
    Unix(Option<UnixDatagram>),
    Udp(Option<UdpSocket>),
    Tcp(Option<TcpStream>),
}

impl Sink {
    /// A sink for `target`; nothing is opened yet.
    pub fn new(target: &ExportTarget) -> Sink {
        let conn = match &target.endpoint {
            Endpoint::Http { url } => Conn::Http(
                ureq::Agent::config_builder()
                    // A collector on this machine is reached directly: a
                    // proxy from the environment (HTTPS_PROXY without a
                    // NO_PROXY for loopback) would send the log away.
                    .proxy(if is_loopback_url(url) {
                        None
                    } else {
                        ureq::Proxy::try_from_env()
                    })
                    .timeout_connect(Some(CONNECT_TIMEOUT))
                    .timeout_global(Some(IO_TIMEOUT))
                    .http_status_as_error(false)
                    .user_agent(concat!("agent-quarantine/", env!("CARGO_PKG_VERSION")))
                    .build()
                    .into(),
            ),
            Endpoint::Unix { .. } => Conn::Unix(None),
            Endpoint::Udp { .. } => Conn::Udp(None),
            Endpoint::Tcp { .. } => Conn::Tcp(None),
        };
        let headers = match target.format {
            ExportFormat::Otlp => crate::otel_env::headers_from_env(),
            ExportFormat::Syslog => Ok(Vec::new()),
        };
        Sink {
            target: target.clone(),
            host: hostname(),
            conn,
            headers,
        }
    }

    /// The target, for messages.
    pub fn target(&self) -> &ExportTarget {
        &self.target
    }

    /// How many records one send should carry.
    pub(crate) fn batch_size(&self) -> usize {
        match self.target.format {
            ExportFormat::Otlp => 256,
            ExportFormat::Syslog => 64,
        }
    }

    /// Sends a batch; on success, how many records the collector accepted
    /// (an OTLP receiver may reject some with a partial success).
    pub fn send(&mut self, records: &[Record]) -> Result<usize, SendError> {
        if records.is_empty() {
            return Ok(0);
        }
        match self.target.format {
            ExportFormat::Otlp => self.send_otlp(records),
            ExportFormat::Syslog => self.send_syslog(records),
        }
    }

    fn send_otlp(&mut self, records: &[Record]) -> Result<usize, SendError> {
        let (Conn::Http(agent), Endpoint::Http { url }) = (&self.conn, &self.target.endpoint)
        else {
            return Err(failed("an OTLP export needs an http(s) endpoint".into()));
        };
        let observed = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos().to_string())
            .unwrap_or_else(|_| "0".into());
        let headers = self.headers.as_ref().map_err(|e| failed(e.to_string()))?;
        let body = serde_json::to_vec(&otlp::request(records, self.host.as_deref(), &observed))
            .map_err(|e| failed(format!("cannot encode the records: {e}")))?;
        let mut request = agent.post(url).header("Content-Type", "application/json");
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let mut answer = request
            .send(&body[..])
            .map_err(|e| failed(format!("cannot reach {url}: {e}")))?;
        let status = answer.status().as_u16();
        let mut text = String::new();
        let _ = answer
            .body_mut()
            .as_reader()
            .take(ANSWER_QUOTE * 8)
            .read_to_string(&mut text);
        if !(200..300).contains(&status) {
            let quote = describe_answer(&text);
            return Err(SendError {
                message: format!(
                    "{url} answered HTTP {status}{}",
                    if quote.is_empty() {
                        String::new()
                    } else {
                        format!(": {quote}")
                    }
                ),
                status: Some(status),
                delivered: 0,
            });
        }
        let rejected = (otlp::rejected(&text) as usize).min(records.len());
        Ok(records.len() - rejected)
    }

    fn send_syslog(&mut self, records: &[Record]) -> Result<usize, SendError> {
        for (i, record) in records.iter().enumerate() {
            let message = syslog::message(record, self.host.as_deref());
            self.send_message(&message).map_err(|e| SendError {
                message: e.to_string(),
                status: None,
                delivered: i,
            })?;
        }
        Ok(records.len())
    }

    fn send_message(&mut self, message: &str) -> Result<(), SyslogError> {
        let place = self.target.to_string();
        let result = match (&mut self.conn, &self.target.endpoint) {
            (Conn::Unix(sock), Endpoint::Unix { path }) => {
                if sock.is_none() {
                    let s =
                        UnixDatagram::unbound().map_err(|source| SyslogError::Socket { source })?;
                    s.connect(path).map_err(|source| SyslogError::Connect {
                        to: path.clone(),
                        source,
                    })?;
                    s.set_write_timeout(Some(IO_TIMEOUT))
                        .map_err(|source| SyslogError::Socket { source })?;
                    *sock = Some(s);
                }
                let r = sock.as_ref().map(|s| s.send(message.as_bytes()));
                r.map(|r| r.map(drop))
            }
            (Conn::Udp(sock), Endpoint::Udp { addr }) => {
                if sock.is_none() {
                    let to = resolve(addr)?;
                    let local = if to.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
                    let s =
                        UdpSocket::bind(local).map_err(|source| SyslogError::Socket { source })?;
                    s.connect(to).map_err(|source| SyslogError::Connect {
                        to: addr.clone(),
                        source,
                    })?;
                    *sock = Some(s);
                }
                let r = sock.as_ref().map(|s| s.send(message.as_bytes()));
                r.map(|r| r.map(drop))
            }
            (Conn::Tcp(stream), Endpoint::Tcp { addr }) => {
                if stream.is_none() {
                    let to = resolve(addr)?;
                    let s = TcpStream::connect_timeout(&to, CONNECT_TIMEOUT).map_err(|source| {
                        SyslogError::Connect {
                            to: addr.clone(),
                            source,
                        }
                    })?;
                    s.set_write_timeout(Some(IO_TIMEOUT))
                        .map_err(|source| SyslogError::Socket { source })?;
                    *stream = Some(s);
                }
                let framed = syslog::frame(message);
                stream.as_mut().map(|s| s.write_all(framed.as_bytes()))
            }
            _ => return Err(SyslogError::Mismatch { place }),
        };
        match result {
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => {
                // Connect again next time: the peer may have restarted.
                match &mut self.conn {
                    Conn::Unix(s) => *s = None,
                    Conn::Udp(s) => *s = None,
                    Conn::Tcp(s) => *s = None,
                    Conn::Http(_) => {}
                }
                Err(SyslogError::Send { place, source: e })
            }
            None => Err(SyslogError::NotConnected { place }),
        }
    }
}

fn resolve(addr: &str) -> Result<std::net::SocketAddr, SyslogError> {
    addr.to_socket_addrs()
        .map_err(|source| SyslogError::Resolve {
            addr: addr.to_string(),
            source,
        })?
        .next()
        .ok_or_else(|| SyslogError::NoAddress {
            addr: addr.to_string(),
        })
}

/// A collector's error answer, cut short and on one line.
fn describe_answer(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    crate::describe::shorten(one_line.trim(), ANSWER_QUOTE as usize)
}

/// This machine's name, for syslog's HOSTNAME and OTLP's `host.name`.
pub fn hostname() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::is_loopback_url;

    #[test]
    fn loopback_collectors_are_recognised() {
        for url in [
            "http://127.0.0.1:4318/v1/logs",
            "http://localhost:4318",
            "https://[::1]:4318/v1/logs",
            "http://127.1.2.3/v1/logs",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "https://collector.example.invalid/v1/logs",
            "http://203.0.113.7:4318",
            "http://[2001:db8::1]:4318",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }
}
