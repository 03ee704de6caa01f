//! Environment-variable injection: a variable set on the line (`VAR=x cmd`,
//! `export`, `declare`, `env VAR=x cmd`) that makes a later program load
//! code, or run a command, the line chose. What each variable does is data
//! ([`VARS`]); a command held in a variable is judged as if it were on the
//! line, so a pager that runs a shell is a shell.

use aq_shell::Word;

use super::Ctx;
use crate::catalog::RuleId;
use crate::paths::NormPath;

/// What setting a variable makes the programs that follow do.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Loads the library or runs the script it names, in every program.
    Preload,
    /// Runs the script it names when a shell or interpreter starts.
    StartupFile,
    /// Interpreter options; code is loaded when an option in the list is there.
    Options(&'static [&'static str]),
    /// A search path for native code: only a temporary entry is a hijack.
    NativePath,
    /// A search path for modules: only a temporary entry is a hijack.
    ModulePath,
    /// A command another program runs.
    Command,
}

/// Java options that load an agent or run a command.
const JAVA_LOADING: &[&str] = &[
    "-javaagent",
    "-agentpath",
    "-agentlib",
    "-XX:OnError",
    "-XX:OnOutOfMemoryError",
];

/// The variables and what they do. Names are exact.
const VARS: &[(&str, Effect)] = &[
    ("LD_PRELOAD", Effect::Preload),
    ("LD_AUDIT", Effect::Preload),
    ("DYLD_INSERT_LIBRARIES", Effect::Preload),
    ("BASH_ENV", Effect::StartupFile),
    ("ENV", Effect::StartupFile),
    ("PYTHONSTARTUP", Effect::StartupFile),
    ("NODE_REPL_EXTERNAL_MODULE", Effect::StartupFile),
    (
        "NODE_OPTIONS",
        Effect::Options(&[
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
        ]),
    ),
    ("PERL5OPT", Effect::Options(&["-M", "-m", "-d", "-I"])),
    ("RUBYOPT", Effect::Options(&["-r", "-I"])),
    ("JAVA_TOOL_OPTIONS", Effect::Options(JAVA_LOADING)),
    ("_JAVA_OPTIONS", Effect::Options(JAVA_LOADING)),
    ("JDK_JAVA_OPTIONS", Effect::Options(JAVA_LOADING)),
    ("LD_LIBRARY_PATH", Effect::NativePath),
    ("DYLD_LIBRARY_PATH", Effect::NativePath),
    ("DYLD_FRAMEWORK_PATH", Effect::NativePath),
    ("GCONV_PATH", Effect::NativePath),
    ("GIT_EXEC_PATH", Effect::NativePath),
    ("PYTHONPATH", Effect::ModulePath),
    ("PYTHONHOME", Effect::ModulePath),
    ("NODE_PATH", Effect::ModulePath),
    ("PERL5LIB", Effect::ModulePath),
    ("PERLLIB", Effect::ModulePath),
    ("RUBYLIB", Effect::ModulePath),
    ("GIT_TEMPLATE_DIR", Effect::ModulePath),
    ("PATH", Effect::ModulePath),
    ("PAGER", Effect::Command),
    ("GIT_PAGER", Effect::Command),
    ("MANPAGER", Effect::Command),
    ("SYSTEMD_PAGER", Effect::Command),
    ("BAT_PAGER", Effect::Command),
    ("DELTA_PAGER", Effect::Command),
    ("PSQL_PAGER", Effect::Command),
    ("AWS_PAGER", Effect::Command),
    ("EDITOR", Effect::Command),
    ("VISUAL", Effect::Command),
    ("GIT_EDITOR", Effect::Command),
    ("GIT_SEQUENCE_EDITOR", Effect::Command),
    ("SUDO_EDITOR", Effect::Command),
    ("KUBE_EDITOR", Effect::Command),
    ("SVN_EDITOR", Effect::Command),
    ("FCEDIT", Effect::Command),
    ("GIT_SSH_COMMAND", Effect::Command),
    ("GIT_SSH", Effect::Command),
    ("RSYNC_RSH", Effect::Command),
    ("CVS_RSH", Effect::Command),
    ("GIT_PROXY_COMMAND", Effect::Command),
    ("GIT_EXTERNAL_DIFF", Effect::Command),
    ("GIT_ASKPASS", Effect::Command),
    ("SSH_ASKPASS", Effect::Command),
    ("SUDO_ASKPASS", Effect::Command),
    ("LESSOPEN", Effect::Command),
    ("LESSCLOSE", Effect::Command),
    ("PROMPT_COMMAND", Effect::Command),
    ("BROWSER", Effect::Command),
];

