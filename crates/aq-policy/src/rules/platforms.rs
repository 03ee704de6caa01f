//! Platform CLIs judged by what their subcommands do, as `programs.toml`
//! says (`subs`, `opts`, `default`, and the verb classes for subcommands no
//! entry lists): reads and local work are no objection; remote changes,
//! deletions, publishing, remote code, credential changes and listeners
//! ask; printing a secret blocks.
//!
//! The words of a subcommand are the command's arguments that are not
//! options. A listed subcommand is looked for at the first few of them (an
//! option's value, `-n prod get`, may come first); the earliest and then the
//! longest match wins. Otherwise the last verb among the first words
//! decides (`compute instances list`: noun, noun, verb).

use aq_knowledge::programs::{self, Effect, Opts, Program, Sub};

use super::Ctx;
use crate::catalog::RuleId;

/// How many leading words a listed subcommand may start after.
const SUB_START: usize = 3;
/// How many leading words the verb classes look at.
const VERB_WORDS: usize = 4;

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else { return };
    // Most commands are none of these: leave before building anything.
    let model = ctx.model(i);
    let platform = model.is_some_and(|p| p.default.is_some() || !p.subs.is_empty());
    let container = model.and_then(|p| p.class) == Some(programs::Class::Container);
    let redis = model.is_some_and(|p| p.name == "redis-cli");
    let own = !ctx.policy.programs.is_empty();
    if !platform
        && !container
        && !redis
        && !name.starts_with("java")
        && !name.starts_with("python")
        && !own
    {
        return;
    }
    let all: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    if let Some(spec) = privileged_pod(ctx, i, &all) {
        ctx.hit(
            RuleId::DockerPrivileged,
            i,
            format!("`{name}` asks for a pod with {spec}"),
        );
    }
    if let Some((path, evidence)) = redis_dump_file(ctx, i)
        && let Some(place) = crate::places::place_with(&path, ctx.policy)
    {
        ctx.hit(
            super::files::place_rule(place.kind),
            i,
            format!(
                "{evidence} writes {} {path}",
                super::files::place_noun(place.kind)
            ),
        );
    }
    // `gh repo sync OWNER/REPO --force`: the destination's branch is hard
    // reset to the source's, on GitHub when it is named (a force push);
    // without a repository the destination is the local one (local work
    // discarded).
    if name == "gh" && all.starts_with(&["repo", "sync"]) && all.contains(&"--force") {
        let remote = all[2..].iter().enumerate().any(|(k, a)| {
            !a.starts_with('-')
                && (k == 0 || !matches!(all[1 + k], "-s" | "--source" | "-b" | "--branch"))
                && a.contains('/')
        });
        if remote {
            ctx.hit(
                RuleId::GitPushForce,
                i,
                "`gh repo sync --force` hard-resets the named repository's branch on GitHub",
            );
        } else {
            ctx.hit(
                RuleId::GitDiscardChanges,
                i,
                "`gh repo sync --force` hard-resets the local branch to the remote's",
            );
        }
        return;
    }
    if let Some(evidence) = forced_ref_update(ctx, i, &all) {
        ctx.hit(RuleId::GitPushForce, i, evidence);
    }
    if let Some(var) = ansible_debug_secret(name, &all) {
        ctx.hit(
            RuleId::PlatformSecretRead,
            i,
            format!("`{name} -m debug` prints {var}, a secret's value"),
        );
    }
    let (program, args) = match jar_program(name, &all)
        .or_else(|| python_module(name, &all))
        .or_else(|| python_script(name, &all))
    {
        Some((p, rest)) => (Some(p), rest),
        None => (ctx.model(i), &all[..]),
    };
    let builtin = program.filter(|p| p.default.is_some() || !p.subs.is_empty());
    // A policy file's `[program.NAME]`: its listed subcommands decide over
    // the built-in entry, its default only where neither lists one.
    let user = [Some(name), program.map(|p| p.name.as_str())]
        .into_iter()
        .flatten()
        .find_map(|n| ctx.policy.programs.get(n).map(|u| (n, u)));
    let decided = user
        .and_then(|(n, u)| user_sub(n, u, args))
        .or_else(|| builtin.and_then(|p| decide(p, args)))
        .or_else(|| user.and_then(|(n, u)| user_default(n, u, args)));
    let Some((effect, what)) = decided else {
        return;
    };
    let (effect, what) = api_secrets(name, effect, args).unwrap_or((effect, what));
    let p = builtin;
    // A platform's SQL command: what its SQL does (`SELECT` reads).
    let fed = (effect == Effect::Sql || effect == Effect::ValueRead)
        .then(|| super::written::input_text(ctx, c))
        .flatten();
    let (effect, sql) = if effect == Effect::Sql {
        let (e, why) = super::sql::platform_effect(args, fed.as_deref());
        (e, Some(why))
    } else {
        (effect, None)
    };
    let (effect, what) = match (effect, p.and_then(|p| wholesale(p, args))) {
        (Effect::Delete, Some(noun)) => (Effect::Destroy, format!("{what} ({noun})")),
        other => (other.0, what),
    };
    let shown = c.display();
    // A secret file handed to a subcommand that sends things away (`gh gist
    // create .env`, `gh release upload v1 ~/.ssh/id_ed25519`) is uploaded.
    // (A remote shell's command, `fly ssh console -C 'cat F'`, runs there
    // and is judged as a command of the line.)
    if matches!(
        effect,
        Effect::Publish | Effect::Change | Effect::Credential | Effect::Network | Effect::Exec
    ) && !(effect == Effect::Exec && c.runs.is_some())
        && let Some((file, kind)) = args.iter().find_map(|a| {
            if p.is_some_and(|p| p.is_sub_word(a)) {
                return None;
            }
            let v = a.rsplit_once('=').map_or(*a, |(_, v)| v);
            let v = v.strip_prefix('@').unwrap_or(v);
            // `keys create sa-key.json`: the file is the new key, written;
            // `gpg-key add k.asc`: the public key added.
            let written = effect == Effect::Credential
                && (creates(&what) && output_files(args).contains(&v) || public_or_private(v));
            crate::paths::secret_kind(v)
                .filter(|_| !written)
                .map(|k| (v, k))
        })
    {
        ctx.hit(
            RuleId::NetExfilSecret,
            i,
            format!("`{what}` sends {file} ({kind}) to the platform"),
        );
    }
    let (rule, evidence) = match effect {
        Effect::Read | Effect::Local | Effect::Target | Effect::Bind => return,
        Effect::ForcePush => (
            RuleId::GitPushForce,
            format!(
                "`{what}` pushes with --force: rewrites the remote branch like `git push --force`"
            ),
        ),
        Effect::ValueRead => {
            // The names on the line (`config:get DATABASE_URL`), and in the
            // text it is fed (`echo 'var.db_password' | terraform console`).
            // A name spelled as a variable (`DATABASE_URL`) is judged as
            // one (a vendor's family too); a key or an output name
            // (`db_password`, `aws_instance_id`) by its words.
            let named = |a: &str| {
                !a.starts_with('-')
                    && if a.bytes().any(|b| b.is_ascii_lowercase()) {
                        aq_knowledge::secret_names::is_secret_name(a)
                    } else {
                        aq_knowledge::secret_names::is_secret_env_name(&a.replace(['-', '.'], "_"))
                    }
            };
            // An expression's references (`var.db_password`,
            // `aws_instance.web.public_ip`): each part.
            let in_fed = |t: &str| {
                t.split(|ch: char| !ch.is_ascii_alphanumeric() && !matches!(ch, '_' | '-'))
                    .any(named)
                    || t.split(|ch: char| ch.is_whitespace() || "\"'(),[]{}".contains(ch))
                        .any(|w| crate::paths::secret_kind(w).is_some())
            };
            let Some(name) = args
                .iter()
                .find(|a| named(a))
                .map(|a| a.to_string())
                .or_else(|| {
                    fed.as_deref()
                        .filter(|t| in_fed(t))
                        .map(|t| t.trim().to_string())
                })
            else {
                return;
            };
            (
                RuleId::PlatformSecretRead,
                format!("`{what}` prints a value named like a secret: {name}"),
            )
        }
        // `terraform show -json PLAN`: the file it is given, whole. Given
        // none, it prints the live state: every secret it holds.
        Effect::Dump if plain_words(args).len() < what.split(' ').count() => (
            RuleId::PlatformSecretRead,
            format!("`{what}` prints the whole current state, secrets' values in clear"),
        ),
        Effect::Dump => (
            RuleId::SecretLocation,
            format!("`{what}` prints all of the file it is given, secrets' values among the rest"),
        ),
        Effect::SecretRead => (
            RuleId::PlatformSecretRead,
            format!("`{what}` prints a secret"),
        ),
        Effect::SecretList => (
            RuleId::SecretLocation,
            format!("`{what}` lists secrets (their names, not their values)"),
        ),
        Effect::Redacted => (
            RuleId::SecretLocation,
            format!("`{what}` prints a credential file, its secrets' values hidden only in part"),
        ),
        Effect::SecretFetch if to_stdout(args) => (
            RuleId::PlatformSecretRead,
            format!("`{what}` prints secrets: its file is standard output"),
        ),
        Effect::SecretFetch => (
            RuleId::PlatformSecretFetch,
            format!("`{what}` writes secrets into a local file"),
        ),
        Effect::Credential => (
            RuleId::PlatformCredentialChange,
            format!("`{what}` creates, changes or removes credentials or permissions"),
        ),
        // A prompt handed to another agent: a command line in prose, acted
        // on by that agent's own rules.
        Effect::Exec if p.and_then(|p| p.class) == Some(programs::Class::Agent) => (
            RuleId::ExecShellString,
            format!(
                "`{what}` hands an agent a prompt: it runs commands and edits files by its own rules, not these"
            ),
        ),
        Effect::Exec => (
            RuleId::PlatformRemoteExec,
            format!("`{what}` runs code on a remote host, cluster or service"),
        ),
        Effect::Delete => (
            RuleId::CloudDelete,
            format!("`{what}` deletes remote resources"),
        ),
        Effect::Destroy => (
            RuleId::CloudDestroy,
            format!("`{what}` deletes everything in it at once: `{shown}`"),
        ),
        Effect::Publish => (
            RuleId::PlatformPublish,
            format!("`{what}` publishes for others: `{shown}`"),
        ),
        Effect::Change => (
            RuleId::PlatformChange,
            format!("`{what}` changes remote resources: `{shown}`"),
        ),
        Effect::Serve => (RuleId::NetListener, format!("`{what}` listens or forwards")),
        Effect::Network => (
            RuleId::NetFetch,
            format!("`{what}` talks to a remote service"),
        ),
        Effect::Install => (
            RuleId::PkgInstall,
            format!("`{what}` downloads packages, plug-ins or providers"),
        ),
        // Resolved above from the statements.
        Effect::Sql => (
            RuleId::PlatformChange,
            format!("`{what}` runs SQL on a remote database"),
        ),
    };
    let evidence = match sql {
        Some(why) => format!("{evidence} (its SQL {why})"),
        None => evidence,
    };
    let already = ctx.hits_on(i).any(|r| r == rule);
    if !already {
        ctx.hit(rule, i, evidence);
    }
}

