//! aq's own command line, run by the agent it guards: the verbs that
//! loosen aq (`aq allow`, `aq policy trust`), answer its asks (`aq approve`,
//! `aq watch`) or change where it sits in the agents (`aq disable`, `aq
//! enable`, `aq mcp unwrap`) are the agent switching its guard off; the
//! others read (`aq explain`, `aq check`, `aq audit verify`, `aq report`).
//! `aq run -- CMD` runs CMD, which `aq-shell` unwraps and the rules judge.
//!
//! Also the other ways of switching the guard off: writing an agent's hook
//! settings (judged for the places in `files.rs`, by [`agent_file_rule`]),
//! killing or stopping the processes that supervise the shell (the parent,
//! init, aq, the agents), and setting or unsetting aq's own variables.

use std::sync::OnceLock;

use super::{Ctx, operands};
use crate::catalog::RuleId;
use crate::places::PlaceKind;

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    check_kill(ctx, i);
    check_stop_service(ctx, i);
    check_agent_bypass(ctx, i);
    check_replace_binary(ctx, i);
    check_env(ctx, i);
    let c = &ctx.commands()[i];
    if c.program() != Some("aq") {
        return;
    }
    let ops: Vec<&str> = operands(c).iter().map(|w| w.text.as_str()).collect();
    let (rule, what) = match ops.as_slice() {
        ["allow", ..] => (RuleId::GuardAqFiles, "grants what the policy refuses"),
        ["approve", ..] => (RuleId::GuardAqFiles, "answers aq's asks"),
        ["watch", ..] if !c.args().iter().any(|a| a.text == "--json") => {
            (RuleId::GuardAqFiles, "answers aq's asks from its console")
        }
        ["policy", "init" | "trust", ..] => (RuleId::GuardAqFiles, "writes or trusts a policy"),
        // A session of its own under a policy file it chose, which may
        // loosen what the user's allows.
        ["run", ..]
            if c.args()
                .iter()
                .take_while(|a| a.text != "--")
                .any(|a| a.text == "--policy" || a.text.starts_with("--policy=")) =>
        {
            (
                RuleId::GuardAqFiles,
                "starts a session under a policy file of the agent's choosing",
            )
        }
        ["enable" | "disable", ..] => (
            RuleId::GuardAgentHooks,
            "changes where aq is installed in the agents",
        ),
        ["mcp", "wrap" | "unwrap", ..] => (
            RuleId::GuardAgentHooks,
            "changes how the agents start their MCP servers",
        ),
        ["audit", "export", ..] | ["__connect", ..] => (RuleId::NetFetch, "sends to another host"),
        [] => return,
        [verb, ..] if KNOWN_VERBS.contains(verb) || verb.starts_with('-') => return,
        // A verb this aq does not have (`aq pause`, `aq off`): a newer or
        // another aq's, and nothing here can say it only reads.
        [verb, ..] => {
            ctx.hit(
                RuleId::GuardAqFiles,
                i,
                format!(
                    "`aq {verb}` is no verb of this aq's, so nothing says it leaves the guard on"
                ),
            );
            return;
        }
    };
    ctx.hit(rule, i, format!("`{}` {what}", c.display()));
}

/// aq's verbs that leave the guard as it is (the rest are judged above).
const KNOWN_VERBS: &[&str] = &[
    "explain",
    "check",
    "policy",
    "run",
    "watch",
    "deny",
    "grants",
    "checkpoints",
    "diff",
    "undo",
    "completions",
    "man",
    "lint",
    "report",
    "audit",
    "doctor",
    "verify",
    "preflight",
    "hook",
    "mcp",
    "help",
    "version",
];

// ---- the agents' settings ---------------------------------------------------

/// The rule for a write into an agent's file of `kind` at `t`: aq's hook
/// settings are a guard (any write takes the hook away or switches it off),
/// but a settings file that holds other settings beside the hooks
/// (`.claude/settings.json`: permissions, model) may be edited in place
/// without touching them; and any agent configuration whose edit names its
/// hooks or its sandbox ([`aq_knowledge::tool_config::HOOK_WORDS`]) is the
/// guard's.
pub(crate) fn agent_file_rule(ctx: &Ctx, i: usize, t: &str, kind: PlaceKind) -> RuleId {
    match kind {
        PlaceKind::AgentHook => {
            if is_hook_file(t)
                || touches_hooks(ctx)
                || !edits_itself(ctx, i, t)
                || unreadable_edit(&ctx.commands()[i])
            {
                RuleId::GuardAgentHooks
            } else {
                RuleId::GuardAgentSettings
            }
        }
        PlaceKind::AgentConfig if touches_hooks(ctx) => RuleId::GuardAgentHooks,
        _ => super::files::place_rule(kind),
    }
}

