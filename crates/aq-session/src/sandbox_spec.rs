//! From a profile (policy) to a [`SandboxSpec`] (plain paths and values):
//! `~` expanded, secrets in the workspace found, the environment rebuilt.
//!
//! `aq-sandbox` knows nothing of profiles; `aq-policy` reads no files. This
//! module is the I/O in between, shared by `aq run` and `aq verify`.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use aq_policy::profile::{HOME_READABLE, HomeAccess};
use aq_policy::{NetworkSetting, Profile};
use aq_sandbox::{LandlockMode, NetworkMode, Rlimit, RlimitResource, SandboxSpec};

/// Variables the sandboxed command keeps (besides the profile's `env` and
/// the session's `env_pass`). Secret-looking names are removed even here.
const ENV_KEEP: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "COLORTERM",
    "TERM_PROGRAM",
    "LANG",
    "LANGUAGE",
    "TZ",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "LESS",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "COLUMNS",
    "LINES",
    "CI",
    "JAVA_HOME",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOFLAGS",
    "NVM_DIR",
    "NODE_PATH",
    "NODE_OPTIONS",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "PKG_CONFIG_PATH",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
];

/// Name prefixes kept (tool settings); secret-looking names still go.
const ENV_KEEP_PREFIXES: &[&str] = &[
    "LC_",
    "CARGO_",
    "RUST",
    "PYTHON",
    "PIP_",
    "UV_",
    "NPM_CONFIG_",
    "npm_config_",
    "GIT_AUTHOR_",
    "GIT_COMMITTER_",
];

/// What the sandbox of one session is built from, and what was left out.
pub struct SessionSandbox {
    /// The spec for `aq_sandbox`.
    pub spec: SandboxSpec,
    /// Things a user should know (paths skipped because missing, ...).
    pub notes: Vec<String>,
    /// Variables removed from the environment because they look secret.
    pub removed_env: Vec<String>,
}

/// Inputs besides the profile.
pub struct SpecInputs<'a> {
    /// The canonical workspace.
    pub workspace: &'a Path,
    /// The home directory (`~`).
    pub home: Option<&'a Path>,
    /// The policy's `[paths] sensitive` globs.
    pub sensitive: &'a [String],
    /// The policy's `[paths] unmasked` entries: credentials passed back.
    pub unmasked: &'a [String],
    /// The caller's environment.
    pub env: Vec<(OsString, OsString)>,
    /// Secret-looking names passed anyway (`[session] env_pass`).
    pub env_pass: &'a [String],
    /// Session variables added after scrubbing (`AQ_SESSION_DIR`, ...).
    pub session_env: Vec<(OsString, OsString)>,
    /// Directories put first on `PATH` (the shims).
    pub path_prefix: Option<&'a Path>,
    /// A private writable directory used as `TMPDIR` (under the session directory).
    pub tmpdir: Option<&'a Path>,
    /// Ports of the session's network relay inside the sandbox (see
    /// `aq_sandbox::SandboxSpec::loopback_listeners`); empty without a broker.
    pub loopback_listeners: Vec<u16>,
    /// What an agent preset grants (state writable, config read-only, its
    /// variables); empty without one.
    pub grants: Option<&'a aq_agents::Grants>,
    /// The program the session runs, as found on `PATH`: readable with a
    /// private home wherever it is installed.
    pub program: Option<&'a Path>,
    /// Paths the user's command line names (a script, a data file): readable
    /// with a private home.
    pub named: Vec<PathBuf>,
    /// Landlock's refusals are reported to the kernel's audit log (someone
    /// reads them: `crate::denials`).
    pub log_denials: bool,
    /// Host Unix sockets the sandbox may connect to (the session's
    /// supervisor); every other one of the host is refused.
    pub allowed_sockets: Vec<PathBuf>,
    /// Descriptors above 2 the command inherits; the rest are closed.
    pub pass_fds: Vec<i32>,
}

/// The system, readable in every profile (what does not exist is skipped).
const SYSTEM_READABLE: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/dev",
    "/proc", "/sys", "/run", "/var", "/tmp", "/srv", "/nix", "/snap", "/gnu",
];

