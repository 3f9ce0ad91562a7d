"""Environment utilization through ``agentenvs.EnvPool``: rollout-wise scheduling against a lockstep batch.

Both sides run the same envs through the same pool, play the same episodes
(the pool's queue fixes episode k's task and seed) with the same scripted
policy (a few looks around, each task's oracle actions, then ``done``), and
draw the same policy latency for the same (episode, step): lognormal, so a
few replies take many times the median, as a model's generation does. They
differ only in scheduling:

- lockstep (batch-wise, what synchronous trainers do): a batch of one
  episode per env; every round waits for the slowest of the batch's policy
  calls, then all its envs step together; the next batch begins when the
  batch's longest episode is over.
- pool (rollout-wise, DART's scheme): each env steps as soon as its own
  policy reply arrives (an asyncio task per reply, ``asubmit``/``apoll``), and
  an env whose episode ends begins the next one at once.

Prints, for each side, the envs' busy fraction (time inside env calls over
wall time, from ``EnvPool.stats()``) and episodes per second, and the
ratios. Both sides do the same env work, so the episodes-per-second ratio is
the utilization ratio at equal work; the measured busy fractions can differ
from it a little (a lockstep round runs every env at once, so text-game
steps queue on the GIL and count as busy). The DART paper (seeds) reports
5.5x environment utilization.

    .venv/bin/python benchmarks/env_utilization.py --family textgame --envs 16 --episodes 128
    .venv/bin/python benchmarks/env_utilization.py --family terminal --envs 8 --episodes 32 --median-latency 0.5
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import math
import os
import random
import statistics
import sys
import time
import zlib
from typing import Any

import agentenvs
from agentenvs import EnvPool, PoolResult
from agentenvs.pool import PoolStats

DEFAULT_TASKS = {
    # Mixed lengths, as real task sets have: their oracles take 3 to 23 steps.
    "textgame": ["textgame/*-easy-*", "textgame/*-medium-*"],
    "terminal": ["terminal/*"],
}
#: What an agent runs to look around before it acts (``--explore``), per family.
LOOKS = {
    "textgame": ["look", "inventory"],
    "terminal": ["ls -la", "pwd", "find . -maxdepth 2 | head -20", "cat /etc/os-release | head -3", "env | wc -l"],
}


class ScriptedPolicy:
    """Each episode: up to ``explore`` looks around, its oracle actions, then ``done``.

    Each reply comes after a lognormal delay, capped as a generation is by its
    ``max_tokens``; the delay and the number of looks are fixed by (seed,
    episode, step), so both sides draw the same.
    """

    def __init__(self, median_sec: float, sigma: float, cap_sec: float, seed: int, explore: int = 0,
                 looks: list[str] | None = None):  # fmt: skip
        self.mu = math.log(median_sec)
        self.sigma = sigma
        self.cap_sec = cap_sec
        self.seed = seed
        self.explore = explore
        self.looks = looks or ["look"]
        self.plans: dict[int, list[Any]] = {}

    def _rng(self, *key: object) -> random.Random:
        return random.Random(zlib.crc32(":".join(map(str, (self.seed, *key))).encode()))

    def latency(self, result: PoolResult) -> float:
        return min(self.cap_sec, self._rng(result.episode, result.step).lognormvariate(self.mu, self.sigma))

    def action(self, result: PoolResult) -> Any:
        if result.first:
            rng = self._rng("explore", result.episode)
            looks = [rng.choice(self.looks) for _ in range(rng.randint(0, self.explore))]
            self.plans[result.episode] = looks + list(result.oracle_actions or [])
        plan = self.plans[result.episode]
        return plan.pop(0) if plan else "done"


def make_pool(args: argparse.Namespace, task_ids: list[str]) -> EnvPool:
    return EnvPool(task_ids, size=args.envs, backend=args.backend, seed=args.seed, episodes=args.episodes,
                   oracle=True)  # fmt: skip


def lockstep(args: argparse.Namespace, task_ids: list[str], policy: ScriptedPolicy) -> tuple[PoolStats, int]:
    """Batch-wise: each round waits for the batch's slowest policy reply; a batch ends with its longest episode."""
    errors = 0
    with make_pool(args, task_ids) as pool:
        waiting = {r.env_id: r for r in pool.reset_all() if r.first}
        while waiting:
            live, waiting = waiting, {}
            while live:
                time.sleep(max(policy.latency(r) for r in live.values()))
                for env_id, result in live.items():
                    pool.submit(env_id, policy.action(result))
                stepped: dict[int, PoolResult] = {}
                while len(stepped) < len(live):
                    for result in pool.poll(timeout=600):
                        errors += result.error is not None
                        if result.is_reset:
                            waiting[result.env_id] = result  # it plays in the next batch
                        else:
                            stepped[result.env_id] = result
                live = {e: r for e, r in stepped.items() if r.needs_action}
            # The batch is over when every env that began a new episode has its first observation.
            for result in pool.poll(timeout=600, min_results=sys.maxsize):
                errors += result.error is not None
                waiting[result.env_id] = result
            waiting = {e: r for e, r in waiting.items() if r.first}
        return pool.stats(), errors


