"""Every gui task on the docker backend: its oracle scores 1, doing nothing 0, its wrong solution below 1.

Real desktops, real apps: the oracle acts through the GUI (keys, clicks,
typing) and the score is read from the saved files after every process in
the desktop is killed. The three episodes of a task run on one env with a
warm pool, so each next desktop starts while the last episode plays (a
fresh container every time: used desktops are never reused).
Screenshot-only observations keep the steps short.
"""

from __future__ import annotations

import pytest

import agentenvs
from agentenvs.envs.gui.env import GuiEnv

pytestmark = [pytest.mark.docker, pytest.mark.slow]
TASKS = [t.id for t in agentenvs.list_tasks(family="gui")]
#: The order the episodes are played in; the pool prepares the next one's desktop meanwhile.
VARIANTS = ("oracle", "noop", "wrong")


def play(env: GuiEnv, variant: str) -> dict:
    env.reset(seed=0)
    actions = ["done"] if variant == "noop" else env.oracle_actions(variant)
    info: dict = {}
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        assert info["action_error"] is None, f"{variant}: {info['action_error']}"
        if terminated or truncated:
            break
    assert "score" in info, f"{variant}: the episode did not end"
    assert info.get("error_kind") != "infra", f"{variant}: {info.get('error')}"
    return info


def test_tasks_are_listed():
    assert {"mousepad-append-line", "calc-sum-total", "infeasible-photoshop"} <= set(TASKS)


@pytest.mark.parametrize("task_id", TASKS)
def test_oracle_one_noop_zero_wrong_below_one(gui_image, task_id):
    env = GuiEnv(task_id, screen_size=(1280, 800), observation_type="screenshot", pool_size=1)
    try:
        scores = {}
        for variant in VARIANTS:
            info = play(env, variant)
            scores[variant] = info["score"]
            if variant == "oracle":
                assert info["score"] == 1.0, info["verifier_detail"]
                assert info["success"] is True
    finally:
        env.close()
    assert scores["noop"] == 0.0, scores
    assert scores["wrong"] < 1.0, scores