/// Viewers and editors a command variable may name as it is: they run no
/// command of the line's choosing (checked further in [`plain_command`]).
const PLAIN: &[&str] = &[
    ":",
    "bat",
    "batcat",
    "cat",
    "code",
    "codium",
    "delta",
    "diff-highlight",
    "diff-so-fancy",
    "difft",
    "emacs",
    "emacsclient",
    "false",
    "gedit",
    "helix",
    "hx",
    "kak",
    "kate",
    "less",
    "lesspipe",
    "lesspipe.sh",
    "mate",
    "micro",
    "more",
    "most",
    "nano",
    // `BROWSER=none`: open no browser (create-react-app and others).
    "none",
    "nvim",
    "ssh",
    "subl",
    "true",
    "vi",
    "vim",
    "xdg-open",
];

/// One variable a command sets.
struct Setting<'a> {
    name: &'a str,
    value: &'a str,
    dynamic: bool,
}

/// Checks every variable command `i` sets, however it sets it (`env` and
/// `sudo` hand theirs to the command they run, as assignments).
pub(super) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let mut settings: Vec<Setting> = c
        .assignments
        .iter()
        .map(|a| Setting {
            name: &a.name,
            value: &a.value.text,
            dynamic: a.value.dynamic,
        })
        .collect();
    if let Some("export" | "declare" | "typeset" | "local" | "readonly") = c.program() {
        settings.extend(c.args().iter().filter_map(setting_word));
    }
    // `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor
    // GIT_CONFIG_VALUE_0=CMD git status`: config given to git through the
    // environment, judged like `git -c core.fsmonitor=CMD`.
    let git_commands: Vec<(String, String)> = settings
        .iter()
        .filter_map(|s| {
            let n = s.name.strip_prefix("GIT_CONFIG_VALUE_")?;
            let key = settings
                .iter()
                .find(|k| k.name.strip_prefix("GIT_CONFIG_KEY_") == Some(n))?;
            aq_knowledge::git::git_key_runs(key.value, Some(s.value))
                .is_some_and(|k| k.runs.value_runs())
                .then(|| (format!("{} ({})", s.name, key.value), s.value.to_string()))
        })
        .collect();
    for s in settings {
        judge(ctx, i, &s);
    }
    for (name, value) in git_commands {
        let value = value.strip_prefix('!').unwrap_or(&value).to_string();
        judge_command(ctx, i, &name, &value);
    }
}

/// `NAME=value` as a word.
fn setting_word(w: &Word) -> Option<Setting<'_>> {
    let (name, value) = aq_shell::env_assignment(&w.text)?;
    Some(Setting {
        name,
        value,
        dynamic: w.dynamic,
    })
}

