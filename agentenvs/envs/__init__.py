"""The families. Each subpackage registers itself when imported; none imports another."""

from __future__ import annotations

import importlib

import gymnasium

from agentenvs.core.registry import families

FAMILY_MODULES: dict[str, str] = {
    "terminal": "agentenvs.envs.terminal",
    "textgame": "agentenvs.envs.textgame",
    "swe": "agentenvs.envs.swe",
    "web": "agentenvs.envs.web",
    "gui": "agentenvs.envs.gui",
}


def load_families() -> None:
    """Import every family package that is present, so each registers itself."""
    for module in FAMILY_MODULES.values():
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def register_gymnasium_envs() -> None:
    """Register ``agentenvs/<family>-v0`` with Gymnasium for every family."""
    for family in families().values():
        if family.gym_id not in gymnasium.registry:
            gymnasium.register(id=family.gym_id, entry_point=family.entry_point, disable_env_checker=False)