/// Whether the command is a platform's subcommand that writes secrets into
/// the file it names (`vercel env pull .env.local`), or creates a
/// credential into it (`gcloud iam service-accounts keys create
/// sa-key.json`, `ibmcloud iam api-key-create K --file k.json`): that file
/// is its output, not something it reads or sends.
pub(crate) fn fetches_secrets(ctx: &Ctx, i: usize) -> bool {
    let Some(p) = ctx
        .model(i)
        .filter(|p| p.default.is_some() || !p.subs.is_empty())
    else {
        return false;
    };
    let args: Vec<&str> = ctx.commands()[i]
        .args()
        .iter()
        .map(|w| w.text.as_str())
        .collect();
    match decide(p, &args) {
        Some((Effect::SecretFetch, _)) => true,
        // Every secret file on the line is one it writes.
        Some((Effect::Credential, what)) if creates(&what) => {
            let outputs = output_files(&args);
            args.iter().all(|a| {
                let v = a.rsplit_once('=').map_or(*a, |(_, v)| v);
                crate::paths::secret_kind(v).is_none() || outputs.contains(&v)
            })
        }
        _ => false,
    }
}

/// The files a subcommand that creates a credential writes it into: its
/// operands (`keys create sa-key.json`) and the values of its output
/// options (`--file k.json`, `-o k.json`). A file given to another option
/// (`--from-file=id=~/.ssh/id_ed25519`, `--data-file .env`) is an input
/// it sends.
fn output_files<'a>(args: &[&'a str]) -> Vec<&'a str> {
    const OUTPUT: &[&str] = &[
        "--file",
        "--output",
        "-o",
        "--out",
        "--output-file",
        "--out-file",
        "--key-file",
    ];
    let mut out = Vec::new();
    let mut k = 0;
    while k < args.len() {
        let a = args[k];
        k += 1;
        if let Some((opt, v)) = a.split_once('=')
            && opt.starts_with('-')
        {
            if OUTPUT.contains(&opt) {
                out.push(v);
            }
        } else if a.starts_with('-') && a.len() > 1 {
            // The next word is the option's value, unless it is an option.
            if let Some(v) = args.get(k).filter(|v| !v.starts_with('-')) {
                if OUTPUT.contains(&a) {
                    out.push(*v);
                }
                k += 1;
            }
        } else {
            out.push(a);
        }
    }
    out
}

