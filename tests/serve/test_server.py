"""The env server for real: on loopback, with our client, the websockets library's client and httpx."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import gymnasium
import httpx
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

import agentenvs
from agentenvs.serve import BackgroundServer, RemoteEnvError
from agentenvs.serve.sessions import make_registered_env
from tests.serve.serving import TERMINAL_TASK, TEXT_TASK, wait_for


def _ws(server: BackgroundServer):
    return connect(
        server.url.replace("http", "ws") + "/v1/ws", additional_headers={"Authorization": f"Bearer {server.token}"}
    )


def _http(server: BackgroundServer, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token or server.token}"}
    return httpx.Client(base_url=server.url, headers=headers, timeout=120)


@pytest.mark.parametrize("task", [TEXT_TASK, TERMINAL_TASK])
def test_remote_env_has_the_local_spaces_and_passes_check_env(server, task):
    kwargs: dict[str, Any] = {"backend": "local"} if task.startswith("terminal/") else {}
    local = agentenvs.make(task, **kwargs)
    env = agentenvs.remote(server.url, server.token).make(task, **kwargs)
    try:
        assert env.observation_space == local.observation_space
        assert env.action_space == local.action_space
        assert env.action_tools == local.unwrapped.action_tools
        check_env(env, skip_render_check=True)
    finally:
        env.close()
        local.close()


def _timeless(info: dict[str, Any]) -> dict[str, Any]:
    """Info without the agent's wall-clock time, which two runs never share."""
    return {k: v for k, v in info.items() if k != "elapsed_sec"}


def test_remote_episode_equals_the_local_one(server):
    local = agentenvs.make(TEXT_TASK)
    env = agentenvs.remote(server.url, server.token).make(TEXT_TASK)
    try:
        local_obs, local_info = local.reset(seed=3)
        obs, info = env.reset(seed=3)
        assert obs == local_obs and _timeless(info) == _timeless(local_info)
        actions = local.unwrapped.oracle_actions()
        assert actions, "the task has an oracle solution"
        for action in [*actions, "done"]:
            expected = local.step(action)
            got = env.step(action)
            assert got[:4] == expected[:4] and _timeless(got[4]) == _timeless(expected[4])
            if expected[2] or expected[3]:
                break
        assert got[4]["score"] == 1.0
    finally:
        env.close()
        local.close()


def test_http_and_websocket_refuse_a_missing_or_wrong_token(server):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": server.token}):
        with httpx.Client(base_url=server.url, timeout=30, headers=headers) as client:
            reply = client.post("/v1/sessions", json={"env": TEXT_TASK})
            assert reply.status_code == 401 and "token" in reply.json()["error"]
            assert client.get("/v1/health").status_code == 401
    with pytest.raises(RemoteEnvError) as refused:
        agentenvs.remote(server.url, "wrong").make(TEXT_TASK)
    assert refused.value.status == 401 and "wrong token" in str(refused.value)
    with pytest.raises(InvalidStatus) as other_client:
        connect(server.url.replace("http", "ws") + "/v1/ws", additional_headers={"Authorization": "Bearer wrong"})
    assert other_client.value.response.status_code == 401
    assert server.manager.live == 0


def test_the_session_bound_refuses_more_and_frees_on_close():
    with BackgroundServer(max_sessions=2) as server:
        client = agentenvs.remote(server.url, server.token)
        first, second = client.make(TEXT_TASK), client.make(TEXT_TASK)
        with pytest.raises(RemoteEnvError) as refused:
            client.make(TEXT_TASK)
        assert refused.value.status == 429 and "--max-sessions" in str(refused.value)
        first.close()
        third = client.make(TEXT_TASK)
        third.reset(seed=0)
        assert server.manager.live == 2
        second.close()
        third.close()
        assert server.manager.live == 0


