//! Audit records as OpenTelemetry logs: an `ExportLogsServiceRequest` in
//! the OTLP/JSON encoding (camelCase field names, 64-bit integers as
//! decimal strings, enums as numbers), POSTed to `/v1/logs`.
//!
//! The few message types are written out here rather than taken from
//! `opentelemetry-proto`: its JSON support comes with prost and the
//! OpenTelemetry SDK crates, a large tree for eight small structs.
//!
//! Mapping, one record to one `LogRecord`:
//!
//! | OTLP | from the record |
//! |---|---|
//! | resource `service.name`, `service.version` | `agent-quarantine`, this crate's version |
//! | resource `aq.session.id` | `session` |
//! | `timeUnixNano` | `ts` (0, "unknown", when missing or unreadable) |
//! | `observedTimeUnixNano` | when the export read it |
//! | `severityNumber`/`severityText` | refusals 13 `WARN`, asks and approvals 10 `INFO2`, else 9 `INFO` |
//! | `body` | a short line for a person |
//! | `aq.event`, `aq.seq`, `aq.decision`, `aq.rule` | kind, seq, decision (or answer), deciding rule |
//! | `process.command_line`, `process.command_args` | the command, already redacted in the log |
//! | `aq.<field>` | every other field of the event, typed |

use aq_audit::Record;
use serde::Serialize;
use serde_json::Value;

use crate::describe::{self, Level};

/// `service.name` of every resource.
pub(crate) const SERVICE_NAME: &str = "agent-quarantine";

/// The request body of one POST.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportLogsServiceRequest {
    /// One per session in the batch.
    pub resource_logs: Vec<ResourceLogs>,
}

/// The logs of one resource (one session).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLogs {
    /// Who emitted them.
    pub resource: Resource,
    /// The records, under one scope.
    pub scope_logs: Vec<ScopeLogs>,
}

/// A resource: attributes only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resource {
    /// `service.name`, `service.version`, `aq.session.id`, `host.name`.
    pub attributes: Vec<KeyValue>,
}

/// Records of one instrumentation scope.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopeLogs {
    /// The scope: the audit log.
    pub scope: Scope,
    /// The records.
    pub log_records: Vec<LogRecord>,
}

/// An instrumentation scope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scope {
    /// `agent-quarantine.audit`.
    pub name: String,
    /// This crate's version.
    pub version: String,
}

/// One log record.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogRecord {
    /// When it happened, nanoseconds since the Unix epoch, as a string.
    pub time_unix_nano: String,
    /// When the exporter read it.
    pub observed_time_unix_nano: String,
    /// 9 INFO, 10 INFO2, 13 WARN.
    pub severity_number: u8,
    /// `INFO`, `INFO2` or `WARN`.
    pub severity_text: String,
    /// A short line for a person.
    pub body: AnyValue,
    /// The fields.
    pub attributes: Vec<KeyValue>,
}

/// A named value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyValue {
    /// The name.
    pub key: String,
    /// The value.
    pub value: AnyValue,
}

/// An OTLP value (`{"stringValue": "..."}` and so on).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AnyValue {
    /// Text.
    StringValue(String),
    /// A boolean.
    BoolValue(bool),
    /// A 64-bit integer, as a decimal string (OTLP/JSON).
    IntValue(String),
    /// A float.
    DoubleValue(f64),
    /// A list.
    ArrayValue {
        /// Its items.
        values: Vec<AnyValue>,
    },
    /// A map.
    KvlistValue {
        /// Its entries.
        values: Vec<KeyValue>,
    },
}

fn kv(key: &str, value: AnyValue) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value,
    }
}

fn string(s: &str) -> AnyValue {
    AnyValue::StringValue(s.to_string())
}

/// A JSON value as an OTLP value; `None` for null.
fn any(v: &Value) -> Option<AnyValue> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => AnyValue::BoolValue(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => AnyValue::IntValue(i.to_string()),
            (None, Some(u)) => AnyValue::IntValue(u.to_string()),
            _ => AnyValue::DoubleValue(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => string(s),
        Value::Array(items) => AnyValue::ArrayValue {
            values: items.iter().filter_map(any).collect(),
        },
        Value::Object(map) => AnyValue::KvlistValue {
            values: map
                .iter()
                .filter_map(|(k, v)| any(v).map(|v| kv(k, v)))
                .collect(),
        },
    })
}

