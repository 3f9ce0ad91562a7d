"""ART: our rollout run by ART's own ``gather_trajectory_groups`` with a real ``art.Model``, whose
OpenAI client talks to a loopback OpenAI-compatible server that replays the scripted policy: the
model named "oracle" plays the task's reference solution, "wrong" its plausible mistake."""

from __future__ import annotations

import asyncio
import json
import os

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from agentenvs.integrations.common import TextEpisode, content_text, render_observation, scripted_actions
from tests.harness.servers import serve
from tests.integrations.cases import CASES, SEED, direct_run, image_parts, replay_chat_app

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm (ART's dependency) is offline
art = pytest.importorskip("art", reason="needs openpipe-art: pip install 'agentenvs[art]'")
from openai.types.chat.chat_completion import Choice  # noqa: E402

adapter = pytest.importorskip("agentenvs.integrations.art", reason="needs openpipe-art 0.5 with openai<3")
from agentenvs.integrations.art import Scenario, rollout  # noqa: E402

GROUP = 2  # rollouts per scenario


class Watched(TextEpisode):
    """The adapter's episode, kept where the test sees it: its plans per variant (staged in its own
    sandbox) for the server, and whether it was closed."""

    made: list[Watched] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.plans: dict[str, list] = {}
        self.closed = False
        Watched.made.append(self)

    def reset(self, seed=None):
        content, info = super().reset(seed)
        self.plans = {variant: scripted_actions(self.env, variant) for variant in ("wrong", "oracle")}
        self.first = content_text(content)
        return content, info

    def close(self):
        super().close()
        self.closed = True


@pytest.fixture
def watched(monkeypatch):
    Watched.made = []
    monkeypatch.setattr(adapter, "TextEpisode", Watched)
    return Watched.made


def decide(body: dict):
    """The next action of the episode whose first observation the request carries, for the variant
    the request's model names."""
    messages = body["messages"]
    first = content_text(messages[1]["content"])
    (episode, *_) = [e for e in Watched.made if getattr(e, "first", None) == first]
    turn = sum(1 for m in messages if m["role"] == "assistant")
    return episode.plans[body["model"]][turn]


def model(url: str, variant: str):
    return art.Model(
        name=f"agentenvs-{variant}",
        project="agentenvs-test",
        inference_base_url=f"{url}/v1",
        inference_api_key="not-a-real-key",
        inference_model_name=variant,
    )


def gather(url: str, scenario: Scenario, make_kwargs: dict, **kwargs) -> list:
    """ART's gather: one group per variant, ``GROUP`` rollouts each."""

    async def run():
        return await art.gather_trajectory_groups(
            (
                art.TrajectoryGroup(
                    rollout(model(url, variant), scenario, make_kwargs=make_kwargs, max_turns=12) for _ in range(GROUP)
                )
                for variant in ("oracle", "wrong")
            ),
            pbar_desc=None,
            **kwargs,
        )

    return asyncio.run(run())


@pytest.mark.parametrize(("task_id", "make_kwargs", "same_text"), CASES)
def test_art_gather_scores_the_oracle_one_and_the_mistake_zero(task_id, make_kwargs, same_text, watched):
    app = replay_chat_app(decide)
    with serve(app) as url:
        good, bad = gather(url, Scenario(task_id, seed=SEED), make_kwargs)

    assert [t.reward for t in good] == [1.0] * GROUP and [t.reward for t in bad] == [0.0] * GROUP
    assert not good.exceptions and not bad.exceptions
    assert all(t.metrics["success"] is True for t in good) and all(t.metrics["success"] is False for t in bad)
    assert len(watched) == 2 * GROUP and all(e.closed for e in watched)
    reference = direct_run(task_id, make_kwargs)
    plan = watched[0].plans["oracle"][: len(reference) - 1]  # a game that is won ends before its "done"

    for trajectory in good:
        assert trajectory.metrics["steps"] == len(plan) and trajectory.metrics["score"] == 1.0
        assert trajectory.metadata["task_id"] == task_id and trajectory.metadata["seed"] == SEED
        assert trajectory.tools and {"done", "fail", "submit"} <= {t["function"]["name"] for t in trajectory.tools}
        items = trajectory.messages_and_choices
        assert items[0]["role"] == "system" and "done" in items[0]["content"]
        assert reference[0]["obs"]["instruction"] in content_text(items[1]["content"])

        # The model's turns are the server's own Choice objects: the action as sent (a tool call
        # with the server's id and arguments, or text), with the logprobs it returned.
        choices = [item for item in items if isinstance(item, Choice)]
        assert len(choices) == len(plan)
        for choice, action in zip(choices, plan):
            message = choice.message
            if isinstance(action, dict):
                (call,) = message.tool_calls
                assert call.function.name == action["name"]
                assert json.loads(call.function.arguments) == action.get("arguments", {})
                answer = items[items.index(choice) + 1]
                assert answer["role"] == "tool" and answer["tool_call_id"] == call.id
            else:
                assert message.content == action and not message.tool_calls
            # the logprobs are this choice's own: the server's byte tokens spell its message
            spelled = json.loads(bytes(b for lp in choice.logprobs.content for b in lp.bytes).decode())
            assert spelled.get("content") == message.content
            assert [c["id"] for c in spelled.get("tool_calls", [])] == [c.id for c in message.tool_calls or []]

        # The env's observations, after each choice (as a tool result or a user message).
        observed = [
            content_text(item["content"])
            for item in items[1:]
            if not isinstance(item, Choice) and item["role"] in ("user", "tool") and item["content"]
            if not (isinstance(item["content"], list) and not content_text(item["content"]))
        ]
        if same_text:
            assert observed == [render_observation(r["obs"], first=i == 0) for i, r in enumerate(reference)]
        if "screenshot" in reference[0]["obs"]:  # the first observation's and every step's, as image parts
            images = [image for item in items if not isinstance(item, Choice) for image in image_parts(item["content"])]
            assert len(images) == len(reference)
            assert any(np.array_equal(images[-1], e.last_obs["screenshot"]) for e in watched)  # pixel for pixel

    # What the server was asked: ART's client sent our tools, the model's name and logprobs=True.
    request = app.state.requests[0]
    assert request["logprobs"] is True and request["model"] in ("oracle", "wrong")
    assert {t["function"]["name"] for t in request["tools"]} >= {"done", "fail", "submit"}
    assert len(app.state.requests) == sum(t.metrics["steps"] for t in [*good, *bad])  # one per step


def test_a_failing_model_server_is_an_exception_of_the_group_and_the_env_is_closed(watched):
    refuse = FastAPI()

    @refuse.post("/v1/chat/completions")
    async def complete() -> JSONResponse:
        return JSONResponse({"error": {"message": "context length exceeded"}}, status_code=400)

    with serve(refuse) as url:
        groups = gather(url, Scenario("textgame/coin-easy-0", seed=SEED), {}, max_exceptions=2 * GROUP)
    assert all(len(group) == 0 and len(group.exceptions) == GROUP for group in groups)
    assert "context length exceeded" in groups[0].exceptions[0].message
    assert len(watched) == 2 * GROUP and all(e.closed for e in watched)


def test_a_task_id_alone_is_a_scenario_without_seed(watched):
    with serve(replay_chat_app(lambda body: "done")) as url:
        trajectory = asyncio.run(rollout(model(url, "oracle"), "textgame/coin-easy-0"))
    assert trajectory.reward == 0.0 and trajectory.metrics["steps"] == 1
    assert trajectory.metadata["seed"] is None and watched[0].closed
