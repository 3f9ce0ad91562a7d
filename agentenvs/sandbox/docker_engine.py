"""The Docker engine as every docker sandbox uses it: one client, ownership labels, and the sweep.

Every container and snapshot image carries the ``agentenvs`` label and its
owner's pid and host, so :func:`sweep_docker` can remove what a killed
process left behind.
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

from agentenvs.core.errors import SandboxError

LABEL = "agentenvs"
OWNER_PID_LABEL = "agentenvs.owner_pid"
OWNER_HOST_LABEL = "agentenvs.owner_host"
SNAPSHOT_LABEL = "agentenvs.snapshot"
SNAPSHOT_REPO = "agentenvs/snapshot"
OUR_STAGES = ("agentenvs/terminal", "agentenvs/swe", "agentenvs/base", "agentenvs/gui", "agentenvs/web")
_client_lock = threading.Lock()
_client: Any = None
_client_pid = 0


def docker_client() -> Any:
    """The process-wide Docker client; a clear SandboxError when no engine answers.

    One per process: a forked child (an ``AsyncVectorEnv`` worker) that reused its parent's
    pooled connections to the engine would read replies meant for its siblings.
    """
    global _client, _client_pid
    with _client_lock:
        if _client is not None and _client_pid == os.getpid():
            return _client
        try:
            import docker
        except ImportError:
            raise SandboxError("the docker backend needs the Docker SDK: pip install 'agentenvs[docker]'") from None
        try:
            client = docker.from_env(timeout=120)
            client.ping()
        except Exception as exc:
            raise SandboxError(
                f"cannot reach the Docker engine ({exc}). Run `make install` (it starts dockerd), "
                "or start it yourself: dockerd --iptables=false --bridge=none"
            ) from None
        _client, _client_pid = client, os.getpid()
        return client


def engine_reachable() -> bool:
    """Whether a docker engine answers (the local backend then builds Dockerfiles with it)."""
    try:
        docker_client()
    except SandboxError:
        return False
    return True


def owner_labels() -> dict[str, str]:
    """Labels that tie a container or image to this process, for sweeping."""
    return {LABEL: "1", OWNER_PID_LABEL: str(os.getpid()), OWNER_HOST_LABEL: socket.gethostname()}


def missing_image_error(image: str) -> SandboxError:
    if image.split(":")[0] in OUR_STAGES:
        stage = image.split(":")[0].split("/")[-1]
        how = f"run `make install` to build {image} (the Dockerfile's `{stage}` stage)"
    else:
        how = "build it first (agentenvs.sandbox.images.build_task_image) or `docker load` it; nothing is pulled"
    return SandboxError(f"docker image {image!r} is not present locally: {how}")


def ignore_missing(fn: Any, *args: Any, **kwargs: Any) -> None:
    """Call an engine API that removes something; gone already, or refused, is fine."""
    import docker.errors

    try:
        fn(*args, **kwargs)
    except (docker.errors.NotFound, docker.errors.APIError):
        pass


def _owner_alive(labels: dict[str, str]) -> bool:
    if labels.get(OWNER_HOST_LABEL, socket.gethostname()) != socket.gethostname():
        return True
    try:
        pid = int(labels.get(OWNER_PID_LABEL, ""))
    except ValueError:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_docker(all_owners: bool = False, client: Any = None) -> int:
    """Remove agentenvs containers, snapshot images and compose networks and volumes whose owner
    process is dead (or all).

    Returns how many objects were removed. Images built for tasks are a cache
    and are kept; only snapshots (which carry an owner) are swept. Networks
    and volumes go after the containers that use them.
    """
    api = (client or docker_client()).api
    removed = 0
    for container in api.containers(all=True, filters={"label": LABEL}):
        if all_owners or not _owner_alive(container.get("Labels") or {}):
            ignore_missing(api.remove_container, container["Id"], force=True)
            removed += 1
    for image in api.images(filters={"label": SNAPSHOT_LABEL}):
        if all_owners or not _owner_alive(image.get("Labels") or {}):
            ignore_missing(api.remove_image, image["Id"], force=True)
            removed += 1
    for network in api.networks(filters={"label": LABEL}):
        if all_owners or not _owner_alive(network.get("Labels") or {}):
            ignore_missing(api.remove_network, network["Id"])
            removed += 1
    for volume in api.volumes(filters={"label": LABEL}).get("Volumes") or []:
        if all_owners or not _owner_alive(volume.get("Labels") or {}):
            ignore_missing(api.remove_volume, volume["Name"], force=True)
            removed += 1
    return removed
