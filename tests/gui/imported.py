"""One OSWorld task JSON written for a metric test, imported as ``import-osworld`` would, with its checker args."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentenvs.envs.gui.assets import AssetIndex
from agentenvs.envs.gui.importer import classify
from agentenvs.envs.gui.osworld_task import OSWorldTask


def imported_check(
    tmp_path: Path, domain: str, evaluator: dict[str, Any], assets: dict[str, bytes], config: list | None = None
) -> dict[str, Any]:
    """The ``osworld`` check args of a task with ``evaluator`` (and ``config``); ``assets`` by URL ``host/path``.
    It must import."""
    for name, data in assets.items():
        (tmp_path / "assets" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "assets" / name).write_bytes(data)
    task = {"id": "t", "snapshot": domain, "instruction": "Do it.", "source": "test", "config": config or [], "evaluator": evaluator}  # fmt: skip
    assert classify(domain, task, AssetIndex(tmp_path / "assets")).status == "imported"
    (tmp_path / "t.json").write_text(json.dumps(task))
    return OSWorldTask(tmp_path / "t.json", tmp_path / "assets").check_args()


def desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``/home/user/Desktop`` in a state root the checker reads, as after an episode."""
    monkeypatch.setenv("AGENTENVS_STATE_ROOT", str(tmp_path / "root"))
    folder = tmp_path / "root/home/user/Desktop"
    folder.mkdir(parents=True)
    return folder
