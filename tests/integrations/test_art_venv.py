"""ART's tests, run in the venv ``make art-venv`` builds (.venv-art): openpipe-art 0.5 needs openai<3, which
the main venv does not have (see pyproject.toml)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ART_PYTHON = ROOT / ".venv-art" / "bin" / "python"


def test_art_adapter_tests_pass_in_the_art_venv():
    if importlib.util.find_spec("art") is not None:
        pytest.skip("openpipe-art is installed here: test_art.py runs in this process")
    if not ART_PYTHON.exists():
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail("the ART venv is missing: run `make art-venv`", pytrace=False)
        pytest.skip("the ART venv is missing: run `make art-venv`")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [str(ART_PYTHON), "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"]
        + ["tests/integrations/test_art.py", "tests/integrations/test_training_docs.py", "-k", "art"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1], done.stdout[-2000:]
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert all("Chromium" in line for line in skipped), skipped  # only the web case, on a machine without it
