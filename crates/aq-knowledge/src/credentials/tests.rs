use super::*;

fn row(path: &str) -> &'static Credential {
    CREDENTIALS
        .iter()
        .find(|c| c.path == path)
        .unwrap_or_else(|| panic!("no row {path}"))
}

/// The directory rows masked whole.
fn masked_dirs() -> impl Iterator<Item = &'static Credential> {
    CREDENTIALS
        .iter()
        .filter(|c| matches!(c.mask, Mask::Dir(_)))
}

fn lies_in(inner: &str, dir: &Credential) -> bool {
    inner != dir.path && inner.starts_with(dir.path)
}

#[test]
fn inside_rows_lie_in_a_masked_directory_and_nothing_else_does() {
    for c in CREDENTIALS {
        let dirs: Vec<&str> = masked_dirs()
            .filter(|d| lies_in(c.path, d))
            .map(|d| d.path)
            .collect();
        match c.mask {
            Mask::Inside => assert!(!dirs.is_empty(), "{}: Inside, but in no Dir row", c.path),
            // A mask mounted inside an empty directory has nothing to go on.
            _ => assert!(dirs.is_empty(), "{} lies inside {dirs:?}", c.path),
        }
    }
}

#[test]
fn rows_have_a_shape_their_place_allows() {
    for c in CREDENTIALS {
        assert!(!c.what.is_empty() && !c.what.ends_with('.'), "{}", c.path);
        if matches!(c.mask, Mask::Dir(_) | Mask::Near) {
            assert!(
                c.what.starts_with("the "),
                "{}: a directory's what starts with `the `",
                c.path
            );
        }
        match c.place() {
            Place::Workspace => {
                assert!(!c.path.contains('/'), "{}", c.path);
                // aq-policy compares written names, lowercased, with them.
                assert_eq!(c.path, c.path.to_ascii_lowercase(), "{}", c.path);
                assert!(
                    !matches!(
                        c.mask,
                        Mask::Inside | Mask::Near | Mask::Unmasked | Mask::Dir(_)
                    ),
                    "{}",
                    c.path
                );
            }
            Place::Var => {
                let var = c.var().unwrap();
                assert!(
                    !var.is_empty() && var.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'),
                    "{}",
                    c.path
                );
            }
            Place::Home | Place::System => {
                assert!(c.parts().count() >= 1, "{}", c.path);
                assert!(
                    !c.path.contains("//") && !c.path.contains("/./"),
                    "{}",
                    c.path
                );
            }
        }
        if c.mask == Mask::IfKey {
            assert_eq!(
                c.place(),
                Place::Workspace,
                "{}: keys are sniffed in the workspace",
                c.path
            );
        }
        if c.mask == Mask::Inside {
            assert_eq!(c.place(), Place::Home, "{}", c.path);
        }
        // Globs are `*` and `?` within a component: the sandbox expands
        // them with the glob crate and the rules with their own matcher.
        assert!(!c.path.contains(['[', ']', '{', '}']), "{}", c.path);
    }
}

/// The rules rely on it to rule out most paths at once (`aq-policy`'s
/// `paths::may_be_in_home_rows`): a dot name, or macOS's `Library`.
#[test]
fn every_home_row_starts_with_a_dot_name() {
    for c in in_place(Place::Home) {
        assert!(
            c.parts()
                .next()
                .is_some_and(|p| p.starts_with('.') || p == "Library"),
            "{}",
            c.path
        );
    }
}

#[test]
fn every_kind_has_rows() {
    for k in Kind::ALL {
        assert!(CREDENTIALS.iter().any(|c| c.kind == *k), "{k:?}");
        assert!(!k.title().is_empty());
    }
}

/// Credentials that sit next to what builds read: each of these was once
/// readable in `strict`, and each is a row of the catalog now.
#[test]
fn the_red_team_findings_are_rows() {
    for p in [
        "~/.m2/settings.xml",
        "~/.gradle/gradle.properties",
        "~/.cache/huggingface/token",
        "~/.gem/credentials",
        "~/.yarnrc.yml",
    ] {
        assert!(row(p).masked(), "{p}");
    }
    for name in [
        "id_rsa",
        ".npmrc",
        "credentials.json",
        ".envrc",
        "terraform.tfstate",
    ] {
        let c = workspace_row(name).unwrap_or_else(|| panic!("{name}"));
        assert!(c.masked(), "{name}");
    }
}

