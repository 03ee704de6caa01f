//! What programs can be made to do, as data (`programs.toml`, compiled into
//! static tables by `build.rs`, so a lookup costs a binary search and no
//! parsing at run time).
//!
//! The rules ask this table instead of matching program names: which option
//! runs a command, which argument is a file read, which mode serves a port.
//!
//! [`crate::git`] is the same for git: the configuration keys that run programs,
//! and how git reads its config, attributes and hooks.

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
    pub flags: Words,
    pub args: Words,
    pub env: Text,
    pub config: Text,
    /// Programs this option ordinarily names (`rsync -e ssh`, `tar -I zstd`):
    /// those are not asked about.
    pub usual: Words,
    /// For `via = "operands"`: every operand, not only some (an editor
    /// saves every file it opens; `tee` writes every file it is given).
    pub all_operands: bool,
    pub note: Text,
}

/// A program and what it can do.
#[derive(Debug)]
pub struct Program {
    pub name: Text,
    pub also: Words,
    pub what: Text,
    /// What kind of program it is; `Some` makes it known to the rules.
    pub class: Option<Class>,
    /// Its subcommands and what each does (platform CLIs).
    pub subs: Subs,
    /// Options that change what any of its subcommands does.
    pub opts: Opts,
    /// What it does when no listed subcommand or verb is recognised; `None`
    /// for a program that is not judged by subcommand.
    pub default: Option<Effect>,
    /// What it does with no subcommand at all.
    pub bare: Effect,
    /// Whether unlisted subcommands are judged by the verb classes.
    pub verbs: bool,
    /// Words that name a part of the service, never a verb, though the
    /// verb classes list them (`aws logs`, `aws events`, `aws connect`).
    pub nouns: Words,
    pub caps: Caps,
}

/// What kind of program a known program is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Builtin,
    Shell,
    Inspect,
    Text,
    Files,
    Archive,
    Editor,
    Build,
    Compiler,
    Runtime,
    Test,
    Lint,
    Doc,
    Vcs,
    Package,
    Framework,
    Network,
    System,
    Container,
    Cloud,
    Infra,
    Ci,
    Database,
    Secrets,
    Saas,
    /// AI coding agents: a prompt given to one is acted on by its own rules.
    Agent,
    Aq,
}

/// What a subcommand of a platform CLI does, from harmless to dangerous
/// in no particular order: the rules map each to a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// Reads local or remote state and prints nothing secret.
    Read,
    /// Works on local files only: builds, renders, checks, formats.
    Local,
    /// Downloads packages, plug-ins, providers or modules (code it runs).
    Install,
    /// Talks to a remote service in a way that is neither a plain read nor a change.
    Network,
    /// Listens on a port or forwards traffic here.
    Serve,
    /// Creates, changes or deploys remote resources.
    Change,
    /// Deletes remote resources.
    Delete,
    /// Deletes a whole container of remote data at once (a repository, a
    /// project, all of the infrastructure): see [`CONTAINERS`].
    Destroy,
    /// Publishes a package, image or release for others.
    Publish,
    /// Runs code or a shell on a remote host, cluster or service.
    Exec,
    /// Lists the names of secrets, not their values.
    SecretList,
    /// Writes secrets' values into a local file without printing them
    /// (`vercel env pull .env.local`).
    SecretFetch,
    /// Prints a credential file with the secrets' values hidden, or only
    /// partly (`kubectl config view`: client certificates and tokens
    /// redacted, the servers, users and the rest in clear): a look at a
    /// secret location, as `ls ~/.aws` is.
    Redacted,
    /// Prints a secret's value.
    SecretRead,
    /// Prints a named configuration value: a secret when the name is a secret's.
    ValueRead,
    /// Creates, changes or deletes credentials or permissions.
    Credential,
    /// Runs the SQL it is given on a remote database: what the statements
    /// do decides (a `SELECT` reads; a change, or SQL not on the line, asks;
    /// reading a table of password hashes prints secrets).
    Sql,
    /// Prints a whole file it is given, secrets' values among the ordinary
    /// ones (`terraform show -json PLAN`): asked, as a full `printenv` is.
    /// Given no file, it prints the live state: a secret read.
    Dump,
    /// Rewrites a remote branch's history (`mkdocs gh-deploy --force`
    /// pushes gh-pages with `--force`): as `git push --force` does.
    ForcePush,
    /// Runs a build target (`bazel run //api:push_image`): the target's
    /// name decides. One whose words say push, publish, upload, deploy or
    /// release publishes; any other is local work.
    Target,
    /// An option naming the address a server listens on (`mkdocs serve -a
    /// ADDR`): a loopback address is local work, any other serves the
    /// network (`serve`).
    Bind,
}

