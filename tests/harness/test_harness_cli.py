"""The harness commands through Typer: run, report, show, compare, and their errors."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from agentenvs.harness.cli import app
from agentenvs.harness.rundir import RunDir

cli = CliRunner()


def invoke(*args: str):
    return cli.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "200"})


def test_run_show_report_compare(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    result = invoke("run", "--task", "toy/*", "--policy", "oracle", "--trials", "2", "--out", str(a), "--no-progress")
    assert result.exit_code == 0, result.output
    assert "overall" in result.output and f"report: {a}/report.html" in result.output
    assert json.loads((a / "summary.json").read_text())["overall"]["success_rate"] == 1.0
    result = invoke("run", "--task", "toy/*", "--policy", "random", "--out", str(b), "--no-progress")
    assert result.exit_code == 0, result.output

    shown = invoke("show", str(a), "--task", "toy/reach-2", "--trial", "1")
    assert shown.exit_code == 0
    assert "step 1 add: add(n=1)" in shown.output
    assert "counter=2 target=2" in shown.output and "progress 100.0%" in shown.output
    listed = invoke("show", str(a))
    assert listed.exit_code == 0 and listed.output.count("toy/reach-") == 6

    (a / "report.html").unlink()
    assert invoke("report", str(a)).exit_code == 0 and (a / "report.html").is_file()

    compared = invoke("compare", str(a), str(b))
    assert compared.exit_code == 0
    assert "100.0% (6/6), 1.00" in compared.output and "overall" in compared.output


def test_errors_say_what_to_do(tmp_path):
    result = invoke("run", "--suite", "nope", "--out", str(tmp_path / "x"))
    assert result.exit_code == 2 and "unknown suite 'nope'" in result.output
    result = invoke("run", "--task", "nothing/*", "--out", str(tmp_path / "x"))
    assert result.exit_code == 2 and "no task matches" in result.output
    result = invoke(
        "run", "--task", "toy/*", "--policy", "oracle", "--temperature", "0.5", "--out", str(tmp_path / "x")
    )
    assert result.exit_code == 2 and "--temperature" in result.output and "does not apply" in result.output
    result = invoke("run", "--resume", "--out", str(tmp_path / "missing"))
    assert result.exit_code == 2 and "--resume needs --out" in result.output
    result = invoke("show", str(tmp_path))
    assert result.exit_code == 2 and "not a run directory" in result.output
    ok = tmp_path / "ok"
    assert invoke("run", "--task", "toy/reach-1", "--out", str(ok), "--no-progress").exit_code == 0
    result = invoke("show", str(ok), "--task", "toy/reach-9")
    assert result.exit_code == 2 and "no trajectory for toy/reach-9" in result.output
    result = invoke("run", "--task", "toy/reach-1", "--out", str(ok), "--no-progress")
    assert result.exit_code == 2 and "--resume" in result.output


def test_unresolved_infra_is_announced_and_retry_infra_replays_only_it(tmp_path):
    from servers import Faults, act_app, serve

    out = tmp_path / "run"
    result = invoke("run", "--retry-infra", "--out", str(out))
    assert result.exit_code == 2 and "--resume" in result.output
    faults = Faults()
    faults.fail_first = 1  # the first episode's first /act: a 500, and no retries are allowed
    app = act_app(faults)
    with serve(app) as url:
        args = ["--task", "toy/*", "--policy", "http", "--url", url, "--max-retries", "0", "--max-infra-retries", "0",
                "--concurrency", "1", "--out", str(out), "--no-progress", "--policy-feedback"]  # fmt: skip
        first = invoke("run", *args)
        assert first.exit_code == 1, first.output  # an unresolved episode fails the command, saying why
        assert "1 episode unresolved" in first.output and f"--retry-infra --out {out}" in first.output
        assert "1 episode ended as infra errors:\n  toy/reach-1 trial 0: POST " in first.output
        assert "answered 500" in first.output
        assert all({"reward", "checks", "progress"} <= set(body) for body in app.state.acts)
        before = RunDir(out).read_episodes()
        assert [e["status"] for e in before] == ["infra", "scored", "scored"]
        resets = len(app.state.resets)
        plain = invoke("run", "--resume", "--out", str(out), "--no-progress")
        assert plain.exit_code == 1 and len(app.state.resets) == resets and "1 episode unresolved" in plain.output
        retried = invoke("run", "--resume", "--retry-infra", "--out", str(out), "--no-progress")
        assert retried.exit_code == 0, retried.output
    assert len(app.state.resets) == resets + 1  # only the infra episode was played again
    assert "replayed 1 episode that had ended" in retried.output and "episode unresolved" not in retried.output
    after = RunDir(out).read_episodes()
    assert after[:2] == before[1:] and after[2]["task_id"] == before[0]["task_id"]
    assert [e["status"] for e in after] == ["scored"] * 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["infra"] == 0 and summary["overall"]["success_rate_infra_as_failure"] == 2 / 3
