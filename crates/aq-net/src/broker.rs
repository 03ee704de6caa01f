//! The broker: runs outside the sandbox and is the only code that resolves
//! names and opens connections on the sandbox's behalf.
//!
//! One request, in order:
//!
//! 1. normalise the host and judge `host:port` against the [`Allowlist`]
//!    ([`Allowlist::decide`]);
//! 2. a pinned name goes to its pinned address; any other name is resolved
//!    **once**, here ([`Resolve`], the system resolver by default, on a
//!    thread with a timeout);
//! 3. every address of the answer is classified and the whole answer refused
//!    if one is not public or permitted ([`Allowlist::check_addresses`]);
//! 4. connect to those addresses in order, by address, never by name, so
//!    nothing is resolved a second time (no rebinding window);
//! 5. the front end sends its reply, then [`Tunnel::splice`] copies bytes
//!    both ways (`splice(2)` through a pipe: the bytes never enter user space
//!    and are not looked at, TLS or not) until both directions end;
//! 6. a [`ConnectionRecord`] goes to the callback for the audit log: once per
//!    refusal, once per tunnel when it ends.

use std::fmt;
use std::io::{self, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::allowlist::{Allowlist, Destination, Refusal, RefusalRule};
use crate::copy::pump;

/// Resolves a name to addresses. The broker calls it at most once per
/// request, and never for a pinned name.
pub trait Resolve: Send + Sync {
    /// All addresses of `name`.
    fn resolve(&self, name: &str) -> io::Result<Vec<IpAddr>>;
}

/// The host's resolver (`getaddrinfo` through [`ToSocketAddrs`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        Ok((name, 0).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}

/// A fixed table, for tests and benchmarks: a name not in it does not
/// resolve.
#[derive(Clone, Debug, Default)]
pub struct FixedResolver(pub Vec<(String, Vec<IpAddr>)>);

impl Resolve for FixedResolver {
    fn resolve(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, a)| a.clone())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such name"))
    }
}

/// What became of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Allowed and connected.
    Allowed,
    /// Refused by the allowlist or the address classifier.
    Denied,
    /// Allowed, but resolution or every connect failed, or the client's
    /// request was malformed.
    Failed,
}

impl Decision {
    /// Lowercase name for records.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::Denied => "denied",
            Decision::Failed => "failed",
        }
    }
}

/// Which protocol the client used to ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrontEnd {
    /// HTTP `CONNECT host:port`.
    HttpConnect,
    /// HTTP request with an absolute `http://` URI.
    HttpPlain,
    /// SOCKS5 `CONNECT`.
    Socks5,
    /// A caller of [`Broker::open`] itself.
    Direct,
}

impl FrontEnd {
    /// Lowercase name for records.
    pub fn as_str(self) -> &'static str {
        match self {
            FrontEnd::HttpConnect => "http-connect",
            FrontEnd::HttpPlain => "http",
            FrontEnd::Socks5 => "socks5",
            FrontEnd::Direct => "direct",
        }
    }
}

/// One connection decision, for the audit log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionRecord {
    /// The host as requested (normalised when it could be).
    pub host: String,
    /// The requested port.
    pub port: u16,
    /// The address connected to (or refused), when there was one.
    pub pinned_addr: Option<SocketAddr>,
    /// Allowed, denied or failed.
    pub decision: Decision,
    /// The allow entry that allowed it, or the refusal's rule id.
    pub rule: String,
    /// Why it was refused or failed.
    pub reason: Option<String>,
    /// How the client asked.
    pub front_end: FrontEnd,
    /// Bytes from the client to the destination (request heads the front
    /// end forwarded included).
    pub bytes_up: u64,
    /// Bytes from the destination to the client.
    pub bytes_down: u64,
    /// From the request to the end of the tunnel (or the refusal).
    pub duration_ms: u64,
    /// The client's address on the listener's side, when known.
    pub client: Option<SocketAddr>,
}

impl fmt::Display for ConnectionRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}:{} via {} [{}]",
            self.decision.as_str(),
            self.host,
            self.port,
            self.front_end.as_str(),
            self.rule
        )?;
        if let Some(a) = self.pinned_addr {
            write!(f, " -> {a}")?;
        }
        if let Some(r) = &self.reason {
            write!(f, ": {r}")?;
        }
        write!(
            f,
            " (up {} B, down {} B, {} ms)",
            self.bytes_up, self.bytes_down, self.duration_ms
        )
    }
}

