//! Running code: shells and interpreters fed from downloads, decoders or
//! strings; script files; command names computed at run time; files
//! downloaded and run on the same line.

use aq_shell::{Command, Input, interpreter_lang, is_shell};

use super::{Ctx, flag_value, flag_values_text, has_flag, is_flag, operands};
use crate::catalog::RuleId;
use crate::paths::NormPath;

/// Programs that fetch data from the network onto stdout or into a file.
pub(crate) fn is_downloader(c: &Command) -> bool {
    let Some(name) = c.program() else {
        return false;
    };
    match name {
        "curl" | "wget" | "fetch" | "http" | "https" | "xh" | "aria2c" | "axel" | "lynx"
        | "links" | "w3m" | "nc" | "ncat" | "netcat" | "socat" | "telnet" | "ftp" | "tftp"
        | "sftp" | "ssh" | "curlie" | "httpie" | "gh" | "s3cmd" | "rclone" => true,
        "openssl" => c.args().first().is_some_and(|a| a.text == "s_client"),
        "aws" => c.args().iter().any(|a| a.text == "s3"),
        "gsutil" => c.args().iter().any(|a| a.text == "cat" || a.text == "cp"),
        "git" => c.args().iter().any(|a| {
            a.text == "archive" && c.args().iter().any(|r| r.text.starts_with("--remote"))
        }),
        _ => {
            // Interpreter one-liners that fetch.
            c.code.as_ref().is_some_and(super::code::uses_network)
        }
    }
}

/// Programs that decode hidden text.
pub(crate) fn is_decoder(c: &Command) -> bool {
    let Some(name) = c.program() else {
        return false;
    };
    let decode_flag = has_flag(c, Some('d'), &["decode"]) || has_flag(c, Some('D'), &[]);
    match name {
        "base64" | "base32" | "basenc" | "gbase64" => decode_flag,
        "xxd" => has_flag(c, Some('r'), &["revert"]),
        "openssl" => c.args().iter().any(|a| {
            a.text == "-d" || a.text == "-base64" && c.args().iter().any(|b| b.text == "-d")
        }),
        "uudecode" | "rev" | "gunzip" | "zcat" | "xzcat" | "bzcat" | "zstdcat" => true,
        "gzip" | "xz" | "bzip2" | "zstd" => decode_flag,
        "printf" => c
            .args()
            .iter()
            .any(|a| a.text.contains("\\x") || a.text.contains("\\0")),
        // `tr a-z n-za-m` (rot13) maps letters onto other letters; a change
        // of case (`tr a-z A-Z`) or of other characters does not hide text.
        "tr" => {
            let ops = operands(c);
            let letters = |t: &str| t.chars().all(|ch| ch.is_ascii_alphabetic() || ch == '-');
            ops.len() == 2
                && letters(&ops[0].text)
                && letters(&ops[1].text)
                && !ops[0].text.eq_ignore_ascii_case(&ops[1].text)
        }
        _ => false,
    }
}

/// Whether a command runs code from its stdin, a `-c` string or a named script,
/// and if so where that code comes from: command indices.
fn code_sources(ctx: &Ctx, i: usize) -> Option<Vec<usize>> {
    let c = &ctx.commands()[i];
    let name = c.program()?;
    let shell = is_shell(name);
    let sourcing = matches!(name, "source" | ".");
    // awk runs its input only when its code says so (`{system($0)}`).
    let lang = interpreter_lang(name)
        .filter(|l| *l != "awk" || c.code.as_ref().is_some_and(super::code::runs_stdin));
    if !(shell || sourcing || lang.is_some() || name == "eval") || only_checks_syntax(c, name) {
        return None;
    }
    let mut sources = Vec::new();
    // Words that are code or name the script; `deno run -`, `bun run -`:
    // after the runtime's subcommand.
    let mut ops = operands(c);
    if matches!(name, "deno" | "bun") && ops.first().is_some_and(|o| o.text == "run") {
        ops.remove(0);
    }
    for w in c.args() {
        if !w.feeds.is_empty() {
            sources.extend(ctx.word_sources(w));
        }
    }
    let reads_stdin = if shell {
        // `curl … | bash setup.sh`: the script it runs can read the
        // download from its standard input (`source /dev/stdin`).
        c.stdin.iter().any(|s| matches!(s, Input::Pipe(_)))
            || has_flag(c, Some('s'), &[])
            || ops.is_empty()
            || ops
                .first()
                .is_some_and(|o| o.text == "-" || o.text == "/dev/stdin")
            || has_flag(c, Some('i'), &[])
    } else if sourcing {
        ops.first()
            .is_some_and(|o| o.text == "/dev/stdin" || o.text == "-")
    } else if name == "eval" {
        false
    } else {
        // `curl … | python3 -c "import sys; exec(sys.stdin.read())"`: code
        // on the line that runs its input.
        c.code.as_ref().is_some_and(super::code::runs_stdin)
            || c.code.is_none()
                && (ops.is_empty()
                    || ops
                        .first()
                        .is_some_and(|o| o.text == "-" || o.text == "/dev/stdin"))
    };
    if reads_stdin {
        sources.extend(ctx.upstream(i));
        // A here-string of `$(curl ...)`, or `< <(curl ...)`: the script
        // comes from what feeds the text or the named pipe.
        for s in &c.stdin {
            if let Input::Text(w) | Input::File(w) = s {
                sources.extend(ctx.word_sources(w));
            }
        }
    }
    Some(sources)
}

