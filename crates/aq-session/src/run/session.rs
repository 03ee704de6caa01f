//! Create the session: its directory outside the workspace, what the
//! agent's preset grants, the shims, the approval queue, the session file
//! and the audit log.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use aq_audit::AuditLog;

use super::agent::Agent;
use super::policy::Policy;
use super::profile::Settled;
use super::{RunOptions, SandboxKind, Start, exec_guard_in_force};
use crate as session;
use crate::SessionFile;
use crate::error::RunError;
use crate::shim_presence::{self, PathEntriesRecord};
use crate::supervisor::LogHealth;

/// A session's directory and what it holds before anything runs.
pub(super) struct Session {
    /// This system's sandbox.
    pub kind: SandboxKind,
    /// Its id.
    pub id: String,
    /// Its directory, outside the workspace.
    pub dir: PathBuf,
    /// What the agent's preset grants (nothing without an agent).
    pub grants: aq_agents::Grants,
    /// The command as run: the preset's arguments added.
    pub command: Vec<String>,
    /// Where the shims are.
    pub shim_dir: PathBuf,
    /// The shims installed (none under the exec guard).
    pub shims: Vec<String>,
    /// Whether every exec is judged by the exec guard.
    pub guarded: bool,
    /// What the session was granted, for the log.
    pub grants_record: aq_audit::SessionGrants,
    /// The session file, as written.
    pub file: SessionFile,
}

/// Creates the session's directory and writes its file: the policy, its
/// digest and what the shims and the supervisor read.
pub(super) fn create_session(
    start: &Start,
    policy: &Policy,
    agent: &Agent,
    settled: &Settled,
    args: &RunOptions,
) -> Result<Session, RunError> {
    let kind = start.kind;
    let caller = &agent.caller;
    let asked = &args.command;
    let settings = &policy.settings;
    let profile = &settled.profile;
    let chosen = agent.chosen.as_ref();
    let id = session::new_id(start.now);
    let dir = session::create_dir(&id).map_err(RunError::SessionDir)?;
    let grants = chosen
        .map(|c| {
            aq_agents::grant(
                &c.preset,
                &aq_agents::GrantInputs {
                    home: caller.home.as_deref(),
                    workspace: &policy.workspace,
                    env: &caller.env,
                    key_proxy_port: settled.key_proxy_port,
                    shadow_dir: profile.sandbox.then(|| dir.join("shadow")).as_deref(),
                    endpoints: &agent.endpoints,
                    sandboxed: profile.sandbox,
                },
            )
        })
        .unwrap_or_default();
    let mut engine_policy = policy.loaded.effective.policy.clone();
    // What the preset makes writable is the agent's for the engine too.
    engine_policy.agent_state = grants
        .writable
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let command = crate::agent::with_args(asked, chosen, &grants);
    let guarded = exec_guard_in_force(profile, kind);
    let (shim_dir, shims) = install_shims(&dir, guarded, &settings.extra_shims)?;
    aq_shim::approvals::Queue::new(&dir)
        .create()
        .map_err(RunError::ApprovalQueue)?;

    let network_allow = settled.net.allowed();
    let mut grants_record =
        crate::agent::record(chosen.map(|c| &c.preset), &grants, &network_allow);
    // With the host's network (no namespace of the sandbox's own) every
    // endpoint is reached as it is outside: nothing to say.
    if settled.key_proxy_port.is_some() {
        grants_record.model_endpoints = agent.routes.lines.clone();
    }
    // The digest covers all the session was allowed, not only the rules.
    let policy_json = serde_json::to_vec(&(
        &engine_policy,
        profile,
        chosen.map(|c| &c.preset),
        &grants_record,
        settled.net.note().as_str(),
        &settings.trusted_exec,
    ))
    .map_err(RunError::Digest)?;
    let file = SessionFile {
        id: id.clone(),
        workspace: policy.workspace.clone(),
        profile: profile.name.clone(),
        supervisor_pid: std::process::id(),
        started: session::now_rfc3339(),
        command: asked.clone(),
        shim_dir: shim_dir.clone(),
        approval_timeout_secs: settings.approval_timeout_secs,
        unanswered: settings.unanswered,
        env_pass: settings.env_pass.clone(),
        policy: engine_policy,
        policy_digest: crate::policy_files::digest(&policy_json),
        wait_for_approver: settings.wait_for_approver,
        trusted_exec: settings.trusted_exec.clone(),
        env_scrub: grants.keys_passed.clone(),
    };
    session::write_file(&dir, &file).map_err(RunError::SessionFile)?;
    Ok(Session {
        kind,
        id,
        dir,
        grants,
        command,
        shim_dir,
        shims,
        guarded,
        grants_record,
        file,
    })
}

