//! Files: recursive deletes, permission changes, disks, what gets written
//! where (startup files, cron, systemd, history, logs, system files).

use std::ops::ControlFlow;

use aq_shell::{Command, Input};

use super::{
    Ctx, cwd_before, find_roots, finder_roots, flag_values_text, has_flag, operands,
    placeholder_values,
};
use crate::catalog::RuleId;
use crate::paths::{self, NormPath};
use crate::places::{self, PlaceKind};

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else {
        check_assignments(ctx, i);
        check_writes(ctx, i);
        return;
    };
    match name {
        "rm" | "unlink" | "rmdir" | "shred" | "srm" | "trash" | "trash-put" | "gio" => {
            check_remove(ctx, i)
        }
        "chmod" | "chown" | "chgrp" | "setfacl" | "chattr" => check_permissions(ctx, i),
        "find" => check_find_delete(ctx, i),
        "rsync" => check_mirror_delete(ctx, i),
        "dd" => {
            for of in dd_operand(c, "of") {
                if paths::is_block_device(&of) {
                    ctx.hit(
                        RuleId::DiskOverwrite,
                        i,
                        format!("dd writes to the device {of}"),
                    );
                }
            }
        }
        n if n.starts_with("mkfs")
            || matches!(
                n,
                "mke2fs"
                    | "mkswap"
                    | "wipefs"
                    | "fdisk"
                    | "sfdisk"
                    | "sgdisk"
                    | "parted"
                    | "gdisk"
                    | "cfdisk"
                    | "blkdiscard"
                    | "newfs"
                    | "diskutil"
            ) =>
        {
            let target = operands(c)
                .iter()
                .map(|w| w.text.clone())
                .find(|t| t.starts_with("/dev/"));
            let listing = matches!(n, "fdisk" | "parted") && has_flag(c, Some('l'), &["list"]);
            let diskutil_erases = c
                .args()
                .iter()
                .any(|a| a.text.starts_with("erase") || a.text == "partitionDisk");
            let dangerous = match n {
                "diskutil" => diskutil_erases,
                "wipefs" | "blkdiscard" => true,
                _ => (target.is_some() || n.starts_with("mkfs")) && !listing,
            };
            if dangerous {
                ctx.hit(
                    RuleId::DiskOverwrite,
                    i,
                    format!(
                        "`{n}` formats or repartitions {}",
                        target.unwrap_or_else(|| "a disk".into())
                    ),
                );
            }
        }
        // NVMe format and sanitize, LUKS formatting and key-slot erasing
        // destroy what the device holds.
        "nvme" | "cryptsetup"
            if c.args().iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "format" | "sanitize" | "write-zeroes" | "luksFormat" | "erase" | "luksErase"
                )
            }) =>
        {
            let target = operands(c)
                .iter()
                .map(|w| w.text.clone())
                .find(|t| t.starts_with("/dev/"))
                .unwrap_or_else(|| "a disk".into());
            ctx.hit(
                RuleId::DiskOverwrite,
                i,
                format!("`{n}` erases {target}", n = name),
            );
        }
        // ATA secure erase and sector writes wipe or damage the disk.
        "hdparm"
            if c.args().iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "--security-erase"
                        | "--security-erase-enhanced"
                        | "--trim-sector-ranges"
                        | "--trim-sector-ranges-stdin"
                        | "--write-sector"
                        | "--make-bad-sector"
                        | "--dco-restore"
                )
            }) =>
        {
            let target = operands(c)
                .iter()
                .map(|w| w.text.clone())
                .find(|t| t.starts_with("/dev/"))
                .unwrap_or_else(|| "a disk".into());
            ctx.hit(
                RuleId::DiskOverwrite,
                i,
                format!("`hdparm` erases or overwrites {target}"),
            );
        }
        "history"
            if c.args()
                .iter()
                .any(|a| matches!(a.text.as_str(), "-c" | "-d" | "-cw" | "-wc")) =>
        {
            ctx.hit(RuleId::AntiHistoryTamper, i, "clears the shell history");
        }
        "set" => {
            let args: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
            if args.windows(2).any(|w| w[0] == "+o" && w[1] == "history") {
                ctx.hit(RuleId::AntiHistoryTamper, i, "turns shell history off");
            }
        }
        "unset"
            if c.args()
                .iter()
                .any(|a| matches!(a.text.as_str(), "HISTFILE" | "HISTSIZE" | "HISTFILESIZE")) =>
        {
            ctx.hit(RuleId::AntiHistoryTamper, i, "unsets the history file");
        }
        "env"
            if c.args().windows(2).any(|w| {
                matches!(w[0].text.as_str(), "-u" | "--unset")
                    && matches!(w[1].text.as_str(), "HISTFILE" | "HISTSIZE" | "HISTFILESIZE")
            }) || c.args().iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "-uHISTFILE" | "--unset=HISTFILE" | "--unset=HISTSIZE" | "--unset=HISTFILESIZE"
                )
            }) =>
        {
            ctx.hit(
                RuleId::AntiHistoryTamper,
                i,
                "runs a command with the history file unset",
            );
        }
        "export" | "declare" | "typeset" | "local" | "readonly" | "env" => {
            check_history_assignment(ctx, i, true)
        }
        "shopt" => {
            // `shopt -u histappend`; `shopt -u -o history` (`-ou`), which
            // is `set +o history`.
            let flags: String = c
                .args()
                .iter()
                .filter_map(|a| a.text.strip_prefix('-'))
                .collect();
            let named = |n: &str| c.args().iter().any(|a| a.text == n);
            if flags.contains('u') && named("histappend") {
                ctx.hit(
                    RuleId::AntiHistoryTamper,
                    i,
                    "stops appending to the history file",
                );
            } else if flags.contains('u') && flags.contains('o') && named("history") {
                ctx.hit(RuleId::AntiHistoryTamper, i, "turns shell history off");
            }
        }
        // zsh's `fc -p [FILE]`: a new history list, saved to FILE (or
        // nowhere) instead of the history file.
        "fc" if c.args().iter().any(|a| {
            a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('p')
        }) =>
        {
            ctx.hit(
                RuleId::AntiHistoryTamper,
                i,
                "starts a new history list that is not saved to the history file",
            );
        }
        // `printf -v HISTFILE /dev/null`, `read HISTFILE <<< /dev/null`:
        // the variable assigned by a builtin instead of `=`.
        "printf" | "read" | "mapfile" | "readarray" => {
            if let Some(var) = builtin_assigned_vars(c)
                .into_iter()
                .find(|(n, v)| is_history_var_tamper(n, v.as_deref().unwrap_or("")))
            {
                ctx.hit(
                    RuleId::AntiHistoryTamper,
                    i,
                    format!(
                        "`{name}` assigns {}, redirecting or shrinking the shell history",
                        var.0
                    ),
                );
            }
        }
        "kill" | "pkill" | "killall" => {
            let c = &ctx.commands()[i];
            let mut named: Vec<String> = operands(c).iter().map(|w| w.text.clone()).collect();
            for w in c.args() {
                for &f in &w.feeds {
                    named.extend(ctx.commands()[f].args().iter().map(|a| a.text.clone()));
                }
            }
            if let Some(target) = named.iter().find(|n| super::tools::is_audit_service(n)) {
                ctx.hit(RuleId::AntiAuditDisable, i, format!("kills {target}"));
            }
        }
        "auditctl" => {
            let args: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
            if args.windows(2).any(|w| w[0] == "-e" && w[1] == "0") || args.contains(&"-D") {
                ctx.hit(
                    RuleId::AntiAuditDisable,
                    i,
                    "turns kernel auditing off or deletes its rules",
                );
            }
        }
        "journalctl"
            if c.args().iter().any(|a| {
                a.text.starts_with("--vacuum") || a.text == "--rotate" && c.args().len() == 1
            }) =>
        {
            ctx.hit(RuleId::AntiAuditDisable, i, "deletes the system journal");
        }
        _ => {}
    }
    check_assignments(ctx, i);
    check_writes(ctx, i);
}

/// `HISTFILE=/dev/null`, `HISTSIZE=0` before or as a command.
fn check_assignments(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    if c.assignments
        .iter()
        .any(|a| is_history_var_tamper(&a.name, &a.value.text))
    {
        ctx.hit(
            RuleId::AntiHistoryTamper,
            i,
            "redirects or shrinks the shell history",
        );
    }
}

fn check_history_assignment(ctx: &mut Ctx, i: usize, _declared: bool) {
    let c = &ctx.commands()[i];
    let tampered = c.args().iter().any(|a| {
        a.text
            .split_once('=')
            .is_some_and(|(n, v)| is_history_var_tamper(n, v))
    });
    if tampered {
        ctx.hit(
            RuleId::AntiHistoryTamper,
            i,
            "redirects or shrinks the shell history",
        );
    }
}

