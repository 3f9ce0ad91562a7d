"""Validate tasks: the oracle must score 1, doing nothing 0, the wrong solution below 1.

Runs real episodes through the public env API, so a task that validates
here behaves the same under the harness and under a trainer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import agentenvs
from agentenvs.core.registry import accepts_option
from agentenvs.core.task import Task

VARIANTS = ("oracle", "noop", "wrong")


@dataclass(frozen=True)
class EpisodeCheck:
    task_id: str
    variant: str
    score: float | None
    steps: int
    detail: str = ""
    #: The oracle's episode only: checkpoints that never passed, at reset or after any step (a
    #: checkpoint no solution reaches pays dense rewards nobody can earn). Empty when the env ran
    #: without dense checks.
    unreached: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        if self.score is None:  # a task may lack a wrong solution, and (a foreign task) an oracle
            return self.detail.startswith(f"no {'oracle' if self.variant == 'oracle' else 'wrong solution'}")
        if self.variant == "oracle":
            return self.score >= 1.0 and not self.unreached
        if self.variant == "noop":
            return self.score <= 0.0
        return self.score < 1.0


@dataclass(frozen=True)
class TaskValidation:
    """One task's episodes, or (``error``) why the task could not even be loaded."""

    task_id: str
    episodes: dict[str, EpisodeCheck]
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and all(e.ok for e in self.episodes.values())


def options_for(task: Task, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The options this task's env class takes (``backend`` means nothing to a text game)."""
    return {k: v for k, v in env_kwargs.items() if accepts_option(task.family, k)}


def play(
    env: Any, actions: Iterable[Any], on_info: Callable[[dict[str, Any]], None] | None = None
) -> tuple[dict[str, Any], int]:
    """Step ``actions`` until the episode ends, then ``done`` if they did not end it.

    Returns the last step's info and the number of steps taken; ``on_info`` sees every step's info.
    """
    info: dict[str, Any] = {}
    steps = 0
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        steps += 1
        if on_info is not None:
            on_info(info)
        if terminated or truncated:
            return info, steps
    _, _, _, _, info = env.step("done")
    if on_info is not None:
        on_info(info)
    return info, steps + 1


class Checkpoints:
    """Which checkpoints an episode's infos named, and which of them passed at least once."""

    def __init__(self) -> None:
        self.named: dict[str, bool] = {}

    def see(self, info: dict[str, Any]) -> None:
        for name, passed in (info.get("checks") or {}).items():
            self.named[name] = self.named.get(name, False) or bool(passed)

    def unreached(self) -> tuple[str, ...]:
        return tuple(name for name, passed in self.named.items() if not passed)


def run_variant(task: Task, variant: str, env_kwargs: dict[str, Any]) -> EpisodeCheck:
    """One episode: the oracle's actions, nothing (``done`` at once), or the wrong solution."""
    env = None
    try:
        env = agentenvs.make(task, **options_for(task, env_kwargs))
        _, first = env.reset(seed=0)
        checks = Checkpoints()
        checks.see(first)
        if variant == "noop":
            actions: list[Any] = ["done"]
        else:
            try:
                actions = env.unwrapped.oracle_actions(variant)
            except NotImplementedError as exc:
                what = "no wrong solution" if variant == "wrong" else "no oracle"
                return EpisodeCheck(task.full_id, variant, None, 0, f"{what} ({exc})")
        info, steps = play(env, actions, checks.see)
        if info.get("error_kind") == "infra":
            return EpisodeCheck(task.full_id, variant, None, steps, f"infra error: {info.get('error')}")
        unreached = checks.unreached() if variant == "oracle" else ()
        detail = str(info.get("verifier_detail", ""))
        if unreached:
            detail = f"checkpoints the oracle never passed: {', '.join(unreached)}\n{detail}"
        return EpisodeCheck(task.full_id, variant, float(info.get("score", 0.0)), steps, detail, unreached)
    except Exception as exc:  # a broken task must show up in the table, not abort the run
        return EpisodeCheck(task.full_id, variant, None, 0, f"{type(exc).__name__}: {exc}")
    finally:
        if env is not None:
            env.close()


def validate_tasks(
    tasks: Iterable[Task],
    env_kwargs: dict[str, Any] | None = None,
    jobs: int = 1,
    on_result: Callable[[EpisodeCheck], None] | None = None,
) -> list[TaskValidation]:
    """Validate every task with every variant, ``jobs`` episodes at a time."""
    task_list = list(tasks)
    kwargs = env_kwargs or {}
    work = [(task, variant) for task in task_list for variant in VARIANTS]

    def one(item: tuple[Task, str]) -> EpisodeCheck:
        check = run_variant(item[0], item[1], kwargs)
        if on_result is not None:
            on_result(check)
        return check

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        checks = list(pool.map(one, work))
    by_task: dict[str, dict[str, EpisodeCheck]] = {}
    for check in checks:
        by_task.setdefault(check.task_id, {})[check.variant] = check
    return [TaskValidation(task.full_id, by_task[task.full_id]) for task in task_list]
