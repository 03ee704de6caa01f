//! Differential test of word expansion against real bash.
//!
//! Every line is run by `/bin/bash` with an empty `PATH`, in an empty
//! directory, with a `command_not_found_handle` that prints the argument
//! vector of every command bash could not find. Programs in the lines are
//! never builtins, so bash prints the argv of each simple command exactly as
//! it would `exec` it, and runs nothing. Before every statement the line gets
//! a marker command (`aqmark_ N`), so each statement's commands can be lined
//! up with the ones `aq_shell::analyze` lists for it.
//!
//! A statement whose words aq-shell all knows must give the very same argv.
//! A statement with a word aq-shell marks dynamic is not compared; for the
//! generated lines (which only use what bash can expand without running
//! anything), that is a failure too, and for the hand-picked lines it is
//! allowed only for those listed in `UNKNOWN_OK`.
//!
//! The bash child gets `HOME='~'`: aq-shell reads `~` and `$HOME` as `~`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use proptest::prelude::*;

const MARK: &str = "aqmark_";

/// An argv as printed by bash, or as listed by aq-shell.
type Argv = Vec<String>;

struct Empty(PathBuf);

impl Empty {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "aq-shell-expansion-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Empty(dir)
    }
}

impl Drop for Empty {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const PRELUDE: &str = "command_not_found_handle() { printf '%s\\0' \"$#\" \"$@\"; return 127; }\n";

/// Runs `line` in bash; returns every argv it tried to run.
fn bash_argvs(dir: &Path, line: &str) -> Result<Vec<Argv>, String> {
    let out = Process::new("/bin/bash")
        .arg("--norc")
        .arg("--noprofile")
        .arg("-c")
        .arg(format!("{PRELUDE}{line}"))
        .env_clear()
        .env("HOME", "~")
        .env("PATH", "/nonexistent-aq-test")
        .env("LC_ALL", "C.UTF-8")
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run bash: {e}"))?;
    if !out.stderr.is_empty() {
        return Err(format!(
            "bash wrote to stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8(out.stdout).map_err(|e| format!("bash output: {e}"))?;
    let mut fields = text.split('\0');
    let mut argvs = Vec::new();
    while let Some(count) = fields.next() {
        if count.is_empty() {
            break;
        }
        let n: usize = count.parse().map_err(|_| format!("bad count {count:?}"))?;
        let argv: Argv = (0..n)
            .map(|_| fields.next().unwrap_or_default().to_string())
            .collect();
        argvs.push(argv);
    }
    Ok(argvs)
}

/// Builtins the lines use.
const BUILTINS: &[&str] = &[
    "true", "false", ":", "unset", "export", "declare", "local", "readonly", "echo", "printf",
];

/// What happened to one statement.
#[derive(Debug)]
enum Outcome {
    Same,
    /// aq-shell marks a word of it dynamic.
    Unknown {
        aq: Vec<Argv>,
    },
    Differs {
        bash: Vec<Argv>,
        aq: Vec<Argv>,
    },
}

/// Groups argvs by the marker that precedes them.
fn group(argvs: Vec<(Argv, bool)>, n: usize) -> Vec<Vec<(Argv, bool)>> {
    let mut groups: Vec<Vec<(Argv, bool)>> = vec![Vec::new(); n];
    let mut current: Option<usize> = None;
    for (argv, dynamic) in argvs {
        if argv.len() == 2 && argv[0] == MARK {
            current = argv[1].parse().ok();
            continue;
        }
        if let Some(g) = current.and_then(|c| groups.get_mut(c)) {
            g.push((argv, dynamic));
        }
    }
    groups
}

/// Joins statements with markers.
fn marked(statements: &[String]) -> String {
    statements
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{MARK} {i}; {s}\n"))
        .collect()
}

/// Compares every statement of a line. `None` when aq-shell refuses the
/// line (a caller then asks a person): for its size limits (its estimate
/// of the parser's work counts escaped `\$[` and `\${` as if they were
/// expansions), or because brush cannot read it (`\$'\'`: brush's
/// tokenizer starts an ANSI-C string at an escaped `$`).
fn compare(dir: &Path, statements: &[String]) -> Result<Option<Vec<Outcome>>, String> {
    let line = marked(statements);
    let bash = bash_argvs(dir, &line).map_err(|e| format!("{e}\nline:\n{line}"))?;
    let analysis = aq_shell::analyze(&line);
    if !analysis.problems.is_empty() {
        return Ok(None);
    }
    let aq: Vec<(Argv, bool)> = analysis
        .commands
        .iter()
        .filter(|c| c.via.is_empty() && c.depth == 0 && !c.argv.is_empty())
        // Builtins run inside bash: the handler never sees them.
        .filter(|c| c.argv[0].dynamic || !BUILTINS.contains(&c.argv[0].text.as_str()))
        .map(|c| {
            (
                c.argv.iter().map(|w| w.text.clone()).collect(),
                c.argv.iter().any(|w| w.dynamic),
            )
        })
        .collect();
    let bash = group(
        bash.into_iter().map(|a| (a, false)).collect(),
        statements.len(),
    );
    let aq = group(aq, statements.len());
    Ok(Some(
        bash.into_iter()
            .zip(aq)
            .map(|(b, a)| {
                let b: Vec<Argv> = b.into_iter().map(|(x, _)| x).collect();
                let dynamic = a.iter().any(|(_, d)| *d);
                let a: Vec<Argv> = a.into_iter().map(|(x, _)| x).collect();
                if dynamic {
                    Outcome::Unknown { aq: a }
                } else if a == b {
                    Outcome::Same
                } else {
                    Outcome::Differs { bash: b, aq: a }
                }
            })
            .collect(),
    ))
}

fn report(statements: &[String], outcomes: &[Outcome], unknown_ok: bool) -> Vec<String> {
    let mut errors = Vec::new();
    for (i, o) in outcomes.iter().enumerate() {
        match o {
            Outcome::Same => {}
            Outcome::Unknown { aq } if !unknown_ok => errors.push(format!(
                "statement {i} `{}` is known to bash but dynamic to aq-shell: {aq:?}\nline:\n{}",
                statements[i],
                marked(statements)
            )),
            Outcome::Unknown { .. } => {}
            Outcome::Differs { bash, aq } => errors.push(format!(
                "statement {i} `{}`:\n  bash:     {bash:?}\n  aq-shell: {aq:?}\nline:\n{}",
                statements[i],
                marked(statements)
            )),
        }
    }
    errors
}

/// Hand-picked lines, one statement per element.
const CASES: &[&[&str]] = &[
    // Program names spelled with quotes and escapes.
    &["w'g'et http://x"],
    &["\\w\\g\\e\\t x"],
    &["\"c\"at /etc/passwd"],
    &["c''at /etc/shadow"],
    &["$'\\x77\\x67\\x65\\x74' x"],
    &["$'\\167\\147et' x"],
    &["$'\\u0077get' $'\\U00000077'"],
    &["p $'\\cA' $'\\c?' $'\\ca' $'a\\tb' $'\\e[0m' $'\\E' $'\\''"],
    &["p $'a\\nb' $'\\x4' $'\\x4g' $'\\xg' $'\\u00e9' $'\\q' $'\\\"'"],
    &["p $'\\101\\60' $'\\7' $'\\18'"],
    &["p $\"x y\""],
    &["p a\\ b \\\" \\' \\\\ \"\\a\\$\\\\\\\"\" '\\n'"],
    // Braces.
    &["{wget,-q,x}"],
    &["p {1..3} {a..c} x{a,b}y {3..1} {1..10..3} {c..a}"],
    &["p {01..03} {a,b}{1,2} {a,{b,c}} {a} {} {,x} a{,}b"],
    &["p '{a,b}' \"{a,b}\" \\{a,b} {'a b',c} {\"$HOME\",y}"],
    &["p {-1..2} {a..e..2} {1..3}{a,b}"],
    // Variables.
    &["a=wg; b=et", "$a$b x", "\"$a\"$b", "${a}${b}"],
    &["a=x y=$a", "p $y $a"],
    &[
        "a=wget",
        "p ${a:-def} ${a-def} ${a:+alt} ${a+alt} ${#a} ${a:=z}",
    ],
    &["e=", "p ${e:-def} ${e-def} ${e:+alt} ${e+alt} ${#e} x${e}y"],
    &[
        "a=hello",
        "p ${a/l/L} ${a//l/L} ${a/#h/H} ${a/%o/O} ${a/l} ${a//l}",
    ],
    &[
        "a=hello",
        "p ${a:1:2} ${a:1} ${a: -2} ${a:0:0} ${a:(-3):2} ${a:10}",
    ],
    &["a=hello", "p ${a^^} ${a^} ${a,,} ${a~~} ${a^^[lo]}"],
    &["a=HeLLo", "p ${a,} ${a,,} ${a@U} ${a@L} ${a@u}"],
    &[
        "a=path/to/file.tar.gz",
        "p ${a#*/} ${a##*/} ${a%.*} ${a%%.*} ${a#p} ${a%z}",
    ],
    &["a=wget b=a", "p ${!b}"],
    &["a=x", "a+=y", "p $a"],
    &["a='x  y'", "p $a \"$a\" '$a' x$a \"x$a\""],
    &["a=' lead trail '", "p $a \"$a\" [$a]"],
    &["e=", "p $e \"\" '' \"$e\" x$e $e$e ''$e"],
    &["p ~ ~/x $HOME ${HOME}/x \"~\" \\~ x~ ~+"],
    &["a=~/x", "p $a"],
    &["p k=$HOME", "a='1 2'", "p k=$a --o=$a"],
    // Arrays.
    &[
        "arr=(w get 'a b')",
        "p ${arr[1]} ${arr[@]} \"${arr[@]}\" ${#arr[@]} ${arr} ${arr[0]}",
    ],
    &[
        "arr=(w get 'a b')",
        "p \"${arr[*]}\" ${arr[*]} x${arr[@]}y \"x${arr[@]}y\" ${arr[-1]}",
    ],
    &[
        "arr=(a b c)",
        "p ${!arr[@]} ${arr[@]:1} ${arr[@]/a/z} ${#arr[1]}",
    ],
    &["arr=()", "p \"${arr[@]}\" x", "p ${arr[@]} y"],
    // IFS.
    &["cat${IFS}/etc/passwd"],
    &["cat$IFS/etc/passwd"],
    &["p \"a${IFS}b\" a${IFS}b"],
    &["IFS=,", "v=cat,/etc/passwd", "$v"],
    &["IFS=,", "v=a,b,,c,", "p $v \"$v\" x$v"],
    &["IFS=,", "v=',a'", "p $v"],
    &["IFS=' ,'", "v=' a , b ,c, '", "p $v"],
    &["IFS=", "v='a b'", "p $v"],
    &["IFS=:", "v='a b:c'", "p $v a:b"],
    &["v='a b'", "IFS=x p $v"],
    &["IFS=, p a,b"],
    &["v=$'a\\tb\\nc'", "p $v"],
    // Globs that match nothing stay as they are.
    &["p zz* 'zz*' zz\\* zz? [zz]q zz[ \"zz*\""],
    &["a='zz*'", "p $a \"$a\""],
    // Command substitution of constant text.
    &["p $(echo wget) $(echo a b) \"$(echo a b)\""],
    &["$(echo -e '\\x77get') x"],
    &["$(printf %s w g e t) x"],
    &["$(printf 'wg%s' et) x"],
    &["p `echo a b` \"`echo c`\""],
    &["$(echo cat /etc/passwd)"],
    // Flow: assignments that may not happen.
    &["a=wget", "false && a=ls", "$a x"],
    &["a=wget", "true || a=ls", "$a x"],
    &["a=wget", "if false; then a=ls; fi", "$a x"],
    &["a=wget", "f() { a=ls; }", "$a x"],
    &["a=wget", "(a=ls)", "$a x"],
    &["a=wget", "{ a=curl; }", "$a x"],
    &["a=wget", "a=ls | :", "$a x"],
    &["a=wget", "unset a", "p $a x"],
    &["for x in w get; do p $x; done"],
    &["a=wget; p $a"],
];

/// Hand-picked statements aq-shell may call dynamic (bash still runs them,
/// but their words depend on something aq-shell does not follow).
const UNKNOWN_OK: &[&str] = &[
    // A function may or may not have run: its assignments are unknown.
    "a=wget|f() { a=ls; }|$a x",
    // So are assignments of a conditional branch.
    "a=wget|false && a=ls|$a x",
    "a=wget|true || a=ls|$a x",
    "a=wget|if false; then a=ls; fi|$a x",
    // `~+` is the working directory.
    "p ~ ~/x $HOME ${HOME}/x \"~\" \\~ x~ ~+",
];

#[test]
fn hand_picked_lines_expand_like_bash() {
    let dir = Empty::new();
    let unknown_ok: HashSet<&str> = UNKNOWN_OK.iter().copied().collect();
    let mut errors = Vec::new();
    for case in CASES {
        let statements: Vec<String> = case.iter().map(|s| s.to_string()).collect();
        match compare(&dir.0, &statements) {
            Ok(None) => errors.push(format!("aq-shell refuses {case:?}")),
            Ok(Some(outcomes)) => {
                let ok = unknown_ok.contains(case.join("|").as_str());
                errors.extend(report(&statements, &outcomes, ok));
            }
            Err(e) => errors.push(e),
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
}

// # Generated lines

/// A program name from an obfuscated spelling of one of these.
const NAMES: &[&str] = &["wget", "curl", "cat", "nc", "probe", "rmx"];

fn quote_piece(piece: &str, style: u8) -> String {
    match style % 7 {
        0 => piece.to_string(),
        1 => format!("'{piece}'"),
        2 => format!("\"{piece}\""),
        3 => piece.chars().map(|c| format!("\\{c}")).collect(),
        4 => format!(
            "$'{}'",
            piece
                .chars()
                .map(|c| format!("\\x{:02x}", c as u32))
                .collect::<String>()
        ),
        5 => format!(
            "$'{}'",
            piece
                .chars()
                .map(|c| format!("\\{:o}", c as u32))
                .collect::<String>()
        ),
        _ => format!(
            "$'{}'",
            piece
                .chars()
                .map(|c| format!("\\u{:04x}", c as u32))
                .collect::<String>()
        ),
    }
}

/// A program name: a name cut in pieces, each quoted its own way.
fn program_name() -> impl Strategy<Value = String> {
    (
        prop::sample::select(NAMES),
        prop::collection::vec((any::<u8>(), any::<u8>()), 1..4),
    )
        .prop_map(|(name, cuts)| {
            let chars: Vec<char> = name.chars().collect();
            let mut points: Vec<usize> = cuts
                .iter()
                .map(|(p, _)| *p as usize % chars.len())
                .collect();
            points.push(0);
            points.push(chars.len());
            points.sort();
            points.dedup();
            points
                .windows(2)
                .zip(cuts.iter().map(|(_, s)| *s).chain(std::iter::repeat(0)))
                .map(|(w, style)| {
                    let piece: String = chars[w[0]..w[1]].iter().collect();
                    quote_piece(&piece, style)
                })
                .collect()
        })
}

/// Plain text that is no glob and no expansion.
fn plain() -> impl Strategy<Value = String> {
    "[a-z0-9/._-]{1,5}"
}

/// Text for inside quotes: spaces, commas and shell characters.
fn quoted_text() -> impl Strategy<Value = String> {
    "[a-z ,:*?\\[{}$\\\\\"`-]{0,5}"
}

/// The variables every generated line assigns first.
const VARS: &[&str] = &["a", "b", "c", "IFS"];

fn var_ref() -> impl Strategy<Value = String> {
    let name = prop::sample::select(VARS);
    prop_oneof![
        name.clone().prop_map(|v| format!("${v}")),
        name.clone().prop_map(|v| format!("${{{v}}}")),
        (name.clone(), plain()).prop_map(|(v, d)| format!("${{{v}:-{d}}}")),
        (name.clone(), plain()).prop_map(|(v, d)| format!("${{{v}:+{d}}}")),
        name.clone().prop_map(|v| format!("${{#{v}}}")),
        // No two blanks in a row: brush's tokenizer squeezes them inside
        // `${...}`.
        (name.clone(), "[a-z ,]", "[a-z,]? ?[a-z,]?")
            .prop_map(|(v, x, y)| format!("${{{v}/{x}/{y}}}")),
        (name.clone(), "[a-z ,]", "[a-z,]? ?[a-z,]?")
            .prop_map(|(v, x, y)| format!("${{{v}//{x}/{y}}}")),
        (name.clone(), 0..4u8, 0..4u8).prop_map(|(v, o, l)| format!("${{{v}:{o}:{l}}}")),
        (name.clone(), 0..4u8).prop_map(|(v, o)| format!("${{{v}:{o}}}")),
        name.clone().prop_map(|v| format!("${{{v}^^}}")),
        name.clone().prop_map(|v| format!("${{{v}^}}")),
        name.clone().prop_map(|v| format!("${{{v}#?}}")),
        name.clone().prop_map(|v| format!("${{{v}%?}}")),
        name.clone().prop_map(|v| format!("${{{v}##* }}")),
        (0..3u8).prop_map(|i| format!("${{arr[{i}]}}")),
        Just("${arr[@]}".to_string()),
        Just("${#arr[@]}".to_string()),
        Just("$HOME".to_string()),
    ]
}

fn ansi_c() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z ,]".prop_map(String::from),
        (0x20u32..0x7f).prop_map(|c| format!("\\x{c:02x}")),
        (0x20u32..0x7f).prop_map(|c| format!("\\{c:o}")),
        (0x20u32..0x180).prop_map(|c| format!("\\u{c:04x}")),
        prop::sample::select(&["\\n", "\\t", "\\'", "\\\\", "\\\"", "\\cA", "\\c?", "\\a"][..])
            .prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..4).prop_map(|p| format!("$'{}'", p.concat()))
}

/// One part of a word.
fn part() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => plain(),
        2 => quoted_text().prop_map(|t| format!("'{}'", t.replace('\'', ""))),
        2 => (quoted_text(), prop::option::of(var_ref())).prop_map(|(t, v)| {
            let t = t
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('$', "\\$")
                .replace('`', "\\`");
            format!("\"{t}{}\"", v.unwrap_or_default())
        }),
        1 => ansi_c(),
        1 => "\\\\[a-z ,*'\"$]".prop_map(String::from),
        1 => Just("''".to_string()),
        1 => Just("\"\"".to_string()),
        1 => "zz[*?]".prop_map(String::from),
        4 => var_ref(),
        1 => (plain(), plain()).prop_map(|(a, b)| format!("{{{a},{b}}}")),
        1 => (0..3u8, 0..3u8).prop_map(|(a, b)| format!("{{{a}..{b}}}")),
        1 => plain().prop_map(|t| format!("$(echo {t})")),
    ]
}

fn word() -> impl Strategy<Value = String> {
    prop::collection::vec(part(), 1..4).prop_map(|parts| {
        let mut out = String::new();
        for p in parts {
            // `$a` then `b` would read `$ab`.
            let bare = out.rfind('$').is_some_and(|i| {
                out[i + 1..]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && i + 1 < out.len()
            });
            if bare && p.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '{') {
                out.push_str("''");
            }
            out.push_str(&p);
        }
        out
    })
}

