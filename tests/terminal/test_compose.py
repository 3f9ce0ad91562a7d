"""Compose tasks (``environment/docker-compose.yaml``, several services) on the docker backend.

The two tasks in ``compose_tasks/`` are ours, in Harbor's layout: a key-value
service the agent must fill, and a service gated by a healthcheck behind a
one-shot seeding job.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import agentenvs
from agentenvs.core import load_task
from agentenvs.core.errors import TaskFormatError
from agentenvs.sandbox.compose import load_compose
from agentenvs.sandbox.docker_engine import LABEL, sweep_docker
from agentenvs.sandbox.docker_services import COMPOSE_LABEL, SERVICE_LABEL
from agentenvs.validate import validate_tasks
from tests.terminal.harbor_tasks import write_task

TASKS = Path(__file__).parent / "compose_tasks"


def leftovers(api: Any, project: str) -> list[str]:
    """Containers, networks and volumes of one compose project still in the engine."""
    label = {"label": f"{COMPOSE_LABEL}={project}"}
    found = [c["Id"] for c in api.containers(all=True, filters=label)]
    found += [n["Id"] for n in api.networks(filters=label)]
    found += [v["Name"] for v in api.volumes(filters=label).get("Volumes") or []]
    return found


@pytest.mark.parametrize("name", ["kv-fill", "health-gated"])
def test_compose_tasks_validate_on_docker(name: str, docker_client: Any) -> None:
    (result,) = validate_tasks([load_task(TASKS / name)], env_kwargs={"backend": "docker"})
    scores = {variant: check.score for variant, check in result.episodes.items()}
    assert scores == {"oracle": 1.0, "noop": 0.0, "wrong": 0.0}, result.episodes


def host_addresses() -> list[str]:
    """This host's IPv4 address on its default route, if it has one."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))
        return [probe.getsockname()[0]]
    except OSError:
        return []
    finally:
        probe.close()


def test_services_reach_each_other_by_name_and_nothing_else(docker_client: Any) -> None:
    """The agent's container is on the episode's internal network: the service answers by its name;
    a host service listening on every address does not, at the network's gateway nor at the host's."""
    listener = socket.socket()
    listener.bind(("0.0.0.0", 0))
    listener.listen()
    port = listener.getsockname()[1]
    env = agentenvs.make(TASKS / "kv-fill", backend="docker")
    try:
        env.reset(seed=0)
        group = env.unwrapped.sandbox._group
        gateway = docker_client.api.inspect_network(group.network)["IPAM"]["Config"][0]["Gateway"]
        hosts = [gateway, *host_addresses()]
        probe = textwrap.dedent(f"""
            import socket, urllib.request
            print(urllib.request.urlopen("http://kv:8080/health", timeout=10).read().decode())
            for host in "{" ".join(hosts)}".split():
                s = socket.socket(); s.settimeout(3)
                print(host, "reached" if s.connect_ex((host, {port})) == 0 else "unreachable")
        """)
        obs, *_ = env.step(f"python3 -c '{probe}'; echo $KV_URL")
        lines = obs["text"].split()
        assert lines[0] == "ok" and lines[-1] == "http://kv:8080", obs["text"]
        assert lines.count("unreachable") == len(hosts) and "reached" not in lines, obs["text"]
    finally:
        env.close()
        listener.close()


def test_close_leaves_nothing_and_side_services_run_only_their_own_processes(docker_client: Any) -> None:
    api = docker_client.api
    env = agentenvs.make(TASKS / "kv-fill", backend="docker")
    env.reset(seed=0)
    group = env.unwrapped.sandbox._group
    project, kv = group.project, group.containers["kv"]
    assert api.inspect_container(kv)["Config"]["Labels"][SERVICE_LABEL] == "kv"
    assert api.inspect_network(group.network)["Internal"] is True
    actions = env.unwrapped.oracle_actions()
    # The agent also leaves a daemon behind that would empty the store after the seal.
    daemon = 'nohup bash -c \'sleep 2; python3 -c "import urllib.request as u; u.urlopen(u.Request(\\"http://kv:8080/keys/A-100\\", method=\\"DELETE\\"))"\' >/dev/null 2>&1 &'
    for action in [actions[0], daemon, "done"]:
        *_, info = env.step(action)
    assert info["score"] == 1.0
    assert not api.inspect_container(env.unwrapped.sandbox.container_id)["State"]["Running"]  # the agent's is stopped
    commands = [p[-1] for p in api.top(kv)["Processes"]]
    assert commands == ["python3 /srv/server.py"], commands
    env.reset(seed=0)  # a new episode: a new project, the old one gone
    assert env.unwrapped.sandbox._group.project != project
    assert leftovers(api, project) == []
    project = env.unwrapped.sandbox._group.project
    env.close()
    assert leftovers(api, project) == []


