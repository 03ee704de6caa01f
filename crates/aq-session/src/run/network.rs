//! Prepare the network: the hosts whose HTTPS requests the broker reads
//! (HTTP rules, credentials kept outside).

use super::supervise::Supervised;
use super::{Setup, Stop};
use crate::net_intercept::SessionIntercept;
use crate::network::NetPlan;

/// The broker's interception, when the network goes through the broker
/// and the policy asks for one; a credential that cannot be read stops
/// the session before anything runs (exit 125).
pub(super) fn prepare_network(
    setup: &Setup<'_>,
    supervised: &Supervised,
) -> Result<Option<SessionIntercept>, Stop> {
    match &setup.settled.net {
        NetPlan::Broker { .. } => crate::net_intercept::prepare(
            &setup.policy.loaded.effective.network,
            &setup.session.dir,
            supervised.supervisor.clone(),
        )
        .map_err(|e| Stop::sandbox_failed(&[e])),
        _ => Ok(None),
    }
}
