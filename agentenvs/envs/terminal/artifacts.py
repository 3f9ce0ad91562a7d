"""Harbor's artifacts: files copied out of the sandbox after the episode, for the run's records.

Everything under ``/logs/artifacts`` is collected with no configuration, and
so is each path the task lists in ``artifacts`` (a file or a directory),
mirrored under its absolute path or placed at its ``destination``. They are
read from the sealed sandbox, so they include what the verifier wrote.
Links are not followed, and the total is bounded so a task cannot fill the
run directory.
"""

from __future__ import annotations

import posixpath

from agentenvs.core.task import ArtifactSpec
from agentenvs.sandbox.base import Sandbox

CONVENTION_DIR = "/logs/artifacts"
MAX_FILES = 500
MAX_BYTES = 50 * 1024 * 1024
_LIST = (
    'for src; do if [ -f "$src" ] && [ ! -L "$src" ]; then printf "%s\\0" "$src"; '
    'elif [ -d "$src" ] && [ ! -L "$src" ]; then find "$src" -type f -print0; '
    'else printf "missing:%s\\0" "$src"; fi; done'
)


def collect_artifacts(sandbox: Sandbox, specs: list[ArtifactSpec]) -> tuple[dict[str, bytes], list[str]]:
    """``{relative path: bytes}`` of the artifacts, and what could not be collected."""
    wanted = [ArtifactSpec(source=CONVENTION_DIR), *specs]
    problems = [f"artifact {s.source}: service {s.service!r} is not collected (no such service here)"
                for s in wanted if s.service not in (None, "main")]  # fmt: skip
    wanted = [s for s in wanted if s.service in (None, "main")]
    listing = sandbox.exec(["bash", "-c", _LIST, "list", *(s.source for s in wanted)], timeout=60, cwd="/")
    found: dict[str, bytes] = {}
    total = 0
    for path in filter(None, listing.stdout.split("\0")):
        if path.startswith("missing:"):
            if path != f"missing:{CONVENTION_DIR}":
                problems.append(f"artifact {path[len('missing:') :]}: not found in the sandbox")
            continue
        spec = next(s for s in wanted if path == s.source or path.startswith(s.source.rstrip("/") + "/"))
        rel = posixpath.relpath(path, spec.source) if path != spec.source else ""
        base = spec.destination or spec.source.lstrip("/")
        dest = posixpath.normpath(posixpath.join(base, rel)) if rel else base
        if len(found) >= MAX_FILES:
            problems.append(f"artifacts: more than {MAX_FILES} files, the rest were left out")
            break
        try:
            data = sandbox.get(path)
        except OSError as exc:
            problems.append(f"artifact {path}: {exc}")
            continue
        total += len(data)
        if total > MAX_BYTES:
            problems.append(f"artifacts: over {MAX_BYTES >> 20} MB, {path} and the rest were left out")
            break
        found[dest] = data
    return found, problems
