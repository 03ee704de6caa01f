//! Recursive searches of the workspace that would print its environment
//! files: `grep -rn SECRET .`, `rg -uu TOKEN`, `find . -exec cat {} +`.
//!
//! A search asks (`secret-search-tree`) when all of these hold:
//!
//! 1. it reads hidden files: `grep -r`, `ack`, `ugrep -r` and `git grep
//!    --no-index` do; `rg` and `ag` skip hidden and git-ignored files unless
//!    told both (`rg -uu`, `rg --hidden --no-ignore`, `ag -u`), and aq
//!    assumes a repository ignores its `.env` files, as the usual
//!    `.gitignore` templates do; `git grep` reads what is committed, and
//!    a repository may have committed its `.env`, so it reads them too
//!    (in any tree it is given: `git grep KEY HEAD~3`);
//! 2. its tree holds the workspace's top (`.`, `./`, `..`, `*`, or no path at
//!    all), not just a source directory (`src/`);
//! 3. the catalog's environment files (`.env`, `.env.local`, `.envrc`) are
//!    not left out by its include and exclude filters (`--include='*.py'`,
//!    `--exclude='.env*'`, `-g '!.env*'`, `-t rust`, `find -name '*.rs'`);
//! 4. it prints lines, not only file names or counts (`-l`, `-c`, `-q`);
//! 5. its pattern could match a secret's line: a secret-looking word
//!    (`SECRET`, `API_KEY`, `password`, `token`), a secret variable name, a
//!    catch-all (`.`, `=`, `^[A-Z_]*=`), or any pattern with `-v`. A reader
//!    run on every file `find` lists (`cat`, `head`, `strings`) prints
//!    everything.
//!
//! The other credential files (`credentials.json`, `*.tfvars`, keys) are
//! not line-oriented `NAME=value` files a word search turns up; the sandbox
//! masks them, and a search that names one directly is a secret read.

use aq_knowledge::credentials::{self, Kind, Place};
use aq_shell::Command;

use super::{Ctx, find_roots};
use crate::catalog::RuleId;

/// A search command's arguments, sorted out.
#[derive(Debug, Default)]
struct Search {
    patterns: Vec<String>,
    /// Patterns come from a file (`-f`): unknown.
    pattern_file: bool,
    paths: Vec<String>,
    includes: Vec<String>,
    excludes: Vec<String>,
    /// File types it is restricted to (`rg -t rust`).
    types: Vec<String>,
    /// Every option given, as `-x` (one per letter of a cluster) or `--long`.
    flags: Vec<String>,
    /// How often `-u` was given (`rg -uu`).
    unrestricted: usize,
    /// How many of `paths` came before a `--`, when one was given.
    before_dashes: Option<usize>,
}

impl Search {
    fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
    fn any(&self, flags: &[&str]) -> bool {
        flags.iter().any(|f| self.has(f))
    }
}

/// Options that take a value, per tool: (short letters, long names).
fn value_options(tool: &str) -> (&'static str, &'static [&'static str]) {
    match tool {
        "rg" => (
            "efgtTmABCMjErd",
            &[
                "regexp",
                "file",
                "glob",
                "iglob",
                "type",
                "type-not",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "max-columns",
                "threads",
                "encoding",
                "replace",
                "max-depth",
                "type-add",
                "type-clear",
                "pre",
                "pre-glob",
                "ignore-file",
                "sort",
                "sortr",
                "color",
                "colors",
                "max-filesize",
                "path-separator",
                "context-separator",
                "engine",
            ],
        ),
        "ag" => (
            "ABCGgmpW",
            &[
                "after",
                "before",
                "context",
                "file-search-regex",
                "max-count",
                "path-to-ignore",
                "ignore",
                "ignore-dir",
                "depth",
                "width",
            ],
        ),
        "ack" | "ack-grep" => (
            "ABCm",
            &[
                "after-context",
                "before-context",
                "context",
                "max-count",
                "ignore-dir",
                "ignore-file",
                "type",
            ],
        ),
        "git-grep" => (
            "efmABCO",
            &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "max-depth",
                "threads",
            ],
        ),
        // grep, egrep, fgrep, rgrep, ugrep
        _ => (
            "efmABCdDgOtK",
            &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "include",
                "exclude",
                "exclude-dir",
                "exclude-from",
                "label",
                "devices",
                "directories",
                "binary-files",
                "glob",
                "file-type",
                "include-dir",
            ],
        ),
    }
}

