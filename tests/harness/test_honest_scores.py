"""Honest scores: the agent's own faults are scored, infra is replayed, flags are recorded, tests stay hidden."""

from __future__ import annotations

import asyncio
import json

import harness_toy
from conftest import ALL_TOY, run_config
from servers import Faults, act_app, chat_app, serve
from test_runner import KillingOracle

from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.scoring import summarize

FAST = {"max_retries": 0, "retry_base_delay": 0.01, "request_timeout_sec": 5.0}


def test_an_action_that_makes_the_verifier_raise_is_the_agents_failure_not_infra(tmp_path):
    root = tmp_path / "tasks"
    harness_toy.write_dir_task(root, 1, ['"mkdir result.txt"', '"add 1"'])  # a directory where the verifier writes
    harness_toy.write_dir_task(root, 2, ['"add 2"'])
    harness_toy.register_dir(root)
    out = tmp_path / "run"
    asyncio.run(Runner(run_config(["toydir/reach-1", "toydir/reach-2"], "oracle", max_infra_retries=3), str(out)).run())
    episodes = {e["task_id"]: e for e in RunDir(out).read_episodes()}
    broken = episodes["toydir/reach-1"]
    assert broken["status"] == "scored" and broken["success"] is False and broken["score"] == 0.0
    assert broken["error_kind"] == "agent" and broken["error"].startswith("IsADirectoryError: ")
    assert "in _verify" in broken["error"]
    assert broken["attempts"] == 1 and broken["infra_errors"] == []
    last = RunDir(out).read_steps("toydir/reach-1", 0)[-1]
    assert (
        last["terminated"]
        and last["info"]["error_kind"] == "agent"
        and "IsADirectoryError" in last["observation"]["text"]
    )
    assert episodes["toydir/reach-2"]["success"] is True
    overall = summarize(RunDir(out))["overall"]
    assert (overall["scored"], overall["successes"], overall["infra"]) == (2, 1, 0)


def test_integrity_flags_are_recorded_counted_and_listed(tmp_path):
    root = tmp_path / "tasks"
    harness_toy.write_dir_task(root, 1, ['"touch result.txt"', '"add 1"'])  # pre-creates the verifier's output
    harness_toy.write_dir_task(root, 2, ['"add 2"'])
    harness_toy.register_dir(root)
    out = tmp_path / "run"
    asyncio.run(Runner(run_config(["toydir/reach-1", "toydir/reach-2"], "oracle"), str(out)).run())
    episodes = {e["task_id"]: e for e in RunDir(out).read_episodes()}
    flag = "result-precreated: result.txt existed before the verifier wrote it"
    assert episodes["toydir/reach-1"]["integrity_flags"] == [flag]
    assert episodes["toydir/reach-1"]["success"] is True  # the score stands; the flag marks it
    assert episodes["toydir/reach-2"]["integrity_flags"] == []
    assert RunDir(out).read_steps("toydir/reach-1", 0)[-1]["info"]["integrity_flags"] == [flag]
    summary = summarize(RunDir(out))
    assert summary["overall"]["flagged"] == 1 and summary["by_task"]["toydir/reach-1"]["flagged"] == 1
    assert summary["by_task"]["toydir/reach-2"]["flagged"] == 0
    assert summary["integrity_flags"] == [{"task_id": "toydir/reach-1", "trial": 0, "flags": [flag]}]
    assert "1 episode flagged for integrity" in summary["headline"]


def test_retry_infra_replays_only_the_infra_episodes(tmp_path, monkeypatch):
    monkeypatch.setenv("TOY_PID_DIR", str(tmp_path))
    out = tmp_path / "run"
    config = run_config(ALL_TOY, "oracle", trials=2, concurrency=1, max_infra_retries=0)
    asyncio.run(
        Runner(config, str(out), policy=KillingOracle(tmp_path, kills=4)).run()
    )  # reach-1 ends before it notices
    first = RunDir(out).read_episodes()
    infra = [(e["task_id"], e["trial"]) for e in first if e["status"] == "infra"]
    assert len(infra) == 2 and len(first) == 6
    summary = summarize(RunDir(out))["overall"]
    assert summary["success_rate"] == 1.0 and summary["success_rate_infra_as_failure"] == 4 / 6
    assert summary["mean_score_infra_as_failure"] == 4 / 6
    scored_lines = [
        line for line in (out / "episodes.jsonl").read_bytes().splitlines() if json.loads(line)["status"] != "infra"
    ]

    # A plain resume leaves infra episodes alone: they were played.
    assert asyncio.run(Runner(config, str(out), resume=True).run()).played_now == 0
    outcome = asyncio.run(Runner(config, str(out), resume=True, retry_infra=True).run())
    assert (outcome.retried_infra, outcome.played_now, outcome.finished) == (2, 2, 6)
    after = RunDir(out).read_episodes()
    assert sorted((e["task_id"], e["trial"]) for e in after) == sorted((t, k) for t in ALL_TOY for k in (0, 1))
    assert all(e["status"] == "scored" and e["success"] for e in after)
    assert (out / "episodes.jsonl").read_bytes().splitlines()[:4] == scored_lines  # kept once, byte for byte
    superseded = [json.loads(line) for line in (out / "superseded.jsonl").read_text().splitlines()]
    assert sorted((e["task_id"], e["trial"]) for e in superseded) == sorted(infra)
    assert all(e["status"] == "infra" for e in superseded)
    summary = summarize(RunDir(out))
    assert summary["overall"]["success_rate_infra_as_failure"] == 1.0 and "unresolved" not in summary["headline"]


def _feedback_keys(body: dict) -> set[str]:
    return {"reward", "checks", "progress"} & set(body)


def test_the_policy_never_sees_rewards_checks_or_progress_unless_asked(tmp_path):
    checkpoint_names = ("half", "reached")  # the toy's checks: a policy must not learn they exist
    http, chat = act_app(Faults()), chat_app(Faults())
    with serve(http) as http_url, serve(chat) as chat_url:
        asyncio.run(Runner(run_config(ALL_TOY, "http", options={"url": http_url, **FAST}), str(tmp_path / "a")).run())
        options = {"model": "scripted", "base_url": f"{chat_url}/v1", **FAST}
        asyncio.run(Runner(run_config(ALL_TOY, "openai", options=options), str(tmp_path / "b")).run())
    assert len(http.state.acts) == 8 and len(chat.state.requests) == 8
    assert all(_feedback_keys(body) == set() for body in http.state.acts)
    sent = json.dumps([http.state.resets, http.state.acts, chat.state.requests])
    assert not any(f'"{name}"' in sent for name in checkpoint_names)
    assert "progress" not in sent and "reward" not in sent
    assert summarize(RunDir(tmp_path / "a"))["overall"]["successes"] == 2  # the policy played all the same

    trained = act_app(Faults())
    with serve(trained) as url:
        config = run_config(["toy/reach-2"], "http", options={"url": url, **FAST}, policy_feedback=True)
        asyncio.run(Runner(config, str(tmp_path / "c")).run())
    assert [_feedback_keys(body) for body in trained.state.acts] == [{"reward", "checks", "progress"}] * 3
    first, second = trained.state.acts[:2]
    assert first["checks"] == {"half": False, "reached": False} and first["progress"] == 0.0
    assert second["checks"] == {"half": True, "reached": False} and second["progress"] == 0.5
    assert second["reward"] == 0.0  # sparse rewards: nothing until the end
    assert json.loads((tmp_path / "c" / "run.json").read_text())["config"]["policy_feedback"] is True
