"""An async env pool: keep every env busy while a trainer's model generates (``EnvPool``).

with agentenvs.EnvPool(["textgame/coin-easy-0", "textgame/keys-easy-1"], size=8, seed=0) as pool:
    for first in pool.reset_all():
        pool.submit(first.env_id, choose(first.obs))
    while True:
        for result in pool.poll():
            ...  # learn from result; then, if result.needs_action:
            pool.submit(result.env_id, choose(result.obs))
"""

from agentenvs.pool.pool import EnvPool
from agentenvs.pool.results import (
    EnvBusyError,
    EnvStats,
    PoolClosedError,
    PoolError,
    PoolResult,
    PoolStats,
    UnknownEnvError,
)
from agentenvs.pool.workers import Call, EnvRunner, PoolExecutor, Reply, ThreadExecutor, Worker

__all__ = [
    "Call",
    "EnvBusyError",
    "EnvPool",
    "EnvRunner",
    "EnvStats",
    "PoolClosedError",
    "PoolError",
    "PoolExecutor",
    "PoolResult",
    "PoolStats",
    "Reply",
    "ThreadExecutor",
    "UnknownEnvError",
    "Worker",
]
