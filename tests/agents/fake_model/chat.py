"""The OpenAI Chat Completions API, as the OpenAI-compatible agents speak it
(OpenCode, Kilo, Crush, Qwen Code, Cline and the like, through a custom
"OpenAI-compatible" provider, or a local gateway such as LiteLLM,
Ollama, LM Studio or vLLM).

An agent POSTs {base_url}/chat/completions with `messages` and `tools`
(function tools) and, mostly, `stream: true`; a streamed answer is a
series of `data: {chat.completion.chunk}` lines closed by
`data: [DONE]`.  A request with `stream` false gets one
`chat.completion`.  GET {base_url}/models lists one model.

Which step a request gets = the number of tool results (`role: tool`
messages) already in its conversation.  A request that offers no shell
tool is a side request (a title, a summary...) and gets a short text
without moving the script.

The shell tool is the first offered whose name is one of SHELL_TOOLS;
its arguments are filled from its own JSON schema: the command goes into
`command` (or `cmd`; a list of one where the parameter is an array of
commands), and every other required parameter gets a harmless
value of its type (a description, `false`, 0), so one script drives
agents whose tools differ.
"""

import json
import time
import uuid

SHELL_TOOLS = ("bash", "run_shell_command", "shell", "execute_command",
               "run_terminal_cmd", "terminal", "exec_command", "Bash",
               "run_commands")


def respond(req, steps):
    body = req.body if isinstance(req.body, dict) else None
    if req.method == "POST" and req.path.endswith("/chat/completions"):
        if body is None:
            req.json(400, {"error": {"message": "fake_model: send JSON",
                                     "type": "invalid_request_error"}})
            return
        message = _answer(body, steps)
        if body.get("stream"):
            req.sse([(None, c) for c in _chunks(message, body)] + [(None, "[DONE]")])
        else:
            req.json(200, _completion(message, body))
    elif req.path.endswith("/models"):
        req.json(200, {"object": "list", "data": [
            {"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]})
    else:
        req.json(404, {"error": {"message": f"fake_model: no {req.method} {req.path}"}})


def _answer(body, steps):
    """The assistant message this request gets: a tool call or a text."""
    tool = _shell_tool(body)
    if tool is None:
        return {"role": "assistant", "content": "OK."}
    n = sum(1 for m in body.get("messages") or []
            if isinstance(m, dict) and m.get("role") == "tool")
    step = steps[n] if n < len(steps) else {"text": "Done."}
    if "command" not in step:
        return {"role": "assistant", "content": step.get("text", "Done.")}
    name, params = tool
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": "call_" + uuid.uuid4().hex[:24], "type": "function",
        "function": {"name": name, "arguments": json.dumps(_arguments(params, step["command"]))},
    }]}


def _shell_tool(body):
    """(name, parameters schema) of the shell tool offered, or None."""
    offered = {}
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        f = t.get("function") if isinstance(t.get("function"), dict) else t
        name = f.get("name")
        if name in SHELL_TOOLS:
            offered.setdefault(name, f.get("parameters") or {})
    for name in SHELL_TOOLS:
        if name in offered:
            return name, offered[name]
    return None


def _arguments(schema, cmd):
    props = schema.get("properties") or {}
    key = "command" if "command" in props or not props else (
        "cmd" if "cmd" in props else next(iter(props)))
    # A list of commands (Cline's `run_commands`): the one command.
    args = {key: [cmd] if (props.get(key) or {}).get("type") == "array" else cmd}
    for name in schema.get("required") or []:
        if name in args:
            continue
        kind = (props.get(name) or {}).get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        args[name] = {"boolean": False, "integer": 0, "number": 0,
                      "array": [], "object": {}}.get(kind, "Runs the command.")
    return args


def _usage():
    return {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


def _completion(message, body):
    return {"id": "chatcmpl-" + uuid.uuid4().hex[:24], "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", "fake-model"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": _usage()}


def _chunks(message, body):
    cid = "chatcmpl-" + uuid.uuid4().hex[:24]
    base = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": body.get("model", "fake-model")}

    def chunk(delta, finish=None):
        return dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])

    out = [chunk({"role": "assistant", "content": ""})]
    if message.get("tool_calls"):
        call = message["tool_calls"][0]
        out.append(chunk({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                          "function": {"name": call["function"]["name"],
                                                       "arguments": ""}}]}))
        out.append(chunk({"tool_calls": [{"index": 0, "function": {
            "arguments": call["function"]["arguments"]}}]}))
        out.append(chunk({}, "tool_calls"))
    else:
        out.append(chunk({"content": message["content"]}))
        out.append(chunk({}, "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        out.append(dict(base, choices=[], usage=_usage()))
    return out
