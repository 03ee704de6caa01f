//! The agent side of `aq run`: which preset applies (`--agent`, else
//! recognised from the command), and the key proxy that serves its model API.

use std::path::PathBuf;
use std::sync::Arc;

use aq_agents::{Grants, Preset, PresetSet};
use aq_audit::EventBody;

pub use crate::error::UnknownAgent;
use crate::supervisor::Supervisor;

/// The key proxy's port inside the sandbox's own network namespace.
pub(crate) const KEY_PROXY_PORT: u16 = 3129;

/// The preset in force and how it was chosen.
pub struct Chosen {
    /// The preset.
    pub preset: Preset,
    /// How it was chosen (`--agent`, recognised from the command), for the
    /// banner.
    pub by: String,
    /// Where the agent's own arguments start in the command.
    pub args_at: usize,
}

/// `--agent NAME` (or `none`), else the preset recognised from `command`.
pub fn choose(
    set: &PresetSet,
    flag: Option<&str>,
    command: &[String],
) -> Result<Option<Chosen>, UnknownAgent> {
    let resolved = resolve_program(command.first().map(String::as_str).unwrap_or_default());
    match flag {
        Some("none") => return Ok(None),
        Some(name) => {
            let args_at = aq_agents::recognize(set, command, resolved.as_deref())
                .filter(|r| r.preset.name == name)
                .map_or(1, |r| r.args_at);
            return set
                .get(name)
                .map(|p| {
                    Some(Chosen {
                        preset: p.clone(),
                        by: "--agent".to_string(),
                        args_at,
                    })
                })
                .ok_or_else(|| UnknownAgent {
                    name: name.to_string(),
                    presets: set.names().into_iter().map(String::from).collect(),
                });
        }
        None => {}
    }
    Ok(
        aq_agents::recognize(set, command, resolved.as_deref()).map(|r| Chosen {
            preset: r.preset.clone(),
            by: r.by,
            args_at: r.args_at,
        }),
    )
}

/// Where `program` leads: found on `PATH` when it has no `/`, links followed.
fn resolve_program(program: &str) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    let path = if program.contains('/') {
        PathBuf::from(program)
    } else {
        let dirs = crate::run::host_path();
        std::env::split_paths(&dirs)
            .map(|d| d.join(program))
            .find(|p| p.is_file())?
    };
    std::fs::canonicalize(path).ok()
}

/// The session record of what was granted.
pub fn record(
    preset: Option<&Preset>,
    grants: &Grants,
    network_allow: &[String],
) -> aq_audit::SessionGrants {
    let show = |p: &PathBuf| p.display().to_string();
    aq_audit::SessionGrants {
        agent: preset.map(|p| p.name.clone()),
        env_passed: grants.env_passed.clone(),
        env_set: grants.env_set.clone(),
        keys_outside: grants.keys_outside.clone(),
        keys_passed: grants.keys_passed.clone(),
        writable: grants
            .writable
            .iter()
            .map(show)
            .chain(
                grants
                    .shadows
                    .iter()
                    .map(|s| format!("{} (a session copy)", s.real.display())),
            )
            .collect(),
        read_only: grants
            .read_only_home
            .iter()
            .chain(&grants.read_only_workspace)
            .map(show)
            .collect(),
        network_allow: network_allow.to_vec(),
        model_api: grants.key_proxy.as_ref().map(|k| k.upstream.clone()),
        model_endpoints: Vec::new(),
    }
}

/// The banner lines for the preset. Without aq's sandbox (`sandboxed`
/// false) its grants and notes, written for the sandbox, are not claimed.
pub fn banner(chosen: &Chosen, grants: &Grants, sandboxed: bool) -> Vec<String> {
    let p = &chosen.preset;
    if !sandboxed {
        let mut lines = vec![format!(
            "agent preset {} ({}, {}): no kernel sandbox, so no paths are granted and none of its settings are applied",
            p.name, p.title, chosen.by,
        )];
        lines.extend(grants.notes.iter().cloned());
        return lines;
    }
    let mut lines = vec![format!(
        "agent preset {} ({}, {}): {} state paths writable, {} config files read-only",
        p.name,
        p.title,
        chosen.by,
        grants.writable.len(),
        grants.read_only_home.len() + grants.read_only_workspace.len(),
    )];
    if let Some(k) = &grants.key_proxy {
        lines.push(format!(
            "model API {} served inside at {}{}",
            k.upstream,
            k.inside_url,
            if grants.keys_outside.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} stays outside (the agent holds a placeholder)",
                    grants.keys_outside.join(", ")
                )
            }
        ));
    }
    if !grants.args.is_empty() {
        lines.push(format!("arguments added: {}", grants.args.join(" ")));
    }
    if !grants.keys_passed.is_empty() {
        lines.push(format!(
            "{} passed to the agent only: removed from every program it starts",
            grants.keys_passed.join(", ")
        ));
    }
    lines.extend(p.notes.iter().cloned());
    lines.extend(grants.notes.iter().cloned());
    lines
}

