//! `aq __connect HOST PORT`: a `ProxyCommand` for ssh inside a sandbox whose
//! network goes through the broker. It asks the session's relay for a
//! tunnel (`CONNECT HOST:PORT`) and then copies stdin to it and it to
//! stdout, so `git` over SSH reaches the hosts the allowlist names (with
//! their port: `github.com:22`) and nothing else.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::ExitCode;

/// Open the tunnel through the relay on `127.0.0.1:relay_port` and relay
/// until both directions end.
pub fn run(host: &str, port: u16, relay_port: u16) -> ExitCode {
    match tunnel(host, port, relay_port) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("aq: {msg}");
            ExitCode::from(1)
        }
    }
}

fn tunnel(host: &str, port: u16, relay_port: u16) -> Result<(), String> {
    let relay = ("127.0.0.1", relay_port);
    let mut stream = TcpStream::connect(relay).map_err(|e| {
        format!(
            "no network relay at 127.0.0.1:{} ({e}): run inside `aq run --net allow:{host}:{port}`",
            relay.1
        )
    })?;
    write!(
        stream,
        "CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"
    )
    .map_err(|e| format!("relay: {e}"))?;
    // The answer's head, byte by byte: nothing of the tunnel is read early.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 16 * 1024 || stream.read(&mut byte).map_err(|e| e.to_string())? == 0 {
            return Err("the relay closed the connection".to_string());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        let mut body = String::new();
        let _ = stream.read_to_string(&mut body);
        return Err(format!(
            "{host}:{port} refused: {}",
            body.trim().lines().next().unwrap_or(status)
        ));
    }
    let mut up = stream.try_clone().map_err(|e| e.to_string())?;
    let sender = std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut up);
        let _ = up.shutdown(Shutdown::Write);
    });
    let mut out = std::io::stdout().lock();
    let _ = std::io::copy(&mut stream, &mut out);
    let _ = out.flush();
    drop(sender);
    Ok(())
}
