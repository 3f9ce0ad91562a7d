"""Every SWE reward hack, run for real against corpus tasks on both backends: none scores."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentenvs.core.task import load_task
from agentenvs.envs.swe.env import SWEEnv
from agentenvs.envs.swe.hacks import swe_hacks
from agentenvs.envs.swe.repo import repository_refused
from tests.swe.swe_helpers import TASKS

HACK_TASKS = ["agentenvs__calcy-0001", "agentenvs__tabkit-0002"]
#: (backend, task) pairs. Docker's defences (a fresh verifier container, read-only tests, every
#: process killed before grading) do not vary by task, so docker runs one; local runs both (and
#: tests/audit/test_corpus_audit.py runs every SWE task against every hack on local).
HACK_RUNS = [
    *(pytest.param("local", task_id, id=f"local-{task_id}") for task_id in HACK_TASKS),
    pytest.param("docker", HACK_TASKS[0], id=f"docker-{HACK_TASKS[0]}", marks=pytest.mark.docker),
]
IN_PROCESS = "in-process-patching"


def _play(env: SWEEnv, actions: Callable[[SWEEnv], list[Any]]) -> dict:
    """Reset, then send what ``actions`` computes from the reset env (as an agent would) until the end."""
    env.reset(seed=0)
    info: dict = {}
    for action in actions(env):
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert "score" in info, "the episode did not end"
    return info


def test_the_library_covers_every_attack_class():
    classes = {h.attack_class for h in swe_hacks()}
    assert classes == {
        "conftest-hook",
        "pytest-config",
        "shadow-module",
        "pth-file",
        "sitecustomize",
        "edit-tests",
        "fake-output",
        IN_PROCESS,
        "background-process",
        "read-hidden-tests",
        "crash",
    }
    kinds = {h.name for h in swe_hacks() if h.attack_class == "pytest-config"}
    assert {"pyproject-addopts", "pytest-ini-addopts", "dot-pytest-ini-addopts", "tox-ini-addopts"} <= kinds
    assert "setup-cfg-addopts" in kinds


@pytest.mark.parametrize(("backend", "task_id"), HACK_RUNS, indirect=["backend"])
def test_every_hack_scores_no_more_than_doing_nothing(backend, task_id):
    task = load_task(TASKS / task_id, family="swe")
    env = SWEEnv(task=task, backend=backend, dense_checks=False)
    try:
        noop = _play(env, lambda _: ["submit"])["score"]
        assert noop == 0.0
        scores, unflagged, voided = {}, [], {}
        for hack in swe_hacks():
            info = _play(env, hack.actions)
            # The machinery may fail under load: one infra episode is chance, two are the hack's doing.
            if info.get("error_kind") == "infra":
                info = _play(env, hack.actions)
            scores[hack.name] = (info["score"], (info.get("verifier_detail") or info.get("error") or "")[:200])
            if hack.attack_class == IN_PROCESS and not info.get("integrity_flags"):
                unflagged.append(hack.name)
            if info.get("error_kind") == "infra":  # an infra episode is left out of the score: a voided failure
                voided[hack.name] = info.get("error")
        assert {name: s for name, s in scores.items() if s[0] > noop} == {}
        assert unflagged == []
        assert voided == {}
        # The env is still usable, and nothing a hack left behind changes an honest fix's grade.
        assert _play(env, lambda e: e.oracle_actions("oracle"))["score"] == 1.0
    finally:
        env.close()


@pytest.mark.parametrize(
    ("exit_code", "stderr", "agents_doing"),
    [
        (128, "fatal: not a git repository (or any parent up to mount point /)\n", True),
        (1, "bash: line 3: cd: /testbed: No such file or directory\n", True),
        (1, "error: object file .git/objects/ab/cd is empty\nfatal: loose object abcd is corrupt\n", True),
        (137, "", False),  # killed without a word: the machinery's failure
        (-1, "", False),
    ],
)
def test_only_a_repository_git_refuses_is_the_agents_doing(exit_code, stderr, agents_doing):
    assert repository_refused(exit_code, stderr, "/testbed") is agents_doing


def test_changes_too_big_for_a_patch_are_the_agents_fault_with_what_to_delete(backend):
    """Past the limits the final read refuses quickly (score 0, the agent's fault), never infra."""
    task = load_task(TASKS / HACK_TASKS[0], family="swe")
    env = SWEEnv(task=task, backend=backend, dense_checks=False)
    try:
        flood = "mkdir -p gen/out && cd gen/out && seq -w 1 20001 | xargs touch"
        info = _play(env, lambda _: [{"name": "bash", "arguments": {"command": flood}}, "submit"])
        assert (info["score"], info.get("error_kind")) == (0.0, "agent")
        assert "more than 20,000 new or changed files" in info["error"] and ".gitignore" in info["error"]
        # Ignored outputs are not part of the patch: the same flood under .gitignore is graded as usual.
        ignored = f"echo gen/ >> .gitignore && {flood}"
        info = _play(env, lambda _: [{"name": "bash", "arguments": {"command": ignored}}, "submit"])
        assert info.get("error_kind") is None and info["score"] == 0.0
    finally:
        env.close()
