"""The desktop's control daemon: actions, screenshots, the accessibility tree and app control on a Unix socket.

Runs inside the desktop as its user (``python3 daemon.py --socket PATH``).
Protocol: one JSON request per line; each reply is a JSON header line whose
``size`` says how many payload bytes (a raw BGRA frame, a tree) follow.
Agent code (pyautogui strings) runs in the ``actor`` user's fork server
(``actor.py``): a forked child per action with its own X connection, so it
starts in about a millisecond, cannot wedge the daemon, is killed at its
deadline, and cannot write the desktop user's files behind the apps.
Nothing this daemon says is trusted for the final score: through the GUI
(a terminal, sudo with the client password) the agent can still reach it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import socketserver
import subprocess
import sys
import threading
import time
import zlib
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from runner import Actor  # noqa: E402
from session import Session  # noqa: E402

APPS = {
    (".xlsx", ".xls", ".ods", ".csv"): ["soffice", "--calc"],
    (".docx", ".doc", ".odt", ".rtf"): ["soffice", "--writer"],
    (".pptx", ".ppt", ".odp"): ["soffice", "--impress"],
}
MAX_CODE_OUTPUT = 64 * 1024
#: The text editor shows its window within a second or two; one still without a window after this
#: long, and not using the CPU, is stuck (it sleeps on something) and is started again, at most
#: ``EDITOR_STARTS`` times in all.
EDITOR_STUCK_S = 10.0
EDITOR_STARTS = 2


class Daemon:
    def __init__(self, session: Session):
        self.session = session
        self.lock = threading.Lock()
        self.local = threading.local()
        self.actor = Actor(session.display)
        self.actor.ensure()

    # -- screen --------------------------------------------------------------
    def _grab(self) -> bytes:
        sct = getattr(self.local, "sct", None)
        if sct is None:
            import mss

            sct = self.local.sct = mss.mss(display=self.session.display)
        return bytes(sct.grab(sct.monitors[1]).raw)

    def op_screenshot(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        frame = self._grab()
        return {"width": self.session.width, "height": self.session.height, "format": "BGRA"}, frame

    def op_settle(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """Poll frames until ``stable`` equal ones in a row (or ``timeout``); reply with the last."""
        interval, stable = float(req.get("interval", 0.05)), int(req.get("stable", 3))
        deadline = time.monotonic() + float(req.get("timeout", 3.0))
        frame = self._grab()
        last, same, polls = zlib.crc32(frame), 1, 1
        while same < stable and time.monotonic() < deadline:
            time.sleep(interval)
            frame = self._grab()
            digest = zlib.crc32(frame)
            same = same + 1 if digest == last else 1
            last, polls = digest, polls + 1
        head = {"width": self.session.width, "height": self.session.height, "format": "BGRA"}
        return {**head, "settled": same >= stable, "polls": polls}, frame

    # -- input ---------------------------------------------------------------
    def op_execute(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """Run agent code as the ``actor`` user (``actor.py``); an action that kills its runner is its own error."""
        code, timeout = str(req["code"]), float(req.get("timeout", 30.0))
        with self.lock:
            return self.actor.run(code, timeout), b""

    # -- accessibility -------------------------------------------------------
    def op_a11y(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        seconds = float(req.get("timeout", 5.0))
        argv = [sys.executable, os.path.join(HERE, "a11y.py"), str(seconds)]
        try:
            done = subprocess.run(argv, env=self.session.env, capture_output=True, timeout=seconds + 2)
        except subprocess.TimeoutExpired:
            return {"error": f"the accessibility walk blocked past {seconds + 2:g}s", "timed_out": True}, b""
        if done.returncode != 0:
            return {"error": done.stderr.decode(errors="replace")[-800:]}, b""
        return {}, done.stdout

    # -- apps and windows ----------------------------------------------------
    def op_run(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        argv, shell = _command(req)
        try:
            done = subprocess.run(
                argv,
                shell=shell,
                env=self.session.env,
                cwd=req.get("cwd") or self.session.env["HOME"],
                capture_output=True,
                timeout=float(req.get("timeout", 60.0)),
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return {"returncode": -1, "timed_out": True, "output": "", "error": "timed out"}, b""
        except OSError as exc:
            return {"returncode": 127, "output": "", "error": str(exc)}, b""
        out, err = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
        return {"returncode": done.returncode, "output": out[-MAX_CODE_OUTPUT:], "error": err[-MAX_CODE_OUTPUT:]}, b""

    def op_launch(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        argv, shell = _command(req)
        proc = subprocess.Popen(
            argv,
            shell=shell,
            env=self.session.env,
            cwd=self.session.env["HOME"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        threading.Thread(target=proc.wait, daemon=True).start()
        return {"pid": proc.pid}, b""

    def op_open(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """Open a file in its app (LibreOffice by extension, else the text editor) and wait for its window."""
        path = os.path.join(self.session.env["HOME"], str(req["path"]))
        argv = ["mousepad", path]
        for suffixes, app in APPS.items():
            if path.lower().endswith(suffixes):
                argv = [*app, "--norestore", "--nologo", path]
        name = os.path.basename(path)
        deadline = time.monotonic() + float(req.get("timeout", 30.0))
        match = lambda w: name in w["title"]  # noqa: E731 - one predicate for the waits below
        if argv[0] != "mousepad":
            self.op_launch({"command": argv})
            window = self._wait_window(match, deadline - time.monotonic())
        else:
            # The editor shows its window within a second or two, but now and then it starts and sleeps
            # without one: it is started once more, and if that fails too the desktop is given up (the
            # reset then makes a fresh one) rather than waiting out the whole timeout.
            slow = False
            for _ in range(EDITOR_STARTS):
                pid = self.op_launch({"command": argv})[0]["pid"]
                window = self._wait_window(match, min(EDITOR_STUCK_S, deadline - time.monotonic()))
                if window is not None:
                    break
                if not _asleep(pid):  # busy (slow, not stuck) or handed the file to a running editor
                    slow = True
                    break
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if slow:
                window = self._wait_window(match, deadline - time.monotonic())
        if window is not None:
            return {"window": window}, b""
        # What the desktop had instead: the reset's error names it (a dialog, an app that died or hangs).
        return {"window": None, "windows": [w["title"] for w in self._windows()], "processes": _own_processes()}, b""

    def _windows(self) -> list[dict[str, str]]:
        done = subprocess.run(["wmctrl", "-lx"], env=self.session.env, capture_output=True, text=True)
        found = []
        for line in done.stdout.splitlines():
            parts = line.split(None, 4)
            if len(parts) >= 4:
                found.append({"id": parts[0], "class": parts[2], "title": parts[4] if len(parts) > 4 else ""})
        return found

    def _wait_window(self, match, timeout: float) -> dict[str, str] | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for window in self._windows():
                if match(window):
                    return window
            time.sleep(0.05)
        return None

    def op_windows(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        return {"windows": self._windows()}, b""

    def _find(self, req: dict[str, Any]) -> dict[str, str] | None:
        name, strict, by_class = str(req["window_name"]), bool(req.get("strict")), bool(req.get("by_class"))
        for window in self._windows():
            value = window["class"] if by_class else window["title"]
            if (value == name) if strict else (name.lower() in value.lower()):
                return window
        return None

    def op_activate_window(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        window = self._find(req)
        if window is not None:
            subprocess.run(["wmctrl", "-i", "-a", window["id"]], env=self.session.env)
        return {"window": window}, b""

    def op_close_window(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        window = self._find(req)
        if window is not None:
            subprocess.run(["wmctrl", "-i", "-c", window["id"]], env=self.session.env)
        return {"window": window}, b""

    def op_write(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """Write a file as the desktop's user (config ``download`` steps: the task's assets)."""
        import base64

        path = os.path.join(self.session.env["HOME"], str(req["path"]))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(req["data_b64"]))
        return {}, b""

    def op_health(self, req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        screen = [self.session.width, self.session.height]
        return {
            "display": self.session.display,
            "bus": self.session.env["DBUS_SESSION_BUS_ADDRESS"],
            "screen": screen,
        }, b""


def _command(req: dict[str, Any]) -> tuple[list[str] | str, bool]:
    command, shell = req["command"], bool(req.get("shell", False))
    if isinstance(command, str) and not shell:
        return shlex.split(command), False
    return command, shell


class Handler(socketserver.StreamRequestHandler):
    desktop: Daemon

    def handle(self) -> None:
        for line in self.rfile:
            try:
                req = json.loads(line)
                method = getattr(self.desktop, f"op_{req['op']}")
                head, payload = method(req)
                head = {"ok": True, **head}
            except Exception as exc:
                head, payload = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}, b""
            head["size"] = len(payload)
            self.wfile.write(json.dumps(head).encode() + b"\n" + payload)
            self.wfile.flush()


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def _stat(pid: int) -> tuple[str, list[str]] | None:
    """A process's command name and the fields of ``/proc/<pid>/stat`` after it (state first), or None."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            raw = fh.read()
    except OSError:
        return None
    return raw[raw.find("(") + 1 : raw.rfind(")")], raw[raw.rfind(")") + 2 :].split()


def _asleep(pid: int, over: float = 0.5) -> bool:
    """Whether ``pid`` lives and uses no CPU for ``over`` seconds (a hang, not a slow start)."""

    def ticks() -> int | None:
        stat = _stat(pid)
        return None if stat is None or stat[1][0] in "ZX" else int(stat[1][11]) + int(stat[1][12])

    before = ticks()
    time.sleep(over)
    return before is not None and ticks() == before


def _own_processes() -> list[str]:
    """Names of this user's processes with their states (``soffice.bin:R``), for a diagnosis."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            mine = os.stat(f"/proc/{pid}").st_uid == os.getuid()
        except OSError:
            continue
        stat = _stat(int(pid)) if mine else None
        if stat is not None:
            found.append(f"{stat[0]}:{stat[1][0]}")
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    args = parser.parse_args()
    session = Session(args.width, args.height)
    os.environ.update(session.env)
    Handler.desktop = Daemon(session)
    if os.path.exists(args.socket):
        os.unlink(args.socket)
    tmp = args.socket + ".tmp"
    server = Server(tmp, Handler)
    os.rename(tmp, args.socket)  # the socket appears only when the desktop is ready
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    server.serve_forever()


if __name__ == "__main__":
    main()
