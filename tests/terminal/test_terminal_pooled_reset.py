"""A pooled reset takes a sandbox whose shells, log directories, first checks and state hash were
made while it waited. Nothing about the episode may differ from an unpooled one: same observation,
checks and state hash, the same scores, and each later step checked afresh."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentenvs import get_task
from agentenvs.core.task import Task, load_task
from tests.terminal.test_harbor_format import two_steps

TASK = "terminal/json-group-by-city"


def _wait(env: Any, task: Task) -> None:
    """Let the pool make (and prepare) a sandbox, as it does while the last episode's agent works."""
    assert env.unwrapped._provisioner.wait_ready(task, timeout=120)


def _start(env: Any) -> tuple[dict, dict]:
    obs, info = env.reset(seed=0)
    return obs, {k: info[k] for k in ("checks", "progress", "state_hash")}


def test_a_pooled_reset_starts_where_an_unpooled_one_does(make_env: Any) -> None:
    plain, pooled = make_env(TASK), make_env(TASK, pool_size=1)
    plain_obs, plain_info = _start(plain)
    for _ in range(3):
        _wait(pooled, get_task(TASK))
        obs, info = _start(pooled)
        assert pooled.unwrapped._pooled_start is not None, "the reset took a prepared sandbox"
        assert info == plain_info
        assert obs["instruction"] == plain_obs["instruction"]
        assert info["checks"] == {"output_is_json": False, "berlin_right": False}
        stepped_obs, _, _, _, stepped = pooled.step("ls -ld /logs/verifier && echo '{}' > active_by_city.json")
        assert "drwxrwxrwx" in stepped_obs["text"], "the pool made Harbor's log directories"
        assert stepped["checks"]["output_is_json"] is True, "a step after a pooled reset is checked afresh"


def test_pooled_episodes_score_as_unpooled_ones(make_env: Any) -> None:
    env = make_env(TASK, pool_size=1)
    scores = {}
    for variant in ("oracle", "wrong", "noop"):
        _wait(env, get_task(TASK))
        env.reset(seed=0)
        actions = env.unwrapped.oracle_actions(variant) if variant != "noop" else ["done"]
        for action in actions:
            _, _, terminated, _, info = env.step(action)
        assert terminated
        scores[variant] = info["score"]
    assert scores["oracle"] == 1.0
    assert scores["noop"] == 0.0
    assert scores["wrong"] < 1.0


def test_a_multi_step_task_is_not_prepared_and_still_starts_its_first_step(tmp_path: Path, make_env: Any) -> None:
    task = load_task(two_steps(tmp_path / "bench" / "notes"))
    plain, pooled = make_env(task), make_env(task, pool_size=1)
    _, plain_info = _start(plain)
    _wait(pooled, task)
    _, info = _start(pooled)
    assert pooled.unwrapped._pooled_start is None
    assert info == plain_info
    actions = pooled.unwrapped.oracle_actions()
    for action in actions:
        _, _, terminated, _, last = pooled.step(action)
    assert terminated and last["score"] == 1.0
