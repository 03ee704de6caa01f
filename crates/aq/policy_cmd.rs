//! `aq policy init|show|trust|untrust` and `aq check`: writing, showing,
//! trusting and validating policy files. Finding and reading them is
//! `aq_session::policy_files`' job; parsing and merging is `aq_policy`'s.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use aq_policy::{CustomRule, EffectivePolicy, Location, ProfileLine, RuleId};
use aq_session::grant_dates::GrantDates;
use aq_session::in_force::{self, InForce, Origin, Sourced, Sources};
use aq_session::network::NetPlan;
use serde_json::{Value, json};

use crate::cli::{CheckArgs, InitArgs, ShowArgs, SuggestArgs, TrustArgs};
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
    let mut failed = false;
    let mut found = 0;
    if let Some(path) = policy_files::managed_file() {
        match policy_files::read_managed(&path) {
            Ok(None) => {}
            Ok(Some(_)) => {
                found += 1;
                println!("ok: {} (managed)", path.display());
            }
            Err(e) => {
                found += 1;
                failed = true;
                eprintln!("aq: {e}");
            }
        }
    }
    if let Some(p) = policy_files::user_file() {
        candidates.push((FileKind::User, p));
    }
    candidates.push((FileKind::Project, policy_files::project_file()?));
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
            // Loosening a managed policy is an error of the file that tries.
            for refused in &loaded.refused_managed {
                eprintln!("aq: {refused}");
            }
            Ok(if loaded.refused_managed.is_empty() {
                ExitCode::Ok
            } else {
                ExitCode::Findings
            })
        }
        Err(e) => {
            eprintln!("aq: {e}");
            Ok(ExitCode::Usage)
        }
    }
}

// ---- show ---------------------------------------------------------------------

/// `aq policy show [--json] [--agents] [--profile NAME] [--workspace DIR]`.
pub fn run_show(args: &ShowArgs, flag: Option<&Path>) -> Result<ExitCode, String> {
    let workspace = aq_session::run::resolve_workspace(args.workspace.as_deref())?;
    let loaded = policy_files::load_for(&workspace, flag)?;
    if args.agents && !args.json {
        for p in &loaded.effective.agents.0 {
            println!("{p}");
        }
        return Ok(ExitCode::Ok);
    }
    let dates = GrantDates::load().unwrap_or_else(|e| {
        eprintln!("aq: warning: {e}");
        GrantDates::default()
    });
    let names: Vec<String> = match &args.profile {
        Some(name) => {
            in_force::profile_named(&loaded.effective, Some(name))?;
            vec![name.clone()]
        }
        None => loaded
            .effective
            .profiles
            .names()
            .into_iter()
            .map(String::from)
            .collect(),
    };
    // Each profile as `aq run --profile NAME` here would start it (or the
    // reason it would not start).
    let sessions: Vec<Started> = names
        .iter()
        .map(|name| {
            let asked = in_force::Asked {
                profile: Some(name),
                ..Default::default()
            };
            match in_force::session(&loaded.effective, &asked) {
                Ok(session) => {
                    let sources = in_force::sources(&loaded, &dates, &session);
                    Ok((session, sources))
                }
                Err(e) => Err((name.clone(), e.to_string())),
            }
        })
        .collect();
    let shown = Shown {
        loaded: &loaded,
        workspace: &workspace,
        sessions: &sessions,
    };
    if args.json {
        println!("{}", render_show_json(&shown));
    } else {
        print!("{}", render_show_text(&shown));
    }
    Ok(ExitCode::Ok)
}

/// A profile as a session gets it, or its name and why no session would start.
type Started = Result<(InForce, Sources), (String, String)>;

/// What `aq policy show` prints.
struct Shown<'a> {
    loaded: &'a Loaded,
    workspace: &'a Path,
    sessions: &'a [Started],
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

