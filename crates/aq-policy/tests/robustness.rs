//! Robustness of the engine on hostile input: whatever the text, `evaluate`
//! returns a decision, does not panic, does not overflow the stack of a test
//! thread (2 MiB, less than a main thread gets) and finishes quickly. A line
//! that cannot be read is never allowed.
//!
//! The time budgets hold in release mode (`cargo test --release`); a debug
//! build only has to finish.

use std::time::{Duration, Instant};

use aq_policy::{Decision, Verdict, evaluate};
use aq_shell::{MAX_DEPTH, MAX_LINE_BYTES, MAX_SYNTAX_NESTING};
use proptest::prelude::*;

/// The most one line may take, in release mode. The slowest lines here (a
/// quarter MiB of `echo a;`) take about 0.3 s alone; the margin is for test
/// threads sharing the machine.
const RELEASE_BUDGET: Duration = Duration::from_secs(1);

/// The most one line may take in a debug build (only catches hangs).
const DEBUG_BUDGET: Duration = Duration::from_secs(60);

const MIB: usize = 1024 * 1024;

fn budget() -> Duration {
    if cfg!(debug_assertions) {
        DEBUG_BUDGET
    } else {
        RELEASE_BUDGET
    }
}

/// Evaluates a line and checks what must hold for every line: a line with
/// problems (unparsable, too long, too deep, too large) is not allowed.
fn decide(line: &str) -> (Verdict, Duration) {
    let start = Instant::now();
    let v = evaluate(line);
    let took = start.elapsed();
    if !v.problems.is_empty() {
        assert_ne!(
            v.decision,
            Decision::Allow,
            "a line with problems {:?} was allowed: {}",
            v.problems,
            preview(line)
        );
    }
    (v, took)
}

/// Evaluates a generated line that must be refused for its size or shape:
/// `ask`, with a reason, within the budget.
fn assert_asks_in_time(name: &str, line: &str) {
    let (v, took) = decide(line);
    println!(
        "{name:<34} {:>8} bytes {:>10.3?} {} {:?}",
        line.len(),
        took,
        v.decision,
        v.problems.iter().map(|p| p.kind).collect::<Vec<_>>()
    );
    assert_eq!(
        v.decision,
        Decision::Ask,
        "{name}: {:?} {}",
        v.rules.iter().map(|r| &r.id).collect::<Vec<_>>(),
        preview(line)
    );
    assert!(
        !v.problems.is_empty(),
        "{name}: ask without a problem: {}",
        preview(line)
    );
    assert!(
        !v.rules.is_empty(),
        "{name}: ask without a rule: {}",
        preview(line)
    );
    assert!(took < budget(), "{name}: took {took:?}");
}

/// Evaluates a generated line that only has to be decided within the budget.
fn assert_decides_in_time(name: &str, line: &str) -> Verdict {
    let (v, took) = decide(line);
    println!(
        "{name:<34} {:>8} bytes {:>10.3?} {} {:?}",
        line.len(),
        took,
        v.decision,
        v.problems.iter().map(|p| p.kind).collect::<Vec<_>>()
    );
    assert!(took < budget(), "{name}: took {took:?}");
    v
}

fn preview(line: &str) -> String {
    let mut end = line.len().min(120);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}... ({} bytes)", &line[..end], line.len())
}

/// `open` n times, then `middle`, then `close` n times.
fn nest(open: &str, middle: &str, close: &str, n: usize) -> String {
    let mut s = String::with_capacity((open.len() + close.len()) * n + middle.len());
    for _ in 0..n {
        s.push_str(open);
    }
    s.push_str(middle);
    for _ in 0..n {
        s.push_str(close);
    }
    s
}

/// Repeats `unit` until the text is `len` bytes or just under.
fn fill(unit: &str, len: usize) -> String {
    unit.repeat(len / unit.len())
}

/// Quotes `s` as one double-quoted shell word.
fn double_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2 + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `bash -c "bash -c \"...\""` as deep as fits in `max` bytes: every level
/// doubles the backslashes, so the depth is logarithmic in the size.
fn nested_bash_c(inner: &str, max: usize) -> (String, usize) {
    let mut line = inner.to_string();
    let mut depth = 0;
    loop {
        let next = format!("bash -c {}", double_quote(&line));
        if next.len() > max {
            return (line, depth);
        }
        line = next;
        depth += 1;
    }
}

