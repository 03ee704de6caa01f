//! Credentials: reading, copying, sending or hunting for them, printing
//! secret variables, and looking around where they live.

use aq_shell::{Command, Input, Word};

use super::{
    Ctx, find_roots, flag_values_text, has_flag, is_exclusion, is_flag, operands,
    placeholder_values,
};
use crate::catalog::RuleId;
use crate::paths::{self, NormPath};

/// What a command does with a path it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Read,
    Copy,
    Send,
    Metadata,
}

/// What a git history command shows of the paths it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HistoryContent {
    /// Only blobs named by revision (`HEAD:.env`): `git log` without `-p`,
    /// `git diff --stat`.
    Blobs,
    /// Patches or lines of the pathspecs too.
    Patches,
}

/// What `git SUB ...` shows, for the subcommands that read history.
fn history_content(c: &Command, sub: &str) -> Option<HistoryContent> {
    let has = |short: Option<char>, long: &[&str]| has_flag(c, short, long);
    let unified = c.args().iter().any(|a| {
        let t = a.text.as_str();
        t.starts_with("-U") || t.starts_with("--unified") || t.starts_with("--word-diff")
    });
    let patches = match sub {
        "log" | "whatchanged" => {
            has(
                Some('p'),
                &["patch", "patch-with-stat", "patch-with-raw", "cc"],
            ) || has(Some('u'), &[])
                || unified
        }
        "show" | "diff" => !has(
            Some('s'),
            &[
                "stat",
                "numstat",
                "shortstat",
                "name-only",
                "name-status",
                "summary",
                "no-patch",
                "dirstat",
                "raw",
                "compact-summary",
                "quiet",
            ],
        ),
        // `-t`, `-s`, `-e` say a blob's type, size or existence.
        "cat-file" if has(Some('t'), &[]) || has(Some('s'), &[]) || has(Some('e'), &[]) => {
            return None;
        }
        "cat-file" => true,
        "blame" | "annotate" | "grep" | "archive" | "format-patch" => true,
        _ => return None,
    };
    Some(if patches {
        HistoryContent::Patches
    } else {
        HistoryContent::Blobs
    })
}

/// The paths of the objects `git cat-file --batch` (or `--batch-command`)
/// is given on its input, when the input is literal text (a here-string,
/// `echo`/`printf` piped in). `--batch-check` prints only an object's type
/// and size.
fn batch_object_paths(ctx: &Ctx, i: usize) -> Vec<String> {
    let c = &ctx.commands()[i];
    let content = c.args().iter().any(|a| {
        let t = a.text.as_str();
        t == "--batch" || t.starts_with("--batch=") || t.starts_with("--batch-command")
    });
    if !content {
        return Vec::new();
    }
    let mut text = String::new();
    for s in &c.stdin {
        match s {
            Input::Text(w) => text.push_str(&w.text),
            Input::Pipe(p) => {
                if let Some(t) = super::written::produced_text(ctx, &ctx.commands()[*p]) {
                    text.push_str(&t);
                }
            }
            Input::File(_) => {}
        }
        text.push('\n');
    }
    text.lines()
        .map(|l| l.trim())
        .map(|l| l.strip_prefix("contents ").unwrap_or(l))
        .filter_map(|l| l.split_once(':').map(|(_, p)| p.trim().to_string()))
        .filter(|p| !p.is_empty())
        .collect()
}

/// A git pathspec that is a pattern (`'*.env'`, `'*'`, `':(glob)**/.env'`,
/// `'.e?v'`): git's `*` matches a leading dot and a `/`, so `*.env` is
/// `.env` and `config/prod.env`. The workspace credential of the catalog
/// (by an example name, at the top or in a directory) it matches, if any.
fn pathspec_reaches_a_secret(ctx: &Ctx, spec: &str) -> Option<String> {
    use aq_knowledge::credentials::{self, Place};
    let mut spec = spec;
    let mut icase = false;
    let mut literal = false;
    let mut exclude = false;
    if let Some(rest) = spec.strip_prefix(":(")
        && let Some((magic, rest)) = rest.split_once(')')
    {
        for m in magic.split(',') {
            match m {
                "icase" => icase = true,
                "literal" => literal = true,
                "exclude" => exclude = true,
                _ => {}
            }
        }
        spec = rest;
    } else if let Some(rest) = spec.strip_prefix(":/") {
        spec = rest;
    } else if spec.starts_with(":!") || spec.starts_with(":^") {
        exclude = true;
    }
    if exclude || literal || !spec.contains(['*', '?', '[']) {
        return None;
    }
    let spec = spec.trim_start_matches("./");
    let pattern = glob::Pattern::new(spec).ok()?;
    let options = glob::MatchOptions {
        case_sensitive: !icase,
        require_literal_separator: false,
        require_literal_leading_dot: false,
    };
    credentials::in_place(Place::Workspace)
        .map(|c| c.path.replace('*', "local"))
        .filter(|example| ctx.secret_kind(example).is_some())
        .find(|example| {
            pattern.matches_with(example, options)
                || pattern.matches_with(&format!("config/{example}"), options)
        })
}

/// Programs whose arguments are data, not files.
fn args_are_data(name: &str) -> bool {
    matches!(
        name,
        "echo"
            | "printf"
            | "true"
            | "false"
            | "expr"
            | "let"
            | "alias"
            | "read"
            | "export"
            | "set"
            | "unset"
            | "declare"
            | "typeset"
            | "local"
            | "readonly"
            | "which"
            | "type"
            | "command"
            | "hash"
            | "whereis"
            | "man"
            | "help"
            | "sleep"
            | "kill"
            | "pkill"
            | "killall"
            | "date"
            | "seq"
            | "yes"
            | "basename"
            | "dirname"
            | "npm"
            | "pnpm"
            | "yarn"
            | "cargo"
            | "go"
            | "make"
            | "docker"
            | "kubectl"
            | "pip"
            | "pip3"
            | "gh"
            | "env"
            | "sudo"
            | "doas"
            | "timeout"
            | "nice"
            | "nohup"
            | "xargs"
            | "time"
            | "exec"
            | "eval"
            | "sh"
            | "bash"
            | "zsh"
            | "dash"
            | "ksh"
            | "source"
            | "."
            | "cd"
            | "pushd"
            | "popd"
            | "mkdir"
            | "touch"
    )
}

/// The shell's history, through its builtins: `history` and `fc -l` list
/// it (with the tokens once typed on command lines), `history -w FILE`
/// copies it: reading it asks. What they print, or a history file read,
/// searched for secrets (`history | grep -i token`) blocks as a search of
/// the file does; sent to the network it blocks as the file sent does.
fn check_shell_history(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    let args: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    match name {
        // `-c`, `-d`: erasing it, judged as tampering. `-a`, `-n`, `-r`,
        // `-s`: the list and its file kept in step, nothing printed.
        "history"
            if !args
                .iter()
                .any(|a| a.starts_with('-') && a[1..].chars().any(|ch| "cdanrs".contains(ch))) =>
        {
            ctx.hit(
                RuleId::SecretLocation,
                i,
                "`history` prints the shell history, with whatever was typed on command lines",
            );
            return;
        }
        "fc" => {
            ctx.hit(
                RuleId::SecretLocation,
                i,
                "`fc` lists (or runs again) commands of the shell history",
            );
            return;
        }
        _ => {}
    }
    let grep_like = matches!(
        name,
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "zgrep" | "awk" | "sed"
    );
    let net = is_network_tool(name);
    if !grep_like && !net {
        return;
    }
    let commands = ctx.commands();
    let from_history = ctx.upstream(i).into_iter().find(|&u| {
        let up = &commands[u];
        matches!(up.program(), Some("history" | "fc"))
            || up.args().iter().any(|w| paths::is_history_file(&w.text))
            || up
                .stdin
                .iter()
                .any(|s| matches!(s, Input::File(w) if paths::is_history_file(&w.text)))
    });
    let Some(u) = from_history else { return };
    let source = commands[u].display();
    if net {
        ctx.hit(
            RuleId::NetExfilSecret,
            i,
            format!("`{name}` sends what `{source}` prints: the shell history, with the tokens typed on command lines"),
        );
    } else if c
        .args()
        .iter()
        .any(|a| super::tree_search::could_match_a_secret(&a.text) && a.text.len() >= 3)
    {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!("`{name}` searches what `{source}` prints, the shell history, for the tokens typed on command lines"),
        );
    }
}

fn is_network_tool(name: &str) -> bool {
    matches!(
        name,
        "curl"
            | "wget"
            | "http"
            | "https"
            | "xh"
            | "nc"
            | "ncat"
            | "netcat"
            | "socat"
            | "telnet"
            | "ftp"
            | "sftp"
            | "scp"
            | "rsync"
            | "rclone"
            | "ssh"
            | "aws"
            | "gsutil"
            | "s3cmd"
            | "httpie"
            | "curlie"
            | "mail"
            | "sendmail"
            | "mutt"
            | "lftp"
            | "ncftp"
            | "tftp"
            | "smbclient"
    )
}

/// Path-like pieces of a word: the word, what follows `@`, `=`, `=@`, `<`.
fn path_candidates(text: &str) -> Vec<&str> {
    let mut out = vec![text];
    if let Some(r) = text.strip_prefix('@') {
        out.push(r);
    }
    // `KEY=PATH`, `--file=PATH`; not the text after `=` in a script or a
    // sentence (`s/^a = .*/b/`), which starts with a space.
    if let Some((_, v)) = text.split_once('=')
        && !v.starts_with(char::is_whitespace)
    {
        out.push(
            v.strip_prefix('@')
                .or_else(|| v.strip_prefix('<'))
                .unwrap_or(v),
        );
    }
    if let Some(pos) = text.find("=@") {
        out.push(&text[pos + 2..]);
    }
    if let Some(r) = text.strip_prefix('<') {
        out.push(r);
    }
    out
}

/// Roots that mean "the whole machine" or "the whole home directory".
fn is_broad_root(t: &str) -> bool {
    let p = NormPath::new(t);
    p.is_home()
        || p.is_root()
        // Where credentials live: `~/.config`, `~/.aws`, `~/.ssh` ...
        || paths::credential_location(t)
        || (p.in_home
            && matches!(
                p.parts.iter().map(String::as_str).collect::<Vec<_>>().as_slice(),
                [".config"] | [".local"] | [".local", "share"]
            ))
        || (p.absolute
            && p.parts.len() == 1
            && matches!(
                p.parts[0].as_str(),
                "home" | "root" | "Users" | "etc" | "var" | "opt" | "srv"
            ))
}

fn secretish_pattern(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    [
        "secret",
        "passw",
        "token",
        "api_key",
        "apikey",
        "private",
        "credential",
        "aws_",
        "id_rsa",
        "id_ed25519",
        "-----begin",
        "ssh-rsa",
        "bearer",
        "akia",
        "ghp_",
        "sk-",
    ]
    .iter()
    .any(|k| l.contains(k))
        || paths::secret_kind(s).is_some()
}

/// A credential a command reaches: what it does with it, the path, and
/// what kind of secret is there.
type Found = (Role, String, String);