/// Whether a credential subcommand's words say it makes a new key, token
/// or certificate (`keys create`, `api-key-create`, `tokens mint`, `ssh
/// issue`): a file it names as output is where it writes it. Other
/// creations take their content from the files they name (`secrets create
/// --data-file F`, `create secret --from-file F`, `bw create attachment
/// --file F`).
fn creates(what: &str) -> bool {
    let words = || what.split([' ', '-', '_', ':']);
    words().any(|w| matches!(w, "create" | "generate" | "mint" | "new" | "issue"))
        && words().any(|w| {
            matches!(
                w,
                "key" | "keys" | "token" | "tokens" | "cert" | "certs" | "certificate" | "ssh"
            )
        })
}

/// A file of a kind that holds a public key as often as a private one (an
/// armored PGP file, a `.pem`): handed to a subcommand that adds a key to
/// an account (`gh gpg-key add k.asc`), it is the public key being added.
fn public_or_private(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    aq_knowledge::credentials::workspace_row(name)
        .is_some_and(|r| r.mask == aq_knowledge::credentials::Mask::IfKey)
}

/// Whether a secret-fetching subcommand is pointed at standard output
/// (`-`, `/dev/stdout`, `--no-file`), which prints what it fetches.
fn to_stdout(args: &[&str]) -> bool {
    args.iter().any(|a| {
        let v = a.rsplit('=').next().unwrap_or(a);
        matches!(
            v,
            "-" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/proc/self/fd/1"
        ) || *a == "--no-file"
    })
}

/// A pod spec given on a cluster client's line (`kubectl run --overrides`)
/// that hands it the host: privileged, the host's PID or network namespace,
/// or a host path.
fn privileged_pod(ctx: &Ctx, i: usize, args: &[&str]) -> Option<&'static str> {
    if ctx.model(i).and_then(|p| p.class) != Some(programs::Class::Container) {
        return None;
    }
    const HOST: &[(&str, &str)] = &[
        ("\"privileged\":true", "privileged: true"),
        ("\"hostPID\":true", "the host's PIDs"),
        ("\"hostNetwork\":true", "the host's network"),
        ("\"hostIPC\":true", "the host's IPC"),
        ("\"hostPath\":", "a host path mounted"),
    ];
    args.iter()
        .find_map(|a| {
            let squeezed: String = a.chars().filter(|c| !c.is_whitespace()).collect();
            HOST.iter()
                .find(|(k, _)| squeezed.contains(k))
                .map(|(_, what)| *what)
        })
        .or_else(|| args.contains(&"--privileged").then_some("--privileged"))
}

/// `redis-cli config set dbfilename F` (with `config set dir D` anywhere on
/// the line): redis then saves its dump as D/F, a file of the attacker's
/// choosing (`~/.ssh/authorized_keys`, a cron table).
fn redis_dump_file(ctx: &Ctx, i: usize) -> Option<(String, String)> {
    let is_redis = |c: &aq_shell::Command| {
        matches!(c.program(), Some("redis-cli" | "valkey-cli" | "keydb-cli"))
    };
    let config_set = |c: &aq_shell::Command, key: &str| -> Option<String> {
        let a: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
        a.windows(4)
            .find(|w| {
                w[0].eq_ignore_ascii_case("config")
                    && w[1].eq_ignore_ascii_case("set")
                    && w[2].eq_ignore_ascii_case(key)
            })
            .map(|w| w[3].to_string())
    };
    let c = &ctx.commands()[i];
    if !is_redis(c) {
        return None;
    }
    let file = config_set(c, "dbfilename")?;
    let dir = ctx
        .commands()
        .iter()
        .filter(|c| is_redis(c))
        .find_map(|c| config_set(c, "dir"))
        .unwrap_or_default();
    let path = if dir.is_empty() {
        file.clone()
    } else {
        format!("{}/{file}", dir.trim_end_matches('/'))
    };
    Some((path, format!("`config set dbfilename {file}`")))
}

