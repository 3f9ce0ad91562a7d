"""The ``docker`` backend: one container per sandbox, network off, limits on.

Commands go through ``docker exec``; the persistent shell is one long-lived
exec whose stdin/stdout socket we drive ourselves, so a step costs about a
millisecond instead of a new exec (50 ms) or a tmux round trip (200 ms).
Every container and snapshot image carries the ``agentenvs`` label and its
owner's pid, so :func:`sweep_docker` can remove what a killed process left.
"""

from __future__ import annotations

import posixpath
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.base import Capabilities, ExecResult, SandboxSpec, Shell
from agentenvs.sandbox.docker_container import create_container, spare_keeper
from agentenvs.sandbox.docker_disk import disk_guard
from agentenvs.sandbox.docker_engine import (
    SNAPSHOT_LABEL,
    SNAPSHOT_REPO,
    docker_client,
    ignore_missing,
    owner_labels,
)
from agentenvs.sandbox.docker_exec import DockerExecTransport, as_sandbox_error, run_exec_bounded
from agentenvs.sandbox.docker_files import put_into, read_from, unpack_at_root
from agentenvs.sandbox.docker_procs import ContainerProcesses
from agentenvs.sandbox.procs import wait_idle
from agentenvs.sandbox.shell import PersistentShell, SpareShells
from agentenvs.sandbox.state_checker import CheckerSlot, StateChecker

if TYPE_CHECKING:
    from agentenvs.sandbox.docker_services import ServiceGroup


@dataclass
class _Resources:
    """What a sandbox holds in the engine; released by close() or at garbage collection."""

    api: Any
    container: str = ""
    images: list[str] = field(default_factory=list)
    #: The host-side checker binds the container's merged directory: it must go before the container.
    checker: CheckerSlot = field(default_factory=CheckerSlot)
    #: The container whose disk use the guard watches.
    watched: str = ""
    #: A compose task's side services, owned by the agent's sandbox: removed after its container.
    group: ServiceGroup | None = None

    def release(self) -> None:
        self.checker.release()
        if self.watched:
            disk_guard().forget(self.watched)
            self.watched = ""
        if self.container:
            ignore_missing(self.api.remove_container, self.container, force=True)
            self.container = ""
        for image in self.images:
            ignore_missing(self.api.remove_image, image, force=True)
        self.images.clear()
        if self.group is not None:
            self.group.release()
            self.group = None


