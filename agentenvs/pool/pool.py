"""``EnvPool``: many envs kept busy while a trainer's model generates, each stepping as soon as its action comes.

A trainer submits an action to one env and goes on; the step runs in the
background and its result is collected with ``poll`` (or ``apoll`` under
asyncio) together with whatever else finished. When an episode ends, its env
begins the next episode at once and delivers the reset's observation as a
result of its own, so the trainer only ever answers results that need an
action. This is the rollout-wise scheduling of DART (an env that finishes
starts the next episode, nobody waits for the slowest), against the
batch-wise lockstep of synchronous trainers; ``benchmarks/env_utilization.py``
measures the difference.

Tasks are a shared queue: the pool's k-th episode (in the order episodes
begin) plays ``task_ids[k % len(task_ids)]`` with seed ``seed + k``, so the
sequence of (task, seed) pairs is fixed whatever the timing; which env plays
it is not. The pool reaches families only through the registry
(``agentenvs.make``), and an env is reused for the next episode when that
episode's task is of the same family.
"""

from __future__ import annotations

import asyncio
import collections
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentenvs.core.registry import accepts_option
from agentenvs.core.task import Task
from agentenvs.pool.results import (
    EnvBusyError,
    PoolClosedError,
    PoolError,
    PoolResult,
    PoolStats,
    UnknownEnvError,
)
from agentenvs.pool.slots import IDLE, READY, RETIRED, WORKING, Slot, resolve_task
from agentenvs.pool.workers import Call, PoolExecutor, Reply, ThreadExecutor, Worker

#: How often the watchdog looks for calls past their deadline.
WATCH_INTERVAL_SEC = 0.1


