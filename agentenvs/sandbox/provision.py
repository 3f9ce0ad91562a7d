"""From a task to a ready sandbox, on either backend, optionally through a warm pool.

A task's environment is its ``environment/Dockerfile`` (Harbor's layout):
built into an image on ``docker``, interpreted once into a template root on
``local``. Families ask a ``Provisioner`` for a sandbox per episode and give
it back at the end; with ``pool_size > 0`` the next one is already waiting.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenvs.core.errors import TaskFormatError
from agentenvs.core.task import Task
from agentenvs.sandbox import backends, create_sandbox
from agentenvs.sandbox.base import Sandbox, SandboxSpec
from agentenvs.sandbox.compose import compose_file
from agentenvs.sandbox.pool import WarmPool

LABEL_TASK = "agentenvs.task"


#: Shells an episode opens at reset (the agent's and the checkers'): a pooled sandbox has them open.
EPISODE_SHELLS = 2


def _make(backend: str, spec: SandboxSpec) -> Sandbox:
    """On ``local`` the spec's image is a built image or, without docker, the environment directory."""
    if backend == "local" and spec.image:
        if Path(spec.image).is_dir():
            return create_sandbox("local", spec, environment=spec.image)
        return create_sandbox("local", spec, image=spec.image)
    return create_sandbox(backend, spec)


def local_build(task: Task) -> tuple[str, str]:
    """The image a local sandbox for ``task`` runs over (built now, the docker backend's tag and cache),
    or ``""`` and why its ``environment/Dockerfile`` is applied literally instead (see docs/task-format.md)."""
    env = task.config.environment
    context = task.dir("environment")
    dockerfile = context / "Dockerfile" if context is not None else None
    if not env.docker_image and (dockerfile is None or not dockerfile.is_file()):
        return "", ""
    from agentenvs.sandbox.docker_engine import engine_reachable

    literal = (
        "so its Dockerfile was applied without docker: FROM ignored, RUN run against the host's read-only "
        "system (apt-get and pip installs fail)"
    )
    if not engine_reachable():
        return "", f"{task.full_id}: no docker engine answers, {literal}; install and start docker for real builds"
    from agentenvs.sandbox.images import base_images, image_user, resolve_base, task_image

    wanted = [env.docker_image] if env.docker_image else base_images(dockerfile.read_text()) if dockerfile else []
    missing = [image for image in wanted if resolve_base(image).status == "missing"]
    if missing:
        return "", (
            f"{task.full_id}: {', '.join(missing)} not in the docker engine (nothing is pulled) and no row of the "
            f"substitution table stands in, {literal}"
        )
    image = task_image(task)
    user = image_user(image)
    if user.split(":")[0] not in ("", "root", "0"):
        return image, f"{task.full_id}: the image's USER {user} is not honoured locally: commands run as root"
    return image, ""


#: What a family computes on a pooled sandbox before any episode takes it (its first checks, say).
Prepare = Callable[[Sandbox, Task], Any]


def machine_cpus() -> int:
    """The CPUs this process may use (a task asking for more gets these, with a warning, not a refusal)."""
    return len(os.sched_getaffinity(0))


def machine_network(backend: str) -> str:
    """Why ``backend`` cannot give a sandbox a network here (empty when it can)."""
    if backend == "local":
        return "the local backend gives no network (it would share the host's, loopback services included)"
    if backend == "docker":
        from agentenvs.sandbox.docker_engine import docker_client

        if not docker_client().api.networks(names=["bridge"]):
            return "the docker engine has no bridge network (it runs with --bridge=none)"
    return ""


