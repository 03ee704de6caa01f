//! Installing `aq hook <agent>` into an agent's own configuration, and
//! taking it out again: `aq enable <agent> --hook` / `aq disable <agent>`.
//!
//! A JSON config gets one entry of ours, recognised by its command string
//! (no marker key: Codex and Copilot reject unknown fields); other entries,
//! the key order and the file's indentation are kept. Agents that read a
//! directory of hook files (Copilot, Cline, OpenCode) get a file of ours.
//! The caller keeps the file's bytes from before, so `disable` can put them
//! back exactly when nothing else changed since.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

pub use crate::error::InstallError;
use crate::hooks::HookAgent;

/// Whose configuration: the user's, or the project's (the workspace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// In the home directory: every project.
    User,
    /// In the workspace: this project (agents may ask the user to trust it).
    Project,
}

impl Scope {
    /// The flag's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// Where an agent's hook goes for `scope`.
pub fn hook_path(agent: HookAgent, scope: Scope, home: &Path, workspace: &Path) -> PathBuf {
    let base = match scope {
        Scope::User => home,
        Scope::Project => workspace,
    };
    match (agent, scope) {
        (HookAgent::Claude, _) => base.join(".claude/settings.json"),
        (HookAgent::Codex, _) => base.join(".codex/hooks.json"),
        (HookAgent::Gemini, _) => base.join(".gemini/settings.json"),
        (HookAgent::Cursor, _) => base.join(".cursor/hooks.json"),
        (HookAgent::Copilot, Scope::User) => home.join(".copilot/hooks/aq.json"),
        (HookAgent::Copilot, Scope::Project) => workspace.join(".github/hooks/aq.json"),
        (HookAgent::Windsurf, Scope::User) => home.join(".codeium/windsurf/hooks.json"),
        (HookAgent::Windsurf, Scope::Project) => workspace.join(".windsurf/hooks.json"),
        (HookAgent::Cline, Scope::User) => home.join("Documents/Cline/Hooks/PreToolUse"),
        (HookAgent::Cline, Scope::Project) => workspace.join(".clinerules/hooks/PreToolUse"),
        (HookAgent::OpenCode, Scope::User) => home.join(".config/opencode/plugins/aq.js"),
        (HookAgent::OpenCode, Scope::Project) => workspace.join(".opencode/plugins/aq.js"),
    }
}

/// Files besides the hook files that switch an agent's hooks off or
/// decide whether aq's runs: Claude Code's `disableAllHooks` (and
/// `allowManagedHooksOnly`) in its local and managed settings; Codex runs
/// a hook only while `config.toml` trusts that exact entry, and a trusted
/// project's own `.codex/config.toml` sets its sandbox and approvals too.
const HOOK_SWITCHES: &[&str] = &[
    "~/.claude/settings.local.json",
    ".claude/settings.local.json",
    "/etc/claude-code/managed-settings.json",
    "/Library/Application Support/ClaudeCode/managed-settings.json",
    "~/.codex/config.toml",
    ".codex/config.toml",
];

/// Files whose change can take aq's hook out of an agent or switch the
/// agent's hooks off: where [`hook_path`] installs it, for every agent and
/// both scopes, and the switches above. The user's are spelled `~/...`,
/// the project's relative to the workspace.
pub fn guard_files() -> Vec<String> {
    let mut out: Vec<String> = HookAgent::ALL
        .iter()
        .flat_map(|&agent| {
            [Scope::User, Scope::Project].map(|scope| {
                hook_path(agent, scope, Path::new("~"), Path::new(""))
                    .to_string_lossy()
                    .into_owned()
            })
        })
        .collect();
    out.extend(HOOK_SWITCHES.iter().map(|s| s.to_string()));
    out
}

/// Whether a hook command string is aq's for `agent`: `…/aq hook AGENT`.
pub(crate) fn is_our_command(command: &str, agent: HookAgent) -> bool {
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or_default();
    let program = program.trim_matches(['"', '\'']);
    program.rsplit('/').next() == Some("aq")
        && words.next() == Some("hook")
        && words.next() == Some(agent.name())
        && words.next().is_none()
}

/// Files that are wholly ours (a directory of hook files).
fn own_file(agent: HookAgent) -> bool {
    matches!(
        agent,
        HookAgent::Copilot | HookAgent::Cline | HookAgent::OpenCode
    )
}

/// The hook entry aq adds to the agent's hook list.
fn entry(agent: HookAgent, command: &str) -> Value {
    match agent {
        // Claude Code's own switch: a hook that crashes or times out blocks.
        HookAgent::Claude => json!({
            "matcher": "Bash|PowerShell",
            "hooks": [{"type": "command", "command": command, "timeout": 30, "onFailure": "block"}]
        }),
        HookAgent::Codex => json!({
            "matcher": "^Bash$",
            "hooks": [{"type": "command", "command": command, "timeout": 30}]
        }),
        HookAgent::Gemini => json!({
            "matcher": "^run_shell_command$",
            "hooks": [{"type": "command", "command": command, "timeout": 30000}]
        }),
        // Cursor's own switch: a failed hook blocks instead of letting the
        // command through.
        HookAgent::Cursor => json!({"command": command, "timeout": 30, "failClosed": true}),
        HookAgent::Copilot => json!({"type": "command", "bash": command, "timeoutSec": 30}),
        HookAgent::Windsurf => json!({"command": command, "show_output": true}),
        HookAgent::Cline | HookAgent::OpenCode => Value::Null,
    }
}

/// The path of the hook list in the JSON file, and the event.
fn list_path(agent: HookAgent) -> (&'static [&'static str], bool) {
    match agent {
        HookAgent::Claude | HookAgent::Codex => (&["hooks", "PreToolUse"], false),
        HookAgent::Gemini => (&["hooks", "BeforeTool"], false),
        HookAgent::Cursor => (&["hooks", "beforeShellExecution"], true),
        HookAgent::Copilot => (&["hooks", "preToolUse"], true),
        HookAgent::Windsurf => (&["hooks", "pre_run_command"], false),
        HookAgent::Cline | HookAgent::OpenCode => (&[], false),
    }
}

