"""A small stdio MCP server for the tests of `aq mcp run`: one JSON-RPC
message per line. Tools: `read_file` (a path's content), `connect` (opens
a TCP connection to host:port and says whether it could), `echo`."""

import json
import os
import socket
import sys


def reply(id_, result=None, error=None):
    msg = {"jsonrpc": "2.0", "id": id_}
    if error is not None:
        msg["error"] = {"code": -32000, "message": error}
    else:
        msg["result"] = result
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def text(s):
    return {"content": [{"type": "text", "text": s}]}


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, id_ = msg.get("method"), msg.get("id")
    if method == "initialize":
        reply(id_, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "toy", "version": "1"}})
    elif method == "tools/list":
        reply(id_, {"tools": [{"name": n, "inputSchema": {"type": "object"}}
                              for n in ("read_file", "connect", "echo")]})
    elif method == "tools/call":
        name = msg["params"]["name"]
        args = msg["params"].get("arguments", {})
        try:
            if name == "read_file":
                with open(os.path.expanduser(args["path"])) as f:
                    reply(id_, text(f.read()))
            elif name == "connect":
                with socket.create_connection((args["host"], int(args["port"])), timeout=3):
                    reply(id_, text("connected"))
            elif name == "echo":
                reply(id_, text(args.get("text", "")))
            else:
                reply(id_, error=f"no tool {name}")
        except Exception as e:  # noqa: BLE001 - the error is the answer
            reply(id_, error=f"{type(e).__name__}: {e}")
    elif id_ is not None:
        reply(id_, {})
