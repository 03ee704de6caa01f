//! Announce the session: its start in the log, with the layers that
//! confine it, then the banner on stderr (one line, or `-v`'s detail).

use aq_audit::EventBody;
use aq_policy::{Decision, Profile, SessionSettings, SummaryFormat};

use super::checkpoint::Checkpointing;
use super::sandbox::{Boundary, Planned, SEATBELT_ENFORCED, SEATBELT_LIMITS};
use super::session::SessionLog;
use super::{SandboxKind, Setup, Stop};
use crate as session;

/// Logs the session's start and says it on stderr. Nothing runs that the
/// log would not record: a start that cannot be logged stops the session
/// (exit 125).
pub(super) fn announce(
    setup: &Setup<'_>,
    log: &SessionLog,
    checkpointing: &Checkpointing,
    boundary: &Boundary,
) -> Result<(), Stop> {
    let sandbox = boundary.sandbox.as_ref();
    let Setup {
        args,
        policy,
        agent,
        settled,
        session,
        ..
    } = *setup;
    let kind = session.kind;
    let profile = &settled.profile;
    let id = &session.id;
    let profile_name = &profile.name;
    let learning = settled.learning();
    let mut layers = Vec::new();
    // The managed policy, and what it refused of the files below (logged
    // as well as printed: an attempt to loosen it is on the record).
    if let Some(m) = &policy.loaded.effective.managed {
        layers.push(format!("managed policy {}", m.file));
    }
    for r in &policy.loaded.refused_managed {
        layers.push(format!("refused by the managed policy: {r}"));
    }
    if !session.shims.is_empty() {
        layers.push(format!("shims ({})", session.shims.len()));
    }
    if let Some(c) = &agent.chosen {
        layers.push(format!("agent preset {}", c.preset.name));
    }
    // On macOS the broker's port is the one the host's loopback gave it.
    let net_note = match sandbox {
        Some(Planned::Seatbelt(s)) => s.net_note(&settled.net),
        _ => None,
    }
    .unwrap_or_else(|| settled.net.note());
    match sandbox {
        Some(Planned::Kernel(s)) => {
            let [kernel, _] = aq_audit::SANDBOX_LAYERS;
            layers.push(format!("{kernel}: {}", s.plan.enforced()));
            layers.push(format!("network {net_note}"));
            layers.push(format!("limits: {}", limits_note(profile, &s.plan)));
        }
        Some(Planned::Seatbelt(_)) => {
            let [_, seatbelt] = aq_audit::SANDBOX_LAYERS;
            layers.push(format!("{seatbelt}: {SEATBELT_ENFORCED}"));
            layers.push(format!("network {net_note}"));
            layers.push(format!("limits: {SEATBELT_LIMITS}"));
        }
        None => {}
    }
    let started_logged = log.log.append(
        EventBody::SessionStart {
            aq_version: env!("CARGO_PKG_VERSION").to_string(),
            workspace: policy.workspace.display().to_string(),
            profile: profile_name.clone(),
            policy_digest: session.file.policy_digest.clone(),
            command: args.command.clone(),
            pid: std::process::id(),
            layers,
            grants: Some(session.grants_record.clone()),
            mode: learning.then(|| profile.mode.as_str().to_string()),
        },
        session::now_rfc3339(),
        id,
    );
    if let Err(e) = started_logged {
        return Err(Stop::sandbox_failed(&[format!(
            "cannot write the audit log: {e}; nothing was run"
        )]));
    }
    if !args.quiet && !args.verbose {
        // One line: what confines the session, in a few words; `-v` has it all.
        let what = confinement(
            kind,
            profile,
            session.guarded,
            session.shims.len(),
            agent.chosen.as_ref().map(|c| c.preset.name.as_str()),
        );
        let net = net_note.split(':').next().unwrap_or(&net_note).to_string();
        eprintln!(
            "aq: session {id} · {profile_name}: {} · network {net} · log {} (-v: the details)",
            what.join(", "),
            log.path.display()
        );
    }
    if args.verbose {
        eprintln!(
            "aq: session {id} · profile {profile_name} · command firewall on ({}) · workspace {}",
            if session.guarded {
                "every exec judged by the exec guard".to_string()
            } else {
                format!("{} shims", session.shims.len())
            },
            policy.workspace.display()
        );
        if let Some(c) = &agent.chosen {
            for line in crate::agent::banner(c, &session.grants, profile.sandbox) {
                eprintln!("aq: {line}");
            }
            for line in &session.grants_record.model_endpoints {
                eprintln!("aq: model endpoint {line}");
            }
        }
        match sandbox {
            Some(Planned::Kernel(s)) => {
                eprintln!("aq: sandbox: {}", s.plan.enforced());
                eprintln!("aq: limits: {}", limits_note(profile, &s.plan));
                eprintln!("aq: network {net_note}");
                for note in &s.notes {
                    eprintln!("aq: note: {note}");
                }
            }
            Some(Planned::Seatbelt(s)) => {
                eprintln!("aq: sandbox: {SEATBELT_ENFORCED}");
                eprintln!("aq: limits: {SEATBELT_LIMITS}");
                eprintln!("aq: network {net_note}");
                for note in &s.launch.notes {
                    eprintln!("aq: note: {note}");
                }
            }
            None => {}
        }
        if checkpointing.checkpoints.is_some() {
            eprintln!("aq: checkpoints of the workspace: on (`aq undo` goes back)");
        }
        eprintln!(
            "aq: log {} · {}",
            log.path.display(),
            asks_note(profile, &policy.settings)
        );
    }
    Ok(())
}

