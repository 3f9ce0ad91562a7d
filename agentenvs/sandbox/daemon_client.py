"""The host's side of a control daemon's Unix socket: one JSON request, one header line plus payload back.

A daemon runs inside a container (the gui family's desktop, the web family's
browser and sites); its socket lives in a directory bind-mounted into the
container, so whoever is root there could swap it for a link: the path is
refused unless it is a socket. Every call has a deadline; a dead or hung
daemon is an ``InfraError`` (the harness retries the episode), never a hang.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from typing import Any

from agentenvs.core.errors import SandboxError

MAX_HEADER = 1 << 20


class DaemonError(SandboxError):
    """The daemon is gone, hung, or answered something unreadable."""


class DaemonClient:
    """``name`` says whose daemon in errors (f"the {self.name}'s socket is gone")."""

    def __init__(self, path: str, name: str = "desktop daemon"):
        self.path = path
        self.name = name
        self._sock: socket.socket | None = None
        self._buf = b""

    def wait_ready(self, timeout: float, alive=lambda: True) -> None:
        """Block until the daemon's socket appears (it is created once the daemon is ready)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if os.path.exists(self.path) and not self.path.endswith(".tmp"):
                try:
                    self.call("health", deadline=5)
                    return
                except DaemonError:
                    pass
            if not alive():
                raise DaemonError(f"the {self.name} exited while starting")
            time.sleep(0.02)
        raise DaemonError(f"the {self.name} did not come up within {timeout:g}s")

    def start_in(self, sandbox: Any, command: str, timeout: float, **exec_options: Any) -> None:
        """Start the daemon detached in ``sandbox`` (its output in a log there) and wait until it answers."""
        log_path = "/tmp/agentenvs-daemon.log"
        started = sandbox.exec(
            ["sh", "-c", f"setsid -f {command} >{log_path} 2>&1 </dev/null"], timeout=30, **exec_options
        )
        if started.exit_code != 0:
            raise DaemonError(f"the {self.name} did not start: {started.output[-400:]}")
        try:
            self.wait_ready(timeout, alive=sandbox.alive)
        except DaemonError as exc:
            log = sandbox.exec(["cat", log_path], timeout=10).output[-1500:]
            raise DaemonError(f"{exc}; its log:\n{log}") from None

    def _connect(self) -> socket.socket:
        if self._sock is None:
            try:
                mode = os.lstat(self.path).st_mode
            except FileNotFoundError:
                raise DaemonError(f"the {self.name}'s socket is gone") from None
            if not stat.S_ISSOCK(mode):
                raise DaemonError(f"the {self.name}'s socket was replaced by something else")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.path)
            except OSError as exc:
                sock.close()
                raise DaemonError(f"cannot reach the {self.name}: {exc}") from None
            self._sock, self._buf = sock, b""
        return self._sock

    def call(self, op: str, *, deadline: float = 30.0, **params: Any) -> tuple[dict[str, Any], bytes]:
        """Send one request; the reply's header and payload. Raises ``DaemonError`` on any transport failure."""
        sock = self._connect()
        sock.settimeout(deadline)
        try:
            sock.sendall(json.dumps({"op": op, **params}).encode() + b"\n")
            line = self._read_line(sock)
            head = json.loads(line)
            payload = self._read_exact(sock, int(head.get("size", 0)))
        except (OSError, ValueError) as exc:
            self.close()
            what = "timed out" if isinstance(exc, TimeoutError) else f"failed: {exc}"
            raise DaemonError(f"{self.name} call {op!r} {what}") from None
        return head, payload

    def _read_line(self, sock: socket.socket) -> bytes:
        while b"\n" not in self._buf:
            if len(self._buf) > MAX_HEADER:
                raise ValueError("reply header too long")
            chunk = sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("connection closed")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def _read_exact(self, sock: socket.socket, size: int) -> bytes:
        parts, have = [self._buf[:size]], len(self._buf[:size])
        self._buf = self._buf[size:]
        while have < size:
            chunk = sock.recv(min(1 << 20, size - have))
            if not chunk:
                raise ConnectionError("connection closed mid-reply")
            parts.append(chunk)
            have += len(chunk)
        return b"".join(parts)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
