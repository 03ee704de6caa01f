//! An undo: decided first ([`Store::plan_impl`]: what would change, shown to
//! the user), then done ([`Store::undo_impl`]), in this order:
//!
//! 1. take the lock (no checkpoint or prune runs meanwhile);
//! 2. a `BeforeUndo` checkpoint of the workspace as it is, so that the undo
//!    can itself be undone (`aq undo --to <that id>`);
//! 3. read every blob the plan needs: a damaged checkpoint is found here,
//!    before anything was touched;
//! 4. `journal.json` {target, before}: if aq is killed from here on,
//!    [`crate::Store::interrupted`] says so, and running the same undo again
//!    finishes it (or undoing to `before` goes back);
//! 5. the files ([`crate::restore`]); 6. the repository's refs, stash and
//!    index; 7. the journal is removed.
//!
//! What is left alone, and said so in `not_restorable`: paths the target did
//! not keep (too big, unreadable), and paths the workspace has now that the
//! undo could not keep either (an undo must not destroy what an undo of it
//! could not bring back).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::diff::{self, RawChange};
use crate::gitstate;
use crate::restore;
use crate::store::write_atomic;
use crate::tree::TreeReader;
use crate::{
    CheckpointId, Error, Journal, Meta, NotKept, Options, Plan, Reason, Result, Store, UndoReport,
};

/// Whether `p` is one of `paths` or below one.
fn under(p: &Path, paths: &[PathBuf]) -> bool {
    paths.is_empty() || paths.iter().any(|q| p.starts_with(q))
}

/// Whether a change at `p` must happen for `paths` to be restored: at or
/// below one of them, or a file or link on the way to one (it must go for a
/// directory to come back).
fn wanted(c: &RawChange, paths: &[PathBuf]) -> bool {
    under(&c.path, paths)
        || c.old.is_some_and(|l| !l.is_dir())
            && paths.iter().any(|q| q.starts_with(&c.path) && q != &c.path)
}

fn clean(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    paths
        .iter()
        .map(|p| {
            crate::walk::clean_rel(p).ok_or_else(|| {
                Error(format!(
                    "{} is not a path inside the workspace (give it relative, without ..)",
                    p.display()
                ))
            })
        })
        .collect()
}

impl Store {
    pub(crate) fn plan_impl(
        &self,
        to: &CheckpointId,
        paths: &[PathBuf],
        opts: &Options,
    ) -> Result<Plan> {
        let _lock = self.lock()?;
        self.plan_locked(to, paths, opts)
    }

    fn plan_locked(&self, to: &CheckpointId, paths: &[PathBuf], opts: &Options) -> Result<Plan> {
        let paths = clean(paths)?;
        let (target, troot) = self.find(to)?;
        let latest = self.latest()?;
        let now = self.walk_now(opts, None, latest.as_ref())?;
        let trees = TreeReader::new(&self.objects);
        let raw = diff::diff_trees(&trees, Some(&now.w), Some(&troot.w))
            .map_err(|e| Error(format!("checkpoint {to} is damaged: {e}")))?;
        let mut not_restorable = Vec::new();
        let skip_target: HashSet<&Path> =
            target.not_kept.iter().map(|n| n.path.as_path()).collect();
        for n in &target.not_kept {
            if n.path != Path::new(".git") && under(&n.path, &paths) {
                not_restorable.push(n.clone());
            }
        }
        let skip_now: HashSet<&Path> = now.not_kept.iter().map(|n| n.path.as_path()).collect();
        for n in &now.not_kept {
            if n.path != Path::new(".git")
                && under(&n.path, &paths)
                && !skip_target.contains(n.path.as_path())
            {
                not_restorable.push(NotKept {
                    path: n.path.clone(),
                    why: format!(
                        "left as it is: it could not be kept now ({}), so an undo of this undo could not bring it back",
                        n.why
                    ),
                });
            }
        }
        let blocked = |p: &Path| {
            p.ancestors()
                .any(|a| skip_target.contains(a) || skip_now.contains(a))
        };
        let mut changes = Vec::new();
        for c in raw
            .iter()
            .filter(|c| wanted(c, &paths) && !blocked(&c.path))
        {
            changes.push(diff::to_change(&trees, c).map_err(|e| {
                Error(format!(
                    "checkpoint {to} is damaged, nothing was changed: {e}"
                ))
            })?);
        }
        let (mut refs, mut index) = (Vec::new(), false);
        if paths.is_empty()
            && let Some(g) = troot.g
        {
            let want = gitstate::read_files(&trees, &g)?;
            let have = gitstate::read_disk(&self.workspace);
            refs = gitstate::ref_changes(&have, &want);
            index = have.get("index") != want.get("index");
            let missing =
                gitstate::missing_objects(&self.workspace, &gitstate::named_commits(&want));
            let mut want = want;
            gitstate::drop_missing(&mut want, &have, &missing, &mut not_restorable);
            if !missing.is_empty() {
                refs.retain(|r| r.new.as_ref().is_none_or(|v| !missing.contains(v)));
            }
        }
        Ok(Plan {
            target: to.clone(),
            changes,
            refs,
            index,
            not_restorable,
            paths,
        })
    }

    pub(crate) fn undo_impl(&self, plan: &Plan, opts: &Options) -> Result<UndoReport> {
        let _lock = self.lock()?;
        let (_, troot) = self.find(&plan.target)?;
        let before = self
            .take_locked(
                Reason::BeforeUndo,
                &Meta {
                    session: None,
                    command: Some(format!("aq undo --to {}", plan.target.0)),
                },
                opts,
                None,
            )?
            .id()
            .clone();
        restore::verify(&self.objects, &plan.changes)?;
        let trees = TreeReader::new(&self.objects);
        let git_target = match troot.g {
            Some(g) if plan.paths.is_empty() && (!plan.refs.is_empty() || plan.index) => {
                Some(gitstate::read_files(&trees, &g)?)
            }
            _ => None,
        };
        let journal = Journal {
            target: plan.target.clone(),
            before: before.clone(),
            paths: plan.paths.clone(),
        };
        let text =
            serde_json::to_vec_pretty(&journal).map_err(|e| Error(format!("journal: {e}")))?;
        write_atomic(&self.journal_path(), &text)?;

        let tree = restore::Tree::open(&self.workspace)?;
        let applied = restore::apply(&tree, &trees, &troot.w, &plan.changes)?;
        let mut not_restorable = plan.not_restorable.clone();
        let mut refs = 0;
        if let Some(mut want) = git_target {
            let have = gitstate::read_disk(&self.workspace);
            let missing =
                gitstate::missing_objects(&self.workspace, &gitstate::named_commits(&want));
            let mut dropped = Vec::new();
            gitstate::drop_missing(&mut want, &have, &missing, &mut dropped);
            for d in dropped {
                if !not_restorable.contains(&d) {
                    not_restorable.push(d);
                }
            }
            gitstate::restore(&self.workspace, &want)?;
            refs = plan.refs.len();
        }
        std::fs::remove_file(self.journal_path())
            .map_err(|e| crate::io_error("remove", &self.journal_path(), e))?;
        Ok(UndoReport {
            before,
            restored: applied.restored,
            removed: applied.removed,
            refs,
            not_restorable,
        })
    }

    pub(crate) fn interrupted_impl(&self) -> Result<Option<Journal>> {
        let path = self.journal_path();
        match std::fs::read(&path) {
            Ok(d) => serde_json::from_slice(&d).map(Some).map_err(|e| {
                Error(format!(
                    "{} is damaged ({e}); remove it once the workspace is as you want",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(crate::io_error("read", &path, e)),
        }
    }
}
