"""Faults and isolation: a site killed mid-episode is infra, junk never breaks the env,
parallel episodes do not see each other's writes, and a fork diverges without touching its parent."""

from __future__ import annotations

import os
import signal
import threading

import agentenvs
from agentenvs.envs.web.session import origin_of
from agentenvs.validate import play

CART = "SELECT COUNT(*) FROM cart_items"


def test_site_killed_mid_episode_is_infra_and_reset_recovers(web_env) -> None:
    web_env.reset(seed=0, options={"task_id": "web/shop-add-to-cart-0"})
    site = web_env.site("shop")
    os.killpg(site.pid, signal.SIGKILL)
    site._proc.wait(timeout=10)
    _, reward, terminated, truncated, info = web_env.step("noop()")
    assert info["error_kind"] == "infra" and truncated and not terminated and reward == 0.0
    web_env.reset(seed=0, options={"task_id": "web/shop-add-to-cart-0"})
    assert web_env.site("shop").pid != site.pid
    info, _ = play(web_env, web_env.oracle_actions())
    assert info["score"] == 1.0


def test_junk_actions_cost_a_step_and_leave_the_env_usable(web_env) -> None:
    obs, _ = web_env.reset(seed=0, options={"task_id": "web/shop-price-0"})
    junk = [
        "click('99999')",
        "click('a\"] , *')",
        "fill('1')",
        "eval('1')",
        {"name": "click", "arguments": {}},
        {"name": "click", "arguments": "not json"},
        "tab_focus(7)",
        "upload_file('1', '/etc/passwd')",
        "\x00",
        42,
    ]
    for action in junk:
        after, reward, terminated, truncated, info = web_env.step(action)
        assert info["action_error"], action
        assert not (terminated or truncated) and reward == 0.0
    assert info["step"] == len(junk)
    after, _, _, _, info = web_env.step({"name": "goto", "arguments": {"url": web_env.site_url("shop:/search")}})
    assert info["action_error"] is None and after["url"].endswith("/search")


