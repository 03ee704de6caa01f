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
//! Where an agent has no `ask`, or has one but nobody to answer it (a
//! headless run: [`RunMode`]), an ask is answered as a denial whose reason
//! says why and how to approve; nothing ever waits. Where an agent runs the
//! command when a hook fails, an error is answered as a denial.
//!
//! Gemini CLI needs the run mode: its `"decision": "ask"` forces its own
//! confirmation even under `--yolo`, but in a headless run (`gemini -p`)
//! nobody can confirm, the call is cancelled and the run ends at once with
//! exit code 0 and no output: the model never reads why. So aq answers
//! Gemini's ask only when [`classify_run`] finds its interactive terminal
//! UI, and a denial otherwise.

use std::path::PathBuf;

use serde_json::{Value, json};

pub use crate::error::HookEventError;

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

    /// Whether an ask is answered with its native "ask the user" in a run
    /// of `mode`. Claude Code turns an ask it cannot ask (`claude -p`) into
    /// a denial that carries aq's reason, so its ask is safe headless;
    /// Gemini CLI ends a headless run silently on one, and Cursor's and
    /// Copilot CLI's headless handling is not verified: only interactive.
    pub fn native_ask(self, mode: RunMode) -> bool {
        match self {
            HookAgent::Claude => true,
            HookAgent::Gemini | HookAgent::Cursor | HookAgent::Copilot => {
                mode == RunMode::Interactive
            }
            HookAgent::Codex | HookAgent::Windsurf | HookAgent::Cline | HookAgent::OpenCode => {
                false
            }
        }
    }
}

/// Whether the agent's run has a person at it to answer an ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// A person answers the agent's own prompt (its terminal UI, its IDE).
    Interactive,
    /// Nobody to ask: a one-shot prompt (`-p`), no terminal, CI; or the
    /// agent's process was not found where that decides.
    Headless,
}

/// What `aq hook` could read of the agent's process (the ancestor that
/// runs the agent's program), to tell its [`RunMode`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentProcess {
    /// The agent's own arguments (after its program or script).
    pub args: Vec<String>,
    /// The variables of [`MODE_ENV`] it has, with their values.
    pub env: Vec<(String, String)>,
    /// Whether its standard input is a terminal.
    pub stdin_tty: bool,
    /// Whether its standard output is a terminal.
    pub stdout_tty: bool,
}

/// The environment variables that change an agent's run mode: Gemini CLI's
/// `isHeadlessMode` reads `CI` and `GITHUB_ACTIONS` (not when
/// `GEMINI_CLI_INTEGRATION_TEST` is `true`).
pub const MODE_ENV: &[&str] = &["CI", "GITHUB_ACTIONS", "GEMINI_CLI_INTEGRATION_TEST"];

/// The run mode of `agent`'s run, from its process (`None`: not found).
///
/// Gemini CLI 0.61 (`loadCliConfig` in `bundle/gemini-*.js`, `isHeadlessMode`
/// in `bundle/chunk-*.js`): interactive with `-i`/`--prompt-interactive`,
/// else unless one of: `CI=true` or `GITHUB_ACTIONS=true`, stdin or stdout
/// not a terminal, `-p`/`--prompt`, a positional prompt. Its ACP mode
/// (`--acp`, an IDE's client) runs tools its own way and is counted
/// headless here, and so is a Gemini CLI process aq cannot find: a denial
/// is the answer that cannot be lost. Cursor's `cursor-agent` and Copilot
/// CLI are headless with `-p`/`--print` (Cursor) or `-p`/`--prompt`
/// (Copilot); found in no terminal of theirs (an IDE), they are counted
/// interactive, as before. Claude Code: `-p`/`--print`.
pub fn classify_run(agent: HookAgent, process: Option<&AgentProcess>) -> RunMode {
    let has = |p: &AgentProcess, flags: &[&str]| {
        p.args.iter().take_while(|a| *a != "--").any(|a| {
            let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
            flags.contains(&name)
        })
    };
    match (agent, process) {
        (HookAgent::Gemini, Some(p)) => classify_gemini(p),
        (HookAgent::Gemini, None) => RunMode::Headless,
        (HookAgent::Claude, Some(p)) if has(p, &["-p", "--print"]) => RunMode::Headless,
        (HookAgent::Cursor, Some(p)) if has(p, &["-p", "--print"]) => RunMode::Headless,
        (HookAgent::Copilot, Some(p)) if has(p, &["-p", "--prompt"]) => RunMode::Headless,
        (HookAgent::Claude | HookAgent::Cursor | HookAgent::Copilot, _) => RunMode::Interactive,
        _ => RunMode::Headless,
    }
}