impl Effect {
    /// Every effect, by the name `programs.toml` and policy files give it.
    pub const ALL: &'static [(&'static str, Effect)] = &[
        ("read", Effect::Read),
        ("local", Effect::Local),
        ("install", Effect::Install),
        ("network", Effect::Network),
        ("serve", Effect::Serve),
        ("change", Effect::Change),
        ("delete", Effect::Delete),
        ("destroy", Effect::Destroy),
        ("publish", Effect::Publish),
        ("exec", Effect::Exec),
        ("secret-list", Effect::SecretList),
        ("secret-fetch", Effect::SecretFetch),
        ("redacted", Effect::Redacted),
        ("secret-read", Effect::SecretRead),
        ("value-read", Effect::ValueRead),
        ("credential", Effect::Credential),
        ("sql", Effect::Sql),
        ("dump", Effect::Dump),
        ("force-push", Effect::ForcePush),
        ("target", Effect::Target),
        ("bind", Effect::Bind),
    ];

    /// The effect a name says (`"secret-read"`).
    pub fn from_name(name: &str) -> Option<Effect> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, e)| *e)
    }

    /// Its name (`"secret-read"`).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, e)| *e == self)
            .map(|(n, _)| *n)
            .unwrap_or("change")
    }
}

/// One subcommand (`repo delete`) and what it does.
#[derive(Debug)]
pub struct Sub {
    pub path: Words,
    pub effect: Effect,
    /// Options that change what it does (`--raw`, `--dry-run`).
    pub opts: Opts,
}

// The tables hold offsets into one text and one array per kind of list,
// not pointers: a static table of `&str` is one relocation per string, and
// the dynamic loader wrote about 12,000 of them (380 KB of pages copied) at
// every start of aq, the hook's included.

/// A string of the tables: its offset and length in their text.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Text(u32, u32);

impl Text {
    /// The string.
    pub fn as_str(self) -> &'static str {
        &TEXT[self.0 as usize..(self.0 + self.1) as usize]
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &'static str {
        self.as_str()
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A list of strings of the tables (a program's aliases, an option's
/// spellings, a subcommand's words).
#[derive(Clone, Copy)]
pub struct Words(u32, u32);

impl Words {
    /// The strings, in order.
    pub fn iter(self) -> impl ExactSizeIterator<Item = &'static str> + DoubleEndedIterator + Clone {
        WORDS[self.0 as usize..(self.0 + self.1) as usize]
            .iter()
            .map(|t| t.as_str())
    }

    /// How many there are.
    pub fn len(self) -> usize {
        self.1 as usize
    }

    /// Whether there are none.
    pub fn is_empty(self) -> bool {
        self.1 == 0
    }

    /// Whether `word` is one of them.
    pub fn contains(self, word: &str) -> bool {
        self.iter().any(|w| w == word)
    }

    /// The `k`th.
    pub fn get(self, k: usize) -> Option<&'static str> {
        self.iter().nth(k)
    }

    /// The first.
    pub fn first(self) -> Option<&'static str> {
        self.get(0)
    }

    /// The last.
    pub fn last(self) -> Option<&'static str> {
        self.iter().next_back()
    }

    /// The strings joined by `sep`.
    pub fn join(self, sep: &str) -> String {
        self.iter().collect::<Vec<_>>().join(sep)
    }

    /// As a vector (for callers that need a slice).
    pub fn to_vec(self) -> Vec<&'static str> {
        self.iter().collect()
    }
}

impl IntoIterator for Words {
    type Item = &'static str;
    type IntoIter = std::iter::Map<std::slice::Iter<'static, Text>, fn(&Text) -> &'static str>;
    fn into_iter(self) -> Self::IntoIter {
        WORDS[self.0 as usize..(self.0 + self.1) as usize]
            .iter()
            .map(|t| t.as_str())
    }
}

impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Options of a program or subcommand and what each does.
#[derive(Clone, Copy, Default)]
pub struct Opts(u32, u32);

impl Opts {
    /// Each option's spelling and its effect.
    pub fn iter(self) -> impl ExactSizeIterator<Item = (&'static str, Effect)> + Clone {
        OPTS[self.0 as usize..(self.0 + self.1) as usize]
            .iter()
            .map(|(t, e)| (t.as_str(), *e))
    }

    /// Whether there are none.
    pub fn is_empty(self) -> bool {
        self.1 == 0
    }
}

