"""Live checks on running things: commands, processes, listening ports (read from /proc).

They need the agent's processes and network namespace, so they are registered
``live`` and refuse to run against a state root (see ``_registry.check``).
"""

from __future__ import annotations

import os
import re
import signal
import time

from evaluators._registry import ArgumentError, Result, check, require, result

MAX_OUTPUT = 1 << 20
PR_SET_CHILD_SUBREAPER = 36


def _set_subreaper(on: bool) -> bool:
    """Make orphaned descendants reparent to this process (not to init), so none can slip away."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0


def _descendants(root: int) -> dict[int, tuple[int, str]]:
    """Every descendant of ``root``: pid -> (parent pid, state letter), read from /proc."""
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append((int(entry), fields[0]))
    found: dict[int, tuple[int, str]] = {}
    todo = [root]
    while todo:
        parent = todo.pop()
        for pid, state in children.get(parent, ()):
            if pid not in found:
                found[pid] = (parent, state)
                todo.append(pid)
    return found


class _Reaper:
    """While open, this process is a subreaper; ``kill(spare)`` kills every process started since it
    opened (double-forked daemons included) except ``spare``, and reaps them.

    Closing kills again, so a command leaves nothing behind: no daemon of the agent's code, run
    by a verifier, outlives the check to rewrite what the verifier writes afterwards.
    """

    def __init__(self, grace: float = 5.0) -> None:
        self.grace = grace
        self.spare = 0

    def __enter__(self) -> _Reaper:
        self.me = os.getpid()
        self.subreaper = _set_subreaper(True)
        self.before = set(_descendants(self.me))
        return self

    def kill(self, spare: int) -> int:
        """Kill and reap everything new but ``spare`` (the command itself, which its caller waits for)."""
        self.spare = spare
        killed: set[int] = set()
        deadline = time.monotonic() + self.grace
        while True:
            tree = {p: info for p, info in _descendants(self.me).items() if p not in self.before and p != spare}
            for pid, (parent, state) in tree.items():
                if parent == self.me and state == "Z":
                    os.waitpid(pid, os.WNOHANG)
            live = {pid for pid, (_, state) in tree.items() if state not in "ZX"}
            if not live or time.monotonic() > deadline:
                return len(killed)
            for pid in live:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            killed |= live
            time.sleep(0.005)

    def __exit__(self, *exc: object) -> None:
        self.kill(self.spare)
        if self.subreaper:
            _set_subreaper(False)


@check("command_exit", live=True)
def command_exit(
    command: str | list[str],
    exit_code: int = 0,
    timeout: float = 30.0,
    stdout_contains: str | None = None,
    stdout_equals: str | None = None,
    cwd: str | None = None,
    stdin: str | None = None,
) -> Result:
    """Run a command and compare its exit code (and optionally its stdout).

    A string runs under ``bash -c``; a list runs as argv. The command gets
    its own process group, which is killed on timeout; whatever it started
    and left running (daemons included) is killed when it ends.
    """
    import subprocess  # here, not at the top: every check run pays start-up, few need it

    if isinstance(command, str):
        argv = ["bash", "-c", command]
    elif isinstance(command, list) and command and all(isinstance(a, str) for a in command):
        argv = command
    else:
        raise ArgumentError("command must be a string or a non-empty list of strings")
    require(exit_code, int, "exit_code")
    require(timeout, (int, float), "timeout")
    if timeout <= 0:
        raise ArgumentError("timeout must be > 0 seconds")
    for name, value in (("stdout_contains", stdout_contains), ("stdout_equals", stdout_equals), ("stdin", stdin)):
        if value is not None:
            require(value, str, name)
    if cwd is not None and not os.path.isdir(require(cwd, str, "cwd")):
        return result(False, f"cwd {cwd}: not a directory")
    with _Reaper() as reaper:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return result(False, f"cannot run {argv[0]}: {exc.strerror}")
        try:
            out, err = proc.communicate(stdin.encode() if stdin is not None else None, timeout=timeout)
            leftovers = reaper.kill(proc.pid)
        except subprocess.TimeoutExpired:
            exited = proc.poll()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            reaper.kill(proc.pid)  # a daemon holding the output pipes open would block the next read forever
            proc.communicate()
            if exited is not None:
                return result(False, f"exited {exited} but left a process holding its output open for {timeout}s")
            return result(False, f"timed out after {timeout}s")
    stdout = out[:MAX_OUTPUT].decode("utf-8", errors="replace")
    stderr_tail = err[-300:].decode("utf-8", errors="replace").strip()
    problems = []
    if proc.returncode != exit_code:
        problems.append(
            f"exit code {proc.returncode}, expected {exit_code}" + (f" (stderr: {stderr_tail})" if stderr_tail else "")
        )
    if stdout_contains is not None and stdout_contains not in stdout:
        problems.append(f"stdout lacks {stdout_contains!r}")
    if stdout_equals is not None and stdout.strip() != stdout_equals.strip():
        problems.append(f"stdout is {stdout.strip()[:100]!r}, expected {stdout_equals.strip()[:100]!r}")
    left = f"; killed {leftovers} process(es) it left running" if leftovers else ""
    if problems:
        return result(False, "; ".join(problems) + left)
    return result(True, f"exit code {proc.returncode}{left}")


def _ancestors() -> set[int]:
    """This process and its ancestors, whose command lines hold the pattern itself."""
    pids, pid = set(), os.getpid()
    while pid > 0 and pid not in pids:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
                ppid = next((int(line.split()[1]) for line in fh if line.startswith("PPid:")), 0)
        except (OSError, ValueError):
            break
        pid = ppid
    return pids


def _proc_state(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


@check("process_running", live=True)
def process_running(pattern: str, min_count: int = 1) -> Result:
    """At least ``min_count`` live processes have a command line matching ``pattern``.

    The command line is argv joined with spaces; zombies, this checker and
    its ancestors (whose command lines contain the pattern) are skipped.
    """
    require(pattern, str, "pattern")
    require(min_count, int, "min_count")
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ArgumentError(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
    skip = _ancestors()
    matches = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in skip:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        cmdline = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", errors="replace")
        if cmdline and regex.search(cmdline) and _proc_state(entry) not in ("Z", "X", "?"):
            matches.append(f"{entry}: {cmdline[:80]}")
    ok = len(matches) >= min_count
    detail = f"{len(matches)} process(es) match {pattern!r}"
    return result(ok, detail + (": " + "; ".join(matches[:5]) if matches else ""))


def listening_ports() -> set[tuple[str, int]]:
    """(address, port) pairs in TCP LISTEN state, from /proc/net/tcp and tcp6."""
    found: set[tuple[str, int]] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                lines = fh.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 4 or fields[3] != "0A":
                continue
            addr_hex, port_hex = fields[1].rsplit(":", 1)
            found.add((_address(addr_hex), int(port_hex, 16)))
    return found


def _address(hex_addr: str) -> str:
    if len(hex_addr) == 8:
        return ".".join(str(b) for b in bytes.fromhex(hex_addr)[::-1])
    words = [bytes.fromhex(hex_addr[i : i + 8])[::-1].hex() for i in range(0, 32, 8)]
    full = "".join(words)
    if full.startswith("00000000000000000000ffff"):
        return ".".join(str(b) for b in bytes.fromhex(full[24:]))
    return ":".join(full[i : i + 4] for i in range(0, 32, 4))


_ANY = {"0.0.0.0", "0000:0000:0000:0000:0000:0000:0000:0000"}


@check("port_listening", live=True)
def port_listening(port: int, host: str | None = None) -> Result:
    """A TCP socket listens on ``port`` (on ``host``, or a wildcard address, if given)."""
    require(port, int, "port")
    if not 0 < port < 65536:
        raise ArgumentError(f"port must be within 1-65535, got {port}")
    if host is not None:
        require(host, str, "host")
    addrs = sorted(a for a, p in listening_ports() if p == port)
    if not addrs:
        return result(False, f"nothing listens on TCP port {port}")
    if host is not None and host not in addrs and not _ANY.intersection(addrs):
        return result(False, f"port {port} listens on {', '.join(addrs)}, not {host}")
    return result(True, f"TCP port {port} listening on {', '.join(addrs)}")
