"""The server's core: live sessions, each one env, shared by the HTTP routes and the WebSocket.

One session is one env (and so one sandbox, browser or desktop). The manager
bounds how many live at once, serialises the operations on each session,
runs them on the session's own thread or, for steps (see ``call``), on the
connection's, so one env's slow step never holds up another client; it closes
sessions idle past a timeout, and the sessions a WebSocket connection owned
when it goes away, so a client that disconnects mid-episode frees its sandbox.
"""

from __future__ import annotations

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


class Worker:
    """One long-lived thread that runs a session's env calls in order.

    A call is handed over through a ``SimpleQueue`` and answered through
    another (about 0.05 ms there and back here). The thread lives exactly as
    long as the session, so a process that a call starts is never taken down
    by the end of the thread that started it (bubblewrap's
    ``--die-with-parent`` follows the thread, not the process).
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="agentenvs-serve-session", daemon=True).start()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, args, reply = job
            try:
                reply.put((True, fn(*args)))
            except Exception as exc:  # noqa: BLE001 - handed to the request that asked
                reply.put((False, exc))
            except BaseException as exc:  # noqa: BLE001 - SystemExit in an env must not end the session's thread
                reply.put((False, RuntimeError(f"the env raised {exc!r}")))

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on this thread, after the calls before it."""
        reply: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self._jobs.put((fn, args, reply))
        ok, value = reply.get()
        if not ok:
            raise value
        return value

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
    lock: threading.Lock = field(default_factory=threading.Lock)

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
    """Live sessions under a bound, with idle reaping; each session's env calls run on its own thread.

    Thread-safe: every connection of the server calls it from its own thread.
    """

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
        self._lock = threading.Lock()
        #: Signalled when a close that another thread began has ended (``close_all`` waits for those).
        self._closed = threading.Condition(self._lock)
        self._closing = 0
        self._stop_reaping = threading.Event()
        self.reaped = 0

    @property
    def live(self) -> int:
        return len(self._sessions)

    def _reserve(self) -> None:
        with self._lock:
            if len(self._sessions) + self._starting >= self.max_sessions:
                raise ServeError(
                    429,
                    f"the server is at its bound of {self.max_sessions} live sessions: close one "
                    "(or wait for idle ones to be reaped), or start the server with a larger --max-sessions",
                )
            self._starting += 1

    def _unreserve(self) -> None:
        with self._lock:
            self._starting -= 1

    def _adopt(
        self, env: gymnasium.Env, worker: Worker, env_id: str, image_format: ImageFormat, owner: str | None
    ) -> Session:
        session = Session(secrets.token_urlsafe(12), env_id, env, image_format, owner, worker)
        try:
            session.info()
        except Exception as exc:
            try:
                worker.run(env.close)
            finally:
                worker.stop()
            raise ServeError(400, f"this env cannot be served: {exc}") from exc
        with self._lock:
            self._sessions[session.id] = session
        return session

    def make(self, env_id: str, kwargs: dict[str, Any], image_format: ImageFormat, owner: str | None) -> Session:
        self._reserve()
        worker = Worker()
        try:
            try:
                env = worker.run(self._make_env, env_id, kwargs)
            except BaseException:
                worker.stop()
                raise
            return self._adopt(env, worker, env_id, image_format, owner)
        except ServeError:
            raise
        except TaskNotFoundError as exc:
            raise ServeError(404, str(exc)) from exc
        except TypeError as exc:
            raise ServeError(400, f"cannot make {env_id!r} with these kwargs: {exc}") from exc
        except Exception as exc:
            raise ServeError(400, f"cannot make {env_id!r}: {type(exc).__name__}: {exc}") from exc
        finally:
            self._unreserve()

    def get(self, session_id: str | None) -> Session:
        session = self._sessions.get(session_id or "")
        if session is None:
            raise ServeError(
                404,
                f"no live session {session_id!r}: it was closed, reaped after {self.idle_timeout:g} s idle, "
                "or its WebSocket went away; make a new one",
            )
        return session

    def call(self, session: Session, method: Callable[..., Any], *args: Any, inline: bool = False) -> Any:
        """Run one env operation on the session, after any other operation on it finished.

        ``inline`` runs it on the calling thread instead of the session's: for a step asked for on
        the WebSocket that owns the session (its thread lives as long as the session), or a step of
        an env whose steps are quick (in memory, never blocking); then the hop to the session's
        thread and back costs more than is worth it, and a slow step holds up only its own client.
        Everything that may start long-lived processes (make, reset, restore, fork) stays on the
        session's thread.
        """
        with session.lock:
            if self._sessions.get(session.id) is not session:
                raise ServeError(404, f"session {session.id!r} was closed while this request waited")
            try:
                return method(*args) if inline else session.worker.run(method, *args)
            finally:
                session.last_used = time.monotonic()

    def fork(self, session: Session, owner: str | None) -> Session:
        fork = getattr(session.env.unwrapped, "fork", None)
        if fork is None:
            raise ServeError(501, f"{type(session.env.unwrapped).__name__} cannot fork")
        self._reserve()
        try:
            child = self.call(session, fork)
            return self._adopt(child, Worker(), session.env_id, session.image_format, owner)
        finally:
            self._unreserve()

    def attach(self, session: Session, owner: str | None) -> Session:
        session.owner = owner
        session.last_used = time.monotonic()
        return session

    def close(self, session_id: str) -> bool:
        with self._lock:
            session = self._sessions.pop(session_id, None)
            if session is None:
                return False
            self._closing += 1
        try:
            with session.lock:
                try:
                    session.worker.run(session.env.close)
                finally:
                    session.worker.stop()
        finally:
            with self._lock:
                self._closing -= 1
                self._closed.notify_all()
        return True

    def _close_each(self, ids: list[str]) -> None:
        """Close these sessions side by side (each env's close may take seconds); errors are the env's."""
        closers = [threading.Thread(target=self.close, args=(i,), name="agentenvs-serve-close") for i in ids]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join()

    def close_owned(self, owner: str) -> int:
        ids = [s.id for s in list(self._sessions.values()) if s.owner == owner]
        self._close_each(ids)
        return len(ids)

    def reap_idle(self) -> int:
        """Close every session nobody has used for ``idle_timeout`` seconds (not one mid-operation)."""
        now = time.monotonic()
        sessions = list(self._sessions.values())
        idle = [s.id for s in sessions if not s.lock.locked() and now - s.last_used > self.idle_timeout]
        self.reaped += len(idle)
        self._close_each(idle)
        return len(idle)

    def start_reaper(self) -> None:
        """Reap idle sessions on a thread of its own until ``close_all``."""
        period = max(0.05, min(self.idle_timeout / 4, 5.0))

        def reap() -> None:
            while not self._stop_reaping.wait(period):
                self.reap_idle()

        threading.Thread(target=reap, name="agentenvs-serve-reaper", daemon=True).start()

    def close_all(self, timeout: float = 300.0) -> None:
        """Stop reaping and close every session (the server is going away), including those another
        thread is closing now (a connection that ended with the server), waiting up to ``timeout``."""
        self._stop_reaping.set()
        self._close_each(list(self._sessions))
        with self._lock:
            self._closed.wait_for(lambda: self._closing == 0, timeout)