impl IntoIterator for Opts {
    type Item = (&'static str, Effect);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'static, (Text, Effect)>,
        fn(&(Text, Effect)) -> (&'static str, Effect),
    >;
    fn into_iter(self) -> Self::IntoIter {
        OPTS[self.0 as usize..(self.0 + self.1) as usize]
            .iter()
            .map(|(t, e)| (t.as_str(), *e))
    }
}

impl std::fmt::Debug for Opts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A run of one of the tables' arrays, read as the slice it is: a
/// program's subcommands ([`Subs`]) or capabilities ([`Caps`]).
macro_rules! run_of {
    ($(#[$doc:meta])* $name:ident, $item:ty, $array:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $name(u32, u32);

        impl $name {
            /// The entries, for as long as the program lives.
            pub fn all(self) -> &'static [$item] {
                &$array[self.0 as usize..(self.0 + self.1) as usize]
            }
        }

        impl std::ops::Deref for $name {
            type Target = [$item];
            fn deref(&self) -> &'static [$item] {
                self.all()
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&**self, f)
            }
        }
    };
}

run_of!(
    /// A program's subcommands (a run of the subcommands' array).
    Subs,
    Sub,
    SUBS
);
run_of!(
    /// A program's capabilities (a run of the capabilities' array).
    Caps,
    Cap,
    CAPS
);

pub mod places;

include!(concat!(env!("OUT_DIR"), "/programs.rs"));

/// The class of a program the rules know, by its exact name (or a family
/// prefix such as `python` or `gcc-`).
pub fn known_class(name: &str) -> Option<Class> {
    if let Ok(k) = KNOWN.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
        return Some(KNOWN[k].1);
    }
    PREFIXES
        .iter()
        .find(|(p, _)| name.starts_with(p.as_str()))
        .map(|(_, c)| *c)
}

/// What a subcommand word does by its verb (`list`, `describe-instances`,
/// `config:get`, `delete-job`), from the verb classes of `programs.toml`.
pub fn verb_effect(word: &str) -> Option<Effect> {
    verb_match(word).map(|(e, _)| e)
}

/// Like [`verb_effect`], and whether the word is the verb itself (or the
/// part after its colon) rather than only starting with it: `update` is
/// surely a verb, `new-checkout` may be a name.
pub fn verb_match(word: &str) -> Option<(Effect, bool)> {
    let find = |w: &str| {
        VERBS
            .binary_search_by(|(v, _)| v.as_str().cmp(w))
            .ok()
            .map(|k| VERBS[k].1)
    };
    if let Some(e) = find(word) {
        return Some((e, true));
    }
    // `apps:destroy`, `phone-numbers:list`: the part after the last colon.
    if let Some((_, last)) = word.rsplit_once(':')
        && let Some(e) = find(last)
    {
        return Some((e, true));
    }
    // `describe-instances`, `delete-job`, `get-caller-identity`: the
    // longest leading parts that are a verb (`get-secret-value` is
    // `get-secret`, `get-instances` is `get`).
    let mut end = word.len();
    while let Some(k) = word[..end].rfind(['-', '_']) {
        if let Some(e) = find(&word[..k]) {
            return Some((e, false));
        }
        end = k;
    }
    None
}

/// A CamelCase API action (`DescribeInstances`, `GetSecretValue`) in the
/// verb classes' spelling: `describe-instances`, `get-secret-value`. Other
/// words are only lowercased.
pub fn verb_spelling(word: &str) -> String {
    let camel = word.starts_with(|c: char| c.is_ascii_uppercase())
        && word.chars().any(|c| c.is_ascii_lowercase())
        && word.chars().all(|c| c.is_ascii_alphanumeric());
    if !camel {
        return word.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(word.len() + 4);
    for (k, c) in word.char_indices() {
        if c.is_ascii_uppercase() && k > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Every verb of the verb classes, with what it does.
pub fn verbs() -> impl ExactSizeIterator<Item = (&'static str, Effect)> {
    VERBS.iter().map(|(v, e)| (v.as_str(), *e))
}

/// Every program in the table, sorted by name.
pub fn all() -> &'static [Program] {
    &PROGRAMS
}

/// The entry for `name` (a program name or path basename), trying the name
/// without a version suffix too (`python3.12` -> `python3` -> `python`).
pub fn lookup(name: &str) -> Option<&'static Program> {
    let name = name.rsplit('/').next().unwrap_or(name);
    let mut n = name;
    loop {
        if let Ok(k) = NAMES.binary_search_by(|(k, _)| k.as_str().cmp(n)) {
            return Some(&PROGRAMS[NAMES[k].1 as usize]);
        }
        let trimmed = n.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
        if trimmed.len() == n.len() || trimmed.is_empty() {
            return None;
        }
        n = trimmed;
    }
}

impl Program {
    /// Whether `word` is a word of one of its subcommands (`kubeconfig` in
    /// `doctl kubernetes cluster kubeconfig save`): a verb or a noun of
    /// the command, not a file named on the line.
    pub fn is_sub_word(&self, word: &str) -> bool {
        self.subs.iter().any(|s| s.path.contains(word))
    }

    /// Capabilities that do `does`.
    pub fn caps(&self, does: Does) -> impl Iterator<Item = &'static Cap> + use<> {
        let caps: &'static [Cap] = self.caps.all();
        caps.iter().filter(move |c| c.does == does)
    }
}

