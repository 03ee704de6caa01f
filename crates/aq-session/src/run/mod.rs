//! `aq run`: a supervised session around an agent or any command.
//!
//! Setup reads as a list: resolve the workspace, load the policy and pick the
//! profile, create the session directory outside the workspace, install the
//! shims, start the supervisor (which judges what the shims ask about), plan
//! the sandbox (fail closed: exit 125 before anything runs; Linux's kernel
//! sandbox, or on macOS a Seatbelt launch from `crate::seatbelt_launch`),
//! start the log, judge the command itself (only a block stops what the user
//! typed), run the real program, in the sandbox unless the profile is
//! `shims-only`, with the shims first on `PATH` for what it starts, wait
//! (answering asks on the terminal when the command does not use it), then
//! log how it ended and return its exit code.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use aq_audit::{AuditLog, EventBody};
use aq_policy::{Decision, Engine, Profile, SummaryFormat};

use crate as session;
use crate::network::NetPlan;
use crate::refusal::{EXIT_BLOCKED, print_refusal};
use crate::supervisor::Supervisor;
use crate::{ENV_SESSION_DIR, ENV_SESSION_ID, SessionFile};

mod command;
mod sandbox;

use command::{run_child, run_sandboxed, run_seatbelt};
use sandbox::{
    Planned, SEATBELT_ENFORCED, SEATBELT_LIMITS, plan_sandbox, refusal_hint, sockets_named,
};

/// Exit code when a boundary the profile asks for cannot be set up.
pub const EXIT_SANDBOX: u8 = crate::exit::ExitCode::SandboxFailed.code();

/// What `aq run` was asked (its command line, or `aq mcp serve`'s).
#[derive(Default)]
pub struct RunOptions {
    /// The profile (default: the policy's).
    pub profile: Option<String>,
    /// The workspace (default: the git root of the current directory).
    pub workspace: Option<PathBuf>,
    /// No banner and no recap.
    pub quiet: bool,
    /// The full layer detail in the banner.
    pub verbose: bool,
    /// `--net`: the network mode.
    pub net: Option<String>,
    /// `--home`: `private` or `read-only`.
    pub home: Option<String>,
    /// Scan the workspace with `aq preflight` first.
    pub preflight: bool,
    /// `--resolve NAME:ADDR` pins for the broker.
    pub resolve: Vec<String>,
    /// `--agent`: a preset by name, or `none`.
    pub agent: Option<String>,
    /// The command to run.
    pub command: Vec<String>,
    /// `--pass-fd`: descriptors above 2 the command inherits (every other
    /// one is closed at its exec).
    pub pass_fds: Vec<i32>,
    /// Told the session's supervisor once it runs (`aq mcp serve` judges
    /// tool calls with it).
    pub on_ready: Option<Box<dyn Fn(Arc<Supervisor>)>>,
    /// Started by an `aq enable --wrap` launcher.
    pub wrapped: bool,
    /// `--learn`: asks run without waiting and are logged for
    /// `aq policy suggest` (as a profile's `mode = "learn"`).
    pub learn: bool,
}

/// `PATH` as the caller has it, without aq's own launchers (`aq enable
/// --wrap`): the program a session runs is the real one.
pub fn host_path() -> OsString {
    let path =
        std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    match crate::files::launcher_dir() {
        Some(dir) => {
            std::env::join_paths(std::env::split_paths(&path).filter(|d| *d != dir)).unwrap_or(path)
        }
        None => path,
    }
}

/// Whether this process is in a sandbox already (`no_new_privs` is set,
/// which no process can clear): a launcher then runs the agent itself,
/// since a sandbox cannot nest. An environment variable cannot fake it.
fn inside_a_sandbox() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("NoNewPrivs:") && l.trim_end().ends_with('1'))
    })
}