def test_the_sweep_removes_what_a_killed_owner_left(docker_client: Any, tmp_path: Path) -> None:
    api = docker_client.api
    script = textwrap.dedent(f"""
        import os, sys, agentenvs
        env = agentenvs.make({str(TASKS / "kv-fill")!r}, backend="docker")
        env.reset(seed=0)
        print(env.unwrapped.sandbox._group.project, flush=True)
        os._exit(0)  # no close, no finalizer: as if killed
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=Path.cwd())
    project = done.stdout.strip().splitlines()[-1]
    assert len(leftovers(api, project)) == 3  # kv, the network, the volume (main is labelled per sandbox)
    sweep_docker()
    assert leftovers(api, project) == []
    assert not api.containers(all=True, filters={"label": [LABEL, f"{COMPOSE_LABEL}={project}"]})


def test_a_compose_task_on_local_says_to_use_docker(tmp_path: Path) -> None:
    env = agentenvs.make(TASKS / "kv-fill", backend="local")
    try:
        with pytest.raises(TaskFormatError, match="needs the docker backend; run it with --backend docker"):
            env.reset(seed=0)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("service", "key"),
    [
        ("    ports:\n      - '8080:8080'\n", "ports"),
        ("    privileged: true\n", "privileged"),
        ("    network_mode: host\n", "network_mode"),
        ("    volumes:\n      - /etc:/host-etc\n", "volumes"),
        ("    volumes:\n      - ../tests:/t\n", "volumes"),
        ("    build:\n      context: ..\n", "build"),
    ],
)
def test_unsupported_keys_are_refused_by_name(tmp_path: Path, service: str, key: str) -> None:
    env_dir = tmp_path / "environment"
    env_dir.mkdir()
    compose = env_dir / "docker-compose.yaml"
    compose.write_text("services:\n  db:\n    image: agentenvs/base:latest\n" + service)
    with pytest.raises(TaskFormatError, match=f"service 'db': `{key}`") as excinfo:
        load_compose(compose, {})
    assert excinfo.value.field == f"services.db.{key}"


def test_a_refused_compose_task_starts_nothing(tmp_path: Path, docker_client: Any) -> None:
    compose = "services:\n  db:\n    image: agentenvs/base:latest\n    ports: ['5432:5432']\n"
    root = write_task(tmp_path / "my-bench" / "ported", files={"environment/docker-compose.yaml": compose})
    before = {n["Id"] for n in docker_client.api.networks(filters={"label": LABEL})}
    env = agentenvs.make(root, backend="docker")
    try:
        with pytest.raises(TaskFormatError, match="`ports` is not supported"):
            env.reset(seed=0)
    finally:
        env.close()
    assert {n["Id"] for n in docker_client.api.networks(filters={"label": LABEL})} <= before


def test_a_service_that_never_gets_healthy_fails_the_start_and_is_removed(tmp_path: Path, docker_client: Any) -> None:
    compose = textwrap.dedent("""
        services:
          main:
            depends_on:
              db: {condition: service_healthy}
          db:
            image: agentenvs/base:latest
            command: sleep infinity
            healthcheck: {test: "exit 1", interval: 200ms, retries: 2}
    """)
    root = write_task(tmp_path / "my-bench" / "sick", files={"environment/docker-compose.yaml": compose})
    before = {c["Id"] for c in docker_client.api.containers(all=True, filters={"label": COMPOSE_LABEL})}
    env = agentenvs.make(root, backend="docker")
    try:
        _, info = env.reset(seed=0)
    except Exception as exc:  # reset may raise the infra error or report it, as the env decides
        message = str(exc)
    else:
        message = str(info.get("error", ""))
    finally:
        env.close()
    assert "service db is unhealthy" in message
    assert {c["Id"] for c in docker_client.api.containers(all=True, filters={"label": COMPOSE_LABEL})} <= before


def test_compose_variables_and_env_files_as_harbor_sets_them(tmp_path: Path) -> None:
    env_dir = tmp_path / "environment"
    env_dir.mkdir()
    (env_dir / "db.env").write_text("# settings\nDB_USER=app\nDB_PASS='secret'\n")
    compose = env_dir / "docker-compose.yaml"
    compose.write_text(
        textwrap.dedent("""
        services:
          main:
            image: ${MAIN_IMAGE_NAME}
            environment: [DB_HOST=db, "LIMIT=${CPUS}"]
          db:
            image: agentenvs/base:latest
            env_file: db.env
            environment: {DB_NAME: "${DB_NAME:-shop}", PRICE: "$$5"}
            healthcheck: {test: [CMD, "true"], interval: 1m30s, timeout: 500ms}
            volumes: [data:/var/lib/db, /scratch]
        volumes: {data: {}}
    """)
    )
    plan = load_compose(compose, {"MAIN_IMAGE_NAME": "agentenvs/task:x", "CPUS": "2"})
    assert plan.main.image == "agentenvs/task:x" and plan.main.environment == {"DB_HOST": "db", "LIMIT": "2"}
    (db,) = plan.services
    assert db.environment == {"DB_USER": "app", "DB_PASS": "secret", "DB_NAME": "shop", "PRICE": "$5"}
    assert db.healthcheck is not None and (db.healthcheck.interval, db.healthcheck.timeout) == (90.0, 0.5)
    assert [(v.source, v.target) for v in db.volumes] == [("data", "/var/lib/db"), ("anon-db-0", "/scratch")]
    assert plan.volumes == ["data", "anon-db-0"]


def test_depends_on_cycles_and_unknown_services_are_refused(tmp_path: Path) -> None:
    compose = tmp_path / "docker-compose.yaml"
    compose.write_text("services:\n  a:\n    image: x\n    depends_on: [b]\n  b:\n    image: x\n    depends_on: [a]\n")
    with pytest.raises(TaskFormatError, match="cycle"):
        load_compose(compose, {})
    compose.write_text("services:\n  a:\n    image: x\n    depends_on: [nowhere]\n")
    with pytest.raises(TaskFormatError, match="unknown service 'nowhere'"):
        load_compose(compose, {})


def test_a_multi_step_compose_task_resumes_on_the_services_network(tmp_path: Path, docker_client: Any) -> None:
    """After a step's seal the agent's container starts again among the same services, their state kept."""
    compose = "services:\n  kv:\n    build: ./kv\n"
    check = (
        '#!/bin/bash\npython3 -c "import json, urllib.request as u; '
        "d = json.loads(u.urlopen('http://kv:8080/keys', timeout=10).read()); "
        "open('/logs/verifier/reward.txt', 'w').write('1' if d == json.load(open('/tests/want.json')) else '0')\"\n"
    )
    put = "python3 -c \"import urllib.request as u; u.urlopen(u.Request('http://kv:8080/keys/{0}', data=b'{0}', method='PUT'))\"\n"
    root = write_task(
        tmp_path / "my-bench" / "kv-steps",
        toml='[[steps]]\nname = "one"\n[[steps]]\nname = "two"\n',
        instruction=None,
        test_sh=check,
        solve_sh=None,
        files={
            "environment/docker-compose.yaml": compose,
            "environment/kv/Dockerfile": (TASKS / "kv-fill/environment/kv/Dockerfile").read_text(),
            "environment/kv/server.py": (TASKS / "kv-fill/environment/kv/server.py").read_text(),
            "steps/one/instruction.md": "Store a=a.",
            "steps/one/tests/want.json": '{"a": "a"}',
            "steps/one/solution/solve.sh": put.format("a"),
            "steps/two/instruction.md": "Store b=b too.",
            "steps/two/tests/want.json": '{"a": "a", "b": "b"}',
            "steps/two/solution/solve.sh": put.format("b"),
        },
    )
    env = agentenvs.make(root, backend="docker")
    try:
        env.reset(seed=0)
        for action in env.unwrapped.oracle_actions():
            *_, info = env.step(action)
        assert [s["reward"] for s in info["task_steps"]] == [1.0, 1.0] and info["score"] == 1.0
    finally:
        env.close()


@pytest.mark.parametrize("where", ["/tmp/fill", "/data/fill"])
def test_a_service_made_to_write_past_the_disk_limit_is_killed(where: str, tmp_path: Path, docker_client: Any) -> None:
    """In its writable layer or in a volume: the agent cannot fill the host's disk through a service."""
    import shutil

    from agentenvs.sandbox.docker_disk import disk_guard

    task = tmp_path / "kv-fill"
    shutil.copytree(TASKS / "kv-fill", task)
    with (task / "task.toml").open("a") as toml:
        toml.write("storage_mb = 32\n")
    api = docker_client.api
    env = agentenvs.make(task, backend="docker")
    try:
        env.reset(seed=0)
        group = env.unwrapped.sandbox._group
        kv = group.containers["kv"]
        watched = list(group.watched)
        assert len(watched) == 2 and set(watched) <= set(disk_guard()._watched)  # the service's layer, its volume
        # What a service does when the agent asks it to store without end, done directly.
        run = api.exec_create(kv, ["sh", "-c", f"head -c 48M /dev/zero > {where}"])
        api.exec_start(run["Id"])
        disk_guard().check_now()
        assert api.inspect_container(kv)["State"]["Running"] is False
    finally:
        env.close()
    assert not (set(watched) & set(disk_guard()._watched)), "closing forgets the watches"
