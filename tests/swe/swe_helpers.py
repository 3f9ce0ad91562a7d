"""Helpers shared by the SWE tests: the corpus tasks and repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agentenvs.core.task import Task, load_task
from agentenvs.envs.swe.instance import bundle_path, instance_of

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tasks" / "swe"
CORPUS = ROOT / "swe-corpus"
SWE_IMAGE = "agentenvs/swe:latest"


def corpus_tasks() -> list[Task]:
    return [load_task(p.parent, family="swe") for p in sorted(TASKS.glob("*/task.toml"))]


def corpus_repos() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*/repo") if (p / "tests").is_dir())


def host_git(cwd: Path, *args: str, data: bytes | None = None) -> bytes:
    """git on this host, with no user or system configuration and no hooks."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}
    return subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        input=data,
        capture_output=True,
        check=True,
        env=env,
        timeout=60,
    ).stdout


def host_clone(task: Task, dest: Path) -> Path:
    """The task's repository at its base commit, cloned on this host (only git runs here, never its code)."""
    host_git(dest.parent, "clone", "-q", str(bundle_path(task)), str(dest))
    host_git(dest, "checkout", "-q", instance_of(task).base_commit)
    return dest


def submission(clone: Path, task: Task, *diff_options: str) -> str:
    """What an agent would submit: every change in ``clone`` against the base commit, as one diff."""
    host_git(clone, "add", "-A")
    diff = host_git(clone, "diff", "--cached", "--binary", "--full-index", *diff_options, instance_of(task).base_commit)
    return diff.decode("utf-8", "surrogateescape")


def package_init(clone: Path) -> Path:
    """The package's __init__.py (src layout)."""
    return sorted((clone / "src").glob("*/__init__.py"))[0]
