//! One-line grants (`aq allow`, `aq deny`): a change to the user's policy
//! file made without editing TOML by hand, and kept as the user wrote the
//! rest of it (comments, order, spacing: `toml_edit`).
//!
//! Pure: text in, text out. The caller reads and writes the file (a backup,
//! an atomic rename) and checks the result with [`crate::config::parse_layer`]
//! before it writes. Grants live in the **user's** file only: a repository
//! cannot add them for the agent's next session.
//!
//! | grant | where it goes |
//! |---|---|
//! | `allow PATH` | `[profile.P] writable` |
//! | `allow --read-only PATH` | `[profile.P] readable` |
//! | `allow --here [--read-only] PATH` | `[workspace."WS"] writable` / `readable`: sessions of this workspace only |
//! | `allow --net HOST[:PORT]` | `[network] allow` |
//! | `allow --net HOST --methods GET,HEAD [--path /v1/]` | `[network] allow` and `[network.http."HOST"]` (only those requests) |
//! | `allow --command 'PROGRAM [SUBCOMMAND]'` | a `[[rule]]` with `action = "allow"`, id `grant-allow-...` |
//! | `deny PATH` | `[paths] sensitive` (masked in every profile, and the secret rules fire on it) |
//! | `deny --net HOST[:PORT]` | out of `[network] allow` (the network is off unless allowed) |
//! | `deny --command ...` | a `[[rule]]` with `action = "block"`, id `grant-block-...` |

use std::path::{Component, Path, PathBuf};

pub use crate::error::GrantError;

use toml_edit::{Array, DocumentMut, Item, Table, value};

use aq_knowledge::credentials::{self, Mask, Place};

/// What a grant is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A path (`~/...` or absolute), already normalized by [`normalize_path`].
    Path(String),
    /// A host, `*.` for subdomains, `:PORT` for one port.
    Net(String),
    /// A host, and the only requests that may go to it (an HTTP rule: the
    /// broker reads its HTTPS requests).
    NetHttp {
        /// One host name, lower case.
        host: String,
        /// Methods allowed (upper case).
        methods: Vec<String>,
        /// Path prefixes allowed; empty: any.
        paths: Vec<String>,
    },
    /// A program, and optionally its subcommand.
    Command {
        /// The program's base name.
        program: String,
        /// Its first non-option argument.
        subcommand: Option<String>,
    },
}

/// One grant, as `aq allow` or `aq deny` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// `true` for `aq allow`, `false` for `aq deny`.
    pub allow: bool,
    /// For `allow PATH`: read only, not write.
    pub read_only: bool,
    /// What it is about.
    pub target: Target,
    /// The profile a path grant applies to.
    pub profile: String,
    /// Only in sessions of this workspace (`--here`): a path grant goes to
    /// `[workspace."PATH"]` instead of the profile.
    pub here: Option<String>,
}

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The entry was added where the line says.
    Added(String),
    /// It was there already.
    AlreadyThere(String),
    /// It was taken out.
    Removed(String),
    /// `--remove` of something that is not there.
    NotThere(String),
}

/// A path as a grant stores it: `~/...` under the home, absolute otherwise,
/// with `.` and `..` resolved against `cwd` (no symlinks followed: the user's
/// words, made absolute).
pub fn normalize_path(raw: &str, cwd: &Path, home: Option<&Path>) -> Result<String, GrantError> {
    let expanded = match (raw.strip_prefix("~/"), raw == "~", home) {
        (Some(rest), _, Some(h)) => h.join(rest),
        (None, true, Some(h)) => h.to_path_buf(),
        (Some(_), _, None) | (None, true, None) => {
            return Err(GrantError::NoHome);
        }
        _ => cwd.join(raw),
    };
    let mut clean = PathBuf::from("/");
    for c in expanded.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::Normal(n) => clean.push(n),
            _ => {}
        }
    }
    Ok(match home.and_then(|h| clean.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => clean.display().to_string(),
    })
}

