"""A task whose Dockerfile installs with apt-get and pip runs on both backends; locally over the image
docker built, as shared read-only layers under a copy-on-write view (agentenvs.sandbox.layers)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from agentenvs.core import load_task
from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.images import build_image
from agentenvs.sandbox.layers import image_root, layer_dir
from agentenvs.sandbox.local import LocalSandbox
from agentenvs.sandbox.local_resources import sweep_local_sandboxes
from agentenvs.sandbox.local_system import sandbox_ids
from agentenvs.sandbox.provision import local_build
from tests.terminal.harbor_tasks import BASE, write_task
from tests.terminal.test_harbor_format import play

TASK = Path(__file__).parent / "build_tasks" / "apt-pip"


def _layers() -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in layer_dir().iterdir() if p.is_dir()}


def test_apt_and_pip_build_oracle_scores_one_and_noop_zero(make_env: Any) -> None:
    env = make_env(str(TASK))
    score, info, _ = play(env)
    assert score == 1.0, info
    assert not any("applied without docker" in w for w in info.get("warnings", []))
    assert play(env, ["done"])[0] == 0.0


@pytest.mark.parametrize("backend", ["local"], indirect=True)
def test_local_runs_over_the_image_and_its_writes_stay_in_the_episode(make_env: Any, docker_client: Any) -> None:
    first = make_env(str(TASK))
    first.reset(seed=0)
    sandbox = first.unwrapped.sandbox
    image_id = docker_client.api.inspect_image(sandbox.spec.image)["Id"]
    layers = _layers()
    obs, *_ = first.step("command -v bc; python3 -c 'import tally'; echo $TABLE_SEP; pwd; ls")
    assert "/usr/bin/bc" in obs["text"] and "tab\n/app\nnumbers.txt" in obs["text"]

    obs, *_ = first.step("echo x > /usr/bin/agent-mark && echo y > /etc/agent-mark && apt-get --version | head -1")
    assert obs["exit_code"] == 0 and "apt" in obs["text"]
    obs, *_ = first.step(f"ls {layer_dir()} 2>&1; ls /tmp/agentenvs-sandboxes 2>&1 | head -1")
    assert "No such file" in obs["text"]  # neither the layers nor other sandboxes are in reach
    obs, *_ = first.step("dd if=/dev/zero of=/usr/fill bs=1M count=100 2>&1; echo rc=$?")
    assert "No space left" in obs["text"] and "rc=1" in obs["text"]  # storage_mb = 64 bounds the image's dirs too
    first.reset(seed=0)
    obs, *_ = first.step("ls /usr/bin/agent-mark /etc/agent-mark /usr/fill 2>&1 | grep -c 'No such file'")
    assert obs["text"].strip().endswith("3")
    assert not any((p / "usr/bin/agent-mark").exists() for p in layer_dir().iterdir())

    second = make_env(str(TASK))
    second.reset(seed=0)
    assert docker_client.api.inspect_image(second.unwrapped.sandbox.spec.image)["Id"] == image_id
    assert _layers() == layers  # nothing rebuilt, nothing extracted again
    assert (layer_dir().stat().st_mode & 0o777, layer_dir().stat().st_uid) == (0o700, 0)

    homes = [str(env.unwrapped.sandbox.home) for env in (first, second)]
    first.close()
    second.close()
    mounts = Path("/proc/mounts").read_text()
    assert not any(home in mounts for home in homes)


def test_without_docker_the_dockerfile_is_applied_literally_with_a_warning(tmp_path: Path) -> None:
    root = write_task(tmp_path / "my-bench" / "literal")
    code = (
        "import json, sys, agentenvs\n"
        "env = agentenvs.make(sys.argv[1], backend='local')\n"
        "_, info = env.reset(seed=0)\n"
        "print(json.dumps(info['warnings']))\n"
        "env.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(root)],
        env={**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    warnings = json.loads(done.stdout.strip().splitlines()[-1])
    assert any("no docker engine answers" in w and "install and start docker" in w for w in warnings), warnings


def test_the_seal_undoes_toolchain_changes_and_keeps_the_rest(docker_client: Any) -> None:
    """The docker backend's rule (agent_state.protected_reason), applied to the overlay's upper directory."""
    image = local_build(load_task(str(TASK)))[0]
    with LocalSandbox(SandboxSpec(workdir="/app", storage_mb=64), image=image_root(image)) as sandbox:
        setup = (
            "echo 'print(1)' > /usr/bin/python3 && rm /usr/bin/bc && echo x > /etc/profile.d/evil.sh"
            " && echo listen=8080 > /etc/myapp.conf && rm /etc/debian_version && mkdir -p /srv/data"
            " && echo kept > /srv/data/out.txt && echo work > /app/result.txt"
        )
        assert sandbox.exec(setup).exit_code == 0
        sealed = sandbox.seal()
        after = sealed.exec(
            "python3 -c 'print(40 + 2)'; command -v bc; ls /etc/profile.d/evil.sh 2>&1;"
            " cat /etc/myapp.conf /srv/data/out.txt /app/result.txt; ls /etc/debian_version 2>&1"
        )
        assert after.output.splitlines()[:2] == ["42", "/usr/bin/bc"]
        assert "No such file" in after.output.splitlines()[2]
        assert after.output.splitlines()[3:6] == ["listen=8080", "kept", "work"]
        assert "No such file" in after.output.splitlines()[6]  # a deletion outside the toolchain stays
        assert "/usr/bin/python3" in sealed.sealed_note and "deletion refused" in sealed.sealed_note
        assert "/etc/myapp.conf" not in sealed.sealed_note


@pytest.mark.parametrize("backend", ["local"], indirect=True)
def test_a_user_the_local_sandbox_cannot_be_is_a_warning(tmp_path: Path, make_env: Any, docker_client: Any) -> None:
    dockerfile = BASE + "RUN useradd --create-home builder\nUSER builder\nWORKDIR /workspace\n"
    env = make_env(write_task(tmp_path / "my-bench" / "user", dockerfile=dockerfile))
    score, info, _ = play(env)
    assert score == 1.0
    assert any("USER builder is not honoured locally" in w for w in info["warnings"]), info["warnings"]


CRASH = """
import os, sys
from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.layers import image_root
from agentenvs.sandbox.local import LocalSandbox
from agentenvs.sandbox.local_resources import sweep_local_sandboxes
from agentenvs.sandbox.local_system import sandbox_ids
sandbox = LocalSandbox(SandboxSpec(workdir="/app", storage_mb=64), image=image_root(sys.argv[1]))
sandbox.exec("echo x > /usr/agent-file")
print(sandbox.home, flush=True)
os.kill(os.getpid(), 9)
"""


def test_the_sweep_unmounts_the_overlay_of_a_crashed_owner(docker_client: Any) -> None:
    image = local_build(load_task(str(TASK)))[0]
    done = subprocess.run([sys.executable, "-c", CRASH, image], capture_output=True, text=True, timeout=120)
    home = done.stdout.strip()
    assert home and f"{home}/system" in Path("/proc/mounts").read_text(), done.stderr[-2000:]
    assert sweep_local_sandboxes() >= 1
    assert home not in Path("/proc/mounts").read_text() and not Path(home).exists()


def test_snapshots_carry_the_image_changes_and_restore_puts_them_back(docker_client: Any) -> None:
    image = local_build(load_task(str(TASK)))[0]
    with LocalSandbox(SandboxSpec(workdir="/app", storage_mb=64), image=image_root(image)) as sandbox:
        assert sandbox.exec("echo one > /etc/kept.conf").exit_code == 0
        ref = sandbox.snapshot()
        assert sandbox.exec("echo two > /etc/kept.conf; rm /app/numbers.txt /usr/bin/jq; touch /var/new").exit_code == 0
        sandbox.restore(ref)
        after = sandbox.exec("cat /etc/kept.conf; ls /app; command -v jq; ls /var/new 2>&1")
        assert after.output.splitlines()[:3] == ["one", "numbers.txt", "/usr/bin/jq"]
        assert "No such file" in after.output.splitlines()[3]


WHITEOUTS = """
import json, os, stat, sys
from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.layers import image_root
from agentenvs.sandbox.local import LocalSandbox
root = image_root(sys.argv[1])
top = root.layers[-1]
gone = os.lstat(top / "etc/debian_version")
with LocalSandbox(SandboxSpec(workdir="/app", storage_mb=64), image=root) as sandbox:
    seen = sandbox.exec("ls /usr/share/doc; ls /etc/debian_version 2>&1; stat -c %U /usr/bin/env").output
