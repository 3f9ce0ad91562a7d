"""Latency of one terminal step in the same container, three ways, side by side.

(a) our persistent shell over a docker exec socket;
(b) a tmux loop the way Terminal-Bench drives it: ``tmux send-keys`` with
    ``; tmux wait -S done``, a blocking ``tmux wait done``, then
    ``tmux capture-pane``, each through ``docker exec``;
(c) one ``docker exec`` per command (mini-swe-agent's way).

    .venv/bin/python benchmarks/terminal_step.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.docker import DockerSandbox
from agentenvs.sandbox.docker_engine import docker_client

COMMANDS = [
    "echo hello",
    "pwd",
    "ls /usr/bin | wc -l",
    "cd /tmp && touch f.txt",
    "grep -c root /etc/passwd",
    "cat /etc/hostname",
]


def measure(step: Callable[[str], str], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        for command in COMMANDS:
            start = time.perf_counter()
            step(command)
            times.append(time.perf_counter() - start)
    return times


def p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="passes over the command set per method")
    args = parser.parse_args()
    client = docker_client()
    with DockerSandbox(SandboxSpec(), client=client) as sandbox:
        container = client.containers.get(sandbox.container_id)

        shell = sandbox.shell()
        shell.run("true", timeout=30)

        def ours(command: str) -> str:
            return shell.run(command, timeout=30).stdout

        container.exec_run(["tmux", "new-session", "-d", "-s", "bench", "-x", "200", "-y", "50"])

        def tmux(command: str) -> str:
            container.exec_run(["tmux", "send-keys", "-t", "bench", f"{command}; tmux wait -S done", "Enter"])
            container.exec_run(["tmux", "wait", "done"])
            return container.exec_run(["tmux", "capture-pane", "-p", "-t", "bench"]).output.decode()

        def one_exec(command: str) -> str:
            return container.exec_run(["bash", "-c", command], workdir="/app").output.decode()

        assert "hello" in ours("echo hello") and "hello" in tmux("echo hello") and one_exec("echo hello") == "hello\n"
        results = {
            "persistent shell (ours)": measure(ours, args.rounds * 5),
            "tmux send-keys + capture (Terminal-Bench)": measure(tmux, args.rounds),
            "docker exec per command (mini-swe-agent)": measure(one_exec, args.rounds),
        }
        shell.close()

    base = statistics.median(results["persistent shell (ours)"])
    print(f"terminal step latency, {len(COMMANDS)} commands, same container")
    print(f"{'method':44} {'steps':>6} {'median ms':>10} {'p90 ms':>9} {'x ours':>8}")
    for name, values in results.items():
        median = statistics.median(values)
        print(f"{name:44} {len(values):>6} {median * 1e3:>10.2f} {p90(values) * 1e3:>9.2f} {median / base:>8.1f}")
    tmux_ratio = statistics.median(results["tmux send-keys + capture (Terminal-Bench)"]) / base
    print(f"\nours vs tmux: {tmux_ratio:.0f}x faster (goal >= 50x): {'met' if tmux_ratio >= 50 else 'NOT met'}")


if __name__ == "__main__":
    main()