/// Sorts out `args` (after the program, or after `git grep`).
fn parse(tool: &str, args: &[&str]) -> Search {
    let (short_values, long_values) = value_options(tool);
    let mut s = Search::default();
    let mut operands_: Vec<String> = Vec::new();
    let mut k = 0;
    let mut after_dashes = false;
    let take = |s: &mut Search, flag: &str, value: String| match flag {
        "-e" | "--regexp" => s.patterns.push(value),
        "-f" | "--file" => s.pattern_file = true,
        "--include" | "--include-dir" => s.includes.push(value),
        "--exclude" | "--exclude-dir" | "--ignore" | "--ignore-dir" => s.excludes.push(value),
        "-g" | "--glob" | "--iglob" if tool != "ag" => match value.strip_prefix('!') {
            Some(ex) => s.excludes.push(ex.to_string()),
            None => s.includes.push(value),
        },
        // ag -G REGEX: files whose path matches the expression.
        "-G" | "--file-search-regex" if tool == "ag" => s.includes.push(value),
        "-t" | "--type" | "--file-type" if tool != "ag" => s.types.push(value),
        _ => {}
    };
    while k < args.len() {
        let a = args[k];
        k += 1;
        if after_dashes || a == "-" || !a.starts_with('-') {
            operands_.push(a.to_string());
            continue;
        }
        if a == "--" {
            after_dashes = true;
            s.before_dashes = Some(operands_.len());
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let flag = format!("--{name}");
            if name == "unrestricted" {
                s.unrestricted += 1;
            }
            let value = match inline {
                Some(v) => Some(v),
                None if long_values.contains(&name) => {
                    k += 1;
                    args.get(k - 1).map(|v| v.to_string())
                }
                None => None,
            };
            if let Some(v) = value {
                take(&mut s, &flag, v);
            }
            s.flags.push(flag);
            continue;
        }
        // A cluster of short options, the last of which may take a value.
        let cluster = &a[1..];
        for (pos, ch) in cluster.char_indices() {
            let flag = format!("-{ch}");
            if ch == 'u' {
                s.unrestricted += 1;
            }
            s.flags.push(flag.clone());
            if short_values.contains(ch) && !ch.is_ascii_digit() {
                let rest = &cluster[pos + ch.len_utf8()..];
                let value = if rest.is_empty() {
                    k += 1;
                    args.get(k - 1).map(|v| v.to_string())
                } else {
                    Some(rest.to_string())
                };
                if let Some(v) = value {
                    take(&mut s, &flag, v);
                }
                break;
            }
        }
    }
    if s.patterns.is_empty() && !s.pattern_file && !operands_.is_empty() {
        s.patterns.push(operands_.remove(0));
        s.before_dashes = s.before_dashes.map(|n| n.saturating_sub(1));
    }
    s.paths = operands_;
    s
}

/// Whether the search reads hidden (and git-ignored) files.
fn reads_hidden(tool: &str, s: &Search) -> bool {
    match tool {
        "rg" => {
            let hidden = s.any(&["--hidden", "-."]) || s.unrestricted >= 2;
            let no_ignore = s.unrestricted >= 1
                || s.any(&[
                    "--no-ignore",
                    "--no-ignore-vcs",
                    "--no-ignore-dot",
                    "--no-ignore-files",
                ]);
            hidden && no_ignore
        }
        "ag" => s.unrestricted >= 1 || (s.has("--hidden") && s.any(&["-U", "--skip-vcs-ignores"])),
        "ack" | "ack-grep" => true,
        // What is committed, and a repository may have committed its
        // `.env` (the red team's second round did): only `--no-index
        // --exclude-standard` leaves out what `.gitignore` names.
        "git-grep" => !(s.has("--no-index") && s.has("--exclude-standard")),
        "rgrep" => true,
        _ => s.any(&["-r", "-R", "--recursive", "--dereference-recursive"]),
    }
}

/// Whether it prints only names, counts or a status, not lines.
fn prints_no_lines(tool: &str, s: &Search) -> bool {
    let common = [
        "-l",
        "-c",
        "-q",
        "--files-with-matches",
        "--files-without-match",
        "--files-without-matches",
        "--count",
        "--quiet",
        "--silent",
    ];
    s.any(&common)
        || match tool {
            "rg" => s.any(&["--files", "--count-matches", "--type-list"]),
            "ag" => s.any(&["-L", "-g", "--list-file-types"]),
            "git-grep" => s.any(&["-L", "--name-only"]),
            _ => s.has("-L"),
        }
}

