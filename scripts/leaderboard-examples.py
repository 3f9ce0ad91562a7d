#!/usr/bin/env python3
"""Make the example submissions of the shipped boards (leaderboards/<board>/submissions/).

For each board and policy it runs ``agentenvs run`` with the board's tasks,
trials, seed and budgets (on the local backend, or on docker where the board
holds desktop tasks, which run only there), bundles the run with
``agentenvs leaderboard submit --redact``, verifies it (replay included)
with ``agentenvs leaderboard verify --accept <policy>``, and renders the
board with ``agentenvs leaderboard build``. An example that was there is
replaced. The policies: ``random`` (the built-in baseline) and ``scripted``
(``scripts/scripted_agent.py``, a fixed per-family script behind ``--policy
http``). The oracle is not made here: every shipped board forbids it, and
tests/leaderboard/test_examples.py shows its bundle rejected.

Usage: python3 scripts/leaderboard-examples.py [--board B ...] [--policy random|scripted ...] [--work DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentenvs.leaderboard import Board, load_board  # noqa: E402
from agentenvs.leaderboard.verify import PACKED, VERDICT_SUFFIX  # noqa: E402

#: Boards with examples. gui and mixed run on docker and take long (docs/leaderboards.md): ask for them by name.
BOARDS = ("textgame", "terminal", "swe", "web", "mixed", "gui")
DEFAULT_BOARDS = ("textgame", "terminal", "swe", "web")
POLICIES = ("random", "scripted")
AGENTENVS = [sys.executable, "-m", "agentenvs.cli"]


def task_args(board: Board) -> list[str]:
    """``agentenvs run`` arguments that select exactly the board's tasks."""
    t = board.tasks
    if t.ids:
        return list(t.ids)
    args = ["--suite", t.suite] if t.suite else []
    args += ["--family", t.family] if t.family else []
    return args + (["--split", t.split] if t.split else [])


def backend(board: Board) -> str:
    """local where the board allows it and every task runs there; the desktop runs only on docker."""
    t = board.tasks
    desktop = t.family == "gui" or any(task.startswith("gui/") for task in t.ids or ())
    return "docker" if desktop or "local" not in board.rules.backends else "local"


def run_args(board: Board, policy: list[str], out: Path, concurrency: int) -> list[str]:
    return [
        "run", *task_args(board), *policy, "--trials", str(board.tasks.trials), "--seed", str(board.tasks.seed),
        "--max-steps", str(board.budgets.max_steps), "--episode-timeout", str(board.budgets.episode_timeout_sec),
        "--backend", backend(board), "--concurrency", str(concurrency), "--no-images", "--no-progress", "--out", str(out),
    ]  # fmt: skip


@contextlib.contextmanager
def policy_args(policy: str) -> Iterator[list[str]]:
    """The ``--policy`` arguments of a policy; ``scripted`` serves scripts/scripted_agent.py meanwhile."""
    if policy == "random":
        yield ["--policy", "random"]
        return
    sys.path.insert(0, str(ROOT / "scripts"))
    from scripted_agent import serve

    with serve() as url:
        yield ["--policy", "http", "--url", url]


def agentenvs(*args: str) -> None:
    print("+ agentenvs", " ".join(args), flush=True)
    subprocess.run([*AGENTENVS, *args], check=True, cwd=ROOT)


def make_example(board: Board, policy: str, work: Path, concurrency: int) -> None:
    run, bundle = work / f"{board.name}-{policy}", work / f"{board.name}-{policy}.tar.gz"
    with policy_args(policy) as chosen:
        agentenvs(*run_args(board, chosen, run, concurrency))
    agentenvs("leaderboard", "submit", str(run), "--board", str(board.path), "--out", str(bundle), "--redact")
    (board.submissions / f"{policy}{PACKED}").unlink(missing_ok=True)
    (board.submissions / f"{policy}{VERDICT_SUFFIX}").unlink(missing_ok=True)
    agentenvs("leaderboard", "verify", str(bundle), "--board", str(board.path), "-c", str(concurrency),
              "--accept", policy)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", action="append", choices=BOARDS, help=f"default: {', '.join(DEFAULT_BOARDS)}")
    parser.add_argument("--policy", action="append", choices=POLICIES, help="default: both")
    parser.add_argument("--work", type=Path, help="where runs and bundles go (default: a temporary directory)")
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for name in args.board or DEFAULT_BOARDS:
            board = load_board(ROOT / "leaderboards" / name)
            for policy in args.policy or POLICIES:
                make_example(board, policy, work, args.concurrency)
            agentenvs("leaderboard", "build", "--board", str(board.path))


if __name__ == "__main__":
    main()
