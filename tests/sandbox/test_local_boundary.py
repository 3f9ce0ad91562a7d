"""The local sandbox as a boundary, for real: an unprivileged user, our own /etc, a read-only /proc/sys,
bounded disk, host-side file transfer that a racing agent cannot steer, and kill_all."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import time
import uuid
from pathlib import Path

import pytest

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox import SandboxSpec
from agentenvs.sandbox.local import LocalSandbox
from agentenvs.sandbox.local_system import GENERATED, sandbox_ids
from agentenvs.sandbox.pool import WarmPool
from agentenvs.sandbox.procs import proc_stat

#: Host files an agent must never read. Whether the host has them or not, the sandbox must not.
HOST_SECRETS = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/pip.conf",
    "/etc/npmrc",
    "/etc/gitconfig",
    "/etc/docker",
    "/etc/apt",
    "/etc/environment",
    "/etc/machine-id",
    "/etc/subuid",
)


@pytest.fixture(scope="module")
def sandbox():
    sb = LocalSandbox(SandboxSpec(pids=128, memory_mb=512))
    yield sb
    sb.close()


@pytest.fixture
def fresh():
    sb = LocalSandbox(SandboxSpec(pids=64, memory_mb=256, storage_mb=16))
    yield sb
    sb.close()


def _alive(pid: int) -> bool:
    st = proc_stat(pid)
    return st is not None and st[1] not in "ZX"


def _namespace_pids(sb: LocalSandbox) -> list[int]:
    """Host pids of every process in the sandbox's pid namespace."""
    target = os.readlink(f"/proc/{sb._res.holder.init_pid}/ns/pid")
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.readlink(f"/proc/{entry}/ns/pid") == target:
                found.append(int(entry))
        except OSError:
            continue
    return found