/// Receives every [`ConnectionRecord`], from the connection's own thread.
pub type RecordSink = Arc<dyn Fn(&ConnectionRecord) + Send + Sync>;

/// A connection to a host name no allow entry names, put to whoever can
/// answer (see [`Broker::with_unlisted`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnlistedRequest {
    /// The normalised host name.
    pub host: String,
    /// The requested port.
    pub port: u16,
    /// The client's address on the listener's side (inside the sandbox),
    /// by which the asker can find the process.
    pub client: Option<SocketAddr>,
    /// How the client asked.
    pub front_end: FrontEnd,
}

/// What became of an [`UnlistedRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnlistedAnswer {
    /// Let this connection through; the text says who allowed it (the
    /// record's rule).
    Once(String),
    /// Let this one and every later one to the same `host:port` through,
    /// for the rest of the broker's life.
    Session(String),
    /// Refuse; the text says why (added to the refusal the client gets).
    Refuse(String),
}

/// Decides [`UnlistedRequest`]s, from the connection's own thread (it may
/// wait for a human: other connections go on meanwhile).
pub type UnlistedAsker = Arc<dyn Fn(&UnlistedRequest) -> UnlistedAnswer + Send + Sync>;

/// A refused or failed request: the refusal, plus the address involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerError {
    /// Rule and message.
    pub refusal: Refusal,
    /// The address refused or that failed, if any.
    pub addr: Option<SocketAddr>,
    /// The underlying I/O error kind, for `Failed` outcomes.
    pub io_kind: Option<io::ErrorKind>,
}

impl fmt::Display for BrokerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.refusal.fmt(f)
    }
}

impl std::error::Error for BrokerError {}

/// See the module docs. Cheap to share: wrap it in an [`Arc`].
pub struct Broker {
    allowlist: Allowlist,
    resolver: Arc<dyn Resolve>,
    on_record: RecordSink,
    connect_timeout: Duration,
    resolve_timeout: Duration,
    unlisted: Option<UnlistedAsker>,
    intercept: Option<Arc<crate::intercept::Intercept>>,
    /// `host:port` pairs allowed for the rest of the session by an answer.
    granted: std::sync::Mutex<std::collections::BTreeMap<(String, u16), String>>,
}

impl fmt::Debug for Broker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Broker")
            .field("allowlist", &self.allowlist)
            .field("connect_timeout", &self.connect_timeout)
            .field("resolve_timeout", &self.resolve_timeout)
            .finish_non_exhaustive()
    }
}

impl Broker {
    /// A broker for `allowlist`, with the system resolver, 10 s timeouts and
    /// records going nowhere.
    pub fn new(allowlist: Allowlist) -> Self {
        Broker {
            allowlist,
            resolver: Arc::new(SystemResolver),
            on_record: Arc::new(|_| {}),
            connect_timeout: Duration::from_secs(10),
            resolve_timeout: Duration::from_secs(10),
            unlisted: None,
            intercept: None,
            granted: std::sync::Mutex::new(std::collections::BTreeMap::new()),
        }
    }

    /// Looks inside TLS for the hosts `intercept` covers (HTTP rules,
    /// credentials added outside); every other host stays a tunnel.
    pub fn with_intercept(mut self, intercept: Arc<crate::intercept::Intercept>) -> Self {
        self.intercept = Some(intercept);
        self
    }

    /// The interceptor, when it covers `host` (normalised).
    pub(crate) fn intercept_for(&self, host: &str) -> Option<&crate::intercept::Intercept> {
        self.intercept.as_deref().filter(|i| i.covers(host))
    }

    /// Puts connections to host names the allowlist does not name to
    /// `asker` instead of refusing them at once. IP literals, refused
    /// addresses and malformed hosts are refused as before, unasked.
    pub fn with_unlisted(mut self, asker: UnlistedAsker) -> Self {
        self.unlisted = Some(asker);
        self
    }

