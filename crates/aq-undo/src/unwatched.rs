//! Where there is no inotify: a watcher that cannot start, so that every
//! checkpoint walks the whole workspace (what the caller does whenever a
//! watcher fails, with the reason given here).

use std::path::Path;

use crate::{Dirty, Error, Options, Result};

/// Never made: [`start`] always refuses.
pub(crate) enum Running {}

pub(crate) fn start(_: &Path, _: &Options) -> Result<Running> {
    Err(Error(format!(
        "cannot watch the workspace: no inotify on {}; every checkpoint walks it all",
        std::env::consts::OS
    )))
}

pub(crate) fn start_unwalked(workspace: &Path, opts: &Options) -> Result<Running> {
    start(workspace, opts)
}

impl Running {
    pub fn root(&self) -> &Path {
        match *self {}
    }

    pub fn cover(&self) -> Result<()> {
        match *self {}
    }

    pub fn add_dir(&self, _: &Path, _: &Path) {
        match *self {}
    }

    pub fn error(&self) -> Option<String> {
        match *self {}
    }

    pub fn changed(&self) -> bool {
        match *self {}
    }

    pub fn take(&self) -> Dirty {
        match *self {}
    }

    pub fn stop(&self) {
        match *self {}
    }
}
