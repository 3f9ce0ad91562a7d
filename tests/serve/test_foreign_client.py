"""The served protocol as a client that is not ours sees it: written from docs/serve.md and the JSON
schema alone (the websockets package and http.client, never ``agentenvs.serve.client``), every message
checked against docs/serve-protocol.schema.json; and hostile input from raw sockets, each answered with a
4xx or a close code with a reason, in bounded time, with the server still serving and no session left."""

from __future__ import annotations

import http.client
import json
import os
import re
import select
import socket
import struct
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from websockets.sync.client import connect

import agentenvs
from agentenvs.serve import BackgroundServer
from tests.serve.serving import TERMINAL_TASK, TEXT_TASK, raw_websocket, wait_for

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "serve-protocol.schema.json").read_text())
#: The terminal task's answer (its solution/solve.sh), as one shell command.
TERMINAL_ANSWER = (
    'awk \'$2 == "ERROR" { gsub(/[][]/, "", $3); n[$3]++ } END { for (c in n) print n[c], c }\' '
    "/app/logs/app.log | sort -k1,1nr -k2,2 > /app/error_counts.txt"
)


def conforms(name: str, message: Any) -> None:
    """``message`` is valid against the documented schema's ``name`` (every ``$ref`` in it resolving)."""
    jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/definitions/{name}"}).validate(message)


def _address(server: BackgroundServer) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").split(":")
    return host, int(port)


class _Http:
    """The documented HTTP routes over http.client: each reply checked against the schema."""

    def __init__(self, server: BackgroundServer):
        self.connection = http.client.HTTPConnection(*_address(server), timeout=120)
        self.headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}

    def __call__(self, method: str, path: str, body: dict[str, Any] | None = None, reply: str = "") -> Any:
        data = None if body is None else json.dumps(body)
        self.connection.request(method, path, body=data, headers=self.headers)
        response = self.connection.getresponse()
        value = json.loads(response.read())
        if response.status >= 400:
            conforms("ErrorReply", value)
            assert value["status"] == response.status
            raise AssertionError(f"{method} {path}: {value}")
        if reply:
            conforms(reply, value)
        return value


class _Ws:
    """The documented WebSocket messages over the websockets package: requests and replies checked."""

    def __init__(self, server: BackgroundServer):
        url = server.url.replace("http://", "ws://") + "/v1/ws"
        headers = {"Authorization": f"Bearer {server.token}"}
        self.ws = connect(url, additional_headers=headers, max_size=None).__enter__()
        self.ids = iter(range(1, 1 << 30))

    def __call__(self, op: str, reply: str = "", **fields: Any) -> Any:
        request = {"id": next(self.ids), "op": op, **fields}
        conforms("WsRequest", request)
        self.ws.send(json.dumps(request))
        message = json.loads(self.ws.recv(timeout=120))
        conforms("WsReply", message)
        assert message["id"] == request["id"], message
        frames = [self.ws.recv(timeout=120) for _ in range(message["frames"])]
        assert all(isinstance(frame, bytes) for frame in frames)
        if not message["ok"]:
            raise AssertionError(f"{op}: {message['error']}")
        if reply:
            conforms(reply, message["result"])
        return message["result"]

    def close(self) -> None:
        self.ws.close()


def _actions(task: str) -> list[str]:
    if task == TERMINAL_TASK:
        return [TERMINAL_ANSWER, "done"]
    local = agentenvs.make(task)
    try:
        local.reset(seed=0)
        return [*local.unwrapped.oracle_actions(), "done"]
    finally:
        local.close()


