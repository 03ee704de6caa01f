use super::*;

/// Fake key material, assembled so this source holds no key-shaped string.
fn fake_key() -> String {
    let label = ["OPENSSH", "PRIVATE", "KEY"].join(" ");
    format!(
        "-----BEGIN {label}-----\nFAKE-KEY-NOT-REAL-b3BlbnNzaC1rZXktdjEAAAAA\n-----END {label}-----\n"
    )
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn rel_paths(root: &Path, masks: &Masks) -> Vec<String> {
    masks
        .paths
        .iter()
        .filter_map(|p| p.strip_prefix(root).ok())
        .map(|p| p.display().to_string())
        .collect()
}

fn strict() -> Profile {
    Profile::builtin("strict").unwrap()
}

fn plan_in(
    ws: &Path,
    home: Option<&Path>,
    env: &[(OsString, OsString)],
    unmasked: &[String],
) -> Masks {
    plan(
        &strict(),
        &MaskInputs {
            workspace: ws,
            home,
            env,
            sensitive: &["config/*.yaml".to_string()],
            unmasked,
            passed: &[],
        },
    )
}

#[test]
fn workspace_secrets_are_found_by_name_and_by_content() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    let sa = format!(
        "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"fake\",\n  \"private_key\": \"{}\"\n}}\n",
        fake_key().replace('\n', "\\n")
    );
    let cert = format!(
        "-----BEGIN {}-----\nFAKE\n-----END CERTIFICATE-----\n",
        "CERTIFICATE"
    );
    for (rel, text) in [
        (".env", "API_KEY=fake\n"),
        (".env.local", "API_KEY=fake\n"),
        (".env.example", "API_KEY=\n"),
        (".envrc", "export TOKEN=fake\n"),
        ("app/config/server.pem", fake_key().as_str()),
        ("app/certs/ca.pem", cert.as_str()),
        ("app/tls.key", "x"),
        ("id_rsa", "x"),
        ("id_rsa.pub", "ssh-ed25519 AAAA fake\n"),
        ("deploy/ci_deploy", fake_key().as_str()),
        ("scripts/run", "#!/bin/sh\necho hi\n"),
        ("gcp/my-proj-0123456789ab.json", sa.as_str()),
        ("credentials.json", "{}"),
        ("infra/terraform.tfstate", "{}"),
        ("infra/prod.tfvars", "db_password = \"fake\"\n"),
        ("infra/dev.tfvars", "region = \"eu-west-1\"\n"),
        (".npmrc", "//registry.npmjs.org/:_authToken=fake-token\n"),
        ("frontend/.npmrc", "engine-strict=true\n"),
        ("tests/fixtures/server.key", "x"),
        ("testdata/id_ed25519", fake_key().as_str()),
        ("node_modules/x/test.pem", fake_key().as_str()),
        ("config/app.yaml", "x"),
        ("README.md", "x"),
    ] {
        write(w, rel, text);
    }
    let m = plan_in(w, None, &[], &[]);
    assert_eq!(
        rel_paths(w, &m),
        vec![
            ".env",
            ".env.local",
            ".envrc",
            ".npmrc",
            "app/config/server.pem",
            "app/tls.key",
            "config/app.yaml",
            "credentials.json",
            "deploy/ci_deploy",
            "gcp/my-proj-0123456789ab.json",
            "id_rsa",
            "infra/prod.tfvars",
            "infra/terraform.tfstate",
        ]
    );
    let note = m
        .notes
        .iter()
        .find(|n| n.starts_with("masked for what they hold"))
        .unwrap();
    assert!(note.contains("deploy/ci_deploy (a private key)"), "{note}");
    assert!(note.contains("(a cloud service-account key)"), "{note}");
}

