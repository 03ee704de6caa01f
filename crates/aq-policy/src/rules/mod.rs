//! The rule checks. Each family module looks at one command at a time (with
//! the whole line for context: pipes, substitutions, earlier downloads) and
//! reports hits; `run` adds the line-level checks and the custom rules.

mod code;
mod env;
mod exec;
mod files;
mod guard;
mod hidden;
mod net;
pub(crate) mod platforms;
mod programs;
mod secrets;
mod sql;
mod tasks;
mod tool_config;
mod tools;
mod tree_search;
pub(crate) mod written;

use aq_shell::{Analysis, Command, Input, ProblemKind, Word};

use crate::catalog::RuleId;
use crate::decision::Decision;
use crate::paths;
use crate::policy::{CommandMatcher, Policy};

/// Whether the rules know this program: `programs.toml` entries with a
/// class, `names.toml`, the shells and interpreters aq-shell reads.
pub(crate) fn is_known_program(name: &str) -> bool {
    aq_knowledge::programs::known_class(name).is_some()
        || aq_shell::is_shell(name)
        || aq_shell::interpreter_lang(name).is_some()
}

/// Which rule fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HitRule {
    Builtin(RuleId),
    /// Index into the policy's custom rules.
    Custom(usize),
}

/// A rule that fired, on which command, and why.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub rule: HitRule,
    pub command: Option<usize>,
    pub evidence: String,
}

/// What the checks can see.
pub(crate) struct Ctx<'a> {
    pub(crate) analysis: &'a Analysis,
    pub policy: &'a Policy,
    hits: Vec<Hit>,
    /// Each command's entry in the capability model, looked up once.
    models: Vec<Option<&'static aq_knowledge::programs::Program>>,
}

impl<'a> Ctx<'a> {
    /// What the capability model knows about command `i`'s program.
    pub(crate) fn model(&self, i: usize) -> Option<&'static aq_knowledge::programs::Program> {
        self.models.get(i).copied().flatten()
    }

    pub(crate) fn commands(&self) -> &'a [Command] {
        &self.analysis.commands
    }

    pub(crate) fn hit(&mut self, rule: RuleId, command: usize, evidence: impl Into<String>) {
        self.hits.push(Hit {
            rule: HitRule::Builtin(rule),
            command: Some(command),
            evidence: evidence.into(),
        });
    }

    pub(crate) fn hit_line(&mut self, rule: RuleId, evidence: impl Into<String>) {
        self.hits.push(Hit {
            rule: HitRule::Builtin(rule),
            command: None,
            evidence: evidence.into(),
        });
    }

    /// The built-in rules that fired on `command` so far.
    pub(crate) fn hits_on(&self, command: usize) -> impl Iterator<Item = RuleId> + '_ {
        self.hits.iter().filter_map(move |h| match h.rule {
            HitRule::Builtin(id) if h.command == Some(command) => Some(id),
            _ => None,
        })
    }

    pub(crate) fn fired_on(&self, command: usize) -> bool {
        self.hits.iter().any(|h| h.command == Some(command))
    }

    /// Commands whose output reaches `i`'s stdin, through pipes, transitively.
    pub(crate) fn upstream(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut todo: Vec<usize> = self.commands()[i]
            .stdin
            .iter()
            .filter_map(|s| {
                if let Input::Pipe(p) = s {
                    Some(*p)
                } else {
                    None
                }
            })
            .collect();
        while let Some(p) = todo.pop() {
            if out.contains(&p) || out.len() > 256 {
                continue;
            }
            out.push(p);
            let c = &self.commands()[p];
            todo.extend(c.stdin.iter().filter_map(|s| {
                if let Input::Pipe(q) = s {
                    Some(*q)
                } else {
                    None
                }
            }));
            // What a command prints can come from its substitutions too.
            for w in &c.argv {
                todo.extend(w.feeds.iter().copied());
            }
            if let Some(r) = c.runs {
                todo.push(r);
            }
        }
        out
    }

    /// Commands whose output ends up in `word`, transitively.
    pub(crate) fn word_sources(&self, word: &Word) -> Vec<usize> {
        let mut out = Vec::new();
        for &f in &word.feeds {
            if f < self.commands().len() && !out.contains(&f) {
                out.push(f);
                out.extend(self.upstream(f));
            }
        }
        out
    }

    /// Whether any of `sources` (or what they wrap) satisfies `pred`.
    pub(crate) fn any_source(
        &self,
        sources: &[usize],
        pred: impl Fn(&Command) -> bool,
    ) -> Option<usize> {
        sources.iter().copied().find(|&s| {
            let mut at = Some(s);
            let mut steps = 0;
            while let Some(i) = at {
                let c = &self.commands()[i];
                if pred(c) {
                    return true;
                }
                at = c.runs;
                steps += 1;
                if steps > 32 {
                    break;
                }
            }
            false
        })
    }

    /// Commands that read `i`'s output through a pipe.
    pub(crate) fn downstream(&self, i: usize) -> Vec<usize> {
        self.commands()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.stdin.contains(&Input::Pipe(i)))
            .map(|(j, _)| j)
            .collect()
    }

    /// Whether command `f` was found reading a secret (by a rule that
    /// already fired on it).
    pub(crate) fn read_a_secret(&self, f: usize) -> bool {
        self.hits.iter().any(|h| {
            h.command == Some(f)
                && matches!(
                    h.rule,
                    HitRule::Builtin(
                        RuleId::SecretRead
                            | RuleId::SecretEnvPrint
                            | RuleId::SecretCopy
                            | RuleId::PlatformSecretRead
                    )
                )
        })
    }

    /// Whether a path is a credential file, built in or from the policy,
    /// unless the user's policy passed it back (`[paths] unmasked`).
    pub(crate) fn secret_kind(&self, path: &str) -> Option<String> {
        // Most policies list no paths of their own: then the built-in
        // answer stands, and the path need not be normalized twice.
        if self.policy.unmasked_paths.is_empty() && self.policy.sensitive_paths.is_empty() {
            return paths::secret_kind(path);
        }
        let p = paths::NormPath::new(path);
        if self
            .policy
            .unmasked_paths
            .iter()
            .any(|u| paths::unmask_covers(u, &p))
        {
            return None;
        }
        if let Some(k) = paths::secret_kind(path) {
            return Some(k);
        }
        let normalized = p.display();
        self.policy
            .sensitive_paths
            .iter()
            .find(|pat| paths::glob_match(pat, &normalized) || paths::glob_match(pat, p.name()))
            .map(|pat| format!("a sensitive path of the policy ({pat})"))
    }
}

