//! Looking inside TLS, for the hosts that need it: those with an HTTP rule
//! (which methods and paths may go) or a credential the broker adds (the
//! token stays outside the sandbox). Every other host stays a plain tunnel.
//!
//! For such a host, the broker answers the client's `CONNECT`, then speaks
//! TLS to it with a certificate for that name signed by the session's own
//! CA (`SessionCa`: made when the session starts, its key only in this
//! process's memory, trusted only inside the sandbox), and TLS to the real
//! host, verified against the real roots. Between the two, each request is
//! read whole before anything goes up, as the key proxy reads the model
//! API's ([`crate::keyproxy`]: one request per connection, `Connection:
//! close` upstream, a request pipelined behind it dropped): refused when the
//! HTTP rule does not allow its method and path (a 403 naming the rule and
//! the remedy), else sent with the credential header put in (a header of
//! that name from the client is replaced).

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

use crate::error::{HttpRefusal, ProxySetupError};
use crate::keyproxy::{KeyProxyConfig, KeyProxyRecord};

/// Which requests may go to a host: methods (upper case) and, when any are
/// given, path prefixes (the path without its query).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpRule {
    /// Allowed methods, e.g. `GET`, `HEAD`; empty: any.
    pub methods: Vec<String>,
    /// Allowed path prefixes, e.g. `/v1/`; empty: any.
    pub paths: Vec<String>,
}

/// Headers by which some servers take another method than the request
/// line's: with a method rule, a request carrying one is refused.
const METHOD_OVERRIDES: &[&str] = &[
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
];

impl HttpRule {
    /// Judges a request: `request` is `METHOD /path` (as the key proxy
    /// records it), `head` its whole head. TRACE and TRACK are refused
    /// whatever the rule says: a server that echoes them would hand the
    /// credential the broker added back to the sandbox.
    pub(crate) fn check_request(&self, request: &str, head: &str) -> Result<(), HttpRefusal> {
        let (method, path) = request.split_once(' ').unwrap_or((request, "/"));
        if method.eq_ignore_ascii_case("TRACE") || method.eq_ignore_ascii_case("TRACK") {
            return Err(HttpRefusal::Echo {
                method: method.to_string(),
                path: path.to_string(),
            });
        }
        if !self.methods.is_empty()
            && let Some(h) = head.split("\r\n").skip(1).find_map(|l| {
                let name = l.split(':').next()?.trim().to_ascii_lowercase();
                METHOD_OVERRIDES.contains(&name.as_str()).then_some(name)
            })
        {
            return Err(HttpRefusal::MethodOverride {
                method: method.to_string(),
                path: path.to_string(),
                header: h,
            });
        }
        self.check(request)
    }

    /// Judges `request` (`METHOD /path`, as the key proxy records it; a
    /// query, if there, is not part of the path).
    pub fn check(&self, request: &str) -> Result<(), HttpRefusal> {
        let (method, target) = request.split_once(' ').unwrap_or((request, "/"));
        let path = target.split('?').next().unwrap_or(target);
        if !self.methods.is_empty() && !self.methods.iter().any(|m| m == method) {
            return Err(HttpRefusal::Method {
                method: method.to_string(),
                path: path.to_string(),
                allowed: self.methods.clone(),
            });
        }
        if !self.paths.is_empty() && !self.paths.iter().any(|p| path_under(path, p)) {
            return Err(HttpRefusal::Path {
                method: method.to_string(),
                path: path.to_string(),
                allowed: self.paths.clone(),
            });
        }
        Ok(())
    }
}

/// Whether `path` lies under `prefix`. A prefix ending in `/` is a
/// directory; one that does not matches itself and what lies below it
/// (`/v1` matches `/v1` and `/v1/x`, not `/v10`). Paths with `..` or
/// encoded slashes and dots never match: a server could read them as
/// another path.
fn path_under(path: &str, prefix: &str) -> bool {
    if path.split('/').any(|seg| seg == ".." || seg == ".")
        || path.contains(['\\', ';'])
        || !path.is_ascii()
        || !escapes_are_plain(path)
    {
        return false;
    }
    if prefix.ends_with('/') {
        path.starts_with(prefix)
    } else {
        path == prefix || path.starts_with(&format!("{prefix}/"))
    }
}

