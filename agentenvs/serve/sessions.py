"""The server's core: live sessions, each one env, shared by the HTTP routes and the WebSocket.

One session is one env (and so one sandbox, browser or desktop). The manager
bounds how many live at once, serialises the operations on each session,
runs the env's blocking calls on the session's own thread (so one env's slow
step never holds up another session), closes sessions idle past a timeout,
and closes the sessions a WebSocket connection owned when it goes away, so a
client that disconnects mid-episode frees its sandbox.
"""

from __future__ import annotations

import asyncio
import queue
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium

from agentenvs.core.errors import TaskNotFoundError
from agentenvs.core.introspect import env_interface
from agentenvs.serve.codec import ImageFormat, encode_value, space_to_json
from agentenvs.serve.protocol import SessionInfo

EnvFactory = Callable[[str, dict[str, Any]], gymnasium.Env]
#: A step run on the event loop (an env with ``quick_steps``) that takes longer than this sends the
#: session's later steps to its thread: the loop is shared by every connection. A generated text
#: game's slowest steps (a solver replanning) took up to 4 ms on a loaded 2-core machine.
INLINE_BUDGET_SEC = 0.010


class ServeError(Exception):
    """A request the server refuses or could not carry out; ``status`` is its HTTP status."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def make_registered_env(env: str, kwargs: dict[str, Any]) -> gymnasium.Env:
    """The env for a registered task id or an agentenvs Gymnasium id; never a path on the server."""
    from agentenvs.core.registry import get_family, split_task_id

    if env.startswith("agentenvs/"):
        if "task" in kwargs:
            raise ServeError(400, "pass the task as kwargs.task_id (a registered task id); task= is not accepted")
        if env not in gymnasium.registry:
            raise ServeError(404, f"no env {env!r}: the ids are agentenvs/<family>-v0")
        return gymnasium.make(env, **kwargs)
    if {"task", "task_id"} & kwargs.keys():
        raise ServeError(400, f"{env!r} already names the task: drop task=/task_id= from kwargs")
    family, task_id = split_task_id(env)
    return gymnasium.make(get_family(family).gym_id, task_id=task_id, **kwargs)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the request was cancelled (its connection went away) while the env worked
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


class Worker:
    """One long-lived thread that runs a session's env calls in order.

    Handing a call to a waiting thread through a ``SimpleQueue`` costs about half
    of what a thread pool's submit and future chain cost, and every call of an
    env lands on the same thread (which thread-bound libraries need).
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="agentenvs-serve-session", daemon=True).start()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            loop, future, fn, args = job
            error: BaseException | None = None
            result = None
            try:
                result = fn(*args)
            except Exception as exc:  # noqa: BLE001 - handed to the request that asked
                error = exc
            except BaseException as exc:  # noqa: BLE001 - SystemExit in an env must not end the server's loop
                error = RuntimeError(f"the env raised {exc!r}")
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:  # the loop closed: the server is shutting down
                return

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on this thread, after the calls before it; the event loop serves others meanwhile."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((loop, future, fn, args))
        return await future

    def stop(self) -> None:
        """End the thread once the calls already handed to it are done."""
        self._jobs.put(None)


@dataclass
class Session:
    id: str
    env_id: str
    env: gymnasium.Env
    image_format: ImageFormat
    owner: str | None
    worker: Worker
    last_used: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Whether steps may run on the event loop when the env says they are quick (its ``quick_steps``);
    #: False for good once one took longer than ``INLINE_BUDGET_SEC``.
    inline: bool = True

    def info(self) -> SessionInfo:
        interface = env_interface(self.env)
        return SessionInfo(
            session=self.id,
            env=self.env_id,
            observation_space=space_to_json(self.env.observation_space),
            action_space=space_to_json(self.env.action_space),
            metadata=encode_value(dict(self.env.metadata or {})),
            family=interface["family"] or None,
            action_tools=interface["tools"],
            prompt_description=interface["prompt_description"],
        )


