"""Executors: where envs live and where their blocking calls run.

The runner talks to envs only through ``EnvHandle``, so where an env lives
is the executor's business. A handle's blocking methods are made for a
worker thread: the runner plays each episode's whole reset/step loop in
one thread (a lane), so a fast env pays no thread handoff per step. The
async methods run the same calls off the event loop for callers that live
on it. ``LocalExecutor`` makes envs in this process with ``agentenvs.make``;
``RayExecutor`` (ray_executor.py) hands out handles to Ray actors.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import agentenvs
from agentenvs.core.introspect import env_artifacts, env_interface, env_oracle_actions

T = TypeVar("T")

#: How long ``close`` waits for a stuck call to return before closing anyway.
CLOSE_GRACE_SEC = 30.0


class EnvHandle(ABC):
    """One env. ``*_blocking`` methods block the calling thread; the async ones run them on a worker thread."""

    @abstractmethod
    def reset_blocking(self, seed: int) -> tuple[dict[str, Any], dict[str, Any]]: ...

    @abstractmethod
    def step_blocking(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]: ...

    @abstractmethod
    def describe_blocking(self) -> dict[str, Any]:
        """``{"family", "tools", "prompt_description"}`` of the unwrapped env."""

    @abstractmethod
    def oracle_actions_blocking(self) -> list[Any] | None:
        """The env's own solver for the current episode; ``None`` when the family or task has none."""

    def artifacts_blocking(self) -> dict[str, bytes]:
        """Files the finished episode left for the run's records (none unless the executor fetches them)."""
        return {}

    @abstractmethod
    def close_blocking(self) -> None:
        """Close the env; waits up to ``CLOSE_GRACE_SEC`` for a call in flight, then closes anyway. Idempotent."""

    @abstractmethod
    async def _offload(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` off the event loop."""

    async def reset(self, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
        return await self._offload(self.reset_blocking, seed)

    async def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        return await self._offload(self.step_blocking, action)

    async def describe(self) -> dict[str, Any]:
        return self.describe_blocking()

    async def oracle_actions(self) -> list[Any] | None:
        return await self._offload(self.oracle_actions_blocking)

    async def close(self) -> None:
        await asyncio.shield(self._offload(self.close_blocking))


class Executor(ABC):
    """Makes env handles. One per run."""

    name: str = ""

    @abstractmethod
    def open_blocking(self, task_id: str, env_kwargs: dict[str, Any]) -> EnvHandle:
        """Make an env, from a worker thread."""

    @abstractmethod
    async def open(self, task_id: str, env_kwargs: dict[str, Any]) -> EnvHandle: ...

    async def aclose(self) -> None:
        """Release workers."""

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


class LocalEnvHandle(EnvHandle):
    def __init__(self, env: Any, pool: ThreadPoolExecutor):
        self._env = env
        self._pool = pool
        # Held during each call, so ``close`` can wait for the one in flight.
        self._lock = threading.Lock()
        self._closed = False

    def reset_blocking(self, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
        with self._lock:
            return self._env.reset(seed=seed)

    def step_blocking(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        with self._lock:
            return self._env.step(action)

    def describe_blocking(self) -> dict[str, Any]:
        return env_interface(self._env)

    def oracle_actions_blocking(self) -> list[Any] | None:
        with self._lock:
            return env_oracle_actions(self._env)

    def artifacts_blocking(self) -> dict[str, bytes]:
        with self._lock:
            return env_artifacts(self._env)

    def close_blocking(self) -> None:
        if self._closed:
            return
        self._closed = True
        got = self._lock.acquire(timeout=CLOSE_GRACE_SEC)
        try:
            self._env.close()
        finally:
            if got:
                self._lock.release()

    async def _offload(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)


class LocalExecutor(Executor):
    """Envs in this process; async calls on a thread pool sized for the sandboxes in flight."""

    name = "local"

    def __init__(self, max_workers: int = 4):
        # Room for a close per env beside its stuck call.
        self._pool = ThreadPoolExecutor(max_workers=max(2, 2 * max_workers), thread_name_prefix="agentenvs-env")
        self.max_workers = max_workers

    def open_blocking(self, task_id: str, env_kwargs: dict[str, Any]) -> EnvHandle:
        return LocalEnvHandle(agentenvs.make(task_id, **env_kwargs), self._pool)

    async def open(self, task_id: str, env_kwargs: dict[str, Any]) -> EnvHandle:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.open_blocking, task_id, env_kwargs)

    async def aclose(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "threads": self._pool._max_workers}


#: Executors by name: where each lives, imported only when chosen (Ray is an optional extra).
EXECUTORS: dict[str, str] = {
    "local": "agentenvs.harness.executor:LocalExecutor",
    "ray": "agentenvs.harness.ray_executor:RayExecutor",
}


def make_executor(name: str, max_workers: int, options: dict[str, Any] | None = None) -> Executor:
    """The executor ``name`` with its ``options`` (the ray executor's ``address``)."""
    if name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; choose one of: {', '.join(EXECUTORS)}")
    module, _, cls = EXECUTORS[name].partition(":")
    return getattr(importlib.import_module(module), cls)(max_workers=max_workers, **(options or {}))


def run_in_thread(fn: Callable[[], T], name: str) -> asyncio.Future[T]:
    """Run ``fn`` on a new daemon thread; the future resolves on the running loop.

    A daemon thread, unlike a pool's, never holds up the interpreter's exit
    when an abandoned env call hangs for good.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)

    def main() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting side
            error = exc
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # the loop is gone: nobody waits for this thread any more
            pass

    threading.Thread(target=main, name=name, daemon=True).start()
    return future
