"""A tiny real family for harness tests: reach a target number by adding to a counter.

The "sandbox" is a real child process (``sleep``); killing it mid-episode
makes the next step raise ``SandboxError``, as a dead container would. The
episode also has a real working directory where the verifier writes
``result.txt``: an agent that puts a directory there (``mkdir result.txt``)
makes the verifier raise, and one that creates the file first (``touch
result.txt``) gets its episode flagged, as a family flags a hack it detects
but cannot prevent. The observation carries a small screenshot so image
paths are exercised.
Tasks come from a generated source, or from directories (``DirToySource``)
with ``solution/actions.jsonl``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from agentenvs.core import AgentEnv, Family, ParsedAction, StepOutcome, Task, TaskConfig, Verdict, register_family
from agentenvs.core.errors import ActionError, SandboxError, TaskNotFoundError
from agentenvs.core.registry import DirectoryTaskSource
from agentenvs.envs import register_gymnasium_envs

ADD_TOOL = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add n to the counter.",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
}

#: Where tests find the pid of the running episode's sandbox, by task id.
PID_DIR_ENV = "TOY_PID_DIR"


def toy_task(
    target: int, *, difficulty: str = "easy", tags: tuple[str, ...] = ("starter",), max_steps: int = 8
) -> Task:
    config = TaskConfig.model_validate(
        {
            "difficulty": difficulty,
            "tags": list(tags),
            "limits": {"max_steps": max_steps, "step_timeout_sec": 10},
            "agent": {"timeout_sec": 60},
            "checkpoints": [
                {"name": "half", "check": "counter_half"},
                {"name": "reached", "check": "counter_reached"},
            ],
        }
    )
    return Task(
        id=f"reach-{target}",
        family="toy",
        instruction=f"Make the counter equal {target}, then call done.",
        config=config,
        params={"target": target},
    )


class ToySource:
    def __init__(self, targets: list[int]):
        self.tasks = {t.id: t for t in (toy_task(n, difficulty="easy" if n <= 2 else "hard") for n in targets)}

    def ids(self) -> list[str]:
        return sorted(self.tasks)

    def load(self, task_id: str) -> Task:
        if task_id not in self.tasks:
            raise TaskNotFoundError(f"no toy task {task_id}")
        return self.tasks[task_id]


class CounterEnv(AgentEnv):
    family = "toy"
    native_tools = [ADD_TOOL]
    prompt_description = "Call add(n) until the counter equals the target, then done."

    def __init__(self, *args: Any, step_delay: float | str = 0.0, **kwargs: Any):
        self.step_delay = float(step_delay)
        super().__init__(*args, **kwargs)

    def _extra_spaces(self) -> dict[str, spaces.Space[Any]]:
        return {"screenshot": spaces.Box(0, 255, (4, 6, 3), np.uint8)}

    def _target(self, task: Task) -> int:
        return int(task.params.get("target", task.config.task.get("target", 1)))

    def _obs(self) -> StepOutcome:
        shot = np.full((4, 6, 3), min(255, self.counter * 40), dtype=np.uint8)
        return StepOutcome(text=f"counter={self.counter} target={self.target}", extras={"screenshot": shot})

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        self.counter = 0
        self.target = self._target(task)
        self.workdir = Path(tempfile.mkdtemp(prefix="agentenvs-toy-"))
        self.proc = subprocess.Popen(
            ["sleep", "300"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        pid_dir = os.environ.get(PID_DIR_ENV)
        if pid_dir:
            Path(pid_dir, task.id).write_text(str(self.proc.pid))
        return self._obs()

    def _act(self, action: ParsedAction) -> StepOutcome:
        if self.step_delay:
            time.sleep(self.step_delay)
        if self.proc.poll() is not None:
            raise SandboxError("the toy sandbox process is gone")
        if action.kind == "tool":
            n = action.arguments.get("n")
        else:
            parts = action.text.split()
            if len(parts) == 2 and parts[0] in ("mkdir", "touch"):
                path = self.workdir / os.path.basename(parts[1])
                if parts[0] == "mkdir":
                    path.mkdir()
                else:
                    path.touch()
                return self._obs()
            if len(parts) != 2 or parts[0] != "add":
                raise ActionError("native actions look like 'add N'")
            n = parts[1]
        try:
            self.counter += int(n)
        except (TypeError, ValueError):
            raise ActionError(f"n must be an integer, got {n!r}") from None
        return self._obs()

    def _check(self, task: Task) -> dict[str, bool]:
        return {"half": 2 * self.counter >= self.target, "reached": self.counter == self.target}

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        result = self.workdir / "result.txt"
        flags = ["result-precreated: result.txt existed before the verifier wrote it"] if result.exists() else []
        result.write_text(str(self.counter))  # IsADirectoryError if the agent made it a directory
        ok = int(result.read_text()) == self.target
        detail = f"counter {self.counter}, target {self.target}"
        return Verdict(score=1.0 if ok else 0.0, success=ok, detail=detail, extra={"integrity_flags": flags})

    def _state_hash(self) -> str:
        return str(self.counter)

    def oracle_actions(self, variant: str = "oracle") -> list[Any]:
        if self._task is not None and self._task.path is not None:
            raise NotImplementedError("directory toy tasks ship solution/actions.jsonl")
        return [{"name": "add", "arguments": {"n": 1}} for _ in range(self.target)]

    def _end(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        self.proc = None
        workdir = getattr(self, "workdir", None)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


def register(targets: list[int], *, name: str = "toy") -> None:
    """Register the toy family with generated tasks ``reach-<n>``."""
    register_family(Family(name, "harness_toy:CounterEnv", ToySource(targets)))
    register_gymnasium_envs()


class DirToyEnv(CounterEnv):
    family = "toydir"


def write_dir_task(root: Path, target: int, actions: list[str]) -> Path:
    path = root / f"reach-{target}"
    (path / "solution").mkdir(parents=True)
    (path / "task.toml").write_text(
        f'difficulty = "medium"\ntags = ["dir"]\n[task]\ntarget = {target}\n[limits]\nmax_steps = 6\n'
    )
    (path / "instruction.md").write_text(f"Make the counter equal {target}.\n")
    (path / "solution" / "actions.jsonl").write_text("".join(f"{a}\n" for a in actions))
    return path


def register_dir(root: Path) -> None:
    register_family(Family("toydir", "harness_toy:DirToyEnv", DirectoryTaskSource("toydir", root)))
    register_gymnasium_envs()
