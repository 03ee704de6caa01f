//! Settle the profile and the network in force: what `aq policy show`
//! shows, with `--learn`, and what listens in the sandbox's own network.

use aq_policy::{Profile, SessionMode};

use super::RunOptions;
use super::agent::Agent;
use super::policy::Policy;
use crate::error::RunError;
use crate::model_routes::Bridge;
use crate::network::NetPlan;

/// The profile and network a session runs with.
pub(super) struct Settled {
    /// The profile, with `--learn` applied.
    pub profile: Profile,
    /// The network.
    pub net: NetPlan,
    /// Names pinned by `--resolve` and `[network] resolve`: the key proxy
    /// and the bridges honour them as the broker does.
    pub pins: Vec<(String, std::net::IpAddr)>,
    /// The key proxy's port, when the sandbox has a network of its own.
    pub key_proxy_port: Option<u16>,
    /// The bridges to loopback model endpoints, likewise.
    pub bridges: Vec<Bridge>,
}

impl Settled {
    /// Whether asks run without waiting and are logged for
    /// `aq policy suggest`.
    pub fn learning(&self) -> bool {
        self.profile.mode == SessionMode::Learn
    }
}

/// The profile and network in force for what was asked, given the agent;
/// learn mode only where the managed policy lets it be.
pub(super) fn settle_profile(
    policy: &Policy,
    agent: &Agent,
    args: &RunOptions,
) -> Result<Settled, RunError> {
    let effective = &policy.loaded.effective;
    let with_endpoint_hosts = agent.preset_with_endpoint_hosts();
    let crate::in_force::InForce {
        mut profile, net, ..
    } = crate::in_force::session(
        effective,
        &crate::in_force::Asked {
            profile: args.profile.as_deref(),
            home: args.home.as_deref(),
            net: args.net.as_deref(),
            resolve: &args.resolve,
            agent: with_endpoint_hosts.as_ref(),
        },
    )?;
    let pins = crate::network::pins(&args.resolve, &effective.network).map_err(RunError::Pins)?;
    if args.learn {
        profile.mode = SessionMode::Learn;
    }
    if profile.mode == SessionMode::Learn {
        aq_policy::managed::check_learn(effective).map_err(RunError::Learn)?;
    }
    let key_proxy_port = key_proxy_port(profile.sandbox, &net);
    // Bridges need the sandbox's own network namespace, as the key proxy.
    let bridges = if key_proxy_port.is_some() {
        agent.routes.bridges.clone()
    } else {
        Vec::new()
    };
    Ok(Settled {
        profile,
        net,
        pins,
        key_proxy_port,
        bridges,
    })
}

/// The key proxy needs a network namespace of the sandbox's own to
/// listen in: a sandbox with the network off, or only the broker.
fn key_proxy_port(sandbox: bool, net: &NetPlan) -> Option<u16> {
    (sandbox && matches!(net, NetPlan::Off | NetPlan::Broker { .. }))
        .then_some(crate::agent::KEY_PROXY_PORT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_proxy_listens_only_in_a_network_of_the_sandboxs_own() {
        let port = Some(crate::agent::KEY_PROXY_PORT);
        assert_eq!(key_proxy_port(true, &NetPlan::Off), port);
        assert_eq!(key_proxy_port(true, &NetPlan::Host), None);
        assert_eq!(key_proxy_port(false, &NetPlan::Off), None);
        assert_eq!(key_proxy_port(false, &NetPlan::Host), None);
    }
}
