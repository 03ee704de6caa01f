//! The macOS Seatbelt profile a session in a workspace would get, for
//! `aq sandbox-profile --os macos`: the spec built as `aq run` builds it
//! ([`crate::sandbox_spec::build`], with the profile and agent preset in
//! force), written by [`aq_sandbox::plan_seatbelt_profile`].
//!
//! A printed profile belongs to no session, so what only a session has is
//! an example, said so at the top of the profile: the session directory
//! (`sessions/EXAMPLE` under aq's state, holding the supervisor's socket
//! and the TMPDIR) and the broker's port (the one the Linux sandbox uses
//! inside its own network namespace; a macOS session listens where the
//! host's loopback lets it).
//!
//! Like `aq run`, building the spec makes what it would make: a missing
//! writable cache, the agent preset's state, the workspace's `.git/hooks`.

use std::ffi::OsString;
use std::path::Path;

use aq_policy::Profile;

pub use crate::error::SeatbeltProfileError;
use crate::network::NetPlan;

/// What to print the profile for.
pub struct Request<'a> {
    /// The canonical workspace.
    pub workspace: &'a Path,
    /// `--policy FILE`.
    pub policy_flag: Option<&'a Path>,
    /// `--profile` (default: the policy's).
    pub profile: Option<&'a str>,
    /// `--agent` (default: none).
    pub agent: Option<&'a str>,
}

/// The name the printed profile gives the session directory.
pub(crate) const EXAMPLE_SESSION: &str = "EXAMPLE";

/// The Seatbelt profile for `request`, as text.
pub fn print(request: &Request<'_>) -> Result<String, SeatbeltProfileError> {
    let loaded = crate::policy_files::load_for(request.workspace, request.policy_flag)?;
    loaded.warn_ignored();
    let effective = &loaded.effective;
    let preset = match request.agent {
        None => None,
        Some(name) => Some(effective.agents.get(name).cloned().ok_or_else(|| {
            SeatbeltProfileError::UnknownAgent {
                name: name.to_string(),
                presets: effective
                    .agents
                    .names()
                    .into_iter()
                    .map(String::from)
                    .collect(),
            }
        })?),
    };
    let crate::in_force::InForce { profile, net, .. } = crate::in_force::session(
        effective,
        &crate::in_force::Asked {
            profile: request.profile,
            home: None,
            net: None,
            resolve: &[],
            agent: preset.as_ref(),
        },
    )?;
    if !profile.sandbox {
        return Err(SeatbeltProfileError::NoSandbox {
            profile: profile.name.clone(),
        });
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .and_then(|h| std::fs::canonicalize(h).ok());
    let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let session_dir = crate::state_root()
        .map_err(SeatbeltProfileError::StateRoot)?
        .join("sessions")
        .join(EXAMPLE_SESSION);
    let grants = preset
        .as_ref()
        .map(|p| {
            aq_agents::grant(
                p,
                &aq_agents::GrantInputs {
                    home: home.as_deref(),
                    workspace: request.workspace,
                    env: &env,
                    // No key proxy: it needs a network namespace of the
                    // sandbox's own, which macOS does not give.
                    key_proxy_port: None,
                    // No session copies: the files stay read-only.
                    shadow_dir: None,
                    endpoints: &Default::default(),
                    // The profile printed is the sandbox's.
                    sandboxed: true,
                },
            )
        })
        .unwrap_or_default();
    let broker = matches!(net, NetPlan::Broker { .. });
    let tmpdir = session_dir.join("tmp");
    let settings = effective.session_settings();
    let built = crate::sandbox_spec::build(
        &profile,
        crate::sandbox_spec::SpecInputs {
            workspace: request.workspace,
            home: home.as_deref(),
            sensitive: &effective.policy.sensitive_paths,
            unmasked: &effective.policy.unmasked_paths,
            env,
            env_pass: &settings.env_pass,
            session_env: Vec::new(),
            path_prefix: None,
            tmpdir: Some(&tmpdir),
            loopback_listeners: broker
                .then_some(crate::network::PROXY_PORT)
                .into_iter()
                .collect(),
            grants: Some(&grants),
            program: None,
            named: Vec::new(),
            log_denials: false,
            allowed_sockets: vec![session_dir.join(aq_shim::channel::SOCKET_NAME)],
            pass_fds: Vec::new(),
        },
    );
    let names = masked_names(&profile, &effective.policy.sensitive_paths);
    let mut notes = vec![
        format!(
            "Profile `{}`{}; workspace {}.",
            profile.name,
            preset
                .as_ref()
                .map(|p| format!(", agent `{}`", p.name))
                .unwrap_or_default(),
            request.workspace.display()
        ),
        format!(
            "Examples, not a session's values: the session directory {} and its socket and TMPDIR.",
            session_dir.display()
        ),
    ];
    if broker {
        notes.push(format!(
            "Example: the broker's port {} (a session's broker listens on a port of its own).",
            crate::network::PROXY_PORT
        ));
    }
    aq_sandbox::plan_seatbelt_profile(&aq_sandbox::SeatbeltInputs {
        spec: &built.spec,
        masked_names: &names,
        notes: &notes,
    })
    .map_err(SeatbeltProfileError::Seatbelt)
}

/// The profile's and the policy's globs masked in the workspace (entries
/// that are neither absolute, nor in the home, nor a variable), each once:
/// what the Linux sandbox looks for when it starts, denied here by pattern.
pub(crate) fn masked_names(profile: &Profile, sensitive: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let relative = profile
        .masked
        .iter()
        .chain(sensitive)
        .filter(|m| !(m.starts_with('/') || m.starts_with('~') || m.starts_with('$')));
    for m in profile.masked_in_workspace.iter().chain(relative) {
        let m = m.trim_end_matches('/').to_string();
        if !out.contains(&m) {
            out.push(m);
        }
    }
    out
}
