"""The image's own program directories: on the verifier's PATH (after the system's), and its tools.

``standin_tasks/path-tool`` is ours: its image puts ``/opt/tool/bin`` on PATH and
its test.sh calls the tool there by name; its wrong solution replaces that tool
with one that always passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentenvs.core import load_task
from agentenvs.sandbox.agent_state import image_program_dirs, protected_reason, verifier_env
from agentenvs.validate import validate_tasks

TASK = Path(__file__).parent / "standin_tasks" / "path-tool"


def test_the_image_dirs_come_after_the_system_ones_and_the_workdir_stays_the_agents():
    env = {"PATH": "/opt/venv/bin:/usr/local/bin:/app/.venv/bin:/usr/bin:/go/bin:relative:/tests/bin:/"}
    assert image_program_dirs(env) == ("/opt/venv/bin", "/app/.venv/bin", "/go/bin")
    protected = image_program_dirs(env, "/app")
    assert protected == ("/opt/venv/bin", "/go/bin")
    path = verifier_env("/h", "/t", image_dirs=image_program_dirs(env))["PATH"].split(":")
    assert path.index("/usr/bin") < path.index("/opt/venv/bin")  # a program there never shadows a system one
    assert protected_reason("/opt/venv/bin/pytest", added=False, image_dirs=protected)
    assert protected_reason("/opt/venv/bin", added=False, is_dir=False, image_dirs=protected)  # made a link
    assert protected_reason("/opt/venv/bin", added=False, is_dir=True, image_dirs=protected) is None
    assert protected_reason("/app/.venv/bin/tool", added=True, image_dirs=protected) is None


@pytest.mark.docker
@pytest.mark.parametrize("backend", ["local", "docker"])
def test_a_tool_on_the_images_path_is_found_and_cannot_be_replaced(backend: str, docker_client: Any):
    (result,) = validate_tasks([load_task(TASK)], env_kwargs={"backend": backend})
    scores = {variant: check.score for variant, check in result.episodes.items()}
    assert scores == {"oracle": 1.0, "noop": 0.0, "wrong": 0.0}, result.episodes
    assert "/opt/tool/bin is on the image's PATH" in result.episodes["wrong"].detail
