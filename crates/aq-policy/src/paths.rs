//! What a path names: a credential, a place credentials live, a shell
//! startup file, a system directory, regenerable build output. Paths are
//! compared as text after the shell's expansions (`~`, `$HOME`), with
//! `/home/USER`, `/root` and `/Users/USER` read as a home directory, and
//! globs (`.e*v`, `id_*`) matched against the names they could expand to.
//! Which paths are credentials is the catalog's (`aq_knowledge::credentials`).

use aq_knowledge::credentials::{self, Credential, Files, Kind, Mask, Place};

/// A path with `~`-style home prefixes and `./` removed, split in parts.
#[derive(Debug, Clone)]
pub(crate) struct NormPath {
    /// Whether the path starts at a home directory (`~`, `$HOME`, `/home/x`).
    pub(crate) in_home: bool,
    /// Whether it is absolute (and not in a home directory).
    pub(crate) absolute: bool,
    /// The components after the home or root prefix.
    pub(crate) parts: Vec<String>,
}

/// Variables that name a directory under the home by default: a path
/// starting with one (`$XDG_STATE_HOME/x`, `${XDG_CONFIG_HOME:-$HOME/.config}/x`)
/// is read as starting with that directory. The shell walker reads them so
/// too wherever they go (`d=$XDG_STATE_HOME`).
const HOME_DIRS: &[(&str, &str)] = aq_shell::HOME_DIR_VARS;

/// `path` with a leading [`HOME_DIRS`] variable replaced by its directory.
fn with_home_dirs(path: &str) -> Option<String> {
    let rest = path.strip_prefix('$')?;
    for (var, dir) in HOME_DIRS {
        let after = if let Some(r) = rest.strip_prefix('{') {
            let Some(r) = r.strip_prefix(var) else {
                continue;
            };
            if let Some(r) = r.strip_prefix('}') {
                r
            } else if r.starts_with(":-") || r.starts_with('-') {
                // `${VAR:-default}`: up to the matching brace.
                let mut depth = 1;
                let end = r.char_indices().find_map(|(k, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    (depth == 0).then_some(k)
                })?;
                &r[end + 1..]
            } else {
                continue;
            }
        } else {
            match rest.strip_prefix(var) {
                Some(r) if r.is_empty() || r.starts_with('/') => r,
                _ => continue,
            }
        };
        return Some(format!("{dir}{after}"));
    }
    None
}

/// `/proc/PID/root/REST` (any process, `self`, `$$`, `1`; also
/// `/proc/PID/task/TID/root/REST`) is that process's view of `/REST`: on
/// one machine, `/REST` itself.
fn through_proc_root(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/proc/")?;
    let mut parts = rest.splitn(2, '/');
    // The process: any.
    parts.next().filter(|p| !p.is_empty())?;
    let mut after = parts.next()?;
    if let Some(task) = after.strip_prefix("task/") {
        after = task.split_once('/')?.1;
    }
    let inside = after.strip_prefix("root")?;
    if !(inside.is_empty() || inside.starts_with('/')) {
        return None;
    }
    // `/proc/1/root/root/.ssh` is `/root/.ssh`, read again as a home.
    let inside = if inside.is_empty() { "/" } else { inside };
    Some(through_proc_root(inside).unwrap_or_else(|| inside.to_string()))
}

impl NormPath {
    /// Normalizes a path as the shell left it.
    pub(crate) fn new(path: &str) -> Self {
        let path = path.trim();
        let replaced = if path.starts_with('$') {
            with_home_dirs(path)
        } else {
            through_proc_root(path)
        };
        let path = replaced.as_deref().unwrap_or(path);
        // The rest borrows from the path: only its parts are copied.
        let (in_home, rest) = if let Some(r) = path.strip_prefix('~') {
            // `~user/...` is another home.
            let r = r.split_once('/').map(|(_, r)| r).unwrap_or("");
            (true, r)
        } else if let Some(r) = path
            .strip_prefix("$HOME")
            .or_else(|| path.strip_prefix("${HOME}"))
        {
            (true, r)
        } else if let Some(r) = path.strip_prefix("/root") {
            if r.is_empty() || r.starts_with('/') {
                (true, r)
            } else {
                (false, path)
            }
        } else if let Some(r) = path
            .strip_prefix("/home/")
            .or_else(|| path.strip_prefix("/Users/"))
        {
            match r.split_once('/') {
                Some((_, rest)) => (true, rest),
                None => (true, ""),
            }
        } else {
            (false, path)
        };
        let absolute = !in_home && rest.starts_with('/');
        let mut parts: Vec<String> = Vec::new();
        for p in rest.split('/') {
            match p {
                "" | "." => {}
                ".." if !parts.is_empty() && parts.last().is_some_and(|l| l != "..") => {
                    parts.pop();
                }
                _ => parts.push(p.to_string()),
            }
        }
        NormPath {
            in_home,
            absolute,
            parts,
        }
    }

    /// The path as `~/a/b`, `/a/b` or `a/b`.
    pub(crate) fn display(&self) -> String {
        let joined = self.parts.join("/");
        if self.in_home {
            format!("~/{joined}")
        } else if self.absolute {
            format!("/{joined}")
        } else {
            joined
        }
    }

