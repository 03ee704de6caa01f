//! How each model endpoint the agent's configuration names is reached from
//! inside the sandbox, whose network namespace has only its own loopback.
//!
//! - A model server on the host's loopback (a LiteLLM gateway on 4000,
//!   Ollama on 11434, LM Studio, vLLM): a **bridge** listens inside on
//!   `127.0.0.1` and that same port, so the URL in the user's file works
//!   as written, and forwards each request to that one address and port on
//!   the host — nothing else on the host's loopback is reachable. The
//!   bridge is the key proxy's code with no key of its own (HTTP only,
//!   every request seen and logged); for the agent's own model API it puts
//!   the key in, as the key proxy does.
//! - Anything else: its `host:port` joins the broker's allowlist.

use aq_agents::endpoints::Endpoint;

/// One bridge from inside to the host's loopback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bridge {
    /// The port, inside and on the host.
    pub port: u16,
    /// `http://127.0.0.1:4000` on the host.
    pub upstream: String,
    /// Where the endpoint was configured.
    pub from: String,
    /// It is the agent's model API (the key proxy's keys are put in).
    pub api: bool,
}

/// The routes for one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routes {
    /// Loopback endpoints, bridged.
    pub bridges: Vec<Bridge>,
    /// Remote endpoints, as allowlist entries (`gw.example.invalid:443`).
    pub broker_hosts: Vec<String>,
    /// What the banner and the log say, one line per endpoint.
    pub lines: Vec<String>,
}

/// Decides the route of each endpoint. `taken` are the ports inside that
/// aq already listens on (the broker's, the key proxy's).
pub fn plan(endpoints: &[Endpoint], taken: &[u16]) -> Routes {
    let mut routes = Routes::default();
    for e in endpoints {
        let (tls, host, port) = match aq_net::http_target(&e.url) {
            Ok(t) => t,
            Err(err) => {
                routes
                    .lines
                    .push(format!("{} ({}): not used: {err}", e.url, e.from));
                continue;
            }
        };
        let loopback = host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|a| a.is_loopback());
        if !loopback {
            let entry = format!("{host}:{port}");
            routes.lines.push(format!(
                "{} ({}): through the broker ({entry} allowed)",
                e.url, e.from
            ));
            if !routes.broker_hosts.contains(&entry) {
                routes.broker_hosts.push(entry);
            }
            continue;
        }
        let why_not = if tls {
            Some("https on loopback is not bridged (write http://)".to_string())
        } else if host != "127.0.0.1" && !host.eq_ignore_ascii_case("localhost") {
            Some(format!(
                "only 127.0.0.1 and localhost are bridged, not {host}"
            ))
        } else if taken.contains(&port) {
            Some(format!("port {port} inside is aq's own"))
        } else {
            None
        };
        if let Some(why) = why_not {
            routes.lines.push(format!(
                "{} ({}): not reachable inside: {why}",
                e.url, e.from
            ));
            continue;
        }
        if routes.bridges.iter().any(|b| b.port == port) {
            continue;
        }
        routes.lines.push(format!(
            "{} ({}): bridged to the host's 127.0.0.1:{port}, and nothing else on its loopback",
            e.url, e.from
        ));
        routes.bridges.push(Bridge {
            port,
            upstream: format!("http://127.0.0.1:{port}"),
            from: e.from.clone(),
            api: e.api,
        });
    }
    routes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(url: &str) -> Endpoint {
        Endpoint {
            url: url.into(),
            from: "~/.x/config.toml p.x.base_url".into(),
            api: false,
        }
    }

    #[test]
    fn loopback_is_bridged_port_by_port_and_the_rest_goes_to_the_broker() {
        let r = plan(
            &[
                ep("http://127.0.0.1:4000/v1"),
                ep("http://localhost:11434/v1"),
                ep("http://localhost:4000/other"),
                ep("https://gw.example.invalid/v1"),
                ep("http://203.0.113.7:8000/v1"),
                ep("https://127.0.0.1:8443"),
                ep("http://127.0.0.2:9000"),
                ep("http://127.0.0.1:3128"),
                ep("http://[::1]:9001"),
            ],
            &[3128, 3129],
        );
        let ports: Vec<u16> = r.bridges.iter().map(|b| b.port).collect();
        assert_eq!(ports, [4000, 11434]);
        assert_eq!(r.bridges[1].upstream, "http://127.0.0.1:11434");
        assert_eq!(
            r.broker_hosts,
            ["gw.example.invalid:443", "203.0.113.7:8000"]
        );
        let text = r.lines.join("\n");
        for needle in [
            "https on loopback is not bridged",
            "not 127.0.0.2",
            "port 3128 inside is aq's own",
            "not ::1",
        ] {
            assert!(text.contains(needle), "{needle} in {text}");
        }
    }
}
