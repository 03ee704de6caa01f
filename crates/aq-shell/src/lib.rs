//! Reads a shell command line the way bash would and lists every program it
//! would run.
//!
//! The key decision: judge *commands*, not text. A line is parsed with a real
//! bash grammar ([`brush_parser`]), then every simple command is collected
//! with its words expanded as far as they can be known without running
//! anything: quotes and escapes removed, `$'...'` decoded, braces expanded,
//! `~` and variables assigned earlier on the line substituted. Wrappers
//! (`sudo`, `env`, `xargs`, `timeout`, `find -exec`, ...), nested shells
//! (`bash -c`, `eval`, here-documents fed to `sh`) and the shell commands
//! inside interpreter one-liners are unwrapped into commands of their own,
//! so a rule about `curl` sees `curl` however it was spelled or hidden.
//!
//! Data flow is kept as links between commands: a pipe (`curl | sh`), a
//! substitution (`sh -c "$(curl ...)"`), a process substitution
//! (`bash <(curl ...)`), a here-string. Rules in `aq-policy` follow them.
//!
//! This crate is pure: text in, values out. No file, clock or environment is
//! read, so what it says about a line is the same everywhere.

#![deny(missing_docs)]

mod calls;
mod embedded;
mod evaluated;
mod git_alias;
mod links;
mod model;
mod powershell;
mod walk;
mod words;
mod wrappers;
mod xargs;

pub use calls::is_home as names_home;
pub use embedded::interpreter_lang;
pub use model::{
    Analysis, Assignment, Code, Command, EvalKind, Evaluated, Input, Problem, ProblemKind,
    Redirect, RedirectKind, Word,
};
pub use walk::{HOME_DIR_VARS, env_assignment};
pub use wrappers::{SHELLS, git_config_runs_program, is_runner_label, is_shell};

/// Longest line the analyzer parses. Longer lines are reported as
/// [`ProblemKind::TooLong`] (a caller should ask, not allow).
pub const MAX_LINE_BYTES: usize = 256 * 1024;

/// Deepest nesting of nested shells, substitutions and wrappers followed.
/// Each nested script is walked on top of the stack its parents use, so this
/// times [`MAX_NESTED_SYNTAX_NESTING`] bounds the walker's recursion.
pub const MAX_DEPTH: u32 = 12;

/// Deepest syntax nesting of a command line handed to the parser: brackets,
/// compound commands and, inside words, substitutions and quotes, measured so
/// that quoting, comments, here-documents or case patterns cannot hide a
/// level (see `measure_tokens`). The tokenizer, the grammar, the word parser
/// and the walker each recurse once or more per level; at this depth a debug
/// build still fits in the 2 MiB stack of a spawned thread.
pub const MAX_SYNTAX_NESTING: usize = 32;

/// The same for a script found inside the line (`bash -c`, `eval`, `$(...)`,
/// a here-document fed to a shell), walked on top of its parents.
pub const MAX_NESTED_SYNTAX_NESTING: usize = 12;

/// Most commands collected from one line.
pub(crate) const MAX_COMMANDS: usize = 4096;

/// Analyzes one command line, as passed to `bash -c`.
pub fn analyze(line: &str) -> Analysis {
    let mut walker = walk::Walker::new();
    match parse_script(line, &LINE_LIMITS) {
        Ok(program) => walker.walk_program(&program),
        Err(problem) => walker.problem(problem.kind, problem.detail),
    }
    walker.finish()
}

/// Analyzes a program's argument vector as it would be executed (no shell
/// parsing of the words themselves; wrappers and `-c` strings are still
/// followed).
pub fn analyze_argv(argv: &[String]) -> Analysis {
    let mut walker = walk::Walker::new();
    let command = Command {
        argv: argv.iter().map(Word::literal).collect(),
        ..Command::default()
    };
    walker.push_command(command);
    walker.finish()
}

// # Limits on what is handed to brush-parser
//
// brush-parser recurses once or more per nesting level (its tokenizer on
// `$(`, `${` and `$[`, its grammar on compound commands, its word parser on
// substitutions and quotes), and its word parser backtracks without
// memoizing: every `${name[...]}` re-reads its subscript once per operator
// it tries (about twenty), every `$((` that is not arithmetic is read again
// as `$( (`. Hostile lines of a few hundred bytes would exhaust the stack or
// run for hours, so every script is measured before it is parsed:
//
// 1. On the raw text, the `$(`, `${` and `$[` are counted (not matched: a
//    closer inside quotes would hide a level), which bounds the tokenizer.
// 2. On brush's own tokens, where quotes, comments and here-documents are
//    already resolved, the nesting of compound commands is followed with a
//    stack that opens on every opener and closes only on a closer of the same
//    kind in a position where the grammar would close, so it can only
//    overestimate; inside each word, substitutions and brackets are counted.
// 3. Per word, the work of the word parser is estimated from its length and
//    its subscripts and `$((`, and summed over the script.