/// Every way a command reaches a credential, one step per way, in the order
/// their verdicts are reported.
pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    check_secret_vars(ctx, i);
    check_code_reads_environment(ctx, i);
    if c.argv.is_empty() {
        check_substitution_reads_file(ctx, i);
        return;
    }
    let Some(name) = c.program() else {
        return;
    };
    check_hunt(ctx, i, name);
    check_credential_printers(ctx, i, name);
    check_process_environments(ctx, i, name);
    check_environ_reached_indirectly(ctx, i, name);
    check_filtered_env_dump(ctx, i, name);
    check_shell_history(ctx, i, name);

    let loader = is_dotenv_loader(ctx, i);
    let mut found: Vec<Found> = Vec::new();
    find_redirected_inputs(ctx, i, name, &mut found);
    find_other_descriptors(ctx, i, &mut found);
    find_files_the_model_names(ctx, i, &mut found);
    if is_network_tool(name) {
        find_sent(ctx, i, &mut found);
    } else if operands_are_its_own(ctx, i, name) {
        find_operands(ctx, i, name, &mut found);
    }
    find_forced_git_adds(ctx, i, name, &mut found);
    find_git_history(ctx, i, name, &mut found);
    find_socat_files(ctx, i, name, &mut found);
    find_sql_file_reads(ctx, i, name, &mut found);
    find_file_urls(ctx, i, &mut found);
    find_git_stored(ctx, i, name, &mut found);
    find_names_on_input(ctx, i, &mut found);
    find_code_literals(ctx, i, &mut found);
    drop_openssl_keys_used(ctx, i, name, &mut found);
    drop_gpg_verified_keys(ctx, i, name, &mut found);
    drop_project_files_listed(name, &mut found);
    mark_ssh_keygen_new_key(ctx, i, name, &mut found);
    drop_openssl_outputs(ctx, i, name, &mut found);
    mark_renamed_in_place(ctx, i, name, &mut found);
    report_found(ctx, i, name, loader, found);

    check_environment_dump(ctx, i, name);
    check_dotenv_printer(ctx, i, name);
}

/// `$(< .env)` reads the file like `cat`.
fn check_substitution_reads_file(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    if let Some((path, kind)) = c.stdin.iter().find_map(|s| match s {
        Input::File(w) => ctx.secret_kind(&w.text).map(|k| (w.text.clone(), k)),
        _ => None,
    }) {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!("`$(< {path})` reads {path} ({kind})"),
        );
    }
}

/// `dotenv -e .env.test -- jest`, `env-cmd -f .env jest`: a loader that
/// runs a command puts the file's values into that command's environment,
/// as `source .env && jest` does (asks); printing them is judged on the
/// command it runs (`dotenv -- env` blocks).
fn is_dotenv_loader(ctx: &Ctx, i: usize) -> bool {
    ctx.model(i)
        .is_some_and(|m| m.class == Some(aq_knowledge::programs::Class::Secrets))
        && ctx.commands()[i].runs.is_some()
}

/// Reads through redirection apply to every program; a network tool sends
/// what it reads (`nc HOST PORT < /proc/self/environ`).
fn find_redirected_inputs(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    let net = is_network_tool(name);
    for s in &c.stdin {
        if let Input::File(w) = s
            && let Some(kind) = ctx.secret_kind(&w.text)
        {
            found.push((
                if net { Role::Send } else { Role::Read },
                w.text.clone(),
                kind,
            ));
        }
        // `nc HOST PORT < /proc/self/environ`: the environment sent.
        if net
            && let Input::File(w) = s
            && paths::is_own_environ(&w.text)
        {
            found.push((
                Role::Send,
                w.text.clone(),
                "every environment variable, secrets included".to_string(),
            ));
        }
    }
}

/// `cat <&3 3< ~/.ssh/id_rsa`, `exec 3< .env`: another descriptor opened
/// on a secret is read as surely as standard input.
fn find_other_descriptors(ctx: &Ctx, i: usize, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    for r in &c.redirects {
        if matches!(
            r.kind,
            aq_shell::RedirectKind::Read | aq_shell::RedirectKind::ReadWrite
        ) && r.fd.is_some_and(|n| n != 0)
            && let Some(kind) = ctx.secret_kind(&r.target.text)
        {
            found.push((Role::Read, r.target.text.clone(), kind));
        }
    }
}

/// What the capability model says this program reads or uploads:
/// `wget -i F`, `curl -K F`, `git diff --no-index A B`.
fn find_files_the_model_names(ctx: &Ctx, i: usize, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    let model = ctx.model(i);
    if super::programs::names_files(model, aq_knowledge::programs::Does::Read)
        || super::programs::names_files(model, aq_knowledge::programs::Does::Upload)
    {
        let texts: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
        let ops: Vec<&str> = operands(c).iter().map(|w| w.text.as_str()).collect();
        let read = super::programs::read_files(model, &texts, &ops);
        let sent = super::programs::uploaded_files(model, &texts);
        for (role, p) in read
            .into_iter()
            .map(|p| (Role::Read, p))
            .chain(sent.into_iter().map(|p| (Role::Send, p)))
        {
            if let Some(kind) = ctx.secret_kind(&p) {
                found.push((role, p, kind));
            }
        }
    }
}

/// A network tool sends the files it names, the environment piped into it
/// and whatever a command upstream read from a secret.
fn find_sent(ctx: &Ctx, i: usize, found: &mut Vec<Found>) {
    found.extend(sent_paths(ctx, i));
    // `env | curl --data-binary @- ...`: the whole environment goes out.
    if reads_env_dump(ctx, i) {
        found.push((
            Role::Send,
            "the environment".to_string(),
            "every environment variable, secrets included".to_string(),
        ));
    }
    // Data piped in from a command that read a secret.
    for u in ctx.upstream(i) {
        let up = &ctx.commands()[u];
        if let Some((p, kind)) = up
            .args()
            .iter()
            .chain(up.stdin.iter().filter_map(|s| {
                if let Input::File(w) = s {
                    Some(w)
                } else {
                    None
                }
            }))
            .find_map(|w| ctx.secret_kind(&w.text).map(|k| (w.text.clone(), k)))
        {
            found.push((Role::Send, p, kind));
        }
    }
}

/// A wrapper's arguments are its inner command's, judged there; sed "runs"
/// the files its `w F` and `r F` name, but reads its own operands still.
fn operands_are_its_own(ctx: &Ctx, i: usize, name: &str) -> bool {
    let c = &ctx.commands()[i];
    !args_are_data(name)
        && (c.runs.is_none() || matches!(name, "sed" | "gsed"))
        && !super::platforms::fetches_secrets(ctx, i)
}

/// The files a program names on its line are read, copied or looked at
/// according to what the program does.
fn find_operands(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    let role = role_of(name);
    let mut ops = operands_with_placeholders(ctx, i, name);
    find_credential_dirs_walked(ctx, i, role, &ops, found);
    find_decoded_names(ctx, role, &ops, found);
    find_history_files(ctx, i, name, role, &ops, found);
    join_relative_to_cd(ctx, i, &mut ops);
    find_named_secrets(ctx, i, name, role, ops, found);
}

/// `find -name .env -exec cat {} \;`, `echo .env | xargs cat`: the names a
/// placeholder stands for are operands too.
fn operands_with_placeholders(ctx: &Ctx, i: usize, name: &str) -> Vec<Word> {
    let c = &ctx.commands()[i];
    let mut ops: Vec<Word> = file_operands(c, name).into_iter().cloned().collect();
    if ops.iter().any(|w| w.text.contains("{}")) || c.via.last().is_some_and(|v| v == "xargs") {
        ops.extend(placeholder_values(ctx, i).into_iter().map(Word::literal));
    }
    ops
}

/// `find ~/.aws -type f -exec cat {} +`: every file under a credential
/// directory (unless a name narrows it: `-name '*.pub'` is judged by that
/// name).
fn find_credential_dirs_walked(
    ctx: &Ctx,
    i: usize,
    role: Role,
    ops: &[Word],
    found: &mut Vec<Found>,
) {
    if ops.iter().any(|w| w.text.contains("{}"))
        && matches!(role, Role::Read | Role::Copy)
        && placeholder_values(ctx, i).is_empty()
    {
        for root in super::finder_roots(ctx, i) {
            if let Some(dir) = paths::secret_dir(&root).filter(|_| !NormPath::new(&root).is_home())
            {
                found.push((role, root.clone(), dir.to_string()));
            }
        }
    }
}

/// `cat $(echo fi5zc2gv… | base64 -d)`: a file name decoded on the line.
fn find_decoded_names(ctx: &Ctx, role: Role, ops: &[Word], found: &mut Vec<Found>) {
    for w in ops {
        if let Some(name) = decoded_word(ctx, w)
            && let Some(kind) = ctx.secret_kind(&name)
        {
            found.push((role, name, kind));
        }
    }
}

/// The shell's history holds what the user typed, tokens pasted on command
/// lines among it: reading it asks, searching it for secrets
/// (`grep -i token ~/.bash_history`) is a secret hunt, which blocks.
fn find_history_files(
    ctx: &Ctx,
    i: usize,
    name: &str,
    role: Role,
    ops: &[Word],
    found: &mut Vec<Found>,
) {
    let c = &ctx.commands()[i];
    if matches!(role, Role::Read | Role::Metadata)
        && let Some(h) = ops.iter().find(|w| paths::is_history_file(&w.text))
    {
        let hunted = matches!(
            name,
            "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "zgrep"
        ) && c
            .args()
            .iter()
            .filter(|a| !paths::is_history_file(&a.text))
            .any(|a| super::tree_search::could_match_a_secret(&a.text) && a.text.len() >= 3);
        if hunted {
            found.push((
                Role::Read,
                h.text.clone(),
                "the shell history, searched for the tokens typed on command lines".to_string(),
            ));
        } else {
            found.push((
                Role::Metadata,
                h.text.clone(),
                "a credential location: the shell history, with whatever was typed on command lines"
                    .to_string(),
            ));
        }
    }
}

/// `cd ~/.aws && cat credentials`, `(cd ~/.ssh && tar czf - .)`: a relative
/// name in the directory an earlier `cd` went to, when that makes it a
/// credential file or directory.
fn join_relative_to_cd(ctx: &Ctx, i: usize, ops: &mut [Word]) {
    let cd_before = ctx.commands()[..i].iter().any(|b| {
        b.argv
            .first()
            .is_some_and(|w| w.text == "cd" || w.text == "pushd")
    });
    if cd_before && let Some(dir) = super::cwd_before(ctx, i).filter(|d| !d.contains('$')) {
        for w in ops.iter_mut() {
            let t = w.text.as_str();
            if t.starts_with(['/', '~', '$', '-']) || w.dynamic {
                continue;
            }
            let joined = format!("{}/{t}", dir.trim_end_matches('/'));
            if ctx.secret_kind(&joined).is_some() || paths::secret_dir(&joined).is_some() {
                *w = Word::literal(joined);
            }
        }
    }
}

/// Each operand that is a credential file, directory or location, except
/// where the program writes rather than reads it.
fn find_named_secrets(
    ctx: &Ctx,
    i: usize,
    name: &str,
    role: Role,
    ops: Vec<Word>,
    found: &mut Vec<Found>,
) {
    let c = &ctx.commands()[i];
    // `sed -i 's/^X=.*/X=dev/' .env`: the file is rewritten where it is
    // and nothing of it is printed (sed's output goes back into it).
    // Made from a template earlier on the line (`cp .env.example .env`)
    // it holds no secret yet: an ordinary edit; otherwise the secret
    // file is touched, not read.
    let edits_unread = sed_edits_in_place_unprinted(c, name);
    let n_ops = ops.len();
    for (k, w) in ops.into_iter().enumerate() {
        if edits_unread && ctx.secret_kind(&w.text).is_some() {
            if !made_from_template(ctx, i, &w.text) {
                found.push((
                    Role::Metadata,
                    w.text.clone(),
                    "a credential file, edited in place without printing it".to_string(),
                ));
            }
            continue;
        }
        // The destination of a copy is written, not read.
        if role == Role::Copy
            && k + 1 == n_ops
            && n_ops >= 2
            && !matches!(
                name,
                "tar" | "zip" | "7z" | "gzip" | "bzip2" | "xz" | "zstd" | "gpg"
            )
        {
            continue;
        }
        // `doctl kubernetes cluster kubeconfig save`: a word of the
        // program's subcommand, not a file.
        if ctx.model(i).is_some_and(|p| p.is_sub_word(&w.text)) {
            continue;
        }
        if let Some(f) = path_candidates(&w.text)
            .into_iter()
            .find_map(|cand| candidate_secret(ctx, c, name, role, cand))
        {
            found.push(f);
        }
    }
}