/// Runs a session to its end; the command's exit code, or 125, 126, 127.
pub fn run(args: &RunOptions, policy_flag: Option<&Path>) -> Result<ExitCode, String> {
    if args.wrapped && inside_a_sandbox() {
        use std::os::unix::process::CommandExt;
        let program = &args.command[0];
        let real =
            aq_shim::find_real_program(program.as_ref(), &host_path(), Path::new("/nonexistent"))
                .ok_or_else(|| format!("{program}: command not found"))?;
        let err = std::process::Command::new(real)
            .arg0(program)
            .args(&args.command[1..])
            .exec();
        return Err(format!("cannot start {program}: {err}"));
    }
    let started = Instant::now();
    let now = SystemTime::now();
    let kind = SandboxKind::here();
    let workspace = resolve_workspace(args.workspace.as_deref())?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .and_then(|h| std::fs::canonicalize(h).ok());
    crate::workspace::check(
        &workspace,
        home.as_deref(),
        &crate::workspace::protected_places(),
    )
    .map_err(|e| format!("refused: {e}"))?;
    let loaded = crate::policy_files::load_for(&workspace, policy_flag)?;
    loaded.warn_ignored();
    // `[audit] export` to OTLP with headers from the environment that do
    // not parse: stop before anything starts rather than ship without the
    // collector's key (it would refuse every event).
    if loaded
        .effective
        .audit_export
        .iter()
        .any(|t| t.format == aq_policy::ExportFormat::Otlp)
    {
        aq_export::otel_env::headers_from_env().map_err(|e| format!("[audit] export: {e}"))?;
    }
    let settings = loaded.effective.session_settings();
    let mut policy = loaded.effective.policy.clone();
    let chosen = crate::agent::choose(
        &loaded.effective.agents,
        args.agent.as_deref(),
        &args.command,
    )?;
    let caller_env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let home_dir = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    // Where the user pointed the agent at its model, and how each endpoint
    // is reached from inside: loopback through a bridge, the rest through
    // the broker (as hosts of the agent's).
    let endpoints = chosen
        .as_ref()
        .map(|c| {
            aq_agents::endpoints::find(
                &c.preset,
                home_dir.as_deref(),
                &caller_env,
                &args.command[c.args_at.min(args.command.len())..],
            )
        })
        .unwrap_or_default();
    let mut routes = crate::model_routes::plan(
        &endpoints.endpoints,
        &[crate::network::PROXY_PORT, crate::agent::KEY_PROXY_PORT],
    );
    routes.lines.extend(endpoints.refused.iter().cloned());
    let with_endpoint_hosts = chosen.as_ref().map(|c| {
        let mut p = c.preset.clone();
        for h in &routes.broker_hosts {
            if !p.hosts.contains(h) {
                p.hosts.push(h.clone());
            }
        }
        p
    });
    // The profile and network in force: what `aq policy show` shows.
    let crate::in_force::InForce {
        mut profile, net, ..
    } = crate::in_force::session(
        &loaded.effective,
        &crate::in_force::Asked {
            profile: args.profile.as_deref(),
            home: args.home.as_deref(),
            net: args.net.as_deref(),
            resolve: &args.resolve,
            agent: with_endpoint_hosts.as_ref(),
        },
    )?;
    // Names pinned by `--resolve` and `[network] resolve`: the key proxy
    // and the bridges honour them as the broker does.
    let pins = crate::network::pins(&args.resolve, &loaded.effective.network)?;
    if args.learn {
        profile.mode = aq_policy::SessionMode::Learn;
    }
    let learning = profile.mode == aq_policy::SessionMode::Learn;
    if learning {
        aq_policy::managed::check_learn(&loaded.effective)?;
    }
    let profile_name = profile.name.clone();
    let headless = profile.summary == SummaryFormat::Json;
    let net_note = net.note();

    // The key proxy needs a network namespace of the sandbox's own to
    // listen in: network off, or only the broker.
    let key_proxy_port = (profile.sandbox && matches!(net, NetPlan::Off | NetPlan::Broker { .. }))
        .then_some(crate::agent::KEY_PROXY_PORT);
    // Bridges need the sandbox's own network namespace, as the key proxy.
    let bridges: Vec<crate::model_routes::Bridge> = if key_proxy_port.is_some() {
        routes.bridges.clone()
    } else {
        Vec::new()
    };

    let id = session::new_id(now);
    let dir = session::create_dir(&id)
        .map_err(|e| format!("cannot create the session directory: {e}"))?;
    let grants = chosen
        .as_ref()
        .map(|c| {
            aq_agents::grant(
                &c.preset,
                &aq_agents::GrantInputs {
                    home: home_dir.as_deref(),
                    workspace: &workspace,
                    env: &caller_env,
                    key_proxy_port,
                    shadow_dir: profile.sandbox.then(|| dir.join("shadow")).as_deref(),
                    endpoints: &endpoints,
                },
            )
        })
        .unwrap_or_default();
    // What the preset makes writable is the agent's for the engine too.
    policy.agent_state = grants
        .writable
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let command = crate::agent::with_args(&args.command, chosen.as_ref(), &grants);
    let shim_dir = dir.join("shims");
    let aq_exe = std::env::current_exe().map_err(|e| format!("cannot find the aq binary: {e}"))?;
    // Under the exec guard every exec is judged already: shims would only
    // double each command's cost (and break agents that re-exec `node`).
    // Without it, a shim for each program that exists on this machine.
    let guarded = exec_guard_in_force(&profile, kind);
    let shims = if guarded {
        Vec::new()
    } else {
        let host_path = std::env::var_os("PATH").unwrap_or_default();
        // The built-in names only where the program exists (a `zsh` shim
        // where no zsh is installed makes agents pick a shell that fails);
        // the policy's own names always.
        let names: Vec<&str> =
            aq_shim::programs_present(aq_shim::DEFAULT_SHIMS, &host_path, &shim_dir)
                .into_iter()
                .chain(settings.extra_shims.iter().map(String::as_str))
                .collect();
        aq_shim::install_shims(&shim_dir, &aq_shim::entry::shim_target(&aq_exe), names)
            .map_err(|e| format!("cannot install shims: {e}"))?
    };
    aq_shim::approvals::Queue::new(&dir)
        .create()
        .map_err(|e| format!("cannot create the approval queue: {e}"))?;

    let network_allow = net.allowed();
    let mut grants_record =
        crate::agent::record(chosen.as_ref().map(|c| &c.preset), &grants, &network_allow);
    // With the host's network (no namespace of the sandbox's own) every
    // endpoint is reached as it is outside: nothing to say.
    if key_proxy_port.is_some() {
        grants_record.model_endpoints = routes.lines.clone();
    }
    // The digest covers all the session was allowed, not only the rules.
    let policy_json = serde_json::to_vec(&(
        &policy,
        &profile,
        chosen.as_ref().map(|c| &c.preset),
        &grants_record,
        net_note.as_str(),
        &settings.trusted_exec,
    ))
    .map_err(|e| e.to_string())?;
    let policy_digest = crate::policy_files::digest(&policy_json);
    let file = SessionFile {
        id: id.clone(),
        workspace: workspace.clone(),
        profile: profile_name.clone(),
        supervisor_pid: std::process::id(),
        started: session::now_rfc3339(),
        command: args.command.clone(),
        shim_dir: shim_dir.clone(),
        approval_timeout_secs: settings.approval_timeout_secs,
        unanswered: settings.unanswered,
        env_pass: settings.env_pass.clone(),
        policy,
        policy_digest: policy_digest.clone(),
        wait_for_approver: settings.wait_for_approver,
        trusted_exec: settings.trusted_exec.clone(),
    };
    session::write_file(&dir, &file).map_err(|e| format!("cannot write the session file: {e}"))?;
    let log_path = session::log_path(&dir);
    let log = AuditLog::open(&log_path)
        .map_err(|e| format!("cannot open the audit log {}: {e}", log_path.display()))?;
    // `[audit] export`: each target follows this log from its first line.
    let shippers: Vec<aq_export::Shipper> = loaded
        .effective
        .audit_export
        .iter()
        .map(|target| aq_export::Shipper::start(target, &log_path))
        .collect();
    let health = std::sync::Arc::new(crate::supervisor::LogHealth::default());
    // The workspace's checkpoints: the first is taken while the sandbox is
    // set up, and waited for before the command starts.
    let (checkpoints, start_checkpoint) = match crate::checkpoints::Checkpoints::open(
        &loaded.effective.undo,
        &workspace,
        &id,
    ) {
        Ok(c) => {
            let c = Arc::new(c);
            let first = c.clone();
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(first.first());
            });
            (Some(c), Some(rx))
        }
        Err(None) => (None, None),
        // Checkpoints the managed policy requires, that cannot be kept:
        // nothing runs that could not be undone.
        Err(Some(why))
            if loaded
                .effective
                .managed
                .as_ref()
                .is_some_and(|m| m.settings.require_checkpoints) =>
        {
            return Err(format!(
                "checkpoints cannot be kept ({why}), and the managed policy {} requires them ([managed] require-checkpoints); nothing was run",
                loaded
                    .effective
                    .managed
                    .as_ref()
                    .map(|m| m.file.as_str())
                    .unwrap_or_default()
            ));
        }
        Err(Some(why)) => {
            let (tx, rx) = std::sync::mpsc::channel();
            let _ = tx.send(crate::checkpoints::event(
                aq_undo::Reason::SessionStart,
                None,
                &Err(aq_undo::Error(why)),
            ));
            (None, Some(rx))
        }
    };
    let listener = aq_shim::channel::bind(&dir)
        .map_err(|e| format!("cannot open the supervisor socket: {e}"))?;
    let supervisor = std::sync::Arc::new(crate::supervisor::Supervisor {
        engine: Engine::new(file.policy.clone()),
        file: file.clone(),
        log: AuditLog::open(&log_path)
            .map_err(|e| format!("cannot open the audit log {}: {e}", log_path.display()))?,
        queue: aq_shim::approvals::Queue::new(&dir),
        headless,
        mode: profile.mode,
        shim_allowed: Default::default(),
        exec_guarded: guarded,
        verdicts: Default::default(),
        prompting: Default::default(),
        writer: crate::supervisor::LogWriter::start(&log_path, id.clone(), health.clone())
            .map_err(|e| format!("cannot open the audit log {}: {e}", log_path.display()))?,
        health: health.clone(),
        home: std::env::var("HOME").ok(),
        command_pid: Default::default(),
        checkpoints: checkpoints.clone(),
    });
    // As root, with the kernel's audit on: Landlock's refusals are read back.
    let denials = if profile.sandbox && guarded {
        crate::denials::DenialWatch::start(supervisor.clone())
    } else {
        None
    };
    crate::supervisor::spawn(listener, supervisor.clone());
    if let Some(ready) = &args.on_ready {
        ready(supervisor.clone());
    }

    // Git files the user's next `git status` would run a program from:
    // read-only in the sandbox where they exist, checked at the end.
    let git_guard = crate::git_guard::GitGuard::start(&workspace, &dir);
    profile.read_only.extend(git_guard.read_only());

    // The hosts whose HTTPS requests the broker reads (HTTP rules,
    // credentials kept outside): a credential that cannot be read stops the
    // session before anything runs.
    let intercept = match &net {
        NetPlan::Broker { .. } => {
            match crate::net_intercept::prepare(&loaded.effective.network, &dir, supervisor.clone())
            {
                Ok(i) => i,
                Err(e) => {
                    eprintln!("aq: {e}");
                    return Ok(ExitCode::from(EXIT_SANDBOX));
                }
            }
        }
        _ => None,
    };

    // Plan the sandbox before anything runs: a boundary that cannot be set
    // up stops the session here (exit 125), never a silent downgrade.
    let mut sandbox = if profile.sandbox {
        match plan_sandbox(
            kind,
            &profile,
            &workspace,
            &dir,
            &file,
            (!shims.is_empty()).then_some(shim_dir.as_path()),
            &command,
            matches!(net, NetPlan::Broker { .. }),
            &grants,
            &bridges.iter().map(|b| b.port).collect::<Vec<_>>(),
            denials.is_some(),
            &args.pass_fds,
            &sockets_named(&settings),
            intercept.as_ref(),
        ) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("aq: {e}");
                eprintln!("aq: {}", refusal_hint(kind, &profile_name));
                return Ok(ExitCode::from(EXIT_SANDBOX));
            }
        }
    } else {
        None
    };
    let mut layers = Vec::new();
    // The managed policy, and what it refused of the files below (logged
    // as well as printed: an attempt to loosen it is on the record).
    if let Some(m) = &loaded.effective.managed {
        layers.push(format!("managed policy {}", m.file));
    }
    for r in &loaded.refused_managed {
        layers.push(format!("refused by the managed policy: {r}"));
    }
    if !shims.is_empty() {
        layers.push(format!("shims ({})", shims.len()));
    }
    if let Some(c) = &chosen {
        layers.push(format!("agent preset {}", c.preset.name));
    }
    // On macOS the broker's port is the one the host's loopback gave it.
    let net_note = match &sandbox {
        Some(Planned::Seatbelt(s)) => s.net_note(&net).unwrap_or(net_note),
        _ => net_note,
    };
    match &sandbox {
        Some(Planned::Kernel(s)) => {
            layers.push(format!("kernel sandbox: {}", s.plan.enforced()));
            layers.push(format!("network {net_note}"));
            layers.push(format!("limits: {}", limits_note(&profile, &s.plan)));
        }
        Some(Planned::Seatbelt(_)) => {
            layers.push(format!("seatbelt sandbox: {SEATBELT_ENFORCED}"));
            layers.push(format!("network {net_note}"));
            layers.push(format!("limits: {SEATBELT_LIMITS}"));
        }
        None => {}
    }
    let started_logged = log.append(
        EventBody::SessionStart {
            aq_version: env!("CARGO_PKG_VERSION").to_string(),
            workspace: workspace.display().to_string(),
            profile: profile_name.clone(),
            policy_digest,
            command: args.command.clone(),
            pid: std::process::id(),
            layers,
            grants: Some(grants_record.clone()),
            mode: learning.then(|| profile.mode.as_str().to_string()),
        },
        session::now_rfc3339(),
        &id,
    );
    if let Err(e) = started_logged {
        // Nothing runs that the log would not record.
        eprintln!("aq: cannot write the audit log: {e}; nothing was run");
        return Ok(ExitCode::from(EXIT_SANDBOX));
    }
    let unanswered_word = if settings.unanswered == Decision::Allow {
        "run"
    } else {
        "are denied"
    };
    let asks_note = if learning {
        "learn mode: asks run without waiting and are logged; `aq policy suggest` turns them into lines".to_string()
    } else if headless {
        format!("headless: asks are not waited for (unanswered asks {unanswered_word})")
    } else if settings.wait_for_approver {
        format!(
            "answer asks with `aq approve` in another terminal (each waits up to {}s)",
            settings.approval_timeout_secs
        )
    } else {
        format!(
            "asks wait for `aq approve` (in another terminal) or this terminal when free; with neither, unanswered asks {unanswered_word} at once"
        )
    };
    if !args.quiet && !args.verbose {
        // One line: what confines the session, in a few words; `-v` has it all.
        let mut what = Vec::new();
        what.push(if guarded {
            "exec guard".to_string()
        } else {
            format!("{} shims", shims.len())
        });
        if profile.sandbox {
            what.push(match kind {
                SandboxKind::Seatbelt => "seatbelt sandbox".to_string(),
                _ => "kernel sandbox".to_string(),
            });
            if profile.home == aq_policy::HomeAccess::Private {
                what.push("private home".to_string());
            }
        } else {
            what.push("no kernel sandbox".to_string());
        }
        if let Some(c) = &chosen {
            what.push(format!("agent preset {}", c.preset.name));
        }
        if learning {
            what.push("learn mode: asks run, logged for `aq policy suggest`".to_string());
        }
        let net = net_note.split(':').next().unwrap_or(&net_note).to_string();
        eprintln!(
            "aq: session {id} · {profile_name}: {} · network {net} · log {} (-v: the details)",
            what.join(", "),
            log_path.display()
        );
    }
    if args.verbose {
        eprintln!(
            "aq: session {id} · profile {profile_name} · command firewall on ({}) · workspace {}",
            if guarded {
                "every exec judged by the exec guard".to_string()
            } else {
                format!("{} shims", shims.len())
            },
            workspace.display()
        );
        if let Some(c) = &chosen {
            for line in crate::agent::banner(c, &grants) {
                eprintln!("aq: {line}");
            }
            for line in &grants_record.model_endpoints {
                eprintln!("aq: model endpoint {line}");
            }
        }
        match &sandbox {
            Some(Planned::Kernel(s)) => {
                eprintln!("aq: sandbox: {}", s.plan.enforced());
                eprintln!("aq: limits: {}", limits_note(&profile, &s.plan));
                eprintln!("aq: network {net_note}");
                for note in &s.notes {
                    eprintln!("aq: note: {note}");
                }
            }
            Some(Planned::Seatbelt(s)) => {
                eprintln!("aq: sandbox: {SEATBELT_ENFORCED}");
                eprintln!("aq: limits: {SEATBELT_LIMITS}");
                eprintln!("aq: network {net_note}");
                for note in &s.launch.notes {
                    eprintln!("aq: note: {note}");
                }
            }
            None => {}
        }
        if checkpoints.is_some() {
            eprintln!("aq: checkpoints of the workspace: on (`aq undo` goes back)");
        }
        eprintln!("aq: log {} · {}", log_path.display(), asks_note);
    }

    if args.preflight || settings.preflight {
        preflight(&workspace, &log, &id, args.quiet);
    }
    if let Some(rx) = start_checkpoint {
        wait_for_first_checkpoint(&rx, started, args.quiet || headless, &log, &id);
    }
    if let Some(e) = checkpoints.as_ref().and_then(|c| c.watch_error())
        && !args.quiet
    {
        eprintln!(
            "aq: note: checkpoints of the workspace are on, but changes cannot be watched ({e}): each checkpoint walks the whole workspace"
        );
    }

    // The command itself: the user typed it, so only a block stops it.
    let engine = Engine::new(file.policy.clone());
    // An agent the user starts with its own approvals off (`aq run --
    // claude --dangerously-skip-permissions`) is the user's choice: aq's
    // sandbox and exec guard are what it asks for. Inside, the rule stands.
    let verdict = engine
        .evaluate_argv(&args.command)
        .without_rule(aq_policy::RuleId::GuardAgentBypass.as_str());
    let top = verdict.deciding_rule();
    // Starting an agent the preset knows is what the user asked for: an
    // ask (an unknown program) is not one; a block still is.
    let started_agent = chosen.is_some() && verdict.decision == Decision::Ask;
    session::log_event(
        &log,
        &id,
        EventBody::CommandDecision {
            argv: args.command.clone(),
            cwd: std::env::current_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            pid: std::process::id(),
            ppid: 0,
            decision: if started_agent {
                Decision::Allow
            } else {
                verdict.decision
            }
            .as_str()
            .to_string(),
            rules: if started_agent {
                vec!["agent-preset".to_string()]
            } else {
                verdict.rules.iter().map(|r| r.id.clone()).collect()
            },
            why: match &chosen {
                Some(c) if started_agent => Some(format!(
                    "the user started the {} agent (preset `{}`)",
                    c.preset.title, c.preset.name
                )),
                _ => top.map(|r| r.why.clone()),
            },
            safer: top.and_then(|r| r.safer.clone()).filter(|_| !started_agent),
            source: "run".to_string(),
            exe: None,
            found: top
                .map(|r| r.evidence.clone())
                .filter(|e| !e.is_empty() && !started_agent),
            identity: None,
        },
    );
    if verdict.decision == Decision::Ask && !started_agent {
        // The user typed this command: that is the approval.
        session::log_event(
            &log,
            &id,
            EventBody::Approval {
                request: "command".to_string(),
                argv: args.command.clone(),
                answer: "once".to_string(),
                by: "the user, who typed it after `aq run --`".to_string(),
            },
        );
    }
    let exit = if verdict.decision == Decision::Block {
        print_refusal("blocked", &args.command, &verdict);
        Exit::Code(i32::from(EXIT_BLOCKED))
    } else {
        let prompter = (!headless && !learning && !std::io::stdin().is_terminal())
            .then(|| crate::answerer::spawn_tty_prompter(dir.to_path_buf()))
            .flatten();
        if prompter.is_some() {
            supervisor
                .prompting
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let exit = match &mut sandbox {
            Some(Planned::Kernel(s)) => {
                let (broker, broker_sink) = match net {
                    NetPlan::Broker {
                        allowlist,
                        unlisted,
                        ..
                    } => {
                        let (b, sink) = crate::network::SessionBroker::start(
                            allowlist,
                            supervisor.clone(),
                            unlisted,
                            intercept.as_ref().map(|i| i.intercept.clone()),
                        );
                        (Some(b), Some(sink))
                    }
                    _ => (None, None),
                };
                // The listeners come out in the order of their ports in the
                // spec: the broker's first, then the key proxy's, then the
                // bridges'.
                let served: Arc<Mutex<Vec<aq_net::KeyProxy>>> = Default::default();
                let key_proxy = served.clone();
                let sink: Option<aq_sandbox::ListenerSink> =
                    if grants.key_proxy.is_none() && bridges.is_empty() {
                        broker_sink
                    } else {
                        let slot = served.clone();
                        let sup = supervisor.clone();
                        let plan = grants.key_proxy.clone();
                        let bridges = bridges.clone();
                        let pins = pins.clone();
                        let agent = chosen
                            .as_ref()
                            .map(|c| c.preset.name.clone())
                            .unwrap_or_default();
                        Some(Box::new(move |mut fds: Vec<std::os::fd::OwnedFd>| {
                            let at = fds.len().saturating_sub(bridges.len());
                            let bridge_fds = fds.split_off(at);
                            let mut started = Vec::new();
                            for (fd, bridge) in bridge_fds.into_iter().zip(&bridges) {
                                started.extend(crate::agent::serve_bridge(
                                    fd,
                                    bridge,
                                    plan.as_ref().filter(|_| bridge.api),
                                    &pins,
                                    sup.clone(),
                                ));
                            }
                            if let Some(plan) = &plan
                                && let Some(fd) = fds.pop()
                            {
                                started.extend(crate::agent::serve_key_proxy(
                                    fd,
                                    plan,
                                    &agent,
                                    &pins,
                                    sup.clone(),
                                ));
                            }
                            if let Ok(mut slot) = slot.lock() {
                                slot.extend(started);
                            }
                            if let Some(b) = broker_sink {
                                b(fds);
                            }
                        }))
                    };
                // What only the agent may hold: the profile's secret-looking
                // `env` and the keys passed to it.
                let scrub: Vec<String> = profile
                    .env
                    .iter()
                    .filter(|n| aq_knowledge::secret_names::is_secret_env_name(n))
                    .chain(&grants.keys_passed)
                    .cloned()
                    .collect();
                let exit = run_sandboxed(
                    s,
                    &supervisor,
                    sink,
                    chosen.as_ref().map(|c| &c.preset),
                    &scrub,
                );
                // Close what is still open, so its connection is logged
                // before the session ends.
                if let Some(b) = broker {
                    b.stop();
                }
                drop(key_proxy);
                exit
            }
            Some(Planned::Seatbelt(s)) => {
                // The broker serves the listener bound on the host's
                // loopback when the launch was planned, as it serves the
                // one the Linux sandbox hands out.
                let broker = match (net, s.broker_listener.take()) {
                    (
                        NetPlan::Broker {
                            allowlist,
                            unlisted,
                            ..
                        },
                        Some(listener),
                    ) => {
                        let (b, sink) = crate::network::SessionBroker::start(
                            allowlist,
                            supervisor.clone(),
                            unlisted,
                            intercept.as_ref().map(|i| i.intercept.clone()),
                        );
                        sink(vec![std::os::fd::OwnedFd::from(listener)]);
                        Some(b)
                    }
                    _ => None,
                };
                let exit = run_seatbelt(&s.launch);
                if let Some(b) = broker {
                    b.stop();
                }
                exit
            }
            None => run_child(&command, &dir, &file, &shim_dir),
        };
        drop(prompter);
        exit
    };

    if let Some(d) = denials {
        d.stop();
    }
    if let Some(c) = &checkpoints {
        if let Some(event) = c.take(aq_undo::Reason::SessionEnd, None) {
            session::log_event(&log, &id, event);
        }
        c.prune_now_and_then();
    }
    supervisor.flush_log();
    git_guard.finish(&log, &id, args.quiet || headless);
    for shadow in &grants.shadows {
        if let Err(e) = aq_agents::shadow::write_back(shadow) {
            eprintln!("aq: {e}");
        }
    }
    let duration_ms = started.elapsed().as_millis() as u64;
    let (exit_code, signal) = match exit {
        Exit::Code(c) => (Some(c), None),
        Exit::Signal(s) => (None, Some(s)),
    };
    session::log_event(
        &log,
        &id,
        EventBody::CommandExit {
            argv: args.command.clone(),
            exit_code,
            signal,
            duration_ms,
        },
    );
    session::log_event(
        &log,
        &id,
        EventBody::SessionEnd {
            exit_code,
            duration_ms,
        },
    );
    for shipped in aq_export::ship::finish_all(shippers, aq_export::ship::FLUSH_DEADLINE) {
        session::log_event(
            &log,
            &id,
            EventBody::Export {
                target: shipped.target.to_string(),
                sent: shipped.sent,
                dropped: shipped.dropped,
                error: shipped.error,
            },
        );
    }
    if let Ok(f) = std::fs::File::open(&log_path)
        && let Ok(summary) = aq_audit::Summary::from_reader(std::io::BufReader::new(f))
    {
        if profile.summary == SummaryFormat::Json {
            match summary.to_json() {
                Ok(json) => println!("{json}"),
                Err(e) => eprintln!("aq: cannot write the JSON summary: {e}"),
            }
        } else if !args.quiet {
            eprint!("{}", summary.recap());
        }
    }
    if health.failed() {
        eprintln!(
            "aq: session {id} ended because its audit log could not be written (exit {EXIT_SANDBOX}); `aq audit verify {id}` shows where"
        );
        return Ok(ExitCode::from(EXIT_SANDBOX));
    }
    let code = match (exit_code, signal) {
        (Some(c), _) => c.clamp(0, 255) as u8,
        (None, Some(s)) => (128 + s).clamp(0, 255) as u8,
        _ => 1,
    };
    Ok(ExitCode::from(code))
}

