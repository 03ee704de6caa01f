//! Interpreter one-liners (`python -c`, `perl -e`, `node -e`, `ruby -e`,
//! `php -r`): the shell commands inside them are unwrapped by `aq-shell`;
//! here the code itself is read for sockets wired to shells, downloads that
//! are executed, network use and writes to startup files.

use aq_shell::Code;

use super::Ctx;
use crate::catalog::RuleId;
use crate::places;

fn any(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| text.contains(n))
}

/// The call that installs packages from inside interpreter code, as `npm
/// install` does from the shell: Julia's `Pkg.add`, R's
/// `install.packages` and the `remotes`/`devtools`/`pak`/`renv` installers.
fn installs_packages(code: &Code) -> Option<&'static str> {
    let calls: &[&'static str] = match code.lang.as_str() {
        "julia" => &[
            "Pkg.add(",
            "Pkg.develop(",
            "Pkg.update(",
            "Pkg.instantiate(",
            "Pkg.Registry.add(",
            "pkg\"add ",
            "pkg\"up",
            "pkg\"instantiate",
        ],
        "r" => &[
            "install.packages(",
            "install_github(",
            "install_gitlab(",
            "install_bitbucket(",
            "install_git(",
            "install_url(",
            "install_cran(",
            "install_version(",
            "install_deps(",
            "devtools::install(",
            "BiocManager::install(",
            "pak::pkg_install(",
            "pak::pak(",
            "renv::install(",
            "renv::restore(",
        ],
        _ => &[],
    };
    calls.iter().copied().find(|c| code.text.contains(c))
}

/// Whether the code opens network connections.
pub(crate) fn uses_network(code: &Code) -> bool {
    let t = code.text.as_str();
    match code.lang.as_str() {
        "python" => any(
            t,
            &[
                "urllib",
                "requests.",
                "import requests",
                "http.client",
                "httpx",
                "aiohttp",
                "socket",
                "urlopen",
                "ftplib",
                "smtplib",
                "telnetlib",
                "paramiko",
                "websocket",
            ],
        ),
        "node" => any(
            t,
            &[
                "require('http",
                "require(\"http",
                "require('https",
                "require(\"https",
                "require('net",
                "require(\"net",
                "require('dgram",
                "from 'http",
                "fetch(",
                "http.get",
                "https.get",
                "https.request",
                "http.request",
                "net.connect",
                "net.Socket",
                "createConnection",
                "axios",
                "WebSocket",
                "node:http",
                "node:https",
                "node:net",
                "Deno.connect",
                "Deno.listen",
                "Bun.connect",
                "Bun.listen",
            ],
        ),
        "perl" => any(
            t,
            &[
                "IO::Socket",
                "LWP",
                "HTTP::Tiny",
                "Net::",
                "Socket",
                "getstore",
                "get(",
            ],
        ),
        "ruby" => any(
            t,
            &[
                "TCPSocket",
                "Net::HTTP",
                "open-uri",
                "URI.open",
                "Socket",
                "UDPSocket",
                "HTTParty",
                "Faraday",
            ],
        ),
        "php" => any(
            t,
            &[
                "fsockopen",
                "curl_exec",
                "curl_init",
                "file_get_contents(\"http",
                "file_get_contents('http",
                "stream_socket_client",
                "fopen(\"http",
                "fopen('http",
                "socket_create",
            ],
        ),
        "lua" => any(t, &["socket", "http.request"]),
        "awk" => t.contains("/inet/"),
        "r" => any(
            t,
            &[
                "download.file",
                "url(",
                "httr",
                "curl::",
                "socketConnection",
                "make.socket",
            ],
        ),
        "tcl" => t.contains("socket "),
        "julia" => any(
            t,
            &["Downloads", "download(", "HTTP.", "Sockets", "connect("],
        ),
        "elixir" => any(
            t,
            &[
                ":gen_tcp",
                ":httpc",
                "HTTPoison",
                "Req.",
                "Finch",
                "Mint.HTTP",
                "Mix.install",
            ],
        ),
        "java" => any(
            t,
            &[
                "java.net",
                "HttpClient",
                "URL(",
                "Socket(",
                "openStream",
                "HttpURLConnection",
            ],
        ),
        "haskell" => any(
            t,
            &["Network.", "simpleHttp", "httpLBS", "httpBS", "connectTo"],
        ),
        "ocaml" => any(
            t,
            &[
                "Unix.socket",
                "Unix.open_connection",
                "Unix.connect",
                "Cohttp",
                "Curl.",
            ],
        ),
        "crystal" => any(t, &["HTTP::Client", "Socket"]),
        "raku" => any(t, &["IO::Socket", "HTTP::", "Cro::"]),
        "erlang" => any(t, &["gen_tcp", "httpc", "ssl:connect"]),
        "octave" => any(
            t,
            &["urlread", "urlwrite", "webread", "websave", "tcpclient"],
        ),
        "lisp" => any(
            t,
            &[
                "socket",
                "drakma",
                "dexador",
                "dex:",
                "http-request",
                "tcp-connect",
            ],
        ),
        "elisp" => any(
            t,
            &[
                "url-retrieve",
                "url-copy-file",
                "url-insert-file-contents",
                "open-network-stream",
                "make-network-process",
            ],
        ),
        "powershell" => {
            let l = t.to_ascii_lowercase();
            any(
                &l,
                &[
                    "iwr",
                    "irm",
                    "invoke-webrequest",
                    "invoke-restmethod",
                    "downloadstring",
                    "downloadfile",
                    "net.webclient",
                    "new-object net.sockets",
                    "net.sockets.",
                    "tcpclient",
                    "curl ",
                    "wget ",
                ],
            )
        }
        _ => false,
    }
}

