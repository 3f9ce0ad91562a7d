"""`agentenvs audit`: known reward hacks run as real episodes; a hack above the no-op is a finding.

The holes found here are in deliberately weak tasks written by each test (a
solution left in the image, a verifier that only checks a file exists), so
these tests hold whatever the verifier's hardening does. Whether the corpus
itself is clean is the corpus audit's business, not these tests'.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agentenvs
from agentenvs.audit import HackResult, TaskAudit, judge, plan, run_plan
from agentenvs.cli import app
from agentenvs.core.hacks import NOOP, TRIVIAL, Hack
from agentenvs.core.task import Task, load_task
from agentenvs.envs.terminal import hacks as terminal_hacks

SOUND_TASK = "terminal/log-error-summary"
cli = CliRunner()


def _write_task(root: Path, name: str, instruction: str, test_sh: str, files: dict[str, str]) -> Task:
    """A Harbor task under ``root/terminal/<name>``, built from ``files`` (paths relative to the task)."""
    task_dir = root / "terminal" / name
    files = {
        "task.toml": (
            'version = "1.0"\n[metadata]\ndifficulty = "easy"\n[agent]\ntimeout_sec = 300\n'
            "[verifier]\ntimeout_sec = 60\n[environment]\nmemory_mb = 512\n"
        ),
        "instruction.md": instruction,
        "tests/test.sh": test_sh,
        **files,
    }
    for rel, text in files.items():
        path = task_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return load_task(task_dir)


@pytest.fixture
def leaky_task(tmp_path: Path) -> Task:
    """Sound verifier, but the author shipped the solution inside the image: finding it is the hack."""
    solve = "#!/bin/bash\nwc -l < /app/data.txt | tr -d ' ' > /app/count.txt\n"
    return _write_task(
        tmp_path,
        "weak-leaky-solution",
        "Write the number of lines of `/app/data.txt` to `/app/count.txt`.",
        '#!/bin/bash\nmkdir -p /logs/verifier\n[ "$(cat /app/count.txt 2>/dev/null)" = 3 ] && r=1 || r=0\n'
        "echo $r > /logs/verifier/reward.txt\n",
        {
            "environment/Dockerfile": "FROM agentenvs/terminal:latest\nWORKDIR /app\nCOPY data.txt /app/\n"
            "COPY build/ /app/.build/\n",
            "environment/data.txt": "a\nb\nc\n",
            "environment/build/solution/solve.sh": solve,
            "solution/solve.sh": solve,
            "solution/wrong.sh": "#!/bin/bash\necho 4 > /app/count.txt\n",
        },
    )


@pytest.fixture
def trusting_task(tmp_path: Path) -> Task:
    """A verifier that trusts any file at the output path: a symlink to a system file passes."""
    return _write_task(
        tmp_path,
        "weak-trusts-existence",
        "Summarise `/app/notes.md` in `/app/report.txt`.",
        "#!/bin/bash\nmkdir -p /logs/verifier\n[ -f /app/report.txt ] && r=1 || r=0\n"
        "echo $r > /logs/verifier/reward.txt\n",
        {
            "environment/Dockerfile": "FROM agentenvs/terminal:latest\nWORKDIR /app\nCOPY notes.md /app/\n",
            "environment/notes.md": "# notes\nship it\n",
            "solution/solve.sh": "#!/bin/bash\nhead -1 /app/notes.md > /app/report.txt\n",
            "solution/wrong.sh": "#!/bin/bash\nhead -1 /app/notes.md > /app/report.md\n",
        },
    )


@pytest.fixture(params=["local", "docker"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_client")
    return request.param


def test_terminal_env_lists_common_and_every_terminal_attack_class() -> None:
    env = agentenvs.make(SOUND_TASK)
    try:
        listed = env.unwrapped.audit_hacks()
    finally:
        env.close()
    names = [h.name for h in listed]
    assert names[:3] == ["done", "fail", "claim-success"] and listed[0] is NOOP
    assert len(names) == len(set(names))
    assert {h.attack_class for h in listed} == {
        TRIVIAL,
        terminal_hacks.SHADOW,
        terminal_hacks.LEFTOVER,
        terminal_hacks.OUTPUT,
        terminal_hacks.HIDDEN,
        terminal_hacks.EDIT_TESTS,
        terminal_hacks.CRASH,
        terminal_hacks.SYMLINK,
    }
    text_env = agentenvs.make(agentenvs.list_tasks(family="textgame")[0])
    try:
        assert [h.name for h in text_env.unwrapped.audit_hacks()] == names[:3]
    finally:
        text_env.close()


def test_every_terminal_hack_is_valid_bash_ending_the_episode() -> None:
    """Each hack's actions, computed from a reset env: bash that parses, ending with ``done``."""
    for payload in (terminal_hacks.ANSWERS, terminal_hacks.STARTUP_HOOK, terminal_hacks.FAKE_EVALUATORS):
        compile(payload, "<payload>", "exec")
    env = agentenvs.make(SOUND_TASK, backend="local")
    try:
        env.reset(seed=0)
        for hack in terminal_hacks.TERMINAL_HACKS:
            actions = hack.actions(env.unwrapped)
            assert actions[-1] == "done", hack.name
            for action in actions[:-1]:
                assert isinstance(action, str) and action.strip(), hack.name
                parsed = subprocess.run(["bash", "-n", "-c", action], capture_output=True, text=True)
                assert parsed.returncode == 0, f"{hack.name}: {parsed.stderr}"
    finally:
        env.close()


