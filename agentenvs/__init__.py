"""agentenvs: many kinds of agent environments behind one Gymnasium API.

    import agentenvs
    env = agentenvs.make("terminal/count-log-errors")
    obs, info = env.reset(seed=0)

or, through Gymnasium: ``gymnasium.make("agentenvs/terminal-v0", task_id=...)``
after ``import agentenvs`` (or ``gymnasium.make("agentenvs:agentenvs/terminal-v0", ...)``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium

from agentenvs.core import AgentEnv, Task, get_task, list_tasks, load_task
from agentenvs.core.registry import add_family_loader, get_family, split_task_id
from agentenvs.envs import load_families, register_gymnasium_envs
from agentenvs.pool import EnvPool, PoolResult

if TYPE_CHECKING:
    from agentenvs.serve.client import RemoteClient

__version__ = "0.1.0"

add_family_loader(load_families)
register_gymnasium_envs()


def make(task: str | os.PathLike[str] | Task, /, **kwargs: Any) -> gymnasium.Env:
    """Make the env for ``"<family>/<task-id>"``, a task directory (a ``Path``, or a string naming
    one that exists), or a loaded ``Task``, through ``gymnasium.make``."""
    chosen_again = sorted({"task", "task_id"} & kwargs.keys())
    if chosen_again:
        raise TypeError(
            f"agentenvs.make takes the task as its first argument only; drop {', '.join(f'{k}=' for k in chosen_again)}"
            f" (or call gymnasium.make('agentenvs/<family>-v0', {chosen_again[0]}=...))"
        )
    if isinstance(task, os.PathLike) or (isinstance(task, str) and (Path(task) / "task.toml").is_file()):
        task = load_task(task)
    if isinstance(task, Task):
        return gymnasium.make(get_family(task.family).gym_id, task=task, **kwargs)
    family, task_id = split_task_id(task)
    return gymnasium.make(get_family(family).gym_id, task_id=task_id, **kwargs)


def remote(url: str, token: str, *, timeout: float = 900.0) -> RemoteClient:
    """A client of an env server (``agentenvs serve``): ``agentenvs.remote(url, token).make("<family>/<task>")``."""
    from agentenvs.serve.client import remote as connect

    return connect(url, token, timeout=timeout)


__all__ = [
    "AgentEnv",
    "EnvPool",
    "PoolResult",
    "Task",
    "__version__",
    "get_task",
    "list_tasks",
    "load_task",
    "make",
    "remote",
]
