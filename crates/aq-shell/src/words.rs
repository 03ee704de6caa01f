//! Word expansion as bash does it, as far as it can be done without running
//! anything: brace expansion, quote and escape removal, `$'...'` decoding,
//! `~`, variables assigned earlier on the line, and command or process
//! substitutions (whose commands are analyzed and linked to the word).

use std::ops::Range;

use brush_parser::word::{BraceExpressionMember, BraceExpressionOrText, WordPiece};

use crate::model::Word;
use crate::walk::Walker;

/// Words one brace expansion may produce before the analyzer stops expanding.
const MAX_BRACE_WORDS: usize = 256;

/// Deepest nesting of `${name[...]}` subscripts handed to brush's word
/// parser (two levels cost ~0.2 ms, three ~3 ms, four ~40 ms).
const MAX_SUBSCRIPT_NESTING: usize = 2;

/// How deep `${name[` subscripts nest in a word (`${a[${b[0]}]}` is 2).
fn subscript_nesting(raw: &str) -> usize {
    let b = raw.as_bytes();
    let mut stack: Vec<bool> = Vec::new();
    let mut max = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'$' if b.get(i + 1) == Some(&b'{') => {
                // `${name[` opens a subscript.
                let mut j = i + 2;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                if j > i + 2 && b.get(j) == Some(&b'[') {
                    stack.push(true);
                    max = max.max(stack.iter().filter(|s| **s).count());
                    i = j + 1;
                    continue;
                }
            }
            b'[' => stack.push(false),
            b']' => {
                stack.pop();
            }
            _ => {}
        }
        i += 1;
    }
    max
}

