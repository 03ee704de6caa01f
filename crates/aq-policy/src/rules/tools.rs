//! Tools with subcommands: git, containers, package managers, cloud CLIs,
//! service managers, cron, privilege tools, databases, decoders.

use aq_shell::Command;

use super::{Ctx, flag_values_text, has_flag, is_flag, operands, subcommand};
use crate::catalog::RuleId;
use crate::rules::net::git_subcommand;

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else {
        return;
    };
    // `curl --unix-socket /var/run/docker.sock ...`: the Docker API, which
    // starts privileged containers, without the docker CLI.
    if let Some(sock) = docker_socket_client(c, name) {
        ctx.hit(
            RuleId::DockerPrivileged,
            i,
            format!("`{name}` talks to the Docker API at {sock}"),
        );
    }
    let frameworks = [
        "php",
        "rails",
        "rake",
        "prisma",
        "dotnet",
        "mix",
        "knex",
        "sequelize",
        "typeorm",
        "alembic",
        "django-admin",
    ];
    if (frameworks.contains(&name) || name.starts_with("python"))
        && let Some(what) = framework_db_reset(c)
    {
        ctx.hit(
            RuleId::DbDestructiveSql,
            i,
            format!("`{what}` drops or empties the database"),
        );
    }
    match name {
        // hub and yadm run git with its own subcommands (`hub push -f`,
        // `yadm push -f` of the dotfiles repository).
        "git" | "hub" | "yadm" => check_git(ctx, i),
        "docker" | "podman" | "nerdctl" | "docker-compose" => check_docker(ctx, i, name),
        "ctr" | "lxc" | "incus" => check_other_containers(ctx, i, name),
        // `sudo --version`, `sudo -h`: asking the tool about itself runs nothing.
        "sudo" | "doas" | "su" | "runuser" | "pkexec" | "run0" | "sudoedit"
            if !is_about_itself(c) =>
        {
            ctx.hit(RuleId::PrivSudo, i, format!("`{name}` raises privileges"))
        }
        "sudo" | "doas" | "su" | "runuser" | "pkexec" | "run0" | "sudoedit" => {}
        // `crontab --help`, `crontab -V`: the tool about itself.
        "crontab" | "fcrontab" if is_about_itself(c) => {}
        // fcron's `fcrontab` takes crontab's options.
        "crontab" | "fcrontab" => {
            let args: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
            if args.iter().all(|a| *a == "-l" || a.starts_with("-u")) && args.contains(&"-l") {
                return;
            }
            if args.contains(&"-r") {
                ctx.hit(RuleId::PersistCrontab, i, "removes the cron table");
            } else {
                ctx.hit(RuleId::PersistCrontab, i, "installs or edits cron jobs");
            }
        }
        "at" | "batch" => ctx.hit(RuleId::PersistCrontab, i, "schedules a job to run later"),
        // `ssh-copy-id HOST`: a key added to the host's authorized_keys
        // (this machine's, for `localhost`); `-n` only shows what it would.
        "ssh-copy-id" if !is_about_itself(c) && !c.args().iter().any(|a| a.text == "-n") => ctx.hit(
            RuleId::PersistSshAuthorizedKeys,
            i,
            "ssh-copy-id adds a key to the host's ~/.ssh/authorized_keys: its holder logs in there",
        ),
        "systemctl" => check_systemctl(ctx, i),
        // `loginctl enable-linger`: the user's services start at boot and
        // outlive every login, the agent's session included.
        "loginctl" if subcommand(c) == Some("enable-linger") => ctx.hit(
            RuleId::PersistSystemd,
            i,
            "loginctl enable-linger keeps the user's services running without a login",
        ),
        "service" => {
            let ops = operands(c);
            let action = ops.get(1).map(|w| w.text.as_str()).unwrap_or("");
            let unit = ops.first().map(|w| w.text.as_str()).unwrap_or("");
            if matches!(action, "stop" | "disable") && is_audit_service(unit) {
                ctx.hit(RuleId::AntiAuditDisable, i, format!("stops {unit}"));
            } else if !matches!(action, "status" | "") {
                ctx.hit(RuleId::SysServiceControl, i, format!("`{}`", c.display()));
            }
        }
        "launchctl" => {
            let sub = subcommand(c).unwrap_or("");
            if matches!(
                sub,
                "load" | "bootstrap" | "submit" | "enable" | "kickstart"
            ) {
                ctx.hit(
                    RuleId::PersistLaunchd,
                    i,
                    format!("launchctl {sub} starts an agent that persists"),
                );
            } else if matches!(sub, "unload" | "bootout" | "disable" | "stop" | "remove") {
                ctx.hit(RuleId::SysServiceControl, i, format!("launchctl {sub}"));
            }
        }
        // Any unit systemd-run starts is the service manager's child, not
        // this command's: outside the agent's process tree and its sandbox,
        // and kept after the agent exits (or scheduled, with a timer).
        "systemd-run" if !is_about_itself(c) => {
            let timer = c.args().iter().any(|a| {
                a.text.starts_with("--on-")
                    || a.text == "--remain-after-exit"
                    || a.text.starts_with("--timer-property")
            });
            ctx.hit(
                RuleId::PersistSystemd,
                i,
                if timer {
                    "systemd-run schedules a unit that outlives this command"
                } else {
                    "systemd-run runs the command as a unit of the service manager, outside this session's process tree"
                },
            );
        }
        "ssh-add" => {
            let list = c.args().iter().any(|a| a.text == "-l" || a.text == "-L");
            ctx.hit(
                RuleId::SecretLocation,
                i,
                if list {
                    "ssh-add lists the keys the ssh agent holds"
                } else {
                    "ssh-add loads or removes private keys in the agent"
                },
            );
        }
        "shutdown" | "reboot" | "halt" | "poweroff" | "init" | "telinit" => ctx.hit(
            RuleId::SysServiceControl,
            i,
            format!("`{name}` stops or restarts the machine"),
        ),
        "npm" | "pnpm" | "yarn" | "bun" | "npx" | "bunx" | "pnpx" | "pip" | "pip3" | "pipx"
        | "uv" | "uvx" | "poetry" | "pipenv" | "conda" | "mamba" | "cargo" | "go" | "gem"
        | "bundle" | "brew" | "apt" | "apt-get" | "dnf" | "yum" | "pacman" | "apk" | "zypper"
        | "port" | "snap" | "flatpak" | "nix-env" | "composer" | "dotnet" | "nuget" | "rustup"
        | "deno" | "corepack" | "mvn" | "gradle" | "easy_install" | "R" | "cpan" | "cpanm"
        | "luarocks" | "opam" | "stack" | "cabal" | "mix" | "hex" | "swift" | "dart"
        | "flutter" | "nix" | "nix-shell" | "micromamba" => check_packages(ctx, i, name),
        n if n.starts_with("python") => {
            // `python -m pip install ...`
            let args = c.args();
            if let Some(k) = args.iter().position(|a| a.text == "-m")
                && args.get(k + 1).is_some_and(|m| {
                    matches!(
                        m.text.as_str(),
                        "pip" | "pip3" | "ensurepip" | "pipx" | "uv"
                    )
                })
                && args.get(k + 2).is_some_and(|s| {
                    matches!(s.text.as_str(), "install" | "uninstall" | "download")
                })
            {
                ctx.hit(
                    RuleId::PkgInstall,
                    i,
                    format!("`{}` installs packages", c.display()),
                );
            }
        }
        "make" | "gmake" | "ninja" if c.args().iter().any(|a| a.text == "install") => {
            check_install_target(ctx, i)
        }
        // `meson install -C build`: into the prefix it was set up with
        // (`/usr/local` unless `--destdir` stages it elsewhere).
        "meson" if subcommand(c) == Some("install") => check_install_target(ctx, i),
        "cmake" if c.args().iter().any(|a| a.text == "--install") => check_install_target(ctx, i),
        "playwright" if subcommand(c) == Some("install") => {
            ctx.hit(
                RuleId::PkgInstall,
                i,
                "playwright install downloads browsers (and system packages with --with-deps)",
            );
        }
        _ if super::sql::is_database_client(ctx, i, name) => {
            super::sql::check_client(ctx, i, name)
        }
        "base64" | "base32" | "basenc" | "openssl" | "xxd" | "uudecode" => {
            check_decode_to_file(ctx, i, name)
        }
        _ => {}
    }
}

/// A flake reference that is not the project's own: `github:o/r`,
/// `nixpkgs#jq`, `git+https://…`; not `.#app`, `./sub#x`, `/abs/path`,
/// `path:…`, nor a word that is no flake reference (`make` after `-c`).
fn remote_flake(r: &str) -> bool {
    !(r.starts_with("path:") || r.starts_with(['.', '/', '~', '-']))
        && (r.contains('#') || r.contains(':'))
}

