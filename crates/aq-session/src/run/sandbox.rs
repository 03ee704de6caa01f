//! Planning the sandbox before anything runs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use aq_policy::Profile;

use super::supervise::Supervised;
use super::{SandboxKind, Setup, Stop, host_path, session_env};
use crate::SessionFile;
use crate::denials::DenialWatch;
use crate::net_intercept::SessionIntercept;
use crate::network::NetPlan;

/// Plans the sandbox the profile asks for before anything runs: a
/// boundary that cannot be set up stops the session here (exit 125),
/// never a silent downgrade.
pub(super) fn plan_sandbox(
    setup: &Setup<'_>,
    supervised: &Supervised,
    intercept: Option<SessionIntercept>,
) -> Result<Boundary, Stop> {
    let Setup {
        args,
        policy,
        settled,
        session,
        ..
    } = *setup;
    let kind = session.kind;
    let profile = &settled.profile;
    if !profile.sandbox {
        return Ok(Boundary {
            intercept,
            sandbox: None,
        });
    }
    let bridge_ports: Vec<u16> = settled.bridges.iter().map(|b| b.port).collect();
    let host_sockets_named = sockets_named(&policy.settings);
    let planned = plan_for(SandboxInputs {
        kind,
        profile,
        workspace: &policy.workspace,
        dir: &session.dir,
        file: &session.file,
        shim_dir: (!session.shims.is_empty()).then_some(session.shim_dir.as_path()),
        command: &session.command,
        broker: matches!(settled.net, NetPlan::Broker { .. }),
        grants: &session.grants,
        bridge_ports: &bridge_ports,
        log_denials: supervised.denials.as_ref().is_some_and(DenialWatch::is_on),
        pass_fds: &args.pass_fds,
        host_sockets_named: &host_sockets_named,
        intercept: intercept.as_ref(),
    });
    match planned {
        Ok(planned) => Ok(Boundary {
            intercept,
            sandbox: Some(planned),
        }),
        Err(e) => Err(Stop::sandbox_failed(&[
            e.to_string(),
            refusal_hint(kind, &profile.name),
        ])),
    }
}

/// The boundary around the command, set up before anything runs.
pub(super) struct Boundary {
    /// The broker's interception, when it reads HTTPS requests.
    pub intercept: Option<SessionIntercept>,
    /// The sandbox, planned (`None` for a profile without one).
    pub sandbox: Option<Planned>,
}

/// What `aq run` says after a sandbox it could not plan: where to look,
/// and how to run without one (on this system).
fn refusal_hint(kind: SandboxKind, profile: &str) -> String {
    match kind {
        SandboxKind::Kernel => format!(
            "the `{profile}` profile needs this boundary, so nothing was run; `aq doctor --fix` shows how to enable it, and `--profile shims-only` runs without the kernel sandbox"
        ),
        SandboxKind::Seatbelt => format!(
            "the `{profile}` profile needs this boundary, so nothing was run; `aq doctor` says what this Mac offers, and `--profile shims-only` runs without a sandbox (the PATH shims only)"
        ),
        SandboxKind::Unavailable => format!(
            "the `{profile}` profile needs a sandbox and aq has none for this system, so nothing was run; `--profile shims-only` runs without one (the PATH shims only)"
        ),
    }
}

/// A sandbox planned before anything runs, of this system's kind.
pub(super) enum Planned {
    /// Linux's, planned on this host's facts, for `command::run_sandboxed`.
    Kernel(PlannedSandbox),
    /// macOS's, for `command::run_seatbelt`.
    Seatbelt(SeatbeltSession),
}

/// A planned sandbox, ready to apply.
pub(super) struct PlannedSandbox {
    pub(super) plan: aq_sandbox::SandboxPlan,
    pub(super) env: Vec<(OsString, OsString)>,
    pub(super) argv: Vec<OsString>,
    pub(super) notes: Vec<String>,
}

/// A planned Seatbelt launch, and the broker's listener on the host's
/// loopback (bound while planning, since its port goes into the profile
/// and the proxy variables).
pub(super) struct SeatbeltSession {
    pub(super) launch: crate::seatbelt_launch::LaunchPlan,
    pub(super) broker_listener: Option<std::net::TcpListener>,
    pub(super) broker_port: Option<u16>,
}

/// What the Seatbelt sandbox enforces, for the banner and the log.
pub(super) const SEATBELT_ENFORCED: &str = "a Seatbelt profile through sandbox-exec (deny by default: reads, writes and connections as the profile says); no exec guard: the PATH shims are the firewall";

/// What limits hold under Seatbelt.
pub(super) const SEATBELT_LIMITS: &str =
    "none on macOS (the profile's rlimits and memory limit are not enforced)";

impl SeatbeltSession {
    /// The network in a few words, with the broker where it listens.
    pub(super) fn net_note(&self, net: &NetPlan) -> Option<String> {
        self.broker_port.map(|port| {
            net.note_with_relay(&format!("proxy 127.0.0.1:{port} on the host's loopback"))
        })
    }
}

