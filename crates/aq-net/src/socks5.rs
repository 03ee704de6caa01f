//! SOCKS5 front end (RFC 1928): no authentication, `CONNECT` only.
//!
//! A domain-name request (`socks5h://`, `curl --socks5-hostname`) is resolved
//! by the broker, outside the sandbox. An address request is an IP literal
//! to the broker and refused unless an allow entry names that address; the
//! refusal is reply code 2, "connection not allowed by ruleset".

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, TcpStream};
use std::time::Instant;

use crate::allowlist::RefusalRule;
use crate::broker::{Broker, BrokerError, FrontEnd};

/// Reply codes of RFC 1928 section 6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Reply {
    /// 0: succeeded.
    Succeeded = 0,
    /// 1: general SOCKS server failure.
    GeneralFailure = 1,
    /// 2: connection not allowed by ruleset.
    NotAllowed = 2,
    /// 3: network unreachable.
    NetworkUnreachable = 3,
    /// 4: host unreachable.
    HostUnreachable = 4,
    /// 5: connection refused.
    ConnectionRefused = 5,
    /// 7: command not supported.
    CommandNotSupported = 7,
    /// 8: address type not supported.
    AddressTypeNotSupported = 8,
}

/// The reply for a broker refusal.
pub(crate) fn reply_for(e: &BrokerError) -> Reply {
    match e.refusal.rule {
        RefusalRule::ResolveFailed => Reply::HostUnreachable,
        RefusalRule::ConnectFailed => match e.io_kind {
            Some(io::ErrorKind::ConnectionRefused) => Reply::ConnectionRefused,
            Some(io::ErrorKind::NetworkUnreachable) => Reply::NetworkUnreachable,
            Some(io::ErrorKind::TimedOut) | Some(io::ErrorKind::HostUnreachable) => {
                Reply::HostUnreachable
            }
            _ => Reply::GeneralFailure,
        },
        RefusalRule::BadRequest => Reply::GeneralFailure,
        _ => Reply::NotAllowed,
    }
}

fn send_reply(client: &mut TcpStream, reply: Reply) -> io::Result<()> {
    // Bound address 0.0.0.0:0: the client has no use for the broker's.
    client.write_all(&[5, reply as u8, 0, 1, 0, 0, 0, 0, 0, 0])
}

fn read_array<const N: usize>(client: &mut TcpStream) -> io::Result<[u8; N]> {
    let mut b = [0u8; N];
    client.read_exact(&mut b)?;
    Ok(b)
}

/// Serves one SOCKS5 client (its first byte, 5, not yet read).
pub(crate) fn serve(mut client: TcpStream, broker: &Broker) -> io::Result<()> {
    let started = Instant::now();
    let [_version, nmethods] = read_array::<2>(&mut client)?;
    let mut methods = vec![0u8; nmethods as usize];
    client.read_exact(&mut methods)?;
    if !methods.contains(&0) {
        broker.record_bad_request(
            FrontEnd::Socks5,
            "client offered no \"no authentication\" method",
            started,
        );
        return client.write_all(&[5, 0xff]);
    }
    client.write_all(&[5, 0])?;
    let [version, cmd, _rsv, atyp] = read_array::<4>(&mut client)?;
    let host = match atyp {
        1 => IpAddr::V4(Ipv4Addr::from(read_array::<4>(&mut client)?)).to_string(),
        4 => format!("[{}]", Ipv6Addr::from(read_array::<16>(&mut client)?)),
        3 => {
            let [len] = read_array::<1>(&mut client)?;
            let mut name = vec![0u8; len as usize];
            client.read_exact(&mut name)?;
            match String::from_utf8(name) {
                Ok(n) => n,
                Err(_) => {
                    broker.record_bad_request(
                        FrontEnd::Socks5,
                        "domain name is not UTF-8",
                        started,
                    );
                    return send_reply(&mut client, Reply::GeneralFailure);
                }
            }
        }
        _ => {
            broker.record_bad_request(
                FrontEnd::Socks5,
                &format!("address type {atyp} not supported"),
                started,
            );
            return send_reply(&mut client, Reply::AddressTypeNotSupported);
        }
    };
    let port = u16::from_be_bytes(read_array::<2>(&mut client)?);
    if version != 5 || cmd != 1 {
        broker.record_bad_request(
            FrontEnd::Socks5,
            &format!("command {cmd} not supported (only CONNECT)"),
            started,
        );
        return send_reply(&mut client, Reply::CommandNotSupported);
    }
    match broker.open_from(&host, port, FrontEnd::Socks5, client.peer_addr().ok()) {
        Ok(tunnel) if broker.intercept_for(tunnel.host()).is_some() => {
            // Its requests are judged: only through the HTTP proxy's
            // CONNECT, where the broker reads them.
            drop(tunnel);
            send_reply(&mut client, Reply::NotAllowed)
        }
        Ok(tunnel) => {
            send_reply(&mut client, Reply::Succeeded)?;
            client.set_read_timeout(None)?;
            tunnel.splice(client);
            Ok(())
        }
        Err(e) => send_reply(&mut client, reply_for(&e)),
    }
}
