"""A persistent bash reached through a byte transport, with a nonce end-marker protocol.

The protocol lives here and knows nothing about where bash runs. A
:class:`Transport` carries bytes to and from one ``bash --noprofile --norc``
(a local subprocess's pipes, a Docker exec socket) and knows how to kill the
process groups of a command that ran out of time.

Each command is sent as one line: ``eval -- $'<command, byte-escaped>'`` with
stdin from ``/dev/null`` and stderr merged into stdout, followed by a
``printf`` of a per-command random nonce, ``$?`` and ``$PWD``. Because the
command reaches bash as a single quoted string, unbalanced quotes, heredocs and
missing trailing newlines cannot desynchronise the shell: at worst ``eval``
reports a syntax error. ``set -m`` gives every pipeline its own process group,
so a timeout kills the command (and what it forked) but not the shell.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.base import ExecResult

_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-./,:=+@%^*()[]{}<>|&;#~!?")


@runtime_checkable
class Transport(Protocol):
    """Bytes to and from one bash process reading commands on its stdin."""

    def send(self, data: bytes) -> None:
        """Write to the shell's stdin. Raises ``BrokenPipeError`` or ``OSError`` if it is gone."""
        ...

    def recv(self, timeout: float) -> bytes:
        """Output that arrived within ``timeout`` seconds (``b""`` if none). Raises ``EOFError`` once bash exited."""
        ...

    def interrupt_foreground(self) -> None:
        """SIGKILL the process groups started since the last ``send`` (the running command's)."""
        ...

    # Optional: ``after_command() -> str`` is called after each command; a
    # non-empty result (say, "the process limit was hit") is shown to the agent.

    def close(self) -> None:
        """Kill the shell and everything it started. Idempotent."""
        ...


def bash_quote(text: str) -> str:
    """Quote ``text`` as a bash ``$'...'`` word that survives any bytes, newlines included."""
    out = []
    for byte in text.encode("utf-8", errors="surrogateescape"):
        out.append(chr(byte) if byte in _SAFE else f"\\x{byte:02x}")
    return "$'" + "".join(out) + "'"


class CappedBuffer:
    """Keeps the head and the tail of a stream up to ``limit`` bytes and counts what it drops."""

    def __init__(self, limit: int):
        self.limit = max(limit, 0)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        keep = self.limit - len(self.head)
        if len(self.tail) > keep:
            excess = len(self.tail) - keep
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if not self.dropped:
            return head + tail
        sep = "" if not head or head.endswith("\n") else "\n"
        return f"{head}{sep}[output truncated: {self.dropped} bytes dropped]\n{tail}"


