//! Wrappers: programs whose job is to run another program or a shell string
//! (`sudo`, `env`, `xargs`, `sh -c`, `eval`, `find -exec`, `ssh host CMD` ...).
//! Each entry knows which of its options take a value, so the command it
//! runs is found where the wrapper itself would find it.

use crate::model::{Command, Input, Word};

/// What a wrapper runs.
pub(crate) enum Inner {
    /// A program with its arguments.
    Argv {
        label: String,
        argv: Vec<Word>,
        privileged: bool,
        keeps_stdin: bool,
    },
    /// A shell string to parse and walk.
    Script {
        label: String,
        script: String,
        privileged: bool,
        /// Whether the nested script's commands inherit the wrapper's stdin.
        stdin_script: bool,
        /// `sh -c SCRIPT NAME ARGS…`: the script's `$0` and positional
        /// parameters (`$1`, `"$@"`), when every one of them is literal.
        positional: Option<Vec<Word>>,
    },
}

/// Shells that take `-c STRING` or read a script from stdin or a file.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "rbash", "tcsh", "csh",
    // Oil's shells, OpenBSD's ksh, and shells whose simple commands read
    // as bash's (elvish, xonsh, nushell).
    "osh", "ysh", "oksh", "loksh", "posh", "elvish", "xonsh", "nu",
];

/// Option spelling of a wrapper: which short and long options take a value.
struct Opts<'a> {
    short_value: &'a str,
    long_value: &'a [&'a str],
}

impl<'a> Opts<'a> {
    const fn new(short_value: &'a str, long_value: &'a [&'a str]) -> Self {
        Opts {
            short_value,
            long_value,
        }
    }

    /// Index (into `args`) of the first operand, after options and `--`.
    fn first_operand(&self, args: &[Word]) -> usize {
        let mut i = 0;
        while i < args.len() {
            let a = args[i].text.as_str();
            if a == "--" {
                return i + 1;
            }
            if let Some(long) = a.strip_prefix("--") {
                if !long.contains('=') && self.long_value.contains(&long) {
                    i += 1;
                }
                i += 1;
                continue;
            }
            if a.len() > 1 && a.starts_with('-') {
                let cluster: Vec<char> = a[1..].chars().collect();
                for (k, c) in cluster.iter().enumerate() {
                    if self.short_value.contains(*c) {
                        if k + 1 == cluster.len() {
                            i += 1;
                        }
                        break;
                    }
                }
                i += 1;
                continue;
            }
            return i;
        }
        args.len()
    }
}

/// Lists what `command` runs, if it is a wrapper.
///
/// This is the table of wrappers: one arm per program, naming how that
/// program is read. Families with more than an option list to skip are read
/// by their own `unwrap_*` function, so each reading can be followed (and
/// tested) on its own.
pub(crate) fn unwrap(command: &Command) -> Vec<Inner> {
    let Some(name) = command.program() else {
        return Vec::new();
    };
    let args = command.args();
    let no_opts = Opts::new("", &[]);
    match name {
        "env" => unwrap_env(args),
        "sudo" => argv_after_options("sudo", args, &SUDO_OPTS, 0, true),
        "doas" => argv_after_options("doas", args, &Opts::new("uC", &[]), 0, true),
        "pkexec" => argv_after_options("pkexec", args, &Opts::new("", &["user"]), 0, true),
        "run0" => argv_after_options("run0", args, &RUN0_OPTS, 0, true),
        "runuser" => unwrap_runuser(args),
        "su" => unwrap_su(args),
        "command" => unwrap_command_builtin(args),
        "builtin" | "nohup" | "exec" | "setsid" | "stdbuf" | "ionice" | "nice" | "time"
        | "chrt" | "taskset" | "setarch" | "logsave" | "unbuffer" | "caffeinate"
        | "systemd-run" | "firejail" | "proot" | "fakeroot" | "catchsegv" | "strace" | "ltrace"
        | "valgrind" | "torsocks" | "proxychains" | "proxychains4" => {
            argv_from(name, args, prefix_wrapper_command_index(name, args), false)
        }
        "timeout" => argv_after_options(
            "timeout",
            args,
            &Opts::new("sk", &["signal", "kill-after"]),
            1,
            false,
        ),
        "chroot" => argv_after_options(
            "chroot",
            args,
            &Opts::new("", &["userspec", "groups"]),
            1,
            true,
        ),
        "flock" => unwrap_flock(args),
        "cmd.exe" | "cmd" => unwrap_cmd_exe(args),
        "watch" => {
            let i = Opts::new("nqd", &["interval", "differences"]).first_operand(args);
            joined_script("watch", &args[i.min(args.len())..])
        }
        "script" => unwrap_script(args),
        "xargs" => unwrap_xargs(args),
        "parallel" | "sem" => unwrap_parallel(name, args),
        "find" => unwrap_find(args),
        "dotenv" | "dotenv-cli" | "dotenvx" | "env-cmd" => unwrap_dotenv(name, args),
        "busybox" | "toybox" => argv_after_options(name, args, &no_opts, 0, false),
        "git" => unwrap_git(args),
        "ssh" => unwrap_ssh(args),
        "flyctl" | "fly" | "gcloud" | "doctl" | "heroku" => unwrap_platform_shell(name, args),
        "docker" | "podman" | "nerdctl" => unwrap_container(name, args),
        "npx" | "pnpx" | "bunx" | "npm" | "pnpm" | "yarn" | "bun" | "uv" | "poetry" | "pipenv"
        | "pdm" | "hatch" | "rye" | "pixi" | "bundle" | "mise" | "asdf" | "rbenv" | "pyenv"
        | "nodenv" | "conda" | "mamba" | "micromamba" | "direnv" | "nix-shell" | "stack"
        | "cabal" | "opam" | "dune" | "esy" => unwrap_runner(name, args),
        "trap" => trap_action(args)
            .map(|cmd| vec![script("trap", cmd, false)])
            .unwrap_or_default(),
        "mapfile" | "readarray" | "compgen" | "complete" => unwrap_callback_option(name, args),
        // Any other `aq` command line is read by its model below.
        "aq" if is_aq_run(args) => match args.iter().position(|a| a.text == "--") {
            Some(k) => argv_from("aq run", args, k + 1, false),
            None => Vec::new(),
        },
        "alias" => unwrap_alias(args),
        "kubectl" | "oc" => unwrap_kubectl(name, args),
        "sed" | "gsed" => unwrap_sed(args),
        // The dynamic loader run directly: `/lib64/ld-linux-x86-64.so.2 /bin/nc …`.
        _ if is_dynamic_loader(name) => argv_after_options(
            "ld.so",
            args,
            &Opts::new(
                "",
                &["library-path", "preload", "audit", "argv0", "inhibit-rpath"],
            ),
            0,
            false,
        ),
        "tmux" => unwrap_tmux(args),
        "screen" => unwrap_screen(args),
        // `sg GROUP [-c] CMD`: CMD is handed to /bin/sh.
        "sg" => {
            let rest = args.get(1..).unwrap_or(&[]);
            let rest = match rest.first() {
                Some(w) if w.text == "-c" => &rest[1..],
                _ => rest,
            };
            joined_script("sg", rest)
        }
        "machinectl" => unwrap_machinectl(args),
        // A leading value (a time stamp) before the command.
        "faketime" => {
            argv_after_options("faketime", args, &Opts::new("p", &["date-prog"]), 1, false)
        }
        "prlimit" => argv_after_options(
            "prlimit",
            args,
            &Opts::new("po", &["pid", "output"]),
            0,
            false,
        ),
        "rlwrap" => argv_after_options("rlwrap", args, &RLWRAP_OPTS, 0, false),
        "bwrap" => unwrap_bwrap(args),
        // Wrappers that run the command after their options (and, for the
        // ones that change user or attach a session, one leading value).
        "ssh-agent" => argv_after_options(name, args, &Opts::new("aEtPO", &[]), 0, false),
        "cpulimit" => argv_after_options(
            name,
            args,
            &Opts::new("lepPb", &["limit", "exe", "pid", "path"]),
            0,
            false,
        ),
        "sshpass" => argv_after_options(name, args, &Opts::new("pfdP", &[]), 0, false),
        "sandbox-exec" => argv_after_options(name, args, &Opts::new("fpnD", &[]), 0, false),
        "dbus-launch" => argv_after_options(
            name,
            args,
            &Opts::new("", &["config-file", "autolaunch"]),
            0,
            false,
        ),
        "numactl" => argv_after_options(name, args, &NUMACTL_OPTS, 0, false),
        "gosu" | "su-exec" | "setuidgid" => argv_after_options(name, args, &no_opts, 1, false),
        "chpst" => argv_after_options(name, args, &Opts::new("uUbe/nlLmdofcrtv", &[]), 0, false),
        // `dtach -n SOCKET CMD`, `abduco -n NAME CMD`: a detached session.
        "dtach" | "abduco" => argv_after_options(name, args, &Opts::new("rEz", &[]), 1, false),
        "entr" => unwrap_entr(args),
        "start-stop-daemon" => unwrap_start_stop_daemon(args),
        "less" | "zless" | "xzless" | "bzless" => unwrap_less(args),
        "eval" => joined_script("eval", args),
        "tar" | "bsdtar" | "gtar" => unwrap_tar(args),
        "rsync" => unwrap_rsync(args),
        "nsenter" => argv_after_options("nsenter", args, &NSENTER_OPTS, 0, true),
        "unshare" => argv_after_options(
            "unshare",
            args,
            &Opts::new("", &["map-user", "map-group", "setgroups", "propagation"]),
            0,
            false,
        ),
        _ if is_shell(name) => unwrap_shell(name, command),
        _ => unwrap_by_model(name, args),
    }
}

/// `sudo`'s options that take a value.
const SUDO_OPTS: Opts<'static> = Opts::new(
    "ugpChDrtTUR",
    &[
        "user",
        "group",
        "prompt",
        "close-from",
        "host",
        "chdir",
        "role",
        "type",
        "other-user",
        "chroot",
        "command-timeout",
    ],
);

