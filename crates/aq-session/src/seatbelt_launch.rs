//! `aq run` on macOS: the session's sandbox spec run under Seatbelt, as
//! `/usr/bin/sandbox-exec -p PROFILE -- COMMAND ARGS...`.
//!
//! Decide, then do. [`plan`] takes the inputs the Linux sandbox gets
//! ([`crate::sandbox_spec::SpecInputs`], built the same way by `aq run`)
//! and returns a [`LaunchPlan`]: the profile, the `sandbox-exec` command
//! line, the command's whole environment, its working directory and what
//! the user should know. All of it builds and is tested on every system;
//! what is macOS's alone is starting the planned process and waiting for it
//! (`crate::run`).
//!
//! # What differs from the Linux path, and why
//!
//! - **The shims are the firewall.** Seatbelt judges paths, not programs,
//!   and macOS has no exec guard, so a session always gets the PATH shims,
//!   even where its profile asks for the exec guard. A plan whose `PATH`
//!   does not start with the shim directory is refused: without them
//!   nothing would judge what the command starts. A program started by
//!   absolute path, or by a tool that ignores `PATH`, is not judged.
//! - **The broker listens on the host's loopback.** There is no network
//!   namespace to hand a listener out of: `aq run` binds `127.0.0.1` on a
//!   port the system picks, the proxy variables name that port, and the
//!   profile allows no connection but to it (and to the supervisor's
//!   socket). Other local processes can reach that port too; they get the
//!   same broker, its allowlist and its log.
//! - **No key proxy and no model bridges.** On Linux they listen inside the
//!   sandbox's own network namespace. On the host's loopback the key proxy
//!   would put the user's key into the requests of any local process
//!   (another user's included), and a bridge would need the very port of
//!   the model server it stands for. A session that needs either is refused
//!   ([`refuse_netns_services`]); a profile with the host's network needs
//!   neither.
//! - **No limits.** Seatbelt has none, and `RLIMIT_NPROC` on macOS counts
//!   every process of the user, not the session's: the profile's limits are
//!   named in a note, not enforced.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use aq_policy::Profile;

pub use crate::error::SeatbeltLaunchError;
use crate::sandbox_spec::{SessionSandbox, SpecInputs};

/// How the command is started under Seatbelt, decided before anything runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan {
    /// The Seatbelt profile (SBPL), as `sandbox-exec -p` takes it.
    pub profile: String,
    /// `/usr/bin/sandbox-exec -p PROFILE -- COMMAND ARGS...`.
    pub argv: Vec<OsString>,
    /// The command's complete environment (nothing else is inherited).
    pub env: Vec<(OsString, OsString)>,
    /// Where the command starts.
    pub cwd: PathBuf,
    /// Things a user should know: the spec's notes and what macOS does not
    /// enforce.
    pub notes: Vec<String>,
}

/// Where the command starts in [`LaunchPlan::argv`]: after `sandbox-exec`,
/// `-p`, the profile and `--`.
const COMMAND_AT: usize = 4;

/// The program the probe runs: present on every macOS, and it does nothing.
pub const PROBE_PROGRAM: &str = "/usr/bin/true";

impl LaunchPlan {
    /// The command as the sandbox runs it: the resolved program, then its
    /// arguments.
    pub fn command(&self) -> &[OsString] {
        &self.argv[COMMAND_AT..]
    }

    /// The process to start (not started): `sandbox-exec` with exactly the
    /// plan's environment, in its working directory.
    pub fn sandbox_exec(&self) -> Result<std::process::Command, aq_sandbox::SeatbeltError> {
        let mut cmd = aq_sandbox::sandbox_exec_command(&self.profile, self.command(), &self.env)?;
        cmd.current_dir(&self.cwd);
        Ok(cmd)
    }

    /// The same profile around [`PROBE_PROGRAM`], started first: a profile
    /// `sandbox-exec` refuses (or a `sandbox-exec` that cannot run) then
    /// stops the session with exit 125 instead of passing for the
    /// command's own exit code, which `sandbox-exec` shares.
    pub fn probe(&self) -> Result<std::process::Command, aq_sandbox::SeatbeltError> {
        let mut cmd = aq_sandbox::sandbox_exec_command(
            &self.profile,
            &[OsString::from(PROBE_PROGRAM)],
            &self.env,
        )?;
        cmd.current_dir(&self.cwd);
        Ok(cmd)
    }
}

/// What only a session has, besides the spec's inputs.
pub struct Launch<'a> {
    /// The command: the program as resolved on the caller's `PATH`, then
    /// its arguments.
    pub command: Vec<OsString>,
    /// Where the command starts (the caller's working directory).
    pub cwd: PathBuf,
    /// The ports of the model bridges the session would start (on Linux,
    /// inside the sandbox's own network namespace).
    pub bridge_ports: &'a [u16],
    /// Comment lines at the top of the profile (the session, its broker).
    pub profile_notes: Vec<String>,
}

