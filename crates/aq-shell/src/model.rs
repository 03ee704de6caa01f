//! What a command line does, as plain values: the commands it runs, the words
//! they get, where their input comes from and what went wrong reading it.

use serde::Serialize;

/// Everything one command line would run, in the order bash would meet it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Analysis {
    /// Every simple command, after unwrapping wrappers and nested shells.
    pub commands: Vec<Command>,
    /// Why parts of the line could not be read statically.
    pub problems: Vec<Problem>,
    /// Functions the line defines that call themselves in a pipeline or in the
    /// background: the shape of a fork bomb.
    pub self_spawning_functions: Vec<String>,
    /// Names of functions the line defines (calls to them are not programs).
    pub functions: Vec<String>,
    /// Loops without end that start a process in the background on every
    /// turn and never wait (`while true; do cmd & done`): the other shape
    /// of a fork bomb. Each as the loop's keyword and its condition.
    pub spawning_loops: Vec<String>,
    /// Data that bash evaluates as code (an arithmetic expression, a
    /// variable name with a subscript, a prompt string) where it hides
    /// commands or holds what is only known at run time.
    pub evaluated: Vec<Evaluated>,
    /// Variables whose value is only known at run time and comes from the
    /// output (or input) of commands of the line: a loop variable (`for p
    /// in $(pgrep x)`), `read n`, `n=$(cat f)` in a branch. By name, with
    /// the indices into [`Analysis::commands`] of those commands; sorted.
    pub var_sources: Vec<(String, Vec<usize>)>,
}

/// Text the line gives as data that bash evaluates as code: the operands of
/// `[[ A -eq B ]]`, `let` and `(( ))`, whose array subscripts run the
/// command substitutions in them (`a[$(cmd)]`); a name given to `printf
/// -v`, `read`, `test -v` or `declare`, whose subscript does the same; a
/// prompt string (`${x@P}`, `PS4` under `set -x`); a variable assigned
/// through a reference (`declare -n`). Only the ones that matter are
/// recorded: where commands hide, or where part of the text is only known
/// at run time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evaluated {
    /// Where bash evaluates it (`arithmetic`, `printf -v`, `${x@P}`,
    /// `PS4`, `declare -n`); also the label the hidden commands carry in
    /// [`Command::via`].
    pub context: String,
    /// How bash evaluates it.
    pub kind: EvalKind,
    /// The text as far as it is known; its `feeds` name the commands whose
    /// output is in it.
    pub text: Word,
    /// Commands hidden in the text, which bash runs when it evaluates it
    /// (indices into [`Analysis::commands`]).
    pub commands: Vec<usize>,
    /// Whether part of what is evaluated is only known at run time (from
    /// a command's output, or input read on the line).
    pub unknown: bool,
}

/// How bash evaluates an [`Evaluated`] text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvalKind {
    /// As an arithmetic expression: names are variables whose values are
    /// evaluated in turn, and array subscripts are expanded as words.
    Arithmetic,
    /// As a prompt string: its substitutions run.
    Prompt,
    /// As the words of an array assignment (`declare -a 'x=(...)'`): their
    /// substitutions run.
    Words,
    /// As the name of a variable to assign, through a reference whose
    /// target is not known.
    Reference,
}

/// One program invocation with its arguments as the program would receive them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Command {
    /// The argument vector; `argv[0]` is the program name as written.
    pub argv: Vec<Word>,
    /// `NAME=value` words before the command (or alone on the line).
    pub assignments: Vec<Assignment>,
    /// Redirections that apply to this command.
    pub redirects: Vec<Redirect>,
    /// Where standard input comes from, when the line says.
    pub stdin: Vec<Input>,
    /// Wrappers and nested shells this command was found inside, outermost first
    /// (`sudo`, `bash -c`, `$(...)`, `python -c`).
    pub via: Vec<String>,
    /// How many nested shells, evals or substitutions deep this command is.
    pub depth: u32,
    /// For a wrapper (`sudo`, `env`, `xargs`, `sh -c` ...), the index of the
    /// first command it runs.
    pub runs: Option<usize>,
    /// Code handed to an interpreter on the command line (`python -c`, `awk`).
    pub code: Option<Code>,
    /// Whether this command runs with raised privileges (`sudo`, `doas`, `su`).
    pub privileged: bool,
}

