//! `aq allow`, `aq deny`, `aq grants`: one-line changes to the user's policy
//! file ([`aq_policy::grants`] makes the edit). The file is backed up
//! (`policy.toml.bak`), the new text checked as a policy before it is
//! written, and written whole with a rename, so a failure leaves the old
//! file. Refused inside a session: grants come from the user.

use aq_policy::grants::{self, Change, Grant, Target};
use aq_session::in_force;

use crate::cli::GrantArgs;
use crate::exit::ExitCode;

pub fn run(args: &GrantArgs, allow: bool) -> Result<ExitCode, String> {
    let verb = if allow { "aq allow" } else { "aq deny" };
    // The variable, or a live session among this process's ancestors:
    // without a sandbox (`shims-only`) the agent can unset the variable.
    aq_session::answerer::refuse_inside_session_because(
        verb,
        "grants are the user's, made in a terminal of their own",
    )?;
    if args.read_only && !(allow && args.path.is_some()) {
        return Err("--read-only goes with `aq allow PATH`".to_string());
    }
    if args.here && !(allow && args.path.is_some()) {
        return Err("--here goes with `aq allow PATH`".to_string());
    }
    aq_session::policy_files::user_file().ok_or_else(|| {
        "cannot tell where your policy file is: set XDG_CONFIG_HOME or HOME".to_string()
    })?;
    let cwd = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|h| h.is_absolute());
    let target = match (&args.path, &args.net, &args.command) {
        (Some(p), None, None) => {
            let path = grants::normalize_path(p, &cwd, home.as_deref())?;
            if !args.remove
                && let Some(why) = grants::refuse_path(&path, allow)
            {
                return Err(format!("refused: {why}"));
            }
            Target::Path(path)
        }
        (None, Some(host), None) if !args.methods.is_empty() => {
            check_host(host)?;
            if host.contains([':', '*']) || !allow {
                return Err(
                    "--methods goes with `aq allow --net HOST`: one host name, without a port or `*.`"
                        .to_string(),
                );
            }
            let methods: Vec<String> = args
                .methods
                .iter()
                .map(|m| m.trim().to_ascii_uppercase())
                .collect();
            if methods
                .iter()
                .any(|m| m.is_empty() || !m.bytes().all(|b| b.is_ascii_uppercase()))
            {
                return Err(format!(
                    "--methods {}: write HTTP methods, like GET,HEAD",
                    args.methods.join(",")
                ));
            }
            if let Some(p) = args
                .path_prefix
                .iter()
                .find(|p| !p.starts_with('/') || p.contains(['?', '#', ' ']))
            {
                return Err(format!(
                    "--path {p}: write a path prefix that starts with `/`, like /v1/"
                ));
            }
            Target::NetHttp {
                host: host.to_ascii_lowercase(),
                methods,
                paths: args.path_prefix.clone(),
            }
        }
        (None, Some(host), None) => {
            check_host(host)?;
            Target::Net(host.to_ascii_lowercase())
        }
        (None, None, Some(words)) => {
            let mut w = words.split_whitespace();
            let (Some(program), subcommand, None) = (w.next(), w.next(), w.next()) else {
                return Err(
                    "--command takes a program and at most one subcommand, like 'terraform plan'"
                        .to_string(),
                );
            };
            Target::Command {
                program: program.to_string(),
                subcommand: subcommand.map(String::from),
            }
        }
        _ => return Err(format!("aq {verb}: name one PATH, --net HOST or --command")),
    };
    let workspace = aq_session::run::resolve_workspace(None)?;
    let loaded = aq_session::policy_files::load_for(&workspace, None)?;
    let profile = in_force::profile_named(&loaded.effective, args.profile.as_deref())?.name;
    let grant = Grant {
        allow,
        read_only: args.read_only,
        target,
        profile,
        here: args.here.then(|| workspace.display().to_string()),
    };
    let applied = aq_session::user_grants::apply(&grant, args.remove)?;
    let shown = applied.file.display();
    let change = applied.change;
    match &change {
        Change::AlreadyThere(what) => {
            println!("aq: {what} already ({shown})");
            return Ok(ExitCode::Ok);
        }
        Change::NotThere(what) => {
            println!("aq: nothing to remove: no {what} ({shown})");
            return Ok(ExitCode::Ok);
        }
        Change::Added(_) | Change::Removed(_) => {}
    }
    let backup = applied
        .backup
        .map(|b| format!("; the file before: {}", b.display()))
        .unwrap_or_default();
    match change {
        Change::Added(what) => println!("aq: added {what} ({shown}{backup})"),
        Change::Removed(what) => println!("aq: removed {what} ({shown}{backup})"),
        _ => {}
    }
    if let (true, Target::Path(p)) = (allow && !args.remove, &grant.target) {
        let inside = workspace.to_string_lossy();
        if p.starts_with(inside.as_ref()) {
            println!(
                "aq: note: {p} is inside this workspace, which sessions here may already write"
            );
        } else if !args.here {
            println!(
                "aq: note: this grant holds for every workspace; `--here` limits it to sessions of {}",
                workspace.display()
            );
        }
    }
    Ok(ExitCode::Ok)
}

/// `aq grants`.
pub fn run_list() -> Result<ExitCode, String> {
    let file = aq_session::policy_files::user_file().ok_or_else(|| {
        "cannot tell where your policy file is: set XDG_CONFIG_HOME or HOME".to_string()
    })?;
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let listed = grants::list(&text)?;
    if listed.is_empty() {
        println!("no grants in {}", file.display());
        return Ok(ExitCode::Ok);
    }
    println!("grants in {}:", file.display());
    let width = listed.iter().map(|l| l.line.len()).max().unwrap_or(0);
    for l in listed {
        println!("  {:<width$}  # {}", l.line, l.place);
    }
    Ok(ExitCode::Ok)
}

/// A host as the allowlist takes it: a name (`*.` for subdomains) or an
/// address, with an optional port; `*` alone and empty names are refused.
fn check_host(host: &str) -> Result<(), String> {
    let name = match host.rsplit_once(':') {
        Some((n, port)) if !n.contains(':') => {
            port.parse::<u16>()
                .map_err(|_| format!("`{host}`: the port must be a number"))?;
            n
        }
        _ => host,
    };
    let bare = name.strip_prefix("*.").unwrap_or(name);
    if bare.is_empty()
        || bare.contains('*')
        || !bare
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    {
        return Err(format!(
            "`{host}` is not a host name: write `example.com`, `*.example.com` or `example.com:443`"
        ));
    }
    Ok(())
}