/// Whether every `%XX` in `path` stands for a byte no server reads as
/// structure: not `.`, `/`, `\`, `;`, `%` (a double encoding), nor a byte
/// above 0x7f (overlong UTF-8 forms of `.` and `/`); a `%` without two hex
/// digits is refused too.
fn escapes_are_plain(path: &str) -> bool {
    let b = path.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let Some(byte) = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            else {
                return false;
            };
            if byte >= 0x80 || b"./\\;%".contains(&byte) {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

/// What the broker does for one intercepted host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostRules {
    /// Which requests may go (`None`: any).
    pub http: Option<HttpRule>,
    /// A header the broker puts on every request: name and value.
    pub credential: Option<(String, String)>,
}

/// Gets every intercepted request's record, from its own thread.
pub type InterceptRecorder = Arc<dyn Fn(&KeyProxyRecord) + Send + Sync>;

/// The hosts looked into, the session's CA and the upstream trust.
pub struct Intercept {
    ca: SessionCa,
    hosts: BTreeMap<String, HostRules>,
    upstream_tls: Arc<rustls::ClientConfig>,
    leaves: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
    recorder: InterceptRecorder,
}

impl std::fmt::Debug for Intercept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Intercept")
            .field("hosts", &self.hosts.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Intercept {
    /// Looks into `hosts` (normalised names), verifying each upstream
    /// against `roots` (the system's when `None`, as the key proxy does).
    pub fn new(
        hosts: BTreeMap<String, HostRules>,
        roots: Option<rustls::RootCertStore>,
        recorder: InterceptRecorder,
    ) -> Result<Intercept, ProxySetupError> {
        let roots = match roots {
            Some(r) => r,
            None => crate::keyproxy::system_roots()?,
        };
        let mut upstream_tls = crate::keyproxy::client_config_for(roots)?;
        upstream_tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Intercept {
            ca: SessionCa::new()?,
            hosts,
            upstream_tls: Arc::new(upstream_tls),
            leaves: Mutex::new(HashMap::new()),
            recorder,
        })
    }

    /// The session CA's certificate (PEM), for the sandbox's trust.
    pub fn ca_pem(&self) -> &str {
        &self.ca.cert_pem
    }

    /// Whether `host` (normalised) is looked into.
    pub fn covers(&self, host: &str) -> bool {
        self.hosts.contains_key(host)
    }

    /// Serves one `CONNECT` to `host:port` whose `200` the client has had:
    /// TLS with the client, each request judged and sent over TLS on
    /// `upstream` (connected by the broker to the address it vetted).
    pub(crate) fn serve(&self, client: TcpStream, upstream: TcpStream, host: &str, port: u16) {
        let Some(rules) = self.hosts.get(host) else {
            return;
        };
        let record = match self.server_config(host) {
            Ok(server) => self.exchange(client, upstream, host, port, rules, server),
            Err(e) => failed(host, port, e.to_string()),
        };
        (self.recorder)(&record);
    }

    fn exchange(
        &self,
        client: TcpStream,
        upstream: TcpStream,
        host: &str,
        port: u16,
        rules: &HostRules,
        server: Arc<rustls::ServerConfig>,
    ) -> KeyProxyRecord {
        let config = KeyProxyConfig {
            upstream: format!("https://{host}:{port}"),
            headers: rules
                .credential
                .iter()
                .map(|(name, value)| (name.to_ascii_lowercase(), String::new(), value.clone()))
                .collect(),
            query_key: None,
            pins: Vec::new(),
            // Every host read here is judged: with no rule of its own, any
            // method and path, but never TRACE or an upgrade.
            http_rule: Some(rules.http.clone().unwrap_or_default()),
        };
        let target = crate::keyproxy::parse_upstream(&config.upstream)
            .expect("an https URL of a normalised host");
        let (ours, theirs) = match UnixStream::pair() {
            Ok(p) => p,
            Err(e) => return failed(host, port, format!("cannot bridge TLS: {e}")),
        };
        let tls = match rustls::ServerConnection::new(server) {
            Ok(t) => t,
            Err(e) => return failed(host, port, format!("TLS with the client: {e}")),
        };
        // The request head must arrive soon, whole: a client that holds a
        // connection open without one holds one of the broker's slots.
        let _ = theirs.set_read_timeout(Some(crate::server::HANDSHAKE_TIMEOUT));
        let bridge = std::thread::Builder::new()
            .name("aq-net-tls".into())
            .spawn(move || tls_bridge(client, tls, ours));
        let mut record = crate::keyproxy::handle_with(
            theirs,
            &config,
            &target,
            Some(self.upstream_tls.clone()),
            Some(upstream),
            failure_502,
        );
        if let Ok(b) = bridge
            && let Ok(Err(e)) = b.join()
            && record.error.is_none()
            && record.request.is_empty()
        {
            record.error = Some(e);
        }
        record
    }

    fn server_config(&self, host: &str) -> Result<Arc<rustls::ServerConfig>, ProxySetupError> {
        if let Some(c) = self.leaves.lock().ok().and_then(|l| l.get(host).cloned()) {
            return Ok(c);
        }
        let (chain, key) = self.ca.leaf(host)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|source| ProxySetupError::Protocols { source })?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|source| ProxySetupError::ServerCert {
                host: host.to_string(),
                source,
            })?;
        // HTTP/1.1 only: each request is read whole before it goes up.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        if let Ok(mut l) = self.leaves.lock() {
            l.insert(host.to_string(), config.clone());
        }
        Ok(config)
    }
}