impl Command {
    /// The program name with any directory removed (`/usr/bin/curl` gives `curl`).
    ///
    /// A name spelled to hide what it is, is read as the program it names
    /// when that is a program the capability model knows: a glob
    /// (`/usr/bin/w?et` is `wget`; of several matches, bash runs the first
    /// in sorted order) or unknown variables inside a name (`c${x}at` is
    /// `cat` when `x` is empty).
    pub fn program(&self) -> Option<&str> {
        let w = self.argv.first()?;
        if w.dynamic {
            return hidden_name(w);
        }
        // A byte scan: names are short, and this is called for every rule.
        let base = match w.text.bytes().rposition(|b| b == b'/') {
            Some(k) => &w.text[k + 1..],
            None => &w.text,
        };
        if w.glob && is_glob(base) {
            // No match: bash leaves the word as written (`./b?ild.sh`).
            let prefix = glob_prefix(base);
            return Some(
                aq_knowledge::programs::names()
                    .find(|n| n.starts_with(prefix) && glob_matches(base, n))
                    .unwrap_or(base),
            );
        }
        Some(base)
    }

    /// The other programs a name spelled as a glob could run (`/???/r?` is
    /// `rm`, `rg` or another two-letter name starting with r) than the one
    /// [`Self::program`] reads it as; empty when the name is no glob.
    pub(crate) fn glob_candidates(&self) -> Vec<&'static str> {
        let Some(w) = self.argv.first().filter(|w| w.glob && !w.dynamic) else {
            return Vec::new();
        };
        let base = w.text.rsplit('/').next().unwrap_or(&w.text);
        if !is_glob(base) {
            return Vec::new();
        }
        let first = self.program();
        glob_programs(base)
            .into_iter()
            .filter(|n| Some(*n) != first && !n.contains('.'))
            .collect()
    }

    /// The arguments after the program name.
    pub fn args(&self) -> &[Word] {
        self.argv.get(1..).unwrap_or(&[])
    }

    /// The command as a person would read it, quoted where needed.
    pub fn display(&self) -> String {
        // Built in one string: every verdict shows every command.
        let mut out = String::new();
        // Every part is non-empty (an empty word shows as `''`), so a space
        // goes before every part but the first.
        let space = |out: &mut String| {
            if !out.is_empty() {
                out.push(' ');
            }
        };
        for a in &self.assignments {
            space(&mut out);
            out.push_str(&a.name);
            out.push('=');
            push_quoted(&mut out, &a.value.text);
        }
        for w in &self.argv {
            space(&mut out);
            push_quoted(&mut out, &w.text);
        }
        for r in &self.redirects {
            space(&mut out);
            if let Some(fd) = r.fd {
                out.push_str(&fd.to_string());
            }
            out.push_str(r.kind.symbol());
            push_quoted(&mut out, &r.target.text);
        }
        out
    }
}

/// Appends `s`, in single quotes unless every character is plain.
fn push_quoted(out: &mut String, s: &str) {
    let plain_char = |c: char| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                '-' | '_'
                    | '.'
                    | '/'
                    | ':'
                    | '='
                    | '@'
                    | '%'
                    | '+'
                    | ','
                    | '~'
                    | '*'
                    | '?'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '$'
                    | '^'
                    | '!'
                    | '#'
            )
            || !c.is_ascii()
    };
    if !s.is_empty() && s.chars().all(plain_char) {
        out.push_str(s);
    } else {
        out.push('\'');
        out.push_str(&s.replace('\'', r"'\''"));
        out.push('\'');
    }
}

/// `c${x}at`, `/usr/bin/${e}curl`: the name left when the unknown
/// variables inside it are empty, if the capability model knows it. A word
/// that is only variables (`$CMD`) or has substitutions stays unknown.
fn hidden_name(w: &Word) -> Option<&'static str> {
    if !w.feeds.is_empty() || w.vars.is_empty() {
        return None;
    }
    let mut out = String::new();
    let mut rest = w.text.as_str();
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let skip = if let Some(inner) = after.strip_prefix('{') {
            let end = inner.find('}')?;
            // Only plain `${name}`: operators could give the name a value.
            if !inner[..end]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                return None;
            }
            end + 2
        } else {
            after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len())
        };
        rest = &after[skip..];
    }
    out.push_str(rest);
    let base = out.rsplit('/').next().unwrap_or(&out);
    if base.is_empty() || base.len() == out.len() && w.text.starts_with('$') {
        return None;
    }
    aq_knowledge::programs::known_program_name(base)
}

/// The known programs a glob matches, in sorted order (of several, bash
/// runs the first its expansion lists): at most eight.
fn glob_programs(pattern: &str) -> Vec<&'static str> {
    let prefix = glob_prefix(pattern);
    let mut out: Vec<&'static str> = aq_knowledge::programs::known_names()
        .filter(|n| n.starts_with(prefix) && glob_matches(pattern, n))
        .collect();
    out.sort_unstable();
    out.dedup();
    out.truncate(8);
    out
}

