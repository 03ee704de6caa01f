//! Policy files end to end: `aq policy init|show|trust|untrust`, `aq check`,
//! `--policy`, and `aq explain` under the effective policy.

use serde_json::Value;

use crate::util::Env;

const ASKED: &str = "npm install left-pad"; // pkg-install: ask
const BLOCKED: &str = "cat .env"; // secret-read: block

const LOOSENING: &str = r#"version = 1
[rules]
"pkg-install" = "allow"
"secret-read" = "allow"
"#;

/// `aq explain --json -- LINE`: the decision and the deciding rule's id and action.
fn decide(env: &Env, extra: &[&str], line: &str) -> (String, String, String) {
    let mut args = extra.to_vec();
    args.extend(["explain", "--json", "--", line]);
    let out = env.aq(&args);
    out.code(0);
    let v = out.json();
    let str_of = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        str_of(&v["decision"]),
        str_of(&v["rules"][0]["id"]),
        str_of(&v["rules"][0]["action"]),
    )
}

#[test]
fn policy_init_writes_files_that_check_accepts() {
    let env = Env::new();
    env.aq(&["policy", "init"])
        .code(0)
        .stdout_has(&env.user_policy().display().to_string());
    env.aq(&["policy", "init", "--project"])
        .code(0)
        .stdout_has("aq policy trust");
    let user = std::fs::read_to_string(env.user_policy()).unwrap();
    assert!(
        user.contains("version = 1") && user.contains("# [[rule]]"),
        "{user}"
    );
    let project = std::fs::read_to_string(env.project_policy()).unwrap();
    assert!(project.contains("may only tighten"), "{project}");

    let out = env.aq(&["check"]);
    out.code(0)
        .stdout_has(&format!("ok: {}", env.user_policy().display()))
        .stdout_has(&format!("ok: {}", env.project_policy().display()));
    let path = env.user_policy().display().to_string();
    env.aq(&["check", &path])
        .code(0)
        .stdout_has(&format!("ok: {path}"));
    // The starter file changes nothing.
    assert_eq!(decide(&env, &[], ASKED).0, "ask");
}

#[test]
fn policy_init_refuses_to_overwrite_without_force() {
    let env = Env::new();
    env.write(&env.user_policy(), "[rules]\n\"pkg-install\" = \"allow\"\n");
    env.aq(&["policy", "init", "--user"])
        .code(2)
        .stderr_has("already exists")
        .stderr_has("--force");
    assert!(
        std::fs::read_to_string(env.user_policy())
            .unwrap()
            .contains("pkg-install")
    );
    env.aq(&["policy", "init", "--user", "--force"]).code(0);
    let written = std::fs::read_to_string(env.user_policy()).unwrap();
    assert!(
        written.starts_with("# agent-quarantine: your policy"),
        "{written}"
    );
}

#[test]
fn check_with_no_files_says_where_it_looked() {
    let env = Env::new();
    env.aq(&["check"])
        .code(0)
        .stdout_has("no policy files found")
        .stdout_has(&env.project_policy().display().to_string());
}

#[test]
fn malformed_file_exits_2_with_line_and_column() {
    let env = Env::new();
    let bad = env.work().join("bad.toml");
    env.write(&bad, "version = 1\n\n[paths]\n  sensitve = [\"*.kdbx\"]\n");
    let good = env.work().join("good.toml");
    env.write(&good, "version = 1\n");
    env.aq(&["check", "good.toml", "bad.toml"])
        .code(2)
        .stdout_has("ok: good.toml")
        .stderr_has("bad.toml:4:3: unknown field `sensitve`, expected `sensitive`")
        .stderr_has("help:");

    // Discovered files too, and explain refuses to guess.
    env.write(&env.user_policy(), "[rules]\n\"pkg-instal\" = \"allow\"\n");
    let at = format!(
        "{}:2:1: unknown rule id `pkg-instal`",
        env.user_policy().display()
    );
    env.aq(&["check"])
        .code(2)
        .stderr_has(&at)
        .stderr_has("aq explain --rules");
    env.aq(&["explain", "--", "ls"]).code(2).stderr_has(&at);
    env.aq(&["policy", "show"]).code(2).stderr_has(&at);

    // A bad value lists the accepted ones.
    env.write(&env.user_policy(), "[rules]\n\"pkg-install\" = \"deny\"\n");
    env.aq(&["check"]).code(2).stderr_has(
        ":2:17: `pkg-install`: unknown decision `deny`; expected one of: allow, ask, block",
    );
}

