//! Data that bash evaluates as code.
//!
//! Some text bash reads as data on one side and runs on the other:
//!
//! | where                                            | what bash does with it |
//! |--------------------------------------------------|------------------------|
//! | `(( E ))`, `$(( E ))`, `$[ E ]`, `for (( ... ))`, `let E`, `[[ A -eq B ]]` (and `-ne -lt -le -gt -ge`), `${x:E:E}`, an indexed array's subscript `a[E]`, a value given to a `declare -i` variable | evaluates E as an arithmetic expression |
//! | `printf -v N`, `read N`, `unset N`, `test -v N`, `[[ -v N ]]`, `declare`/`typeset`/`local N=...`, `${!N}`, the target of `declare -n` | takes N as a variable name, with a subscript when it has one |
//! | `${x@P}`, and `PS0`, `PS1`, `PS2`, `PS4` (the last under `set -x`) | expands the value as a prompt string |
//!
//! In an arithmetic expression every name is a variable whose value is
//! evaluated as an expression in turn, and every subscript `a[...]` is
//! first expanded like a word: so `x='a[$(cmd)]'; [[ $x -eq 1 ]]` runs
//! `cmd`, although `cmd` is never a word of the line. A name with a
//! subscript given to a builtin is read the same way, and a prompt string
//! runs its substitutions. Here that text is read as bash would, and the
//! commands hidden in it are walked as commands of the line, labelled with
//! where they were found ([`Command::via`](crate::Command)); each place is
//! recorded in [`Analysis::evaluated`](crate::Analysis), also when part of
//! what is evaluated is only known at run time (a command's output, input
//! read on the line), so the rules can ask about it instead of allowing it.

use std::ops::Range;

use crate::model::{EvalKind, Evaluated, ProblemKind, Word};
use crate::walk::Walker;
use crate::words::Var;

/// How many times the value of a variable is followed into another
/// (`x=y; y='a[$(cmd)]'; (( x ))`). bash follows up to 1024; deeper than
/// this is reported, so the line asks.
const MAX_EVAL_DEPTH: u32 = 8;

/// Most names and subscripts evaluated on one line (values that name
/// several variables each multiply the work).
const MAX_EVAL_STEPS: u32 = 2048;

/// Variables whose value bash expands as a prompt string: `PS1`, `PS2`,
/// `PS0` in an interactive shell, `PS4` before each command under `set -x`.
pub(crate) const PROMPT_VARIABLES: &[&str] = &["PS0", "PS1", "PS2", "PS4"];

impl Walker {
    /// An arithmetic expression as written on the line (`(( E ))`,
    /// `$(( E ))`, `for (( E; E; E ))`, `${x:E}`): its own substitutions
    /// run first, as in double quotes (they are commands of the line, in
    /// plain sight), then the text is evaluated. Returns the text after
    /// expansion.
    pub(crate) fn eval_source_arithmetic(&mut self, raw: &str) -> Word {
        let masking = std::mem::replace(&mut self.masking, true);
        let expanded = self.expand_heredoc(raw);
        self.masking = masking;
        self.eval_arithmetic(&expanded, "arithmetic", 0);
        expanded
    }

