"""Land a submission in the grading checkout, and let git say what it changed.

The patch is applied as SWE-bench applies it (``git apply``, then
``patch --fuzz=5`` for a unified diff whose paths we could read and found
safe). Which paths it changed is then asked of git, not of a parser of ours:
the working tree before and after is written as two trees (untracked and
ignored files included) and compared with ``git diff-tree -r -z
--no-renames``, so quoted and escaped names, renames, copies, mode changes
and binary patches are read exactly as git reads them. The paths
:mod:`.protected` refuses are put back (removed if new, checked out from the
earlier tree otherwise), and the diff that finally landed is the submission.
"""

from __future__ import annotations

import posixpath
import secrets
import shlex
import threading
from dataclasses import dataclass, field

from agentenvs.core.errors import SandboxError
from agentenvs.envs.swe.isolation import LIST_IMPORTABLE, interpreter_command
from agentenvs.envs.swe.patches import OutsideRepoError, PatchError, check_inside_repo, split_patch
from agentenvs.envs.swe.protected import Refusal, Trees, refusals
from agentenvs.envs.swe.repo import GIT
from agentenvs.sandbox.base import Sandbox

APPLY_TIMEOUT = 120.0
SYMLINK_MODE = "120000"
DIFF = f"{GIT} diff-tree -r -p --binary --full-index --no-renames"
RAW = f"{GIT} diff-tree -r -z --no-renames --raw"

#: What the test interpreter can import, per (backend, image, test_cmd). It is listed in a
#: pristine grading sandbox before any patch lands, so it is the same for every grading there.
_importable: dict[tuple[str, str, str], frozenset[str]] = {}
_importable_lock = threading.Lock()


@dataclass(frozen=True)
class Change:
    """One path the patch changed, as ``git diff-tree --raw`` reports it."""

    status: str  # A, M, D or T
    path: str
    new_mode: str
    new_blob: str


@dataclass
class Landing:
    """Applied or not (and why), what the patch changed, what was put back, and the diff that landed."""

    applied: bool = False
    log: str = ""
    refused: str = ""
    changes: list[Change] = field(default_factory=list)
    reverted: list[Refusal] = field(default_factory=list)
    diff: str = ""


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def parse_raw(data: bytes) -> list[Change]:
    """Parse ``git diff-tree -r -z --raw --no-renames`` output."""
    fields = data.split(b"\0")
    changes = []
    i = 0
    while i + 1 < len(fields) and fields[i].startswith(b":"):
        meta = fields[i][1:].decode("ascii").split()
        changes.append(Change(meta[4][0], _decode(fields[i + 1]), meta[1], meta[3]))
        i += 2
    return changes


class _Lander:
    """One landing: the sandbox, its staging directory, and a separator no file name can predict."""

    def __init__(self, sandbox: Sandbox, stage: str, workdir: str):
        self.sandbox, self.stage, self.workdir = sandbox, stage, workdir
        self.nonce = "x" + secrets.token_hex(8)  # a letter first: printf reads "\\0" and octal digits as one byte
        self.s, self.w = shlex.quote(stage), shlex.quote(workdir)

    @property
    def sep(self) -> str:
        """printf's spelling of the separator between the parts of an output file."""
        return f"\\0{self.nonce}\\0"

    def parts(self, name: str, count: int) -> list[bytes]:
        return self.sandbox.get(f"{self.stage}/{name}").split(f"\0{self.nonce}\0".encode(), count - 1)

    def header(self) -> str:
        idx = shlex.quote(f"{self.stage}/index")
        return (
            f"set -u\ncd {self.w} || exit 90\nexport GIT_LITERAL_PATHSPECS=1\n"
            # the tree of the working tree, untracked and ignored files included
            f"snap() {{ cp .git/index {idx} 2>/dev/null || rm -f {idx}; "
            f"GIT_INDEX_FILE={idx} {GIT} add -A -f . >/dev/null && GIT_INDEX_FILE={idx} {GIT} write-tree; }}\n"
        )

    def run(self, script: str, what: str) -> tuple[int, str]:
        result = self.sandbox.exec(["bash", "-c", self.header() + script], timeout=APPLY_TIMEOUT, cwd="/")
        if result.timed_out or result.exit_code not in (0, 2, 5):
            raise SandboxError(f"{what} failed (exit {result.exit_code}): {result.output[-600:]}")
        return result.exit_code, result.stdout

    def apply(self, test_cmd: str, fallback: bool, list_importable: bool) -> tuple[int, str]:
        s = self.s
        patch1 = f"patch --batch --fuzz=5 -p1 -u --no-backup-if-mismatch -i {s}/model.patch >> {s}/apply.log 2>&1"
        listing = interpreter_command(test_cmd, "-c " + shlex.quote(LIST_IMPORTABLE)) if list_importable else "true"
        return self.run(
            f"""T0=$(snap) || exit 91
{listing} > {s}/names 2>/dev/null </dev/null || : > {s}/names
: > {s}/apply.log
if [ -s {s}/model.patch ] && ! {GIT} apply --verbose --whitespace=nowarn {s}/model.patch > {s}/apply.log 2>&1; then
  {patch1 if fallback else "false"} || {{ cat {s}/apply.log; exit 2; }}
fi
T1=$(snap) || exit 91
{{ cat {s}/names; printf '{self.sep}'; {RAW} "$T0" "$T1"; printf '{self.sep}'; {GIT} ls-tree -r -z --name-only "$T0"
   printf '{self.sep}'; {DIFF} "$T0" "$T1"; printf '{self.sep}'; echo "$T0"; }} > {s}/changes || exit 92
cat {s}/apply.log
""",
            "applying the patch",
        )

    def put_back(self, base_tree: str, remove: list[str], restore: list[str]) -> tuple[int, str]:
        for name, paths in (("remove.z", remove), ("restore.z", restore)):
            if paths:
                self.sandbox.put(b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths), self._at(name))
        s = self.s
        return self.run(
            f"""[ ! -f {s}/remove.z ] || while IFS= read -r -d '' p; do
  rm -rf -- "$p"; d=$(dirname -- "$p"); [ "$d" = . ] || rmdir -p --ignore-fail-on-non-empty -- "$d" 2>/dev/null
done < {s}/remove.z
if [ -f {s}/restore.z ]; then
  {GIT} checkout -q {base_tree} --pathspec-from-file={s}/restore.z --pathspec-file-nul 2>&1 || exit 5
fi
T2=$(snap) || exit 91
{{ {RAW} {base_tree} "$T2"; printf '{self.sep}'; {DIFF} {base_tree} "$T2"; }} > {s}/landed || exit 92
""",
            "putting back refused paths",
        )

    def _at(self, name: str) -> str:
        return f"{self.stage}/{name}"

    def symlink_escape(self, changes: list[Change]) -> str:
        """Why a symlink the patch made points outside the repository ("" when none does)."""
        for link in (c for c in changes if c.new_mode == SYMLINK_MODE and c.status != "D"):
            blob = shlex.quote(link.new_blob)
            target = self.sandbox.exec(["bash", "-c", f"{GIT} cat-file blob {blob}"], timeout=30).stdout
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(link.path), target))
            if not target or target.startswith("/") or resolved == ".." or resolved.startswith("../"):
                return f"{link.path}: a symlink to {target!r} points outside the repository"
        return ""