#[test]
fn the_brief_list_is_covered() {
    for p in [
        "~/.ssh/",
        "~/.aws/",
        "~/.config/gcloud/",
        "~/.azure/",
        "~/.kube/",
        "~/.docker/config.json",
        "~/.config/doctl/",
        "~/.oci/",
        "~/.config/linode-cli",
        "~/.config/hcloud/",
        "~/.fly/config.yml",
        "~/.local/share/com.vercel.cli/",
        "~/.netlify/config.json",
        "~/.netrc",
        "~/.config/gh/",
        "~/.config/glab-cli/",
        "~/.config/hub",
        "~/.git-credentials",
        "~/.npmrc",
        "~/.pypirc",
        "~/.pip/pip.conf",
        "~/.cargo/credentials.toml",
        "~/.m2/settings-security.xml",
        "~/.nuget/NuGet/NuGet.Config",
        "~/.config/composer/auth.json",
        "~/.pub-cache/credentials.json",
        "~/.huggingface/token",
        "~/.local/share/keyrings/",
        "~/.local/share/kwalletd/",
        "~/.password-store/",
        "~/.gnupg/",
        "~/.config/google-chrome/",
        "~/.config/chromium/",
        "~/.mozilla/firefox/",
        "~/.config/direnv/",
        "~/.terraform.d/credentials.tfrc.json",
        "~/.vault-token",
        "~/.pgpass",
        "~/.my.cnf",
        "$SSH_AUTH_SOCK",
    ] {
        assert!(row(p).masked(), "{p}");
    }
    for name in [
        ".env",
        ".env.local",
        "prod.tfvars",
        "service-account-prod.json",
        "gcp-credentials.json",
        "id_ed25519",
        "id_ecdsa",
        "server.pem",
        "tls.key",
        "cert.p12",
        "cert.pfx",
        "release.jks",
        "app.keystore",
    ] {
        assert!(workspace_row(name).is_some(), "{name}");
    }
    for inside in [
        "~/.config/gcloud/*credentials*",
        "~/.config/google-chrome/*/Login Data",
        "~/.config/google-chrome/*/Cookies",
        "~/.mozilla/firefox/*/logins.json",
        "~/.mozilla/firefox/*/key4.db",
    ] {
        assert_eq!(row(inside).mask, Mask::Inside, "{inside}");
    }
}

#[test]
fn templates_and_public_keys_are_not_credentials() {
    for name in [
        ".env.example",
        ".env.sample",
        ".env.local.example",
        ".env.template",
        ".env.dist",
        ".env.defaults",
        ".env.tmpl",
        "credentials.json.sample",
        "id_rsa.pub",
        "terraform.tfvars.example",
    ] {
        assert!(workspace_row(name).is_none(), "{name}");
        assert_eq!(look_at(name, false), Look::Pass, "{name}");
    }
    for name in [".env", ".env.local", ".env.production", ".env.test"] {
        assert!(!is_template(name), "{name}");
    }
}

#[test]
fn file_names_match_like_the_shell_without_case() {
    for (p, n) in [
        ("*.pem", "server.pem"),
        ("*.pem", "SERVER.PEM"),
        (".env.*", ".env.local"),
        ("service-account*.json", "service-account.json"),
        ("service-account*.json", "service-account-prod.json"),
        ("*-credentials.json", "gcp-credentials.json"),
        ("id_rsa", "id_rsa"),
        ("*.tfstate.backup", "terraform.tfstate.backup"),
        ("a?c", "abc"),
    ] {
        assert!(name_matches(p, n), "{p} {n}");
    }
    for (p, n) in [
        ("*.pem", ".pem"),
        ("*.pem", "server.pem.txt"),
        (".env.*", ".env"),
        (".env", ".envrc"),
        ("id_rsa", "id_rsa.pub"),
        ("*-credentials.json", "credentials.json"),
        ("a?c", "ac"),
    ] {
        assert!(!name_matches(p, n), "{p} {n}");
    }
}

