"""An episode the env cut short by its time budget still reproduces: the replay's `done` stands for the cut."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from lbkit import MAX_STEPS, TRIALS, make_board

from agentenvs.harness.config import PolicySpec, RunConfig
from agentenvs.harness.policies.base import Decision, EpisodeStart, Policy, StepInput
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.leaderboard import make_bundle, verify

ROOT = Path(__file__).resolve().parents[2]
FIX = (
    "chmod 0755 /app/deploy/bin/*.sh && chmod 0700 /app/deploy/secrets && chmod 0600 /app/deploy/secrets/* "
    "&& chmod 0755 /app/deploy/config && chmod 0644 /app/deploy/config/*"
)


class SlowScript(Policy):
    """Thinks longer than the task allows, then fixes everything in one command."""

    name = "slow-script"

    async def act(self, start: EpisodeStart, step: StepInput) -> Decision:
        await asyncio.sleep(1.5)
        return Decision(action={"name": "bash", "arguments": {"command": FIX}})


def test_an_episode_cut_by_the_time_budget_reproduces(boards, tmp_path, monkeypatch):
    task = tmp_path / "tasks" / "terminal" / "hurried-permissions"
    shutil.copytree(ROOT / "tasks" / "terminal" / "fix-permissions", task)
    toml = (task / "task.toml").read_text().replace("[agent]\ntimeout_sec = 300", "[agent]\ntimeout_sec = 1")
    (task / "task.toml").write_text(toml)
    monkeypatch.setenv("AGENTENVS_TASKS_DIR", str(tmp_path / "tasks"))
    task_id = "terminal/hurried-permissions"
    config = RunConfig(
        tasks=[task_id], policy=PolicySpec(name="slow-script"), trials=TRIALS,
        max_steps=MAX_STEPS, episode_timeout_sec=300, infra_retry_delay_sec=0.0,
    )  # fmt: skip
    asyncio.run(Runner(config, str(tmp_path / "run"), policy=SlowScript()).run())
    last = RunDir(tmp_path / "run").read_steps(task_id, 0)[-1]
    assert last["step"] == 1 and last["truncated"] and last["info"]["error_kind"] == "timeout"
    assert last["info"]["score"] == 1.0

    board = make_board(boards.root, "hurried", forbid=["oracle"], replay=["terminal"], tasks=[task_id])
    verdict = verify(make_bundle(tmp_path / "run", "hurried", tmp_path / "bundle"), board)
    assert verdict.verified_by_replay, verdict.problems