/// Where the script comes from that a program of its own command language
/// is given on the line (awk's program, sed's script, `make -f`, a script
/// an option loads), when a word of it comes from other commands.
fn given_script_sources(ctx: &Ctx, i: usize) -> Option<Vec<usize>> {
    use aq_knowledge::programs::{Does, Via};
    let c = &ctx.commands()[i];
    if c.args().iter().all(|w| w.feeds.is_empty()) {
        return None;
    }
    let name = c.program()?;
    let mut words: Vec<&aq_shell::Word> = Vec::new();
    match name {
        "awk" | "gawk" | "mawk" | "nawk" | "sed" | "gsed" => {
            let explicit = flag_value(c, &["-e", "-f"], &["expression", "file"]);
            if explicit.is_empty() {
                words.extend(operands(c).into_iter().take(1));
            } else {
                words.extend(explicit);
            }
        }
        "make" | "gmake" | "bmake" => words.extend(flag_value(c, &["-f"], &["file", "makefile"])),
        _ => {
            let model = ctx.model(i)?;
            let texts: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
            for cap in model.caps(Does::Load).filter(|cap| cap.via == Via::Option) {
                for k in 0..texts.len() {
                    if cap.option_value(&texts, k).is_some() {
                        words.extend(c.args().get(k + 1));
                    }
                }
            }
        }
    }
    let sources: Vec<usize> = words.iter().flat_map(|w| ctx.word_sources(w)).collect();
    (!sources.is_empty()).then_some(sources)
}

