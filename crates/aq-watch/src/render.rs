//! Drawing a [`State`]: one frame, no I/O.
//!
//! ```text
//! aq watch · 1 live session · allowed 3 · asked 1 · blocked 0 · approved 1 · denied 0
//! ┌Pending asks (1)──────────────────────────────────────────────────────────┐
//! │▶ 3f9a1c2b  chmod +x f   fs-permissions: changes file modes               │
//! └──────────────────────────────────────────────────────────────────────────┘
//!  o allow once · s allow for the session · a always (a host) · d deny · k skip · ↑↓ select · / filter · q quit
//! ┌Decisions───────────────────────────────────────┐┌Network──────────────────┐
//! │10:00:02 3f9a1c2b command ask  fs-permissions …  ││api.example:443 2 ok 0 … │
//! └────────────────────────────────────────────────┘└─────────────────────────┘
//! answered allow once: chmod +x f
//! ```

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, List, ListItem, ListState, Paragraph, Row, Table};

use crate::state::{Mode, State};

/// The most asks shown at once; the list scrolls past that.
const ASK_LINES: usize = 6;

/// Draws the whole console.
pub fn render(state: &State, frame: &mut Frame) {
    let asks = state.asks();
    let ask_height = asks.len().clamp(1, ASK_LINES) as u16 + 2;
    let [header, asks_area, help, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(ask_height),
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(frame.area());

    frame.render_widget(Paragraph::new(header_line(state)), header);
    render_asks(state, frame, asks_area);
    frame.render_widget(Paragraph::new(help_line(state)), help);
    let [decisions, network] =
        Layout::horizontal([Constraint::Percentage(72), Constraint::Percentage(28)]).areas(body);
    render_rows(state, frame, decisions);
    render_network(state, frame, network);
    frame.render_widget(Paragraph::new(status_line(state)), status);
}

/// The last 8 characters of a session id: its random part.
fn short(session: &str) -> &str {
    let n = session.chars().count();
    match session.char_indices().nth(n.saturating_sub(8)) {
        Some((i, _)) => &session[i..],
        None => session,
    }
}

fn header_line(state: &State) -> Line<'static> {
    let c = state.counts;
    let live = match state.live {
        1 => "1 live session".to_string(),
        n => format!("{n} live sessions"),
    };
    let mut spans = vec![
        Span::styled("aq watch", Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(format!(" · {live} · ")),
        Span::styled(
            format!("allowed {}", c.allowed),
            Style::new().fg(Color::Green),
        ),
        Span::raw(" · "),
        Span::styled(format!("asked {}", c.asked), Style::new().fg(Color::Yellow)),
        Span::raw(" · "),
        Span::styled(
            format!("blocked {}", c.blocked),
            Style::new().fg(Color::Red),
        ),
        Span::raw(format!(" · approved {} · denied {}", c.approved, c.denied)),
    ];
    if !state.filter.is_empty() || state.mode == Mode::Filtering {
        spans.push(Span::raw(" · filter: "));
        spans.push(Span::styled(
            state.filter.clone(),
            Style::new().add_modifier(Modifier::UNDERLINED),
        ));
    }
    Line::from(spans)
}

fn help_line(state: &State) -> Line<'static> {
    match state.mode {
        Mode::Filtering => Line::from(" type to filter · Enter keep · Esc clear"),
        Mode::Normal => Line::from(
            " o allow once · s allow for the session · a always (a host) · d deny · k skip · ↑↓ select · / filter · q quit",
        ),
    }
    .style(Style::new().fg(Color::DarkGray))
}

