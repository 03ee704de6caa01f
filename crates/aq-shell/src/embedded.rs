//! Code given to interpreters on the command line (`python -c`, `perl -e`,
//! `node -e`, `awk 'BEGIN{...}'`, a here-document fed to `python3`): found,
//! kept whole for the rules, and searched for the shell commands it runs
//! (`os.system("...")`, `` `...` ``, `system(...)`), which are then analyzed
//! like any other nested shell string.

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
        "Rscript" => "r",
        "osascript" => "applescript",
        "awk" | "gawk" | "mawk" | "nawk" => "awk",
        "tclsh" | "wish" => "tcl",
        "pwsh" | "powershell" | "powershell.exe" => "powershell",
        _ => return None,
    })
}

/// The code flag of each interpreter (`-c` for python, `-e` for perl ...).
fn code_flags(lang: &str) -> &'static [&'static str] {
    match lang {
        "python" => &["-c"],
        "perl" => &["-e", "-E"],
        "ruby" | "lua" | "r" | "applescript" => &["-e"],
        "node" => &["-e", "--eval", "-p", "--print"],
        "php" => &["-r"],
        "powershell" => &[
            "-c",
            "-Command",
            "-command",
            "-EncodedCommand",
            "-encodedcommand",
            "-enc",
            "-e",
            "-ec",
        ],
        _ => &[],
    }
}

/// Finds the code an interpreter command runs, if it is on the line.
pub(crate) fn code_of(command: &Command) -> Option<Code> {
    let name = command.program()?;
    let lang = interpreter_lang(name)?;
    let args = command.args();
    let mut text = String::new();
    if lang == "awk" {
        text = awk_program(args.iter().map(|w| w.text.as_str()))?;
    } else {
        let flags = code_flags(lang);
        let mut i = 0;
        let mut saw_script = false;
        while i < args.len() {
            let a = args[i].text.as_str();
            // Clustered short options (`perl -ne`); PowerShell's options are
            // whole words (`-NoProfile` is not `-N -o … -e`).
            let is_flag = flags
                .iter()
                .any(|f| f.eq_ignore_ascii_case(a) && (lang == "powershell" || *f == a))
                || (lang != "powershell"
                    && a.starts_with('-')
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
            if let Some(v) = a
                .strip_prefix("--eval=")
                .or_else(|| a.strip_prefix("--print="))
            {
                text.push_str(v);
            } else if lang == "node" && name == "deno" && a == "eval" {
                if let Some(code) = args.get(i + 1) {
                    text.push_str(&code.text);
                }
                i += 1;
            } else if a == "-" {
                saw_script = false;
            } else if (!a.starts_with('-') && text.is_empty()) || (lang == "python" && a == "-m") {
                // A script file or a module: the code is not on the line.
                saw_script = true;
                break;
            }
            i += 1;
        }
        if text.is_empty() && !saw_script {
            // `python3 <<EOF` and `python3 - <<<'...'` read the program from stdin.
            for input in &command.stdin {
                if let Input::Text(t) = input {
                    text.push_str(&t.text);
                }
            }
        }
    }
    if text.is_empty() {
        return None;
    }
    let literals = string_literals(&text);
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

/// Call names whose string arguments are shell commands, per language.
fn shell_call_names(lang: &str) -> &'static [&'static str] {
    match lang {
        "python" => &[
            "os.system",
            "os.popen",
            "subprocess.run",
            "subprocess.call",
            "subprocess.Popen",
            "subprocess.check_output",
            "subprocess.check_call",
            "subprocess.getoutput",
            "subprocess.getstatusoutput",
            "os.execv",
            "os.execvp",
            "os.execl",
            "os.execlp",
            "os.execve",
            "os.execvpe",
            "os.spawnl",
            "os.spawnlp",
            "os.spawnv",
            "os.spawnvp",
            "pty.spawn",
            "commands.getoutput",
            // However the module was reached (`__import__("os").system`,
            // `from os import system`), these names only ever run a shell.
            "system",
            "popen",
            "Popen",
            "check_output",
            "check_call",
            "getoutput",
            "getstatusoutput",
        ],
        "perl" => &["system", "exec", "qx"],
        "ruby" => &[
            "system",
            "exec",
            "spawn",
            "IO.popen",
            "Open3.capture2",
            "Open3.capture3",
            "Open3.popen3",
            "%x",
        ],
        "node" => &[
            "execSync",
            "exec",
            "spawn",
            "spawnSync",
            "execFile",
            "execFileSync",
            "Bun.spawn",
        ],
        "php" => &[
            "system",
            "exec",
            "shell_exec",
            "passthru",
            "popen",
            "proc_open",
        ],
        "lua" => &["os.execute", "io.popen"],
        "awk" => &["system"],
        "r" => &["system", "system2"],
        "applescript" => &["do shell script"],
        "tcl" => &["exec"],
        "powershell" => &["Start-Process", "cmd /c", "Invoke-Expression"],
        _ => &[],
    }
}

/// Shell command strings that the code hands to a shell, with a label.
pub(crate) fn shell_strings(code: &Code) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let label = format!("{} code", code.lang);
    let text = code.text.as_str();
    for name in shell_call_names(&code.lang) {
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
            if before
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || (c == '.' && !dotted_ok))
            {
                continue;
            }
            let rest = &text[from..];
            if let Some(script) = call_argument_script(rest) {
                // `os.system(...)` is found as `os.system` and as `system`.
                let found = (label.clone(), script);
                if !out.contains(&found) {
                    out.push(found);
                }
            }
        }
    }
    if matches!(code.lang.as_str(), "perl" | "ruby" | "php") {
        let mut parts = text.split('`');
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next().or(Some(""))) {
            if !inside.is_empty() {
                out.push((label.clone(), inside.to_string()));
            }
        }
    }
    if code.lang == "awk" {
        // `"cmd" | getline` and `print ... | "cmd"` run cmd through sh.
        for (lit, end) in literal_spans(text) {
            let after = text[end..].trim_start();
            let before = text[..end.saturating_sub(lit.len() + 2)].trim_end();
            if after.starts_with('|') || before.ends_with('|') {
                out.push((label.clone(), lit));
            }
        }
    }
    out
}

