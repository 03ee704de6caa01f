//! The managed layer: a policy file set by whoever manages the machine
//! (`/etc/agent-quarantine/managed.toml`), read before every other file,
//! that nothing below it can loosen.
//!
//! It is an ordinary policy file with one more table, `[managed]`, that only
//! it may have. What it sets is a ceiling:
//!
//! - a rule action it sets cannot be lowered below (`"x" = "block"` stays
//!   `block`), and a custom `allow` rule below does not lift its asks;
//! - with `[network]` in it, only the hosts it allows can be allowed;
//! - `[managed]` adds what no ordinary key says: profiles sessions may not
//!   use, `--policy` forbidden, `[hooks] allow = "approve"` forbidden,
//!   checkpoints required, and `strict = true`, under which every file
//!   below may only tighten (the untrusted project file's rule, for all).
//!
//! Each refused entry names the file and line that tried and the managed
//! key that holds it ([`Refusal`]); the caller prints them and logs them.

use std::fmt;

use serde::Deserialize;

use crate::config::{EffectivePolicy, IgnoredEntry, Location, PolicyLayer, Trust};
pub use crate::error::ManagedError;

/// `[managed]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawManaged {
    #[serde(default)]
    strict: bool,
    #[serde(default)]
    forbid_profiles: Vec<String>,
    #[serde(default)]
    forbid_policy_flag: bool,
    #[serde(default)]
    forbid_hooks_approve: bool,
    #[serde(default)]
    require_checkpoints: bool,
    #[serde(default)]
    lock_network: bool,
    #[serde(default)]
    forbid_learn: bool,
    public_key: Option<String>,
    serial: Option<u64>,
    source: Option<String>,
}

/// What `[managed]` locks, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedSettings {
    /// Every file below may only tighten (as an untrusted project file).
    pub strict: bool,
    /// Profiles no session may use (`shims-only`, `off`).
    pub(crate) forbid_profiles: Vec<String>,
    /// `--policy FILE` is refused.
    pub(crate) forbid_policy_flag: bool,
    /// `[hooks] allow = "approve"` below is refused.
    pub(crate) forbid_hooks_approve: bool,
    /// Sessions and hooks always take checkpoints (`[undo] enabled = false`
    /// below is refused).
    pub require_checkpoints: bool,
    /// Only the hosts of this file's `[network] allow` may be reached:
    /// files below, `--net` and `aq allow --net` add none, private
    /// destinations below are dropped, and a new host is refused, never
    /// asked.
    pub(crate) lock_network: bool,
    /// `aq run --learn` and `mode = "learn"` are refused (even without it,
    /// learn mode lets no ask of a rule this file sets through).
    pub(crate) forbid_learn: bool,
    /// The minisign public key policy bundles must be signed with
    /// (`aq policy pull`).
    pub public_key: Option<String>,
    /// The bundle's serial: a pull never installs a lower or equal one.
    pub serial: Option<u64>,
    /// Where `aq policy pull` fetches from when no source is given.
    pub source: Option<String>,
}

pub(crate) fn check(raw: &RawManaged) -> Result<ManagedSettings, ManagedError> {
    if let Some(p) = raw.forbid_profiles.iter().find(|p| p.trim().is_empty()) {
        return Err(ManagedError::ForbidProfilesName { name: p.clone() });
    }
    if let Some(key) = &raw.public_key
        && !(key.len() == 56 && key.starts_with("RW"))
    {
        return Err(ManagedError::PublicKey);
    }
    Ok(ManagedSettings {
        strict: raw.strict,
        forbid_profiles: raw.forbid_profiles.clone(),
        forbid_policy_flag: raw.forbid_policy_flag,
        forbid_hooks_approve: raw.forbid_hooks_approve,
        require_checkpoints: raw.require_checkpoints,
        lock_network: raw.lock_network,
        forbid_learn: raw.forbid_learn,
        public_key: raw.public_key.clone(),
        serial: raw.serial,
        source: raw.source.clone(),
    })
}

