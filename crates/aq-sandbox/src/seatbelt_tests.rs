//! The profile read back as S-expressions and evaluated the way Seatbelt
//! does (last matching rule wins), so the tests check what a rule means, not
//! how it is spelled.

use super::*;
use crate::spec::SandboxSpec;
use proptest::prelude::*;

/// An S-expression of the profile.
#[derive(Clone, Debug, PartialEq)]
enum Sexp {
    Atom(String),
    Str(String),
    List(Vec<Sexp>),
}

/// Reads the whole profile: comments to the end of a line, lists, string
/// literals with `\"` and `\\` as their only escapes, atoms. Anything else
/// (an unbalanced parenthesis, another escape, a stray character, a string
/// not closed) is an error.
fn read_profile(text: &str) -> Result<Vec<Sexp>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut stack: Vec<Vec<Sexp>> = vec![Vec::new()];
    while i < chars.len() {
        let c = chars[i];
        match c {
            ';' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ' ' | '\n' => i += 1,
            '(' => {
                stack.push(Vec::new());
                i += 1;
            }
            ')' => {
                let done = stack.pop().ok_or("unbalanced )")?;
                stack
                    .last_mut()
                    .ok_or_else(|| format!("unbalanced ) at {i}"))?
                    .push(Sexp::List(done));
                i += 1;
            }
            '"' => {
                let mut s = String::new();
                i += 1;
                loop {
                    let c = *chars.get(i).ok_or("string not closed")?;
                    match c {
                        '"' => break,
                        '\\' => {
                            let e = *chars.get(i + 1).ok_or("escape at the end")?;
                            if e != '"' && e != '\\' {
                                return Err(format!("unknown escape \\{e}"));
                            }
                            s.push(e);
                            i += 2;
                        }
                        c if c.is_control() => return Err("control character in a string".into()),
                        c => {
                            s.push(c);
                            i += 1;
                        }
                    }
                }
                i += 1;
                stack.last_mut().unwrap().push(Sexp::Str(s));
            }
            c if c.is_ascii_alphanumeric() || "-*_.".contains(c) => {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric() || "-*_.".contains(chars[i]))
                {
                    i += 1;
                }
                stack
                    .last_mut()
                    .unwrap()
                    .push(Sexp::Atom(chars[start..i].iter().collect()));
            }
            c => return Err(format!("stray character {c:?} at {i}")),
        }
    }
    if stack.len() != 1 {
        return Err("unbalanced (".into());
    }
    Ok(stack.pop().unwrap())
}

/// A rule: allow or deny, its operations, its filters.
struct Rule<'a> {
    allow: bool,
    ops: Vec<&'a str>,
    filters: Vec<&'a [Sexp]>,
}

fn rules(forms: &[Sexp]) -> Vec<Rule<'_>> {
    forms
        .iter()
        .filter_map(|f| {
            let Sexp::List(items) = f else { return None };
            let allow = match items.first() {
                Some(Sexp::Atom(a)) if a == "allow" => true,
                Some(Sexp::Atom(a)) if a == "deny" => false,
                _ => return None,
            };
            let ops = items[1..]
                .iter()
                .map_while(|s| match s {
                    Sexp::Atom(a) => Some(a.as_str()),
                    _ => None,
                })
                .collect();
            let filters = items[1..]
                .iter()
                .filter_map(|s| match s {
                    Sexp::List(l) => Some(l.as_slice()),
                    _ => None,
                })
                .collect();
            Some(Rule {
                allow,
                ops,
                filters,
            })
        })
        .collect()
}

fn op_matches(pattern: &str, op: &str) -> bool {
    pattern == "default"
        || pattern == op
        || pattern
            .strip_suffix('*')
            .is_some_and(|prefix| op.starts_with(prefix))
}