/// The variables `printf -v VAR FORMAT`, `read [-r] VAR...` and `mapfile
/// VAR` assign, with the value when the line gives it (`printf`'s format).
fn builtin_assigned_vars(c: &Command) -> Vec<(String, Option<String>)> {
    let args: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
    match c.program() {
        // `printf -v VAR FORMAT ARG`: a format with a `%` takes its value
        // from the argument (`printf -v HISTSIZE %d 0`).
        Some("printf") => args
            .iter()
            .position(|a| *a == "-v")
            .and_then(|k| {
                let format = args.get(k + 2);
                let value = match format {
                    Some(f) if f.contains('%') => args.get(k + 3).or(Some(f)),
                    other => other,
                };
                args.get(k + 1).map(|v| (v, value))
            })
            .map(|(v, value)| vec![(v.to_string(), value.map(|s| s.to_string()))])
            .unwrap_or_default(),
        Some("read" | "mapfile" | "readarray") => {
            // Options that take a value: read's `-a -d -i -n -N -p -t -u`,
            // mapfile's `-d -n -O -s -t -u -C -c`.
            let mut out = Vec::new();
            let mut skip = false;
            for a in &args {
                if skip {
                    skip = false;
                } else if let Some(f) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
                    skip = f.len() == 1 && "adinNptuOsCc".contains(f);
                } else {
                    out.push((a.to_string(), None));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

fn is_history_var_tamper(name: &str, value: &str) -> bool {
    match name {
        "HISTFILE" => true,
        "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST" => value.trim() == "0" || value.is_empty(),
        // A pattern that matches every command keeps none of them.
        "HISTIGNORE" => value.split(':').any(|p| p.trim() == "*"),
        _ => false,
    }
}

fn is_recursive(c: &Command) -> bool {
    has_flag(c, Some('r'), &["recursive"]) || has_flag(c, Some('R'), &[])
}

/// `rsync -a --delete EMPTY/ ~/`: the destination is made like the source,
/// so whatever it holds that the source does not is deleted.
fn check_mirror_delete(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    if !matches!(c.program(), Some("rsync"))
        || !c.args().iter().any(|a| a.text.starts_with("--delete"))
    {
        return;
    }
    let ops = operands(c);
    let Some(dest) = ops.last().filter(|_| ops.len() >= 2) else {
        return;
    };
    let p = NormPath::new(&dest.text);
    if p.is_home() || p.is_root() || is_root_like(&dest.text) {
        ctx.hit(
            RuleId::FsRmRecursiveRoot,
            i,
            format!(
                "`rsync --delete` deletes what {} holds that the source does not",
                dest.text
            ),
        );
    }
}

fn check_remove(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let recursive = is_recursive(c) || c.program() == Some("rmdir");
    let no_preserve = c.args().iter().any(|a| a.text == "--no-preserve-root");
    // `find / -exec rm -f {} +` deletes everything under `/`, recursive or not.
    let roots = finder_roots(ctx, i);
    let skips_roots = {
        let finds = super::finders(ctx, i);
        !finds.is_empty()
            && finds
                .iter()
                .all(|&f| super::find_skips_roots(&ctx.commands()[f]))
    };
    let mut temp_emptied: Vec<String> = Vec::new();
    let placeholders = placeholder_values(ctx, i);
    let cwd = cwd_before(ctx, i);
    let mut targets: Vec<(String, bool)> = Vec::new();
    let mut every_file_under: Vec<String> = Vec::new();
    for op in operands(c) {
        if op.text.contains("{}") || (op.dynamic && c.via.last().is_some_and(|v| v == "xargs")) {
            // `find /tmp -maxdepth 1 -name pytest-of-dev -exec rm -rf {} +`:
            // a name found in the scratch space, not the scratch space.
            let narrowed_in_temp = |r: &String| {
                !placeholders.is_empty()
                    && places::area_with(r, ctx.policy) == Some(aq_knowledge::areas::Area::Temp)
            };
            if let Some(root) = roots
                .iter()
                .find(|r| is_root_like(r) && !narrowed_in_temp(r))
            {
                // `find /tmp -mindepth 1 -exec rm -rf {} +`: what is in the
                // scratch space, as `rm -rf /tmp/*`, not the directory.
                let inside = format!("{}/*", root.trim_end_matches('/'));
                if paths::is_everything_in_temp(&inside) && skips_roots {
                    temp_emptied.push(root.clone());
                    continue;
                }
                targets.push((format!("everything find matches under {root}"), true));
                continue;
            }
            if !placeholders.is_empty() {
                targets.extend(placeholders.iter().map(|p| (p.clone(), false)));
                continue;
            }
            // `find src -type f -exec rm {} +`: every file under the
            // starting points, as `rm -r src` would (but build output).
            if finder_lists_everything(ctx, i) {
                every_file_under.extend(roots.iter().cloned());
                continue;
            }
        }
        // `cd / && rm -rf *`: a relative path under an earlier `cd`.
        let t = match &cwd {
            Some(dir)
                if !op.text.starts_with('/')
                    && !op.text.starts_with('~')
                    && !op.text.starts_with('$') =>
            {
                format!("{}/{}", dir.trim_end_matches('/'), op.text)
            }
            _ => op.text.clone(),
        };
        // `rm -rf "$PWD/target"`: `./target`.
        if let Some(relative) = super::from_current_dir(ctx, i, op) {
            targets.push((relative, false));
            continue;
        }
        let known_cwd_is_root = cwd.as_deref().is_some_and(is_root_like);
        if op.dynamic && !known_cwd_is_root {
            targets.push((op.text.clone(), false));
            continue;
        }
        targets.push((t, false));
    }
    temp_emptied.dedup();
    for root in temp_emptied {
        ctx.hit(
            RuleId::FsWriteSystem,
            i,
            format!(
                "deletes everything in {root}: every program's temporary files, not only this one's"
            ),
        );
    }
    every_file_under.sort();
    every_file_under.dedup();
    for root in every_file_under {
        let outside_or_build = paths::is_build_output(&root)
            || places::area_with(&root, ctx.policy).is_some_and(|a| a.writable());
        if !outside_or_build {
            ctx.hit(
                RuleId::FsRmRecursive,
                i,
                format!("deletes every file `find {root}` lists, as `rm -r {root}` would"),
            );
        }
    }
    let c = &ctx.commands()[i];
    let ops_dynamic: Vec<bool> = operands(c).iter().map(|w| w.dynamic).collect();
    for (k, (t, forced_root)) in targets.into_iter().enumerate() {
        let t = t.as_str();
        if forced_root {
            ctx.hit(RuleId::FsRmRecursiveRoot, i, format!("deletes {t}"));
            continue;
        }
        if paths::is_history_file(t) {
            ctx.hit(
                RuleId::AntiHistoryTamper,
                i,
                format!("deletes the history file {t}"),
            );
            continue;
        }
        if let Some(what) = paths::agent_transcripts(t) {
            ctx.hit(RuleId::AntiHistoryTamper, i, format!("deletes {t}, {what}"));
            continue;
        }
        if paths::is_system_log(t) {
            ctx.hit(
                RuleId::AntiAuditDisable,
                i,
                format!("deletes the system log {t}"),
            );
            continue;
        }
        if !recursive {
            if paths::is_block_device(t) && c.program() == Some("shred") {
                ctx.hit(RuleId::DiskOverwrite, i, format!("shreds the device {t}"));
            }
            continue;
        }
        let dynamic =
            ops_dynamic.get(k).copied().unwrap_or(false) && (t.contains('$') || t.contains("{}"));
        if !t.contains("..") && aq_knowledge::areas::in_system_cache(t) && !no_preserve {
            ctx.hit(
                RuleId::FsWriteSystem,
                i,
                format!("deletes {t}, a package cache of the system (the package manager fetches it again)"),
            );
        } else if paths::is_everything_in_temp(t) && !no_preserve {
            ctx.hit(
                RuleId::FsWriteSystem,
                i,
                format!("deletes {t}: every program's temporary files, not only this one's"),
            );
        } else if is_root_like(t) || no_preserve {
            ctx.hit(
                RuleId::FsRmRecursiveRoot,
                i,
                format!("recursively deletes {t}"),
            );
        } else if let Some(dir) = home_root_dir(t) {
            ctx.hit(
                RuleId::FsRmRecursiveRoot,
                i,
                format!("recursively deletes {t}, {dir}"),
            );
        } else if let Some(area) = places::area_with(t, ctx.policy).filter(|a| a.is_system()) {
            ctx.hit(
                RuleId::FsRmRecursiveRoot,
                i,
                format!("recursively deletes {t}, a directory of {}", area.title()),
            );
        } else if in_scratch(t, ctx.policy) {
            // One's own directory in the scratch space (`/tmp/pytest-of-$USER`,
            // `"${TMPDIR:-/tmp}/ccache-app"`): scratch work.
        } else if places::area_with(t, ctx.policy) == Some(aq_knowledge::areas::Area::BuildCache) {
            // A build cache is regenerable: the next build fills it again
            // (`rm -rf ~/.cache/pip`, `~/.gradle/caches/…`).
        } else if dynamic {
            if !from_build_output_find(ctx, i) {
                ctx.hit(
                    RuleId::FsRmRecursive,
                    i,
                    format!("recursively deletes `{t}`, which is only known at run time"),
                );
            }
        } else if !paths::is_build_output(t)
            // `rm -rf /home/dev/src/project/dist`: the workspace's `./dist`.
            && !places::within_workspace(t, ctx.policy).is_some_and(|r| paths::is_build_output(&r))
        {
            ctx.hit(RuleId::FsRmRecursive, i, format!("recursively deletes {t}"));
        }
    }
}

/// `tar xf x.tar -C /`, `unzip x.zip -d ~`: an archive unpacked over the
/// root or the home directory can replace any file there (a startup file,
/// `/etc/passwd`) with whatever it holds.
fn check_extract_over(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(name) = c.program() else { return };
    let args: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    let value_of = |flags: &[&str]| -> Option<String> {
        args.windows(2)
            .find(|w| flags.contains(&w[0]))
            .map(|w| w[1].to_string())
            .or_else(|| {
                args.iter().find_map(|a| {
                    flags
                        .iter()
                        .filter(|f| f.starts_with("--"))
                        .find_map(|f| super::option_value(a, f).map(str::to_string))
                })
            })
    };
    let dir = match name {
        "tar" | "bsdtar" | "gtar" => {
            let cluster = |a: &str| {
                !a.starts_with("--")
                    && !a.trim_start_matches('-').is_empty()
                    && a.trim_start_matches('-')
                        .chars()
                        .all(|ch| ch.is_ascii_alphabetic())
            };
            let mode = args.first().copied().unwrap_or("");
            let extracting = args.iter().any(|a| matches!(*a, "--extract" | "--get"))
                || (cluster(mode) && mode.contains('x'))
                || args
                    .iter()
                    .any(|a| a.starts_with('-') && cluster(a) && a.contains('x'));
            if !extracting {
                return;
            }
            value_of(&["-C", "--directory"])
        }
        "unzip" => value_of(&["-d"]),
        "7z" | "7za" if args.first() == Some(&"x") => args
            .iter()
            .find_map(|a| a.strip_prefix("-o").map(str::to_string)),
        _ => return,
    };
    let Some(dir) = dir else { return };
    let p = NormPath::new(&dir);
    if p.is_root() {
        ctx.hit(
            RuleId::FsDestroySystem,
            i,
            format!("`{name}` unpacks an archive over /, where it can replace any system file"),
        );
    } else if p.is_home() {
        ctx.hit(
            RuleId::PersistShellRc,
            i,
            format!("`{name}` unpacks an archive over the home directory, where it can replace any startup or settings file (~/.bashrc, ~/.profile)"),
        );
    } else if let Some(place) = places::holds_place_with(&dir, &[PlaceKind::AgentHook], ctx.policy)
        .or_else(|| places::place_with(&dir, ctx.policy).filter(|m| m.kind == PlaceKind::AqOwn))
    {
        // `tar -C .claude -xf x.tar`: whatever the archive holds lands on
        // the agent's settings, unread.
        ctx.hit(
            place_rule(place.kind),
            i,
            format!(
                "`{name}` unpacks an archive into {dir}, over {} {}",
                place_noun(place.kind),
                place.pattern
            ),
        );
    } else {
        // Anywhere else outside the workspace: what it holds is written
        // there (`tar -xzf r.tgz -C /srv/app/`, `unzip x.zip -d ~/.config`).
        check_area(
            ctx,
            i,
            &dir,
            &format!("`{name}` unpacks an archive into"),
            None,
        );
    }
}

/// A directory right under the home directory that holds the user's keys
/// or all of their settings (`~/.ssh`, `~/.gnupg`, `~/.aws`, `~/.config`,
/// `~/.local`): deleting it is as bad as deleting the home directory.
fn home_root_dir(t: &str) -> Option<&'static str> {
    let p = NormPath::new(t);
    if !p.in_home || p.parts.len() != 1 {
        return None;
    }
    match p.parts[0].as_str() {
        ".config" => Some("all of the user's settings"),
        // `cd ~ && rm -rf .[^.]*`: every settings directory at once.
        glob if glob.starts_with('.') && paths::has_glob(glob) => {
            Some("every dot file and directory of the user")
        }
        ".local" => Some("the user's programs and data"),
        name if name.starts_with('.') => {
            paths::secret_dir(t).map(|_| "a directory of the user's credentials")
        }
        _ => None,
    }
}

/// A directory of its own in the scratch space: under `/tmp` (or
/// `$TMPDIR`), below the scratch directory itself, with a name that starts
/// with a literal (`pytest-of-$USER`, not `$X` or `*`), and no `..`.
fn in_scratch(t: &str, policy: &crate::Policy) -> bool {
    if t.contains("..") || places::area_with(t, policy) != Some(aq_knowledge::areas::Area::Temp) {
        return false;
    }
    let rest = match t.strip_prefix("${TMPDIR") {
        Some(r) => r.split_once('}').map(|(_, r)| r).unwrap_or(""),
        None => t.strip_prefix("$TMPDIR").unwrap_or(t),
    };
    let p = NormPath::new(rest);
    let below_root = aq_knowledge::areas::TEMP
        .iter()
        .map(|row| row.trim_matches('/').split('/').count())
        .filter(|&n| {
            t.starts_with('$')
                || p.parts.len() > n
                    && aq_knowledge::areas::TEMP.iter().any(|row| {
                        row.trim_matches('/')
                            .split('/')
                            .eq(p.parts[..n].iter().map(String::as_str))
                    })
        })
        .map(|n| if t.starts_with('$') { 0 } else { n })
        .max();
    let Some(n) = below_root else { return false };
    p.parts.get(n).is_some_and(|first| {
        first
            .chars()
            .next()
            .is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' || ch == '.')
            && !first.starts_with("..")
    })
}

/// `/`, `~`, `$HOME`, `..`, system directories, `.git`, and "everything in" them.
fn is_root_like(t: &str) -> bool {
    let p = NormPath::new(t);
    paths::is_system_dir(t)
        || (paths::is_everything_in_system_dir(t) && !paths::is_everything_in_temp(t))
        || matches!(t.trim_end_matches('/'), ".." | "../*" | "../.*" | "../..")
        || p.parts.first().is_some_and(|f| f == "..")
            && p.parts.iter().all(|c| c == ".." || c == "*")
        || p.name() == ".git"
        || (p.parts.is_empty() && !p.absolute && !p.in_home && t.starts_with(".."))
}

/// Whether `i` is run by `find -exec` / `xargs` over a build-output name
/// search (`find . -name __pycache__ -exec rm -rf {} +`).
fn from_build_output_find(ctx: &Ctx, i: usize) -> bool {
    let commands = ctx.commands();
    let parent = commands.iter().position(|c| c.runs == Some(i));
    let finder = match parent {
        Some(p) if commands[p].program() == Some("find") => Some(p),
        Some(p) if commands[p].program() == Some("xargs") => ctx
            .upstream(p)
            .into_iter()
            .find(|&u| commands[u].program() == Some("find")),
        _ => None,
    };
    let Some(f) = finder else { return false };
    let names = flag_values_text(&commands[f], &["-name", "-iname", "-path"], &[]);
    !names.is_empty()
        && names
            .iter()
            .all(|n| paths::is_build_output(n.trim_matches('*').trim_start_matches("./")))
}

/// Whether the `find` that hands command `i` its files (`-exec CMD {}`,
/// or through `xargs`) lists every file under its starting points: no
/// test of the name or path narrows it (`-type f` and the times do not).
fn finder_lists_everything(ctx: &Ctx, i: usize) -> bool {
    let commands = ctx.commands();
    let Some(parent) = commands.iter().position(|c| c.runs == Some(i)) else {
        return false;
    };
    let finds: Vec<usize> = match commands[parent].program() {
        Some("find") => vec![parent],
        Some("xargs") => ctx
            .upstream(parent)
            .into_iter()
            .filter(|&u| commands[u].program() == Some("find"))
            .collect(),
        _ => Vec::new(),
    };
    !finds.is_empty()
        && finds.iter().all(|&f| {
            !commands[f].args().iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "-name"
                        | "-iname"
                        | "-path"
                        | "-ipath"
                        | "-wholename"
                        | "-iwholename"
                        | "-regex"
                        | "-iregex"
                        | "-lname"
                        | "-ilname"
                        | "-samefile"
                        | "-inum"
                        | "-empty"
                )
            })
        })
}

