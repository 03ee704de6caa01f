//! `aq policy init|show|trust|untrust` and `aq check`: writing, showing,
//! trusting and validating policy files. Finding and reading them is
//! `aq_session::policy_files`' job; parsing and merging is `aq_policy`'s.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use aq_policy::{CustomRule, EffectivePolicy, Location, RuleId};
use serde_json::{Value, json};

use crate::cli::{CheckArgs, InitArgs, ShowArgs, TrustArgs};
use crate::exit::ExitCode;
use aq_session::policy_files::{self, FileKind, Loaded, TrustState, TrustStore};

/// The commented body of a starter file, shared by both kinds.
const STARTER: &str = include_str!("policy_starter.toml");

const USER_HEADER: &str = "\
# agent-quarantine: your policy. It applies in every workspace, on top of the
# built-in rules; a project's agent-quarantine.toml comes after it.
";

const PROJECT_HEADER: &str = "\
# agent-quarantine: this project's policy (agent-quarantine.toml at the
# workspace root). It comes with the repository, so it may only tighten the
# policy: entries that loosen it (a lower action, a custom \"allow\" rule) are
# ignored until a user runs `aq policy trust`, and trust lapses when this file
# changes.
";

/// Which file `aq policy init` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InitTarget {
    User,
    Project,
}

/// The starter file for a target.
fn starter(target: InitTarget) -> String {
    let header = match target {
        InitTarget::User => USER_HEADER,
        InitTarget::Project => PROJECT_HEADER,
    };
    format!("{header}#\n{STARTER}")
}

// ---- init ---------------------------------------------------------------------

/// `aq policy init [--user|--project] [--force]`.
pub fn run_init(args: &InitArgs) -> Result<ExitCode, String> {
    let target = if args.project {
        InitTarget::Project
    } else {
        InitTarget::User
    };
    let path = match target {
        InitTarget::User => policy_files::user_file().ok_or_else(|| {
            "cannot tell where your config directory is: set XDG_CONFIG_HOME or HOME".to_string()
        })?,
        InitTarget::Project => policy_files::project_file()?,
    };
    if path.exists() && !args.force {
        return Err(format!(
            "{} already exists; not overwriting it\n  help: `aq check {0}` validates it; pass --force to replace it with a starter file",
            path.display()
        ));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&path, starter(target))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    println!("edit it (every example is commented out), then run `aq check` and `aq policy show`");
    if target == InitTarget::Project {
        println!(
            "it may only tighten the policy until you run `aq policy trust {}`",
            path.display()
        );
    }
    Ok(ExitCode::Ok)
}

// ---- check --------------------------------------------------------------------

/// `aq check [FILES...]`: validate without running anything.
pub fn run_check(args: &CheckArgs, flag: Option<&Path>) -> Result<ExitCode, String> {
    if !args.files.is_empty() {
        let mut failed = false;
        for path in &args.files {
            match policy_files::parse_file(path) {
                Ok(_) => println!("ok: {}", path.display()),
                Err(e) => {
                    failed = true;
                    eprintln!("aq: {e}");
                }
            }
        }
        return Ok(if failed {
            ExitCode::Usage
        } else {
            ExitCode::Ok
        });
    }
    check_discovered(flag)
}