/// Whether one entry of the hook list is ours (directly, or in its `hooks`).
fn entry_is_ours(e: &Value, agent: HookAgent) -> bool {
    let direct = ["command", "bash"]
        .iter()
        .filter_map(|k| e.get(*k).and_then(Value::as_str))
        .any(|c| is_our_command(c, agent));
    direct
        || e.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
            hs.iter().any(|h| {
                h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_our_command(c, agent))
            })
        })
}

/// The indentation a JSON text uses (two spaces when it cannot tell).
fn indent_of(text: &str) -> Vec<u8> {
    text.lines()
        .nth(1)
        .map(|l| {
            l.chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect::<String>()
        })
        .filter(|i| !i.is_empty())
        .unwrap_or_else(|| "  ".to_string())
        .into_bytes()
}

/// `v` as JSON text indented the way `like` (the file it came from) is.
pub(crate) fn json_like(v: &Value, like: &str) -> String {
    to_text(v, &indent_of(like))
}

fn to_text(v: &Value, indent: &[u8]) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(indent);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    let _ = v.serialize(&mut ser);
    let mut s = String::from_utf8(out).unwrap_or_default();
    s.push('\n');
    s
}

/// The file's new content with aq's hook in it (`None`: it is already
/// there). `current` is the file's content, if it exists.
pub fn with_hook(
    agent: HookAgent,
    current: Option<&str>,
    command: &str,
) -> Result<Option<String>, InstallError> {
    if own_file(agent) && !matches!(agent, HookAgent::Copilot) {
        let ours = own_content(agent, command);
        return match current {
            Some(c) if c == ours => Ok(None),
            Some(c) if !c.contains("aq hook") => Err(InstallError::ForeignHookFile),
            _ => Ok(Some(ours)),
        };
    }
    let text = current.filter(|t| !t.trim().is_empty()).unwrap_or("{}");
    let mut root: Value =
        serde_json::from_str(text).map_err(|source| InstallError::NotJson { source })?;
    let Some(obj) = root.as_object_mut() else {
        return Err(InstallError::NotAnObject);
    };
    let (path, versioned) = list_path(agent);
    if versioned && !obj.contains_key("version") {
        obj.insert("version".to_string(), json!(1));
    }
    let mut node: &mut Map<String, Value> = obj;
    for (i, key) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        let slot = node
            .entry(key.to_string())
            .or_insert_with(|| if last { json!([]) } else { json!({}) });
        if last {
            let Some(list) = slot.as_array_mut() else {
                return Err(InstallError::NotAList {
                    key: path.join("."),
                });
            };
            if list.iter().any(|e| entry_is_ours(e, agent)) {
                return Ok(None);
            }
            list.push(entry(agent, command));
            break;
        }
        node = slot
            .as_object_mut()
            .ok_or_else(|| InstallError::NotAnObjectAt {
                key: key.to_string(),
            })?;
    }
    Ok(Some(to_text(&root, &indent_of(text))))
}