@pytest.mark.parametrize("task", [TEXT_TASK, TERMINAL_TASK])
def test_a_client_from_the_docs_plays_an_episode_over_http(server, task):
    kwargs = {"backend": "local"} if task == TERMINAL_TASK else {}
    call = _Http(server)
    made = call("POST", "/v1/sessions", {"env": task, "kwargs": kwargs, "image_format": "png"}, "SessionInfo")
    session = made["session"]
    try:
        call("POST", f"/v1/sessions/{session}/reset", {"seed": 0, "options": None}, "ResetReply")
        call("GET", f"/v1/sessions/{session}", reply="SessionInfo")
        ref = call("POST", f"/v1/sessions/{session}/snapshot", {}, "SnapshotReply")["ref"]
        for action in _actions(task):
            stepped = call("POST", f"/v1/sessions/{session}/step", {"action": action}, "StepReply")
            if stepped["terminated"] or stepped["truncated"]:
                break
        assert stepped["terminated"] and stepped["info"]["score"] == 1.0, stepped["info"]
        call("POST", f"/v1/sessions/{session}/restore", {"ref": ref}, "ResetReply")
        tool = {"name": "no-such-tool", "arguments": {}}
        assert call("POST", f"/v1/sessions/{session}/step", {"action": tool}, "StepReply")["info"]["action_error"]
        fork = call("POST", f"/v1/sessions/{session}/fork", {}, "SessionInfo")["session"]
        assert call("DELETE", f"/v1/sessions/{fork}", reply="CloseReply") == {"closed": True}
        assert call("GET", "/v1/health", reply="HealthReply")["live"] == 1
    finally:
        assert call("DELETE", f"/v1/sessions/{session}", reply="CloseReply") == {"closed": True}
    with pytest.raises(AssertionError, match="404"):
        call("POST", f"/v1/sessions/{session}/step", {"action": "look"})
    assert server.manager.live == 0


@pytest.mark.parametrize("task", [TEXT_TASK, TERMINAL_TASK])
def test_a_client_from_the_docs_plays_an_episode_over_the_websocket(server, task):
    kwargs = {"backend": "local"} if task == TERMINAL_TASK else {}
    call = _Ws(server)
    try:
        session = call("make", "SessionInfo", env=task, kwargs=kwargs)["session"]
        call("reset", "ResetReply", session=session, seed=0)
        call("describe", "SessionInfo", session=session)
        ref = call("snapshot", "SnapshotReply", session=session)["ref"]
        for action in _actions(task):
            stepped = call("step", "StepReply", session=session, action=action)
            if stepped["terminated"] or stepped["truncated"]:
                break
        assert stepped["terminated"] and stepped["info"]["score"] == 1.0, stepped["info"]
        call("restore", "ResetReply", session=session, ref=ref)
        fork = call("fork", "SessionInfo", session=session)["session"]
        assert call("close", "CloseReply", session=fork) == {"closed": True}
        assert call("close", "CloseReply", session=session) == {"closed": True}
        with pytest.raises(AssertionError, match="'status': 404"):
            call("step", session=session, action="look")
    finally:
        call.close()
    assert wait_for(lambda: server.manager.live == 0)


def test_every_reference_in_the_schema_resolves():
    """WsReply's error was ``{"$ref": "#/$defs/ErrorReply"}``, a pointer into the whole document, which
    had no ``$defs``: a validator in any language failed on it."""
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    refs = re.findall(r'"\$ref": "([^"]*)"', json.dumps(SCHEMA))
    assert refs
    for ref in refs:
        node = SCHEMA
        for part in ref.removeprefix("#/").split("/"):
            assert isinstance(node, dict) and part in node, f"{ref} points to nowhere"
            node = node[part]
    conforms("WsReply", {"id": 1, "ok": False, "error": {"status": 404, "error": "gone", "type": "ServeError"}})
    with pytest.raises(jsonschema.ValidationError):
        conforms("WsReply", {"id": 1, "ok": False, "error": {"status": "404"}})


# -- hostile HTTP -------------------------------------------------------------------------


def _raw(server: BackgroundServer, data: bytes, timeout: float = 30) -> tuple[int, dict[str, Any], float]:
    """Send ``data`` on a fresh connection; the status, JSON body and seconds of the reply."""
    started = time.monotonic()
    with socket.create_connection(_address(server), timeout=timeout) as sock:
        sock.sendall(data)
        response = http.client.HTTPResponse(sock, method=data.split(b" ", 1)[0].decode("latin-1"))
        response.begin()
        body = response.read()
    return response.status, json.loads(body) if body else {}, time.monotonic() - started


