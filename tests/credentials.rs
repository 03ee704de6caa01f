//! The credential catalog end to end: in
//! `aq run` (strict, the default) the catalog's files read empty (a file
//! masked) or are gone (a directory masked), in the home and in the
//! workspace, by name and by content, while the file next to each reads its
//! content; the user's policy can pass one back and a repository's cannot;
//! and the engine asks before a recursive search prints `.env` lines and
//! blocks history reads of a masked path.
//!
//! The reads are shell builtins (`read <`), so no exec is judged and what
//! stops each is the mask. Every fixture is fake.

use std::path::Path;

use crate::util::Env;

/// A script that prints, for each path, `LABEL:[first line]`,
/// `LABEL:missing` when it does not exist, or `LABEL:refused` when it
/// cannot be opened (a private home's Landlock refusal, not a mask).
fn reader(env: &Env, files: &[(&str, &Path)]) {
    let mut script = String::new();
    for (label, path) in files {
        script.push_str(&format!(
            "if [ ! -e '{p}' ]; then echo '{label}:missing'; \
             elif ! (: < '{p}') 2>/dev/null; then echo '{label}:refused'; \
             else l=''; IFS= read -r l < '{p}'; echo \"{label}:[$l]\"; fi\n",
            p = path.display()
        ));
    }
    env.write(&env.work().join("read.sh"), &script);
}

/// Fake key material, assembled so this source holds no key-shaped string.
fn fake_pem(label: &str) -> String {
    format!(
        "-----BEGIN {label}-----\nFAKE-NOT-A-KEY-b3BlbnNzaC1rZXktdjEAAAAA\n-----END {label}-----\n"
    )
}

fn private_key() -> String {
    fake_pem(&["OPENSSH", "PRIVATE", "KEY"].join(" "))
}

#[test]
fn home_credentials_of_the_catalog_are_masked_and_their_neighbours_are_not() {
    let env = Env::new();
    let home = env.root().join("home");
    let masked = [
        (
            "m2-settings",
            ".m2/settings.xml",
            "<servers><server><id>x</id><password>FAKE-MAVEN-PASSWORD</password></server></servers>\n",
        ),
        (
            "m2-security",
            ".m2/settings-security.xml",
            "<settingsSecurity><master>FAKE</master></settingsSecurity>\n",
        ),
        (
            "gradle",
            ".gradle/gradle.properties",
            "ossrhPassword=FAKE-GRADLE-PASSWORD\n",
        ),
        ("hf-token", ".cache/huggingface/token", "hf_FAKE_TOKEN\n"),
        (
            "gem",
            ".gem/credentials",
            ":rubygems_api_key: FAKE-GEM-KEY\n",
        ),
        ("yarnrc", ".yarnrc.yml", "npmAuthToken: FAKE-YARN-TOKEN\n"),
        (
            "cargo",
            ".cargo/credentials.toml",
            "[registry]\ntoken = \"FAKE-CARGO\"\n",
        ),
        (
            "git-xdg",
            ".config/git/credentials",
            "https://u:FAKE@example.invalid\n",
        ),
    ];
    // Outside what a private home keeps readable: refused in strict, and
    // masked where the whole home is readable.
    let private = [(
        "docker",
        ".docker/config.json",
        "{\"auths\": {\"FAKE\": {}}}\n",
    )];
    // Their neighbours, which builds read: the same directories, no secret.
    let neighbours = [
        ("m2-repo", ".m2/repository/x/x.pom", "FAKE-POM\n"),
        ("gradle-init", ".gradle/init.gradle", "// FAKE-INIT\n"),
        ("hf-hub", ".cache/huggingface/hub/version.txt", "FAKE-HUB\n"),
        ("gem-specs", ".gem/specs/index", "FAKE-SPECS\n"),
        (
            "cargo-config",
            ".cargo/config.toml",
            "# FAKE-CARGO-CONFIG\n",
        ),
        (
            "npmrc-mirror",
            ".npmrc",
            "registry=https://npm.example.invalid/\n",
        ),
        ("gitconfig", ".gitconfig", "# FAKE-GITCONFIG\n"),
    ];
    // A directory masked whole: the browser profile is gone, not empty.
    let gone = [(
        "chrome",
        ".config/google-chrome/Default/Login Data",
        "FAKE-LOGIN-DATA\n",
    )];
    let mut files = Vec::new();
    for (label, rel, text) in masked
        .iter()
        .chain(&neighbours)
        .chain(&gone)
        .chain(&private)
    {
        env.write(&home.join(rel), text);
        files.push((*label, home.join(rel)));
    }
    let list: Vec<(&str, &Path)> = files.iter().map(|(l, p)| (*l, p.as_path())).collect();
    reader(&env, &list);
    let strict = env.aq(&["run", "-v", "--", "sh", "read.sh"]);
    let whole_home = env.aq(&[
        "run",
        "--quiet",
        "--home",
        "read-only",
        "--",
        "sh",
        "read.sh",
    ]);
    for out in [&strict, &whole_home] {
        out.code(0);
        for (label, _, _) in masked.iter().filter(|(l, _, _)| *l != "yarnrc") {
            out.stdout_has(&format!("{label}:[]"));
        }
        for (label, _, text) in &neighbours {
            out.stdout_has(&format!("{label}:[{}]", text.trim_end()));
        }
        out.stdout_has("chrome:missing").stdout_lacks("FAKE-LOGIN");
    }
    strict.stdout_has("docker:refused");
    whole_home.stdout_has("docker:[]");
    // A masked file a private home keeps readable by its own name (not by
    // a directory above it) is refused rather than empty: Landlock's rule
    // is on the file beneath the mask. Its neighbour ~/.npmrc, readable
    // the same way and without a token, is the control.
    strict
        .stdout_has("yarnrc:refused")
        .stdout_lacks("FAKE-YARN");
    whole_home.stdout_has("yarnrc:[]");
    let out = strict;
    // The banner names the settings files masked for what they hold.
    out.stderr_has("masked because they hold a credential: ~/.gradle/gradle.properties, ~/.m2/settings.xml, ~/.yarnrc.yml")
        .stderr_has("`[paths] unmasked = [\"~/.gradle/gradle.properties\"]`");
    // The control: the same files hold their content outside aq.
    for (_, rel, text) in masked.iter().chain(&gone).chain(&private) {
        assert_eq!(std::fs::read_to_string(home.join(rel)).unwrap(), *text);
    }
}