fn check_find_delete(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    if !c.args().iter().any(|a| a.text == "-delete") {
        return;
    }
    let roots = find_roots(c);
    // `find /tmp -name 'tmp*' -mtime +3 -delete`: old scratch files, not
    // the scratch directory; still everybody's scratch space, so it asks.
    let filtered = c.args().iter().any(|a| {
        matches!(
            a.text.as_str(),
            "-name"
                | "-iname"
                | "-path"
                | "-ipath"
                | "-regex"
                | "-mtime"
                | "-mmin"
                | "-newer"
                | "-user"
                | "-type"
        )
    });
    if filtered
        && !roots.is_empty()
        && roots
            .iter()
            .all(|r| places::area_with(r, ctx.policy) == Some(aq_knowledge::areas::Area::Temp))
    {
        ctx.hit(
            RuleId::FsRmRecursive,
            i,
            format!(
                "find -delete removes what matches in the scratch space {}",
                roots.join(" ")
            ),
        );
        return;
    }
    // `find /tmp -mindepth 1 -delete`: what is in the scratch space, as
    // `rm -rf /tmp/*`, not the directory itself.
    let skips_roots = super::find_skips_roots(c);
    let inside = |r: &String| format!("{}/*", r.trim_end_matches('/'));
    if skips_roots
        && roots
            .iter()
            .any(|r| paths::is_everything_in_temp(&inside(r)))
        && roots
            .iter()
            .all(|r| !is_root_like(r) || paths::is_everything_in_temp(&inside(r)))
    {
        ctx.hit(
            RuleId::FsWriteSystem,
            i,
            format!(
                "deletes everything in {}: every program's temporary files, not only this one's",
                roots.join(" ")
            ),
        );
        return;
    }
    if roots.iter().any(|r| is_root_like(r)) {
        ctx.hit(
            RuleId::FsRmRecursiveRoot,
            i,
            format!("deletes everything find matches under {}", roots.join(" ")),
        );
        return;
    }
    // What it deletes, by name under each starting point (or all of it):
    // an agent's transcripts, the shell history, the system logs.
    let names = flag_values_text(c, &["-name", "-iname", "-path"], &[]);
    let found: Vec<String> = if names.is_empty() {
        roots.clone()
    } else {
        roots
            .iter()
            .flat_map(|r| {
                names.iter().map(move |n| match n.strip_prefix(r.as_str()) {
                    // `-path '/var/log/*'`: the path whole.
                    Some(_) => n.clone(),
                    None => format!("{}/{}", r.trim_end_matches('/'), n.trim_start_matches("./")),
                })
            })
            .collect()
    };
    for t in &found {
        if let Some(what) = paths::agent_transcripts(t) {
            ctx.hit(RuleId::AntiHistoryTamper, i, format!("deletes {t}, {what}"));
            return;
        }
        if paths::is_history_file(t) {
            ctx.hit(
                RuleId::AntiHistoryTamper,
                i,
                format!("deletes the history file {t}"),
            );
            return;
        }
        if paths::is_system_log(t) {
            ctx.hit(
                RuleId::AntiAuditDisable,
                i,
                format!("deletes the system log {t}"),
            );
            return;
        }
    }
    // `find /tmp/build-cache -mindepth 1 -delete`: a scratch directory of
    // its own, a build cache or build output, as `rm -rf
    // /tmp/build-cache/*`, `rm -rf build/*`.
    if !filtered
        && roots.iter().all(|r| {
            let t = if skips_roots { inside(r) } else { r.clone() };
            in_scratch(&t, ctx.policy)
                || paths::is_build_output(&t)
                || places::area_with(&t, ctx.policy) == Some(aq_knowledge::areas::Area::BuildCache)
        })
    {
        return;
    }
    let names = flag_values_text(c, &["-name", "-iname"], &[]);
    let harmless = !names.is_empty()
        && names
            .iter()
            .all(|n| paths::is_build_output(n.trim_start_matches("*")) || n.ends_with(".pyc"));
    if !harmless {
        ctx.hit(RuleId::FsRmRecursive, i, "find -delete removes every match");
    }
}

