//! Links the line makes with `ln`, followed by the paths written after
//! them: after `ln -s / r`, `rm -rf r/` deletes `/`; after `ln -s ~/.ssh k`,
//! `cat k/id_rsa` reads `~/.ssh/id_rsa`. A path through a link is judged
//! where it lands. The link's own name is the link for the programs that
//! act on a link rather than through it (`rm r`, `mv r x`, `readlink r`).

use crate::model::{Command, Input, Word};
use crate::walk::Walker;

/// Most links followed on one line.
const MAX_LINKS: usize = 32;

/// Programs that act on a link named bare rather than on what it points to.
const ON_THE_LINK: &[&str] = &[
    "rm",
    "unlink",
    "mv",
    "ln",
    "link",
    "readlink",
    "trash",
    "trash-put",
    "gio",
    "lstat",
];

/// The last component of a path.
fn base(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|b| !b.is_empty())
        .unwrap_or(path)
}

/// A path as the links are keyed: without a leading `./` or a trailing `/`.
fn key(path: &str) -> &str {
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    if p.len() > 1 {
        p.trim_end_matches('/')
    } else {
        p
    }
}

/// The links `ln` (or `link`) makes: (name, what it points to).
fn made_links(c: &Command) -> Vec<(String, String)> {
    let hard_only = match c.program() {
        Some("ln") => false,
        Some("link") => true,
        _ => return Vec::new(),
    };
    let args = c.args();
    if args.iter().any(|w| w.dynamic) {
        return Vec::new();
    }
    let mut symbolic = false;
    let mut relative = false;
    let mut no_dir = false;
    let mut dir: Option<String> = None;
    let mut ops: Vec<&str> = Vec::new();
    let mut k = 0;
    let mut options = true;
    while k < args.len() {
        let t = args[k].text.as_str();
        if options && t == "--" {
            options = false;
        } else if options && !hard_only && t.starts_with("--") {
            match t {
                "--symbolic" => symbolic = true,
                "--relative" => relative = true,
                "--no-target-directory" => no_dir = true,
                "--target-directory" | "--suffix" => {
                    if t == "--target-directory" {
                        dir = args.get(k + 1).map(|w| w.text.clone());
                    }
                    k += 1;
                }
                _ => {
                    if let Some(d) = t.strip_prefix("--target-directory=") {
                        dir = Some(d.to_string());
                    }
                }
            }
        } else if options && !hard_only && t.len() > 1 && t.starts_with('-') {
            for (j, ch) in t[1..].char_indices() {
                match ch {
                    's' => symbolic = true,
                    'r' => relative = true,
                    'T' => no_dir = true,
                    't' | 'S' => {
                        let attached = &t[1 + j + 1..];
                        let value = if attached.is_empty() {
                            k += 1;
                            args.get(k).map(|w| w.text.clone())
                        } else {
                            Some(attached.to_string())
                        };
                        if ch == 't' {
                            dir = value;
                        }
                        break;
                    }
                    _ => {}
                }
            }
        } else {
            ops.push(t);
        }
        k += 1;
    }
    // What a link points to, seen from where the line runs: a relative
    // symbolic link's target is relative to the link's own directory.
    let target = |name: &str, t: &str| -> String {
        let parent = name.trim_end_matches('/').rsplit_once('/').map(|(d, _)| d);
        match parent {
            Some(d) if symbolic && !relative && !t.starts_with(['/', '~', '$']) => {
                format!("{d}/{t}")
            }
            _ => t.to_string(),
        }
    };
    let mut out = Vec::new();
    let into = |d: &str, srcs: &[&str], out: &mut Vec<(String, String)>| {
        for s in srcs {
            let name = format!("{}/{}", d.trim_end_matches('/'), base(s));
            out.push((name.clone(), target(&name, s)));
        }
    };
    match (dir.as_deref(), ops.as_slice()) {
        (Some(d), srcs) => into(d, srcs, &mut out),
        (None, [src]) => out.push((base(src).to_string(), src.to_string())),
        (None, [src, name]) if no_dir || !name.ends_with('/') => {
            out.push((name.to_string(), target(name, src)))
        }
        (None, [srcs @ .., d]) if !srcs.is_empty() => into(d, srcs, &mut out),
        _ => {}
    }
    out.retain(|(name, to)| !key(name).is_empty() && key(name) != key(to));
    out
}

/// The program copies `cp SRC DST` (`install`) makes: (DST, SRC). Only
/// the program a copy runs follows it (`cp /bin/rm x; ./x -rf /`): a copy
/// deleted or written is the copy, not the original.
fn made_copies(c: &Command) -> Vec<(String, String)> {
    if !matches!(c.program(), Some("cp" | "install")) || c.args().iter().any(|w| w.dynamic) {
        return Vec::new();
    }
    let ops: Vec<&str> = c
        .args()
        .iter()
        .map(|w| w.text.as_str())
        .filter(|t| !t.starts_with('-'))
        .collect();
    match ops.as_slice() {
        [src, dst] if dst.ends_with('/') => vec![(format!("{dst}{}", base(src)), src.to_string())],
        [src, dst] => vec![(dst.to_string(), src.to_string())],
        _ => Vec::new(),
    }
}

