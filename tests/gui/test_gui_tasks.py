"""Every gui task on the docker backend: its oracle scores 1, doing nothing 0, its wrong solution below 1.

Real desktops, real apps: the oracle acts through the GUI (keys, clicks,
typing) and the score is read from the saved files after every process in
the desktop is killed. Screenshot-only observations keep the steps short.
"""

from __future__ import annotations

import pytest

import agentenvs
from agentenvs.envs.gui.env import GuiEnv

pytestmark = [pytest.mark.docker, pytest.mark.slow]
TASKS = [t.id for t in agentenvs.list_tasks(family="gui")]


def play(task_id: str, variant: str) -> dict:
    env = GuiEnv(task_id, screen_size=(1280, 800), observation_type="screenshot")
    try:
        env.reset(seed=0)
        actions = ["done"] if variant == "noop" else env.oracle_actions(variant)
        info: dict = {}
        for action in actions:
            _, _, terminated, truncated, info = env.step(action)
            assert info["action_error"] is None, info["action_error"]
            if terminated or truncated:
                break
        assert "score" in info, "the episode did not end"
        assert info.get("error_kind") != "infra", info.get("error")
        return info
    finally:
        env.close()


def test_tasks_are_listed():
    assert {"mousepad-append-line", "calc-sum-total", "infeasible-photoshop"} <= set(TASKS)


@pytest.mark.parametrize("task_id", TASKS)
def test_oracle_scores_one(gui_image, task_id):
    info = play(task_id, "oracle")
    assert info["score"] == 1.0, info["verifier_detail"]
    assert info["success"] is True


@pytest.mark.parametrize("task_id", TASKS)
def test_noop_scores_zero(gui_image, task_id):
    assert play(task_id, "noop")["score"] == 0.0


@pytest.mark.parametrize("task_id", TASKS)
def test_wrong_scores_below_one(gui_image, task_id):
    assert play(task_id, "wrong")["score"] < 1.0