/// One entry below the managed file that would have loosened it, and was
/// not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Where the entry is (file, line).
    pub at: Location,
    /// The entry, as written.
    pub entry: String,
    /// The managed file.
    pub managed: String,
    /// The managed key that holds (`[rules] "pkg-install"`, `[network] allow`).
    pub key: String,
    /// What stays in force.
    pub kept: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: refused {}: the managed policy {} locks {} ({}); ask whoever manages this machine",
            self.at, self.entry, self.managed, self.key, self.kept
        )
    }
}

impl From<&IgnoredEntry> for Refusal {
    fn from(e: &IgnoredEntry) -> Self {
        Refusal {
            at: e.at.clone(),
            entry: e.entry.clone(),
            managed: e.managed.clone().unwrap_or_default(),
            key: "[managed] strict".to_string(),
            kept: e.kept.clone(),
        }
    }
}

/// The policy from the built-in one, the managed layer, and the layers
/// below it (user, project, `--policy`) with their trust, and what the
/// managed layer refused of them. Fails as [`EffectivePolicy::apply`] does.
pub fn combine(
    managed: Option<&PolicyLayer>,
    below: &[(&PolicyLayer, Trust)],
) -> Result<(EffectivePolicy, Vec<Refusal>), crate::ConfigError> {
    let mut eff = EffectivePolicy::builtin();
    let Some(m) = managed else {
        for (layer, trust) in below {
            eff.apply(layer, *trust)?;
        }
        return Ok((eff, Vec::new()));
    };
    let settings = m
        .managed
        .as_ref()
        .map(|(s, _)| s.clone())
        .unwrap_or_default();
    let file = m.source.clone();
    eff.apply(m, Trust::Full)?;
    let mut refusals = Vec::new();
    if settings.strict {
        let before = eff.ignored.len();
        for (layer, _) in below {
            eff.apply(layer, Trust::TightenOnly)?;
        }
        for e in &mut eff.ignored[before..] {
            e.managed = Some(file.clone());
            refusals.push(Refusal::from(&*e));
        }
        eff.ignored.truncate(before);
    } else {
        for (layer, trust) in below {
            eff.apply(layer, *trust)?;
        }
    }
    ceiling(&mut eff, m, &settings, below, &mut refusals);
    Ok((eff, refusals))
}

/// Puts back what the managed layer set where a layer below lowered it:
/// one step per thing a managed file can hold, each refusing (once, by
/// place and entry) what a layer below wrote against it.
fn ceiling(
    eff: &mut EffectivePolicy,
    m: &PolicyLayer,
    settings: &ManagedSettings,
    below: &[(&PolicyLayer, Trust)],
    refusals: &mut Vec<Refusal>,
) {
    let mut c = Ceiling {
        managed: m,
        below,
        refusals,
    };
    c.rule_actions(eff);
    if settings.lock_network {
        c.locked_network(eff);
    }
    let settings = &ManagedSettings {
        forbid_profiles: c.forbidden_with_their_children(&settings.forbid_profiles),
        ..settings.clone()
    };
    c.profiles_below_the_floor(settings);
    c.built_in_programs(eff);
    if settings.forbid_profiles.contains(&eff.session.profile) {
        c.forbidden_session_profile(eff, settings);
    }
    if settings.forbid_hooks_approve && eff.hooks_approve {
        c.hooks_approve(eff);
    }
    if settings.require_checkpoints && !eff.undo.enabled {
        c.checkpoints(eff);
    }
    eff.managed = Some(crate::config::ManagedInForce {
        file: m.source.clone(),
        settings: settings.clone(),
        locked_rules: m.actions.iter().map(|a| (a.rule, a.action)).collect(),
        hosts: settings
            .lock_network
            .then(|| m.network.allow.iter().map(|(h, _)| h.clone()).collect()),
    });
}

/// The managed layer, the layers below it and what was refused so far.
struct Ceiling<'a> {
    managed: &'a PolicyLayer,
    below: &'a [(&'a PolicyLayer, Trust)],
    refusals: &'a mut Vec<Refusal>,
}

