"""Replay a bundle's recorded actions on fresh envs, through the harness, and compare.

The bundle is laid out as a run directory, so the harness's ``ReplayPolicy``
reads its trajectories directly and the ``Runner`` plays every task x trial
of the board again, with the recorded seeds, budgets and settings. Each
step's reward and checks, and each episode's score and success, must come
out as recorded.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import agentenvs
from agentenvs.core import get_task
from agentenvs.core.actions import CONTROL_ACTIONS
from agentenvs.core.introspect import env_oracle_actions
from agentenvs.core.registry import accepts_option
from agentenvs.harness.config import PolicySpec, RunConfig
from agentenvs.harness.policies.oracle import read_actions_jsonl, solve_sh_action
from agentenvs.harness.policies.replay import ReplayPolicy
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.leaderboard.board import Board
from agentenvs.leaderboard.checks import same_value
from agentenvs.leaderboard.verdict import EpisodeReplay, Problem

#: Mismatches listed per episode; the rest are counted.
MAX_MISMATCHES = 5


class OracleRunReplay(ReplayPolicy):
    """The replay of an oracle run: the env is asked for its solution at reset, as it was when the run was made
    (a terminal task's solver stages ``/solution`` in the sandbox, and the recorded actions run it)."""

    needs_oracle = True


def replay_config(board: Board, root: Path, *, concurrency: int = 4) -> RunConfig:
    """The board's episodes, under the recorded budgets and settings, with the bundle's actions."""
    recorded = RunDir(root).read_run()["config"]
    return RunConfig(
        tasks=board.task_ids(),
        policy=PolicySpec(name="replay", options={"run": str(root)}),
        trials=board.tasks.trials,
        seed=board.tasks.seed,
        concurrency=concurrency,
        max_steps=recorded.get("max_steps"),
        episode_timeout_sec=recorded.get("episode_timeout_sec"),
        env_kwargs=recorded.get("env_kwargs", {}),
        backend=recorded.get("backend"),
        save_images=False,
        infra_retry_delay_sec=0.0,
    )


def config_policy(root: Path) -> str | None:
    return RunDir(root).read_run()["config"].get("policy", {}).get("name")


def cut_by_time(recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]) -> bool:
    """Whether the env's time budget ended the recorded episode and the replay, with no policy to wait for,
    ran on to end it with the replay policy's ``done`` one step later."""
    last = recorded[-1]
    return (
        len(replayed) == len(recorded) + 1
        and bool(last.get("truncated"))
        and (last.get("info") or {}).get("error_kind") == "timeout"
        and replayed[-1].get("action") == "done"
    )


def compare(recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]) -> list[str]:
    """What differs between two trajectories of one episode: step count, rewards, checks, the final grade.

    An episode the env cut short by its time budget is compared with its replay's ``done`` in place of
    the last recorded step: the grade, the rewards and the checks must still be the recorded ones.
    """
    if cut_by_time(recorded, replayed):
        replayed = [*replayed[:-2], replayed[-1]]
    found = []
    if len(recorded) != len(replayed):
        found.append(f"{len(recorded) - 1} steps recorded, {len(replayed) - 1} replayed")
    for old, new in zip(recorded, replayed, strict=False):
        old_info, new_info = old.get("info") or {}, new.get("info") or {}
        fields = [
            ("reward", old.get("reward"), new.get("reward")),
            ("checks", old_info.get("checks"), new_info.get("checks")),
        ]
        fields += [
            (k, old_info.get(k), new_info.get(k)) for k in ("score", "success") if k in old_info or k in new_info
        ]
        found += [
            f"step {old.get('step')}: {name} {a!r} recorded, {b!r} replayed"
            for name, a, b in fields
            if not same_value(a, b)
        ]
    return found


