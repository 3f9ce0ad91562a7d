"""Shared fixtures. Docker tests fail loudly under CI when the engine is missing, and the
session ends by checking that no container this process labelled is left behind."""

from __future__ import annotations

import os
import sys

import pytest

TERMINAL_IMAGE = "agentenvs/terminal:latest"
GUI_IMAGE = "agentenvs/gui:latest"
#: Tables and paths the CLI tests read are laid out for a wide terminal, whatever the test
#: worker's temporary directory adds to a path's length.
os.environ.setdefault("COLUMNS", "200")


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def _unavailable(reason: str) -> None:
    if _in_ci():
        pytest.fail(f"{reason} (CI=true: run `make install` first; docker tests are not skipped in CI)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client():
    """The Docker SDK client, with agentenvs/terminal:latest present."""
    from agentenvs.core.errors import SandboxError

    try:
        from agentenvs.sandbox.docker_engine import docker_client as connect

        client = connect()
    except SandboxError as exc:
        _unavailable(str(exc))
    import docker.errors

    try:
        client.api.inspect_image(TERMINAL_IMAGE)
    except docker.errors.ImageNotFound:
        _unavailable(f"{TERMINAL_IMAGE} is missing: run `make install`")
    return client


@pytest.fixture(scope="session")
def gui_image(docker_client):
    """agentenvs/gui:latest, which the desktop runs on (in a container, or as a local sandbox's system)."""
    import docker.errors

    try:
        docker_client.api.inspect_image(GUI_IMAGE)
    except docker.errors.ImageNotFound:
        _unavailable(f"{GUI_IMAGE} is missing: run `make install`")
    return GUI_IMAGE


def _our_containers() -> list[str]:
    """Containers labelled with this test process as owner (none if no engine answers)."""
    try:
        import docker

        client = docker.from_env(timeout=30)
        found = client.api.containers(all=True, filters={"label": f"agentenvs.owner_pid={os.getpid()}"})
    except Exception:
        return []
    return [c["Id"][:12] + " " + ",".join(c.get("Names") or []) for c in found]


def _our_local_sandboxes() -> list[str]:
    """Local sandbox roots this test process still has on disk."""
    from agentenvs.sandbox.local_resources import SANDBOX_PARENT

    return sorted(p.name for p in SANDBOX_PARENT.glob(f"{os.getpid()}-*")) if SANDBOX_PARENT.is_dir() else []


@pytest.fixture(scope="module", autouse=True)
def close_idle_web_containers():
    """Web containers that closed envs gave back for reuse live until the process exits; each test module
    closes them when it ends, so that a later module's count of this process's containers starts at none."""
    yield
    web = sys.modules.get("agentenvs.envs.web.docker_env")
    if web is not None:
        web.IDLE.close_all()


@pytest.fixture(scope="session", autouse=True)
def no_leftover_containers():
    """Fail the session if any test left one of our containers or local sandboxes behind, then remove them."""
    yield
    import gc

    from agentenvs.sandbox.local_resources import sweep_local_sandboxes

    gc.collect()  # sandboxes dropped without close() are released by their finalizers
    local = _our_local_sandboxes()
    if local:
        sweep_local_sandboxes()
        pytest.fail(f"tests left {len(local)} local sandbox(es) behind: {local[:5]}", pytrace=False)
    leftovers = _our_containers()
    if leftovers:
        import docker

        from agentenvs.sandbox.docker_engine import sweep_docker

        api = docker.from_env(timeout=30).api
        for container in leftovers:
            api.remove_container(container.split()[0], force=True)
        sweep_docker()
        pytest.fail(f"tests left {len(leftovers)} agentenvs container(s) behind: {leftovers}", pytrace=False)
