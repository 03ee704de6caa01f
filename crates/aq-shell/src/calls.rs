//! How interpreter code calls a program: the arguments of a call such as
//! `os.system("…")`, `subprocess.run(["rm", "-rf", path])`,
//! `execFileSync("rm", ["-rf", os.homedir()])`, `System.cmd("sh", ["-c",
//! "…"])`, `(sb-ext:run-program "/bin/sh" (list "-c" "…"))` or
//! `callProcess "rm" ["-rf", "/tmp/x"]`, read as the command line they
//! amount to: one string is a shell command line; a program and its
//! arguments (a list, or several strings) are an argument vector, quoted
//! back into one command line. An argument that is the home directory
//! (`os.homedir()`, `$ENV{HOME}`, `Dir.home`) is `~`; other expressions
//! are not known and are left out.

use crate::embedded::literal_ranges;

/// How a call hands its arguments to the program it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// The first argument is a shell command line; the others are modes
    /// or options (`popen(cmd, "w")`, `proc_open(cmd, $spec, $pipes)`).
    Shell,
    /// One string is a shell command line; a list, or a program followed
    /// by more strings or a list, is an argument vector (`subprocess.run`,
    /// Perl's `system LIST`, `execFileSync(F, ARGS)`, `System.cmd(F, ARGS)`).
    Auto,
}

/// One argument of a call, as far as it is known.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Arg {
    /// A string literal.
    Lit(String),
    /// A list, array or vector of arguments.
    List(Vec<Arg>),
    /// Any other expression, as written.
    Expr(String),
}

/// Most arguments read from one call.
const MAX_ARGS: usize = 64;

/// The command line a call runs, from the text right after the call's
/// name (`rest`): `None` when no argument is known.
pub(crate) fn call_command(rest: &str, form: Form, spaced: bool) -> Option<String> {
    let trimmed = rest.trim_start();
    let region = if let Some(inner) = trimmed.strip_prefix('(') {
        &inner[..closing(inner)]
    } else if trimmed.starts_with(['"', '\'', '[']) {
        // `system "ls", "-l"`, `callProcess "rm" ["-rf", x]`, a Lisp call's
        // operands: up to the end of the statement.
        &trimmed[..statement_end(trimmed)]
    } else {
        return None;
    };
    let items = split_items(region, spaced)
        .into_iter()
        .take(MAX_ARGS)
        .map(classify)
        .collect::<Vec<_>>();
    if let Some(line) = command_of(&items, form) {
        return Some(line);
    }
    // Nothing in the shape of a call: the first string literal, as a
    // command line (`system("ls " . $dir)` runs `ls …`).
    literal_ranges(region).into_iter().next().map(|r| r.0)
}

/// The command line the arguments of a call amount to.
fn command_of(items: &[Arg], form: Form) -> Option<String> {
    match items.first()? {
        Arg::List(elements) => argv_line(&flatten(elements)),
        Arg::Lit(first) => {
            let more: Vec<Word> = if form == Form::Shell {
                Vec::new()
            } else {
                items[1..].iter().flat_map(arguments).collect()
            };
            if more.is_empty() {
                return Some(first.clone());
            }
            let mut argv = vec![Word::Quoted(first.clone())];
            // `os.execvp("rm", ["rm", "-rf", …])`, `os.execl(P, "sh", …)`:
            // the list starts with the program's own name (argv[0]).
            let skip = usize::from(more.first().is_some_and(|w| match w {
                Word::Quoted(s) => basename(s) == basename(first),
                Word::Home => false,
            }));
            argv.extend(more.into_iter().skip(skip));
            argv_line(&argv)
        }
        // `Deno.run({cmd: [...]})`, `Bun.spawn({cmd: [...]})`.
        Arg::Expr(e) => keyed_list(e, "cmd").and_then(|l| argv_line(&flatten(&l))),
    }
}

/// A word of an argument vector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Word {
    Quoted(String),
    /// The home directory.
    Home,
}

/// The words an argument after the program gives it: a string, the
/// elements of a list, the home directory, or an options object's
/// `args: [...]` (`Deno.Command("sh", {args: [...]})`). Keyword arguments
/// (`cwd=…`, `chdir: …`) and other expressions give nothing.
fn arguments(arg: &Arg) -> Vec<Word> {
    match arg {
        Arg::Lit(s) => vec![Word::Quoted(s.clone())],
        Arg::List(elements) => flatten(elements),
        Arg::Expr(e) => {
            if let Some(list) = keyed_list(e, "args") {
                return flatten(&list);
            }
            if is_home(e) && !is_keyword_argument(e) {
                vec![Word::Home]
            } else {
                Vec::new()
            }
        }
    }
}