pub(super) enum Exit {
    Code(i32),
    Signal(i32),
}

/// Waits for the session's first checkpoint (taken while the sandbox was
/// set up) and logs it; past a second, says why the start takes a moment.
fn wait_for_first_checkpoint(
    rx: &std::sync::mpsc::Receiver<Option<EventBody>>,
    started: Instant,
    quiet: bool,
    log: &AuditLog,
    id: &str,
) {
    let patience = Duration::from_secs(1).saturating_sub(started.elapsed());
    let got = match rx.recv_timeout(patience) {
        Ok(e) => Some(e),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            if !quiet {
                eprintln!(
                    "aq: taking the workspace's first checkpoint (for `aq undo`); later sessions only look at what changed…"
                );
            }
            rx.recv().ok()
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => None,
    };
    if let Some(Some(event)) = got {
        if let EventBody::Checkpoint { error: Some(e), .. } = &event {
            eprintln!(
                "aq: warning: no checkpoint of the workspace at the start of this session: {e}"
            );
        }
        session::log_event(log, id, event);
    }
}

/// The sandbox `aq run` gives a profile with `sandbox = true` on this
/// system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SandboxKind {
    /// Linux: namespaces, mounts, Landlock, seccomp and the exec guard.
    Kernel,
    /// macOS: a Seatbelt profile through `sandbox-exec`, with the PATH
    /// shims as the firewall (no exec guard).
    Seatbelt,
    /// None: such a profile stops before anything runs (exit 125), and
    /// the command is never run unconfined.
    Unavailable,
}