class PersistentShell:
    """A long-lived bash whose cwd and exported environment survive between commands.

    ``connect`` is a function that starts a fresh bash and returns its
    transport; it is called again whenever the shell has died (the agent ran
    ``exit``, a runaway command could not be interrupted), and the next
    result says so. A bare transport also works, but then a dead shell stays
    dead and ``run`` raises SandboxError.
    """

    def __init__(
        self,
        connect: Callable[[], Transport] | Transport,
        *,
        cwd: str = "/",
        startup_timeout: float = 15.0,
        interrupt_grace: float = 1.0,
    ):
        self._transport: Transport | None = None
        self._fresh: Transport | None = None
        if isinstance(connect, Transport):
            self._fresh, self._connect = connect, None
        else:
            self._connect = connect
        self._cwd = cwd
        self._startup_timeout = startup_timeout
        self._grace = interrupt_grace
        self._pending_note = ""
        self._lock = threading.Lock()
        self._closed = False

    @property
    def alive(self) -> bool:
        """Whether a bash is running right now (a dead one is restarted by the next ``run``)."""
        return self._transport is not None

    @property
    def closed(self) -> bool:
        return self._closed

    def cwd(self) -> str:
        """The shell's working directory after the last command."""
        return self._cwd

    def start(self) -> None:
        """Start bash now (``run`` starts it lazily otherwise)."""
        with self._lock:
            self._ensure()

    def run(self, command: str, timeout: float, max_output_bytes: int = 65536) -> ExecResult:
        """Run ``command`` in the shell. On timeout its process groups are killed, not the shell."""
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        with self._lock:
            if self._closed:
                raise SandboxError("the shell is closed; open a new one with sandbox.shell()")
            transport = self._ensure()
            note, self._pending_note = self._pending_note, ""
            nonce = secrets.token_hex(8)
            line = (
                f"__ae_n={nonce}; builtin eval -- {bash_quote(command)} </dev/null 2>&1; "
                f'builtin printf \'%s:%s:%s:%s\\n\' "$__ae_n" "$?" "$PWD" "$__ae_n"\n'
            )
            start = time.monotonic()
            out = CappedBuffer(max_output_bytes)
            try:
                transport.send(line.encode())
            except (OSError, SandboxError):
                self._drop_transport()
                note += self._restart_note("the previous shell had exited, so a new one was started")
                transport = self._ensure()
                transport.send(line.encode())
            status, end = self._read_until(transport, nonce, out, start + timeout)
            timed_out = status == "timeout"
            if timed_out:
                transport.interrupt_foreground()
                status, end = self._read_until(transport, nonce, out, time.monotonic() + self._grace)
                if status == "timeout":
                    self._drop_transport()
                    note += self._restart_note(
                        "the timed-out command could not be interrupted, so the shell was restarted"
                    )
            after = getattr(transport, "after_command", None)
            if after is not None and self._transport is transport:
                note += after()
            exit_code = -1
            if status == "done":
                code, cwd = end
                self._cwd = cwd
                exit_code = -1 if timed_out else code
            elif status in ("exit", "eof"):
                if end is not None:
                    exit_code, self._cwd = end
                self._drop_transport()
                self._pending_note = self._restart_note("the previous shell exited, so a new one was started")
            text = out.text()
            if timed_out:
                sep = "" if not text or text.endswith("\n") else "\n"
                text += f"{sep}[command timed out after {timeout:g} s and was killed]\n"
            return ExecResult(
                stdout=note + text,
                stderr="",
                exit_code=exit_code,
                timed_out=timed_out,
                duration=time.monotonic() - start,
                truncated=out.dropped > 0,
            )

    def reset(self, cwd: str | None = None) -> None:
        """Drop the current bash without a restart note (the sandbox was restored under it)."""
        with self._lock:
            self._drop_transport()
            self._pending_note = ""
            if cwd is not None:
                self._cwd = cwd

    def close(self) -> None:
        """Kill bash and everything it started."""
        with self._lock:
            self._closed = True
            self._drop_transport()
            if self._fresh is not None:
                self._fresh.close()
                self._fresh = None

    def _restart_note(self, why: str) -> str:
        return f"[shell restarted: {why}; working directory is {self._cwd}, environment variables were reset]\n"

    def _ensure(self) -> Transport:
        if self._transport is not None:
            return self._transport
        if self._fresh is not None:
            transport, self._fresh = self._fresh, None
        elif self._connect is not None:
            transport = self._connect()
        else:
            raise SandboxError(
                "the shell exited and was given no way to start another; open a new one with sandbox.shell()"
            )
        nonce = secrets.token_hex(8)
        init = (
            "set -m +o histexpand; PS1=; PS2=; unset HISTFILE\n"
            'trap \'builtin printf "%s:x%s:%s:%s\\n" "$__ae_n" "$?" "$PWD" "$__ae_n"\' EXIT\n'
            f"builtin cd -- {bash_quote(self._cwd)} 2>/dev/null || builtin cd /\n"
            f'__ae_n={nonce}; builtin printf \'%s:%s:%s:%s\\n\' "$__ae_n" 0 "$PWD" "$__ae_n"\n'
        )
        out = CappedBuffer(4096)
        try:
            transport.send(init.encode())
            status, end = self._read_until(transport, nonce, out, time.monotonic() + self._startup_timeout)
        except OSError as e:
            transport.close()
            raise SandboxError(f"could not start the shell: {e}") from e
        if status != "done":
            transport.close()
            raise SandboxError(
                f"the shell did not start within {self._startup_timeout:g} s ({status}); "
                f"it printed: {out.text()[-500:]!r}"
            )
        self._cwd = end[1]
        self._transport = transport
        return transport

    def _drop_transport(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    @staticmethod
    def _read_until(
        transport: Transport, nonce: str, out: CappedBuffer, deadline: float
    ) -> tuple[str, tuple[int, str] | None]:
        """Read into ``out`` until the end marker (``done``), EOF (``eof``) or the deadline (``timeout``)."""
        opener = f"{nonce}:".encode()
        closer = f":{nonce}\n".encode()
        pending = bytearray()
        while True:
            at = pending.find(opener)
            if at >= 0:
                stop = pending.find(closer, at + len(opener))
                if stop >= 0:
                    out.add(bytes(pending[:at]))
                    code, _, cwd = pending[at + len(opener) : stop].decode(errors="replace").partition(":")
                    status = "exit" if code.startswith("x") else "done"
                    code = code.lstrip("x")
                    return status, (int(code) if code.lstrip("-").isdigit() else -1, cwd)
                if at > 0:
                    out.add(bytes(pending[:at]))
                    del pending[:at]
            else:
                # keep a tail that could be the start of a marker split across reads
                keep = len(opener) - 1
                if len(pending) > keep:
                    out.add(bytes(pending[:-keep] if keep else pending))
                    del pending[: len(pending) - keep]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                out.add(bytes(pending))
                return "timeout", None
            try:
                pending += transport.recv(remaining)
            except EOFError:
                out.add(bytes(pending))
                return "eof", None


class SpareShells:
    """Shells a sandbox opened ahead of use (``Sandbox.warm``), handed out by its ``shell()`` first."""

    def __init__(self, new_shell: Callable[[], PersistentShell]) -> None:
        self._new_shell = new_shell
        self._shells: list[PersistentShell] = []
        self._lock = threading.Lock()

    def open(self, count: int) -> None:
        """Open ``count`` shells now (bash started) and keep them for ``next``."""
        for _ in range(count):
            shell = self._new_shell()
            shell.start()
            with self._lock:
                self._shells.append(shell)

    def next(self) -> PersistentShell:
        """The oldest spare still open (``kill_all`` closes them), else a new shell (started lazily)."""
        with self._lock:
            while self._shells:
                shell = self._shells.pop(0)
                if not shell.closed:
                    return shell
        return self._new_shell()