#[test]
fn explain_json_honours_the_user_policy() {
    let env = Env::new();
    assert_eq!(
        decide(&env, &[], ASKED),
        ("ask".into(), "pkg-install".into(), "ask".into())
    );
    env.write(
        &env.user_policy(),
        "version = 1\n[rules]\n\"pkg-install\" = \"allow\"\n\"git-push\" = \"block\"\n",
    );
    assert_eq!(
        decide(&env, &[], ASKED),
        ("allow".into(), "pkg-install".into(), "allow".into())
    );
    assert_eq!(decide(&env, &[], "git push origin main").0, "block");

    let show = env.aq(&["policy", "show", "--json"]);
    show.code(0);
    let v = show.json();
    let rule = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "pkg-install")
        .cloned()
        .unwrap();
    assert_eq!(rule["action"], "allow", "{rule}");
    assert_eq!(rule["default"], "ask", "{rule}");
    assert_eq!(
        rule["source"],
        env.user_policy().display().to_string(),
        "{rule}"
    );
    assert_eq!(rule["line"], 3, "{rule}");
    let untouched = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "secret-read")
        .cloned()
        .unwrap();
    assert_eq!(untouched["source"], "built-in", "{untouched}");
}

#[test]
fn policy_flag_applies_after_the_project_file() {
    let env = Env::new();
    let flag = env.root().join("loose.toml");
    env.write(&flag, LOOSENING);
    let flag = flag.display().to_string();
    assert_eq!(decide(&env, &["--policy", &flag], ASKED).0, "allow");
    // Global: after the subcommand too.
    let out = env.aq(&["explain", "--policy", &flag, "--json", "--", BLOCKED]);
    assert_eq!(out.code(0).json()["decision"], "allow");

    env.aq(&["--policy", "missing.toml", "explain", "--", "ls"])
        .code(2)
        .stderr_has("missing.toml: no such file (given with --policy)");
}

#[test]
fn untrusted_project_cannot_loosen_but_trusted_can() {
    let env = Env::new();
    env.write(&env.project_policy(), LOOSENING);
    let project = env.project_policy().display().to_string();

    // Untrusted: both entries ignored, with a warning naming file:line:col.
    let out = env.aq(&["explain", "--json", "--", ASKED]);
    out.code(0)
        .stderr_has(&format!(
            "warning: {project}:3:1: ignored `\"pkg-install\" = \"allow\"`"
        ))
        .stderr_has(&format!(
            "{project}:4:1: ignored `\"secret-read\" = \"allow\"`"
        ))
        .stderr_has("aq policy trust");
    assert_eq!(out.json()["decision"], "ask");
    assert_eq!(decide(&env, &[], BLOCKED).0, "block");
    env.aq(&["check"])
        .code(0)
        .stdout_has(&format!("ok: {project}"))
        .stdout_has("warning: ")
        .stdout_has("ignored `\"secret-read\" = \"allow\"`");
    env.aq(&["policy", "show"])
        .code(0)
        .stdout_has("untrusted: may only tighten")
        .stdout_has("ignored (an untrusted project file may only tighten the policy)");

    // Tightening still applies, and so do custom block rules.
    env.write(
        &env.project_policy(),
        r#"[rules]
"pkg-install" = "block"

[[rule]]
id = "no-terraform-apply"
action = "block"
risk = "high"
why = "applies infrastructure changes to real accounts"
safer = "run terraform plan and let a person apply"
program = ["terraform"]
subcommand = ["apply"]
"#,
    );
    assert_eq!(decide(&env, &[], ASKED).0, "block");
    let out = env.aq(&["explain", "--json", "--", "terraform apply -auto-approve"]);
    let v = out.code(0).stderr_lacks("warning").json();
    assert_eq!(v["decision"], "block", "{v}");
    assert_eq!(v["rules"][0]["id"], "no-terraform-apply", "{v}");
    assert_eq!(
        v["rules"][0]["why"],
        "applies infrastructure changes to real accounts"
    );
    env.aq(&["explain", "--", "terraform apply"])
        .code(0)
        .stdout_has("no-terraform-apply -> block [risk: high]")
        .stdout_has("safer: run terraform plan and let a person apply");

    // Trusted: the loosening entries apply, from the git root or below it.
    env.write(&env.project_policy(), LOOSENING);
    env.aq(&["policy", "trust"])
        .code(0)
        .stdout_has("trusted: ")
        .stdout_has("sha256 ");
    let store = std::fs::read_to_string(env.config_dir().join("trusted.toml")).unwrap();
    assert!(
        store.contains("agent-quarantine.toml") && store.contains("sha256 = "),
        "{store}"
    );
    let out = env.aq(&["explain", "--json", "--", ASKED]);
    assert_eq!(
        out.code(0).stderr_lacks("warning").json()["decision"],
        "allow"
    );
    assert_eq!(decide(&env, &[], BLOCKED).0, "allow");
    let sub = env.work().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let out = env.aq_in(&sub, &["explain", "--json", "--", ASKED]);
    assert_eq!(out.code(0).json()["decision"], "allow");
    let show = env.aq(&["policy", "show", "--json"]);
    let v = show.code(0).json();
    assert_eq!(v["files"][0]["layer"], "project", "{v}");
    assert_eq!(v["files"][0]["trust"], "full", "{v}");

    // Untrust: back to tighten-only.
    env.aq(&["policy", "untrust"])
        .code(0)
        .stdout_has("untrusted: ");
    assert_eq!(decide(&env, &[], ASKED).0, "ask");
    env.aq(&["policy", "untrust"])
        .code(0)
        .stdout_has("not trusted");
}

