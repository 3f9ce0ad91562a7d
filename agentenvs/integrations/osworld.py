"""``DesktopEnv``: OSWorld's env class over our desktops, so an agent written for OSWorld's ``run.py`` runs unchanged.

Same constructor arguments where they mean something here, ``reset(task_config=...)``
with a task dict in OSWorld's format, ``step(action, pause)`` returning
``(obs, reward, done, info)`` with OSWorld's observation dict (PNG screenshot
bytes, the accessibility tree's XML, instruction), and ``evaluate()``. Under it
is ``GuiEnv``: each reset is a new desktop, the score comes from the trusted
checker after every process in the desktop is killed, and download URLs
resolve in ``assets_dir`` (never the network). ``pause`` is accepted but not
slept: every step already waits until the screen settles. ``provider_name="local"``
runs the desktop on the local backend; OSWorld's VM providers mean our container.
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image

from agentenvs.core.task import load_task
from agentenvs.envs.gui.env import GuiEnv


class DesktopEnv:
    """OSWorld's ``desktop_env.desktop_env.DesktopEnv`` interface on an agentenvs desktop."""

    def __init__(
        self,
        provider_name: str = "docker",
        action_space: str = "pyautogui",
        screen_size: tuple[int, int] = (1920, 1080),
        require_a11y_tree: bool = True,
        require_terminal: bool = False,
        os_type: str = "Ubuntu",
        assets_dir: str | Path | None = None,
        **ignored: Any,
    ):
        if action_space not in ("pyautogui", "computer_13", "claude_computer_use"):
            raise ValueError(f"unsupported action_space {action_space!r}")
        if os_type != "Ubuntu":
            raise ValueError("only the Ubuntu-like desktop exists here")
        self.provider_name, self.action_space = provider_name, action_space
        self.screen_size = screen_size
        self.require_a11y_tree, self.require_terminal = require_a11y_tree, require_terminal
        self.assets_dir = Path(assets_dir).resolve() if assets_dir else None
        self._dir = Path(tempfile.mkdtemp(prefix="agentenvs-osworld-"))
        self._env: GuiEnv | None = None
        self._info: dict[str, Any] = {}
        self._instruction = ""

    def _task_dir(self, config: dict[str, Any]) -> Path:
        """A task directory holding ``config`` verbatim, its assets the ``assets_dir``."""
        target = self._dir / "task"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        (target / "task.json").write_text(json.dumps(config), encoding="utf-8")
        (target / "instruction.md").write_text(str(config.get("instruction", "")) + "\n", encoding="utf-8")
        (target / "task.toml").write_text('id = "osworld-task"\nfamily = "gui"\n\n[gui]\nosworld = "task.json"\n')
        if self.assets_dir is not None:
            (target / "assets").symlink_to(self.assets_dir, target_is_directory=True)
        return target

    def reset(self, task_config: dict[str, Any] | None = None, seed: int | None = None, options: Any = None):
        if task_config is None:
            raise ValueError("reset needs task_config (OSWorld's task dict)")
        self.close_env()
        task = load_task(self._task_dir(task_config))
        backend = "local" if self.provider_name == "local" else "docker"  # OSWorld's VM providers are our container
        self._env = GuiEnv(task=task, backend=backend, screen_size=self.screen_size, observation_type="screenshot")
        self._env.reset(seed=seed)
        self._info, self._instruction = {}, str(task_config.get("instruction", ""))
        return self._get_obs()

    def _get_obs(self) -> dict[str, Any]:
        env = self._require()
        buf = io.BytesIO()
        Image.fromarray(env.frame).save(buf, format="PNG", compress_level=1)
        tree = None
        if self.require_a11y_tree and env.running:
            head, xml = env.desktop.client.call("a11y", deadline=env.a11y_timeout + 10, timeout=env.a11y_timeout)
            tree = None if head.get("error") else xml.decode("utf-8", "replace")
        return {
            "screenshot": buf.getvalue(),
            "accessibility_tree": tree,
            "terminal": None,
            "instruction": self._instruction,
        }

    def step(self, action: Any, pause: float = 2) -> tuple[dict[str, Any], float, bool, dict[str, Any]]:
        env = self._require()
        kind = action.get("action_type") if isinstance(action, dict) else action
        if env.running:
            _, _, terminated, truncated, self._info = env.step(action)
        done = kind in ("DONE", "FAIL") or not env.running
        info = {"done": True} if kind == "DONE" else {"fail": True} if kind == "FAIL" else {}
        return self._get_obs(), 0.0, done, info

    def evaluate(self) -> float:
        """The score; an episode the agent did not end is ended here (not ``FAIL``, so infeasible scores 0)."""
        env = self._require()
        if env.running:
            _, _, _, _, self._info = env.step("DONE")
        return float(self._info.get("score", 0.0))

    def _require(self) -> GuiEnv:
        if self._env is None:
            raise RuntimeError("call reset(task_config=...) first")
        return self._env

    def close_env(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None

    def close(self) -> None:
        self.close_env()
        shutil.rmtree(self._dir, ignore_errors=True)