    /// Replaces the resolver.
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolve>) -> Self {
        self.resolver = resolver;
        self
    }

    /// Sends every record to `sink`.
    pub fn with_records(mut self, sink: RecordSink) -> Self {
        self.on_record = sink;
        self
    }

    /// Timeout of each connect attempt.
    pub fn with_connect_timeout(mut self, t: Duration) -> Self {
        self.connect_timeout = t;
        self
    }

    /// Timeout of a resolution.
    pub fn with_resolve_timeout(mut self, t: Duration) -> Self {
        self.resolve_timeout = t;
        self
    }

    /// The allowlist in force.
    pub fn allowlist(&self) -> &Allowlist {
        &self.allowlist
    }

    /// Records a request the front end could not even parse.
    pub(crate) fn record_bad_request(&self, front_end: FrontEnd, what: &str, started: Instant) {
        (self.on_record)(&ConnectionRecord {
            host: String::new(),
            port: 0,
            pinned_addr: None,
            decision: Decision::Failed,
            rule: RefusalRule::BadRequest.as_str().to_string(),
            reason: Some(what.to_string()),
            front_end,
            bytes_up: 0,
            bytes_down: 0,
            duration_ms: started.elapsed().as_millis() as u64,
            client: None,
        });
    }

    /// Steps 1 to 4: judge, resolve, check and connect. A refusal or
    /// failure is recorded here; a [`Tunnel`] records itself when it ends.
    pub fn open(&self, host: &str, port: u16, front_end: FrontEnd) -> Result<Tunnel, BrokerError> {
        self.open_from(host, port, front_end, None)
    }

    /// [`Broker::open`] for a client at `client` (its address as the
    /// listener sees it), which goes into the records and any ask.
    pub(crate) fn open_from(
        &self,
        host: &str,
        port: u16,
        front_end: FrontEnd,
        client: Option<SocketAddr>,
    ) -> Result<Tunnel, BrokerError> {
        let started = Instant::now();
        // The host as the client sent it goes into records only as
        // printable ASCII, and not too long: the log, the recap and the
        // reports show it (a normalised host replaces it when there is one).
        let mut shown_host: String = host
            .chars()
            .take(260)
            .map(|c| if c.is_ascii_graphic() { c } else { '?' })
            .collect();
        let result = self.open_inner(host, port, &mut shown_host, front_end, client);
        match result {
            Ok((upstream, rule)) => {
                let _ = upstream.set_nodelay(true);
                Ok(Tunnel {
                    pinned_addr: upstream.peer_addr().ok(),
                    upstream: Some(upstream),
                    record: ConnectionRecord {
                        host: shown_host,
                        port,
                        pinned_addr: None,
                        decision: Decision::Allowed,
                        rule,
                        reason: None,
                        front_end,
                        bytes_up: 0,
                        bytes_down: 0,
                        duration_ms: 0,
                        client,
                    },
                    started,
                    on_record: Arc::clone(&self.on_record),
                })
            }
            Err(e) => {
                let decision = if e.refusal.rule.is_policy() {
                    Decision::Denied
                } else {
                    Decision::Failed
                };
                (self.on_record)(&ConnectionRecord {
                    host: shown_host,
                    port,
                    pinned_addr: e.addr,
                    decision,
                    rule: e.refusal.rule.as_str().to_string(),
                    reason: Some(e.refusal.reason.clone()),
                    front_end,
                    bytes_up: 0,
                    bytes_down: 0,
                    duration_ms: started.elapsed().as_millis() as u64,
                    client,
                });
                Err(e)
            }
        }
    }

    fn open_inner(
        &self,
        host: &str,
        port: u16,
        shown_host: &mut String,
        front_end: FrontEnd,
        client: Option<SocketAddr>,
    ) -> Result<(TcpStream, String), BrokerError> {
        let refused = |refusal: Refusal| BrokerError {
            refusal,
            addr: None,
            io_kind: None,
        };
        let allowed = match self.allowlist.decide(host, port) {
            Ok(a) => a,
            Err(r) if r.rule == RefusalRule::NotAllowlisted => {
                if let Ok(crate::host::Host::Name(n)) = crate::host::normalize_host(host) {
                    *shown_host = n;
                }
                self.ask_unlisted(shown_host, port, front_end, client, r)
                    .map_err(refused)?
            }
            Err(r) => return Err(refused(r)),
        };
        *shown_host = allowed.host.to_string();
        let addrs = match &allowed.destination {
            Destination::Pinned(a) | Destination::Literal(a) => vec![*a],
            Destination::Resolve(name) => self.resolve(name)?,
        };
        if let Err(refusal) = self.allowlist.check_addresses(&allowed, &addrs) {
            let bad = addrs
                .iter()
                .find(|a| refusal.reason.contains(&a.to_string()))
                .copied();
            return Err(BrokerError {
                refusal,
                addr: bad.map(|a| SocketAddr::new(a, port)),
                io_kind: None,
            });
        }
        let mut last: Option<(SocketAddr, io::Error)> = None;
        for a in addrs {
            let sa = SocketAddr::new(a, port);
            match TcpStream::connect_timeout(&sa, self.connect_timeout) {
                Ok(s) => return Ok((s, allowed.rule)),
                Err(e) => last = Some((sa, e)),
            }
        }
        let (sa, e) = match last {
            Some(l) => l,
            None => {
                return Err(BrokerError {
                    refusal: Refusal::new(
                        RefusalRule::ResolveFailed,
                        format!("{} has no addresses", allowed.host),
                    ),
                    addr: None,
                    io_kind: None,
                });
            }
        };
        Err(BrokerError {
            refusal: Refusal::new(
                RefusalRule::ConnectFailed,
                format!("connecting to {} ({sa}) failed: {e}", allowed.host),
            ),
            addr: Some(sa),
            io_kind: Some(e.kind()),
        })
    }

    /// A host name the allowlist does not name: allowed when an earlier
    /// answer allowed it for the session, else put to the asker (refused
    /// with `refusal` when there is none, or it says no).
    fn ask_unlisted(
        &self,
        name: &str,
        port: u16,
        front_end: FrontEnd,
        client: Option<SocketAddr>,
        refusal: Refusal,
    ) -> Result<crate::allowlist::Allowed, Refusal> {
        let key = (name.to_string(), port);
        let earlier = self.granted.lock().ok().and_then(|g| g.get(&key).cloned());
        if let Some(rule) = earlier {
            return self.allowlist.admit(name, port, rule);
        }
        let Some(asker) = &self.unlisted else {
            return Err(refusal);
        };
        let answer = asker(&UnlistedRequest {
            host: name.to_string(),
            port,
            client,
            front_end,
        });
        match answer {
            UnlistedAnswer::Once(by) => self.allowlist.admit(name, port, by),
            UnlistedAnswer::Session(by) => {
                if let Ok(mut g) = self.granted.lock() {
                    g.insert(key, by.clone());
                }
                self.allowlist.admit(name, port, by)
            }
            UnlistedAnswer::Refuse(why) => Err(Refusal::new(
                refusal.rule,
                format!("{} ({why})", refusal.reason),
            )),
        }
    }

    /// Resolves on a helper thread so a hung resolver costs one thread, not
    /// the session.
    fn resolve(&self, name: &str) -> Result<Vec<IpAddr>, BrokerError> {
        let (tx, rx) = mpsc::channel();
        let resolver = Arc::clone(&self.resolver);
        let owned = name.to_string();
        let spawned = thread::Builder::new()
            .name("aq-net-resolve".into())
            .spawn(move || {
                let _ = tx.send(resolver.resolve(&owned));
            });
        let failed = |why: String| BrokerError {
            refusal: Refusal::new(
                RefusalRule::ResolveFailed,
                format!("resolving {name} failed: {why}"),
            ),
            addr: None,
            io_kind: None,
        };
        if let Err(e) = spawned {
            return Err(failed(format!("cannot start a resolver thread: {e}")));
        }
        match rx.recv_timeout(self.resolve_timeout) {
            Ok(Ok(a)) if a.is_empty() => Err(failed("no addresses".into())),
            Ok(Ok(a)) => Ok(a),
            Ok(Err(e)) => Err(failed(e.to_string())),
            Err(_) => Err(failed(format!(
                "no answer within {} s",
                self.resolve_timeout.as_secs()
            ))),
        }
    }
}

