//! When `aq allow` and `aq deny` made each grant, so `aq policy show` can
//! date it: `$XDG_CONFIG_HOME/agent-quarantine/grants.toml`, beside the
//! policy file, which stays as the user wrote it. An entry written by hand
//! has no date; a date whose entry is gone from the policy file is never
//! shown (nothing looks it up).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::error::GrantDatesError;
use crate::policy_files::{config_dir, read_text};

const DATES_FILE: &str = "grants.toml";

const HEADER: &str = "\
# When `aq allow` and `aq deny` made each grant of policy.toml, for `aq policy
# show`. Written by aq; the grants themselves are in policy.toml.

";

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DatesFile {
    #[serde(default)]
    grant: Vec<GrantDate>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GrantDate {
    /// The list, as `aq grants` names it: `[network] allow`.
    place: String,
    /// The entry in it.
    entry: String,
    /// When (RFC 3339).
    date: String,
}

/// The recorded dates of the user's grants.
#[derive(Debug, Default)]
pub struct GrantDates {
    path: Option<PathBuf>,
    entries: Vec<GrantDate>,
}

impl GrantDates {
    /// Reads the record; none yet means no dates.
    pub fn load() -> Result<Self, GrantDatesError> {
        let Some(path) = config_dir().map(|d| d.join(DATES_FILE)) else {
            return Ok(GrantDates::default());
        };
        let entries = match read_text(&path).map_err(GrantDatesError::Read)? {
            None => Vec::new(),
            Some(text) => {
                toml::from_str::<DatesFile>(&text)
                    .map_err(|source| GrantDatesError::Broken {
                        path: path.clone(),
                        source,
                    })?
                    .grant
            }
        };
        Ok(GrantDates {
            path: Some(path),
            entries,
        })
    }

    /// When the grant `entry` in `place` was made, if recorded.
    pub(crate) fn date_of(&self, place: &str, entry: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|d| d.place == place && d.entry == entry)
            .map(|d| d.date.as_str())
    }

    /// Records that `entry` was added to `place` at `date`.
    pub fn record(&mut self, place: &str, entry: &str, date: String) {
        self.forget(place, entry);
        self.entries.push(GrantDate {
            place: place.to_string(),
            entry: entry.to_string(),
            date,
        });
    }

    /// Forgets the date of `entry` in `place` (it was taken out).
    pub fn forget(&mut self, place: &str, entry: &str) {
        self.entries
            .retain(|d| !(d.place == place && d.entry == entry));
    }

    /// Writes the record back.
    pub fn save(&self) -> Result<(), GrantDatesError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let body = toml::to_string(&DatesFile {
            grant: self.entries.clone(),
        })
        .map_err(GrantDatesError::Encode)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| GrantDatesError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(path, format!("{HEADER}{body}")).map_err(|source| GrantDatesError::Write {
            path: path.clone(),
            source,
        })
    }
}
