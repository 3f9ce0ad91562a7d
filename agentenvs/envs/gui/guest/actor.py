"""The agent's code runner: a fork server that runs as its own user, ``actor``, never as the desktop's user.

The daemon starts it once per desktop (``sudo -n -u actor``) and talks to it
over its stdin and stdout: one JSON request per line (``code``, ``timeout``),
one JSON reply per line. Each action runs in a forked child with its own X
connection and session, killed at its deadline. Because ``actor`` owns no
file the apps or graders use (``/home/user`` is closed to it, and it has no
sudo), pyautogui code can drive the apps through the display, as a person
would, but cannot write a result file behind them, read the task's files,
or touch the apps' processes: only what is done through the GUI counts.
"""

from __future__ import annotations

import io
import json
import os
import select
import signal
import sys
import time
import traceback
from contextlib import redirect_stdout
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import inputs  # noqa: E402

MAX_OUTPUT = 64 * 1024


def run_child(pyautogui: Any, code: str, fd: int) -> None:
    """The forked child: run the code with ``pyautogui`` and ``time`` imported; never returns."""
    status: dict[str, Any] = {"error": None}
    buf = io.StringIO()
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)  # the server's own streams carry the protocol: not the code's
        for stream in (0, 1, 2):
            os.dup2(null, stream)
        inputs.reconnect(pyautogui)
        namespace = {"pyautogui": pyautogui, "time": time, "__name__": "__action__"}
        with redirect_stdout(buf):
            exec(compile(code, "<action>", "exec"), namespace)
        pyautogui._pyautogui_x11._display.sync()
    except BaseException:
        status["error"] = traceback.format_exc(limit=3)[-2000:]
    status["output"] = buf.getvalue()[-MAX_OUTPUT:]
    try:
        os.write(fd, json.dumps(status).encode())
    finally:
        os._exit(0)


def wait_child(fd: int, pid: int, timeout: float) -> dict[str, Any]:
    """The child's status, or an error once it runs past ``timeout`` (its whole session is killed)."""
    deadline = time.monotonic() + timeout
    data = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            os.close(fd)
            os.waitpid(pid, 0)
            return {"error": f"the action ran past its {timeout:g}s limit and was stopped", "timed_out": True}
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(fd)
    os.waitpid(pid, 0)
    try:
        return json.loads(data)
    except ValueError:
        return {"error": "the action ended its process before finishing"}


def main() -> None:
    os.environ["DISPLAY"] = sys.argv[1]
    os.chdir("/tmp")
    pyautogui = inputs.load()
    out = sys.stdout.buffer
    out.write(b'{"ready": true}\n')
    out.flush()
    for line in sys.stdin.buffer:
        req = json.loads(line)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            run_child(pyautogui, str(req["code"]), write)
        os.close(write)
        reply = wait_child(read, pid, float(req.get("timeout", 30.0)))
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
