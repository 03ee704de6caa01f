//! `aq mcp run`: a stdio MCP server (a small one the tests ship) in the
//! sandbox, its stdio passed through, its tool calls logged and refused
//! by `[mcp] deny`. Each boundary is tried with the same server run bare
//! first (the positive control).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::Env;

const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-MCP-KEY-MATERIAL\n-----END OPENSSH PRIVATE KEY-----\n";

fn server() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agents/mcp_server.py")
        .display()
        .to_string()
}

/// Sends `calls` (one JSON-RPC line each) to `cmd`'s stdin and returns the
/// answers by id.
fn exchange(mut cmd: Command, calls: &[Value]) -> (Vec<Value>, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for call in calls {
        writeln!(stdin, "{call}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        answers.push(serde_json::from_str(&line).unwrap_or(Value::Null));
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    (
        answers,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn call(id: u32, name: &str, args: Value) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

#[test]
fn an_mcp_server_in_the_sandbox_cannot_read_keys_or_connect_and_its_calls_are_logged() {
    let env = Env::new();
    env.write(
        &env.user_policy(),
        "version = 1\n[mcp]\ndeny = [\"toy.echo\"]\n",
    );
    let home = env.root().join("home");
    env.write(&home.join(".ssh/id_rsa"), KEY);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let calls = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        call(2, "read_file", serde_json::json!({"path": "~/.ssh/id_rsa"})),
        call(
            3,
            "connect",
            serde_json::json!({"host": "127.0.0.1", "port": port}),
        ),
        call(4, "echo", serde_json::json!({"text": "hi"})),
    ];
    // Control: bare, the server reads the key and connects.
    let mut bare = Command::new("python3");
    bare.arg(server()).env("HOME", &home);
    let (answers, _) = exchange(bare, &calls);
    assert!(
        answers[1].to_string().contains("FAKE-MCP-KEY"),
        "{answers:?}"
    );
    assert!(answers[2].to_string().contains("connected"), "{answers:?}");

    // Under aq mcp run: the same calls.
    let mut cmd = env.command(
        &env.work(),
        &["mcp", "run", "--name", "toy", "--", "python3", &server()],
    );
    cmd.env_remove("AQ_TEST_NOTHING");
    let (answers, stderr) = exchange(cmd, &calls);
    assert_eq!(
        answers[0]["result"]["serverInfo"]["name"], "toy",
        "{answers:?}\n{stderr}"
    );
    assert!(
        !answers[1].to_string().contains("FAKE-MCP-KEY"),
        "the key was read through the MCP server: {answers:?}"
    );
    assert!(
        answers[2].to_string().contains("error"),
        "the server connected out of the sandbox: {answers:?}"
    );
    assert_eq!(answers[3]["id"], 4, "{answers:?}");
    assert!(
        answers[3]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("[mcp] deny")),
        "{answers:?}"
    );
    let session = env.only_session();
    let logged = session.events_of("mcp_tool_call");
    assert_eq!(logged.len(), 3, "{}", session.log_text());
    assert_eq!(logged[0]["tool"], "read_file");
    assert!(logged[0]["arguments"].as_str().unwrap().contains("id_rsa"));
    assert_eq!(logged[2]["decision"], "block");
    assert_eq!(logged[2]["server"], "toy");
}

#[test]
fn a_wrapped_client_entry_starts_the_server_under_aq_and_unwrap_restores_the_file() {
    let env = Env::new();
    let home = env.root().join("home");
    let config = home.join(".cursor/mcp.json");
    let original = format!(
        "{{\n  \"mcpServers\": {{\n    \"toy\": {{\"command\": \"python3\", \"args\": [\"{}\"], \"env\": {{\"TOY\": \"1\"}}}},\n    \"web\": {{\"url\": \"https://mcp.example.invalid/sse\"}}\n  }}\n}}\n",
        server()
    );
    env.write(&config, &original);
    env.aq(&["mcp", "wrap", "--client", "cursor"])
        .code(0)
        .stdout_has("toy: wrapped")
        .stdout_has("web: not wrappable");
    let wrapped: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let entry = &wrapped["mcpServers"]["toy"];
    assert_eq!(entry["env"]["TOY"], "1");
    // The client would start exactly this: it answers, from the sandbox.
    let args: Vec<String> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert_eq!(&args[..5], ["mcp", "run", "--name", "toy", "--"]);
    let mut cmd = env.command(&env.work(), &[]);
    cmd.args(&args);
    let (answers, stderr) = exchange(
        cmd,
        &[serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})],
    );
    assert_eq!(
        answers[0]["result"]["serverInfo"]["name"], "toy",
        "{stderr}"
    );
    assert!(
        env.sessions()
            .iter()
            .any(|s| s.events_of("session_start")[0]["profile"] == "strict")
    );
    env.aq(&["mcp", "unwrap", "--client", "cursor"])
        .code(0)
        .stdout_has("toy: unwrapped");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
}
