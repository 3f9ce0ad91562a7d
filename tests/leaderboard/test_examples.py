"""The committed example submissions (``scripts/leaderboard-examples.py``) still verify on the shipped boards.

Each passes every static check and the oracle comparison, its filed verdict is about this very bundle and
says verified by replay, and the board's README is what ``build`` renders from it. The replay runs on the
whole text-game board (milliseconds an episode) and on the first task of each family of each other board,
all its trials (a whole terminal, SWE, web or desktop board takes minutes; ``verify --accept`` replayed
them whole). When a task
changes, the examples go stale: the failure names the tasks and the command that makes the examples again.
And the oracle, which every shipped board forbids, is rejected on a real board, by name and relabelled.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from lbkit import edit_json

from agentenvs.harness.config import PolicySpec, RunConfig
from agentenvs.harness.runner import Runner
from agentenvs.leaderboard import Board, load_board, make_bundle, verify
from agentenvs.leaderboard.bundle import MANIFEST, open_bundle, read_manifest, seal, sha256_file
from agentenvs.leaderboard.render import load_entries, markdown
from agentenvs.leaderboard.replay import replay_bundle
from agentenvs.leaderboard.verdict import EpisodeReplay, Problem, Verdict
from agentenvs.leaderboard.verify import PACKED, VERDICT_SUFFIX

ROOT = Path(__file__).resolve().parents[2]
BOARDS = ("textgame", "terminal", "swe", "web", "mixed", "gui")
POLICIES = ("random", "scripted")
REPLAYED_WHOLE = ("textgame",)


def board_of(name: str) -> Board:
    return load_board(ROOT / "leaderboards" / name)


def regenerate(board: str) -> str:
    return f"python3 scripts/leaderboard-examples.py --board {board}"


def explain(board: str, policy: str, problems: list[Problem]) -> str:
    """Why an example fails, and when it is stale (tasks or the package changed) how to make it again."""
    changed = sorted({str(p.task_id) for p in problems if "task content differs" in p.message})
    version = [p.message for p in problems if p.message.startswith("made with agentenvs")]
    head = f"the example {board}/submissions/{policy} no longer verifies"
    if changed or version:
        why = "; ".join([f"these tasks changed: {', '.join(changed)}"] * bool(changed) + version)
        return f"{head}: it is stale ({why}). Regenerate the examples with: {regenerate(board)}"
    return f"{head}: " + "; ".join(f"{p.kind}: {p}" for p in problems[:10])


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", BOARDS)
def test_a_committed_example_passes_every_check_but_the_replay(name: str, policy: str) -> None:
    board = board_of(name)
    packed = board.submissions / f"{policy}{PACKED}"
    assert packed.is_file(), f"no example {policy} on {name}; make it with: {regenerate(name)}"
    verdict = verify(packed, board, replay=False)
    assert verdict.accepted, explain(name, policy, verdict.problems)
    filed = Verdict.model_validate_json((board.submissions / f"{policy}{VERDICT_SUFFIX}").read_text())
    with open_bundle(packed) as root:
        assert read_manifest(root)["redacted"] and read_manifest(root)["policy"]["spec"]["name"] in ("random", "http")
        assert filed.bundle_sha256 == sha256_file(root / MANIFEST) and filed.verified_by_replay


@pytest.mark.parametrize("name", BOARDS)
def test_the_committed_board_shows_its_examples_as_built(name: str) -> None:
    board = board_of(name)
    entries, left_out = load_entries(board)
    assert sorted(e.name for e in entries) == sorted(POLICIES) and not left_out, left_out
    readme = (board.path / "README.md").read_text(encoding="utf-8")
    assert readme == markdown(board, entries, left_out), (
        f"README.md is not built: agentenvs leaderboard build --board {name}"
    )
    assert "| random | random | verified by replay |" in readme and "| scripted | http | verified by replay |" in readme
    assert '<td class="verified">verified by replay</td>' in (board.path / "index.html").read_text(encoding="utf-8")


def first_of_each_family(tasks: list[str]) -> list[str]:
    return list({task.split("/")[0]: task for task in reversed(tasks)}.values())


def replay_sample(board: Board, root: Path, tasks: list[str]) -> list[EpisodeReplay]:
    """The episodes of ``tasks`` played again from the bundle (a board of those tasks, under the same rules)."""
    picked = board.tasks.model_copy(update={"ids": tasks, "suite": None, "family": None, "split": None})
    played = replay_bundle(board.model_copy(update={"tasks": picked}), root, concurrency=2)
    return [e for e in played if e.task_id in tasks]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", BOARDS)
def test_a_committed_example_reproduces_on_replay(name: str, policy: str) -> None:
    board = board_of(name)
    tasks = board.task_ids() if name in REPLAYED_WHOLE else first_of_each_family(board.task_ids())
    with open_bundle(board.submissions / f"{policy}{PACKED}") as root:
        episodes = replay_sample(board, root, tasks)
    assert len(episodes) == len(tasks) * board.tasks.trials
    failed = [f"{e.task_id} #{e.trial}: {'; '.join(e.mismatches)}" for e in episodes if not e.reproduced]
    assert not failed, f"{name}/submissions/{policy} does not replay: {failed[:5]}; regenerate: {regenerate(name)}"


def test_a_stale_example_names_the_changed_tasks_and_the_command(tmp_path: Path) -> None:
    board = board_of("textgame")
    stale = tmp_path / "stale"
    with open_bundle(board.submissions / f"random{PACKED}") as root:
        shutil.copytree(root, stale)
    task = board.task_ids()[3]

    def changed(meta: dict) -> None:
        next(t for t in meta["tasks"] if t["id"] == task)["content_hash"] = "0" * 64

    edit_json(stale / "run.json", changed)
    seal(stale, read_manifest(stale))
    verdict = verify(stale, board, replay=False)
    assert not verdict.accepted
    message = explain("textgame", "random", verdict.problems)
    assert f"it is stale (these tasks changed: {task})." in message
    assert message.endswith("Regenerate the examples with: python3 scripts/leaderboard-examples.py --board textgame")


def test_the_oracle_is_rejected_on_a_shipped_board_by_name_and_relabelled(tmp_path: Path) -> None:
    """The oracle on the whole text-game board: refused by name; relabelled as an http agent, every one of
    its (all successful) episodes is found to be the tasks' reference solution."""
    board = board_of("textgame")
    config = RunConfig(
        tasks=board.task_ids(), policy=PolicySpec(name="oracle"), trials=board.tasks.trials, seed=board.tasks.seed,
        max_steps=board.budgets.max_steps, episode_timeout_sec=board.budgets.episode_timeout_sec,
        concurrency=2, save_images=False,
    )  # fmt: skip
    asyncio.run(Runner(config, str(tmp_path / "run")).run())
    bundle = make_bundle(tmp_path / "run", "textgame", tmp_path / "oracle", redact=True)
    verdict = verify(bundle, board)
    assert [p.message for p in verdict.problems] == ["policy 'oracle' is not allowed on this board"]
    assert not verdict.replayed

    def as_http(meta: dict) -> None:
        meta["config"]["policy"] = {"name": "http", "options": {"url": "http://127.0.0.1:8300"}}
        meta["policy"] = {"name": "http", "url": "http://127.0.0.1:8300"}

    edit_json(bundle / "run.json", as_http)
    seal(bundle, read_manifest(bundle))
    relabelled = verify(bundle, board)
    episodes = [json.loads(line) for line in (bundle / "episodes.jsonl").read_text().splitlines()]
    assert all(e["success"] for e in episodes) and len(episodes) == len(board.task_ids()) * board.tasks.trials
    assert {p.kind for p in relabelled.problems} == {"oracle"} and not relabelled.replayed
    assert {(p.task_id, p.trial) for p in relabelled.problems} == {(e["task_id"], e["trial"]) for e in episodes}