/// Why a path may not be allowed (read or write), if it may not: `/`, the
/// home itself, and credential locations, inside them or holding them.
pub fn refuse_path(path: &str, allow: bool) -> Option<String> {
    if path == "/" || path == "~" {
        return Some(format!(
            "`{path}` is too broad: name the directory the work needs"
        ));
    }
    if !allow {
        return None;
    }
    credential_location(path)
        .map(|s| {
            format!(
                "`{path}` would open the credential location `{s}`, which every sandbox masks; \
                 pass what a tool needs another way (`[session] env_pass` for an agent socket or token)"
            )
        })
}

/// The credential location (`~/.ssh`, `~/.npmrc`, ...) `path` is or is
/// inside, or the directory masked whole it holds (`~/.config` holds
/// `~/.config/gh`): a catalog row the sandbox masks. A directory that holds
/// a masked file (`~/.cargo`, `~/.cargo/credentials.toml`) is not one: the
/// mask stays on top of a grant.
pub(crate) fn credential_location(path: &str) -> Option<&'static str> {
    let under =
        |a: &str, b: &str| a == b || a.starts_with(&format!("{}/", b.trim_end_matches('/')));
    credentials::in_place(Place::Home)
        .filter(|c| c.masked())
        .find(|c| {
            let s = c.mask_path();
            under(path, s) || (matches!(c.mask, Mask::Dir(_)) && under(s, path))
        })
        .map(|c| c.mask_path())
}

/// A `[[rule]]` id for a command grant: `grant-allow-terraform-plan`.
pub(crate) fn rule_id(allow: bool, program: &str, subcommand: Option<&str>) -> String {
    let mut id = format!("grant-{}-", if allow { "allow" } else { "block" });
    for word in std::iter::once(program).chain(subcommand) {
        for c in word.chars() {
            id.push(if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            });
        }
        id.push('-');
    }
    let mut out = String::new();
    for c in id.trim_end_matches('-').chars() {
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    out
}

/// Where `grant` goes in the policy file, as `aq grants` names it
/// (`[profile.strict] writable`, `[network] allow`, `[[rule]]`), and its
/// entry there (the path, the host, the rule id).
pub fn place(grant: &Grant) -> (String, String) {
    match &grant.target {
        Target::Path(p) if grant.allow => {
            let key = if grant.read_only {
                "readable"
            } else {
                "writable"
            };
            let table = match &grant.here {
                Some(ws) => format!("[workspace.\"{ws}\"]"),
                None => format!("[profile.{}]", grant.profile),
            };
            (format!("{table} {key}"), p.clone())
        }
        Target::Path(p) => ("[paths] sensitive".to_string(), p.clone()),
        Target::Net(host) => ("[network] allow".to_string(), host.clone()),
        Target::NetHttp { host, .. } => (format!("[network.http.\"{host}\"]"), host.clone()),
        Target::Command {
            program,
            subcommand,
        } => (
            "[[rule]]".to_string(),
            rule_id(grant.allow, program, subcommand.as_deref()),
        ),
    }
}

