//! Walks the bash syntax tree and lists every simple command, with the input
//! each one reads and the variables assigned before it.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use brush_parser::ast;

use crate::evaluated::PROMPT_VARIABLES;
use crate::model::{
    Analysis, Assignment, Command, Input, Problem, ProblemKind, Redirect, RedirectKind, Word,
};
use crate::words::{DEFAULT_IFS, IFS, Var};
use crate::wrappers::{self, Inner};
use crate::{MAX_COMMANDS, MAX_DEPTH};

/// The analyzer's state while it walks one line.
pub(crate) struct Walker {
    pub(crate) out: Analysis,
    pub(crate) options: brush_parser::ParserOptions,
    /// Variables with literal values, innermost scope last.
    scopes: Vec<HashMap<String, Var>>,
    /// Wrappers and nested shells around what is being walked now.
    via: Vec<String>,
    depth: u32,
    privileged: bool,
    stopped: bool,
    /// Whether a `for` loop is being unrolled now.
    unrolling: bool,
    /// While text bash evaluates as code is expanded, the label its
    /// command substitutions get: they are hidden code.
    pub(crate) hidden: Option<String>,
    /// While text bash evaluates is expanded: an unknown substitution's
    /// output is spelled `0` (a neutral operand), not as written, so that
    /// what it was written with is not evaluated a second time.
    pub(crate) masking: bool,
    /// Names and subscripts evaluated as arithmetic so far (a bound).
    pub(crate) eval_steps: u32,
    /// Variables whose unknown value came from commands of the line (their
    /// output, or input they read): `read n`, or `n=$(cat f)` in a branch.
    pub(crate) tainted: HashMap<String, Vec<usize>>,
    /// Positional parameters (`$1`, `$@`) evaluated as code: their values
    /// are a function's or a script's arguments. Kept until the end of
    /// the line, and recorded only if a word of the line could carry code.
    pub(crate) positional: Vec<crate::model::Evaluated>,
    /// Whether a word of the line is literal text with a substitution in it
    /// (`'a[$(cmd)]'`): data that, given as an argument, can hide code.
    pub(crate) literal_code: bool,
    /// References made with `declare -n NAME=TARGET`: the target, when it
    /// is given (`None` until the first assignment names it).
    pub(crate) refs: HashMap<String, Option<Word>>,
    /// Names bound to a path by `hash -p PATH NAME` (or
    /// `BASH_CMDS[NAME]=PATH`): running NAME runs PATH.
    hashed: HashMap<String, Word>,
    /// Aliases the line defines (`alias ll='ls -la'`): a later `ll src`
    /// runs `ls -la src` where the shell expands aliases.
    aliases: HashMap<String, String>,
    /// git aliases the line defines (`git config alias.p 'push -f'`),
    /// by lowercase name: a later `git p` runs `git push -f`.
    pub(crate) git_aliases: HashMap<String, String>,
    /// Links the line made with `ln` (name, what it points to): later
    /// paths through them are read as the paths they land on.
    pub(crate) links: Vec<(String, String)>,
    /// Programs copied on the line (copy, original): running the copy
    /// runs the original.
    pub(crate) copies: Vec<(String, String)>,
    /// Variables with the integer attribute (`declare -i`): a value
    /// assigned to them is evaluated as arithmetic.
    pub(crate) integers: HashSet<String>,
    /// Functions the line defines, by name: a call runs the body with
    /// the call's arguments as `$1`, `"$@"`.
    functions: HashMap<String, ast::FunctionBody>,
    /// Functions whose body is being walked for a call now (a function
    /// calling itself is not followed again), and how many calls were.
    calling: Vec<String>,
    calls_followed: usize,
}

/// Variables that name a directory under the home by default, and that
/// directory: a line's use of one is read as that place wherever it goes
/// (`d=$XDG_STATE_HOME; echo x >> "$d/..."`, `${AQ_SESSION_DIR%/}`), as
/// `$HOME` is read as `~`. The session's own directory is among them: its
/// log and approvals are aq's.
pub const HOME_DIR_VARS: &[(&str, &str)] = &[
    ("XDG_CONFIG_HOME", "~/.config"),
    ("XDG_STATE_HOME", "~/.local/state"),
    ("XDG_DATA_HOME", "~/.local/share"),
    ("XDG_CACHE_HOME", "~/.cache"),
    ("CLAUDE_CONFIG_DIR", "~/.claude"),
    ("CODEX_HOME", "~/.codex"),
    // zsh reads its startup files from `$ZDOTDIR`; most who set it use
    // this directory (and a file there is a startup file wherever it is).
    ("ZDOTDIR", "~/.config/zsh"),
    (
        "AQ_SESSION_DIR",
        "~/.local/state/agent-quarantine/sessions/this",
    ),
];

/// Most calls of the line's functions whose bodies are walked again with
/// their arguments.
const MAX_CALLS_FOLLOWED: usize = 16;

/// Most elements of an array followed literally.
const MAX_ARRAY_ITEMS: usize = 256;

/// Longest variable value followed literally.
const MAX_VALUE_BYTES: usize = 4096;

impl Walker {
    pub(crate) fn new() -> Self {
        let mut globals = HashMap::new();
        globals.insert("HOME".to_string(), Var::Scalar(Word::literal("~")));
        // bash sets IFS at startup, whatever the environment says.
        globals.insert(IFS.to_string(), Var::Scalar(Word::literal(DEFAULT_IFS)));
        Walker {
            out: Analysis::default(),
            options: brush_parser::ParserOptions::default(),
            scopes: vec![globals],
            via: Vec::new(),
            depth: 0,
            privileged: false,
            stopped: false,
            unrolling: false,
            hidden: None,
            masking: false,
            eval_steps: 0,
            tainted: HashMap::new(),
            positional: Vec::new(),
            literal_code: false,
            refs: HashMap::new(),
            hashed: HashMap::new(),
            aliases: HashMap::new(),
            git_aliases: HashMap::new(),
            links: Vec::new(),
            copies: Vec::new(),
            integers: HashSet::new(),
            functions: HashMap::new(),
            calling: Vec::new(),
            calls_followed: 0,
        }
    }

    pub(crate) fn problem(&mut self, kind: ProblemKind, detail: impl Into<String>) {
        let detail = detail.into();
        if !self
            .out
            .problems
            .iter()
            .any(|p| p.kind == kind && p.detail == detail)
        {
            self.out.problems.push(Problem { kind, detail });
        }
    }