/// What one candidate path of an operand reaches, if it is a credential
/// file, a credential directory copied, the agent's transcripts copied, or
/// a place where credentials live.
fn candidate_secret(ctx: &Ctx, c: &Command, name: &str, role: Role, cand: &str) -> Option<Found> {
    if let Some(kind) = ctx.secret_kind(cand) {
        return Some((role, cand.to_string(), kind));
    }
    // A link to a credential directory reads nothing, and its files keep
    // their names (`ln -s ~/.ssh k`): what is read through it later on the
    // line is judged where it lands (aq-shell follows the line's links). A
    // link to a credential file is a copy under another name.
    let links = matches!(name, "ln" | "link");
    if role == Role::Copy
        && !links
        && let Some(dir) = paths::secret_dir(cand)
            .or_else(|| paths::holds_secrets(cand).filter(|_| is_recursive_copy(c, name)))
    {
        return Some((Role::Copy, cand.to_string(), dir.to_string()));
    }
    // `ls -la ~/.claude`: the directory the agent's login is in.
    let lists_login = matches!(name, "ls" | "tree" | "exa" | "eza" | "lsd" | "dir" | "vdir")
        && paths::lists_credential_file(cand).is_some();
    // `cp -r ~/.claude/projects/x /tmp/`: the agent's transcripts, with
    // what its sessions saw, copied out.
    if role == Role::Copy
        && let Some(what) = paths::agent_transcripts(cand)
    {
        return Some((Role::Metadata, cand.to_string(), what.to_string()));
    }
    if paths::credential_location(cand)
        || lists_login
        || paths::secret_dir(cand).is_some_and(|_| !NormPath::new(cand).is_home())
    {
        return Some((
            Role::Metadata,
            cand.to_string(),
            "a credential location".into(),
        ));
    }
    None
}

/// `git add -f .env`: a secret on its way into history and to the remote.
fn find_forced_git_adds(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    if name == "git" && super::net::git_subcommand(c) == Some("add") {
        for w in operands(c).iter().skip(1) {
            if let Some(kind) = ctx.secret_kind(&w.text) {
                found.push((Role::Copy, w.text.clone(), kind));
            }
        }
    }
}

/// `git show HEAD:.env`, `git log -p -- .env`: secrets read from history.
///
/// A blob by revision (`git show HEAD:.env`, `git cat-file -p :.env`) is
/// its content; a pathspec (`git log -p -- .env`, `git diff HEAD~3 .env`,
/// `git blame .env`) is when patches or lines are shown, not for
/// `git log --oneline -- .env` or `git diff --stat .env`. A history dump
/// without a pathspec (`git log -p`) names no file: the engine cannot know
/// what the repository committed (see docs/policy.md).
fn find_git_history(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    if name == "git"
        && let Some(sub) = super::net::git_subcommand(c)
        && let Some(content) = history_content(c, sub)
    {
        let mut paths = revisions_and_pathspecs(c, sub, content);
        let named = blobs_named_elsewhere(ctx, i, sub);
        paths.extend(named.iter().map(String::as_str));
        for p in paths {
            if let Some(kind) = ctx.secret_kind(p) {
                found.push((Role::Read, p.to_string(), kind));
            } else if content == HistoryContent::Patches
                && let Some(example) = pathspec_reaches_a_secret(ctx, p)
            {
                found.push((
                    Role::Read,
                    p.to_string(),
                    format!("a pathspec that matches {example}"),
                ));
            }
        }
    }
}

/// The paths of `REV:PATH` arguments, and the pathspecs when the
/// subcommand shows their patches or lines.
fn revisions_and_pathspecs<'c>(c: &'c Command, sub: &str, content: HistoryContent) -> Vec<&'c str> {
    let args = c.args();
    let rev_paths = args
        .iter()
        .filter(|a| !is_flag(a))
        .filter_map(|a| a.text.split_once(':').map(|(_, p)| p))
        .filter(|p| !p.is_empty() && !p.contains("//"));
    let mut paths: Vec<&str> = rev_paths.collect();
    if content == HistoryContent::Patches {
        let at = args.iter().position(|a| a.text == sub).map_or(0, |k| k + 1);
        paths.extend(
            args[at..]
                .iter()
                .filter(|a| {
                    !is_flag(a)
                        && (!a.text.contains(':')
                            || a.text.starts_with(":(")
                            || a.text.starts_with(":/"))
                })
                .map(|a| a.text.as_str()),
        );
    }
    paths
}

/// Blobs named outside the arguments: by a substitution (`git cat-file -p
/// $(git rev-parse HEAD:.env)`) or on `git cat-file --batch`'s input
/// (`HEAD:.env`, `contents HEAD:.env` for `--batch-command`).
fn blobs_named_elsewhere(ctx: &Ctx, i: usize, sub: &str) -> Vec<String> {
    let c = &ctx.commands()[i];
    let mut named: Vec<String> = Vec::new();
    for w in c.args().iter().filter(|w| !w.feeds.is_empty()) {
        for s in ctx.word_sources(w) {
            named.extend(
                ctx.commands()[s]
                    .args()
                    .iter()
                    .filter_map(|a| a.text.split_once(':').map(|(_, p)| p.to_string()))
                    .filter(|p| !p.is_empty() && !p.contains("//")),
            );
        }
    }
    if sub == "cat-file" {
        named.extend(batch_object_paths(ctx, i));
    }
    named
}

/// `socat FILE:.env TCP:host:port`: socat sends the files its addresses
/// open.
fn find_socat_files(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    if name == "socat" {
        for a in c.args() {
            let lower = a.text.to_ascii_lowercase();
            if let Some(rest) = ["file:", "open:", "gopen:", "create:"]
                .iter()
                .find_map(|p| lower.strip_prefix(p).map(|_| &a.text[p.len()..]))
            {
                let path = rest.split(',').next().unwrap_or(rest);
                if let Some(kind) = ctx.secret_kind(path) {
                    found.push((Role::Send, path.to_string(), kind));
                }
            }
        }
    }
}

/// SQL that reads a file: `sqlite3 :memory: "select readfile('/etc/shadow')"`,
/// DuckDB's `read_text('~/.aws/credentials')`, `pg_read_file`, MySQL's
/// `LOAD_FILE`; sqlite3's `.read F` and `.import F T`.
fn find_sql_file_reads(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    if matches!(
        name,
        "sqlite3" | "sqlite" | "duckdb" | "psql" | "mysql" | "mariadb" | "clickhouse-client"
    ) {
        let mut texts: Vec<String> = c.args().iter().map(|a| a.text.clone()).collect();
        texts.extend(super::written::input_text(ctx, c));
        for text in &texts {
            for (path, _) in sql_files_read(text) {
                if let Some(kind) = ctx.secret_kind(&path) {
                    found.push((Role::Read, path, kind));
                }
            }
        }
    }
}

/// `curl file:///home/dev/.netrc`: a URL of a local file reads it.
fn find_file_urls(ctx: &Ctx, i: usize, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    for a in c.args() {
        if let Some(rest) = a.text.strip_prefix("file://") {
            let path = rest.strip_prefix("localhost").unwrap_or(rest);
            if let Some(kind) = ctx.secret_kind(path) {
                found.push((Role::Read, path.to_string(), kind));
            }
        }
    }
}

/// `git hash-object -w F` stores F in the repository's objects (pushed
/// with the next push); `git --work-tree=DIR add P` adds DIR/P.
fn find_git_stored(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    if name == "git" {
        found.extend(git_stored_paths(ctx, &ctx.commands()[i]));
    }
}

/// `cpio -o <<< FILE`, `ls ~/.ssh/* | cpio -o`: an archiver that reads the
/// files whose names come on its input.
fn find_names_on_input(ctx: &Ctx, i: usize, found: &mut Vec<Found>) {
    if ctx.model(i).is_some_and(|m| {
        m.caps(aq_knowledge::programs::Does::Read)
            .any(|cap| cap.via == aq_knowledge::programs::Via::Stdin)
    }) {
        for p in names_on_input(ctx, i) {
            if let Some(kind) = ctx.secret_kind(&p) {
                found.push((Role::Copy, p, kind));
            } else if let Some(dir) = paths::secret_dir(&p).filter(|_| !NormPath::new(&p).is_home())
            {
                found.push((Role::Copy, p.clone(), dir.to_string()));
            }
        }
    }
}

/// Interpreter code that names a secret file; or moves or copies a
/// credential directory (`shutil.move('/root/.ssh', '/tmp/s')`).
fn find_code_literals(ctx: &Ctx, i: usize, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    if let Some(code) = &c.code {
        let moves = super::code::moves_or_copies(code);
        for lit in &code.literals {
            let lit = lit.trim();
            if let Some(kind) = ctx.secret_kind(lit) {
                found.push((Role::Read, lit.to_string(), kind));
            } else if let Some(dir) =
                paths::secret_dir(lit).filter(|_| moves && !NormPath::new(lit).is_home())
            {
                found.push((Role::Copy, lit.to_string(), dir.to_string()));
            }
        }
    }
}

/// `openssl x509 -in server.pem`, `openssl s_server -key key.pem`: a
/// certificate is inspected, a key is used, neither is printed.
fn drop_openssl_keys_used(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    if name == "openssl"
        && matches!(
            super::subcommand(c),
            Some("x509" | "verify" | "crl" | "s_server" | "s_client")
        )
    {
        // A key fed on its input (`s_client … < key`) is sent, not used.
        let fed: Vec<String> = c
            .stdin
            .iter()
            .filter_map(|s| match s {
                Input::File(w) => Some(w.text.clone()),
                _ => None,
            })
            .collect();
        found.retain(|(_, path, _)| !paths::is_key_file(path) || fed.contains(path));
    }
}

/// `gpg --verify x.tar.gz.asc x.tar.gz`: a signature checked against the
/// public keyring, nothing secret read or written.
fn drop_gpg_verified_keys(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    if matches!(name, "gpg" | "gpg2" | "gpgv")
        && c.args()
            .iter()
            .any(|a| a.text == "--verify" || name == "gpgv")
    {
        found.retain(|(_, path, _)| !paths::is_key_file(path));
    }
}

/// `ls -la .env*`, `test -f .env`: the project's own secret files listed
/// or tested by name, nothing read.
fn drop_project_files_listed(name: &str, found: &mut Vec<Found>) {
    let lists_only = matches!(
        name,
        "ls" | "stat"
            | "test"
            | "["
            | "[["
            | "du"
            | "realpath"
            | "readlink"
            | "tree"
            | "exa"
            | "eza"
            | "lsd"
            | "find"
    );
    if lists_only {
        found.retain(|(role, path, _)| {
            *role != Role::Metadata
                || path.starts_with('/')
                || path.starts_with('~')
                || path.starts_with('$')
                || path.contains("..")
        });
    }
}

/// `ssh-keygen -t ed25519 -f ~/.ssh/id_deploy`: a new key written, not one
/// read (`-y`, `-p`, `-e` read the key `-f` names); writing into the user's
/// SSH directory still touches a credential location.
fn mark_ssh_keygen_new_key(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    if name == "ssh-keygen"
        && c.args().iter().any(|a| a.text.starts_with("-t"))
        && !c
            .args()
            .iter()
            .any(|a| matches!(a.text.as_str(), "-y" | "-p" | "-e" | "-l" | "-c" | "-i"))
    {
        let outputs = super::flag_values_text(c, &["-f"], &[]);
        let before = found.len();
        found.retain(|(_, path, _)| !outputs.iter().any(|o| o == path));
        if found.len() < before {
            for o in outputs {
                found.push((
                    Role::Metadata,
                    o,
                    "a credential location: a new key written there".to_string(),
                ));
            }
        }
    }
}

/// `openssl genrsa -out test.key`: a key it writes, not one it reads.
fn drop_openssl_outputs(ctx: &Ctx, i: usize, name: &str, found: &mut Vec<Found>) {
    let c = &ctx.commands()[i];
    if name == "openssl" {
        let outputs = super::flag_values_text(c, &["-out", "-keyout"], &[]);
        found.retain(|(_, path, _)| !outputs.iter().any(|o| o == path));
    }
}

