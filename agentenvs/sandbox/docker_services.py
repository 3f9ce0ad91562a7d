"""A compose task's side services on the docker backend, through the Docker SDK (no ``docker compose``).

Per episode: one private network (``internal``: no route out, unless the
task was granted network), the task's named and anonymous volumes, and a
container per service other than ``main``, started in ``depends_on`` order
and waited on as ``docker compose up --wait`` waits (running, or healthy
where a healthcheck is defined). The agent's ``main`` container is a normal
:class:`~agentenvs.sandbox.docker.DockerSandbox` that joins the network as
``main``; it owns the group and removes it at close. Everything carries the
owner labels, so :func:`~agentenvs.sandbox.docker_engine.sweep_docker`
removes what a killed process left.

At the seal the side services keep running (they hold state the verifier
may read, e.g. a database the task asks to fill); the agent's container is
stopped, and the verifier's container joins the network in its place. The
agent never had a shell in a side service, so it cannot have left a process
there; what a service does on a request is the task's code. Each service's writable
layer and each volume are held to the task's ``storage_mb`` (:mod:`.docker_disk`):
an agent that makes a service write without end finds the service killed.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentenvs.core.errors import SandboxError, TaskFormatError
from agentenvs.core.task import Task
from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.compose import MAIN, ComposePlan, Service, load_compose
from agentenvs.sandbox.docker_disk import disk_guard
from agentenvs.sandbox.docker_engine import docker_client, ignore_missing, owner_labels
from agentenvs.sandbox.docker_exec import as_sandbox_error, creation_error

if TYPE_CHECKING:
    from agentenvs.sandbox.docker import DockerSandbox

COMPOSE_LABEL = "agentenvs.compose"
SERVICE_LABEL = "agentenvs.compose.service"
_POLL = 0.2


class ServiceGroup:
    """The network, volumes and side containers of one episode; ``release`` removes them all."""

    def __init__(self, api: Any, plan: ComposePlan, spec: SandboxSpec, images: dict[str, str], timeout: float):
        self.api = api
        self.plan = plan
        self.project = f"agentenvs-{uuid.uuid4().hex[:12]}"
        self.network = ""
        self.volumes: dict[str, str] = {}
        self.containers: dict[str, str] = {}
        #: Keys of what the disk guard watches for this group (service layers and volumes).
        self.watched: list[str] = []
        self._spec = spec
        self._images = images
        self._timeout = timeout
        self._labels = {**spec.labels, **owner_labels(), COMPOSE_LABEL: self.project}

    def start(self) -> None:
        """Network, volumes, then each service once its dependencies meet their conditions."""
        deadline = time.monotonic() + self._timeout
        try:
            internal = not self._spec.network
            self.network = self.api.create_network(
                self.project,
                driver="bridge",
                internal=internal,
                # No address for the host on the bridge: an internal network alone still let the
                # containers reach every host service listening on 0.0.0.0 at the gateway's address.
                options={"com.docker.network.bridge.inhibit_ipv4": "true"} if internal else None,
                labels=self._labels,
            )["Id"]
            for name in self.plan.volumes:
                volume = self.api.create_volume(f"{self.project}-{name}", labels=self._labels)
                self.volumes[name] = volume["Name"]
                self._guard(f"volume:{volume['Name']}", volume.get("Mountpoint"))
        except Exception as exc:
            raise as_sandbox_error(exc, "creating the compose network and volumes") from None
        for service in self.plan.services:
            self.wait_for(service.depends_on, deadline)
            self.containers[service.name] = self._run(service)
        self.wait_for(self._required(), deadline, all_healthy=True)

    def _required(self) -> dict[str, str]:
        """What the agent's start waits for per service: what any dependent asks of it, else running."""
        needed = {s.name: "service_started" for s in self.plan.services}
        for service in [self.plan.main, *self.plan.services]:
            for dep, condition in service.depends_on.items():
                if needed[dep] != "service_completed_successfully":
                    needed[dep] = condition
        return needed

    def mounts(self, service: Service) -> tuple[tuple[str, str, bool], ...]:
        """``(source, target, read_only)`` with named volumes resolved to this episode's."""
        return tuple(
            (self.volumes[v.source] if v.kind == "volume" else v.source, v.target, v.read_only) for v in service.volumes
        )

    def _run(self, service: Service) -> str:
        spec = self._spec
        host_config = self.api.create_host_config(
            network_mode=self.project,
            mem_limit=f"{spec.memory_mb}m",
            memswap_limit=f"{spec.memory_mb}m",
            nano_cpus=int(spec.cpus * 1e9),
            pids_limit=spec.pids,
            binds={src: {"bind": dst, "mode": "ro" if ro else "rw"} for src, dst, ro in self.mounts(service)},
        )
        endpoint = self.api.create_endpoint_config(aliases=[service.name])
        image = self._images[service.name]
        try:
            container = self.api.create_container(
                image,
                name=f"{self.project}-{service.name}",
                command=service.command,
                entrypoint=service.entrypoint,
                working_dir=service.working_dir or None,
                user=service.user or None,
                environment=service.environment,
                healthcheck=service.healthcheck.engine() if service.healthcheck else None,
                labels={**self._labels, SERVICE_LABEL: service.name},
                host_config=host_config,
                networking_config=self.api.create_networking_config({self.project: endpoint}),
                detach=True,
            )["Id"]
        except Exception as exc:
            raise creation_error(exc, image, f"creating service {service.name}") from None
        self.containers[service.name] = container
        try:
            self.api.start(container)
        except Exception as exc:
            raise as_sandbox_error(exc, f"starting service {service.name}") from None
        upper = self.api.inspect_container(container).get("GraphDriver", {}).get("Data", {}).get("UpperDir")
        self._guard(container, upper)
        return str(container)

    def _guard(self, key: str, path: str | None) -> None:
        """Past ``storage_mb`` under ``path``, every side service is killed: which one writes is unknown."""
        if not path:
            return

        def exceeded(used: int) -> None:
            for container in list(self.containers.values()):
                ignore_missing(self.api.kill, container)

        disk_guard().watch(key, Path(path), self._spec.storage_mb, exceeded)
        self.watched.append(key)

    def wait_for(self, deps: dict[str, str], deadline: float, *, all_healthy: bool = False) -> None:
        """Block until each dependency meets its condition; with ``all_healthy`` every service that
        has a healthcheck must also be healthy (``up --wait``). Bounded by ``deadline``."""
        pending = dict(deps)
        while pending:
            for name, condition in list(pending.items()):
                if self._met(name, condition, all_healthy):
                    del pending[name]
            if not pending:
                return
            if time.monotonic() > deadline:
                waits = ", ".join(f"{n} ({c})" for n, c in pending.items())
                raise SandboxError(f"compose services not ready in {self._timeout:g}s: {waits}")
            time.sleep(_POLL)

    def _met(self, name: str, condition: str, all_healthy: bool) -> bool:
        try:
            state = self.api.inspect_container(self.containers[name])["State"]
        except Exception as exc:
            raise as_sandbox_error(exc, f"inspecting service {name}") from None
        health = (state.get("Health") or {}).get("Status")
        if condition == "service_completed_successfully":
            if state["Status"] != "exited":
                return False
            if state["ExitCode"] != 0:
                raise SandboxError(f"service {name} exited with {state['ExitCode']}: {self._logs(name)}")
            return True
        if state["Status"] == "exited":
            raise SandboxError(
                f"service {name} exited with {state['ExitCode']} before it was ready: {self._logs(name)}"
            )
        if health == "unhealthy":
            raise SandboxError(f"service {name} is unhealthy: {self._health_log(state)}")
        if condition == "service_healthy" and health is None:
            raise TaskFormatError(self.plan.path, f"depends_on {name} with service_healthy, but {name} has no healthcheck",
                                  f"services.{name}.healthcheck")  # fmt: skip
        if condition == "service_healthy" or (all_healthy and health is not None):
            return health == "healthy"
        return bool(state["Running"])

    def _logs(self, name: str) -> str:
        try:
            return self.api.logs(self.containers[name], tail=20).decode("utf-8", "replace")[-1000:]
        except Exception:  # the container is gone too; the exit code said enough
            return ""

    @staticmethod
    def _health_log(state: dict[str, Any]) -> str:
        log = (state.get("Health") or {}).get("Log") or [{}]
        return str(log[-1].get("Output", ""))[-500:]

    def release(self) -> None:
        """Remove the side containers, then the network and the volumes. Safe to call twice."""
        for key in self.watched:
            disk_guard().forget(key)
        self.watched.clear()
        for container in self.containers.values():
            ignore_missing(self.api.remove_container, container, force=True, v=True)
        self.containers.clear()
        if self.network:
            ignore_missing(self.api.remove_network, self.network)
            self.network = ""
        for volume in self.volumes.values():
            ignore_missing(self.api.remove_volume, volume, force=True)
        self.volumes.clear()


