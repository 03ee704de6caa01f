//! Protected places: where a write (or, for aq's own files and the agents'
//! hook files, a removal) is judged by the place, whoever writes it.
//!
//! One list, built once: the table of `aq-knowledge` ([`aq_knowledge::programs::places`]),
//! the files that hold or switch off an agent's hooks (`aq-agents`, from
//! where `aq enable --hook` installs them), and the files of every agent
//! preset that make something run (`aq-agents`' `config` lists). The
//! guards come first, so a file that is both an agent's hook file and its
//! configuration (`~/.codex/config.toml`) is judged as the stricter.

use std::collections::HashMap;
use std::sync::OnceLock;

pub use aq_knowledge::programs::places::PlaceKind;

use crate::paths::{self, NormPath};

/// A pattern of [`aq_knowledge::programs::places`], read once.
#[derive(Debug)]
struct Pattern {
    anchor: Anchor,
    parts: Vec<String>,
    /// The directory and everything under it.
    prefix: bool,
    kind: PlaceKind,
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    Home,
    Root,
    Anywhere,
}

/// A place a path is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlaceMatch {
    /// What writing it does.
    pub kind: PlaceKind,
    /// The pattern that matched, as written in the table (or aq's own
    /// directory it is in).
    pub pattern: String,
}

fn parse(text: &str, kind: PlaceKind) -> Pattern {
    let (anchor, rest) = if let Some(r) = text.strip_prefix("~/") {
        (Anchor::Home, r)
    } else if let Some(r) = text.strip_prefix('/') {
        (Anchor::Root, r)
    } else {
        (Anchor::Anywhere, text)
    };
    Pattern {
        anchor,
        parts: rest
            .trim_end_matches('/')
            .split('/')
            .map(str::to_string)
            .collect(),
        prefix: rest.ends_with('/'),
        kind,
        text: text.to_string(),
    }
}

/// The list, read once, with what makes a lookup cheap.
struct Table {
    patterns: Vec<Pattern>,
    /// Patterns by their first component, when it is literal: those
    /// anchored at the home, at the root, and those that match anywhere.
    /// A path is tried only against the patterns its components can start.
    home: HashMap<String, Vec<usize>>,
    root: HashMap<String, Vec<usize>>,
    anywhere: HashMap<String, Vec<usize>>,
    /// Patterns whose first component is a glob: tried against every path.
    unindexed: Vec<usize>,
    /// aq's state directory where the defaults put it.
    state: NormPath,
    /// [`aq_knowledge::programs::places::AQ_STATE_WRITABLE`], read.
    writable: Vec<Pattern>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let places = aq_knowledge::programs::places::PLACES;
        let mut patterns: Vec<Pattern> = places
            .iter()
            .filter(|p| p.kind == PlaceKind::AqOwn)
            .map(|p| parse(p.pattern, p.kind))
            .collect();
        patterns.extend(
            aq_agents::install::guard_files()
                .iter()
                .map(|f| parse(f, PlaceKind::AgentHook)),
        );
        patterns.extend(
            places
                .iter()
                .filter(|p| p.kind != PlaceKind::AqOwn)
                .map(|p| parse(p.pattern, p.kind)),
        );
        for preset in &aq_agents::PresetSet::builtin_ref().0 {
            patterns.extend(
                preset
                    .config
                    .iter()
                    .chain(preset.shadow.keys())
                    .map(|f| parse(f, PlaceKind::AgentConfig)),
            );
        }
        // Every file `aq mcp wrap` edits names the MCP servers a client
        // starts (`~/.claude.json`'s `mcpServers`, Claude Desktop's
        // configuration): a command planted there runs at the client's next
        // start, outside aq. Claude Code keeps `.claude.json` in
        // `$CLAUDE_CONFIG_DIR` when that is set.
        let mut mcp: Vec<String> = aq_agents::mcp_config::McpClient::ALL
            .iter()
            .map(|(_, c)| {
                c.config_path(std::path::Path::new("~"))
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        mcp.push("~/.claude/.claude.json".to_string());
        for f in mcp {
            if !patterns.iter().any(|p| p.text == f) {
                patterns.push(parse(&f, PlaceKind::AgentConfig));
            }
        }
        let (mut home, mut root, mut anywhere) = (HashMap::new(), HashMap::new(), HashMap::new());
        let mut unindexed = Vec::new();
        for (k, p) in patterns.iter().enumerate() {
            let first = &p.parts[0];
            if first == "**" || paths::has_glob(first) {
                unindexed.push(k);
                continue;
            }
            let index: &mut HashMap<String, Vec<usize>> = match p.anchor {
                Anchor::Home => &mut home,
                Anchor::Root => &mut root,
                Anchor::Anywhere => &mut anywhere,
            };
            index.entry(first.clone()).or_default().push(k);
        }
        Table {
            patterns,
            home,
            root,
            anywhere,
            unindexed,
            state: NormPath::new("~/.local/state/agent-quarantine"),
            writable: aq_knowledge::programs::places::AQ_STATE_WRITABLE
                .iter()
                .map(|w| parse(w, PlaceKind::AqOwn))
                .collect(),
        }
    })
}

