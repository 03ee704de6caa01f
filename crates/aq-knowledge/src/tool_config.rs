//! Settings of tools that make the tool run a command later, and what
//! switches the guard off: the data behind the `persist-tool-*` and
//! `guard-*` rules.
//!
//! A program is not dangerous when it is run; its configuration is, when it
//! names a command the tool runs on its own later (npm's `script-shell`, an
//! ssh `ProxyCommand`, a Python `.pth` line, a conda activation script), or
//! when it is the file that starts the guard (an agent's hook settings).
//! This module lists those settings once, as plain sorted Rust tables (the
//! shape of [`crate::git`] and [`crate::programs::places`]): the compiler
//! checks the enums, the unit tests below check the rest (sorted, no
//! duplicates, patterns in the form the places reader takes). A TOML file
//! would add a parser at build time for tables this small; `programs.toml`
//! stays the catalog of programs, this module the catalog of their
//! settings.
//!
//! The git keys that run programs are their own table, [`crate::git`].
//!
//! # Tables
//!
//! - [`CONFIG_COMMANDS`]: the `config set` verbs of package managers and
//!   which of their keys run a command ([`KeyEffect::Runs`]) or change where
//!   packages come from ([`KeyEffect::Source`]).
//! - [`CONFIG_FILES`]: files whose lines name a command the tool runs, and
//!   the words that make a line do so; and startup files whose every line is
//!   code ([`FileEffect::Startup`]).
//! - [`HOOK_WORDS`]: words that, in an edit of an agent's settings, mean the
//!   edit touches its hooks or its sandbox.
//! - [`SUPERVISORS`] and [`GUARD_ENV_PREFIXES`]: the processes and the
//!   environment of the guard itself.

/// What setting a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEffect {
    /// The value is a command or a script the tool runs later (a shell for
    /// every script, a module loaded into every run).
    Runs,
    /// The value changes where packages come from, or whether their install
    /// scripts run: every later install trusts it.
    Source,
}

/// A key of a tool's configuration.
#[derive(Debug, Clone, Copy)]
pub struct ConfigKey {
    /// The key as the tool spells it; a trailing `*` matches any suffix and
    /// a leading `*` any prefix (`*-script`, `@*:registry`).
    pub key: &'static str,
    /// What setting it does.
    pub effect: KeyEffect,
}

/// A tool's command that sets its configuration.
#[derive(Debug, Clone, Copy)]
pub struct ConfigCommand {
    /// The program.
    pub program: &'static str,
    /// The words after the program that set a key (`config set`, `set`).
    pub verbs: &'static [&'static [&'static str]],
    /// Its keys that matter, sorted by key.
    pub keys: &'static [ConfigKey],
    /// Options without which the verbs only read (`go env -w`).
    pub requires: &'static [&'static str],
}

const fn runs(key: &'static str) -> ConfigKey {
    ConfigKey {
        key,
        effect: KeyEffect::Runs,
    }
}

const fn source(key: &'static str) -> ConfigKey {
    ConfigKey {
        key,
        effect: KeyEffect::Source,
    }
}

/// npm's keys (npm-config(7)), shared by the package managers that read
/// `.npmrc` (pnpm, and yarn 1).
const NPM_KEYS: &[ConfigKey] = &[
    // `prepare-script`, `onload-script`: old lifecycle overrides.
    runs("*-script"),
    source("@*:registry"),
    runs("browser"),
    runs("editor"),
    runs("git"),
    runs("global-pnpmfile"),
    source("ignore-scripts"),
    runs("init-module"),
    runs("node-options"),
    runs("onload-script"),
    runs("pnpmfile"),
    source("registry"),
    runs("script-shell"),
    runs("shell"),
    runs("viewer"),
    runs("yarn-path"),
];

/// yarn 2+'s keys (`.yarnrc.yml`).
const YARN_KEYS: &[ConfigKey] = &[
    runs("*-script"),
    source("*Registry*"),
    source("enableScripts"),
    source("ignore-scripts"),
    source("npmRegistryServer"),
    runs("plugins"),
    source("registry"),
    runs("script-shell"),
    runs("scriptShell"),
    runs("shell"),
    runs("yarn-path"),
    runs("yarnPath"),
];

/// `go env -w`'s variables: the C compiler, the flags of every build
/// (`-toolexec`, `-exec` run programs) and the toolchain run programs; the
/// proxy and checksum settings say where modules come from.
const GO_KEYS: &[ConfigKey] = &[
    runs("AR"),
    runs("CC"),
    runs("CXX"),
    runs("GOFLAGS"),
    source("GOINSECURE"),
    source("GONOPROXY"),
    source("GONOSUMDB"),
    source("GOPRIVATE"),
    source("GOPROXY"),
    source("GOSUMDB"),
    runs("GOTOOLCHAIN"),
    runs("PKG_CONFIG"),
];

/// pip's keys: a package index is the only thing its configuration can
/// point elsewhere (it runs no command of its own).
const PIP_KEYS: &[ConfigKey] = &[
    source("*.extra-index-url"),
    source("*.find-links"),
    source("*.index-url"),
    source("*.trusted-host"),
];

/// conda's keys.
const CONDA_KEYS: &[ConfigKey] = &[
    source("channel_alias"),
    source("channels"),
    source("custom_channels"),
    source("default_channels"),
];

/// How conda and mamba are told to change a setting.
const CONDA_VERBS: &[&[&str]] = &[
    &["config", "--set"],
    &["config", "--add"],
    &["config", "--append"],
    &["config", "--prepend"],
];

/// The AWS CLI's settings (`~/.aws/config`): `credential_process` is a
/// command it runs for every call that needs credentials.
const AWS_KEYS: &[ConfigKey] = &[runs("*.credential_process"), runs("credential_process")];

