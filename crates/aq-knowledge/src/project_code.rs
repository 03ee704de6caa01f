//! Files of a project that its tools run as code when they work there:
//! a `Makefile`'s recipes (`make`), `conftest.py` and test modules
//! (`pytest`), `build.rs` (`cargo build`), a `package.json`'s lifecycle
//! scripts (`npm install`), git hooks (`git commit`). A file of these
//! names that the line downloads and a later command of the line then
//! works with is downloaded code that runs.
//!
//! One row per family of files, sorted by the first program. A file
//! pattern is a name (in the directory the tool works in), `**/NAME` (in
//! it or any directory below), or `DIR/NAME` (under that directory); `*`
//! matches within a name. `subcommands` empty: whatever the tool is asked
//! to do reads the file.

/// Files a tool runs as code, and when.
#[derive(Debug, Clone, Copy)]
pub struct ProjectCode {
    /// The files, as patterns (see the module's documentation).
    pub files: &'static [&'static str],
    /// The programs that run them.
    pub programs: &'static [&'static str],
    /// Their subcommands that do (empty: any).
    pub subcommands: &'static [&'static str],
}

const fn row(
    files: &'static [&'static str],
    programs: &'static [&'static str],
    subcommands: &'static [&'static str],
) -> ProjectCode {
    ProjectCode {
        files,
        programs,
        subcommands,
    }
}

/// Subcommands of the JavaScript package managers that run a project's
/// lifecycle or named scripts.
const JS_SCRIPTS: &[&str] = &[
    "add",
    "ci",
    "i",
    "install",
    "rebuild",
    "restart",
    "run",
    "run-script",
    "start",
    "stop",
    "t",
    "test",
];

/// The table.
pub const PROJECT_CODE: &[ProjectCode] = &[
    // Build scripts run by every build; sources compiled and run.
    row(
        &["build.rs"],
        &["cargo"],
        &[
            "b", "bench", "build", "c", "check", "clippy", "doc", "install", "r", "run", "t",
            "test",
        ],
    ),
    row(
        &["**/*.rs"],
        &["cargo"],
        &["bench", "r", "run", "t", "test"],
    ),
    row(&["CMakeLists.txt", "**/*.cmake"], &["cmake"], &[]),
    row(
        &["composer.json"],
        &["composer"],
        &["install", "run-script", "update"],
    ),
    row(&[".envrc"], &["direnv"], &["allow", "exec"]),
    // Hooks run by the commands that commit, merge, check out or push.
    row(
        &[".git/hooks/*"],
        &["git"],
        &[
            "am",
            "checkout",
            "cherry-pick",
            "commit",
            "merge",
            "pull",
            "push",
            "rebase",
            "revert",
            "switch",
        ],
    ),
    // `go run .`, `go test`, and `//go:generate` lines.
    row(&["**/*.go"], &["go"], &["generate", "run", "test"]),
    row(
        &[
            "build.gradle",
            "build.gradle.kts",
            "settings.gradle",
            "settings.gradle.kts",
        ],
        &["gradle", "gradlew"],
        &[],
    ),
    row(&["Gruntfile.js"], &["grunt"], &[]),
    row(&["gulpfile.js"], &["gulp"], &[]),
    row(&["justfile", "Justfile", ".justfile"], &["just"], &[]),
    row(
        &["GNUmakefile", "Makefile", "makefile", "*.mk"],
        &["make", "gmake", "bmake"],
        &[],
    ),
    row(&["mix.exs"], &["mix"], &[]),
    row(&["pom.xml"], &["mvn", "mvnw"], &[]),
    row(&["noxfile.py"], &["nox"], &[]),
    row(
        &["package.json"],
        &["npm", "bun", "pnpm", "yarn"],
        JS_SCRIPTS,
    ),
    row(&["setup.py"], &["pip", "pip3"], &["install"]),
    // Test modules and conftest files anywhere under the tests' root.
    row(
        &["**/conftest.py", "**/test_*.py", "**/*_test.py"],
        &["py.test", "pytest"],
        &[],
    ),
    row(&["Rakefile", "rakelib/*"], &["rake"], &[]),
    row(&["Taskfile.yml", "Taskfile.yaml"], &["task"], &[]),
    row(&["tox.ini"], &["tox"], &[]),
];

