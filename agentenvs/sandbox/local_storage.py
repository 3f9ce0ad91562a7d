"""A local sandbox's files live on a filesystem of their own: a hard bound on its disk use.

Each sandbox gets an ext4 image of ``storage_mb`` (a sparse copy of a blank
image made once per size with ``mkfs.ext4``), loop-mounted by the host at the
sandbox's root (``nosuid``, ``nodev``); bubblewrap binds its directories into
the sandbox. A write past the size fails with ENOSPC inside the sandbox, and
the number of inodes is bounded with it; nothing has to watch. The mount is
the host's, not the sandbox's, so files survive a restart of the sandbox's
namespaces (``kill_all``); ``restore`` empties it and copies the snapshot in.
Unlike a tmpfs, the files are not memory: page cache is reclaimable, so
filling the disk never makes the memory cgroup's OOM killer take the sandbox
apart.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import stat
import subprocess
import threading
import uuid
from pathlib import Path

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.local_system import SANDBOX_USER, system_dir

MNT_DETACH = 0x2
UMOUNT_NOFOLLOW = 0x8
#: The filesystem needs some room of its own; smaller images are refused.
MIN_STORAGE_MB = 8
_PATH = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}

_libc = ctypes.CDLL(None, use_errno=True)
_lock = threading.Lock()
_blanks: dict[int, Path] = {}
_reachable: set[Path] = set()


def mount_storage(target: Path, image: Path, size_mb: int) -> None:
    """Make ``image`` a fresh ext4 of ``size_mb`` MiB and loop-mount it at ``target`` (an existing directory)."""
    _sparse_copy(_blank(size_mb), image)
    _run(
        ["mount", "-o", "loop,nosuid,nodev", "--", str(image), str(target)], f"mounting the sandbox's files at {target}"
    )


def _sparse_copy(source: Path, dest: Path) -> None:
    """Copy the data of ``source`` and leave its holes as holes (a blank image is ~2 MB of 4 GiB)."""
    with open(source, "rb") as src, open(dest, "wb") as out:
        fin, fout = src.fileno(), out.fileno()
        size = os.fstat(fin).st_size
        out.truncate(size)
        offset = 0
        while offset < size:
            try:
                start = os.lseek(fin, offset, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # nothing but a hole from here on
                    break
                raise
            offset = os.lseek(fin, start, os.SEEK_HOLE)
            while start < offset:
                start += os.copy_file_range(fin, fout, offset - start, start, start)
    os.chmod(dest, 0o600)


def empty_tree(root: Path) -> None:
    """Remove everything under ``root`` but ``root`` itself (a mount point); symlinks are removed, never followed."""
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def _blank(size_mb: int) -> Path:
    """An empty ext4 image of ``size_mb`` MiB (sparse, about 2 MB on disk), made once per size and kept."""
    if size_mb < MIN_STORAGE_MB:
        raise SandboxError(f"storage_mb must be at least {MIN_STORAGE_MB} (got {size_mb})")
    with _lock:
        blank = _blanks.get(size_mb)
        if blank is not None and blank.is_file():
            return blank
        blank = system_dir() / f"blank-{size_mb}m.ext4"
        if not blank.is_file():
            system_dir().mkdir(parents=True, exist_ok=True)
            staging = blank.with_name(f".{blank.name}.{uuid.uuid4().hex}")
            try:
                with open(staging, "wb") as f:
                    f.truncate(size_mb << 20)
                _run(
                    ["mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", "-L", "agentenvs"]
                    + ["-E", "lazy_itable_init=1,nodiscard,root_owner=0:0", str(staging)],
                    f"making a {size_mb} MiB filesystem",
                )
                staging.chmod(0o600)
                staging.rename(blank)
            finally:
                staging.unlink(missing_ok=True)
        _blanks[size_mb] = blank
        return blank


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=_PATH)
    if done.returncode != 0:
        raise SandboxError(
            f"{what} failed: {done.stderr.strip()[-300:]} (the local backend needs root, loop devices "
            "and e2fsprogs; use the docker backend otherwise)"
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