/// Applies `grant` (or takes it back with `remove`) to the policy file's
/// text. An empty text is a new file.
pub fn edit(text: &str, grant: &Grant, remove: bool) -> Result<(String, Change), GrantError> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|source| GrantError::ParsePolicyFile { source })?;
    if !doc.contains_key("version") && text.trim().is_empty() {
        doc["version"] = value(1);
    }
    let (where_, _) = place(grant);
    let change = match &grant.target {
        Target::Path(p) if grant.allow && grant.here.is_some() => {
            let key = if grant.read_only {
                "readable"
            } else {
                "writable"
            };
            let ws = grant.here.as_deref().unwrap_or_default();
            let table = table_in(&mut doc, &["workspace", ws])?;
            list_edit(table, key, p, remove, &where_)?
        }
        Target::Path(p) if grant.allow => {
            let key = if grant.read_only {
                "readable"
            } else {
                "writable"
            };
            let profile = table_in(&mut doc, &["profile", &grant.profile])?;
            list_edit(profile, key, p, remove, &where_)?
        }
        Target::Path(p) => {
            let paths = table_in(&mut doc, &["paths"])?;
            list_edit(paths, "sensitive", p, remove, &where_)?
        }
        Target::Net(host) if grant.allow => {
            let network = table_in(&mut doc, &["network"])?;
            list_edit(network, "allow", host, remove, &where_)?
        }
        Target::Net(host) => {
            // The network is off unless allowed: denying is taking it out.
            let network = table_in(&mut doc, &["network"])?;
            match list_edit(network, "allow", host, true, "[network] allow")? {
                Change::Removed(w) => Change::Removed(w),
                _ if remove => Change::NotThere(format!("{host} in [network] allow")),
                _ => {
                    return Err(GrantError::HostNotAllowed { host: host.clone() });
                }
            }
        }
        Target::NetHttp {
            host,
            methods,
            paths,
        } => {
            let rule = format!(
                "{} {host}{}",
                methods.join(", "),
                if paths.is_empty() {
                    String::new()
                } else {
                    format!(" under {}", paths.join(", "))
                }
            );
            if remove {
                let network = table_in(&mut doc, &["network"])?;
                let http = network.get_mut("http").and_then(Item::as_table_mut);
                match http.and_then(|t| t.remove(host)) {
                    Some(_) => Change::Removed(format!("the HTTP rule of {host} ({where_})")),
                    None => Change::NotThere(format!("an HTTP rule of {host} ({where_})")),
                }
            } else {
                let network = table_in(&mut doc, &["network"])?;
                let _ = list_edit(network, "allow", host, false, "[network] allow")?;
                let table = table_in(&mut doc, &["network", "http", host])?;
                let list = |items: &[String]| {
                    let mut a = Array::new();
                    for i in items {
                        a.push(i.as_str());
                    }
                    value(a)
                };
                let strings = |key: &str| -> Vec<String> {
                    table
                        .get(key)
                        .and_then(Item::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let same = table.contains_key("methods")
                    && strings("methods") == *methods
                    && strings("paths") == *paths;
                if same {
                    Change::AlreadyThere(format!("{rule} ({where_})"))
                } else {
                    table.insert("methods", list(methods));
                    if paths.is_empty() {
                        table.remove("paths");
                    } else {
                        table.insert("paths", list(paths));
                    }
                    Change::Added(format!("{rule} ({where_})"))
                }
            }
        }
        Target::Command {
            program,
            subcommand,
        } => command_rule(
            &mut doc,
            grant.allow,
            program,
            subcommand.as_deref(),
            remove,
        )?,
    };
    Ok((doc.to_string(), change))
}

/// The table at `path` (made, as a normal table, when missing).
fn table_in<'a>(doc: &'a mut DocumentMut, path: &[&str]) -> Result<&'a mut Table, GrantError> {
    let mut table = doc.as_table_mut();
    for (i, key) in path.iter().enumerate() {
        let entry = table.entry(key).or_insert_with(|| {
            let mut t = Table::new();
            // `[profile.strict]`, not an empty `[profile]` above it.
            t.set_implicit(i + 1 < path.len());
            Item::Table(t)
        });
        table = entry.as_table_mut().ok_or_else(|| GrantError::NotATable {
            key: path[..=i].join("."),
        })?;
    }
    Ok(table)
}

/// Adds `entry` to the list `key` of `table`, or takes it out.
fn list_edit(
    table: &mut Table,
    key: &str,
    entry: &str,
    remove: bool,
    where_: &str,
) -> Result<Change, GrantError> {
    let what = format!("{entry} in {where_}");
    if !table.contains_key(key) {
        if remove {
            return Ok(Change::NotThere(what));
        }
        table.insert(key, value(Array::new()));
    }
    let list = table[key]
        .as_array_mut()
        .ok_or_else(|| GrantError::NotAList {
            place: where_.to_string(),
        })?;
    let at = list.iter().position(|v| v.as_str() == Some(entry));
    Ok(match (at, remove) {
        (Some(i), true) => {
            list.remove(i);
            Change::Removed(what)
        }
        (None, true) => Change::NotThere(what),
        (Some(_), false) => Change::AlreadyThere(what),
        (None, false) => {
            list.push(entry);
            Change::Added(what)
        }
    })
}