    /// The last component.
    pub(crate) fn name(&self) -> &str {
        self.parts.last().map(String::as_str).unwrap_or("")
    }

    /// Whether the path is exactly the home directory.
    pub(crate) fn is_home(&self) -> bool {
        self.in_home && self.parts.is_empty()
    }

    /// Whether the path is exactly `/`.
    pub(crate) fn is_root(&self) -> bool {
        self.absolute && self.parts.is_empty()
    }

    /// Whether the components end with `tail` (matched with globs).
    fn ends_with(&self, tail: &[&str]) -> bool {
        if self.parts.len() < tail.len() {
            return false;
        }
        let start = self.parts.len() - tail.len();
        self.parts[start..]
            .iter()
            .zip(tail)
            .all(|(have, want)| name_matches(have, want))
    }

    /// Whether the components start with `head` (matched with globs).
    fn starts_with(&self, head: &[&str]) -> bool {
        self.parts.len() >= head.len()
            && self
                .parts
                .iter()
                .zip(head)
                .all(|(have, want)| name_matches(have, want))
    }

    /// Whether the path is `dir` or below it: from a home directory (`~/.gnupg/x`),
    /// or anywhere when `dir` starts with a dot directory (`/mnt/old/.gnupg/x`).
    fn is_in(&self, dir: &[&str]) -> bool {
        (self.in_home && self.starts_with(dir))
            || (dir.first().is_some_and(|d| d.starts_with('.')) && self.contains_seq(dir))
    }

    /// Whether any component equals `dir` and the next ones follow.
    fn contains_seq(&self, seq: &[&str]) -> bool {
        self.parts.windows(seq.len()).any(|w| {
            w.iter()
                .zip(seq)
                .all(|(have, want)| name_matches(have, want))
        })
    }
}

/// Whether a file name (possibly a glob as written) can be `want`
/// (possibly a glob pattern of sensitive names).
pub(crate) fn name_matches(have: &str, want: &str) -> bool {
    if have == want {
        return true;
    }
    // A name and a pattern that begin or end in different letters cannot
    // match: most pairs the rules try are told apart here.
    let (h, w) = (have.as_bytes(), want.as_bytes());
    let literal = |b: &u8| !matches!(b, b'*' | b'?' | b'[' | b']');
    for (a, b) in [(h.first(), w.first()), (h.last(), w.last())] {
        if let (Some(a), Some(b)) = (a, b)
            && literal(a)
            && literal(b)
            && a != b
        {
            return false;
        }
    }
    let have_glob = has_glob(have);
    let want_glob = has_glob(want);
    match (have_glob, want_glob) {
        (false, false) => false,
        (false, true) => glob_match(want, have),
        (true, false) => glob_match(have, want),
        // Both patterns: test the written glob against a few concrete names
        // the sensitive pattern stands for.
        (true, true) => concrete_examples(want)
            .iter()
            .any(|ex| glob_match(have, ex)),
    }
}

fn concrete_examples(pattern: &str) -> Vec<String> {
    vec![
        pattern.replace('*', "rsa").replace('?', "x"),
        pattern.replace('*', "").replace('?', "x"),
    ]
}

/// Whether a word has glob characters.
pub(crate) fn has_glob(s: &str) -> bool {
    // A byte scan: the rules ask this of many names per command.
    s.bytes().any(|b| matches!(b, b'*' | b'?' | b'['))
}

/// Shell-style glob match of a whole name.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    // As in bash: `*` does not match dotfiles, `.e*v` does.
    if name.starts_with('.') && !pattern.starts_with('.') && has_glob(pattern) {
        return false;
    }
    // `*` and `?` within one name, the common case: matched here, without
    // compiling a pattern (the rules try many per command).
    if !pattern.contains(['[', '/', '\\']) && !name.contains('/') {
        return star_match(pattern.as_bytes(), name.as_bytes());
    }
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    glob::Pattern::new(pattern).is_ok_and(|p| p.matches_with(name, options))
}