/// `mv .env .env.bak`: renamed where it is, into another secret's name:
/// nothing is read or taken elsewhere, but the credential is touched.
fn mark_renamed_in_place(ctx: &Ctx, i: usize, name: &str, found: &mut [Found]) {
    let c = &ctx.commands()[i];
    if name == "mv" {
        let ops = operands(c);
        if let [from, to] = ops.as_slice()
            && !to.text.contains('/')
            && !from.text.contains('/')
            && ctx.secret_kind(&to.text).is_some()
        {
            for f in found.iter_mut().filter(|f| f.0 == Role::Copy) {
                f.0 = Role::Metadata;
            }
        }
    }
}

/// One verdict per credential reached, with the rule its role calls for;
/// only the first look at a credential location is reported.
fn report_found(ctx: &mut Ctx, i: usize, name: &str, loader: bool, found: Vec<Found>) {
    let mut reported = false;
    for (role, path, kind) in found {
        if loader && role == Role::Read && paths::is_dotenv_secret(NormPath::new(&path).name()) {
            ctx.hit(
                RuleId::SecretSourceEnv,
                i,
                format!("`{name}` loads {path} into the environment of the command it runs"),
            );
            continue;
        }
        let (rule, verb) = match role {
            Role::Read => (RuleId::SecretRead, "reads"),
            Role::Copy => (RuleId::SecretCopy, "copies"),
            Role::Send => (RuleId::NetExfilSecret, "sends"),
            Role::Metadata
                if kind.starts_with("a credential location") || kind.starts_with("the ") =>
            {
                (RuleId::SecretLocation, "looks at")
            }
            Role::Metadata => (RuleId::SecretLocation, "touches"),
        };
        let rule = if role == Role::Metadata
            && name == "cat"
            && !kind.starts_with("a credential location")
        {
            RuleId::SecretRead
        } else {
            rule
        };
        if rule == RuleId::SecretLocation && reported {
            continue;
        }
        reported = true;
        ctx.hit(rule, i, format!("`{name}` {verb} {path} ({kind})"));
    }
}

/// Dumping the whole environment prints every secret in it, and the
/// values a loader just put there.
fn check_environment_dump(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    let env_dump = prints_every_variable(c, name) || reads_own_environ(c);
    let loaded_by = secrets_loader_around(c);
    if env_dump && !filtered_to_harmless(ctx, i) {
        // `source .env && env`, `npx dotenv -- env`: the dump prints the
        // values just loaded from the file.
        if let Some(file) = dotenv_loaded_for(ctx, i) {
            ctx.hit(
                RuleId::SecretRead,
                i,
                format!("prints every environment variable after loading {file}: its values"),
            );
        } else if let Some(w) = loaded_by {
            ctx.hit(
                RuleId::SecretRead,
                i,
                format!("prints every environment variable, with the secrets `{w}` loaded into it"),
            );
        } else {
            ctx.hit(
                RuleId::SecretLocation,
                i,
                "prints every environment variable, secrets included",
            );
        }
    }
}

/// `printenv`, `env`, `export -p`, `declare -x`, `set`: the shell's ways to
/// print every variable with its value.
fn prints_every_variable(c: &Command, name: &str) -> bool {
    match name {
        "printenv" => operands(c).is_empty(),
        "env" => {
            c.runs.is_none()
                && c.args()
                    .iter()
                    .all(|a| is_flag(a) && !matches!(a.text.as_str(), "-S" | "--split-string"))
        }
        "export" => c.args().iter().all(|a| a.text == "-p"),
        // Alone, or with only `-p`/`-x`, they print every variable with its
        // value (and `-x` the environment).
        "declare" | "typeset" => {
            operands(c).is_empty()
                && (c.args().is_empty()
                    || c.args().iter().any(|a| a.text == "-x" || a.text == "-p"))
        }
        "set" => c.args().is_empty(),
        _ => false,
    }
}

/// Run by a wrapper that loads secrets into the environment (`dotenv --
/// env`, `aws-vault exec prod -- printenv`): a dump prints them.
fn secrets_loader_around(c: &Command) -> Option<&str> {
    c.via.iter().find_map(|v| {
        let w = v.split(' ').next()?;
        (aq_knowledge::programs::known_class(w) == Some(aq_knowledge::programs::Class::Secrets))
            .then_some(w)
    })
}

/// `dotenv -p KEY`, `dotenv get KEY`, `dotenv list`, `dotenvx get`: the
/// values of a .env file printed by the tool that loads it.
fn check_dotenv_printer(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    if matches!(name, "dotenv" | "dotenv-cli" | "dotenvx")
        && c.runs.is_none()
        && c.args()
            .iter()
            .any(|a| matches!(a.text.as_str(), "-p" | "get" | "list"))
    {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!("`{name}` prints values of a .env file"),
        );
    }
}

/// The files SQL text reads: `readfile('F')`, `read_text('F')`,
/// `read_blob`, `read_csv`, `read_json`, `pg_read_file`, `LOAD_FILE`, and
/// sqlite3's `.read F` and `.import F TABLE`, with the function or
/// dot-command that reads each.
fn sql_files_read(text: &str) -> Vec<(String, &'static str)> {
    const FUNCTIONS: &[&str] = &[
        "readfile(",
        "read_text(",
        "read_blob(",
        "read_csv(",
        "read_csv_auto(",
        "read_json(",
        "read_json_auto(",
        "read_ndjson(",
        "pg_read_file(",
        "pg_read_binary_file(",
        "load_file(",
    ];
    let mut out = Vec::new();
    let lower = text.to_ascii_lowercase();
    for f in FUNCTIONS {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(f) {
            let at = from + pos + f.len();
            from = at;
            let lit = text[at..].trim_start().trim_start_matches(['\'', '"']);
            let path = lit.split(['\'', '"', ')']).next().unwrap_or("");
            if !path.is_empty() {
                out.push((path.to_string(), *f));
            }
        }
    }
    for line in text.split(['\n', ';']) {
        let mut words = line.split_whitespace();
        if let (Some(".read" | ".import"), Some(file)) = (words.next(), words.next()) {
            let file = file.trim_matches(['\'', '"']);
            out.push((file.to_string(), ".read"));
        }
    }
    out
}

/// What git stores from files outside its index's usual reach: `git
/// hash-object -w F` (F's content in the object store; without `-w` only
/// its hash is printed), and `git --work-tree=DIR add P` (DIR/P, a whole
/// credential directory when P is one).
fn git_stored_paths(ctx: &Ctx, c: &Command) -> Vec<(Role, String, String)> {
    let mut out = Vec::new();
    let sub = super::net::git_subcommand(c);
    let args = c.args();
    if sub == Some("hash-object") {
        let writes = args.iter().any(|a| a.text == "-w");
        let at = args
            .iter()
            .position(|a| a.text == "hash-object")
            .map_or(0, |k| k + 1);
        for w in args[at..].iter().filter(|w| !is_flag(w)) {
            if let Some(kind) = ctx.secret_kind(&w.text) {
                let role = if writes { Role::Copy } else { Role::Metadata };
                out.push((role, w.text.clone(), kind));
            }
        }
    }
    if sub == Some("add") {
        let work_tree = args.iter().enumerate().find_map(|(k, a)| {
            if a.text == "--work-tree" {
                args.get(k + 1).map(|w| w.text.clone())
            } else {
                a.text.strip_prefix("--work-tree=").map(str::to_string)
            }
        });
        if let Some(tree) = work_tree {
            let at = args
                .iter()
                .position(|a| a.text == "add")
                .map_or(0, |k| k + 1);
            // `add -A`, `add --all`: the whole work tree.
            let all = args[at..]
                .iter()
                .any(|a| matches!(a.text.as_str(), "-A" | "--all"));
            let whole = all.then(|| Word::literal("."));
            for w in args[at..]
                .iter()
                .filter(|w| !is_flag(w))
                .chain(whole.as_ref())
            {
                let p = format!("{}/{}", tree.trim_end_matches('/'), w.text);
                if let Some(kind) = ctx.secret_kind(&p) {
                    out.push((Role::Copy, p, kind));
                } else if let Some(dir) = paths::secret_dir(&p) {
                    out.push((Role::Copy, p, dir.to_string()));
                } else if NormPath::new(&p).is_home() {
                    out.push((
                        Role::Copy,
                        p,
                        "the home directory, with the credential files in it".to_string(),
                    ));
                }
            }
        }
    }
    out
}