/// The catalog's less common places (macOS keychains and
/// browser profiles, gopass, Vivaldi, Helm's repositories, `~/.envrc`) are
/// masked like the rest, for the reason the banner gives, and the files
/// beside them are not. The control: each fake file holds its content
/// outside aq.
#[test]
fn catalog_places_are_masked_and_their_neighbours_are_not() {
    let env = Env::new();
    let home = env.root().join("home");
    // Directories masked whole: the file is gone.
    let gone = [
        (
            "keychain",
            "Library/Keychains/login.keychain-db",
            "FAKE-KEYCHAIN\n",
        ),
        (
            "chrome-mac",
            "Library/Application Support/Google/Chrome/Default/Cookies",
            "FAKE-COOKIES\n",
        ),
        (
            "gopass",
            ".local/share/gopass/stores/root/x.gpg",
            "FAKE-GOPASS\n",
        ),
        (
            "vivaldi",
            ".config/vivaldi/Default/Login Data",
            "FAKE-VIVALDI\n",
        ),
    ];
    // Files masked: they read empty.
    let empty = [
        ("envrc", ".envrc", "export TOKEN=FAKE-ENVRC\n"),
        (
            "helm",
            ".config/helm/repositories.yaml",
            "password: FAKE-HELM-PASSWORD\n",
        ),
    ];
    let neighbours = [
        (
            "prefs",
            "Library/Preferences/com.example.plist",
            "FAKE-PREFS\n",
        ),
        (
            "app-support",
            "Library/Application Support/Example/x.txt",
            "FAKE-APP\n",
        ),
        ("helm-other", ".config/helm/README", "FAKE-HELM-README\n"),
        ("share", ".local/share/example/x.txt", "FAKE-SHARE\n"),
    ];
    let mut files = Vec::new();
    for (label, rel, text) in gone.iter().chain(&empty).chain(&neighbours) {
        env.write(&home.join(rel), text);
        files.push((*label, home.join(rel)));
    }
    let list: Vec<(&str, &Path)> = files.iter().map(|(l, p)| (*l, p.as_path())).collect();
    reader(&env, &list);
    let out = env.aq(&["run", "-v", "--home", "read-only", "--", "sh", "read.sh"]);
    out.code(0);
    for (label, _, _) in &gone {
        out.stdout_has(&format!("{label}:missing"));
    }
    for (label, _, _) in &empty {
        out.stdout_has(&format!("{label}:[]"));
    }
    for (label, _, text) in &neighbours {
        out.stdout_has(&format!("{label}:[{}]", text.trim_end()));
    }
    out.stdout_lacks("FAKE-KEYCHAIN")
        .stdout_lacks("FAKE-COOKIES")
        .stdout_lacks("FAKE-ENVRC")
        .stdout_lacks("FAKE-HELM-PASSWORD");
    // Helm's repositories are masked for the password they hold.
    out.stderr_has("masked because they hold a credential: ~/.config/helm/repositories.yaml");
    for (_, rel, text) in gone.iter().chain(&empty) {
        assert_eq!(std::fs::read_to_string(home.join(rel)).unwrap(), *text);
    }
}

