"""``agentenvs.integrations.osworld.DesktopEnv``: an OSWorld-style agent loop runs unchanged on our desktop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentenvs.integrations.osworld import DesktopEnv

pytestmark = [pytest.mark.docker, pytest.mark.slow]
TASK = Path(__file__).resolve().parents[2] / "tasks/gui/mousepad-append-line"


@pytest.mark.parametrize("provider", ["docker", "local"])
@pytest.mark.parametrize("solve", [True, False])
def test_reset_step_evaluate_as_osworld_run_single_does(gui_image, solve, provider):
    env = DesktopEnv(
        provider_name=provider, action_space="pyautogui", screen_size=(800, 600), assets_dir=TASK / "assets"
    )
    try:
        obs = env.reset(task_config=json.loads((TASK / "task.json").read_text()))
        assert set(obs) == {"screenshot", "accessibility_tree", "terminal", "instruction"}
        assert obs["screenshot"][:8] == b"\x89PNG\r\n\x1a\n" and "todo.txt" in obs["accessibility_tree"]
        actions = ["pyautogui.hotkey('ctrl', 'End')", "pyautogui.write('fix <div> & <span> tags\\n')", "DONE"]
        for action in actions if solve else []:
            obs, reward, done, info = env.step(action, pause=0.5)
            assert reward == 0
        if solve:
            assert done and info == {"done": True}
        assert env.evaluate() == (1.0 if solve else 0.0)
    finally:
        env.close()
