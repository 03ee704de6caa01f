//! Agents' native hook contracts: the event an agent sends a hook before it
//! runs a shell command, and the answer it understands.
//!
//! Each agent has its own: Claude Code's `PreToolUse` with
//! `hookSpecificOutput.permissionDecision`, Codex's deny-only `PreToolUse`,
//! Gemini CLI's `BeforeTool` with `decision`, Cursor's
//! `beforeShellExecution` with `permission`, Copilot CLI's `preToolUse`
//! with `permissionDecision`, Windsurf's `pre_run_command` (exit code 2
//! blocks), Cline's `PreToolUse` (`cancel`), and OpenCode's plugin, whose
//! contract with `aq hook opencode` is ours. Pure: bytes in, an answer out;
//! the decision is the caller's (the engine and the user's policy).
//!
//! Where an agent has no `ask`, an ask is answered as a denial whose reason
//! says how to approve; nothing ever waits. Where an agent runs the
//! command when a hook fails, an error is answered as a denial.

use std::path::PathBuf;

use serde_json::{Value, json};

/// The agents `aq hook` speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookAgent {
    /// Claude Code: `PreToolUse`, matcher `Bash`.
    Claude,
    /// Codex CLI: `PreToolUse` in `~/.codex/hooks.json`; deny only.
    Codex,
    /// Gemini CLI: `BeforeTool`, matcher `run_shell_command`.
    Gemini,
    /// Cursor: `beforeShellExecution`.
    Cursor,
    /// GitHub Copilot CLI: `preToolUse`.
    Copilot,
    /// Windsurf (Cascade): `pre_run_command`; exit code 2 blocks.
    Windsurf,
    /// Cline: a `PreToolUse` hook file; `cancel` blocks.
    Cline,
    /// OpenCode: aq's plugin calls `aq hook opencode`.
    OpenCode,
}

impl HookAgent {
    /// Every agent, in the order `aq enable --status` lists them.
    pub const ALL: [HookAgent; 8] = [
        HookAgent::Claude,
        HookAgent::Codex,
        HookAgent::Gemini,
        HookAgent::Cursor,
        HookAgent::Copilot,
        HookAgent::Windsurf,
        HookAgent::Cline,
        HookAgent::OpenCode,
    ];

    /// Its name on the command line (the preset's name where there is one).
    pub fn name(self) -> &'static str {
        match self {
            HookAgent::Claude => "claude",
            HookAgent::Codex => "codex",
            HookAgent::Gemini => "gemini",
            HookAgent::Cursor => "cursor",
            HookAgent::Copilot => "copilot",
            HookAgent::Windsurf => "windsurf",
            HookAgent::Cline => "cline",
            HookAgent::OpenCode => "opencode",
        }
    }

    /// The agent called `name`.
    pub fn parse(name: &str) -> Option<HookAgent> {
        HookAgent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether it has a native "ask the user".
    pub fn has_ask(self) -> bool {
        matches!(
            self,
            HookAgent::Claude | HookAgent::Cursor | HookAgent::Copilot
        )
    }
}

/// One tool call an agent is about to make, as its hook event says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookEvent {
    /// The tool (`Bash`, `run_shell_command`, `bash`, ...).
    pub tool: String,
    /// The shell command lines it would run; empty when the tool is not a
    /// shell (then aq has nothing to decide).
    pub commands: Vec<String>,
    /// The working directory, when the event says.
    pub cwd: Option<PathBuf>,
    /// The agent's session (conversation) id, when the event has one.
    pub session: Option<String>,
}

/// What aq decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookDecision {
    /// Nothing against it.
    Allow,
    /// A human should say.
    Ask,
    /// Refused.
    Deny,
}

/// What an aq `allow` becomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnAllow {
    /// The agent's own permission rules decide (aq only ever tightens).
    #[default]
    Defer,
    /// Approved: the agent does not ask its user either.
    Approve,
}

/// The answer for the agent: what to print, and the exit code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookAnswer {
    /// Written to stdout.
    pub stdout: String,
    /// Written to stderr.
    pub stderr: String,
    /// The exit code.
    pub exit_code: i32,
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str()
}

