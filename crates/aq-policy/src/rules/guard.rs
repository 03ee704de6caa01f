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
        ["enable" | "disable", ..] => (
            RuleId::GuardAgentHooks,
            "changes where aq is installed in the agents",
        ),
        ["mcp", "wrap" | "unwrap", ..] => (
            RuleId::GuardAgentHooks,
            "changes how the agents start their MCP servers",
        ),
        ["audit", "export", ..] | ["__connect", ..] => (RuleId::NetFetch, "sends to another host"),
        _ => return,
    };
    ctx.hit(rule, i, format!("`{}` {what}", c.display()));
}

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
            if is_hook_file(t) || touches_hooks(ctx) || !edits_itself(ctx, i, t) {
                RuleId::GuardAgentHooks
            } else {
                RuleId::GuardAgentSettings
            }
        }
        PlaceKind::AgentConfig if touches_hooks(ctx) => RuleId::GuardAgentHooks,
        _ => super::files::place_rule(kind),
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
        for p in aq_agents::PresetSet::builtin().0 {
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
        "kill" => kill_target(ctx, args),
        "pkill" | "killall" => {
            let full = args.iter().any(|a| {
                a.text == "--full"
                    || a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('f')
            });
            pattern_names(args)
                .into_iter()
                .find(|p| names_supervisor(p, full && name == "pkill"))
        }
        _ => None,
    };
    if let Some(t) = target {
        ctx.hit(
            RuleId::GuardKillSupervisor,
            i,
            format!("`{name}` signals {t}"),
        );
    }
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
    if is_supervisor(p) {
        return true;
    }
    whole_line
        && p.split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '-' && ch != '_')
            .any(is_supervisor)
}

/// What a `kill` aims at, when it is a supervisor: `$PPID`, pid 1, `-1`
/// (every process), or pids computed by `pgrep`/`pidof` of a supervisor or
/// by `ps -o ppid`.
fn kill_target(ctx: &Ctx, args: &[aq_shell::Word]) -> Option<String> {
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
        if t.contains("$PPID") || t.contains("${PPID}") {
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
        for &f in &a.feeds {
            let fed = &ctx.commands()[f];
            let fed_args: Vec<&str> = fed.args().iter().map(|w| w.text.as_str()).collect();
            match fed.program() {
                Some("pgrep" | "pidof") => {
                    let whole = fed_args
                        .iter()
                        .any(|x| x.starts_with('-') && x.contains('f'));
                    if pattern_names(fed.args())
                        .iter()
                        .any(|p| names_supervisor(p, whole))
                    {
                        return Some(format!("what `{}` finds", fed.display()));
                    }
                }
                Some("ps") if fed_args.iter().any(|x| x.contains("ppid")) => {
                    return Some("the parent process".to_string());
                }
                _ => {}
            }
        }
    }
    None
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
