"""Task images: build a Harbor task's ``environment/Dockerfile`` on local images, cached.

Nothing is ever pulled. A Dockerfile whose ``FROM`` image is not in the local
engine fails before the build, naming the image and how to provide it. The
tag carries a hash of the build context (and of the base images' ids), so an
unchanged task is built once and a changed one, or a rebuilt base, is rebuilt.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from agentenvs.core.errors import SandboxError
from agentenvs.core.task import Task
from agentenvs.sandbox.docker_engine import LABEL, docker_client, missing_image_error

TASK_IMAGE_REPO = "agentenvs/task"
TASK_LABEL = "agentenvs.task"
HASH_LABEL = "agentenvs.context_hash"
DEFAULT_IMAGE = "agentenvs/terminal:latest"

_ARG = re.compile(r"^ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?", re.IGNORECASE)
_FROM = re.compile(r"^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", re.IGNORECASE)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def base_images(dockerfile: str, build_args: dict[str, str] | None = None) -> list[str]:
    """The external images a Dockerfile's ``FROM`` lines name (not earlier stages, not scratch)."""
    args = dict(build_args or {})
    stages: set[str] = set()
    images: list[str] = []
    text = re.sub(r"\\\r?\n", " ", dockerfile)
    seen_from = False
    for raw in text.splitlines():
        line = raw.strip()
        arg = _ARG.match(line)
        if arg and not seen_from:
            args.setdefault(arg.group(1), _unquote(arg.group(2) or ""))
            continue
        match = _FROM.match(line)
        if not match:
            continue
        seen_from = True
        image = _VAR.sub(lambda m: args.get(m.group(1) or m.group(3)) or m.group(2) or "", match.group(1))
        if image.lower() != "scratch" and image not in stages and image not in images:
            images.append(image)
        if match.group(2):
            stages.add(match.group(2))
    return images


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def context_hash(context: Path, extra: str = "") -> str:
    """sha256 over every file's path, mode and bytes in a build context."""
    digest = hashlib.sha256(extra.encode())
    for path in sorted(p for p in context.rglob("*") if p.is_file() or p.is_symlink()):
        digest.update(str(path.relative_to(context)).encode() + b"\0")
        digest.update(oct(path.lstat().st_mode).encode())
        digest.update(str(path.readlink()).encode() if path.is_symlink() else path.read_bytes())
    return digest.hexdigest()


def _image_id(api: Any, image: str) -> str | None:
    import docker.errors

    try:
        return str(api.inspect_image(image)["Id"])
    except docker.errors.ImageNotFound:
        return None


def build_image(
    context: Path,
    name: str,
    *,
    dockerfile: str = "Dockerfile",
    build_args: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    network: bool = True,
    timeout: float = 600.0,
    client: Any = None,
) -> str:
    """Build ``context/<dockerfile>`` as ``agentenvs/task:<name>-<hash>`` unless that tag exists.

    ``network`` lets ``RUN apt-get``/``pip`` reach package registries during the
    build (host network); containers made from the image still run without one.
    """
    api = (client or docker_client()).api
    dockerfile_path = context / dockerfile
    if not dockerfile_path.is_file():
        raise SandboxError(f"no {dockerfile} in {context}: a task's environment/ needs one to build an image")
    bases = base_images(dockerfile_path.read_text(), build_args)
    base_ids = []
    for base in bases:
        image_id = _image_id(api, base)
        if image_id is None:
            raise SandboxError(
                f"{dockerfile_path}: base image {base!r} is not present locally and nothing is pulled. "
                f"Provide it with `docker load` or `docker tag <local image> {base}` "
                "(`make install` builds agentenvs/terminal:latest, agentenvs/swe:latest and tags debian:bookworm-slim)."
            )
        base_ids.append(image_id)
    named = () if dockerfile == "Dockerfile" else (dockerfile,)  # the default keeps existing tags valid
    digest = context_hash(context, extra=repr((*named, sorted((build_args or {}).items()), base_ids)))
    slug = re.sub(r"[^a-z0-9_.-]+", "-", name.lower()).strip("-.")[:80] or "task"
    tag = f"{TASK_IMAGE_REPO}:{slug}-{digest[:16]}"
    if _image_id(api, tag) is not None:
        return tag
    all_labels = {LABEL: "1", HASH_LABEL: digest, **(labels or {})}
    log: list[str] = []
    try:
        for chunk in api.build(
            path=str(context),
            dockerfile=dockerfile,
            tag=tag,
            buildargs=build_args,
            labels=all_labels,
            rm=True,
            forcerm=True,
            pull=False,
            network_mode="host" if network else "none",
            timeout=int(timeout),
            decode=True,
        ):
            if "stream" in chunk:
                log.append(chunk["stream"])
            if "error" in chunk:
                tail = "".join(log[-20:]) + chunk["error"]
                raise SandboxError(f"building {dockerfile_path} failed:\n{tail.strip()}")
    except SandboxError:
        raise
    except Exception as exc:
        raise SandboxError(f"building {dockerfile_path} failed: {exc}") from None
    return tag


def task_image(task: Task, *, default: str = DEFAULT_IMAGE, client: Any = None) -> str:
    """The image a task runs in: its ``docker_image``, its built ``environment/Dockerfile``, or ``default``."""
    api = (client or docker_client()).api
    env = task.config.environment
    if env.docker_image:
        return local_image(env.docker_image, client=client)
    context = task.dir("environment")
    if context is not None and (context / "Dockerfile").is_file():
        return build_image(
            context,
            task.full_id.replace("/", "-"),
            labels={TASK_LABEL: task.full_id},
            timeout=env.build_timeout_sec,
            client=client,
        )
    if _image_id(api, default) is None:
        raise missing_image_error(default)
    return default


def image_present(image: str, client: Any = None) -> bool:
    return _image_id((client or docker_client()).api, image) is not None


def local_image(image: str, client: Any = None) -> str:
    """``image`` if the engine has it; else the error saying how to provide it (nothing is pulled)."""
    if _image_id((client or docker_client()).api, image) is None:
        raise missing_image_error(image)
    return image


def image_workdir(image: str, client: Any = None) -> str | None:
    """The image's WORKDIR (None when it sets none, or only ``/``)."""
    api = (client or docker_client()).api
    workdir = (api.inspect_image(image).get("Config") or {}).get("WorkingDir") or ""
    return workdir if workdir not in ("", "/") else None


def image_user(image: str, client: Any = None) -> str:
    """The image's USER (empty when it sets none)."""
    api = (client or docker_client()).api
    return str((api.inspect_image(image).get("Config") or {}).get("User") or "")


def image_digest(image: str, client: Any = None) -> str:
    """A content address for run records: the registry digest if the image has one, else its id."""
    import docker.errors

    api = (client or docker_client()).api
    try:
        info = api.inspect_image(image)
    except docker.errors.ImageNotFound:
        raise missing_image_error(image) from None
    repo_digests = info.get("RepoDigests") or []
    return str(repo_digests[0] if repo_digests else info["Id"])