/// Every tool's `config set`, sorted by program.
pub const CONFIG_COMMANDS: &[ConfigCommand] = &[
    ConfigCommand {
        program: "aws",
        verbs: &[&["configure", "set"]],
        keys: AWS_KEYS,
        requires: &[],
    },
    ConfigCommand {
        program: "bun",
        verbs: &[&["config", "set"]],
        keys: NPM_KEYS,
        requires: &[],
    },
    // `bundle config set mirror.https://rubygems.org URL`.
    ConfigCommand {
        program: "bundle",
        verbs: &[&["config", "set"], &["config"]],
        keys: &[source("mirror.*")],
        requires: &[],
    },
    // `composer config repositories.x vcs URL`, `composer config repo.packagist …`.
    ConfigCommand {
        program: "composer",
        verbs: &[&["config"]],
        keys: &[source("repo.*"), source("repositories.*")],
        requires: &[],
    },
    ConfigCommand {
        program: "conda",
        verbs: CONDA_VERBS,
        keys: CONDA_KEYS,
        requires: &[],
    },
    ConfigCommand {
        program: "go",
        verbs: &[&["env"]],
        keys: GO_KEYS,
        requires: &["-w"],
    },
    ConfigCommand {
        program: "mamba",
        verbs: CONDA_VERBS,
        keys: CONDA_KEYS,
        requires: &[],
    },
    ConfigCommand {
        program: "npm",
        verbs: &[&["config", "set"], &["set"], &["c", "set"]],
        keys: NPM_KEYS,
        requires: &[],
    },
    // `pdm config pypi.url URL`, `pdm config pypi.private.url URL`.
    ConfigCommand {
        program: "pdm",
        verbs: &[&["config"]],
        keys: &[source("pypi.*")],
        requires: &[],
    },
    ConfigCommand {
        program: "pip",
        verbs: &[&["config", "set"]],
        keys: PIP_KEYS,
        requires: &[],
    },
    ConfigCommand {
        program: "pip3",
        verbs: &[&["config", "set"]],
        keys: PIP_KEYS,
        requires: &[],
    },
    ConfigCommand {
        program: "pnpm",
        verbs: &[&["config", "set"], &["set"]],
        keys: NPM_KEYS,
        requires: &[],
    },
    // `poetry config repositories.x URL` (`poetry source add` is a
    // [`SOURCE_COMMANDS`] entry).
    ConfigCommand {
        program: "poetry",
        verbs: &[&["config"]],
        keys: &[source("repositories.*")],
        requires: &[],
    },
    ConfigCommand {
        program: "yarn",
        verbs: &[&["config", "set"]],
        keys: YARN_KEYS,
        requires: &[],
    },
];

/// A tool's command that adds a package source, whatever its arguments
/// name: every later install trusts what that source serves.
#[derive(Debug, Clone, Copy)]
pub struct SourceCommand {
    /// The program.
    pub program: &'static str,
    /// The words after the program, options among them when the tool spells
    /// the verb as one (`gem sources --add`); other options may come between.
    pub words: &'static [&'static str],
}

const fn adds_source(program: &'static str, words: &'static [&'static str]) -> SourceCommand {
    SourceCommand { program, words }
}

/// Commands that add a package source, sorted by program and words.
pub const SOURCE_COMMANDS: &[SourceCommand] = &[
    adds_source("choco", &["source", "add"]),
    adds_source("dotnet", &["nuget", "add", "source"]),
    adds_source("gem", &["source", "--add"]),
    adds_source("gem", &["source", "-a"]),
    adds_source("gem", &["sources", "--add"]),
    adds_source("gem", &["sources", "-a"]),
    adds_source("nuget", &["sources", "add"]),
    adds_source("poetry", &["source", "add"]),
];

/// The entry of [`SOURCE_COMMANDS`] that `words` (a command's arguments)
/// spell for `program`: its words first, in order, options that are not
/// among them passed over.
pub fn source_command(program: &str, words: &[&str]) -> Option<&'static SourceCommand> {
    SOURCE_COMMANDS
        .iter()
        .filter(|s| s.program == program)
        .find(|s| {
            let plain: Vec<&str> = words
                .iter()
                .copied()
                .filter(|w| !w.starts_with('-') || s.words.contains(w))
                .collect();
            plain.len() > s.words.len() && plain[..s.words.len()] == s.words[..]
        })
}

/// The `config set` of `program`, if it has one here.
pub fn config_command(program: &str) -> Option<&'static ConfigCommand> {
    CONFIG_COMMANDS.iter().find(|c| c.program == program)
}

/// Whether `key` matches the table's `pattern` (see [`ConfigKey::key`]).
fn key_matches(pattern: &str, key: &str) -> bool {
    let (pat, key) = (pattern.to_ascii_lowercase(), key.to_ascii_lowercase());
    match (pat.strip_prefix('*'), pat.strip_suffix('*')) {
        (Some(rest), Some(_)) => {
            let mid = rest.trim_end_matches('*');
            key.contains(mid)
        }
        (Some(suffix), None) => key.ends_with(suffix) && key.len() > suffix.len(),
        (None, Some(prefix)) => key.starts_with(prefix),
        (None, None) => match pat.split_once('*') {
            Some((a, b)) => key.starts_with(a) && key.ends_with(b) && key.len() > a.len() + b.len(),
            None => pat == key,
        },
    }
}

impl ConfigCommand {
    /// What setting `key` does, if it matters: [`KeyEffect::Runs`] first.
    pub fn effect(&self, key: &str) -> Option<KeyEffect> {
        let hits = self.keys.iter().filter(|k| key_matches(k.key, key));
        let mut found = None;
        for k in hits {
            if k.effect == KeyEffect::Runs {
                return Some(KeyEffect::Runs);
            }
            found = Some(k.effect);
        }
        found
    }
}

