"""Reset latency, per backend, side by side: the sandbox alone, then a whole ``env.reset()`` phase by phase.

A sandbox reset is the time until the caller holds a sandbox in the initial
state: ``WarmPool.acquire`` of a ready sandbox (the pool refills between
episodes, as it does while an agent works), ``restore`` of a snapshot, or
creating a new sandbox; each then runs one command to show it is usable
(untimed). The env tables time ``env.reset()`` of a terminal and a SWE task
with and without a warm pool, split into its phases (the methods the reset
calls, timed in place), against a bare container of the same image started
in the same run (the goal: under 150 ms, and 5x faster than that container).

    .venv/bin/python benchmarks/reset.py [--rounds N] [--backends docker,local] [--tasks T1,T2]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import threading
import time

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox import create_sandbox
from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.pool import WarmPool


def p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def _check(sandbox) -> None:
    if sandbox.exec("echo ok", timeout=60).stdout != "ok\n":
        raise SystemExit(f"{sandbox!r} is not usable after reset")


def bench_pool(backend: str, spec: SandboxSpec, rounds: int) -> list[float]:
    times = []
    with WarmPool(size=2) as pool:
        for _ in range(rounds):
            pool.wait_ready(backend, spec, timeout=120)
            start = time.perf_counter()
            sandbox = pool.acquire(backend, spec)
            times.append(time.perf_counter() - start)
            _check(sandbox)
            pool.release(sandbox)
    return times


def bench_restore(backend: str, spec: SandboxSpec, rounds: int) -> list[float]:
    times = []
    sandbox = create_sandbox(backend, spec)
    try:
        ref = sandbox.snapshot()
        for _ in range(rounds):
            sandbox.exec("echo dirty > /tmp/dirty", timeout=60)
            start = time.perf_counter()
            sandbox.restore(ref)
            times.append(time.perf_counter() - start)
            _check(sandbox)
    finally:
        sandbox.close()
    return times


def bench_fresh(backend: str, spec: SandboxSpec, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        sandbox = create_sandbox(backend, spec)
        times.append(time.perf_counter() - start)
        _check(sandbox)
        sandbox.close()
    return times


#: Where an env's reset spends its time: ("module:Class" or "module", method or function, phase). The rest is "other".
PHASES = {
    "terminal": [
        ("agentenvs.envs.terminal.env:TerminalEnv", "_end", "close the last sandbox"),
        ("agentenvs.sandbox.provision:Provisioner", "acquire", "sandbox"),
        ("agentenvs.envs.terminal.env:TerminalEnv", "_open_shells", "shells"),
        ("agentenvs.envs.terminal.env:TerminalEnv", "_check", "checks"),
        ("agentenvs.envs.terminal.env:TerminalEnv", "_state_hash", "state hash"),
    ],
    "swe": [
        ("agentenvs.envs.swe.env:SWEEnv", "_drop_checker", "drop the checker"),
        ("agentenvs.envs.swe.env:SWEEnv", "_scrubbed", "scrub (reused sandbox)"),
        ("agentenvs.envs.swe.sandboxes:RepoSandboxes", "checked_out", "checked-out sandbox"),
        ("agentenvs.envs.swe.env", "checkout", "checkout (reused sandbox)"),
        ("agentenvs.envs.swe.env:SWEEnv", "_check", "checks"),
        ("agentenvs.envs.swe.env:SWEEnv", "_state_hash", "state hash"),
    ],
}


class PhaseClock:
    """Times the listed methods while ``timing`` is set; ``take()`` returns one reset's phases."""

    def __init__(self, family: str):
        self.timing = False
        self._current: dict[str, float] = {}
        for where, method, label in PHASES[family]:
            module, _, cls = where.partition(":")  # a class's method, or a module's function
            owner = importlib.import_module(module)
            owner = getattr(owner, cls) if cls else owner
            setattr(owner, method, self._timed(getattr(owner, method), label))

    def _timed(self, fn, label: str):
        def timed(*args, **kwargs):
            if not self.timing or threading.current_thread() is not threading.main_thread():  # not the pool's
                return fn(*args, **kwargs)
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._current[label] = self._current.get(label, 0.0) + time.perf_counter() - start

        return timed

    def take(self, total: float) -> dict[str, float]:
        phases, self._current = self._current, {}
        phases["other"] = max(0.0, total - sum(phases.values()))
        phases["reset()"] = total
        return phases


