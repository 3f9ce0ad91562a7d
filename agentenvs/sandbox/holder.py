"""The namespaces of one local sandbox: a long-lived bubblewrap that every command joins.

The holder is ``bwrap`` with the sandbox's mounts and its own user, pid,
network, IPC and UTS namespaces, whose pid 1 is a bash that does nothing but
wait for EOF on its stdin (bash reaps the orphans it adopts, and as init it
ignores every signal sent from inside, so ``kill -9 -1`` does not end the
sandbox). bwrap runs as the sandbox's unprivileged host user (see
:mod:`agentenvs.sandbox.local_system`) and maps it to uid 0 in the new user
namespace, in which no further user namespace can be made. ``exec()`` and
``shell()`` enter those namespaces with ``nsenter`` (the user namespace
included, so they are that unprivileged user too), so a server started in the
shell is visible (``ps``, ``/proc/net/tcp``, ``127.0.0.1``) to every later
command, as in a container. Entered processes drop every capability
(bounding set included) and set ``no_new_privs`` with ``setpriv``, then get a
clean environment and their working directory from ``env -i -C``.

A sandbox with several users (``userns_fd``: a namespace of
:mod:`agentenvs.sandbox.local_userns`, which maps a container's uids to
unprivileged host ids) is entered as a container is: root keeps a container
engine's default capabilities within the namespace (none of them reaches the
host), set-user-ID programs such as ``sudo`` work, and a command may run as
another user of the sandbox.

The holder itself stays out of the sandbox's memory cgroup (it uses a few
MB), so the OOM killer, however the agent fills its memory, takes the agent's
processes and never the namespaces. The holder's stdin is a pipe
whose write end only this process holds: when we exit, even by SIGKILL,
pid 1 reads EOF and exits, and the kernel ends the pid namespace, which
kills every process of the sandbox. (bwrap's ``--die-with-parent`` is not
used: it fires when the thread that started bwrap exits, not the process.)
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.procs import proc_children, proc_exiting

# only variables the host-side helpers (sh, nsenter) need: the sandbox's own env is set inside
HOST_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
_HOLD = "echo ready; while read -r _; do :; done"
_DROP_PRIVILEGES = ("--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--no-new-privs")
#: A container engine's default capabilities (Docker's, without mknod and net_raw).
_CONTAINER_PRIVILEGES = (
    "--bounding-set=-all,+chown,+dac_override,+fowner,+fsetid,+kill,+setgid,+setuid,+setpcap,+net_bind_service,"
    "+sys_chroot,+audit_write,+setfcap",
    "--inh-caps=-all",
    "--ambient-caps=-all",
)


def host_tool(name: str, package: str) -> str:
    """The host program ``name``, or a SandboxError saying which package provides it."""
    path = shutil.which(name, path=HOST_ENV["PATH"])
    if path is None:
        raise SandboxError(f"the local sandbox needs {name}: apt-get install {package}")
    return path


def become(ids: tuple[int, int]) -> list[str]:
    """The prefix that runs a command as host uid and gid ``ids``, with no supplementary groups."""
    uid, gid = ids
    return [host_tool("setpriv", "util-linux"), f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]


class NamespaceHolder:
    """Start ``prefix + bwrap_argv`` holding the namespaces; :meth:`enter` builds argvs that join them.

    ``prefix`` puts every command (through :meth:`enter`) in the sandbox's
    cgroups or under its rlimits, ``own_prefix`` the holder itself. bwrap runs
    as the host user ``owner`` (uid, gid). ``log`` receives bwrap's stderr.
    ``userns_fd`` is the several-user namespace bwrap joins (``--userns`` in
    ``bwrap_argv``); the holder keeps it open no longer than bwrap's start.
    """

    def __init__(
        self,
        prefix: Sequence[str],
        bwrap_argv: Sequence[str],
        *,
        own_prefix: Sequence[str],
        owner: tuple[int, int],
        log: Path,
        network: bool,
        userns_fd: int | None = None,
        timeout: float = 15.0,
    ):
        self._nsenter = host_tool("nsenter", "util-linux")
        self._setpriv = host_tool("setpriv", "util-linux")
        self._env = host_tool("env", "coreutils")
        self._prefix = list(prefix)
        self._namespaces = ["--user", "--mount", "--pid", "--ipc", "--uts"] + ([] if network else ["--net"])
        self._users = userns_fd is not None
        as_owner = [*become(owner), "--"]
        with open(log, "ab") as stderr:
            self._proc = subprocess.Popen(
                [
                    *own_prefix,
                    *as_owner,
                    *bwrap_argv,
                    "--as-pid-1",
                    "--",
                    "/bin/bash",
                    "--noprofile",
                    "--norc",
                    "-c",
                    _HOLD,
                    "agentenvs-holder",
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=HOST_ENV,
                start_new_session=True,
                pass_fds=() if userns_fd is None else (userns_fd,),
            )
        self.init_pid = 0
        try:
            self.init_pid = self._wait_ready(timeout, log)
        except BaseException:
            self.kill()
            raise

    def _wait_ready(self, timeout: float, log: Path) -> int:
        stdout = self._proc.stdout
        ready, _, _ = select.select([stdout], [], [], timeout)
        line = os.read(stdout.fileno(), 64) if ready else b""
        stdout.close()
        kids = proc_children(self._proc.pid)
        if line != b"ready\n" or not kids:
            try:
                detail = log.read_text(errors="replace").strip()[-500:]
            except OSError:
                detail = ""
            state = "exited" if self._proc.poll() is not None else f"no answer within {timeout:g} s"
            raise SandboxError(f"the sandbox's namespace holder did not start ({state}): {detail or 'no output'}")
        return kids[0]

    @property
    def pid(self) -> int:
        """Host pid of the outer bwrap (the namespaces' init is :attr:`init_pid`)."""
        return self._proc.pid

    def alive(self) -> bool:
        """bwrap runs and the namespaces' init is not ending (killed, it first waits for every other process)."""
        return self._proc.poll() is None and not proc_exiting(self.init_pid)

    def enter(
        self, command: Sequence[str], *, cwd: str, env: dict[str, str], user: tuple[int, int] | None = None
    ) -> list[str]:
        """The argv that runs ``command`` inside the namespaces, with exactly ``env``: without capabilities,
        or, with several users, as a container's root or as ``user`` (its uid and gid in the sandbox)."""
        bad = [key for key in env if not key or "=" in key]
        if bad:
            raise SandboxError(f"environment variable names cannot be empty or contain '=': {bad!r}")
        if user is not None and not self._users:
            raise SandboxError("this sandbox has one user, root: it cannot run a command as another")
        privileges = list(_CONTAINER_PRIVILEGES if self._users else _DROP_PRIVILEGES)
        if user is not None:
            privileges += [f"--reuid={user[0]}", f"--regid={user[1]}", "--init-groups"]
        return [
            *self._prefix,
            self._nsenter,
            f"--target={self.init_pid}",
            *self._namespaces,
            "--root",
            "--",
            self._setpriv,
            *privileges,
            "--",
            self._env,
            "-i",
            "-C",
            cwd,
            "--",
            *(f"{key}={value}" for key, value in env.items()),
            *command,
        ]

    def kill(self) -> None:
        """End the namespaces and so every process in them. Idempotent."""
        if self._proc.poll() is None:
            try:
                os.kill(self.init_pid or self._proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)
        try:
            self._proc.stdin.close()
        except OSError:
            pass
