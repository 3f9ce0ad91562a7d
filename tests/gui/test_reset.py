"""Reset from the warm pool: a swap to a desktop prepared while the last episode ran, as fresh as a new one."""

from __future__ import annotations

import time

import pytest

from agentenvs.envs.gui.env import GuiEnv

pytestmark = [pytest.mark.docker, pytest.mark.slow]
TODO = "/home/user/Desktop/todo.txt"


def test_a_pooled_reset_is_a_new_desktop_with_the_task_set_up(gui_image):
    env = GuiEnv("mousepad-append-line", screen_size=(800, 600), observation_type="screenshot", pool_size=1)
    try:
        _, first = env.reset(seed=0)
        used = env.desktop.sandbox._live()
        env.step({"action_type": "TYPING", "text": "scribble\n"})
        env.step("pyautogui.hotkey('ctrl', 's')")
        for _ in range(20):  # the editor writes the file after the step settles, sooner or later under load
            if b"scribble" in env.desktop.sandbox.get(TODO):
                break
            time.sleep(0.5)
        assert b"scribble" in env.desktop.sandbox.get(TODO)
        env.step("DONE")
        _, second = env.reset(seed=0)
        assert env.desktop.sandbox._live() != used
        assert env.desktop.sandbox.get(TODO) == b"buy milk\ncall bob\n"
        assert second["state_hash"] == first["state_hash"]
        windows = env.desktop.client.call("windows")[0]["windows"]
        assert any("todo.txt" in w["title"] for w in windows)  # the config's open step ran
        info: dict = {}
        for action in env.oracle_actions():
            *_, info = env.step(action)
        assert info["score"] == 1.0, info.get("verifier_detail")
    finally:
        env.close()
    assert env._pool._ready == {}