/// Whether command `c` edits a file in place by a script whose effect on
/// a settings file cannot be read from the line: `perl -pi`, `ruby -i`,
/// `awk -i inplace`, and a `sed -i` script with a command that is not a
/// substitution of a named key (`s/a/b/` changes the first `a` of every
/// line, hooks included; `s/deny/allow/`, `5d`, `/x/d`). A substitution
/// whose pattern names the key it changes (`s/"theme": "dark"/…/`,
/// `s/^model = .*/…/`) is read by its words.
fn unreadable_edit(c: &aq_shell::Command) -> bool {
    match c.program() {
        Some("perl" | "ruby") => c
            .args()
            .iter()
            .any(|a| a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('i')),
        Some("awk" | "gawk") => c.args().iter().any(|a| a.text.contains("inplace")),
        Some("sed" | "gsed") => {
            let args = c.args();
            let in_place = args
                .iter()
                .any(|a| a.text.starts_with("-i") || a.text.starts_with("--in-place"));
            if !in_place {
                return false;
            }
            let mut scripts: Vec<&str> = Vec::new();
            for (k, a) in args.iter().enumerate() {
                if matches!(a.text.as_str(), "-e" | "--expression") {
                    scripts.extend(args.get(k + 1).map(|w| w.text.as_str()));
                } else if let Some(v) = a.text.strip_prefix("--expression=") {
                    scripts.push(v);
                } else if matches!(a.text.as_str(), "-f" | "--file") {
                    // A script in a file: nothing on the line to read.
                    return true;
                }
            }
            if scripts.is_empty() {
                scripts.extend(operands(c).first().map(|w| w.text.as_str()));
            }
            scripts.is_empty()
                || scripts
                    .iter()
                    .flat_map(|s| s.split(['\n', ';']))
                    .map(str::trim)
                    .filter(|cmd| !cmd.is_empty())
                    .any(|cmd| !keyed_substitution(cmd))
        }
        _ => false,
    }
}

/// `s/PATTERN/REPLACEMENT/FLAGS` whose pattern names a settings key: a
/// JSON key (`"theme":`), or a TOML or YAML key at the start of the line
/// (`^model =`, `theme:`).
fn keyed_substitution(cmd: &str) -> bool {
    let Some(rest) = cmd.strip_prefix('s') else {
        return false;
    };
    let Some(delim) = rest.chars().next().filter(|d| !d.is_alphanumeric()) else {
        return false;
    };
    let body = &rest[delim.len_utf8()..];
    let mut pattern = String::new();
    let mut escaped = false;
    for ch in body.chars() {
        if escaped {
            pattern.push(ch);
            escaped = false;
        } else if ch == '\\' {
            pattern.push(ch);
            escaped = true;
        } else if ch == delim {
            break;
        } else {
            pattern.push(ch);
        }
    }
    let is_key = |ch: char| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '.');
    // `"key"` then spaces or regex spacing, then `:`.
    let json = pattern.match_indices('"').any(|(k, _)| {
        let after = &pattern[k + 1..];
        let name_len = after.chars().take_while(|ch| is_key(*ch)).count();
        name_len > 0
            && after[name_len..].starts_with('"')
            && after[name_len + 1..]
                .trim_start_matches([' ', '*', '\\', 's'])
                .starts_with(':')
    });
    let line = pattern.trim_start_matches('^').trim_start();
    let name_len = line.chars().take_while(|ch| is_key(*ch)).count();
    let toml = name_len > 0
        && line[name_len..]
            .trim_start_matches([' ', '*'])
            .starts_with(['=', ':']);
    json || toml
}

