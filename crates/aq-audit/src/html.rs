//! The report as one self-contained HTML page (`aq report --format html`).
//!
//! Safe to open: everything from the log is attacker-controlled text (an
//! agent's command line can hold `<script>`, quotes or terminal escapes), so
//! every value goes through [`escape`], which also makes control characters
//! and bidirectional overrides visible instead of letting them act. As a
//! second wall the page forbids all scripts, network and frames in its
//! Content-Security-Policy: the page has no script of its own, and nothing
//! is loaded from anywhere (no fonts, images or styles outside the file).
//!
//! Pure: a [`Summary`] in, a string out.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::report::{
    DecisionEntry, ProcessTree, Summary, display_argv, exit_status as exit_status_text,
    format_duration,
};

/// Above this many decisions the timeline draws columns of counts instead
/// of one mark per command.
const MARKS_MAX: usize = 2000;

/// Process-tree nodes shown before the rest is summarised.
const TREE_MAX: usize = 3000;

/// Width of the timeline's drawing area, in SVG units.
const PLOT_W: f64 = 880.0;
/// Left margin of the timeline (lane labels).
const PLOT_X: f64 = 70.0;

/// The page's policy: no script, no network, no frames, inline styles only.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
                   script-src 'none'; base-uri 'none'; form-action 'none'";