/// What writing a tool's configuration file does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileEffect {
    /// Every line is code the tool runs when it starts (a `.pth` line that
    /// starts with `import`, an editor's startup script, a conda activation
    /// script): any write makes something run later.
    Startup,
    /// A line runs a command when it holds one of the file's words; other
    /// lines are settings, judged as any other write there.
    Keys(&'static [&'static str]),
    /// A line runs a program of the line's choosing when it sets one of
    /// these keys to a path (`rustc-wrapper = "/tmp/x"`, `credential_process
    /// = ~/.local/bin/helper`) outside the system's program directories; a
    /// program found on the `PATH` (`rustc-wrapper = "sccache"`, `linker =
    /// "clang"`) is the tool's ordinary setting.
    Program(&'static [&'static str]),
    /// Vim script: every line is code ([`vim_line_runs`]) but a setting of
    /// [`VIM_SETTINGS`] (`set number`), a colour scheme, syntax and
    /// filetype switches, comments, and key mappings that run no command.
    Vim,
    /// An agent's or editor's settings (VS Code's, Zed's), whose keys with
    /// these words may name a program it runs (an interpreter's path, an
    /// MCP server's command): a write naming one is judged as the agent's
    /// configuration, a readable one naming none as the project's own
    /// settings ([`settings_word`]). Nothing here blocks by itself.
    Settings(&'static [&'static str]),
}

/// A tool's configuration file.
#[derive(Debug, Clone, Copy)]
pub struct ConfigFile {
    /// Where, in the form of [`crate::programs::places`] (`~/...` under the
    /// home, `/...` absolute, anything else anywhere in a path; a trailing
    /// `/` for a directory and what is under it; a component may be a glob).
    pub pattern: &'static str,
    /// The tool that reads it.
    pub tool: &'static str,
    /// What writing it does.
    pub effect: FileEffect,
}

const fn file(pattern: &'static str, tool: &'static str, effect: FileEffect) -> ConfigFile {
    ConfigFile {
        pattern,
        tool,
        effect,
    }
}

use FileEffect::{Keys, Program, Settings, Startup, Vim};

/// Vim's options that only change how it shows or edits text, by their
/// long and short names (`set number`, `set ts=4`, `set nowrap`); options
/// that name a program or a file to read (`shell`, `makeprg`, `exrc`,
/// `runtimepath`) are not among them. Sorted.
pub const VIM_SETTINGS: &[&str] = &[
    "ai",
    "autoindent",
    "background",
    "backspace",
    "backup",
    "belloff",
    "bg",
    "bs",
    "cc",
    "cindent",
    "clipboard",
    "colorcolumn",
    "compatible",
    "completeopt",
    "cp",
    "cuc",
    "cul",
    "cursorcolumn",
    "cursorline",
    "enc",
    "encoding",
    "errorbells",
    "et",
    "expandtab",
    "fdm",
    "fenc",
    "fileencoding",
    "fo",
    "foldlevel",
    "foldmethod",
    "formatoptions",
    "hidden",
    "history",
    "hls",
    "hlsearch",
    "ic",
    "ignorecase",
    "incsearch",
    "is",
    "laststatus",
    "lazyredraw",
    "lbr",
    "lcs",
    "linebreak",
    "list",
    "listchars",
    "ls",
    "mouse",
    "nu",
    "number",
    "numberwidth",
    "pumheight",
    "relativenumber",
    "rnu",
    "ru",
    "ruler",
    "sc",
    "scrolloff",
    "scs",
    "shiftwidth",
    "shortmess",
    "showcmd",
    "showmatch",
    "showmode",
    "si",
    "sidescrolloff",
    "signcolumn",
    "sm",
    "smartcase",
    "smartindent",
    "so",
    "softtabstop",
    "spell",
    "spelllang",
    "splitbelow",
    "splitright",
    "sts",
    "sw",
    "swapfile",
    "tabstop",
    "termguicolors",
    "textwidth",
    "title",
    "ts",
    "ttyfast",
    "tw",
    "undofile",
    "updatetime",
    "vb",
    "visualbell",
    "wildmenu",
    "wildmode",
    "wrap",
    "writebackup",
];

/// Whether a line of vim script runs something: anything but a comment, a
/// `set` of [`VIM_SETTINGS`] only, `syntax`, `filetype`, `colorscheme`, and
/// a key mapping without a word of [`VIM_RUNS`] (it runs an editor command
/// when the key is pressed).
pub fn vim_line_runs(line: &str) -> bool {
    let line = line.trim().trim_start_matches(':');
    if line.is_empty() || line.starts_with('"') {
        return false;
    }
    let mut words = line.split_whitespace();
    let first = words.next().unwrap_or("");
    match first {
        "set" | "se" | "setlocal" | "setl" | "setglobal" | "setg" => !words.all(|w| {
            let name: String = w
                .chars()
                .take_while(|ch| ch.is_ascii_alphanumeric())
                .collect();
            let plain = name
                .strip_prefix("no")
                .or_else(|| name.strip_prefix("inv"))
                .filter(|n| VIM_SETTINGS.binary_search(n).is_ok())
                .is_some();
            VIM_SETTINGS.binary_search(&name.as_str()).is_ok() || plain
        }),
        "syntax" | "sy" | "filetype" | "colorscheme" | "colo" => false,
        m if m.ends_with("map") || m.ends_with("noremap") || m == "no" => {
            let lower = line.to_ascii_lowercase();
            VIM_RUNS.iter().any(|w| lower.contains(w))
        }
        _ => true,
    }
}

/// The words of a vim script line that run a shell command or other code
/// (`:!cmd`, `system()`, `autocmd`, `:lua`, `:python3`, `:source`): in a
/// key mapping, what the key runs.
const VIM_RUNS: &[&str] = &[
    "!",
    "autocmd",
    "au ",
    "call ",
    "exe",
    "job_start",
    "jobstart",
    "lua",
    "perl",
    "py3",
    "python",
    "pyx",
    "ruby",
    "so ",
    "source",
    "system",
    "term",
];

