"""Where an SWE episode's sandboxes come from: the agent's, the dense checker's and the grader's.

Each holds the repository checked out at the base commit. Without a pool
they are made and checked out when asked for; with one (``pool_size > 0``)
the pool makes them ahead, off the reset's path, opens the agent's shell and
reads the repository's state while nothing runs there, so a reset that takes
one starts from what was read (``prepared``).
"""

from __future__ import annotations

import threading
import weakref

from agentenvs.core.errors import SandboxError
from agentenvs.core.task import Task
from agentenvs.envs.swe.instance import DEFAULT_IMAGE, SWEInstance, bundle_path
from agentenvs.envs.swe.repo import RepoState, checkout_bundle, repo_state, reset_in_place
from agentenvs.sandbox import create_sandbox
from agentenvs.sandbox.base import Sandbox, SandboxSpec
from agentenvs.sandbox.pool import WarmPool
from agentenvs.sandbox.provision import LABEL_TASK


class RepoSandboxes:
    """Checked-out sandboxes of one backend for one env, from a warm pool when it has one."""

    def __init__(self, backend: str, pool_size: int = 0):
        if backend not in ("local", "docker"):
            raise ValueError(f"backend must be 'local' or 'docker', got {backend!r}")
        self.backend = backend
        self._pool = WarmPool(pool_size, factory=self._pooled) if pool_size > 0 else None
        #: The tasks the pool prepares sandboxes for, by id (its sandboxes' specs carry the id as a label).
        self._tasks: dict[str, tuple[Task, SWEInstance]] = {}
        #: The repository's state read when the pool prepared each sandbox (nothing runs there until taken).
        self._prepared: weakref.WeakKeyDictionary[Sandbox, RepoState] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def spec_for(self, task: Task, instance: SWEInstance) -> SandboxSpec:
        env = task.config.environment
        if instance.repo_in_image and self.backend != "docker":
            raise SandboxError(
                f"{instance.instance_id}: its repository lives in the image {instance.image!r}, "
                "so it runs only on the docker backend (backend='docker')"
            )
        return SandboxSpec(
            image=instance.image or env.docker_image or DEFAULT_IMAGE,
            workdir=env.workdir,
            cpus=env.cpus,
            memory_mb=env.memory_mb,
            pids=env.pids,
            env=dict(env.env),
            labels={LABEL_TASK: task.full_id},
        )

    def checked_out(self, spec: SandboxSpec, task: Task, instance: SWEInstance) -> Sandbox:
        """A sandbox holding the repository at the base commit: from the pool, else made and checked out now."""
        if self.backend == "docker":
            _require_image(spec.image)
        if self._pool is not None:
            self._tasks[task.full_id] = (task, instance)
            return self._pool.acquire(self.backend, spec)
        return self._new(self.backend, spec, task, instance)

    def wait_ready(self, task: Task, instance: SWEInstance, timeout: float = 180.0) -> bool:
        """Block until the pool holds a ready sandbox for ``task`` (tests, benchmarks, warm-up)."""
        if self._pool is None:
            return False
        self._tasks[task.full_id] = (task, instance)
        return self._pool.wait_ready(self.backend, self.spec_for(task, instance), timeout=timeout)

    def prepared(self, sandbox: Sandbox) -> RepoState | None:
        """The state the pool read in ``sandbox`` while it waited (once), or None if it was not made by the pool."""
        with self._lock:
            return self._prepared.pop(sandbox, None)

    def release(self, sandbox: Sandbox | None) -> None:
        if sandbox is None:
            return
        if self._pool is not None:
            self._pool.release(sandbox)
        else:
            sandbox.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _new(self, backend: str, spec: SandboxSpec, task: Task, instance: SWEInstance) -> Sandbox:
        sandbox = create_sandbox(backend, spec)
        try:
            checkout(sandbox, task, instance, spec.workdir)
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    def _pooled(self, backend: str, spec: SandboxSpec) -> Sandbox:
        """The pool's factory: a checked-out sandbox with the agent's shell open and its state read."""
        task, instance = self._tasks[spec.labels[LABEL_TASK]]
        sandbox = self._new(backend, spec, task, instance)
        try:
            sandbox.warm(1)
            state = repo_state(sandbox, spec.workdir, instance.base_commit)
        except BaseException:
            sandbox.close()
            raise
        with self._lock:
            self._prepared[sandbox] = state
        return sandbox


def checkout(sandbox: Sandbox, task: Task, instance: SWEInstance, workdir: str) -> None:
    """Put the repository in ``workdir`` at the base commit: from the task's bundle, or in place in the image."""
    if instance.repo_in_image:
        reset_in_place(sandbox, workdir, instance.base_commit)
    else:
        bundle = bundle_path(task)
        assert bundle is not None
        checkout_bundle(sandbox, bundle, workdir, instance.base_commit)


def _require_image(image: str) -> None:
    """A clear error, before any container is made, when an image is not in the local engine."""
    import docker.errors

    from agentenvs.sandbox.docker_engine import docker_client

    try:
        docker_client().images.get(image)
    except docker.errors.ImageNotFound:
        hint = (
            "build it with SWE-bench's harness (python -m swebench.harness.run_evaluation --cache_level instance ...) "
            "or `docker load` it"
            if image.startswith("sweb.")
            else "build it from the repository's Dockerfile (`make images`)"
        )
        raise SandboxError(f"the image {image!r} is not available locally and nothing is pulled: {hint}") from None
