//! `aq mcp wrap` / `aq mcp unwrap`: an MCP client's stdio servers made to
//! start under `aq mcp run`, and back.
//!
//! A wrapped entry keeps its name and `env`; its command becomes aq and
//! its arguments `mcp run --name NAME -- ORIGINAL-COMMAND ORIGINAL-ARGS`,
//! so `unwrap` reads the original back from the entry itself. A URL
//! (HTTP, SSE) server runs elsewhere: it is listed as not wrappable.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

pub use crate::error::McpConfigError;

/// The MCP clients whose configuration `aq mcp wrap` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpClient {
    /// Claude Code: `~/.claude.json` `mcpServers`.
    ClaudeCode,
    /// Claude Desktop: `~/.config/Claude/claude_desktop_config.json`.
    ClaudeDesktop,
    /// Cursor: `~/.cursor/mcp.json`.
    Cursor,
    /// Codex CLI: `~/.codex/config.toml` `[mcp_servers.NAME]`.
    Codex,
    /// Gemini CLI: `~/.gemini/settings.json` `mcpServers`.
    Gemini,
}

impl McpClient {
    /// Every client, by its flag name.
    pub const ALL: [(&'static str, McpClient); 5] = [
        ("claude-code", McpClient::ClaudeCode),
        ("claude-desktop", McpClient::ClaudeDesktop),
        ("cursor", McpClient::Cursor),
        ("codex", McpClient::Codex),
        ("gemini", McpClient::Gemini),
    ];

    /// The client called `name`.
    pub fn parse(name: &str) -> Option<McpClient> {
        McpClient::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| *c)
    }

    /// Its configuration file.
    pub fn config_path(self, home: &Path) -> PathBuf {
        home.join(match self {
            McpClient::ClaudeCode => ".claude.json",
            McpClient::ClaudeDesktop => ".config/Claude/claude_desktop_config.json",
            McpClient::Cursor => ".cursor/mcp.json",
            McpClient::Codex => ".codex/config.toml",
            McpClient::Gemini => ".gemini/settings.json",
        })
    }
}

/// What happened to one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerChange {
    /// Its name in the client's configuration.
    pub name: String,
    /// `wrapped`, `unwrapped`, `already wrapped`, `not wrapped`, or why not.
    pub outcome: String,
}

fn is_aq(command: &str) -> bool {
    Path::new(command).file_name().is_some_and(|n| n == "aq")
}

/// `(command, args)` under aq, for `name`.
fn wrapped(aq: &str, name: &str, command: &str, args: &[String]) -> (String, Vec<String>) {
    let mut a = vec![
        "mcp".to_string(),
        "run".to_string(),
        "--name".to_string(),
        name.to_string(),
        "--".to_string(),
        command.to_string(),
    ];
    a.extend(args.iter().cloned());
    (aq.to_string(), a)
}

/// The original `(command, args)` of a wrapped entry.
fn unwrapped(command: &str, args: &[String]) -> Option<(String, Vec<String>)> {
    if !is_aq(command) || args.first().map(String::as_str) != Some("mcp") {
        return None;
    }
    let dash = args.iter().position(|a| a == "--")?;
    let (cmd, rest) = args[dash + 1..].split_first()?;
    Some((cmd.clone(), rest.to_vec()))
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Wraps (or, with `unwrap`, unwraps) the servers of a JSON configuration
/// (`mcpServers` at the top), all or only `only`.
pub(crate) fn edit_json(
    root: &mut Value,
    aq: &str,
    only: Option<&str>,
    unwrap: bool,
) -> Vec<ServerChange> {
    let mut out = Vec::new();
    let Some(servers) = root.get_mut("mcpServers").and_then(Value::as_object_mut) else {
        return out;
    };
    for (name, entry) in servers.iter_mut() {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let Some(command) = entry
            .get("command")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            out.push(ServerChange {
                name: name.clone(),
                outcome: "not wrappable: a URL server runs elsewhere".to_string(),
            });
            continue;
        };
        let args = strings(entry.get("args"));
        let outcome = match (unwrap, unwrapped(&command, &args)) {
            (false, Some(_)) => "already wrapped",
            (false, None) => {
                let (c, a) = wrapped(aq, name, &command, &args);
                entry["command"] = json!(c);
                entry["args"] = json!(a);
                "wrapped"
            }
            (true, Some((c, a))) => {
                entry["command"] = json!(c);
                if a.is_empty() && entry.get("args").is_some() {
                    entry["args"] = json!([]);
                } else {
                    entry["args"] = json!(a);
                }
                "unwrapped"
            }
            (true, None) => "not wrapped",
        };
        out.push(ServerChange {
            name: name.clone(),
            outcome: outcome.to_string(),
        });
    }
    out
}