    /// Evaluates `w` (an expanded word) as an arithmetic expression.
    /// `context` names where, for the report.
    pub(crate) fn eval_arithmetic(&mut self, w: &Word, context: &str, depth: u32) {
        // The output of a command of the line is evaluated: a subscript in
        // it would run.
        self.note_unknown(w, context, EvalKind::Arithmetic);
        self.note_positional(w, context, EvalKind::Arithmetic);
        if !self.eval_step(depth)
            || !w
                .text
                .contains(|c: char| c.is_ascii_alphabetic() || c == '_')
        {
            return;
        }
        let text = w.text.clone();
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_digit() {
                // `16#ff`, `0x1F`, `64#a@_`: a number, not a name.
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'#' | b'@' | b'_'))
                {
                    i += 1;
                }
                continue;
            }
            if !(c.is_ascii_alphabetic() || c == b'_') {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            // `$name` and `${name...}` in a text only partly known are how
            // the unknown parts are spelled, not names of the expression.
            let spelled = start > 0 && matches!(b[start - 1], b'$' | b'{' | b'!' | b'#');
            let name = &text[start..i];
            let mut j = i;
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
            if b.get(j) == Some(&b'[')
                && let Some(end) = closing_bracket(b, j)
            {
                if !spelled {
                    self.eval_subscript(&text[j + 1..end], context, depth);
                    // The element's value is evaluated too.
                    self.eval_variable(name, context, depth);
                }
                i = end + 1;
                continue;
            }
            if spelled {
                continue;
            }
            self.eval_variable(name, context, depth);
        }
    }

    /// The value of a variable named in an arithmetic expression, which
    /// bash evaluates as an expression too.
    fn eval_variable(&mut self, name: &str, context: &str, depth: u32) {
        let name = self.resolve_reference(name);
        let values = match self.lookup(&name) {
            Some(Var::Scalar(v)) => vec![v],
            Some(Var::Array(items)) => items,
            // From the environment, or not set.
            Some(Var::Unset) | None => return,
        };
        for v in values {
            if v.dynamic {
                self.note_unknown(&v, context, EvalKind::Arithmetic);
            } else {
                self.eval_arithmetic(&v, context, depth + 1);
            }
        }
    }

    /// A subscript in an evaluated text: expanded as a word (its
    /// substitutions run: hidden code), then evaluated as an expression.
    fn eval_subscript(&mut self, raw: &str, context: &str, depth: u32) {
        if !raw.contains(['$', '`']) && !raw.contains(|c: char| c.is_ascii_alphabetic()) {
            return;
        }
        let (mut expanded, hidden) = self.expand_hidden(raw, context);
        if !hidden.is_empty() {
            let text = Word::literal(raw);
            self.note_evaluated(
                context,
                EvalKind::Arithmetic,
                &text,
                hidden.clone().collect(),
                false,
            );
            // What the hidden commands print is theirs, reported with them.
            expanded.feeds.retain(|f| !hidden.contains(f));
        }
        self.eval_arithmetic(&expanded, context, depth + 1);
    }

    /// A variable name given to a builtin that assigns, tests or unsets it
    /// (`printf -v N`, `read N`, `test -v N`, `declare N=...`): with a
    /// subscript, the subscript is expanded and evaluated.
    pub(crate) fn eval_name(&mut self, w: &Word, context: &str) {
        self.note_positional(w, context, EvalKind::Arithmetic);
        if self.note_unknown(w, context, EvalKind::Arithmetic) {
            // The name is a command's output: it can hold a subscript.
            return;
        }
        // `NAME[SUBSCRIPT]`, maybe followed by `=value` or `+=value`.
        let text = w.text.clone();
        let b = text.as_bytes();
        let Some(open) = text.find('[') else { return };
        if text.find('=').is_some_and(|eq| eq < open) {
            return;
        }
        if let Some(close) = closing_bracket(b, open) {
            self.eval_subscript(&text[open + 1..close], context, 0);
        }
    }

    /// A value bash expands as a prompt string: its substitutions run.
    pub(crate) fn eval_prompt(&mut self, w: &Word, context: &str) {
        self.note_positional(w, context, EvalKind::Prompt);
        if self.note_unknown(w, context, EvalKind::Prompt) {
            return;
        }
        if !w.text.contains(['$', '`']) {
            return;
        }
        let (_, hidden) = self.expand_hidden(&w.text, context);
        if !hidden.is_empty() {
            self.note_evaluated(context, EvalKind::Prompt, w, hidden.collect(), false);
        }
    }

    /// Expands `text` as bash expands a subscript or a prompt string (as
    /// in double quotes), with the command substitutions in it walked as
    /// hidden code labelled `context`. Returns the expansion and the
    /// commands found.
    fn expand_hidden(&mut self, text: &str, context: &str) -> (Word, Range<usize>) {
        let start = self.out.commands.len();
        let outer = self.hidden.replace(context.to_string());
        let masking = std::mem::replace(&mut self.masking, true);
        let w = self.expand_heredoc(text);
        self.masking = masking;
        self.hidden = outer;
        (w, start..self.out.commands.len())
    }

    /// A word only partly known whose unknown parts come from commands of
    /// the line (spliced in, or read into a variable it expands): recorded,
    /// with those commands as its `feeds`. Returns whether it was.
    fn note_unknown(&mut self, w: &Word, context: &str, kind: EvalKind) -> bool {
        if !w.dynamic {
            return false;
        }
        let mut sources = w.feeds.clone();
        for v in &w.vars {
            if let Some(from) = self.tainted.get(v) {
                sources.extend(
                    from.iter()
                        .filter(|f| !sources.contains(f))
                        .collect::<Vec<_>>(),
                );
            }
        }
        if sources.is_empty() {
            return false;
        }
        let mut text = w.clone();
        text.feeds = sources;
        self.note_evaluated(context, kind, &text, Vec::new(), true);
        true
    }

    /// `$1`, `${2}`, `$@`, `$*` in text bash evaluates: the arguments of a
    /// function or of `bash -c`, which the line may give (`f 'a[$(cmd)]'`).
    fn note_positional(&mut self, w: &Word, context: &str, kind: EvalKind) {
        let positional = w.vars.iter().any(|v| v.chars().all(|c| c.is_ascii_digit()))
            || ["$@", "$*", "${@", "${*"]
                .iter()
                .any(|p| w.text.contains(p));
        if positional && w.dynamic {
            let e = Evaluated {
                context: context.to_string(),
                kind,
                text: w.clone(),
                commands: Vec::new(),
                unknown: true,
            };
            if self.positional.len() < 64 && !self.positional.contains(&e) {
                self.positional.push(e);
            }
        }
    }

    /// `declare -a 'x=(WORDS)'`: bash reads the quoted value as an array
    /// assignment, and expands its words (their substitutions run).
    fn eval_array_words(&mut self, value: &Word, context: &str) {
        let t = value.text.trim();
        let Some(inner) = t.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
            return;
        };
        if value.dynamic {
            self.note_unknown(value, context, EvalKind::Words);
            return;
        }
        if !inner.contains(['$', '`']) {
            return;
        }
        let (_, hidden) = self.expand_hidden(inner, context);
        if !hidden.is_empty() {
            self.note_evaluated(context, EvalKind::Words, value, hidden.collect(), false);
        }
    }

    /// Counts one step of evaluation; false (and a problem reported) when
    /// the line goes deeper or further than is followed.
    fn eval_step(&mut self, depth: u32) -> bool {
        if depth > MAX_EVAL_DEPTH {
            self.problem(
                ProblemKind::TooDeep,
                format!(
                    "variables whose values name other variables, evaluated as arithmetic, more than {MAX_EVAL_DEPTH} deep"
                ),
            );
            return false;
        }
        self.eval_steps += 1;
        if self.eval_steps > MAX_EVAL_STEPS {
            self.problem(
                ProblemKind::TooLarge,
                format!("more than {MAX_EVAL_STEPS} names evaluated as arithmetic"),
            );
            return false;
        }
        true
    }

    pub(crate) fn note_evaluated(
        &mut self,
        context: &str,
        kind: EvalKind,
        text: &Word,
        commands: Vec<usize>,
        unknown: bool,
    ) {
        let e = Evaluated {
            context: context.to_string(),
            kind,
            text: text.clone(),
            commands,
            unknown,
        };
        if self.out.evaluated.len() < 256 && !self.out.evaluated.contains(&e) {
            self.out.evaluated.push(e);
        }
    }
}