/// Cline's and Copilot's arguments may come as a JSON string.
fn object_or_json_string(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// Reads the agent's hook event from its stdin bytes.
pub fn parse_event(agent: HookAgent, input: &[u8]) -> Result<HookEvent, String> {
    let v: Value = serde_json::from_slice(input)
        .map_err(|e| format!("the {} hook event is not JSON: {e}", agent.name()))?;
    if !v.is_object() {
        return Err(format!(
            "the {} hook event is not a JSON object",
            agent.name()
        ));
    }
    let owned = |s: Option<&str>| s.map(str::to_string);
    let mut e = HookEvent::default();
    match agent {
        HookAgent::Claude | HookAgent::Codex => {
            e.tool = str_at(&v, &["tool_name"]).unwrap_or_default().to_string();
            e.cwd = owned(str_at(&v, &["cwd"])).map(PathBuf::from);
            e.session = owned(str_at(&v, &["session_id"]));
            let shell = matches!(
                e.tool.as_str(),
                "Bash" | "PowerShell" | "shell" | "exec_command" | "local_shell" | "shell_command"
            );
            if shell {
                let input = &v["tool_input"];
                if let Some(c) = input.get("command").or_else(|| input.get("cmd")) {
                    match c {
                        Value::String(s) => e.commands.push(s.clone()),
                        // Codex's `shell` tool: an argv.
                        Value::Array(words) => e.commands.push(shell_join(words)),
                        _ => {}
                    }
                }
            }
        }
        HookAgent::Gemini => {
            e.tool = str_at(&v, &["tool_name"]).unwrap_or_default().to_string();
            e.cwd = owned(str_at(&v, &["cwd"])).map(PathBuf::from);
            e.session = owned(str_at(&v, &["session_id"]));
            if e.tool == "run_shell_command"
                && let Some(c) = str_at(&v, &["tool_input", "command"])
            {
                e.commands.push(c.to_string());
            }
            // The command runs in `dir_path`, relative to the project.
            if let (Some(cwd), Some(dir)) = (&e.cwd, str_at(&v, &["tool_input", "dir_path"])) {
                e.cwd = Some(cwd.join(dir));
            }
        }
        HookAgent::Cursor => {
            e.tool = str_at(&v, &["hook_event_name"])
                .unwrap_or("beforeShellExecution")
                .to_string();
            e.cwd = owned(str_at(&v, &["cwd"]))
                .or_else(|| owned(str_at(&v, &["workspace_roots", "0"])))
                .map(PathBuf::from);
            e.session = owned(str_at(&v, &["conversation_id"]));
            if e.tool == "beforeShellExecution"
                && let Some(c) = str_at(&v, &["command"])
            {
                e.commands.push(c.to_string());
            }
        }
        HookAgent::Copilot => {
            // camelCase `preToolUse`; the PascalCase event is Claude's shape.
            e.tool = str_at(&v, &["toolName"])
                .or_else(|| str_at(&v, &["tool_name"]))
                .unwrap_or_default()
                .to_string();
            e.cwd = owned(str_at(&v, &["cwd"])).map(PathBuf::from);
            e.session = owned(str_at(&v, &["sessionId"]).or_else(|| str_at(&v, &["session_id"])));
            if matches!(e.tool.as_str(), "bash" | "powershell" | "Bash") {
                let args = object_or_json_string(v.get("toolArgs").or_else(|| v.get("tool_input")));
                if let Some(c) = args.get("command").and_then(Value::as_str) {
                    e.commands.push(c.to_string());
                }
            }
        }
        HookAgent::Windsurf => {
            e.tool = str_at(&v, &["agent_action_name"])
                .unwrap_or_default()
                .to_string();
            e.cwd = owned(str_at(&v, &["tool_info", "cwd"])).map(PathBuf::from);
            e.session = owned(str_at(&v, &["trajectory_id"]));
            if e.tool == "pre_run_command"
                && let Some(c) = str_at(&v, &["tool_info", "command_line"])
            {
                e.commands.push(c.to_string());
            }
        }
        HookAgent::Cline => {
            e.tool = str_at(&v, &["preToolUse", "toolName"])
                .or_else(|| str_at(&v, &["tool_call", "name"]))
                .unwrap_or_default()
                .to_string();
            e.cwd = owned(str_at(&v, &["workspaceRoots", "0"]))
                .or_else(|| {
                    v.get("workspaceRoots")
                        .and_then(|r| r.get(0))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .map(PathBuf::from);
            e.session = owned(str_at(&v, &["taskId"]));
            let input = v
                .get("tool_call")
                .and_then(|t| t.get("input"))
                .cloned()
                .unwrap_or_else(|| {
                    // The VS Code envelope: parameters, values as strings.
                    let mut m = serde_json::Map::new();
                    if let Some(p) = v["preToolUse"]["parameters"].as_object() {
                        for (k, val) in p {
                            let parsed = match val {
                                Value::String(s) if k == "commands" => {
                                    serde_json::from_str(s).unwrap_or(val.clone())
                                }
                                _ => val.clone(),
                            };
                            m.insert(k.clone(), parsed);
                        }
                    }
                    Value::Object(m)
                });
            if matches!(e.tool.as_str(), "run_commands" | "execute_command") {
                if let Some(c) = input.get("command").and_then(Value::as_str) {
                    e.commands.push(c.to_string());
                }
                for c in input
                    .get("commands")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match c {
                        Value::String(s) => e.commands.push(s.clone()),
                        Value::Object(o) => {
                            let mut line = o
                                .get("command")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string();
                            for a in o
                                .get("args")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                            {
                                if let Some(a) = a.as_str() {
                                    line.push(' ');
                                    line.push_str(&shell_quote(a));
                                }
                            }
                            e.commands.push(line);
                        }
                        _ => {}
                    }
                }
            }
        }
        HookAgent::OpenCode => {
            e.tool = str_at(&v, &["tool"]).unwrap_or_default().to_string();
            e.cwd = owned(str_at(&v, &["cwd"])).map(PathBuf::from);
            e.session = owned(str_at(&v, &["session"]));
            if e.tool == "bash"
                && let Some(c) = str_at(&v, &["args", "command"])
            {
                e.commands.push(c.to_string());
            }
        }
    }
    Ok(e)
}

fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn shell_join(words: &[Value]) -> String {
    words
        .iter()
        .filter_map(Value::as_str)
        .map(shell_quote)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The answer to give for `decision` with `reason` (what the model reads:
/// rule, why, safer). `None` (not a shell tool) defers to the agent.
pub fn answer(
    agent: HookAgent,
    decision: Option<HookDecision>,
    reason: &str,
    on_allow: OnAllow,
) -> HookAnswer {
    let ask_as_deny = || {
        format!(
            "{reason}\naq asks a human before this runs, and {} has no way to ask from a hook: run it yourself, or approve it in aq's policy (`aq explain` shows the rule).",
            agent.name()
        )
    };
    let json = |v: Value| HookAnswer {
        stdout: format!("{v}\n"),
        stderr: String::new(),
        exit_code: 0,
    };
    let nothing = HookAnswer::default();
    let decision = match (decision, on_allow) {
        (None, _) | (Some(HookDecision::Allow), OnAllow::Defer) => None,
        (Some(d), _) => Some(d),
    };
    match agent {
        HookAgent::Claude => match decision {
            None => nothing,
            Some(d) => json(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": match d {
                        HookDecision::Allow => "allow",
                        HookDecision::Ask => "ask",
                        HookDecision::Deny => "deny",
                    },
                    "permissionDecisionReason": reason,
                }
            })),
        },
        HookAgent::Codex => match decision {
            // Deny only: any other answer makes Codex treat the hook as failed.
            None | Some(HookDecision::Allow) => nothing,
            Some(HookDecision::Ask) => codex_deny(&ask_as_deny()),
            Some(HookDecision::Deny) => codex_deny(reason),
        },
        HookAgent::Gemini => match decision {
            None => nothing,
            Some(HookDecision::Allow) => json(json!({"decision": "allow"})),
            Some(HookDecision::Ask) => json(json!({"decision": "deny", "reason": ask_as_deny()})),
            Some(HookDecision::Deny) => json(json!({"decision": "deny", "reason": reason})),
        },
        HookAgent::Cursor => match decision {
            None => nothing,
            Some(d) => json(json!({
                "permission": match d {
                    HookDecision::Allow => "allow",
                    HookDecision::Ask => "ask",
                    HookDecision::Deny => "deny",
                },
                "user_message": reason,
                "agent_message": reason,
            })),
        },
        HookAgent::Copilot => match decision {
            None => nothing,
            Some(d) => json(json!({
                "permissionDecision": match d {
                    HookDecision::Allow => "allow",
                    HookDecision::Ask => "ask",
                    HookDecision::Deny => "deny",
                },
                "permissionDecisionReason": reason,
            })),
        },
        HookAgent::Windsurf => match decision {
            None | Some(HookDecision::Allow) => nothing,
            Some(HookDecision::Ask) => HookAnswer {
                stdout: String::new(),
                stderr: format!("{}\n", ask_as_deny()),
                exit_code: 2,
            },
            Some(HookDecision::Deny) => HookAnswer {
                stdout: String::new(),
                stderr: format!("{reason}\n"),
                exit_code: 2,
            },
        },
        HookAgent::Cline => match decision {
            None | Some(HookDecision::Allow) => json(json!({})),
            Some(HookDecision::Ask) => json(json!({"cancel": true, "errorMessage": ask_as_deny()})),
            Some(HookDecision::Deny) => json(json!({"cancel": true, "errorMessage": reason})),
        },
        HookAgent::OpenCode => match decision {
            None | Some(HookDecision::Allow) => json(json!({"decision": "allow"})),
            Some(HookDecision::Ask) => json(json!({"decision": "deny", "reason": ask_as_deny()})),
            Some(HookDecision::Deny) => json(json!({"decision": "deny", "reason": reason})),
        },
    }
}

