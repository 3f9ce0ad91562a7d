"""Where checkers read state: the agent's filesystem, as the agent sees it.

With ``AGENTENVS_STATE_ROOT`` set to a directory (the agent's filesystem
mounted read-only for a trusted checker outside the sandbox), every path a
checker is given is an in-sandbox path, resolved beneath that directory with
``openat2(RESOLVE_IN_ROOT)``: absolute symlinks resolve against the root,
``..`` stops at it, magic links are refused, and the lookup is one atomic
kernel call, so an agent swapping components for symlinks cannot send a read
outside. Unset (or ``/``), paths resolve as usual inside the sandbox.

Either way a path is first opened ``O_PATH`` (which never opens the file
itself) and its type checked on that descriptor; only a regular file is then
reopened for reading through ``/proc/self/fd/N``, which reaches exactly the
inode that was checked. So no checker blocks on a fifo, touches a device, or
reads something other than what it inspected; reads are bounded. This module
is the only place checkers turn a path into something they can read: a
library that wants a file name (SQLite) gets a private copy (``copy_out``).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import BinaryIO

from evaluators._beneath import open_beneath
from evaluators._registry import ArgumentError

STATE_ROOT_ENV = "AGENTENVS_STATE_ROOT"
#: A file a checker reads whole (text, JSON, CSV, XML, passwd) is never larger than this.
MAX_READ_BYTES = 64 * 1024 * 1024
_PROC_FD = "/proc/self/fd"
_FD_PATH = re.compile(r"/proc/self/fd/\d+")


class SetupError(RuntimeError):
    """The checker's own setup is broken (an unusable state root, no ``/proc``): not the agent's failure."""


class NotRegular(OSError):
    """The path exists but is not a regular file (a directory, fifo, device, socket)."""


class TooLarge(OSError):
    """The file is larger than a checker reads."""


def state_root() -> str | None:
    """The state root's host path, or ``None`` when paths resolve as usual."""
    value = os.environ.get(STATE_ROOT_ENV, "")
    if not value or value.strip("/") == "":
        return None
    if not os.path.isabs(value):
        raise SetupError(f"{STATE_ROOT_ENV} must be an absolute path, got {value!r}")
    return value


def _open_root(root: str) -> int:
    """An ``O_PATH`` descriptor of the root, opened afresh for every lookup (a root may be remounted)."""
    try:
        return os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise SetupError(f"{STATE_ROOT_ENV}={root!r} is not a usable directory: {exc.strerror}") from None


def open_state(path: str, flags: int) -> int:
    """A descriptor for the in-sandbox ``path`` (``os.O_*`` flags; ``O_CLOEXEC`` added).

    Beneath the state root when one is set, where a relative path is an
    ``ArgumentError`` (there is no in-sandbox working directory to resolve
    it against); else an ordinary ``open``.
    """
    if "\x00" in path:
        raise OSError(errno.EINVAL, "path contains a NUL byte")
    root = state_root()
    if root is None:
        return os.open(path, flags | os.O_CLOEXEC)
    if not path.startswith("/"):
        raise ArgumentError(f"path {path!r} must be absolute when checking a state root")
    root_fd = _open_root(root)
    try:
        return open_beneath(root_fd, path, flags)
    finally:
        os.close(root_fd)


@contextmanager
def state_fd(path: str, flags: int = os.O_PATH) -> Iterator[int]:
    """``open_state`` as a context manager that closes the descriptor."""
    fd = open_state(path, flags)
    try:
        yield fd
    finally:
        os.close(fd)


def stat_state(path: str, follow: bool = True) -> os.stat_result:
    """``os.stat`` (or ``os.lstat`` with ``follow=False``) of the in-sandbox ``path``."""
    with state_fd(path, os.O_PATH | (0 if follow else os.O_NOFOLLOW)) as fd:
        return os.fstat(fd)


