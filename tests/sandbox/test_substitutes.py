"""Base images that cannot be pulled: the substitution table, its stand-ins, their warnings, `agentenvs images`.

``standin_tasks/active-users`` is ours, written as for Docker Hub: ``FROM
python:3.12-slim``, an ``apt-get install`` and a ``pip install`` in its build.
This machine has no python image, so the table's row stands in for it.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import agentenvs
from agentenvs.cli import app
from agentenvs.core import load_task
from agentenvs.core.errors import SandboxError, TaskFormatError
from agentenvs.sandbox.images import SUBSTITUTE_LABEL, build_image, rewrite_bases, task_image
from agentenvs.sandbox.substitutes import USER_TABLE_ENV, find_substitute, normalize, table

TASK = Path(__file__).parent / "standin_tasks" / "active-users"


def test_references_are_matched_as_docker_names_them():
    assert normalize("python") == "python:latest"
    assert normalize("docker.io/library/python:3.12-slim") == "python:3.12-slim"
    assert normalize("localhost:5000/tool") == "localhost:5000/tool:latest"
    assert normalize("node:20@sha256:abc") == "node:20"
    assert find_substitute("docker.io/library/golang:1.22.7-bookworm").match == "golang:*"
    assert find_substitute("example.invalid/never:1") is None


def test_the_golang_stand_in_has_the_build_tools_the_official_image_has():
    # the official golang:*-bookworm image installs them; a task's `RUN make build` relied on make
    row = find_substitute("golang:1.22.12-bookworm", table())
    assert {"golang-go", "make", "gcc", "g++", "libc6-dev", "pkg-config"} <= set(row.packages)


def _read_image_file(docker_client: Any, tag: str, path: str) -> str:
    # From the image's filesystem, not a `cat` through the container's log: under load CI's docker
    # handed back a 436 kB log cut short, and the test failed on certificates the image did have.
    container = docker_client.containers.create(tag, ["true"], network_disabled=True)
    try:
        stream, _ = container.get_archive(path)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
            member = archive.next()
            assert member is not None and member.isfile(), f"{path} in {tag} is not a file"
            return archive.extractfile(member).read().decode()
    finally:
        container.remove(force=True)


@pytest.mark.docker
@pytest.mark.parametrize("image", ["agentenvs/base:latest", "agentenvs/terminal:latest", "active-users stand-in"])
def test_a_pip_or_uv_the_task_installs_trusts_what_the_host_trusts(docker_client: Any, image: str):
    # Power70/harbor-hell: `pip install --upgrade pip==24.0` then pip's own certifi refused the host's
    # TLS-inspecting proxy ("self-signed certificate in certificate chain") where Debian's pip worked.
    # Every image is built on our system stage, stand-ins and task images of our own included.
    tag = task_image(load_task(TASK)) if image == "active-users stand-in" else image
    env = dict(item.split("=", 1) for item in docker_client.api.inspect_image(tag)["Config"]["Env"])
    assert env["UV_NATIVE_TLS"] == env["UV_SYSTEM_CERTS"] == "1"
    bundle = _read_image_file(docker_client, tag, env["PIP_CERT"])
    host = (Path(__file__).parents[2] / ".cache" / "host-ca-certificates.crt").read_text()
    host_certs = [block for block in host.split("-----END CERTIFICATE-----") if "BEGIN CERTIFICATE" in block]
    assert "BEGIN CERTIFICATE" in bundle and all(
        block.split("-----BEGIN CERTIFICATE-----")[1] in bundle for block in host_certs
    )


@pytest.mark.parametrize(
    "image",
    [
        "python:3.11-slim",
        "debian:12",
        "buildpack-deps:bookworm",
        "gcc:13",
        "golang:1.22",
        "rust:1.75",
        "ubuntu:24.04",
        "node:20",
    ],
)
def test_no_stand_in_keeps_our_bases_agent_user(image: str):
    # EquilibriaW/Reverse_Engineering_Agent: `RUN useradd -m -u 1000 agent` failed on the python stand-in
    # ("user 'agent' already exists"); ubuntu's and node's images have their own uid 1000 user instead
    recipe = find_substitute(image, table()).dockerfile()
    own = {"ubuntu:24.04": "ubuntu", "node:20": "node"}.get(image)
    assert (f"usermod --login {own} " in recipe) if own else ("userdel --remove agent" in recipe)


def test_official_images_under_their_mirrors_names_match_as_the_short_name():
    ecr = "public.ecr.aws/docker/library/ubuntu:24.04@sha256:0d39fcc8335d6d74d5502f6df2d30119ff4790ebbb60b364818d5112d9e3e932"
    assert normalize(ecr) == "ubuntu:24.04"
    assert find_substitute(ecr).match == "ubuntu:*"
    assert find_substitute("public.ecr.aws/docker/library/python:3.13-slim-bookworm").match == "python:*"
    assert normalize("mirror.gcr.io/library/node:20") == "node:20"
    # another repository on the same registry is not an official image
    assert normalize("public.ecr.aws/someone/ubuntu:24.04") == "public.ecr.aws/someone/ubuntu:24.04"
    assert find_substitute("public.ecr.aws/someone/ubuntu:24.04") is None


def test_only_the_from_images_change_in_a_rewrite():
    text = "ARG V=3.12\nFROM python:${V}-slim AS build\nRUN pip install a \\\n    b\nFROM build\nFROM debian:bookworm-slim\n"
    out = rewrite_bases(text, {"python:3.12-slim": "agentenvs/substitute:p"})
    assert out == text.replace("python:${V}-slim", "agentenvs/substitute:p")


def test_the_users_rows_come_first_and_a_broken_table_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    mine = tmp_path / "mine.toml"
    mine.write_text('[[substitute]]\nmatch = "python:3.12*"\nbase = "agentenvs/swe:latest"\nnote = "mine"\n')
    monkeypatch.setenv(USER_TABLE_ENV, str(mine))
    assert find_substitute("python:3.12-slim").note == "mine"
    assert find_substitute("python:3.11").base == "agentenvs/base:latest"
    mine.write_text('[[substitute]]\nmatch = "x:*"\nbase = "b"\npackages = ["ok", "rm -rf /"]\n')
    with pytest.raises(TaskFormatError, match=r"mine\.toml.*not Debian package names: rm -rf /"):
        table()
    mine.write_text('[[substitute]]\nmatch = "x:*"\nbasse = "b"\n')
    with pytest.raises(TaskFormatError, match=r"mine\.toml.*basse"):
        table()


@pytest.mark.docker
def test_a_users_row_stands_in_and_an_unmatched_image_says_where_to_add_one(
    docker_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    mine = tmp_path / "substitutes.toml"
    mine.write_text(
        '[[substitute]]\nmatch = "example.invalid/tool:*"\nbase = "agentenvs/base:latest"\n'
        'run = ["echo stood-in > /stand-in"]\nenv = { TOOL_HOME = "/opt/tool" }\nnote = "for the test"\n'
    )
    monkeypatch.setenv(USER_TABLE_ENV, str(mine))
    (tmp_path / "Dockerfile").write_text("FROM example.invalid/tool:2\nRUN cat /stand-in > /copied\n")
    tag = build_image(tmp_path, "standin-demo", network=False)
    try:
        config = docker_client.api.inspect_image(tag)["Config"]
        assert "TOOL_HOME=/opt/tool" in config["Env"]
        assert build_image(tmp_path, "standin-demo", network=False) == tag  # cached
        out = docker_client.containers.run(tag, ["cat", "/copied"], remove=True, network_disabled=True)
        assert out == b"stood-in\n"
        base = config.get("Image") or ""
        stand_ins = docker_client.api.images(filters={"label": f"{SUBSTITUTE_LABEL}=example.invalid/tool:2"})
        assert stand_ins, base
    finally:
        docker_client.api.remove_image(tag, force=True)
    (tmp_path / "Dockerfile").write_text("FROM example.invalid/other:1\n")
    with pytest.raises(SandboxError, match=rf"other:1.*no row of the substitution table.*{mine}"):
        build_image(tmp_path, "standin-missing", network=False)


@pytest.mark.docker
def test_a_task_for_docker_hubs_python_runs_on_its_stand_in_and_says_so(docker_client: Any):
    task = load_task(TASK)
    first = task_image(task)
    created = docker_client.api.inspect_image(first)["Created"]
    assert task_image(task) == first
    assert docker_client.api.inspect_image(first)["Created"] == created  # the second build was a cache hit
    env = agentenvs.make(TASK, backend="docker")
    try:
        _, info = env.reset(seed=0)
        (warning,) = [w for w in info.get("warnings", []) if "python:3.12-slim" in w]
        assert "agentenvs/base:latest + python3-pip" in warning and "stands in" in warning
    finally:
        env.close()


@pytest.mark.docker
def test_images_lists_what_each_base_resolves_to(docker_client: Any, tmp_path: Path):
    runner = CliRunner()
    env = {**os.environ, "COLUMNS": "200"}
    shown = runner.invoke(app, ["images", str(TASK)], env=env)
    assert shown.exit_code == 0, shown.output
    assert "agentenvs/terminal:latest" in shown.output
    assert "python:3.12-slim" in shown.output and "stand-in" in shown.output
    broken = tmp_path / "needs-nothing-here"
    (broken / "environment").mkdir(parents=True)
    (broken / "task.toml").write_text('version = "1.0"\n')
    (broken / "instruction.md").write_text("Do nothing.\n")
    (broken / "environment" / "Dockerfile").write_text("FROM example.invalid/absent:1\n")
    missing = runner.invoke(app, ["images", "--json", str(TASK), str(broken)], env=env)
    assert missing.exit_code == 1, missing.output
    rows = {row["image"]: row["status"] for row in json.loads(missing.output)["tasks"]}
    assert rows == {"python:3.12-slim": "substitute", "example.invalid/absent:1": "missing"}
