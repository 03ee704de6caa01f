//! Shim mode: `aq` started through a link named after another program runs
//! `aq_shim::entry` (the whole of the small `aq-shim` binary too). The shim
//! does not judge: it sends the argument vector to the session's supervisor
//! (`aq run`, see `aq_session::supervisor`), which judges, logs and waits for
//! a human on an `ask`. The refusal text both share is `aq_session::refusal`.

pub use aq_shim::entry::{run, shim_name};

pub use aq_session::refusal::refusal_text_line;
