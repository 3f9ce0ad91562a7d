"""``--policy oracle``: play the task's reference solution.

In order of preference: the env's own solver (``oracle_actions()`` on
``env.unwrapped``, for generated families), ``solution/actions.jsonl`` (one
JSON action per line), or ``solution/solve.sh`` (sent as one bash command,
for shell families). ``done`` follows unless the plan already ended the
episode.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from agentenvs.core.actions import CONTROL_ACTIONS
from agentenvs.harness.policies.base import Decision, EpisodeStart, Policy, PolicyConfigError, StepInput


def solve_sh_action(script: str) -> str:
    """One bash command that runs ``script`` with stdin closed (so it cannot eat the shell's input)."""
    return f"bash -c {shlex.quote(script)} solve.sh < /dev/null"


def read_actions_jsonl(path: Path) -> list[Any]:
    actions: list[Any] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            actions.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise PolicyConfigError(
                f"{path}:{number}: not valid JSON ({exc.msg}); write one JSON action per line"
            ) from None
    return actions


def oracle_plan(start: EpisodeStart) -> list[Any]:
    """The reference actions for the episode, ending in a control action."""
    if start.oracle_actions is not None:
        plan = list(start.oracle_actions)
    else:
        solution = start.task_path / "solution" if start.task_path else None
        if solution is not None and (solution / "actions.jsonl").is_file():
            plan = read_actions_jsonl(solution / "actions.jsonl")
        elif solution is not None and (solution / "solve.sh").is_file():
            plan = [solve_sh_action((solution / "solve.sh").read_text(encoding="utf-8"))]
        else:
            raise PolicyConfigError(
                f"no oracle: task {start.task_id} has no solution/solve.sh or solution/actions.jsonl, "
                "and its env no oracle_actions()"
            )
    if not plan or not _is_control(plan[-1]):
        plan.append("done")
    return plan


def _is_control(action: Any) -> bool:
    if isinstance(action, str):
        return action.strip().lower() in CONTROL_ACTIONS
    if isinstance(action, dict):
        return action.get("name") in CONTROL_ACTIONS
    return False


class OraclePolicy(Policy):
    """The task's own solution, step by step."""

    name = "oracle"
    inline = True
    needs_oracle = True

    def __init__(self) -> None:
        self._plans: dict[str, list[Any]] = {}

    async def reset(self, start: EpisodeStart) -> None:
        self._plans[start.episode_id] = oracle_plan(start)

    async def act(self, start: EpisodeStart, step: StepInput) -> Decision:
        plan = self._plans.get(start.episode_id)
        if plan is None:
            plan = self._plans[start.episode_id] = oracle_plan(start)
        return Decision(action=plan.pop(0) if plan else "done")

    async def end(self, start: EpisodeStart) -> None:
        self._plans.pop(start.episode_id, None)