print(json.dumps({
    "whiteout": [stat.S_ISCHR(gone.st_mode), gone.st_rdev],
    "opaque": os.getxattr(top / "usr/share/doc", "trusted.overlay.opaque").decode(),
    "owners": sorted({os.lstat(p).st_uid for layer in root.layers for p in [layer, *layer.glob("usr/bin/*")]}),
    "mode": oct(os.stat(top.parent).st_mode & 0o777),
    "seen": seen,
}))
"""


def test_layers_are_extracted_once_with_overlay_whiteouts_and_the_sandbox_user_as_owner(
    tmp_path: Path, docker_client: Any
) -> None:
    """A fresh layer directory: the image's deletion and replaced directory become overlayfs's own marks."""
    context = tmp_path / "ctx"
    context.mkdir()
    (context / "Dockerfile").write_text(
        "FROM debian:bookworm-slim\n"
        "RUN rm /etc/debian_version && rm -rf /usr/share/doc && mkdir /usr/share/doc && echo x > /usr/share/doc/only\n"
    )
    image = build_image(context, "test-whiteouts")
    private = Path(tempfile.mkdtemp(prefix="agentenvs-test-layers-"))
    private.chmod(0o755)
    try:
        env = {**os.environ, "AGENTENVS_SANDBOX_DIR": str(private / "sandboxes")}
        done = subprocess.run(
            [sys.executable, "-c", WHITEOUTS, image], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        got = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(private)
    assert got["whiteout"] == [True, 0] and got["opaque"] == "y" and got["mode"] == "0o700"
    assert got["owners"] == [sandbox_ids()[0]]
    assert got["seen"].splitlines()[0] == "only" and "No such file" in got["seen"] and "root" in got["seen"]


def test_layers_of_an_earlier_format_are_removed_and_nothing_else(tmp_path: Path) -> None:
    from agentenvs.sandbox.layers import LAYER_FORMAT, _remove_old_formats

    names = [f"{LAYER_FORMAT - 1}-aa", f"{LAYER_FORMAT}-bb", ".lock-cc", ".tmp-dd"]
    for name in names:
        (tmp_path / name).mkdir()
    _remove_old_formats(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[1:])
