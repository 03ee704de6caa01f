//! `aq report --format html` opened in a real browser: headless Chromium
//! (Debian's `chromium`, installed by CI) loads a report made from a real
//! session. The page must render without console errors, its counts must
//! be the log's, and a hostile command line must show as text: no element
//! of it may reach the DOM. Each check has a control that shows the same
//! probe does see a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::Env;

/// What a hostile agent could put on a command line: markup that closes the
/// cell and opens a script, quotes, and terminal escapes.
const HOSTILE: &str = "</td><script>console.error('pwned')</script> \"q\" 's <img src=x onerror=alert(2)> \u{1b}[31mred \u{1b}[2J";

/// A session that allows, asks, blocks, and runs the hostile line.
fn session(env: &Env) -> crate::util::Session {
    env.write(
        &env.work().join("go.sh"),
        &format!(
            "echo hi\nls >/dev/null\ncat f.txt '{}' 2>/dev/null\nrm -rf / 2>/dev/null\n\
             curl -s http://example.invalid/x\ngit push --force origin main 2>/dev/null\ntrue\n",
            HOSTILE.replace('\'', "'\\''")
        ),
    );
    env.aq(&["run", "--quiet", "--", "bash", "go.sh"]);
    env.only_session()
}

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        })
}

/// What the browser made of a page: the DOM it built and its console.
struct Rendered {
    dom: String,
    console: Vec<String>,
}

/// Loads `page` in headless Chromium; `extra` adds flags (a screenshot).
fn render(browser: &Path, scratch: &Path, page: &Path, extra: &[String]) -> Rendered {
    let profile = tempfile::tempdir_in(scratch).unwrap();
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .args(extra)
    .arg("--dump-dom")
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start chromium");
    let out_pipe = child.stdout.take().unwrap();
    let err_pipe = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || std::io::read_to_string(out_pipe).unwrap_or_default());
    let err = std::thread::spawn(move || std::io::read_to_string(err_pipe).unwrap_or_default());
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = err.join().unwrap();
            panic!(
                "chromium did not finish within 60 s on {}:\n{stderr}",
                page.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let stderr = err.join().unwrap();
    Rendered {
        dom: out.join().unwrap(),
        // Chromium logs each console message (and each CSP refusal) as
        // `…:INFO:CONSOLE…] "message", source: …`.
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string)
            .collect(),
    }
}

fn count(dom: &str, key: &str) -> u64 {
    let marker = format!("data-count=\"{key}\"><b>");
    let at = dom
        .find(&marker)
        .unwrap_or_else(|| panic!("no {key} count in the page"));
    dom[at + marker.len()..]
        .split('<')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The inner part of `<section id="ID">…</section>`.
fn section<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let end = dom[start..].find("</section>").unwrap() + start;
    &dom[start..end]
}

