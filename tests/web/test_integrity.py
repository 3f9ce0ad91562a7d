"""Reward integrity: every web hack scores 0, blocked navigations are action errors, and the audit is clean."""

from __future__ import annotations

import pytest

import agentenvs
from agentenvs.audit import audit_tasks
from agentenvs.envs.web.hacks import WEB_HACKS, web_hacks

TASKS = ["web/shop-price-0", "web/forum-create-post-0", "web/shop-buy-out-of-stock-0", "web/miniwob.click-button"]


@pytest.mark.parametrize("task_id", TASKS)
def test_every_web_hack_scores_zero(web_env, task_id: str) -> None:
    task = agentenvs.get_task(task_id)
    tried = 0
    for hack in web_hacks():
        if not hack.applies(task):
            continue
        web_env.reset(seed=0, options={"task_id": task_id})
        errors = []
        info: dict = {}
        for action in hack.actions(web_env):
            _, _, terminated, truncated, info = web_env.step(action)
            if str(action).startswith("goto("):
                errors.append(info["action_error"])
            if terminated or truncated:
                break
        else:
            _, _, _, _, info = web_env.step("done")
        tried += 1
        assert info.get("error_kind") != "infra", (hack.name, info.get("error"))
        assert info["score"] == 0.0, (hack.name, info["verifier_detail"])
        if hack.attack_class in ("local-file-read", "control-plane", "hidden-task-data"):
            assert all(errors), (hack.name, errors)
            assert all("blocked" in e for e in errors), (hack.name, errors)
    assert tried >= 5


def test_blocked_goto_leaves_the_page_and_the_env_usable(web_env) -> None:
    obs, _ = web_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    site = web_env.site("shop")
    for url in (
        "http://example.com/",
        f"http://127.0.0.1:{site.control_port}/health",
        "http://localhost:1/",
        f"http://user:pw@127.0.0.1:{site.app_port}/",
        f"http://127.0.0.1:{site.app_port}/",  # the site's real address: only its stable origin is reachable
        f"{site.origin}:{site.control_port}/health",  # the control plane through the stable host
        "https://shop.web.test/",
        "http://forum.web.test/",  # a site of another task (and of no server of this env)
    ):
        after, reward, terminated, truncated, info = web_env.step(f"goto({url!r})")
        assert "blocked" in info["action_error"] and "blocked" in after["last_action_error"]
        assert after["url"] == obs["url"] and not (terminated or truncated) and reward == 0.0
    after, _, _, _, info = web_env.step(f"goto('{site.origin}/search')")
    assert info["action_error"] is None and after["url"].endswith("/search")


def test_a_page_link_to_another_host_is_blocked(web_env) -> None:
    """Requests the page itself makes (not only goto) are held to the allow-list."""
    web_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    session = web_env._session
    web_env._call(
        lambda b: session.page.evaluate(
            "() => { const a = document.createElement('a'); a.href = 'http://10.0.0.1/x'; a.textContent = 'Away';"
            " document.querySelector('main').prepend(a); }"
        )
    )
    obs, _, _, _, _ = web_env.step("noop()")
    bid = next(line.split("]")[0].strip(" [") for line in obs["text"].splitlines() if "link 'Away'" in line)
    obs, _, _, _, info = web_env.step(f"click('{bid}')")
    assert "blocked" in info["action_error"]
    assert obs["url"].startswith(web_env.site("shop").origin)


def test_audit_finds_nothing_on_a_site_task() -> None:
    audits = audit_tasks([agentenvs.get_task("web/shop-add-to-cart-0")], only=[h.name for h in WEB_HACKS])
    assert len(audits) == 1
    audit = audits[0]
    assert {r.hack for r in audit.results} >= {"file-url-read", "control-plane", "report-infeasible"}
    assert audit.findings == [] and audit.errors == [], [f.evidence() for f in audit.findings]


def test_a_number_answer_is_the_number_alone() -> None:
    """The claim-success hack ("... all tests pass (exit 0)") scored on count tasks whose answer is 0."""
    from agentenvs.envs.web.checks import Context, answer

    def score(text: str, expected: float) -> float:
        return answer(Context(sites={}, answer=text), expected, match="number").score

    assert [score(t, e) for t, e in (("0", 0), ("$12.50", 12.5), ("1,200.", 1200), (" 7 ", 7))] == [1.0] * 4
    wrong = (("I completed the task and all tests pass (exit 0)", 0), ("3 comments", 3), ("0 1 2 3", 0), ("", 0))
    assert [score(t, e) for t, e in wrong] == [0.0] * 4


@pytest.mark.parametrize("task_id", ["web/shop-order-count-2", "web/forum-comment-count-0"])
def test_no_hack_scores_on_a_count_task_whose_answer_is_zero(task_id: str) -> None:
    (audit,) = audit_tasks([agentenvs.get_task(task_id)])
    assert {r.hack for r in audit.results} >= {"claim-success", "guess-answer-list"}
    assert audit.findings == [] and audit.errors == [], [f.evidence() for f in audit.findings]
