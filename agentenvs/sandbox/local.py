"""The ``local`` backend: a root of its own on the host, isolated with bubblewrap and cgroups.

The sandbox's files (the workdir, /tmp, /logs, /tests, /solution, /root, /dev/shm:
:mod:`agentenvs.sandbox.local_root`) live on a filesystem of ``storage_mb`` mounted
at ``<SANDBOX_PARENT>/<pid>-<id>/root`` (see :mod:`agentenvs.sandbox.local_storage`)
and are bound read-write at their in-sandbox paths. The system under them
is the host's /usr, /bin, /sbin, /lib and /lib64 bound read-only with a
minimal /etc of our own (:mod:`agentenvs.sandbox.local_system`), or, for a
task built by docker, the image's: an overlay of its layers whose writes go
to the sandbox's filesystem (:mod:`agentenvs.sandbox.layers`,
:mod:`agentenvs.sandbox.local_bwrap`). /proc/sys is read-only. One
long-lived bubblewrap per sandbox holds its own user, pid, network, IPC and
UTS namespaces (see :mod:`agentenvs.sandbox.holder`); every ``exec()`` and
``shell()`` joins them, so a service started in the shell is seen by later
commands. Every process is root in the sandbox but the unprivileged host user
``agentenvs-sandbox`` outside it, without capabilities, and in the sandbox's
own cgroups (pids, memory, cpu), so a fork bomb is bounded and killable.
A spec with ``users`` (over an image) gets a container's several users instead:
the image's accounts in a user namespace that maps a range of unprivileged
host ids (:mod:`agentenvs.sandbox.local_userns`), root with a container
engine's capabilities inside it, and set-user-ID programs such as ``sudo``.
``get`` and ``put`` resolve paths in the kernel, beneath the root
(:mod:`agentenvs.sandbox.local_files`). A sandbox left by a crashed process
is removed by :func:`~agentenvs.sandbox.local_resources.sweep_local_sandboxes`.
The local backend needs root on the host (to make the user, the filesystem
and the cgroups).
"""

from __future__ import annotations

import os
import posixpath
import shutil
import threading
import uuid
import weakref
from pathlib import Path

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.base import Capabilities, ExecResult, SandboxSpec, Shell
from agentenvs.sandbox.checks import EVALUATORS_MOUNT, EVALUATORS_SOURCE
from agentenvs.sandbox.docker_state import refused_summary
from agentenvs.sandbox.execio import run_capped
from agentenvs.sandbox.holder import HOST_ENV, NamespaceHolder, become
from agentenvs.sandbox.layers import ImageRoot, mount_system, seal_system
from agentenvs.sandbox.local_bwrap import SEARCH_PATH, bwrap_argv, host_system, image_system
from agentenvs.sandbox.local_files import SandboxFiles
from agentenvs.sandbox.local_resources import SANDBOX_PARENT, LocalResources, sweep_local_sandboxes
from agentenvs.sandbox.local_root import SANDBOX_DIRS, RootSnapshots, check_workdir, fill_root, make_root, root_binds
from agentenvs.sandbox.local_storage import empty_tree
from agentenvs.sandbox.local_system import SANDBOX_USER, sandbox_etc, sandbox_ids, staged_evaluators
from agentenvs.sandbox.local_transport import LocalTransport, SandboxTransport
from agentenvs.sandbox.local_userns import image_accounts
from agentenvs.sandbox.procs import wait_idle
from agentenvs.sandbox.shell import PersistentShell, SpareShells
from agentenvs.sandbox.state_checker import StateChecker

MAX_EXEC_OUTPUT = 8 * 1024 * 1024
BASE_ENV = {
    "PATH": SEARCH_PATH,
    "HOME": "/root",
    "USER": "root",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "TMPDIR": "/tmp",
}

_swept = threading.Event()