/// File names command `i` reads on its input: the lines of a here-string
/// or here-document, the words `echo`/`printf` pipe in, what `ls` lists
/// and the directories `find` walks.
fn names_on_input(ctx: &Ctx, i: usize) -> Vec<String> {
    let c = &ctx.commands()[i];
    let mut out = Vec::new();
    for s in &c.stdin {
        if let Input::Text(w) = s
            && !w.dynamic
        {
            out.extend(w.text.lines().map(|l| l.trim().to_string()));
        }
    }
    for u in ctx.upstream(i) {
        let up = &ctx.commands()[u];
        match up.program() {
            Some("echo" | "printf" | "ls") => out.extend(
                operands(up)
                    .iter()
                    .filter(|w| !w.dynamic)
                    .flat_map(|w| w.text.split_whitespace().map(str::to_string)),
            ),
            Some("find") => out.extend(super::find_roots(up)),
            _ => {}
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The .env file loaded into the environment that command `i` prints:
/// by a `dotenv`-like wrapper around it, or sourced earlier on the line
/// (`source .env`, `. ./.env.local`, `set -a; . .env`).
fn dotenv_loaded_for(ctx: &Ctx, i: usize) -> Option<String> {
    let commands = ctx.commands();
    let mut at = i;
    for _ in 0..16 {
        let Some(p) = commands.iter().position(|c| c.runs == Some(at)) else {
            break;
        };
        // `direnv exec DIR CMD`: the directory's `.envrc`, loaded.
        if commands[p].program() == Some("direnv") {
            return Some(".envrc".into());
        }
        if matches!(
            commands[p].program(),
            Some("dotenv" | "dotenv-cli" | "dotenvx" | "env-cmd")
        ) {
            let files = flag_values_text(&commands[p], &["-e", "-f"], &["env-file", "file"]);
            return Some(files.into_iter().next().unwrap_or_else(|| ".env".into()));
        }
        at = p;
    }
    commands[..i].iter().find_map(|c| {
        matches!(c.program(), Some("source" | "."))
            .then(|| operands(c).first().map(|w| w.text.clone()))
            .flatten()
            .filter(|f| paths::is_dotenv_secret(NormPath::new(f).name()))
    })
}

/// `env | grep ^NODE_`: only lines matching a pattern that names no
/// secret come out, so it is inspection, not a dump.
/// A filter that keeps only what stands before the first `=` of each line.
fn names_only(c: &Command) -> bool {
    let args: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
    match c.program() {
        Some("cut") => {
            let delim = args.windows(2).any(|p| p == ["-d", "="]) || args.contains(&"-d=");
            let first = args.windows(2).any(|p| p == ["-f", "1"]) || args.contains(&"-f1");
            delim && first && args.len() <= 4
        }
        Some("sed") => matches!(args.as_slice(), ["s/=.*//"] | ["-e", "s/=.*//"]),
        Some("awk" | "gawk") => matches!(
            args.as_slice(),
            ["-F=", "{print $1}"] | ["-F", "=", "{print $1}"] | ["-F=", "{ print $1 }"]
        ),
        _ => false,
    }
}

fn filtered_to_harmless(ctx: &Ctx, i: usize) -> bool {
    let next = ctx.downstream(i);
    let [g] = next.as_slice() else {
        return false;
    };
    let c = &ctx.commands()[*g];
    // `env | cut -d= -f1`, `env | sed 's/=.*//'`, `env | awk -F= '{print $1}'`:
    // the names alone.
    if names_only(c) {
        return true;
    }
    if !matches!(c.program(), Some("grep" | "egrep" | "fgrep" | "rg")) {
        return false;
    }
    if has_flag(c, Some('v'), &["invert-match"]) {
        return false;
    }
    let explicit = flag_values_text(c, &["-e"], &["regexp"]);
    let pattern = if explicit.is_empty() {
        match operands(c).first() {
            Some(w) if !w.dynamic => w.text.clone(),
            _ => return false,
        }
    } else {
        explicit.join(" ")
    };
    let l = pattern.to_ascii_lowercase();
    let names_a_secret = secretish_pattern(&pattern)
        || [
            "key",
            "aws",
            "gcp",
            "google",
            "azure",
            "github",
            "gh_",
            "openai",
            "anthropic",
            "npm",
            "pass",
            "auth",
            "cred",
            "session",
            "cookie",
            "db_",
            "database",
            "pwd",
        ]
        .iter()
        .any(|w| l.contains(w))
        || l.chars().filter(|ch| ch.is_ascii_alphanumeric()).count() < 3;
    !names_a_secret
}

/// Whether a copy takes a directory with everything in it: archivers
/// always do, `cp`/`rsync`/`scp` when asked to recurse.
fn is_recursive_copy(c: &Command, name: &str) -> bool {
    match name {
        "tar" | "bsdtar" | "zip" | "7z" | "7za" | "rar" | "cpio" | "ditto" => true,
        "cp" | "rsync" | "scp" | "install" => c.args().iter().any(|a| {
            matches!(a.text.as_str(), "--recursive" | "--archive" | "--mirror")
                || (a.text.starts_with('-')
                    && !a.text.starts_with("--")
                    && a.text.contains(['r', 'R', 'a']))
        }),
        _ => false,
    }
}

/// Whether `c` is `sed -i` (`--in-place`) whose script prints nothing:
/// with `-i` what sed prints goes back into the file, so only a `w` (to a
/// device, `w /dev/stdout`, or to another file, which copies the lines),
/// an `e` command or flag, or a script read from a file (`-f`) could
/// show it.
fn sed_edits_in_place_unprinted(c: &Command, name: &str) -> bool {
    if !matches!(name, "sed" | "gsed") {
        return false;
    }
    let args = c.args();
    let in_place = args
        .iter()
        .any(|a| a.text.starts_with("-i") || a.text.starts_with("--in-place"));
    if !in_place
        || args
            .iter()
            .any(|a| matches!(a.text.as_str(), "-f" | "--file" | "-s"))
    {
        return false;
    }
    let mut scripts: Vec<&str> = Vec::new();
    for (k, a) in args.iter().enumerate() {
        if matches!(a.text.as_str(), "-e" | "--expression") {
            scripts.extend(args.get(k + 1).map(|w| w.text.as_str()));
        } else if let Some(v) = a.text.strip_prefix("--expression=") {
            scripts.push(v);
        }
    }
    if scripts.is_empty() {
        scripts.extend(operands(c).first().map(|w| w.text.as_str()));
    }
    !scripts.is_empty()
        && scripts.iter().all(|s| {
            !s.contains("/dev/")
                && !s.contains("/proc/")
                && !s.contains("w ")
                && !s.contains("W ")
                && s.split([';', '\n'])
                    .map(str::trim)
                    .all(|cmd| !cmd.starts_with('e') && !cmd.ends_with(['e', 'w', 'W']))
        })
}

/// Whether `path` was made earlier on the line by copying a template of it
/// (`cp .env.example .env`, `cp -n .env.sample .env`): it holds the
/// template's placeholders, not secrets.
fn made_from_template(ctx: &Ctx, i: usize, path: &str) -> bool {
    let same = |a: &str| a.trim_start_matches("./") == path.trim_start_matches("./");
    ctx.commands()[..i].iter().any(|c| {
        let ops = operands(c);
        matches!(c.program(), Some("cp" | "install" | "rsync"))
            && ops.len() == 2
            && same(&ops[1].text)
            && aq_knowledge::credentials::is_template(NormPath::new(&ops[0].text).name())
    })
}

fn role_of(name: &str) -> Role {
    match name {
        "cp" | "mv" | "install" | "ln" | "tar" | "bsdtar" | "zip" | "7z" | "7za" | "rar"
        | "gzip" | "bzip2" | "xz" | "zstd" | "cpio" | "ar" | "ditto" | "rsync" | "link" | "gpg" => {
            Role::Copy
        }
        "ls" | "stat" | "file" | "du" | "test" | "[" | "[[" | "chmod" | "chown" | "chgrp"
        | "realpath" | "readlink" | "rm" | "find" | "wc" | "tree" | "exa" | "eza" | "lsd"
        | "getfacl" | "lsattr" | "shred" => Role::Metadata,
        _ => Role::Read,
    }
}

/// The operands that name files: for grep-like tools, not the pattern.
fn file_operands<'c>(c: &'c Command, name: &str) -> Vec<&'c Word> {
    let mut ops = operands(c);
    let pattern_given = c.args().iter().any(|a| {
        matches!(a.text.as_str(), "-e" | "-f" | "--regexp" | "--file")
            || a.text.starts_with("--regexp=")
    });
    if matches!(
        name,
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "zgrep" | "git-grep"
    ) && !pattern_given
        && !ops.is_empty()
    {
        ops.remove(0);
    }
    // Perl's and Ruby's code in a cluster: `-pe1 FILE` (attached: every
    // operand is a file read), `-ne 'CODE' FILE` (the next word is the code).
    let code_cluster = matches!(name, "perl" | "ruby").then(|| {
        c.args().iter().find_map(|a| {
            let cluster = a.text.strip_prefix('-').filter(|t| !t.starts_with('-'))?;
            let at = cluster.find(['e', 'E'])?;
            cluster[..at]
                .chars()
                .all(|ch| ch.is_ascii_alphabetic())
                .then(|| cluster.len() > at + 1)
        })
    });
    match code_cluster.flatten() {
        Some(true) => {}
        Some(false) if a_cluster_is_exactly_e(c) => {}
        Some(false) => {
            if !ops.is_empty() {
                ops.remove(0);
            }
        }
        None => {
            if matches!(
                name,
                "sed" | "awk" | "gawk" | "jq" | "yq" | "perl" | "python" | "python3"
            ) && !ops.is_empty()
                && !c.args().iter().any(|a| a.text == "-e" || a.text == "-f")
            {
                ops.remove(0);
            }
        }
    }
    // `sed -e SCRIPT F`: the script after `-e` is no file.
    if matches!(name, "sed" | "gsed") {
        let args = c.args();
        let scripts: Vec<&Word> = args
            .iter()
            .enumerate()
            .filter(|(k, _)| *k > 0 && matches!(args[k - 1].text.as_str(), "-e" | "--expression"))
            .map(|(_, w)| w)
            .collect();
        ops.retain(|w| !scripts.iter().any(|s| std::ptr::eq(*s, *w)));
    }
    // Option values count too: `dd if=.env`, `openssl enc -in .env`.
    let mut out = ops;
    let args = c.args();
    for (k, a) in args.iter().enumerate() {
        if is_flag(a) && a.text.contains('=') && !is_exclusion(args, k) {
            out.push(a);
        }
    }
    // `git clean -e .env`, `git check-ignore .env`: patterns, not reads.
    if name == "git" {
        out.clear();
        return out;
    }
    // (`sed -i`, `perl -pi`, `yq -i` edit in place; `curl -i`, `grep -i`
    // and `docker exec -i` are switches: none takes a file.)
    let i_is_switch = matches!(
        name,
        "sed"
            | "gsed"
            | "perl"
            | "ruby"
            | "yq"
            | "jq"
            | "awk"
            | "gawk"
            | "curl"
            | "grep"
            | "rg"
            | "docker"
            | "podman"
            | "kubectl"
    );
    let flags: &[&str] = if i_is_switch {
        &["-in", "-inkey", "--input", "-f", "--file", "-F"]
    } else {
        &["-in", "-inkey", "-i", "--input", "-f", "--file", "-F"]
    };
    for v in flag_value_words(c, flags) {
        out.push(v);
    }
    out
}

/// Whether `-e` is given alone (its code then is the next word, which
/// `file_operands` has always kept).
fn a_cluster_is_exactly_e(c: &Command) -> bool {
    c.args().iter().any(|a| a.text == "-e" || a.text == "-E")
}

fn flag_value_words<'c>(c: &'c Command, flags: &[&str]) -> Vec<&'c Word> {
    let args = c.args();
    let mut out = Vec::new();
    for (k, a) in args.iter().enumerate() {
        if flags.contains(&a.text.as_str())
            && let Some(v) = args.get(k + 1)
        {
            out.push(v);
        }
    }
    out
}

/// Files a network tool sends: `curl -d @F`, `-F x=@F`, `-T F`,
/// `wget --post-file=F`, `scp F host:`, `rsync F host:`.
fn sent_paths(ctx: &Ctx, i: usize) -> Vec<(Role, String, String)> {
    let c = &ctx.commands()[i];
    let name = c.program().unwrap_or("");
    let mut candidates: Vec<String> = Vec::new();
    match name {
        "curl" | "curlie" => {
            for a in c.args() {
                if let Some(p) = a.text.strip_prefix('@') {
                    candidates.push(p.to_string());
                }
                // `--data-urlencode name@file`
                if let Some((before, after)) = a.text.split_once('@')
                    && !before.is_empty()
                    && !before.contains('=')
                    && !before.starts_with('-')
                {
                    candidates.push(after.to_string());
                }
                if let Some(pos) = a.text.find("=@").or_else(|| a.text.find("=<")) {
                    candidates.push(
                        a.text[pos + 2..]
                            .split(';')
                            .next()
                            .unwrap_or("")
                            .to_string(),
                    );
                }
            }
            candidates.extend(flag_values_text(c, &["-T"], &["upload-file"]));
        }
        "wget" => candidates.extend(flag_values_text(c, &[], &["post-file", "body-file"])),
        "http" | "https" | "xh" | "httpie" => {
            for a in c.args() {
                if let Some((_, v)) = a.text.split_once("=@").or_else(|| a.text.split_once("@")) {
                    candidates.push(v.to_string());
                }
            }
        }
        "scp" | "rsync" | "sftp" | "rclone" => {
            let ops = operands(c);
            if ops.len() >= 2 {
                candidates.extend(ops[..ops.len() - 1].iter().map(|w| w.text.clone()));
            }
        }
        "aws" | "gsutil" | "s3cmd" => candidates.extend(operands(c).iter().map(|w| w.text.clone())),
        _ => {}
    }
    // The commands an interactive transfer client is fed (`sftp host <<<
    // 'put .env'`, `lftp -e 'put .env' host`, `smbclient -c 'put .env'`):
    // the files they put.
    if matches!(
        name,
        "sftp" | "ftp" | "lftp" | "tftp" | "smbclient" | "ncftp"
    ) {
        let mut script: Vec<String> = super::written::input_text(ctx, c).into_iter().collect();
        script.extend(flag_values_text(c, &["-c", "-e"], &[]));
        // `tftp HOST -c put FILE`: the rest of the line is its command;
        // busybox's and atftp's `tftp -p -l FILE HOST` put FILE.
        if name == "tftp" {
            if let Some(k) = c.args().iter().position(|a| a.text == "-c") {
                let rest: Vec<&str> = c.args()[k + 1..].iter().map(|w| w.text.as_str()).collect();
                script.push(rest.join(" "));
            }
            if c.args().iter().any(|a| a.text == "-p" || a.text == "--put") {
                candidates.extend(flag_values_text(c, &["-l"], &["local-file"]));
            }
        }
        for line in script.iter().flat_map(|s| s.split(['\n', ';'])) {
            let words: Vec<&str> = line
                .split_whitespace()
                .filter(|w| !w.starts_with('-'))
                .collect();
            match words.as_slice() {
                ["put" | "reput" | "append" | "send", file, ..] => {
                    candidates.push(file.to_string())
                }
                ["mput", files @ ..] => candidates.extend(files.iter().map(|f| f.to_string())),
                _ => {}
            }
        }
    }
    match name {
        "mail" | "mutt" | "sendmail" => {
            candidates.extend(flag_values_text(c, &["-a", "-A"], &["attach"]))
        }
        _ => {}
    }
    let mut out = Vec::new();
    // `find ~/.aws -type f -exec curl -T {} URL \;`: every file find hands
    // it, all of them under a credential directory.
    if candidates.iter().any(|p| p.contains("{}")) {
        for p in super::placeholder_paths(ctx, i) {
            match paths::secret_dir(&p).filter(|_| !NormPath::new(&p).is_home()) {
                Some(dir) => out.push((Role::Send, p, dir.to_string())),
                None => candidates.push(p),
            }
        }
    }
    for p in candidates {
        if let Some(kind) = ctx.secret_kind(&p) {
            out.push((Role::Send, p, kind));
        } else if paths::is_own_environ(&p) {
            // `curl -d @/proc/self/environ`: the whole environment goes out.
            out.push((
                Role::Send,
                p,
                "every environment variable, secrets included".to_string(),
            ));
        } else if paths::is_history_file(&p) {
            // Sent away, the history's pasted tokens go with it.
            out.push((
                Role::Send,
                p,
                "the shell history, with the tokens typed on command lines".to_string(),
            ));
        } else if let Some(dir) = paths::secret_dir(&p).filter(|_| {
            matches!(
                name,
                "scp"
                    | "rsync"
                    | "sftp"
                    | "rclone"
                    | "aws"
                    | "gsutil"
                    | "ftp"
                    | "lftp"
                    | "smbclient"
            )
        }) {
            out.push((Role::Send, p.clone(), dir.to_string()));
        }
    }
    out
}

