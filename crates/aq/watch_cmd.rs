//! `aq watch`: a live console over running sessions, or their events as
//! JSON lines (see the `aq_watch` crate).

use aq_watch::Target;

use crate::cli::WatchArgs;
use crate::exit::ExitCode;

pub fn run(args: &WatchArgs) -> Result<ExitCode, String> {
    let target = match (&args.session, args.latest) {
        (Some(id), _) => Target::Session(id.clone()),
        (None, true) => Target::Latest,
        (None, false) => Target::AllLive,
    };
    if args.json {
        aq_watch::jsonl::stream(target, &mut std::io::stdout().lock())?;
    } else {
        aq_watch::console::run(target)?;
    }
    Ok(ExitCode::Ok)
}
