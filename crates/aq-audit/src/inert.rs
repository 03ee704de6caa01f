//! Which characters of a log's text must not reach a terminal or a page as
//! they are, and what stands in for them.
//!
//! A command line, a path or a host name in the log comes from the agent:
//! an ANSI escape in it could clear a screen, move the cursor over an ask
//! or retitle a terminal, and a bidirectional override or a zero-width
//! character could make `rm -rf /` read as something else. The Markdown
//! and terminal reports quote such words ([`crate::report::display_argv`]),
//! the HTML page and `aq watch` draw a stand-in; all of them ask this
//! module which characters those are.

/// Whether `c` acts instead of showing: a C0 or C1 control, DEL, a
/// bidirectional mark, override or isolate, a zero-width character, or a
/// byte-order mark.
pub(crate) fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}'
        )
}

/// The Unicode control picture of a C0 control or DEL (ESC shows as `␛`,
/// so an escape sequence reads `␛[2J` and does nothing).
pub(crate) fn control_picture(c: char) -> Option<char> {
    match c {
        '\0'..='\u{1f}' => char::from_u32(0x2400 + c as u32),
        '\u{7f}' => Some('\u{2421}'),
        _ => None,
    }
}

/// `text` with every unsafe character replaced by a visible stand-in: its
/// control picture, else `�`.
pub fn inert(text: &str) -> String {
    text.chars()
        .map(|c| match control_picture(c) {
            Some(p) => p,
            None if is_unsafe(c) => '\u{fffd}',
            None => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_acts_is_replaced_and_the_rest_kept() {
        assert_eq!(inert("a\u{1b}[2Jb\u{7f}"), "a\u{241b}[2Jb\u{2421}");
        assert_eq!(
            inert("\u{202e}exe.txt\u{200b}\u{9b}"),
            "\u{fffd}exe.txt\u{fffd}\u{fffd}"
        );
        assert_eq!(inert("ünïcode → fine"), "ünïcode → fine");
        for c in ['\u{2066}', '\u{2060}', '\u{feff}', '\u{85}'] {
            assert!(is_unsafe(c), "{c:?}");
        }
        assert!(!is_unsafe('é') && !is_unsafe(' '));
    }
}