/// An open upstream connection waiting for its client; see
/// [`Broker::open`]. Dropped without [`Tunnel::splice`], it still records
/// itself (with the bytes sent so far).
pub struct Tunnel {
    upstream: Option<TcpStream>,
    pinned_addr: Option<SocketAddr>,
    record: ConnectionRecord,
    started: Instant,
    on_record: RecordSink,
}

impl Tunnel {
    /// The host as the broker judged it (normalised).
    pub fn host(&self) -> &str {
        &self.record.host
    }

    /// The upstream connection, for a front end that speaks to it itself
    /// (the TLS interceptor); the tunnel then records only its opening.
    pub(crate) fn take_upstream(&mut self) -> Option<TcpStream> {
        self.upstream.take()
    }
}

impl fmt::Debug for Tunnel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tunnel")
            .field("pinned_addr", &self.pinned_addr)
            .field("record", &self.record)
            .finish_non_exhaustive()
    }
}

impl Tunnel {
    /// The address connected to.
    pub fn pinned_addr(&self) -> Option<SocketAddr> {
        self.pinned_addr
    }

    /// The allow entry that allowed it.
    pub fn rule(&self) -> &str {
        &self.record.rule
    }

    /// Sends bytes upstream before the tunnel starts (a rewritten request
    /// head); they count as bytes up.
    pub fn send_up(&mut self, bytes: &[u8]) -> io::Result<()> {
        let up = self
            .upstream
            .as_mut()
            .ok_or_else(|| io::Error::other("tunnel already spliced"))?;
        up.write_all(bytes)?;
        self.record.bytes_up += bytes.len() as u64;
        Ok(())
    }

