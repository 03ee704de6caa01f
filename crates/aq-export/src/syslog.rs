//! Audit records as RFC 5424 syslog messages:
//!
//! ```text
//! <PRI>1 TIMESTAMP HOSTNAME aq PROCID MSGID [aq@32473 session="..." seq="..." decision="..." rule="..."] MSG
//! ```
//!
//! - facility `authpriv` (10): the messages hold command lines, and most
//!   systems keep authpriv in a file only root reads;
//! - severity from the record's level: warning (4) for refusals, notice (5)
//!   for asks and approvals, informational (6) otherwise;
//! - TIMESTAMP is the event's own `ts`, PROCID the pid the event names
//!   (`-` when none), MSGID the event kind;
//! - the SD-ID `aq@32473` uses 32473, the private enterprise number RFC 5612
//!   reserves for documentation: aq has none of its own;
//! - MSG is the short line for a person, without a BOM (RFC 5424 MSG-ANY),
//!   control characters written as `\n`, `\u{1b}` and so on, so that a
//!   hostile command cannot forge a second line at a line-based receiver.
//!
//! Written here rather than with the `syslog` crate, whose transports and
//! `log` facade we do not need: the whole format is this page.

use std::fmt::Write as _;

use aq_audit::Record;

use crate::describe::{self, Level};

/// `authpriv`.
pub(crate) const FACILITY: u8 = 10;
/// The SD-ID of aq's structured data.
pub(crate) const SD_ID: &str = "aq@32473";
/// APP-NAME.
pub(crate) const APP_NAME: &str = "aq";
/// Longest MSG, in characters: a message fits a UDP datagram.
const MSG_MAX: usize = 2000;

/// The syslog severity of a level.
pub fn severity(level: Level) -> u8 {
    match level {
        Level::Warn => 4,
        Level::Notice => 5,
        Level::Info => 6,
    }
}

/// A PARAM-VALUE with `"`, `\` and `]` escaped (RFC 5424 §6.3.3).
pub(crate) fn escape_param(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '"' | '\\' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A header field: printable US-ASCII only, at most `max` characters,
/// `-` (NILVALUE) when empty.
fn header_field(value: &str, max: usize) -> String {
    let cleaned: String = value
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(max)
        .collect();
    if cleaned.is_empty() {
        "-".to_string()
    } else {
        cleaned
    }
}

/// Control characters written out, so one record is one line.
fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// One record as one message; `host` is this machine's name, if known.
pub fn message(record: &Record, host: Option<&str>) -> String {
    let v = describe::to_value(record);
    let pri = FACILITY * 8 + severity(describe::level(&v));
    let ts = describe::text(&v, "ts");
    let timestamp = if humantime::parse_rfc3339(ts).is_ok() {
        ts
    } else {
        "-"
    };
    let procid = v
        .get("pid")
        .and_then(serde_json::Value::as_u64)
        .map(|p| p.to_string())
        .unwrap_or_default();
    let mut sd = format!("[{SD_ID}");
    let mut param = |name: &str, value: &str| {
        let _ = write!(sd, " {name}=\"{}\"", escape_param(value));
    };
    param("session", record.session().unwrap_or(""));
    if let Some(seq) = record.seq() {
        param("seq", &seq.to_string());
    }
    if let Some(d) = describe::decision(&v) {
        param("decision", d);
    }
    if let Some(r) = describe::rule(&v) {
        param("rule", r);
    }
    sd.push(']');
    format!(
        "<{pri}>1 {timestamp} {} {APP_NAME} {} {} {sd} {}",
        header_field(host.unwrap_or(""), 255),
        header_field(&procid, 128),
        header_field(describe::kind(&v), 32),
        describe::shorten(&one_line(&describe::headline(&v)), MSG_MAX)
    )
}

/// RFC 6587 octet counting: `LEN SP MSG`, for a stream transport.
pub fn frame(message: &str) -> String {
    format!("{} {message}", message.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(v: serde_json::Value) -> Record {
        Record::parse(&v.to_string()).unwrap()
    }

    #[test]
    fn a_blocked_command_is_an_authpriv_warning_with_escaped_data() {
        let r = record(
            json!({"seq":3,"ts":"2025-01-01T10:00:01.500Z","session":"s\"1]","prev":"x",
            "event":"command_decision","argv":["rm","-rf","/"],"cwd":"/w","pid":77,"ppid":1,
            "decision":"block","rules":["fs-rm\\x]"],"why":null,"safer":null,"source":"shim"}),
        );
        assert_eq!(
            message(&r, Some("box 1")),
            "<84>1 2025-01-01T10:00:01.500Z box1 aq 77 command_decision \
             [aq@32473 session=\"s\\\"1\\]\" seq=\"3\" decision=\"block\" rule=\"fs-rm\\\\x\\]\"] \
             block rm -rf / [fs-rm\\x]]"
        );
    }

    #[test]
    fn nil_values_and_one_line() {
        let r = record(json!({"event":"future","session":"s","ts":"garbage"}));
        assert_eq!(
            message(&r, None),
            "<86>1 - - aq - future [aq@32473 session=\"s\"] future"
        );
        let r = record(
            json!({"seq":1,"ts":"2025-01-01T10:00:00Z","session":"s","prev":"x",
            "event":"approval","request":"r","argv":["echo","a\nb"],"answer":"once","by":"me"}),
        );
        let m = message(&r, Some("h"));
        assert!(m.starts_with("<85>1 "), "{m}");
        assert!(!m.contains('\n') && m.contains("a\\nb"), "{m}");
        assert!(m.contains("decision=\"once\""), "{m}");
    }

    #[test]
    fn octet_counting_counts_bytes() {
        assert_eq!(frame("<86>1 é"), "8 <86>1 é", "bytes, not characters");
    }
}