/// Variables that name a toolchain's directory: readable with a private home.
const TOOLCHAIN_VARS: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GOPATH",
    "GOROOT",
    "GOMODCACHE",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PIPX_HOME",
    "POETRY_HOME",
    "NVM_DIR",
    "VOLTA_HOME",
    "BUN_INSTALL",
    "DENO_DIR",
    "PNPM_HOME",
    "NPM_CONFIG_PREFIX",
    "npm_config_prefix",
    "NPM_CONFIG_CACHE",
    "npm_config_cache",
    "JAVA_HOME",
    "GRADLE_USER_HOME",
    "MAVEN_HOME",
    "SDKMAN_DIR",
    "RBENV_ROOT",
    "GEM_HOME",
];

/// Host resolver sockets a sandbox without the network must not reach: a
/// name looked up through them would leave the machine as a DNS query.
const RESOLVER_DIRS: &[&str] = &["/run/nscd", "/var/run/nscd", "/run/systemd/resolve"];

/// Build the spec for `profile`.
pub fn build(profile: &Profile, inputs: SpecInputs<'_>) -> SessionSandbox {
    let mut notes = Vec::new();
    let home = inputs.home;
    let expand = |p: &str| -> Option<PathBuf> {
        if let Some(rest) = p.strip_prefix("~/") {
            home.map(|h| h.join(rest))
        } else if p == "~" {
            home.map(Path::to_path_buf)
        } else {
            Some(PathBuf::from(p))
        }
    };

    let mut writable = Vec::new();
    for w in &profile.writable {
        match expand(w) {
            Some(p) if p.exists() => writable.push(p),
            // Missing: made as a directory, so what the profile grants holds
            // (a cache the first build creates, say).
            Some(p) => match std::fs::create_dir_all(&p) {
                Ok(()) => {
                    notes.push(format!("writable {} created", p.display()));
                    writable.push(p);
                }
                Err(e) => notes.push(format!(
                    "writable {} skipped: it does not exist and cannot be created ({e})",
                    p.display()
                )),
            },
            None => notes.push(format!("writable {w} skipped: no home directory")),
        }
    }
    if let Some(t) = inputs.tmpdir {
        writable.push(t.to_path_buf());
    }
    if let Some(g) = inputs.grants {
        writable.extend(g.writable.iter().cloned());
    }

    let mut read_only = Vec::new();
    let git = inputs.workspace.join(".git");
    if git.is_dir() {
        // A missing hooks directory could be created by the command and then
        // run by the user's next `git commit`: make it exist, read-only.
        let _ = std::fs::create_dir_all(git.join("hooks"));
    }
    for r in &profile.read_only {
        let p = inputs.workspace.join(r);
        if p.exists() {
            read_only.push(PathBuf::from(r));
        }
    }
    if let Some(g) = inputs.grants {
        read_only.extend(g.read_only_workspace.iter().cloned());
        read_only.extend(g.read_only_home.iter().cloned());
    }
    // aq's state and configuration, wherever a writable path holds them
    // (`dev`'s /tmp with a home under it, a profile's own `writable`):
    // read-only, but for this session's TMPDIR inside the state.
    let mut writable_again = Vec::new();
    let protected = crate::workspace::protected_places();
    let others: Vec<PathBuf> = writable
        .iter()
        .filter(|w| Some(w.as_path()) != inputs.tmpdir)
        .map(|w| std::fs::canonicalize(w).unwrap_or_else(|_| w.clone()))
        .collect();
    for p in crate::workspace::to_keep_read_only(&others, &protected) {
        // A missing one is made, or the sandbox could create it (a policy
        // file the next session would load).
        if let Err(e) = std::fs::create_dir_all(&p.path) {
            notes.push(format!(
                "{} not protected: cannot create it ({e})",
                p.path.display()
            ));
            continue;
        }
        read_only.push(p.path.clone());
        let tmp = inputs
            .tmpdir
            .map(|t| std::fs::canonicalize(t).unwrap_or_else(|_| t.to_path_buf()));
        if let Some(t) = tmp.filter(|t| t.starts_with(&p.path)) {
            writable_again.push(t);
        }
    }

    let passed: Vec<String> = profile.env.iter().chain(inputs.env_pass).cloned().collect();
    let crate::masks::Masks {
        paths: mut masked,
        notes: mask_notes,
    } = crate::masks::plan(
        profile,
        &crate::masks::MaskInputs {
            workspace: inputs.workspace,
            home,
            env: &inputs.env,
            sensitive: inputs.sensitive,
            unmasked: inputs.unmasked,
            passed: &passed,
        },
    );
    notes.extend(mask_notes);
    // The checkpoints of every workspace (docs/undo.md): hidden, so that the
    // agent can neither read what it deleted back (secrets included) nor
    // erase its own undo history.
    if let Ok(state) = crate::state_root() {
        let undo = aq_undo::Store::root(&state);
        use std::os::unix::fs::DirBuilderExt;
        match std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&undo)
        {
            Ok(()) => {
                masked.insert(undo);
            }
            Err(e) => notes.push(format!(
                "{} not hidden: cannot create it ({e})",
                undo.display()
            )),
        }
    }
    // A host socket the user names (`[session] host_sockets`, an agent
    // socket passed on) is reached where it is: no mask over it or over
    // the directory that holds it.
    masked.retain(|m| {
        let over = inputs.allowed_sockets.iter().any(|s| s.starts_with(m));
        if over {
            notes.push(format!(
                "{} not masked: it holds a socket your policy lets the sandbox reach",
                m.display()
            ));
        }
        !over
    });
    if profile.network == NetworkSetting::Off {
        masked.extend(
            RESOLVER_DIRS
                .iter()
                .map(PathBuf::from)
                .filter(|p| p.is_dir()),
        );
    }

    let (env, removed_env) = rebuild_env(profile, &inputs);

    let limits = &profile.limits;
    let mut rlimits = Vec::new();
    let mut push = |resource, value: Option<u64>, scale: u64| {
        if let Some(v) = value {
            rlimits.push(Rlimit {
                resource,
                limit: v.saturating_mul(scale),
            });
        }
    };
    push(RlimitResource::CpuSeconds, limits.cpu_secs, 1);
    push(
        RlimitResource::AddressSpace,
        limits.address_space_mb,
        1 << 20,
    );
    push(RlimitResource::Processes, limits.processes, 1);
    push(RlimitResource::OpenFiles, limits.open_files, 1);
    push(RlimitResource::FileSize, limits.file_size_mb, 1 << 20);

    let readable = match profile.home {
        HomeAccess::ReadOnly => None,
        HomeAccess::Private => Some(private_home_readable(profile, &inputs, &expand)),
    };

    let mut spec = SandboxSpec::strict(inputs.workspace);
    spec.writable = writable;
    spec.readable = readable;
    spec.log_denials = inputs.log_denials;
    spec.read_only = read_only;
    spec.writable_again = writable_again;
    spec.file_binds = inputs
        .grants
        .map(|g| {
            g.shadows
                .iter()
                .map(|s| (s.copy.clone(), s.real.clone()))
                .collect()
        })
        .unwrap_or_default();
    spec.masked = masked.into_iter().collect();
    spec.network = match profile.network {
        NetworkSetting::Off => NetworkMode::Off,
        NetworkSetting::Host => NetworkMode::Host,
    };
    spec.loopback_listeners = inputs.loopback_listeners.clone();
    spec.landlock = LandlockMode::Required;
    spec.exec_guard = if profile.exec_guard {
        aq_sandbox::ExecGuardMode::Required
    } else {
        aq_sandbox::ExecGuardMode::Off
    };
    spec.socket_guard = aq_sandbox::SocketGuardMode::Required;
    spec.allowed_sockets = inputs.allowed_sockets.clone();
    spec.pass_fds = inputs.pass_fds.clone();
    spec.rlimits = rlimits;
    spec.memory_max_bytes = limits.memory_mb.map(|m| m.saturating_mul(1 << 20));
    spec.pids_max = limits.processes;
    spec.env = env;
    SessionSandbox {
        spec,
        notes,
        removed_env,
    }
}

