"""The verifier's gate: package registries reachable from a sealed sandbox, nothing else, and an
honest environment error when a verifier needs a host it cannot have.

``standin_tasks/active-users``'s test.sh installs pytest with pip at
verification time, as Harbor tasks do; ``standin_tasks/remote-checker``'s fetches
an installer from a host on no list of ours.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentenvs.cli import app
from agentenvs.core import load_task
from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.egress import DEFAULT_ALLOW, REGISTRIES, EgressGate, lacking_hosts, verifier_allow_list
from agentenvs.validate import validate_tasks

TASKS = Path(__file__).parent / "standin_tasks"
FETCH = (
    "import sys, urllib.request\n"
    "try:\n"
    "    print(urllib.request.urlopen(sys.argv[1], timeout=20).status)\n"
    "except Exception as exc:\n"
    "    print('failed', exc)\n"
)


def _sandbox(backend: str) -> Any:
    if backend == "docker":
        from agentenvs.sandbox.docker import DockerSandbox

        return DockerSandbox(SandboxSpec(image="agentenvs/terminal:latest"))
    from agentenvs.sandbox.local import LocalSandbox

    return LocalSandbox(SandboxSpec())


def _fetch(sandbox: Any, url: str, env: dict[str, str] | None = None) -> str:
    sandbox.put(FETCH.encode(), "/tmp/fetch.py")
    return sandbox.exec(["python3", "/tmp/fetch.py", url], timeout=60, env=env or {}).stdout.strip()


def _own_address() -> str:
    """This host's address on its default route (no packet is sent)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))
        return str(probe.getsockname()[0])
    finally:
        probe.close()


@pytest.fixture
def host_service():
    """A service on the host's loopback that nothing in a sandbox may reach."""
    server = socket.socket()
    server.bind(("0.0.0.0", 0))
    server.listen(4)
    hits: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            hits.append(1)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], hits
    server.close()


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_gate_lets_through_only_the_list_and_never_the_hosts_loopback(backend: str, host_service):
    port, hits = host_service
    own = _own_address()
    with _sandbox(backend) as sandbox:
        assert _fetch(sandbox, "https://pypi.org/simple/six/").startswith("failed")  # no network of its own
        with EgressGate(sandbox.network_namespace(), (*REGISTRIES, "127.0.0.2", own)) as gate:
            env = gate.env()
            assert _fetch(sandbox, "https://pypi.org/simple/six/", env) == "200"
            assert _fetch(sandbox, "http://deb.debian.org/debian/dists/bookworm/Release", env) == "200"
            assert "403" in _fetch(sandbox, "https://astral.sh/uv/install.sh", env)
            assert "502" in _fetch(sandbox, f"http://127.0.0.2:{port}/", env)  # on the list, yet the host's
            assert "502" in _fetch(sandbox, f"http://{own}:{port}/", env)
        outcomes = [(a.host, a.outcome) for a in gate.attempts]
        assert outcomes == [
            ("pypi.org", "allowed"),
            ("deb.debian.org", "allowed"),
            ("astral.sh", "refused"),
            ("127.0.0.2", "unreachable"),
            (own, "unreachable"),
        ]
        assert "this host's own" in gate.attempts[-1].reason and hits == []
        assert _fetch(sandbox, "https://pypi.org/simple/six/", env).startswith("failed")  # gone with the gate


def test_harbors_standard_verifier_may_fetch_its_test_runner():
    # Terminal-Bench 2's test.sh: `curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh`, then
    # `uvx -p 3.13 -w pytest ...`; the installer, uv and that Python come from astral.sh, Astral's mirror or
    # GitHub's releases. Our list refused them on every machine, so those tasks could never pass here.
    # Whether they answer is the machine's business (this one resolves none of them): never refused.
    urls = (
        "https://astral.sh/uv/0.9.5/install.sh",
        "https://releases.astral.sh/github/uv/releases/download/0.9.5/uv-x86_64-unknown-linux-gnu.tar.gz",
        "https://github.com/astral-sh/python-build-standalone/releases/download/",
        "https://release-assets.githubusercontent.com/",
    )
    with _sandbox("local") as sandbox:
        with EgressGate(sandbox.network_namespace(), DEFAULT_ALLOW) as gate:
            for url in urls:
                _fetch(sandbox, url, gate.env())
    seen = {attempt.host: attempt.outcome for attempt in gate.attempts}
    assert set(seen) == {"astral.sh", "releases.astral.sh", "github.com", "release-assets.githubusercontent.com"}
    assert set(seen.values()) <= {"allowed", "unreachable"}, seen


