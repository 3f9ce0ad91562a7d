from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import harness_toy  # noqa: E402

TARGETS = [1, 2, 3]


@pytest.fixture(scope="session", autouse=True)
def toy_family() -> None:
    harness_toy.register(TARGETS)


def run_config(tasks: list[str], policy: str, **kwargs):
    """A small, fast RunConfig for tests."""
    from agentenvs.harness.config import PolicySpec, RunConfig

    options = kwargs.pop("options", {})
    defaults = {"trials": 1, "concurrency": 2, "infra_retry_delay_sec": 0.0}
    return RunConfig(tasks=tasks, policy=PolicySpec(name=policy, options=options), **{**defaults, **kwargs})


ALL_TOY = [f"toy/reach-{n}" for n in TARGETS]


def rewrite_steps(run_path: Path, task_id: str, trial: int, edit) -> None:
    """Replace an episode's recorded steps by ``edit(steps)``: the new lines go to a steps file of their own
    and the episode's line points at them, as the runner would have written them."""
    from agentenvs.harness.rundir import RunDir, encode_line

    run = RunDir(run_path)
    episodes = run.read_episodes()
    record = next(e for e in episodes if (e["task_id"], e["trial"]) == (task_id, trial))
    data = b"".join(encode_line(s) for s in edit(run.steps_of(record)))
    name = "trajectories/steps-900.jsonl"
    offset = (run_path / name).stat().st_size if (run_path / name).exists() else 0
    with open(run_path / name, "ab") as fh:
        fh.write(data)
    record["steps_at"] = {"file": name, "offset": offset, "length": len(data)}
    run.episodes_jsonl.write_bytes(b"".join(encode_line(e) for e in episodes))