/// The index of the `]` closing the `[` at `open`, counting nested
/// brackets.
fn closing_bracket(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

// # Builtins, assignments and references

impl Walker {
    /// The arguments of builtins that evaluate names or expressions:
    /// `let`, `printf -v`, `test -v`, `read`, `unset`, `declare` and the
    /// like (whose `-n` makes a reference, `-i` an integer, and whose
    /// prompt strings are expanded later), `hash -p`.
    pub(crate) fn eval_builtin_args(&mut self, argv: &[Word]) {
        let Some(program) = argv.first().filter(|w| !w.dynamic).map(|w| w.text.clone()) else {
            return;
        };
        let args = &argv[1..];
        match program.as_str() {
            "let" => {
                for a in args {
                    self.eval_arithmetic(a, "arithmetic", 0);
                }
            }
            "printf" => {
                for (k, a) in args.iter().enumerate() {
                    if a.text == "--" {
                        break;
                    }
                    let name = match a.text.strip_prefix("-v") {
                        Some("") => args.get(k + 1).cloned(),
                        Some(rest) => Some(Word {
                            text: rest.to_string(),
                            ..a.clone()
                        }),
                        None => None,
                    };
                    if let Some(name) = name {
                        self.eval_name(&name, "printf -v");
                        break;
                    }
                }
            }
            "wait" => {
                if let Some(name) = crate::walk::wait_p_name(args) {
                    self.eval_name(&name, "wait -p");
                }
            }
            "getopts" => {
                if let Some(name) = args.get(1) {
                    self.eval_name(name, "getopts");
                }
            }
            "test" | "[" => {
                for pair in args.windows(2) {
                    if matches!(pair[0].text.as_str(), "-v" | "-R") {
                        self.eval_name(&pair[1], "test -v");
                    }
                }
            }
            "read" => {
                let mut k = 0;
                while k < args.len() {
                    let t = args[k].text.as_str();
                    if let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) {
                        // Options with a value: the value is the next word
                        // unless it is attached (`-p'> '`).
                        if let Some(pos) = cluster.find(|c| "adinNptu".contains(c))
                            && pos + 1 == cluster.len()
                        {
                            k += 1;
                        }
                        k += 1;
                        continue;
                    }
                    self.eval_name(&args[k], "read");
                    k += 1;
                }
            }
            "unset" if !args.iter().any(|a| a.text == "-f") => {
                for a in args.iter().filter(|a| !a.text.starts_with('-')) {
                    self.eval_name(a, "unset");
                }
            }
            "declare" | "typeset" | "local" | "export" | "readonly" => {
                self.eval_declaration(&program, args)
            }
            "hash" => {
                let mut k = 0;
                while k < args.len() {
                    match args[k].text.as_str() {
                        "-r" => self.unbind_hashed(None),
                        "-d" => {
                            for n in &args[k + 1..] {
                                self.unbind_hashed(Some(&n.text));
                            }
                            return;
                        }
                        "-p" => {
                            if let Some(path) = args.get(k + 1) {
                                let path = path.clone();
                                for n in &args[k + 2..] {
                                    self.bind_hashed(n, &path);
                                }
                            }
                            return;
                        }
                        _ => {}
                    }
                    k += 1;
                }
            }
            _ => {}
        }
    }

    /// `declare [-flags] NAME[=VALUE]...` and its kin.
    fn eval_declaration(&mut self, program: &str, args: &[Word]) {
        let flags: String = args
            .iter()
            .filter_map(|a| a.text.strip_prefix('-'))
            .collect();
        // `export -n` takes the export attribute away; elsewhere `-n` makes
        // a reference.
        let reference = flags.contains('n') && program != "export";
        let integer = flags.contains('i');
        let array = flags.contains(['a', 'A']) && program != "export";
        // `export` and `readonly` refuse a name with a subscript.
        let subscripts = !matches!(program, "export" | "readonly");
        for a in args.iter().filter(|a| !a.text.starts_with(['-', '+'])) {
            if subscripts {
                self.eval_name(a, program);
            }
            let (name, value) = match a.text.split_once('=') {
                Some((n, v)) => (
                    n.strip_suffix('+').unwrap_or(n).to_string(),
                    Some(Word {
                        text: v.to_string(),
                        ..a.clone()
                    }),
                ),
                None => (a.text.clone(), None),
            };
            if reference {
                if let Some(target) = &value {
                    self.eval_name(target, "declare -n");
                }
                self.refs.insert(name, value);
                continue;
            }
            if integer {
                self.integers.insert(name.clone());
            }
            if let Some(value) = value {
                if array {
                    self.eval_array_words(&value, &format!("{program} -a"));
                }
                self.eval_assigned(&name, &value);
            }
        }
    }

    /// A value assigned to `name`: an integer variable evaluates it, a
    /// prompt variable expands it later.
    pub(crate) fn eval_assigned(&mut self, name: &str, value: &Word) {
        if self.integers.contains(name) {
            self.eval_arithmetic(value, "arithmetic", 0);
        }
        if PROMPT_VARIABLES.contains(&name) {
            self.eval_prompt(value, name);
        }
    }

    /// The variable an assignment to `name` sets: the target of a
    /// reference, followed. When the target is only known at run time,
    /// that is recorded (any variable may be set) and `name` is kept.
    pub(crate) fn assignment_target(&mut self, name: &str) -> String {
        if self.refs.is_empty() {
            return name.to_string();
        }
        let mut name = name.to_string();
        for _ in 0..8 {
            match self.refs.get(&name) {
                Some(Some(target)) if target.dynamic => {
                    let target = target.clone();
                    self.note_evaluated(
                        "declare -n",
                        EvalKind::Reference,
                        &target,
                        Vec::new(),
                        true,
                    );
                    return name;
                }
                Some(Some(target)) => {
                    let t = &target.text;
                    name = t.split('[').next().unwrap_or(t).to_string();
                }
                _ => return name,
            }
        }
        name
    }

    /// The variable a reference `name` stands for, when it is one with a
    /// known target; else `name`.
    pub(crate) fn resolve_reference<'a>(&self, name: &'a str) -> std::borrow::Cow<'a, str> {
        if self.refs.is_empty() {
            return std::borrow::Cow::Borrowed(name);
        }
        let mut name = name.to_string();
        for _ in 0..8 {
            match self.refs.get(&name) {
                Some(Some(target)) if !target.dynamic => {
                    let t = &target.text;
                    name = t.split('[').next().unwrap_or(t).to_string();
                }
                _ => break,
            }
        }
        std::borrow::Cow::Owned(name)
    }
}