fn all() -> &'static [Pattern] {
    &table().patterns
}

/// Whether `p` is in a directory of aq's state that is not protected
/// ([`aq_knowledge::programs::places::AQ_STATE_WRITABLE`]), under `state` (aq's state
/// directory).
fn writable_in_state(p: &NormPath, state: &NormPath) -> bool {
    table().writable.iter().any(|w| {
        (p.in_home, p.absolute) == (state.in_home, state.absolute)
            && p.parts.len() > state.parts.len()
            && p.parts.iter().zip(&state.parts).all(|(a, b)| a == b)
            && seq(&p.parts[state.parts.len()..], &w.parts, w.prefix)
    })
}

/// The protected place `path` is in, if any (the first of the list).
pub(crate) fn place_of(path: &str) -> Option<PlaceMatch> {
    place_of_norm(&NormPath::new(path))
}

fn place_of_norm(p: &NormPath) -> Option<PlaceMatch> {
    let t = table();
    if p.parts.is_empty() || writable_in_state(p, &t.state) {
        return None;
    }
    let found = if p.parts.iter().any(|c| paths::has_glob(c)) {
        // A glob as written may stand for any name: try every pattern.
        t.patterns.iter().find(|pat| matches(p, pat))
    } else {
        // The first of the list that matches: of the patterns this path
        // can start, in list order.
        let mut candidates: Vec<usize> = t.unindexed.clone();
        let first = &p.parts[0];
        if p.in_home {
            candidates.extend(t.home.get(first).into_iter().flatten());
        }
        if p.absolute {
            candidates.extend(t.root.get(first).into_iter().flatten());
        }
        for part in &p.parts {
            candidates.extend(t.anywhere.get(part).into_iter().flatten());
        }
        candidates.sort_unstable();
        candidates.dedup();
        candidates
            .into_iter()
            .map(|k| &t.patterns[k])
            .find(|pat| matches(p, pat))
    };
    found.map(|pat| PlaceMatch {
        kind: pat.kind,
        pattern: pat.text.clone(),
    })
}

/// `path` spelled from the home (`~/...`) when it lies under `home`.
fn from_home<'p>(path: &'p str, home: Option<&str>) -> std::borrow::Cow<'p, str> {
    if let Some(h) = home.map(|h| h.trim_end_matches('/'))
        && h.len() > 1
        && h.starts_with('/')
        && let Some(rest) = path.strip_prefix(h)
        && (rest.is_empty() || rest.starts_with('/'))
    {
        return format!("~{rest}").into();
    }
    path.into()
}

