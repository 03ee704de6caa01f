//! Word expansion as bash does it, as far as it can be done without running
//! anything: brace expansion, quote and escape removal, `$'...'` decoding,
//! `~`, variables assigned earlier on the line, and command or process
//! substitutions (whose commands are analyzed and linked to the word).

use std::ops::Range;

use brush_parser::word::{
    BraceExpressionMember, BraceExpressionOrText, Parameter, ParameterExpr, WordPiece,
    WordPieceWithSource,
};

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
            "echo" => echo_output(&args).map(|t| t.trim_end_matches('\n').to_string()),
            "printf" => printf_output(&args).map(|t| t.trim_end_matches('\n').to_string()),
            // `$(printenv AQ_SESSION_DIR)`: the variable's value, when the
            // line knows it (`$HOME`, a home directory variable).
            "printenv" => match args.as_slice() {
                [name] if !name.starts_with('-') => match self.lookup(name)? {
                    Var::Scalar(w) if !w.dynamic => Some(w.text),
                    _ => None,
                },
                _ => None,
            },
            // `$(realpath "$AQ_SESSION_DIR")`, `$(readlink -f ~/x)`: the
            // same place as far as the line can tell (links unknown).
            "realpath" | "readlink" => {
                let paths: Vec<&str> = args
                    .iter()
                    .copied()
                    .filter(|a| !a.starts_with('-'))
                    .collect();
                let canonical = c.program() == Some("realpath")
                    || args
                        .iter()
                        .any(|a| matches!(*a, "-f" | "-e" | "-m" | "--canonicalize"));
                match paths.as_slice() {
                    [p] if canonical && !p.is_empty() => Some(p.trim_end_matches('/').to_string()),
                    _ => None,
                }
            }
            // `$(dirname "$AQ_SESSION_DIR/x")`: the parent, as written.
            "dirname" => match args.as_slice() {
                [p] if !p.starts_with('-') => {
                    let p = p.trim_end_matches('/');
                    Some(match p.rsplit_once('/') {
                        Some(("", _)) => "/".to_string(),
                        Some((parent, _)) => parent.to_string(),
                        None => ".".to_string(),
                    })
                }
                _ => None,
            },
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

    /// What command `idx` of the line prints when that is known from the
    /// line alone: `echo` or `printf` of literal words, or `cat` copying a
    /// here-document or here-string. Unlike [`Self::constant_output`], the
    /// text keeps its last newline (it is read as input, not spliced).
    pub(crate) fn literal_output(&self, idx: usize) -> Option<String> {
        let c = self.out.commands.get(idx)?;
        if c.argv.iter().any(|w| w.dynamic)
            || c.redirects
                .iter()
                .any(|r| r.kind.writes() && r.fd.is_none_or(|f| f == 1))
        {
            return None;
        }
        let args: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
        match c.program()? {
            "echo" if c.stdin.is_empty() => echo_output(&args),
            "printf" if c.stdin.is_empty() => printf_output(&args),
            "cat" if args.is_empty() || args == ["-"] => {
                let mut out = String::new();
                for input in &c.stdin {
                    match input {
                        crate::model::Input::Text(t) if !t.dynamic => out.push_str(&t.text),
                        _ => return None,
                    }
                }
                (!out.is_empty()).then_some(out)
            }
            _ => None,
        }
    }

    /// Expands one source word into the words the program would receive:
    /// brace expansion, then the expansions, then field splitting on `IFS`
    /// of what unquoted expansions produced, then removal of empty fields
    /// that had no quotes.
    pub(crate) fn expand_word(&mut self, raw: &str) -> Vec<Word> {
        if is_plain(raw) {
            return vec![Word::literal(raw)];
        }
        let variants = expand_braces(raw);
        let mut out = Vec::with_capacity(variants.len());
        for variant in variants {
            let acc = self.expand_pieces(&variant, false);
            out.extend(self.fields(acc));
        }
        out
    }

    /// Expands a word that bash does not split or brace-expand (assignment
    /// values, redirection targets, here-strings).
    pub(crate) fn expand_scalar(&mut self, raw: &str) -> Word {
        if is_plain(raw) {
            return Word::literal(raw);
        }
        let mut acc = Acc {
            scalar: true,
            ..Acc::default()
        };
        if let Some(w) = self.refuse_deep_subscripts(raw) {
            return w;
        }
        self.fold_text(raw, false, &mut acc);
        acc.scalar()
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
                let mut acc = Acc {
                    scalar: true,
                    ..Acc::default()
                };
                for p in merge_text(&pieces) {
                    self.fold_piece(&p.piece, raw, p.start_index..p.end_index, true, &mut acc);
                }
                acc.scalar()
            }
            None => Word::literal(raw),
        }
    }

    /// Parses and expands `raw` (no brace expansion, no splitting yet).
    fn expand_pieces(&mut self, raw: &str, quoted: bool) -> Acc {
        let mut acc = Acc::default();
        if let Some(w) = self.refuse_deep_subscripts(raw) {
            acc.push_word(&w);
            return acc;
        }
        self.fold_text(raw, quoted, &mut acc);
        acc
    }

    /// Parses `raw` as a word and adds its expansion to `acc`. A text the
    /// word parser refuses is kept as it is, marked as not known.
    fn fold_text(&mut self, raw: &str, quoted: bool, acc: &mut Acc) {
        match crate::guarded(|| brush_parser::word::parse(raw, &self.options)).and_then(Result::ok)
        {
            Some(pieces) => {
                for p in merge_text(&pieces) {
                    self.fold_piece(&p.piece, raw, p.start_index..p.end_index, quoted, acc);
                }
            }
            None => {
                // Not a word bash could expand either; keep it, but say it is
                // not known.
                acc.push(raw, false, false);
                acc.word.dynamic = true;
            }
        }
    }

    /// The value of `IFS`: `None` when it is not known.
    fn ifs(&self) -> Option<String> {
        match self.lookup(IFS) {
            Some(Var::Scalar(w)) if !w.dynamic => Some(w.text),
            Some(Var::Unset) => Some(DEFAULT_IFS.to_string()),
            None => Some(DEFAULT_IFS.to_string()),
            _ => None,
        }
    }

    /// Splits an expanded word into fields, as bash does.
    fn fields(&self, mut acc: Acc) -> Vec<Word> {
        let ifs = match self.ifs() {
            Some(ifs) => ifs,
            None => {
                if acc
                    .segs
                    .iter()
                    .any(|s| matches!(s, Seg::Char { split: true, .. }))
                {
                    acc.word.dynamic = true;
                }
                DEFAULT_IFS.to_string()
            }
        };
        let fields = split_segs(&acc.segs, &ifs);
        if acc.empty_many && fields.iter().any(|(t, _)| t.is_empty()) {
            acc.word.dynamic = true;
        }
        fields
            .into_iter()
            .map(|(text, glob)| Word {
                text,
                glob,
                ..acc.word.clone()
            })
            .collect()
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
        let source = raw.get(span).unwrap_or("");
        match piece {
            WordPiece::Text(t) if t.contains("${") || t.contains("$[") => {
                self.fold_unparsed(t, quoted, acc);
            }
            WordPiece::Text(t) => acc.push(t, false, !quoted),
            WordPiece::SingleQuotedText(t) => {
                acc.segs.push(Seg::Null);
                acc.push(t, false, false);
            }
            WordPiece::AnsiCQuotedText(t) => {
                acc.segs.push(Seg::Null);
                acc.push(&decode_ansi_c(t), false, false);
            }
            WordPiece::DoubleQuotedSequence(seq) | WordPiece::GettextDoubleQuotedSequence(seq) => {
                // `"${arr[@]}"` of an empty array gives no word at all.
                let only_all = seq.len() == 1
                    && matches!(&seq[0].piece, WordPiece::ParameterExpansion(e) if expands_all(e));
                if !only_all {
                    acc.segs.push(Seg::Null);
                }
                for p in merge_text(seq) {
                    self.fold_piece(&p.piece, raw, p.start_index..p.end_index, true, acc);
                }
            }
            WordPiece::TildeExpansion(t) => {
                use brush_parser::word::TildeExpr;
                match t {
                    TildeExpr::Home => match self.lookup("HOME") {
                        Some(Var::Scalar(w)) if !w.dynamic => acc.push(&w.text, false, false),
                        _ => acc.push("~", false, false),
                    },
                    TildeExpr::UserHome(u) => {
                        acc.push("~", false, false);
                        acc.push(u, false, false);
                    }
                    _ => {
                        acc.push(if source.is_empty() { "~" } else { source }, false, false);
                        acc.word.dynamic = true;
                    }
                }
            }
            WordPiece::EscapeSequence(s) => {
                let c = s.strip_prefix('\\').unwrap_or(s);
                if quoted && !matches!(c, "$" | "`" | "\"" | "\\" | "\n" | "") {
                    acc.push("\\", false, false);
                }
                if c != "\n" {
                    acc.push(c, false, false);
                }
            }
            WordPiece::ParameterExpansion(expr) => {
                self.fold_parameter(expr, source, quoted, acc);
            }
            WordPiece::CommandSubstitution(script)
            | WordPiece::BackquotedCommandSubstitution(script) => {
                let plain = if matches!(piece, WordPiece::CommandSubstitution(_)) {
                    "$(...)"
                } else {
                    "`...`"
                };
                let script = if matches!(piece, WordPiece::BackquotedCommandSubstitution(_)) {
                    unescape_backquoted(script)
                } else {
                    script.clone()
                };
                // In text bash evaluates as code (a subscript, a prompt
                // string), the substitution is hidden code, labelled by
                // where it hides; what it contains is walked as usual.
                let hidden = self.hidden.take();
                let masking = std::mem::take(&mut self.masking);
                let label = hidden.as_deref().unwrap_or(plain);
                let range = self.walk_nested(&script, label, &[], true);
                self.hidden = hidden;
                self.masking = masking;
                let constant = self.constant_output(range.clone());
                acc.word.feeds.extend(range);
                match constant {
                    // `$(echo curl)`: the output is known, and split when
                    // the substitution is not quoted.
                    Some(text) => acc.push(&text, !quoted, !quoted),
                    None => {
                        acc.word.dynamic = true;
                        let spelled = if self.masking {
                            "0"
                        } else if source.is_empty() {
                            "$(...)"
                        } else {
                            source
                        };
                        acc.push(spelled, false, false);
                    }
                }
            }
            WordPiece::ArithmeticExpression(e) => {
                let expanded = self.eval_source_arithmetic(&e.value);
                if self.masking {
                    acc.push("0", false, false);
                } else {
                    acc.push("$((", false, false);
                    acc.push(&e.value, false, false);
                    acc.push("))", false, false);
                }
                acc.word.dynamic = true;
                acc.add_feeds(&expanded.feeds);
            }
        }
    }

    /// Text with a `${` or `$[` brush did not read as an expansion:
    /// `${name~~}` and `${name~}` (case toggling) are expanded here;
    /// anything else is not known.
    fn fold_unparsed(&mut self, text: &str, quoted: bool, acc: &mut Acc) {
        let mut rest = text;
        while let Some(pos) = rest.find("${").or_else(|| rest.find("$[")) {
            acc.push(&rest[..pos], false, !quoted);
            let after = &rest[pos + 2..];
            let name_len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..name_len];
            let tail = &after[name_len..];
            let (all, skip) = if tail.starts_with("~~}") {
                (true, 3)
            } else if tail.starts_with("~}") {
                (false, 2)
            } else {
                (false, 0)
            };
            if rest[pos..].starts_with("$[") {
                // `$[ E ]`, the old spelling of `$(( E ))`.
                let inner = &rest[pos + 2..];
                let end = bracket_end(inner);
                self.eval_source_arithmetic(&inner[..end]);
                acc.push(&rest[pos..pos + 2 + end], false, false);
                acc.word.dynamic = true;
                rest = inner.get(end + 1..).unwrap_or("");
                continue;
            }
            if skip == 0 || !valid_name(name) {
                acc.push(&rest[pos..], false, false);
                acc.word.dynamic = true;
                return;
            }
            match self.element(name, None, acc) {
                Val::One(v) => {
                    let toggled: String = v
                        .chars()
                        .enumerate()
                        .map(|(i, c)| {
                            if !all && i > 0 {
                                c
                            } else {
                                one_case(c, c.is_lowercase())
                            }
                        })
                        .collect();
                    acc.push(&toggled, !quoted, !quoted);
                }
                Val::Unset => {}
                _ => {
                    acc.push(&rest[pos..pos + 2 + name_len + skip], false, false);
                    acc.word.dynamic = true;
                }
            }
            rest = &tail[skip..];
        }
        acc.push(rest, false, !quoted);
    }

    /// The value of a parameter, as far as it is known. Flags of the
    /// variable's value (substitutions it came from) go to `acc`.
    fn parameter_value(&self, parameter: &Parameter, indirect: bool, acc: &mut Acc) -> Val {
        let (name, index) = match parameter {
            Parameter::Named(name) => (name.as_str(), None),
            Parameter::NamedWithIndex { name, index } => (name.as_str(), Some(index.as_str())),
            Parameter::NamedWithAllIndices { name, concatenate } => {
                if indirect {
                    return Val::Unknown;
                }
                let name = &*self.resolve_reference(name);
                return match self.lookup(name) {
                    None => {
                        acc.word.vars.push(name.to_string());
                        Val::Unknown
                    }
                    Some(Var::Unset) => Val::Many(Vec::new(), *concatenate),
                    Some(Var::Scalar(w)) => match acc.known(&w) {
                        Some(t) => Val::Many(vec![t], *concatenate),
                        None => Val::Unknown,
                    },
                    Some(Var::Array(items)) => {
                        let mut out = Vec::with_capacity(items.len());
                        for w in &items {
                            match acc.known(w) {
                                Some(t) => out.push(t),
                                None => return Val::Unknown,
                            }
                        }
                        Val::Many(out, *concatenate)
                    }
                };
            }
            // `$1`, `"$@"`, `$#`: the arguments `set --` or a call of a
            // function defined on the line gave, when known.
            Parameter::Positional(n) if *n > 0 => {
                return match self.lookup(POSITIONAL) {
                    Some(Var::Array(items)) => match items.get(*n as usize - 1) {
                        Some(w) => acc.known(w).map_or(Val::Unknown, Val::One),
                        None => Val::Unset,
                    },
                    _ => Val::Unknown,
                };
            }
            Parameter::Special(brush_parser::word::SpecialParameter::AllPositionalParameters {
                concatenate,
            }) => {
                return match self.lookup(POSITIONAL) {
                    Some(Var::Array(items)) => {
                        let mut out = Vec::with_capacity(items.len());
                        for w in &items {
                            match acc.known(w) {
                                Some(t) => out.push(t),
                                None => return Val::Unknown,
                            }
                        }
                        Val::Many(out, *concatenate)
                    }
                    _ => Val::Unknown,
                };
            }
            Parameter::Special(brush_parser::word::SpecialParameter::PositionalParameterCount) => {
                return match self.lookup(POSITIONAL) {
                    Some(Var::Array(items)) => Val::One(items.len().to_string()),
                    _ => Val::Unknown,
                };
            }
            // `$0` of a `sh -c SCRIPT NAME` script: NAME.
            Parameter::Positional(0)
            | Parameter::Special(brush_parser::word::SpecialParameter::ShellName) => {
                return match self.lookup(SCRIPT_NAME) {
                    Some(Var::Scalar(w)) => acc.known(&w).map_or(Val::Unknown, Val::One),
                    _ => Val::Unknown,
                };
            }
            Parameter::Positional(_) | Parameter::Special(_) => return Val::Unknown,
        };
        let value = self.element(name, index, acc);
        if !indirect {
            return value;
        }
        // `${!ref}`: the variable named by the value of `ref`.
        match value {
            Val::One(target) if valid_name(&target) => self.element(&target, None, acc),
            Val::Unset => Val::Unknown,
            _ => Val::Unknown,
        }
    }

    /// `$name` or `${name[index]}` (through a reference, its target's).
    fn element(&self, name: &str, index: Option<&str>, acc: &mut Acc) -> Val {
        let target = self.resolve_reference(name);
        let name = &*target;
        let index = match index {
            None => 0,
            Some(i) => match parse_integer(i) {
                Some(n) => n,
                None => return Val::Unknown,
            },
        };
        match self.lookup(name) {
            None => {
                acc.word.vars.push(name.to_string());
                Val::Unknown
            }
            Some(Var::Unset) => Val::Unset,
            // A value read with a default (`x=${x:-rm}`): that reading,
            // still only known at run time.
            Some(Var::Scalar(w)) if is_default_reading(&w) && matches!(index, 0 | -1) => {
                acc.word.dynamic = true;
                acc.add_vars(&w.vars);
                Val::One(w.text.clone())
            }
            Some(Var::Scalar(w)) => match (index, acc.known(&w)) {
                (0 | -1, Some(t)) => Val::One(t),
                (_, Some(_)) => Val::Unset,
                (_, None) => Val::Unknown,
            },
            Some(Var::Array(items)) => {
                let len = items.len() as i64;
                let at = if index < 0 { len + index } else { index };
                if at < 0 {
                    return Val::Unknown;
                }
                match items.get(at as usize) {
                    Some(w) => acc.known(w).map_or(Val::Unknown, Val::One),
                    None => Val::Unset,
                }
            }
        }
    }

    /// What bash evaluates in a parameter expansion before it reads the
    /// value: an array subscript (`${a[E]}`, an arithmetic expression), the
    /// variable named by the value of `${!N}`.
    fn eval_parameter(&mut self, expr: &ParameterExpr) {
        let Some((parameter, indirect)) = parameter_of(expr) else {
            return;
        };
        match parameter {
            Parameter::NamedWithIndex { index, .. } if parse_integer(index).is_none() => {
                self.eval_source_arithmetic(index);
            }
            Parameter::Named(name) if indirect => {
                let name = self.resolve_reference(name);
                if let Some(Var::Scalar(w)) = self.lookup(&name) {
                    self.eval_name(&w, "${!name}");
                }
            }
            _ => {}
        }
    }

    /// `${x@P}`: the value is expanded as a prompt string.
    fn eval_prompt_parameter(&mut self, parameter: &Parameter, indirect: bool) {
        let values = match parameter {
            Parameter::Named(name) | Parameter::NamedWithAllIndices { name, .. } if !indirect => {
                match self.lookup(&self.resolve_reference(name)) {
                    Some(Var::Scalar(w)) => vec![w],
                    Some(Var::Array(items)) => items,
                    // From the environment (or not set).
                    Some(Var::Unset) | None => Vec::new(),
                }
            }
            Parameter::NamedWithIndex { name, index } => {
                let mut acc = Acc::default();
                match self.element(name, Some(index), &mut acc) {
                    Val::One(s) => vec![Word::literal(s)],
                    _ => vec![acc.word],
                }
            }
            _ => {
                let mut w = Word::literal("${...@P}");
                w.dynamic = true;
                vec![w]
            }
        };
        for v in values {
            self.eval_prompt(&v, "${x@P}");
        }
    }

    /// Adds a parameter expansion to `acc`.
    fn fold_parameter(&mut self, expr: &ParameterExpr, source: &str, quoted: bool, acc: &mut Acc) {
        use ParameterExpr as P;
        self.eval_parameter(expr);
        let vars_before = acc.word.vars.len();
        let result = match expr {
            P::Parameter {
                parameter,
                indirect,
            } => self.parameter_value(parameter, *indirect, acc),
            P::UseDefaultValues {
                parameter,
                indirect,
                test_type,
                default_value,
            }
            | P::AssignDefaultValues {
                parameter,
                indirect,
                test_type,
                default_value,
            } => {
                let value = self.parameter_value(parameter, *indirect, acc);
                let assign = matches!(expr, P::AssignDefaultValues { .. });
                // The variable `${x:=word}` assigns to: a plain name only.
                let target = match parameter {
                    Parameter::Named(n) if assign && !*indirect => Some(n.as_str()),
                    _ => None,
                };
                match value.is_missing(test_type) {
                    None => {
                        self.fold_unknown_default(
                            default_value.as_deref(),
                            target,
                            source,
                            quoted,
                            acc,
                        );
                        return;
                    }
                    Some(false) => value,
                    Some(true) => {
                        self.fold_missing_default(
                            default_value.as_deref(),
                            assign,
                            target,
                            quoted,
                            acc,
                        );
                        return;
                    }
                }
            }
            P::UseAlternativeValue {
                parameter,
                indirect,
                test_type,
                alternative_value,
            } => {
                let value = self.parameter_value(parameter, *indirect, acc);
                match value.is_missing(test_type) {
                    None => Val::Unknown,
                    Some(true) => Val::One(String::new()),
                    Some(false) => {
                        let sub = self.fold_optional_operand(alternative_value.as_deref(), quoted);
                        acc.append(sub);
                        return;
                    }
                }
            }
            P::IndicateErrorIfNullOrUnset {
                parameter,
                indirect,
                test_type,
                ..
            } => {
                let value = self.parameter_value(parameter, *indirect, acc);
                match value.is_missing(test_type) {
                    Some(false) => value,
                    // bash stops with an error here.
                    _ => Val::Unknown,
                }
            }
            P::ParameterLength {
                parameter,
                indirect,
            } => match self.parameter_value(parameter, *indirect, acc) {
                Val::One(s) => Val::One(s.chars().count().to_string()),
                Val::Unset => Val::One("0".into()),
                Val::Many(items, _) => Val::One(items.len().to_string()),
                Val::Unknown => Val::Unknown,
            },
            P::RemoveSmallestSuffixPattern {
                parameter,
                indirect,
                pattern,
            }
            | P::RemoveLargestSuffixPattern {
                parameter,
                indirect,
                pattern,
            }
            | P::RemoveSmallestPrefixPattern {
                parameter,
                indirect,
                pattern,
            }
            | P::RemoveLargestPrefixPattern {
                parameter,
                indirect,
                pattern,
            } => {
                let value = self.parameter_value(parameter, *indirect, acc);
                let pattern = match pattern {
                    Some(p) => self.pattern(p, acc),
                    None => Some(Vec::new()),
                };
                match pattern {
                    None => Val::Unknown,
                    Some(pat) => {
                        let (prefix, largest) = match expr {
                            P::RemoveSmallestSuffixPattern { .. } => (false, false),
                            P::RemoveLargestSuffixPattern { .. } => (false, true),
                            P::RemoveSmallestPrefixPattern { .. } => (true, false),
                            _ => (true, true),
                        };
                        value.map(|s| remove_pattern(s, &pat, prefix, largest))
                    }
                }
            }
            P::Substring {
                parameter,
                indirect,
                offset,
                length,
            } => {
                let value = self.parameter_value(parameter, *indirect, acc);
                for e in std::iter::once(offset).chain(length.as_ref()) {
                    if parse_integer(&e.value).is_none() {
                        self.eval_source_arithmetic(&e.value);
                    }
                }
                let offset = self.arithmetic(&offset.value);
                let length = match length {
                    Some(l) => self.arithmetic(&l.value).map(Some),
                    None => Some(None),
                };
                match (offset, length) {
                    (Some(o), Some(l)) => substring(value, o, l),
                    _ => Val::Unknown,
                }
            }
            P::Transform {
                parameter,
                indirect,
                op,
            } => {
                use brush_parser::word::ParameterTransformOp as T;
                if matches!(op, T::PromptExpand) {
                    self.eval_prompt_parameter(parameter, *indirect);
                }
                let value = self.parameter_value(parameter, *indirect, acc);
                match op {
                    T::ToUpperCase => value.map(|s| s.chars().map(|c| one_case(c, true)).collect()),
                    T::ToLowerCase => {
                        value.map(|s| s.chars().map(|c| one_case(c, false)).collect())
                    }
                    T::CapitalizeInitial => value.map(|s| change_first(s, true)),
                    T::ExpandEscapeSequences => value.map(decode_ansi_c),
                    _ => Val::Unknown,
                }
            }
            P::UppercaseFirstChar {
                parameter,
                indirect,
                pattern,
            }
            | P::UppercasePattern {
                parameter,
                indirect,
                pattern,
            }
            | P::LowercaseFirstChar {
                parameter,
                indirect,
                pattern,
            }
            | P::LowercasePattern {
                parameter,
                indirect,
                pattern,
            } => {
                let value = self.parameter_value(parameter, *indirect, acc);
                let pattern = match pattern {
                    Some(p) if !p.is_empty() => self.pattern(p, acc),
                    _ => Some(vec![(Pat::Any, false)]),
                };
                let upper = matches!(
                    expr,
                    P::UppercaseFirstChar { .. } | P::UppercasePattern { .. }
                );
                let all = matches!(
                    expr,
                    P::UppercasePattern { .. } | P::LowercasePattern { .. }
                );
                match pattern {
                    None => Val::Unknown,
                    Some(pat) => value.map(|s| change_case(s, &pat, upper, all)),
                }
            }
            P::ReplaceSubstring {
                parameter,
                indirect,
                pattern,
                replacement,
                match_kind,
            } => {
                let value = self.parameter_value(parameter, *indirect, acc);
                let pat = self.pattern(pattern, acc);
                let rep = match replacement {
                    Some(r) => self.pattern(r, acc),
                    None => Some(Vec::new()),
                };
                match (pat, rep) {
                    (Some(pat), Some(rep)) => {
                        value.map(|s| replace_pattern(s, &pat, &rep, match_kind))
                    }
                    _ => Val::Unknown,
                }
            }
            P::MemberKeys {
                variable_name,
                concatenate,
            } => match self.lookup(variable_name) {
                Some(Var::Array(items)) => Val::Many(
                    (0..items.len()).map(|i| i.to_string()).collect(),
                    *concatenate,
                ),
                Some(Var::Scalar(w)) if !w.dynamic => Val::Many(vec!["0".into()], *concatenate),
                Some(Var::Unset) => Val::Many(Vec::new(), *concatenate),
                _ => Val::Unknown,
            },
            P::VariableNames { .. } => Val::Unknown,
        };
        self.place_value(result, expr, source, quoted, vars_before, acc);
    }

    /// The operand of `${x:-word}`, `${x:=word}` or `${x:+word}` folded on its own (empty when absent).
    fn fold_optional_operand(&mut self, word: Option<&str>, quoted: bool) -> Acc {
        let mut sub = Acc::default();
        if let Some(d) = word {
            self.fold_operand(d, quoted, &mut sub);
        }
        sub
    }

    /// `${x:-word}` or `${x:=word}` whose variable is set or not only at run time.
    fn fold_unknown_default(
        &mut self,
        default_value: Option<&str>,
        target: Option<&str>,
        source: &str,
        quoted: bool,
        acc: &mut Acc,
    ) {
        // Set or not is only known at run time (the line does
        // not set it): the word is read with its default,
        // which is what bash uses when the environment does
        // not set it either (`${SHELL:-sh}`, `x=${x:-rm};
        // $x -rf ~/`), and stays marked as only known at run
        // time. For `:=`, that is also the value assigned.
        // Its substitutions run then, as commands of the
        // line; a subscript in it runs when the value is
        // evaluated as arithmetic later (`: ${x:='a[$(cmd)]'};
        // (( x ))`), so it is read as such here.
        let sub = self.fold_optional_operand(default_value, quoted);
        let w = sub.to_scalar();
        if holds_subscript_code(&w.text) {
            self.eval_arithmetic(&w, "arithmetic", 0);
        }
        let name = any_parameter_name(source).map(str::to_string);
        if let Some(n) = target {
            let mut v = w.clone();
            v.dynamic = true;
            v.vars.extend(name.clone());
            self.set_var(n, v);
        }
        acc.append(sub);
        acc.word.dynamic = true;
        if let Some(name) = name
            && !acc.word.vars.contains(&name)
        {
            acc.word.vars.push(name);
        }
    }

    /// `${x:-word}` or `${x:=word}` whose variable is missing: the default, assigned by `:=`.
    fn fold_missing_default(
        &mut self,
        default_value: Option<&str>,
        assign: bool,
        target: Option<&str>,
        quoted: bool,
        acc: &mut Acc,
    ) {
        let mut sub = self.fold_optional_operand(default_value, quoted);
        if assign {
            match target {
                Some(name) => {
                    let w = sub.to_scalar();
                    self.set_var(name, w);
                }
                None => sub.word.dynamic = true,
            }
        }
        acc.append(sub);
    }

    /// Writes the value an expansion folded to into `acc`: as its source
    /// text, marked as known only at run time, when the value is unknown;
    /// split and globbed when unquoted; array elements as separate words
    /// or joined, as bash places them. `vars_before` is how many variable
    /// names `acc` held before the expansion, so a length (`${#x}`) drops
    /// the ones it added.
    fn place_value(
        &mut self,
        result: Val,
        expr: &ParameterExpr,
        source: &str,
        quoted: bool,
        vars_before: usize,
        acc: &mut Acc,
    ) {
        match result {
            // `${#TOKEN}` is a number: the word holds no part of the value.
            Val::Unknown if matches!(expr, ParameterExpr::ParameterLength { .. }) => {
                acc.push(source, false, false);
                acc.word.dynamic = true;
                acc.word.vars.truncate(vars_before);
            }
            Val::Unknown => {
                acc.push(source, false, false);
                acc.word.dynamic = true;
                if let Some(name) = any_parameter_name(source)
                    && !acc.word.vars.iter().any(|v| v == name)
                {
                    acc.word.vars.push(name.to_string());
                }
            }
            Val::Unset => {}
            Val::One(s) => acc.push(&s, !quoted, !quoted),
            Val::Many(items, concatenate) => {
                if items.is_empty() {
                    acc.empty_many = true;
                }
                if quoted && concatenate {
                    // `"${arr[*]}"`: one word, joined by the first IFS character.
                    let sep = match self.ifs() {
                        Some(ifs) => ifs.chars().next().map(String::from).unwrap_or_default(),
                        None => {
                            acc.word.dynamic = true;
                            " ".to_string()
                        }
                    };
                    acc.push(&items.join(&sep), false, false);
                    return;
                }
                // Unquoted, the elements are joined by the first IFS
                // character, then split; with an empty IFS they stay apart.
                let ifs = self.ifs();
                let joiner = if quoted || acc.scalar {
                    None
                } else {
                    ifs.as_deref().and_then(|ifs| ifs.chars().next())
                };
                if let (false, Some(ifs), Some(joiner)) = (quoted, &ifs, joiner) {
                    let mut joined = items.join(&joiner.to_string());
                    // At the start of a word, white space and one other IFS
                    // character make no empty word here (as they would in
                    // `$v` holding the same text).
                    if !acc.segs.iter().any(|s| matches!(s, Seg::Char { .. })) {
                        let white = |c: char| matches!(c, ' ' | '\t' | '\n') && ifs.contains(c);
                        let rest = joined.trim_start_matches(white);
                        if rest.len() < joined.len()
                            && let Some(c) = rest.chars().next()
                            && ifs.contains(c)
                            && !white(c)
                        {
                            joined = rest[c.len_utf8()..].to_string();
                        }
                    }
                    acc.push(&joined, true, true);
                    return;
                }
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        match joiner {
                            Some(c) => acc.segs.push(Seg::Char {
                                c,
                                split: true,
                                glob: false,
                            }),
                            None => acc.segs.push(Seg::Break),
                        }
                    }
                    if quoted {
                        acc.segs.push(Seg::Null);
                    }
                    acc.push(item, !quoted, !quoted);
                }
            }
        }
    }

    /// Expands the word of `${a:-word}` or `${a:+word}` into `acc`. Inside
    /// double quotes, single quotes in it are kept as they are.
    fn fold_operand(&mut self, text: &str, quoted: bool, acc: &mut Acc) {
        if !quoted {
            // Unquoted, the word's own text is split too.
            let start = acc.segs.len();
            self.fold_text(text, false, acc);
            for seg in &mut acc.segs[start..] {
                if let Seg::Char { split, glob, .. } = seg
                    && *glob
                {
                    *split = true;
                }
            }
            return;
        }
        match crate::guarded(|| brush_parser::word::parse(text, &self.options)).and_then(Result::ok)
        {
            Some(pieces) => {
                for p in merge_text(&pieces) {
                    match &p.piece {
                        WordPiece::SingleQuotedText(t) => acc.push(&format!("'{t}'"), false, false),
                        piece => {
                            self.fold_piece(piece, text, p.start_index..p.end_index, true, acc)
                        }
                    }
                }
            }
            None => {
                acc.push(text, false, false);
                acc.word.dynamic = true;
            }
        }
    }

    /// Expands a pattern (`${a#pattern}`, `${a/pattern/...}`): each
    /// character says whether it was quoted. `None` when it is not known.
    fn pattern(&mut self, text: &str, acc: &mut Acc) -> Option<Vec<(Pat, bool)>> {
        let mut sub = Acc::default();
        self.fold_text(text, false, &mut sub);
        acc.add_feeds(&sub.word.feeds);
        acc.add_vars(&sub.word.vars);
        if sub.word.dynamic {
            return None;
        }
        compile_pattern(&sub.segs)
    }

    /// A constant arithmetic expression: an integer, maybe in parentheses,
    /// or a variable holding one.
    fn arithmetic(&self, text: &str) -> Option<i64> {
        let mut t = text.trim();
        while let Some(inner) = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
            t = inner.trim();
        }
        if let Some(n) = parse_integer(t) {
            return Some(n);
        }
        let name = t.strip_prefix('$').unwrap_or(t);
        match self.lookup(name) {
            Some(Var::Scalar(w)) if !w.dynamic => parse_integer(w.text.trim()),
            Some(Var::Unset) => Some(0),
            _ => None,
        }
    }
}