fn judge(ctx: &mut Ctx, i: usize, s: &Setting) {
    // `BASH_FUNC_name%%=() { ...; }`: an exported function; in the old
    // format (any name, value `() { ...`) bash before 4.3 ran what
    // follows the body (Shellshock).
    if s.name.starts_with("BASH_FUNC_") || s.value.trim_start().starts_with("() {") {
        ctx.hit(
            RuleId::EnvCodeInject,
            i,
            format!(
                "`{}` exports a shell function to the programs that follow",
                s.name
            ),
        );
        // Its body is judged as if it were on the line.
        let body = s.value.trim_start().trim_start_matches("()");
        super::copy_hits(
            ctx,
            i,
            &format!("`{}`", s.name),
            &aq_shell::analyze(body),
            false,
        );
        return;
    }
    // `npm_config_script_shell=/tmp/x npm test`: npm (and pnpm) read any
    // of their settings from `npm_config_KEY` (in any case), so a key that
    // runs something is set for the scripts that follow.
    if let Some(key) = npm_config_key(s.name)
        && let Some(npm) = aq_knowledge::tool_config::config_command("npm")
        && npm.effect(&key) == Some(aq_knowledge::tool_config::KeyEffect::Runs)
    {
        judge_npm_setting(ctx, i, s, &key);
        return;
    }
    let Some(&(_, effect)) = VARS.iter().find(|(n, _)| *n == s.name) else {
        return;
    };
    let value = s.value.trim();
    if value.is_empty() {
        // `LD_PRELOAD= cmd` clears it.
        return;
    }
    let temp = temp_entry(value, effect);
    match effect {
        Effect::Preload | Effect::StartupFile => match temp {
            Some(p) => ctx.hit(
                RuleId::EnvCodeFromTemp,
                i,
                format!("`{}` loads `{p}`, in a temporary directory", s.name),
            ),
            None => ctx.hit(
                RuleId::EnvCodeInject,
                i,
                format!("`{}` makes the programs that follow load `{value}`", s.name),
            ),
        },
        Effect::Options(loading) => {
            let loads = value.split_whitespace().any(|o| {
                loading
                    .iter()
                    .any(|l| o == *l || (o.starts_with(l) && o.len() > l.len()))
            });
            match temp {
                Some(p) if loads => ctx.hit(
                    RuleId::EnvCodeFromTemp,
                    i,
                    format!("`{}` loads `{p}`, in a temporary directory", s.name),
                ),
                _ if loads || s.dynamic => ctx.hit(
                    RuleId::EnvCodeInject,
                    i,
                    format!("`{}={value}` loads code into the interpreter", s.name),
                ),
                _ => {}
            }
        }
        Effect::NativePath => {
            if let Some(p) = temp {
                ctx.hit(
                    RuleId::EnvCodeFromTemp,
                    i,
                    format!("`{}` searches `{p}` for native code", s.name),
                );
            }
        }
        Effect::ModulePath => {
            if let Some(p) = temp {
                ctx.hit(
                    RuleId::EnvCodeInject,
                    i,
                    format!("`{}` searches `{p}`, a temporary directory, first", s.name),
                );
            }
        }
        Effect::Command => judge_command(ctx, i, s.name, value),
    }
}