fn codex_deny(reason: &str) -> HookAnswer {
    HookAnswer {
        stdout: format!(
            "{}\n",
            json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            })
        ),
        stderr: String::new(),
        exit_code: 0,
    }
}

/// When aq itself fails (an unreadable event, no policy): refuse, in the
/// agent's terms, rather than let the command run unjudged.
pub fn answer_error(agent: HookAgent, message: &str) -> HookAnswer {
    let reason = format!("aq could not judge this command ({message}); it was refused");
    let mut a = answer(agent, Some(HookDecision::Deny), &reason, OnAllow::Defer);
    // Exit 2 blocks in every contract that reads exit codes; stderr says why.
    a.stderr = format!("{reason}\n");
    // Claude Code and Gemini CLI obey the JSON whatever the exit code (and
    // Gemini lets a bare exit 2 through): the denial is on stdout, exit 0.
    // Windsurf reads only the exit code.
    if agent == HookAgent::Windsurf {
        a.exit_code = 2;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(path: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/fixtures/hooks/{path}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn documented_payloads_give_the_command() {
        let cases: &[(HookAgent, &str, &[&str])] = &[
            (
                HookAgent::Cursor,
                "cursor/example-payload.json",
                &["npm install"],
            ),
            (
                HookAgent::Copilot,
                "copilot/example-payload.json",
                &["rm -rf dist"],
            ),
            (
                HookAgent::Windsurf,
                "windsurf/example-payload.json",
                &["npm install package-name"],
            ),
            (
                HookAgent::Cline,
                "cline/example-payload.json",
                &["git status"],
            ),
            (
                HookAgent::Gemini,
                "gemini/beforetool-shell.json",
                &["ls -la && echo two > two.txt"],
            ),
        ];
        // Claude Code and Codex, from the installed versions.
        for (agent, file) in [
            (HookAgent::Claude, "claude/pretooluse-bash.json"),
            (HookAgent::Claude, "claude/pretooluse-bash-2.json"),
            (HookAgent::Codex, "codex/pretooluse-bash.json"),
            (HookAgent::Codex, "codex/pretooluse-bash-2.json"),
        ] {
            let e = parse_event(agent, &fixture(file)).unwrap();
            assert_eq!(e.commands.len(), 1, "{file}");
            assert!(e.cwd.is_some() && e.session.is_some(), "{file}");
        }
        for (agent, file, want) in cases {
            let e = parse_event(*agent, &fixture(file)).unwrap();
            assert_eq!(e.commands, *want, "{file}");
        }
        // Gemini CLI's command runs in its `dir_path`.
        let e = parse_event(
            HookAgent::Gemini,
            &fixture("gemini/beforetool-shell-2.json"),
        )
        .unwrap();
        assert!(e.cwd.unwrap().ends_with("sub"));
        // OpenCode: our own plugin's shape.
        let e = parse_event(
            HookAgent::OpenCode,
            br#"{"tool":"bash","args":{"command":"git status"},"cwd":"/p","session":"s"}"#,
        )
        .unwrap();
        assert_eq!(e.commands, ["git status"]);
    }

    #[test]
    fn other_tools_have_nothing_to_decide() {
        let e = parse_event(
            HookAgent::Claude,
            br#"{"tool_name":"Read","tool_input":{"file_path":"/x"},"cwd":"/p"}"#,
        )
        .unwrap();
        assert!(e.commands.is_empty());
        assert_eq!(
            answer(HookAgent::Claude, None, "", OnAllow::Defer),
            HookAnswer::default()
        );
    }

    #[test]
    fn garbage_is_an_error_and_an_error_refuses() {
        for agent in HookAgent::ALL {
            assert!(parse_event(agent, b"not json").is_err());
            assert!(parse_event(agent, b"[1]").is_err());
            let a = answer_error(agent, "bad input");
            let refused = a.exit_code == 2
                || a.stdout.contains("deny")
                || a.stdout.contains("\"cancel\":true");
            assert!(refused, "{agent:?}: {a:?}");
        }
    }

    #[test]
    fn decisions_map_to_each_contract() {
        let deny = |agent| {
            answer(
                agent,
                Some(HookDecision::Deny),
                "rule x: why",
                OnAllow::Defer,
            )
        };
        let v = |a: &HookAnswer| serde_json::from_str::<Value>(&a.stdout).unwrap();
        assert_eq!(
            v(&deny(HookAgent::Claude))["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        assert_eq!(v(&deny(HookAgent::Gemini))["decision"], "deny");
        assert_eq!(v(&deny(HookAgent::Cursor))["permission"], "deny");
        assert_eq!(v(&deny(HookAgent::Copilot))["permissionDecision"], "deny");
        assert_eq!(v(&deny(HookAgent::Cline))["cancel"], true);
        assert_eq!(deny(HookAgent::Windsurf).exit_code, 2);
        // Allow defers by default: no opinion; approves when asked to.
        for agent in HookAgent::ALL {
            let a = answer(agent, Some(HookDecision::Allow), "", OnAllow::Defer);
            assert!(!a.stdout.contains("deny") && a.exit_code == 0, "{agent:?}");
        }
        let approve = answer(
            HookAgent::Claude,
            Some(HookDecision::Allow),
            "ok",
            OnAllow::Approve,
        );
        assert_eq!(
            v(&approve)["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
        // Codex: deny only, even for an approve.
        let codex = answer(
            HookAgent::Codex,
            Some(HookDecision::Allow),
            "ok",
            OnAllow::Approve,
        );
        assert_eq!(codex, HookAnswer::default());
        // An ask: native where the agent has one, else a denial that says so.
        let ask = answer(
            HookAgent::Claude,
            Some(HookDecision::Ask),
            "r",
            OnAllow::Defer,
        );
        assert_eq!(v(&ask)["hookSpecificOutput"]["permissionDecision"], "ask");
        let ask = answer(
            HookAgent::Gemini,
            Some(HookDecision::Ask),
            "r",
            OnAllow::Defer,
        );
        assert_eq!(v(&ask)["decision"], "deny");
        assert!(v(&ask)["reason"].as_str().unwrap().contains("asks a human"));
    }
}
