//! The whole suite again as an unprivileged user, from inside `cargo test`:
//! CI runs only `cargo test --workspace --locked`, as root, and every boundary
//! must hold for root and for an ordinary user alike (uid 0 differs: it maps
//! to the host's root, `RLIMIT_NPROC` does not bind it, it can write cgroups).

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// Variables the nested run keeps (everything else is cleared).
const PASSED_THROUGH: [&str; 3] = [
    "AQ_SANDBOX_REQUIRE_FULL",
    "AQ_SANDBOX_REQUIRE_CGROUP",
    "RUST_BACKTRACE",
];

/// `(uid, gid)` of `name` in `/etc/passwd`.
fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        match fields[..] {
            [n, _, uid, gid, ..] if n == name => Some((uid.parse().ok()?, gid.parse().ok()?)),
            _ => None,
        }
    })
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// As root and not nested already: copy this test binary where another user
/// can read it (the build tree may be under `/root`), run it as `aqtest` (CI
/// creates it) or else uid/gid 65534, and demand that it passes.
#[test]
fn suite_passes_as_an_unprivileged_user() {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    if euid != 0 || std::env::var_os("AQ_SANDBOX_NESTED").is_some() {
        // This run is the unprivileged one.
        return;
    }
    let (who, (uid, gid)) = match lookup_user("aqtest") {
        Some(ids) => ("aqtest", ids),
        None => ("uid 65534", (65534, 65534)),
    };
    let dir = tempfile::Builder::new()
        .prefix("aq-sandbox-unprivileged")
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    chmod(dir.path(), 0o755);
    let exe = dir.path().join("sandbox-tests");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    chmod(&exe, 0o755);
    // HOME and TMPDIR (the tests' scratch directories) owned by the user.
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(uid), Some(gid)).unwrap();
    chmod(&home, 0o700);

    let mut cmd = Command::new(&exe);
    cmd.args([
        "--skip",
        "suite_passes_as_an_unprivileged_user",
        "--test-threads",
        "2",
    ])
    .env_clear()
    .env("PATH", "/usr/local/bin:/usr/bin:/bin")
    .env("HOME", &home)
    .env("TMPDIR", &home)
    .env("AQ_SANDBOX_NESTED", "1")
    .current_dir(dir.path())
    // std drops the supplementary groups when root sets the uid.
    .uid(uid)
    .gid(gid);
    for var in PASSED_THROUGH {
        if let Some(v) = std::env::var_os(var) {
            cmd.env(var, v);
        }
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the suite failed as {who} ({uid}:{gid}), {}:\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    let summary = stdout
        .lines()
        .rfind(|l| l.starts_with("test result:"))
        .unwrap_or("no summary");
    eprintln!("as {who} ({uid}:{gid}): {summary}");
}