/// Where the commands come from of a program whose input is its own
/// command language, when it reads them from its standard input here:
/// Vim in Ex mode (`vim -es -`), `ed`, `at`, `m4`, `dc`, and any program
/// told to load a script from `/dev/stdin` or `-` (`gdb -x /dev/stdin`,
/// `vim -S -`). Database clients are not among them: a SQL dump piped in
/// is data for the database they talk to.
fn command_input_sources(ctx: &Ctx, i: usize) -> Option<Vec<usize>> {
    use aq_knowledge::programs::{Class, Does, Via};
    let c = &ctx.commands()[i];
    if c.stdin.is_empty() {
        return None;
    }
    let model = ctx.model(i)?;
    let name = c.program()?;
    // Shells and interpreters: `code_sources`.
    if model.class == Some(Class::Database) || is_shell(name) || interpreter_lang(name).is_some() {
        return None;
    }
    let texts: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    let is_stdin = |v: &str| matches!(v, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0");
    let loads_stdin = model
        .caps(Does::Load)
        .filter(|cap| cap.via == Via::Option)
        .any(|cap| (0..texts.len()).any(|k| cap.option_value(&texts, k).is_some_and(is_stdin)));
    let reads_commands = loads_stdin
        || model.caps(Does::Exec).any(|cap| cap.via == Via::Stdin)
            && match model.name.as_str() {
                // Ex mode reads commands; otherwise its input is text to edit.
                "vim" => {
                    c.program() == Some("ex")
                        || texts.iter().any(|t| {
                            t.len() > 1
                                && t.starts_with('-')
                                && !t.starts_with("--")
                                && t[1..].chars().all(|ch| ch.is_ascii_alphabetic())
                                && t[1..].contains(['e', 'E'])
                        })
                }
                "ed" | "at" => !texts.contains(&"-f"),
                _ => operands(c).iter().all(|o| is_stdin(&o.text)),
            };
    if !reads_commands {
        return None;
    }
    let mut sources = ctx.upstream(i);
    for s in &c.stdin {
        if let Input::Text(w) | Input::File(w) = s {
            sources.extend(ctx.word_sources(w));
        }
    }
    Some(sources)
}

/// `php -l F`, `bash -n F`, `node --check F`, `ruby -c F`, `perl -c F`:
/// the code is parsed to check its syntax, and nothing of it runs.
/// Python's standard modules that compile or check the files they are
/// given without running them (`python -m py_compile F…`).
const PYTHON_CHECKING_MODULES: &[&str] = &["py_compile", "compileall", "tabnanny"];

fn only_checks_syntax(c: &Command, name: &str) -> bool {
    let flag = |short: char, long: &[&str]| has_flag(c, Some(short), long);
    match interpreter_lang(name) {
        // `xargs -0 python -m py_compile`: the files it is fed are compiled.
        Some("python") => c
            .args()
            .windows(2)
            .any(|w| w[0].text == "-m" && PYTHON_CHECKING_MODULES.contains(&w[1].text.as_str())),
        Some("php") => flag('l', &["syntax-check"]),
        Some("node") => flag('c', &["check"]) && !has_flag(c, Some('e'), &["eval"]),
        Some("ruby") | Some("perl") => {
            c.args().iter().any(|a| a.text == "-c") && !has_flag(c, Some('e'), &[])
        }
        _ => is_shell(name) && c.args().iter().any(|a| a.text == "-n"),
    }
}

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    if c.argv.is_empty() {
        return;
    }
    // Runtimes that run a program straight from a URL.
    if let Some(url) = remote_program(c) {
        ctx.hit(
            RuleId::NetDownloadExec,
            i,
            format!("runs code straight from {url}"),
        );
        return;
    }
    // Interpreter code that hands strings to a shell is a shell string.
    if c.code.is_some()
        && ctx.commands().get(i + 1).is_some_and(|n| {
            n.via.last().is_some_and(|v| v.ends_with(" code")) && n.depth > c.depth
        })
    {
        ctx.hit(
            RuleId::ExecShellString,
            i,
            format!(
                "{} code runs shell commands",
                c.code
                    .as_ref()
                    .map(|k| k.lang.as_str())
                    .unwrap_or("interpreter")
            ),
        );
    }
    let first = &c.argv[0];
    if first.dynamic || c.program().is_none() {
        let mut sources = ctx.word_sources(first);
        // `curl … | while read l; do eval "$l"; done`: a variable `read`
        // filled from its input.
        for var in &first.vars {
            sources.extend(read_sources(ctx, i, var));
        }
        let unreadable = c.program().is_none();
        if let Some(d) = ctx.any_source(&sources, is_downloader) {
            let what = ctx.commands()[d].display();
            ctx.hit(
                RuleId::NetPipeToShell,
                i,
                format!("the command to run comes from `{what}`"),
            );
        } else if let Some(d) = ctx
            .any_source(&ctx.upstream(i), is_downloader)
            .filter(|_| unreadable)
        {
            // `curl … | $RUN`: what reads the download cannot be read
            // here; it may well be a shell.
            let what = ctx.commands()[d].display();
            ctx.hit(
                RuleId::NetPipeToShell,
                i,
                format!(
                    "`{what}` is fed into `{}`, which is only known at run time",
                    first.text
                ),
            );
        } else if unreadable
            || !first.feeds.is_empty()
            // `"$UE_ROOT/Engine/Binaries/Linux/UnrealEditor-Cmd"`: only the
            // directory is computed; the program's name is on the line, and
            // judged as that program (as `/opt/x/git` is git).
            || first
                .text
                .rsplit_once('/')
                .map_or(first.text.as_str(), |(_, name)| name)
                .contains(['$', '`'])
            || !first.text.contains('/') && first.text.contains(['$', '`'])
        {
            ctx.hit(
                RuleId::ExecDynamicCommand,
                i,
                format!("`{}` is only known at run time", first.text),
            );
        }
        // A name read with its default (`"${PYTHON:-python3}"`, when the
        // line does not set it) is judged as that program; one hidden in
        // pieces (`c${x}at`) is too, and asks as well.
        if unreadable {
            return;
        }
    }
    let name = c.program().unwrap_or_default().to_string();
    // `script -qc "npm test"`, `flock /tmp/l -c 'make'`, `watch 'ls | wc -l'`:
    // a string run by a shell, as `sh -c` is (the string itself is judged
    // where the wrapper is unwrapped).
    let ops = operands(c);
    let shell_string = match name.as_str() {
        "script" | "flock" => has_flag(c, Some('c'), &["command"]),
        // `cmd.exe /c CMD`; `powershell.exe -Command CMD`: Windows' shells
        // given a command line, as `sh -c` is.
        "cmd.exe" | "cmd" => c
            .args()
            .iter()
            .any(|a| matches!(a.text.as_str(), "/c" | "/C" | "/k" | "/K")),
        _ if interpreter_lang(&name) == Some("powershell") => c.code.is_some(),
        "watch" => {
            !has_flag(c, Some('x'), &["exec"])
                && ops.len() == 1
                && ops[0].text.contains(char::is_whitespace)
        }
        _ => false,
    };
    if shell_string {
        ctx.hit(
            RuleId::ExecShellString,
            i,
            format!("`{name}` hands a command string to a shell"),
        );
    }
    // `explorer.exe .` opens a folder; given a program or a script
    // (`setup.exe`, `run.bat`, `x.ps1`, a shortcut), Windows runs it.
    if name == "explorer.exe"
        && let Some(w) = ops.iter().find(|w| {
            let l = w.text.to_ascii_lowercase();
            [
                ".exe", ".bat", ".cmd", ".com", ".ps1", ".vbs", ".vbe", ".js", ".jse", ".wsf",
                ".hta", ".msi", ".lnk", ".scr", ".pif", ".cpl",
            ]
            .iter()
            .any(|x| l.ends_with(x))
        })
    {
        ctx.hit(
            RuleId::ExecScriptFile,
            i,
            format!("`explorer.exe {}` runs it", w.text),
        );
    }
    // `awk "$(curl …)"`, `sed "$(curl …)" F`, `make -f <(curl …)`, `vim -S
    // <(curl …)`, `gdb -x <(curl …)`: the script of a program's own command
    // language given on the line, from a download.
    if let Some(d) =
        given_script_sources(ctx, i).and_then(|sources| ctx.any_source(&sources, is_downloader))
    {
        let what = ctx.commands()[d].display();
        ctx.hit(
            RuleId::NetPipeToShell,
            i,
            format!("`{name}` runs a script it is given from `{what}`"),
        );
        return;
    }
    if let Some(sources) = command_input_sources(ctx, i) {
        if let Some(d) = ctx.any_source(&sources, is_downloader) {
            let what = ctx.commands()[d].display();
            ctx.hit(
                RuleId::NetPipeToShell,
                i,
                format!("`{name}` runs the commands it reads from `{what}`"),
            );
            return;
        }
        if let Some(d) = ctx.any_source(&sources, is_decoder) {
            let what = ctx.commands()[d].display();
            ctx.hit(
                RuleId::ExecDecodedPayload,
                i,
                format!("`{name}` runs the commands decoded by `{what}`"),
            );
            return;
        }
    }
    if let Some(sources) = code_sources(ctx, i) {
        if let Some(d) = ctx.any_source(&sources, is_downloader) {
            let what = ctx.commands()[d].display();
            ctx.hit(
                RuleId::NetPipeToShell,
                i,
                format!("`{name}` runs code from `{what}`"),
            );
            return;
        }
        if let Some(d) = ctx.any_source(&sources, is_decoder) {
            let what = ctx.commands()[d].display();
            ctx.hit(
                RuleId::ExecDecodedPayload,
                i,
                format!("`{name}` runs code decoded by `{what}`"),
            );
            return;
        }
        let c = &ctx.commands()[i];
        let shell_like = is_shell(&name) || name == "eval";
        if shell_like {
            let ops = operands(c);
            let has_c = c
                .args()
                .iter()
                .any(|a| is_flag(a) && !a.text.starts_with("--") && a.text[1..].contains('c'));
            if name == "eval" || has_c {
                ctx.hit(
                    RuleId::ExecShellString,
                    i,
                    format!("`{}` runs a shell string", c.display()),
                );
            } else if let Some(script) = ops
                .first()
                .filter(|o| o.text != "-" && o.text != "/dev/stdin")
            {
                ctx.hit(
                    RuleId::ExecScriptFile,
                    i,
                    format!("`{name}` runs the script `{}`", script.text),
                );
            } else if !sources.is_empty() || c.stdin.iter().any(|s| !matches!(s, Input::Pipe(_))) {
                ctx.hit(
                    RuleId::ExecShellString,
                    i,
                    format!("`{name}` runs a script from its input"),
                );
            } else if has_flag(c, Some('i'), &[]) || ops.is_empty() {
                ctx.hit(
                    RuleId::ExecShellString,
                    i,
                    format!("`{name}` starts an interactive shell"),
                );
            }
        } else if matches!(name.as_str(), "source" | ".") {
            check_source(ctx, i);
        } else if !sources.is_empty()
            && ctx.commands()[i]
                .code
                .as_ref()
                .is_none_or(super::code::runs_stdin)
        {
            ctx.hit(
                RuleId::ExecShellString,
                i,
                format!("`{name}` runs a program read from a pipe"),
            );
        }
        return;
    }
    // A script run by path: `./deploy.sh`, `scripts/x.bash`.
    let c = &ctx.commands()[i];
    let written = &c.argv[0].text;
    if written.contains('/')
        && (name.ends_with(".sh") || name.ends_with(".bash") || name.ends_with(".zsh"))
    {
        ctx.hit(
            RuleId::ExecScriptFile,
            i,
            format!("runs the script `{written}`"),
        );
    }
}