/// `run0`'s (systemd) options that take a value.
const RUN0_OPTS: Opts<'static> = Opts::new(
    "ugD",
    &[
        "user",
        "group",
        "chdir",
        "setenv",
        "unit",
        "property",
        "description",
        "slice",
        "nice",
        "machine",
        "background",
    ],
);

/// `rlwrap`'s options that take a value.
const RLWRAP_OPTS: Opts<'static> = Opts::new(
    "bCDefgHlMOpPqsStwz",
    &[
        "break-chars",
        "command-name",
        "history-no-dupes",
        "extra-char-after-completion",
        "file",
        "forget-matching",
        "history-filename",
        "logfile",
        "multi-line-ext",
        "only-cook",
        "prompt-colour",
        "pre-given",
        "quote-characters",
        "histsize",
        "substitute-prompt",
        "set-term-name",
        "wait-before-prompt",
        "filter",
    ],
);

/// `numactl`'s options that take a value.
const NUMACTL_OPTS: Opts<'static> = Opts::new(
    "ipmNCP",
    &[
        "interleave",
        "preferred",
        "membind",
        "cpunodebind",
        "physcpubind",
        "weighted-interleave",
    ],
);

/// `nsenter`'s options that take a value.
const NSENTER_OPTS: Opts<'static> = Opts::new(
    "tSGnmuipUCrwe",
    &["target", "setuid", "setgid", "root", "wd"],
);

/// `args[from..]` as the command a wrapper runs (none when it is empty).
fn argv_from(label: &str, args: &[Word], from: usize, privileged: bool) -> Vec<Inner> {
    match args.get(from..) {
        Some(rest) if !rest.is_empty() => vec![Inner::Argv {
            label: label.to_string(),
            argv: rest.to_vec(),
            privileged,
            keeps_stdin: true,
        }],
        _ => Vec::new(),
    }
}

/// The command after a wrapper's options and then `leading_values`
/// operands of its own (`timeout DURATION CMD`, `chroot DIR CMD`).
fn argv_after_options(
    label: &str,
    args: &[Word],
    opts: &Opts,
    leading_values: usize,
    privileged: bool,
) -> Vec<Inner> {
    argv_from(
        label,
        args,
        opts.first_operand(args) + leading_values,
        privileged,
    )
}

/// A shell string to walk, given as text rather than as a word.
fn script_text(label: &str, text: &str, privileged: bool) -> Inner {
    Inner::Script {
        label: label.to_string(),
        script: text.to_string(),
        privileged,
        stdin_script: false,
        positional: None,
    }
}

/// `runuser -u USER -- CMD` runs CMD as USER (root only), like `sudo -u`;
/// `runuser USER -c CMD` runs a shell string, like `su`.
fn unwrap_runuser(args: &[Word]) -> Vec<Inner> {
    if runuser_runs_as_user(args) {
        let opts = Opts::new(
            "ugGsw",
            &[
                "user",
                "group",
                "supp-group",
                "shell",
                "whitelist-environment",
            ],
        );
        return argv_after_options("runuser", args, &opts, 0, true);
    }
    runuser_shell_string(args)
        .map(|script| vec![script_text("runuser -c", &script, true)])
        .unwrap_or_default()
}

/// Whether `runuser` is in its `-u USER` form (an option before `--`).
fn runuser_runs_as_user(args: &[Word]) -> bool {
    args.iter()
        .take_while(|a| a.text != "--")
        .any(|a| a.text == "-u" || a.text == "--user" || a.text.starts_with("--user="))
}

/// The first shell string given to `runuser` by `-c`, `--command` or
/// `--session-command`, in either spelling.
fn runuser_shell_string(args: &[Word]) -> Option<String> {
    args.iter()
        .enumerate()
        .find_map(|(k, a)| match a.text.as_str() {
            "-c" | "--command" | "--session-command" => args.get(k + 1).map(|s| s.text.clone()),
            t => t
                .strip_prefix("--command=")
                .or_else(|| t.strip_prefix("--session-command="))
                .map(str::to_string),
        })
}

/// `su -c CMD` (every one given): CMD runs as root.
fn unwrap_su(args: &[Word]) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "-c" || a == "--command" {
            if let Some(s) = args.get(i + 1) {
                out.push(script("su -c", s, true));
            }
            i += 1;
        } else if let Some(s) = a.strip_prefix("--command=") {
            out.push(script_text("su -c", s, true));
        }
        i += 1;
    }
    out
}

/// `command CMD` runs CMD; `command -v NAME` and `-V` only look a name up.
fn unwrap_command_builtin(args: &[Word]) -> Vec<Inner> {
    if args.iter().any(|a| a.text == "-v" || a.text == "-V") {
        return Vec::new();
    }
    argv_after_options("command", args, &Opts::new("", &[]), 0, false)
}

/// Where the command starts for the wrappers that only adjust how it runs
/// (`nice`, `nohup`, `stdbuf`, `chrt`, `setarch` ...): after their options
/// and, for some, a value of their own.
fn prefix_wrapper_command_index(name: &str, args: &[Word]) -> usize {
    let opts = match name {
        "exec" => Opts::new("a", &[]),
        "stdbuf" => Opts::new("ioe", &["input", "output", "error"]),
        "ionice" => Opts::new("cnp", &["class", "classdata", "pid"]),
        "nice" => Opts::new("n", &["adjustment"]),
        "time" => Opts::new("fo", &["format", "output"]),
        "chrt" | "taskset" => Opts::new("p", &[]),
        "systemd-run" => Opts::new(
            "upPE",
            &[
                "unit",
                "property",
                "description",
                "slice",
                "setenv",
                "working-directory",
            ],
        ),
        "strace" => Opts::new("eopsSPIbuEa", &[]),
        "ltrace" => Opts::new("eopsnuaA", &[]),
        _ => Opts::new("", &[]),
    };
    let mut i = opts.first_operand(args);
    // chrt PRIO CMD / taskset MASK CMD / setarch ARCH CMD / logsave
    // LOG CMD: a value comes before the command.
    if matches!(name, "chrt" | "taskset" | "setarch" | "logsave") {
        i += 1;
    }
    // `setarch ARCH -R CMD`: its own options follow the value.
    if name == "setarch" {
        while args.get(i).is_some_and(|a| a.text.starts_with('-')) {
            i += 1;
        }
    }
    i
}

/// `flock [-c CMD] LOCK [CMD…]`: the shell strings after `-c`, or else the
/// command after the lock file.
fn unwrap_flock(args: &[Word]) -> Vec<Inner> {
    let i =
        Opts::new("wEc", &["timeout", "wait", "conflict-exit-code", "command"]).first_operand(args);
    let mut out = Vec::new();
    for (k, a) in args.iter().enumerate() {
        if (a.text == "-c" || a.text == "--command") && k + 1 < args.len() {
            out.push(script("flock -c", &args[k + 1], false));
        }
    }
    if out.is_empty() {
        out = argv_from("flock", args, i + 1, false);
    }
    out
}

/// `cmd.exe /c dir`, `cmd.exe /s /c "…"` (Windows, from WSL): the rest of
/// the line after `/c` (`/k` keeps the prompt) is a command line for cmd,
/// read here as a shell reads one.
fn unwrap_cmd_exe(args: &[Word]) -> Vec<Inner> {
    match args
        .iter()
        .position(|a| matches!(a.text.as_str(), "/c" | "/C" | "/k" | "/K"))
    {
        Some(k) => joined_script("cmd.exe /c", &args[k + 1..]),
        None => Vec::new(),
    }
}

/// `script -c CMD` (also clustered, `-qc CMD`) records a shell string.
fn unwrap_script(args: &[Word]) -> Vec<Inner> {
    let mut out = Vec::new();
    for (k, a) in args.iter().enumerate() {
        let short_c = a.text.starts_with('-') && !a.text.starts_with("--") && a.text.ends_with('c');
        if short_c || a.text == "--command" {
            if let Some(s) = args.get(k + 1) {
                out.push(script("script -c", s, false));
            }
        } else if let Some(s) = a.text.strip_prefix("--command=") {
            out.push(script_text("script -c", s, false));
        }
    }
    out
}

/// `xargs CMD`: CMD (`echo` when none is given) with arguments read from
/// input; its stdin is xargs's input, not the caller's.
fn unwrap_xargs(args: &[Word]) -> Vec<Inner> {
    let opts = Opts::new(
        "IinLlPdEsae",
        &[
            "replace",
            "max-lines",
            "max-args",
            "max-procs",
            "delimiter",
            "eof",
            "max-chars",
            "arg-file",
            "process-slot-var",
        ],
    );
    let mut inner = argv_after_options("xargs", args, &opts, 0, false);
    if inner.is_empty() {
        inner.push(Inner::Argv {
            label: "xargs".into(),
            argv: vec![Word::literal("echo")],
            privileged: false,
            keeps_stdin: false,
        });
    }
    for inner in &mut inner {
        if let Inner::Argv {
            argv, keeps_stdin, ..
        } = inner
        {
            *keeps_stdin = false;
            argv.push(arguments_from_input());
        }
    }
    inner
}