/// `*` (any run) and `?` (one byte) against a whole name, case kept.
fn star_match(p: &[u8], n: &[u8]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && (p[pi] == b'?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

/// What credential file a path is, from the catalog (`aq_knowledge::credentials`):
/// a home row by its components (`~/.aws/credentials`; a row under a dot
/// directory also by its last components anywhere, `/mnt/old/.aws/credentials`),
/// a file inside a directory whose files are all secrets (`~/.gnupg/...`),
/// a workspace row by the file name (`.env`, `id_rsa`, `*.p12`), or the
/// system's password hashes. Settings files that builds read for mirrors
/// (`IfValue` rows) count in the home directory, where they serve every
/// project, and not in the workspace, where they are the project's build
/// configuration. Templates, public keys and key files of test fixtures are not
/// secrets.
pub fn secret_kind(path: &str) -> Option<String> {
    let p = NormPath::new(path);
    let name = p.name();
    if name.is_empty() || credentials::is_public_key(name) {
        return None;
    }
    if is_dotenv_secret(name) {
        return Some("a .env file with secrets".to_string());
    }
    if may_be_in_home_rows(&p) {
        let name_glob = has_glob(name);
        for r in home_rows() {
            if matches!(r.row.mask, Mask::Dir(_) | Mask::Near) {
                continue;
            }
            // Most rows end in another name: one comparison says so, a plain
            // string comparison when neither name is a glob.
            let Some(last) = r.parts.last() else {
                continue;
            };
            let last_matches = if name_glob || r.last_glob {
                name_matches(name, last)
            } else {
                name == *last
            };
            if !last_matches {
                continue;
            }
            let exact = p.in_home && p.parts.len() == r.parts.len() && p.ends_with(&r.parts);
            let anywhere = r.parts.len() >= 2 && p.ends_with(&r.parts);
            if exact || anywhere {
                return Some(r.row.what.to_string());
            }
        }
        for r in home_rows() {
            if r.row.mask == Mask::Dir(Files::Secret)
                && p.parts.len() > r.parts.len()
                && p.is_in(&r.parts)
            {
                return Some(format!("a file in {}", r.row.what));
            }
        }
    }
    // `/proc/$PPID/environ`, `/proc/1/environ`, `/proc/*/task/*/environ`:
    // another process's environment, where an agent keeps its API key.
    // (Its own, `/proc/self/environ`, is a dump like `printenv`:
    // [`is_own_environ`].)
    if p.absolute
        && p.parts.first().is_some_and(|f| f == "proc")
        && name_matches(name, "environ")
        && matches!(p.parts.len(), 3 | 5)
        && !is_own_environ(path)
    {
        return Some("another process's environment, with the agent's keys".to_string());
    }
    if p.absolute
        && matches!(p.parts.as_slice(), [e, f] if e == "etc" && (f == "shadow" || f == "gshadow" || f == "shadow-" || f == "master.passwd"))
    {
        return Some("the system password hashes".to_string());
    }
    // The catalog's absolute rows (`/etc/ssh/ssh_host_*_key`,
    // `/run/secrets/`): the file, or a file inside the directory. Agent
    // sockets (`/tmp/ssh-*/`) are connected to, not read, and `/var/run` is
    // `/run`.
    if p.absolute {
        let parts = system_parts(&p);
        for row in credentials::in_place(Place::System)
            .filter(|r| r.kind != credentials::Kind::Ssh || !r.path.ends_with('/'))
        {
            // The row's components compared in place (no list per row).
            let want = row.path.trim_matches('/').split('/');
            let count = want.clone().count();
            let fits = if row.path.ends_with('/') {
                parts.len() > count
            } else {
                parts.len() == count
            };
            let hit = fits && parts.iter().zip(want).all(|(a, b)| name_matches(a, b));
            if hit {
                return Some(row.what.to_string());
            }
        }
    }
    if let Some(c) = runtime_dir_row(path) {
        return Some(c.what.to_string());
    }
    workspace_kind(&p).map(|c| c.what.to_string())
}

/// The catalog's `$XDG_RUNTIME_DIR` file rows (Podman's `auth.json`), for a
/// path under that directory as written (`$XDG_RUNTIME_DIR/x`,
/// `${XDG_RUNTIME_DIR}/x`) or at its default place (`/run/user/UID/x`,
/// `/var/run/user/UID/x`). Not the agent sockets there, which are
/// connected to, not read (their masks guard them).
fn runtime_dir_row(path: &str) -> Option<&'static Credential> {
    let rest = if let Some(r) = path
        .strip_prefix("$XDG_RUNTIME_DIR/")
        .or_else(|| path.strip_prefix("${XDG_RUNTIME_DIR}/"))
    {
        r
    } else {
        let r = path
            .strip_prefix("/run/user/")
            .or_else(|| path.strip_prefix("/var/run/user/"))?;
        r.split_once('/')?.1
    };
    let have: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    credentials::in_place(Place::Var)
        .filter(|r| {
            r.var() == Some("XDG_RUNTIME_DIR")
                && !r.is_dir()
                && !matches!(r.kind, Kind::Ssh | Kind::Gpg | Kind::Keyring)
        })
        .find(|r| {
            let want: Vec<&str> = r.parts().collect();
            want.len() == have.len() && have.iter().zip(&want).all(|(a, b)| name_matches(a, b))
        })
}

/// An absolute path's components as the catalog's system rows spell them:
/// `/var/run` is `/run`.
fn system_parts(p: &NormPath) -> Vec<&str> {
    match p.parts.as_slice() {
        [v, r, rest @ ..] if v == "var" && r == "run" => std::iter::once("run")
            .chain(rest.iter().map(String::as_str))
            .collect(),
        all => all.iter().map(String::as_str).collect(),
    }
}

/// `/proc/self/environ`, `/proc/$$/environ`, `/proc/thread-self/environ`:
/// the reading process's own environment, all of it.
pub(crate) fn is_own_environ(path: &str) -> bool {
    let p = NormPath::new(path);
    p.absolute
        && matches!(
            p.parts
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice(),
            ["proc", "self" | "$$" | "${$}" | "thread-self", "environ"]
        )
}

/// What [`secret_kind`] says of a file that is a key by its extension
/// (`.pem`, `.key`, `.p12`): it may be a certificate or a key.
pub const KEY_FILE_KIND: &str = "a private key or key store";

/// A home row with its components split once.
struct HomeRow {
    row: &'static Credential,
    parts: Vec<&'static str>,
    /// Whether the last component is a glob (`id_*`).
    last_glob: bool,
}

/// The catalog's home rows, split once.
fn home_rows() -> &'static [HomeRow] {
    static ROWS: std::sync::OnceLock<Vec<HomeRow>> = std::sync::OnceLock::new();
    ROWS.get_or_init(|| {
        credentials::in_place(Place::Home)
            .map(|row| {
                let parts: Vec<&'static str> = row.parts().collect();
                HomeRow {
                    row,
                    last_glob: parts.last().is_some_and(|l| has_glob(l)),
                    parts,
                }
            })
            .collect()
    })
}

