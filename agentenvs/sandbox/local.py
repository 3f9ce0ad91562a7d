"""The ``local`` backend: a temporary root on the host, isolated with bubblewrap and cgroups.

Only system directories (/usr, /bin, /sbin, /lib, /lib64, /etc) are visible,
read-only; the sandbox's own directories (the workdir, /tmp, /logs, /tests,
/solution, /root) live under ``<SANDBOX_PARENT>/<pid>-<id>/root`` and are
bound read-write at their in-sandbox paths. One long-lived bubblewrap per
sandbox holds its own pid, network, IPC and UTS namespaces (see
:mod:`agentenvs.sandbox.holder`); every ``exec()`` and ``shell()`` joins them,
so a service started in the shell is seen by later commands. Every process
runs without capabilities and in the sandbox's own cgroups (pids, memory,
cpu), so a fork bomb is bounded and killable. A sandbox left by a crashed
process is removed by
:func:`~agentenvs.sandbox.local_resources.sweep_local_sandboxes`.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import subprocess
import threading
import uuid
import warnings
import weakref
from pathlib import Path

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.base import Capabilities, ExecResult, SandboxSpec, Shell
from agentenvs.sandbox.cgroups import Cgroups, CgroupsUnavailable
from agentenvs.sandbox.checks import EVALUATORS_MOUNT, EVALUATORS_SOURCE
from agentenvs.sandbox.execio import run_capped
from agentenvs.sandbox.holder import HOST_ENV, NamespaceHolder
from agentenvs.sandbox.local_resources import SANDBOX_PARENT, LocalResources, sweep_local_sandboxes
from agentenvs.sandbox.local_transport import LocalTransport
from agentenvs.sandbox.procs import proc_start_time
from agentenvs.sandbox.shell import PersistentShell
from agentenvs.sandbox.state_checker import StateChecker

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc")
SANDBOX_DIRS = ("/tmp", "/logs", "/tests", "/solution", "/root")
MAX_EXEC_OUTPUT = 8 * 1024 * 1024
BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
    "USER": "root",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "TMPDIR": "/tmp",
}

_swept = threading.Event()


class LocalSandbox:
    """A bubblewrap sandbox on this host. ``template`` is a root directory to start from (a copy is made)."""

    backend = "local"

    def __init__(
        self, spec: SandboxSpec | None = None, *, template: Path | None = None, env: dict[str, str] | None = None
    ):
        self.spec = spec or SandboxSpec()
        self._bwrap = shutil.which("bwrap")
        if self._bwrap is None:
            raise SandboxError("the local sandbox needs bubblewrap: apt-get install bubblewrap")
        workdir = posixpath.normpath(self.spec.workdir)
        if (
            not workdir.startswith("/")
            or workdir == "/"
            or any(workdir == d or workdir.startswith(d + "/") for d in SYSTEM_DIRS + ("/proc", "/dev"))
        ):
            raise SandboxError(
                f"workdir {self.spec.workdir!r} cannot be a sandbox directory: "
                "use an absolute path outside /, /usr, /etc, /proc and /dev, such as /app"
            )
        self.workdir = workdir
        self.writable = tuple(dict.fromkeys((workdir, *SANDBOX_DIRS)))
        self.env = {**BASE_ENV, **self.spec.env, **(env or {})}
        if not _swept.is_set():
            _swept.set()
            sweep_local_sandboxes()
        self.id = uuid.uuid4().hex[:12]
        self.home = SANDBOX_PARENT / f"{os.getpid()}-{self.id}"
        self.root = self.home / "root"
        self._res = LocalResources(self.home)
        self._finalizer = weakref.finalize(self, self._res.release)
        self._snapshots: dict[str, Path] = {}
        self._closed = False
        self._holder_lock = threading.Lock()
        try:
            self._setup(template)
        except BaseException:
            self._finalizer()
            raise

    def _setup(self, template: Path | None) -> None:
        self.home.mkdir(parents=True, exist_ok=False)
        if template is not None:
            copy_tree(template, self.root)
        self.root.mkdir(exist_ok=True)
        for d in self.writable:
            (self.root / d.lstrip("/")).mkdir(parents=True, exist_ok=True)
        (self.root / "tmp").chmod(0o1777)
        self._limit_note = ""
        try:
            self._res.cgroups = Cgroups.create(
                f"{os.getpid()}-{self.id}", pids=self.spec.pids, memory_mb=self.spec.memory_mb, cpus=self.spec.cpus
            )
        except CgroupsUnavailable as exc:
            self._limit_note = f"rlimits only ({exc})"
            warnings.warn(
                f"local sandbox without cgroups: {exc}. Falling back to RLIMIT_NPROC/RLIMIT_AS, "
                "which root does not obey for processes; use the docker backend for hard limits.",
                RuntimeWarning,
                stacklevel=3,
            )
        meta = {
            "pid": os.getpid(),
            "start_time": proc_start_time(os.getpid()),
            "cgroups": {k: str(v) for k, v in self._res.cgroups.paths.items()} if self._res.cgroups else {},
        }
        (self.home / "meta.json").write_text(json.dumps(meta))
        self._holder()

    # -- the namespaces, and the command line every process in the sandbox starts with --

    def _limits_prefix(self) -> list[str]:
        """An argv prefix that puts a process in the sandbox's cgroups (or under rlimits without them)."""
        if self._res.cgroups is not None:
            return self._res.cgroups.join_prefix()
        kb = self.spec.memory_mb * 1024
        return ["/bin/sh", "-c", f'ulimit -u {self.spec.pids}; ulimit -v {kb}; exec "$@"', "sh"]

    def _holder(self) -> NamespaceHolder:
        """The running namespace holder; a new one if the last died (its processes died with it)."""
        with self._holder_lock:
            self._check_open()
            holder = self._res.holder
            if holder is None or not holder.alive():
                if holder is not None:
                    holder.kill()
                holder = self._res.holder = NamespaceHolder(
                    self._limits_prefix(), self._bwrap_argv(), log=self.home / "holder.log", network=self.spec.network
                )
            return holder

    def _argv(self, command: list[str], *, cwd: str, env: dict[str, str]) -> list[str]:
        return self._holder().enter(command, cwd=cwd, env=env)

    def _bwrap_argv(self) -> list[str]:
        argv = [
            self._bwrap,
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--hostname",
            "sandbox",
            "--cap-drop",
            "ALL",
        ]
        if not self.spec.network:
            argv.append("--unshare-net")
        for d in SYSTEM_DIRS:
            if os.path.islink(d):
                argv += ["--symlink", os.readlink(d), d]
            elif os.path.isdir(d):
                argv += ["--ro-bind", d, d]
        argv += ["--proc", "/proc", "--dev", "/dev"]
        for d in self.writable:
            argv += ["--bind", str(self.root / d.lstrip("/")), d]
        argv += ["--ro-bind", str(EVALUATORS_SOURCE), EVALUATORS_MOUNT]
        return argv + ["--remount-ro", "/", "--chdir", "/", "--clearenv", "--setenv", "PATH", BASE_ENV["PATH"]]

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
                "user": "root without capabilities",
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
        if user not in (None, "", "root", "0"):
            raise SandboxError(
                f"the local backend runs commands as root only (asked for user {user!r}); "
                "use the docker backend for other users"
            )
        argv = ["bash", "--noprofile", "--norc", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        where = posixpath.normpath(posixpath.join(self.workdir, cwd)) if cwd else self.workdir
        full = self._argv(argv, cwd=where, env={**self.env, **(env or {})})
        return run_capped(
            full,
            timeout,
            MAX_EXEC_OUTPUT,
            env=HOST_ENV,
            kill=self._res.kill_session,
            on_start=self._res.procs.add,
            on_end=self._res.procs.discard,
        )

    def shell(self) -> Shell:
        """A persistent bash in the sandbox (about 0.3 ms a builtin). ``restore`` restarts it in place."""
        self._check_open()
        argv = ["bash", "--noprofile", "--norc"]

        def connect() -> LocalTransport:
            self._check_open()
            return _SandboxTransport(self._argv(argv, cwd="/", env=self.env), self._res, self.spec.pids)

        shell = PersistentShell(connect, cwd=self.workdir)
        self._res.shells[:] = [s for s in self._res.shells if not s.closed]
        self._res.shells.append(shell)
        return shell

    def host_path(self, path: str) -> Path:
        """Where the in-sandbox ``path`` lives on the host, following symlinks as the sandbox would.

        Raises SandboxError for paths outside the sandbox's writable directories.
        """
        pending = [p for p in posixpath.join(self.workdir, path).split("/") if p]
        resolved: list[str] = []
        hops = 0
        while pending:
            part = pending.pop(0)
            if part == ".":
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            resolved.append(part)
            host = self._map("/" + "/".join(resolved))
            if host is not None and host.is_symlink():
                hops += 1
                if hops > 40:
                    raise SandboxError(f"too many levels of symbolic links in {path!r}")
                target = os.readlink(host)
                resolved.pop()
                if target.startswith("/"):
                    resolved = []
                pending = [p for p in target.split("/") if p] + pending
        final = "/" + "/".join(resolved)
        host = self._map(final)
        if host is None:
            raise SandboxError(
                f"{path!r} (resolved to {final!r}) is outside the sandbox's writable directories "
                f"{', '.join(self.writable)}; put and get only reach those"
            )
        return host

    def _map(self, path: str) -> Path | None:
        for d in self.writable:
            if path == d or path.startswith(d + "/"):
                return self.root / path.lstrip("/")
        return None

    def put(self, src: str | Path | bytes, dest: str) -> None:
        """Copy bytes, a host file or a host directory to ``dest`` (its full in-sandbox path)."""
        self._check_open()
        if isinstance(src, bytes):
            self._write(dest, src)
            return
        source = Path(src)
        if source.is_dir():
            for here, dirs, files in os.walk(source):
                rel = os.path.relpath(here, source)
                base = dest if rel == "." else posixpath.join(dest, rel)
                self.host_path(base).mkdir(parents=True, exist_ok=True)
                for name in dirs + files:
                    item = Path(here) / name
                    if item.is_symlink():
                        target = self.host_path(posixpath.join(base, name))
                        target.unlink(missing_ok=True)
                        os.symlink(os.readlink(item), target)
                    elif name in files:
                        self._write(posixpath.join(base, name), item.read_bytes(), mode=item.stat().st_mode)
        elif source.is_file():
            self._write(dest, source.read_bytes(), mode=source.stat().st_mode)
        else:
            raise FileNotFoundError(f"put: no such host file or directory: {source}")

    def _write(self, dest: str, data: bytes, mode: int | None = None) -> None:
        target = self.host_path(dest)
        if target.is_dir():
            raise IsADirectoryError(f"put: {dest!r} is a directory in the sandbox; give the full file path")
        self.host_path(posixpath.dirname(posixpath.join(self.workdir, dest))).mkdir(parents=True, exist_ok=True)
        target = self.host_path(dest)
        target.write_bytes(data)
        if mode is not None:
            target.chmod(mode & 0o7777)

    def get(self, path: str) -> bytes:
        """The content of a file in the sandbox; FileNotFoundError if there is none."""
        self._check_open()
        target = self.host_path(path)
        if target.is_dir():
            raise IsADirectoryError(f"not a regular file in the sandbox: {path} (use exec with tar for directories)")
        try:
            return target.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(f"no such file in the sandbox: {path}") from None

    def snapshot(self) -> str:
        """Copy the writable root aside (reflinks where the filesystem has them)."""
        self._check_open()
        ref = f"snap-{len(self._snapshots)}-{uuid.uuid4().hex[:8]}"
        dest = self.home / "snapshots" / ref
        dest.parent.mkdir(exist_ok=True)
        copy_tree(self.root, dest)
        self._snapshots[ref] = dest
        return ref

    def restore(self, ref: str) -> None:
        """Kill every process, put the snapshot's files back in new namespaces; open shells restart at the workdir."""
        self._check_open()
        source = self._snapshots.get(ref)
        if source is None:
            raise SandboxError(
                f"unknown snapshot {ref!r}: restore takes a reference this sandbox's snapshot() returned"
            )
        self._res.kill_processes()
        trash = self.home / f"trash-{uuid.uuid4().hex[:8]}"
        self.root.rename(trash)
        copy_tree(source, self.root)
        shutil.rmtree(trash, ignore_errors=True)
        self._holder()  # the old one had the old directories mounted
        for shell in self._res.shells:
            shell.reset(cwd=self.workdir)

    def kill_all(self) -> None:
        """Kill every process (the namespaces die with their holder); later commands get new namespaces."""
        self._check_open()
        self._res.kill_processes()
        for shell in self._res.shells:
            shell.close()
        self._res.shells.clear()

    def state_checker(self) -> StateChecker:
        """The checker that reads this sandbox's files from outside its namespaces (see :mod:`.state_checker`)."""
        self._check_open()
        res = self._res
        if res.checker is None or res.checker_root != self.root.stat().st_ino:
            res.close_checker()
            res.checker, res.checker_root = StateChecker(self.root), self.root.stat().st_ino
        return res.checker

    def seal(self) -> LocalSandbox:
        """End the agent's phase: every agent process killed. The verifier runs here, in new namespaces,
        on the host's read-only programs, which the agent could never write."""
        self.kill_all()
        return self

    def alive(self) -> bool:
        return not self._closed

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


class _SandboxTransport(LocalTransport):
    """A sandbox shell. Its commands are the processes of its session (orphans are adopted by
    the namespaces' init, outside the shell's tree), and it ends a fork storm: once the pids
    limit refuses a fork, every process of the shell (background jobs included) is killed,
    so the shell can fork again."""

    def __init__(self, argv: list[str], resources: LocalResources, limit: int):
        super().__init__(argv, env=HOST_ENV)
        self._res = resources
        self._limit = limit
        self._hits = resources.cgroups.pid_limit_hits() if resources.cgroups is not None else 0
        self._note = ""

    def _members(self) -> list[int]:
        return self._res.session_members(self.pid)

    def interrupt_foreground(self) -> None:
        super().interrupt_foreground()
        self._note += self._end_storm()

    def after_command(self) -> str:
        note, self._note = self._note + self._end_storm(), ""
        return note

    def _end_storm(self) -> str:
        cgroups = self._res.cgroups
        if cgroups is None or cgroups.pid_limit_hits() == self._hits:
            return ""
        with cgroups.frozen():
            killed = self.kill_all_but_shell()
        self._hits = cgroups.pid_limit_hits()
        return (
            f"[the sandbox reached its limit of {self._limit} processes: "
            f"{killed} processes under this shell were killed, background jobs included]\n"
        )


def copy_tree(src: Path, dest: Path) -> None:
    """``cp -a`` with reflinks where the filesystem has them (a plain copy elsewhere)."""
    done = subprocess.run(
        ["cp", "-a", "--reflink=auto", "--", str(src), str(dest)], capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise SandboxError(f"copying {src} to {dest} failed: {done.stderr.strip()[-500:]}")