/// What a private home leaves readable besides the workspace and the
/// writable paths: the system, [`HOME_READABLE`] and the profile's
/// `readable`, the toolchains named by their variables, every `PATH`
/// directory (with its toolchain's root for `~/.x/bin` and `~/.x/shims`), the
/// program run wherever it is installed and the paths its command line
/// names, aq itself and its configuration (a
/// hook inside reads the user's policy), and an agent preset's configuration.
/// Missing paths are skipped when the sandbox is planned.
fn private_home_readable(
    profile: &Profile,
    inputs: &SpecInputs<'_>,
    expand: &dyn Fn(&str) -> Option<PathBuf>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM_READABLE.iter().map(PathBuf::from).collect();
    out.extend(
        HOME_READABLE
            .iter()
            .copied()
            .chain(profile.readable.iter().map(String::as_str))
            .filter_map(expand),
    );
    let var = |name: &str| {
        inputs
            .env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| PathBuf::from(v))
    };
    out.extend(
        TOOLCHAIN_VARS
            .iter()
            .filter_map(|n| var(n))
            .filter(|p| p.is_absolute()),
    );
    let local = inputs.home.map(|h| h.join(".local"));
    if let Some(path) = var("PATH") {
        for dir in std::env::split_paths(&path).filter(|d| d.is_absolute()) {
            let root = dir.parent().filter(|root| {
                dir.file_name().is_some_and(|n| n == "bin" || n == "shims")
                    && root
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                    && Some(*root) != local.as_deref()
            });
            if let Some(root) = root.or_else(|| python_env_root(&dir)) {
                out.push(root.to_path_buf());
            }
            out.push(dir);
        }
    }
    if let Some(program) = inputs.program {
        out.extend(program.parent().map(Path::to_path_buf));
        if let Ok(real) = std::fs::canonicalize(program) {
            // A program installed by npm starts its siblings (Codex's native
            // binary is a package of its own): its whole node_modules.
            let packages = real
                .ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "node_modules"));
            // One in a Python virtual environment (a venv, pipx, `uv tool`):
            // the environment, whose `pyvenv.cfg` and packages its
            // interpreter reads at start.
            let env = real.parent().and_then(python_env_root);
            out.extend(packages.or(env).or(real.parent()).map(Path::to_path_buf));
        }
    }
    out.extend(inputs.named.iter().cloned());
    if let Ok(exe) = std::env::current_exe() {
        out.extend(exe.parent().map(Path::to_path_buf));
    }
    out.extend(crate::policy_files::config_dir());
    if let Some(g) = inputs.grants {
        out.extend(g.read_only_home.iter().cloned());
    }
    // The home and aq's state stay out even where a system directory holds
    // them (a home under /tmp, XDG_STATE_HOME under /var).
    let excluded: Vec<PathBuf> = inputs
        .home
        .map(Path::to_path_buf)
        .into_iter()
        .chain(crate::state_root().ok())
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    cut_out(out, &excluded)
}