/// Whether a path can match a home row at all: every row starts with a dot
/// directory or dotfile (`.ssh`, `.config`, `.npmrc`) or macOS's `Library`
/// (a unit test in aq-knowledge keeps it so), so a path with neither and no
/// glob cannot.
fn may_be_in_home_rows(p: &NormPath) -> bool {
    p.parts
        .iter()
        .any(|c| c.starts_with('.') || c == "Library" || has_glob(c))
}

/// The workspace row a path's file name is, unless a settings file
/// (`IfValue`), a template or a test fixture key.
fn workspace_kind(p: &NormPath) -> Option<&'static Credential> {
    let name = p.name().to_ascii_lowercase();
    if credentials::is_template(&name) || name.starts_with(".env") && is_source_file(&name) {
        return None;
    }
    let usable = |c: &&'static Credential| {
        let settings = matches!(c.mask, Mask::IfValue(_));
        let test_key = c.kind == Kind::KeyFile && is_fixture_path(p);
        !settings && !test_key
    };
    if !has_glob(&name) {
        return credentials::workspace_row(&name).filter(usable);
    }
    // The table's workspace names are lowercase (a unit test in aq-knowledge).
    credentials::in_place(Place::Workspace)
        .find(|c| written_name_is(&name, c.path))
        .filter(usable)
}

/// Whether a file name as written (a glob) names files of a workspace row.
/// It counts when it is at least as narrow as the row (`*.pem` for `*.pem`)
/// or spells the start of a name the row matches (`id_*` for `id_rsa`,
/// `cred*` for `credentials.json`); `*` and `*.json` could be anything and
/// are not credentials.
fn written_name_is(have: &str, row: &str) -> bool {
    glob_match(row, have)
        || (!has_glob(row) && !have.starts_with(['*', '?', '[']) && glob_match(have, row))
}

/// Whether a path is a key file by its name or extension (`server.pem`,
/// `tls.key`, `id_rsa`): it may be a certificate or a key, which
/// `openssl x509` inspects without printing.
pub(crate) fn is_key_file(path: &str) -> bool {
    workspace_kind(&NormPath::new(path)).is_some_and(|c| c.kind == Kind::KeyFile)
}

/// A directory that holds credentials: copying or sending it whole leaks
/// them (the catalog's directory rows), or the home directory.
pub fn secret_dir(path: &str) -> Option<&'static str> {
    let p = NormPath::new(path);
    if may_be_in_home_rows(&p) {
        for r in home_rows() {
            if matches!(r.row.mask, Mask::Dir(_) | Mask::Near)
                && p.ends_with(&r.parts)
                && (p.in_home || p.parts.len() == r.parts.len())
            {
                return Some(r.row.what);
            }
        }
    }
    if p.is_home() {
        return Some("the home directory");
    }
    // The catalog's absolute directories (`/run/secrets/`); not the agent
    // sockets' (`/tmp/ssh-*/`), which are connected to, not read.
    if p.absolute {
        let parts = system_parts(&p);
        return credentials::in_place(Place::System)
            .filter(|r| r.path.ends_with('/') && r.kind != credentials::Kind::Ssh)
            .find(|r| {
                let want = r.path.trim_matches('/').split('/');
                parts.len() == want.clone().count()
                    && parts.iter().zip(want).all(|(a, b)| name_matches(a, b))
            })
            .map(|r| r.what);
    }
    None
}

/// A directory of the home with a credential somewhere below it, though
/// not a credential directory itself (`~/.claude` holds the Claude Code
/// login, `~/.config` holds many): archiving, copying or sending it whole
/// takes them along. Listing it or reading its other files does not.
pub(crate) fn holds_secrets(path: &str) -> Option<&'static str> {
    let p = NormPath::new(path);
    if !p.in_home || p.parts.is_empty() || !may_be_in_home_rows(&p) {
        return None;
    }
    home_rows()
        .iter()
        .find(|r| {
            r.parts.len() > p.parts.len()
                && r.parts
                    .iter()
                    .zip(&p.parts)
                    .all(|(a, b)| name_matches(b, a))
        })
        .map(|r| r.row.what)
}

/// An agent's own directory in the home, which holds its login itself:
/// `~/.claude` holds the Claude Code login (`.credentials.json`), `~/.codex`
/// Codex's (`auth.json`), `~/.gemini` Gemini's (the catalog's `Unmasked`
/// rows). Listing it shows the login is there and what it is called, as
/// listing a credential directory does.
pub(crate) fn lists_credential_file(path: &str) -> Option<&'static str> {
    let p = NormPath::new(path);
    if !p.in_home || p.parts.is_empty() || !may_be_in_home_rows(&p) {
        return None;
    }
    home_rows()
        .iter()
        .find(|r| {
            r.row.mask == Mask::Unmasked
                && r.parts.len() == p.parts.len() + 1
                && r.parts
                    .iter()
                    .zip(&p.parts)
                    .all(|(a, b)| name_matches(b, a))
        })
        .map(|r| r.row.what)
}

