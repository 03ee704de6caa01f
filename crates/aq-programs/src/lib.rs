//! What programs can be made to do, as data (`programs.toml`, compiled into
//! static tables by `build.rs`, so a lookup costs a binary search and no
//! parsing at run time).
//!
//! The rules ask this table instead of matching program names: which option
//! runs a command, which argument is a file read, which mode serves a port.

/// What a capability does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Does {
    Exec,
    Read,
    Write,
    Upload,
    Download,
    Serve,
    Connect,
    Load,
}

/// How the program is asked to do it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Option,
    Operands,
    Args,
    Env,
    Stdin,
    Interactive,
    Config,
}

/// What an option's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    None,
    Command,
    Argv,
    Program,
    File,
    Escape,
    Host,
    Code,
}

/// One thing a program can be made to do.
#[derive(Debug)]
pub struct Cap {
    pub does: Does,
    pub via: Via,
    pub takes: Takes,
    pub flags: &'static [&'static str],
    pub args: &'static [&'static str],
    pub env: &'static str,
    pub config: &'static str,
    pub note: &'static str,
}

/// A program and what it can do.
#[derive(Debug)]
pub struct Program {
    pub name: &'static str,
    pub also: &'static [&'static str],
    pub what: &'static str,
    pub caps: &'static [Cap],
}

include!(concat!(env!("OUT_DIR"), "/programs.rs"));

/// Every program in the table, sorted by name.
pub fn all() -> &'static [Program] {
    PROGRAMS
}

/// The entry for `name` (a program name or path basename), trying the name
/// without a version suffix too (`python3.12` -> `python3` -> `python`).
pub fn lookup(name: &str) -> Option<&'static Program> {
    let name = name.rsplit('/').next().unwrap_or(name);
    let mut n = name;
    loop {
        if let Ok(k) = NAMES.binary_search_by(|(k, _)| k.cmp(&n)) {
            return Some(&PROGRAMS[NAMES[k].1]);
        }
        let trimmed = n.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
        if trimmed.len() == n.len() || trimmed.is_empty() {
            return None;
        }
        n = trimmed;
    }
}

impl Program {
    /// Capabilities that do `does`.
    pub fn caps(&self, does: Does) -> impl Iterator<Item = &'static Cap> + use<> {
        let caps: &'static [Cap] = self.caps;
        caps.iter().filter(move |c| c.does == does)
    }
}

impl Cap {
    /// If `word` (at `args[k]`) is one of this option's spellings, the value
    /// it carries: attached (`-eV`, `--rsh=V`, `-oX=V`) or the next word.
    pub fn option_value<'a>(&self, args: &'a [&'a str], k: usize) -> Option<&'a str> {
        let word = args[k];
        for f in self.flags {
            if f.ends_with('=') {
                if let Some(v) = word.strip_prefix(f) {
                    return Some(v);
                }
                continue;
            }
            if word == *f {
                return args.get(k + 1).copied();
            }
            if let Some(rest) = word.strip_prefix(f) {
                if f.starts_with("--") {
                    if let Some(v) = rest.strip_prefix('=') {
                        return Some(v);
                    }
                } else if f.len() == 2 && !rest.is_empty() {
                    return Some(rest);
                }
            }
        }
        None
    }

    /// Whether all of `args` (a mode's words) appear in `argv`, in order.
    pub fn mode_matches(&self, argv: &[&str]) -> bool {
        let mut it = argv.iter();
        self.args.iter().all(|a| it.any(|w| w == a))
    }
}

impl Does {
    pub fn as_str(self) -> &'static str {
        match self {
            Does::Exec => "runs a command",
            Does::Read => "reads a file",
            Does::Write => "writes a file",
            Does::Upload => "uploads",
            Does::Download => "downloads",
            Does::Serve => "serves to the network",
            Does::Connect => "connects to a host",
            Does::Load => "loads code",
        }
    }
}
