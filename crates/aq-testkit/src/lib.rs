//! What every test suite of the workspace shares: how a test that cannot
//! run here says so.
//!
//! libtest counts a test that returns early as passed. A skip must not read
//! as a pass, so [`skip`] prints the reason and, when `AQ_TEST_SKIP_LOG`
//! names a file (CI sets it), appends one line there; `.ci/run` counts those
//! lines as skipped, not passed, in its totals line. When
//! `AQ_TEST_REQUIRE_ALL=1` (CI), a skip for something CI installs is a
//! failure instead; [`not_applicable`] is for a test that does not apply to
//! this run by design (it is still counted as skipped).

use std::io::Write;

pub mod tls;

/// Skip the calling test: `reason` says what is missing. Fails the test
/// instead under `AQ_TEST_REQUIRE_ALL=1`.
pub fn skip(reason: &str) {
    assert!(
        std::env::var_os("AQ_TEST_REQUIRE_ALL").is_none_or(|v| v != "1"),
        "AQ_TEST_REQUIRE_ALL=1, but this test would skip: {reason}"
    );
    record(reason);
}

/// Skip the calling test because it does not apply to this run (an
/// unprivileged re-run of a test about becoming unprivileged, say): counted
/// as skipped, never a failure.
pub fn not_applicable(reason: &str) {
    record(reason);
}

fn record(reason: &str) {
    let current = std::thread::current();
    let test = current.name().unwrap_or("?");
    eprintln!("SKIP {test}: {reason}");
    if let Some(path) = std::env::var_os("AQ_TEST_SKIP_LOG") {
        let line = format!("{test}\t{}\n", reason.replace(['\n', '\t'], " "));
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_skip_is_one_line_naming_the_test() {
        let dir = std::env::temp_dir().join(format!("aq-testkit-{}", std::process::id()));
        let log = dir.with_extension("log");
        // SAFETY: this test sets a variable no other test of this crate reads.
        unsafe { std::env::set_var("AQ_TEST_SKIP_LOG", &log) };
        super::not_applicable("why\tnot");
        let text = std::fs::read_to_string(&log).unwrap();
        let _ = std::fs::remove_file(&log);
        assert_eq!(text, "tests::a_skip_is_one_line_naming_the_test\twhy not\n");
    }
}