def test_a_client_that_disconnects_mid_episode_frees_its_sandbox(server):
    from tests.conftest import _our_local_sandboxes

    before = set(_our_local_sandboxes())
    ws = _ws(server).__enter__()
    ws.send(json.dumps({"id": 1, "op": "make", "env": TERMINAL_TASK, "kwargs": {"backend": "local"}}))
    session = json.loads(ws.recv(timeout=120))["result"]["session"]
    ws.send(json.dumps({"id": 2, "op": "reset", "session": session, "seed": 0}))
    assert json.loads(ws.recv(timeout=120))["ok"]
    ws.send(json.dumps({"id": 3, "op": "step", "session": session, "action": "echo half-way"}))
    assert json.loads(ws.recv(timeout=120))["ok"]
    assert set(_our_local_sandboxes()) - before, "the episode holds a local sandbox"
    ws.close()
    assert wait_for(lambda: server.manager.live == 0)
    assert wait_for(lambda: not set(_our_local_sandboxes()) - before), "the sandbox outlived its client"
    with _http(server) as http:
        assert http.post(f"/v1/sessions/{session}/step", json={"action": "ls"}).status_code == 404


def test_idle_sessions_are_reaped():
    with BackgroundServer(idle_timeout=0.3) as server, _http(server) as http:
        made = http.post("/v1/sessions", json={"env": TEXT_TASK})
        assert made.status_code == 201
        session = made.json()["session"]
        assert wait_for(lambda: server.manager.live == 0, timeout=10)
        assert server.manager.reaped == 1
        gone = http.post(f"/v1/sessions/{session}/reset", json={"seed": 0})
        assert gone.status_code == 404 and "reaped" in gone.json()["error"]


def test_malformed_requests_get_4xx_and_leave_the_env_intact(server):
    with _http(server) as http:
        session = http.post("/v1/sessions", json={"env": TEXT_TASK}).json()["session"]
        first = http.post(f"/v1/sessions/{session}/reset", json={"seed": 1}).json()
        bad = {
            "not json": (f"/v1/sessions/{session}/step", b"{oops", 400),
            "a list": (f"/v1/sessions/{session}/step", b"[1, 2]", 400),
            "no action": (f"/v1/sessions/{session}/step", b"{}", 422),
            "unknown field": (f"/v1/sessions/{session}/step", b'{"action": "look", "hack": 1}', 422),
            "seed of the wrong type": (f"/v1/sessions/{session}/reset", b'{"seed": "abc"}', 422),
            "unknown op": (f"/v1/sessions/{session}/explode", b"{}", 404),
            "unknown session": ("/v1/sessions/nope/step", b'{"action": "look"}', 404),
            "unknown task": ("/v1/sessions", b'{"env": "textgame/no-such-task"}', 404),
            "unknown family": ("/v1/sessions", b'{"env": "nofamily/x"}', 404),
            "not a task id": ("/v1/sessions", b'{"env": "agentenvs"}', 404),
            "a bad kwarg": ("/v1/sessions", b'{"env": "textgame/maze-hard-2000001", "kwargs": {"nope": 1}}', 400),
            "task twice": ("/v1/sessions", b'{"env": "textgame/maze-hard-2000001", "kwargs": {"task_id": "x"}}', 400),
            "a gym id outside agentenvs": ("/v1/sessions", b'{"env": "CartPole-v1"}', 404),
        }
        for what, (path, body, status) in bad.items():
            reply = http.post(path, content=body)
            assert reply.status_code == status, (what, reply.status_code, reply.text)
            assert reply.json()["error"], what
        assert server.manager.live == 1
        stepped = http.post(f"/v1/sessions/{session}/step", json={"action": "look"}).json()
        assert stepped["info"]["step"] == 1 and stepped["info"]["episode_id"] == first["info"]["episode_id"]
        junk = http.post(f"/v1/sessions/{session}/step", json={"action": {"name": 5}}).json()
        assert junk["info"]["action_error"] and junk["info"]["step"] == 2
        assert http.delete(f"/v1/sessions/{session}").json() == {"closed": True}
    assert server.manager.live == 0