/// The file's content without aq's hook (`None`: it was not there), and
/// whether the file is then to be removed (a file of ours).
pub fn without_hook(
    agent: HookAgent,
    current: &str,
) -> Result<Option<(String, bool)>, InstallError> {
    if own_file(agent) && !matches!(agent, HookAgent::Copilot) {
        return Ok(current.contains("aq hook").then(|| (String::new(), true)));
    }
    let mut root: Value =
        serde_json::from_str(current).map_err(|source| InstallError::NotJson { source })?;
    let (path, _) = list_path(agent);
    let mut node = &mut root;
    for key in path {
        match node.get_mut(*key) {
            Some(n) => node = n,
            None => return Ok(None),
        }
    }
    let Some(list) = node.as_array_mut() else {
        return Ok(None);
    };
    let before = list.len();
    list.retain(|e| !entry_is_ours(e, agent));
    if list.len() == before {
        return Ok(None);
    }
    let empty_own = agent == HookAgent::Copilot && list.is_empty();
    Ok(Some((to_text(&root, &indent_of(current)), empty_own)))
}

/// Whether `current` has aq's hook for `agent`.
pub fn has_hook(agent: HookAgent, current: &str) -> bool {
    with_hook(agent, Some(current), "aq hook x").is_ok_and(|c| c.is_none())
        || (own_file(agent) && current.contains(&format!("hook {}", agent.name())))
}