#[test]
fn the_html_report_renders_in_chromium_with_the_logs_counts_and_hostile_text_inert() {
    let Some(browser) = chromium() else {
        aq_testkit::skip("no chromium on PATH (CI installs Debian's chromium)");
        return;
    };
    let env = Env::with_policy("", "");
    let session = session(&env);

    // The counts, read from the log itself.
    let events = session.events();
    let decided = |d: &str| {
        events
            .iter()
            .filter(|e| e["event"] == "command_decision" && e["decision"] == d)
            .count() as u64
    };
    let (allow, ask, block) = (decided("allow"), decided("ask"), decided("block"));
    assert!(
        allow >= 2 && ask >= 1 && block >= 2,
        "{}",
        session.log_text()
    );
    let hostile_logged = events.iter().any(|e| {
        e["argv"]
            .as_array()
            .is_some_and(|a| a.iter().any(|w| w == HOSTILE))
    });
    assert!(hostile_logged, "the hostile argv reached the log as is");

    let html = env
        .aq(&["report", &session.id(), "--format", "html"])
        .code(0)
        .stdout
        .clone();
    let page = env.root().join("report.html");
    std::fs::write(&page, &html).unwrap();

    // `--open` writes the same page into the session's directory.
    let mut open = env.command(&env.work(), &["report", "--latest", "--open"]);
    open.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    let opened = env.run_command(open, "aq report --latest --open");
    opened.code(0);
    let written = session.dir.join("report.html");
    assert_eq!(opened.stdout.trim(), written.display().to_string());
    assert_eq!(std::fs::read_to_string(&written).unwrap(), html);

    // Self-contained: nothing is fetched from anywhere.
    for outside in ["http://", "https://", "src=\"", "<link", "@import", "url("] {
        let outside_lower = outside.to_lowercase();
        let found = html
            .to_lowercase()
            .match_indices(&outside_lower)
            .map(|(i, _)| html[i.saturating_sub(40)..(i + 60).min(html.len())].to_string())
            .filter(|ctx| !ctx.contains("example.invalid") && !ctx.contains("www.w3.org/2000/svg"))
            .collect::<Vec<_>>();
        assert!(found.is_empty(), "the page loads {outside}: {found:?}");
    }

    let shot = env.root().join("report.png");
    let r = render(
        &browser,
        env.root(),
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,1800".into(),
        ],
    );
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    assert!(r.dom.contains("aq session report"), "{}", r.dom);
    // The browser drew it: a PNG of the asked width.
    let png = std::fs::read(&shot).expect("chromium wrote a screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1280);

    // The DOM's counts are the log's.
    assert_eq!(count(&r.dom, "allow"), allow);
    assert_eq!(count(&r.dom, "ask"), ask);
    assert_eq!(count(&r.dom, "block"), block);
    assert_eq!(count(&r.dom, "commands"), allow + ask + block);
    assert_eq!(count(&r.dom, "events"), events.len() as u64);
    assert_eq!(
        section(&r.dom, "blocked").matches("<tr data-seq=").count() as u64,
        block
    );
    assert_eq!(
        section(&r.dom, "timeline")
            .matches("<circle class=\"mark")
            .count() as u64,
        allow + ask + block,
        "one mark per decision"
    );
    assert!(section(&r.dom, "blocked").contains("fs-rm-recursive-root"));
    assert!(section(&r.dom, "blocked").contains("git-push-force"));
    assert!(section(&r.dom, "layers").contains("<td>kernel sandbox</td>"));

    // The hostile line is text: the DOM holds no element it tried to open,
    // and its characters are there, escapes made visible.
    for tag in ["<script", "<img"] {
        assert!(!r.dom.contains(tag), "{tag} reached the DOM");
    }
    assert!(
        r.dom.contains(
            "$'&lt;/td&gt;&lt;script&gt;console.error(\\'pwned\\')&lt;/script&gt; \"q\" \\'s \
             &lt;img src=x onerror=alert(2)&gt; \\E[31mred \\E[2J'"
        ),
        "the hostile text is shown, quoted as bash's $'…' with its escapes spelled out"
    );
    assert!(!r.dom.contains('\u{1b}'), "a raw ESC reached the page");

    // Controls: the same probes see a failure when there is one. The hostile
    // text pasted raw into the page becomes elements, and the page's
    // policy refuses the script, which the console reports.
    let raw = env.root().join("raw.html");
    std::fs::write(
        &raw,
        html.replacen(
            "<main>",
            &format!("<main><table><tr><td>{HOSTILE}</td></tr></table>"),
            1,
        ),
    )
    .unwrap();
    let control = render(&browser, env.root(), &raw, &[]);
    assert!(control.dom.contains("<script>"), "{}", control.dom);
    assert!(control.dom.contains("<img src=\"x\""));
    assert!(
        control
            .console
            .iter()
            .any(|l| l.contains("Content Security Policy")),
        "the console shows the refused script: {:#?}",
        control.console
    );
    // And a page without the policy runs the script, which the console
    // shows too (without the `alert`, which would hang a headless browser).
    let unguarded = env.root().join("unguarded.html");
    std::fs::write(
        &unguarded,
        format!(
            "<!DOCTYPE html><html><body><table><tr><td>{}</td></tr></table></body></html>",
            HOSTILE.replace("onerror=alert(2)", "")
        ),
    )
    .unwrap();
    let ran = render(&browser, env.root(), &unguarded, &[]);
    assert!(
        ran.console.iter().any(|l| l.contains("pwned")),
        "{:#?}",
        ran.console
    );
}