fn failed(host: &str, port: u16, why: String) -> KeyProxyRecord {
    KeyProxyRecord {
        host: host.to_string(),
        port,
        request: String::new(),
        keyed: false,
        error: Some(why),
        denied: false,
        bytes_up: 0,
        bytes_down: 0,
        duration_ms: 0,
    }
}

/// What a client gets when its request could not be carried (the real
/// host's certificate did not verify, it could not be reached).
fn failure_502(why: &str) -> Vec<u8> {
    let body = format!("aq: the request was not carried: {why} [net-connect-failed]\n");
    format!(
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         X-Aq-Rule: net-connect-failed\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The 403 a refused request gets: the reason, and how the user changes
/// the rule.
pub(crate) fn refusal_403(host: &str, why: &str) -> Vec<u8> {
    let body = format!(
        "aq: {host}: {why} [net-http-rule]; the user can change the rule in [network.http.\"{host}\"] of their policy\n"
    );
    format!(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         X-Aq-Rule: net-http-rule\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Moves bytes between the client's TLS connection and the plaintext end
/// of the bridge until both are done.
fn tls_bridge(
    mut tcp: TcpStream,
    mut tls: rustls::ServerConnection,
    mut plain: UnixStream,
) -> Result<(), String> {
    tcp.set_nonblocking(true).map_err(|e| e.to_string())?;
    plain.set_nonblocking(true).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut to_plain: Vec<u8> = Vec::new();
    let mut tcp_open = true;
    let mut plain_open = true;
    let mut closed_tls = false;
    let started = std::time::Instant::now();
    loop {
        if tls.is_handshaking() && started.elapsed() > crate::server::HANDSHAKE_TIMEOUT {
            return Err("the client did not finish its TLS handshake in time".to_string());
        }
        // TLS records out to the client.
        while tls.wants_write() {
            match tls.write_tls(&mut tcp) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => return Ok(()),
            }
        }
        if !to_plain.is_empty() {
            match plain.write(&to_plain) {
                Ok(n) => {
                    to_plain.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => plain_open = false,
            }
        }
        if !tcp_open && to_plain.is_empty() {
            let _ = plain.shutdown(Shutdown::Write);
        }
        if !plain_open && !closed_tls {
            closed_tls = true;
            tls.send_close_notify();
            continue;
        }
        if closed_tls && !tls.wants_write() {
            let _ = tcp.shutdown(Shutdown::Both);
            return Ok(());
        }
        if !tcp_open && !plain_open {
            return Ok(());
        }
        let mut fds = [
            libc::pollfd {
                fd: tcp.as_raw_fd(),
                events: (if tcp_open { libc::POLLIN } else { 0 })
                    | (if tls.wants_write() { libc::POLLOUT } else { 0 }),
                revents: 0,
            },
            libc::pollfd {
                fd: plain.as_raw_fd(),
                events: (if plain_open { libc::POLLIN } else { 0 })
                    | (if to_plain.is_empty() {
                        0
                    } else {
                        libc::POLLOUT
                    }),
                revents: 0,
            },
        ];
        let wait_ms = if tls.is_handshaking() { 1000 } else { 300_000 };
        // SAFETY: two valid pollfds.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, wait_ms) };
        if r == 0 {
            if tls.is_handshaking() {
                continue;
            }
            return Err("no traffic for 300 s".to_string());
        }
        if r < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(io::Error::last_os_error().to_string());
        }
        let ready = libc::POLLIN | libc::POLLHUP | libc::POLLERR;
        if tcp_open && fds[0].revents & ready != 0 {
            match tls.read_tls(&mut tcp) {
                Ok(0) => tcp_open = false,
                Ok(_) => {
                    if let Err(e) = tls.process_new_packets() {
                        while tls.wants_write() && tls.write_tls(&mut tcp).is_ok() {}
                        return Err(format!("TLS with the client: {e}"));
                    }
                    loop {
                        match tls.reader().read(&mut buf) {
                            Ok(0) => {
                                tcp_open = false;
                                break;
                            }
                            Ok(n) => to_plain.extend_from_slice(&buf[..n]),
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                            Err(_) => {
                                tcp_open = false;
                                break;
                            }
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => tcp_open = false,
            }
        }
        if plain_open && fds[1].revents & ready != 0 {
            match plain.read(&mut buf) {
                Ok(0) => plain_open = false,
                Ok(n) => {
                    if tls.writer().write_all(&buf[..n]).is_err() {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => plain_open = false,
            }
        }
    }
}

/// The session's certificate authority: made fresh for each session, its
/// key never written anywhere, gone when the session ends.
struct SessionCa {
    cert_pem: String,
    cert_der: rustls::pki_types::CertificateDer<'static>,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl SessionCa {
    fn new() -> Result<SessionCa, ProxySetupError> {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
        let key = KeyPair::generate().map_err(|source| ProxySetupError::CaKey { source })?;
        let mut params = CertificateParams::new(Vec::<String>::new())
            .map_err(|source| ProxySetupError::CaParams { source })?;
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params
            .distinguished_name
            .push(DnType::CommonName, "aq session CA (this session only)");
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let now = std::time::SystemTime::now();
        params.not_before = (now - std::time::Duration::from_secs(3600)).into();
        params.not_after = (now + std::time::Duration::from_secs(7 * 24 * 3600)).into();
        let cert = params
            .self_signed(&key)
            .map_err(|source| ProxySetupError::CaCert { source })?;
        Ok(SessionCa {
            cert_pem: cert.pem(),
            cert_der: cert.der().clone(),
            issuer: rcgen::Issuer::new(params, key),
        })
    }

    /// A certificate for `host` and its key.
    #[allow(clippy::type_complexity)]
    fn leaf(
        &self,
        host: &str,
    ) -> Result<
        (
            Vec<rustls::pki_types::CertificateDer<'static>>,
            rustls::pki_types::PrivateKeyDer<'static>,
        ),
        ProxySetupError,
    > {
        use rcgen::{CertificateParams, KeyPair};
        let key = KeyPair::generate().map_err(|source| ProxySetupError::LeafKey { source })?;
        let mut params = CertificateParams::new(vec![host.to_string()]).map_err(|source| {
            ProxySetupError::LeafParams {
                host: host.to_string(),
                source,
            }
        })?;
        let now = std::time::SystemTime::now();
        params.not_before = (now - std::time::Duration::from_secs(3600)).into();
        params.not_after = (now + std::time::Duration::from_secs(7 * 24 * 3600)).into();
        let cert =
            params
                .signed_by(&key, &self.issuer)
                .map_err(|source| ProxySetupError::LeafCert {
                    host: host.to_string(),
                    source,
                })?;
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
        Ok((vec![cert.der().clone(), self.cert_der.clone()], key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::client::danger::ServerCertVerifier;

    #[test]
    fn http_rules_judge_methods_and_path_prefixes() {
        let rule = HttpRule {
            methods: vec!["GET".into(), "HEAD".into()],
            paths: vec!["/v1/".into(), "/status".into()],
        };
        for ok in ["GET /v1/items", "HEAD /v1/", "GET /status", "GET /status/x"] {
            assert_eq!(rule.check(ok), Ok(()), "{ok}");
        }
        for no in [
            "POST /v1/items",
            "get /v1/items",
            "GET /v2/items",
            "GET /statusx",
            "GET /v1/../admin",
            "GET /v1/%2e%2e/admin",
            "GET /v1/a%2Fb",
            "GET /v1/..;/admin",
            "GET /v1/..%3b/admin",
            "GET /v1/%252e%252e/admin",
            "GET /v1/%c0%ae%c0%ae/admin",
            "GET /v1/\u{2025}/admin",
            "GET /v1/%zz",
            "DELETE /status",
        ] {
            assert!(rule.check(no).is_err(), "{no}");
        }
        assert_eq!(rule.check("GET /v1/a%20b%41"), Ok(()), "plain escapes pass");
        let head = |h: &str| format!("GET /v1/x HTTP/1.1\r\nHost: a\r\n{h}");
        assert!(
            rule.check_request("GET /v1/x", &head("X-HTTP-Method-Override: DELETE"))
                .is_err()
        );
        assert!(
            rule.check_request("GET /v1/x", &head("x-method-override: PUT"))
                .is_err()
        );
        assert_eq!(
            rule.check_request("GET /v1/x", &head("Accept: */*")),
            Ok(())
        );
        let open = HttpRule::default();
        assert!(open.check_request("TRACE /", "TRACE / HTTP/1.1").is_err());
        assert!(open.check_request("track /", "track / HTTP/1.1").is_err());
        assert_eq!(
            open.check_request("DELETE /x", "DELETE /x HTTP/1.1"),
            Ok(())
        );
        let any_path = HttpRule {
            methods: vec!["GET".into()],
            paths: vec![],
        };
        assert_eq!(any_path.check("GET /anything/at/all"), Ok(()));
        assert!(any_path.check("PUT /x").is_err());
    }

    #[test]
    fn the_session_ca_signs_a_leaf_for_the_host_that_verifies_against_it_only() {
        let ca = SessionCa::new().unwrap();
        let (chain, _key) = ca.leaf("api.example.invalid").unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.cert_der.clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier =
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap();
        let now = rustls::pki_types::UnixTime::now();
        let name = |n: &str| rustls::pki_types::ServerName::try_from(n.to_string()).unwrap();
        assert!(
            verifier
                .verify_server_cert(
                    &chain[0],
                    &chain[1..],
                    &name("api.example.invalid"),
                    &[],
                    now
                )
                .is_ok()
        );
        assert!(
            verifier
                .verify_server_cert(
                    &chain[0],
                    &chain[1..],
                    &name("other.example.invalid"),
                    &[],
                    now
                )
                .is_err(),
            "the leaf names only its host"
        );
        // Another session's CA does not vouch for it.
        let other = SessionCa::new().unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(other.cert_der.clone()).unwrap();
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .unwrap();
        assert!(
            verifier
                .verify_server_cert(
                    &chain[0],
                    &chain[1..],
                    &name("api.example.invalid"),
                    &[],
                    now
                )
                .is_err()
        );
    }
}
