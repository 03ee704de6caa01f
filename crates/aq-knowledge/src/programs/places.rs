//! Places whose files decide what runs later, or keep aq's own record: a
//! write there is judged by the place, whichever program writes it (a
//! redirection, `tee`, `cp`, `sed -i`, an editor, interpreter code).
//!
//! One table, [`PLACES`], grouped by kind. The agents' own files (where
//! `aq hook` is installed, what can switch it off, and their files that
//! make something run) are the agents' data: `aq-agents` lists them, and
//! the engine adds them to these as [`PlaceKind::AgentHook`] and
//! [`PlaceKind::AgentConfig`]. Agents that live inside an editor, which no
//! preset starts, have their settings here.
//!
//! A pattern is a path with `/` between components:
//!
//! - `~/...` is under the home directory (`~`, `$HOME`, `/home/USER`,
//!   `/root`, `/Users/USER`, and `$XDG_CONFIG_HOME` for `~/.config` ...);
//! - `/...` is absolute;
//! - anything else matches those components anywhere in a path
//!   (`.git/config` is the config of every repository, `./.git/config`,
//!   `sub/.git/config`, `/work/x/.git/config`);
//! - a trailing `/` is the directory and everything under it;
//! - a component may be a glob (`cron*`), and `**` is any number of them.
//!
//! To add a place: put it under its kind, with the reason in a comment
//! when it is not obvious; `tests/table.rs` checks every pattern's form.

/// What writing a place does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlaceKind {
    /// A shell startup file: runs in every later shell, the user's own.
    ShellRc,
    /// `authorized_keys`: lets someone log in.
    AuthorizedKeys,
    /// A cron table.
    Cron,
    /// A systemd unit.
    Systemd,
    /// A launchd agent or daemon (macOS).
    Launchd,
    /// A file the system runs or trusts at startup or login.
    SystemStartup,
    /// A repository's git hook.
    GitHook,
    /// A repository's git configuration (`core.fsmonitor`, `core.pager`,
    /// aliases, `core.hooksPath` run programs), or what points git at
    /// another one (`commondir`, a `.git` file).
    GitConfig,
    /// The user's or the system's git configuration: every repository.
    GitConfigGlobal,
    /// aq's own files: its policy and trust, its state and session logs,
    /// its approvals, its launchers.
    AqOwn,
    /// Where an agent's hook (aq's, in hook mode) is configured, or what
    /// switches an agent's hooks off.
    AgentHook,
    /// An agent's configuration that makes something run when the agent
    /// starts (MCP servers, plugins, commands, skills).
    AgentConfig,
}

/// One place.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    /// Where (see the module's notes).
    pub pattern: &'static str,
    /// What writing it does.
    pub kind: PlaceKind,
}

const fn place(pattern: &'static str, kind: PlaceKind) -> Place {
    Place { pattern, kind }
}

use PlaceKind::*;