#[test]
fn workspace_credentials_are_masked_by_name_and_by_content() {
    let env = Env::new();
    let ws = env.work();
    let sa = format!(
        "{{\n  \"type\": \"service_account\",\n  \"private_key\": \"{}\"\n}}\n",
        private_key().replace('\n', "\\n")
    );
    let masked = [
        ("id-rsa", "id_rsa", "FAKE-ID-RSA\n".to_string()),
        (
            "npmrc",
            ".npmrc",
            "//registry.npmjs.org/:_authToken=FAKE-NPM\n".to_string(),
        ),
        (
            "credentials-json",
            "credentials.json",
            "{\"installed\": \"FAKE\"}\n".to_string(),
        ),
        ("envrc", ".envrc", "export TOKEN=FAKE-ENVRC\n".to_string()),
        (
            "tfstate",
            "infra/terraform.tfstate",
            "{\"FAKE\": 1}\n".to_string(),
        ),
        (
            "tfvars",
            "infra/prod.tfvars",
            "db_password = \"FAKE\"\n".to_string(),
        ),
        // By content: a key without a key's name, a cloud key, a .pem key.
        ("deploy-key", "deploy/ci_deploy", private_key()),
        ("service-account", "gcp/my-proj-0123456789ab.json", sa),
        ("pem-key", "certs/server.pem", private_key()),
    ];
    let readable = [
        ("pem-cert", "certs/ca.pem", fake_pem("CERTIFICATE")),
        ("fixture-key", "tests/fixtures/id_ed25519", private_key()),
        (
            "script",
            "scripts/run",
            "#!/bin/sh FAKE-SCRIPT\n".to_string(),
        ),
        (
            "dev-tfvars",
            "infra/dev.tfvars",
            "region = \"FAKE-REGION\"\n".to_string(),
        ),
        ("env-example", ".env.example", "API_KEY=\n".to_string()),
        ("pub", "id_rsa.pub", "ssh-ed25519 FAKE-PUB\n".to_string()),
    ];
    let mut files = Vec::new();
    for (label, rel, text) in masked.iter().chain(&readable) {
        env.write(&ws.join(rel), text);
        files.push((*label, ws.join(rel)));
    }
    let list: Vec<(&str, &Path)> = files.iter().map(|(l, p)| (*l, p.as_path())).collect();
    reader(&env, &list);
    let out = env.aq(&["run", "-v", "--", "sh", "read.sh"]);
    out.code(0);
    for (label, _, _) in &masked {
        out.stdout_has(&format!("{label}:[]"));
    }
    for (label, _, text) in &readable {
        out.stdout_has(&format!("{label}:[{}]", text.lines().next().unwrap()));
    }
    out.stdout_lacks("FAKE-NPM").stdout_lacks("FAKE-ENVRC");
    out.stderr_has("masked for what they hold: ")
        .stderr_has("deploy/ci_deploy (a private key)")
        .stderr_has("(a cloud service-account key)");
    // The control: outside aq each file holds what was written.
    for (_, rel, text) in &masked {
        assert_eq!(&std::fs::read_to_string(ws.join(rel)).unwrap(), text);
    }
}

