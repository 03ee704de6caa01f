//! Command-line flags: one definition per flag, with its help.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// A command firewall and sandbox for AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "aq", version, about, long_about = None)]
pub struct Cli {
    /// Apply this policy file after the user and project files.
    ///
    /// An explicit choice, with the power of the user's own file: it may
    /// loosen the policy. See docs/policy.md.
    #[arg(long, global = true, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the decision on a command line, and why.
    ///
    /// Example: aq explain -- 'curl -fsSL https://example.invalid/i.sh | sh'
    Explain(ExplainArgs),
    /// Validate policy files without running anything.
    ///
    /// Checks the given files, or else the user file, the project file and
    /// --policy FILE. Prints `ok: PATH` or the error with PATH:LINE:COLUMN;
    /// exits 0 when all are valid, 2 otherwise.
    Check(CheckArgs),
    /// Write, show and trust policy files.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Run an agent or any command in a supervised session.
    ///
    /// Every command it starts through PATH is judged by the firewall,
    /// logged, and blocked (exit 126) or held for approval (`aq approve`).
    /// Returns the command's exit code.
    ///
    /// Example: aq run -- claude
    Run(RunArgs),
    /// Answer the asks of running sessions, from your own terminal.
    Approve(ApproveArgs),
    /// Follow running sessions live, and answer their asks, in a console.
    ///
    /// Shows each decision as it is logged (command, rule, decision), the
    /// counts, network destinations and the asks waiting for a human. Keys:
    /// o allow once, s allow for the session, d deny, k skip, arrows
    /// select, / filter, q quit. Like `aq approve`, it needs a terminal of
    /// your own and refuses to run inside a session. `--json` streams the
    /// events as JSON lines instead, and answers nothing.
    ///
    /// Example: aq watch --latest
    Watch(WatchArgs),
    /// Let sessions do one thing more, in your policy file (not the repository's).
    ///
    /// `aq allow PATH` (write), `--read-only PATH`, `--net HOST[:PORT]`,
    /// `--command 'PROGRAM [SUBCOMMAND]'`; `--remove` takes it back.
    ///
    /// Example: aq allow ~/.cache/acme
    Allow(GrantArgs),
    /// Keep sessions from one thing, in your policy file.
    ///
    /// `aq deny PATH` (masked, and the secret rules fire on it), `--net HOST`
    /// (out of the allowlist), `--command 'PROGRAM [SUBCOMMAND]'` (blocked).
    ///
    /// Example: aq deny --command 'terraform apply'
    Deny(GrantArgs),
    /// List the grants your policy file holds, as the lines that made them.
    Grants,
    /// The workspace's checkpoints, newest last (docs/undo.md).
    ///
    /// Every `aq run` session and every agent hook takes them: one when it
    /// starts, one before each command that may change the workspace. Each
    /// line: the id, the time, the session, the files changed since the
    /// checkpoint before, and the command that came next.
    ///
    /// Example: aq checkpoints --latest
    Checkpoints(CheckpointsArgs),
    /// What changed in the workspace since a checkpoint.
    ///
    /// A unified diff for text files, one line for a binary file, and mode
    /// and link changes; default: since the start of the latest session.
    ///
    /// Example: aq diff --stat
    Diff(DiffArgs),
    /// Put the workspace back as it was at a checkpoint.
    ///
    /// Default: the start of the latest session in this workspace. Files
    /// created since are removed, deleted ones come back, modes, links and
    /// the repository's refs, stash and index are restored. A checkpoint of
    /// the current state is taken first, so an undo can be undone. Shows
    /// what it will change and asks; `--yes` does not ask.
    ///
    /// Example: aq undo --yes
    Undo(UndoArgs),
    /// Shell completions, on stdout: `aq completions bash > ~/.local/share/bash-completion/completions/aq`.
    Completions(CompletionsArgs),
    /// The manual pages: `aq.1` on stdout, or every page into --out DIR.
    Man(ManArgs),
    /// Risky or useless settings in the policy a session here would use.
    ///
    /// Each finding has a rule id, a severity and what to do. Exits 1 on a
    /// high finding, or on any with --strict.
    ///
    /// Example: aq lint --agent claude
    Lint(LintArgs),
    /// Print the sandbox a session here would get, as an OS sandbox profile.
    ///
    /// `--os macos`: the Seatbelt profile `aq run` would hand to
    /// `sandbox-exec` (the profile and agent preset in force, secrets denied
    /// last), to review or to try by hand. The session directory and the
    /// broker's port are examples, said so at the top. Like `aq run`, it
    /// creates the missing writable caches and agent state it grants.
    /// `--os linux` has no such file (the sandbox is namespaces, mounts,
    /// Landlock and seccomp): `aq verify` tries it for real.
    ///
    /// Example: aq sandbox-profile --os macos --agent claude
    SandboxProfile(SandboxProfileArgs),
    /// Report on a session: what ran, what was blocked or asked, approvals.
    Report(ReportArgs),
    /// Session logs: a recap of the latest, the list, chain verification.
    Audit(AuditArgs),
    /// What this machine offers the kernel sandbox, and which profiles work.
    ///
    /// One line per check (ok, limited or missing, with the reason): user,
    /// mount, PID, IPC and network namespaces (tried for real), Landlock ABI,
    /// seccomp, cgroup v2 delegation. Then the profiles that will work.
    /// Exits 0 when the default profile (strict) can run, 1 otherwise.
    ///
    /// Example: aq doctor --fix
    Doctor(DoctorArgs),
    /// Try to cross every sandbox boundary for real, from inside a sandbox.
    ///
    /// Builds the sandbox `aq run` would (the effective policy and profile,
    /// default strict) around a throwaway workspace and a fake home full of
    /// fake secrets, and runs 30+ probes in it: secret reads (direct, through
    /// links, /proc), writes outside the workspace, network, the caller's
    /// environment and processes, denied syscalls, capabilities, teardown of
    /// a daemon. One line per probe (pass, LEAK or ERROR); exits 0 when all
    /// pass, 1 on any LEAK or ERROR, 125 when the sandbox cannot be built.
    /// The battery expects the strict baseline: a profile that opens the
    /// network or /tmp on purpose shows those probes as LEAK.
    ///
    /// Example: aq verify --profile dev
    Verify(VerifyArgs),
    /// Scan a repository for what would hurt an agent or its user.
    ///
    /// Lifecycle scripts, hooks, tasks and agent configs that run code,
    /// instructions aimed at agents, hidden text, secrets, links out of the
    /// tree. Reads every file (git-ignored ones too), runs nothing. Exits 2
    /// when a finding at --fail-on or above exists, 0 otherwise, 64 on a
    /// usage error.
    ///
    /// Example: aq preflight --format sarif > preflight.sarif
    Preflight(PreflightArgs),
    /// An agent's native hook before a shell command: reads the agent's
    /// event on stdin, decides with the policy for its working directory,
    /// logs it, and answers in the agent's own format.
    ///
    /// Agents: claude, codex, gemini, cursor, copilot, windsurf, cline,
    /// opencode. An error refuses the command. `aq enable AGENT --hook`
    /// installs it.
    Hook(HookArgs),
    /// Install aq as an agent's own hook (`--hook`), or show what is installed.
    ///
    /// `aq enable claude --hook` adds `aq hook claude` to Claude Code's
    /// settings (its other entries and formatting kept, the file before kept
    /// by aq); `--scope project` puts it in the workspace's file instead.
    /// `aq enable --status` lists each agent: found, hook installed, preset.
    Enable(EnableArgs),
    /// Take out what `aq enable` installed: the file as it was, when
    /// nothing else changed it since; else only aq's entry.
    Disable(DisableArgs),
    /// MCP servers under aq: `aq mcp run -- SERVER ARGS`.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// One probe of `aq verify`, run inside its sandbox (internal).
    #[command(name = "__probe", hide = true)]
    Probe(ProbeArgs),
    /// A ProxyCommand for ssh through the session's network broker:
    /// `ssh -o ProxyCommand='aq __connect %h %p'` (internal).
    #[command(name = "__connect", hide = true)]
    Connect(ConnectArgs),
    /// Prunes one workspace's checkpoints, in the background (internal:
    /// started by sessions and hooks at most once a day).
    #[command(name = "__prune-checkpoints", hide = true)]
    PruneCheckpoints(WorkspaceArg),
}

