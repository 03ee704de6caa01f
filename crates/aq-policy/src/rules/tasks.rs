//! A project's tasks named for deploying or publishing (`make deploy`,
//! `npm run release`, `./gradlew publishToSonatype`) ask as the remote
//! change they are; every other task is the project's ordinary work. The
//! runners and the words are `aq_knowledge::tasks`.

use aq_knowledge::tasks::{self, TaskKind};

use super::Ctx;
use crate::catalog::RuleId;

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else { return };
    if tasks::runner(name).is_none() {
        return;
    }
    let args: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    // `make --help`, `just --list`: about the runner itself.
    if args
        .iter()
        .any(|a| matches!(*a, "--help" | "-h" | "--list" | "-l" | "--dry-run" | "-n"))
    {
        return;
    }
    for task in tasks::task_names(name, &args) {
        match tasks::task_kind(task) {
            Some(TaskKind::Publish) => ctx.hit(
                RuleId::PlatformPublish,
                i,
                format!("`{name} {task}`: a task named for publishing (a package, an image or a release)"),
            ),
            Some(TaskKind::Deploy) => ctx.hit(
                RuleId::PlatformChange,
                i,
                format!("`{name} {task}`: a task named for deploying"),
            ),
            None => {}
        }
    }
}
