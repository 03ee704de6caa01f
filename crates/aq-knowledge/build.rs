//! Compiles `programs.toml` into static tables, checking every field, so a
//! mistake in the data is a build error and a lookup never parses anything.

use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    program: Vec<Program>,
    /// Words of subcommands by what they do, for subcommands no entry lists.
    verbs: BTreeMap<String, Vec<String>>,
}

/// `names.toml`: programs the rules know that need no capability entry.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NamesFile {
    /// Name prefixes of whole families (`python3.12`, `gcc-13`), by class.
    prefixes: BTreeMap<String, String>,
    /// Plain names, by class.
    names: BTreeMap<String, Vec<String>>,
}

/// What a subcommand does: a bare effect, or one with options that change it.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum SubValue {
    Effect(String),
    Full(SubFull),
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SubFull {
    does: String,
    #[serde(default)]
    opts: BTreeMap<String, String>,
}

/// Classes a known program can have.
const CLASSES: &[&str] = &[
    "builtin",
    "shell",
    "inspect",
    "text",
    "files",
    "archive",
    "editor",
    "build",
    "compiler",
    "runtime",
    "test",
    "lint",
    "doc",
    "vcs",
    "package",
    "framework",
    "network",
    "system",
    "container",
    "cloud",
    "infra",
    "ci",
    "database",
    "secrets",
    "saas",
    "agent",
    "aq",
];

/// What a subcommand of a platform CLI does.
const EFFECTS: &[&str] = &[
    "read",
    "local",
    "install",
    "network",
    "serve",
    "change",
    "delete",
    "destroy",
    "publish",
    "exec",
    "secret-list",
    "secret-fetch",
    "redacted",
    "secret-read",
    "value-read",
    "credential",
    "sql",
    "dump",
    "force-push",
    "target",
    "bind",
];

fn effect(value: &str, who: &str) -> String {
    if !EFFECTS.contains(&value) {
        panic!("programs.toml: {who}: effect {value:?} is not one of {EFFECTS:?}");
    }
    value
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

fn opts_table(t: &mut Tables, opts: &BTreeMap<String, String>, who: &str) -> String {
    let mut rows = Vec::new();
    for (flag, e) in opts {
        assert!(
            flag.starts_with('-') || flag.contains('='),
            "programs.toml: {who}: option {flag:?} must start with `-`"
        );
        rows.push(format!("({}, Effect::{})", t.text(flag), effect(e, who)));
    }
    let (at, len) = t.list(ListKind::Opts, rows);
    format!("Opts({at}, {len})")
}

/// Which generated array a list's rows go into.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum ListKind {
    Words,
    Opts,
    Subs,
    Caps,
}

/// The generated tables' storage: every string once in one text, and every
/// list as a run of rows in one array per kind. The tables then hold
/// offsets, not pointers: the dynamic loader has nothing to relocate in
/// them when aq starts (as pointers they were about 12,000 relocations
/// and 380 KB of pages copied at every start).
#[derive(Default)]
struct Tables {
    text: String,
    strings: std::collections::HashMap<String, String>,
    rows: std::collections::HashMap<ListKind, Vec<String>>,
    lists: std::collections::HashMap<(ListKind, Vec<String>), (usize, usize)>,
}

impl Tables {
    /// `Text(at, len)` for `s`, stored once.
    fn text(&mut self, s: &str) -> String {
        if let Some(t) = self.strings.get(s) {
            return t.clone();
        }
        let at = self.text.len();
        self.text.push_str(s);
        let t = format!("Text({at}, {})", s.len());
        self.strings.insert(s.to_string(), t.clone());
        t
    }

    /// `Words(at, len)` for a list of strings.
    fn words(&mut self, words: &[String]) -> String {
        let rows = words.iter().map(|w| self.text(w)).collect();
        let (at, len) = self.list(ListKind::Words, rows);
        format!("Words({at}, {len})")
    }

