"""The Anthropic Messages API, as Claude Code speaks it.

POST /v1/messages (Claude Code adds `?beta=true`) is the conversation.
A main request is one that offers the `Bash` tool; its step is the number
of tool_result blocks already in its messages.  A command step is answered
with a `tool_use` of Bash, a text step (or running past the script) with
end_turn text.  Requests without Bash (session title, summaries, quota
checks) get a short text, JSON if they ask for a schema, and move nothing
along.  Everything else Claude Code asks for (count_tokens, the HEAD
/api/hello preconnect, other GETs) gets something harmless.
"""

import json

SHELL_TOOL = "Bash"


def respond(req, steps):
    if req.method == "HEAD":
        return req.text(200, "")
    if req.method == "POST" and req.path.endswith("/messages/count_tokens"):
        return req.json(200, {"input_tokens": _approx_tokens(req.body)})
    if req.method == "POST" and req.path.endswith("/messages"):
        body = req.body if isinstance(req.body, dict) else {}
        blocks, stop = _answer(body, steps)
        model = body.get("model", "claude-fake")
        if body.get("stream"):
            return req.sse(_stream(model, blocks, stop))
        return req.json(200, _message(model, blocks, stop))
    # Anything else (feature flags, profile, quota...): an empty object.
    return req.json(200, {})


def _answer(body, steps):
    """The content blocks and stop_reason for one /v1/messages request."""
    tools = {t.get("name") for t in body.get("tools") or []}
    if SHELL_TOOL not in tools:
        return [{"type": "text", "text": _side_text(body)}], "end_turn"
    n = _tool_results(body.get("messages") or [])
    step = steps[n] if n < len(steps) else {"text": "Done."}
    if "command" in step:
        cmd = step["command"]
        return [{
            "type": "tool_use",
            "id": f"toolu_fake_{n:04d}",
            "name": SHELL_TOOL,
            "input": {"command": cmd, "description": step.get("description", f"Run step {n + 1}")},
        }], "tool_use"
    return [{"type": "text", "text": step.get("text", "Done.")}], "end_turn"


def _side_text(body):
    """A title / summary: JSON when the request asks for a JSON schema
    (Claude Code's session title wants {"title": ...}), else plain text."""
    fmt = (body.get("output_config") or {}).get("format") or {}
    if fmt.get("type") == "json_schema":
        props = (fmt.get("schema") or {}).get("properties") or {}
        return json.dumps({k: "Fake title" for k in props})
    return "Fake title"


def _tool_results(messages):
    return sum(
        1
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    )


def _approx_tokens(body):
    return max(1, len(json.dumps(body)) // 4)


def _usage(output_tokens):
    return {"input_tokens": 10, "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _message(model, blocks, stop):
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": _usage(5)}


def _stream(model, blocks, stop):
    start = dict(_message(model, [], None), usage=_usage(1))
    yield "message_start", {"type": "message_start", "message": start}
    for i, b in enumerate(blocks):
        if b["type"] == "tool_use":
            first = dict(b, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
        else:
            first = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": b["text"]}
        yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": first}
        yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}
