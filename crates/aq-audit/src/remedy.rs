//! What a session refused, grouped, each with the one line that would allow
//! it next time (`aq allow ...`) and a warning where allowing is dangerous.
//! Read from the summary of a log: commands blocked, asks that were not
//! approved, network destinations the broker refused.

use serde::Serialize;

use crate::report::{DecisionEntry, Destination, Summary};

/// One refusal group and its remedy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Remedy {
    /// `command`, `blocked`, `network`, `read`, `write` or `syscall`.
    pub kind: &'static str,
    /// What was refused, and how often.
    pub what: String,
    /// The line that would permit it next time.
    pub line: String,
    /// Why allowing it may be a bad idea, when it may.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The grant `line` makes, when it is an `aq allow` line.
    #[serde(skip)]
    pub allowance: Option<Allowance>,
}

/// What an `aq allow` line grants, as a value: [`Allowance::line`] is the
/// line, and `aq policy suggest` merges by it (one line may cover another).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Allowance {
    /// `aq allow --command 'PROGRAM [SUBCOMMAND]'`.
    Command {
        /// The program's base name.
        program: String,
        /// Its first non-option argument, when the grant names one.
        #[serde(skip_serializing_if = "Option::is_none")]
        subcommand: Option<String>,
    },
    /// `aq allow --net HOST[:PORT]`.
    Net {
        /// The host, with its port when the refusal named one.
        host: String,
    },
    /// `aq allow PATH`: writable.
    Write {
        /// The path.
        path: String,
    },
    /// `aq allow --read-only PATH`.
    Read {
        /// The path.
        path: String,
    },
}

impl Allowance {
    /// The `aq allow` line, as the user would type it.
    pub fn line(&self) -> String {
        match self {
            Allowance::Command {
                program,
                subcommand: Some(sub),
            } => format!("aq allow --command '{program} {sub}'"),
            Allowance::Command { program, .. } => format!("aq allow --command '{program}'"),
            Allowance::Net { host } => format!("aq allow --net {host}"),
            Allowance::Write { path } => format!("aq allow {path}"),
            Allowance::Read { path } => format!("aq allow --read-only {path}"),
        }
    }

    /// Whether this grant lets through everything `other` does, and is
    /// not the same grant: a program covers each of its subcommands, a
    /// host every port of it, `*.example.com` its subdomains, a writable
    /// directory what is under it (read or written), a readable one the
    /// reads under it.
    pub fn covers(&self, other: &Allowance) -> bool {
        if self == other {
            return false;
        }
        match (self, other) {
            (
                Allowance::Command {
                    program: a,
                    subcommand: None,
                },
                Allowance::Command { program: b, .. },
            ) => a == b,
            (Allowance::Net { host: a }, Allowance::Net { host: b }) => {
                let name = |h: &str| match h.rsplit_once(':') {
                    Some((n, p)) if !n.contains(':') && p.parse::<u16>().is_ok() => n.to_string(),
                    _ => h.to_string(),
                };
                let (b_name, a_has_port) = (name(b), name(a) != *a);
                if a_has_port {
                    return false;
                }
                match a.strip_prefix("*.") {
                    Some(domain) => b_name.ends_with(&format!(".{domain}")),
                    None => *a == b_name,
                }
            }
            (
                Allowance::Write { path: a },
                Allowance::Write { path: b } | Allowance::Read { path: b },
            )
            | (Allowance::Read { path: a }, Allowance::Read { path: b }) => under(b, a),
            _ => false,
        }
    }
}

/// Whether `path` is `dir` or beneath it.
fn under(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path == dir || dir.is_empty() || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// Answers that let an ask run.
const APPROVED: [&str; 2] = ["once", "session"];

/// The answer of an ask learn mode let through (it ran: not a refusal,
/// but what `aq policy suggest` reads).
pub(crate) const LEARNED: &str = "learn";

/// Rule families whose asks guard something a prompt injection wants.
const RISKY: [(&str, &str); 5] = [
    ("net-", "it fetches from or sends to the network"),
    ("exec-", "it runs code it is handed"),
    ("secret-", "it reads a credential"),
    ("fs-", "it deletes or overwrites files"),
    ("git-", "it rewrites or publishes history"),
];

fn times(n: u64) -> String {
    if n == 1 {
        "once".to_string()
    } else {
        format!("{n} times")
    }
}

/// The program and first non-option argument of `argv`, for a command grant.
fn program_words(argv: &[String]) -> Option<(String, Option<String>)> {
    let program = argv.first()?.rsplit('/').next()?.to_string();
    if program.is_empty() {
        return None;
    }
    Some(match argv.get(1) {
        Some(sub)
            if !sub.starts_with('-')
                && sub
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            (program, Some(sub.clone()))
        }
        _ => (program, None),
    })
}

