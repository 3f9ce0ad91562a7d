"""Stable site origins: one HTTP proxy per env maps ``http://shop.web.test`` to that env's own shop.

Every web session's browser context is made with this proxy, so the page
asks for ``http://<site>.web.test/...`` (a reserved, never-routable name)
and the proxy forwards it to the env's own server for that site on
loopback, whatever port it got. The agent sees, and may type, the same
URLs in every session; a recorded ``goto`` replays on a fresh env.

The proxy is also a gate: it forwards only plain-HTTP requests for the
hosts it maps, on port 80, to the sites' app ports. Anything else (another
host or port, the control planes, ``CONNECT`` tunnels for https or
WebSockets) gets 403. Each env has its own proxy, which knows only that
env's servers, so one session can never reach another's sites; the
context's allow-list (``session.py``) is checked before any of this.
"""

from __future__ import annotations

import http.client
import threading
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: The suffix of every stable site host (``.test`` is reserved: RFC 2606, never resolved).
HOST_SUFFIX = ".web.test"
#: Headers that belong to one hop, not to the request or response forwarded.
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
}
MAX_BODY = 1 << 22


def public_origin(name: str) -> str:
    """The origin the agent sees for a site (or ``miniwob``): the same in every session."""
    return f"http://{name}{HOST_SUFFIX}"


#: ``host`` -> ``(address, port)`` of the server behind it, or ``None`` when this env has none.
Resolver = Callable[[str], "tuple[str, int] | None"]


class SiteProxy:
    """A loopback HTTP proxy (own thread) that forwards ``http://<name>.web.test`` to ``resolve(name)``."""

    def __init__(self, resolve: Resolver, timeout: float = 60.0) -> None:
        self._resolve = resolve
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self, timeout))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="agentenvs-web-proxy", daemon=True)
        self._thread.start()

    @property
    def server(self) -> str:
        """The proxy's address for a browser context (``proxy={"server": ...}``)."""
        return f"http://127.0.0.1:{self._server.server_port}"

    def upstream(self, url: str) -> tuple[str, int, str] | None:
        """Where a request for ``url`` goes (address, port, path with query), or ``None``: refused."""
        parts = urllib.parse.urlsplit(url)
        host = (parts.hostname or "").lower()
        try:
            port = parts.port
        except ValueError:
            return None
        if parts.scheme != "http" or port not in (None, 80) or parts.username or parts.password:
            return None
        if not host.endswith(HOST_SUFFIX):
            return None
        target = self._resolve(host[: -len(HOST_SUFFIX)])
        if target is None:
            return None
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return target[0], target[1], path

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(proxy: SiteProxy, timeout: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            self.connection.settimeout(timeout)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
            pass

        def _refuse(self, why: str) -> None:
            body = f"agentenvs: {why}\n".encode()
            self.send_response(403)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _forward(self) -> None:
            target = proxy.upstream(self.path)
            if target is None:
                self._refuse("only the task's sites are reachable")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if self.headers.get("Transfer-Encoding") or not 0 <= length <= MAX_BODY:
                self._refuse("request body not accepted")
                return
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            address, port, path = target
            upstream = http.client.HTTPConnection(address, port, timeout=timeout)
            try:
                upstream.request(self.command, path, body=body, headers=headers)
                response = upstream.getresponse()
                payload = response.read()
            except (OSError, http.client.HTTPException) as exc:
                self.send_error(502, f"the site did not answer: {exc}")
                return
            finally:
                upstream.close()
            self.send_response(response.status, response.reason)
            for key, value in response.getheaders():
                if key.lower() not in HOP_BY_HOP:
                    self.send_header(key, value)
            no_body = self.command == "HEAD" or response.status in (204, 304) or 100 <= response.status < 200
            size = response.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(payload))
            self.send_header("Content-Length", "0" if no_body and self.command != "HEAD" else size)
            self.end_headers()
            if not no_body:
                self.wfile.write(payload)

        do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _forward  # noqa: N815

        def do_CONNECT(self) -> None:  # noqa: N802 - the stdlib's name
            self.close_connection = True
            self._refuse("no tunnels (https, WebSockets)")

    return Handler