fn uses_socket(code: &Code) -> bool {
    let t = code.text.as_str();
    match code.lang.as_str() {
        "python" => t.contains("socket"),
        "node" => any(
            t,
            &[
                "net.connect",
                "net.Socket",
                "createConnection",
                "require('net",
                "require(\"net",
                "node:net",
                "Deno.connect",
                "Deno.listen",
                "Bun.connect",
                "Bun.listen",
            ],
        ),
        "perl" => any(t, &["IO::Socket", "Socket", "socket("]),
        "ruby" => any(t, &["TCPSocket", "Socket"]),
        "php" => any(t, &["fsockopen", "stream_socket_client", "socket_create"]),
        "lua" => t.contains("socket"),
        "awk" => t.contains("/inet/"),
        "tcl" => t.contains("socket "),
        "r" => any(t, &["socketConnection", "make.socket", "socketAccept"]),
        "julia" => any(t, &["connect(", "listen(", "Sockets"]),
        "crystal" => any(t, &["TCPSocket", "TCPServer", "UNIXSocket"]),
        "raku" => t.contains("IO::Socket"),
        "erlang" => t.contains("gen_tcp"),
        "elixir" => any(t, &[":gen_tcp", "Socket"]),
        "java" => any(t, &["Socket("]),
        "haskell" => any(t, &["connectTo", "Network.Socket"]),
        "ocaml" => any(t, &["Unix.socket", "Unix.open_connection", "Unix.connect"]),
        "lisp" => any(t, &["socket", "tcp-connect"]),
        "elisp" => any(t, &["open-network-stream", "make-network-process"]),
        "powershell" => {
            let l = t.to_ascii_lowercase();
            any(&l, &["net.sockets", "tcpclient", "tcplistener"])
        }
        _ => false,
    }
}