#[cfg(test)]
mod tests {
    use crate::{EvalKind, analyze};

    /// The hidden commands of a line: (program, where it hid).
    fn hidden(line: &str) -> Vec<(String, String)> {
        let a = analyze(line);
        a.evaluated
            .iter()
            .flat_map(|e| {
                e.commands.iter().map(|&i| {
                    let c = &a.commands[i];
                    assert_eq!(c.via.last(), Some(&e.context), "{line}");
                    (c.program().unwrap_or("?").to_string(), e.context.clone())
                })
            })
            .collect()
    }

    /// Where bash evaluates data as code, the command hidden in it is a
    /// command of the line, labelled by where it hid.
    #[test]
    fn commands_hidden_in_data_bash_evaluates_are_found() {
        for (line, context) in [
            ("[[ 'a[$(id)]' -eq 0 ]]", "arithmetic"),
            ("x='a[$(id)]'; [[ $x -eq 1 ]]", "arithmetic"),
            ("x='a[$(id)]'; [[ x -gt 1 ]]", "arithmetic"),
            ("x='a[$(id)]'; [[ 1 -lt \"$x\" ]]", "arithmetic"),
            ("x='a[`id`]'; (( x ))", "arithmetic"),
            ("x='a[$(id)]'; echo $(( x + 1 ))", "arithmetic"),
            ("x='a[$(id)]'; echo $(( $x ))", "arithmetic"),
            ("x='a[$(id)]'; echo $[ x ]", "arithmetic"),
            (
                "x='a[$(id)]'; for (( i = x; i < 1; i++ )); do :; done",
                "arithmetic",
            ),
            ("x='a[$(id)]'; s=abc; echo ${s:x}", "arithmetic"),
            ("x='a[$(id)]'; arr=(1 2); echo ${arr[x]}", "arithmetic"),
            ("y='a[$(id)]'; x=y; (( x ))", "arithmetic"),
            ("x='a[1]+b[\"$(id)\"]'; (( x ))", "arithmetic"),
            ("x='a[b[$(id)]]'; (( x ))", "arithmetic"),
            ("let 'a[$(id)]=1'", "arithmetic"),
            ("declare -i n; n='a[$(id)]'", "arithmetic"),
            ("declare -i n='a[$(id)]'", "arithmetic"),
            ("printf -v 'a[$(id)]' x", "printf -v"),
            ("printf -v'a[$(id)]' x", "printf -v"),
            ("test -v 'a[$(id)]'", "test -v"),
            ("[ -v 'a[$(id)]' ]", "test -v"),
            ("[[ -v 'a[$(id)]' ]]", "[[ -v ]]"),
            ("read 'a[$(id)]' <<< x", "read"),
            ("read -r -p '> ' 'a[$(id)]' <<< x", "read"),
            ("unset 'a[$(id)]'", "unset"),
            ("declare 'a[$(id)]=1'", "declare"),
            ("typeset 'a[x=$(id)]=1'", "typeset"),
            ("f() { local 'a[$(id)]=1'; }", "local"),
            ("x='a[$(id)]'; echo ${!x}", "${!name}"),
            ("declare -n r='a[$(id)]'", "declare -n"),
            ("declare -n r; r='a[$(id)]'", "declare -n"),
            ("x='$(id)'; echo \"${x@P}\"", "${x@P}"),
            ("PS4='$(id)'; set -x; true", "PS4"),
            ("export PS4='`id`'", "PS4"),
            ("PS4='$(id)' bash -xc true", "PS4"),
            ("env PS1='$(id)' bash -ic true", "PS1"),
            ("declare -a 'x=([$(id)]=1)'", "declare -a"),
            ("declare -a 'x=($(id))'", "declare -a"),
            ("f() { local -a 'x=($(id))'; }", "local -a"),
            ("y='$(id)'; declare -a x=\"($y)\"", "declare -a"),
        ] {
            assert_eq!(
                hidden(line),
                vec![("id".to_string(), context.to_string())],
                "{line}"
            );
        }
    }

