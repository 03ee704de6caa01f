//! `aq checkpoints`, `aq diff`, `aq undo`: the workspace's checkpoints
//! (docs/undo.md). The store is `aq_undo`; choosing a checkpoint and
//! showing a plan are `aq_session::checkpoints`.

use std::io::{IsTerminal, Write};
use std::path::Path;

use aq_session::checkpoints::{self as cp, Target};

use crate::cli::{CheckpointsArgs, DiffArgs, UndoArgs, WorkspaceArg};
use crate::exit::ExitCode;

/// The workspace's store, opened for reading and undoing.
fn open(arg: &WorkspaceArg) -> Result<aq_undo::Store, String> {
    let workspace = aq_session::run::resolve_workspace(arg.workspace.as_deref())?;
    cp::open_store(&workspace).map_err(|e| e.to_string())
}

fn options(workspace: &Path, policy: Option<&Path>) -> Result<aq_undo::Options, String> {
    let loaded = aq_session::policy_files::load_for(workspace, policy)?;
    Ok(cp::options(&loaded.effective.undo))
}

fn listing(store: &aq_undo::Store) -> Result<aq_undo::Listing, String> {
    let listing = store.list().map_err(|e| e.to_string())?;
    for t in &listing.torn {
        eprintln!("aq: note: skipped a checkpoint that is not whole: {t}");
    }
    Ok(listing)
}

pub fn run_checkpoints(args: &CheckpointsArgs, _policy: Option<&Path>) -> Result<ExitCode, String> {
    let store = open(&args.workspace)?;
    let listing = listing(&store)?;
    let session = match (&args.session, args.latest) {
        (Some(prefix), _) => Some(cp::session_named(&listing, prefix)?),
        (None, true) => cp::latest_session(&listing),
        (None, false) => None,
    };
    let shown: Vec<&aq_undo::Checkpoint> = listing
        .checkpoints
        .iter()
        .filter(|c| session.is_none() || c.session == session)
        .collect();
    if args.json {
        let json = serde_json::to_string_pretty(&shown).map_err(|e| e.to_string())?;
        println!("{json}");
    } else if shown.is_empty() {
        println!(
            "no checkpoints of {} yet: `aq run` sessions and agent hooks take them",
            store.workspace().display()
        );
    } else {
        print!("{}", cp::table(&shown));
    }
    Ok(ExitCode::Ok)
}

pub fn run_diff(args: &DiffArgs, policy: Option<&Path>) -> Result<ExitCode, String> {
    let store = open(&args.workspace)?;
    let listing = listing(&store)?;
    let target = match (&args.checkpoint, &args.session) {
        (Some(c), _) => Target::Checkpoint(c),
        (None, Some(s)) => Target::Session(s),
        (None, None) => Target::LatestSession,
    };
    let from = cp::choose(&store, &listing, target)?;
    let opts = options(store.workspace(), policy)?;
    let changes = store
        .diff(&from.id, None, &opts)
        .map_err(|e| e.to_string())?;
    if changes.is_empty() {
        eprintln!(
            "aq: nothing changed since checkpoint {} ({})",
            from.id,
            cp::time_of(from)
        );
        return Ok(ExitCode::Ok);
    }
    let text = store
        .render(&changes, args.stat)
        .map_err(|e| e.to_string())?;
    print!("{text}");
    Ok(ExitCode::Ok)
}

/// `aq __prune-checkpoints`: what `prune_in_background` starts.
pub fn run_prune(args: &WorkspaceArg, policy: Option<&Path>) -> Result<ExitCode, String> {
    let store = open(args)?;
    let loaded = aq_session::policy_files::load_for(store.workspace(), policy)?;
    store
        .prune(&cp::retention(&loaded.effective.undo))
        .map_err(|e| e.to_string())?;
    Ok(ExitCode::Ok)
}

pub fn run_undo(args: &UndoArgs, policy: Option<&Path>) -> Result<ExitCode, String> {
    aq_session::answerer::refuse_inside_session_because(
        "aq undo",
        "only the user puts the workspace back, from a terminal of their own",
    )?;
    let store = open(&args.workspace)?;
    let opts = options(store.workspace(), policy)?;
    let interrupted = store.interrupted().map_err(|e| e.to_string())?;
    let listing = listing(&store)?;
    let target = match (&args.to, &args.session, &interrupted) {
        (Some(c), _, _) => Target::Checkpoint(c),
        (None, Some(s), _) => Target::Session(s),
        (None, None, Some(j)) => {
            eprintln!(
                "aq: an undo to checkpoint {} did not finish; finishing it (`aq undo --to {}` instead puts back the state before it)",
                j.target, j.before
            );
            Target::Checkpoint(&j.target.0)
        }
        (None, None, None) => Target::LatestSession,
    };
    let to = cp::choose(&store, &listing, target)?;
    let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let paths = cp::workspace_paths(store.workspace(), &cwd, &args.path)?;
    let mut plan = store
        .plan_undo(&to.id, &paths, &opts)
        .map_err(|e| e.to_string())?;
    // Files the agent made unreadable (`chmod 000`): readable again, then
    // planned again, so that they are kept before and restored after.
    let unlocked = cp::readable_again(store.workspace(), &plan);
    if !unlocked.is_empty() {
        eprintln!(
            "aq: {} file(s) had no read permission for you; given it back so they can be restored",
            unlocked.len()
        );
        plan = store
            .plan_undo(&to.id, &paths, &opts)
            .map_err(|e| e.to_string())?;
    }
    let when = cp::time_of(to);
    if plan.changes.is_empty()
        && plan.refs.is_empty()
        && !plan.index
        && plan.not_restorable.is_empty()
    {
        println!(
            "nothing to undo: {} is as it was at checkpoint {} ({when})",
            if paths.is_empty() {
                "the workspace".to_string()
            } else {
                "that path".to_string()
            },
            to.id
        );
        return Ok(ExitCode::Ok);
    }
    println!(
        "aq undo: back to checkpoint {} ({when}{}) in {}:",
        to.id,
        to.session
            .as_deref()
            .map(|s| format!(", session {s}"))
            .unwrap_or_default(),
        store.workspace().display()
    );
    print!("{}", cp::plan_text(&plan, 200));
    if !args.yes {
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            return Err(
                "aq undo changes the workspace and asks first, but there is no terminal to ask on; run it again with --yes to go ahead"
                    .to_string(),
            );
        }
        eprint!("Put these back? A checkpoint of the current state is taken first. [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        std::io::stdin()
            .read_line(&mut answer)
            .map_err(|e| format!("cannot read the answer: {e}"))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            println!("nothing changed");
            return Ok(ExitCode::Ok);
        }
    }
    let report = store.undo(&plan, &opts).map_err(|e| e.to_string())?;
    println!(
        "restored {} file(s), removed {}, {} ref(s); `aq undo --to {}` undoes this undo",
        report.restored, report.removed, report.refs, report.before
    );
    for n in &report.not_restorable {
        println!(
            "not restored: {} ({})",
            aq_audit::inert::inert(&n.path.display().to_string()),
            n.why
        );
    }
    Ok(if report.not_restorable.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}
