//! A preset resolved for one session on this machine: which paths exist,
//! which variables the user has set, whether the key proxy serves the API.
//!
//! The only I/O of this crate: state directories and files are created
//! (the agent must be able to write them, and a path must exist to be
//! granted), configuration files are looked up.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::Preset;

/// What the session needs to know besides the preset.
pub struct GrantInputs<'a> {
    /// The home directory.
    pub home: Option<&'a Path>,
    /// The canonical workspace.
    pub workspace: &'a Path,
    /// The caller's environment.
    pub env: &'a [(OsString, OsString)],
    /// The key proxy's port inside the sandbox, when the sandbox has a
    /// network namespace of its own to listen in (`None`: no key proxy).
    pub key_proxy_port: Option<u16>,
    /// Where the session keeps its copies of shadowed files (`None`: they
    /// are read-only instead).
    pub shadow_dir: Option<&'a Path>,
    /// The endpoints the agent's own configuration names
    /// ([`crate::endpoints::find`]).
    pub endpoints: &'a crate::endpoints::Found,
    /// Whether the agent runs in aq's sandbox. A preset's arguments and
    /// settings are made for it (Codex's own sandbox handed over to aq's):
    /// without it (`shims-only`) they are not applied, only said.
    pub sandboxed: bool,
}

/// The key proxy for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyProxyPlan {
    /// Where requests go (the user's base URL, else the preset's upstream).
    pub upstream: String,
    /// Header (lower case), prefix, real key: one per key the user has set.
    pub headers: Vec<(String, String, String)>,
    /// Query parameter and real key.
    pub query_key: Option<(String, String)>,
    /// The variable that points the agent at the proxy.
    pub base_url_env: String,
    /// Its value inside: `http://127.0.0.1:PORT` plus the upstream's path.
    pub inside_url: String,
}

/// What a preset grants one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Writable paths (absolute, existing).
    pub writable: Vec<PathBuf>,
    /// Read-only paths in the home directory (absolute, existing).
    pub read_only_home: Vec<PathBuf>,
    /// Read-only paths in the workspace (relative, existing).
    pub read_only_workspace: Vec<PathBuf>,
    /// Variables for the agent: its own, the preset's settings, placeholders
    /// for the keys the proxy holds, the base URL that points at it.
    pub env: Vec<(OsString, OsString)>,
    /// The names of the agent's own variables passed (for the record).
    pub env_passed: Vec<String>,
    /// The names `aq` set.
    pub env_set: Vec<String>,
    /// Keys that stay outside (the proxy puts them in).
    pub keys_outside: Vec<String>,
    /// Keys passed to the agent itself: the exec guard removes them from
    /// everything the agent runs.
    pub keys_passed: Vec<String>,
    /// The key proxy, when it serves this session.
    pub key_proxy: Option<KeyProxyPlan>,
    /// Arguments to add to the agent's own.
    pub args: Vec<String>,
    /// Files the session writes a copy of (bound over them), written back
    /// at the end without changes to what makes something run.
    pub shadows: Vec<crate::shadow::ShadowFile>,
    /// Paths created because they were missing.
    pub created: Vec<PathBuf>,
    /// Things the user should know.
    pub notes: Vec<String>,
}

/// Where `~/REST` is: in the home, or, for an agent that follows the XDG
/// base directories (`xdg`), where the user's `XDG_*_HOME` puts it.
pub(crate) fn home_path(
    entry: &str,
    home: Option<&Path>,
    xdg: Option<&[(OsString, OsString)]>,
) -> Option<PathBuf> {
    let rest = entry.strip_prefix("~/")?;
    if let Some(env) = xdg {
        for (prefix, var) in [
            (".config/", "XDG_CONFIG_HOME"),
            (".local/share/", "XDG_DATA_HOME"),
            (".local/state/", "XDG_STATE_HOME"),
            (".cache/", "XDG_CACHE_HOME"),
        ] {
            if let Some(tail) = rest.strip_prefix(prefix)
                && let Some(dir) = lookup(env, var).map(PathBuf::from)
                // As the specification says: a relative value is ignored.
                && dir.is_absolute()
            {
                return Some(dir.join(tail));
            }
        }
    }
    home.map(|h| h.join(rest))
}

