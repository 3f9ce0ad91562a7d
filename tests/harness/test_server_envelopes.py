"""The ``openai`` policy against what real servers other than OpenAI put around a completion: extra fields,
missing usage or choices, an event stream, errors inside a 200, rate limits and context-length refusals."""

from __future__ import annotations

import json

import pytest
from fastapi.responses import JSONResponse, Response
from servers import USAGE
from shape_server import completion, outcome, play, tool_message

from agentenvs.harness.policies.chat_reply import context_overflow

# -- the envelope -------------------------------------------------------------------------------------


def test_vllm_and_router_extras_are_harmless_and_the_served_model_is_noted(tmp_path):
    """Fields OpenAI does not send: token ids unasked, ``logprobs: null``, usage details (some null), a
    ``provider``, ``kv_transfer_params``; and a model name other than the one asked (a router's fallback)."""

    def shape(call, n, body, turns):
        reply = completion(
            tool_message(call, call_id=f"call_{n}"),
            prompt_token_ids=[1, 2, 3],
            kv_transfer_params=None,
            provider="Together",
            system_fingerprint=None,
            service_tier=None,
        )
        reply["model"] = "qwen3-8b-fallback"
        reply["choices"][0].update({"logprobs": None, "token_ids": [4, 5], "stop_reason": None})
        reply["usage"] = {
            **USAGE,
            "prompt_tokens_details": {"cached_tokens": 8, "audio_tokens": None},
            "completion_tokens_details": None,
        }
        return reply

    summary, run, app = play(tmp_path, shape)
    assert outcome(summary) == (3, 2, 0)
    assert summary["overall"]["tokens_total"] == 15 * 8
    step = run.read_steps("toy/reach-1", 0)[1]
    assert step["policy"]["usage"] == USAGE
    assert "prompt_token_ids" not in step  # not asked for: not recorded
    assert "'qwen3-8b-fallback' (asked for 'scripted')" in (step["policy"]["note"] or ""), step["policy"]
    assert run.read_steps("toy/reach-1", 0)[2]["policy"]["note"] is None  # said once, not on every step


def test_missing_usage_counts_no_tokens(tmp_path):
    def shape(call, n, body, turns):
        reply = completion(tool_message(call, call_id=f"call_{n}"))
        del reply["usage"]
        return reply

    summary, run, _ = play(tmp_path, shape)
    assert outcome(summary) == (3, 2, 0)
    assert not summary["overall"]["tokens_total"]


@pytest.mark.parametrize("choices", [[], None], ids=["empty", "null"])
def test_no_choices_is_a_spent_step_that_says_so(tmp_path, choices):
    def shape(call, n, body, turns):
        return {**completion({}), "choices": choices}

    summary, run, _ = play(tmp_path, shape)
    assert outcome(summary) == (3, 0, 0)
    note = run.read_steps("toy/reach-1", 0)[1]["policy"]["note"]
    assert note.startswith("malformed reply: ") and "no choices" in note, note


