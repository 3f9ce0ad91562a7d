"""The bubblewrap command line a local sandbox's namespace holder starts with.

The system a sandbox runs on is either the host's (/usr, /bin, /sbin, /lib,
/lib64 bound read-only, /etc a minimal one of ours) or a built image's
(:mod:`agentenvs.sandbox.layers`: each top-level directory of its overlay
bound read-write, /etc/hosts, hostname and resolv.conf ours). Either way the
sandbox's own directories are bound from its filesystem over it, and the
checkers read-only at the evaluators mount.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentenvs.sandbox.base import HOSTNAME
from agentenvs.sandbox.checks import EVALUATORS_MOUNT

HOST_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64")
#: Never bound from an image: the kernel's, bubblewrap's, or the sandbox's own.
NOT_FROM_IMAGE = frozenset({"proc", "dev", "sys", "tmp"})
#: Ours over an image's /etc, as docker mounts its own (resolv.conf matters to network=True sandboxes).
ETC_FILES = ("/etc/hosts", "/etc/hostname", "/etc/resolv.conf")
#: Where bubblewrap mounts over an image's system (it makes them in the overlay if missing).
IMAGE_MOUNT_POINTS = (*ETC_FILES, EVALUATORS_MOUNT)
SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def host_system(etc: Path) -> list[str]:
    """The host's programs and libraries read-only, and our /etc."""
    argv: list[str] = []
    for d in HOST_DIRS:
        if os.path.islink(d):
            argv += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            argv += ["--ro-bind", d, d]
    return argv + ["--ro-bind", str(etc), "/etc"]


def image_system(view: Path, etc: Path, own: tuple[str, ...]) -> list[str]:
    """Every top-level entry of an image's overlay at ``view`` (but those in ``own``), read-write as in
    a container; the image's /etc with our hosts, hostname and resolv.conf."""
    argv: list[str] = []
    with os.scandir(view) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            dest = "/" + entry.name
            if entry.name in NOT_FROM_IMAGE or dest in own:
                continue
            if entry.is_symlink():
                argv += ["--symlink", os.readlink(entry.path), dest]
            elif entry.is_dir(follow_symlinks=False):
                argv += ["--bind", entry.path, dest]
    for dest in ETC_FILES:
        if (etc / Path(dest).name).exists():
            argv += ["--ro-bind", str(etc / Path(dest).name), dest]
    return argv


def bwrap_argv(
    bwrap: str,
    *,
    network: bool,
    system: list[str],
    binds: dict[str, str],
    evaluators: Path,
    mounts: tuple[tuple[str, str, bool], ...] = (),
    userns_fd: int | None = None,
) -> list[str]:
    """bubblewrap, run as the sandbox user: uid 0 inside a user namespace that cannot nest another,
    its own (one uid) or the one ``userns_fd`` is open on (:mod:`agentenvs.sandbox.local_userns`).

    ``binds`` maps the sandbox's own directories to their host paths; ``mounts`` are the spec's
    ``(host path, sandbox path, read only)``.
    """
    argv = [bwrap]
    if userns_fd is None:
        argv += ["--unshare-user", "--uid", "0", "--gid", "0", "--disable-userns"]
    else:
        argv += ["--userns", str(userns_fd)]
    argv += ["--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", HOSTNAME]
    argv += ["--cap-drop", "ALL"]
    if not network:
        argv.append("--unshare-net")
    argv += system
    argv += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev"]
    for dest, source in binds.items():
        argv += ["--bind", source, dest]
    for source, dest, read_only in mounts:
        argv += ["--ro-bind" if read_only else "--bind", source, dest]
    argv += ["--remount-ro", "/dev"]  # bwrap's /dev is a tmpfs: files there would escape storage_mb
    argv += ["--ro-bind", str(evaluators), EVALUATORS_MOUNT]
    return argv + ["--remount-ro", "/", "--chdir", "/", "--clearenv", "--setenv", "PATH", SEARCH_PATH]