/// Backquotes nested as deep as fits in `max` bytes (each level escapes the
/// backslashes and backquotes of the one inside it).
fn nested_backquotes(max: usize) -> (String, usize) {
    let mut inner = "true".to_string();
    let mut depth = 0;
    loop {
        let escaped = inner.replace('\\', "\\\\").replace('`', "\\`");
        let next = format!("echo `{escaped}`");
        if next.len() > max {
            return (inner, depth);
        }
        inner = next;
        depth += 1;
    }
}

/// Shapes of 1 MiB lines: far over the length limit.
fn huge_lines(len: usize) -> Vec<(&'static str, String)> {
    let controls: String = (0u8..32).map(char::from).chain(['\u{7f}']).collect();
    vec![
        ("one huge word", "a".repeat(len)),
        ("many `echo a;` commands", fill("echo a;", len)),
        (
            "huge here-document",
            format!(
                "cat <<EOF\n{}EOF\n",
                fill("hello $HOME `x` $(y)\n", len - 20)
            ),
        ),
        (
            "huge quoted string",
            format!("echo '{}'", "x\"$`\\ ".repeat((len - 8) / 6)),
        ),
        (
            "huge double-quoted string",
            format!("echo \"{}\"", fill("x $HOME ", len - 8)),
        ),
        ("control characters", fill(&controls, len)),
        ("many pipes", fill("true | ", len)),
    ]
}

#[test]
fn lines_of_one_mib_ask_for_their_length() {
    for (name, line) in huge_lines(MIB) {
        assert!(line.len() > MAX_LINE_BYTES);
        assert_asks_in_time(name, &line);
    }
}

/// Just under the length limit every line is parsed: it must still be decided
/// in time.
#[test]
fn lines_just_under_the_length_limit_are_decided_in_time() {
    for (name, line) in huge_lines(MAX_LINE_BYTES - 64) {
        assert_decides_in_time(name, &line);
    }
    // 100k `echo a;` fits under the limit only in part; what fits is more
    // commands than the analyzer follows.
    let many = fill("echo a;", MAX_LINE_BYTES - 64);
    assert_asks_in_time("`echo a;` under the limit", &many);
}

/// Constructs that nest, each 1,000 deep: the analyzer refuses them as too
/// deep (or, where bash itself rejects the text, as unparsable) instead of
/// recursing until the stack runs out.
fn deep_lines(n: usize) -> Vec<(&'static str, String)> {
    vec![
        ("subshells `(`", nest("(", "true", ")", n)),
        (
            "command substitutions `$(`",
            nest("echo $(", "true", ")", n),
        ),
        (
            "quoted substitutions `\"$(`",
            nest("echo \"$(", "true", ")\"", n),
        ),
        ("brace groups `{ x; }`", nest("{ ", "true; ", "}; ", n)),
        ("backquotes unescaped", "`".repeat(n)),
        ("if", nest("if true; then ", "true; ", "fi; ", n)),
        ("for", nest("for i in 1; do ", "true; ", "done; ", n)),
        ("while", nest("while true; do ", "true; ", "done; ", n)),
        ("until", nest("until false; do ", "true; ", "done; ", n)),
        ("case", nest("case x in x) ", "true;; ", "esac;; ", n)),
        ("select", nest("select i in 1; do ", "true; ", "done; ", n)),
        ("functions", nest("f() { ", "true; ", "}; ", n)),
        ("eval chain", format!("{}true", "eval ".repeat(n))),
        ("sudo chain", format!("{}rm -rf /tmp/x", "sudo ".repeat(n))),
        ("env chain", format!("{}true", "env ".repeat(n))),
        ("xargs chain", format!("{}true", "xargs ".repeat(n))),
        ("array of substitutions", nest("a=($(", "true", "))", n)),
        ("array subscripts", nest("echo ${a[", "0", "]}", n)),
        ("parameter defaults", nest("echo ${x:-", "y", "}", n)),
        ("arithmetic", nest("echo $((", "1", "))", n)),
        (
            "arithmetic parentheses",
            format!("echo $(({}))", nest("(", "1", ")", n)),
        ),
        (
            "arithmetic command",
            format!("(({}))", nest("(", "1", ")", n)),
        ),
        ("process substitutions", nest("cat <(", "true", ")", n)),
        (
            "test groups",
            format!("[[ {} ]]", nest("( ", "-n x", " )", n)),
        ),
        (
            "brace expansion",
            format!("echo {}", nest("{a,", "b", "}", n)),
        ),
        ("here-documents fed to bash", {
            let mut s = String::new();
            for i in 0..n {
                s.push_str(&format!("bash <<E{i}\n"));
            }
            s.push_str("true\n");
            for i in (0..n).rev() {
                s.push_str(&format!("E{i}\n"));
            }
            s
        }),
    ]
}