    /// Step 5: copies both ways until both directions have ended, then
    /// records and returns the record.
    pub fn splice(mut self, client: TcpStream) -> ConnectionRecord {
        let Some(upstream) = self.upstream.take() else {
            return self.finish();
        };
        let _ = client.set_nodelay(true);
        let (up, down) = match (client.try_clone(), upstream.try_clone()) {
            (Ok(client2), Ok(upstream2)) => {
                let up = thread::Builder::new()
                    .name("aq-net-up".into())
                    .spawn(move || pump_and_close(&client2, &upstream2));
                let down = pump_and_close(&upstream, &client);
                let up = match up {
                    Ok(h) => h.join().unwrap_or(0),
                    Err(_) => {
                        let _ = client.shutdown(Shutdown::Both);
                        let _ = upstream.shutdown(Shutdown::Both);
                        0
                    }
                };
                (up, down)
            }
            _ => {
                let _ = client.shutdown(Shutdown::Both);
                let _ = upstream.shutdown(Shutdown::Both);
                (0, 0)
            }
        };
        self.record.bytes_up += up;
        self.record.bytes_down += down;
        self.finish()
    }

    /// For a plain request whose head and body went up with
    /// [`Tunnel::send_up`]: copies only the answer down, until the upstream
    /// ends. Nothing more of the client's goes up (a request pipelined
    /// behind the first is never sent).
    pub(crate) fn relay_down(mut self, client: TcpStream) -> ConnectionRecord {
        let Some(upstream) = self.upstream.take() else {
            return self.finish();
        };
        let down = pump_and_close(&upstream, &client);
        let _ = client.shutdown(Shutdown::Both);
        let _ = upstream.shutdown(Shutdown::Both);
        self.record.bytes_down += down;
        self.finish()
    }

    fn finish(&mut self) -> ConnectionRecord {
        self.record.pinned_addr = self.pinned_addr;
        self.record.duration_ms = self.started.elapsed().as_millis() as u64;
        let rec = self.record.clone();
        (self.on_record)(&rec);
        // Recorded: Drop must not record again.
        self.record.decision = Decision::Failed;
        self.record.rule.clear();
        rec
    }
}

impl Drop for Tunnel {
    fn drop(&mut self) {
        if self.upstream.is_some() {
            self.upstream = None;
            self.finish();
        }
    }
}

