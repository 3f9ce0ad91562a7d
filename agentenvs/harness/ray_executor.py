"""``RayExecutor``: every env in a Ray actor, placed across the cluster's nodes.

``agentenvs run --executor ray --ray-address ADDR`` plays the same episodes
as the local executor, with the same seeds, run directory, resume and scores:
only where the envs live changes. Each env is one actor, made on whichever
node Ray picks (spread over the nodes), and its sandbox is that node's: a
local-backend sandbox on the node's own host, a docker container on the node's
engine. Every node needs agentenvs installed (the same version) and, for task
directories given by path, the same paths.

An actor that dies (its node gone, its process killed) is an infrastructure
failure: the harness retries the episode. An exception the env raised comes
back as itself.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from agentenvs.core.errors import InfraError
from agentenvs.core.introspect import env_artifacts, env_interface, env_oracle_actions
from agentenvs.harness.executor import CLOSE_GRACE_SEC, EnvHandle, Executor

T = TypeVar("T")

#: A Ray actor holding an env mostly waits on its sandbox: reserve little CPU so that a node
#: runs as many envs as the run asks for, as the local executor's threads do.
ACTOR_CPUS = 0.01


class EnvActor:
    """One env on some node (made a Ray actor by ``RayExecutor``)."""

    def make(self, task_ref: str, env_kwargs: dict[str, Any]) -> str:
        """Make the env (a method, not ``__init__``, so that its exception comes back as itself); where it lives."""
        import ray

        import agentenvs

        self._env = agentenvs.make(task_ref, **env_kwargs)
        return f"{socket.gethostname()}/{ray.get_runtime_context().get_node_id()}"

    def reset(self, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
        return self._env.reset(seed=seed)

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        return self._env.step(action)

    def describe(self) -> dict[str, Any]:
        return env_interface(self._env)

    def oracle_actions(self) -> list[Any] | None:
        return env_oracle_actions(self._env)

    def artifacts(self) -> dict[str, bytes]:
        return env_artifacts(self._env)

    def close(self) -> None:
        self._env.close()


def call_actor(actor: Any, node: str, method: str, *args: Any, timeout: float | None = None) -> Any:
    """The actor's answer; the env's own exception as itself; a dead or silent actor as ``InfraError``."""
    import ray
    from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

    try:
        return ray.get(getattr(actor, method).remote(*args), timeout=timeout)
    except RayTaskError as exc:
        cause = exc.cause
        raise (cause if isinstance(cause, Exception) else InfraError(str(exc))) from None
    except RayActorError as exc:
        raise InfraError(f"the env's Ray actor on {node} died: {exc}") from None
    except GetTimeoutError as exc:
        raise InfraError(f"the env's Ray actor on {node} did not answer {method}: {exc}") from None


class RayEnvHandle(EnvHandle):
    """An env in an actor; each blocking call waits for the actor's answer."""

    def __init__(self, actor: Any, node: str, pool: ThreadPoolExecutor):
        self._actor = actor
        self.node = node
        self._pool = pool
        self._closed = False

    def _get(self, method: str, *args: Any, timeout: float | None = None) -> Any:
        return call_actor(self._actor, self.node, method, *args, timeout=timeout)

    def reset_blocking(self, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
        return self._get("reset", seed)

    def step_blocking(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        return self._get("step", action)

    def describe_blocking(self) -> dict[str, Any]:
        return self._get("describe")

    def oracle_actions_blocking(self) -> list[Any] | None:
        return self._get("oracle_actions")

    def artifacts_blocking(self) -> dict[str, bytes]:
        return self._get("artifacts")

    def close_blocking(self) -> None:
        if self._closed:
            return
        self._closed = True
        import ray

        try:
            self._get("close", timeout=CLOSE_GRACE_SEC)
        except InfraError:
            pass
        finally:
            ray.kill(self._actor, no_restart=True)

    async def _offload(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)


class RayExecutor(Executor):
    """Envs in Ray actors on the cluster at ``address`` (``None``: start or join a local Ray)."""

    name = "ray"

    def __init__(self, max_workers: int = 4, address: str | None = None):
        try:
            import ray
        except ImportError as exc:
            raise InfraError("the ray executor needs Ray: pip install 'agentenvs[ray]'") from exc
        self.address = address
        self._started_ray = not ray.is_initialized()
        if self._started_ray:
            ray.init(address=address, log_to_driver=False, include_dashboard=False, configure_logging=False)
        self._actor_class = ray.remote(num_cpus=ACTOR_CPUS, max_restarts=0)(EnvActor)
        self._pool = ThreadPoolExecutor(max_workers=max(2, 2 * max_workers), thread_name_prefix="agentenvs-ray")
        self.max_workers = max_workers

    def open_blocking(self, task_id: str, env_kwargs: dict[str, Any]) -> EnvHandle:
        import ray

        actor = self._actor_class.options(scheduling_strategy="SPREAD").remote()
        try:
            node = call_actor(actor, "a Ray node", "make", task_id, env_kwargs)
        except BaseException:
            ray.kill(actor, no_restart=True)
            raise
        return RayEnvHandle(actor, node, self._pool)

    async def open(self, task_id: str, env_kwargs: dict[str, Any]) -> EnvHandle:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.open_blocking, task_id, env_kwargs)

    async def aclose(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._started_ray:
            import ray

            ray.shutdown()

    def describe(self) -> dict[str, Any]:
        import ray

        nodes = [n for n in ray.nodes() if n.get("Alive")]
        return {"name": self.name, "address": self.address, "nodes": len(nodes)}