def _post(server: BackgroundServer, headers: str, body: bytes = b"") -> bytes:
    return (
        f"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.token}\r\n{headers}\r\n".encode()
        + body
    )


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        pytest.param(lambda s: b"PUT /v1/sessions HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405, id="PUT"),
        pytest.param(lambda s: b"OPTIONS /v1/health HTTP/1.1\r\n\r\n", 405, id="OPTIONS"),
        pytest.param(lambda s: b"HELLO\r\n\r\n", 400, id="a garbled request line"),
        pytest.param(lambda s: b"GET /v1/health\r\n\r\n", 400, id="HTTP/0.9"),
        pytest.param(lambda s: b"GET /v1/health HTTP/9.9\r\n\r\n", 505, id="a version from the future"),
        pytest.param(lambda s: b"GET /v1/health HTTP/1.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n", 431, id="a huge header"),
        pytest.param(lambda s: b"BREW /v1/health HTTP/1.1\r\n\r\n", 501, id="an unknown method"),
        pytest.param(lambda s: _post(s, "Content-Length: -5\r\n"), 400, id="a negative Content-Length"),
        pytest.param(lambda s: _post(s, "Content-Length: abc\r\n"), 400, id="a Content-Length not a number"),
        pytest.param(lambda s: _post(s, "Content-Length: 1_0\r\n", b"{}" * 5), 400, id="a Content-Length of 1_0"),
        pytest.param(lambda s: _post(s, "Content-Length: 2\r\nContent-Length: 9\r\n", b"{}"), 400, id="two lengths"),
        pytest.param(lambda s: _post(s, f"Content-Length: {1 << 40}\r\n"), 413, id="a terabyte body"),
        pytest.param(lambda s: _post(s, "Transfer-Encoding: chunked\r\n", b"2\r\n{}\r\n0\r\n\r\n"), 411, id="chunked"),
        pytest.param(
            lambda s: _post(s, "Content-Length: 200000\r\n", b"[" * 100000 + b"]" * 100000), 400, id="deep JSON"
        ),
        pytest.param(lambda s: _post(s, "Content-Length: 7\r\n", b'{"env":'), 400, id="cut JSON"),
        pytest.param(lambda s: _post(s, "Content-Length: 10\r\n", b'{"env": 5}'), 422, id="a number for env"),
    ],
)
def test_bad_http_gets_a_json_4xx_and_the_server_serves_on(server, request_bytes, status):
    got, body, seconds = _raw(server, request_bytes(server))
    assert got == status, body
    conforms("ErrorReply", body)
    assert body["status"] == status and body["error"]
    assert seconds < 10
    assert _Http(server)("GET", "/v1/health", reply="HealthReply")["ok"]
    assert server.manager.live == 0


@pytest.mark.parametrize(
    "authorization",
    ["", "Bearer", "Bearer ", "Bearer wrong", "Basic {token}", "{token}", "Bearer {token}x", "Bearer {short}"],
)
def test_a_missing_or_wrong_token_is_refused_on_every_route(server, authorization):
    header = authorization.format(token=server.token, short=server.token[:-1])
    for method, path in [
        ("GET", "/v1/health"),
        ("POST", "/v1/sessions"),
        ("GET", "/v1/ws"),
        ("DELETE", "/v1/sessions/x"),
    ]:
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
        if path == "/v1/ws":
            head += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            head += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        if header:
            head += f"Authorization: {header}\r\n"
        status, body, _ = _raw(server, (head + "\r\n").encode())
        assert status == 401 and "token" in body["error"], (method, path, body)