#[test]
fn home_settings_are_masked_only_when_they_hold_a_credential() {
    let t = tempfile::tempdir().unwrap();
    let (home, ws) = (t.path().join("home"), t.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    write(
        &home,
        ".npmrc",
        "//registry.npmjs.org/:_authToken=fake-npm-token\n",
    );
    write(
        &home,
        ".m2/settings.xml",
        "<settings><mirrors><mirror><url>https://repo.example.invalid/</url></mirror></mirrors></settings>\n",
    );
    write(&home, ".gradle/gradle.properties", "ossrhPassword=fake\n");
    write(
        &home,
        ".yarnrc.yml",
        "npmRegistryServer: https://npm.example.invalid\n",
    );
    write(&home, ".ssh/id_ed25519", "FAKE\n");
    let m = plan_in(&ws, Some(&home), &[], &[]);
    let got = rel_paths(&home, &m);
    for want in [
        ".npmrc",
        ".gradle/gradle.properties",
        ".ssh",
        ".aws",
        ".cache/huggingface/token",
    ] {
        assert!(got.iter().any(|g| g == want), "{want} in {got:?}");
    }
    for kept in [".m2/settings.xml", ".yarnrc.yml"] {
        assert!(!got.iter().any(|g| g == kept), "{kept} in {got:?}");
    }
    let note = m
        .notes
        .iter()
        .find(|n| n.starts_with("masked because they hold"))
        .unwrap();
    assert!(
        note.contains("~/.gradle/gradle.properties") && note.contains("~/.npmrc"),
        "{note}"
    );
    assert!(note.contains("[paths] unmasked"), "{note}");
}

#[test]
fn unmasked_entries_pass_credentials_back() {
    let t = tempfile::tempdir().unwrap();
    let (home, ws) = (t.path().join("home"), t.path().join("ws"));
    write(&home, ".npmrc", "_auth=ZmFrZQ==\n");
    write(&ws, "infra/terraform.tfstate", "{}");
    write(&ws, "certs/dev.key", "x");
    write(&ws, "certs/prod.key", "x");
    write(&ws, ".env", "X=1\n");
    let unmasked = [
        "~/.npmrc".to_string(),
        "*.tfstate".to_string(),
        "certs/dev.key".to_string(),
        "~/.ssh".to_string(),
    ];
    let m = plan_in(&ws, Some(&home), &[], &unmasked);
    assert!(!m.paths.contains(&home.join(".npmrc")));
    assert!(!m.paths.iter().any(|p| p.starts_with(home.join(".ssh"))));
    assert_eq!(rel_paths(&ws, &m), vec![".env", "certs/prod.key"]);
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains("left unmasked by `[paths] unmasked`"))
    );
    assert!(
        !m.notes.iter().any(|n| n.starts_with("masked because")),
        "{:?}",
        m.notes
    );
}

#[test]
fn agent_sockets_named_by_variables_are_masked() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let run = t.path().join("run");
    let env: Vec<(OsString, OsString)> = vec![
        ("SSH_AUTH_SOCK".into(), t.path().join("agent/sock").into()),
        ("XDG_RUNTIME_DIR".into(), run.clone().into()),
    ];
    let m = plan_in(&ws, None, &env, &[]);
    for want in [
        t.path().join("agent/sock"),
        run.join("keyring"),
        run.join("gnupg"),
        run.join("gcr"),
    ] {
        assert!(m.paths.contains(&want), "{}", want.display());
    }
    // Inside a directory masked whole (GNOME's `keyring/ssh`), the socket is
    // left to that mask: a mask cannot be mounted in an empty directory.
    std::fs::create_dir_all(run.join("keyring")).unwrap();
    let inside: Vec<(OsString, OsString)> = vec![
        ("SSH_AUTH_SOCK".into(), run.join("keyring/ssh").into()),
        ("XDG_RUNTIME_DIR".into(), run.clone().into()),
    ];
    let m = plan_in(&ws, None, &inside, &[]);
    assert!(m.paths.contains(&run.join("keyring")));
    assert!(!m.paths.contains(&run.join("keyring/ssh")));
    // A socket the user passes on (`env_pass`) is the user's choice.
    let m = plan(
        &strict(),
        &MaskInputs {
            workspace: &ws,
            home: None,
            env: &env,
            sensitive: &[],
            unmasked: &[],
            passed: &["SSH_AUTH_SOCK".to_string()],
        },
    );
    assert!(!m.paths.contains(&t.path().join("agent/sock")));
    assert!(m.paths.contains(&run.join("keyring")));
    // A variable naming the root or the home masks nothing that holds them.
    let home = t.path().join("home");
    let odd: Vec<(OsString, OsString)> = vec![("SSH_AUTH_SOCK".into(), "/".into())];
    let m = plan_in(&ws, Some(&home), &odd, &[]);
    assert!(!m.paths.contains(Path::new("/")));
    assert!(
        m.notes.iter().any(|n| n.contains("mask / left out")),
        "{:?}",
        m.notes
    );
    // A relative or missing variable names nothing.
    let env: Vec<(OsString, OsString)> = vec![("SSH_AUTH_SOCK".into(), "agent.sock".into())];
    let m = plan_in(&ws, None, &env, &[]);
    assert!(!m.paths.iter().any(|p| p.ends_with("agent.sock")));
}