def test_websocket_errors_keep_the_connection_and_the_session(server):
    with _ws(server) as ws:
        ws.send(b"\x00binary")
        assert json.loads(ws.recv(timeout=30))["error"]["status"] == 400
        ws.send("{not json")
        assert json.loads(ws.recv(timeout=30))["error"]["status"] == 400
        ws.send(json.dumps({"id": 7, "op": "teleport"}))
        reply = json.loads(ws.recv(timeout=30))
        assert reply["id"] == 7 and reply["error"]["status"] == 404  # as over HTTP (docs/serve.md)
        ws.send(json.dumps({"id": 8, "op": "make", "env": TEXT_TASK}))
        session = json.loads(ws.recv(timeout=60))["result"]["session"]
        ws.send(json.dumps({"id": 9, "op": "step", "session": session, "action": "look"}))
        early = json.loads(ws.recv(timeout=30))
        assert early["error"]["type"] == "ResetNeeded" and early["error"]["status"] == 409
        ws.send(json.dumps({"id": 10, "op": "reset", "session": session, "seed": 0}))
        assert json.loads(ws.recv(timeout=30))["ok"]
        ws.send(json.dumps({"id": 11, "op": "step", "session": session, "action": "look"}))
        assert json.loads(ws.recv(timeout=30))["result"]["info"]["step"] == 1
    assert wait_for(lambda: server.manager.live == 0)


class _PictureEnv(gymnasium.Env[dict[str, Any], str]):
    """A small env whose observation is a picture that changes with each action."""

    def __init__(self) -> None:
        self.observation_space = spaces.Dict(
            {"screenshot": spaces.Box(0, 255, shape=(48, 64, 3), dtype=np.uint8), "count": spaces.Discrete(100)}
        )
        self.action_space = spaces.Text(20)
        self._count = 0

    def _obs(self) -> dict[str, Any]:
        picture = np.zeros((48, 64, 3), dtype=np.uint8)
        picture[: self._count + 1, :, 0] = 200
        picture[:, :, 1] = self.np_random.integers(0, 255, size=(48, 64), dtype=np.uint8)
        return {"screenshot": picture, "count": self._count}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._count = 0
        return self._obs(), {}

    def step(self, action):
        self._count += 1
        return self._obs(), 1.0, self._count >= 3, False, {"action": action}


def _pictures(env: str, kwargs: dict[str, Any]) -> gymnasium.Env:
    return _PictureEnv() if env == "test/pictures" else make_registered_env(env, kwargs)


def test_images_travel_as_png_bytes_and_come_back_equal():
    with BackgroundServer(make_env=_pictures) as server:
        env = agentenvs.remote(server.url, server.token).make("test/pictures")
        local = _PictureEnv()
        try:
            obs, _ = env.reset(seed=5)
            local_obs, _ = local.reset(seed=5)
            assert obs["screenshot"].dtype == np.uint8 and np.array_equal(obs["screenshot"], local_obs["screenshot"])
            got, expected = env.step("a"), local.step("a")
            assert np.array_equal(got[0]["screenshot"], expected[0]["screenshot"]) and got[1:] == expected[1:]
            check_env(env, skip_render_check=True)
        finally:
            env.close()
        with _http(server) as http:
            session = http.post("/v1/sessions", json={"env": "test/pictures"}).json()["session"]
            reply = http.post(f"/v1/sessions/{session}/reset", json={"seed": 5})
            image = reply.json()["observation"]["screenshot"]["$image"]
            assert image["format"] == "png" and image["shape"] == [48, 64, 3]
            assert image["data"].startswith("iVBORw0KGgo")  # base64 of the PNG signature
            assert len(reply.content) < 48 * 64 * 3, "the picture travels compressed, not as a JSON array"
            jpeg = http.post("/v1/sessions", json={"env": "test/pictures", "image_format": "jpeg"}).json()["session"]
            shown = http.post(f"/v1/sessions/{jpeg}/reset", json={"seed": 5}).json()["observation"]["screenshot"]
            assert shown["$image"]["format"] == "jpeg" and shown["$image"]["data"].startswith("/9j/")


