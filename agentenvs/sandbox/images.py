"""Task images: build a Harbor task's ``environment/Dockerfile`` on local images, cached.

Nothing is ever pulled. A ``FROM`` image the local engine lacks is replaced
by its row in the substitution table (:mod:`agentenvs.sandbox.substitutes`),
built once, and named in the task's warnings; with no row it fails before the
build, naming the image and how to provide it. The tag carries a hash of the
build context (and of the base images' ids), so an unchanged task is built
once and a changed one, or a rebuilt base, is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentenvs.core.errors import MachineLacksError, SandboxError
from agentenvs.core.task import Task
from agentenvs.sandbox.agent_state import image_program_dirs
from agentenvs.sandbox.build_log import diagnose, plain
from agentenvs.sandbox.docker_engine import LABEL, docker_client, missing_image_error
from agentenvs.sandbox.substitutes import Substitute, find_substitute, normalize, table, user_table

TASK_IMAGE_REPO = "agentenvs/task"
SUBSTITUTE_REPO = "agentenvs/substitute"
TASK_LABEL = "agentenvs.task"
SUBSTITUTE_LABEL = "agentenvs.substitute_for"
HASH_LABEL = "agentenvs.context_hash"
DEFAULT_IMAGE = "agentenvs/terminal:latest"

_ARG = re.compile(r"^ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?", re.IGNORECASE)
_FROM = re.compile(r"^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", re.IGNORECASE)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _logical_lines(dockerfile: str) -> list[str]:
    """The Dockerfile's instructions, each with its continuation lines and line ends as written."""
    lines: list[str] = []
    pending = ""
    for raw in dockerfile.splitlines(keepends=True):
        pending += raw
        if not raw.rstrip("\r\n").endswith("\\"):
            lines.append(pending)
            pending = ""
    return [*lines, pending] if pending else lines


def _froms(lines: list[str], build_args: dict[str, str] | None) -> Iterator[tuple[int, str, str, re.Match[str]]]:
    """Each external ``FROM``: (its instruction's index, the image, the instruction on one line, the match)."""
    args = dict(build_args or {})
    stages: set[str] = set()
    seen_from = False
    for index, logical in enumerate(lines):
        line = re.sub(r"\\\r?\n", " ", logical).strip()
        arg = _ARG.match(line)
        if arg and not seen_from:
            args.setdefault(arg.group(1), _unquote(arg.group(2) or ""))
            continue
        match = _FROM.match(line)
        if not match:
            continue
        seen_from = True
        image = _VAR.sub(lambda m: args.get(m.group(1) or m.group(3)) or m.group(2) or "", match.group(1))
        if image.lower() != "scratch" and image not in stages:
            yield index, image, line, match
        if match.group(2):
            stages.add(match.group(2))


def base_images(dockerfile: str, build_args: dict[str, str] | None = None) -> list[str]:
    """The external images a Dockerfile's ``FROM`` lines name (not earlier stages, not scratch)."""
    return list(dict.fromkeys(image for _, image, _, _ in _froms(_logical_lines(dockerfile), build_args)))


def rewrite_bases(dockerfile: str, replace: dict[str, str], build_args: dict[str, str] | None = None) -> str:
    """The Dockerfile with each ``FROM`` image in ``replace`` swapped for its stand-in; nothing else changes."""
    lines = _logical_lines(dockerfile)
    for index, image, line, match in list(_froms(lines, build_args)):
        if image in replace:
            lines[index] = line[: match.start(1)] + replace[image] + line[match.end(1) :] + "\n"
    return "".join(lines)


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


@dataclass(frozen=True)
class BaseImage:
    """What a ``FROM`` image resolves to here: the image itself, a stand-in, or nothing."""

    image: str
    status: Literal["present", "substitute", "missing"]
    substitute: Substitute | None = None

    def warning(self, where: str) -> str:
        """The line a task's warnings carry for a stand-in (empty for the image itself)."""
        if self.substitute is None:
            return ""
        return (
            f"{where}: base image {self.image} is not on this machine and nothing is pulled; "
            f"{self.substitute.describe()} stands in for it (the substitution table: `agentenvs images`)"
        )


def resolve_base(image: str, *, rows: list[Substitute] | None = None, client: Any = None) -> BaseImage:
    api = (client or docker_client()).api
    if _image_id(api, image) is not None:
        return BaseImage(image, "present")
    row = find_substitute(image, rows)
    return BaseImage(image, "substitute", row) if row is not None else BaseImage(image, "missing")