#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// The relay's port on 127.0.0.1 (default: 3128, the Linux sandbox's;
    /// on macOS the broker's port on the host's loopback).
    #[arg(long, default_value_t = aq_session::network::PROXY_PORT)]
    pub relay_port: u16,
    /// The host to reach (on the allowlist, with its port).
    pub host: String,
    /// The port.
    pub port: u16,
}

#[derive(Debug, Args)]
pub struct PreflightArgs {
    /// The repository to scan (default: the current directory).
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
    /// Output format (default: text).
    #[arg(long, value_enum, default_value_t = PreflightFormat::Text)]
    pub format: PreflightFormat,
    /// Exit 2 when a finding at this severity or above exists
    /// (default: always exit 0 after a scan).
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PreflightFormat {
    /// Grouped by severity, with a one-line summary, for a person.
    Text,
    /// One JSON object, for tools.
    Json,
    /// SARIF 2.1.0, for code-scanning UIs.
    Sarif,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Any finding.
    Low,
    /// Medium, high or critical.
    Medium,
    /// High or critical.
    High,
    /// Critical only.
    Critical,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Profile to verify (default: the session default, strict).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Whose project policy applies (default: the git root of the current
    /// directory, as `aq run`); the probes run in a throwaway workspace.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// `all`, a probe name, or a helper name.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the exact commands that enable what is missing (never runs them).
    #[arg(long)]
    pub fix: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write `aq.1` and one page per command (`aq-run.1`, ...) into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Exit 1 on any finding, not only on a high one.
    #[arg(long)]
    pub strict: bool,
    /// One JSON object: the findings with rule, severity, what and fix.
    #[arg(long)]
    pub json: bool,
    /// Lint with this agent preset's hosts in play.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// The profile to lint (default: the one `aq run` would use).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Whose project policy applies (default: here).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SandboxProfileArgs {
    /// Whose sandbox: `macos` (a Seatbelt profile) or `linux`.
    #[arg(long, value_enum, value_name = "OS")]
    pub os: SandboxOs,
    /// The profile (default: the one `aq run` would use).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// With this agent preset's grants (its state, configuration, hosts).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Whose project policy and workspace (default: here).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

/// The system a sandbox profile is printed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SandboxOs {
    /// macOS: a Seatbelt profile for `sandbox-exec`.
    Macos,
    /// Linux: no profile file (the sandbox is built in the kernel).
    Linux,
}

#[derive(Debug, Args)]
pub struct GrantArgs {
    /// A path (`~/...`, absolute or relative to here).
    #[arg(value_name = "PATH", required_unless_present_any = ["net", "command"], conflicts_with_all = ["net", "command"])]
    pub path: Option<String>,
    /// Read only, not write (`aq allow` of a path).
    #[arg(long)]
    pub read_only: bool,
    /// A host instead of a path: `*.` for subdomains, `:PORT` for one port.
    #[arg(long, value_name = "HOST[:PORT]", conflicts_with = "command")]
    pub net: Option<String>,
    /// With `--net HOST`: only these methods may go to the host (its
    /// HTTPS requests are read by the broker), e.g. `GET,HEAD`.
    #[arg(
        long,
        value_name = "METHOD,...",
        requires = "net",
        value_delimiter = ','
    )]
    pub methods: Vec<String>,
    /// With `--methods`: only paths under this prefix (repeat for more).
    #[arg(long = "path", value_name = "PREFIX", requires = "methods")]
    pub path_prefix: Vec<String>,
    /// A program, and optionally its subcommand, instead of a path.
    #[arg(long, value_name = "PROGRAM [SUBCOMMAND]")]
    pub command: Option<String>,
    /// The profile a path applies to (default: your default profile).
    #[arg(long, value_name = "NAME", conflicts_with = "here")]
    pub profile: Option<String>,
    /// A path grant only for sessions of this workspace (every profile).
    #[arg(long)]
    pub here: bool,
    /// Take the grant back.
    #[arg(long)]
    pub remove: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Sandbox profile: strict (default), dev, network-isolated, ci,
    /// shims-only, or one defined in policy (`aq policy show` lists them).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// The workspace (default: the git root of the current directory, else
    /// the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// No banner and no recap on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// The full banner: every layer of the sandbox, limits, the network,
    /// the agent preset's grants, notes, how asks are answered.
    #[arg(long, short, conflicts_with = "quiet")]
    pub verbose: bool,
    /// The network: `off` (only the sandbox's own loopback), or
    /// `allow:DOMAIN[,DOMAIN...]` (only these, through the broker; `*.` for
    /// subdomains, `:PORT` to name a port). Default: the profile's, and the
    /// policy's `[network] allow`. Both need the kernel sandbox: refused
    /// with `shims-only`, whose network is the host's.
    #[arg(long, value_name = "MODE")]
    pub net: Option<String>,
    /// What of the home directory the sandbox may read: `private` (only the
    /// toolchains, caches and configuration builds read) or `read-only` (all
    /// of it; secrets stay masked). Default: the profile's `home`.
    #[arg(long, value_name = "ACCESS", value_parser = ["private", "read-only"])]
    pub home: Option<String>,
    /// Scan the workspace with `aq preflight` first and record what it
    /// finds in the session log (also `[session] preflight = true`).
    #[arg(long)]
    pub preflight: bool,
    /// Pin a name to an address, like curl's --resolve: it is not looked up,
    /// and a private or loopback address is allowed for it. Repeatable.
    #[arg(long, value_name = "NAME:ADDR")]
    pub resolve: Vec<String>,
    /// The agent preset: what the agent needs (its state writable, its
    /// config read-only, its variables, its key kept outside through the key
    /// proxy). Default: recognised from the command (`claude`, `codex`,
    /// `npx @google/gemini-cli`, ...); `none` opts out. `aq policy show
    /// --agents` lists them.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// A descriptor above 2 that the command inherits (`aq run --pass-fd 3
    /// -- cmd 3<file`). Every other descriptor aq was started with is closed
    /// at the sandbox's door. Repeatable.
    #[arg(long, value_name = "FD")]
    pub pass_fd: Vec<i32>,
    /// Learn mode: decide and log as usual, but let every ask run at once
    /// (logged as answered `learn`; never waits for an approver). Blocks
    /// stay blocks, unlisted hosts stay refused. Then `aq policy suggest`
    /// turns what asked into `aq allow` lines. Also a profile's
    /// `mode = "learn"` (in your own policy file only).
    #[arg(long)]
    pub learn: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// Started by a launcher of `aq enable --wrap`: inside a sandbox
    /// already, run the program itself instead of nesting (internal).
    #[arg(long, hide = true)]
    pub wrapped: bool,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Run a stdio MCP server in the sandbox: its stdin and stdout pass
    /// through untouched, each tool call is logged, and `[mcp] deny`
    /// refuses tools.
    ///
    /// Example: aq mcp run --name files -- npx -y @modelcontextprotocol/server-filesystem .
    Run(McpRunArgs),
    /// Make an MCP client start its stdio servers under `aq mcp run`
    /// (name and env kept; URL servers are listed as not wrappable).
    Wrap(McpWrapArgs),
    /// Put the client's servers back as they were before `aq mcp wrap`.
    Unwrap(McpWrapArgs),
}

