"""The pool controller's bookkeeping: one ``Slot`` per env, and the tasks the pool plays."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from agentenvs.core.registry import get_task, split_task_id
from agentenvs.core.task import Task, load_task
from agentenvs.pool.results import EnvStats
from agentenvs.pool.workers import Worker

IDLE, WORKING, READY, RETIRED = "idle", "working", "ready", "retired"


@dataclass(frozen=True)
class TaskRef:
    """A task as results name it (``label``), its family, and what ``agentenvs.make`` and ``reset`` take (``ref``)."""

    label: str
    family: str
    ref: str | Task


def resolve_task(task: str | Task) -> TaskRef:
    """A task id (``"<family>/<id>"``), a task directory or a ``Task``, checked now rather than at its first episode."""
    if isinstance(task, Task):
        return TaskRef(task.full_id, task.family, task)
    if (Path(task) / "task.toml").is_file():
        loaded = load_task(task)
        return TaskRef(str(task), loaded.family, loaded)
    family, _ = split_task_id(task)
    get_task(task)
    return TaskRef(task, family, task)


@dataclass
class Slot:
    """The controller's view of one env: what it is doing (``state``, the call ``op``) and what it has done."""

    env_id: int
    worker: Worker | None = None
    state: str = IDLE
    token: int = 0
    op: str = ""
    task: TaskRef | None = None
    episode: int = -1
    step: int = 0
    requested: float = 0.0
    busy_sec: float = 0.0
    steps: int = 0
    resets: int = 0
    episodes: int = 0
    errors: int = 0
    failures: int = 0

    def why_busy(self) -> str:
        """Why this env cannot take an action now."""
        if self.state == IDLE:
            return f"env {self.env_id} has not begun an episode: call start() or reset_all() first"
        if self.state == RETIRED:
            return f"env {self.env_id} is retired: it begins no more episodes"
        doing = "its reset" if self.op == "begin" else f"its step {self.step + 1}"
        return f"env {self.env_id} is busy with {doing}: submit again after its result arrives through poll()"

    def result_fields(self) -> dict[str, object]:
        """What every result of the call in flight carries."""
        assert self.task is not None
        return {"env_id": self.env_id, "task_id": self.task.label, "episode": self.episode,
                "total_sec": time.perf_counter() - self.requested}  # fmt: skip

    def stats(self, now: float, wall: float) -> EnvStats:
        in_flight = now - self.requested if self.state == WORKING else 0.0
        return EnvStats(self.env_id, self.state, self.busy_sec + in_flight, wall, self.steps, self.resets,
                        self.episodes, self.errors)  # fmt: skip