/// `sudo --version`, `systemd-run -h`: asking the tool about itself runs nothing.
fn is_about_itself(c: &Command) -> bool {
    !c.args().is_empty()
        && c.args()
            .iter()
            .all(|a| matches!(a.text.as_str(), "--version" | "-V" | "--help" | "-h"))
}

fn check_git(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    // `git -c key=program`: the nested command is judged on its own; the
    // option is at least an ask.
    let args = c.args();
    for (k, a) in args.iter().enumerate() {
        if a.text == "-c"
            && let Some(kv) = args.get(k + 1)
            && git_key_runs_program(&kv.text)
        {
            ctx.hit(RuleId::GitConfigExec, i, format!("git -c {}", kv.text));
        }
        if a.text.starts_with("--upload-pack")
            || a.text.starts_with("--receive-pack")
            || a.text == "--exec-path"
        {
            ctx.hit(RuleId::GitConfigExec, i, a.text.clone());
        }
    }
    let Some(sub) = git_subcommand(c).map(str::to_string) else {
        return;
    };
    if GIT_WRITES.contains(&sub.as_str()) {
        for dir in git_dirs(ctx, i, &[]) {
            super::files::check_area(
                ctx,
                i,
                dir.trim(),
                &format!("`git {sub}` changes the repository at"),
                None,
            );
        }
    }
    let c = &ctx.commands()[i];
    // `git push --help`, `git help push`: the manual, nothing more.
    let texts: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
    if sub == "help" || super::platforms::asks_for_help(&texts) {
        return;
    }
    let sub_args: Vec<&str> = {
        let pos = c.args().iter().position(|a| a.text == sub).unwrap_or(0);
        c.args()[pos + 1..]
            .iter()
            .map(|w| w.text.as_str())
            .collect()
    };
    let has = |f: &str| {
        sub_args
            .iter()
            .any(|a| *a == f || super::option_value(a, f).is_some())
    };
    let short = |ch: char| {
        sub_args
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(ch))
    };
    match sub.as_str() {
        // `git send-pack --force REMOTE REF`: the plumbing under push.
        "push" | "send-pack" => {
            let refspecs: Vec<&str> = sub_args
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect();
            let plus_refspec = refspecs.iter().skip(1).any(|r| r.starts_with('+'));
            if has("--force")
                || short('f')
                || plus_refspec
                || has("--mirror")
                || has("--prune") && has("--all")
            {
                ctx.hit(
                    RuleId::GitPushForce,
                    i,
                    format!("`{}` rewrites remote history", c.display()),
                );
                return;
            }
            let deleting = has("--delete") || short('d');
            let deleted: Vec<&str> = if deleting {
                refspecs.iter().skip(1).copied().collect()
            } else {
                refspecs
                    .iter()
                    .skip(1)
                    .filter_map(|r| r.strip_prefix(':'))
                    .collect()
            };
            if deleted.iter().any(|b| is_protected_branch(b)) {
                ctx.hit(
                    RuleId::GitPushDeleteProtected,
                    i,
                    format!("deletes {} on the remote", deleted.join(", ")),
                );
                return;
            }
            if has("--force-with-lease") || has("--force-if-includes") {
                ctx.hit(
                    RuleId::GitPushForceWithLease,
                    i,
                    format!("`{}`", c.display()),
                );
                return;
            }
            ctx.hit(RuleId::GitPush, i, format!("`{}`", c.display()));
        }
        "reset" if has("--hard") || has("--merge") || has("--keep") => ctx.hit(
            RuleId::GitDiscardChanges,
            i,
            "git reset --hard discards uncommitted changes",
        ),
        "clean" if (short('f') || has("--force")) && !(short('n') || has("--dry-run")) => ctx.hit(
            RuleId::GitDiscardChanges,
            i,
            "git clean deletes untracked files",
        ),
        "checkout" | "switch" if short('f') || has("--force") || has("--discard-changes") => ctx
            .hit(
                RuleId::GitDiscardChanges,
                i,
                "forced checkout discards changes",
            ),
        "checkout"
            if sub_args.contains(&"--")
                && sub_args.iter().skip_while(|a| **a != "--").nth(1).is_some()
                || sub_args.first() == Some(&".") =>
        {
            ctx.hit(
                RuleId::GitDiscardChanges,
                i,
                "git checkout of paths discards their uncommitted changes",
            )
        }
        "restore" if !has("--staged") && !short('S') || has("--worktree") || short('W') => ctx.hit(
            RuleId::GitDiscardChanges,
            i,
            "git restore discards uncommitted changes",
        ),
        "branch" if short('D') || (has("--delete") && has("--force")) => ctx.hit(
            RuleId::GitDiscardChanges,
            i,
            "git branch -D deletes a branch even if it is not merged",
        ),
        "branch" if short('f') || has("--force") => ctx.hit(
            RuleId::GitDiscardChanges,
            i,
            "git branch --force moves a branch, dropping the commits only it had",
        ),
        "stash" if matches!(sub_args.first(), Some(&"drop") | Some(&"clear")) => {
            ctx.hit(RuleId::GitDiscardChanges, i, "drops stashed work")
        }
        "rm" if (short('r') || has("--recursive")) && !has("--cached") => ctx.hit(
            RuleId::GitDiscardChanges,
            i,
            "git rm -r deletes tracked files and their uncommitted changes",
        ),
        "filter-branch" | "filter-repo" => ctx.hit(
            RuleId::GitDiscardChanges,
            i,
            "rewrites the repository history",
        ),
        "reflog" if sub_args.first() == Some(&"expire") || sub_args.first() == Some(&"delete") => {
            ctx.hit(
                RuleId::GitDiscardChanges,
                i,
                "expires the reflog, the last way back",
            )
        }
        "gc" if sub_args.iter().any(|a| a.starts_with("--prune=now")) => ctx.hit(
            RuleId::GitDiscardChanges,
            i,
            "prunes unreachable commits now",
        ),
        "config" => check_git_config(ctx, i, &sub_args),
        // Other ways to send commits to a remote: `git subtree push`,
        // git-town's `ship`/`sync`/`propose`, `git lfs push`, `git svn
        // dcommit`, `git p4 submit`, git-review.
        "subtree" | "lfs" if sub_args.first() == Some(&"push") => ctx.hit(
            RuleId::GitPush,
            i,
            format!("`{}` pushes to a remote", c.display()),
        ),
        "town"
            if matches!(
                sub_args.first(),
                Some(&"ship" | &"sync" | &"propose" | &"kill")
            ) =>
        {
            ctx.hit(
                RuleId::GitPush,
                i,
                format!("`{}` pushes branches to the remote", c.display()),
            )
        }
        "svn" if sub_args.first() == Some(&"dcommit") => ctx.hit(
            RuleId::GitPush,
            i,
            format!("`{}` commits to the Subversion server", c.display()),
        ),
        "p4" if sub_args.first() == Some(&"submit") => ctx.hit(
            RuleId::GitPush,
            i,
            format!("`{}` submits to the Perforce server", c.display()),
        ),

        // `git worktree add ../x BRANCH`: a checkout written outside the
        // workspace, judged by where it lands.
        "worktree" if sub_args.first() == Some(&"add") => {
            let mut k = 1;
            let mut path = None;
            while k < sub_args.len() {
                let a = sub_args[k];
                k += 1;
                if matches!(a, "-b" | "-B" | "--reason") {
                    k += 1;
                } else if !a.starts_with('-') {
                    path = Some(a.to_string());
                    break;
                }
            }
            if let Some(path) = path {
                super::files::check_area(
                    ctx,
                    i,
                    &path,
                    "writes",
                    Some(super::files::WriteMode::Into),
                );
            }
        }
        "diff" | "log" | "show" | "format-patch"
            if (has("--ext-diff")
                || has("--output")
                || sub_args.iter().any(|a| a.starts_with("--output"))) =>
        {
            ctx.hit(
                RuleId::GitConfigExec,
                i,
                "runs an external diff program or writes output to a file",
            );
        }
        _ => {}
    }
}

/// What a `git config` line does, read as git reads it: its options (those
/// that take a value, `-f FILE`, `--file FILE`, `--type T`, `--comment C`,
/// `--value V`, `--default D`, `--blob B`, are not the key), the mode
/// (`--get`, `--list`, `--unset`, `--add`, `--replace-all`) or the
/// subcommand of git 2.46 (`git config set KEY VALUE`, `get`, `list`,
/// `unset`, `rename-section`, `remove-section`, `edit`), the key and the
/// value it sets.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct GitConfigWrite {
    /// The files `-f`/`--file` name.
    pub files: Vec<String>,
    /// Whether it writes (sets or adds a value).
    pub(crate) sets: bool,
    pub key: Option<String>,
    pub value: Option<String>,
}