/// Where the value of `var` comes from when `read` (or `mapfile`) before
/// command `i` fills it: the commands feeding that `read`'s input, a
/// here-string's substitutions, the file it reads.
fn read_sources(ctx: &Ctx, i: usize, var: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for j in (0..i).rev() {
        let c = &ctx.commands()[j];
        let Some(name) = c.program() else { continue };
        let names = match name {
            "read" => read_names(c, "dnNptui", 'a', "REPLY"),
            "mapfile" | "readarray" => read_names(c, "dnOsuCc", '\0', "MAPFILE"),
            _ => continue,
        };
        if !names.iter().any(|n| n == var) {
            continue;
        }
        out.extend(ctx.upstream(j));
        for s in &c.stdin {
            if let Input::Text(w) | Input::File(w) = s {
                out.extend(ctx.word_sources(w));
            }
        }
        break;
    }
    out
}

/// The variables `read` (or `mapfile`) assigns: its operands, the value
/// of `array` (`read -a NAME`), or `default` when none is named. Options
/// in `valued` take a value.
fn read_names(c: &Command, valued: &str, array: char, default: &str) -> Vec<String> {
    let mut names = Vec::new();
    let args = c.args();
    let mut k = 0;
    while k < args.len() {
        let t = args[k].text.as_str();
        if let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) {
            if let Some(pos) = cluster.find(|ch: char| ch == array || valued.contains(ch)) {
                let flag = cluster[pos..].chars().next().unwrap_or(' ');
                let attached = &cluster[pos + 1..];
                let value = if attached.is_empty() {
                    k += 1;
                    args.get(k).map(|w| w.text.clone())
                } else {
                    Some(attached.to_string())
                };
                if flag == array {
                    names.extend(value);
                }
            }
        } else {
            names.push(t.to_string());
        }
        k += 1;
    }
    if names.is_empty() {
        names.push(default.to_string());
    }
    names
}