/// The names `find` looks for (`-name`/`-iname`), without negated tests
/// (`-not -name x`, `! -name x`) and bare wildcards.
fn searched_names(c: &Command) -> Vec<String> {
    let args = c.args();
    let mut out = Vec::new();
    for (k, a) in args.iter().enumerate() {
        if !matches!(a.text.as_str(), "-name" | "-iname") {
            continue;
        }
        let negated = k > 0 && matches!(args[k - 1].text.as_str(), "-not" | "!");
        if let Some(v) = args.get(k + 1).filter(|_| !negated)
            && v.text.chars().any(|ch| !matches!(ch, '*' | '?' | '.'))
        {
            out.push(v.text.clone());
        }
    }
    out
}

/// Tools that print stored credentials without naming a file:
/// `gh auth token`, `kubectl config view --raw`, `git credential fill`,
/// `gpg --export-secret-keys`, `gcloud auth print-access-token`, ...; and
/// tools that list what a credential store holds (`gpg -K`, `aws configure
/// list`), which touch the store without printing a secret.
fn check_credential_printers(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    // `getent shadow`: the database of that name, which the `files` source
    // reads from /etc (`/etc/shadow`, `/etc/gshadow`), printed.
    if name == "getent"
        && let Some(db) = operands(c).first()
        && !db.text.contains('/')
        && let Some(kind) = paths::secret_kind(&format!("/etc/{}", db.text))
    {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!("`getent {}` prints /etc/{} ({kind})", db.text, db.text),
        );
        return;
    }
    let words: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    // `gh auth token --help`: the tool says what the subcommand does.
    if super::platforms::asks_for_help(&words) {
        return;
    }
    let has = |w: &str| words.contains(&w);
    let seq = |a: &str, b: &str| words.windows(2).any(|p| p[0] == a && p[1] == b);
    let what = match name {
        "gh" if seq("auth", "token") || (has("auth") && (has("--show-token") || has("-t"))) => {
            Some("the GitHub CLI token")
        }
        "kubectl" | "oc" if seq("config", "view") && (has("--raw") || has("--flatten")) => {
            Some("cluster credentials")
        }
        // `kubectl get secret NAME -o yaml|json|jsonpath=…`: the values, not
        // just the names.
        "kubectl" | "oc" if kube_secret_printed(&words) => Some("Kubernetes secret values"),
        "git"
            if seq("credential", "fill")
                // `git credential-cache [--socket S] get`, `credential-store get`.
                || words
                    .iter()
                    .position(|w| w.starts_with("credential-"))
                    .is_some_and(|k| words[k + 1..].contains(&"get")) =>
        {
            Some("stored git credentials")
        }
        "gpg" | "gpg2" if words.iter().any(|w| w.starts_with("--export-secret")) => {
            Some("GnuPG secret keys")
        }
        "gcloud"
            if words.iter().any(|w| {
                matches!(
                    *w,
                    "print-access-token" | "print-identity-token" | "print-refresh-token"
                )
            }) =>
        {
            Some("a Google Cloud token")
        }
        "aws"
            if (seq("configure", "get")
                && words
                    .iter()
                    .any(|w| w.contains("secret") || w.contains("session_token")))
                || seq("configure", "export-credentials") =>
        {
            Some("AWS credentials")
        }
        "az" if seq("account", "get-access-token") => Some("an Azure token"),
        // `docker-credential-desktop get`, `docker-credential-pass get`: the
        // helpers docker asks for a registry's password print it.
        n if n.starts_with("docker-credential-") && (has("get") || has("erase")) => {
            Some("a registry password from a credential helper")
        }
        "heroku" if has("auth:token") => Some("the Heroku token"),
        "security"
            if words.iter().any(|w| {
                matches!(
                    *w,
                    "find-generic-password" | "find-internet-password" | "dump-keychain"
                )
            }) && (has("dump-keychain")
                // `-w`, `-g`, or in a cluster: `-gs example.invalid`, `-wa me`.
                || words.iter().any(|w| {
                    w.len() > 1
                        && w.starts_with('-')
                        && !w.starts_with("--")
                        && w[1..].contains(['w', 'g'])
                })) =>
        {
            Some("keychain passwords")
        }
        "op" if has("read") || seq("item", "get") => Some("a 1Password secret"),
        // What the store's subcommand does (`programs.toml`): `show`,
        // `otp`, a bare entry name print; `insert`, `rm` change the store.
        "pass" | "gopass" | "passage"
            if ctx
                .model(i)
                .and_then(|p| super::platforms::decide(p, &words))
                .is_some_and(|(e, _)| e == aq_knowledge::programs::Effect::SecretRead) =>
        {
            Some("a password store entry")
        }
        "secret-tool" if has("lookup") => Some("a keyring secret"),
        "kwallet-query" if has("-r") || has("--read-password") => Some("a KDE wallet entry"),
        "vault" if has("read") || seq("kv", "get") || seq("token", "lookup") => {
            Some("a Vault secret")
        }
        "npm"
            if seq("token", "list")
                || seq("config", "get") && words.iter().any(|w| w.contains("_authToken")) =>
        {
            Some("npm tokens")
        }
        _ => None,
    };
    if let Some(what) = what {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!("`{}` prints {what}", c.display()),
        );
        return;
    }
    // Listing what a credential store holds, without the secrets: the
    // names of keys, profiles, wallet folders and keychains.
    let listed = match name {
        "gpg" | "gpg2" => (has("-K") || has("--list-secret-keys")).then_some("the secret keys"),
        "aws" => (seq("configure", "list") || seq("configure", "list-profiles"))
            .then_some("the AWS credentials in use"),
        "kwallet-query" => (has("-l") || has("--list-entries")).then_some("a KDE wallet"),
        "security" => words
            .iter()
            .any(|w| {
                matches!(
                    *w,
                    "list-keychains" | "find-generic-password" | "find-internet-password"
                )
            })
            .then_some("the keychains"),
        "secret-tool" => has("search").then_some("the keyring"),
        n if n.starts_with("docker-credential-") => {
            has("list").then_some("the registries a credential helper has passwords for")
        }
        _ => None,
    };
    if let Some(what) = listed {
        ctx.hit(
            RuleId::SecretLocation,
            i,
            format!("`{}` lists {what}", c.display()),
        );
    }
}

/// `kubectl get secret x -o yaml` in every spelling: the kind as `secret`,
/// `secrets`, `secret/NAME` or in a list (`all,secrets`), options before
/// or after it; printed in any format but names (`-o yaml|json`,
/// `-ojsonpath=…`, `--output=go-template=…`, `--template=…`).
fn kube_secret_printed(words: &[&str]) -> bool {
    const VALUED: &[&str] = &[
        "-n",
        "--namespace",
        "-l",
        "--selector",
        "-o",
        "--output",
        "--template",
        "-f",
        "--filename",
        "--context",
        "--cluster",
        "--user",
        "--kubeconfig",
        "--field-selector",
        "--sort-by",
        "-L",
        "--label-columns",
        "--chunk-size",
    ];
    let Some(g) = words.iter().position(|w| *w == "get") else {
        return false;
    };
    let mut secret = false;
    let mut k = g + 1;
    while k < words.len() {
        let w = words[k];
        if VALUED.contains(&w) {
            k += 2;
            continue;
        }
        if !w.starts_with('-') {
            secret |= w.split(',').any(|r| {
                let kind = r.split('/').next().unwrap_or(r).to_ascii_lowercase();
                matches!(kind.as_str(), "secret" | "secrets")
                    || kind.starts_with("secret.")
                    || kind.starts_with("secrets.")
            });
        }
        k += 1;
    }
    secret
        && words.iter().enumerate().any(|(k, w)| {
            let format = if *w == "-o" || *w == "--output" {
                words.get(k + 1).copied()
            } else if let Some(v) = w.strip_prefix("--output=") {
                Some(v)
            } else if w.starts_with("-o") && !w.starts_with("--") && w.len() > 2 {
                Some(w[2..].trim_start_matches('='))
            } else {
                None
            };
            format.is_some_and(|f| !matches!(f, "name" | "wide" | ""))
                || *w == "--template"
                || w.starts_with("--template=")
        })
}

/// A process's `environ` reached through the directory an earlier `cd`
/// went to (`cd /proc/$PPID && cat environ`, `cd /proc; cat $PPID/environ`)
/// or a variable the line set (`p=/proc/$PPID; cat $p/environ`): read as
/// the path it is. An `environ` whose directory stays unknown (`cat
/// "$d"/environ`, `cd "$x" && xargs -0 < environ`) asks.
fn check_environ_reached_indirectly(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    let mut words: Vec<&Word> = c
        .stdin
        .iter()
        .filter_map(|s| match s {
            Input::File(w) => Some(w),
            _ => None,
        })
        .collect();
    if !args_are_data(name) && c.runs.is_none() {
        words.extend(file_operands(c, name));
    }
    // Where the line went with `cd`: looked up only for a word that can
    // name `environ`, which few do.
    let mut cwd: Option<Option<String>> = None;
    let mut hit: Option<(RuleId, String)> = None;
    for w in words {
        let last = w.text.rsplit('/').next().unwrap_or(&w.text);
        if !paths::name_matches(last, "environ") || paths::secret_kind(&w.text).is_some() {
            continue;
        }
        // A bare `*` names `environ` only in a directory known to be a
        // process's (`cd /proc/1 && cat *`), never in an unknown one.
        let literal = last.chars().filter(|c| c.is_ascii_alphabetic()).count();
        let mut path = expand_vars(ctx, i, &w.text);
        // `$PPID/environ` under `cd /proc` is relative too: only a home
        // is known to be absolute.
        let from_home =
            path.starts_with('~') || path.starts_with("$HOME") || path.starts_with("${HOME");
        if !path.starts_with('/')
            && !from_home
            && let Some(dir) = cwd
                .get_or_insert_with(|| super::cwd_before(ctx, i).map(|d| expand_vars(ctx, i, &d)))
        {
            path = format!("{}/{path}", dir.trim_end_matches('/'));
        }
        if let Some(kind) = paths::secret_kind(&path) {
            hit = Some((
                RuleId::SecretRead,
                format!("`{name}` reads {} = {path} ({kind})", w.text),
            ));
            break;
        }
        if paths::is_own_environ(&path) {
            hit.get_or_insert((
                RuleId::SecretLocation,
                format!(
                    "`{name}` reads {} = {path}: every environment variable, secrets included",
                    w.text
                ),
            ));
            continue;
        }
        let known = path.starts_with('/') && !path.contains('$');
        if !known && literal >= 2 && hit.is_none() {
            hit = Some((
                RuleId::SecretLocation,
                format!(
                    "`{name}` reads {}, which may be another process's environment (with the agent's keys)",
                    w.text
                ),
            ));
        }
    }
    if let Some((rule, evidence)) = hit {
        ctx.hit(rule, i, evidence);
    }
}