/// How far the parser may be asked to go on one script.
struct Limits {
    /// Deepest nesting, as measured by [`measure_tokens`].
    nesting: usize,
    /// Most `$(`, `${` and `$[` in the text.
    expansions: usize,
}

/// For the command line itself.
const LINE_LIMITS: Limits = Limits {
    nesting: MAX_SYNTAX_NESTING,
    expansions: 128,
};

/// For a script found inside the line, parsed while the walker is already
/// deep in its parents.
const NESTED_LIMITS: Limits = Limits {
    nesting: MAX_NESTED_SYNTAX_NESTING,
    expansions: 32,
};

/// Parses a script found inside the line (a `-c` string, `eval`, a
/// substitution, a here-document fed to a shell) with the limits applied.
pub(crate) fn parse_program(text: &str) -> Result<brush_parser::ast::Program, Problem> {
    parse_script(text, &NESTED_LIMITS)
}

/// Parses with the limits applied.
fn parse_script(text: &str, limits: &Limits) -> Result<brush_parser::ast::Program, Problem> {
    if text.len() > MAX_LINE_BYTES {
        return Err(Problem {
            kind: ProblemKind::TooLong,
            detail: format!(
                "the line is {} bytes; lines over {} bytes are not analyzed",
                text.len(),
                MAX_LINE_BYTES
            ),
        });
    }
    if let Some(at) = odd_here_delimiter(text) {
        return Err(Problem {
            kind: ProblemKind::Unparsable,
            detail: format!(
                "a here-document whose delimiter is not a plain word (byte {at}): the shell parser cannot be trusted with it"
            ),
        });
    }
    let expansions = count_expansions(text);
    if expansions > limits.expansions {
        return Err(Problem {
            kind: ProblemKind::TooDeep,
            detail: format!(
                "{expansions} substitutions or expansions (`$(`, `${{`, `$[`); more than {} is not analyzed",
                limits.expansions
            ),
        });
    }
    let options = brush_parser::ParserOptions::default();
    let tokens =
        guarded(|| brush_parser::uncached_tokenize_str(text, &options.tokenizer_options()))
            .ok_or_else(parser_panicked)?
            .map_err(|e| Problem {
                kind: ProblemKind::Unparsable,
                detail: format!("not valid shell syntax: {e}"),
            })?;
    let shape = measure_tokens(&tokens);
    if shape.nesting > limits.nesting {
        return Err(Problem {
            kind: ProblemKind::TooDeep,
            detail: format!(
                "brackets, keywords or substitutions nest up to {} deep; more than {} is not analyzed",
                shape.nesting, limits.nesting
            ),
        });
    }
    if shape.word_work > MAX_LINE_BYTES as u64 {
        return Err(Problem {
            kind: ProblemKind::TooLarge,
            detail: format!(
                "its words would take the parser as long as {} bytes of plain text (array subscripts, `$((` or brace expansions); more than {} is not analyzed",
                shape.word_work, MAX_LINE_BYTES
            ),
        });
    }
    guarded(|| brush_parser::parse_tokens(&tokens, &options))
        .ok_or_else(parser_panicked)?
        .map_err(|e| Problem {
            kind: ProblemKind::Unparsable,
            detail: format!("not valid shell syntax: {e}"),
        })
}

/// Runs a brush-parser call, turning a panic into `None`. brush-parser
/// 0.4 can panic on some malformed input (an `unwrap` in its tokenizer, on
/// `) <<EOF$(( )<(` and a newline); such a line cannot be read, so it asks,
/// instead of taking the process down. Needs `panic = "unwind"`.
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok()
}

fn parser_panicked() -> Problem {
    Problem {
        kind: ProblemKind::Unparsable,
        detail: "the shell parser failed on this text".to_string(),
    }
}

