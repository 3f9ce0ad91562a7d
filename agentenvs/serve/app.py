"""The env server's routes: one dispatcher behind HTTP routes and a WebSocket.

Every request needs ``Authorization: Bearer <token>``. Over HTTP an operation
is ``POST /v1/sessions`` (make) or ``POST /v1/sessions/{id}/{op}``, images
inline in base64; over ``/v1/ws`` a message is ``{"id", "op", "session", ...}``
and its reply is followed by one binary frame per image. Sessions made over a
WebSocket belong to it and are closed when it goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import secrets
from collections.abc import AsyncIterator
from typing import Any

import gymnasium
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from agentenvs.core.errors import NoTaskChosenError, TaskNotFoundError
from agentenvs.serve.codec import Attachments, CodecError, decode_value, dumps, encode_value, loads
from agentenvs.serve.protocol import (
    SESSION_OPS,
    ErrorReply,
    MakeRequest,
    ResetRequest,
    RestoreRequest,
    StepRequest,
    WsReply,
    WsRequest,
    json_schema,
)
from agentenvs.serve.sessions import ServeError, Session, SessionManager


def _status(exc: Exception) -> int:
    if isinstance(exc, ServeError):
        return exc.status
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
    else:
        message = str(exc) or type(exc).__name__
    return ErrorReply(status=_status(exc), error=message, type=type(exc).__name__)


class Dispatcher:
    """Carries out one operation for a client (``owner``: its WebSocket, or None over HTTP)."""

    def __init__(self, manager: SessionManager):
        self.manager = manager

    async def __call__(self, op: str, fields: dict[str, Any], owner: str | None, frames: Attachments | None) -> Any:
        manager = self.manager
        if op == "make":
            made = MakeRequest.model_validate(fields)
            session = await manager.make(made.env, made.kwargs, made.image_format, owner)
            return session.info().model_dump()
        if op not in SESSION_OPS:
            raise ServeError(404, f"unknown operation {op!r}")
        session = manager.get(fields.pop("session", None))
        return await self._on_session(op, session, fields, owner, frames)

    async def _on_session(
        self, op: str, session: Session, fields: dict[str, Any], owner: str | None, frames: Attachments | None
    ) -> Any:
        manager, env = self.manager, session.env

        def encode(value: Any) -> Any:
            return encode_value(value, frames, session.image_format)

        if op == "describe":
            return session.info().model_dump()
        if op == "attach":
            return manager.attach(session, owner).info().model_dump()
        if op == "close":
            return {"closed": await manager.close(session.id)}
        if op == "fork":
            return (await manager.fork(session, owner)).info().model_dump()
        if op == "reset":
            reset = ResetRequest.model_validate(fields)
            obs, info = await manager.call(session, lambda: env.reset(seed=reset.seed, options=reset.options))
            return {"observation": encode(obs), "info": encode(info)}
        if op == "step":
            action = decode_value(StepRequest.model_validate(fields).action)
            obs, reward, terminated, truncated, info = await manager.call(session, env.step, action, quick=True)
            return {
                "observation": encode(obs),
                "reward": encode(float(reward)),
                "terminated": bool(terminated),
                "truncated": bool(truncated),
                "info": encode(info),
            }
        core = env.unwrapped
        if op == "snapshot":
            if not hasattr(core, "snapshot"):
                raise ServeError(501, f"{type(core).__name__} cannot snapshot")
            return {"ref": str(await manager.call(session, core.snapshot))}
        ref = RestoreRequest.model_validate(fields).ref
        if not hasattr(core, "restore"):
            raise ServeError(501, f"{type(core).__name__} cannot restore")
        obs, info = await manager.call(session, core.restore, ref)
        return {"observation": encode(obs), "info": encode(info)}


def create_app(token: str, manager: SessionManager) -> FastAPI:
    """The server's ASGI app. ``token`` is required on every request."""
    if not token:
        raise ValueError("the env server needs a token")
    dispatch = Dispatcher(manager)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        reaper = asyncio.create_task(manager.reaper())
        try:
            yield
        finally:
            reaper.cancel()
            await manager.close_all()

    app = FastAPI(title="agentenvs env server", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.manager = manager

    def authorized(headers: Any) -> bool:
        scheme, _, given = (headers.get("authorization") or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())

    def refuse(exc: Exception) -> JSONResponse:
        reply = error_reply(exc)
        return JSONResponse(reply.model_dump(), status_code=reply.status)

    async def http_op(request: Request, op: str, session: str | None = None) -> JSONResponse:
        if not authorized(request.headers):
            return refuse(ServeError(401, "missing or wrong token: send 'Authorization: Bearer <token>'"))
        try:
            raw = await request.body()
            fields = json.loads(raw) if raw.strip() else {}
            if not isinstance(fields, dict):
                raise ServeError(400, "the request body must be a JSON object")
            if session is not None:
                fields["session"] = session
            result = await dispatch(op, fields, None, None)
        except json.JSONDecodeError as exc:
            return refuse(ServeError(400, f"the request body is not JSON: {exc}"))
        except Exception as exc:  # noqa: BLE001 - every failure becomes an error reply; the session stays
            return refuse(exc)
        return JSONResponse(result, status_code=201 if op in ("make", "fork") else 200)

    @app.post("/v1/sessions")
    async def make(request: Request) -> JSONResponse:
        return await http_op(request, "make")

    @app.get("/v1/sessions/{session}")
    async def describe(request: Request, session: str) -> JSONResponse:
        return await http_op(request, "describe", session)

    @app.delete("/v1/sessions/{session}")
    async def close(request: Request, session: str) -> JSONResponse:
        return await http_op(request, "close", session)

    @app.post("/v1/sessions/{session}/{op}")
    async def operate(request: Request, session: str, op: str) -> JSONResponse:
        if op not in SESSION_OPS - {"attach", "close", "describe"}:
            return refuse(ServeError(404, f"unknown operation {op!r}: reset, step, snapshot, restore or fork"))
        return await http_op(request, op, session)

    @app.get("/v1/health")
    async def health(request: Request) -> JSONResponse:
        if not authorized(request.headers):
            return refuse(ServeError(401, "missing or wrong token: send 'Authorization: Bearer <token>'"))
        return JSONResponse({"ok": True, "live": manager.live, "max_sessions": manager.max_sessions})

    @app.get("/v1/schema")
    async def schema() -> JSONResponse:
        return JSONResponse(json_schema())

    @app.websocket("/v1/ws")
    async def websocket(ws: WebSocket) -> None:
        if not authorized(ws.headers):
            await ws.close(code=1008, reason="missing or wrong token")
            return
        await ws.accept()
        owner = secrets.token_hex(8)
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                reply, frames = await _ws_reply(dispatch, message, owner)
                await ws.send_text(dumps(reply.model_dump() if reply.error else _ok(reply)))
                for frame in frames.frames:
                    await ws.send_bytes(frame)
        except WebSocketDisconnect:
            pass
        finally:
            await manager.close_owned(owner)

    return app


def _ok(reply: WsReply) -> dict[str, Any]:
    """A success reply as a plain dict: the result is JSON already, so pydantic need not walk it again."""
    return {"id": reply.id, "ok": True, "result": reply.result, "error": None, "frames": reply.frames}


async def _ws_reply(dispatch: Dispatcher, message: dict[str, Any], owner: str) -> tuple[WsReply, Attachments]:
    frames = Attachments()
    request_id = None
    try:
        if message.get("text") is None:
            raise ServeError(400, "send each request as a JSON text frame")
        data = loads(message["text"])
        if isinstance(data, dict):
            request_id = data.get("id") if isinstance(data.get("id"), (int, str)) else None
        request = WsRequest.model_validate(data)
        fields = request.model_dump(exclude={"id", "op"}, exclude_none=True)
        result = await dispatch(request.op, fields, owner, frames)
    except json.JSONDecodeError as exc:
        return WsReply(id=None, ok=False, error=error_reply(ServeError(400, f"not JSON: {exc}"))), Attachments()
    except Exception as exc:  # noqa: BLE001 - the reply says what failed; the connection and sessions stay
        return WsReply(id=request_id, ok=False, error=error_reply(exc)), Attachments()
    return WsReply(id=request_id, ok=True, result=result, frames=len(frames.frames)), frames
