//! Small text helpers: line numbers, masking, JSON with comments.

/// The line (from 1) of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset.min(text.len())]).count() + 1
}

/// The line (from 1) of the first occurrence of `needle`, or 1.
pub(crate) fn line_of_str(text: &str, needle: &str) -> usize {
    text.find(needle).map_or(1, |o| line_of(text, o))
}

/// A secret shown safely: its first four characters (at most a quarter of
/// it), then `…` and its length. `ghp_…(40 chars)`.
pub fn mask(secret: &str) -> String {
    let n = secret.chars().count();
    let keep = (n / 4).min(4);
    let head: String = secret.chars().take(keep).collect();
    format!("{head}…({n} chars)")
}

/// Text shortened to `max` characters for evidence.
pub(crate) fn clip(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let head: String = s.chars().take(max).collect();
        format!("{head}…")
    }
}

/// JSON with comments and trailing commas (VS Code, devcontainer) made
/// plain JSON: comments become spaces, so byte offsets stay put.
pub(crate) fn strip_jsonc(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
        } else if c == b'"' {
            in_str = true;
            out.push(c);
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            out.extend_from_slice(b"  ");
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                out.push(if b[i] == b'\n' { b'\n' } else { b' ' });
                i += 1;
            }
            out.extend_from_slice(b"  ");
            i += 2;
        } else if c == b',' {
            // A trailing comma: the next non-space is `}` or `]`.
            let next = b[i + 1..].iter().find(|x| !x.is_ascii_whitespace());
            out.push(if matches!(next, Some(b'}') | Some(b']')) {
                b' '
            } else {
                c
            });
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out.truncate(b.len());
    String::from_utf8(out).unwrap_or_default()
}

/// Parses JSON or JSON with comments.
pub(crate) fn parse_json(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str(text)
        .ok()
        .or_else(|| serde_json::from_str(&strip_jsonc(text)).ok())
}

/// A JSON command: a string, or an array of words joined by spaces.
pub(crate) fn json_command(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(a) => Some(
            a.iter()
                .filter_map(|w| w.as_str())
                .map(shell_quote)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

/// A word quoted for a shell line when it needs quoting.
pub(crate) fn shell_quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%~".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_keeps_a_few_characters() {
        assert_eq!(mask("ghp_0123456789abcdef"), "ghp_…(20 chars)");
        assert_eq!(mask("abc"), "…(3 chars)");
    }

    #[test]
    fn jsonc_is_read() {
        let v = parse_json("{\n // c\n \"a\": \"x//y\", /* b */ \"b\": [1,],\n}").unwrap();
        assert_eq!(v["a"], "x//y");
        assert_eq!(v["b"][0], 1);
    }
}