fn check_permissions(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let name = c.program().unwrap_or_default();
    // `find / -exec chmod 777 {} +`: every path under find's starting
    // points, which is as recursive as `chmod -R`.
    if operands(c).iter().any(|o| o.text.contains("{}"))
        && super::placeholder_values(ctx, i).is_empty()
        && let Some(root) = super::finder_roots(ctx, i)
            .into_iter()
            .find(|r| is_root_like(r))
    {
        ctx.hit(
            RuleId::FsChmodRecursiveRoot,
            i,
            format!("changes every path under {root}, as `find` lists them"),
        );
        return;
    }
    if (name == "chmod" && has_flag(c, Some('R'), &["recursive"])
        || name != "chmod" && is_recursive(c))
        && let Some(t) = operands(c).iter().find(|o| is_root_like(&o.text))
    {
        ctx.hit(
            RuleId::FsChmodRecursiveRoot,
            i,
            format!("recursively changes {}", t.text),
        );
        return;
    }
    // The mode is the first word that is not one of chmod's options: `-x`
    // and `-rwx` are modes.
    let words: Vec<&aq_shell::Word> = c
        .args()
        .iter()
        .filter(|a| {
            let option = a.text.starts_with("--")
                || a.text.starts_with('-')
                    && a.text.len() > 1
                    && a.text[1..].chars().all(|ch| "RvcfhHLP".contains(ch));
            !option
        })
        .collect();
    if name == "chmod"
        && let [mode, files @ ..] = words.as_slice()
    {
        // `chmod 000 /etc`: nobody, root's services included, may read
        // the system's own files any more.
        if chmod_mode_takes_all_access(&mode.text)
            && let Some(t) = files.iter().find(|f| {
                let p = NormPath::new(&f.text);
                p.absolute
                    && (aq_knowledge::areas::is_system_file(&p.parts)
                        || paths::is_system_dir(&f.text) && !p.is_root())
                    && places::area_with(&f.text, ctx.policy).is_some_and(|a| a.is_system())
            })
        {
            ctx.hit(
                RuleId::FsDestroySystem,
                i,
                format!(
                    "`chmod {}` takes every permission away from {}, a part of the system",
                    mode.text, t.text
                ),
            );
            return;
        }
        // `chmod -x .claude/hooks/guard.sh`: a hook script that cannot run
        // any more is a hook taken away.
        if chmod_mode_drops_exec(&mode.text)
            && let Some(t) = files
                .iter()
                .find(|f| aq_knowledge::tool_config::in_agent_hook_dir(&f.text))
        {
            ctx.hit(
                RuleId::GuardAgentHooks,
                i,
                format!(
                    "`chmod {}` stops {}, an agent's hook script, from running",
                    mode.text, t.text
                ),
            );
            return;
        }
    }
    // `chmod 000 ~/.bash_history`, `chattr +i ~/.zsh_history`: a history
    // file the shell may not write any more keeps nothing new.
    let freezes = match (name, words.as_slice()) {
        ("chmod", [mode, ..]) => chmod_mode_drops_owner_write(&mode.text),
        ("chattr", _) => c
            .args()
            .iter()
            .any(|a| a.text.starts_with('+') && a.text.contains('i')),
        _ => false,
    };
    if freezes
        && let Some(t) = words
            .iter()
            .skip(usize::from(name == "chmod"))
            .find(|f| paths::is_history_file(&f.text))
    {
        ctx.hit(
            RuleId::AntiHistoryTamper,
            i,
            format!(
                "`{name}` stops the shell from writing {}, its history file",
                t.text
            ),
        );
        return;
    }
    if name == "chattr"
        && !c.args().iter().any(|a| {
            a.text.starts_with('+')
                || a.text.starts_with('-')
                    && a.text.len() > 1
                    && !a.text[1..].starts_with(char::is_alphabetic)
        })
    {
        return;
    }
    ctx.hit(RuleId::FsPermissions, i, format!("`{}`", c.display()));
}

/// Whether a `chmod` mode leaves nobody any permission: `000`, `0`,
/// `a=`, `ugo-rwx`.
fn chmod_mode_takes_all_access(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|ch| ch.is_ascii_digit()) {
        return mode.chars().all(|ch| ch == '0');
    }
    mode.split(',').all(|clause| {
        let (who, rest) = clause.split_at(clause.find(['=', '-', '+']).unwrap_or(clause.len()));
        let everyone =
            who.is_empty() || who.contains('a') || ["ugo", "ogu", "uog", "gou"].contains(&who);
        everyone
            && (rest == "="
                || rest
                    .strip_prefix('-')
                    .is_some_and(|p| p.contains('r') && p.contains('w') && p.contains('x')))
    })
}

/// Whether a `chmod` mode takes the owner's permission to write the file
/// away: `000`, `444`, `a-w`, `u=r`.
fn chmod_mode_drops_owner_write(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|ch| ch.is_ascii_digit()) {
        let digits: Vec<u32> = mode.chars().filter_map(|ch| ch.to_digit(8)).collect();
        let owner = digits.len().checked_sub(3).map_or(0, |k| digits[k]);
        return owner & 2 == 0;
    }
    mode.split(',').any(|clause| {
        let Some(at) = clause.find(['=', '-']) else {
            return false;
        };
        let (who, rest) = clause.split_at(at);
        let owner = who.is_empty() || who.contains('a') || who.contains('u');
        owner
            && match rest.split_at(1) {
                ("-", perms) => perms.contains('w'),
                ("=", perms) => !perms.contains('w'),
                _ => false,
            }
    })
}

/// Whether a `chmod` mode takes the owner's permission to run the file
/// away: `-x`, `a-x`, `u=rw`, `644`, `000`.
fn chmod_mode_drops_exec(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|ch| ch.is_ascii_digit()) {
        // The owner's digit is the third from the end.
        let digits: Vec<u32> = mode.chars().filter_map(|ch| ch.to_digit(8)).collect();
        let owner = digits.len().checked_sub(3).map_or(0, |k| digits[k]);
        return owner & 1 == 0;
    }
    mode.split(',').any(|clause| {
        let Some(at) = clause.find(['=', '-']) else {
            return false;
        };
        let (who, rest) = clause.split_at(at);
        let owner = who.is_empty() || who.contains('a') || who.contains('u');
        owner
            && match rest.split_at(1) {
                ("-", perms) => perms.contains('x'),
                ("=", perms) => !perms.contains('x'),
                _ => false,
            }
    })
}

/// `of=...` / `if=...` operands of dd.
pub(crate) fn dd_operand(c: &Command, key: &str) -> Vec<String> {
    c.args()
        .iter()
        .filter_map(|a| super::option_value(&a.text, key).map(str::to_string))
        .collect()
}

/// Paths a command writes: redirections, `tee`, `cp`/`mv`/`install`/`ln`
/// destinations, `dd of=`, `sed -i` files, `truncate`.
pub(crate) fn written_paths(
    c: &Command,
    model: Option<&aq_knowledge::programs::Program>,
) -> Vec<String> {
    written_with_modes(c, model)
        .into_iter()
        .map(|(p, _)| p)
        .collect()
}

/// How a command writes one of the paths it writes: what the file holds
/// afterwards, as far as the line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteMode {
    /// What it held is replaced by what the line writes (`>`, `tee`, `cp`,
    /// `mv` or `ln` onto it, `dd of=`).
    Replace,
    /// Emptied, with nothing written (`: > F`, `> F`, `truncate -s 0`, `cp
    /// /dev/null F`).
    Empty,
    /// Added to at its end (`>>`, `tee -a`).
    Append,
    /// Changed where it is (`sed -i`, `patch`, an editor, a new size).
    Edit,
    /// A file put into a directory under its own name (`cp x DIR/`, the
    /// `DIR/x` of `cp x DIR`): a new file there, unless one had that name.
    Into,
    /// `touch`: a new time, or a new empty file.
    Touch,
}

