//! Text from a log made harmless to draw.
//!
//! A command line, a path or a host name in the log comes from the agent,
//! so it is attacker-controlled: an ANSI escape in it could clear the
//! screen, move the cursor over an ask, or retitle the terminal, and a
//! bidirectional override could show `rm -rf /` as something else. Every
//! string is passed through [`inert`] before it reaches the terminal, which
//! keeps it readable and visibly marks what was removed.

/// `text` with every control character replaced by a visible stand-in:
/// the C0 controls by their Unicode control pictures (ESC becomes `␛`, so
/// an escape sequence shows as `␛[2J` and does nothing), DEL by `␡`, C1
/// controls and the bidirectional and zero-width formatting characters by
/// `�` (the set is `aq_audit::inert`'s, which the reports use too).
pub use aq_audit::inert::inert;

/// An argument vector as one inert line: words joined by spaces, a word
/// that is empty or holds a space quoted so word boundaries stay visible.
pub(crate) fn inert_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            if w.is_empty() || w.contains(' ') {
                format!("'{}'", inert(w))
            } else {
                inert(w)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_become_visible_and_inert() {
        let cases = [
            ("\x1b[2J<script>", "␛[2J<script>"),
            ("a\x1b]0;title\x07b", "a␛]0;title␇b"),
            ("line1\nline2\r\tx", "line1␊line2␍␉x"),
            ("del\x7f", "del␡"),
            ("c1\u{9b}31m", "c1\u{fffd}31m"),
            ("rm \u{202e}fr- /", "rm \u{fffd}fr- /"),
            ("zero\u{200b}width", "zero\u{fffd}width"),
            ("plain ascii / ünïcode", "plain ascii / ünïcode"),
        ];
        for (input, want) in cases {
            let got = inert(input);
            assert_eq!(got, want, "{input:?}");
            assert!(
                !got.chars().any(|c| c.is_control()),
                "{input:?} kept a control: {got:?}"
            );
        }
    }

    #[test]
    fn argv_keeps_word_boundaries() {
        let argv: Vec<String> = ["sh", "-c", "echo hi", "", "\x1b[31mred"]
            .map(String::from)
            .to_vec();
        assert_eq!(inert_argv(&argv), "sh -c 'echo hi' '' ␛[31mred");
    }
}
