"""The runner: every (task, trial) episode of a run, concurrently, into a run directory.

asyncio drives the episodes; env calls run off the event loop through an
``Executor``. Separate limits bound episodes in flight, live envs
(sandboxes) and policy requests. Infrastructure failures are retried a
bounded number of times and recorded apart, never scored. Each finished
episode is one flushed line of ``episodes.jsonl``, so ``resume`` plays
exactly the episodes that are missing (with ``retry_infra``, also those
that ended as infra errors). The worker threads that play the
episodes, and the watchdog over them, are in :mod:`agentenvs.harness.lanes`.
Ctrl-C (or SIGTERM) stops cleanly: envs are closed, finished episodes are
kept, and ``--resume`` continues.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime as dt
import functools
import platform
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import agentenvs
from agentenvs.core import Task, get_task, load_task
from agentenvs.core.registry import env_options, split_task_id
from agentenvs.harness.config import RunConfig
from agentenvs.harness.episode import Deadlines, EpisodePlayer
from agentenvs.harness.executor import Executor, make_executor
from agentenvs.harness.lane import Abandoned, Lane
from agentenvs.harness.lanes import Job, Lanes
from agentenvs.harness.policies import Policy, make_policy
from agentenvs.harness.rundir import RUN_FORMAT_VERSION, EpisodeLog, RunDir, episode_key

DEFAULT_POLICY_TIMEOUT_SEC = 600.0
#: Finished episodes are flushed at once (safe against a killed process) and fsynced this often.
SYNC_INTERVAL_SEC = 1.0


class RunDirError(ValueError):
    """The run directory cannot be used as asked (exists without --resume, or differs from the config)."""


@dataclass
class RunOutcome:
    run_dir: RunDir
    planned: int
    finished: int
    played_now: int
    interrupted: bool
    #: Infra episodes taken out of the record to be played again (``retry_infra``).
    retried_infra: int = 0


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


@functools.lru_cache(maxsize=64)
def image_digest(image: str | None) -> str | None:
    """The local image id of ``image``, when Docker is reachable; ``None`` otherwise."""
    if not image:
        return None
    try:
        import docker  # type: ignore[import-untyped]

        client = docker.from_env(timeout=5)
        try:
            found = client.images.get(image)
            return str(found.id)
        finally:
            client.close()
    except Exception:  # noqa: BLE001 - Docker absent, daemon down or image missing: no digest to record
        return None


def task_record(task: Task) -> dict[str, Any]:
    image = task.config.environment.docker_image
    return {
        **task.summary(),
        "content_hash": task.content_hash(),
        "image": image,
        "image_digest": image_digest(image),
        "max_steps": task.config.limits.max_steps,
    }


def run_metadata(config: RunConfig, tasks: list[Task], policy: Policy, executor: Executor) -> dict[str, Any]:
    return {
        "format_version": RUN_FORMAT_VERSION,
        "created_at": _now(),
        "agentenvs_version": agentenvs.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "argv": sys.argv,
        "config": config.model_dump(mode="json"),
        "policy": policy.describe(),
        "executor": executor.describe(),
        "tasks": [task_record(t) for t in tasks],
    }


class EnvArgsError(ValueError):
    """An env keyword (``--env-arg``) that an env of the run does not take: every episode would fail."""


def check_env_args(config: RunConfig) -> None:
    """Refuse env keywords a family of the run does not take, before any episode starts."""
    families = sorted({split_task_id(t)[0] for t in config.tasks})
    for family in families:
        unknown = sorted(set(config.env_kwargs) - env_options(family))
        if unknown:
            raise EnvArgsError(
                f"the {family} env does not take {', '.join(unknown)} (--env-arg); it takes: "
                f"{', '.join(sorted(env_options(family) - {'task', 'task_id', 'render_mode'}))}"
            )


class Runner:
    """Runs a ``RunConfig`` into a run directory."""

    def __init__(
        self,
        config: RunConfig,
        out: str,
        *,
        policy: Policy | None = None,
        executor: Executor | None = None,
        resume: bool = False,
        retry_infra: bool = False,
        progress: bool = False,
        on_episode: Callable[[dict[str, Any]], None] | None = None,
    ):
        if retry_infra and not resume:
            raise RunDirError("--retry-infra replays the infra episodes of an existing run: pass --resume with it")
        check_env_args(config)
        self.config = config
        self.run_dir = RunDir(out)
        self.resume = resume
        self.retry_infra = retry_infra
        self._retried_infra = 0
        self.progress = progress
        self.on_episode = on_episode
        self.policy = policy or make_policy(config.policy.name, **config.policy.options)
        concurrency = config.concurrency
        if self.policy.max_concurrency is not None:
            concurrency = min(concurrency, self.policy.max_concurrency)
        self.concurrency = concurrency
        self.max_sandboxes = min(config.max_sandboxes or concurrency, concurrency)
        self.executor = executor or make_executor(config.executor, self.max_sandboxes, config.executor_options)
        self._halt = threading.Event()
        self._stopped = False
        self._lanes: set[Lane] = set()
        self._task_deadlines: dict[str, Deadlines] = {}
        self._count_lock = threading.Lock()
        self._stats = {"scored": 0, "success": 0, "infra": 0}

    # -- the run directory ----------------------------------------------------

    def _prepare(self, tasks: list[Task]) -> list[dict[str, Any]]:
        if self.run_dir.exists():
            if not self.resume:
                raise RunDirError(
                    f"{self.run_dir.path} already holds a run; pass --resume to continue it or choose another --out"
                )
            recorded = RunConfig.model_validate(self.run_dir.read_run()["config"])
            if (
                recorded.tasks != self.config.tasks
                or recorded.trials != self.config.trials
                or (recorded.seed, recorded.same_seed) != (self.config.seed, self.config.same_seed)
            ):
                raise RunDirError(
                    f"{self.run_dir.path} was started with other tasks, trials or seeds; resume it with its own "
                    "config (`agentenvs run --resume --out DIR` alone) or choose another --out"
                )
            self.run_dir.repair()
            if self.retry_infra:
                self._retried_infra = self.run_dir.drop_infra()
            return self.run_dir.read_episodes()
        self.run_dir.write_run(run_metadata(self.config, tasks, self.policy, self.executor))
        return []

    def _deadlines(self, task: Task) -> Deadlines:
        c = self.config
        limits = task.config
        env = c.env_timeout_sec or (limits.limits.step_timeout_sec + limits.verifier.timeout_sec + 60.0)
        episode = c.episode_timeout_sec or (limits.agent.timeout_sec + limits.verifier.timeout_sec + 120.0)
        return Deadlines(
            policy=c.policy_timeout_sec or DEFAULT_POLICY_TIMEOUT_SEC,
            env=env,
            reset=max(env, limits.environment.build_timeout_sec + 60.0),
            episode=episode,
        )

    # -- episodes (the lanes call these from their threads) ---------------------

    def _job(self, task: Task, trial: int) -> Job:
        deadlines = self._task_deadlines.get(task.full_id)
        if deadlines is None:
            deadlines = self._task_deadlines[task.full_id] = self._deadlines(task)
        return Job(
            task=task, trial=trial, deadlines=deadlines,
            player=EpisodePlayer(self.policy, self._policy_slots, deadlines, feedback=self.config.policy_feedback),
            trajectory=f"trajectories/{task.full_id}/{trial}", started=_now(), t0=time.monotonic(),
        )  # fmt: skip

    def _record(self, loop: asyncio.AbstractEventLoop, job: Job, outcome: dict[str, Any] | None) -> None:
        """Append the episode's line (its trajectory is already written), then tell the loop."""
        infra_errors = job.infra_errors
        record: dict[str, Any] = {
            "task_id": job.task.full_id,
            "trial": job.trial,
            "status": "scored" if outcome is not None else "infra",
            "attempts": len(infra_errors) + (1 if outcome is not None else 0),
            "infra_errors": infra_errors,
            "started_at": job.started,
            "finished_at": _now(),
            "elapsed_sec": round(time.monotonic() - job.t0, 6),
            "trajectory": job.trajectory,
        }
        if job.steps_at is not None:
            record["steps_at"] = job.steps_at
        if outcome is not None:
            record.update(outcome)
        else:
            record.update(
                {
                    "seed": self.config.seed_for(job.trial),
                    "success": None,
                    "score": None,
                    "error_kind": "infra",
                    "error": infra_errors[-1]["error"] if infra_errors else "unknown",
                }
            )
        self._log.append(record)
        if self.on_episode is None and not self.progress:  # nobody watches: count here, spare the loop a wake-up
            with self._count_lock:
                self._played += 1
                self._count(record)
            return
        try:
            loop.call_soon_threadsafe(self._finish, record)
        except RuntimeError:  # the loop is gone; the line is on disk all the same
            pass

    def _finish(self, record: dict[str, Any]) -> None:
        self._played += 1
        self._count(record)
        self._progress.advance()
        if self.on_episode is not None:
            self.on_episode(record)

    def _count(self, record: dict[str, Any]) -> None:
        if record["status"] == "scored":
            self._stats["scored"] += 1
            self._stats["success"] += int(bool(record["success"]))
        else:
            self._stats["infra"] += 1

    # -- the run ---------------------------------------------------------------

    async def run(self) -> RunOutcome:
        """Play every missing episode. Returns when all are done or the run is stopped."""
        dirs = self.config.task_dirs
        tasks = [load_task(dirs[t]) if t in dirs else get_task(t) for t in self.config.tasks]
        recorded = self._prepare(tasks)
        done = {episode_key(e["task_id"], e["trial"]) for e in recorded}
        for record in recorded:
            self._count(record)
        queue = collections.deque(
            (task, trial)
            for trial in range(self.config.trials)
            for task in tasks
            if episode_key(task.full_id, trial) not in done
        )
        pending = len(queue)
        planned = len(tasks) * self.config.trials
        self._policy_slots = asyncio.Semaphore(min(self.config.max_policy_calls or self.concurrency, self.concurrency))
        self._played = 0
        self._progress = _Progress(self.progress, planned, len(done), self._stats)
        workers = Lanes(
            self.config,
            self.executor,
            run_path=self.run_dir.path,
            queue=queue,
            make_job=self._job,
            record=self._record,
            sandboxes=threading.BoundedSemaphore(self.max_sandboxes),
            halt=self._halt,
            live=self._lanes,
        )

        loop = asyncio.get_running_loop()
        self._log = EpisodeLog(self.run_dir.episodes_jsonl)
        syncer = asyncio.create_task(self._sync_periodically())
        installed = _install_stop_handlers(loop, self.stop)
        try:
            with self._progress:
                lanes = [asyncio.create_task(workers.drive(i)) for i in range(min(self.concurrency, max(1, pending)))]
                results = await asyncio.gather(*lanes, return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException) and not isinstance(result, (asyncio.CancelledError, Abandoned)):
                    raise result
        finally:
            self._halt.set()
            syncer.cancel()
            self._log.close()
            for sig in installed:
                loop.remove_signal_handler(sig)
            with contextlib.suppress(Exception):
                await self.policy.aclose()
            await self.executor.aclose()
        return RunOutcome(
            self.run_dir, planned, len(done) + self._played, self._played, self._stopped, self._retried_infra
        )

    async def _sync_periodically(self) -> None:
        """fsync new episode lines off the event loop, at most every ``SYNC_INTERVAL_SEC``."""
        while True:
            await asyncio.sleep(SYNC_INTERVAL_SEC)
            await asyncio.to_thread(self._log.sync)

    def stop(self, workers: list[asyncio.Task[None]] | None = None) -> None:
        """Stop the run: in-flight episodes are abandoned (their envs closed), finished ones kept.

        Call it on the event loop (a signal handler, ``on_episode``); ``workers`` is accepted and ignored.
        """
        self._stopped = True
        self._halt.set()
        for lane in list(self._lanes):
            lane.cancel_policy()


def _install_stop_handlers(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> list[int]:
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop)
            installed.append(sig)
    return installed


class _Progress:
    """A live progress bar (rich) with the success rate so far; silent when disabled."""

    def __init__(self, enabled: bool, total: int, already: int, stats: dict[str, int]):
        self.enabled = enabled
        self.stats = stats
        self._bar: Any = None
        self._task_id: Any = None
        self.total = total
        self.already = already

    def _label(self) -> str:
        s = self.stats
        rate = f"{s['success'] / s['scored']:.0%}" if s["scored"] else "-"
        return f"success {s['success']}/{s['scored']} ({rate}), infra {s['infra']}"

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("[bold]episodes"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                transient=False,
            )
            self._bar.__enter__()
            self._task_id = self._bar.add_task(self._label(), total=self.total, completed=self.already)
        return self

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task_id, advance=1, description=self._label())

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def run_sync(runner: Runner) -> RunOutcome:
    """Run to completion from synchronous code."""
    return asyncio.run(runner.run())