/// Whether the line shows what command `i` writes to `t`: literal text
/// (`echo 'model: sonnet' >> f`, a here-document), an in-place edit whose
/// effect can be read (`sed -i 's/^model: .*/…/'`, not `s/a/b/`), or a
/// copy of a file the line itself wrote (`jq F f > tmp && mv tmp f`). A
/// download or a copy of a file from elsewhere cannot be read.
pub(crate) fn readable_write(ctx: &Ctx, i: usize, t: &str) -> bool {
    let c = &ctx.commands()[i];
    let literal = |c: &aq_shell::Command| {
        super::written::produced_text(ctx, c).is_some()
            || matches!(c.program(), Some("jq" | "yq" | "gojq" | "jaq"))
    };
    match c.program() {
        Some("sed" | "gsed" | "perl" | "ruby" | "yq") if edits_itself(ctx, i, t) => {
            !unreadable_edit(c)
        }
        Some("cp" | "mv" | "install") => {
            let ops = operands(c);
            let Some(src) = ops.first().filter(|_| ops.len() == 2) else {
                return false;
            };
            let src = src.text.trim_start_matches("./");
            ctx.commands().iter().enumerate().any(|(j, other)| {
                j != i
                    && literal(other)
                    && super::files::written_paths(other, ctx.model(j))
                        .iter()
                        .any(|w| w.trim_start_matches("./") == src)
            })
        }
        Some("tee") => ctx.upstream(i).iter().all(|&u| literal(&ctx.commands()[u])),
        _ => literal(c),
    }
}

/// A file that holds nothing but hooks: its name or directory says so
/// (`.cursor/hooks.json`, `.github/hooks/aq.json`, Cline's `Hooks/PreToolUse`),
/// or it is aq's own plugin (`plugins/aq.js`).
fn is_hook_file(t: &str) -> bool {
    let lower = t.to_ascii_lowercase();
    lower.contains("hook")
        || lower
            .rsplit('/')
            .next()
            .is_some_and(|n| n.starts_with("aq."))
}

/// Whether what the line writes names hooks, the switches that turn them
/// off, the sandbox or the permission mode, or aq itself (`s/aq/true/`):
/// the words of the line that are not paths of protected places.
fn touches_hooks(ctx: &Ctx) -> bool {
    let policy = ctx.policy;
    let text = super::line_text(ctx, &|w: &str| {
        crate::places::place_with(w, policy).is_some()
    });
    aq_knowledge::tool_config::hook_word(&text).is_some()
        || aq_knowledge::tool_config::bypasses_agent(&text)
        || aq_knowledge::tool_config::allows_every_command(&text)
        || text
            .split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '-' && ch != '_')
            .any(|w| w == "aq")
}

/// Whether the write at `t` edits the file in place: an in-place editor
/// (`sed -i`, `perl -i`, `yq -i`), or another command of the line reads the
/// same file (`jq F f > tmp && mv tmp f`, `jq F f | sponge f`).
fn edits_itself(ctx: &Ctx, i: usize, t: &str) -> bool {
    let c = &ctx.commands()[i];
    let in_place = matches!(c.program(), Some("sed" | "gsed" | "perl" | "ruby" | "yq"))
        && c.args()
            .iter()
            .any(|a| a.text.starts_with("-i") || a.text.starts_with("--in-place"));
    let same = |w: &str| w.trim_start_matches("./") == t.trim_start_matches("./");
    // Interpreter code that reads what it writes (`json.load`, `readFileSync`).
    let reads_back = c.code.as_ref().is_some_and(|k| {
        let t = k.text.to_ascii_lowercase();
        t.contains("load") || t.contains("read")
    });
    in_place
        || reads_back
        || ctx.commands().iter().enumerate().any(|(j, other)| {
            j != i
                && (other.args().iter().any(|a| same(&a.text))
                    || other
                        .stdin
                        .iter()
                        .any(|s| matches!(s, aq_shell::Input::File(w) if same(&w.text))))
        })
}

// ---- the supervising processes ----------------------------------------------

/// Process names of the guard and of the agents it guards: aq's own
/// ([`aq_knowledge::tool_config::SUPERVISORS`]) and every agent preset's
/// programs.
fn supervisors() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<String> = aq_knowledge::tool_config::SUPERVISORS
            .iter()
            .map(|s| s.to_string())
            .collect();
        for p in &aq_agents::PresetSet::builtin_ref().0 {
            names.extend(p.programs.iter().cloned());
        }
        names.sort();
        names.dedup();
        names
    })
}

fn is_supervisor(name: &str) -> bool {
    let name = name.rsplit('/').next().unwrap_or(name);
    supervisors().iter().any(|s| s == name)
}