#[test]
fn the_workspace_search_decides_by_name_then_content() {
    let mask = |n: &str| matches!(look_at(n, false), Look::Mask(_));
    let read = |n: &str| matches!(look_at(n, false), Look::Read(_));
    for n in [
        ".env",
        ".envrc",
        "credentials.json",
        "terraform.tfstate",
        "id_rsa",
        "tls.key",
        "a.p12",
    ] {
        assert!(mask(n), "{n}");
    }
    for n in [
        "server.pem",
        ".npmrc",
        ".yarnrc.yml",
        "prod.tfvars",
        "key.asc",
        "gcp-key.json",
        "ci-sa-key.json",
        "deploy_key",
        "github-deploy-key",
    ] {
        assert!(read(n), "{n}");
    }
    for n in [
        "mykey",
        ".deploy_key",
        "prod-secret.txt",
        "my-proj-0123456789ab.json",
        "server.crt",
    ] {
        assert_eq!(look_at(n, false), Look::Sniff, "{n}");
    }
    for n in [
        "main.rs",
        "package.json",
        "tsconfig.json",
        "README.md",
        "style.css",
        "Cargo.lock",
        "id_rsa.pub",
        "LICENSE",
        "README",
        "Makefile",
        "Dockerfile",
        ".gitignore",
        ".nvmrc",
    ] {
        assert_eq!(look_at(n, false), Look::Pass, "{n}");
    }
    // Test keys: under a fixture directory, or named so.
    for n in ["id_rsa", "server.pem", "tls.key", "deploy_key"] {
        assert_eq!(look_at(n, true), Look::Pass, "{n}");
    }
    assert_eq!(look_at("fake_server.key", false), Look::Pass);
    // Fixture directories spare key files only, not `.env`.
    assert!(matches!(look_at(".env", true), Look::Mask(_)));
    assert!(is_fixture_dir("testdata") && is_fixture_dir("__fixtures__") && !is_fixture_dir("src"));
}

/// Fake keys, assembled so this source holds no key-shaped string.
fn pem(label: &str) -> String {
    format!(
        "-----BEGIN {label}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END {label}-----\n"
    )
}

#[test]
fn private_keys_are_told_by_their_first_bytes() {
    for label in [
        "RSA PRIVATE KEY",
        "PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ] {
        assert_eq!(
            sniff_secret(pem(label).as_bytes()),
            Some("a private key"),
            "{label}"
        );
    }
    // openssl pkcs12 output: attributes before the block.
    let bagged = format!(
        "Bag Attributes\n    localKeyID: 01 02\n{}",
        pem("PRIVATE KEY")
    );
    assert!(sniff_secret(bagged.as_bytes()).is_some());
    let putty = "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n";
    assert_eq!(sniff_secret(putty.as_bytes()), Some("a PuTTY private key"));
    let sa = format!(
        "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"fake\",\n  \"private_key\": \"{}\"\n}}\n",
        pem("PRIVATE KEY").replace('\n', "\\n")
    );
    assert_eq!(
        sniff_secret(sa.as_bytes()),
        Some("a cloud service-account key")
    );
    for not in [
        pem("CERTIFICATE"),
        pem("PUBLIC KEY"),
        pem("RSA PUBLIC KEY"),
        "{\"type\": \"service_account\", \"client_email\": \"x@example.invalid\"}".to_string(),
        "#!/bin/sh\necho 'PRIVATE KEY'\n".to_string(),
        String::new(),
    ] {
        assert_eq!(sniff_secret(not.as_bytes()), None, "{not}");
    }
    // Only the head is read: a header past it is not seen.
    let late = format!("{}{}", "x".repeat(SNIFF_BYTES), pem("PRIVATE KEY"));
    assert_eq!(sniff_secret(late.as_bytes()), None);
}