/// Whether the code hands control to a shell or to the process's file
/// descriptors (what turns a socket into a remote shell).
fn wires_shell(code: &Code) -> bool {
    let t = code.text.as_str();
    any(
        t,
        &[
            "dup2",
            "pty.spawn",
            "/bin/sh",
            "/bin/bash",
            "/bin/zsh",
            "cmd.exe",
            "subprocess",
            "os.system",
            "os.exec",
            "child_process",
            "spawn(",
            "exec(",
            "exec ",
            "open(STDIN",
            "STDIN",
            "popen",
            "proc_open",
            "system(",
            "IO.popen",
            "|&",
            "sh -i",
            // Julia's commands, Crystal's and Elixir's processes, Deno's
            // and Bun's, the JVM's, Haskell's, OCaml's, Lisp's, PowerShell's.
            "`sh`",
            "`bash`",
            "pipeline(",
            "Process.run",
            "Process.new",
            "System.cmd",
            ":os.cmd",
            "Port.open",
            "ProcessBuilder",
            "Runtime.getRuntime",
            "Deno.Command",
            "Deno.run",
            "Bun.spawn",
            "run-program",
            "callCommand",
            "Sys.command",
            "Unix.exec",
            "Unix.create_process",
            "shell-command",
            "Invoke-Expression",
            "iex",
        ],
    )
}

/// Whether the code runs what it received as code.
fn evaluates(code: &Code) -> bool {
    let t = code.text.as_str();
    match code.lang.as_str() {
        "python" => any(
            t,
            &["exec(", "eval(", "os.system", "subprocess", "compile("],
        ),
        "node" => any(
            t,
            &[
                "eval(",
                "(eval)",
                "eval)",
                ", eval",
                "new Function",
                "vm.run",
                "child_process",
                "execSync",
                "spawn",
            ],
        ),
        "perl" => any(t, &["eval", "system", "exec", "`"]),
        "ruby" => any(t, &["eval", "system", "exec", "`", "IO.popen"]),
        "php" => any(
            t,
            &[
                "eval(",
                "system(",
                "exec(",
                "passthru",
                "shell_exec",
                "assert(",
            ],
        ),
        "lua" => any(t, &["loadstring", "load(", "dofile", "os.execute"]),
        "julia" => any(
            t,
            &["eval(", "include_string", "Meta.parse", "include(", "run("],
        ),
        "elixir" => any(t, &["Code.eval", "System.cmd", ":os.cmd", "System.shell"]),
        "r" => any(t, &["eval(parse", "source(", "system("]),
        "java" => any(t, &["exec(", "ProcessBuilder", "eval("]),
        "haskell" => any(t, &["callCommand", "system", "runCommand"]),
        "ocaml" => any(t, &["Sys.command", "Unix.system"]),
        "crystal" => any(t, &["system", "Process.run", "`"]),
        "lisp" | "elisp" => any(t, &["(eval", "(load", "read-from-string", "shell-command"]),
        "powershell" => {
            let l = t.to_ascii_lowercase();
            any(
                &l,
                &[
                    "iex",
                    "invoke-expression",
                    "start-process",
                    "& (",
                    ".invoke(",
                ],
            )
        }
        _ => false,
    }
}

/// Whether the code runs, as code, what it reads on its standard input
/// (`exec(sys.stdin.read())`, `eval(require('fs').readFileSync(0, 'utf8'))`,
/// `eval STDIN.read`, `eval join '', <STDIN>`): a pipe into it is its program.
pub(crate) fn runs_stdin(code: &Code) -> bool {
    let t = code.text.as_str();
    if code.lang == "awk" {
        // `{system($0)}`, `{print | "sh"}`: each record of the input is a
        // command.
        let computed = t
            .match_indices("system(")
            .any(|(k, _)| !t[k + 7..].trim_start().starts_with('"'));
        let to_shell = code.literals.iter().any(|l| {
            let l = l.trim();
            let name = l.rsplit('/').next().unwrap_or(l);
            aq_shell::is_shell(name)
        }) && t.contains('|');
        return computed || to_shell;
    }
    let reads = t.to_ascii_lowercase().contains("stdin")
        || any(
            t,
            &[
                "input(",
                "readFileSync(0",
                "open(0",
                "php://stdin",
                "io.read(",
            ],
        );
    reads && evaluates(code)
}