/// Adds or removes the `[[rule]]` of a command grant.
fn command_rule(
    doc: &mut DocumentMut,
    allow: bool,
    program: &str,
    subcommand: Option<&str>,
    remove: bool,
) -> Result<Change, GrantError> {
    let id = rule_id(allow, program, subcommand);
    let what = format!("[[rule]] {id}");
    if !doc.contains_key("rule") {
        if remove {
            return Ok(Change::NotThere(what));
        }
        doc.insert("rule", Item::ArrayOfTables(Default::default()));
    }
    let rules = doc["rule"]
        .as_array_of_tables_mut()
        .ok_or(GrantError::RulesNotTables)?;
    let at = rules
        .iter()
        .position(|t| t.get("id").and_then(|v| v.as_str()) == Some(id.as_str()));
    Ok(match (at, remove) {
        (Some(i), true) => {
            rules.remove(i);
            Change::Removed(what)
        }
        (None, true) => Change::NotThere(what),
        (Some(_), false) => Change::AlreadyThere(what),
        (None, false) => {
            let words = match subcommand {
                Some(s) => format!("{program} {s}"),
                None => program.to_string(),
            };
            let mut t = Table::new();
            t.insert("id", value(id.clone()));
            t.insert("action", value(if allow { "allow" } else { "block" }));
            t.insert(
                "why",
                value(format!(
                    "{} with `aq {}`",
                    if allow { "allowed" } else { "blocked" },
                    if allow {
                        "allow --command"
                    } else {
                        "deny --command"
                    }
                )),
            );
            t.insert("program", value(Array::from_iter([program])));
            if let Some(s) = subcommand {
                t.insert("subcommand", value(Array::from_iter([s])));
            }
            rules.push(t);
            Change::Added(format!("{what} ({words})"))
        }
    })
}

/// One grant in a policy file, for `aq grants`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The line that would make it (`aq allow --read-only ~/data`).
    pub line: String,
    /// Where it is (`[profile.strict] readable`).
    pub place: String,
}

