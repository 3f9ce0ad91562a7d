"""The web family on the docker backend: sites and Chromium in a ``web`` container, network off.

``WebContainer`` starts the container (the sandbox's labels, limits and sweep; no network),
the agentenvs package bind-mounted read-only, the sites' snapshots read-only, and the control
daemon (``daemon.py``) on a socket in a host directory mounted at ``/run/agentenvs-web``.
``DockerWebEnv`` owns the episode on the host and calls the daemon's hooks. The container
stays warm across episodes: a reset is a new browser context and fresh site databases inside
it, as on the local backend; one whose daemon died is replaced at the next reset.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenvs.core.actions import ParsedAction
from agentenvs.core.checks import Verdict
from agentenvs.core.env import StepOutcome
from agentenvs.core.errors import ActionError, InfraError, SandboxError
from agentenvs.core.registry import tasks_root
from agentenvs.core.task import Task
from agentenvs.envs.web.daemon import decode_outcome, encode_action
from agentenvs.envs.web.env import WebEnv
from agentenvs.envs.web.sites import cache_dir, snapshot
from agentenvs.sandbox import create_sandbox
from agentenvs.sandbox.base import Sandbox, SandboxSpec
from agentenvs.sandbox.daemon_client import DaemonClient

PACKAGE = Path(__file__).resolve().parents[2]
IMAGE = "agentenvs/web:latest"
SOCKET_MOUNT = "/run/agentenvs-web"
CACHE_MOUNT = "/opt/agentenvs-cache"
LABEL = "agentenvs.web"


class WebContainer:
    """One running ``web`` container and its daemon's client."""

    def __init__(
        self, options: dict[str, Any], *, image: str = IMAGE, memory_mb: int = 2048, ready_timeout: float = 90.0
    ):
        self._sockdir = tempfile.mkdtemp(prefix="agentenvs-web-")
        # WebArena-format configs are read where the container's package looks for tasks.
        configs = tasks_root() / "web"
        tasks = ((str(configs), "/opt/agentenvs/tasks/web", True),) if configs.is_dir() else ()
        spec = SandboxSpec(
            image=image,
            workdir="/tmp",
            cpus=2.0,
            memory_mb=memory_mb,
            pids=1024,
            env={"AGENTENVS_CACHE": CACHE_MOUNT, "HOME": "/tmp"},
            mounts=(
                (str(PACKAGE), "/opt/agentenvs/agentenvs", True),
                (str(cache_dir()), f"{CACHE_MOUNT}/web", True),
                (self._sockdir, SOCKET_MOUNT, False),
                *tasks,
            ),
            labels={LABEL: "1"},
        )
        self.sandbox: Sandbox | None = None
        self.client = DaemonClient(os.path.join(self._sockdir, "daemon.sock"), name="web daemon")
        try:
            self.sandbox = create_sandbox("docker", spec)
            self._start_daemon(options, ready_timeout)
        except BaseException:
            self.close()
            raise

    def _start_daemon(self, options: dict[str, Any], timeout: float) -> None:
        assert self.sandbox is not None
        command = f"python3 -m agentenvs.envs.web.daemon --socket {SOCKET_MOUNT}/daemon.sock --options '{json.dumps(options)}'"
        self.client.start_in(self.sandbox, command, timeout)

    def call(self, op: str, deadline: float = 120.0, **params: Any) -> tuple[dict[str, Any], bytes]:
        """One hook in the container; its failures keep their kind (the agent's, infra, or an error)."""
        head, payload = self.client.call(op, deadline=deadline, **params)
        if not head.get("ok"):
            kind, error = head.get("kind"), str(head.get("error", "the web daemon failed"))
            if kind == "action":
                raise ActionError(error.split(": ", 1)[-1])
            if kind == "infra":
                raise InfraError(f"in the web container: {error}")
            raise RuntimeError(f"in the web container: {error}")
        return head, payload

    def healthy(self) -> bool:
        try:
            self.client.call("health", deadline=10)
            return True
        except SandboxError:
            return False

    def close(self) -> None:
        self.client.close()
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
        shutil.rmtree(self._sockdir, ignore_errors=True)


@dataclass(frozen=True)
class ContainerSite:
    """A site inside the container, as the audit's attacks see it (its origin, database and control port)."""

    name: str
    origin: str
    db_path: str
    control_port: int


class DockerWebEnv(WebEnv):
    """``WebEnv`` with the sites and the browser in a container (``backend="docker"``); see ``WebEnv``.

    Forks are the local backend's only (``fork`` says so).
    """

    def __init__(self, task_id: str | None = None, *, image: str = IMAGE, **kwargs: Any):
        super().__init__(task_id, **kwargs)
        self.image = image
        self._container: WebContainer | None = None

    def _options(self) -> dict[str, Any]:
        return {
            "screenshot": self.screenshot,
            "viewport": list(self.viewport),
            "load_timeout": self.load_timeout_ms / 1000,
            "prepare_ahead": self.prepare_ahead,
        }

    def _remote(self, op: str, **params: Any) -> tuple[dict[str, Any], bytes]:
        if self._container is None:
            raise InfraError("the web container is gone")
        return self._container.call(op, **params)

    def site(self, name: str) -> ContainerSite:  # type: ignore[override]
        """The episode's site in the container (no host process: everything runs in there)."""
        sites = self._remote("sites")[0]["sites"]
        if name not in sites:
            raise KeyError(f"this episode has no {name!r} site")
        return ContainerSite(name=name, **sites[name])

    def fork(self) -> dict[str, str]:
        raise NotImplementedError("forks are the local backend's only; use backend='local' for branching rollouts")

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        if self._pending_fork:
            raise NotImplementedError("forks are the local backend's only")
        if self._container is not None and not self._container.healthy():
            self._container.close()
            self._container = None
        if self._container is None:
            self._container = WebContainer(self._options(), image=self.image)
        for name in task.params.get("sites", []):
            snapshot(name)  # made on the host, read-only in the container
        head, payload = self._remote("begin", task_id=task.id, seed=seed)
        self._utterance = head.get("utterance")
        return decode_outcome(head, payload)

    def _act(self, action: ParsedAction) -> StepOutcome:
        head, payload = self._remote("act", action=encode_action(action))
        return decode_outcome(head, payload)

    def _check(self, task: Task) -> dict[str, bool]:
        if not task.config.checkpoints:
            return {}
        return dict(self._remote("check")[0]["checks"])

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        head = self._remote("verify", final_action=encode_action(final_action))[0]
        return Verdict(float(head["score"]), bool(head["success"]), str(head["detail"]), metrics=head.get("metrics"))

    def _state_hash(self) -> str:
        return str(self._remote("state_hash")[0]["hash"])

    def oracle_actions(self, variant: str = "oracle") -> list[Any]:
        if self._task is None:
            raise RuntimeError("call reset() before oracle_actions()")
        return list(self._remote("oracle", variant=variant)[0]["actions"])

    def _end(self) -> None:
        if self._container is not None:
            try:
                self._container.call("end", deadline=30)
            except Exception:  # noqa: BLE001 - a dead daemon's context is gone anyway; the next reset replaces it
                pass

    def _release(self) -> None:
        if self._container is not None:
            container, self._container = self._container, None
            container.close()