def _host_uids(pid: int) -> tuple[int, ...] | None:
    """Real, effective, saved and filesystem uid of a host process; None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            line = next(x for x in f if x.startswith("Uid:"))
    except OSError:
        return None
    return tuple(int(x) for x in line.split()[1:])


def _wait_for(sb: LocalSandbox, command: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while sb.exec(command, timeout=10).exit_code != 0:
        assert time.monotonic() < deadline, f"never true in the sandbox: {command}"
        time.sleep(0.05)


# -- who the agent is -------------------------------------------------------------------------


def test_the_sandbox_root_is_an_unprivileged_host_user(sandbox):
    uid, gid = sandbox_ids()
    assert uid != 0 and gid != 0
    sh = sandbox.shell()
    try:
        assert sh.run("id -u; id -un; sleep 4801 &", 10).stdout == "0\nroot\n"
        sandbox.exec("setsid nohup sleep 4802 >/dev/null 2>&1 &", timeout=10)
        pids = _namespace_pids(sandbox)
        assert len(pids) >= 4  # init, the shell, two sleeps
        assert {_host_uids(p) for p in pids} - {None} == {(uid, uid, uid, uid)}
        sh.run("echo mine > /app/owned.txt", 10)
        st = (sandbox.root / "app" / "owned.txt").stat()
        assert (st.st_uid, st.st_gid) == (uid, gid)
        r = sandbox.exec("unshare --user true 2>&1", timeout=10)  # no nested user namespace to regain caps in
        assert r.exit_code != 0
    finally:
        sh.close()
        sandbox.exec("pkill -f 'sleep 480[12]'", timeout=10)


def test_files_put_from_the_host_belong_to_the_sandbox_root(sandbox, tmp_path):
    sandbox.put(b"from host\n", "/app/put/deep/file.txt")
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (tree / "sub" / "run.sh").chmod(0o750)
    (tree / "link").symlink_to("sub/run.sh")
    sandbox.put(tree, "/tests/tree")
    r = sandbox.exec(
        "echo more >> /app/put/deep/file.txt && chmod 600 /app/put/deep/file.txt && touch /app/put/deep/new && "
        "stat -c '%a %u %F' /app/put/deep/file.txt /tests/tree/sub/run.sh /tests/tree/link && "
        "readlink /tests/tree/link && /tests/tree/link",
        timeout=10,
    )
    assert r.stdout.splitlines() == [
        "600 0 regular file",
        "750 0 regular file",
        "777 0 symbolic link",
        "sub/run.sh",
        "ran",
    ]
    assert sandbox.get("/app/put/deep/file.txt") == b"from host\nmore\n"
    assert sandbox.exec("rm -r /app/put /tests/tree", timeout=10).exit_code == 0


# -- what the agent can see --------------------------------------------------------------------


def test_etc_is_our_own_and_no_host_secret_is_readable(sandbox):
    present = sandbox.exec(
        " ".join(f"test -e {p} && echo {p};" for p in HOST_SECRETS) + " true", timeout=10
    ).stdout.split()
    assert present == []
    assert sandbox.exec("cat /etc/passwd", timeout=10).stdout == GENERATED["passwd"]
    assert sandbox.exec("cat /etc/group", timeout=10).stdout == GENERATED["group"]
    assert sandbox.exec("getent passwd postgres messagebus; hostname; whoami", timeout=10).stdout == "sandbox\nroot\n"
    r = sandbox.exec("touch /etc/x || echo x >> /etc/passwd", timeout=10)
    assert r.exit_code != 0 and "Read-only file system" in r.stderr
    # the host's /etc has accounts ours does not: nothing of it shows through
    host_users = {line.split(":")[0] for line in Path("/etc/passwd").read_text().splitlines()}
    inside = sandbox.exec("cut -d: -f1 /etc/passwd", timeout=10).stdout.split()
    assert set(inside) == {"root", "nobody"} and host_users - set(inside)


def test_proc_sys_is_read_only(sandbox):
    r = sandbox.exec(
        "for f in /proc/sys/kernel/hostname /proc/sys/net/ipv4/ip_forward /proc/sys/vm/drop_caches; do "
        "echo 1 > $f && echo wrote $f; done 2>&1",
        timeout=10,
    )
    assert "wrote" not in r.stdout and r.stdout.count("Read-only file system") == 3
    mounts = sandbox.exec("awk '$2 == \"/proc/sys\" {print $4}' /proc/self/mounts", timeout=10).stdout
    assert mounts.startswith("ro,")
    assert sandbox.exec("cat /proc/sys/kernel/hostname", timeout=10).stdout == "sandbox\n"


def test_git_python_bash_tar_sqlite_and_coreutils_work(sandbox):
    script = (
        "set -e; cd /tmp && rm -rf work && mkdir work && cd work\n"
        "git init -q . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m first\n"
        "echo hello > f.txt && git add f.txt && git -c user.email=a@b -c user.name=a commit -q -m second\n"
        "git log --oneline | wc -l\n"
        "tar czf ../a.tgz f.txt && mkdir out && tar xzf ../a.tgz -C out && cat out/f.txt\n"
        "sqlite3 db.sqlite 'create table t(x); insert into t values (41); select x + 1 from t;'\n"
        "python3 -c 'import json, ssl, sqlite3, hashlib; "
        'print(json.dumps(sqlite3.connect(":memory:").execute("select 7").fetchone()), '
        'ssl.create_default_context().cert_store_stats()["x509_ca"] > 0)\'\n'
        "printf 'b\\na\\n' | sort | sha256sum | cut -c1-16\n"
        "ls -d /usr/bin/awk >/dev/null && awk 'BEGIN {print 6 * 7}'\n"
    )
    r = sandbox.exec(script, timeout=60)
    assert r.exit_code == 0, r.output
    sorted_digest = hashlib.sha256(b"a\nb\n").hexdigest()[:16]
    assert r.stdout.splitlines() == ["2", "hello", "42", "[7] True", sorted_digest, "42"]


# -- disk --------------------------------------------------------------------------------------


def test_writing_past_storage_mb_fails_with_enospc_and_the_sandbox_stays_usable(fresh):
    r = fresh.exec("dd if=/dev/zero of=/app/big bs=1M count=64 2>&1", timeout=60)
    assert r.exit_code != 0 and "No space left on device" in r.stdout
    r = fresh.exec("head -c 10M /dev/zero > /tmp/a && head -c 10M /dev/zero > /dev/shm/b", timeout=60)
    assert r.exit_code != 0 and "No space left on device" in r.stderr  # /tmp and /dev/shm share the bound
    r = fresh.exec("echo x > /dev/x || mkdir /dev/d", timeout=10)  # and /dev holds no files of the agent's
    assert r.exit_code != 0 and "Read-only file system" in r.stderr
    with pytest.raises(OSError) as caught:
        fresh.put(b"x" * (20 << 20), "/app/huge")
    assert caught.value.errno == errno.ENOSPC
    assert (
        fresh.exec("rm -f /app/big /app/huge /tmp/a /dev/shm/b && echo small > /app/small", timeout=10).exit_code == 0
    )
    sh = fresh.shell()
    lines = sh.run("cat /app/small; df -m /app | tail -1 | awk '{print $2}'", 10).stdout.splitlines()
    assert lines[0] == "small" and 12 <= int(lines[1]) <= 16
    sh.close()
    assert fresh.get("/app/small") == b"small\n"


# -- host-side file operations against a racing agent ------------------------------------------

RACER = r"""
import ctypes, os, sys
name = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs(f"/app/d/tmp/{name}", exist_ok=True)
with open(f"/app/d/tmp/{name}/secret.txt", "w") as f:
    f.write("inside")