/// The grants a policy file holds, as the lines that would make them.
pub fn list(text: &str) -> Result<Vec<Listed>, GrantError> {
    let doc: DocumentMut = text
        .parse()
        .map_err(|source| GrantError::ParsePolicyFile { source })?;
    let mut out = Vec::new();
    let strings = |item: Option<&Item>| -> Vec<String> {
        item.and_then(Item::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(profiles) = doc.get("profile").and_then(Item::as_table) {
        for (name, t) in profiles.iter() {
            let flag = if name == "strict" {
                String::new()
            } else {
                format!(" --profile {name}")
            };
            for p in strings(t.get("writable")) {
                out.push(Listed {
                    line: format!("aq allow{flag} {p}"),
                    place: format!("[profile.{name}] writable"),
                });
            }
            for p in strings(t.get("readable")) {
                out.push(Listed {
                    line: format!("aq allow --read-only{flag} {p}"),
                    place: format!("[profile.{name}] readable"),
                });
            }
        }
    }
    if let Some(workspaces) = doc.get("workspace").and_then(Item::as_table) {
        for (ws, t) in workspaces.iter() {
            for (key, flag) in [("writable", ""), ("readable", " --read-only")] {
                for p in strings(t.get(key)) {
                    out.push(Listed {
                        line: format!("aq allow --here{flag} {p}"),
                        place: format!("[workspace.\"{ws}\"] {key}"),
                    });
                }
            }
        }
    }
    for h in strings(doc.get("network").and_then(|n| n.get("allow"))) {
        out.push(Listed {
            line: format!("aq allow --net {h}"),
            place: "[network] allow".to_string(),
        });
    }
    for p in strings(doc.get("paths").and_then(|n| n.get("sensitive"))) {
        out.push(Listed {
            line: format!("aq deny {p}"),
            place: "[paths] sensitive".to_string(),
        });
    }
    if let Some(rules) = doc.get("rule").and_then(Item::as_array_of_tables) {
        for r in rules.iter() {
            let id = r.get("id").and_then(|v| v.as_str()).unwrap_or_default();
            let verb = if id.starts_with("grant-allow-") {
                "allow"
            } else if id.starts_with("grant-block-") {
                "deny"
            } else {
                continue;
            };
            let words: Vec<String> = strings(r.get("program"))
                .into_iter()
                .chain(strings(r.get("subcommand")))
                .collect();
            out.push(Listed {
                line: format!("aq {verb} --command '{}'", words.join(" ")),
                place: format!("[[rule]] {id}"),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(allow: bool, target: Target) -> Grant {
        Grant {
            allow,
            read_only: false,
            target,
            profile: "strict".to_string(),
            here: None,
        }
    }

    #[test]
    fn a_grant_keeps_the_file_as_the_user_wrote_it() {
        let text = "# my policy\nversion = 1\n\n[session]\nprofile = \"strict\"  # the default\n";
        let g = grant(true, Target::Path("~/.cache/acme".to_string()));
        let (out, change) = edit(text, &g, false).unwrap();
        assert!(out.starts_with(text), "{out}");
        assert!(
            out.contains("[profile.strict]\nwritable = [\"~/.cache/acme\"]"),
            "{out}"
        );
        assert!(!out.contains("[profile]\n"), "{out}");
        assert_eq!(
            change,
            Change::Added("~/.cache/acme in [profile.strict] writable".to_string())
        );
        crate::config::parse_layer("policy.toml", &out).unwrap();
        // Twice is once; --remove takes it back to an empty list.
        let (again, change) = edit(&out, &g, false).unwrap();
        assert_eq!(again, out);
        assert!(matches!(change, Change::AlreadyThere(_)));
        let (back, change) = edit(&out, &g, true).unwrap();
        assert!(matches!(change, Change::Removed(_)));
        assert!(back.contains("writable = []"), "{back}");
        crate::config::parse_layer("policy.toml", &back).unwrap();
    }

    #[test]
    fn every_kind_of_grant_lands_where_the_policy_reads_it() {
        let mut text = String::new();
        for g in [
            grant(true, Target::Net("registry.npmjs.org".to_string())),
            Grant {
                read_only: true,
                profile: "dev".to_string(),
                ..grant(true, Target::Path("/srv/data".to_string()))
            },
            grant(false, Target::Path("~/.config/acme".to_string())),
            grant(
                true,
                Target::Command {
                    program: "terraform".to_string(),
                    subcommand: Some("plan".to_string()),
                },
            ),
            grant(
                false,
                Target::Command {
                    program: "kubectl".to_string(),
                    subcommand: None,
                },
            ),
        ] {
            text = edit(&text, &g, false).unwrap().0;
        }
        let layer = crate::config::parse_layer("policy.toml", &text).unwrap();
        assert!(
            format!("{layer:?}").contains("grant-allow-terraform-plan"),
            "{text}"
        );
        let lines: Vec<String> = list(&text).unwrap().into_iter().map(|l| l.line).collect();
        assert_eq!(
            lines,
            vec![
                "aq allow --read-only --profile dev /srv/data",
                "aq allow --net registry.npmjs.org",
                "aq deny ~/.config/acme",
                "aq allow --command 'terraform plan'",
                "aq deny --command 'kubectl'",
            ],
            "{text}"
        );
    }

    #[test]
    fn a_grant_is_placed_where_aq_grants_and_policy_show_name_it() {
        let mut g = grant(true, Target::Path("~/data".to_string()));
        assert_eq!(
            place(&g),
            (
                "[profile.strict] writable".to_string(),
                "~/data".to_string()
            )
        );
        g.read_only = true;
        g.here = Some("/src/app".to_string());
        assert_eq!(place(&g).0, "[workspace.\"/src/app\"] readable");
        let http = grant(
            true,
            Target::NetHttp {
                host: "api.example.invalid".to_string(),
                methods: vec!["GET".into(), "HEAD".into()],
                paths: vec!["/v1/".into()],
            },
        );
        let (text, change) = edit("", &http, false).unwrap();
        assert!(matches!(change, Change::Added(_)), "{change:?}");
        assert!(
            text.contains("[network.http.\"api.example.invalid\"]\nmethods = [\"GET\", \"HEAD\"]\npaths = [\"/v1/\"]"),
            "{text}"
        );
        assert!(text.contains("allow = [\"api.example.invalid\"]"), "{text}");
        crate::config::parse_layer("policy.toml", &text).unwrap();
        assert!(matches!(
            edit(&text, &http, false).unwrap().1,
            Change::AlreadyThere(_)
        ));
        let (gone, change) = edit(&text, &http, true).unwrap();
        assert!(matches!(change, Change::Removed(_)), "{change:?}");
        assert!(!gone.contains("methods"), "{gone}");
        let net = grant(true, Target::Net("x.example.invalid".to_string()));
        assert_eq!(place(&net).0, "[network] allow");
        let (text, change) = edit("", &net, false).unwrap();
        assert_eq!(
            change,
            Change::Added("x.example.invalid in [network] allow".to_string())
        );
        let listed = list(&text).unwrap();
        assert_eq!(listed[0].place, place(&net).0);
    }

    #[test]
    fn denying_a_host_takes_it_out_and_a_host_never_allowed_is_explained() {
        let g = grant(true, Target::Net("example.invalid".to_string()));
        let (text, _) = edit("", &g, false).unwrap();
        let deny = grant(false, Target::Net("example.invalid".to_string()));
        let (out, change) = edit(&text, &deny, false).unwrap();
        assert!(matches!(change, Change::Removed(_)));
        assert!(out.contains("allow = []"), "{out}");
        let e = edit(&out, &deny, false).unwrap_err().to_string();
        assert!(e.contains("does not allow example.invalid"), "{e}");
    }

    #[test]
    fn broad_and_credential_paths_are_refused() {
        assert!(refuse_path("/", true).is_some());
        assert!(refuse_path("~", true).is_some());
        assert!(refuse_path("~", false).is_some());
        assert!(refuse_path("~/.ssh", true).unwrap().contains("~/.ssh"));
        assert!(refuse_path("~/.ssh/id_rsa", true).is_some());
        // Holding one: ~/.config holds ~/.config/gh (and the rest of the
        // catalog's directories under it).
        assert!(
            refuse_path("~/.config", true)
                .unwrap()
                .contains("credential location `~/.config/")
        );
        assert_eq!(refuse_path("~/.cache/acme", true), None);
        // Inside one, or one that is masked only when it holds a token.
        assert!(refuse_path("~/.mozilla/firefox/x.default", true).is_some());
        assert!(refuse_path("~/.npmrc", true).is_some());
        // A directory holding a masked file is not one: the mask stays on top.
        assert_eq!(refuse_path("~/.cargo", true), None);
        assert_eq!(refuse_path("~/.m2", true), None);
        assert_eq!(refuse_path("~/.ssh", false), None);
    }

    #[test]
    fn paths_are_stored_under_the_home_or_absolute() {
        let home = Path::new("/home/u");
        let cwd = Path::new("/home/u/src/app");
        assert_eq!(normalize_path("~/x/../y", cwd, Some(home)).unwrap(), "~/y");
        assert_eq!(
            normalize_path("../lib", cwd, Some(home)).unwrap(),
            "~/src/lib"
        );
        assert_eq!(
            normalize_path("/srv/./d/", cwd, Some(home)).unwrap(),
            "/srv/d"
        );
        assert_eq!(
            normalize_path("..", Path::new("/home/u/src"), Some(home)).unwrap(),
            "~"
        );
        assert_eq!(
            rule_id(true, "docker-compose", Some("Up")),
            "grant-allow-docker-compose-up"
        );
    }
}