/// Checks the user and project files and `--policy FILE`, each on its own,
/// then merged in order, and lists what an untrusted project file loses.
fn check_discovered(flag: Option<&Path>) -> Result<ExitCode, String> {
    let mut candidates: Vec<(FileKind, PathBuf)> = Vec::new();
    if let Some(p) = policy_files::user_file() {
        candidates.push((FileKind::User, p));
    }
    candidates.push((FileKind::Project, policy_files::project_file()?));
    let mut failed = false;
    let mut found = 0;
    for (kind, path) in &candidates {
        match policy_files::read_text(path) {
            Ok(None) => continue,
            Ok(Some(text)) => {
                found += 1;
                match aq_policy::parse_layer(&path.display().to_string(), &text) {
                    Ok(_) => println!("ok: {}", path.display()),
                    Err(e) => {
                        failed = true;
                        eprintln!("aq: {e}");
                    }
                }
            }
            Err(e) => {
                failed = true;
                eprintln!("aq: {e} ({} file)", kind.as_str());
            }
        }
    }
    if let Some(path) = flag {
        found += 1;
        match policy_files::parse_file(path) {
            Ok(_) => println!("ok: {}", path.display()),
            Err(e) => {
                failed = true;
                eprintln!("aq: {e} (given with --policy)");
            }
        }
    }
    if found == 0 {
        let looked: Vec<String> = candidates
            .iter()
            .map(|(_, p)| p.display().to_string())
            .collect();
        println!(
            "no policy files found (looked for {})",
            looked.join(" and ")
        );
        return Ok(ExitCode::Ok);
    }
    if failed {
        return Ok(ExitCode::Usage);
    }
    // Every file is valid alone; now together (duplicate rule ids, trust).
    match policy_files::load(flag) {
        Ok(loaded) => {
            for entry in &loaded.effective.ignored {
                println!("warning: {entry}");
            }
            for refused in &loaded.refused_export {
                println!("warning: {refused}");
            }
            Ok(ExitCode::Ok)
        }
        Err(e) => {
            eprintln!("aq: {e}");
            Ok(ExitCode::Usage)
        }
    }
}

// ---- show ---------------------------------------------------------------------

/// `aq policy show [--json]`.
pub fn run_show(args: &ShowArgs, flag: Option<&Path>) -> Result<ExitCode, String> {
    let loaded = policy_files::load(flag)?;
    if args.json {
        println!("{}", render_show_json(&loaded));
    } else if args.agents {
        for p in &loaded.effective.agents.0 {
            println!("{p}");
        }
    } else {
        print!("{}", render_show_text(&loaded));
    }
    Ok(ExitCode::Ok)
}

fn trust_label(state: Option<TrustState>) -> &'static str {
    match state {
        None | Some(TrustState::Trusted) => "full",
        Some(TrustState::Untrusted) | Some(TrustState::Changed) => "tighten-only",
    }
}

fn trust_note(state: Option<TrustState>) -> &'static str {
    match state {
        None => "",
        Some(TrustState::Trusted) => "  (trusted)",
        Some(TrustState::Untrusted) => {
            "  (untrusted: may only tighten; `aq policy trust` to trust it)"
        }
        Some(TrustState::Changed) => {
            "  (untrusted: changed since it was trusted; may only tighten until trusted again)"
        }
    }
}