#[test]
fn nesting_one_thousand_deep_asks() {
    for (name, line) in deep_lines(1000) {
        assert_asks_in_time(name, &line);
    }
}

/// Nesting constructs as (name, opener, innermost command, closer); a filler
/// can go right after each opener.
const CONSTRUCTS: &[(&str, &str, &str, &str)] = &[
    ("subshells", "( ", "true", " )"),
    ("brace groups", "{ ", "true; ", "}; "),
    ("if", "if true; then ", "true; ", "fi; "),
    ("for", "for i in 1; do ", "true; ", "done; "),
    ("while", "while true; do ", "true; ", "done; "),
    ("case", "case x in x) ", "true", " ;; esac"),
    ("functions", "f() { ", "true; ", "}; "),
    ("command substitutions", "echo $( ", "true", " )"),
    ("quoted substitutions", "echo \"$( ", "true", " )\""),
    ("process substitutions", "cat <( ", "true", " )"),
    ("arrays of substitutions", "a=( $( ", "true", " ) )"),
];

/// `nest` with `filler` after each opener.
fn nest_with(open: &str, filler: &str, middle: &str, close: &str, n: usize) -> String {
    nest(&format!("{open}{filler}"), middle, close, n)
}

/// Closers that close nothing (quoted, escaped, commented, in a
/// here-document, case patterns, closing words used as arguments) must not
/// hide how deep the real openers nest. Each of these crashed the analyzer
/// with a stack overflow when nesting was counted on the raw text.
#[test]
fn fake_closers_do_not_hide_nesting() {
    let n = 1000;
    let fillers = [
        ("no filler", ""),
        ("quoted closers", "echo ')}]' \")}]\" \\) \\} \\] ; "),
        ("a comment", "#)}] fi done esac }\n"),
        ("a here-document", "cat <<E\n)}]\nfi\ndone\nesac\n}\nE\n"),
        ("closing words as arguments", "echo fi done esac } ]] in ; "),
        ("case patterns", "case x in a) ;; b) ;; esac; "),
        ("`in esac` in a case", "case x in a) echo in esac ;; esac; "),
    ];
    let hide_before = format!(
        "echo '{0}' \"{0}\" {1}; case x in {2} esac; ",
        ")}]".repeat(n),
        "fi done esac } ]] ".repeat(n),
        "a) ;; ".repeat(n)
    );
    for (construct, open, middle, close) in CONSTRUCTS {
        for (filler_name, filler) in fillers {
            let line = nest_with(open, filler, middle, close, n);
            assert_asks_in_time(&format!("{construct}, {filler_name}"), &line);
        }
        let line = format!("{hide_before}{}", nest(open, middle, close, n));
        assert_asks_in_time(&format!("{construct} after closers"), &line);
    }
}

/// The deepest line of each construct that is still parsed is parsed in
/// this thread without exhausting its stack, and one level more is refused.
#[test]
fn deepest_accepted_nesting_fits_the_stack() {
    for (construct, open, middle, close) in CONSTRUCTS {
        let mut deepest = 0;
        for n in 1..=MAX_SYNTAX_NESTING + 1 {
            let (v, took) = decide(&nest(open, middle, close, n));
            assert!(took < budget(), "{construct} {n} deep took {took:?}");
            if !v.problems.is_empty() {
                break;
            }
            deepest = n;
        }
        println!("{construct:<28} parsed up to {deepest} deep");
        assert!(
            (1..=MAX_SYNTAX_NESTING).contains(&deepest),
            "{construct}: parsed up to {deepest} deep"
        );
    }
}