/// [`written_paths`], each with how it is written.
pub(crate) fn written_with_modes(
    c: &Command,
    model: Option<&aq_knowledge::programs::Program>,
) -> Vec<(String, WriteMode)> {
    // `: > F`, `> F`, `true > F`, `cat /dev/null > F`: nothing is written.
    let writes_nothing = match c.program() {
        None | Some(":" | "true") => true,
        Some("cat") => operands(c).iter().all(|w| w.text == "/dev/null") && !operands(c).is_empty(),
        _ => false,
    };
    let mut out: Vec<(String, WriteMode)> = c
        .redirects
        .iter()
        .filter(|r| r.kind.writes())
        .map(|r| {
            let mode = match r.kind {
                aq_shell::RedirectKind::Append => WriteMode::Append,
                aq_shell::RedirectKind::Write if writes_nothing => WriteMode::Empty,
                aq_shell::RedirectKind::Write => WriteMode::Replace,
                _ => WriteMode::Edit,
            };
            (r.target.text.clone(), mode)
        })
        .collect();
    let ops: Vec<&str> = operands(c).iter().map(|w| w.text.as_str()).collect();
    match c.program().unwrap_or("") {
        "tee" => {
            let mode = if has_flag(c, Some('a'), &["append"]) {
                WriteMode::Append
            } else {
                WriteMode::Replace
            };
            out.extend(ops.iter().map(|s| (s.to_string(), mode)));
        }
        "touch" => out.extend(ops.iter().map(|s| (s.to_string(), WriteMode::Touch))),
        "truncate" => {
            let sizes = flag_values_text(c, &["-s"], &["size"]);
            let mode = if !sizes.is_empty()
                && sizes
                    .iter()
                    .all(|v| v.trim_end_matches(['K', 'M', 'G', 'k', 'B']) == "0")
            {
                WriteMode::Empty
            } else {
                WriteMode::Edit
            };
            out.extend(
                ops.iter()
                    .filter(|s| !s.starts_with("-s") && !sizes.iter().any(|v| v == *s))
                    .map(|s| (s.to_string(), mode)),
            );
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "ditto" => {
            let base = |src: &str| -> String {
                src.rsplit('/')
                    .find(|s| !s.is_empty())
                    .unwrap_or(src)
                    .to_string()
            };
            // Into a directory, each source is written under its own name:
            // `cp x.service ~/.config/systemd/user/`, `mv settings.json
            // ~/.claude` (a directory too when written without the slash),
            // `cp -t ~/.claude settings.json`.
            let target = flag_values_text(c, &["-t"], &["target-directory"]);
            if !target.is_empty() {
                for dir in &target {
                    for src in ops.iter().filter(|o| !target.iter().any(|t| t == *o)) {
                        out.push((
                            format!("{}/{}", dir.trim_end_matches('/'), base(src)),
                            WriteMode::Into,
                        ));
                    }
                }
                out.extend(target.into_iter().map(|t| (t, WriteMode::Into)));
            } else if ops.len() >= 2 {
                let dest = ops[ops.len() - 1];
                for src in &ops[..ops.len() - 1] {
                    out.push((
                        format!("{}/{}", dest.trim_end_matches('/'), base(src)),
                        WriteMode::Into,
                    ));
                }
                // Onto the destination itself: a file replaced, emptied when
                // the source is `/dev/null`; a directory when it says so.
                // `cp -r x DIR`: a tree lands in (or as) a directory; it
                // replaces no file of that name.
                let tree = c.program() == Some("cp")
                    && (is_recursive(c) || has_flag(c, Some('a'), &["archive"]));
                let mode = if dest.ends_with('/') || ops.len() > 2 || tree {
                    WriteMode::Into
                } else if ops[0] == "/dev/null" {
                    WriteMode::Empty
                } else {
                    WriteMode::Replace
                };
                out.push((dest.to_string(), mode));
            } else if c.program() == Some("ln") && ops.len() == 1 {
                // `ln -s ~/x` makes `./x`.
                out.push((base(ops[0]), WriteMode::Replace));
                out.push((ops[0].to_string(), WriteMode::Replace));
            }
        }
        // `gawk -i inplace PROGRAM FILE...` rewrites the files.
        "gawk" | "awk"
            if c.args()
                .windows(2)
                .any(|w| w[0].text == "-i" && w[1].text == "inplace")
                || c.args()
                    .iter()
                    .any(|a| matches!(a.text.as_str(), "-iinplace" | "--include=inplace")) =>
        {
            let explicit = c
                .args()
                .iter()
                .any(|a| matches!(a.text.as_str(), "-f" | "-e" | "--source"));
            out.extend(
                ops.iter()
                    .filter(|o| **o != "inplace")
                    .skip(usize::from(!explicit))
                    .map(|s| (s.to_string(), WriteMode::Edit)),
            );
        }
        "dd" => out.extend(
            dd_operand(c, "of")
                .into_iter()
                .map(|p| (p, WriteMode::Replace)),
        ),
        "sed" | "perl" | "ruby" => {
            if let Some(files) = in_place_files(c) {
                out.extend(files.into_iter().map(|p| (p, WriteMode::Edit)));
            }
        }
        "patch" => out.extend(patch_targets(c).into_iter().map(|p| (p, WriteMode::Edit))),
        _ => {}
    }
    // Every file an editor opens, it may save (`vim -es -c wq F`, `ed F`).
    if model.is_some_and(|p| {
        p.caps(aq_knowledge::programs::Does::Write)
            .any(|cap| cap.via == aq_knowledge::programs::Via::Operands && cap.all_operands)
    }) {
        for p in &ops {
            if !out.iter().any(|(o, _)| o == p) {
                out.push((p.to_string(), WriteMode::Edit));
            }
        }
    }
    // What the capability model says the program writes through an option
    // (`sort -o F`, `find -fprintf F FMT`, `time -o F`).
    if super::programs::names_files(model, aq_knowledge::programs::Does::Write) {
        let texts: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
        for p in super::programs::written_files(model, &texts) {
            if !out.iter().any(|(o, _)| *o == p) {
                out.push((p, WriteMode::Replace));
            }
        }
    }
    out.retain(|(p, _)| {
        !matches!(
            p.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "-" | "/dev/tty"
        ) && !p.starts_with('&')
    });
    out
}

/// The files an in-place edit rewrites: `sed -i[SUFFIX]`, `sed
/// --in-place[=SUFFIX]`, `perl -pi[.bak] -e CODE`, `ruby -i -pe CODE`, the
/// `-i` anywhere in a cluster (`-Ei`, `-pi.bak`); the operands but the
/// script (the first when no `-e`/`-f` gave it). `None` when not in place.
fn in_place_files(c: &Command) -> Option<Vec<String>> {
    // Options whose value is the rest of the cluster or the next word; of
    // those, the ones that give the program's code.
    let (value, code, optional) = match c.program()? {
        "sed" => ("efl", "ef", ""),
        "perl" => ("eE", "eE", "IMmlx0CdDV"),
        "ruby" => ("erICE", "e", "xKTW0lF"),
        _ => return None,
    };
    let args = c.args();
    let mut in_place = false;
    let mut code_given = false;
    let mut ops: Vec<String> = Vec::new();
    let mut k = 0;
    let mut after_dashes = false;
    while k < args.len() {
        let t = args[k].text.as_str();
        k += 1;
        if after_dashes || !t.starts_with('-') || t == "-" {
            ops.push(t.to_string());
            continue;
        }
        if t == "--" {
            after_dashes = true;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            match name {
                "in-place" => in_place = true,
                "expression" | "file" => {
                    code_given = true;
                    k += usize::from(!inline);
                }
                _ => {}
            }
            continue;
        }
        let cluster: Vec<char> = t[1..].chars().collect();
        for (n, ch) in cluster.iter().enumerate() {
            if *ch == 'i' {
                // The rest is the backup suffix.
                in_place = true;
                break;
            }
            if value.contains(*ch) {
                if code.contains(*ch) {
                    code_given = true;
                }
                if n + 1 == cluster.len() {
                    k += 1;
                }
                break;
            }
            if optional.contains(*ch) {
                break;
            }
        }
    }
    if !in_place {
        return None;
    }
    Some(ops.into_iter().skip(usize::from(!code_given)).collect())
}

/// The files `patch` writes: its `ORIGINALFILE` operand (under `-d DIR`),
/// `-o FILE` instead when given, the reject file (`-r FILE`), and when the
/// diff is literal text on its input (a here-document), the files its
/// headers name (`--- a/x`, `+++ b/x`, `*** x`, `Index: x`), as written
/// and with each number of leading components stripped (`-p N`).
fn patch_targets(c: &Command) -> Vec<String> {
    const SHORT_VALUE: &str = "BDdFgioprVYz";
    const LONG_VALUE: &[&str] = &[
        "prefix",
        "ifdef",
        "directory",
        "fuzz",
        "get",
        "input",
        "output",
        "strip",
        "reject-file",
        "version-control",
        "basename-prefix",
        "suffix",
        "quoting-style",
        "reject-format",
    ];
    let args = c.args();
    let mut ops: Vec<&str> = Vec::new();
    let (mut dir, mut output, mut reject) = (None, None, None);
    let mut k = 0;
    let mut after_dashes = false;
    while k < args.len() {
        let t = args[k].text.as_str();
        k += 1;
        if after_dashes || !t.starts_with('-') || t == "-" {
            ops.push(t);
            continue;
        }
        if t == "--" {
            after_dashes = true;
            continue;
        }
        let (opt, val): (String, Option<String>) = if let Some(long) = t.strip_prefix("--") {
            match long.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None if LONG_VALUE.contains(&long) => {
                    k += 1;
                    (long.to_string(), args.get(k - 1).map(|w| w.text.clone()))
                }
                None => (long.to_string(), None),
            }
        } else {
            let cluster = &t[1..];
            match cluster
                .char_indices()
                .find(|(_, ch)| SHORT_VALUE.contains(*ch))
            {
                Some((n, ch)) => {
                    let rest = &cluster[n + ch.len_utf8()..];
                    let v = if rest.is_empty() {
                        k += 1;
                        args.get(k - 1).map(|w| w.text.clone())
                    } else {
                        Some(rest.to_string())
                    };
                    (ch.to_string(), v)
                }
                None => (String::new(), None),
            }
        };
        match opt.as_str() {
            "d" | "directory" => dir = val,
            "o" | "output" => output = val,
            "r" | "reject-file" => reject = val,
            _ => {}
        }
    }
    let in_dir = |f: &str| -> String {
        match &dir {
            Some(d) if !f.starts_with(['/', '~', '$']) => {
                format!("{}/{f}", d.trim_end_matches('/'))
            }
            _ => f.to_string(),
        }
    };
    let mut out: Vec<String> = Vec::new();
    if let Some(o) = &output {
        out.push(in_dir(o));
    } else if let Some(orig) = ops.first() {
        out.push(in_dir(orig));
    } else {
        for s in &c.stdin {
            if let Input::Text(w) = s {
                for name in diff_header_names(&w.text) {
                    let parts: Vec<&str> = name.split('/').collect();
                    for n in 0..parts.len() {
                        let stripped = parts[n..].join("/");
                        if !stripped.is_empty() {
                            out.push(in_dir(&stripped));
                        }
                    }
                }
            }
        }
    }
    if let Some(r) = reject {
        out.push(in_dir(&r));
    }
    out
}

