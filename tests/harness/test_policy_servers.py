"""End to end: real policy servers on 127.0.0.1, driven through the real clients, scored against known values.

The scripted policy solves reach-1 and reach-2 and stops short on reach-3
(see servers.py), so with 2 trials: 4 of 6 episodes succeed, pass@1 = pass@2
= 2/3, 8 steps per trial, 15 tokens per step.
"""

from __future__ import annotations

import asyncio
import email.utils
import json

import pytest
from conftest import ALL_TOY, run_config
from servers import Faults, act_app, chat_app, serve

from agentenvs.harness.policies.retry import retry_after
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.scoring import summarize

FAST_RETRY = {"max_retries": 2, "retry_base_delay": 0.01, "retry_max_delay": 0.05}


def run(tmp_path, policy: str, options: dict, **kwargs) -> dict:
    config = run_config(ALL_TOY, policy, options=options, **kwargs)
    out = tmp_path / "run"
    asyncio.run(Runner(config, str(out)).run())
    return summarize(RunDir(out))


def policy_options(kind: str, url: str, **extra) -> dict:
    if kind == "openai":
        return {"model": "scripted", "base_url": f"{url}/v1", "request_timeout_sec": 2.0, **FAST_RETRY, **extra}
    return {"url": url, "request_timeout_sec": 2.0, **FAST_RETRY, **extra}


def app_for(kind: str, faults: Faults):
    return chat_app(faults) if kind == "openai" else act_app(faults)


@pytest.mark.parametrize("kind", ["openai", "http"])
def test_scripted_server_scores_known_values(tmp_path, kind):
    faults = Faults()
    app = app_for(kind, faults)
    with serve(app) as url:
        summary = run(tmp_path, kind, policy_options(kind, url), trials=2)
    overall = summary["overall"]
    assert (overall["scored"], overall["successes"], overall["infra"]) == (6, 4, 0)
    assert overall["success_rate"] == pytest.approx(4 / 6)
    assert overall["pass_at_k"] == pytest.approx({"1": 2 / 3, "2": 2 / 3})
    assert overall["pass_hat_k"] == pytest.approx({"1": 2 / 3, "2": 2 / 3})
    assert overall["steps_mean"] == pytest.approx(8 / 3)
    assert overall["tokens_total"] == 15 * 8 * 2
    assert summary["by_task"]["toy/reach-3"]["successes"] == 0
    assert summary["by_difficulty"]["easy"]["success_rate"] == 1.0
    if kind == "openai":
        first = app.state.requests[0]
        assert {t["function"]["name"] for t in first["tools"]} == {"add", "done", "fail", "submit"}
        parts = first["messages"][1]["content"]
        assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
        assert any(m["role"] == "tool" for r in app.state.requests for m in r["messages"])
    else:
        assert len(app.state.resets) == 6
        screenshot = app.state.acts[0]["observation"]["screenshot"]
        assert screenshot["type"] == "image/png" and screenshot["data"]


@pytest.mark.parametrize("kind", ["openai", "http"])
def test_transient_500s_are_retried_and_scores_unchanged(tmp_path, kind):
    faults = Faults()
    faults.fail_first = 2
    with serve(app_for(kind, faults)) as url:
        summary = run(tmp_path, kind, policy_options(kind, url), concurrency=1)
    assert (summary["overall"]["successes"], summary["overall"]["infra"]) == (2, 0)
    episodes = RunDir(tmp_path / "run").read_episodes()
    assert sum(e["policy_retries"] for e in episodes) == 2


@pytest.mark.parametrize("kind", ["openai", "http"])
@pytest.mark.parametrize(
    ("status", "headers"),
    [(408, {}), (409, {}), (400, {"x-should-retry": "true"})],
    ids=["request-timeout", "conflict", "400-said-retry"],
)
def test_what_openais_client_retries_is_retried_and_scores_unchanged(tmp_path, kind, status, headers):
    faults = Faults()
    faults.fail_first, faults.fail_status, faults.fail_headers = 1, status, headers
    with serve(app_for(kind, faults)) as url:
        summary = run(tmp_path, kind, policy_options(kind, url), concurrency=1)
    assert (summary["overall"]["scored"], summary["overall"]["successes"], summary["overall"]["infra"]) == (3, 2, 0)
    assert sum(e["policy_retries"] for e in RunDir(tmp_path / "run").read_episodes()) == 1


