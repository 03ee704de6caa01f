"""The OpenAI Responses API, as the Codex CLI speaks it.

Codex POSTs {base_url}/responses with `stream: true` and reads server-sent
events: response.created, response.output_item.added/done (one item each:
an assistant message or a tool call), response.output_text.delta and a
closing response.completed carrying usage.  Any other request (a GET of
/models, a websocket upgrade on /responses, ...) gets a harmless answer
that makes Codex fall back to plain HTTP.

Which step a request gets = the number of tool results already in its
`input`.  A request that offers no shell tool is a side request (title,
summary, memory...) and gets a short text without moving the script.

The shell tool is whatever the request offers, found among its `tools` or
in `additional_tools` items of its `input` (possibly inside namespaces):
  shell          function  {"command": ["bash", "-lc", cmd]}
  shell_command  function  {"command": cmd}
  exec_command   function  {"cmd": cmd}
  local_shell    built-in  local_shell_call with an exec action
  exec           custom    "code mode": JavaScript calling tools.exec_command
Codex 0.171 offers `exec` (code mode, tools in `additional_tools`) for its
default model and a plain `exec_command` for a model it does not know
(`-m fake-model`).  Point it here with
`-c openai_base_url="http://127.0.0.1:PORT/v1"` and CODEX_API_KEY.
"""

import json
import uuid

SHELL_TOOLS = ("exec_command", "shell_command", "shell", "local_shell")


def respond(req, steps):
    body = req.body if isinstance(req.body, dict) else None
    if req.method == "POST" and req.path.endswith("/responses"):
        if body is None:  # e.g. a zstd-compressed body: we cannot read it
            req.json(415, {"error": {"message": "fake_model: send plain JSON "
                                     "(--disable enable_request_compression)",
                                     "type": "invalid_request_error"}})
            return
        req.sse(_events(_answer(body, steps), body))
    elif req.headers.get("upgrade", "").lower() == "websocket":
        # No websockets here: a plain refusal makes Codex use HTTP + SSE.
        req.json(426, {"error": {"message": "websocket not supported"}})
    elif req.path.endswith("/models"):
        req.json(200, {"object": "list", "data": [], "models": []})
    else:
        req.json(404, {"error": {"message": f"fake_model: no {req.method} {req.path}"}})


def _answer(body, steps):
    """The output item this request gets: a tool call or a message."""
    tool = _shell_tool(body)
    if tool is None:
        return _message("OK.")
    n = sum(1 for it in body.get("input") or []
            if isinstance(it, dict) and str(it.get("type", "")).endswith("_call_output"))
    step = steps[n] if n < len(steps) else {"text": "Done."}
    if "command" not in step:
        return _message(step.get("text", "Done."))
    return _call(tool, step["command"])


def _shell_tool(body):
    """(kind, name) of the shell tool the request offers, or None."""
    found = {}

    def walk(tools):
        for t in tools or []:
            if not isinstance(t, dict):
                continue
            if t.get("type") == "namespace":
                walk(t.get("tools"))
            elif t.get("type") == "local_shell":
                found.setdefault("local_shell", ("local_shell", "local_shell"))
            elif t.get("type") == "custom" and t.get("name") == "exec" \
                    and "tools.exec_command" in (t.get("description") or ""):
                found.setdefault("code", ("code", "exec"))
            elif t.get("name") in SHELL_TOOLS:
                found.setdefault(t["name"], ("function", t["name"]))

    walk(body.get("tools"))
    for it in body.get("input") or []:
        if isinstance(it, dict) and it.get("type") == "additional_tools":
            walk(it.get("tools"))
    for key in SHELL_TOOLS + ("code",):
        if key in found:
            return found[key]
    return None


def _call(tool, cmd):
    kind, name = tool
    call_id = "call_" + uuid.uuid4().hex[:24]
    if kind == "local_shell":
        return {"type": "local_shell_call", "id": "lsh_" + call_id[5:], "call_id": call_id,
                "status": "completed",
                "action": {"type": "exec", "command": ["bash", "-lc", cmd]}}
    if kind == "code":
        js = f"text(await tools.exec_command({json.dumps({'cmd': cmd})}));"
        return {"type": "custom_tool_call", "id": "ctc_" + call_id[5:], "call_id": call_id,
                "name": name, "input": js, "status": "completed"}
    args = {"exec_command": {"cmd": cmd},
            "shell_command": {"command": cmd},
            "shell": {"command": ["bash", "-lc", cmd]}}[name]
    return {"type": "function_call", "id": "fc_" + call_id[5:], "call_id": call_id,
            "name": name, "arguments": json.dumps(args), "status": "completed"}


def _message(text):
    return {"type": "message", "id": "msg_" + uuid.uuid4().hex[:24], "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _events(item, body):
    rid = "resp_" + uuid.uuid4().hex[:24]
    model = body.get("model", "fake")
    ev = [("response.created", {"type": "response.created",
                                "response": {"id": rid, "object": "response",
                                             "status": "in_progress", "model": model}})]
    if item["type"] == "message":
        empty = dict(item, status="in_progress", content=[])
        ev.append(("response.output_item.added",
                   {"type": "response.output_item.added", "output_index": 0, "item": empty}))
        ev.append(("response.output_text.delta",
                   {"type": "response.output_text.delta", "item_id": item["id"],
                    "output_index": 0, "content_index": 0,
                    "delta": item["content"][0]["text"]}))
    else:
        ev.append(("response.output_item.added",
                   {"type": "response.output_item.added", "output_index": 0, "item": item}))
    ev.append(("response.output_item.done",
               {"type": "response.output_item.done", "output_index": 0, "item": item}))
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 110}
    ev.append(("response.completed",
               {"type": "response.completed",
                "response": {"id": rid, "object": "response", "status": "completed",
                             "model": model, "output": [item], "usage": usage}}))
    return ev
