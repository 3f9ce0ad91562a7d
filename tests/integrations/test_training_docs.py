"""Every example in docs/training.md marked ``<!-- example: <module> -->`` runs as written
(skipped when the library it needs is not installed)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = re.compile(r"<!-- example: (\S+) -->\n```python\n(.*?)```", re.DOTALL)
EXAMPLES = EXAMPLE.findall((ROOT / "docs" / "training.md").read_text(encoding="utf-8"))


def test_the_page_has_examples():
    assert len(EXAMPLES) >= 1


@pytest.mark.parametrize(("module", "code"), EXAMPLES, ids=[m for m, _ in EXAMPLES])
def test_example_runs(module, code, tmp_path):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1.0" in done.stdout, done.stdout[-2000:]
