//! Where the user pointed an agent at its model: the endpoints named in the
//! agent's own user-level configuration, its variables and its command line.
//!
//! Users set an agent up in more ways than the one variable the key proxy
//! serves: a custom provider in `~/.codex/config.toml`, `env` in Claude's
//! `settings.json`, an `opencode.json` provider, `-c
//! model_providers.x.base_url=…`. A preset lists those places
//! ([`crate::EndpointSource`]); this module reads them, so the session can
//! open exactly the endpoints the user configured: a loopback model server
//! through a bridge to that one address and port, a remote one through the
//! broker.
//!
//! Only the user's own files count (paths in the home directory): a
//! repository's configuration never opens a way out of the sandbox.

use std::ffi::OsString;
use std::path::Path;

use serde_json::Value;

#[cfg(test)]
use crate::EndpointSource;
use crate::Preset;
use crate::preset::is_env_name;

/// One endpoint the user configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The base URL, as written (a variable it names resolved).
    pub url: String,
    /// Where it was found: `~/.codex/config.toml model_providers.local.base_url`.
    pub from: String,
    /// It is the agent's model API base URL: the key proxy's upstream when
    /// the variable it serves is not set (see [`crate::EndpointSource::api`]).
    pub api: bool,
}

/// What the agent's configuration names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// The endpoints, in the preset's order, each URL once.
    pub endpoints: Vec<Endpoint>,
    /// Variables the configuration names as holding a key (Codex's
    /// `env_key`): passed to the agent only.
    pub key_envs: Vec<String>,
    /// Endpoints in a file the agent itself writes inside a session, not
    /// used, one line each (what the banner and the log say).
    pub refused: Vec<String>,
}

/// Whether the agent can write `file` (`~/...`) inside a session: under
/// one of its state paths and not bound read-only by its config. What such
/// a file names could have been planted by a command of the last session,
/// to open a host port or a destination in the next one.
pub(crate) fn agent_writes(preset: &Preset, file: &str) -> bool {
    let covers = |entry: &String| match entry.strip_suffix('/') {
        Some(dir) => file == dir || file.starts_with(entry.as_str()),
        None => file == entry,
    };
    preset.state.iter().any(covers) && !preset.config.iter().any(covers)
}

/// Reads every place `preset` lists. `home` is the home directory, `env`
/// the caller's environment, `args` the agent's own arguments.
pub fn find(
    preset: &Preset,
    home: Option<&Path>,
    env: &[(OsString, OsString)],
    args: &[String],
) -> Found {
    let mut found = Found::default();
    let lookup = |name: &str| -> Option<String> {
        crate::grants::lookup(env, name).map(|v| v.to_string_lossy().into_owned())
    };
    let add = |found: &mut Found, raw: &str, from: String, api: bool| {
        let Some(url) = resolve_value(raw, &lookup) else {
            return;
        };
        if !(url.starts_with("http://") || url.starts_with("https://"))
            || found.endpoints.iter().any(|e| e.url == url)
        {
            return;
        }
        found.endpoints.push(Endpoint { url, from, api });
    };
    for source in &preset.endpoints {
        if let Some(name) = &source.env {
            if let Some(v) = lookup(name) {
                add(&mut found, &v, format!("${name}"), source.api);
            }
            continue;
        }
        if let (Some(option), Some(pattern)) = (&source.arg, &source.url) {
            for (key, value) in config_args(args, option) {
                if matches(pattern, &key) {
                    add(&mut found, &value, format!("{option} {key}"), source.api);
                }
            }
            continue;
        }
        let (Some(file), Some(pattern)) = (&source.file, &source.url) else {
            continue;
        };
        let Some(path) = crate::grants::home_path(file, home, preset.xdg.then_some(env)) else {
            continue;
        };
        let Some(doc) = read_doc(&path) else {
            continue;
        };
        if agent_writes(preset, file) {
            for (path, value) in walk(&doc, pattern) {
                if let Some(v) = value.as_str() {
                    found.refused.push(format!(
                        "{v} ({file} {path}): not used: the agent writes {file} inside a session, so a command could have put it there (set it in the agent's own config instead)"
                    ));
                }
            }
            continue;
        }
        for (path, value) in walk(&doc, pattern) {
            if let Some(v) = value.as_str() {
                add(&mut found, v, format!("{file} {path}"), source.api);
            }
        }
        if let Some(keys) = &source.key_env {
            for (_, value) in walk(&doc, keys) {
                // A name (Codex's `env_key`), or OpenCode's `{env:NAME}`.
                let v = value.as_str().map(|v| {
                    let v = v.trim();
                    v.strip_prefix("{env:")
                        .and_then(|r| r.strip_suffix('}'))
                        .unwrap_or(v)
                });
                if let Some(v) = v
                    && is_env_name(v)
                    && !found.key_envs.iter().any(|k| k == v)
                {
                    found.key_envs.push(v.to_string());
                }
            }
        }
    }
    found
}