    /// Ordinary arithmetic and declarations hide nothing and leave nothing
    /// unknown.
    #[test]
    fn ordinary_arithmetic_and_names_are_not_evaluated_code() {
        for line in [
            "x=$((a+1))",
            "n=3; [[ $n -eq 3 ]]",
            "[[ $# -eq 0 ]]",
            "[[ $count -gt 5 ]]",
            "(( i++ ))",
            "for (( i = 0; i < 3; i++ )); do echo $i; done",
            "echo $(( 16#ff + 0x10 ))",
            "declare -a arr",
            "declare -i n=5",
            "printf -v out '%s' hi",
            "read -r line < notes.txt",
            "test -v HOME",
            "set -x",
            "PS4='+ ${BASH_SOURCE}:${LINENO}: '",
            "trap 'rm -f \"$tmp\"' EXIT",
            "(( $(wc -l < f.txt) > 3 ))",
            "echo ${arr[$((i + 1))]}",
            "a[3]=x; echo ${a[3]}",
        ] {
            let a = analyze(line);
            let unknown: Vec<_> = a
                .evaluated
                .iter()
                .filter(|e| !e.commands.is_empty() || e.unknown && e.text.feeds.is_empty())
                .collect();
            assert!(unknown.is_empty(), "{line}: {unknown:?}");
        }
    }

