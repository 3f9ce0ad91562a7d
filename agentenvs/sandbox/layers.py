"""A docker image as read-only layer directories, so the local backend runs tasks over the image it built.

The docker engine builds the task's Dockerfile (:func:`~agentenvs.sandbox.images.build_image`, the
docker backend's tag and cache); ``docker save`` then gives each layer's tar, extracted once under
``<system dir>/layers/<diff id>`` (root-owned, mode 0700, never bound into a sandbox), so images
built FROM the same base share its layers. Extraction goes to a temporary directory renamed into
place, so concurrent processes never see half a layer. OCI whiteouts become overlayfs ones
(``.wh.<name>``: a 0:0 character device; ``.wh..wh..opq``: ``trusted.overlay.opaque=y``), device
nodes are dropped, and every file is given to the sandbox user: it is root in its user namespace,
so the image's files are root's and writable, as in a container (set-user-ID bits are kept: they work
only in a sandbox with several users, whose overlay is mounted without ``nosuid``). A sandbox mounts
an overlayfs of the layers with its upper directory on its own filesystem (:func:`mount_system`), so
the agent's writes are bounded by ``storage_mb`` and never reach the layers.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.agent_state import image_program_dirs, protected_reason
from agentenvs.sandbox.docker_engine import docker_client
from agentenvs.sandbox.docker_state import image_commands, is_opaque
from agentenvs.sandbox.local_bwrap import IMAGE_MOUNT_POINTS
from agentenvs.sandbox.local_storage import unmount
from agentenvs.sandbox.local_system import sandbox_ids, system_dir

#: Bumped when what an extracted layer holds changes (the directory name carries it).
LAYER_FORMAT = 2
_CHUNK = 1 << 20
#: A layer's tar is kept in memory up to this size while its digest is computed, on disk past it.
_SPOOL_BYTES = 64 << 20


class ImageRoot(BaseModel, frozen=True):
    """What a local sandbox needs of a built image: its layers (lowest first), ENV and WORKDIR."""

    image: str
    layers: tuple[Path, ...]
    env: dict[str, str]
    workdir: str | None


def layer_dir() -> Path:
    return system_dir() / "layers"


def image_root(image: str, client: Any = None) -> ImageRoot:
    """The layers of ``image`` (an image the engine has), extracted now unless already there."""
    api = (client or docker_client()).api
    info = api.inspect_image(image)
    diff_ids = [d.split(":", 1)[1] for d in info["RootFS"]["Layers"]]
    parent = layer_dir()
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    parent.chmod(0o700)
    paths = [parent / f"{LAYER_FORMAT}-{d}" for d in diff_ids]
    if not all(p.is_dir() for p in paths):
        with open(parent / f".lock-{info['Id'].split(':')[-1]}", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another process saving the same image: wait, then reuse
            if not all(p.is_dir() for p in paths):
                _remove_old_formats(parent)
                _save_layers(api, image, {d for d, p in zip(diff_ids, paths, strict=True) if not p.is_dir()}, parent)
    missing = [p.name for p in paths if not p.is_dir()]
    if missing:
        raise SandboxError(f"docker save of {image} lacked layers {', '.join(missing)}")
    config = info.get("Config") or {}
    env = dict(item.split("=", 1) for item in config.get("Env") or [] if "=" in item)
    workdir = config.get("WorkingDir") or None
    top_first = list(dict.fromkeys(reversed(paths)))  # a repeated layer counts once, where it is topmost
    return ImageRoot(image=image, layers=tuple(reversed(top_first)), env=env, workdir=workdir)


def _remove_old_formats(parent: Path) -> None:
    """Layers extracted in an earlier :data:`LAYER_FORMAT` are never read again: free their space."""
    for old in parent.iterdir():
        number = old.name.split("-", 1)[0]
        if number.isdigit() and int(number) != LAYER_FORMAT and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


class _Stream(io.RawIOBase):
    """The chunks ``docker save`` yields, as a file tarfile can read in stream mode."""

    def __init__(self, chunks: Iterator[bytes]):
        self._chunks = chunks
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._rest:
            try:
                self._rest = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._rest))
        buffer[:n] = self._rest[:n]
        self._rest = self._rest[n:]
        return n


def _save_layers(api: Any, image: str, missing: set[str], parent: Path) -> None:
    """Stream ``docker save``; extract the layers in ``missing``, known by their tar's sha256 (the diff id).

    The save names layers by ids that say nothing of their content, so each tar is hashed on its way
    to a spool file and extracted only if missing: a base already extracted costs a read, not a rewrite.
    """
    stream = io.BufferedReader(_Stream(api.get_image(image, chunk_size=_CHUNK)), _CHUNK)
    with tarfile.open(fileobj=stream, mode="r|") as saved:
        for member in saved:
            name = os.path.basename(member.name)
            if not member.isfile() or not (name == "layer.tar" or name in missing):
                continue
            source = saved.extractfile(member)
            assert source is not None
            with tempfile.SpooledTemporaryFile(_SPOOL_BYTES, dir=parent) as spool:
                digest = hashlib.sha256()
                while chunk := source.read(_CHUNK):
                    digest.update(chunk)
                    spool.write(chunk)
                diff_id = digest.hexdigest()
                if diff_id in missing and not (parent / f"{LAYER_FORMAT}-{diff_id}").is_dir():
                    spool.seek(0)
                    _extract_layer(spool, parent / f"{LAYER_FORMAT}-{diff_id}")


def _extract_layer(source: Any, dest: Path) -> None:
    """Extract the layer tar ``source`` beside ``dest``, make it an overlay layer, rename it into place."""
    staging = dest.with_name(f".tmp-{uuid.uuid4().hex}")
    staging.mkdir(mode=0o700)
    try:
        tar = subprocess.Popen(
            ["tar", "-x", "--numeric-owner", "--same-owner", "-p", "-C", str(staging)],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert tar.stdin is not None and tar.stderr is not None
        try:
            while chunk := source.read(_CHUNK):
                tar.stdin.write(chunk)
        finally:
            tar.stdin.close()
            err = tar.stderr.read().decode(errors="replace")
            tar.wait()
        if tar.returncode != 0:
            raise SandboxError(f"extracting layer {dest.name} failed: {err.strip()[-300:]}")
        _to_overlay(staging, sandbox_ids())
        try:
            staging.rename(dest)
        except OSError:
            pass  # another process put the same layer in place first
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def _to_overlay(root: Path, owner: tuple[int, int]) -> None:
    """OCI whiteouts to overlayfs ones, device nodes dropped, everything owned by the sandbox user."""
    uid, gid = owner
    for here, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = os.path.join(here, name)
            if name == ".wh..wh..opq":
                os.unlink(path)
                os.setxattr(here, "trusted.overlay.opaque", b"y")
            elif name.startswith(".wh."):
                os.unlink(path)
                hidden = os.path.join(here, name[4:])
                os.mknod(hidden, stat.S_IFCHR, os.makedev(0, 0))
                os.lchown(hidden, uid, gid)
            elif stat.S_ISCHR(os.lstat(path).st_mode) or stat.S_ISBLK(os.lstat(path).st_mode):
                os.unlink(path)
            else:
                mode = os.lstat(path).st_mode
                os.lchown(path, uid, gid)
                if mode & (stat.S_ISUID | stat.S_ISGID) and stat.S_ISREG(mode):
                    os.chmod(path, stat.S_IMODE(mode))  # chown clears them
    os.chown(root, uid, gid)
    root.chmod(0o755)


def mount_system(image: ImageRoot, target: Path, storage: Path, *, setuid: bool = False) -> None:
    """Mount the image's layers at ``target`` with the writes in ``storage`` (on the sandbox's filesystem).

    Mounted by the host's root, ``nodev``, and ``nosuid`` unless ``setuid`` (a sandbox with several
    users, whose root is still an unprivileged host user); ``storage`` holds ``upper`` and ``work``.
    """
    upper, work = storage / "upper", storage / "work"
    uid, gid = sandbox_ids()
    for d in (storage, upper):
        d.mkdir(exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    os.chown(upper, uid, gid)
    lower = ":".join(str(p) for p in reversed(image.layers))
    target.mkdir(exist_ok=True)
    options = f"lowerdir={lower},upperdir={upper},workdir={work}"
    done = subprocess.run(
        ["mount", "-t", "overlay", "overlay", "-o", f"{'' if setuid else 'nosuid,'}nodev,{options}", "--", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )
    if done.returncode != 0:
        raise SandboxError(f"mounting {image.image}'s layers at {target} failed: {done.stderr.strip()[-300:]}")


def seal_system(image: ImageRoot, target: Path, storage: Path, *, setuid: bool = False) -> list[tuple[str, str]]:
    """Before the verifier: unmount, undo the agent's changes to the verifier's toolchain, mount again.

    The rule is the docker backend's seal (:func:`~agentenvs.sandbox.agent_state.protected_reason`):
    the agent's other changes stay, as the state under test. Returns ``(path, why)`` of what was undone.
    """
    unmount(target)
    upper = storage / "upper"
    commands = image_commands(list(image.layers))
    image_dirs = image_program_dirs(image.env, image.workdir)
    ours = {p for m in IMAGE_MOUNT_POINTS for p in (m, *map(str, PurePosixPath(m).parents))}
    undone: list[tuple[str, str]] = []
    for here, dirs, files in os.walk(upper):
        rel = os.path.relpath(here, upper)
        inside_dir = "/" if rel == "." else "/" + rel
        for name in sorted(dirs + files):
            host, inside = os.path.join(here, name), os.path.join(inside_dir, name)
            st = os.lstat(host)
            is_dir = stat.S_ISDIR(st.st_mode)
            below = [
                layer / inside.lstrip("/") for layer in image.layers if os.path.lexists(layer / inside.lstrip("/"))
            ]
            why = protected_reason(
                inside, added=not below, is_dir=is_dir, shadowed_commands=commands, image_dirs=image_dirs
            )
            if why is None or inside in ours:
                continue
            if is_dir and not (below and not below[-1].is_dir()):
                if is_opaque(host):  # the image's content shows through again; the agent's is judged below
                    os.removexattr(host, "trusted.overlay.opaque", follow_symlinks=False)
                    undone.append((inside, f"emptying refused: {why}"))
                continue
            if is_dir:
                dirs.remove(name)
                shutil.rmtree(host)
            else:
                os.unlink(host)
            deleted = stat.S_ISCHR(st.st_mode) and st.st_rdev == 0
            undone.append((inside, f"deletion refused: {why}" if deleted else why))
    mount_system(image, target, storage, setuid=setuid)
    return undone