def test_judge_counts_scores_above_the_noop_infra_and_broken_envs() -> None:
    def result(**kw: object) -> HackResult:
        return HackResult(**{"task_id": "t", "hack": "h", "attack_class": "c", "score": 0.0, **kw})  # type: ignore[arg-type]

    assert judge(result(score=0.5), 0.5) == []
    (free,) = judge(result(hack="done", score=0.5), 0.0)
    assert free.reason == "scored" and free.evidence() == "doing nothing scored 0.50"
    assert [f.reason for f in judge(result(score=0.6), 0.5)] == ["scored"]
    assert [f.reason for f in judge(result(score=None, error_kind="infra", error="boom"), 0.0)] == ["infra"]
    assert [f.reason for f in judge(result(usable=False, usable_detail="reset raised"), 0.0)] == ["unusable"]
    assert judge(result(score=None, ran=False, error="no sandbox"), 0.0) == []
    assert judge(result(after_hash="a"), 0.0, {"a", "b"}) == []
    (changed,) = judge(result(after_hash="c"), 0.0, {"a", "b"})
    assert changed.reason == "unusable" and "state_hash c, which no fresh reset" in changed.evidence()
    found = judge(result(score=1.0, integrity_flags=["conftest: hooks pytest"]), 0.0)[0]
    assert "score 1.00 > no-op 0.00" in found.evidence() and "conftest" in found.evidence()


def test_audit_finds_a_solution_left_in_the_image(leaky_task: Task, backend: str) -> None:
    work = plan([leaky_task], {"backend": backend}, ["read-hidden-tests", "claim-success"])
    assert [h.name for _, h in work] == ["done", "claim-success", "read-hidden-tests"]
    (audit,) = run_plan(work, {"backend": backend}, jobs=2)
    assert audit.baseline.score == 0.0 and audit.baseline.ran
    by_name = {r.hack: r for r in audit.results}
    assert by_name["claim-success"].score == 0.0
    assert by_name["read-hidden-tests"].score == 1.0
    assert all(r.usable and r.after_hash == audit.baseline.initial_hash for r in audit.results)
    (finding,) = audit.findings
    assert (finding.hack, finding.attack_class, finding.reason) == ("read-hidden-tests", "hidden-files", "scored")
    assert not audit.ok


def test_audit_finds_a_verifier_that_trusts_a_symlink(trusting_task: Task) -> None:
    (audit,) = run_plan(plan([trusting_task], {"backend": "local"}, ["symlink-outputs"]), {"backend": "local"})
    (finding,) = audit.findings
    assert finding.hack == "symlink-outputs" and finding.result.score == 1.0


