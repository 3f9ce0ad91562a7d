"""The local backend for real: bubblewrap, cgroups, processes, files and snapshots."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox import Sandbox, SandboxSpec, Shell, create_sandbox
from agentenvs.sandbox.local import LocalSandbox
from agentenvs.sandbox.local_resources import sweep_local_sandboxes
from agentenvs.sandbox.procs import proc_stat

REPO = Path(__file__).resolve().parents[2]
BOMB = ":(){ :|:& };:"


def _alive(pid: int) -> bool:
    st = proc_stat(pid)
    return st is not None and st[1] not in "ZX"


@pytest.fixture(scope="module")
def sandbox():
    sb = LocalSandbox(SandboxSpec(pids=128, memory_mb=512))
    yield sb
    sb.close()


@pytest.fixture
def sandbox_parent():
    """A directory for AGENTENVS_SANDBOX_DIR the sandbox user can pass through (pytest's tmp_path is 0700)."""
    import shutil
    import tempfile

    parent = Path(tempfile.mkdtemp(prefix="agentenvs-test-", dir="/tmp"))
    parent.chmod(0o755)
    yield parent
    sweep_local_sandboxes(parent)
    shutil.rmtree(parent, ignore_errors=True)
    shutil.rmtree(parent.with_name(parent.name + ".system"), ignore_errors=True)


@pytest.fixture
def fresh():
    sb = LocalSandbox(SandboxSpec(pids=64, memory_mb=256))
    yield sb
    sb.close()


def test_implements_the_protocols_and_reports_capabilities(sandbox):
    assert isinstance(sandbox, Sandbox)
    assert isinstance(sandbox.shell(), Shell)
    caps = sandbox.capabilities
    assert caps.backend == "local" and caps.isolated_network and caps.isolated_filesystem and caps.snapshot
    assert caps.resource_limits == (sandbox._res.cgroups is not None)


def test_exec_separates_stdout_stderr_and_exit_code(sandbox):
    r = sandbox.exec("echo out; echo err >&2; exit 5", timeout=10)
    assert (r.stdout, r.stderr, r.exit_code, r.timed_out) == ("out\n", "err\n", 5, False)
    assert sandbox.exec(["pwd"], timeout=10).stdout == "/app\n"
    assert sandbox.exec("pwd", timeout=10, cwd="/tmp").stdout == "/tmp\n"
    assert sandbox.exec("echo $X", timeout=10, env={"X": "given"}).stdout == "given\n"


def test_exec_timeout_kills_the_whole_tree(sandbox):
    start = time.monotonic()
    r = sandbox.exec("sleep 100 & sleep 100; echo never", timeout=1)
    assert r.timed_out and r.exit_code == -1 and "never" not in r.stdout
    assert time.monotonic() - start < 10
    assert sandbox.exec(["pgrep", "-f", "sleep 100"], timeout=10).exit_code == 1


def test_exec_timeout_also_kills_orphans_the_command_left(sandbox):
    r = sandbox.exec("(sleep 4711 &); sleep 100", timeout=1)
    assert r.timed_out
    assert sandbox.exec(["pgrep", "-f", "sleep 4711"], timeout=10).exit_code == 1


def test_exec_returns_when_the_command_exits_even_if_a_background_job_keeps_stdout(sandbox):
    r = sandbox.exec("sleep 4712 & echo started", timeout=20)
    assert (r.stdout, r.exit_code, r.timed_out) == ("started\n", 0, False)
    assert sandbox.exec(["pgrep", "-f", "sleep 4712"], timeout=10).exit_code == 0  # it lives on, as in docker
    sandbox.exec("pkill -f 'sleep 4712'", timeout=10)


def test_commands_run_without_capabilities(sandbox):
    status = sandbox.exec("grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status", timeout=10).stdout
    assert status.split() == [
        "CapPrm:",
        "0" * 16,
        "CapEff:",
        "0" * 16,
        "CapBnd:",
        "0" * 16,
        "CapAmb:",
        "0" * 16,
        "NoNewPrivs:",
        "1",
    ]
    sh = sandbox.shell()
    r = sh.run("mount -t tmpfs none /tmp 2>&1; hostname sandbox2 2>&1; hostname", 10)
    assert r.stdout.rstrip().endswith("sandbox") and "ermission denied" in r.stdout
    sh.close()


def test_a_server_started_in_the_shell_is_seen_by_exec(sandbox):
    sh = sandbox.shell()
    try:
        r = sh.run("cd /tmp && python3 -m http.server 18080 --bind 127.0.0.1 >/dev/null 2>&1 & echo $!", 10)
        assert r.exit_code == 0
        probe = (
            "import socket, sys, time\n"
            "for _ in range(100):\n"
            "    try:\n"
            "        socket.create_connection(('127.0.0.1', 18080), 1).close(); sys.exit(0)\n"
            "    except OSError:\n"
            "        time.sleep(0.1)\n"
            "sys.exit(1)\n"
        )
        assert sandbox.exec(["python3", "-c", probe], timeout=30).exit_code == 0
        listening = sandbox.exec("awk '$4 == \"0A\" {print $2}' /proc/net/tcp", timeout=10).stdout.split()
        assert f"0100007F:{18080:04X}" in listening  # 127.0.0.1:18080, as the kernel writes it
        page = sandbox.exec(
            "python3 -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:18080/\", timeout=5).status)'",
            timeout=20,
        )
        assert page.stdout == "200\n"
    finally:
        sh.close()


def test_a_process_of_one_shell_is_visible_and_killable_from_others(sandbox):
    one, two = sandbox.shell(), sandbox.shell()
    try:
        pid = one.run("sleep 4713 & echo $!", 10).stdout.strip()
        deadline = time.monotonic() + 10
        # until the background child has exec'd sleep, its command line is still its shell's (a loaded machine)
        while (
            found := sandbox.exec(["pgrep", "-f", "sleep 4713"], timeout=10)
        ).exit_code and time.monotonic() < deadline:
            time.sleep(0.05)
        assert found.exit_code == 0 and found.stdout.split() == [pid]
        assert two.run(f"kill {pid} && echo killed", 10).stdout == "killed\n"
        assert one.run(f"wait {pid}; echo $?", 10).stdout.endswith("Terminated              sleep 4713\n143\n")
        assert sandbox.exec(["pgrep", "-f", "sleep 4713"], timeout=10).exit_code == 1
        assert sandbox.exec("echo $$", timeout=10).stdout.strip() != "1"  # init is the holder's, not ours
    finally:
        one.close()
        two.close()


def test_repository_and_host_dirs_are_invisible(sandbox):
    for path in ("/work", str(REPO), str(REPO / "tasks"), "/home", "/root/.pyenv"):
        r = sandbox.exec(f"ls {path}", timeout=10)
        assert r.exit_code != 0, f"{path} is visible inside the sandbox: {r.stdout}"
    assert sandbox.exec("touch /usr/x || touch /etc/x || touch /newdir", timeout=10).exit_code != 0
    r = sandbox.exec("python3 -c 'import sys; print(sys.executable)'", timeout=20)
    assert r.stdout.strip() == "/usr/bin/python3"


def test_evaluators_are_mounted_read_only(sandbox):
    if not (REPO / "evaluators" / "__init__.py").is_file():
        pytest.skip("no evaluators package in this checkout")
    assert sandbox.exec("test -f /opt/agentenvs/evaluators/__init__.py", timeout=10).exit_code == 0
    assert sandbox.exec("touch /opt/agentenvs/evaluators/x", timeout=10).exit_code != 0


def test_network_is_unreachable_even_on_loopback(sandbox):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        r = sandbox.exec(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected", timeout=10)
        assert r.exit_code != 0 and "connected" not in r.stdout
        sh = sandbox.shell()
        r = sh.run(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected", 10)
        sh.close()
        assert r.exit_code != 0 and "connected" not in r.stdout
        interfaces = sandbox.exec("tail -n +3 /proc/net/dev | cut -d: -f1", timeout=10).stdout.split()
        assert interfaces == ["lo"]
    finally:
        server.close()


def test_shell_in_the_sandbox_keeps_state_and_survives_timeout(sandbox):
    sh = sandbox.shell()
    sh.run("mkdir -p /app/w && cd /app/w && export KEPT=yes", 10)
    r = sh.run("sleep 1000", 1)
    assert r.timed_out
    assert sh.run("pwd; echo $KEPT", 10).stdout == "/app/w\nyes\n"
    sh.close()


def test_put_get_round_trip_and_path_checks(sandbox, tmp_path):
    sandbox.put(b"bytes\n", "/app/sub/b.txt")
    assert sandbox.get("/app/sub/b.txt") == b"bytes\n"
    assert sandbox.get("sub/b.txt") == b"bytes\n"  # relative to the workdir
    tree = tmp_path / "tree"
    (tree / "inner").mkdir(parents=True)
    (tree / "inner" / "f.sh").write_text("#!/bin/sh\necho run\n")
    (tree / "inner" / "f.sh").chmod(0o755)
    sandbox.put(tree, "/tests/tree")
    assert sandbox.exec("/tests/tree/inner/f.sh", timeout=10).stdout == "run\n"
    sandbox.exec("echo made inside > /logs/out.txt", timeout=10)
    assert sandbox.get("/logs/out.txt") == b"made inside\n"
    with pytest.raises(SandboxError, match="outside the sandbox's writable directories"):
        sandbox.put(b"x", "/etc/evil")
    with pytest.raises(SandboxError, match="outside"):
        sandbox.get("/app/../etc/passwd")
    with pytest.raises(FileNotFoundError):
        sandbox.get("/app/missing")
    with pytest.raises(IsADirectoryError):
        sandbox.get("/app/sub")


def test_symlinks_are_followed_inside_the_sandbox_not_on_the_host(sandbox):
    sandbox.exec("ln -sf /etc/hostname /app/link-out && ln -sf /tmp/target /app/link-in", timeout=10)
    with pytest.raises(FileNotFoundError):  # the kernel resolves it beneath the sandbox's files: no /etc there
        sandbox.get("/app/link-out")
    sandbox.put(b"through the link", "/app/link-in")
    assert sandbox.exec("cat /tmp/target", timeout=10).stdout == "through the link"


def test_snapshot_restore_brings_back_files_and_restarts_shells(sandbox):
    sandbox.put(b"original", "/app/state.txt")
    ref = sandbox.snapshot()
    sh = sandbox.shell()
    sh.run("echo changed > /app/state.txt; touch /app/new.txt; cd /tmp", 10)
    sandbox.restore(ref)
    assert sandbox.get("/app/state.txt") == b"original"
    r = sh.run("cat /app/state.txt; ls /app/new.txt; pwd", 10)
    assert r.stdout.startswith("original") and r.stdout.endswith("/app\n")
    with pytest.raises(SandboxError, match="unknown snapshot"):
        sandbox.restore("nope")
    sh.close()


def test_fork_bomb_is_bounded_killable_and_the_sandbox_recovers(fresh):
    cgroups = fresh._res.cgroups
    if cgroups is None:
        pytest.skip("cgroups are not writable here")
    sh = fresh.shell()
    sh.run(BOMB, 3)
    time.sleep(0.5)
    assert cgroups.pids_current() <= 64
    sh.run("ls / > /dev/null", 3)  # may time out while the bomb holds every pid; then the shell restarts
    r = sh.run("ls / > /dev/null && echo alive", 10)
    assert r.exit_code == 0 and r.stdout.endswith("alive\n")
    r = fresh.exec(BOMB + "; sleep 5", timeout=3)
    assert r.timed_out
    assert fresh.exec("echo still fine", timeout=10).stdout == "still fine\n"


def test_close_leaves_no_processes_cgroups_or_dirs():
    sb = LocalSandbox(SandboxSpec(pids=64))
    sh = sb.shell()
    sh.run("sleep 300 & sleep 301 &", 10)
    sb.exec("setsid nohup sleep 302 >/dev/null 2>&1 &", timeout=10)
    holder = sb._res.holder
    pids = [holder.pid, holder.init_pid, *_sandbox_pids(sb)]
    cgroup_dirs = list(sb._res.cgroups.paths.values()) if sb._res.cgroups else []
    home = sb.home
    assert home.exists() and len(set(pids)) >= 5  # holder's bwrap and init, the shell, three sleeps
    assert _mounted(sb.root)  # the sandbox's own filesystem
    sb.close()
    sb.close()
    assert not home.exists() and not _mounted(sb.root)
    assert not [p for p in pids if _alive(p)]
    assert not [d for d in cgroup_dirs if d.exists()]
    with pytest.raises(SandboxError, match="closed"):
        sb.exec("true")


def _mounted(path: Path) -> bool:
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == str(path) for line in f)


def _sandbox_pids(sb: LocalSandbox) -> list[int]:
    """Host pids of the processes in the sandbox's pid namespace (from /proc, cgroups or not)."""
    import os

    target = os.readlink(f"/proc/{sb._res.holder.init_pid}/ns/pid")
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.readlink(f"/proc/{entry}/ns/pid") == target:
                found.append(int(entry))
        except OSError:
            continue
    return found


def test_restore_ends_every_process_and_starts_new_namespaces(fresh):
    sh = fresh.shell()
    ref = fresh.snapshot()
    sh.run("sleep 4714 &", 10)
    fresh.exec("setsid nohup sleep 4715 >/dev/null 2>&1 &", timeout=10)
    before = _sandbox_pids(fresh)
    fresh.restore(ref)
    assert not [p for p in before if _alive(p)]
    assert fresh.exec("pgrep -f 'sleep 471[45]'", timeout=10).exit_code == 1
    sh.run("echo after > /app/after.txt", 10)
    assert fresh.get("/app/after.txt") == b"after\n"  # the new holder mounts the restored root
    sh.close()


def test_kill_all_inside_spares_the_namespaces_and_a_dead_holder_is_replaced(fresh):
    import os
    import signal

    sh = fresh.shell()
    sh.run("export MARK=1", 10)
    fresh.exec("kill -9 -1; kill -9 1", timeout=10)  # pid 1 is the holder's init: signals from inside miss it
    holder = fresh._res.holder
    assert holder.alive()
    r = _after_the_shell_died(sh)
    assert "shell restarted" in r and r.endswith("gone\n")
    sh.run("export MARK=2", 10)
    os.kill(holder.init_pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while holder.alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fresh.exec("echo back", timeout=10).stdout == "back\n"
    assert fresh._res.holder is not holder and not holder.alive()
    r = _after_the_shell_died(sh)
    assert "shell restarted" in r and r.endswith("gone\n")
    sh.close()


def _after_the_shell_died(sh) -> str:
    """The output of ``echo ${MARK:-gone}`` once the shell has noticed it died (a first try may meet its EOF)."""
    first = sh.run("echo ${MARK:-gone}", 10).stdout
    return first if first.endswith("gone\n") else first + sh.run("echo ${MARK:-gone}", 10).stdout


def test_a_killed_owner_takes_every_sandbox_process_with_it(sandbox_parent):
    import os
    import signal
    import subprocess
    import sys

    script = (
        "import os, sys, time\n"
        "from agentenvs.sandbox import SandboxSpec\n"
        "from agentenvs.sandbox.local import LocalSandbox\n"
        "sb = LocalSandbox(SandboxSpec(pids=64))\n"
        "sb.shell().run('sleep 4716 &', 10)\n"
        "sb.exec('setsid nohup sleep 4717 >/dev/null 2>&1 &', timeout=10)\n"
        "h = sb._res.holder\n"
        "print(h.pid, h.init_pid, sb.home, flush=True)\n"
        "time.sleep(300)\n"
    )
    env = {**os.environ, "AGENTENVS_SANDBOX_DIR": str(sandbox_parent)}
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        holder, init, home = owner.stdout.readline().split()
        inside = [p for p in map(int, (holder, init)) if _alive(p)]
        assert len(inside) == 2
        ns = os.readlink(f"/proc/{init}/ns/pid")
        members = [int(e) for e in os.listdir("/proc") if e.isdigit() and _ns_of(e) == ns]
        assert len(members) >= 4  # init, the shell, the shell's sleep, exec's sleep
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
        owner.stdout.close()
    deadline = time.monotonic() + 10
    while [p for p in [*inside, *members] if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in [*inside, *members] if _alive(p)]
    assert _mounted(Path(home) / "root")
    assert sweep_local_sandboxes(sandbox_parent) == 1 and not Path(home).exists()
    assert not _mounted(Path(home) / "root")


def _ns_of(pid: str) -> str | None:
    import os

    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def test_sweep_removes_sandboxes_of_dead_owners(tmp_path):
    import json
    import subprocess

    from agentenvs.sandbox.cgroups import Cgroups, CgroupsUnavailable

    dead = subprocess.Popen(["true"])
    dead.wait()
    home = tmp_path / f"{dead.pid}-leftover"
    home.mkdir()
    try:
        groups = Cgroups.create(f"sweeptest-{dead.pid}", pids=8, memory_mb=64, cpus=1)
        paths = {k: str(v) for k, v in groups.paths.items()}
        proc = subprocess.Popen([*groups.join_prefix(), "sleep", "300"])
        deadline = time.monotonic() + 5
        while proc.pid not in groups.pids() and time.monotonic() < deadline:
            time.sleep(0.01)
    except CgroupsUnavailable:
        paths, proc = {}, None
    (home / "meta.json").write_text(json.dumps({"pid": dead.pid, "start_time": "0", "cgroups": paths}))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "meta.json").write_text(
        json.dumps({"pid": __import__("os").getpid(), "start_time": _own_start(), "cgroups": {}})
    )
    assert sweep_local_sandboxes(tmp_path) == 1
    assert not home.exists() and mine.exists()
    if proc is not None:
        assert proc.wait(timeout=10) == -9
        assert not [p for p in paths.values() if Path(p).exists()]


def _own_start() -> str:
    from agentenvs.sandbox.procs import proc_start_time as _start_time

    return _start_time(__import__("os").getpid())


def test_bad_workdir_and_user_get_clear_errors(sandbox):
    with pytest.raises(SandboxError, match="workdir"):
        LocalSandbox(SandboxSpec(workdir="/usr/app"))
    with pytest.raises(SandboxError, match="root only"):
        sandbox.exec("true", user="nobody")
    with pytest.raises(ValueError, match="unknown sandbox backend"):
        create_sandbox("nope")
