//! Commands hidden in data that bash evaluates as code (`aq-shell` finds
//! them: [`aq_shell::Evaluated`]). The commands themselves are judged by
//! every other rule, as commands of the line; here the hiding place asks,
//! as `eval` does, and so does data only known at run time that bash
//! evaluates, unless it comes from a program that prints nothing a
//! repository or a remote host could choose (`wc -l`, `date +%s`).

use aq_shell::{Command, EvalKind, Input};

use super::{Ctx, has_flag};
use crate::catalog::RuleId;

/// Programs whose output is a count or a fact of this machine, never text
/// a file or a host could choose: evaluated as arithmetic, it runs
/// nothing. (`grep -c` and `git rev-list --count` are added in
/// [`prints_only_numbers`].)
const NUMBER_PRINTERS: &[&str] = &[
    "date", "du", "expr", "getconf", "id", "nproc", "seq", "stat", "tput", "wc",
];

pub(crate) fn check_line(ctx: &mut Ctx) {
    for e in &ctx.analysis.evaluated {
        if let Some(&first) = e.commands.first() {
            let what = ctx.commands()[first].display();
            ctx.hit(
                RuleId::ExecHiddenCode,
                first,
                format!("bash runs `{what}` hidden in {}", place(&e.context)),
            );
            continue;
        }
        if !e.unknown {
            continue;
        }
        if e.kind == EvalKind::Reference {
            ctx.hit_line(
                RuleId::ExecHiddenCode,
                format!(
                    "a variable is assigned through a reference to `{}`, only known at run time: it could be any variable (PATH, LD_PRELOAD)",
                    e.text.text
                ),
            );
            continue;
        }
        if e.text.feeds.is_empty() {
            // Not a command's output: the arguments of a function or of
            // `bash -c` (`f 'a[$(cmd)]'` with `(( $1 ))` inside).
            ctx.hit_line(
                RuleId::ExecHiddenCode,
                format!(
                    "the arguments `{}` stand for are evaluated in {}, and the line gives text with substitutions that could be among them",
                    e.text.text,
                    place(&e.context)
                ),
            );
            continue;
        }
        match e.kind {
            EvalKind::Arithmetic => {
                let outputs = output_commands(ctx, &e.text.feeds);
                if let Some(&s) = outputs
                    .iter()
                    .find(|&&s| !prints_only_numbers(&ctx.commands()[s]))
                {
                    let what = ctx.commands()[s].display();
                    ctx.hit(
                        RuleId::ExecHiddenCode,
                        s,
                        format!(
                            "what `{what}` gives is evaluated in {}: a subscript in it would run",
                            place(&e.context)
                        ),
                    );
                }
            }
            EvalKind::Prompt | EvalKind::Words => {
                let s = e.text.feeds[0];
                let what = ctx
                    .commands()
                    .get(s)
                    .map(|c| c.display())
                    .unwrap_or_default();
                ctx.hit(
                    RuleId::ExecHiddenCode,
                    s,
                    format!(
                        "what `{what}` gives is expanded again in {}, which runs its substitutions",
                        place(&e.context)
                    ),
                );
            }
            EvalKind::Reference => {}
        }
    }
}

/// Where the code hides, for a person.
fn place(context: &str) -> String {
    match context {
        "arithmetic" => "an arithmetic expression".to_string(),
        "${x@P}" | "PS0" | "PS1" | "PS2" | "PS4" => format!("a prompt string (`{context}`)"),
        "declare -n" => "the target of a reference (`declare -n`)".to_string(),
        c if c.ends_with(" -a") => format!("the words of an array assignment (`{c}`)"),
        other => format!("the variable name given to `{other}`"),
    }
}

/// Of the commands whose output is spliced into a word (`feeds`), those
/// whose output is what comes out: not the ones piped into another of them.
fn output_commands(ctx: &Ctx, feeds: &[usize]) -> Vec<usize> {
    let commands = ctx.commands();
    feeds
        .iter()
        .copied()
        .filter(|&f| f < commands.len())
        .filter(|&f| {
            !feeds.iter().any(|&g| {
                g < commands.len()
                    && (commands[g].stdin.contains(&Input::Pipe(f))
                        || commands[g].argv.iter().any(|w| w.feeds.contains(&f)))
            })
        })
        .collect()
}

/// Whether a command prints only numbers or facts of this machine (see
/// [`NUMBER_PRINTERS`]), or only text written on the line.
fn prints_only_numbers(c: &Command) -> bool {
    let Some(name) = c.program() else {
        return false;
    };
    match name {
        "echo" | "printf" => c.args().iter().all(|w| !w.dynamic),
        "grep" | "egrep" | "fgrep" | "rg" => has_flag(c, Some('c'), &["count"]),
        "git" => {
            c.args().iter().any(|a| a.text == "rev-list")
                && c.args().iter().any(|a| a.text == "--count")
        }
        _ => NUMBER_PRINTERS.contains(&name),
    }
}