/// `kill`, `pkill`, `killall`, `pgrep`-fed kills aimed at the parent, init,
/// every process, aq or an agent.
fn check_kill(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else { return };
    let args = c.args();
    let target = match name {
        "kill" => kill_target(ctx, i, args),
        "pkill" | "killall" => {
            let full = args.iter().any(|a| {
                a.text == "--full"
                    || a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('f')
            });
            let patterns = pattern_names(args);
            let by_user = args
                .iter()
                .any(|a| matches!(a.text.as_str(), "-u" | "-U" | "--euid" | "--uid"));
            if patterns.is_empty() && by_user && name == "pkill" {
                Some("every process of the user".to_string())
            } else if let Some(p) = patterns.iter().find(|p| {
                matches!(
                    p.trim_matches(['\'', '"']),
                    "." | ".*" | ".+" | "^" | "$" | "^.*$" | "[a-z]*" | ""
                )
            }) {
                Some(format!("every process (the pattern {p} matches any name)"))
            } else {
                patterns
                    .into_iter()
                    .find(|p| names_supervisor(&single_char_classes(p), full && name == "pkill"))
            }
        }
        _ => None,
    };
    // `gdb -p $PPID`, `strace -p 1`: a debugger attached to a supervisor
    // can make it do anything, exit included.
    let attached = matches!(
        name,
        "gdb" | "strace" | "ltrace" | "lldb" | "gcore" | "perf"
    ) && args.windows(2).any(|w| {
        matches!(
            w[0].text.as_str(),
            "-p" | "--pid" | "--attach-pid" | "attach"
        ) && (w[1].text.contains("PPID") || w[1].text == "1")
    });
    let target =
        target.or_else(|| attached.then(|| "the parent process or init, attached to".to_string()));
    if let Some(t) = target {
        ctx.hit(
            RuleId::GuardKillSupervisor,
            i,
            format!("`{name}` signals {t}"),
        );
        return;
    }
    // `pkill node`, `killall python3`: every process of an interpreter the
    // agents run on, the agent among them.
    if matches!(name, "pkill" | "killall")
        && pattern_names(args).iter().any(|p| {
            let p = p.trim_matches(['^', '$', '\'', '"']);
            matches!(p, "node" | "nodejs" | "bun" | "deno" | "python" | "python3")
        })
    {
        ctx.hit(
            RuleId::SysServiceControl,
            i,
            format!("`{name}` stops every process of an interpreter the agents run on, perhaps the agent itself"),
        );
    }
}

/// A write over a file found by looking up aq's or an agent's program
/// (`ln -sf /bin/true "$(command -v aq)"`, `cp x "$(which claude)"`,
/// `> $(type -P aq)`): the guard replaced by something else.
fn check_replace_binary(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else { return };
    let writer = matches!(
        name,
        "cp" | "mv"
            | "ln"
            | "install"
            | "tee"
            | "dd"
            | "rm"
            | "truncate"
            | "chmod"
            | "shred"
            | "sed"
            | "perl"
            | "rsync"
            | "unlink"
            | "cat"
    );
    let looked_up = |w: &aq_shell::Word| {
        w.feeds.iter().any(|&f| {
            let fed = &ctx.commands()[f];
            let args: Vec<&str> = fed.args().iter().map(|a| a.text.as_str()).collect();
            matches!(
                fed.program(),
                Some("command" | "which" | "type" | "whereis" | "readlink" | "realpath")
            ) && args.iter().any(|a| !a.starts_with('-') && is_supervisor(a))
        })
    };
    let target = c
        .redirects
        .iter()
        .filter(|r| {
            matches!(
                r.kind,
                aq_shell::RedirectKind::Write
                    | aq_shell::RedirectKind::Append
                    | aq_shell::RedirectKind::ReadWrite
            )
        })
        .map(|r| &r.target)
        .chain(c.args().iter().filter(|_| writer))
        .find(|w| looked_up(w));
    if let Some(w) = target {
        ctx.hit(
            RuleId::GuardAqFiles,
            i,
            format!(
                "`{name}` writes over {}, the guard's or the agent's own program",
                w.text
            ),
        );
    }
}

/// The agent presets, parsed once.
fn presets() -> &'static aq_agents::PresetSet {
    aq_agents::PresetSet::builtin_ref()
}