/// The Python virtual environment whose `bin` directory `dir` is.
fn python_env_root(dir: &Path) -> Option<&Path> {
    dir.parent().filter(|root| {
        dir.file_name().is_some_and(|n| n == "bin") && root.join("pyvenv.cfg").is_file()
    })
}

/// `readable` with `excluded` cut out of the paths that hold one: such a
/// path is replaced by its entries, one level at a time, down to the
/// excluded path, which is left out. A readable path inside an excluded one
/// (`~/.cargo` in the home) stays: it was asked for.
///
/// An entry that is not a symbolic link is its own real path (its directory
/// was resolved): only links are resolved again, since a directory such as
/// `/tmp` may hold hundreds of entries and resolving each took a system call
/// per component of its path.
fn cut_out(readable: Vec<PathBuf>, excluded: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // Directories already cut: a link back to one (`/tmp/x -> /tmp`, or to
    // `/`) would otherwise cut it again, for ever.
    let mut cut = std::collections::HashSet::new();
    // (the path, its real path when already known, found by the cut)
    let mut todo: Vec<(PathBuf, Option<PathBuf>, bool)> =
        readable.into_iter().map(|r| (r, None, false)).collect();
    while let Some((path, known, derived)) = todo.pop() {
        let real =
            known.unwrap_or_else(|| std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone()));
        // An entry found by the cut that is, or leads into, an excluded path
        // stays out: a link planted in /tmp to the home must not grant it.
        if derived && excluded.iter().any(|ex| real.starts_with(ex)) {
            continue;
        }
        if excluded
            .iter()
            .any(|ex| ex != &real && ex.starts_with(&real))
        {
            if !cut.insert(real.clone()) {
                continue;
            }
            if let Ok(entries) = std::fs::read_dir(&real) {
                todo.extend(entries.flatten().map(|e| {
                    let path = e.path();
                    let link = e.file_type().map_or(true, |t| t.is_symlink());
                    let known = (!link).then(|| path.clone());
                    (path, known, true)
                }));
            }
            continue;
        }
        out.push(path);
    }
    out
}

