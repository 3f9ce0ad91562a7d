"""The web family on the docker backend: sites and Chromium in a ``web`` container, network off.

``WebContainer`` starts the container (the sandbox's labels, limits and sweep; no network),
the agentenvs package bind-mounted read-only, the sites' snapshots read-only, and the control
daemon (``daemon.py``) on a socket in a host directory mounted at ``/run/agentenvs-web``.
``DockerWebEnv`` owns the episode on the host and calls the daemon's hooks. The container
stays warm across episodes: a reset is a new browser context and fresh site databases inside
it, as on the local backend; one whose daemon died is replaced at the next reset. A closed env
gives its container back to ``IDLE``, for the next env of this process with the same settings
(the docker counterpart of the process's shared browser on the local backend): a run or
``validate`` that makes an env per episode starts a container per lane, not per episode.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
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
#: Under the socket directory: files passed between the host and the container (forks).
SHARED = "shared"
#: Idle containers kept per image and settings, and for how long.
IDLE_MAX = 2
IDLE_S = 300.0


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

    def share(self, host_path: str | Path) -> str:
        """Copy a host file into the socket directory; its path as the container sees it."""
        name = f"{uuid.uuid4().hex}-{Path(host_path).name}"
        Path(self._sockdir, SHARED).mkdir(exist_ok=True)
        shutil.copyfile(host_path, Path(self._sockdir, SHARED, name))
        return f"{SOCKET_MOUNT}/{SHARED}/{name}"

    def unshare(self, container_path: str) -> None:
        Path(self._sockdir, Path(container_path).relative_to(SOCKET_MOUNT)).unlink(missing_ok=True)

    def take(self, container_path: str, dest_dir: Path) -> str:
        """Move a file the container wrote under the socket directory to ``dest_dir`` on the host."""
        relative = Path(container_path).relative_to(SOCKET_MOUNT)
        source = Path(self._sockdir, relative)
        if ".." in relative.parts or not source.is_file():
            raise InfraError(f"the web container did not write {container_path}")
        dest = dest_dir / source.name
        shutil.move(source, dest)
        return str(dest)

    def close(self) -> None:
        self.client.close()
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
        shutil.rmtree(self._sockdir, ignore_errors=True)


class IdleContainers:
    """Containers closed envs gave back, taken by the next env with the same image and settings.

    Only a container whose daemon ended its episode is given back; each reset
    in it makes a fresh context and fresh databases, as in the env that used
    it. Past ``IDLE_MAX`` per key or ``IDLE_S`` idle, and at exit, they are closed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[str, list[tuple[float, WebContainer]]] = {}

    def take(self, key: str) -> WebContainer | None:
        with self._lock:
            stale = self._expire()
            entries = self._idle.get(key)
            found = entries.pop()[1] if entries else None
        for container in stale:
            container.close()
        return found

    def give(self, key: str, container: WebContainer) -> None:
        with self._lock:
            stale = self._expire()
            entries = self._idle.setdefault(key, [])
            if len(entries) < IDLE_MAX:
                entries.append((time.monotonic(), container))
            else:
                stale.append(container)
        for old in stale:
            old.close()

    def close_all(self) -> None:
        with self._lock:
            every = [c for entries in self._idle.values() for _, c in entries]
            self._idle.clear()
        for container in every:
            container.close()

    def _expire(self) -> list[WebContainer]:
        """Remove (under the lock) and return the containers idle past ``IDLE_S``."""
        now, stale = time.monotonic(), []
        for key, entries in self._idle.items():
            stale += [c for since, c in entries if now - since > IDLE_S]
            self._idle[key] = [(since, c) for since, c in entries if now - since <= IDLE_S]
        return stale


IDLE = IdleContainers()
atexit.register(IDLE.close_all)


@dataclass(frozen=True)
class ContainerSite:
    """A site inside the container, as the audit's attacks see it (its origin, database and control port)."""

    name: str
    origin: str
    db_path: str
    control_port: int
    env: DockerWebEnv = field(repr=False, compare=False)

    def query(self, sql: str, params: list[Any] | None = None) -> list[list[Any]]:
        """A read-only query on the site's database, as ``SiteProcess.query`` on the local backend."""
        return self.env._remote("query", site=self.name, sql=sql, params=params or [])[0]["rows"]


class DockerWebEnv(WebEnv):
    """``WebEnv`` with the sites and the browser in a container (``backend="docker"``); see ``WebEnv``.

    A fork is the same value on both backends (site name -> a database file on the host),
    so a branch may start on either: ``fork_sites`` carries the backups out of the container
    through the socket directory, and a reset with ``{"fork": ...}`` carries them in.
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

    def _idle_key(self) -> str:
        return json.dumps([self.image, self._options()], sort_keys=True)

    def _remote(self, op: str, **params: Any) -> tuple[dict[str, Any], bytes]:
        if self._container is None:
            raise InfraError("the web container is gone")
        return self._container.call(op, **params)

    def site(self, name: str) -> ContainerSite:  # type: ignore[override]
        """The episode's site in the container (no host process: everything runs in there)."""
        sites = self._remote("sites")[0]["sites"]
        if name not in sites:
            raise KeyError(f"this episode has no {name!r} site")
        return ContainerSite(name=name, env=self, **sites[name])

    def fork_sites(self) -> dict[str, str]:
        """Back up this episode's site databases to files on the host (see ``WebEnv.fork_sites``)."""
        if self._task is None or self._container is None:
            raise RuntimeError("call reset() before fork_sites()")
        where = f"{SOCKET_MOUNT}/{SHARED}/fork-{uuid.uuid4().hex}"
        forked = self._remote("fork", dest=where)[0]["forked"]
        home = self._forks.home()
        return {name: self._container.take(path, home) for name, path in forked.items()}

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        if self._container is None:
            self._container = IDLE.take(self._idle_key())
        if self._container is not None and not self._container.healthy():
            self._container.close()
            self._container = None
        if self._container is None:
            self._container = WebContainer(self._options(), image=self.image)
        for name in task.params.get("sites", []):
            snapshot(name)  # made on the host, read-only in the container
        shared = self._shared_fork(task)
        try:
            head, payload = self._remote("begin", task_id=task.id, seed=seed, fork=shared)
        finally:
            for path in shared.values():
                self._container.unshare(path)
        self._utterance = head.get("utterance")
        return decode_outcome(head, payload)

    def _shared_fork(self, task: Task) -> dict[str, str]:
        """The pending fork's databases copied where the container reads them."""
        assert self._container is not None
        return {name: self._container.share(path) for name, path in self._forks.for_task(task).items()}

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
        """The container goes back to ``IDLE`` if its daemon ends the episode; closed otherwise."""
        if self._container is not None:
            container, self._container = self._container, None
            try:
                container.call("end", deadline=30)
            except Exception:  # noqa: BLE001 - a daemon that cannot end its episode is not reused
                container.close()
            else:
                IDLE.give(self._idle_key(), container)
        self._forks.close()