const STYLE: &str = r#"
:root { --allow:#2e7d32; --ask:#b26a00; --block:#c62828; --muted:#666; --line:#ddd; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
header { background: #1d2733; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 4px; font-size: 20px; font-weight: 600; }
header .sub { color: #c9d3de; font-size: 13px; }
main { padding: 8px 28px 40px; max-width: 1200px; }
section { margin-top: 26px; }
h2 { font-size: 16px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid var(--line); }
th { background: #f0f2f5; font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; white-space: pre-wrap; overflow-wrap: anywhere; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; min-width: 120px; }
.card b { display: block; font-size: 22px; }
.card.allow b { color: var(--allow); } .card.ask b { color: var(--ask); } .card.block b { color: var(--block); }
.badge { display: inline-block; padding: 0 6px; border-radius: 3px; color: #fff; font-size: 12px; }
.badge.allow { background: var(--allow); } .badge.ask { background: var(--ask); } .badge.block { background: var(--block); }
.badge.other { background: var(--muted); }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 18px; }
ul.tree { padding-left: 0; }
ul.tree li { margin: 2px 0; }
ul.tree li::before { content: "└ "; color: #aaa; }
.ctl { color: #a0a; background: #fde; border-radius: 2px; }
.muted { color: var(--muted); }
svg { background: #fff; border: 1px solid var(--line); max-width: 100%; height: auto; }
details summary { cursor: pointer; color: #1d4f91; }
"#;

impl Summary {
    /// The report as one self-contained HTML page.
    pub fn to_html(&self) -> String {
        let mut h = String::with_capacity(64 * 1024);
        let session = self.session.as_deref().unwrap_or("(unknown)");
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <meta name=\"referrer\" content=\"no-referrer\">\
             <title>aq session {}</title><style>{STYLE}</style></head><body>\n",
            escape(session)
        );
        let _ = writeln!(
            h,
            "<header><h1>aq session report</h1><div class=\"sub mono\" id=\"session-id\">{}</div></header><main>",
            escape(session)
        );
        self.html_header(&mut h);
        self.html_counts(&mut h);
        self.html_timeline_svg(&mut h);
        html_decisions(&mut h, "blocked", "Blocked commands", &self.blocked, None);
        html_decisions(
            &mut h,
            "asked",
            "Asked commands",
            &self.asked,
            Some(&self.ask_waits()),
        );
        self.html_approvals(&mut h);
        self.html_process_tree(&mut h);
        self.html_network(&mut h);
        self.html_refusals(&mut h);
        self.html_remedies(&mut h);
        self.html_layers(&mut h);
        self.html_events(&mut h);
        let remarks = self.remarks();
        if !remarks.is_empty() {
            h.push_str("<section id=\"notes\"><h2>Notes</h2><ul>");
            for r in remarks {
                let _ = write!(h, "<li>{}</li>", escape(&r));
            }
            h.push_str("</ul></section>\n");
        }
        h.push_str("</main></body></html>\n");
        h
    }

    fn html_header(&self, h: &mut String) {
        h.push_str("<section id=\"session\"><table>");
        let mut row = |name: &str, value: String| {
            let _ = write!(h, "<tr><th>{name}</th><td>{value}</td></tr>");
        };
        if let Some(s) = &self.start {
            row(
                "Agent command",
                format!("<code>{}</code>", escape(&display_argv(&s.command))),
            );
            row(
                "Workspace",
                format!("<code>{}</code>", escape(&s.workspace)),
            );
            row("Profile", escape(&s.profile));
            row("aq version", escape(&s.aq_version));
            row(
                "Policy digest",
                format!("<code>{}</code>", escape(&s.policy_digest)),
            );
        }
        if let Some(first) = &self.first_ts {
            row("Started", escape(first));
        }
        match &self.end {
            Some(end) => {
                row(
                    "Ended",
                    format!(
                        "{} ({})",
                        escape(&end.ts),
                        escape(&exit_status_text(end.exit_code, None))
                    ),
                );
                row("Duration", escape(&format_duration(end.duration_ms)));
            }
            None => row(
                "Ended",
                "<span class=\"muted\">not recorded (still running, or aq run was killed)</span>"
                    .to_string(),
            ),
        }
        for e in &self.exports {
            row(
                "Exported to",
                format!(
                    "<code>{}</code>: {} sent{}{}",
                    escape(&e.target),
                    e.sent,
                    if e.dropped > 0 {
                        format!(", <b>{} not exported</b>", e.dropped)
                    } else {
                        String::new()
                    },
                    e.error
                        .as_deref()
                        .map(|err| format!(" ({})", escape(err)))
                        .unwrap_or_default()
                ),
            );
        }
        h.push_str("</table></section>\n");
    }

    fn html_counts(&self, h: &mut String) {
        let c = &self.counts;
        h.push_str("<section id=\"counts\"><h2>Summary</h2><div class=\"cards\">");
        let mut card = |key: &str, class: &str, n: u64, label: &str| {
            let _ = write!(
                h,
                "<div class=\"card {class}\" data-count=\"{key}\"><b>{n}</b>{label}</div>"
            );
        };
        card("commands", "", c.commands, "commands checked");
        card("allow", "allow", c.decided("allow"), "allowed");
        card("ask", "ask", c.decided("ask"), "asked");
        card("block", "block", c.decided("block"), "blocked");
        card("approvals", "", c.approvals(), "approvals answered");
        card("exits", "", c.exits, "ran to exit");
        card("failed", "", c.failed_exits, "failed (non-zero or signal)");
        let conns: u64 = c.connections.values().sum();
        card("connections", "", conns, "network connections");
        card(
            "refused",
            "",
            self.refused_syscalls.values().map(|(n, _)| n).sum::<u64>()
                + self.refused_files.values().sum::<u64>(),
            "kernel refusals",
        );
        card("events", "", c.events, "events in the log");
        card(
            "checkpoints",
            "",
            self.checkpoints.len() as u64,
            "checkpoints of the workspace",
        );
        h.push_str("</div>");
        if let Some(line) = self.checkpoints_line() {
            let _ = write!(h, "<p id=\"undo\">{}</p>", escape(&line));
        }
        let others: Vec<_> = c
            .decisions
            .iter()
            .filter(|(d, _)| !["allow", "ask", "block"].contains(&d.as_str()))
            .collect();
        if !others.is_empty() || !c.answers.is_empty() {
            h.push_str("<p class=\"muted\">");
            for (d, n) in others {
                let _ = write!(h, "decision {}: {n}. ", escape(d));
            }
            for (a, n) in &c.answers {
                let _ = write!(h, "answer {}: {n}. ", escape(a));
            }
            h.push_str("</p>");
        }
        h.push_str("</section>\n");
    }

    /// For each asked command (by seq): how long it waited for its answer.
    fn ask_waits(&self) -> BTreeMap<u64, u64> {
        let mut waits = BTreeMap::new();
        let mut used = BTreeSet::new();
        for a in &self.asked {
            let Some(t0) = parse_ms(&a.ts) else { continue };
            if let Some(ap) = self
                .approvals
                .iter()
                .find(|ap| ap.argv == a.argv && ap.seq > a.seq && !used.contains(&ap.seq))
            {
                used.insert(ap.seq);
                if let Some(t1) = parse_ms(&ap.ts) {
                    waits.insert(a.seq, (t1 - t0).max(0) as u64);
                }
            }
        }
        waits
    }

    /// Decisions over time, one lane per decision; an ask's wait for its
    /// answer is a bar from the ask to the answer.
    fn html_timeline_svg(&self, h: &mut String) {
        h.push_str("<section id=\"timeline\"><h2>Decisions over time</h2>");
        let marks: Vec<(i64, &str, String)> = self
            .timeline
            .iter()
            .filter_map(|row| {
                let d = row.decision.as_deref()?;
                let t = parse_ms(row.ts.as_deref()?)?;
                let tip = format!(
                    "{} {d}: {}",
                    row.ts.as_deref().unwrap_or(""),
                    row.command.as_deref().unwrap_or("")
                );
                Some((t, d, tip))
            })
            .collect();
        let bounds = self
            .first_ts
            .as_deref()
            .and_then(parse_ms)
            .zip(self.last_ts.as_deref().and_then(parse_ms));
        let Some((t0, t1)) = bounds.filter(|_| !marks.is_empty()) else {
            h.push_str("<p class=\"muted\">No command decisions.</p></section>\n");
            return;
        };
        let span = (t1 - t0).max(1) as f64;
        let x = |t: i64| PLOT_X + ((t - t0) as f64 / span) * PLOT_W;
        let lanes = [("allow", 34.0), ("ask", 70.0), ("block", 106.0)];
        let lane_y = |d: &str| {
            lanes
                .iter()
                .find(|(name, _)| *name == d)
                .map(|(_, y)| *y)
                .unwrap_or(136.0)
        };
        let other = marks
            .iter()
            .any(|(_, d, _)| !["allow", "ask", "block"].contains(d));
        let axis_y = if other { 152.0 } else { 124.0 };
        let height = axis_y + 26.0;
        let _ = write!(
            h,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"980\" height=\"{height}\" \
             viewBox=\"0 0 980 {height}\" role=\"img\" aria-label=\"decisions over time\">"
        );
        for (name, y) in lanes {
            let _ = write!(
                h,
                "<text x=\"8\" y=\"{}\" font-size=\"12\" fill=\"var(--{name})\">{name}</text>\
                 <line x1=\"{PLOT_X}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#eee\"/>",
                y + 4.0,
                PLOT_X + PLOT_W
            );
        }
        if other {
            let _ = write!(
                h,
                "<text x=\"8\" y=\"140\" font-size=\"12\" fill=\"#666\">other</text>"
            );
        }
        // The asks' waits, under the marks.
        let waits = self.ask_waits();
        for a in &self.asked {
            let (Some(t), Some(w)) = (parse_ms(&a.ts), waits.get(&a.seq)) else {
                continue;
            };
            let x0 = x(t);
            let x1 = x(t + *w as i64).max(x0 + 2.0);
            let _ = write!(
                h,
                "<rect class=\"wait\" x=\"{x0:.1}\" y=\"62\" width=\"{:.1}\" height=\"16\" \
                 fill=\"#b26a00\" fill-opacity=\"0.25\"><title>{} waited {} for its answer ({})</title></rect>",
                x1 - x0,
                escape_plain(&a.shown()),
                escape_plain(&format_duration(*w)),
                escape_plain(a.answer.as_deref().unwrap_or("no answer"))
            );
        }
        if marks.len() <= MARKS_MAX {
            for (t, d, tip) in &marks {
                let _ = write!(
                    h,
                    "<circle class=\"mark {}\" cx=\"{:.1}\" cy=\"{}\" r=\"4.5\" fill=\"{}\" fill-opacity=\"0.8\"><title>{}</title></circle>",
                    css_word(d),
                    x(*t),
                    lane_y(d),
                    color(d),
                    escape_plain(tip)
                );
            }
        } else {
            // One column per pixel pair and lane, labelled with its count.
            const COLUMNS: usize = 440;
            let mut bins: BTreeMap<(&str, usize), u64> = BTreeMap::new();
            for (t, d, _) in &marks {
                let col = (((*t - t0) as f64 / span) * (COLUMNS - 1) as f64) as usize;
                *bins.entry((d, col)).or_default() += 1;
            }
            for ((d, col), n) in bins {
                let _ = write!(
                    h,
                    "<rect class=\"mark {}\" x=\"{:.1}\" y=\"{}\" width=\"2\" height=\"14\" fill=\"{}\" \
                     fill-opacity=\"{:.2}\"><title>{n} {}</title></rect>",
                    css_word(d),
                    PLOT_X + col as f64 * PLOT_W / COLUMNS as f64,
                    lane_y(d) - 7.0,
                    color(d),
                    (0.35 + (n as f64).log10() / 4.0).min(1.0),
                    escape_plain(d)
                );
            }
        }
        let _ = write!(
            h,
            "<line x1=\"{PLOT_X}\" x2=\"{}\" y1=\"{axis_y}\" y2=\"{axis_y}\" stroke=\"#999\"/>\
             <text x=\"{PLOT_X}\" y=\"{}\" font-size=\"11\" fill=\"#666\">{}</text>\
             <text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#666\" text-anchor=\"end\">{} (+{})</text></svg>",
            PLOT_X + PLOT_W,
            axis_y + 16.0,
            escape(self.first_ts.as_deref().unwrap_or("")),
            PLOT_X + PLOT_W,
            axis_y + 16.0,
            escape(self.last_ts.as_deref().unwrap_or("")),
            escape(&format_duration((t1 - t0).max(0) as u64)),
        );
        h.push_str(
            "<p class=\"muted\">Each mark is a decided command (hover for the command); \
             an amber bar is an ask waiting for its answer.</p></section>\n",
        );
    }

    fn html_approvals(&self, h: &mut String) {
        h.push_str("<section id=\"approvals\"><h2>Approvals</h2>");
        if self.approvals.is_empty() {
            h.push_str("<p class=\"muted\">None.</p></section>\n");
            return;
        }
        h.push_str("<table><tr><th>Time</th><th>Command</th><th>Answer</th><th>By</th></tr>");
        for a in &self.approvals {
            let _ = write!(
                h,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                escape(&a.ts),
                escape(&display_argv(&a.argv)),
                escape(&a.answer),
                escape(&a.by)
            );
        }
        h.push_str("</table></section>\n");
    }

    /// Each decided exec under the nearest decided exec of its parent (a
    /// shim and the program it becomes share a pid: one node).
    fn html_process_tree(&self, h: &mut String) {
        if self.processes.is_empty() {
            return;
        }
        h.push_str("<section id=\"processes\"><h2>Process tree</h2>");
        let ProcessTree {
            nodes,
            children,
            roots,
        } = self.process_tree();
        let mut shown = 0usize;
        h.push_str("<ul class=\"tree\">");
        // Iterative, so a deep chain cannot overflow the stack.
        let mut stack: Vec<Option<usize>> = roots.iter().rev().map(|&i| Some(i)).collect();
        let mut seen = BTreeSet::new();
        while let Some(item) = stack.pop() {
            let Some(i) = item else {
                h.push_str("</ul></li>");
                continue;
            };
            if !seen.insert(i) {
                continue;
            }
            if shown == TREE_MAX {
                let _ = write!(
                    h,
                    "<li class=\"muted\">… {} more processes (see the event list)</li>",
                    nodes.len() - shown
                );
                break;
            }
            shown += 1;
            let n = nodes[i];
            let _ = write!(
                h,
                "<li data-pid=\"{}\"><code>{}</code> <span class=\"badge {}\">{}</span> \
                 <span class=\"muted\">pid {}{}</span>",
                n.pid,
                escape(&display_argv(&n.argv)),
                badge_class(&n.decision),
                escape(&n.decision),
                n.pid,
                n.exe
                    .as_deref()
                    .map(|e| format!(" · {}", escape(e)))
                    .unwrap_or_default()
            );
            match children.get(&n.pid) {
                Some(kids) if !kids.is_empty() => {
                    h.push_str("<ul>");
                    stack.push(None);
                    stack.extend(kids.iter().rev().map(|&k| Some(k)));
                }
                _ => h.push_str("</li>"),
            }
        }
        // Close what a cut-off left open.
        for item in stack.iter().rev() {
            if item.is_none() {
                h.push_str("</ul></li>");
            }
        }
        h.push_str("</ul></section>\n");
    }

    fn html_network(&self, h: &mut String) {
        if self.destinations.is_empty() {
            return;
        }
        h.push_str(
            "<section id=\"network\"><h2>Network destinations</h2><table><tr><th>Destination</th>\
             <th class=\"n\">Allowed</th><th class=\"n\">Refused</th><th class=\"n\">Failed</th>\
             <th class=\"n\">Bytes out</th><th class=\"n\">Bytes in</th><th>Rule</th></tr>",
        );
        for (dest, d) in &self.destinations {
            let _ = write!(
                h,
                "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                escape(dest),
                d.allowed,
                d.denied,
                d.failed,
                d.bytes_up,
                d.bytes_down,
                escape(&d.rule)
            );
        }
        h.push_str("</table></section>\n");
    }

    fn html_refusals(&self, h: &mut String) {
        if self.refused_syscalls.is_empty() && self.refused_files.is_empty() {
            return;
        }
        h.push_str("<section id=\"refusals\"><h2>Refused by the kernel</h2><table><tr><th>What</th><th>Answer</th><th class=\"n\">Times</th></tr>");
        for (call, (n, errno)) in &self.refused_syscalls {
            let _ = write!(
                h,
                "<tr><td>system call <code>{}</code></td><td>{}</td><td class=\"n\">{n}</td></tr>",
                escape(call),
                escape(errno)
            );
        }
        for ((path, access), n) in &self.refused_files {
            let _ = write!(
                h,
                "<tr><td>{} <code>{}</code></td><td>Landlock</td><td class=\"n\">{n}</td></tr>",
                escape(access),
                escape(path)
            );
        }
        h.push_str("</table></section>\n");
    }

    fn html_remedies(&self, h: &mut String) {
        let remedies = self.remedies();
        if remedies.is_empty() {
            return;
        }
        h.push_str("<section id=\"remedies\"><h2>Refused, and how to allow it next time</h2><table><tr><th>Refused</th><th>Next time</th><th>Beware</th></tr>");
        for r in &remedies {
            let _ = write!(
                h,
                "<tr><td>{} {}</td><td><code>{}</code></td><td>{}</td></tr>",
                escape(r.kind),
                escape(&r.what),
                escape(&r.line),
                escape(r.warning.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</table></section>\n");
    }

    /// The protection layers of `session_start`, one setting per row.
    fn html_layers(&self, h: &mut String) {
        let Some(start) = &self.start else { return };
        h.push_str("<section id=\"layers\"><h2>Protection layers</h2>");
        if start.layers.is_empty() {
            h.push_str("<p class=\"muted\">None recorded.</p></section>\n");
            return;
        }
        h.push_str("<table><tr><th>Layer</th><th>Setting</th></tr>");
        for (layer, setting) in layer_rows(&start.layers) {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td></tr>",
                escape(&layer),
                escape(&setting)
            );
        }
        h.push_str("</table></section>\n");
    }

    fn html_events(&self, h: &mut String) {
        let _ = write!(
            h,
            "<section id=\"events\"><h2>Every event</h2><details><summary>{} events</summary>\
             <table><tr><th class=\"n\">#</th><th>Time</th><th>Event</th><th>Command</th><th>Outcome</th></tr>",
            self.timeline.len()
        );
        for row in &self.timeline {
            let _ = write!(
                h,
                "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
                row.seq.map(|s| s.to_string()).unwrap_or_default(),
                escape(row.ts.as_deref().unwrap_or("")),
                escape(&row.event),
                escape(row.command.as_deref().unwrap_or("")),
                escape(&row.outcome)
            );
        }
        h.push_str("</table></details></section>\n");
    }
}

fn html_decisions(
    h: &mut String,
    id: &str,
    title: &str,
    entries: &[DecisionEntry],
    waits: Option<&BTreeMap<u64, u64>>,
) {
    let _ = write!(h, "<section id=\"{id}\"><h2>{title}</h2>");
    if entries.is_empty() {
        h.push_str("<p class=\"muted\">None.</p></section>\n");
        return;
    }
    h.push_str("<table><tr><th>Time</th><th>Command</th><th>Rule</th><th>Why</th><th>Safer</th>");
    if waits.is_some() {
        h.push_str("<th>Answer</th><th class=\"n\">Waited</th>");
    }
    h.push_str("</tr>");
    for e in entries {
        let _ = write!(
            h,
            "<tr data-seq=\"{}\"><td>{}</td><td><code>{}</code><div class=\"muted\">in <code>{}</code> · {}</div></td>\
             <td><code>{}</code></td><td>{}</td><td>{}</td>",
            e.seq,
            escape(&e.ts),
            escape(&e.shown()),
            escape(&e.cwd),
            escape(&e.source),
            escape(&e.rules.join(", ")),
            escape(e.why.as_deref().unwrap_or("")),
            escape(e.safer.as_deref().unwrap_or(""))
        );
        if let Some(waits) = waits {
            let _ = write!(
                h,
                "<td>{}</td><td class=\"n\">{}</td>",
                escape(e.answer.as_deref().unwrap_or("not answered")),
                waits
                    .get(&e.seq)
                    .map(|w| escape(&format_duration(*w)))
                    .unwrap_or_default()
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</table></section>\n");
}

/// `layers` of `session_start` as (layer, setting) rows: `name: a; b; c`
/// gives one row per part (semicolons inside parentheses stay).
pub(crate) fn layer_rows(layers: &[String]) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    for layer in layers {
        let (name, detail) = match layer.split_once(": ") {
            Some((n, d)) if !n.contains('(') => (n.to_string(), d),
            _ => match layer.split_once(' ') {
                Some((n, d)) => (n.to_string(), d),
                None => (layer.clone(), ""),
            },
        };
        let parts = split_outside_parens(detail, "; ");
        if parts.is_empty() {
            rows.push((name.clone(), String::new()));
        }
        for part in parts {
            rows.push((name.clone(), part));
        }
    }
    rows
}

fn split_outside_parens(text: &str, sep: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            _ => {}
        }
        if depth <= 0 && text[i..].starts_with(sep) {
            parts.push(text[start..i].trim().to_string());
            i += sep.len();
            start = i;
            continue;
        }
        i += 1;
    }
    let last = text[start..].trim();
    if !last.is_empty() {
        parts.push(last.to_string());
    }
    parts.retain(|p| !p.is_empty());
    parts
}

/// Text for HTML element content. Control characters (terminal escapes
/// among them) and bidirectional overrides are shown as visible, marked
/// signs instead of acting.
pub fn escape(text: &str) -> String {
    escape_with(text, true)
}

/// Text for SVG `<title>`s and attribute values: the same signs, unmarked
/// (no elements allowed there).
fn escape_plain(text: &str) -> String {
    escape_with(text, false)
}

fn escape_with(text: &str, marked: bool) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let sign = |out: &mut String, s: &str| {
        if marked {
            let _ = write!(out, "<span class=\"ctl\">{s}</span>");
        } else {
            out.push_str(s);
        }
    };
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' => out.push('\t'),
            '\n' => sign(&mut out, "\u{21b5}"),
            c => match crate::inert::control_picture(c) {
                Some(picture) => sign(&mut out, &picture.to_string()),
                None if crate::inert::is_unsafe(c) => {
                    sign(&mut out, &format!("&lt;U+{:04X}&gt;", c as u32))
                }
                None => out.push(c),
            },
        }
    }
    out
}

fn css_word(d: &str) -> &'static str {
    match d {
        "allow" => "allow",
        "ask" => "ask",
        "block" => "block",
        _ => "other",
    }
}

fn badge_class(d: &str) -> &'static str {
    css_word(d)
}

fn color(d: &str) -> &'static str {
    match d {
        "allow" => "#2e7d32",
        "ask" => "#b26a00",
        "block" => "#c62828",
        _ => "#666666",
    }
}

/// Milliseconds since the epoch of a log time (`2026-11-30T20:44:26.123Z`).
pub(crate) fn parse_ms(ts: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339_weak(ts.trim_end_matches('Z')).ok()?;
    t.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ProcessEntry;

    #[test]
    fn escape_makes_markup_and_controls_inert() {
        let hostile = "x</td><script>alert(1)</script>\"'\u{1b}[2J\u{202e}";
        let e = escape(hostile);
        assert!(!e.contains("<script"), "{e}");
        assert!(!e.contains("</td>"), "{e}");
        assert!(!e.contains('\u{1b}') && !e.contains('\u{202e}'), "{e}");
        assert!(e.contains("&lt;script&gt;") && e.contains("&quot;") && e.contains("&#39;"));
        assert!(e.contains('\u{241b}'), "ESC shows as ␛: {e}");
        assert!(e.contains("&lt;U+202E&gt;"), "{e}");
        let p = escape_plain(hostile);
        assert!(!p.contains('<') && !p.contains('\u{1b}'), "{p}");
    }

    #[test]
    fn layers_split_into_rows_outside_parentheses() {
        let rows = layer_rows(&[
            "kernel sandbox: namespaces user,mount; Landlock ABI 6, reads confined to 3 paths; \
             limits: rlimits only (no cgroup: a; b)"
                .into(),
            "network off".into(),
        ]);
        assert_eq!(
            rows,
            vec![
                ("kernel sandbox".into(), "namespaces user,mount".into()),
                (
                    "kernel sandbox".into(),
                    "Landlock ABI 6, reads confined to 3 paths".into()
                ),
                (
                    "kernel sandbox".into(),
                    "limits: rlimits only (no cgroup: a; b)".into()
                ),
                ("network".into(), "off".into()),
            ]
        );
    }

    #[test]
    fn log_times_parse_to_milliseconds() {
        assert_eq!(parse_ms("1970-01-01T00:00:01.250Z"), Some(1250));
        assert_eq!(
            parse_ms("2026-11-30T00:00:00.000Z").unwrap()
                - parse_ms("2026-11-29T23:59:59.500Z").unwrap(),
            500
        );
        assert_eq!(parse_ms("yesterday"), None);
    }

    #[test]
    fn a_deep_process_chain_renders_without_recursion() {
        let mut s = Summary::default();
        for pid in 2..5000u32 {
            s.processes.push(ProcessEntry {
                seq: pid as u64,
                pid,
                ppid: pid - 1,
                argv: vec!["sh".into()],
                decision: "allow".into(),
                source: "exec-guard".into(),
                ..Default::default()
            });
        }
        let html = s.to_html();
        assert!(html.contains("more processes"));
        assert_eq!(
            html.matches("<ul").count(),
            html.matches("</ul>").count(),
            "every list is closed"
        );
    }
}