/// The words of an `.npmrc` line that make npm, pnpm or yarn 1 run a
/// command ([`NPM_KEYS`]' [`KeyEffect::Runs`] keys, as they are written in
/// the file).
const NPMRC_RUNS: &[&str] = &[
    "script-shell",
    "shell=",
    "shell =",
    "-script",
    "node-options",
    "init-module",
    "pnpmfile",
    "yarn-path",
    "editor=",
    "editor =",
    "git=",
    "git =",
    "browser=",
    "viewer=",
];

/// Cargo's configuration keys that name a program it runs: the compiler
/// and its wrappers, rustdoc, a target's linker and runner (also `-C
/// linker=` in `rustflags`), credential providers.
const CARGO_RUNS: &[&str] = &[
    "credential-provider",
    "linker",
    "runner",
    "rustc",
    "rustdoc",
];

/// Aider's settings that run a command: the linter and the tests it runs
/// after each edit, the notification command, the editor, a file of chat
/// commands loaded at start (`/run` among them).
const AIDER_RUNS: &[&str] = &[
    "editor",
    "lint-cmd",
    "load",
    "notifications-command",
    "test-cmd",
];

/// Words of VS Code settings keys that name a program the editor or an
/// extension runs (`python.defaultInterpreterPath`, `eslint.runtime`,
/// `terminal.integrated.profiles.*`, MCP servers), or its arguments.
const VSCODE_RUNS: &[&str] = &[
    "args",
    "command",
    "env",
    "executable",
    "interpreter",
    "mcp",
    "path",
    "runtime",
    "server",
    "shell",
    "task",
    "terminal",
];

/// Words of Zed settings keys that name a program it runs (context
/// servers, language servers' binaries, the terminal's shell).
const ZED_RUNS: &[&str] = &[
    "args",
    "binary",
    "command",
    "context_servers",
    "env",
    "path",
    "shell",
    "terminal",
];

/// Bazel's options that run a program of the user's choosing.
const BAZEL_RUNS: &[&str] = &["credential_helper", "run_under", "workspace_status_command"];

/// JVM options that load code into every run: agents, native agents.
const JVM_AGENTS: &[&str] = &["-agentlib", "-agentpath", "-javaagent"];

/// `go env -w` settings that make every build run a program: `-toolexec`
/// and `-exec` in `GOFLAGS`, the C compilers of cgo.
const GO_ENV_RUNS: &[&str] = &["-exec", "cc=", "cxx=", "toolexec"];

/// gdb commands that run something: a shell command (`shell`, `!`,
/// `pipe`, `|`), Python or Guile, a script sourced.
const GDB_RUNS: &[&str] = &["!", "guile", "pipe", "python", "shell", "source", "|"];

/// ssh_config(5) keywords that run a local command (case does not matter).
const SSH_RUNS: &[&str] = &[
    // Another file's settings, ProxyCommand among them.
    "include",
    "proxycommand",
    "localcommand",
    "permitlocalcommand",
    "knownhostscommand",
    "match exec",
    "pkcs11provider",
    "securitykeyprovider",
];

