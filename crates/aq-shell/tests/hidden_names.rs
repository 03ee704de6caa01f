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
