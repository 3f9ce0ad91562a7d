"""Fork and snapshot/restore on terminal tasks, on both backends: the family replays (a new sandbox,
the recorded commands again), so the shell's state (cwd, variables) comes back with the files."""

from __future__ import annotations

import pytest

from agentenvs.core.errors import NotDeterministicError
from agentenvs.validate import play

OUT = "/app/error_counts.txt"


def _setup(env) -> None:
    env.reset(seed=0)
    env.step("cd /app && echo draft > error_counts.txt")
    env.step("export MARK=forty-two")


def test_a_fork_diverges_in_its_own_sandbox_and_the_parent_is_unchanged(make_env) -> None:
    parent = make_env().unwrapped
    _setup(parent)
    at_k = parent._state_hash()
    child = parent.fork()
    try:
        assert child.sandbox is not parent.sandbox and child._step_count == 2
        assert child._state_hash() == at_k
        obs, *_ = child.step("echo $MARK; pwd; cat error_counts.txt")
        assert obs["text"].split() == ["forty-two", "/app", "draft"], "the shell and the files came back"
        child.step("echo 'only in the fork' > fork.txt && rm error_counts.txt")
        assert parent._state_hash() == at_k, "the fork's writes never reach the parent"
        obs, *_ = parent.step("ls /app; cat error_counts.txt")
        assert "fork.txt" not in obs["text"] and "draft" in obs["text"]
        wrong, _ = play(child, child.oracle_actions("wrong"))
        right, _ = play(parent, parent.oracle_actions())
        assert wrong["score"] == 0.0 and right["score"] == 1.0
    finally:
        child.close()


def test_restore_gives_the_same_state_hash_and_finishes_as_from_there(make_env) -> None:
    env = make_env().unwrapped
    _setup(env)
    at_k = env._state_hash()
    ref = env.snapshot()
    wrong, _ = play(env, env.oracle_actions("wrong"))
    assert wrong["score"] == 0.0
    ended = env.snapshot()
    obs, info = env.restore(ref)
    assert info["state_hash"] == at_k and info["step"] == 2 and obs["cwd"] == "/app"
    assert info["restored"]["strategy"] == "replay" and info["restored"]["replayed_steps"] == 2
    obs, *_, info = env.step("echo $MARK")
    assert obs["text"].strip() == "forty-two" and info["step"] == 3
    right, _ = play(env, env.oracle_actions())
    assert right["score"] == 1.0
    obs, info = env.restore(ended)
    assert env._ended and info["score"] == 0.0
    obs, reward, terminated, *_ = env.step("true")
    assert terminated and reward == 0.0 and "episode is over" in obs["text"]


def test_a_command_that_is_not_deterministic_cannot_be_replayed(make_env) -> None:
    env = make_env().unwrapped
    env.reset(seed=0)
    env.step("echo fixed > /app/a.txt")
    env.snapshot()
    env.step("date +%s%N > /app/stamp.txt")
    with pytest.raises(NotDeterministicError, match="between step 1 and step 2"):
        env.fork()
    assert env._step_count == 2 and not env._ended, "the parent goes on"