#[derive(Debug, Args)]
pub struct McpWrapArgs {
    /// The client: claude-code, claude-desktop, cursor, codex or gemini.
    #[arg(long, value_name = "CLIENT")]
    pub client: String,
    /// Only this server (default: all of them).
    #[arg(long, value_name = "NAME", conflicts_with = "all")]
    pub server: Option<String>,
    /// Every server (the default).
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct McpRunArgs {
    /// Sandbox profile (default: the policy's, `strict`).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// The server's name in the log and in `[mcp] deny` (default: its program).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The network, as for `aq run` (default: off).
    #[arg(long, value_name = "MODE")]
    pub net: Option<String>,
    /// The workspace (default: the git root of the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The server's command and arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct EnableArgs {
    /// The agent (claude, codex, gemini, cursor, copilot, windsurf, cline, opencode).
    #[arg(value_name = "AGENT", required_unless_present = "status")]
    pub agent: Option<String>,
    /// Install `aq hook AGENT` in the agent's own hook configuration.
    #[arg(long)]
    pub hook: bool,
    /// Make typing the agent's name start it under `aq run` with its
    /// preset: a launcher first on PATH (one marked block in your shell's
    /// startup files).
    #[arg(long)]
    pub wrap: bool,
    /// Whose configuration: the user's (default) or the project's.
    #[arg(long, value_enum, default_value_t = HookScope::User)]
    pub scope: HookScope,
    /// List each agent: found (path, version), hook installed (where), preset.
    #[arg(long, conflicts_with_all = ["agent", "hook", "wrap"])]
    pub status: bool,
}

#[derive(Debug, Args)]
pub struct DisableArgs {
    /// The agent whose hook to take out.
    #[arg(value_name = "AGENT")]
    pub agent: String,
    /// Whose configuration: the user's (default) or the project's.
    #[arg(long, value_enum, default_value_t = HookScope::User)]
    pub scope: HookScope,
}

/// Whose configuration a hook goes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookScope {
    /// The user's, in the home directory.
    User,
    /// The project's, in the workspace.
    Project,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent whose hook contract to speak.
    #[arg(value_name = "AGENT")]
    pub agent: String,
}