pub(crate) fn read_git_config(sub_args: &[&str]) -> GitConfigWrite {
    const TAKES_VALUE: &[&str] = &[
        "-f",
        "--file",
        "--blob",
        "--type",
        "--default",
        "--comment",
        "--value",
    ];
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
        "-l",
        "--unset",
        "--unset-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
    ];
    let mut out = GitConfigWrite::default();
    let mut positional: Vec<&str> = Vec::new();
    let mut mode_reads = false;
    let mut k = 0;
    let mut after_dashes = false;
    while k < sub_args.len() {
        let a = sub_args[k];
        k += 1;
        if after_dashes || !a.starts_with('-') || a == "-" {
            positional.push(a);
            continue;
        }
        if a == "--" {
            after_dashes = true;
            continue;
        }
        if TAKES_VALUE.contains(&a) {
            let v = sub_args.get(k).copied().unwrap_or("");
            k += 1;
            if matches!(a, "-f" | "--file") {
                out.files.push(v.to_string());
            }
            continue;
        }
        if let Some((name, v)) = a.split_once('=') {
            if name == "--file" {
                out.files.push(v.to_string());
            }
            if READS.contains(&name) {
                mode_reads = true;
            }
            continue;
        }
        if let Some(v) = a.strip_prefix("-f")
            && !v.is_empty()
            && !a.starts_with("--")
        {
            out.files.push(v.to_string());
            continue;
        }
        if READS.contains(&a) {
            mode_reads = true;
        }
    }
    // git 2.46's subcommands: a key always holds a dot, a subcommand never.
    if let Some(first) = positional.first().copied()
        && !first.contains('.')
    {
        match first {
            "set" => {
                positional.remove(0);
            }
            _ => return out,
        }
    }
    if mode_reads || positional.len() < 2 {
        return out;
    }
    out.sets = true;
    out.key = Some(positional[0].to_string());
    out.value = Some(positional[1].to_string());
    out
}

fn check_git_config(ctx: &mut Ctx, i: usize, sub_args: &[&str]) {
    let w = read_git_config(sub_args);
    // `git config -f ~/.aws/credentials --list`: git parses any INI file
    // and prints its keys and values.
    if !w.sets
        && let Some((f, kind)) = w
            .files
            .iter()
            .find_map(|f| crate::paths::secret_kind(f).map(|k| (f.clone(), k)))
    {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!("git config -f {f} prints what {f} ({kind}) holds"),
        );
    }
    // `GIT_CONFIG=~/.gitconfig git config …`: the file git writes.
    let env_file: Vec<String> = ctx.commands()[i]
        .assignments
        .iter()
        .filter(|a| {
            matches!(
                a.name.as_str(),
                "GIT_CONFIG" | "GIT_CONFIG_GLOBAL" | "GIT_CONFIG_SYSTEM"
            )
        })
        .map(|a| a.value.text.clone())
        .collect();
    // The user's or the system's configuration: every repository.
    let global = sub_args
        .iter()
        .any(|a| matches!(*a, "--global" | "--system"))
        || w.files.iter().chain(&env_file).any(|f| {
            crate::places::place_with(f, ctx.policy)
                .is_some_and(|p| p.kind == crate::places::PlaceKind::GitConfigGlobal)
        });
    let scope = if global {
        GitScope::Global
    } else if git_elsewhere(ctx, i, &w.files) {
        GitScope::Elsewhere
    } else if !w.files.is_empty() || !env_file.is_empty() {
        GitScope::File
    } else {
        GitScope::Repository
    };
    // `GIT_EDITOR=tee git config --global -e < x`: the editor writes the
    // user's configuration with whatever the line chose.
    if global && edits_config(sub_args) {
        check_config_editor(ctx, i);
    }
    // `git config remote.origin.push +refs/heads/*:refs/heads/*`: a forced
    // refspec in the remote's push settings makes every later plain `git
    // push` a force push.
    if w.sets
        && let (Some(key), Some(value)) = (&w.key, &w.value)
        && let Some(rest) = key.to_ascii_lowercase().strip_prefix("remote.")
        && rest.ends_with(".push")
        && value.trim_matches(['"', '\'']).starts_with('+')
    {
        ctx.hit(
            RuleId::GitPushForce,
            i,
            format!("git config {key} {value}: every later `git push` to it forces (a +refspec)"),
        );
        return;
    }
    if w.sets
        && let (Some(key), Some(value)) = (&w.key, &w.value)
    {
        match aq_knowledge::git::git_key_runs(key, Some(value)) {
            Some(row) => judge_git_setting(ctx, i, key, value, row, scope),
            None if scope == GitScope::Elsewhere => ctx.hit(
                RuleId::FsWriteHome,
                i,
                format!("git config {key} changes another repository's configuration"),
            ),
            // A setting that runs nothing, in the user's own configuration:
            // a write outside the project, like any other (`user.email`,
            // `alias.lg "log --graph"`).
            None if global => {
                let system = sub_args.contains(&"--system");
                ctx.hit(
                    if system {
                        RuleId::FsWriteSystem
                    } else {
                        RuleId::FsWriteHome
                    },
                    i,
                    format!(
                        "git config {} {key} changes the {} git configuration, read by every repository",
                        if system { "--system" } else { "--global" },
                        if system { "system's" } else { "user's" }
                    ),
                );
            }
            None => {}
        }
    }
    // `git config -f FILE` writes FILE: into another protected place than
    // a git configuration (a shell startup file, an agent's settings, aq's
    // own files) it is judged by that place, as any other write there.
    if w.sets {
        for f in &w.files {
            if let Some(place) = crate::places::place_with(f, ctx.policy)
                && !matches!(
                    place.kind,
                    crate::places::PlaceKind::GitConfig | crate::places::PlaceKind::GitConfigGlobal
                )
            {
                ctx.hit(
                    super::files::place_rule(place.kind),
                    i,
                    format!(
                        "git config -f writes {} {f}",
                        super::files::place_noun(place.kind)
                    ),
                );
            }
        }
    }
}

/// `git config [--global] KEY VALUE` for a key that runs something
/// ([`aq_knowledge::git::GIT_KEYS`]): the command it names is judged as if
/// it were on the line (a pipe to a shell blocks, wherever it is set). In
/// the repository, a plain viewer or editor (`core.pager "less -FRX"`) and
/// hooks of the project's own directory (`core.hooksPath .githooks`) are
/// ordinary work; another command asks. In the user's or the system's
/// configuration, which every repository reads and which outlives the
/// session, a key that runs a command, a hooks path, an include or a
/// transport that lets URLs run commands block (persistence); a plain
/// viewer, editor or `ssh -i KEY` there asks.
fn judge_git_setting(
    ctx: &mut Ctx,
    i: usize,
    key: &str,
    value: &str,
    row: &aq_knowledge::git::GitKey,
    where_: GitScope,
) {
    use aq_knowledge::git::GitRuns;
    // Another repository than the workspace's outlives the session as the
    // user's own configuration does: what runs a command there is
    // persistence too.
    let global = matches!(where_, GitScope::Global | GitScope::Elsewhere);
    let scope = match where_ {
        GitScope::Global => "--global ",
        GitScope::Elsewhere => "(another repository's) ",
        GitScope::File => "-f ",
        GitScope::Repository => "",
    };
    match row.runs {
        GitRuns::Command | GitRuns::Program | GitRuns::Bang => {
            let command = value.trim_start().trim_start_matches('!');
            let analysis = aq_shell::analyze(command);
            super::copy_hits(ctx, i, &format!("git config {key}"), &analysis, true);
            // A plain viewer or editor runs nothing of the line's choosing:
            // in the repository it is ordinary; in every repository it
            // changes what the user's own git runs, so it asks.
            // So does a `!` alias that only runs git (`!git pull --rebase &&
            // git push`): git's own commands, judged above.
            let only_git = !analysis.commands.is_empty()
                && analysis.problems.is_empty()
                && analysis
                    .commands
                    .iter()
                    .all(|c| c.program() == Some("git") && c.redirects.is_empty());
            // `credential.helper store`, `cache --timeout=3600`: one of the
            // helpers git ships (`git credential-cache`), with its options,
            // not a command of the line's choosing.
            let git_helper = key.to_ascii_lowercase().starts_with("credential.")
                && matches!(
                    value.split_whitespace().next().unwrap_or(""),
                    "store"
                        | "cache"
                        | "osxkeychain"
                        | "libsecret"
                        | "manager"
                        | "manager-core"
                        | "wincred"
                )
                && !value.contains(['!', ';', '|', '&', '`', '$']);
            let plain = (super::env::plain_command(&analysis)
                && !value.trim_start().starts_with('!'))
                || (global && (only_git || git_helper));
            if plain && where_ == GitScope::Repository {
                return;
            }
            // `git config alias.b '!sh -c id'`: a shell command kept in the
            // repository's configuration, run whenever the alias is typed
            // (the label rules' `alias.x=!cmd`); one that only runs git is
            // judged as git's own commands, above.
            if row.runs == GitRuns::Bang && !only_git && !global {
                ctx.hit(
                    RuleId::PersistToolConfig,
                    i,
                    format!("git config {scope}{key} keeps the shell command `{command}` for whenever the alias is used"),
                );
                return;
            }
            if global && !plain {
                ctx.hit(
                    RuleId::PersistGitConfigGlobal,
                    i,
                    format!(
                        "git config {scope}{key} runs `{command}` {}, in every repository, after this session",
                        row.when
                    ),
                );
            } else {
                ctx.hit(
                    RuleId::GitConfigExec,
                    i,
                    format!("git config {scope}{key} runs `{command}` {}", row.when),
                );
            }
        }
        // Another repository's own directory of hooks (`core.hooksPath
        // .githooks` there) is that project's choice: it asks.
        GitRuns::Hooks | GitRuns::Include
            if where_ == GitScope::Elsewhere && project_dir(value) =>
        {
            ctx.hit(
                RuleId::GitConfigExec,
                i,
                format!("git config {scope}{key} {}", row.runs.as_str()),
            )
        }
        GitRuns::Hooks | GitRuns::Include | GitRuns::Transport if global => ctx.hit(
            RuleId::PersistGitConfigGlobal,
            i,
            format!(
                "git config {scope}{key} {}, in every repository, after this session: {}",
                row.runs.as_str(),
                row.when
            ),
        ),
        GitRuns::Hooks if project_dir(value) && where_ == GitScope::Repository => {}
        _ => ctx.hit(
            RuleId::GitConfigExec,
            i,
            format!("git config {key} {}", row.runs.as_str()),
        ),
    }
}