def test_an_event_stream_nobody_asked_for_is_a_spent_step(tmp_path):
    def shape(call, n, body, turns):
        chunk = {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
        data = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
        return Response(content=data, media_type="text/event-stream")

    summary, run, _ = play(tmp_path, shape)
    assert outcome(summary) == (3, 0, 0)
    note = run.read_steps("toy/reach-1", 0)[1]["policy"]["note"]
    assert note.startswith("malformed reply: "), note


# -- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [429, 502, "503"])
def test_a_provider_failure_inside_a_200_is_retried(tmp_path, code):
    """OpenRouter commits its 200 before the provider answers; a provider's 429 or 5xx then arrives as an
    ``error`` object in the body. It is the server's transient failure, as the status would have been."""

    def shape(call, n, body, turns):
        if n <= 2:
            return {"error": {"message": "Provider returned error", "code": code}, "user_id": "u1"}
        return completion(tool_message(call, call_id=f"call_{n}"))

    summary, run, _ = play(tmp_path, shape, concurrency=1)
    assert outcome(summary) == (3, 2, 0)
    assert sum(e["policy_retries"] for e in run.read_episodes()) == 2


def test_a_provider_failure_inside_a_200_that_persists_is_infra(tmp_path):
    def shape(call, n, body, turns):
        return {"error": {"message": "Provider returned error", "code": 502}}

    summary, run, _ = play(tmp_path, shape, max_infra_retries=0)
    assert outcome(summary) == (0, 0, 3)
    assert all("502" in e["error"] and "Provider returned error" in e["error"] for e in summary["infra_errors"])


@pytest.mark.parametrize("code", [400, None])
def test_another_error_inside_a_200_is_a_spent_step_quoting_it(tmp_path, code):
    def shape(call, n, body, turns):
        return {"error": {"message": "the model refused the prompt", "code": code}}

    summary, run, _ = play(tmp_path, shape)
    assert outcome(summary) == (3, 0, 0)
    note = run.read_steps("toy/reach-1", 0)[1]["policy"]["note"]
    assert "the model refused the prompt" in note, note


def test_429_with_retry_after_waits_as_told(tmp_path):
    def shape(call, n, body, turns):
        if n == 1:
            error = {"message": "Rate limit reached", "type": "rate_limit_error"}
            return JSONResponse({"error": error}, status_code=429, headers={"Retry-After": "0.4"})
        return completion(tool_message(call, call_id=f"call_{n}"))

    summary, run, app = play(tmp_path, shape, concurrency=1, policy={"retry_max_delay": 5.0})
    assert outcome(summary) == (3, 2, 0)
    assert app.state.times[1] - app.state.times[0] >= 0.4
    assert sum(e["policy_retries"] for e in run.read_episodes()) == 1


def test_vllm_context_length_400_ends_the_episode_as_the_agents_failure_quoting_it(tmp_path):
    message = (
        "This model's maximum context length is 4096 tokens. However, you requested 4612 tokens "
        "(4100 in the messages, 512 in the completion). Please reduce the length of the messages or completion."
    )

    def shape(call, n, body, turns):
        if turns >= 1:
            error = {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}
            return JSONResponse(error, status_code=400)
        return completion(tool_message(call, call_id=f"call_{n}"))

    summary, run, _ = play(tmp_path, shape, max_infra_retries=2)
    assert outcome(summary) == (3, 0, 0)
    for episode in run.read_episodes():
        assert episode["error_kind"] == "agent" and episode["attempts"] == 1
        assert "400" in episode["error"] and "maximum context length is 4096 tokens" in episode["error"]


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 300 tokens. However, you requested 500 tokens "
        "(400 in the messages, 100 in the completion). Please reduce the length of the messages or completion.",
        "The input (500 tokens) is longer than the model's context length (300 tokens).",
        "the request exceeds the available context size, try increasing it",
    ],
    ids=["vllm", "sglang", "llama-server"],
)
def test_a_context_overflow_leaves_out_the_oldest_turns_and_the_episode_goes_on(tmp_path, message):
    """The server's model holds one turn of history: told so in the server's words, the policy asks again with
    fewer turns, and keeps the smaller budget for the rest of the episode."""
    refused: list[int] = []

    def shape(call, n, body, turns):
        if turns > 1:
            refused.append(n)
            error = {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}
            return JSONResponse(error, status_code=400)
        return completion(tool_message(call, call_id=f"call_{n}"))

    summary, run, app = play(tmp_path, shape, max_infra_retries=0)
    assert outcome(summary) == (3, 2, 0)
    long_episodes = [e for e in run.read_episodes() if e["steps"] > 2]
    assert long_episodes and len(refused) == len(long_episodes)  # once each: the smaller budget is kept
    notes = [
        step["policy"]["note"] or ""
        for episode in long_episodes
        for step in run.read_steps(episode["task_id"], episode["trial"])
        if "policy" in step
    ]
    assert any("exceeded the model's context" in note for note in notes), notes
    assert not app.state.refused  # every shortened history was one a strict server takes


def test_what_counts_as_a_context_overflow_and_how_much_would_have_fitted():
    vllm = (
        "This model's maximum context length is 4096 tokens. However, you requested 8192 tokens (8000 in the messages)"
    )
    assert context_overflow(400, vllm) == 0.5  # 4096 of the 8192 asked
    assert (
        context_overflow(400, "The input (5000 tokens) is longer than the model's context length (4000 tokens).") == 0.8
    )
    assert context_overflow(400, "Error code: 400 - {'error': {'code': 'context_length_exceeded'}}") == 0.5
    assert context_overflow(413, "prompt is too long: 210000 tokens > 200000 maximum") == 0.5
    assert context_overflow(400, "tool 'add' is not defined") is None
    assert context_overflow(401, "maximum context length is 4096 tokens") is None
