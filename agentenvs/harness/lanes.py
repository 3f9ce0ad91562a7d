"""Lanes: the worker threads that play a run's episodes, and the watchdog that guards them.

One lane (a thread) per concurrency slot plays queued episodes back to back,
calling the env directly. The event loop watches each lane: one stuck in an
env call past its deadline is abandoned (its env closed) and a new lane
takes over the episode as a retry, recorded as an infra error.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenvs.core import InfraError, MachineLacksError, Task
from agentenvs.core.registry import accepts_option
from agentenvs.harness.config import RunConfig
from agentenvs.harness.episode import Deadlines, EpisodeInfraError, EpisodePlayer
from agentenvs.harness.executor import CLOSE_GRACE_SEC, Executor, run_in_thread
from agentenvs.harness.lane import Abandoned, Lane
from agentenvs.harness.trajectory import StepsFile, TrajectoryWriter

#: How often the watchdog looks at a lane that is not in an env call. A call that starts
#: between two looks is seen at the next one, so this bounds how late a deadline can fire.
WATCH_INTERVAL_SEC = 0.1


@dataclass
class Job:
    """One (task, trial) episode and its attempts so far; moves to a new lane if its lane is abandoned."""

    task: Task
    trial: int
    deadlines: Deadlines
    player: EpisodePlayer
    #: The episode's folder in the run (``trajectories/<task>/<trial>``), for its images and artifacts.
    trajectory: str
    started: str
    t0: float
    attempt: int = 0
    infra_errors: list[dict[str, Any]] = field(default_factory=list)
    #: Where the last attempt's steps are (``TrajectoryWriter.close``); None before one is written.
    steps_at: dict[str, Any] | None = None


class Lanes:
    """The lanes of one run, sharing its queue of (task, trial) pairs, its sandbox slots and its stop flag.

    ``make_job`` turns a queued pair into a ``Job``; ``record`` writes a finished
    episode's line (``outcome`` None when it was not scored); ``live`` is the set
    of running lanes, kept up to date so the runner can cancel their policy
    calls when it stops.
    """

    def __init__(
        self,
        config: RunConfig,
        executor: Executor,
        *,
        run_path: Path,
        queue: collections.deque[tuple[Task, int]],
        make_job: Callable[[Task, int], Job],
        record: Callable[[asyncio.AbstractEventLoop, Job, dict[str, Any] | None], None],
        sandboxes: threading.BoundedSemaphore,
        halt: threading.Event,
        live: set[Lane],
    ):
        self.config = config
        self.executor = executor
        self._run_path = run_path
        self._steps_numbers = itertools.count()
        self._queue = queue
        self._make_job = make_job
        self._record = record
        self._sandboxes = sandboxes
        self._halt = halt
        self._live = live

    # -- episodes (in lane threads) ---------------------------------------------

    def _attempt(self, lane: Lane, job: Job, steps: StepsFile) -> dict[str, Any]:
        """One attempt at ``job``'s episode: make the env, play it, close it."""
        task, trial = job.task, job.trial
        seed = self.config.seed_for(trial)
        env_kwargs = dict(self.config.env_kwargs)
        if self.config.max_steps is not None:
            env_kwargs["max_steps"] = self.config.max_steps
        if self.config.backend is not None and accepts_option(task.family, "backend"):
            env_kwargs["backend"] = self.config.backend
        while not self._sandboxes.acquire(timeout=0.2):
            if lane.stopping:
                raise Abandoned("stopped")
        lane.hold(self._sandboxes)
        try:
            try:
                handle = lane.env_call(
                    job.deadlines.reset,
                    "making the env",
                    self.executor.open_blocking,
                    self.config.task_ref(task.full_id),
                    env_kwargs,
                )
            except InfraError as exc:
                retry = not isinstance(exc, MachineLacksError)  # the machine will lack it next time too
                raise EpisodeInfraError(f"making the env failed: {exc}", retryable=retry) from None
            lane.hold(handle=handle)
            writer = TrajectoryWriter(job.trajectory, steps, save_images=self.config.save_images)
            try:
                result = job.player.play(lane, handle, task, trial, seed, writer)
            except InfraError as exc:
                retry = not isinstance(exc, MachineLacksError)
                raise EpisodeInfraError(f"{type(exc).__name__}: {exc}", retryable=retry) from None
            finally:
                if lane.stopping:
                    writer.discard()
                else:
                    job.steps_at = writer.close() or job.steps_at
        finally:
            lane.release()
        return {"seed": seed, **vars(result)}

    def _play_job(self, lane: Lane, job: Job, steps: StepsFile) -> None:
        """Attempts until one is scored or retries run out, then the episode's line."""
        outcome: dict[str, Any] | None = None
        while True:
            lane.job = job
            retry = False
            try:
                outcome = self._attempt(lane, job, steps)
            except EpisodeInfraError as exc:
                job.infra_errors.append({"attempt": job.attempt, "error": str(exc), "retryable": exc.retryable})
                retry = exc.retryable
            except Abandoned:
                raise
            except Exception as exc:  # noqa: BLE001 - an env or policy bug: recorded, not scored, not retried
                tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
                job.infra_errors.append(
                    {"attempt": job.attempt, "error": f"unexpected error: {tb}", "retryable": False}
                )
            if outcome is not None or not retry or job.attempt >= self.config.max_infra_retries:
                break
            job.attempt += 1
            if self._halt.wait(self.config.infra_retry_delay_sec * job.attempt) or lane.stopping:
                raise Abandoned("stopped")
        lane.job = None
        self._record(lane.loop, job, outcome)

    def _lane(self, lane: Lane, first: Job | None) -> None:
        """A worker thread's life: play queued episodes back to back until the queue is empty or the run stops."""
        job = first
        steps = StepsFile(self._run_path, self._steps_numbers)
        try:
            while not lane.stopping:
                if job is None:
                    try:
                        task, trial = self._queue.popleft()
                    except IndexError:
                        return
                    job = self._make_job(task, trial)
                self._play_job(lane, job, steps)
                job = None
        finally:
            steps.close()

    # -- lanes (on the event loop) -----------------------------------------------

    async def drive(self, index: int) -> None:
        """Run a lane thread under the watchdog; a lane stuck in an env call is abandoned and replaced."""
        loop = asyncio.get_running_loop()
        job: Job | None = None
        while True:
            lane = Lane(loop, self._halt)
            self._live.add(lane)
            try:
                thread = run_in_thread(functools.partial(self._lane, lane, job), f"agentenvs-lane-{index}")
                overdue = await self._watch(lane, thread)
            finally:
                self._live.discard(lane)
            if overdue is None:
                return
            lane.abandon()
            job = lane.job
            await asyncio.to_thread(lane.release)
            if job is None or self._halt.is_set():
                return
            job.infra_errors.append({"attempt": job.attempt, "error": overdue, "retryable": True})
            if job.attempt >= self.config.max_infra_retries:
                await asyncio.to_thread(self._record, loop, job, None)
                job = None
            else:
                job.attempt += 1
                await asyncio.sleep(self.config.infra_retry_delay_sec * job.attempt)

    async def _watch(self, lane: Lane, thread: asyncio.Future[None]) -> str | None:
        """Wait for the lane thread; the overdue env call's description if it had to be given up."""
        stopped_at: float | None = None
        while True:
            due = lane.call_due
            now = time.monotonic()
            wait = WATCH_INTERVAL_SEC if due is None else min(max(0.0, due - now), WATCH_INTERVAL_SEC)
            done, _ = await asyncio.wait({thread}, timeout=wait)
            if done:
                thread.result()
                return None
            overdue = lane.overdue()
            if overdue is not None:
                return overdue
            if self._halt.is_set():
                stopped_at = stopped_at or time.monotonic()
                if time.monotonic() - stopped_at > CLOSE_GRACE_SEC:
                    return "the run stopped while the env was stuck in " + lane.call_what
