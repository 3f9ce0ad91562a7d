"""`agentenvs export-rl`: a run's episodes as training records, in JSON lines and Parquet, read back and checked
against the run directory and against what the test chat server sent (servers.py, tokens.py).
"""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest
from servers import Faults, chat_app, serve
from test_token_ids import STEPS, TASKS, invoke, run_openai
from typer.testing import CliRunner

from agentenvs.cli import app as agentenvs_app
from agentenvs.harness.export_rl import group_id
from agentenvs.harness.rundir import RunDir
from tests.harness.tokens import render


@pytest.fixture(scope="module")
def vllm_run(tmp_path_factory):
    """Two toy tasks, two trials of one seed, through a vLLM-shaped server, token ids and messages recorded."""
    faults = Faults()
    faults.tokens = "vllm"
    app = chat_app(faults)
    with serve(app) as url:
        run = run_openai(tmp_path_factory.mktemp("export") / "run", url, "--return-token-ids")
    return run, app


def export(run_dir, *args: str):
    result = invoke("export-rl", str(run_dir), *args)
    assert result.exit_code == 0, result.output
    return result


def read_jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_episode_records_in_jsonl(vllm_run, tmp_path):
    run, app = vllm_run
    path = tmp_path / "rl.jsonl"
    result = export(run.path, "--out", str(path))
    assert f"wrote 4 episode records to {path}" in result.output
    records = read_jsonl(path)
    assert [(r["task_id"], r["trial"], r["seed"]) for r in records] == [(t, k, 0) for t in TASKS for k in (0, 1)]
    groups = {t: {r["group_id"] for r in records if r["task_id"] == t} for t in TASKS}
    assert groups == {t: {group_id(t, 0)} for t in TASKS}  # the trials of one task and seed share one group
    assert group_id(TASKS[0], 0) != group_id(TASKS[1], 0) and group_id(TASKS[0], 0) != group_id(TASKS[0], 1)
    for record in records:
        steps = record["steps"]
        assert record["num_steps"] == len(steps) == STEPS[record["task_id"]]
        assert sum(s["reward"] for s in steps) == record["return"] == record["score"] == 1.0
        assert (record["success"], record["error_kind"], record["status"]) == (True, None, "scored")
        assert (record["policy"], record["model"], record["family"]) == ("openai", "scripted", "toy")
        assert record["token_faithful"] is True and record["context_trimmed"] is False
        # Each prompt extends the previous prompt and completion, until an older turn loses its image (reach-2's
        # third request shows its first screenshot as "[image omitted]"): then it is no longer one sequence.
        extends = [s["extends_previous"] for s in steps]
        assert extends == ([None, True] if record["task_id"] == "toy/reach-1" else [None, True, False])
        assert record["one_sequence"] is (record["task_id"] == "toy/reach-1")
        assert record["instruction"].startswith("Make the counter equal")
        assert steps[-1]["checks"] == {"half": True, "reached": True} and steps[-1]["progress"] == 1.0
        trajectory = run.read_steps(record["task_id"], record["trial"])[1:]
        for step, line in zip(steps, trajectory):
            sent = app.state.sampled[line["policy"]["sampled"]["tool_calls"][0]["id"]]
            assert step["action"] == line["action"]
            assert step["prompt_token_ids"] == sent["prompt_token_ids"]
            assert step["completion_token_ids"] == sent["completion_token_ids"]
            assert step["logprobs"] == sent["logprobs"] and step["token_mismatch"] is None
        # The messages: the whole chat the model saw at its last call, then what it sampled.
        messages = record["messages"]
        assert messages[0]["role"] == "system" and messages[-1] == trajectory[-1]["policy"]["sampled"]
        assert render(messages[:-1]).encode() == bytes(steps[-1]["prompt_token_ids"])
        assert sum(1 for m in messages if m["role"] == "assistant") == len(steps)
        image = messages[1]["content"][1]["image_url"]["url"]
        assert image == f"trajectories/{record['task_id']}/{record['trial']}/images/step_0000_screenshot.png"
        assert (run.path / image).is_file()


