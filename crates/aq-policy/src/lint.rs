//! `aq lint`: risky or useless settings in the policy a session would really
//! use (the effective policy for a workspace, the profile in force, an agent
//! preset's hosts), each with a rule id, a severity, and what to do.
//!
//! Pure: the caller gathers the inputs (which profiles this machine can run,
//! as `aq doctor` sees it; what exists on disk is checked here, read-only).

use std::path::Path;

use serde::Serialize;

use crate::config::EffectivePolicy;
use crate::decision::Decision;
use crate::profile::{HomeAccess, Profile, catalog_masks};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Does nothing, or less than it seems.
    Low,
    /// Weakens a boundary.
    Medium,
    /// Opens a way out a prompt injection would take.
    High,
}

impl Severity {
    /// As printed.
    pub fn label(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "MEDIUM",
            Severity::High => "HIGH",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `lint-...`.
    pub rule: &'static str,
    /// How bad.
    pub severity: Severity,
    /// What is set, and where (`[profile.strict] writable "~"`).
    pub what: String,
    /// Why it matters, and what to do.
    pub fix: String,
}

/// What the lint looks at.
pub struct LintInputs<'a> {
    /// The effective policy for the workspace.
    pub effective: &'a EffectivePolicy,
    /// The profile a session would use.
    pub profile: &'a Profile,
    /// Hosts an agent preset allows, if one is in play.
    pub agent_hosts: &'a [String],
    /// The home directory, for `~`.
    pub home: Option<&'a Path>,
    /// Whether this machine can run a profile (`None`: unknown).
    pub runnable: &'a dyn Fn(&str) -> Option<bool>,
}

/// Hosts that accept uploads from anyone: an allowlist entry for one is a
/// way to send the workspace out.
const UPLOAD_HOSTS: &[&str] = &[
    "pastebin.com",
    "paste.ee",
    "hastebin.com",
    "termbin.com",
    "0x0.st",
    "transfer.sh",
    "file.io",
    "gist.github.com",
    "github.com",
    "api.github.com",
    "gitlab.com",
    "bitbucket.org",
    "webhook.site",
    "requestbin.com",
    "ngrok.io",
    "ngrok-free.app",
    "discord.com",
    "hooks.slack.com",
    "api.telegram.org",
    "drive.google.com",
    "dropbox.com",
    "s3.amazonaws.com",
];