/// The content of a hook file that is wholly ours.
fn own_content(agent: HookAgent, command: &str) -> String {
    match agent {
        HookAgent::Cline => format!(
            "#!/bin/sh\n# Installed by `aq enable cline --hook`; `aq disable cline` removes it.\nexec {command}\n"
        ),
        HookAgent::OpenCode => format!(
            r#"// Installed by `aq enable opencode --hook`; `aq disable opencode` removes it.
// Every bash command OpenCode runs is first decided by `{command}`;
// a refusal (or no answer) stops it with aq's reason.
import {{ spawnSync }} from "node:child_process";

export const AqFirewall = async ({{ directory }}) => ({{
  "tool.execute.before": async (input, output) => {{
    if (input.tool !== "bash") return;
    const event = JSON.stringify({{ tool: input.tool, args: output.args, cwd: directory, session: input.sessionID }});
    const [program, ...args] = {words};
    const r = spawnSync(program, args, {{ input: event, encoding: "utf8", timeout: 30000 }});
    let answer;
    try {{ answer = JSON.parse(r.stdout); }} catch {{ throw new Error("aq could not judge this command; it was refused"); }}
    if (answer.decision !== "allow") throw new Error(answer.reason || "refused by aq");
  }},
}});
"#,
            words = serde_json::to_string(&command.split_whitespace().collect::<Vec<_>>())
                .unwrap_or_default()
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn guard_files_name_every_hook_file_in_both_scopes() {
        let files = super::guard_files();
        for f in [
            "~/.claude/settings.json",
            ".claude/settings.json",
            ".claude/settings.local.json",
            "~/.codex/hooks.json",
            "~/.codex/config.toml",
            "~/.gemini/settings.json",
            ".gemini/settings.json",
            "~/.cursor/hooks.json",
            "~/.copilot/hooks/aq.json",
            ".github/hooks/aq.json",
            "~/.codeium/windsurf/hooks.json",
            "~/Documents/Cline/Hooks/PreToolUse",
            "~/.config/opencode/plugins/aq.js",
        ] {
            assert!(files.iter().any(|g| g == f), "{f} missing from {files:?}");
        }
    }

    use super::*;

    const CMD: &str = "/usr/local/bin/aq hook claude";

    #[test]
    fn our_entry_is_added_once_and_the_rest_is_kept() {
        let before = "{\n    \"theme\": \"dark\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\"matcher\": \"Edit\", \"hooks\": [{\"type\": \"command\", \"command\": \"lint.sh\"}]}\n        ]\n    },\n    \"model\": \"x\"\n}\n";
        let after = with_hook(HookAgent::Claude, Some(before), CMD)
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&after).unwrap();
        let list = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["hooks"][0]["command"], "lint.sh");
        assert_eq!(list[1]["hooks"][0]["command"], CMD);
        assert_eq!(v["theme"], "dark");
        // Key order and the file's four-space indentation are kept.
        assert!(after.find("theme").unwrap() < after.find("model").unwrap());
        assert!(after.contains("\n    \"theme\""), "{after}");
        // Idempotent: a second enable changes nothing.
        assert_eq!(
            with_hook(HookAgent::Claude, Some(&after), CMD).unwrap(),
            None
        );
        assert!(has_hook(HookAgent::Claude, &after));
        // Removing it leaves the user's entry.
        let (removed, delete) = without_hook(HookAgent::Claude, &after).unwrap().unwrap();
        assert!(!delete);
        let v: Value = serde_json::from_str(&removed).unwrap();
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
        assert!(!has_hook(HookAgent::Claude, &removed));
        assert_eq!(without_hook(HookAgent::Claude, &removed).unwrap(), None);
    }

    #[test]
    fn each_agent_gets_its_own_shape() {
        for agent in HookAgent::ALL {
            let cmd = format!("/opt/aq hook {}", agent.name());
            let text = with_hook(agent, None, &cmd).unwrap().unwrap();
            assert!(has_hook(agent, &text), "{agent:?}: {text}");
            assert!(text.contains(&cmd), "{agent:?}");
            if !matches!(agent, HookAgent::Cline | HookAgent::OpenCode) {
                serde_json::from_str::<Value>(&text).unwrap();
            }
        }
        let cursor = with_hook(HookAgent::Cursor, None, "aq hook cursor")
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&cursor).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["hooks"]["beforeShellExecution"][0]["failClosed"], true);
    }

    #[test]
    fn what_is_not_ours_is_refused_not_overwritten() {
        assert!(with_hook(HookAgent::Claude, Some("not json"), CMD).is_err());
        assert!(with_hook(HookAgent::Claude, Some("[1]"), CMD).is_err());
        assert!(with_hook(HookAgent::Claude, Some("{\"hooks\": 3}"), CMD).is_err());
        assert!(
            with_hook(
                HookAgent::Cline,
                Some("#!/bin/sh\nmy-own-hook\n"),
                "aq hook cline"
            )
            .is_err()
        );
        assert!(is_our_command("aq hook claude", HookAgent::Claude));
        assert!(is_our_command(
            "/home/u/.cargo/bin/aq hook claude",
            HookAgent::Claude
        ));
        assert!(!is_our_command("aq hook claude --x", HookAgent::Claude));
        assert!(!is_our_command("notaq hook claude", HookAgent::Claude));
        assert!(!is_our_command("aq hook gemini", HookAgent::Claude));
    }
}

