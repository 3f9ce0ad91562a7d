"""A local sandbox's own directories: which they are, and how the host makes, fills and copies them.

They are the workdir, :data:`SANDBOX_DIRS` and :data:`SCRATCH_DIRS`, never a
system directory. On the host they live on the sandbox's filesystem of
``storage_mb`` (:mod:`agentenvs.sandbox.local_storage`) mounted at
``<SANDBOX_PARENT>/<pid>-<id>/root``, owned by the sandbox user, and start as
a copy of a template or a snapshot, else with what an image has there (a
Dockerfile's ``COPY`` to /app), else empty. A snapshot is a copy of that
root set aside next to it (:class:`RootSnapshots`).
"""

from __future__ import annotations

import os
import posixpath
import uuid
from pathlib import Path

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.local_bwrap import HOST_DIRS
from agentenvs.sandbox.local_resources import SANDBOX_PARENT, LocalResources
from agentenvs.sandbox.local_storage import check_reachable, copy_tree, mount_storage

SYSTEM_DIRS = (*HOST_DIRS, "/etc")
SANDBOX_DIRS = ("/tmp", "/logs", "/tests", "/solution", "/root")
#: Writable in the sandbox and on its filesystem, but not reachable with put and get.
SCRATCH_DIRS = ("/dev/shm",)


def check_workdir(workdir: str) -> str:
    """``workdir`` normalized; a SandboxError if it is not absolute or lies in a system directory."""
    normal = posixpath.normpath(workdir)
    if (
        not normal.startswith("/")
        or normal == "/"
        or any(normal == d or normal.startswith(d + "/") for d in SYSTEM_DIRS + ("/proc", "/dev"))
    ):
        raise SandboxError(
            f"workdir {workdir!r} cannot be a sandbox directory: "
            "use an absolute path outside /, /usr, /etc, /proc and /dev, such as /app"
        )
    return normal


def root_binds(root: Path, writable: tuple[str, ...]) -> dict[str, str]:
    """Each of the sandbox's own directories (``writable`` and the scratch ones) and its host path under ``root``."""
    own = (*writable, *SCRATCH_DIRS)
    return dict(zip(own, [str(root / d.lstrip("/")) for d in own], strict=True))


def make_root(home: Path, root: Path, storage_mb: int) -> None:
    """Make the sandbox's directory ``home`` under SANDBOX_PARENT and mount a fresh filesystem of
    ``storage_mb`` at ``root`` in it."""
    SANDBOX_PARENT.mkdir(parents=True, exist_ok=True)
    check_reachable(SANDBOX_PARENT)
    home.mkdir(mode=0o711)
    home.chmod(0o711)  # whatever the umask: the sandbox user passes through, reads nothing
    root.mkdir()
    mount_storage(root, home / "storage.ext4", storage_mb)


def fill_root(
    root: Path,
    source: Path | None,
    *,
    image_system: Path | None,
    writable: tuple[str, ...],
    owner: tuple[int, int],
) -> None:
    """Copy ``source`` (a template or snapshot) onto the empty ``root``, else the image's files in the
    ``writable`` directories; make those and the scratch directories, owned by the sandbox user ``owner``."""
    if source is not None:
        copy_tree(source, root)
    elif image_system is not None:  # the image's files in the sandbox's own directories (COPY to /app)
        for d in writable:
            image_dir = image_system / d.lstrip("/")
            if image_dir.is_dir() and not image_dir.is_symlink():
                (root / d.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
                copy_tree(image_dir, root / d.lstrip("/"))
    uid, gid = owner
    for d in (*writable, *SCRATCH_DIRS):
        path = root / d.lstrip("/")
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, uid, gid, follow_symlinks=False)
    for d in ("tmp", "dev/shm"):
        (root / d).chmod(0o1777)


class RootSnapshots:
    """Copies of a sandbox's root set aside in ``folder``, each found by the reference ``take`` returned."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._copies: dict[str, Path] = {}

    def take(self, root: Path, res: LocalResources) -> str:
        """Copy ``root`` aside with the sandbox's processes frozen, so none can swap a path under the copy."""
        ref = f"snap-{len(self._copies)}-{uuid.uuid4().hex[:8]}"
        dest = self._folder / ref
        self._folder.mkdir(mode=0o700, exist_ok=True)
        with res.paused():
            copy_tree(root, dest)
        self._copies[ref] = dest
        return ref

    def source(self, ref: str) -> Path:
        """The copy made for ``ref``; a SandboxError for a reference ``take`` did not return."""
        if ref not in self._copies:
            raise SandboxError(
                f"unknown snapshot {ref!r}: restore takes a reference this sandbox's snapshot() returned"
            )
        return self._copies[ref]