/// `$name` and `${name}` in `text` replaced by the literal value an earlier
/// command of the line assigned them (`p=/proc/$PPID`); others stay.
fn expand_vars(ctx: &Ctx, i: usize, text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (var, len) = if let Some(b) = after.strip_prefix('{') {
            match b.find('}') {
                Some(end)
                    if b[..end]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    (&b[..end], end + 2)
                }
                _ => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        let value = (!var.is_empty())
            .then(|| assigned_value(ctx, i, var))
            .flatten();
        match value {
            Some(v) => out.push_str(&v),
            None => out.push_str(&rest[pos..pos + 1 + len]),
        }
        rest = &rest[pos + 1 + len..];
    }
    out.push_str(rest);
    out
}

/// The value the last assignment to `var` before command `i` gave it.
fn assigned_value(ctx: &Ctx, i: usize, var: &str) -> Option<String> {
    let depth = ctx.commands()[i].depth;
    ctx.commands()[..i]
        .iter()
        .rev()
        .filter(|c| c.depth <= depth && c.argv.is_empty())
        .find_map(|c| c.assignments.iter().rev().find(|a| a.name == var))
        .map(|a| a.value.text.clone())
}

/// `ps e`, `ps auxe`, `ps eww -p PID`: BSD-style `e` prints each process's
/// environment after its command, the agent's own keys included (as
/// `/proc/PID/environ` would).
fn check_process_environments(ctx: &mut Ctx, i: usize, name: &str) {
    if name != "ps" {
        return;
    }
    let c = &ctx.commands()[i];
    let bsd_e = c.args().iter().any(|a| {
        !a.text.starts_with('-')
            && a.text.contains('e')
            && a.text.chars().all(|ch| ch.is_ascii_alphabetic())
    });
    if bsd_e {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!(
                "`{}` prints the environment of other processes (their keys included)",
                c.display()
            ),
        );
    }
}

/// Whether `i` reads, through a pipe, a dump of every environment variable
/// (`env`, `printenv`, `export -p`, `set`, `cat /proc/self/environ`).
fn reads_env_dump(ctx: &Ctx, i: usize) -> bool {
    let upstream = ctx.upstream(i);
    // `compgen -v | while read v; do echo "$v=${!v}"; done`: every
    // variable's name listed, then its value read through it.
    let lists_names = upstream.iter().any(|&u| {
        let up = &ctx.commands()[u];
        up.program() == Some("compgen")
            && up
                .args()
                .iter()
                .any(|a| matches!(a.text.as_str(), "-v" | "-e" | "variable" | "export"))
    });
    let reads_through_names = lists_names
        && ctx
            .commands()
            .iter()
            .any(|c| c.args().iter().any(|a| a.text.contains("${!")));
    reads_through_names
        || upstream.into_iter().any(|u| {
            let up = &ctx.commands()[u];
            matches!(
                up.program(),
                Some("env" | "printenv" | "set" | "export" | "declare")
            ) && up.runs.is_none()
                && operands(up).is_empty()
                || reads_own_environ(up)
        })
}

/// `cat /proc/self/environ`, `xargs -0 < /proc/$$/environ`: a command
/// that reads its own environment, all of it.
fn reads_own_environ(c: &Command) -> bool {
    let named = |w: &Word| w.text.contains("environ");
    if !c.args().iter().any(named)
        && !c
            .stdin
            .iter()
            .any(|s| matches!(s, Input::File(w) if named(w)))
    {
        return false;
    }
    c.stdin
        .iter()
        .any(|s| matches!(s, Input::File(w) if paths::is_own_environ(&w.text)))
        || c.program().is_some_and(|n| !args_are_data(n))
            && operands(c).iter().any(|w| paths::is_own_environ(&w.text))
}

/// `env | grep -i secret`: an environment dump filtered for secrets.
fn check_filtered_env_dump(ctx: &mut Ctx, i: usize, name: &str) {
    if !matches!(
        name,
        "grep" | "egrep" | "fgrep" | "rg" | "awk" | "sed" | "ag"
    ) {
        return;
    }
    // Whether the environment flows in first: rarely, and cheaper to tell
    // than whether a pattern looks for secrets.
    if !reads_env_dump(ctx, i) {
        return;
    }
    let c = &ctx.commands()[i];
    let pattern_secret = c.args().iter().any(|a| {
        !a.text.starts_with('-') && (secretish_pattern(&a.text) || is_secret_var(&a.text))
            || a.text.to_ascii_lowercase().contains("key")
    });
    if pattern_secret {
        ctx.hit(
            RuleId::SecretEnvPrint,
            i,
            "filters the environment for secrets",
        );
    }
}

/// How interpreter code reaches the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
enum EnvAccess {
    /// One variable, named literally.
    Key(String),
    /// One variable whose name is computed.
    Dynamic,
    /// All of it (`dict(os.environ)`, `console.log(process.env)`, `%ENV`).
    Whole,
}

/// Where interpreter code reads the environment: Python's `os.environ`,
/// `os.getenv`; node's `process.env` (`Bun.env`, `Deno.env`); Perl's
/// `$ENV{…}`, `%ENV`; Ruby's `ENV`; PHP's `getenv`, `$_ENV`, `$_SERVER`;
/// awk's `ENVIRON`; Lua's `os.getenv`.
fn env_accesses(lang: &str, text: &str) -> Vec<EnvAccess> {
    // (token, what follows it reads): `[`/`(`/`{` a key, `.NAME` a key
    // (node), anything else the whole environment.
    let tokens: &[&str] = match lang {
        "python" => &["environ", "environb", "getenv", "getenvb"],
        "node" => &["process.env", "Bun.env", "Deno.env"],
        "perl" => &["$ENV", "%ENV"],
        "ruby" => &["ENV"],
        "php" => &["getenv", "$_ENV", "$_SERVER"],
        "awk" => &["ENVIRON"],
        "lua" => &["getenv"],
        _ => return Vec::new(),
    };
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for token in tokens {
        let mut from = 0;
        while let Some(pos) = text[from..].find(token) {
            let at = from + pos;
            from = at + token.len();
            let before = text[..at].chars().next_back();
            let after = text[from..].chars().next();
            if before.is_some_and(|c| ident(c) || (c == '$' && !token.starts_with('$')))
                || after.is_some_and(ident)
            {
                continue;
            }
            let rest = text[from..].trim_start();
            out.push(access_after(lang, token, rest));
        }
    }
    out
}

/// What the code after an environment token reads.
fn access_after(lang: &str, token: &str, rest: &str) -> EnvAccess {
    let call = token.contains("getenv");
    let method_key = ["get", "fetch", "setdefault", "pop", "key?", "has_key"];
    if let Some(r) = rest.strip_prefix('[').or_else(|| rest.strip_prefix('{')) {
        return key_in(r, token == "$ENV");
    }
    if let Some(r) = rest.strip_prefix('(') {
        return match r.trim_start().strip_prefix(')') {
            Some(_) if call => EnvAccess::Whole,
            _ if call => key_in(r, false),
            _ => EnvAccess::Whole,
        };
    }
    if let Some(r) = rest.strip_prefix("?.").or_else(|| rest.strip_prefix('.')) {
        let name: String = r
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '?')
            .collect();
        let after = r[name.len()..].trim_start();
        if method_key.contains(&name.as_str()) {
            if let Some(a) = after.strip_prefix('(') {
                return key_in(a, false);
            }
            return EnvAccess::Dynamic;
        }
        // `process.env.NAME`; `Deno.env.toObject()`, `os.environ.items()`.
        if lang == "node" && token != "Deno.env" && !name.is_empty() && !after.starts_with('(') {
            return EnvAccess::Key(name);
        }
        return EnvAccess::Whole;
    }
    if lang == "php" && call {
        // `getenv` named, not called: a callback over names.
        return EnvAccess::Dynamic;
    }
    EnvAccess::Whole
}

/// The key of `["NAME"]`, `('NAME')`, `{NAME}` (a bareword, when allowed).
fn key_in(rest: &str, bareword: bool) -> EnvAccess {
    let r = rest.trim_start();
    if let Some(q) = r.chars().next().filter(|c| matches!(c, '"' | '\'')) {
        let body = &r[1..];
        if let Some(end) = body.find(q) {
            let key = &body[..end];
            if !key.contains(['$', '{', '#']) {
                return EnvAccess::Key(key.to_string());
            }
        }
        return EnvAccess::Dynamic;
    }
    let word: String = r
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let closed = r[word.len()..].trim_start().starts_with(['}', ']', ')']);
    if bareword && !word.is_empty() && closed {
        return EnvAccess::Key(word);
    }
    EnvAccess::Dynamic
}

/// An interpreter's one-liner that reads the environment: a secret
/// variable by name is printed as `echo $NAME` would be
/// (`secret-env-print`); all of it, or a name computed at run time, is a
/// dump as `env` is (`secret-location`). `os.environ["HOME"]`,
/// `process.env.NODE_ENV` run.
fn check_code_reads_environment(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(code) = &c.code else { return };
    let accesses = env_accesses(&code.lang, &code.text);
    let lang = code.lang.clone();
    // A name reached another way (`e = os.environ; e["TOKEN"]`, a name
    // given as an argument): a secret's name in the code's strings or on
    // the line, with the environment read.
    let named = || {
        code.literals
            .iter()
            .map(|l| l.trim())
            .chain(c.args().iter().map(|w| w.text.as_str()))
            .find(|l| is_secret_var(l))
            .map(str::to_string)
    };
    // `print(dotenv.dotenv_values())`, `load_dotenv(); print(os.environ)`,
    // `console.log(require('dotenv').config().parsed)`: a .env file's
    // values, printed.
    let t = code.text.as_str();
    let prints = [
        "print",
        "console.",
        "process.stdout",
        "puts",
        "p ENV",
        "pp ",
        "var_dump",
        "var_export",
        "echo ",
    ]
    .iter()
    .any(|p| t.contains(p));
    let values = [
        "dotenv_values",
        "Dotenv.parse",
        "dotenv.parse",
        ".parsed",
        "Dotenv::parse",
        "Dotenv.load",
    ]
    .iter()
    .any(|v| t.contains(v))
        || accesses.contains(&EnvAccess::Whole);
    // A template named (`dotenv_values('.env.example')`) holds no values.
    let names_a_file = code
        .literals
        .iter()
        .any(|l| NormPath::new(l.trim()).name().starts_with(".env"));
    let only_templates = names_a_file
        && !code
            .literals
            .iter()
            .any(|l| paths::is_dotenv_secret(NormPath::new(l.trim()).name()));
    // `node -r dotenv/config -e 'console.log(process.env)'`, `node
    // --env-file=.env -e …`, `ruby -rdotenv/load -e 'p ENV'`: the .env file
    // loaded before the code, which prints the environment.
    let args = c.args();
    let preloaded = args.iter().enumerate().any(|(k, a)| {
        let t = a.text.as_str();
        let env_file = match t.strip_prefix("--env-file") {
            Some("") => args.get(k + 1).map(|w| w.text.as_str()),
            Some(v) => v.strip_prefix('='),
            None => None,
        };
        t.contains("dotenv/config")
            || t.contains("dotenv/load")
            || env_file.is_some_and(|f| paths::is_dotenv_secret(NormPath::new(f).name()))
    });
    // `node -p EXPR` prints the value of the code.
    let prints = prints
        || lang == "node"
            && args
                .iter()
                .any(|a| a.text == "-p" || a.text == "--print" || a.text.starts_with("--print="));
    if preloaded && prints && accesses.contains(&EnvAccess::Whole) {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!("{lang} code prints the environment after loading a .env file into it"),
        );
        return;
    }
    if t.to_ascii_lowercase().contains("dotenv") && prints && values && !only_templates {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!("{lang} code loads a .env file and prints its values"),
        );
        return;
    }
    let key = accesses
        .iter()
        .find_map(|a| match a {
            EnvAccess::Key(k) if is_secret_var(k) => Some(k.clone()),
            _ => None,
        })
        .or_else(|| {
            accesses
                .iter()
                .any(|a| matches!(a, EnvAccess::Whole | EnvAccess::Dynamic))
                .then(named)
                .flatten()
        });
    if let Some(key) = key {
        ctx.hit(
            RuleId::SecretEnvPrint,
            i,
            format!("{lang} code reads ${key}"),
        );
    } else if let Some(a) = accesses
        .iter()
        .find(|a| matches!(a, EnvAccess::Whole | EnvAccess::Dynamic))
    {
        let what = if *a == EnvAccess::Whole {
            "every environment variable, secrets included"
        } else {
            "an environment variable whose name it computes, a secret's as well"
        };
        ctx.hit(
            RuleId::SecretLocation,
            i,
            format!("{lang} code reads {what}"),
        );
    }
}