/// Codex runs a hook only when the user's `config.toml` trusts it:
/// `[hooks.state."<file>:pre_tool_use:<group>:<handler>"] trusted_hash`,
/// a SHA-256 of the entry (Codex 0.17x; a changed entry is untrusted and
/// skipped without a word). The trust entries for aq's hook in `hooks_json`
/// (the text of `path`): key and hash.
pub fn codex_trust(path: &Path, hooks_json: &str) -> Vec<(String, String)> {
    use sha2::Digest;
    let Ok(v) = serde_json::from_str::<Value>(hooks_json) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (g, group) in v["hooks"]["PreToolUse"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        for (h, handler) in group["hooks"].as_array().into_iter().flatten().enumerate() {
            let Some(command) = handler["command"].as_str() else {
                continue;
            };
            if !is_our_command(command, HookAgent::Codex) {
                continue;
            }
            let timeout = handler["timeout"].as_u64().unwrap_or(600).max(1);
            // Compact JSON, keys sorted, as Codex hashes it.
            let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
            let mut ident = format!(
                "{{\"event_name\":\"pre_tool_use\",\"hooks\":[{{\"async\":false,\"command\":{},\"timeout\":{timeout},\"type\":\"command\"}}]",
                q(command)
            );
            if let Some(m) = group["matcher"].as_str() {
                ident.push_str(&format!(",\"matcher\":{}", q(m)));
            }
            ident.push('}');
            let hash = sha2::Sha256::digest(ident.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>();
            out.push((
                format!("{}:pre_tool_use:{g}:{h}", path.display()),
                format!("sha256:{hash}"),
            ));
        }
    }
    out
}

/// `config.toml` with `trust` entries added (for the hooks file `path`);
/// `None` when nothing changes.
pub fn with_codex_trust(
    config: Option<&str>,
    path: &Path,
    trust: &[(String, String)],
) -> Result<Option<String>, InstallError> {
    let mut doc: toml_edit::DocumentMut = config
        .unwrap_or("")
        .parse()
        .map_err(|source| InstallError::NotToml { source })?;
    let before = doc.to_string();
    let hooks = doc
        .entry("hooks")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or(InstallError::NotATomlTable { key: "hooks" })?;
    let state = hooks
        .entry("state")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or(InstallError::NotATomlTable { key: "hooks.state" })?;
    let _ = path;
    for (key, hash) in trust {
        let mut t = toml_edit::Table::new();
        t.insert("trusted_hash", toml_edit::value(hash.as_str()));
        state.insert(key, toml_edit::Item::Table(t));
    }
    let after = doc.to_string();
    Ok((after != before).then_some(after))
}

/// `config.toml` without the trust entries `keys`; `None` when none was there.
pub fn without_codex_trust(config: &str, keys: &[String]) -> Result<Option<String>, InstallError> {
    let mut doc: toml_edit::DocumentMut = config
        .parse()
        .map_err(|source| InstallError::NotToml { source })?;
    let Some(state) = doc
        .get_mut("hooks")
        .and_then(|h| h.get_mut("state"))
        .and_then(toml_edit::Item::as_table_mut)
    else {
        return Ok(None);
    };
    let mut removed = false;
    for k in keys {
        removed |= state.remove(k).is_some();
    }
    Ok(removed.then(|| doc.to_string()))
}

#[cfg(test)]
mod codex_tests {
    use super::*;

    #[test]
    fn codex_trust_matches_codex_own_hash() {
        // The hash Codex 0.171 itself computed and accepted for this entry
        // (tests/fixtures/hooks/codex/answers.md gives the algorithm).
        let hooks = r#"{"hooks":{"PreToolUse":[{"matcher":"^Bash$","hooks":[{"type":"command","command":"/usr/bin/aq hook codex","timeout":30}]}]}}"#;
        let trust = codex_trust(Path::new("/h/.codex/hooks.json"), hooks);
        assert_eq!(trust.len(), 1);
        assert_eq!(trust[0].0, "/h/.codex/hooks.json:pre_tool_use:0:0");
        let ident = r#"{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"/usr/bin/aq hook codex","timeout":30,"type":"command"}],"matcher":"^Bash$"}"#;
        use sha2::Digest;
        let want: String = sha2::Sha256::digest(ident.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(trust[0].1, format!("sha256:{want}"));
    }

    #[test]
    fn trust_is_added_to_config_toml_keeping_the_rest() {
        let config =
            "# my settings\nmodel = \"gpt-x\"\n\n[projects.\"/w\"]\ntrust_level = \"trusted\"\n";
        let trust = vec![(
            "/h/.codex/hooks.json:pre_tool_use:0:0".to_string(),
            "sha256:ab".to_string(),
        )];
        let after = with_codex_trust(Some(config), Path::new("/h/.codex/hooks.json"), &trust)
            .unwrap()
            .unwrap();
        assert!(
            after.starts_with("# my settings\nmodel = \"gpt-x\"\n"),
            "{after}"
        );
        assert!(after.contains("[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:ab\""), "{after}");
        assert_eq!(
            with_codex_trust(Some(&after), Path::new("/h/.codex/hooks.json"), &trust).unwrap(),
            None
        );
        let back = without_codex_trust(&after, &[trust[0].0.clone()])
            .unwrap()
            .unwrap();
        assert!(!back.contains("trusted_hash"), "{back}");
        assert!(back.contains("model = \"gpt-x\""));
    }
}