def replay_bundle(board: Board, root: Path, *, concurrency: int = 4) -> list[EpisodeReplay]:
    """Play the bundle again and compare every episode with its record."""
    bundle = RunDir(root)
    with tempfile.TemporaryDirectory(prefix="agentenvs-verify-") as tmp:
        config = replay_config(board, root, concurrency=concurrency)
        replay = OracleRunReplay if config_policy(root) == "oracle" else ReplayPolicy
        policy = replay(run=root)
        out = RunDir(Path(tmp) / "replay")
        asyncio.run(Runner(config, str(out.path), policy=policy).run())
        replays = {(e["task_id"], int(e["trial"])): e for e in out.read_episodes()}
        results = []
        for record in bundle.read_episodes():
            key = (record["task_id"], int(record["trial"]))
            family = key[0].split("/", 1)[0]
            again = replays.get(key)
            if again is None or again.get("status") != "scored":
                mismatches = [f"the replay did not finish: {(again or {}).get('error', 'not played')}"]
            else:
                mismatches = compare(bundle.read_steps(*key), out.read_steps(*key))
            if len(mismatches) > MAX_MISMATCHES:
                mismatches = [*mismatches[:MAX_MISMATCHES], f"... and {len(mismatches) - MAX_MISMATCHES} more"]
            results.append(
                EpisodeReplay(
                    task_id=key[0], trial=key[1], family=family,
                    required=family in board.rules.replay_families, reproduced=not mismatches,
                    mismatches=mismatches, recorded_sec=record.get("elapsed_sec"),
                    replay_sec=(again or {}).get("elapsed_sec"),
                )
            )  # fmt: skip
        return results


def replay_problems(episodes: list[EpisodeReplay]) -> list[Problem]:
    """A required family that did not reproduce is rejected; any other is reported, not counted as verified."""
    return [
        Problem(kind="replay", task_id=e.task_id, trial=e.trial, message="; ".join(e.mismatches))
        for e in episodes
        if e.required and not e.reproduced
    ]


def _plain(actions: list[Any]) -> list[str]:
    """Actions as canonical JSON, without the control actions that end them."""
    out = [json.dumps(a, sort_keys=True) for a in actions]
    while out and json.loads(out[-1]) in CONTROL_ACTIONS:
        out.pop()
    return out


def oracle_actions(task_id: str, seed: int, config: dict[str, Any]) -> list[Any] | None:
    """The task's reference solution for this seed (what ``--policy oracle`` would play), on an env of its own:
    a family's solver may stage files in the sandbox, which the replay must not see."""
    task = get_task(task_id)
    env_kwargs = dict(config.get("env_kwargs", {}))
    if config.get("backend") is not None and accepts_option(task.family, "backend"):
        env_kwargs["backend"] = config["backend"]
    env = agentenvs.make(task_id, **env_kwargs)
    try:
        env.reset(seed=seed)
        plan = env_oracle_actions(env)
    finally:
        env.close()
    solution = task.dir("solution") if plan is None else None
    if solution is not None and (solution / "actions.jsonl").is_file():
        plan = read_actions_jsonl(solution / "actions.jsonl")
    elif solution is not None and (solution / "solve.sh").is_file():
        plan = [solve_sh_action((solution / "solve.sh").read_text(encoding="utf-8"))]
    return plan


def oracle_problems(root: Path) -> list[Problem]:
    """Successful episodes whose actions are the task's own solution: the oracle under another name."""
    run = RunDir(root)
    config = run.read_run()["config"]
    problems = []
    for record in run.read_episodes():
        if not record.get("success"):
            continue
        steps = run.read_steps(record["task_id"], record["trial"])
        played = _plain([s["action"] for s in steps if s.get("step", 0) > 0 and "action" in s])
        solution = oracle_actions(record["task_id"], record["seed"], config)
        if played and solution is not None and played == _plain(solution):
            problems.append(
                Problem(kind="oracle", task_id=record["task_id"], trial=record["trial"],
                        message="the actions are the task's reference solution (the oracle), which this board forbids")
            )  # fmt: skip
    return problems
