//! Where credentials live, as one catalog ([`CREDENTIALS`]), and how to
//! tell one by its content.
//!
//! Two consumers read the same rows:
//!
//! - the kernel sandbox of `aq run` masks them (an empty file or directory
//!   in their place): home files and directories, agent sockets, and files
//!   in the workspace found by name or by their first bytes;
//! - the engine's secret rules treat a read of any of them as a secret read
//!   (`secret-read`), copying or sending them as `secret-copy` and
//!   `net-exfil-secret`, and naming what the file is.
//!
//! Each row says how it is masked ([`Mask`]): always, only when the file
//! holds a credential value (build settings such as `~/.m2/settings.xml`
//! that builds also read for mirrors), only when it holds a private key
//! (`*.pem` may be a certificate), or not at all (a file inside a directory
//! masked whole, a directory where credentials sit beside other things).
//!
//! # Decisions
//!
//! - Templates (`.env.example`, `credentials.json.sample`) and public keys
//!   (`*.pub`) are never credentials ([`is_template`], [`is_public_key`]).
//! - Key files under test fixture directories (`tests/`, `testdata/`,
//!   `fixtures/` ...) or named `*example*`, `*fake*`, `*dummy*` are test
//!   data, readable by the rules and the sandbox alike ([`is_fixture_dir`]).
//! - A file the catalog does not name is looked at only when its name makes
//!   a key likely ([`worth_sniffing`]), and then only its first
//!   [`SNIFF_BYTES`], so the search stays cheap on large workspaces.

mod sniff;
mod table;

pub use sniff::{SNIFF_BYTES, VALUE_BYTES, holds_value, sniff_secret};
pub use table::CREDENTIALS;

/// What kind of credential a row is, for grouping in documentation and
/// `aq policy show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// SSH keys and agents.
    Ssh,
    /// GnuPG keys and agents.
    Gpg,
    /// Cloud and hosting CLIs: AWS, Google Cloud, Azure, Kubernetes, ...
    Cloud,
    /// Git hosting: GitHub and GitLab CLIs, stored git credentials.
    GitHosting,
    /// Package registries: npm, PyPI, crates.io, RubyGems, Maven, ...
    Registry,
    /// Model and data hubs: Hugging Face, Kaggle.
    ModelHub,
    /// Desktop keyrings and wallets.
    Keyring,
    /// Password managers and stores.
    PasswordStore,
    /// Browser and mail profiles: saved passwords and cookies.
    Browser,
    /// Environment files: `.env`, `.envrc`, direnv.
    Environment,
    /// Infrastructure tools: Terraform, Vault.
    Infrastructure,
    /// Login passwords: netrc, databases.
    Login,
    /// An application's own secrets files: Rails' and Streamlit's
    /// `secrets.*`, Wrangler's `.dev.vars`, WordPress's `wp-config.php`.
    Application,
    /// Key files by name or extension: `id_rsa`, `*.pem`, `*.p12`.
    KeyFile,
}

impl Kind {
    /// Every kind, in documentation order.
    pub const ALL: &'static [Kind] = &[
        Kind::Ssh,
        Kind::Gpg,
        Kind::Cloud,
        Kind::GitHosting,
        Kind::Registry,
        Kind::ModelHub,
        Kind::Keyring,
        Kind::PasswordStore,
        Kind::Browser,
        Kind::Environment,
        Kind::Infrastructure,
        Kind::Login,
        Kind::Application,
        Kind::KeyFile,
    ];

    /// A short title.
    pub fn title(self) -> &'static str {
        match self {
            Kind::Ssh => "SSH keys and agents",
            Kind::Gpg => "GnuPG",
            Kind::Cloud => "cloud and hosting CLIs",
            Kind::GitHosting => "git hosting",
            Kind::Registry => "package registries",
            Kind::ModelHub => "model and data hubs",
            Kind::Keyring => "desktop keyrings",
            Kind::PasswordStore => "password stores",
            Kind::Browser => "browser and mail profiles",
            Kind::Environment => "environment files",
            Kind::Infrastructure => "infrastructure tools",
            Kind::Login => "login passwords",
            Kind::Application => "application secrets",
            Kind::KeyFile => "key files",
        }
    }
}

/// What the rules make of the files inside a directory masked whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Files {
    /// Every file in it is a secret (`~/.gnupg`, a browser profile).
    Secret,
    /// Only the rows `Inside` it are secrets; the rest (`~/.ssh/known_hosts`,
    /// `~/.aws/config`) is a place where credentials live: looking asks.
    Named,
}