def test_parallel_episodes_on_one_site_do_not_see_each_others_writes() -> None:
    envs = [agentenvs.make("web/shop-add-to-cart-0").unwrapped for _ in range(2)]
    try:
        for env in envs:
            env.reset(seed=0)
        results: dict[int, float] = {}

        def solve(i: int) -> None:
            info, _ = play(envs[i], envs[i].oracle_actions() if i == 0 else ["noop()"])
            results[i] = info["score"]

        threads = [threading.Thread(target=solve, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert results == {0: 1.0, 1: 0.0}
        assert envs[0].site("shop").query(CART)[0][0] == 1
        assert envs[1].site("shop").query(CART)[0][0] == 0
        assert envs[0].site("shop").db_path != envs[1].site("shop").db_path
    finally:
        for env in envs:
            env.close()


def test_a_fork_diverges_from_its_parent_without_touching_it(web_env) -> None:
    parent = agentenvs.make("web/shop-buy-0").unwrapped
    try:
        parent.reset(seed=0)
        plan = parent.oracle_actions()
        for action in plan[:3]:  # product page, quantity, add to cart
            parent.step(action)
        forked = parent.fork_sites()
        web_env.reset(seed=0, options={"task_id": "web/shop-buy-0", "fork": forked})
        assert web_env.site("shop").query(CART)[0][0] == 1, "the branch starts from the parent's state"
        info, _ = play(web_env, web_env.oracle_actions()[3:])
        assert info["score"] == 1.0
        assert parent.site("shop").query(CART)[0][0] == 1
        assert (
            parent.site("shop").query(
                "SELECT COUNT(*) FROM orders WHERE status = 'processing' AND created = '2026-11-01'"
            )[0][0]
            == 0
        )
        web_env.reset(seed=0, options={"task_id": "web/shop-buy-0"})
        assert web_env.site("shop").query(CART)[0][0] == 0, "a plain reset is the snapshot again"
    finally:
        parent.close()


def test_a_page_that_never_finishes_loading_is_shown_and_the_env_goes_on() -> None:
    """An image that never arrives keeps the load event from firing: the wait is bounded, not fatal."""
    import http.server

    class Hanging(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            if self.path == "/":
                body = b"<title>Slow</title><h1>Half there</h1><img src='/never.png'>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                release.wait(30)

    release = threading.Event()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hanging)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = agentenvs.make("web/shop-price-0", load_timeout=1.0).unwrapped
    try:
        env.reset(seed=0)
        origin = "http://slow.web.test"  # this test's own site joins the env's proxy and allow-list
        sites = env._upstream
        env._upstream = lambda name: ("127.0.0.1", server.server_port) if name == "slow" else sites(name)
        env._session.allowed = env._session.allowed | {origin_of(origin)}
        obs, _, terminated, truncated, info = env.step(f"goto('{origin}/')")
        assert "heading 'Half there'" in obs["text"] and obs["url"] == f"{origin}/"
        assert not (terminated or truncated) and info.get("error_kind") != "infra"
        obs, _, _, _, info = env.step(f"goto({env.site_url('shop:/search')!r})")
        assert info["action_error"] is None and obs["url"].endswith("/search")
    finally:
        release.set()
        server.shutdown()
        env.close()


def _chromium_browser_pids() -> list[int]:
    """This process's Chromium browser processes (descendants, not renderers or helpers)."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
            pid = int(entry)
            chain = pid
            for _ in range(6):  # walk up to us: chromium <- playwright driver <- this process
                chain = int(open(f"/proc/{chain}/stat").read().rsplit(")", 1)[1].split()[1])
                if chain == me:
                    break
        except (OSError, ValueError, IndexError):
            continue
        if chain == me and cmdline[0].endswith(b"chromium") and not any(a.startswith(b"--type=") for a in cmdline):
            found.append(pid)
    return found


def test_chromium_killed_mid_episode_is_infra_and_reset_recovers() -> None:
    env = agentenvs.make("web/shop-add-to-cart-0").unwrapped
    try:
        env.reset(seed=0)
        pids = _chromium_browser_pids()
        assert pids, "found the browser process"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        _, reward, terminated, truncated, info = env.step("noop()")
        assert info["error_kind"] == "infra" and truncated and not terminated and reward == 0.0
        env.reset(seed=0)
        assert set(_chromium_browser_pids()).isdisjoint(pids)
        info, _ = play(env, env.oracle_actions())
        assert info["score"] == 1.0
    finally:
        env.close()


def test_site_processes_die_with_the_env_process() -> None:
    """However the env's process ends (here os._exit, no cleanup), its site servers do not outlive it."""
    import subprocess
    import sys
    import time

    code = (
        "from agentenvs.envs.web.sites.process import SiteProcess; s = SiteProcess('forum');"
        " print(s.pid, flush=True); import os; os._exit(0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    pid = int(out.stdout.split()[0])
    for _ in range(100):  # bounded: up to 10 s for the orphan to notice its closed stdin
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"site process {pid} outlived its env")


def test_close_gives_up_on_a_stuck_browser_lane_and_the_next_env_gets_a_new_one(monkeypatch) -> None:
    """A lane whose thread hangs (a call on a Chromium killed under it) bounds close() and is replaced."""
    import threading
    import time

    from agentenvs.envs.web import lanes as lanes_module
    from agentenvs.envs.web.browser import shared_browser

    monkeypatch.setattr(lanes_module, "WAIT_S", 1.0)
    lanes = lanes_module.Lanes(None)
    stuck = lanes.thread(0)
    unblock = threading.Event()
    stuck.submit(lambda browser: unblock.wait(60))
    closed = []

    class Context:
        def close(self) -> None:
            closed.append(True)

    lanes.retire(Context(), 0)  # queued behind the hung call
    started = time.monotonic()
    lanes.release()
    waited = time.monotonic() - started
    try:
        assert waited < 30, f"close waited {waited:.0f} s on a stuck lane"
        assert not closed
        fresh = shared_browser(0)
        assert fresh is not stuck and fresh.connected()
        assert lanes.thread(0) is fresh
    finally:
        unblock.set()
    stuck._thread.join(timeout=30)
    assert closed and not stuck.alive, "the stuck thread finishes its queue and ends"