class SessionManager:
    """Live sessions under a bound, with idle reaping; each session's env calls run on its own thread."""

    def __init__(
        self,
        *,
        max_sessions: int = 16,
        idle_timeout: float = 600.0,
        make_env: EnvFactory = make_registered_env,
    ):
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._make_env = make_env
        self._sessions: dict[str, Session] = {}
        self._starting = 0
        self.reaped = 0

    @property
    def live(self) -> int:
        return len(self._sessions)

    def _reserve(self) -> None:
        if len(self._sessions) + self._starting >= self.max_sessions:
            raise ServeError(
                429,
                f"the server is at its bound of {self.max_sessions} live sessions: close one "
                "(or wait for idle ones to be reaped), or start the server with a larger --max-sessions",
            )
        self._starting += 1

    async def _adopt(
        self, env: gymnasium.Env, worker: Worker, env_id: str, image_format: ImageFormat, owner: str | None
    ) -> Session:
        session = Session(secrets.token_urlsafe(12), env_id, env, image_format, owner, worker)
        try:
            session.info()
        except Exception as exc:
            try:
                await worker.run(env.close)
            finally:
                worker.stop()
            raise ServeError(400, f"this env cannot be served: {exc}") from exc
        self._sessions[session.id] = session
        return session

    async def make(self, env_id: str, kwargs: dict[str, Any], image_format: ImageFormat, owner: str | None) -> Session:
        self._reserve()
        worker = Worker()
        try:
            try:
                env = await worker.run(self._make_env, env_id, kwargs)
            except BaseException:
                worker.stop()
                raise
            return await self._adopt(env, worker, env_id, image_format, owner)
        except ServeError:
            raise
        except TaskNotFoundError as exc:
            raise ServeError(404, str(exc)) from exc
        except TypeError as exc:
            raise ServeError(400, f"cannot make {env_id!r} with these kwargs: {exc}") from exc
        except Exception as exc:
            raise ServeError(400, f"cannot make {env_id!r}: {type(exc).__name__}: {exc}") from exc
        finally:
            self._starting -= 1

    def get(self, session_id: str | None) -> Session:
        session = self._sessions.get(session_id or "")
        if session is None:
            raise ServeError(
                404,
                f"no live session {session_id!r}: it was closed, reaped after {self.idle_timeout:g} s idle, "
                "or its WebSocket went away; make a new one",
            )
        return session

    async def call(self, session: Session, method: Callable[..., Any], *args: Any, quick: bool = False) -> Any:
        """Run one env operation on the session, after any other operation on it finished.

        ``quick`` (a step) runs on the event loop itself when the session is ``inline`` and the env
        says its steps are quick (in memory, never blocking): then the hop to a thread costs more
        than the step.
        """
        async with session.lock:
            if self._sessions.get(session.id) is not session:
                raise ServeError(404, f"session {session.id!r} was closed while this request waited")
            try:
                if not (quick and session.inline and getattr(session.env.unwrapped, "quick_steps", False)):
                    return await session.worker.run(method, *args)
                started = time.perf_counter()
                try:
                    return method(*args)
                finally:
                    if time.perf_counter() - started > INLINE_BUDGET_SEC:
                        session.inline = False
            finally:
                session.last_used = time.monotonic()

    async def fork(self, session: Session, owner: str | None) -> Session:
        fork = getattr(session.env.unwrapped, "fork", None)
        if fork is None:
            raise ServeError(501, f"{type(session.env.unwrapped).__name__} cannot fork")
        self._reserve()
        try:
            child = await self.call(session, fork)
            return await self._adopt(child, Worker(), session.env_id, session.image_format, owner)
        finally:
            self._starting -= 1

    def attach(self, session: Session, owner: str | None) -> Session:
        session.owner = owner
        session.last_used = time.monotonic()
        return session

    async def close(self, session_id: str) -> bool:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        async with session.lock:
            try:
                await session.worker.run(session.env.close)
            finally:
                session.worker.stop()
        return True

    async def close_owned(self, owner: str) -> int:
        ids = [s.id for s in self._sessions.values() if s.owner == owner]
        await asyncio.gather(*(self.close(i) for i in ids), return_exceptions=True)
        return len(ids)

    async def reap_idle(self) -> int:
        """Close every session nobody has used for ``idle_timeout`` seconds (not one mid-operation)."""
        now = time.monotonic()
        idle = [s.id for s in self._sessions.values() if not s.lock.locked() and now - s.last_used > self.idle_timeout]
        self.reaped += len(idle)
        await asyncio.gather(*(self.close(i) for i in idle), return_exceptions=True)
        return len(idle)

    async def reaper(self) -> None:
        """Reap idle sessions until cancelled."""
        period = max(0.05, min(self.idle_timeout / 4, 5.0))
        while True:
            await asyncio.sleep(period)
            await self.reap_idle()

    async def close_all(self) -> None:
        await asyncio.gather(*(self.close(i) for i in list(self._sessions)), return_exceptions=True)