/// How the sandbox masks a row, which is also how sure the rules can be
/// that reading it reads a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mask {
    /// A directory masked whole: an empty directory in its place.
    Dir(Files),
    /// A file masked whatever it holds: an empty file in its place.
    File,
    /// A file masked when it holds a credential value (see [`holds_value`]
    /// for what the keys mean); otherwise it stays readable, because builds
    /// read it for registry mirrors and settings. The rules treat it as a
    /// secret in the home directory (where it serves every project), and
    /// not in the workspace (where it is the project's build configuration).
    IfValue(&'static [&'static str]),
    /// A file masked when its first bytes hold a private key ([`sniff_secret`]):
    /// a `.pem` file may be only a certificate.
    IfKey,
    /// A file inside a directory masked whole: the directory's mask hides it;
    /// the row says what it is.
    Inside,
    /// Not masked: a directory where credentials live beside other things
    /// (`~/.docker`), with its credential files as rows of their own.
    Near,
    /// Not masked: a coding agent's own login, which the agent started in
    /// the session reads to sign in (the key proxy keeps an API key outside
    /// the sandbox; an OAuth login lives here). Only the rules guard it: a
    /// command that reads, copies or sends it is judged like any secret.
    Unmasked,
}

/// Where a row's path is rooted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `~/...`: the home directory.
    Home,
    /// `$VAR` or `$VAR/...`: a path an environment variable names.
    Var,
    /// `/...`: an absolute path (a glob).
    System,
    /// A file-name glob matched anywhere in the workspace.
    Workspace,
}

/// One row of the catalog.
#[derive(Debug, PartialEq, Eq)]
pub struct Credential {
    /// Where (see the table's notes for the forms).
    pub path: &'static str,
    /// What it is, for a person.
    pub what: &'static str,
    /// What kind of credential.
    pub kind: Kind,
    /// How it is masked.
    pub mask: Mask,
}

/// A row; the table is written with this to keep each on one line.
pub(crate) const fn c(
    path: &'static str,
    what: &'static str,
    kind: Kind,
    mask: Mask,
) -> Credential {
    Credential {
        path,
        what,
        kind,
        mask,
    }
}

impl Credential {
    /// Where the path is rooted.
    pub fn place(&self) -> Place {
        place_of(self.path)
    }

    /// Whether it is a directory (its path ends in `/`).
    pub fn is_dir(&self) -> bool {
        self.path.ends_with('/')
    }

    /// The path without its trailing `/`, as a profile lists it.
    pub fn mask_path(&self) -> &'static str {
        self.path.strip_suffix('/').unwrap_or(self.path)
    }

    /// The components after the root (`~/`, `$VAR/`, `/`): for
    /// `~/.ssh/id_*`, `[".ssh", "id_*"]`; a workspace glob is one component.
    pub fn parts(&self) -> impl Iterator<Item = &'static str> + use<> {
        let p = self.mask_path();
        let rest = match self.place() {
            Place::Home => p.strip_prefix("~/").unwrap_or(p),
            Place::Var => p.split_once('/').map_or("", |(_, r)| r),
            Place::System => p.strip_prefix('/').unwrap_or(p),
            Place::Workspace => p,
        };
        rest.split('/').filter(|s| !s.is_empty())
    }

    /// For a `$VAR` row, the variable.
    pub fn var(&self) -> Option<&'static str> {
        let p = self.path.strip_prefix('$')?;
        Some(p.split('/').next().unwrap_or(p))
    }

    /// Whether the sandbox masks it whatever it holds.
    pub fn always_masked(&self) -> bool {
        matches!(self.mask, Mask::Dir(_) | Mask::File)
    }

    /// Whether the sandbox masks it (always or depending on its content).
    pub fn masked(&self) -> bool {
        !matches!(self.mask, Mask::Inside | Mask::Near | Mask::Unmasked)
    }

    /// Whether a file of this row holding `content` (its first
    /// [`Credential::read_limit`] bytes) is masked.
    pub fn masks_content(&self, content: &[u8]) -> bool {
        match self.mask {
            Mask::Dir(_) | Mask::File => true,
            Mask::IfValue(keys) => holds_value(keys, content),
            Mask::IfKey => sniff_secret(content).is_some(),
            Mask::Inside | Mask::Near | Mask::Unmasked => false,
        }
    }

    /// How much of a file [`Credential::masks_content`] needs: nothing for
    /// rows masked whatever they hold.
    pub fn read_limit(&self) -> usize {
        match self.mask {
            Mask::IfValue(_) => VALUE_BYTES,
            Mask::IfKey => SNIFF_BYTES,
            _ => 0,
        }
    }
}

fn place_of(path: &str) -> Place {
    if path.starts_with("~/") {
        Place::Home
    } else if path.starts_with('$') {
        Place::Var
    } else if path.starts_with('/') {
        Place::System
    } else {
        Place::Workspace
    }
}

/// Every row, sorted by path.
pub fn all() -> &'static [Credential] {
    CREDENTIALS
}