fn render_show_text(loaded: &Loaded) -> String {
    let eff = &loaded.effective;
    let mut s = String::new();
    let _ = writeln!(s, "policy files (later layers win):");
    let _ = writeln!(s, "  {:9} (the rules of `aq explain --rules`)", "built-in");
    for (kind, path) in &loaded.looked_for {
        if !loaded.files.iter().any(|f| f.kind == *kind) {
            let _ = writeln!(s, "  {:9} {} (not found)", kind.as_str(), path.display());
        }
    }
    for f in &loaded.files {
        let _ = writeln!(
            s,
            "  {:9} {}{}",
            f.kind.as_str(),
            f.path.display(),
            trust_note(f.trust_state)
        );
    }

    let _ = writeln!(s, "\nrules:");
    for id in RuleId::ALL {
        let action = eff.policy.action(*id);
        let from = match eff.action_source(*id) {
            None => "built-in".to_string(),
            Some(at) => format!("{at} (built-in: {})", id.info().action),
        };
        let _ = writeln!(s, "  {:28} {:5}  {from}", id.as_str(), action.as_str());
    }

    let _ = writeln!(s, "\nsensitive paths:");
    if eff.policy.sensitive_paths.is_empty() {
        let _ = writeln!(
            s,
            "  (none added; the built-in credential files always apply)"
        );
    }
    for (pattern, at) in eff
        .policy
        .sensitive_paths
        .iter()
        .zip(&eff.provenance.sensitive_paths)
    {
        let _ = writeln!(s, "  {pattern:28} {at}");
    }

    let _ = writeln!(s, "\ncustom rules:");
    if eff.policy.custom_rules.is_empty() {
        let _ = writeln!(s, "  (none)");
    }
    for (rule, at) in eff
        .policy
        .custom_rules
        .iter()
        .zip(&eff.provenance.custom_rules)
    {
        let _ = writeln!(
            s,
            "  {:28} {:5}  {at} [risk: {}]",
            rule.id,
            rule.action.as_str(),
            rule.risk
        );
        let _ = writeln!(s, "    why:   {}", rule.why);
        if let Some(safer) = &rule.safer {
            let _ = writeln!(s, "    safer: {safer}");
        }
        let _ = writeln!(s, "    match: {}", describe_matcher(rule));
    }

    let _ = writeln!(
        s,
        "\nbuild outputs the exec guard runs without asking ([session] trusted_exec; relative to the workspace unless written otherwise):"
    );
    if eff.session.trusted_exec.is_empty() {
        let _ = writeln!(
            s,
            "  (none: every unrecognised native program where the session writes asks)"
        );
    }
    for entry in &eff.session.trusted_exec {
        let from = if aq_policy::exec_trust::BUILD_OUTPUTS.contains(&entry.as_str()) {
            "built-in"
        } else {
            "yours"
        };
        let _ = writeln!(s, "  {entry:28} {from}");
    }

    let _ = writeln!(
        s,
        "\nsandbox profiles (`aq run --profile NAME`; default: {}):",
        eff.session.profile
    );
    for p in &eff.profiles.0 {
        for line in p.to_string().lines() {
            let _ = writeln!(s, "  {line}");
        }
    }

    let _ = writeln!(
        s,
        "\nagent presets (recognised from the command, or `aq run --agent NAME`; `aq policy show --agents` shows what each grants):"
    );
    for p in &eff.agents.0 {
        let _ = writeln!(
            s,
            "  {:<10} {} ({})",
            p.name,
            p.title,
            p.programs.join(", ")
        );
    }

    if !eff.audit_export.is_empty() {
        let _ = writeln!(
            s,
            "\naudit export (every session, live; see docs/export.md):"
        );
        for target in &eff.audit_export {
            let _ = writeln!(s, "  {target}");
        }
    }

    if !eff.ignored.is_empty() {
        let _ = writeln!(
            s,
            "\nignored (an untrusted project file may only tighten the policy):"
        );
        for entry in &eff.ignored {
            let _ = writeln!(s, "  {entry}");
        }
    }
    s
}