/// A workspace of `n` files shaped like a repository: sources, JSON, docs,
/// in directories of 20; one file in `plain_every` has no extension (a
/// script, or every fourth a LICENSE or Makefile).
fn make_workspace(root: &Path, n: usize, plain_every: usize) {
    let exts = [
        "rs", "ts", "js", "py", "rs", "ts", "go", "java", "json", "json", "json", "md", "md",
        "txt", "yml", "toml", "css", "html", "svg", "lock", "sh",
    ];
    for i in 0..n {
        let d = i / 20;
        let dir = root.join(format!("d{}/e{}/f{d}", d % 7, d % 50));
        if i % 20 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let ext = exts[i % exts.len()];
        let name = if i % plain_every == 0 {
            match i / plain_every % 4 {
                0 => "LICENSE".to_string(),
                1 => "Makefile".to_string(),
                _ => format!("run-{i}"),
            }
        } else if i % 997 == 1 {
            format!("auth-config{i}.json")
        } else {
            format!("file{i}.{ext}")
        };
        std::fs::write(dir.join(name), vec![b'x'; 100 + (i * 7919) % 6000]).unwrap();
    }
}

/// The workspace search before the catalog (commit 048de00): the profile's
/// six name globs matched with the glob crate, a path built per entry.
fn name_search_before(workspace: &Path) -> usize {
    let globs = [".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx"];
    let patterns: Vec<glob::Pattern> = globs
        .iter()
        .map(|g| glob::Pattern::new(g).unwrap())
        .collect();
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let mut found = 0;
    let mut stack = vec![workspace.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name();
            let kind = entry.file_type().unwrap();
            let path = entry.path();
            let name_str = name.to_string_lossy();
            let _rel = path.strip_prefix(workspace).unwrap_or(&path);
            if patterns.iter().any(|p| p.matches_with(&name_str, options)) {
                found += 1;
                continue;
            }
            if kind.is_dir() && !SKIP_DIRS.contains(&name_str.as_ref()) {
                stack.push(path);
            }
        }
    }
    found
}

fn cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1000.0 + t.tv_nsec as f64 / 1e6
}

/// Median and minimum CPU time of 15 runs (after one to warm the caches).
fn cpu_time(f: &mut dyn FnMut()) -> (f64, f64) {
    f();
    let mut v: Vec<f64> = (0..15)
        .map(|_| {
            let s = cpu_ms();
            f();
            cpu_ms() - s
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[7], v[0])
}

/// The cost of the workspace search on 20,000 files, which every session
/// start pays, in CPU time of the calling thread:
/// `cargo test --release -p aq-session walk_cost -- --ignored --nocapture`.
/// A bare `read_dir` walk is the floor; the name search as it was before
/// is the baseline.
#[test]
#[ignore]
fn walk_cost_on_20000_files() {
    for (label, plain_every) in [("1% extensionless", 100), ("5% extensionless", 20)] {
        let t = tempfile::tempdir().unwrap();
        make_workspace(t.path(), 20_000, plain_every);
        let bare = cpu_time(&mut || {
            let mut stack = vec![t.path().to_path_buf()];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap().flatten() {
                    if e.file_type().unwrap().is_dir() {
                        stack.push(e.path());
                    }
                }
            }
        });
        let before = cpu_time(&mut || assert_eq!(name_search_before(t.path()), 0));
        let by_name = cpu_time(&mut || {
            assert!(find_in_workspace(t.path(), &[], 0).files.is_empty());
        });
        let mut reads = 0;
        let now = cpu_time(&mut || {
            let found = find_in_workspace(t.path(), &[], MAX_READS);
            assert!(found.files.is_empty());
            reads = found.reads;
        });
        println!(
            "20000 files, {label}: bare walk {:.1} ms (min {:.1}); search before {:.1} ms (min {:.1}); now by name only {:.1} ms (min {:.1}); now with content {:.1} ms (min {:.1}), {reads} files read",
            bare.0, bare.1, before.0, before.1, by_name.0, by_name.1, now.0, now.1
        );
    }
}

