"""Stable site origins (local backend): every session shows ``http://<site>.web.test``, an absolute goto to
it works in any session and reaches that session's own server, and the proxy behind it forwards nothing else."""

from __future__ import annotations

import http.client
import re

import pytest

import agentenvs

CART = "SELECT COUNT(*) FROM cart_items"


@pytest.fixture(scope="module")
def two_envs():
    envs = [agentenvs.make("web/shop-buy-0", prepare_ahead=False).unwrapped for _ in range(2)]
    yield envs
    for env in envs:
        env.close()


def test_two_sessions_show_the_same_page_at_the_same_origin_and_stay_apart(two_envs) -> None:
    a, b = two_envs
    obs_a, _ = a.reset(seed=0)
    obs_b, _ = b.reset(seed=0)
    assert obs_a["url"] == obs_b["url"] == "http://shop.web.test/"
    assert obs_a["text"] == obs_b["text"], "the whole observation is the same in every session"
    assert "127.0.0.1" not in obs_a["text"] and "Northwind Shop - http://shop.web.test/" in obs_a["tabs"]
    assert a.site("shop").app_port != b.site("shop").app_port
    for action in a.oracle_actions()[:3]:  # the product page (an absolute goto), the quantity, add to cart
        obs_a, _, _, _, info = a.step(action)
        assert info["action_error"] is None, info["action_error"]
    assert obs_a["url"] == "http://shop.web.test/cart"
    obs_b, _, _, _, info = b.step('goto("http://shop.web.test/cart")')
    assert info["action_error"] is None and obs_b["url"] == "http://shop.web.test/cart"
    assert a.site("shop").query(CART)[0][0] == 1 and b.site("shop").query(CART)[0][0] == 0
    assert obs_a["text"] != obs_b["text"], "each session's origin is its own server: b's cart is empty"


def _through(env, method: str, target: str) -> int:
    """The status of ``method target`` sent to ``env``'s proxy as the browser would send it."""
    host, port = env.proxy.server.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, target)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_the_proxy_forwards_only_to_the_envs_own_site_apps(two_envs) -> None:
    a, b = two_envs
    a.reset(seed=0)
    shop = a.site("shop")
    assert _through(a, "GET", "http://shop.web.test/") == 200
    assert _through(a, "GET", "http://shop.web.test:80/search?q=kettle") == 200
    refused = [
        "http://forum.web.test/",  # a site this env does not serve
        f"http://shop.web.test:{shop.control_port}/query",  # the control plane behind the stable host
        f"http://127.0.0.1:{shop.control_port}/health",  # the control plane itself
        f"http://127.0.0.1:{b.site('shop').app_port}/",  # another session's site
        "http://example.com/",
        "https://shop.web.test/",
    ]
    assert {target: _through(a, "GET", target) for target in refused} == dict.fromkeys(refused, 403)
    assert _through(a, "CONNECT", "shop.web.test:443") == 403


def test_a_miniwob_page_has_a_stable_origin_too() -> None:
    env = agentenvs.make("web/miniwob.click-test", prepare_ahead=False).unwrapped
    try:
        obs, _ = env.reset(seed=0)
        assert obs["url"] == "http://miniwob.web.test/miniwob/click-test.html"
        obs, reward, terminated, _, _ = env.step(env.oracle_actions()[0])
        assert terminated and reward == 1.0
    finally:
        env.close()


def test_a_redirect_to_a_site_of_an_earlier_task_is_refused() -> None:
    """Playwright's route never sees a redirect's next hop: a sign-in sent on to "/\\\\mail.web.test/..."
    took a shop task's browser to the mail site this env still ran from its previous task. The sites
    no longer redirect off themselves, and the proxy forwards only the current task's sites."""
    env = agentenvs.make("web/mail-latest-subject-0").unwrapped
    try:
        env.reset(seed=0)
        env.reset(seed=0, options={"task_id": "web/shop-price-0"})
        assert env.proxy.upstream("http://mail.web.test/mail/inbox") is None
        assert env.proxy.upstream("http://miniwob.web.test/miniwob/click-test.html") is None
        assert env.proxy.upstream("http://shop.web.test/cart") is not None
        obs, *_ = env.step("goto('http://shop.web.test/login?next=/%5Cmail.web.test/mail/inbox')")
        bid = {k: re.search(rf"\[(\d+)\] textbox '{k}", obs["text"]).group(1) for k in ("Username", "Password")}
        button = re.findall(r"\[(\d+)\] button 'Sign in", obs["text"])[-1]
        obs, *_ = env.step(
            f"fill('{bid['Username']}', 'emma')\nfill('{bid['Password']}', 'emma-pass')\nclick('{button}')"
        )
        assert obs["url"].startswith("http://shop.web.test/"), obs["url"]
    finally:
        env.close()