#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// Only this session (an id or a unique prefix).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Answer what is pending now, then exit (default: keep waiting).
    #[arg(long)]
    pub once: bool,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Only this session (an id or a unique prefix); default: every
    /// running session, and those that start while it runs.
    #[arg(long, value_name = "ID", conflicts_with = "latest")]
    pub session: Option<String>,
    /// Only the newest session.
    #[arg(long)]
    pub latest: bool,
    /// Stream every event as one JSON object per line on stdout (no
    /// terminal needed, no answering); with --session or --latest, exit
    /// when that session ends.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A session id (or unique prefix), session directory or log file.
    #[arg(
        value_name = "SESSION",
        required_unless_present = "latest",
        conflicts_with = "latest"
    )]
    pub session: Option<String>,
    /// The newest session.
    #[arg(long)]
    pub latest: bool,
    /// Output format (default: Markdown; HTML with --open).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Write the HTML report into the session's directory, print its path,
    /// and open it in a browser when there is a desktop to open it on.
    #[arg(long)]
    pub open: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Markdown, for a person.
    Md,
    /// JSON, for tools.
    Json,
    /// One self-contained HTML page: safe to open, no network.
    Html,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    pub command: Option<AuditCommand>,
    /// Recap the newest session (the default when no subcommand is given).
    #[arg(long)]
    pub latest: bool,
    /// A short recap on the terminal (the default).
    #[arg(long)]
    pub recap: bool,
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// List sessions, newest last.
    List,
    /// Check a session log's hash chain; names the first bad line.
    Verify {
        /// A session id (or unique prefix), session directory or log file.
        #[arg(value_name = "SESSION")]
        session: String,
    },
    /// Send a session's log to a collector: OpenTelemetry logs over
    /// OTLP/HTTP, or RFC 5424 syslog.
    ///
    /// Sends the whole log (the newest session's unless --session is
    /// given) and exits 0, or exits 1 saying how many events got there
    /// when the collector refuses or cannot be reached. With --follow, keeps
    /// sending what a running session adds until it ends. `[audit] export`
    /// in your policy ships every session live instead.
    ///
    /// Example: aq audit export --format otlp --endpoint http://127.0.0.1:4318
    Export(ExportArgs),
    /// Figures across sessions: the rules that fired most (by decision),
    /// the hosts refused most, asks and how they were answered
    /// (approved, denied, timeout, no-approver, learn), how many sessions
    /// and over what time.
    ///
    /// Example: aq audit summary --all --since 7d --json
    Summary(AuditSummaryArgs),
}