/// Whether the code moves or copies files or trees (`shutil.move`,
/// `shutil.copytree`, `os.rename`, `fs.cpSync`, `FileUtils.mv`, `File.rename`).
pub(crate) fn moves_or_copies(code: &Code) -> bool {
    any(
        &code.text,
        &[
            "shutil.move",
            "shutil.copy",
            "copytree",
            "os.rename",
            "os.renames",
            "os.replace",
            ".rename(",
            "renameSync",
            "copyFileSync",
            "cpSync",
            "fs.cp(",
            "FileUtils.mv",
            "FileUtils.cp",
            "File.rename",
            "rename(",
            "copy(",
            "move(",
        ],
    )
}

fn writes(code: &Code) -> bool {
    let t = code.text.as_str();
    any(
        t,
        &[
            "'a'",
            "\"a\"",
            "'w'",
            "\"w\"",
            "write",
            ">>",
            "appendFile",
            "writeFile",
            "File.open",
            "fopen",
            "print {",
            "remove(",
            "unlink",
            "rmtree",
            "rename(",
            "truncate",
            "shutil.copy",
            "shutil.move",
            "copyfile(",
            "os.replace(",
            "symlink(",
            "copyFileSync",
            "renameSync",
            "FileUtils.cp",
            "FileUtils.mv",
        ],
    )
}

/// Whether the code decodes base64 (`b64decode`, `decode_base64`,
/// `Buffer.from(S, 'base64')`, `atob`, Ruby's `unpack("m")`).
fn decodes_base64(code: &Code) -> bool {
    let t = code.text.as_str();
    any(
        t,
        &[
            "b64decode",
            "base64.decode",
            "decode_base64",
            "Base64.decode",
            "base64_decode",
            "atob(",
            "FromBase64String",
            "unpack(\"m",
            "unpack('m",
            "unpack1(\"m",
            "unpack1('m",
        ],
    ) || (t.contains("Buffer.from(") && any(t, &["'base64'", "\"base64\""]))
}

/// Whether the code opens or writes a file by name: a write mode given to
/// `open` (`'wb'`, Perl's `">"`), `writeFileSync`, `write_bytes`,
/// `file_put_contents`. Writing to standard output (`sys.stdout.write`,
/// `print`) is not.
fn writes_file(code: &Code) -> bool {
    any(
        &code.text,
        &[
            "'w'",
            "\"w\"",
            "'wb'",
            "\"wb\"",
            "'w+'",
            "'wb+'",
            "'a'",
            "\"a\"",
            "'ab'",
            "\"ab\"",
            "\">",
            "'>",
            "writeFile",
            "appendFile",
            "createWriteStream",
            "write_bytes(",
            "write_text(",
            "File.write",
            "File.binwrite",
            "IO.binwrite",
            "File.open",
            "file_put_contents",
            "Files.write",
            "WriteAllBytes",
            "WriteAllText",
        ],
    )
}

/// Whether the code decodes base64 and runs the result.
fn runs_decoded(code: &Code) -> bool {
    let t = code.text.as_str();
    any(
        t,
        &[
            "b64decode",
            "base64.decode",
            "decode_base64",
            "Base64.decode",
            "base64_decode",
            "atob(",
            "Buffer.from(",
            "FromBase64String",
            "unpack(\"m",
        ],
    ) && evaluates(code)
}

/// Recursive deletion of the root or the home directory from code.
fn removes_root(code: &Code) -> Option<String> {
    let t = code.text.as_str();
    let deleting = any(
        t,
        &[
            "rmtree",
            "rm_rf",
            "rm_r",
            "rmSync",
            "rimraf",
            "remove_tree",
            "rmdir",
            "Remove-Item",
            "FileUtils.rm",
        ],
    );
    if !deleting {
        return None;
    }
    if t.contains("expanduser('~')")
        || t.contains("expanduser(\"~\")")
        || t.contains("Path.home()")
        || t.contains("homedir()")
        || t.contains("ENV['HOME']")
        || t.contains("$ENV{HOME}")
        || t.contains("Dir.home")
        || t.contains("os.homedir()")
    {
        return Some("the home directory".into());
    }
    code.literals
        .iter()
        .find(|l| {
            let l = l.trim();
            crate::paths::is_system_dir(l) || crate::paths::is_everything_in_system_dir(l)
        })
        .cloned()
}