/// Which configuration a `git config` line writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GitScope {
    /// The workspace's repository, as git finds it.
    Repository,
    /// A file named on the line (`-f .git/config`, `GIT_CONFIG=x`) in the
    /// workspace: the same keys, but no plain viewer or hooks directory
    /// taken on trust.
    File,
    /// Another repository than the workspace's (`git -C ~/src/other`, `cd
    /// ../other && git config`, `-f ../other/.git/config`).
    Elsewhere,
    /// The user's or the system's configuration.
    Global,
}

/// Whether a `git` command works on another repository than the
/// workspace's: `-C DIR`, `--git-dir DIR`, `GIT_DIR=DIR`, an earlier `cd
/// DIR` on the line, or a configuration file (`-f`) outside the workspace.
fn git_elsewhere(ctx: &Ctx, i: usize, files: &[String]) -> bool {
    git_dirs(ctx, i, files).iter().any(|d| {
        let d = d.trim();
        d == ".." || d.starts_with("../") || crate::places::area_with(d, ctx.policy).is_some()
    })
}

/// Where a `git` command works, when the line says it is not the current
/// directory: `-C DIR`, `--git-dir`, `--work-tree`, `GIT_DIR=`, an earlier
/// `cd DIR`, and the configuration files `files` it names.
fn git_dirs(ctx: &Ctx, i: usize, files: &[String]) -> Vec<String> {
    let c = &ctx.commands()[i];
    let args = c.args();
    let mut dirs: Vec<String> = files.to_vec();
    let mut k = 0;
    while k < args.len() {
        let t = args[k].text.as_str();
        if matches!(t, "-C" | "--git-dir" | "--work-tree") {
            dirs.extend(args.get(k + 1).map(|w| w.text.clone()));
            k += 2;
            continue;
        }
        if let Some(d) = t
            .strip_prefix("--git-dir=")
            .or_else(|| t.strip_prefix("--work-tree="))
        {
            dirs.push(d.to_string());
        }
        if !t.starts_with('-') {
            break;
        }
        k += 1;
    }
    dirs.extend(
        c.assignments
            .iter()
            .filter(|a| matches!(a.name.as_str(), "GIT_DIR" | "GIT_WORK_TREE"))
            .map(|a| a.value.text.clone()),
    );
    dirs.extend(super::cwd_before(ctx, i));
    dirs
}

/// git's subcommands that change the repository or its work tree (a
/// commit, a checkout, a reset, a stash): in another project (`git -C
/// ~/src/other-app commit`, `cd ../billing && git reset --hard`) a write
/// outside the workspace, judged by where that is.
const GIT_WRITES: &[&str] = &[
    "add",
    "am",
    "apply",
    "checkout",
    "cherry-pick",
    "clean",
    "commit",
    "gc",
    "init",
    "merge",
    "mv",
    "pull",
    "rebase",
    "reset",
    "restore",
    "revert",
    "rm",
    "stash",
    "switch",
];

/// Whether `git config` opens the configuration in an editor (`-e`,
/// `--edit`, git 2.46's `git config edit`).
fn edits_config(sub_args: &[&str]) -> bool {
    sub_args
        .iter()
        .any(|a| matches!(*a, "-e" | "--edit" | "edit"))
}

/// The editor `git config --global -e` runs: `GIT_EDITOR`, `VISUAL`,
/// `EDITOR` set for it, or `-c core.editor=`. One that is not a plain
/// editor (`tee`, `sed -i '1i…'`) writes the user's configuration with what
/// the line chose, unread; a plain one is the user editing it, a write in
/// the home.
fn check_config_editor(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let mut editors: Vec<String> = c
        .assignments
        .iter()
        .filter(|a| matches!(a.name.as_str(), "GIT_EDITOR" | "VISUAL" | "EDITOR"))
        .map(|a| a.value.text.clone())
        .collect();
    let args = c.args();
    for (k, a) in args.iter().enumerate() {
        if a.text == "-c"
            && let Some(kv) = args.get(k + 1)
            && let Some((key, value)) = kv.text.split_once('=')
            && key.eq_ignore_ascii_case("core.editor")
        {
            editors.push(value.to_string());
        }
    }
    match editors
        .iter()
        .find(|e| !super::env::plain_command(&aq_shell::analyze(e)))
    {
        Some(e) => ctx.hit(
            RuleId::PersistGitConfigGlobal,
            i,
            format!("`{e}` edits the user's git configuration (git config --global -e): what it writes runs in every repository"),
        ),
        None => ctx.hit(
            RuleId::FsWriteHome,
            i,
            "git config --global -e edits the user's git configuration",
        ),
    }
}

/// A directory of the project: relative, and not out of it.
fn project_dir(value: &str) -> bool {
    let v = value.trim();
    !v.is_empty() && !v.starts_with(['/', '~', '$']) && !v.split('/').any(|p| p == "..")
}

/// Framework commands that drop or reset the database: `artisan
/// migrate:fresh`, `prisma migrate reset`, `manage.py flush`, `rails db:drop`.
fn framework_db_reset(c: &Command) -> Option<String> {
    let words: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    let has = |w: &str| words.contains(&w);
    let seq = |a: &str, b: &str| words.windows(2).any(|p| p[0] == a && p[1] == b);
    let hit = words.iter().any(|w| {
        matches!(
            *w,
            "migrate:fresh"
                | "migrate:reset"
                | "db:wipe"
                | "db:drop"
                | "db:reset"
                | "db:schema:load"
                | "db:migrate:reset"
                | "ecto.drop"
                | "ecto.reset"
                | "schema:drop"
                | "reset_db"
                | "sqlflush"
        )
    }) || (has("manage.py") || c.program() == Some("django-admin")) && has("flush")
        || seq("migrate", "reset")
        || has("--force-reset")
        || seq("database", "drop")
        || seq("downgrade", "base")
        || seq("migrate:rollback", "--all");
    hit.then(|| c.display())
}

fn is_protected_branch(b: &str) -> bool {
    let b = b.trim_start_matches("refs/heads/");
    matches!(
        b,
        "main" | "master" | "trunk" | "develop" | "production" | "prod" | "stable"
    ) || b.starts_with("release")
}

