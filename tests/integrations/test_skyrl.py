"""SkyRL: our BaseTextEnv made through skyrl-gym's own registry and driven as SkyRL's generator
drives an env (init, step until done, get_metrics, close), one task per family."""

from __future__ import annotations

import numpy as np
import pytest

from agentenvs.integrations.common import action_to_text, content_text, render_observation, scripted_actions
from tests.integrations.cases import CASES, SEED, direct_run, image_parts

skyrl_gym = pytest.importorskip("skyrl_gym", reason="needs skyrl-gym: pip install 'agentenvs[skyrl]'")
from skyrl_gym.metrics import aggregate_for_environment  # noqa: E402

from agentenvs.integrations.skyrl import ENV_ID, AgentEnvsTextEnv, register  # noqa: E402

MAX_TURNS = 12


def rollout(task_id: str, make_kwargs: dict, variant: str | None) -> dict:
    """What ``SkyRLGymGenerator.agent_loop`` does with an env, the model replaced by a scripted policy:
    ``skyrl_gym.make(env_class, env_config=..., extras=...)`` with ``max_turns`` in the extras,
    ``init(prompt)``, ``step(output)`` until done (observations appended to the chat), metrics, close."""
    register()
    env = skyrl_gym.make(
        ENV_ID,
        env_config={"make_kwargs": {"reward_mode": "sparse"}},
        extras={"task_id": task_id, "seed": SEED, "make_kwargs": make_kwargs, "max_turns": MAX_TURNS},
    )
    assert isinstance(env, AgentEnvsTextEnv) and env.spec.id == ENV_ID
    chat, init_metadata = env.init([])
    plan = iter(scripted_actions(env.episode.env, variant) if variant else ["done"])
    steps, screens = [], [env.episode.last_obs.get("screenshot")]
    done = False
    while not done:
        output = action_to_text(next(plan))
        out = env.step(output)
        chat.append({"role": "assistant", "content": output})
        chat.extend(out["observations"])
        steps.append(out)
        screens.append(env.episode.last_obs.get("screenshot"))
        done = out["done"]
    metrics = env.get_metrics()
    env.close()
    return {"chat": chat, "init": init_metadata, "steps": steps, "metrics": metrics, "screens": screens}


@pytest.mark.parametrize(("task_id", "make_kwargs", "same_text"), CASES)
def test_the_oracle_scores_one_and_doing_nothing_zero(task_id, make_kwargs, same_text):
    good, idle = rollout(task_id, make_kwargs, "oracle"), rollout(task_id, make_kwargs, None)
    reference = direct_run(task_id, make_kwargs)

    assert [s["done"] for s in good["steps"]] == [False] * (len(good["steps"]) - 1) + [True]
    final = good["steps"][-1]["metadata"]
    assert final["score"] == 1.0 and final["success"] is True
    assert final["progress"] == reference[-1]["info"]["progress"]
    assert sum(s["reward"] for s in good["steps"]) == 1.0 and good["metrics"]["score"] == 1.0
    assert idle["steps"][-1]["metadata"]["score"] == 0.0 and idle["metrics"]["score"] == 0.0
    assert sum(s["reward"] for s in idle["steps"]) == 0.0 and len(idle["steps"]) == 1
    # SkyRL's own aggregation over our metrics (it looks our class up in its registry).
    assert aggregate_for_environment(ENV_ID, [good["metrics"], idle["metrics"]])["score"] == 0.5

    # The chat is the system prompt, the instruction with the first observation, then per step the
    # model's output and the env's next observation, rendered from exactly what the env gave.
    chat = good["chat"]
    assert chat[0]["role"] == "system" and "done" in chat[0]["content"]
    users = [m["content"] for m in chat if m["role"] == "user"]
    assert len(users) == len(good["steps"])  # one per turn; none after the last
    assert reference[0]["obs"]["instruction"] in content_text(users[0])
    if same_text:
        expected = [render_observation(r["obs"], first=i == 0) for i, r in enumerate(reference[:-1])]
        assert [content_text(u) for u in users] == expected
        assert [s["metadata"]["checks"] for s in good["steps"]] == [r["info"]["checks"] for r in reference[1:]]
    assert good["init"]["task_id"] == task_id and good["init"]["checks"] == reference[0]["info"]["checks"]


@pytest.mark.web
def test_screenshots_pass_through_as_image_parts():
    task_id, make_kwargs, _ = CASES[2].values
    good = rollout(task_id, make_kwargs, "oracle")
    users = [m["content"] for m in good["chat"] if m["role"] == "user"]
    assert all(isinstance(u, list) for u in users)
    for content, screen in zip(users, good["screens"]):
        (image,) = image_parts(content)
        assert screen is not None and np.array_equal(image, screen)

    register()
    text_only = skyrl_gym.make(
        ENV_ID, env_config={"images": "never"}, extras={"task_id": task_id, "make_kwargs": make_kwargs}
    )
    chat, _ = text_only.init([{"role": "system", "content": "be brief"}])
    text_only.close()
    assert isinstance(chat[-1]["content"], str) and [m["content"] for m in chat[:1]] == ["be brief"]


def test_a_missing_task_id_says_how_to_give_one():
    register()
    with pytest.raises(ValueError, match="env_extras"):
        skyrl_gym.make(ENV_ID, env_config={}, extras={"seed": 0})


def test_max_turns_bounds_the_episode_and_the_last_turn_is_graded():
    register()
    env = skyrl_gym.make(ENV_ID, env_config={}, extras={"task_id": "textgame/coin-easy-0", "max_turns": 2})
    env.init([])
    first = env.step("look")
    last = env.step("look")
    env.close()
    assert first["done"] is False and last["done"] is True
    assert last["metadata"]["truncated"] is True and last["metadata"]["score"] == 0.0
