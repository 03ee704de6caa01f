//! Rules that ask the capability model of programs (`aq-knowledge`) what a
//! command does, instead of matching program names: which option runs a
//! command, which mode serves files, which option names a file read, written
//! or uploaded.

use aq_knowledge::programs::{Cap, Does, Program, Takes, Via};

use super::{Ctx, cwd_before, operands};
use crate::catalog::RuleId;
use crate::paths::{self, NormPath};

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else { return };
    let mut hits: Vec<(RuleId, String)> = Vec::new();
    // A runtime or compiler given code to evaluate in a language the
    // engine does not read (`dart --eval`, `swift -e`): what it does is
    // not known, so it asks.
    // (`gcc -e SYMBOL` names the entry point.)
    let c_compiler = || {
        ["gcc", "g++", "clang", "cc", "c++", "ld"]
            .iter()
            .any(|p| name.starts_with(p))
    };
    if c.code.is_none()
        && let Some(flag) = c.args().iter().enumerate().find_map(|(k, a)| {
            let t = a.text.as_str();
            let given = matches!(t, "-e" | "--eval" | "-eval") && c.args().get(k + 1).is_some()
                || t.starts_with("--eval=");
            given.then_some(t)
        })
        && !c_compiler()
        && aq_shell::interpreter_lang(name).is_none()
        && matches!(
            aq_knowledge::programs::known_class(name),
            Some(aq_knowledge::programs::Class::Runtime | aq_knowledge::programs::Class::Compiler)
        )
    {
        hits.push((
            RuleId::ExecViaOption,
            format!(
                "`{name}` evaluates the code given in `{flag}`, in a language the rules do not read"
            ),
        ));
    }
    // Shell commands given in options (`ansible -a CMD`, `--pre-hook CMD`):
    // what they do is judged as if on the line, for blocks.
    let mut commands: Vec<(String, String)> = Vec::new();
    // A command language run through the program's own syntax: `sed e`,
    // `tmux new-session 'CMD'`.
    if let Some(j) = c.runs
        && let Some(label) = ctx.commands()[j].via.last()
        && (label == "sed e"
            || label == "ld.so"
            || label.starts_with("tmux ")
            || label == "screen -X stuff")
    {
        hits.push((
            RuleId::ExecViaOption,
            format!("`{label}` runs `{}`", ctx.commands()[j].display()),
        ));
    }
    let caps = ctx.model(i).map_or(&[][..], |p| p.caps.all());
    let texts: Vec<&str> = if caps.is_empty() {
        Vec::new()
    } else {
        c.args().iter().map(|w| w.text.as_str()).collect()
    };
    for cap in caps {
        match (cap.does, cap.via) {
            (Does::Exec, Via::Option) => {
                if let Some(e) = hidden_command(cap, name, &texts) {
                    hits.push((RuleId::ExecViaOption, e));
                }
                if cap.takes == Takes::Command {
                    commands.extend(
                        (0..texts.len())
                            .filter_map(|k| cap.option_value(&texts, k))
                            .map(|v| (v.to_string(), texts_option(&texts, cap))),
                    );
                }
            }
            // `miniserve ~`, `caddy file-server --root ~`: a server of the
            // directory it is given, given the home, `/` or a credential
            // directory (serving the project is left as it was).
            (Does::Serve, Via::Operands) => {
                if let Some(dir) = served_home(ctx, i, &texts) {
                    hits.push((
                        RuleId::NetServeHome,
                        format!("`{name}` serves `{dir}` over the network"),
                    ));
                }
            }
            (Does::Serve, Via::Args) if cap.mode_matches(&texts) => {
                if let Some(dir) = served_home(ctx, i, &texts) {
                    hits.push((
                        RuleId::NetServeHome,
                        format!("`{name}` serves `{dir}` over the network"),
                    ));
                } else {
                    hits.push((
                        RuleId::NetListener,
                        format!("`{}` serves on a port", c.display()),
                    ));
                }
            }
            _ => {}
        }
    }
    for (command, option) in commands {
        let analysis = aq_shell::analyze(&command);
        super::copy_hits(ctx, i, &format!("`{name} {option}`"), &analysis, true);
    }
    for (rule, evidence) in hits {
        let already = ctx
            .hits
            .iter()
            .any(|h| h.command == Some(i) && h.rule == super::HitRule::Builtin(rule));
        if !already {
            ctx.hit(rule, i, evidence);
        }
    }
}