/// `KEY=VALUE` (a `git -c` or `git config` setting) makes git run
/// something, by the one table of such keys ([`aq_knowledge::git::GIT_KEYS`]).
/// A value that switches the program off runs nothing: agents and IDEs pass
/// `-c core.hooksPath=/dev/null -c core.fsmonitor=` to make sure no hook or
/// monitor of the repository runs. A key without a value is taken to run
/// what it names.
fn git_key_runs_program(kv: &str) -> bool {
    use aq_knowledge::git::{GitRuns, git_key, git_key_runs};
    match kv.split_once('=') {
        Some((key, value)) => git_key_runs(key, Some(value)).is_some(),
        None => git_key(kv).is_some_and(|k| k.runs != GitRuns::Bang),
    }
}

/// containerd's `ctr` and the LXD/Incus clients: a privileged container
/// (`ctr run --privileged`, `lxc config set C security.privileged true`,
/// `lxc launch IMG -c security.privileged=true`, LXC's raw settings) or
/// the host's root given to one (`ctr run --mount …,src=/`, `lxc config
/// device add C d disk source=/ path=/host`) hands the host over.
fn check_other_containers(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    let args: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
    let mut reasons = Vec::new();
    if name == "ctr" {
        if args.iter().any(|a| {
            *a == "--privileged" || a.starts_with("--privileged=") && !a.ends_with("false")
        }) {
            reasons.push("--privileged".to_string());
        }
        for (k, a) in args.iter().enumerate() {
            let spec = if *a == "--mount" {
                args.get(k + 1).copied().unwrap_or("")
            } else {
                a.strip_prefix("--mount=").unwrap_or("")
            };
            if let Some(src) = spec
                .split(',')
                .find_map(|p| p.strip_prefix("src=").or_else(|| p.strip_prefix("source=")))
                && host_mount_is_dangerous(src)
            {
                reasons.push(format!("mounts {src}"));
            }
        }
    } else {
        for (k, a) in args.iter().enumerate() {
            let next = args.get(k + 1).copied().unwrap_or("");
            let lower = a.to_ascii_lowercase();
            let privileged = lower == "security.privileged"
                && matches!(next.to_ascii_lowercase().as_str(), "true" | "1")
                || lower.ends_with("security.privileged=true")
                || lower.ends_with("security.privileged=1");
            if privileged {
                reasons.push("security.privileged".to_string());
            }
            if lower.starts_with("raw.lxc") || lower.contains("=raw.lxc") {
                reasons.push("raw LXC settings".to_string());
            }
            if let Some(src) = a.strip_prefix("source=")
                && host_mount_is_dangerous(src)
            {
                reasons.push(format!("mounts {src}"));
            }
        }
    }
    if !reasons.is_empty() {
        ctx.hit(
            RuleId::DockerPrivileged,
            i,
            format!("`{name}`: {}", reasons.join(", ")),
        );
    }
}

fn check_docker(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    let args: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
    // `docker buildx build --allow security.insecure`: `RUN
    // --security=insecure` steps run privileged on the builder's host.
    if let Some(a) = args.iter().find(|a| a.contains("security.insecure")) {
        ctx.hit(
            RuleId::DockerPrivileged,
            i,
            format!(
                "`{name}` builds with the insecure entitlement ({a}): build steps run privileged"
            ),
        );
        return;
    }
    // Global options come before the subcommand.
    let mut k = 0;
    while k < args.len() && args[k].starts_with('-') {
        if matches!(
            args[k],
            "-H" | "--host" | "-c" | "--context" | "--config" | "-l" | "--log-level"
        ) {
            k += 1;
        }
        k += 1;
    }
    let mut sub = args.get(k).copied().unwrap_or("");
    let mut rest = args.get(k + 1..).unwrap_or(&[]).to_vec();
    if name == "docker-compose" {
        rest = args.get(k..).unwrap_or(&[]).to_vec();
        sub = "compose";
    }
    if sub == "compose" {
        // Compose's own options come first: `-f F`, `-p P`, `--env-file F`.
        let mut j = 0;
        let mut env_files = Vec::new();
        while j < rest.len() && rest[j].starts_with('-') {
            let takes_value = matches!(
                rest[j],
                "-f" | "--file"
                    | "-p"
                    | "--project-name"
                    | "--env-file"
                    | "--profile"
                    | "--project-directory"
                    | "--ansi"
                    | "--parallel"
                    | "--progress"
            );
            if rest[j] == "--env-file" {
                env_files.push(rest.get(j + 1).copied().unwrap_or("").to_string());
            }
            if let Some(f) = rest[j].strip_prefix("--env-file=") {
                env_files.push(f.to_string());
            }
            j += if takes_value { 2 } else { 1 };
        }
        rest = rest.get(j..).unwrap_or(&[]).to_vec();
        let inner = rest.first().copied().unwrap_or("");
        // `docker compose -f - up <<EOF … privileged: true … EOF`: a
        // compose file given as text on the line.
        if matches!(inner, "up" | "run" | "create" | "start" | "restart") {
            let reasons: Vec<String> = compose_texts(ctx, i)
                .iter()
                .flat_map(|t| compose_escapes(t))
                .collect();
            if !reasons.is_empty() {
                ctx.hit(
                    RuleId::DockerPrivileged,
                    i,
                    format!("the compose file given on the line: {}", reasons.join(", ")),
                );
                return;
            }
        }
        if inner == "config" {
            if let Some(f) = env_files.iter().find(|f| ctx.secret_kind(f).is_some()) {
                ctx.hit(
                    RuleId::SecretRead,
                    i,
                    format!("docker compose config prints the values of {f}"),
                );
            }
            return;
        }
        let read_only = matches!(
            inner,
            "ps" | "ls" | "logs" | "top" | "images" | "version" | "port" | "events" | ""
        );
        if !read_only {
            ctx.hit(
                RuleId::DockerRun,
                i,
                format!("`{name} compose {inner}` changes containers or images"),
            );
        }
        return;
    }
    if matches!(
        sub,
        "container"
            | "image"
            | "volume"
            | "network"
            | "system"
            | "compose"
            | "buildx"
            | "builder"
            | "context"
    ) {
        let inner = rest
            .iter()
            .position(|a| !a.starts_with('-'))
            .map(|p| rest[p])
            .unwrap_or("");
        let read_only = matches!(
            inner,
            "ls" | "list"
                | "ps"
                | "inspect"
                | "logs"
                | "top"
                | "config"
                | "images"
                | "version"
                | "port"
                | "stats"
                | "events"
                | "df"
                | "info"
                | "history"
                | "show"
                | ""
        );
        if sub == "container" && matches!(inner, "run" | "create")
            || sub == "compose" && matches!(inner, "run")
        {
            check_privileged_run(ctx, i, &rest);
        }
        if !read_only {
            ctx.hit(
                RuleId::DockerRun,
                i,
                format!("`{name} {sub} {inner}` changes containers or images"),
            );
        }
        return;
    }
    match sub {
        "run" | "create" => {
            if !check_privileged_run(ctx, i, &rest) {
                ctx.hit(
                    RuleId::DockerRun,
                    i,
                    format!("`{name} {sub}` starts a container"),
                );
            }
        }
        "exec" => {
            if rest.contains(&"--privileged") {
                ctx.hit(RuleId::DockerPrivileged, i, "docker exec --privileged");
            } else {
                ctx.hit(
                    RuleId::DockerRun,
                    i,
                    format!("`{name} exec` runs a command in a container"),
                );
            }
        }
        "ps" | "images" | "logs" | "inspect" | "version" | "info" | "stats" | "top" | "port"
        | "diff" | "history" | "events" | "search" | "help" | "" => {}
        _ => ctx.hit(
            RuleId::DockerRun,
            i,
            format!("`{name} {sub}` changes containers or images"),
        ),
    }
}