/// `java -jar jenkins-cli.jar ARGS`: the jar's entry and the words after it.
fn jar_program<'a>(name: &str, args: &'a [&'a str]) -> Option<(&'static Program, &'a [&'a str])> {
    if !name.starts_with("java") {
        return None;
    }
    let k = args.iter().position(|a| *a == "-jar")?;
    let jar = args.get(k + 1)?;
    let base = jar.rsplit('/').next().unwrap_or(jar);
    let p = programs::lookup(base).or_else(|| programs::lookup(base.strip_suffix(".jar")?))?;
    Some((p, &args[k + 2..]))
}

/// `gh api -X PATCH repos/o/r/git/refs/heads/main -F force=true`: the
/// hosting API's way to force-push a branch (its body from `-f`/`-F` or
/// from `--input`, a file or a command on the line).
fn forced_ref_update(ctx: &Ctx, i: usize, args: &[&str]) -> Option<String> {
    let c = &ctx.commands()[i];
    if !matches!(c.program(), Some("gh" | "glab" | "tea")) || args.first() != Some(&"api") {
        return None;
    }
    let endpoint = args.iter().find(|a| a.contains("git/refs"))?;
    let squeeze = |t: &str| -> String {
        t.chars()
            .filter(|ch| !ch.is_whitespace() && *ch != '"' && *ch != '\'')
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let forced = |t: &str| {
        let t = squeeze(t);
        t.contains("force=true") || t.contains("force:true")
    };
    let fed = c
        .args()
        .iter()
        .flat_map(|w| w.feeds.iter())
        .flat_map(|&f| ctx.commands()[f].args().iter().map(|w| w.text.as_str()));
    let stdin = c.stdin.iter().filter_map(|s| match s {
        aq_shell::Input::Text(w) => Some(w.text.as_str()),
        _ => None,
    });
    args.iter()
        .copied()
        .chain(fed)
        .chain(stdin)
        .any(forced)
        .then(|| {
            format!(
                "`{} api {endpoint}` with force: rewrites the branch like `git push --force`",
                c.program().unwrap_or_default()
            )
        })
}

/// `gh api repos/o/r/actions/secrets`, `glab api projects/1/variables`: a
/// hosting API's secrets, read. GitHub's answer holds only their names
/// (asks); GitLab's CI/CD variables come with their values (blocks).
fn api_secrets(name: &str, effect: Effect, args: &[&str]) -> Option<(Effect, String)> {
    let (segment, secret) = match name {
        "gh" => ("secrets", Effect::SecretList),
        "glab" => ("variables", Effect::SecretRead),
        _ => return None,
    };
    let words = plain_words(args);
    if effect != Effect::Read || words.first() != Some(&"api") {
        return None;
    }
    let endpoint = words
        .iter()
        .skip(1)
        .find(|w| w.contains('/') && !w.contains(char::is_whitespace) && !w.contains(['=', ':']))?;
    endpoint
        .split(['/', '?'])
        .any(|s| s == segment)
        .then(|| (secret, format!("{name} api {endpoint}")))
}

/// `ansible HOST -m debug -a 'var=vault_db_password'` (or `msg={{ x }}`):
/// the debug module prints the variables it names; one named like a
/// secret is a secret's value.
fn ansible_debug_secret(name: &str, args: &[&str]) -> Option<String> {
    if name != "ansible" {
        return None;
    }
    let value_of = |short: &str, long: &str| -> Option<&str> {
        args.iter().enumerate().find_map(|(k, a)| {
            if *a == short || *a == long {
                args.get(k + 1).copied()
            } else {
                a.strip_prefix(long)
                    .and_then(|r| r.strip_prefix('='))
                    .or_else(|| a.strip_prefix(short).filter(|r| !r.is_empty()))
            }
        })
    };
    let module = value_of("-m", "--module-name")?;
    if !matches!(module, "debug" | "ansible.builtin.debug") {
        return None;
    }
    let text = value_of("-a", "--args")?;
    let mut names: Vec<&str> = Vec::new();
    for part in text.split_whitespace() {
        if let Some(v) = part.strip_prefix("var=") {
            names.push(v.trim_matches(|c| c == '"' || c == '\''));
        }
    }
    let mut rest = text;
    while let Some(k) = rest.find("{{") {
        let inner = &rest[k + 2..];
        let end = inner.find("}}").unwrap_or(inner.len());
        names.extend(
            inner[..end]
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .filter(|w| !w.is_empty()),
        );
        rest = &inner[end..];
    }
    names
        .into_iter()
        .find(|n| aq_knowledge::secret_names::is_secret_name(n))
        .map(str::to_string)
}

/// The words of a command line that are not options (before `--`).
fn plain_words<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter()
        .take_while(|a| **a != "--")
        .filter(|a| !a.starts_with('-') || **a == "-")
        .copied()
        .collect()
}

