"""A tiny family for the env pool's failure tests: envs that raise from step or reset, or hang until closed.

Its tasks: ``pooltoy/ok`` (any action ends the episode with score 1 after
``max_steps``), ``pooltoy/crash-reset`` (reset raises). Actions: ``crash``
raises out of ``step`` (past ``AgentEnv``'s own handling, as a broken
wrapper or transport would), ``hang`` blocks until the env is closed.
``LIVE`` holds every env made and not yet closed; the env keyword
``make_delay`` makes making one slow.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from agentenvs.core import AgentEnv, Family, ParsedAction, StepOutcome, Task, TaskConfig, Verdict, register_family
from agentenvs.core.errors import TaskNotFoundError
from agentenvs.envs import register_gymnasium_envs

LIVE: set[ToyPoolEnv] = set()
#: Set when an env starts being made (``make_delay`` keeps it in the making).
MAKING = threading.Event()
_LIVE_LOCK = threading.Lock()


def _task(name: str) -> Task:
    config = TaskConfig.model_validate({"limits": {"max_steps": 3}, "agent": {"timeout_sec": 60}})
    return Task(id=name, family="pooltoy", instruction=f"Task {name}.", config=config, params={})


class ToyPoolSource:
    names = ("ok", "crash-reset")

    def ids(self) -> list[str]:
        return list(self.names)

    def load(self, task_id: str) -> Task:
        if task_id not in self.names:
            raise TaskNotFoundError(f"no pooltoy task {task_id}")
        return _task(task_id)


class ToyPoolEnv(AgentEnv):
    family = "pooltoy"

    def __init__(self, *args: Any, make_delay: float = 0.0, **kwargs: Any):
        MAKING.set()
        time.sleep(make_delay)
        super().__init__(*args, **kwargs)
        self._closed = threading.Event()
        with _LIVE_LOCK:
            LIVE.add(self)

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        if task.id == "crash-reset":
            raise RuntimeError("reset exploded")
        return StepOutcome(text=f"begin {task.id} {seed}")

    def step(self, action: Any):
        if action == "crash":
            raise RuntimeError("step exploded")
        if action == "hang":
            self._closed.wait(60)
            raise RuntimeError("closed while hanging")
        return super().step(action)

    def _act(self, action: ParsedAction) -> StepOutcome:
        return StepOutcome(text=f"did {action.text}")

    def _check(self, task: Task) -> dict[str, bool]:
        return {}

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        return Verdict(score=1.0, success=True)

    def _state_hash(self) -> str:
        return "toy"

    def _release(self) -> None:
        self._closed.set()
        with _LIVE_LOCK:
            LIVE.discard(self)


def register() -> None:
    register_family(Family("pooltoy", "tests.core.pool_toy:ToyPoolEnv", ToyPoolSource()))
    register_gymnasium_envs()
