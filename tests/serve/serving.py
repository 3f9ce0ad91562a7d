"""What the server's tests share: the tasks they serve, waiting for what a server does on its own threads, and
a WebSocket opened by hand."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

from agentenvs.serve import BackgroundServer

TEXT_TASK = "textgame/maze-hard-2000001"
TERMINAL_TASK = "terminal/log-error-summary"


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def raw_websocket(server: BackgroundServer) -> socket.socket:
    """A WebSocket opened by hand, so a test can send what no client library would."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.sendall(
        b"GET /v1/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        + f"Authorization: Bearer {server.token}\r\n\r\n".encode()
    )
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101") and b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head  # RFC 6455's example
    return sock