/// An agent started with its own approval of commands switched off
/// (`claude --dangerously-skip-permissions`, `gemini --yolo`): an agent the
/// guard's hooks may not reach, asking nobody. The agent by its program,
/// or started through its package or entry script (`npx -y
/// @google/gemini-cli`, `pnpm dlx @anthropic-ai/claude-code`, `node
/// …/claude-code/cli.js`: `aq_agents::recognize`).
fn check_agent_bypass(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else { return };
    let (agent, args): (String, &[aq_shell::Word]) =
        if is_supervisor(name) && !aq_knowledge::tool_config::SUPERVISORS.contains(&name) {
            (name.to_string(), c.args())
        } else if matches!(
            name,
            "node"
                | "nodejs"
                | "bun"
                | "deno"
                | "python"
                | "python3"
                | "npx"
                | "pnpx"
                | "bunx"
                | "uvx"
                | "npm"
                | "pnpm"
                | "yarn"
                | "pipx"
                | "uv"
        ) {
            let argv: Vec<String> = c.argv.iter().map(|w| w.text.clone()).collect();
            let Some(found) = aq_agents::recognize(presets(), &argv, None) else {
                return;
            };
            let Some(program) = found.preset.programs.first() else {
                return;
            };
            (program.clone(), c.argv.get(found.args_at..).unwrap_or(&[]))
        } else {
            return;
        };
    let flag = args.iter().enumerate().find_map(|(k, a)| {
        let t = a.text.as_str();
        if !t.starts_with('-') {
            return None;
        }
        // `--permission-mode bypassPermissions`, `--approval-mode=yolo`,
        // `-s danger-full-access`, `-a never`, `--settings '{…bypass…}'`,
        // `-c approval_policy=never`, `--allowed-tools Bash`.
        let (opt, value) = match t.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, v),
            _ => (t, args.get(k + 1).map(|w| w.text.as_str()).unwrap_or("")),
        };
        let valued = !value.is_empty() && !value.starts_with('-');
        let hit = aq_knowledge::tool_config::bypasses_agent(t)
            || aq_knowledge::tool_config::bypasses_named_agent(&agent, t)
            || valued && option_value_bypasses(&agent, opt, value);
        hit.then(|| {
            if aq_knowledge::tool_config::bypasses_agent(t)
                || aq_knowledge::tool_config::bypasses_named_agent(&agent, t)
                || opt != t
            {
                t.to_string()
            } else {
                format!("{t} {value}")
            }
        })
    });
    if let Some(f) = flag {
        ctx.hit(
            RuleId::GuardAgentBypass,
            i,
            format!("`{agent} {f}` runs an agent with its approval of commands switched off"),
        );
    }
}

/// Whether option `opt` of `agent` given `value` switches its approval of
/// commands off: a mode, sandbox or approval option set to a bypass
/// (`--permission-mode bypassPermissions`, `-s danger-full-access`), an
/// approval policy of `never` (Codex's `-a never`, `--ask-for-approval
/// never`, `-c approval_policy=never`), settings given inline that hold a
/// bypass (`--settings '{"permissions":{"defaultMode":"bypassPermissions"}}'`),
/// or the shell allowed whole (`--allowed-tools Bash`, `Bash(*)`).
fn option_value_bypasses(agent: &str, opt: &str, value: &str) -> bool {
    use aq_knowledge::tool_config::bypasses_agent;
    let lower_opt = opt.to_ascii_lowercase();
    let lower = value.to_ascii_lowercase();
    let approval_opt = lower_opt.contains("approval") || agent == "codex" && opt == "-a";
    let mode_opt = lower_opt.contains("mode") || lower_opt.contains("sandbox") || opt == "-s";
    let settings_opt = matches!(lower_opt.as_str(), "--settings" | "--config" | "-c");
    let never = |v: &str| v.trim_matches(['"', '\'']) == "never";
    if (approval_opt || mode_opt) && (bypasses_agent(value) || never(&lower)) {
        return true;
    }
    if settings_opt
        && (bypasses_agent(value)
            || lower
                .split_once("approval_policy")
                .is_some_and(|(_, rest)| never(rest.trim_start_matches([' ', '=', ':']))))
    {
        return true;
    }
    if lower_opt.contains("allowed-tools") || lower_opt.contains("allowedtools") {
        return lower
            .split([',', ' '])
            .map(|e| e.trim_matches(['"', '\'']))
            .any(|e| {
                matches!(
                    e,
                    "bash" | "bash(*)" | "bash(*:*)" | "*" | "shell" | "shell(*)"
                )
            });
    }
    false
}

