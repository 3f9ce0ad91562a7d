"""From a task to a ready sandbox, on either backend, optionally through a warm pool.

A task's environment is its ``environment/Dockerfile`` (Harbor's layout):
built into an image on ``docker``, interpreted once into a template root on
``local``. Families ask a ``Provisioner`` for a sandbox per episode and give
it back at the end; with ``pool_size > 0`` the next one is already waiting.
"""

from __future__ import annotations

from pathlib import Path

from agentenvs.core.task import Task
from agentenvs.sandbox import backends, create_sandbox
from agentenvs.sandbox.base import Sandbox, SandboxSpec
from agentenvs.sandbox.pool import WarmPool

LABEL_TASK = "agentenvs.task"


def _make(backend: str, spec: SandboxSpec) -> Sandbox:
    """Pool factory: on ``local`` the spec's image names the environment directory."""
    if backend == "local" and spec.image and Path(spec.image).is_dir():
        return create_sandbox("local", spec, environment=spec.image)
    return create_sandbox(backend, spec)


class Provisioner:
    """Hands out fresh sandboxes holding a task's initial state."""

    def __init__(self, backend: str = "local", *, pool_size: int = 0):
        if backend not in backends():
            raise ValueError(f"unknown sandbox backend {backend!r}; choose one of {', '.join(backends())}")
        self.backend = backend
        self._pool = WarmPool(size=pool_size, factory=_make) if pool_size > 0 else None

    def spec_for(self, task: Task) -> SandboxSpec:
        """The sandbox a task asks for in its ``[environment]`` section."""
        env = task.config.environment
        return SandboxSpec(
            image=self._image(task),
            workdir=env.workdir,
            cpus=env.cpus,
            memory_mb=env.memory_mb,
            pids=env.pids,
            storage_mb=env.storage_mb or SandboxSpec.storage_mb,
            network=env.network,
            env=dict(env.env),
            labels={LABEL_TASK: task.full_id},
        )

    def _image(self, task: Task) -> str:
        if self.backend == "docker":
            from agentenvs.sandbox.images import task_image

            return task_image(task)
        environment = task.dir("environment")
        return str(environment) if environment is not None else ""

    def acquire(self, task: Task) -> Sandbox:
        spec = self.spec_for(task)
        if self._pool is not None:
            return self._pool.acquire(self.backend, spec)
        return _make(self.backend, spec)

    def wait_ready(self, task: Task, timeout: float = 60.0) -> bool:
        """Block until the pool holds a ready sandbox for ``task`` (benchmarks, warm-up)."""
        if self._pool is None:
            return False
        return self._pool.wait_ready(self.backend, self.spec_for(task), timeout=timeout)

    def release(self, sandbox: Sandbox) -> None:
        if self._pool is not None:
            self._pool.release(sandbox)
        else:
            sandbox.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
