//! `aq-shim`: the program the `PATH` shims of a session link to. It is
//! `aq`'s shim mode alone (`aq_shim::entry`), built as its own small binary
//! because it starts once for every command an agent runs through `PATH`:
//! it loads and relocates a fraction of what `aq` does. On x86-64 Linux
//! the shim links point to a smaller program still, with no C library
//! (`aq_shim::tiny`); this one serves everywhere else.

fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    match aq_shim::entry::shim_program_name(&argv0) {
        Some(name) => aq_shim::entry::run(&name, args.collect()),
        None => {
            eprintln!("{}", aq_shim::wire::OWN_NAME);
            std::process::ExitCode::from(2)
        }
    }
}
