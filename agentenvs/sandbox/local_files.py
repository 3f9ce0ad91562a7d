"""Files into and out of a local sandbox from the host, immune to symlink and rename races.

The agent changes its files while we work on them: it can turn a directory
into a symlink to ``/`` between our check and our open. So no path is ever
resolved in userspace. Each one is opened with ``openat2`` and
``RESOLVE_IN_ROOT`` (:func:`evaluators._beneath.open_beneath`) beneath a
descriptor of the sandbox's root: the kernel resolves it in one step, as the
sandbox would see it, and ``..`` or an absolute symlink stops at the root.
Every descriptor is then checked to be on the sandbox's own filesystem (see
:mod:`agentenvs.sandbox.local_storage`). Parents are made with ``mkdirat`` in a directory opened that way,
symlinks of a put directory with ``symlinkat``, and what we create is owned
by the sandbox's user, so its root can change it. Writes never block on a
FIFO and reads take regular files only.

A path the host asks for must lie, as written, in one of the sandbox's
writable directories; where a symlink in it then leads is the kernel's
business, and it cannot lead out.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from pathlib import Path

from agentenvs.core.errors import SandboxError
from evaluators._beneath import open_beneath

#: openat2 asks for a retry (EAGAIN) when a rename raced with a ``..`` it resolved.
_RETRIES = 1000
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_NOCTTY


class SandboxFiles:
    """get/put beneath ``root`` (a directory of the host), for paths in ``writable``, relative ones to ``workdir``."""

    def __init__(self, root: Path, *, writable: tuple[str, ...], workdir: str, owner: tuple[int, int]):
        self.writable = writable
        self.workdir = workdir
        self.uid, self.gid = owner
        self._root = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self._dev = os.fstat(self._root).st_dev

    def close(self) -> None:
        if self._root >= 0:
            os.close(self._root)
            self._root = -1

    def resolve(self, path: str) -> str:
        """The absolute in-sandbox path for ``path``; SandboxError if it names no writable directory."""
        full = posixpath.normpath(posixpath.join(self.workdir, path))
        full = "/" + full.lstrip("/")  # normpath keeps a leading "//"
        if not any(full == d or full.startswith(d + "/") for d in self.writable):
            raise SandboxError(
                f"{path!r} is outside the sandbox's writable directories "
                f"{', '.join(self.writable)}; put and get only reach those"
            )
        return full

    # -- reading --------------------------------------------------------------

    def read(self, path: str) -> bytes:
        """The bytes of the regular file at ``path``, following symlinks inside the sandbox only."""
        fd = self._open(self.resolve(path), _READ, what=path)
        try:
            kind = os.fstat(fd).st_mode
            if stat.S_ISDIR(kind):
                raise IsADirectoryError(
                    errno.EISDIR, f"not a regular file in the sandbox: {path} (use exec with tar for directories)"
                )
            if not stat.S_ISREG(kind):
                raise OSError(errno.EINVAL, f"not a regular file in the sandbox: {path}")
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    # -- writing --------------------------------------------------------------

    def write(self, path: str, data: bytes, mode: int | None = None) -> None:
        """Create or replace the file at ``path`` (parents made as needed) with ``data``."""
        full = self.resolve(path)
        os.close(self.makedirs(posixpath.dirname(full)))
        fd = self._open(full, _WRITE, 0o644, what=path)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, f"put: {path!r} is not a regular file in the sandbox")
            if (st.st_uid, st.st_gid) != (self.uid, self.gid):
                os.fchown(fd, self.uid, self.gid)
            os.set_blocking(fd, True)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.fchmod(fd, mode & 0o7777)
        finally:
            os.close(fd)

    def put_tree(self, source: Path, dest: str) -> None:
        """Copy the host directory ``source`` to ``dest``: files with their modes, directories, symlinks as symlinks."""
        top = self.resolve(dest)
        for here, dirs, files in os.walk(source):
            rel = os.path.relpath(here, source)
            base = top if rel == "." else posixpath.join(top, rel)
            fd = self.makedirs(base)
            try:
                os.fchmod(fd, os.stat(here).st_mode & 0o7777)
                for name in dirs + files:
                    item = os.path.join(here, name)
                    if os.path.islink(item):
                        self._symlink(fd, name, os.readlink(item))
                    elif name in files:
                        with open(item, "rb") as f:
                            data = f.read()
                        self.write(posixpath.join(base, name), data, mode=os.stat(item).st_mode)
            finally:
                os.close(fd)

    def makedirs(self, path: str) -> int:
        """Make the directory ``path`` and its missing parents; returns an open descriptor of it."""
        try:
            return self._open(path, os.O_RDONLY | os.O_DIRECTORY, what=path)
        except FileNotFoundError:
            if path == "/":
                raise
        parent = self.makedirs(posixpath.dirname(path))
        try:
            name = posixpath.basename(path)
            try:
                os.mkdir(name, 0o755, dir_fd=parent)
                made = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
                try:
                    os.fchown(made, self.uid, self.gid)
                finally:
                    os.close(made)
            except FileExistsError:
                pass  # made meanwhile (by the sandbox, say): open it as it now is
        finally:
            os.close(parent)
        try:
            return self._open(path, os.O_RDONLY | os.O_DIRECTORY, what=path)
        except FileNotFoundError:
            raise NotADirectoryError(errno.ENOTDIR, f"put: {path!r} is not a directory in the sandbox") from None

    def _symlink(self, dir_fd: int, name: str, target: str) -> None:
        try:
            os.symlink(target, name, dir_fd=dir_fd)
        except FileExistsError:
            os.unlink(name, dir_fd=dir_fd)
            os.symlink(target, name, dir_fd=dir_fd)
        os.chown(name, self.uid, self.gid, dir_fd=dir_fd, follow_symlinks=False)

    # -- the one way in -------------------------------------------------------

    def _open(self, path: str, flags: int, mode: int = 0, *, what: str) -> int:
        """``open_beneath`` the root, retried while renames race with it, checked to be on the sandbox's filesystem."""
        if self._root < 0:
            raise SandboxError("the sandbox's files are closed")
        for _ in range(_RETRIES):
            try:
                fd = open_beneath(self._root, path, flags, mode)
                break
            except BlockingIOError as exc:  # EAGAIN: a concurrent rename; the kernel asks us to retry
                last = exc
            except OSError as exc:
                raise _explain(exc, what) from None
        else:
            raise OSError(errno.EAGAIN, f"{what}: renamed concurrently {_RETRIES} times in a row") from last
        if os.fstat(fd).st_dev != self._dev:
            os.close(fd)
            raise OSError(errno.EXDEV, f"{what} leads off the sandbox's filesystem")
        return fd


def _explain(exc: OSError, what: str) -> OSError:
    """The same error type, saying which sandbox path it was about."""
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return FileNotFoundError(errno.ENOENT, f"no such file in the sandbox: {what}")
    if exc.errno == errno.EISDIR:
        return IsADirectoryError(errno.EISDIR, f"put: {what!r} is a directory in the sandbox; give the full file path")
    if exc.errno == errno.ELOOP:
        return OSError(errno.ELOOP, f"{what}: too many symbolic links, or a link through /proc, in the sandbox")
    if exc.errno == errno.ENXIO:
        return OSError(errno.ENXIO, f"{what} is a FIFO or socket in the sandbox, not a regular file")
    return type(exc)(exc.errno, f"{what}: {exc.strerror}")
