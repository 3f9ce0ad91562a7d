"""Token-faithful trajectories: `agentenvs run --policy openai --return-token-ids` against a real local chat server
answering in vLLM's and SGLang's shapes (servers.py, tokens.py), through the real `openai` client.

Each step must hold exactly the prompt and completion token ids and logprobs the server sent with that reply
(matched by the reply's tool-call id), nothing when not asked, and a flag when they do not line up.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from servers import Faults, chat_app, serve
from typer.testing import CliRunner

from agentenvs.harness.cli import app as harness_app
from agentenvs.harness.config import RunConfig
from agentenvs.harness.policies.trace import TOKEN_KEYS, sampled_tokens
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import RunDirError, Runner

TASKS = ("toy/reach-1", "toy/reach-2")
#: Steps per trial: reach-1 is add, done; reach-2 is add, add, done.
STEPS = {"toy/reach-1": 2, "toy/reach-2": 3}
cli = CliRunner()


def invoke(*args: str):
    return cli.invoke(harness_app, list(args), catch_exceptions=False, env={"COLUMNS": "200"})


def run_openai(out, url: str, *extra: str, tasks=TASKS, trials: int = 2, code: int = 0):
    picked = [a for t in tasks for a in ("--task", t)]
    result = invoke(
        "run", *picked, "--policy", "openai", "--model", "scripted", "--base-url", f"{url}/v1",
        "--trials", str(trials), "--same-seed", "--out", str(out), "--no-progress", "--max-retries", "1", *extra,
    )  # fmt: skip
    assert result.exit_code == code, result.output
    return RunDir(out)


def policy_steps(run: RunDir, tasks=TASKS, trials: int = 2):
    """Every step after reset, with its task."""
    return [(t, s) for t in tasks for trial in range(trials) for s in run.read_steps(t, trial)[1:]]


def serve_shape(shape: str):
    faults = Faults()
    faults.tokens = shape
    return chat_app(faults)


@pytest.mark.parametrize("shape", ["vllm", "vllm-choice", "vllm-as-ids", "sglang"])
def test_steps_hold_exactly_the_ids_and_logprobs_the_server_sent(tmp_path, shape):
    app = serve_shape(shape)
    with serve(app) as url:
        run = run_openai(tmp_path / "run", url, "--return-token-ids")
    for body in app.state.requests:
        assert body["logprobs"] is True
        assert body["return_token_ids"] is True and body["return_prompt_token_ids"] is True
        assert body["return_meta_info"] is True
    steps = policy_steps(run)
    assert len(steps) == 2 * sum(STEPS.values()) == len(app.state.sampled)
    seen = set()
    for _, step in steps:
        call_id = step["policy"]["sampled"]["tool_calls"][0]["id"]
        sent = app.state.sampled[call_id]
        seen.add(call_id)
        assert step["prompt_token_ids"] == sent["prompt_token_ids"]
        assert step["completion_token_ids"] == sent["completion_token_ids"]
        assert step["logprobs"] == sent["logprobs"]
        assert len(step["logprobs"]) == len(step["completion_token_ids"]) > 0
        assert "token_mismatch" not in step
        assert step["policy"]["sampled"]["role"] == "assistant"
        assert step["policy"]["sampled"]["tool_calls"][0]["function"]["name"] == step["action"]["name"]
    assert seen == set(app.state.sampled)
    episodes = run.read_episodes()
    assert sorted((e["task_id"], e["trial"], e["seed"], e["success"]) for e in episodes) == [
        (t, trial, 0, True) for t in TASKS for trial in (0, 1)
    ]


def test_without_the_option_nothing_extra_is_recorded(tmp_path):
    app = serve_shape("always")  # the server sends vLLM's token fields even unasked
    with serve(app) as url:
        run = run_openai(tmp_path / "run", url)
    assert app.state.sampled, "the server should have sent token fields"
    for body in app.state.requests:
        assert not {"logprobs", "return_token_ids", "return_prompt_token_ids", "return_meta_info"} & body.keys()
    steps = policy_steps(run)
    assert len(steps) == 2 * sum(STEPS.values())
    for _, step in steps:
        assert not set(TOKEN_KEYS) & step.keys()
        assert not {"request", "sampled"} & step["policy"].keys()
        assert step["policy"]["usage"]["total_tokens"] == 15
    assert RunDir(run.path).read_run()["policy"]["return_token_ids"] is False


def test_mismatched_lengths_are_recorded_and_flagged(tmp_path):
    app = serve_shape("short-logprobs")
    with serve(app) as url:
        run = run_openai(tmp_path / "run", url, "--return-token-ids", tasks=("toy/reach-2",), trials=1)
    steps = policy_steps(run, tasks=("toy/reach-2",), trials=1)
    assert len(steps) == 3
    for _, step in steps:
        sent = app.state.sampled[step["policy"]["sampled"]["tool_calls"][0]["id"]]
        n = len(sent["completion_token_ids"])
        assert step["completion_token_ids"] == sent["completion_token_ids"]
        assert step["logprobs"] == sent["logprobs"] and len(step["logprobs"]) == n - 1
        assert step["token_mismatch"] == f"{n} completion token ids but {n - 1} logprobs"
    assert run.read_episodes()[0]["success"] is True


def test_ids_that_are_not_ids_are_left_out_and_flagged(tmp_path):
    app = serve_shape("garbage")
    with serve(app) as url:
        run = run_openai(tmp_path / "run", url, "--return-token-ids", tasks=("toy/reach-1",), trials=1)
    steps = policy_steps(run, tasks=("toy/reach-1",), trials=1)
    assert len(steps) == 2
    for _, step in steps:
        assert "prompt_token_ids" not in step and "completion_token_ids" not in step
        assert len(step["logprobs"]) > 0
        assert step["token_mismatch"] == (
            "prompt_token_ids is not a list of numbers; completion_token_ids is not a list of numbers"
        )
    assert run.read_episodes()[0]["success"] is True


def test_a_server_without_token_ids_gets_nothing_recorded_and_no_crash(tmp_path):
    app = serve_shape("")  # a plain OpenAI-compatible server: ignores the request's extra fields
    with serve(app) as url:
        run = run_openai(tmp_path / "run", url, "--return-token-ids", tasks=("toy/reach-1",), trials=1)
    assert app.state.requests[0]["return_token_ids"] is True
    for _, step in policy_steps(run, tasks=("toy/reach-1",), trials=1):
        assert not set(TOKEN_KEYS) & step.keys()
        assert step["policy"]["sampled"]["tool_calls"]  # the messages are still recorded
    assert run.read_episodes()[0]["success"] is True


def test_the_flags_belong_to_the_openai_policy(tmp_path):
    result = invoke("run", "--task", "toy/reach-1", "--policy", "oracle", "--return-token-ids", "--out", str(tmp_path))
    assert result.exit_code == 2 and "--return-token-ids" in result.output and "does not apply" in result.output


def test_other_shapes_read_from_plain_replies():
    """SGLang's dict entries, ids in the logprobs' tokens that disagree, and a reply with nothing: read as is."""
    sglang = SimpleNamespace(
        choices=[
            {
                "prompt_token_ids": [1, 2],
                "meta_info": {
                    "output_token_logprobs": [{"token_id": 5, "logprob": -0.5}, {"token_id": 6, "logprob": -1}]
                },
            }
        ]
    )
    assert sampled_tokens(sglang) == {
        "prompt_token_ids": [1, 2],
        "completion_token_ids": [5, 6],
        "logprobs": [-0.5, -1.0],
    }
    content = [{"token": "token_id:7", "logprob": -0.1}, {"token": "token_id:9", "logprob": -0.2}]
    disagree = SimpleNamespace(prompt_token_ids=[3], choices=[{"token_ids": [7, 8], "logprobs": {"content": content}}])
    assert sampled_tokens(disagree) == {
        "prompt_token_ids": [3],
        "completion_token_ids": [7, 8],
        "logprobs": [-0.1, -0.2],
        "token_mismatch": "the logprobs' token_id:N tokens differ from the completion token ids",
    }
    assert sampled_tokens(SimpleNamespace(choices=[{"message": {"content": "hi"}}])) == {}
    assert sampled_tokens(SimpleNamespace(choices=[])) == {}


def test_resume_keeps_the_same_seed_setting(tmp_path):
    out = tmp_path / "run"
    result = invoke("run", "--task", "toy/reach-1", "--policy", "oracle", "--trials", "2", "--same-seed",
                    "--out", str(out), "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert [e["seed"] for e in RunDir(out).read_episodes()] == [0, 0]
    config = RunConfig.model_validate(RunDir(out).read_run()["config"])
    assert config.same_seed is True
    with pytest.raises(RunDirError, match="other tasks, trials or seeds"):
        asyncio.run(Runner(config.model_copy(update={"same_seed": False}), str(out), resume=True).run())
    assert invoke("run", "--resume", "--out", str(out), "--no-progress").exit_code == 0