/// The shell string a call passes: one literal, or a list of literals
/// (argv form, quoted back into one command line).
fn call_argument_script(rest: &str) -> Option<String> {
    let trimmed = rest.trim_start();
    let region = if let Some(inner) = trimmed.strip_prefix(['(', '{']) {
        let mut depth = 1;
        let mut end = inner.len();
        let mut quote: Option<char> = None;
        let mut escaped = false;
        for (i, c) in inner.char_indices() {
            if escaped {
                escaped = false;
                continue;
            }
            match (quote, c) {
                (_, '\\') => escaped = true,
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '(' | '{' | '[') => depth += 1,
                (None, ')' | '}' | ']') => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        &inner[..end]
    } else if trimmed.starts_with(['"', '\'']) {
        trimmed
    } else {
        return None;
    };
    let lits = literal_spans(region);
    match lits.len() {
        0 => None,
        1 => Some(lits[0].0.clone()),
        _ if region.trim_start().starts_with(['[', '(']) => Some(
            lits.iter()
                .map(|(l, _)| format!("'{}'", l.replace('\'', r"'\''")))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => Some(lits[0].0.clone()),
    }
}

/// The string literals of a program text (`'...'` and `"..."`).
pub(crate) fn string_literals(text: &str) -> Vec<String> {
    literal_spans(text).into_iter().map(|(s, _)| s).collect()
}

/// String literals with the byte offset just after each closing quote.
fn literal_spans(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
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
            Some(end) => out.push((lit, end)),
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
    fn awk_system_and_pipes_are_found() {
        let c = code("awk", "BEGIN{system(\"curl x | sh\")}");
        assert_eq!(shell_strings(&c)[0].1, "curl x | sh");
        let c = code("awk", "BEGIN{\"date\" | getline d}");
        assert_eq!(shell_strings(&c)[0].1, "date");
        let c = code("awk", "{print $2}");
        assert!(shell_strings(&c).is_empty());
    }
}