def test_uv_is_told_to_trust_the_system_certificates_as_pip_does():
    # found on Dhruvpatel2684/metrics-aggregation-repair: `uv run --with pytest` in test.sh failed with
    # "invalid peer certificate: UnknownIssuer" behind this machine's TLS-inspecting proxy
    with _sandbox("local") as sandbox:
        with EgressGate(sandbox.network_namespace(), ()) as gate:
            env = gate.env()
    assert env["UV_NATIVE_TLS"] == env["UV_SYSTEM_CERTS"] == "1"  # older uv reads the first, 0.11 on the second
    assert env["HTTPS_PROXY"] == env["https_proxy"] == f"http://127.0.0.1:{gate.port}"


def _tests_and_closed_gate(tmp_path: Path, test_sh: str, urls: tuple[str, ...]) -> tuple[Path, EgressGate]:
    """A task's tests folder holding ``test.sh``, and a gate that let nothing through after ``urls`` were asked."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test.sh").write_text(test_sh)
    with _sandbox("local") as sandbox:
        with EgressGate(sandbox.network_namespace(), ()) as gate:
            for url in urls:
                _fetch(sandbox, url, gate.env())
    return tests, gate


def test_only_hosts_the_tasks_own_files_ask_for_count(tmp_path: Path):
    urls = ("https://astral.sh/uv/install.sh", "https://agent-asked.example.org/", "https://pypi.org/")
    tests, gate = _tests_and_closed_gate(tmp_path, "curl -LsSf https://astral.sh/uv/install.sh | sh\n", urls)
    # The agent's code (run by tests) asking for a host cannot make its failure an environment error;
    # pypi.org counts only when the task's files use a package tool.
    assert list(lacking_hosts(gate, [tests])) == ["astral.sh"]
    (tests / "test.sh").write_text("pip install pytest\n")
    assert list(lacking_hosts(gate, [tests])) == ["pypi.org"]


def test_a_host_the_tasks_own_settings_refuse_is_not_the_machines_lack(tmp_path: Path):
    # found on moodi-mercor/terminal-bench-qc's clean-records-etl: allow_internet = false, and test.sh
    # pip-installs pytest; on Harbor that fails too, so it is the task's 0, not "needs network: pypi.org"
    tests, gate = _tests_and_closed_gate(
        tmp_path, "python3 -m pip install pytest\n", ("https://pypi.org/simple/pytest/",)
    )
    assert [a.outcome for a in gate.attempts] == ["refused"]
    assert lacking_hosts(gate, [tests], task_restricts=True) == {}
    assert list(lacking_hosts(gate, [tests])) == ["pypi.org"]  # refused by our default list: the machine's


def test_what_a_verifier_may_reach_follows_the_tasks_network_settings(tmp_path: Path):
    def task(text: str) -> Any:
        folder = tmp_path / str(abs(hash(text)))
        (folder / "tests").mkdir(parents=True)
        (folder / "task.toml").write_text('version = "1.0"\n' + text)
        (folder / "instruction.md").write_text("x\n")
        return load_task(folder)

    default = verifier_allow_list(task(""))
    assert default == verifier_allow_list(task("[environment]\nallow_internet = true\n")) == DEFAULT_ALLOW
    assert set(REGISTRIES) < set(default) and {"astral.sh", "github.com"} < set(default)
    assert verifier_allow_list(task("[environment]\nallow_internet = false\n")) == ()
    assert verifier_allow_list(task('[verifier]\nnetwork_mode = "no-network"\n')) == ()
    assert verifier_allow_list(task('[verifier]\nallowed_hosts = ["example.org"]\n')) == ("example.org",)


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_verifier_that_needs_an_unreachable_host_is_an_environment_error(backend: str):
    (result,) = validate_tasks([load_task(TASKS / "remote-checker")], env_kwargs={"backend": backend})
    for variant, check in result.episodes.items():
        assert check.score is None, (variant, check)
        assert "needs network: tools.example.org" in check.detail
        assert "not on the verifier's allow-list" in check.detail


@pytest.mark.docker
@pytest.mark.parametrize("backend", ["local", "docker"])
def test_a_docker_hub_task_installs_with_apt_and_pip_on_both_backends(backend: str, docker_client: Any):
    """FROM python:3.12-slim (a stand-in), apt-get and pip in the build, pip install pytest in test.sh."""
    (result,) = validate_tasks([load_task(TASKS / "active-users")], env_kwargs={"backend": backend})
    scores = {variant: check.score for variant, check in result.episodes.items()}
    assert scores == {"oracle": 1.0, "noop": 0.0, "wrong": 0.0}, result.episodes


@pytest.mark.docker
def test_a_run_counts_a_verifier_without_its_host_apart(docker_client: Any, tmp_path: Path):
    out = tmp_path / "run"
    shown = CliRunner().invoke(
        app,
        ["run", str(TASKS / "remote-checker"), "--policy", "oracle", "--backend", "docker", "--out", str(out)],
        env={**os.environ, "COLUMNS": "200"},
    )
    assert shown.exit_code in (0, 1), shown.output
    (episode,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert episode["status"] == "infra" and episode["attempts"] == 1
    assert "needs network: tools.example.org (1)" in json.loads((out / "summary.json").read_text())["headline"]
