"""Every gui task on the docker backend, and one of each kind on the local one: its oracle scores 1,
doing nothing 0, its wrong solution below 1.

Real desktops, real apps: the oracle acts through the GUI (keys, clicks,
typing) and the score is read from the saved files after every process in
the desktop is killed. The three episodes of a task run at once, each on its
own env and desktop (a fresh container every time: used desktops are never
reused), so that one's app start overlaps another's waits for the screen;
``AGENTENVS_GUI_TEST_WORKERS=1`` plays them one after another (one desktop at
a time, for a machine shared with other work). Screenshot-only observations
keep the steps short.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

import agentenvs
from agentenvs.envs.gui.env import GuiEnv

pytestmark = [pytest.mark.docker, pytest.mark.slow]
TASKS = [t.id for t in agentenvs.list_tasks(family="gui")]
VARIANTS = ("oracle", "noop", "wrong")
WORKERS = int(os.environ.get("AGENTENVS_GUI_TEST_WORKERS", len(VARIANTS)))
#: A task of each app and kind, for the local backend (the same image and daemon as on docker).
LOCAL_TASKS = [
    "mousepad-fix-typo",
    "calc-bold-header",
    "writer-replace-title",
    "impress-move-slide",
    "files-rename-file",
    "terminal-make-dirs",
    "chromium-save-page",
    "multi-fix-script-run",
    "infeasible-photoshop",
]


def play(task_id: str, variant: str, backend: str = "docker") -> dict:
    env = GuiEnv(task_id, backend=backend, screen_size=(1280, 800), observation_type="screenshot")
    try:
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
    finally:
        env.close()


def test_tasks_are_listed():
    assert {"mousepad-append-line", "calc-sum-total", "infeasible-photoshop", "impress-move-slide"} <= set(TASKS)
    assert {"files-rename-file", "files-new-folder-move", "files-copy-to-folder", "files-trash-file"} <= set(TASKS)
    assert len(TASKS) >= 50


@pytest.mark.parametrize(("task_id", "backend"), [(t, "docker") for t in TASKS] + [(t, "local") for t in LOCAL_TASKS])
def test_oracle_one_noop_zero_wrong_below_one(gui_image, task_id, backend):
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        infos = dict(zip(VARIANTS, pool.map(lambda variant: play(task_id, variant, backend), VARIANTS)))
    assert infos["oracle"]["score"] == 1.0, infos["oracle"]["verifier_detail"]
    assert infos["oracle"]["success"] is True
    assert infos["noop"]["score"] == 0.0, infos["noop"]["verifier_detail"]
    assert infos["wrong"]["score"] < 1.0, infos["wrong"]["verifier_detail"]
