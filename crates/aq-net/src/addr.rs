//! Address classifier: which destinations an allowlisted *name* may not lead
//! to. Pure: no I/O.
//!
//! A name on the allowlist is trusted to be the service the user meant, not
//! to resolve somewhere harmless: DNS is the attacker's to answer (DNS
//! rebinding, a registry package that points a CNAME at 169.254.169.254).
//! So every address an answer holds is classified, and anything but
//! [`AddrClass::Public`] is refused unless the user permitted it
//! ([`crate::Allowlist::permit`]) or pinned the name to it.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of destination an address is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddrClass {
    /// Globally routable as far as we know: allowed.
    Public,
    /// `0.0.0.0/8`, `::` (Linux connects `0.0.0.0` to the local host).
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT, `100.64/10` (RFC 6598).
    Cgnat,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// A cloud metadata service: `169.254.169.254`, `fd00:ec2::254` (AWS
    /// IPv6), `100.100.100.200` (Alibaba).
    Metadata,
    /// `::ffff:0:0/96`: an IPv4 address in IPv6 clothing.
    Ipv4Mapped,
    /// `::/96` other than `::` and `::1` (deprecated IPv4-compatible).
    Ipv4Compatible,
    /// NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`) wrapping an IPv4 address
    /// that is itself refused.
    Ipv4Translated,
    /// Unique local, `fc00::/7`.
    UniqueLocal,
    /// Deprecated site-local, `fec0::/10`.
    SiteLocal,
    /// Reserved or special-purpose: `240/4`, `192.0.0/24`, `198.18/15`,
    /// `100::/64`, Teredo `2001::/32`, local-use NAT64 `64:ff9b:1::/48`.
    Reserved,
}

impl AddrClass {
    /// Whether a name may lead here without the user's explicit say-so.
    pub(crate) fn is_public(self) -> bool {
        self == AddrClass::Public
    }

    /// Short lowercase label for messages and audit records.
    pub fn as_str(self) -> &'static str {
        match self {
            AddrClass::Public => "public",
            AddrClass::Unspecified => "unspecified",
            AddrClass::Loopback => "loopback",
            AddrClass::Private => "private",
            AddrClass::LinkLocal => "link-local",
            AddrClass::Cgnat => "carrier-grade NAT",
            AddrClass::Multicast => "multicast",
            AddrClass::Broadcast => "broadcast",
            AddrClass::Metadata => "cloud metadata",
            AddrClass::Ipv4Mapped => "IPv4-mapped IPv6",
            AddrClass::Ipv4Compatible => "IPv4-compatible IPv6",
            AddrClass::Ipv4Translated => "NAT64/6to4 of a refused IPv4 address",
            AddrClass::UniqueLocal => "unique local IPv6",
            AddrClass::SiteLocal => "site-local IPv6",
            AddrClass::Reserved => "reserved",
        }
    }
}

impl fmt::Display for AddrClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `addr` is one of the cloud metadata addresses.
pub fn is_metadata(addr: IpAddr) -> bool {
    classify_addr(addr) == AddrClass::Metadata
}

/// Classifies an address; see [`AddrClass`].
pub fn classify_addr(addr: IpAddr) -> AddrClass {
    match addr {
        IpAddr::V4(a) => classify_v4(a),
        IpAddr::V6(a) => classify_v6(a),
    }
}