/// A subcommand a policy file lists for this program, matched as the
/// built-in ones are: starting at one of the first few words.
fn user_sub(name: &str, u: &crate::policy::UserProgram, args: &[&str]) -> Option<(Effect, String)> {
    let words = plain_words(args);
    u.subs.iter().find_map(|(sub, effect)| {
        let want: Vec<&str> = sub.split(' ').collect();
        let found = (0..SUB_START.min(words.len()))
            .any(|k| words[k..].len() >= want.len() && words[k..k + want.len()] == want[..]);
        found
            .then(|| Effect::from_name(effect))
            .flatten()
            .map(|e| (e, format!("{name} {sub} (your policy's [program.{name}])")))
    })
}

/// A policy file's default for this program, for a subcommand nothing lists.
fn user_default(
    name: &str,
    u: &crate::policy::UserProgram,
    args: &[&str],
) -> Option<(Effect, String)> {
    if !args.is_empty()
        && args
            .iter()
            .all(|a| matches!(*a, "--version" | "-V" | "--help" | "-h"))
    {
        return Some((Effect::Read, name.to_string()));
    }
    let e = Effect::from_name(u.default.as_deref()?)?;
    let first = plain_words(args).first().copied().unwrap_or_default();
    Some((
        e,
        format!("{name} {first} (your policy's [program.{name}] default)"),
    ))
}

/// `python3 -m twine upload dist/*`: the module's command line, judged as
/// the program of that name.
fn python_module<'a>(name: &str, args: &'a [&'a str]) -> Option<(&'static Program, &'a [&'a str])> {
    if !name.starts_with("python") {
        return None;
    }
    let k = args.iter().position(|a| *a == "-m")?;
    let module = args.get(k + 1)?;
    let p = programs::lookup(module)?;
    (p.default.is_some() || !p.subs.is_empty()).then(|| (p, &args[k + 2..]))
}

/// `python setup.py sdist upload`: the project's setuptools script, judged
/// as the program of that name (its `upload` publishes).
fn python_script<'a>(name: &str, args: &'a [&'a str]) -> Option<(&'static Program, &'a [&'a str])> {
    if !name.starts_with("python") {
        return None;
    }
    let k = args.iter().position(|a| !a.starts_with('-'))?;
    let script = args[k].rsplit('/').next().unwrap_or(args[k]);
    if script != "setup.py" {
        return None;
    }
    let p = programs::lookup("setuptools")?;
    Some((p, &args[k + 1..]))
}

/// The container a delete removes whole ([`programs::CONTAINERS`]): the
/// noun before the delete verb (`gh repo delete`, `az group delete`), in
/// the verb (`apps:destroy`, `delete-bucket`), or after it for a cluster
/// client, whose verb comes first (`kubectl delete namespace prod`).
fn wholesale(p: &Program, args: &[&str]) -> Option<&'static str> {
    let words: Vec<&str> = args
        .iter()
        .take_while(|a| **a != "--")
        .filter(|a| !a.starts_with('-'))
        .copied()
        .collect();
    let container = |w: &str| {
        let w = w.to_ascii_lowercase();
        programs::CONTAINERS.iter().copied().find(|c| *c == w)
    };
    let k = words
        .iter()
        .take(VERB_WORDS)
        .position(|w| matches!(last_verb(p, &[*w]), Some((_, Effect::Delete))))?;
    let verb = words[k];
    if let Some((noun, _)) = verb.split_once(':')
        && let Some(c) = container(noun)
    {
        return Some(c);
    }
    if let Some((_, noun)) = verb.split_once('-')
        && let Some(c) = container(noun)
    {
        return Some(c);
    }
    if let Some(c) = k.checked_sub(1).and_then(|j| container(words[j])) {
        return Some(c);
    }
    if p.class == Some(programs::Class::Container) {
        return words.get(k + 1).and_then(|w| container(w));
    }
    None
}

/// What `args` make program `p` do, and the words that say it.
pub(crate) fn decide(p: &Program, args: &[&str]) -> Option<(Effect, String)> {
    // `gopass --version`, `vault -h`: the program says what it is, and
    // nothing more; `terraform destroy --help`, `gh auth token -h`: it says
    // what a subcommand does, and does nothing.
    if !args.is_empty()
        && args.iter().all(|a| {
            matches!(
                *a,
                "--version" | "-V" | "--help" | "-h" | "version" | "help"
            )
        })
        || asks_for_help(args)
    {
        return Some((Effect::Read, format!("{} {}", p.name, args.join(" "))));
    }
    let words = sub_words(p, args);
    let found = find_sub(p, &words);
    let (base, sub_opts, what): (Effect, Opts, String) = if let Some(sub) = found {
        (
            sub.effect,
            sub.opts,
            format!("{} {}", p.name, sub.path.join(" ")),
        )
    } else if words.is_empty() {
        (p.bare, Opts::default(), p.name.to_string())
    } else if let Some((w, e)) = p.verbs.then(|| last_verb(p, &words)).flatten() {
        (e, Opts::default(), format!("{} … {w}", p.name))
    } else if let Some((w, e)) = p.verbs.then(|| listed_nouns(args)).flatten() {
        (e, Opts::default(), format!("{} … {w}", p.name))
    } else {
        (
            p.default?,
            Opts::default(),
            format!("{} {}", p.name, words[0]),
        )
    };
    // `bazel run //api:push_image`: what the target's name says.
    let base = match (base, found) {
        (Effect::Target, Some(sub)) => target_effect(&words, sub),
        (e, _) => e,
    };
    // Options: one that lowers to read or local work wins (`--dry-run`);
    // otherwise the strictest of the subcommand and its options.
    let mut effect = base;
    let mut lowered = None;
    for (opt, e) in sub_opts.iter().chain(p.opts.iter()) {
        if has_option(args, opt) {
            // `mkdocs serve -a 0.0.0.0:8000`: a listener for the network.
            let e = &match e {
                Effect::Bind if binds_beyond_loopback(args, opt) => Effect::Serve,
                Effect::Bind => continue,
                e => e,
            };
            // `--dry-run`; and an option that sends a printed secret into a
            // file (`op inject -o F`) or narrows it to names (`doppler
            // secrets --only-names`).
            if matches!(e, Effect::Read | Effect::Local)
                || base == Effect::SecretRead
                    && matches!(e, Effect::SecretFetch | Effect::SecretList)
            {
                lowered = Some(*e);
            } else if severity(*e) > severity(effect) {
                effect = *e;
            }
        }
    }
    Some((lowered.unwrap_or(effect), what))
}

