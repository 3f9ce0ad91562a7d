"""The harness on the real families: a terminal task (local sandbox) and text games."""

from __future__ import annotations

import asyncio

from conftest import run_config

from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.scoring import summarize


def test_terminal_oracle_scores_one_and_random_zero(tmp_path):
    tasks = ["terminal/fix-permissions"]
    asyncio.run(Runner(run_config(tasks, "oracle"), str(tmp_path / "oracle")).run())
    asyncio.run(Runner(run_config(tasks, "random", max_steps=2, options={"seed": 3}), str(tmp_path / "random")).run())
    oracle, random = summarize(RunDir(tmp_path / "oracle")), summarize(RunDir(tmp_path / "random"))
    assert oracle["overall"]["success_rate"] == 1.0 and oracle["overall"]["infra"] == 0
    assert random["overall"]["success_rate"] == 0.0 and random["overall"]["infra"] == 0
    steps = RunDir(tmp_path / "oracle").read_steps("terminal/fix-permissions", 0)
    assert steps[1]["action"]["name"] == "bash" and steps[-1]["info"]["success"] is True


def test_textgame_random_runs_to_a_score(tmp_path):
    tasks = ["textgame/coin-easy-0", "textgame/coin-easy-1"]
    asyncio.run(Runner(run_config(tasks, "random", trials=2, options={"seed": 1}), str(tmp_path / "run")).run())
    summary = summarize(RunDir(tmp_path / "run"))
    assert summary["overall"]["scored"] == 4 and summary["overall"]["infra"] == 0
    assert summary["by_family"]["textgame"]["steps_mean"] >= 1


def test_a_multi_step_harbor_task_records_steps_artifacts_and_warnings(tmp_path, monkeypatch):
    from io import StringIO

    from rich.console import Console

    from agentenvs.harness.report import write_report
    from agentenvs.harness.views import show_trajectory
    from tests.terminal.test_harbor_format import two_steps

    root = two_steps(tmp_path / "tasks" / "terminal" / "notes", toml='artifacts = ["/workspace/notes.txt"]\n')
    toml = (root / "task.toml").read_text() + "[environment]\nallow_internet = true\n"
    (root / "task.toml").write_text(toml)
    monkeypatch.setenv("AGENTENVS_TASKS_DIR", str(tmp_path / "tasks"))
    asyncio.run(Runner(run_config(["terminal/notes"], "oracle"), str(tmp_path / "run")).run())
    run = RunDir(tmp_path / "run")
    (record,) = run.read_episodes()
    assert record["score"] == 1.0 and [s["reward"] for s in record["task_steps"]] == [1.0, 1.0]
    assert any("asks for network" in w for w in record["warnings"])
    assert record["artifacts"] == [
        "artifacts/steps/first/workspace/notes.txt",
        "artifacts/steps/second/workspace/notes.txt",
    ]
    saved = run.trajectory_dir("terminal/notes", 0) / record["artifacts"][1]
    assert saved.read_text() == "one\ntwo\n"
    steps = run.read_steps("terminal/notes", 0)
    told = [(s["step"], s["instruction"]) for s in steps if "instruction" in s]
    moved_on = next(s["step"] for s in steps if (s.get("info") or {}).get("task_step") == "second")
    assert told == [(0, "Write 'one' into notes.txt."), (moved_on, "Append a line 'two' to notes.txt.")]
    out = StringIO()
    show_trajectory(run, "terminal/notes", 0, Console(file=out, width=200))
    assert "task step first: reward 1.000" in out.getvalue() and "reward 0.500" in out.getvalue()
    assert f"instruction from step {moved_on}\nAppend a line 'two'" in out.getvalue()
    write_report(run)
    assert "task-steps" in run.report_html.read_text()
