"""A fake model server for end-to-end tests of `aq` with real agent CLIs.

It speaks one vendor's streaming API (a dialect module beside this file),
binds loopback only, and drives the agent through a script: a list of
steps, each a shell command the agent is asked to run or a final text.
Which step a request gets is derived from the request itself (how many
tool results its conversation already holds), so retries and the agents'
side requests (titles, token counts) never move the script along.

    python3 -m fake_model --dialect anthropic|openai|gemini|chat \
        --script steps.json --log requests.jsonl --port-file port

steps.json: {"steps": [{"command": "git status"}, {"text": "Done."}]}
Every request is appended to the log as one JSON line: method, path,
headers (lower-case names) and the body as JSON (or text).
"""

import argparse
import importlib
import json
import sys

from .server import serve


def main() -> int:
    p = argparse.ArgumentParser(prog="fake_model")
    p.add_argument("--dialect", required=True, choices=["anthropic", "openai", "gemini", "chat", "aider"])
    p.add_argument("--script", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--host", default="127.0.0.1")
    a = p.parse_args()
    if not a.host.startswith("127.") and a.host != "::1":
        print("fake_model: loopback only", file=sys.stderr)
        return 2
    with open(a.script) as f:
        steps = json.load(f)["steps"]
    dialect = importlib.import_module(f".{a.dialect}", __package__)
    serve(a.host, dialect, steps, a.log, a.port_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
