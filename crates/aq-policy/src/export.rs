//! Where audit logs may be shipped: `[audit] export` in the user's policy
//! and `aq audit export --format F --endpoint URL`, parsed once into a
//! [`ExportTarget`] so that a bad URL is an error when the policy loads,
//! not a silent failure during a session.
//!
//! Only the user's own files may set it (see `EffectivePolicy::apply`): a
//! target chosen by a repository would send the user's logs to whoever
//! wrote the repository.

use std::fmt;

pub use crate::error::ExportTargetError;

/// The wire format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// OpenTelemetry logs, OTLP/HTTP with the JSON encoding.
    Otlp,
    /// RFC 5424 syslog messages.
    Syslog,
}

impl ExportFormat {
    /// The name as written in a policy file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Otlp => "otlp",
            ExportFormat::Syslog => "syslog",
        }
    }
}

impl std::str::FromStr for ExportFormat {
    type Err = ExportTargetError;

    fn from_str(s: &str) -> Result<Self, ExportTargetError> {
        match s {
            "otlp" => Ok(ExportFormat::Otlp),
            "syslog" => Ok(ExportFormat::Syslog),
            other => Err(ExportTargetError::UnknownFormat {
                format: other.to_string(),
            }),
        }
    }
}

/// Where the records go, by transport.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "transport", rename_all = "lowercase")]
pub enum Endpoint {
    /// An OTLP/HTTP logs URL (`http(s)://HOST[:PORT]/.../v1/logs`).
    Http {
        /// The full URL records are POSTed to.
        url: String,
    },
    /// A local syslog datagram socket (`unix:///dev/log`).
    Unix {
        /// The socket's absolute path.
        path: String,
    },
    /// Syslog over UDP, one message per datagram (RFC 5426).
    Udp {
        /// `HOST:PORT`.
        addr: String,
    },
    /// Syslog over TCP with octet-counting framing (RFC 6587).
    Tcp {
        /// `HOST:PORT`.
        addr: String,
    },
}

/// A checked export destination.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ExportTarget {
    /// The format.
    pub format: ExportFormat,
    /// The transport and address.
    pub endpoint: Endpoint,
}

impl fmt::Display for ExportTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let where_ = match &self.endpoint {
            Endpoint::Http { url } => url.clone(),
            Endpoint::Unix { path } => format!("unix://{path}"),
            Endpoint::Udp { addr } => format!("udp://{addr}"),
            Endpoint::Tcp { addr } => format!("tcp://{addr}"),
        };
        write!(f, "{} {where_}", self.format.as_str())
    }
}

/// The path OTLP/HTTP receivers serve logs on.
const OTLP_LOGS_PATH: &str = "/v1/logs";

impl ExportTarget {
    /// Checks a format and an endpoint together: OTLP takes `http://` or
    /// `https://` (the base URL; `/v1/logs` is added unless already there),
    /// syslog takes `unix:///PATH`, `udp://HOST:PORT` or `tcp://HOST:PORT`.
    pub fn parse(format: &str, endpoint: &str) -> Result<ExportTarget, ExportTargetError> {
        let format: ExportFormat = format.parse()?;
        let endpoint = endpoint.trim();
        if endpoint.is_empty()
            || endpoint
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(ExportTargetError::NotAUrl {
                endpoint: endpoint.to_string(),
            });
        }
        let (scheme, rest) =
            endpoint
                .split_once("://")
                .ok_or_else(|| ExportTargetError::NoScheme {
                    endpoint: endpoint.to_string(),
                })?;
        let endpoint = match (format, scheme) {
            (ExportFormat::Otlp, "http" | "https") => {
                let (authority, path) = match rest.find(['/', '?', '#']) {
                    Some(i) => rest.split_at(i),
                    None => (rest, ""),
                };
                check_authority(authority, /* port_required */ false)?;
                if path.contains(['?', '#']) {
                    return Err(ExportTargetError::OtlpQuery {
                        endpoint: endpoint.to_string(),
                    });
                }
                let path = path.trim_end_matches('/');
                let path = if path.ends_with(OTLP_LOGS_PATH) {
                    path.to_string()
                } else {
                    format!("{path}{OTLP_LOGS_PATH}")
                };
                Endpoint::Http {
                    url: format!("{scheme}://{authority}{path}"),
                }
            }
            (ExportFormat::Syslog, "unix") => {
                if !rest.starts_with('/') || rest.len() < 2 {
                    return Err(ExportTargetError::UnixNotAbsolute {
                        endpoint: endpoint.to_string(),
                    });
                }
                Endpoint::Unix {
                    path: rest.to_string(),
                }
            }
            (ExportFormat::Syslog, "udp" | "tcp") => {
                let authority = rest.strip_suffix('/').unwrap_or(rest);
                check_authority(authority, /* port_required */ true)?;
                let addr = authority.to_string();
                if scheme == "udp" {
                    Endpoint::Udp { addr }
                } else {
                    Endpoint::Tcp { addr }
                }
            }
            (ExportFormat::Otlp, other) => {
                return Err(ExportTargetError::NotOtlpScheme {
                    scheme: other.to_string(),
                });
            }
            (ExportFormat::Syslog, other) => {
                return Err(ExportTargetError::NotSyslogScheme {
                    scheme: other.to_string(),
                });
            }
        };
        Ok(ExportTarget { format, endpoint })
    }
}