/// Flags of `docker run` that hand the host over. Returns whether one fired.
fn check_privileged_run(ctx: &mut Ctx, i: usize, rest: &[&str]) -> bool {
    let mut reasons = Vec::new();
    let mut host_pid = false;
    for (k, a) in rest.iter().enumerate() {
        let next = rest.get(k + 1).copied().unwrap_or("");
        let value = |flag: &str| -> Option<String> {
            if *a == flag {
                Some(next.to_string())
            } else {
                super::option_value(a, flag).map(str::to_string)
            }
        };
        if *a == "--privileged" || a.starts_with("--privileged=") && !a.ends_with("false") {
            reasons.push("--privileged".to_string());
        }
        if let Some(cap) = value("--cap-add") {
            let cap = cap.to_ascii_uppercase();
            if matches!(
                cap.trim_start_matches("CAP_"),
                "ALL" | "SYS_ADMIN" | "SYS_PTRACE" | "SYS_MODULE" | "DAC_READ_SEARCH" | "SYS_RAWIO"
            ) {
                reasons.push(format!("--cap-add={cap}"));
            }
        }
        // The host's PID namespace alone lets the container see host
        // processes; with nsenter (or privileges) it is a way out.
        if value("--pid").is_some_and(|v| v == "host") {
            host_pid = true;
        }
        for ns in ["--ipc", "--uts", "--userns", "--cgroupns"] {
            if value(ns).is_some_and(|v| v == "host") {
                reasons.push(format!("{ns}=host"));
            }
        }
        if let Some(opt) = value("--security-opt")
            && (opt.contains("unconfined") || opt.contains("no-new-privileges=false"))
        {
            reasons.push(format!("--security-opt {opt}"));
        }
        if let Some(dev) = value("--device") {
            reasons.push(format!("--device {dev}"));
        }
        let mount = value("-v").or_else(|| value("--volume")).or_else(|| {
            if a.starts_with("-v") && a.len() > 2 && !a.starts_with("--") {
                Some(a[2..].to_string())
            } else {
                None
            }
        });
        if let Some(m) = mount {
            let host = m.split(':').next().unwrap_or("");
            if host_mount_is_dangerous(host) || mounts_home(ctx, i, host) {
                reasons.push(format!("mounts {host}"));
            }
        }
        if let Some(m) = value("--mount")
            && let Some(src) = m
                .split(',')
                .find_map(|p| p.strip_prefix("source=").or_else(|| p.strip_prefix("src=")))
            && (host_mount_is_dangerous(src) || mounts_home(ctx, i, src))
        {
            reasons.push(format!("mounts {src}"));
        }
    }
    if host_pid && (!reasons.is_empty() || rest.contains(&"nsenter")) {
        reasons.push("--pid=host with nsenter".to_string());
    }
    if reasons.is_empty() {
        return false;
    }
    ctx.hit(RuleId::DockerPrivileged, i, reasons.join(", "));
    true
}

/// The compose files `docker compose -f` reads from the line itself:
/// `-f -` (its input) or `-f <(…)` of literal text.
fn compose_texts(ctx: &Ctx, i: usize) -> Vec<String> {
    let c = &ctx.commands()[i];
    let mut out = Vec::new();
    let files = super::flag_value(c, &["-f"], &["file"]);
    for f in files {
        if matches!(f.text.as_str(), "-" | "/dev/stdin") {
            out.extend(super::written::input_text(ctx, c));
        } else {
            out.extend(
                f.feeds
                    .iter()
                    .filter_map(|&p| super::written::produced_text(ctx, &ctx.commands()[p])),
            );
        }
    }
    out
}

