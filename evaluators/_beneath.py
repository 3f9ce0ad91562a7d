"""Open a path as if a directory were ``/``: symlinks and ``..`` never leave it.

``openat2(2)`` with ``RESOLVE_IN_ROOT`` makes the kernel resolve every
component (absolute symlinks included) beneath the given directory, in one
atomic lookup, so a process that swaps a component for a symlink between our
check and our open cannot send us outside. Standard library only: the
evaluators (shipped into sandboxes) and the host-side sandbox code share it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

#: openat2's syscall number is the same on every architecture that has it (Linux >= 5.6).
SYS_OPENAT2 = 437
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_IN_ROOT = 0x10

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def openat2(dir_fd: int, path: str, flags: int, mode: int = 0, resolve: int = 0) -> int:
    """The raw ``openat2`` call; raises ``OSError`` with the kernel's errno."""
    how = struct.pack("QQQ", flags, mode, resolve)
    encoded = os.fsencode(path)
    if b"\x00" in encoded:
        raise OSError(errno.EINVAL, "path contains a NUL byte", path)
    fd = _libc.syscall(SYS_OPENAT2, dir_fd, encoded, how, len(how))
    if fd < 0:
        err = ctypes.get_errno()
        if err == errno.ENOSYS:
            raise OSError(err, f"openat2 is not available on this kernel ({platform.release()}); Linux 5.6+ is needed")
        raise OSError(err, os.strerror(err), path)
    return int(fd)


def open_beneath(root_fd: int, path: str, flags: int, mode: int = 0o644) -> int:
    """Open ``path`` (absolute or relative, as seen from inside) beneath the directory ``root_fd``.

    Absolute symlinks resolve against ``root_fd`` and ``..`` stops at it, as
    they would for a process chrooted there; magic links (``/proc/*/fd``) are
    refused. ``flags`` are ``os.O_*`` flags; ``O_CLOEXEC`` is always added.
    """
    relative = path.lstrip("/") or "."
    # openat2 refuses a mode unless the call may create the file. O_TMPFILE contains the
    # O_DIRECTORY bit, so test for all of its bits: a plain O_DIRECTORY open takes no mode.
    creates = flags & os.O_CREAT or flags & os.O_TMPFILE == os.O_TMPFILE
    mode = mode if creates else 0
    return openat2(root_fd, relative, flags | os.O_CLOEXEC, mode, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