/// The rows in a place, in table order.
pub fn in_place(place: Place) -> impl Iterator<Item = &'static Credential> {
    by_place()[place as usize].iter().copied()
}

/// The table split by place once, so a lookup walks only its own rows.
fn by_place() -> &'static [Vec<&'static Credential>; 4] {
    static BY_PLACE: std::sync::OnceLock<[Vec<&'static Credential>; 4]> =
        std::sync::OnceLock::new();
    BY_PLACE.get_or_init(|| {
        let mut out: [Vec<&'static Credential>; 4] = Default::default();
        for c in CREDENTIALS {
            out[c.place() as usize].push(c);
        }
        out
    })
}

/// Whether a file name is a template of a secret file (`.env.example`,
/// `credentials.json.sample`, `.env.local.tmpl`): any dot-separated part
/// after the first is a template word.
pub fn is_template(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "default", "defaults", "dist", "example", "in", "sample", "schema", "skel", "template",
        "tmpl", "tpl",
    ];
    name.split('.')
        .skip(1)
        .any(|part| WORDS.iter().any(|w| part.eq_ignore_ascii_case(w)))
}

/// Whether a file name is a public key (`id_rsa.pub`, `deploy.pub`).
pub fn is_public_key(name: &str) -> bool {
    name.len() > 4 && name.ends_with(".pub")
}

/// Whether a directory name holds test fixtures (`tests`, `testdata`,
/// `fixtures`, `__mocks__` ...): key files under one are test keys.
pub fn is_fixture_dir(name: &str) -> bool {
    const DIRS: &[&str] = &[
        "__fixtures__",
        "__mocks__",
        "example",
        "examples",
        "fixture",
        "fixtures",
        "mocks",
        "spec",
        "test",
        "testdata",
        "testing",
        "tests",
    ];
    DIRS.iter().any(|d| name.eq_ignore_ascii_case(d))
}

/// Whether a file name says it is test data (`example.key`, `fake_id_rsa`).
pub fn is_fixture_name(name: &str) -> bool {
    ["example", "fake", "dummy"]
        .iter()
        .any(|w| contains_ignore_case(name, w))
}

/// What the workspace search does with a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Mask it: its name says what it is.
    Mask(&'static Credential),
    /// Read its first [`Credential::read_limit`] bytes and mask it if
    /// [`Credential::masks_content`] says so.
    Read(&'static Credential),
    /// Read its first [`SNIFF_BYTES`] and mask it if [`sniff_secret`] finds a key.
    Sniff,
    /// Leave it.
    Pass,
}

/// What the workspace search does with a file named `name`; `in_fixtures`
/// says whether a directory above it (inside the workspace) is a fixture
/// directory ([`is_fixture_dir`]). Pure: the caller reads the bytes. It
/// runs once per file of the workspace, so the common case (a source file
/// no row names) costs a few byte comparisons and no allocation.
pub fn look_at(name: &str, in_fixtures: bool) -> Look {
    let spared = |name: &str| is_template(name) || is_public_key(name);
    match find_workspace_row(name) {
        Some(_) if spared(name) => Look::Pass,
        Some(c) if c.kind == Kind::KeyFile && (in_fixtures || is_fixture_name(name)) => Look::Pass,
        Some(c) if c.always_masked() => Look::Mask(c),
        Some(c) => Look::Read(c),
        None if in_fixtures || !worth_sniffing(name) => Look::Pass,
        None if spared(name) || is_fixture_name(name) => Look::Pass,
        None => Look::Sniff,
    }
}

/// The workspace row whose file-name glob matches `name` (ASCII case
/// ignored), templates and public keys aside.
pub fn workspace_row(name: &str) -> Option<&'static Credential> {
    if is_template(name) || is_public_key(name) {
        return None;
    }
    find_workspace_row(name)
}

/// The first workspace row matching `name`, looked up by the name's last
/// byte: only rows ending in that byte (or in a wildcard) are tried.
fn find_workspace_row(name: &str) -> Option<&'static Credential> {
    type Index = (Vec<Vec<&'static Credential>>, Vec<&'static Credential>);
    static INDEX: std::sync::OnceLock<Index> = std::sync::OnceLock::new();
    let (by_last, wild) = INDEX.get_or_init(|| {
        let mut by_last = vec![Vec::new(); 256];
        let mut wild = Vec::new();
        for c in in_place(Place::Workspace) {
            match c.path.as_bytes().last() {
                Some(b'*' | b'?') | None => wild.push(c),
                Some(b) => by_last[b.to_ascii_lowercase() as usize].push(c),
            }
        }
        (by_last, wild)
    });
    let last = name.as_bytes().last()?.to_ascii_lowercase();
    // Table order decides between a named row and a wildcard one.
    let named = by_last[last as usize]
        .iter()
        .find(|c| name_matches(c.path, name));
    let wildcard = wild.iter().find(|c| name_matches(c.path, name));
    match (named, wildcard) {
        (Some(a), Some(b)) => Some(if a.path < b.path { *a } else { *b }),
        (a, b) => a.or(b).copied(),
    }
}