fn in_v4(a: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    u32::from(a) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn classify_v4(a: Ipv4Addr) -> AddrClass {
    use AddrClass::*;
    const METADATA: [[u8; 4]; 2] = [[169, 254, 169, 254], [100, 100, 100, 200]];
    if METADATA.contains(&a.octets()) {
        return Metadata;
    }
    let table: &[([u8; 4], u32, AddrClass)] = &[
        ([0, 0, 0, 0], 8, Unspecified),
        ([127, 0, 0, 0], 8, Loopback),
        ([10, 0, 0, 0], 8, Private),
        ([172, 16, 0, 0], 12, Private),
        ([192, 168, 0, 0], 16, Private),
        ([169, 254, 0, 0], 16, LinkLocal),
        ([100, 64, 0, 0], 10, Cgnat),
        ([224, 0, 0, 0], 4, Multicast),
        ([255, 255, 255, 255], 32, Broadcast),
        ([240, 0, 0, 0], 4, Reserved),
        ([192, 0, 0, 0], 24, Reserved),
        ([198, 18, 0, 0], 15, Reserved),
    ];
    table
        .iter()
        .find(|(net, prefix, _)| in_v4(a, *net, *prefix))
        .map_or(Public, |(_, _, class)| *class)
}

fn classify_v6(a: Ipv6Addr) -> AddrClass {
    use AddrClass::*;
    let s = a.segments();
    let bits = u128::from(a);
    let in_net = |net: u128, prefix: u32| bits >> (128 - prefix) == net >> (128 - prefix);
    if a == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254) {
        return Metadata;
    }
    if a.is_unspecified() {
        return Unspecified;
    }
    if a.is_loopback() {
        return Loopback;
    }
    if in_net(0xffff_0000_0000, 96) {
        return Ipv4Mapped;
    }
    if in_net(0, 96) {
        return Ipv4Compatible;
    }
    if in_net(0x0064_ff9b << 96, 96) {
        let v4 = Ipv4Addr::from(bits as u32);
        return if classify_v4(v4).is_public() {
            Public
        } else {
            Ipv4Translated
        };
    }
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::from(((s[1] as u32) << 16) | s[2] as u32);
        return if classify_v4(v4).is_public() {
            Public
        } else {
            Ipv4Translated
        };
    }
    let table: &[(u128, u32, AddrClass)] = &[
        (0xff00 << 112, 8, Multicast),
        (0xfe80 << 112, 10, LinkLocal),
        (0xfec0 << 112, 10, SiteLocal),
        (0xfc00 << 112, 7, UniqueLocal),
        (0x0100 << 112, 64, Reserved),
        (0x2001_0000 << 96, 32, Reserved),
        (0x0064_ff9b_0001 << 80, 48, Reserved),
    ];
    table
        .iter()
        .find(|(net, prefix, _)| in_net(*net, *prefix))
        .map_or(Public, |(_, _, class)| *class)
}

#[cfg(test)]
mod tests {
    use super::*;
    use AddrClass::*;

    #[test]
    fn each_refused_range_is_classified() {
        let cases = [
            ("8.8.8.8", Public),
            ("203.0.113.7", Public),
            ("1.1.1.1", Public),
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Unspecified),
            ("127.0.0.1", Loopback),
            ("127.255.0.9", Loopback),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("172.32.0.1", Public),
            ("192.168.1.1", Private),
            ("169.254.1.1", LinkLocal),
            ("169.254.169.254", Metadata),
            ("100.100.100.200", Metadata),
            ("100.64.0.1", Cgnat),
            ("100.127.255.255", Cgnat),
            ("100.128.0.1", Public),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("255.255.255.255", Broadcast),
            ("240.0.0.1", Reserved),
            ("198.18.0.1", Reserved),
            ("::", Unspecified),
            ("::1", Loopback),
            ("2606:4700::1111", Public),
            ("2001:db8::1", Public),
            ("fd00:ec2::254", Metadata),
            ("fd00:ec2::253", UniqueLocal),
            ("fc00::1", UniqueLocal),
            ("fdff::1", UniqueLocal),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("fec0::1", SiteLocal),
            ("ff02::1", Multicast),
            ("::ffff:127.0.0.1", Ipv4Mapped),
            ("::ffff:8.8.8.8", Ipv4Mapped),
            ("::127.0.0.1", Ipv4Compatible),
            ("::8.8.8.8", Ipv4Compatible),
            ("64:ff9b::8.8.8.8", Public),
            ("64:ff9b::169.254.169.254", Ipv4Translated),
            ("64:ff9b::10.0.0.1", Ipv4Translated),
            ("2002:0808:0808::1", Public),
            ("2002:7f00:0001::1", Ipv4Translated),
            ("2001::1", Reserved),
            ("100::1", Reserved),
        ];
        for (addr, want) in cases {
            let got = classify_addr(addr.parse().unwrap());
            assert_eq!(got, want, "{addr}");
        }
    }
}
