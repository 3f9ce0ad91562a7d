"""What a local sandbox owns on the host, and how it is released.

A sandbox's processes, shells, cgroups, filesystem and directory (under
``SANDBOX_PARENT``) are held by :class:`LocalResources`, which also makes
the cgroups and starts the namespace holder, and released by the sandbox's
``close``, its finalizer or atexit. Its directory records the owning
process: what a crashed process left behind is removed by
:func:`sweep_local_sandboxes`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.cgroups import Cgroups, CgroupsUnavailable
from agentenvs.sandbox.holder import NamespaceHolder
from agentenvs.sandbox.local_files import SandboxFiles
from agentenvs.sandbox.local_storage import unmount
from agentenvs.sandbox.local_userns import allow_setuid, user_namespace
from agentenvs.sandbox.procs import kill_tree, proc_descendants, proc_start_time, session_members, wait_gone
from agentenvs.sandbox.shell import PersistentShell
from agentenvs.sandbox.state_checker import CheckerSlot

SANDBOX_PARENT = Path(os.environ.get("AGENTENVS_SANDBOX_DIR", "/tmp/agentenvs-sandboxes"))


class LocalResources:
    """Everything a sandbox owns, released by ``close``, the finalizer or atexit."""

    def __init__(self, home: Path):
        self.home = home
        self.cgroups: Cgroups | None = None
        self.holder: NamespaceHolder | None = None
        self.shells: list[PersistentShell] = []
        self.procs: set[subprocess.Popen[bytes]] = set()
        self.mounted: Path | None = None
        #: An image's overlay, whose writes live on the ``mounted`` filesystem (unmounted first).
        self.system: Path | None = None
        self.files: SandboxFiles | None = None
        #: The host-side state checker, keyed by the inode of the root it has mounted.
        self.checker = CheckerSlot()

    def create_cgroups(self, name: str, spec: SandboxSpec) -> str:
        """Put the sandbox in cgroups of its own; without them, warn and return why (rlimits only)."""
        try:
            self.cgroups = Cgroups.create(name, pids=spec.pids, memory_mb=spec.memory_mb, cpus=spec.cpus)
        except CgroupsUnavailable as exc:
            warnings.warn(
                f"local sandbox without cgroups: {exc}. Falling back to RLIMIT_NPROC (counted per host "
                "user, so shared by every sandbox) and RLIMIT_AS, and snapshots cannot freeze the sandbox; "
                "use the docker backend for hard limits.",
                RuntimeWarning,
                stacklevel=4,  # the code that made the sandbox
            )
            return f"rlimits only ({exc})"
        return ""

    def record_owner(self) -> None:
        """Write down this process and the cgroups, which :func:`sweep_local_sandboxes` reads once it is gone."""
        meta = {
            "pid": os.getpid(),
            "start_time": proc_start_time(os.getpid()),
            "cgroups": {k: str(v) for k, v in self.cgroups.paths.items()} if self.cgroups else {},
        }
        (self.home / "meta.json").write_text(json.dumps(meta))

    def start_holder(
        self, spec: SandboxSpec, bwrap: Callable[[int | None], list[str]], owner: tuple[int, int], system: Path
    ) -> NamespaceHolder:
        """Start a namespace holder in place of the last one, which is killed (its processes die with it).

        ``bwrap(userns_fd)`` is its command line; with ``spec.users`` it joins a user namespace of the
        image's users, and the set-user-ID programs of the image's ``system`` are allowed.
        """
        if self.holder is not None:
            self.holder.kill()
        userns = user_namespace(owner) if spec.users else None
        try:
            holder = self.holder = NamespaceHolder(
                self.limits_prefix(spec),
                bwrap(userns),
                own_prefix=self.limits_prefix(spec, holder=True),
                owner=owner,
                log=self.home / "holder.log",
                network=spec.network,
                userns_fd=userns,
            )
        finally:
            if userns is not None:
                os.close(userns)
        if spec.users:
            allow_setuid(holder.init_pid, system)
        return holder

    def limits_prefix(self, spec: SandboxSpec, *, holder: bool = False) -> list[str]:
        """An argv prefix that puts a process in the sandbox's cgroups (or under rlimits without them).

        The holder stays out of the memory cgroup: an OOM there must never end the namespaces.
        """
        if self.cgroups is not None:
            return self.cgroups.join_prefix(skip=("memory",) if holder else ())
        kb = spec.memory_mb * 1024
        return ["/bin/sh", "-c", f'ulimit -u {spec.pids}; ulimit -v {kb}; exec "$@"', "sh"]

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The sandbox's processes frozen, so none can change a file under a copy."""
        if self.cgroups is None:  # rlimits only: nothing can freeze the processes (see capabilities)
            yield
            return
        with self.cgroups.frozen() as frozen:
            if not frozen:
                raise SandboxError("could not freeze the sandbox's processes to copy its files")
            yield

    def kill_processes(self) -> None:
        """Kill every process, the namespace holder first.

        The holder goes first: the kernel then kills the whole pid namespace at
        once. Killing the shells first leaves their zombies for us to reap, and
        the namespace's init waits for those (measured: about a second).
        """
        if self.holder is not None:
            self.holder.kill()
            self.holder = None
        for shell in list(self.shells):
            shell.reset()
        for proc in list(self.procs):
            kill_tree(proc.pid)
        if self.cgroups is not None:
            self.cgroups.kill_all()

    def pids(self) -> list[int]:
        """Host pids of the sandbox's processes: its cgroup's, else those of the namespace holder's
        and the commands' trees."""
        if self.cgroups is not None:
            return self.cgroups.pids()
        roots = [proc.pid for proc in self.procs] + ([self.holder.pid] if self.holder is not None else [])
        return [pid for root in roots for pid in (root, *proc_descendants(root))]

    def session_members(self, sid: int) -> list[int]:
        """Live processes of session ``sid``, looked up in the sandbox's cgroup when there is one."""
        return session_members(sid, self.cgroups.pids() if self.cgroups is not None else None)

    def kill_session(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL a command started in its own session: its tree and every orphan it left in the sandbox."""
        with self.cgroups.frozen() if self.cgroups is not None else nullcontext():
            victims = [*kill_tree(proc.pid), *self.session_members(proc.pid)]
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        wait_gone(victims[1:], 5.0)

    def unmount_system(self) -> None:
        if self.system is not None:
            unmount(self.system)
            self.system = None

    def drop_root(self) -> None:
        """Close our descriptor of the sandbox's filesystem and detach it (its loop device goes with it)."""
        if self.files is not None:
            self.files.close()
            self.files = None
        self.unmount_system()
        if self.mounted is not None:
            unmount(self.mounted)
            self.mounted = None

    def release(self) -> None:
        self.checker.release()
        self.kill_processes()
        for shell in self.shells:
            shell.close()
        self.shells.clear()
        self.drop_root()
        if self.cgroups is not None:
            self.cgroups.remove()
        shutil.rmtree(self.home, ignore_errors=True)


def sweep_local_sandboxes(parent: Path | None = None) -> int:
    """Remove sandboxes whose owning process is gone (kill their processes and cgroups). Returns how many."""
    parent = parent or SANDBOX_PARENT
    removed = 0
    try:
        homes = list(parent.iterdir())
    except FileNotFoundError:
        return 0
    for home in homes:
        try:
            meta = json.loads((home / "meta.json").read_text())
            pid = int(meta["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            if home.is_dir() and time.time() - home.stat().st_mtime < 60:
                continue  # still being created
            meta, pid = {}, -1
        if pid > 0 and proc_start_time(pid) is not None and proc_start_time(pid) == meta.get("start_time"):
            continue
        cgroups = Cgroups({k: Path(v) for k, v in meta.get("cgroups", {}).items()})
        if cgroups.paths:
            cgroups.kill_all()
        unmount(home / "system")
        unmount(home / "root")
        if cgroups.paths:
            cgroups.remove()
        shutil.rmtree(home, ignore_errors=True)
        removed += 1
    return removed