/// Whether a pattern could match the line of a secret in an environment
/// file: a secret-looking word or variable name, or a catch-all.
pub(crate) fn could_match_a_secret(pattern: &str) -> bool {
    let l = pattern.to_ascii_lowercase();
    let words = [
        "key",
        "auth",
        "pass",
        "pwd",
        "cred",
        "token",
        "secret",
        "private",
        "bearer",
        "dsn",
        "database_url",
        "conn",
    ];
    let alnum = pattern.chars().filter(char::is_ascii_alphanumeric).count();
    super::secrets::is_secret_var(pattern)
        || words.iter().any(|w| l.contains(w))
        || alnum < 3
        || names_a_token_prefix(pattern)
}

/// The prefixes that start well-known tokens (AWS key ids, GitHub and
/// GitLab tokens, Slack, OpenAI, npm, PyPI, Hugging Face and Google API
/// keys, a PEM key's header): a pattern that starts a word with one
/// (`AKIA|ghp_`, `\bsk-[A-Za-z0-9]+`) looks for those tokens.
fn names_a_token_prefix(pattern: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "AKIA",
        "ASIA",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "sk-",
        "sk_live_",
        "npm_",
        "pypi-",
        "hf_",
        "AIza",
        "-----BEGIN",
    ];
    PREFIXES.iter().any(|p| {
        pattern.match_indices(p).any(|(k, _)| {
            let before = &pattern[..k];
            before.ends_with("\\b")
                || before
                    .chars()
                    .next_back()
                    .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
        })
    })
}

/// The catalog's environment files, as written (`.env.*`) and as an
/// example name to test filters against (`.env.local`).
fn environment_files() -> Vec<(&'static str, String)> {
    credentials::in_place(Place::Workspace)
        .filter(|c| c.kind == Kind::Environment)
        .map(|c| (c.path, c.path.replace('*', "local")))
        .collect()
}

/// Whether a search tool's file glob matches a file name: `*` matches a
/// leading dot (as in `--include`, `-g` and `find -name`), braces list
/// alternatives, and a glob with a `/` only matches a name at any depth
/// (`**/.env`).
fn tool_glob_matches(glob: &str, name: &str) -> bool {
    let glob = glob.strip_prefix("**/").unwrap_or(glob);
    let glob = glob.strip_prefix("./").unwrap_or(glob);
    if glob.contains('/') {
        return false;
    }
    expand_braces(glob).iter().any(|g| {
        let options = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        glob::Pattern::new(g).is_ok_and(|p| p.matches_with(name, options))
    })
}

/// `*.{env,json}` as `*.env`, `*.json` (one level of braces).
fn expand_braces(glob: &str) -> Vec<String> {
    match (glob.find('{'), glob.find('}')) {
        (Some(a), Some(b)) if a < b => glob[a + 1..b]
            .split(',')
            .map(|alt| format!("{}{alt}{}", &glob[..a], &glob[b + 1..]))
            .collect(),
        _ => vec![glob.to_string()],
    }
}

/// The environment files a search with these filters still reaches.
fn reachable(includes: &[String], excludes: &[String], types: &[String]) -> Vec<&'static str> {
    environment_files()
        .into_iter()
        .filter(|(_, e)| {
            types.is_empty()
                && (includes.is_empty() || includes.iter().any(|g| tool_glob_matches(g, e)))
                && !excludes.iter().any(|g| tool_glob_matches(g, e))
        })
        .map(|(row, _)| row)
        .collect()
}

/// Whether a search root holds the workspace's top (where `.env` lives).
fn holds_top(root: &str) -> bool {
    let r = root.trim_end_matches('/');
    matches!(r, "" | "." | ".." | "*" | ".*" | "./*" | "$PWD" | "${PWD}") || r.ends_with("/..")
}

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else { return };
    // A rule that fired already says more (a hunt, a read of a named file).
    if ctx.hits_on(i).any(|r| {
        matches!(
            r,
            RuleId::SecretHunt | RuleId::SecretRead | RuleId::SecretLocation
        )
    }) {
        return;
    }
    let found = if let Some(f) = feeding_find(ctx, i) {
        check_run_by_find(ctx, i, f).map(|e| (RuleId::SecretSearchTree, e))
    } else {
        check_search(c, name)
    };
    if let Some((rule, evidence)) = found {
        ctx.hit(rule, i, evidence);
    }
}

/// Ordinary files of a project, which a filter aimed at secrets lets none
/// of through.
const ORDINARY_FILES: &[&str] = &[
    "main.py",
    "index.js",
    "app.ts",
    "lib.rs",
    "README.md",
    "config.yaml",
    "settings.json",
    "Makefile",
    "main.go",
    "notes.txt",
];

