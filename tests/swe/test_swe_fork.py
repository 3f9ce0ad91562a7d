"""Fork and snapshot/restore on SWE tasks, on both backends: the family copies the repository's changes
(one binary diff applied to a clean checkout), with the shell's directory and the editor's undo history."""

from __future__ import annotations

import pytest

from agentenvs.envs.swe.env import SWEEnv
from agentenvs.validate import play

EDIT = {"name": "str_replace_editor", "arguments": {"command": "create", "path": "notes/todo.txt", "file_text": "a\n"}}
UNDO = {"name": "str_replace_editor", "arguments": {"command": "undo_edit", "path": "notes/todo.txt"}}
# Every kind of change a diff carries: bytes that are not text, a deletion, a mode, a symlink, non-UTF-8 text.
CHANGES = (
    "printf '\\x00\\x01\\xff' > blob.bin && rm README.md && chmod +x pyproject.toml"
    " && ln -s src link && printf 'caf\\xe9\\n' > latin1.txt && cd src"
)


@pytest.fixture
def env(backend, task):
    env = SWEEnv(task=task, backend=backend)
    yield env
    env.close()


def _setup(env: SWEEnv) -> None:
    env.reset(seed=0)
    env.step(EDIT)
    env.step(CHANGES)


def test_a_fork_has_the_repository_shell_and_editor_and_diverges_alone(env) -> None:
    _setup(env)
    at_k = env._state_hash()
    child = env.fork()
    try:
        assert child.sandbox is not env.sandbox and child._step_count == 2
        assert child._state_hash() == at_k
        obs, *_ = child.step("pwd; od -An -tx1 ../blob.bin; readlink ../link; test -x ../pyproject.toml && echo x")
        assert obs["text"].split()[:6] == ["/testbed/src", "00", "01", "ff", "src", "x"]
        assert "D README.md" in obs["changed_files"] and "?? notes/todo.txt" in obs["changed_files"]
        obs, *_, info = child.step(UNDO)
        assert info["action_error"] is None and "notes/todo.txt" not in obs["changed_files"]
        assert env._state_hash() == at_k, "the fork's writes never reach the parent"
        obs, *_ = env.step("ls /testbed/notes")
        assert "todo.txt" in obs["text"]
        wrong, _ = play(child, child.oracle_actions("wrong"))
        right, _ = play(env, env.oracle_actions())
        assert wrong["score"] == 0.0 and right["score"] == 1.0
    finally:
        child.close()


def test_restore_gives_the_same_state_hash_and_finishes_as_from_there(env) -> None:
    _setup(env)
    at_k = env._state_hash()
    shown = env._last_obs["changed_files"]
    ref = env.snapshot()
    wrong, _ = play(env, env.oracle_actions("wrong"))
    assert wrong["score"] == 0.0
    ended = env.snapshot()
    obs, info = env.restore(ref)
    assert info["state_hash"] == at_k and info["step"] == 2 and info["restored"]["strategy"] == "copy"
    assert obs["changed_files"] == shown and not env._ended
    obs, *_ = env.step("pwd")
    assert obs["text"].strip() == "/testbed/src"
    right, _ = play(env, env.oracle_actions())
    assert right["score"] == 1.0 and right["step"] == wrong["step"] + 1  # the pwd
    obs, info = env.restore(ended)
    assert info["restored"]["strategy"] == "replay", "an ended episode replays (its grading with it)"
    assert env._ended and info["score"] == 0.0 and env.last_report is not None and not env.last_report.resolved
