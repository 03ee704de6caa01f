//! `aq lint`: the risky or useless settings of the policy a session would
//! really use here (see [`aq_policy::lint`]). Exit 1 on a high finding, or
//! on any with `--strict`.

use crate::cli::LintArgs;
use crate::exit::ExitCode;
use aq_policy::lint::{self, LintInputs, Severity};

pub fn run(args: &LintArgs, policy_flag: Option<&std::path::Path>) -> Result<ExitCode, String> {
    let workspace = aq_session::run::resolve_workspace(args.workspace.as_deref())?;
    let loaded = aq_session::policy_files::load_for(&workspace, policy_flag)?;
    loaded.warn_ignored();
    let effective = &loaded.effective;
    let profile = &aq_session::in_force::profile_named(effective, args.profile.as_deref())?;
    let agent_hosts = match &args.agent {
        Some(a) => effective
            .agents
            .get(a)
            .map(|p| p.hosts.clone())
            .ok_or_else(|| format!("unknown agent `{a}` (`aq policy show` lists the presets)"))?,
        None => Vec::new(),
    };
    let works = crate::doctor::profiles(&crate::doctor::diagnose(&crate::doctor::Host::probe()));
    let runnable = |p: &str| works.iter().find(|w| w.name == p).map(|w| w.works);
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|h| h.is_absolute());
    let findings = lint::lint(&LintInputs {
        effective,
        profile,
        agent_hosts: &agent_hosts,
        home: home.as_deref(),
        runnable: &runnable,
    });
    let high = findings
        .iter()
        .filter(|f| f.severity == Severity::High)
        .count();
    if args.json {
        let out = serde_json::json!({
            "workspace": workspace,
            "profile": profile.name,
            "agent": args.agent,
            "findings": findings,
        });
        println!("{out}");
    } else {
        let width = findings.iter().map(|f| f.rule.len()).max().unwrap_or(0);
        for f in &findings {
            println!("{:<6}  {:<width$}  {}", f.severity.label(), f.rule, f.what);
            println!("{:<6}  {:<width$}  → {}", "", "", f.fix);
        }
        println!(
            "aq lint: {} findings ({high} high) · profile {} · workspace {}",
            findings.len(),
            profile.name,
            workspace.display()
        );
    }
    Ok(if high > 0 || (args.strict && !findings.is_empty()) {
        ExitCode::Findings
    } else {
        ExitCode::Ok
    })
}