/// Whether the filters given (`--include='.env*'`, `-g '*.env'`) let only
/// the workspace's environment files through: a search of those files.
fn aimed_at_environment_files(includes: &[String]) -> bool {
    !includes.is_empty()
        && includes.iter().all(|g| {
            !ORDINARY_FILES.iter().any(|f| tool_glob_matches(g, f))
                && environment_files()
                    .iter()
                    .any(|(_, e)| tool_glob_matches(g, e))
        })
}

/// `grep -rn SECRET .` and the like; a search whose filters let only the
/// environment files through reads them (`secret-read`).
fn check_search(c: &Command, name: &str) -> Option<(RuleId, String)> {
    let args: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    let (tool, args) = match name {
        "git" => {
            let at = args.iter().position(|a| *a == "grep")?;
            // Options before the subcommand (`git -C dir grep`) take values.
            if super::net::git_subcommand(c) != Some("grep") {
                return None;
            }
            ("git-grep", &args[at + 1..])
        }
        "grep" | "egrep" | "fgrep" | "rgrep" | "ugrep" | "rg" | "ag" | "ack" | "ack-grep" => {
            (name, &args[..])
        }
        _ => return None,
    };
    let mut s = parse(tool, args);
    if tool == "git-grep" {
        // `git grep PATTERN [TREE...] [--] [PATHSPEC...]`: the trees
        // (`HEAD`, `main~3`, `v1`) are searched whole. Before a `--` every
        // operand is a tree; without one, an operand that reads as a name
        // of a commit rather than a path (no `/`, `.`, glob, nor `:` magic)
        // is taken as one.
        let given = std::mem::take(&mut s.paths);
        let specs: Vec<String> = match s.before_dashes {
            Some(n) => given.into_iter().skip(n).collect(),
            None => given
                .into_iter()
                .filter(|p| {
                    p.starts_with(':')
                        || p.contains(['/', '.', '*', '?', '['])
                        || !p
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "-_~^@{}".contains(c))
                })
                .collect(),
        };
        // Pathspecs: `:!x` leaves x out, anything else restricts the search.
        let mut paths = Vec::new();
        for p in specs {
            let exclusion = p
                .strip_prefix(":!")
                .or_else(|| p.strip_prefix(":^"))
                .or_else(|| p.strip_prefix(":(exclude)"));
            match exclusion {
                Some(x) => s.excludes.push(x.to_string()),
                None if holds_top(&p) => paths.push(p),
                None => s.includes.push(p),
            }
        }
        s.paths = paths;
    }
    if !reads_hidden(tool, &s) || prints_no_lines(tool, &s) {
        return None;
    }
    let roots: Vec<&str> = if s.paths.is_empty() {
        vec!["."]
    } else {
        s.paths.iter().map(String::as_str).collect()
    };
    let root = roots.iter().find(|r| holds_top(r))?;
    if aimed_at_environment_files(&s.includes) && s.types.is_empty() {
        let files: Vec<&str> = reachable(&s.includes, &s.excludes, &s.types);
        if !files.is_empty() {
            return Some((
                RuleId::SecretRead,
                format!(
                    "`{}` searches only the environment files under {root} ({}) and prints their lines",
                    c.display(),
                    files.join(", ")
                ),
            ));
        }
    }
    let inverted = s.any(&["-v", "--invert-match"]);
    let pattern = s
        .patterns
        .iter()
        .find(|p| inverted || could_match_a_secret(p))?;
    let reached = reachable(&s.includes, &s.excludes, &s.types);
    if reached.is_empty() {
        return None;
    }
    Some((
        RuleId::SecretSearchTree,
        format!(
            "`{}` prints the lines matching `{pattern}`{} of every file under {root}, {} included",
            c.display(),
            if inverted { " (inverted)" } else { "" },
            reached.join(", ")
        ),
    ))
}

/// The `find` whose results command `i` reads: `find . -exec CMD {} +`, or
/// `find . | xargs CMD`.
fn feeding_find(ctx: &Ctx, i: usize) -> Option<usize> {
    let commands = ctx.commands();
    let parent = commands.iter().position(|c| c.runs == Some(i))?;
    match commands[parent].program()? {
        "find" => Some(parent),
        "xargs" => ctx
            .upstream(parent)
            .into_iter()
            .find(|&u| commands[u].program() == Some("find")),
        _ => None,
    }
}

