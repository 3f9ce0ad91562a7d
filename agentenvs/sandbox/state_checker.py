"""Dense checks outside the agent's reach: a checker process on the host reading the sandbox's files as data.

Inside a sandbox the agent owns every process and, on docker, every program:
it can replace ``python3``, ptrace the checker, or write into its output
stream. So checks that only read state (files, JSON, CSV, SQLite, test
reports) run here instead: one long-lived Python per sandbox, started from
the host's own read-only interpreter in a bubblewrap of its own (no network,
no capabilities, its own pid namespace, which the agent cannot see into),
with the sandbox's filesystem mounted read-only at ``/agent``. The evaluators
resolve every path beneath that root (``AGENTENVS_STATE_ROOT``, openat2's
``RESOLVE_IN_ROOT``), so no symlink the agent plants leads anywhere else.
Checks that need the agent's live processes or network (``evaluators.is_live``)
still run in the sandbox.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.checks import EVALUATORS_MOUNT, EVALUATORS_ROOT, EVALUATORS_SOURCE
from agentenvs.sandbox.procs import kill_tree, wait_gone

STATE_MOUNT = "/agent"
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/etc")
_SERVE = (
    f"import sys, json; sys.path.insert(0, {EVALUATORS_ROOT!r}); from evaluators import run_batch\n"
    "for line in sys.stdin:\n"
    "    try:\n"
    "        out = run_batch(json.loads(line))\n"
    "    except Exception as exc:\n"
    "        out = {'error': f'{type(exc).__name__}: {exc}'}\n"
    "    sys.stdout.write(json.dumps(out) + '\\n')\n"
    "    sys.stdout.flush()\n"
)
MAX_REPLY = 16 << 20


class StateChecker:
    """A checker bound to one state root.

    ``identity`` is an argv prefix that runs bubblewrap as the unprivileged
    host user the sandbox maps to root (then the checker maps it to root too,
    so owners read as the agent sees them); without one the checker runs as
    host root with no capability but reading files (the docker case, whose
    files belong to the host's root). ``etc`` replaces the host's /etc.
    """

    def __init__(
        self,
        state_root: Path,
        *,
        identity: Sequence[str] = (),
        etc: Path | None = None,
        evaluators: Path = EVALUATORS_SOURCE,
    ):
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxError("checks outside the sandbox need bubblewrap: apt-get install bubblewrap")
        self.state_root = Path(state_root)
        argv = [*identity, bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        argv += ["--die-with-parent", "--new-session"]
        if identity:
            argv += ["--unshare-user", "--uid", "0", "--gid", "0", "--cap-drop", "ALL"]
        else:
            argv += ["--cap-drop", "ALL", "--cap-add", "CAP_DAC_READ_SEARCH"]
        for d in _SYSTEM:
            if d == "/etc" and etc is not None:
                argv += ["--ro-bind", str(etc), "/etc"]
            elif os.path.islink(d):
                argv += ["--symlink", os.readlink(d), d]
            elif os.path.isdir(d):
                argv += ["--ro-bind", d, d]
        argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        argv += ["--ro-bind", str(self.state_root), STATE_MOUNT, "--ro-bind", str(evaluators), EVALUATORS_MOUNT]
        argv += ["--remount-ro", "/", "--chdir", "/", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]
        argv += ["--setenv", "LANG", "C.UTF-8", "--setenv", "AGENTENVS_STATE_ROOT", STATE_MOUNT]
        argv += ["--", "/usr/bin/python3", "-I", "-S", "-c", _SERVE]
        self._argv = argv
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._closed = False

    def start(self) -> None:
        """Start the checker now, without waiting for it: its interpreter then loads while the caller
        does other work (opening shells, running the live checks), off a reset's critical path."""
        with self._lock:
            if not self._closed:
                self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
                start_new_session=True,
            )
        return self._proc

    def run(self, specs: list[dict[str, Any]], timeout: float = 30.0) -> list[dict[str, Any]] | str:
        """Results for ``specs``, or a string saying why the checker gave none (then it is restarted)."""
        with self._lock:
            if self._closed:
                return "the sandbox was closed before its checks ran"
            proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(json.dumps(specs).encode() + b"\n")
                proc.stdin.flush()
            except OSError as exc:
                self._stop()
                return f"the checker could not take the checks: {exc}"
            line = _read_line(proc.stdout.fileno(), timeout)
            if line is None:
                self._stop()
                return f"the checks took longer than {timeout:g}s"
            try:
                reply = json.loads(line)
            except ValueError:
                self._stop()
                return f"the checker answered garbage: {line[:200]!r}"
            if isinstance(reply, dict):
                return str(reply.get("error", "the checker failed"))
            return reply

    def _stop(self) -> None:
        """Kill the checker and wait until its bubblewrap's init and interpreter are gone too (they
        die of the parent's death signal, but later than the parent: a close returned before them)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            victims = kill_tree(proc.pid)
            proc.wait(timeout=10)
            wait_gone(victims[1:], 5.0)

    def close(self) -> None:
        """Stop the process for good: a caller still holding this checker cannot start another."""
        with self._lock:
            self._closed = True
            self._stop()


class CheckerSlot:
    """A sandbox's one checker, bound to what it reads (a root, a container).

    A checker asked for while another thread closes the sandbox is closed with
    it: one made after ``release`` would outlive the sandbox (found as an
    orphaned bubblewrap, minutes after its sandbox's directory was removed).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checker: StateChecker | None = None
        self._key: Hashable = None
        self._released = False

    def get(self, key: Hashable, make: Callable[[], StateChecker]) -> StateChecker:
        """The checker for ``key``, made by ``make`` when there is none or it reads something else."""
        with self._lock:
            if self._released:
                raise SandboxError("the sandbox is closed: its files can no longer be checked")
            if self._checker is None or self._key != key:
                self._close()
                self._checker, self._key = make(), key
            return self._checker

    def close(self) -> None:
        """Close the current checker (what it reads is about to go); the next ``get`` makes another."""
        with self._lock:
            self._close()

    def release(self) -> None:
        """Close the checker, and refuse to make another."""
        with self._lock:
            self._released = True
            self._close()

    def _close(self) -> None:
        checker, self._checker = self._checker, None
        if checker is not None:
            checker.close()


def _read_line(fd: int, timeout: float) -> bytes | None:
    """One newline-terminated reply from ``fd`` within ``timeout``, or None."""
    deadline = time.monotonic() + timeout
    buf = bytearray()
    while len(buf) <= MAX_REPLY:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            return None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return None
        buf += chunk
        if buf.endswith(b"\n"):
            return bytes(buf)
    return None