/// Whether a filter matches `path`, for a process holding the sandbox
/// extensions `held` (a pty it opened through `/dev/ptmx` gives it
/// `com.apple.sandbox.pty`). Regular expressions are matched as written.
fn filter_matches(filter: &[Sexp], path: &str, held: &[&str]) -> bool {
    match filter {
        [Sexp::Atom(k), Sexp::Str(s)] if k == "subpath" => {
            path == s || path.starts_with(&format!("{}/", s.trim_end_matches('/')))
        }
        [Sexp::Atom(k), Sexp::Str(s)] if k == "literal" => path == s,
        [Sexp::Atom(k), Sexp::Str(re)] if k == "regex" => regex::Regex::new(re)
            .unwrap_or_else(|e| panic!("{re}: {e}"))
            .is_match(path),
        [Sexp::Atom(k), Sexp::Str(name)] if k == "extension" => held.contains(&name.as_str()),
        [Sexp::Atom(k), rest @ ..] if k == "require-all" => rest
            .iter()
            .all(|f| matches!(f, Sexp::List(l) if filter_matches(l, path, held))),
        [Sexp::Atom(k), Sexp::List(f)] if k == "require-not" => !filter_matches(f, path, held),
        _ => false,
    }
}

/// Seatbelt's answer for `op` on `path`: the last rule that matches.
fn decide(forms: &[Sexp], op: &str, path: &str) -> (bool, usize) {
    decide_holding(forms, op, path, &[])
}

/// [`decide`] for a process holding the extensions `held`.
fn decide_holding(forms: &[Sexp], op: &str, path: &str, held: &[&str]) -> (bool, usize) {
    let mut decision = (false, usize::MAX);
    for (i, r) in rules(forms).iter().enumerate() {
        if !r.ops.iter().any(|p| op_matches(p, op)) {
            continue;
        }
        let default = r.ops.contains(&"default");
        if default
            || r.filters.is_empty()
            || r.filters.iter().any(|f| filter_matches(f, path, held))
        {
            decision = (r.allow, i);
        }
    }
    decision
}

fn profile_of(spec: &SandboxSpec, names: &[String]) -> String {
    plan_seatbelt_profile(&SeatbeltInputs {
        spec,
        masked_names: names,
        notes: &[],
    })
    .unwrap()
}

fn sample_spec() -> SandboxSpec {
    let mut s = SandboxSpec::strict("/Users/u/src/app");
    s.writable = vec!["/dev/null".into(), "/Users/u/.claude".into(), "/tmp".into()];
    s.read_only = vec![".git/hooks".into(), ".git/config".into()];
    s.readable = Some(vec!["/usr".into(), "/etc".into(), "/Users/u/.cargo".into()]);
    s.masked = vec![
        "/Users/u/.ssh".into(),
        "/Users/u/src/app/.env".into(),
        "/Users/u/.claude/.credentials.json".into(),
        "/tmp/ssh-XYZ".into(),
    ];
    s.loopback_listeners = vec![3128];
    s.allowed_sockets = vec!["/Users/u/.local/state/aq/sessions/s1/supervisor.sock".into()];
    s
}