/// `HOST[:PORT]` or `[V6][:PORT]`, with no user information (a password
/// in a URL would be written into messages and the audit log).
fn check_authority(authority: &str, port_required: bool) -> Result<(), ExportTargetError> {
    if authority.contains('@') {
        // Not quoted back: the part before `@` may be a password.
        return Err(ExportTargetError::Credentials);
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (inside, after) =
            v6.split_once(']')
                .ok_or_else(|| ExportTargetError::UnclosedBracket {
                    authority: authority.to_string(),
                })?;
        if inside.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(ExportTargetError::NotIpv6 {
                address: inside.to_string(),
            });
        }
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| ExportTargetError::AfterBracket {
                        authority: authority.to_string(),
                    })?,
            ),
        };
        (inside, port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty()
        || !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_:".contains(c))
    {
        return Err(ExportTargetError::NoHost {
            authority: authority.to_string(),
        });
    }
    match port {
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => Ok(()),
            _ => Err(ExportTargetError::BadPort {
                port: p.to_string(),
            }),
        },
        None if port_required => Err(ExportTargetError::NoPort {
            authority: authority.to_string(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(format: &str, endpoint: &str) -> Endpoint {
        ExportTarget::parse(format, endpoint)
            .unwrap_or_else(|e| panic!("{format} {endpoint}: {e}"))
            .endpoint
    }

    #[test]
    fn otlp_urls_get_the_logs_path_once() {
        for (given, url) in [
            ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/logs"),
            ("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/logs"),
            (
                "https://otel.example.invalid",
                "https://otel.example.invalid/v1/logs",
            ),
            ("http://[::1]:4318/v1/logs", "http://[::1]:4318/v1/logs"),
            (
                "http://c.example.invalid/otlp",
                "http://c.example.invalid/otlp/v1/logs",
            ),
        ] {
            assert_eq!(
                ok("otlp", given),
                Endpoint::Http { url: url.into() },
                "{given}"
            );
        }
    }

    #[test]
    fn syslog_transports() {
        assert_eq!(
            ok("syslog", "unix:///dev/log"),
            Endpoint::Unix {
                path: "/dev/log".into()
            }
        );
        assert_eq!(
            ok("syslog", "udp://127.0.0.1:514"),
            Endpoint::Udp {
                addr: "127.0.0.1:514".into()
            }
        );
        assert_eq!(
            ok("syslog", "tcp://[::1]:6514"),
            Endpoint::Tcp {
                addr: "[::1]:6514".into()
            }
        );
    }

    #[test]
    fn bad_targets_say_what_is_wrong() {
        for (format, endpoint, says) in [
            ("gelf", "http://x", "unknown export format `gelf`"),
            ("otlp", "ftp://x", "not an OTLP/HTTP endpoint"),
            ("otlp", "grpc://x:4317", "not an OTLP/HTTP endpoint"),
            ("otlp", "127.0.0.1:4318", "has no scheme"),
            ("otlp", "http://", "does not name a host"),
            ("otlp", "http://u:pw@host", "credentials in the URL"),
            ("otlp", "http://host:0", "not a port number"),
            ("otlp", "http://host:99999", "not a port number"),
            ("otlp", "http://host/logs?token=x", "query or fragment"),
            ("otlp", "http://ho st", "not an endpoint URL"),
            ("syslog", "http://x:514", "not a syslog transport"),
            ("syslog", "udp://host", "give a port"),
            ("syslog", "unix://dev/log", "absolute path"),
            ("syslog", "tcp://[zz]:514", "not an IPv6 address"),
        ] {
            let err = ExportTarget::parse(format, endpoint)
                .expect_err(endpoint)
                .to_string();
            assert!(err.contains(says), "{format} {endpoint}: {err}");
            assert!(!err.contains("pw@"), "a password is not repeated: {err}");
        }
    }

    #[test]
    fn display_names_format_and_place() {
        let t = ExportTarget::parse("syslog", "udp://127.0.0.1:514").unwrap();
        assert_eq!(t.to_string(), "syslog udp://127.0.0.1:514");
        let t = ExportTarget::parse("otlp", "http://127.0.0.1:4318").unwrap();
        assert_eq!(t.to_string(), "otlp http://127.0.0.1:4318/v1/logs");
    }
}
