"""A remote step against an in-process step, side by side, on terminal and text tasks.

The server is ``agentenvs serve`` in its own process on loopback; the client is
``agentenvs.remote`` (one WebSocket per env). Each round steps the in-process
env and the remote env with the same action, alternating, so both see the
same machine load; the ratio is the median remote step over the median
in-process step (goal: 1.2x or less).

    .venv/bin/python benchmarks/server_overhead.py [--steps N]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

import agentenvs

CASES: dict[str, tuple[str, dict[str, Any], list[str]]] = {
    "terminal (local)": ("terminal/log-error-summary", {"backend": "local"}, ["echo hello", "pwd", "ls | wc -l"]),
    "terminal (docker)": ("terminal/log-error-summary", {"backend": "docker"}, ["echo hello", "pwd", "ls | wc -l"]),
    "text game": ("textgame/maze-hard-2000001", {}, ["look", "inventory", "north", "south"]),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(token: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    command = [sys.executable, "-m", "agentenvs.cli", "serve", "--port", str(port), "--token", token]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server, f"http://127.0.0.1:{port}"
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("agentenvs serve did not start") from None
            time.sleep(0.05)


def timed(env: Any, action: str) -> float:
    start = time.perf_counter()
    _, _, terminated, truncated, _ = env.step(action)
    elapsed = time.perf_counter() - start
    if terminated or truncated:
        env.reset(seed=0)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="steps per env and case")
    args = parser.parse_args()
    token = os.urandom(16).hex()
    server, url = start_server(token)
    client = agentenvs.remote(url, token)
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'case':<18} {'in-process p50':>15} {'remote p50':>11} {'remote/in-process':>18}")
    try:
        for name, (task, kwargs, actions) in CASES.items():
            local = agentenvs.make(task, **kwargs, max_steps=10_000)
            remote = client.make(task, **kwargs, max_steps=10_000)
            local.reset(seed=0)
            remote.reset(seed=0)
            near, far = [], []
            for i in range(args.steps):
                action = actions[i % len(actions)]
                near.append(timed(local, action))
                far.append(timed(remote, action))
            local.close()
            remote.close()
            a, b = statistics.median(near[5:]), statistics.median(far[5:])
            print(f"{name:<18} {a * 1e3:>12.3f} ms {b * 1e3:>8.3f} ms {b / a:>17.2f}x")
    finally:
        server.terminate()
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