/// What confines the session, in a few words, for the one-line banner.
fn confinement(
    kind: SandboxKind,
    profile: &Profile,
    guarded: bool,
    shims: usize,
    agent: Option<&str>,
) -> Vec<String> {
    let mut what = Vec::new();
    what.push(if guarded {
        "exec guard".to_string()
    } else {
        format!("{shims} shims")
    });
    if profile.sandbox {
        what.push(match kind {
            SandboxKind::Seatbelt => "seatbelt sandbox".to_string(),
            _ => "kernel sandbox".to_string(),
        });
        if profile.home == aq_policy::HomeAccess::Private {
            what.push("private home".to_string());
        }
    } else {
        what.push("no kernel sandbox".to_string());
    }
    if let Some(name) = agent {
        what.push(format!("agent preset {name}"));
    }
    if profile.mode == aq_policy::SessionMode::Learn {
        what.push("learn mode: asks run, logged for `aq policy suggest`".to_string());
    }
    what
}

/// How the session's asks are answered, for `-v`'s last line.
fn asks_note(profile: &Profile, settings: &SessionSettings) -> String {
    let unanswered_word = if settings.unanswered == Decision::Allow {
        "run"
    } else {
        "are denied"
    };
    if profile.mode == aq_policy::SessionMode::Learn {
        "learn mode: asks run without waiting and are logged; `aq policy suggest` turns them into lines".to_string()
    } else if profile.summary == SummaryFormat::Json {
        format!("headless: asks are not waited for (unanswered asks {unanswered_word})")
    } else if settings.wait_for_approver {
        format!(
            "answer asks with `aq approve` in another terminal (each waits up to {}s)",
            settings.approval_timeout_secs
        )
    } else {
        format!(
            "asks wait for `aq approve` (in another terminal) or this terminal when free; with neither, unanswered asks {unanswered_word} at once"
        )
    }
}

/// What limits hold, said plainly: the rlimits, then what the plan says of
/// the cgroup (its memory and pids limits, or why there are only rlimits).
fn limits_note(profile: &Profile, plan: &aq_sandbox::SandboxPlan) -> String {
    let set: Vec<String> = profile
        .limits
        .entries()
        .iter()
        .filter(|(k, _)| *k != "memory_mb")
        .filter_map(|(k, v)| v.map(|v| format!("{k} {v}")))
        .collect();
    format!(
        "rlimits ({}); {}",
        if set.is_empty() {
            "none".to_string()
        } else {
            set.join(", ")
        },
        plan.enforced()
            .cgroup
            .to_string()
            .trim_start_matches("limits: ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_line_banner_names_what_confines_the_session() {
        let mut strict = Profile::builtin("strict").unwrap();
        strict.home = aq_policy::HomeAccess::Private;
        assert_eq!(
            confinement(SandboxKind::Kernel, &strict, true, 0, Some("claude")),
            [
                "exec guard",
                "kernel sandbox",
                "private home",
                "agent preset claude"
            ]
        );
        let mut seatbelt = strict.clone();
        seatbelt.home = aq_policy::HomeAccess::ReadOnly;
        assert_eq!(
            confinement(SandboxKind::Seatbelt, &seatbelt, false, 12, None),
            ["12 shims", "seatbelt sandbox"]
        );
        let mut shims = Profile::builtin("shims-only").unwrap();
        assert_eq!(
            confinement(SandboxKind::Kernel, &shims, false, 3, None),
            ["3 shims", "no kernel sandbox"]
        );
        shims.mode = aq_policy::SessionMode::Learn;
        assert_eq!(
            confinement(SandboxKind::Kernel, &shims, false, 3, None)
                .last()
                .unwrap(),
            "learn mode: asks run, logged for `aq policy suggest`"
        );
    }

    #[test]
    fn the_asks_note_follows_the_mode_then_the_approver() {
        let mut profile = Profile::builtin("shims-only").unwrap();
        let mut settings = SessionSettings {
            unanswered: Decision::Block,
            wait_for_approver: false,
            ..SessionSettings::default()
        };
        assert_eq!(
            asks_note(&profile, &settings),
            "asks wait for `aq approve` (in another terminal) or this terminal when free; with neither, unanswered asks are denied at once"
        );
        settings.wait_for_approver = true;
        settings.approval_timeout_secs = 30;
        assert_eq!(
            asks_note(&profile, &settings),
            "answer asks with `aq approve` in another terminal (each waits up to 30s)"
        );
        profile.summary = SummaryFormat::Json;
        settings.unanswered = Decision::Allow;
        assert_eq!(
            asks_note(&profile, &settings),
            "headless: asks are not waited for (unanswered asks run)"
        );
        profile.mode = aq_policy::SessionMode::Learn;
        assert!(asks_note(&profile, &settings).starts_with("learn mode:"));
    }
}