    /// Data only known at run time that bash evaluates is recorded with
    /// where it comes from: a command's output, input read on the line.
    #[test]
    fn output_and_input_evaluated_as_arithmetic_are_recorded() {
        for (line, source) in [
            ("n=$(cat VERSION); (( n > 2 ))", "cat"),
            ("(( $(cat VERSION) > 2 ))", "cat"),
            ("read n < f; echo $(( n + 1 ))", "read"),
            ("while read -r n; do (( t += n )); done < nums.txt", "read"),
            ("if true; then n=$(cat f); fi; [[ $n -eq 1 ]]", "cat"),
            ("printf -v \"$(cat name)\" x", "cat"),
            ("mapfile -t arr < f; (( arr[0] ))", "mapfile"),
            ("for x in $(cat list); do (( x > 1 )); done", "cat"),
        ] {
            let a = analyze(line);
            let from: Vec<&str> = a
                .evaluated
                .iter()
                .filter(|e| e.unknown && e.kind == EvalKind::Arithmetic)
                .flat_map(|e| e.text.feeds.iter())
                .filter_map(|&f| a.commands[f].program())
                .collect();
            assert!(from.contains(&source), "{line}: {from:?}");
        }
    }

    /// A function's or a script's arguments evaluated as code count when
    /// the line gives literal text with substitutions (which could be
    /// among them), and only then.
    #[test]
    fn arguments_evaluated_as_code_are_recorded_when_the_line_could_carry_code() {
        for line in [
            "f() { (( $1 )); }; f 'a[$(id)]'",
            "set -- 'a[$(id)]'; (( $1 ))",
            "bash -c '(( $1 ))' _ 'a[$(id)]'",
            "f() { printf -v \"$1\" x; }; f 'a[$(id)]'",
        ] {
            let a = analyze(line);
            // Arguments the line gives (`set -- X`, a call of a function it
            // defines) are known: the code hidden in them is found itself.
            assert!(
                a.evaluated
                    .iter()
                    .any(|e| e.unknown && e.text.feeds.is_empty() || !e.commands.is_empty()),
                "{line}: {:?}",
                a.evaluated
            );
        }
        let a = analyze("f() { echo $(( $1 * 2 )); }; f 3");
        assert!(a.evaluated.is_empty(), "{:?}", a.evaluated);
    }