/// The file names a diff's headers give.
fn diff_header_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = ["+++ ", "--- ", "*** ", "Index: "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        else {
            continue;
        };
        let name = rest.split('\t').next().unwrap_or("").trim();
        let name = name.trim_matches('"');
        // `--- 12,14 ----`: a context diff's hunk, not a file.
        if name.is_empty() || name == "/dev/null" || name.starts_with(|c: char| c.is_ascii_digit())
        {
            continue;
        }
        if !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// What a command writes, links, copies a tree into, moves onto or removes,
/// each judged by where it lands, in that order.
fn check_writes(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let name = c.program().unwrap_or("");
    check_new_directories(ctx, i, name);
    let targets = written_targets(ctx, i);
    check_extract_over(ctx, i);
    let removed = removed_paths(ctx, i);
    if targets.is_empty() && removed.is_empty() {
        return;
    }
    let cwd = cwd_for_relative_paths(ctx, i, &targets, &removed);
    let targets: Vec<(String, WriteMode)> = targets
        .into_iter()
        .map(|(t, mode)| (under(cwd.as_deref(), t), mode))
        .collect();
    let removed: Vec<String> = removed
        .into_iter()
        .map(|t| under(cwd.as_deref(), t))
        .collect();
    for (t, mode) in targets {
        _ = check_written(ctx, i, name, &t, mode);
    }
    check_links_to_places(ctx, i, name, cwd.as_deref());
    check_tree_copied_into(ctx, i, cwd.as_deref());
    check_directory_moved_onto(ctx, i, name, cwd.as_deref());
    let verb = if name == "mv" {
        "moves away"
    } else {
        "deletes"
    };
    for t in removed {
        _ = check_removed(ctx, i, verb, &t);
    }
}

/// `mkdir ~/newdir`: a new directory outside the workspace, judged by
/// where it is (a protected place's own directory, `mkdir -p
/// ~/.config/systemd/user`, holds nothing yet: what is written into it is
/// judged then).
fn check_new_directories(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    if name == "mkdir" {
        let cwd = cwd_before(ctx, i);
        let dirs: Vec<String> = operands(c)
            .iter()
            .filter(|w| !w.dynamic)
            .map(|w| under(cwd.as_deref(), w.text.clone()))
            .collect();
        for d in dirs {
            if places::place_with(&d, ctx.policy).is_none() {
                check_area(ctx, i, &d, "makes the directory", None);
            }
        }
    }
}

/// The paths a command writes, with how; `find /var/log -type f -exec
/// truncate -s0 {} +` writes what find hands it, and `-exec cp {} /tmp/ \;`
/// writes each under its own name.
fn written_targets(ctx: &Ctx, i: usize) -> Vec<(String, WriteMode)> {
    let c = &ctx.commands()[i];
    let mut targets = written_with_modes(c, ctx.model(i));
    if targets.iter().any(|(t, _)| t.contains("{}")) {
        let found = super::placeholder_paths(ctx, i);
        let base = |p: &str| {
            p.trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(p)
                .to_string()
        };
        targets = targets
            .into_iter()
            .flat_map(|(t, mode)| {
                if t == "{}" {
                    found.iter().map(|p| (p.clone(), mode)).collect()
                } else if t.contains("{}") {
                    found
                        .iter()
                        .map(|p| (t.replace("{}", &base(p)), mode))
                        .collect()
                } else {
                    vec![(t, mode)]
                }
            })
            .collect();
    }
    targets
}

/// Relative paths are under an earlier `cd` of the line; the directory is
/// looked up only when some path is relative.
fn cwd_for_relative_paths(
    ctx: &Ctx,
    i: usize,
    targets: &[(String, WriteMode)],
    removed: &[String],
) -> Option<String> {
    if targets
        .iter()
        .map(|(t, _)| t)
        .chain(removed)
        .any(|t| !t.starts_with(['/', '~', '$']))
    {
        cwd_before(ctx, i)
    } else {
        None
    }
}

/// One written path: the first of aq's programs, devices, history, logs,
/// hooks, policy and protected places it is decides; any other path is
/// judged as a tool's configuration and by its area.
fn check_written(ctx: &mut Ctx, i: usize, name: &str, t: &str, mode: WriteMode) -> ControlFlow<()> {
    check_aq_named_program(ctx, i, name, t)?;
    check_device_written(ctx, i, t)?;
    check_history_written(ctx, i, name, t)?;
    check_system_log_written(ctx, i, t)?;
    check_hook_written_over(ctx, i, t, mode)?;
    check_policy_rewritten(ctx, i, t, mode)?;
    check_glob_copied_into(ctx, i, t, mode)?;
    check_protected_place_written(ctx, i, name, t, mode)?;
    check_tool_config_written(ctx, i, name, t);
    check_written_area(ctx, i, name, t, mode);
    ControlFlow::Continue(())
}

/// `cp x /usr/local/bin/aq`, `ln -sf /bin/true ~/.local/bin/aq`: a program
/// installed under aq's own name replaces the guard.
fn check_aq_named_program(ctx: &mut Ctx, i: usize, name: &str, t: &str) -> ControlFlow<()> {
    let base = t.trim_end_matches('/').rsplit('/').next().unwrap_or(t);
    if matches!(base, "aq" | "agent-quarantine")
        && t.starts_with(['/', '~', '$'])
        && name != "touch"
    {
        ctx.hit(
            RuleId::GuardAqFiles,
            i,
            format!("writes {t}, a program under aq's own name"),
        );
        return ControlFlow::Break(());
    }
    ControlFlow::Continue(())
}

/// A block device written is a disk overwritten.
fn check_device_written(ctx: &mut Ctx, i: usize, t: &str) -> ControlFlow<()> {
    if paths::is_block_device(t) {
        ctx.hit(
            RuleId::DiskOverwrite,
            i,
            format!("writes to the device {t}"),
        );
        return ControlFlow::Break(());
    }
    ControlFlow::Continue(())
}

/// A history file overwritten, or linked to `/dev/null`, hides what was
/// typed; touched, it is left as it is.
fn check_history_written(ctx: &mut Ctx, i: usize, name: &str, t: &str) -> ControlFlow<()> {
    let c = &ctx.commands()[i];
    let linking_history =
        name == "ln" && operands(c).first().is_some_and(|s| s.text == "/dev/null");
    if paths::is_history_file(t) {
        if name != "touch" || linking_history {
            ctx.hit(
                RuleId::AntiHistoryTamper,
                i,
                format!("overwrites the history file {t}"),
            );
        }
        return ControlFlow::Break(());
    }
    ControlFlow::Continue(())
}

/// A system log overwritten hides what happened.
fn check_system_log_written(ctx: &mut Ctx, i: usize, t: &str) -> ControlFlow<()> {
    if paths::is_system_log(t) {
        ctx.hit(
            RuleId::AntiAuditDisable,
            i,
            format!("overwrites the system log {t}"),
        );
        return ControlFlow::Break(());
    }
    ControlFlow::Continue(())
}

/// `printf '#!/bin/sh\nexit 0\n' > .claude/hooks/guard.sh`: a hook script
/// (or, for Kiro, a hook) written over. A new script put in (`cp x.sh
/// .claude/hooks/`) runs only once a settings file names it: judged later,
/// as the agent's configuration.
fn check_hook_written_over(ctx: &mut Ctx, i: usize, t: &str, mode: WriteMode) -> ControlFlow<()> {
    if aq_knowledge::tool_config::in_agent_hook_dir(t)
        && !matches!(mode, WriteMode::Into | WriteMode::Touch)
    {
        ctx.hit(
            RuleId::GuardAgentHooks,
            i,
            format!("writes over {t}, in an agent's hook directory"),
        );
        return ControlFlow::Break(());
    }
    ControlFlow::Continue(())
}

/// The project's policy only tightens: rewritten, it may loosen.
fn check_policy_rewritten(ctx: &mut Ctx, i: usize, t: &str, mode: WriteMode) -> ControlFlow<()> {
    let base = t.trim_end_matches('/').rsplit('/').next().unwrap_or(t);
    if base == "agent-quarantine.toml"
        && mode != WriteMode::Touch
        && places::area_with(t, ctx.policy).is_none()
    {
        ctx.hit(
            RuleId::GuardAqFiles,
            i,
            format!("writes {t}, the project's aq policy (it only tightens: rewritten, it may refuse less)"),
        );
        return ControlFlow::Break(());
    }
    ControlFlow::Continue(())
}

/// `cp x/* DIR/`: the names are the source's, whatever they are: the
/// directory is judged for the guard's files it holds (places of other
/// kinds are judged as the directory's own write).
fn check_glob_copied_into(ctx: &mut Ctx, i: usize, t: &str, mode: WriteMode) -> ControlFlow<()> {
    let base = t.trim_end_matches('/').rsplit('/').next().unwrap_or(t);
    if mode == WriteMode::Into && paths::has_glob(base) {
        let dir = t
            .trim_end_matches('/')
            .rsplit_once('/')
            .map_or(".", |(d, _)| d);
        if let Some(place) =
            places::holds_place_with(dir, &[PlaceKind::AqOwn, PlaceKind::AgentHook], ctx.policy)
        {
            ctx.hit(
                place_rule(place.kind),
                i,
                format!(
                    "copies files into {dir}, which holds {} {}",
                    place_noun(place.kind),
                    place.pattern
                ),
            );
        }
        return ControlFlow::Break(());
    }
    ControlFlow::Continue(())
}

/// A protected place written is judged by its kind, unless the write runs
/// nothing there: an empty file touched, or a startup file, schedule or git
/// configuration emptied (then judged by its area).
fn check_protected_place_written(
    ctx: &mut Ctx,
    i: usize,
    name: &str,
    t: &str,
    mode: WriteMode,
) -> ControlFlow<()> {
    let Some(place) = places::place_with(t, ctx.policy) else {
        return ControlFlow::Continue(());
    };
    // An empty file, or a new time on one, runs nothing.
    let harmless_touch = name == "touch"
        && !matches!(
            place.kind,
            PlaceKind::AuthorizedKeys
                | PlaceKind::Cron
                | PlaceKind::Systemd
                | PlaceKind::Launchd
                | PlaceKind::SystemStartup
        );
    // Emptied, a startup file, a schedule or the user's git configuration
    // runs nothing: the write is judged by where it is (`truncate -s 0
    // ~/.gitconfig` asks, `: > /etc/profile` destroys a system file). Not a
    // guard's file: emptied, it holds no hook.
    let emptied = mode == WriteMode::Empty
        && matches!(
            place.kind,
            PlaceKind::ShellRc
                | PlaceKind::GitConfigGlobal
                | PlaceKind::Cron
                | PlaceKind::Systemd
                | PlaceKind::Launchd
                | PlaceKind::SystemStartup
                | PlaceKind::AuthorizedKeys
        );
    if emptied {
        return ControlFlow::Continue(());
    }
    if !harmless_touch {
        report_place_written(ctx, i, t, mode, place.kind);
    }
    ControlFlow::Break(())
}

/// The verdict on a protected place written: the agent's files by what
/// they are, a settings file by the keys the line writes, any other place
/// by its kind.
fn report_place_written(ctx: &mut Ctx, i: usize, t: &str, mode: WriteMode, kind: PlaceKind) {
    // A file copied into an agent's directory of commands, skills or hook
    // scripts (`cp x.sh ~/.claude/hooks/`) is no edit of a settings file:
    // its words are not read.
    let rule = if mode == WriteMode::Into && kind == PlaceKind::AgentConfig {
        RuleId::PersistAgentConfig
    } else {
        super::guard::agent_file_rule(ctx, i, t, kind)
    };
    // A settings file whose keys are known (`.aider.conf.yml`,
    // `.vscode/settings.json`), written with text the line shows: a key
    // that runs a command is persistence; none, in the workspace, is the
    // project's own settings.
    if rule == RuleId::PersistAgentConfig
        && mode != WriteMode::Into
        && let Some(file) = places::tool_config_with(t, ctx.policy)
        && super::guard::readable_write(ctx, i, t)
    {
        let text = super::line_text(ctx, &|w: &str| {
            !w.contains(char::is_whitespace)
                && !w.contains('=')
                && (w.starts_with('-') || w.contains('/'))
        });
        if let Some(word) = aq_knowledge::tool_config::runs_word(file, &text) {
            ctx.hit(
                RuleId::PersistToolConfig,
                i,
                format!(
                    "writes {}'s settings {t} with {word}: it runs a command later",
                    file.tool
                ),
            );
            return;
        }
        if places::area_with(t, ctx.policy).is_none()
            && aq_knowledge::tool_config::settings_word(file, &text).is_none()
        {
            return;
        }
    }
    let noun = match rule {
        RuleId::GuardAgentSettings => "the agent's settings",
        RuleId::GuardAgentHooks => place_noun(PlaceKind::AgentHook),
        _ => place_noun(kind),
    };
    ctx.hit(rule, i, format!("writes {noun} {t}"));
}

/// A tool's configuration that makes it run a command later: judged by
/// what the line writes there, then as any other write there. A copy's
/// text is not on the line (`cp desert.vim ~/.vim/colors/`): only a file
/// whose every line runs is judged by its place then.
fn check_tool_config_written(ctx: &mut Ctx, i: usize, name: &str, t: &str) {
    let copied = matches!(name, "cp" | "mv" | "install" | "ln" | "rsync" | "ditto");
    if name != "touch"
        && let Some(file) = places::tool_config_with(t, ctx.policy)
        && (!copied || file.effect == aq_knowledge::tool_config::FileEffect::Startup)
        && let Some(word) = aq_knowledge::tool_config::runs_word(
            file,
            // What the line writes, without its options and the paths it
            // names (`mkdir -p ~/.vim/plugin`), and the text this command
            // prints whole (`echo '-javaagent:/tmp/x.jar'`).
            &(super::line_text(ctx, &|w: &str| {
                !w.contains(char::is_whitespace)
                    && !w.contains('=')
                    && (w.starts_with('-') || w.contains('/'))
            }) + &super::written::produced_text(ctx, &ctx.commands()[i]).unwrap_or_default()),
        )
    {
        ctx.hit(
            RuleId::PersistToolConfig,
            i,
            format!(
                "writes {}'s configuration {t} with {word}: it runs a command later",
                file.tool
            ),
        );
    }
}

/// Any other write is judged by where it lands: a credential location, or
/// the area outside the workspace it is in.
fn check_written_area(ctx: &mut Ctx, i: usize, name: &str, t: &str, mode: WriteMode) {
    if paths::credential_location(t) && name != "touch" {
        ctx.hit(
            RuleId::SecretLocation,
            i,
            format!("writes into the credential location {t}"),
        );
    } else if name != "touch" {
        check_area(ctx, i, t, "writes", Some(mode));
    } else {
        // `touch ~/x`: a new (empty) file outside the workspace.
        check_area(ctx, i, t, "touches", Some(mode));
    }
}

/// A link made to a protected place is a way to write it (`ln -s ~/.bashrc
/// x; echo … >> x`).
fn check_links_to_places(ctx: &mut Ctx, i: usize, name: &str, cwd: Option<&str>) {
    let c = &ctx.commands()[i];
    if name == "ln" {
        let ops = operands(c);
        for src in ops.iter().take(ops.len().saturating_sub(1)) {
            let t = under(cwd, src.text.clone());
            if let Some(place) = places::place_with(&t, ctx.policy) {
                ctx.hit(
                    place_rule(place.kind),
                    i,
                    format!("links to {} {t}, a way to write it", place_noun(place.kind)),
                );
            }
        }
    }
}

/// A tree copied into a directory that holds protected places (`rsync -a
/// dotfiles/ ~/`, `cp -r x/. ~/.claude`) can write any of them.
fn check_tree_copied_into(ctx: &mut Ctx, i: usize, cwd: Option<&str>) {
    let c = &ctx.commands()[i];
    if let Some(dest) = tree_copy_destination(c) {
        let dest = under(cwd, dest);
        if let Some(place) = places::holds_place_with(&dest, &ALL_PLACES, ctx.policy) {
            ctx.hit(
                place_rule(place.kind),
                i,
                format!(
                    "copies a tree into {dest}, which holds {} {}",
                    place_noun(place.kind),
                    place.pattern
                ),
            );
        }
    }
}

/// `mv evil .claude`: a directory moved onto an agent's directory that is
/// not there becomes it, with whatever settings it holds. (A file with an
/// extension, `mv notes.json ~/.claude`, only lands in it.)
fn check_directory_moved_onto(ctx: &mut Ctx, i: usize, name: &str, cwd: Option<&str>) {
    let c = &ctx.commands()[i];
    if name == "mv"
        && flag_values_text(c, &["-t"], &["target-directory"]).is_empty()
        && let [sources @ .., dest] = operands(c).as_slice()
        && !sources.is_empty()
        && sources.iter().any(|s| {
            let base = s
                .text
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("");
            !base.trim_start_matches('.').contains('.')
        })
    {
        let dest = under(cwd, dest.text.clone());
        let p = NormPath::new(&dest);
        if !p.is_home()
            && !p.is_root()
            && places::place_with(&dest, ctx.policy).is_none()
            && let Some(place) = places::holds_place_with(
                &dest,
                &[PlaceKind::AqOwn, PlaceKind::AgentHook],
                ctx.policy,
            )
        {
            ctx.hit(
                place_rule(place.kind),
                i,
                format!(
                    "moves a directory onto {dest}, which holds {} {}",
                    place_noun(place.kind),
                    place.pattern
                ),
            );
        }
    }
}

/// Taking aq's files or an agent's hook settings away turns aq off as
/// surely as rewriting them; any other removal is judged by its area.
fn check_removed(ctx: &mut Ctx, i: usize, verb: &str, t: &str) -> ControlFlow<()> {
    let guarded = [PlaceKind::AqOwn, PlaceKind::AgentHook];
    // The project's policy only tightens: taking it away loosens.
    if t.rsplit('/').next() == Some("agent-quarantine.toml") {
        ctx.hit(
            RuleId::GuardAqFiles,
            i,
            format!("{verb} {t}, the project's aq policy (it only tightens: without it, less is refused)"),
        );
        return ControlFlow::Break(());
    }
    if verb == "moves away" && paths::is_history_file(t) {
        ctx.hit(
            RuleId::AntiHistoryTamper,
            i,
            format!("moves the history file {t} away"),
        );
        return ControlFlow::Break(());
    }
    if !paths::is_history_file(t) && !paths::is_system_log(t) {
        check_area(ctx, i, t, verb, None);
    }
    if aq_knowledge::tool_config::in_agent_hook_dir(t) {
        ctx.hit(
            RuleId::GuardAgentHooks,
            i,
            format!("{verb} {t}, an agent's hook script"),
        );
        return ControlFlow::Break(());
    }
    if let Some(place) = places::holds_place_with(t, &guarded, ctx.policy) {
        let noun = place_noun(place.kind);
        let evidence = if places::place_with(t, ctx.policy).is_some_and(|m| m.kind == place.kind) {
            format!("removes {noun} {t}")
        } else {
            format!("removes {t}, which holds {noun} {}", place.pattern)
        };
        ctx.hit(place_rule(place.kind), i, evidence);
    }
    ControlFlow::Continue(())
}

/// Every kind of protected place.
const ALL_PLACES: [PlaceKind; 12] = [
    PlaceKind::AqOwn,
    PlaceKind::AgentHook,
    PlaceKind::ShellRc,
    PlaceKind::AuthorizedKeys,
    PlaceKind::Cron,
    PlaceKind::Systemd,
    PlaceKind::Launchd,
    PlaceKind::SystemStartup,
    PlaceKind::GitHook,
    PlaceKind::GitConfig,
    PlaceKind::GitConfigGlobal,
    PlaceKind::AgentConfig,
];

/// Where a recursive copy writes its tree: `cp -r SRC... DIR`, `cp -a`,
/// `rsync SRC... DIR`, `ditto`, `cp -t DIR`.
fn tree_copy_destination(c: &Command) -> Option<String> {
    let name = c.program()?;
    let recursive = match name {
        "rsync" | "ditto" => true,
        "cp" => is_recursive(c) || has_flag(c, Some('a'), &["archive"]),
        _ => false,
    };
    if !recursive {
        return None;
    }
    if let Some(dir) = flag_values_text(c, &["-t"], &["target-directory"]).pop() {
        return Some(dir);
    }
    let ops = operands(c);
    (ops.len() >= 2).then(|| ops[ops.len() - 1].text.clone())
}

/// The rule for a write into a protected place.
pub(crate) fn place_rule(kind: PlaceKind) -> RuleId {
    match kind {
        PlaceKind::ShellRc => RuleId::PersistShellRc,
        PlaceKind::AuthorizedKeys => RuleId::PersistSshAuthorizedKeys,
        PlaceKind::Cron => RuleId::PersistCrontab,
        PlaceKind::Systemd => RuleId::PersistSystemd,
        PlaceKind::Launchd => RuleId::PersistLaunchd,
        PlaceKind::SystemStartup => RuleId::PersistSystemStartup,
        PlaceKind::GitHook => RuleId::PersistGitHook,
        PlaceKind::GitConfig => RuleId::PersistGitConfig,
        PlaceKind::GitConfigGlobal => RuleId::PersistGitConfigGlobal,
        PlaceKind::AqOwn => RuleId::GuardAqFiles,
        PlaceKind::AgentHook => RuleId::GuardAgentHooks,
        PlaceKind::AgentConfig => RuleId::PersistAgentConfig,
    }
}

/// What a protected place is, for the evidence: `the shell startup file`.
pub(crate) fn place_noun(kind: PlaceKind) -> &'static str {
    match kind {
        PlaceKind::ShellRc => "the shell startup file",
        PlaceKind::AuthorizedKeys => "the login keys",
        PlaceKind::Cron => "the cron table",
        PlaceKind::Systemd => "the systemd unit",
        PlaceKind::Launchd => "the launch agent",
        PlaceKind::SystemStartup => "the startup file",
        PlaceKind::GitHook => "the git hook",
        PlaceKind::GitConfig => "the repository's git configuration",
        PlaceKind::GitConfigGlobal => "the user's git configuration",
        PlaceKind::AqOwn => "aq's own file",
        PlaceKind::AgentHook => "the agent's hook settings",
        PlaceKind::AgentConfig => "the agent's configuration",
    }
}