/// `systemctl stop`, `service NAME stop`, `launchctl unload` of a service
/// that is the guard or an agent (by name: [`names_supervisor`]).
fn check_stop_service(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else { return };
    let ops: Vec<&str> = operands(c).iter().map(|w| w.text.as_str()).collect();
    let stops = match (name, ops.as_slice()) {
        ("systemctl", [verb, units @ ..])
            if matches!(*verb, "stop" | "disable" | "mask" | "kill" | "freeze") =>
        {
            units.to_vec()
        }
        ("service", [unit, "stop", ..]) => vec![*unit],
        ("launchctl", [verb, rest @ ..])
            if matches!(
                *verb,
                "unload" | "bootout" | "disable" | "stop" | "remove" | "kill"
            ) =>
        {
            rest.to_vec()
        }
        _ => return,
    };
    let named = stops.iter().find(|u| {
        let base = u.rsplit('/').next().unwrap_or(u);
        let base = base
            .trim_end_matches(".plist")
            .trim_end_matches(".service")
            .trim_end_matches(".socket");
        names_supervisor(base, true) || base.split('.').any(|w| names_supervisor(w, false))
    });
    if let Some(u) = named {
        ctx.hit(
            RuleId::GuardKillSupervisor,
            i,
            format!("`{name}` stops {u}, which guards or runs the agent"),
        );
    }
}

/// A pattern with one-letter classes written out (`a[q]` is `aq`, the
/// trick that keeps `pgrep -f` from finding itself).
fn single_char_classes(p: &str) -> String {
    let mut out = String::new();
    let mut chars = p.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '[' {
            let inner: String = chars.by_ref().take_while(|c| *c != ']').collect();
            out.push_str(
                inner
                    .chars()
                    .next()
                    .map(String::from)
                    .as_deref()
                    .unwrap_or(""),
            );
        } else {
            out.push(ch);
        }
    }
    out
}

/// The operands of `pkill`/`killall` that are patterns (not option values).
fn pattern_names(args: &[aq_shell::Word]) -> Vec<String> {
    const VALUED: &[&str] = &[
        "-u",
        "-U",
        "-g",
        "-G",
        "-P",
        "-s",
        "-t",
        "-n",
        "--signal",
        "-o",
        "--older-than",
        "-y",
        "--younger-than",
        "--ns",
        "--nslist",
        "-F",
        "--pidfile",
    ];
    let mut out = Vec::new();
    let mut k = 0;
    while k < args.len() {
        let a = args[k].text.as_str();
        if VALUED.contains(&a) {
            k += 2;
            continue;
        }
        if !a.starts_with('-') {
            out.push(a.to_string());
        }
        k += 1;
    }
    out
}

/// Whether a `pkill` pattern names a supervisor: the name itself, or, for
/// `pkill -f` (the whole command line), a supervisor as one of its words.
fn names_supervisor(pattern: &str, whole_line: bool) -> bool {
    let p = pattern.trim_matches(['^', '$', '\'', '"']);
    if is_supervisor(p) || aq_knowledge::tool_config::names_guard(p) {
        return true;
    }
    whole_line
        && p.split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '-' && ch != '_')
            .any(is_supervisor)
}