/// Whether a command asks a tool about one of its subcommands rather than
/// running it: `--help` (or `-help`, terraform's spelling) among its
/// options, `-h` as the last word after a subcommand (`gh auth token -h`;
/// before one it is often a host: `psql -h db`), or `help` first (`git
/// help push`). Words after `--` belong to the command a tool runs.
pub(crate) fn asks_for_help(args: &[&str]) -> bool {
    let n = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    let before = &args[..n];
    before.first() == Some(&"help")
        || before.iter().any(|a| matches!(*a, "--help" | "-help"))
        || before.len() == args.len()
            && before.len() > 1
            && before.last() == Some(&"-h")
            && before[..before.len() - 1]
                .iter()
                .any(|a| !a.starts_with('-'))
}

/// The words that may name a subcommand: the arguments that are not
/// options, before `--`. For a build tool (`verbs = false`), a batch of
/// commands in one word is split (`sbt "+core/publishSigned;
/// sonatypeBundleRelease"`: sbt's cross-build `+` aside).
fn sub_words<'a>(p: &Program, args: &[&'a str]) -> Vec<&'a str> {
    let plain = args
        .iter()
        .take_while(|a| **a != "--")
        .filter(|a| !a.starts_with('-') || **a == "-")
        .copied();
    // `kubectl get secret/x`, `kubectl get secrets,configmaps`: a cluster
    // client's resources as KIND/NAME and in lists are kinds and names.
    if p.class == Some(programs::Class::Container) {
        return plain
            .flat_map(|w| {
                let resource = !w.contains(['.', ':', '=', ' ', '\'']) && w.contains([',', '/']);
                let parts: Vec<&str> = if resource {
                    w.split([',', '/']).filter(|t| !t.is_empty()).collect()
                } else {
                    vec![w]
                };
                parts
            })
            .collect();
    }
    if p.verbs {
        return plain.collect();
    }
    let mut out = Vec::new();
    for w in plain {
        if w.contains(';') {
            out.extend(
                w.split(|c: char| c == ';' || c.is_whitespace())
                    .map(|t| t.trim_start_matches('+'))
                    .filter(|t| !t.is_empty()),
            );
        } else {
            out.push(w);
        }
    }
    out
}

/// `doppler projects`, `ibmcloud is instances`, `render services`: a
/// subcommand that is only a plural noun (after a service's short name)
/// lists those things (a read).
/// A list of secrets' kind (`secrets`, `tokens`, `api-keys`) lists their
/// names, which asks.
fn listed_nouns<'a>(args: &[&'a str]) -> Option<(&'a str, Effect)> {
    // The words before any option (`render services --output json`).
    let n = args
        .iter()
        .position(|a| a.starts_with('-'))
        .unwrap_or(args.len());
    let words = &args[..n];
    // One word, or a service's short name and one (`is instances`, `ks
    // clusters`): a longer first word may be a verb the classes lack
    // (`drain nodes`).
    let service = |w: &str| w.len() <= 3;
    if words.is_empty()
        || words.len() > 2
        || words.len() == 2 && !service(words[0])
        || !words
            .iter()
            .all(|w| w.len() > 1 && w.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'))
    {
        return None;
    }
    let last = *words.last()?;
    let plural = last.len() >= 3
        && last.ends_with('s')
        && !last.ends_with("ss")
        && !last.ends_with("us")
        && !last.ends_with("is");
    if !plural {
        return None;
    }
    const SECRETS: &[&str] = &[
        "secret",
        "token",
        "credential",
        "password",
        "key",
        "variable",
        "var",
        "cert",
        "env",
    ];
    let secret = last
        .split('-')
        .any(|part| SECRETS.iter().any(|s| part.starts_with(s)));
    Some((
        last,
        if secret {
            Effect::SecretList
        } else {
            Effect::Read
        },
    ))
}

/// Whether the address option `opt` of a server (`-a 0.0.0.0:8000`,
/// `--bind=192.0.2.4`, `--dev-addr :8000`) is one other machines reach: not
/// `localhost`, `127.x` or `::1`.
fn binds_beyond_loopback(args: &[&str], opt: &str) -> bool {
    let value = args.iter().enumerate().find_map(|(k, a)| {
        if *a == opt {
            args.get(k + 1).copied()
        } else {
            a.strip_prefix(opt).and_then(|r| {
                r.strip_prefix('=')
                    .or_else(|| (opt.len() == 2 && !r.is_empty()).then_some(r))
            })
        }
    });
    let Some(v) = value else {
        return false;
    };
    let host = if let Some(rest) = v.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else if v.matches(':').count() == 1 {
        v.split(':').next().unwrap_or(v)
    } else {
        v
    };
    !(host == "localhost" || host.starts_with("127.") || host == "::1")
}

/// What a build target run by name does (`bazel run //api:push_image`):
/// its name's words say push, publish, upload, deploy or release, it
/// publishes; any other target is the project's local work.
fn target_effect(words: &[&str], sub: &Sub) -> Effect {
    let last = sub.path.last().unwrap_or_default();
    let Some(target) = words
        .iter()
        .position(|w| *w == last)
        .and_then(|k| words.get(k + 1))
    else {
        return Effect::Local;
    };
    let name = target.rsplit([':', '/']).next().unwrap_or(target);
    let publishes = name.split(['_', '-', '.']).any(|part| {
        let part = part.to_ascii_lowercase();
        programs::verb_match(&part) == Some((Effect::Publish, true))
            || matches!(part.as_str(), "deploy" | "release")
    });
    if publishes {
        Effect::Publish
    } else {
        Effect::Local
    }
}

/// The listed subcommand the words name: the earliest, then the longest.
fn find_sub(p: &Program, words: &[&str]) -> Option<&'static Sub> {
    let starts = if p.verbs {
        SUB_START.min(words.len())
    } else {
        // Build tools take several goals: `mvn clean deploy`.
        words.len()
    };
    let subs: &'static [Sub] = p.subs.all();
    for s in 0..starts {
        // `:lib:publish`: a Gradle task of a subproject, by its own name;
        // `core/publishSigned`, `Docker/publish`: sbt's task of a project.
        let same = |a: &str, b: &str| {
            a == b
                || b.starts_with(':') && b.rsplit(':').next() == Some(a)
                || !p.verbs
                    && !b.contains('.')
                    && b.split_once('/').is_some_and(|(project, task)| {
                        !project.is_empty() && !task.contains('/') && task == a
                    })
        };
        let best = subs
            .iter()
            .filter(|sub| {
                words.len() >= s + sub.path.len()
                    && sub.path.iter().zip(&words[s..]).all(|(a, b)| same(a, b))
            })
            .max_by_key(|sub| sub.path.len());
        if best.is_some() {
            return best;
        }
    }
    None
}