/// Runs every rule over an analysis.
pub(crate) fn run(analysis: &Analysis, policy: &Policy) -> Vec<Hit> {
    let mut ctx = Ctx {
        analysis,
        policy,
        hits: Vec::new(),
        models: analysis
            .commands
            .iter()
            .map(|c| c.program().and_then(aq_knowledge::programs::lookup))
            .collect(),
    };
    for p in &analysis.problems {
        let rule = match p.kind {
            ProblemKind::Unparsable => RuleId::ParseUnparsable,
            ProblemKind::TooLong | ProblemKind::TooDeep | ProblemKind::TooLarge => {
                RuleId::ParseTooComplex
            }
        };
        ctx.hit_line(rule, p.detail.clone());
    }
    for f in &analysis.self_spawning_functions {
        ctx.hit_line(
            RuleId::ProcForkBomb,
            format!("function `{f}` starts copies of itself"),
        );
    }
    for l in &analysis.spawning_loops {
        ctx.hit_line(
            RuleId::ProcForkBomb,
            format!("`{l} …; do … & done` never ends and starts a process in the background on every turn"),
        );
    }
    for i in 0..analysis.commands.len() {
        exec::check(&mut ctx, i);
        files::check(&mut ctx, i);
        secrets::check(&mut ctx, i);
        tree_search::check(&mut ctx, i);
        net::check(&mut ctx, i);
        tools::check(&mut ctx, i);
        code::check(&mut ctx, i);
        env::check(&mut ctx, i);
        programs::check(&mut ctx, i);
        platforms::check(&mut ctx, i);
        tasks::check(&mut ctx, i);
        guard::check(&mut ctx, i);
        tool_config::check(&mut ctx, i);
        written::check_input_commands(&mut ctx, i);
    }
    exec::check_download_then_run(&mut ctx);
    written::check_line(&mut ctx);
    hidden::check_line(&mut ctx);

    // Custom rules.
    let mut custom_allowed = vec![false; analysis.commands.len()];
    for (ri, rule) in policy.custom_rules.iter().enumerate() {
        for (i, c) in analysis.commands.iter().enumerate() {
            if let Some(evidence) = custom_match(&rule.matcher, c) {
                if rule.action == Decision::Allow {
                    custom_allowed[i] = true;
                }
                ctx.hits.push(Hit {
                    rule: HitRule::Custom(ri),
                    command: Some(i),
                    evidence,
                });
            }
        }
    }
    // A custom allow rule lifts the asks of built-in rules on the command it
    // names; it never lowers a block, nor a rule the managed policy set.
    ctx.hits.retain(|h| match (&h.rule, h.command) {
        (HitRule::Builtin(id), Some(c)) if custom_allowed[c] => {
            policy.action(*id) == Decision::Block || policy.locked.contains(id)
        }
        _ => true,
    });

    // Whatever no rule recognised is unknown.
    for (i, c) in analysis.commands.iter().enumerate() {
        if ctx.fired_on(i) || c.argv.is_empty() {
            continue;
        }
        let Some(name) = c.program() else { continue };
        if analysis.functions.iter().any(|f| f == name)
            || is_known_program(name)
            // Described in the user's own policy (`[program.NAME]`).
            || policy.programs.get(name).is_some_and(|u| u.known)
            || c.runs.is_some()
            // `npx tool`, `uv run tool`: a tool the project installed (also
            // through a wrapper the runner started: `npx cross-env A=1 tool`).
            || c.via.iter().any(|v| aq_shell::is_runner_label(v))
            || is_version_query(c, name)
            || built_on_the_line(analysis, i)
        {
            continue;
        }
        ctx.hit(
            RuleId::ExecUnknownProgram,
            i,
            format!("`{name}` is not a program the rules know"),
        );
    }
    ctx.hits
}