def compose_variables(task: Task, spec: SandboxSpec) -> dict[str, str]:
    """What Harbor's compose files may interpolate (never the host's environment)."""
    environment = task.dir("environment")
    return {
        **spec.env,
        "MAIN_IMAGE_NAME": spec.image,
        "CONTEXT_DIR": str(environment.resolve()) if environment else "",
        "CPUS": f"{spec.cpus:g}",
        "MEMORY": f"{spec.memory_mb}M",
    }


def _images(task: Task, plan: ComposePlan, spec: SandboxSpec, client: Any) -> dict[str, str]:
    """Each service's image: built from its ``build`` (cached as task images are) or named, never pulled."""
    from agentenvs.sandbox.images import build_image, local_image

    environment = task.dir("environment")
    images: dict[str, str] = {}
    for service in [plan.main, *plan.services]:
        default_build = service.build_context == (environment.resolve() if environment else None)
        if service.name == MAIN and (service.image == spec.image or (default_build and service.dockerfile == "Dockerfile")
                                     or (not service.image and service.build_context is None)):  # fmt: skip
            images[MAIN] = spec.image
        elif service.build_context is not None:
            images[service.name] = build_image(
                service.build_context,
                f"{task.full_id}-{service.name}".replace("/", "-"),
                dockerfile=service.dockerfile,
                build_args=service.build_args,
                timeout=task.config.environment.build_timeout_sec,
                substitute=False,  # a side service's stand-in would go unreported: only the main image's is
                client=client,
            )
        else:
            images[service.name] = local_image(service.image, client=client, substitute=False)
    return images


def compose_sandbox(task: Task, compose: Any, spec: SandboxSpec) -> DockerSandbox:
    """Start a compose task's side services, then the agent's ``main`` container among them."""
    from agentenvs.sandbox.docker import DockerSandbox

    client = docker_client()
    plan = load_compose(compose, compose_variables(task, spec))
    images = _images(task, plan, spec, client)
    group = ServiceGroup(client.api, plan, spec, images, timeout=task.config.environment.build_timeout_sec)
    try:
        group.start()
        main = plan.main
        workdir = spec.workdir if task.config.environment.workdir_is_set else main.working_dir or spec.workdir
        main_spec = replace(
            spec,
            image=images[MAIN],
            workdir=workdir,
            env={**spec.env, **main.environment},
            mounts=spec.mounts + group.mounts(main),
        )
        sandbox = DockerSandbox(main_spec, client=client, group=group)
    except BaseException:
        group.release()
        raise
    sandbox.own_group()
    return sandbox