fn risky(rules: &[String]) -> Option<String> {
    rules.iter().find_map(|r| {
        RISKY
            .iter()
            .find(|(prefix, _)| r.starts_with(prefix))
            .map(|(_, why)| {
                format!("`{r}` asked because {why}: allowing it lets every such command run without asking")
            })
    })
}

impl Summary {
    /// The refusals of the session, grouped, with their remedies. Asks
    /// that ran (approved, or let through by learn mode) are not refusals.
    pub fn remedies(&self) -> Vec<Remedy> {
        let mut found: Vec<(Remedy, u64)> = Vec::new();
        let mut add = |r: Remedy| match found
            .iter_mut()
            .find(|(o, _)| o.line == r.line && o.kind == r.kind)
        {
            Some((_, n)) => *n += 1,
            None => found.push((r, 1)),
        };
        for e in &self.asked {
            if e.answer
                .as_deref()
                .is_some_and(|a| APPROVED.contains(&a) || a == LEARNED)
            {
                continue;
            }
            if let Some(r) = ask_remedy(e) {
                add(r);
            }
        }
        for e in &self.blocked {
            add(blocked(e));
        }
        for (dest, d) in &self.destinations {
            if let Some(r) = network_remedy(dest, d) {
                add(r);
            }
        }
        for ((path, access), n) in &self.refused_files {
            add(file_remedy(path, access, *n));
        }
        for (syscall, (n, errno)) in &self.refused_syscalls {
            add(syscall_remedy(syscall, *n, errno));
        }
        found
            .into_iter()
            .map(|(mut r, n)| {
                if n > 1 {
                    r.what = format!("{}, {}", r.what, times(n));
                }
                r
            })
            .collect()
    }
}

/// The remedy of one ask, whatever its answer: a command grant, or for an
/// unrecognised program where the session writes, trusting its path.
/// `None` when the argv names no program.
pub(crate) fn ask_remedy(e: &DecisionEntry) -> Option<Remedy> {
    let answer = e.answer.as_deref().unwrap_or("unanswered");
    // An unrecognised program where the session writes: trusting
    // its path is the remedy, not allowing whatever it is called.
    if let Some(exe) = e
        .exe
        .as_deref()
        .filter(|_| e.rules.iter().any(|r| r == "exec-unknown-native"))
    {
        let what = format!("{exe} [{}] asked, {answer}", e.rules.join(", "));
        if exe.starts_with("/memfd:") || exe.ends_with(" (deleted)") {
            return Some(Remedy {
                kind: "exec",
                what,
                line: "no grant: a memfd or a deleted file has no path to trust; `[rules] \"exec-unknown-native\" = \"allow\"` turns the ask off everywhere".to_string(),
                warning: Some("what a memfd holds can change while it runs".to_string()),
                allowance: None,
            });
        }
        return Some(Remedy {
            kind: "exec",
            what,
            line: format!(
                "[session] trusted_exec = [\"{exe}\"] in your own policy file, if it is a build output (a glob relative to the workspace covers a whole build directory)"
            ),
            warning: Some(
                "whatever is written there later runs without asking too; an altered copy of a known tool is still judged as that tool, and still asks outside trusted places"
                    .to_string(),
            ),
            allowance: None,
        });
    }
    let (program, subcommand) = program_words(&e.argv)?;
    let allowance = Allowance::Command {
        program,
        subcommand,
    };
    let words = match &allowance {
        Allowance::Command {
            program,
            subcommand: Some(s),
        } => format!("{program} {s}"),
        Allowance::Command { program, .. } => program.clone(),
        _ => String::new(),
    };
    Some(Remedy {
        kind: "command",
        what: format!("{words} [{}] asked, {answer}", e.rules.join(", ")),
        line: allowance.line(),
        warning: risky(&e.rules),
        allowance: Some(allowance),
    })
}

