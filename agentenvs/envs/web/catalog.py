"""The web family's tasks: templated site tasks (``<template>-<seed>``) and MiniWoB++ (``miniwob.<name>``).

A site task is built from its template, its seed and the site's snapshot;
MiniWoB++ tasks are seeded by the reset seed, as MiniWoB++ itself is.
"""

from __future__ import annotations

import random
import sqlite3
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentenvs.core.errors import TaskNotFoundError
from agentenvs.core.registry import tasks_root
from agentenvs.core.task import AgentSection, Checkpoint, CheckSpec, EvaluatorSection, LimitsSection, Task, TaskConfig
from agentenvs.envs.web import miniwob
from agentenvs.envs.web.sites import snapshot
from agentenvs.envs.web.templates_forum import TEMPLATES as FORUM_TEMPLATES
from agentenvs.envs.web.templates_mail import TEMPLATES as MAIL_TEMPLATES
from agentenvs.envs.web.templates_shop import TEMPLATES as SHOP_TEMPLATES
from agentenvs.envs.web.templates_tracker import TEMPLATES as TRACKER_TEMPLATES
from agentenvs.envs.web.webarena import load_config

TEMPLATES = {**SHOP_TEMPLATES, **FORUM_TEMPLATES, **MAIL_TEMPLATES, **TRACKER_TEMPLATES}
#: Seeds listed in the registry per template (any seed loads on demand).
LISTED_SEEDS = range(5)
MINIWOB_PREFIX = "miniwob."
WEBARENA_PREFIX = "webarena."


def _site_of(template: str) -> str:
    return template.split("-", 1)[0]


@lru_cache(maxsize=2048)
def load(task_id: str) -> Task:
    if task_id.startswith(MINIWOB_PREFIX):
        return _miniwob_task(task_id)
    if task_id.startswith(WEBARENA_PREFIX):
        path = webarena_dir() / f"{task_id.removeprefix(WEBARENA_PREFIX)}.json"
        if not path.is_file():
            raise TaskNotFoundError(f"no WebArena-format task {task_id!r} under {webarena_dir()}")
        spec = load_config(path)
        # relative: the task's content hash (from its params) must not depend on where tasks are installed
        return _site_task(task_id, spec, spec["site"], {"config": f"webarena/{path.name}"})
    template, _, seed_text = task_id.rpartition("-")
    if template not in TEMPLATES or not seed_text.isdigit():
        raise TaskNotFoundError(
            f"no web task {task_id!r}; ids look like <template>-<seed> (templates: {', '.join(TEMPLATES)}), "
            "miniwob.<task> or webarena.<config>"
        )
    site = _site_of(template)
    db = sqlite3.connect(f"file:{snapshot(site)}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        spec: dict[str, Any] = TEMPLATES[template](random.Random(f"{template}:{seed_text}"), db)
    finally:
        db.close()
    return _site_task(
        task_id, {**spec, "tags": [template, *spec["tags"]]}, site, {"template": template, "seed": int(seed_text)}
    )


def _site_task(task_id: str, spec: dict[str, Any], site: str, extra: dict[str, Any]) -> Task:
    params = {
        "kind": "site",
        **extra,
        "sites": [site],
        "persona": spec["persona"],
        "start": spec["start"],
        "oracle": spec["oracle"],
        "wrong": spec["wrong"],
        "infeasible": spec.get("infeasible", False),
    }
    config = TaskConfig(
        id=task_id,
        family="web",
        difficulty=spec["difficulty"],
        tags=[site, *spec["tags"]],
        limits=LimitsSection(max_steps=30, step_timeout_sec=30),
        agent=AgentSection(timeout_sec=900),
        evaluator=EvaluatorSection(checks=[CheckSpec(**c) for c in spec["evaluator"]]),
        checkpoints=[Checkpoint(**c) for c in spec.get("checkpoints", [])],
        web=params,
    )
    persona = f" You are signed in as {spec['persona']}." if spec["persona"] else ""
    return Task(id=task_id, family="web", instruction=spec["instruction"] + persona, config=config, params=params)


def webarena_dir() -> Path:
    """Where WebArena-format configs live: ``tasks/web/webarena/*.json``."""
    return tasks_root() / "web" / "webarena"


def _miniwob_task(task_id: str) -> Task:
    name = task_id.removeprefix(MINIWOB_PREFIX)
    if name not in miniwob.task_names():
        raise TaskNotFoundError(f"no MiniWoB++ task {name!r} in the installed miniwob package")
    params = {"kind": "miniwob", "name": name}
    config = TaskConfig(
        id=task_id,
        family="web",
        tags=["miniwob"],
        limits=LimitsSection(max_steps=20, step_timeout_sec=30),
        agent=AgentSection(timeout_sec=600),
        evaluator=EvaluatorSection(checks=[CheckSpec(check="miniwob.success")]),
        web=params,
    )
    instruction = "Solve this MiniWoB++ task on the page (its instruction follows)."
    return Task(id=task_id, family="web", instruction=instruction, config=config, params=params)


class WebTaskSource:
    """Every template's listed seeds, then every MiniWoB++ task the installed package ships."""

    def ids(self) -> list[str]:
        sites = [f"{t}-{s}" for t in TEMPLATES for s in LISTED_SEEDS]
        configs = sorted(p.stem for p in webarena_dir().glob("*.json")) if webarena_dir().is_dir() else []
        return (
            sites + [f"{WEBARENA_PREFIX}{c}" for c in configs] + [f"{MINIWOB_PREFIX}{n}" for n in miniwob.task_names()]
        )

    def load(self, task_id: str) -> Task:
        return load(task_id)