impl Walker {
    /// The output of commands `range` when it is a constant: one `echo` or
    /// `printf` of literal words, with no redirection.
    fn constant_output(&self, range: Range<usize>) -> Option<String> {
        if range.len() != 1 {
            return None;
        }
        let c = &self.out.commands[range.start];
        if !c.redirects.is_empty() || c.argv.iter().any(|w| w.dynamic) || !c.stdin.is_empty() {
            return None;
        }
        let args: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
        match c.program()? {
            "echo" => {
                let words: Vec<&str> = args
                    .iter()
                    .copied()
                    .skip_while(|a| matches!(*a, "-n" | "-e" | "-E" | "-ne" | "-en"))
                    .collect();
                Some(words.join(" "))
            }
            "printf" if args.len() == 1 && !args[0].contains('%') => {
                Some(decode_ansi_c(args[0]).trim_end_matches('\n').to_string())
            }
            // `$(which nc)`, `$(command -v curl)`: the path of that program,
            // whose name is what decides.
            "which" | "type" | "command" | "whence" => {
                let names: Vec<&str> = args
                    .iter()
                    .copied()
                    .filter(|a| !matches!(*a, "-v" | "-p" | "-P" | "-a" | "--" | "-s"))
                    .collect();
                let lookup = match c.program()? {
                    "command" => args.first().is_some_and(|a| *a == "-v" || *a == "-V"),
                    "type" => args.first().is_some_and(|a| *a == "-p" || *a == "-P"),
                    _ => true,
                };
                match names.as_slice() {
                    [name]
                        if lookup
                            && !name.is_empty()
                            && name.chars().all(|ch| {
                                ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.' | '+')
                            }) =>
                    {
                        // The directory is a guess; a system one, as
                        // `rm $(which node)` removes a system file.
                        Some(format!("/usr/bin/{name}"))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Expands one source word into the words the program would receive.
    pub(crate) fn expand_word(&mut self, raw: &str) -> Vec<Word> {
        let variants = expand_braces(raw);
        let mut out = Vec::with_capacity(variants.len());
        for variant in variants {
            let (word, split) = self.expand_single(&variant, false);
            if split {
                out.extend(split_fields(&word));
            } else {
                out.push(word);
            }
        }
        out
    }

    /// Expands a word that bash does not split or brace-expand (assignment
    /// values, redirection targets, here-strings).
    pub(crate) fn expand_scalar(&mut self, raw: &str) -> Word {
        self.expand_single(raw, false).0
    }

    /// brush's word parser takes exponential time on nested array subscripts
    /// (`${a[${a[${a[0]}]}]}`: ~20x per level): such a text is not expanded,
    /// and the analysis says so. Returns the unexpanded word in that case.
    fn refuse_deep_subscripts(&mut self, raw: &str) -> Option<Word> {
        if subscript_nesting(raw) <= MAX_SUBSCRIPT_NESTING {
            return None;
        }
        self.problem(
            crate::ProblemKind::TooDeep,
            format!(
                "array subscripts nested more than {MAX_SUBSCRIPT_NESTING} deep are not expanded"
            ),
        );
        let mut w = Word::literal(raw);
        w.dynamic = true;
        Some(w)
    }

    /// Expands the body of a here-document: only `$`, backquote and backslash
    /// are special.
    pub(crate) fn expand_heredoc(&mut self, raw: &str) -> Word {
        if let Some(w) = self.refuse_deep_subscripts(raw) {
            return w;
        }
        match crate::guarded(|| brush_parser::word::parse_heredoc(raw, &self.options))
            .and_then(Result::ok)
        {
            Some(pieces) => {
                let mut acc = Acc::default();
                for p in pieces {
                    self.fold_piece(&p.piece, raw, p.start_index..p.end_index, true, &mut acc);
                }
                acc.word
            }
            None => Word::literal(raw),
        }
    }

    /// Returns the word and whether it must be split on whitespace (an
    /// unquoted expansion of a known variable that holds spaces).
    fn expand_single(&mut self, raw: &str, in_quotes: bool) -> (Word, bool) {
        if let Some(w) = self.refuse_deep_subscripts(raw) {
            return (w, false);
        }
        let pieces = match crate::guarded(|| brush_parser::word::parse(raw, &self.options))
            .and_then(Result::ok)
        {
            Some(p) => p,
            None => {
                // Not a word bash could expand either; keep it, but say it is
                // not known.
                let mut w = Word::literal(raw);
                w.dynamic = true;
                return (w, false);
            }
        };
        let mut acc = Acc::default();
        for p in &pieces {
            self.fold_piece(
                &p.piece,
                raw,
                p.start_index..p.end_index,
                in_quotes,
                &mut acc,
            );
        }
        (acc.word, acc.split)
    }

    /// Adds one parsed piece of `raw` (at `span`) to the word being built.
    /// brush gives every piece, nested ones included, offsets into `raw`.
    fn fold_piece(
        &mut self,
        piece: &WordPiece,
        raw: &str,
        span: Range<usize>,
        quoted: bool,
        acc: &mut Acc,
    ) {
        let source = raw.get(span);
        let w = &mut acc.word;
        match piece {
            WordPiece::Text(t) => {
                if !quoted && t.contains(['*', '?', '[']) {
                    w.glob = true;
                }
                w.text.push_str(t);
            }
            WordPiece::SingleQuotedText(t) => w.text.push_str(t),
            WordPiece::AnsiCQuotedText(t) => w.text.push_str(&decode_ansi_c(t)),
            WordPiece::DoubleQuotedSequence(seq) | WordPiece::GettextDoubleQuotedSequence(seq) => {
                for p in seq {
                    self.fold_piece(&p.piece, raw, p.start_index..p.end_index, true, acc);
                }
            }
            WordPiece::TildeExpansion(t) => {
                use brush_parser::word::TildeExpr;
                match t {
                    TildeExpr::Home => w.text.push('~'),
                    TildeExpr::UserHome(u) => {
                        w.text.push('~');
                        w.text.push_str(u);
                    }
                    _ => {
                        w.text.push_str(source.unwrap_or("~"));
                        w.dynamic = true;
                    }
                }
            }
            WordPiece::EscapeSequence(s) => {
                let c = s.strip_prefix('\\').unwrap_or(s);
                if quoted && !matches!(c, "$" | "`" | "\"" | "\\" | "\n" | "") {
                    w.text.push('\\');
                }
                if c != "\n" {
                    w.text.push_str(c);
                }
            }
            WordPiece::ParameterExpansion(_) => {
                let src = source.unwrap_or("$?");
                match simple_parameter_name(src) {
                    Some(name) => match self.lookup_var(name) {
                        Some(value) => {
                            if !quoted && value.text.contains([' ', '\t', '\n']) {
                                acc.split = true;
                            }
                            w.text.push_str(&value.text);
                            w.dynamic |= value.dynamic;
                            w.feeds.extend(value.feeds.iter().copied());
                            w.vars.extend(value.vars.iter().cloned());
                        }
                        None => {
                            w.text.push_str(src);
                            w.dynamic = true;
                            w.vars.push(name.to_string());
                        }
                    },
                    None => {
                        w.text.push_str(src);
                        w.dynamic = true;
                        if let Some(name) = any_parameter_name(src) {
                            w.vars.push(name.to_string());
                        }
                    }
                }
            }
            WordPiece::CommandSubstitution(script)
            | WordPiece::BackquotedCommandSubstitution(script) => {
                let label = if matches!(piece, WordPiece::CommandSubstitution(_)) {
                    "$(...)"
                } else {
                    "`...`"
                };
                let script = if matches!(piece, WordPiece::BackquotedCommandSubstitution(_)) {
                    unescape_backquoted(script)
                } else {
                    script.clone()
                };
                let range = self.walk_nested_script(&script, label, &[]);
                let constant = self.constant_output(range.clone());
                let w = &mut acc.word;
                w.feeds.extend(range);
                match constant {
                    // `$(echo curl)`: the output is known.
                    Some(text) => w.text.push_str(&text),
                    None => {
                        w.dynamic = true;
                        w.text.push_str(source.unwrap_or("$(...)"));
                    }
                }
            }
            WordPiece::ArithmeticExpression(e) => {
                w.text.push_str("$((");
                w.text.push_str(&e.value);
                w.text.push_str("))");
                w.dynamic = true;
            }
        }
    }
}

#[derive(Default)]
struct Acc {
    word: Word,
    split: bool,
}

/// `$NAME` or `${NAME}`: the name. Anything fancier returns `None`.
fn simple_parameter_name(src: &str) -> Option<&str> {
    let body = src.strip_prefix('$')?;
    let name = match body.strip_prefix('{') {
        Some(b) => {
            let inner = b.strip_suffix('}')?;
            // `${NAME:?message}`, `${NAME:-default}` ... give NAME's value
            // when NAME is set, which is what matters for a known variable.
            match inner.find([':', '?', '-', '=', '+']) {
                Some(pos) if !inner[pos..].starts_with(":+") && !inner[pos..].starts_with('+') => {
                    &inner[..pos]
                }
                _ => inner,
            }
        }
        None => body,
    };
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid.then_some(name)
}

/// The variable a complex expansion like `${X:-y}` or `${#X}` reads.
fn any_parameter_name(src: &str) -> Option<&str> {
    let body = src.strip_prefix("${")?;
    let body = body.trim_start_matches(['#', '!']);
    let end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let name = &body[..end];
    (!name.is_empty()).then_some(name)
}

/// Inside backquotes, `\$`, `` \` `` and `\\` stand for the plain character.
fn unescape_backquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && matches!(n, '$' | '`' | '\\')
        {
            out.push(n);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// Splits a word on whitespace, as bash splits an unquoted expansion.
fn split_fields(word: &Word) -> Vec<Word> {
    word.text
        .split([' ', '\t', '\n'])
        .filter(|s| !s.is_empty())
        .map(|s| Word {
            text: s.to_string(),
            ..word.clone()
        })
        .collect()
}

/// Brace expansion: `{curl,-s,URL}` gives three words, `a{b,c}d` two.
pub(crate) fn expand_braces(raw: &str) -> Vec<String> {
    if !(raw.contains('{') && (raw.contains(',') || raw.contains(".."))) {
        return vec![raw.to_string()];
    }
    let options = brush_parser::ParserOptions::default();
    match crate::guarded(|| brush_parser::word::parse_brace_expansions(raw, &options)) {
        Some(Ok(Some(parts))) => {
            let mut out = vec![String::new()];
            for part in &parts {
                out = product(&out, &expand_brace_part(part));
                if out.len() > MAX_BRACE_WORDS {
                    out.truncate(MAX_BRACE_WORDS);
                }
            }
            out
        }
        _ => vec![raw.to_string()],
    }
}

fn expand_brace_part(part: &BraceExpressionOrText) -> Vec<String> {
    match part {
        BraceExpressionOrText::Text(t) => vec![t.clone()],
        BraceExpressionOrText::Expr(members) => {
            let mut out = Vec::new();
            for m in members {
                match m {
                    BraceExpressionMember::Child(children) => {
                        let mut acc = vec![String::new()];
                        for c in children {
                            acc = product(&acc, &expand_brace_part(c));
                            if acc.len() > MAX_BRACE_WORDS {
                                acc.truncate(MAX_BRACE_WORDS);
                            }
                        }
                        out.extend(acc);
                    }
                    BraceExpressionMember::NumberSequence {
                        start,
                        end,
                        increment,
                    } => {
                        let step = increment.unsigned_abs().max(1) as usize;
                        let (lo, hi) = (*start.min(end), *start.max(end));
                        let seq = (lo..=hi).step_by(step).take(MAX_BRACE_WORDS);
                        out.extend(seq.map(|n| n.to_string()));
                    }
                    BraceExpressionMember::CharSequence {
                        start,
                        end,
                        increment,
                    } => {
                        let step = increment.unsigned_abs().max(1) as usize;
                        let (lo, hi) = (*start.min(end), *start.max(end));
                        out.extend(
                            (lo..=hi)
                                .step_by(step)
                                .take(MAX_BRACE_WORDS)
                                .map(String::from),
                        );
                    }
                }
                if out.len() > MAX_BRACE_WORDS {
                    out.truncate(MAX_BRACE_WORDS);
                    break;
                }
            }
            out
        }
    }
}

fn product(a: &[String], b: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(a.len() * b.len().max(1));
    for x in a {
        for y in b {
            out.push(format!("{x}{y}"));
        }
    }
    out
}

/// Decodes the body of a `$'...'` word.
pub(crate) fn decode_ansi_c(s: &str) -> String {
    let body = s
        .strip_prefix("$'")
        .and_then(|b| b.strip_suffix('\''))
        .unwrap_or(s);
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' || i >= chars.len() {
            out.push(c);
            continue;
        }
        let e = chars[i];
        i += 1;
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let start = i;
                while i < chars.len() && i - start < max && chars[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let digits: String = chars[start..i].iter().collect();
                match u32::from_str_radix(&digits, 16)
                    .ok()
                    .and_then(char::from_u32)
                {
                    Some(ch) if !digits.is_empty() => out.push(ch),
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '0'..='7' => {
                let start = i - 1;
                while i < chars.len() && i - start < 3 && ('0'..='7').contains(&chars[i]) {
                    i += 1;
                }
                let digits: String = chars[start..i].iter().collect();
                let v = u32::from_str_radix(&digits, 8).unwrap_or(0) & 0xff;
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            'c' if i < chars.len() => {
                out.push(char::from_u32((chars[i] as u32) & 0x1f).unwrap_or('\u{fffd}'));
                i += 1;
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_escapes_decode() {
        assert_eq!(decode_ansi_c(r"$'\x63url'"), "curl");
        assert_eq!(decode_ansi_c(r"$'\143url'"), "curl");
        assert_eq!(decode_ansi_c(r"$'\u0063url'"), "curl");
        assert_eq!(decode_ansi_c(r"$'a\tb'"), "a\tb");
    }

    #[test]
    fn nested_subscripts_are_measured() {
        assert_eq!(subscript_nesting("${a[0]}"), 1);
        assert_eq!(subscript_nesting("${a[${b[0]}]}"), 2);
        assert_eq!(subscript_nesting("${a[${a[${a[0]}]}]}"), 3);
        assert_eq!(subscript_nesting("[[ x ]] ${HOME}"), 0);
    }

    #[test]
    fn braces_expand_like_bash() {
        assert_eq!(expand_braces("{curl,-s,x}"), vec!["curl", "-s", "x"]);
        assert_eq!(expand_braces("a{b,c}d"), vec!["abd", "acd"]);
        assert_eq!(expand_braces("f{1..3}"), vec!["f1", "f2", "f3"]);
        assert_eq!(expand_braces("plain"), vec!["plain"]);
    }
}