/// Where a here-document's delimiter is one the parser cannot be trusted
/// with, if anywhere. brush-parser 0.4 loops without end on some bodies,
/// allocating until the machine runs out of memory (found by the
/// robustness property tests with random seeds: `cat <<'' `, `<<$(  `,
/// `<<F"$(  `), so a delimiter that is not a plain word (once its quotes
/// are removed: letters, digits and `_ - . + : @ % / ! = , ^ ~`, like
/// `EOF`, `'END'`, `"SQL"`, `\EOF`) is refused before the parser sees the
/// line; it asks. Quoting around the operator is not followed, so `<<`
/// inside a string followed by such bytes asks too.
fn odd_here_delimiter(text: &str) -> Option<usize> {
    let plain = |c: u8| c.is_ascii_alphanumeric() || b"_-.+:@%/!=,^~".contains(&c);
    let b = text.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] != b'<' || b[i + 1] != b'<' {
            i += 1;
            continue;
        }
        if b.get(i + 2) == Some(&b'<') {
            // A here-string, `<<<`: not a here-document.
            i += 3;
            continue;
        }
        let at = i;
        let mut j = i + 2;
        if b.get(j) == Some(&b'-') {
            j += 1;
        }
        while matches!(b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        // The delimiter word, its quotes removed.
        let mut word: Vec<u8> = Vec::new();
        let mut quoted = false;
        let mut odd = false;
        while let Some(&c) = b.get(j) {
            match c {
                b'\'' | b'"' => {
                    let rest = &b[j + 1..];
                    match rest.iter().position(|x| *x == c) {
                        Some(k) => {
                            quoted = true;
                            word.extend_from_slice(&rest[..k]);
                            j += k + 2;
                        }
                        // An unclosed quote right at the end closes an
                        // outer string (`echo '<<'`); anything after it
                        // is a delimiter the tokenizer may loop on.
                        None => {
                            odd = rest.iter().any(|x| !x.is_ascii_whitespace());
                            break;
                        }
                    }
                }
                b'\\' => {
                    word.extend(b.get(j + 1).copied());
                    j += 2;
                }
                c if c.is_ascii_whitespace() || b";|&()<>".contains(&c) => break,
                c => {
                    word.push(c);
                    j += 1;
                }
            }
        }
        let not_plain = word.iter().any(|c| !plain(*c));
        if odd || not_plain || (quoted && word.is_empty()) {
            return Some(at);
        }
        i = at + 2;
    }
    None
}

/// The `$(`, `${` and `$[` in a text, quoted or not.
fn count_expansions(text: &str) -> usize {
    text.as_bytes()
        .windows(2)
        .filter(|w| w[0] == b'$' && matches!(w[1], b'(' | b'{' | b'['))
        .count()
}

/// What [`measure_tokens`] found.
#[derive(Debug, Default, PartialEq, Eq)]
struct Shape {
    /// Upper bound of the nesting the parser and the walker recurse through.
    nesting: usize,
    /// Estimated work of the word parser, in bytes of plain text.
    word_work: u64,
}

/// A construct the grammar is inside of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// `(`: subshell, function parentheses, `((`, array, `<(`, test group.
    Paren,
    /// `{ ...; }`
    Brace,
    /// `if ... fi`
    If,
    /// `case ... esac`
    Case,
    /// `for`, `while`, `until`, `select` ... `done`
    Loop,
    /// `[[ ... ]]`
    Test,
}

