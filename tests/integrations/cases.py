"""Helpers shared by the trainer adapters' tests: one task per family, the scripted policies, the
observations an env gives when driven directly (what each adapter must pass on unchanged), and a
replaying OpenAI-compatible server."""

from __future__ import annotations

import base64
import io
import json
import time
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI, Request

import agentenvs
from agentenvs.integrations.common import scripted_actions

#: One task per family that needs no Docker: (task id, make kwargs, whether the text is
#: the same from one env to the next; a web page's URLs carry the site's port).
TEXTGAME = ("textgame/coin-easy-0", {}, True)
TERMINAL = ("terminal/fix-permissions", {"backend": "local"}, True)
WEB = ("web/shop-price-0", {"screenshot": True}, False)
CASES = [
    pytest.param(*TEXTGAME, id="textgame"),
    pytest.param(*TERMINAL, id="terminal"),
    pytest.param(*WEB, id="web", marks=pytest.mark.web),
]
SEED = 0


def direct_run(task_id: str, make_kwargs: dict[str, Any], variant: str | None = "oracle") -> list[dict[str, Any]]:
    """Observations and infos of the task played directly with ``agentenvs.make``: the reference
    for what an adapter shows its trainer. ``variant=None`` plays the do-nothing policy."""
    env = agentenvs.make(task_id, **make_kwargs)
    try:
        obs, info = env.reset(seed=SEED)
        seen = [{"obs": obs, "info": info, "reward": 0.0}]
        for action in scripted_actions(env, variant) if variant else ["done"]:
            obs, reward, terminated, truncated, info = env.step(action)
            seen.append({"obs": obs, "info": info, "reward": reward})
            if terminated or truncated:
                break
        return seen
    finally:
        env.close()


def decode_data_url(url: str) -> np.ndarray:
    from PIL import Image

    assert url.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))


def image_parts(content: Any) -> list[np.ndarray]:
    """The images of a chat message's content, decoded."""
    if isinstance(content, str):
        return []
    return [decode_data_url(part["image_url"]["url"]) for part in content if part.get("type") == "image_url"]


def byte_logprobs(text: str) -> list[dict[str, Any]]:
    """Logprobs of ``text`` under a byte tokenizer, as vLLM writes them with ``--return-tokens-as-token-ids``."""
    return [
        {"token": f"token_id:{b}", "logprob": -0.25 - i / 100, "bytes": [b], "top_logprobs": []}
        for i, b in enumerate(text.encode())
    ]


def replay_chat_app(decide):
    """An OpenAI-compatible ``/v1/chat/completions`` whose replies are ``decide(request body)``: a native
    string comes back as the message's text, a tool-call dict as a real ``tool_calls`` entry; with
    ``logprobs`` asked, the choice carries ``byte_logprobs`` of the message."""
    app = FastAPI()
    app.state.requests = []

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> dict:
        body = await request.json()
        app.state.requests.append(body)
        action = decide(body)
        n = len(app.state.requests)
        if isinstance(action, dict):
            call = {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": action["name"], "arguments": json.dumps(action.get("arguments", {}))},
            }
            message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": action}, "stop"
        choice = {"index": 0, "finish_reason": finish, "message": message}
        if body.get("logprobs"):
            choice["logprobs"] = {"content": byte_logprobs(json.dumps(message)), "refusal": None}
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [choice],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    return app
