//! The network of a session: off, the host's, or only allowlisted
//! destinations through the broker (`aq_net`).
//!
//! With an allowlist the sandbox still has no network of its own: its
//! namespace holds only `lo`, and on `127.0.0.1:3128` in there listens a
//! socket that the sandbox's supervisor bound and handed out (see
//! `aq_sandbox::SandboxSpec::loopback_listeners`). `aq run` serves it from
//! outside with the broker, which judges each `host:port`, resolves the name
//! once itself, refuses private answers, connects to the pinned address and
//! copies bytes. The proxy variables of the common tools point there; there
//! is no resolver inside, so a name can only leave as a proxy request.

use std::ffi::OsString;
use std::sync::{Arc, Mutex};

use aq_audit::EventBody;
use aq_policy::{NetworkSetting, NetworkSettings, Profile};

pub use crate::error::NetworkError;
use crate::supervisor::Supervisor;

/// The relay's port inside the sandbox's own network namespace.
pub const PROXY_PORT: u16 = 3128;

/// What the session's network is.
pub enum NetPlan {
    /// Only the sandbox's own loopback.
    Off,
    /// The host's network, unfiltered.
    Host,
    /// Only allowlisted destinations, through the broker.
    Broker {
        /// The allowlist the broker applies.
        allowlist: aq_net::Allowlist,
        /// The allow entries, for the banner, the log and `aq policy show`.
        allow: Vec<Allowed>,
        /// The names pinned to addresses (`--resolve`, `[network] resolve`).
        pins: Vec<Allowed>,
        /// What a connection to a host not on the list gets.
        unlisted: aq_policy::UnlistedHosts,
    },
}

/// One entry of a session's allowlist (or one pin), with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// As written: `example.com`, `*.example.com:443`, `NAME:ADDR`.
    pub entry: String,
    /// Who asked for it.
    pub from: NetSource,
}

/// Where an allowlist entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetSource {
    /// The command line: `--net allow:...` or `--resolve`.
    Flag,
    /// The policy's `[network]`: the index of the entry in its list (and
    /// so in [`aq_policy::Provenance`]'s parallel one).
    Policy(usize),
    /// The agent preset's own hosts.
    Agent,
}

impl NetPlan {
    /// What the network is, in a few words, for the banner and the log's
    /// layers.
    pub fn note(&self) -> String {
        self.note_with_relay(&format!("proxy 127.0.0.1:{PROXY_PORT} inside"))
    }

    /// [`NetPlan::note`] with the broker's relay described as `relay`
    /// (on macOS it listens on the host's loopback, on a port of its own).
    pub(crate) fn note_with_relay(&self, relay: &str) -> String {
        match self {
            NetPlan::Off => "off".to_string(),
            NetPlan::Host => "host (unfiltered)".to_string(),
            NetPlan::Broker { allow, .. } if allow.is_empty() => {
                format!("off: the broker ({relay}) refuses and logs every destination")
            }
            NetPlan::Broker { .. } => format!(
                "only {} through the broker ({relay})",
                self.allowed().join(", ")
            ),
        }
    }

    /// The allow entries, as written (empty unless the broker is used).
    pub fn allowed(&self) -> Vec<String> {
        match self {
            NetPlan::Broker { allow, .. } => allow.iter().map(|a| a.entry.clone()).collect(),
            _ => Vec::new(),
        }
    }
}