def test_a_request_that_trickles_in_is_cut_off_with_408():
    """Slowloris: a head (or a body) sent a byte at a time never let the per-read timeout fire, so a
    handful of such clients held every connection the server allows; now a head must arrive within
    ``head_timeout`` of its first byte, a body at a least rate."""
    with BackgroundServer(head_timeout=1.0) as server:
        head = (
            f"GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.token}\r\nX-Pad: {'a' * 40}\r\n\r\n"
        )
        with socket.create_connection(_address(server), timeout=30) as sock:
            started, reply = time.monotonic(), b""
            for byte in head.encode():  # the whole head would take 10 s
                sock.send(bytes([byte]))
                if select.select([sock], [], [], 0.1)[0]:
                    reply = sock.recv(4096)
                    break
            assert reply.startswith(b"HTTP/1.1 408 "), reply
            assert time.monotonic() - started < 5
        with socket.create_connection(_address(server), timeout=30) as sock:
            sock.sendall(_post(server, "Content-Length: 100\r\n", b'{"env": "'))  # and the rest never comes
            started = time.monotonic()
            reply = sock.recv(4096)
            assert reply.startswith(b"HTTP/1.1 408 "), reply
            assert time.monotonic() - started < 5
        with socket.create_connection(_address(server), timeout=30) as sock:  # one that never sends a byte
            assert sock.recv(4096) == b""
        # A client that has sent the token may idle between requests longer than a head may take.
        keep_alive = _Http(server)
        assert keep_alive("GET", "/v1/health", reply="HealthReply")["ok"]
        time.sleep(2.5)
        assert keep_alive("GET", "/v1/health", reply="HealthReply")["ok"]


# -- hostile WebSocket --------------------------------------------------------------------


def _frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    n, key = len(payload), os.urandom(4)
    first = (0x80 if fin else 0) | opcode
    if n < 126:
        header = bytes([first, 0x80 | n])
    elif n < 1 << 16:
        header = bytes([first, 0x80 | 126]) + struct.pack("!H", n)
    else:
        header = bytes([first, 0x80 | 127]) + struct.pack("!Q", n)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def _read_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "the server ended the connection"
        data += chunk
    return data


def _read_frame(sock: socket.socket) -> tuple[int, bytes]:
    first, second = _read_exact(sock, 2)
    n = second & 0x7F
    if n == 126:
        n = struct.unpack("!H", _read_exact(sock, 2))[0]
    elif n == 127:
        n = struct.unpack("!Q", _read_exact(sock, 8))[0]
    return first & 0x0F, _read_exact(sock, n)


def _ask(sock: socket.socket, message: Any) -> dict[str, Any]:
    sock.sendall(_frame(0x1, message if isinstance(message, bytes) else json.dumps(message).encode()))
    opcode, payload = _read_frame(sock)
    assert opcode == 0x1
    reply = json.loads(payload)
    conforms("WsReply", reply)
    return reply


def test_bad_websocket_messages_get_error_replies_and_the_session_stays(server):
    sock = raw_websocket(server)
    try:
        session = _ask(sock, {"id": 1, "op": "make", "env": TEXT_TASK})["result"]["session"]
        assert _ask(sock, {"id": 2, "op": "reset", "session": session, "seed": 0})["ok"]
        unknown = _ask(sock, {"id": 3, "op": "teleport", "session": session})
        assert unknown["id"] == 3 and unknown["error"]["status"] == 404, "docs: an unknown op is 404"
        assert "teleport" in unknown["error"]["error"]
        truthy = _ask(sock, {"id": True, "op": "describe", "session": session})  # a JSON true is no id
        assert truthy["id"] is None and truthy["error"]["status"] == 422
        deep = _ask(sock, b"[" * 100000 + b"]" * 100000)
        assert deep["error"]["status"] == 400 and "deeply" in deep["error"]["error"]
        for marker in [
            {"$image": {"format": "png", "shape": [2, 2, 3], "data": "!!not base64!!"}},
            {"$image": {"format": "png", "shape": [2, 2, 3], "data": "aGVsbG8="}},  # base64, not a PNG
            {"$image": {"format": "png", "shape": [2, 2, 3], "frame": 0}},
            {"$array": {"dtype": "U100000000", "shape": [10], "data": list(range(10))}},  # 4 GB from 90 bytes
            {"$array": 5},
            {"$float": []},
            {"$bytes": "%%%"},
        ]:
            bad = _ask(sock, {"id": 4, "op": "step", "session": session, "action": marker})
            assert bad["error"]["status"] == 422, (marker, bad)
        stepped = _ask(sock, {"id": 5, "op": "step", "session": session, "action": "look"})
        assert stepped["result"]["info"]["step"] == 1, "a refused request spent no step"
        # A message in fragments, with a ping between them, is one message.
        whole = json.dumps({"id": 6, "op": "describe", "session": session}).encode()
        sock.sendall(_frame(0x1, whole[:5], fin=False) + _frame(0x9, b"hi") + _frame(0x0, whole[5:]))
        assert _read_frame(sock) == (0xA, b"hi")
        opcode, payload = _read_frame(sock)
        assert opcode == 0x1 and json.loads(payload)["result"]["session"] == session
    finally:
        sock.close()
    assert wait_for(lambda: server.manager.live == 0)


