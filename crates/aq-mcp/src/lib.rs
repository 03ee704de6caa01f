//! `aq mcp run`: a stdio MCP server runs in the sandbox, and its client
//! talks to it through `aq`, which passes every byte through untouched and
//! reads the JSON-RPC messages on the way: each `tools/call` is logged
//! (name and arguments) and, when the policy refuses that tool, answered
//! with a JSON-RPC error instead of being forwarded.
//!
//! The MCP stdio transport is one JSON-RPC message per line (UTF-8, no
//! embedded newlines). A line that is not JSON is passed on as it is: the
//! relay observes, it does not validate.
#![deny(missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};

use serde_json::Value;

/// A `tools/call` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The request id, as JSON (a number or a string).
    pub id: Value,
    /// The tool's name.
    pub name: String,
    /// Its arguments, as compact JSON text.
    pub arguments: String,
}

/// The tool call in one client line, if it is one.
pub fn tool_call(line: &str) -> Option<ToolCall> {
    let v: Value = serde_json::from_str(line.trim()).ok()?;
    if v.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    let params = v.get("params")?;
    Some(ToolCall {
        id: v.get("id").cloned().unwrap_or(Value::Null),
        name: params.get("name")?.as_str()?.to_string(),
        arguments: params
            .get("arguments")
            .map(Value::to_string)
            .unwrap_or_else(|| "{}".to_string()),
    })
}

/// What to do with a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallVerdict {
    /// Pass it to the server.
    Forward,
    /// Answer the client with this error message instead.
    Refuse(String),
}

/// The JSON-RPC error line answering a refused call.
pub fn refusal(id: &Value, message: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32001, "message": message}
        })
    )
}

/// Copies the client's lines to the server until the client closes,
/// asking `decide` about each tool call; a refused call is answered on
/// `to_client` (shared with the server's answers, hence the lock).
pub fn relay_client<R: Read, W: Write, C: Write>(
    from_client: R,
    mut to_server: W,
    to_client: &std::sync::Mutex<C>,
    decide: impl Fn(&ToolCall) -> CallVerdict,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(from_client);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if let Some(call) = tool_call(&line)
            && let CallVerdict::Refuse(message) = decide(&call)
        {
            let mut out = to_client
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?;
            out.write_all(refusal(&call.id, &message).as_bytes())?;
            out.flush()?;
            continue;
        }
        to_server.write_all(line.as_bytes())?;
        to_server.flush()?;
    }
}

/// Copies the server's bytes to the client until the server closes.
pub fn relay_server<R: Read, C: Write>(
    mut from_server: R,
    to_client: &std::sync::Mutex<C>,
) -> std::io::Result<()> {
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = from_server.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let mut out = to_client
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        out.write_all(&buf[..n])?;
        out.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn tool_calls_are_seen_and_other_messages_are_not() {
        let c = tool_call(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"~/.ssh/id_rsa"}}}"#).unwrap();
        assert_eq!(c.name, "read_file");
        assert_eq!(c.id, serde_json::json!(7));
        assert_eq!(c.arguments, r#"{"path":"~/.ssh/id_rsa"}"#);
        assert!(tool_call(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).is_none());
        assert!(tool_call("not json").is_none());
    }

    #[test]
    fn a_refused_call_is_answered_and_never_reaches_the_server() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"rm","arguments":{}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}"#,
            "\n"
        );
        let mut server = Vec::new();
        let client = Mutex::new(Vec::new());
        relay_client(input.as_bytes(), &mut server, &client, |c| {
            if c.name == "rm" {
                CallVerdict::Refuse("refused by aq".into())
            } else {
                CallVerdict::Forward
            }
        })
        .unwrap();
        let server = String::from_utf8(server).unwrap();
        assert!(server.contains("initialize") && server.contains("\"echo\""));
        assert!(!server.contains("\"rm\""));
        let answer: Value = serde_json::from_slice(&client.into_inner().unwrap()).unwrap();
        assert_eq!(answer["id"], "a");
        assert_eq!(answer["error"]["message"], "refused by aq");
    }
}