/// What a compose file hands a service of the host (what `docker run`
/// flags would: [`check_privileged_run`]): privileged mode, the host's
/// PID or IPC namespace, all or dangerous capabilities, an unconfined
/// profile, `/` or the Docker socket mounted. Read entry by entry, in
/// block or flow style, for the short and long volume syntaxes.
pub(crate) fn compose_escapes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let clean = |v: &str| {
        v.trim()
            .trim_matches(|c| matches!(c, '"' | '\'' | '[' | ']' | ' ' | ','))
            .to_string()
    };
    let mut in_caps = false;
    // Block style one entry a line, flow style (`{x: {privileged: true}}`)
    // one entry between braces and commas.
    for line in text.split(['\n', '{', '}', ',']) {
        let l = line.trim().trim_start_matches('-').trim();
        let (key, value) = match l.split_once(':') {
            Some((k, v)) if !k.contains(['/', ' ', '"', '\'']) => (k.trim(), v.trim()),
            _ => ("", l),
        };
        if !key.is_empty() {
            in_caps = key == "cap_add";
        }
        match key {
            "privileged" if clean(value) == "true" => out.push("privileged: true".to_string()),
            "pid" | "ipc" | "userns_mode" | "cgroup" if clean(value) == "host" => {
                out.push(format!("{key}: host"))
            }
            "security_opt" if value.contains("unconfined") => {
                out.push("an unconfined security profile".to_string())
            }
            "source" => {
                let src = clean(value);
                if host_mount_is_dangerous(&src) {
                    out.push(format!("mounts {src}"));
                }
            }
            _ => {}
        }
        // Capabilities, in a flow list or one per line.
        let caps_here = key == "cap_add" || in_caps && key.is_empty();
        if caps_here {
            for cap in value.split([',', '[', ']', ' ']).map(clean) {
                let cap = cap.to_ascii_uppercase();
                if matches!(
                    cap.trim_start_matches("CAP_"),
                    "ALL"
                        | "SYS_ADMIN"
                        | "SYS_PTRACE"
                        | "SYS_MODULE"
                        | "DAC_READ_SEARCH"
                        | "SYS_RAWIO"
                ) {
                    out.push(format!("cap_add: {cap}"));
                }
            }
        }
        // Short volume syntax: `HOST:CONTAINER[:mode]`, in a list or a
        // flow sequence.
        for item in l.split([',', '[', ']']) {
            let item = clean(item);
            let item = item
                .trim_start_matches("- ")
                .trim_start_matches(['"', '\'']);
            if let Some((host, rest)) = item.split_once(':')
                && rest.starts_with('/')
                && host_mount_is_dangerous(host)
            {
                out.push(format!("mounts {host}"));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether a mount's host path is the home directory however spelled
/// (`/home/dev`, `/Users/dev`, `$(pwd)/../..` from a workspace two levels
/// below it), what holds it (`/home`), or a credential directory in it
/// (`~/.aws`, `/home/dev/.kube`): every key and token the user has, given
/// to the container.
fn mounts_home(ctx: &Ctx, i: usize, host: &str) -> bool {
    let host = host.trim_matches(['"', '\'']);
    // From the current directory, which is the workspace when no `cd`
    // came before: `$(pwd)/../..`, `$PWD/..`, `../..`.
    let relative = ["$(pwd)", "$PWD", "${PWD}", "`pwd`", "."]
        .iter()
        .find_map(|p| host.strip_prefix(p))
        .filter(|r| r.is_empty() || r.starts_with('/'))
        .map(|r| format!(".{r}"))
        .or_else(|| host.starts_with("..").then(|| host.to_string()));
    let resolved = match (relative, ctx.policy.workspace.as_deref()) {
        (Some(r), Some(ws)) if super::cwd_before(ctx, i).is_none() => {
            let mut parts: Vec<&str> = ws.trim_end_matches('/').split('/').collect();
            for c in r.split('/') {
                match c {
                    "" | "." => {}
                    ".." => {
                        parts.pop();
                    }
                    c => parts.push(c),
                }
            }
            let joined = parts.join("/");
            if joined.is_empty() {
                "/".to_string()
            } else {
                joined
            }
        }
        (Some(_), _) => return false,
        (None, _) => host.to_string(),
    };
    let p = crate::paths::NormPath::new(&resolved);
    p.is_home()
        || p.is_root()
        || (p.absolute && p.parts.len() == 1 && matches!(p.parts[0].as_str(), "home" | "Users"))
        || crate::paths::secret_dir(&resolved).is_some()
}

fn host_mount_is_dangerous(host: &str) -> bool {
    let h = host.trim_end_matches('/');
    h.is_empty() && host == "/"
        || h.ends_with("docker.sock")
        || h.ends_with("containerd.sock")
        || h.ends_with("podman.sock")
        || matches!(
            h,
            "/etc"
                | "/root"
                | "/home"
                | "/var"
                | "/var/run"
                | "/run"
                | "/proc"
                | "/sys"
                | "/dev"
                | "/boot"
                | "/usr"
                | "/lib"
                | "~"
                | "$HOME"
                | "/var/lib/docker"
        )
        || h == "~/.ssh"
        || h.ends_with("/.ssh")
        || h.ends_with("/.aws")
}

fn check_systemctl(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let ops: Vec<&str> = operands(c).iter().map(|w| w.text.as_str()).collect();
    let sub = ops.first().copied().unwrap_or("");
    let units = &ops[ops.len().min(1)..];
    match sub {
        "enable" | "link" | "edit" | "add-wants" | "add-requires" | "set-property" | "preset"
        | "reenable" | "set-default" => {
            ctx.hit(
                RuleId::PersistSystemd,
                i,
                format!("systemctl {sub} makes a unit start by itself"),
            );
        }
        "stop" | "disable" | "mask" | "kill" if units.iter().any(|u| is_audit_service(u)) => {
            ctx.hit(
                RuleId::AntiAuditDisable,
                i,
                format!("stops {}", units.join(" ")),
            );
        }
        "start" | "stop" | "restart" | "reload" | "try-restart" | "reload-or-restart"
        | "disable" | "mask" | "unmask" | "kill" | "isolate" | "daemon-reload" | "poweroff"
        | "reboot" | "halt" | "suspend" | "hibernate" => {
            ctx.hit(RuleId::SysServiceControl, i, format!("systemctl {sub}"));
        }
        _ => {}
    }
}

pub(crate) fn is_audit_service(unit: &str) -> bool {
    let u = unit.trim_end_matches(".service");
    matches!(
        u,
        "auditd"
            | "rsyslog"
            | "syslog"
            | "syslog-ng"
            | "systemd-journald"
            | "journald"
            | "osqueryd"
            | "falco"
            | "wazuh-agent"
            | "auditbeat"
            | "sysmon"
    )
}

fn check_packages(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    let ops: Vec<&str> = operands(c).iter().map(|w| w.text.as_str()).collect();
    if asks_for_usage(c, name, &ops) {
        return;
    }
    if installs_packages(c, name, &ops) {
        ctx.hit(
            RuleId::PkgInstall,
            i,
            format!("`{}` installs, removes or fetches packages", c.display()),
        );
    }
}

/// `npm install --help`: usage, nothing installed. A runner's `--help`
/// after the package is the package's (`npx pkg --help` fetches pkg).
fn asks_for_usage(c: &Command, name: &str, ops: &[&str]) -> bool {
    let sub = ops.first().copied().unwrap_or("");
    let runner = matches!(name, "npx" | "bunx" | "pnpx" | "uvx")
        || matches!(sub, "dlx" | "exec" | "x" | "run");
    let texts: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
    !runner && super::platforms::asks_for_help(&texts)
}

/// Whether package manager `name` installs, removes or fetches packages, by its ecosystem.
fn installs_packages(c: &Command, name: &str, ops: &[&str]) -> bool {
    let sub = ops.first().copied().unwrap_or("");
    let second = ops.get(1).copied().unwrap_or("");
    match name {
        "npm" => npm_installs(sub, ops),
        "pnpm" => pnpm_installs(sub),
        "yarn" => yarn_installs(c, sub),
        "bun" => bun_installs(sub, second),
        "npx" | "bunx" | "pnpx" => npx_fetches(c),
        "deno" => deno_installs(c, sub),
        "corepack" => matches!(sub, "enable" | "install" | "prepare" | "use" | "up"),
        "pip" | "pip3" | "pipx" | "uv" | "uvx" | "poetry" | "pipenv" | "conda" | "mamba"
        | "micromamba" => python_installs(c, name, sub, second),
        "apt" | "apt-get" | "aptitude" | "dnf" | "yum" | "zypper" | "pacman" | "apk" | "port"
        | "snap" | "flatpak" | "nix-env" => system_installs(c, name, sub),
        "nix" | "nix-shell" => nix_fetches(c, name, ops),
        _ => other_installs(name, ops),
    }
}

/// npm's installing subcommands, their abbreviations and misspellings included.
fn npm_installs(sub: &str, ops: &[&str]) -> bool {
    matches!(
        sub,
        "install"
            | "i"
            | "in"
            | "ins"
            | "inst"
            | "insta"
            | "instal"
            | "isnt"
            | "isnta"
            | "isntal"
            | "add"
            | "ci"
            | "clean-install"
            | "install-clean"
            | "update"
            | "up"
            | "upgrade"
            | "uninstall"
            | "un"
            | "remove"
            | "rm"
            | "r"
            | "unlink"
            | "link"
            | "ln"
            | "exec"
            | "x"
            | "install-test"
            | "it"
            | "install-ci-test"
            | "cit"
            | "dedupe"
            | "rebuild"
    ) || sub == "init" && ops.len() > 1
        || matches!(sub, "create" | "innit")
}

/// pnpm's installing subcommands.
fn pnpm_installs(sub: &str) -> bool {
    matches!(
        sub,
        "install"
            | "i"
            | "add"
            | "update"
            | "up"
            | "upgrade"
            | "remove"
            | "rm"
            | "uninstall"
            | "un"
            | "dlx"
            | "link"
            | "ln"
            | "publish"
            | "import"
            | "rebuild"
            | "fetch"
            | "create"
    )
}

/// yarn's installing subcommands, and a bare `yarn` (which installs).
fn yarn_installs(c: &Command, sub: &str) -> bool {
    matches!(
        sub,
        "add"
            | "install"
            | "remove"
            | "upgrade"
            | "up"
            | "dlx"
            | "global"
            | "publish"
            | "link"
            | "create"
            | "import"
    ) || sub.is_empty() && c.args().is_empty()
}

/// bun's installing subcommands and the `bun pm` ones that change trust or the lockfile.
fn bun_installs(sub: &str, second: &str) -> bool {
    matches!(
        sub,
        "install"
            | "i"
            | "add"
            | "a"
            | "remove"
            | "rm"
            | "update"
            | "upgrade"
            | "link"
            | "publish"
            | "x"
            | "create"
    ) || sub == "pm" && matches!(second, "trust" | "untrusted" | "migrate")
}

/// deno's installing subcommands, and `deno run` of a remote or registry module.
fn deno_installs(c: &Command, sub: &str) -> bool {
    matches!(sub, "install" | "add" | "remove" | "upgrade" | "uninstall")
        || sub == "run"
            && c.args().iter().any(|a| {
                a.text.contains("://") || a.text.starts_with("npm:") || a.text.starts_with("jsr:")
            })
}

/// Python's package managers: pip, pipx, uv, poetry, pipenv and conda's family.
fn python_installs(c: &Command, name: &str, sub: &str, second: &str) -> bool {
    match name {
        "pip" | "pip3" => matches!(sub, "install" | "uninstall" | "download" | "wheel"),
        "pipx" => matches!(
            sub,
            "install"
                | "run"
                | "inject"
                | "upgrade"
                | "upgrade-all"
                | "reinstall"
                | "reinstall-all"
                | "uninstall"
        ),
        "uv" => match sub {
            "add" | "remove" | "sync" | "lock" | "self" => true,
            "run" => uv_run_fetches(c),
            "python" => !matches!(second, "list" | "find" | "dir"),
            "tool" => !matches!(second, "list" | "dir"),
            "pip" => matches!(second, "install" | "uninstall" | "sync" | "compile"),
            _ => false,
        },
        "uvx" => true,
        "poetry" => matches!(
            sub,
            "add" | "install" | "remove" | "update" | "lock" | "publish" | "self" | "sync"
        ),
        "pipenv" => matches!(sub, "install" | "uninstall" | "update" | "sync" | "lock"),
        "conda" | "mamba" | "micromamba" => {
            matches!(
                sub,
                "install" | "remove" | "uninstall" | "update" | "upgrade" | "create"
            ) || sub == "env" && matches!(second, "create" | "update" | "remove")
        }
        _ => false,
    }
}

/// The system's package managers (apt, dnf, pacman, nix-env, ...): their shared
/// subcommands, and pacman's and nix-env's option forms.
fn system_installs(c: &Command, name: &str, sub: &str) -> bool {
    matches!(
        sub,
        "install"
            | "remove"
            | "purge"
            | "upgrade"
            | "dist-upgrade"
            | "full-upgrade"
            | "update"
            | "autoremove"
            | "reinstall"
            | "add"
            | "del"
            | "erase"
            | "localinstall"
            | "downgrade"
            | "build-dep"
            | "source"
            | "in"
            | "rm"
            | "up"
            | "dup"
    ) || name == "pacman"
        && c.args().iter().any(|a| {
            a.text.starts_with("-S") || a.text.starts_with("-R") || a.text.starts_with("-U")
        })
        || name == "nix-env"
            && c.args().iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "-i" | "-iA" | "-e" | "-u" | "--install" | "--uninstall" | "--upgrade"
                )
            })
}

/// `nix run github:o/r`, `nix shell nixpkgs#jq`, `nix-shell -p jq`:
/// a flake or package from elsewhere, fetched and run (as `npx` of a
/// package not installed); the project's own flake (`.#app`) is not.
fn nix_fetches(c: &Command, name: &str, ops: &[&str]) -> bool {
    let sub = ops.first().copied().unwrap_or("");
    let second = ops.get(1).copied().unwrap_or("");
    match name {
        "nix" => match sub {
            "run" | "shell" | "develop" | "build" | "bundle" => {
                ops[1..].iter().any(|r| remote_flake(r))
            }
            "profile" => matches!(second, "install" | "add" | "upgrade" | "remove"),
            _ => false,
        },
        "nix-shell" => {
            c.args()
                .iter()
                .any(|a| a.text == "-p" || a.text == "--packages")
                || ops.iter().any(|r| r.contains("://"))
        }
        _ => false,
    }
}