/// The area of the file system `path` is in (`aq_knowledge::areas`), when
/// it is outside the workspace: `None` for a relative path (the workspace,
/// or under it), a path under [`crate::Policy::workspace`], and, when the
/// workspace is not known, an absolute path the areas do not name (it may
/// be the workspace). `$TMPDIR/...` is scratch space.
pub(crate) fn area_with(path: &str, policy: &crate::Policy) -> Option<aq_knowledge::areas::Area> {
    let path = path.trim();
    if ["$TMPDIR", "${TMPDIR"].iter().any(|v| path.starts_with(v))
        && !path.split('/').any(|c| c == "..")
    {
        return Some(aq_knowledge::areas::Area::Temp);
    }
    let p = NormPath::new(&from_home(path, policy.home.as_deref()));
    // A computed file name (`~/work/site/$(date +%F).sql.gz`) is still in
    // the directory the line names; a computed directory is unknown.
    let dirs = &p.parts[..p.parts.len().saturating_sub(1)];
    if dirs.iter().any(|c| c.starts_with('$')) || p.parts.iter().any(|c| c == "..") {
        return None;
    }
    if let Some(ws) = policy.workspace.as_deref()
        && is_under(&p, &NormPath::new(&from_home(ws, policy.home.as_deref())))
    {
        return None;
    }
    if p.in_home {
        let area = aq_knowledge::areas::area_of(false, &p.parts);
        // Without the workspace, `~/src/app` may be it.
        if area == Some(aq_knowledge::areas::Area::OtherProjects) && policy.workspace.is_none() {
            return None;
        }
        return area;
    }
    if p.absolute {
        // Outside the workspace it is known to be: the rest of the file
        // system no row names (`/srv/www`, `/mnt/data`) is elsewhere, but
        // the devices (`/dev/null`, `/dev/stdout`) and the root itself.
        return aq_knowledge::areas::area_of(true, &p.parts).or_else(|| {
            (policy.workspace.is_some() && p.parts.first().is_some_and(|first| first != "dev"))
                .then_some(aq_knowledge::areas::Area::Elsewhere)
        });
    }
    None
}

/// Whether `path` is in the state the session's agent preset keeps
/// ([`crate::Policy::agent_state`]).
pub(crate) fn in_agent_state(path: &str, policy: &crate::Policy) -> bool {
    if policy.agent_state.is_empty() {
        return false;
    }
    let p = NormPath::new(&from_home(path.trim(), policy.home.as_deref()));
    if p.parts.iter().any(|c| c == ".." || c.starts_with('$')) {
        return false;
    }
    policy
        .agent_state
        .iter()
        .any(|d| is_under(&p, &NormPath::new(&from_home(d, policy.home.as_deref()))))
}

/// The protected place `path` is in, counting aq's own directories where
/// this machine has them ([`crate::Policy::own_dirs`]) and its home
/// ([`crate::Policy::home`]).
pub(crate) fn place_with(path: &str, policy: &crate::Policy) -> Option<PlaceMatch> {
    let own_dirs = &policy.own_dirs;
    let p = NormPath::new(path);
    if !own_dirs.is_empty() {
        let dirs: Vec<NormPath> = own_dirs.iter().map(|d| NormPath::new(d)).collect();
        if dirs.iter().any(|d| writable_in_state(&p, d)) {
            return None;
        }
        if let Some(d) = dirs.iter().zip(own_dirs).find(|(d, _)| is_under(&p, d)) {
            return Some(PlaceMatch {
                kind: PlaceKind::AqOwn,
                pattern: d.1.clone(),
            });
        }
    }
    let p = NormPath::new(&from_home(path, policy.home.as_deref()));
    place_of_norm(&p).or_else(|| place_of_other_case(&p))
}

