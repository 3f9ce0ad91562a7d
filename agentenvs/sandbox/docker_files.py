"""Files in and out of a container through the engine's archive API (tar streams, no exec)."""

from __future__ import annotations

import io
import os
import tarfile
import time
from pathlib import Path
from typing import Any, BinaryIO

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.docker_exec import as_sandbox_error


def put_into(api: Any, container: str, src: str | Path | bytes, dest: str) -> None:
    """Copy bytes, a host file or a host directory to the absolute path ``dest``, owned by root."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        if isinstance(src, bytes):
            info = tarfile.TarInfo(dest.lstrip("/"))
            info.size, info.mode, info.mtime = len(src), 0o644, int(time.time())
            tar.addfile(info, io.BytesIO(src))
        else:
            path = Path(src)
            if not path.exists():
                raise FileNotFoundError(f"put: no such host file or directory: {path}")
            tar.add(path, arcname=dest.lstrip("/"), filter=_as_root)
    try:
        ok = api.put_archive(container, "/", buf.getvalue())
    except Exception as exc:
        raise as_sandbox_error(exc, f"put to {dest}") from None
    if not ok:
        raise SandboxError(f"docker refused to write {dest}")


def read_from(api: Any, container: str, path: str) -> bytes:
    """The content of the regular file at the absolute ``path``; FileNotFoundError if there is none."""
    import docker.errors

    try:
        stream, _ = api.get_archive(container, path)
        data = b"".join(stream)
    except docker.errors.NotFound:
        raise FileNotFoundError(f"no such file in the sandbox: {path}") from None
    except Exception as exc:
        raise as_sandbox_error(exc, f"get of {path}") from None
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        member = tar.next()
        if member is None or not member.isfile():
            raise IsADirectoryError(f"not a regular file in the sandbox: {path} (use exec with tar for directories)")
        extracted = tar.extractfile(member)
        return extracted.read() if extracted else b""


def unpack_at_root(api: Any, container: str, archive: BinaryIO) -> None:
    """Unpack a (possibly spooled) tar at ``/``: how the agent's state enters the verifier's container."""
    if not archive.seek(0, os.SEEK_END):
        return
    archive.seek(0)
    try:
        ok = api.put_archive(container, "/", archive)
    except Exception as exc:
        raise as_sandbox_error(exc, "copy of the agent's state") from None
    if not ok:
        raise SandboxError("docker refused to copy the agent's state into the verifier's container")


def _as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
