"""The Python API's rough edges (issue 9, item 4): choosing a task, and pickling an env."""

from __future__ import annotations

import pickle
from pathlib import Path

import gymnasium
import pytest

import agentenvs
from agentenvs.core.errors import NoTaskChosenError

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def test_gymnasium_make_without_a_task_never_picks_one():
    env = gymnasium.make("agentenvs/textgame-v0")
    with pytest.raises(
        NoTaskChosenError, match=r"no task chosen .*task_id='textgame/.*agentenvs list --family textgame"
    ):
        env.reset(seed=0)
    _, info = env.reset(seed=0, options={"task_id": "textgame/coin-easy-1"})  # the way the error names
    assert info["task_id"] == "textgame/coin-easy-1"
    env.close()


@pytest.mark.parametrize("task", ["coin-easy-0", "textgame/coin-easy-0"])
def test_task_may_be_a_string_id(task):
    env = gymnasium.make("agentenvs/textgame-v0", task=task)
    _, info = env.reset(seed=0)
    assert info["task_id"] == "textgame/coin-easy-0"
    env.close()


def test_task_may_be_a_directory_and_anything_else_is_a_clear_error():
    env = gymnasium.make("agentenvs/terminal-v0", task=TASKS / "terminal" / "fix-permissions", backend="local")
    try:
        _, info = env.reset(seed=0)
        assert info["task_id"] == "terminal/fix-permissions"
    finally:
        env.close()
    with pytest.raises(TypeError, match="task must be a Task, a task id or a task directory, got int"):
        gymnasium.make("agentenvs/textgame-v0", task=3)
    with pytest.raises(ValueError, match="runs 'textgame' tasks, not 'terminal'"):
        gymnasium.make("agentenvs/textgame-v0", task="terminal/fix-permissions")


def test_a_text_game_env_pickles_mid_episode_and_plays_on():
    """Trainers send envs to subprocess vector envs by pickling them."""
    fresh = pickle.loads(pickle.dumps(agentenvs.make("textgame/coin-easy-0")))
    _, info = fresh.reset(seed=0)
    assert info["task_id"] == "textgame/coin-easy-0"

    env = agentenvs.make("textgame/coin-easy-0")
    env.reset(seed=0)
    plan = env.unwrapped.oracle_actions()
    assert len(plan) >= 3
    env.step(plan[0])
    copy = pickle.loads(pickle.dumps(env))
    assert copy.unwrapped._state_hash() == env.unwrapped._state_hash()
    steps = []
    for action in plan[1:]:
        _, _, terminated, truncated, info = copy.step(action)
        steps.append(info["step"])
        if terminated or truncated:
            break
    assert steps[0] == 2  # the copy goes on from where the original was
    assert info["success"] is True and info["score"] == 1.0
    _, _, _, _, original = env.step(plan[1])  # the original goes on by itself
    assert original["step"] == 2
    env.close()
    copy.close()


@pytest.mark.parametrize("again", ["task", "task_id"])
def test_make_refuses_a_second_task_argument_by_name(again):
    with pytest.raises(TypeError, match=rf"drop {again}="):
        agentenvs.make("textgame/coin-easy-0", **{again: "textgame/coin-easy-1"})
