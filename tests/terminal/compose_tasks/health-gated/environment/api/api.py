"""Serves the seeded word, but only after a slow start: the healthcheck gates who may use it."""

import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

time.sleep(float(os.environ.get("WARMUP_SEC", "2")))
WORD = Path("/shared/word.txt").read_text().strip()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = {"/word": WORD, "/health": "ok"}.get(self.path)
        raw = (body or "not found").encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        pass


HTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