/// The spelling of `cap`'s option used on the line, for evidence.
fn texts_option(texts: &[&str], cap: &Cap) -> String {
    (0..texts.len())
        .find(|&k| cap.option_value(texts, k).is_some())
        .map(|k| texts[k].split('=').next().unwrap_or(texts[k]).to_string())
        .unwrap_or_default()
}

/// The first command `cap` (an exec option) is given that is not one its
/// option ordinarily names, as evidence.
fn hidden_command(cap: &Cap, name: &str, texts: &[&str]) -> Option<String> {
    if !matches!(cap.takes, Takes::Command | Takes::Escape | Takes::Program)
        // A wrapper whose option is there to run a command (`nodemon --exec
        // CMD`, `hyperfine --prepare CMD`): that command is judged as if it
        // were on the line (aq-shell unwraps it), and is no surprise.
        || cap.usual.iter().eq(["*"])
    {
        // `-exec CMD ARGS`, `-- CMD`: the command is on the line and judged there.
        return None;
    }
    for k in 0..texts.len() {
        let Some(value) = cap.option_value(texts, k) else {
            continue;
        };
        let command = match cap.takes {
            Takes::Escape => match aq_knowledge::programs::escape_command(value) {
                Some(c) => c,
                None => continue,
            },
            _ => value.trim_start_matches('|').trim().to_string(),
        };
        if command.is_empty() {
            continue;
        }
        let first = command.split_whitespace().next().unwrap_or("");
        let program = first.rsplit('/').next().unwrap_or(first);
        if cap.usual.contains(program) {
            continue;
        }
        let option = texts[k].split('=').next().unwrap_or(texts[k]);
        return Some(format!("`{name}` runs `{command}` given in `{option}`"));
    }
    None
}

/// The home directory or `/` when a server serves it: named on the line
/// (`-d ~`, `-t /`, `--directory=$HOME`) or the directory it runs in.
fn served_home(ctx: &Ctx, i: usize, texts: &[&str]) -> Option<String> {
    let exposes = |t: &str| {
        let v = t.split_once('=').map_or(t, |(_, v)| v);
        let p = NormPath::new(v);
        (p.is_home() || p.is_root() || paths::secret_dir(v).is_some()) && !v.is_empty()
    };
    if let Some(t) = texts.iter().find(|t| exposes(t)) {
        return Some(t.to_string());
    }
    let c = &ctx.commands()[i];
    let named_dir = operands(c)
        .iter()
        .any(|w| w.text.contains('/') || w.text == ".");
    match cwd_before(ctx, i) {
        Some(dir) if !named_dir || operands(c).iter().any(|w| w.text == ".") => {
            exposes(&dir).then_some(dir)
        }
        _ => None,
    }
}

/// Files the model says `name` reads through an option (`wget -i F`,
/// `curl -K F`, `openssl enc -in F`) or, in a reading mode, as operands
/// (`git diff --no-index A B`).
pub(crate) fn read_files(p: Option<&Program>, texts: &[&str], ops: &[&str]) -> Vec<String> {
    files_by(p, Does::Read, texts, ops)
}

/// Files the model says `name` uploads through an option.
pub(crate) fn uploaded_files(p: Option<&Program>, texts: &[&str]) -> Vec<String> {
    files_by(p, Does::Upload, texts, &[])
}

/// Files the model says `name` writes through an option (`sort -o F`,
/// `find -fprintf F`, `time -o F`).
pub(crate) fn written_files(p: Option<&Program>, texts: &[&str]) -> Vec<String> {
    files_by(p, Does::Write, texts, &[])
}

/// Whether the model knows `name` to read, write or upload through an
/// option or a mode (so the callers build argument lists only then).
pub(crate) fn names_files(p: Option<&Program>, does: Does) -> bool {
    p.is_some_and(|p| {
        p.caps(does)
            .any(|c| c.via == Via::Args || (c.via == Via::Option && c.takes == Takes::File))
    })
}

fn files_by(p: Option<&Program>, does: Does, texts: &[&str], ops: &[&str]) -> Vec<String> {
    let Some(program) = p else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for cap in program.caps(does) {
        match cap.via {
            Via::Option if cap.takes == Takes::File => {
                for k in 0..texts.len() {
                    if let Some(v) = cap.option_value(texts, k) {
                        out.push(v.to_string());
                    }
                }
            }
            Via::Args if cap.mode_matches(texts) => {
                out.extend(ops.iter().map(|s| s.to_string()));
            }
            _ => {}
        }
    }
    out
}