def test_the_documented_schema_is_the_servers(server):
    from pathlib import Path

    from agentenvs.serve.protocol import schema_text

    documented = Path(__file__).parents[2] / "docs" / "serve-protocol.schema.json"
    assert documented.read_text() == schema_text(), (
        "regenerate: agentenvs serve --schema > docs/serve-protocol.schema.json"
    )
    with _http(server) as http:
        assert http.get("/v1/schema").json() == json.loads(schema_text())


@pytest.mark.parametrize("task", [TEXT_TASK, TERMINAL_TASK])
def test_snapshot_restore_and_fork_through_the_server(server, task):
    kwargs: dict[str, Any] = {"backend": "local"} if task.startswith("terminal/") else {}
    env = agentenvs.remote(server.url, server.token).make(task, **kwargs)
    try:
        env.reset(seed=2)
        first = "look" if task.startswith("textgame/") else "mkdir -p /tmp/a && echo one > /tmp/a/f"
        later = "inventory" if task.startswith("textgame/") else "echo two > /tmp/a/f"
        env.step(first)
        ref = env.snapshot()
        _, restored_now = env.restore(ref)
        at_snapshot = restored_now["state_hash"]
        env.step(later)
        _, info = env.restore(ref)
        assert info["state_hash"] == at_snapshot and info["step"] == 1
        child = env.fork()
        try:
            assert server.manager.live == 2 and child.session != env.session
            child.step(later)
            _, _, terminated, _, ended = child.step("fail")
            assert terminated and ended["score"] == 0.0
            _, parent = env.restore(ref)
            assert parent["state_hash"] == at_snapshot
            probe = "look" if task.startswith("textgame/") else "cat /tmp/a/f"
            seen, _, terminated, _, going = env.step(probe)
            assert not terminated and going["step"] == 2
            if task.startswith("terminal/"):
                assert "one" in seen["text"] and "two" not in seen["text"], "the fork's writes never reach its parent"
        finally:
            child.close()
    finally:
        env.close()
    assert wait_for(lambda: server.manager.live == 0)


class _WaitingEnv(gymnasium.Env[dict[str, Any], str]):
    """Each step sleeps for the seconds its action says; ``quick_steps`` is what the env is made with."""

    def __init__(self, quick: bool) -> None:
        self.observation_space = spaces.Dict({"text": spaces.Text(20)})
        self.action_space = spaces.Text(20, charset="0123456789.")
        self.quick_steps = quick

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return {"text": "ready"}, {}

    def step(self, action):
        time.sleep(float(action))
        return {"text": "done"}, 0.0, False, False, {}


def _waiting(env: str, kwargs: dict[str, Any]) -> gymnasium.Env:
    return _WaitingEnv(quick=env == "test/quick")


def test_a_slow_step_never_holds_up_another_session():
    """Each connection has its thread and each session its own: a quick env's steps run on the former,
    the others' on the latter, and either way a slow step holds up only the client that sent it."""
    with BackgroundServer(make_env=_waiting) as server:
        client = agentenvs.remote(server.url, server.token)
        slow, quick, other = client.make("test/slow"), client.make("test/quick"), client.make("test/slow")
        try:
            for env in (slow, quick, other):
                env.reset(seed=0)
            for sleeper in (slow, quick):
                stepping = threading.Thread(target=sleeper.step, args=("3",))
                stepping.start()
                time.sleep(0.2)
                for _ in range(5):
                    other.step("0")
                assert stepping.is_alive(), "another session's steps waited for the slow one to finish"
                stepping.join()
        finally:
            for env in (slow, quick, other):
                env.close()
