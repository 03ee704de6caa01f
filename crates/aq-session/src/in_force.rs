//! What a session started in a workspace gets: the profile the flags and
//! the policy pick, as the layers made it, and its network, each grant with
//! where it came from.
//!
//! One computation for two verbs: `aq run` starts its session with
//! [`session`], and `aq policy show` prints [`session`]'s answer for each
//! profile with [`sources`], so what the one shows is what the other does.
//! The layers themselves are merged by [`aq_policy::EffectivePolicy`]
//! ([`crate::policy_files::load_for`] reads them); the network is decided
//! by [`crate::network::decide`].

use aq_agents::Preset;
use aq_policy::{EffectivePolicy, Location, PathAccess, Profile};

pub use crate::error::InForceError;
use crate::grant_dates::GrantDates;
use crate::network::{Allowed, NetPlan, NetSource};
use crate::policy_files::{FileKind, Loaded};

/// What the session was asked for on its command line.
#[derive(Debug, Default, Clone, Copy)]
pub struct Asked<'a> {
    /// `--profile` (default: the policy's `[session] profile`).
    pub profile: Option<&'a str>,
    /// `--home private|read-only`.
    pub home: Option<&'a str>,
    /// `--net off|allow:...`.
    pub net: Option<&'a str>,
    /// `--resolve NAME:ADDR` pins.
    pub resolve: &'a [String],
    /// The agent preset in force, if any (its hosts go through the broker).
    pub agent: Option<&'a Preset>,
}

/// The profile and network a session gets.
pub struct InForce {
    /// The profile, with `--home` applied, and its network off when the
    /// sandbox has no network of its own (off, or only the broker).
    pub profile: Profile,
    /// The session's network.
    pub net: NetPlan,
    /// The agent preset whose hosts the broker lets through.
    pub agent: Option<String>,
}

/// The profile called `name`, else the policy's default one.
pub fn profile_named(
    effective: &EffectivePolicy,
    name: Option<&str>,
) -> Result<Profile, InForceError> {
    let name = name
        .map(String::from)
        .unwrap_or_else(|| effective.session_settings().profile);
    effective
        .profiles
        .get(&name)
        .cloned()
        .ok_or_else(|| InForceError::UnknownProfile {
            available: effective
                .profiles
                .names()
                .into_iter()
                .map(String::from)
                .collect(),
            name,
        })
}

/// The profile and network of a session asked for with `asked`, under the
/// policy `effective`.
pub fn session(effective: &EffectivePolicy, asked: &Asked) -> Result<InForce, InForceError> {
    let mut profile = profile_named(effective, asked.profile)?;
    aq_policy::managed::check_profile(effective, &profile)?;
    aq_policy::managed::check_resolve(effective, asked.resolve)?;
    if let Some(home) = asked.home.and_then(aq_policy::HomeAccess::parse) {
        profile.home = home;
    }
    // A managed network: `--net` adds no host it does not allow, and an
    // agent preset's hosts are only those it allows.
    let locked_hosts = effective.managed.as_ref().and_then(|m| m.hosts.as_ref());
    if let Some(list) = asked.net.and_then(|f| f.strip_prefix("allow:")) {
        for host in list.split(',').map(str::trim).filter(|h| !h.is_empty()) {
            aq_policy::managed::check_host(effective, host)?;
        }
    }
    let agent_hosts: Option<Vec<String>> = asked.agent.filter(|_| profile.sandbox).map(|p| {
        p.hosts
            .iter()
            .filter(|h| locked_hosts.is_none_or(|l| l.contains(h)))
            .cloned()
            .collect()
    });
    let net = crate::network::decide(
        asked.net,
        asked.resolve,
        &profile,
        &effective.network,
        agent_hosts.as_deref(),
    )?;
    if let (Some(m), NetPlan::Host) = (&effective.managed, &net)
        && m.hosts.is_some()
    {
        return Err(InForceError::UnfilteredNetwork {
            profile: profile.name.clone(),
            managed: m.file.to_string(),
        });
    }
    // The sandbox of a broker session has no network of its own either.
    if matches!(net, NetPlan::Off | NetPlan::Broker { .. }) {
        profile.network = aq_policy::NetworkSetting::Off;
    }
    let agent = asked
        .agent
        .filter(|_| profile.sandbox)
        .map(|p| p.name.clone());
    Ok(InForce {
        profile,
        net,
        agent,
    })
}

