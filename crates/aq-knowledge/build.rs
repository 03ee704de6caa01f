//! Compiles `programs.toml` into static tables, checking every field, so a
//! mistake in the data is a build error and a lookup never parses anything.

use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    program: Vec<Program>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Program {
    name: String,
    #[serde(default)]
    also: Vec<String>,
    what: String,
    caps: Vec<Cap>,
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
    let text = std::fs::read_to_string("programs.toml").expect("read programs.toml");
    let file: File = toml::from_str(&text).unwrap_or_else(|e| panic!("programs.toml: {e}"));
    let mut programs = file.program;
    programs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = String::from("static PROGRAMS: &[Program] = &[\n");
    for (i, p) in programs.iter().enumerate() {
        let who = &p.name;
        assert!(!p.caps.is_empty(), "programs.toml: {who}: no caps");
        assert!(
            !p.what.trim().is_empty(),
            "programs.toml: {who}: empty `what`"
        );
        for n in std::iter::once(&p.name).chain(&p.also) {
            if names.insert(n.clone(), i).is_some() {
                panic!("programs.toml: {n} appears twice");
            }
        }
        let _ = writeln!(
            out,
            "  Program {{ name: {:?}, also: &{:?}, what: {:?}, caps: &[",
            p.name, p.also, p.what
        );
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
            if c.via != "option" {
                assert!(
                    c.takes.is_none(),
                    "programs.toml: {who}: takes only goes with via = \"option\""
                );
            }
            assert!(
                !c.note.trim().is_empty(),
                "programs.toml: {who}: empty note"
            );
            let _ = writeln!(
                out,
                "    Cap {{ does: Does::{does}, via: Via::{via}, takes: Takes::{takes}, flags: &{:?}, args: &{:?}, env: {:?}, config: {:?}, usual: &{:?}, all_operands: {all_operands}, note: {:?} }},",
                c.flags,
                c.args,
                c.env.clone().unwrap_or_default(),
                c.config.clone().unwrap_or_default(),
                c.usual,
                c.note
            );
        }
        out.push_str("  ] },\n");
    }
    out.push_str("];\n\nstatic NAMES: &[(&str, usize)] = &[\n");
    for (n, i) in &names {
        let _ = writeln!(out, "  ({n:?}, {i}),");
    }
    out.push_str("];\n");
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
    let lists: [(&str, &Vec<String>, bool); 9] = [
        ("words.secret", &w.secret, false),
        ("words.substrings", &w.substrings, false),
        ("words.last", &w.last, false),
        ("words.alone", &w.alone, false),
        ("words.first_not", &w.first_not, false),
        ("words.last_not", &w.last_not, false),
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