@pytest.mark.parametrize("kind", ["openai", "http"])
def test_a_5xx_the_server_says_not_to_retry_is_infra_at_once(tmp_path, kind):
    faults = Faults()
    faults.fail_first, faults.fail_status, faults.fail_headers = 1, 503, {"x-should-retry": "false"}
    with serve(app_for(kind, faults)) as url:
        summary = run(tmp_path, kind, policy_options(kind, url), concurrency=1, max_infra_retries=0)
    assert (summary["overall"]["scored"], summary["overall"]["infra"]) == (2, 1)
    (error,) = summary["infra_errors"]
    # retried, the next request would have been answered and the episode scored
    assert "503" in error["error"] and "said not to retry" in error["error"], error


@pytest.mark.parametrize("kind", ["openai", "http"])
def test_429_with_retry_after_ms_waits_as_told(tmp_path, kind):
    # OpenAI and Azure send retry-after-ms; the backoff alone would wait 0.01 s here
    faults = Faults()
    faults.fail_first, faults.fail_status, faults.fail_headers = 1, 429, {"retry-after-ms": "400"}
    with serve(app_for(kind, faults)) as url:
        summary = run(tmp_path, kind, policy_options(kind, url, retry_max_delay=5.0), concurrency=1)
    assert (summary["overall"]["successes"], summary["overall"]["infra"]) == (2, 0)
    assert faults.times[1] - faults.times[0] >= 0.4


def test_a_servers_wait_hint_is_read_in_each_form_it_comes_in():
    now = 1_700_000_000.0
    date_in_7s = email.utils.formatdate(now + 7, usegmt=True)
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}, now) == 0.25
    assert retry_after({"retry-after": "1.5"}, now) == 1.5
    assert retry_after({"retry-after": date_in_7s}, now) == pytest.approx(7.0)
    assert retry_after({"retry-after": email.utils.formatdate(now - 60, usegmt=True)}, now) == 0.0
    for unreadable in ("nan", "inf", "-3", "soon", "Mon, 99 Foo 2024", ""):
        assert retry_after({"retry-after": unreadable}, now) is None, unreadable
    assert retry_after({"retry-after-ms": "nan", "retry-after": "2"}, now) == 2.0
    assert retry_after({}, now) is None


@pytest.mark.parametrize("kind", ["openai", "http"])
def test_persistent_500s_are_retried_then_infra_never_scored(tmp_path, kind):
    faults = Faults()
    faults.always = "500"
    with serve(app_for(kind, faults)) as url:
        summary = run(tmp_path, kind, policy_options(kind, url), max_infra_retries=1)
    assert summary["overall"]["scored"] == 0
    assert summary["overall"]["success_rate"] is None
    assert summary["overall"]["success_rate_infra_as_failure"] == 0.0
    assert summary["overall"]["infra"] == 3
    assert len(summary["infra_errors"]) == 3
    assert all(e["attempts"] == 2 for e in summary["infra_errors"])
    assert all("500" in e["error"] for e in summary["infra_errors"]), summary["infra_errors"]
    # Each attempt made 1 + max_retries requests before giving up.
    assert faults.requests == 3 * 2 * (1 + FAST_RETRY["max_retries"])
    assert "3 episodes unresolved" in summary["headline"] and "--retry-infra" in summary["headline"]