impl Walker {
    /// Records the links (and program copies) `command` makes, for the
    /// commands after it.
    pub(crate) fn note_links(&mut self, command: &Command) {
        for (name, to) in made_links(command) {
            let name = key(&name).to_string();
            self.links.retain(|(n, _)| *n != name);
            if self.links.len() < MAX_LINKS {
                self.links.push((name, to));
            }
        }
        for (name, from) in made_copies(command) {
            let name = key(&name).to_string();
            self.copies.retain(|(n, _)| *n != name);
            if self.copies.len() < MAX_LINKS {
                self.copies.push((name, from));
            }
        }
    }

    /// The paths of `command` that go through a link the line made, as the
    /// paths they land on.
    pub(crate) fn follow_links(&self, command: &mut Command) {
        // A program copied on the line runs as the original.
        if let Some(first) = command.argv.first_mut().filter(|w| !w.dynamic)
            && let Some((_, from)) = self
                .copies
                .iter()
                .rev()
                .find(|(n, _)| *n == key(&first.text))
        {
            first.text = from.clone();
        }
        if self.links.is_empty() {
            return;
        }
        let on_the_link = command.program().is_some_and(|p| ON_THE_LINK.contains(&p));
        let follow = |w: &mut Word, bare: bool| {
            if w.dynamic {
                return;
            }
            if let Some(to) = self.through(&w.text, bare) {
                w.text = to;
            }
        };
        // The program too: after `ln -s /bin/rm x`, `./x -rf /` runs rm.
        for (k, w) in command.argv.iter_mut().enumerate() {
            follow(w, k == 0 || !on_the_link);
        }
        for r in &mut command.redirects {
            follow(&mut r.target, true);
        }
        for input in &mut command.stdin {
            if let Input::File(w) = input {
                follow(w, true);
            }
        }
    }

    /// `path` through the last link whose name starts it; a bare name only
    /// when `bare`.
    fn through(&self, path: &str, bare: bool) -> Option<String> {
        let trailing = path.len() > 1 && path.ends_with('/');
        let p = key(path);
        for (name, to) in self.links.iter().rev() {
            if p == name {
                if trailing {
                    // `r/`: the directory it points to.
                    return Some(format!("{}/", to.trim_end_matches('/')));
                }
                if bare {
                    return Some(to.clone());
                }
                return None;
            }
            if let Some(rest) = p.strip_prefix(name.as_str())
                && let Some(rest) = rest.strip_prefix('/')
            {
                return Some(format!("{}/{rest}", to.trim_end_matches('/')));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    fn displays(line: &str) -> Vec<String> {
        crate::analyze(line)
            .commands
            .iter()
            .map(|c| c.display())
            .collect()
    }

    #[test]
    fn paths_through_a_link_land_where_it_points() {
        assert_eq!(
            displays("ln -s / rootlink && rm -rf rootlink/"),
            ["ln -s / rootlink", "rm -rf /"]
        );
        assert_eq!(
            displays("ln -s ~/.ssh k; cat k/id_rsa"),
            ["ln -s ~/.ssh k", "cat ~/.ssh/id_rsa"]
        );
        assert_eq!(
            displays("ln -sf ~/.bashrc notes; echo x >> notes"),
            ["ln -sf ~/.bashrc notes", "echo x >>~/.bashrc"]
        );
        assert_eq!(
            displays("ln -s ~/.aws; cat .aws/credentials"),
            ["ln -s ~/.aws", "cat ~/.aws/credentials"]
        );
        assert_eq!(
            displays("ln -s ../shared/x.toml conf/x.toml && cat ./conf/x.toml"),
            [
                "ln -s ../shared/x.toml conf/x.toml",
                "cat conf/../shared/x.toml"
            ]
        );
        // The link itself: removed, not what it points to.
        assert_eq!(displays("ln -s / r; rm r"), ["ln -s / r", "rm r"]);
        // Names that only start the same are other files.
        assert_eq!(displays("ln -s / r; cat rr/x"), ["ln -s / r", "cat rr/x"]);
        assert_eq!(
            displays("ln -s /bin/rm x; ./x -rf /"),
            ["ln -s /bin/rm x", "/bin/rm -rf /"]
        );
        assert_eq!(
            displays("ln -s / r && cd r && rm -rf *"),
            ["ln -s / r", "cd /", "rm -rf *"]
        );
        assert_eq!(
            displays("cp /usr/bin/nc /tmp/n && /tmp/n -l 4444"),
            ["cp /usr/bin/nc /tmp/n", "/usr/bin/nc -l 4444"]
        );
        // A copy removed is the copy.
        assert_eq!(
            displays("cp -r /etc e; rm -rf e/"),
            ["cp -r /etc e", "rm -rf e/"]
        );
        // Before the link is made, the name is the name.
        assert_eq!(displays("cat k/x; ln -s / k"), ["cat k/x", "ln -s / k"]);
    }
}