/// A value as the agents write one: a URL, or a variable that holds it
/// (`{env:NAME}` in OpenCode, `$NAME` or `${NAME}` in Crush).
fn resolve_value(raw: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let raw = raw.trim();
    let name = raw
        .strip_prefix("{env:")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| raw.strip_prefix("${").and_then(|r| r.strip_suffix('}')))
        .or_else(|| raw.strip_prefix('$'));
    match name {
        Some(n) if is_env_name(n) => lookup(n),
        Some(_) => None,
        None => Some(raw.to_string()),
    }
}

/// `KEY=VALUE` pairs given with `option` (`-c k=v`, `-ck=v`, `--config=k=v`).
fn config_args(args: &[String], option: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let pair = if a == option {
            i += 1;
            args.get(i).cloned()
        } else {
            a.strip_prefix(option)
                .map(|rest| rest.trim_start_matches('=').to_string())
        };
        if a == "--" {
            break;
        }
        if let Some((k, v)) = pair.as_deref().and_then(|p| p.split_once('=')) {
            // The value is TOML (`"http://…"`), or a bare string.
            let value = toml::from_str::<toml::Table>(&format!("v = {v}"))
                .ok()
                .and_then(|t| t.get("v").and_then(|v| v.as_str().map(String::from)))
                .unwrap_or_else(|| v.trim_matches(['"', '\'']).to_string());
            out.push((k.trim().to_string(), value));
        }
        i += 1;
    }
    out
}

/// Whether the dotted `key` fits `pattern` (`*` is any one key).
fn matches(pattern: &str, key: &str) -> bool {
    let p: Vec<&str> = pattern.split('.').collect();
    let k: Vec<&str> = key.split('.').collect();
    p.len() == k.len() && p.iter().zip(&k).all(|(p, k)| *p == "*" || p == k)
}

/// A configuration file as JSON: `.toml`, `.env` and JSON (comments and
/// trailing commas allowed, as JSONC). `None` when missing or unreadable:
/// the agent would not read it either.
fn read_doc(path: &Path) -> Option<Value> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 4 * 1024 * 1024 {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let name = path.file_name()?.to_string_lossy();
    if name.ends_with(".toml") {
        let table: toml::Table = toml::from_str(&text).ok()?;
        serde_json::to_value(table).ok()
    } else if name == ".env" || name.ends_with(".env") {
        Some(Value::Object(
            text.lines()
                .filter_map(|l| {
                    let l = l.trim();
                    let l = l.strip_prefix("export ").unwrap_or(l);
                    let (k, v) = l.split_once('=')?;
                    (!l.starts_with('#')).then(|| {
                        let v = v.trim();
                        let v = v
                            .strip_prefix('"')
                            .and_then(|v| v.strip_suffix('"'))
                            .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                            .unwrap_or(v);
                        (k.trim().to_string(), Value::String(v.to_string()))
                    })
                })
                .collect(),
        ))
    } else {
        serde_json::from_str(&strip_jsonc(&text)).ok()
    }
}

/// JSON with comments (`//`, `/* */`) and trailing commas → JSON.
fn strip_jsonc(text: &str) -> String {
    drop_trailing_commas(&drop_comments(text))
}

fn drop_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
                out.push(' ');
            }
            _ => {
                in_string = c == '"';
                out.push(c);
            }
        }
    }
    out
}

/// A comma before `}` or `]` (past blanks), outside strings, is dropped.
fn drop_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' {
                i += 1;
                out.extend(chars.get(i));
            } else if c == '"' {
                in_string = false;
            }
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if !matches!(next, Some('}') | Some(']')) {
                out.push(c);
            }
        } else {
            in_string = c == '"';
            out.push(c);
        }
        i += 1;
    }
    out
}

