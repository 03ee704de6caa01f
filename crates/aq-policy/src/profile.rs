//! Sandbox profiles: what the kernel sandbox of `aq run` allows, as policy.
//!
//! A profile is a plain value (paths stay strings with `~` for the home
//! directory, expanded by `aq`), so it can be shown, layered and tested here
//! without a kernel. Five are built in; a policy file's `[profile.NAME]`
//! extends a built-in one (lists grow, scalars are replaced) or defines a new
//! one on top of `extends` (default `strict`).
//!
//! A project file is untrusted ([`crate::Trust::TightenOnly`]): it may add
//! masked and read-only paths and lower limits, nothing that loosens.

use std::collections::BTreeMap;
use std::fmt;

use aq_knowledge::credentials::{self, Credential, Place};
use serde::{Deserialize, Serialize};

use crate::config::{Location, Trust};
use crate::merge::{Merge, Merger};

/// The profile `aq run` uses when neither the flag nor `[session] profile` names one.
pub(crate) const DEFAULT_PROFILE: &str = "strict";

/// Paths outside the workspace every sandboxed profile masks whatever they
/// hold: the catalog's always-masked home, socket and runtime rows
/// (`aq_knowledge::credentials`), as written there (`~/.ssh`,
/// `$SSH_AUTH_SOCK`, `/tmp/ssh-*`).
pub(crate) fn catalog_masks() -> impl Iterator<Item = &'static str> {
    credentials::all()
        .iter()
        .filter(|c| c.place() != Place::Workspace && c.always_masked())
        .map(|c| c.mask_path())
}

/// File-name globs every sandboxed profile masks wherever they are in the
/// workspace, whatever they hold (templates such as `.env.example` and key
/// files of test fixtures are kept, see `aq_knowledge::credentials::look_at`).
pub fn catalog_workspace_masks() -> impl Iterator<Item = &'static str> {
    credentials::in_place(Place::Workspace)
        .filter(|c| c.always_masked())
        .map(|c| c.path)
}

/// Catalog rows masked only for what they hold: settings files with a
/// credential value, `.pem` files with a private key.
pub fn catalog_conditional_masks() -> impl Iterator<Item = &'static Credential> {
    credentials::all()
        .iter()
        .filter(|c| c.masked() && !c.always_masked())
}

/// What the `dev` profile may write beyond the workspace: `/tmp` and the
/// download and build caches of `aq_knowledge::areas::BUILD_CACHES`.
pub(crate) fn build_caches() -> impl Iterator<Item = &'static str> {
    std::iter::once("/tmp").chain(
        aq_knowledge::areas::BUILD_CACHES
            .iter()
            .map(|s| s.trim_end_matches('/')),
    )
}

/// Network access of a sandboxed profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkSetting {
    /// Only a loopback interface of its own.
    Off,
    /// The host's network, unfiltered.
    Host,
}

impl NetworkSetting {
    /// The policy spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkSetting::Off => "off",
            NetworkSetting::Host => "host",
        }
    }
}

/// How `aq run` reports at the end of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SummaryFormat {
    /// A recap for a person on stderr.
    Text,
    /// One JSON object on stdout (headless CI); asks are never waited for.
    Json,
}

/// How a session treats its asks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionMode {
    /// Asks wait for an answer (or the `unanswered` setting).
    #[default]
    Enforce,
    /// Learn mode (`aq run --learn`, `mode = "learn"`): every ask runs at
    /// once and is logged as answered `learn`, for `aq policy suggest`;
    /// blocks stay blocks and the network broker still refuses.
    Learn,
}

impl SessionMode {
    /// The name a profile writes (`mode = "learn"`).
    pub fn as_str(self) -> &'static str {
        match self {
            SessionMode::Enforce => "enforce",
            SessionMode::Learn => "learn",
        }
    }
}

/// Resource limits of every process in the sandbox. `None` leaves the limit
/// as inherited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// CPU seconds per process (`RLIMIT_CPU`).
    pub cpu_secs: Option<u64>,
    /// Address space per process in MiB (`RLIMIT_AS`).
    pub address_space_mb: Option<u64>,
    /// Processes (`RLIMIT_NPROC`; the cgroup `pids.max` where delegated).
    pub processes: Option<u64>,
    /// Open files per process (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
    /// Largest file a process may write, in MiB (`RLIMIT_FSIZE`).
    pub file_size_mb: Option<u64>,
    /// Memory of the whole sandbox in MiB (cgroup `memory.max`, only where a
    /// cgroup v2 is delegated).
    pub memory_mb: Option<u64>,
}