/// `gfortran -o bin/t tests/t.f90 && ./bin/t`, `ocamlfind ocamlopt … -o
/// _build/gen && ./_build/gen`: a program a compiler wrote earlier on the
/// line (its `-o`) from the project's sources, run as `cargo run` and `go
/// run` run the project's build. A program the line did not build stays
/// unknown (`./target/debug/server` asks).
fn built_on_the_line(analysis: &Analysis, i: usize) -> bool {
    let Some(first) = analysis.commands[i].argv.first().filter(|w| !w.dynamic) else {
        return false;
    };
    let path = |t: &str| t.trim_start_matches("./").to_string();
    if !first.text.contains('/') {
        return false;
    }
    let want = path(&first.text);
    // Sources fetched on the line make it a download that runs.
    if analysis.commands[..i].iter().any(exec::is_downloader) {
        return false;
    }
    let is_compiler = |b: &Command| {
        b.program().is_some_and(|n| {
            aq_knowledge::programs::lookup(n)
                .and_then(|p| p.class)
                .or_else(|| aq_knowledge::programs::known_class(n))
                == Some(aq_knowledge::programs::Class::Compiler)
        })
    };
    let output = |b: &Command| -> Option<String> {
        let args = b.args();
        args.iter().enumerate().find_map(|(k, a)| {
            let out = if a.text == "-o" {
                args.get(k + 1)
                    .filter(|w| !w.dynamic)
                    .map(|w| w.text.as_str())
            } else {
                a.text
                    .strip_prefix("-o")
                    .filter(|r| !r.is_empty() && !a.dynamic)
            };
            out.map(path)
        })
    };
    let Some(j) = (0..i).rev().find(|&j| {
        let b = &analysis.commands[j];
        is_compiler(b) && output(b).as_deref() == Some(want.as_str())
    }) else {
        return false;
    };
    // Sources written on the line (`cat > /tmp/e.c <<EOF`, `printf … >
    // t.c`) or read from standard input are code the line made up, run as
    // a script written on the line is (`exec-script-file`).
    let b = &analysis.commands[j];
    let sources: Vec<String> = b
        .args()
        .iter()
        .filter(|a| !a.text.starts_with('-') || a.text == "-")
        .map(|a| path(&a.text))
        .collect();
    if sources.iter().any(|s| s == "-") {
        return false;
    }
    !analysis.commands[..j].iter().any(|w| {
        files::written_with_modes(w, aq_knowledge::programs::lookup(w.program().unwrap_or("")))
            .iter()
            .any(|(p, _)| sources.contains(&path(p)))
    })
}

