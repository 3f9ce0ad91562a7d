"""The SWE env on both backends: every corpus task validates, tools work, reset is clean."""

from __future__ import annotations

import pytest

import agentenvs
from agentenvs.envs.swe.env import IMPORTS, P2P_INTACT, SWEEnv, f2p_checkpoint
from agentenvs.envs.swe.instance import instance_of
from agentenvs.validate import validate_tasks
from tests.swe.swe_helpers import corpus_tasks


def test_every_corpus_task_validates(backend):
    """Gold resolves, doing nothing does not, the plausible wrong fix does not.

    Every task on the local backend; one task per corpus repository on docker
    (`agentenvs validate --family swe --backend docker` runs them all).
    """
    tasks = corpus_tasks()
    assert len(tasks) >= 4
    if backend == "docker":
        tasks = list({instance_of(t).repo: t for t in reversed(tasks)}.values())
    results = validate_tasks(tasks, env_kwargs={"backend": backend, "dense_checks": False}, jobs=2)
    problems = {
        r.task_id: {v: (e.score, e.detail) for v, e in r.episodes.items() if not e.ok} for r in results if not r.ok
    }
    assert not problems
    for result in results:
        assert result.episodes["oracle"].score == 1.0
        assert result.episodes["noop"].score == 0.0
        assert result.episodes["wrong"].score == 0.0


@pytest.fixture
def env(backend, task):
    env = SWEEnv(task=task, backend=backend)
    yield env
    env.close()


def test_editor_view_edit_insert_undo(env, task):
    obs, _ = env.reset(seed=0)
    assert "/testbed" in obs["text"] and obs["changed_files"] == ""
    view = lambda **kw: env.step({"name": "str_replace_editor", "arguments": {"command": "view", **kw}})  # noqa: E731
    obs, _, _, _, info = view(path="README.md", view_range=[1, 2])
    assert info["action_error"] is None and "     1\t" in obs["text"] and "     3\t" not in obs["text"]
    obs, *_ = view(path=".")
    assert "/testbed/src" in obs["text"] and "/.git/" not in obs["text"]
    edit = {
        "name": "str_replace_editor",
        "arguments": {"command": "create", "path": "notes/new.txt", "file_text": "a\nb\n"},
    }
    obs, _, _, _, info = env.step(edit)
    assert info["action_error"] is None and "?? notes/new.txt" in obs["changed_files"]
    replace = {"command": "str_replace", "path": "notes/new.txt", "old_str": "b", "new_str": "B\nC"}
    obs, *_ = env.step({"name": "str_replace_editor", "arguments": replace})
    assert "     2\tB" in obs["text"]
    obs, *_ = env.step(
        {
            "name": "str_replace_editor",
            "arguments": {"command": "insert", "path": "notes/new.txt", "insert_line": 0, "new_str": "top"},
        }
    )
    obs, *_ = env.step("cat notes/new.txt")
    assert obs["text"].startswith("top\na\nB\nC\n")
    env.step({"name": "str_replace_editor", "arguments": {"command": "undo_edit", "path": "notes/new.txt"}})
    obs, *_ = env.step("cat notes/new.txt")
    assert obs["text"].startswith("a\nB\nC\n")
    # Misuse costs a step and says why; the env stays usable.
    _, _, terminated, _, info = env.step(
        {
            "name": "str_replace_editor",
            "arguments": {"command": "str_replace", "path": "notes/new.txt", "old_str": "zzz", "new_str": "y"},
        }
    )
    assert not terminated and "does not occur" in info["action_error"]
    _, _, _, _, info = env.step({"name": "str_replace_editor", "arguments": {"command": "view", "path": "nope.py"}})
    assert "does not exist" in info["action_error"]


def test_edits_keep_file_modes(env):
    env.reset(seed=0)
    env.step("chmod +x README.md && git add -A && git -c user.email=a@b -c user.name=a commit -qm mode")
    env.step(
        {"name": "str_replace_editor", "arguments": {"command": "create", "path": "README.md", "file_text": "x\n"}}
    )
    obs, *_ = env.step("stat -c %a README.md")
    assert obs["text"].startswith("755")


def test_reset_restores_the_base_commit(env, task):
    instance = instance_of(task)
    env.reset(seed=0)
    env.step(
        "echo junk > src/junk.py && rm -f README.md && git checkout -qb other && "
        "git -c user.email=a@b -c user.name=a commit -qam wip && mkdir -p .git/hooks && echo x > .git/hooks/pre-commit"
    )
    obs, info = env.reset(seed=0)
    assert obs["changed_files"] == ""
    obs, *_ = env.step("git rev-parse HEAD; git branch --list | wc -l; ls README.md src/junk.py; ls .git/hooks | wc -l")
    head, branches, *rest = obs["text"].split("\n")
    assert head == instance.base_commit and branches.strip() == "1"
    assert "README.md" in obs["text"] and "cannot access 'src/junk.py'" in obs["text"]


def _names_a_hidden_test(instance, *things) -> list[str]:
    """Hidden test ids (or their function names) that appear in any of ``things``."""
    text = repr(things)
    return [t for t in instance.FAIL_TO_PASS if t in text or t.split("::")[-1] in text]


def test_dense_checks_follow_the_diff(env, task):
    instance = instance_of(task)
    hidden = [f2p_checkpoint(i, len(instance.FAIL_TO_PASS)) for i in range(1, len(instance.FAIL_TO_PASS) + 1)]
    obs, info = env.reset(seed=0)
    assert info["checks"][IMPORTS] and info["checks"][P2P_INTACT]
    assert not any(info["checks"][name] for name in hidden)
    assert not _names_a_hidden_test(instance, obs, info, env.unwrapped.task.config.checkpoints)
    actions = env.oracle_actions("oracle")
    obs, reward, _, _, info = env.step(actions[0])
    assert all(info["checks"][name] for name in hidden) and info["progress"] == 1.0
    assert not _names_a_hidden_test(instance, obs, info)
    assert reward == 0.0  # sparse by default
    # Break the package: the suite no longer collects.
    obs, _, _, _, info = env.step(
        "printf 'raise ImportError(\"broken\")\\n' >> $(ls src/*/__init__.py */__init__.py | head -1)"
    )
    assert info["checks"][IMPORTS] is False and info["progress"] < 1.0
    _, reward, terminated, _, info = env.step("submit")
    assert terminated and reward == 0.0 and info["success"] is False
    assert info["instance_id"] == instance.instance_id and "raise ImportError" in info["model_patch"]


def test_gymnasium_make_and_tools():
    env = agentenvs.make(corpus_tasks()[0].full_id, backend="local", dense_checks=False)
    try:
        names = [t["function"]["name"] for t in env.unwrapped.action_tools]
        assert {"bash", "str_replace_editor", "submit"} <= set(names)
        obs, info = env.reset(seed=3)
        _, info2 = env.reset(seed=3)
        assert info["state_hash"] == info2["state_hash"]
    finally:
        env.close()
