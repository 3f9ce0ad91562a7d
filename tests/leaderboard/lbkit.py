"""Helpers and fixtures of the leaderboard tests: real runs on a small board (text games and one terminal task
on the local sandbox), made once per session."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentenvs.harness.config import PolicySpec, RunConfig
from agentenvs.harness.runner import Runner
from agentenvs.leaderboard import Board, load_board, make_bundle
from agentenvs.leaderboard.bundle import read_manifest, seal

TASKS = ["textgame/coin-easy-0", "textgame/coin-easy-1", "terminal/fix-permissions"]
TRIALS = 2
MAX_STEPS = 8


def board_toml(name: str, *, forbid: list[str], replay: list[str], tasks: list[str] = TASKS) -> str:
    return f"""name = "{name}"
title = "Test board {name}"
[tasks]
ids = {json.dumps(tasks)}
trials = {TRIALS}
[budgets]
max_steps = {MAX_STEPS}
episode_timeout_sec = 300
[rules]
forbid_policies = {json.dumps(forbid)}
settings = {{ reward_mode = ["sparse"] }}
replay_families = {json.dumps(replay)}
"""


def make_board(root: Path, name: str, **kwargs: Any) -> Board:
    (root / name).mkdir(parents=True)
    (root / name / "board.toml").write_text(board_toml(name, **kwargs))
    return load_board(root / name)


def play(out: Path, policy: str, options: dict[str, Any] | None = None, tasks: list[str] = TASKS) -> Path:
    config = RunConfig(
        tasks=tasks, policy=PolicySpec(name=policy, options=options or {}), trials=TRIALS,
        max_steps=MAX_STEPS, episode_timeout_sec=300, infra_retry_delay_sec=0.0,
    )  # fmt: skip
    asyncio.run(Runner(config, str(out)).run())
    return out


@dataclass
class Boards:
    root: Path
    strict: Board  # forbids the oracle and replays; text games and terminal must replay
    open: Board  # allows every policy
    lenient: Board  # forbids the oracle; no family must replay
    random_bundle: Path
    oracle_bundle: Path
    random_run: Path
    oracle_run: Path


@pytest.fixture(scope="session")
def boards(tmp_path_factory: pytest.TempPathFactory) -> Boards:
    root = tmp_path_factory.mktemp("leaderboards")
    strict = make_board(root, "strict", forbid=["oracle", "replay"], replay=["textgame", "terminal"])
    open_ = make_board(root, "open", forbid=[], replay=["textgame", "terminal"])
    lenient = make_board(root, "lenient", forbid=["oracle"], replay=[])
    runs = root.parent / "runs"
    random_run = play(runs / "random", "random", {"seed": 1})
    oracle_run = play(runs / "oracle", "oracle")
    return Boards(
        root, strict, open_, lenient,
        make_bundle(random_run, "strict", runs / "random-bundle"), make_bundle(oracle_run, "open", runs / "oracle-bundle"),
        random_run, oracle_run,
    )  # fmt: skip


@pytest.fixture
def tamper(tmp_path: Path) -> Callable[[Path, Callable[[Path], None]], Path]:
    """A copy of a bundle, edited by ``edit(root)`` and sealed again: what a forger who knows the format would do."""

    def copy(bundle: Path, edit: Callable[[Path], None]) -> Path:
        root = tmp_path / f"tampered-{len(list(tmp_path.iterdir()))}"
        shutil.copytree(bundle, root)
        edit(root)
        seal(root, read_manifest(root))
        return root

    return copy


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def edit_lines(path: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(line) + "\n" for line in change(lines)))