impl Limits {
    /// The limit names with their values, in a fixed order.
    pub fn entries(&self) -> [(&'static str, Option<u64>); 6] {
        [
            ("cpu_secs", self.cpu_secs),
            ("address_space_mb", self.address_space_mb),
            ("processes", self.processes),
            ("open_files", self.open_files),
            ("file_size_mb", self.file_size_mb),
            ("memory_mb", self.memory_mb),
        ]
    }

    fn slot(&mut self, name: &str) -> Option<&mut Option<u64>> {
        Some(match name {
            "cpu_secs" => &mut self.cpu_secs,
            "address_space_mb" => &mut self.address_space_mb,
            "processes" => &mut self.processes,
            "open_files" => &mut self.open_files,
            "file_size_mb" => &mut self.file_size_mb,
            "memory_mb" => &mut self.memory_mb,
            _ => return None,
        })
    }
}

/// What of the home directory a sandboxed command may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HomeAccess {
    /// Only the toolchains, caches and configuration builds read
    /// ([`HOME_READABLE`]), the profile's `readable` paths and what an agent
    /// preset grants; the rest of the home directory, other users' homes and
    /// aq's own state are out of reach.
    Private,
    /// All of it (secrets stay masked): reads are not confined.
    ReadOnly,
}

impl HomeAccess {
    /// As written in a profile.
    pub fn as_str(self) -> &'static str {
        match self {
            HomeAccess::Private => "private",
            HomeAccess::ReadOnly => "read-only",
        }
    }

    /// Parses a profile's `home = "..."`.
    pub fn parse(s: &str) -> Option<HomeAccess> {
        match s {
            "private" => Some(HomeAccess::Private),
            "read-only" => Some(HomeAccess::ReadOnly),
            _ => None,
        }
    }
}

/// What a private home keeps readable: toolchains and caches builds read,
/// and the configuration of git and the shells that commands read.
pub const HOME_READABLE: &[&str] = &[
    "~/.cargo",
    "~/.rustup",
    "~/.npm",
    "~/.npmrc",
    "~/.nvm",
    "~/.volta",
    "~/.bun",
    "~/.deno",
    "~/.yarn",
    "~/.yarnrc",
    "~/.yarnrc.yml",
    "~/.pnpm-store",
    "~/.local/share/pnpm",
    "~/.pyenv",
    "~/.local/bin",
    "~/.local/lib",
    "~/.local/pipx",
    "~/.pip",
    "~/.config/pip",
    "~/.poetry",
    "~/.rbenv",
    "~/.gem",
    "~/go",
    "~/.m2",
    "~/.gradle",
    "~/.sdkman",
    "~/.cache",
    "~/.gitconfig",
    "~/.gitignore",
    "~/.gitignore_global",
    "~/.config/git",
    "~/.gitattributes",
    "~/.terminfo",
    "~/.inputrc",
    "~/.profile",
    "~/.bashrc",
    "~/.bash_profile",
    "~/.zshrc",
    "~/.zshenv",
    "~/.config/fish",
    "~/.editorconfig",
];

/// One sandbox profile, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// Its name (`strict`, `dev`, or the user's own).
    pub name: String,
    /// One line for `aq policy show` and `aq run`.
    pub(crate) description: String,
    /// Whether the kernel sandbox is used (`false`: PATH shims only).
    pub sandbox: bool,
    /// Whether every exec in the sandbox is judged by the firewall (the
    /// kernel exec guard), not only programs found through the shims.
    pub exec_guard: bool,
    /// Paths writable besides the workspace (`~` is the home directory).
    pub writable: Vec<String>,
    /// What of the home directory may be read.
    pub home: HomeAccess,
    /// Paths readable besides the system, the workspace and, with a private
    /// home, [`HOME_READABLE`] (`~` is the home directory).
    pub readable: Vec<String>,
    /// Paths inside the workspace that stay read-only (relative to it).
    pub read_only: Vec<String>,
    /// Home and absolute paths hidden (an empty file or directory in their place).
    pub masked: Vec<String>,
    /// File-name globs hidden wherever they are in the workspace.
    pub masked_in_workspace: Vec<String>,
    /// Network access.
    pub network: NetworkSetting,
    /// Variables passed to the command `aq run` starts (an agent's own API
    /// key), even secret-looking ones; the shims keep them from what it runs.
    pub env: Vec<String>,
    /// How the session reports at the end.
    pub summary: SummaryFormat,
    /// Whether asks wait (`enforce`) or run and are logged (`learn`).
    #[serde(default)]
    pub mode: SessionMode,
    /// Resource limits.
    pub limits: Limits,
}

