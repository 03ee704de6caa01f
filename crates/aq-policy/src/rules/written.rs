//! Two steps on one line, and commands fed as text: a file written with
//! literal text and then run (`printf '…' > x.sh && sh x.sh`) or run later
//! by something else (a git hook, a package.json lifecycle script, a
//! Makefile recipe, a git alias, setup.py); programs whose input is their own
//! command language (`ed`, `gdb`, `sqlite3`) fed literal text. The text is
//! judged as what it will be.

use aq_knowledge::programs::{Does, Via};
use aq_shell::{Analysis, Command, Input};

use super::{Ctx, copy_hits, operands};
use crate::catalog::RuleId;

/// Line-level: files written with literal text, judged by what runs them.
pub(crate) fn check_line(ctx: &mut Ctx) {
    let mut writes: Vec<(usize, String, String)> = Vec::new();
    for i in 0..ctx.commands().len() {
        let c = &ctx.commands()[i];
        let Some(text) = produced_text(ctx, c) else {
            continue;
        };
        for path in super::files::written_paths(c, ctx.model(i)) {
            let path = path.trim_start_matches("./").to_string();
            if let Some(w) = writes.iter_mut().find(|w| w.1 == path) {
                w.2.push_str(&text);
            } else {
                writes.push((i, path, text.clone()));
            }
        }
    }
    for (i, path, text) in writes {
        let base = path.rsplit('/').next().unwrap_or(&path).to_string();
        let label = format!("the text written to `{path}`");
        if path.contains(".git/hooks/")
            || path.starts_with("hooks/")
            || path.starts_with(".husky/")
            || path.contains("/.husky/")
        {
            // Written alone a hook is asked about (persist-git-hook); what it
            // holds runs at the next commit, checkout or merge, which an agent
            // makes within minutes, so a hook that would block blocks now.
            copy_hits(ctx, i, &label, &aq_shell::analyze(&text), true);
        } else if base == "package.json" {
            // Lifecycle scripts run on the next install; others when a later
            // `npm run NAME` (or `yarn NAME`, `pnpm NAME`) on the line asks.
            let mut names: Vec<String> = LIFECYCLE.iter().map(|s| s.to_string()).collect();
            names.extend(run_script_names(&ctx.commands()[i + 1..]));
            for script in package_scripts(&text, &names) {
                copy_hits(ctx, i, &label, &aq_shell::analyze(&script), true);
            }
        } else if matches!(base.as_str(), "Makefile" | "makefile" | "GNUmakefile")
            || base.ends_with(".mk")
        {
            copy_hits(ctx, i, &label, &aq_shell::analyze(&recipes(&text)), true);
        } else if matches!(base.as_str(), "setup.py" | "conftest.py" | "noxfile.py") {
            let a = python(&text);
            copy_hits(ctx, i, &label, &a, true);
        } else if base == ".envrc" {
            // Once allowed, the .envrc runs in every later shell there: what
            // would block in it blocks when it is written.
            copy_hits(ctx, i, &label, &aq_shell::analyze(&text), true);
            check_envrc(ctx, i, &path, &text);
        } else if base == "config" && path.contains(".git/") || base == ".gitconfig" {
            // Each key that runs a command (`alias.x = !cmd`, `core.fsmonitor`,
            // `core.sshCommand`), judged as `git config KEY VALUE` would be.
            for (key, bang, cmd) in config_commands(&text) {
                let analysis = aq_shell::analyze(&cmd);
                copy_hits(ctx, i, &label, &analysis, true);
                // A `!` alias kept there, as `git config alias.x '!cmd'`
                // (one that only runs git is git's own commands).
                let only_git = !analysis.commands.is_empty()
                    && analysis
                        .commands
                        .iter()
                        .all(|c| c.program() == Some("git") && c.redirects.is_empty());
                if bang && !only_git {
                    ctx.hit(
                        RuleId::PersistToolConfig,
                        i,
                        format!("{label} sets {key} to the shell command `{cmd}`, run whenever the alias is used"),
                    );
                }
            }
        }
        // A compose file written, then brought up on this line (`cat >
        // compose.yml <<EOF … privileged: true … EOF; docker compose up`).
        let compose_name = matches!(
            base.as_str(),
            "docker-compose.yml" | "docker-compose.yaml" | "compose.yml" | "compose.yaml"
        );
        let escapes = super::tools::compose_escapes(&text);
        if !escapes.is_empty()
            && let Some(j) = (i + 1..ctx.commands().len())
                .find(|&j| brings_up(&ctx.commands()[j], &path, compose_name))
        {
            ctx.hit(
                RuleId::DockerPrivileged,
                j,
                format!("{label}: {}", escapes.join(", ")),
            );
        }
        // Run later on this line: `sh x.sh`, `./x.sh`, `python3 /tmp/t.py`.
        for j in i + 1..ctx.commands().len() {
            let Some(lang) = runs_file(&ctx.commands()[j], &path) else {
                continue;
            };
            // `make -f F`: its recipes run now, as make runs a project's
            // own (judged as they are, not as a script file).
            if matches!(lang, Lang::Make) {
                copy_hits(ctx, j, &label, &aq_shell::analyze(&recipes(&text)), false);
                break;
            }
            let analysis = match lang {
                Lang::Shell | Lang::Make => aq_shell::analyze(&text),
                Lang::Python => python(&text),
                Lang::Other(name) => {
                    aq_shell::analyze_argv(&[name.to_string(), "-e".into(), text.clone()])
                }
            };
            copy_hits(ctx, j, &label, &analysis, true);
            if !ctx.fired_on(j) {
                ctx.hit(
                    RuleId::ExecScriptFile,
                    j,
                    format!("runs `{path}`, written on this line"),
                );
            }
            break;
        }
    }
}

