"""The Sandbox protocol: where actions execute, whatever the backend.

Backends (``local``, ``docker``) implement it; families use only this
interface, so a task runs unchanged on either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

#: Every sandbox's hostname on both backends: the same in every episode, so a prompt, a window
#: title or a command's output that shows it does not vary (docker's default is the container id).
HOSTNAME = "sandbox"


@dataclass(frozen=True)
class ExecResult:
    """The result of one command. ``exit_code`` is -1 when the command timed out."""

    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool = False
    duration: float = 0.0
    truncated: bool = False

    @property
    def output(self) -> str:
        """stdout then stderr, as a person at a terminal would see them."""
        if self.stdout and self.stderr:
            sep = "" if self.stdout.endswith("\n") else "\n"
            return f"{self.stdout}{sep}{self.stderr}"
        return self.stdout or self.stderr


@dataclass(frozen=True)
class Capabilities:
    backend: str
    isolated_network: bool
    isolated_filesystem: bool
    resource_limits: bool
    snapshot: bool
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SandboxSpec:
    """What a sandbox must look like: the image or environment, limits, paths.

    ``storage_mb`` bounds the sandbox's writable files (a write past it fails with ENOSPC).
    ``mounts`` binds host paths in: ``(host_path, sandbox_path, read_only)`` (a desktop's
    control socket directory, its daemon's code). ``users``: the image's several users, as a
    container has them (root, a desktop's user, ``sudo`` between them); a container always has
    them, a local sandbox only when asked (it maps a range of host ids for them).
    """

    image: str = "agentenvs/terminal:latest"
    workdir: str = "/app"
    cpus: float = 1.0
    memory_mb: int = 2048
    pids: int = 512
    storage_mb: int = 4096
    network: bool = False
    env: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    mounts: tuple[tuple[str, str, bool], ...] = ()
    users: bool = False


@runtime_checkable
class Shell(Protocol):
    """A persistent bash: cwd and environment survive between commands.

    A timeout interrupts the running command (its process group is killed),
    not the shell. Output beyond ``max_output_bytes`` is dropped and marked.
    """

    def run(self, command: str, timeout: float, max_output_bytes: int = 65536) -> ExecResult: ...

    def cwd(self) -> str: ...

    def close(self) -> None: ...


@runtime_checkable
class Sandbox(Protocol):
    """An isolated place to run commands, with files in and out and snapshots."""

    spec: SandboxSpec
    #: On a sandbox ``seal()`` returned: the agent's changes it left out, for the verdict ("" if none).
    sealed_note: str

    @property
    def capabilities(self) -> Capabilities: ...

    def exec(
        self,
        cmd: str | list[str],
        timeout: float = 60.0,
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
    ) -> ExecResult: ...

    def shell(self) -> Shell: ...

    def warm(self, shells: int) -> None:
        """Open ``shells`` shells and start the state checker now, so that a reset taking this sandbox
        from a warm pool waits for neither; ``shell()`` hands out the open ones first."""
        ...

    def put(self, src: str | Path | bytes, dest: str) -> None:
        """Copy a host file or directory (or raw bytes) to ``dest`` inside the sandbox."""
        ...

    def get(self, path: str) -> bytes: ...

    def snapshot(self) -> str:
        """Record the current state; returns a reference for ``restore``."""
        ...

    def restore(self, ref: str) -> None: ...

    def kill_all(self) -> None:
        """Kill every process in the sandbox (daemons and orphans too) and close its shells.

        Files are kept; ``exec`` and ``shell`` start fresh processes afterwards.
        The verifier runs only after this, so nothing the agent started survives.
        """
        ...

    def wait_idle(self, timeout: float, window: float = 0.25) -> bool:
        """Wait, at most ``timeout`` seconds, until the sandbox's processes stop using the CPU for two
        ``window``s in a row (an app finishing a save); return whether they did. Never longer."""
        ...

    def state_checker(self) -> Any:
        """A :class:`~agentenvs.sandbox.state_checker.StateChecker` over this sandbox's files, outside its reach."""
        ...

    def seal(self) -> Sandbox:
        """End the agent's phase and return the sandbox the final verifier runs in.

        Every agent process is killed first. The returned sandbox holds the
        agent's final files on programs and libraries the agent could not have
        changed; it may be this sandbox (close it once) or a new one that the
        caller closes.
        """
        ...

    def alive(self) -> bool: ...

    def network_namespace(self) -> Path:
        """The host's handle on the sandbox's network namespace (``/proc/<pid>/ns/net``), where the
        verifier's egress gate opens its port; the sandbox itself gains no route."""
        ...

    def network_peers(self) -> tuple[str, ...]:
        """Names the sandbox reaches on a network of its own (a compose task's services), which a proxy
        must not take."""
        ...

    def close(self) -> None: ...