/// GNU `parallel TEMPLATE ::: INPUTS` (and `sem`): one run per input, or
/// with no command and no `:::`, each input line as a command line.
fn unwrap_parallel(name: &str, args: &[Word]) -> Vec<Inner> {
    let i = Opts::new(
        "jSaIX",
        &[
            "jobs", "sshlogin", "arg-file", "delay", "timeout", "joblog", "results", "id",
        ],
    )
    .first_operand(args);
    let end = args
        .iter()
        .position(|a| a.text.starts_with(":::"))
        .unwrap_or(args.len());
    let template = &args[i.min(end)..end];
    let inputs: Vec<&Word> = args
        .get(end + 1..)
        .unwrap_or(&[])
        .iter()
        .take_while(|a| !a.text.starts_with(":::"))
        .take(8)
        .collect();
    // No command and no `:::`: each line of its input (or of `-a
    // FILE`) is a command line.
    if template.is_empty() && inputs.is_empty() && end == args.len() {
        return vec![Inner::Script {
            label: format!("{name} (input lines)"),
            script: "\"$PARALLEL_INPUT_LINE\"".into(),
            privileged: false,
            stdin_script: true,
            positional: None,
        }];
    }
    let mut out = Vec::new();
    for argv in parallel_runs(template, &inputs) {
        match argv.len() {
            0 => {}
            1 => out.push(script("parallel", &argv[0], false)),
            _ => out.push(Inner::Argv {
                label: "parallel".into(),
                argv,
                privileged: false,
                keeps_stdin: false,
            }),
        }
    }
    out
}

/// The argument vectors `parallel` runs: the template once per input, the
/// input filling the first `{}` or else appended; the template alone when
/// there are no inputs.
fn parallel_runs(template: &[Word], inputs: &[&Word]) -> Vec<Vec<Word>> {
    if inputs.is_empty() {
        return vec![template.to_vec()];
    }
    inputs
        .iter()
        .map(|input| {
            let mut argv = template.to_vec();
            if let Some(slot) = argv.iter_mut().find(|w| w.text.contains("{}")) {
                slot.text = slot.text.replace("{}", &input.text);
            } else {
                argv.push((*input).clone());
            }
            argv
        })
        .collect()
}

/// `dotenv -e .env.local -- CMD` (dotenv-cli), `dotenv run CMD`
/// (python-dotenv), `dotenvx run -f F -- CMD`, `env-cmd -f F CMD`: CMD runs
/// with the file's variables in its environment.
fn unwrap_dotenv(name: &str, args: &[Word]) -> Vec<Inner> {
    if let Some(k) = args.iter().position(|a| a.text == "--") {
        return argv_from(name, args, k + 1, false);
    }
    let opts = Opts::new("efcvp", &["env-file", "file", "environments", "path"]);
    match args.iter().position(|a| a.text == "run") {
        Some(k) => {
            let rest = &args[k + 1..];
            let i = opts.first_operand(rest);
            argv_after(name, &rest[i.min(rest.len())..])
        }
        None if name == "env-cmd" => argv_after_options(name, args, &opts, 0, false),
        None => Vec::new(),
    }
}

/// `trap [--] 'CMD' SIGNAL...`: CMD, which runs later, in this shell.
fn trap_action(args: &[Word]) -> Option<&Word> {
    let args = match args.first() {
        Some(a) if a.text == "--" => &args[1..],
        _ => args,
    };
    match args.first() {
        Some(cmd) if args.len() >= 2 && !cmd.text.starts_with('-') => Some(cmd),
        _ => None,
    }
}

/// `mapfile -C CMD` runs CMD every `-c` lines; `compgen -C CMD` and
/// `complete -C CMD` run CMD to list completions.
fn unwrap_callback_option(name: &str, args: &[Word]) -> Vec<Inner> {
    args.iter()
        .enumerate()
        .filter_map(|(k, a)| match a.text.as_str() {
            "-C" => args.get(k + 1).map(|cmd| script(name, cmd, false)),
            t => t
                .strip_prefix("-C")
                .filter(|c| !c.is_empty())
                .map(|cmd| script_text(name, cmd, false)),
        })
        .collect()
}

/// `aq run [OPTIONS] -- CMD`, `aq mcp run ... -- SERVER`: a `run` before
/// `--` means the words after `--` run.
fn is_aq_run(args: &[Word]) -> bool {
    args.iter()
        .take_while(|a| a.text != "--")
        .any(|a| a.text == "run")
}

/// `alias NAME='CMD'`: CMD runs where NAME is written later (in a shell that
/// expands aliases), so each is judged as a command line.
fn unwrap_alias(args: &[Word]) -> Vec<Inner> {
    args.iter()
        .filter_map(|a| {
            let (name, value) = a.text.split_once('=')?;
            (!name.is_empty() && !name.starts_with('-')).then(|| script_text("alias", value, false))
        })
        .collect()
}

/// `machinectl shell [USER@]MACHINE [PROGRAM [ARGS]]`.
fn unwrap_machinectl(args: &[Word]) -> Vec<Inner> {
    let i =
        Opts::new("MHpE", &["machine", "host", "property", "setenv", "uid"]).first_operand(args);
    match args.get(i) {
        Some(sub) if sub.text == "shell" => {
            let rest = &args[i + 1..];
            let j = Opts::new("E", &["setenv", "uid"]).first_operand(rest);
            argv_after("machinectl shell", rest.get(j + 1..).unwrap_or(&[]))
        }
        _ => Vec::new(),
    }
}

/// `entr [-s] CMD`: with `-s` (alone or in a cluster), one shell command
/// line; otherwise a program with its arguments.
fn unwrap_entr(args: &[Word]) -> Vec<Inner> {
    let i = Opts::new("", &[]).first_operand(args);
    if args[..i.min(args.len())]
        .iter()
        .any(|a| a.text.starts_with('-') && a.text.contains('s'))
    {
        joined_script("entr -s", args.get(i..).unwrap_or(&[]))
    } else {
        argv_from("entr", args, i, false)
    }
}

/// `less +CMD`: CMD is less's first command; `+!CMD` (or `+:!CMD`) runs a
/// shell command.
fn unwrap_less(args: &[Word]) -> Vec<Inner> {
    args.iter()
        .take_while(|a| a.text != "--")
        .filter_map(|a| {
            a.text
                .strip_prefix("+!")
                .or_else(|| a.text.strip_prefix("+:!"))
        })
        .map(|cmd| script_text("less +!", cmd, false))
        .collect()
}

/// `rsync -e CMD` / `--rsh=CMD`: the remote shell rsync starts.
fn unwrap_rsync(args: &[Word]) -> Vec<Inner> {
    let mut out = Vec::new();
    for (k, a) in args.iter().enumerate() {
        if a.text == "-e" || a.text == "--rsh" {
            if let Some(s) = args.get(k + 1) {
                out.push(script("rsync -e", s, false));
            }
        } else if let Some(s) = a.text.strip_prefix("--rsh=") {
            out.push(script_text("rsync -e", s, false));
        }
    }
    out
}

/// `rest` as the command a wrapper runs (none when it is empty).
fn argv_after(label: &str, rest: &[Word]) -> Vec<Inner> {
    if rest.is_empty() {
        return Vec::new();
    }
    vec![Inner::Argv {
        label: label.to_string(),
        argv: rest.to_vec(),
        privileged: false,
        keeps_stdin: true,
    }]
}

/// `sed`'s `e COMMAND` runs COMMAND (GNU sed); `s/…/…/e` runs the pattern
/// space, which is input, so it is only known at run time.
fn unwrap_sed(args: &[Word]) -> Vec<Inner> {
    let mut scripts: Vec<&str> = Vec::new();
    let mut explicit = false;
    let mut k = 0;
    while k < args.len() {
        let t = args[k].text.as_str();
        if t == "-e" || t == "--expression" {
            explicit = true;
            if let Some(v) = args.get(k + 1) {
                scripts.push(&v.text);
            }
            k += 1;
        } else if let Some(v) = t.strip_prefix("--expression=") {
            explicit = true;
            scripts.push(v);
        } else if t == "-f" || t == "--file" {
            explicit = true;
            k += 1;
        } else if !t.starts_with('-') && !explicit {
            scripts.push(t);
            explicit = true;
        }
        k += 1;
    }
    let mut out = sed_files(&scripts);
    for script in scripts {
        for line in script.split('\n') {
            let mut offset = 0;
            for seg in line.split(';') {
                let trimmed = seg.trim_start_matches(|c: char| {
                    c.is_ascii_digit() || c.is_whitespace() || matches!(c, '$' | ',' | '!' | '~')
                });
                let at = offset + (seg.len() - trimmed.len());
                offset += seg.len() + 1;
                let Some(after) = trimmed.strip_prefix('e') else {
                    continue;
                };
                if !(after.is_empty() || after.starts_with(char::is_whitespace)) {
                    continue;
                }
                // `e CMD` takes the rest of the line, `;` included; a bare
                // `e` runs the pattern space, which is input.
                let command = line[at + 1..].trim();
                out.push(if command.is_empty() {
                    pattern_space_run("sed e")
                } else {
                    Inner::Script {
                        label: "sed e".into(),
                        script: command.to_string(),
                        privileged: false,
                        stdin_script: false,
                        positional: None,
                    }
                });
                break;
            }
            // `s/…/…/e`: the pattern space, after the substitution, runs.
            let mut rest = line;
            while let Some((cmd, after)) = sed_command(rest) {
                if cmd == 's' {
                    if s_command_flags(after).is_some_and(|f| f.contains('e')) {
                        out.push(pattern_space_run("sed s///e"));
                        break;
                    }
                } else if !matches!(cmd, '{' | '}' | 'p' | 'd' | 'g' | 'h' | 'n' | 'x' | 'y') {
                    break;
                }
                let Some(k) = after.find(';') else { break };
                rest = &after[k + 1..];
            }
        }
    }
    out
}