/// Whether a path is a place where credentials live, or inside one (but
/// not itself a secret): `~/.ssh/known_hosts`, `~/.ssh/*.pub`,
/// `~/.aws/config`. The catalog's directory rows, in a home directory or
/// relative to one (`.ssh/config`).
pub fn credential_location(path: &str) -> bool {
    let p = NormPath::new(path);
    if !may_be_in_home_rows(&p) {
        return false;
    }
    let from_home =
        p.in_home || (!p.absolute && p.parts.first().is_some_and(|f| f.starts_with('.')));
    home_rows()
        .iter()
        .filter(|r| matches!(r.row.mask, Mask::Dir(_) | Mask::Near))
        .any(|r| {
            (from_home && p.starts_with(&r.parts))
                || (r.parts.len() >= 2 && p.contains_seq(&r.parts))
        })
}

/// Whether an entry of `[paths] unmasked` covers a path: a `~/` or
/// absolute glob covers what it matches and everything below; a file-name
/// glob (no `/`) covers workspace files of that name; a relative glob with
/// a `/` covers that path in the workspace.
pub(crate) fn unmask_covers(entry: &str, p: &NormPath) -> bool {
    let entry = entry.trim_end_matches('/');
    let e = NormPath::new(entry);
    if e.in_home || e.absolute {
        return e.in_home == p.in_home
            && e.absolute == p.absolute
            && p.starts_with(&e.parts.iter().map(String::as_str).collect::<Vec<_>>());
    }
    if p.in_home || p.absolute {
        return false;
    }
    if entry.contains('/') {
        glob_match(&e.parts.join("/"), &p.parts.join("/"))
    } else {
        credentials::name_matches(entry, p.name())
    }
}

/// `.env`, `.env.local`, `.env.production` ... but not the templates.
pub(crate) fn is_dotenv_secret(name: &str) -> bool {
    if has_glob(name) {
        let candidates = [".env", ".env.local", ".env.production", ".env.development"];
        return candidates.iter().any(|c| glob_match(name, c));
    }
    (name == ".env" || name.starts_with(".env."))
        && !credentials::is_template(name)
        && !is_source_file(name)
}

/// A source file named after the environment it reads (`.env.ts`,
/// `.env.d.ts`, `.env.mjs`): code, not values.
fn is_source_file(name: &str) -> bool {
    const CODE: &[&str] = &[
        ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".py", ".rb", ".go", ".rs", ".java", ".kt",
        ".swift", ".php", ".sh", ".md",
    ];
    CODE.iter().any(|ext| name.ends_with(ext))
}

/// Test fixtures and examples may hold fake keys: `tests/fixtures/x.pem`.
fn is_fixture_path(p: &NormPath) -> bool {
    let dirs = &p.parts[..p.parts.len().saturating_sub(1)];
    dirs.iter().any(|c| credentials::is_fixture_dir(c)) || credentials::is_fixture_name(p.name())
}

/// Shell startup files in a home directory or the system (the
/// [`PlaceKind::ShellRc`](crate::places::PlaceKind) places).
pub(crate) fn is_shell_rc(path: &str) -> bool {
    crate::places::place_of(path).is_some_and(|m| m.kind == crate::places::PlaceKind::ShellRc)
}

/// What the system needs to start or to let anyone log in: the kernels and
/// boot loader (`/boot`), the account and sudo files, the mount table, the
/// system's programs and libraries. Deleting one leaves a machine that
/// does not boot or that nobody can log in to.
pub(crate) fn vital_system_file(path: &str) -> Option<&'static str> {
    let p = NormPath::new(path);
    if !p.absolute || p.parts.len() < 2 {
        return None;
    }
    let top = p.parts[0].as_str();
    let second = p.parts[1].as_str();
    match (top, second) {
        ("boot", _) => Some("the kernels and boot loader"),
        (
            "etc",
            "passwd" | "shadow" | "group" | "gshadow" | "sudoers" | "fstab" | "pam.d" | "sudoers.d",
        ) if p.parts.len() <= 3 => {
            Some("the accounts, sudo and mount settings everyone logs in with")
        }
        // Not the packages a language installs there (`/usr/lib/node_modules`,
        // `dist-packages`): removing one of those is a write, which asks.
        _ if p.parts.iter().any(|c| {
            matches!(
                c.as_str(),
                "node_modules" | "dist-packages" | "site-packages"
            )
        }) =>
        {
            None
        }
        ("bin" | "sbin" | "lib" | "lib64", _) => Some("the system's own programs and libraries"),
        ("usr", "bin" | "sbin" | "lib" | "lib64" | "libexec") => {
            Some("the system's own programs and libraries")
        }
        _ => None,
    }
}

/// `/tmp/*`, `/var/tmp/*`: everything in a temporary directory, which other
/// programs' files share; deleting it asks, unlike `rm -rf /tmp`.
pub(crate) fn is_everything_in_temp(path: &str) -> bool {
    matches!(
        path.trim_end_matches(['*', '.', '/', '{', '}', ',']),
        "/tmp" | "/var/tmp"
    ) && path.ends_with(['*', '}'])
}