impl Ceiling<'_> {
    /// Refuses `entry` at `at` once: a layer met twice (a `--policy` file
    /// that is also the user's) says it once.
    fn refuse(&mut self, at: &Location, entry: String, key: String, kept: String) {
        if !self
            .refusals
            .iter()
            .any(|r| r.at == *at && r.entry == entry)
        {
            self.refusals.push(Refusal {
                at: at.clone(),
                entry,
                managed: self.managed.source.clone(),
                key,
                kept,
            });
        }
    }

    /// Rule actions: none below the managed one, and each locked (a session
    /// cannot lower it with a flag either).
    fn rule_actions(&mut self, eff: &mut EffectivePolicy) {
        for set in &self.managed.actions {
            for (layer, _) in self.below {
                for lower in layer.actions.iter().filter(|a| a.rule == set.rule) {
                    if lower.action < set.action {
                        self.refuse(
                            &lower.at,
                            format!("`\"{}\" = \"{}\"`", lower.rule, lower.action),
                            format!("[rules] \"{}\"", set.rule),
                            format!("`{}` stays `{}`", set.rule, set.action),
                        );
                    }
                }
            }
            if eff.policy.action(set.rule) < set.action {
                eff.policy.actions.insert(set.rule, set.action);
                eff.provenance.actions.insert(set.rule, set.at.clone());
            }
            if !eff.policy.locked.contains(&set.rule) {
                eff.policy.locked.push(set.rule);
            }
        }
    }

    /// `lock-network`: only the managed file's hosts, permits and pinned
    /// names (a pin sends a name wherever it says), and no asks for others.
    fn locked_network(&mut self, eff: &mut EffectivePolicy) {
        let m = self.managed;
        let allowed: Vec<&str> = m.network.allow.iter().map(|(h, _)| h.as_str()).collect();
        for (layer, _) in self.below {
            for (host, at) in &layer.network.allow {
                if !allowed.contains(&host.as_str()) {
                    self.refuse(
                        at,
                        format!("[network] allow `{host}`"),
                        "[network] allow".to_string(),
                        format!("{} may be reached", host_list(&allowed)),
                    );
                }
            }
        }
        let mut keep = Vec::new();
        let mut keep_at = Vec::new();
        for (h, at) in eff
            .network
            .allow
            .iter()
            .zip(eff.provenance.network_allow.iter())
        {
            if allowed.contains(&h.as_str()) {
                keep.push(h.clone());
                keep_at.push(at.clone());
            }
        }
        eff.network.allow = keep;
        eff.provenance.network_allow = keep_at;
        let permitted: Vec<&str> = m.network.permit.iter().map(|(c, _)| c.as_str()).collect();
        eff.network
            .permit
            .retain(|c| permitted.contains(&c.as_str()));
        let pinned: Vec<&str> = m.network.resolve.iter().map(|(r, _)| r.as_str()).collect();
        for (layer, _) in self.below {
            for (pin, at) in &layer.network.resolve {
                if !pinned.contains(&pin.as_str()) {
                    self.refuse(
                        at,
                        format!("[network] resolve `{pin}`"),
                        "[managed] lock-network".to_string(),
                        "names resolve as the managed file and DNS say".to_string(),
                    );
                }
            }
        }
        eff.network.resolve.retain(|r| pinned.contains(&r.as_str()));
        eff.network.unlisted = crate::UnlistedHosts::Refuse;
    }

    /// The forbidden profiles and every profile below made on top of one
    /// (`extends`), to any depth.
    fn forbidden_with_their_children(&self, forbidden: &[String]) -> Vec<String> {
        let mut forbidden = forbidden.to_vec();
        loop {
            let mut grew = false;
            for (layer, _) in self.below {
                for (name, p, _) in &layer.profiles {
                    if let Some(base) = &p.extends
                        && forbidden.contains(base)
                        && !forbidden.contains(name)
                    {
                        forbidden.push(name.clone());
                        grew = true;
                    }
                }
            }
            if !grew {
                return forbidden;
            }
        }
    }

    /// Profiles below that switch off what the floor keeps (the session
    /// refuses them too: [`check_profile`]).
    fn profiles_below_the_floor(&mut self, settings: &ManagedSettings) {
        let floor = settings.forbid_profiles.iter().any(|p| {
            crate::Profile::builtins()
                .iter()
                .any(|b| &b.name == p && !b.sandbox)
        });
        for (layer, _) in self.below {
            for (name, p, at) in &layer.profiles {
                if floor && p.sandbox == Some(false) {
                    self.refuse(
                        at,
                        format!("`[profile.{name}] sandbox = false`"),
                        "[managed] forbid-profiles".to_string(),
                        "sessions keep the kernel sandbox".to_string(),
                    );
                }
                if p.exec_guard == Some(false) {
                    self.refuse(
                        at,
                        format!("`[profile.{name}] exec_guard = false`"),
                        "its rules".to_string(),
                        "every exec is judged".to_string(),
                    );
                }
            }
        }
    }

    /// Built-in programs described anew below: `[program.kubectl] "delete"
    /// = "read"` would lower what the rules decide, so only the managed file
    /// may do it; a program the catalog does not know may still be described.
    fn built_in_programs(&mut self, eff: &mut EffectivePolicy) {
        for (layer, _) in self.below {
            for (name, _, at) in &layer.programs {
                let built_in = aq_knowledge::programs::lookup(name).is_some()
                    || aq_knowledge::programs::known_class(name).is_some();
                if !built_in {
                    continue;
                }
                self.refuse(
                    at,
                    format!("[program.{name}]"),
                    "built-in programs".to_string(),
                    format!("`{name}` is decided as the built-in catalog describes it"),
                );
                match self.managed.programs.iter().find(|(n, _, _)| n == name) {
                    Some((_, p, _)) => {
                        let mut p = p.clone();
                        p.sort_subs();
                        eff.policy.programs.insert(name.clone(), p);
                    }
                    None => {
                        eff.policy.programs.remove(name);
                    }
                }
            }
        }
    }

    /// A session profile no session may use: the managed file's own, or
    /// the built-in default.
    fn forbidden_session_profile(&mut self, eff: &mut EffectivePolicy, settings: &ManagedSettings) {
        for (layer, _) in self.below {
            if let Some((name, at)) = &layer.session.profile
                && settings.forbid_profiles.contains(name)
            {
                self.refuse(
                    at,
                    format!("`profile = \"{name}\"`"),
                    "[managed] forbid-profiles".to_string(),
                    format!("`{name}` may not be used"),
                );
            }
        }
        eff.session.profile = self
            .managed
            .session
            .profile
            .as_ref()
            .map(|(p, _)| p.clone())
            .filter(|p| !settings.forbid_profiles.contains(p))
            .unwrap_or_else(|| crate::SessionSettings::default().profile);
    }

    /// `forbid-hooks-approve`: aq's allow in a hook defers to the agent.
    fn hooks_approve(&mut self, eff: &mut EffectivePolicy) {
        for (layer, _) in self.below {
            if let Some((true, at)) = &layer.hooks_approve {
                self.refuse(
                    at,
                    "`[hooks] allow = \"approve\"`".to_string(),
                    "[managed] forbid-hooks-approve".to_string(),
                    "aq's allow defers to the agent's own rules".to_string(),
                );
            }
        }
        eff.hooks_approve = false;
    }

    /// `require-checkpoints`: sessions take checkpoints.
    fn checkpoints(&mut self, eff: &mut EffectivePolicy) {
        for (layer, _) in self.below {
            if let Some((false, at)) = &layer.undo.enabled {
                self.refuse(
                    at,
                    "`[undo] enabled = false`".to_string(),
                    "[managed] require-checkpoints".to_string(),
                    "sessions take checkpoints".to_string(),
                );
            }
        }
        eff.undo.enabled = true;
    }
}