    /// A variable's value; `None` when nothing is known of it (it may come
    /// from the environment).
    /// A variable's value: as the line set it, else a home directory
    /// variable's default ([`HOME_DIR_VARS`], built once rather than put in
    /// every walker's globals).
    pub(crate) fn lookup(&self, name: &str) -> Option<Var> {
        static HOME_DIRS: std::sync::LazyLock<HashMap<&str, Var>> =
            std::sync::LazyLock::new(|| {
                HOME_DIR_VARS
                    .iter()
                    .map(|(name, dir)| (*name, Var::Scalar(Word::literal(*dir))))
                    .collect()
            });
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name))
            .or_else(|| HOME_DIRS.get(name))
            .cloned()
    }

    pub(crate) fn set_var(&mut self, name: &str, value: Word) {
        self.set(name, Var::Scalar(capped(value)));
    }

    fn set(&mut self, name: &str, value: Var) {
        let value = match value {
            Var::Scalar(w) => Var::Scalar(capped(w)),
            // An array built by doubling grows without bound too.
            Var::Array(items)
                if items.len() > MAX_ARRAY_ITEMS
                    || items.iter().map(|w| w.text.len()).sum::<usize>() > MAX_VALUE_BYTES =>
            {
                self.forget(name);
                return;
            }
            other => other,
        };
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), value);
        }
    }

    /// Says a variable holds something not known from here on.
    fn forget(&mut self, name: &str) {
        let mut w = Word::literal(format!("${name}"));
        w.dynamic = true;
        w.vars.push(name.to_string());
        self.set(name, Var::Scalar(w));
    }

    /// Says a variable holds something not known from here on, which
    /// comes from the output (or the input) of commands `sources`: kept
    /// for what bash evaluates ([`Self::tainted`]), not as links of words.
    fn forget_from(&mut self, name: &str, sources: &[usize]) {
        self.forget(name);
        if !sources.is_empty() && self.tainted.len() < 256 {
            self.tainted.insert(name.to_string(), sources.to_vec());
        }
    }

    /// Walks something that may or may not run (a branch, the right side
    /// of `&&`, a function body, `eval`): what it assigns is not known after
    /// it, but where it came from is kept.
    fn maybe<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        self.scopes.push(HashMap::new());
        let out = f(self);
        let assigned = self.scopes.pop().unwrap_or_default();
        for (name, value) in assigned {
            let sources: Vec<usize> = match value {
                Var::Scalar(w) => w.feeds,
                Var::Array(items) => items.into_iter().flat_map(|w| w.feeds).collect(),
                Var::Unset => Vec::new(),
            };
            self.forget_from(&name, &sources);
        }
        out
    }

    /// Walks something that runs in a subshell: what it assigns is gone
    /// after it.
    fn subshell<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        self.scopes.push(HashMap::new());
        let out = f(self);
        self.scopes.pop();
        out
    }

    /// Parses `script` as a nested shell program (a `-c` string, `eval`, a
    /// substitution, a here-document fed to a shell) and walks it. Returns the
    /// range of commands it added.
    pub(crate) fn walk_nested_script(
        &mut self,
        script: &str,
        label: &str,
        stdin: &[Input],
    ) -> Range<usize> {
        // A substitution runs in a subshell; `eval`, `source` and the like
        // may change the shell's own variables.
        let subshell = matches!(label, "$(...)" | "`...`");
        self.walk_nested(script, label, stdin, subshell)
    }

    /// [`Self::walk_nested_script`], saying whether the script runs in a
    /// subshell.
    pub(crate) fn walk_nested(
        &mut self,
        script: &str,
        label: &str,
        stdin: &[Input],
        subshell: bool,
    ) -> Range<usize> {
        let start = self.out.commands.len();
        if self.depth >= MAX_DEPTH {
            self.problem(
                ProblemKind::TooDeep,
                format!("nesting deeper than {MAX_DEPTH} levels is not followed"),
            );
            return start..start;
        }
        let program = match crate::parse_program(script) {
            Ok(p) => p,
            Err(problem) => {
                self.problem(problem.kind, format!("{label}: {}", problem.detail));
                return start..start;
            }
        };
        self.depth += 1;
        self.via.push(label.to_string());
        if subshell {
            self.subshell(|w| w.walk_program_with_stdin(&program, stdin));
        } else {
            self.maybe(|w| w.walk_program_with_stdin(&program, stdin));
        }
        self.via.pop();
        self.depth -= 1;
        start..self.out.commands.len()
    }

    pub(crate) fn walk_program(&mut self, program: &ast::Program) {
        self.walk_program_with_stdin(program, &[]);
    }

    /// What the walk leaves: positional parameters evaluated as code count
    /// when the line has words that could carry code to them.
    pub(crate) fn finish(mut self) -> Analysis {
        if self.literal_code {
            for e in std::mem::take(&mut self.positional) {
                if !self.out.evaluated.contains(&e) {
                    self.out.evaluated.push(e);
                }
            }
        }
        let mut sources: Vec<(String, Vec<usize>)> = self.tainted.into_iter().collect();
        sources.sort();
        self.out.var_sources = sources;
        self.out
    }

    fn walk_program_with_stdin(&mut self, program: &ast::Program, stdin: &[Input]) {
        for list in &program.complete_commands {
            self.walk_compound_list(list, stdin);
        }
    }

    fn walk_compound_list(&mut self, list: &ast::CompoundList, stdin: &[Input]) -> Vec<usize> {
        let mut outputs = Vec::new();
        for item in &list.0 {
            let and_or = &item.0;
            let walk = |w: &mut Self| {
                let mut outputs = w.walk_pipeline(&and_or.first, stdin);
                for next in &and_or.additional {
                    let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
                    outputs.extend(w.maybe(|w| w.walk_pipeline(p, stdin)));
                }
                outputs
            };
            // `cmd &` runs in a subshell.
            if matches!(item.1, ast::SeparatorOperator::Async) {
                outputs.extend(self.subshell(walk));
            } else {
                outputs.extend(walk(self));
            }
        }
        outputs
    }

    /// Walks a pipeline; each command's stdin is the previous one's output.
    fn walk_pipeline(&mut self, pipeline: &ast::Pipeline, stdin: &[Input]) -> Vec<usize> {
        let mut input: Vec<Input> = stdin.to_vec();
        let mut outputs = Vec::new();
        let piped = pipeline.seq.len() > 1;
        for cmd in &pipeline.seq {
            // Each command of a pipeline runs in a subshell.
            outputs = if piped {
                self.subshell(|w| w.walk_command(cmd, &input))
            } else {
                self.walk_command(cmd, &input)
            };
            input = outputs.iter().map(|&i| Input::Pipe(i)).collect();
        }
        outputs
    }

    /// Walks one command; returns the commands whose output leaves it.
    fn walk_command(&mut self, cmd: &ast::Command, stdin: &[Input]) -> Vec<usize> {
        if self.stopped {
            return Vec::new();
        }
        if self.out.commands.len() >= MAX_COMMANDS {
            self.stopped = true;
            self.problem(
                ProblemKind::TooLarge,
                format!("more than {MAX_COMMANDS} commands; the rest is not analyzed"),
            );
            return Vec::new();
        }
        match cmd {
            ast::Command::Simple(simple) => self.walk_simple(simple, stdin),
            ast::Command::Compound(compound, redirects) => {
                let mut stdin = stdin.to_vec();
                let redirects = redirects
                    .as_ref()
                    .map(|r| self.collect_redirects(&r.0, &mut stdin))
                    .unwrap_or_default();
                let start = self.out.commands.len();
                let outputs = self.walk_compound(compound, &stdin);
                // Redirections on a group apply to every command inside it.
                for c in &mut self.out.commands[start..] {
                    c.redirects.extend(redirects.iter().cloned());
                }
                outputs
            }
            ast::Command::Function(def) => {
                self.walk_function(def);
                Vec::new()
            }
            ast::Command::ExtendedTest(test, _) => {
                self.walk_extended_test(&test.expr);
                Vec::new()
            }
        }
    }

    fn walk_compound(&mut self, compound: &ast::CompoundCommand, stdin: &[Input]) -> Vec<usize> {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(a) => {
                self.eval_source_arithmetic(&a.expr.value);
                Vec::new()
            }
            C::ArithmeticForClause(f) => {
                if f.condition.is_none() && spawns_without_waiting(&f.body.list) {
                    self.out.spawning_loops.push("for ((;;))".to_string());
                }
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.eval_source_arithmetic(&e.value);
                }
                self.maybe(|w| w.walk_compound_list(&f.body.list, stdin))
            }
            C::BraceGroup(g) => self.walk_compound_list(&g.list, stdin),
            C::Subshell(s) => self.subshell(|w| w.walk_compound_list(&s.list, stdin)),
            C::ForClause(f) => {
                let mut values = Vec::new();
                if let Some(words) = &f.values {
                    for v in words {
                        values.extend(self.expand_word(&v.value));
                    }
                }
                // A short list of known words: walk the body once per value,
                // so `for f in ~/.ssh/*; do cat "$f"; done` reads as it runs.
                // Only the outermost loop is unrolled: nested loops would
                // multiply the work (8 words, 8 levels: 8^8 walks).
                if !self.unrolling
                    && !values.is_empty()
                    && values.len() <= 8
                    && values.iter().all(|v| !v.dynamic)
                {
                    self.unrolling = true;
                    let mut out = Vec::new();
                    for v in values {
                        self.set_var(&f.variable_name, v);
                        out.extend(self.walk_compound_list(&f.body.list, stdin));
                    }
                    self.unrolling = false;
                    return out;
                }
                // Otherwise the loop variable takes values we do not follow.
                let sources: Vec<usize> = values.iter().flat_map(|v| v.feeds.clone()).collect();
                self.forget_from(&f.variable_name, &sources);
                self.maybe(|w| w.walk_compound_list(&f.body.list, stdin))
            }
            C::CaseClause(c) => {
                self.expand_word(&c.value.value);
                let mut out = Vec::new();
                for item in &c.cases {
                    if let Some(body) = &item.cmd {
                        out.extend(self.maybe(|w| w.walk_compound_list(body, stdin)));
                    }
                }
                out
            }
            C::IfClause(i) => {
                let mut out = self.walk_compound_list(&i.condition, stdin);
                out.extend(self.maybe(|w| w.walk_compound_list(&i.then, stdin)));
                for e in i.elses.iter().flatten() {
                    if let Some(cond) = &e.condition {
                        out.extend(self.maybe(|w| w.walk_compound_list(cond, stdin)));
                    }
                    out.extend(self.maybe(|w| w.walk_compound_list(&e.body, stdin)));
                }
                out
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                let until = matches!(compound, C::UntilClause(_));
                if endless(&w.0, until) && spawns_without_waiting(&w.1.list) {
                    let keyword = if until { "until" } else { "while" };
                    self.out.spawning_loops.push(keyword.to_string());
                }
                let mut out = self.walk_compound_list(&w.0, stdin);
                out.extend(self.maybe(|this| this.walk_compound_list(&w.1.list, stdin)));
                out
            }
            C::Coprocess(c) => self.walk_command(&c.body, stdin),
        }
    }

    fn walk_function(&mut self, def: &ast::FunctionDefinition) {
        let name = def.fname.value.clone();
        self.out.functions.push(name.clone());
        let start = self.out.commands.len();
        self.maybe(|w| w.walk_compound(&def.body.0, &[]));
        // Known from here on: a call in its own body is not followed.
        if self.functions.len() < 64 {
            self.functions.insert(name.clone(), def.body.clone());
        }
        let body = &self.out.commands[start..];
        let self_calls = body
            .iter()
            .filter(|c| c.program() == Some(name.as_str()))
            .count();
        let piped_self_call = body.iter().any(|c| {
            c.program() == Some(name.as_str())
                && c.stdin.iter().any(|i| matches!(i, Input::Pipe(p) if body_has(*p, start, &self.out.commands, &name)))
        });
        if self_calls >= 2 || piped_self_call {
            self.out.self_spawning_functions.push(name);
        }
    }

    fn walk_extended_test(&mut self, expr: &ast::ExtendedTestExpr) {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.walk_extended_test(a);
                self.walk_extended_test(b);
            }
            E::Not(a) | E::Parenthesized(a) => self.walk_extended_test(a),
            E::UnaryTest(op, w) => {
                let w = self.expand_scalar(&w.value);
                if matches!(
                    op,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                ) {
                    self.eval_name(&w, "[[ -v ]]");
                }
            }
            E::BinaryTest(op, a, b) => {
                let a = self.expand_scalar(&a.value);
                let b = self.expand_scalar(&b.value);
                use ast::BinaryPredicate as B;
                if matches!(
                    op,
                    B::ArithmeticEqualTo
                        | B::ArithmeticNotEqualTo
                        | B::ArithmeticLessThan
                        | B::ArithmeticLessThanOrEqualTo
                        | B::ArithmeticGreaterThan
                        | B::ArithmeticGreaterThanOrEqualTo
                ) {
                    self.eval_arithmetic(&a, "arithmetic", 0);
                    self.eval_arithmetic(&b, "arithmetic", 0);
                }
            }
        }
    }

    fn walk_simple(&mut self, simple: &ast::SimpleCommand, stdin: &[Input]) -> Vec<usize> {
        let mut stdin = stdin.to_vec();
        let mut assignments = Vec::new();
        let mut values: Vec<(String, Option<Var>)> = Vec::new();
        let mut redirect_items = Vec::new();
        let mut argv: Vec<Word> = Vec::new();
        let mut declared = Vec::new();

        if let Some(prefix) = &simple.prefix {
            // `a=x b=$a cmd`: each assignment sees the ones before it.
            self.scopes.push(HashMap::new());
            for item in &prefix.0 {
                match item {
                    ast::CommandPrefixOrSuffixItem::AssignmentWord(a, _) => {
                        let (asg, var) = self.expand_assignment(a, AssignAt::Line);
                        match &var {
                            Some(v) => self.set(&asg.name, v.clone()),
                            None => self.forget(&asg.name),
                        }
                        values.push((asg.name.clone(), var));
                        assignments.push(asg);
                    }
                    ast::CommandPrefixOrSuffixItem::IoRedirect(r) => redirect_items.push(r),
                    ast::CommandPrefixOrSuffixItem::Word(w) => {
                        argv.extend(self.expand_word(&w.value))
                    }
                    ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                        argv.push(self.process_substitution(kind, sub));
                    }
                }
            }
            self.scopes.pop();
        }
        if let Some(name) = &simple.word_or_name {
            argv.extend(self.expand_word(&name.value));
        }
        let declaration = argv.first().is_some_and(|w| {
            !w.dynamic
                && matches!(
                    w.text.as_str(),
                    "export" | "declare" | "typeset" | "local" | "readonly"
                )
        });
        if let Some(suffix) = &simple.suffix {
            for item in &suffix.0 {
                match item {
                    ast::CommandPrefixOrSuffixItem::Word(w) => {
                        argv.extend(self.expand_word(&w.value))
                    }
                    ast::CommandPrefixOrSuffixItem::IoRedirect(r) => redirect_items.push(r),
                    // After `declare` and the like, `NAME=value` is an
                    // assignment (not split); elsewhere it is a plain word.
                    ast::CommandPrefixOrSuffixItem::AssignmentWord(a, _) if declaration => {
                        // `declare -n REF=TARGET` sets the reference itself.
                        let reference = argv[0].text != "export"
                            && argv[1..]
                                .iter()
                                .any(|w| w.text.starts_with('-') && w.text.contains('n'));
                        let (asg, var) =
                            self.expand_assignment(a, AssignAt::Declaration { reference });
                        let mut word = asg.value.clone();
                        word.text = format!("{}={}", asg.name, asg.value.text);
                        argv.push(word);
                        declared.push((asg.name, var));
                    }
                    ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                        argv.extend(self.expand_word(&w.value));
                    }
                    ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                        argv.push(self.process_substitution(kind, sub));
                    }
                }
            }
        }

        let redirects = {
            let items: Vec<ast::IoRedirect> = redirect_items.into_iter().cloned().collect();
            self.collect_redirects(&items, &mut stdin)
        };
        // `hash -p /bin/rm ls` earlier on the line: `ls` runs `/bin/rm`.
        if !self.hashed.is_empty()
            && let Some(first) = argv.first()
            && !first.dynamic
            && !first.text.contains('/')
            && let Some(path) = self.hashed.get(&first.text)
        {
            argv[0] = path.clone();
        }
        self.eval_builtin_args(&argv);
        let alias_expansion = self.alias_expansion(&argv);
        self.literal_code |= argv
            .iter()
            .chain(assignments.iter().map(|a| &a.value))
            .any(|w| !w.dynamic && w.text.contains(['`', '$']));
        // The index this command gets.
        let idx = self.out.commands.len();

        if argv.is_empty() {
            // `NAME=value` alone sets a shell variable for the rest of the line.
            for (name, var) in values {
                match var {
                    Some(v) => self.set(&name, v),
                    None => self.forget(&name),
                }
            }
        } else if declaration {
            // Attributes like `-n` (a reference), `-i`, `-l` or `-u` change
            // what the value becomes.
            let plain = argv[1..].iter().all(|w| {
                let attribute =
                    w.text.starts_with(['-', '+']) && w.text.contains(['n', 'i', 'l', 'u']);
                !(w.dynamic || attribute)
            });
            for (name, var) in declared {
                match var {
                    Some(v) if plain => self.set(&name, v),
                    _ => self.forget(&name),
                }
            }
        } else {
            // `read … <<< 'TEXT'`: input the line gives as known text.
            // (Not with `IFS=… read`: the fields are split otherwise.)
            let reads = argv
                .first()
                .is_some_and(|w| matches!(w.text.as_str(), "read" | "mapfile" | "readarray"));
            let literal = match stdin.as_slice() {
                [Input::Text(w)] if reads && !w.dynamic && assignments.is_empty() => {
                    Some(w.text.clone())
                }
                _ => None,
            };
            self.note_builtin_assignments(&argv, idx, literal.as_deref());
        }

        let command = Command {
            argv,
            assignments,
            redirects,
            stdin,
            via: self.via.clone(),
            depth: self.depth,
            runs: None,
            code: None,
            privileged: self.privileged,
        };
        let alias_stdin = command.stdin.clone();
        let pushed = self.push_command(command);
        debug_assert_eq!(pushed, idx);
        if let Some((label, script)) = alias_expansion {
            let ran = self.walk_nested_script(&script, &label, &alias_stdin);
            if !ran.is_empty() && self.out.commands[idx].runs.is_none() {
                self.out.commands[idx].runs = Some(ran.start);
            }
        }
        self.follow_call(idx, &alias_stdin);
        vec![pushed]
    }

    /// A call of a function the line defined (`f() { rm -rf "$1"; }; f
    /// ~`): its body runs again with the call's words as `$1`, `"$@"`,
    /// judged as what it does with them.
    fn follow_call(&mut self, idx: usize, stdin: &[Input]) {
        if self.functions.is_empty() {
            return;
        }
        let Some(first) = self.out.commands[idx].argv.first() else {
            return;
        };
        if first.dynamic
            || self.calls_followed >= MAX_CALLS_FOLLOWED
            || self.depth >= MAX_DEPTH
            || self.calling.contains(&first.text)
        {
            return;
        }
        let Some(body) = self.functions.get(&first.text).cloned() else {
            return;
        };
        let name = first.text.clone();
        let args: Vec<Word> = self.out.commands[idx].args().to_vec();
        self.calls_followed += 1;
        self.calling.push(name.clone());
        self.depth += 1;
        self.via.push(format!("function {name}"));
        let start = self.out.commands.len();
        self.maybe(|w| {
            w.set(crate::words::POSITIONAL, Var::Array(args));
            w.walk_compound(&body.0, stdin)
        });
        self.via.pop();
        self.depth -= 1;
        self.calling.pop();
        if self.out.commands.len() > start && self.out.commands[idx].runs.is_none() {
            self.out.commands[idx].runs = Some(start);
        }
    }

    /// Records the aliases an `alias NAME=VALUE` command defines, and returns
    /// the text a call of a defined alias runs (`ll src` → `ls -la src`) with
    /// its label. A defined alias is not an unknown program.
    fn alias_expansion(&mut self, argv: &[Word]) -> Option<(String, String)> {
        let first = argv.first().filter(|w| !w.dynamic)?;
        if first.text == "alias" {
            for a in &argv[1..] {
                if let Some((name, value)) = a.text.split_once('=')
                    && !name.is_empty()
                    && !name.starts_with('-')
                    && !a.dynamic
                {
                    self.aliases.insert(name.to_string(), value.to_string());
                    if !self.out.functions.iter().any(|f| f == name) {
                        self.out.functions.push(name.to_string());
                    }
                }
            }
            return None;
        }
        let value = self.aliases.get(&first.text)?;
        let mut script = value.clone();
        for w in &argv[1..] {
            script.push(' ');
            script.push_str(&format!("'{}'", w.text.replace('\'', r"'\''")));
        }
        Some((format!("alias {}", first.text), script))
    }

    /// Adds a command, then whatever it runs in turn (wrappers, nested
    /// shells, interpreter code). Returns its index.
    pub(crate) fn push_command(&mut self, mut command: Command) -> usize {
        self.follow_links(&mut command);
        command.code = crate::embedded::code_of(&command, &|| self.piped_text(&command));
        let idx = self.out.commands.len();
        let mut inners = wrappers::unwrap(&command);
        // `/???/r? -rf ~`: the other programs the glob could name, each
        // judged with the same words.
        for candidate in command.glob_candidates() {
            let mut argv = command.argv.clone();
            argv[0] = Word::literal(candidate);
            inners.push(Inner::Argv {
                label: "glob".into(),
                argv,
                privileged: false,
                keeps_stdin: true,
            });
        }
        self.fill_xargs(&command, &mut inners);
        inners.extend(self.git_alias_inner(&command));
        if let Some(script) = self.echoed_script(&command) {
            inners.push(Inner::Script {
                label: "echo | sh".into(),
                script,
                privileged: false,
                stdin_script: false,
                positional: None,
            });
        }
        let shell_outs = command
            .code
            .as_ref()
            .map(crate::embedded::shell_strings)
            .unwrap_or_default();
        let stdin = command.stdin.clone();
        let privileged = command.privileged;
        self.note_links(&command);
        self.out.commands.push(command);
        if inners.is_empty() && shell_outs.is_empty() {
            return idx;
        }
        if self.depth >= MAX_DEPTH {
            self.problem(
                ProblemKind::TooDeep,
                format!("wrappers nested deeper than {MAX_DEPTH} levels are not followed"),
            );
            return idx;
        }
        let mut first_inner = None;
        for inner in inners {
            let start = self.out.commands.len();
            match inner {
                Inner::Argv {
                    label,
                    argv,
                    privileged: raises,
                    keeps_stdin,
                } => {
                    // `sudo VAR=x cmd`, `env VAR=x cmd`: leading
                    // assignments are the child's environment, not its program.
                    let (assignments, argv) = split_assignments(argv);
                    for a in &assignments {
                        if PROMPT_VARIABLES.contains(&a.name.as_str()) {
                            self.eval_prompt(&a.value, &a.name);
                        }
                    }
                    let child = Command {
                        argv,
                        assignments,
                        stdin: if keeps_stdin {
                            stdin.clone()
                        } else {
                            Vec::new()
                        },
                        via: {
                            let mut v = self.via.clone();
                            v.push(label);
                            v
                        },
                        depth: self.depth + 1,
                        privileged: privileged || raises,
                        ..Command::default()
                    };
                    self.depth += 1;
                    let was = self.privileged;
                    self.privileged = child.privileged;
                    self.via.push(child.via.last().cloned().unwrap_or_default());
                    self.push_command(child);
                    self.via.pop();
                    self.privileged = was;
                    self.depth -= 1;
                }
                Inner::Script {
                    label,
                    script,
                    privileged: raises,
                    stdin_script,
                    positional,
                } => {
                    let was = self.privileged;
                    self.privileged = privileged || raises;
                    let script_stdin = if stdin_script {
                        stdin.clone()
                    } else {
                        Vec::new()
                    };
                    match positional {
                        // `sh -c 'rm -rf "$1"' NAME /`: a new shell, whose
                        // `$0` is NAME and `$1`… the words after it.
                        Some(mut words) => {
                            let name = words.remove(0);
                            self.subshell(|w| {
                                w.set(crate::words::SCRIPT_NAME, Var::Scalar(name));
                                w.set(crate::words::POSITIONAL, Var::Array(words));
                                w.walk_nested(&script, &label, &script_stdin, false);
                            });
                        }
                        None => {
                            self.walk_nested_script(&script, &label, &script_stdin);
                        }
                    }
                    self.privileged = was;
                }
            }
            if first_inner.is_none() && self.out.commands.len() > start {
                first_inner = Some(start);
            }
        }
        for (label, script) in shell_outs {
            self.walk_nested_script(&script, &label, &[]);
        }
        if let Some(first) = first_inner {
            self.out.commands[idx].runs = Some(first);
        }
        idx
    }

    /// What literal `echo`/`printf` output (or a here-document copied by
    /// `cat`) piped into `command` says, when every pipe into it is one.
    fn piped_text(&self, command: &Command) -> Option<String> {
        let mut text = String::new();
        for input in &command.stdin {
            if let Input::Pipe(p) = input {
                text.push_str(&self.literal_output(*p)?);
            }
        }
        (!text.is_empty()).then_some(text)
    }

    /// `echo 'cmd' | sh`, `printf 'a\nb\n' | bash`: the text a shell reads
    /// from a pipe of literal `echo`/`printf` output is a script we can read.
    fn echoed_script(&self, command: &Command) -> Option<String> {
        let name = command.program()?;
        if !crate::is_shell(name)
            || command
                .args()
                .iter()
                .any(|a| !a.text.starts_with('-') || a.text.contains('c'))
        {
            return None;
        }
        let mut script = String::new();
        for input in &command.stdin {
            let Input::Pipe(p) = input else { continue };
            let source = self.out.commands.get(*p)?;
            let words = source.args();
            if words.iter().any(|w| w.dynamic) {
                continue;
            }
            match source.program() {
                Some("echo") => {
                    let text: Vec<&str> = words
                        .iter()
                        .map(|w| w.text.as_str())
                        .skip_while(|w| w.starts_with('-') && w.len() > 1)
                        .collect();
                    script.push_str(&text.join(" "));
                }
                Some("printf") => {
                    if let Some(format) = words.first() {
                        script.push_str(&crate::words::decode_ansi_c(
                            &format.text.replace("%s", " "),
                        ));
                    }
                }
                _ => continue,
            }
            script.push('\n');
        }
        (!script.is_empty()).then_some(script)
    }

    /// Expands `NAME=value`; also returns the variable's new value, `None`
    /// when it is not known. Through a reference (`declare -n`), the
    /// assignment is the target's; an array subscript is evaluated as
    /// arithmetic; a prompt string or a `declare -i` value given on the line
    /// is evaluated as bash will (after a declaration, by
    /// [`Self::eval_builtin_args`]).
    fn expand_assignment(
        &mut self,
        a: &ast::Assignment,
        at: AssignAt,
    ) -> (Assignment, Option<Var>) {
        let (name, index) = match &a.name {
            ast::AssignmentName::VariableName(n) => (n.clone(), None),
            ast::AssignmentName::ArrayElementName(n, i) => (n.clone(), Some(i.clone())),
        };
        let reference = matches!(at, AssignAt::Declaration { reference: true });
        let name = if reference {
            name
        } else {
            self.assignment_target(&name)
        };
        // `a[$(cmd)]=x`: the subscript is expanded, then evaluated.
        let subscript = index
            .as_deref()
            .filter(|i| i.trim().parse::<usize>().is_err())
            .map(|i| self.eval_source_arithmetic(i));
        let old = self.lookup(&name);
        match &a.value {
            ast::AssignmentValue::Scalar(w) => {
                let value = self.expand_scalar(&w.value);
                if at == AssignAt::Line {
                    self.eval_assigned(&name, &value);
                }
                // `BASH_CMDS[ls]=/bin/rm` is `hash -p /bin/rm ls`.
                if name == "BASH_CMDS" {
                    let key = subscript
                        .clone()
                        .or_else(|| index.as_deref().map(Word::literal));
                    if let Some(key) = key {
                        self.bind_hashed(&key, &value);
                    }
                }
                if !reference && self.refs.get(&name) == Some(&None) {
                    // The first value of a reference declared without one
                    // names its target.
                    self.refs.insert(name.clone(), Some(value.clone()));
                    self.eval_name(&value, "declare -n");
                }
                let var = match (index, old) {
                    (None, old) if a.append => append_scalar(old, &name, &value),
                    (None, _) => Some(Var::Scalar(value.clone())),
                    (Some(i), old) => {
                        let at: Option<usize> = i.trim().parse().ok();
                        match (old, at) {
                            (Some(Var::Array(mut items)), Some(at))
                                if at <= items.len() && !a.append =>
                            {
                                if at == items.len() {
                                    items.push(value.clone());
                                } else {
                                    items[at] = value.clone();
                                }
                                Some(Var::Array(items))
                            }
                            _ => None,
                        }
                    }
                };
                (Assignment { name, value }, var)
            }
            ast::AssignmentValue::Array(items) => {
                let mut elements = Vec::new();
                let mut keyed = false;
                for (key, v) in items {
                    keyed |= key.is_some();
                    let value = self.expand_word(&v.value);
                    if let Some(key) = key {
                        // `a=([$(cmd)]=x)`: the key is expanded, then evaluated.
                        let key = self.eval_source_arithmetic(&key.value);
                        if name == "BASH_CMDS"
                            && let Some(path) = value.first()
                        {
                            self.bind_hashed(&key, path);
                        }
                    }
                    elements.extend(value);
                }
                let mut w = Word::default();
                for e in &elements {
                    if !w.text.is_empty() {
                        w.text.push(' ');
                    }
                    w.text.push_str(&e.text);
                    w.dynamic |= e.dynamic;
                    merge_links(&mut w, e);
                }
                let var = if keyed || index.is_some() {
                    None
                } else if a.append {
                    match old {
                        Some(Var::Array(mut old)) => {
                            old.extend(elements);
                            Some(Var::Array(old))
                        }
                        Some(Var::Scalar(first)) => {
                            let mut all = vec![first];
                            all.extend(elements);
                            Some(Var::Array(all))
                        }
                        Some(Var::Unset) => Some(Var::Array(elements)),
                        None => None,
                    }
                } else {
                    Some(Var::Array(elements))
                };
                (Assignment { name, value: w }, var)
            }
        }
    }

    /// Builtins that set or unset variables by name: `unset`, `read`,
    /// `printf -v`, `mapfile`. What `read` and `mapfile` assign comes from
    /// their input: command `idx` (themselves) is its source.
    fn note_builtin_assignments(&mut self, argv: &[Word], idx: usize, literal: Option<&str>) {
        let Some(program) = argv.first().filter(|w| !w.dynamic).map(|w| w.text.clone()) else {
            return;
        };
        let args = &argv[1..];
        let names = || {
            args.iter()
                .filter(|w| !w.text.starts_with('-'))
                .map(|w| w.text.clone())
                .collect::<Vec<_>>()
        };
        match program.as_str() {
            "unset" => {
                if args.iter().any(|w| w.dynamic) {
                    return;
                }
                let functions = args.iter().any(|w| w.text == "-f");
                if !functions {
                    for name in names() {
                        self.set(&name, Var::Unset);
                    }
                }
            }
            // `set -- A B C`, `set A B`: the positional parameters.
            "set" => {
                let rest = match args.iter().position(|w| w.text == "--") {
                    Some(k) => &args[k + 1..],
                    None if args
                        .first()
                        .is_some_and(|w| !w.text.starts_with(['-', '+'])) =>
                    {
                        args
                    }
                    None => return,
                };
                self.set(crate::words::POSITIONAL, Var::Array(rest.to_vec()));
            }
            "shift" => {
                let n = args
                    .first()
                    .map_or(Some(1), |w| w.text.parse::<usize>().ok());
                match (n, self.lookup(crate::words::POSITIONAL)) {
                    (Some(n), Some(Var::Array(items))) => {
                        let rest = items.get(n..).unwrap_or(&[]).to_vec();
                        self.set(crate::words::POSITIONAL, Var::Array(rest));
                    }
                    (None, Some(_)) => self.forget(crate::words::POSITIONAL),
                    _ => {}
                }
            }
            "read" if literal.is_some_and(|text| self.read_literal(args, text)) => {}
            // `mapfile -t A <<< $'rm\n-rf\n~'`: one element a line.
            "mapfile" | "readarray"
                if literal.is_some()
                    && args
                        .iter()
                        .all(|w| w.text == "-t" || !w.text.starts_with('-')) =>
            {
                let text = literal.unwrap_or_default();
                let name = args
                    .iter()
                    .rfind(|w| !w.text.starts_with('-'))
                    .map_or("MAPFILE".to_string(), |w| w.text.clone());
                let items = text
                    .strip_suffix('\n')
                    .unwrap_or(text)
                    .split('\n')
                    .map(Word::literal)
                    .collect();
                self.set(&name, Var::Array(items));
            }
            "read" | "mapfile" | "readarray" | "getopts" => {
                // Option values (`read -p prompt`) are forgotten too: harmless.
                let input = if program == "getopts" {
                    Vec::new()
                } else {
                    vec![idx]
                };
                for name in names() {
                    let name = self.assignment_target(&name);
                    self.forget_from(&name, &input);
                }
                if matches!(program.as_str(), "read" | "mapfile" | "readarray") {
                    self.forget_from("REPLY", &input);
                    self.forget_from("MAPFILE", &input);
                }
            }
            "printf" => {
                // `printf -v NAME FORMAT ARGS...` (`-vNAME` too): NAME holds
                // what printf would print, known when the format and the
                // arguments are; else it comes from them (or printf).
                let mut k = 0;
                let mut target = None;
                while k < args.len() {
                    let t = args[k].text.as_str();
                    if t == "--" || !t.starts_with('-') {
                        break;
                    }
                    if t == "-v" {
                        target = args.get(k + 1).map(|w| w.text.clone());
                        k += 2;
                    } else if let Some(n) = t.strip_prefix("-v") {
                        target = Some(n.to_string());
                        k += 1;
                    } else {
                        k += 1;
                    }
                }
                if args.get(k).is_some_and(|w| w.text == "--") {
                    k += 1;
                }
                if let Some(name) = target {
                    let name = self.assignment_target(&name);
                    let rest = &args[k.min(args.len())..];
                    if let Some(text) = printf_output(rest) {
                        self.set_var(&name, Word::literal(text));
                    } else {
                        let mut sources: Vec<usize> =
                            rest.iter().flat_map(|w| w.feeds.iter().copied()).collect();
                        if sources.is_empty() {
                            sources.push(idx);
                        }
                        self.forget_from(&name, &sources);
                    }
                }
            }
            "wait" => {
                // `wait -p NAME`: NAME gets a process id.
                if let Some(name) = wait_p_name(args) {
                    let name = self.assignment_target(&name.text);
                    self.set_var(&name, Word::literal("0"));
                }
            }
            _ => {}
        }
    }

    /// `read [-r] [-a ARRAY | NAME...] <<< 'TEXT'`: one line of literal
    /// text read into variables (split at white space, the last name
    /// taking the rest) or, with `-a`, into an array. Whether it did (the
    /// input is one known line, the options plain).
    fn read_literal(&mut self, args: &[Word], text: &str) -> bool {
        let line = text.strip_suffix('\n').unwrap_or(text);
        if line.contains('\n') || line.contains('\\') {
            return false;
        }
        let mut array = None;
        let mut names = Vec::new();
        let mut k = 0;
        while k < args.len() {
            let t = args[k].text.as_str();
            if let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) {
                // `-r`, `-s`, `-ra NAME`: other options read otherwise.
                for (n, c) in cluster.chars().enumerate() {
                    match c {
                        'r' | 's' => {}
                        'a' if n + 1 == cluster.len() => {
                            array = args.get(k + 1).map(|w| w.text.clone());
                            k += 1;
                        }
                        _ => return false,
                    }
                }
            } else {
                names.push(t.to_string());
            }
            k += 1;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let Some(a) = array {
            let items = fields.iter().map(|f| Word::literal(*f)).collect();
            self.set(&a, Var::Array(items));
            return true;
        }
        if names.is_empty() {
            self.set_var("REPLY", Word::literal(line.trim()));
            return true;
        }
        for (n, name) in names.iter().enumerate() {
            let value = if n + 1 == names.len() {
                fields.get(n..).map(|f| f.join(" ")).unwrap_or_default()
            } else {
                fields.get(n).map(|f| f.to_string()).unwrap_or_default()
            };
            self.set_var(name, Word::literal(value));
        }
        true
    }

    /// `hash -p PATH NAME`: from here on, NAME runs PATH.
    pub(crate) fn bind_hashed(&mut self, name: &Word, path: &Word) {
        if name.dynamic {
            // Which name is bound is not known: any could be.
            self.problem(
                ProblemKind::Unparsable,
                "a program name is bound to a path (`hash -p`, `BASH_CMDS`) that is only known at run time",
            );
            return;
        }
        self.hashed.insert(name.text.clone(), path.clone());
    }

    /// `hash -r` forgets every binding; `hash -d NAME` one.
    pub(crate) fn unbind_hashed(&mut self, name: Option<&str>) {
        match name {
            Some(n) => {
                self.hashed.remove(n);
            }
            None => self.hashed.clear(),
        }
    }

    fn process_substitution(
        &mut self,
        kind: &ast::ProcessSubstitutionKind,
        sub: &ast::SubshellCommand,
    ) -> Word {
        let label = match kind {
            ast::ProcessSubstitutionKind::Read => "<(...)",
            ast::ProcessSubstitutionKind::Write => ">(...)",
        };
        let start = self.out.commands.len();
        self.depth += 1;
        self.via.push(label.to_string());
        self.walk_compound_list(&sub.list, &[]);
        self.via.pop();
        self.depth -= 1;
        Word {
            text: "/dev/fd/63".to_string(),
            dynamic: true,
            feeds: (start..self.out.commands.len()).collect(),
            vars: Vec::new(),
            glob: false,
        }
    }

    fn collect_redirects(
        &mut self,
        items: &[ast::IoRedirect],
        stdin: &mut Vec<Input>,
    ) -> Vec<Redirect> {
        let mut out = Vec::new();
        for r in items {
            match r {
                ast::IoRedirect::File(fd, kind, target) => {
                    let target_word = match target {
                        ast::IoFileRedirectTarget::Filename(w) => self.expand_scalar(&w.value),
                        ast::IoFileRedirectTarget::Fd(n) => Word::literal(format!("&{n}")),
                        ast::IoFileRedirectTarget::ProcessSubstitution(k, sub) => {
                            self.process_substitution(k, sub)
                        }
                        ast::IoFileRedirectTarget::Duplicate(w) => self.expand_scalar(&w.value),
                    };
                    let is_fd_target = matches!(target, ast::IoFileRedirectTarget::Fd(_))
                        || target_word.text == "-"
                        || target_word
                            .text
                            .chars()
                            .all(|c| c.is_ascii_digit() || c == '-');
                    let kind = match kind {
                        ast::IoFileRedirectKind::Read => RedirectKind::Read,
                        ast::IoFileRedirectKind::Write | ast::IoFileRedirectKind::Clobber => {
                            RedirectKind::Write
                        }
                        ast::IoFileRedirectKind::Append => RedirectKind::Append,
                        ast::IoFileRedirectKind::ReadAndWrite => RedirectKind::ReadWrite,
                        ast::IoFileRedirectKind::DuplicateInput if !is_fd_target => {
                            RedirectKind::Read
                        }
                        // `>& file` sends stdout and stderr to a file.
                        ast::IoFileRedirectKind::DuplicateOutput if !is_fd_target => {
                            RedirectKind::Write
                        }
                        _ => RedirectKind::Duplicate,
                    };
                    let reads_stdin = kind.reads() && fd.is_none_or(|f| f == 0);
                    if reads_stdin {
                        stdin.push(Input::File(target_word.clone()));
                    }
                    out.push(Redirect {
                        fd: *fd,
                        kind,
                        target: target_word,
                    });
                }
                ast::IoRedirect::HereDocument(_, doc) => {
                    let body = if doc.requires_expansion {
                        self.expand_heredoc(&doc.doc.value)
                    } else {
                        Word::literal(doc.doc.value.clone())
                    };
                    stdin.push(Input::Text(body));
                }
                ast::IoRedirect::HereString(_, w) => {
                    let mut body = self.expand_scalar(&w.value);
                    body.text.push('\n');
                    stdin.push(Input::Text(body));
                }
                ast::IoRedirect::OutputAndError(w, append) => {
                    let target = self.expand_scalar(&w.value);
                    let kind = if *append {
                        RedirectKind::Append
                    } else {
                        RedirectKind::Write
                    };
                    out.push(Redirect {
                        fd: None,
                        kind,
                        target,
                    });
                }
            }
        }
        out
    }
}

