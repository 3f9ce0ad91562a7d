"""Real policy servers for tests: FastAPI apps on 127.0.0.1, served by uvicorn in a thread.

``scripted_decision`` is the scripted policy both servers play: add 1 until
the counter reaches min(target, 2), then done. So targets 1 and 2 succeed
and 3 fails, which gives known scores. ``faults`` switch on the failures the
tests need: 500s, 4xx refusals, garbage, error objects, bodies too deep, too
large or compressed, unknown tools, hangs. ``Faults.tokens`` makes the chat
server answer like vLLM or SGLang with token ids and logprobs (``tokens.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.harness.tokens import add_tokens

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def scripted_decision(text: str) -> dict[str, Any]:
    """The scripted policy's tool call for an observation text."""
    found = re.findall(r"counter=(-?\d+) target=(\d+)", text)
    if not found:
        return {"name": "done", "arguments": {}}
    counter, target = (int(x) for x in found[-1])
    if counter < min(target, 2):
        return {"name": "add", "arguments": {"n": 1}}
    return {"name": "done", "arguments": {}}


DEEP = 100_000
#: Bodies of faulty 200 replies, by the name of the fault.
BAD_BODIES: dict[str, tuple[bytes, dict[str, str]]] = {
    "garbage": (b'{"choices": [{"mess', {}),
    "error-object": (b'{"error": {"message": "the model is overloaded", "type": "server_error"}}', {}),
    "deep": (b'{"action": ' + b"[" * DEEP + b"]" * DEEP + b"}", {}),
    "huge": (b'{"action": "' + b"x" * (5 << 20) + b'"}', {}),
    # 16 MiB of spaces in 16 KiB: the client must refuse it without decompressing it.
    "gzip-bomb": (gzip.compress(b'{"action": "done"' + b" " * (16 << 20) + b"}", 9), {"content-encoding": "gzip"}),
}


class Faults:
    """Failure switches shared with the test. Counters are per server."""

    def __init__(self) -> None:
        self.fail_first = 0  # answer the first N requests with fail_status (500) and fail_headers
        self.fail_status = 500
        self.fail_headers: dict[str, str] = {}
        self.times: list[float] = []  # when each request came (time.monotonic)
        self.always = ""  # "500", "400", "hang", or a key of BAD_BODIES: every request
        self.garbage_first = 0
        self.hang_first = 0
        self.unknown_tool_first_step = False
        self.bad_arguments_first_step = False  # chat server: tool-call arguments that are not JSON
        self.plain_text = False  # chat server: the action as text in a fenced block, no tool call
        self.tokens = ""  # chat server: token ids and logprobs in a server's shape (a key of tokens.SHAPES)
        self.hang_sec = 5.0
        self.requests = 0

    async def apply(self) -> Response | None:
        """A faulty response for this request, or None to answer normally."""
        self.requests += 1
        self.times.append(time.monotonic())
        n = self.requests
        if self.always == "500":
            return JSONResponse({"error": "boom"}, status_code=500)
        if n <= self.fail_first:
            return JSONResponse({"error": "boom"}, status_code=self.fail_status, headers=self.fail_headers)
        if self.always == "400":
            return JSONResponse({"error": {"message": "context length exceeded"}}, status_code=400)
        if self.always in BAD_BODIES or n <= self.garbage_first:
            body, headers = BAD_BODIES.get(self.always, BAD_BODIES["garbage"])
            return Response(content=body, media_type="application/json", headers=headers)
        if self.always == "hang" or n <= self.hang_first:
            await asyncio.sleep(self.hang_sec)
        return None


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if p.get("type") == "text")
    return content or ""


def chat_app(faults: Faults) -> FastAPI:
    """An OpenAI-compatible /v1/chat/completions that answers with real tool calls."""
    app = FastAPI()
    app.state.requests = []
    app.state.headers = []
    app.state.sampled = {}  # tool call id -> the token ids and logprobs sent with it

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> Response:
        body = await request.json()
        app.state.requests.append(body)
        app.state.headers.append(dict(request.headers))
        fault = await faults.apply()
        if fault is not None:
            return fault
        messages = body["messages"]
        content = " ".join(_text(m.get("content")) for m in messages if m["role"] in ("user", "tool"))
        assistant_turns = sum(1 for m in messages if m["role"] == "assistant")
        if faults.unknown_tool_first_step and assistant_turns == 0:
            call = {"name": "teleport", "arguments": {"where": "moon"}}
        else:
            call = scripted_decision(content)
        import json

        arguments = json.dumps(call["arguments"])
        if faults.bad_arguments_first_step and assistant_turns == 0:
            arguments = arguments[:-1]
        if faults.plain_text:
            text = "add 1" if call["name"] == "add" else "done"
            message = {"role": "assistant", "content": f"```\n{text}\n```"}
            return JSONResponse(
                {
                    "id": f"chatcmpl-{len(app.state.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                    "usage": USAGE,
                }
            )
        reply = {
            "id": f"chatcmpl-{len(app.state.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"call_{len(app.state.requests)}",
                                "type": "function",
                                "function": {"name": call["name"], "arguments": arguments},
                            }
                        ],
                    },
                }
            ],
            "usage": USAGE,
        }
        if faults.tokens:
            sent = add_tokens(faults.tokens, body, reply, len(app.state.requests))
            if sent is not None:
                app.state.sampled[f"call_{len(app.state.requests)}"] = sent
        return JSONResponse(reply)

    return app


def act_app(faults: Faults) -> FastAPI:
    """Our /reset + /act protocol, playing the same scripted policy."""
    app = FastAPI()
    app.state.resets = []
    app.state.acts = []
    app.state.headers = []
    seen: dict[str, str] = {}

    @app.post("/reset")
    async def reset(request: Request) -> dict[str, Any]:
        app.state.resets.append(await request.json())
        return {}

    @app.post("/act")
    async def act(request: Request) -> Response:
        body = await request.json()
        app.state.acts.append(body)
        app.state.headers.append(dict(request.headers))
        fault = await faults.apply()
        if fault is not None:
            return fault
        seen[body["episode_id"]] = seen.get(body["episode_id"], "") + " " + body["observation"]["text"]
        if faults.unknown_tool_first_step and body["step"] == 0:
            return JSONResponse({"action": {"name": "teleport", "arguments": {}}})
        return JSONResponse({"action": scripted_decision(seen[body["episode_id"]]), "usage": USAGE})

    return app


@contextlib.contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Serve ``app`` on a free port of 127.0.0.1; yields the base URL; stops the server after."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test policy server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