/// "only `a`, `b`", or "no host".
fn host_list(hosts: &[&str]) -> String {
    if hosts.is_empty() {
        "no host".to_string()
    } else {
        let list: Vec<String> = hosts.iter().map(|h| format!("`{h}`")).collect();
        format!("only {}", list.join(", "))
    }
}

/// Whether a session may use `profile`; the refusal names the key.
///
/// Forbidding a profile without the kernel sandbox (`shims-only`) is a
/// floor: no profile without the sandbox may be used. And under a managed
/// file no sandboxed profile may turn its exec guard off: the rules would
/// then be applied by PATH shims alone, which a full path walks past.
pub fn check_profile(eff: &EffectivePolicy, profile: &crate::Profile) -> Result<(), ManagedError> {
    let Some(m) = &eff.managed else {
        return Ok(());
    };
    let name = &profile.name;
    let refused = |why: &'static str, key: &'static str| {
        Err(ManagedError::ProfileRefused {
            profile: name.clone(),
            why,
            key,
            file: m.file.clone(),
        })
    };
    if m.settings.forbid_profiles.iter().any(|p| p == name) {
        return refused(
            "it is forbidden, or made on top of one that is",
            "[managed] forbid-profiles",
        );
    }
    let floor = m.settings.forbid_profiles.iter().any(|p| {
        crate::Profile::builtins()
            .iter()
            .any(|b| &b.name == p && !b.sandbox)
    });
    if floor && !profile.sandbox {
        return refused(
            "it runs without the kernel sandbox",
            "[managed] forbid-profiles",
        );
    }
    if profile.sandbox && !profile.exec_guard {
        return refused(
            "its exec guard is off, so only PATH shims would apply the managed rules",
            "the managed rules",
        );
    }
    Ok(())
}