def _trees(base_files: list[str], changes: list[Change]) -> Trees:
    patched = set(base_files)
    for c in changes:
        if c.status == "D":
            patched.discard(c.path)
        else:
            patched.add(c.path)
    return Trees(base_files, patched)


def land(sandbox: Sandbox, stage: str, workdir: str, test_cmd: str, patch: str) -> Landing:
    """Apply ``{stage}/model.patch`` (the text of ``patch``) in ``workdir``, a clean checkout;
    put back what may not change and record what landed."""
    landing = Landing()
    try:
        sections = split_patch(patch)
    except PatchError:
        sections = None  # git may still read it; patch(1) is never given a diff we cannot read
    try:
        check_inside_repo(sections or [])
    except OutsideRepoError as exc:
        landing.refused = f"patch refused: {exc}"
        return landing
    lander = _Lander(sandbox, stage, workdir)
    key = (type(sandbox).__name__, sandbox.spec.image, test_cmd)
    with _importable_lock:
        known = _importable.get(key)
    code, out = lander.apply(test_cmd, fallback=sections is not None, list_importable=known is None)
    if code != 0:
        landing.log, landing.refused = out, f"the patch did not apply: {out[-600:]}"
        return landing
    names, raw, listing, diff, base_tree = lander.parts("changes", 5)
    landing.applied, landing.log = True, out
    landing.changes = parse_raw(raw)
    escape = lander.symlink_escape(landing.changes)
    if escape:
        landing.applied, landing.refused = False, f"patch refused: {escape}"
        return landing
    trees = _trees([_decode(p) for p in listing.split(b"\0") if p], landing.changes)
    importable = known if known is not None else frozenset(n for n in _decode(names).split("\n") if n)
    if known is None and importable:
        with _importable_lock:
            _importable[key] = importable
    landing.reverted = refusals(((c.status, c.path) for c in landing.changes), trees, importable)
    if not landing.reverted:
        landing.diff = _decode(diff)
        return landing
    refused = {r.path for r in landing.reverted}
    remove = [c.path for c in landing.changes if c.path in refused and c.status == "A"]
    restore = [c.path for c in landing.changes if c.path in refused and c.status != "A"]
    code, out = lander.put_back(base_tree.decode().strip(), remove, restore)
    if code != 0:
        landing.applied, landing.refused = False, f"patch refused: what it may not change could not be put back: {out}"
        return landing
    raw, diff = lander.parts("landed", 2)
    left = refusals(((c.status, c.path) for c in parse_raw(raw)), trees, importable)
    if left:
        landing.applied = False
        landing.refused = "patch refused: these changes could not be put back: " + ", ".join(map(str, left))
        return landing
    landing.diff = _decode(diff)
    return landing
