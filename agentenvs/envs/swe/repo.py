"""The task repository inside a sandbox: put it there at ``base_commit``, and read what changed.

Every git call goes through :data:`GIT`, which switches off the repository
settings that run programs (hooks, fsmonitor, external diff and textconv
drivers), so reading an agent's repository never runs the agent's code.
"""

from __future__ import annotations

import hashlib
import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.base import Sandbox

#: Staging area inside the sandbox for bundles, patches and reports.
WORK = "/tmp/.agentenvs-swe"
GIT = (
    "git -c core.fsmonitor= -c core.hooksPath=/dev/null -c safe.directory='*' -c diff.external= "
    "-c core.pager=cat -c color.ui=false --no-pager"
)
SETUP_TIMEOUT = 120.0
#: Run between episodes, after every process is killed: empty every directory outside the
#: repository the agent could write to (a symlink in place of one is replaced by an empty directory).
SCRUB = """rc=0
for d in /tmp /var/tmp /dev/shm /root /logs /tests /solution; do
  if [ -L "$d" ]; then rm -f -- "$d" && mkdir -m 1777 -- "$d" || rc=1
  elif [ -d "$d" ]; then find "$d" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} + || rc=1
  fi
done
exit $rc
"""


def _run(sandbox: Sandbox, script: str, what: str, timeout: float = SETUP_TIMEOUT, cwd: str | None = None) -> str:
    result = sandbox.exec(["bash", "-c", script], timeout=timeout, cwd=cwd or "/")
    if result.timed_out or result.exit_code != 0:
        why = "timed out" if result.timed_out else f"exit {result.exit_code}"
        raise SandboxError(f"{what} failed ({why}): {result.output[-800:]}")
    return result.stdout


def checkout_bundle(sandbox: Sandbox, bundle: Path, workdir: str, base_commit: str) -> None:
    """Make ``workdir`` a fresh clone of ``bundle`` at ``base_commit`` (and nothing else).

    The bundle is put again every time and deleted after cloning, so nothing an
    earlier episode left in the sandbox can seed this one's repository.
    """
    staged = f"{WORK}/repo-{secrets.token_hex(4)}.bundle"
    sandbox.exec(["mkdir", "-p", WORK], timeout=30, cwd="/")
    sandbox.put(bundle, staged)
    w, b, c = shlex.quote(workdir), shlex.quote(staged), shlex.quote(base_commit)
    script = f"""set -e
mkdir -p {w}
find {w} -mindepth 1 -maxdepth 1 -exec rm -rf {{}} +
{GIT} clone -q --no-checkout {b} {w}
cd {w}
{GIT} checkout -q -B main {c}
{GIT} remote remove origin
{GIT} config user.email agent@agentenvs.local
{GIT} config user.name agent
rm -f {b}
test "$({GIT} rev-parse HEAD)" = "$({GIT} rev-parse {c}^{{commit}})"
"""
    _run(sandbox, script, f"checking out the repository at {base_commit[:12]}")


def reset_in_place(sandbox: Sandbox, workdir: str, base_commit: str) -> None:
    """For a repository that lives in the image: back to ``base_commit``, untracked files gone."""
    w, c = shlex.quote(workdir), shlex.quote(base_commit)
    script = f"""set -e
cd {w}
{GIT} cat-file -e {c}^{{commit}}
{GIT} checkout -q -f --detach {c}
{GIT} reset -q --hard {c}
{GIT} clean -q -ffdx
"""
    _run(sandbox, script, f"resetting {workdir} to {base_commit[:12]}")


#: What a patch may hold: past these, reading it could outlast any timeout and void the
#: episode as infra, so the agent's changes are refused instead (no real fix comes near).
MAX_CHANGED_FILES = 20_000
MAX_CHANGED_BYTES = 50 * 1024 * 1024