/// The parameter an expansion reads, and whether it is read indirectly
/// (`${!name}`).
fn parameter_of(expr: &ParameterExpr) -> Option<(&Parameter, bool)> {
    use ParameterExpr as P;
    match expr {
        P::Parameter {
            parameter,
            indirect,
        }
        | P::UseDefaultValues {
            parameter,
            indirect,
            ..
        }
        | P::AssignDefaultValues {
            parameter,
            indirect,
            ..
        }
        | P::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            ..
        }
        | P::UseAlternativeValue {
            parameter,
            indirect,
            ..
        }
        | P::ParameterLength {
            parameter,
            indirect,
        }
        | P::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            ..
        }
        | P::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            ..
        }
        | P::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            ..
        }
        | P::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            ..
        }
        | P::Substring {
            parameter,
            indirect,
            ..
        }
        | P::Transform {
            parameter,
            indirect,
            ..
        }
        | P::UppercaseFirstChar {
            parameter,
            indirect,
            ..
        }
        | P::UppercasePattern {
            parameter,
            indirect,
            ..
        }
        | P::LowercaseFirstChar {
            parameter,
            indirect,
            ..
        }
        | P::LowercasePattern {
            parameter,
            indirect,
            ..
        }
        | P::ReplaceSubstring {
            parameter,
            indirect,
            ..
        } => Some((parameter, *indirect)),
        P::VariableNames { .. } | P::MemberKeys { .. } => None,
    }
}