/// sed running its pattern space as a command: a line of its input, only
/// known at run time, run by a shell with sed's input as its own.
fn pattern_space_run(label: &str) -> Inner {
    Inner::Script {
        label: label.into(),
        script: "\"$SED_PATTERN_SPACE\"".into(),
        privileged: false,
        stdin_script: true,
        positional: None,
    }
}

/// The flags of a `s/re/rep/FLAGS` command, up to a `w FILE` flag.
fn s_command_flags(after: &str) -> Option<&str> {
    let mut chars = after.char_indices();
    let (_, delim) = chars.next()?;
    if delim.is_alphanumeric() || delim.is_whitespace() || delim == '\\' {
        return None;
    }
    let mut seen = 0;
    let mut escaped = false;
    for (k, c) in chars {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
        } else if c == delim {
            seen += 1;
            if seen == 2 {
                let flags = &after[k + c.len_utf8()..];
                let end = flags.find([';', 'w', '}', ' ']).unwrap_or(flags.len());
                return Some(&flags[..end]);
            }
        }
    }
    None
}

/// The files a sed script reads or writes with its own commands: `r F` and
/// `R F` read F into the output (as `cat F` does), `w F`, `W F` and the
/// `w F` flag of `s///` write to F (as `tee F` does). A file name runs to
/// the end of its line.
fn sed_files(scripts: &[&str]) -> Vec<Inner> {
    let mut out = Vec::new();
    for script in scripts {
        for line in script.split('\n') {
            let mut rest = line;
            while let Some((cmd, after)) = sed_command(rest) {
                let file = match cmd {
                    'r' | 'R' | 'w' | 'W' => Some(after.trim()),
                    's' => s_command_write(after),
                    _ => None,
                };
                if let Some(f) = file.filter(|f| !f.is_empty()) {
                    let (program, label) = if matches!(cmd, 'r' | 'R') {
                        ("cat", "sed r")
                    } else {
                        ("tee", "sed w")
                    };
                    out.push(Inner::Argv {
                        label: label.into(),
                        argv: vec![Word::literal(program), Word::literal(f)],
                        privileged: false,
                        keeps_stdin: false,
                    });
                    break;
                }
                // Commands that take the rest of the line end it.
                if matches!(
                    cmd,
                    'r' | 'R' | 'w' | 'W' | 'a' | 'i' | 'c' | 'e' | ':' | 'b' | 't' | 'T' | '#'
                ) {
                    break;
                }
                let Some(k) = after.find(';') else { break };
                rest = &after[k + 1..];
            }
        }
    }
    out
}

/// The command letter of a sed command, after its address (`3`, `$`,
/// `/re/`, `\%re%`, `a,b`, `!`, `~n`), and the text after it.
fn sed_command(text: &str) -> Option<(char, &str)> {
    let b = text.as_bytes();
    let mut k = 0;
    let skip_regex = |k: usize, delim: u8| -> usize {
        let mut j = k;
        while j < b.len() && b[j] != delim {
            if b[j] == b'\\' {
                j += 1;
            }
            j += 1;
        }
        j + 1
    };
    loop {
        while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
            k += 1;
        }
        match b.get(k)? {
            b'0'..=b'9' | b'$' | b',' | b'!' | b'~' | b'+' => k += 1,
            b'/' => k = skip_regex(k + 1, b'/'),
            b'\\' => {
                let delim = *b.get(k + 1)?;
                k = skip_regex(k + 2, delim);
            }
            b'{' | b'}' | b';' => k += 1,
            _ => break,
        }
    }
    let c = text.get(k..)?.chars().next()?;
    Some((c, &text[k + c.len_utf8()..]))
}

/// The file a `s/re/rep/FLAGS` command writes with its `w FILE` flag.
fn s_command_write(after: &str) -> Option<&str> {
    let mut chars = after.char_indices();
    let (_, delim) = chars.next()?;
    let mut seen = 0;
    let mut escaped = false;
    for (k, c) in chars {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
        } else if c == delim {
            seen += 1;
            if seen == 2 {
                let flags = &after[k + c.len_utf8()..];
                let end = flags.find(';').unwrap_or(flags.len());
                let w = flags[..end].find('w')?;
                return Some(flags[w + 1..].trim());
            }
        }
    }
    None
}

/// `tmux new-session|new-window|split-window|respawn-pane|run-shell … 'CMD'`:
/// the trailing words are a shell command tmux runs.
fn unwrap_tmux(args: &[Word]) -> Vec<Inner> {
    const RUNS: &[&str] = &[
        "new-session",
        "new",
        "new-window",
        "neww",
        "split-window",
        "splitw",
        "respawn-pane",
        "respawnp",
        "respawn-window",
        "respawnw",
        "run-shell",
        "run",
        "display-popup",
        "popup",
        "pipe-pane",
        "pipep",
        "if-shell",
        "if",
    ];
    // Global options before the subcommand: -L socket, -S path, -f file.
    let i = Opts {
        short_value: "LSfc",
        long_value: &[],
    }
    .first_operand(args);
    if args
        .get(i)
        .is_some_and(|w| matches!(w.text.as_str(), "send-keys" | "send"))
    {
        return tmux_send_keys(&args[i + 1..]);
    }
    let Some(sub) = args.get(i).filter(|w| RUNS.contains(&w.text.as_str())) else {
        return Vec::new();
    };
    // Options of these subcommands that take a value.
    let rest = &args[i + 1..];
    let j = Opts {
        short_value: "cefFnstxylp",
        long_value: &[],
    }
    .first_operand(rest);
    let words = &rest[j.min(rest.len())..];
    if words.is_empty() {
        return Vec::new();
    }
    joined_script(&format!("tmux {}", sub.text), words)
}

/// `screen [-dmS NAME] CMD ARGS`: CMD runs in a new window (detached with
/// `-dm`); `screen [-S NAME] -X stuff TEXT` types TEXT into the session's
/// shell (a command line, run at its newline), `-X exec CMD` and `-X
/// screen CMD` run CMD there.
fn unwrap_screen(args: &[Word]) -> Vec<Inner> {
    let opts = Opts {
        short_value: "SceEhpstTX",
        long_value: &[],
    };
    if let Some(k) = args
        .iter()
        .position(|a| a.text.starts_with('-') && !a.text.starts_with("--") && a.text.ends_with('X'))
    {
        let rest = &args[k + 1..];
        return match rest.first().map(|w| w.text.as_str()) {
            Some("stuff") => rest
                .get(1)
                .map(|w| {
                    vec![Inner::Script {
                        label: "screen -X stuff".into(),
                        script: typed_text(&w.text),
                        privileged: false,
                        stdin_script: false,
                        positional: None,
                    }]
                })
                .unwrap_or_default(),
            Some("exec" | "screen") => {
                let cmd = &rest[1..];
                let j = Opts {
                    short_value: "tTk",
                    long_value: &[],
                }
                .first_operand(cmd);
                argv_after("screen -X", cmd.get(j..).unwrap_or(&[]))
            }
            _ => Vec::new(),
        };
    }
    // `-r`, `-x`, `-ls` and `-list` reattach or list: no command.
    if args.iter().any(|a| {
        matches!(
            a.text.as_str(),
            "-r" | "-R" | "-x" | "-ls" | "-list" | "-wipe" | "-v"
        )
    }) {
        return Vec::new();
    }
    let i = opts.first_operand(args);
    argv_after("screen", args.get(i..).unwrap_or(&[]))
}

/// Keystrokes typed into a terminal, as the command line a shell reads:
/// `\n`, `\r`, `^M` and `^J` end a line.
fn typed_text(keys: &str) -> String {
    keys.replace("\\n", "\n")
        .replace("\\r", "\n")
        .replace("^M", "\n")
        .replace("^J", "\n")
        .replace('\r', "\n")
}

/// `tmux send-keys [-t PANE] KEY...`: strings are typed, key names pressed
/// (`Enter`, `C-m` end the line): the shell in the pane reads a command line.
fn tmux_send_keys(rest: &[Word]) -> Vec<Inner> {
    let j = Opts {
        short_value: "tNcT",
        long_value: &[],
    }
    .first_operand(rest);
    let literal = rest[..j.min(rest.len())]
        .iter()
        .any(|w| w.text.starts_with('-') && w.text.contains('l'));
    let mut text = String::new();
    for w in rest.get(j..).unwrap_or(&[]) {
        match w.text.as_str() {
            "Enter" | "C-m" | "C-j" | "KPEnter" if !literal => text.push('\n'),
            "Space" if !literal => text.push(' '),
            "Tab" if !literal => text.push('\t'),
            t if !literal && (t.starts_with("C-") || t.starts_with("M-")) && t.len() <= 4 => {}
            t => text.push_str(&typed_text(t)),
        }
    }
    if text.trim().is_empty() {
        return Vec::new();
    }
    vec![Inner::Script {
        label: "tmux send-keys".into(),
        script: text,
        privileged: false,
        stdin_script: false,
        positional: None,
    }]
}

/// `bwrap [OPTIONS] CMD ARGS`: its options take zero to three values.
fn unwrap_bwrap(args: &[Word]) -> Vec<Inner> {
    const ONE: &[&str] = &[
        "--add-seccomp-fd",
        "--args",
        "--block-fd",
        "--cap-add",
        "--cap-drop",
        "--chdir",
        "--dev",
        "--dir",
        "--exec-label",
        "--file-label",
        "--gid",
        "--hostname",
        "--info-fd",
        "--json-status-fd",
        "--lock-file",
        "--mqueue",
        "--overlay-src",
        "--perms",
        "--pidns",
        "--proc",
        "--remount-ro",
        "--ro-overlay",
        "--seccomp",
        "--size",
        "--sync-fd",
        "--tmp-overlay",
        "--tmpfs",
        "--uid",
        "--unsetenv",
        "--userns",
        "--userns-block-fd",
        "--userns2",
    ];
    const TWO: &[&str] = &[
        "--bind",
        "--bind-data",
        "--bind-fd",
        "--bind-try",
        "--chmod",
        "--dev-bind",
        "--dev-bind-try",
        "--file",
        "--ro-bind",
        "--ro-bind-data",
        "--ro-bind-fd",
        "--ro-bind-try",
        "--setenv",
        "--symlink",
    ];
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with("--") {
            break;
        }
        i += 1 + if TWO.contains(&t) {
            2
        } else if ONE.contains(&t) {
            1
        } else if t == "--overlay" {
            3
        } else {
            0
        };
    }
    argv_after("bwrap", args.get(i..).unwrap_or(&[]))
}