/// Every place the engine knows, but the agents' (see the module's notes).
pub const PLACES: &[Place] = &[
    // ---- aq's own ---------------------------------------------------------
    // Policy, trust and the starter file; sessions (log.jsonl, approvals,
    // session.json), hook sessions, what `aq enable` keeps; launchers.
    place("~/.config/agent-quarantine/", AqOwn),
    place("~/.local/state/agent-quarantine/", AqOwn),
    place("~/.local/share/agent-quarantine/", AqOwn),
    // Not the program itself (`~/.local/bin/aq`): installing a new build of
    // aq there is ordinary work, and its path is the user's choice.
    // ---- shell startup files ----------------------------------------------
    place("~/.bashrc", ShellRc),
    place("~/.bash_profile", ShellRc),
    place("~/.bash_login", ShellRc),
    place("~/.bash_logout", ShellRc),
    // Sourced by the .bashrc that Debian and Ubuntu install.
    place("~/.bash_aliases", ShellRc),
    // Directories that a .bashrc (Fedora's, many dotfile setups) sources
    // every file of.
    place("~/.bashrc.d/", ShellRc),
    place("~/.profile.d/", ShellRc),
    place("~/.zshrc.d/", ShellRc),
    // Variables every session of the user starts with (systemd's user
    // environment, PAM's): `LD_PRELOAD=` there runs code in each program.
    place("~/.config/environment.d/", ShellRc),
    place("~/.pam_environment", ShellRc),
    place("~/.xsessionrc", ShellRc),
    place("~/.profile", ShellRc),
    place("~/.zshrc", ShellRc),
    place("~/.zprofile", ShellRc),
    place("~/.zshenv", ShellRc),
    place("~/.zlogin", ShellRc),
    place("~/.zlogout", ShellRc),
    place("~/.kshrc", ShellRc),
    place("~/.cshrc", ShellRc),
    place("~/.tcshrc", ShellRc),
    place("~/.mkshrc", ShellRc),
    // zsh reads its startup files from `$ZDOTDIR`, most often here.
    place("~/.config/zsh/", ShellRc),
    // oh-my-zsh sources every `*.zsh` of its custom directory at start.
    place("~/.oh-my-zsh/custom/", ShellRc),
    // bash-completion sources it in every interactive shell.
    place("~/.bash_completion", ShellRc),
    // sshd runs it at every login over ssh, before the user's shell.
    place(".ssh/rc", ShellRc),
    place("/etc/ssh/sshrc", ShellRc),
    place("~/.xprofile", ShellRc),
    place("~/.xinitrc", ShellRc),
    place("~/.config/fish/config.fish", ShellRc),
    place("~/.config/fish/conf.d/", ShellRc),
    place("~/.config/fish/functions/", ShellRc),
    // fish also sources its vendors' directories under $XDG_DATA_HOME,
    // and the system's.
    place("~/.local/share/fish/vendor_conf.d/", ShellRc),
    place("~/.local/share/fish/vendor_functions.d/", ShellRc),
    place("/etc/fish/config.fish", ShellRc),
    place("/etc/fish/conf.d/", ShellRc),
    // nushell's startup files and the directories it autoloads.
    place("~/.config/nushell/config.nu", ShellRc),
    place("~/.config/nushell/env.nu", ShellRc),
    place("~/.config/nushell/login.nu", ShellRc),
    place("~/.config/nushell/autoload/", ShellRc),
    place("~/.local/share/nushell/vendor/autoload/", ShellRc),
    place("~/Library/Application Support/nushell/config.nu", ShellRc),
    place("~/Library/Application Support/nushell/env.nu", ShellRc),
    // PowerShell's profiles (`profile.ps1`, `Microsoft.PowerShell_profile.ps1`),
    // run at every `pwsh` start.
    place("~/.config/powershell/*profile.ps1", ShellRc),
    // The X session script a display manager runs at every graphical login.
    place("~/.xsession", ShellRc),
    place("/etc/profile", ShellRc),
    place("/etc/profile.d/", ShellRc),
    place("/etc/bash.bashrc", ShellRc),
    place("/etc/bashrc", ShellRc),
    place("/etc/zshrc", ShellRc),
    place("/etc/zsh/zshrc", ShellRc),
    place("/etc/zprofile", ShellRc),
    place("/etc/environment", ShellRc),
    // ---- logins ------------------------------------------------------------
    place(".ssh/authorized_keys", AuthorizedKeys),
    place(".ssh/authorized_keys2", AuthorizedKeys),
    // ---- schedules and services --------------------------------------------
    place("/etc/cron*/", Cron),
    place("/etc/anacrontab", Cron),
    place("/var/spool/cron/", Cron),
    place("~/.config/systemd/", Systemd),
    place("~/.local/share/systemd/", Systemd),
    place("/etc/systemd/", Systemd),
    place("/lib/systemd/", Systemd),
    place("/usr/lib/systemd/", Systemd),
    place("~/Library/LaunchAgents/", Launchd),
    place("~/Library/LaunchDaemons/", Launchd),
    place("/Library/LaunchAgents/", Launchd),
    place("/Library/LaunchDaemons/", Launchd),
    // ---- system startup and trust ------------------------------------------
    place("~/.config/autostart/", SystemStartup),
    // KDE Plasma runs these scripts at login (and sources `env/` before
    // the session starts); Openbox and labwc run their `autostart`.
    place("~/.config/autostart-scripts/", SystemStartup),
    place("~/.config/plasma-workspace/env/", SystemStartup),
    place("~/.config/plasma-workspace/shutdown/", SystemStartup),
    place("~/.config/openbox/autostart", SystemStartup),
    place("~/.config/labwc/autostart", SystemStartup),
    place("/etc/xdg/autostart/", SystemStartup),
    place("/etc/rc.local", SystemStartup),
    place("/etc/init.d/", SystemStartup),
    place("/etc/sudoers", SystemStartup),
    place("/etc/sudoers.d/", SystemStartup),
    place("/etc/ld.so.preload", SystemStartup),
    place("/etc/passwd", SystemStartup),
    // ---- agents inside editors ----------------------------------------------
    // Agents that run in an editor rather than from the shell, so no agent
    // preset lists them: their settings say which commands run without
    // asking (Windsurf's `cascadeCommandsAllowList`, Roo's and Cline's
    // `allowedCommands`, Zed's `always_allow_tool_actions`, Kiro's
    // `allowedTools`) and which MCP servers start. The VS Code family's
    // user settings (Code, Cursor, Windsurf, VSCodium), Windsurf's own
    // directory, Zed's settings, Kiro's settings and agents.
    place("~/.config/*/User/settings.json", AgentConfig),
    place(
        "~/Library/Application Support/*/User/settings.json",
        AgentConfig,
    ),
    place("~/.codeium/windsurf/", AgentConfig),
    place("~/.config/zed/settings.json", AgentConfig),
    place(".zed/settings.json", AgentConfig),
    place("~/.kiro/settings/", AgentConfig),
    place("~/.kiro/agents/", AgentConfig),
    place(".kiro/settings/", AgentConfig),
    place(".kiro/agents/", AgentConfig),
    // ---- git ---------------------------------------------------------------
    place(".git/hooks/", GitHook),
    // husky's hooks, which `core.hooksPath` (`.husky/_`) has git run.
    place(".husky/", GitHook),
    place(".git/modules/**/hooks/", GitHook),
    place(".git/config", GitConfig),
    place(".git/config.worktree", GitConfig),
    place(".git/modules/**/config", GitConfig),
    place(".git/modules/**/config.worktree", GitConfig),
    place(".git/worktrees/*/config.worktree", GitConfig),
    // Where the shared repository is: its config and hooks.
    place(".git/commondir", GitConfig),
    place(".git/modules/**/commondir", GitConfig),
    place(".git/worktrees/*/commondir", GitConfig),
    // A `.git` file (`gitdir: PATH`) sends git to another repository.
    place(".git", GitConfig),
    place("~/.gitconfig", GitConfigGlobal),
    place("~/.config/git/config", GitConfigGlobal),
    place("/etc/gitconfig", GitConfigGlobal),
];

/// Directories inside the places above that are not protected, relative
/// to aq's state directory: a session's own temporary directory, which
/// `aq run` gives the sandbox as its `TMPDIR` (`sessions/ID/tmp`).
pub const AQ_STATE_WRITABLE: &[&str] = &["sessions/*/tmp/"];

/// Every place of a kind.
pub fn of_kind(kind: PlaceKind) -> impl Iterator<Item = &'static Place> {
    PLACES.iter().filter(move |p| p.kind == kind)
}
