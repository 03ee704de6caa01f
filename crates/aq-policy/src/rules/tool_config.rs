//! A tool's configuration set from the command line so that the tool runs
//! a command later, or installs from elsewhere: `npm config set
//! script-shell`, `pnpm config set ignore-scripts false`, `pip config set
//! global.index-url`, `direnv allow`. The keys are data
//! ([`aq_knowledge::tool_config::CONFIG_COMMANDS`]); the files these tools
//! read are judged where writes are (`files.rs`).

use aq_knowledge::tool_config::{KeyEffect, config_command, source_command};

use super::Ctx;
use crate::catalog::RuleId;

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(program) = c.program() else { return };
    let words: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    let verb = words.iter().find(|w| !w.starts_with('-')).copied();
    if matches!(
        (program, verb),
        ("direnv", Some("allow" | "permit" | "grant")) | ("mise" | "rtx", Some("trust"))
    ) {
        ctx.hit(
            RuleId::ToolConfigTrust,
            i,
            format!("`{program} {}` makes a project file run by itself in every later shell that enters the directory", verb.unwrap_or_default()),
        );
        return;
    }
    if let Some(s) = source_command(program, &words) {
        ctx.hit(
            RuleId::ToolConfigSource,
            i,
            format!(
                "`{program} {}` adds a package source: every later install trusts it",
                s.words.join(" ")
            ),
        );
        return;
    }
    let Some(tool) = config_command(program) else {
        return;
    };
    if !tool.requires.iter().all(|r| words.contains(r)) {
        return;
    }
    // Options may come anywhere (`npm config set -g k v`, `--location=user`);
    // conda's verbs are options (`conda config --set k v`).
    let conda = matches!(tool.program, "conda" | "mamba");
    let plain: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !w.starts_with('-') || conda && w.starts_with("--"))
        .collect();
    let Some(verb) = tool
        .verbs
        .iter()
        .find(|v| plain.len() > v.len() && plain[..v.len()] == v[..])
    else {
        return;
    };
    let rest = &plain[verb.len()..];
    // `set KEY VALUE`, `set KEY=VALUE`, several pairs (`npm set a=1 b=2`).
    let mut settings: Vec<(String, String)> = Vec::new();
    let mut k = 0;
    while k < rest.len() {
        if let Some((key, value)) = rest[k].split_once('=') {
            settings.push((key.to_string(), value.to_string()));
            k += 1;
        } else {
            settings.push((
                rest[k].to_string(),
                rest.get(k + 1).unwrap_or(&"").to_string(),
            ));
            k += 2;
        }
    }
    // Where the setting is written: the user's own file (`~/.npmrc`,
    // `~/.condarc`, pip's and go's), unless the line names the project's
    // (`npm config set --location=project`, `pip config --site`).
    let project = words
        .windows(2)
        .any(|w| matches!(w[0], "--location" | "-L") && matches!(w[1], "project" | "local"))
        || words.iter().any(|w| {
            matches!(
                *w,
                "--location=project" | "--site" | "--local" | "--location=local"
            )
        });
    for (key, value) in settings {
        match tool.effect(&key) {
            Some(KeyEffect::Runs) => ctx.hit(
                RuleId::PersistToolConfig,
                i,
                format!("`{program}` sets {key} to {value:?}: it runs that later, by itself"),
            ),
            Some(KeyEffect::Source) => ctx.hit(
                RuleId::ToolConfigSource,
                i,
                format!("`{program}` sets {key} for every later install"),
            ),
            // Any other key still changes the user's own configuration
            // (`npm config set //registry/:_authToken`, `prefix`): a write
            // outside the project, which asks.
            None if !project && program != "aws" => ctx.hit(
                RuleId::FsWriteHome,
                i,
                format!("`{program}` sets {key} in the user's own configuration"),
            ),
            None => {}
        }
    }
}
