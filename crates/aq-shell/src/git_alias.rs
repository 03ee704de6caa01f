//! git aliases the line defines, expanded where they are used: after `git
//! config alias.p 'push --force'`, `git p origin main` runs `git push
//! --force origin main`; `git -c alias.x='push -f' x` does the same in one
//! command. An alias whose value starts with `!` is a shell command.

use crate::model::{Command, Word};
use crate::walk::Walker;
use crate::wrappers::Inner;

/// git's options before the subcommand that take a value as the next word.
const VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--config-env",
    "--exec-path",
    "--list-cmds",
    "--attr-source",
];

/// Where git's subcommand is among its arguments, after its own options.
fn subcommand_index(args: &[Word]) -> Option<usize> {
    let mut k = 0;
    while k < args.len() {
        let t = args[k].text.as_str();
        if !t.starts_with('-') {
            return Some(k);
        }
        if VALUE_OPTIONS.contains(&t) && t != "--exec-path" {
            k += 1;
        }
        k += 1;
    }
    None
}

/// `alias.NAME=VALUE` given with `git -c` before the subcommand.
fn inline_aliases(args: &[Word], sub: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < sub {
        let kv = match args[k].text.as_str() {
            "-c" => {
                k += 1;
                args.get(k).map(|w| w.text.as_str())
            }
            t => t.strip_prefix("-c").filter(|s| s.contains('=')),
        };
        if let Some((key, value)) = kv.and_then(|kv| kv.split_once('='))
            && let Some(name) = alias_name(key)
        {
            out.push((name, value.to_string()));
        }
        k += 1;
    }
    out
}

/// The alias a configuration key defines (`alias.p`, `Alias.P`), lowercased.
fn alias_name(key: &str) -> Option<String> {
    let lower = key.to_ascii_lowercase();
    lower
        .strip_prefix("alias.")
        .filter(|n| !n.is_empty())
        .map(str::to_string)
}

/// `git config [scope] [--add|--replace-all] alias.NAME VALUE` and `git
/// config set [scope] alias.NAME VALUE`: the alias it defines.
fn configured_alias(args: &[Word], sub: usize) -> Option<(String, String)> {
    if args[sub].text != "config" {
        return None;
    }
    let mut rest: Vec<&str> = Vec::new();
    let mut k = sub + 1;
    while k < args.len() {
        let t = args[k].text.as_str();
        match t {
            "-f" | "--file" | "--blob" | "--type" | "--comment" => k += 1,
            // Reads and removals define nothing.
            "--get" | "--get-all" | "--get-regexp" | "--unset" | "--unset-all" | "-l"
            | "--list" | "--remove-section" | "--rename-section" | "get" | "unset" | "list" => {
                return None;
            }
            "set" if rest.is_empty() => {}
            _ if t.starts_with('-') => {}
            _ => rest.push(t),
        }
        k += 1;
    }
    match rest.as_slice() {
        [key, value] => alias_name(key).map(|n| (n, value.to_string())),
        _ => None,
    }
}

impl Walker {
    /// Records the git aliases `command` defines, and returns what a use of
    /// one (defined earlier on the line, or with `-c` on this command) runs.
    pub(crate) fn git_alias_inner(&mut self, command: &Command) -> Option<Inner> {
        if command.program() != Some("git") {
            return None;
        }
        let args = command.args();
        let sub = subcommand_index(args)?;
        if let Some((name, value)) = configured_alias(args, sub) {
            self.git_aliases.insert(name, value);
            return None;
        }
        let used = args[sub].text.to_ascii_lowercase();
        let value = inline_aliases(args, sub)
            .into_iter()
            .rev()
            .find(|(n, _)| *n == used)
            .map(|(_, v)| v)
            .or_else(|| self.git_aliases.get(&used).cloned())?;
        let label = format!("git alias {used}");
        let rest = &args[sub + 1..];
        if let Some(script) = value.strip_prefix('!') {
            // git runs `sh -c 'VALUE "$@"' VALUE ARGS...`.
            let mut script = script.to_string();
            for w in rest {
                script.push(' ');
                script.push_str(&format!("'{}'", w.text.replace('\'', r"'\''")));
            }
            return Some(Inner::Script {
                label,
                script,
                privileged: false,
                stdin_script: false,
                positional: None,
            });
        }
        let mut argv = vec![command.argv[0].clone()];
        argv.extend(args[..sub].iter().cloned());
        argv.extend(
            crate::xargs::split_blanks(&value)
                .into_iter()
                .map(Word::literal),
        );
        argv.extend(rest.iter().cloned());
        Some(Inner::Argv {
            label,
            argv,
            privileged: false,
            keeps_stdin: true,
        })
    }
}

#[cfg(test)]
mod tests {
    fn runs(line: &str) -> Vec<String> {
        crate::analyze(line)
            .commands
            .iter()
            .filter(|c| c.via.last().is_some_and(|v| v.starts_with("git alias")))
            .map(|c| c.display())
            .collect()
    }

    #[test]
    fn an_alias_defined_on_the_line_is_expanded_where_it_is_used() {
        assert_eq!(
            runs("git config alias.p 'push --force' && git p origin main"),
            ["git push --force origin main"]
        );
        assert_eq!(
            runs("git config --global alias.P 'push -f'; git -C app p"),
            ["git -C app push -f"]
        );
        assert_eq!(
            runs("git -c alias.x='push --force-with-lease' x origin"),
            ["git -c 'alias.x=push --force-with-lease' push --force-with-lease origin"]
        );
        assert_eq!(
            runs("git config alias.wipe '!rm -rf .' && git wipe"),
            ["rm -rf ."]
        );
        // A use before the definition, a read or an unset defines nothing.
        assert!(runs("git p; git config alias.p push").is_empty());
        assert!(runs("git config --get alias.p; git p").is_empty());
        assert!(runs("git config alias.st status && git log").is_empty());
    }
}