/// The same for Codex's `[mcp_servers.NAME]` in `config.toml`.
pub(crate) fn edit_toml(
    doc: &mut toml_edit::DocumentMut,
    aq: &str,
    only: Option<&str>,
    unwrap: bool,
) -> Vec<ServerChange> {
    let mut out = Vec::new();
    let Some(servers) = doc
        .get_mut("mcp_servers")
        .and_then(toml_edit::Item::as_table_like_mut)
    else {
        return out;
    };
    for (name, entry) in servers.iter_mut() {
        let name = name.get().to_string();
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let Some(table) = entry.as_table_like_mut() else {
            continue;
        };
        let Some(command) = table
            .get("command")
            .and_then(|c| c.as_str())
            .map(str::to_string)
        else {
            out.push(ServerChange {
                name,
                outcome: "not wrappable: a URL server runs elsewhere".to_string(),
            });
            continue;
        };
        let args: Vec<String> = table
            .get("args")
            .and_then(|a| a.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let set = |table: &mut dyn toml_edit::TableLike, c: &str, a: &[String]| {
            table.insert("command", toml_edit::value(c));
            let mut arr = toml_edit::Array::new();
            for x in a {
                arr.push(x.as_str());
            }
            table.insert("args", toml_edit::value(arr));
        };
        let outcome = match (unwrap, unwrapped(&command, &args)) {
            (false, Some(_)) => "already wrapped",
            (false, None) => {
                let (c, a) = wrapped(aq, &name, &command, &args);
                set(table, &c, &a);
                "wrapped"
            }
            (true, Some((c, a))) => {
                set(table, &c, &a);
                "unwrapped"
            }
            (true, None) => "not wrapped",
        };
        out.push(ServerChange {
            name,
            outcome: outcome.to_string(),
        });
    }
    out
}

/// Wraps or unwraps the servers in `text`, a client's configuration file:
/// what happened to each, and the file's new text (formatting kept).
pub fn edit_file(
    client: McpClient,
    text: &str,
    aq: &str,
    only: Option<&str>,
    unwrap: bool,
) -> Result<(Vec<ServerChange>, String), McpConfigError> {
    if client == McpClient::Codex {
        let mut doc: toml_edit::DocumentMut = text
            .parse()
            .map_err(|source| McpConfigError::NotToml { source })?;
        let c = edit_toml(&mut doc, aq, only, unwrap);
        return Ok((c, doc.to_string()));
    }
    let mut v: Value =
        serde_json::from_str(text).map_err(|source| McpConfigError::NotJson { source })?;
    let c = edit_json(&mut v, aq, only, unwrap);
    Ok((c, crate::install::json_like(&v, text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_servers_are_wrapped_and_unwrapped_back_exactly() {
        let original = json!({
            "theme": "dark",
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"X": "1"}},
                "web": {"type": "http", "url": "https://mcp.example.invalid"}
            }
        });
        let mut v = original.clone();
        let changes = edit_json(&mut v, "/opt/aq", None, false);
        assert_eq!(changes[0].outcome, "wrapped");
        assert!(changes[1].outcome.starts_with("not wrappable"));
        assert_eq!(v["mcpServers"]["files"]["command"], "/opt/aq");
        assert_eq!(
            v["mcpServers"]["files"]["args"],
            json!([
                "mcp",
                "run",
                "--name",
                "files",
                "--",
                "npx",
                "-y",
                "@modelcontextprotocol/server-filesystem",
                "."
            ])
        );
        assert_eq!(v["mcpServers"]["files"]["env"]["X"], "1");
        // Twice changes nothing.
        assert_eq!(
            edit_json(&mut v, "/opt/aq", None, false)[0].outcome,
            "already wrapped"
        );
        edit_json(&mut v, "/opt/aq", None, true);
        assert_eq!(v, original);
    }

    #[test]
    fn codex_servers_in_toml_keep_the_rest_of_the_file() {
        let text = "# mine\nmodel = \"x\"\n\n[mcp_servers.files]\ncommand = \"npx\"\nargs = [\"-y\", \"server\"]\n";
        let mut doc: toml_edit::DocumentMut = text.parse().unwrap();
        let c = edit_toml(&mut doc, "/opt/aq", Some("files"), false);
        assert_eq!(c[0].outcome, "wrapped");
        let wrapped_text = doc.to_string();
        assert!(
            wrapped_text.starts_with("# mine\nmodel = \"x\"\n"),
            "{wrapped_text}"
        );
        assert!(
            wrapped_text.contains("command = \"/opt/aq\""),
            "{wrapped_text}"
        );
        edit_toml(&mut doc, "/opt/aq", None, true);
        assert!(doc.to_string().contains("command = \"npx\""));
        assert!(
            doc.to_string().contains("args = [\"-y\", \"server\"]"),
            "{}",
            doc
        );
    }
}