/// `source FILE` / `. FILE`: environment files and activation scripts are
/// ordinary; other scripts are script files.
fn check_source(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(file) = operands(c).first().map(|w| w.text.clone()) else {
        return;
    };
    let p = NormPath::new(&file);
    let name = p.name();
    if crate::paths::is_dotenv_secret(name) {
        ctx.hit(
            RuleId::SecretSourceEnv,
            i,
            format!("loads `{file}` into the environment"),
        );
        return;
    }
    let routine = name == "activate"
        || name == "activate.fish"
        || p.ends_with_text(&[".cargo", "env"])
        || name == "nvm.sh"
        || name == "env.sh" && p.in_home
        || p.in_home && crate::paths::is_shell_rc(&file)
        || name == "virtualenvwrapper.sh"
        || name == "sdkman-init.sh"
        || name == "asdf.sh";
    if !routine {
        ctx.hit(
            RuleId::ExecScriptFile,
            i,
            format!("runs the script `{file}` in this shell"),
        );
    }
}

/// `deno run https://...`, `bun run https://...`, `npx https://...`,
/// `pip install https://...` is an install (asked elsewhere).
fn remote_program(c: &Command) -> Option<String> {
    let name = c.program()?;
    let ops = operands(c);
    let is_url = |t: &str| t.starts_with("https://") || t.starts_with("http://");
    let url = |w: &&&aq_shell::Word| is_url(&w.text);
    match name {
        "deno" | "bun" => {
            let sub = ops.first()?.text.as_str();
            if matches!(sub, "run" | "x" | "eval") || is_url(sub) {
                return ops.iter().find(url).map(|w| w.text.clone());
            }
            None
        }
        "npx" | "bunx" | "pnpx" => ops.iter().find(url).map(|w| w.text.clone()),
        "node" | "python" | "python3" | "ruby" | "perl" | "php" => ops
            .first()
            .filter(|w| is_url(&w.text))
            .map(|w| w.text.clone()),
        _ => None,
    }
}

