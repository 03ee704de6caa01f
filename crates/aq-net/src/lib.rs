//! Governed network egress for `aq run`: a command in the sandbox
//! reaches only allowlisted domains, through a broker that runs outside.
//!
//! # Design
//!
//! **Decide, then do.** [`allowlist`], [`host`] and [`addr`] are pure: they
//! normalise a host, judge `host:port` against the user's allow entries,
//! pins and permitted destinations, and classify addresses, all without a
//! resolver or socket, so every decision is unit-tested. The [`broker`] does
//! the I/O in a fixed order: judge, resolve once, check every address, connect
//! by address, copy. The front ends ([`ProxyServer`]: HTTP `CONNECT`, plain
//! `http://` requests, SOCKS5 with remote names) only translate a client's
//! request into one [`Broker::open`] call and its answer into the client's
//! protocol.
//!
//! **One listener handed out, not a relay process.** The front end's
//! listening socket must live in the sandbox's network namespace (the
//! command sees only `lo`); everything else must run outside. Rather than a
//! relay inside that forwards each connection over a channel to the broker
//! (a second copy of every byte, a process for the command to attack, a
//! protocol between the two), the sandbox's init binds `127.0.0.1:PORT` in
//! the namespace before the command exists and passes that single
//! descriptor out over the session's inherited Unix socket pair
//! ([`handoff`], `SCM_RIGHTS`). Two reasons:
//!
//! - *Nothing of ours runs inside after setup.* A socket keeps the namespace
//!   it was created in: the handed-out listener accepts only connections made
//!   inside the sandbox, and the broker accepts, parses, resolves and
//!   connects from outside with the host's network. The command can connect
//!   to the listener and nothing more; the channel exists only between init
//!   and `aq` (no path another process can find) and is closed once used.
//! - *One copy of each byte.* The accepted client socket and the upstream
//!   socket are both the broker's, so a tunnel is a single `splice(2)` loop
//!   per direction: the same code and cost as the in-process mode.
//!
//! The in-process mode ([`ProxyServer::bind`]) is the same server on a
//! listener the broker binds itself on the host's loopback: the tests and
//! the benchmark use it.
//!
//! # Use
//!
//! ```no_run
//! use std::sync::Arc;
//! use aq_net::{Allowlist, Broker, ProxyServer};
//!
//! let list = Allowlist::from_entries(
//!     &["*.npmjs.org:443", "registry.corp.example"],
//!     &["registry.corp.example=10.0.0.5"],
//!     &[],
//! )?;
//! let broker = Broker::new(list).with_records(Arc::new(|r: &aq_net::ConnectionRecord| {
//!     eprintln!("aq: net {r}");
//! }));
//! let proxy = ProxyServer::bind(Arc::new(broker))?;
//! println!("HTTPS_PROXY=http://{}", proxy.local_addr());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Refusals
//!
//! Each refusal carries a stable rule id ([`RefusalRule`]): `net-not-allowlisted`,
//! `net-ip-literal`, `net-refused-address`, `net-invalid-host`,
//! `net-bad-request`, and for allowed destinations that cannot be reached
//! `net-resolve-failed`, `net-connect-failed`. HTTP clients get `403` (policy),
//! `502`/`504` (unreachable) or `400` with the reason and rule in the body
//! and an `X-Aq-Rule` header (and, for a policy refusal, in the status
//! line's reason phrase, which clients of a failed `CONNECT` print); SOCKS5
//! clients get reply 2 (not allowed by ruleset), 4, 5 or 1.
//!
//! # Unlisted names
//!
//! A name no allow entry names is refused, unless the broker has an asker
//! ([`Broker::with_unlisted`]): then the connection waits for its answer
//! (once, for the rest of the broker's life, or refused with a reason).
//! IP literals and refused addresses are never asked about.
//!
//! # Current limitations
//!
//! - TCP only; SOCKS5 `BIND` and `UDP ASSOCIATE` are refused (reply 7), and
//!   so is SOCKS4.
//! - A plain HTTP client connection carries one request (`Connection: close`
//!   upstream); clients reconnect, which costs a round trip per request.
//! - The broker sees inside TLS only for the hosts [`intercept`] covers
//!   (an HTTP rule or a credential): any other allowed name can be used for
//!   domain fronting, and can receive any data.
//! - One thread per client and two per tunnel, at most [`MAX_CLIENTS`]
//!   clients at once.

#![deny(missing_docs)]

pub mod addr;
pub mod allowlist;
pub mod broker;
mod copy;
mod error;
// Linux only: handing a listener out of the sandbox's network namespace.
#[cfg(target_os = "linux")]
pub mod handoff;
pub mod host;
mod http;
pub mod intercept;
pub mod keyproxy;
mod server;
pub mod socks5;

pub use addr::{AddrClass, classify_addr};
pub use allowlist::{Allowed, Allowlist, Destination, EntryError, Refusal, RefusalRule};
pub use broker::{
    Broker, BrokerError, ConnectionRecord, Decision, FixedResolver, FrontEnd, RecordSink, Resolve,
    SystemResolver, Tunnel, UnlistedAnswer, UnlistedAsker, UnlistedRequest,
};
pub use error::{HeadError, HttpRefusal, ProxySetupError, RequestError, RewriteError, UrlError};
pub use host::{Host, HostError, normalize_host};
pub use intercept::{HostRules, HttpRule, Intercept, InterceptRecorder};
pub use keyproxy::{KeyProxy, KeyProxyConfig, KeyProxyRecord, KeyProxyRecorder, http_target};
pub use server::{HANDSHAKE_TIMEOUT, MAX_CLIENTS, ProxyServer};
