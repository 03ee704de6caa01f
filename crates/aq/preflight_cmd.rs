//! `aq preflight [PATH]`: scan a repository before an agent touches it, and
//! print the findings as text, JSON or SARIF 2.1.0.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use aq_preflight::{DETECTORS, Finding, Options, Report, Severity};
use serde_json::{Value, json};

use crate::cli::{FailOn, PreflightArgs, PreflightFormat};
use crate::exit::ExitCode;

/// Trees of at least this many files get a progress bar (on a terminal).
const PROGRESS_FROM: usize = 2000;

/// A progress bar on stderr, when stderr is a terminal and the output is
/// text: never in JSON or SARIF, never in a pipe or a log.
fn progress_bar(format: &PreflightFormat) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if *format != PreflightFormat::Text || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        None,
        indicatif::ProgressDrawTarget::stderr_with_hz(10),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template("aq preflight: {bar:30} {pos}/{len} files")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// Scans, prints, and maps the worst finding to an exit code. What scripts
/// and hooks would run is judged with the user's effective policy (their
/// file, `--policy`, and the scanned repository's own file, which can only
/// tighten), as `aq run` in that repository would judge it.
pub fn run(args: &PreflightArgs, policy_flag: Option<&Path>) -> ExitCode {
    let root = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let mut project_problem = None;
    let policy = match std::fs::canonicalize(&root) {
        // The scanned repository's own policy file cannot switch the scan
        // off: when it is what fails to load, the user's policy alone judges
        // (the file itself is reported as a finding, with its line).
        Ok(dir) => match aq_session::policy_files::load_for(&dir, policy_flag) {
            Ok(loaded) => loaded.effective.policy,
            Err(problem) => match aq_session::policy_files::load_for_user(&dir, policy_flag) {
                Ok(loaded) => {
                    project_problem = Some(problem.to_string());
                    loaded.effective.policy
                }
                Err(e) => {
                    eprintln!("aq preflight: {e}");
                    return ExitCode::PreflightUsage;
                }
            },
        },
        // A missing root is reported by the scan below.
        Err(_) => aq_policy::Policy::default(),
    };
    let bar = progress_bar(&args.format);
    let options = Options {
        home: std::env::var_os("HOME").map(PathBuf::from),
        engine: aq_policy::Engine::new(policy),
        progress: bar.clone().map(|b| {
            aq_preflight::Progress(std::sync::Arc::new(move |done: usize, total: usize| {
                // Only trees big enough to wait for get a bar.
                if total >= PROGRESS_FROM {
                    b.set_length(total as u64);
                    b.set_position(done as u64);
                }
            }))
        }),
    };
    let scanned = aq_preflight::scan(&root, &options);
    if let Some(b) = bar
        && !b.is_hidden()
        && b.length().is_some()
    {
        b.finish();
    }
    let mut report = match scanned {
        Ok(r) => r,
        Err(e) => {
            eprintln!("aq preflight: {e}");
            eprintln!("Usage: aq preflight [PATH] [--format text|json|sarif] [--fail-on SEVERITY]");
            return ExitCode::PreflightUsage;
        }
    };
    // A project file the scan could not read as text (not UTF-8, say) is
    // still one aq refuses to start with: reported here.
    if let Some(problem) = project_problem {
        let file = aq_session::policy_files::PROJECT_FILE;
        if !report
            .findings
            .iter()
            .any(|f| f.id == "agent-policy-invalid" && f.path == file)
        {
            let first = problem.lines().next().unwrap_or_default();
            report
                .findings
                .push(aq_preflight::invalid_policy(file, 0, first));
        }
    }
    let out = match args.format {
        PreflightFormat::Text => render_text(&report),
        PreflightFormat::Json => pretty(&json!({
            "version": 1,
            "root": report.root,
            "files": report.files,
            "elapsed_ms": report.elapsed.as_millis() as u64,
            "counts": counts_json(&report),
            "skipped_dirs": report.skipped_dirs,
            "truncated": report.truncated,
            "errors": report.errors,
            "findings": report.findings,
        })),
        PreflightFormat::Sarif => pretty(&render_sarif(&report, &root)),
    };
    print!("{out}");
    warn_unchecked_sessions(&root);
    let threshold = args.fail_on.map(|f| match f {
        FailOn::Low => Severity::Low,
        FailOn::Medium => Severity::Medium,
        FailOn::High => Severity::High,
        FailOn::Critical => Severity::Critical,
    });
    match (threshold, report.worst()) {
        (Some(t), Some(w)) if w >= t => ExitCode::PreflightFindings,
        _ => ExitCode::Ok,
    }
}