/// One level of a chain of scripts: its size and the script it runs.
type LevelBody = fn(usize, &str) -> String;

/// Scripts inside scripts (here through variables, so the line itself is
/// flat) are walked on top of their parents' stack: each level is limited so
/// that all of them together fit, the deepest one tokenized last.
#[test]
fn nested_scripts_do_not_add_up_to_a_stack_overflow() {
    // `$On` and `$Cn` hold n nested `${x:-` and their closers, built from
    // one of each so that the line itself has almost no expansion: the
    // deepest script is the one with the most.
    let sizes = [4, 11, 12, 13, 31, 32, 33, 60];
    let mut expansions = vec!["O1='${x:-'".to_string(), "C1='}'".to_string()];
    for n in sizes {
        expansions.push(format!("O{n}=\"{}\"", "$O1".repeat(n)));
        expansions.push(format!("C{n}=\"{}\"", "$C1".repeat(n)));
    }
    let bodies: [(&str, LevelBody); 3] = [
        ("braces", |n, inner| {
            nest("{ ", &format!("{inner}; "), "}; ", n)
        }),
        ("expansions", |n, inner| {
            format!("echo {}; {inner}", nest("${x:-", "y", "}", n))
        }),
        ("expansions from variables", |n, inner| {
            format!("bash -c \"echo $O{n} y $C{n}\"; {inner}")
        }),
    ];
    let max = MAX_DEPTH as usize;
    for (body_name, body) in bodies {
        for levels in [max - 1, max, max + 1] {
            for n in sizes {
                let mut defs = expansions.clone();
                let mut inner = "rm -rf ~".to_string();
                for level in 0..levels {
                    defs.push(format!("V{level}='{}'", body(n, &inner)));
                    inner = format!("bash -c \"$V{level}\"");
                }
                let line = format!("{}; {inner}", defs.join("; "));
                let name = format!("{levels} scripts of {n} {body_name}");
                let v = assert_decides_in_time(&name, &line);
                assert_ne!(v.decision, Decision::Allow, "{name}");
            }
        }
    }
    // The same through here-documents fed to shells.
    for levels in [max - 1, max, max + 1] {
        for n in [4, 12, 13, 60] {
            let mut line = String::new();
            for level in 0..levels {
                line.push_str(&format!("{}bash <<E{level}\n", "{ ".repeat(n)));
            }
            line.push_str("rm -rf ~\n");
            for level in (0..levels).rev() {
                line.push_str(&format!("E{level}\n{}\n", "}; ".repeat(n)));
            }
            let name = format!("{levels} here-documents of {n} braces");
            let v = assert_decides_in_time(&name, &line);
            assert_ne!(v.decision, Decision::Allow, "{name}");
        }
    }
}

/// brush-parser's word parser backtracks without memoizing: each
/// `${name[...]}` re-reads its subscript once per operator it tries, and a
/// `$((` that is not arithmetic is read again as `$( (`. Nested, a line of a
/// few dozen bytes took minutes; such words are refused before parsing.
#[test]
fn word_parser_blowups_are_refused_in_time() {
    let shapes = [
        ("subscripts", "${a[", "0", "]}"),
        ("indirect subscripts", "${!a[", "0", "]}"),
        ("subscripts with operators", "${a[", "0", "]/x/y}"),
        ("subscripted arithmetic", "${a[$((", "0", "))]}"),
        ("subscripted substitutions", "${a[$(echo ", "0", ")]}"),
        ("non-arithmetic `$((`", "$((", "x", ") )"),
        ("defaults around subscripts", "${x:-${a[", "0", "]}}"),
    ];
    let contexts = [
        "echo {}",
        "echo \"{}\"",
        "x={}",
        "cat <<E\n{}\nE",
        "[[ -n {} ]]",
        "bash -c 'echo {}'",
        "echo {a,b}{}",
    ];
    for (name, open, middle, close) in shapes {
        for context in contexts {
            for depth in [1, 2, 3, 4, 6, 12, 24] {
                let line = context.replace("{}", &nest(open, middle, close, depth));
                let (v, took) = decide(&line);
                assert!(
                    took < budget(),
                    "{name}, {depth} deep, in {context:?}: took {took:?} ({})",
                    v.decision
                );
            }
        }
    }
}

