//! `aq report` and `aq audit`: reading session logs back.

use std::io::BufReader;
use std::path::Path;

use aq_audit::Summary;

use crate::cli::{AuditArgs, AuditCommand, AuditSummaryArgs, ReportArgs, ReportFormat};
use crate::exit::ExitCode;
use aq_session as session;

fn summary_of(log: &Path) -> Result<Summary, String> {
    let f = std::fs::File::open(log).map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    Summary::from_reader(BufReader::new(f))
        .map_err(|e| format!("cannot read {}: {e}", log.display()))
}

pub fn run_report(args: &ReportArgs) -> Result<ExitCode, String> {
    let log = match (&args.session, args.latest) {
        (Some(s), _) => session::resolve_log(s)?,
        (None, _) => session::latest_log()?,
    };
    let summary = summary_of(&log)?;
    if args.open {
        if args.format.is_some_and(|f| f != ReportFormat::Html) {
            return Err(
                "--open writes the HTML report: leave out --format or use --format html".into(),
            );
        }
        let path = log.with_file_name("report.html");
        std::fs::write(&path, summary.to_html())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("{}", path.display());
        open_in_browser(&path);
        return Ok(ExitCode::Ok);
    }
    match args.format.unwrap_or(ReportFormat::Md) {
        ReportFormat::Md => print!("{}", summary.to_markdown()),
        ReportFormat::Json => println!("{}", summary.to_json().map_err(|e| e.to_string())?),
        ReportFormat::Html => print!("{}", summary.to_html()),
    }
    Ok(ExitCode::Ok)
}

/// Hands the page to the desktop's browser, when there is a desktop: on a
/// server or over ssh the printed path is the answer.
fn open_in_browser(path: &Path) {
    let desktop = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    if !desktop {
        return;
    }
    let _ = std::process::Command::new("xdg-open")
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

pub fn run_audit(args: &AuditArgs) -> Result<ExitCode, String> {
    match &args.command {
        None => {
            let log = session::latest_log()?;
            print!("{}", summary_of(&log)?.recap());
            Ok(ExitCode::Ok)
        }
        Some(AuditCommand::List) => {
            for dir in session::list().map_err(|e| format!("cannot list sessions: {e}"))? {
                let id = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let (cmd, live) = match session::read_file(&dir) {
                    Ok(f) => (
                        aq_audit::redact_argv(&f.command).join(" "),
                        session::pid_alive(f.supervisor_pid),
                    ),
                    Err(_) => (String::new(), false),
                };
                let counts = summary_of(&session::log_path(&dir))
                    .map(|s| s.recap().lines().next().unwrap_or("").to_string())
                    .unwrap_or_default();
                println!(
                    "{id}{}  {cmd}  {counts}",
                    if live { " (running)" } else { "" }
                );
            }
            Ok(ExitCode::Ok)
        }
        Some(AuditCommand::Verify { session: what }) => {
            let log = session::resolve_log(what)?;
            let f = std::fs::File::open(&log)
                .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
            let report = aq_audit::verify(BufReader::new(f))
                .map_err(|e| format!("cannot read {}: {e}", log.display()))?;
            println!("{}: {report}", log.display());
            if let Some(caveat) = report.caveat() {
                println!("{caveat}");
            }
            Ok(if report.ok {
                ExitCode::Ok
            } else {
                ExitCode::Findings
            })
        }
        Some(AuditCommand::Export(args)) => crate::export_cmd::run(args),
        Some(AuditCommand::Summary(args)) => run_summary(args),
    }
}

/// `aq audit summary`: figures across sessions (this workspace's, or
/// every one on this machine with `--all`).
fn run_summary(args: &AuditSummaryArgs) -> Result<ExitCode, String> {
    use aq_session::suggest::{self, Which};
    let since = args
        .since
        .as_deref()
        .map(suggest::parse_since)
        .transpose()?;
    let which = if args.all {
        Which::All
    } else {
        Which::AllHere(session::run::resolve_workspace(None)?)
    };
    let view = suggest::team_view(&suggest::choose(&which, since)?)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&view).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", view.to_text());
    }
    Ok(ExitCode::Ok)
}
