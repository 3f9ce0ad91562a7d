"""Fork and snapshot/restore on text games: generated games copy their position, TextWorld games replay."""

from __future__ import annotations

from typing import Any

import pytest

from agentenvs.envs.textgame.env import TextGameEnv
from agentenvs.validate import play

SIGNAL = ("won", "lost", "moves", "distance", "distance_delta", "checks", "progress", "step", "admissible")


def _signals(env: TextGameEnv, actions: list[str]) -> list[dict[str, Any]]:
    """Each step's reward and signal (no clock in it), to the end of the episode."""
    seen = []
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        seen.append({"reward": reward, **{k: info.get(k) for k in SIGNAL}})
        if terminated or truncated:
            seen.append({"score": info["score"]})
            break
    return seen


@pytest.mark.parametrize(
    "task_id",
    ["coin-medium-3", "keys-medium-1", "cooking-easy-2", "household-medium-0", "maze-medium-4", "hanoi-easy-1"],
)
def test_fork_diverges_and_restore_finishes_the_same_way(task_id: str) -> None:
    parent = TextGameEnv(task_id, reward_mode="dense")
    child = None
    try:
        parent.reset(seed=0)
        plan = parent.oracle_actions()
        k = len(plan) // 2
        assert k >= 1, plan
        for action in plan[:k]:
            parent.step(action)
        at_k = parent._state_hash()
        ref = parent.snapshot()
        child = parent.fork()
        assert child._game is not parent._game and child._state_hash() == at_k
        assert child.reward_mode == "dense"
        wrong, _ = play(child, child.oracle_actions("wrong"))
        assert wrong["score"] == 0.0
        assert parent._state_hash() == at_k and parent._step_count == k
        first = _signals(parent, plan[k:])
        assert first[-1] == {"score": 1.0}
        obs, info = parent.restore(ref)
        assert info["state_hash"] == at_k and info["step"] == k and info["restored"]["strategy"] == "copy"
        assert obs["admissible_commands"] == parent._game.admissible_text
        assert _signals(parent, plan[k:]) == first, "the same rewards, distances and step numbers again"
    finally:
        if child is not None:
            child.close()
        parent.close()


@pytest.fixture
def tw_cache(tmp_path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTENVS_TEXTWORLD_CACHE", str(tmp_path))
    return tmp_path


def test_a_textworld_game_replays(tw_cache) -> None:
    parent = TextGameEnv("twcoin-easy-1")
    child = None
    try:
        parent.reset(seed=0)
        plan = parent._game.walkthrough()
        assert len(plan) >= 2
        parent.step("look")
        at_k = parent._state_hash()
        ref = parent.snapshot()
        child = parent.fork()
        assert child._game is not parent._game and child._state_hash() == at_k
        child.step("xyzzy")
        lost, _ = play(child, ["inventory"])
        assert lost["score"] == 0.0
        assert parent._state_hash() == at_k and parent._step_count == 1
        won, _ = play(parent, plan)
        assert won["score"] == 1.0
        obs, info = parent.restore(ref)
        assert info["state_hash"] == at_k and info["restored"] == {**info["restored"], "strategy": "replay"}
        assert info["restored"]["replayed_steps"] == 1 and parent._step_count == 1
        again, _ = play(parent, plan)
        assert again["score"] == 1.0 and again["step"] == won["step"]
    finally:
        if child is not None:
            child.close()
        parent.close()