/// A reader run on every file `find` lists.
fn check_run_by_find(ctx: &Ctx, i: usize, f: usize) -> Option<String> {
    let c = &ctx.commands()[i];
    let name = c.program()?;
    let prints_all = matches!(
        name,
        "cat"
            | "head"
            | "tail"
            | "less"
            | "more"
            | "bat"
            | "batcat"
            | "strings"
            | "xxd"
            | "od"
            | "hexdump"
            | "base64"
            | "nl"
            | "tac"
            | "sed"
            | "awk"
            | "jq"
    );
    let grep_like = matches!(
        name,
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "ugrep"
    );
    let pattern = if grep_like {
        let args: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
        let s = parse(name, &args);
        if prints_no_lines(name, &s) {
            return None;
        }
        let inverted = s.any(&["-v", "--invert-match"]);
        Some(
            s.patterns
                .iter()
                .find(|p| inverted || could_match_a_secret(p))?
                .clone(),
        )
    } else if prints_all {
        None
    } else {
        return None;
    };
    let find = &ctx.commands()[f];
    let roots = find_roots(find);
    let root = roots.iter().find(|r| holds_top(r))?;
    let (includes, excludes) = find_name_tests(find);
    let reached = reachable(&includes, &excludes, &[]);
    if reached.is_empty() {
        return None;
    }
    let what = match &pattern {
        Some(p) => format!("the lines matching `{p}` of"),
        None => "".to_string(),
    };
    Some(format!(
        "`{}` prints {what}every file `find {root}` lists, {} included",
        c.display(),
        reached.join(", ")
    ))
}

/// `find`'s name tests: what it keeps (`-name '*.rs'`) and leaves out
/// (`-not -name '.env*'`, `! -name x`).
fn find_name_tests(find: &Command) -> (Vec<String>, Vec<String>) {
    let args = find.args();
    let (mut keep, mut leave) = (Vec::new(), Vec::new());
    for (k, a) in args.iter().enumerate() {
        if !matches!(a.text.as_str(), "-name" | "-iname") {
            continue;
        }
        let negated = k > 0 && matches!(args[k - 1].text.as_str(), "-not" | "!");
        if let Some(v) = args.get(k + 1) {
            if negated {
                leave.push(v.text.clone());
            } else {
                keep.push(v.text.clone());
            }
        }
    }
    (keep, leave)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_sorted_out_per_tool() {
        let s = parse("grep", &["-rn", "-A", "3", "--include=*.py", "SECRET", "."]);
        assert_eq!(s.patterns, ["SECRET"]);
        assert_eq!(s.paths, ["."]);
        assert_eq!(s.includes, ["*.py"]);
        let s = parse("rg", &["-uu", "-g", "!.env*", "-t", "rust", "TOKEN"]);
        assert_eq!(s.unrestricted, 2);
        assert_eq!(s.excludes, [".env*"]);
        assert_eq!(s.types, ["rust"]);
        assert!(s.paths.is_empty());
        let s = parse("grep", &["-r", "-e", "a", "-e", "b", "src"]);
        assert_eq!(s.patterns, ["a", "b"]);
        assert_eq!(s.paths, ["src"]);
        let s = parse("grep", &["-rC2", "KEY", "./"]);
        assert_eq!((s.patterns[0].as_str(), s.paths[0].as_str()), ("KEY", "./"));
    }

    #[test]
    fn filters_decide_what_is_reached() {
        assert_eq!(reachable(&[], &[], &[]), [".env", ".env.*", ".envrc"]);
        assert!(reachable(&["*.py".into()], &[], &[]).is_empty());
        assert!(reachable(&["*.{rs,toml}".into()], &[], &[]).is_empty());
        assert_eq!(
            reachable(&["*".into()], &[".env".into()], &[]),
            [".env.*", ".envrc"]
        );
        assert!(reachable(&[], &[".env*".into()], &[]).is_empty());
        assert!(reachable(&[], &[".*".into()], &[]).is_empty());
        assert!(reachable(&[], &[], &["rust".into()]).is_empty());
        assert_eq!(reachable(&["**/.env".into()], &[], &[]), [".env"]);
    }

    #[test]
    fn patterns_that_could_print_a_secret() {
        for p in [
            "SECRET",
            "api_key",
            "password",
            "token",
            "DATABASE_URL",
            ".",
            "=",
            "^[A-Z_]*=",
            "",
            "AKIA|ghp_",
            "\\bsk-[A-Za-z0-9]{20}",
            "(glpat-|xoxb-)",
        ] {
            assert!(could_match_a_secret(p), "{p}");
        }
        for p in [
            "TODO",
            "fn main",
            "process.env",
            "useEffect",
            "deprecated",
            "task-runner",
            "Asia/Tokyo",
        ] {
            assert!(!could_match_a_secret(p), "{p}");
        }
    }
}
