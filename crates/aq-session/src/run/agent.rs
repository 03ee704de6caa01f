//! Recognise the agent: the preset the command starts (or `--agent`
//! names), where the user pointed it at its model, and how each of those
//! endpoints is reached from inside.

use std::ffi::OsString;
use std::path::PathBuf;

use aq_agents::Preset;
use aq_agents::endpoints::Found;

use super::RunOptions;
use super::policy::Policy;
use crate::agent::Chosen;
use crate::model_routes::Routes;

/// The caller's environment and home, read once: the agent's endpoints
/// and grants are found in them.
pub(super) struct Caller {
    /// Every variable, as the caller has it.
    pub env: Vec<(OsString, OsString)>,
    /// `HOME`, when set and not empty.
    pub home: Option<PathBuf>,
}

impl Caller {
    /// This process's environment.
    pub fn read() -> Caller {
        Caller {
            env: std::env::vars_os().collect(),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
        }
    }
}

/// The agent a session runs, if any.
pub(super) struct Agent {
    /// The caller's environment and home.
    pub caller: Caller,
    /// The preset and how it was chosen.
    pub chosen: Option<Chosen>,
    /// The model endpoints its configuration names.
    pub endpoints: Found,
    /// How each endpoint is reached: loopback through a bridge, the rest
    /// through the broker; with a line each for the banner and the log.
    pub routes: Routes,
}

impl Agent {
    /// The preset with its remote endpoints among its hosts: the network
    /// in force lets the agent reach them through the broker.
    pub(crate) fn preset_with_endpoint_hosts(&self) -> Option<Preset> {
        self.chosen
            .as_ref()
            .map(|c| with_hosts(&c.preset, &self.routes.broker_hosts))
    }
}

/// Chooses the preset for the command (or the one `--agent` names) and finds
/// where the user pointed it at its model.
pub(super) fn recognise_agent(
    policy: &Policy,
    args: &RunOptions,
) -> Result<Agent, crate::agent::UnknownAgent> {
    let command = &args.command;
    let chosen = crate::agent::choose(
        &policy.loaded.effective.agents,
        args.agent.as_deref(),
        command,
    )?;
    let caller = Caller::read();
    let endpoints = chosen
        .as_ref()
        .map(|c| {
            aq_agents::endpoints::find(
                &c.preset,
                caller.home.as_deref(),
                &caller.env,
                &command[c.args_at.min(command.len())..],
            )
        })
        .unwrap_or_default();
    let mut routes = crate::model_routes::plan(
        &endpoints.endpoints,
        &[crate::network::PROXY_PORT, crate::agent::KEY_PROXY_PORT],
    );
    routes.lines.extend(endpoints.refused.iter().cloned());
    Ok(Agent {
        caller,
        chosen,
        endpoints,
        routes,
    })
}

/// `preset` with `hosts` added to its own, each once, in order.
fn with_hosts(preset: &Preset, hosts: &[String]) -> Preset {
    let mut p = preset.clone();
    for h in hosts {
        if !p.hosts.contains(h) {
            p.hosts.push(h.clone());
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_hosts_are_added_to_the_presets_once_and_in_order() {
        let set = aq_agents::PresetSet::builtin();
        let mut preset = set.get("claude").unwrap().clone();
        preset.hosts.push("own.example.invalid:443".to_string());
        let own = preset.hosts.clone();
        let first = "own.example.invalid:443".to_string();
        let added = with_hosts(
            &preset,
            &[
                "gw.example.invalid:443".to_string(),
                first,
                "gw.example.invalid:443".to_string(),
                "b.example.invalid:8443".to_string(),
            ],
        );
        let mut want = own;
        want.push("gw.example.invalid:443".to_string());
        want.push("b.example.invalid:8443".to_string());
        assert_eq!(added.hosts, want);
        assert_eq!(with_hosts(&preset, &[]).hosts, preset.hosts);
    }
}