def _unresolved_error(image: str, where: Path | str) -> SandboxError:
    return SandboxError(
        f"{where}: base image {image!r} is not present locally, nothing is pulled, and no row of the "
        f"substitution table matches it. Provide it with `docker load` or `docker tag <local image> {image}`, "
        f"or add a row for it to {user_table()} (`agentenvs images` shows the table; "
        "`make install` builds agentenvs/terminal:latest, agentenvs/swe:latest and tags debian:bookworm-slim)."
    )


def substitute_image(image: str, row: Substitute, *, timeout: float = 600.0, client: Any = None) -> str:
    """Build ``row``'s stand-in for ``image`` (once: the tag carries the recipe's and its base's hash)."""
    api = (client or docker_client()).api
    base_id = _image_id(api, row.base)
    if base_id is None:
        raise missing_image_error(row.base)
    slug = re.sub(r"[^a-z0-9_.-]+", "-", normalize(image).lower()).strip("-.")[:80] or "image"
    digest = hashlib.sha256(f"{row.recipe_hash()}\0{base_id}".encode()).hexdigest()
    tag = f"{SUBSTITUTE_REPO}:{slug}-{digest[:16]}"
    if _image_id(api, tag) is None:
        with tempfile.TemporaryDirectory(prefix="agentenvs-substitute-") as context:
            Path(context, "Dockerfile").write_text(row.dockerfile())
            _build(api, Path(context), "Dockerfile", tag, {LABEL: "1", SUBSTITUTE_LABEL: image}, True, timeout, image)
    return tag


def proxy_build_args() -> dict[str, str]:
    """The host's proxy settings, which docker hands to RUN steps without an ``ARG`` (never baked in)."""
    names = ("HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "NO_PROXY", "ALL_PROXY")
    return {name: value for n in names for name in (n, n.lower()) if (value := os.environ.get(name))}


def _build(
    api: Any,
    context: Path,
    dockerfile: str,
    tag: str,
    labels: dict[str, str],
    network: bool,
    timeout: float,
    what: Any,
    build_args: dict[str, str] | None = None,
    nocache: bool = False,
) -> None:
    """One ``docker build``, with the host's proxy settings when it has the network; a failure's
    message carries the log's tail, the failing step and what the machine lacked. A step served
    from the cache printed nothing, so a failed build is run once more without the cache to say
    why (a ``curl | sh`` that failed quietly is a cached step like any other)."""
    log: list[str] = []

    def failed(message: str) -> SandboxError:
        text = plain("".join(log) + message)
        diagnosis = diagnose(text)
        saved = _save_log(tag, text)
        tail = plain("".join(log[-20:]) + message)
        error = MachineLacksError if diagnosis.environmental else SandboxError
        return error(f"{diagnosis.sentence(what, saved)}:\n{tail.strip()}")

    def rediagnosed(message: str) -> SandboxError:
        if nocache or " ---> Using cache" not in "".join(log):
            return failed(message)
        try:
            _build(api, context, dockerfile, tag, labels, network, timeout, what, build_args, nocache=True)
        except SandboxError as again:
            return again
        return failed(message)  # it passed without the cache: the first failure stands as it was

    try:
        for chunk in api.build(
            path=str(context),
            dockerfile=dockerfile,
            tag=tag,
            buildargs={**(proxy_build_args() if network else {}), **(build_args or {})},
            labels=labels,
            rm=True,
            forcerm=True,
            pull=False,
            nocache=nocache,
            network_mode="host" if network else "none",
            timeout=int(timeout),
            decode=True,
        ):
            if "stream" in chunk:
                log.append(chunk["stream"])
            if "error" in chunk:
                raise rediagnosed(chunk["error"])
    except SandboxError:
        raise
    except Exception as exc:
        raise failed(str(exc)) from None


def _save_log(tag: str, text: str) -> Path | None:
    """The whole build log, kept where the error can point to it (the message carries only its tail)."""
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentenvs" / "build-logs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (re.sub(r"[^A-Za-z0-9_.-]+", "-", tag) + ".log")
        path.write_text(text)
        return path
    except OSError:
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
    substitute: bool = True,
    client: Any = None,
) -> str:
    """Build ``context/<dockerfile>`` as ``agentenvs/task:<name>-<hash>`` unless that tag exists.

    ``network`` lets ``RUN apt-get``/``pip`` reach package registries during the
    build (host network); containers made from the image still run without one.
    A base image the engine lacks is built from its substitution-table row first,
    if ``substitute`` (the caller then owes the task a warning: see
    :func:`substitution_warnings`).
    """
    client = client or docker_client()
    api = client.api
    dockerfile_path = context / dockerfile
    if not dockerfile_path.is_file():
        raise SandboxError(f"no {dockerfile} in {context}: a task's environment/ needs one to build an image")
    text = dockerfile_path.read_text()
    rows = table()
    stand_ins: dict[str, str] = {}
    base_ids = []
    for base in base_images(text, build_args):
        resolved = resolve_base(base, rows=rows if substitute else [], client=client)
        if resolved.status == "missing":
            raise _unresolved_error(base, dockerfile_path)
        if resolved.substitute is not None:
            stand_ins[base] = substitute_image(base, resolved.substitute, timeout=timeout, client=client)
        base_ids.append(_image_id(api, stand_ins.get(base, base)))
    named = () if dockerfile == "Dockerfile" else (dockerfile,)  # the default keeps existing tags valid
    digest = context_hash(context, extra=repr((*named, sorted((build_args or {}).items()), base_ids)))
    slug = re.sub(r"[^a-z0-9_.-]+", "-", name.lower()).strip("-.")[:80] or "task"
    tag = f"{TASK_IMAGE_REPO}:{slug}-{digest[:16]}"
    if _image_id(api, tag) is not None:
        return tag
    all_labels = {LABEL: "1", HASH_LABEL: digest, **(labels or {})}
    if not stand_ins:
        _build(api, context, dockerfile, tag, all_labels, network, timeout, dockerfile_path, build_args)
        return tag
    # The rewritten Dockerfile lives outside the context; the engine gets it beside the context's files.
    with tempfile.NamedTemporaryFile("w", prefix="agentenvs-dockerfile-", suffix=".substituted") as rewritten:
        rewritten.write(rewrite_bases(text, stand_ins, build_args))
        rewritten.flush()
        _build(api, context, rewritten.name, tag, all_labels, network, timeout, dockerfile_path, build_args)
    return tag


