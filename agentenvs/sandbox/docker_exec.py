"""Commands in a container through ``docker exec``, over the hijacked exec socket.

:func:`run_exec` runs one command under a deadline that kills it inside the
container (``timeout -s KILL``) and also bounds the socket read, so a hung
engine cannot hang the caller. :class:`DockerExecTransport` is the byte pipe
a :class:`~agentenvs.sandbox.shell.PersistentShell` drives: one long-lived
bash whose output frames we demultiplex ourselves.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from typing import Any

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.base import ExecResult
from agentenvs.sandbox.docker_engine import missing_image_error
from agentenvs.sandbox.docker_procs import ContainerProcesses

MAX_EXEC_OUTPUT = 8 * 1024 * 1024
SOCKET_GRACE_SEC = 10.0
_HZ = os.sysconf("SC_CLK_TCK")
# what the engine, or our ``timeout`` wrapper, says when the pids limit kept an exec's command from starting
_EXEC_START_FAILED = "OCI runtime exec failed"
_WRAPPER_FORK_FAILED = "timeout: fork system call failed"


class ExecStream:
    """The hijacked socket of one ``docker exec``: demultiplexed reads under deadlines."""

    def __init__(self, api: Any, exec_id: str):
        self.exec_id = exec_id
        self._io = api.exec_start(exec_id, socket=True)
        self.sock: socket.socket = getattr(self._io, "_sock", self._io)
        self._buf = bytearray()
        self.eof = False

    def read_frames(self, timeout: float) -> list[tuple[int, bytes]]:
        """Frames ``(stream, payload)`` that arrive within ``timeout`` (at least one unless EOF/timeout)."""
        deadline = time.monotonic() + max(timeout, 0.0)
        frames: list[tuple[int, bytes]] = []
        while not self.eof:
            frames.extend(self._parse())
            if frames:
                return frames
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.sock], [], [], remaining)[0]:
                return frames
            try:
                chunk = self.sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
            self._buf += chunk
        return frames

    def _parse(self) -> list[tuple[int, bytes]]:
        frames = []
        while len(self._buf) >= 8:
            stream, size = struct.unpack(">BxxxL", self._buf[:8])
            if len(self._buf) < 8 + size:
                break
            frames.append((stream, bytes(self._buf[8 : 8 + size])))
            del self._buf[: 8 + size]
        return frames

    def close(self) -> None:
        for close in (lambda: self.sock.shutdown(socket.SHUT_RDWR), self.sock.close, self._io.close):
            try:
                close()
            except OSError:
                pass


class DockerExecTransport:
    """A bash started by ``docker exec``, as the byte pipe a PersistentShell drives.

    stdout and stderr are merged. Before ``exec bash`` the process prints its
    pid and the container's uptime, so ``interrupt_foreground`` can kill exactly
    the processes the shell started since the last ``send`` (by their start
    time), sparing the shell and earlier background jobs. With ``processes``
    (the container seen from the host) the kill needs no fork in the container,
    and once its pids limit refused a fork every process but the container's
    own and the sandbox's shells is killed, and the next result says so.
    Without it (a remote engine) the kill is a second exec. Start times have
    clock-tick resolution (10 ms): a job put in the background less than a
    tick before the next command is treated as part of it.
    """

    def __init__(
        self,
        api: Any,
        container_id: str,
        *,
        env: dict[str, str] | None = None,
        user: str | None = None,
        start_timeout: float = 90.0,
        processes: ContainerProcesses | None = None,
    ):
        self._api = api
        self._container = container_id
        self._procs = processes
        self.container_gone = False
        exec_id = api.exec_create(
            container_id,
            ["bash", "-c", 'read -r up _ </proc/uptime; echo "$$ $up"; exec bash --noprofile --norc'],
            stdin=True,
            stdout=True,
            stderr=True,
            tty=False,
            environment=env,
            user=user or "",
        )["Id"]
        self._stream = ExecStream(api, exec_id)
        try:
            self.pid, uptime = self._read_hello(start_timeout)
        except SandboxError:
            self._stream.close()
            raise
        self._clock_offset = uptime - time.monotonic()
        self._sent_at = time.monotonic()
        self.host_pid = processes.host_pid(self.pid) if processes is not None else None
        if self.host_pid is not None:
            processes.shells.add(self.host_pid)

    def _read_hello(self, timeout: float) -> tuple[int, float]:
        deadline = time.monotonic() + timeout
        line = b""
        while b"\n" not in line:
            frames = self._stream.read_frames(deadline - time.monotonic())
            if not frames:
                raise SandboxError(f"bash did not start in the container within {timeout:g}s: {line[-300:]!r}")
            line += b"".join(data for _, data in frames)
        first, _, self._pending = line.partition(b"\n")
        try:
            pid, uptime = first.split()
            return int(pid), float(uptime)
        except ValueError:
            raise SandboxError(
                f"bash did not start in the container (is its process limit exhausted?); it printed: {line[-300:]!r}"
            ) from None

    def send(self, data: bytes) -> None:
        self._sent_at = time.monotonic()
        try:
            self._stream.sock.sendall(data)
        except OSError as exc:
            raise BrokenPipeError(f"the shell in the container is gone: {exc}") from None

    def recv(self, timeout: float) -> bytes:
        """Output within ``timeout`` (``b""`` if none came); EOFError once the shell exited."""
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        frames = self._stream.read_frames(timeout)
        if not frames and self._stream.eof:
            raise EOFError("the shell in the container exited")
        return b"".join(data for _, data in frames)

    def interrupt_foreground(self) -> None:
        """SIGKILL what the shell started since the last send (everything, if the pids limit was hit)."""
        since_cs = int((self._sent_at + self._clock_offset) * 100)
        if self._procs is not None and self.host_pid is not None:
            if not self._procs.end_storm():
                self._procs.kill_session(self.host_pid, since_ticks=since_cs * _HZ // 100)
            return
        result = run_exec(
            self._api, self._container, ["bash", "-c", _KILL_SINCE, "kill", str(since_cs), str(self.pid)], timeout=10.0
        )
        if _EXEC_START_FAILED in result.stdout + result.stderr:
            raise SandboxError(
                "cannot kill the timed-out command: the container's process limit is exhausted "
                f"and its cgroup is not readable from this host ({result.stdout.strip()[-300:]})"
            )

    def after_command(self) -> str:
        """A note for the agent when the pids limit was hit (the storm is ended first)."""
        if self._procs is None:
            return ""
        self._procs.end_storm()
        return self._procs.take_note()

    def close(self) -> None:
        """Kill the shell and what it started (unless the container is already gone) and drop the socket."""
        if self._procs is not None and self.host_pid is not None:
            self._procs.shells.discard(self.host_pid)
            if not self.container_gone:
                self._procs.kill_session(self.host_pid, since_ticks=0, leader_too=True)
        elif not self.container_gone and not self._stream.eof:
            try:
                run_exec(
                    self._api, self._container, ["bash", "-c", _KILL_SINCE, "kill", "0", str(self.pid)], timeout=10.0
                )
            except SandboxError:
                pass
        self._stream.close()


# Kill every descendant of the shell ($2) whose start time (in clock ticks since
# boot) is at or after $1 centiseconds of uptime: its process group when that
# group is not the shell's own, else the process alone. With $1 = 0, the shell too.
_KILL_SINCE = r"""
hz=$(getconf CLK_TCK 2>/dev/null || echo 100); lim=$(( $1 * hz / 100 )); shell=$2
st=$(<"/proc/$shell/stat") || exit 0; st=${st##*) }; set -- $st; spg=$3
walk() {
  local c f
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    walk "$c"
    f=$(<"/proc/$c/stat") 2>/dev/null || continue; f=${f##*) }; set -- $f
    [ "${20}" -ge "$lim" ] || continue
    if [ "$3" != "$spg" ]; then kill -KILL -- "-$3" 2>/dev/null; else kill -KILL "$c" 2>/dev/null; fi
  done
}
walk "$shell"
[ "$lim" -eq 0 ] && kill -KILL "$shell" 2>/dev/null
exit 0
"""


def run_exec(
    api: Any,
    container_id: str,
    argv: list[str],
    timeout: float,
    *,
    workdir: str | None = None,
    env: dict[str, str] | None = None,
    user: str | None = None,
) -> ExecResult:
    """One ``docker exec`` killed inside after ``timeout``; the socket read is bounded too."""
    start = time.monotonic()
    wrapped = ["timeout", "-s", "KILL", f"{max(timeout, 0.001):.3f}", *argv]
    try:
        exec_id = api.exec_create(
            container_id, wrapped, stdout=True, stderr=True, workdir=workdir, environment=env, user=user or ""
        )["Id"]
        stream = ExecStream(api, exec_id)
    except Exception as exc:
        raise as_sandbox_error(exc, "exec") from None
    out: dict[int, bytearray] = {1: bytearray(), 2: bytearray()}
    truncated = False
    deadline = start + timeout + SOCKET_GRACE_SEC
    try:
        while not stream.eof and time.monotonic() < deadline:
            for kind, data in stream.read_frames(deadline - time.monotonic()):
                buf = out.get(kind, out[1])
                room = MAX_EXEC_OUTPUT - len(buf)
                truncated |= len(data) > room
                buf += data[: max(room, 0)]
    finally:
        stream.close()
    duration = time.monotonic() - start
    exit_code = api.exec_inspect(exec_id).get("ExitCode") if stream.eof else None
    timed_out = exit_code is None or (exit_code == 137 and duration >= timeout)
    return ExecResult(
        stdout=out[1].decode("utf-8", "replace"),
        stderr=out[2].decode("utf-8", "replace"),
        exit_code=-1 if timed_out else int(exit_code),
        timed_out=timed_out,
        duration=duration,
        truncated=truncated,
    )


def run_exec_bounded(
    api: Any, processes: ContainerProcesses | None, container_id: str, argv: list[str], timeout: float, **kwargs: Any
) -> ExecResult:
    """:func:`run_exec`, ending a fork storm first, and once more if the pids limit kept it from starting."""
    if processes is None:
        return run_exec(api, container_id, argv, timeout, **kwargs)
    processes.end_storm()
    result = run_exec(api, container_id, argv, timeout, **kwargs)
    if processes.end_storm() and _never_started(result):
        result = run_exec(api, container_id, argv, timeout, **kwargs)
    return result


def _never_started(result: ExecResult) -> bool:
    said = result.stdout + result.stderr
    return _EXEC_START_FAILED in said or (result.exit_code == 125 and _WRAPPER_FORK_FAILED in result.stderr)


def creation_error(exc: Exception, image: str, what: str) -> SandboxError:
    """A failed ``create_container``: a missing image says how to get it; anything else as below."""
    import docker.errors

    if isinstance(exc, docker.errors.ImageNotFound):
        return missing_image_error(image)
    return as_sandbox_error(exc, what)


def as_sandbox_error(exc: Exception, what: str) -> SandboxError:
    import docker.errors

    if isinstance(exc, docker.errors.NotFound):
        return SandboxError(f"docker {what} failed: the container is gone ({exc.explanation})")
    if isinstance(exc, SandboxError):
        return exc
    return SandboxError(f"docker {what} failed: {exc}")