/// `pass --version`, `secret-tool --help`: a program on the `PATH` asked
/// only for its version or its help (the label rules' `--version` queries).
/// Not a path (`./a.out --version` runs a file of the workspace).
fn is_version_query(c: &Command, name: &str) -> bool {
    !name.contains('/')
        && c.argv.first().is_some_and(|w| !w.text.contains('/'))
        && c.redirects.is_empty()
        && matches!(
            c.args()
                .iter()
                .map(|a| a.text.as_str())
                .collect::<Vec<_>>()
                .as_slice(),
            ["--version"] | ["-V"] | ["--help"] | ["-h"]
        )
}

fn custom_match(m: &CommandMatcher, c: &Command) -> Option<String> {
    let name = c.program()?;
    if !m.program.is_empty()
        && !m
            .program
            .iter()
            .any(|p| paths::glob_match(p, name) || p == name)
    {
        return None;
    }
    let args = c.args();
    if !m.subcommand.is_empty() {
        let sub = args.iter().find(|a| !a.text.starts_with('-'))?;
        if !m
            .subcommand
            .iter()
            .any(|s| paths::glob_match(s, &sub.text) || *s == sub.text)
        {
            return None;
        }
    }
    if !m.flags.is_empty()
        && !m.flags.iter().any(|f| {
            args.iter()
                .any(|a| a.text == *f || option_value(&a.text, f).is_some())
        })
    {
        return None;
    }
    if !m.args.is_empty()
        && !m.args.iter().any(|g| {
            args.iter()
                .any(|a| paths::glob_match(g, &a.text) || *g == a.text)
        })
    {
        return None;
    }
    if !m.paths.is_empty() {
        let candidates = args
            .iter()
            .map(|a| a.text.as_str())
            .chain(c.redirects.iter().map(|r| r.target.text.as_str()));
        let mut found = false;
        for cand in candidates {
            let p = paths::NormPath::new(cand);
            let norm = if p.in_home {
                format!("~/{}", p.parts.join("/"))
            } else if p.absolute {
                format!("/{}", p.parts.join("/"))
            } else {
                p.parts.join("/")
            };
            if m.paths
                .iter()
                .any(|g| paths::glob_match(g, &norm) || paths::glob_match(g, p.name()))
            {
                found = true;
                break;
            }
        }
        if !found {
            return None;
        }
    }
    Some(c.display())
}

// ---- helpers shared by the families ---------------------------------------

/// The value of `option=VALUE` in `text` (`--out=F`, `of=F`), if `text`
/// spells that option so. Compared in place: the rules try many options on
/// every argument, and `format!("{option}=")` built a string for each.
pub(crate) fn option_value<'t>(text: &'t str, option: &str) -> Option<&'t str> {
    text.strip_prefix(option)?.strip_prefix('=')
}

/// Whether a word is an option (`-x`, `--long`), not `-` alone.
pub(crate) fn is_flag(w: &Word) -> bool {
    w.text.len() > 1 && w.text.starts_with('-')
}

/// Whether a short-option cluster or long option is present (`-r` matches
/// `-rf`; `--force` matches `--force` and `--force=...`).
pub(crate) fn has_flag(c: &Command, short: Option<char>, long: &[&str]) -> bool {
    c.args().iter().take_while(|a| a.text != "--").any(|a| {
        let t = a.text.as_str();
        if let Some(l) = t.strip_prefix("--") {
            return long.iter().any(|x| l == *x || option_value(l, x).is_some());
        }
        match (short, t.strip_prefix('-')) {
            (Some(s), Some(cluster)) => {
                !cluster.is_empty()
                    && cluster.chars().all(|c| c.is_ascii_alphanumeric())
                    && cluster.contains(s)
            }
            _ => false,
        }
    })
}

