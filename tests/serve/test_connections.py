"""The server's connections: WebSocket frames no client library would send (from a raw socket), the
bound on connections, and shutdown (SIGTERM to ``agentenvs serve``, closes racing one another)."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import gymnasium
import httpx
import pytest
from gymnasium import spaces

import agentenvs
from agentenvs.serve import BackgroundServer
from tests.serve.serving import TERMINAL_TASK, TEXT_TASK, raw_websocket, wait_for


def _masked_frame(opcode: int, payload: bytes) -> bytes:
    key = b"\x01\x02\x03\x04"
    body = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    assert len(payload) < 126
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + key + body


@pytest.mark.parametrize(
    "breach",
    [
        pytest.param(b"\x81\x05hello", id="an unmasked frame"),
        pytest.param(b"\xc1\x80abcd", id="reserved bits"),
        pytest.param(b"\x83\x80abcd", id="an unknown opcode"),
        pytest.param(b"\x81\xff" + (1 << 40).to_bytes(8, "big") + b"abcd", id="a frame of a terabyte"),
        pytest.param(b"\x01\x80abcd\x01\x80abcd", id="a message begun twice"),
    ],
)
def test_a_client_that_breaks_the_websocket_protocol_is_cut_off_and_its_sessions_closed(server, breach):
    sock = raw_websocket(server)
    make = json.dumps({"id": 1, "op": "make", "env": TEXT_TASK}).encode()
    sock.sendall(_masked_frame(0x1, make))
    assert wait_for(lambda: server.manager.live == 1)
    sock.sendall(breach)
    stream = b""
    while chunk := sock.recv(4096):  # the make's reply, the server's close frame, then the end
        stream += chunk
    assert re.search(rb"\x88[\x02-\x7d]\x03[\xea\xf1]", stream), "no close frame with 1002 or 1009"
    assert wait_for(lambda: server.manager.live == 0), "the sessions of a cut-off client were left open"
    sock.close()
    env = agentenvs.remote(server.url, server.token).make(TEXT_TASK)  # the server serves others still
    env.reset(seed=0)
    env.close()


def test_pings_are_answered_and_a_close_is_returned(server):
    sock = raw_websocket(server)
    sock.sendall(_masked_frame(0x9, b"are you there"))
    assert sock.recv(64) == b"\x8a\x0dare you there"
    sock.sendall(_masked_frame(0x8, (1000).to_bytes(2, "big")))
    assert sock.recv(64)[:4] == b"\x88\x02\x03\xe8"
    sock.close()


def test_connections_past_the_bound_get_503():
    with BackgroundServer(max_sessions=1) as server:  # room for 4 * 1 + 16 connections
        held = [raw_websocket(server) for _ in range(20)]
        try:
            with httpx.Client(base_url=server.url, timeout=30) as client:
                refused = client.get("/v1/schema")
            assert refused.status_code == 503 and "too many" in refused.json()["error"]
        finally:
            for sock in held:
                sock.close()
        assert wait_for(lambda: _served(server))


def _served(server: BackgroundServer) -> bool:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        return client.get("/v1/schema").status_code == 200


def test_the_served_command_closes_every_session_on_sigterm():
    """``agentenvs serve`` in its own process: SIGTERM ends it with its sandboxes removed."""
    from agentenvs.sandbox.local_resources import SANDBOX_PARENT

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "agentenvs.cli", "serve", "--port", str(port), "--token", "t0ken"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: _listening(port)), "agentenvs serve did not start"
        env = agentenvs.remote(f"http://127.0.0.1:{port}", "t0ken").make(TERMINAL_TASK, backend="local")
        env.reset(seed=0)
        held = list(SANDBOX_PARENT.glob(f"{server.pid}-*"))
        assert held, "the served episode holds a local sandbox"
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
        assert not [p for p in held if p.exists()], f"the server left its sandboxes behind: {held}"
    finally:
        server.kill()


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


class _SlowToCloseEnv(gymnasium.Env[dict[str, Any], str]):
    """An env whose close takes half a second and says when it has ended."""

    def __init__(self) -> None:
        self.observation_space = spaces.Dict({"text": spaces.Text(20)})
        self.action_space = spaces.Text(20)
        self.closed = threading.Event()

    def close(self) -> None:
        time.sleep(0.5)
        self.closed.set()


def test_close_all_waits_for_a_close_another_thread_began():
    """The race that left a sandbox behind at SIGTERM: a connection closing its session as the server
    closed every session; the server's close found none left to close and returned at once."""
    from agentenvs.serve.sessions import SessionManager

    made: list[_SlowToCloseEnv] = []

    def make(env: str, kwargs: dict[str, Any]) -> _SlowToCloseEnv:
        made.append(_SlowToCloseEnv())
        return made[-1]

    manager = SessionManager(make_env=make)
    session = manager.make("test/slow-to-close", {}, "png", "a-connection")
    closer = threading.Thread(target=manager.close_owned, args=("a-connection",))
    closer.start()
    assert wait_for(lambda: manager.live == 0, timeout=5)
    manager.close_all()
    assert made[0].closed.is_set(), f"close_all returned while {session.id}'s env was still closing"
    closer.join()
