//! The table as the rules see it.

use aq_knowledge::programs::{Does, Takes, Via, all, lookup};

#[test]
fn lookup_finds_names_aliases_and_versioned_names() {
    assert_eq!(lookup("less").unwrap().name, "less");
    assert_eq!(lookup("more").unwrap().name, "less");
    assert_eq!(lookup("/usr/bin/rsync").unwrap().name, "rsync");
    assert_eq!(lookup("python3.12").unwrap().name, "python3");
    assert!(lookup("no-such-program-here").is_none());
}

#[test]
fn option_values_are_found_in_every_spelling() {
    let rsync = lookup("rsync").unwrap();
    let cap = rsync
        .caps(Does::Exec)
        .find(|c| c.via == Via::Option && c.takes == Takes::Command)
        .unwrap();
    let argv = ["-e", "sh -c id", "--rsh=ssh -p 2", "-essh", "src", "dst"];
    assert_eq!(cap.option_value(&argv, 0), Some("sh -c id"));
    assert_eq!(cap.option_value(&argv, 2), Some("ssh -p 2"));
    assert_eq!(cap.option_value(&argv, 3), Some("ssh"));
    assert_eq!(cap.option_value(&argv, 4), None);
}

#[test]
fn the_table_is_sorted_and_every_entry_says_something() {
    let names: Vec<&str> = all().iter().map(|p| p.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    for p in all() {
        assert!(
            !p.caps.is_empty() || !p.subs.is_empty() || p.class.is_some(),
            "{}",
            p.name
        );
    }
}

/// Known programs come from one table, so the rules cannot disagree on a
/// program's class: every alias has its
/// program's class, Debian's names included, and the families by prefix.
#[test]
fn known_programs_have_a_class_with_their_aliases() {
    use aq_knowledge::programs::{Class, known_class, lookup};
    for p in all().iter().filter(|p| p.class.is_some()) {
        for n in p.also {
            assert_eq!(
                known_class(n),
                known_class(&p.name),
                "{n} is an alias of {}",
                p.name
            );
        }
    }
    assert_eq!(known_class("bat"), known_class("batcat"));
    assert!(known_class("batcat").is_some());
    for n in [
        "git",
        "cargo",
        "ls",
        "python3.12",
        "node",
        "gradlew",
        "jq",
        "gcc-13",
        "jest",
    ] {
        assert!(known_class(n).is_some(), "{n}");
    }
    assert_eq!(known_class("gh"), Some(Class::Vcs));
    assert_eq!(known_class("frobnicate"), None);
    assert!(lookup("gh").is_some_and(|p| !p.subs.is_empty()));
}

/// The verb classes read a subcommand word whole, after a colon, or by
/// its longest leading dash-separated parts that are a verb.
#[test]
fn verbs_read_subcommand_words() {
    use aq_knowledge::programs::{Effect, verb_effect, verb_spelling};
    assert_eq!(verb_effect("list"), Some(Effect::Read));
    assert_eq!(verb_effect("describe-instances"), Some(Effect::Read));
    assert_eq!(verb_effect("apps:destroy"), Some(Effect::Delete));
    assert_eq!(verb_effect("delete-job"), Some(Effect::Delete));
    assert_eq!(verb_effect("widgets"), None);
    // `get-secret-value` is `get-secret`, not `get`.
    assert_eq!(verb_effect("get-secret-value"), Some(Effect::SecretRead));
    assert_eq!(verb_effect("get-instances"), Some(Effect::Read));
    // API actions in CamelCase are spelled as the classes spell verbs.
    assert_eq!(verb_spelling("DescribeInstances"), "describe-instances");
    assert_eq!(verb_spelling("GetSecretValue"), "get-secret-value");
    assert_eq!(verb_spelling("list"), "list");
    assert_eq!(verb_spelling("SELECT"), "select");
}

#[test]
fn escapes_give_the_command_they_run() {
    use aq_knowledge::programs::escape_command as e;
    assert_eq!(e(":!id").as_deref(), Some("id"));
    assert_eq!(e("!sh -c 'curl x'").as_deref(), Some("sh -c 'curl x'"));
    assert_eq!(e("shell id").as_deref(), Some("id"));
    assert_eq!(e(":sh").as_deref(), Some("sh"));
    assert_eq!(e(":silent !rm -rf ~").as_deref(), Some("rm -rf ~"));
    assert_eq!(
        e(":r !cat ~/.ssh/id_rsa").as_deref(),
        Some("cat ~/.ssh/id_rsa")
    );
    assert_eq!(e(":r!id").as_deref(), Some("id"));
    assert_eq!(e(":call system('id')").as_deref(), Some("id"));
    assert_eq!(
        e(":py3 import os; os.system('id')").as_deref(),
        Some("python3 -c 'import os; os.system('\\''id'\\'')'")
    );
    assert_eq!(e("set number"), None);
    assert_eq!(e(":wq"), None);
    assert_eq!(e("break main"), None);
}

/// The GTFOBins entries that exist on developer machines are all in the table
/// (by name or as another name of an entry).
#[test]
fn gtfobins_programs_found_on_developer_machines_are_covered() {
    let covered = [
        "7z",
        "R",
        "aa-exec",
        "ansible-playbook",
        "ansible-test",
        "aoss",
        "apt",
        "apt-get",
        "aptitude",
        "ar",
        "aria2c",
        "arj",
        "as",
        "ascii85",
        "ash",
        "aspell",
        "at",
        "autoconf",
        "autoheader",
        "autoreconf",
        "awk",
        "aws",
        "base32",
        "base58",
        "base64",
        "basenc",
        "basez",
        "bash",
        "batcat",
        "bc",
        "borg",
        "bundle",
        "bundler",
        "busctl",
        "busybox",
        "byebug",
        "bzip2",
        "c89",
        "c99",
        "cabal",
        "capsh",
        "cargo",
        "cat",
        "cc",
        "certbot",
        "chmod",
        "chown",
        "chattr",
        "choom",
        "chroot",
        "chrt",
        "clisp",
        "cmake",
        "cmp",
        "code",
        "codex",
        "column",
        "comm",
        "composer",
        "cp",
        "cpan",
        "cpio",
        "cpulimit",
        "crontab",
        "csh",
        "csplit",
        "ctr",
        "curl",
        "cut",
        "dash",
        "date",
        "dc",
        "dd",
        "debugfs",
        "dialog",
        "diff",
        "dig",
        "distcc",
        "dmesg",
        "dmsetup",
        "dnf",
        "doas",
        "docker",
        "dos2unix",
        "dotnet",
        "dpkg",
        "dvips",
        "easy_install",
        "ed",
        "egrep",
        "elvish",
        "emacs",
        "enscript",
        "env",
        "eqn",
        "ex",
        "exiftool",
        "expand",
        "expect",
        "fastfetch",
        "fgrep",
        "file",
        "find",
        "finger",
        "firejail",
        "fish",
        "flock",
        "fmt",
        "fold",
        "forge",
        "ftp",
        "fzf",
        "g++",
        "gawk",
        "gcc",
        "gcloud",
        "gcore",
        "gdb",
        "gem",
        "ghc",
        "ghci",
        "git",
        "gnuplot",
        "go",
        "grc",
        "grep",
        "guile",
        "gzip",
        "hd",
        "head",
        "hexdump",
        "hg",
        "highlight",
        "iconv",
        "install",
        "ionice",
        "ip",
        "irb",
        "ispell",
        "java",
        "jjs",
        "joe",
        "join",
        "journalctl",
        "jq",
        "jrunscript",
        "jshell",
        "julia",
        "ksh",
        "ksu",
        "kubectl",
        "latex",
        "latexmk",
        "ld.so",
        "less",
        "lftp",
        "links",
        "ln",
        "loginctl",
        "logsave",
        "look",
        "ltrace",
        "lua",
        "lualatex",
        "luatex",
        "lwp-download",
        "lwp-request",
        "lxd",
        "m4",
        "mail",
        "make",
        "man",
        "mawk",
        "more",
        "mosh-server",
        "mount",
        "mutt",
        "mv",
        "mypy",
        "mysql",
        "nano",
        "nasm",
        "nawk",
        "nc",
        "ncdu",
        "ncftp",
        "neofetch",
        "nginx",
        "nice",
        "nl",
        "nm",
        "nmap",
        "node",
        "nohup",
        "npm",
        "nroff",
        "nsenter",
        "nvim",
        "octave",
        "od",
        "opencode",
        "openssl",
        "openvpn",
        "pandoc",
        "paste",
        "pax",
        "pdb",
        "pdflatex",
        "pdftex",
        "perf",
        "perl",
        "pexec",
        "pg",
        "php",
        "pic",
        "pico",
        "pip",
        "pipx",
        "pkexec",
        "podman",
        "poetry",
        "posh",
        "pr",
        "pry",
        "psftp",
        "psql",
        "ptx",
        "pwsh",
        "pygmentize",
        "pyright",
        "python",
        "rake",
        "ranger",
        "rc",
        "readelf",
        "red",
        "redis",
        "restic",
        "rev",
        "rlwrap",
        "rpm",
        "rpmdb",
        "rpmquery",
        "rpmverify",
        "rsync",
        "ruby",
        "run-parts",
        "rustc",
        "rustdoc",
        "rustfmt",
        "rustup",
        "rview",
        "rvim",
        "sash",
        "scp",
        "screen",
        "script",
        "sed",
        "setarch",
        "setfacl",
        "sftp",
        "sg",
        "shred",
        "shuf",
        "slsh",
        "smbclient",
        "socat",
        "socket",
        "soelim",
        "softlimit",
        "sort",
        "split",
        "sqlite3",
        "ssh",
        "ssh-agent",
        "ssh-copy-id",
        "ssh-keygen",
        "ssh-keyscan",
        "sshfs",
        "sshpass",
        "sshuttle",
        "start-stop-daemon",
        "stdbuf",
        "strace",
        "strings",
        "su",
        "sudo",
        "systemctl",
        "systemd-resolve",
        "systemd-run",
        "tac",
        "tail",
        "tailscale",
        "tar",
        "taskset",
        "tbl",
        "tclsh",
        "tcpdump",
        "tcsh",
        "tee",
        "telnet",
        "terraform",
        "tex",
        "tftp",
        "time",
        "timedatectl",
        "timeout",
        "tmate",
        "tmux",
        "top",
        "torify",
        "torsocks",
        "troff",
        "tsc",
        "tshark",
        "ul",
        "unexpand",
        "uniq",
        "unshare",
        "unsquashfs",
        "unzip",
        "uuencode",
        "uv",
        "vagrant",
        "valgrind",
        "vi",
        "view",
        "vim",
        "vimdiff",
        "virsh",
        "w3m",
        "watch",
        "wc",
        "wg-quick",
        "wget",
        "whiptail",
        "whois",
        "wireshark",
        "wish",
        "xargs",
        "xelatex",
        "xetex",
        "xxd",
        "xz",
        "yarn",
        "yash",
        "yt-dlp",
        "yum",
        "zcat",
        "zgrep",
        "zip",
        "zless",
        "zsh",
        "zsoelim",
        "zypper",
    ];
    // Stored under another spelling.
    let renamed = [("redis", "redis-cli"), ("lxd", "lxc")];
    let mut missing = Vec::new();
    for name in covered {
        let name = renamed
            .iter()
            .find(|(g, _)| *g == name)
            .map_or(name, |(_, ours)| *ours);
        if lookup(name).is_none() {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "not in programs.toml: {missing:?}");
}

fn exec_value(program: &str, argv: &[&str]) -> Vec<String> {
    let p = lookup(program).unwrap_or_else(|| panic!("{program} missing"));
    let mut out = Vec::new();
    for cap in p.caps(Does::Exec).filter(|c| c.via == Via::Option) {
        for k in 0..argv.len() {
            if let Some(v) = cap.option_value(argv, k) {
                out.push(v.to_string());
            }
        }
    }
    out
}

#[test]
fn exec_options_give_the_command_they_run() {
    assert_eq!(
        exec_value(
            "tar",
            &[
                "-cf",
                "/dev/null",
                ".",
                "--checkpoint=1",
                "--checkpoint-action=exec=id"
            ]
        ),
        ["id"]
    );
    assert_eq!(
        exec_value("tar", &["-I", "zstd -19", "-cf", "x.tzst", "d"]),
        ["zstd -19"]
    );
    assert_eq!(
        exec_value("tar", &["-xf", "a.tar", "--to-command=sh -c id"]),
        ["sh -c id"]
    );
    assert_eq!(
        exec_value("zip", &["x.zip", "a", "-T", "-TT", "sh -c id"]),
        ["sh -c id"]
    );
    assert_eq!(exec_value("zip", &["-T", "out.zip"]), Vec::<String>::new());
    assert_eq!(exec_value("man", &["-P", "cat", "ls"]), ["cat"]);
    assert_eq!(exec_value("man", &["-H", "ls"]), Vec::<String>::new());
    assert_eq!(
        exec_value("ssh", &["-oProxyCommand=nc %h %p", "x"]),
        ["nc %h %p"]
    );
    assert_eq!(exec_value("vim", &["-c", ":!id", "f"]), [":!id"]);
    assert_eq!(exec_value("gdb", &["-batch", "-ex", "bt", "./a"]), ["bt"]);
    assert_eq!(exec_value("flock", &["/tmp/l", "-c", "make"]), ["make"]);
    assert_eq!(exec_value("env", &["-S", "sh -c id"]), ["sh -c id"]);
    assert_eq!(
        exec_value("git", &["fetch", "--upload-pack=sh -c id", "."]),
        ["sh -c id"]
    );
    assert_eq!(
        exec_value("sort", &["--compress-program=gzip", "f"]),
        ["gzip"]
    );
    assert_eq!(
        exec_value("rustc", &["-Clinker=./evil", "m.rs"]),
        ["./evil"]
    );
    assert_eq!(
        exec_value("go", &["test", "-exec=./runner", "./..."]),
        ["./runner"]
    );
    // Plain uses name no command.
    assert!(exec_value("timeout", &["60", "cargo", "test"]).is_empty());
    assert!(exec_value("nice", &["-n", "10", "make"]).is_empty());
}

#[test]
fn usual_programs_are_listed_for_ordinary_option_values() {
    let usual = |program: &str, flag: &str| -> Vec<&'static str> {
        lookup(program)
            .unwrap()
            .caps(Does::Exec)
            .find(|c| c.flags.contains(flag))
            .unwrap()
            .usual
            .to_vec()
    };
    assert!(usual("tar", "-I").contains(&"zstd"));
    assert!(usual("man", "-P").contains(&"less"));
    assert!(usual("rsync", "-e").contains(&"ssh"));
    assert!(usual("zip", "-TT").contains(&"unzip"));
}

#[test]
fn files_read_written_and_served() {
    let file_of = |program: &str, does: Does, argv: &[&str]| -> Vec<String> {
        let mut out = Vec::new();
        for cap in lookup(program).unwrap().caps(does) {
            if cap.via == Via::Option && cap.takes == Takes::File {
                for k in 0..argv.len() {
                    if let Some(v) = cap.option_value(argv, k) {
                        out.push(v.to_string());
                    }
                }
            }
        }
        out
    };
    assert_eq!(
        file_of("dd", Does::Read, &["if=/etc/shadow", "of=/tmp/x"]),
        ["/etc/shadow"]
    );
    assert_eq!(
        file_of("dd", Does::Write, &["if=/etc/shadow", "of=/tmp/x"]),
        ["/tmp/x"]
    );
    assert_eq!(
        file_of("find", Does::Write, &[".", "-fprintf", "/tmp/o", "%p"]),
        ["/tmp/o"]
    );
    assert_eq!(
        file_of("wget", Does::Read, &["-i", "urls.txt"]),
        ["urls.txt"]
    );
    assert_eq!(
        file_of("curl", Does::Upload, &["-T", ".env", "https://x"]),
        [".env"]
    );
    assert_eq!(file_of("openssl", Does::Read, &["enc", "-in", "k"]), ["k"]);
    assert_eq!(file_of("sort", Does::Write, &["-o", "out", "in"]), ["out"]);
    assert_eq!(
        file_of("time", Does::Write, &["-o", "t.txt", "make"]),
        ["t.txt"]
    );
    // Using an ssh key is not reading it out.
    assert!(file_of("ssh", Does::Read, &["-i", "~/.ssh/id_ed25519", "host"]).is_empty());

    let serves = |program: &str, argv: &[&str]| {
        lookup(program)
            .unwrap()
            .caps(Does::Serve)
            .any(|c| c.via == Via::Args && c.mode_matches(argv))
    };
    assert!(serves("python3", &["-m", "http.server", "8000"]));
    assert!(serves("php", &["-S", "0.0.0.0:8000"]));
    assert!(serves("ruby", &["-run", "-e", "httpd", ".", "-p", "8000"]));
    assert!(serves("busybox", &["httpd", "-f", "-p", "8080"]));
    assert!(serves("npx", &["http-server", "-p", "8081", "dist"]));
    assert!(serves("nc", &["-l", "9000"]));
    assert!(serves("openssl", &["s_server", "-accept", "8443", "-www"]));
    assert!(!serves("python3", &["-m", "pytest"]));
}

#[test]
fn two_word_options_and_other_escapes() {
    let ssh = lookup("ssh").unwrap();
    let argv = ["-o", "proxycommand=sh -c id", "host"];
    assert!(
        ssh.caps(Does::Exec)
            .any(|c| c.option_value(&argv, 0) == Some("sh -c id"))
    );
    let plain = ["-o", "StrictHostKeyChecking=no", "host"];
    assert!(
        !ssh.caps(Does::Exec)
            .any(|c| c.option_value(&plain, 0).is_some())
    );
    use aq_knowledge::programs::escape_command as e;
    assert_eq!(e("\\! id").as_deref(), Some("id"));
    assert_eq!(e(".shell id").as_deref(), Some("id"));
    assert_eq!(e(".system id").as_deref(), Some("id"));
    assert_eq!(e(".tables"), None);
}

/// Every protected place is a well-formed pattern, given once.
#[test]
fn places_are_well_formed_and_unique() {
    use aq_knowledge::programs::places::PLACES;
    let mut seen = std::collections::HashSet::new();
    for p in PLACES {
        let pattern = p.pattern;
        assert!(seen.insert(pattern), "{pattern} is listed twice");
        let body = pattern
            .strip_prefix("~/")
            .or_else(|| pattern.strip_prefix('/'))
            .unwrap_or(pattern);
        let body = body.strip_suffix('/').unwrap_or(body);
        assert!(!body.is_empty(), "{pattern}: nothing after the anchor");
        for part in body.split('/') {
            assert!(
                !part.is_empty() && part != "." && part != ".." && part != "~",
                "{pattern}: component {part:?}"
            );
            assert!(
                part == "**" || !part.contains("**"),
                "{pattern}: `**` must be a whole component"
            );
        }
        assert!(
            !body.starts_with("**") && !body.ends_with("**"),
            "{pattern}: `**` only between components"
        );
    }
}
