"""Tasks in WebArena's config format run against our sites; what the format needs that we lack fails at load."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agentenvs
from agentenvs.core.errors import TaskFormatError
from agentenvs.envs.web.catalog import webarena_dir
from agentenvs.envs.web.webarena import load_config
from agentenvs.validate import play

CONFIGS = sorted(p.stem for p in webarena_dir().glob("*.json"))


def test_the_three_eval_types_are_covered() -> None:
    types = {t for c in CONFIGS for t in json.loads((webarena_dir() / f"{c}.json").read_text())["eval"]["eval_types"]}
    assert types == {"string_match", "url_match", "program_html"}


@pytest.mark.parametrize("name", CONFIGS)
def test_oracle_noop_wrong(web_env, name: str) -> None:
    task_id = f"web/webarena.{name}"
    scores = {}
    for variant in ("oracle", "noop", "wrong"):
        web_env.reset(seed=0, options={"task_id": task_id})
        info, _ = play(web_env, ["done"] if variant == "noop" else web_env.oracle_actions(variant))
        assert info.get("error_kind") != "infra", info.get("error")
        scores[variant] = info["score"]
    assert scores == {"oracle": 1.0, "noop": 0.0, "wrong": 0.0}, scores


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"eval": {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": ["yes"]}}}, "LLM judge"),
        (
            {
                "eval": {
                    "eval_types": ["program_html"],
                    "program_html": [
                        {"url": "func:shopping_get_latest_order_url()", "locator": "", "required_contents": {}}
                    ],
                }
            },
            "func:",
        ),
        ({"sites": ["map"]}, "sites"),
        ({"start_url": "http://example.com/"}, "names no site"),
        ({"eval": {"eval_types": ["html_match"]}}, "eval_types"),
        ({"agentenvs": {}}, "oracle"),
    ],
)
def test_unsupported_parts_fail_at_load_with_a_clear_message(tmp_path: Path, change: dict, message: str) -> None:
    config = json.loads((webarena_dir() / "shop-kettle-price.json").read_text())
    config.update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(config))
    with pytest.raises(TaskFormatError, match=message) as raised:
        load_config(path)
    assert str(path) in str(raised.value)


def test_listed_in_the_registry() -> None:
    ids = {t.id for t in agentenvs.list_tasks(family="web", tag="webarena-format")}
    assert ids == {f"webarena.{c}" for c in CONFIGS}


def test_the_content_hash_does_not_depend_on_where_the_tasks_are(tmp_path: Path) -> None:
    """A leaderboard bundle made on one machine names each task by its content hash: a clone elsewhere
    must compute the same one (asked in a fresh process, whose tasks are a copy in another place)."""
    task_id = f"web/webarena.{CONFIGS[0]}"
    (tmp_path / "web").mkdir()
    shutil.copytree(webarena_dir(), tmp_path / "web" / "webarena")
    code = f"import agentenvs; print(agentenvs.get_task({task_id!r}).content_hash())"
    elsewhere = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "AGENTENVS_TASKS_DIR": str(tmp_path)},
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout.strip()  # fmt: skip
    assert elsewhere == agentenvs.get_task(task_id).content_hash()
