"""Adapters whose library cannot share the main venv, tested in the venv ``make`` builds for each.

openpipe-art 0.5 needs openai<3 (.venv-art); verl 0.9 pins transformers<5.11, below the 5.13 TRL needs
(.venv-verl). See pyproject.toml. Under CI a missing venv fails: the Makefile builds both.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: module, venv, make target, the pytest arguments run there
VENVS = {
    "art": ("art", ".venv-art", "art-venv", ["tests/integrations/test_art.py", "tests/integrations/test_training_docs.py", "-k", "art"]),
    "verl": ("verl", ".venv-verl", "verl-venv", ["tests/integrations/test_verl.py"]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(VENVS))
def test_the_adapters_tests_pass_in_their_own_venv(name):
    module, venv, target, args = VENVS[name]
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here: its tests run in this process")
    python = ROOT / venv / "bin" / "python"
    if not python.exists():
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"the {name} venv is missing: run `make {target}`", pytrace=False)
        pytest.skip(f"the {name} venv is missing: run `make {target}`")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args],
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