/// Whether `program` (asked to do `subcommand`) runs the project file at
/// `path` (relative to where it works) as code.
pub fn runs_project_file(program: &str, subcommand: Option<&str>, path: &str) -> bool {
    let path = path.trim_start_matches("./");
    if path.starts_with('/') || path.starts_with('~') || path.starts_with("..") {
        return false;
    }
    PROJECT_CODE.iter().any(|r| {
        r.programs.contains(&program)
            && (r.subcommands.is_empty() || subcommand.is_some_and(|s| r.subcommands.contains(&s)))
            && r.files.iter().any(|f| file_matches(f, path))
    })
}

/// Whether `program`, asked to do `subcommand`, runs some project file of
/// the directory it works in (whichever files the directory holds).
pub fn runs_project_files(program: &str, subcommand: Option<&str>) -> bool {
    PROJECT_CODE.iter().any(|r| {
        r.programs.contains(&program)
            && (r.subcommands.is_empty() || subcommand.is_some_and(|s| r.subcommands.contains(&s)))
    })
}

/// Whether a pattern of [`PROJECT_CODE`] names `path`.
fn file_matches(pattern: &str, path: &str) -> bool {
    if let Some(name) = pattern.strip_prefix("**/") {
        let base = path.rsplit('/').next().unwrap_or(path);
        return name_matches(name, base);
    }
    match (pattern.rsplit_once('/'), path.rsplit_once('/')) {
        (None, None) => name_matches(pattern, path),
        (Some((pd, pn)), Some((d, n))) => pd == d && name_matches(pn, n),
        _ => false,
    }
}

/// `*` in `pattern` matches any run of characters of `name`.
fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len() && name.starts_with(head) && {
                let rest = &name[head.len()..];
                (0..=rest.len()).any(|k| rest.is_char_boundary(k) && name_matches(tail, &rest[k..]))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_by_first_program() {
        let firsts: Vec<&str> = PROJECT_CODE.iter().map(|r| r.programs[0]).collect();
        let mut sorted = firsts.clone();
        sorted.sort_unstable();
        assert_eq!(firsts, sorted);
        for r in PROJECT_CODE {
            let mut s = r.subcommands.to_vec();
            s.sort_unstable();
            assert_eq!(s, r.subcommands, "{:?}", r.programs);
        }
    }

    #[test]
    fn tools_run_their_project_files() {
        assert!(runs_project_file("make", None, "Makefile"));
        assert!(runs_project_file("make", Some("test"), "./m.mk"));
        assert!(runs_project_file("pytest", None, "conftest.py"));
        assert!(runs_project_file("pytest", Some("-q"), "tests/test_api.py"));
        assert!(runs_project_file("cargo", Some("build"), "build.rs"));
        assert!(!runs_project_file("cargo", Some("fmt"), "build.rs"));
        assert!(runs_project_file("go", Some("run"), "main.go"));
        assert!(!runs_project_file("go", Some("vet"), "main.go"));
        assert!(runs_project_file("npm", Some("install"), "package.json"));
        assert!(!runs_project_file("npm", Some("view"), "package.json"));
        assert!(runs_project_file(
            "git",
            Some("commit"),
            ".git/hooks/pre-commit"
        ));
        assert!(!runs_project_file(
            "git",
            Some("status"),
            ".git/hooks/pre-commit"
        ));
        assert!(!runs_project_file("make", None, "/tmp/Makefile"));
        assert!(!runs_project_file("make", None, "docs/Makefile"));
    }
}