/// The secret search from the last search's record, on a tree old enough
/// to be trusted (50 ms in these tests; 2 s for sessions).
mod from_a_record {
    use super::*;
    use crate::masks::search::search;

    const TEST_RACY: i128 = 50_000_000;

    fn found(root: &Path, f: &Found) -> Vec<String> {
        let mut v: Vec<String> = f
            .files
            .iter()
            .map(|(p, _)| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        v.sort();
        v
    }

    fn old_tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        for i in 0..12 {
            write(w, &format!("src/m{i}/lib.rs"), "fn f() {}\n");
            write(w, &format!("src/m{i}/notes"), "plain text\n");
        }
        write(w, "deploy/.env", "API_KEY=fake\n");
        write(w, "deploy/ci_deploy", &fake_key());
        std::thread::sleep(std::time::Duration::from_nanos(2 * TEST_RACY as u64));
        t
    }

    #[test]
    fn an_unchanged_tree_is_searched_again_without_listing_it() {
        let t = old_tree();
        let w = t.path();
        let (first, record) = search(w, &[], MAX_READS, None, TEST_RACY);
        assert_eq!(found(w, &first), ["deploy/.env", "deploy/ci_deploy"]);
        assert!(record.listed() > 12, "{}", record.listed());
        let (again, record2) = search(w, &[], MAX_READS, Some(&record), TEST_RACY);
        assert_eq!(record2.listed(), 0);
        assert_eq!(found(w, &again), found(w, &first));
        // Files are still read for what they hold.
        assert_eq!(again.reads, first.reads);
        assert!(again.reads >= 12, "{}", again.reads);
    }

    #[test]
    fn a_secret_added_or_a_key_written_into_an_old_file_is_found() {
        let t = old_tree();
        let w = t.path();
        let (_, record) = search(w, &[], MAX_READS, None, TEST_RACY);
        // A new file in an old directory: the directory is listed again.
        write(w, "src/m4/.env.production", "API_KEY=fake\n");
        // A key written into a file that was there: its directory did not
        // change, but the file is read again.
        write(w, "src/m7/notes", &fake_key());
        let (again, record2) = search(w, &[], MAX_READS, Some(&record), TEST_RACY);
        let got = found(w, &again);
        assert!(
            got.contains(&"src/m4/.env.production".to_string()),
            "{got:?}"
        );
        assert!(got.contains(&"src/m7/notes".to_string()), "{got:?}");
        assert_eq!(record2.listed(), 1, "only src/m4 changed");
        assert_eq!(got, found(w, &search(w, &[], MAX_READS, None, TEST_RACY).0));
    }

    #[test]
    fn other_globs_do_not_take_the_record() {
        let t = old_tree();
        let w = t.path();
        let (_, record) = search(w, &[], MAX_READS, None, TEST_RACY);
        let globs = ["*.rs".to_string()];
        let (again, record2) = search(w, &globs, MAX_READS, Some(&record), TEST_RACY);
        assert_eq!(record2.listed(), record.listed());
        assert!(found(w, &again).contains(&"src/m3/lib.rs".to_string()));
    }
}

#[test]
fn globs_expand_under_directories_that_exist_and_to_nothing_elsewhere() {
    let t = tempfile::tempdir().unwrap();
    let (home, ws) = (t.path().join("home"), t.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    write(&home, ".ssh/id_ed25519", "FAKE\n");
    write(&home, ".ssh/known_hosts", "\n");
    write(&home, ".config/Code/User/globalStorage/state.vscdb", "x");
    let inputs = MaskInputs {
        workspace: &ws,
        home: Some(&home),
        env: &[],
        sensitive: &[],
        unmasked: &[],
        passed: &[],
    };
    assert_eq!(
        expand("~/.ssh/id_*", &inputs),
        vec![home.join(".ssh/id_ed25519")]
    );
    assert_eq!(
        expand("~/.config/*/User/globalStorage/state.vscdb*", &inputs),
        vec![home.join(".config/Code/User/globalStorage/state.vscdb")]
    );
    // Under a directory that does not exist: nothing, at any depth.
    for absent in ["~/.nope/id_*", "~/.nope/*/x", "~/.ssh/nope/*"] {
        assert!(expand(absent, &inputs).is_empty(), "{absent}");
    }
}