/// The npm setting a variable sets: `npm_config_script_shell` is
/// `script-shell` (npm reads the prefix in any case, `_` for `-`).
fn npm_config_key(name: &str) -> Option<String> {
    let prefix = "npm_config_";
    (name.len() > prefix.len() && name[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| name[prefix.len()..].to_ascii_lowercase().replace('_', "-"))
}

/// An npm setting that runs something, set for the commands that follow:
/// its program in a temporary directory blocks, as a preload library
/// there does; interpreter options are read as `NODE_OPTIONS`; any other
/// program is a command variable.
fn judge_npm_setting(ctx: &mut Ctx, i: usize, s: &Setting, key: &str) {
    let value = s.value.trim();
    if value.is_empty() {
        return;
    }
    if key == "node-options" {
        let options = Setting {
            name: "NODE_OPTIONS",
            value,
            dynamic: s.dynamic,
        };
        judge(ctx, i, &options);
        return;
    }
    let program = value.split_whitespace().next().unwrap_or(value);
    if is_temp_path(program) {
        ctx.hit(
            RuleId::EnvCodeFromTemp,
            i,
            format!(
                "`{}` makes npm run `{program}`, in a temporary directory, for its {key}",
                s.name
            ),
        );
        return;
    }
    judge_command(ctx, i, s.name, value);
}

/// The first entry of a value (a path, a `:` list, options) in a
/// temporary directory anyone can write, or a file descriptor path.
fn temp_entry(value: &str, effect: Effect) -> Option<String> {
    let entries: Vec<&str> = match effect {
        Effect::Options(_) => value
            .split(|ch: char| ch.is_whitespace() || ch == '=' || ch == ':')
            .collect(),
        Effect::Preload => value.split([':', ' ']).collect(),
        _ => value.split(':').collect(),
    };
    entries
        .into_iter()
        .find(|e| is_temp_path(e))
        .map(str::to_string)
}

/// `/tmp`, `/var/tmp`, `/dev/shm`, macOS's `/private/tmp`, `$TMPDIR`, and
/// `/proc/self/fd`, `/dev/fd` (a deleted or memory file).
pub(super) fn is_temp_path(path: &str) -> bool {
    let path = path.trim_matches(|c| c == '"' || c == '\'');
    // `$TMPDIR/x`, `${TMPDIR}/x`, `${TMPDIR:-/tmp}/x`.
    if path.starts_with("$TMPDIR") || path.starts_with("${TMPDIR") {
        return true;
    }
    let p = NormPath::new(path);
    if !p.absolute {
        return false;
    }
    let parts: Vec<&str> = p.parts.iter().map(String::as_str).collect();
    matches!(
        parts.as_slice(),
        ["tmp", ..]
            | ["var", "tmp", ..]
            | ["dev", "shm", ..]
            | ["private", "tmp", ..]
            | ["private", "var", "tmp", ..]
            | ["dev", "fd", ..]
            | ["proc", _, "fd", ..]
    )
}

/// A command held in a variable: anything but a plain viewer or editor
/// asks, and whatever the command itself does is added as if it were on
/// the line.
fn judge_command(ctx: &mut Ctx, i: usize, name: &str, value: &str) {
    // `LESSOPEN='|lesspipe %s'`, `'||cmd %s'`: the pipe marks are less's.
    let value = if name.starts_with("LESS") {
        value.trim_start_matches(['|', '-'])
    } else {
        value
    };
    let analysis = aq_shell::analyze(value);
    let plain = plain_command(&analysis);
    if !plain {
        ctx.hit(
            RuleId::EnvCommandInject,
            i,
            format!("`{name}` runs `{value}`"),
        );
    }
    // Even a plain viewer is judged by what it is given (`PAGER='cat
    // ~/.ssh/id_rsa'`); its asks (plain `ssh` talking to a host) are the
    // outer program's, judged there.
    super::copy_hits(ctx, i, &format!("`{name}`"), &analysis, plain);
}

/// One command, a viewer or editor from [`PLAIN`], with nothing computed
/// and no option that runs a command (`vim -c ':!x'`, `ssh -o ProxyCommand`).
pub(super) fn plain_command(analysis: &aq_shell::Analysis) -> bool {
    let [c] = analysis.commands.as_slice() else {
        return false;
    };
    if !analysis.problems.is_empty() || !c.redirects.is_empty() || !c.assignments.is_empty() {
        return false;
    }
    let Some(program) = c.program() else {
        return false;
    };
    let path = &c.argv[0].text;
    let system_path = !path.contains('/') || path.starts_with("/usr/") || path.starts_with("/bin/");
    if !PLAIN.contains(&program) || !system_path {
        return false;
    }
    c.argv.iter().all(|w| {
        let t = w.text.as_str();
        let runs_code = t.contains('!')
            || t.contains("ProxyCommand")
            || t.contains("LocalCommand")
            || t.contains("KnownHostsCommand")
            || matches!(t, "-c" | "--cmd" | "-l" | "--load" | "--eval")
            || (t == "-S" && program != "less")
            || t.starts_with("--cmd=")
            || t.starts_with("--eval=")
            || (t.starts_with('+') && !t[1..].chars().all(|ch| ch.is_ascii_digit()));
        !w.dynamic && w.feeds.is_empty() && !runs_code
    })
}
