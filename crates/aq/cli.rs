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
    /// The command line, as the agent would pass it to `bash -c`. Several
    /// words are joined with spaces.
    #[arg(last = true, required_unless_present = "rules")]
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
    /// Show the effective policy: every rule's action and which file set it.
    Show(ShowArgs),
    /// Let a project file loosen the policy, until its content changes.
    ///
    /// Default FILE: the project's agent-quarantine.toml.
    Trust(TrustArgs),
    /// Withdraw trust: the project file may only tighten the policy again.
    ///
    /// Default FILE: the project's agent-quarantine.toml.
    Untrust(TrustArgs),
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
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The policy file (default: the project's agent-quarantine.toml).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}