/// direnv's own words in an `.envrc` written on the line: `source_url`
/// fetches a script and runs it, `source_env` (`source_env_if_exists`)
/// runs another file, outside the project when its path says so; both
/// block, as the same text would on the line. Any other text written into
/// the workspace's `.envrc` asks: direnv runs it in every shell that
/// enters the directory, once allowed (`tool-config-trust`). Elsewhere the
/// write is judged by its place.
fn check_envrc(ctx: &mut Ctx, i: usize, path: &str, text: &str) {
    for line in text.lines().flat_map(|l| l.split("\\n")) {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        let arg = words
            .next()
            .unwrap_or("")
            .trim_matches(|ch| ch == '"' || ch == '\'');
        let outside = |p: &str| {
            p == ".." || p.starts_with("../") || crate::places::area_with(p, ctx.policy).is_some()
        };
        let what = match first {
            "source_url" => Some(format!("`source_url {arg}` fetches a script and runs it")),
            "source_env" | "source_env_if_exists" if outside(arg) => {
                Some(format!("`{first} {arg}` runs a file outside the project"))
            }
            _ => None,
        };
        if let Some(what) = what {
            ctx.hit(
                RuleId::PersistToolConfig,
                i,
                format!("writes {path}, where {what} in every shell that enters the directory"),
            );
        }
    }
    if crate::places::area_with(path, ctx.policy).is_none() && !path.starts_with("..") {
        ctx.hit(
            RuleId::ToolConfigTrust,
            i,
            format!("writes {path}: direnv runs it in every shell that enters the directory, once allowed"),
        );
    }
}