/// What the sandbox is planned from.
#[derive(Clone, Copy)]
struct SandboxInputs<'a> {
    /// This system's sandbox.
    kind: SandboxKind,
    /// The profile in force.
    profile: &'a Profile,
    /// The workspace.
    workspace: &'a Path,
    /// The session's directory.
    dir: &'a Path,
    /// The session file: its policy's paths, its variables, its id.
    file: &'a SessionFile,
    /// The shims' directory, first on `PATH`, when there are shims.
    shim_dir: Option<&'a Path>,
    /// The command, with the preset's arguments.
    command: &'a [String],
    /// Whether the network goes through the broker.
    broker: bool,
    /// What the agent's preset grants.
    grants: &'a aq_agents::Grants,
    /// The bridges' ports on the sandbox's loopback.
    bridge_ports: &'a [u16],
    /// Whether Landlock's refusals are read back (they are logged then).
    log_denials: bool,
    /// `--pass-fd`.
    pass_fds: &'a [i32],
    /// `[session] host_sockets`, and the ssh agent's as `$SSH_AUTH_SOCK`.
    host_sockets_named: &'a [String],
    /// The broker's interception, when it reads HTTPS requests.
    intercept: Option<&'a SessionIntercept>,
}

/// Build the spec from the profile and plan it for this system's sandbox:
/// on this host's facts (Linux), or as a Seatbelt launch (macOS).
fn plan_for(inputs: SandboxInputs<'_>) -> Result<Planned, PlanError> {
    let SandboxInputs {
        kind,
        profile,
        workspace,
        dir,
        file,
        shim_dir,
        command,
        broker,
        grants,
        bridge_ports,
        log_denials,
        pass_fds,
        host_sockets_named,
        intercept,
    } = inputs;
    let tmpdir = dir.join("tmp");
    std::fs::create_dir_all(&tmpdir).map_err(PlanError::Tmpdir)?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    // The command itself was judged already: run the real program, not its
    // shim (which would ask again about what the user typed). A missing
    // program is found out later and exits 127.
    let orig_path = host_path();
    let program = &command[0];
    let resolved = if program.contains('/') {
        PathBuf::from(program)
    } else {
        aq_shim::find_command(program.as_ref(), &orig_path, shim_dir.unwrap_or(dir))
            .unwrap_or_else(|| PathBuf::from(program))
    };
    // The broker's listener: Linux's sandbox binds it on PROXY_PORT in its
    // own network namespace and hands it out; macOS has no such namespace,
    // so it is bound here, on the host's loopback, on a port the system
    // picks.
    let broker_listener = if broker && kind == SandboxKind::Seatbelt {
        Some(
            std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
                .map_err(PlanError::BrokerListen)?,
        )
    } else {
        None
    };
    let broker_port = match &broker_listener {
        Some(l) => Some(l.local_addr().map_err(PlanError::BrokerAddr)?.port()),
        None => broker.then_some(crate::network::PROXY_PORT),
    };
    let inputs = crate::sandbox_spec::SpecInputs {
        workspace,
        home: home.as_deref(),
        sensitive: &file.policy.sensitive_paths,
        unmasked: &file.policy.unmasked_paths,
        // The credentials' variables stay outside (the broker adds
        // them); the trust variables are the session's own.
        env: std::env::vars_os()
            .filter(|(k, _)| {
                intercept.is_none_or(|i| {
                    let k = k.to_string_lossy();
                    !i.hidden.iter().any(|h| *h == k) && !i.env.iter().any(|(n, _)| *n == *k)
                })
            })
            .collect(),
        env_pass: &file.env_pass,
        session_env: session_env(
            dir,
            &file.id,
            broker_port,
            intercept.map(|i| i.env.as_slice()).unwrap_or_default(),
        ),
        path_prefix: shim_dir,
        tmpdir: Some(&tmpdir),
        loopback_listeners: broker_port
            .into_iter()
            .chain(
                grants
                    .key_proxy
                    .as_ref()
                    .map(|_| crate::agent::KEY_PROXY_PORT),
            )
            .chain(bridge_ports.iter().copied())
            .collect(),
        grants: Some(grants),
        program: Some(&resolved),
        named: command[1..]
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() && p.exists())
            .collect(),
        log_denials,
        // The supervisor's socket (a shim's line to its judge) and the
        // ones the user's policy names: the only host sockets the
        // sandbox may reach.
        allowed_sockets: std::iter::once(dir.join(aq_shim::channel::SOCKET_NAME))
            .chain(host_sockets(host_sockets_named, home.as_deref()))
            .collect(),
        pass_fds: pass_fds.to_vec(),
    };
    let mut argv: Vec<OsString> = vec![resolved.clone().into_os_string()];
    argv.extend(command[1..].iter().map(OsString::from));
    match kind {
        SandboxKind::Kernel => {
            let planned = crate::sandbox_spec::plan(profile, inputs)?;
            Ok(Planned::Kernel(PlannedSandbox {
                plan: planned.plan,
                env: planned.env,
                argv,
                notes: planned.notes,
            }))
        }
        SandboxKind::Seatbelt => {
            let cwd = std::env::current_dir().map_err(PlanError::CurrentDir)?;
            let mut profile_notes = vec![format!(
                "Session {}: profile `{}`, workspace {}.",
                file.id,
                profile.name,
                workspace.display()
            )];
            profile_notes.extend(
                broker_port
                    .map(|p| format!("The broker listens on 127.0.0.1:{p}, the host's loopback.")),
            );
            let launch = crate::seatbelt_launch::plan(
                profile,
                inputs,
                crate::seatbelt_launch::Launch {
                    command: argv,
                    cwd,
                    bridge_ports,
                    profile_notes,
                },
            )?;
            Ok(Planned::Seatbelt(SeatbeltSession {
                launch,
                broker_listener,
                broker_port,
            }))
        }
        SandboxKind::Unavailable => Err(PlanError::Kernel(aq_sandbox::SandboxError::Unsupported)),
    }
}

