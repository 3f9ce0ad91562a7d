"""A docker sandbox's container as it is made: limits, binds, network, and a PID 1 the agent cannot stop.

Every container (the agent's, one restored from a snapshot, the verifier's
after a seal) starts from an image with the spec's memory, CPU and pids
limits, the checkers read-only at the evaluators mount, and the network off,
on the bridge, or (a compose task's ``main``) on its side services' private
network. Its PID 1 is :data:`KEEPER`, which ignores signals; where this
process may, it is spared by the out-of-memory killer too (:func:`spare_keeper`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentenvs.sandbox.base import HOSTNAME, SandboxSpec
from agentenvs.sandbox.checks import EVALUATORS_MOUNT, EVALUATORS_SOURCE
from agentenvs.sandbox.docker_engine import ignore_missing, owner_labels
from agentenvs.sandbox.docker_exec import as_sandbox_error, creation_error

if TYPE_CHECKING:
    from agentenvs.sandbox.docker_services import ServiceGroup

#: The container's PID 1. As a namespace's init it ignores every signal sent from inside (``kill -9 -1``
#: included), and the shell reaps the orphans it adopts, so the agent cannot stop its own container.
KEEPER = 'trap "" HUP INT QUIT TERM USR1 USR2; while :; do sleep 3600 & wait $!; done'


def create_container(api: Any, spec: SandboxSpec, image: str, group: ServiceGroup | None) -> str:
    """Create and start a container of ``image`` under ``spec``'s limits, joined to ``group``'s network as
    ``main`` when there is one; its id."""
    network = group.project if group else "bridge" if spec.network else "none"
    joins = None
    if group:
        endpoint = api.create_endpoint_config(aliases=["main"])
        joins = api.create_networking_config({network: endpoint})
    host_config = api.create_host_config(
        network_mode=network,
        mem_limit=f"{spec.memory_mb}m",
        memswap_limit=f"{spec.memory_mb}m",
        nano_cpus=int(spec.cpus * 1e9),
        pids_limit=spec.pids,
        binds={
            str(EVALUATORS_SOURCE): {"bind": EVALUATORS_MOUNT, "mode": "ro"},
            **{host: {"bind": inside, "mode": "ro" if ro else "rw"} for host, inside, ro in spec.mounts},
        },
    )
    labels = {**spec.labels, **owner_labels()}
    try:
        container = api.create_container(
            image,
            entrypoint=["/bin/sh", "-c", KEEPER],
            command=[],
            hostname=HOSTNAME,
            working_dir=spec.workdir,
            environment=spec.env,
            labels=labels,
            host_config=host_config,
            networking_config=joins,
            detach=True,
        )["Id"]
    except Exception as exc:
        raise creation_error(exc, image, f"create from {image}") from None
    try:
        api.start(container)
    except Exception as exc:
        ignore_missing(api.remove_container, container, force=True)
        raise as_sandbox_error(exc, f"start of {image}") from None
    spare_keeper(api, container)
    return container


def spare_keeper(api: Any, container: str) -> None:
    """Make the out-of-memory killer pick the agent's processes, never PID 1 (which would stop the container)."""
    try:
        pid = int(api.inspect_container(container)["State"]["Pid"])
        Path(f"/proc/{pid}/oom_score_adj").write_text("-1000")
    except (OSError, KeyError, ValueError):
        pass  # not root on the engine's host: the keeper is tiny, the killer rarely picks it anyway