#[derive(Debug, Args)]
pub struct AuditSummaryArgs {
    /// Every session on this machine (the state directory's sessions).
    #[arg(long)]
    pub all: bool,
    /// Only sessions started within this long (`7d`, `12h`, `30m`).
    #[arg(long, value_name = "AGE")]
    pub since: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormatArg {
    /// OpenTelemetry logs, OTLP/HTTP with JSON, POSTed to ENDPOINT/v1/logs.
    Otlp,
    /// RFC 5424 syslog (facility authpriv).
    Syslog,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The wire format.
    #[arg(long, value_enum)]
    pub format: ExportFormatArg,
    /// Where to: http(s)://HOST[:PORT] for otlp (default:
    /// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT);
    /// unix:///dev/log, udp://HOST:PORT or tcp://HOST:PORT for syslog.
    /// OTLP requests carry the headers of OTEL_EXPORTER_OTLP_LOGS_HEADERS,
    /// else OTEL_EXPORTER_OTLP_HEADERS (`name=value,...`).
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// A session id (or unique prefix), session directory or log file
    /// (default: the newest session).
    #[arg(long, value_name = "SESSION", conflicts_with = "latest")]
    pub session: Option<String>,
    /// Every session: each log once; with --follow, every live session
    /// (an agent's hook sessions too) and those that start, until stopped.
    #[arg(long, conflicts_with_all = ["session", "latest"])]
    pub all: bool,
    /// The newest session (the default).
    #[arg(long)]
    pub latest: bool,
    /// Keep sending what the session adds until it ends.
    #[arg(long)]
    pub follow: bool,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// List every built-in rule, with its action under the effective policy,
    /// instead of explaining a command.
    #[arg(long, conflicts_with = "command")]
    pub rules: bool,
    /// Show what the engine knows a program can be made to do: run a
    /// command, read, write, upload, serve (and through which option).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["command", "rules"])]
    pub program: Option<String>,
    /// The command line, as the agent would pass it to `bash -c`. Several
    /// words are joined with spaces.
    #[arg(last = true, required_unless_present_any = ["rules", "program"])]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Policy files to check (default: the discovered user and project files).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Write a commented starter policy file.
    ///
    /// Default: the user file ($XDG_CONFIG_HOME/agent-quarantine/policy.toml).
    Init(InitArgs),
    /// Show the effective policy and what a session started here gets.
    ///
    /// Every rule's action and which file set it; per profile, the network
    /// (the broker's allowlist and pins), the writable and readable paths,
    /// each with where it came from: built in, your policy file (with the
    /// date of an `aq allow` grant), the repository's, or --policy.
    Show(ShowArgs),
    /// Let a project file loosen the policy, until its content changes.
    ///
    /// Default FILE: the project's agent-quarantine.toml.
    Trust(TrustArgs),
    /// Withdraw trust: the project file may only tighten the policy again.
    ///
    /// Default FILE: the project's agent-quarantine.toml.
    Untrust(TrustArgs),
    /// Fetch the team's managed policy, verify its signature, install it.
    ///
    /// SOURCE: an https:// URL of a managed.toml (its signature at
    /// URL.minisig), git+URL of a repository holding managed.toml and
    /// managed.toml.minisig, or an absolute path. Default: the managed
    /// file's `[managed] source`. The bundle must verify with the key the
    /// managed file in force pins (`--key` for the first install) and carry
    /// a higher `[managed] serial`; otherwise nothing changes. Root's job
    /// (docs/teams.md has a systemd timer and a launchd plist).
    Pull(PullArgs),
    /// Where the managed policy came from: source, serial, signer, age.
    Status(StatusArgs),
    /// Propose the `aq allow` lines that would have let sessions' asks and
    /// network refusals run, from their audit logs.
    ///
    /// Reads the latest session of this workspace unless --session or
    /// --all says otherwise; asks (answered or not, learn mode's too) and
    /// hosts the broker refused become the fewest lines that cover them,
    /// each with how often it was needed and in which sessions, and the
    /// policy-file entry it makes. Blocks are listed as not suggested, with
    /// their rule. Nothing is written without --write, which writes your
    /// own policy file as `aq allow` does (never a repository's).
    ///
    /// Example: aq run --learn -- make test && aq policy suggest --write
    Suggest(SuggestArgs),
}

#[derive(Debug, Args)]
pub struct PullArgs {
    /// Where to fetch the bundle from.
    pub source: Option<String>,
    /// The minisign public key (the `RW…` line) for a first install, when
    /// no managed file pins one yet.
    #[arg(long)]
    pub key: Option<String>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SuggestArgs {
    /// A session id (or unique prefix), session directory or log file.
    /// Repeatable.
    #[arg(long = "session", value_name = "ID", conflicts_with = "all")]
    pub sessions: Vec<String>,
    /// Every session on this machine (with --since: the recent ones).
    #[arg(long)]
    pub all: bool,
    /// Only sessions started within this long (`7d`, `12h`, `30m`).
    #[arg(long, value_name = "AGE")]
    pub since: Option<String>,
    /// Write the suggested lines into your own policy file, and say what
    /// was written.
    #[arg(long)]
    pub write: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Write the user file (the default).
    #[arg(long, conflicts_with = "project")]
    pub user: bool,
    /// Write agent-quarantine.toml at the workspace root (the git root).
    #[arg(long)]
    pub project: bool,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print the agent presets in full: what each grants its agent.
    #[arg(long)]
    pub agents: bool,
    /// Only this profile's part: what a session with `--profile NAME` gets.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Whose project policy and `[workspace]` grants apply (default: the
    /// git root of the current directory, else the directory, as `aq run`).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The policy file (default: the project's agent-quarantine.toml).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Which workspace's checkpoints.
#[derive(Debug, Args)]
pub struct WorkspaceArg {
    /// The workspace (default: the git repository around the current
    /// directory, or the directory itself), as for `aq run`.
    #[arg(long, short = 'C', value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckpointsArgs {
    /// Only this session's (an id or a unique prefix).
    #[arg(long, value_name = "ID", conflicts_with = "latest")]
    pub session: Option<String>,
    /// Only the latest session's.
    #[arg(long)]
    pub latest: bool,
    /// One JSON object per checkpoint, as a JSON array.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub workspace: WorkspaceArg,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The checkpoint (an id or a unique prefix).
    #[arg(value_name = "CHECKPOINT", conflicts_with = "session")]
    pub checkpoint: Option<String>,
    /// Since the start of this session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// One line per file with the lines added and removed.
    #[arg(long)]
    pub stat: bool,
    #[command(flatten)]
    pub workspace: WorkspaceArg,
}

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// Back to this checkpoint (an id or a unique prefix).
    #[arg(long, value_name = "CHECKPOINT", conflicts_with = "session")]
    pub to: Option<String>,
    /// Back to the start of this session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only these paths (files or directories); repeat for more.
    #[arg(long, value_name = "PATH")]
    pub path: Vec<PathBuf>,
    /// Do not ask first (needed without a terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub workspace: WorkspaceArg,
}