class DockerSandbox:
    """A container from ``spec.image``: network off, init process, memory/CPU/pids limits.

    With ``group`` (a compose task's side services) it joins their private network as ``main``.
    """

    backend = "docker"

    def __init__(self, spec: SandboxSpec | None = None, *, client: Any = None, group: ServiceGroup | None = None):
        self.spec = spec or SandboxSpec()
        self._group = group
        self._client = client or docker_client()
        self._api = self._client.api
        self._res = _Resources(self._api)
        self._finalizer = weakref.finalize(self, self._res.release)
        self._shells: list[PersistentShell] = []
        self._spares = SpareShells(self._new_shell)
        self._transports: list[DockerExecTransport] = []
        self._removers: list[threading.Thread] = []
        self._name = f"agentenvs-{uuid.uuid4().hex[:12]}"
        self._procs: ContainerProcesses | None = None
        self._procs_of = ""
        #: What the agent changed that the verifier does not see (set on a sandbox made by ``seal``).
        self.sealed_note = ""
        self._res.container = create_container(self._api, self.spec, self.spec.image, self._group)
        self._guard_disk()

    def own_group(self) -> None:
        """Take the side services' lifetime: they are removed when this sandbox closes."""
        self._res.group = self._group

    def _guard_disk(self) -> None:
        """Hold the container to ``spec.storage_mb`` (see :mod:`.docker_disk`)."""
        container = self._res.container
        upper = self._api.inspect_container(container).get("GraphDriver", {}).get("Data", {}).get("UpperDir")
        if not upper:
            return
        limit = self.spec.storage_mb

        def exceeded(used: int) -> None:
            procs = self._processes() if self._res.container == container else None
            if procs is not None:
                procs.kill_all_but_init()
                procs.add_note(
                    f"[the sandbox wrote {used >> 20} MB, over its {limit} MB disk limit: every process "
                    "was killed; delete files before writing more]\n"
                )

        disk_guard().watch(container, Path(upper), limit, exceeded)
        self._res.watched = container

    @property
    def container_id(self) -> str:
        return self._res.container

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            backend="docker",
            isolated_network=not self.spec.network,
            isolated_filesystem=True,
            resource_limits=True,
            snapshot=True,
            details={"image": self.spec.image, "container": self._res.container[:12]},
        )

    def _live(self) -> str:
        if not self._res.container:
            raise SandboxError("the docker sandbox is closed")
        return self._res.container

    def _processes(self) -> ContainerProcesses | None:
        """The live container's processes seen from the host (None when its cgroup is not readable here)."""
        container = self._live()
        if self._procs_of != container:
            self._procs, self._procs_of = ContainerProcesses.open(self._api, container), container
        return self._procs

    def exec(
        self,
        cmd: str | list[str],
        timeout: float = 60.0,
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
    ) -> ExecResult:
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        return run_exec_bounded(
            self._api,
            self._processes(),
            self._live(),
            argv,
            timeout,
            workdir=cwd or self.spec.workdir,
            env=env,
            user=user,
        )

    def shell(self) -> Shell:
        """A persistent bash in the container (about 1 ms a command); ``close`` ends it."""
        return self._spares.next()

    def warm(self, shells: int) -> None:
        self._spares.open(shells)
        self.state_checker().start()

    def _new_shell(self) -> PersistentShell:
        def connect() -> DockerExecTransport:
            procs = self._processes()
            if procs is not None:
                procs.end_storm()
            try:
                transport = DockerExecTransport(self._api, self._live(), env=self.spec.env, processes=procs)
            except SandboxError:
                if procs is None or not procs.end_storm():
                    raise
                transport = DockerExecTransport(self._api, self._live(), env=self.spec.env, processes=procs)
            self._transports.append(transport)
            return transport

        shell = PersistentShell(connect, cwd=self.spec.workdir)
        self._shells.append(shell)
        return shell

    def put(self, src: str | Path | bytes, dest: str) -> None:
        """Copy bytes, a host file or a host directory to ``dest`` (parents are created)."""
        put_into(self._api, self._live(), src, posixpath.normpath(posixpath.join(self.spec.workdir, dest)))

    def get(self, path: str) -> bytes:
        """The content of a file in the sandbox; FileNotFoundError if there is none."""
        return read_from(self._api, self._live(), posixpath.normpath(posixpath.join(self.spec.workdir, path)))

    def snapshot(self) -> str:
        """Commit the container's filesystem to a labelled image; the id is the reference."""
        labels = {**owner_labels(), SNAPSHOT_LABEL: "1"}
        try:
            image = self._api.commit(
                self._live(),
                repository=SNAPSHOT_REPO,
                tag=f"{self._name}-{len(self._res.images)}",
                conf={"Labels": labels},
            )["Id"]
        except Exception as exc:
            raise as_sandbox_error(exc, "commit") from None
        self._res.images.append(image)
        return image

    def restore(self, ref: str) -> None:
        """Replace the container with a fresh one from a snapshot; open shells restart at the workdir."""
        if ref not in self._res.images:
            raise SandboxError(
                f"unknown snapshot {ref!r}: restore takes a reference this sandbox's snapshot() returned"
            )
        old = self._live()
        self._res.checker.close()
        self._res.container = create_container(self._api, self.spec, ref, self._group)
        disk_guard().forget(old)
        self._guard_disk()
        self._forget_transports()
        remover = threading.Thread(
            target=ignore_missing,
            args=(self._api.remove_container, old),
            kwargs={"force": True},
            name="agentenvs-docker-remove",
            daemon=True,
        )
        remover.start()
        self._removers = [t for t in self._removers if t.is_alive()] + [remover]
        for shell in self._shells:
            shell.reset(cwd=self.spec.workdir)

    def kill_all(self) -> None:
        """Kill every process but the container's keeper (PID 1); close the shells. Files stay."""
        container = self._live()
        procs = self._processes()
        self._forget_transports()
        for shell in self._shells:
            shell.close()
        self._shells.clear()
        if procs is not None:
            procs.kill_all_but_init()
            return
        try:  # no cgroup view from this host: a restart kills everything just as surely
            self._api.restart(container, timeout=0)
        except Exception as exc:
            raise as_sandbox_error(exc, "restart") from None

    def seal(self) -> DockerSandbox:
        """End the agent's phase; return a new sandbox for the verifier (the caller closes it).

        Every agent process is killed and this container stopped, so nothing
        can change its files any more; the new container starts from the
        pristine image, so the verifier's programs and libraries are the
        image's, and the agent's changes are copied into it as data, less
        those that would alter the verifier's tools (``sealed_note`` lists them).
        """
        container = self._live()
        self.kill_all()
        self._res.checker.close()
        try:
            self._api.kill(container)
        except Exception as exc:
            raise as_sandbox_error(exc, "stop") from None
        from agentenvs.sandbox.docker_state import read_changes

        changes = read_changes(self._api, container)
        # The agent's files may fill its quota; the verifier gets room for them and its own. It takes the
        # agent's place among a compose task's services, which keep running (see docker_services).
        spec = replace(self.spec, storage_mb=2 * self.spec.storage_mb)
        verifier = DockerSandbox(spec, client=self._client, group=self._group)
        try:
            verifier.apply_changes(changes.deletions, changes.emptied, changes.archive)
        except BaseException:
            verifier.close()
            raise
        finally:
            changes.archive.close()
        verifier.sealed_note = changes.summary()
        return verifier

    def resume(self) -> None:
        """Start this container again after ``seal`` (a multi-step task's next step): the files are as
        the agent left them, no process of its survives, and new shells start at the workdir."""
        container = self._live()
        try:
            self._api.start(container)
        except Exception as exc:
            raise as_sandbox_error(exc, "restart after the seal") from None
        spare_keeper(self._api, container)
        self._procs_of = ""

    def apply_changes(self, deletions: list[str], emptied: list[str], archive: BinaryIO) -> None:
        """Delete, empty, then unpack ``archive`` at ``/``: how the agent's state enters a fresh container."""
        script = 'for p in "$@"; do rm -rf -- "$p"; done'
        steps = [["sh", "-c", script, "sh", *deletions]] if deletions else []
        steps += [["find", path, "-mindepth", "1", "-delete"] for path in emptied]
        for argv in steps:
            done = self.exec(argv, timeout=120, cwd="/")
            if done.exit_code != 0:
                raise SandboxError(f"preparing the verifier's container failed: {done.output[-400:]}")
        unpack_at_root(self._api, self._live(), archive)

    def state_checker(self) -> StateChecker:
        """The checker that reads this container's files from the host (see :mod:`.state_checker`)."""
        container = self._live()

        def make() -> StateChecker:
            try:
                merged = self._api.inspect_container(container)["GraphDriver"]["Data"]["MergedDir"]
            except (KeyError, TypeError):
                raise SandboxError(
                    "checks outside the container need the overlay2 storage driver (its merged directory)"
                ) from None
            return StateChecker(Path(merged))

        return self._res.checker.get(container, make)

    def wait_idle(self, timeout: float, window: float = 0.25) -> bool:
        procs = self._processes()
        if procs is None:  # no cgroup view from this host: a short fixed wait is all there is
            time.sleep(min(timeout, 2.0))
            return False
        return wait_idle(procs.cgroups.pids, timeout, window)

    def network_peers(self) -> tuple[str, ...]:
        return tuple(service.name for service in self._group.plan.services) if self._group is not None else ()

    def network_namespace(self) -> Path:
        return Path(f"/proc/{int(self._api.inspect_container(self._live())['State']['Pid'])}/ns/net")

    def alive(self) -> bool:
        import docker.errors

        if not self._res.container:
            return False
        try:
            return bool(self._api.inspect_container(self._res.container)["State"]["Running"])
        except docker.errors.NotFound:
            return False

    def _forget_transports(self) -> None:
        """The container is gone: closing its shells needs no kill exec, just the sockets."""
        for transport in self._transports:
            transport.container_gone = True
        self._transports.clear()

    def close(self) -> None:
        """Remove the container and the snapshot images it made. Safe to call twice."""
        self._finalizer()
        for remover in self._removers:
            remover.join(60)
        self._forget_transports()
        for shell in self._shells:
            shell.close()
        self._shells.clear()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DockerSandbox(image={self.spec.image!r}, container={self._res.container[:12] or 'closed'})"
