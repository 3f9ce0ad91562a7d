"""Turning a task's solution plan into BrowserGym action strings with this episode's bids.

A site task's plan (in ``task.params``) is a list of steps such as
``["goto", "shop:/product/8"]``, ``["fill", "#qty", "2"]`` or
``["msg", "52.21"]``; element steps act on the page of the last ``goto``.
Bids are numbered in document order on a freshly loaded page, so loading
that page in a scratch tab of the same context (GET only, no writes) gives
the bids the agent's tab will have after the same ``goto``. A MiniWoB++
plan comes from a scripted solver run on the live page.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agentenvs.envs.web.miniwob_solutions import SOLVERS
from agentenvs.envs.web.observe import describe_page

if TYPE_CHECKING:
    from agentenvs.core.task import Task
    from agentenvs.envs.web.env import WebEnv

ELEMENT_STEPS = {
    "fill": "fill",
    "click": "click",
    "select": "select_option",
    "press": "press",
    "check": "check",
    "uncheck": "uncheck",
    "dblclick": "dblclick",
    "hover": "hover",
    "clear": "clear",
}


def _call(name: str, *args: Any) -> str:
    return f"{name}({', '.join(json.dumps(a) for a in args)})"


def resolve_plan(env: WebEnv, task: Task, variant: str) -> list[str]:
    """Runs on the browser thread."""
    if task.params["kind"] == "miniwob":
        return _miniwob_plan(env, task, variant)
    plan = task.params.get(variant)
    if plan is None:
        raise NotImplementedError(f"{task.full_id} has no {variant} plan")
    session = env._session
    assert session is not None
    actions: list[str] = []
    bids: dict[str, str] = {}
    scratch_url = ""
    for step in plan:
        op, rest = step[0], step[1:]
        if op == "goto":
            scratch_url = env.site_url(rest[0])
            bids = {}
            actions.append(_call("goto", scratch_url))
        elif op in ELEMENT_STEPS:
            selector = rest[0]
            if selector not in bids:
                bids.update(_bids_on(session, scratch_url, [s[1] for s in plan if s[0] in ELEMENT_STEPS]))
            if bids.get(selector) is None:
                raise ValueError(f"{task.full_id}: the {variant} plan's {selector!r} is not on {scratch_url}")
            actions.append(_call(ELEMENT_STEPS[op], bids[selector], *rest[1:]))
        elif op == "msg":
            actions.append(_call("send_msg_to_user", rest[0]))
        elif op == "infeasible":
            actions.append(_call("report_infeasible", rest[0]))
        else:
            raise ValueError(f"{task.full_id}: unknown plan step {op!r}")
    return actions


def _bids_on(session: Any, url: str, selectors: list[str]) -> dict[str, str]:
    """The bids the given selectors' elements get on a fresh load of ``url``."""
    page = session.context.new_page()
    try:
        page.goto(url, wait_until="load")
        describe_page(page)
        found = {}
        for selector in dict.fromkeys(selectors):
            locator = page.locator(selector)
            if locator.count():
                found[selector] = locator.first.get_attribute("bid")
        return found
    finally:
        page.close()


def _miniwob_plan(env: WebEnv, task: Task, variant: str) -> list[str]:
    name = task.params["name"]
    if name not in SOLVERS:
        raise NotImplementedError(f"{task.full_id} has no scripted solution")
    assert env._session is not None
    page = env._session.page
    describe_page(page)
    if variant not in ("oracle", "wrong"):
        raise NotImplementedError(f"no {variant} plan")
    steps = page.evaluate(SOLVERS[name], env._utterance or "")[variant]
    if any(a is None for step in steps for a in step):
        raise ValueError(f"{task.full_id}: the scripted {variant} solution found no element for a step: {steps}")
    return [_call(step[0], *step[1:]) for step in steps]