@pytest.mark.parametrize("kind", ["openai", "http"])
@pytest.mark.parametrize("fault", ["garbage", "error-object", "deep", "huge", "gzip-bomb"])
def test_replies_without_a_usable_action_are_the_agents_spent_steps(tmp_path, kind, fault):
    """Garbage, an error object, a body nested 100,000 deep, 5 MiB, or a gzip bomb: a wasted step each, never infra."""
    faults = Faults()
    faults.always = fault
    app = app_for(kind, faults)
    with serve(app) as url:
        summary = run(tmp_path, kind, policy_options(kind, url), max_infra_retries=3)
    overall = summary["overall"]
    assert (overall["scored"], overall["successes"], overall["infra"]) == (3, 0, 0)
    assert faults.requests == 3 * 8  # one request per step, no retries: the toy's budget is 8 steps
    run_dir = RunDir(tmp_path / "run")
    for episode in run_dir.read_episodes():
        assert episode["status"] == "scored" and episode["score"] == 0.0 and episode["attempts"] == 1
        assert (episode["steps"], episode["action_errors"], episode["error"]) == (8, 8, "step budget spent")
        steps = run_dir.read_steps(episode["task_id"], 0)
        assert all(s["action"] == "" and s["policy"]["note"].startswith("malformed reply") for s in steps[1:])
    note = run_dir.read_steps("toy/reach-1", 0)[1]["policy"]["note"]
    expected = {
        "garbage": "garbage" if kind == "openai" else "non-JSON",
        "error-object": "an error instead of " + ("a completion: " if kind == "openai" else "an action: "),
        "deep": "nests deeper than",
        "huge": "larger than 4194304 bytes",
        "gzip-bomb": "compressed (gzip)",
    }[fault]
    assert expected in note, note
    assert all(h.get("accept-encoding") == "identity" for h in app.state.headers)


def test_an_action_too_deep_to_send_is_replaced_by_no_action(tmp_path):
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    app = FastAPI()

    @app.post("/reset")
    async def reset() -> dict:
        return {}

    @app.post("/act")
    async def act() -> JSONResponse:
        deep: object = 1
        for _ in range(70):  # within the reply's bound, beyond an action's
            deep = {"n": deep}
        return JSONResponse({"action": {"name": "add", "arguments": deep}})

    with serve(app) as url:
        summary = run(tmp_path, "http", policy_options("http", url))
    assert (summary["overall"]["scored"], summary["overall"]["infra"]) == (3, 0)
    step = RunDir(tmp_path / "run").read_steps("toy/reach-2", 0)[1]
    assert step["action"] == "" and "not sent: the action nests deeper than 64 levels" in step["policy"]["note"]
    refused = step["refused_action"]  # a bounded account of it, never the whole
    assert refused["type"] == "dict" and "chars" not in refused
    assert refused["prefix"] == "{'arguments': {'n': {'n': {'n': {'n': {'n': {...}}}}}}, 'name': 'add'}"
    assert "empty action" in step["info"]["action_error"]


@pytest.mark.parametrize("kind", ["openai", "http"])
def test_unknown_tool_is_the_agents_error(tmp_path, kind):
    faults = Faults()
    faults.unknown_tool_first_step = True
    with serve(app_for(kind, faults)) as url:
        summary = run(tmp_path, kind, policy_options(kind, url))
    overall = summary["overall"]
    assert (overall["scored"], overall["successes"], overall["infra"]) == (3, 2, 0)
    assert overall["steps_mean"] == pytest.approx(8 / 3 + 1)
    for episode in RunDir(tmp_path / "run").read_episodes():
        assert episode["action_errors"] == 1
        steps = RunDir(tmp_path / "run").read_steps(episode["task_id"], 0)
        assert "unknown tool 'teleport'" in steps[1]["info"]["action_error"]


def test_tool_arguments_that_are_not_json_are_the_agents_error(tmp_path):
    faults = Faults()
    faults.bad_arguments_first_step = True
    with serve(chat_app(faults)) as url:
        summary = run(tmp_path, "openai", policy_options("openai", url))
    overall = summary["overall"]
    assert (overall["scored"], overall["successes"], overall["infra"]) == (3, 2, 0)
    step = RunDir(tmp_path / "run").read_steps("toy/reach-1", 0)[1]
    assert step["action"] == {"name": "add", "arguments": '{"n": 1'}
    assert "arguments are not valid JSON" in step["info"]["action_error"]


@pytest.mark.parametrize("kind", ["openai", "http"])
def test_hung_server_times_out_and_is_retried(tmp_path, kind):
    faults = Faults()
    faults.hang_first = 1
    faults.hang_sec = 3.0
    with serve(app_for(kind, faults)) as url:
        summary = run(tmp_path, kind, policy_options(kind, url, request_timeout_sec=0.3), concurrency=1)
    assert (summary["overall"]["successes"], summary["overall"]["infra"]) == (2, 0)