/// The place `p` is on a disk that does not tell case apart (macOS's,
/// Windows'): `.CLAUDE/settings.json` is `.claude/settings.json` there.
/// Tried only when the path as written is no place and has a capital.
fn place_of_other_case(p: &NormPath) -> Option<PlaceMatch> {
    if !p
        .parts
        .iter()
        .any(|c| c.bytes().any(|b| b.is_ascii_uppercase()))
    {
        return None;
    }
    let lower = NormPath {
        parts: p.parts.iter().map(|c| c.to_ascii_lowercase()).collect(),
        ..p.clone()
    };
    place_of_norm(&lower)
}

/// [`holds_place`], counting aq's own directories and the home too.
pub(crate) fn holds_place_with(
    path: &str,
    kinds: &[PlaceKind],
    policy: &crate::Policy,
) -> Option<PlaceMatch> {
    if kinds.contains(&PlaceKind::AqOwn) {
        let p = NormPath::new(path);
        if let Some(d) = policy.own_dirs.iter().find(|d| {
            let d = NormPath::new(d);
            is_under(&p, &d) && !writable_in_state(&p, &d) || is_under(&d, &p)
        }) {
            return Some(PlaceMatch {
                kind: PlaceKind::AqOwn,
                pattern: d.clone(),
            });
        }
    }
    let spelled = from_home(path, policy.home.as_deref());
    holds_place(&spelled, kinds).or_else(|| {
        // `.CLAUDE` on a disk that does not tell case apart.
        (spelled.bytes().any(|b| b.is_ascii_uppercase()) && !spelled.contains('$'))
            .then(|| holds_place(&spelled.to_ascii_lowercase(), kinds))
            .flatten()
    })
}

/// Whether `p` is `dir` or under it (both anchored at the home or the root).
/// `path` as the workspace names it (`./dist` for
/// `/home/dev/src/project/dist` or `~/src/project/dist`), when it is under
/// [`crate::Policy::workspace`] (not the workspace itself).
pub(crate) fn within_workspace(path: &str, policy: &crate::Policy) -> Option<String> {
    let ws = policy.workspace.as_deref()?;
    let p = NormPath::new(&from_home(path.trim(), policy.home.as_deref()));
    let dir = NormPath::new(&from_home(ws, policy.home.as_deref()));
    if p.parts.len() <= dir.parts.len() || p.parts.iter().any(|c| c == "..") || !is_under(&p, &dir)
    {
        return None;
    }
    Some(format!("./{}", p.parts[dir.parts.len()..].join("/")))
}

fn is_under(p: &NormPath, dir: &NormPath) -> bool {
    (p.in_home, p.absolute) == (dir.in_home, dir.absolute)
        && (dir.in_home || dir.absolute)
        && p.parts.len() >= dir.parts.len()
        && p.parts.iter().zip(&dir.parts).all(|(a, b)| a == b)
}

/// Whether any protected place of these kinds is `path` or under it
/// (`rm -rf ~/.local/state` removes aq's state).
pub(crate) fn holds_place(path: &str, kinds: &[PlaceKind]) -> Option<PlaceMatch> {
    let p = NormPath::new(path);
    if writable_in_state(&p, &table().state) {
        return None;
    }
    all()
        .iter()
        .filter(|pat| kinds.contains(&pat.kind))
        .find(|pat| matches(&p, pat) || contains(&p, pat))
        .map(|pat| PlaceMatch {
            kind: pat.kind,
            pattern: pat.text.clone(),
        })
}

fn matches(p: &NormPath, pat: &Pattern) -> bool {
    match pat.anchor {
        Anchor::Home => p.in_home && seq(&p.parts, &pat.parts, pat.prefix),
        Anchor::Root => p.absolute && seq(&p.parts, &pat.parts, pat.prefix),
        Anchor::Anywhere => (0..p.parts.len()).any(|k| seq(&p.parts[k..], &pat.parts, pat.prefix)),
    }
}

