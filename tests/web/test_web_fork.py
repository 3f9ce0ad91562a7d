"""Fork and snapshot/restore on web tasks (local backend): the family replays, so the browser's page
comes back with the sites' databases; a fork's replay goes to its own sites, never the parent's."""

from __future__ import annotations

import agentenvs
from agentenvs.validate import play

CART = "SELECT COUNT(*) FROM cart_items"
ORDERS = "SELECT COUNT(*) FROM orders"


def test_a_fork_replays_into_its_own_sites_and_diverges_alone() -> None:
    parent = agentenvs.make("web/shop-buy-0", prepare_ahead=False, load_timeout=7.0).unwrapped
    child = None
    try:
        parent.reset(seed=0)
        plan = parent.oracle_actions()
        for action in plan[:3]:  # product page, quantity, add to cart
            parent.step(action)
        at_k, orders = parent._state_hash(), parent.site("shop").query(ORDERS)[0][0]
        child = parent.fork()
        assert not child.prepare_ahead and child.load_timeout_ms == 7000, "made with the parent's arguments"
        own = child.site("shop").origin
        assert own == parent.site("shop").origin == "http://shop.web.test", "the same stable origin in every env"
        assert child.site("shop").app_port != parent.site("shop").app_port and child._state_hash() == at_k
        assert child._last_obs["url"] == f"{own}/cart", "the fork's page is its own site's cart"
        assert child.site("shop").query(CART)[0][0] == 1
        wrong, _ = play(child, child.oracle_actions("wrong")[3:])
        assert wrong["score"] == 0.0 and child.site("shop").query(ORDERS)[0][0] == orders + 1
        assert parent._state_hash() == at_k and parent.site("shop").query(ORDERS)[0][0] == orders
        right, _ = play(parent, plan[3:])
        assert right["score"] == 1.0
    finally:
        if child is not None:
            child.close()
        parent.close()


def test_restore_gives_the_same_state_hash_and_finishes_as_from_there() -> None:
    env = agentenvs.make("web/forum-reply-0").unwrapped
    try:
        env.reset(seed=0)
        plan = env.oracle_actions()
        for action in plan[:2]:
            env.step(action)
        at_k, url = env._state_hash(), env._last_obs["url"]
        ref = env.snapshot()
        right, _ = play(env, plan[2:])
        assert right["score"] == 1.0 and env._state_hash() != at_k
        obs, info = env.restore(ref)
        assert info["state_hash"] == at_k and info["step"] == 2 and obs["url"] == url
        assert info["restored"]["strategy"] == "replay" and not env._ended
        again, _ = play(env, plan[2:])
        assert again["score"] == 1.0 and again["step"] == right["step"]
    finally:
        env.close()


def test_a_miniwob_task_forks_and_restores() -> None:
    env = agentenvs.make("web/miniwob.click-checkboxes").unwrapped
    child = None
    try:
        env.reset(seed=0)
        plan = env.oracle_actions()
        env.step(plan[0])
        at_k = env._state_hash()
        ref = env.snapshot()
        child = env.fork()
        assert child._state_hash() == at_k and child._last_obs["text"] == env._last_obs["text"]
        wrong, _ = play(child, child.oracle_actions("wrong"))
        right, _ = play(env, plan[1:])
        assert wrong["score"] == 0.0 and right["score"] == 1.0
        obs, info = env.restore(ref)
        assert info["state_hash"] == at_k
        again, _ = play(env, plan[1:])
        assert again["score"] == 1.0
    finally:
        if child is not None:
            child.close()
        env.close()
