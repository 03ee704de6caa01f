//! The allowlist: which `host:port` requests may leave, and where to.
//! Pure: text in, values out; no resolver, clock or files.
//!
//! Three tables, each filled from the user's words:
//!
//! - **allow** entries ([`Allowlist::allow`]): `example.com` (exactly that
//!   name), `*.example.com` (any name *beneath* it, on a label boundary: not
//!   `example.com` itself, not `badexample.com`), an IP literal (`203.0.113.7`,
//!   `[2001:db8::1]`), each with an optional `:PORT`; without one, any port.
//! - **pins** ([`Allowlist::pin`]): `NAME=ADDR` (or `NAME:ADDR`, as in
//!   `aq run --resolve`): the name is not looked up but goes to `ADDR`, and,
//!   since the user named that address, it may be private or loopback. A pin
//!   does not allow the name; an allow entry still has to.
//! - **permitted destinations** ([`Allowlist::permit`]): CIDRs that an
//!   allowlisted name may resolve into although they are not public (a VPN,
//!   a registry on the LAN). A range never covers a cloud metadata address
//!   unless it is that single address (`169.254.169.254/32`).
//!
//! [`Allowlist::decide`] judges a request before any resolution and says
//! where to go ([`Destination`]); [`Allowlist::check_addresses`] judges what
//! the resolver answered. Both return a [`Refusal`] that names its rule id and
//! says how to allow the destination.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;

use crate::addr::{AddrClass, classify_addr};
use crate::host::{Host, HostError, normalize_host};

/// What an allow entry matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Exactly this normalised name.
    Exact(String),
    /// Any name with at least one more label in front of this one
    /// (`*.example.com` stores `example.com`).
    Subdomains(String),
    /// Exactly this address, given as a literal.
    Ip(IpAddr),
}

impl Pattern {
    /// Whether `host` (normalised) matches.
    pub fn matches(&self, host: &Host) -> bool {
        match (self, host) {
            (Pattern::Exact(p), Host::Name(h)) => p == h,
            (Pattern::Subdomains(p), Host::Name(h)) => {
                h.len() > p.len() + 1
                    && h.ends_with(p.as_str())
                    && h.as_bytes()[h.len() - p.len() - 1] == b'.'
            }
            (Pattern::Ip(p), Host::Ip(h)) => p == h,
            _ => false,
        }
    }
}

/// One allow entry, with the text it came from (the evidence in records).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowRule {
    /// The host part.
    pub pattern: Pattern,
    /// The only port allowed, or any.
    pub port: Option<u16>,
    /// The entry as the user wrote it.
    pub source: String,
}

impl AllowRule {
    /// Whether this rule lets `host:port` through.
    pub fn matches(&self, host: &Host, port: u16) -> bool {
        self.port.is_none_or(|p| p == port) && self.pattern.matches(host)
    }
}

/// An IP network: an address and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    /// Network address (host bits may be set; they are ignored).
    pub addr: IpAddr,
    /// Prefix length: up to 32 for IPv4, 128 for IPv6.
    pub prefix: u8,
}

impl Cidr {
    /// Whether `a` lies inside (never across address families).
    pub fn contains(&self, a: IpAddr) -> bool {
        match (self.addr, a) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let shift = 32 - u32::from(self.prefix);
                shift == 32 || u32::from(n) >> shift == u32::from(a) >> shift
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let shift = 128 - u32::from(self.prefix);
                shift == 128 || u128::from(n) >> shift == u128::from(a) >> shift
            }
            _ => false,
        }
    }

    fn is_single_address(&self) -> bool {
        match self.addr {
            IpAddr::V4(_) => self.prefix == 32,
            IpAddr::V6(_) => self.prefix == 128,
        }
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// Why an entry of one of the three tables was rejected when loading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryError {
    /// The entry as written.
    pub entry: String,
    /// What is wrong and how to write it.
    pub problem: String,
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "network entry `{}`: {}", self.entry, self.problem)
    }
}

impl std::error::Error for EntryError {}

fn entry_error(entry: &str, problem: impl Into<String>) -> EntryError {
    EntryError {
        entry: entry.to_string(),
        problem: problem.into(),
    }
}