class LocalSandbox:
    """A bubblewrap sandbox on this host. ``template`` is a root directory to start from (a copy is made);
    ``image`` a built image to run over instead of the host's system (see :mod:`agentenvs.sandbox.layers`)."""

    backend = "local"
    #: On the host's read-only system the agent never could change what the verifier runs on; over an
    #: image, ``seal`` names the toolchain changes it undid.
    sealed_note = ""

    def __init__(
        self,
        spec: SandboxSpec | None = None,
        *,
        template: Path | None = None,
        env: dict[str, str] | None = None,
        image: ImageRoot | None = None,
    ):
        self.spec = spec or SandboxSpec()
        if os.geteuid() != 0:
            raise SandboxError(
                "the local sandbox needs root on the host (it runs agents as an unprivileged user "
                "on a filesystem of their own, in cgroups); run as root or use the docker backend"
            )
        self._bwrap = shutil.which("bwrap")
        if self._bwrap is None:
            raise SandboxError("the local sandbox needs bubblewrap: apt-get install bubblewrap")
        workdir = check_workdir(self.spec.workdir)
        if self.spec.users and image is None:
            raise SandboxError("a local sandbox with several users runs over an image: pass image=")
        self.workdir = workdir
        #: The image's accounts (name -> uid, gid), read before anything runs in it (``users`` only).
        self._accounts: dict[str, tuple[int, int]] = {}
        self.writable = tuple(dict.fromkeys((workdir, *SANDBOX_DIRS)))
        self._image = image
        self.env = {**BASE_ENV, **(image.env if image else {}), **self.spec.env, **(env or {})}
        if not _swept.is_set():
            _swept.set()
            sweep_local_sandboxes()
        self._owner = sandbox_ids()
        self._etc = sandbox_etc()
        self._evaluators = staged_evaluators(EVALUATORS_SOURCE)
        self.id = uuid.uuid4().hex[:12]
        self.home = SANDBOX_PARENT / f"{os.getpid()}-{self.id}"
        #: The sandbox's files on the host (their own filesystem). Read it directly only while none of its
        #: processes run (templates copy it so); otherwise use get and put.
        self.root = self.home / "root"
        #: The image's system (an overlay whose writes go to ``root/.system``), when there is an image.
        self._system = self.home / "system"
        self._res = LocalResources(self.home)
        self._finalizer = weakref.finalize(self, self._res.release)
        self._snapshots = RootSnapshots(self.home / "snapshots")
        self._spares = SpareShells(self._new_shell)
        self._closed = False
        self._holder_lock = threading.Lock()
        try:
            self._setup(template)
        except BaseException:
            self._finalizer()
            raise

    def _setup(self, template: Path | None) -> None:
        make_root(self.home, self.root, self.spec.storage_mb)
        self._res.mounted = self.root
        self._mount_system()
        self._fill_root(template)
        if self.spec.users:
            self._accounts = image_accounts(self._system / "etc" / "passwd")
        self._limit_note = self._res.create_cgroups(f"{os.getpid()}-{self.id}", self.spec)
        self._res.record_owner()
        self._holder()

    def _fill_root(self, source: Path | None) -> None:
        """Fill the empty root from ``source`` (a template or snapshot) or the image, open it for get/put."""
        image_system = self._system if self._image is not None else None
        fill_root(self.root, source, image_system=image_system, writable=self.writable, owner=self._owner)
        self._res.files = SandboxFiles(self.root, writable=self.writable, workdir=self.workdir, owner=self._owner)

    def _mount_system(self) -> None:
        if self._image is not None:
            mount_system(self._image, self._system, self.root / ".system", setuid=self.spec.users)
            self._res.system = self._system

    # -- the namespaces, and the command line every process in the sandbox starts with --

    def _holder(self) -> NamespaceHolder:
        """The running namespace holder; a new one if the last died (its processes died with it)."""
        with self._holder_lock:
            self._check_open()
            holder = self._res.holder
            if holder is None or not holder.alive():
                holder = self._res.start_holder(self.spec, self._bwrap_argv, self._owner, self._system)
            return holder

    def _argv(
        self, command: list[str], *, cwd: str, env: dict[str, str], user: tuple[int, int] | None = None
    ) -> list[str]:
        return self._holder().enter(command, cwd=cwd, env=env, user=user)

    def _bwrap_argv(self, userns_fd: int | None) -> list[str]:
        system = host_system(self._etc) if self._image is None else image_system(self._system, self._etc, self.writable)
        return bwrap_argv(
            self._bwrap,
            network=self.spec.network,
            system=system,
            binds=root_binds(self.root, self.writable),
            evaluators=self._evaluators,
            mounts=self.spec.mounts,
            userns_fd=userns_fd,
        )

    @property
    def capabilities(self) -> Capabilities:
        limits = self._res.cgroups is not None
        return Capabilities(
            backend="local",
            isolated_network=not self.spec.network,
            isolated_filesystem=True,
            resource_limits=limits,
            snapshot=True,
            details={
                "isolation": "bubblewrap namespaces shared by every command (nsenter)",
                "limits": "cgroup v1 pids/memory/cpu" if limits else self._limit_note,
                "storage": f"ext4 of {self.spec.storage_mb} MiB on a loop device",
                "system": f"image {self._image.image} (overlay)" if self._image else "the host's, read-only",
                "user": (
                    f"the image's users in a user namespace (root = host user {SANDBOX_USER}, the others "
                    "unprivileged host ids), root with a container's capabilities"
                    if self.spec.users
                    else f"root in a user namespace = host user {SANDBOX_USER} (uid {self._owner[0]}), no capabilities"
                ),
                "evaluators": EVALUATORS_MOUNT,
                "root": str(self.root),
            },
        )

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError("the local sandbox is closed; create a new one")

    def exec(
        self,
        cmd: str | list[str],
        timeout: float = 60.0,
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
    ) -> ExecResult:
        """Run one command in the sandbox's namespaces; the timeout kills it and every process it started."""
        self._check_open()
        ids = self._user_ids(user)
        argv = ["bash", "--noprofile", "--norc", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        where = posixpath.normpath(posixpath.join(self.workdir, cwd)) if cwd else self.workdir
        full = self._argv(argv, cwd=where, env={**self.env, **(env or {})}, user=ids)
        return run_capped(
            full,
            timeout,
            MAX_EXEC_OUTPUT,
            env=HOST_ENV,
            kill=self._res.kill_session,
            on_start=self._res.procs.add,
            on_end=self._res.procs.discard,
        )

    def _user_ids(self, user: str | None) -> tuple[int, int] | None:
        """The uid and gid ``exec`` runs as: None for root; another user only in a sandbox with ``users``."""
        if user in (None, "", "root", "0"):
            return None
        if not self.spec.users:
            raise SandboxError(
                f"this local sandbox runs commands as root only (asked for user {user!r}): "
                "make it with SandboxSpec(users=True) over an image, or use the docker backend"
            )
        ids = self._accounts.get(user)
        if ids is None:
            raise SandboxError(f"no user {user!r} in {self._image.image if self._image else 'the image'}'s /etc/passwd")
        return ids

    def shell(self) -> Shell:
        """A persistent bash in the sandbox (about 0.3 ms a builtin). ``restore`` restarts it in place."""
        self._check_open()
        return self._spares.next()

    def warm(self, shells: int) -> None:
        self._spares.open(shells)
        self.state_checker().start()

    def _new_shell(self) -> PersistentShell:
        argv = ["bash", "--noprofile", "--norc"]

        def connect() -> LocalTransport:
            self._check_open()
            return SandboxTransport(self._argv(argv, cwd="/", env=self.env), self._res, self.spec.pids)

        shell = PersistentShell(connect, cwd=self.workdir)
        self._res.shells[:] = [s for s in self._res.shells if not s.closed]
        self._res.shells.append(shell)
        return shell

    def put(self, src: str | Path | bytes, dest: str) -> None:
        """Copy bytes, a host file or a host directory to ``dest`` (its full in-sandbox path).

        Safe while the agent runs: see :mod:`agentenvs.sandbox.local_files`.
        """
        files = self._files()
        if isinstance(src, bytes):
            files.write(dest, src)
            return
        source = Path(src)
        if source.is_dir():
            files.put_tree(source, dest)
        elif source.is_file():
            files.write(dest, source.read_bytes(), mode=source.stat().st_mode)
        else:
            raise FileNotFoundError(f"put: no such host file or directory: {source}")

    def get(self, path: str) -> bytes:
        """The content of a regular file in the sandbox; FileNotFoundError if there is none."""
        return self._files().read(path)

    def _files(self) -> SandboxFiles:
        self._check_open()
        files = self._res.files
        if files is None:
            raise SandboxError("the sandbox's files are not mounted (a restore failed); create a new sandbox")
        return files

    def snapshot(self) -> str:
        """Copy the files aside, with the sandbox's processes frozen so none can swap a path under the copy."""
        self._check_open()
        return self._snapshots.take(self.root, self._res)

    def restore(self, ref: str) -> None:
        """Kill every process, put the snapshot's files back, start new namespaces; open shells restart at the workdir."""
        self._check_open()
        source = self._snapshots.source(ref)
        with self._holder_lock:
            self._res.kill_processes()
            self._res.files.close()
            self._res.unmount_system()
            empty_tree(self.root)  # nothing runs any more: no path can change under the removal
            self._fill_root(source)
            self._mount_system()
        self._holder()
        for shell in self._res.shells:
            shell.reset(cwd=self.workdir)

    def kill_all(self) -> None:
        """Kill every process of the sandbox (daemons and orphans too) and close its shells.

        The namespaces go with them (the kernel kills a pid namespace whole), so
        nothing survives; files stay, and the next ``exec`` or ``shell`` starts
        in new namespaces.
        """
        self._check_open()
        with self._holder_lock:
            self._res.kill_processes()
        for shell in self._res.shells:
            shell.close()
        self._res.shells.clear()

    def state_checker(self) -> StateChecker:
        """The checker that reads this sandbox's files from outside its namespaces (see :mod:`.state_checker`)."""
        self._check_open()
        # Files of several host ids are read as the docker backend's are, by a reader's capability.
        identity = [] if self.spec.users else [*become(self._owner), "--"]
        return self._res.checker.get(
            self.root.stat().st_ino,
            lambda: StateChecker(self.root, identity=identity, etc=self._etc, evaluators=self._evaluators),
        )

    def seal(self) -> LocalSandbox:
        """End the agent's phase: every agent process killed. The verifier runs here, in new namespaces,
        on the host's read-only programs, or over the image with the agent's changes to its toolchain
        undone (the docker backend's rule; ``sealed_note`` lists them)."""
        self.kill_all()
        if self._image is not None:
            undone = seal_system(self._image, self._system, self.root / ".system", setuid=self.spec.users)
            self.sealed_note = refused_summary(undone)
        return self

    def wait_idle(self, timeout: float, window: float = 0.25) -> bool:
        self._check_open()
        return wait_idle(self._res.pids, timeout, window)

    def network_peers(self) -> tuple[str, ...]:
        return ()

    def network_namespace(self) -> Path:
        return Path(f"/proc/{self._holder().init_pid}/ns/net")

    def alive(self) -> bool:
        """Open, and its namespaces not ended from outside (nothing inside can end them: see the holder)."""
        holder = self._res.holder
        return not self._closed and (holder is None or holder.alive())

    def close(self) -> None:
        """Kill every process, remove the cgroups and the temporary root. Safe to call twice."""
        self._closed = True
        self._finalizer()

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LocalSandbox(id={self.id!r}, root={str(self.root)!r}{', closed' if self._closed else ''})"
