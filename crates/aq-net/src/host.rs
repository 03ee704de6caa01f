//! Host-name normalisation: what the client typed, as the broker compares it.
//!
//! A request's host is turned into either an ASCII domain name (lowercase, no
//! trailing dot, IDNA-mapped to Punycode) or an IP address. Every spelling an
//! ordinary resolver would read as an address is an address here too:
//! `[::1]`, `127.1`, `0x7f.0.0.1`, `2130706433` and `017700000001` all become
//! `127.0.0.1`, so none can pass for a name. Pure: no I/O.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A normalised request host.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Host {
    /// An ASCII domain name: lowercase, Punycode for non-ASCII labels, no
    /// trailing dot.
    Name(String),
    /// An IP address, however it was spelled.
    Ip(IpAddr),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(IpAddr::V6(a)) => write!(f, "[{a}]"),
            Host::Ip(IpAddr::V4(a)) => write!(f, "{a}"),
        }
    }
}

/// Why a host could not be normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostError {
    /// Nothing left once brackets and the trailing dot are gone.
    Empty,
    /// `[...]` that is not an IPv6 address (zone ids such as `%eth0` included).
    BadBracketedAddress,
    /// IDNA (UTS 46) refused the name.
    Idna,
    /// A character outside letters, digits, `-` and `_` in a label.
    BadCharacter(char),
    /// An empty label (`a..b`) or one longer than 63 octets.
    BadLabel,
    /// Longer than 253 octets.
    TooLong,
    /// The last label is a number, but the whole is not a valid IPv4 address
    /// (`1.2.3.256`, `example.0x`): a resolver might still read it as one.
    NumericName,
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Empty => f.write_str("empty host name"),
            HostError::BadBracketedAddress => f.write_str("bracketed host is not an IPv6 address"),
            HostError::Idna => f.write_str("not a valid internationalised domain name"),
            HostError::BadCharacter(c) => {
                write!(f, "character {c:?} is not allowed in a host name")
            }
            HostError::BadLabel => f.write_str("empty label or label longer than 63 octets"),
            HostError::TooLong => f.write_str("host name longer than 253 octets"),
            HostError::NumericName => {
                f.write_str("last label is numeric but the host is not a valid IPv4 address")
            }
        }
    }
}

impl std::error::Error for HostError {}

/// Longest host name in octets, without the trailing dot (RFC 1035).
const MAX_NAME: usize = 253;
/// Longest label in octets.
const MAX_LABEL: usize = 63;

/// Normalises a host as a client sent it (URL authority, CONNECT target,
/// SOCKS5 domain): see the module docs.
pub fn normalize_host(raw: &str) -> Result<Host, HostError> {
    if let Some(inner) = raw.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or(HostError::BadBracketedAddress)?;
        let a: Ipv6Addr = inner.parse().map_err(|_| HostError::BadBracketedAddress)?;
        return Ok(Host::Ip(IpAddr::V6(a)));
    }
    if let Ok(a) = raw.parse::<IpAddr>() {
        return Ok(Host::Ip(a));
    }
    let ascii = idna::domain_to_ascii_cow(raw.as_bytes(), idna::AsciiDenyList::URL)
        .map_err(|_| HostError::Idna)?;
    let name = ascii.strip_suffix('.').unwrap_or(&ascii);
    if name.is_empty() {
        return Err(HostError::Empty);
    }
    if name.len() > MAX_NAME {
        return Err(HostError::TooLong);
    }
    for label in name.split('.') {
        if label.is_empty() || label.len() > MAX_LABEL {
            return Err(HostError::BadLabel);
        }
        if let Some(c) = label
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '_'))
        {
            return Err(HostError::BadCharacter(c));
        }
    }
    // WHATWG URL "ends in a number": such a host is an IPv4 address or invalid.
    let last = name.rsplit('.').next().unwrap_or(name);
    if is_numeric_label(last) {
        return parse_ipv4_loose(name)
            .map(|a| Host::Ip(IpAddr::V4(a)))
            .ok_or(HostError::NumericName);
    }
    Ok(Host::Name(name.to_string()))
}

