"""Exit 0 iff /app/start-server.sh, run by the grader, starts a background server serving the exact files.

Nothing the agent left running is trusted: whatever still listens on the port
is stopped, then the server is started from the agent's script and checked.
The expected files are read before any of the agent's code runs.
"""
import os
import signal
import subprocess
import sys
import time
import urllib.request

PAGES = (("/", "/tests/expected/index.html"), ("/data/info.json", "/tests/expected/info.json"))


def fetch(path):
    with urllib.request.urlopen(f"http://127.0.0.1:8080{path}", timeout=5) as resp:
        return resp.status, resp.read()


def live(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def listeners(port):
    """Socket inodes listening on TCP ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                lines = fh.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                found.add(f"socket:[{fields[9]}]")
    return found


def stop_listeners(port):
    """Kill the processes holding a listening socket on ``port`` (left over from the agent's session)."""
    for _ in range(50):
        sockets = listeners(port)
        if not sockets:
            return
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                links = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            except OSError:
                continue
            if links & sockets:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(0.1)


def main():
    expected = {}
    for path, local in PAGES:
        with open(local, "rb") as fh:
            expected[path] = fh.read()
    stop_listeners(8080)
    if not os.access("/app/start-server.sh", os.X_OK):
        print("/app/start-server.sh is missing or not executable")
        return 1
    try:
        started = subprocess.run(
            ["/app/start-server.sh"], cwd="/", stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10,
        )
    except subprocess.TimeoutExpired:
        print("/app/start-server.sh did not return within 10 s (is the server in the foreground?)")
        return 1
    if started.returncode != 0:
        print(f"/app/start-server.sh exited {started.returncode}")
        return 1
    for path, body_expected in expected.items():
        for attempt in range(50):
            try:
                status, body = fetch(path)
                break
            except OSError as exc:
                if attempt == 49:
                    print(f"GET {path}: {exc}")
                    return 1
                time.sleep(0.1)
        if status != 200 or body != body_expected:
            print(f"GET {path}: status {status}, unexpected body {body[:80]!r}")
            return 1
    try:
        with open("/app/server.pid") as fh:
            pid = int(fh.read().strip())
    except (OSError, ValueError) as exc:
        print(f"pid file: {exc}")
        return 1
    if not live(pid):
        print(f"the pid file names no running process ({pid})")
        return 1
    return 0


sys.exit(main())