pub(crate) fn lookup<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsString> {
    env.iter()
        .find(|(k, v)| k == name && !v.is_empty())
        .map(|(_, v)| v)
}

/// `https://api.example.invalid/v1/` → `/v1`.
fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    match rest.find('/') {
        Some(i) => rest[i..].trim_end_matches('/'),
        None => "",
    }
}

/// Resolves `preset` for one session: creates its missing state, finds its
/// configuration, and works out its environment and key handling.
pub fn grant(preset: &Preset, inputs: &GrantInputs<'_>) -> Grants {
    let mut g = Grants::default();
    // The key proxy's API, unless the agent speaks it only when asked to.
    let api = preset
        .api
        .as_ref()
        .filter(|api| !api.only_when_set || lookup(inputs.env, &api.base_url_env).is_some());
    // What the sandbox binds: without it nothing is made, written or
    // granted in the agent's files (a seed such as Kilo's migration marker
    // would change how the agent behaves outside aq too).
    if inputs.sandboxed {
        grant_paths(preset, inputs, api, &mut g);
        g.args.extend(preset.args.iter().cloned());
    } else if !preset.args.is_empty() {
        g.notes.push(format!(
            "not added without aq's sandbox: {} (they hand the agent's own confinement over to aq's sandbox)",
            preset.args.join(" ")
        ));
    }
    // Its own variables, as the user has them.
    for (k, v) in inputs.env {
        let name = k.to_string_lossy();
        if preset.passes_env(&name)
            && !preset.keys.iter().any(|key| key == name.as_ref())
            && !preset.set_env.contains_key(name.as_ref())
        {
            g.env.push((k.clone(), v.clone()));
            g.env_passed.push(name.into_owned());
        }
    }
    if inputs.sandboxed {
        for (k, v) in &preset.set_env {
            g.env.push((k.into(), v.into()));
            g.env_set.push(k.clone());
        }
    }

    // The keys: outside with the key proxy where the API allows it.
    let set_keys: Vec<&String> = preset
        .keys
        .iter()
        .filter(|k| lookup(inputs.env, k).is_some())
        .collect();
    match (api, inputs.key_proxy_port) {
        (Some(api), Some(port)) => {
            let upstream = lookup(inputs.env, &api.base_url_env)
                .map(|v| v.to_string_lossy().into_owned())
                .or_else(|| {
                    inputs
                        .endpoints
                        .endpoints
                        .iter()
                        .find(|e| e.api)
                        .map(|e| e.url.clone())
                })
                .unwrap_or_else(|| api.upstream.clone());
            let mut headers: Vec<(String, String, String)> = Vec::new();
            for a in &api.auth {
                let Some(key) = lookup(inputs.env, &a.env) else {
                    continue;
                };
                if headers.iter().any(|(h, _, _)| *h == a.header) {
                    continue;
                }
                headers.push((
                    a.header.clone(),
                    a.prefix.clone(),
                    key.to_string_lossy().into_owned(),
                ));
            }
            let query_key = api
                .query_key
                .as_ref()
                .and_then(|q| headers.first().map(|(_, _, key)| (q.clone(), key.clone())));
            for key in &set_keys {
                if api.auth.iter().any(|a| a.env == **key) {
                    g.env.push(((*key).into(), api.placeholder.clone().into()));
                    g.keys_outside.push((*key).clone());
                } else if let Some(v) = lookup(inputs.env, key) {
                    g.env.push(((*key).into(), v.clone()));
                    g.keys_passed.push((*key).clone());
                }
            }
            let inside_url = format!("http://127.0.0.1:{port}{}", url_path(&upstream));
            g.args.extend(
                api.base_url_args
                    .iter()
                    .map(|a| a.replace("{url}", &inside_url)),
            );
            g.env.retain(|(k, _)| k != api.base_url_env.as_str());
            g.env_passed.retain(|k| *k != api.base_url_env);
            g.env
                .push((api.base_url_env.clone().into(), inside_url.clone().into()));
            g.env_set.push(api.base_url_env.clone());
            g.key_proxy = Some(KeyProxyPlan {
                upstream,
                headers,
                query_key,
                base_url_env: api.base_url_env.clone(),
                inside_url,
            });
        }
        (api, _) => {
            for key in &set_keys {
                if let Some(v) = lookup(inputs.env, key) {
                    g.env.push(((*key).into(), v.clone()));
                    g.keys_passed.push((*key).clone());
                }
            }
            if api.is_some() && !set_keys.is_empty() && inputs.sandboxed {
                g.notes.push(format!(
                    "{} passed to the agent itself: the key proxy needs a sandbox with its own network (network off or an allowlist); the exec guard removes it from what the agent runs",
                    g.keys_passed.join(", ")
                ));
            }
        }
    }
    // Keys the agent's own configuration names (Codex's `env_key`): the
    // agent needs them for the endpoint it talks to itself.
    for key in &inputs.endpoints.key_envs {
        if g.keys_passed.contains(key) || g.keys_outside.contains(key) {
            continue;
        }
        if let Some(v) = lookup(inputs.env, key) {
            g.env.retain(|(k, _)| k != key.as_str());
            g.env_passed.retain(|k| k != key);
            g.env.push((key.into(), v.clone()));
            g.keys_passed.push(key.clone());
        }
    }
    g
}