    /// A reference whose target is only known at run time makes every
    /// assignment through it unknown.
    #[test]
    fn assignments_through_unknown_references_are_recorded() {
        let a = analyze("f() { local -n r=$1; r=/tmp/evil; }; f PATH");
        assert!(
            a.evaluated
                .iter()
                .any(|e| e.kind == EvalKind::Reference && e.unknown),
            "{:?}",
            a.evaluated
        );
    }

    /// Through a reference, an assignment sets the target and an expansion
    /// reads it.
    #[test]
    fn references_are_followed() {
        let a = analyze("declare -n r=PATH; r=/tmp/evil");
        assert_eq!(a.commands[1].assignments[0].name, "PATH");
        let a = analyze("declare -n r=GITHUB_TOKEN; echo \"$r\"");
        assert!(a.commands[1].argv[1].vars.contains(&"GITHUB_TOKEN".into()));
        let a = analyze("declare -n r; r=HOME; r=/tmp/x");
        assert_eq!(a.commands[2].assignments[0].name, "HOME");
    }

    /// `hash -p PATH NAME` and `BASH_CMDS[NAME]=PATH` make NAME run PATH;
    /// `hash -r` undoes it.
    #[test]
    fn hashed_names_run_their_path() {
        for line in [
            "hash -p /bin/rm ls; ls -rf x",
            "BASH_CMDS[ls]=/bin/rm; ls -rf x",
            "BASH_CMDS=([ls]=/bin/rm); ls -rf x",
        ] {
            let a = analyze(line);
            let last = a.commands.last().unwrap();
            assert_eq!(last.program(), Some("rm"), "{line}");
        }
        let a = analyze("hash -p /bin/rm ls; hash -r; ls -la");
        assert_eq!(a.commands.last().unwrap().program(), Some("ls"));
        // A name only known at run time could be any program's.
        let a = analyze("hash -p /bin/rm \"$x\"");
        assert!(!a.problems.is_empty());
    }
}
