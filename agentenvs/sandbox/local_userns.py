"""A user namespace with a container's uids, for a local sandbox with several users (a desktop).

bubblewrap maps one uid: the sandbox user, as root. A desktop needs more (root, the desktop's
user, the agent's code runner, each its own uid, with ``sudo`` between them), so such a sandbox's
namespace is made here and bubblewrap joins it (``--userns``): ``unshare --user`` runs as the
sandbox user, so that user owns the namespace and bubblewrap, run as it, may enter it; this
process, root on the host, writes its maps (only a privileged writer may map more than its own
id), and a process entering it as its root (the maker lost its capabilities when it started its shell
unmapped) caps ``user.max_user_namespaces`` at 0 there, so nothing in it makes a nested one
(bubblewrap's ``--disable-userns``).

Inside, uid and gid 0 are the sandbox user; 1 to 65535 are host ids from :data:`MAPPED_BASE` on,
which no account of the host uses. Nothing mapped is privileged on the host.
"""

from __future__ import annotations

import os
import select
import subprocess
from pathlib import Path

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.holder import HOST_ENV, become, host_tool

#: Host id of the sandbox's uid (and gid) 1; the sandbox's ``n`` is ``MAPPED_BASE + n - 1``.
MAPPED_BASE = (1 << 30) + 1
MAPPED_COUNT = 65535
_CAP = "echo 0 > /proc/sys/user/max_user_namespaces"


def host_ids(uid: int, gid: int, owner: tuple[int, int]) -> tuple[int, int]:
    """The host's uid and gid of the sandbox's ``uid`` and ``gid`` (``owner`` is the sandbox user's)."""

    def one(inner: int, root: int) -> int:
        if not 0 <= inner <= MAPPED_COUNT:
            raise ValueError(f"id {inner} is not mapped in a local sandbox (0-{MAPPED_COUNT})")
        return root if inner == 0 else MAPPED_BASE + inner - 1

    return one(uid, owner[0]), one(gid, owner[1])


def user_namespace(owner: tuple[int, int], timeout: float = 15.0) -> int:
    """A new user namespace owned by ``owner`` with the map above: an fd open on it (the caller closes it)."""
    uid, gid = owner
    argv = [*become(owner), "--", host_tool("unshare", "util-linux"), "--user"]
    proc = subprocess.Popen(
        [*argv, "/bin/sh", "-c", "echo made; read -r _"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=HOST_ENV,
    )
    try:
        _expect(proc, timeout)
        for kind, root in (("uid", uid), ("gid", gid)):
            with open(f"/proc/{proc.pid}/{kind}_map", "w") as out:
                out.write(f"0 {root} 1\n1 {MAPPED_BASE} {MAPPED_COUNT}\n")
        enter = [host_tool("nsenter", "util-linux"), f"--target={proc.pid}", "--user", "--", "/bin/sh", "-c", _CAP]
        capped = subprocess.run(enter, capture_output=True, text=True, timeout=timeout, env=HOST_ENV)
        if capped.returncode != 0:
            raise SandboxError(f"could not cap the sandbox's user namespaces: {capped.stderr.strip()[-300:]}")
        return os.open(f"/proc/{proc.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _expect(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Until the maker says it is in its new namespace."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if (os.read(proc.stdout.fileno(), 64) if ready else b"").strip() != b"made":
        detail = ""
        if proc.poll() is not None and proc.stderr is not None:
            detail = proc.stderr.read().decode(errors="replace").strip()[-300:]
        raise SandboxError(f"could not make the sandbox's user namespace: {detail or 'no answer'}")


#: The image's directories whose set-user-ID programs work in a sandbox with several users.
SETUID_DIRS = ("/usr", "/bin", "/sbin", "/opt")


def allow_setuid(init_pid: int, system: Path, timeout: float = 15.0) -> None:
    """Clear the ``nosuid`` bubblewrap puts on every bind, on the image's program directories.

    Done by this process (root on the host) with the host's ``mount`` in the sandbox's mount
    namespace: nothing in the sandbox gets the capability to remount, and no program of the
    sandbox runs with it. Set-user-ID root there is the sandbox's root, an unprivileged host user.
    """
    mount = host_tool("mount", "mount")
    for d in SETUID_DIRS:
        if not (system / d.lstrip("/")).is_dir() or (system / d.lstrip("/")).is_symlink():
            continue
        argv = [mount, "-N", f"/proc/{init_pid}/ns/mnt", "-o", "remount,bind,suid,nodev", d]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=HOST_ENV)
        if done.returncode != 0:
            raise SandboxError(f"could not allow set-user-ID programs in {d}: {done.stderr.strip()[-300:]}")


def image_accounts(passwd: Path) -> dict[str, tuple[int, int]]:
    """``name -> (uid, gid)`` from an image's /etc/passwd (a missing one has only root)."""
    accounts = {"root": (0, 0)}
    try:
        lines = passwd.read_text(errors="replace").splitlines()
    except OSError:
        return accounts
    for line in lines:
        fields = line.split(":")
        if len(fields) >= 4 and fields[2].isdigit() and fields[3].isdigit():
            accounts.setdefault(fields[0], (int(fields[2]), int(fields[3])))
    return accounts