/// Where a grant in force came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// aq's own: the built-in profile's lists.
    BuiltIn,
    /// A policy file.
    File {
        /// Its layer: the user's, the repository's, `--policy`.
        kind: FileKind,
        /// The entry (a network entry) or its table (a profile's path).
        at: Location,
        /// The list, as `aq grants` names it (`[network] allow`,
        /// `[profile.strict] writable`).
        place: String,
        /// When `aq allow` made it, if it recorded that (RFC 3339).
        granted: Option<String>,
    },
    /// The command line: `--net allow:...`, `--resolve`.
    Flag,
    /// The agent preset of that name.
    Agent(String),
}

/// One grant in force and its origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced {
    /// The path or the network entry, as written.
    pub value: String,
    /// Where it came from.
    pub origin: Origin,
}

/// A session's grants, each with its origin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    /// The allowlist of the broker (empty when it is not used).
    pub allow: Vec<Sourced>,
    /// Names pinned to addresses.
    pub pins: Vec<Sourced>,
    /// Private destinations permitted after all (`[network] permit`).
    pub permit: Vec<Sourced>,
    /// `[network] allow` and `resolve` entries the session does not use,
    /// because its network is the host's (unfiltered) or off (`--net off`).
    pub unused: Vec<Sourced>,
    /// Writable paths besides the workspace and the session's `TMPDIR`.
    pub writable: Vec<Sourced>,
    /// Readable paths named besides what the home setting keeps readable.
    pub readable: Vec<Sourced>,
}

/// Where each grant of `in_force` came from: the files of `loaded`, with
/// the dates `aq allow` recorded in `dates`.
pub fn sources(loaded: &Loaded, dates: &GrantDates, in_force: &InForce) -> Sources {
    let eff = &loaded.effective;
    let file = |at: &Location, place: String, value: &str| {
        let kind = loaded
            .files
            .iter()
            .find(|f| f.path.display().to_string() == at.source)
            .map_or(FileKind::Flag, |f| f.kind);
        Origin::File {
            kind,
            at: at.clone(),
            granted: (kind == FileKind::User)
                .then(|| dates.date_of(&place, value).map(String::from))
                .flatten(),
            place,
        }
    };
    let network = |list: &[Location], place: &str, a: &Allowed| Sourced {
        value: a.entry.clone(),
        origin: match a.from {
            NetSource::Flag => Origin::Flag,
            NetSource::Agent => Origin::Agent(in_force.agent.clone().unwrap_or_default()),
            NetSource::Policy(i) => match list.get(i) {
                Some(at) => file(at, place.to_string(), &a.entry),
                None => Origin::BuiltIn,
            },
        },
    };
    let policy_list = |list: &[String], at: &[Location], place: &str| -> Vec<Sourced> {
        list.iter()
            .enumerate()
            .map(|(i, e)| {
                network(
                    at,
                    place,
                    &Allowed {
                        entry: e.clone(),
                        from: NetSource::Policy(i),
                    },
                )
            })
            .collect()
    };
    let prov = &eff.provenance;
    let mut out = Sources {
        permit: policy_list(
            &eff.network.permit,
            &prov.network_permit,
            "[network] permit",
        ),
        ..Sources::default()
    };
    match &in_force.net {
        NetPlan::Broker { allow, pins, .. } => {
            out.allow = allow
                .iter()
                .map(|a| network(&prov.network_allow, "[network] allow", a))
                .collect();
            out.pins = pins
                .iter()
                .map(|a| network(&prov.network_resolve, "[network] resolve", a))
                .collect();
        }
        NetPlan::Off | NetPlan::Host => {
            out.unused = policy_list(&eff.network.allow, &prov.network_allow, "[network] allow");
            out.unused.extend(policy_list(
                &eff.network.resolve,
                &prov.network_resolve,
                "[network] resolve",
            ));
        }
    }
    let p = &in_force.profile;
    let paths = |list: &[String], access: PathAccess| -> Vec<Sourced> {
        list.iter()
            .map(|path| Sourced {
                value: path.clone(),
                origin: match eff.path_origin(&p.name, access, path) {
                    Some(o) => file(&o.at, o.place.clone(), path),
                    None => Origin::BuiltIn,
                },
            })
            .collect()
    };
    out.writable = paths(&p.writable, PathAccess::Write);
    out.readable = paths(&p.readable, PathAccess::Read);
    out
}