/// What a `kill` aims at, when it is a supervisor: `$PPID`, pid 1, `-1`
/// (every process), or pids computed by `pgrep`/`pidof` of a supervisor or
/// by `ps -o ppid`.
fn kill_target(ctx: &Ctx, i: usize, args: &[aq_shell::Word]) -> Option<String> {
    // `pgrep aq | xargs kill`: the pids come from upstream.
    let wrappers: Vec<usize> = (0..ctx.commands().len())
        .filter(|&j| {
            ctx.commands()[j].runs == Some(i) && ctx.commands()[j].program() == Some("xargs")
        })
        .collect();
    let upstream: Vec<usize> = wrappers
        .into_iter()
        .chain(std::iter::once(i))
        .flat_map(|j| ctx.upstream(j))
        .collect();
    if let Some(found) = upstream
        .iter()
        .find_map(|&u| finds_supervisor(&ctx.commands()[u]))
        .or_else(|| filters_supervisor(ctx, &upstream))
    {
        return Some(found);
    }
    let mut k = 0;
    // The signal: `-9`, `-STOP`, `-s SIG`, `-n N`, `--signal SIG`.
    if let Some(a) = args.first() {
        if matches!(a.text.as_str(), "-s" | "-n" | "--signal") {
            k = 2;
        } else if a.text.starts_with('-') && a.text != "--" && a.text != "-1" {
            k = 1;
        }
    }
    for a in args.iter().skip(k) {
        let t = a.text.as_str();
        if t == "--" {
            continue;
        }
        // `kill $PPID`; `p=$PPID; kill $p`: the value kept its source.
        if t.contains("$PPID") || t.contains("${PPID}") || a.vars.iter().any(|v| v == "PPID") {
            return Some("the parent process".to_string());
        }
        if matches!(t, "1" | "-1") {
            return Some(
                if t == "1" {
                    "init (pid 1)"
                } else {
                    "every process"
                }
                .to_string(),
            );
        }
        if let Some(found) = a
            .feeds
            .iter()
            .find_map(|&f| finds_supervisor(&ctx.commands()[f]))
        {
            return Some(found);
        }
        // `for p in $(pgrep claude); do kill $p; done`: a variable whose
        // value came from commands of the line.
        let from_vars = a.vars.iter().flat_map(|v| {
            ctx.analysis
                .var_sources
                .iter()
                .filter(move |(n, _)| n == v)
                .flat_map(|(_, s)| s.iter().copied())
        });
        // `kill $(ps aux | grep aq | awk '{print $2}')`: the substitution's
        // pipeline, from its last command up.
        // (`read p` reads what a pipe or `< <(pgrep aq)` gives it.)
        for f in a.feeds.iter().copied().chain(from_vars) {
            let mut chain = vec![f];
            chain.extend(ctx.upstream(f));
            for s in &ctx.commands()[f].stdin {
                if let aq_shell::Input::File(w) = s {
                    chain.extend(w.feeds.iter().copied());
                }
            }
            if let Some(found) = chain
                .iter()
                .find_map(|&u| finds_supervisor(&ctx.commands()[u]))
                .or_else(|| filters_supervisor(ctx, &chain))
            {
                return Some(found);
            }
        }
    }
    None
}

/// Pids picked out of a process listing by a supervisor's name: `ps aux |
/// grep aq | awk '{print $2}'`, `ps -eo pid,comm | awk '/claude/{print
/// $1}'`; or the parent's pid read from `/proc/self/stat` (its fourth
/// field) or `/proc/self/status` (`PPid:`). `commands` is a pipeline's
/// commands, in any order.
fn filters_supervisor(ctx: &Ctx, commands: &[usize]) -> Option<String> {
    let all = ctx.commands();
    let own_stat = |w: &aq_shell::Word| {
        let t = w.text.as_str();
        ["/proc/self/", "/proc/$$/", "/proc/thread-self/"]
            .iter()
            .any(|p| {
                t.strip_prefix(p)
                    .is_some_and(|r| r == "stat" || r == "status")
            })
    };
    if commands.iter().any(|&j| {
        all[j].args().iter().any(own_stat)
            || all[j]
                .stdin
                .iter()
                .any(|s| matches!(s, aq_shell::Input::File(w) if own_stat(w)))
    }) {
        return Some("the parent process (its pid read from /proc/self)".to_string());
    }
    if !commands.iter().any(|&j| all[j].program() == Some("ps")) {
        return None;
    }
    commands.iter().find_map(|&j| {
        let c = &all[j];
        let words: Vec<&str> = match c.program()? {
            "grep" | "egrep" | "fgrep" | "rg" => {
                if c.args().iter().any(|a| {
                    a.text == "--invert-match"
                        || a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('v')
                }) {
                    return None;
                }
                c.args()
                    .iter()
                    .map(|a| a.text.as_str())
                    .filter(|a| !a.starts_with('-'))
                    .collect()
            }
            "awk" | "gawk" | "mawk" | "nawk" | "sed" => c
                .args()
                .iter()
                .map(|a| a.text.as_str())
                .filter(|a| !a.starts_with('-'))
                .take(1)
                .collect(),
            _ => return None,
        };
        words
            .iter()
            .any(|w| names_supervisor(&single_char_classes(w), true))
            .then(|| format!("the pids `{}` picks out of `ps`", c.display()))
    })
}