/// Whether a word matches anything but itself as a glob: a `*`, a `?`,
/// or a `[` closed by a `]` after at least one character (`[` alone, as
/// in `[ -f x ]`, is a literal).
fn is_glob(word: &str) -> bool {
    word.contains(['*', '?'])
        || word
            .match_indices('[')
            .any(|(k, _)| word.get(k + 2..).is_some_and(|rest| rest.contains(']')))
}

/// The literal start of a glob, which every name it matches starts with.
fn glob_prefix(pattern: &str) -> &str {
    &pattern[..pattern.find(['*', '?', '[']).unwrap_or(pattern.len())]
}

/// Whether shell glob `pattern` (`*`, `?`, `[...]`) matches `name` whole.
fn glob_matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|k| go(&p[1..], &n[k..])),
            Some('?') => !n.is_empty() && go(&p[1..], &n[1..]),
            Some('[') => {
                let Some(end) = p.iter().skip(2).position(|c| *c == ']').map(|e| e + 2) else {
                    return n.first() == Some(&'[') && go(&p[1..], &n[1..]);
                };
                let Some(&c) = n.first() else { return false };
                let mut set = &p[1..end];
                let negate = matches!(set.first(), Some('!' | '^'));
                if negate {
                    set = &set[1..];
                }
                let mut hit = false;
                let mut k = 0;
                while k < set.len() {
                    if k + 2 < set.len() && set[k + 1] == '-' {
                        hit |= set[k] <= c && c <= set[k + 2];
                        k += 3;
                    } else {
                        hit |= set[k] == c;
                        k += 1;
                    }
                }
                hit != negate && go(&p[end + 1..], &n[1..])
            }
            Some(c) => n.first() == Some(c) && go(&p[1..], &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// A word after quote removal and the expansions that can be known statically.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Word {
    /// The text the program would get. Parts that cannot be known keep their
    /// source spelling (`$X`, `$(...)`).
    pub text: String,
    /// Whether some part of the text is only known at run time.
    pub dynamic: bool,
    /// Commands whose output is spliced into this word (`$(...)`, backticks) or
    /// whose pipe it names (`<(...)`), as indices into [`Analysis::commands`].
    pub feeds: Vec<usize>,
    /// Variables the word reads whose value is not known.
    pub vars: Vec<String>,
    /// Whether the word has unquoted glob characters (`*`, `?`, `[`).
    pub glob: bool,
}

impl Word {
    /// A fully known word.
    pub fn literal(text: impl Into<String>) -> Self {
        Word {
            text: text.into(),
            ..Word::default()
        }
    }
}

/// A `NAME=value` assignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assignment {
    /// Variable name.
    pub name: String,
    /// Value after expansion.
    pub value: Word,
}

/// A redirection and its target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirect {
    /// The file descriptor written before the operator, if any.
    pub fd: Option<i32>,
    /// Which way data moves.
    pub kind: RedirectKind,
    /// The file (or `/dev/fd/N` for a process substitution).
    pub target: Word,
}

/// Direction of a redirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RedirectKind {
    /// `<`
    Read,
    /// `>` or `>|` or `&>`
    Write,
    /// `>>` or `&>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `<&` / `>&` to a descriptor
    Duplicate,
}

impl RedirectKind {
    /// The operator as written.
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            RedirectKind::Read => "<",
            RedirectKind::Write => ">",
            RedirectKind::Append => ">>",
            RedirectKind::ReadWrite => "<>",
            RedirectKind::Duplicate => ">&",
        }
    }

    /// Whether the target is written to.
    pub fn writes(self) -> bool {
        matches!(
            self,
            RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite
        )
    }

    /// Whether the target is read from.
    pub(crate) fn reads(self) -> bool {
        matches!(self, RedirectKind::Read | RedirectKind::ReadWrite)
    }
}

/// A source of a command's standard input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Input {
    /// The output of another command of the line (a pipe).
    Pipe(usize),
    /// A file (`< file`).
    File(Word),
    /// Literal text: a here-document or here-string.
    Text(Word),
}

/// Code given to an interpreter on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Code {
    /// The language (`python`, `perl`, `ruby`, `node`, `php`, `awk`, ...).
    pub lang: String,
    /// The program text.
    pub text: String,
    /// The string literals in the program, for path and URL checks.
    pub literals: Vec<String>,
}

/// Why part of a line could not be read statically.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What kind of problem.
    pub kind: ProblemKind,
    /// Details for a person.
    pub detail: String,
}

/// The kinds of [`Problem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// The text is not valid shell grammar.
    Unparsable,
    /// The line is longer than the analyzer reads.
    TooLong,
    /// Nested shells, substitutions or groups go deeper than the analyzer follows.
    TooDeep,
    /// The line expands to more commands or words than the analyzer follows.
    TooLarge,
}
