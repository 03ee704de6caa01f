//! Resolve the policy: the workspace, refused when it is a protected
//! place, and the policy files that govern it.

use std::path::{Path, PathBuf};

use super::resolve_workspace;
use crate::error::RunError;
use crate::policy_files::Loaded;

/// The workspace and what governs it.
pub(super) struct Policy {
    /// The workspace, canonical.
    pub workspace: PathBuf,
    /// The policy files found and the policy they merge into.
    pub loaded: Loaded,
    /// The `[session]` settings in force.
    pub settings: aq_policy::SessionSettings,
}

/// Finds the workspace and loads its policy; refuses a workspace aq must
/// not run in, and an `[audit] export` it could not ship.
pub(super) fn resolve_policy(
    workspace_flag: Option<&Path>,
    policy_flag: Option<&Path>,
) -> Result<Policy, RunError> {
    let workspace = resolve_workspace(workspace_flag)?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .and_then(|h| std::fs::canonicalize(h).ok());
    crate::workspace::check(
        &workspace,
        home.as_deref(),
        &crate::workspace::protected_places(),
    )
    .map_err(RunError::Refused)?;
    let loaded = crate::policy_files::load_for(&workspace, policy_flag)?;
    loaded.warn_ignored();
    // `[audit] export` to OTLP with headers from the environment that do
    // not parse: stop before anything starts rather than ship without the
    // collector's key (it would refuse every event).
    if loaded
        .effective
        .audit_export
        .iter()
        .any(|t| t.format == aq_policy::ExportFormat::Otlp)
    {
        aq_export::otel_env::headers_from_env().map_err(RunError::AuditExport)?;
    }
    let settings = loaded.effective.session_settings();
    Ok(Policy {
        workspace,
        loaded,
        settings,
    })
}
