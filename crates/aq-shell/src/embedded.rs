//! Code given to interpreters on the command line (`python -c`, `perl -e`,
//! `node -e`, `awk 'BEGIN{...}'`, a here-document fed to `python3`): found,
//! kept whole for the rules, and searched for the shell commands it runs
//! (`os.system("...")`, `` `...` ``, `system(...)`), which are then analyzed
//! like any other nested shell string.

use crate::calls::{Form, call_command};
use crate::model::{Code, Command, Input};

/// The interpreter family of a program name (`python3.12` is `python`).
pub fn interpreter_lang(name: &str) -> Option<&'static str> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match base {
        "python" | "pypy" => "python",
        "perl" => "perl",
        "ruby" | "irb" => "ruby",
        // ts-node and tsx run TypeScript with node's `-e`/`-p`.
        "node" | "nodejs" | "bun" | "deno" | "ts-node" | "tsx" => "node",
        "php" => "php",
        "lua" | "luajit" => "lua",
        "Rscript" | "R" => "r",
        "osascript" => "applescript",
        "awk" | "gawk" | "mawk" | "nawk" => "awk",
        // `expect` is Tcl with `spawn`.
        "tclsh" | "wish" | "expect" => "tcl",
        "pwsh" | "powershell" | "powershell.exe" | "pwsh.exe" => "powershell",
        "julia" => "julia",
        "elixir" => "elixir",
        // The JVM's scripting shells: jshell (its input), jrunscript,
        // Groovy and Scala (`-e CODE`).
        "jshell" | "jrunscript" | "groovy" | "scala" | "kotlin" | "kotlinc" => "java",
        "raku" | "rakudo" | "perl6" => "raku",
        "erl" => "erlang",
        "octave" | "octave-cli" => "octave",
        "ghc" | "ghci" => "haskell",
        "ocaml" => "ocaml",
        "crystal" => "crystal",
        // Lisps and Schemes.
        "guile" | "sbcl" | "clisp" | "racket" | "ecl" | "gosh" | "csi" | "chibi-scheme" | "bb"
        | "clojure" | "clj" => "lisp",
        _ => return None,
    })
}

/// The language of code given to a program that is not otherwise an
/// interpreter, by an option only (`emacs --batch --eval '(...)'`): it
/// runs no script file and reads no program from its input.
fn eval_only_lang(name: &str) -> Option<&'static str> {
    match name {
        "emacs" | "emacs-nox" | "xemacs" => Some("elisp"),
        // `mix run -e CODE`, `iex -e CODE`: Elixir.
        "mix" | "iex" => Some("elixir"),
        _ => None,
    }
}

/// The code flag of each interpreter (`-c` for python, `-e` for perl ...).
fn code_flags(lang: &str) -> &'static [&'static str] {
    match lang {
        "python" => &["-c"],
        "perl" => &["-e", "-E"],
        "ruby" | "lua" | "r" | "applescript" | "haskell" | "ocaml" => &["-e"],
        "node" => &["-e", "--eval", "-p", "--print"],
        "php" => &["-r"],
        "julia" => &["-e", "--eval", "-E", "--print"],
        "elixir" => &["-e", "--eval"],
        "java" | "raku" => &["-e"],
        "erlang" => &["-eval"],
        "octave" => &["--eval"],
        // `expect -c`; Tcl's own shells take a file or their input.
        "tcl" => &["-c"],
        // guile -c, sbcl/racket/ecl --eval, clisp -x, racket/gosh/csi -e.
        "lisp" => &["-c", "--eval", "-eval", "-x", "-e"],
        "elisp" => &["--eval", "-eval", "--execute", "-execute"],
        _ => &[],
    }
}

/// Options of an interpreter that take the next word as their value (a
/// module to preload, a directory, a setting), not a script.
fn valued_options(lang: &str) -> &'static [&'static str] {
    match lang {
        "node" => &[
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
            "-C",
            "--conditions",
            "--env-file",
            "--title",
            "--input-type",
        ],
        "python" => &["-W", "-X"],
        "ruby" => &["-r", "-I", "-C", "-E"],
        "perl" => &["-I", "-M", "-m"],
        "php" => &["-d", "-c"],
        _ => &[],
    }
}