/// Files a downloader writes: `curl -o F`, `curl -O URL`, `wget -O F`,
/// `wget URL`, `curl URL > F`.
fn downloaded_files(c: &Command) -> Vec<String> {
    let mut out = Vec::new();
    let Some(name) = c.program() else { return out };
    match name {
        "curl" => {
            out.extend(flag_values_text(c, &["-o"], &["output"]));
            if has_flag(c, Some('O'), &["remote-name"]) {
                out.extend(urls(c).iter().map(|u| url_basename(u)));
            }
        }
        "wget" => {
            let named = flag_values_text(c, &["-O"], &["output-document"]);
            if named.is_empty() {
                out.extend(urls(c).iter().map(|u| url_basename(u)));
            }
            out.extend(named);
        }
        // `aria2c -o NAME [-d DIR] URL`, `axel -o NAME URL`: the name, in
        // the directory when one is given.
        "aria2c" | "axel" => {
            let dir = flag_values_text(c, &["-d"], &["dir"]).into_iter().next();
            let mut named = flag_values_text(c, &["-o"], &["out", "output"]);
            if named.is_empty() {
                named.extend(urls(c).iter().map(|u| url_basename(u)));
            }
            for n in named {
                match &dir {
                    Some(d) if !n.starts_with('/') => {
                        out.push(format!("{}/{n}", d.trim_end_matches('/')));
                    }
                    _ => out.push(n),
                }
            }
        }
        _ => {}
    }
    for r in &c.redirects {
        if r.kind.writes() && r.fd.is_none_or(|f| f == 1) {
            out.push(r.target.text.clone());
        }
    }
    out.retain(|f| f != "-" && !f.is_empty());
    out
}

fn urls(c: &Command) -> Vec<String> {
    c.args()
        .iter()
        .filter(|a| a.text.contains("://"))
        .map(|a| a.text.clone())
        .collect()
}

fn url_basename(url: &str) -> String {
    let path = url.split("://").nth(1).unwrap_or(url);
    let path = path.split(['?', '#']).next().unwrap_or(path);
    path.rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("index.html")
        .to_string()
}

fn same_file(a: &str, b: &str) -> bool {
    let (pa, pb) = (NormPath::new(a), NormPath::new(b));
    pa.parts == pb.parts && pa.in_home == pb.in_home && pa.absolute == pb.absolute
}