/// `start-stop-daemon --start --exec PROG [--startas PROG] -- ARGS`: with
/// `--start`, PROG runs with ARGS.
fn unwrap_start_stop_daemon(args: &[Word]) -> Vec<Inner> {
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let dashes = texts.iter().position(|t| *t == "--").unwrap_or(texts.len());
    let opts = &texts[..dashes];
    if !opts.iter().any(|t| *t == "--start" || *t == "-S") {
        return Vec::new();
    }
    let value = |names: &[&str]| {
        opts.iter().enumerate().find_map(|(k, t)| {
            if names.contains(t) {
                opts.get(k + 1).copied()
            } else {
                names
                    .iter()
                    .find_map(|n| t.strip_prefix(n)?.strip_prefix('='))
            }
        })
    };
    // `--startas` is what runs; `--exec` also names it when alone.
    let Some(program) = value(&["--startas", "-a"]).or_else(|| value(&["--exec", "-x"])) else {
        return Vec::new();
    };
    let mut argv = vec![Word::literal(program)];
    argv.extend(args.get(dashes + 1..).unwrap_or(&[]).iter().cloned());
    vec![Inner::Argv {
        label: "start-stop-daemon".into(),
        argv,
        privileged: true,
        keeps_stdin: false,
    }]
}

/// Programs the capability model (`aq-knowledge`) says run a command through
/// an option: `zip -TT CMD`, `man -P CMD`, `gdb -ex '!CMD'`, `strace -o '|CMD'`.
fn unwrap_by_model(name: &str, args: &[Word]) -> Vec<Inner> {
    let Some(program) = aq_knowledge::programs::lookup(name) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    for cap in program.caps(aq_knowledge::programs::Does::Exec) {
        if cap.via != aq_knowledge::programs::Via::Option {
            out.extend(wrapped_by_model(name, program, cap, args));
            continue;
        }
        for k in 0..texts.len() {
            let Some(value) = cap.option_value(&texts, k) else {
                continue;
            };
            let label = format!("{name} {}", texts[k].split('=').next().unwrap_or(texts[k]));
            match cap.takes {
                aq_knowledge::programs::Takes::Command => out.push(Inner::Script {
                    label,
                    script: value.trim_start_matches('|').to_string(),
                    privileged: false,
                    stdin_script: false,
                    positional: None,
                }),
                aq_knowledge::programs::Takes::Escape => {
                    if let Some(script) = aq_knowledge::programs::escape_command(value) {
                        out.push(Inner::Script {
                            label,
                            script,
                            privileged: false,
                            stdin_script: false,
                            positional: None,
                        });
                    }
                }
                aq_knowledge::programs::Takes::Program => out.push(Inner::Argv {
                    label,
                    argv: vec![Word::literal(value)],
                    privileged: false,
                    keeps_stdin: false,
                }),
                aq_knowledge::programs::Takes::Argv => {
                    // The option's value and every word after it are the command.
                    let attached = !cap.flags.contains(texts[k]);
                    let mut argv = Vec::new();
                    if attached {
                        argv.push(Word::literal(value));
                    }
                    argv.extend_from_slice(&args[k + 1..]);
                    out.push(Inner::Argv {
                        label,
                        argv,
                        privileged: false,
                        keeps_stdin: true,
                    });
                }
                _ => {}
            }
        }
    }
    out
}

/// What a wrapper described as data runs: a command after its options
/// (`via = "operands"`, `takes = "argv"`: `cross-env A=1 CMD`, `xvfb-run -a
/// CMD`), after a mode's words and their options (`via = "args"`: `dotenvx
/// run -f F -- CMD`), or a shell command line in each operand (`takes =
/// "command"`: `concurrently "A" "B"`, `hyperfine "A"`). The cap's `flags`
/// are the options that take a value.
fn wrapped_by_model(
    name: &str,
    program: &aq_knowledge::programs::Program,
    cap: &aq_knowledge::programs::Cap,
    args: &[Word],
) -> Vec<Inner> {
    use aq_knowledge::programs::{Does, Takes, Via};
    let start = match (cap.via, cap.takes) {
        (Via::Operands, Takes::Argv | Takes::Command) => 0,
        (Via::Args, Takes::Argv) => {
            // The words of the mode, in order (`run`, `exec`, `record`):
            // the command comes after the last of them.
            let mut at = 0;
            for want in cap.args {
                match args[at..].iter().position(|w| w.text == *want) {
                    Some(k) => at += k + 1,
                    None => return Vec::new(),
                }
            }
            at
        }
        _ => return Vec::new(),
    };
    let rest = &args[start.min(args.len())..];
    // A mode's command usually follows `--` (`chamber exec SERVICE --
    // CMD`, `aws-vault exec PROFILE -- CMD`).
    if cap.via == Via::Args
        && let Some(k) = rest.iter().position(|w| w.text == "--")
    {
        return argv_after(&format!("{name} {}", cap.args.join(" ")), &rest[k + 1..]);
    }
    // Options: those in `flags` take the next word (unless attached with
    // `=`); `--` ends them.
    let mut i = 0;
    while i < rest.len() {
        let t = rest[i].text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if cap.flags.contains(t) {
            i += 1;
        }
        i += 1;
    }
    let operands = &rest[i.min(rest.len())..];
    // `dotenv run -- CMD`: the first operand is another cap's mode, whose
    // cap finds the command.
    if cap.via == Via::Operands
        && let Some(first) = operands.first()
        && program.caps(Does::Exec).any(|c| {
            c.via == Via::Args
                && c.takes == Takes::Argv
                && c.args.first() == Some(first.text.as_str())
        })
    {
        return Vec::new();
    }
    let label = match cap.via {
        Via::Args => format!("{name} {}", cap.args.join(" ")),
        _ => name.to_string(),
    };
    if cap.takes == Takes::Command {
        // Each operand is a command line; a single word that is a port, a
        // URL or a `npm:script` shorthand is a value, not a command.
        let value = |w: &str| {
            !w.contains(char::is_whitespace)
                && (w.contains(':') || w.chars().all(|c| c.is_ascii_digit()))
        };
        return operands
            .iter()
            .filter(|w| !w.text.is_empty() && !value(&w.text))
            .map(|w| script(&label, w, false))
            .collect();
    }
    // `cross-env NODE_ENV=test CMD`: assignments before the command.
    let assignment = |w: &str| {
        w.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty()
                && !k.starts_with(|c: char| c.is_ascii_digit())
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let first = operands
        .iter()
        .position(|w| !assignment(&w.text))
        .unwrap_or(operands.len());
    argv_after(&label, &operands[first..])
}

/// Whether `name` is the dynamic loader (`ld-linux-x86-64.so.2`, `ld.so`,
/// `ld-musl-x86_64.so.1`), which runs the program named by its operand.
fn is_dynamic_loader(name: &str) -> bool {
    (name.starts_with("ld-linux") || name.starts_with("ld-musl") || name.starts_with("ld64.so"))
        && name.contains(".so")
        || name == "ld.so"
}

/// Whether `name` is a shell (`sh`, `bash`, `zsh`, ... `bash5`).
///
/// Asked of every command by the walk and the rules, and most names are no
/// shell: the first byte tells most apart without a string comparison, and
/// only a name ending in a digit or a dot can be a versioned shell.
pub fn is_shell(name: &str) -> bool {
    let Some(&first) = name.as_bytes().first() else {
        return false;
    };
    let same_start = |s: &&&str| s.as_bytes()[0] == first;
    if SHELLS.iter().filter(same_start).any(|s| *s == name) {
        return true;
    }
    if !name.ends_with(|c: char| c.is_ascii_digit() || c == '.') {
        return false;
    }
    SHELLS.iter().filter(same_start).any(|s| {
        name.strip_prefix(s)
            .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

fn script(label: &str, w: &Word, privileged: bool) -> Inner {
    Inner::Script {
        label: label.to_string(),
        script: w.text.clone(),
        privileged,
        stdin_script: false,
        positional: None,
    }
}

fn joined_script(label: &str, words: &[Word]) -> Vec<Inner> {
    if words.is_empty() {
        return Vec::new();
    }
    let text = words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    vec![Inner::Script {
        label: label.to_string(),
        script: text,
        privileged: false,
        stdin_script: false,
        positional: None,
    }]
}

/// The arguments xargs or find append, read from input at run time.
fn arguments_from_input() -> Word {
    Word {
        text: "{}".into(),
        dynamic: true,
        ..Word::default()
    }
}

fn unwrap_env(args: &[Word]) -> Vec<Inner> {
    let mut i = 0;
    let mut first_assignment = None;
    let mut out = Vec::new();
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if a == "-S" || a == "--split-string" {
            if let Some(s) = args.get(i + 1) {
                let mut rest = vec![s.text.clone()];
                rest.extend(args[i + 2..].iter().map(|w| w.text.clone()));
                out.push(Inner::Script {
                    label: "env -S".into(),
                    script: rest.join(" "),
                    privileged: false,
                    stdin_script: true,
                    positional: None,
                });
            }
            return out;
        }
        if let Some(s) = a
            .strip_prefix("--split-string=")
            .or_else(|| a.strip_prefix("-S").filter(|s| !s.is_empty()))
        {
            let mut rest = vec![s.to_string()];
            rest.extend(args[i + 1..].iter().map(|w| w.text.clone()));
            out.push(Inner::Script {
                label: "env -S".into(),
                script: rest.join(" "),
                privileged: false,
                stdin_script: true,
                positional: None,
            });
            return out;
        }
        if matches!(a, "-u" | "--unset" | "-C" | "--chdir" | "-P") {
            i += 2;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            i += 1;
            continue;
        }
        if a.contains('=') && !a.starts_with('=') {
            // The assignments go to the child, which sets them.
            first_assignment.get_or_insert(i);
            i += 1;
            continue;
        }
        break;
    }
    match args.get(first_assignment.unwrap_or(i)..) {
        Some(rest) if !rest.is_empty() => vec![Inner::Argv {
            label: "env".into(),
            argv: rest.to_vec(),
            privileged: false,
            keeps_stdin: true,
        }],
        _ => Vec::new(),
    }
}

fn unwrap_shell(name: &str, command: &Command) -> Vec<Inner> {
    let args = command.args();
    let mut i = 0;
    let mut has_c = false;
    let mut reads_stdin = false;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                i += 1;
            }
            i += 1;
            continue;
        }
        if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
            let flags = &a[1..];
            if flags.contains('c') {
                has_c = true;
            }
            if flags.contains('s') {
                reads_stdin = true;
            }
            if flags.ends_with('o') || flags.ends_with('O') {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    let label = format!("{name} -c");
    if has_c {
        return match args.get(i) {
            Some(s) => vec![Inner::Script {
                label,
                script: s.text.clone(),
                privileged: false,
                stdin_script: true,
                positional: script_parameters(&args[i + 1..]),
            }],
            None => Vec::new(),
        };
    }
    if i < args.len() && !reads_stdin {
        // A script file: its content is not known here.
        return Vec::new();
    }
    // The shell reads its script from stdin: a here-document or here-string
    // is a script we can read.
    let mut out = Vec::new();
    for input in &command.stdin {
        if let Input::Text(text) = input {
            out.push(Inner::Script {
                label: format!("{name} <<"),
                script: text.text.clone(),
                privileged: false,
                stdin_script: false,
                positional: None,
            });
        }
    }
    out
}

/// The words after `sh -c SCRIPT`: the script's `$0` then its `$1`, `$2`…
/// Known only when every word is literal: a word that is not (`{}` from
/// `find -exec`, `"$@"`) may be several words or none, so no position
/// after it is known, and the script's parameters are left unknown.
fn script_parameters(rest: &[Word]) -> Option<Vec<Word>> {
    (!rest.is_empty() && rest.iter().all(|w| !w.dynamic)).then(|| rest.to_vec())
}

fn unwrap_find(args: &[Word]) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if matches!(a, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && args[end].text != ";" && args[end].text != "+" {
                end += 1;
            }
            if end > start {
                let argv: Vec<Word> = args[start..end]
                    .iter()
                    .map(|w| {
                        if w.text.contains("{}") {
                            Word {
                                dynamic: true,
                                ..w.clone()
                            }
                        } else {
                            w.clone()
                        }
                    })
                    .collect();
                out.push(Inner::Argv {
                    label: format!("find {a}"),
                    argv,
                    privileged: false,
                    keeps_stdin: false,
                });
            }
            i = end;
        }
        i += 1;
    }
    out
}

