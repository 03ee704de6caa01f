"""Aider's dialect: OpenAI Chat Completions without tools.

Aider (through litellm, `--model openai/NAME` and `--openai-api-base`)
offers the model no tools: it reads shell commands out of the reply's
text, from ```bash blocks, and asks before it runs each one. So each
step is a text: a command in a ```bash block, or the final text.

Which step a request gets = the number of earlier assistant messages in
its conversation that proposed a command (aider keeps the history, and
adds a command's output as a user message of its own). Every request,
whatever its user message says, gets the next step: a headless run that
answers aider's questions from stdin may send an answer as a message.
"""

from . import chat


def respond(req, steps):
    body = req.body if isinstance(req.body, dict) else None
    if req.method == "POST" and req.path.endswith("/chat/completions") and body is not None:
        message = {"role": "assistant", "content": _text(body, steps)}
        if body.get("stream"):
            req.sse([(None, c) for c in chat._chunks(message, body)] + [(None, "[DONE]")])
        else:
            req.json(200, chat._completion(message, body))
    else:
        chat.respond(req, steps)


def _text(body, steps):
    n = sum(1 for m in body.get("messages") or []
            if isinstance(m, dict) and m.get("role") == "assistant"
            and "```bash" in str(m.get("content") or ""))
    step = steps[n] if n < len(steps) else {"text": "Done."}
    if "command" not in step:
        return step.get("text", "Done.")
    return f"Step {n + 1}: run this.\n\n```bash\n{step['command']}\n```\n"