/// Nanoseconds since the epoch of an RFC 3339 time, as OTLP/JSON writes them.
pub(crate) fn unix_nanos(ts: &str) -> String {
    humantime::parse_rfc3339(ts)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos().to_string())
        .unwrap_or_else(|| "0".to_string())
}

/// Envelope fields, and those mapped to named attributes.
const MAPPED: [&str; 10] = [
    "seq", "ts", "session", "prev", "event", "argv", "command", "decision", "rule", "rules",
];

/// One record as a log record; `observed` is the export time (Unix ns).
pub fn log_record(record: &Record, observed: &str) -> LogRecord {
    let v = describe::to_value(record);
    let (severity_number, severity_text) = match describe::level(&v) {
        Level::Info => (9, "INFO"),
        Level::Notice => (10, "INFO2"),
        Level::Warn => (13, "WARN"),
    };
    let mut attributes = vec![kv("aq.event", string(describe::kind(&v)))];
    if let Some(seq) = v.get("seq").and_then(any) {
        attributes.push(kv("aq.seq", seq));
    }
    if let Some(d) = v.get("decision").and_then(Value::as_str) {
        attributes.push(kv("aq.decision", string(d)));
    }
    if let Some(r) = describe::rule(&v) {
        attributes.push(kv("aq.rule", string(r)));
    }
    if let Some(rules) = v.get("rules").and_then(any) {
        attributes.push(kv("aq.rules", rules));
    }
    if let Some(words) = describe::argv(&v) {
        attributes.push(kv(
            "process.command_line",
            string(&aq_audit::report::display_argv(&words)),
        ));
        attributes.push(kv(
            "process.command_args",
            AnyValue::ArrayValue {
                values: words.iter().map(|w| string(w)).collect(),
            },
        ));
    }
    if let Some(map) = v.as_object() {
        for (field, value) in map {
            if MAPPED.contains(&field.as_str()) {
                continue;
            }
            if let Some(value) = any(value) {
                attributes.push(kv(&format!("aq.{field}"), value));
            }
        }
    }
    LogRecord {
        time_unix_nano: unix_nanos(describe::text(&v, "ts")),
        observed_time_unix_nano: observed.to_string(),
        severity_number,
        severity_text: severity_text.to_string(),
        body: string(&describe::headline(&v)),
        attributes,
    }
}

/// A request for a batch of records, grouped by session (one resource
/// each, in order of first appearance).
pub fn request(records: &[Record], host: Option<&str>, observed: &str) -> ExportLogsServiceRequest {
    let mut resource_logs: Vec<(String, ResourceLogs)> = Vec::new();
    for record in records {
        let session = record.session().unwrap_or("").to_string();
        let i = match resource_logs.iter().position(|(s, _)| *s == session) {
            Some(i) => i,
            None => {
                let mut attributes = vec![
                    kv("service.name", string(SERVICE_NAME)),
                    kv("service.version", string(env!("CARGO_PKG_VERSION"))),
                    kv("aq.session.id", string(&session)),
                ];
                if let Some(h) = host {
                    attributes.push(kv("host.name", string(h)));
                }
                resource_logs.push((
                    session.clone(),
                    ResourceLogs {
                        resource: Resource { attributes },
                        scope_logs: vec![ScopeLogs {
                            scope: Scope {
                                name: format!("{SERVICE_NAME}.audit"),
                                version: env!("CARGO_PKG_VERSION").to_string(),
                            },
                            log_records: Vec::new(),
                        }],
                    },
                ));
                resource_logs.len() - 1
            }
        };
        resource_logs[i].1.scope_logs[0]
            .log_records
            .push(log_record(record, observed));
    }
    ExportLogsServiceRequest {
        resource_logs: resource_logs.into_iter().map(|(_, r)| r).collect(),
    }
}