/// A value for the variables assigned first: no variables in it.
fn value() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            plain(),
            quoted_text().prop_map(|t| format!("'{}'", t.replace('\'', ""))),
            ansi_c(),
            Just("' '".to_string()),
            Just("','".to_string()),
        ],
        0..4,
    )
    .prop_map(|p| {
        if p.is_empty() {
            "''".into()
        } else {
            p.concat()
        }
    })
}

fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (program_name(), prop::collection::vec(word(), 0..4))
            .prop_map(|(p, args)| std::iter::once(p).chain(args).collect::<Vec<_>>().join(" ")),
        1 => (prop::sample::select(&["a", "b", "c"][..]), word())
            .prop_map(|(v, w)| format!("{v}={w}")),
        1 => prop::sample::select(&["IFS=,", "IFS=' ,'", "IFS=", "IFS=:a", "unset IFS"][..])
            .prop_map(String::from),
    ]
}

fn line() -> impl Strategy<Value = Vec<String>> {
    (
        value(),
        value(),
        value(),
        prop::collection::vec(value(), 0..4),
        prop::collection::vec(statement(), 1..6),
    )
        .prop_map(|(a, b, c, arr, rest)| {
            let mut s = vec![
                format!("a={a} b={b}"),
                format!("c={c}"),
                format!("arr=({})", arr.join(" ")),
            ];
            s.extend(rest);
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    #[test]
    fn generated_lines_expand_like_bash(statements in line()) {
        let dir = Empty::new();
        let outcomes = compare(&dir.0, &statements).map_err(TestCaseError::fail)?;
        prop_assume!(outcomes.is_some(), "refused by aq-shell");
        let outcomes = outcomes.unwrap_or_default();
        // Documented unknowns: an unquoted `${arr[@]}` of an empty array
        // next to a split that leaves an empty word (bash drops it or not
        // by rules aq-shell does not follow).
        let empty_array = statements.iter().any(|s| s == "arr=()");
        let outcomes: Vec<Outcome> = outcomes
            .into_iter()
            .zip(&statements)
            .map(|(o, s)| match o {
                Outcome::Unknown { .. } if empty_array && s.contains("[@]") => Outcome::Same,
                o => o,
            })
            .collect();
        let errors = report(&statements, &outcomes, false);
        prop_assert!(errors.is_empty(), "{}", errors.join("\n\n"));
    }
}