/// Finds the code an interpreter command runs, if it is on the line: after
/// its code flag, or read from its input (a here-document, or what
/// `piped` says literal `echo`/`printf` output piped into it is).
pub(crate) fn code_of(command: &Command, piped: &dyn Fn() -> Option<String>) -> Option<Code> {
    let name = command.program()?;
    if let Some(code) = hosted_code(name, command) {
        return Some(code);
    }
    let eval_only = eval_only_lang(name);
    let lang = interpreter_lang(name).or(eval_only)?;
    let args = command.args();
    let mut text = String::new();
    let mut saw_script = false;
    if lang == "awk" {
        text = awk_program(args.iter().map(|w| w.text.as_str()))?;
    } else if lang == "powershell" {
        match powershell_code(name, args) {
            PowerShellCode::Text(t) => text = t,
            PowerShellCode::Script => saw_script = true,
            PowerShellCode::Input => {}
        }
    } else {
        let flags = code_flags(lang);
        let mut i = 0;
        while i < args.len() {
            let a = args[i].text.as_str();
            // Clustered short options (`perl -ne`).
            let is_flag = flags.contains(&a)
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && flags.iter().any(|f| {
                        f.len() == 2
                            && a.len() > 2
                            && a.ends_with(&f[1..])
                            && a[1..].chars().all(|c| c.is_ascii_alphabetic())
                    }));
            if is_flag {
                if let Some(code) = args.get(i + 1) {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&code.text);
                }
                i += 2;
                continue;
            }
            if valued_options(lang).contains(&a) {
                // `node -r dotenv/config -e …`: the value is no script.
                i += 2;
                continue;
            }
            if let Some(v) = a
                .strip_prefix("--eval=")
                .or_else(|| a.strip_prefix("--print="))
            {
                text.push_str(v);
            } else if a == "eval" && text.is_empty() && i == 0 && matches!(name, "deno" | "crystal")
            {
                // `deno eval CODE`, `crystal eval CODE`.
                if let Some(code) = args.get(i + 1) {
                    text.push_str(&code.text);
                }
                i += 1;
            } else if a == "run" && i == 0 && matches!(name, "deno" | "bun") {
                // `deno run -`, `bun run -`: the script operand follows.
            } else if a == "-" {
                saw_script = false;
            } else if eval_only.is_some() {
                // Every option of an editor is read, files among them.
            } else if (!a.starts_with('-') && text.is_empty()) || (lang == "python" && a == "-m") {
                // A script file or a module: the code is not on the line.
                saw_script = true;
                break;
            }
            i += 1;
        }
    }
    if text.is_empty() && !saw_script && eval_only.is_none() {
        // `python3 <<EOF` and `python3 - <<<'...'` read the program from stdin.
        for input in &command.stdin {
            if let Input::Text(t) = input {
                text.push_str(&t.text);
            }
        }
        // `echo "import shutil; ..." | python3`.
        if text.is_empty()
            && let Some(t) = piped()
        {
            text = t;
        }
    }
    if text.is_empty() {
        return None;
    }
    let literals = code_literals(lang, &text);
    Some(Code {
        lang: lang.to_string(),
        text,
        literals,
    })
}

/// Where a PowerShell command line's code is.
enum PowerShellCode {
    /// On the line (`-Command`, or the first operand of Windows
    /// PowerShell, whose default parameter is `-Command`).
    Text(String),
    /// In a script file (`-File F`, or pwsh's first operand).
    Script,
    /// Read from its input (`-Command -`, `-File -`, or nothing given).
    Input,
}

/// PowerShell's own parameters: any unambiguous prefix names one, without
/// regard to case (`-NoP`, `-w hidden`, `-ep bypass`, `/c`).
fn powershell_code(name: &str, args: &[crate::model::Word]) -> PowerShellCode {
    // Parameters that take a value, with the shortest prefix each accepts.
    const VALUED: &[(&str, usize)] = &[
        ("configurationname", 4),
        ("custompipename", 2),
        ("encodedarguments", 8),
        ("executionpolicy", 2),
        ("inputformat", 2),
        ("outputformat", 1),
        ("psconsolefile", 2),
        ("settingsfile", 2),
        ("version", 1),
        ("windowstyle", 1),
        ("workingdirectory", 2),
        ("wd", 2),
    ];
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        let Some(p) = a.strip_prefix(['-', '/']).filter(|p| !p.is_empty()) else {
            // The first operand: a command for Windows PowerShell, a
            // script file for pwsh.
            if name.starts_with("pwsh") {
                return PowerShellCode::Script;
            }
            let rest: Vec<&str> = args[i..].iter().map(|w| w.text.as_str()).collect();
            return PowerShellCode::Text(rest.join(" "));
        };
        let p = p.to_ascii_lowercase();
        let names = |full: &str, min: usize| p.len() >= min && full.starts_with(p.as_str());
        if p == "c" || names("command", 2) {
            // The rest of the line is the command; `-` reads it from stdin.
            let rest: Vec<&str> = args[i + 1..].iter().map(|w| w.text.as_str()).collect();
            return match rest.as_slice() {
                [] | ["-"] => PowerShellCode::Input,
                _ => PowerShellCode::Text(rest.join(" ")),
            };
        }
        if p == "e" || p == "ec" || names("encodedcommand", 3) {
            let code = args.get(i + 1).map(|w| w.text.clone()).unwrap_or_default();
            return PowerShellCode::Text(code);
        }
        if p == "f" || names("file", 2) {
            return match args.get(i + 1).map(|w| w.text.as_str()) {
                None | Some("-") => PowerShellCode::Input,
                Some(_) => PowerShellCode::Script,
            };
        }
        if VALUED.iter().any(|(full, min)| names(full, *min)) || p == "ep" || p == "ex" {
            i += 1;
        }
        i += 1;
    }
    PowerShellCode::Input
}

/// Code a program runs in an interpreter it embeds, given in an option:
/// Blender's `--python-expr CODE` is Python.
fn hosted_code(name: &str, command: &Command) -> Option<Code> {
    let (lang, flag) = match name {
        "blender" => ("python", "--python-expr"),
        _ => return None,
    };
    let args = command.args();
    let mut text = String::new();
    for (k, a) in args.iter().enumerate() {
        let value = if a.text == flag {
            args.get(k + 1).map(|w| w.text.as_str())
        } else {
            a.text.strip_prefix(flag).and_then(|r| r.strip_prefix('='))
        };
        if let Some(v) = value {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(v);
        }
    }
    if text.is_empty() {
        return None;
    }
    let literals = code_literals(lang, &text);
    Some(Code {
        lang: lang.to_string(),
        text,
        literals,
    })
}

