"""verl's tests, run in the venv ``make verl-venv`` builds (.venv-verl): verl 0.9 pins transformers<5.11, and
the main venv has the 5.13 or later that TRL needs (see pyproject.toml)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERL_PYTHON = ROOT / ".venv-verl" / "bin" / "python"


def test_verl_adapter_tests_pass_in_the_verl_venv():
    if importlib.util.find_spec("verl") is not None:
        pytest.skip("verl is installed here: test_verl.py runs in this process")
    if not VERL_PYTHON.exists():
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail("the verl venv is missing: run `make verl-venv`", pytrace=False)
        pytest.skip("the verl venv is missing: run `make verl-venv`")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [str(VERL_PYTHON), "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests/integrations/test_verl.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1], done.stdout[-2000:]
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert all("Chromium" in line for line in skipped), skipped  # only a web case, on a machine without it