/// Measures a tokenized script: see the notes above [`Limits`].
fn measure_tokens(tokens: &[brush_parser::Token]) -> Shape {
    use brush_parser::Token;
    let mut stack: Vec<Frame> = Vec::new();
    let mut shape = Shape::default();
    let mut prev: Option<&Token> = None;
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        i += 1;
        // Reserved words close only where a command would start; the grammar
        // refuses them as command names, so there they close or fail.
        let at_command_start =
            matches!(prev, Some(Token::Operator(op, _)) if matches!(op.as_str(), ";" | "&" | "\n"));
        let after_case_item = matches!(prev, Some(Token::Operator(op, _)) if matches!(op.as_str(), ";;" | ";&" | ";;&"));
        match token {
            Token::Operator(op, _) => match op.as_str() {
                "(" => stack.push(Frame::Paren),
                ")" => close(&mut stack, Frame::Paren),
                "<<" | "<<-" => {
                    // brush puts the tag, the body and the end tag right after
                    // the operator. A quoted tag makes the body literal.
                    if let (Some(Token::Word(tag, _)), Some(Token::Word(body, _))) =
                        (tokens.get(i), tokens.get(i + 1))
                    {
                        if !tag.contains(['\'', '"', '\\']) {
                            let w = measure_word(body, WordKind::HereDocument);
                            shape.nesting = shape.nesting.max(stack.len() + w.nesting);
                            shape.word_work = shape.word_work.saturating_add(w.word_work);
                        }
                        i += 2;
                    }
                }
                _ => {}
            },
            Token::Word(word, _) => {
                match word.as_str() {
                    "{" => stack.push(Frame::Brace),
                    "if" => stack.push(Frame::If),
                    "case" => stack.push(Frame::Case),
                    "for" | "while" | "until" | "select" => stack.push(Frame::Loop),
                    "[[" => stack.push(Frame::Test),
                    "]]" => close(&mut stack, Frame::Test),
                    "}" if at_command_start => close(&mut stack, Frame::Brace),
                    "fi" if at_command_start => close(&mut stack, Frame::If),
                    "done" if at_command_start => close(&mut stack, Frame::Loop),
                    "esac" if at_command_start || after_case_item => close(&mut stack, Frame::Case),
                    _ => {}
                }
                let w = measure_word(word, WordKind::Word);
                shape.nesting = shape.nesting.max(stack.len() + w.nesting);
                shape.word_work = shape.word_work.saturating_add(w.word_work);
            }
        }
        shape.nesting = shape.nesting.max(stack.len());
        prev = Some(token);
    }
    shape
}

/// Closes the innermost construct if it is of this kind; anything else is
/// left open, which can only overestimate.
fn close(stack: &mut Vec<Frame>, frame: Frame) {
    if stack.last() == Some(&frame) {
        stack.pop();
    }
}

/// How the word parser reads a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordKind {
    /// An ordinary word: quotes are special.
    Word,
    /// The body of a here-document with an unquoted tag: only `$`, backquote
    /// and backslash are.
    HereDocument,
}

/// Measures one word: how deep the word parser may recurse into it, and how
/// much work it may do.
///
/// Nesting: plain text, single-quoted and ANSI-C strings and double-quoted
/// text without substitutions are read exactly; from the first substitution,
/// backquote or bracket on, every bracket counts as a level and every two
/// quotes as one (brush's tokenizer only returns words whose quotes pair up).
fn measure_word(word: &str, kind: WordKind) -> Shape {
    let b = word.as_bytes();
    let mut i = 0;
    let mut in_double = kind == WordKind::HereDocument;
    let mut counted_from = None;
    while i < b.len() {
        let next = b.get(i + 1).copied();
        match b[i] {
            b'\\' => i += 1,
            b'$' if matches!(next, Some(b'(' | b'{' | b'[')) => {
                counted_from = Some(i);
                break;
            }
            b'`' => {
                counted_from = Some(i);
                break;
            }
            b'"' if kind == WordKind::Word => in_double = !in_double,
            b'\'' if kind == WordKind::Word && !in_double => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
            }
            b'$' if next == Some(b'\'') && kind == WordKind::Word && !in_double => {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'(' | b'{' | b'[' if !in_double && kind == WordKind::Word => {
                counted_from = Some(i);
                break;
            }
            _ => {}
        }
        i += 1;
    }
    let mut nesting = usize::from(in_double && kind == WordKind::Word);
    if let Some(from) = counted_from {
        let rest = &b[from..];
        let brackets = rest
            .iter()
            .filter(|c| matches!(c, b'(' | b'{' | b'['))
            .count();
        let quotes = rest.iter().filter(|&&c| c == b'"').count();
        let backquotes = rest.iter().filter(|&&c| c == b'`').count();
        nesting += brackets + quotes.div_ceil(2) + backquotes.div_ceil(2);
    }
    Shape {
        nesting,
        word_work: word_work(b),
    }
}