/// Why the sandbox could not be planned: the session stops with exit 125.
#[derive(Debug)]
enum PlanError {
    /// The session's `TMPDIR` cannot be created.
    Tmpdir(std::io::Error),
    /// The broker cannot listen on the host's loopback (macOS).
    BrokerListen(std::io::Error),
    /// The broker's listener has no address.
    BrokerAddr(std::io::Error),
    /// The current directory (where the command starts) is gone.
    CurrentDir(std::io::Error),
    /// The kernel sandbox cannot be planned on this host, or there is none.
    Kernel(aq_sandbox::SandboxError),
    /// The Seatbelt launch cannot be planned.
    Seatbelt(crate::seatbelt_launch::SeatbeltLaunchError),
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::Tmpdir(e) => write!(f, "cannot create the session's TMPDIR: {e}"),
            PlanError::BrokerListen(e) => write!(
                f,
                "cannot listen on the host's loopback for the network broker: {e}"
            ),
            PlanError::BrokerAddr(e) => write!(f, "the network broker's listener: {e}"),
            PlanError::CurrentDir(e) => write!(f, "cannot read the current directory: {e}"),
            PlanError::Kernel(e) => write!(f, "{e}"),
            PlanError::Seatbelt(e) => write!(f, "{e}"),
        }
    }
}

impl From<aq_sandbox::SandboxError> for PlanError {
    fn from(e: aq_sandbox::SandboxError) -> PlanError {
        PlanError::Kernel(e)
    }
}

impl From<crate::seatbelt_launch::SeatbeltLaunchError> for PlanError {
    fn from(e: crate::seatbelt_launch::SeatbeltLaunchError) -> PlanError {
        PlanError::Seatbelt(e)
    }
}

/// The host sockets the user's policy lets the sandbox reach: its
/// `host_sockets`, and the ssh agent's when it passes `SSH_AUTH_SOCK` on
/// (`env_pass`, which only the user's own files may set): git over SSH
/// with the user's agent, as the variable asks for.
fn sockets_named(settings: &aq_policy::SessionSettings) -> Vec<String> {
    let mut named = settings.host_sockets.clone();
    if settings.env_pass.iter().any(|v| v == "SSH_AUTH_SOCK") {
        named.push("$SSH_AUTH_SOCK".to_string());
    }
    named
}

/// `[session] host_sockets` as paths: `~/` in the home, `$VAR` the path
/// the variable holds now (unset or empty: nothing).
fn host_sockets(named: &[String], home: Option<&Path>) -> Vec<PathBuf> {
    named
        .iter()
        .filter_map(|s| {
            if let Some(var) = s.strip_prefix('$') {
                std::env::var_os(var)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            } else if let Some(rest) = s.strip_prefix("~/") {
                home.map(|h| h.join(rest))
            } else {
                Some(PathBuf::from(s))
            }
        })
        .filter(|p| p.is_absolute())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_says_what_to_do_on_this_system() {
        let linux = refusal_hint(SandboxKind::Kernel, "strict");
        assert_eq!(
            linux,
            "the `strict` profile needs this boundary, so nothing was run; `aq doctor --fix` shows how to enable it, and `--profile shims-only` runs without the kernel sandbox"
        );
        for kind in [SandboxKind::Seatbelt, SandboxKind::Unavailable] {
            let hint = refusal_hint(kind, "strict");
            assert!(!hint.contains("--fix"), "{hint}");
            assert!(!hint.contains("kernel"), "{hint}");
            assert!(
                hint.contains("`--profile shims-only` runs without"),
                "{hint}"
            );
        }
        assert!(
            refusal_hint(SandboxKind::Seatbelt, "dev")
                .contains("`aq doctor` says what this Mac offers")
        );
    }
}