impl SandboxKind {
    /// The sandbox of the system called `os` (as `std::env::consts::OS`
    /// names it).
    pub fn of(os: &str) -> SandboxKind {
        match os {
            "linux" => SandboxKind::Kernel,
            "macos" => SandboxKind::Seatbelt,
            _ => SandboxKind::Unavailable,
        }
    }

    /// The sandbox of this system.
    pub fn here() -> SandboxKind {
        SandboxKind::of(std::env::consts::OS)
    }
}

/// Whether every exec is judged by the exec guard: only Linux's kernel
/// sandbox has one. Elsewhere the shims are installed even for a profile
/// that asks for the guard, since they are then the only firewall.
fn exec_guard_in_force(profile: &Profile, kind: SandboxKind) -> bool {
    kind == SandboxKind::Kernel && profile.sandbox && profile.exec_guard
}

/// The session's variables (`AQ_SESSION_DIR`, `AQ_SESSION_ID`), the
/// proxy variables of the broker on `127.0.0.1:broker_port` when the
/// network goes through it, then the interception's: what the sandbox's
/// environment gets after its scrub.
pub(crate) fn session_env(
    dir: &Path,
    id: &str,
    broker_port: Option<u16>,
    intercept: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)> {
    [
        (ENV_SESSION_DIR.into(), dir.as_os_str().to_owned()),
        (ENV_SESSION_ID.into(), OsString::from(id)),
    ]
    .into_iter()
    .chain(
        broker_port
            .map(crate::network::proxy_env)
            .unwrap_or_default(),
    )
    .chain(intercept.iter().cloned())
    .collect()
}

