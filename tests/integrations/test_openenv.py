"""OpenEnv: our Environment served by openenv-core's own FastAPI app on loopback and driven by its
own WebSocket clients (our typed AgentEnvsClient and its GenericEnvClient), one task per family."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from agentenvs.integrations.common import render_observation, scripted_actions
from tests.harness.servers import serve
from tests.integrations.cases import CASES, SEED, decode_data_url, direct_run

pytest.importorskip(
    "openenv.core.env_server.http_server",
    reason="needs openenv-core: pip install 'agentenvs[openenv]' (in the test extra)",
)
from openenv.core import GenericEnvClient  # noqa: E402
from openenv.core.env_server.http_server import create_fastapi_app  # noqa: E402

from agentenvs.integrations.openenv import (  # noqa: E402
    AgentEnvsAction,
    AgentEnvsClient,
    AgentEnvsEnvironment,
    AgentEnvsObservation,
    create_app,
)


class Recorded(AgentEnvsEnvironment):
    """Keeps every instance OpenEnv's server makes, so the scripted policy can read its env's oracle."""

    made: list[AgentEnvsEnvironment] = []

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        Recorded.made.append(self)


def recorded_app(make_kwargs: dict):
    Recorded.made = []
    return create_fastapi_app(
        lambda: Recorded(make_kwargs=make_kwargs), AgentEnvsAction, AgentEnvsObservation, max_concurrent_envs=4
    )


def live_env(task_id: str) -> AgentEnvsEnvironment:
    (env,) = [e for e in Recorded.made if e.episode is not None and e.episode.task_id == task_id]
    return env


def play(url: str, task_id: str, variant: str | None) -> dict:
    """One episode over OpenEnv's WebSocket client (its sync wrapper), the scripted policy acting."""
    results, screens = [], []
    with AgentEnvsClient(base_url=url).sync() as client:
        first = client.reset(task_id=task_id, seed=SEED)
        server_env = live_env(task_id)
        screens.append(server_env.episode.last_obs.get("screenshot"))
        plan = scripted_actions(server_env.episode.env, variant) if variant else ["done"]
        for action in plan:
            sent = AgentEnvsAction(tool_call=action) if isinstance(action, dict) else AgentEnvsAction(text=action)
            result = client.step(sent)
            results.append(result)
            screens.append(server_env.episode.last_obs.get("screenshot"))
            if result.done:
                break
        state = client.state()
    return {"first": first, "steps": results, "state": state, "screens": screens}


@pytest.mark.parametrize(("task_id", "make_kwargs", "same_text"), CASES)
def test_openenv_client_plays_the_oracle_to_one_and_nothing_to_zero(task_id, make_kwargs, same_text):
    with serve(recorded_app(make_kwargs)) as url:
        good = play(url, task_id, "oracle")
        idle = play(url, task_id, None)

    steps = good["steps"]
    assert [r.done for r in steps] == [False] * (len(steps) - 1) + [True]
    final = steps[-1].observation
    assert final.info["score"] == 1.0 and final.info["success"] is True and steps[-1].reward == 1.0
    assert sum(r.reward for r in steps) == 1.0
    assert good["state"].score == 1.0 and good["state"].done and good["state"].task_id == task_id
    assert good["state"].step_count == len(steps)
    assert len(idle["steps"]) == 1 and idle["steps"][0].observation.info["score"] == 0.0
    assert idle["steps"][0].reward == 0.0 and idle["state"].score == 0.0

    first = good["first"].observation
    assert good["first"].done is False and first.system_prompt and first.tools
    assert {t["function"]["name"] for t in first.tools} >= {"done", "fail", "submit"}
    reference = direct_run(task_id, make_kwargs)
    assert first.instruction == reference[0]["obs"]["instruction"] and first.instruction in first.prompt
    if same_text:
        seen = [first, *(r.observation for r in steps)]
        assert [o.text for o in seen] == [r["obs"]["text"] for r in reference]
        assert [o.prompt for o in seen[:-1]] == [
            render_observation(r["obs"], first=i == 0) for i, r in enumerate(reference[:-1])
        ]
        extras = [{k: v for k, v in r["obs"].items() if k not in ("text", "instruction")} for r in reference]
        assert [o.extras for o in seen] == extras
        assert [o.info["checks"] for o in seen] == [r["info"]["checks"] for r in reference]
    # Images: the screenshot the server's env took, as a PNG data URL, pixel for pixel.
    for observation, screen in zip([first, *(r.observation for r in steps)], good["screens"]):
        if screen is None:
            assert observation.images == {}
        else:
            assert np.array_equal(decode_data_url(observation.images["screenshot"]), screen)


def test_create_app_serves_any_task_over_ws_and_answers_http_probes():
    task_id = "textgame/coin-easy-0"
    plan = scripted_actions_for(task_id)
    with serve(create_app(allowed_tasks=("textgame/",), max_concurrent_envs=2)) as url:
        health = httpx.get(f"{url}/health").json()
        schema = httpx.get(f"{url}/schema").json()
        metadata = httpx.get(f"{url}/metadata").json()
        probe = httpx.post(f"{url}/reset", json={"task_id": task_id, "seed": SEED}).json()
        with GenericEnvClient(base_url=url).sync() as one, GenericEnvClient(base_url=url).sync() as two:
            a = one.reset(task_id=task_id, seed=SEED)
            b = two.reset(task_id="textgame/coin-easy-1", seed=SEED)
            for action in plan:
                result = one.step({"text": action} if isinstance(action, str) else {"tool_call": action})
                if result.done:
                    break
            other = two.step({"text": "done"})
            with pytest.raises(RuntimeError, match="not served here"):
                one.reset(task_id="terminal/fix-permissions")
    assert health["status"] == "healthy" and metadata["name"] == "agentenvs"
    assert set(schema["action"]["properties"]) >= {"text", "tool_call"}
    assert probe["done"] is False and "Task:" in probe["observation"]["prompt"]
    assert a.observation["task_id"] == task_id and b.observation["task_id"] == "textgame/coin-easy-1"
    assert result.done and result.reward == 1.0 and result.observation["info"]["score"] == 1.0
    assert other.done and other.reward == 0.0


def scripted_actions_for(task_id: str) -> list:
    import agentenvs

    env = agentenvs.make(task_id)
    env.reset(seed=SEED)
    try:
        return scripted_actions(env)
    finally:
        env.close()