/// Where an assignment is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AssignAt {
    /// Before a command or alone: `NAME=value cmd`, `NAME=value`.
    Line,
    /// After `declare`, `export`, `local` ...; `reference` when the
    /// declaration makes a reference (`declare -n`).
    Declaration { reference: bool },
}

/// A value past this size is only known at run time: a value built by
/// doubling (`x=$x$x` ...) would grow without bound.
fn capped(mut value: Word) -> Word {
    if value.text.len() > MAX_VALUE_BYTES {
        value
            .text
            .truncate(value.text.floor_char_boundary(MAX_VALUE_BYTES));
        value.dynamic = true;
    }
    value
}

/// Adds another word's links to commands and variables, once each.
fn merge_links(w: &mut Word, other: &Word) {
    for f in &other.feeds {
        if !w.feeds.contains(f) {
            w.feeds.push(*f);
        }
    }
    for v in &other.vars {
        if !w.vars.contains(v) {
            w.vars.push(v.clone());
        }
    }
}

/// `NAME+=value`.
fn append_scalar(old: Option<Var>, name: &str, value: &Word) -> Option<Var> {
    let mut base = match old {
        Some(Var::Scalar(w)) => w,
        Some(Var::Array(items)) => {
            // Appends to the first element.
            let mut items = items;
            let mut first = items.first().cloned().unwrap_or_default();
            first.text.push_str(&value.text);
            first.dynamic |= value.dynamic;
            if items.is_empty() {
                items.push(first);
            } else {
                items[0] = first;
            }
            return Some(Var::Array(items));
        }
        Some(Var::Unset) => Word::default(),
        None => {
            let mut w = Word::literal(format!("${name}"));
            w.dynamic = true;
            w.vars.push(name.to_string());
            w
        }
    };
    base.text.push_str(&value.text);
    base.dynamic |= value.dynamic;
    merge_links(&mut base, value);
    Some(Var::Scalar(capped(base)))
}