def test_per_step_records_carry_the_exact_request(vllm_run, tmp_path):
    run, _ = vllm_run
    path = tmp_path / "steps.jsonl"
    export(run.path, "--per-step", "--out", str(path))
    rows = read_jsonl(path)
    assert len(rows) == 2 * sum(STEPS.values())
    for row in rows:
        assert render(row["prompt_messages"]).encode() == bytes(row["prompt_token_ids"])
        assert row["completion_message"]["tool_calls"][0]["function"]["name"] == row["action"]["name"]
        assert row["group_id"] == group_id(row["task_id"], 0) and row["score"] == 1.0


def test_parquet_matches_jsonl(vllm_run, tmp_path):
    run, _ = vllm_run
    export(run.path, "--format", "parquet", "--out", str(tmp_path / "rl.parquet"))
    export(run.path, "--out", str(tmp_path / "rl.jsonl"))
    frame = pd.read_parquet(tmp_path / "rl.parquet")
    records = read_jsonl(tmp_path / "rl.jsonl")
    assert list(frame["group_id"]) == [r["group_id"] for r in records]
    assert list(frame["score"]) == [r["score"] for r in records] and list(frame["trial"]) == [0, 1, 0, 1]
    for (_, row), record in zip(frame.iterrows(), records):
        assert json.loads(row["messages"]) == record["messages"]
        assert len(row["steps"]) == len(record["steps"])
        for step, expected in zip(row["steps"], record["steps"]):
            assert list(step["prompt_token_ids"]) == expected["prompt_token_ids"]
            assert list(step["logprobs"]) == expected["logprobs"]
            assert json.loads(step["action"]) == expected["action"] and step["reward"] == expected["reward"]
            assert dict(step["checks"]) == expected["checks"]
    export(run.path, "--format", "parquet", "--per-step")  # the default path, in the run directory
    steps = pd.read_parquet(run.path / "export-rl-steps.parquet")
    assert len(steps) == 2 * sum(STEPS.values())
    assert all(render(json.loads(m)).encode() == bytes(list(ids)) for m, ids in zip(steps["prompt_messages"], steps["prompt_token_ids"]))  # fmt: skip


def test_a_trimmed_context_is_still_rebuilt_exactly(tmp_path):
    faults = Faults()
    faults.tokens = "vllm"
    with serve(chat_app(faults)) as url:
        run = run_openai(tmp_path / "run", url, "--return-token-ids", "--context-tokens", "512", tasks=("toy/reach-2",), trials=1)  # fmt: skip
    export(run.path, "--per-step", "--out", str(tmp_path / "steps.jsonl"))
    rows = read_jsonl(tmp_path / "steps.jsonl")
    assert len(rows) == 3
    assert any("earlier turns omitted" in str(m.get("content")) for r in rows for m in r["prompt_messages"])
    for row in rows:
        assert render(row["prompt_messages"]).encode() == bytes(row["prompt_token_ids"])
    export(run.path, "--out", str(tmp_path / "rl.jsonl"))
    (record,) = read_jsonl(tmp_path / "rl.jsonl")
    assert record["context_trimmed"] is True and record["token_faithful"] is True