/// The walker unrolls a `for` loop over a short list of known words once per
/// word, so nested loops multiply: 8 levels of 8 words took 8 s.
#[test]
fn nested_short_for_loops_are_decided_in_time() {
    for depth in [4, 6, 8, 12] {
        let line = nest("for i in 1 2 3 4 5 6 7 8; do ", "((1)); ", "done; ", depth);
        assert_decides_in_time(&format!("{depth} nested loops of 8 words"), &line);
    }
}

/// Variables are kept with their full values, so a line that doubles one
/// builds a value of 2^n bytes: 26 doublings (220 bytes) took 1.5 s, 34 would
/// exhaust memory.
#[test]
fn doubling_variables_are_decided_in_time() {
    for n in [10, 20, 26, 40] {
        let line = format!("x=a; {}echo $x", "x=$x$x; ".repeat(n));
        assert_decides_in_time(&format!("{n} doublings"), &line);
    }
}

/// Nesting that can only be written with quoting that doubles at each level
/// (`bash -c "..."` inside `bash -c "..."`, backquotes inside backquotes):
/// followed as deep as the analyzer goes, refused beyond, and decided in time
/// as deep as 1 MiB allows.
#[test]
fn nested_quoting_is_followed_then_refused() {
    for depth in [1, 4, MAX_DEPTH as usize - 1] {
        let mut line = "rm -rf ~".to_string();
        for _ in 0..depth {
            line = format!("bash -c {}", double_quote(&line));
        }
        let v = assert_decides_in_time(&format!("bash -c quoting, {depth} deep"), &line);
        assert_eq!(
            v.decision,
            Decision::Block,
            "rm -rf ~ inside {depth} shells"
        );
    }
    for max in [MAX_LINE_BYTES, MIB] {
        let (line, depth) = nested_bash_c("rm -rf ~", max);
        assert_asks_in_time(&format!("bash -c quoting, {depth} deep"), &line);
        let (line, depth) = nested_backquotes(max);
        assert_asks_in_time(&format!("backquotes, {depth} deep"), &line);
    }
}

/// Long but flat shapes: parsed, and decided in time.
#[test]
fn long_flat_lines_are_decided_in_time() {
    let elifs = format!(
        "if false; then true; {}fi",
        "elif false; then true; ".repeat(1000)
    );
    let brace_words = format!("echo {}{};", "{a,b}".repeat(8), "x".repeat(2000)).repeat(100);
    let cases = [
        ("bash -c chain", format!("{}true", "bash -c ".repeat(1000))),
        ("100 words of 8 brace expansions", brace_words),
        ("1,000 elif", elifs),
        ("10,000 &&", format!("true{}", " && true".repeat(10_000))),
        ("10,000 ||", format!("false{}", " || false".repeat(10_000))),
        ("10,000 pipes", format!("true{}", " | true".repeat(10_000))),
        ("1,000 negations", format!("{}true", "! ".repeat(1000))),
        ("10,000 arguments", format!("echo{}", " a".repeat(10_000))),
        (
            "10,000 redirections",
            format!("echo{}", " >/dev/null".repeat(10_000)),
        ),
        (
            "10,000 assignments",
            format!("{}true", "A=1 ".repeat(10_000)),
        ),
        (
            "1,000 case items",
            format!("case x in {} esac", "a) true;; ".repeat(1000)),
        ),
        ("brace expansion product", "echo {a,b}".repeat(100)),
        ("brace sequence", "echo {1..100000000}".to_string()),
        (
            "1,000 here-documents",
            format!("{}true", "cat <<E\nx\nE\n".repeat(1000)),
        ),
        ("1,000 functions", "f() { true; }; ".repeat(1000)),
    ];
    for (name, line) in cases {
        assert_decides_in_time(name, &line);
    }
}