def _close_frame(sock: socket.socket) -> tuple[int, str]:
    opcode, payload = _read_frame(sock)
    assert opcode == 0x8, (opcode, payload)
    return struct.unpack("!H", payload[:2])[0], payload[2:].decode()


@pytest.mark.parametrize(
    ("frames", "code"),
    [
        pytest.param(lambda: _frame(0x8, struct.pack("!H", 1000)), 1000, id="a close"),
        pytest.param(lambda: _frame(0x1, b'{"op":', fin=False) + _frame(0x8, b"\x03\xe9"), 1001, id="mid-message"),
        pytest.param(lambda: _frame(0x8, struct.pack("!H", 1006)), 1002, id="a code that never travels"),
        pytest.param(lambda: _frame(0x8, b"\x03"), 1002, id="a one-byte close"),
        pytest.param(lambda: _frame(0x8, b"\x03\xe8\xff"), 1007, id="a close reason not UTF-8"),
        pytest.param(lambda: _frame(0x1, b"\xff\xfe"), 1007, id="text not UTF-8"),
        pytest.param(lambda: _frame(0x0, b"abc"), 1002, id="a continuation with no start"),
        pytest.param(lambda: _frame(0x9, b"a" * 126), 1002, id="a ping over 125 bytes"),
        pytest.param(
            lambda: _frame(0x1, b"0123456789", fin=False) + bytes([0x80, 0xFF]) + struct.pack("!Q", 64 << 20),
            1009,
            id="fragments over the limit, refused before the rest is read",
        ),
    ],
)
def test_websocket_closes_carry_a_valid_code_at_once_and_free_the_sessions(server, frames, code):
    sock = raw_websocket(server)
    try:
        assert _ask(sock, {"id": 1, "op": "make", "env": TEXT_TASK})["ok"]
        sock.settimeout(10)
        sock.sendall(frames())
        got, reason = _close_frame(sock)
        assert got == code, reason
        assert code == 1000 or code == 1001 or reason
    finally:
        sock.close()
    assert wait_for(lambda: server.manager.live == 0), "the sessions of a closed connection were left open"
    assert _Http(server)("GET", "/v1/health", reply="HealthReply")["ok"]


def test_many_websocket_clients_past_the_session_bound_get_429_and_free_every_place():
    with BackgroundServer(max_sessions=2) as server:
        clients = [_Ws(server) for _ in range(6)]
        try:
            made, refused = [], []
            for client in clients:
                try:
                    made.append(client("make", "SessionInfo", env=TEXT_TASK))
                except AssertionError as exc:
                    refused.append(str(exc))
            assert len(made) == 2 and len(refused) == 4 and all("429" in r for r in refused), refused
        finally:
            for client in clients:
                client.close()
        assert wait_for(lambda: server.manager.live == 0)
        assert _Ws(server)("make", "SessionInfo", env=TEXT_TASK)["session"]
