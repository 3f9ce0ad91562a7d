"""A task's Dockerfile built for the local backend (docker build + layer extraction) against docker alone.

For each task, a copy of its ``environment/`` whose Dockerfile gets a fresh
``RUN echo <nonce>`` after ``FROM`` (so no build cache helps) is built with
:func:`~agentenvs.sandbox.images.build_image`, as the docker backend does,
and again for local, where :func:`~agentenvs.sandbox.layers.image_root` then
extracts the new layers. Cold: the first build of that Dockerfile; cached:
the same call again (the tag exists, the layers are extracted). The layers
go to a private directory, empty at the start, so the first task also
extracts its base image's layers and later tasks on the same base share
them. Every image made is removed at the end.

    .venv/bin/python benchmarks/build.py [--tasks tasks/terminal/a,tests/terminal/build_tasks/apt-pip]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

DEFAULT_TASKS = (
    "tasks/terminal/harbor-count-lines",
    "tasks/terminal/log-error-summary",
    "tasks/terminal/sqlite-top-customers",
    "tests/terminal/build_tasks/apt-pip",
)


def _fresh_context(environment: Path, into: Path) -> Path:
    """A copy of ``environment`` whose Dockerfile misses every build cache."""
    shutil.copytree(environment, into)
    lines = (into / "Dockerfile").read_text().splitlines(keepends=True)
    first_from = next(i for i, line in enumerate(lines) if line.upper().startswith("FROM"))
    lines.insert(first_from + 1, f"RUN echo bench-{uuid.uuid4().hex}\n")
    (into / "Dockerfile").write_text("".join(lines))
    return into


def _timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(DEFAULT_TASKS))
    args = parser.parse_args()
    private = Path(tempfile.mkdtemp(prefix="agentenvs-bench-build-"))
    os.chmod(private, 0o755)
    os.environ["AGENTENVS_SANDBOX_DIR"] = str(private / "sandboxes")  # before agentenvs reads it
    from agentenvs.sandbox.docker_engine import docker_client
    from agentenvs.sandbox.images import build_image
    from agentenvs.sandbox.layers import image_root, layer_dir

    api = docker_client().api
    made: list[str] = []
    rows = []
    try:
        for task in args.tasks.split(","):
            name = Path(task).name
            docker_ctx = _fresh_context(Path(task) / "environment", private / f"{name}-docker")
            cold, tag = _timed(build_image, docker_ctx, f"bench-{name}-docker")
            cached, _ = _timed(build_image, docker_ctx, f"bench-{name}-docker")
            made.append(tag)
            local_ctx = _fresh_context(Path(task) / "environment", private / f"{name}-local")

            def local(ctx: Path = local_ctx, label: str = f"bench-{name}-local") -> str:
                built = build_image(ctx, label)
                image_root(built)
                return built

            before = {p.name for p in layer_dir().iterdir()} if layer_dir().is_dir() else set()
            local_cold, local_tag = _timed(local)
            extracted = len({p.name for p in layer_dir().iterdir()} - before)
            local_cached, _ = _timed(local)
            made.append(local_tag)
            rows.append((name, cold, cached, local_cold, local_cached, extracted))
    finally:
        for tag in made:
            api.remove_image(tag, force=True)
        shutil.rmtree(private, ignore_errors=True)
    print("| task | docker build, cold | cached | local (build + layers), cold | cached | layers extracted |")
    print("|---|---|---|---|---|---|")
    for name, cold, cached, local_cold, local_cached, extracted in rows:
        print(
            f"| {name} | {cold:.2f} s | {cached * 1000:.0f} ms | {local_cold:.2f} s | "
            f"{local_cached * 1000:.0f} ms | {extracted} |"
        )


if __name__ == "__main__":
    main()
