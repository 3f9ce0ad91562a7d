from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from evaluators import ArgumentError
from evaluators.procs import command_exit, port_listening, process_running


def test_command_exit_codes_and_stdout():
    assert command_exit("exit 0")["passed"]
    assert command_exit("exit 3", exit_code=3)["passed"]
    failed = command_exit("echo oops >&2; exit 1")
    assert not failed["passed"] and "oops" in failed["detail"]
    assert command_exit("echo hello world", stdout_contains="lo wo")["passed"]
    assert not command_exit("echo hello", stdout_contains="bye")["passed"]
    assert command_exit("printf 'a\\nb\\n'", stdout_equals="a\nb")["passed"]
    assert command_exit(["cat"], stdin="piped", stdout_equals="piped")["passed"]


def test_command_exit_cwd_missing_program_and_timeout(tmp_path):
    assert command_exit("pwd", cwd=str(tmp_path), stdout_equals=str(tmp_path))["passed"]
    assert not command_exit("pwd", cwd=str(tmp_path / "nope"))["passed"]
    assert "cannot run" in command_exit(["/no/such/program"])["detail"]
    result = command_exit("sleep 30 & sleep 30", timeout=0.5)
    assert not result["passed"] and "timed out" in result["detail"]


def test_command_exit_bad_args():
    for bad in (
        {"command": []},
        {"command": 5},
        {"command": "true", "timeout": 0},
        {"command": "true", "exit_code": "0"},
    ):
        with pytest.raises(ArgumentError):
            command_exit(**bad)


def test_process_running_finds_a_real_process_but_not_itself():
    marker = f"marker-{uuid.uuid4().hex}"
    assert not process_running(marker)["passed"], "the checker must not match its own command line"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
    try:
        deadline = time.monotonic() + 10
        while marker.encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)  # the child is still between fork and exec
        result = process_running(marker)
        assert result["passed"] and str(proc.pid) in result["detail"]
        assert not process_running(marker, min_count=2)["passed"]
    finally:
        proc.kill()
        proc.wait()
    assert not process_running(marker)["passed"]
    with pytest.raises(ArgumentError):
        process_running("(")


def test_port_listening_on_a_real_socket():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        assert not port_listening(port)["passed"], "bound but not listening"
        sock.listen()
        assert port_listening(port)["passed"]
        assert port_listening(port, host="127.0.0.1")["passed"]
        assert not port_listening(port, host="10.1.2.3")["passed"]
    assert not port_listening(port)["passed"]
    with pytest.raises(ArgumentError):
        port_listening(70000)


def test_port_listening_ipv6_wildcard():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        sock.bind(("::", 0))
    except OSError:
        pytest.skip("cannot bind IPv6")
    with sock:
        sock.listen()
        assert port_listening(sock.getsockname()[1])["passed"]


def _alive(marker: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line holds ``marker``."""
    pids = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state not in "ZX":
            pids.append(int(entry))
    return pids


def test_command_exit_kills_the_daemons_its_command_leaves():
    marker = f"daemon-{uuid.uuid4().hex}"
    daemon = f"exec -a {marker} sleep 300"
    res = command_exit(
        f"(setsid bash -c '{daemon}' </dev/null >/dev/null 2>&1 &); bash -c '{daemon}' >/dev/null 2>&1 &"
    )
    assert res["passed"] and "killed 2 process(es)" in res["detail"], res
    assert _alive(marker) == [], "a double-forked, setsid daemon did not outlive the check"


def test_command_exit_returns_when_a_daemon_holds_its_output_open():
    marker = f"holder-{uuid.uuid4().hex}"
    res = command_exit(f"(setsid bash -c 'exec -a {marker} sleep 300' &); exit 0", timeout=2)
    assert not res["passed"] and "holding its output open" in res["detail"], res
    assert _alive(marker) == []


def test_command_exit_spares_the_callers_own_children():
    marker = f"mine-{uuid.uuid4().hex}"
    mine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
    try:
        assert command_exit("sleep 0.1 & true")["passed"]
        assert mine.poll() is None, "a process the caller started before the check is not the command's"
    finally:
        mine.kill()
        mine.wait()
