"""The local transport: a bash subprocess's pipes, its process groups read from /proc.

:class:`LocalTransport` carries a :class:`~agentenvs.sandbox.shell.PersistentShell`
to a bash on this host (bare, or wrapped in bubblewrap by the local sandbox);
:class:`SandboxTransport` is the local sandbox's, which also ends fork storms;
:func:`local_shell` is a shell on this host with no isolation.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentenvs.sandbox.holder import HOST_ENV
from agentenvs.sandbox.procs import kill_tree, proc_descendants, proc_stat, wait_gone
from agentenvs.sandbox.shell import PersistentShell

if TYPE_CHECKING:
    from agentenvs.sandbox.local_resources import LocalResources

_CHUNK = 65536


class LocalTransport:
    """Runs ``argv`` (a bash, possibly wrapped in bubblewrap) as a subprocess in its own session.

    The shell is the first ``bash`` found walking down from the subprocess, so
    wrappers (``bwrap``, a cgroup-joining ``sh -c ... exec``) are allowed.
    """

    def __init__(self, argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None):
        self._proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        self._out = self._proc.stdout.fileno()
        self._before: set[int] = set()
        self._protected: set[int] | None = None
        self._chain: list[int] = [self._proc.pid]

    @property
    def pid(self) -> int:
        return self._proc.pid

    def send(self, data: bytes) -> None:
        self._before = self._groups()
        self._proc.stdin.write(data)
        self._proc.stdin.flush()

    def recv(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self._out], [], [], max(timeout, 0))
        if not ready:
            return b""
        data = os.read(self._out, _CHUNK)
        if not data:
            raise EOFError("the shell exited")
        return data

    def interrupt_foreground(self) -> None:
        for pgid in self._groups() - self._before:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        if self._proc.poll() is None:
            tree = kill_tree(self._proc.pid)
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._proc.wait(timeout=10)
            wait_gone(tree, 10.0)
        for stream in (self._proc.stdin, self._proc.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def _shell_chain(self) -> set[int]:
        """Process groups of the wrapper chain down to the shell: never killed by an interrupt."""
        if self._protected is not None:
            return self._protected
        chain = [self._proc.pid]
        found = proc_stat(self._proc.pid) is not None and proc_stat(self._proc.pid)[0] == "bash"
        for pid in [] if found else proc_descendants(self._proc.pid):
            st = proc_stat(pid)
            chain.append(pid)
            if st and st[0] == "bash":
                found = True
                break
        groups = {st[2] for p in chain if (st := proc_stat(p))}
        if found:
            self._protected, self._chain = groups, chain
        return groups

    def kill_all_but_shell(self) -> int:
        """SIGKILL every process under the shell, background jobs included; returns how many."""
        self._shell_chain()
        keep = set(self._chain)
        victims = [p for p in self._members() if p not in keep]
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return len(victims)

    def _members(self) -> list[int]:
        """The processes the shell may have started: its descendants (a sandbox widens this to its session)."""
        return proc_descendants(self._proc.pid)

    def _groups(self) -> set[int]:
        protected = self._shell_chain()
        groups = set()
        for pid in self._members():
            st = proc_stat(pid)
            if st and st[1] != "Z" and st[2] not in protected:
                groups.add(st[2])
        return groups


class SandboxTransport(LocalTransport):
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


def local_shell(
    argv: Sequence[str] = ("bash", "--noprofile", "--norc"), *, cwd: str = "/", env: dict[str, str] | None = None
) -> PersistentShell:
    """A persistent shell on this host with no isolation (the sandboxes add bubblewrap around ``argv``)."""
    return PersistentShell(lambda: LocalTransport(argv, env=env), cwd=cwd)
