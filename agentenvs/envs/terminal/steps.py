"""Multi-step tasks (Harbor's ``[[steps]]``): per-step rewards and how they roll up.

The episode plays the steps in order in one sandbox. ``done``/``submit``
grades the current step and shows the next step's instruction; the last
step's ``done`` (or ``fail``, or a spent budget) grades the current step and
ends the episode. The task's reward is the mean of the steps' rewards
(Harbor's default) or the last step's (``multi_step_reward_strategy =
"final"``); a step the episode never reached counts 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentenvs.core.checks import Verdict
from agentenvs.core.task import Task, TaskStep


@dataclass
class StepResult:
    """One graded step, as it appears in ``info["task_steps"]`` and the run's records."""

    name: str
    reward: float
    metrics: dict[str, float] = field(default_factory=dict)
    detail: str = ""

    def as_info(self) -> dict[str, Any]:
        return {"name": self.name, "reward": self.reward, "metrics": dict(self.metrics)}


def contributing(task: Task) -> list[TaskStep]:
    return [s for s in task.steps if s.config.contributes_to_reward]


def payment(task: Task, step: TaskStep, reward: float) -> float:
    """What a finished step pays at once: its share of the mean; nothing under "final"."""
    shares = contributing(task)
    if task.config.reward_strategy != "mean" or step not in shares:
        return 0.0
    return reward / len(shares)


def below_minimum(step: TaskStep, verdict: Verdict) -> str:
    """Why the step's reward misses its ``min_reward`` (Harbor then stops the trial), or ``""``."""
    minimum = step.config.min_reward
    if minimum is None:
        return ""
    if isinstance(minimum, (int, float)):
        return f"reward {verdict.score:.2f} < min_reward {minimum:g}" if verdict.score < minimum else ""
    metrics = verdict.metrics or {"reward": verdict.score}
    missed = [f"{k} {metrics.get(k, 0.0):.2f} < {v:g}" for k, v in minimum.items() if metrics.get(k, 0.0) < v]
    return "; ".join(missed)


def roll_up(task: Task, results: list[StepResult], last: Verdict) -> Verdict:
    """The task's verdict from its graded steps (``last`` is the final step's own verdict)."""
    by_name = {r.name: r for r in results}
    shares = contributing(task)
    if task.config.reward_strategy == "final":
        final = by_name.get(shares[-1].name) if shares else None
        score = final.reward if final else 0.0
        metrics = dict(final.metrics) if final else {}
    else:
        score = sum(by_name[s.name].reward for s in shares if s.name in by_name) / len(shares) if shares else 0.0
        keys = sorted({k for r in results for k in r.metrics})
        metrics = {
            k: sum(by_name[s.name].metrics.get(k, 0.0) for s in shares if s.name in by_name) / len(shares) for k in keys
        }
    lines = [f"step {r.name}: reward {r.reward:.2f}" for r in results]
    lines += [f"step {s.name}: not reached (0)" for s in task.steps if s.name not in by_name]
    detail = "\n".join(lines + ([last.detail] if last.detail else []))
    steps = [r.as_info() for r in results]
    return Verdict(
        score=score, success=score >= 1.0, detail=detail, metrics=metrics or None,
        extra={**(last.extra or {}), "task_steps": steps},
    )  # fmt: skip
