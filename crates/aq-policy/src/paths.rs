//! What a path names: a credential, a place credentials live, a shell
//! startup file, a system directory, regenerable build output. Paths are
//! compared as text after the shell's expansions (`~`, `$HOME`), with
//! `/home/USER`, `/root` and `/Users/USER` read as a home directory, and
//! globs (`.e*v`, `id_*`) matched against the names they could expand to.

/// A path with `~`-style home prefixes and `./` removed, split in parts.
#[derive(Debug, Clone)]
pub struct NormPath {
    /// Whether the path starts at a home directory (`~`, `$HOME`, `/home/x`).
    pub in_home: bool,
    /// Whether it is absolute (and not in a home directory).
    pub absolute: bool,
    /// The components after the home or root prefix.
    pub parts: Vec<String>,
}

/// Variables that name a directory under the home by default: a path
/// starting with one (`$XDG_STATE_HOME/x`, `${XDG_CONFIG_HOME:-$HOME/.config}/x`)
/// is read as starting with that directory.
const HOME_DIRS: &[(&str, &str)] = &[
    ("XDG_CONFIG_HOME", "~/.config"),
    ("XDG_STATE_HOME", "~/.local/state"),
    ("XDG_DATA_HOME", "~/.local/share"),
    ("XDG_CACHE_HOME", "~/.cache"),
    ("CLAUDE_CONFIG_DIR", "~/.claude"),
    ("CODEX_HOME", "~/.codex"),
];

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