/// Top-level system directories.
pub(crate) fn is_system_dir(path: &str) -> bool {
    let p = NormPath::new(path);
    if p.is_root() || p.is_home() {
        return true;
    }
    if p.absolute && p.parts.len() == 1 {
        let top = [
            "bin",
            "boot",
            "dev",
            "etc",
            "home",
            "lib",
            "lib32",
            "lib64",
            "libx32",
            "media",
            "mnt",
            "opt",
            "proc",
            "root",
            "run",
            "sbin",
            "srv",
            "sys",
            "usr",
            "var",
            "tmp",
            "Users",
            "System",
            "Library",
            "Applications",
            "private",
            "Volumes",
            "snap",
            "nix",
        ];
        return top.contains(&p.parts[0].as_str()) || p.parts[0] == "*";
    }
    if p.absolute && p.parts.len() == 2 {
        let s = p.parts.join("/");
        return matches!(
            s.as_str(),
            "usr/bin"
                | "usr/lib"
                | "usr/local"
                | "usr/share"
                | "usr/sbin"
                | "var/lib"
                | "var/log"
                | "etc/ssh"
                | "usr/include"
        );
    }
    false
}

/// Whether a path written as `/*`, `~/*`, `~/.*` means "everything in" a
/// top-level directory.
pub(crate) fn is_everything_in_system_dir(path: &str) -> bool {
    match path
        .strip_suffix("/*")
        .or_else(|| path.strip_suffix("/.*"))
        .or_else(|| path.strip_suffix("/{*,.*}"))
    {
        Some("") => true,
        Some(dir) => is_system_dir(dir),
        None => false,
    }
}

/// The coding agents' records of what they did (Claude Code's and Qwen's
/// `projects`, Codex's `sessions`, Gemini's `tmp` chats): deleting them
/// hides a session's history as deleting the shell's does.
pub(crate) fn agent_transcripts(path: &str) -> Option<&'static str> {
    let p = NormPath::new(path);
    if !p.in_home || p.parts.len() < 2 {
        return None;
    }
    match (p.parts[0].as_str(), p.parts[1].as_str()) {
        (".claude" | ".qwen", "projects")
        | (".codex", "sessions" | "history.jsonl")
        | (".gemini", "tmp")
        | (".claude", "history.jsonl") => Some("the agent's transcripts of its sessions"),
        _ => None,
    }
}

/// The histories of the shell and of the REPLs and database clients that
/// keep one like it (what the user typed, tokens and passwords pasted on
/// command lines among it): reading one asks, searching or sending it
/// blocks, and deleting, emptying or freezing it hides what was run.
pub(crate) fn is_history_file(path: &str) -> bool {
    /// Files right in the home directory.
    const NAMES: &[&str] = &[
        ".bash_history",
        ".zsh_history",
        ".history",
        ".sh_history",
        ".zhistory",
        ".python_history",
        ".node_repl_history",
        ".mysql_history",
        ".psql_history",
        ".sqlite_history",
        ".irb_history",
        ".pry_history",
        ".rediscli_history",
        ".dbshell",
        ".Rhistory",
        ".scala_history",
        ".lesshst",
        ".viminfo",
    ];
    /// Files deeper in it: fish's, atuin's database, nushell's, IPython's
    /// and Julia's, mongosh's.
    const DEEPER: &[&[&str]] = &[
        &[".local", "share", "fish", "fish_history"],
        &[".local", "share", "atuin", "history.db"],
        &[".config", "nushell", "history.txt"],
        &[".config", "nushell", "history.sqlite3"],
        &[".ipython", "*", "history.sqlite"],
        &[".julia", "logs", "repl_history.jl"],
        &[".mongodb", "mongosh", "mongosh_repl_history"],
    ];
    let p = NormPath::new(path);
    if !p.in_home {
        return false;
    }
    (p.parts.len() == 1 && NAMES.iter().any(|n| name_matches(p.name(), n)))
        || DEEPER
            .iter()
            .any(|d| p.parts.len() == d.len() && p.ends_with(d))
}

/// System logs.
pub(crate) fn is_system_log(path: &str) -> bool {
    let p = NormPath::new(path);
    p.absolute
        && p.parts.first().is_some_and(|f| f == "var")
        && p.parts.get(1).is_some_and(|s| s == "log")
        || p.absolute
            && p.parts.first().is_some_and(|f| f == "var")
            && p.parts.get(1).is_some_and(|s| s == "audit")
}

/// Whole disks and partitions.
pub(crate) fn is_block_device(path: &str) -> bool {
    let Some(dev) = path.strip_prefix("/dev/") else {
        return false;
    };
    let prefixes = [
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "mapper/", "loop",
        "sr",
    ];
    prefixes.iter().any(|p| dev.starts_with(p))
}