/// What a command that lists pids finds, when that is a supervisor:
/// `pgrep`/`pidof` of one (`pgrep -f 'a[q]'` too), `ps -o ppid`.
fn finds_supervisor(fed: &aq_shell::Command) -> Option<String> {
    let fed_args: Vec<&str> = fed.args().iter().map(|w| w.text.as_str()).collect();
    match fed.program() {
        Some("pgrep" | "pidof") => {
            let whole = fed_args
                .iter()
                .any(|x| x.starts_with('-') && x.contains('f'));
            pattern_names(fed.args())
                .iter()
                .any(|p| names_supervisor(&single_char_classes(p), whole))
                .then(|| format!("what `{}` finds", fed.display()))
        }
        Some("ps") if fed_args.iter().any(|x| x.contains("ppid")) => {
            Some("the parent process".to_string())
        }
        _ => None,
    }
}

// ---- the guard's environment ------------------------------------------------

/// A line that sets or unsets aq's own variables.
fn check_env(ctx: &mut Ctx, i: usize) {
    use aq_knowledge::tool_config::is_guard_env;
    let c = &ctx.commands()[i];
    let mut names: Vec<String> = c
        .assignments
        .iter()
        .filter(|a| is_guard_env(&a.name))
        .map(|a| a.name.clone())
        .collect();
    let args = c.args();
    match c.program() {
        Some("unset") => names.extend(
            args.iter()
                .filter(|a| is_guard_env(&a.text))
                .map(|a| a.text.clone()),
        ),
        Some("export" | "declare" | "typeset" | "readonly" | "local") => names.extend(
            args.iter()
                .map(|a| a.text.split('=').next().unwrap_or(""))
                .filter(|n| is_guard_env(n))
                .map(str::to_string),
        ),
        Some("env") => {
            for (k, a) in args.iter().enumerate() {
                let n = if a.text == "-u" || a.text == "--unset" {
                    args.get(k + 1).map(|w| w.text.as_str()).unwrap_or("")
                } else if let Some(n) = a.text.strip_prefix("--unset=") {
                    n
                } else if let Some(n) = a.text.strip_prefix("-u").filter(|n| !n.is_empty()) {
                    n
                } else {
                    a.text.split_once('=').map(|(n, _)| n).unwrap_or("")
                };
                if is_guard_env(n) {
                    names.push(n.to_string());
                }
            }
        }
        _ => {}
    }
    if let Some(n) = names.first() {
        ctx.hit(
            RuleId::GuardAqEnv,
            i,
            format!("changes aq's own variable {n}"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{keyed_substitution, option_value_bypasses};

    #[test]
    fn an_option_value_that_switches_approval_off_is_a_bypass() {
        for (agent, opt, value) in [
            ("claude", "--permission-mode", "bypassPermissions"),
            (
                "claude",
                "--settings",
                r#"{"permissions":{"defaultMode":"bypassPermissions"}}"#,
            ),
            ("claude", "--allowed-tools", "Bash"),
            ("claude", "--allowedTools", "Read,Bash(*)"),
            ("codex", "-a", "never"),
            ("codex", "--ask-for-approval", "never"),
            ("codex", "-c", "approval_policy=never"),
            ("codex", "-c", r#"approval_policy="never""#),
            ("codex", "-s", "danger-full-access"),
        ] {
            assert!(
                option_value_bypasses(agent, opt, value),
                "{agent} {opt} {value}"
            );
        }
        for (agent, opt, value) in [
            ("claude", "--settings", ".claude/ci.json"),
            ("claude", "--allowed-tools", "Bash(npm test:*)"),
            ("codex", "-a", "on-request"),
            ("codex", "-c", "model=o3"),
            ("gemini", "-a", "never"),
        ] {
            assert!(
                !option_value_bypasses(agent, opt, value),
                "{agent} {opt} {value}"
            );
        }
    }

    #[test]
    fn a_substitution_is_read_when_it_names_the_key_it_changes() {
        for cmd in [
            r#"s/"model": "[^"]*"/"model": "sonnet"/"#,
            r#"s/"theme": "dark"/"theme": "light"/"#,
            r#"s/"enabled": *true/"enabled": false/g"#,
            r#"s|"model":\s*".*"|"model": "x"|"#,
            "s/^model = .*/model = \"o3\"/",
            "s/theme: dark/theme: light/",
        ] {
            assert!(keyed_substitution(cmd), "{cmd}");
        }
        for cmd in [
            "s/a/b/",
            "s/deny/allow/g",
            "5d",
            "/aq/d",
            "$d",
            "s/\"aq\"/\"x\"/",
            "y/ab/ba/",
        ] {
            assert!(!keyed_substitution(cmd), "{cmd}");
        }
    }
}