impl NormPath {
    /// Normalizes a path as the shell left it.
    pub fn new(path: &str) -> Self {
        let path = path.trim();
        let replaced = if path.starts_with('$') {
            with_home_dirs(path)
        } else {
            None
        };
        let path = replaced.as_deref().unwrap_or(path);
        let (in_home, rest) = if let Some(r) = path.strip_prefix('~') {
            // `~user/...` is another home.
            let r = r.split_once('/').map(|(_, r)| r).unwrap_or("");
            (true, r.to_string())
        } else if let Some(r) = path
            .strip_prefix("$HOME")
            .or_else(|| path.strip_prefix("${HOME}"))
        {
            (true, r.to_string())
        } else if let Some(r) = path.strip_prefix("/root") {
            if r.is_empty() || r.starts_with('/') {
                (true, r.to_string())
            } else {
                (false, path.to_string())
            }
        } else if let Some(r) = path
            .strip_prefix("/home/")
            .or_else(|| path.strip_prefix("/Users/"))
        {
            match r.split_once('/') {
                Some((_, rest)) => (true, rest.to_string()),
                None => (true, String::new()),
            }
        } else {
            (false, path.to_string())
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

    /// The last component.
    pub fn name(&self) -> &str {
        self.parts.last().map(String::as_str).unwrap_or("")
    }

    /// Whether the path is exactly the home directory.
    pub fn is_home(&self) -> bool {
        self.in_home && self.parts.is_empty()
    }

    /// Whether the path is exactly `/`.
    pub fn is_root(&self) -> bool {
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
pub fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Shell-style glob match of a whole name.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    // As in bash: `*` does not match dotfiles, `.e*v` does.
    if name.starts_with('.') && !pattern.starts_with('.') && has_glob(pattern) {
        return false;
    }
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    glob::Pattern::new(pattern).is_ok_and(|p| p.matches_with(name, options))
}

/// A kind of credential file.
pub fn secret_kind(path: &str) -> Option<&'static str> {
    let p = NormPath::new(path);
    let name = p.name();
    if name.is_empty() {
        return None;
    }
    if is_dotenv_secret(name) {
        return Some("a .env file with secrets");
    }
    let table: &[(&[&str], bool, &str)] = &[
        // (trailing components, must be under home, description)
        (&[".ssh", "id_*"], false, "an SSH private key"),
        (&[".ssh", "*_rsa"], false, "an SSH private key"),
        (&[".ssh", "*_ed25519"], false, "an SSH private key"),
        (&[".ssh", "*_ecdsa"], false, "an SSH private key"),
        (&[".ssh", "*_dsa"], false, "an SSH private key"),
        (&[".aws", "credentials"], false, "AWS credentials"),
        (&[".netrc"], true, "~/.netrc passwords"),
        (&["_netrc"], true, "~/.netrc passwords"),
        (&[".git-credentials"], false, "stored git credentials"),
        (&[".config", "gh", "hosts.yml"], false, "GitHub CLI tokens"),
        (&[".config", "hub"], true, "GitHub tokens"),
        (
            &[".kube", "config"],
            false,
            "Kubernetes cluster credentials",
        ),
        (
            &[".docker", "config.json"],
            false,
            "Docker registry credentials",
        ),
        (&[".npmrc"], true, "npm registry tokens"),
        (&[".pypirc"], true, "PyPI upload tokens"),
        (&[".pgpass"], true, "PostgreSQL passwords"),
        (&[".my.cnf"], true, "MySQL passwords"),
        (&[".vault-token"], true, "a Vault token"),
        (&[".cargo", "credentials"], true, "crates.io tokens"),
        (&[".cargo", "credentials.toml"], true, "crates.io tokens"),
        (&[".gem", "credentials"], true, "RubyGems tokens"),
        (
            &[".terraform.d", "credentials.tfrc.json"],
            true,
            "Terraform Cloud tokens",
        ),
        (
            &[".config", "gcloud", "*credentials*"],
            false,
            "Google Cloud credentials",
        ),
        (
            &[".config", "gcloud", "access_tokens.db"],
            false,
            "Google Cloud tokens",
        ),
        (&[".azure", "accessTokens.json"], false, "Azure tokens"),
        (&[".azure", "msal_token_cache.json"], false, "Azure tokens"),
    ];
    for (tail, home_only, what) in table {
        if p.ends_with(tail) && (!home_only || p.in_home) {
            if tail[0] == ".ssh" && name.ends_with(".pub") {
                continue;
            }
            return Some(what);
        }
    }
    if p.contains_seq(&[".gnupg"]) && !p.ends_with(&[".gnupg"]) {
        return Some("GnuPG private keys");
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
        return Some("another process's environment, with the agent's keys");
    }
    if p.absolute
        && matches!(p.parts.as_slice(), [e, f] if e == "etc" && (f == "shadow" || f == "gshadow" || f == "shadow-" || f == "master.passwd"))
    {
        return Some("the system password hashes");
    }
    let lower = name.to_ascii_lowercase();
    let key_ext = [
        ".pem",
        ".key",
        ".p12",
        ".pfx",
        ".jks",
        ".keystore",
        ".kdbx",
        ".ppk",
        ".asc",
    ];
    if key_ext
        .iter()
        .any(|e| lower.ends_with(e) && lower.len() > e.len())
        && !is_fixture_path(&p)
    {
        return Some(KEY_FILE_KIND);
    }
    None
}

/// `/proc/self/environ`, `/proc/$$/environ`, `/proc/thread-self/environ`:
/// the reading process's own environment, all of it.
pub fn is_own_environ(path: &str) -> bool {
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

/// A directory that holds credentials: copying or sending it whole leaks them.
pub fn secret_dir(path: &str) -> Option<&'static str> {
    let p = NormPath::new(path);
    let dirs: &[(&[&str], &str)] = &[
        (&[".ssh"], "the SSH key directory"),
        (&[".aws"], "the AWS credentials directory"),
        (&[".gnupg"], "the GnuPG key directory"),
        (
            &[".config", "gcloud"],
            "the Google Cloud credentials directory",
        ),
        (&[".kube"], "the Kubernetes credentials directory"),
        (&[".config", "gh"], "the GitHub CLI directory"),
        (&[".docker"], "the Docker credentials directory"),
        (&[".azure"], "the Azure credentials directory"),
    ];
    for (tail, what) in dirs {
        if p.ends_with(tail) && (p.in_home || p.parts.len() == tail.len()) {
            return Some(what);
        }
    }
    if p.is_home() {
        return Some("the home directory");
    }
    None
}

/// Whether a path is inside a place where credentials live (but not itself a
/// secret): `~/.ssh/known_hosts`, `~/.ssh/*.pub`, `~/.aws/config`.
pub fn credential_location(path: &str) -> bool {
    let p = NormPath::new(path);
    let homes = [".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure"];
    (p.in_home || p.parts.first().is_some_and(|f| f.starts_with('.')))
        && (homes
            .iter()
            .any(|h| p.parts.first().is_some_and(|f| f == h))
            || p.contains_seq(&[".config", "gcloud"])
            || p.contains_seq(&[".config", "gh"]))
}

/// `.env`, `.env.local`, `.env.production` ... but not the templates.
pub fn is_dotenv_secret(name: &str) -> bool {
    if has_glob(name) {
        let candidates = [".env", ".env.local", ".env.production", ".env.development"];
        return candidates.iter().any(|c| glob_match(name, c));
    }
    if name == ".env" {
        return true;
    }
    match name.strip_prefix(".env.") {
        Some(stage) => !is_template_suffix(stage),
        None => false,
    }
}

fn is_template_suffix(stage: &str) -> bool {
    let s = stage.to_ascii_lowercase();
    [
        "example", "sample", "template", "dist", "defaults", "default", "schema", "tmpl", "tpl",
        "skel", "in",
    ]
    .iter()
    .any(|t| s == *t || s.starts_with(&format!("{t}.")) || s.ends_with(&format!(".{t}")))
}

/// Test fixtures and examples may hold fake keys: `tests/fixtures/x.pem`.
fn is_fixture_path(p: &NormPath) -> bool {
    p.parts.iter().any(|c| {
        let c = c.to_ascii_lowercase();
        matches!(
            c.as_str(),
            "test"
                | "tests"
                | "testdata"
                | "fixtures"
                | "fixture"
                | "__fixtures__"
                | "spec"
                | "examples"
                | "example"
                | "testing"
                | "mocks"
                | "__mocks__"
        )
    }) || p.name().to_ascii_lowercase().contains("example")
        || p.name().to_ascii_lowercase().contains("fake")
        || p.name().to_ascii_lowercase().contains("dummy")
}

/// Shell startup files in a home directory or the system (the
/// [`PlaceKind::ShellRc`](crate::places::PlaceKind) places).
pub fn is_shell_rc(path: &str) -> bool {
    crate::places::place_of(path).is_some_and(|m| m.kind == crate::places::PlaceKind::ShellRc)
}

/// Top-level system directories.
pub fn is_system_dir(path: &str) -> bool {
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
pub fn is_everything_in_system_dir(path: &str) -> bool {
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

/// Files whose deletion or truncation hides history.
pub fn is_history_file(path: &str) -> bool {
    let p = NormPath::new(path);
    let names = [
        ".bash_history",
        ".zsh_history",
        ".history",
        ".sh_history",
        ".zhistory",
        ".python_history",
        ".node_repl_history",
        ".mysql_history",
        ".psql_history",
        ".lesshst",
        ".viminfo",
    ];
    p.in_home && p.parts.len() == 1 && names.iter().any(|n| name_matches(p.name(), n))
        || (p.in_home && p.ends_with(&[".local", "share", "fish", "fish_history"]))
}

/// System logs.
pub fn is_system_log(path: &str) -> bool {
    let p = NormPath::new(path);
    p.absolute
        && p.parts.first().is_some_and(|f| f == "var")
        && p.parts.get(1).is_some_and(|s| s == "log")
        || p.absolute
            && p.parts.first().is_some_and(|f| f == "var")
            && p.parts.get(1).is_some_and(|s| s == "audit")
}

/// Whole disks and partitions.
pub fn is_block_device(path: &str) -> bool {
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
];

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
    "_build",
    "_site",
    "site",
    "lib-cov",
    "public/build",
    "deps",
    "Pods",
    ".bundle",
];

/// Directories whose children are sources, not build output.
const SOURCE_DIRS: &[&str] = &[
    "src", "lib", "source", "sources", "app", "docs", "doc", "include", "test", "tests", "spec",
    "pkg", "cmd", "internal",
];

/// Whether deleting `path` only removes regenerable build output (or the
/// agent's scratch space under /tmp).
pub fn is_build_output(path: &str) -> bool {
    let p = NormPath::new(path);
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
        if BUILD_DIRS.contains(&part.as_str()) || part.ends_with(".egg-info") {
            // Under home, `~/node_modules` itself is not a project's.
            return !(p.in_home && k == 0);
        }
        if BUILD_DIRS_AT_PACKAGE_ROOT.contains(&part.as_str()) && !p.in_home && !p.absolute {
            let parent_is_source = k > 0 && SOURCE_DIRS.contains(&p.parts[k - 1].as_str());
            if !parent_is_source {
                return true;
            }
        }
    }
    if p.parts.len() == 1 || !p.absolute && !p.in_home {
        let name = p.name();
        return name.ends_with(".pyc")
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
        ] {
            assert!(secret_kind(s).is_some(), "{s} should be a secret");
        }
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
    fn build_output_is_recognised() {
        for s in [
            "target",
            "target/",
            "./node_modules",
            "frontend/dist",
            "__pycache__",
            "/tmp/build-cache",
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
            "~/node_modules",
        ] {
            assert!(!is_build_output(s), "{s}");
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