/// Whether the place lies under directory `p`: the pattern's components
/// start with `p`'s (anchored at the home or the root), or, for a pattern
/// that matches anywhere, `p` ends with the first of them (`.claude` holds
/// `.claude/settings.json`).
fn contains(p: &NormPath, pat: &Pattern) -> bool {
    let same = |have: &[String], want: &[String]| {
        have.iter()
            .zip(want)
            .all(|(h, w)| w != "**" && paths::name_matches(h, w))
    };
    match pat.anchor {
        Anchor::Home | Anchor::Root => {
            let anchored = if pat.anchor == Anchor::Home {
                p.in_home
            } else {
                p.absolute
            };
            anchored && p.parts.len() < pat.parts.len() && same(&p.parts, &pat.parts)
        }
        Anchor::Anywhere => (1..pat.parts.len())
            .any(|m| p.parts.len() >= m && same(&p.parts[p.parts.len() - m..], &pat.parts[..m])),
    }
}

/// Whether `parts` match the pattern's components from the start: all of
/// them, with nothing left unless `prefix`; `**` matches any number.
fn seq(parts: &[String], pat: &[String], prefix: bool) -> bool {
    match pat.split_first() {
        None => prefix || parts.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=parts.len()).any(|k| seq(&parts[k..], rest, prefix))
        }
        Some((first, rest)) => match parts.split_first() {
            Some((have, tail)) => paths::name_matches(have, first) && seq(tail, rest, prefix),
            None => false,
        },
    }
}

