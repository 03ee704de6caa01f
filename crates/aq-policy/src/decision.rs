//! Decisions and risk levels: ordered, so the strictest one wins.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::UnknownName;

/// What happens to a command. Ordered: `Allow < Ask < Block`, so the most
/// severe decision over every command of a line is simply the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Runs (and is still logged).
    Allow,
    /// Needs a human's approval.
    Ask,
    /// Refused.
    Block,
}

impl Decision {
    /// The lowercase name used in policy files, JSON and the audit log.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Block => "block",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Decision {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s {
            "allow" => Ok(Decision::Allow),
            "ask" => Ok(Decision::Ask),
            "block" => Ok(Decision::Block),
            other => Err(UnknownName::Decision(other.to_string())),
        }
    }
}

/// How much harm a rule's match can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Little or no harm.
    Low,
    /// Harm that can be undone.
    Medium,
    /// Loss of data, secrets or control that is hard to undo.
    High,
    /// Loss of the machine, its secrets or its integrity.
    Critical,
}

impl Risk {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
            Risk::Critical => "critical",
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Risk {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s {
            "low" => Ok(Risk::Low),
            "medium" => Ok(Risk::Medium),
            "high" => Ok(Risk::High),
            "critical" => Ok(Risk::Critical),
            other => Err(UnknownName::Risk(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictest_decision_is_the_maximum() {
        let all = [Decision::Ask, Decision::Allow, Decision::Block];
        assert_eq!(all.iter().max(), Some(&Decision::Block));
        assert!(Decision::Allow < Decision::Ask);
    }

    #[test]
    fn decisions_round_trip() {
        for d in [Decision::Allow, Decision::Ask, Decision::Block] {
            assert_eq!(d.as_str().parse::<Decision>(), Ok(d));
        }
        assert!("deny".parse::<Decision>().is_err());
    }
}