def bench_env_reset(task: str, backend: str, pool_size: int, rounds: int, clock: PhaseClock) -> list[dict[str, float]]:
    """``env.reset()`` as a trainer sees it, after a step that changed the workdir, phase by phase."""
    import agentenvs

    family = agentenvs.get_task(task).family
    # SWE reuses its sandbox between episodes unless asked for a fresh one, which a pool then supplies.
    options = {"pool_size": pool_size, **({"fresh_sandbox": True} if family == "swe" and pool_size else {})}
    env = agentenvs.make(task, backend=backend, **options)
    rows = []
    try:
        env.reset(seed=0)
        for _ in range(rounds):
            env.step("echo dirty > dirty.txt")
            if pool_size:
                _wait_for_pool(env.unwrapped)
            clock.timing = True
            start = time.perf_counter()
            env.reset(seed=0)
            clock.timing = False
            rows.append(clock.take(time.perf_counter() - start))
    finally:
        env.close()
    return rows


def _wait_for_pool(env) -> None:
    """Let the pool refill, as it does while an agent works (terminal: a provisioner; SWE: a pool)."""
    provisioner = getattr(env, "_provisioner", None)
    if provisioner is not None:
        provisioner.wait_ready(env.task)
    else:
        env._sandboxes.wait_ready(env.task, env._instance, timeout=120)


def bench_bare_container(image: str, rounds: int) -> list[float]:
    """The baseline: a new container of the same image and one command in it (what a plain harness does)."""
    from agentenvs.sandbox.docker_engine import docker_client

    client = docker_client()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        container = client.containers.run(image, ["sleep", "infinity"], detach=True, network_disabled=True)
        container.exec_run(["true"])
        times.append(time.perf_counter() - start)
        container.remove(force=True)
    return times


def env_reset_table(task: str, backends: list[str], rounds: int) -> None:
    """Per-phase p50 of ``env.reset()`` per backend, with and without a warm pool, against a bare container."""
    import agentenvs

    family = agentenvs.get_task(task).family
    clock = PhaseClock(family)
    columns = {}
    for backend in backends:
        for pool_size in (2, 0):
            try:
                columns[f"{backend} {'pool' if pool_size else 'no pool'}"] = bench_env_reset(
                    task, backend, pool_size, rounds, clock
                )
            except SandboxError as exc:
                print(f"{backend}: skipped: {exc}")
    labels = [label for _, _, label in PHASES[family]] + ["other", "reset()"]
    print(f"\nenv.reset() of {task}, p50 ms over {rounds} resets (each after a step that wrote a file)")
    print(f"{'phase':24}" + "".join(f"{name:>16}" for name in columns))
    for label in labels:
        cells = [statistics.median([r.get(label, 0.0) for r in rows]) * 1e3 for rows in columns.values()]
        print(f"{label:24}" + "".join(f"{c:>16.1f}" for c in cells))
    if "docker" in backends:
        image = "agentenvs/swe:latest" if family == "swe" else "agentenvs/terminal:latest"
        bare = statistics.median(bench_bare_container(image, rounds))
        print(f"\nbaseline: a new {image} container and one exec in it, p50 {bare * 1e3:.1f} ms")
        for name, rows in columns.items():
            p50 = statistics.median([r["reset()"] for r in rows])
            goal = "met" if p50 < 0.150 and bare / p50 >= 5 else "NOT met"
            print(f"  {name:16} reset() p50 {p50 * 1e3:7.1f} ms = {bare / p50:5.1f}x faster (goal <150 ms, 5x): {goal}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--backends", default="docker,local")
    parser.add_argument(
        "--tasks",
        default="terminal/log-error-summary,swe/agentenvs__calcy-0001",
        help="tasks for the env.reset() phase tables (comma-separated)",
    )
    args = parser.parse_args()
    spec = SandboxSpec()
    print(f"{'backend':8} {'reset by':18} {'n':>3} {'p50 ms':>9} {'p90 ms':>9} {'x pool':>8}")
    for backend in args.backends.split(","):
        try:
            rows = {
                "warm pool": bench_pool(backend, spec, args.rounds),
                "snapshot/restore": bench_restore(backend, spec, args.rounds),
                "fresh sandbox": bench_fresh(backend, spec, args.rounds),
            }
        except SandboxError as exc:
            print(f"{backend:8} skipped: {exc}")
            continue
        base = statistics.median(rows["warm pool"])
        for name, values in rows.items():
            median = statistics.median(values)
            print(
                f"{backend:8} {name:18} {len(values):>3} {median * 1e3:>9.1f} {p90(values) * 1e3:>9.1f} "
                f"{median / base:>8.1f}"
            )
    for task in args.tasks.split(","):
        env_reset_table(task, args.backends.split(","), args.rounds)


if __name__ == "__main__":
    main()