class EnvPool:
    """``size`` envs working through ``task_ids``; ``submit`` an action, ``poll`` for what finished.

    ``backend`` goes to the families that take one (``"local"``, ``"docker"``);
    ``env_kwargs`` to every env. ``episodes`` caps the episodes begun (None:
    no cap); an env whose episode ends with none left retires. ``oracle=True``
    puts the task's reference actions on every reset result. An env call
    running past ``call_timeout`` seconds is abandoned: its env is closed, a
    result says so and a fresh env takes the slot; an env that fails
    ``max_failures`` times in a row retires. ``executor`` decides where envs
    run (threads in this process by default).
    """

    def __init__(
        self,
        task_ids: Sequence[str | Task],
        size: int,
        backend: str | None = None,
        *,
        env_kwargs: Mapping[str, Any] | None = None,
        seed: int | None = None,
        episodes: int | None = None,
        oracle: bool = False,
        call_timeout: float | None = 900.0,
        max_failures: int = 3,
        executor: PoolExecutor | None = None,
    ):
        if isinstance(task_ids, str):
            raise TypeError("task_ids is a list of task ids; got a single string")
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        if episodes is not None and episodes < 0:
            raise ValueError(f"episodes must be None or at least 0, got {episodes}")
        if call_timeout is not None and call_timeout <= 0:
            raise ValueError(f"call_timeout must be None or positive, got {call_timeout}")
        self.tasks = [resolve_task(t) for t in task_ids]
        if not self.tasks:
            raise ValueError("task_ids is empty: give the pool at least one task")
        self.size = size
        self.seed = seed
        self.episodes = episodes
        self.oracle = oracle
        self.call_timeout = call_timeout
        self.max_failures = max(1, max_failures)
        self.executor = executor or ThreadExecutor()
        self._kwargs: dict[str, dict[str, Any]] = {}
        for family in {t.family for t in self.tasks}:
            kwargs = dict(env_kwargs or {})
            if backend is not None and accepts_option(family, "backend"):
                kwargs["backend"] = backend
            self._kwargs[family] = kwargs
        self._cond = threading.Condition()
        self._slots = [Slot(i) for i in range(size)]
        self._results: collections.deque[PoolResult] = collections.deque()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._abandoned: list[Worker] = []
        self._next_episode = 0
        self._tokens = 0
        self._started_at: float | None = None
        self._closed_at: float | None = None
        self._watchdog: threading.Thread | None = None
        self._stop_watch = threading.Event()

    # -- lifecycle ----------------------------------------------------------------

    def start(self) -> None:
        """Begin every env's first episode in the background; the resets arrive through ``poll``."""
        with self._cond:
            self._check_open()
            if self._started_at is not None:
                raise PoolError("the pool is already started")
            self._started_at = time.perf_counter()
            for slot in self._slots:
                slot.worker = self.executor.spawn(slot.env_id, self._on_reply)
                self._begin_next(slot, fresh=True)
            if self.call_timeout is not None:
                self._watchdog = threading.Thread(target=self._watch, name="agentenvs-pool-watchdog", daemon=True)
                self._watchdog.start()

    def reset_all(self, timeout: float | None = None) -> list[PoolResult]:
        """``start``, then wait until every env awaits its first action (or gave up), and return those results.

        Normally one reset result per env, in env order. A failed reset shows as
        an error result followed by the reset of the env that replaced it. Envs
        still resetting at ``timeout`` deliver their first result through ``poll``.
        """
        self.start()
        return sorted(self.poll(timeout, min_results=sys.maxsize), key=lambda r: r.env_id)

    def close(self, timeout: float = 10.0) -> None:
        """Close every env: wait up to ``timeout`` s for calls in flight, then close their envs regardless. Idempotent."""
        with self._cond:
            if self._closed_at is not None:
                return
            self._closed_at = time.perf_counter()
            workers = [s.worker for s in self._slots if s.worker is not None] + self._abandoned
            self._cond.notify_all()
            self._wake_async()
        self._stop_watch.set()
        for worker in workers:
            worker.stop()
        deadline = time.monotonic() + timeout
        stuck = [w for w in workers if not w.join(max(0.0, deadline - time.monotonic()))]
        for worker in stuck:
            worker.force_close()
        for worker in stuck:
            worker.join(1.0)
        if self._watchdog is not None:
            self._watchdog.join(5.0)

    @property
    def closed(self) -> bool:
        return self._closed_at is not None

    def __enter__(self) -> EnvPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> EnvPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- submitting and polling ------------------------------------------------------

    def submit(self, env_id: int, action: Any) -> None:
        """Step env ``env_id`` with ``action`` in the background; returns at once. The env must await an action."""
        with self._cond:
            self._check_open()
            slot = self._slot(env_id)
            if slot.state != READY:
                raise EnvBusyError(slot.why_busy())
            self._send(slot, "step", action=action)

    def poll(
        self, timeout: float | None = None, min_results: int = 1, max_results: int | None = None
    ) -> list[PoolResult]:
        """Results that finished, oldest first, once ``min_results`` are in or ``timeout`` s have passed.

        Returns early, with what there is, when no env is working: the thread
        blocked here cannot submit, so nothing more could come. (``apoll`` waits
        instead, since other tasks on the loop may submit meanwhile.)
        """
        with self._cond:
            self._wait(lambda: len(self._results) >= min_results or not self._working(), timeout)
            return self._take(max_results)

    async def asubmit(self, env_id: int, action: Any) -> None:
        """``submit`` for asyncio callers (it never blocks)."""
        self.submit(env_id, action)

    async def apoll(
        self, timeout: float | None = None, min_results: int = 1, max_results: int | None = None
    ) -> list[PoolResult]:
        """``poll`` without blocking the event loop: results wake the loop as they come.

        Unlike ``poll`` it also waits while envs only await actions, because
        other tasks on the loop (the policy's replies) submit them; it returns
        early only when nothing can come any more (the pool is done or closed).
        A lone coroutine that awaits ``apoll`` before submitting waits for ``timeout``.
        """
        return await self._await(lambda: len(self._results) >= min_results or self._idle(), timeout, max_results)

    async def areset_all(self, timeout: float | None = None) -> list[PoolResult]:
        """``reset_all`` for asyncio callers."""
        self.start()
        return sorted(await self._await(lambda: not self._working(), timeout, None), key=lambda r: r.env_id)

    async def _await(
        self, satisfied: Callable[[], bool], timeout: float | None, max_results: int | None
    ) -> list[PoolResult]:
        """Wait on the loop until ``satisfied()`` (checked with the lock held), ``timeout`` or close; take results."""
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        waiter = (loop, event)
        deadline = None if timeout is None else loop.time() + timeout
        with self._cond:
            self._waiters.add(waiter)
        try:
            while True:
                with self._cond:
                    if satisfied() or self.closed:
                        return self._take(max_results)
                    event.clear()  # a delivery (or a submit) after this sets it again, through the loop
                remaining = None if deadline is None else deadline - loop.time()
                if remaining is not None and remaining <= 0:
                    with self._cond:
                        return self._take(max_results)
                try:
                    await asyncio.wait_for(event.wait(), remaining)
                except TimeoutError:
                    pass
        finally:
            with self._cond:
                self._waiters.discard(waiter)

    async def aclose(self, timeout: float = 10.0) -> None:
        await asyncio.to_thread(self.close, timeout)

    # -- what the pool is doing ------------------------------------------------------

    def ready_envs(self) -> list[int]:
        """Envs waiting for an action."""
        with self._cond:
            return [s.env_id for s in self._slots if s.state == READY]

    @property
    def done(self) -> bool:
        """Started, and nothing is left to do: every env is retired."""
        with self._cond:
            return self._started_at is not None and all(s.state == RETIRED for s in self._slots)

    def stats(self) -> PoolStats:
        """Busy time against wall time per env, with steps, resets, finished episodes and errors, since ``start``."""
        with self._cond:
            now = self._closed_at or time.perf_counter()
            wall = now - self._started_at if self._started_at is not None else 0.0
            return PoolStats(wall, tuple(s.stats(now, wall) for s in self._slots))

    # -- the controller (with the lock held) -----------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise PoolClosedError("the pool is closed")

    def _slot(self, env_id: int) -> Slot:
        if isinstance(env_id, bool) or not isinstance(env_id, int) or not 0 <= env_id < self.size:
            raise UnknownEnvError(f"no env {env_id!r} in this pool: env ids run from 0 to {self.size - 1}")
        return self._slots[env_id]

    def _working(self) -> bool:
        return any(s.state == WORKING for s in self._slots)

    def _idle(self) -> bool:
        """Nothing can come any more: no env is working or awaiting an action."""
        return all(s.state in (IDLE, RETIRED) for s in self._slots)

    def _wait(self, satisfied: Callable[[], bool], timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not satisfied() and not self.closed:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return
            self._cond.wait(remaining)

    def _take(self, limit: int | None) -> list[PoolResult]:
        count = len(self._results) if limit is None else min(limit, len(self._results))
        return [self._results.popleft() for _ in range(count)]

    def _send(self, slot: Slot, op: str, **fields: Any) -> None:
        assert slot.worker is not None
        self._tokens += 1
        slot.token, slot.op, slot.state = self._tokens, op, WORKING
        slot.requested = time.perf_counter()
        slot.worker.send(Call(token=slot.token, op=op, **fields))  # type: ignore[arg-type]

    def _begin_next(self, slot: Slot, *, fresh: bool) -> bool:
        """Send ``slot`` the next episode of the queue; retire it (False) when the pool has none left."""
        if self.closed or (self.episodes is not None and self._next_episode >= self.episodes):
            slot.state = RETIRED
            return False
        k = self._next_episode
        self._next_episode += 1
        task = self.tasks[k % len(self.tasks)]
        slot.task, slot.episode, slot.step = task, k, 0
        seed = None if self.seed is None else self.seed + k
        self._send(slot, "begin", task=task.ref, family=task.family, seed=seed, env_kwargs=self._kwargs[task.family],
                   fresh=fresh, oracle=self.oracle)  # fmt: skip
        return True

    def _deliver(self, result: PoolResult) -> None:
        self._results.append(result)
        self._cond.notify_all()
        self._wake_async()

    def _wake_async(self) -> None:
        for loop, event in list(self._waiters):
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that loop is closed
                self._waiters.discard((loop, event))

    def _on_reply(self, worker: Worker, reply: Reply) -> None:
        """A worker's call finished (called in the worker's thread)."""
        with self._cond:
            slot = self._slots[worker.env_id]
            if self.closed or slot.worker is not worker or slot.token != reply.token or slot.state != WORKING:
                return  # stale: the call was abandoned, or the pool is closing
            slot.busy_sec += reply.env_sec
            if reply.error is not None:
                self._fail(slot, f"{type(reply.error).__name__}: {reply.error}", "exception", reply.env_sec)
                return
            base = {**slot.result_fields(), "env_sec": reply.env_sec}
            if slot.op == "begin":
                obs, info, oracle = reply.value
                slot.resets += 1
                slot.failures = 0
                slot.state = READY
                self._deliver(PoolResult(step=0, obs=obs, info=info, is_reset=True, oracle_actions=oracle, **base))
                return
            obs, reward, terminated, truncated, info = reply.value
            slot.step += 1
            slot.steps += 1
            step = slot.step
            going_on = True
            if terminated or truncated:
                slot.episodes += 1
                going_on = self._begin_next(slot, fresh=False)
            else:
                slot.state = READY
            self._deliver(PoolResult(step=step, obs=obs, reward=float(reward), terminated=bool(terminated),
                                     truncated=bool(truncated), info=info, env_retired=not going_on, **base))  # fmt: skip

    def _fail(self, slot: Slot, message: str, kind: str, env_sec: float) -> None:
        """The call in flight failed: report it, and begin the next episode on a fresh env (or retire the slot)."""
        slot.errors += 1
        slot.failures += 1
        result = {**slot.result_fields(), "step": slot.step + (slot.op == "step"), "obs": None,
                  "is_reset": slot.op == "begin", "error_kind": kind, "env_sec": env_sec}  # fmt: skip
        if slot.failures >= self.max_failures:
            slot.state = RETIRED
            message += f" (env {slot.env_id} failed {slot.failures} times in a row: retired)"
            going_on = False
        else:
            going_on = self._begin_next(slot, fresh=True)
        self._deliver(PoolResult(**result, error=message, env_retired=not going_on))

    def _watch(self) -> None:
        """Abandon calls past ``call_timeout``: their env is closed and a fresh worker takes the slot."""
        assert self.call_timeout is not None
        while not self._stop_watch.wait(WATCH_INTERVAL_SEC):
            with self._cond:
                if self.closed:
                    return
                now = time.perf_counter()
                for slot in self._slots:
                    if slot.state != WORKING or now - slot.requested <= self.call_timeout:
                        continue
                    old = slot.worker
                    assert old is not None
                    old.abandon()
                    self._abandoned.append(old)
                    slot.worker = self.executor.spawn(slot.env_id, self._on_reply)
                    slot.busy_sec += now - slot.requested
                    what = "reset" if slot.op == "begin" else "step"
                    self._fail(slot, f"the {what} ran past the pool's {self.call_timeout:g} s deadline; "
                               "its env was closed", "timeout", now - slot.requested)  # fmt: skip
