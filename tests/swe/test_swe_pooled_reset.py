"""A pooled SWE reset takes a sandbox the pool made, checked out and read while it waited (the
checker's and the grader's sandboxes come from it too). The episode must not differ from an
unpooled one: the same start, the same scores, and the state read afresh after each action."""

from __future__ import annotations

from typing import Any

from agentenvs.envs.swe.env import SWEEnv


def _pooled(task: Any, backend: str) -> SWEEnv:
    return SWEEnv(task=task, backend=backend, pool_size=1, fresh_sandbox=True)


def _wait(env: SWEEnv, task: Any) -> None:
    """Let the pool make a sandbox, as it does while the last episode's agent works."""
    assert env._sandboxes.wait_ready(task, _instance(task), timeout=180)


def _instance(task: Any) -> Any:
    from agentenvs.envs.swe.instance import instance_of

    return instance_of(task)


def _start(env: SWEEnv) -> dict:
    _, info = env.reset(seed=0)
    return {k: info[k] for k in ("checks", "progress", "state_hash")}


def test_a_pooled_reset_starts_where_an_unpooled_one_does(backend: str, task: Any) -> None:
    plain, pooled = SWEEnv(task=task, backend=backend), _pooled(task, backend)
    try:
        expected = _start(plain)
        for _ in range(2):
            _wait(pooled, task)
            assert _start(pooled) == expected
            assert pooled._reset_digest == expected["state_hash"], "the hash the pool read was used"
            obs, *_ = pooled.step("echo 'x = 1' > scratch.py && git status --short")
            assert "scratch.py" in obs["text"]
            assert pooled._state_hash() != expected["state_hash"], "after an action the state is read again"
    finally:
        plain.close()
        pooled.close()


def test_pooled_episodes_score_as_unpooled_ones(backend: str, task: Any) -> None:
    env = _pooled(task, backend)
    scores = {}
    try:
        for variant in ("oracle", "wrong", "noop"):
            _wait(env, task)
            env.reset(seed=0)
            actions = env.oracle_actions(variant) if variant != "noop" else ["submit"]
            for action in actions:
                _, _, terminated, _, info = env.step(action)
            assert terminated
            scores[variant] = info["score"]
    finally:
        env.close()
    assert scores == {"oracle": 1.0, "wrong": scores["wrong"], "noop": 0.0}
    assert scores["wrong"] < 1.0
