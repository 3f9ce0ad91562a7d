"""A desktop (gui) run verifies by replay: the daemon settles the screen after every action, so the recorded
actions give the same checks and score on a fresh desktop; an edited action is caught (docs/leaderboards.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lbkit import edit_lines

from agentenvs.harness.config import PolicySpec, RunConfig
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.leaderboard import load_board, make_bundle, verify

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: A short oracle (type a command in the desktop's terminal, then done) whose checks flip mid-episode.
TASK = "gui/terminal-count-lines"


@pytest.fixture(scope="module")
def gui_bundle(tmp_path_factory: pytest.TempPathFactory, docker_client) -> tuple[Path, Path]:
    import docker.errors

    try:
        docker_client.api.inspect_image("agentenvs/gui:latest")
    except docker.errors.ImageNotFound:
        pytest.skip("agentenvs/gui:latest is missing: run scripts/install-system.sh")
    root = tmp_path_factory.mktemp("gui-board")
    (root / "guiopen").mkdir()
    (root / "guiopen" / "board.toml").write_text(
        f'name = "guiopen"\n[tasks]\nids = ["{TASK}"]\ntrials = 1\n'
        "[budgets]\nmax_steps = 20\nepisode_timeout_sec = 600\n"
        '[rules]\nforbid_policies = []\nbackends = ["docker"]\nreplay_families = ["gui"]\n'
    )
    config = RunConfig(
        tasks=[TASK], policy=PolicySpec(name="oracle"), trials=1, max_steps=20, episode_timeout_sec=600,
        backend="docker", infra_retry_delay_sec=0.0,
    )  # fmt: skip
    asyncio.run(Runner(config, str(root / "run")).run())
    return root / "guiopen", make_bundle(root / "run", "guiopen", root / "bundle")


def test_a_gui_oracle_run_verifies_by_replay(gui_bundle) -> None:
    board, bundle = gui_bundle
    (record,) = RunDir(bundle).read_episodes()
    assert record["score"] == 1.0
    verdict = verify(bundle, load_board(board))
    assert verdict.accepted and verdict.verified_by_replay, verdict.problems
    assert [e.status for e in verdict.episodes] == ["reproduced"]


def test_an_edited_gui_action_is_rejected_by_the_replay(gui_bundle, tamper) -> None:
    board, bundle = gui_bundle
    (record,) = RunDir(bundle).read_episodes()
    steps = bundle / record["trajectory"] / "steps.jsonl"
    typed = [json.loads(line).get("action") for line in steps.read_text().splitlines() if line.strip()]
    assert any(isinstance(a, dict) for a in typed), typed

    def noop(lines: list[dict]) -> list[dict]:
        for line in lines:
            if isinstance(line.get("action"), dict):  # the commands the oracle types become a wait
                line["action"] = "WAIT"
        return lines

    verdict = verify(
        tamper(bundle, lambda root: edit_lines(root / record["trajectory"] / "steps.jsonl", noop)), load_board(board)
    )
    assert not verdict.accepted
    assert {p.kind for p in verdict.problems} == {"replay"}
    assert [e.status for e in verdict.episodes] == ["failed"]