/// Plans the launch: refuses what needs a network namespace, builds the
/// spec as the Linux path does ([`crate::sandbox_spec::build`], which makes
/// a missing writable cache or agent state, as there), then
/// [`plan_launch`]. `inputs.path_prefix` is the shim directory.
pub fn plan(
    profile: &Profile,
    inputs: SpecInputs<'_>,
    launch: Launch<'_>,
) -> Result<LaunchPlan, SeatbeltLaunchError> {
    refuse_netns_services(inputs.grants, launch.bridge_ports)?;
    let names = crate::seatbelt_profile::masked_names(profile, inputs.sensitive);
    let shim_dir = inputs.path_prefix.map(Path::to_path_buf);
    let built = crate::sandbox_spec::build(profile, inputs);
    plan_launch(&built, &names, shim_dir.as_deref(), launch)
}

/// The launch for a built spec. Pure: the profile from
/// [`aq_sandbox::plan_seatbelt_profile`] (with the shim directory readable,
/// since the command runs the shims), the `sandbox-exec` command line, the
/// spec's environment (secret-looking variables already left out by
/// [`crate::sandbox_spec::build`]), and the notes.
pub fn plan_launch(
    built: &SessionSandbox,
    masked_names: &[String],
    shim_dir: Option<&Path>,
    launch: Launch<'_>,
) -> Result<LaunchPlan, SeatbeltLaunchError> {
    let Some(shim_dir) = shim_dir else {
        return Err(SeatbeltLaunchError::NoShims);
    };
    let path = built
        .spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    if std::env::split_paths(&path).next().as_deref() != Some(shim_dir) {
        return Err(SeatbeltLaunchError::PathWithoutShims {
            shim_dir: shim_dir.to_path_buf(),
        });
    }
    let mut spec = built.spec.clone();
    // A private home leaves aq's state unreadable, the session's shims
    // with it; they are links to aq, which the command must run.
    if let Some(readable) = spec.readable.as_mut() {
        readable.push(shim_dir.to_path_buf());
    }
    let profile = aq_sandbox::plan_seatbelt_profile(&aq_sandbox::SeatbeltInputs {
        spec: &spec,
        masked_names,
        notes: &launch.profile_notes,
    })?;
    let argv = aq_sandbox::sandbox_exec_argv(&profile, &launch.command)?;
    let mut notes = built.notes.clone();
    notes.extend(crate::sandbox_spec::removed_env_note(&built.removed_env));
    if spec.exec_guard == aq_sandbox::ExecGuardMode::Required {
        notes.push("no exec guard on macOS: the PATH shims are the firewall, so a program started by absolute path or by a tool that ignores PATH is not judged".to_string());
    }
    if !spec.rlimits.is_empty() || spec.memory_max_bytes.is_some() {
        notes.push(
            "no limits on macOS: the profile's rlimits and memory limit are not enforced"
                .to_string(),
        );
    }
    Ok(LaunchPlan {
        profile,
        argv,
        env: spec.env,
        cwd: launch.cwd,
        notes,
    })
}