def lexists(path: str) -> bool:
    """Whether anything (a dangling link included) is at ``path``; ``OSError`` when that cannot be told.

    Only "no such entry" and "a parent is not a directory" mean absent: a
    symlink loop or a refused magic link in a parent is an error, so an
    agent cannot make a file look absent by breaking the way to it.
    """
    try:
        stat_state(path, follow=False)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def kind(st: os.stat_result) -> str:
    """What a non-regular entry is, for messages."""
    mode = st.st_mode
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a fifo"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def _reopen(fd: int) -> BinaryIO:
    """Reopen a regular file's ``O_PATH`` descriptor for reading (the same inode, never a fifo)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegular(errno.EINVAL, f"{kind(st)}, not a regular file")
    try:
        reopened = os.open(f"{_PROC_FD}/{fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise SetupError(f"{_PROC_FD} is missing: the checkers need /proc mounted") from None
    return os.fdopen(reopened, "rb")


def open_regular(path: str) -> BinaryIO:
    """The regular file at ``path`` (final symlink followed) opened for binary reading; ``NotRegular`` else."""
    with state_fd(path) as fd:
        return _reopen(fd)


def open_entry(dir_fd: int, name: str) -> BinaryIO:
    """Like ``open_regular`` for one entry of a directory descriptor, never following a link."""
    fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        return _reopen(fd)
    finally:
        os.close(fd)


def read_limited(fh: BinaryIO, limit: int) -> bytes:
    """At most ``limit`` bytes of ``fh``; ``TooLarge`` if there are more (the file may grow meanwhile)."""
    data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(errno.EFBIG, f"larger than {limit} bytes")
    return data


def read_bytes(path: str, limit: int = MAX_READ_BYTES) -> bytes:
    """The whole content of the regular file at ``path``, at most ``limit`` bytes."""
    with open_regular(path) as fh:
        if os.fstat(fh.fileno()).st_size > limit:
            raise TooLarge(errno.EFBIG, f"larger than {limit} bytes")
        return read_limited(fh, limit)


def listdir(path: str) -> list[str]:
    """The names in the directory at ``path`` (final symlink followed, beneath the root)."""
    with state_fd(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK) as fd:
        return os.listdir(fd)


def walk(path: str, keep: Callable[[str], bool], max_entries: int) -> Iterator[tuple[str, os.stat_result, int, str]]:
    """Every entry under the directory ``path``: ``(relative path, lstat, dir_fd, name)``.

    Top-down: a directory's entries in sorted order, then each subdirectory
    in turn (the order of ``os.walk`` with sorted names). ``keep`` filters
    relative paths (a dropped directory is not entered). Directories are
    entered by descriptor with ``O_NOFOLLOW``, so a directory swapped for a
    symlink mid-walk is an error, never a way out. ``dir_fd`` is valid until
    the next item; ``OSError`` if the tree changes under the walk.
    """
    count = [0]
    with state_fd(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK) as top:
        yield from _walk(top, "", keep, max_entries, count, path)


def _walk(
    dir_fd: int, rel_dir: str, keep: Callable[[str], bool], max_entries: int, count: list[int], top: str
) -> Iterator[tuple[str, os.stat_result, int, str]]:
    subdirs = []
    for name in sorted(n for n in os.listdir(dir_fd) if keep(rel_dir + n)):
        count[0] += 1
        if count[0] > max_entries:
            raise OSError(errno.EFBIG, f"more than {max_entries} entries under {top}")
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        yield rel_dir + name, st, dir_fd, name
        if stat.S_ISDIR(st.st_mode):
            subdirs.append(name)
    for name in subdirs:
        sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            yield from _walk(sub, f"{rel_dir}{name}/", keep, max_entries, count, top)
        finally:
            os.close(sub)


def copy_out(path: str, dest: str, limit: int) -> bool:
    """Copy the regular file at ``path`` to the host path ``dest``; ``False`` if nothing is there.

    At most ``limit`` bytes (``TooLarge`` beyond); used to give a library
    that opens files by name (SQLite, with its journals) a private copy.
    """
    try:
        src = open_regular(path)
    except FileNotFoundError:
        return False
    with src, open(dest, "xb") as out:
        copied = 0
        for block in iter(lambda: src.read(1 << 20), b""):
            copied += len(block)
            if copied > limit:
                raise TooLarge(errno.EFBIG, f"larger than {limit} bytes")
            out.write(block)
    return True


def account_ids(table: str) -> dict[str, int] | None:
    """``name -> id`` from the state root's ``/etc/passwd`` or ``/etc/group``; ``None`` without a state root.

    The first entry of a name wins, as with ``getpwnam``. A missing or
    unreadable file gives no names, so only numeric ids match.
    """
    if state_root() is None:
        return None
    try:
        text = read_bytes(f"/etc/{table}", 16 * 1024 * 1024).decode("utf-8", errors="replace")
    except OSError:
        return {}
    ids: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 3 and fields[0] and fields[2].isdigit():
            ids.setdefault(fields[0], int(fields[2]))
    return ids


def describe(exc: OSError) -> str:
    """An ``OSError`` for a message: its reason, never the name it was raised for."""
    return exc.strerror or str(exc)


def scrub(text: str) -> str:
    """Replace host-side names (the state root, ``/proc/self/fd/N``) in a message with in-sandbox ones."""
    root = state_root()
    if root is not None:
        base = root.rstrip("/")
        text = text.replace(base + "/", "/").replace(base, "/")
    return _FD_PATH.sub("<state>", text)
