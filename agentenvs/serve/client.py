"""``agentenvs.remote(url, token).make("<family>/<task>")``: a served env as a local ``gymnasium.Env``.

Each remote env holds its own WebSocket to the server, so its session lives
exactly as long as the env (closing it, or losing the connection, frees the
sandbox on the server) and envs on different threads never queue behind one
another. Spaces, observations and info come back as the local env gives them.
"""

from __future__ import annotations

import itertools
import socket
import ssl
import threading
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import gymnasium

from agentenvs.serve.codec import Attachments, decode_value, dumps, loads, space_from_json
from agentenvs.serve.wsframe import WebSocket, accept_key, new_key


class RemoteEnvError(RuntimeError):
    """The server refused or failed a request; ``status`` is its HTTP-style status."""

    def __init__(self, status: int, message: str, kind: str = ""):
        super().__init__(f"{message} (status {status})")
        self.status = status
        self.kind = kind


class _Connection:
    """One WebSocket to the server: a request, its reply, and the reply's image frames.

    Replies are read on the caller's thread, when it waits for one (no
    receiving thread to wake and hand over). ``https://`` URLs connect with TLS.
    """

    def __init__(self, url: str, token: str, timeout: float):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
            raise ValueError(f"an env server URL is http://host:port (or https://), not {url!r}")
        secure = parts.scheme in ("https", "wss")
        port = parts.port or (443 if secure else 80)
        self.timeout = timeout
        try:
            sock = socket.create_connection((parts.hostname, port), timeout=30)
        except OSError as exc:
            raise RemoteEnvError(503, f"cannot reach an env server at {url}: {exc}") from exc
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if secure:
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
            rfile = sock.makefile("rb")
            _handshake(sock, rfile, parts.netloc, parts.path.rstrip("/") + "/v1/ws", token, url)
        except BaseException as exc:
            sock.close()
            if isinstance(exc, OSError):
                raise RemoteEnvError(503, f"cannot open a WebSocket to the env server at {url}: {exc}") from exc
            raise
        self._ws = WebSocket(sock, rfile, client=True)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def call(self, op: str, **fields: Any) -> Any:
        request_id = next(self._ids)
        with self._lock:
            try:
                self._ws.send(dumps({"id": request_id, "op": op, **fields}))
                text = self._ws.recv(timeout=self.timeout)
                reply = loads(text)
                frames = [self._ws.recv(timeout=self.timeout) for _ in range(int(reply.get("frames") or 0))]
            except TimeoutError as exc:
                self.close()
                raise RemoteEnvError(
                    504, f"no reply to {op} within {self.timeout:g} s; the connection is closed"
                ) from exc
            except OSError as exc:  # WebSocketClosed and ProtocolError are ConnectionErrors
                self.close()
                raise RemoteEnvError(503, f"the env server closed the connection during {op}: {exc}") from exc
        if not reply.get("ok"):
            error = reply.get("error") or {}
            if error.get("type") == "ResetNeeded":
                raise gymnasium.error.ResetNeeded(error.get("error", ""))
            raise RemoteEnvError(
                int(error.get("status", 500)), str(error.get("error", "unknown error")), error.get("type", "")
            )
        result = reply.get("result")
        if '"$' not in text:  # no {"$image": ...} or other marker: the result is plain JSON already
            return result
        marked = reply.get("marked")
        if isinstance(marked, list) and isinstance(result, dict):  # decode only the values that hold one
            attachments = Attachments(frames)
            return {key: decode_value(value, attachments) if key in marked else value for key, value in result.items()}
        return decode_value(result, Attachments(frames))

    def close(self) -> None:
        self._ws.close()