/// Each `${name[index]}` (or `${!name[`, `${#name[`) whose index is not plain
/// is read about twenty times per enclosing one; each `$((` or `$[` may be
/// read twice. A plain index (letters, digits, operators, `$name`) holds no
/// expansion, so its re-reads add up instead of multiplying. Brace expansion
/// hands the parser one copy of the word per alternative.
fn word_work(b: &[u8]) -> u64 {
    /// log2 of the re-reads of a subscript that is not plain (about twenty).
    const SUBSCRIPT_SHIFT: u32 = 5;
    /// Re-reads of a plain subscript.
    const PLAIN_SUBSCRIPT_READS: u64 = 32;
    /// Copies brace expansion may make of one word (`MAX_BRACE_WORDS`).
    const MAX_BRACE_COPIES: u64 = 256;

    let mut shift: u32 = 0;
    let mut plain_subscripts: u64 = 0;
    let mut commas: u32 = 0;
    let mut sequence = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'$' => match b.get(i + 1) {
                Some(b'(') if b.get(i + 2) == Some(&b'(') => shift += 1,
                Some(b'[') => shift += 1,
                Some(b'{') => {
                    // `${`, an optional `!` or `#`, a name (brace expansion
                    // may still splice it together), then `[`.
                    let mut j = i + 2;
                    if matches!(b.get(j), Some(b'!' | b'#')) {
                        j += 1;
                    }
                    while j < b.len()
                        && (b[j].is_ascii_alphanumeric()
                            || matches!(b[j], b'_' | b'{' | b'}' | b',' | b'.'))
                    {
                        j += 1;
                    }
                    if b.get(j) == Some(&b'[') {
                        let index = &b[j + 1..];
                        let end = index.iter().position(|&c| c == b']').unwrap_or(index.len());
                        let index = &index[..end];
                        if index == b"@" || index == b"*" {
                            // `${name[@]}` is matched before any subscript is read.
                        } else if is_plain_subscript(index) {
                            plain_subscripts += index.len() as u64;
                        } else {
                            shift += SUBSCRIPT_SHIFT;
                        }
                    }
                }
                // Brace expansion could splice `$` to what follows.
                Some(b',' | b'}') => shift += SUBSCRIPT_SHIFT,
                _ => {}
            },
            b',' => commas = commas.saturating_add(1),
            b'.' if b.get(i + 1) == Some(&b'.') => sequence = true,
            _ => {}
        }
        i += 1;
    }
    let copies = if b.contains(&b'{') && (commas > 0 || sequence) {
        let by_commas = 1u64 << commas.min(8);
        if sequence {
            MAX_BRACE_COPIES
        } else {
            by_commas.min(MAX_BRACE_COPIES)
        }
    } else {
        1
    };
    let once = (b.len() as u64)
        .saturating_add(plain_subscripts.saturating_mul(PLAIN_SUBSCRIPT_READS))
        .saturating_mul(copies);
    if once.leading_zeros() < shift {
        u64::MAX
    } else {
        once << shift
    }
}