@pytest.mark.parametrize("same_seed", [False, True])
def test_group_ids_follow_the_seeds(tmp_path, same_seed):
    out = tmp_path / "oracle"
    flags = ["--same-seed"] if same_seed else []
    result = invoke("run", "--task", "toy/reach-2", "--policy", "oracle", "--trials", "3", "--seed", "5", *flags,
                    "--out", str(out), "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    export(out, "--out", str(tmp_path / "rl.jsonl"))
    records = read_jsonl(tmp_path / "rl.jsonl")
    seeds = [r["seed"] for r in records]
    assert seeds == ([5, 5, 5] if same_seed else [5, 6, 7])
    assert [r["group_id"] for r in records] == [group_id("toy/reach-2", s) for s in seeds]
    assert len({r["group_id"] for r in records}) == (1 if same_seed else 3)
    for record in records:  # an oracle run records no tokens or messages: none are made up
        assert record["messages"] is None and record["token_faithful"] is False
        assert all(s["prompt_token_ids"] is None and s["logprobs"] is None for s in record["steps"])
        assert sum(s["reward"] for s in record["steps"]) == record["score"] == 1.0
        assert record["steps"][0]["observation"] == "counter=1 target=2"


def test_infra_episodes_are_left_out_unless_asked(tmp_path):
    faults = Faults()
    faults.always = "500"
    with serve(chat_app(faults)) as url:
        run = run_openai(tmp_path / "run", url, "--max-infra-retries", "0", tasks=("toy/reach-1",), trials=1, code=1)
    result = export(run.path, "--out", str(tmp_path / "rl.jsonl"))
    assert "wrote 0 episode records" in result.output and "left out 1 infra episode" in result.output
    export(run.path, "--include-infra", "--out", str(tmp_path / "all.jsonl"))
    (record,) = read_jsonl(tmp_path / "all.jsonl")
    assert (record["status"], record["score"], record["error_kind"]) == ("infra", None, "infra")


def test_bad_input_gets_a_clear_error(tmp_path, vllm_run, monkeypatch):
    run, _ = vllm_run
    for bad in (tmp_path / "missing", tmp_path, tmp_path / "file"):
        (tmp_path / "file").write_text("x")
        result = invoke("export-rl", str(bad))
        assert result.exit_code == 2 and "is not a run directory (no run.json)" in result.output, result.output
    result = invoke("export-rl", str(run.path), "--format", "csv")
    assert result.exit_code == 2 and "unknown format 'csv'; choose one of: jsonl, parquet" in result.output
    result = invoke("export-rl", str(run.path), "--out", str(tmp_path))
    assert result.exit_code == 2 and "is a directory" in result.output
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if pyarrow were not installed
    result = invoke("export-rl", str(run.path), "--format", "parquet", "--out", str(tmp_path / "x.parquet"))
    assert result.exit_code == 2 and "needs pyarrow: pip install 'agentenvs[harness]'" in result.output
    assert not (tmp_path / "x.parquet").exists()


def test_the_agentenvs_command_has_export_rl(vllm_run, tmp_path):
    run, _ = vllm_run
    result = CliRunner().invoke(agentenvs_app, ["export-rl", str(run.path), "--out", str(tmp_path / "a.jsonl")])
    assert result.exit_code == 0, result.output
    assert len(read_jsonl(tmp_path / "a.jsonl")) == 4
    assert RunDir(run.path).exists()


def test_a_text_game_run_exports_its_tokens_and_messages(tmp_path):
    """A real family (text games, no images): the scripted server gives up at once, and that is what is recorded."""
    faults = Faults()
    faults.tokens = "sglang"
    app = chat_app(faults)
    tasks = ("textgame/coin-easy-0", "textgame/coin-easy-1")
    with serve(app) as url:
        run = run_openai(tmp_path / "run", url, "--return-token-ids", tasks=tasks)
    export(run.path, "--format", "parquet", "--out", str(tmp_path / "rl.parquet"))
    frame = pd.read_parquet(tmp_path / "rl.parquet")
    assert list(frame["task_id"]) == [t for t in tasks for _ in (0, 1)]
    assert list(frame["group_id"]) == [group_id(t, 0) for t in tasks for _ in (0, 1)]
    for _, row in frame.iterrows():
        (step,) = row["steps"]
        assert json.loads(step["action"]) == {"name": "done", "arguments": "{}"}
        assert step["reward"] == row["score"] == row["return"] and row["success"] == (row["score"] == 1.0)
        messages = json.loads(row["messages"])
        assert [m["role"] for m in messages] == ["system", "user", "assistant"]
        assert render(messages[:-1]).encode() == bytes(list(step["prompt_token_ids"]))
        assert row["instruction"] in messages[1]["content"] and row["token_faithful"]
    assert len(app.state.sampled) == 4