impl Profile {
    fn base(name: &str, description: &str) -> Profile {
        Profile {
            name: name.to_string(),
            description: description.to_string(),
            sandbox: true,
            exec_guard: true,
            writable: vec!["/dev/null".to_string()],
            home: HomeAccess::Private,
            readable: Vec::new(),
            read_only: vec![".git/hooks".to_string(), ".git/config".to_string()],
            masked: catalog_masks().map(str::to_string).collect(),
            masked_in_workspace: catalog_workspace_masks().map(str::to_string).collect(),
            network: NetworkSetting::Off,
            env: Vec::new(),
            summary: SummaryFormat::Text,
            mode: SessionMode::Enforce,
            limits: Limits {
                cpu_secs: None,
                address_space_mb: None,
                processes: Some(2048),
                open_files: Some(8192),
                file_size_mb: Some(16 * 1024),
                memory_mb: Some(16 * 1024),
            },
        }
    }

    /// The built-in profiles, in the order `aq policy show` lists them.
    pub fn builtins() -> Vec<Profile> {
        let strict = Profile::base(
            "strict",
            "kernel sandbox: write only the workspace, secrets masked, network off",
        );
        let mut dev = Profile::base(
            "dev",
            "strict plus /tmp and the build caches, and the host network for registries",
        );
        dev.writable.extend(build_caches().map(str::to_string));
        dev.network = NetworkSetting::Host;
        dev.limits.processes = Some(8192);
        // Builds of every kind run here: the home stays readable as before.
        dev.home = HomeAccess::ReadOnly;
        let mut isolated = dev.clone();
        isolated.name = "network-isolated".to_string();
        isolated.description =
            "dev without the network: builds from what is already cached".to_string();
        isolated.network = NetworkSetting::Off;
        let mut ci = isolated.clone();
        ci.name = "ci".to_string();
        ci.description =
            "headless: network off, asks are denied at once, JSON summary on stdout".to_string();
        ci.summary = SummaryFormat::Json;
        ci.limits.cpu_secs = Some(3600);
        let mut shims = strict.clone();
        shims.name = "shims-only".to_string();
        shims.description =
            "no kernel sandbox: only the PATH shims (for machines without user namespaces or Landlock)"
                .to_string();
        shims.sandbox = false;
        shims.exec_guard = false;
        vec![strict, dev, isolated, ci, shims]
    }

    /// The built-in profile called `name`.
    pub fn builtin(name: &str) -> Option<Profile> {
        Profile::builtins().into_iter().find(|p| p.name == name)
    }

    /// Whether this is one of the built-in names.
    pub(crate) fn is_builtin(name: &str) -> bool {
        matches!(
            name,
            "strict" | "dev" | "network-isolated" | "ci" | "shims-only"
        )
    }
}

/// A line of a profile's description, by what it is about: `aq policy
/// show` writes the writable, readable and network lines itself, with
/// where each grant came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileLine {
    /// The name and description, the sandbox and the exec guard.
    Head,
    /// `writable:`.
    Writable,
    /// `readable:`.
    Readable,
    /// `network:`.
    Network,
    /// Read-only and masked paths, variables, limits, the summary.
    Rest,
}

impl Profile {
    /// What besides the named `readable` paths may be read, in words.
    pub fn readable_base(&self) -> String {
        match self.home {
            HomeAccess::Private => format!(
                "home = \"private\": the system, the workspace, the writable paths, the toolchains on PATH or named by their variables, the program run and the paths its command line names; in the home only {}",
                HOME_READABLE.join(", ")
            ),
            HomeAccess::ReadOnly => "everything (home = \"read-only\")".to_string(),
        }
    }

