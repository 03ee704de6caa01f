//! Project task runners and what a task's name says it does.
//!
//! `make deploy`, `npm run release`, `./gradlew publishToSonatype`: the
//! runner is ordinary work, the project's own task is not looked into (its
//! recipe is the project's), but a task named for putting something out
//! into the world deploys or publishes, and that is a remote change (the
//! label rules' release and publish tasks: `./gradlew publish`, `mvn
//! release:perform`). The engine asks for those, and for no other task.
//!
//! # How to maintain this table
//!
//! - One row per runner name, sorted; [`TaskArgs`] says where its task
//!   names are among its arguments.
//! - [`PUBLISH_VERBS`] and [`DEPLOY_VERBS`] are the first word of a task's
//!   name (`publishReleasePublication`, `deploy-prod`, `release:perform`):
//!   a verb comes first in task names, so `build-release` builds.
//! - [`LOCAL_WORDS`] in a name make it local work all the same
//!   (`publishToMavenLocal`, `deploy-local`, `release-dry-run`).

/// Where a runner's task names are among its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskArgs {
    /// Every operand that is not an option or a `NAME=VALUE` assignment
    /// (`make deploy ENV=prod`, `./gradlew clean publish`).
    Operands,
    /// The first operand only; the rest are its arguments (`just deploy
    /// prod`).
    First,
    /// The word after `run` or `run-script` (`npm run deploy`), and, for
    /// runners that run a script named as their first word, that word when
    /// it is not one of the runner's own commands ([`RUNNER_COMMANDS`]).
    AfterRun,
}

/// Task runners, sorted by name.
pub(crate) const TASK_RUNNERS: &[(&str, TaskArgs)] = &[
    ("bmake", TaskArgs::Operands),
    ("bun", TaskArgs::AfterRun),
    ("gmake", TaskArgs::Operands),
    ("gradle", TaskArgs::Operands),
    ("gradlew", TaskArgs::Operands),
    ("inv", TaskArgs::Operands),
    ("invoke", TaskArgs::Operands),
    ("just", TaskArgs::First),
    ("lerna", TaskArgs::AfterRun),
    ("mage", TaskArgs::Operands),
    ("make", TaskArgs::Operands),
    ("npm", TaskArgs::AfterRun),
    ("nx", TaskArgs::AfterRun),
    ("pnpm", TaskArgs::AfterRun),
    ("poe", TaskArgs::First),
    ("rake", TaskArgs::Operands),
    ("task", TaskArgs::Operands),
    ("turbo", TaskArgs::AfterRun),
    ("yarn", TaskArgs::AfterRun),
];

/// Runners that run a script named as their first word when it is not one
/// of their own commands (`yarn deploy`), with those commands.
pub const RUNNER_COMMANDS: &[(&str, &[&str])] = &[(
    "yarn",
    &[
        "add",
        "audit",
        "autoclean",
        "bin",
        "cache",
        "check",
        "config",
        "constraints",
        "create",
        "dedupe",
        "dlx",
        "exec",
        "explain",
        "generate-lock-entry",
        "global",
        "help",
        "import",
        "info",
        "init",
        "install",
        "licenses",
        "link",
        "list",
        "login",
        "logout",
        "node",
        "npm",
        "outdated",
        "owner",
        "pack",
        "patch",
        "patch-commit",
        "plugin",
        "policies",
        "publish",
        "rebuild",
        "remove",
        "run",
        "search",
        "set",
        "stage",
        "tag",
        "team",
        "test",
        "unlink",
        "unplug",
        "up",
        "upgrade",
        "upgrade-interactive",
        "version",
        "versions",
        "why",
        "workspace",
        "workspaces",
    ],
)];

/// First words of a task name that publish: a package, an image, a release.
pub const PUBLISH_VERBS: &[&str] = &["publish", "push", "release", "upload"];

/// First words of a task name that deploy: a change to running services.
pub const DEPLOY_VERBS: &[&str] = &["deploy", "promote", "rollout", "ship"];

/// Words that keep a publishing or deploying task on this machine.
pub const LOCAL_WORDS: &[&str] = &["dry", "dryrun", "local", "mavenlocal", "preview"];

/// First words of a task name that build, check or run the project here:
/// its later parts are a variant (`build:release`, `test:deploy`), not a
/// namespace (`api:deploy`).
pub(crate) const LOCAL_VERBS: &[&str] = &[
    "build",
    "bundle",
    "check",
    "clean",
    "compile",
    "dev",
    "docs",
    "e2e",
    "fmt",
    "format",
    "gen",
    "generate",
    "lint",
    "package",
    "serve",
    "start",
    "test",
    "typecheck",
    "watch",
];

/// What a task's name says it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// Publishes a package, an image or a release.
    Publish,
    /// Deploys to running services.
    Deploy,
}

/// The runner a program name is (`./gradlew` is `gradlew`), if any.
pub fn runner(program: &str) -> Option<TaskArgs> {
    TASK_RUNNERS
        .binary_search_by(|(n, _)| n.cmp(&program))
        .ok()
        .map(|k| TASK_RUNNERS[k].1)
}