/// Refuses a session that needs a listener in a network namespace of the
/// sandbox's own, which macOS does not have: the agent preset's key proxy,
/// or bridges to model servers on this machine's loopback. Fail closed:
/// passing the key to the agent instead, or opening the server's port to
/// the sandbox, would be a weaker session than the one asked for.
pub fn refuse_netns_services(
    grants: Option<&aq_agents::Grants>,
    bridge_ports: &[u16],
) -> Result<(), SeatbeltLaunchError> {
    if let Some(proxy) = grants.and_then(|g| g.key_proxy.as_ref()) {
        return Err(SeatbeltLaunchError::KeyProxy {
            base_url_env: proxy.base_url_env.to_string(),
            keys_outside: grants
                .map(|g| g.keys_outside.iter().map(|k| k.to_string()).collect())
                .unwrap_or_default(),
        });
    }
    if !bridge_ports.is_empty() {
        return Err(SeatbeltLaunchError::Bridges {
            ports: bridge_ports.to_vec(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use aq_sandbox::SandboxSpec;

    const PORT: u16 = 49_321;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn launch(command: &[&str]) -> Launch<'static> {
        Launch {
            command: command.iter().map(OsString::from).collect(),
            cwd: PathBuf::from("/work/ws"),
            bridge_ports: &[],
            profile_notes: vec!["Session TEST.".to_string()],
        }
    }

    /// What `aq run` gives the spec: the caller's environment with a few
    /// secrets, the session's variables and the broker's on `PORT`, the
    /// shims first on `PATH`.
    fn session_inputs<'a>(
        ws: &'a Path,
        shims: &'a Path,
        tmp: &'a Path,
        grants: Option<&'a aq_agents::Grants>,
    ) -> SpecInputs<'a> {
        SpecInputs {
            workspace: ws,
            home: None,
            sensitive: &[],
            unmasked: &[],
            env: env(&[
                ("HOME", "/Users/u"),
                ("PATH", "/usr/bin:/bin:/opt/homebrew/bin"),
                ("LANG", "en_US.UTF-8"),
                ("GITHUB_TOKEN", "ghp_fake"),
                ("AWS_SECRET_ACCESS_KEY", "fake"),
                ("HTTPS_PROXY", "http://corp.example.invalid:8080"),
            ]),
            env_pass: &[],
            session_env: crate::run::session_env(
                Path::new("/state/sessions/TEST"),
                "TEST",
                Some(PORT),
                &[],
            ),
            path_prefix: Some(shims),
            tmpdir: Some(tmp),
            loopback_listeners: vec![PORT],
            grants,
            program: None,
            named: vec![],
            log_denials: false,
            allowed_sockets: vec![PathBuf::from("/state/sessions/TEST/supervisor.sock")],
            pass_fds: vec![],
        }
    }

    fn value<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsString> {
        env.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    #[test]
    fn the_command_runs_after_sandbox_exec_its_profile_and_a_double_dash() {
        let ws = tempfile::tempdir().unwrap();
        let tmp = ws.path().join("tmp");
        let shims = Path::new("/state/sessions/TEST/shims");
        let plan = plan(
            &Profile::builtin("strict").unwrap(),
            session_inputs(ws.path(), shims, &tmp, None),
            launch(&["/usr/bin/git", "-c", "x=y", "status"]),
        )
        .unwrap();
        let want: Vec<OsString> = [
            "/usr/bin/sandbox-exec",
            "-p",
            plan.profile.as_str(),
            "--",
            "/usr/bin/git",
            "-c",
            "x=y",
            "status",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        assert_eq!(plan.argv, want);
        assert_eq!(plan.command(), &want[4..]);
        assert!(plan.profile.contains("(deny default)"), "{}", plan.profile);
        assert!(plan.profile.contains("; Session TEST."));
        assert_eq!(plan.cwd, Path::new("/work/ws"));

        // What would be started, and the probe before it: nothing
        // inherited, the same profile and environment, the same directory.
        let cmd = plan.sandbox_exec().unwrap();
        assert_eq!(cmd.get_program(), "/usr/bin/sandbox-exec");
        let args: Vec<&std::ffi::OsStr> = cmd.get_args().collect();
        assert_eq!(
            args,
            want[1..]
                .iter()
                .map(OsString::as_os_str)
                .collect::<Vec<_>>()
        );
        let envs: Vec<(OsString, OsString)> = cmd
            .get_envs()
            .map(|(k, v)| (k.to_owned(), v.unwrap().to_owned()))
            .collect();
        let mut sorted = plan.env.clone();
        sorted.sort();
        assert_eq!(envs, sorted);
        assert_eq!(cmd.get_current_dir(), Some(Path::new("/work/ws")));
        let probe = plan.probe().unwrap();
        let args: Vec<&std::ffi::OsStr> = probe.get_args().collect();
        assert_eq!(
            args,
            ["-p", plan.profile.as_str(), "--", PROBE_PROGRAM]
                .map(std::ffi::OsStr::new)
                .to_vec()
        );
    }

    #[test]
    fn the_environment_has_the_shims_first_the_session_and_the_broker_on_its_port() {
        let ws = tempfile::tempdir().unwrap();
        let tmp = ws.path().join("tmp");
        let shims = Path::new("/state/sessions/TEST/shims");
        let plan = plan(
            &Profile::builtin("strict").unwrap(),
            session_inputs(ws.path(), shims, &tmp, None),
            launch(&["/bin/sh"]),
        )
        .unwrap();
        let get = |n: &str| value(&plan.env, n).map(|v| v.to_string_lossy().into_owned());
        assert_eq!(
            get("PATH").as_deref(),
            Some("/state/sessions/TEST/shims:/usr/bin:/bin:/opt/homebrew/bin")
        );
        assert_eq!(
            get("AQ_SESSION_DIR").as_deref(),
            Some("/state/sessions/TEST")
        );
        assert_eq!(get("AQ_SESSION_ID").as_deref(), Some("TEST"));
        let http = format!("http://127.0.0.1:{PORT}");
        for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
            assert_eq!(get(name).as_deref(), Some(http.as_str()), "{name}");
        }
        assert_eq!(
            get("ALL_PROXY"),
            Some(format!("socks5h://127.0.0.1:{PORT}"))
        );
        // The caller's own proxy is replaced, not kept beside the broker's.
        let count = plan.env.iter().filter(|(k, _)| k == "HTTPS_PROXY").count();
        assert_eq!(count, 1, "{:?}", plan.env);
        // Scrubbed as on Linux, and said so.
        for secret in ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"] {
            assert_eq!(get(secret), None, "{secret}");
        }
        assert!(
            plan.notes
                .iter()
                .any(|n| n.contains("left out: AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN")),
            "{:?}",
            plan.notes
        );
        assert!(
            plan.notes
                .iter()
                .any(|n| n.starts_with("no exec guard on macOS")),
            "{:?}",
            plan.notes
        );
    }

    #[test]
    fn the_profile_allows_the_brokers_port_and_no_other_address() {
        let ws = tempfile::tempdir().unwrap();
        let tmp = ws.path().join("tmp");
        let shims = Path::new("/state/sessions/TEST/shims");
        let plan = plan(
            &Profile::builtin("strict").unwrap(),
            session_inputs(ws.path(), shims, &tmp, None),
            launch(&["/bin/sh"]),
        )
        .unwrap();
        let remote: Vec<&str> = plan
            .profile
            .lines()
            .filter(|l| l.contains("(remote "))
            .collect();
        assert_eq!(
            remote,
            [format!("(allow network-outbound (remote ip \"localhost:{PORT}\"))").as_str()]
        );
        assert!(!plan.profile.contains("network-bind"), "{}", plan.profile);
        assert!(!plan.profile.contains(":3128"), "{}", plan.profile);
    }

    #[test]
    fn a_private_home_can_read_the_shims() {
        let mut spec = SandboxSpec::strict(Path::new("/work/ws"));
        spec.readable = Some(vec![PathBuf::from("/usr")]);
        spec.env = env(&[("PATH", "/s/shims:/usr/bin")]);
        let built = SessionSandbox {
            spec,
            notes: vec![],
            removed_env: vec![],
        };
        let plan = plan_launch(
            &built,
            &[],
            Some(Path::new("/s/shims")),
            launch(&["/bin/sh"]),
        )
        .unwrap();
        let reads = plan
            .profile
            .lines()
            .skip_while(|l| !l.contains("A private home"))
            .take_while(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(reads.contains("(subpath \"/s/shims\")"), "{reads}");
    }

    #[test]
    fn without_the_shims_first_on_path_nothing_runs() {
        let mut spec = SandboxSpec::strict(Path::new("/work/ws"));
        spec.env = env(&[("PATH", "/usr/bin:/s/shims")]);
        let built = SessionSandbox {
            spec,
            notes: vec![],
            removed_env: vec![],
        };
        let err = plan_launch(
            &built,
            &[],
            Some(Path::new("/s/shims")),
            launch(&["/bin/sh"]),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("does not start with them (/s/shims)"), "{err}");
        let err = plan_launch(&built, &[], None, launch(&["/bin/sh"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("this session has none"), "{err}");
    }

    #[test]
    fn the_key_proxy_and_model_bridges_are_refused() {
        let grants = aq_agents::Grants {
            keys_outside: vec!["ANTHROPIC_API_KEY".to_string()],
            key_proxy: Some(aq_agents::KeyProxyPlan {
                upstream: "https://api.anthropic.com".to_string(),
                headers: vec![(
                    "x-api-key".to_string(),
                    String::new(),
                    "sk-ant-secret".to_string(),
                )],
                query_key: None,
                base_url_env: "ANTHROPIC_BASE_URL".to_string(),
                inside_url: "http://127.0.0.1:3129".to_string(),
            }),
            ..Default::default()
        };
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join(".git")).unwrap();
        let tmp = ws.path().join("tmp");
        let shims = Path::new("/state/sessions/TEST/shims");
        let err = plan(
            &Profile::builtin("strict").unwrap(),
            session_inputs(ws.path(), shims, &tmp, Some(&grants)),
            launch(&["/usr/local/bin/claude"]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "the agent's key proxy (for ANTHROPIC_BASE_URL, which keeps ANTHROPIC_API_KEY outside the sandbox) needs a network namespace of the sandbox's own, which macOS does not have; a profile with the host's network (`network = \"host\"`, as `--profile dev`) needs neither, and `--agent none` runs without the agent preset"
        );
        assert!(!err.contains("sk-ant-secret"));
        // Refused before the spec was built (which makes `.git/hooks`).
        assert!(!ws.path().join(".git/hooks").exists());

        let err = refuse_netns_services(None, &[11434])
            .unwrap_err()
            .to_string();
        assert!(err.contains("(port 11434)"), "{err}");
        assert!(refuse_netns_services(Some(&aq_agents::Grants::default()), &[]).is_ok());
    }
}