/// `git -c KEY=VALUE` keys whose value is a program git runs (a shell
/// command, a program's path, a `!` alias), from the one table of such keys,
/// [`aq_knowledge::git::GIT_KEYS`].
pub fn git_config_runs_program(key: &str) -> bool {
    aq_knowledge::git::git_key(key).is_some_and(|k| k.runs.value_runs())
}

fn unwrap_git(args: &[Word]) -> Vec<Inner> {
    let mut out = Vec::new();
    // `git difftool -x CMD`, `git rebase --exec CMD`: commands git runs.
    let sub = args.iter().position(|a| !a.text.starts_with('-'));
    if let Some(s) = sub {
        let name = args[s].text.as_str();
        let (short, long): (&str, &str) = match name {
            "difftool" | "mergetool" => ("-x", "--extcmd"),
            "rebase" => ("-x", "--exec"),
            "bisect" if args.get(s + 1).is_some_and(|a| a.text == "run") => {
                return argv_after(&format!("git {name} run"), &args[s + 2..]);
            }
            // `git submodule [--quiet] foreach [--recursive] CMD`: a shell
            // command run in every submodule.
            "submodule" => {
                if let Some(k) = args[s + 1..].iter().position(|a| a.text == "foreach") {
                    let rest: Vec<Word> = args[s + 2 + k..]
                        .iter()
                        .skip_while(|a| a.text.starts_with('-'))
                        .cloned()
                        .collect();
                    out.extend(joined_script("git submodule foreach", &rest));
                }
                ("", "")
            }
            _ => ("", ""),
        };
        if !short.is_empty() {
            let rest = &args[s + 1..];
            for (k, a) in rest.iter().enumerate() {
                let t = a.text.as_str();
                let value = if t == short || t == long {
                    rest.get(k + 1).map(|w| w.text.clone())
                } else {
                    t.strip_prefix(long)
                        .and_then(|v| v.strip_prefix('='))
                        .map(str::to_string)
                };
                if let Some(v) = value {
                    out.push(Inner::Script {
                        label: format!("git {name} {long}"),
                        script: v,
                        privileged: false,
                        stdin_script: false,
                        positional: None,
                    });
                }
            }
        }
    }
    // `ext::CMD ARGS` as a remote's URL: git runs CMD to talk to it (`% `
    // is a space inside an argument, `%%` a percent sign).
    for a in args {
        if let Some(cmd) = a.text.strip_prefix("ext::") {
            let argv: Vec<Word> = ext_words(cmd).into_iter().map(Word::literal).collect();
            out.extend(argv_after("git ext::", &argv));
        }
    }
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        let config = if a == "-c" {
            i += 1;
            args.get(i).map(|w| w.text.as_str())
        } else {
            a.strip_prefix("--config-env=")
                .or_else(|| a.strip_prefix("-c").filter(|s| s.contains('=')))
        };
        if let Some((key, value)) = config.and_then(|c| c.split_once('='))
            && git_config_runs_program(key)
            // A plain alias expands to git arguments, not a shell command.
            && (!key.to_ascii_lowercase().starts_with("alias.") || value.starts_with('!'))
        {
            out.push(Inner::Script {
                label: format!("git -c {key}"),
                script: value.strip_prefix('!').unwrap_or(value).to_string(),
                privileged: false,
                stdin_script: false,
                positional: None,
            });
        }
        if !a.starts_with('-') {
            break;
        }
        if matches!(
            a,
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" | "--super-prefix"
        ) {
            i += 1;
        }
        i += 1;
    }
    out
}

/// The words of git's `ext::` command: split at spaces, `% ` a space
/// within a word, `%%` a percent sign, other `%` placeholders dropped.
fn ext_words(cmd: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' => match chars.next() {
                Some(' ') => word.push(' '),
                Some('%') => word.push('%'),
                _ => {}
            },
            ' ' => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