/// A sandbox planned on this host's facts, ready for `aq_sandbox::apply`.
pub struct PlannedSandbox {
    /// The plan (what [`aq_sandbox::SandboxPlan::enforced`] reports).
    pub plan: aq_sandbox::SandboxPlan,
    /// The command's complete environment.
    pub env: Vec<(OsString, OsString)>,
    /// Things a user should know, secret-looking variables left out included.
    pub notes: Vec<String>,
}

/// Build the spec for `profile` and plan it on this host's facts: the one
/// way `aq run` and `aq verify` make a sandbox. An error is a boundary the
/// profile needs and this host cannot give (the caller exits 125).
pub fn plan(
    profile: &Profile,
    inputs: SpecInputs<'_>,
) -> Result<PlannedSandbox, aq_sandbox::SandboxError> {
    let built = build(profile, inputs);
    let facts = aq_sandbox::HostFacts::probe(&built.spec);
    let plan = aq_sandbox::plan(&built.spec, &facts)?;
    let mut notes = built.notes;
    notes.extend(removed_env_note(&built.removed_env));
    Ok(PlannedSandbox {
        plan,
        env: built.spec.env,
        notes,
    })
}

/// What the user is told of the secret-looking variables
/// [`build`] left out of the command's environment (none: nothing).
pub(crate) fn removed_env_note(removed: &[String]) -> Option<String> {
    (!removed.is_empty()).then(|| {
        format!(
            "secret-looking variables left out: {} (pass one with `env` in the profile or `[session] env_pass`)",
            removed.join(", ")
        )
    })
}

/// The command's environment: kept names and prefixes, minus secret-looking
/// names (unless passed), plus the profile's `env`, `PATH` normalized, the
/// session variables last.
fn rebuild_env(
    profile: &Profile,
    inputs: &SpecInputs<'_>,
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut out: Vec<(OsString, OsString)> = Vec::new();
    let mut removed = Vec::new();
    let mut path = None;
    for (k, v) in &inputs.env {
        let name = k.to_string_lossy();
        if name == "PATH" {
            path = Some(v.clone());
            continue;
        }
        let passed = profile.env.iter().any(|p| p == name.as_ref())
            || inputs.env_pass.iter().any(|p| p == name.as_ref());
        let kept = ENV_KEEP.contains(&name.as_ref())
            || ENV_KEEP_PREFIXES.iter().any(|p| name.starts_with(p));
        if passed || (kept && !aq_knowledge::secret_names::is_secret_env_name(&name)) {
            out.push((k.clone(), v.clone()));
        } else if aq_knowledge::secret_names::is_secret_env_name(&name) {
            removed.push(name.into_owned());
        }
    }
    let path = normalize_path(
        path.as_deref()
            .unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin")),
        inputs.path_prefix,
    );
    out.push((OsString::from("PATH"), path));
    if let Some(t) = inputs.tmpdir {
        out.retain(|(k, _)| k != "TMPDIR");
        out.push((OsString::from("TMPDIR"), t.as_os_str().to_owned()));
    }
    if let Some(g) = inputs.grants {
        out.retain(|(k, _)| !g.env.iter().any(|(n, _)| n == k));
        out.extend(g.env.iter().cloned());
        removed.retain(|n| !g.env.iter().any(|(k, _)| k == n.as_str()));
    }
    out.extend(inputs.session_env.iter().cloned());
    removed.sort();
    (out, removed)
}