/// Under the exec guard every exec is judged already: shims would only
/// double each command's cost (and break agents that re-exec `node`).
/// Without it, a shim for each program that exists on this machine, in
/// the directory shared by the sessions that shim the same (`shims/` in
/// aq's state; the session's own when that one cannot be used). Returns
/// the directory and the names.
fn install_shims(
    session_dir: &Path,
    guarded: bool,
    extra: &[String],
) -> Result<(PathBuf, Vec<String>), RunError> {
    let own = session_dir.join("shims");
    if guarded {
        return Ok((own, Vec::new()));
    }
    let aq_exe = std::env::current_exe().map_err(RunError::AqBinary)?;
    let host_path = std::env::var_os("PATH").unwrap_or_default();
    // The built-in names only where the program exists (a `zsh` shim
    // where no zsh is installed makes agents pick a shell that fails);
    // the policy's own names always.
    let record = session::state_root()
        .ok()
        .map(|state| state.join("shim-dirs.json"));
    let old = record
        .as_deref()
        .and_then(crate::state_records::load::<PathEntriesRecord>);
    let (present, new) =
        shim_presence::present(aq_shim::DEFAULT_SHIMS, &host_path, &own, old.as_ref());
    if let Some(at) = record.as_deref()
        && old.as_ref() != Some(&new)
    {
        crate::state_records::save(at, &new);
    }
    let names: Vec<&str> = present
        .into_iter()
        .chain(extra.iter().map(String::as_str))
        .collect();
    // The links point to the shim without a C library where this build has
    // it (a copy kept in the state directory), else to `aq-shim`.
    let state = session::state_root();
    let target = state
        .as_ref()
        .ok()
        .and_then(|state| aq_shim::tiny::install(&state.join(SHIM_PROGRAM_DIR)).ok())
        .unwrap_or_else(|| aq_shim::entry::shim_target(&aq_exe));
    let shared =
        state.and_then(|state| aq_shim::shared_shims(&state.join("shims"), &target, names.clone()));
    match shared {
        Ok(made) => Ok(made),
        Err(_) => aq_shim::install_shims(&own, &target, names)
            .map(|names| (own, names))
            .map_err(RunError::Shims),
    }
}

/// Where in aq's state the shim program without a C library is kept.
pub(crate) const SHIM_PROGRAM_DIR: &str = "shim-program";

/// The session's audit log, and what follows it.
pub(super) struct SessionLog {
    /// Its path.
    pub path: PathBuf,
    /// The log, for the events `aq run` writes itself.
    pub log: AuditLog,
    /// `[audit] export`: each target follows the log from its first line.
    pub shippers: Vec<aq_export::Shipper>,
    /// Whether the supervisor's writer could write it.
    pub health: Arc<LogHealth>,
}

/// Opens the session's log and starts a shipper for each export target.
pub(super) fn open_log(policy: &Policy, session: &Session) -> Result<SessionLog, RunError> {
    let path = session::log_path(&session.dir);
    let log = AuditLog::open(&path).map_err(|source| RunError::AuditLog {
        path: path.clone(),
        source,
    })?;
    let shippers = policy
        .loaded
        .effective
        .audit_export
        .iter()
        .map(|target| aq_export::Shipper::start(target, &path))
        .collect();
    Ok(SessionLog {
        path,
        log,
        shippers,
        health: Arc::new(LogHealth::default()),
    })
}