class Provisioner:
    """Hands out fresh sandboxes holding a task's initial state."""

    def __init__(
        self, backend: str = "local", *, pool_size: int = 0, network: str = "task", prepare: Prepare | None = None
    ):
        """``prepare`` runs on each pooled sandbox in the pool's thread, after its shells are open;
        ``prepared(sandbox)`` hands its result to the episode that takes the sandbox."""
        if backend not in backends():
            raise ValueError(f"unknown sandbox backend {backend!r}; choose one of {', '.join(backends())}")
        if network not in ("task", "off"):
            raise ValueError(f"network must be 'task' (as the task asks, where possible) or 'off', got {network!r}")
        self.backend = backend
        self.network = network
        self._pool = WarmPool(size=pool_size, factory=self._make_warm) if pool_size > 0 else None
        self._prepare = prepare
        #: The tasks the pool makes sandboxes for, by id (a pooled sandbox's spec carries the id as a label).
        self._tasks: dict[str, Task] = {}
        self._prepared: weakref.WeakKeyDictionary[Sandbox, Any] = weakref.WeakKeyDictionary()
        #: Each task's warnings about its image (a stand-in, no real build), by id.
        self._image_warnings: dict[str, list[str]] = {}
        #: Each task's local build (image, why not), by id: looked up once, not at every reset.
        self._local_builds: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def _make_warm(self, backend: str, spec: SandboxSpec) -> Sandbox:
        """Pool factory: a sandbox with the episode's shells open, its state checker started, and prepared."""
        sandbox = _make(backend, spec)
        try:
            sandbox.warm(EPISODE_SHELLS)
            result = self._prepare(sandbox, self._tasks[spec.labels[LABEL_TASK]]) if self._prepare else None
        except BaseException:
            sandbox.close()
            raise
        with self._lock:
            self._prepared[sandbox] = result
        return sandbox

    def prepared(self, sandbox: Sandbox) -> Any:
        """What ``prepare`` returned for ``sandbox`` (once), or None if it was not made by the pool."""
        with self._lock:
            return self._prepared.pop(sandbox, None)

    def spec_for(self, task: Task) -> SandboxSpec:
        """The sandbox a task asks for in its ``[environment]`` section."""
        env = task.config.environment
        image = self._image(task)
        return SandboxSpec(
            image=image,
            workdir=self._workdir(task, image),
            cpus=min(env.cpus, machine_cpus()),
            memory_mb=env.memory_mb,
            pids=env.pids,
            storage_mb=env.storage_mb or SandboxSpec.storage_mb,
            network=self.network_plan(task)[0],
            env=dict(env.env),
            labels={LABEL_TASK: task.full_id},
        )

    def network_plan(self, task: Task) -> tuple[bool, list[str]]:
        """Whether the sandbox gets a network, and why a task that asks for one does not get it.

        Off unless the task asks (``network_mode``, ``allow_internet``,
        ``allowed_hosts``); given only where the backend can give it safely.
        An allowlist cannot be enforced here, so it means no network.
        """
        cfg = task.config
        mode = cfg.agent.requested_mode() or cfg.environment.requested_mode()
        wanted = f"{task.full_id} asks for network ({mode})"
        granted, warnings = False, []
        if mode == "allowlist":
            hosts = ", ".join(cfg.agent.allowed_hosts or cfg.environment.allowed_hosts) or "no hosts"
            warnings.append(f"{wanted} to {hosts}: an allowlist cannot be enforced here, so the sandbox has no network")
        elif mode == "public" and self.network == "off":
            warnings.append(f"{wanted}, but network is off for this run: the sandbox has none")
        elif mode == "public":
            missing = machine_network(self.backend)
            granted = not missing
            if missing:
                warnings.append(f"{wanted}, but {missing}: the sandbox has none")
        return granted, warnings

    def warnings_for(self, task: Task) -> list[str]:
        """What the task asked for and will not get (the network, a real build), and what stood in for
        its base image, for ``info["warnings"]``."""
        if task.full_id not in self._image_warnings:  # the engine's images do not change between resets
            self._image_warnings[task.full_id] = self._image_warnings_of(task)
        cpus = task.config.environment.cpus
        fewer = (
            [f"{task.full_id} asks for {cpus:g} CPUs; this machine has {machine_cpus()}, so the sandbox gets them all"]
            if cpus > machine_cpus()
            else []
        )
        return self.network_plan(task)[1] + fewer + self._image_warnings[task.full_id]

    def _image_warnings_of(self, task: Task) -> list[str]:
        from agentenvs.sandbox.images import substitution_warnings

        if self.backend == "local":
            image, why = self._local_build(task)
            return [*(substitution_warnings(task) if image else []), *([why] if why else [])]
        return substitution_warnings(task) if self.backend == "docker" else []

    def _local_build(self, task: Task) -> tuple[str, str]:
        """:func:`local_build` once per task and Provisioner (engine queries and a context hash each time)."""
        if task.full_id not in self._local_builds:
            self._local_builds[task.full_id] = local_build(task)
        return self._local_builds[task.full_id]

    def _workdir(self, task: Task, image: str) -> str:
        """Where the agent starts: ``[environment] workdir`` if the task names one, else the image's
        WORKDIR (a local template without docker takes the Dockerfile's last WORKDIR), else ``/app``."""
        env = task.config.environment
        if not image or Path(image).is_dir() or env.workdir_is_set:
            return env.workdir
        from agentenvs.sandbox.images import image_workdir

        return image_workdir(image) or env.workdir

    def _image(self, task: Task) -> str:
        if self.backend == "docker":
            from agentenvs.sandbox.images import task_image

            return task_image(task)
        image = self._local_build(task)[0]
        environment = task.dir("environment")
        return image or (str(environment) if environment is not None else "")

    def acquire(self, task: Task) -> Sandbox:
        """A sandbox for ``task``; a compose task's side services start first (docker only, never pooled)."""
        compose = compose_file(task.dir("environment"))
        if compose is not None:
            if self.backend != "docker":
                raise TaskFormatError(
                    compose,
                    f"{task.full_id} is a compose task (several services): it needs the docker backend; "
                    "run it with --backend docker (agentenvs.make(..., backend='docker'))",
                )
            from agentenvs.sandbox.docker_services import compose_sandbox

            return compose_sandbox(task, compose, self.spec_for(task))
        spec = self.spec_for(task)
        if self._pool is not None:
            self._tasks[task.full_id] = task
            return self._pool.acquire(self.backend, spec)
        return _make(self.backend, spec)

    def wait_ready(self, task: Task, timeout: float = 60.0) -> bool:
        """Block until the pool holds a ready sandbox for ``task`` (benchmarks, warm-up)."""
        if self._pool is None:
            return False
        self._tasks[task.full_id] = task
        return self._pool.wait_ready(self.backend, self.spec_for(task), timeout=timeout)

    def release(self, sandbox: Sandbox) -> None:
        if self._pool is not None:
            self._pool.release(sandbox)
        else:
            sandbox.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