/// Where an allowed request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// The user pinned the name to this address: connect there, resolve
    /// nothing, check no address class.
    Pinned(IpAddr),
    /// Resolve this name once, check every address, connect to one.
    Resolve(String),
    /// The request named an allowlisted IP literal; its class is still
    /// checked.
    Literal(IpAddr),
}

/// An allowed request: the normalised host, the entry that allowed it and
/// where to go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allowed {
    /// Normalised host.
    pub host: Host,
    /// Requested port.
    pub port: u16,
    /// The matching allow entry, as written.
    pub rule: String,
    /// Where to connect.
    pub destination: Destination,
}

/// Stable ids of the reasons a connection does not happen; they appear in
/// audit records next to the allowlist entry that allowed the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RefusalRule {
    /// The host could not be normalised.
    InvalidHost,
    /// The request named an IP address that no allow entry names.
    IpLiteral,
    /// No allow entry matches the name and port.
    NotAllowlisted,
    /// The name resolved (or the literal is) outside the public internet.
    RefusedAddress,
    /// The client spoke something the front end does not serve.
    BadRequest,
    /// The name did not resolve.
    ResolveFailed,
    /// No resolved address accepted the connection.
    ConnectFailed,
    /// The host's HTTP rule (or its credential) takes only requests the
    /// broker can read: HTTPS through `CONNECT`.
    HttpRule,
}

impl RefusalRule {
    /// Every rule, for round-trip tests and documentation.
    pub const ALL: [RefusalRule; 8] = [
        RefusalRule::InvalidHost,
        RefusalRule::IpLiteral,
        RefusalRule::NotAllowlisted,
        RefusalRule::RefusedAddress,
        RefusalRule::BadRequest,
        RefusalRule::ResolveFailed,
        RefusalRule::ConnectFailed,
        RefusalRule::HttpRule,
    ];

    /// The kebab-case rule id.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalRule::InvalidHost => "net-invalid-host",
            RefusalRule::IpLiteral => "net-ip-literal",
            RefusalRule::NotAllowlisted => "net-not-allowlisted",
            RefusalRule::RefusedAddress => "net-refused-address",
            RefusalRule::BadRequest => "net-bad-request",
            RefusalRule::ResolveFailed => "net-resolve-failed",
            RefusalRule::ConnectFailed => "net-connect-failed",
            RefusalRule::HttpRule => "net-http-rule",
        }
    }

    /// Whether this is a policy decision (denied) rather than a failure to
    /// reach an allowed destination.
    pub(crate) fn is_policy(self) -> bool {
        !matches!(
            self,
            RefusalRule::ResolveFailed | RefusalRule::ConnectFailed | RefusalRule::BadRequest
        )
    }
}

impl fmt::Display for RefusalRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request that does not leave: the rule and a message saying what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Which rule refused it.
    pub rule: RefusalRule,
    /// One line for the client and the audit log.
    pub reason: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.reason, self.rule)
    }
}

impl std::error::Error for Refusal {}

impl Refusal {
    /// A refusal with its rule and message.
    pub fn new(rule: RefusalRule, reason: impl Into<String>) -> Self {
        Refusal {
            rule,
            reason: reason.into(),
        }
    }
}

/// The three tables; see the module docs. Empty, it refuses everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allowlist {
    rules: Vec<AllowRule>,
    pins: BTreeMap<String, IpAddr>,
    permitted: Vec<Cidr>,
}

/// Splits `HOST[:PORT]`, `[V6]:PORT`, bare `V6`.
fn split_host_port(entry: &str) -> Result<(&str, Option<u16>), String> {
    let parse_port = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| format!("port `{p}` is not a number from 1 to 65535"))
    };
    if entry.starts_with('[') {
        let end = entry.find(']').ok_or("missing `]` after an IPv6 address")?;
        let (host, rest) = entry.split_at(end + 1);
        return match rest {
            "" => Ok((host, None)),
            _ => match rest.strip_prefix(':') {
                Some(p) => Ok((host, Some(parse_port(p)?))),
                None => Err(format!("unexpected `{rest}` after `{host}`")),
            },
        };
    }
    if entry.matches(':').count() > 1 {
        return Ok((entry, None));
    }
    match entry.split_once(':') {
        Some((h, p)) => Ok((h, Some(parse_port(p)?))),
        None => Ok((entry, None)),
    }
}