#[test]
fn trust_lapses_when_the_project_file_changes() {
    let env = Env::new();
    env.write(&env.project_policy(), LOOSENING);
    env.aq(&["policy", "trust", "agent-quarantine.toml"])
        .code(0);
    assert_eq!(decide(&env, &[], ASKED).0, "allow");

    env.write(
        &env.project_policy(),
        &format!("{LOOSENING}\"docker-run\" = \"allow\"\n"),
    );
    let out = env.aq(&["explain", "--json", "--", ASKED]);
    out.code(0)
        .stderr_has("changed since it was trusted")
        .stderr_has("ignored `\"pkg-install\" = \"allow\"`");
    assert_eq!(out.json()["decision"], "ask");
    env.aq(&["policy", "show"])
        .code(0)
        .stdout_has("changed since it was trusted");
    let v = env.aq(&["policy", "show", "--json"]).json();
    assert_eq!(v["files"][0]["trust"], "tighten-only", "{v}");

    env.aq(&["policy", "trust"]).code(0);
    assert_eq!(decide(&env, &[], ASKED).0, "allow");
}

#[test]
fn trust_refuses_missing_and_invalid_files() {
    let env = Env::new();
    env.aq(&["policy", "trust"])
        .code(2)
        .stderr_has("no such file; nothing to trust");
    env.write(&env.project_policy(), "[rules]\nbogus = \"allow\"\n");
    env.aq(&["policy", "trust"])
        .code(2)
        .stderr_has("agent-quarantine.toml:2:1: unknown rule id `bogus`")
        .stderr_has("fix the file before trusting it");
    assert!(!env.config_dir().join("trusted.toml").exists());
}