/// The session's network from `--net`, `--resolve`, the profile and the
/// policy's `[network]`. `--net off` and `--net allow:A,B` win; without the
/// flag, a sandboxed profile whose network is off uses the broker when the
/// policy allows destinations. An agent preset (`agent_hosts`, possibly
/// empty) always gets the broker in a sandbox whose network is off: what
/// it needs goes through, and what else it tries is refused and logged.
pub fn decide(
    flag: Option<&str>,
    resolve: &[String],
    profile: &Profile,
    policy: &NetworkSettings,
    agent_hosts: Option<&[String]>,
) -> Result<NetPlan, NetworkError> {
    let mut allow: Vec<Allowed> = Vec::new();
    let tagged = |from: NetSource| {
        move |entry: &String| Allowed {
            entry: entry.clone(),
            from,
        }
    };
    let broker = match flag {
        Some("off") => false,
        Some(f) if f.starts_with("allow:") => {
            let list: Vec<String> = f["allow:".len()..]
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(String::from)
                .collect();
            if list.is_empty() {
                return Err(NetworkError::EmptyAllow);
            }
            allow.extend(list.iter().map(tagged(NetSource::Flag)));
            true
        }
        Some(other) => {
            return Err(NetworkError::UnknownValue {
                value: other.to_string(),
            });
        }
        None => {
            profile.sandbox
                && profile.network == NetworkSetting::Off
                && (!policy.allow.is_empty() || agent_hosts.is_some())
        }
    };
    if flag.is_none() && (profile.network == NetworkSetting::Host || !profile.sandbox) {
        return Ok(NetPlan::Host);
    }
    if !broker {
        // Off is a network namespace of the sandbox's: without one the
        // command would have the host's, whatever the banner said.
        if !profile.sandbox {
            return Err(NetworkError::OffWithoutSandbox {
                profile: profile.name.clone(),
            });
        }
        return Ok(NetPlan::Off);
    }
    if !profile.sandbox {
        return Err(NetworkError::AllowWithoutSandbox {
            profile: profile.name.clone(),
        });
    }
    let from_policy = |list: &[String]| -> Vec<Allowed> {
        list.iter()
            .enumerate()
            .map(|(i, e)| tagged(NetSource::Policy(i))(e))
            .collect()
    };
    allow.extend(from_policy(&policy.allow));
    allow.extend(
        agent_hosts
            .unwrap_or_default()
            .iter()
            .map(tagged(NetSource::Agent)),
    );
    let mut pins: Vec<Allowed> = resolve.iter().map(tagged(NetSource::Flag)).collect();
    pins.extend(from_policy(&policy.resolve));
    let entries = |l: &[Allowed]| l.iter().map(|a| a.entry.clone()).collect::<Vec<_>>();
    let allowlist =
        aq_net::Allowlist::from_entries(&entries(&allow), &entries(&pins), &policy.permit)
            .map_err(NetworkError::Allowlist)?;
    Ok(NetPlan::Broker {
        allowlist,
        allow,
        pins,
        unlisted: policy.unlisted,
    })
}

/// The names pinned by `--resolve` and the policy's `[network] resolve`,
/// normalised as the broker has them.
pub fn pins(
    resolve: &[String],
    policy: &NetworkSettings,
) -> Result<Vec<(String, std::net::IpAddr)>, NetworkError> {
    let entries: Vec<&str> = resolve
        .iter()
        .chain(&policy.resolve)
        .map(String::as_str)
        .collect();
    let no: [&str; 0] = [];
    let list =
        aq_net::Allowlist::from_entries(&no, &entries, &no).map_err(NetworkError::Resolve)?;
    Ok(list
        .pins()
        .map(|(name, addr)| (name.to_string(), addr))
        .collect())
}

/// The variables that send the common tools through the relay on
/// `127.0.0.1:port`: [`PROXY_PORT`] in the Linux sandbox's own network
/// namespace, the port the broker got on the host's loopback on macOS.
pub(crate) fn proxy_env(port: u16) -> Vec<(OsString, OsString)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("http_proxy", &http),
        ("https_proxy", &http),
        ("ALL_PROXY", &socks),
        ("all_proxy", &socks),
        ("npm_config_proxy", &http),
        ("npm_config_https_proxy", &http),
        ("YARN_HTTP_PROXY", &http),
        ("YARN_HTTPS_PROXY", &http),
        ("PIP_PROXY", &http),
        ("CARGO_HTTP_PROXY", &http),
        ("GIT_HTTP_PROXY", &http),
        // Node 24 and later: the built-in fetch uses the variables above
        // (Node 20 and 22 ignore this, and their fetch fails to resolve).
        ("NODE_USE_ENV_PROXY", &"1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (OsString::from(k), OsString::from(v)))
    .chain(std::iter::once((
        OsString::from("NO_PROXY"),
        OsString::from("localhost,127.0.0.1,::1"),
    )))
    .chain(ssh_through_broker(port))
    .collect()
}

/// `GIT_SSH_COMMAND` with `aq __connect` as ssh's ProxyCommand, so git over
/// SSH reaches allowlisted hosts (with port 22 on the list) through the
/// broker; a relay elsewhere than [`PROXY_PORT`] is named.
fn ssh_through_broker(port: u16) -> Option<(OsString, OsString)> {
    let aq = std::env::current_exe().ok()?;
    let aq = aq.to_str()?;
    if aq.contains(['\'', '"', ' ']) {
        return None;
    }
    let relay = if port == PROXY_PORT {
        String::new()
    } else {
        format!("--relay-port {port} ")
    };
    Some((
        OsString::from("GIT_SSH_COMMAND"),
        OsString::from(format!(
            "ssh -o ProxyCommand=\"{aq} __connect {relay}%h %p\""
        )),
    ))
}

