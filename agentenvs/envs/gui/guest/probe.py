"""The verifier's one look at the live desktop: accessibility tree, windows, terminal text, Chromium's tabs, as JSON.

Started by the host (``docker exec``, ``python3 -I``, from the read-only
mount) after the agent's last action and after every process of the
``actor`` user is killed; never through the daemon, which the agent can
reach. ``python3 -I probe.py '{"a11y": true, "windows": true}'`` with the
session's ``DISPLAY`` and bus address, recorded by the host when the
desktop came up, before the agent acted.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_TERMINAL = 256 * 1024
CHROMIUM = "/usr/lib/chromium/chromium"
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][A-Za-z0-9]|[=>78DEHMNOZc])")


def windows() -> list[dict[str, object]]:
    """Every managed window: its WM_CLASS (instance and class) and size."""
    done = subprocess.run(["wmctrl", "-lxG"], capture_output=True, text=True, timeout=10)
    found = []
    for line in done.stdout.splitlines():
        parts = line.split(None, 8)
        if len(parts) >= 7:
            found.append({"class": parts[6], "width": int(parts[4]), "height": int(parts[5])})
    return found


def a11y(seconds: float) -> str | None:
    argv = [sys.executable, "-I", os.path.join(HERE, "a11y.py"), str(seconds)]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=seconds + 2)
    except subprocess.TimeoutExpired:
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def terminal() -> str | None:
    """What the newest terminal showed (its xterm log, see the ``gnome-terminal`` wrapper), escapes removed."""
    folder = os.path.expanduser("~/.cache/agentenvs-terminals")
    if not os.path.isdir(folder) or os.stat(folder).st_uid != os.getuid():
        return None
    logs = sorted(p for p in glob.glob(os.path.join(folder, "*.log")) if os.stat(p).st_uid == os.getuid())
    if not logs:
        return None
    with open(logs[-1], "rb") as fh:
        fh.seek(max(0, os.path.getsize(logs[-1]) - MAX_TERMINAL))
        text = fh.read().decode("utf-8", "replace")
    return _ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "")


def _listener(port: int) -> str | None:
    """The socket inode listening on 127.0.0.1:``port`` (``/proc/net/tcp``), if any."""
    want = f"0100007F:{port:04X}"
    with open("/proc/net/tcp") as fh:
        for line in fh.readlines()[1:]:
            parts = line.split()
            if len(parts) > 9 and parts[1] == want and parts[3] == "0A":
                return parts[9]
    return None


def _is_chromium(inode: str) -> bool:
    """Whether a Chromium process of this user holds the socket: a server the agent started instead is not asked."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid != os.getuid() or os.readlink(f"/proc/{pid}/exe") != CHROMIUM:
                continue
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]" for fd in os.listdir(f"/proc/{pid}/fd")):
                return True
        except OSError:
            continue
    return False


def tabs(port: int) -> list[dict[str, str]] | None:
    """Chromium's open tabs from its DevTools port (``/json/list``: the most recently active first), title and URL."""
    inode = _listener(port)
    if inode is None or not _is_chromium(inode):
        return None
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
            targets = json.loads(answer.read(4 * 1024 * 1024))
    except (OSError, ValueError):
        return None
    pages = [t for t in targets if isinstance(t, dict) and t.get("type") == "page"]
    return [{"title": str(t.get("title", "")), "url": str(t.get("url", ""))} for t in pages]


def main() -> None:
    want = json.loads(sys.argv[1])
    out: dict[str, object] = {}
    if want.get("windows"):
        out["windows"] = windows()
    if want.get("terminal"):
        out["terminal"] = terminal()
    if want.get("tabs"):
        out["tabs"] = tabs(int(want["tabs"]))
    if want.get("a11y"):
        out["a11y"] = a11y(float(want.get("timeout", 10.0)))
    sys.stdout.write(json.dumps(out))


if __name__ == "__main__":
    main()