/// Directories that only a build or a package manager makes, whatever
/// directory they sit in.
const BUILD_DIRS: &[&str] = &[
    "target",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    "htmlcov",
    ".nyc_output",
    "coverage",
    ".coverage",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".parcel-cache",
    ".eslintcache",
    ".gradle",
    ".angular",
    "storybook-static",
    "cmake-build-debug",
    "cmake-build-release",
    ".venv",
    "venv",
    ".dart_tool",
    "DerivedData",
    ".terraform",
    ".sass-cache",
    ".docusaurus",
    ".expo",
    ".vercel",
    ".output",
    "zig-cache",
    "zig-out",
    ".zig-cache",
    ".stack-work",
    "dist-newstyle",
    "elm-stuff",
    "bower_components",
    "jspm_packages",
    ".pnpm-store",
    ".yarn-cache",
    ".hypothesis",
    ".benchmarks",
    "__snapshots__.bak",
    // Sphinx's (`docs/_build`) and Mix's output.
    "_build",
    // CMake's generated files in a build tree.
    "CMakeFiles",
    // setuptools' downloaded build requirements.
    ".eggs",
    // Nx's cache and workspace data; Godot 4's imported assets and shader
    // cache (Godot 3: `.import`), all made again on the next open.
    ".nx",
    ".godot",
    ".import",
    // dbt's installed packages (`dbt deps` fetches them again).
    "dbt_packages",
];

/// Pairs of directories that are build output together, though the first
/// alone may hold sources: Bundler's install path (`vendor/bundle`, where
/// `bundle install --path` or `BUNDLE_PATH` puts gems).
const BUILD_DIR_PAIRS: &[(&str, &str)] = &[("vendor", "bundle")];

/// Names that are build output at the top of a project or a package
/// (`dist`, `frontend/build`) but may be sources elsewhere (`src/bin`).
const BUILD_DIRS_AT_PACKAGE_ROOT: &[&str] = &[
    "dist",
    "build",
    "out",
    "bin",
    "obj",
    "tmp",
    ".tmp",
    ".cache",
    "_site",
    // pytest-cov's and c8's reports (`--cov-report=html:cov`).
    "cov",
    "site",
    "lib-cov",
    "public/build",
    "deps",
    "Pods",
    ".bundle",
];

/// Gradle's module directories (`gradle init` makes `app` for an
/// application, `lib` for a library): their `build` is the module's build
/// output (`app/build`), though the same names hold sources elsewhere.
const GRADLE_MODULES: &[&str] = &["app", "lib"];

/// Files that only a build, a test run or a coverage tool writes at the top
/// of a project: regenerated by the next run (`coverage.xml` by
/// coverage.py, `compile_commands.json` by CMake or Bear, `*.tsbuildinfo`
/// by `tsc -b`).
const GENERATED_FILES: &[&str] = &[
    "CMakeCache.txt",
    "cmake_install.cmake",
    "compile_commands.json",
    "coverage.json",
    "coverage.xml",
    "lcov.info",
    "nosetests.xml",
];

/// Directories whose children are sources, not build output.
const SOURCE_DIRS: &[&str] = &[
    "src", "lib", "source", "sources", "app", "docs", "doc", "include", "test", "tests", "spec",
    "pkg", "cmd", "internal",
];