/// Serve the key proxy on `fd` (the listener handed out of the sandbox),
/// logging each request as a `network_connection` event.
pub(crate) fn serve_key_proxy(
    fd: std::os::fd::OwnedFd,
    plan: &aq_agents::KeyProxyPlan,
    agent: &str,
    pins: &[(String, std::net::IpAddr)],
    supervisor: Arc<Supervisor>,
) -> Option<aq_net::KeyProxy> {
    let config = aq_net::KeyProxyConfig {
        upstream: plan.upstream.clone(),
        headers: plan.headers.clone(),
        query_key: plan.query_key.clone(),
        pins: pins.to_vec(),
        http_rule: None,
    };
    serve_proxy(
        fd,
        config,
        format!("agent-api:{agent}"),
        "key-proxy",
        supervisor,
    )
}

/// Serve a bridge to a model server on the host's loopback on `fd` (the
/// listener inside at the same port): the key proxy's code for that one
/// upstream, with the key proxy's keys when it is the agent's model API.
pub(crate) fn serve_bridge(
    fd: std::os::fd::OwnedFd,
    bridge: &crate::model_routes::Bridge,
    keys_of: Option<&aq_agents::KeyProxyPlan>,
    pins: &[(String, std::net::IpAddr)],
    supervisor: Arc<Supervisor>,
) -> Option<aq_net::KeyProxy> {
    let config = aq_net::KeyProxyConfig {
        upstream: bridge.upstream.clone(),
        headers: keys_of.map(|p| p.headers.clone()).unwrap_or_default(),
        query_key: keys_of.and_then(|p| p.query_key.clone()),
        pins: pins.to_vec(),
        http_rule: None,
    };
    serve_proxy(
        fd,
        config,
        format!("agent-endpoint:{}", bridge.from),
        "bridge",
        supervisor,
    )
}

fn serve_proxy(
    fd: std::os::fd::OwnedFd,
    config: aq_net::KeyProxyConfig,
    rule: String,
    front_end: &'static str,
    supervisor: Arc<Supervisor>,
) -> Option<aq_net::KeyProxy> {
    let recorder: aq_net::KeyProxyRecorder = Arc::new(move |r: &aq_net::KeyProxyRecord| {
        crate::log_event(
            &supervisor.log,
            &supervisor.file.id,
            EventBody::NetworkConnection {
                host: r.host.clone(),
                port: r.port,
                addr: None,
                decision: if r.error.is_some() {
                    "failed"
                } else {
                    "allowed"
                }
                .to_string(),
                rule: rule.clone(),
                reason: Some(match &r.error {
                    Some(e) => format!("{}: {e}", r.request),
                    None => format!(
                        "{}{}",
                        r.request,
                        if r.keyed { " (key added outside)" } else { "" }
                    ),
                }),
                front_end: front_end.to_string(),
                bytes_up: r.bytes_up,
                bytes_down: r.bytes_down,
                duration_ms: r.duration_ms,
            },
        );
    });
    match aq_net::KeyProxy::serve(std::net::TcpListener::from(fd), config, recorder) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("aq: the {front_end} could not start: {e}");
            None
        }
    }
}

/// The command with the preset's arguments added where the agent's own start.
pub(crate) fn with_args(
    command: &[String],
    chosen: Option<&Chosen>,
    grants: &Grants,
) -> Vec<String> {
    match chosen {
        Some(c) if !grants.args.is_empty() => {
            let at = c.args_at.min(command.len());
            let mut out = command[..at].to_vec();
            out.extend(grants.args.iter().cloned());
            out.extend(command[at..].iter().cloned());
            out
        }
        _ => command.to_vec(),
    }
}