    /// The description `aq policy show` prints, line by line (without
    /// their end of line).
    pub fn describe(&self) -> Vec<(ProfileLine, String)> {
        use ProfileLine::*;
        let mut out = vec![(Head, format!("profile {}: {}", self.name, self.description))];
        if !self.sandbox {
            out.push((Head, "  kernel sandbox: off (PATH shims only)".to_string()));
            return out;
        }
        out.push((
            Head,
            format!(
                "  exec guard: {}",
                if self.exec_guard {
                    "every exec is judged"
                } else {
                    "off (only programs found through the shims are judged)"
                }
            ),
        ));
        out.push((
            Writable,
            format!(
                "  writable:  the workspace, {}",
                if self.writable.is_empty() {
                    "nothing else".to_string()
                } else {
                    self.writable.join(", ")
                }
            ),
        ));
        let named = match (self.home, self.readable.is_empty()) {
            (_, true) => String::new(),
            (HomeAccess::Private, false) => format!(", {}", self.readable.join(", ")),
            (HomeAccess::ReadOnly, false) => format!("; also named: {}", self.readable.join(", ")),
        };
        out.push((
            Readable,
            format!("  readable:  {}{named}", self.readable_base()),
        ));
        out.push((Rest, format!("  read-only: {}", self.read_only.join(", "))));
        let catalog: Vec<&str> = catalog_masks().chain(catalog_workspace_masks()).collect();
        let added: Vec<&str> = self
            .masked
            .iter()
            .chain(&self.masked_in_workspace)
            .map(String::as_str)
            .filter(|m| !catalog.contains(m))
            .collect();
        let conditional: Vec<&str> = catalog_conditional_masks().map(|c| c.path).collect();
        out.push((
            Rest,
            format!(
                "  masked:    the {} credential paths of the catalog (docs/credentials.md; `[paths] unmasked` passes one back){}",
                catalog.len(),
                if added.is_empty() {
                    String::new()
                } else {
                    format!(", and {}", added.join(", "))
                }
            ),
        ));
        out.push((
            Rest,
            format!(
                "  masked when they hold a credential: {}",
                conditional.join(", ")
            ),
        ));
        out.push((Network, format!("  network:   {}", self.network.as_str())));
        if !self.env.is_empty() {
            out.push((
                Rest,
                format!("  env to the command only: {}", self.env.join(", ")),
            ));
        }
        let limits: Vec<String> = self
            .limits
            .entries()
            .iter()
            .filter_map(|(k, v)| v.map(|v| format!("{k} {v}")))
            .collect();
        out.push((Rest, format!("  limits:    {}", limits.join(", "))));
        if self.summary == SummaryFormat::Json {
            out.push((
                Rest,
                "  summary:   JSON on stdout, asks denied without waiting".to_string(),
            ));
        }
        if self.mode == SessionMode::Learn {
            out.push((
                Rest,
                "  mode:      learn: asks run without waiting and are logged for `aq policy suggest`"
                    .to_string(),
            ));
        }
        out
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (_, line) in self.describe() {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

/// `[profile.NAME]` as one file writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfileLayer {
    /// Which profile it extends when `NAME` is not built in (default `strict`).
    pub(crate) extends: Option<String>,
    /// Replaces the description.
    pub(crate) description: Option<String>,
    /// Turns the kernel sandbox on or off.
    pub sandbox: Option<bool>,
    /// Turns the exec guard on or off.
    pub exec_guard: Option<bool>,
    /// Added writable paths.
    pub writable: Vec<String>,
    /// Replaces what of the home may be read.
    pub home: Option<HomeAccess>,
    /// Added readable paths.
    pub readable: Vec<String>,
    /// Added read-only paths.
    pub read_only: Vec<String>,
    /// Added masked paths; entries without a `/` are file-name globs in the workspace.
    pub masked: Vec<String>,
    /// Replaces the network setting.
    pub network: Option<NetworkSetting>,
    /// Added variables for the command.
    pub env: Vec<String>,
    /// Replaces the summary format.
    pub summary: Option<SummaryFormat>,
    /// Replaces the mode (`learn` only from a trusted layer).
    pub mode: Option<SessionMode>,
    /// Replaced limits (0 removes a limit).
    pub limits: BTreeMap<String, u64>,
}

/// The raw TOML of `[profile.NAME]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProfile {
    extends: Option<String>,
    description: Option<String>,
    sandbox: Option<bool>,
    exec_guard: Option<bool>,
    #[serde(default)]
    writable: Vec<String>,
    home: Option<String>,
    #[serde(default)]
    readable: Vec<String>,
    #[serde(default)]
    read_only: Vec<String>,
    #[serde(default)]
    masked: Vec<String>,
    network: Option<String>,
    #[serde(default)]
    env: Vec<String>,
    summary: Option<String>,
    mode: Option<String>,
    #[serde(default)]
    limits: BTreeMap<String, u64>,
}

/// Checks one `[profile.NAME]`; the error is a message and a help line.
pub(crate) fn check_layer(name: &str, raw: RawProfile) -> Result<ProfileLayer, (String, String)> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err((
            format!("profile name `{name}` is not kebab-case"),
            "use lowercase letters, digits and dashes, e.g. [profile.my-project]".to_string(),
        ));
    }
    if let Some(e) = &raw.extends {
        if Profile::is_builtin(name) {
            return Err((
                format!("[profile.{name}] is built in and cannot extend another profile"),
                format!("remove `extends`; [profile.{name}] adds to the built-in {name} profile"),
            ));
        }
        if e == name {
            return Err((
                format!("profile `{name}` extends itself"),
                "name a built-in profile such as \"dev\" or \"strict\"".to_string(),
            ));
        }
    }
    let network = match raw.network.as_deref() {
        None => None,
        Some("off") => Some(NetworkSetting::Off),
        Some("host") => Some(NetworkSetting::Host),
        Some(other) => {
            return Err((
                format!("profile `{name}`: unknown network `{other}`"),
                "write `network = \"off\"` or `network = \"host\"`".to_string(),
            ));
        }
    };
    let home = match raw.home.as_deref() {
        None => None,
        Some(h) => Some(HomeAccess::parse(h).ok_or_else(|| {
            (
                format!("profile `{name}`: unknown home `{h}`"),
                "write `home = \"private\"` (only what builds read) or `home = \"read-only\"` (all of it)".to_string(),
            )
        })?),
    };
    let summary = match raw.summary.as_deref() {
        None => None,
        Some("text") => Some(SummaryFormat::Text),
        Some("json") => Some(SummaryFormat::Json),
        Some(other) => {
            return Err((
                format!("profile `{name}`: unknown summary `{other}`"),
                "write `summary = \"text\"` or `summary = \"json\"`".to_string(),
            ));
        }
    };
    let mode = match raw.mode.as_deref() {
        None => None,
        Some("enforce") => Some(SessionMode::Enforce),
        Some("learn") => Some(SessionMode::Learn),
        Some(other) => {
            return Err((
                format!("profile `{name}`: unknown mode `{other}`"),
                "write `mode = \"enforce\"` (asks wait for an answer) or `mode = \"learn\"` (asks run and are logged for `aq policy suggest`)".to_string(),
            ));
        }
    };
    for key in raw.limits.keys() {
        if Limits::default().slot(key).is_none() {
            return Err((
                format!("profile `{name}`: unknown limit `{key}`"),
                "limits are cpu_secs, address_space_mb, processes, open_files, file_size_mb and memory_mb".to_string(),
            ));
        }
    }
    for (list, entries) in [
        ("writable", &raw.writable),
        ("readable", &raw.readable),
        ("read_only", &raw.read_only),
        ("masked", &raw.masked),
    ] {
        if let Some(bad) = entries.iter().find(|p| p.trim().is_empty()) {
            return Err((
                format!("profile `{name}`: empty path `{bad}` in `{list}`"),
                "remove the empty string".to_string(),
            ));
        }
    }
    if let Some(bad) = raw
        .writable
        .iter()
        .find(|p| !(p.starts_with('/') || p.starts_with("~/")))
    {
        return Err((
            format!("profile `{name}`: writable path `{bad}` is not absolute"),
            "write an absolute path or one under the home directory (`~/...`); the workspace is always writable".to_string(),
        ));
    }
    if let Some(bad) = raw
        .readable
        .iter()
        .find(|p| !(p.starts_with('/') || p.starts_with("~/")))
    {
        return Err((
            format!("profile `{name}`: readable path `{bad}` is not absolute"),
            "write an absolute path or one under the home directory (`~/...`); the workspace is always readable".to_string(),
        ));
    }
    if let Some(bad) = raw
        .read_only
        .iter()
        .find(|p| p.starts_with('/') || p.starts_with('~') || p.split('/').any(|c| c == ".."))
    {
        return Err((
            format!("profile `{name}`: read-only path `{bad}` is not inside the workspace"),
            "give a path relative to the workspace, like \".github/workflows\"".to_string(),
        ));
    }
    if let Some(bad) = raw
        .env
        .iter()
        .find(|v| v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Err((
            format!("profile `{name}`: `{bad}` is not an environment variable name"),
            "use letters, digits and underscores, like `ANTHROPIC_API_KEY`".to_string(),
        ));
    }
    Ok(ProfileLayer {
        extends: raw.extends,
        description: raw.description,
        sandbox: raw.sandbox,
        exec_guard: raw.exec_guard,
        writable: raw.writable,
        home,
        readable: raw.readable,
        read_only: raw.read_only,
        masked: raw.masked,
        network,
        env: raw.env,
        summary,
        mode,
        limits: raw.limits,
    })
}