/// Whether a file the catalog does not name is worth reading the first
/// bytes of: no extension (`deploy_key`, `Makefile`), a key-ish extension
/// (`.priv`, `.crt`), a name that says key or secret (`prod-secret.txt`),
/// or JSON named like a downloaded cloud key (`project-0123456789ab.json`,
/// `gcp-key.json`). Most source files are none of these.
pub fn worth_sniffing(name: &str) -> bool {
    let trimmed = name.trim_start_matches('.');
    let Some((stem, ext)) = trimmed.rsplit_once('.') else {
        return !well_known_plain_name(name);
    };
    const KEYISH: &[&str] = &[
        "cer", "cert", "crt", "p8", "pk8", "priv", "private", "sec", "secret",
    ];
    if KEYISH.iter().any(|k| ext.eq_ignore_ascii_case(k)) {
        return true;
    }
    let says_key = ["private", "secret", "_key", "-key", "apikey"]
        .iter()
        .any(|w| contains_ignore_case(name, w));
    if ext.eq_ignore_ascii_case("json") {
        let cloud_download = stem.len() > 13
            && stem.as_bytes()[stem.len() - 13] == b'-'
            && stem.as_bytes()[stem.len() - 12..]
                .iter()
                .all(u8::is_ascii_hexdigit);
        return says_key
            || cloud_download
            || ["key", "cred", "account", "token", "auth"]
                .iter()
                .any(|w| contains_ignore_case(stem, w));
    }
    says_key
}

/// Extensionless names that are never keys: all capitals (`LICENSE`,
/// `README`, `HEAD`, `RECORD`), a capitalized `...file` (`Makefile`,
/// `Dockerfile`, `Gemfile`), and dotfiles of tool settings (`.gitignore`,
/// `.nvmrc`) unless they say key or secret.
fn well_known_plain_name(name: &str) -> bool {
    let b = name.as_bytes();
    let capitals = b.iter().any(u8::is_ascii_uppercase)
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-');
    let build_file = b.first().is_some_and(u8::is_ascii_uppercase) && name.ends_with("file");
    let dotfile = b.first() == Some(&b'.')
        && !["key", "secret", "private", "token"]
            .iter()
            .any(|w| contains_ignore_case(name, w));
    capitals || build_file || dotfile
}

/// Whether `hay` contains `needle` (lowercase ASCII), ASCII case ignored.
fn contains_ignore_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// Shell-style match of one file name: `*` any run, `?` one character,
/// ASCII case ignored; like bash, a leading `*` or `?` does not match a
/// leading dot.
pub fn name_matches(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    // Most names end differently from most rows: one comparison says so.
    if let (Some(pl), Some(nl)) = (p.last(), n.last())
        && *pl != b'*'
        && *pl != b'?'
        && !pl.eq_ignore_ascii_case(nl)
    {
        return false;
    }
    let wild = |b: &u8| *b == b'*' || *b == b'?';
    // The shapes of the table, without the general loop: `NAME`, `*SUFFIX`.
    match p.iter().position(wild) {
        None => return p.eq_ignore_ascii_case(n),
        Some(0) if p[0] == b'*' && !p[1..].iter().any(wild) => {
            let suffix = &p[1..];
            return n.first() != Some(&b'.')
                && n.len() >= suffix.len()
                && n[n.len() - suffix.len()..].eq_ignore_ascii_case(suffix);
        }
        Some(k) if !p[..k].eq_ignore_ascii_case(&n[..k.min(n.len())]) || n.len() < k => {
            return false;
        }
        _ => {}
    }
    if n.first() == Some(&b'.') && matches!(p.first(), Some(b'*' | b'?')) {
        return false;
    }
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && (p[pi] == b'?' || p[pi].eq_ignore_ascii_case(&n[ni])) {
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

// ---- build-time checks --------------------------------------------------------

const fn str_before(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

const fn ends_with_slash(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b[b.len() - 1] == b'/'
}

/// The table is sorted, each path once, and exactly the directory rows end in `/`.
const _: () = {
    let t = CREDENTIALS;
    let mut i = 0;
    while i < t.len() {
        if i > 0 {
            assert!(
                str_before(t[i - 1].path, t[i].path),
                "credentials table: rows are not sorted by path, or a path appears twice"
            );
        }
        let dir = matches!(t[i].mask, Mask::Dir(_) | Mask::Near);
        assert!(
            dir == ends_with_slash(t[i].path),
            "credentials table: a directory row (Dir, Near) ends in `/`, and no other row does"
        );
        i += 1;
    }
};

#[cfg(test)]
mod tests;