fn render_show_text(shown: &Shown) -> String {
    let loaded = shown.loaded;
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

    if let Some(m) = &eff.managed {
        let _ = writeln!(s, "\nmanaged policy {} locks:", m.file);
        for line in aq_policy::managed::describe(m) {
            let _ = writeln!(s, "  {line}");
        }
    }
    for r in &loaded.refused_managed {
        let _ = writeln!(s, "  refused: {r}");
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

    let net = &eff.network;
    if !net.http.is_empty() || !net.credentials.is_empty() || !net.credential_presets.is_empty() {
        let _ = writeln!(
            s,
            "\nHTTPS read by the broker (docs/network.md; from your own files only):"
        );
        for (host, rule) in &net.http {
            let paths = if rule.paths.is_empty() {
                "any path".to_string()
            } else {
                format!("under {}", rule.paths.join(", "))
            };
            let methods = if rule.methods.is_empty() {
                "any method".to_string()
            } else {
                rule.methods.join(", ")
            };
            let _ = writeln!(s, "  {host:28} only {methods}, {paths}");
        }
        for (host, cred) in &net.credentials {
            // The value as written: it names variables, never holds a secret.
            let _ = writeln!(s, "  {host:28} adds {}: {}", cred.header, cred.value);
        }
        for preset in &net.credential_presets {
            let _ = writeln!(s, "  credential preset `{preset}`");
        }
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
        "\nsandbox profiles (`aq run --profile NAME`; default: {}), as a session started in {} gets them:",
        eff.session.profile,
        shown.workspace.display()
    );
    for started in shown.sessions {
        match started {
            Ok((session, sources)) => render_profile(&mut s, session, sources),
            Err((name, e)) => {
                let _ = writeln!(
                    s,
                    "  profile {name}: `aq run --profile {name}` would not start: {e}"
                );
            }
        }
    }
    if shown
        .sessions
        .iter()
        .any(|s| s.as_ref().is_ok_and(|(s, _)| s.profile.sandbox))
    {
        let _ = writeln!(
            s,
            "  (an agent preset adds its own hosts and paths when `aq run` starts its agent: `aq policy show --agents`)"
        );
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

/// One profile as a session gets it: its description, with the network,
/// writable and readable lines written from what is in force, each grant
/// with its origin.
fn render_profile(s: &mut String, session: &InForce, sources: &Sources) {
    let width = sources
        .allow
        .iter()
        .chain(&sources.pins)
        .chain(&sources.permit)
        .chain(&sources.unused)
        .chain(&sources.writable)
        .chain(&sources.readable)
        .map(|e| e.value.len())
        .max()
        .unwrap_or(0)
        .max(24);
    let list = |s: &mut String, entries: &[Sourced]| {
        for e in entries {
            let _ = writeln!(s, "      {:width$}  {}", e.value, origin_text(&e.origin));
        }
    };
    let p = &session.profile;
    for (kind, line) in p.describe() {
        match kind {
            ProfileLine::Writable => {
                let _ = writeln!(
                    s,
                    "    writable:  the workspace, the session's TMPDIR{}",
                    if sources.writable.is_empty() {
                        ""
                    } else {
                        ", and:"
                    }
                );
                list(s, &sources.writable);
            }
            ProfileLine::Readable => {
                let _ = writeln!(
                    s,
                    "    readable:  {}{}",
                    p.readable_base(),
                    if sources.readable.is_empty() {
                        ""
                    } else {
                        "; and named:"
                    }
                );
                list(s, &sources.readable);
            }
            ProfileLine::Network => render_network(s, session, sources, &list),
            ProfileLine::Head | ProfileLine::Rest => {
                let _ = writeln!(s, "  {line}");
            }
        }
    }
    if !p.sandbox {
        // No sandbox lines above: the network is the host's all the same.
        render_network(s, session, sources, &list);
    }
}

fn render_network(
    s: &mut String,
    session: &InForce,
    sources: &Sources,
    list: &dyn Fn(&mut String, &[Sourced]),
) {
    let _ = writeln!(s, "    network:   {}", session.net.note());
    match &session.net {
        NetPlan::Broker { unlisted, .. } => {
            list(s, &sources.allow);
            let _ = writeln!(
                s,
                "    other hosts: {}",
                match unlisted {
                    aq_policy::UnlistedHosts::Ask =>
                        "asked when someone can answer (`aq approve`, `aq watch`, the terminal), else refused",
                    aq_policy::UnlistedHosts::Refuse => "refused ([network] unlisted = \"refuse\")",
                }
            );
            if !sources.pins.is_empty() {
                let _ = writeln!(s, "    pinned (never resolved):");
                list(s, &sources.pins);
            }
            if !sources.permit.is_empty() {
                let _ = writeln!(s, "    private destinations permitted:");
                list(s, &sources.permit);
            }
        }
        NetPlan::Off | NetPlan::Host if !sources.unused.is_empty() => {
            let _ = writeln!(
                s,
                "    not used by this profile ({}):",
                if session.profile.sandbox {
                    "its network is the host's"
                } else {
                    "no kernel sandbox, so no broker"
                }
            );
            list(s, &sources.unused);
        }
        NetPlan::Off | NetPlan::Host => {}
    }
}

/// Where a grant came from, in words.
fn origin_text(origin: &Origin) -> String {
    match origin {
        Origin::BuiltIn => "built-in".to_string(),
        Origin::Flag => "the command line".to_string(),
        Origin::Agent(name) => format!("agent preset {name}"),
        Origin::File {
            kind,
            at,
            place,
            granted,
        } => {
            let whose = match kind {
                FileKind::Managed => "the managed policy",
                FileKind::User => "your policy",
                FileKind::Project => "the repository's policy",
                FileKind::Flag => "--policy",
            };
            let when = granted
                .as_deref()
                .map(|d| format!(", `aq allow` on {}", d.get(..10).unwrap_or(d)))
                .unwrap_or_default();
            format!("{whose} {at} {place}{when}")
        }
    }
}

fn origin_json(origin: &Origin) -> Value {
    match origin {
        Origin::BuiltIn => json!({"source": "built-in"}),
        Origin::Flag => json!({"source": "command-line"}),
        Origin::Agent(name) => json!({"source": "agent", "agent": name}),
        Origin::File {
            kind,
            at,
            place,
            granted,
        } => with_location(
            json!({"layer": kind.as_str(), "place": place, "granted": granted}),
            Some(at),
        ),
    }
}

fn sourced_json(key: &str, entries: &[Sourced]) -> Vec<Value> {
    entries
        .iter()
        .map(|e| {
            let mut v = origin_json(&e.origin);
            if let Value::Object(o) = &mut v {
                o.insert(key.to_string(), json!(e.value));
            }
            v
        })
        .collect()
}

fn in_force_json(session: &InForce, sources: &Sources) -> Value {
    let mode = match session.net {
        NetPlan::Off => "off",
        NetPlan::Host => "host",
        NetPlan::Broker { .. } => "broker",
    };
    json!({
        "profile": session.profile.name,
        "sandbox": session.profile.sandbox,
        "network": {
            "mode": mode,
            "note": session.net.note(),
            "allow": sourced_json("entry", &sources.allow),
            "resolve": sourced_json("entry", &sources.pins),
            "permit": sourced_json("entry", &sources.permit),
            "unused": sourced_json("entry", &sources.unused),
            "unlisted": match &session.net {
                NetPlan::Broker { unlisted, .. } => json!(unlisted),
                _ => Value::Null,
            },
        },
        "writable": sourced_json("path", &sources.writable),
        "readable": sourced_json("path", &sources.readable),
        "home": session.profile.home.as_str(),
    })
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

fn render_show_json(shown: &Shown) -> Value {
    let loaded = shown.loaded;
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
    let managed = eff.managed.as_ref().map(|m| {
        json!({
            "file": m.file,
            "locks": aq_policy::managed::describe(m),
            "refused": loaded.refused_managed.iter().map(|r| with_location(
                json!({"entry": r.entry, "key": r.key, "kept": r.kept, "message": r.to_string()}),
                Some(&r.at),
            )).collect::<Vec<_>>(),
        })
    });
    json!({
        "files": files,
        "managed": managed,
        "rules": rules,
        "sensitive_paths": sensitive,
        "custom_rules": custom,
        "default_profile": eff.session.profile,
        "trusted_exec": eff.session.trusted_exec,
        "profiles": eff.profiles.0,
        "workspace": shown.workspace.display().to_string(),
        "in_force": shown.sessions.iter().map(|started| match started {
            Ok((session, sources)) => in_force_json(session, sources),
            Err((name, e)) => json!({"profile": name, "error": e}),
        }).collect::<Vec<_>>(),
        "agents": eff.agents.0,
        "audit_export": eff.audit_export.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
        "ignored": ignored,
    })
}

// ---- trust --------------------------------------------------------------------

fn trust_target(args: &TrustArgs) -> Result<PathBuf, String> {
    match &args.file {
        Some(p) => Ok(p.clone()),
        None => Ok(policy_files::project_file()?),
    }
}

/// `aq policy trust [FILE]`.
pub fn run_trust(args: &TrustArgs) -> Result<ExitCode, String> {
    // A trusted file may loosen every later session, strict ones too.
    aq_session::answerer::refuse_inside_session_because(
        "aq policy trust",
        "trust is the user's, given in a terminal of their own",
    )?;
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

// ---- pull, status -------------------------------------------------------------

/// `aq policy pull [SOURCE] [--key KEY]`.
pub fn run_pull(args: &crate::cli::PullArgs) -> Result<ExitCode, String> {
    use aq_session::managed_pull::{self, Pulled};
    let managed =
        policy_files::managed_file().ok_or("this platform has no place for a managed policy")?;
    match managed_pull::pull(&managed, args.source.as_deref(), args.key.as_deref())? {
        Pulled::Installed(s) => println!(
            "installed {}: serial {} from {}, signed by {} ({})",
            managed.display(),
            s.serial,
            s.source,
            s.signer,
            s.comment
        ),
        Pulled::Current(serial) => println!(
            "{} is current: serial {serial}, nothing to install",
            managed.display()
        ),
    }
    Ok(ExitCode::Ok)
}

/// `aq policy status [--json]`.
pub fn run_status(args: &crate::cli::StatusArgs) -> Result<ExitCode, String> {
    use aq_session::managed_pull;
    let managed =
        policy_files::managed_file().ok_or("this platform has no place for a managed policy")?;
    let layer = policy_files::read_managed(&managed)?;
    let status = managed_pull::read_status(&managed)?;
    let text = layer.as_ref().map(|(t, _)| t.as_bytes());
    let changed = match (&status, text) {
        (Some(s), Some(t)) => policy_files::digest(t) != s.sha256,
        _ => false,
    };
    let serial = layer
        .as_ref()
        .and_then(|(_, l)| l.managed.as_ref().and_then(|(m, _)| m.serial));
    if args.json {
        println!(
            "{}",
            json!({
                "file": managed.display().to_string(),
                "present": layer.is_some(),
                "serial": serial,
                "source": status.as_ref().map(|s| &s.source),
                "signer": status.as_ref().map(|s| &s.signer),
                "comment": status.as_ref().map(|s| &s.comment),
                "installed_unix": status.as_ref().map(|s| s.installed_unix),
                "changed_since_pull": changed,
            })
        );
        return Ok(ExitCode::Ok);
    }
    if layer.is_none() {
        println!("no managed policy: {} does not exist", managed.display());
        return Ok(ExitCode::Ok);
    }
    println!("managed policy {}", managed.display());
    match serial {
        Some(n) => println!("  serial   {n}"),
        None => println!("  serial   (none)"),
    }
    match &status {
        Some(s) => {
            println!("  source   {}", s.source);
            println!("  signer   {}", s.signer);
            println!("  comment  {}", s.comment);
            println!("  pulled   {} ago", managed_pull::age(s.installed_unix));
            if changed {
                println!("  changed since it was pulled: not what the source signed");
            }
        }
        None => println!("  source   written by hand (never pulled)"),
    }
    Ok(ExitCode::Ok)
}

/// `aq policy suggest`: the lines that would have let sessions' asks and
/// refusals run; written into the user's file with `--write`.
pub fn run_suggest(args: &SuggestArgs) -> Result<ExitCode, String> {
    use aq_session::suggest::{self, Which};
    if args.write {
        aq_session::answerer::refuse_inside_session_because(
            "aq policy suggest --write",
            "grants are the user's, made in a terminal of their own",
        )?;
    }
    let since = args
        .since
        .as_deref()
        .map(suggest::parse_since)
        .transpose()?;
    let workspace = aq_session::run::resolve_workspace(None)?;
    let which = match (args.all, args.sessions.is_empty()) {
        (true, _) => Which::All,
        (false, false) => Which::Named(args.sessions.clone()),
        (false, true) if since.is_some() => Which::AllHere(workspace.clone()),
        (false, true) => Which::LatestHere(workspace.clone()),
    };
    let plan = suggest::plan_for(&which, since, &workspace)?;
    let written = if args.write {
        suggest::write(&plan)?
    } else {
        Vec::new()
    };
    if args.json {
        let mut v = serde_json::to_value(&plan).map_err(|e| e.to_string())?;
        v["written"] = serde_json::json!(written);
        println!("{v}");
        return Ok(ExitCode::Ok);
    }
    print!("{}", plan.to_text());
    if args.write {
        for w in &written {
            println!("aq: {w}");
        }
        if written.is_empty() {
            println!(
                "aq: nothing written: {} has every line",
                plan.user_file.display()
            );
        }
    } else if plan.to_write() > 0 {
        println!(
            "nothing written: `aq policy suggest --write` (same sessions) adds these lines to {}",
            plan.user_file.display()
        );
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
        let shims: Vec<_> = layer.session.shims.iter().map(|(s, _)| s).collect();
        assert_eq!(shims, ["terraform"]);
    }
}