/// The broker of one session: started when the sandbox hands out its
/// listener, stopped (flushing the records of open connections) at the end.
pub(crate) struct SessionBroker {
    server: Arc<Mutex<Option<aq_net::ProxyServer>>>,
}

impl SessionBroker {
    /// A sink for `aq_sandbox::apply_with` that serves the relay with a
    /// broker applying `allowlist`, logging each connection.
    pub fn start(
        allowlist: aq_net::Allowlist,
        supervisor: Arc<Supervisor>,
        unlisted: aq_policy::UnlistedHosts,
        intercept: Option<Arc<aq_net::Intercept>>,
    ) -> (SessionBroker, aq_sandbox::ListenerSink) {
        let server = Arc::new(Mutex::new(None));
        let slot = server.clone();
        let sink: aq_sandbox::ListenerSink = Box::new(move |fds| {
            let Some(fd) = fds.into_iter().next() else {
                return;
            };
            let log = supervisor.clone();
            let asker = crate::net_asks::NetAsker::new(supervisor.clone(), unlisted);
            let mut broker = aq_net::Broker::new(allowlist)
                .with_records(Arc::new(move |r: &aq_net::ConnectionRecord| {
                    log_record(&log, r)
                }))
                .with_unlisted(asker.into_asker());
            if let Some(i) = intercept {
                broker = broker.with_intercept(i);
            }
            match aq_net::ProxyServer::serve(std::net::TcpListener::from(fd), Arc::new(broker)) {
                Ok(s) => {
                    if let Ok(mut slot) = slot.lock() {
                        *slot = Some(s);
                    }
                }
                Err(e) => eprintln!("aq: the network relay could not start: {e}"),
            }
        });
        (SessionBroker { server }, sink)
    }

    /// Stop serving; open connections are closed and recorded.
    pub fn stop(self) {
        let server = self.server.lock().ok().and_then(|mut s| s.take());
        drop(server);
    }
}

fn log_record(supervisor: &Supervisor, r: &aq_net::ConnectionRecord) {
    let command = supervisor
        .command_pid
        .load(std::sync::atomic::Ordering::Relaxed);
    if r.decision == aq_net::Decision::Denied
        && let Some(client) = r.client
        && let Some(pid) = crate::net_asks::client_process(command, client, PROXY_PORT)
    {
        crate::net_asks::tell_process(pid, command, &refusal_note(r));
    }
    crate::log_event(
        &supervisor.log,
        &supervisor.file.id,
        EventBody::NetworkConnection {
            host: r.host.clone(),
            port: r.port,
            addr: r.pinned_addr.map(|a| a.to_string()),
            decision: r.decision.as_str().to_string(),
            rule: r.rule.clone(),
            reason: r.reason.clone(),
            front_end: r.front_end.as_str().to_string(),
            bytes_up: r.bytes_up,
            bytes_down: r.bytes_down,
            duration_ms: r.duration_ms,
        },
    );
}