/// Every tool configuration file that can make something run, sorted by
/// pattern.
pub const CONFIG_FILES: &[ConfigFile] = &[
    // Agents' and editors' settings files, judged by their keys when the
    // write can be read: a key that runs a command blocks; a readable
    // edit of the workspace's copy that names none (nor a hook, approval
    // or sandbox word) is the project's own settings.
    file(".aider.conf.yml", "aider", Keys(AIDER_RUNS)),
    // Bazel runs these programs for every build (`--workspace_status_command`,
    // `--run_under`, `--credential_helper`), in the user's, the system's and
    // the project's settings.
    file(".bazelrc", "bazel", Program(BAZEL_RUNS)),
    // Cargo runs these programs for every build, test or run.
    file(".cargo/config", "cargo", Program(CARGO_RUNS)),
    file(".cargo/config.toml", "cargo", Program(CARGO_RUNS)),
    // Maven passes these to the JVM of every build: an agent runs in it.
    file(".mvn/jvm.config", "maven", Keys(JVM_AGENTS)),
    file(".npmrc", "npm", Keys(NPMRC_RUNS)),
    file(".pnpmfile.cjs", "pnpm", Startup),
    file(".vscode/settings.json", "vscode", Settings(VSCODE_RUNS)),
    // VS Code runs a task with `"runOn": "folderOpen"` when the folder opens.
    file(".vscode/tasks.json", "vscode", Keys(&["folderopen"])),
    file(".yarnrc", "yarn", Keys(NPMRC_RUNS)),
    file(
        ".yarnrc.yml",
        "yarn",
        Keys(&["yarnpath", "plugins", "script-shell", "shell"]),
    ),
    file(".zed/settings.json", "zed", Settings(ZED_RUNS)),
    file("/etc/bazel.bazelrc", "bazel", Program(BAZEL_RUNS)),
    // `mvn` sources it as a shell script at every run.
    file("/etc/mavenrc", "maven", Startup),
    file("/etc/ssh/ssh_config", "ssh", Keys(SSH_RUNS)),
    file("/etc/ssh/ssh_config.d/", "ssh", Keys(SSH_RUNS)),
    // Python runs every line of a `.pth` that starts with `import`, and
    // these modules, at every start.
    file("dist-packages/*.pth", "python", Startup),
    file("dist-packages/sitecustomize.py", "python", Startup),
    file("dist-packages/usercustomize.py", "python", Startup),
    // conda runs these at every `conda activate`.
    file("etc/conda/activate.d/", "conda", Startup),
    file("etc/conda/deactivate.d/", "conda", Startup),
    file("site-packages/*.pth", "python", Startup),
    file("site-packages/sitecustomize.py", "python", Startup),
    file("site-packages/usercustomize.py", "python", Startup),
    // R runs it at every start.
    file("~/.Rprofile", "R", Startup),
    file("~/.aider.conf.yml", "aider", Keys(AIDER_RUNS)),
    file("~/.aws/config", "aws", Program(&["credential_process"])),
    file("~/.cargo/config", "cargo", Program(CARGO_RUNS)),
    file("~/.cargo/config.toml", "cargo", Program(CARGO_RUNS)),
    file(
        "~/.condarc",
        "conda",
        Keys(&["pre_command", "post_command"]),
    ),
    file(
        "~/.config/*/User/settings.json",
        "vscode",
        Settings(VSCODE_RUNS),
    ),
    // The direnv library every `.envrc` loads, and its own configuration.
    file(
        "~/.config/Code/User/tasks.json",
        "vscode",
        Keys(&["folderopen"]),
    ),
    file("~/.config/direnv/", "direnv", Startup),
    file("~/.config/emacs/", "emacs", Startup),
    file("~/.config/go/env", "go", Keys(GO_ENV_RUNS)),
    // Every line of sway's, i3's and Hyprland's configuration may start a
    // program (`exec`, `exec_always`, `exec-once`, a key bound to `exec`).
    file("~/.config/hypr/hyprland.conf", "hyprland", Keys(&["exec"])),
    file("~/.config/i3/config", "i3", Keys(&["exec"])),
    file("~/.config/irb/irbrc", "irb", Startup),
    file("~/.config/nvim/", "neovim", Startup),
    file("~/.config/pip/pip.conf", "pip", Keys(&[])),
    file("~/.config/sway/config", "sway", Keys(&["exec"])),
    file("~/.config/sway/config.d/", "sway", Keys(&["exec"])),
    file("~/.config/zed/settings.json", "zed", Settings(ZED_RUNS)),
    // docker runs `docker-credential-NAME` for a registry a helper is set for.
    file(
        "~/.docker/config.json",
        "docker",
        Keys(&["credhelpers", "credsstore"]),
    ),
    file("~/.emacs", "emacs", Startup),
    file("~/.emacs.d/", "emacs", Startup),
    file("~/.exrc", "vi", Vim),
    // gdb runs these at every start: shell commands, Python, scripts sourced.
    file("~/.gdbearlyinit", "gdb", Keys(GDB_RUNS)),
    file("~/.gdbinit", "gdb", Keys(GDB_RUNS)),
    file("~/.gradle/gradle.properties", "gradle", Keys(JVM_AGENTS)),
    // Gradle runs init scripts before every build.
    file("~/.gradle/init.d/", "gradle", Startup),
    file("~/.gradle/init.gradle", "gradle", Startup),
    file("~/.gradle/init.gradle.kts", "gradle", Startup),
    file("~/.gvimrc", "vim", Vim),
    file("~/.i3/config", "i3", Keys(&["exec"])),
    file("~/.ideavimrc", "ideavim", Vim),
    // IPython runs its profiles' startup scripts and configuration (Python).
    file("~/.ipython/*/ipython_config.py", "ipython", Startup),
    file("~/.ipython/*/ipython_kernel_config.py", "ipython", Startup),
    file("~/.ipython/*/startup/", "ipython", Startup),
    file("~/.irbrc", "irb", Startup),
    file("~/.lldbinit*", "lldb", Keys(&["script", "shell"])),
    file("~/.mavenrc", "maven", Startup),
    file("~/.nanorc", "nano", Keys(&[])),
    file("~/.npmrc", "npm", Keys(NPMRC_RUNS)),
    file("~/.pip/pip.conf", "pip", Keys(&[])),
    file("~/.pryrc", "pry", Startup),
    // psql's `\!` runs a shell command, `\o |cmd` and `\g |cmd` pipe to
    // one, a backquoted value is one's output, `program` in `\copy`.
    file("~/.psqlrc*", "psql", Keys(&["\\!", "`", "|", "program"])),
    // Python runs it at every interactive start ($PYTHONSTARTUP is its
    // usual value).
    file("~/.pythonrc", "python", Startup),
    file("~/.pythonrc.py", "python", Startup),
    // sqlite3's dot-commands that run a program or load code.
    file(
        "~/.sqliterc",
        "sqlite3",
        Keys(&[".load", ".shell", ".system", "|", "edit("]),
    ),
    file("~/.ssh/config", "ssh", Keys(SSH_RUNS)),
    file("~/.ssh/config.d/", "ssh", Keys(SSH_RUNS)),
    file(
        "~/.tmux.conf",
        "tmux",
        Keys(&["run-shell", "run ", "if-shell", "set-hook", "#("]),
    ),
    file("~/.vim/", "vim", Vim),
    // Vim loads every file of these at start (and `pack/*/start/`).
    file("~/.vim/after/", "vim", Startup),
    file("~/.vim/ftplugin/", "vim", Startup),
    file("~/.vim/pack/", "vim", Startup),
    file("~/.vim/plugin/", "vim", Startup),
    file("~/.vimrc", "vim", Vim),
    file("~/.wgetrc", "wget", Keys(&[])),
    file("~/.yarnrc", "yarn", Keys(NPMRC_RUNS)),
    file(
        "~/.yarnrc.yml",
        "yarn",
        Keys(&["yarnpath", "plugins", "script-shell", "shell"]),
    ),
    file(
        "~/Library/Application Support/*/User/settings.json",
        "vscode",
        Settings(VSCODE_RUNS),
    ),
];

/// The words of `text` (lowercased by the caller or not) that make a line
/// of `file` run a command, if any: the first found.
pub fn runs_word(file: &ConfigFile, text: &str) -> Option<&'static str> {
    match file.effect {
        Startup => Some("(every line runs)"),
        Keys(words) => {
            let lower = text.to_ascii_lowercase();
            words.iter().copied().find(|w| lower.contains(w))
        }
        Program(keys) => {
            let lower = text.to_ascii_lowercase();
            keys.iter().copied().find(|k| {
                lower
                    .match_indices(k)
                    .any(|(at, _)| names_own_program(&lower[at + k.len()..]))
            })
        }
        Settings(_) => None,
        // `echo 'set x' >> ~/.vimrc`: literal `\n` is a new line to vim.
        Vim => text
            .lines()
            .flat_map(|l| l.split("\\n"))
            .any(vim_line_runs)
            .then_some("(a line of vim script that runs)"),
    }
}