/// Calls that delete a whole tree: `fs.rm(P, {recursive: true})`, R's
/// `unlink(P, recursive = TRUE)`, Emacs's `(delete-directory P t)`, Rust's
/// `remove_dir_all(P)`, Kotlin's and Java's `deleteRecursively`.
const TREE_DELETES: &[&str] = &[
    "rm(",
    "remove(",
    "removeSync(",
    "rm_rf!(",
    "rmSync(",
    "unlink(",
    "delete-directory",
    "remove_dir_all(",
    "deleteRecursively(",
    "rmtree(",
    "rm_rf(",
    "rm_r(",
];

/// Calls that list every file under a directory: deleting each file they
/// list deletes the tree (`for r, d, fs in os.walk(HOME): os.remove(…)`).
const WALKS: &[&str] = &[
    "walk(",
    "glob(",
    "rglob(",
    "walkdir(",
    "readdirSync(",
    "WalkDir::new(",
    "Files.walk(",
    "find(",
];

/// Calls that delete one file.
const FILE_DELETES: &[&str] = &[
    "remove(",
    "unlink(",
    "unlinkSync(",
    "File.delete(",
    "delete(",
    "delete-file",
    "rm(",
];

/// Recursive deletion of the home directory, as code calls it: a tree
/// delete given the home directory, or each file of a walk of it deleted.
fn removes_home_tree(code: &Code) -> bool {
    let t = code.text.as_str();
    let tree = TREE_DELETES.iter().any(|call| {
        let recursive_only = matches!(
            *call,
            "rm(" | "remove(" | "removeSync(" | "unlink(" | "delete-directory"
        );
        calls_on_home(t, call)
            && (!recursive_only
                || any(t, &["recursive", "Recursive"])
                || *call == "delete-directory" && t.contains(" t)"))
    });
    tree || FILE_DELETES.iter().any(|d| t.contains(d)) && WALKS.iter().any(|w| calls_on_home(t, w))
}

/// Whether a call of `call` in `text` is given the home directory (or
/// every file in it, `File.join(Dir.home, "**", "*")`) as its first
/// argument.
fn calls_on_home(text: &str, call: &str) -> bool {
    let mut from = 0;
    while let Some(pos) = text[from..].find(call) {
        let at = from + pos;
        from = at + call.len();
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = text[from..].trim_start_matches([' ', '\t', '(']);
        let arg = first_argument(rest);
        if argument_is_home(arg) {
            return true;
        }
    }
    false
}

/// The first argument at the start of `rest`: up to a `,`, a closing
/// bracket or, for an argument that is one string, white space.
fn first_argument(rest: &str) -> &str {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (i, c) in rest.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                if depth == 0 {
                    return &rest[..i + 1];
                }
            }
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') if depth == 0 => return &rest[..i],
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',' | ';') if depth == 0 => return &rest[..i],
            (None, c) if c.is_whitespace() && depth == 0 && i > 0 => return &rest[..i],
            _ => {}
        }
    }
    rest
}

/// An argument that names the home directory and nothing under it but
/// globs: `Path.home()`, `process.env.HOME`, `"~"`, `File.join(Dir.home,
/// "**", "*")`.
fn argument_is_home(arg: &str) -> bool {
    let arg = arg.trim();
    let unquoted = arg.trim_matches(['"', '\'']);
    if crate::paths::NormPath::new(unquoted).is_home() {
        return true;
    }
    if !aq_shell::names_home(arg) && !arg.contains("\"~\"") && !arg.contains("'~'") {
        return false;
    }
    // What the expression adds to the home directory: only globs.
    let mut quoted = String::new();
    let mut inside: Option<char> = None;
    for c in arg.chars() {
        match (inside, c) {
            (Some(q), c) if c == q => inside = None,
            (Some(_), c) => quoted.push(c),
            (None, '"' | '\'') => inside = Some(c),
            _ => {}
        }
    }
    quoted
        .chars()
        .all(|c| matches!(c, '*' | '/' | '~' | '.') || c.is_whitespace())
        || quoted == "HOME"
}