/// The values at `pattern` in `doc`, with their dotted paths.
fn walk<'a>(doc: &'a Value, pattern: &str) -> Vec<(String, &'a Value)> {
    let mut at: Vec<(String, &Value)> = vec![(String::new(), doc)];
    for part in pattern.split('.') {
        let mut next = Vec::new();
        for (path, v) in at {
            let Some(obj) = v.as_object() else { continue };
            let join = |k: &str| {
                if path.is_empty() {
                    k.to_string()
                } else {
                    format!("{path}.{k}")
                }
            };
            if part == "*" {
                next.extend(obj.iter().map(|(k, v)| (join(k), v)));
            } else if let Some(v) = obj.get(part) {
                next.push((join(part), v));
            }
        }
        at = next;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset(sources: Vec<EndpointSource>) -> Preset {
        Preset {
            name: "x".into(),
            endpoints: sources,
            ..Preset::default()
        }
    }

    fn source(file: &str, url: &str) -> EndpointSource {
        EndpointSource {
            file: Some(file.into()),
            url: Some(url.into()),
            ..EndpointSource::default()
        }
    }

    #[test]
    fn codex_providers_their_keys_and_command_line_overrides_are_found() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        std::fs::write(
            home.path().join(".codex/config.toml"),
            "model_provider = \"local\"\n[model_providers.local]\nname = \"LiteLLM\"\nbase_url = \"http://127.0.0.1:4000/v1\"\nenv_key = \"LITELLM_KEY\"\n[model_providers.ollama]\nbase_url = \"http://localhost:11434/v1\"\n",
        )
        .unwrap();
        let p = preset(vec![
            EndpointSource {
                key_env: Some("model_providers.*.env_key".into()),
                ..source("~/.codex/config.toml", "model_providers.*.base_url")
            },
            EndpointSource {
                arg: Some("-c".into()),
                url: Some("model_providers.*.base_url".into()),
                ..EndpointSource::default()
            },
        ]);
        let args: Vec<String> = [
            "exec",
            "-c",
            "model_providers.gw.base_url=\"https://gw.example.invalid/v1\"",
            "-cmodel=\"x\"",
            "hi",
        ]
        .map(String::from)
        .to_vec();
        let found = find(&p, Some(home.path()), &[], &args);
        let urls: Vec<(&str, &str)> = found
            .endpoints
            .iter()
            .map(|e| (e.url.as_str(), e.from.as_str()))
            .collect();
        assert_eq!(
            urls,
            [
                (
                    "http://127.0.0.1:4000/v1",
                    "~/.codex/config.toml model_providers.local.base_url"
                ),
                (
                    "http://localhost:11434/v1",
                    "~/.codex/config.toml model_providers.ollama.base_url"
                ),
                (
                    "https://gw.example.invalid/v1",
                    "-c model_providers.gw.base_url"
                ),
            ]
        );
        assert_eq!(found.key_envs, ["LITELLM_KEY"]);
    }

    #[test]
    fn jsonc_files_variables_and_env_files_are_read() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".config/opencode");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("opencode.jsonc"),
            "{\n  // a local gateway\n  \"provider\": { \"gw\": { \"options\": { \"baseURL\": \"{env:GW_URL}\", }, /* x */ },\n \"url\": \"http://a//b\" },\n}\n",
        )
        .unwrap();
        std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
        std::fs::write(
            home.path().join(".gemini/.env"),
            "# mine\nexport GOOGLE_GEMINI_BASE_URL='http://127.0.0.1:8999'\n",
        )
        .unwrap();
        let p = preset(vec![
            source(
                "~/.config/opencode/opencode.jsonc",
                "provider.*.options.baseURL",
            ),
            source("~/.gemini/.env", "GOOGLE_GEMINI_BASE_URL"),
            EndpointSource {
                env: Some("OPENAI_BASE_URL".into()),
                ..EndpointSource::default()
            },
            // A workspace file is never read.
            source(".codex/config.toml", "model_providers.*.base_url"),
        ]);
        let env = vec![
            ("GW_URL".into(), "http://127.0.0.1:4000/v1".into()),
            (
                "OPENAI_BASE_URL".into(),
                "https://api.example.invalid/v1".into(),
            ),
        ];
        let found = find(&p, Some(home.path()), &env, &[]);
        let urls: Vec<&str> = found.endpoints.iter().map(|e| e.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:4000/v1",
                "http://127.0.0.1:8999",
                "https://api.example.invalid/v1"
            ]
        );
        assert_eq!(found.endpoints[2].from, "$OPENAI_BASE_URL");
    }

    #[test]
    fn opencode_names_its_key_variable_as_env_braces() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".config/opencode");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("opencode.json"),
            r#"{"provider": {"gw": {"options": {"baseURL": "http://127.0.0.1:4000/v1", "apiKey": "{env:GW_KEY}"}}, "lit": {"options": {"apiKey": "sk-literal-not-a-name!"}}}}"#,
        )
        .unwrap();
        let p = preset(vec![EndpointSource {
            key_env: Some("provider.*.options.apiKey".into()),
            ..source(
                "~/.config/opencode/opencode.json",
                "provider.*.options.baseURL",
            )
        }]);
        let found = find(&p, Some(home.path()), &[], &[]);
        assert_eq!(found.key_envs, ["GW_KEY"]);
        assert_eq!(found.endpoints[0].url, "http://127.0.0.1:4000/v1");
    }

    #[test]
    fn a_file_the_agent_writes_inside_is_not_read() {
        let home = tempfile::tempdir().unwrap();
        let data = home.path().join(".local/share/toy");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(
            data.join("toy.json"),
            "{\"providers\": {\"planted\": {\"base_url\": \"http://127.0.0.1:6379\"}}}",
        )
        .unwrap();
        std::fs::write(
            data.join("kept.json"),
            "{\"providers\": {\"mine\": {\"base_url\": \"http://127.0.0.1:4000\"}}}",
        )
        .unwrap();
        let mut p = preset(vec![
            source("~/.local/share/toy/toy.json", "providers.*.base_url"),
            source("~/.local/share/toy/kept.json", "providers.*.base_url"),
        ]);
        p.state = vec!["~/.local/share/toy/".into()];
        // Bound read-only on top: the agent cannot write it.
        p.config = vec!["~/.local/share/toy/kept.json".into()];
        let found = find(&p, Some(home.path()), &[], &[]);
        let urls: Vec<&str> = found.endpoints.iter().map(|e| e.url.as_str()).collect();
        assert_eq!(urls, ["http://127.0.0.1:4000"]);
        assert_eq!(found.refused.len(), 1, "{:?}", found.refused);
        assert!(
            found.refused[0].starts_with("http://127.0.0.1:6379 (~/.local/share/toy/toy.json providers.planted.base_url): not used"),
            "{:?}",
            found.refused
        );
    }

    #[test]
    fn no_builtin_preset_reads_endpoints_from_a_file_its_agent_writes() {
        let all = crate::PresetSet::builtin().0;
        for p in &all {
            for s in &p.endpoints {
                if let Some(file) = &s.file {
                    // Crush keeps its own data in ~/.local/share/crush/crush.json:
                    // listed, and refused by `find`.
                    if p.name == "crush" && file == "~/.local/share/crush/crush.json" {
                        assert!(agent_writes(p, file));
                        continue;
                    }
                    assert!(!agent_writes(p, file), "{}: {file}", p.name);
                    // Nor one another agent's session may write (planted
                    // under `aq run -- X`, read by `aq run -- Y`).
                    for q in &all {
                        let state = q.state.iter().any(|e| match e.strip_suffix('/') {
                            Some(dir) => file == dir || file.starts_with(e.as_str()),
                            None => file == e,
                        });
                        assert!(
                            !state || q.name == p.name,
                            "{}'s endpoint file {file} is in {}'s writable state",
                            p.name,
                            q.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn hostile_or_broken_files_find_nothing() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("a.json"), "{not json").unwrap();
        std::fs::write(home.path().join("b.toml"), "[[[").unwrap();
        std::fs::write(
            home.path().join("c.json"),
            "{\"p\": {\"x\": {\"u\": \"file:///etc/passwd\"}, \"y\": {\"u\": 7}}}",
        )
        .unwrap();
        let p = preset(vec![
            source("~/a.json", "p.*.u"),
            source("~/b.toml", "p.*.u"),
            source("~/c.json", "p.*.u"),
            source("~/missing.json", "p.*.u"),
        ]);
        assert_eq!(find(&p, Some(home.path()), &[], &[]), Found::default());
    }
}