/// For a [`FileEffect::Settings`] file, the first of its words in `text`
/// (a key that may name a program it runs); `None` for the other files.
pub fn settings_word(file: &ConfigFile, text: &str) -> Option<&'static str> {
    let Settings(words) = file.effect else {
        return None;
    };
    let lower = text.to_ascii_lowercase();
    words.iter().copied().find(|w| lower.contains(w))
}

/// Whether the text after a key (`= "/tmp/x"`, up to the end of the line)
/// names a program by its path, outside the system's program directories
/// (`/usr/bin/clang` is the system's).
fn names_own_program(after_key: &str) -> bool {
    let line = after_key.split(['\n']).next().unwrap_or("");
    let line = line.split("\\n").next().unwrap_or(line);
    line.split(|ch: char| {
        !(ch.is_ascii_alphanumeric() || matches!(ch, '/' | '~' | '$' | '.' | '_' | '-' | '{' | '}'))
    })
    .filter(|w| w.starts_with(['/', '~', '$']) || w.starts_with("./") || w.starts_with("../"))
    .any(|w| {
        ![
            "/usr/bin/",
            "/bin/",
            "/usr/sbin/",
            "/sbin/",
            "/usr/local/bin/",
            "/opt/homebrew/bin/",
        ]
        .iter()
        .any(|d| w.starts_with(d))
    })
}

/// Words that, in an edit of an agent's settings (a `jq` filter, a `sed`
/// script, interpreter code, the text written), mean the edit touches the
/// agent's hooks, the switches that turn them off, or its sandbox and
/// permissions (what runs without asking): Claude Code's `hooks`, `disableAllHooks`,
/// a `Bash(*)` allowed for everything, `allowedTools`,
/// `allowManagedHooksOnly`, `sandbox`, `defaultMode`; Codex's `[hooks]`,
/// `sandbox_mode`, `approval_policy`; Gemini's and Qwen's `hooks`,
/// `sandbox`, `tools.exclude`, `trustedFolders`, `autoAccept` and the approval mode; Cursor's `hooks.json`, Copilot's and Cline's
/// hook files. Lowercase; matched in the lowercased text.
pub const HOOK_WORDS: &[&str] = &[
    "allowed_tools",
    // Roo's and Cline's `allowedCommands` (VS Code settings).
    "allowedcommands",
    "allowedtools",
    // Windsurf's `cascadeCommandsAllowList`.
    "allowlist",
    // Zed's `always_allow_tool_actions`, Cline's MCP `alwaysAllow`.
    "always_allow",
    "alwaysallow",
    "approval",
    "auto_accept",
    "auto_approve",
    // Gemini's and Qwen's `autoAccept`, Windsurf's `autoExecutionMode`.
    "autoaccept",
    "autoapprove",
    "autoexecution",
    "bash(*",
    "bypasspermissions",
    // `--dangerously-*`, `skipDangerousModePermissionPrompt`.
    "dangerous",
    "defaultmode",
    "hook",
    "pretooluse",
    "sandbox",
    "shell(*",
    "trust_level",
    "trustedfolders",
    "yolo",
];

/// Whether `text` (a settings file's JSON written, or a `jq` edit of one)
/// sets an agent's permission for every tool or for the shell to `allow`:
/// OpenCode's `"permission": "allow"`, `{"*": "allow"}`, `{"bash":
/// "allow"}`, `.permission.bash = "allow"`. Spaces and case do not count.
pub fn allows_every_command(text: &str) -> bool {
    let squashed: String = text
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '\\')
        .flat_map(char::to_lowercase)
        .collect();
    let Some(at) = squashed.find("permission") else {
        return false;
    };
    let after = &squashed[at..];
    [
        // JSON.
        "permission\":\"allow\"",
        "\"*\":\"allow\"",
        "\"bash\":\"allow\"",
        "\"bash\":{\"*\":\"allow\"",
        // jq paths.
        "permission=\"allow\"",
        "permission.bash=\"allow\"",
        "permission.\"*\"=\"allow\"",
        "permission[\"*\"]=\"allow\"",
        "permission.bash.\"*\"=\"allow\"",
    ]
    .iter()
    .any(|p| after.contains(p))
}

/// The first of [`HOOK_WORDS`] in `text`.
pub fn hook_word(text: &str) -> Option<&'static str> {
    let lower = text.to_ascii_lowercase();
    HOOK_WORDS.iter().copied().find(|w| lower.contains(w))
}

/// Process names of the guard itself: aq, its launcher names and its shim
/// (`aq-shim`, which every shimmed program runs through). The agents' own
/// programs (whose parent aq is, or who run aq's hook) come from the agent
/// presets.
pub const SUPERVISORS: &[&str] = &["agent-quarantine", "aq", "aq-shim"];

/// Options of agents' command lines that switch their own approval of
/// commands off (Claude Code's `--dangerously-skip-permissions` and
/// `--permission-mode bypassPermissions`, Codex's
/// `--dangerously-bypass-approvals-and-sandbox` and `--yolo`, Gemini's and
/// Qwen's `--yolo` and `--approval-mode yolo`, Copilot's `--allow-all-tools`,
/// Cursor's `--force`, Aider's `--yes-always`): lowercase parts of the word.
pub const AGENT_BYPASS_PARTS: &[&str] = &[
    "dangerously",
    "bypass",
    "yolo",
    "allow-all",
    "skip-permissions",
    "danger-full-access",
    "yes-always",
];

