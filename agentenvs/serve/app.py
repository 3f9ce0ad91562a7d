"""The env server's routes: one dispatcher behind HTTP routes and a WebSocket.

Every request needs ``Authorization: Bearer <token>``. Over HTTP an operation
is ``POST /v1/sessions`` (make) or ``POST /v1/sessions/{id}/{op}``, images
inline in base64; over ``/v1/ws`` a message is ``{"id", "op", "session", ...}``
and its reply is followed by one binary frame per image. Sessions made over a
WebSocket belong to it and are closed when it goes away. Each connection is
served on a thread of its own (:mod:`.server`), and a WebSocket's messages are
read and answered on it, with no event loop between the socket and the env.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

import gymnasium
from pydantic import ValidationError

from agentenvs.core.errors import NoTaskChosenError, TaskNotFoundError
from agentenvs.serve.codec import Attachments, CodecError, ImageFormat, decode_value, dumps, encode_value, loads
from agentenvs.serve.protocol import (
    OPS,
    SESSION_OPS,
    CloseReply,
    ErrorReply,
    HealthReply,
    MakeRequest,
    ResetRequest,
    RestoreRequest,
    StepRequest,
    WsReply,
    WsRequest,
    plain_step,
    schema_text,
)
from agentenvs.serve.sessions import ServeError, Session, SessionManager
from agentenvs.serve.wsframe import ProtocolError, WebSocket, WebSocketClosed, accept_key, valid_key

if TYPE_CHECKING:
    from agentenvs.serve.server import EnvServer

#: The largest request body or WebSocket message taken (an action, a tool call's arguments).
MAX_REQUEST = 64 << 20
_SESSION_PATH = re.compile(r"^/v1/sessions/([^/]+)(?:/([^/]+))?$")
_UNAUTHORIZED = "missing or wrong token: send 'Authorization: Bearer <token>'"
_CONTENT_LENGTH = re.compile(r"[0-9]{1,20}")


def _status(exc: Exception) -> int:
    if isinstance(exc, ServeError):
        return exc.status
    if isinstance(exc, RecursionError):  # JSON (or an action) nested past what the parser or decoder takes
        return 400
    if isinstance(exc, (ValidationError, CodecError)):
        return 422
    if isinstance(exc, TaskNotFoundError):
        return 404
    if isinstance(exc, (gymnasium.error.ResetNeeded, gymnasium.error.Error)):
        return 409
    if isinstance(exc, (NoTaskChosenError, ValueError, TypeError, KeyError)):
        return 400
    return 500


def error_reply(exc: Exception) -> ErrorReply:
    if isinstance(exc, ValidationError):
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors())
        message = f"malformed request: {problems}"
    elif isinstance(exc, RecursionError):
        message = f"the request is nested too deeply: {exc}"
    else:
        message = str(exc) or type(exc).__name__
    return ErrorReply(status=_status(exc), error=message, type=type(exc).__name__)


class Dispatcher:
    """Carries out one operation for a client (``owner``: its WebSocket, or None over HTTP)."""

    def __init__(self, manager: SessionManager):
        self.manager = manager

    def __call__(self, op: str, fields: dict[str, Any], owner: str | None, frames: Attachments | None) -> Any:
        manager = self.manager
        if op == "make":
            made = MakeRequest.model_validate(fields)
            session = manager.make(made.env, made.kwargs, made.image_format, owner)
            return session.info().model_dump()
        if op not in SESSION_OPS:
            raise ServeError(404, f"unknown operation {op!r}")
        session = manager.get(fields.pop("session", None))
        return self._on_session(op, session, fields, owner, frames)

    def _on_session(
        self, op: str, session: Session, fields: dict[str, Any], owner: str | None, frames: Attachments | None
    ) -> Any:
        manager, env = self.manager, session.env

        def encode(**values: Any) -> dict[str, Any]:
            return encode_fields(values, frames, session.image_format)

        if op == "describe":
            return session.info().model_dump()
        if op == "attach":
            return manager.attach(session, owner).info().model_dump()
        if op == "close":
            return CloseReply(closed=manager.close(session.id)).model_dump()
        if op == "fork":
            return (manager.fork(session, owner)).info().model_dump()
        if op == "reset":
            reset = ResetRequest.model_validate(fields)
            obs, info = manager.call(session, lambda: env.reset(seed=reset.seed, options=reset.options))
            return encode(observation=obs, info=info)
        if op == "step":
            return self.step(session, StepRequest.model_validate(fields).action, owner, frames)
        core = env.unwrapped
        if op == "snapshot":
            if not hasattr(core, "snapshot"):
                raise ServeError(501, f"{type(core).__name__} cannot snapshot")
            return {"ref": str(manager.call(session, core.snapshot))}
        ref = RestoreRequest.model_validate(fields).ref
        if not hasattr(core, "restore"):
            raise ServeError(501, f"{type(core).__name__} cannot restore")
        obs, info = manager.call(session, core.restore, ref)
        return encode(observation=obs, info=info)

    def step(self, session: Session, action: Any, owner: str | None, frames: Attachments | None) -> dict[str, Any]:
        env = session.env
        inline = (owner is not None and session.owner == owner) or getattr(env.unwrapped, "quick_steps", False)
        obs, reward, terminated, truncated, info = self.manager.call(
            session, env.step, decode_value(action), inline=inline
        )
        values = {"observation": obs, "reward": float(reward), "terminated": bool(terminated)}
        return encode_fields({**values, "truncated": bool(truncated), "info": info}, frames, session.image_format)


def encode_fields(values: dict[str, Any], frames: Attachments | None, image_format: ImageFormat) -> dict[str, Any]:
    """A result's values encoded: images into ``frames`` (a WebSocket's), else inline (HTTP)."""
    if frames is None:
        return {key: encode_value(value, None, image_format) for key, value in values.items()}
    return frames.encode_fields(values, image_format)


def authorized(header: str | None, token: str) -> bool:
    scheme, _, given = (header or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def ws_reply(dispatch: Dispatcher, message: str | bytes, owner: str) -> tuple[dict[str, Any], Attachments]:
    """The reply to one WebSocket message, and the images that follow it; never raises."""
    frames = Attachments()
    request_id = None
    try:
        if not isinstance(message, str):
            raise ServeError(400, "send each request as a JSON text frame")
        data = loads(message)
        if isinstance(data, dict):
            request_id = data.get("id") if type(data.get("id")) in (int, str) else None  # not a bool
            op = data.get("op")
            if isinstance(op, str) and op not in OPS:
                raise ServeError(404, f"unknown operation {op!r}: one of {', '.join(sorted(OPS))}")
        if plain_step(data):  # the hot path: the fields pydantic would pass as they are, checked by hand
            result = dispatch.step(dispatch.manager.get(data["session"]), data["action"], owner, frames)
        else:
            request = WsRequest.model_validate(data)
            fields = request.model_dump(exclude={"id", "op"}, exclude_none=True)
            result = dispatch(request.op, fields, owner, frames)
    except json.JSONDecodeError as exc:
        return WsReply(id=None, ok=False, error=error_reply(ServeError(400, f"not JSON: {exc}"))).model_dump(), frames
    except Exception as exc:  # noqa: BLE001 - the reply says what failed; the connection and sessions stay
        return WsReply(id=request_id, ok=False, error=error_reply(exc)).model_dump(), Attachments()
    # A success reply as a plain dict: the result is JSON already, so pydantic need not walk it again.
    reply = {"id": request_id, "ok": True, "result": result, "error": None, "frames": len(frames.frames)}
    if frames.marked is not None:
        reply["marked"] = frames.marked
    return reply, frames


class RequestHandler(BaseHTTPRequestHandler):
    """One client connection: HTTP/1.1 requests (kept alive), or a WebSocket after an upgrade."""

    protocol_version = "HTTP/1.1"
    server: EnvServer
    #: A connection that has sent the token may idle this many seconds between requests (a WebSocket
    #: waits ``idle_timeout``); one that has not must send a whole head within ``head_timeout``.
    timeout = 120
    #: A request line that cannot be parsed is answered with a status line, never as HTTP/0.9 (a bare body).
    default_request_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self._trusted = False  # whether this connection has sent the token

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: the server logs nothing per request."""

    def handle_one_request(self) -> None:
        """One request, its head bounded in time: ``head_timeout`` seconds from its first byte (from the
        start of the wait, on a connection that has not sent the token yet), so a client that trickles
        its head a byte at a time (slowloris) cannot hold a connection for long."""
        server, connection = self.server, self.connection
        if self._trusted:
            try:
                if not self.rfile.peek(1):
                    self.close_connection = True
                    return
            except OSError:  # a timeout, or the connection ended
                self.close_connection = True
                return
        # What an error reply needs before the request line is parsed (if it never is).
        self.command, self.request_version, self.requestline = None, self.default_request_version, ""
        server.set_deadline(connection, server.head_timeout)
        try:
            super().handle_one_request()
        finally:
            server.clear_deadline(connection)

    def parse_request(self) -> bool:
        if self.server.is_late(self.connection):
            return self._too_slow()
        if len(self.raw_requestline.split()) != 3:
            self.requestline = self.raw_requestline.decode("latin-1").rstrip("\r\n")
            self.send_error(400, "a request line is '<METHOD> <path> HTTP/1.1'")
            return False
        parsed = super().parse_request()
        if self.server.clear_deadline(self.connection) and parsed:
            return self._too_slow()
        return parsed

    def _too_slow(self) -> bool:
        self.send_error(408, f"the request did not arrive within {self.server.head_timeout:g} s")
        return False

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The errors the base class answers itself (a garbled request line, a header too long, an
        unknown method) as JSON too, like every other error; the connection is closed after."""
        self.close_connection = True
        reply = ErrorReply(status=code, error=message or self.responses.get(code, ("error",))[0], type="HTTPError")
        body = dumps(reply.model_dump()).encode()
        self.send_response(code)
        self.send_header("Connection", "close")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _route(self) -> None:
        method, path = self.command, self.path.split("?", 1)[0]
        if method not in ("GET", "POST", "DELETE"):
            self.close_connection = True  # a body it may have had is not read
            self.send_error(405, f"{method} is not served: GET, POST or DELETE (see docs/serve.md)")
            return
        if (method, path) == ("GET", "/v1/ws"):
            self._websocket()
            return
        body = self._body()  # read whole even when refused, so a kept-alive connection stays in step
        if body is None:
            return
        match = _SESSION_PATH.match(path)
        if (method, path) == ("GET", "/v1/schema"):
            self._send(200, schema_text().encode())
        elif (method, path) == ("GET", "/v1/health"):
            if self._authorized():
                manager = self.server.manager
                health = HealthReply(ok=True, live=manager.live, max_sessions=manager.max_sessions)
                self._json(200, health.model_dump())
        elif (method, path) == ("POST", "/v1/sessions"):
            self._operate("make", None, body)
        elif match and match[2] is None and method in ("GET", "DELETE"):
            self._operate("describe" if method == "GET" else "close", match[1], body)
        elif match and match[2] is not None and method == "POST":
            if match[2] in SESSION_OPS - {"attach", "close", "describe"}:
                self._operate(match[2], match[1], body)
            else:
                self._error(ServeError(404, f"unknown operation {match[2]!r}: reset, step, snapshot, restore or fork"))
        else:
            self._error(ServeError(404, f"no route {method} {path}: see GET /v1/schema and docs/serve.md"))

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_OPTIONS = _route

    def _operate(self, op: str, session: str | None, body: bytes) -> None:
        if not self._authorized():
            return
        try:
            fields = loads(body) if body.strip() else {}
            if not isinstance(fields, dict):
                raise ServeError(400, "the request body must be a JSON object")
            if session is not None:
                fields["session"] = session
            result = self.server.dispatch(op, fields, None, None)
        except json.JSONDecodeError as exc:
            self._error(ServeError(400, f"the request body is not JSON: {exc}"))
        except Exception as exc:  # noqa: BLE001 - every failure becomes an error reply; the session stays
            self._error(exc)
        else:
            self._json(201 if op in ("make", "fork") else 200, result)

    def _body(self) -> bytes | None:
        """The request's body (read whole, so the connection stays usable), or None once refused."""
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            self._error(ServeError(411, "send the body with a Content-Length, not chunked"))
            return None
        given = {value.strip() for value in self.headers.get_all("Content-Length") or []}
        if len(given) > 1 or not all(_CONTENT_LENGTH.fullmatch(value) for value in given):
            self.close_connection = True
            self._error(ServeError(400, f"Content-Length must be one non-negative integer, not {sorted(given)}"))
            return None
        length = int(given.pop()) if given else 0
        if length > MAX_REQUEST:
            self.close_connection = True
            self._error(ServeError(413, f"a request body must have a Content-Length of at most {MAX_REQUEST} bytes"))
            return None
        if not length:
            return b""
        server, connection = self.server, self.connection
        server.set_deadline(connection, server.head_timeout + length / server.body_rate)
        body = self.rfile.read(length)
        if server.clear_deadline(connection) or len(body) < length:
            self.close_connection = True
            self._error(ServeError(408, f"the body ended or stalled before its Content-Length of {length} bytes"))
            return None
        return body

    def _authorized(self) -> bool:
        if authorized(self.headers.get("Authorization"), self.server.token):
            self._trusted = True
            return True
        self._error(ServeError(401, _UNAUTHORIZED))
        return False

    def _error(self, exc: Exception) -> None:
        reply = error_reply(exc)
        self._json(reply.status, reply.model_dump())

    def _json(self, status: int, value: Any) -> None:
        self._send(status, dumps(value).encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _websocket(self) -> None:
        """Upgrade, then answer messages on this thread until the client goes or idles past the timeout."""
        key = self.headers.get("Sec-WebSocket-Key", "")
        upgrade = "websocket" in (self.headers.get("Upgrade") or "").lower()
        if not upgrade or self.headers.get("Sec-WebSocket-Version") != "13" or not valid_key(key):
            self.close_connection = True
            self._error(ServeError(400, "a WebSocket handshake (version 13) is expected at /v1/ws"))
            return
        if not self._authorized():
            self.close_connection = True
            return
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept_key(key))
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        ws = WebSocket(self.connection, self.rfile, client=False, max_size=MAX_REQUEST)
        manager, owner = self.server.manager, secrets.token_hex(8)
        try:
            while True:
                message = ws.recv(timeout=manager.idle_timeout)
                reply, frames = ws_reply(self.server.dispatch, message, owner)
                ws.send(dumps(reply))
                for frame in frames.frames:
                    ws.send(frame)
        except (WebSocketClosed, ProtocolError, TimeoutError, OSError):
            pass
        finally:
            ws.close()
            manager.close_owned(owner)
