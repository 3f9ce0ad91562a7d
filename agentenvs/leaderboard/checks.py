"""The static checks of a bundle against its board: integrity, completeness, rules.

They read only the bundle, the board and the installed tasks, so they are
cheap; ``build`` runs them again on every accepted submission. The replay
(``replay.py``) is the expensive part and runs after these pass.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import agentenvs
from agentenvs.core import get_task
from agentenvs.core.errors import AgentEnvsError
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import image_digest
from agentenvs.leaderboard.board import Board
from agentenvs.leaderboard.bundle import file_hashes, observation_hash, read_manifest
from agentenvs.leaderboard.verdict import Kind, Problem


def check_files(root: Path) -> list[Problem]:
    """Every file is the one the manifest sealed: none changed, missing or added."""
    sealed = read_manifest(root).get("files", {})
    present = file_hashes(root)
    problems = [
        Problem(kind="integrity", message=f"{rel}: {'missing' if rel not in present else 'changed after sealing'}")
        for rel, digest in sealed.items()
        if present.get(rel) != digest
    ]
    problems += [
        Problem(kind="integrity", message=f"{rel}: not in the manifest") for rel in present if rel not in sealed
    ]
    return problems


def check_completeness(board: Board, episodes: list[dict[str, Any]]) -> list[Problem]:
    """Every task x trial of the board exactly once, scored, and nothing else."""
    planned = {(t, trial) for t in board.task_ids() for trial in range(board.tasks.trials)}
    seen = Counter((e["task_id"], int(e["trial"])) for e in episodes)
    problems = [
        Problem(kind="completeness", message="missing", task_id=t, trial=n) for t, n in sorted(planned - set(seen))
    ]
    problems += [
        Problem(kind="completeness", message=f"recorded {count} times", task_id=t, trial=n)
        for (t, n), count in sorted(seen.items())
        if count > 1
    ]
    problems += [
        Problem(kind="completeness", message="not a task x trial of this board", task_id=t, trial=n)
        for t, n in sorted(set(seen) - planned)
    ]
    problems += [
        Problem(kind="completeness", message="not scored (infra error): resume with --retry-infra first",
                task_id=e["task_id"], trial=e["trial"])
        for e in episodes if e.get("status") != "scored"
    ]  # fmt: skip
    return problems


def _rule(message: str) -> Problem:
    return Problem(kind="rules", message=message)


def check_settings(board: Board, meta: dict[str, Any]) -> list[Problem]:
    """The run's config against the board's budgets, policies, settings and backends."""
    config, rules, budgets = meta.get("config", {}), board.rules, board.budgets
    problems = []
    policy = config.get("policy", {}).get("name")
    if policy in rules.forbid_policies:
        problems.append(_rule(f"policy {policy!r} is not allowed on this board"))
    if config.get("max_steps") is None or config["max_steps"] > budgets.max_steps:
        problems.append(_rule(f"max_steps {config.get('max_steps')} exceeds the board's budget {budgets.max_steps}"))
    timeout = config.get("episode_timeout_sec")
    if timeout is None or timeout > budgets.episode_timeout_sec:
        problems.append(_rule(f"episode_timeout_sec {timeout} exceeds the board's {budgets.episode_timeout_sec}"))
    if config.get("policy_feedback"):
        problems.append(_rule("policy_feedback was on: the policy saw rewards and checks"))
    if config.get("same_seed") or config.get("seed") != board.tasks.seed:
        problems.append(_rule(f"seeds: the board plays seed {board.tasks.seed} + trial, without same_seed"))
    if config.get("backend") is not None and config["backend"] not in rules.backends:
        problems.append(_rule(f"backend {config['backend']!r} is not one of {rules.backends}"))
    for key, value in config.get("env_kwargs", {}).items():
        if key not in rules.settings:
            problems.append(_rule(f"setting {key}={value!r} is not allowed (allowed: {sorted(rules.settings)})"))
        elif value not in rules.settings[key]:
            problems.append(_rule(f"setting {key}={value!r} is not one of {rules.settings[key]}"))
    if rules.same_version and meta.get("agentenvs_version") != agentenvs.__version__:
        problems.append(
            _rule(f"made with agentenvs {meta.get('agentenvs_version')}; this board verifies {agentenvs.__version__}")
        )
    return problems


def check_tasks(board: Board, meta: dict[str, Any]) -> list[Problem]:
    """Each task's recorded content hash is the installed task's, and its image (where both sides know its
    digest) the local one: the run played these very tasks."""
    recorded = {t["id"]: t for t in meta.get("tasks", [])}
    problems = []
    for task_id in board.task_ids():
        if task_id not in recorded:
            problems.append(Problem(kind="rules", message="no task record in run.json", task_id=task_id))
            continue
        try:
            current = get_task(task_id).content_hash()
        except AgentEnvsError as exc:
            problems.append(Problem(kind="rules", message=f"not installed here: {exc}", task_id=task_id))
            continue
        image, digest = recorded[task_id].get("image"), recorded[task_id].get("image_digest")
        local = image_digest(image) if image and digest else None
        if local is not None and local != digest:
            problems.append(
                Problem(
                    kind="rules",
                    task_id=task_id,
                    message=f"image {image} is {local[:19]} here, {digest[:19]} in the run",
                )
            )
        if recorded[task_id].get("content_hash") != current:
            problems.append(
                Problem(kind="rules", task_id=task_id,
                        message=f"task content differs (recorded version {recorded[task_id].get('version')}, "
                        f"hash {str(recorded[task_id].get('content_hash'))[:12]}; installed {current[:12]})")
            )  # fmt: skip
    return problems


def same_value(a: Any, b: Any) -> bool:
    """Equal, with numbers (not booleans) compared to 1e-9: a recorded reward and its replay or sum."""
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return math.isclose(a, b, abs_tol=1e-9) if numbers else a == b


def check_episode(board: Board, run: RunDir, record: dict[str, Any], *, redacted: bool, sparse: bool) -> list[Problem]:
    """The episode's line agrees with its trajectory (with sparse rewards, the rewards sum to the score, as
    ``AgentEnv.step`` pays them) and with the board's budgets and seeds."""
    task_id, trial = record["task_id"], int(record["trial"])

    def problem(kind: Kind, message: str) -> Problem:
        return Problem(kind=kind, message=message, task_id=task_id, trial=trial)

    steps = run.read_steps(task_id, trial)
    if not steps:
        return [problem("integrity", "no trajectory")]
    problems = []
    if record.get("seed") != board.seed_for(trial) or steps[0].get("seed") != record.get("seed"):
        problems.append(problem("rules", f"seed {record.get('seed')}; the board plays {board.seed_for(trial)}"))
    if record.get("steps") != len(steps) - 1:
        problems.append(
            problem("integrity", f"{record.get('steps')} steps recorded, {len(steps) - 1} in the trajectory")
        )
    if len(steps) - 1 > board.budgets.max_steps:
        problems.append(problem("rules", f"{len(steps) - 1} steps exceed the budget of {board.budgets.max_steps}"))
    final = steps[-1].get("info") or {}
    graded = (
        ("score", final.get("score"), record.get("score")),
        ("success", final.get("success"), record.get("success")),
    )
    for name, in_trajectory, in_record in graded:
        if "score" in final and not same_value(in_trajectory, in_record):
            problems.append(problem("integrity", f"{name} {in_record} recorded, {in_trajectory} in the trajectory"))
    paid = sum(float(s.get("reward") or 0.0) for s in steps[1:])
    if sparse and "score" in final and not same_value(paid, final["score"]):
        problems.append(problem("integrity", f"the rewards sum to {paid:g}, the score is {final['score']:g}"))
    if "score" not in final and (record.get("score") or record.get("success")):
        problems.append(problem("integrity", f"score {record.get('score')} recorded, no grade in the trajectory"))
    if not redacted:
        directory = run.trajectory_dir(task_id, trial)
        bad = [s["step"] for s in steps if s.get("observation_sha256") != observation_hash(s, directory)]
        if bad:
            problems.append(problem("integrity", f"observation hashes do not match at steps {bad[:5]}"))
    return problems


def static_checks(board: Board, root: Path) -> list[Problem]:
    """Every check that needs no env: what ``build`` repeats, and what must pass before a replay.
    A bundle too malformed to read (a missing file, an episode line without its keys) is one problem."""
    try:
        return _static_checks(board, root)
    except (KeyError, TypeError, ValueError, OSError) as exc:
        return [Problem(kind="integrity", message=f"malformed bundle: {type(exc).__name__}: {exc}")]


def _static_checks(board: Board, root: Path) -> list[Problem]:
    problems = check_files(root)
    run = RunDir(root)
    meta = run.read_run()
    episodes = run.read_episodes()
    redacted = bool(read_manifest(root).get("redacted"))
    sparse = meta.get("config", {}).get("env_kwargs", {}).get("reward_mode", "sparse") == "sparse"
    problems += check_completeness(board, episodes)
    problems += check_settings(board, meta)
    problems += check_tasks(board, meta)
    planned = set(board.task_ids())
    for record in episodes:  # only the board's tasks: an id from the bundle never becomes a path unchecked
        if record["task_id"] in planned:
            problems += check_episode(board, run, record, redacted=redacted, sparse=sparse)
    return problems