/// A relative path under the directory an earlier `cd` on the line went to.
fn under(cwd: Option<&str>, path: String) -> String {
    match cwd {
        Some(dir) if !path.starts_with(['/', '~', '$']) => {
            format!("{}/{path}", dir.trim_end_matches('/'))
        }
        _ => path,
    }
}

/// Paths a command deletes or moves away: `rm`, `unlink`, `shred`,
/// `rmdir`, `trash` operands, `mv` sources, `find -delete` roots, and what
/// `find ROOT -exec rm {}` is given.
fn removed_paths(ctx: &Ctx, i: usize) -> Vec<String> {
    let c = &ctx.commands()[i];
    let name = c.program().unwrap_or("");
    if !matches!(
        name,
        "rm" | "unlink" | "rmdir" | "shred" | "srm" | "trash" | "trash-put" | "mv" | "find"
    ) {
        return Vec::new();
    }
    let ops: Vec<String> = operands(c).iter().map(|w| w.text.clone()).collect();
    let mut out = Vec::new();
    match name {
        "rm" | "unlink" | "rmdir" | "shred" | "srm" | "trash" | "trash-put" => {
            for op in ops {
                if op.contains("{}") {
                    out.extend(finder_roots(ctx, i));
                } else {
                    out.push(op);
                }
            }
        }
        "mv" => {
            let to_dir = !flag_values_text(c, &["-t"], &["target-directory"]).is_empty();
            let n = if to_dir {
                ops.len()
            } else {
                ops.len().saturating_sub(1)
            };
            out.extend(ops.into_iter().take(n));
        }
        "find" if c.args().iter().any(|a| a.text == "-delete") => out.extend(find_roots(c)),
        _ => {}
    }
    out
}