#[test]
fn the_users_policy_passes_a_credential_back_and_a_repositorys_cannot() {
    let env = Env::new();
    let home = env.root().join("home");
    let m2 = home.join(".m2/settings.xml");
    let gradle = home.join(".gradle/gradle.properties");
    env.write(&m2, "<password>FAKE-M2</password>\n");
    env.write(&gradle, "signing.password=FAKE-GRADLE\n");
    env.write(
        &env.user_policy(),
        "version = 1\n\n[paths]\nunmasked = [\"~/.m2/settings.xml\"]\n",
    );
    env.write(
        &env.project_policy(),
        "version = 1\n\n[paths]\nunmasked = [\"~/.gradle/gradle.properties\"]\n",
    );
    reader(&env, &[("m2", &m2), ("gradle", &gradle)]);
    let check = |env: &Env| {
        env.aq(&["run", "--", "sh", "read.sh"])
            .code(0)
            .stdout_has("m2:[<password>FAKE-M2</password>]")
            .stdout_has("gradle:[]")
            .stderr_has("ignored [paths] unmasked `~/.gradle/gradle.properties`: a repository's policy file cannot pass a credential back, trusted or not");
    };
    check(&env);
    // Trusting the repository's file does not let it either.
    env.aq(&["policy", "trust"]).code(0);
    check(&env);
    // And the engine: the user's unmasked path is no secret read, the
    // repository's still is.
    env.aq(&["explain", "--", "cat", "~/.m2/settings.xml"])
        .stdout_has("decision: ALLOW");
    env.aq(&["explain", "--", "cat", "~/.gradle/gradle.properties"])
        .stdout_has("decision: BLOCK")
        .stdout_has("secret-read");
}

/// The SSH agent's socket: a process in the sandbox could otherwise sign
/// with the user's keys without reading them. Masked by `$SSH_AUTH_SOCK`;
/// the control is another socket beside it, which connects.
#[test]
fn the_ssh_agent_socket_is_masked() {
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_err()
    {
        aq_testkit::skip("no python3");
        return;
    }
    let env = Env::new();
    let dir = env.root().join("agent");
    std::fs::create_dir_all(&dir).unwrap();
    let (agent, control) = (dir.join("agent.sock"), dir.join("control.sock"));
    let listeners = [
        std::os::unix::net::UnixListener::bind(&agent).unwrap(),
        std::os::unix::net::UnixListener::bind(&control).unwrap(),
    ];
    env.write(
        &env.work().join("connect.py"),
        &format!(
            "import socket\nfor label, path in [('agent', '{}'), ('control', '{}')]:\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(path)\n        print(label + ':connected')\n    except OSError as e:\n        print(label + ':refused:' + (e.strerror or ''))\n",
            agent.display(),
            control.display()
        ),
    );
    let sock = agent.display().to_string();
    let out = env.aq_with(
        &[("SSH_AUTH_SOCK", &sock)],
        &["run", "--quiet", "--", "python3", "connect.py"],
    );
    // The mask is a read-only empty file: connecting needs write access to
    // the socket's inode, and gets EROFS, which only the mask gives; the
    // host socket beside it is refused by the socket guard instead (EACCES).
    out.code(0)
        .stdout_has("agent:refused:Read-only file system")
        .stdout_has("control:refused:Permission denied");
    // Passed on by the user's own policy (git over SSH), it connects; the
    // other host socket stays out of reach.
    env.write(
        &env.user_policy(),
        "version = 1\n\n[session]\nenv_pass = [\"SSH_AUTH_SOCK\"]\n",
    );
    env.aq_with(
        &[("SSH_AUTH_SOCK", &sock)],
        &["run", "--quiet", "--", "python3", "connect.py"],
    )
    .code(0)
    .stdout_has("agent:connected")
    .stdout_has("control:refused:Permission denied");
    drop(listeners);
}

/// GNOME's agent socket sits in `$XDG_RUNTIME_DIR/keyring/`, a directory
/// masked whole: the session starts, and the socket is gone inside.
#[test]
fn an_agent_socket_inside_a_masked_runtime_directory_is_gone() {
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_err()
    {
        aq_testkit::skip("no python3");
        return;
    }
    let env = Env::new();
    let run = env.root().join("run");
    std::fs::create_dir_all(run.join("keyring")).unwrap();
    let agent = run.join("keyring/ssh");
    let _listener = std::os::unix::net::UnixListener::bind(&agent).unwrap();
    env.write(
        &env.work().join("connect.py"),
        &format!(
            "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('{}')\n    print('agent:connected')\nexcept OSError as e:\n    print('agent:refused:' + (e.strerror or ''))\n",
            agent.display()
        ),
    );
    let (sock, run_dir) = (agent.display().to_string(), run.display().to_string());
    env.aq_with(
        &[("SSH_AUTH_SOCK", &sock), ("XDG_RUNTIME_DIR", &run_dir)],
        &["run", "--quiet", "--", "python3", "connect.py"],
    )
    .code(0)
    .stdout_has("agent:refused:No such file or directory");
    // The control: outside aq it connects.
    assert!(std::os::unix::net::UnixStream::connect(&agent).is_ok());
}

