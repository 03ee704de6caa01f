//! Which paths a checkpoint keeps: those git would not ignore.
//!
//! The matcher is the `ignore` crate's (ripgrep's): git's pattern language
//! without running git, so it works in a workspace that is no repository
//! (its `.gitignore` files are honoured all the same: `target/` and
//! `node_modules/` stay out whether or not `git init` was run). Precedence
//! is git's: the deepest `.gitignore` first, then those of the directories
//! above the workspace up to the repository's root, then
//! `.git/info/exclude`, then the user's global excludes file. A directory
//! that is ignored is not entered, so nothing below it can be re-included,
//! as in git. `.git` is never kept, at any depth.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The rules that hold for the whole workspace.
pub(crate) struct Rules {
    root: PathBuf,
    /// Least specific last: parents above the workspace (deepest first),
    /// `info/exclude`, the global excludes file.
    base: Vec<Arc<Gitignore>>,
    include: Vec<PathBuf>,
}

/// The `.gitignore` files between the workspace and one directory.
#[derive(Clone, Default)]
pub(crate) struct Stack {
    /// Outermost first.
    dirs: Vec<Arc<Gitignore>>,
    /// An ignored directory entered only because an included path is below.
    in_ignored: bool,
    /// Below a path the policy includes: everything is kept.
    forced: bool,
}

/// What to do with one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Keep,
    /// An ignored directory on the way to an included path.
    EnterIgnored,
    /// At or below an included path.
    Forced,
    Skip,
}