/// `aq preflight` on the workspace before the agent touches it: each finding
/// goes into the session log, and a summary line to stderr. It informs; it
/// does not stop the session.
fn preflight(workspace: &Path, log: &AuditLog, id: &str, quiet: bool) {
    let options = aq_preflight::Options {
        progress: None,
        home: std::env::var_os("HOME").map(PathBuf::from),
        engine: Engine::default(),
    };
    let report = match aq_preflight::scan(workspace, &options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("aq: preflight could not scan the workspace: {e}");
            return;
        }
    };
    for f in &report.findings {
        session::log_event(
            log,
            id,
            EventBody::PreflightFinding {
                id: f.id.to_string(),
                severity: f.severity.as_str().to_string(),
                path: f.path.clone(),
                line: f.line,
                title: f.title.clone(),
            },
        );
    }
    let [low, medium, high, critical] = report.counts();
    if !quiet || high + critical > 0 {
        eprintln!(
            "aq: preflight: {} findings in {} files ({critical} critical, {high} high, {medium} medium, {low} low){}",
            report.findings.len(),
            report.files,
            if report.findings.is_empty() {
                String::new()
            } else {
                format!("; `aq preflight {}` shows them", workspace.display())
            }
        );
    }
}

/// What limits hold, said plainly: the rlimits, then what the plan says of
/// the cgroup (its memory and pids limits, or why there are only rlimits).
fn limits_note(profile: &Profile, plan: &aq_sandbox::SandboxPlan) -> String {
    let set: Vec<String> = profile
        .limits
        .entries()
        .iter()
        .filter(|(k, _)| *k != "memory_mb")
        .filter_map(|(k, v)| v.map(|v| format!("{k} {v}")))
        .collect();
    format!(
        "rlimits ({}); {}",
        if set.is_empty() {
            "none".to_string()
        } else {
            set.join(", ")
        },
        plan.enforced()
            .cgroup
            .to_string()
            .trim_start_matches("limits: ")
    )
}

