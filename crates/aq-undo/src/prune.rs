//! Pruning: which checkpoints go, then mark and sweep.
//!
//! Checkpoints older than `keep_days` go, except the newest session's (the
//! one an `aq undo` with no argument goes back to). If the objects the rest
//! reach still take more than `max_store_bytes`, whole sessions go, oldest
//! first, until they fit or only the newest is left. Then every object no
//! kept checkpoint reaches is deleted (an interrupted undo's two checkpoints
//! are always kept), `checkpoints.jsonl` is rewritten through a temporary
//! name, and the stat cache is dropped, since it may name swept objects.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::Path;

use crate::objects::{Kind, Objects, Oid};
use crate::store::{LIST, STAT_CACHE, write_atomic};
use crate::tree::{self, MODE_LINK, MODE_TREE};
use crate::{Checkpoint, PruneReport, Result, Retention, Store};

fn mark(objects: &Objects, oid: Oid, is_tree: bool, seen: &mut HashMap<Oid, u64>) -> Result<()> {
    if seen.contains_key(&oid) {
        return Ok(());
    }
    seen.insert(oid, objects.stored_size(&oid));
    if is_tree && oid != Oid::EMPTY_TREE {
        let data = objects.read_kind(&oid, Kind::Tree)?;
        for e in tree::decode(&oid, &data)? {
            let _ = MODE_LINK;
            mark(objects, e.oid, e.mode == MODE_TREE, seen)?;
        }
    }
    Ok(())
}

/// The objects (and their sizes) that `kept` reach.
fn reach(objects: &Objects, kept: &[&Checkpoint]) -> HashMap<Oid, u64> {
    let mut seen = HashMap::new();
    for c in kept {
        if let Some(oid) = Oid::from_hex(&c.id.0) {
            // A checkpoint damaged deep down still keeps what it can reach.
            let _ = mark(objects, oid, true, &mut seen);
        }
    }
    seen
}

impl Store {
    pub(crate) fn prune_impl(&self, retention: &Retention) -> Result<PruneReport> {
        let _lock = self.lock()?;
        let (listing, _) = self.list_impl()?;
        let all = listing.checkpoints;
        let journal = self.interrupted_impl().ok().flatten();
        let pinned = |c: &Checkpoint| {
            journal
                .as_ref()
                .is_some_and(|j| j.target == c.id || j.before == c.id)
        };
        let newest_session = all.last().map(|c| c.session.clone());
        let is_newest = |c: &Checkpoint| {
            newest_session
                .as_ref()
                .is_some_and(|s| s.is_some() && *s == c.session)
                || all.last().is_some_and(|l| l.id == c.id)
        };
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let horizon = now_ms.saturating_sub(u64::from(retention.keep_days) * 86_400_000);
        let mut kept: Vec<&Checkpoint> = all
            .iter()
            .filter(|c| c.time_ms >= horizon || is_newest(c) || pinned(c))
            .collect();
        let mut reached = reach(&self.objects, &kept);
        // Over the size limit: the oldest sessions go first.
        while reached.values().sum::<u64>() > retention.max_store_bytes {
            let Some(oldest) = kept
                .iter()
                .find(|c| !is_newest(c) && !pinned(c))
                .map(|c| c.session.clone())
            else {
                break;
            };
            let first = kept
                .iter()
                .position(|c| !is_newest(c) && !pinned(c))
                .unwrap_or(0);
            let drop_id = kept[first].id.clone();
            kept.retain(|c| {
                is_newest(c)
                    || pinned(c)
                    || if oldest.is_some() {
                        c.session != oldest
                    } else {
                        c.id != drop_id
                    }
            });
            reached = reach(&self.objects, &kept);
        }
        let kept_ids: HashSet<_> = kept.iter().map(|c| c.id.clone()).collect();
        let mut report = PruneReport {
            checkpoints_removed: all.len() - kept.len(),
            bytes_freed: 0,
        };
        // The list first: a checkpoint must never be listed without its objects.
        let mut text = String::new();
        for c in all.iter().filter(|c| kept_ids.contains(&c.id)) {
            text.push_str(
                &serde_json::to_string(c).map_err(|e| crate::Error(format!("record: {e}")))?,
            );
            text.push('\n');
        }
        write_atomic(&self.dir.join(LIST), text.as_bytes())?;
        let _ = fs::remove_file(self.dir.join(STAT_CACHE));
        report.bytes_freed = sweep_packs(&self.objects, &reached)?;
        report.bytes_freed += sweep(self.objects.dir(), &reached)?;
        Ok(report)
    }
}