fn render_asks(state: &State, frame: &mut Frame, area: Rect) {
    let asks = state.asks();
    let block = Block::new()
        .borders(Borders::ALL)
        .title(format!("Pending asks ({})", asks.len()));
    if asks.is_empty() {
        frame.render_widget(Paragraph::new(" no pending asks").block(block), area);
        return;
    }
    let items: Vec<ListItem> = asks
        .iter()
        .map(|a| {
            let mut spans = vec![
                Span::raw(format!("{}  ", short(&a.session))),
                Span::styled(a.command.clone(), Style::new().add_modifier(Modifier::BOLD)),
                Span::raw(format!("   {}", a.rules)),
            ];
            if !a.why.is_empty() {
                spans.push(Span::raw(format!(": {}", a.why)));
            }
            spans.push(Span::styled(
                format!("  in {}", a.cwd),
                Style::new().fg(Color::DarkGray),
            ));
            if state.is_skipped(a) {
                spans.push(Span::raw("  (skipped)"));
            }
            ListItem::new(Line::from(spans))
        })
        .collect();
    let list = List::new(items)
        .block(block)
        .highlight_symbol("▶ ")
        .highlight_style(Style::new().fg(Color::Yellow));
    let mut selection = ListState::default().with_selected(Some(state.selected));
    frame.render_stateful_widget(list, area, &mut selection);
}

fn decision_style(decision: &str) -> Style {
    match decision {
        "allow" | "allowed" | "once" | "session" | "granted" => Style::new().fg(Color::Green),
        "ask" => Style::new().fg(Color::Yellow),
        "block" | "deny" | "denied" | "refused" | "failed" | "timeout" | "no-approver" => {
            Style::new().fg(Color::Red)
        }
        _ => Style::new(),
    }
}

fn render_rows(state: &State, frame: &mut Frame, area: Rect) {
    let height = area.height.saturating_sub(2) as usize;
    let rows: Vec<Row> = state
        .visible_rows()
        .take(height)
        .map(|r| {
            Row::new(vec![
                Cell::from(r.time.clone()),
                Cell::from(short(&r.session).to_string()),
                Cell::from(r.kind),
                Cell::from(Span::styled(
                    r.decision.clone(),
                    decision_style(&r.decision),
                )),
                Cell::from(r.rule.clone()),
                Cell::from(r.what.clone()),
            ])
        })
        .collect();
    let table = Table::new(
        rows,
        [
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Length(11),
            Constraint::Length(20),
            Constraint::Fill(1),
        ],
    )
    .block(Block::new().borders(Borders::ALL).title("Decisions"));
    frame.render_widget(table, area);
}

fn render_network(state: &State, frame: &mut Frame, area: Rect) {
    let lines: Vec<Line> = state
        .network
        .iter()
        .flat_map(|(dest, d)| {
            let style = if d.refused > 0 {
                Style::new().fg(Color::Red)
            } else {
                Style::new()
            };
            [
                Line::from(Span::styled(dest.clone(), style)),
                Line::from(format!(
                    "  {} ok · {} refused · {}",
                    d.allowed,
                    d.refused,
                    bytes(d.bytes)
                )),
            ]
        })
        .collect();
    let block = Block::new().borders(Borders::ALL).title("Network");
    let body = if lines.is_empty() {
        Paragraph::new(" no connections")
    } else {
        Paragraph::new(lines)
    };
    frame.render_widget(body.block(block), area);
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / (1 << 10) as f64),
        n => format!("{n} B"),
    }
}