/// The paths a sandboxed session grants: seeds written where missing, the
/// agent's state made and writable, its shadowed files copied, its config
/// (made where missing inside its state) read-only.
fn grant_paths(
    preset: &Preset,
    inputs: &GrantInputs<'_>,
    api: Option<&crate::preset::Api>,
    g: &mut Grants,
) {
    let expand = |p: &str| -> Option<PathBuf> {
        home_path(p, inputs.home, preset.xdg.then_some(inputs.env))
    };
    let api_seed = match (api, inputs.key_proxy_port) {
        (Some(api), Some(_)) => Some(&api.seed),
        _ => None,
    };
    for (entry, content) in preset.seed.iter().chain(api_seed.into_iter().flatten()) {
        let Some(path) = expand(entry) else { continue };
        if path.symlink_metadata().is_ok() {
            continue;
        }
        let written = path
            .parent()
            .map_or(Ok(()), create_dir)
            .and_then(|()| std::fs::write(&path, content));
        match written {
            Ok(()) => g.created.push(path),
            Err(e) => g
                .notes
                .push(format!("{} could not be written ({e})", path.display())),
        }
    }
    for entry in &preset.state {
        let Some(path) = expand(entry) else {
            g.notes.push(format!("{entry}: no home directory"));
            continue;
        };
        let existed = path.symlink_metadata().is_ok();
        let made = if entry.ends_with('/') {
            create_dir(&path)
        } else {
            create_file(&path)
        };
        match made {
            Ok(()) => {
                if !existed {
                    g.created.push(path.clone());
                }
                g.writable.push(path);
            }
            Err(e) => g.notes.push(format!(
                "{} could not be created ({e}): the agent cannot write it",
                path.display()
            )),
        }
    }
    for (index, (entry, protect)) in preset.shadow.iter().enumerate() {
        let Some(real) = expand(entry) else { continue };
        match inputs.shadow_dir {
            Some(dir) => match crate::shadow::make_copy(&real, dir, index) {
                Ok(copy) => g.shadows.push(crate::shadow::ShadowFile {
                    real,
                    copy,
                    protect: protect.clone(),
                }),
                Err(e) => {
                    g.notes.push(format!(
                        "{}: no session copy ({e}); it stays read-only",
                        real.display()
                    ));
                    if real.exists() {
                        g.read_only_home.push(real);
                    }
                }
            },
            None if real.exists() => g.read_only_home.push(real),
            None => {}
        }
    }
    for entry in &preset.config {
        if entry.starts_with("~/") {
            let Some(path) = expand(entry) else { continue };
            // Missing inside a directory the agent may write: made now, so
            // it can be bound read-only (else the agent could create it
            // and plant what runs later, outside aq).
            if path.symlink_metadata().is_err()
                && g.writable.iter().any(|w| path.starts_with(w) && w.is_dir())
            {
                let made = if entry.ends_with('/') {
                    create_dir(&path)
                } else {
                    create_file(&path)
                };
                if made.is_ok() {
                    g.created.push(path.clone());
                }
            }
            if path.symlink_metadata().is_ok() {
                g.read_only_home.push(path);
            }
        } else {
            let rel = PathBuf::from(entry.trim_end_matches('/'));
            if inputs.workspace.join(&rel).symlink_metadata().is_ok() {
                g.read_only_workspace.push(rel);
            }
        }
    }
}

