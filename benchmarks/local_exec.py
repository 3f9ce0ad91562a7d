"""Cost of one local-sandbox command: joining the sandbox's namespaces vs a fresh bubblewrap, side by side.

(a) ``sandbox.exec(["true"])``: nsenter into the long-lived holder's namespaces;
(b) the same ``true`` in a new bwrap with the sandbox's mounts and cgroups (how
    every exec ran before the holder), through the same capped runner;
(c) starting a persistent shell and running one command, then closing it.

Interleaved rounds, so load on the machine hits every method alike.

    .venv/bin/python benchmarks/local_exec.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.execio import run_capped
from agentenvs.sandbox.holder import HOST_ENV
from agentenvs.sandbox.local import LocalSandbox


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds per method")
    args = parser.parse_args()
    with LocalSandbox(SandboxSpec()) as sandbox:
        prefix = sandbox._res.limits_prefix(sandbox.spec)
        fresh_bwrap = [*prefix, *sandbox._bwrap_argv(None), "--die-with-parent", "--", "true"]

        def shell_round_trip() -> None:
            shell = sandbox.shell()
            shell.run("true", timeout=30)
            shell.close()

        methods: dict[str, Callable[[], object]] = {
            "exec in shared namespaces": lambda: sandbox.exec(["true"], timeout=30),
            "fresh bwrap per command": lambda: run_capped(fresh_bwrap, 30, 1 << 20, env=HOST_ENV),
            "shell start + command + close": shell_round_trip,
        }
        times: dict[str, list[float]] = {name: [] for name in methods}
        for _ in range(args.rounds):
            for name, fn in methods.items():
                times[name].append(timed(fn))
    base = statistics.median(times["fresh bwrap per command"])
    print(f"{'method':32} {'median ms':>10} {'vs fresh bwrap':>15}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:32} {median * 1000:10.1f} {median / base:14.2f}x")


if __name__ == "__main__":
    main()