/// The last word among the first few that the verb classes know, passing
/// over words that look like values (a path, a URL, `k=v`, `@file`) and
/// the program's nouns (`aws logs`: the service, not a verb).
fn last_verb<'a>(p: &Program, words: &[&'a str]) -> Option<(&'a str, Effect)> {
    let mut found = None;
    let mut whole = None;
    let names = words
        .iter()
        .filter(|w| !w.contains(['/', '=', '@', '.', '\'', '"', ' ', '[', '{']))
        .filter(|w| !p.nouns.contains(w));
    for w in names.take(VERB_WORDS) {
        // `DescribeInstances`: an API action, `describe-instances`.
        match programs::verb_match(&programs::verb_spelling(w)) {
            Some((e, true)) => whole = Some((*w, e)),
            Some((e, false)) => found = Some((*w, e)),
            None => {}
        }
    }
    // A word that is a verb outranks one that only starts with one
    // (`flags update new-checkout`: update, not new), unless that one
    // deletes or prints secrets (`logs delete-log-group`: not a read).
    match (whole, found) {
        (Some((_, Effect::Read | Effect::Local)), Some(f))
            if matches!(f.1, Effect::Delete | Effect::SecretRead) =>
        {
            Some(f)
        }
        (w, f) => w.or(f),
    }
}

/// Whether `args` hold option `opt`: `--raw`, `--dry-run=client`, `-ojson`;
/// `"-X DELETE"` is that option with that value (`-X DELETE`, `-X=DELETE`,
/// `-XDELETE`, case aside).
fn has_option(args: &[&str], opt: &str) -> bool {
    if let Some((flag, value)) = opt.split_once(' ') {
        return args.iter().enumerate().any(|(k, a)| {
            (*a == flag
                && args
                    .get(k + 1)
                    .is_some_and(|v| v.eq_ignore_ascii_case(value)))
                || a.strip_prefix(flag).is_some_and(|rest| {
                    let rest = rest.strip_prefix('=').unwrap_or(rest);
                    !rest.is_empty() && rest.eq_ignore_ascii_case(value)
                })
        });
    }
    args.iter().take_while(|a| **a != "--").any(|a| {
        *a == opt
            || a.strip_prefix(opt).is_some_and(|rest| {
                rest.starts_with('=')
                    || (opt.len() == 2 && !opt.starts_with("--") && !rest.is_empty())
            })
    })
}

