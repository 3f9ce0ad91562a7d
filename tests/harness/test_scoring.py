"""Summary numbers against values computed by hand."""

from __future__ import annotations

import json
import math

import pytest

from agentenvs.harness.rundir import RunDir
from agentenvs.harness.scoring import mean_interval, pass_at_k, pass_hat_k, summarize, t95, wilson_interval


def test_pass_at_k_by_hand():
    # n=3, c=1: pass@1 = 1/3; pass@2 = 1 - C(2,2)/C(3,2) = 2/3; pass@3 = 1.
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3)
    assert pass_at_k(3, 1, 3) == 1.0
    assert pass_at_k(5, 0, 2) == 0.0
    # n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10.
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    # pass^k: C(c,k)/C(n,k). n=5, c=3, k=2: 3/10.
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)
    assert pass_hat_k(3, 2, 3) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_intervals_by_hand():
    # Wilson, 8 of 10: centre (0.8 + 1.92/10)/(1 + 3.8415/10) = 0.7166; half 0.2273.
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 0) is None
    # t interval of [0, 0.5, 1]: mean 0.5, sd 0.5, half = 4.303 * 0.5 / sqrt(3) = 1.242 -> clipped.
    assert mean_interval([0.0, 0.5, 1.0]) == (0.0, 1.0)
    lo, hi = mean_interval([0.4, 0.6, 0.5, 0.5])
    half = 3.182 * math.sqrt(0.02 / 3) / 2
    assert (lo, hi) == pytest.approx((0.5 - half, 0.5 + half))
    assert mean_interval([1.0]) is None
    assert t95(10) == 2.228 and t95(60) == pytest.approx(2.000, abs=2e-3)


def write_run(path, tasks, episodes):
    run = RunDir(path)
    run.write_run(
        {
            "config": {"tasks": [t["id"] for t in tasks], "trials": 3},
            "policy": {"name": "hand"},
            "tasks": tasks,
        }
    )
    for e in episodes:
        run.append_episode(e)
    return run


def episode(task, trial, success, steps=4, elapsed=2.0, tokens=100, status="scored", score=None, flags=()):
    record = {"task_id": task, "trial": trial, "status": status, "steps": steps, "elapsed_sec": elapsed,
              "tokens": {"total": tokens}, "attempts": 1, "integrity_flags": list(flags)}  # fmt: skip
    if status == "scored":
        record.update({"success": success, "score": score if score is not None else float(success)})
    else:
        record.update({"success": None, "score": None, "error": "sandbox died", "attempts": 3, "tokens": {"total": 0}})
    return record


def test_summary_by_hand(tmp_path):
    tasks = [
        {"id": "fa/a", "family": "fa", "difficulty": "easy", "tags": ["x"]},
        {"id": "fa/b", "family": "fa", "difficulty": "hard", "tags": ["x", "y"]},
        {"id": "fb/c", "family": "fb", "difficulty": "easy", "tags": []},
    ]
    episodes = [
        # a: 2 of 3; b: 0 of 3; c: 3 of 3, but trial 2 is an infra error (2 of 2 scored).
        episode("fa/a", 0, True, steps=2), episode("fa/a", 1, False, steps=6, score=0.5),
        episode("fa/a", 2, True, steps=4, flags=["conftest: the diff adds a conftest.py"]),
        episode("fa/b", 0, False), episode("fa/b", 1, False), episode("fa/b", 2, False),
        episode("fb/c", 0, True), episode("fb/c", 1, True), episode("fb/c", 2, None, status="infra"),
    ]  # fmt: skip
    summary = summarize(write_run(tmp_path, tasks, episodes))
    o = summary["overall"]
    assert (o["episodes"], o["scored"], o["infra"], o["successes"]) == (9, 8, 1, 4)
    assert o["success_rate"] == 0.5
    assert o["mean_score"] == pytest.approx(4.5 / 8)
    # With the infra episode counted as a failure: 4 of 9, and a score of 4.5 over 9.
    assert o["success_rate_infra_as_failure"] == pytest.approx(4 / 9)
    assert o["mean_score_infra_as_failure"] == pytest.approx(0.5)
    lo, hi = o["success_ci95_infra_as_failure"]
    assert (lo, hi) == pytest.approx(wilson_interval(4, 9)) and lo < 4 / 9 < hi
    assert summary["by_family"]["fb"]["success_rate_infra_as_failure"] == pytest.approx(2 / 3)
    assert summary["by_family"]["fa"]["success_rate_infra_as_failure"] == summary["by_family"]["fa"]["success_rate"]
    assert (o["flagged"], summary["by_family"]["fa"]["flagged"], summary["by_family"]["fb"]["flagged"]) == (1, 1, 0)
    assert summary["by_task"]["fa/a"]["flagged"] == 1
    assert summary["integrity_flags"] == [
        {"task_id": "fa/a", "trial": 2, "flags": ["conftest: the diff adds a conftest.py"]}
    ]
    assert summary["headline"] == (
        f"Success 4/8 scored episodes (50.0%); 44.4% with infra counted as failure. 1 episode unresolved "
        f"(infra errors, not scored): replay it with `agentenvs run --resume --retry-infra --out {tmp_path}`. "
        "1 episode flagged for integrity."
    )
    # pass@1 per task: 2/3, 0, 1 -> 5/9. pass@2: a 1, b 0, c 1 -> 2/3. pass@3: only a and b have 3 -> (1+0)/2.
    assert o["pass_at_k"] == pytest.approx({"1": 5 / 9, "2": 2 / 3, "3": 0.5})
    # pass^2: a C(2,2)/C(3,2)=1/3, b 0, c 1 -> 4/9. pass^3: a 0, b 0 -> 0.
    assert o["pass_hat_k"] == pytest.approx({"1": 5 / 9, "2": 4 / 9, "3": 0.0})
    assert o["steps_mean"] == pytest.approx((2 + 6 + 4 + 4 * 5) / 8)
    assert o["tokens_total"] == 800
    assert summary["by_family"]["fb"]["success_rate"] == 1.0
    assert summary["by_family"]["fa"]["successes"] == 2
    assert summary["by_difficulty"]["hard"]["success_rate"] == 0.0
    assert summary["by_tag"]["x"]["scored"] == 6 and summary["by_tag"]["y"]["scored"] == 3
    assert "fb/c" not in {t for t, g in summary["by_tag"].items()}
    assert summary["infra_errors"] == [{"task_id": "fb/c", "trial": 2, "attempts": 3, "error": "sandbox died"}]
    assert summary["complete"] is True and summary["planned"] == 9
    json.dumps(summary)  # serializable as summary.json


def test_partial_trailing_line_is_ignored_and_repaired(tmp_path):
    run = write_run(tmp_path, [{"id": "fa/a", "family": "fa"}], [episode("fa/a", 0, True)])
    with open(run.episodes_jsonl, "ab") as fh:
        fh.write(b'{"task_id": "fa/a", "trial": 1, "status": "sco')
    assert [e["trial"] for e in run.read_episodes()] == [0]
    assert run.repair() > 0
    run.append_episode(episode("fa/a", 1, False))
    assert [e["trial"] for e in run.read_episodes()] == [0, 1]
    assert summarize(run)["overall"]["scored"] == 2


def test_corrupt_middle_line_is_reported(tmp_path):
    run = write_run(tmp_path, [{"id": "fa/a", "family": "fa"}], [episode("fa/a", 0, True)])
    with open(run.episodes_jsonl, "ab") as fh:
        fh.write(b"garbage\n")
    run.append_episode(episode("fa/a", 1, True))
    with pytest.raises(ValueError, match="corrupt"):
        run.read_episodes()
