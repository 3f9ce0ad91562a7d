"""Snapshot and fork of an SWE episode by copying its repository (see ``core/branching.py``).

What is kept is what grading and the dense checks read: the working tree against the base
commit, as the one binary diff the env already reads every step (tracked edits, new files
that are not ignored, deletions, modes). A restore or fork starts the episode afresh (a
clean checkout in this env's own sandbox) and applies that diff, so it costs a reset plus
one ``git apply`` however many steps led there, and no dense check runs again (their
results travel with the diff). The shell's working directory and the editor's undo
history come back too. Not carried over: shell variables, running processes, files outside
the repository or ignored by it, and the agent's git index, commits and branches (the
working tree is kept, not how git records it). A snapshot taken after the episode ended
is replayed instead (that regrades it in full).
"""

from __future__ import annotations

import copy
import secrets
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentenvs.core.errors import SandboxError
from agentenvs.envs.swe.repo import GIT, WORK, RepoState

if TYPE_CHECKING:
    from agentenvs.envs.swe.env import SWEEnv


@dataclass(frozen=True)
class Position:
    """An SWE episode's state, on the host: nothing in it lives in a sandbox."""

    #: The working tree against the base commit as a binary diff, byte for byte.
    diff: bytes
    #: What the agent was last shown (the env's last read; it may lag the tree by a step).
    shown: RepoState
    cwd: str
    undo: dict[str, list[bytes | None]]
    checked: tuple[str, dict[str, bool]] | None


def save(env: SWEEnv) -> Position | None:
    if env._ended or env._shell is None or env._editor is None:
        return None
    assert env._spec is not None and env._instance is not None
    return Position(
        diff=read_diff(env.sandbox, env._spec.workdir, env._instance.base_commit),
        shown=env._state,
        cwd=env._shell.cwd(),
        undo=copy.deepcopy(env._editor._history),
        checked=copy.deepcopy(env._checked),
    )


def load(env: SWEEnv, position: Position) -> None:
    """A clean checkout in this env's sandbox, the diff applied, the shell and editor as they were."""
    task = env._task
    assert task is not None
    if env._running:
        env._end()
    env._begin(task, 0)
    assert env._spec is not None and env._shell is not None and env._editor is not None
    if position.diff:
        apply_diff(env.sandbox, env._spec.workdir, position.diff)
    moved = env._shell.run(f"cd -- {shlex.quote(position.cwd)}", timeout=30)
    if moved.exit_code != 0:  # the directory was outside the repository, or ignored by it
        env._shell.run(f"cd -- {shlex.quote(env._spec.workdir)}", timeout=30)
    env._editor._history = copy.deepcopy(position.undo)
    env._state = position.shown
    env._checked = copy.deepcopy(position.checked)


def read_diff(sandbox: Any, workdir: str, base_commit: str) -> bytes:
    """The working tree against ``base_commit`` as ``repo_state`` reads it, but as bytes: that one
    decodes git's output as text, so bytes that are not UTF-8 would not survive it."""
    token = secrets.token_hex(6)
    out, index = f"{WORK}/branch-{token}.diff", f"{WORK}/index-{token}"
    w, c, i, o = (shlex.quote(x) for x in (workdir, base_commit, index, out))
    script = f"""set -e
mkdir -p {WORK}
cd {w}
export GIT_INDEX_FILE={i}
trap 'rm -f {i}' EXIT
{GIT} read-tree {c}
{GIT} add -A .
{GIT} diff --cached --binary --no-ext-diff --no-textconv --full-index {c} > {o}
"""
    done = sandbox.exec(["bash", "-c", script], timeout=120, cwd="/")
    try:
        if done.timed_out or done.exit_code != 0:
            raise SandboxError(f"could not read the repository's changes for a snapshot: {done.output[-600:]}")
        return sandbox.get(out)
    finally:
        sandbox.exec(["rm", "-f", out], timeout=30, cwd="/")


def apply_diff(sandbox: Any, workdir: str, diff: bytes) -> None:
    """Apply a ``read_diff`` diff to a clean checkout's working tree (never its index)."""
    staged = f"{WORK}/branch-{secrets.token_hex(6)}.diff"
    sandbox.exec(["mkdir", "-p", WORK], timeout=30, cwd="/")
    sandbox.put(diff, staged)
    script = f"cd {shlex.quote(workdir)} && {GIT} apply --whitespace=nowarn {shlex.quote(staged)}"
    script = f"{script}; rc=$?; rm -f {shlex.quote(staged)}; exit $rc"
    done = sandbox.exec(["bash", "-c", script], timeout=120, cwd="/")
    if done.timed_out or done.exit_code != 0:
        raise SandboxError(f"could not apply the snapshot's changes to a clean checkout: {done.output[-600:]}")
