"""The gui tests need the docker engine and the agentenvs/gui:latest image (scripts/install-system.sh)."""

from __future__ import annotations

import pytest

GUI_IMAGE = "agentenvs/gui:latest"


@pytest.fixture(scope="session")
def gui_image(docker_client):
    import docker.errors

    from tests.conftest import _unavailable

    try:
        docker_client.api.inspect_image(GUI_IMAGE)
    except docker.errors.ImageNotFound:
        _unavailable(f"{GUI_IMAGE} is missing: run scripts/install-system.sh")
    return GUI_IMAGE