fn describe_matcher(rule: &CustomRule) -> String {
    let m = &rule.matcher;
    let lists = [
        ("program", &m.program),
        ("subcommand", &m.subcommand),
        ("flags", &m.flags),
        ("args", &m.args),
        ("paths", &m.paths),
    ];
    lists
        .iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(name, l)| format!("{name} = {}", json!(l)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn location_json(at: Option<&Location>) -> Value {
    match at {
        None => json!({"source": "built-in"}),
        Some(at) => json!({"source": at.source, "line": at.line, "column": at.column}),
    }
}

/// Merges `{"source", "line", "column"}` into an object.
fn with_location(mut v: Value, at: Option<&Location>) -> Value {
    if let (Value::Object(obj), Value::Object(loc)) = (&mut v, location_json(at)) {
        obj.extend(loc);
    }
    v
}

fn render_show_json(loaded: &Loaded) -> Value {
    let eff: &EffectivePolicy = &loaded.effective;
    let files: Vec<Value> = loaded
        .files
        .iter()
        .map(|f| {
            json!({
                "layer": f.kind.as_str(),
                "path": f.path.display().to_string(),
                "trust": trust_label(f.trust_state),
            })
        })
        .collect();
    let rules: Vec<Value> = RuleId::ALL
        .iter()
        .map(|id| {
            with_location(
                json!({"id": id.as_str(), "action": eff.policy.action(*id), "default": id.info().action}),
                eff.action_source(*id),
            )
        })
        .collect();
    let sensitive: Vec<Value> = eff
        .policy
        .sensitive_paths
        .iter()
        .zip(&eff.provenance.sensitive_paths)
        .map(|(p, at)| with_location(json!({"pattern": p}), Some(at)))
        .collect();
    let custom: Vec<Value> = eff
        .policy
        .custom_rules
        .iter()
        .zip(&eff.provenance.custom_rules)
        .map(|(r, at)| with_location(json!(r), Some(at)))
        .collect();
    let ignored: Vec<Value> = eff
        .ignored
        .iter()
        .map(|i| {
            with_location(
                json!({"entry": i.entry, "kept": i.kept, "message": i.to_string()}),
                Some(&i.at),
            )
        })
        .collect();
    json!({
        "files": files,
        "rules": rules,
        "sensitive_paths": sensitive,
        "custom_rules": custom,
        "default_profile": eff.session.profile,
        "trusted_exec": eff.session.trusted_exec,
        "profiles": eff.profiles.0,
        "agents": eff.agents.0,
        "audit_export": eff.audit_export.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
        "ignored": ignored,
    })
}

// ---- trust --------------------------------------------------------------------

fn trust_target(args: &TrustArgs) -> Result<PathBuf, String> {
    match &args.file {
        Some(p) => Ok(p.clone()),
        None => policy_files::project_file(),
    }
}

/// `aq policy trust [FILE]`.
pub fn run_trust(args: &TrustArgs) -> Result<ExitCode, String> {
    let path = trust_target(args)?;
    let text = policy_files::read_text(&path)?.ok_or_else(|| {
        format!(
            "{}: no such file; nothing to trust\n  help: `aq policy init --project` writes a starter project file",
            path.display()
        )
    })?;
    aq_policy::parse_layer(&path.display().to_string(), &text).map_err(|e| {
        format!("{e}\n  help: fix the file before trusting it; `aq check` validates it")
    })?;
    let key = policy_files::trust_key(&path)?;
    let digest = policy_files::digest(text.as_bytes());
    let mut store = TrustStore::load()?;
    store.trust(&key, digest.clone());
    store.save()?;
    println!("trusted: {} (sha256 {digest})", key.display());
    println!(
        "its entries now apply in full, including those that loosen the policy; trust lapses when the file changes"
    );
    if let Some(at) = store.path() {
        println!("recorded in {}", at.display());
    }
    Ok(ExitCode::Ok)
}

/// `aq policy untrust [FILE]`.
pub fn run_untrust(args: &TrustArgs) -> Result<ExitCode, String> {
    let path = trust_target(args)?;
    let key = policy_files::trust_key(&path)?;
    let mut store = TrustStore::load()?;
    if store.untrust(&key) {
        store.save()?;
        println!(
            "untrusted: {} (it may only tighten the policy now)",
            key.display()
        );
    } else {
        println!("not trusted: {} (nothing to do)", key.display());
    }
    Ok(ExitCode::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starter_files_parse_and_change_nothing() {
        for target in [InitTarget::User, InitTarget::Project] {
            let layer = aq_policy::parse_layer("starter.toml", &starter(target))
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(layer.actions.is_empty());
            assert!(layer.sensitive_paths.is_empty());
            assert!(layer.custom_rules.is_empty());
        }
    }

    #[test]
    fn starter_examples_parse_when_uncommented() {
        let uncommented: String = STARTER
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest)
                    if rest.starts_with('"')
                        || rest.starts_with("sensitive")
                        || rest.starts_with("[[rule]]")
                        || rest.starts_with("[session]")
                        || rest.split_once(" = ").is_some_and(|(k, _)| {
                            !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase())
                        }) =>
                {
                    rest
                }
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let layer = aq_policy::parse_layer("starter.toml", &uncommented)
            .unwrap_or_else(|e| panic!("{e}\n{uncommented}"));
        assert_eq!(layer.actions.len(), 3);
        assert_eq!(layer.sensitive_paths.len(), 2);
        let ids: Vec<_> = layer
            .custom_rules
            .iter()
            .map(|d| d.rule.id.as_str())
            .collect();
        assert_eq!(ids, ["no-terraform-apply", "allow-npm-ci"]);
        assert_eq!(layer.session.shims, ["terraform"]);
    }
}