/// How strict an effect is, for picking the strictest.
pub(crate) fn severity(e: Effect) -> u8 {
    match e {
        Effect::Read | Effect::Local => 0,
        Effect::SecretList | Effect::Dump | Effect::Redacted => 1,
        Effect::SecretFetch => 8,
        Effect::Install | Effect::Network => 2,
        Effect::Serve => 3,
        Effect::Change | Effect::Sql => 4,
        Effect::Publish => 5,
        Effect::Delete => 6,
        Effect::Exec => 7,
        Effect::Credential => 8,
        Effect::ValueRead => 9,
        Effect::SecretRead => 10,
        Effect::Destroy => 11,
        Effect::ForcePush => 12,
        // Resolved by `decide` from the target's name and the address.
        Effect::Target | Effect::Bind => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(line: &str) -> Option<Effect> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let p = programs::lookup(words[0]).unwrap();
        decide(p, &words[1..]).map(|(e, _)| e)
    }

    #[test]
    fn subcommands_options_and_verbs_decide_the_effect() {
        let cases = [
            ("gh pr list --state open", Some(Effect::Read)),
            ("gh repo delete o/r --yes", Some(Effect::Delete)),
            ("gh auth token", Some(Effect::SecretRead)),
            ("gh api repos/o/r/pulls", Some(Effect::Read)),
            ("gh api -X DELETE repos/o/r", Some(Effect::Delete)),
            ("gh api -X GET search/issues -f q=x", Some(Effect::Read)),
            ("kubectl -n prod get pods", Some(Effect::Read)),
            ("kubectl config view --raw", Some(Effect::SecretRead)),
            ("kubectl delete pod x --dry-run=client", Some(Effect::Read)),
            ("aws ec2 describe-instances", Some(Effect::Read)),
            (
                "aws ec2 terminate-instances --instance-ids i-1",
                Some(Effect::Delete),
            ),
            ("gcloud compute instances list", Some(Effect::Read)),
            ("gcloud run services list", Some(Effect::Read)),
            ("heroku apps:destroy -a x", Some(Effect::Delete)),
            ("npm publish --dry-run", Some(Effect::Local)),
            ("npm publish", Some(Effect::Publish)),
            ("npm test", None),
            ("mvn clean deploy", Some(Effect::Publish)),
            ("gradlew publishToMavenLocal", None),
            ("doctl frobnicate widgets", Some(Effect::Change)),
            // A plural noun alone lists; a verb the classes lack does not.
            ("doppler projects", Some(Effect::Read)),
            ("ibmcloud is instances", Some(Effect::Read)),
            ("render services --output json", Some(Effect::Read)),
            ("ibmcloud iam oauth-tokens", Some(Effect::SecretRead)),
            ("flyctl secrets", Some(Effect::SecretList)),
            // API actions in CamelCase.
            (
                "aliyun ecs DescribeInstances --RegionId r",
                Some(Effect::Read),
            ),
            (
                "aliyun kms GetSecretValue --SecretName s",
                Some(Effect::SecretRead),
            ),
            (
                "aliyun ecs DeleteInstance --InstanceId i",
                Some(Effect::Delete),
            ),
            // Help about a subcommand runs nothing.
            ("terraform destroy --help", Some(Effect::Read)),
            ("terraform destroy -help", Some(Effect::Read)),
            ("gh auth token -h", Some(Effect::Read)),
            // A build target's name; an sbt batch; a forced deploy.
            ("bazel run //api:push_image", Some(Effect::Publish)),
            ("bazel run //:gazelle", Some(Effect::Local)),
            (
                "sbt +core/publishSigned;sonatypeBundleRelease",
                Some(Effect::Publish),
            ),
            ("sbt publishLocal", None),
            ("mkdocs gh-deploy --force", Some(Effect::ForcePush)),
            ("mkdocs gh-deploy", Some(Effect::Publish)),
            // Where a secret goes: a file, or only its name.
            ("op inject -i t.tpl -o out.yml", Some(Effect::SecretFetch)),
            ("op inject -i t.tpl", Some(Effect::SecretRead)),
            ("doppler secrets --only-names", Some(Effect::SecretList)),
            // A server's address.
            ("mkdocs serve -a 0.0.0.0:8000", Some(Effect::Serve)),
            ("mkdocs serve -a localhost:8000", Some(Effect::Local)),
            ("hugo server --bind=[::1]", Some(Effect::Local)),
            // A service named like a verb is a noun for aws.
            (
                "aws logs put-retention-policy --log-group-name x",
                Some(Effect::Change),
            ),
            ("aws logs describe-log-groups", Some(Effect::Read)),
            ("aws events list-rules", Some(Effect::Read)),
            // A Gradle task of a subproject.
            ("gradlew :lib:publish", Some(Effect::Publish)),
            ("gradlew :lib:publishToMavenLocal", None),
            ("terraform show -json plan.out", Some(Effect::Dump)),
            ("terraform output db_password", Some(Effect::ValueRead)),
            ("bq query SELECT", Some(Effect::Sql)),
            ("cargo release patch", Some(Effect::Local)),
            ("cargo release patch --execute", Some(Effect::Publish)),
            ("claude mcp list", Some(Effect::Read)),
            ("claude fix-the-tests", Some(Effect::Exec)),
            ("pass infra/prod/key", Some(Effect::SecretRead)),
            (
                "ldcli flags update --flag new-checkout",
                Some(Effect::Change),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(effect(line), want, "{line}");
        }
    }

    #[test]
    fn options_match_their_spellings() {
        assert!(has_option(&["-ojson"], "-o"));
        assert!(has_option(&["--dry-run=server"], "--dry-run"));
        assert!(!has_option(&["--dry-running"], "--dry-run"));
        assert!(has_option(&["-X", "delete"], "-X DELETE"));
        assert!(has_option(&["-XDELETE"], "-X DELETE"));
        assert!(!has_option(&["-X", "GET"], "-X DELETE"));
    }

    #[test]
    fn help_is_asked_for_after_a_subcommand() {
        assert!(asks_for_help(&["push", "--help"]));
        assert!(asks_for_help(&["destroy", "-help"]));
        assert!(asks_for_help(&["auth", "token", "-h"]));
        assert!(asks_for_help(&["help", "push"]));
        // `-h` before a subcommand, or not last, is often a host.
        assert!(!asks_for_help(&[
            "-h",
            "db.example.invalid",
            "-c",
            "SELECT 1"
        ]));
        assert!(!asks_for_help(&["-h", "cache", "DEL", "k"]));
        // After `--`, the words are the command it runs.
        assert!(!asks_for_help(&["exec", "pod", "--", "sh", "--help"]));
    }

    #[test]
    fn a_credential_created_into_a_file_writes_it() {
        assert_eq!(
            output_files(&["iam", "keys", "create", "k.json", "--iam-account", "a"]),
            ["iam", "keys", "create", "k.json"]
        );
        assert_eq!(
            output_files(&["k", "-d", "CI key", "--file", "k.json"]),
            ["k", "k.json"]
        );
        assert!(!output_files(&["secret", "--from-file", "id_rsa"]).contains(&"id_rsa"));
        assert!(!output_files(&["secret", "--from-file=id=id_rsa"]).contains(&"id=id_rsa"));
    }
}