#[test]
fn settings_files_are_masked_only_with_a_literal_value() {
    let holds = |path: &str, text: &str| row(path).masks_content(text.as_bytes());
    let ws = |name: &str, text: &str| workspace_row(name).unwrap().masks_content(text.as_bytes());
    // Build settings without credentials stay readable.
    assert!(!holds(
        "~/.npmrc",
        "registry=https://registry.example.invalid/\n@acme:registry=https://npm.example.invalid/\n"
    ));
    assert!(!holds(
        "~/.npmrc",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n"
    ));
    assert!(!holds(
        "~/.m2/settings.xml",
        "<settings><mirrors><mirror><url>https://repo.example.invalid/maven2</url></mirror></mirrors></settings>\n"
    ));
    assert!(!holds(
        "~/.m2/settings.xml",
        "<server><id>x</id><password>${env.MAVEN_PASSWORD}</password></server>\n"
    ));
    assert!(!holds(
        "~/.gradle/gradle.properties",
        "org.gradle.jvmargs=-Xmx2g\norg.gradle.caching=true\nsigning.secretKeyRingFile=/x/y.gpg\n"
    ));
    assert!(!holds(
        "~/.yarnrc.yml",
        "npmRegistryServer: \"https://npm.example.invalid\"\n"
    ));
    assert!(!holds(
        "~/.pip/pip.conf",
        "[global]\nindex-url = https://pypi.example.invalid/simple\n"
    ));
    assert!(!holds(
        "~/.my.cnf",
        "[client]\nuser=dev\n# password=fake-in-a-comment\n"
    ));
    assert!(!ws(
        "prod.tfvars",
        "region = \"eu-west-1\"\ntoken_ttl = 3600\n"
    ));
    assert!(!ws(".npmrc", "engine-strict=true\n"));
    // With one, they are masked.
    for (path, text) in [
        (
            "~/.npmrc",
            "//registry.npmjs.org/:_authToken=fake-npm-token\n",
        ),
        ("~/.npmrc", "_auth=ZmFrZTpmYWtl\n"),
        (
            "~/.yarnrc",
            "\"//registry.npmjs.org/:_authToken\" \"fake-token\"\n",
        ),
        (
            "~/.yarnrc.yml",
            "npmScopes:\n  acme:\n    npmAuthToken: \"fake-token\"\n",
        ),
        (
            "~/.m2/settings.xml",
            "<servers><server><id>x</id><password>fake-password</password></server></servers>\n",
        ),
        (
            "~/.m2/settings.xml",
            "<password>{COQLCE6DU6GtcS5P=}</password>\n",
        ),
        (
            "~/.gradle/gradle.properties",
            "ossrhPassword=fake-password\n",
        ),
        ("~/.gradle/gradle.properties", "signing.password = fake\n"),
        (
            "~/.pip/pip.conf",
            "[global]\nindex-url = https://dev:fake-pass@pypi.example.invalid/simple\n",
        ),
        (
            "~/.nuget/NuGet/NuGet.Config",
            "<add key=\"ClearTextPassword\" value=\"fake\" />\n",
        ),
        ("~/.my.cnf", "[client]\npassword = fake\n"),
        (
            "~/.terraformrc",
            "credentials \"app.terraform.io\" {\n  token = \"fake.atlasv1.token\"\n}\n",
        ),
    ] {
        assert!(holds(path, text), "{path}: {text}");
    }
    assert!(ws("prod.tfvars", "db_password = \"fake-password\"\n"));
    assert!(ws("x.tfvars.json", "{\"db_password\": \"fake\",\n}\n"));
    assert!(ws(".yarnrc.yml", "npmAuthToken: fake\n"));
    assert!(ws(
        ".npmrc",
        "registry=https://u:fake@npm.example.invalid/\n"
    ));
}

#[test]
fn paths_and_parts_read_as_written() {
    let ssh = row("~/.ssh/");
    assert_eq!(ssh.place(), Place::Home);
    assert!(ssh.is_dir());
    assert_eq!(ssh.mask_path(), "~/.ssh");
    assert_eq!(ssh.parts().collect::<Vec<_>>(), [".ssh"]);
    let key = row("~/.ssh/id_*");
    assert_eq!(key.parts().collect::<Vec<_>>(), [".ssh", "id_*"]);
    let sock = row("$XDG_RUNTIME_DIR/keyring/");
    assert_eq!(sock.place(), Place::Var);
    assert_eq!(sock.var(), Some("XDG_RUNTIME_DIR"));
    assert_eq!(sock.parts().collect::<Vec<_>>(), ["keyring"]);
    assert_eq!(row("$SSH_AUTH_SOCK").var(), Some("SSH_AUTH_SOCK"));
    assert_eq!(row("/tmp/ssh-*/").place(), Place::System);
    assert_eq!(row(".env").place(), Place::Workspace);
    assert!(row("~/.npmrc").masked() && !row("~/.npmrc").always_masked());
    assert_eq!(row("~/.npmrc").read_limit(), VALUE_BYTES);
    assert_eq!(row("*.pem").read_limit(), SNIFF_BYTES);
    assert_eq!(row(".env").read_limit(), 0);
}

/// docs/credentials.md lists every row (regenerate its table from this one).
#[test]
fn the_credentials_documentation_lists_every_row() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/credentials.md"),
    )
    .expect("docs/credentials.md");
    let missing: Vec<&str> = CREDENTIALS
        .iter()
        .filter(|c| c.mask != Mask::Near)
        .map(|c| c.path)
        .filter(|p| !doc.contains(&format!("`{p}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/credentials.md does not list: {missing:?}"
    );
}