/// The remedy of a destination the broker refused, when `aq allow --net`
/// can take it.
pub(crate) fn network_remedy(dest: &str, d: &Destination) -> Option<Remedy> {
    // Only a destination `aq allow --net` can take is offered: a
    // refused host that is no host name (the client's raw bytes)
    // must not become a line the user pastes into a shell.
    let plain = !dest.is_empty()
        && dest.len() <= 260
        && dest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-_:[]".contains(&b));
    // Refusals that no allowlist entry changes (an HTTP rule, a
    // name that is no host name, a request the broker cannot read)
    // get no `aq allow --net` line.
    let allowable = !matches!(
        d.rule.as_str(),
        "net-http-rule" | "net-invalid-host" | "net-bad-request"
    );
    if d.denied == 0 || !plain || !allowable {
        return None;
    }
    let allowance = Allowance::Net {
        host: dest.to_string(),
    };
    Some(Remedy {
        kind: "network",
        what: format!("{dest} refused {} times [{}]", d.denied, d.rule),
        line: allowance.line(),
        warning: dest
            .split(':')
            .next()
            .is_some_and(|h| h.parse::<std::net::IpAddr>().is_ok())
            .then(|| {
                "an address, not a name: the allowlist cannot tell who answers there".to_string()
            }),
        allowance: Some(allowance),
    })
}

/// A system call the sandbox refused: no grant exists for it.
pub(crate) fn syscall_remedy(syscall: &str, n: u64, errno: &str) -> Remedy {
    Remedy {
        kind: "syscall",
        what: format!("{syscall} refused ({errno}), {}", times(n)),
        line: format!(
            "no grant for {syscall}: every sandboxed profile denies it; `aq run --profile shims-only -- ...` runs without the kernel sandbox"
        ),
        warning: Some(format!(
            "{syscall} reaches past the sandbox (other processes, the kernel, mounts or keyrings); shims-only drops every kernel boundary, not only this one"
        )),
        allowance: None,
    }
}

/// A file access Landlock refused: a read is allowed with `--read-only`; a
/// write, in the directory (the kernel names the directory for a file it
/// would create, the file itself otherwise).
pub(crate) fn file_remedy(path: &str, access: &str, n: u64) -> Remedy {
    let read = access
        .split(',')
        .all(|a| matches!(a, "fs.read_file" | "fs.read_dir" | "fs.execute"));
    let creates = access
        .split(',')
        .any(|a| a.starts_with("fs.make_") || a.starts_with("fs.remove_"));
    let (kind, allowance) = if read {
        (
            "read",
            Allowance::Read {
                path: path.to_string(),
            },
        )
    } else if creates {
        (
            "write",
            Allowance::Write {
                path: path.to_string(),
            },
        )
    } else {
        let dir = path
            .rsplit_once('/')
            .map_or("/", |(d, _)| if d.is_empty() { "/" } else { d });
        (
            "write",
            Allowance::Write {
                path: dir.to_string(),
            },
        )
    };
    Remedy {
        kind,
        what: format!("{path} ({access}) refused, {}", times(n)),
        line: allowance.line(),
        warning: (path.starts_with("/etc") || path.starts_with("/usr") || path == "/")
            .then(|| "a system path: what a command writes there outlives the session".to_string()),
        allowance: Some(allowance),
    }
}

