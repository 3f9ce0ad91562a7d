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

    @property
    def ok(self) -> bool:
        if self.score is None:  # a task may lack a wrong solution, and (a foreign task) an oracle
            return self.detail.startswith(f"no {'oracle' if self.variant == 'oracle' else 'wrong solution'}")
        if self.variant == "oracle":
            return self.score >= 1.0
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


def play(env: Any, actions: Iterable[Any]) -> tuple[dict[str, Any], int]:
    """Step ``actions`` until the episode ends, then ``done`` if they did not end it.

    Returns the last step's info and the number of steps taken.
    """
    info: dict[str, Any] = {}
    steps = 0
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            return info, steps
    _, _, _, _, info = env.step("done")
    return info, steps + 1


def run_variant(task: Task, variant: str, env_kwargs: dict[str, Any]) -> EpisodeCheck:
    """One episode: the oracle's actions, nothing (``done`` at once), or the wrong solution."""
    env = None
    try:
        env = agentenvs.make(task, **options_for(task, env_kwargs))
        env.reset(seed=0)
        if variant == "noop":
            actions: list[Any] = ["done"]
        else:
            try:
                actions = env.unwrapped.oracle_actions(variant)
            except NotImplementedError as exc:
                what = "no wrong solution" if variant == "wrong" else "no oracle"
                return EpisodeCheck(task.full_id, variant, None, 0, f"{what} ({exc})")
        info, steps = play(env, actions)
        if info.get("error_kind") == "infra":
            return EpisodeCheck(task.full_id, variant, None, steps, f"infra error: {info.get('error')}")
        return EpisodeCheck(
            task.full_id, variant, float(info.get("score", 0.0)), steps, str(info.get("verifier_detail", ""))
        )
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