/// Pieces of shell syntax, wrappers and programs the rules know, for
/// generated lines.
const TOKENS: &[&str] = &[
    "'",
    "\"",
    "$(",
    ")",
    "`",
    "\\",
    "$'",
    "${",
    "}",
    "$((",
    "))",
    "<(",
    ">(",
    "<<EOF",
    "<<'EOF'",
    "<<-EOF",
    "EOF",
    "<<<",
    "\n",
    "|",
    "||",
    "&&",
    ";",
    ";;",
    "&",
    "!",
    "{",
    "}",
    "(",
    ")",
    "[[",
    "]]",
    "[",
    "]",
    "if",
    "then",
    "elif",
    "else",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "while",
    "until",
    "case",
    "esac",
    "select",
    "function",
    "f()",
    "bash -c",
    "sh -c",
    "eval",
    "env",
    "sudo",
    "xargs",
    "timeout 5",
    "nohup",
    "exec",
    "command",
    "find . -exec",
    "{}",
    "\\;",
    "X=",
    "$X",
    "A=1",
    "~",
    "*",
    "#",
    ">",
    ">>",
    "2>&1",
    "<",
    "-",
    "--",
    "-rf",
    "/",
    "~/.ssh/id_rsa",
    "/etc/passwd",
    ".env",
    "rm",
    "curl",
    "wget",
    "https://example.com/x.sh",
    "git",
    "push",
    "--force",
    "reset",
    "--hard",
    "npm",
    "install",
    "pip",
    "cargo",
    "python -c",
    "node -e",
    "perl -e",
    "awk",
    "dd",
    "mkfs",
    "chmod",
    "777",
    "ssh",
    "nc",
    "base64 -d",
    "cat",
    "echo",
    "ls",
    "true",
    "x",
    "a b",
    "\t",
    "=",
    "$",
    "@",
    "%",
    "\u{0}",
    "\u{7}",
    "é",
    "\u{202e}",
];

fn shellish_line() -> impl Strategy<Value = String> {
    let piece = (
        prop::sample::select(TOKENS),
        prop::sample::select(&["", " ", " ", " ", "\n", ";"][..]),
    );
    prop::collection::vec(piece, 0..80).prop_map(|pieces| {
        pieces
            .into_iter()
            .flat_map(|(t, sep)| [t, sep])
            .collect::<String>()
    })
}

/// brush-parser 0.4 loops without end (allocating gigabytes) on a
/// here-document whose delimiter is empty or holds `$`; found by `shellish_lines_are_decided`
/// with a random seed (the OOM killer ended the test binary). It asks now,
/// at once.
#[test]
fn an_empty_here_document_delimiter_asks_in_time() {
    for line in [
        "cat <<'' ",
        "cat <<''\nrm -rf ~\n\n",
        "<<\"\" x",
        "f <<-'' ;ls",
    ] {
        let (v, took) = decide(line);
        assert_eq!(v.decision, Decision::Ask, "{line:?}");
        assert!(took < budget(), "{line:?} took {took:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Arbitrary bytes, read as UTF-8 with replacement characters.
    #[test]
    fn arbitrary_bytes_are_decided(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let line = String::from_utf8_lossy(&bytes);
        let (_, took) = decide(&line);
        prop_assert!(took < budget(), "took {took:?}");
    }

    /// Lines made of shell syntax, wrappers and programs.
    #[test]
    fn shellish_lines_are_decided(line in shellish_line()) {
        let (_, took) = decide(&line);
        prop_assert!(took < budget(), "took {took:?}");
    }

    /// A line that starts with a token bash rejects there does not parse,
    /// whatever follows, and asks.
    #[test]
    fn unparsable_lines_ask(
        bad in prop::sample::select(&[")", "fi", "done", "then", "esac", ";;", "|", "&&", ";"][..]),
        line in shellish_line(),
    ) {
        let text = format!("{bad} {line}");
        let (v, _) = decide(&text);
        prop_assert!(!v.problems.is_empty(), "parsed: {:?}", text);
        prop_assert_eq!(v.decision, Decision::Ask, "{:?}", text);
    }
}