async def rollout_wise(args: argparse.Namespace, task_ids: list[str], policy: ScriptedPolicy) -> tuple[PoolStats, int]:
    """Each env steps when its own policy reply arrives, and begins its next episode at once."""
    errors = 0
    replies: set[asyncio.Task[None]] = set()

    async def reply(pool: EnvPool, result: PoolResult) -> None:
        await asyncio.sleep(policy.latency(result))
        await pool.asubmit(result.env_id, policy.action(result))

    async with make_pool(args, task_ids) as pool:
        results = await pool.areset_all()
        while not pool.done:
            for result in results:
                errors += result.error is not None
                if result.needs_action:
                    task = asyncio.create_task(reply(pool, result))
                    replies.add(task)
                    task.add_done_callback(replies.discard)
            results = await pool.apoll(timeout=600)
        return pool.stats(), errors


def line(name: str, stats: PoolStats, errors: int) -> str:
    return (f"{name:9} wall {stats.wall_sec:7.2f} s, {stats.episodes} episodes, {stats.steps} steps, "
            f"{errors} errors; env busy fraction {stats.busy_fraction:.4f}, "
            f"{stats.episodes_per_sec:7.2f} episodes/s")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=sorted(DEFAULT_TASKS), default="textgame")
    parser.add_argument("--task", action="append", default=None, help="task id glob (repeatable)")
    parser.add_argument("--backend", default="local", help="sandbox backend, for families that have one")
    parser.add_argument("--envs", type=int, default=16, help="envs in the pool (the lockstep batch size)")
    parser.add_argument("--episodes", type=int, default=128)
    parser.add_argument("--median-latency", type=float, default=0.05, help="median policy latency, seconds")
    parser.add_argument("--sigma", type=float, default=1.0, help="lognormal sigma: the weight of the tail")
    parser.add_argument("--cap", type=float, default=20.0,
                        help="the longest reply, in medians (a generation's max_tokens)")  # fmt: skip
    parser.add_argument("--explore", type=int, default=None,
                        help="up to this many looks around before the oracle, per episode "
                        "(default: 0 for text games, 8 for terminal tasks, whose oracle is one command)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.explore is None:
        args.explore = 8 if args.family == "terminal" else 0
    globs = args.task or DEFAULT_TASKS[args.family]
    everything = [t.full_id for t in agentenvs.list_tasks()]
    task_ids = [t for t in everything if any(fnmatch.fnmatch(t, g) for g in globs)]
    random.Random(args.seed).shuffle(task_ids)  # mix the lengths across batches
    draws = random.Random(args.seed)
    mean = args.median_latency * statistics.fmean(
        min(args.cap, draws.lognormvariate(0, args.sigma)) for _ in range(20000)
    )
    print(f"{args.episodes} episodes of {len(task_ids)} {args.family} tasks on {args.envs} envs; policy latency "
          f"lognormal, median {args.median_latency * 1000:.0f} ms, sigma {args.sigma}, "
          f"capped at {args.cap:g} medians (mean {mean * 1000:.0f} ms); "
          f"up to {args.explore} looks before the oracle; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")  # fmt: skip

    def policy() -> ScriptedPolicy:
        cap = args.cap * args.median_latency
        return ScriptedPolicy(args.median_latency, args.sigma, cap, args.seed, args.explore, LOOKS[args.family])

    lock, lock_errors = lockstep(args, task_ids, policy())
    print(line("lockstep", lock, lock_errors))
    pool, pool_errors = asyncio.run(rollout_wise(args, task_ids, policy()))
    print(line("pool", pool, pool_errors))
    if lock.steps != pool.steps:
        print(f"note: the two sides took different numbers of steps ({lock.steps} vs {pool.steps})")
    print(f"episodes/s ratio (pool / lockstep, the utilization ratio at equal env work): "
          f"{pool.episodes_per_sec / lock.episodes_per_sec:.2f}x (DART reports 5.5x)")  # fmt: skip
    print(f"measured busy-fraction ratio: {pool.busy_fraction / lock.busy_fraction:.2f}x")


if __name__ == "__main__":
    main()