fn unwrap_ssh(args: &[Word]) -> Vec<Inner> {
    let mut out = Vec::new();
    let short_value = "BbcDEeFIiJLlmOopQRSWw";
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if a.starts_with('-') && a.len() > 1 {
            let cluster: Vec<char> = a[1..].chars().collect();
            for (k, c) in cluster.iter().enumerate() {
                if short_value.contains(*c) {
                    let value: String = if k + 1 == cluster.len() {
                        i += 1;
                        args.get(i).map(|w| w.text.clone()).unwrap_or_default()
                    } else {
                        cluster[k + 1..].iter().collect()
                    };
                    if *c == 'o' {
                        let lower = value.to_ascii_lowercase();
                        if let Some(cmd) = ["proxycommand", "localcommand", "remotecommand"]
                            .iter()
                            .find_map(|opt| {
                                lower
                                    .strip_prefix(opt)
                                    .and_then(|rest| rest.strip_prefix(['=', ' ']))
                                    .map(|r| value[value.len() - r.len()..].to_string())
                            })
                        {
                            out.push(Inner::Script {
                                label: "ssh -o".into(),
                                script: cmd,
                                privileged: false,
                                stdin_script: false,
                                positional: None,
                            });
                        }
                    }
                    break;
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    // args[i] is the host; options may still follow it (`host -N`); the
    // rest is the remote command.
    let mut k = i + 1;
    while k < args.len() && args[k].text.starts_with('-') && args[k].text.len() > 1 {
        let last = args[k].text.chars().last().unwrap_or('-');
        k += if short_value.contains(last) && args[k].text.len() == 2 {
            2
        } else {
            1
        };
    }
    if k < args.len() {
        out.extend(joined_script("ssh", &args[k..]));
    }
    out
}

/// A platform's remote shell given a command, like `ssh host CMD`: `fly ssh
/// console -C CMD`, `gcloud compute ssh VM --command CMD`, `doctl compute
/// ssh DROPLET --ssh-command CMD`, `heroku run CMD`. The command runs on
/// the remote machine; what it does there (`printenv DATABASE_URL`, `cat
/// ~/.ssh/id_rsa`) is judged as on this line.
fn unwrap_platform_shell(name: &str, args: &[Word]) -> Vec<Inner> {
    let words: Vec<&str> = args
        .iter()
        .map(|w| w.text.as_str())
        .filter(|w| !w.starts_with('-'))
        .take(4)
        .collect();
    let has = |sub: &[&str]| words.windows(sub.len()).any(|w| w == sub);
    let option = |names: &[&str]| -> Vec<Inner> {
        let mut out = Vec::new();
        for (k, a) in args.iter().enumerate() {
            let t = a.text.as_str();
            if names.contains(&t) {
                if let Some(v) = args.get(k + 1) {
                    out.push(script(&format!("{name} ssh"), v, false));
                }
            } else if let Some((opt, v)) = t.split_once('=')
                && names.contains(&opt)
            {
                out.push(Inner::Script {
                    label: format!("{name} ssh"),
                    script: v.to_string(),
                    privileged: false,
                    stdin_script: false,
                    positional: None,
                });
            }
        }
        out
    };
    match name {
        "flyctl" | "fly" if has(&["ssh", "console"]) => option(&["-C", "--command"]),
        "gcloud" if has(&["ssh"]) => option(&["--command"]),
        "doctl" if has(&["compute", "ssh"]) => option(&["--ssh-command"]),
        "heroku" => {
            // heroku run [-a APP] [-s SIZE] [-e K=V] [-x] [--no-tty] CMD...;
            // its own options may also follow the command (`heroku run bash
            // -a app`), up to a `--`.
            let Some(k) = args
                .iter()
                .position(|w| matches!(w.text.as_str(), "run" | "run:detached"))
            else {
                return Vec::new();
            };
            let mut command = Vec::new();
            let mut rest = args[k + 1..].iter();
            while let Some(w) = rest.next() {
                match w.text.as_str() {
                    "--" => {
                        command.extend(rest.cloned());
                        break;
                    }
                    "-a" | "--app" | "-r" | "--remote" | "-s" | "--size" | "-e" | "--env"
                    | "--type" => {
                        rest.next();
                    }
                    "-x" | "--exit-code" | "--no-tty" | "--no-notify" => {}
                    t if t.starts_with("--") && t.contains('=') => {}
                    _ => command.push(w.clone()),
                }
            }
            joined_script("heroku run", &command)
        }
        _ => Vec::new(),
    }
}

fn unwrap_container(name: &str, args: &[Word]) -> Vec<Inner> {
    let global = Opts {
        short_value: "cHl",
        long_value: &["context", "host", "log-level", "config"],
    };
    let mut i = global.first_operand(args);
    let mut label = format!("{name} exec");
    if args.get(i).map(|w| w.text.as_str()) == Some("compose") {
        // docker compose [-f F] [-p P] exec|run [opts] SERVICE CMD...
        let compose = Opts {
            short_value: "fp",
            long_value: &[
                "file",
                "project-name",
                "env-file",
                "profile",
                "project-directory",
                "ansi",
                "parallel",
                "progress",
            ],
        };
        let rest = &args[i + 1..];
        i = i + 1 + compose.first_operand(rest);
        label = format!("{name} compose exec");
        if !matches!(args.get(i).map(|w| w.text.as_str()), Some("exec" | "run")) {
            return Vec::new();
        }
    } else if args.get(i).map(|w| w.text.as_str()) != Some("exec") {
        return Vec::new();
    }
    let rest = &args[i + 1..];
    let exec_opts = Opts {
        short_value: "euw",
        long_value: &["env", "env-file", "user", "workdir", "detach-keys"],
    };
    let c = exec_opts.first_operand(rest);
    match rest.get(c + 1..) {
        Some(cmd) if !cmd.is_empty() => vec![Inner::Argv {
            label,
            argv: cmd.to_vec(),
            privileged: false,
            keeps_stdin: true,
        }],
        _ => Vec::new(),
    }
}

/// Package and environment runners: `npx CMD`, `pnpm exec CMD`, `uv run CMD`,
/// `poetry run CMD`, `bundle exec CMD` ... run a program by name.
fn unwrap_runner(name: &str, args: &[Word]) -> Vec<Inner> {
    let opts = |short_value, long_value| Opts {
        short_value,
        long_value,
    };
    // `npx -c 'CMD'`, `npm exec -c 'CMD'`: a shell string.
    let shell_flag = args
        .iter()
        .position(|a| a.text == "-c" || a.text == "--call");
    match name {
        "npx" | "pnpx" | "bunx" => {
            if let Some(k) = shell_flag {
                return args
                    .get(k + 1)
                    .map(|s| vec![script(&format!("{name} -c"), s, false)])
                    .unwrap_or_default();
            }
            let i = opts(
                "p",
                &["package", "prefix", "registry", "cache", "userconfig"],
            )
            .first_operand(args);
            argv_after(name, &args[i.min(args.len())..])
        }
        "npm" | "pnpm" | "yarn" | "bun" => {
            // Global options may come first: `pnpm -r exec`, `pnpm --filter
            // web exec`, `npm --prefix app exec`.
            let s = opts(
                "FCw",
                &[
                    "filter",
                    "dir",
                    "prefix",
                    "workspace",
                    "loglevel",
                    "reporter",
                    "cwd",
                ],
            )
            .first_operand(args);
            let sub = args.get(s).map(|w| w.text.as_str()).unwrap_or("");
            if !matches!(sub, "exec" | "x" | "dlx") {
                return Vec::new();
            }
            let rest = &args[s + 1..];
            if let Some(k) = rest
                .iter()
                .position(|a| a.text == "-c" || a.text == "--call")
            {
                return rest
                    .get(k + 1)
                    .map(|s| vec![script(&format!("{name} {sub} -c"), s, false)])
                    .unwrap_or_default();
            }
            let i = opts("pC", &["package", "workspace", "filter", "dir", "prefix"])
                .first_operand(rest);
            argv_after(&format!("{name} {sub}"), &rest[i.min(rest.len())..])
        }
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "pixi" => {
            let sub = args.iter().position(|w| w.text == "run");
            let Some(k) = sub else { return Vec::new() };
            let rest = &args[k + 1..];
            let i = opts(
                "p",
                &[
                    "with",
                    "python",
                    "project",
                    "directory",
                    "env-file",
                    "extra",
                    "group",
                    "package",
                    "index",
                    "index-url",
                    "environment",
                    "manifest-path",
                    "frozen-env",
                ],
            )
            .first_operand(rest);
            argv_after(&format!("{name} run"), &rest[i.min(rest.len())..])
        }
        "bundle" | "mise" | "asdf" | "rbenv" | "pyenv" | "nodenv" | "stack" | "cabal" | "opam"
        | "dune" | "esy" => {
            let Some(k) = args.iter().position(|w| w.text == "exec" || w.text == "x") else {
                return Vec::new();
            };
            let rest = &args[k + 1..];
            let i = opts("", &[]).first_operand(rest);
            argv_after(&format!("{name} exec"), &rest[i.min(rest.len())..])
        }
        "conda" | "mamba" | "micromamba" => {
            let Some(k) = args.iter().position(|w| w.text == "run") else {
                return Vec::new();
            };
            let rest = &args[k + 1..];
            let i = opts("np", &["name", "prefix", "cwd"]).first_operand(rest);
            argv_after(&format!("{name} run"), &rest[i.min(rest.len())..])
        }
        "direnv" => {
            // direnv exec DIR CMD...
            if args.first().is_some_and(|w| w.text == "exec") && args.len() > 2 {
                return argv_after("direnv exec", &args[2..]);
            }
            Vec::new()
        }
        "nix-shell" => args
            .iter()
            .position(|a| a.text == "--run" || a.text == "--command")
            .and_then(|k| args.get(k + 1))
            .map(|s| vec![script("nix-shell --run", s, false)])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Whether a wrapper label is a package or environment runner, whose
/// inner command is any tool the project installed.
pub fn is_runner_label(label: &str) -> bool {
    let first = label.split(' ').next().unwrap_or("");
    matches!(
        first,
        "npx"
            | "pnpx"
            | "bunx"
            | "npm"
            | "pnpm"
            | "yarn"
            | "bun"
            | "uv"
            | "poetry"
            | "pipenv"
            | "pdm"
            | "hatch"
            | "rye"
            | "pixi"
            | "bundle"
            | "mise"
            | "asdf"
            | "rbenv"
            | "pyenv"
            | "nodenv"
            | "conda"
            | "mamba"
            | "micromamba"
            | "direnv"
            | "stack"
            | "cabal"
            | "opam"
            | "dune"
            | "esy"
            // Their single-word operands are the project's package scripts
            // and binaries (`start-server-and-test dev 3000 test`).
            | "concurrently"
            | "start-server-and-test"
            | "server-test"
    )
}

fn unwrap_kubectl(name: &str, args: &[Word]) -> Vec<Inner> {
    let Some(pos) = args.iter().position(|w| w.text == "exec") else {
        return Vec::new();
    };
    match args[pos..].iter().position(|w| w.text == "--") {
        Some(dash) => {
            let cmd = &args[pos + dash + 1..];
            if cmd.is_empty() {
                Vec::new()
            } else {
                vec![Inner::Argv {
                    label: format!("{name} exec"),
                    argv: cmd.to_vec(),
                    privileged: false,
                    keeps_stdin: true,
                }]
            }
        }
        None => Vec::new(),
    }
}

fn unwrap_tar(args: &[Word]) -> Vec<Inner> {
    let mut out = Vec::new();
    for (k, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        let value = if matches!(
            t,
            "-I" | "--to-command"
                | "--use-compress-program"
                | "--info-script"
                | "--new-volume-script"
                | "-F"
        ) {
            args.get(k + 1).map(|w| w.text.clone())
        } else if let Some((opt, v)) = t.split_once('=') {
            match opt {
                "--to-command"
                | "--use-compress-program"
                | "--info-script"
                | "--new-volume-script" => Some(v.to_string()),
                "--checkpoint-action" => v.strip_prefix("exec=").map(str::to_string),
                _ => None,
            }
        } else {
            None
        };
        if let Some(v) = value {
            out.push(Inner::Script {
                label: "tar".into(),
                script: v,
                privileged: false,
                stdin_script: false,
                positional: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split(' ').map(Word::literal).collect()
    }

    #[test]
    fn options_with_values_are_skipped() {
        let sudo = Opts {
            short_value: "u",
            long_value: &["user"],
        };
        assert_eq!(sudo.first_operand(&words("-u root rm -rf /")), 2);
        assert_eq!(sudo.first_operand(&words("-uroot rm")), 1);
        assert_eq!(sudo.first_operand(&words("--user root rm")), 2);
        assert_eq!(sudo.first_operand(&words("--user=root rm")), 1);
        assert_eq!(sudo.first_operand(&words("-- rm")), 1);
    }

    #[test]
    fn prefix_wrappers_skip_their_options_and_leading_value() {
        let at = |name, line| prefix_wrapper_command_index(name, &words(line));
        assert_eq!(at("nice", "-n 5 rm -rf /"), 2);
        assert_eq!(at("nohup", "rm -rf /"), 0);
        assert_eq!(at("chrt", "10 rm"), 1);
        assert_eq!(at("taskset", "-p 3 rm"), 3);
        assert_eq!(at("setarch", "x86_64 -R -L rm"), 3);
        assert_eq!(at("stdbuf", "--output=L rm"), 1);
    }

    #[test]
    fn runuser_form_is_told_by_its_options() {
        assert!(runuser_runs_as_user(&words("-u nobody -- rm")));
        assert!(runuser_runs_as_user(&words("--user=nobody rm")));
        assert!(!runuser_runs_as_user(&words("nobody -- -u")));
        assert_eq!(
            runuser_shell_string(&words("nobody -c id")).as_deref(),
            Some("id")
        );
        assert_eq!(
            runuser_shell_string(&words("nobody --session-command=id")).as_deref(),
            Some("id")
        );
        assert_eq!(runuser_shell_string(&words("nobody -c")), None);
    }

    #[test]
    fn parallel_inputs_fill_the_slot_or_are_appended() {
        let texts = |runs: Vec<Vec<Word>>| -> Vec<String> {
            runs.iter()
                .map(|argv| {
                    argv.iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect()
        };
        let a = Word::literal("a");
        let b = Word::literal("b");
        assert_eq!(
            texts(parallel_runs(&words("rm {}.txt"), &[&a, &b])),
            ["rm a.txt", "rm b.txt"]
        );
        assert_eq!(texts(parallel_runs(&words("rm -f"), &[&a])), ["rm -f a"]);
        assert_eq!(texts(parallel_runs(&words("rm -f"), &[])), ["rm -f"]);
    }

    #[test]
    fn trap_action_needs_a_signal_after_it() {
        let action = |line| trap_action(&words(line)).map(|w| w.text.clone());
        assert_eq!(action("rm EXIT").as_deref(), Some("rm"));
        assert_eq!(action("-- rm EXIT").as_deref(), Some("rm"));
        assert_eq!(action("rm"), None);
        assert_eq!(action("-p EXIT"), None);
    }

    #[test]
    fn aq_runs_only_with_run_before_the_separator() {
        assert!(is_aq_run(&words("run --sandbox -- rm")));
        assert!(is_aq_run(&words("mcp run -- server")));
        assert!(!is_aq_run(&words("check -- run")));
    }

    #[test]
    fn leading_values_are_skipped_after_options() {
        let argv = |inner: Vec<Inner>| -> Vec<String> {
            inner
                .into_iter()
                .flat_map(|i| match i {
                    Inner::Argv { argv, .. } => argv.into_iter().map(|w| w.text).collect(),
                    Inner::Script { script, .. } => vec![script],
                })
                .collect()
        };
        let timeout = Opts::new("sk", &["signal", "kill-after"]);
        assert_eq!(
            argv(argv_after_options(
                "timeout",
                &words("-s KILL 5 rm x"),
                &timeout,
                1,
                false
            )),
            ["rm", "x"]
        );
        assert!(argv_after_options("timeout", &words("-s KILL 5"), &timeout, 1, false).is_empty());
        assert!(argv_after_options("timeout", &words("-s"), &timeout, 1, false).is_empty());
    }

    fn remote_script(program: &str, line: &str) -> Vec<String> {
        unwrap_platform_shell(program, &words(line))
            .into_iter()
            .map(|inner| match inner {
                Inner::Script { script, .. } => script,
                Inner::Argv { argv, .. } => argv
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            })
            .collect()
    }

    #[test]
    fn platform_shells_run_the_command_they_are_given() {
        assert_eq!(remote_script("fly", "ssh console -a web -C env"), ["env"]);
        assert_eq!(
            remote_script("flyctl", "ssh console --command=env"),
            ["env"]
        );
        assert_eq!(
            remote_script("gcloud", "compute ssh vm --command id"),
            ["id"]
        );
        assert_eq!(
            remote_script("doctl", "compute ssh d --ssh-command id"),
            ["id"]
        );
        assert_eq!(remote_script("heroku", "run bash -a app"), ["bash"]);
        assert_eq!(remote_script("heroku", "run -a app -- ls -a"), ["ls -a"]);
        assert!(remote_script("fly", "deploy -C fly.toml").is_empty());
        assert!(remote_script("gcloud", "run deploy api --command x").is_empty());
        assert!(remote_script("heroku", "ps -a app").is_empty());
    }

    /// What `line` runs through a wrapper described in programs.toml:
    /// the first word of each inner command, or each inner script.
    fn runs_by_model(line: &str) -> Vec<String> {
        let w = words(line);
        unwrap_by_model(&w[0].text, &w[1..])
            .into_iter()
            .map(|i| match i {
                Inner::Argv { argv, .. } => argv[0].text.clone(),
                Inner::Script { script, .. } => script,
            })
            .collect()
    }

    #[test]
    fn wrappers_described_as_data_run_their_command() {
        // Operands after options and NAME=VALUE assignments.
        assert_eq!(runs_by_model("cross-env A=1 B=2 jest --ci"), ["jest"]);
        assert_eq!(runs_by_model("env-cmd -f .env.test vitest"), ["vitest"]);
        assert_eq!(runs_by_model("xvfb-run -a -s x npm test"), ["npm"]);
        assert_eq!(runs_by_model("watchexec -e rs -- cargo test"), ["cargo"]);
        assert_eq!(runs_by_model("chronic rm -rf /"), ["rm"]);
        // Each operand a command line; ports, URLs and npm:NAME are values.
        assert_eq!(
            runs_by_model("start-server-and-test dev 3000 test"),
            ["dev", "test"]
        );
        assert_eq!(runs_by_model("concurrently -n a,b npm:dev vite"), ["vite"]);
        // After a mode's words: after `--` there, else after its options.
        assert_eq!(
            runs_by_model("dotenvx run -f .env -- node app.js"),
            ["node"]
        );
        assert_eq!(runs_by_model("perf record -g ls"), ["ls"]);
        assert!(runs_by_model("perf report -i perf.data").is_empty());
        // `dotenv run -- CMD`: the mode's cap finds it, not the operands'.
        assert_eq!(runs_by_model("dotenv run -- pytest"), ["pytest"]);
        // An option there to run a command.
        assert_eq!(runs_by_model("nodemon --exec python"), ["python"]);
    }

    #[test]
    fn runners_find_exec_after_global_options() {
        let w = words("pnpm -r --filter web exec tsc");
        let inner = unwrap_runner("pnpm", &w[1..]);
        assert!(matches!(&inner[..], [Inner::Argv { argv, .. }] if argv[0].text == "tsc"));
    }

    #[test]
    fn sed_reads_and_writes_files_named_in_its_script() {
        let files = |script: &str| -> Vec<String> {
            sed_files(&[script])
                .into_iter()
                .filter_map(|i| match i {
                    Inner::Argv { argv, .. } => Some(
                        argv.iter()
                            .map(|w| w.text.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                    ),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(files("r /root/.ssh/id_rsa"), ["cat /root/.ssh/id_rsa"]);
        assert_eq!(files("/marker/r snippet.txt"), ["cat snippet.txt"]);
        assert_eq!(files("$r notes; more"), ["cat notes; more"]);
        assert_eq!(files("w /root/.bashrc"), ["tee /root/.bashrc"]);
        assert_eq!(files("1,5W out.txt"), ["tee out.txt"]);
        assert_eq!(files("s/a/b/gw changes.log"), ["tee changes.log"]);
        assert!(files("s/wr/rw/g").is_empty());
        assert!(files("1,20p").is_empty());
        assert!(files("/^#/d;s/x/y/").is_empty());
        assert!(files("s|/usr/r|/opt/w|").is_empty());
    }

    #[test]
    fn sed_runs_its_pattern_space_with_the_e_flag() {
        let runs = |script: &str| {
            unwrap_sed(&[Word::literal(script)])
                .into_iter()
                .filter_map(|i| match i {
                    Inner::Script {
                        script,
                        stdin_script,
                        ..
                    } => Some((script, stdin_script)),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            runs("s/^//e"),
            [("\"$SED_PATTERN_SPACE\"".to_string(), true)]
        );
        assert_eq!(runs("1d;s/x/y/ge").len(), 1);
        assert!(runs("s/version/release/g").is_empty());
        assert!(runs("s/e/E/").is_empty());
        assert_eq!(runs("e date")[0].0, "date");
    }

    #[test]
    fn shells_with_versions_are_shells() {
        assert!(is_shell("bash"));
        assert!(is_shell("bash5"));
        assert!(is_shell("zsh"));
        assert!(!is_shell("bashful"));
    }
}