/// Gemini CLI 0.61's own rule, from its arguments as yargs reads them
/// (`parseArguments`): a string option takes the next word, an array
/// option every word up to the next option; any other word is a prompt.
fn classify_gemini(p: &AgentProcess) -> RunMode {
    const STRING: &[&str] = &[
        "-m",
        "--model",
        "-p",
        "--prompt",
        "-i",
        "--prompt-interactive",
        "-w",
        "--worktree",
        "--approval-mode",
        "-r",
        "--resume",
        "--session-file",
        "--session-id",
        "--delete-session",
        "-o",
        "--output-format",
        "--fake-responses",
        "--fake-responses-non-strict",
        "--record-responses",
    ];
    const ARRAY: &[&str] = &[
        "--policy",
        "--admin-policy",
        "--allowed-mcp-server-names",
        "--allowed-tools",
        "-e",
        "--extensions",
        "--include-directories",
    ];
    let env = |k: &str| {
        p.env
            .iter()
            .find(|(n, _)| n == k)
            .is_some_and(|(_, v)| v == "true")
    };
    let (mut prompt, mut query, mut ask_ui, mut acp) = (false, false, false, false);
    let mut words = p.args.iter().peekable();
    while let Some(word) = words.next() {
        if word == "--" {
            query |= words.peek().is_some();
            break;
        }
        if !word.starts_with('-') || word == "-" {
            query = true;
            continue;
        }
        let (name, inline) = match word.split_once('=') {
            Some((n, _)) => (n, true),
            None => (word.as_str(), false),
        };
        match name {
            "-p" | "--prompt" => prompt = true,
            "-i" | "--prompt-interactive" => ask_ui = true,
            "--acp" | "--experimental-acp" => acp = true,
            _ => {}
        }
        if inline {
            continue;
        }
        if STRING.contains(&name) {
            words.next();
        } else if ARRAY.contains(&name) {
            while words.next_if(|w| !w.starts_with('-')).is_some() {}
        }
    }
    let ci = !env("GEMINI_CLI_INTEGRATION_TEST") && (env("CI") || env("GITHUB_ACTIONS"));
    let headless = ci || !p.stdin_tty || !p.stdout_tty || prompt || query;
    if acp || (headless && !ask_ui) {
        RunMode::Headless
    } else {
        RunMode::Interactive
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
pub fn parse_event(agent: HookAgent, input: &[u8]) -> Result<HookEvent, HookEventError> {
    let v: Value = serde_json::from_slice(input).map_err(|source| HookEventError::NotJson {
        agent: agent.name(),
        source,
    })?;
    if !v.is_object() {
        return Err(HookEventError::NotAnObject {
            agent: agent.name(),
        });
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
/// rule, why, safer) in a run of `mode`. `None` (not a shell tool) defers
/// to the agent.
pub fn answer(
    agent: HookAgent,
    decision: Option<HookDecision>,
    reason: &str,
    on_allow: OnAllow,
    mode: RunMode,
) -> HookAnswer {
    let ask_as_deny = || {
        let why = match agent {
            HookAgent::Gemini | HookAgent::Cursor | HookAgent::Copilot => format!(
                "this {} run is headless (a one-shot prompt, no terminal, or CI), so nobody could answer its ask",
                agent.name()
            ),
            _ => format!("{} has no way to ask from a hook", agent.name()),
        };
        format!(
            "{reason}\naq asks a human before this runs, and {why}: it was refused. Run it yourself, or approve it in aq's policy (`aq explain` shows the rule)."
        )
    };
    let native_ask = agent.native_ask(mode);
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
            // Gemini shows `systemMessage` with its confirmation; `reason`
            // is for the model (read on a deny only).
            Some(HookDecision::Ask) if native_ask => json(json!({
                "decision": "ask",
                "reason": reason,
                "systemMessage": reason,
            })),
            Some(HookDecision::Ask) => json(json!({"decision": "deny", "reason": ask_as_deny()})),
            Some(HookDecision::Deny) => json(json!({"decision": "deny", "reason": reason})),
        },
        HookAgent::Cursor => match decision {
            None => nothing,
            Some(HookDecision::Ask) if !native_ask => {
                let r = ask_as_deny();
                json(json!({"permission": "deny", "user_message": r, "agent_message": r}))
            }
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
            Some(HookDecision::Ask) if !native_ask => json(json!({
                "permissionDecision": "deny",
                "permissionDecisionReason": ask_as_deny(),
            })),
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
    let mut a = answer(
        agent,
        Some(HookDecision::Deny),
        &reason,
        OnAllow::Defer,
        RunMode::Headless,
    );
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
            answer(
                HookAgent::Claude,
                None,
                "",
                OnAllow::Defer,
                RunMode::Interactive
            ),
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
                RunMode::Interactive,
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
            let a = answer(
                agent,
                Some(HookDecision::Allow),
                "",
                OnAllow::Defer,
                RunMode::Interactive,
            );
            assert!(!a.stdout.contains("deny") && a.exit_code == 0, "{agent:?}");
        }
        let approve = answer(
            HookAgent::Claude,
            Some(HookDecision::Allow),
            "ok",
            OnAllow::Approve,
            RunMode::Interactive,
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
            RunMode::Interactive,
        );
        assert_eq!(codex, HookAnswer::default());
        // An ask: native where the agent has one and someone can answer it,
        // else a denial that says why.
        for mode in [RunMode::Interactive, RunMode::Headless] {
            let ask = answer(
                HookAgent::Claude,
                Some(HookDecision::Ask),
                "r",
                OnAllow::Defer,
                mode,
            );
            assert_eq!(v(&ask)["hookSpecificOutput"]["permissionDecision"], "ask");
        }
    }

    /// Gemini CLI 0.61 has a native ask (`isAskDecision`, the
    /// scheduler's `forcedDecision: "ask_user"`), even under `--yolo`; a
    /// headless run cannot answer it and ends silently, so there it is a
    /// denial with aq's reason.
    #[test]
    fn an_ask_is_native_where_someone_can_answer_it() {
        let v = |a: &HookAnswer| serde_json::from_str::<Value>(&a.stdout).unwrap();
        let ask = |agent, mode| {
            let a = answer(
                agent,
                Some(HookDecision::Ask),
                "aq: needs approval: rm -rf build",
                OnAllow::Defer,
                mode,
            );
            // Windsurf reads only its exit code.
            let want = if agent == HookAgent::Windsurf { 2 } else { 0 };
            assert_eq!(a.exit_code, want, "{agent:?} {mode:?}");
            a
        };
        let g = v(&ask(HookAgent::Gemini, RunMode::Interactive));
        assert_eq!(g["decision"], "ask");
        assert_eq!(g["systemMessage"], "aq: needs approval: rm -rf build");
        let g = v(&ask(HookAgent::Gemini, RunMode::Headless));
        assert_eq!(g["decision"], "deny");
        let why = g["reason"].as_str().unwrap();
        assert!(
            why.starts_with("aq: needs approval: rm -rf build\n"),
            "{why}"
        );
        assert!(why.contains("this gemini run is headless"), "{why}");
        assert_eq!(
            v(&ask(HookAgent::Cursor, RunMode::Interactive))["permission"],
            "ask"
        );
        let c = v(&ask(HookAgent::Cursor, RunMode::Headless));
        assert_eq!(c["permission"], "deny");
        assert!(c["agent_message"].as_str().unwrap().contains("headless"));
        assert_eq!(
            v(&ask(HookAgent::Copilot, RunMode::Interactive))["permissionDecision"],
            "ask"
        );
        assert_eq!(
            v(&ask(HookAgent::Copilot, RunMode::Headless))["permissionDecision"],
            "deny"
        );
        // No native ask at all: a denial in every mode, saying so.
        for mode in [RunMode::Interactive, RunMode::Headless] {
            let c = ask(HookAgent::Codex, mode);
            assert_eq!(v(&c)["hookSpecificOutput"]["permissionDecision"], "deny");
            assert!(c.stdout.contains("codex has no way to ask from a hook"));
            assert_eq!(v(&ask(HookAgent::Cline, mode))["cancel"], true);
            assert_eq!(v(&ask(HookAgent::OpenCode, mode))["decision"], "deny");
            let w = ask(HookAgent::Windsurf, mode);
            assert!(w.stdout.is_empty() && w.stderr.contains("asks a human"));
        }
    }

    #[test]
    fn a_gemini_payload_for_an_ask_class_command_is_answered_by_the_run() {
        let e = parse_event(HookAgent::Gemini, &fixture("gemini/beforetool-ask.json")).unwrap();
        assert_eq!(e.commands, ["printenv; touch asked.marker"]);
        assert_eq!(
            e.session.as_deref(),
            Some("22222222-3333-4444-8555-666666666666")
        );
        let v = |mode| {
            let a = answer(
                HookAgent::Gemini,
                Some(HookDecision::Ask),
                "aq: needs approval: printenv",
                OnAllow::Defer,
                mode,
            );
            serde_json::from_str::<Value>(&a.stdout).unwrap()
        };
        // `gemini --yolo` in a terminal: Gemini's own confirmation.
        let tui = AgentProcess {
            args: vec!["--yolo".into()],
            stdin_tty: true,
            stdout_tty: true,
            ..AgentProcess::default()
        };
        assert_eq!(
            v(classify_run(HookAgent::Gemini, Some(&tui)))["decision"],
            "ask"
        );
        // `gemini -p "do the task" --yolo`: a denial with aq's reason.
        let headless = AgentProcess {
            args: vec!["-p".into(), "do the task".into(), "--yolo".into()],
            ..tui
        };
        assert_eq!(
            v(classify_run(HookAgent::Gemini, Some(&headless)))["decision"],
            "deny"
        );
    }

    fn gemini(args: &str, tty: bool, env: &[(&str, &str)]) -> RunMode {
        classify_run(
            HookAgent::Gemini,
            Some(&AgentProcess {
                args: args.split_whitespace().map(String::from).collect(),
                env: env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                stdin_tty: tty,
                stdout_tty: tty,
            }),
        )
    }

    #[test]
    fn gemini_runs_are_told_apart_as_gemini_tells_them() {
        use RunMode::{Headless, Interactive};
        let cases: &[(&str, bool, RunMode)] = &[
            ("", true, Interactive),
            ("--yolo", true, Interactive),
            ("-m gemini-2.5-pro --yolo", true, Interactive),
            ("--model=gemini-2.5-pro", true, Interactive),
            (
                "--allowed-tools run_shell_command ls --yolo",
                true,
                Interactive,
            ),
            ("-r latest", true, Interactive),
            ("-i 'fix the tests'", true, Interactive),
            ("-i fix", false, Interactive),
            ("", false, Headless),
            ("-p 'do the task' --yolo", true, Headless),
            ("--yolo -p x", true, Headless),
            ("--prompt=x", true, Headless),
            ("-p", true, Headless),
            ("'do the task'", true, Headless),
            ("--yolo fix", true, Headless),
            ("-- fix", true, Headless),
            ("--experimental-acp", true, Headless),
            ("--acp", false, Headless),
            // An option aq does not know as taking a value: its value reads
            // as a prompt, so headless (the answer that cannot be lost).
            ("--unknown-option value", true, Headless),
        ];
        for (args, tty, want) in cases {
            assert_eq!(gemini(args, *tty, &[]), *want, "gemini {args} (tty {tty})");
        }
        assert_eq!(gemini("", true, &[("CI", "true")]), Headless);
        assert_eq!(gemini("", true, &[("GITHUB_ACTIONS", "true")]), Headless);
        assert_eq!(gemini("", true, &[("CI", "1")]), Interactive);
        assert_eq!(
            gemini(
                "",
                true,
                &[("CI", "true"), ("GEMINI_CLI_INTEGRATION_TEST", "true")]
            ),
            Interactive
        );
        // Not found: headless.
        assert_eq!(classify_run(HookAgent::Gemini, None), Headless);
    }

    #[test]
    fn other_agents_runs_are_headless_with_their_one_shot_flag() {
        use RunMode::{Headless, Interactive};
        let p = |args: &[&str]| AgentProcess {
            args: args.iter().map(|a| a.to_string()).collect(),
            ..AgentProcess::default()
        };
        let cases: &[(HookAgent, &[&str], RunMode)] = &[
            (HookAgent::Claude, &["-p", "x"], Headless),
            (HookAgent::Claude, &[], Interactive),
            (HookAgent::Cursor, &["--print", "x"], Headless),
            (HookAgent::Cursor, &["--force"], Interactive),
            (
                HookAgent::Copilot,
                &["-p", "x", "--allow-all-tools"],
                Headless,
            ),
            (HookAgent::Copilot, &["--prompt=x"], Headless),
            (HookAgent::Copilot, &[], Interactive),
        ];
        for (agent, args, want) in cases {
            assert_eq!(
                classify_run(*agent, Some(&p(args))),
                *want,
                "{agent:?} {args:?}"
            );
        }
        // Cursor's IDE and Copilot, not found as a CLI: as before, their ask.
        assert_eq!(classify_run(HookAgent::Cursor, None), Interactive);
        assert_eq!(classify_run(HookAgent::Copilot, None), Interactive);
    }
}