/// Per command: text fed to a program whose input is its own command
/// language (`printf '!sh\n' | ed`, `gdb <<< 'shell id'`), and `make --eval`.
pub(crate) fn check_input_commands(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else {
        return;
    };
    let reads_commands = ctx
        .model(i)
        .is_some_and(|p| p.caps(Does::Exec).any(|cap| cap.via == Via::Stdin));
    if reads_commands {
        let mut text = String::new();
        for s in &c.stdin {
            match s {
                Input::Text(w) => text.push_str(&w.text),
                Input::Pipe(p) => {
                    if let Some(t) = produced_text(ctx, &ctx.commands()[*p]) {
                        text.push_str(&t);
                    }
                }
                Input::File(_) => {}
            }
            text.push('\n');
        }
        for line in text.lines() {
            if let Some(cmd) = aq_knowledge::programs::escape_command(line) {
                ctx.hit(
                    RuleId::ExecViaOption,
                    i,
                    format!("`{name}` runs `{cmd}` read from its input"),
                );
                copy_hits(
                    ctx,
                    i,
                    &format!("`{name}`'s input"),
                    &aq_shell::analyze(&cmd),
                    false,
                );
            }
        }
    }
    // `npm pkg set scripts.postinstall='…'`: a lifecycle script runs on
    // the next install.
    if matches!(name, "npm" | "pnpm")
        && super::subcommand(c) == Some("pkg")
        && c.args().iter().any(|a| a.text == "set")
    {
        let scripts: Vec<String> = c
            .args()
            .iter()
            .filter_map(|a| a.text.strip_prefix("scripts."))
            .filter_map(|kv| kv.split_once('='))
            .map(|(_, v)| v.to_string())
            .collect();
        for s in scripts {
            copy_hits(ctx, i, "a package script", &aq_shell::analyze(&s), true);
        }
    }
    if name == "make" || name == "gmake" {
        // `make -f - <<< 'all: …'`, `make -f <(printf …)`: a makefile given
        // as text on the line, whose recipes run now.
        let mut given = Vec::new();
        for f in makefiles(c) {
            if matches!(f.text.as_str(), "-" | "/dev/stdin") {
                given.extend(input_text(ctx, c));
            } else {
                given.extend(
                    f.feeds
                        .iter()
                        .filter_map(|&p| produced_text(ctx, &ctx.commands()[p])),
                );
            }
        }
        for text in given {
            copy_hits(
                ctx,
                i,
                "the makefile given on the line",
                &aq_shell::analyze(&recipes(&text)),
                false,
            );
        }
        let c = &ctx.commands()[i];
        let args = c.args();
        let mut evals = Vec::new();
        for (k, a) in args.iter().enumerate() {
            if let Some(v) = a.text.strip_prefix("--eval=") {
                evals.push(v.to_string());
            } else if (a.text == "--eval" || a.text == "-E")
                && let Some(v) = args.get(k + 1)
            {
                evals.push(v.text.clone());
            }
        }
        for e in evals {
            ctx.hit(
                RuleId::ExecViaOption,
                i,
                "`make` runs recipes given in `--eval`",
            );
            copy_hits(
                ctx,
                i,
                "`make --eval`",
                &aq_shell::analyze(&recipes(&e)),
                false,
            );
        }
    }
}

/// Whether `c` starts containers from the compose file `path`: named
/// with `-f`, or found by its default name (`by_name`) when none is.
fn brings_up(c: &Command, path: &str, by_name: bool) -> bool {
    let args: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    let compose = match c.program() {
        Some("docker" | "podman") => args.contains(&"compose"),
        Some("docker-compose" | "podman-compose") => true,
        _ => false,
    };
    if !compose
        || !args
            .iter()
            .any(|a| matches!(*a, "up" | "run" | "create" | "start" | "restart"))
    {
        return false;
    }
    let files = super::flag_values_text(c, &["-f"], &["file"]);
    if files.is_empty() {
        by_name
    } else {
        files.iter().any(|f| f.trim_start_matches("./") == path)
    }
}

