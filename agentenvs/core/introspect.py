"""What a runner asks of any env, wrapped or not: its interface, its reference solution, its artifacts.

The harness's executors, the env pool and the trainer adapters all host envs
they did not make and must not assume more than ``gymnasium.Env``; these read
what an ``AgentEnv`` offers and answer sensibly for an env that offers less.
"""

from __future__ import annotations

from typing import Any


def env_interface(env: Any) -> dict[str, Any]:
    """``{"family", "tools", "prompt_description"}`` of the unwrapped env."""
    core = env.unwrapped
    return {
        "family": getattr(core, "family", ""),
        "tools": list(getattr(core, "action_tools", [])),
        "prompt_description": str(getattr(core, "prompt_description", "")),
    }


def env_oracle_actions(env: Any) -> list[Any] | None:
    """The env's reference solution from its current state; ``None`` when it has none."""
    solver = getattr(env.unwrapped, "oracle_actions", None)
    if not callable(solver):
        return None
    try:
        return list(solver())
    except NotImplementedError:
        return None


def env_artifacts(env: Any) -> dict[str, bytes]:
    """Files the env's last episode left for the run's records (none if it keeps none)."""
    collect = getattr(env.unwrapped, "episode_artifacts", None)
    return dict(collect()) if callable(collect) else {}