#[test]
fn the_profile_is_one_well_formed_s_expression_per_rule() {
    for readable in [None, Some(vec![PathBuf::from("/usr")])] {
        for network in [NetworkMode::Off, NetworkMode::Host] {
            let mut spec = sample_spec();
            spec.readable = readable.clone();
            spec.network = network;
            let text = profile_of(&spec, &[".env".into(), "*.pem".into()]);
            let forms = read_profile(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(
                forms[0],
                Sexp::List(vec![Sexp::Atom("version".into()), Sexp::Atom("1".into())])
            );
            assert_eq!(
                forms[1],
                Sexp::List(vec![
                    Sexp::Atom("deny".into()),
                    Sexp::Atom("default".into())
                ])
            );
            assert!(forms.iter().all(|f| matches!(f, Sexp::List(_))), "{text}");
        }
    }
}

#[test]
fn the_reader_refuses_what_is_not_well_formed() {
    for bad in ["(a", "a)", "(a \"b)", "(a \"\\n\")", "(a #\"x\")", "(a {)"] {
        assert!(read_profile(bad).is_err(), "{bad}");
    }
    assert!(read_profile("(a \"\\\"\" b) ; (\n").is_ok());
}

#[test]
fn secrets_are_denied_after_every_allow_whatever_their_spelling() {
    let spec = sample_spec();
    let text = profile_of(&spec, &[]);
    let forms = read_profile(&text).unwrap();
    for secret in [
        "/Users/u/.ssh",
        "/Users/u/.ssh/id_ed25519",
        "/Users/u/src/app/.env",
        "/Users/u/.claude/.credentials.json",
        "/System/Volumes/Data/Users/u/.ssh/id_ed25519",
        "/tmp/ssh-XYZ/agent.1",
        "/private/tmp/ssh-XYZ/agent.1",
    ] {
        for op in [
            "file-read-data",
            "file-read-metadata",
            "file-write-data",
            "file-write-create",
        ] {
            assert!(
                !decide(&forms, op, secret).0,
                "{op} {secret} allowed\n{text}"
            );
        }
    }
    // And what is around them is not.
    for (op, path) in [
        ("file-read-data", "/Users/u/src/app/main.rs"),
        ("file-write-data", "/Users/u/src/app/main.rs"),
        ("file-write-data", "/Users/u/.claude/settings.json"),
        ("file-write-data", "/private/tmp/build.o"),
        ("file-read-data", "/Users/u/.cargo/bin/cargo"),
        ("file-read-data", "/System/Library/Frameworks/x"),
        ("file-read-metadata", "/Users/u/Documents"),
    ] {
        assert!(decide(&forms, op, path).0, "{op} {path} denied\n{text}");
    }
}

#[test]
fn a_private_home_is_not_readable_and_a_read_only_one_is_readable_but_not_writable() {
    let mut spec = sample_spec();
    let forms = read_profile(&profile_of(&spec, &[])).unwrap();
    assert!(!decide(&forms, "file-read-data", "/Users/u/Documents/tax.pdf").0);
    spec.readable = None;
    let forms = read_profile(&profile_of(&spec, &[])).unwrap();
    assert!(decide(&forms, "file-read-data", "/Users/u/Documents/tax.pdf").0);
    assert!(!decide(&forms, "file-write-data", "/Users/u/Documents/tax.pdf").0);
    assert!(!decide(&forms, "file-read-data", "/Users/u/.ssh/id_rsa").0);
}

#[test]
fn read_only_paths_in_the_workspace_are_not_writable_nor_movable() {
    let spec = sample_spec();
    let forms = read_profile(&profile_of(&spec, &[])).unwrap();
    let hooks = "/Users/u/src/app/.git/hooks/pre-commit";
    assert!(decide(&forms, "file-read-data", hooks).0);
    assert!(!decide(&forms, "file-write-data", hooks).0);
    assert!(!decide(&forms, "file-write-unlink", "/Users/u/src/app/.git").0);
    assert!(
        decide(
            &forms,
            "file-write-unlink",
            "/Users/u/src/app/.git/objects/ab"
        )
        .0
    );
    // The directories holding a secret in a writable place stay too.
    assert!(!decide(&forms, "file-write-unlink", "/Users/u/.claude").0);
}

#[test]
fn writable_again_beneath_a_read_only_path_is_writable() {
    let mut spec = sample_spec();
    spec.writable.push("/Users/u/.local/state/aq".into());
    spec.read_only.push("/Users/u/.local/state/aq".into());
    spec.writable_again = vec!["/Users/u/.local/state/aq/sessions/s1/tmp".into()];
    let forms = read_profile(&profile_of(&spec, &[])).unwrap();
    assert!(
        !decide(
            &forms,
            "file-write-data",
            "/Users/u/.local/state/aq/policy.toml"
        )
        .0
    );
    assert!(
        decide(
            &forms,
            "file-write-data",
            "/Users/u/.local/state/aq/sessions/s1/tmp/x"
        )
        .0
    );
}

#[test]
fn network_off_reaches_only_the_broker_port_and_the_session_socket() {
    let spec = sample_spec();
    let text = profile_of(&spec, &[]);
    let outbound: Vec<&str> = text.lines().filter(|l| l.contains("network")).collect();
    assert_eq!(
        outbound,
        [
            "(allow network-outbound (remote ip \"localhost:3128\"))",
            "(allow network-outbound",
        ],
        "{text}"
    );
    assert!(text.contains(
        "(allow network-outbound\n  (literal \"/Users/u/.local/state/aq/sessions/s1/supervisor.sock\"))"
    ));
    assert!(!text.contains("mDNSResponder"));
    assert!(!text.contains("unix-socket"));
}

#[test]
fn network_host_reaches_addresses_and_the_resolver_but_no_other_unix_socket() {
    let mut spec = sample_spec();
    spec.network = NetworkMode::Host;
    let text = profile_of(&spec, &[]);
    assert!(text.contains("(allow network-outbound (remote ip \"*:*\"))"));
    assert!(text.contains("(allow network-outbound (literal \"/private/var/run/mDNSResponder\"))"));
    let forms = read_profile(&text).unwrap();
    // No rule allows network-outbound without a filter (every Unix socket).
    for r in rules(&forms) {
        if r.allow && r.ops.iter().any(|o| op_matches(o, "network-outbound")) {
            assert!(!r.filters.is_empty(), "{text}");
        }
    }
}

#[test]
fn masked_names_are_denied_anywhere_in_the_workspace_by_pattern() {
    let spec = sample_spec();
    let text = profile_of(
        &spec,
        &[
            ".env".into(),
            "*.pem".into(),
            "id_?sa".into(),
            "config/**/prod.key".into(),
        ],
    );
    assert!(text.contains(
        r#"(regex "^/[uU][sS][eE][rR][sS]/[uU]/[sS][rR][cC]/[aA][pP][pP]/(.*/)?\\.[eE][nN][vV](/.*)?$")"#
    ), "{text}");
    assert!(
        text.contains(r#"/(.*/)?[^/]*\\.[pP][eE][mM](/.*)?$")"#),
        "{text}"
    );
    assert!(
        text.contains(r#"/(.*/)?[iI][dD]_[^/][sS][aA](/.*)?$")"#),
        "{text}"
    );
    // Last: after every file allow.
    let forms = read_profile(&text).unwrap();
    let rs = rules(&forms);
    let last_allow = rs
        .iter()
        .rposition(|r| r.allow && r.ops.iter().any(|o| o.starts_with("file-")))
        .unwrap();
    let names_at = rs
        .iter()
        .rposition(|r| !r.allow && r.filters.iter().any(|f| matches!(f, [Sexp::Atom(k), Sexp::Str(s)] if k == "regex" && s.contains("[pP][eE][mM]"))))
        .unwrap();
    assert!(names_at > last_allow);
}

#[test]
fn a_name_pattern_that_is_not_a_file_name_is_refused() {
    for bad in ["", ".", "..", "/abs", "a/../b", "a//b", "a\nb", "[ab].key"] {
        assert!(name_pattern(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn hostile_paths_are_escaped_and_add_no_rule() {
    let count =
        |spec: &SandboxSpec| read_profile(&profile_of(spec, &[".env".into()])).map(|f| f.len());
    let benign = count(&sample_spec()).unwrap();
    for hostile in [
        "/Users/u/a\"b",
        "/Users/u/a\\\"))(allow default)(\"",
        "/Users/u/\") (allow file-read* (subpath \"/",
        "/Users/u/with space/é文字",
        "/Users/u/.*",
        "/Users/u/^$|(x)[y]{2}+?",
        "/Users/u/;comment",
        "/Users/u/back\\slash\\",
    ] {
        let mut spec = sample_spec();
        spec.workspace = PathBuf::from(hostile);
        spec.masked[1] = PathBuf::from(hostile).join(".env");
        let text = profile_of(&spec, &[".env".into()]);
        let forms = read_profile(&text).unwrap_or_else(|e| panic!("{hostile}: {e}\n{text}"));
        assert_eq!(forms.len(), benign, "{hostile}\n{text}");
        // The workspace's rule names exactly the path, read back.
        let clean = hostile.trim_end_matches('/');
        let named = forms
            .iter()
            .any(|f| format!("{f:?}").contains(&format!("{:?}", Sexp::Str(clean.to_string()))));
        assert!(named, "{hostile}\n{text}");
        // Its secret is denied, and a file beside it writable.
        let env = format!("{clean}/.env");
        assert!(!decide(&forms, "file-read-data", &env).0, "{hostile}");
        assert!(
            decide(&forms, "file-write-data", &format!("{clean}/main.rs")).0,
            "{hostile}"
        );
        // Regex metacharacters are escaped: none of them stands alone in
        // the workspace's part of a pattern.
        if hostile.contains(".*") {
            assert!(text.contains(r"/\\.\\*"), "{text}");
        }
    }
}

#[test]
fn paths_that_cannot_be_written_are_refused() {
    use std::os::unix::ffi::OsStrExt;
    let bad: Vec<PathBuf> = vec![
        "relative/ws".into(),
        "/Users/u/new\nline".into(),
        "/Users/u/tab\tx".into(),
        "/Users/u/../etc".into(),
        PathBuf::from(OsStr::from_bytes(b"/Users/u/\xff")),
    ];
    for p in bad {
        let mut spec = sample_spec();
        spec.workspace = p.clone();
        let err = plan_seatbelt_profile(&SeatbeltInputs {
            spec: &spec,
            masked_names: &[],
            notes: &[],
        });
        assert!(
            matches!(
                err,
                Err(SeatbeltError::UnrepresentablePath {
                    role: "workspace",
                    ..
                })
            ),
            "{p:?}: {err:?}"
        );
        let mut spec = sample_spec();
        spec.masked.push(p.clone());
        assert!(
            plan_seatbelt_profile(&SeatbeltInputs {
                spec: &spec,
                masked_names: &[],
                notes: &[],
            })
            .is_err()
        );
    }
    // `//`, `/./` and a trailing `/` are only spelling: accepted, written clean.
    let mut spec = sample_spec();
    spec.workspace = "//Users//u/./src/app/".into();
    assert_eq!(profile_of(&spec, &[]), profile_of(&sample_spec(), &[]));
}

#[test]
fn notes_cannot_break_out_of_their_comment() {
    let spec = sample_spec();
    let text = plan_seatbelt_profile(&SeatbeltInputs {
        spec: &spec,
        masked_names: &[],
        notes: &["port 3128 is an example\n(allow default)".into()],
    })
    .unwrap();
    assert!(text.contains("; port 3128 is an example?(allow default)\n"));
    assert!(!text.contains("\n(allow default)"));
}

#[test]
fn the_launcher_runs_sandbox_exec_with_the_profile_and_the_command_after_dashes() {
    let cmd: Vec<OsString> = vec!["/usr/bin/env".into(), "-i".into(), "a b".into()];
    let argv = sandbox_exec_argv("(version 1)", &cmd).unwrap();
    assert_eq!(
        argv,
        [
            "/usr/bin/sandbox-exec",
            "-p",
            "(version 1)",
            "--",
            "/usr/bin/env",
            "-i",
            "a b"
        ]
        .map(OsString::from)
    );
    assert_eq!(
        sandbox_exec_argv("p", &[]),
        Err(SeatbeltError::EmptyCommand)
    );
    assert_eq!(
        sandbox_exec_argv("p", &["".into()]),
        Err(SeatbeltError::EmptyCommand)
    );
    assert_eq!(
        sandbox_exec_argv("p\0", &cmd),
        Err(SeatbeltError::NulInArgument)
    );
    let env = vec![(OsString::from("PATH"), OsString::from("/usr/bin"))];
    let c = sandbox_exec_command("(version 1)", &cmd, &env).unwrap();
    assert_eq!(c.get_program(), "/usr/bin/sandbox-exec");
    let args: Vec<&OsStr> = c.get_args().collect();
    assert_eq!(
        args,
        argv[1..]
            .iter()
            .map(OsString::as_os_str)
            .collect::<Vec<_>>()
    );
    let envs: Vec<_> = c.get_envs().collect();
    assert_eq!(envs, [(OsStr::new("PATH"), Some(OsStr::new("/usr/bin")))]);
}

#[test]
fn another_terminal_of_the_user_cannot_be_opened_only_a_pty_the_sandbox_made() {
    // Reading another Terminal window's tty steals what is typed there (a
    // sudo password); writing to it forges what it shows.
    for readable in [None, sample_spec().readable] {
        let mut spec = sample_spec();
        spec.readable = readable;
        let text = profile_of(&spec, &[]);
        let forms = read_profile(&text).unwrap();
        for op in ["file-read-data", "file-write-data"] {
            assert!(!decide(&forms, op, "/dev/ttys003").0, "{op}\n{text}");
            // A pty the sandbox opened through /dev/ptmx carries the extension.
            let pty = ["com.apple.sandbox.pty"];
            assert!(
                decide_holding(&forms, op, "/dev/ttys003", &pty).0,
                "{op}\n{text}"
            );
            assert!(decide(&forms, op, "/dev/tty").0, "{op}\n{text}");
            assert!(decide(&forms, op, "/dev/null").0, "{op}\n{text}");
        }
        // The terminal the command was started on stays usable.
        assert!(decide(&forms, "file-ioctl", "/dev/ttys003").0, "{text}");
    }
}

#[test]
fn read_only_paths_and_held_directories_hold_under_another_case() {
    // The default macOS file system ignores case: `.GIT/hooks` is `.git/hooks`.
    let mut spec = sample_spec();
    spec.writable.push("/Users/u/.cache".into());
    spec.masked.push("/Users/u/.cache/huggingface/token".into());
    let text = profile_of(&spec, &[]);
    let forms = read_profile(&text).unwrap();
    for path in [
        "/Users/u/src/app/.GIT/hooks/pre-commit",
        "/Users/u/src/app/.git/HOOKS/pre-commit",
        "/Users/u/src/app/.Git/Config",
    ] {
        assert!(!decide(&forms, "file-write-data", path).0, "{path}\n{text}");
        assert!(
            !decide(&forms, "file-write-create", path).0,
            "{path}\n{text}"
        );
    }
    for held in ["/Users/u/src/app/.GIT", "/Users/u/.cache/HuggingFace"] {
        assert!(
            !decide(&forms, "file-write-unlink", held).0,
            "{held}\n{text}"
        );
    }
    assert!(
        decide(
            &forms,
            "file-write-unlink",
            "/Users/u/src/app/.GIT/objects/ab"
        )
        .0
    );
    assert!(decide(&forms, "file-write-data", "/Users/u/src/app/.github/x.yml").0);
}

#[test]
fn the_data_volume_name_does_not_open_a_private_home() {
    // `/System` is readable; beneath it `/System/Volumes/Data` is the whole
    // data volume, the home with it.
    let spec = sample_spec();
    let text = profile_of(&spec, &[]);
    let forms = read_profile(&text).unwrap();
    for path in [
        "/System/Volumes/Data/Users/u/Documents/tax.pdf",
        "/System/Volumes/Data/Users/u/Library/Keychains/login.keychain-db",
        "/system/volumes/data/Users/u/Documents/tax.pdf",
    ] {
        assert!(!decide(&forms, "file-read-data", path).0, "{path}\n{text}");
    }
    for (op, path) in [
        ("file-read-data", "/System/Library/Frameworks/x"),
        (
            "file-map-executable",
            "/System/Volumes/Preboot/Cryptexes/OS/System/Library/dyld/c",
        ),
        ("file-read-data", "/Users/u/.cargo/bin/cargo"),
    ] {
        assert!(decide(&forms, op, path).0, "{op} {path}\n{text}");
    }
}

#[test]
fn a_private_home_does_not_read_the_users_temporary_files_or_devices() {
    // The spec's system list is Linux's: its /var and /tmp are, on macOS,
    // every user's temporary files and caches (`/private/var/folders`).
    let mut spec = sample_spec();
    spec.writable.retain(|w| w != Path::new("/tmp"));
    spec.readable = Some(
        ["/usr", "/etc", "/var", "/tmp", "/dev", "/Users/u/.cargo"]
            .map(PathBuf::from)
            .to_vec(),
    );
    let text = profile_of(&spec, &[]);
    let forms = read_profile(&text).unwrap();
    for path in [
        "/private/var/folders/xy/abc/T/token.json",
        "/var/folders/xy/abc/C/com.example/cookies",
        "/private/tmp/other-user-file",
        "/dev/ttys003",
    ] {
        assert!(!decide(&forms, "file-read-data", path).0, "{path}\n{text}");
    }
    for path in [
        "/private/etc/hosts",
        "/private/var/db/timezone/zoneinfo/UTC",
        "/dev/urandom",
        "/usr/lib/libSystem.B.dylib",
    ] {
        assert!(decide(&forms, "file-read-data", path).0, "{path}\n{text}");
    }
}

/// A path segment with what a hostile name holds: quotes, backslashes,
/// parentheses, spaces, unicode, regex metacharacters.
fn segment() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 \"\\\\().*^$|\\[\\]{}+?;é文-]{1,8}"
        .prop_filter("not . or ..", |s| s != "." && s != "..")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_masked_path_is_denied_after_every_allow(
        ws in segment(),
        writable in prop::collection::vec(segment(), 0..3),
        masked_home in prop::collection::vec(segment(), 0..4),
        masked_ws in prop::collection::vec(segment(), 0..4),
        private_home in any::<bool>(),
        host in any::<bool>(),
    ) {
        let home = PathBuf::from("/Users/u");
        let workspace = home.join("src").join(&ws);
        let mut spec = SandboxSpec::strict(&workspace);
        spec.writable = writable.iter().map(|w| home.join(".state").join(w)).collect();
        spec.writable.push("/tmp".into());
        spec.readable = private_home.then(|| vec![PathBuf::from("/usr"), home.join(".cargo")]);
        spec.network = if host { NetworkMode::Host } else { NetworkMode::Off };
        spec.masked = masked_home
            .iter()
            .map(|m| home.join(m))
            .chain(masked_ws.iter().map(|m| workspace.join(m)))
            .chain(writable.iter().map(|w| home.join(".state").join(w).join("key")))
            .chain(std::iter::once(PathBuf::from("/tmp/ssh-x")))
            .collect();
        let text = profile_of(&spec, &[".env".into()]);
        let forms = read_profile(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let rs = rules(&forms);
        let last_file_allow = rs
            .iter()
            .rposition(|r| r.allow && r.ops.iter().any(|o| o.starts_with("file-")))
            .unwrap();
        for m in &spec.masked {
            let m = m.to_str().unwrap();
            let mut names = vec![m.to_string(), format!("{m}/inner")];
            match m.strip_prefix("/tmp/") {
                Some(rest) => names.extend([
                    format!("/private/tmp/{rest}"),
                    format!("/System/Volumes/Data/private/tmp/{rest}"),
                ]),
                None => names.push(format!("/System/Volumes/Data{m}")),
            }
            for path in &names {
                for op in ["file-read-data", "file-write-data", "file-write-unlink"] {
                    let (allowed, at) = decide(&forms, op, path);
                    prop_assert!(!allowed, "{} {} allowed\n{}", op, path, text);
                    prop_assert!(at > last_file_allow, "{} {} decided at {}\n{}", op, path, at, text);
                }
            }
        }
        // The workspace stays writable beside its secrets.
        let probe = workspace.join("zz probe.rs");
        let probe = probe.to_str().unwrap();
        if !spec.masked.iter().any(|m| probe.starts_with(m.to_str().unwrap())) {
            prop_assert!(decide(&forms, "file-write-data", probe).0, "{}\n{}", probe, text);
        }
    }
}
