//! Program names spelled to hide what they are.

fn program(line: &str) -> Option<String> {
    let a = aq_shell::analyze(line);
    let c = a.commands.iter().find(|c| c.depth == 0)?;
    c.program().map(str::to_string)
}

#[test]
fn a_glob_in_a_program_name_is_the_program_it_matches() {
    assert_eq!(program("/usr/bin/w?et -q x").as_deref(), Some("wget"));
    assert_eq!(program("/bin/c[a]t .env").as_deref(), Some("cat"));
    assert_eq!(program("/usr/bin/cur[!x] x").as_deref(), Some("curl"));
    // Nothing in the model matches: the word as written, as bash leaves it.
    assert_eq!(program("./scripts/b?ild.sh").as_deref(), Some("b?ild.sh"));
    assert_eq!(program("[ -d x ]").as_deref(), Some("["));
    // Quoted, it is not a glob.
    assert_eq!(program("'w?et' x").as_deref(), Some("w?et"));
}

#[test]
fn unknown_variables_inside_a_name_are_read_as_empty() {
    assert_eq!(
        program("c${x}at ~/.aws/credentials").as_deref(),
        Some("cat")
    );
    assert_eq!(program("/usr/bin/cu${e}rl x").as_deref(), Some("curl"));
    // Only variables, an operator or a substitution: unknown.
    assert_eq!(program("$CMD --version"), None);
    assert_eq!(program("${tool} build"), None);
    assert_eq!(program("c${x:+a}t f"), None);
    assert_eq!(program("c$(date)t f"), None);
    // A substitution with a constant output is resolved, as before.
    assert_eq!(program("c$(echo a)t f").as_deref(), Some("cat"));
}

/// A default value is what bash uses when the line does not set the
/// variable (nor, as the line is judged, the environment).
#[test]
fn a_variable_not_set_on_the_line_is_read_with_its_default() {
    assert_eq!(program("c${x:-a}t f").as_deref(), Some("cat"));
    assert_eq!(program("\"${SHELL:-sh}\" -c x").as_deref(), Some("sh"));
    let run = |line: &str| {
        aq_shell::analyze(line)
            .commands
            .into_iter()
            .find(|c| !c.argv.is_empty())
            .unwrap()
    };
    let rm = run("x=${x:-rm}; $x -rf ~/");
    assert_eq!(rm.program(), Some("rm"));
    assert!(rm.argv[0].dynamic, "still only known at run time");
    // Set on the line, the value counts, not the default.
    assert_eq!(run("x=ls; ${x:-rm} -l").program(), Some("ls"));
    assert_eq!(run("x=; ${x:-rm} -l").program(), Some("rm"));
    assert!(!run("x=; ${x:-rm} -l").argv[0].dynamic);
}

/// Every command of the line as `program arg…`, for what the walker found.
fn commands(line: &str) -> Vec<String> {
    aq_shell::analyze(line)
        .commands
        .iter()
        .map(|c| {
            c.argv
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn a_glob_that_could_name_several_programs_is_each_of_them() {
    assert!(commands("/???/r? -rf ~").contains(&"rm -rf ~".to_string()));
    assert!(commands("/usr/bin/r[m] -rf ~").contains(&"rm -rf ~".to_string()));
    assert_eq!(commands("./scripts/b?ild.sh"), ["./scripts/b?ild.sh"]);
}

#[test]
fn positional_parameters_set_on_the_line_are_known() {
    assert!(commands("set -- rm -rf ~; \"$@\"").contains(&"rm -rf ~".to_string()));
    assert!(commands("set -- a rm x; shift; \"$@\"").contains(&"rm x".to_string()));
    // A function called on the line runs with the call's words.
    assert!(commands("f() { rm -rf \"$1\"; }; f ~").contains(&"rm -rf ~".to_string()));
    assert!(commands("f() { f; }; f").len() < 4);
}

#[test]
fn a_shell_string_reads_the_words_after_it_as_its_parameters() {
    assert!(commands("sh -c 'rm -rf \"$1\"' x /").contains(&"rm -rf /".to_string()));
    assert!(
        commands("env -i sh -c 'rm -rf \"$0\"' /home/dev")
            .contains(&"rm -rf /home/dev".to_string())
    );
    assert!(commands("bash -c 'rm -rf \"$@\"' _ a b").contains(&"rm -rf a b".to_string()));
    assert!(commands("bash -c 'ls \"$#\"' _ a b").contains(&"ls 2".to_string()));
    // A word that is not literal (`{}`, `"$@"`) leaves them unknown.
    assert!(!commands("find . -exec sh -c 'rm \"$1\"' _ {} \\;").contains(&"rm ".to_string()));
    assert!(
        commands("sh -c 'rm \"$2\"' _ \"$x\" b")
            .iter()
            .all(|c| c != "rm b")
    );
    // The script runs in a new shell: the line's own parameters are not its.
    assert!(commands("set -- a; sh -c 'x' _ b; ls \"$1\"").contains(&"ls a".to_string()));
}

#[test]
fn read_from_a_literal_line_is_known() {
    assert!(commands("read -a a <<< 'rm -rf /x'; \"${a[@]}\"").contains(&"rm -rf /x".to_string()));
    assert!(commands("read p q <<< 'ls -la src'; $p $q").contains(&"ls -la src".to_string()));
    // Several lines are read one by one: not one known value.
    assert!(!commands("read l <<'E'\nls\nrm -rf /\nE\n$l").contains(&"ls".to_string()));
}

#[test]
fn a_substring_of_no_length_is_empty() {
    assert_eq!(program("${PATH:0:0}rm -rf ~").as_deref(), Some("rm"));
}
