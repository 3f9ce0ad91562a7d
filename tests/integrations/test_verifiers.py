"""verifiers: our MultiTurnEnv run by verifiers' own rollout and scoring code (``evaluate``), its
OpenAI client talking to a loopback OpenAI-compatible server that replays the scripted policy."""

from __future__ import annotations

import numpy as np
import pytest

from agentenvs.integrations.common import render_observation, scripted_actions
from tests.harness.servers import serve
from tests.integrations.cases import CASES, SEED, direct_run, image_parts, replay_chat_app

vf = pytest.importorskip(
    "verifiers",
    reason="needs verifiers 0.3.x (large: transformers, sympy; not in the test extra): pip install 'agentenvs[verifiers]'",
)
if not hasattr(vf, "MultiTurnEnv"):
    pytest.skip("needs verifiers' classic MultiTurnEnv (verifiers 0.3.x)", allow_module_level=True)

from agentenvs.integrations.verifiers import AgentEnvsMultiTurnEnv, load_environment  # noqa: E402

KEY_VAR = "AGENTENVS_TEST_KEY"


def scripted(env: AgentEnvsMultiTurnEnv, variant: str | None):
    """The policy behind the server: the live episode's reference actions, one per request."""
    plans: dict[str, list] = {}

    def decide(body: dict):
        (trajectory, episode), *_ = env.episodes.items()
        if trajectory not in plans:
            plans[trajectory] = scripted_actions(episode.env, variant) if variant else ["done"]
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return plans[trajectory][turn]

    return decide


def evaluate(task_id: str, make_kwargs: dict, variant: str | None, monkeypatch) -> tuple:
    monkeypatch.setenv(KEY_VAR, "not-a-real-key")
    env = load_environment(task_ids=[task_id], seeds=[SEED], make_kwargs=make_kwargs, max_turns=12)
    app = replay_chat_app(scripted(env, variant))
    screens: list = []
    original = env.env_response

    async def watched(messages, state, **kwargs):
        response = await original(messages, state, **kwargs)
        screens.append(env.episodes[state["trajectory_id"]].last_obs.get("screenshot"))
        return response

    env.env_response = watched
    with serve(app) as url:
        client = vf.ClientConfig(api_base_url=f"{url}/v1", api_key_var=KEY_VAR, max_retries=0)
        results = env.evaluate_sync(
            client=client,
            model="scripted",
            num_examples=1,
            rollouts_per_example=1,
            state_columns=["trajectory", "agentenvs"],
        )
    assert env.episodes == {}  # verifiers' cleanup closed the episode
    return results, app.state.requests, screens


def output_of(results) -> dict:
    (output,) = results["outputs"]
    return output


@pytest.mark.parametrize(("task_id", "make_kwargs", "same_text"), CASES)
def test_verifiers_rollout_scores_the_oracle_one_and_nothing_zero(task_id, make_kwargs, same_text, monkeypatch):
    good, requests, screens = evaluate(task_id, make_kwargs, "oracle", monkeypatch)
    idle, idle_requests, _ = evaluate(task_id, make_kwargs, None, monkeypatch)

    out = output_of(good)
    assert out["reward"] == 1.0 and out["metrics"]["agentenvs_success"] == 1.0
    assert output_of(idle)["reward"] == 0.0 and len(idle_requests) == 1
    reference = direct_run(task_id, make_kwargs)
    assert len(requests) == len(reference) - 1  # one model call per env step

    # What the model was sent: the system prompt, the instruction with the first observation,
    # then each step's observation (as a tool result after a tool call, else a user message).
    last = requests[-1]["messages"]
    assert last[0]["role"] == "system" and "done" in last[0]["content"]
    first_user = last[1]["content"]
    first_text = first_user if isinstance(first_user, str) else first_user[0]["text"]
    assert reference[0]["obs"]["instruction"] in first_text
    tools = {t["function"]["name"] for t in requests[0].get("tools", [])}
    assert {"done", "fail", "submit"} <= tools
    if same_text:
        observed = [m for m in last[1:] if m["role"] in ("user", "tool")]
        texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in observed]
        assert texts == [render_observation(r["obs"], first=i == 0) for i, r in enumerate(reference[:-1])]
    # Each model call's trajectory step carries the env's reward for it (they sum to the score)
    # and its checks; the episode's summary rides along as a state column.
    steps = out["trajectory"]
    assert [s["reward"] for s in steps] == [r["reward"] for r in reference[1:]]
    assert [s["extras"]["agentenvs"]["checks"] for s in steps] == [r["info"]["checks"] for r in reference[1:]]
    assert steps[-1]["extras"]["agentenvs"]["score"] == 1.0
    assert out["agentenvs"]["score"] == 1.0 and out["agentenvs"]["steps"] == len(steps)


@pytest.mark.web
def test_screenshots_reach_the_model_server_as_image_parts(monkeypatch):
    task_id, make_kwargs, _ = CASES[2].values
    _, requests, screens = evaluate(task_id, make_kwargs, "oracle", monkeypatch)
    sent = [m for m in requests[-1]["messages"] if m["role"] == "user"]
    images = [img for m in sent for img in image_parts(m["content"])]
    assert len(images) == len(requests)  # the first observation's and every step's but the last
    for image, screen in zip(images[1:], screens):
        assert np.array_equal(image, screen)


def test_load_environment_needs_tasks():
    with pytest.raises(ValueError, match="task_ids"):
        load_environment()