/// Whether `--resolve` pins may be given; refused under `lock-network`.
pub fn check_resolve(eff: &EffectivePolicy, pins: &[String]) -> Result<(), ManagedError> {
    match &eff.managed {
        Some(m) if m.hosts.is_some() && !pins.is_empty() => Err(ManagedError::ResolveRefused {
            file: m.file.clone(),
        }),
        _ => Ok(()),
    }
}

/// Whether an ask of `rule` must be answered by a person: the managed file
/// set it, so neither `unanswered = "allow"` nor learn mode lets it run.
pub fn ask_is_managed(policy: &crate::Policy, rule: &str) -> bool {
    policy.locked.iter().any(|l| l.as_str() == rule)
}

/// Whether `host` may be allowed (by `--net` or `aq allow --net`); the
/// refusal names the key.
pub fn check_host(eff: &EffectivePolicy, host: &str) -> Result<(), ManagedError> {
    match eff
        .managed
        .as_ref()
        .and_then(|m| m.hosts.as_ref().map(|h| (m, h)))
    {
        Some((m, hosts)) if !hosts.iter().any(|h| h == host) => Err(ManagedError::HostRefused {
            host: host.to_string(),
            file: m.file.clone(),
            allowed: host_list(&hosts.iter().map(String::as_str).collect::<Vec<_>>()),
        }),
        _ => Ok(()),
    }
}

/// Whether `--policy FILE` may be used; the refusal names the key.
pub fn check_policy_flag(eff: &EffectivePolicy) -> Result<(), ManagedError> {
    match &eff.managed {
        Some(m) if m.settings.forbid_policy_flag => Err(ManagedError::PolicyFlagRefused {
            file: m.file.clone(),
        }),
        _ => Ok(()),
    }
}

