"""Where the synthesizer writes: task directories as they are found, the manifest, and what was tried.

Each task is built in a hidden directory under ``out`` and renamed into
place (a task directory is whole or absent); its line is then appended to
``instances.jsonl`` with one ``write`` (a line is whole or absent), and the
mutant's key to ``synthesis-state.jsonl``. An interrupted run keeps every
task it wrote; ``--resume`` reads the state back, skips the mutants already
tried, and rebuilds the manifest from the task directories (so a task whose
line was lost is listed again).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

SYNTH_DATE = "2024-01-01T00:00:00+00:00"
STATE_NAME = "synthesis-state.jsonl"
MANIFEST_NAME = "instances.jsonl"
GIT_SAFE = (
    "-c",
    "init.defaultBranch=main",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=",
    "-c",
    "core.pager=cat",
    "--no-pager",
)


class SynthesisError(RuntimeError):
    """The repository cannot be used (no tests, a failing suite, no mutable code), or ``out`` is in the way."""


def git(cwd: Path, *args: str) -> str:
    """git with none of the repository's settings able to run a program here, and fixed identities."""
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(cwd),
        "GIT_AUTHOR_NAME": "agentenvs",
        "GIT_AUTHOR_EMAIL": "synth@agentenvs.local",
        "GIT_COMMITTER_NAME": "agentenvs",
        "GIT_COMMITTER_EMAIL": "synth@agentenvs.local",
        "GIT_AUTHOR_DATE": SYNTH_DATE,
        "GIT_COMMITTER_DATE": SYNTH_DATE,
    }
    result = subprocess.run(["git", *GIT_SAFE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise SynthesisError(f"git {' '.join(args)} failed in {cwd}: {result.stderr.strip()[-500:]}")
    return result.stdout


def _append_line(path: Path, line: str) -> None:
    """One ``write`` of a whole line, flushed to disk: a crash leaves the line whole or absent."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line.rstrip("\n") + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _whole_lines(path: Path) -> list[str]:
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")
    return [ln for ln in lines[:-1] if ln.strip()]  # a last line without its newline was cut short


class SynthesisOutput:
    """The output directory of one synthesis, fresh or resumed."""

    def __init__(self, out: Path, fingerprint: str, *, resume: bool):
        self.out = out
        self.state = out / STATE_NAME
        self.manifest = out / MANIFEST_NAME
        out.mkdir(parents=True, exist_ok=True)
        if not resume:
            if self.state.exists() or self.manifest.exists():
                raise SynthesisError(
                    f"{out} already holds a synthesis: pass --resume to continue it, or choose another --out"
                )
            _append_line(self.state, json.dumps({"fingerprint": fingerprint}))
        elif not self.state.exists():
            raise SynthesisError(f"{out} has no {STATE_NAME} to resume; run without --resume to start")
        lines = _whole_lines(self.state)
        try:
            header = json.loads(lines[0]) if lines else {}
        except json.JSONDecodeError:
            header = {}
        if header.get("fingerprint") != fingerprint:
            raise SynthesisError(
                f"{out} was synthesized from another repository or with other options "
                "(--deselect, -k, --python, --name, --test-cmd); resume it with the same ones, or choose another --out"
            )
        self.tried = {json.loads(ln)["tried"] for ln in lines[1:] if ln.startswith('{"tried"')}
        self.tasks = sorted(p.parent for p in out.glob("*/task.toml"))
        for stale in out.glob(".building-*"):
            shutil.rmtree(stale, ignore_errors=True)
        if resume:
            self._rebuild_manifest()

    def record_tried(self, key: str) -> None:
        _append_line(self.state, json.dumps({"tried": key}))
        self.tried.add(key)

    def staging(self) -> Path:
        """A directory to build one task in, on the same filesystem (so the rename is atomic)."""
        return Path(tempfile.mkdtemp(prefix=".building-", dir=self.out))

    def add(self, built: Path, instance_id: str, instance: dict[str, object]) -> Path:
        """Move a built task into place and list it in the manifest."""
        final = self.out / instance_id
        if final.exists():  # the same mutant from a run whose state line was lost: keep the first
            shutil.rmtree(built)
            return final
        os.rename(built, final)
        _append_line(self.manifest, json.dumps(instance))
        self.tasks.append(final)
        return final

    def _rebuild_manifest(self) -> None:
        from agentenvs.core.task import load_task
        from agentenvs.envs.swe.instance import instance_of

        lines = [json.dumps(instance_of(load_task(p, family="swe")).to_swebench()) for p in self.tasks]
        tmp = self.manifest.with_name(f".{MANIFEST_NAME}.tmp")
        tmp.write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
        os.replace(tmp, self.manifest)