/// The program text of an awk command: the first operand, unless `-f` names a file.
fn awk_program<'a>(mut args: impl Iterator<Item = &'a str>) -> Option<String> {
    while let Some(a) = args.next() {
        match a {
            "-f" | "--file" => return None,
            "-F" | "-v" | "--assign" | "--field-separator" | "-i" | "-l" => {
                args.next();
            }
            "--" => return args.next().map(str::to_string),
            _ if a.starts_with('-') && a.len() > 1 => {}
            _ => return Some(a.to_string()),
        }
    }
    None
}

/// Calls that run a program, per language, and how each takes it (see
/// [`Form`]): a shell command line, or an argument vector.
fn shell_calls(lang: &str) -> &'static [(&'static str, Form)] {
    use Form::{Auto, Shell};
    match lang {
        "python" => &[
            ("os.system", Auto),
            ("os.popen", Shell),
            ("subprocess.run", Auto),
            ("subprocess.call", Auto),
            ("subprocess.Popen", Auto),
            ("subprocess.check_output", Auto),
            ("subprocess.check_call", Auto),
            ("subprocess.getoutput", Auto),
            ("subprocess.getstatusoutput", Auto),
            ("os.execv", Auto),
            ("os.execvp", Auto),
            ("os.execl", Auto),
            ("os.execlp", Auto),
            ("os.execve", Auto),
            ("os.execvpe", Auto),
            ("os.spawnl", Auto),
            ("os.spawnlp", Auto),
            ("os.spawnv", Auto),
            ("os.spawnvp", Auto),
            ("os.posix_spawn", Auto),
            ("os.posix_spawnp", Auto),
            ("pty.spawn", Auto),
            ("commands.getoutput", Auto),
            // However the module was reached (`__import__("os").system`,
            // `from os import system`), these names only ever run a shell.
            ("system", Auto),
            ("popen", Shell),
            ("Popen", Auto),
            ("check_output", Auto),
            ("check_call", Auto),
            ("getoutput", Auto),
            ("getstatusoutput", Auto),
            ("execvp", Auto),
            ("execlp", Auto),
        ],
        "perl" => &[("system", Auto), ("exec", Auto)],
        "ruby" => &[
            ("system", Auto),
            ("exec", Auto),
            ("spawn", Auto),
            ("IO.popen", Shell),
            ("Open3.capture2", Auto),
            ("Open3.capture2e", Auto),
            ("Open3.capture3", Auto),
            ("Open3.popen3", Auto),
            ("Process.spawn", Auto),
        ],
        "node" => &[
            ("execSync", Auto),
            ("exec", Auto),
            ("spawn", Auto),
            ("spawnSync", Auto),
            ("execFile", Auto),
            ("execFileSync", Auto),
            ("Bun.spawn", Auto),
            ("Bun.spawnSync", Auto),
            ("Deno.Command", Auto),
            ("Deno.run", Auto),
        ],
        "php" => &[
            ("system", Auto),
            ("exec", Auto),
            ("shell_exec", Auto),
            ("passthru", Auto),
            ("popen", Shell),
            ("proc_open", Shell),
            ("pcntl_exec", Auto),
        ],
        "lua" => &[("os.execute", Auto), ("io.popen", Shell)],
        "awk" => &[("system", Auto)],
        "r" => &[("system", Auto), ("system2", Auto), ("shell", Auto)],
        "applescript" => &[("do shell script", Auto)],
        "powershell" => &[
            ("Start-Process", Auto),
            ("cmd /c", Auto),
            ("Invoke-Expression", Shell),
        ],
        "elixir" => &[
            ("System.cmd", Auto),
            ("System.shell", Shell),
            (":os.cmd", Shell),
        ],
        "java" => &[("exec", Auto), ("ProcessBuilder", Auto), ("Process", Auto)],
        "raku" => &[("shell", Shell), ("run", Auto), ("Proc::Async.new", Auto)],
        "erlang" => &[("os:cmd", Shell), ("open_port", Shell)],
        "octave" => &[("system", Shell), ("unix", Shell), ("shell_cmd", Shell)],
        "haskell" => &[
            ("callCommand", Shell),
            ("spawnCommand", Shell),
            ("runCommand", Shell),
            ("system", Shell),
            ("shell", Shell),
            ("callProcess", Auto),
            ("readProcess", Auto),
            ("readProcessWithExitCode", Auto),
            ("rawSystem", Auto),
            ("spawnProcess", Auto),
            ("proc", Auto),
        ],
        "ocaml" => &[
            ("Sys.command", Shell),
            ("Unix.system", Shell),
            ("Unix.open_process_in", Shell),
            ("Unix.open_process_out", Shell),
            ("Unix.open_process", Shell),
            ("Unix.execvp", Auto),
            ("Unix.execv", Auto),
            ("Unix.create_process", Auto),
        ],
        "crystal" => &[
            ("system", Auto),
            ("Process.run", Auto),
            ("Process.new", Auto),
            ("Process.exec", Auto),
        ],
        "lisp" => &[
            // Clojure's `clojure.java.shell/sh` takes an argument vector.
            ("sh", Auto),
            ("system", Shell),
            ("system*", Auto),
            ("process", Shell),
            ("process*", Auto),
            ("run-program", Auto),
            ("launch-program", Auto),
            ("run-shell-command", Shell),
            ("shell", Shell),
            ("open-input-pipe", Shell),
            ("open-output-pipe", Shell),
        ],
        "elisp" => &[
            ("shell-command", Shell),
            ("shell-command-to-string", Shell),
            ("async-shell-command", Shell),
            ("call-process-shell-command", Shell),
            ("call-process", Auto),
            ("process-lines", Auto),
        ],
        _ => &[],
    }
}