class UngradableRepository(SandboxError):
    """The agent left the repository so that no patch can be taken from it.

    Only the agent writes there, so once its processes are gone this is its doing.
    """


class UnreadableRepository(UngradableRepository):
    """git ran and failed on the repository: its metadata is missing or broken."""


class OversizedChanges(UngradableRepository):
    """More new or changed files, or bytes, than a patch may hold (``MAX_CHANGED_*``)."""


@dataclass(frozen=True)
class RepoState:
    """The working tree against ``base_commit``: ``git status`` lines and the full diff."""

    status: str
    diff: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.diff.encode("utf-8", "surrogateescape")).hexdigest()


def repo_state(sandbox: Sandbox, workdir: str, base_commit: str, timeout: float = 60.0) -> RepoState:
    """What the agent changed: tracked edits, new files (unless ignored) and deletions, as one diff.

    Uses a throwaway index, so the agent's own staging area is left as it was. The
    changed files are counted and sized first (a bounded walk), so a flood of files
    is refused quickly instead of making ``git add`` outlast the timeout.
    """
    marker = f"__agentenvs_{secrets.token_hex(8)}__"
    oversized = f"{marker}oversized"
    index = f"{WORK}/index-{secrets.token_hex(4)}"
    w, c, i = shlex.quote(workdir), shlex.quote(base_commit), shlex.quote(index)
    script = f"""set -e
mkdir -p {WORK}
cd {w}
changed=$({GIT} ls-files -z --others --exclude-standard --modified | head -z -n {MAX_CHANGED_FILES + 1} \
  | xargs -0 -r stat -c %s -- 2>/dev/null | awk '{{n++; s+=$1}} END {{print n+0, s+0}}')
set -- $changed
if [ "$1" -gt {MAX_CHANGED_FILES} ] || [ "$2" -gt {MAX_CHANGED_BYTES} ]; then echo "{oversized} $1 $2"; exit 3; fi
{GIT} status --porcelain=v1 -uall
echo {marker}
export GIT_INDEX_FILE={i}
trap 'rm -f {i}' EXIT
{GIT} read-tree {c}
{GIT} add -A .
{GIT} diff --cached --binary --no-ext-diff --no-textconv --full-index {c}
"""
    result = sandbox.exec(["bash", "-c", script], timeout=timeout, cwd="/")
    if result.timed_out:
        raise SandboxError(f"reading the repository's changes at {workdir} timed out after {timeout:g}s")
    if result.exit_code == 0 and marker in result.stdout:
        status, _, diff = result.stdout.partition(marker + "\n")
        return RepoState(status=status.rstrip("\n"), diff=diff)
    if result.exit_code == 3 and oversized in result.stdout:
        files, size = result.stdout.split(oversized, 1)[1].split()[:2]
        raise OversizedChanges(
            f"the changes at {workdir} are too big to be a patch: {_at_least(int(files), MAX_CHANGED_FILES)} "
            f"new or changed files, {int(size) / 2**20:.1f} MiB (limits: {MAX_CHANGED_FILES:,} files, "
            f"{MAX_CHANGED_BYTES / 2**20:.0f} MiB); delete build outputs or add them to .gitignore"
        )
    if repository_refused(result.exit_code, result.stderr, workdir):
        raise UnreadableRepository(f"git could not read the repository at {workdir}: {result.output[-600:]}")
    raise SandboxError(
        f"reading the repository's changes at {workdir} failed (exit {result.exit_code}): {result.output[-600:]}"
    )


def _at_least(count: int, limit: int) -> str:
    return f"more than {limit:,}" if count > limit else f"{count:,}"


def repository_refused(exit_code: int, stderr: str, workdir: str) -> bool:
    """Whether git (exit 128, ``fatal:``) or ``cd`` said the repository is not there or not readable,
    as opposed to the command dying without a word (killed, or the exec failing), which is infra."""
    return exit_code == 128 or "fatal:" in stderr or f"cd: {workdir}" in stderr
