"""Every site task template: the oracle scores 1, doing nothing 0, the plausible wrong solution less than 1."""

from __future__ import annotations

import json

import pytest

import agentenvs
from agentenvs.envs.web.catalog import TEMPLATES, load
from agentenvs.validate import play


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_oracle_noop_wrong(web_env, template: str) -> None:
    task_id = f"web/{template}-0"
    scores = {}
    for variant in ("oracle", "noop", "wrong"):
        web_env.reset(seed=0, options={"task_id": task_id})
        actions = ["done"] if variant == "noop" else web_env.oracle_actions(variant)
        info, _ = play(web_env, actions)
        assert info.get("error_kind") != "infra", info.get("error")
        scores[variant] = info["score"]
        if variant == "oracle":
            assert info["success"], info["verifier_detail"]
            if web_env.task.config.checkpoints:
                assert info["progress"] == 1.0, info["checks"]
    assert scores["oracle"] == 1.0
    assert scores["noop"] == 0.0
    assert scores["wrong"] < 1.0


def test_templates_yield_distinct_instances() -> None:
    for template in TEMPLATES:
        instances = {
            json.dumps([load(f"{template}-{seed}").instruction, load(f"{template}-{seed}").params["oracle"]])
            for seed in range(6)
        }
        assert len(instances) >= 3, template


def test_registry_lists_site_and_miniwob_tasks() -> None:
    tasks = agentenvs.list_tasks(family="web")
    ids = {t.id for t in tasks}
    assert {f"{t}-0" for t in TEMPLATES} <= ids
    assert sum(1 for i in ids if i.startswith("miniwob.")) >= 60
    assert {"infeasible", "information-seeking", "navigation", "content-creation", "transaction"} <= {
        tag for t in tasks for tag in t.tags
    }
