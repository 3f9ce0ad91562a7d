"""Submission bundles: a run directory made self-describing and tamper-evident.

A bundle is a directory (or the same directory as a ``.tar.gz``) laid out
like a run directory, so the harness reads it as one (``ReplayPolicy`` and
``scoring.summarize`` take it as it is)::

    bundle.json                 manifest: board, redacted, declared policy and settings, sha256 of every file
    run.json                    the run's own record: config, package version, tasks with content hashes, images
    episodes.jsonl              one line per episode
    trajectories/<task>/<trial>/steps.jsonl   each step with ``observation_sha256``; images/ unless redacted

``redact`` keeps actions, rewards, checks and every hash, and drops what the
agent saw (observation text, images, instructions, model messages) and the
verifier's output, so a submitter can prove a score without publishing the
task contents.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import agentenvs
from agentenvs.core.errors import AgentEnvsError
from agentenvs.harness.rundir import RunDir, encode_line, write_json_atomic

BUNDLE_FORMAT_VERSION = 1
MANIFEST = "bundle.json"
#: Step fields that show what the agent saw; a redacted bundle leaves them out.
REDACTED_STEP_FIELDS = ("observation", "images", "instruction")
REDACTED_POLICY_FIELDS = ("message", "request", "sampled")
#: The verifier's output can quote the hidden tests.
REDACTED_EPISODE_FIELDS = ("verifier_detail",)


class BundleError(AgentEnvsError):
    """A bundle (or the run it is made from) cannot be read."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def observation_hash(step: dict[str, Any], directory: Path) -> str:
    """sha256 over the step's observation fields (canonical JSON) and the bytes of its images."""
    digest = hashlib.sha256(json.dumps(step.get("observation"), sort_keys=True, ensure_ascii=False).encode())
    for field, rel in sorted((step.get("images") or {}).items()):
        image = directory / str(rel)
        inside = image.resolve().is_relative_to(directory.resolve())  # a bundle is untrusted input
        digest.update(field.encode())
        digest.update(sha256_file(image).encode() if inside and image.is_file() else b"missing")
    return digest.hexdigest()


def _bundle_step(step: dict[str, Any], directory: Path, redact: bool) -> dict[str, Any]:
    out = {**step, "observation_sha256": observation_hash(step, directory)}
    if redact:
        for key in REDACTED_STEP_FIELDS:
            out.pop(key, None)
        if isinstance(out.get("policy"), dict):
            out["policy"] = {k: v for k, v in out["policy"].items() if k not in REDACTED_POLICY_FIELDS}
    return out


def file_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` but the manifest, by relative path."""
    return {
        str(p.relative_to(root)): sha256_file(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).as_posix() != MANIFEST
    }


def seal(root: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Write ``bundle.json`` with the hashes of the files as they are now."""
    manifest = {**manifest, "files": file_hashes(root)}
    write_json_atomic(root / MANIFEST, manifest)
    return manifest


def read_manifest(root: Path) -> dict[str, Any]:
    if not (root / MANIFEST).is_file():
        raise BundleError(
            f"{root} is not a submission bundle (no {MANIFEST}); make one with `agentenvs leaderboard submit`"
        )
    return json.loads((root / MANIFEST).read_text(encoding="utf-8"))


def _write_bundle(run: RunDir, root: Path, board: str, redact: bool) -> None:
    meta = run.read_run()
    episodes = run.read_episodes()
    root.mkdir(parents=True)
    write_json_atomic(root / "run.json", meta)
    dropped = {"steps_at", *(REDACTED_EPISODE_FIELDS if redact else ())}  # a bundle keeps a steps.jsonl per episode
    kept = [{k: v for k, v in e.items() if k not in dropped} for e in episodes]
    (root / "episodes.jsonl").write_bytes(b"".join(encode_line(e) for e in kept))
    for record in episodes:
        source = run.path / record["trajectory"]
        target = root / record["trajectory"]
        if redact or not source.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:  # images and artifacts as they are; steps.jsonl is written below, with its hashes
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("steps.jsonl"))
        steps = run.steps_of(record)
        lines = [_bundle_step(s, source, redact) for s in steps]
        (target / "steps.jsonl").write_bytes(b"".join(encode_line(s) for s in lines))
    seal(
        root,
        {
            "format_version": BUNDLE_FORMAT_VERSION,
            "board": board,
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "submitted_with": agentenvs.__version__,
            "redacted": redact,
            "policy": {"spec": meta["config"]["policy"], "declared": meta.get("policy", {})},
        },
    )


def make_bundle(run_dir: str | Path, board: str, out: str | Path, *, redact: bool = False) -> Path:
    """Bundle the run in ``run_dir`` for ``board`` into ``out`` (a directory, or a ``.tar.gz`` file)."""
    run = RunDir(run_dir)
    if not run.exists():
        raise BundleError(f"{run.path} is not a run directory (no run.json)")
    out = Path(out)
    if out.exists():
        raise BundleError(f"{out} already exists; choose another --out")
    if not out.name.endswith(".tar.gz"):
        _write_bundle(run, out, board, redact)
        return out
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / out.name.removesuffix(".tar.gz")
        _write_bundle(run, root, board, redact)
        pack(root, out)
    return out


def pack(root: Path, out: Path) -> None:
    """``root`` (a bundle directory) as the ``.tar.gz`` file ``out``, under a top directory of ``out``'s name."""
    with tarfile.open(out, "w:gz") as tar:
        tar.add(root, arcname=out.name.removesuffix(".tar.gz"))


@contextlib.contextmanager
def open_bundle(path: str | Path) -> Iterator[Path]:
    """The bundle's directory: ``path`` itself, or a ``.tar.gz`` unpacked into a temporary one."""
    path = Path(path)
    if path.is_dir():
        yield _regular_only(path)
        return
    if not path.is_file() or not path.name.endswith(".tar.gz"):
        raise BundleError(f"{path}: not a bundle (a directory, or a .tar.gz made by `agentenvs leaderboard submit`)")
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(path, "r:gz") as tar:
        tar.extractall(tmp, filter="data")
        found = [p.parent for p in Path(tmp).glob(f"*/{MANIFEST}")]
        if len(found) != 1:
            raise BundleError(f"{path}: expected one bundle directory with a {MANIFEST} inside")
        yield _regular_only(found[0])


def _regular_only(root: Path) -> Path:
    """``root``, if it holds only directories and regular files: a bundle is untrusted input, and a
    link would have the verifier read (and hash) whatever it points at as if it were in the bundle."""
    links = sorted(
        str(Path(top, name).relative_to(root))
        for top, dirs, files in os.walk(root)
        for name in [*dirs, *files]
        if Path(top, name).is_symlink()
    )
    if links:
        shown = ", ".join(links[:5]) + (f" and {len(links) - 5} more" if len(links) > 5 else "")
        raise BundleError(f"{root}: a bundle holds regular files only, not symbolic links ({shown})")
    return root