/// A file downloaded earlier on the line and then run.
pub(crate) fn check_download_then_run(ctx: &mut Ctx) {
    let commands = ctx.commands();
    let mut downloaded: Vec<(usize, String)> = Vec::new();
    let mut found = Vec::new();
    // Directories filled from the network: `git clone URL dir`,
    // `curl URL | tar x [-C dir]`.
    let mut downloaded_dirs: Vec<(usize, String)> = Vec::new();
    for (i, c) in commands.iter().enumerate() {
        if is_downloader(c) {
            downloaded.extend(downloaded_files(c).into_iter().map(|f| (i, f)));
            continue;
        }
        let (copied, dirs) = remote_copies(c);
        if !copied.is_empty() || !dirs.is_empty() {
            downloaded.extend(copied.into_iter().map(|f| (i, f)));
            downloaded_dirs.extend(dirs.into_iter().map(|f| (i, f)));
            continue;
        }
        if let Some(dir) = cloned_dir(c) {
            downloaded_dirs.push((i, dir));
            continue;
        }
        if matches!(
            c.program(),
            Some("tar" | "bsdtar" | "unzip" | "7z" | "bsdunzip")
        ) {
            // Piped from a download, or given an archive downloaded earlier
            // (`curl -o x.zip URL && unzip x.zip`).
            let from_net = ctx
                .upstream(i)
                .into_iter()
                .find(|&u| is_downloader(&commands[u]))
                .or_else(|| {
                    let texts: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
                    downloaded
                        .iter()
                        .find(|(_, f)| {
                            texts.iter().any(|t| {
                                same_file(t, f)
                                    || t.strip_prefix("-f").is_some_and(|v| same_file(v, f))
                            })
                        })
                        .map(|(d, _)| *d)
                });
            if let Some(u) = from_net {
                let dir = flag_values_text(c, &["-C", "-d"], &["directory"])
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| ".".to_string());
                downloaded_dirs.push((u, dir));
            }
            continue;
        }
        if (downloaded.is_empty() && downloaded_dirs.is_empty()) || c.argv.is_empty() {
            continue;
        }
        let name = c.program().unwrap_or("");
        let mut run_targets: Vec<&str> = vec![c.argv[0].text.as_str()];
        if (is_shell(name) || matches!(name, "source" | ".") || interpreter_lang(name).is_some())
            && let Some(op) = operands(c).first()
        {
            run_targets.push(op.text.as_str());
        }
        // `go run main.go`, `deno run x.ts`: the file a runtime's run mode
        // is given.
        let ops = operands(c);
        if matches!(name, "go" | "deno" | "bun")
            && ops.first().is_some_and(|o| o.text == "run")
            && let Some(op) = ops.get(1)
        {
            run_targets.push(op.text.as_str());
        }
        // `make -f m.mk`; a project file the tool runs as code
        // (`Makefile`, `conftest.py`, `build.rs`, `package.json`, a git hook).
        let makefiles = if matches!(name, "make" | "gmake" | "bmake") {
            super::written::makefiles(c)
        } else {
            Vec::new()
        };
        let (tool, sub) = project_tool(c, name);
        let cwd = super::cwd_before(ctx, i);
        for (d, file) in &downloaded {
            // Downloaded where the tool works.
            let runs_as_project_code = super::cwd_before(ctx, *d) == cwd
                && aq_knowledge::project_code::runs_project_file(tool, sub, file);
            if run_targets.iter().any(|t| same_file(t, file))
                || makefiles.iter().any(|m| same_file(&m.text, file))
                || runs_as_project_code
            {
                found.push((i, *d, file.clone()));
            }
        }
        // `make -C dir`, `cd dir && make`, `cd dir && npm install`: the
        // tool runs the downloaded tree's project files (its Makefile, its
        // package.json's scripts, its build.rs, its tests).
        let build_dir = if matches!(name, "make" | "gmake") {
            flag_values_text(c, &["-C"], &["directory"])
                .into_iter()
                .next()
                .or_else(|| super::cwd_before(ctx, i))
        } else if !downloaded_dirs.is_empty()
            && aq_knowledge::project_code::runs_project_files(tool, sub)
        {
            super::cwd_before(ctx, i)
        } else {
            None
        };
        for (d, dir) in &downloaded_dirs {
            if let Some(b) = &build_dir
                && (inside(b, dir) || same_file(b, dir))
            {
                let what = if matches!(name, "make" | "gmake") {
                    format!("{b}/Makefile")
                } else {
                    format!("the project files of {b}")
                };
                found.push((i, *d, what));
                continue;
            }
            // A program name without a `/` is looked up on the PATH (`ls`);
            // a script operand is a file (`sh install.sh`).
            if let Some((_, t)) = run_targets
                .iter()
                .enumerate()
                .find(|(k, t)| inside(t, dir) && (t.contains('/') || dir == "." && *k > 0))
            {
                found.push((i, *d, t.to_string()));
            }
        }
    }
    for (i, d, file) in found {
        let what = ctx.commands()[d].display();
        ctx.hit(
            RuleId::NetDownloadExec,
            i,
            format!("runs `{file}`, downloaded by `{what}`"),
        );
    }
}