/// Whether the code refers to the home directory.
fn mentions_home(t: &str) -> bool {
    any(
        t,
        &[
            "Path.home()",
            "expanduser(",
            "homedir()",
            "ENV['HOME']",
            "ENV[\"HOME\"]",
            "$ENV{HOME}",
            "getenv(\"HOME\")",
            "getenv('HOME')",
            "environ['HOME']",
            "environ[\"HOME\"]",
            "Dir.home",
            "$HOME",
            "~/",
        ],
    )
}

/// Credential places named piecewise (`Path.home() / ".ssh"`, then
/// `glob("id_*")`): a secret read even though no literal is a whole path.
fn home_secret_dir(code: &Code) -> Option<&'static str> {
    if !mentions_home(&code.text) {
        return None;
    }
    // The catalog's home rows, as a literal would name them (`.ssh`,
    // `.config/gh`, `.npmrc`).
    aq_knowledge::credentials::in_place(aq_knowledge::credentials::Place::Home)
        .filter(|c| c.mask != aq_knowledge::credentials::Mask::Inside)
        .find(|c| {
            let rel = c.mask_path().trim_start_matches("~/");
            code.literals
                .iter()
                .any(|l| l.trim().trim_matches('/') == rel)
        })
        .map(|c| c.what)
}

/// Paths in the home directory that code builds from pieces
/// (`Path.home() / ".claude" / "settings.json"`, `path.join(os.homedir(),
/// ".bashrc")`): two or three literals in a row, joined under `~/`.
fn piecewise_home_paths(code: &Code) -> Vec<String> {
    if !mentions_home(&code.text) {
        return Vec::new();
    }
    let parts: Vec<&str> = code
        .literals
        .iter()
        .map(|l| l.trim().trim_matches('/'))
        .collect();
    let mut out = Vec::new();
    for k in 0..parts.len() {
        let piece = |j: usize| parts.get(j).filter(|p| !p.is_empty() && !p.contains(' '));
        let Some(first) = piece(k) else { continue };
        if !first.starts_with('.') && *first != "Library" {
            continue;
        }
        out.push(format!("~/{first}"));
        if let Some(second) = piece(k + 1) {
            out.push(format!("~/{first}/{second}"));
            if let Some(third) = piece(k + 2) {
                out.push(format!("~/{first}/{second}/{third}"));
            }
        }
    }
    // The longest spelling names the place most exactly.
    out.reverse();
    out
}