fn create_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
}

/// Creates a missing state file: `{}` for JSON (what its agent would
/// write first), empty otherwise.
fn create_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if path.symlink_metadata().is_ok() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        create_dir(parent)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    if path.extension().is_some_and(|e| e == "json") {
        std::io::Write::write_all(&mut f, b"{}\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PresetSet;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn claude_gets_its_state_its_variables_and_a_proxied_key() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        std::fs::write(home.path().join(".claude/settings.json"), "{}").unwrap();
        std::fs::write(ws.path().join(".mcp.json"), "{}").unwrap();
        let set = PresetSet::builtin();
        let e = env(&[
            ("ANTHROPIC_API_KEY", "sk-ant-real"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9999/base"),
            ("CLAUDE_CODE_MAX_OUTPUT_TOKENS", "100"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
        ]);
        let g = grant(
            set.get("claude").unwrap(),
            &GrantInputs {
                home: Some(home.path()),
                workspace: ws.path(),
                env: &e,
                key_proxy_port: Some(3129),
                shadow_dir: None,
                endpoints: &Default::default(),
                sandboxed: true,
            },
        );
        assert!(home.path().join(".claude/projects").is_dir());
        // Seeded for the key proxy (its onboarding would need the network);
        // without a session directory for a copy, it is read-only.
        assert_eq!(
            std::fs::read_to_string(home.path().join(".claude.json")).unwrap(),
            "{\"hasCompletedOnboarding\": true}"
        );
        assert_eq!(
            std::fs::read_to_string(home.path().join(".claude/.credentials.json")).unwrap(),
            "{}\n"
        );
        assert!(g.writable.contains(&home.path().join(".claude/projects")));
        assert_eq!(
            g.read_only_home,
            vec![
                home.path().join(".claude.json"),
                home.path().join(".claude/settings.json")
            ]
        );
        assert_eq!(g.read_only_workspace, vec![PathBuf::from(".mcp.json")]);
        let get = |k: &str| {
            g.env
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(
            get("ANTHROPIC_API_KEY").as_deref(),
            Some("sk-ant-aq-key-proxy-placeholder")
        );
        assert_eq!(
            get("ANTHROPIC_BASE_URL").as_deref(),
            Some("http://127.0.0.1:3129/base")
        );
        assert_eq!(get("CLAUDE_CODE_MAX_OUTPUT_TOKENS").as_deref(), Some("100"));
        assert_eq!(get("IS_SANDBOX").as_deref(), Some("1"));
        assert_eq!(get("AWS_SECRET_ACCESS_KEY"), None);
        assert!(!g.env.iter().any(|(_, v)| v == "sk-ant-real"));
        let proxy = g.key_proxy.unwrap();
        assert_eq!(proxy.upstream, "http://127.0.0.1:9999/base");
        assert_eq!(
            proxy.headers,
            vec![(
                "x-api-key".to_string(),
                String::new(),
                "sk-ant-real".to_string()
            )]
        );
        assert_eq!(g.keys_outside, vec!["ANTHROPIC_API_KEY"]);
        assert!(g.keys_passed.is_empty());
    }

    #[test]
    fn without_a_key_proxy_the_key_is_passed_and_said_so() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let set = PresetSet::builtin();
        let e = env(&[("OPENAI_API_KEY", "sk-real")]);
        let g = grant(
            set.get("codex").unwrap(),
            &GrantInputs {
                home: Some(home.path()),
                workspace: ws.path(),
                env: &e,
                key_proxy_port: None,
                shadow_dir: None,
                endpoints: &Default::default(),
                sandboxed: true,
            },
        );
        assert!(g.key_proxy.is_none());
        assert_eq!(g.keys_passed, vec!["OPENAI_API_KEY"]);
        assert!(
            g.notes.iter().any(|n| n.contains("key proxy needs")),
            "{:?}",
            g.notes
        );
    }

    /// OpenCode stops when its config directory has no `.gitignore` it can
    /// write: the seed writes one first, and never over the user's.
    #[test]
    fn a_seed_is_written_when_missing_and_never_over_a_file() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let set = PresetSet::builtin();
        let inputs = GrantInputs {
            home: Some(home.path()),
            workspace: ws.path(),
            env: &[],
            key_proxy_port: None,
            shadow_dir: None,
            endpoints: &Default::default(),
            sandboxed: true,
        };
        let ignore = home.path().join(".config/opencode/.gitignore");
        let g = grant(set.get("opencode").unwrap(), &inputs);
        assert!(g.created.contains(&ignore), "{:?}", g.created);
        assert!(
            std::fs::read_to_string(&ignore)
                .unwrap()
                .contains("node_modules")
        );
        // The directory exists now: bound read-only, the seed inside it.
        assert!(
            g.read_only_home
                .contains(&home.path().join(".config/opencode"))
        );
        std::fs::write(&ignore, "mine\n").unwrap();
        let g = grant(set.get("opencode").unwrap(), &inputs);
        assert!(!g.created.contains(&ignore));
        assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "mine\n");
    }

    #[test]
    fn an_agent_that_follows_xdg_gets_its_paths_where_the_user_put_them() {
        let home = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let config = elsewhere.path().join("conf");
        let env = vec![
            (
                OsString::from("XDG_CONFIG_HOME"),
                config.clone().into_os_string(),
            ),
            (
                OsString::from("XDG_STATE_HOME"),
                OsString::from("relative/ignored"),
            ),
        ];
        let h = Some(home.path());
        assert_eq!(
            home_path("~/.config/opencode/", h, Some(&env)),
            Some(config.join("opencode/"))
        );
        // A relative value is ignored, as the specification says.
        assert_eq!(
            home_path("~/.local/state/opencode/", h, Some(&env)),
            Some(home.path().join(".local/state/opencode/"))
        );
        // An agent that does not follow XDG keeps its home paths.
        assert_eq!(
            home_path("~/.config/opencode/", h, None),
            Some(home.path().join(".config/opencode/"))
        );
        let set = PresetSet::builtin();
        let opencode = set.get("opencode").unwrap();
        assert!(opencode.xdg);
        let g = grant(
            opencode,
            &GrantInputs {
                home: h,
                workspace: home.path(),
                env: &env,
                key_proxy_port: None,
                shadow_dir: None,
                endpoints: &Default::default(),
                sandboxed: true,
            },
        );
        assert!(
            g.read_only_home.iter().any(|p| p.starts_with(&config)),
            "{g:?}"
        );
    }

    /// Auggie (not driven by an end-to-end test: its model API is
    /// Augment's own, at its login's tenant URL): its state is writable,
    /// what makes something run is read-only (created where missing inside
    /// its state, so it cannot be planted), its login is passed.
    #[test]
    fn auggie_keeps_its_settings_hooks_and_commands_read_only_and_its_login_passed() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join(".augment/commands")).unwrap();
        let set = PresetSet::builtin();
        let e = env(&[
            (
                "AUGMENT_SESSION_AUTH",
                "{\"accessToken\":\"t\",\"tenantURL\":\"https://d1.api.augmentcode.com/\"}",
            ),
            ("AUGMENT_API_URL", "https://d1.api.augmentcode.com/"),
        ]);
        let g = grant(
            set.get("auggie").unwrap(),
            &GrantInputs {
                home: Some(home.path()),
                workspace: ws.path(),
                env: &e,
                key_proxy_port: Some(3129),
                shadow_dir: None,
                endpoints: &Default::default(),
                sandboxed: true,
            },
        );
        let augment = home.path().join(".augment");
        assert!(g.writable.contains(&augment), "{:?}", g.writable);
        for entry in [
            "settings.json",
            "settings.local.json",
            "commands",
            "agents",
            "rules",
            "skills",
            "plugins",
        ] {
            assert!(
                g.read_only_home.contains(&augment.join(entry)),
                "{entry}: {:?}",
                g.read_only_home
            );
        }
        // Its hooks live in settings.json: there, empty, and read-only.
        assert_eq!(
            std::fs::read_to_string(augment.join("settings.json")).unwrap(),
            "{}\n"
        );
        assert_eq!(g.read_only_workspace, vec![PathBuf::from(".augment")]);
        assert!(g.key_proxy.is_none());
        assert_eq!(g.keys_passed, vec!["AUGMENT_SESSION_AUTH"]);
        assert_eq!(g.env_passed, vec!["AUGMENT_API_URL"]);
    }

    /// Copilot CLI speaks its own provider's API only when told where it
    /// is; else its GitHub token is passed and it talks to GitHub.
    #[test]
    fn an_api_only_when_set_is_served_only_when_its_base_url_is_set() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let set = PresetSet::builtin();
        let copilot = set.get("copilot").unwrap();
        let found = crate::endpoints::Found::default();
        let inputs = |e| GrantInputs {
            home: Some(home.path()),
            workspace: ws.path(),
            env: e,
            key_proxy_port: Some(3129),
            shadow_dir: None,
            endpoints: &found,
            sandboxed: true,
        };
        let e = env(&[("GH_TOKEN", "gho_real")]);
        let g = grant(copilot, &inputs(&e));
        assert!(g.key_proxy.is_none());
        assert_eq!(g.keys_passed, vec!["GH_TOKEN"]);
        assert!(!g.env.iter().any(|(k, _)| k == "COPILOT_PROVIDER_BASE_URL"));
        assert!(
            g.notes.iter().all(|n| !n.contains("key proxy needs")),
            "{:?}",
            g.notes
        );
        let e = env(&[
            ("GH_TOKEN", "gho_real"),
            ("COPILOT_PROVIDER_API_KEY", "sk-real"),
            ("COPILOT_PROVIDER_BASE_URL", "http://127.0.0.1:9999/v1"),
        ]);
        let g = grant(copilot, &inputs(&e));
        let plan = g.key_proxy.as_ref().unwrap();
        assert_eq!(plan.upstream, "http://127.0.0.1:9999/v1");
        assert_eq!(g.keys_outside, vec!["COPILOT_PROVIDER_API_KEY"]);
        assert_eq!(g.keys_passed, vec!["GH_TOKEN"]);
        assert!(
            g.env
                .iter()
                .any(|(k, v)| k == "COPILOT_PROVIDER_BASE_URL" && v == "http://127.0.0.1:3129/v1")
        );
        assert!(g.env.iter().any(|(k, v)| k == "COPILOT_PROVIDER_API_KEY"
            && v == "sk-aq-key-proxy-placeholder"));
    }

    #[test]
    fn without_the_sandbox_arguments_and_settings_are_said_not_applied() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let set = PresetSet::builtin();
        for (name, sandboxed) in [("codex", false), ("claude", false), ("codex", true)] {
            let g = grant(
                set.get(name).unwrap(),
                &GrantInputs {
                    home: Some(home.path()),
                    workspace: ws.path(),
                    env: &env(&[("OPENAI_API_KEY", "sk-fake")]),
                    key_proxy_port: None,
                    shadow_dir: None,
                    endpoints: &Default::default(),
                    sandboxed,
                },
            );
            let off = g.args.iter().any(|a| a.contains("danger-full-access"));
            assert_eq!(off, sandboxed && name == "codex", "{name}: {:?}", g.args);
            if !sandboxed {
                assert!(g.env_set.is_empty(), "{name}: {:?}", g.env_set);
                assert!(g.env.iter().all(|(k, _)| k != "IS_SANDBOX"), "{name}");
            }
            if name == "codex" && !sandboxed {
                assert!(
                    g.notes
                        .iter()
                        .any(|n| n.starts_with("not added without aq's sandbox")),
                    "{:?}",
                    g.notes
                );
            }
        }
    }
}