impl Cap {
    /// If `word` (at `args[k]`) is one of this option's spellings, the value
    /// it carries: attached (`-eV`, `--rsh=V`, `-oX=V`) or the next word.
    pub fn option_value<'a>(&self, args: &'a [&'a str], k: usize) -> Option<&'a str> {
        let word = args[k];
        // Every flag starts with `-` or is a `key=` prefix (`dd if=`); after
        // `--`, words are operands (`runuser -u u -- bash -c CMD`: bash's).
        if !word.starts_with('-') && !word.contains('=') || args[..k].contains(&"--") {
            return None;
        }
        for f in self.flags {
            // "-o ProxyCommand=": the option, then a word starting with KEY=
            // (matched without regard to case, as ssh does).
            if let Some((opt, key)) = f.split_once(' ') {
                if word == opt
                    && let Some(next) = args.get(k + 1)
                    && next.len() >= key.len()
                    && next.is_char_boundary(key.len())
                    && next[..key.len()].eq_ignore_ascii_case(key)
                {
                    return Some(&next[key.len()..]);
                }
                continue;
            }
            if f.ends_with('=') {
                if let Some(v) = word.strip_prefix(f) {
                    return Some(v);
                }
                continue;
            }
            if word == f {
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
        self.args.iter().all(|a| it.any(|w| *w == a))
    }
}

/// The shell command an escape-language command runs (`:!id`, `!id`,
/// `shell id`, `system id`, `:call system('id')`, `:sh`), if it runs one.
/// Interpreter escapes (`:py3 CODE`, `:lua CODE`, `python CODE`) come back
/// as `python3 -c CODE` and the like, so the interpreter's code is judged.
pub fn escape_command(value: &str) -> Option<String> {
    // `:!id` (vim), `\! id` (psql, mysql), `.shell id` (sqlite3).
    let v = value.trim_start_matches(|c: char| c == ':' || c == '\\' || c.is_whitespace());
    let v = v
        .strip_prefix('.')
        .filter(|r| r.starts_with("sh") || r.starts_with("system"))
        .unwrap_or(v);
    if let Some(rest) = v.strip_prefix('!') {
        let rest = rest.trim();
        return Some(if rest.is_empty() {
            "sh".into()
        } else {
            rest.into()
        });
    }
    let (head, rest) = v.split_once(char::is_whitespace).unwrap_or((v, ""));
    let rest = rest.trim();
    match head {
        "sh" | "shell" | "terminal" | "term" => Some(if rest.is_empty() {
            "sh".into()
        } else {
            rest.into()
        }),
        "system" => (!rest.is_empty()).then(|| rest.into()),
        // `:silent !id`, `:r !id`, `:w !sh`, `:exe "!id"`: the rest is an escape.
        "silent" | "silent!" | "r" | "read" | "w" | "write" | "exe" | "execute" => {
            escape_command(rest.trim_matches(|c| c == '"' || c == '\''))
        }
        h if h.starts_with("r!") || h.starts_with("read!") => {
            let cmd = v.split_once('!').map(|(_, c)| c.trim()).unwrap_or("");
            (!cmd.is_empty()).then(|| cmd.into())
        }
        "py" | "py3" | "python" | "python3" | "pyx" | "pythonx" | "py3do" | "pydo" => {
            Some(format!("python3 -c {}", quote(rest)))
        }
        "lua" | "luado" => Some(format!("lua -e {}", quote(rest))),
        "perl" | "perldo" => Some(format!("perl -e {}", quote(rest))),
        "ruby" | "rubydo" => Some(format!("ruby -e {}", quote(rest))),
        "call" | "eval" | "let" | "echo" => {
            let start = v.find("system(").or_else(|| v.find("systemlist("))?;
            let inner = &v[start..];
            let open = inner.find('(')? + 1;
            let arg = inner[open..].trim_start();
            let q = arg.chars().next().filter(|c| *c == '\'' || *c == '"')?;
            let body = &arg[1..];
            let end = body.find(q)?;
            Some(body[..end].to_string())
        }
        _ => None,
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
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

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Option => "option",
            Via::Operands => "operands",
            Via::Args => "args",
            Via::Env => "env",
            Via::Stdin => "stdin",
            Via::Interactive => "interactive",
            Via::Config => "config",
        }
    }
}

impl Takes {
    pub fn as_str(self) -> &'static str {
        match self {
            Takes::None => "",
            Takes::Command => "a shell command",
            Takes::Argv => "a command and its arguments",
            Takes::Program => "a program to run",
            Takes::File => "a file",
            Takes::Escape => "its own commands (`!CMD` runs CMD)",
            Takes::Host => "a host",
            Takes::Code => "program text",
        }
    }
}

impl Cap {
    /// How the capability is reached, in a few words: `option -e (a shell
    /// command)`, `mode -m http.server`, `variable LESSOPEN`.
    pub fn how(&self) -> String {
        match self.via {
            Via::Option => format!("option {} ({})", self.flags.join(", "), self.takes.as_str()),
            Via::Args => format!("mode `{}`", self.args.join(" ")),
            Via::Env => format!("variable {}", self.env),
            Via::Config => format!("config file {}", self.config),
            Via::Operands => "its operands".to_string(),
            Via::Stdin => "its standard input".to_string(),
            Via::Interactive => "its prompt or UI (not decided from the line)".to_string(),
        }
    }
}

impl std::fmt::Display for Program {
    /// What `aq explain --program NAME` prints.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "program:  {}", self.name)?;
        if !self.also.is_empty() {
            writeln!(f, "also:     {}", self.also.join(", "))?;
        }
        writeln!(f, "what:     {}", self.what)?;
        for does in [
            Does::Exec,
            Does::Read,
            Does::Write,
            Does::Upload,
            Does::Download,
            Does::Serve,
            Does::Connect,
            Does::Load,
        ] {
            let caps: Vec<&Cap> = self.caps(does).collect();
            if caps.is_empty() {
                continue;
            }
            writeln!(f, "\n{}:", does.as_str())?;
            for c in caps {
                writeln!(f, "  - through {}", c.how())?;
                writeln!(f, "    {}", c.note)?;
                if !c.usual.is_empty() {
                    writeln!(f, "    not asked about: {}", c.usual.join(", "))?;
                }
            }
        }
        Ok(())
    }
}