/// The tool a command is, for [`aq_knowledge::project_code`], and what it
/// is asked to do: `./gradlew build` is `gradlew`, `python -m pytest` is
/// `pytest`, `git -C . commit` is `git commit`.
fn project_tool<'c>(c: &'c Command, name: &'c str) -> (&'c str, Option<&'c str>) {
    let ops = operands(c);
    if interpreter_lang(name) == Some("python")
        && let Some(k) = c.args().iter().position(|a| a.text == "-m")
        && let Some(module) = c.args().get(k + 1)
    {
        return (module.text.as_str(), None);
    }
    let sub = if name == "git" {
        super::net::git_subcommand(c)
    } else {
        ops.first().map(|o| o.text.as_str())
    };
    (name, sub)
}

/// Files and directories `scp` or `rsync` bring from another host: the
/// destination, and when it is a directory, the source's name in it; a
/// tree copied recursively (`rsync -a host:/opt/tools/ ./tools/`) is a
/// downloaded directory.
fn remote_copies(c: &Command) -> (Vec<String>, Vec<String>) {
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    let Some(name) = c.program() else {
        return (files, dirs);
    };
    if !matches!(name, "scp" | "rsync") {
        return (files, dirs);
    }
    let ops: Vec<&str> = operands(c).iter().map(|w| w.text.as_str()).collect();
    let Some((dest, sources)) = ops.split_last() else {
        return (files, dirs);
    };
    let remote = |t: &str| {
        t.contains("://")
            || t.split_once(':')
                .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
    };
    if remote(dest) || !sources.iter().any(|s| remote(s)) {
        return (files, dirs);
    }
    let recursive = has_flag(c, Some('r'), &["recursive"])
        || name == "rsync" && has_flag(c, Some('a'), &["archive"]);
    let dest = dest.trim_end_matches('/');
    files.push(dest.to_string());
    for s in sources.iter().filter(|s| remote(s)) {
        let base = s
            .trim_end_matches('/')
            .rsplit(['/', ':'])
            .next()
            .unwrap_or(s);
        if !base.is_empty() {
            files.push(format!("{dest}/{base}"));
        }
        if recursive {
            // rsync's `SRC/` copies what is inside SRC.
            dirs.push(if name == "rsync" && s.ends_with('/') {
                dest.to_string()
            } else {
                format!("{dest}/{base}")
            });
        }
    }
    (files, dirs)
}

/// `git clone URL [dir]`: the directory the clone creates.
fn cloned_dir(c: &Command) -> Option<String> {
    if c.program() != Some("git") {
        return None;
    }
    let ops = operands(c);
    let pos = ops.iter().position(|w| w.text == "clone")?;
    let rest: Vec<&str> = ops[pos + 1..].iter().map(|w| w.text.as_str()).collect();
    let url = rest.first()?;
    Some(match rest.get(1) {
        Some(dir) => dir.to_string(),
        None => url_basename(url).trim_end_matches(".git").to_string(),
    })
}

/// Whether path `t` is inside directory `dir` (`.` holds every relative path).
fn inside(t: &str, dir: &str) -> bool {
    let (pt, pd) = (NormPath::new(t), NormPath::new(dir));
    if dir == "." {
        return !pt.absolute && !pt.in_home && !pt.parts.is_empty();
    }
    pt.in_home == pd.in_home
        && pt.absolute == pd.absolute
        && pt.parts.len() > pd.parts.len()
        && pt.parts.starts_with(&pd.parts)
}

trait EndsWithText {
    fn ends_with_text(&self, tail: &[&str]) -> bool;
}

impl EndsWithText for NormPath {
    fn ends_with_text(&self, tail: &[&str]) -> bool {
        self.parts.len() >= tail.len()
            && self.parts[self.parts.len() - tail.len()..]
                .iter()
                .zip(tail)
                .all(|(a, b)| a == b)
    }
}