/// Packs: one whose objects are all kept stays (unless it is stored
/// uncompressed, as a take writes it: then it is rewritten at level 1); one
/// with none kept goes; one with some is rewritten with only those (a new
/// pack, or loose objects when they are few), put in place before the old
/// one is deleted. Then
/// leftovers of crashed writes an hour old go: temporary files, and a pack
/// whose index was never put in place.
fn sweep_packs(objects: &Objects, keep: &HashMap<Oid, u64>) -> Result<u64> {
    objects.refresh();
    let mut freed = 0u64;
    for pack in objects.packs() {
        let kept: Vec<Oid> = (0..pack.len())
            .map(|i| pack.oid(i))
            .filter(|o| keep.contains_key(o))
            .collect();
        // A take's pack is stored uncompressed (to be quick): compressed here.
        if kept.len() == pack.len() && !pack.is_stored() {
            continue;
        }
        objects.exclude_pack(&pack.name);
        let before = pack.disk_size();
        if !kept.is_empty() {
            let batch = objects.begin_batch(1);
            for oid in &kept {
                let (kind, data) = objects.read(oid)?;
                objects.write_as(*oid, kind, &data)?;
            }
            batch.finish()?;
        }
        objects.remove_pack(&pack.name)?;
        freed += before.saturating_sub(kept.iter().map(|o| objects.stored_size(o)).sum());
    }
    let dir = objects.pack_dir();
    let Ok(rd) = fs::read_dir(&dir) else {
        return Ok(freed);
    };
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let orphan = name.starts_with(".tmp-")
            || name.ends_with(".damaged")
            || name
                .strip_suffix(".pack")
                .is_some_and(|stem| !dir.join(format!("{stem}.idx")).exists());
        let meta = e.metadata().ok();
        let old = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .is_some_and(|t| t < hour_ago);
        if orphan && old && fs::remove_file(e.path()).is_ok() {
            freed += meta.map(|m| m.len()).unwrap_or(0);
        }
    }
    Ok(freed)
}

/// Deletes every object not in `keep`, and temporary files an hour old.
fn sweep(dir: &Path, keep: &HashMap<Oid, u64>) -> Result<u64> {
    let mut freed = 0;
    let Ok(rd) = fs::read_dir(dir) else {
        return Ok(0);
    };
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for fan in rd.flatten() {
        let fan_name = fan.file_name().to_string_lossy().to_string();
        if fan_name.len() != 2 {
            continue;
        }
        let Ok(inner) = fs::read_dir(fan.path()) else {
            continue;
        };
        for obj in inner.flatten() {
            let name = obj.file_name().to_string_lossy().to_string();
            let meta = obj.metadata().ok();
            let size = meta.as_ref().map(|m| m.len()).unwrap_or(0);
            let doomed = match Oid::from_hex(&format!("{fan_name}{name}")) {
                Some(oid) => !keep.contains_key(&oid),
                None => {
                    name.starts_with(".tmp-")
                        && meta
                            .and_then(|m| m.modified().ok())
                            .is_some_and(|t| t < hour_ago)
                }
            };
            if doomed && fs::remove_file(obj.path()).is_ok() {
                freed += size;
            }
        }
    }
    Ok(freed)
}
