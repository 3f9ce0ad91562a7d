"""A chat server that answers the ``openai`` policy in a shape a test gives, and checks its history.

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