def _handshake(sock: socket.socket, rfile: BinaryIO, host: str, path: str, token: str, url: str) -> None:
    """The client's opening handshake; raises ``RemoteEnvError`` with the server's status if refused."""
    key = new_key()
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    sock.sendall(request.encode())
    status_line = rfile.readline(8192).decode("latin-1")
    headers: dict[str, str] = {}
    while (line := rfile.readline(8192).decode("latin-1").strip()) and len(headers) < 100:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    try:
        status = int(status_line.split()[1])
    except (IndexError, ValueError):
        raise RemoteEnvError(502, f"{url} did not answer as an env server: {status_line[:100]!r}") from None
    if status != 101:
        length = int(headers.get("content-length") or 0)
        body = rfile.read(min(length, 1 << 16)) if length > 0 else b""
        try:
            message = str(loads(body).get("error") or "")
        except (ValueError, AttributeError):
            message = body[:200].decode(errors="replace")
        refused = "wrong token?" if status in (401, 403) else "is it an agentenvs env server?"
        raise RemoteEnvError(status, f"the server at {url} refused the connection ({refused}): {message}")
    if headers.get("sec-websocket-accept") != accept_key(key):
        raise RemoteEnvError(502, f"{url} answered the WebSocket handshake wrongly")


class RemoteEnv(gymnasium.Env[dict[str, Any], Any]):
    """A session on an env server, with the served env's spaces, metadata and tools."""

    def __init__(self, connection: _Connection, described: dict[str, Any], client: RemoteClient):
        self._connection = connection
        self._client = client
        self.session: str = described["session"]
        self.env_id: str = described["env"]
        self.observation_space = space_from_json(described["observation_space"])
        self.action_space = space_from_json(described["action_space"])
        self.metadata = dict(described.get("metadata") or {})
        self.family: str | None = described.get("family")
        self.action_tools: list[dict[str, Any]] = list(described.get("action_tools") or [])
        self.prompt_description: str = described.get("prompt_description", "")
        self._closed = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        reply = self._connection.call("reset", session=self.session, seed=seed, options=options)
        return reply["observation"], reply["info"]

    def step(self, action: Any):
        reply = self._connection.call("step", session=self.session, action=action)
        return reply["observation"], reply["reward"], reply["terminated"], reply["truncated"], reply["info"]

    def snapshot(self) -> str:
        """A ref to this env's state now, kept on the server (see ``AgentEnv.snapshot``)."""
        return str(self._connection.call("snapshot", session=self.session)["ref"])

    def restore(self, ref: str) -> tuple[dict[str, Any], dict[str, Any]]:
        reply = self._connection.call("restore", session=self.session, ref=ref)
        return reply["observation"], reply["info"]

    def fork(self) -> RemoteEnv:
        """A new remote env in this one's state, with its own sandbox and its own connection."""
        child = self._connection.call("fork", session=self.session)["session"]
        return self._client.attach(child)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._connection.call("close", session=self.session)
        except RemoteEnvError:
            pass
        finally:
            self._connection.close()
        super().close()


class RemoteClient:
    """Makes remote envs on one server (``url``: ``http://host:port``)."""

    def __init__(self, url: str, token: str, *, timeout: float = 900.0):
        self.url = url
        self._token = token
        self.timeout = timeout

    def make(self, env: str, /, *, image_format: str = "png", **kwargs: Any) -> RemoteEnv:
        """``env``: ``"<family>/<task-id>"`` or ``"agentenvs/<family>-v0"``; ``kwargs`` as for ``agentenvs.make``."""
        connection = _Connection(self.url, self._token, self.timeout)
        try:
            described = connection.call("make", env=env, kwargs=kwargs, image_format=image_format)
        except BaseException:
            connection.close()
            raise
        return RemoteEnv(connection, described, self)

    def attach(self, session: str) -> RemoteEnv:
        """Take over a live session (a fork's) on a connection of its own."""
        connection = _Connection(self.url, self._token, self.timeout)
        try:
            described = connection.call("attach", session=session)
        except BaseException:
            connection.close()
            raise
        return RemoteEnv(connection, described, self)


def remote(url: str, token: str, *, timeout: float = 900.0) -> RemoteClient:
    """A client of the env server at ``url`` (started by ``agentenvs serve``)."""
    return RemoteClient(url, token, timeout=timeout)