/// Lints `inputs`; findings most severe first.
pub fn lint(inputs: &LintInputs<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let e = inputs.effective;
    let p = inputs.profile;
    let expand = |s: &str| -> Option<std::path::PathBuf> {
        match (s.strip_prefix("~/"), inputs.home) {
            (Some(rest), Some(h)) => Some(h.join(rest)),
            (None, Some(h)) if s == "~" => Some(h.to_path_buf()),
            (None, _) if s.starts_with('/') => Some(s.into()),
            _ => None,
        }
    };

    // Paths: writable or readable where the secrets are.
    for (key, list) in [("writable", &p.writable), ("readable", &p.readable)] {
        for w in list.iter() {
            let w = match w.trim_end_matches('/') {
                "" => "/",
                t => t,
            };
            let broad = matches!(w, "/" | "~" | "/home" | "/root");
            let secret = crate::grants::credential_location(w);
            if broad || secret.is_some() {
                out.push(Finding {
                    rule: if key == "writable" {
                        "lint-writable-home"
                    } else {
                        "lint-readable-secrets"
                    },
                    severity: if key == "writable" {
                        Severity::High
                    } else {
                        Severity::Medium
                    },
                    what: format!("[profile.{}] {key} \"{w}\"", p.name),
                    fix: match secret {
                        Some(s) => format!(
                            "it holds or is the credential location {s}; name the directory the work needs (`aq allow --remove {w}`)"
                        ),
                        None => format!(
                            "the whole home (or more): shell rc files, git hooks of every repository, other projects; name the directory the work needs (`aq allow --remove {w}`)"
                        ),
                    },
                });
            }
        }
    }
    if p.sandbox && p.home == HomeAccess::ReadOnly && p.name != "dev" {
        out.push(Finding {
            rule: "lint-home-readable",
            severity: Severity::Low,
            what: format!("[profile.{}] home = \"read-only\"", p.name),
            fix: "everything in your home is readable (history, other repositories, browser profiles); `home = \"private\"` with `readable` for what the work needs".to_string(),
        });
    }

    // The network.
    let hosts = e
        .network
        .allow
        .iter()
        .map(|h| (h.as_str(), "[network] allow"))
        .chain(
            inputs
                .agent_hosts
                .iter()
                .map(|h| (h.as_str(), "the agent preset")),
        );
    for (host, place) in hosts {
        let name = host.rsplit_once(':').map_or(host, |(n, _)| n);
        let bare = name.strip_prefix("*.").unwrap_or(name);
        if name == "*" || (name.starts_with("*.") && !bare.contains('.')) {
            out.push(Finding {
                rule: "lint-network-any",
                severity: Severity::High,
                what: format!("{place} \"{host}\""),
                fix: "this lets a command reach almost any host: name the hosts the work needs"
                    .to_string(),
            });
        } else if UPLOAD_HOSTS
            .iter()
            .any(|u| bare == *u || bare.ends_with(&format!(".{u}")))
        {
            out.push(Finding {
                rule: "lint-network-upload",
                severity: Severity::Medium,
                what: format!("{place} \"{host}\""),
                fix: "anyone can receive uploads there (a paste site, a code host, a webhook): a prompt injection can send the workspace out through it; allow it only for the sessions that need it".to_string(),
            });
        }
    }

    // Session settings.
    if e.session.unanswered == Decision::Allow {
        out.push(Finding {
            rule: "lint-unanswered-allow",
            severity: Severity::High,
            what: "[session] unanswered = \"allow\"".to_string(),
            fix: "an ask nobody answers runs: in a headless session every ask is an allow; set unanswered = \"deny\"".to_string(),
        });
    }
    for v in &e.session.env_pass {
        out.push(Finding {
            rule: "lint-env-pass-secret",
            severity: Severity::Medium,
            what: format!("[session] env_pass \"{v}\""),
            fix: "every command the agent runs sees this secret-looking variable; pass it to the agent only (a profile's `env`) or through the key proxy".to_string(),
        });
    }

    // Rules.
    for (id, action) in &e.policy.actions {
        let builtin = id.info().action;
        if builtin == Decision::Block && *action != Decision::Block {
            out.push(Finding {
                rule: "lint-builtin-block-lowered",
                severity: if *action == Decision::Allow {
                    Severity::High
                } else {
                    Severity::Medium
                },
                what: format!("[rules] {} = \"{}\"", id.as_str(), action.as_str()),
                fix: format!("`{}` blocks by default ({}); put it back unless a command you trust needs it, and then prefer a narrow [[rule]]", id.as_str(), id.info().why),
            });
        }
    }
    let engine = crate::engine::Engine::new(e.policy.clone());
    for rule in e
        .policy
        .custom_rules
        .iter()
        .filter(|r| r.action == Decision::Allow)
    {
        let Some(program) = rule
            .matcher
            .program
            .iter()
            .find(|p| !p.contains(['*', '?', '[']))
        else {
            continue;
        };
        let line = match rule
            .matcher
            .subcommand
            .iter()
            .find(|s| !s.contains(['*', '?', '[']))
        {
            Some(s) => format!("{program} {s}"),
            None => program.clone(),
        };
        let verdict = engine.evaluate(&line);
        if verdict.decision == Decision::Block {
            let by = verdict
                .rules
                .iter()
                .find(|m| m.action == Decision::Block)
                .map(|m| m.id.clone())
                .unwrap_or_default();
            out.push(Finding {
                rule: "lint-allow-shadowed",
                severity: Severity::Low,
                what: format!("[[rule]] {} allows `{line}`", rule.id),
                fix: format!(
                    "the built-in block `{by}` still decides: an allow rule never lowers a block"
                ),
            });
        }
    }

    // Masks that match nothing here.
    let builtin = Profile::builtin(&p.name);
    for m in p.masked.iter().chain(&e.policy.sensitive_paths) {
        let known = catalog_masks().any(|c| c == m)
            || builtin.as_ref().is_some_and(|b| b.masked.contains(m));
        if known || m.contains(['*', '?', '[']) || !(m.starts_with('/') || m.starts_with('~')) {
            continue;
        }
        if let Some(path) = expand(m)
            && !path.exists()
        {
            out.push(Finding {
                rule: "lint-mask-matches-nothing",
                severity: Severity::Low,
                what: format!("mask \"{m}\""),
                fix: format!(
                    "{} does not exist here: a typo, or a file that moved",
                    path.display()
                ),
            });
        }
    }

    // Limits and boundaries.
    if let Some(b) = &builtin {
        for ((name, was), (_, now)) in b.limits.entries().iter().zip(p.limits.entries().iter()) {
            if was.is_some() && now.is_none() {
                out.push(Finding {
                    rule: "lint-limit-removed",
                    severity: Severity::Low,
                    what: format!("[profile.{}] limits {name} = 0", p.name),
                    fix: "a runaway command (a fork bomb, a disk filler) is not stopped; set a high limit rather than none".to_string(),
                });
            }
        }
    }
    if p.sandbox && !p.exec_guard {
        out.push(Finding {
            rule: "lint-exec-guard-off",
            severity: Severity::Medium,
            what: format!("[profile.{}] exec_guard = false", p.name),
            fix: "only programs found through the PATH shims are judged, and what the agent starts can read its environment; keep the exec guard on".to_string(),
        });
    }
    if !p.sandbox {
        out.push(Finding {
            rule: "lint-no-sandbox",
            severity: Severity::Medium,
            what: format!("profile {} has no kernel sandbox", p.name),
            fix: "only the shims stand between a command and your files: use strict where `aq doctor` says it works".to_string(),
        });
    }
    if (inputs.runnable)(&p.name) == Some(false) {
        out.push(Finding {
            rule: "lint-profile-cannot-run",
            severity: Severity::High,
            what: format!("profile {} cannot run on this machine", p.name),
            fix: "aq run fails closed (125) with it; `aq doctor --fix` says what the kernel lacks"
                .to_string(),
        });
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}