/// What a process whose connection was refused reads on its standard
/// error: the destination, the rule, why, and how the user allows it.
pub(crate) fn refusal_note(r: &aq_net::ConnectionRecord) -> String {
    let why = r
        .reason
        .as_deref()
        .unwrap_or("refused by the session's network policy");
    format!(
        "aq: network: {}:{} refused [{}]: {why}\n",
        r.host, r.port, r.rule
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(name: &str) -> Profile {
        Profile::builtin(name).unwrap()
    }

    #[test]
    fn the_flag_and_the_policy_decide_the_network() {
        let none = NetworkSettings::default();
        let strict = profile("strict");
        assert!(matches!(
            decide(None, &[], &strict, &none, None),
            Ok(NetPlan::Off)
        ));
        assert!(matches!(
            decide(None, &[], &profile("dev"), &none, None),
            Ok(NetPlan::Host)
        ));
        assert!(matches!(
            decide(
                Some("allow:registry.npmjs.org,*.example.invalid"),
                &[],
                &strict,
                &none,
                None
            ),
            Ok(NetPlan::Broker { .. })
        ));
        let policy = NetworkSettings {
            allow: vec!["registry.npmjs.org".into()],
            ..NetworkSettings::default()
        };
        assert!(matches!(
            decide(None, &[], &strict, &policy, None),
            Ok(NetPlan::Broker { .. })
        ));
        assert!(matches!(
            decide(Some("off"), &[], &strict, &policy, None),
            Ok(NetPlan::Off)
        ));
        assert!(decide(Some("allow:"), &[], &strict, &none, None).is_err());
        assert!(decide(Some("on"), &[], &strict, &none, None).is_err());
        // An agent preset gets the broker (even with nothing to allow), so
        // what it tries is refused and logged; not with the host network.
        assert!(matches!(
            decide(None, &[], &strict, &none, Some(&[])),
            Ok(NetPlan::Broker { .. })
        ));
        assert!(matches!(
            decide(None, &[], &profile("dev"), &none, Some(&[])),
            Ok(NetPlan::Host)
        ));
        assert!(
            decide(
                Some("allow:x.example.invalid"),
                &[],
                &profile("shims-only"),
                &none,
                None
            )
            .is_err()
        );
        // Off without a sandbox would be the host's network: refused.
        assert!(matches!(
            decide(Some("off"), &[], &profile("shims-only"), &none, None),
            Err(NetworkError::OffWithoutSandbox { .. })
        ));
        assert!(matches!(
            decide(None, &[], &profile("shims-only"), &none, None),
            Ok(NetPlan::Host)
        ));
        assert!(
            decide(
                Some("allow:x.example.invalid"),
                &["x.example.invalid:not-an-ip".into()],
                &strict,
                &none,
                None
            )
            .is_err()
        );
    }

    #[test]
    fn ssh_names_the_relay_only_where_it_is_not_the_sandboxs_own_port() {
        let ssh = |port| {
            proxy_env(port)
                .into_iter()
                .find(|(k, _)| k == "GIT_SSH_COMMAND")
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        let Some(linux) = ssh(PROXY_PORT) else {
            eprintln!("skipped: this test binary's path cannot be quoted for ssh");
            return;
        };
        assert!(linux.ends_with(" __connect %h %p\""), "{linux}");
        let mac = ssh(50_123).unwrap();
        assert!(
            mac.ends_with(" __connect --relay-port 50123 %h %p\""),
            "{mac}"
        );
        assert_eq!(
            mac.replace("--relay-port 50123 ", ""),
            linux,
            "nothing else differs"
        );
    }

    #[test]
    fn the_note_names_where_the_relay_listens() {
        let Ok(plan) = decide(
            Some("allow:x.example.invalid"),
            &[],
            &profile("strict"),
            &NetworkSettings::default(),
            None,
        ) else {
            panic!("a broker");
        };
        assert_eq!(
            plan.note(),
            "only x.example.invalid through the broker (proxy 127.0.0.1:3128 inside)"
        );
        assert_eq!(
            plan.note_with_relay("proxy 127.0.0.1:50123 on the host's loopback"),
            "only x.example.invalid through the broker (proxy 127.0.0.1:50123 on the host's loopback)"
        );
    }

    #[test]
    fn each_allowlist_entry_says_where_it_came_from() {
        let policy = NetworkSettings {
            allow: vec!["a.example.invalid".into(), "b.example.invalid".into()],
            resolve: vec!["a.example.invalid:127.0.0.1".into()],
            ..NetworkSettings::default()
        };
        let agent = vec!["api.example.invalid".to_string()];
        let Ok(NetPlan::Broker { allow, pins, .. }) = decide(
            Some("allow:c.example.invalid"),
            &["c.example.invalid:127.0.0.2".into()],
            &profile("strict"),
            &policy,
            Some(&agent),
        ) else {
            panic!("a broker");
        };
        let from: Vec<(&str, NetSource)> =
            allow.iter().map(|a| (a.entry.as_str(), a.from)).collect();
        assert_eq!(
            from,
            [
                ("c.example.invalid", NetSource::Flag),
                ("a.example.invalid", NetSource::Policy(0)),
                ("b.example.invalid", NetSource::Policy(1)),
                ("api.example.invalid", NetSource::Agent),
            ]
        );
        let pinned: Vec<NetSource> = pins.iter().map(|a| a.from).collect();
        assert_eq!(pinned, [NetSource::Flag, NetSource::Policy(0)]);
    }
}