/// A block: a grant's own block is taken back; a built-in one is lowered
/// in `[rules]` only, never by an allow (and the safer way comes first).
pub(crate) fn blocked(e: &DecisionEntry) -> Remedy {
    let words = match program_words(&e.argv) {
        Some((p, Some(s))) => format!("{p} {s}"),
        Some((p, None)) => p,
        None => String::new(),
    };
    let what = format!("{} [{}] blocked", e.shown(), e.rules.join(", "));
    match e.rules.iter().find(|r| r.starts_with("grant-block-")) {
        Some(_) => Remedy {
            kind: "blocked",
            what,
            line: format!("aq deny --remove --command '{words}'"),
            warning: None,
            allowance: None,
        },
        None => {
            let rule = e.rules.first().cloned().unwrap_or_default();
            Remedy {
                kind: "blocked",
                what,
                line: format!("[rules] {rule} = \"ask\" in your policy file"),
                warning: Some(match &e.safer {
                    Some(safer) => format!("a built-in block; rather: {safer}"),
                    None => "a built-in block: lowering it is rarely what you want".to_string(),
                }),
                allowance: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(argv: &[&str], rules: &[&str], answer: Option<&str>) -> DecisionEntry {
        DecisionEntry {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            rules: rules.iter().map(|s| s.to_string()).collect(),
            answer: answer.map(String::from),
            safer: Some("pin a version".to_string()),
            ..DecisionEntry::default()
        }
    }

    #[test]
    fn refusals_are_grouped_with_their_lines_and_approved_asks_left_out() {
        let mut s = Summary {
            asked: vec![
                entry(
                    &["/usr/bin/npm", "ci"],
                    &["pkg-install"],
                    Some("no-approver"),
                ),
                entry(&["npm", "ci", "--silent"], &["pkg-install"], Some("deny")),
                entry(&["curl", "-s", "x"], &["net-fetch"], Some("once")),
            ],
            blocked: vec![
                entry(
                    &["kubectl", "delete", "ns"],
                    &["grant-block-kubectl-delete"],
                    None,
                ),
                entry(&["rm", "-rf", "/"], &["fs-rm-recursive-root"], None),
            ],
            ..Summary::default()
        };
        s.destinations.insert(
            "203.0.113.7:443".to_string(),
            Destination {
                denied: 2,
                rule: "net-not-allowlisted".to_string(),
                ..Destination::default()
            },
        );
        let r = s.remedies();
        let lines: Vec<&str> = r.iter().map(|r| r.line.as_str()).collect();
        assert_eq!(
            lines,
            vec![
                "aq allow --command 'npm ci'",
                "aq deny --remove --command 'kubectl delete'",
                "[rules] fs-rm-recursive-root = \"ask\" in your policy file",
                "aq allow --net 203.0.113.7:443",
            ]
        );
        assert!(r[0].what.ends_with(", 2 times"), "{:?}", r[0]);
        assert_eq!(r[0].warning, None);
        assert!(r[2].warning.as_deref().unwrap().contains("pin a version"));
        assert!(r[3].warning.as_deref().unwrap().contains("an address"));
    }

    #[test]
    fn an_unrecognised_program_gets_a_trusted_exec_line_not_an_allow() {
        let mut e = entry(&["hello"], &["exec-unknown-native"], Some("no-approver"));
        e.exe = Some("/w/hello".to_string());
        let s = Summary {
            asked: vec![e],
            ..Summary::default()
        };
        let r = s.remedies();
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].kind, "exec");
        assert!(
            r[0].line
                .starts_with("[session] trusted_exec = [\"/w/hello\"]"),
            "{r:?}"
        );
        assert!(
            r[0].warning
                .as_deref()
                .unwrap()
                .contains("runs without asking")
        );
        // A memfd has no path to trust.
        let mut m = entry(&["rm"], &["exec-unknown-native"], Some("headless"));
        m.exe = Some("/memfd:r (deleted)".to_string());
        let s = Summary {
            asked: vec![m],
            ..Summary::default()
        };
        assert!(
            s.remedies()[0].line.starts_with("no grant"),
            "{:?}",
            s.remedies()
        );
    }

    #[test]
    fn refused_files_get_a_read_or_a_write_grant() {
        let r = file_remedy("/home/u/.bash_history", "fs.read_file", 1);
        assert_eq!(r.line, "aq allow --read-only /home/u/.bash_history");
        assert_eq!(r.kind, "read");
        // A file it would create: the kernel names the directory.
        let r = file_remedy("/srv/out", "fs.make_reg", 2);
        assert_eq!(r.line, "aq allow /srv/out");
        assert!(r.what.ends_with("refused, 2 times"), "{r:?}");
        // A file it would write: its directory.
        let r = file_remedy("/etc/hosts", "fs.write_file", 1);
        assert_eq!(r.line, "aq allow /etc");
        assert!(r.warning.unwrap().contains("system path"));
    }
}