/// Whether deleting `path` only removes regenerable build output (or the
/// agent's scratch space under /tmp).
pub(crate) fn is_build_output(path: &str) -> bool {
    let p = NormPath::new(path);
    // `../shared-ui/node_modules`: a neighbouring checkout's build output,
    // named below the project it belongs to.
    let ups = p.parts.iter().take_while(|c| *c == "..").count();
    if ups > 0 && !p.absolute && !p.in_home {
        let rest = &p.parts[ups..];
        return rest.len() >= 2
            && !rest.iter().any(|c| c == "..")
            && is_build_output(&rest.join("/"));
    }
    if p.parts.is_empty() || p.parts.iter().any(|c| c == "..") {
        return false;
    }
    if p.absolute {
        let under_tmp = p.parts.first().is_some_and(|f| f == "tmp")
            || (p.parts.first().is_some_and(|f| f == "var")
                && p.parts.get(1).is_some_and(|s| s == "tmp"));
        if under_tmp {
            return p.parts.len() >= 2;
        }
    }
    for (k, part) in p.parts.iter().enumerate() {
        if k > 0
            && BUILD_DIR_PAIRS
                .iter()
                .any(|(a, b)| p.parts[k - 1] == *a && part == b)
            && !p.in_home
            && !p.absolute
        {
            return true;
        }
        if BUILD_DIRS.contains(&part.as_str()) || part.ends_with(".egg-info") {
            // Under home, `~/node_modules` itself is not a project's.
            return !(p.in_home && k == 0);
        }
        if BUILD_DIRS_AT_PACKAGE_ROOT.contains(&part.as_str()) && !p.in_home && !p.absolute {
            let parent_is_source = k > 0
                && SOURCE_DIRS.contains(&p.parts[k - 1].as_str())
                && !(part == "build" && GRADLE_MODULES.contains(&p.parts[k - 1].as_str()));
            if !parent_is_source {
                return true;
            }
        }
    }
    if p.parts.len() == 1 || !p.absolute && !p.in_home {
        let name = p.name();
        return GENERATED_FILES.contains(&name)
            // `coverage combine`'s parallel data files: `.coverage.host.123`.
            || name.starts_with(".coverage.")
            || name.ends_with(".tsbuildinfo")
            // lcov tracefiles (`cov.lcov`, `coverage.lcov`).
            || name.ends_with(".lcov")
            || name.ends_with(".pyc")
            || name.ends_with(".o")
            || name.ends_with(".log")
            || name.ends_with(".tmp");
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_recognised_by_name_and_place() {
        for s in [
            ".env",
            "./.env.local",
            "app/.env.production",
            "~/.ssh/id_rsa",
            "$HOME/.aws/credentials",
            "/home/dev/.ssh/id_ed25519",
            "/root/.kube/config",
            "~/.docker/config.json",
            "~/.netrc",
            "~/.git-credentials",
            "~/.config/gh/hosts.yml",
            "/etc/shadow",
            "server.key",
            "certs/prod.pem",
            ".e*v",
            "~/.ssh/id_*",
            "~/.gnupg/private-keys-v1.d/x.key",
            "~/.npmrc",
            "~/.pypirc",
            "/proc/$PPID/environ",
            "/proc/*/environ",
            "/proc/1/task/1/environ",
            "/run/user/1000/containers/auth.json",
            "$XDG_RUNTIME_DIR/containers/auth.json",
            "config/secrets.yml",
            "deploy_key",
        ] {
            assert!(secret_kind(s).is_some(), "{s} should be a secret");
        }
        // The agent sockets there are connected to, not read.
        assert!(secret_kind("/run/user/1000/keyring/ssh").is_none());
        for s in [
            ".env.example",
            ".env.sample",
            ".env.template",
            "~/.ssh/id_rsa.pub",
            "~/.ssh/known_hosts",
            "README.md",
            "tests/fixtures/server.key",
            "src/env.rs",
            "environment.ts",
            ".npmrc",
            "key.rs",
            "/proc/self/status",
            "/proc/self/environ",
            "/proc/self/cmdline",
            "docs/environ",
        ] {
            assert!(secret_kind(s).is_none(), "{s} should not be a secret");
        }
    }

    #[test]
    fn credential_directories_include_the_absolute_rows() {
        for s in [
            "/run/secrets",
            "/run/secrets/",
            "/var/run/secrets",
            "~/.aws",
            "$HOME",
        ] {
            assert!(
                secret_dir(s).is_some(),
                "{s} should be a credential directory"
            );
        }
        for s in [
            "/run",
            "/run/user/1000",
            "/tmp/ssh-abc",
            "/var/run",
            "~/src",
        ] {
            assert!(
                secret_dir(s).is_none(),
                "{s} should not be a credential directory"
            );
        }
    }

    #[test]
    fn fast_globs_match_like_the_glob_crate() {
        let options = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: true,
        };
        for (p, n) in [
            ("*.rs", "main.rs"),
            ("*.rs", ".rs"),
            ("id_*", "id_rsa"),
            ("*", ".env"),
            (".e*v", ".env"),
            ("a*b*c", "aXbYc"),
            ("a*b*c", "abcb"),
            ("?x", "ax"),
            ("?x", "x"),
            ("**", "abc"),
            ("*credentials*", "application_default_credentials.json"),
            ("Login Data", "Login Data"),
        ] {
            let slow = !(n.starts_with('.') && !p.starts_with('.') && has_glob(p))
                && glob::Pattern::new(p).is_ok_and(|g| g.matches_with(n, options));
            assert_eq!(glob_match(p, n), slow, "{p} {n}");
        }
    }

    #[test]
    fn build_output_is_recognised() {
        for s in [
            "target",
            "target/",
            "./node_modules",
            "frontend/dist",
            "__pycache__",
            "/tmp/build-cache",
            "app/build",
            "lib/build/",
            "coverage.xml",
            "compile_commands.json",
            ".coverage.host.4242",
            "tsconfig.tsbuildinfo",
            "docs/_build",
            "build/CMakeFiles",
            "CMakeCache.txt",
            "vendor/bundle",
            ".nx/cache",
            ".godot/imported",
            "apps/*/node_modules",
            "cov",
            "cov.lcov",
            ".eggs",
        ] {
            assert!(is_build_output(s), "{s}");
        }
        for s in [
            "src",
            "src/legacy",
            "~",
            "/",
            "..",
            "../target/..",
            "/etc",
            "src/bin",
            "docs/site",
            "app/.cache",
            "app/bin",
            "src/build",
            "coverage.xml.orig",
            "~/node_modules",
            "vendor",
            "src/vendor/bundle.js",
            "Library",
            "Temp",
        ] {
            assert!(!is_build_output(s), "{s}");
        }
    }

    #[test]
    fn histories_of_shells_and_repls_are_history_files() {
        for s in [
            "~/.bash_history",
            "~/.irb_history",
            "/home/dev/.psql_history",
            "~/.local/share/atuin/history.db",
            "~/.ipython/profile_default/history.sqlite",
            "~/.config/nushell/history.txt",
        ] {
            assert!(is_history_file(s), "{s}");
        }
        for s in [
            "history.db",
            "~/.local/share/atuin/config.toml",
            "docs/.bash_history.md",
        ] {
            assert!(!is_history_file(s), "{s}");
        }
    }

    #[test]
    fn system_dirs_are_recognised() {
        for s in ["/", "~", "~/", "$HOME", "/etc", "/usr", "/home", "/var/log"] {
            assert!(is_system_dir(s), "{s}");
        }
        for s in ["/tmp/x", "src", "/etc/nginx/x.conf"] {
            assert!(!is_system_dir(s), "{s}");
        }
        assert!(is_everything_in_system_dir("/*"));
        assert!(is_everything_in_system_dir("~/*"));
    }
}
