"""The daemon's handle on the agent's code runner (``actor.py``, started as the ``actor`` user).

The runner is the agent's own process: its code can kill or wedge it. So
every request has a deadline a little past the action's, and a runner that
died or hung is killed and started again for the next action, the action
reported as the agent's error (its code caused it), never as a broken desktop.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ACTOR_USER = "actor"
GRACE = 5.0


class Actor:
    """One ``actor.py`` fork server; ``run`` sends it one action."""

    def __init__(self, display: str):
        self.display = display
        self.proc: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        argv = [
            "sudo",
            "-n",
            "-u",
            ACTOR_USER,
            "--",
            sys.executable,
            "-I",
            os.path.join(HERE, "actor.py"),
            self.display,
        ]
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ready = self._line(proc, 30.0)
        if ready is None or not ready.get("ready"):
            err = proc.stderr.read1(4000).decode(errors="replace") if proc.stderr else ""  # type: ignore[union-attr]
            proc.kill()
            proc.wait()
            raise RuntimeError(f"the action runner did not start: {err}")
        return proc

    def _line(self, proc: subprocess.Popen[bytes], timeout: float) -> dict[str, Any] | None:
        """One reply line within ``timeout``, or None (the runner died, hung, or wrote garbage)."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        data = b""
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            data += chunk
        try:
            reply = json.loads(data)
        except ValueError:
            return None
        return reply if isinstance(reply, dict) else None

    def ensure(self) -> subprocess.Popen[bytes]:
        """The running server, started (again) if it is not: the desktop starts it before the first action."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        return self.proc

    def run(self, code: str, timeout: float) -> dict[str, Any]:
        self.ensure()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps({"code": code, "timeout": timeout}).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            reply = None
        else:
            reply = self._line(self.proc, timeout + GRACE)
        if reply is None:
            self.stop()
            return {"error": "the action stopped the action runner (it is started again for the next action)"}
        return reply

    def stop(self) -> None:
        """Kill the runner and every process the agent's code left behind as ``actor``."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        subprocess.run(["sudo", "-n", "-u", ACTOR_USER, "--", "kill", "-9", "-1"], capture_output=True, timeout=10)