def task_image(task: Task, *, default: str = DEFAULT_IMAGE, client: Any = None) -> str:
    """The image a task runs in: its ``docker_image``, its built ``environment/Dockerfile``, or ``default``."""
    api = (client or docker_client()).api
    env = task.config.environment
    if env.docker_image:
        return local_image(env.docker_image, client=client, where=f"{task.full_id}'s docker_image")
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


def task_bases(task: Task, *, client: Any = None) -> list[BaseImage]:
    """What each base image of ``task`` resolves to here (its ``docker_image``, or its Dockerfile's FROMs)."""
    env = task.config.environment
    if env.docker_image:
        return [resolve_base(env.docker_image, client=client)]
    context = task.dir("environment")
    if context is None or not (context / "Dockerfile").is_file():
        return []
    rows = table()
    return [resolve_base(b, rows=rows, client=client) for b in base_images((context / "Dockerfile").read_text())]


def substitution_warnings(task: Task, *, client: Any = None) -> list[str]:
    """One warning per base image a stand-in replaces: a substitution is never silent."""
    return [w for base in task_bases(task, client=client) if (w := base.warning(task.full_id))]


def local_image(image: str, client: Any = None, *, where: str = "", substitute: bool = True) -> str:
    """``image`` if the engine has it, else (if ``substitute``) its stand-in from the substitution table;
    else an error saying how to provide it (nothing is pulled)."""
    resolved = resolve_base(image, rows=None if substitute else [], client=client)
    if resolved.status == "present":
        return image
    if resolved.substitute is None:
        raise _unresolved_error(image, where or image) if where else missing_image_error(image)
    return substitute_image(image, resolved.substitute, client=client)


def image_search_dirs(image: str, client: Any = None) -> tuple[str, ...]:
    """The program directories ``image``'s PATH adds (a venv's ``bin``), for the verifier's PATH; none for
    a sandbox that is not over a built image (a local template directory)."""
    import docker.errors

    if not image or Path(image).is_dir():
        return ()
    try:
        config = (client or docker_client()).api.inspect_image(image).get("Config") or {}
    except docker.errors.ImageNotFound:
        return ()
    return image_program_dirs(dict(item.split("=", 1) for item in config.get("Env") or [] if "=" in item))


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
