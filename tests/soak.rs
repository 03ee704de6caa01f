//! A long session: many execs under the exec guard, with
//! the supervisor's memory and descriptors sampled early and late in the
//! same session. Nothing may grow with the number of execs, no decision may
//! be lost, and the log's chain must verify.
//!
//! Size: `AQ_SOAK_EXECS` execs (default 20,000, about 30 s here).

use std::time::Duration;

use crate::util::Env;

/// `VmRSS` of `pid` in KiB and its number of open descriptors.
fn footprint(pid: u32) -> (u64, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    (rss, fds)
}

/// [`footprint`] once the process is quiet: the fewest descriptors seen
/// over a second (a connection that just ended may still be closing on a
/// loaded machine; a leaked one stays), with the RSS of that sample.
fn settled_footprint(pid: u32) -> (u64, usize) {
    (0..10)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(100));
            footprint(pid)
        })
        .min_by_key(|&(_, fds)| fds)
        .unwrap()
}

fn wait_for(path: &std::path::Path, timeout: Duration) {
    let start = std::time::Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < timeout,
            "timed out waiting for {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_long_guarded_session_keeps_memory_and_descriptors_flat_and_loses_nothing() {
    let execs: u64 = std::env::var("AQ_SOAK_EXECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    // Past the session's cache of allowed argvs (4,096, cleared when full,
    // its table kept): each `/bin/true $i` is a new argv, so a shorter
    // warm-up sampled the cache still filling, not a leak.
    let warm = 6_000.min(execs / 2);
    let env = Env::with_policy("", "");
    let w = env.work();
    // Phase 1 (warm-up), a pause to sample, phase 2, a pause to sample.
    // The pauses poll with `sleep` (its execs are not counted below).
    env.write(
        &w.join("soak.sh"),
        &format!(
            "i=0; while [ $i -lt {warm} ]; do /bin/true $i; i=$((i+1)); done\n\
             : > phase1; until [ -e go1 ]; do sleep 0.05; done\n\
             while [ $i -lt {execs} ]; do /bin/true $i; i=$((i+1)); done\n\
             : > phase2; until [ -e go2 ]; do sleep 0.05; done\n\
             echo \"ran $i\"\n"
        ),
    );
    let run = env.spawn(&["run", "--quiet", "--", "sh", "soak.sh"]);
    let pid = run.pid();
    wait_for(&w.join("phase1"), Duration::from_secs(120));
    let early = settled_footprint(pid);
    env.write(&w.join("go1"), "");
    wait_for(&w.join("phase2"), Duration::from_secs(600));
    let late = settled_footprint(pid);
    env.write(&w.join("go2"), "");
    // The phases above wait up to ten minutes: so does the whole run.
    let out = run.finish_within(Duration::from_secs(720));
    out.code(0).stdout_has(&format!("ran {execs}"));
    eprintln!(
        "soak: {execs} execs; aq: RSS {} KiB after {warm}, {} KiB after {execs}; descriptors {} then {}",
        early.0, late.0, early.1, late.1
    );
    // Flat: the late sample within 6 MiB of the early one (allocator noise,
    // and the argv cache refilling: bounded, each sample catches it at
    // another point of its cycle), and no descriptor more. A leak of 450
    // bytes an exec would cross it.
    assert!(
        late.0 <= early.0 + 6 * 1024,
        "aq's memory grew from {} KiB to {} KiB over {} execs",
        early.0,
        late.0,
        execs - warm
    );
    assert!(
        late.1 <= early.1,
        "aq's descriptors grew from {} to {}",
        early.1,
        late.1
    );
    // Every exec of /bin/true decided and logged, the chain intact. (Each
    // has an argv of its own, so what the supervisor keeps per argv must
    // stay bounded for the memory to stay flat.)
    let session = env.only_session();
    let trues = session
        .events_of("command_decision")
        .into_iter()
        .filter(|d| d["source"] == "exec-guard" && d["argv"][0] == "true")
        .count() as u64;
    assert_eq!(trues, execs, "decisions logged for /bin/true");
    env.aq(&["audit", "verify", &session.id()])
        .code(0)
        .stdout_has("chain intact");
}

/// 50 asks in one guarded session, each answered by `aq approve --once`
/// on a terminal of its own: every one reaches the approver, runs once
/// approved, is logged with its answer; `aq`'s descriptors stay flat.
#[test]
fn fifty_asks_answered_from_another_terminal_lose_nothing() {
    use std::os::unix::fs::PermissionsExt;
    const ASKS: usize = 50;
    let env = Env::with_policy("approval_timeout_secs = 60", "");
    let w = env.work();
    for k in 0..ASKS {
        let f = w.join(format!("f{k}"));
        env.write(&f, "");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    env.write(
        &w.join("asks.sh"),
        &format!(
            "i=0; while [ $i -lt {ASKS} ]; do chmod +x f$i || echo \"f$i refused\"; i=$((i+1)); done\necho asked\n"
        ),
    );
    let mut run = env.spawn(&["run", "--quiet", "--", "sh", "asks.sh"]);
    let pid = run.pid();
    let (mut early, mut late) = (None, None);
    for k in 0..ASKS {
        crate::approve::wait_for_pending(&env, &mut run, &format!("chmod +x f{k}"));
        // Sampled while an ask waits (the session ends once the last is
        // answered).
        if k == 5 {
            early = Some(footprint(pid));
        }
        if k == ASKS - 1 {
            late = Some(footprint(pid));
        }
        let Some(approve) = crate::approve::approve_once(&env, "o") else {
            return;
        };
        approve.code(0).stdout_has("-> once");
    }
    let out = run.finish_within(Duration::from_secs(300));
    out.code(0).stdout_has("asked").stdout_lacks("refused");
    for k in 0..ASKS {
        let mode = std::fs::metadata(w.join(format!("f{k}")))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755, "f{k} was not changed");
    }
    let (early, late) = (early.unwrap(), late.unwrap());
    eprintln!(
        "asks: {ASKS} answered; aq: RSS {} then {} KiB, descriptors {} then {}",
        early.0, late.0, early.1, late.1
    );
    assert!(late.1 <= early.1, "descriptors grew: {early:?} -> {late:?}");
    let session = env.only_session();
    let once = session
        .events_of("approval")
        .into_iter()
        .filter(|a| a["argv"][0] == "chmod" && a["answer"] == "once")
        .count();
    assert_eq!(once, ASKS, "{}", session.log_text());
    assert!(session.pending().is_empty());
    env.aq(&["audit", "verify", &session.id()])
        .code(0)
        .stdout_has("chain intact");
}

/// 500 connections through the broker in one session (curl through the
/// proxy to an allowlisted name pinned to a server on loopback): every one
/// answered and logged as allowed, `aq`'s descriptors the same at the 50th
/// and the 500th, its memory within 4 MiB.
#[test]
fn five_hundred_broker_connections_leave_no_descriptor_behind() {
    const CONNECTIONS: usize = 500;
    let port = crate::network::hello_server();
    let env = Env::with_policy("", "\"net-fetch\" = \"allow\"\n");
    let w = env.work();
    env.write(
        &w.join("net.sh"),
        &format!(
            "i=0; ok=0\n\
             while [ $i -lt {CONNECTIONS} ]; do\n\
               [ \"$(curl -s http://allowed.example.invalid:{port}/)\" = hello ] && ok=$((ok+1))\n\
               i=$((i+1))\n\
               if [ $i -eq 50 ] || [ $i -eq {CONNECTIONS} ]; then\n\
                 : > at$i; until [ -e go$i ]; do sleep 0.05; done\n\
               fi\n\
             done\n\
             echo \"answered $ok\"\n"
        ),
    );
    let run = env.spawn(&[
        "run",
        "--quiet",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "allowed.example.invalid:127.0.0.1",
        "--",
        "sh",
        "net.sh",
    ]);
    let pid = run.pid();
    let mut samples = Vec::new();
    for at in [50, CONNECTIONS] {
        wait_for(&w.join(format!("at{at}")), Duration::from_secs(300));
        samples.push(settled_footprint(pid));
        env.write(&w.join(format!("go{at}")), "");
    }
    let out = run.finish_within(Duration::from_secs(300));
    out.code(0).stdout_has(&format!("answered {CONNECTIONS}"));
    let (early, late) = (samples[0], samples[1]);
    eprintln!(
        "broker: {CONNECTIONS} connections; aq: RSS {} then {} KiB, descriptors {} then {}",
        early.0, late.0, early.1, late.1
    );
    assert!(late.1 <= early.1, "descriptors grew: {early:?} -> {late:?}");
    assert!(
        late.0 <= early.0 + 4096,
        "memory grew: {early:?} -> {late:?}"
    );
    let session = env.only_session();
    let allowed = session
        .events_of("network_connection")
        .into_iter()
        .filter(|c| c["host"] == "allowed.example.invalid" && c["decision"] == "allowed")
        .count();
    assert_eq!(allowed, CONNECTIONS, "connections logged as allowed");
    env.aq(&["audit", "verify", &session.id()])
        .code(0)
        .stdout_has("chain intact");
}