impl Profile {
    /// Applies a layer. `tighten_only` keeps what would loosen the profile out
    /// and returns a note for each entry left out.
    pub fn apply(&mut self, layer: &ProfileLayer, tighten_only: bool) -> Vec<String> {
        let trust = if tighten_only {
            Trust::TightenOnly
        } else {
            Trust::Full
        };
        let mut m = Merger::new(trust);
        let at = Location {
            source: format!("[profile.{}]", self.name),
            line: 0,
            column: 0,
        };
        self.merge(layer, &mut m, &at);
        m.ignored.into_iter().map(|e| e.entry).collect()
    }

    /// Merges a `[profile.NAME]` table written at `at`, each key with its
    /// [`Merge`] kind. The layer is destructured without `..`: a key added
    /// to [`ProfileLayer`] does not compile until it is merged here.
    #[deny(unused_variables)]
    pub(crate) fn merge(&mut self, layer: &ProfileLayer, m: &mut Merger, at: &Location) {
        let ProfileLayer {
            // Read once, when the profile is made (`EffectivePolicy::apply`).
            extends: _,
            description,
            sandbox,
            exec_guard,
            writable,
            home,
            readable,
            read_only,
            masked,
            network,
            env,
            summary,
            mode,
            limits,
        } = layer;
        let kept = format!("profile `{}` is not loosened", self.name);
        let say = |entry: String| (entry, kept.clone());

        let f = m.field("[profile] description", Merge::Replace);
        if let Some(d) = description
            && m.admit(f, at, || false, || say("`description`".to_string()))
        {
            self.description = d.clone();
        }
        let f = m.field("[profile] sandbox", Merge::Tighten);
        if let Some(s) = sandbox
            && m.admit(
                f,
                at,
                || !s && self.sandbox,
                || say(format!("`sandbox = {s}`")),
            )
        {
            self.sandbox = *s;
        }
        let f = m.field("[profile] exec_guard", Merge::Tighten);
        if let Some(g) = exec_guard
            && m.admit(
                f,
                at,
                || !g && self.exec_guard,
                || say(format!("`exec_guard = {g}`")),
            )
        {
            self.exec_guard = *g;
        }
        let f = m.field("[profile] writable", Merge::Trusted);
        for w in writable {
            m.add(f, &mut self.writable, w, at, || {
                say(format!("writable path `{w}`"))
            });
        }
        let f = m.field("[profile] home", Merge::Tighten);
        if let Some(h) = home
            && m.admit(
                f,
                at,
                || *h > self.home,
                || say(format!("`home = \"{}\"`", h.as_str())),
            )
        {
            self.home = *h;
        }
        let f = m.field("[profile] readable", Merge::Trusted);
        for r in readable {
            m.add(f, &mut self.readable, r, at, || {
                say(format!("readable path `{r}`"))
            });
        }
        let f = m.field("[profile] read_only", Merge::Union);
        for r in read_only {
            m.add(f, &mut self.read_only, r, at, || {
                say(format!("read-only path `{r}`"))
            });
        }
        // Entries without a `/` are file-name globs in the workspace.
        let f = m.field("[profile] masked", Merge::Union);
        for p in masked {
            let list = if p.contains('/') || p.starts_with('~') {
                &mut self.masked
            } else {
                &mut self.masked_in_workspace
            };
            m.add(f, list, p, at, || say(format!("masked path `{p}`")));
        }
        let f = m.field("[profile] network", Merge::Tighten);
        if let Some(n) = network
            && m.admit(
                f,
                at,
                || *n > self.network,
                || say(format!("`network = \"{}\"`", n.as_str())),
            )
        {
            self.network = *n;
        }
        let f = m.field("[profile] env", Merge::Trusted);
        for v in env {
            m.add(f, &mut self.env, v, at, || say(format!("`env` of `{v}`")));
        }
        let f = m.field("[profile] summary", Merge::Replace);
        if let Some(s) = summary
            && m.admit(f, at, || false, || say("`summary`".to_string()))
        {
            self.summary = *s;
        }
        // Learn mode lets every ask run: a repository's file cannot ask
        // for it (it would approve its own commands).
        let f = m.field("[profile] mode", Merge::Tighten);
        if let Some(mode) = mode
            && m.admit(
                f,
                at,
                || *mode > self.mode,
                || say(format!("`mode = \"{}\"`", mode.as_str())),
            )
        {
            self.mode = *mode;
        }
        // 0 removes a limit: looser than any.
        let f = m.field("[profile] limits", Merge::Tighten);
        for (key, value) in limits {
            let Some(slot) = self.limits.slot(key) else {
                continue;
            };
            let new = (*value > 0).then_some(*value);
            let looser = match (*slot, new) {
                (Some(_), None) => true,
                (Some(old), Some(new)) => new > old,
                (None, _) => false,
            };
            if m.admit(f, at, || looser, || say(format!("limit `{key} = {value}`"))) {
                *slot = new;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(name: &str) -> Profile {
        Profile::builtin(name).unwrap()
    }

    #[test]
    fn builtins_differ_where_the_issue_says() {
        let strict = builtin("strict");
        assert!(strict.sandbox);
        assert_eq!(strict.network, NetworkSetting::Off);
        assert!(!strict.writable.iter().any(|w| w == "/tmp"));
        assert!(strict.masked.iter().any(|m| m == "~/.ssh"));
        let dev = builtin("dev");
        assert!(dev.writable.iter().any(|w| w == "/tmp"));
        assert!(dev.writable.iter().any(|w| w == "~/.cargo/registry"));
        assert!(
            !dev.writable
                .iter()
                .any(|w| w == "~/.cargo" || w == "~/.rustup")
        );
        assert_eq!(builtin("network-isolated").network, NetworkSetting::Off);
        // A private home in strict (and what extends it); the build
        // profiles keep the whole home readable.
        assert_eq!(strict.home, HomeAccess::Private);
        for name in ["dev", "network-isolated", "ci"] {
            assert_eq!(builtin(name).home, HomeAccess::ReadOnly, "{name}");
        }
        assert_eq!(builtin("ci").summary, SummaryFormat::Json);
        assert!(!builtin("shims-only").sandbox);
        assert!(
            Profile::builtins()
                .iter()
                .all(|p| Profile::is_builtin(&p.name))
        );
    }

    /// What a private home keeps readable never opens a credential the
    /// sandbox masks whatever it holds: a readable path is neither such a
    /// row nor inside a directory masked whole. A masked file inside a
    /// readable directory is fine (`~/.cargo/credentials.toml` in
    /// `~/.cargo`): the mask is mounted on top. So is a settings file that
    /// is masked only when it holds a credential (`~/.npmrc`).
    #[test]
    fn home_readable_never_opens_an_always_masked_credential() {
        for r in HOME_READABLE {
            for c in credentials::in_place(Place::Home) {
                let row = c.mask_path();
                let inside = |a: &str, b: &str| a.starts_with(&format!("{b}/"));
                match c.mask {
                    credentials::Mask::Dir(_) => {
                        assert!(r != &row && !inside(r, row), "{r} opens {}", c.path)
                    }
                    credentials::Mask::File => assert_ne!(r, &row, "{r} is masked"),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn every_profile_masks_the_catalog() {
        for p in Profile::builtins() {
            for m in catalog_masks() {
                assert!(p.masked.iter().any(|x| x == m), "{}: {m}", p.name);
            }
            assert!(p.masked.iter().any(|m| m == "~/.ssh"));
            assert!(p.masked.iter().any(|m| m == "$SSH_AUTH_SOCK"));
            assert!(p.masked_in_workspace.iter().any(|m| m == ".envrc"));
            assert!(p.masked_in_workspace.iter().any(|m| m == "*.tfstate"));
        }
        let conditional: Vec<&str> = catalog_conditional_masks().map(|c| c.path).collect();
        for c in [
            "~/.npmrc",
            "~/.m2/settings.xml",
            "~/.gradle/gradle.properties",
            ".npmrc",
            "*.pem",
        ] {
            assert!(conditional.contains(&c), "{c}");
        }
    }

    #[test]
    fn tighten_only_keeps_loosening_entries_out() {
        let mut p = builtin("strict");
        let layer = ProfileLayer {
            sandbox: Some(false),
            writable: vec!["~/".to_string()],
            masked: vec!["~/.config/acme".to_string(), "*.kdbx".to_string()],
            network: Some(NetworkSetting::Host),
            env: vec!["AWS_SECRET_ACCESS_KEY".to_string()],
            home: Some(HomeAccess::ReadOnly),
            readable: vec!["~/Documents".to_string()],
            limits: [("processes".to_string(), 64), ("open_files".to_string(), 0)]
                .into_iter()
                .collect(),
            ..ProfileLayer::default()
        };
        let ignored = p.apply(&layer, true);
        assert_eq!(ignored.len(), 7, "{ignored:?}");
        assert_eq!(p.home, HomeAccess::Private);
        assert!(p.readable.is_empty());
        assert!(p.sandbox);
        assert_eq!(p.network, NetworkSetting::Off);
        assert!(!p.writable.contains(&"~/".to_string()));
        assert!(p.masked.contains(&"~/.config/acme".to_string()));
        assert!(p.masked_in_workspace.contains(&"*.kdbx".to_string()));
        assert_eq!(p.limits.processes, Some(64));
        assert_eq!(p.limits.open_files, Some(8192));
        assert!(p.env.is_empty());
    }

    #[test]
    fn learn_mode_comes_only_from_a_trusted_layer() {
        let learn = ProfileLayer {
            mode: Some(SessionMode::Learn),
            ..ProfileLayer::default()
        };
        let mut p = builtin("strict");
        assert_eq!(
            p.apply(&learn, true),
            vec!["`mode = \"learn\"`".to_string()]
        );
        assert_eq!(p.mode, SessionMode::Enforce);
        assert!(p.apply(&learn, false).is_empty());
        assert_eq!(p.mode, SessionMode::Learn);
        // Back to enforce tightens: any layer may.
        let enforce = ProfileLayer {
            mode: Some(SessionMode::Enforce),
            ..ProfileLayer::default()
        };
        assert!(p.apply(&enforce, true).is_empty());
        assert_eq!(p.mode, SessionMode::Enforce);
    }

    #[test]
    fn trusted_layers_extend_and_replace() {
        let mut p = builtin("strict");
        let layer = ProfileLayer {
            writable: vec!["~/.cache/acme".to_string()],
            network: Some(NetworkSetting::Host),
            env: vec!["ANTHROPIC_API_KEY".to_string()],
            limits: [("open_files".to_string(), 0)].into_iter().collect(),
            ..ProfileLayer::default()
        };
        assert!(p.apply(&layer, false).is_empty());
        assert!(p.writable.contains(&"~/.cache/acme".to_string()));
        assert_eq!(p.network, NetworkSetting::Host);
        assert_eq!(p.limits.open_files, None);
        assert_eq!(p.env, vec!["ANTHROPIC_API_KEY".to_string()]);
    }

    #[test]
    fn bad_layers_are_explained() {
        let raw = |f: fn(&mut RawProfile)| {
            let mut r = RawProfile::default();
            f(&mut r);
            r
        };
        let e = check_layer("x", raw(|r| r.network = Some("on".into()))).unwrap_err();
        assert!(e.0.contains("unknown network"), "{e:?}");
        let e = check_layer("x", raw(|r| r.home = Some("open".into()))).unwrap_err();
        assert!(e.0.contains("unknown home `open`"), "{e:?}");
        let e = check_layer("x", raw(|r| r.readable = vec!["data".into()])).unwrap_err();
        assert!(
            e.0.contains("readable path `data` is not absolute"),
            "{e:?}"
        );
        let e = check_layer("x", raw(|r| r.writable = vec!["tmp".into()])).unwrap_err();
        assert!(e.0.contains("not absolute"), "{e:?}");
        let e = check_layer("x", raw(|r| r.read_only = vec!["../x".into()])).unwrap_err();
        assert!(e.0.contains("not inside the workspace"), "{e:?}");
        let e = check_layer("strict", raw(|r| r.extends = Some("dev".into()))).unwrap_err();
        assert!(e.0.contains("built in"), "{e:?}");
        let e = check_layer(
            "x",
            raw(|r| r.limits = [("ram".to_string(), 1)].into_iter().collect()),
        )
        .unwrap_err();
        assert!(e.0.contains("unknown limit"), "{e:?}");
        assert!(check_layer("My_Profile", RawProfile::default()).is_err());
    }
}