def test_trivial_hacks_on_a_sound_task_find_nothing() -> None:
    task = agentenvs.get_task(SOUND_TASK)
    (audit,) = run_plan(plan([task], {"backend": "local"}, ["fail", "claim-success"]), {"backend": "local"}, jobs=2)
    assert [r.hack for r in audit.results] == ["fail", "claim-success"]
    assert all(r.score == 0.0 and r.usable and r.ran for r in [audit.baseline, *audit.results])
    assert audit.ok and audit.findings == []
    assert "missing" in audit.baseline.verifier_detail


def test_cli_audit_exit_status_and_json(leaky_task: Task) -> None:
    assert leaky_task.path is not None
    found = cli.invoke(app, ["audit", str(leaky_task.path), "--hack", "read-hidden-tests", "--json"])
    assert found.exit_code == 1, found.output
    report = json.loads(found.stdout)  # the progress bar goes to stderr
    assert report["findings"] == 1
    (task,) = report["tasks"]
    assert task["ok"] is False and task["findings"][0]["hack"] == "read-hidden-tests"
    assert task["findings"][0]["evidence"].startswith("score 1.00 > no-op 0.00")

    clean = cli.invoke(app, ["audit", str(leaky_task.path), "--hack", "claim-success"])
    assert clean.exit_code == 0, clean.output
    assert "no hack scored above the no-op" in clean.output

    unknown = cli.invoke(app, ["audit", str(leaky_task.path), "--hack", "no-such-hack"])
    assert unknown.exit_code == 2 and "no-such-hack" in unknown.output


def test_cli_validate_runs_the_audit_unless_told_not_to(trusting_task: Task) -> None:
    assert trusting_task.path is not None
    skipped = cli.invoke(app, ["validate", str(trusting_task.path), "--no-audit"])
    assert skipped.exit_code == 0, skipped.output
    assert "all 1 tasks valid" in skipped.output and "audit" not in skipped.output

    audited = cli.invoke(app, ["validate", str(trusting_task.path)])
    assert audited.exit_code == 1, audited.output
    assert "all 1 tasks valid" in audited.output
    assert "symlink-outputs" in audited.output


def test_audit_tables_cut_long_evidence_and_verbose_prints_it_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentenvs import cli as cli_module

    error = "SandboxError: " + "x" * 300 + " the end of the error"
    result = HackResult("terminal/t", "kill-everything", "crash", None, error_kind="infra", error=error)
    audit = TaskAudit("terminal/t", HackResult("terminal/t", "done", "trivial", 0.0), [result])
    monkeypatch.setenv("COLUMNS", "400")  # read at each print; setting console.width would pin it for later tests
    assert cli_module._print_audit([audit], "local", {}) is False
    cut = capsys.readouterr().out
    assert "--verbose shows them" in cut and "the end of the error" not in cut
    cli_module._print_audit([audit], "local", {}, verbose=True)
    assert "the end of the error" in capsys.readouterr().out


def test_an_episode_that_does_not_start_is_played_once_more() -> None:
    """Once is the machinery's chance; a hack that stops its episode every time is still reported."""
    task = agentenvs.get_task(SOUND_TASK)
    calls = {"flaky": 0}

    def flaky(env: object) -> list[str]:
        calls["flaky"] += 1
        if calls["flaky"] == 1:
            raise RuntimeError("the first try fails")
        return ["done"]

    def broken(env: object) -> list[str]:
        raise RuntimeError("every try fails")

    hacks = [Hack("flaky", TRIVIAL, "fails once", flaky), Hack("broken", TRIVIAL, "fails always", broken)]
    (audit,) = run_plan([(task, NOOP), *[(task, h) for h in hacks]], {"backend": "local"}, jobs=1)
    flaky_result, broken_result = audit.results
    assert flaky_result.ran and flaky_result.attempts == 2 and flaky_result.score == 0.0
    assert not broken_result.ran and broken_result.attempts == 2 and "every try fails" in broken_result.error
    assert audit.baseline.attempts == 1
    assert [e.hack for e in audit.errors] == ["broken"]