/// Options of one agent that switch its approval of commands off though
/// their words do not say so ([`AGENT_BYPASS_PARTS`]): Cursor's `--force`
/// (`-f`), the `-y` of Gemini, Qwen and Crush (`--yolo`). Sorted by program.
pub const AGENT_BYPASS_OPTIONS: &[(&str, &[&str])] = &[
    ("crush", &["-y"]),
    ("cursor-agent", &["--force", "-f"]),
    ("gemini", &["-y"]),
    ("qwen", &["-y"]),
];

/// Whether an agent's argument (or an option with its value) switches its
/// approval of commands off.
pub fn bypasses_agent(arg: &str) -> bool {
    let lower = arg.to_ascii_lowercase();
    AGENT_BYPASS_PARTS.iter().any(|p| lower.contains(p))
}

/// Whether `arg` is one of `agent`'s own options that switch its approval
/// of commands off ([`AGENT_BYPASS_OPTIONS`]).
pub fn bypasses_named_agent(agent: &str, arg: &str) -> bool {
    AGENT_BYPASS_OPTIONS
        .iter()
        .any(|(a, opts)| *a == agent && opts.contains(&arg))
}

/// Directories where agents keep hook scripts their settings name
/// (`~/.claude/hooks/aq-guard.sh`), in the home or the project: moving or
/// deleting one takes a hook away. (Adding a script there runs nothing
/// until a settings file names it, and is judged as that write.)
pub const AGENT_HOOK_DIRS: &[&str] = &[
    ".claude/hooks",
    ".codex/hooks",
    ".cursor/hooks",
    ".gemini/hooks",
    ".github/hooks",
    ".qwen/hooks",
    ".copilot/hooks",
    ".kilocode/hooks",
    ".clinerules/hooks",
    // Kiro's hooks are the files of this directory (`*.kiro.hook`).
    ".kiro/hooks",
    ".factory/hooks",
    "Documents/Cline/Hooks",
];

/// Whether `path` is in one of [`AGENT_HOOK_DIRS`] (or is one).
pub fn in_agent_hook_dir(path: &str) -> bool {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    // The directories' components compared in place, without a list each:
    // every write and move asks this.
    AGENT_HOOK_DIRS.iter().any(|d| {
        parts
            .windows(d.split('/').count())
            .any(|w| w.iter().copied().eq(d.split('/')))
    })
}

/// Parts of a process, service or launch agent name that say it is a guard
/// of the agent under some other name (`agent-firewall`,
/// `com.example.quarantine.plist`): stopping it switches the guard off.
pub const GUARD_NAME_PARTS: &[&str] = &["firewall", "quarantine"];

/// Whether a process or service name (or a word of one) names a guard by
/// [`GUARD_NAME_PARTS`].
pub fn names_guard(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    GUARD_NAME_PARTS.iter().any(|p| lower.contains(p))
}

/// Prefixes of the environment variables of the guard: a line that unsets
/// or sets one is switching the guard, not configuring a program.
pub const GUARD_ENV_PREFIXES: &[&str] = &["AGENT_QUARANTINE", "AQ_"];

