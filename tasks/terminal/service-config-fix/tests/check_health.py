"""Exit 0 iff the service, started by the grader from the agent's config, answers /health ok with 3 items.

Nothing the agent left running is trusted: whatever still listens on the
port is stopped, then the service is started here and queried.
"""
import configparser
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

PORT = 8181


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
    parser = configparser.ConfigParser()
    try:
        parser.read("/app/service/config.ini")
    except configparser.Error as exc:
        return f"config.ini: {exc}"
    token = parser.get("auth", "token", fallback="")
    data_dir = parser.get("storage", "data_dir", fallback="")
    if os.path.realpath(data_dir) != "/app/service/data":
        return f"storage.data_dir {data_dir!r} is not the existing data directory /app/service/data"
    stop_listeners(PORT)
    server = subprocess.Popen(
        [sys.executable, "server.py"], cwd="/app/service", stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    request = urllib.request.Request(f"http://127.0.0.1:{PORT}/health", headers={"Authorization": f"Bearer {token}"})
    for _ in range(100):
        if server.poll() is not None:
            return f"the service exited {server.returncode}: {server.stderr.read().decode(errors='replace')[-300:]}"
        try:
            with urllib.request.urlopen(request, timeout=5) as resp:
                body = json.load(resp)
            break
        except (OSError, ValueError) as exc:
            error = exc
            time.sleep(0.1)
    else:
        return f"GET /health: {error}"
    if body.get("status") == "ok" and body.get("items") == 3:
        return 0
    return f"unexpected body {body}"


sys.exit(main())