/// The task names among a runner's arguments.
pub fn task_names<'a>(program: &str, args: &[&'a str]) -> Vec<&'a str> {
    let Some(kind) = runner(program) else {
        return Vec::new();
    };
    let operands = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-') && !a.contains('='));
    match kind {
        TaskArgs::Operands => operands.collect(),
        TaskArgs::First => operands.take(1).collect(),
        TaskArgs::AfterRun => {
            let mut ops = operands;
            match ops.next() {
                Some("run" | "run-script") => ops.next().into_iter().collect(),
                // `nx run-many -t deploy`: the target is an option's value.
                Some("run-many") => args
                    .windows(2)
                    .filter(|w| matches!(w[0], "-t" | "--target" | "--targets"))
                    .flat_map(|w| w[1].split(','))
                    .collect(),
                Some(first)
                    if RUNNER_COMMANDS
                        .iter()
                        .any(|(r, own)| *r == program && !own.contains(&first)) =>
                {
                    vec![first]
                }
                _ => Vec::new(),
            }
        }
    }
}

/// What a task's name says (`deploy:production`, `api:deploy`,
/// `publishReleasePublicationToMavenRepository`, `release-it`): the first
/// word of any of its `:`-separated parts (a namespace comes first), unless
/// a word of it keeps the task local or it starts with a local verb.
pub fn task_kind(name: &str) -> Option<TaskKind> {
    let mut found = None;
    for (k, part) in name.split([':', '/']).enumerate() {
        let words = split_words(part);
        if words.iter().any(|w| LOCAL_WORDS.contains(&w.as_str())) {
            return None;
        }
        if k == 0
            && words
                .first()
                .is_some_and(|w| LOCAL_VERBS.contains(&w.as_str()))
        {
            return None;
        }
        match words.first().map(String::as_str) {
            Some(w) if PUBLISH_VERBS.contains(&w) => found = Some(TaskKind::Publish),
            Some(w) if DEPLOY_VERBS.contains(&w) && found.is_none() => {
                found = Some(TaskKind::Deploy)
            }
            _ => {}
        }
    }
    found
}

/// `publishToMavenLocal` → `publish`, `to`, `maven`, `local`;
/// `deploy-prod_eu` → `deploy`, `prod`, `eu`. `MavenLocal` is also kept
/// joined (`mavenlocal`), as Gradle names it.
fn split_words(part: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for chunk in part.split(['-', '_', '.', ' ']) {
        let mut cur = String::new();
        for ch in chunk.chars() {
            if ch.is_ascii_uppercase() && !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            cur.push(ch.to_ascii_lowercase());
        }
        if !cur.is_empty() {
            words.push(cur);
        }
    }
    let joined: Vec<String> = words
        .windows(2)
        .map(|w| format!("{}{}", w[0], w[1]))
        .collect();
    words.extend(joined);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted() {
        assert!(TASK_RUNNERS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(LOCAL_VERBS.windows(2).all(|w| w[0] < w[1]));
        for (_, own) in RUNNER_COMMANDS {
            assert!(own.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn a_task_is_judged_by_its_first_word() {
        for (name, want) in [
            ("deploy", Some(TaskKind::Deploy)),
            ("deploy-prod", Some(TaskKind::Deploy)),
            ("deploy:production", Some(TaskKind::Deploy)),
            ("api:deploy", Some(TaskKind::Deploy)),
            ("release", Some(TaskKind::Publish)),
            (
                "publishReleasePublicationToMavenRepository",
                Some(TaskKind::Publish),
            ),
            (":lib:publish", Some(TaskKind::Publish)),
            ("push_image", Some(TaskKind::Publish)),
            ("publishToMavenLocal", None),
            ("deploy-local", None),
            ("release-dry-run", None),
            ("build-release", None),
            ("build:release", None),
            ("test", None),
            ("db:migrate", None),
            ("pushd", None),
        ] {
            assert_eq!(task_kind(name), want, "{name}");
        }
    }

    #[test]
    fn task_names_are_found_where_each_runner_takes_them() {
        assert_eq!(
            task_names("make", &["-j8", "deploy", "ENV=prod"]),
            ["deploy"]
        );
        assert_eq!(task_names("just", &["deploy", "release"]), ["deploy"]);
        assert_eq!(task_names("pnpm", &["run", "release"]), ["release"]);
        assert!(task_names("pnpm", &["deploy", "./out"]).is_empty());
        assert_eq!(task_names("yarn", &["deploy:prod"]), ["deploy:prod"]);
        assert!(task_names("yarn", &["publish"]).is_empty());
        assert_eq!(task_names("nx", &["run", "api:deploy"]), ["api:deploy"]);
        assert_eq!(task_names("nx", &["run-many", "-t", "deploy"]), ["deploy"]);
        assert!(task_names("cargo", &["build"]).is_empty());
    }
}