/// Whether a language separates a call's arguments with white space
/// (`(run-program "sh" (list …))`, `callProcess "rm" [...]`).
fn spaced_arguments(lang: &str) -> bool {
    matches!(lang, "lisp" | "elisp" | "haskell" | "ocaml")
}

/// Shell command strings that the code hands to a shell, with a label.
pub(crate) fn shell_strings(code: &Code) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let label = format!("{} code", code.lang);
    let normalized = python_aliases(&code.lang, &code.text);
    let text: &str = &normalized;
    let lang = code.lang.as_str();
    fn add(out: &mut Vec<(String, String)>, label: &str, script: String) {
        let found = (label.to_string(), script);
        if !found.1.trim().is_empty() && !out.contains(&found) && out.len() < 64 {
            out.push(found);
        }
    }
    let spaced = spaced_arguments(&code.lang);
    for (name, form) in shell_calls(&code.lang) {
        let mut from = 0;
        while let Some(pos) = text[from..].find(name) {
            let at = from + pos;
            from = at + name.len();
            // Must be a whole name, not the tail of a longer identifier.
            let before = text[..at].chars().next_back();
            // Python names carry their module (`os.system`); elsewhere a
            // method call (`cp.execSync`, `Kernel.system`) is still a call.
            let dotted_ok =
                code.lang != "python" || name.contains('.') || !matches!(*name, "run" | "call");
            // In Lisp a name may hold `-` (`asdf:load-system`).
            if before.is_some_and(|c| {
                c.is_ascii_alphanumeric()
                    || c == '_'
                    || (c == '.' && !dotted_ok)
                    || (c == '-' && spaced)
            }) {
                continue;
            }
            // Nor the head of one (`systemd`, `system-name`).
            if text[from..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*')
            {
                continue;
            }
            if let Some(script) = call_command(&text[from..], *form, spaced) {
                // `os.system(...)` is found as `os.system` and as `system`.
                add(&mut out, &label, script);
            }
        }
    }
    if matches!(
        code.lang.as_str(),
        "perl" | "ruby" | "php" | "julia" | "crystal"
    ) {
        let mut parts = text.split('`');
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next().or(Some(""))) {
            if !inside.is_empty() {
                add(&mut out, &label, interpolated(lang, inside));
            }
        }
    }
    if code.lang == "java" {
        // Groovy's `"CMD".execute()`, Scala's `"CMD".!` and `"CMD".!!`.
        for (lit, _, end) in literal_ranges(text) {
            let after = &text[end..];
            if after.starts_with(".execute(") || after.starts_with(".!") {
                add(&mut out, &label, lit);
            }
        }
    }
    for script in quoted_commands(&code.lang, text) {
        add(&mut out, &label, interpolated(lang, &script));
    }
    for script in pipe_opens(&code.lang, text) {
        add(&mut out, &label, script);
    }
    if code.lang == "powershell" {
        // Its own cmdlets (`Remove-Item`, `Get-Content`), read as the
        // shell commands they amount to: not shell strings it runs.
        for line in crate::powershell::commands(text) {
            add(&mut out, "powershell cmdlet", line);
        }
    }
    if code.lang == "tcl" {
        for s in tcl_execs(text) {
            add(&mut out, &label, s);
        }
        // Expect's `send "TEXT\r"` to a spawned shell (or ssh, su, telnet)
        // types a command line into it.
        let spawns_shell = tcl_command_words(text, "spawn").iter().any(|w| {
            let program = w.split_whitespace().next().unwrap_or("").trim_matches('\'');
            let base = program.rsplit('/').next().unwrap_or(program);
            crate::is_shell(base) || matches!(base, "ssh" | "su" | "telnet" | "sudo")
        });
        if spawns_shell {
            for typed in tcl_command_words(text, "send") {
                let keys: String = typed
                    .split(' ')
                    .map(|w| w.trim_matches('\''))
                    .filter(|w| !w.starts_with('-'))
                    .collect::<Vec<_>>()
                    .join(" ");
                add(
                    &mut out,
                    "expect send",
                    keys.replace("\\r", "\n").replace('\r', "\n"),
                );
            }
        }
    }
    if code.lang == "awk" {
        // `"cmd" | getline` and `print ... | "cmd"` run cmd through sh.
        for (lit, end) in literal_spans(text) {
            let after = text[end..].trim_start();
            let before = text[..end.saturating_sub(lit.len() + 2)].trim_end();
            if after.starts_with('|') || before.ends_with('|') {
                add(&mut out, &label, lit);
            }
        }
        out.extend(awk_files(text));
    }
    out
}