enum Lang {
    Shell,
    /// A makefile: its recipes are shell commands.
    Make,
    Python,
    Other(&'static str),
}

/// How command `c` runs `path`, if it does.
fn runs_file(c: &Command, path: &str) -> Option<Lang> {
    let first = c.argv.first()?;
    let same = |t: &str| t.trim_start_matches("./") == path;
    if same(&first.text) {
        return Some(Lang::Shell);
    }
    let name = c.program()?;
    // `make -f Makefile.tmp`, `make --file=x.mk all`.
    if matches!(name, "make" | "gmake" | "bmake") {
        return makefiles(c)
            .iter()
            .any(|f| same(&f.text))
            .then_some(Lang::Make);
    }
    let operand = operands(c).first().map(|w| w.text.clone())?;
    if !same(&operand) {
        return None;
    }
    if aq_shell::is_shell(name) || matches!(name, "source" | ".") {
        return Some(Lang::Shell);
    }
    match aq_shell::interpreter_lang(name)? {
        "python" => Some(Lang::Python),
        "node" => Some(Lang::Other("node")),
        "perl" => Some(Lang::Other("perl")),
        "ruby" => Some(Lang::Other("ruby")),
        _ => Some(Lang::Shell),
    }
}

fn python(text: &str) -> Analysis {
    aq_shell::analyze_argv(&["python3".to_string(), "-c".into(), text.to_string()])
}

/// The makefiles `make` is told to read: `-f F`, `-fF`, `--file F`,
/// `--file=F`, `--makefile F`.
pub(super) fn makefiles(c: &Command) -> Vec<aq_shell::Word> {
    let mut out: Vec<aq_shell::Word> = super::flag_value(c, &["-f"], &["file", "makefile"])
        .into_iter()
        .cloned()
        .collect();
    for a in c.args() {
        let t = a.text.as_str();
        let value = t
            .strip_prefix("--file=")
            .or_else(|| t.strip_prefix("--makefile="))
            .or_else(|| {
                t.strip_prefix("-f")
                    .filter(|v| !v.is_empty() && !t.starts_with("--"))
            });
        if let Some(v) = value {
            out.push(aq_shell::Word {
                text: v.to_string(),
                ..a.clone()
            });
        }
    }
    out
}

/// The literal text command `c` reads on its input: a here-document or
/// here-string, or what a command before it in the pipe prints.
pub(super) fn input_text(ctx: &Ctx, c: &Command) -> Option<String> {
    c.stdin.iter().find_map(|s| match s {
        Input::Text(t) if !t.dynamic => Some(t.text.clone()),
        Input::Pipe(p) => produced_text(ctx, &ctx.commands()[*p]),
        _ => None,
    })
}

/// What `echo`/`printf` print, or the here-document `cat`/`tee` copy, when
/// it is literal.
pub(crate) fn produced_text(ctx: &Ctx, c: &Command) -> Option<String> {
    let args = c.args();
    if args.iter().any(|w| w.dynamic) {
        return None;
    }
    match c.program()? {
        "echo" => {
            let mut escapes = false;
            let words: Vec<&str> = args
                .iter()
                .map(|w| w.text.as_str())
                .skip_while(|w| {
                    let flag = w.len() > 1
                        && w.starts_with('-')
                        && w[1..].chars().all(|ch| "neE".contains(ch));
                    escapes |= flag && w.contains('e');
                    flag
                })
                .collect();
            let text = words.join(" ");
            Some(if escapes { unescape(&text) } else { text } + "\n")
        }
        "printf" => {
            // The format is used again until the arguments run out.
            let (format, rest) = args.split_first()?;
            let format = unescape(&format.text).replace("%%", "\u{0}");
            let slots = format.matches("%s").count() + format.matches("%b").count();
            let mut out = String::new();
            let mut args = rest.iter();
            loop {
                let mut piece = format.clone();
                let mut used = 0;
                while let Some(pos) = piece.find("%s").or_else(|| piece.find("%b")) {
                    let value = args.next().map(|a| a.text.as_str()).unwrap_or("");
                    piece.replace_range(pos..pos + 2, value);
                    used += 1;
                }
                out.push_str(&piece);
                if slots == 0 || used == 0 || args.len() == 0 {
                    break;
                }
            }
            Some(out.replace('\u{0}', "%"))
        }
        "base64" if super::has_flag(c, Some('d'), &["decode"]) => {
            let input = input_text(ctx, c)?;
            String::from_utf8(super::secrets::base64_decode(input.trim())?).ok()
        }
        "cat" | "tee" => c.stdin.iter().find_map(|s| match s {
            Input::Text(w) => Some(w.text.clone()),
            Input::Pipe(p) => {
                let up = &ctx.commands()[*p];
                (up.program() != Some("cat") && up.program() != Some("tee"))
                    .then(|| produced_text(ctx, up))
                    .flatten()
            }
            Input::File(_) => None,
        }),
        _ => None,
    }
}

/// `printf`/`echo -e` escapes: `\n`, `\t`, `\\`, `\'`, `\"`.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(ch) = it.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// npm lifecycle scripts that run on install.
const LIFECYCLE: &[&str] = &[
    "preinstall",
    "install",
    "postinstall",
    "prepare",
    "prepublish",
    "preprepare",
    "postprepare",
];

/// Script names later commands run: `npm run X`, `npm test`, `yarn X`.
fn run_script_names(later: &[Command]) -> Vec<String> {
    let mut out = Vec::new();
    for c in later {
        if !matches!(c.program(), Some("npm" | "pnpm" | "yarn" | "bun")) {
            continue;
        }
        let ops: Vec<&str> = operands(c).iter().map(|w| w.text.as_str()).collect();
        match ops.as_slice() {
            ["run" | "run-script" | "rs", name, ..] => out.push(name.to_string()),
            ["t", ..] => out.push("test".into()),
            ["test" | "start" | "stop" | "restart", ..] => out.push(ops[0].to_string()),
            [name, ..] if c.program() != Some("npm") => out.push(name.to_string()),
            _ => {}
        }
    }
    out
}

/// The values of the `names` scripts in a package.json text.
fn package_scripts(json: &str, names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for key in names {
        let pat = format!("\"{key}\"");
        let mut from = 0;
        while let Some(pos) = json[from..].find(&pat) {
            let after = &json[from + pos + pat.len()..];
            from += pos + pat.len();
            let Some(rest) = after.trim_start().strip_prefix(':') else {
                continue;
            };
            let Some(body) = rest.trim_start().strip_prefix('"') else {
                continue;
            };
            let mut value = String::new();
            let mut esc = false;
            for ch in body.chars() {
                match (esc, ch) {
                    (true, c) => {
                        value.push(c);
                        esc = false;
                    }
                    (false, '\\') => esc = true,
                    (false, '"') => break,
                    (false, c) => value.push(c),
                }
            }
            out.push(value);
        }
    }
    out
}

/// Makefile recipe lines (those starting with a tab, or after `;` on a
/// rule's line: `x: ; cmd`), with `$$` as `$`.
fn recipes(text: &str) -> String {
    text.lines()
        .filter_map(|l| {
            l.strip_prefix('\t').or_else(|| {
                let (rule, recipe) = l.split_once(';')?;
                rule.contains(':').then_some(recipe.trim_start())
            })
        })
        .map(|l| l.trim_start_matches(['@', '-', '+']).replace("$$", "$"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// git aliases that run a shell command: `name = !cmd`.
/// The commands a git config file's text makes git run, with their keys
/// and whether each is a `!` alias: the values of the keys of
/// [`aq_knowledge::git::GIT_KEYS`] that run a command or a program (a `!`
/// alias without its `!`), as git reads the file (`\n` and
/// `\t` written literally by `echo` count as the newlines and tabs they
/// become).
fn config_commands(text: &str) -> Vec<(String, bool, String)> {
    let text = text.replace("\\n", "\n").replace("\\t", "\t");
    aq_knowledge::git::parse_git_config(text.as_bytes())
        .into_iter()
        .filter_map(|e| {
            let value = e.value?;
            let row = aq_knowledge::git::git_key_runs(&e.key, Some(&value))?;
            let bang = row.runs == aq_knowledge::git::GitRuns::Bang;
            row.runs.value_runs().then(|| {
                (
                    e.key,
                    bang,
                    value.trim_start().trim_start_matches('!').to_string(),
                )
            })
        })
        .collect()
}
