//! Prints what the analyzer sees in a line: `cargo run --example dump -- 'LINE'`.
fn main() {
    for line in std::env::args().skip(1) {
        let a = aq_shell::analyze(&line);
        println!("== {line}");
        for (i, c) in a.commands.iter().enumerate() {
            let dyn_: Vec<_> = c
                .argv
                .iter()
                .map(|w| {
                    if w.dynamic {
                        format!("{}*{:?}", w.text, w.feeds)
                    } else {
                        w.text.clone()
                    }
                })
                .collect();
            println!(
                "  [{i}] {:?} via={:?} stdin={:?} runs={:?} priv={} code={:?} redir={:?}",
                dyn_,
                c.via,
                c.stdin,
                c.runs,
                c.privileged,
                c.code.as_ref().map(|c| (&c.lang, &c.literals)),
                c.redirects
                    .iter()
                    .map(|r| format!("{:?}{}", r.kind, r.target.text))
                    .collect::<Vec<_>>()
            );
        }
        if !a.problems.is_empty() {
            println!("  problems: {:?}", a.problems);
        }
        for e in &a.evaluated {
            println!(
                "  evaluated: {:?} in {} {:?} hides {:?}{}",
                e.kind,
                e.context,
                e.text.text,
                e.commands,
                if e.unknown { " (partly unknown)" } else { "" }
            );
        }
        if !a.self_spawning_functions.is_empty() {
            println!("  forkbomb: {:?}", a.self_spawning_functions);
        }
    }
}
