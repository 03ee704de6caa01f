"""The HTTP side shared by every dialect: a threaded HTTP/1.1 server on
loopback that logs each request and hands it to the dialect's `respond`.

A dialect module defines `respond(req, steps)`, where `req` is a
`Request` (method, path, query, headers, body) with `sse(events)`,
`json(status, obj)` and `text(status, body)` to answer.
"""

import json
import os
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_log_lock = threading.Lock()


class Request:
    def __init__(self, handler, body_bytes):
        self._h = handler
        url = urllib.parse.urlsplit(handler.path)
        self.method = handler.command
        self.path = url.path
        self.query = urllib.parse.parse_qs(url.query)
        self.headers = {k.lower(): v for k, v in handler.headers.items()}
        try:
            self.body = json.loads(body_bytes) if body_bytes else None
        except ValueError:
            self.body = body_bytes.decode("utf-8", "replace")

    def sse(self, events):
        """Stream server-sent events: each is (event_name or None, data)."""
        h = self._h
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Connection", "close")
        h.end_headers()
        for name, data in events:
            chunk = ""
            if name:
                chunk += f"event: {name}\n"
            chunk += "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n"
            h.wfile.write(chunk.encode())
            h.wfile.flush()
        h.close_connection = True

    def json(self, status, obj, headers=None):
        self.text(status, json.dumps(obj), "application/json", headers)

    def text(self, status, body, content_type="text/plain", headers=None):
        h = self._h
        data = body.encode() if isinstance(body, str) else body
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)


def serve(host, dialect, steps, log_path, port_file):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            req = Request(self, body)
            with _log_lock, open(log_path, "a") as f:
                f.write(json.dumps({
                    "method": req.method,
                    "path": self.path,
                    "headers": req.headers,
                    "body": req.body,
                }) + "\n")
            try:
                dialect.respond(req, steps)
            except BrokenPipeError:
                pass

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _any

    httpd = ThreadingHTTPServer((host, 0), Handler)
    httpd.daemon_threads = True
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(httpd.server_address[1]))
    os.replace(tmp, port_file)
    httpd.serve_forever()