/// Whether a loop's condition never ends it: `while true`, `while :`,
/// `until false`, `while (( 1 ))`.
fn endless(condition: &ast::CompoundList, until: bool) -> bool {
    let [item] = condition.0.as_slice() else {
        return false;
    };
    if !item.0.additional.is_empty() || item.0.first.seq.len() != 1 || item.0.first.bang {
        return false;
    }
    match &item.0.first.seq[0] {
        ast::Command::Simple(s) if s.prefix.is_none() && s.suffix.is_none() => {
            let word = s.word_or_name.as_ref().map(|w| w.value.as_str());
            if until {
                word == Some("false")
            } else {
                matches!(word, Some("true" | ":"))
            }
        }
        ast::Command::Compound(ast::CompoundCommand::Arithmetic(a), _) => {
            let e = a.expr.value.trim();
            !until && !e.is_empty() && e.chars().all(|c| c.is_ascii_digit()) && e != "0"
        }
        _ => false,
    }
}

/// Whether a loop's body starts a command in the background and does not
/// wait for it.
fn spawns_without_waiting(body: &ast::CompoundList) -> bool {
    let background = body
        .0
        .iter()
        .any(|item| matches!(item.1, ast::SeparatorOperator::Async));
    let waits = body.0.iter().any(|item| {
        std::iter::once(&item.0.first)
            .chain(item.0.additional.iter().map(|a| match a {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
            }))
            .flat_map(|p| p.seq.iter())
            .any(|c| {
                matches!(c, ast::Command::Simple(s)
                    if s.word_or_name.as_ref().is_some_and(|w| w.value == "wait"))
            })
    });
    background && !waits
}