    /// Where a list of rendered rows starts in its kind's array, and its
    /// length; the same list is stored once.
    fn list(&mut self, kind: ListKind, rows: Vec<String>) -> (usize, usize) {
        if rows.is_empty() {
            return (0, 0);
        }
        if let Some(&found) = self.lists.get(&(kind, rows.clone())) {
            return found;
        }
        let all = self.rows.entry(kind).or_default();
        let at = all.len();
        let len = rows.len();
        all.extend(rows.iter().cloned());
        self.lists.insert((kind, rows), (at, len));
        (at, len)
    }

    /// The arrays, as Rust source.
    fn render(&self, out: &mut String) {
        for (kind, name, ty) in [
            (ListKind::Words, "WORDS", "Text"),
            (ListKind::Opts, "OPTS", "(Text, Effect)"),
            (ListKind::Subs, "SUBS", "Sub"),
            (ListKind::Caps, "CAPS", "Cap"),
        ] {
            let rows = self.rows.get(&kind).map(Vec::as_slice).unwrap_or(&[]);
            let _ = writeln!(out, "\nstatic {name}: [{ty}; {}] = [", rows.len());
            for r in rows {
                let _ = writeln!(out, "  {r},");
            }
            out.push_str("];\n");
        }
        assert!(
            self.text.len() < u32::MAX as usize,
            "the tables' text is too long"
        );
        let _ = writeln!(out, "\nconst TEXT: &str = {:?};", self.text);
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Program {
    name: String,
    #[serde(default)]
    also: Vec<String>,
    what: String,
    #[serde(default)]
    caps: Vec<Cap>,
    /// What kind of program it is; a program with a class is known to the
    /// rules (ordinary development work unless a rule says otherwise).
    #[serde(default)]
    class: Option<String>,
    /// Subcommands (`"repo delete"`) and what each does.
    #[serde(default)]
    subs: BTreeMap<String, SubValue>,
    /// Options that change what any subcommand does (`--dry-run`).
    #[serde(default)]
    opts: BTreeMap<String, String>,
    /// What it does when no listed subcommand or verb is recognised.
    #[serde(default)]
    default: Option<String>,
    /// What it does with no subcommand at all (default: read, its help).
    #[serde(default)]
    bare: Option<String>,
    /// Whether unlisted subcommands are judged by the verb classes.
    #[serde(default = "yes")]
    verbs: bool,
    /// Words that name a part of the service for this program, never a
    /// verb, though the verb classes list them (`aws logs`, `aws events`).
    #[serde(default)]
    nouns: Vec<String>,
}

fn yes() -> bool {
    true
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Cap {
    does: String,
    via: String,
    #[serde(default)]
    takes: Option<String>,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: Option<String>,
    #[serde(default)]
    config: Option<String>,
    #[serde(default)]
    usual: Vec<String>,
    #[serde(default)]
    operands: Option<String>,
    note: String,
}

fn variant(field: &str, value: &str, allowed: &[&str], who: &str) -> String {
    if !allowed.contains(&value) {
        panic!("programs.toml: {who}: {field} = {value:?} is not one of {allowed:?}");
    }
    let mut s = String::new();
    let mut up = true;
    for c in value.chars() {
        if up {
            s.extend(c.to_uppercase());
            up = false;
        } else {
            s.push(c);
        }
    }
    s
}

fn main() {
    secret_names();
    println!("cargo:rerun-if-changed=programs.toml");
    println!("cargo:rerun-if-changed=names.toml");
    let text = std::fs::read_to_string("programs.toml").expect("read programs.toml");
    let file: File = toml::from_str(&text).unwrap_or_else(|e| panic!("programs.toml: {e}"));
    let mut programs = file.program;
    programs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    let mut t = Tables::default();
    let mut out = format!("static PROGRAMS: [Program; {}] = [\n", programs.len());
    for (i, p) in programs.iter().enumerate() {
        let who = &p.name;
        assert!(
            !p.caps.is_empty() || !p.subs.is_empty() || p.class.is_some(),
            "programs.toml: {who}: no caps, subs or class"
        );
        let class = match &p.class {
            None => "None".to_string(),
            Some(c) => format!("Some(Class::{})", variant("class", c, CLASSES, who)),
        };
        let platform = !p.subs.is_empty() || p.default.is_some();
        if platform {
            assert!(
                p.class.is_some(),
                "programs.toml: {who}: a program with subs or default needs a class"
            );
        } else {
            assert!(
                p.opts.is_empty() && p.bare.is_none() && p.nouns.is_empty(),
                "programs.toml: {who}: opts, bare and nouns need subs or default"
            );
        }
        let mut subs = Vec::new();
        for (path, v) in &p.subs {
            let words: Vec<&str> = path.split(' ').collect();
            assert!(
                words.iter().all(|w| !w.is_empty() && !w.starts_with('-')),
                "programs.toml: {who}: subcommand {path:?} must be words separated by one space"
            );
            let (does, opts) = match v {
                SubValue::Effect(e) => (e.clone(), BTreeMap::new()),
                SubValue::Full(f) => (f.does.clone(), f.opts.clone()),
            };
            let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            subs.push(format!(
                "Sub {{ path: {}, effect: Effect::{}, opts: {} }}",
                t.words(&words),
                effect(&does, who),
                opts_table(&mut t, &opts, who)
            ));
        }
        let (at, len) = t.list(ListKind::Subs, subs);
        let subs = format!("Subs({at}, {len})");
        let default = match &p.default {
            None => "None".to_string(),
            Some(e) => format!("Some(Effect::{})", effect(e, who)),
        };
        let bare = effect(p.bare.as_deref().unwrap_or("read"), who);
        assert!(
            !p.what.trim().is_empty(),
            "programs.toml: {who}: empty `what`"
        );
        for n in std::iter::once(&p.name).chain(&p.also) {
            if names.insert(n.clone(), i).is_some() {
                panic!("programs.toml: {n} appears twice");
            }
        }
        let head = format!(
            "  Program {{ name: {}, also: {}, what: {}, class: {class}, subs: {subs}, opts: {}, default: {default}, bare: Effect::{bare}, verbs: {}, nouns: {}, caps: ",
            t.text(&p.name),
            t.words(&p.also),
            t.text(&p.what),
            opts_table(&mut t, &p.opts, who),
            p.verbs && platform,
            t.words(&p.nouns)
        );
        let mut caps = Vec::new();
        for c in &p.caps {
            let does = variant(
                "does",
                &c.does,
                &[
                    "exec", "read", "write", "upload", "download", "serve", "connect", "load",
                ],
                who,
            );
            let via = variant(
                "via",
                &c.via,
                &[
                    "option",
                    "operands",
                    "args",
                    "env",
                    "stdin",
                    "interactive",
                    "config",
                ],
                who,
            );
            let takes = match &c.takes {
                None => "None".to_string(),
                Some(t) => variant(
                    "takes",
                    t,
                    &[
                        "command", "argv", "program", "file", "escape", "host", "code",
                    ],
                    who,
                ),
            };
            match c.via.as_str() {
                "option" => assert!(
                    !c.flags.is_empty() && c.takes.is_some(),
                    "programs.toml: {who}: via = \"option\" needs flags and takes"
                ),
                "args" => assert!(
                    !c.args.is_empty(),
                    "programs.toml: {who}: via = \"args\" needs args"
                ),
                "env" => assert!(
                    c.env.is_some(),
                    "programs.toml: {who}: via = \"env\" needs env"
                ),
                "config" => assert!(
                    c.config.is_some(),
                    "programs.toml: {who}: via = \"config\" needs config"
                ),
                _ => {}
            }
            if !c.usual.is_empty() {
                assert!(
                    c.does == "exec" && c.via == "option",
                    "programs.toml: {who}: usual only goes with does = \"exec\", via = \"option\""
                );
            }
            let all_operands = match c.operands.as_deref() {
                None => false,
                Some("all") => {
                    assert!(
                        c.via == "operands",
                        "programs.toml: {who}: operands only goes with via = \"operands\""
                    );
                    true
                }
                Some(other) => {
                    panic!("programs.toml: {who}: operands = {other:?} is not one of [\"all\"]")
                }
            };
            // A wrapper described as data: `via = "operands"` with `takes =
            // "argv"` (the operands after its options are a command and its
            // arguments: `cross-env A=1 CMD`) or `takes = "command"` (each
            // operand is a shell command line: `concurrently "A" "B"`);
            // `via = "args"` with `takes = "argv"` (the command follows the
            // mode's words and their options: `dotenvx run -- CMD`). Their
            // `flags` are the options that take a value, so the command's
            // first word is found where the wrapper finds it.
            match (c.via.as_str(), c.takes.as_deref()) {
                ("option", _) | (_, None) => {}
                ("operands", Some("argv" | "command")) | ("args", Some("argv")) => assert!(
                    c.does == "exec",
                    "programs.toml: {who}: a wrapper's takes goes with does = \"exec\""
                ),
                (via, Some(t)) => panic!(
                    "programs.toml: {who}: takes = {t:?} does not go with via = {via:?} (only option; operands with argv or command; args with argv)"
                ),
            }
            if !c.flags.is_empty() && c.via != "option" {
                assert!(
                    c.takes.is_some(),
                    "programs.toml: {who}: flags outside via = \"option\" are a wrapper's options that take a value, and need takes"
                );
            }
            assert!(
                !c.note.trim().is_empty(),
                "programs.toml: {who}: empty note"
            );
            caps.push(format!(
                "Cap {{ does: Does::{does}, via: Via::{via}, takes: Takes::{takes}, flags: {}, args: {}, env: {}, config: {}, usual: {}, all_operands: {all_operands}, note: {} }}",
                t.words(&c.flags),
                t.words(&c.args),
                t.text(c.env.as_deref().unwrap_or_default()),
                t.text(c.config.as_deref().unwrap_or_default()),
                t.words(&c.usual),
                t.text(&c.note)
            ));
        }
        let (at, len) = t.list(ListKind::Caps, caps);
        let _ = writeln!(out, "{head}Caps({at}, {len}) }},");
    }
    out.push_str("];\n");
    assert!(
        programs.len() < u16::MAX as usize,
        "programs.toml: too many programs"
    );
    let _ = writeln!(out, "\nstatic NAMES: [(Text, u16); {}] = [", names.len());
    for (n, i) in &names {
        let _ = writeln!(out, "  ({}, {i}),", t.text(n));
    }
    out.push_str("];\n");

    // The verb classes.
    let mut verbs: BTreeMap<String, String> = BTreeMap::new();
    for (e, words) in &file.verbs {
        let v = effect(e, "[verbs]");
        for w in words {
            if verbs.insert(w.clone(), v.clone()).is_some() {
                panic!("programs.toml: [verbs]: {w:?} appears twice");
            }
        }
    }
    let _ = writeln!(out, "\nstatic VERBS: [(Text, Effect); {}] = [", verbs.len());
    for (w, v) in &verbs {
        let _ = writeln!(out, "  ({}, Effect::{v}),", t.text(w));
    }
    out.push_str("];\n");

    // Known programs: those of programs.toml with a class, and names.toml.
    let text = std::fs::read_to_string("names.toml").expect("read names.toml");
    let nf: NamesFile = toml::from_str(&text).unwrap_or_else(|e| panic!("names.toml: {e}"));
    let mut known: BTreeMap<String, String> = BTreeMap::new();
    for p in &programs {
        if let Some(c) = &p.class {
            let v = variant("class", c, CLASSES, &p.name);
            // Every alias has its program's class: the class is the entry's.
            for n in std::iter::once(&p.name).chain(&p.also) {
                known.insert(n.clone(), v.clone());
            }
        }
    }
    for (class, list) in &nf.names {
        let v = variant("class", class, CLASSES, "names.toml");
        for n in list {
            if names.contains_key(n) {
                panic!(
                    "names.toml: {n} is in programs.toml too: give that entry `class = {class:?}` instead"
                );
            }
            if known.insert(n.clone(), v.clone()).is_some() {
                panic!("names.toml: {n} appears twice");
            }
        }
    }
    let _ = writeln!(out, "\nstatic KNOWN: [(Text, Class); {}] = [", known.len());
    for (n, c) in &known {
        let _ = writeln!(out, "  ({}, Class::{c}),", t.text(n));
    }
    out.push_str("];\n");
    let _ = writeln!(
        out,
        "\nstatic PREFIXES: [(Text, Class); {}] = [",
        nf.prefixes.len()
    );
    for (prefix, class) in &nf.prefixes {
        let v = variant("class", class, CLASSES, "names.toml [prefixes]");
        let _ = writeln!(out, "  ({}, Class::{v}),", t.text(prefix));
    }
    out.push_str("];\n");
    t.render(&mut out);
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("programs.rs");
    std::fs::write(dest, out).expect("write programs.rs");
}

/// `secret_names.toml`: the word lists and variable names, checked and
/// written out as sorted constants.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretNames {
    words: SecretWords,
    environment: SecretEnvironment,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretWords {
    secret: Vec<String>,
    substrings: Vec<String>,
    last: Vec<String>,
    alone: Vec<String>,
    first_not: Vec<String>,
    last_not: Vec<String>,
    connection: Vec<String>,
    stores: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretEnvironment {
    families: Vec<String>,
    secret: Vec<String>,
    not_secret: Vec<String>,
}

fn secret_names() {
    println!("cargo:rerun-if-changed=secret_names.toml");
    let text = std::fs::read_to_string("secret_names.toml").expect("read secret_names.toml");
    let file: SecretNames =
        toml::from_str(&text).unwrap_or_else(|e| panic!("secret_names.toml: {e}"));
    let w = &file.words;
    let e = &file.environment;
    let lists: [(&str, &Vec<String>, bool); 11] = [
        ("words.secret", &w.secret, false),
        ("words.substrings", &w.substrings, false),
        ("words.last", &w.last, false),
        ("words.alone", &w.alone, false),
        ("words.first_not", &w.first_not, false),
        ("words.last_not", &w.last_not, false),
        ("words.connection", &w.connection, false),
        ("words.stores", &w.stores, false),
        ("environment.families", &e.families, true),
        ("environment.secret", &e.secret, true),
        ("environment.not_secret", &e.not_secret, true),
    ];
    let mut out = String::new();
    for (key, list, upper) in lists {
        assert!(!list.is_empty(), "secret_names.toml: {key} is empty");
        for pair in list.windows(2) {
            assert!(
                pair[0] < pair[1],
                "secret_names.toml: {key}: {:?} must come after {:?} (sorted, once)",
                pair[0],
                pair[1]
            );
        }
        for item in list.iter() {
            let ok = if upper {
                item.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            } else {
                item.bytes().all(|b| b.is_ascii_lowercase())
            };
            assert!(
                ok,
                "secret_names.toml: {key}: {item:?} is not spelled as the list needs"
            );
        }
        let name = key.replace('.', "_").to_uppercase();
        let _ = writeln!(out, "pub(crate) const {name}: &[&str] = &{list:?};");
    }
    for word in &w.last {
        assert!(
            !w.last_not.contains(word),
            "secret_names.toml: {word:?} is in words.last and words.last_not"
        );
    }
    for name in &e.secret {
        assert!(
            !e.not_secret.contains(name),
            "secret_names.toml: {name:?} is secret and not secret"
        );
    }
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("secret_names.rs");
    std::fs::write(dest, out).expect("write secret_names.rs");
}