fn flatten(elements: &[Arg]) -> Vec<Word> {
    let mut out = Vec::new();
    for e in elements {
        match e {
            Arg::Lit(s) => out.push(Word::Quoted(s.clone())),
            Arg::List(inner) => out.extend(flatten(inner)),
            Arg::Expr(x) if is_home(x) && !is_keyword_argument(x) => out.push(Word::Home),
            Arg::Expr(_) => {}
        }
    }
    out
}

/// The words quoted back into one command line.
fn argv_line(words: &[Word]) -> Option<String> {
    if words.is_empty() {
        return None;
    }
    Some(
        words
            .iter()
            .map(|w| match w {
                Word::Quoted(s) => format!("'{}'", s.replace('\'', r"'\''")),
                Word::Home => "~".to_string(),
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// Whether an expression is the home directory: `os.homedir()`,
/// `expanduser('~')`, `Path.home()`, `os.environ["HOME"]`,
/// `getenv("HOME")`, `$ENV{HOME}`, `ENV['HOME']`, `Dir.home`,
/// `process.env.HOME`, `$HOME`, `$env:USERPROFILE`, `homedir()`.
pub fn is_home(e: &str) -> bool {
    let e = e.trim();
    if e == "~" {
        return true;
    }
    const HOME: &[&str] = &[
        "homedir()",
        "expanduser('~')",
        "expanduser(\"~\")",
        "Path.home()",
        "[\"HOME\"]",
        "['HOME']",
        "(\"HOME\")",
        "('HOME')",
        "{HOME}",
        "{'HOME'}",
        "{\"HOME\"}",
        "Dir.home",
        "env.HOME",
        "$HOME",
        "${HOME}",
        "$env:HOME",
        "$env:USERPROFILE",
        "getenv \"HOME\"",
        "user-home-directory",
        "System.user_home",
    ];
    HOME.iter().any(|h| e.contains(h))
}

/// `cwd=…`, `chdir: …`, `env => …`: an argument given by name.
fn is_keyword_argument(e: &str) -> bool {
    let head: String = e
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ' ')
        .collect();
    let after = &e[head.len()..];
    !head.trim().is_empty()
        && (after.starts_with('=') && !after.starts_with("==")
            || after.starts_with(':') && !after.starts_with("::")
            || after.starts_with("=>"))
}

/// The list an options object gives under `key` (`{cmd: [...]}`,
/// `{"args": [...]}`).
fn keyed_list(e: &str, key: &str) -> Option<Vec<Arg>> {
    let body = e.trim().strip_prefix('{')?;
    let mut from = 0;
    while let Some(pos) = body[from..].find(key) {
        let at = from + pos;
        from = at + key.len();
        let before = body[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let after = body[from..].trim_start_matches(['"', '\'']).trim_start();
        let Some(value) = after.strip_prefix(':') else {
            continue;
        };
        let value = value.trim_start();
        if let Some(inner) = value.strip_prefix('[') {
            let region = &inner[..closing(inner)];
            return Some(
                split_items(region, false)
                    .into_iter()
                    .map(classify)
                    .collect(),
            );
        }
    }
    None
}

/// One item of an argument list, classified.
fn classify(item: &str) -> Arg {
    let t = item.trim();
    // `b"…"`, `r'…'`, `f"…"`, Elixir's `~c"…"`: a prefixed string literal.
    let body = t.trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '~');
    if body.len() + 2 >= t.len()
        && body.starts_with(['"', '\''])
        && let [(lit, start, end)] = literal_ranges(body).as_slice()
        && *start == 0
        && *end == body.len()
    {
        return Arg::Lit(lit.clone());
    }
    if let Some(inner) = list_body(t) {
        let spaced = t.starts_with('(') || t.starts_with("'(") || t.starts_with("#(");
        return Arg::List(
            split_items(inner, spaced)
                .into_iter()
                .take(MAX_ARGS)
                .map(classify)
                .collect(),
        );
    }
    Arg::Expr(t.to_string())
}

/// The inside of a list written as one: `[…]`, OCaml's `[|…|]`, R's
/// `c(…)`, Lisp's `(list …)` and `'(…)`, PowerShell's `@(…)`, Java's
/// `new String[]{…}`, `List.of(…)` and `Arrays.asList(…)`.
fn list_body(t: &str) -> Option<&str> {
    let t = t.trim();
    for (open, close) in [
        ("[|", "|]"),
        ("[", "]"),
        ("c(", ")"),
        ("'(", ")"),
        ("#(", ")"),
        ("@(", ")"),
        ("(list ", ")"),
        ("(vector ", ")"),
        ("List.of(", ")"),
        ("Arrays.asList(", ")"),
        ("new String[]{", "}"),
        ("new String[] {", "}"),
    ] {
        if let Some(inner) = t.strip_prefix(open)
            && let Some(inner) = inner.strip_suffix(close)
        {
            return Some(inner);
        }
    }
    None
}

/// Where the bracket that `text` is inside of closes (its length when it
/// does not): quotes and nested brackets skipped.
fn closing(text: &str) -> usize {
    let mut depth = 1;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
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
                    return i;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// Where a statement that starts `text` ends: at `;`, a newline, or a
/// bracket closing one it is inside of (a Lisp call's `)`).
fn statement_end(text: &str) -> usize {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
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
                if depth < 0 {
                    return i;
                }
            }
            (None, ';' | '\n') if depth == 0 => return i,
            _ => {}
        }
    }
    text.len()
}

/// The items of an argument list: split at commas (and, where `spaced`,
/// at white space, as Lisp and Haskell separate arguments) outside quotes
/// and brackets; OCaml's `;` between array elements too.
fn split_items(region: &str, spaced: bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut start = 0;
    for (i, c) in region.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            // A Lisp quote (`'(…)`) opens no string.
            (None, '"' | '\'') if !(c == '\'' && region[i + 1..].starts_with('(')) => {
                quote = Some(c);
            }
            (None, '(' | '{' | '[') => depth += 1,
            (None, ')' | '}' | ']') => depth -= 1,
            (None, ',' | ';') if depth == 0 => {
                out.push(&region[start..i]);
                start = i + 1;
            }
            (None, c) if spaced && depth == 0 && c.is_whitespace() => {
                out.push(&region[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if out.len() > MAX_ARGS {
            break;
        }
    }
    out.push(&region[start..]);
    out.retain(|s| !s.trim().is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auto(rest: &str) -> Option<String> {
        call_command(rest, Form::Auto, false)
    }

    #[test]
    fn one_string_is_a_command_line() {
        assert_eq!(auto("('ls -la', shell=True)").unwrap(), "ls -la");
        assert_eq!(auto("(\"id\", (e, o) => {})").unwrap(), "id");
        assert_eq!(
            call_command("('sh', 'w')", Form::Shell, false).unwrap(),
            "sh"
        );
    }

    #[test]
    fn lists_and_programs_with_arguments_are_argument_vectors() {
        assert_eq!(
            auto("([\"rm\", \"-rf\", __import__(\"os\").environ[\"HOME\"]])").unwrap(),
            "'rm' '-rf' ~"
        );
        assert_eq!(
            auto("('rm', ['rm', '-rf', '/home/dev'])").unwrap(),
            "'rm' '-rf' '/home/dev'"
        );
        assert_eq!(
            auto("(\"rm\", [\"-rf\", require(\"os\").homedir()])").unwrap(),
            "'rm' '-rf' ~"
        );
        assert_eq!(auto("(\"rm\",\"-rf\",$ENV{HOME})").unwrap(), "'rm' '-rf' ~");
        assert_eq!(
            auto("(\"sh\",{args:[\"-c\",\"id\"]}).outputSync()").unwrap(),
            "'sh' '-c' 'id'"
        );
        assert_eq!(
            call_command(" \"/bin/sh\" (list \"-c\" \"id\"))", Form::Auto, true).unwrap(),
            "'/bin/sh' '-c' 'id'"
        );
        assert_eq!(
            call_command(" \"rm\" [\"-rf\", \"/tmp/x\"]", Form::Auto, true).unwrap(),
            "'rm' '-rf' '/tmp/x'"
        );
        assert_eq!(
            call_command(" \"rm\" [|\"rm\"; \"-rf\"|]", Form::Auto, true).unwrap(),
            "'rm' '-rf'"
        );
    }

    #[test]
    fn keyword_arguments_are_not_arguments() {
        assert_eq!(auto("('ls', cwd=os.path.expanduser('~'))").unwrap(), "ls");
        assert_eq!(auto("(\"ls\", chdir: Dir.home)").unwrap(), "ls");
    }
}