/// Secret-looking variable names: tokens, keys, passwords, cloud credentials.
pub(crate) fn is_secret_var(name: &str) -> bool {
    aq_knowledge::secret_names::is_secret_env_name(name)
}

fn check_secret_vars(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let name = c.program().unwrap_or("");
    if is_network_tool(name) {
        // A secret in a URL, a request body or any other header leaves the
        // machine; an authentication header to an API is how tokens are
        // meant to be used (`Authorization: Bearer $TOKEN`, `PRIVATE-TOKEN:`,
        // `x-api-key:`, `-u user:$PASSWORD`), except for keys a client
        // signs with and never sends (`$AWS_SECRET_ACCESS_KEY`).
        let args = c.args();
        for (k, w) in args.iter().enumerate() {
            // `-H V`, or a cluster ending in the flag (`-sH V`).
            let after = |flags: &[&str]| {
                k > 0 && {
                    let p = args[k - 1].text.as_str();
                    flags.contains(&p)
                        || p.len() > 2
                            && p.starts_with('-')
                            && !p.starts_with("--")
                            && p[1..].chars().all(|ch| ch.is_ascii_alphabetic())
                            && flags.iter().any(|f| f.len() == 2 && p.ends_with(&f[1..]))
                }
            };
            let header = if after(&["-u", "--user", "--oauth2-bearer", "--proxy-user"]) {
                Some("authorization")
            } else if after(&["-H", "--header", "--proxy-header"]) {
                Some(w.text.as_str())
            } else {
                w.text
                    .strip_prefix("--header=")
                    .or_else(|| w.text.strip_prefix("-H").filter(|h| !h.is_empty()))
                    .or_else(|| {
                        w.text
                            .to_ascii_lowercase()
                            .contains("authorization:")
                            .then_some("authorization")
                    })
            };
            let authenticates = header.is_some_and(|h| {
                let name = h.split(':').next().unwrap_or(h).trim().to_ascii_lowercase();
                // A header only known at run time (`-H "$AUTH"`) says nothing.
                name.starts_with('$')
                    || ["auth", "token", "key", "cookie", "session"]
                        .iter()
                        .any(|n| name.contains(n))
            });
            let signing_key = |v: &String| {
                let upper = v.to_ascii_uppercase();
                upper.contains("SECRET_ACCESS_KEY") || upper.contains("PRIVATE_KEY")
            };
            if authenticates && !w.vars.iter().any(signing_key) {
                continue;
            }
            if let Some(v) = w.vars.iter().find(|v| is_secret_var(v)) {
                ctx.hit(RuleId::NetExfilSecret, i, format!("`{name}` sends ${v}"));
                return;
            }
        }
    }
    let printing = matches!(
        name,
        "echo" | "printf" | "print" | "cat" | "tee" | "logger" | "wall"
    );
    let mut found: Option<String> = None;
    if printing {
        found = c
            .args()
            .iter()
            .flat_map(|w| w.vars.iter())
            .find(|v| is_secret_var(v))
            .cloned();
        if found.is_none() {
            // `cat <<< "$TOKEN"`
            for s in &c.stdin {
                if let Input::Text(t) = s
                    && let Some(v) = t.vars.iter().find(|v| is_secret_var(v))
                {
                    found = Some(v.clone());
                }
            }
        }
    }
    // `declare -p NAME`, `typeset -p NAME`: the variable and its value.
    if matches!(
        name,
        "declare" | "typeset" | "local" | "export" | "readonly"
    ) && c.args().iter().any(|a| is_flag(a) && a.text.contains('p'))
    {
        found = found.or_else(|| {
            operands(c)
                .iter()
                .find(|w| is_secret_var(&w.text))
                .map(|w| w.text.clone())
        });
    }
    if name == "printenv" || name == "env" && c.runs.is_none() {
        found = found.or_else(|| {
            operands(c)
                .iter()
                .find(|w| is_secret_var(&w.text))
                .map(|w| w.text.clone())
        });
    }
    if let Some(v) = found {
        ctx.hit(RuleId::SecretEnvPrint, i, format!("prints ${v}"));
    }
}

/// Secret scanners: they look for secrets by design and print what they
/// find (with its file and line). Over the project that is their job; over
/// the home, `/` or a credential directory it is a hunt.
const SECRET_SCANNERS: &[&str] = &[
    "detect-secrets",
    "ggshield",
    "gitleaks",
    "kingfisher",
    "noseyparker",
    "secretlint",
    "trufflehog",
    "whispers",
];

fn check_hunt(ctx: &mut Ctx, i: usize, name: &str) {
    let c = &ctx.commands()[i];
    if SECRET_SCANNERS.contains(&name) {
        // The trees: operands (`trufflehog filesystem ~`, `gitleaks dir ~`)
        // and the options that name one (`gitleaks detect --source ~`).
        let mut roots: Vec<String> = operands(c).iter().map(|w| w.text.clone()).collect();
        roots.extend(flag_values_text(
            c,
            &["-s"],
            &["source", "directory", "path", "repo-path"],
        ));
        if let Some(root) = roots.iter().find(|r| {
            let r = r.strip_prefix("file://").unwrap_or(r);
            is_broad_root(r) || paths::secret_dir(r).is_some()
        }) {
            ctx.hit(
                RuleId::SecretHunt,
                i,
                format!("`{name}` scans {root} for secrets and prints what it finds"),
            );
        }
        return;
    }
    // `git grep --no-index PATTERN DIR` searches DIR like `grep -r`.
    let git_grep = name == "git" && super::net::git_subcommand(c) == Some("grep");
    match name {
        _ if git_grep
            || matches!(
                name,
                "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "ugrep"
            ) =>
        {
            let from_find = c.args().iter().any(|a| a.text.contains("{}"));
            let recursive = git_grep
                || from_find
                || name != "grep" && name != "egrep" && name != "fgrep"
                || has_flag(c, Some('r'), &["recursive"])
                || has_flag(c, Some('R'), &["dereference-recursive"]);
            if !recursive {
                return;
            }
            let mut ops = operands(c);
            if git_grep {
                ops.retain(|o| o.text != "grep");
            }
            // `find ~ -type f -exec grep -l token {} +`: grep searches what
            // find walks.
            let roots = if ops.iter().any(|o| o.text.contains("{}")) {
                super::finder_roots(ctx, i)
            } else {
                Vec::new()
            };
            let explicit = flag_values_text(c, &["-e"], &["regexp"]);
            let pattern = if explicit.is_empty() && !ops.is_empty() {
                ops.remove(0).text.clone()
            } else {
                explicit.join(" ")
            };
            // `grep -r . ~/.ssh`, `git grep --no-index -e . -- ~/.aws`: every
            // file of a credential directory is read to search it.
            if let Some((root, dir)) = ops
                .iter()
                .map(|o| o.text.as_str())
                .chain(roots.iter().map(String::as_str))
                .find_map(|o| {
                    paths::secret_dir(o)
                        .filter(|_| !NormPath::new(o).is_home())
                        .map(|d| (o.to_string(), d))
                })
            {
                ctx.hit(
                    RuleId::SecretRead,
                    i,
                    format!("`{name}` searches every file of {root} ({dir})"),
                );
                return;
            }
            if let Some(root) = ops
                .iter()
                .map(|o| o.text.as_str())
                .chain(roots.iter().map(String::as_str))
                .find(|o| is_broad_root(o))
                && secretish_pattern(&pattern)
            {
                ctx.hit(
                    RuleId::SecretHunt,
                    i,
                    format!("searches {root} for `{pattern}`"),
                );
            }
        }
        "find" | "locate" | "mlocate" | "plocate" | "fd" | "fdfind" => {
            let roots: Vec<String> = if name == "find" {
                find_roots(c)
            } else {
                vec!["/".to_string()]
            };
            let mut names = searched_names(c);
            if name != "find" {
                names.extend(operands(c).iter().map(|w| w.text.clone()));
            }
            let hunting = names.iter().any(|n| {
                let base = n.rsplit('/').next().unwrap_or(n);
                secretish_pattern(base)
                    || paths::secret_kind(&format!("~/.ssh/{base}")).is_some()
                    || paths::is_dotenv_secret(base)
                    || paths::is_dotenv_secret(&base.replace('*', "x"))
                    || base.ends_with(".env")
            });
            if !hunting {
                return;
            }
            // `find . -name '*.pem'`: the project's own files listed by name
            // (what reads them is judged on its own: `-exec cat {}`).
            let in_project = |r: &String| {
                let p = NormPath::new(r);
                !p.absolute
                    && !p.in_home
                    && !r.starts_with('$')
                    && p.parts.first().is_none_or(|f| f != "..")
                    && !paths::credential_location(r)
            };
            if name == "find" && !roots.is_empty() && roots.iter().all(in_project) {
                return;
            }
            if roots.iter().any(|r| is_broad_root(r)) {
                ctx.hit(
                    RuleId::SecretHunt,
                    i,
                    format!("searches {} for {}", roots.join(" "), names.join(", ")),
                );
            } else {
                ctx.hit(
                    RuleId::SecretLocation,
                    i,
                    format!("looks for credential files ({})", names.join(", ")),
                );
            }
        }
        _ => {}
    }
}

/// The text of a word that is only a decoding substitution of literal text:
/// `$(echo BASE64 | base64 -d)`, `$(base64 -d <<< BASE64)`,
/// `$(echo … | rev)`.
fn decoded_word(ctx: &Ctx, w: &Word) -> Option<String> {
    // The substitution's output is its last command's.
    let j = *w.feeds.iter().max()?;
    let d = &ctx.commands()[j];
    let input = super::written::input_text(ctx, d)?;
    let input = input.trim();
    match d.program()? {
        "base64" if has_flag(d, Some('d'), &["decode"]) => String::from_utf8(base64_decode(input)?)
            .ok()
            .map(|s| s.trim().to_string()),
        "rev" => Some(input.chars().rev().collect()),
        _ => None,
    }
}

/// Standard base64 (padding optional); `None` on any other character.
pub(crate) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut acc: u32 = 0;
    let mut bits = 0;
    for ch in s.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=') {
        let v = match ch {
            b'A'..=b'Z' => ch - b'A',
            b'a'..=b'z' => ch - b'a' + 26,
            b'0'..=b'9' => ch - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}
