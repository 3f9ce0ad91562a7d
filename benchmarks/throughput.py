"""Throughput over lanes: episodes per second of `agentenvs run` at 1, 2, 4 and 8 lanes, per backend, with
the machine's CPU use, so that a flat curve can be told apart from a lock (CPU idle) or a full machine.

Each row is a whole `agentenvs run` of the same tasks with the zero-latency oracle (process start
included), timed from outside; CPU is the machine's busy share over the run, from /proc/stat, and
CPU-seconds per episode is that busy time divided by the episodes (all processes: ours, docker's).

    .venv/bin/python benchmarks/throughput.py [--family terminal] [--backends local,docker] [--lanes 1,2,4,8]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENTENVS = Path(sys.executable).with_name("agentenvs")


def cpu_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of the whole machine since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def one_run(family: str, backend: str, lanes: int) -> tuple[float, int, float, float]:
    """Wall seconds, episodes, busy share of the machine, CPU-seconds per episode."""
    with tempfile.TemporaryDirectory() as out:
        busy0, total0 = cpu_ticks()
        start = time.perf_counter()
        done = subprocess.run(
            [str(AGENTENVS), "run", "--family", family, "--policy", "oracle", "--backend", backend]
            + ["--concurrency", str(lanes), "--out", f"{out}/run"],
            capture_output=True,
            text=True,
            timeout=3600,
        )
        wall = time.perf_counter() - start
        busy1, total1 = cpu_ticks()
        if done.returncode != 0:
            raise SystemExit(
                f"agentenvs run failed ({backend}, {lanes} lanes):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
            )
        episodes = sum(1 for _ in Path(f"{out}/run/episodes.jsonl").open())
    busy, total = busy1 - busy0, total1 - total0
    hz = os.sysconf("SC_CLK_TCK")
    return wall, episodes, busy / total, busy / hz / episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="terminal")
    parser.add_argument("--backends", default="local,docker")
    parser.add_argument("--lanes", default="1,2,4,8")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; `agentenvs run --family {args.family} --policy oracle`, one run per row")
    print(
        f"{'backend':8} {'lanes':>5} {'episodes':>8} {'wall s':>8} {'ep/s':>7} {'x 1 lane':>9} {'CPU busy':>9} {'CPU-s/ep':>9}"
    )
    for backend in args.backends.split(","):
        base = None
        for lanes in (int(n) for n in args.lanes.split(",")):
            wall, episodes, busy, per_episode = one_run(args.family, backend, lanes)
            rate = episodes / wall
            base = base or rate
            print(
                f"{backend:8} {lanes:>5} {episodes:>8} {wall:>8.1f} {rate:>7.2f} {rate / base:>8.2f}x "
                f"{busy:>8.0%} {per_episode:>9.2f}"
            )


if __name__ == "__main__":
    main()
