"""A verifier that pins a package version the index lacks is an environment error, not the agent's 0.

The requirements are read from the task's own ``tests/`` files and the
versions from the index (PyPI, asked from the host), so nothing the agent
prints in the sandbox can turn its failure into "the machine lacks it".
``standin_tasks/pinned-missing`` pins a pytest that does not exist;
``standin_tasks/newer-python`` a Django that needs a newer Python than the
stand-in for ``python:3.12-slim`` has. ``standin_tasks/active-users`` pins a
version that exists, and its no-op still scores 0 (test_verifier_egress.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentenvs.core import load_task
from agentenvs.harness.scoring import machine_lacks
from agentenvs.sandbox.package_pins import Pin, image_python, unavailable, verifier_pins
from agentenvs.validate import validate_tasks

TASKS = Path(__file__).parent / "standin_tasks"

SCRIPT = r"""#!/bin/bash
apt-get update && apt-get install -y curl  # not Python
if pip install --quiet pytest==8.3.4 requests; then :; fi
PIP_NO_CACHE_DIR=1 python3 -m pip install "numpy>=1.26,<2" \
    -r /tests/requirements.txt
uv pip install --system six==1.16.0 && uvx ruff@0.6.9 check .
uv run --with 'pluggy==1.5.0' pytest
pip install -i https://mirror.example/simple other==1.0  # another index: not PyPI's to answer
pip install ./local.whl git+https://example.org/x.git "attrs; python_version > '3'"
# pip install commented==1.0
"""


def _tests(tmp_path: Path) -> Path:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test.sh").write_text(SCRIPT)
    (tests / "requirements.txt").write_text("# tools\niniconfig==2.0.0\nmarkupsafe>=2.1 ; python_version>'3'\n")
    (tests / "unused.txt").write_text("never==1.0\n")
    return tests


def test_pins_are_read_from_every_way_a_test_script_installs(tmp_path: Path):
    pins = verifier_pins([_tests(tmp_path)])
    assert [p.requirement for p in pins] == [
        "pytest==8.3.4",
        "numpy<2,>=1.26",
        "iniconfig==2.0.0",
        "six==1.16.0",
        "ruff==0.6.9",
        "pluggy==1.5.0",
    ]
    assert {p.requirement: p.source for p in pins}["iniconfig==2.0.0"] == "/tests/requirements.txt"


def test_the_index_answers_for_versions_and_for_the_images_python():
    lacking = unavailable(
        [Pin("pytest==99.0.0", "t"), Pin("pytest==8.3.4", "t"), Pin("pluggy>=99", "t"), Pin("no-such-pkg-q7z==1", "t")],
        "3.11",
    )
    assert set(lacking) == {"pytest==99.0.0", "pluggy>=99", "no-such-pkg-q7z==1"}
    assert "has no version ==99.0.0 (newest " in lacking["pytest==99.0.0"]
    assert "has no project no-such-pkg-q7z" in lacking["no-such-pkg-q7z==1"]
    django = [Pin("django==6.0", "t")]
    assert unavailable(django, "3.11") == {"django==6.0": "needs Python >=3.12, the image has 3.11"}
    assert unavailable(django, "3.12") == {} and unavailable(django, None) == {}


@pytest.mark.docker
def test_the_python_is_the_images_not_the_sandboxes(docker_client: Any):
    assert image_python("agentenvs/base:latest") == "3.11"


@pytest.mark.parametrize(
    ("backend", "task", "said"),
    [
        ("local", "pinned-missing", "the package mirror lacks pytest==99.0.0"),
        pytest.param("docker", "pinned-missing", "the package mirror lacks pytest==99.0.0", marks=pytest.mark.docker),
        ("local", "newer-python", "the package mirror lacks django==6.0"),
    ],
)
def test_a_pinned_version_the_index_lacks_is_an_environment_error(backend: str, task: str, said: str):
    (result,) = validate_tasks([load_task(TASKS / task)], env_kwargs={"backend": backend})
    assert set(result.episodes) == {"oracle", "noop", "wrong"}
    for variant, check in result.episodes.items():
        assert check.score is None, (variant, check)
        assert said in check.detail, (variant, check.detail)
    # the run's headline counts it by what was lacking, as it counts a missing host
    assert machine_lacks([{"error": result.episodes["oracle"].detail}]) == {said: 1}
    if task == "newer-python":
        assert "needs Python >=3.12, the image has 3.11" in result.episodes["oracle"].detail
