"""The web container's control daemon: a local ``WebEnv``'s hooks, served on a Unix socket.

Runs inside the ``web`` image (``python3 -m agentenvs.envs.web.daemon --socket PATH``, the
package bind-mounted read-only), network off. The sites and Chromium live here, on the
container's loopback; the host's ``DockerWebEnv`` owns the episode (budgets, rewards, info)
and calls one hook per request, so both backends run the same actions, observations and
checks. The agent only ever sends BrowserGym actions: it has no shell in the container, and
its page reaches neither this socket nor the sites' control planes (the allow-list), so the
checks here read the sites' databases out of its reach.

Protocol: one JSON request per line, ``{"op": ..., ...}``; each reply is a JSON header line
(``ok``, ``size``; on failure ``error`` and ``kind``: ``action``, ``infra`` or ``error``)
followed by ``size`` payload bytes (the screenshot's raw RGB pixels).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socketserver
import threading
from pathlib import Path
from typing import Any

import numpy as np

from agentenvs.core.actions import ParsedAction
from agentenvs.core.checks import Verdict
from agentenvs.core.env import StepOutcome
from agentenvs.core.errors import ActionError, InfraError
from agentenvs.core.registry import get_task
from agentenvs.envs.web.forks import fork_into

SCREENSHOT = "screenshot"


def encode_outcome(outcome: StepOutcome) -> tuple[dict[str, Any], bytes]:
    """A step's outcome as a JSON header and the screenshot's pixels as the payload."""
    extras = dict(outcome.extras)
    image = extras.pop(SCREENSHOT, None)
    head: dict[str, Any] = {
        "text": outcome.text,
        "extras": extras,
        "terminated": outcome.terminated,
        "info": outcome.info,
        "reward": outcome.reward,
    }
    if image is None:
        return head, b""
    head["shape"] = list(image.shape)
    return head, np.ascontiguousarray(image, dtype=np.uint8).tobytes()


def decode_outcome(head: dict[str, Any], payload: bytes) -> StepOutcome:
    extras = dict(head["extras"])
    if "shape" in head:
        extras[SCREENSHOT] = np.frombuffer(payload, dtype=np.uint8).reshape(head["shape"]).copy()
    return StepOutcome(
        text=head["text"],
        extras=extras,
        terminated=bool(head["terminated"]),
        info=head["info"],
        reward=float(head["reward"]),
    )


def encode_action(action: ParsedAction | None) -> dict[str, Any] | None:
    if action is None:
        return None
    return {"kind": action.kind, "text": action.text, "name": action.name, "arguments": action.arguments}


def decode_action(data: dict[str, Any] | None) -> ParsedAction | None:
    return None if data is None else ParsedAction(**data)


class Daemon:
    """One local ``WebEnv`` per container; the host resets it for every episode."""

    def __init__(self, options: dict[str, Any]):
        from agentenvs.envs.web import confined
        from agentenvs.envs.web.env import WebEnv

        confined.ENABLED = False  # the container is the sites' and the browser's sandbox
        self.env = WebEnv(**options)
        self.lock = threading.Lock()

    def _task(self):
        if self.env._task is None:
            raise RuntimeError("no episode: call begin first")
        return self.env._task

    def op_health(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        return {"pid": os.getpid()}, b""

    def op_begin(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        env = self.env
        if env._task is not None:
            env._end()
        task = get_task(f"web/{req['task_id']}")
        env._task = task
        env._forks.pending = {str(k): str(v) for k, v in (req.get("fork") or {}).items()}
        head, payload = encode_outcome(env._begin(task, int(req["seed"])))
        return {**head, "utterance": env._utterance}, payload

    def op_act(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        self._task()
        action = decode_action(req["action"])
        assert action is not None
        return encode_outcome(self.env._act(action))

    def op_check(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        return {"checks": self.env._check(self._task())}, b""

    def op_verify(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        verdict: Verdict = self.env._verify(self._task(), decode_action(req.get("final_action")))
        return {
            "score": verdict.score,
            "success": verdict.success,
            "detail": verdict.detail,
            "metrics": verdict.metrics,
        }, b""

    def op_state_hash(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        self._task()
        return {"hash": self.env._state_hash()}, b""

    def op_sites(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """Where the episode's sites are inside the container (the audit aims its attacks there)."""
        names = self._task().params.get("sites", [])
        sites = {n: self.env.site(n) for n in names}
        return {
            "sites": {
                n: {"origin": s.origin, "db_path": str(s.db_path), "control_port": s.control_port}
                for n, s in sites.items()
            }
        }, b""

    def op_fork(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """The episode's databases backed up into ``dest`` (in the host-mounted socket directory)."""
        names = self._task().params.get("sites", [])
        dest = Path(req["dest"])
        dest.mkdir(parents=True, exist_ok=True)
        return {"forked": fork_into((self.env.site(name) for name in names), dest)}, b""

    def op_query(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """A read-only query on one of the episode's site databases."""
        self._task()
        return {"rows": self.env.site(str(req["site"])).query(str(req["sql"]), list(req.get("params") or []))}, b""

    def op_oracle(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        return {"actions": self.env.oracle_actions(str(req.get("variant", "oracle")))}, b""

    def op_end(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        if self.env._task is not None:
            self.env._end()
            self.env._task = None
        return {}, b""


class Handler(socketserver.StreamRequestHandler):
    daemon: Daemon

    def handle(self) -> None:
        for line in self.rfile:
            try:
                req = json.loads(line)
                with self.daemon.lock:
                    head, payload = getattr(self.daemon, f"op_{req['op']}")(req)
                head = {"ok": True, **head}
            except Exception as exc:  # noqa: BLE001 - every failure is reported to the host, which classifies it
                kind = "action" if isinstance(exc, ActionError) else "infra" if isinstance(exc, InfraError) else "error"
                head, payload = {"ok": False, "kind": kind, "error": f"{type(exc).__name__}: {exc}"}, b""
            head["size"] = len(payload)
            self.wfile.write(json.dumps(head).encode() + b"\n" + payload)
            self.wfile.flush()


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--options", default="{}", help="the WebEnv's keyword options, as JSON")
    args = parser.parse_args()
    Handler.daemon = Daemon(json.loads(args.options))
    if os.path.exists(args.socket):
        os.unlink(args.socket)
    tmp = args.socket + ".tmp"
    server = Server(tmp, Handler)
    os.rename(tmp, args.socket)  # the socket appears only once the daemon can answer
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    server.serve_forever()


if __name__ == "__main__":
    main()