/// The value of an option: `-o F`, `-oF`, `--output F`, `--output=F`.
pub(crate) fn flag_value<'c>(c: &'c Command, short: &[&str], long: &[&str]) -> Vec<&'c Word> {
    let args = c.args();
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        // `-o F`, and a bundle ending in the flag: `-sSLo F`.
        let bundled = t.len() > 2
            && !t.starts_with("--")
            && t.starts_with('-')
            && t[1..].chars().all(|c| c.is_ascii_alphabetic())
            && short.iter().any(|s| s.len() == 2 && t.ends_with(&s[1..]));
        if short.contains(&t) || bundled || long.iter().any(|l| t.strip_prefix("--") == Some(*l)) {
            if let Some(v) = args.get(i + 1) {
                out.push(v);
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    out
}

/// Same as [`flag_value`] but also `--long=value` and `-Xvalue` spellings, as text.
pub(crate) fn flag_values_text(c: &Command, short: &[&str], long: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = flag_value(c, short, long)
        .into_iter()
        .map(|w| w.text.clone())
        .collect();
    for a in c.args() {
        let t = a.text.as_str();
        for l in long {
            if let Some(v) = t.strip_prefix("--").and_then(|o| option_value(o, l)) {
                out.push(v.to_string());
            }
        }
        for s in short {
            if t.len() > s.len() && t.starts_with(s) && s.len() == 2 {
                out.push(t[s.len()..].to_string());
            }
        }
    }
    out
}

/// What a `{}` placeholder stands for in a command run by `find -exec` or
/// `xargs`: the names `find` looks for, or the literal words `echo`/`printf`
/// feed to `xargs`. Empty when unknown.
pub(crate) fn placeholder_values(ctx: &Ctx, i: usize) -> Vec<String> {
    let commands = ctx.commands();
    let Some(parent) = commands.iter().position(|c| c.runs == Some(i)) else {
        return Vec::new();
    };
    // `find ROOT -name N`: what it finds is ROOT/.../N.
    let found_by = |f: &Command| -> Vec<String> {
        // `-not -name .env`, `! -name .env`: what it leaves out.
        let args = f.args();
        let names: Vec<String> = args
            .iter()
            .enumerate()
            .filter(|(k, a)| {
                matches!(a.text.as_str(), "-name" | "-iname")
                    && !(*k > 0 && matches!(args[k - 1].text.as_str(), "-not" | "!"))
            })
            .filter_map(|(k, _)| args.get(k + 1).map(|v| v.text.clone()))
            .collect();
        find_roots(f)
            .iter()
            .flat_map(|r| {
                names
                    .iter()
                    .map(move |n| format!("{}/{n}", r.trim_end_matches('/')))
            })
            .collect()
    };
    match commands[parent].program() {
        Some("find") => found_by(&commands[parent]),
        Some("xargs") => {
            let mut out = Vec::new();
            for u in ctx.upstream(parent) {
                let up = &commands[u];
                match up.program() {
                    // `ls ~/.ssh/id_* | xargs cat`: the names ls lists.
                    Some("ls") => out.extend(
                        operands(up)
                            .iter()
                            .filter(|w| !w.dynamic)
                            .map(|w| w.text.clone()),
                    ),
                    Some("echo" | "printf") if up.args().iter().all(|w| !w.dynamic) => {
                        for w in up.args().iter().filter(|w| !w.text.starts_with('-')) {
                            out.extend(w.text.split_whitespace().map(str::to_string));
                        }
                    }
                    Some("find") => out.extend(found_by(up)),
                    _ => {}
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The paths a `{}` operand of command `i` stands for: what `find` or
/// `xargs` hand it ([`placeholder_values`]), or, when `find` narrows
/// nothing by name, its starting points, each standing for every path
/// under it (`find /var/log -exec truncate -s0 {} +` empties the logs).
pub(crate) fn placeholder_paths(ctx: &Ctx, i: usize) -> Vec<String> {
    let named = placeholder_values(ctx, i);
    if named.is_empty() {
        finder_roots(ctx, i)
    } else {
        named
    }
}

/// The directories `find` searches, when `i` is run by `find -exec`, or by
/// `xargs` reading what `find` lists (`find ~/.aws -type f | xargs cat`).
pub(crate) fn finder_roots(ctx: &Ctx, i: usize) -> Vec<String> {
    let commands = ctx.commands();
    match commands.iter().position(|c| c.runs == Some(i)) {
        Some(p) if commands[p].program() == Some("find") => find_roots(&commands[p]),
        Some(p) if commands[p].program() == Some("xargs") => ctx
            .upstream(p)
            .into_iter()
            .filter(|&u| commands[u].program() == Some("find"))
            .flat_map(|u| find_roots(&commands[u]))
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether a `find` command leaves its starting points out (`-mindepth 1`
/// or more): it lists, and deletes, what is in them, not them.
pub(crate) fn find_skips_roots(c: &Command) -> bool {
    c.args()
        .windows(2)
        .any(|w| w[0].text == "-mindepth" && w[1].text.parse::<u32>().is_ok_and(|n| n >= 1))
}

/// The `find` commands whose matches command `i` is given (`find -exec`,
/// `find | xargs`).
pub(crate) fn finders(ctx: &Ctx, i: usize) -> Vec<usize> {
    let commands = ctx.commands();
    match commands.iter().position(|c| c.runs == Some(i)) {
        Some(p) if commands[p].program() == Some("find") => vec![p],
        Some(p) if commands[p].program() == Some("xargs") => ctx
            .upstream(p)
            .into_iter()
            .filter(|&u| commands[u].program() == Some("find"))
            .collect(),
        _ => Vec::new(),
    }
}

/// The starting points of a `find` command (`.` when none is given).
pub(crate) fn find_roots(c: &Command) -> Vec<String> {
    let roots: Vec<String> = c
        .args()
        .iter()
        .take_while(|a| !a.text.starts_with('-') && a.text != "(" && a.text != "!")
        .map(|a| a.text.clone())
        .collect();
    if roots.is_empty() {
        vec![".".to_string()]
    } else {
        roots
    }
}

/// A word spelled from the current directory (`"$PWD/target"`,
/// `${PWD}/dist`, `$(pwd)/../..`) as the relative path it is, when no `cd`
/// before it on the line moved the shell (the current directory is then
/// the workspace): `./target`, `./../..`.
pub(crate) fn from_current_dir(ctx: &Ctx, i: usize, w: &aq_shell::Word) -> Option<String> {
    let rest = ["$PWD", "${PWD}", "$(pwd)", "`pwd`"]
        .iter()
        .find_map(|p| w.text.strip_prefix(p))
        .filter(|r| r.is_empty() || r.starts_with('/'))?;
    let only_pwd = w.vars.iter().all(|v| v == "PWD")
        && w.feeds
            .iter()
            .all(|&f| ctx.commands()[f].program() == Some("pwd"));
    (only_pwd && !rest.contains('$') && cwd_before(ctx, i).is_none()).then(|| format!(".{rest}"))
}

/// The directory a command runs in, when an earlier `cd` on the line says
/// so: a relative `cd` goes on from the one before it (`cd ~; cd .ssh`),
/// or from `CDPATH` when the line sets it (`CDPATH=~ cd .ssh`), as bash
/// goes.
pub(crate) fn cwd_before(ctx: &Ctx, i: usize) -> Option<String> {
    let commands = ctx.commands();
    let depth = commands[i].depth;
    let earlier: Vec<&aq_shell::Command> =
        commands[..i].iter().filter(|c| c.depth <= depth).collect();
    let mut relative: Vec<String> = Vec::new();
    for (k, c) in earlier.iter().enumerate().rev() {
        if !matches!(c.program(), Some("cd" | "pushd")) {
            continue;
        }
        let target = operands(c)
            .first()
            .map(|w| w.text.clone())
            .unwrap_or_else(|| "~".to_string());
        if target.starts_with(['/', '~', '$']) {
            return Some(joined(&target, &relative));
        }
        relative.push(target);
        let cdpath = c
            .assignments
            .iter()
            .chain(earlier[..k].iter().flat_map(|e| e.assignments.iter()))
            .find(|a| a.name == "CDPATH")
            .map(|a| a.value.text.clone())
            .or_else(|| earlier[..k].iter().rev().find_map(|e| exported_cdpath(e)));
        if let Some(first) = cdpath.as_deref().and_then(|p| p.split(':').next())
            && !first.is_empty()
        {
            return Some(joined(first, &relative));
        }
    }
    // Only relative moves: from where the shell started, as written.
    (!relative.is_empty()).then(|| {
        relative.reverse();
        relative.join("/")
    })
}

/// `export CDPATH=VALUE`'s value.
fn exported_cdpath(c: &aq_shell::Command) -> Option<String> {
    if c.program() != Some("export") {
        return None;
    }
    c.args()
        .iter()
        .find_map(|a| a.text.strip_prefix("CDPATH=").map(String::from))
}

/// `base` with the relative moves (latest first) applied, `.` and `..`
/// resolved as bash's logical `cd` does.
fn joined(base: &str, moves_latest_first: &[String]) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let root = base.trim_end_matches('/');
    let mut fixed = if root.is_empty() { "/" } else { root }.to_string();
    for m in moves_latest_first.iter().rev() {
        for part in m.split('/') {
            match part {
                "" | "." => {}
                ".." if !parts.is_empty() && parts.last() != Some(&"..") => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
    }
    if parts.is_empty() {
        return fixed;
    }
    if fixed != "/" {
        fixed.push('/');
    }
    fixed + &parts.join("/")
}

/// The rules' hits on code found inside command `i` (a variable's value, a
/// script written on the line, an editor's escape), as hits on `i`; only
/// blocks when `blocks_only`. `label` says where the code was.
pub(crate) fn copy_hits(
    ctx: &mut Ctx,
    i: usize,
    label: &str,
    analysis: &Analysis,
    blocks_only: bool,
) {
    for hit in run(analysis, ctx.policy) {
        if let HitRule::Builtin(id) = hit.rule
            && id != RuleId::ExecUnknownProgram
            && (!blocks_only || ctx.policy.action(id) == Decision::Block)
        {
            ctx.hit(id, i, format!("in {label}: {}", hit.evidence));
        }
    }
}

/// Every text the line gives its commands, but the words `skip` says:
/// arguments, assigned values, here-documents and interpreter code, one
/// per line. For the rules that judge a write by what it writes (a `jq`
/// filter, a `sed` script, the text of a here-document); built only when a
/// write to such a place was found.
pub(crate) fn line_text(ctx: &Ctx, skip: &dyn Fn(&str) -> bool) -> String {
    let mut out = String::new();
    let mut push = |t: &str| {
        if !skip(t) {
            out.push_str(t);
            out.push('\n');
        }
    };
    for c in ctx.commands() {
        for w in c.args() {
            push(&w.text);
        }
        for a in &c.assignments {
            push(&a.value.text);
        }
        for input in &c.stdin {
            if let Input::Text(w) = input {
                push(&w.text);
            }
        }
        if let Some(code) = &c.code {
            push(&code.text);
        }
    }
    out
}

/// The first argument that is not an option.
pub(crate) fn subcommand(c: &Command) -> Option<&str> {
    c.args()
        .iter()
        .find(|a| !is_flag(a))
        .map(|a| a.text.as_str())
}

/// Arguments that are not options (after `--`, everything).
pub(crate) fn operands(c: &Command) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut after_dashes = false;
    let mut skip_value = false;
    for a in c.args() {
        if skip_value {
            skip_value = false;
            continue;
        }
        if !after_dashes && a.text == "--" {
            after_dashes = true;
            continue;
        }
        if after_dashes || !is_flag(a) {
            out.push(a);
        } else if EXCLUSION_OPTIONS.contains(&a.text.as_str()) {
            // `--exclude .env` names a pattern to leave out, not a file.
            skip_value = true;
        }
    }
    out
}

/// Long options that take a pattern of files to leave out (`rsync
/// --exclude .env`, `tar --exclude .env`, `grep --exclude-dir x`).
pub(crate) const EXCLUSION_OPTIONS: &[&str] = &[
    "--exclude",
    "--include",
    "--exclude-from",
    "--include-from",
    "--exclude-dir",
    "--filter",
    "--ignore",
    "--ignore-file",
];

/// Whether an argument is an exclusion (`--exclude=.env`, `--exclude .env`)
/// rather than a file the command touches.
pub(crate) fn is_exclusion(args: &[Word], k: usize) -> bool {
    let t = args[k].text.as_str();
    EXCLUSION_OPTIONS
        .iter()
        .any(|o| option_value(t, o).is_some())
        || k > 0 && EXCLUSION_OPTIONS.contains(&args[k - 1].text.as_str())
}
