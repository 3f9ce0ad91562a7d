"""A tiny key-value store over HTTP, kept in a JSON file on the service's volume."""

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

STORE = Path(os.environ.get("KV_STORE", "/data/kv.json"))
LOCK = threading.Lock()


def load() -> dict:
    return json.loads(STORE.read_text()) if STORE.is_file() else {}


def save(data: dict) -> None:
    tmp = STORE.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, sort_keys=True))
    tmp.replace(STORE)


class Handler(BaseHTTPRequestHandler):
    def reply(self, code: int, body: str) -> None:
        raw = body.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def key(self) -> str | None:
        prefix = "/keys/"
        return self.path[len(prefix) :] if self.path.startswith(prefix) and len(self.path) > len(prefix) else None

    def do_GET(self) -> None:
        if self.path == "/health":
            return self.reply(200, "ok")
        with LOCK:
            data = load()
        if self.path == "/keys":
            return self.reply(200, json.dumps(data, sort_keys=True))
        key = self.key()
        if key is None or key not in data:
            return self.reply(404, "no such key")
        self.reply(200, data[key])

    def do_PUT(self) -> None:
        key = self.key()
        if key is None:
            return self.reply(400, "PUT /keys/<key>")
        value = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        with LOCK:
            data = load()
            data[key] = value
            save(data)
        self.reply(200, "stored")

    def do_DELETE(self) -> None:
        key = self.key()
        with LOCK:
            data = load()
            found = data.pop(key, None) is not None
            save(data)
        self.reply(200 if found else 404, "deleted" if found else "no such key")

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    STORE.parent.mkdir(parents=True, exist_ok=True)
    ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("KV_PORT", "8080"))), Handler).serve_forever()
