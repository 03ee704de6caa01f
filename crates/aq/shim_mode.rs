//! Shim mode: `aq` started through a link named after another program runs
//! `aq_shim::entry` (the whole of the small `aq-shim` binary too). The shim
//! does not judge: it sends the argument vector to the session's supervisor
//! (`aq run`, see `aq_session::supervisor`), which judges, logs and waits for
//! a human on an `ask`. The refusal text both share is `aq_session::refusal`.

pub use aq_shim::entry::{run, shim_name};

pub use aq_session::refusal::refusal_text_line;

#[cfg(test)]
mod tests {
    use crate::exit::ExitCode;

    /// The small shim binary exits with the same codes as `aq`.
    #[test]
    fn the_shim_binary_uses_aqs_exit_codes() {
        assert_eq!(aq_session::refusal::EXIT_BLOCKED, ExitCode::Blocked.code());
        assert_eq!(
            aq_session::refusal::EXIT_NOT_FOUND,
            ExitCode::NotFound.code()
        );
    }
}