impl Allowlist {
    /// An allowlist that refuses everything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds one from the three tables' entries; the first bad entry is the
    /// error.
    pub fn from_entries<S: AsRef<str>>(
        allow: &[S],
        pins: &[S],
        permit: &[S],
    ) -> Result<Self, EntryError> {
        let mut list = Self::new();
        for e in allow {
            list.allow(e.as_ref())?;
        }
        for e in pins {
            list.pin(e.as_ref())?;
        }
        for e in permit {
            list.permit(e.as_ref())?;
        }
        Ok(list)
    }

    /// Adds an allow entry: `NAME`, `*.NAME` or an IP literal, each with an
    /// optional `:PORT`.
    pub fn allow(&mut self, entry: &str) -> Result<&mut Self, EntryError> {
        let trimmed = entry.trim();
        let (host, port) = split_host_port(trimmed).map_err(|p| entry_error(entry, p))?;
        let bad_host = |e: HostError| entry_error(entry, e.to_string());
        let pattern = if let Some(rest) = host.strip_prefix("*.") {
            match normalize_host(rest).map_err(bad_host)? {
                Host::Ip(_) => {
                    return Err(entry_error(
                        entry,
                        "`*.` goes before a name, not an address",
                    ));
                }
                Host::Name(n) if !n.contains('.') => {
                    return Err(entry_error(
                        entry,
                        format!("`*.{n}` would allow a whole top-level domain; name the domain"),
                    ));
                }
                Host::Name(n) => Pattern::Subdomains(n),
            }
        } else if host.contains('*') {
            return Err(entry_error(
                entry,
                "a wildcard is only allowed as a whole first label: `*.example.com`",
            ));
        } else {
            match normalize_host(host).map_err(bad_host)? {
                Host::Ip(a) => Pattern::Ip(a),
                Host::Name(n) => Pattern::Exact(n),
            }
        };
        self.rules.push(AllowRule {
            pattern,
            port,
            source: trimmed.to_string(),
        });
        Ok(self)
    }

    /// Adds a pin, `NAME=ADDR` or `NAME:ADDR`.
    pub fn pin(&mut self, entry: &str) -> Result<&mut Self, EntryError> {
        let trimmed = entry.trim();
        let (name, addr) = match trimmed.split_once('=') {
            Some(p) => p,
            None => trimmed.split_once(':').ok_or_else(|| {
                entry_error(entry, "write `NAME=ADDR`, e.g. `registry.local=10.0.0.5`")
            })?,
        };
        let name = match normalize_host(name).map_err(|e| entry_error(entry, e.to_string()))? {
            Host::Name(n) => n,
            Host::Ip(_) => return Err(entry_error(entry, "pin a name, not an address")),
        };
        let addr_text = addr.trim_start_matches('[').trim_end_matches(']');
        let addr: IpAddr = addr_text
            .parse()
            .map_err(|_| entry_error(entry, format!("`{addr}` is not an IP address")))?;
        self.pins.insert(name, addr);
        Ok(self)
    }

