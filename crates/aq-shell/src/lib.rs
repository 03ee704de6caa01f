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

mod embedded;
mod model;
mod walk;
mod words;
mod wrappers;

pub use embedded::interpreter_lang;
pub use model::{
    Analysis, Assignment, Code, Command, Input, Problem, ProblemKind, Redirect, RedirectKind, Word,
};
pub use wrappers::{SHELLS, is_runner_label, is_shell};

/// Longest line the analyzer parses. Longer lines are reported as
/// [`ProblemKind::TooLong`] (a caller should ask, not allow).
pub const MAX_LINE_BYTES: usize = 256 * 1024;

/// Deepest nesting of nested shells, substitutions and wrappers followed.
pub const MAX_DEPTH: u32 = 24;

/// Deepest bracket or keyword nesting handed to the parser, whose recursion
/// would otherwise exhaust the stack on hostile input.
pub const MAX_SYNTAX_NESTING: usize = 96;

/// Most commands collected from one line.
pub const MAX_COMMANDS: usize = 4096;

/// Analyzes one command line, as passed to `bash -c`.
pub fn analyze(line: &str) -> Analysis {
    let mut walker = walk::Walker::new();
    match parse_program(line) {
        Ok(program) => walker.walk_program(&program),
        Err(problem) => walker.problem(problem.kind, problem.detail),
    }
    walker.out
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
    walker.out
}

/// Parses with the limits applied.
pub(crate) fn parse_program(text: &str) -> Result<brush_parser::ast::Program, Problem> {
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
    let nesting = syntax_nesting(text);
    if nesting > MAX_SYNTAX_NESTING {
        return Err(Problem {
            kind: ProblemKind::TooDeep,
            detail: format!(
                "brackets or keywords nest {nesting} deep; more than {MAX_SYNTAX_NESTING} is not analyzed"
            ),
        });
    }
    let options = brush_parser::ParserOptions::default();
    let mut parser = brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), &options);
    parser.parse_program().map_err(|e| Problem {
        kind: ProblemKind::Unparsable,
        detail: format!("not valid shell syntax: {e}"),
    })
}

/// A cheap upper bound of how deep the grammar nests: brackets, quotes that
/// open substitutions, and compound-command keywords.
fn syntax_nesting(text: &str) -> usize {
    let mut depth: isize = 0;
    let mut max: isize = 0;
    for c in text.bytes() {
        match c {
            b'(' | b'{' | b'[' | b'`' => depth += 1,
            b')' | b'}' | b']' => depth -= 1,
            _ => {}
        }
        max = max.max(depth);
    }
    let mut kw: isize = 0;
    let mut kw_max: isize = 0;
    for word in text.split(|c: char| c.is_whitespace() || c == ';' || c == '&' || c == '|') {
        match word {
            "if" | "while" | "until" | "for" | "case" | "select" => kw += 1,
            "fi" | "done" | "esac" => kw -= 1,
            _ => {}
        }
        kw_max = kw_max.max(kw);
    }
    (max.max(0) + kw_max.max(0)) as usize
}