/// The other languages' package managers: cargo, go, gem, brew, composer, dotnet, ...
fn other_installs(name: &str, ops: &[&str]) -> bool {
    let sub = ops.first().copied().unwrap_or("");
    let second = ops.get(1).copied().unwrap_or("");
    match name {
        // Publishing, yanking and registry logins are `programs.toml` data
        // (rules/platforms.rs).
        "cargo" => matches!(sub, "install" | "add" | "remove" | "rm" | "uninstall"),
        "go" => {
            matches!(sub, "install" | "get")
                || sub == "run" && ops.get(1).is_some_and(|p| p.contains('@'))
        }
        "gem" => matches!(sub, "install" | "uninstall" | "update"),
        "bundle" => matches!(sub, "install" | "add" | "update" | "remove") || sub.is_empty(),
        "brew" => matches!(
            sub,
            "install"
                | "reinstall"
                | "uninstall"
                | "remove"
                | "rm"
                | "upgrade"
                | "update"
                | "tap"
                | "untap"
                | "link"
                | "unlink"
                | "cleanup"
                | "autoremove"
                | "services"
                | "bundle"
        ),
        "composer" => matches!(
            sub,
            "install" | "require" | "update" | "remove" | "create-project" | "global" | "upgrade"
        ),
        "dotnet" => {
            matches!(
                sub,
                "add" | "remove" | "tool" | "new" | "nuget" | "workload"
            ) && !(sub == "tool" && second == "list")
                && !(sub == "new" && second == "list")
        }
        "nuget" => matches!(sub, "install" | "update" | "push" | "delete"),
        "rustup" => {
            matches!(
                sub,
                "install"
                    | "update"
                    | "toolchain"
                    | "target"
                    | "component"
                    | "self"
                    | "default"
                    | "uninstall"
            ) && !matches!(second, "list")
        }
        "cpan" | "cpanm" | "luarocks" | "easy_install" => {
            sub != "list" && !ops.is_empty() || name == "cpanm"
        }
        "opam" => matches!(sub, "install" | "remove" | "upgrade" | "update" | "pin"),
        "cabal" | "stack" => matches!(sub, "install" | "update"),
        "mix" | "hex" => {
            sub.starts_with("deps.get")
                || sub == "archive.install"
                || sub.starts_with("escript.install")
        }
        "flutter" | "dart" => {
            sub == "pub" && matches!(second, "add" | "get" | "upgrade" | "global" | "remove")
                || sub == "pub-get"
        }
        "swift" => sub == "package" && matches!(second, "update" | "resolve" | "add-dependency"),
        // `mvn deploy`, `gradle publish`: `programs.toml` data (rules/platforms.rs).
        "mvn" | "gradle" => false,
        "R" => false,
        _ => false,
    }
}

/// `npx pkg@1.2`, `npx --yes pkg`, `npx -p pkg cmd`: fetch and run. A bare
/// `npx tool` of a tool the rules know (`eslint`, `tsc`, `vitest`) runs the
/// project's own dev dependency; one nobody knows (`npx cowsay`, `bunx
/// some-pkg`) is fetched from the registry when the project does not have
/// it, which the line cannot tell: it asks, as an install.
fn npx_fetches(c: &Command) -> bool {
    // npx's own options come before the command; the rest is the command's.
    let all = c.args();
    let cmd_at = all.iter().position(|a| !is_flag(a)).unwrap_or(all.len());
    let args = &all[..(cmd_at + 1).min(all.len())];
    if args.iter().any(|a| {
        matches!(a.text.as_str(), "--yes" | "-y" | "-p" | "--package")
            || a.text.starts_with("--package=")
    }) {
        return true;
    }
    // `npx --no-install tool`, `npx --no tool`: only what the project has.
    if args
        .iter()
        .any(|a| matches!(a.text.as_str(), "--no-install" | "--no" | "--offline"))
    {
        return false;
    }
    match args.get(cmd_at) {
        Some(pkg) => {
            let t = pkg.text.as_str();
            let body = t.strip_prefix('@').unwrap_or(t);
            body.contains('@')
                || t.starts_with("create-")
                || t.contains("://")
                || t.starts_with("github:")
                || !t.starts_with(['.', '/', '~', '$'])
                    && !pkg.dynamic
                    && !super::is_known_program(t)
        }
        None => false,
    }
}

fn uv_run_fetches(c: &Command) -> bool {
    c.args()
        .iter()
        .any(|a| a.text == "--with" || a.text.starts_with("--with=") || a.text.contains("://"))
}

/// `make install`, `cmake --install build`: the build's files copied into
/// the prefix, `/usr/local` unless `PREFIX`, `DESTDIR` or `--prefix` says
/// otherwise. Into the workspace or a scratch directory it is build work;
/// elsewhere it is a write outside the project.
fn check_install_target(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let mut dests: Vec<String> = c
        .assignments
        .iter()
        .filter(|a| matches!(a.name.as_str(), "DESTDIR" | "PREFIX" | "prefix"))
        .map(|a| a.value.text.clone())
        .collect();
    for a in c.args() {
        if let Some((k, v)) = a.text.split_once('=')
            && matches!(k, "DESTDIR" | "PREFIX" | "prefix" | "--prefix")
        {
            dests.push(v.to_string());
        }
    }
    dests.extend(flag_values_text(c, &[], &["prefix", "destdir"]));
    // DESTDIR stages the whole tree below it: that decides where files land.
    let dest = dests
        .iter()
        .find(|d| !d.is_empty())
        .cloned()
        .unwrap_or_else(|| "/usr/local".to_string());
    let p = crate::paths::NormPath::new(&dest);
    let scratch = p.absolute
        && (p.parts.first().is_some_and(|f| f == "tmp")
            || p.parts.first().is_some_and(|f| f == "var")
                && p.parts.get(1).is_some_and(|s| s == "tmp"));
    let in_workspace = !p.absolute && !p.in_home && !dest.starts_with('$')
        || ctx
            .policy
            .workspace
            .as_deref()
            .is_some_and(|ws| dest.starts_with(ws));
    if scratch || in_workspace || dest.starts_with("$PWD") || dest.starts_with("$(pwd)") {
        return;
    }
    let rule = if p.in_home {
        RuleId::FsWriteHome
    } else {
        RuleId::FsWriteSystem
    };
    ctx.hit(
        rule,
        i,
        format!("`{}` installs the build into {dest}", c.display()),
    );
}

/// Whether the command's standard output is redirected into a file.
pub(crate) fn stdout_to_file(c: &aq_shell::Command) -> bool {
    c.redirects.iter().any(|r| {
        r.kind.writes()
            && r.fd.is_none_or(|f| f == 1)
            && !matches!(r.target.text.as_str(), "/dev/null" | "/dev/stdout")
    })
}

fn check_decode_to_file(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    let decoding = match name {
        "base64" | "base32" | "basenc" => {
            has_flag(c, Some('d'), &["decode"]) || has_flag(c, Some('D'), &[])
        }
        "openssl" => {
            c.args().iter().any(|a| a.text == "-d")
                && matches!(subcommand(c), Some("base64" | "enc"))
        }
        "xxd" => has_flag(c, Some('r'), &["revert"]),
        "uudecode" => true,
        _ => false,
    };
    if !decoding {
        return;
    }
    let to_file =
        stdout_to_file(c) || !flag_values_text(c, &["-out", "-o"], &["output"]).is_empty();
    if to_file {
        ctx.hit(RuleId::DecodeToFile, i, format!("`{}`", c.display()));
    }
}

/// The Docker socket a generic client (`curl --unix-socket`, `socat`,
/// `nc -U`) is pointed at.
fn docker_socket_client(c: &Command, name: &str) -> Option<String> {
    if !matches!(
        name,
        "curl" | "socat" | "nc" | "ncat" | "netcat" | "http" | "xh"
    ) {
        return None;
    }
    let is_sock = |t: &str| {
        t.ends_with("docker.sock") || t.ends_with("containerd.sock") || t.ends_with("podman.sock")
    };
    let mut words = c.args().iter().map(|w| w.text.as_str());
    while let Some(t) = words.next() {
        let value = match t {
            "--unix-socket" | "--abstract-unix-socket" | "-U" => words.next(),
            _ => t
                .strip_prefix("--unix-socket=")
                .or_else(|| t.strip_prefix("UNIX-CONNECT:"))
                .or_else(|| t.strip_prefix("UNIX-CLIENT:"))
                .or(Some(t)),
        };
        if let Some(v) = value
            && is_sock(v)
        {
            return Some(v.to_string());
        }
    }
    None
}
