"""``RayPoolExecutor``: an ``EnvPool`` whose envs live in Ray actors, spread over a cluster's nodes.

Each env slot gets one actor hosting an ``EnvRunner`` (the same env-side code
as the thread executor), so every env runs on some node with that node's own
sandboxes, while the pool, its queue of tasks and its results stay in the
trainer's process. A thread per slot waits on its actor, so ``submit`` and
``poll`` behave exactly as with threads. An actor that dies (its node lost)
is an ``InfraError`` result and the pool replaces the env, as for any env
that raised.

    pool = agentenvs.EnvPool(tasks, size=64, executor=RayPoolExecutor(address="auto"))
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from agentenvs.core.errors import InfraError
from agentenvs.pool.workers import Call, EnvRunner, PoolExecutor, Reply, ThreadWorker, Worker

#: An env mostly waits on its sandbox: reserve little CPU, as the harness's ray executor does.
ACTOR_CPUS = 0.01
#: How long closing an env in its actor may take before the actor is killed.
CLOSE_TIMEOUT_SEC = 60.0


class RunnerActor:
    """An ``EnvRunner`` on some node (made a Ray actor by ``RayPoolExecutor``)."""

    def __init__(self) -> None:
        self._runner = EnvRunner()

    def where(self) -> str:
        import ray

        return f"{socket.gethostname()}/{ray.get_runtime_context().get_node_id()}"

    def run(self, call: Call) -> Reply:
        return self._runner.run(call)

    def close(self) -> None:
        self._runner.close()


class RemoteRunner(EnvRunner):
    """Stands in for an ``EnvRunner`` in the pool's process: each call goes to the slot's actor."""

    def __init__(self, actor: Any):
        super().__init__()
        self._actor = actor
        self._calls = 0
        self._busy = threading.Lock()

    @property
    def node(self) -> str:
        """Where the actor lives (blocks until it has started)."""
        import ray

        return str(ray.get(self._actor.where.remote()))

    def run(self, call: Call) -> Reply:
        import ray
        from ray.exceptions import RayActorError

        started = time.perf_counter()
        with self._busy:
            self._calls += 1
        try:
            return ray.get(self._actor.run.remote(call))
        except RayActorError as exc:
            error = InfraError(f"the pool env's Ray actor died: {exc}")
            return Reply(call.token, None, error, time.perf_counter() - started)
        finally:
            with self._busy:
                self._calls -= 1

    def close(self) -> None:
        """Close the actor's env for good, then end the actor; with a call in flight (a hung step), the
        actor is ended at once and the env with it."""
        import ray

        with self._busy:
            in_call = self._calls > 0
        try:
            if not in_call:
                ray.get(self._actor.close.remote(), timeout=CLOSE_TIMEOUT_SEC)
        except Exception:  # noqa: BLE001 - a dead or stuck actor is ended below all the same
            pass
        finally:
            ray.kill(self._actor, no_restart=True)


class RayPoolExecutor(PoolExecutor):
    """Envs in Ray actors on the cluster at ``address`` (``None``: start or join a local Ray)."""

    name = "ray"

    def __init__(self, address: str | None = None):
        try:
            import ray
        except ImportError as exc:
            raise InfraError("RayPoolExecutor needs Ray: pip install 'agentenvs[ray]'") from exc
        if not ray.is_initialized():
            ray.init(address=address, log_to_driver=False, include_dashboard=False, configure_logging=False)
        self._actor_class = ray.remote(num_cpus=ACTOR_CPUS, max_restarts=0)(RunnerActor)

    def spawn(self, env_id: int, on_reply: Callable[[Worker, Reply], None]) -> Worker:
        actor = self._actor_class.options(scheduling_strategy="SPREAD").remote()
        return ThreadWorker(env_id, on_reply, RemoteRunner(actor))