/// An array index with no expansion in it: letters, digits, blanks,
/// arithmetic operators and `$name`.
fn is_plain_subscript(index: &[u8]) -> bool {
    index.iter().enumerate().all(|(k, &c)| {
        c.is_ascii_alphanumeric()
            || b" \t_+-*/%<>=!&|^~?:,.#".contains(&c)
            || (c == b'$'
                && index
                    .get(k + 1)
                    .is_some_and(|n| n.is_ascii_alphanumeric() || *n == b'_'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measure(text: &str) -> Shape {
        let options = brush_parser::ParserOptions::default();
        let tokens = brush_parser::uncached_tokenize_str(text, &options.tokenizer_options())
            .expect("tokenizes");
        measure_tokens(&tokens)
    }

    #[test]
    fn an_empty_or_expanding_here_document_delimiter_is_refused_before_the_parser_loops() {
        for line in [
            "cat <<'' ",
            "cat <<''",
            "cat <<-\"\"\nx\n",
            "cat << ''\"\";ls",
            "x <<$'' |y",
            "a <<'' <<EOF\n",
            "<<$(  ",
            "cat <<$X\nbody\n",
            "cat <<`x`\n",
            "<<F\"$(  ",
        ] {
            assert!(odd_here_delimiter(line).is_some(), "{line:?}");
            let a = analyze(line);
            assert!(
                a.problems.iter().any(|p| p.kind == ProblemKind::Unparsable),
                "{line:?}: {:?}",
                a.problems
            );
        }
        for line in [
            "cat <<EOF\nx\nEOF\n",
            "cat <<'EOF'\nx\nEOF\n",
            "cat <<< ''",
            "cat <<\"a\"\"\"\nx\na\n",
            "echo '<<'",
        ] {
            assert_eq!(odd_here_delimiter(line), None, "{line:?}");
        }
    }

    #[test]
    fn a_parser_panic_is_an_unparsable_line() {
        let a = analyze(") <<EOF$(( )<(\n");
        assert!(
            a.problems.iter().any(|p| p.kind == ProblemKind::Unparsable),
            "{:?}",
            a.problems
        );
    }

    #[test]
    fn ordinary_lines_nest_little() {
        for (line, most) in [
            ("git status", 0),
            ("cd src && (make || true)", 1),
            (
                "for f in *.rs; do if [ -f \"$f\" ]; then wc -l \"$f\"; fi; done",
                3,
            ),
            ("echo \"$(git rev-parse HEAD)\"", 3),
            ("python3 -c 'print((1, [2], {3: 4}))'", 0),
            ("cat <<'EOF' > a.py\nprint(f(g(h([{}]))))\nEOF", 0),
        ] {
            let got = measure(line).nesting;
            assert!(
                got <= most,
                "{line:?} measured {got}, expected at most {most}"
            );
        }
    }

    #[test]
    fn closers_that_close_nothing_do_not_lower_nesting() {
        for filler in [
            "echo ')' \")\" \\) ; ",
            "#)\n",
            "cat <<E\n)\nE\n",
            "case x in a) ;; esac; ",
            "echo } fi done esac ; ",
            "case x in a) echo in esac ;; esac; ",
        ] {
            for (open, close) in [("( ", ")"), ("{ ", "}; "), ("if true; then ", "fi; ")] {
                let line = format!(
                    "{}true; {}",
                    format!("{open}{filler}").repeat(10),
                    close.repeat(10)
                );
                let got = measure(&line).nesting;
                assert!(got >= 10, "{line:?} measured {got}");
            }
        }
    }

    #[test]
    fn nested_subscripts_multiply_the_word_work() {
        let one = measure("echo ${a[$i]}").word_work;
        let two = measure("echo ${a[${b[0]}]}").word_work;
        let four = measure("echo ${a[${a[${a[${a[0]}]}]}]}").word_work;
        assert!(one < 1000, "{one}");
        assert!(two > 10 * one, "{two} vs {one}");
        assert!(four > MAX_LINE_BYTES as u64, "{four}");
        let arithmetic = format!("echo {}x{}", "$((".repeat(20), ") )".repeat(20));
        assert!(measure(&arithmetic).word_work > MAX_LINE_BYTES as u64);
    }

    /// `sudo VAR=x cmd` and `env VAR=x cmd` run `cmd` with `VAR` set: the
    /// inner command is `cmd`, with the assignment, not a program `VAR=x`.
    #[test]
    fn wrappers_hand_their_assignments_to_the_command() {
        for line in [
            "sudo LD_PRELOAD=/tmp/x.so find /etc",
            "env -i LD_PRELOAD=/tmp/x.so find /etc",
            "doas LD_PRELOAD=/tmp/x.so find /etc",
        ] {
            let a = analyze(line);
            let inner = &a.commands[1];
            assert_eq!(inner.program(), Some("find"), "{line}");
            assert_eq!(inner.assignments.len(), 1, "{line}");
            assert_eq!(inner.assignments[0].name, "LD_PRELOAD");
            assert_eq!(inner.assignments[0].value.text, "/tmp/x.so");
        }
        // After the program, `NAME=value` is an argument.
        let a = analyze("sudo printf A=b");
        assert!(a.commands[1].assignments.is_empty());
        assert_eq!(a.commands[1].argv.len(), 2);
    }

    /// `$(which nc)` and `command -v curl` name the program they look up.
    #[test]
    fn a_program_looked_up_by_which_is_that_program() {
        for line in [
            "$(which nc) -l",
            "`command -v nc` -l",
            "\"$(type -P nc)\" -l",
        ] {
            let a = analyze(line);
            let run = a.commands.iter().find(|c| c.via.is_empty()).unwrap();
            assert_eq!(run.program(), Some("nc"), "{line}");
            assert!(!run.argv[0].dynamic, "{line}");
        }
        // Anything else it prints stays unknown.
        let a = analyze("$(which $X) -l");
        assert!(
            a.commands
                .iter()
                .any(|c| c.argv.first().is_some_and(|w| w.dynamic))
        );
    }

    #[test]
    fn variables_fed_by_commands_keep_their_sources() {
        let a = analyze("for p in $(pgrep x); do kill $p; done");
        let pgrep = a
            .commands
            .iter()
            .position(|c| c.program() == Some("pgrep"))
            .expect("pgrep");
        let (name, sources) = a.var_sources.iter().find(|(n, _)| n == "p").expect("p");
        assert_eq!(name, "p");
        assert!(sources.contains(&pgrep), "{:?}", a.var_sources);
        // A known value has no sources to keep.
        assert!(analyze("p=1; kill $p").var_sources.is_empty());
    }
}
