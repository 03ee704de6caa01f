"""The Gemini API dialect, as Gemini CLI (0.61) speaks it with an API key.

    POST /v1beta/models/M:streamGenerateContent?alt=sse -> SSE, one chunk
    POST /v1beta/models/M:generateContent               -> one JSON response
    POST /v1beta/models/M:countTokens                   -> {"totalTokens": n}
    anything else                                       -> 200 {}

A main request declares the shell tool (run_shell_command); its step is the
number of functionResponse parts already in `contents`. Every other request
is a side request (model router, next-speaker check, summaries, ...): it
gets JSON satisfying its responseJsonSchema, with next_speaker = "user" so
the headless run ends, or else a short text. Side requests never advance
the script.
"""

import json

SHELL_TOOL = "run_shell_command"


def respond(req, steps):
    body = req.body if isinstance(req.body, dict) else {}
    action = req.path.rpartition(":")[2] if req.method == "POST" else ""
    if action == "countTokens":
        return req.json(200, {"totalTokens": _tokens(body)})
    if action not in ("generateContent", "streamGenerateContent"):
        return req.json(200, {})
    reply = {
        "candidates": [{
            "content": {"role": "model", "parts": _parts(body, steps)},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {"promptTokenCount": _tokens(body),
                          "candidatesTokenCount": 5,
                          "totalTokenCount": _tokens(body) + 5},
    }
    if action == "generateContent":
        return req.json(200, reply)
    return req.sse([(None, reply)])


def _parts(body, steps):
    """The parts of the model's reply to this request."""
    if not _declares_shell(body):
        gen = body.get("generationConfig") or {}
        schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
        return [{"text": json.dumps(_fill(schema)) if schema else "OK."}]
    step = sum("functionResponse" in p
               for c in body.get("contents") or [] for p in c.get("parts") or [])
    if step >= len(steps):
        return [{"text": "Done."}]
    if "command" in steps[step]:
        # The step number keeps consecutive calls distinct: the CLI aborts
        # the turn after 5 identical tool calls in a row (loop detection).
        return [{"functionCall": {"name": SHELL_TOOL, "args": {
            "command": steps[step]["command"],
            "description": f"Step {step + 1}"}}}]
    return [{"text": steps[step]["text"]}]


def _declares_shell(body):
    return any(d.get("name") == SHELL_TOOL
               for t in body.get("tools") or []
               for d in t.get("functionDeclarations") or [])


def _fill(schema, name=""):
    """A small value satisfying a JSON schema (Gemini writes types in caps)."""
    if name == "next_speaker":
        return "user"  # the model's turn is over: the headless run ends
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        return {k: _fill(v, k) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return "n/a"


def _tokens(body):
    return len(json.dumps(body)) // 4 + 1
