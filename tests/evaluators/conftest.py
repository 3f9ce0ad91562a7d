"""Shared helpers for the evaluators tests: every checker runs on real files and processes."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def write(tmp_path: Path):
    """Write a text file under tmp_path and return its path as a string."""

    def _write(name: str, text: str) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return str(path)

    return _write


@pytest.fixture
def state_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh directory standing for the agent's filesystem, set as the checkers' state root."""
    root = tmp_path / "state"
    root.mkdir()
    monkeypatch.setenv("AGENTENVS_STATE_ROOT", str(root))
    return root


def put(root: Path, inside: str, content: str | bytes) -> Path:
    """Write ``content`` at the in-sandbox path ``inside`` beneath ``root``; return the host path."""
    path = root / inside.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path
