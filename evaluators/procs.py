"""Live checks on running things: commands, processes, listening ports (read from /proc).

They need the agent's processes and network namespace, so they are registered
``live`` and refuse to run against a state root (see ``_registry.check``).
"""

from __future__ import annotations

import os
import re
import signal

from evaluators._registry import ArgumentError, Result, check, require, result

MAX_OUTPUT = 1 << 20


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
    its own process group, which is killed on timeout.
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
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
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
    if problems:
        return result(False, "; ".join(problems))
    return result(True, f"exit code {proc.returncode}")


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
