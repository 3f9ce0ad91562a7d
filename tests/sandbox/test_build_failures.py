"""A build that fails for want of what this machine lacks is an environment error, said plainly.

``standin_tasks/offline-tool`` is ours: its Dockerfile fetches a tool from a
host that never resolves, hides the failure (``|| true``), and fails two
steps later. The error must name the host, the failing step and the step
where the host showed; the run must record it as an environment error, not
retry it, and say so in its headline.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentenvs.cli import app
from agentenvs.core import MachineLacksError, load_task
from agentenvs.harness.scoring import machine_lacks
from agentenvs.sandbox.build_log import diagnose
from agentenvs.sandbox.images import build_image
from agentenvs.validate import validate_tasks

TASK = Path(__file__).parent / "standin_tasks" / "offline-tool"


def test_the_log_is_read_for_hosts_packages_and_the_failing_step():
    log = "\n".join(
        [
            "Step 1/4 : FROM agentenvs/terminal:latest",
            "Step 2/4 : RUN curl -LsSf https://astral.sh/uv/install.sh | sh",
            "curl: (6) Could not resolve host: astral.sh",
            "Step 3/4 : RUN apt-get install -y jq=9.9 && pip install six==99",
            "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving"
            " 'deb.debian.org'",
            "E: Version '9.9' for 'jq' was not found",
            "ERROR: No matching distribution found for six==99",
            "Step 4/4 : RUN npm install left-pad",
            "npm error notarget No matching version found for left-pad@9.",
            "npm ERR! getaddrinfo ENOTFOUND registry.npmjs.org",
        ]
    )
    found = diagnose(log)
    assert list(found.hosts) == ["astral.sh", "deb.debian.org", "registry.npmjs.org"]
    assert found.hosts["astral.sh"].startswith("step 2/4")
    assert list(found.packages) == ["jq=9.9", "six==99", "left-pad@9."]
    assert found.failed_step.startswith("step 4/4 (RUN npm install")
    text = found.sentence("Dockerfile", None)
    assert text.startswith("needs network: astral.sh, deb.debian.org, registry.npmjs.org; the package mirror lacks")
    assert "showed first at step 2/4" in text
    assert not diagnose("Step 1/2 : RUN false\nThe command returned a non-zero code: 1").environmental


def test_cargo_fetching_its_git_index_is_read_too():
    # from Haruto921/task_comp on the rust stand-in (Debian's cargo 1.63 reads crates.io's index from github.com)
    log = "\n".join(
        [
            "Step 6/16 : RUN cargo build --release",
            "warning: spurious network error (2 tries remaining): failed to resolve address for github.com: Name or"
            " service not known; class=Net (12)",
            "error: failed to get `env_logger` as a dependency of package `stale-read-fix v0.1.0 (/app)`",
        ]
    )
    found = diagnose(log)
    assert list(found.hosts) == ["github.com"] and found.failed_step.startswith("step 6/16 (RUN cargo build")


def test_the_headline_names_what_the_machine_lacked():
    rows = [
        {"error": "MachineLacksError: needs network: tools.example.invalid. Building x failed"},
        {"error": "MachineLacksError: needs network: tools.example.invalid. Building x failed"},
        {"error": "SandboxError: the container died"},
    ]
    assert machine_lacks(rows) == {"needs network: tools.example.invalid": 2}


@pytest.mark.docker
def test_a_hidden_download_failure_is_traced_to_its_host_and_step(docker_client: Any):
    context = TASK / "environment"
    for _ in range(2):  # the second build's steps come from the cache: it is rebuilt without it to say why
        with pytest.raises(MachineLacksError) as caught:
            build_image(context, "offline-tool-test")
        message = str(caught.value)
        assert message.startswith("needs network: tools.example.invalid. Building")
        assert "failed at step 4/" in message and "(RUN /opt/tool/bin/tool --version" in message
        assert "showed first at step 2/" in message
        log = Path(message.split("the whole log: ", 1)[1].split(":\n", 1)[0])
        assert "Could not resolve host: tools.example.invalid" in log.read_text()
        assert "\x1b[" not in message


@pytest.mark.docker
def test_a_run_records_it_as_an_environment_error_once(docker_client: Any, tmp_path: Path):
    (validation,) = validate_tasks([load_task(TASK)], env_kwargs={"backend": "docker"})
    for check in validation.episodes.values():  # validate's table shows each variant unscored, with why
        assert check.score is None and "needs network: tools.example.invalid" in check.detail
    shown = CliRunner().invoke(
        app,
        ["validate", str(TASK), "--backend", "docker", "--no-audit", "--verbose"],
        env={**os.environ, "COLUMNS": "200"},
    )
    assert "needs network: tools.example.invalid" in shown.output
    assert "the whole build log" in shown.output and "Step 1/" in shown.output  # the log itself, not its tail
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        ["run", str(TASK), "--policy", "oracle", "--backend", "docker", "--out", str(out)],
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.exit_code in (0, 1), result.output
    (episode,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert episode["status"] == "infra" and episode["attempts"] == 1  # not retried: it would lack it again
    headline = json.loads((out / "summary.json").read_text())["headline"]
    assert "1 episode could not run on this machine" in headline
    assert "needs network: tools.example.invalid (1)" in headline
    assert "--retry-infra" not in headline
