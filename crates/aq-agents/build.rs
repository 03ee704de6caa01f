//! Turns `src/presets.toml` into Rust code that builds the built-in
//! presets: every `aq` process that decides anything (each hook answer,
//! each session start) reads them, and parsing 31 KB of data at each start
//! cost about 0.17 ms. The code holds no table of pointers (each string is
//! a literal where it is used), so it adds nothing for the dynamic loader
//! to relocate either.
//!
//! The file stays the one source: `preset.rs` still parses and checks it
//! in its tests, and a test holds what this code builds equal to that.
//! Fields are named as the file names them; a key the `Preset` type lacks
//! is a compile error in the generated code, and a value of the wrong
//! kind a build error here.

use std::fmt::Write as _;
use std::path::PathBuf;

use toml::Value;

fn main() {
    println!("cargo:rerun-if-changed=src/presets.toml");
    let text = std::fs::read_to_string("src/presets.toml").expect("read src/presets.toml");
    let value: Value = toml::from_str(&text).expect("src/presets.toml is TOML");
    let agents = value
        .get("agent")
        .and_then(Value::as_table)
        .expect("src/presets.toml: [agent.NAME] tables");
    // The file's order, which `aq policy show --agents` keeps.
    let order: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("[agent.")?.strip_suffix(']'))
        .filter(|n| !n.contains('.'))
        .collect();
    assert_eq!(order.len(), agents.len(), "src/presets.toml: agent order");
    let mut out = String::from(
        "/// The built-in presets, as `presets.toml` has them (made by `build.rs`).\n\
         pub(crate) fn builtin_presets() -> Vec<Preset> {\n    vec![\n",
    );
    for name in order {
        let table = agents[name]
            .as_table()
            .unwrap_or_else(|| panic!("src/presets.toml: agent.{name} is not a table"));
        let _ = writeln!(out, "        Preset {{\n            name: s({name:?}),");
        for (key, v) in table {
            let who = format!("agent.{name}.{key}");
            let code = match key.as_str() {
                "title" => text_of(v, &who),
                "xdg" => bool_of(v, &who),
                "shadow" => map_of(v, &who, list_of_text),
                "seed" | "set_env" => map_of(v, &who, text_of),
                "api" => format!("Some({})", api(v, &who)),
                "endpoints" => list_of_tables(v, &who, endpoint),
                _ => list_of_text(v, &who),
            };
            let _ = writeln!(out, "            {key}: {code},");
        }
        out.push_str("            ..Preset::default()\n        },\n");
    }
    out.push_str("    ]\n}\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("presets.rs");
    std::fs::write(dest, out).expect("write presets.rs");
}

fn text_of(v: &Value, who: &str) -> String {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("src/presets.toml: {who} is not a string"));
    format!("s({s:?})")
}

fn bool_of(v: &Value, who: &str) -> String {
    v.as_bool()
        .unwrap_or_else(|| panic!("src/presets.toml: {who} is not true or false"))
        .to_string()
}

fn list_of_text(v: &Value, who: &str) -> String {
    let items = v
        .as_array()
        .unwrap_or_else(|| panic!("src/presets.toml: {who} is not a list"));
    let parts: Vec<String> = items.iter().map(|i| text_of(i, who)).collect();
    format!("vec![{}]", parts.join(", "))
}

/// A table of the file as `BTreeMap::from([...])`, each value made by `each`.
fn map_of(v: &Value, who: &str, each: fn(&Value, &str) -> String) -> String {
    let table = v
        .as_table()
        .unwrap_or_else(|| panic!("src/presets.toml: {who} is not a table"));
    let parts: Vec<String> = table
        .iter()
        .map(|(k, v)| format!("(s({k:?}), {})", each(v, who)))
        .collect();
    format!("BTreeMap::from([{}])", parts.join(", "))
}

fn list_of_tables(v: &Value, who: &str, each: fn(&Value, &str) -> String) -> String {
    let items = v
        .as_array()
        .unwrap_or_else(|| panic!("src/presets.toml: {who} is not a list"));
    let parts: Vec<String> = items.iter().map(|i| each(i, who)).collect();
    format!("vec![{}]", parts.join(", "))
}

fn optional_text(v: Option<&Value>, who: &str) -> String {
    v.map_or("None".to_string(), |v| format!("Some({})", text_of(v, who)))
}

/// `Api { ... }`, every field written out (it has no `Default`): those the
/// file leaves out get serde's defaults, as the parser gives them.
fn api(v: &Value, who: &str) -> String {
    let t = v
        .as_table()
        .unwrap_or_else(|| panic!("src/presets.toml: {who} is not a table"));
    let known = [
        "base_url_env",
        "base_url_args",
        "upstream",
        "auth",
        "query_key",
        "placeholder",
        "seed",
        "only_when_set",
    ];
    if let Some(k) = t.keys().find(|k| !known.contains(&k.as_str())) {
        panic!("src/presets.toml: {who}.{k} is not a field of an api table");
    }
    let required = |k: &str| {
        text_of(
            t.get(k)
                .unwrap_or_else(|| panic!("src/presets.toml: {who}.{k} is missing")),
            who,
        )
    };
    format!(
        "Api {{ base_url_env: {}, base_url_args: {}, upstream: {}, auth: {}, query_key: {}, placeholder: {}, seed: {}, only_when_set: {} }}",
        required("base_url_env"),
        t.get("base_url_args")
            .map_or("Vec::new()".to_string(), |v| list_of_text(v, who)),
        required("upstream"),
        t.get("auth")
            .map_or("Vec::new()".to_string(), |v| list_of_tables(
                v, who, key_header
            )),
        optional_text(t.get("query_key"), who),
        t.get("placeholder")
            .map_or("default_placeholder()".to_string(), |v| text_of(v, who)),
        t.get("seed")
            .map_or("BTreeMap::new()".to_string(), |v| map_of(v, who, text_of)),
        t.get("only_when_set")
            .map_or("false".to_string(), |v| bool_of(v, who)),
    )
}

fn key_header(v: &Value, who: &str) -> String {
    let t = v
        .as_table()
        .unwrap_or_else(|| panic!("src/presets.toml: {who}: an auth entry is not a table"));
    if let Some(k) = t
        .keys()
        .find(|k| !["env", "header", "prefix"].contains(&k.as_str()))
    {
        panic!("src/presets.toml: {who}: {k} is not a field of an auth entry");
    }
    let field = |k: &str| {
        t.get(k)
            .map_or("String::new()".to_string(), |v| text_of(v, who))
    };
    format!(
        "KeyHeader {{ env: {}, header: {}, prefix: {} }}",
        field("env"),
        field("header"),
        field("prefix")
    )
}

fn endpoint(v: &Value, who: &str) -> String {
    let t = v
        .as_table()
        .unwrap_or_else(|| panic!("src/presets.toml: {who}: an entry is not a table"));
    let known = ["file", "env", "arg", "url", "key_env", "api"];
    if let Some(k) = t.keys().find(|k| !known.contains(&k.as_str())) {
        panic!("src/presets.toml: {who}: {k} is not a field of an endpoint");
    }
    format!(
        "EndpointSource {{ file: {}, env: {}, arg: {}, url: {}, key_env: {}, api: {} }}",
        optional_text(t.get("file"), who),
        optional_text(t.get("env"), who),
        optional_text(t.get("arg"), who),
        optional_text(t.get("url"), who),
        optional_text(t.get("key_env"), who),
        t.get("api")
            .map_or("false".to_string(), |v| bool_of(v, who)),
    )
}