/// Sessions in this workspace whose supervisor was killed before their git
/// check: what they wrote to git files is in the findings above (git would
/// run it now); the next `aq run` here puts it aside.
fn warn_unchecked_sessions(root: &Path) {
    let Ok(dir) = std::fs::canonicalize(root) else {
        return;
    };
    for s in aq_session::git_guard::pending_sessions(&dir) {
        let id = s.file_name().unwrap_or_default().to_string_lossy();
        eprintln!(
            "aq preflight: session {id} in this workspace ended without its git check (its supervisor was killed): git files it wrote are among the findings; the next `aq run` here puts aside those that run a program"
        );
    }
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn counts_json(report: &Report) -> Value {
    let c = report.counts();
    json!({"critical": c[3], "high": c[2], "medium": c[1], "low": c[0]})
}

/// Findings grouped by severity, most severe first, then a one-line summary.
pub fn render_text(report: &Report) -> String {
    let mut s = String::new();
    for sev in Severity::ALL.iter().rev() {
        let group: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| f.severity == *sev)
            .collect();
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(s, "{} ({})", sev.as_str().to_uppercase(), group.len());
        for f in group {
            let at = if f.line > 0 {
                format!("{}:{}", f.path, f.line)
            } else {
                f.path.clone()
            };
            let _ = writeln!(s, "  {at}  {}  [{}]", f.title, f.id);
            if !f.evidence.is_empty() {
                let _ = writeln!(s, "      found: {}", f.evidence);
            }
            let _ = writeln!(s, "      why:   {}", f.why);
            let _ = writeln!(s, "      fix:   {}", f.fix);
        }
        s.push('\n');
    }
    let c = report.counts();
    let _ = writeln!(
        s,
        "aq preflight: {} finding{} ({} critical, {} high, {} medium, {} low) in {} files, {:.2} s{}",
        report.findings.len(),
        if report.findings.len() == 1 { "" } else { "s" },
        c[3],
        c[2],
        c[1],
        c[0],
        report.files,
        report.elapsed.as_secs_f64(),
        if report.skipped_dirs.is_empty() {
            String::new()
        } else {
            format!("; contents skipped: {}", report.skipped_dirs.len())
        },
    );
    s
}

/// SARIF 2.1.0: one run, every detector as a rule, one result per finding.
pub fn render_sarif(report: &Report, root: &Path) -> Value {
    let rules: Vec<Value> = DETECTORS
        .iter()
        .map(|d| {
            json!({
                "id": d.id,
                "name": d.id,
                "shortDescription": {"text": d.title},
                "fullDescription": {"text": d.why},
                "help": {"text": format!("{} {}", d.why, d.fix)},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let level = match f.severity {
                Severity::Critical | Severity::High => "error",
                Severity::Medium => "warning",
                Severity::Low => "note",
            };
            let mut location = json!({
                "physicalLocation": {
                    "artifactLocation": {"uri": f.path, "uriBaseId": "SRCROOT"},
                }
            });
            if f.line > 0 {
                location["physicalLocation"]["region"] = json!({"startLine": f.line});
            }
            json!({
                "ruleId": f.id,
                "ruleIndex": DETECTORS.iter().position(|d| d.id == f.id),
                "level": level,
                "message": {"text": format!("{}: {}. Fix: {}", f.title, f.evidence, f.fix)},
                "locations": [location],
                "properties": {"severity": f.severity.as_str()},
            })
        })
        .collect();
    let base = root
        .canonicalize()
        .map(|p| format!("file://{}/", p.display()))
        .unwrap_or_default();
    json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "agent-quarantine",
                "informationUri": "https://example.invalid/agent-quarantine",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "originalUriBaseIds": {"SRCROOT": {"uri": base}},
            "results": results,
        }],
    })
}