/// The paths code writes, as far as its text shows: a literal path
/// (absolute, `~/…`, or a literal after the home directory joined with
/// `+`: `os.homedir() + "/x"`, `Dir.home + "/x"`) inside a call that
/// writes (`writeFileSync(`, `File.write(`, `appendFile`) or followed by
/// a write mode (`open(P, "w")`, `File.open(P, "a")`) or a writing method
/// (`Path(P).write_text(`).
fn written_paths(code: &Code) -> Vec<String> {
    const CALLS: &[&str] = &[
        "writeFile",
        "appendFile",
        "createWriteStream",
        "mkdirSync",
        "File.write",
        "IO.write",
        "FileUtils.touch",
        "FileUtils.mkdir",
        "os.makedirs(",
        "os.mkdir(",
    ];
    const AFTER: &[&str] = &[
        "'w'",
        "\"w\"",
        "'a'",
        "\"a\"",
        "'wb'",
        "\"wb\"",
        "'ab'",
        "\"ab\"",
        "'w+'",
        "\"w+\"",
        ".write_text(",
        ".write_bytes(",
        ".touch(",
        ".mkdir(",
    ];
    let t = code.text.as_str();
    let home = mentions_home(t);
    let mut out = Vec::new();
    for lit in &code.literals {
        let lit = lit.trim();
        if lit.is_empty() || lit.contains(char::is_whitespace) {
            continue;
        }
        for (at, _) in t.match_indices(lit) {
            let before = &t[..at];
            // The quote the literal sits in, then what precedes it.
            let before = before.strip_suffix(['"', '\'', '`']).unwrap_or(before);
            let after = &t[at + lit.len()..];
            let after = after.get(..after.len().min(24)).unwrap_or(after);
            let path = if lit.starts_with('/') || lit.starts_with("~/") {
                let joined = before.trim_end().strip_suffix('+').map(str::trim_end);
                match joined {
                    Some(b)
                        if home
                            && [")", "Dir.home", "HOME']", "HOME\"]", "HOME}"]
                                .iter()
                                .any(|e| b.ends_with(e)) =>
                    {
                        format!("~{lit}")
                    }
                    Some(_) => continue,
                    None => lit.to_string(),
                }
            } else {
                continue;
            };
            let window = &before[before.len().saturating_sub(48)..];
            let window = window.rsplit(['\n', ';']).next().unwrap_or(window);
            let in_call = CALLS.iter().any(|c| window.contains(c));
            let mode = AFTER.iter().any(|m| after.contains(m));
            if (in_call || mode) && !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// A fork loop: `fork while fork`, `while True: os.fork()`, `loop { fork }`.
fn fork_loop(code: &Code) -> bool {
    let t = code.text.as_str();
    t.contains("fork") && any(t, &["while", "loop", "for ", "for(", "until"])
}

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    let Some(code) = &c.code else { return };
    let lang = code.lang.clone();
    if uses_socket(code) && wires_shell(code) {
        let t = code.text.as_str();
        let rule = if any(
            t,
            &[
                "bind(",
                ".listen(",
                "TCPServer",
                "Listen=>",
                "LocalPort",
                "createServer",
            ],
        ) {
            RuleId::NetBindShell
        } else {
            RuleId::NetReverseShell
        };
        ctx.hit(rule, i, format!("{lang} code connects a socket to a shell"));
        return;
    }
    if fork_loop(code) {
        ctx.hit(
            RuleId::ProcForkBomb,
            i,
            format!("{lang} code forks in a loop"),
        );
        return;
    }
    if let Some(what) = home_secret_dir(code) {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!("{lang} code reads {what} from the home directory"),
        );
        return;
    }
    // `joinpath(homedir(), ".ssh/id_rsa")`: a credential file named from
    // the home directory and a relative path.
    if let Some((path, kind)) = piecewise_home_paths(code)
        .into_iter()
        .find_map(|p| ctx.secret_kind(&p).map(|k| (p, k)))
    {
        ctx.hit(
            RuleId::SecretRead,
            i,
            format!("{lang} code reads {path} ({kind})"),
        );
        return;
    }
    // `os.kill(os.getppid(), 9)`, `process.kill(process.ppid)`: the parent,
    // which is aq's shell or the agent.
    let t = code.text.as_str();
    if t.contains("kill")
        && any(
            t,
            &[
                "getppid",
                "process.ppid",
                "Process.ppid",
                "$PPID",
                "getppid()",
            ],
        )
    {
        ctx.hit(
            RuleId::GuardKillSupervisor,
            i,
            format!("{lang} code signals its parent process"),
        );
        return;
    }
    let target = removes_root(code)
        .or_else(|| removes_home_tree(code).then(|| "the home directory".to_string()));
    if let Some(target) = target {
        ctx.hit(
            RuleId::FsRmRecursiveRoot,
            i,
            format!("{lang} code recursively deletes {target}"),
        );
        return;
    }
    let encoded_flag = lang == "powershell"
        && c.args().iter().any(|a| {
            matches!(
                a.text.to_ascii_lowercase().as_str(),
                "-encodedcommand" | "-enc" | "-e" | "-ec"
            )
        });
    if runs_decoded(code) || encoded_flag {
        ctx.hit(
            RuleId::ExecDecodedPayload,
            i,
            format!("{lang} code decodes hidden text and runs it"),
        );
        return;
    }
    // `open('x.sh','wb').write(base64.b64decode('…'))`: content that is
    // not on the line, written to a file, as `base64 -d > x.sh` is.
    let c = &ctx.commands()[i];
    let Some(code) = &c.code else { return };
    if decodes_base64(code) && (writes_file(code) || super::tools::stdout_to_file(c)) {
        ctx.hit(
            RuleId::DecodeToFile,
            i,
            format!("{lang} code writes base64-decoded content to a file"),
        );
    }
    let c = &ctx.commands()[i];
    let Some(code) = &c.code else { return };
    if writes(code)
        && let Some(h) = code
            .literals
            .iter()
            .map(|l| l.trim())
            .find(|l| crate::paths::is_history_file(l))
    {
        ctx.hit(
            RuleId::AntiHistoryTamper,
            i,
            format!("{lang} code writes or removes the history file {h}"),
        );
    }
    let code = ctx.commands()[i].code.as_ref().expect("checked above");
    // `open(site.getusersitepackages() + '/x.pth', 'w')`: a `.pth` file in
    // Python's site directory, whose `import` lines run at every start.
    if writes(code)
        && any(
            &code.text,
            &[
                "getusersitepackages",
                "getsitepackages",
                "USER_SITE",
                "site-packages",
                "dist-packages",
                "purelib",
                "platlib",
                "get_python_lib",
            ],
        )
        && let Some((file, lit)) = code.literals.iter().find_map(|l| {
            let name = l.trim().trim_start_matches('/');
            name.ends_with(".pth")
                .then(|| places::tool_config_with(&format!("site-packages/{name}"), ctx.policy))
                .flatten()
                .map(|f| (f, name.to_string()))
        })
    {
        ctx.hit(
            RuleId::PersistToolConfig,
            i,
            format!(
                "{lang} code writes {lit} into {}'s site directory: its `import` lines run at every start",
                file.tool
            ),
        );
        return;
    }
    let persist = code
        .literals
        .iter()
        .map(|l| l.trim().to_string())
        .chain(piecewise_home_paths(code))
        .filter_map(|p| places::place_with(&p, ctx.policy).map(|m| (m.kind, p)))
        .next();
    if let Some((kind, path)) = persist.filter(|_| writes(code)) {
        let rule = super::guard::agent_file_rule(ctx, i, &path, kind);
        let noun = match rule {
            RuleId::GuardAgentSettings => "the agent's settings",
            RuleId::GuardAgentHooks => super::files::place_noun(places::PlaceKind::AgentHook),
            _ => super::files::place_noun(kind),
        };
        ctx.hit(rule, i, format!("{lang} code writes {noun} {path}"));
    } else if writes(code) {
        // `open("/home/dev/src/other-app/x", "w")`, `fs.writeFileSync(
        // os.homedir() + "/x.txt", …)`: a file written outside the
        // workspace, judged by where it is, as a redirection would be.
        for path in written_paths(code) {
            super::files::check_area(ctx, i, &path, &format!("{lang} code writes"), None);
        }
    }
    let code = ctx.commands()[i].code.as_ref().expect("checked above");
    if let Some(call) = installs_packages(code) {
        ctx.hit(
            RuleId::PkgInstall,
            i,
            format!("{lang} code installs packages ({call})"),
        );
    }
    let code = ctx.commands()[i].code.as_ref().expect("checked above");
    if uses_network(code) {
        if evaluates(code) {
            ctx.hit(
                RuleId::NetDownloadExec,
                i,
                format!("{lang} code fetches from the network and runs what it gets"),
            );
        } else if lang != "awk" {
            ctx.hit(
                RuleId::InterpNetwork,
                i,
                format!("{lang} code opens network connections"),
            );
        }
    }
}