/// How many records a receiver says it rejected in a 2xx answer
/// (`partialSuccess.rejectedLogRecords`, a string or a number).
pub fn rejected(answer: &str) -> u64 {
    let Ok(v) = serde_json::from_str::<Value>(answer) else {
        return 0;
    };
    match v.pointer("/partialSuccess/rejectedLogRecords") {
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(v: Value) -> Record {
        Record::parse(&v.to_string()).unwrap()
    }

    fn attr<'a>(rec: &'a Value, key: &str) -> &'a Value {
        rec["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == key)
            .map(|a| &a["value"])
            .unwrap_or_else(|| panic!("no attribute {key} in {rec}"))
    }

    fn blocked() -> Record {
        record(
            json!({"seq":2,"ts":"2025-01-01T10:00:01.500Z","session":"s1","prev":"x",
            "event":"command_decision","argv":["sh","-c","echo \"}]\\\\ x"],"cwd":"/w","pid":7,"ppid":1,
            "decision":"block","rules":["net-pipe-to-shell","exec-shell-string"],"why":"w","safer":null,
            "source":"shim"}),
        )
    }

    #[test]
    fn a_blocked_command_maps_to_a_warning_with_its_rule() {
        let req = request(&[blocked()], Some("h"), "42");
        let v = serde_json::to_value(&req).unwrap();
        let res = &v["resourceLogs"][0]["resource"]["attributes"];
        assert_eq!(
            res[0],
            json!({"key":"service.name","value":{"stringValue":"agent-quarantine"}})
        );
        assert_eq!(
            res[2],
            json!({"key":"aq.session.id","value":{"stringValue":"s1"}})
        );
        assert_eq!(res[3]["value"]["stringValue"], "h");
        let rec = &v["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0];
        assert_eq!(rec["timeUnixNano"], "1735725601500000000");
        assert_eq!(rec["observedTimeUnixNano"], "42");
        assert_eq!(rec["severityNumber"], 13);
        assert_eq!(rec["severityText"], "WARN");
        assert_eq!(
            attr(rec, "aq.event"),
            &json!({"stringValue":"command_decision"})
        );
        assert_eq!(attr(rec, "aq.seq"), &json!({"intValue":"2"}));
        assert_eq!(attr(rec, "aq.decision"), &json!({"stringValue":"block"}));
        assert_eq!(
            attr(rec, "aq.rule"),
            &json!({"stringValue":"net-pipe-to-shell"})
        );
        assert_eq!(attr(rec, "aq.pid"), &json!({"intValue":"7"}));
        // A hostile word stays one string value.
        assert_eq!(
            attr(rec, "process.command_args")["arrayValue"]["values"][2],
            json!({"stringValue":"echo \"}]\\\\ x"})
        );
        assert!(
            rec["body"]["stringValue"]
                .as_str()
                .unwrap()
                .starts_with("block sh -c")
        );
        // Null fields are left out rather than sent empty.
        assert!(
            rec["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a["key"] != "aq.safer")
        );
    }

    #[test]
    fn sessions_get_a_resource_each_and_unknown_kinds_ship() {
        let other = record(
            json!({"seq":1,"ts":"bad","session":"s2","prev":"x","event":"future","n":1.5,"ok":true}),
        );
        let req = request(&[blocked(), other, blocked()], None, "1");
        assert_eq!(req.resource_logs.len(), 2);
        assert_eq!(req.resource_logs[0].scope_logs[0].log_records.len(), 2);
        let rec = serde_json::to_value(&req.resource_logs[1].scope_logs[0].log_records[0]).unwrap();
        assert_eq!(rec["timeUnixNano"], "0");
        assert_eq!(attr(&rec, "aq.n"), &json!({"doubleValue":1.5}));
        assert_eq!(attr(&rec, "aq.ok"), &json!({"boolValue":true}));
        assert_eq!(rec["body"]["stringValue"], "future");
    }

    #[test]
    fn partial_success_counts_rejections() {
        assert_eq!(
            rejected(r#"{"partialSuccess":{"rejectedLogRecords":"3"}}"#),
            3
        );
        assert_eq!(
            rejected(r#"{"partialSuccess":{"rejectedLogRecords":2}}"#),
            2
        );
        assert_eq!(rejected("{}"), 0);
        assert_eq!(rejected(""), 0);
    }
}