/// Every name in the table (programs and their aliases), sorted.
pub fn names() -> impl Iterator<Item = &'static str> {
    NAMES.iter().map(|(n, _)| n.as_str())
}

/// Every name the rules know a program by: the table's names and aliases,
/// and the plain names of `names.toml` (not sorted as one list).
pub fn known_names() -> impl Iterator<Item = &'static str> {
    NAMES
        .iter()
        .map(|(n, _)| n.as_str())
        .chain(KNOWN.iter().map(|(n, _)| n.as_str()))
}

/// The table's own spelling of `name`, if the table has it (a binary
/// search, for callers that need a `&'static str`).
pub(crate) fn known_name(name: &str) -> Option<&'static str> {
    NAMES
        .binary_search_by(|(k, _)| k.as_str().cmp(name))
        .ok()
        .map(|k| NAMES[k].0.as_str())
}

/// The tables' own spelling of `name` when it is a program the rules know
/// by name: one of the table, or a plain name of `names.toml` (`rm`,
/// `mkdir`). Name prefixes of families (`python3.12`) are not spelled out.
pub fn known_program_name(name: &str) -> Option<&'static str> {
    known_name(name).or_else(|| {
        KNOWN
            .binary_search_by(|(k, _)| k.as_str().cmp(name))
            .ok()
            .map(|k| KNOWN[k].0.as_str())
    })
}

/// What a platform's delete removes whole, when the words of its
/// subcommand name one of these (`repo delete`, `delete namespace`,
/// `group delete`, `apps:destroy`): a delete of everything inside at once,
/// which [`Effect::Destroy`] says.
pub const CONTAINERS: &[&str] = &[
    "account",
    "accounts",
    "app",
    "apps",
    "bucket",
    "buckets",
    "cluster",
    "clusters",
    "database",
    "databases",
    "db",
    "dbs",
    "group",
    "keyspace",
    "namespace",
    "namespaces",
    "ns",
    "org",
    "organization",
    "organizations",
    "orgs",
    "project",
    "projects",
    "repo",
    "repos",
    "repository",
    "repositories",
    "schema",
    "site",
    "sites",
    "stack",
    "stacks",
    "subscription",
    "workspace",
    "workspaces",
    "zone",
    "zones",
];
