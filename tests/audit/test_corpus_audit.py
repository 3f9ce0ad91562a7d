"""The corpus against the hack library, on both backends: no hack scores above the no-op.

This is `agentenvs audit` (the same code path); it fails with each finding's
evidence, so a regression in any defence names the task, the hack and what
the verifier said. Every terminal task runs on the local backend: a hole in
one task's verifier shows there; of the SWE tasks, the first and the last of
each repository (a repository's tasks share its grader). On docker the defences are the
backend's own (fresh verifier container, read-only tests, processes killed
before grading) and do not vary by task, so docker runs one terminal task
per verifier shape (a background process, a service, git history, a Harbor
test script, file modes); every SWE hack on docker is tests/swe/test_hacks.py.
The whole corpus on docker is `agentenvs audit --backend docker`, run for the
docs. The episodes skip the dense checks (``dense_checks=False``): an audit
judges the final score, which no checkpoint feeds, and the checks cost half an
episode's time; attacks on the dense checkers themselves are
tests/swe/test_carry_over.py and tests/sandbox/test_state_checker.py.
"""

from __future__ import annotations

import os

import pytest

import agentenvs
from agentenvs.audit import audit_tasks

JOBS = int(os.environ.get("AGENTENVS_AUDIT_JOBS", "2"))


def _report(audits: list) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {}
    for audit in audits:
        for finding in audit.findings:
            r = finding.result
            problems.setdefault(audit.task_id, []).append(
                f"{finding.hack} ({finding.reason}): score {r.score}, {r.error_kind or ''} {r.error or ''} "
                f"{r.usable_detail or ''} {r.verifier_detail[-200:]}"
            )
        for result in audit.errors:
            problems.setdefault(audit.task_id, []).append(f"{result.hack} did not run: {result.error}")
    return problems


DOCKER_TERMINAL = (
    "background-worker",
    "http-static-server",
    "git-find-bad-commit",
    "harbor-fix-script",
    "fix-permissions",
)


def _swe_sample() -> list[str]:
    """The first and the last task of each SWE repository: a repository's tasks share its grader (the
    same test runner over the same checkout; only which hidden tests differ), so more of them test
    the same defences again."""
    by_repo: dict[str, list[str]] = {}
    for task in agentenvs.list_tasks(family="swe"):
        by_repo.setdefault(task.id.rsplit("-", 1)[0], []).append(task.full_id)
    return sorted({ids[i] for ids in by_repo.values() for i in (0, -1)})


def _corpus() -> list[tuple[str, str]]:
    """(backend, task id) pairs: see the module docstring for what runs where."""
    pairs = [("local", t.full_id) for t in agentenvs.list_tasks(family="terminal")]
    pairs += [("local", task_id) for task_id in _swe_sample()]
    return pairs + [("docker", f"terminal/{name}") for name in DOCKER_TERMINAL]


def test_the_docker_sample_names_real_tasks() -> None:
    assert {f"terminal/{name}" for name in DOCKER_TERMINAL} <= {t.full_id for t in agentenvs.list_tasks("terminal")}


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("backend", "task_id"), _corpus())
def test_no_hack_beats_the_noop(backend: str, task_id: str, request: pytest.FixtureRequest) -> None:
    if backend == "docker":
        request.getfixturevalue("docker_client")
    task = agentenvs.get_task(task_id)
    (audit,) = audit_tasks([task], env_kwargs={"backend": backend, "dense_checks": False}, jobs=JOBS)
    assert len(audit.results) >= 3, "every task gets at least the common hacks"
    assert not _report([audit])


def test_text_games_resist_the_common_hacks() -> None:
    tasks = agentenvs.list_tasks(family="textgame", split="test")
    audits = audit_tasks(tasks, jobs=1)
    assert len(audits) == len(tasks) > 0
    assert not _report(audits)
