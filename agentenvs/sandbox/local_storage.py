"""A local sandbox's files live on a tmpfs of their own: a hard bound on its disk use.

The host mounts a tmpfs of ``storage_mb`` at the sandbox's root (``nosuid``,
``nodev``, a bounded number of inodes) and bubblewrap binds its directories
into the sandbox. A write past the size fails with ENOSPC inside the sandbox;
nothing has to watch. The mount is the host's, not the sandbox's, so files
survive a restart of the sandbox's namespaces (``kill_all``), and ``restore``
swaps in a fresh tmpfs. Pages the sandbox writes are charged to its memory
cgroup as well, so its files also count against ``memory_mb``.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import subprocess
from pathlib import Path

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.local_system import SANDBOX_USER

MS_NOSUID = 0x2
MS_NODEV = 0x4
MNT_DETACH = 0x2
UMOUNT_NOFOLLOW = 0x8
#: Inodes per MiB of storage: enough for source trees of small files, and a bound on their kernel memory.
INODES_PER_MB = 64
MIN_INODES = 16384

_libc = ctypes.CDLL(None, use_errno=True)
_reachable: set[Path] = set()


def mount_tmpfs(target: Path, size_mb: int) -> None:
    """Mount a fresh tmpfs of ``size_mb`` MiB at ``target`` (an existing directory), root-owned, mode 755."""
    inodes = max(size_mb * INODES_PER_MB, MIN_INODES)
    options = f"size={size_mb}m,nr_inodes={inodes},mode=0755,uid=0,gid=0"
    if _libc.mount(b"agentenvs", os.fsencode(target), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()) != 0:
        err = ctypes.get_errno()
        raise SandboxError(
            f"cannot mount the sandbox's {size_mb} MiB tmpfs at {target}: {os.strerror(err)} "
            "(the local backend needs root with CAP_SYS_ADMIN; use the docker backend otherwise)"
        )


def unmount(target: Path) -> bool:
    """Detach whatever is mounted at ``target`` (its memory is freed once nothing uses it); False if nothing was."""
    if _libc.umount2(os.fsencode(target), MNT_DETACH | UMOUNT_NOFOLLOW) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOENT):
        return False
    raise OSError(err, f"cannot unmount {target}: {os.strerror(err)}")


def copy_tree(src: Path, dest: Path) -> None:
    """``cp -a`` of ``src``'s content into ``dest`` (made if missing), with reflinks where the filesystem has them.

    cp -a copies symlinks as symlinks; callers copy a sandbox's files only while
    none of its processes can run (frozen, killed, or not started yet).
    """
    done = subprocess.run(
        ["cp", "-a", "--reflink=auto", "-T", "--", str(src), str(dest)], capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise SandboxError(f"copying {src} to {dest} failed: {done.stderr.strip()[-500:]}")


def check_reachable(parent: Path) -> None:
    """The sandbox user must pass through ``parent`` (bubblewrap binds from it), and nobody else may write it."""
    if parent in _reachable:
        return
    for path in (parent, *parent.parents):
        st = os.stat(path)
        if not st.st_mode & stat.S_IXOTH:
            raise SandboxError(
                f"{path} is not searchable by others (mode {stat.filemode(st.st_mode)}), so the sandbox user "
                f"{SANDBOX_USER} cannot reach {parent}: chmod o+x it, or set AGENTENVS_SANDBOX_DIR elsewhere"
            )
    st = os.stat(parent)
    if st.st_uid != 0 or st.st_mode & 0o022:
        raise SandboxError(f"{parent} must be owned by root and writable by root only (AGENTENVS_SANDBOX_DIR)")
    _reachable.add(parent)