/// What the managed file in force locks, one line each, for `aq policy
/// show`.
pub fn describe(m: &crate::ManagedInForce) -> Vec<String> {
    let s = &m.settings;
    let mut out = Vec::new();
    if s.strict {
        out.push("strict: every file below may only tighten the policy".to_string());
    }
    for (rule, action) in &m.locked_rules {
        out.push(format!("rule {rule}: at least {action}"));
    }
    if let Some(hosts) = &m.hosts {
        out.push(format!(
            "network: {} (new hosts refused, never asked)",
            host_list(&hosts.iter().map(String::as_str).collect::<Vec<_>>())
        ));
    }
    if !s.forbid_profiles.is_empty() {
        out.push(format!(
            "profiles refused: {}",
            s.forbid_profiles.join(", ")
        ));
    }
    if s.forbid_policy_flag {
        out.push("--policy refused".to_string());
    }
    if s.forbid_hooks_approve {
        out.push("[hooks] allow = \"approve\" refused".to_string());
    }
    if s.require_checkpoints {
        out.push("checkpoints required".to_string());
    }
    if s.forbid_learn {
        out.push("learn mode refused".to_string());
    }
    if let Some(serial) = s.serial {
        out.push(format!("bundle serial {serial}"));
    }
    if out.is_empty() {
        out.push("nothing beyond its own entries, applied first".to_string());
    }
    out
}

/// Whether a session may run in learn mode; the refusal names the key.
pub fn check_learn(eff: &EffectivePolicy) -> Result<(), ManagedError> {
    match &eff.managed {
        Some(m) if m.settings.forbid_learn => Err(ManagedError::LearnRefused {
            file: m.file.clone(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Decision, RuleId, parse_layer};

    fn layer(name: &str, text: &str) -> PolicyLayer {
        parse_layer(name, text).unwrap()
    }

    #[test]
    fn what_the_managed_file_sets_is_a_ceiling_and_the_rest_stays_the_users() {
        let m = layer(
            "managed.toml",
            "version = 1\n[rules]\n\"pkg-install\" = \"block\"\n[network]\nallow = [\"registry.npmjs.org\"]\n[audit]\nexport = [{ format = \"syslog\", endpoint = \"udp://127.0.0.1:514\" }]\n[managed]\nlock-network = true\n",
        );
        let user = layer(
            "policy.toml",
            "version = 1\n[rules]\n\"pkg-install\" = \"allow\"\n\"git-push-force\" = \"allow\"\n[network]\nallow = [\"example.invalid\", \"registry.npmjs.org\"]\nresolve = [\"registry.npmjs.org=127.0.0.1\"]\n[program.kubectl]\ndefault = \"read\"\n[program.acme]\ndefault = \"read\"\n",
        );
        let (eff, refused) = combine(Some(&m), &[(&user, Trust::Full)]).unwrap();
        assert_eq!(eff.policy.action(RuleId::PkgInstall), Decision::Block);
        // What it does not set stays the user's.
        assert_eq!(eff.policy.action(RuleId::GitPushForce), Decision::Allow);
        assert_eq!(eff.network.allow, vec!["registry.npmjs.org".to_string()]);
        assert!(eff.network.resolve.is_empty());
        assert_eq!(eff.network.unlisted, crate::UnlistedHosts::Refuse);
        assert!(!eff.policy.programs.contains_key("kubectl"));
        assert!(eff.policy.programs.contains_key("acme"));
        assert_eq!(eff.audit_export.len(), 1);
        assert!(eff.policy.locked.contains(&RuleId::PkgInstall));
        let keys: Vec<&str> = refused.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "[rules] \"pkg-install\"",
                "[network] allow",
                "[managed] lock-network",
                "built-in programs"
            ],
            "{refused:#?}"
        );
        assert!(refused.iter().all(|r| r.at.source == "policy.toml"));
    }

    #[test]
    fn without_a_managed_file_the_layers_apply_as_before() {
        let user = layer(
            "policy.toml",
            "version = 1\n[rules]\n\"pkg-install\" = \"allow\"\n",
        );
        let (eff, refused) = combine(None, &[(&user, Trust::Full)]).unwrap();
        assert_eq!(eff.policy.action(RuleId::PkgInstall), Decision::Allow);
        assert!(refused.is_empty() && eff.managed.is_none());
    }

    #[test]
    fn a_bad_managed_table_is_an_error() {
        assert!(parse_layer("m", "version = 1\n[managed]\nstrictt = true\n").is_err());
        assert!(parse_layer("m", "version = 1\n[managed]\npublic-key = \"abc\"\n").is_err());
    }
}