/// A label that inet_aton would read as a number: decimal digits, or `0x`
/// followed by hex digits (or nothing).
fn is_numeric_label(label: &str) -> bool {
    if let Some(hex) = label.strip_prefix("0x") {
        return hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    !label.is_empty() && label.chars().all(|c| c.is_ascii_digit())
}

/// inet_aton's reading: one to four parts, each decimal, octal (leading `0`)
/// or hex (`0x`); the last part fills the remaining octets.
pub(crate) fn parse_ipv4_loose(s: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(4);
    for p in &parts {
        let v = if let Some(hex) = p.strip_prefix("0x") {
            if hex.is_empty() {
                0
            } else {
                u64::from_str_radix(hex, 16).ok()?
            }
        } else if p.len() > 1 && p.starts_with('0') {
            u64::from_str_radix(&p[1..], 8).ok()?
        } else {
            p.parse::<u64>().ok()?
        };
        nums.push(v);
    }
    let (last, head) = nums.split_last()?;
    if head.iter().any(|&v| v > 255) {
        return None;
    }
    let rest_bits = 8 * (4 - head.len() as u32);
    if *last >= 1u64 << rest_bits {
        return None;
    }
    let mut v: u32 = 0;
    for (i, &h) in head.iter().enumerate() {
        v |= (h as u32) << (24 - 8 * i as u32);
    }
    v |= *last as u32;
    Some(Ipv4Addr::from(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Result<Host, HostError> {
        normalize_host(s)
    }

    #[test]
    fn names_are_lowercased_and_lose_the_trailing_dot() {
        for (raw, want) in [
            ("Example.COM", "example.com"),
            ("example.com.", "example.com"),
            ("REGISTRY.npmjs.org.", "registry.npmjs.org"),
            ("_acme.example.com", "_acme.example.com"),
            ("a-b.example", "a-b.example"),
        ] {
            assert_eq!(name(raw), Ok(Host::Name(want.into())), "{raw}");
        }
    }

    #[test]
    fn idna_maps_to_punycode() {
        assert_eq!(
            name("Bücher.Example"),
            Ok(Host::Name("xn--bcher-kva.example".into()))
        );
        // Fullwidth full stop and letters are mapped by UTS 46.
        assert_eq!(
            name("ｅｘａｍｐｌｅ。com"),
            Ok(Host::Name("example.com".into()))
        );
        assert_eq!(name("xn--bcher-kva.example"), name("bücher.example"));
    }

    #[test]
    fn every_address_spelling_is_an_address() {
        let lo = Ok(Host::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        for raw in [
            "127.0.0.1",
            "127.1",
            "0x7f.0.0.1",
            "0x7f000001",
            "2130706433",
            "017700000001",
            "0177.0.0.01",
            "127.0.0.1.",
        ] {
            assert_eq!(name(raw), lo, "{raw}");
        }
        assert_eq!(name("[::1]"), Ok(Host::Ip("::1".parse().unwrap())));
        assert_eq!(name("::1"), Ok(Host::Ip("::1".parse().unwrap())));
        assert_eq!(
            name("[::ffff:169.254.169.254]"),
            Ok(Host::Ip("::ffff:169.254.169.254".parse().unwrap()))
        );
    }

    #[test]
    fn malformed_hosts_are_refused() {
        for (raw, want) in [
            ("", HostError::Empty),
            (".", HostError::Empty),
            ("a..b", HostError::BadLabel),
            ("[fe80::1%eth0]", HostError::BadBracketedAddress),
            ("[example.com]", HostError::BadBracketedAddress),
            ("1.2.3.256", HostError::NumericName),
            ("example.123", HostError::NumericName),
            ("example.0x", HostError::NumericName),
            ("08.1.1.1", HostError::NumericName),
        ] {
            assert_eq!(name(raw), Err(want), "{raw}");
        }
        for raw in ["a b.example", "a/b.example", "a@b", "a:80", "a%2e"] {
            assert!(name(raw).is_err(), "{raw}");
        }
        assert_eq!(name(&"a".repeat(64)), Err(HostError::BadLabel));
        let long = vec!["a".repeat(60); 5].join(".");
        assert_eq!(name(&long), Err(HostError::TooLong));
    }

    #[test]
    fn hex_label_inside_a_name_is_fine() {
        assert_eq!(name("0x1.example"), Ok(Host::Name("0x1.example".into())));
        assert_eq!(name("123.example"), Ok(Host::Name("123.example".into())));
    }
}