    /// Permits a non-public destination: `ADDR` or `ADDR/PREFIX`.
    pub fn permit(&mut self, entry: &str) -> Result<&mut Self, EntryError> {
        let trimmed = entry.trim();
        let (a, prefix) = match trimmed.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (trimmed, None),
        };
        let addr: IpAddr = a
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .map_err(|_| entry_error(entry, format!("`{a}` is not an IP address")))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|&p| p <= max)
                .ok_or_else(|| entry_error(entry, format!("prefix `{p}` is not 0 to {max}")))?,
        };
        self.permitted.push(Cidr { addr, prefix });
        Ok(self)
    }

    /// The allow entries, in order.
    pub fn rules(&self) -> &[AllowRule] {
        &self.rules
    }

    /// Every pin: normalised name and address.
    pub fn pins(&self) -> impl Iterator<Item = (&str, IpAddr)> {
        self.pins.iter().map(|(n, a)| (n.as_str(), *a))
    }

    /// The pinned address of a normalised name.
    pub fn pinned(&self, name: &str) -> Option<IpAddr> {
        self.pins.get(name).copied()
    }

    /// The permitted destinations.
    pub fn permitted(&self) -> &[Cidr] {
        &self.permitted
    }

    /// Judges a request before any resolution. An exact entry wins over a
    /// wildcard as the evidence; otherwise the first matching entry.
    pub fn decide(&self, raw_host: &str, port: u16) -> Result<Allowed, Refusal> {
        let host = normalize_host(raw_host).map_err(|e| {
            Refusal::new(
                RefusalRule::InvalidHost,
                format!("host `{}` refused: {e}", raw_host.escape_debug()),
            )
        })?;
        let rule = self
            .rules
            .iter()
            .find(|r| !matches!(r.pattern, Pattern::Subdomains(_)) && r.matches(&host, port))
            .or_else(|| self.rules.iter().find(|r| r.matches(&host, port)));
        let Some(rule) = rule else {
            return Err(match &host {
                Host::Ip(a) => {
                    let class = classify_addr(*a);
                    let what = if class.is_public() {
                        String::new()
                    } else {
                        format!(" ({class})")
                    };
                    Refusal::new(
                        RefusalRule::IpLiteral,
                        format!(
                            "IP address {host}{what} refused: request a host name, \
                             or allow `{host}:{port}` explicitly"
                        ),
                    )
                }
                Host::Name(n) => Refusal::new(
                    RefusalRule::NotAllowlisted,
                    format!(
                        "{n}:{port} is not on this session's network allowlist; the user can allow it with `aq allow --net {n}:{port}`"
                    ),
                ),
            });
        };
        let destination = match &host {
            Host::Ip(a) => Destination::Literal(*a),
            Host::Name(n) => match self.pins.get(n) {
                Some(a) => Destination::Pinned(*a),
                None => Destination::Resolve(n.clone()),
            },
        };
        Ok(Allowed {
            host,
            port,
            rule: rule.source.clone(),
            destination,
        })
    }

    /// Lets `name:port` through although no allow entry names it (someone
    /// who could answer said yes): it goes where a pin sends it, else to
    /// what the name resolves to, checked as any answer is.
    pub fn admit(&self, name: &str, port: u16, rule: String) -> Result<Allowed, Refusal> {
        let host = normalize_host(name).map_err(|e| {
            Refusal::new(
                RefusalRule::InvalidHost,
                format!("host `{}` refused: {e}", name.escape_debug()),
            )
        })?;
        let Host::Name(n) = &host else {
            return Err(Refusal::new(
                RefusalRule::IpLiteral,
                format!("IP address {host} refused: only host names are asked about"),
            ));
        };
        let destination = match self.pins.get(n) {
            Some(a) => Destination::Pinned(*a),
            None => Destination::Resolve(n.clone()),
        };
        Ok(Allowed {
            host,
            port,
            rule,
            destination,
        })
    }

    /// Whether a non-public `addr` of class `class` is permitted.
    fn is_permitted(&self, addr: IpAddr, class: AddrClass) -> bool {
        self.permitted
            .iter()
            .any(|c| c.contains(addr) && (class != AddrClass::Metadata || c.is_single_address()))
    }

    /// Judges the addresses a destination leads to: every one must be public
    /// or permitted, or the whole answer is refused (an attacker's DNS
    /// answer mixes a public address with the one it wants reached).
    /// Pinned destinations pass unchecked.
    pub fn check_addresses(&self, allowed: &Allowed, addrs: &[IpAddr]) -> Result<(), Refusal> {
        if matches!(allowed.destination, Destination::Pinned(_)) {
            return Ok(());
        }
        for &a in addrs {
            let class = classify_addr(a);
            if class.is_public() || self.is_permitted(a, class) {
                continue;
            }
            let how = if class == AddrClass::Metadata {
                format!("permit `{a}` by itself")
            } else {
                format!("permit `{a}` (or its network) or pin the name")
            };
            let whose = match &allowed.destination {
                Destination::Literal(_) => String::new(),
                _ => format!("{} resolves to ", allowed.host),
            };
            return Err(Refusal::new(
                RefusalRule::RefusedAddress,
                format!("{whose}{a}, a {class} address: refused; to reach it {how}"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn list(allow: &[&str]) -> Allowlist {
        Allowlist::from_entries(allow, &[], &[]).unwrap()
    }

    fn allowed_rule(l: &Allowlist, host: &str, port: u16) -> Option<String> {
        l.decide(host, port).ok().map(|a| a.rule)
    }

    #[test]
    fn wildcard_matches_on_label_boundaries_only() {
        let l = list(&["*.example.com"]);
        for h in [
            "a.example.com",
            "a.b.example.com",
            "A.Example.COM.",
            "x-y.example.com",
        ] {
            assert_eq!(
                allowed_rule(&l, h, 443).as_deref(),
                Some("*.example.com"),
                "{h}"
            );
        }
        for h in [
            "example.com",
            "badexample.com",
            "a.badexample.com",
            "example.com.evil",
            "aexample.com",
            ".example.com",
            "example.co",
        ] {
            assert_eq!(allowed_rule(&l, h, 443), None, "{h}");
        }
    }

    #[test]
    fn exact_entries_and_ports() {
        let l = list(&[
            "registry.npmjs.org:443",
            "Example.com",
            "[2001:db8::1]:8443",
            "203.0.113.7",
        ]);
        assert!(l.decide("registry.npmjs.org", 443).is_ok());
        let r = l.decide("registry.npmjs.org", 80).unwrap_err();
        assert_eq!(r.rule, RefusalRule::NotAllowlisted);
        assert!(r.reason.contains("registry.npmjs.org:80"), "{r}");
        assert!(l.decide("example.com", 1).is_ok());
        assert!(l.decide("example.com", 65535).is_ok());
        assert!(l.decide("a.example.com", 443).is_err());
        let v6 = l.decide("[2001:db8::1]", 8443).unwrap();
        assert_eq!(
            v6.destination,
            Destination::Literal("2001:db8::1".parse().unwrap())
        );
        assert!(l.decide("[2001:db8::1]", 443).is_err());
        assert!(l.decide("203.0.113.7", 22).is_ok());
    }

    #[test]
    fn exact_entry_is_the_evidence_over_a_wildcard() {
        let l = list(&["*.example.com", "api.example.com:443"]);
        assert_eq!(
            allowed_rule(&l, "api.example.com", 443).as_deref(),
            Some("api.example.com:443")
        );
        assert_eq!(
            allowed_rule(&l, "api.example.com", 80).as_deref(),
            Some("*.example.com")
        );
    }

    #[test]
    fn idna_names_match_their_punycode() {
        let l = list(&["*.bücher.example"]);
        assert!(l.decide("shop.xn--bcher-kva.example", 443).is_ok());
        assert!(l.decide("SHOP.BÜCHER.example", 443).is_ok());
    }

    #[test]
    fn ip_literals_are_refused_unless_named() {
        let l = list(&["*.example.com"]);
        for h in [
            "127.0.0.1",
            "[::1]",
            "2130706433",
            "0x7f.1",
            "169.254.169.254",
        ] {
            let r = l.decide(h, 80).unwrap_err();
            assert_eq!(r.rule, RefusalRule::IpLiteral, "{h}");
        }
        let r = l.decide("169.254.169.254", 80).unwrap_err();
        assert_eq!(
            r.reason,
            "IP address 169.254.169.254 (cloud metadata) refused: request a host name, \
             or allow `169.254.169.254:80` explicitly"
        );
    }

    #[test]
    fn allowlisted_literal_still_has_its_class_checked() {
        let l = list(&["127.0.0.1"]);
        let a = l.decide("127.0.0.1", 80).unwrap();
        let r = l
            .check_addresses(&a, &["127.0.0.1".parse().unwrap()])
            .unwrap_err();
        assert_eq!(r.rule, RefusalRule::RefusedAddress);
        assert_eq!(
            r.reason,
            "127.0.0.1, a loopback address: refused; to reach it permit `127.0.0.1` \
             (or its network) or pin the name"
        );
    }

    #[test]
    fn pins_go_to_the_pinned_address_unchecked() {
        let l = Allowlist::from_entries(
            &["allowed.example.invalid"],
            &[
                "allowed.example.invalid=127.0.0.1",
                "other.example.invalid:[::1]",
            ],
            &[],
        )
        .unwrap();
        let a = l.decide("Allowed.Example.Invalid.", 8080).unwrap();
        assert_eq!(
            a,
            Allowed {
                host: Host::Name("allowed.example.invalid".into()),
                port: 8080,
                rule: "allowed.example.invalid".into(),
                destination: Destination::Pinned("127.0.0.1".parse().unwrap()),
            }
        );
        assert!(
            l.check_addresses(&a, &["127.0.0.1".parse().unwrap()])
                .is_ok()
        );
        // A pin does not allow the name.
        let r = l.decide("other.example.invalid", 80).unwrap_err();
        assert_eq!(r.rule, RefusalRule::NotAllowlisted);
        assert_eq!(
            l.pinned("other.example.invalid"),
            Some("::1".parse().unwrap())
        );
    }

    #[test]
    fn whole_answer_is_refused_if_any_address_is() {
        let l = list(&["api.example.com"]);
        let a = l.decide("api.example.com", 443).unwrap();
        let public: IpAddr = "203.0.113.7".parse().unwrap();
        assert!(l.check_addresses(&a, &[public]).is_ok());
        for bad in [
            "10.0.0.1",
            "169.254.169.254",
            "::1",
            "::ffff:127.0.0.1",
            "fd00:ec2::254",
            "100.64.0.1",
        ] {
            let r = l
                .check_addresses(&a, &[public, bad.parse().unwrap()])
                .unwrap_err();
            assert_eq!(r.rule, RefusalRule::RefusedAddress, "{bad}");
            assert!(
                r.reason
                    .starts_with(&format!("api.example.com resolves to {bad}, a ")),
                "{r}"
            );
        }
    }

    #[test]
    fn permitted_ranges_allow_private_but_not_metadata() {
        let l = Allowlist::from_entries(
            &["registry.corp.example"],
            &[],
            &["10.0.0.0/8", "169.254.0.0/16", "127.0.0.1", "::1/128"],
        )
        .unwrap();
        let a = l.decide("registry.corp.example", 443).unwrap();
        for ok in ["10.1.2.3", "169.254.1.1", "127.0.0.1", "::1"] {
            assert!(
                l.check_addresses(&a, &[ok.parse().unwrap()]).is_ok(),
                "{ok}"
            );
        }
        for bad in ["169.254.169.254", "127.0.0.2", "192.168.0.1"] {
            assert!(
                l.check_addresses(&a, &[bad.parse().unwrap()]).is_err(),
                "{bad}"
            );
        }
        let mut l = l;
        l.permit("169.254.169.254/32").unwrap();
        assert!(
            l.check_addresses(&a, &["169.254.169.254".parse().unwrap()])
                .is_ok()
        );
    }

    #[test]
    fn bad_entries_say_what_to_write() {
        for (entry, problem) in [
            ("*.com", "would allow a whole top-level domain"),
            ("*", "wildcard is only allowed"),
            ("a.*.example.com", "wildcard is only allowed"),
            ("*example.com", "wildcard is only allowed"),
            ("*.10.0.0.1", "not an address"),
            ("example.com:0", "port `0`"),
            ("example.com:http", "port `http`"),
            ("[::1", "missing `]`"),
            ("exa mple.com", "not a valid"),
        ] {
            let e = Allowlist::new().allow(entry).map(|_| ()).unwrap_err();
            assert!(e.problem.contains(problem), "{entry}: {e}");
        }
        assert!(Allowlist::new().pin("example.com").is_err());
        assert!(Allowlist::new().pin("example.com=not-an-ip").is_err());
        assert!(Allowlist::new().pin("10.0.0.1=10.0.0.2").is_err());
        assert!(Allowlist::new().permit("10.0.0.0/33").is_err());
        assert!(Allowlist::new().permit("example.com").is_err());
    }

    #[test]
    fn empty_allowlist_refuses_everything() {
        let l = Allowlist::new();
        assert_eq!(
            l.decide("example.com", 443).unwrap_err().rule,
            RefusalRule::NotAllowlisted
        );
        assert_eq!(
            l.decide("", 443).unwrap_err().rule,
            RefusalRule::InvalidHost
        );
    }

    #[test]
    fn rule_ids_are_unique_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for r in RefusalRule::ALL {
            assert!(r.as_str().starts_with("net-"));
            assert!(seen.insert(r.as_str()));
        }
    }

    #[test]
    fn cidr_contains() {
        let c = |s: &str| {
            let mut l = Allowlist::new();
            l.permit(s).unwrap();
            l.permitted()[0]
        };
        assert!(c("0.0.0.0/0").contains("8.8.8.8".parse().unwrap()));
        assert!(!c("0.0.0.0/0").contains("::1".parse().unwrap()));
        assert!(c("172.16.0.0/12").contains("172.31.1.1".parse().unwrap()));
        assert!(!c("172.16.0.0/12").contains("172.32.0.0".parse().unwrap()));
        assert!(c("fd00::/8").contains("fd12::1".parse().unwrap()));
        assert!(c("::/0").contains("::1".parse().unwrap()));
    }

    fn label() -> impl Strategy<Value = String> {
        // A letter first (`0x` is a number) and no `--` (`xn--` is Punycode).
        "[a-z][a-z0-9-]{0,10}[a-z]".prop_filter("no --", |l| !l.contains("--"))
    }

    fn name(min: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(label(), min..4).prop_map(|v| v.join("."))
    }

    proptest! {
        #[test]
        fn wildcard_matches_exactly_the_names_beneath(suffix in name(2), prefix in name(1), glued in label()) {
            let l = list(&[&format!("*.{suffix}")]);
            let beneath = format!("{prefix}.{suffix}");
            prop_assert!(l.decide(&beneath, 443).is_ok(), "{} should match", beneath);
            prop_assert!(l.decide(&beneath.to_uppercase(), 443).is_ok());
            let dotted = format!("{beneath}.");
            prop_assert!(l.decide(&dotted, 443).is_ok());
            prop_assert!(l.decide(&suffix, 443).is_err(), "apex {} matched", suffix);
            let glued_name = format!("{glued}{suffix}");
            prop_assert!(l.decide(&glued_name, 443).is_err(), "{} matched", glued_name);
            let after = format!("{suffix}.{glued}");
            prop_assert!(l.decide(&after, 443).is_err(), "{} matched", after);
        }

        #[test]
        fn exact_entry_matches_only_its_name(a in name(1), b in name(1)) {
            let l = list(&[&a]);
            prop_assert!(l.decide(&a, 80).is_ok());
            prop_assert_eq!(l.decide(&b, 80).is_ok(), a == b);
            let sub = format!("x.{a}");
            prop_assert!(l.decide(&sub, 80).is_err());
        }

        #[test]
        fn normalisation_is_idempotent(raw in "\\PC{0,30}") {
            if let Ok(Host::Name(n)) = normalize_host(&raw) {
                prop_assert_eq!(normalize_host(&n), Ok(Host::Name(n.clone())));
            }
        }

        #[test]
        fn decide_never_panics(raw in "\\PC{0,40}", port in any::<u16>()) {
            let l = list(&["*.example.com", "exact.example.org:443", "203.0.113.7"]);
            let _ = l.decide(&raw, port);
        }

        #[test]
        fn every_ipv4_spelling_is_a_literal(a in any::<u32>()) {
            let l = list(&["*.example.com"]);
            let ip = std::net::Ipv4Addr::from(a);
            for spelling in [ip.to_string(), a.to_string(), format!("0x{a:x}"), format!("0{a:o}")] {
                let r = l.decide(&spelling, 80).unwrap_err();
                prop_assert_eq!(r.rule, RefusalRule::IpLiteral, "{}", spelling);
            }
        }
    }
}