#[test]
fn a_recursive_search_that_would_print_env_lines_asks_and_a_daily_one_runs() {
    let env = Env::with_policy("wait_for_approver = false", "");
    env.write(&env.work().join("src/app.py"), "# TODO: FAKE\n");
    env.write(&env.work().join(".env"), "SECRET=FAKE-ENV-SECRET\n");
    let out = env.aq(&["run", "--", "grep", "-rn", "SECRET", "."]);
    out.stderr_has("secret-search-tree")
        .stdout_lacks("FAKE-ENV-SECRET");
    assert_ne!(out.code, Some(0), "{}", out.dump());
    let decisions = env.only_session().events_of("command_decision");
    assert!(
        decisions
            .iter()
            .any(|d| d["decision"] == "ask" && d["rules"][0] == "secret-search-tree"),
        "{decisions:?}"
    );
    // The control: a daily search of the same tree runs.
    env.aq(&["run", "--quiet", "--", "grep", "-rn", "TODO", "."])
        .code(0)
        .stdout_has("src/app.py:1:# TODO: FAKE");
}

#[test]
fn history_of_a_masked_path_is_a_secret_read_and_its_commit_list_is_not() {
    let env = Env::with_policy("", "");
    let ws = env.work();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(&ws)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    std::fs::remove_dir_all(ws.join(".git")).unwrap();
    git(&["init", "-q"]);
    env.write(&ws.join(".env"), "SECRET=FAKE-COMMITTED\n");
    git(&["add", "-f", ".env"]);
    git(&["commit", "-qm", "oops"]);
    env.aq(&["run", "--", "git", "log", "-p", ".env"])
        .code(126)
        .stderr_has("rule:  secret-read (block")
        .stdout_lacks("FAKE-COMMITTED");
    env.aq(&["run", "--", "git", "show", "HEAD:.env"])
        .code(126)
        .stdout_lacks("FAKE-COMMITTED");
    // The control: which commits touched it, without their content.
    env.aq(&[
        "run",
        "--quiet",
        "--",
        "git",
        "log",
        "--oneline",
        "--",
        ".env",
    ])
    .code(0)
    .stdout_has("oops");
}

/// The same masks for an unprivileged user (CI runs as root).
#[test]
fn an_unprivileged_user_gets_the_same_masks() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        // Already unprivileged: the other tests in this file are the proof.
        return;
    }
    let (root, aq, uid, gid) = crate::util::user_scratch(
        "aq-unpriv-creds-",
        &[
            "home/.gem",
            "home/.m2/repository",
            "work/.git",
            "work/deploy",
            "state",
            "config",
        ],
    );
    let r = root.path();
    let files = [
        (
            "home/.gem/credentials",
            ":rubygems_api_key: FAKE-GEM\n".to_string(),
        ),
        (
            "home/.m2/settings.xml",
            "<password>FAKE-M2</password>\n".to_string(),
        ),
        ("home/.m2/repository/x.pom", "FAKE-POM\n".to_string()),
        ("work/deploy/ci_deploy", private_key()),
        ("work/deploy/notes", "FAKE-NOTES\n".to_string()),
    ];
    for (rel, text) in &files {
        std::fs::write(r.join(rel), text).unwrap();
        std::os::unix::fs::chown(r.join(rel), Some(uid), Some(gid)).unwrap();
    }
    std::fs::write(
        r.join("work/s.sh"),
        "for f in \"$HOME/.gem/credentials\" \"$HOME/.m2/settings.xml\" \"$HOME/.m2/repository/x.pom\" deploy/ci_deploy deploy/notes; do\n\
         l=''; IFS= read -r l < \"$f\"; echo \"$(basename \"$f\"):[$l]\"; done\n",
    )
    .unwrap();
    std::os::unix::fs::chown(r.join("work/s.sh"), Some(uid), Some(gid)).unwrap();
    let out = crate::util::aq_as_user(
        r,
        &aq,
        (uid, gid),
        "work",
        &["run", "--quiet", "--", "sh", "s.sh"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dump = format!(
        "uid {uid}\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{dump}");
    for want in [
        "credentials:[]",
        "settings.xml:[]",
        "ci_deploy:[]",
        "x.pom:[FAKE-POM]",
        "notes:[FAKE-NOTES]",
    ] {
        assert!(stdout.contains(want), "{want}\n{dump}");
    }
}