/// A write, move or removal of `t` outside the workspace, judged by the
/// area it is in (`aq_knowledge::areas`): the system's files and installed
/// software ask as `fs-write-system`, the home's settings as
/// `../other/x` seen from the workspace `ws`: the path it names, or `None`
/// when it climbs above the filesystem's root or the home.
fn beside_workspace(ws: &str, t: &str) -> Option<String> {
    let mut parts: Vec<&str> = ws.trim_end_matches('/').split('/').collect();
    for c in t.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if parts.len() <= 1 {
                    return None;
                }
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

/// `fs-write-home`, `fs-write-outside`; scratch space, build caches,
/// agents' directories and, when the workspace is not known, what no area
/// names (it may be the workspace) are ordinary work.
pub(crate) fn check_area(ctx: &mut Ctx, i: usize, t: &str, verb: &str, mode: Option<WriteMode>) {
    use aq_knowledge::areas::Area;
    // `cp -r src/utils ../billing/src/`: from the workspace's top (no `cd`
    // before it on the line), `..` leads to the directory that holds it.
    let resolved;
    let t = match ctx.policy.workspace.as_deref() {
        Some(ws) if t.starts_with("../") && super::cwd_before(ctx, i).is_none() => {
            resolved = beside_workspace(ws, t);
            resolved.as_deref().unwrap_or(t)
        }
        _ => t,
    };
    let Some(area) = places::area_with(t, ctx.policy).filter(|a| !a.writable()) else {
        return;
    };
    // Regenerable build output is ordinary to remove in the workspace, the
    // scratch space and the build caches (writable areas, above); another
    // project's (`~/src/other-app/node_modules`, `../billing/target`) is
    // that project's files, outside the workspace the agent works on.
    let name = t.trim_end_matches('/').rsplit('/').next().unwrap_or(t);
    // `cp x ~/.cargo/bin/cargo`, `cp x /usr/local/bin/git`: a known
    // program's name in a directory the `PATH` puts before its own.
    let path_dir = area == Area::UserPrograms
        || area == Area::LocalSoftware && {
            let p = NormPath::new(t);
            p.absolute && aq_knowledge::areas::in_local_program_dir(&p.parts)
        };
    // (A backup copy, `node.bak`, is no program's name; `python3.12` is.)
    let versioned_or_plain = name
        .rsplit_once('.')
        .is_none_or(|(_, ext)| ext.bytes().all(|b| b.is_ascii_digit()));
    if path_dir
        && !verb.starts_with("delete")
        && !matches!(verb, "moves away")
        && versioned_or_plain
        && aq_knowledge::programs::known_class(name).is_some()
    {
        ctx.hit(
            RuleId::PersistToolConfig,
            i,
            format!("{verb} {t}: a `{name}` on the PATH that every later shell runs instead of the real one"),
        );
        return;
    }
    let removes = matches!(verb, "deletes" | "moves away");
    // The agent's own state (`touch ~/.toy/state/x`): its work, as the
    // sandbox lets it be. Emptied, replaced or removed, it is judged as
    // any file there.
    if !removes
        && !matches!(mode, Some(WriteMode::Replace | WriteMode::Empty))
        && places::in_agent_state(t, ctx.policy)
    {
        return;
    }
    if removes && let Some(what) = paths::vital_system_file(t) {
        ctx.hit(RuleId::FsDestroySystem, i, format!("{verb} {t}, {what}"));
        return;
    }
    // Removing, emptying or overwriting a file of the system's own
    // configuration or programs destroys it; adding to it, editing it in
    // place or a new file in a directory of drop-in files is a change.
    let destroys = removes || matches!(mode, Some(WriteMode::Replace | WriteMode::Empty));
    if destroys && area.is_system() {
        let p = NormPath::new(t);
        if p.absolute
            && aq_knowledge::areas::is_system_file(&p.parts)
            && (removes || !aq_knowledge::areas::in_drop_in_dir(&p.parts))
        {
            let how = match mode {
                Some(WriteMode::Empty) => "empties",
                Some(WriteMode::Replace) => "overwrites",
                _ => verb,
            };
            ctx.hit(
                RuleId::FsDestroySystem,
                i,
                format!("{how} {t}, a file of {}", area.title()),
            );
            return;
        }
    }
    let rule = match area {
        Area::HomeFiles | Area::UserPrograms | Area::OtherProjects => RuleId::FsWriteHome,
        Area::Elsewhere => RuleId::FsWriteOutside,
        _ => RuleId::FsWriteSystem,
    };
    ctx.hit(rule, i, format!("{verb} {t}, {}", area.title()));
}

#[cfg(test)]
mod tests {
    use super::chmod_mode_drops_owner_write;

    #[test]
    fn a_mode_without_the_owner_s_write_freezes_a_file() {
        for mode in ["000", "400", "0444", "a-w", "u-w", "u=r", "-w", "a=rx"] {
            assert!(chmod_mode_drops_owner_write(mode), "{mode}");
        }
        for mode in ["600", "644", "0755", "u+w", "go-w", "g=r", "+x"] {
            assert!(!chmod_mode_drops_owner_write(mode), "{mode}");
        }
    }
}