/// `aq explain --program NAME`: what the capability model knows, as text and
/// JSON; an unknown name is an error that says so.
#[test]
fn explain_program_shows_the_capability_model() {
    let env = Env::new();
    env.aq(&["explain", "--program", "tar"])
        .code(0)
        .stdout_has("program:  tar")
        .stdout_has("--checkpoint-action=exec=")
        .stdout_has("not asked about:");

    let out = env.aq(&["explain", "--json", "--program", "python3.12"]);
    out.code(0);
    let v = out.json();
    assert_eq!(v["program"], "python3");
    assert!(
        v["caps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["does"] == "serve" && c["how"].as_str().unwrap().contains("http.server")),
        "{v}"
    );

    env.aq(&["explain", "--program", "no-such-program-x"])
        .code(2)
        .stderr_has("no capability entry");
}

// ---- `aq policy show`: what a session started here gets --------------------

/// The `in_force` entry of `aq policy show --json` for `profile`.
fn in_force(env: &Env, profile: &str) -> Value {
    let v = env.aq(&["policy", "show", "--json"]).code(0).json();
    v["in_force"]
        .as_array()
        .and_then(|all| all.iter().find(|p| p["profile"] == profile).cloned())
        .unwrap_or_else(|| panic!("no profile {profile} in {v}"))
}

/// The values of `key` in a list of sourced entries.
fn values(list: &Value, key: &str) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e[key].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_net_grant_shows_under_the_network_of_strict_with_its_file_and_date() {
    let env = Env::new();
    env.aq(&["policy", "show"])
        .code(0)
        .stdout_has("    network:   off\n");
    env.aq(&["allow", "--net", "registry.example.invalid"])
        .code(0);
    let user = env.user_policy().display().to_string();
    env.aq(&["policy", "show"])
        .code(0)
        .stdout_has("network:   only registry.example.invalid through the broker")
        .stdout_has(&format!(
            "your policy {user}:4:10 [network] allow, `aq allow` on 20"
        ))
        // dev has the host's network: the entry is listed as not used there.
        .stdout_has("not used by this profile (its network is the host's):");
    let strict = in_force(&env, "strict");
    let allow = &strict["network"]["allow"][0];
    assert_eq!(strict["network"]["mode"], "broker", "{strict}");
    assert_eq!(allow["entry"], "registry.example.invalid", "{strict}");
    assert_eq!(allow["layer"], "user", "{strict}");
    assert_eq!(allow["source"], user.as_str(), "{strict}");
    assert_eq!(allow["place"], "[network] allow", "{strict}");
    assert!(
        allow["granted"]
            .as_str()
            .is_some_and(|d| d.starts_with("20")),
        "{strict}"
    );
    let dev = in_force(&env, "dev");
    assert_eq!(dev["network"]["mode"], "host", "{dev}");
    assert_eq!(
        values(&dev["network"]["unused"], "entry"),
        ["registry.example.invalid"]
    );
    // Taken back: gone from the network, and its date with it.
    env.aq(&["deny", "--net", "registry.example.invalid"])
        .code(0);
    assert_eq!(in_force(&env, "strict")["network"]["mode"], "off");
    let dates = std::fs::read_to_string(env.config_dir().join("grants.toml")).unwrap();
    assert!(!dates.contains("registry.example.invalid"), "{dates}");
}

#[test]
fn a_repository_network_allow_shows_with_the_repository_file_once_trusted() {
    let env = Env::new();
    env.write(
        &env.project_policy(),
        "version = 1\n[network]\nallow = [\"mirror.example.invalid\"]\nresolve = [\"mirror.example.invalid:127.0.0.1\"]\n",
    );
    let project = env.project_policy().display().to_string();
    // Untrusted: not in force, and said so.
    env.aq(&["policy", "show"])
        .code(0)
        .stdout_has("    network:   off\n")
        .stdout_has("ignored [network] allow `mirror.example.invalid`");
    assert_eq!(in_force(&env, "strict")["network"]["mode"], "off");
    env.aq(&["policy", "trust"]).code(0);
    env.aq(&["policy", "show"])
        .code(0)
        .stdout_has("only mirror.example.invalid through the broker")
        .stdout_has(&format!(
            "the repository's policy {project}:3:10 [network] allow\n"
        ))
        .stdout_has("pinned (never resolved):")
        .stdout_has(&format!(
            "mirror.example.invalid:127.0.0.1  the repository's policy {project}:4:12 [network] resolve\n"
        ));
    let strict = in_force(&env, "strict");
    let allow = &strict["network"]["allow"][0];
    assert_eq!(allow["layer"], "project", "{strict}");
    assert_eq!(allow["line"], 3, "{strict}");
    assert!(allow["granted"].is_null(), "{strict}");
    assert_eq!(
        values(&strict["network"]["resolve"], "entry"),
        ["mirror.example.invalid:127.0.0.1"]
    );
}

#[test]
fn path_grants_show_as_writable_and_readable_with_their_source() {
    let env = Env::new();
    env.aq(&["allow", "~/.cache/acme"]).code(0);
    env.aq(&["allow", "--read-only", "~/data"]).code(0);
    env.aq(&["allow", "--here", "--read-only", "/srv/fixtures"])
        .code(0);
    let user = env.user_policy().display().to_string();
    let work = std::fs::canonicalize(env.work()).unwrap();
    let out = env.aq(&["policy", "show", "--profile", "strict"]);
    out.code(0)
        .stdout_has("    writable:  the workspace, the session's TMPDIR, and:\n")
        .stdout_has("      /dev/null                 built-in\n")
        .stdout_has(&format!(
            "      ~/.cache/acme             your policy {user}:"
        ))
        .stdout_has(" [profile.strict] writable, `aq allow` on 20")
        .stdout_has(" [profile.strict] readable, `aq allow` on 20")
        .stdout_has(&format!(
            " [workspace.\"{}\"] readable, `aq allow` on 20",
            work.display()
        ))
        .stdout_lacks("profile dev:");
    let strict = in_force(&env, "strict");
    assert_eq!(
        values(&strict["writable"], "path"),
        ["/dev/null", "~/.cache/acme"]
    );
    assert_eq!(
        values(&strict["readable"], "path"),
        ["~/data", "/srv/fixtures"]
    );
    assert_eq!(strict["writable"][0]["source"], "built-in");
    assert_eq!(strict["readable"][0]["place"], "[profile.strict] readable");
    assert_eq!(strict["readable"][0]["source"], user.as_str());
    // `--here` holds for every profile of this workspace, and no other.
    let dev = in_force(&env, "dev");
    assert!(
        values(&dev["readable"], "path").contains(&"/srv/fixtures".to_string()),
        "{dev}"
    );
    assert!(
        !values(&dev["readable"], "path").contains(&"~/data".to_string()),
        "{dev}"
    );
    let elsewhere = env.root().join("other");
    std::fs::create_dir_all(elsewhere.join(".git")).unwrap();
    let v = env
        .aq_in(&elsewhere, &["policy", "show", "--json"])
        .code(0)
        .json();
    assert!(!v["in_force"].to_string().contains("/srv/fixtures"), "{v}");
    env.aq(&["policy", "show", "--profile", "nope"])
        .code(2)
        .stderr_has("unknown profile `nope`");
}

/// What `aq policy show` says a session gets is what `aq run` gives it: the
/// allowlist in the session_start event, the network in its layers, and the
/// paths really writable and readable in the sandbox.
#[test]
fn policy_show_agrees_with_what_aq_run_applies() {
    let env = Env::new();
    let home = env.root().join("home");
    std::fs::create_dir_all(home.join(".cache/acme")).unwrap();
    env.write(&home.join("data/f"), "fixture\n");
    env.aq(&["allow", "--net", "registry.example.invalid"])
        .code(0);
    env.aq(&["allow", "--net", "*.mirror.example.invalid:443"])
        .code(0);
    env.aq(&["allow", "~/.cache/acme"]).code(0);
    env.aq(&["allow", "--read-only", "~/data"]).code(0);
    let shown = in_force(&env, "strict");
    env.write(
        &env.work().join("p.sh"),
        &format!(
            "echo ok > '{0}/.cache/acme/x' && echo wrote; cat '{0}/data/f'\n",
            home.display()
        ),
    );
    env.aq(&["run", "--quiet", "--", "sh", "p.sh"])
        .code(0)
        .stdout_has("wrote\nfixture\n");
    let start = &env.only_session().events_of("session_start")[0];
    assert_eq!(
        start["grants"]["network_allow"],
        serde_json::json!(values(&shown["network"]["allow"], "entry")),
        "{start}\n{shown}"
    );
    assert_eq!(
        values(&shown["network"]["allow"], "entry"),
        ["registry.example.invalid", "*.mirror.example.invalid:443"]
    );
    let note = format!("network {}", shown["network"]["note"].as_str().unwrap());
    assert!(
        start["layers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == note.as_str()),
        "{note}\n{start}"
    );
    for (key, path) in [("writable", "~/.cache/acme"), ("readable", "~/data")] {
        assert!(
            values(&shown[key], "path").contains(&path.to_string()),
            "{shown}"
        );
    }
}