/// Joins neighbouring text pieces: brush splits `${a~~}`, which it does
/// not read as an expansion, into `$` and `{a~~}`.
fn merge_text(pieces: &[WordPieceWithSource]) -> Vec<WordPieceWithSource> {
    let mut out: Vec<WordPieceWithSource> = Vec::with_capacity(pieces.len());
    for p in pieces {
        if let (Some(last), WordPiece::Text(t)) = (out.last_mut(), &p.piece)
            && let WordPiece::Text(prev) = &mut last.piece
            && last.end_index == p.start_index
        {
            prev.push_str(t);
            last.end_index = p.end_index;
            continue;
        }
        out.push(p.clone());
    }
    out
}

/// The length of the text up to the `]` that closes a `$[` (all of it when
/// none does).
fn bracket_end(text: &str) -> usize {
    let mut depth = 1usize;
    for (k, c) in text.bytes().enumerate() {
        match c {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The default value of `IFS`, which bash sets at startup.
pub(crate) const DEFAULT_IFS: &str = " \t\n";

/// The name of the variable that says how to split words.
pub(crate) const IFS: &str = "IFS";

/// Whether a parameter expansion gives one word per element (`${arr[@]}`).
fn expands_all(expr: &ParameterExpr) -> bool {
    matches!(
        expr,
        ParameterExpr::Parameter {
            parameter: Parameter::NamedWithAllIndices {
                concatenate: false,
                ..
            },
            ..
        }
    )
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// A decimal integer, maybe signed.
fn parse_integer(text: &str) -> Option<i64> {
    let t = text.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) || digits.len() > 15 {
        return None;
    }
    t.parse().ok()
}

/// `${x:offset:length}` of a value: characters of a string, elements of an
/// array. Unknown where bash reports an error (an end before the start),
/// and known to be empty for a zero length even of an unknown value.
fn substring(value: Val, offset: i64, length: Option<i64>) -> Val {
    match value {
        Val::One(s) => {
            let chars: Vec<char> = s.chars().collect();
            match slice(chars.len(), offset, length) {
                Some(r) => Val::One(chars[r].iter().collect()),
                None => Val::Unknown,
            }
        }
        Val::Many(items, c) => match slice(items.len(), offset, length) {
            Some(r) => Val::Many(items[r].to_vec(), c),
            None => Val::Unknown,
        },
        Val::Unset => Val::Unset,
        // `${PATH:0:0}`: no characters of whatever value.
        Val::Unknown if length == Some(0) => Val::One(String::new()),
        Val::Unknown => Val::Unknown,
    }
}

/// `${x:offset:length}` as a range of `len` items; `None` where bash
/// reports an error.
fn slice(len: usize, offset: i64, length: Option<i64>) -> Option<Range<usize>> {
    let len = len as i64;
    let start = if offset < 0 { len + offset } else { offset };
    if start < 0 || start > len {
        return Some(0..0);
    }
    let end = match length {
        None => len,
        Some(l) if l < 0 => len + l,
        Some(l) => start.saturating_add(l).min(len),
    };
    if end < start {
        return None;
    }
    Some(start as usize..end as usize)
}

/// The value of a parameter.
#[derive(Debug, Clone)]
enum Val {
    /// Not known.
    Unknown,
    /// Known to be unset.
    Unset,
    /// One string.
    One(String),
    /// The elements of an array (`${arr[@]}`; `*` when `true`).
    Many(Vec<String>, bool),
}

impl Val {
    /// Whether `${x:-...}` (or `${x-...}`) takes the default. `None` when
    /// it is not known.
    fn is_missing(&self, test: &brush_parser::word::ParameterTestType) -> Option<bool> {
        use brush_parser::word::ParameterTestType as T;
        match self {
            Val::Unknown => None,
            Val::Unset => Some(true),
            Val::One(s) => Some(s.is_empty() && matches!(test, T::UnsetOrNull)),
            Val::Many(items, _) => Some(
                items.is_empty()
                    || (matches!(test, T::UnsetOrNull) && items.iter().all(|s| s.is_empty())),
            ),
        }
    }

    fn map(self, f: impl Fn(&str) -> String) -> Val {
        match self {
            Val::One(s) => Val::One(f(&s)),
            Val::Many(items, c) => Val::Many(items.iter().map(|s| f(s)).collect(), c),
            other => other,
        }
    }
}

/// Where the walker keeps the positional parameters (`$1`, `"$@"`), as
/// an array under a name no shell variable can have.
pub(crate) const POSITIONAL: &str = "@";

/// Where the walker keeps `$0` of a `sh -c SCRIPT NAME ARGS…` script.
pub(crate) const SCRIPT_NAME: &str = "0";

/// A variable's value.
#[derive(Debug, Clone)]
pub(crate) enum Var {
    /// A string (maybe only partly known).
    Scalar(Word),
    /// An indexed array.
    Array(Vec<Word>),
    /// Known to be unset (`unset NAME`).
    Unset,
}

/// One character of an expanded word, or a mark between them.
#[derive(Debug, Clone, Copy)]
enum Seg {
    /// A character. `split`: it came from an unquoted expansion, so `IFS`
    /// characters split the word there. `glob`: it was not quoted, so
    /// `*`, `?` and `[` are pattern characters.
    Char { c: char, split: bool, glob: bool },
    /// A quoted part: the word stays even when it is empty.
    Null,
    /// Between elements of `${arr[@]}`: a word ends here.
    Break,
}

/// A word with nothing bash would expand, quote-remove, split or glob
/// (`status`, `--release`, `src/main.rs`, `KEY=value`): its text is its
/// value. Most words are like this; they skip the word parser.
fn is_plain(raw: &str) -> bool {
    !raw.is_empty()
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,+%@^".contains(&b))
}

/// A word being expanded.
#[derive(Debug, Default)]
struct Acc {
    segs: Vec<Seg>,
    /// Flags of the word; its text is built from `segs`.
    word: Word,
    /// A word that is not split (an assignment's value): `${arr[@]}`
    /// joins its elements with spaces.
    scalar: bool,
    /// A `${arr[@]}` of an empty array is in the word: bash then
    /// drops empty words split off elsewhere in it, by rules not followed
    /// here.
    empty_many: bool,
}

impl Acc {
    fn push(&mut self, text: &str, split: bool, glob: bool) {
        self.segs
            .extend(text.chars().map(|c| Seg::Char { c, split, glob }));
    }

    fn push_word(&mut self, w: &Word) {
        self.push(&w.text, false, false);
        self.absorb(w);
    }

    fn absorb(&mut self, w: &Word) {
        self.word.dynamic |= w.dynamic;
        self.add_feeds(&w.feeds);
        self.add_vars(&w.vars);
    }

    /// Adds links to commands, once each (`x=$x$x` would double them).
    fn add_feeds(&mut self, feeds: &[usize]) {
        for f in feeds {
            if !self.word.feeds.contains(f) {
                self.word.feeds.push(*f);
            }
        }
    }

    /// Adds variable names, once each.
    fn add_vars(&mut self, vars: &[String]) {
        for v in vars {
            if !self.word.vars.contains(v) {
                self.word.vars.push(v.clone());
            }
        }
    }

    /// The text of a variable's value when it is known; its flags go to
    /// this word either way.
    fn known(&mut self, w: &Word) -> Option<String> {
        self.add_feeds(&w.feeds);
        if w.dynamic {
            self.add_vars(&w.vars);
            None
        } else {
            Some(w.text.clone())
        }
    }

    fn append(&mut self, other: Acc) {
        self.segs.extend(other.segs);
        self.absorb(&other.word);
    }

    /// The word without splitting.
    fn scalar(self) -> Word {
        self.to_scalar()
    }

    fn to_scalar(&self) -> Word {
        let mut glob = false;
        let text: String = self
            .segs
            .iter()
            .filter_map(|s| match *s {
                Seg::Char { c, glob: g, .. } => {
                    glob |= g && matches!(c, '*' | '?' | '[');
                    Some(c)
                }
                Seg::Break => Some(' '),
                Seg::Null => None,
            })
            .collect();
        Word {
            text,
            glob,
            ..self.word.clone()
        }
    }
}

/// Field splitting: unquoted expansion results split on `IFS` characters.
/// A run of `IFS` white space, or one other `IFS` character with the white
/// space around it, ends a field; white space alone makes no empty field.
/// Fields with nothing and no quotes are dropped. Returns each field and
/// whether it has unquoted glob characters.
fn split_segs(segs: &[Seg], ifs: &str) -> Vec<(String, bool)> {
    let is_ifs = |c: char| ifs.contains(c);
    let is_white = |c: char| matches!(c, ' ' | '\t' | '\n') && ifs.contains(c);
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut glob = false;
    let mut i = 0;
    while i < segs.len() {
        match segs[i] {
            Seg::Null => {
                has = true;
                i += 1;
            }
            Seg::Break => {
                if has {
                    fields.push((std::mem::take(&mut cur), glob));
                    has = false;
                    glob = false;
                }
                i += 1;
            }
            Seg::Char { c, split: true, .. } if is_ifs(c) => {
                let white = |s: Option<&Seg>| matches!(s, Some(Seg::Char { c, split: true, .. }) if is_white(*c));
                while white(segs.get(i)) {
                    i += 1;
                }
                let mut hard = false;
                if let Some(Seg::Char { c, split: true, .. }) = segs.get(i)
                    && is_ifs(*c)
                    && !is_white(*c)
                {
                    hard = true;
                    i += 1;
                    while white(segs.get(i)) {
                        i += 1;
                    }
                }
                if hard || has {
                    fields.push((std::mem::take(&mut cur), glob));
                    has = false;
                    glob = false;
                }
            }
            Seg::Char { c, glob: g, .. } => {
                cur.push(c);
                has = true;
                glob |= g && matches!(c, '*' | '?' | '[');
                i += 1;
            }
        }
    }
    if has {
        fields.push((cur, glob));
    }
    fields
}

/// One element of a compiled glob pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pat {
    /// A character matching itself.
    Lit(char),
    /// `?`
    One,
    /// `*`
    Any,
    /// `[...]`: ranges, and whether it is negated.
    Class(Vec<(char, char)>, bool),
}

/// Compiles expanded pattern text; the flag on each element says whether
/// it was written unquoted (kept for `&` in replacements). `None` for what
/// this matcher does not handle (character classes like `[[:alpha:]]`).
fn compile_pattern(segs: &[Seg]) -> Option<Vec<(Pat, bool)>> {
    let chars: Vec<(char, bool)> = segs
        .iter()
        .filter_map(|s| match *s {
            Seg::Char { c, split, glob } => Some((c, glob || split)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (c, active) = chars[i];
        i += 1;
        if !active {
            out.push((Pat::Lit(c), false));
            continue;
        }
        match c {
            '*' => out.push((Pat::Any, true)),
            '?' => out.push((Pat::One, true)),
            '\\' => {
                // An escape the parser left in (pattern text is unquoted).
                if let Some(&(n, _)) = chars.get(i) {
                    out.push((Pat::Lit(n), false));
                    i += 1;
                } else {
                    out.push((Pat::Lit('\\'), true));
                }
            }
            '[' => {
                let mut j = i;
                let negated = matches!(chars.get(j), Some(('!' | '^', true)));
                if negated {
                    j += 1;
                }
                let mut ranges = Vec::new();
                let mut first = true;
                let mut closed = false;
                while j < chars.len() {
                    let (ch, _) = chars[j];
                    if ch == ']' && !first {
                        closed = true;
                        j += 1;
                        break;
                    }
                    if ch == '[' && matches!(chars.get(j + 1), Some((':' | '=' | '.', _))) {
                        return None;
                    }
                    first = false;
                    if matches!(chars.get(j + 1), Some(('-', _)))
                        && let Some(&(hi, _)) = chars.get(j + 2)
                        && hi != ']'
                    {
                        ranges.push((ch, hi));
                        j += 3;
                    } else {
                        ranges.push((ch, ch));
                        j += 1;
                    }
                }
                if closed {
                    out.push((Pat::Class(ranges, negated), true));
                    i = j;
                } else {
                    out.push((Pat::Lit('['), true));
                }
            }
            _ => out.push((Pat::Lit(c), true)),
        }
    }
    Some(out)
}

/// Whether the whole of `text` matches `pat`.
fn glob_match(pat: &[(Pat, bool)], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pat.get(p).map(|x| &x.0) {
            Some(Pat::Any) => {
                star = Some((p, t));
                p += 1;
                continue;
            }
            Some(Pat::One) => {
                p += 1;
                t += 1;
                continue;
            }
            Some(Pat::Lit(c)) if *c == text[t] => {
                p += 1;
                t += 1;
                continue;
            }
            Some(Pat::Class(ranges, negated))
                if ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&text[t])) != *negated =>
            {
                p += 1;
                t += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, st)) => {
                p = sp + 1;
                t = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    pat[p.min(pat.len())..].iter().all(|x| x.0 == Pat::Any)
}

/// `${a#p}`, `${a##p}`, `${a%p}`, `${a%%p}`.
fn remove_pattern(s: &str, pat: &[(Pat, bool)], prefix: bool, largest: bool) -> String {
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len();
    let lens: Vec<usize> = if largest {
        (0..=n).rev().collect()
    } else {
        (0..=n).collect()
    };
    for len in lens {
        let (part, rest) = if prefix {
            (&chars[..len], &chars[len..])
        } else {
            (&chars[n - len..], &chars[..n - len])
        };
        if glob_match(pat, part) {
            return rest.iter().collect();
        }
    }
    s.to_string()
}

/// `${a/p/r}` and its kinds. An unquoted `&` in the replacement stands for
/// the matched text (bash 5.2's `patsub_replacement`).
fn replace_pattern(
    s: &str,
    pat: &[(Pat, bool)],
    rep: &[(Pat, bool)],
    kind: &brush_parser::word::SubstringMatchKind,
) -> String {
    use brush_parser::word::SubstringMatchKind as K;
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len();
    if pat.is_empty() {
        return s.to_string();
    }
    let render = |matched: &[char]| -> String {
        let mut out = String::new();
        for (p, active) in rep {
            match p {
                Pat::Lit('&') if *active => out.extend(matched.iter()),
                Pat::Lit(c) => out.push(*c),
                Pat::Any => out.push('*'),
                Pat::One => out.push('?'),
                Pat::Class(..) => out.push('['),
            }
        }
        out
    };
    // Rebuild a class literally: its text is kept as written.
    let render = |matched: &[char]| -> String {
        if rep.iter().any(|(p, _)| matches!(p, Pat::Class(..))) {
            return String::new();
        }
        render(matched)
    };
    match kind {
        K::Prefix => {
            for len in (0..=n).rev() {
                if glob_match(pat, &chars[..len]) {
                    let rest: String = chars[len..].iter().collect();
                    return render(&chars[..len]) + &rest;
                }
            }
            s.to_string()
        }
        K::Suffix => {
            for start in 0..=n {
                if glob_match(pat, &chars[start..]) {
                    let head: String = chars[..start].iter().collect();
                    return head + &render(&chars[start..]);
                }
            }
            s.to_string()
        }
        K::FirstOccurrence | K::Anywhere => {
            let mut out = String::new();
            let mut i = 0;
            let mut replaced = false;
            while i <= n {
                if replaced && matches!(kind, K::FirstOccurrence) {
                    break;
                }
                let found = (i..=n).rev().find(|&end| glob_match(pat, &chars[i..end]));
                match found {
                    Some(end) if end > i || i < n => {
                        out.push_str(&render(&chars[i..end]));
                        replaced = true;
                        if end > i {
                            i = end;
                        } else {
                            out.push(chars[i]);
                            i += 1;
                        }
                    }
                    _ => {
                        if i < n {
                            out.push(chars[i]);
                        }
                        i += 1;
                    }
                }
            }
            if i < n {
                out.extend(chars[i..].iter());
            }
            out
        }
    }
}

/// `${a^}`, `${a^^}`, `${a,}`, `${a,,}` with an optional pattern each
/// character must match.
fn change_case(s: &str, pat: &[(Pat, bool)], upper: bool, all: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        if (all || i == 0) && glob_match(pat, &[c]) {
            out.push(one_case(c, upper));
        } else {
            out.push(c);
        }
    }
    out
}

/// A character in the other case, when that is one character (bash maps
/// characters one to one: `ß` stays `ß`).
fn one_case(c: char, upper: bool) -> char {
    let mut mapped = if upper {
        c.to_uppercase().collect::<Vec<_>>()
    } else {
        c.to_lowercase().collect::<Vec<_>>()
    };
    if mapped.len() == 1 {
        mapped.remove(0)
    } else {
        c
    }
}

fn change_first(s: &str, upper: bool) -> String {
    change_case(s, &[(Pat::Any, true)], upper, false)
}

/// Whether a variable's value is a default reading (`${x:-rm}` with `x` not
/// set on the line): only known at run time, yet spelled out whole, with
/// no substitution or variable left in it.
fn is_default_reading(w: &Word) -> bool {
    w.dynamic
        && w.feeds.is_empty()
        && !w.vars.is_empty()
        && !w.text.contains(['$', '`'])
        && w.text.len() < 4096
}

/// The variable a complex expansion like `${X:-y}` or `${#X}` reads.
fn any_parameter_name(src: &str) -> Option<&str> {
    let body = src.strip_prefix('$')?;
    let body = body.strip_prefix('{').unwrap_or(body);
    let body = body.trim_start_matches(['#', '!']);
    let end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let name = &body[..end];
    (!name.is_empty()).then_some(name)
}

/// What `echo ARGS` prints: `-n`, `-e` and `-E` are read as bash does.
fn echo_output(args: &[&str]) -> Option<String> {
    let mut escapes = false;
    let mut newline = true;
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        let Some(flags) = first.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in flags.chars() {
            match c {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        rest = tail;
    }
    let text = rest.join(" ");
    if !escapes {
        return Some(if newline { text + "\n" } else { text });
    }
    let (mut out, stopped) = decode_echo(&text);
    if newline && !stopped {
        out.push('\n');
    }
    Some(out)
}

/// Escapes of `echo -e` and `printf %b`: like `$'...'`, but octal is
/// `\0nnn` and `\c` ends the output. Returns the text and whether `\c`
/// stopped it.
fn decode_echo(s: &str) -> (String, bool) {
    let mut out = String::new();
    let mut rest = s;
    while let Some(pos) = rest.find('\\') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let mut chars = after.chars();
        match chars.next() {
            Some('c') => return (out, true),
            Some('0') => {
                let digits: String = after[1..]
                    .chars()
                    .take(3)
                    .take_while(|c| ('0'..='7').contains(c))
                    .collect();
                let v = u32::from_str_radix(&digits, 8).unwrap_or(0) & 0xff;
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                rest = &after[1 + digits.len()..];
            }
            Some(d @ '1'..='7') => {
                out.push('\\');
                out.push(d);
                rest = &after[1..];
            }
            Some(q @ ('\'' | '"' | '?')) => {
                out.push('\\');
                out.push(q);
                rest = &after[1..];
            }
            Some(_) => {
                // The other escapes read as in `$'...'`.
                let len = escape_len(after);
                out.push_str(&decode_ansi_c(&rest[pos..pos + 1 + len]));
                rest = &after[len..];
            }
            None => {
                out.push('\\');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    (out, false)
}

/// The length of the escape after a backslash (`x41` is 3, `n` is 1).
fn escape_len(after: &str) -> usize {
    let mut chars = after.chars();
    let Some(first) = chars.next() else { return 0 };
    let max = match first {
        'x' => 2,
        'u' => 4,
        'U' => 8,
        _ => return first.len_utf8(),
    };
    1 + chars
        .take(max)
        .take_while(|c| c.is_ascii_hexdigit())
        .count()
}

/// What `printf FORMAT ARGS` prints, for the conversions `%s`, `%b`, `%c`,
/// `%d`, `%i` and `%%` without flags or widths; `None` for anything else.
fn printf_output(args: &[&str]) -> Option<String> {
    let (format, mut rest) = args.split_first()?;
    if format.starts_with('-') {
        return None;
    }
    let format = decode_ansi_c(format);
    let mut out = String::new();
    loop {
        let mut consumed = false;
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let conv = chars.next()?;
            if conv == '%' {
                out.push('%');
                continue;
            }
            let arg = rest.first().copied();
            if arg.is_some() {
                rest = &rest[1..];
                consumed = true;
            }
            let arg = arg.unwrap_or("");
            match conv {
                's' => out.push_str(arg),
                'b' => {
                    let (text, stopped) = decode_echo(arg);
                    out.push_str(&text);
                    if stopped {
                        return Some(out);
                    }
                }
                'c' => out.extend(arg.chars().next()),
                'd' | 'i' => {
                    let n = if arg.is_empty() {
                        0
                    } else {
                        parse_integer(arg)?
                    };
                    out.push_str(&n.to_string());
                }
                _ => return None,
            }
        }
        if !consumed || rest.is_empty() {
            return Some(out);
        }
    }
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

/// Brace expansion: `{curl,-s,URL}` gives three words, `a{b,c}d` two.
pub(crate) fn expand_braces(raw: &str) -> Vec<String> {
    if !(raw.contains('{') && (raw.contains(',') || raw.contains(".."))) {
        return vec![raw.to_string()];
    }
    let options = brush_parser::ParserOptions::default();
    match crate::guarded(|| brush_parser::word::parse_brace_expansions(raw, &options)) {
        Some(Ok(Some(parts))) => {
            // brush gives the numbers of `{01..10}`, not their width.
            let mut widths = sequence_widths(raw);
            if widths.len() != parts.iter().map(count_sequences).sum::<usize>() {
                widths = Vec::new();
            }
            let mut widths = widths.into_iter();
            let mut out = vec![String::new()];
            for part in &parts {
                out = product(&out, &expand_brace_part(part, &mut widths));
                if out.len() > MAX_BRACE_WORDS {
                    out.truncate(MAX_BRACE_WORDS);
                }
            }
            out
        }
        _ => vec![raw.to_string()],
    }
}

fn expand_brace_part(
    part: &BraceExpressionOrText,
    widths: &mut std::vec::IntoIter<usize>,
) -> Vec<String> {
    match part {
        BraceExpressionOrText::Text(t) => vec![t.clone()],
        BraceExpressionOrText::Expr(members) => {
            let mut out = Vec::new();
            for m in members {
                match m {
                    BraceExpressionMember::Child(children) => {
                        let mut acc = vec![String::new()];
                        for c in children {
                            acc = product(&acc, &expand_brace_part(c, widths));
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
                        let width = widths.next().unwrap_or(0);
                        out.extend(
                            sequence(*start, *end, *increment).map(|n| pad_number(n, width)),
                        );
                    }
                    BraceExpressionMember::CharSequence {
                        start,
                        end,
                        increment,
                    } => {
                        out.extend(
                            sequence(*start as i64, *end as i64, *increment)
                                .filter_map(|n| char::from_u32(n as u32))
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

/// `{start..end..step}`, from `start` towards `end`.
fn sequence(start: i64, end: i64, step: i64) -> impl Iterator<Item = i64> {
    let step = step.unsigned_abs().max(1) as i64;
    let down = start > end;
    let mut next = Some(start);
    std::iter::from_fn(move || {
        let n = next?;
        let after = if down { n - step } else { n + step };
        next = if (down && after >= end) || (!down && after <= end) {
            Some(after)
        } else {
            None
        };
        Some(n)
    })
    .take(MAX_BRACE_WORDS)
}

fn pad_number(n: i64, width: usize) -> String {
    if n < 0 {
        format!("-{:0>w$}", n.unsigned_abs(), w = width.saturating_sub(1))
    } else {
        format!("{n:0>width$}")
    }
}

fn count_sequences(part: &BraceExpressionOrText) -> usize {
    match part {
        BraceExpressionOrText::Text(_) => 0,
        BraceExpressionOrText::Expr(members) => members
            .iter()
            .map(|m| match m {
                BraceExpressionMember::Child(c) => c.iter().map(count_sequences).sum(),
                BraceExpressionMember::NumberSequence { .. } => 1,
                BraceExpressionMember::CharSequence { .. } => 0,
            })
            .sum(),
    }
}

/// The zero-padded width of each `{a..b}` number sequence in `raw`, in
/// order (0 when not padded).
fn sequence_widths(raw: &str) -> Vec<usize> {
    let b = raw.as_bytes();
    let mut out = Vec::new();
    let number = |i: usize| -> usize {
        let mut j = i;
        if matches!(b.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        let d = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == d { 0 } else { j - i }
    };
    for i in 0..b.len() {
        if b[i] != b'{' {
            continue;
        }
        let a = number(i + 1);
        if a == 0 || b.get(i + 1 + a..i + 3 + a) != Some(b"..") {
            continue;
        }
        let e = number(i + 3 + a);
        if e == 0 {
            continue;
        }
        let mut j = i + 3 + a + e;
        if b.get(j..j + 2) == Some(b"..") {
            let s = number(j + 2);
            if s == 0 {
                continue;
            }
            j += 2 + s;
        }
        if b.get(j) != Some(&b'}') {
            continue;
        }
        let first = &raw[i + 1..i + 1 + a];
        let last = &raw[i + 3 + a..i + 3 + a + e];
        let padded = |t: &str| {
            let d = t.trim_start_matches(['-', '+']);
            d.len() > 1 && d.starts_with('0')
        };
        out.push(if padded(first) || padded(last) {
            first.len().max(last.len())
        } else {
            0
        });
    }
    out
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
                // Control characters: `\c?` is DEL, `\ca` and `\cA` are 1.
                let c = chars[i];
                i += 1;
                if c == '\\' && chars.get(i) == Some(&'\\') {
                    i += 1;
                }
                let code = if c == '?' {
                    0x7f
                } else {
                    (c.to_ascii_uppercase() as u32) & 0x1f
                };
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    // bash's strings end at a NUL.
    if let Some(pos) = out.find('\0') {
        out.truncate(pos);
    }
    out
}

/// Whether a value holds a subscript with a substitution in it
/// (`a[$(cmd)]`, `` a[`cmd`] ``): code, once bash evaluates the value as
/// arithmetic.
fn holds_subscript_code(text: &str) -> bool {
    text.split('[')
        .skip(1)
        .any(|after| after.contains("$(") || after.contains('`') || after.contains("${"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substring_takes_characters_or_elements() {
        let one = |v: Val| match v {
            Val::One(s) => Some(s),
            _ => None,
        };
        assert_eq!(
            one(substring(Val::One("curl".into()), 1, Some(2))).as_deref(),
            Some("ur")
        );
        assert_eq!(
            one(substring(Val::One("curl".into()), -2, None)).as_deref(),
            Some("rl")
        );
        assert_eq!(
            one(substring(Val::Unknown, 3, Some(0))).as_deref(),
            Some("")
        );
        assert!(matches!(substring(Val::Unknown, 0, Some(1)), Val::Unknown));
        assert!(matches!(substring(Val::Unset, 0, Some(1)), Val::Unset));
        match substring(
            Val::Many(vec!["a".into(), "b".into(), "c".into()], false),
            1,
            None,
        ) {
            Val::Many(items, false) => assert_eq!(items, ["b", "c"]),
            other => panic!("{other:?}"),
        }
    }

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