/// `PATH` with only absolute entries, each once, `prefix` first.
pub fn normalize_path(path: &OsStr, prefix: Option<&Path>) -> OsString {
    let mut seen = BTreeSet::new();
    let mut parts: Vec<&[u8]> = Vec::new();
    let prefix_bytes = prefix.map(|p| p.as_os_str().as_bytes());
    for part in prefix_bytes
        .into_iter()
        .chain(path.as_bytes().split(|b| *b == b':'))
    {
        if part.first() == Some(&b'/') && seen.insert(part) {
            parts.push(part);
        }
    }
    OsString::from(std::ffi::OsStr::from_bytes(&parts.join(&b':')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_and_state_are_cut_out_of_a_readable_directory_that_holds_them() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        for d in ["a", "home/src", "home/.cargo", "state/sessions", "b/c"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        // Links are resolved: one to the state or into the home is cut out
        // with it, one to a directory stays as it is.
        std::os::unix::fs::symlink(root.join("state"), root.join("to-state")).unwrap();
        std::os::unix::fs::symlink(root.join("home/src"), root.join("to-home-src")).unwrap();
        // A link back to a directory being cut (or to `/`) is cut once.
        std::os::unix::fs::symlink(&root, root.join("loop")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("to-a")).unwrap();
        let excluded = [root.join("home"), root.join("state")];
        let mut got = cut_out(vec![root.clone(), root.join("home/.cargo")], &excluded);
        got.sort();
        assert_eq!(
            got,
            vec![
                root.join("a"),
                root.join("b"),
                root.join("home/.cargo"),
                root.join("to-a")
            ]
        );
    }

    #[test]
    fn a_python_environment_is_known_by_its_pyvenv_cfg() {
        let t = tempfile::tempdir().unwrap();
        let env = t.path().join("venv");
        std::fs::create_dir_all(env.join("bin")).unwrap();
        std::fs::create_dir_all(t.path().join("plain/bin")).unwrap();
        std::fs::write(env.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        assert_eq!(python_env_root(&env.join("bin")), Some(env.as_path()));
        assert_eq!(python_env_root(&t.path().join("plain/bin")), None);
        assert_eq!(python_env_root(&env), None);
    }

    fn profile(name: &str) -> Profile {
        Profile::builtin(name).unwrap()
    }

    #[test]
    fn path_is_normalized() {
        let p = normalize_path(
            OsStr::new(":.:/usr/bin:bin:/usr/bin::/bin"),
            Some(Path::new("/s")),
        );
        assert_eq!(p, OsString::from("/s:/usr/bin:/bin"));
    }

    #[test]
    fn environment_is_rebuilt_from_an_allowlist() {
        let ws = tempfile::tempdir().unwrap();
        let env: Vec<(OsString, OsString)> = [
            ("HOME", "/home/u"),
            ("PATH", ".:/usr/bin:"),
            ("LANG", "C.UTF-8"),
            ("GITHUB_TOKEN", "ghp_fake"),
            ("AWS_SECRET_ACCESS_KEY", "fake"),
            ("ANTHROPIC_API_KEY", "sk-ant-fake"),
            ("CARGO_REGISTRY_TOKEN", "fake"),
            ("CARGO_TERM_COLOR", "never"),
            ("SSH_AUTH_SOCK", "/tmp/agent.sock"),
            ("RANDOM_THING", "x"),
        ]
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
        let mut p = profile("strict");
        p.env.push("ANTHROPIC_API_KEY".to_string());
        let s = build(
            &p,
            SpecInputs {
                workspace: ws.path(),
                home: None,
                sensitive: &[],
                unmasked: &[],
                env,
                env_pass: &[],
                session_env: vec![("AQ_SESSION_ID".into(), "x".into())],
                path_prefix: Some(Path::new("/shims")),
                tmpdir: Some(Path::new("/state/tmp")),
                loopback_listeners: vec![],
                grants: None,
                program: None,
                named: vec![],
                log_denials: false,
                allowed_sockets: vec![],
                pass_fds: vec![],
            },
        );
        let names: Vec<String> = s
            .spec
            .env
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            vec![
                "HOME",
                "LANG",
                "ANTHROPIC_API_KEY",
                "CARGO_TERM_COLOR",
                "PATH",
                "TMPDIR",
                "AQ_SESSION_ID"
            ]
        );
        let path = &s.spec.env.iter().find(|(k, _)| k == "PATH").unwrap().1;
        assert_eq!(path, "/shims:/usr/bin");
        assert!(s.removed_env.contains(&"GITHUB_TOKEN".to_string()));
        assert!(s.removed_env.contains(&"CARGO_REGISTRY_TOKEN".to_string()));
        assert!(s.spec.writable.contains(&PathBuf::from("/state/tmp")));
    }
}