def test_hung_server_past_the_step_deadline_is_an_infra_error(tmp_path):
    faults = Faults()
    faults.always = "hang"
    faults.hang_sec = 3.0
    with serve(act_app(faults)) as url:
        summary = run(
            tmp_path, "http", policy_options("http", url, request_timeout_sec=5.0),
            policy_timeout_sec=0.3, max_infra_retries=0,
        )  # fmt: skip
    assert summary["overall"]["infra"] == 3
    assert all("did not answer" in e["error"] for e in summary["infra_errors"])


def test_unreachable_server_is_an_infra_error(tmp_path):
    summary = run(tmp_path, "http", {"url": "http://127.0.0.1:9", **FAST_RETRY}, max_infra_retries=0)
    assert summary["overall"]["infra"] == 3 and summary["overall"]["scored"] == 0
    assert "cannot reach" in summary["infra_errors"][0]["error"]


@pytest.mark.parametrize("kind", ["openai", "http"])
def test_a_4xx_ends_the_episode_as_the_agents_failure(tmp_path, kind):
    faults = Faults()
    faults.always = "400"
    app = app_for(kind, faults)
    with serve(app) as url:
        summary = run(tmp_path, kind, policy_options(kind, url), max_infra_retries=3)
    assert faults.requests == 3  # one request per episode: no request retries, no episode retries
    overall = summary["overall"]
    assert (overall["scored"], overall["successes"], overall["infra"]) == (3, 0, 0)
    assert summary["infra_errors"] == []
    for episode in RunDir(tmp_path / "run").read_episodes():
        assert episode["status"] == "scored" and episode["score"] == 0.0 and episode["success"] is False
        assert episode["error_kind"] == "agent" and episode["attempts"] == 1 and episode["steps"] == 0
        assert "refused at step 1" in episode["error"] and "400" in episode["error"]
        assert "context length exceeded" in episode["error"]


def test_openai_401_names_itself_and_no_key_is_recorded(tmp_path):
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    app = FastAPI()
    calls = []

    @app.post("/v1/chat/completions")
    async def refuse() -> JSONResponse:
        calls.append(1)
        return JSONResponse({"error": {"message": "bad key"}}, status_code=401)

    with serve(app) as url:
        run(tmp_path, "openai", policy_options("openai", url), max_infra_retries=3)
    assert len(calls) == 3
    episodes = RunDir(tmp_path / "run").read_episodes()
    assert all("401" in e["error"] and "bad key" in e["error"] and e["error_kind"] == "agent" for e in episodes)
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_json["policy"]["model"] == "scripted" and "api_key" not in json.dumps(run_json["policy"]).replace(
        "api_key_", ""
    )


def test_http_reset_refused_is_the_agents_failure(tmp_path):
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    app = FastAPI()

    @app.post("/reset")
    async def reset() -> JSONResponse:
        return JSONResponse({"detail": "unknown task family"}, status_code=422)

    with serve(app) as url:
        summary = run(tmp_path, "http", policy_options("http", url))
    assert (summary["overall"]["scored"], summary["overall"]["infra"]) == (3, 0)
    (episode, *_) = RunDir(tmp_path / "run").read_episodes()
    assert (
        "refused at reset" in episode["error"]
        and "422" in episode["error"]
        and "unknown task family" in episode["error"]
    )


def test_openai_plain_text_replies_are_the_familys_plain_text_actions(tmp_path):
    """The system prompt says a reply without a tool call is the action as plain text: the parser agrees."""
    faults = Faults()
    faults.plain_text = True
    app = chat_app(faults)
    with serve(app) as url:
        summary = run(tmp_path, "openai", policy_options("openai", url))
    assert (summary["overall"]["scored"], summary["overall"]["successes"]) == (3, 2)
    system = app.state.requests[0]["messages"][0]["content"]
    assert "without a tool call is itself taken as the action, as plain text" in system
    step = RunDir(tmp_path / "run").read_steps("toy/reach-2", 0)[1]
    assert (
        step["action"] == "add 1" and step["policy"]["note"] == "the model answered in plain text: taken as the action"
    )
    assert not step["info"]["action_error"] and step["info"]["checks"]["half"]
