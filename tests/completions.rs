//! `aq completions` and `aq man`: made from the clap
//! definitions, tried in a real bash and rendered by a real `man`.

use crate::util::{Env, aq_exe};

/// What bash offers for `words` (the last one being completed).
pub(crate) fn bash_completes(words: &str) -> String {
    let script = format!(
        "source <({aq} completions bash)\n\
         COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n\
         COMP_LINE=\"{words}\"; COMP_POINT=${{#COMP_LINE}}\n\
         _aq aq \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        aq = aq_exe()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bash_completes_verbs_and_their_flags_but_not_the_hidden_ones() {
    let verbs = bash_completes("aq r");
    for v in ["run", "report"] {
        assert!(verbs.lines().any(|l| l == v), "{v} in {verbs:?}");
    }
    let flags = bash_completes("aq allow --re");
    for f in ["--read-only", "--remove"] {
        assert!(flags.lines().any(|l| l == f), "{f} in {flags:?}");
    }
    let hidden = bash_completes("aq _");
    assert!(
        !hidden.contains("__probe") && !hidden.contains("__connect"),
        "{hidden:?}"
    );
}

#[test]
fn zsh_and_fish_get_their_own_scripts() {
    let env = Env::new();
    env.aq(&["completions", "zsh"])
        .code(0)
        .stdout_has("#compdef aq")
        .stdout_has("'run:")
        .stdout_lacks("__probe");
    env.aq(&["completions", "fish"])
        .code(0)
        .stdout_has("complete -c aq")
        .stdout_has("-a \"verify\"")
        .stdout_lacks("__connect");
    env.aq(&["completions", "tcsh"]).code(2);
}

#[test]
fn man_pages_render_for_aq_and_each_verb() {
    let env = Env::new();
    env.aq(&["man"])
        .code(0)
        .stdout_has(".TH aq 1")
        .stdout_has("aq \\- A command firewall")
        .stdout_lacks("__probe");
    let dir = env.root().join("man");
    let dir_arg = dir.display().to_string();
    env.aq(&["man", "--out", &dir_arg])
        .code(0)
        .stdout_has("pages into");
    for page in ["aq.1", "aq-run.1", "aq-allow.1", "aq-verify.1"] {
        assert!(dir.join(page).is_file(), "no {page}");
    }
    assert!(!dir.join("aq-__probe.1").exists());
    // Rendered by man itself, where it is installed.
    let Ok(out) = std::process::Command::new("man")
        .arg("-l")
        .arg(dir.join("aq-run.1"))
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80")
        .output()
    else {
        aq_testkit::skip("no man to render the page");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("aq-run - Run an agent or any command"),
        "{text}"
    );
    assert!(text.contains("--profile"), "{text}");
}
