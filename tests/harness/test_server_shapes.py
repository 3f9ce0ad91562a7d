"""The ``openai`` policy against the reply shapes real OpenAI-compatible servers send, not only OpenAI's.

Each test serves one shape from a real server on 127.0.0.1 (FastAPI under
uvicorn, see ``servers.py``) and plays the toy tasks through the runner with
the real ``openai`` client. The server checks every request's history the way
the strictest real servers do, so a history that one of them would refuse is
caught here as a 400:

- vLLM's ``_postprocess_messages`` ``json.loads`` every replayed tool call's
  ``arguments`` before the chat template runs; malformed ones are a 400 naming
  the decode error, on every later request of the conversation (vllm issues
  43995, 47761, fixed only in newer versions); so does llama-server;
- LM Studio refuses an empty tool call id in the history ("Invalid 'messages'
  in payload", lmstudio-bug-tracker 830), Mistral templates any id that is not
  9 alphanumerics, and OpenAI a ``tool`` message that answers no tool call.

The scripted policy of ``servers.py`` solves reach-1 and reach-2 and stops
short on reach-3, 8 steps in all over the three tasks.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from conftest import ALL_TOY, run_config
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from servers import USAGE, scripted_decision, serve

from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.scoring import summarize

FAST_RETRY = {"max_retries": 2, "retry_base_delay": 0.01, "retry_max_delay": 0.05}

#: What a shape gets: the scripted call for this request, the request's number (1-based), its body,
#: and the number of assistant turns in its history (0 on an episode's first step).
Shape = Callable[[dict[str, Any], int, dict[str, Any], int], Any]


def history_problem(messages: list[dict[str, Any]]) -> str | None:
    """Why vLLM, llama-server, LM Studio or OpenAI would refuse this history, or None."""
    open_ids: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            for call in message.get("tool_calls") or []:
                call_id, arguments = call.get("id"), call["function"].get("arguments")
                if not isinstance(call_id, str) or not call_id:
                    return "Invalid 'messages' in payload"
                if not isinstance(arguments, str):
                    return f"messages.tool_calls.function.arguments: Input should be a valid string, got {arguments!r}"
                try:
                    parsed = json.loads(arguments) if arguments else {}
                except json.JSONDecodeError as exc:
                    return str(exc)  # vLLM's message, e.g. "Expecting ',' delimiter: line 1 column 54 (char 53)"
                if not isinstance(parsed, dict):
                    return "'list' object has no attribute 'items'"
                open_ids.add(call_id)
        elif message["role"] == "tool":
            if message.get("tool_call_id") not in open_ids:
                return "messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
            open_ids.discard(message["tool_call_id"])
    return None


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if p.get("type") == "text")
    return content or ""


def completion(message: dict[str, Any], finish_reason: str = "tool_calls", **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "scripted",
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
        "usage": USAGE,
        **extra,
    }


def tool_message(call: dict[str, Any], call_id: Any = "call_1", arguments: Any = None, **message: Any) -> dict:
    tool_call: dict[str, Any] = {
        "type": "function",
        "function": {
            "name": call["name"],
            "arguments": json.dumps(call["arguments"]) if arguments is None else arguments,
        },
    }
    if call_id is not ...:
        tool_call["id"] = call_id
    return {"role": "assistant", "content": None, "tool_calls": [tool_call], **message}


def shape_app(shape: Shape) -> FastAPI:
    app = FastAPI()
    app.state.requests = []
    app.state.refused = []
    app.state.times = []

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> Response:
        body = await request.json()
        app.state.requests.append(body)
        app.state.times.append(time.monotonic())
        problem = history_problem(body["messages"])
        if problem is not None:
            app.state.refused.append(problem)
            error = {"message": problem, "type": "BadRequestError", "param": None, "code": 400}
            return JSONResponse({"error": error}, status_code=400)
        messages = body["messages"]
        seen = " ".join(_text(m.get("content")) for m in messages if m["role"] in ("user", "tool"))
        turns = sum(1 for m in messages if m["role"] == "assistant")
        answer = shape(scripted_decision(seen), len(app.state.requests), body, turns)
        return answer if isinstance(answer, Response) else JSONResponse(answer)

    return app


def play(tmp_path, shape: Shape, **options: Any) -> tuple[dict, RunDir, FastAPI]:
    app = shape_app(shape)
    run_options = {**FAST_RETRY, **options.pop("policy", {})}
    with serve(app) as url:
        policy = {"model": "scripted", "base_url": f"{url}/v1", "request_timeout_sec": 2.0, **run_options}
        config = run_config(ALL_TOY, "openai", options=policy, **options)
        asyncio.run(Runner(config, str(tmp_path / "run")).run())
    return summarize(RunDir(tmp_path / "run")), RunDir(tmp_path / "run"), app


def outcome(summary: dict) -> tuple[int, int, int]:
    overall = summary["overall"]
    return overall["scored"], overall["successes"], overall["infra"]


# -- tool call arguments ------------------------------------------------------------------------------

BAD_ARGUMENTS = {
    "trailing-text": ('{"n": 1} and then I will call done', "tool_calls"),
    "single-quotes": ("{'n': 1}", "tool_calls"),
    "truncated-at-max-tokens": ('{"n": ', "length"),
    "not-an-object": ("[1]", "tool_calls"),
}


@pytest.mark.parametrize("kind", list(BAD_ARGUMENTS))
def test_bad_arguments_cost_one_step_and_never_poison_the_history(tmp_path, kind):
    """The model's malformed arguments are its spent step; replayed as they came, vLLM would refuse every
    later request of the episode (a 400 that ended it as the agent's failure after one bad call)."""
    arguments, finish = BAD_ARGUMENTS[kind]

    def shape(call, n, body, turns):
        if turns == 0:
            return completion(tool_message(call, arguments=arguments), finish_reason=finish)
        return completion(tool_message(call, call_id=f"call_{n}"))

    summary, run, app = play(tmp_path, shape)
    assert app.state.refused == []
    assert outcome(summary) == (3, 2, 0)
    for episode in run.read_episodes():
        assert episode["action_errors"] == 1 and episode["error_kind"] in (None, "agent"), episode
    step = run.read_steps("toy/reach-1", 0)[1]
    assert step["action"] == {"name": "add", "arguments": arguments}  # recorded as the model wrote it
    assert "arguments" in step["info"]["action_error"]
    if finish == "length":
        assert "max_tokens" in step["policy"]["note"], step["policy"]
    replayed = app.state.requests[1]["messages"]
    assert all(
        isinstance(json.loads(c["function"]["arguments"]), dict)
        for m in replayed
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or []
    )


def test_arguments_sent_as_an_object_are_taken_and_replayed_as_a_string(tmp_path):
    """Some servers (Ollama's native shape, proxies in front of it) give ``arguments`` as an object."""

    def shape(call, n, body, turns):
        return completion(tool_message(call, call_id=f"call_{n}", arguments=call["arguments"]))

    summary, run, app = play(tmp_path, shape)
    assert app.state.refused == []
    assert outcome(summary) == (3, 2, 0)
    assert all(e["action_errors"] == 0 for e in run.read_episodes())
    assert run.read_steps("toy/reach-1", 0)[1]["action"] == {"name": "add", "arguments": {"n": 1}}


# -- tool call ids ------------------------------------------------------------------------------------


@pytest.mark.parametrize("call_id", [..., "", None], ids=["missing", "empty", "null"])
def test_tool_calls_without_a_usable_id_are_taken_and_given_one(tmp_path, call_id):
    """llama-server and LM Studio have sent tool calls with an empty or no id: the call is the model's
    usable action, and the history must not echo an id the server then refuses."""

    def shape(call, n, body, turns):
        return completion(tool_message(call, call_id=call_id))

    summary, run, app = play(tmp_path, shape)
    assert app.state.refused == []
    assert outcome(summary) == (3, 2, 0)
    assert all(e["action_errors"] == 0 for e in run.read_episodes())
    last = app.state.requests[-1]["messages"]
    ids = [c["id"] for m in last if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert ids and all(len(i) == 9 and i.isalnum() for i in ids), ids  # what a Mistral template accepts
    assert len(set(ids)) == len(ids)


def test_several_tool_calls_with_index_fields_play_the_first_only(tmp_path):
    """Parallel tool calls (with ``index`` on the call, and inside ``function`` as Ollama puts it): one action
    per step, the rest ignored with a note, and the history keeps only the call that was played."""

    def shape(call, n, body, turns):
        calls = [
            {
                "index": i,
                "id": f"call_{n}_{i}",
                "type": "function",
                "function": {"index": i, "name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
            for i in range(2)
        ]
        return completion({"role": "assistant", "content": "", "tool_calls": calls})

    summary, run, app = play(tmp_path, shape)
    assert app.state.refused == []
    assert outcome(summary) == (3, 2, 0)
    steps = run.read_steps("toy/reach-2", 0)
    assert [s["observation"]["text"] for s in steps[1:3]] == ["counter=1 target=2", "counter=2 target=2"]
    assert steps[1]["policy"]["note"] == "ignored 1 extra tool calls (one action per step)"


# -- reasoning ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_beside_a_tool_call_is_recorded_and_never_replayed(tmp_path, field):
    """vLLM's reasoning parsers (DeepSeek-R1, Qwen3) put the thinking in ``reasoning_content`` (``reasoning``
    from vLLM 0.11 on, and in Ollama's and OpenRouter's /v1), with ``content`` null."""

    def shape(call, n, body, turns):
        return completion(tool_message(call, call_id=f"call_{n}", **{field: f"I think {call['name']} now."}))

    summary, run, app = play(tmp_path, shape)
    assert outcome(summary) == (3, 2, 0)
    step = run.read_steps("toy/reach-1", 0)[1]
    assert "I think add now." in step["policy"]["message"]
    replayed = json.dumps(app.state.requests[-1]["messages"])
    assert "I think" not in replayed and field not in replayed


def test_reasoning_without_an_action_is_a_spent_step_that_says_so(tmp_path):
    """Thinking cut off by max_tokens before any answer: ``content`` empty, only ``reasoning_content``."""

    def shape(call, n, body, turns):
        if turns == 0:
            message = {"role": "assistant", "content": "", "reasoning_content": "Let me think about this very"}
            return completion(message, finish_reason="length")
        return completion(tool_message(call, call_id=f"call_{n}"))

    summary, run, app = play(tmp_path, shape)
    assert app.state.refused == []
    assert outcome(summary) == (3, 2, 0)
    step = run.read_steps("toy/reach-1", 0)[1]
    assert step["action"] == "" and step["info"]["action_error"]
    note = step["policy"]["note"]
    assert "neither a tool call nor text" in note and "max_tokens" in note, note
    assert step["policy"]["message"] == "<think>Let me think about this very</think>"


THINK = {
    "closed": ("<think>\nThe counter is low, so I add one.\n</think>\n\n", True),
    "closed-fenced": ("<think>add 2? no.</think>\n", True),
    "unclosed": ("<think>\nThe counter is low, so I", False),
}


@pytest.mark.parametrize("kind", list(THINK))
def test_think_blocks_in_plain_text_replies_are_not_the_action(tmp_path, kind):
    """A reasoning model served without a reasoning parser (llama-server, LM Studio, Together's R1) writes
    ``<think>...</think>`` into ``content``; the plain-text action is what follows it."""
    prefix, closed = THINK[kind]

    def shape(call, n, body, turns):
        command = "add 1" if call["name"] == "add" else "done"
        if kind == "closed-fenced":
            command = f"```\n{command}\n```"
        text = prefix + (command if closed else "")
        return completion({"role": "assistant", "content": text}, finish_reason="stop" if closed else "length")

    summary, run, app = play(tmp_path, shape)
    step = run.read_steps("toy/reach-1", 0)[1]
    if closed:
        assert outcome(summary) == (3, 2, 0)
        assert step["action"] == "add 1" and not step["info"]["action_error"]
        assert step["policy"]["message"].startswith("<think>")
    else:
        assert outcome(summary) == (3, 0, 0)
        assert step["action"] == "" and "max_tokens" in step["policy"]["note"], step["policy"]


def test_a_reply_of_blank_space_is_read_in_linear_time(tmp_path):
    """Models that loop emit blank space until max_tokens; the reply's reading must not backtrack over it
    (a pattern with a leading ``\\s*`` took 4 s for 20,000 spaces, hours for the 4 MiB a reply may be)."""

    def shape(call, n, body, turns):
        command = "add 1" if call["name"] == "add" else "done"
        return completion({"role": "assistant", "content": " \n" * 100_000 + command}, finish_reason="stop")

    started = time.monotonic()
    summary, run, _ = play(tmp_path, shape)
    assert outcome(summary) == (3, 2, 0)
    assert time.monotonic() - started < 20


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