/// Whether `name` is a variable of the guard ([`GUARD_ENV_PREFIXES`]).
pub fn is_guard_env(name: &str) -> bool {
    GUARD_ENV_PREFIXES.iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted<T: Ord + std::fmt::Debug>(items: &[T], what: &str) {
        for w in items.windows(2) {
            assert!(
                w[0] < w[1],
                "{what}: {:?} must sort before {:?}",
                w[1],
                w[0]
            );
        }
    }

    #[test]
    fn tables_are_sorted_without_duplicates() {
        sorted(
            &CONFIG_COMMANDS
                .iter()
                .map(|c| c.program)
                .collect::<Vec<_>>(),
            "CONFIG_COMMANDS",
        );
        sorted(
            &CONFIG_FILES.iter().map(|c| c.pattern).collect::<Vec<_>>(),
            "CONFIG_FILES",
        );
        sorted(
            &SOURCE_COMMANDS
                .iter()
                .map(|c| (c.program, c.words))
                .collect::<Vec<_>>(),
            "SOURCE_COMMANDS",
        );
        sorted(HOOK_WORDS, "HOOK_WORDS");
        sorted(VIM_SETTINGS, "VIM_SETTINGS");
        sorted(CARGO_RUNS, "CARGO_RUNS");
        sorted(SUPERVISORS, "SUPERVISORS");
        sorted(
            &AGENT_BYPASS_OPTIONS
                .iter()
                .map(|(a, _)| *a)
                .collect::<Vec<_>>(),
            "AGENT_BYPASS_OPTIONS",
        );
        sorted(GUARD_ENV_PREFIXES, "GUARD_ENV_PREFIXES");
        for c in CONFIG_COMMANDS {
            let keys: Vec<&str> = c.keys.iter().map(|k| k.key).collect();
            sorted(&keys, c.program);
            assert!(!c.verbs.is_empty(), "{}: no verbs", c.program);
        }
    }

    #[test]
    fn patterns_have_the_places_form() {
        for f in CONFIG_FILES {
            let p = f.pattern;
            assert!(
                !p.is_empty() && !p.contains("//") && !p.starts_with("./"),
                "{p}"
            );
            assert!(!p.contains('\\') && p.trim() == p, "{p}");
            if let Keys(words) | Settings(words) = f.effect {
                for w in words {
                    assert_eq!(*w, w.to_ascii_lowercase(), "{p}: {w} must be lowercase");
                }
            }
        }
        for w in HOOK_WORDS {
            assert_eq!(*w, w.to_ascii_lowercase());
        }
    }

    #[test]
    fn keys_match_as_written() {
        assert!(
            source_command("poetry", &["source", "add", "x", "https://example.invalid"]).is_some()
        );
        assert!(source_command("gem", &["sources", "-a", "https://example.invalid"]).is_some());
        assert!(source_command("gem", &["sources", "--list"]).is_none());
        assert!(source_command("poetry", &["source", "show"]).is_none());
        let npm = config_command("npm").unwrap();
        assert_eq!(npm.effect("script-shell"), Some(KeyEffect::Runs));
        assert_eq!(npm.effect("prepare-script"), Some(KeyEffect::Runs));
        assert_eq!(npm.effect("registry"), Some(KeyEffect::Source));
        assert_eq!(npm.effect("@corp:registry"), Some(KeyEffect::Source));
        assert_eq!(npm.effect("fund"), None);
        assert_eq!(npm.effect("init-author-name"), None);
        let pip = config_command("pip").unwrap();
        assert_eq!(pip.effect("global.index-url"), Some(KeyEffect::Source));
        assert_eq!(pip.effect("global.timeout"), None);
        let yarn = config_command("yarn").unwrap();
        assert_eq!(yarn.effect("yarnPath"), Some(KeyEffect::Runs));
        assert_eq!(
            yarn.effect("npmScopes.corp.npmRegistryServer"),
            Some(KeyEffect::Source)
        );
    }

    #[test]
    fn ssh_words_find_the_command_keywords() {
        let ssh = CONFIG_FILES
            .iter()
            .find(|f| f.pattern == "~/.ssh/config")
            .unwrap();
        assert!(runs_word(ssh, "Host *\n  ProxyCommand nc %h %p").is_some());
        assert!(runs_word(ssh, "Match exec \"true\"").is_some());
        assert!(runs_word(ssh, "Host bastion\n  HostName 203.0.113.20\n  User deploy").is_none());
    }

    fn config_file(pattern: &str) -> &'static ConfigFile {
        CONFIG_FILES.iter().find(|f| f.pattern == pattern).unwrap()
    }

    #[test]
    fn a_program_key_runs_when_it_names_a_program_by_its_path() {
        let cargo = config_file("~/.cargo/config.toml");
        for text in [
            "[build]\nrustc-wrapper = \"/home/dev/.local/bin/rw\"",
            "[build]\\nrustc-wrapper=\"/tmp/x\"",
            "[target.x86_64-unknown-linux-gnu]\nrunner = \"./run.sh\"",
            "rustflags = [\"-C\", \"linker=/tmp/ld\"]",
        ] {
            assert!(runs_word(cargo, text).is_some(), "{text}");
        }
        for text in [
            "[build]\nrustc-wrapper = \"sccache\"",
            "[target.x86_64-unknown-linux-gnu]\nlinker = \"clang\"",
            "linker = \"/usr/bin/clang\"",
            "[build]\ntarget-dir = \"/tmp/target\"\njobs = 4",
        ] {
            assert!(runs_word(cargo, text).is_none(), "{text}");
        }
        let aws = config_file("~/.aws/config");
        assert!(runs_word(aws, "[default]\ncredential_process=/tmp/x").is_some());
        assert!(runs_word(aws, "[profile dev]\nregion = eu-west-1").is_none());
    }

    #[test]
    fn vim_settings_run_nothing_and_the_rest_is_code() {
        for line in [
            "set number relativenumber",
            "set ts=4 sw=4 expandtab",
            "set nowrap",
            "syntax on",
            "colorscheme desert",
            "\" a comment",
            "nnoremap <leader>w :w<CR>",
        ] {
            assert!(!vim_line_runs(line), "{line}");
        }
        for line in [
            "set x",
            "set shell=/tmp/sh",
            "set exrc",
            "autocmd VimEnter * !make",
            "source /tmp/x.vim",
            "nnoremap <leader>m :!make<CR>",
            "x",
        ] {
            assert!(vim_line_runs(line), "{line}");
        }
    }

    #[test]
    fn an_agent_allowed_every_command_is_told_by_its_permission() {
        for text in [
            "{\"permission\":{\"bash\":\"allow\"}}",
            "{ \"permission\": { \"*\": \"allow\" } }",
            "{\"permission\": \"allow\"}",
            ".permission.bash = \"allow\"",
            ".permission[\"*\"] = \"allow\"",
        ] {
            assert!(allows_every_command(text), "{text}");
        }
        for text in [
            "{\"permission\":{\"bash\":\"ask\"}}",
            "{\"permission\":{\"edit\":\"allow\"}}",
            "{\"model\":\"x\",\"*\":\"allow\"}",
            ".theme = \"dark\"",
        ] {
            assert!(!allows_every_command(text), "{text}");
        }
    }

    #[test]
    fn settings_files_name_the_keys_that_may_run_something() {
        let vscode = config_file(".vscode/settings.json");
        assert!(
            settings_word(vscode, ".\"python.defaultInterpreterPath\" = \"/tmp/py\"").is_some()
        );
        assert!(settings_word(vscode, ".\"editor.formatOnSave\" = true").is_none());
        // A settings file blocks nothing by itself: its keys only ask.
        assert!(runs_word(vscode, "\"terminal.integrated.shell.linux\": \"/tmp/x\"").is_none());
        let aider = config_file(".aider.conf.yml");
        assert!(runs_word(aider, "test-cmd: pytest").is_some());
        assert!(runs_word(aider, "model: sonnet").is_none());
        let gdb = config_file("~/.gdbinit");
        assert!(runs_word(gdb, "shell id").is_some());
        assert!(runs_word(gdb, "set print pretty on").is_none());
        let bazel = config_file(".bazelrc");
        assert!(runs_word(bazel, "build --workspace_status_command=/tmp/s.sh").is_some());
        assert!(runs_word(bazel, "build --run_under=valgrind").is_none());
        let go = config_file("~/.config/go/env");
        assert!(runs_word(go, "GOFLAGS=-toolexec=/tmp/x").is_some());
        assert!(runs_word(go, "GOPROXY=direct").is_none());
    }

    #[test]
    fn guard_env_is_aq_s_own() {
        assert!(is_guard_env("AQ_POLICY"));
        assert!(is_guard_env("AGENT_QUARANTINE_OFF"));
        assert!(!is_guard_env("AQUA"));
        assert!(!is_guard_env("PATH"));
    }
}
