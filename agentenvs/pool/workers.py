"""Where a pool's envs live and run: the executor interface and its thread implementation.

The pool (the controller) decides what each env does next; a ``Worker`` only
carries out one ``Call`` at a time on the env it owns and hands the ``Reply``
to a callback. ``EnvRunner`` is the env-side half, free of threads, so that
another executor (a Ray actor per env, say) can host the same code and call
back when a remote call completes. ``ThreadExecutor`` runs each env in a
thread of its own, since env calls block on sandboxes and browsers.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import agentenvs
from agentenvs.core.introspect import env_oracle_actions
from agentenvs.core.task import Task

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Call:
    """One thing for an env to do: ``begin`` an episode of ``task`` (making an env first when needed) or ``step``."""

    token: int
    op: Literal["begin", "step"]
    #: What ``agentenvs.make`` and ``reset(options={"task": ...})`` take: ``"<family>/<id>"`` or a ``Task``.
    task: str | Task | None = None
    family: str = ""
    seed: int | None = None
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    action: Any = None
    #: Make a new env even when the current one runs this family (after an error).
    fresh: bool = False
    #: Also return the env's reference solution for the new episode.
    oracle: bool = False


@dataclass(frozen=True)
class Reply:
    """What a call produced: ``value`` (``(obs, info, oracle)`` for a begin, the step's 5-tuple) or ``error``."""

    token: int
    value: Any
    error: BaseException | None
    env_sec: float


class EnvRunner:
    """Owns at most one env and carries out calls on it. After any exception the env is closed and dropped.

    ``close`` may come from another thread while a call runs (a deadline, the
    pool closing): the env is closed under the call, closed again when the call
    returns (for whatever the call made after the first close), and an env made
    after it is closed at once.
    """

    def __init__(self) -> None:
        self.env: Any = None
        self.family = ""
        self._lock = threading.Lock()
        self._in_call = False
        self._closed = False
        #: An env closed by ``close`` while a call was running on it.
        self._orphan: Any = None

    def run(self, call: Call) -> Reply:
        started = time.perf_counter()
        with self._lock:
            self._in_call = True
        try:
            value = self._begin(call) if call.op == "begin" else self._step(call)
            error = None
        except Exception as exc:  # noqa: BLE001 - handed to the pool as a result
            value, error = None, exc
            self._drop()
        finally:
            with self._lock:
                self._in_call = False
                orphan, self._orphan = self._orphan, None
            if orphan is not None:
                self._close_env(orphan)
        return Reply(call.token, value, error, time.perf_counter() - started)

    def _begin(self, call: Call) -> tuple[dict[str, Any], dict[str, Any], list[Any] | None]:
        env = self.env
        if env is None or call.fresh or call.family != self.family:
            self._drop()
            env = agentenvs.make(call.task, **call.env_kwargs)
            with self._lock:
                closed = self._closed
                if not closed:
                    self.env, self.family = env, call.family
            if closed:
                self._close_env(env)
                raise RuntimeError("the env was closed while it was being made")
        obs, info = env.reset(seed=call.seed, options={"task": call.task})
        return obs, info, env_oracle_actions(env) if call.oracle else None

    def _step(self, call: Call) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.env is None:
            raise RuntimeError("no env to step: its episode never began or its env was closed")
        return self.env.step(call.action)

    def _drop(self) -> None:
        """Close the env from the runner's own call (after an error, or to change family)."""
        with self._lock:
            env, self.env, self.family = self.env, None, ""
        if env is not None:
            self._close_env(env)

    def close(self) -> None:
        """Close the env for good, from any thread, even with a call running on it. Idempotent."""
        with self._lock:
            self._closed = True
            env, self.env, self.family = self.env, None, ""
            if self._in_call and env is not None:
                self._orphan = env
        if env is not None:
            self._close_env(env)

    @staticmethod
    def _close_env(env: Any) -> None:
        try:
            env.close()
        except Exception:  # noqa: BLE001 - closing must not fail the pool
            log.warning("closing a pool env failed", exc_info=True)


class Worker(ABC):
    """One env slot's executor-side half: carries out calls one at a time, replying through a callback."""

    env_id: int

    @abstractmethod
    def send(self, call: Call) -> None:
        """Start ``call``; returns at once."""

    @abstractmethod
    def stop(self) -> None:
        """Close the env and end once the call in flight (if any) returns; returns at once."""

    @abstractmethod
    def abandon(self) -> None:
        """Give up on the call in flight: close the env from elsewhere; the worker sends no more replies."""

    @abstractmethod
    def force_close(self) -> None:
        """Close the env now, from the caller, even with a call in flight (the last step of closing a pool)."""

    @abstractmethod
    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the worker to end; whether it did (its env is closed)."""


class PoolExecutor(ABC):
    """Makes workers. ``spawn`` is called with the pool's lock held: it must not block."""

    name = ""

    @abstractmethod
    def spawn(self, env_id: int, on_reply: Callable[[Worker, Reply], None]) -> Worker: ...


class ThreadWorker(Worker):
    """A daemon thread and an inbox: a hung env call never holds up the interpreter's exit."""

    def __init__(self, env_id: int, on_reply: Callable[[Worker, Reply], None], runner: EnvRunner | None = None):
        self.env_id = env_id
        #: Where the calls run: an ``EnvRunner`` here, or a stand-in for one elsewhere (a Ray actor's).
        self.runner = runner or EnvRunner()
        self._on_reply = on_reply
        self._inbox: queue.SimpleQueue[Call | None] = queue.SimpleQueue()
        self._abandoned = False
        self._closer: threading.Thread | None = None
        self._thread = threading.Thread(target=self._main, name=f"agentenvs-pool-{env_id}", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            while True:
                call = self._inbox.get()
                if call is None or self._abandoned:
                    return
                reply = self.runner.run(call)
                if self._abandoned:
                    return
                try:
                    self._on_reply(self, reply)
                except Exception:  # noqa: BLE001 - the worker must outlive a bug in the callback
                    log.exception("the pool failed to take env %d's reply", self.env_id)
        finally:
            self.runner.close()

    def send(self, call: Call) -> None:
        self._inbox.put(call)

    def stop(self) -> None:
        self._inbox.put(None)

    def abandon(self) -> None:
        self._abandoned = True
        self._inbox.put(None)
        self._closer = threading.Thread(
            target=self.runner.close, name=f"agentenvs-pool-{self.env_id}-closer", daemon=True
        )
        self._closer.start()

    def force_close(self) -> None:
        self.runner.close()

    def join(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        for thread in (self._thread, self._closer):
            if thread is not None:
                thread.join(max(0.0, deadline - time.monotonic()))
        return not any(t is not None and t.is_alive() for t in (self._thread, self._closer))


class ThreadExecutor(PoolExecutor):
    """Every env in this process, each in its own thread."""

    name = "threads"

    def spawn(self, env_id: int, on_reply: Callable[[Worker, Reply], None]) -> Worker:
        return ThreadWorker(env_id, on_reply)