/// A command written in a language's string, with the language's own
/// interpolations of the home directory (Perl's `$ENV{HOME}`, Ruby's
/// `#{Dir.home}`, Julia's `$(homedir())`) as the shell's `$HOME`, and
/// Julia's other interpolations as values not known.
fn interpolated(lang: &str, command: &str) -> String {
    let homes: &[&str] = match lang {
        "perl" => &["$ENV{HOME}", "$ENV{'HOME'}", "$ENV{\"HOME\"}"],
        "ruby" | "crystal" => &[
            "#{Dir.home}",
            "#{ENV['HOME']}",
            "#{ENV[\"HOME\"]}",
            "#{Path.home}",
        ],
        "julia" => &["$(homedir())", "$(ENV[\"HOME\"])", "$(ENV['HOME'])"],
        _ => &[],
    };
    let mut out = command.to_string();
    for h in homes {
        out = out.replace(h, "$HOME");
    }
    if lang == "julia" {
        // `$(expr)` is Julia's, not a command substitution.
        while let Some(at) = out.find("$(") {
            let end = out[at..].find(')').map_or(out.len(), |e| at + e + 1);
            out.replace_range(at..end, "$JULIA_VALUE");
        }
    }
    out
}

/// Python code with its modules reached by other names read as their own:
/// `import subprocess as sp; sp.call(...)` is `subprocess.call(...)`,
/// `from subprocess import run; run(...)` is `subprocess.run(...)`.
fn python_aliases<'a>(lang: &str, text: &'a str) -> std::borrow::Cow<'a, str> {
    if lang != "python" || !(text.contains(" as ") || text.contains("from subprocess import")) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for module in ["subprocess", "os", "pty"] {
        let pattern = format!("import {module} as ");
        let mut from = 0;
        while let Some(pos) = text[from..].find(&pattern) {
            let at = from + pos + pattern.len();
            from = at;
            let alias: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if alias.is_empty() || alias == module {
                continue;
            }
            // `sp.call(` and ` sp.call(`, not `wasp.call(`.
            let mut rewritten = String::with_capacity(out.len());
            let mut rest = out.as_str();
            let dotted = format!("{alias}.");
            while let Some(k) = rest.find(&dotted) {
                let before = rest[..k].chars().next_back();
                rewritten.push_str(&rest[..k]);
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                    rewritten.push_str(&dotted);
                } else {
                    rewritten.push_str(module);
                    rewritten.push('.');
                }
                rest = &rest[k + dotted.len()..];
            }
            rewritten.push_str(rest);
            out = rewritten;
        }
    }
    // `from subprocess import run, call`: the bare names are the module's.
    if let Some(pos) = out.find("from subprocess import ") {
        let names: Vec<String> = out[pos + 23..]
            .split([';', '\n'])
            .next()
            .unwrap_or("")
            .split(',')
            .map(|n| n.split(" as ").next().unwrap_or("").trim().to_string())
            .filter(|n| matches!(n.as_str(), "run" | "call"))
            .collect();
        for name in names {
            out = out.replace(&format!(" {name}("), &format!(" subprocess.{name}("));
            out = out.replace(&format!(";{name}("), &format!(";subprocess.{name}("));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Perl's `qx{CMD}` (any delimiter) and Ruby's and Crystal's `%x(CMD)`:
/// CMD is a shell command line, as in backticks.
fn quoted_commands(lang: &str, text: &str) -> Vec<String> {
    let marker = match lang {
        "perl" | "raku" => "qx",
        "ruby" | "crystal" => "%x",
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = text[from..].find(marker) {
        let at = from + pos;
        from = at + marker.len();
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '%') {
            continue;
        }
        let rest = text[from..].trim_start_matches([' ', '\t']);
        let Some(open) = rest.chars().next() else {
            break;
        };
        if open.is_ascii_alphanumeric() || open.is_whitespace() || open == '_' {
            continue;
        }
        let close = match open {
            '(' => ')',
            '{' => '}',
            '[' => ']',
            '<' => '>',
            c => c,
        };
        let body = &rest[open.len_utf8()..];
        let mut depth = 1;
        let mut end = None;
        for (k, c) in body.char_indices() {
            if c == close {
                depth -= 1;
                if depth == 0 {
                    end = Some(k);
                    break;
                }
            } else if c == open && open != close {
                depth += 1;
            }
        }
        if let Some(end) = end {
            out.push(body[..end].to_string());
        }
        if out.len() > 64 {
            break;
        }
    }
    out
}

/// Commands the code opens a pipe to or from: Perl's `open(F, "|CMD")`,
/// `open(F, "CMD|")` and `open(F, "|-", "CMD")`, Tcl's `open "|CMD"`, and
/// Python's or Ruby's `popen("sh", "w")`. When the command is a shell
/// reading what the code writes to it, what the code writes is a script
/// too (`open(P, "|sh"); print P "rm -rf ~"`).
fn pipe_opens(lang: &str, text: &str) -> Vec<String> {
    if !matches!(lang, "perl" | "tcl" | "python" | "ruby" | "php") || !text.contains("open") {
        return Vec::new();
    }
    let ranges = literal_ranges(text);
    let mut out = Vec::new();
    let mut feeds_shell = false;
    for (k, (lit, start, _)) in ranges.iter().enumerate() {
        let near = &text[start.saturating_sub(40)..*start];
        if !near.contains("open") {
            continue;
        }
        let command = if matches!(lit.as_str(), "|-" | "-|") {
            ranges.get(k + 1).map(|r| r.0.clone())
        } else if let Some(c) = lit.strip_prefix('|') {
            Some(c.to_string())
        } else if matches!(lang, "perl" | "tcl")
            && let Some(c) = lit.strip_suffix('|')
        {
            Some(c.to_string())
        } else if near.contains("popen") {
            Some(lit.clone())
        } else {
            None
        };
        let Some(command) = command.map(|c| c.trim().to_string()) else {
            continue;
        };
        if command.is_empty() {
            continue;
        }
        let program = command.split_whitespace().next().unwrap_or("");
        let program = program.rsplit('/').next().unwrap_or(program);
        if crate::is_shell(program) && command.split_whitespace().count() == 1 {
            feeds_shell = true;
        }
        if !near.contains("popen") {
            out.push(command);
        }
    }
    if feeds_shell {
        // What is printed or written to the shell is its script.
        for (lit, start, _) in &ranges {
            let near = &text[start.saturating_sub(24)..*start];
            if ["print", "write", "puts", "say", "communicate", "input="]
                .iter()
                .any(|w| near.contains(w))
            {
                out.push(lit.clone());
            }
        }
    }
    out
}

/// The files awk code writes with `print > "F"` (`>>`, `printf`) or reads
/// with `getline < "F"`, as the commands that do the same (`tee F`,
/// `tee -a F`, `cat F`), labelled `awk >` and `awk <`.
fn awk_files(text: &str) -> Vec<(String, String)> {
    let quote = |f: &str| format!("'{}'", f.replace('\'', r"'\''"));
    let mut out = Vec::new();
    for statement in awk_statements(text) {
        let statement = statement.trim();
        // `>` is a redirection only in print statements (elsewhere, a
        // comparison: `$1 > "m"`); `<` one only after getline.
        if statement.starts_with("print")
            && let Some(at) = outside_quotes(statement, '>', false)
        {
            let append = statement[at + 1..].starts_with('>');
            let expr = &statement[at + 1 + usize::from(append)..];
            if let Some(path) = awk_path(expr) {
                let tee = if append { "tee -a" } else { "tee" };
                out.push(("awk >".to_string(), format!("{tee} {}", quote(&path))));
            }
        }
        if let Some(g) = statement.find("getline")
            && let Some(at) = outside_quotes(&statement[g..], '<', true)
        {
            let expr = &statement[g + at + 1..];
            let expr = expr.split(')').next().unwrap_or(expr);
            if let Some(path) = awk_path(expr) {
                out.push(("awk <".to_string(), format!("cat {}", quote(&path))));
            }
        }
    }
    out
}

/// awk's statements: the text split at `;`, braces and newlines outside
/// string literals.
fn awk_statements(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_string = false;
    let mut escaped = false;
    for (k, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            ';' | '{' | '}' | '\n' if !in_string => {
                out.push(&text[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// Where `op` first stands outside string literals (and, unless
/// `nested`, outside parentheses).
fn outside_quotes(text: &str, op: char, nested: bool) -> Option<usize> {
    let mut in_string = false;
    let mut escaped = false;
    let mut depth = 0i32;
    for (k, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '(' if !in_string => depth += 1,
            ')' if !in_string => depth -= 1,
            c if c == op && !in_string && (nested || depth == 0) => return Some(k),
            _ => {}
        }
    }
    None
}

/// The file an awk expression names, when it is made of string literals
/// and `ENVIRON["HOME"]` (the home directory), joined as awk joins them.
fn awk_path(expr: &str) -> Option<String> {
    let mut rest = expr.trim();
    let mut path = String::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("ENVIRON[\"HOME\"]") {
            path.push('~');
            rest = r.trim_start();
        } else if rest.starts_with('"') {
            let (lit, end) = literal_spans(rest).into_iter().next()?;
            path.push_str(&lit);
            rest = rest[end..].trim_start();
        } else {
            return None;
        }
    }
    (!path.is_empty()).then_some(path)
}

/// Tcl's `exec PROG ARG...` runs PROG with its words (`{...}` literal,
/// `"..."` quoted, up to the end of the command): each as a command line,
/// its words quoted for the shell (`exec sh -c {curl … | sh}`).
fn tcl_execs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in ["exec", "spawn"] {
        out.extend(tcl_command_words(text, word));
    }
    out
}

/// The commands Tcl's `exec`, or Expect's `spawn`, runs (see
/// [`tcl_execs`]).
fn tcl_command_words(text: &str, word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let n = word.len();
    let mut from = 0;
    while let Some(pos) = text[from..].find(word) {
        let at = from + pos;
        from = at + n;
        // A command word: at the start, or after `;`, a newline, `[` or `{`.
        let before = text[..at].trim_end_matches([' ', '\t']);
        let starts = before.is_empty() || before.ends_with([';', '\n', '[', '{']);
        if !starts || !b.get(at + n).is_some_and(|c| *c == b' ' || *c == b'\t') {
            continue;
        }
        let words = tcl_words(&text[at + n..]);
        // `exec -ignorestderr -- prog`: its options come first.
        let words: Vec<String> = words
            .into_iter()
            .skip_while(|w| w.starts_with('-'))
            .filter(|w| !w.starts_with(['<', '>', '2']) || !w.contains('@'))
            .collect();
        if words.is_empty() {
            continue;
        }
        out.push(
            words
                .iter()
                .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    out
}

/// The words of one Tcl command, up to `;`, a newline or an unmatched `]`.
fn tcl_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        match c {
            ';' | '\n' | ']' => break,
            '{' => {
                chars.next();
                let mut depth = 1;
                let mut w = String::new();
                for d in chars.by_ref() {
                    match d {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    w.push(d);
                }
                words.push(w);
            }
            '"' => {
                chars.next();
                let mut w = String::new();
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => match chars.next() {
                            Some('n') => w.push('\n'),
                            Some('r') => w.push('\r'),
                            Some('t') => w.push('\t'),
                            other => w.extend(other),
                        },
                        '"' => break,
                        _ => w.push(d),
                    }
                }
                words.push(w);
            }
            _ => {
                let mut w = String::new();
                while let Some(&d) = chars.peek() {
                    if matches!(d, ' ' | '\t' | ';' | '\n' | ']') {
                        break;
                    }
                    w.push(d);
                    chars.next();
                }
                words.push(w);
            }
        }
        if words.len() > 64 {
            break;
        }
    }
    words
}

/// The string literals of a program text (`'...'` and `"..."`).
#[cfg(test)]
pub(crate) fn string_literals(text: &str) -> Vec<String> {
    literal_spans(text).into_iter().map(|(s, _)| s).collect()
}

/// The strings a program's code holds: its literals, literals joined by
/// concatenation (`'.e' + 'nv'`, Perl's `'.e' . 'nv'`, Python's `'.e'
/// 'nv'`), and, in code that decodes base64, the text of literals that
/// decode to it (`b64decode('fi8uc3No…')`): the paths and commands the
/// code is built from, however they were split or encoded.
fn code_literals(lang: &str, text: &str) -> Vec<String> {
    let ranges = literal_ranges(text);
    let mut out: Vec<String> = ranges.iter().map(|r| r.0.clone()).collect();
    if matches!(lang, "tcl" | "powershell") {
        // Words are strings without quotes (`open ~/.ssh/id_rsa`,
        // `gc $HOME\.aws\credentials`): those that are paths.
        out.extend(
            text.split(|c: char| c.is_whitespace() || "[]{};()|\"'".contains(c))
                .filter(|w| w.contains('/') || w.starts_with('~') || w.contains('\\'))
                .map(|w| {
                    let w = w.replace('\\', "/");
                    match w.split_once('/') {
                        Some((head, rest))
                            if head.eq_ignore_ascii_case("$HOME")
                                || head.eq_ignore_ascii_case("$env:USERPROFILE")
                                || head.eq_ignore_ascii_case("$env:HOME") =>
                        {
                            format!("~/{rest}")
                        }
                        _ => w,
                    }
                })
                .take(256),
        );
    }
    let joins = |between: &str| {
        let t = between.trim();
        t == "+"
            || t.is_empty() && matches!(lang, "python" | "ruby")
            || t == "." && matches!(lang, "perl" | "php")
            || t == ".." && lang == "lua"
    };
    let mut k = 0;
    while k < ranges.len() {
        let mut joined = ranges[k].0.clone();
        let mut j = k;
        while j + 1 < ranges.len() && joins(&text[ranges[j].2..ranges[j + 1].1]) {
            joined.push_str(&ranges[j + 1].0);
            j += 1;
        }
        if j > k && joined.len() <= 4096 {
            out.push(joined);
        }
        k = j + 1;
    }
    const DECODERS: &[&str] = &[
        "b64decode",
        "base64.decode",
        "decode_base64",
        "Base64.decode",
        "base64_decode",
        "atob(",
        "'base64'",
        "\"base64\"",
        "FromBase64String",
        "unpack(\"m",
        "unpack('m",
    ];
    if DECODERS.iter().any(|d| text.contains(d)) {
        let decoded: Vec<String> = out.iter().filter_map(|l| base64_text(l)).collect();
        out.extend(decoded);
    }
    out
}

/// The text a base64 literal decodes to, when it is printable text.
fn base64_text(lit: &str) -> Option<String> {
    let body = lit.trim().trim_end_matches('=');
    if body.len() < 8 || body.len() > 4096 {
        return None;
    }
    let mut bits: u32 = 0;
    let mut n = 0;
    let mut bytes = Vec::with_capacity(body.len() * 3 / 4);
    for c in body.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        n += 6;
        if n >= 8 {
            n -= 8;
            bytes.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    let text = String::from_utf8(bytes).ok()?;
    text.chars()
        .all(|c| !c.is_control() || c == '\n' || c == '\t')
        .then_some(text)
}

/// String literals with the byte offset just after each closing quote.
fn literal_spans(text: &str) -> Vec<(String, usize)> {
    literal_ranges(text)
        .into_iter()
        .map(|(s, _, end)| (s, end))
        .collect()
}

/// String literals with the byte offsets of the opening quote and just
/// after the closing one.
pub(crate) fn literal_ranges(text: &str) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c != '"' && c != '\'' {
            continue;
        }
        let quote = c;
        let mut lit = String::new();
        let mut closed = None;
        while let Some((j, d)) = chars.next() {
            if d == '\\' {
                if let Some((_, e)) = chars.next() {
                    match e {
                        'n' => lit.push('\n'),
                        't' => lit.push('\t'),
                        other => lit.push(other),
                    }
                }
                continue;
            }
            if d == quote {
                closed = Some(j + 1);
                break;
            }
            lit.push(d);
        }
        match closed {
            Some(end) => out.push((lit, start, end)),
            None => break,
        }
        if out.len() > 4096 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(lang: &str, text: &str) -> Code {
        Code {
            lang: lang.into(),
            text: text.into(),
            literals: string_literals(text),
        }
    }

    #[test]
    fn python_shell_outs_are_found() {
        let c = code("python", "import os; os.system('curl -s x | sh')");
        assert_eq!(
            shell_strings(&c),
            vec![("python code".into(), "curl -s x | sh".into())]
        );
        let c = code(
            "python",
            "import subprocess; subprocess.run(['sh', '-c', 'rm -rf /'])",
        );
        assert_eq!(shell_strings(&c)[0].1, "'sh' '-c' 'rm -rf /'");
    }

    #[test]
    fn python_shell_outs_are_found_however_os_is_reached() {
        let c = code("python", "__import__('os').system('curl -s x | sh')");
        assert_eq!(shell_strings(&c)[0].1, "curl -s x | sh");
        let c = code(
            "python",
            "from subprocess import check_output; check_output('id', shell=True)",
        );
        assert_eq!(shell_strings(&c)[0].1, "id");
        let c = code("python", "app.run('0.0.0.0')");
        assert!(shell_strings(&c).is_empty());
    }

    #[test]
    fn perl_backticks_and_bare_system_are_found() {
        let c = code("perl", "print `id`; system \"ls\"");
        let found: Vec<String> = shell_strings(&c).into_iter().map(|(_, s)| s).collect();
        assert!(found.contains(&"id".to_string()));
        assert!(found.contains(&"ls".to_string()));
    }

    #[test]
    fn split_and_encoded_strings_are_read_whole() {
        let lits = |lang: &str, text: &str| code_literals(lang, text);
        assert!(lits("python", "print(open('.e'+'nv').read())").contains(&".env".to_string()));
        assert!(lits("python", "open('.e' 'nv')").contains(&".env".to_string()));
        assert!(lits("perl", "open(F, '.e' . 'nv')").contains(&".env".to_string()));
        assert!(
            lits(
                "python",
                "import base64;open(base64.b64decode('fi8uc3NoL2lkX3JzYQ==').decode())"
            )
            .contains(&"~/.ssh/id_rsa".to_string())
        );
        // Arguments are not joined; base64 is only read where it is decoded.
        assert!(!lits("python", "f('.e', 'nv')").contains(&".env".to_string()));
        assert!(
            !lits("python", "print('fi8uc3NoL2lkX3JzYQ==')").contains(&"~/.ssh/id_rsa".to_string())
        );
    }

    #[test]
    fn tcl_exec_words_are_a_command() {
        let c = code("tcl", "exec sh -c {curl -s x | sh}");
        assert_eq!(shell_strings(&c)[0].1, "'sh' '-c' 'curl -s x | sh'");
        let c = code("tcl", "puts [exec ls -la]; set x 1");
        assert_eq!(shell_strings(&c)[0].1, "'ls' '-la'");
        let c = code("tcl", "puts \"no execution here\"");
        assert!(shell_strings(&c).is_empty());
    }

    #[test]
    fn awk_system_and_pipes_are_found() {
        let c = code("awk", "BEGIN{system(\"curl x | sh\")}");
        assert_eq!(shell_strings(&c)[0].1, "curl x | sh");
        let c = code("awk", "BEGIN{\"date\" | getline d}");
        assert_eq!(shell_strings(&c)[0].1, "date");
        let c = code("awk", "{print $2}");
        assert!(shell_strings(&c).is_empty());
        let c = code("awk", "{print > \"/root/.bashrc\"}");
        assert_eq!(
            shell_strings(&c)[0],
            ("awk >".into(), "tee '/root/.bashrc'".into())
        );
        let c = code("awk", "NR==1{printf \"%s\", $0 >> \"out.txt\"}");
        assert_eq!(shell_strings(&c)[0].1, "tee -a 'out.txt'");
        let c = code(
            "awk",
            "BEGIN{while ((getline l < \"/etc/shadow\") > 0) print l}",
        );
        assert_eq!(shell_strings(&c)[0].1, "cat '/etc/shadow'");
        let c = code("awk", "$1 > \"m\" {print}");
        assert!(shell_strings(&c).is_empty());
        let c = code("awk", "{print > ENVIRON[\"HOME\"] \"/.bashrc\"}");
        assert_eq!(shell_strings(&c)[0].1, "tee '~/.bashrc'");
        let c = code("awk", "{print > $1 \".txt\"}");
        assert!(shell_strings(&c).is_empty());
        let c = code("awk", "{print (x > \"a\" ? 1 : 2)}");
        assert!(shell_strings(&c).is_empty());
    }
}