os.symlink("/", "/app/flip")
open("/app/racer.ready", "w").close()
while True:  # swap the directory and the symlink to / atomically, as fast as we can
    libc.renameat2(-100, b"/app/d", -100, b"/app/flip", 2)
"""


def test_get_and_put_cannot_be_raced_out_of_the_sandbox(sandbox, tmp_path):
    """A process inside flips /app/d between a directory and a symlink to / while the host
    reads and writes through it thousands of times: no host byte is read, nothing outside is written."""
    name = f"agentenvs-race-{uuid.uuid4().hex[:8]}"
    host_dir = Path("/tmp") / name  # what /app/d/tmp/<name> means on the host, were the symlink followed there
    host_dir.mkdir(mode=0o700)
    secret = host_dir / "secret.txt"
    secret.write_text("HOST SECRET")
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "f").write_text("tree file")
    (tree / "ln").symlink_to("/etc/passwd")
    sandbox.put(RACER.encode(), "/tmp/racer.py")
    sandbox.exec(f"setsid nohup python3 /tmp/racer.py {name} >/dev/null 2>&1 &", timeout=10)
    try:
        _wait_for(sandbox, "test -e /app/racer.ready")
        outcomes = {"inside": 0, "missing": 0}
        target = f"/app/d/tmp/{name}"
        for i in range(6000):
            try:
                data = sandbox.get(f"{target}/secret.txt")
            except FileNotFoundError:
                outcomes["missing"] += 1
            else:
                assert data == b"inside", f"read {data!r} through the race"
                outcomes["inside"] += 1
            if i % 3 == 0:
                try:
                    sandbox.put(b"payload", f"{target}/written-{i % 7}.txt")
                except (FileNotFoundError, NotADirectoryError):
                    pass  # the path changed under us: refused, never redirected
            if i % 50 == 0:
                try:
                    sandbox.put(tree, f"{target}/tree-{i % 4}")
                except (FileNotFoundError, NotADirectoryError):
                    pass
        assert outcomes["inside"] > 0 and outcomes["missing"] > 0, outcomes  # the race really ran both ways
        assert sorted(p.name for p in host_dir.iterdir()) == ["secret.txt"]
        assert secret.read_text() == "HOST SECRET"
    finally:
        sandbox.exec("pkill -f 'racer[.]py'; rm -rf /app/d /app/flip /app/racer.ready /tmp/racer.py", timeout=10)
        shutil.rmtree(host_dir, ignore_errors=True)


def test_links_fifos_and_proc_cannot_steer_host_file_operations(sandbox):
    name = f"agentenvs-out-{uuid.uuid4().hex[:8]}"
    sandbox.exec(
        f"mkdir /tmp/{name} && ln -sfn /tmp/{name}/evil /app/out && ln -sfn /proc/self/root /app/proc-root && "
        f"mkfifo /app/fifo && ln -sfn ../../../../.. /app/up",
        timeout=10,
    )
    try:
        sandbox.put(b"lands inside", "/app/out")  # an absolute link resolves in the sandbox's /tmp
        assert not Path(f"/tmp/{name}").exists()
        assert sandbox.exec(f"cat /tmp/{name}/evil", timeout=10).stdout == "lands inside"
        with pytest.raises(FileNotFoundError):
            sandbox.get("/app/proc-root/etc/passwd")  # no /proc beneath the sandbox's files
        with pytest.raises(FileNotFoundError):
            sandbox.get("/app/up/etc/shadow")  # '..' stops at the sandbox's root
        start = time.monotonic()
        with pytest.raises(OSError, match="FIFO|regular file"):
            sandbox.put(b"x", "/app/fifo")  # would block forever on a plain open
        with pytest.raises(OSError, match="regular file"):
            sandbox.get("/app/fifo")
        assert time.monotonic() - start < 30
        with pytest.raises(SandboxError, match="outside"):
            sandbox.put(b"x", "/etc/cron.d/evil")
    finally:
        sandbox.exec(f"rm -rf /app/out /app/proc-root /app/fifo /app/up /tmp/{name}", timeout=10)


# -- nothing survives ----------------------------------------------------------------------------

DAEMON = (
    "(setsid bash -c 'trap \"\" TERM INT HUP; while :; do echo beat >> /app/beat; sleep 0.02; done' "
    ">/dev/null 2>&1 &) &"
)


def _still_writing(sb: LocalSandbox, path: str, wait: float = 0.5) -> bool:
    before = sb.get(path)
    time.sleep(wait)
    return sb.get(path) != before


def test_kill_all_ends_daemons_jobs_and_shells_and_the_sandbox_works_after(fresh):
    sh = fresh.shell()
    sh.run("trap '' TERM INT HUP; sleep 4803 & echo kept > /app/kept", 10)
    fresh.exec(DAEMON, timeout=10)
    _wait_for(fresh, "test -s /app/beat")
    assert _still_writing(fresh, "/app/beat")
    before = _namespace_pids(fresh)
    old_holder = fresh._res.holder
    assert len(before) >= 4  # init, the shell, its sleep, the daemon (and the daemon's sleep, at times)
    fresh.kill_all()
    assert not [p for p in before if _alive(p)]
    assert not _still_writing(fresh, "/app/beat")
    with pytest.raises(SandboxError, match="closed"):
        sh.run("echo hi", 10)
    again = fresh.shell()
    assert again.run("cat /app/kept; pgrep -c -f 'sleep 480[3]|bea[t]' || true", 10).stdout == "kept\n0\n"
    assert fresh._res.holder is not old_holder and not old_holder.alive()  # new namespaces
    assert fresh.exec("echo fresh", timeout=10).stdout == "fresh\n"
    again.close()


def test_restore_ends_a_daemon_that_ignores_signals(fresh):
    ref = fresh.snapshot()
    fresh.exec(DAEMON, timeout=10)
    _wait_for(fresh, "test -s /app/beat")
    fresh.restore(ref)
    time.sleep(0.5)
    with pytest.raises(FileNotFoundError):
        fresh.get("/app/beat")  # restored away, and nothing is left to write it again


def test_snapshot_does_not_stop_the_sandbox(fresh):
    fresh.exec(DAEMON, timeout=10)
    _wait_for(fresh, "test -s /app/beat")
    ref = fresh.snapshot()  # the processes are frozen for the copy, then thawed
    assert _still_writing(fresh, "/app/beat")
    fresh.restore(ref)
    assert fresh.get("/app/beat").startswith(b"beat\n")


def test_a_pool_never_hands_out_a_sandbox_twice_and_released_processes_die():
    spec = SandboxSpec(pids=64, memory_mb=256)
    with WarmPool(size=1) as pool:
        first = pool.acquire("local", spec)
        first.exec(DAEMON, timeout=10)
        _wait_for(first, "test -s /app/beat")
        pids = _namespace_pids(first)
        pool.release(first)
        second = pool.acquire("local", spec)
        assert second is not first and second.root != first.root
        with pytest.raises(FileNotFoundError):
            second.get("/app/beat")
        deadline = time.monotonic() + 30
        while [p for p in pids if _alive(p)] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in pids if _alive(p)]
        pool.release(second)


def test_the_swe_editor_turns_what_the_agent_did_to_a_file_into_an_action_error(fresh):
    from agentenvs.core.errors import ActionError
    from agentenvs.envs.swe.editor import Editor

    editor = Editor(fresh, "/app")
    fresh.exec("mkfifo /app/fifo && ln -s loop /app/loop && ln -s /tmp/x.py /app/out.py", timeout=10)
    for path in ("fifo", "loop"):
        with pytest.raises(ActionError, match="cannot read"):
            editor.run({"command": "view", "path": path})
    assert editor.run({"command": "create", "path": "out.py", "file_text": "x = 1\n"}).startswith("Created")
    assert fresh.exec("cat /tmp/x.py", timeout=10).stdout == "x = 1\n"  # through the link, inside the sandbox
    fresh.exec("head -c 15M /dev/zero > /tmp/fill", timeout=30)
    with pytest.raises(ActionError, match="could not write"):
        editor.run({"command": "create", "path": "big.py", "file_text": "y" * (4 << 20)})
    fresh.exec("rm /tmp/fill", timeout=10)
    assert "x = 1" in editor.run({"command": "view", "path": "out.py"})


@pytest.mark.parametrize("pool_size", [0, 1])
def test_nothing_an_agent_starts_carries_over_to_the_next_episode(pool_size):
    import agentenvs

    env = agentenvs.make("terminal/log-error-summary", backend="local", pool_size=pool_size)
    try:
        env.reset(seed=0)
        env.step(DAEMON.replace("/app/beat", "/tmp/beat"))
        first = env.unwrapped.sandbox
        _wait_for(first, "test -s /tmp/beat")
        pids = _namespace_pids(first)
        env.reset(seed=0)
        assert env.unwrapped.sandbox is not first
        deadline = time.monotonic() + 30
        while [p for p in pids if _alive(p)] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in pids if _alive(p)]
        obs, _, _, _, _ = env.step("ls /tmp/beat; pgrep -c -f 'bea[t]'")
        assert "No such file" in obs["text"] and obs["text"].rstrip().endswith("0")
    finally:
        env.close()


def _memory_cgroup(pid: int) -> str:
    with open(f"/proc/{pid}/cgroup") as f:
        return next(line.rstrip().split(":", 2)[2] for line in f if ":memory:" in line)


def test_files_beyond_memory_mb_and_a_memory_hog_leave_the_sandbox_whole():
    """Disk is not memory, and the OOM killer takes the agent's processes, never the holder."""
    with LocalSandbox(SandboxSpec(pids=64, memory_mb=96, storage_mb=512)) as sb:
        if sb._res.cgroups is None:
            pytest.skip("cgroups are not writable here")
        holder = sb._res.holder
        sh = sb.shell()
        assert sh.run("head -c 200M /dev/zero > /app/big && stat -c %s /app/big", 60).stdout == f"{200 << 20}\n"
        # memory no process owns: a SysV segment left in the sandbox's IPC namespace
        pin = "import ctypes; c = ctypes.CDLL(None); c.shmat.restype = ctypes.c_void_p; "
        pin += "a = c.shmat(c.shmget(0, 70 << 20, 0o1600), None, 0); ctypes.memset(a, 1, 70 << 20)"
        assert sh.run(f"python3 -c '{pin}' && ipcs -m | grep -c ' 600 '", 60).stdout == "1\n"
        r = sh.run("python3 -c 'x = bytearray(300 << 20)'; echo rc=$?", 60)
        assert r.stdout.rstrip().endswith("rc=137")  # SIGKILLed by the memory cgroup
        assert sb._res.holder is holder and holder.alive()
        shell = next(p for p in _namespace_pids(sb) if p != holder.init_pid)
        in_sandbox = _memory_cgroup(shell)
        assert _memory_cgroup(holder.init_pid) != in_sandbox and _memory_cgroup(holder.pid) != in_sandbox
        assert in_sandbox.endswith(f"/agentenvs/{os.getpid()}-{sb.id}")
        sb.kill_all()
        assert sb.exec("ipcs -m | grep -c ' 600 ' || true", timeout=30).stdout == "0\n"  # gone with the namespaces
