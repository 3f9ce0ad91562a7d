"""The env contract on a real desktop: Gymnasium's checker with image observations, modes, bad actions."""

from __future__ import annotations

import json

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agentenvs.envs.gui.env import GuiEnv

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.mark.parametrize("backend", ["docker", "local"])
def test_check_env_passes_with_screenshots(gui_image, backend):
    env = GuiEnv("mousepad-append-line", backend=backend, screen_size=(800, 600), observation_type="screenshot")
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_a11y_and_som_modes_and_a_bad_action(gui_image):
    env = GuiEnv("mousepad-append-line", screen_size=(1024, 768), observation_type="som")
    try:
        obs, _ = env.reset(seed=0)
        assert obs["screenshot"].shape == (768, 1024, 3) and obs["screenshot"].dtype == np.uint8
        assert "todo.txt - Mousepad" in obs["text"] and obs["text"].startswith("index\ttag")
        red = (obs["screenshot"] == [255, 0, 0]).all(axis=-1).sum()
        assert red > 100  # the set-of-marks boxes are drawn
        obs, reward, terminated, truncated, info = env.step("pyautogui.no_such_function()")
        assert info["error_kind"] == "agent" and "no_such_function" in info["action_error"]
        assert not terminated and not truncated
        obs, *_, info = env.step({"action_type": "TYPING", "text": "é<>"})
        assert info["action_error"] is None
    finally:
        env.close()


def _desktop_env(backend: str = "docker"):
    import agentenvs as ae

    return ae.make("gui/mousepad-append-line", backend=backend, screen_size=(640, 480), observation_type="screenshot")


def _local_desktop_env():
    return _desktop_env("local")


@pytest.mark.parametrize("make_env", [_desktop_env, _local_desktop_env], ids=["docker", "local"])
def test_two_desktops_in_async_vector_env(gui_image, make_env):
    import gymnasium

    vec = gymnasium.vector.AsyncVectorEnv([make_env, make_env], shared_memory=False)
    try:
        obs, _ = vec.reset(seed=[1, 2])
        assert obs["screenshot"].shape == (2, 480, 640, 3)
        line = {"action_type": "TYPING", "text": "fix <div> & <span> tags\n"}
        vec.step(["pyautogui.hotkey('ctrl', 'End')", "pyautogui.hotkey('ctrl', 'End')"])
        vec.step([json.dumps(line), "pyautogui.write('nothing useful')"])
        vec.step(["pyautogui.hotkey('ctrl', 's')", "WAIT"])
        _, rewards, terminated, _, _ = vec.step(["DONE", "DONE"])
        assert terminated.tolist() == [True, True] and rewards.tolist() == [1.0, 0.0]
    finally:
        vec.close()