/// Copies `from` to `to` until `from` ends; then half-closes `to` so the far
/// side sees the end too. On an error both sockets are shut, which ends the
/// other direction as well. Returns the bytes copied.
fn pump_and_close(from: &TcpStream, to: &TcpStream) -> u64 {
    let (n, res) = pump(from, to);
    match res {
        Ok(()) => {
            let _ = to.shutdown(Shutdown::Write);
        }
        Err(_) => {
            let _ = from.shutdown(Shutdown::Both);
            let _ = to.shutdown(Shutdown::Both);
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;
    use std::sync::Mutex;

    fn recorder() -> (RecordSink, Arc<Mutex<Vec<ConnectionRecord>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = Arc::clone(&seen);
        (
            Arc::new(move |r: &ConnectionRecord| s2.lock().unwrap().push(r.clone())),
            seen,
        )
    }

    #[test]
    fn mixed_answer_is_refused_without_connecting() {
        let list = Allowlist::from_entries(&["api.example.invalid"], &[], &[]).unwrap();
        let resolver = FixedResolver(vec![(
            "api.example.invalid".into(),
            vec![
                "203.0.113.7".parse().unwrap(),
                "169.254.169.254".parse().unwrap(),
            ],
        )]);
        let (sink, seen) = recorder();
        let b = Broker::new(list)
            .with_resolver(Arc::new(resolver))
            .with_records(sink);
        let e = b
            .open("API.example.invalid.", 443, FrontEnd::Direct)
            .unwrap_err();
        assert_eq!(e.refusal.rule, RefusalRule::RefusedAddress);
        assert_eq!(e.addr, Some("169.254.169.254:443".parse().unwrap()));
        let recs = seen.lock().unwrap();
        assert_eq!(recs.len(), 1);
        let r = &recs[0];
        assert_eq!(
            (
                r.host.as_str(),
                r.port,
                r.decision,
                r.rule.as_str(),
                r.pinned_addr
            ),
            (
                "api.example.invalid",
                443,
                Decision::Denied,
                "net-refused-address",
                Some("169.254.169.254:443".parse().unwrap())
            )
        );
        assert_eq!(
            r.reason.as_deref(),
            Some(
                "api.example.invalid resolves to 169.254.169.254, a cloud metadata address: \
                 refused; to reach it permit `169.254.169.254` by itself"
            )
        );
    }

    #[test]
    fn pinned_name_is_not_resolved_and_tunnel_counts_bytes() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let srv = thread::spawn(move || {
            let (mut s, _) = server.accept().unwrap();
            let mut got = Vec::new();
            s.read_to_end(&mut got).unwrap();
            s.write_all(b"pong!").unwrap();
            got
        });
        let list = Allowlist::from_entries(
            &["pinned.example.invalid"],
            &["pinned.example.invalid=127.0.0.1"],
            &[],
        )
        .unwrap();
        // A resolver that would send the name elsewhere: must not be asked.
        let resolver = FixedResolver(vec![(
            "pinned.example.invalid".into(),
            vec!["203.0.113.9".parse().unwrap()],
        )]);
        let (sink, seen) = recorder();
        let b = Broker::new(list)
            .with_resolver(Arc::new(resolver))
            .with_records(sink);
        let mut t = b
            .open("pinned.example.invalid", port, FrontEnd::Direct)
            .unwrap();
        assert_eq!(
            t.pinned_addr(),
            Some(SocketAddr::from(([127, 0, 0, 1], port)))
        );
        t.send_up(b"head;").unwrap();
        // The client side of the tunnel: a loopback pair.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (proxy_side, _) = l.accept().unwrap();
        let tun = thread::spawn(move || t.splice(proxy_side));
        client.write_all(b"ping").unwrap();
        client.shutdown(Shutdown::Write).unwrap();
        let mut back = Vec::new();
        client.read_to_end(&mut back).unwrap();
        assert_eq!(back, b"pong!");
        assert_eq!(srv.join().unwrap(), b"head;ping");
        let rec = tun.join().unwrap();
        assert_eq!((rec.bytes_up, rec.bytes_down), (9, 5));
        assert_eq!(rec.decision, Decision::Allowed);
        assert_eq!(rec.rule, "pinned.example.invalid");
        assert_eq!(seen.lock().unwrap().as_slice(), &[rec]);
    }

    #[test]
    fn unresolvable_name_fails_with_its_rule() {
        let list = Allowlist::from_entries(&["nowhere.example.invalid"], &[], &[]).unwrap();
        let b = Broker::new(list).with_resolver(Arc::new(FixedResolver::default()));
        let e = b
            .open("nowhere.example.invalid", 80, FrontEnd::Direct)
            .unwrap_err();
        assert_eq!(e.refusal.rule, RefusalRule::ResolveFailed);
        assert!(
            e.refusal
                .reason
                .starts_with("resolving nowhere.example.invalid failed")
        );
    }

    #[test]
    fn dropped_tunnel_records_once() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let list = Allowlist::from_entries(
            &["d.example.invalid"],
            &["d.example.invalid=127.0.0.1"],
            &[],
        )
        .unwrap();
        let (sink, seen) = recorder();
        let b = Broker::new(list).with_records(sink);
        drop(b.open("d.example.invalid", port, FrontEnd::Direct).unwrap());
        assert_eq!(seen.lock().unwrap().len(), 1);
        assert_eq!(seen.lock().unwrap()[0].decision, Decision::Allowed);
    }
}
