"""Verification cost: replaying a submission vs. making the run, per family, side by side.

Each set is played once through the harness (the baseline: what a submitter
pays), bundled, then verified against a board made for it (the static
checks, the oracle comparison and the replay: what a board host pays). The
table gives seconds per episode both ways and their ratio, for the whole
verification and for the replay alone (the per-episode ``elapsed_sec`` of
the run and of its replay).

    .venv/bin/python benchmarks/replay.py
    .venv/bin/python benchmarks/replay.py --set 'tg:textgame/coin-easy-*:random:40' --set 'term:terminal/*:random:4'
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from agentenvs.harness.config import PolicySpec, RunConfig
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.suites import select_tasks
from agentenvs.leaderboard import load_board, make_bundle, verify

#: (label, task glob, policy, tasks): the sets measured by default.
DEFAULT_SETS = (
    "textgame-random:textgame/*:random:40",
    "textgame-oracle:textgame/*:oracle:40",
    "terminal-random:terminal/fix-permissions,terminal/csv-sales-report,terminal/archive-create-backup:random:3",
    "terminal-oracle:terminal/fix-permissions,terminal/csv-sales-report,terminal/archive-create-backup:oracle:3",
)
MAX_STEPS = 20


def write_board(root: Path, tasks: list[str], trials: int) -> Path:
    family = sorted({t.split("/")[0] for t in tasks})
    (root / "board").mkdir(parents=True)
    (root / "board" / "board.toml").write_text(
        f'name = "bench"\n[tasks]\nids = {json.dumps(tasks)}\ntrials = {trials}\n'
        f"[budgets]\nmax_steps = {MAX_STEPS}\nepisode_timeout_sec = 600\n"
        f"[rules]\nforbid_policies = []\nreplay_families = {json.dumps(family)}\n"
    )
    return root / "board"


def measure(spec: str, trials: int, concurrency: int) -> dict[str, object]:
    label, pattern, policy, count = spec.split(":")
    tasks = [t.full_id for glob in pattern.split(",") for t in select_tasks(None, [glob])][: int(count)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        board = load_board(write_board(root, tasks, trials))
        config = RunConfig(
            tasks=tasks, policy=PolicySpec(name=policy, options={"seed": 1} if policy == "random" else {}),
            trials=trials, max_steps=MAX_STEPS, episode_timeout_sec=600, concurrency=concurrency,
        )  # fmt: skip
        started = time.perf_counter()
        asyncio.run(Runner(config, str(root / "run")).run())
        run_sec = time.perf_counter() - started
        make_bundle(root / "run", "bench", root / "bundle")
        started = time.perf_counter()
        verdict = verify(root / "bundle", board, concurrency=concurrency)
        verify_sec = time.perf_counter() - started
        if not verdict.verified_by_replay:
            raise SystemExit(f"{label}: not verified: {[p.message for p in verdict.problems][:3]}")
        episodes = len(RunDir(root / "run").read_episodes())
        recorded = statistics.mean(e.recorded_sec or 0.0 for e in verdict.episodes)
        replayed = statistics.mean(e.replay_sec or 0.0 for e in verdict.episodes)
    return {
        "set": label, "episodes": episodes,
        "run s/ep": run_sec / episodes, "verify s/ep": verify_sec / episodes, "verify/run": verify_sec / run_sec,
        "episode s (run)": recorded, "episode s (replay)": replayed, "replay/run": replayed / recorded if recorded else 0.0,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", help="label:glob[,glob]:policy:tasks (repeatable)")
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    rows = [measure(spec, args.trials, args.concurrency) for spec in args.set or DEFAULT_SETS]
    header = list(rows[0])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in row.values()) + " |")


if __name__ == "__main__":
    main()