fn status_line(state: &State) -> Line<'static> {
    match &state.message {
        Some(m) => Line::from(m.clone()),
        None => {
            let ended = state.sessions.values().filter(|s| s.ended).count();
            Line::from(format!(
                "{} session(s) seen, {ended} ended",
                state.sessions.len()
            ))
            .style(Style::new().fg(Color::DarkGray))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::tests::{approval, ask, decision, key, net};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::KeyCode;

    /// The screen as text, one line per row, trailing spaces cut.
    fn screen(state: &State, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|f| render(state, f)).unwrap();
        let buffer = terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buffer.area.height {
            let mut line = String::new();
            for x in 0..buffer.area.width {
                line.push_str(buffer[(x, y)].symbol());
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    fn busy_state() -> State {
        let mut s = State::new();
        s.live = 1;
        s.record(
            "20261130T100000Z-3f9a1c2b",
            &decision(1, &["ls"], "allow", ""),
        );
        s.record(
            "20261130T100000Z-3f9a1c2b",
            &decision(2, &["chmod", "+x", "f"], "ask", "fs-permissions"),
        );
        s.record(
            "20261130T100000Z-3f9a1c2b",
            &approval(3, "r1", &["chmod", "+x", "f"], "once"),
        );
        s.record(
            "20261130T100000Z-3f9a1c2b",
            &net(4, "api.example.invalid", "allowed"),
        );
        s.set_pending(vec![ask(
            "20261130T100000Z-3f9a1c2b",
            "r2",
            &["chmod", "-x", "f"],
        )]);
        s
    }

    #[test]
    fn the_screen_shows_counts_asks_decisions_and_destinations() {
        let text = screen(&busy_state(), 120, 20);
        assert!(
            text.starts_with(
                "aq watch · 1 live session · allowed 1 · asked 1 · blocked 0 · approved 1 · denied 0\n"
            ),
            "{text}"
        );
        assert!(text.contains("Pending asks (1)"), "{text}");
        assert!(
            text.contains("│▶ 3f9a1c2b  chmod -x f   fs-permissions: changes file modes  in /w"),
            "{text}"
        );
        assert!(
            text.contains(" o allow once · s allow for the session · a always (a host) · d deny"),
            "{text}"
        );
        // Newest first.
        let net = text.find("10:00:04 3f9a1c2b net").expect(&text);
        let approved = text.find("10:00:03 3f9a1c2b approval once").expect(&text);
        let asked = text.find("10:00:02 3f9a1c2b command  ask").expect(&text);
        assert!(net < approved && approved < asked, "{text}");
        assert!(text.contains("fs-permissions       chmod +x f"), "{text}");
        assert!(text.contains("api.example.invalid:443"), "{text}");
        assert!(text.contains("│  1 ok · 0 refused · 100 B"), "{text}");
    }

    #[test]
    fn no_asks_and_a_filter_show_as_such() {
        let mut s = busy_state();
        s.on_key(key(KeyCode::Char('/')));
        for c in "ls".chars() {
            s.on_key(key(KeyCode::Char(c)));
        }
        let text = screen(&s, 120, 20);
        assert!(text.contains("· filter: ls"), "{text}");
        assert!(text.contains("Pending asks (0)"), "{text}");
        assert!(text.contains(" no pending asks"), "{text}");
        assert!(
            text.contains(" type to filter · Enter keep · Esc clear"),
            "{text}"
        );
        assert!(text.contains("allow"), "{text}");
        assert!(!text.contains("chmod"), "filtered out: {text}");
    }

    #[test]
    fn the_answer_message_shows_on_the_status_line() {
        let mut s = busy_state();
        s.answered(
            "20261130T100000Z-3f9a1c2b",
            "r2",
            aq_shim::approvals::Answer::Deny,
            Ok(()),
        );
        let text = screen(&s, 120, 20);
        let last = text.lines().last().unwrap();
        assert_eq!(last, "answered deny: chmod -x f");
    }

    #[test]
    fn hostile_text_reaches_the_screen_inert() {
        let mut s = State::new();
        let hostile = "\x1b[2J<script>alert(1)</script>\x1b]0;pwned\x07";
        s.record("s1", &decision(1, &["echo", hostile], "ask", ""));
        s.set_pending(vec![ask("s1", "a", &["rm", hostile])]);
        let text = screen(&s, 160, 16);
        assert!(
            text.contains("rm ␛[2J<script>alert(1)</script>␛]0;pwned␇"),
            "{text}"
        );
        assert!(
            text.contains("echo ␛[2J<script>alert(1)</script>␛]0;pwned␇"),
            "{text}"
        );
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    }

    #[test]
    fn a_small_terminal_does_not_panic() {
        let s = busy_state();
        for (w, h) in [(1, 1), (10, 3), (20, 8), (0, 0)] {
            screen(&s, w, h);
        }
    }
}
