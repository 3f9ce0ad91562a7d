"""The agent's file changes in a stopped container, read on the host as data.

Docker's overlay2 driver keeps a container's changes in its upper directory:
new and modified files as themselves, deletions as whiteouts (0/0 character
devices) and replaced directories marked opaque. Once every agent process is
dead and the container is stopped, nothing can change that directory, so the
host walks it without following a single link and packs what the verifier may
see (:func:`~agentenvs.sandbox.agent_state.protected_reason` decides) into a
tar for a fresh container of the pristine image. Nothing in the agent's
container runs to produce it.
"""

from __future__ import annotations

import os
import stat
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.agent_state import image_program_dirs, protected_reason

#: Command directories of the image whose names an added program must not shadow.
_PATH_DIRS = ("usr/local/sbin", "usr/local/bin", "usr/sbin", "usr/bin", "sbin", "bin")
SPOOL_BYTES = 8 << 20
_OPAQUE_XATTRS = ("trusted.overlay.opaque", "user.overlay.opaque")


@dataclass
class StateTransfer:
    """What to do to a pristine container so it holds the agent's final state."""

    #: A tar of the changes, spooled to disk past a few MB (the agent may have written gigabytes).
    archive: BinaryIO = field(default_factory=lambda: tempfile.SpooledTemporaryFile(SPOOL_BYTES))
    #: Paths the agent deleted (removed before the archive is unpacked).
    deletions: list[str] = field(default_factory=list)
    #: Directories the agent replaced wholesale (emptied before the archive is unpacked).
    emptied: list[str] = field(default_factory=list)
    #: ``(path, why)`` for every change that was not carried over.
    refused: list[tuple[str, str]] = field(default_factory=list)
    files: int = 0

    def summary(self) -> str:
        """One line for the verifier's detail; empty when nothing was refused."""
        return refused_summary(self.refused)


def refused_summary(refused: list[tuple[str, str]]) -> str:
    """One line naming the agent's changes the verifier does not see; empty when there are none."""
    if not refused:
        return ""
    shown = ", ".join(f"{path} ({why})" for path, why in refused[:8])
    more = f" and {len(refused) - 8} more" if len(refused) > 8 else ""
    return f"left out of the verified state: {shown}{more}"


def _layers(api: Any, container: str) -> tuple[Path, list[Path]]:
    driver = api.inspect_container(container).get("GraphDriver") or {}
    data = driver.get("Data") or {}
    if driver.get("Name") != "overlay2" or not data.get("UpperDir"):
        raise SandboxError(
            f"the verifier reads the agent's changes from the overlay2 storage driver's upper directory, "
            f"but this Docker engine uses {driver.get('Name')!r}; run dockerd with --storage-driver overlay2"
        )
    lowers = [Path(p) for p in (data.get("LowerDir") or "").split(":") if p]
    return Path(data["UpperDir"]), lowers


def image_commands(lowers: list[Path]) -> frozenset[str]:
    names: set[str] = set()
    for layer in lowers:
        for rel in _PATH_DIRS:
            where = layer / rel
            if where.is_dir() and not where.is_symlink():
                names.update(os.listdir(where))
    return frozenset(names)


def is_opaque(path: str) -> bool:
    for name in _OPAQUE_XATTRS:
        try:
            if os.getxattr(path, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


def _plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mode &= 0o1777  # no setuid or setgid programs for the verifier to run by accident
    return info


def image_config(api: Any, container: str) -> tuple[dict[str, str], str | None]:
    """The ENV and WORKDIR of the image ``container`` was made from (not the container's own)."""
    config = api.inspect_image(api.inspect_container(container)["Image"]).get("Config") or {}
    env = dict(item.split("=", 1) for item in config.get("Env") or [] if "=" in item)
    return env, config.get("WorkingDir") or None


def read_changes(api: Any, container: str) -> StateTransfer:
    """Pack the stopped ``container``'s changes that the verifier may see."""
    upper, lowers = _layers(api, container)
    commands = image_commands(lowers)
    image_dirs = image_program_dirs(*image_config(api, container))
    out = StateTransfer()
    with tarfile.open(fileobj=out.archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for here, dirs, files in os.walk(upper):
            rel_dir = os.path.relpath(here, upper)
            inside_dir = "/" if rel_dir == "." else "/" + rel_dir
            for name in sorted(dirs + files):
                host = os.path.join(here, name)
                inside = os.path.join(inside_dir, name)
                st = os.lstat(host)
                is_dir = stat.S_ISDIR(st.st_mode)
                added = not any(os.path.lexists(layer / inside.lstrip("/")) for layer in lowers)
                if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                    why = protected_reason(
                        inside, added=False, is_dir=False, shadowed_commands=commands, image_dirs=image_dirs
                    )
                    (out.refused.append((inside, f"deletion refused: {why}")) if why else out.deletions.append(inside))
                    continue
                why = protected_reason(
                    inside, added=added, is_dir=is_dir, shadowed_commands=commands, image_dirs=image_dirs
                )
                if why and is_dir:
                    continue  # the image has (or may have) it; what the agent put inside is judged one by one
                if why:
                    out.refused.append((inside, why))
                    continue
                if not (is_dir or stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                    out.refused.append((inside, "not a regular file, directory or symlink"))
                    continue
                if is_dir and is_opaque(host):
                    out.emptied.append(inside)
                tar.add(host, arcname=inside.lstrip("/"), recursive=False, filter=_plain)
                out.files += 0 if is_dir else 1
    out.archive.seek(0)
    return out
