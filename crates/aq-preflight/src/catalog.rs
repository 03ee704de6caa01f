//! Every detector id, once, with what it looks for, why it matters and the
//! usual fix. Ids are stable once released and never reused.

use crate::{Finding, Severity};

/// A detector: a stable id and its documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detector {
    /// Stable kebab-case id, `<family>-<what>`.
    pub id: &'static str,
    /// What it finds, in a few words.
    pub title: &'static str,
    /// Why it matters.
    pub why: &'static str,
    /// The usual fix.
    pub fix: &'static str,
}

macro_rules! detectors {
    ($($id:literal, $title:literal, $why:literal, $fix:literal;)*) => {
        /// Every detector, in documentation order.
        pub const DETECTORS: &[Detector] = &[
            $(Detector { id: $id, title: $title, why: $why, fix: $fix },)*
        ];
    };
}

detectors! {
    "lifecycle-npm-script", "npm/yarn/pnpm lifecycle script",
        "preinstall, install, postinstall and prepare run on their own during `npm install`, `yarn` or `pnpm install`.",
        "Read the script before installing; install with `--ignore-scripts`, or run the install inside `aq run`.";
    "lifecycle-cargo-build-script", "Cargo build script that runs programs or opens the network",
        "build.rs runs on every `cargo build`, `check` or `test`, and an editor's rust-analyzer runs it on open.",
        "Read build.rs; build inside `aq run` with the network off.";
    "lifecycle-cargo-config", "Cargo config runner, wrapper or alias",
        "A runner or rustc wrapper in .cargo/config.toml runs on `cargo run`/`test`/`build`; an alias can shadow a built-in command.",
        "Remove the entry or check what it runs before using cargo here.";
    "lifecycle-remote-script", "Makefile or shell script that runs a remote script",
        "Code fetched from the network and run unseen can change at any time and do anything the user can.",
        "Download the script, read it, pin it by checksum, then run the local copy.";
    "lifecycle-direnv", "direnv .envrc",
        "Once allowed, direnv runs .envrc on every `cd` into the directory, for every shell and agent.",
        "Read .envrc before `direnv allow`; never allow it blindly.";
    "lifecycle-vscode-task", "VS Code task that runs when the folder opens",
        "A task with runOn: folderOpen runs as soon as the folder is opened in a trusted window.",
        "Remove runOptions.runOn, or keep the workspace untrusted.";
    "lifecycle-devcontainer", "devcontainer lifecycle command",
        "initializeCommand runs on the host before the container exists; the others run in the container on create/start.",
        "Read the commands before opening the folder in a container.";
    "lifecycle-python-build", "Python build hook: setup.py that runs programs or opens the network, or a build backend from the repository",
        "setup.py and a pyproject build backend are Python code run by `pip install`, `pip install -e .` and every build, with the user's rights.",
        "Read setup.py and the backend before installing; install a published wheel, or build inside `aq run` with the network off.";
    "lifecycle-vscode-settings", "VS Code settings that start a program from the repository",
        "An interpreter, shell or tool path in .vscode/settings.json is started by the editor or an extension as soon as the folder opens in a trusted window.",
        "Point the setting at a program you installed, or keep the workspace untrusted.";
    "lifecycle-pre-commit", "pre-commit hook from a local repo",
        "A `repo: local` hook runs its entry on every `git commit` once `pre-commit install` has run, with no pinned release to review.",
        "Read each entry before `pre-commit install`; prefer hooks from a remote repository pinned by `rev`.";
    "git-hook-executable", "Executable git hook",
        "An executable file in a hooks directory (.git/hooks, a submodule's or nested repository's, core.hooksPath) runs on ordinary git commands (commit, checkout, merge, push).",
        "Delete the hook or make it non-executable unless you wrote it.";
    "git-config-exec", "git config that runs programs",
        "core.fsmonitor, core.hooksPath, core.sshCommand, core.pager, `!` aliases, filter and diff drivers, credential helpers and included files run commands on ordinary git use, including `git status`; a submodule's config runs on the superproject's `git status` too.",
        "Remove the entry (`git config --file FILE --unset KEY`).";
    "git-commondir", "git directory redirected by commondir",
        "A `commondir` file makes git take the repository's config and hooks from another directory, which then runs what it likes on every git command.",
        "Delete the file unless this is a linked worktree's and it names the repository's .git.";
    "git-attributes-driver", "info/attributes hands files to a driver that runs a program",
        "An attribute in .git/info/attributes (not shown by `git status`) sends files through a filter, diff or merge driver a config defines with a command, which runs on status, add, diff or checkout.",
        "Delete the line from .git/info/attributes, or the driver from the config.";
    "git-submodule-host", "Submodule from an unexpected host",
        "A submodule is fetched from its URL on `git submodule update`; a local path or unusual host can pull in anything.",
        "Check the URL before `git submodule update --init`.";
    "agent-claude-settings", "Claude Code project settings: hooks or permissions",
        "Project hooks run shell commands on agent events; allow rules and bypass modes let the agent act without asking.",
        "Review .claude/settings*.json; remove hooks and broad allow rules you did not write.";
    "agent-mcp-server", "MCP server configured by the repository",
        "An MCP server's command runs when the agent starts, with the user's rights; a remote server receives the agent's data.",
        "Approve only servers you know; check their command and URL.";
    "agent-cursor-rules", "Cursor rules or hooks planted by the repository",
        "Rules are added to the agent's instructions; hooks run commands on agent events.",
        "Read .cursor/rules and .cursor/hooks.json before using Cursor here.";
    "agent-gemini-settings", "Gemini CLI project settings",
        "Project settings can start MCP servers and auto-accept tool calls.",
        "Review .gemini/settings.json.";
    "agent-codex-config", "Codex configuration planted by the repository",
        "A project .codex/config.toml can stop Codex from asking, drop its sandbox, send the session to another model provider and run notify commands; .codex instructions and prompts are added to the agent's input.",
        "Review .codex/ before running Codex here; remove settings you did not write.";
    "agent-policy-loosens", "agent-quarantine.toml that loosens the policy",
        "A project policy may only tighten aq's policy unless trusted; this one asks for more (allowed rules, passed secrets, network, writable paths).",
        "Keep the file untrusted (`aq policy untrust`) unless you agree with every loosening.";
    "agent-policy-invalid", "agent-quarantine.toml that aq cannot read",
        "aq does not start with a policy it cannot read, so this file keeps aq from protecting any session in this repository (a mistake, or a way to switch aq off here).",
        "Fix or remove the file; `aq check agent-quarantine.toml` shows what is wrong.";
    "instructions-override", "Instructions telling the agent to ignore its rules",
        "Text that tells an agent to ignore previous or system instructions is a prompt injection.",
        "Remove the text; do not point an agent at this repository until you know why it is there.";
    "instructions-conceal", "Instructions telling the agent to hide what it does",
        "An instruction to keep actions from the user is how an injected task avoids review.",
        "Remove the text and check the repository's history for who added it.";
    "instructions-remote-script", "Instructions telling the agent to run a remote script",
        "An agent that follows this runs code from the network that nobody reviewed.",
        "Remove the instruction, or replace it with a pinned, reviewed local script.";
    "instructions-secret-exfil", "Instructions telling the agent to read or send secrets",
        "An agent that follows this leaks keys or tokens.",
        "Remove the instruction.";
    "hidden-bidi", "Bidirectional override characters",
        "Bidi overrides make text display in a different order than it is read by a compiler or an agent (Trojan Source).",
        "Remove the characters (U+202A-U+202E, U+2066-U+2069).";
    "hidden-zero-width", "Zero-width or tag characters",
        "Invisible characters can hide instructions from a reviewer while an agent still reads them.",
        "Remove the characters (U+200B-U+200D, U+2060, U+FEFF, U+E0000-U+E007F).";
    "hidden-html-comment", "HTML comment with instructions",
        "A Markdown HTML comment is invisible when rendered but read in full by an agent.",
        "Remove the comment or make the instruction visible.";
    "secret-dotenv", ".env file with values",
        "A .env file holds the keys and passwords of a deployment; an agent reading it can leak them.",
        "Move the values to a secret store; keep only .env.example with placeholders in the tree.";
    "secret-private-key", "Private key block",
        "A private key in the tree is usable by anyone who reads the file.",
        "Revoke the key, remove it from the tree and from git history.";
    "secret-credential-file", "Credential file the catalog names",
        "A file such as credentials.json, terraform.tfstate, id_rsa or an .npmrc with a token holds credentials; an agent reading it can leak them (aq run masks it, hook mode blocks reading it).",
        "Keep it out of the repository (add it to .gitignore; rotate it if it was ever committed); pass it back with [paths] unmasked only if a build needs it.";
    "secret-aws-key", "AWS access key id",
        "An AWS key gives access to the account's resources.",
        "Deactivate the key in IAM and remove it from the tree and history.";
    "secret-github-token", "GitHub token",
        "A GitHub token gives access to repositories and the account.",
        "Revoke the token at github.com/settings/tokens and remove it.";
    "secret-slack-token", "Slack token",
        "A Slack token can read and post messages in the workspace.",
        "Revoke the token in the Slack app settings and remove it.";
    "secret-openai-key", "OpenAI API key",
        "An OpenAI key can be used and billed by anyone who reads it.",
        "Revoke the key in the OpenAI dashboard and remove it.";
    "secret-anthropic-key", "Anthropic API key",
        "An Anthropic key can be used and billed by anyone who reads it.",
        "Revoke the key in the Anthropic console and remove it.";
    "secret-google-key", "Google API key",
        "A Google API key can be used and billed by anyone who reads it.",
        "Restrict or delete the key in the Google Cloud console and remove it.";
    "secret-stripe-key", "Stripe live secret key",
        "A live Stripe key moves real money.",
        "Roll the key in the Stripe dashboard and remove it.";
    "link-outside-repo", "Symlink pointing outside the repository",
        "A tool or agent that reads or writes through the link reaches files outside the repository, such as ~/.ssh.",
        "Delete the link, or make it point inside the repository.";
    "file-executable-binary", "Executable binary in the tree",
        "A prebuilt binary cannot be reviewed; an agent or script may run it.",
        "Build it from source, or check where it came from and its checksum.";
    "file-large", "Large file in the tree",
        "A large file is often a committed artifact or data dump, and is read only in part.",
        "Check what it is; keep artifacts out of the repository.";
}

/// The detector with this id.
///
/// # Panics
/// When `id` is not in [`DETECTORS`] (a bug: ids are written in this crate).
pub fn detector(id: &str) -> &'static Detector {
    DETECTORS
        .iter()
        .find(|d| d.id == id)
        .unwrap_or_else(|| panic!("unknown detector id {id}"))
}

/// A finding of detector `id`, with its why and fix.
pub(crate) fn finding(
    id: &'static str,
    severity: Severity,
    path: &str,
    line: usize,
    title: impl Into<String>,
    evidence: impl Into<String>,
) -> Finding {
    let d = detector(id);
    Finding {
        id: d.id,
        severity,
        path: path.to_string(),
        line,
        title: title.into(),
        why: d.why.to_string(),
        fix: d.fix.to_string(),
        evidence: evidence.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for d in DETECTORS {
            assert!(seen.insert(d.id), "duplicate id {}", d.id);
            assert!(
                d.id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}",
                d.id
            );
        }
    }
}