/// The workspace: the flag, else the git root of the current directory, else
/// the current directory.
pub fn resolve_workspace(flag: Option<&Path>) -> Result<PathBuf, String> {
    let dir = match flag {
        Some(d) => d.to_path_buf(),
        None => {
            let cwd = std::env::current_dir()
                .map_err(|e| format!("cannot read the current directory: {e}"))?;
            crate::policy_files::workspace_root(&cwd)
        }
    };
    std::fs::canonicalize(&dir).map_err(|e| format!("workspace {}: {e}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_system_has_its_sandbox() {
        assert_eq!(SandboxKind::of("linux"), SandboxKind::Kernel);
        assert_eq!(SandboxKind::of("macos"), SandboxKind::Seatbelt);
        for other in ["freebsd", "openbsd", "windows", "ios"] {
            assert_eq!(SandboxKind::of(other), SandboxKind::Unavailable, "{other}");
        }
        assert_eq!(SandboxKind::here(), SandboxKind::of(std::env::consts::OS));
    }

    #[test]
    fn only_the_kernel_sandbox_drops_the_shims_for_the_exec_guard() {
        let strict = Profile::builtin("strict").unwrap();
        assert!(strict.sandbox && strict.exec_guard);
        assert!(exec_guard_in_force(&strict, SandboxKind::Kernel));
        assert!(!exec_guard_in_force(&strict, SandboxKind::Seatbelt));
        assert!(!exec_guard_in_force(&strict, SandboxKind::Unavailable));
        let shims = Profile::builtin("shims-only").unwrap();
        assert!(!exec_guard_in_force(&shims, SandboxKind::Kernel));
    }

    #[test]
    fn the_session_variables_come_first_then_the_brokers_on_its_port() {
        let dir = Path::new("/state/sessions/S");
        let names = |env: &[(OsString, OsString)]| -> Vec<String> {
            env.iter()
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect()
        };
        let plain = session_env(dir, "S", None, &[]);
        assert_eq!(names(&plain), ["AQ_SESSION_DIR", "AQ_SESSION_ID"]);
        let extra = [(OsString::from("SSL_CERT_FILE"), OsString::from("/s/ca.pem"))];
        let linux = session_env(dir, "S", Some(crate::network::PROXY_PORT), &extra);
        let mut want = plain.clone();
        want.extend(crate::network::proxy_env(crate::network::PROXY_PORT));
        want.extend(extra.iter().cloned());
        assert_eq!(linux, want);
        let get = |env: &[(OsString, OsString)], n: &str| {
            env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())
        };
        assert_eq!(
            get(&linux, "HTTPS_PROXY"),
            Some("http://127.0.0.1:3128".into())
        );
        let mac = session_env(dir, "S", Some(50_123), &[]);
        assert_eq!(
            get(&mac, "HTTPS_PROXY"),
            Some("http://127.0.0.1:50123".into())
        );
        assert_eq!(
            get(&mac, "ALL_PROXY"),
            Some("socks5h://127.0.0.1:50123".into())
        );
    }
}