/// The tool configuration files of [`aq_knowledge::tool_config::CONFIG_FILES`],
/// read once in the places' form.
fn tool_files() -> &'static [(Pattern, &'static aq_knowledge::tool_config::ConfigFile)] {
    static FILES: OnceLock<Vec<(Pattern, &'static aq_knowledge::tool_config::ConfigFile)>> =
        OnceLock::new();
    FILES.get_or_init(|| {
        aq_knowledge::tool_config::CONFIG_FILES
            .iter()
            // The kind is not read for these: the file says what it does.
            .map(|f| (parse(f.pattern, PlaceKind::AgentConfig), f))
            .collect()
    })
}

/// The tool configuration file `path` is (or is in), if any: an ssh
/// config, an `.npmrc`, an editor's startup file, a `.pth` in Python's
/// site directory (also when that directory is computed on the line,
/// `$(python3 -c 'import site; print(site.getusersitepackages())')/x.pth`,
/// `$(python3 -m site --user-site)/x.pth`).
pub(crate) fn tool_config_with(
    path: &str,
    policy: &crate::Policy,
) -> Option<&'static aq_knowledge::tool_config::ConfigFile> {
    let spelled = from_home(path, policy.home.as_deref());
    let p = NormPath::new(&spelled);
    // The most exact of the patterns that match (`~/.vim/plugin/` before
    // `~/.vim/`).
    if let Some((_, f)) = tool_files()
        .iter()
        .filter(|(pat, _)| matches(&p, pat))
        .max_by_key(|(pat, _)| pat.parts.len())
    {
        return Some(f);
    }
    let lower = path.to_ascii_lowercase();
    // `$(python3 -m site --user-site)`, `site.USER_SITE`,
    // `sysconfig.get_path('purelib')`, Debian's `dist-packages`.
    const SITE_WORDS: &[&str] = &[
        "sitepackages",
        "site-packages",
        "dist-packages",
        "user-site",
        "user_site",
        "purelib",
        "platlib",
    ];
    if lower.ends_with(".pth") && SITE_WORDS.iter().any(|w| lower.contains(w)) {
        return aq_knowledge::tool_config::CONFIG_FILES
            .iter()
            .find(|f| f.pattern == "site-packages/*.pth");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(path: &str) -> Option<PlaceKind> {
        place_of(path).map(|m| m.kind)
    }

    #[test]
    fn protected_places_are_recognised_however_the_path_is_spelled() {
        use PlaceKind::*;
        for (path, want) in [
            ("~/.bashrc", ShellRc),
            ("$HOME/.profile", ShellRc),
            ("/home/dev/.zshrc", ShellRc),
            ("/root/.bash_aliases", ShellRc),
            ("~/.config/fish/conf.d/x.fish", ShellRc),
            ("$XDG_CONFIG_HOME/fish/config.fish", ShellRc),
            ("/etc/profile.d/x.sh", ShellRc),
            ("~/.ssh/authorized_keys", AuthorizedKeys),
            ("/etc/cron.d/job", Cron),
            ("/etc/crontab", Cron),
            ("~/.config/systemd/user/a.service", Systemd),
            ("/etc/sudoers.d/x", SystemStartup),
            (".git/hooks/pre-commit", GitHook),
            ("./.git/hooks/pre-commit", GitHook),
            (".git/modules/sub/hooks/post-checkout", GitHook),
            (".git/config", GitConfig),
            ("sub/.git/config", GitConfig),
            ("/work/repo/.git/config", GitConfig),
            (".git/modules/a/modules/b/config", GitConfig),
            (".git/commondir", GitConfig),
            (".git/worktrees/w/config.worktree", GitConfig),
            (".git", GitConfig),
            ("~/.gitconfig", GitConfigGlobal),
            ("~/.config/git/config", GitConfigGlobal),
            (
                "${XDG_CONFIG_HOME:-$HOME/.config}/git/config",
                GitConfigGlobal,
            ),
            ("/etc/gitconfig", GitConfigGlobal),
            (
                "~/.local/state/agent-quarantine/sessions/x/log.jsonl",
                AqOwn,
            ),
            (
                "$XDG_STATE_HOME/agent-quarantine/sessions/x/log.jsonl",
                AqOwn,
            ),
            ("~/.local/state/agent-quarantine", AqOwn),
            (
                "~/.local/state/agent-quarantine/sessions/x/approvals/answers/1",
                AqOwn,
            ),
            ("~/.local/state/agent-quarantine/sessions/tmp/x", AqOwn),
            ("~/.config/agent-quarantine/policy.toml", AqOwn),
            ("~/.local/share/agent-quarantine/bin/claude", AqOwn),
            ("~/.claude/settings.json", AgentHook),
            (".claude/settings.json", AgentHook),
            (".claude/settings.local.json", AgentHook),
            ("~/.claude/settings.local.json", AgentHook),
            ("$CLAUDE_CONFIG_DIR/settings.json", AgentHook),
            ("~/.codex/config.toml", AgentHook),
            ("~/.codex/hooks.json", AgentHook),
            ("~/.gemini/settings.json", AgentHook),
            (".gemini/settings.json", AgentHook),
            ("~/.cursor/hooks.json", AgentHook),
            ("~/.config/opencode/plugins/aq.js", AgentHook),
            ("~/.claude/hooks/x.sh", AgentConfig),
            (".mcp.json", AgentConfig),
            ("~/.gemini/extensions/x/gemini-extension.json", AgentConfig),
            (".codex/config.toml", AgentHook),
            ("~/.config/zsh/.zshrc", ShellRc),
            ("~/.ssh/rc", ShellRc),
            ("~/.claude.json", AgentConfig),
            ("$HOME/.claude.json", AgentConfig),
            ("$CLAUDE_CONFIG_DIR/.claude.json", AgentConfig),
            ("~/.config/Claude/claude_desktop_config.json", AgentConfig),
            ("~/.cursor/mcp.json", AgentConfig),
            (".cursor/mcp.json", AgentConfig),
        ] {
            assert_eq!(kind(path), Some(want), "{path}");
        }
        for path in [
            "notes.txt",
            "src/x.rs",
            ".gitignore",
            ".git/info/exclude",
            ".git/COMMIT_EDITMSG",
            "bashrc",
            "docs/.bashrc",
            "config",
            "~/.config/agent-quarantine-notes.txt",
            "~/src/agent-quarantine/README.md",
            // aq run's TMPDIR for the sandbox.
            "~/.local/state/agent-quarantine/sessions/x/tmp/claude-0/cwd",
            "target/debug/aq",
            "CLAUDE.md",
            ".claude.md",
            ".claude.json",
            "~/.claude.json.backup.1",
            "~/.claude/projects/x/session.jsonl",
            "~/.inputrc",
        ] {
            assert_eq!(kind(path), None, "{path}");
        }
    }

    #[test]
    fn aq_state_where_this_machine_keeps_it_is_aqs_but_a_sessions_tmp() {
        let own = crate::Policy {
            own_dirs: vec!["/srv/aq/state/agent-quarantine".to_string()],
            ..Default::default()
        };
        let kind = |p: &str| place_with(p, &own).map(|m| m.kind);
        assert_eq!(
            kind("/srv/aq/state/agent-quarantine/sessions/s/log.jsonl"),
            Some(PlaceKind::AqOwn)
        );
        assert_eq!(
            kind("/srv/aq/state/agent-quarantine"),
            Some(PlaceKind::AqOwn)
        );
        assert_eq!(
            kind("/srv/aq/state/agent-quarantine/sessions/s/tmp/x"),
            None
        );
        assert_eq!(kind("/srv/aq/state/other"), None);
        let guarded = [PlaceKind::AqOwn, PlaceKind::AgentHook];
        let holds = |p: &str| holds_place_with(p, &guarded, &own).is_some();
        assert!(holds("/srv/aq/state"));
        assert!(holds("/srv/aq/state/agent-quarantine/sessions/s"));
        assert!(!holds("/srv/aq/state/agent-quarantine/sessions/s/tmp/x"));
        assert!(!holds("~/.local/state/agent-quarantine/sessions/s/tmp/x"));
    }

    #[test]
    fn a_path_under_this_machines_home_is_judged_as_spelled_from_the_home() {
        let policy = crate::Policy {
            home: Some("/var/lib/ci/".to_string()),
            ..Default::default()
        };
        let kind = |p: &str| place_with(p, &policy).map(|m| m.kind);
        assert_eq!(kind("/var/lib/ci/.bashrc"), Some(PlaceKind::ShellRc));
        assert_eq!(
            kind("/var/lib/ci/.claude.json"),
            Some(PlaceKind::AgentConfig)
        );
        assert_eq!(
            kind("/var/lib/ci/.claude/settings.json"),
            Some(PlaceKind::AgentHook)
        );
        assert_eq!(kind("/var/lib/ci2/.bashrc"), None);
        assert_eq!(kind(".CLAUDE/settings.json"), Some(PlaceKind::AgentHook));
        assert_eq!(kind("~/.Codex/Config.toml"), Some(PlaceKind::AgentHook));
        assert_eq!(
            kind("~/Library/LaunchAgents/x.plist"),
            Some(PlaceKind::Launchd)
        );
        assert_eq!(kind("Docs/Notes.md"), None);
        assert_eq!(kind("/var/lib/ci/src/.bashrc"), None);
        let guarded = [PlaceKind::AqOwn, PlaceKind::AgentHook];
        assert!(holds_place_with("/var/lib/ci", &guarded, &policy).is_some());
        assert!(holds_place_with("/var/lib/ci/src", &guarded, &policy).is_none());
    }

    #[test]
    fn a_directory_holding_a_guarded_place_is_found() {
        let guarded = [PlaceKind::AqOwn, PlaceKind::AgentHook];
        for dir in [
            "~/.local/state",
            "~/.local",
            "~/.claude",
            "~",
            "$HOME",
            ".claude",
            "sub/.claude",
        ] {
            assert!(holds_place(dir, &guarded).is_some(), "{dir}");
        }
        for dir in ["src", "/tmp/x", "~/.cache", "~/projects", ".", "target"] {
            assert!(holds_place(dir, &guarded).is_none(), "{dir}");
        }
    }
}
