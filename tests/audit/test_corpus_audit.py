"""The corpus against the hack library, on both backends: no hack scores above the no-op.

This is `agentenvs audit` (the same code path); it fails with each finding's
evidence, so a regression in any defence names the task, the hack and what
the verifier said. Every terminal task runs on both backends and every SWE
task on local; SWE on docker runs one task per library (its hacks attack the
one grader, and a docker SWE episode costs about 2 s a hack: the whole corpus
there is `agentenvs audit --family swe --backend docker`, run for the docs).
SWE episodes skip the dense checks, which the same grader computes; attacks
on the dense checker itself are tests/swe/test_carry_over.py.
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
                f"{r.verifier_detail[-200:]}"
            )
        for result in audit.errors:
            problems.setdefault(audit.task_id, []).append(f"{result.hack} did not run: {result.error}")
    return problems


def _corpus() -> list[tuple[str, str]]:
    """(backend, task id) pairs: see the module docstring for what runs where."""
    pairs = []
    for family in ("terminal", "swe"):
        tasks = agentenvs.list_tasks(family=family)
        per_library = {t.full_id.split("__")[-1].split("-")[0]: t for t in tasks}.values()
        for backend in ("local", "docker"):
            chosen = per_library if (family, backend) == ("swe", "docker") else tasks
            pairs += [(backend, t.full_id) for t in chosen]
    return pairs


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