fn body_has(p: usize, start: usize, commands: &[Command], name: &str) -> bool {
    p >= start && commands.get(p).is_some_and(|c| c.program() == Some(name))
}

/// `NAME=value` as a program's environment receives it: a shell name, or
/// `BASH_FUNC_name%%` (`%`), which `env` passes on. `None` for anything else.
pub fn env_assignment(text: &str) -> Option<(&str, &str)> {
    let (name, value) = text.split_once('=')?;
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '%');
    valid.then_some((name, value))
}

/// Splits `NAME=value` words off the front of an argument vector, as a
/// wrapper that sets the environment (`sudo`, `env`) would.
fn split_assignments(argv: Vec<Word>) -> (Vec<Assignment>, Vec<Word>) {
    let n = argv
        .iter()
        .take_while(|w| env_assignment(&w.text).is_some())
        .count();
    let mut argv = argv;
    let rest = argv.split_off(n);
    let assignments = argv
        .into_iter()
        .map(|w| {
            let (name, value) = env_assignment(&w.text).unwrap_or_default();
            let (name, value) = (name.to_string(), value.to_string());
            Assignment {
                name,
                value: Word { text: value, ..w },
            }
        })
        .collect();
    (assignments, rest)
}

/// What `printf FORMAT ARGS...` prints, when all of it is known: each
/// conversion (`%s`, `%b`, `%d`, `%-5s` ...) takes the next argument as it
/// is, and the format is used again while arguments are left. Escapes in
/// the format are kept as written.
pub(crate) fn printf_output(args: &[Word]) -> Option<String> {
    if args.iter().any(|w| w.dynamic) {
        return None;
    }
    let (format, rest) = args.split_first()?;
    let mut values = rest.iter().map(|w| w.text.as_str());
    let mut out = String::new();
    let mut left = rest.len();
    loop {
        let mut used = 0;
        let mut chars = format.text.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            if chars.peek() == Some(&'%') {
                chars.next();
                out.push('%');
                continue;
            }
            // Flags, width, precision, then the conversion letter.
            while chars
                .peek()
                .is_some_and(|c| "-+ #0123456789.*".contains(*c))
            {
                chars.next();
            }
            if chars.next().is_none() {
                break;
            }
            out.push_str(values.next().unwrap_or(""));
            used += 1;
        }
        left = left.saturating_sub(used);
        if used == 0 || left == 0 || out.len() > 1 << 16 {
            break;
        }
    }
    Some(out)
}

/// The NAME of `wait -p NAME` (`-np NAME`, `-pNAME`).
pub(crate) fn wait_p_name(args: &[Word]) -> Option<Word> {
    for (k, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        if t == "--" || !t.starts_with('-') {
            break;
        }
        if let Some(pos) = t[1..].find('p') {
            let rest = &t[1 + pos + 1..];
            return if rest.is_empty() {
                args.get(k + 1).cloned()
            } else {
                Some(Word {
                    text: rest.to_string(),
                    ..a.clone()
                })
            };
        }
    }
    None
}