impl Rules {
    pub fn new(root: &Path, include: &[PathBuf]) -> Rules {
        let mut base = Vec::new();
        // Directories above the workspace, when it is inside a repository
        // whose root is higher up.
        let mut above = Vec::new();
        let mut dir = root.parent();
        let mut repo_root = None;
        if root.join(".git").symlink_metadata().is_err() {
            while let Some(d) = dir {
                above.push(d.to_path_buf());
                if d.join(".git").symlink_metadata().is_ok() {
                    repo_root = Some(d.to_path_buf());
                    break;
                }
                dir = d.parent();
            }
        }
        if repo_root.is_none() {
            above.clear();
        }
        for d in above {
            if let Some(g) = load(&d, &d.join(".gitignore")) {
                base.push(g);
            }
        }
        let repo = repo_root.unwrap_or_else(|| root.to_path_buf());
        if let Some(gitdir) = crate::gitstate::find_gitdir(&repo) {
            let common = crate::gitstate::common_dir(&gitdir);
            if let Some(g) = load(&repo, &common.join("info/exclude")) {
                base.push(g);
            }
        }
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(global) = global_excludes(root, &env, std::env::home_dir()) {
            base.push(Arc::new(global));
        }
        Rules {
            root: root.to_path_buf(),
            base,
            include: include
                .iter()
                .map(|p| p.components().collect::<PathBuf>())
                .collect(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The stack for a directory's children, given its parent's stack and
    /// its own `.gitignore` (if it has one).
    pub(crate) fn child_stack(
        &self,
        parent: &Stack,
        verdict: Verdict,
        own: Option<Arc<Gitignore>>,
    ) -> Stack {
        let mut s = parent.clone();
        match verdict {
            Verdict::EnterIgnored => s.in_ignored = true,
            Verdict::Forced => s.forced = true,
            Verdict::Keep | Verdict::Skip => {}
        }
        if let Some(g) = own {
            s.dirs.push(g);
        }
        s
    }

    /// Reads `dir/.gitignore` when there is one.
    pub(crate) fn load_dir(&self, dir: &Path) -> Option<Arc<Gitignore>> {
        load(dir, &dir.join(".gitignore"))
    }

    /// Whether to keep `rel` (whose parent's rules are `stack`).
    pub fn verdict(&self, stack: &Stack, abs: &Path, rel: &Path, is_dir: bool) -> Verdict {
        if rel.file_name() == Some(OsStr::new(".git")) {
            return Verdict::Skip;
        }
        if stack.forced || self.include.iter().any(|i| rel.starts_with(i)) {
            return Verdict::Forced;
        }
        let ignored = stack.in_ignored || self.matches(stack, abs, is_dir);
        if !ignored {
            Verdict::Keep
        } else if is_dir && self.include.iter().any(|i| i.starts_with(rel)) {
            Verdict::EnterIgnored
        } else {
            Verdict::Skip
        }
    }

    fn matches(&self, stack: &Stack, abs: &Path, is_dir: bool) -> bool {
        for g in stack.dirs.iter().rev().chain(self.base.iter()) {
            match g.matched(abs, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    /// The stack for the directory `rel` itself, built from the workspace
    /// root down (for a walk that starts below the root), or `None` when
    /// `rel` or a directory above it is not kept. Only the inotify watcher
    /// asks, which is Linux's.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn stack_for(&self, rel: &Path) -> Option<Stack> {
        let mut stack =
            self.child_stack(&Stack::default(), Verdict::Keep, self.load_dir(&self.root));
        let mut cur = PathBuf::new();
        for comp in rel.components() {
            cur.push(comp);
            let abs = self.root.join(&cur);
            let v = self.verdict(&stack, &abs, &cur, true);
            if v == Verdict::Skip {
                return None;
            }
            stack = self.child_stack(&stack, v, self.load_dir(&abs));
        }
        Some(stack)
    }
}

fn load(root: &Path, file: &Path) -> Option<Arc<Gitignore>> {
    if std::fs::symlink_metadata(file).is_err() {
        return None;
    }
    let mut b = GitignoreBuilder::new(root);
    b.add(file);
    let g = b.build().ok()?;
    (!g.is_empty()).then(|| Arc::new(g))
}

/// The user's global excludes file as git reads it: `core.excludesFile`,
/// else `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`). The
/// `ignore` crate finds the setting with a regular expression it compiles
/// in each process, a third of a checkpoint in a hook or a short session:
/// where no git configuration file it reads names the setting, the
/// default file is read here directly (what it would read).
fn global_excludes(
    root: &Path,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    home: Option<PathBuf>,
) -> Option<Gitignore> {
    let global = match excludes_file(env, home) {
        ExcludesFile::Configured => GitignoreBuilder::new(root).build_global().0,
        ExcludesFile::Default(None) => return None,
        ExcludesFile::Default(Some(file)) => {
            if !file.is_file() {
                return None;
            }
            let mut b = GitignoreBuilder::new(root);
            b.add(file);
            b.build().ok()?
        }
    };
    (!global.is_empty()).then_some(global)
}

/// Where the global excludes come from.
#[derive(Debug, PartialEq, Eq)]
enum ExcludesFile {
    /// A git configuration file names `core.excludesFile`: the `ignore`
    /// crate reads it.
    Configured,
    /// The default file (none without a home or `XDG_CONFIG_HOME`).
    Default(Option<PathBuf>),
}

/// Whether a git configuration file the `ignore` crate reads names
/// `excludesFile` (in any case, anywhere: then the crate decides), else
/// the default file. `env` gives the non-empty variables.
fn excludes_file(
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    home: Option<PathBuf>,
) -> ExcludesFile {
    let xdg = env("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let configs = [
        env("GIT_CONFIG_GLOBAL").map(PathBuf::from),
        home.as_ref().map(|h| h.join(".gitconfig")),
        xdg.as_ref().map(|x| x.join("git/config")),
        Some(
            env("GIT_CONFIG_SYSTEM")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/etc/gitconfig")),
        ),
    ];
    let named = configs.iter().flatten().any(|p| {
        std::fs::read(p).is_ok_and(|text| {
            text.windows(b"excludesfile".len())
                .any(|w| w.eq_ignore_ascii_case(b"excludesfile"))
        })
    });
    if named {
        ExcludesFile::Configured
    } else {
        ExcludesFile::Default(xdg.map(|x| x.join("git/ignore")))
    }
}

#[cfg(test)]
mod global_excludes_tests {
    use super::*;

    #[test]
    fn the_default_excludes_file_is_read_where_no_configuration_names_one() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let root = tmp.path().join("work");
        std::fs::create_dir_all(home.join(".config/git")).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        let system = tmp.path().join("gitconfig");
        let env = |name: &str| match name {
            "GIT_CONFIG_SYSTEM" => Some(system.clone().into()),
            _ => None,
        };
        assert!(global_excludes(&root, &env, Some(home.clone())).is_none());
        std::fs::write(home.join(".config/git/ignore"), "*.swp\n").unwrap();
        std::fs::write(home.join(".gitconfig"), "[user]\n\tname = A\n").unwrap();
        let g = global_excludes(&root, &env, Some(home.clone())).unwrap();
        assert!(g.matched(root.join("a.swp"), false).is_ignore());
        assert!(!g.matched(root.join("a.rs"), false).is_ignore());
    }

    #[test]
    fn a_configuration_that_names_an_excludes_file_is_left_to_the_crate() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let xdg = tmp.path().join("xdg");
        std::fs::create_dir_all(xdg.join("git")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let system = tmp.path().join("gitconfig");
        let global = tmp.path().join("global");
        let env = |name: &str| match name {
            "GIT_CONFIG_SYSTEM" => Some(system.clone().into()),
            "GIT_CONFIG_GLOBAL" => Some(global.clone().into()),
            "XDG_CONFIG_HOME" => Some(xdg.clone().into()),
            _ => None,
        };
        let default = ExcludesFile::Default(Some(xdg.join("git/ignore")));
        assert_eq!(excludes_file(&env, Some(home.clone())), default);
        assert_eq!(
            excludes_file(&env, None),
            default,
            "XDG_CONFIG_HOME without a home"
        );
        assert_eq!(excludes_file(&|_| None, None), ExcludesFile::Default(None));
        // Each file the crate reads, in any case.
        for (file, text) in [
            (&global, "[core]\n\texcludesFile = ~/x\n"),
            (&home.join(".gitconfig"), "[core]\nEXCLUDESFILE=/x\n"),
            (&xdg.join("git/config"), "[core]\n  excludesfile = /x\n"),
            (&system, "[core]\n\tExcludesFile = /x\n"),
        ] {
            std::fs::write(file, text).unwrap();
            assert_eq!(
                excludes_file(&env, Some(home.clone())),
                ExcludesFile::Configured,
                "{}",
                file.display()
            );
            std::fs::remove_file(file).unwrap();
            assert_eq!(excludes_file(&env, Some(home.clone())), default);
        }
    }
}
