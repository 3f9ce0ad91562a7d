"""SWE-bench interoperability: predictions out, instances in.

``export_preds`` turns a run directory into SWE-bench's ``preds.jsonl``
(``instance_id``, ``model_name_or_path``, ``model_patch``), so the official
harness can re-grade a run. ``import_instances`` reads instance files as the
dataset publishes them (a JSON list, one JSON object, or JSONL) and writes
task directories that run in the instance's image (``sweb.eval.<arch>.<id>``)
with the repository at ``/testbed``; an image that is not in the local engine
fails at reset with a message saying how to get it.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

from agentenvs.core.errors import TaskFormatError
from agentenvs.envs.swe.instance import GOLD_PATCH, TEST_PATCH, SWEInstance, parse_instance

#: SWE-bench's local image name for an instance (the registry copies spell ``__`` as ``_1776_``).
IMAGE_TEMPLATE = "sweb.eval.{arch}.{instance_id}:latest"
#: SWE-bench images keep the test environment in conda env ``testbed``.
SWEBENCH_TEST_CMD = (
    "if [ -f /opt/miniconda3/bin/activate ]; then . /opt/miniconda3/bin/activate testbed; fi; "
    '"$(command -v python || command -v python3)" -m pytest'
)


def _arch() -> str:
    return "arm64" if platform.machine() in ("arm64", "aarch64") else "x86_64"


def swebench_image(instance_id: str, template: str = IMAGE_TEMPLATE) -> str:
    return template.format(arch=_arch(), instance_id=instance_id.lower())


def load_instances(path: str | Path) -> list[SWEInstance]:
    """Instances from a SWE-bench JSON list, a single JSON object, or JSONL."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFormatError(str(path), f"cannot read the instance file: {exc.strerror}") from None
    records: list[Any]
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TaskFormatError(str(path), f"not valid JSON: {exc}") from None
    else:
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                if number == 1 and stripped.startswith("{"):
                    try:
                        records = [json.loads(text)]
                        break
                    except json.JSONDecodeError:
                        pass
                raise TaskFormatError(f"{path}:{number}", f"not a JSON object: {exc.msg}") from None
    if not records:
        raise TaskFormatError(str(path), "holds no instances")
    instances = []
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise TaskFormatError(f"{path}:{number}", f"an instance is a JSON object, got {type(record).__name__}")
        instances.append(parse_instance(record, f"{path}:{number}"))
    return instances


def _toml(value: object) -> str:
    if isinstance(value, list):
        return "[\n" + "".join(f"    {json.dumps(v)},\n" for v in value) + "]" if value else "[]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def import_instances(
    path: str | Path, out: str | Path, *, image_template: str = IMAGE_TEMPLATE, test_cmd: str = SWEBENCH_TEST_CMD
) -> list[Path]:
    """Write one task directory per instance under ``out``; returns them.

    The repository is expected in the instance's image at ``/testbed``, as
    SWE-bench builds it; run these tasks with ``backend="docker"``.
    """
    out = Path(out)
    written = []
    for instance in load_instances(path):
        task_dir = out / instance.instance_id
        for sub in ("solution", "tests"):
            (task_dir / sub).mkdir(parents=True, exist_ok=True)
        (task_dir / "instruction.md").write_text(
            instance.problem_statement or f"Resolve {instance.instance_id}.", encoding="utf-8"
        )
        if instance.patch:
            (task_dir / "solution" / GOLD_PATCH).write_text(instance.patch, encoding="utf-8")
        (task_dir / "tests" / TEST_PATCH).write_text(instance.test_patch, encoding="utf-8")
        image = instance.image or swebench_image(instance.instance_id, image_template)
        swe = {
            "instance_id": instance.instance_id,
            "repo": instance.repo,
            "base_commit": instance.base_commit,
            "version": instance.version,
            "created_at": instance.created_at,
            "environment_setup_commit": instance.environment_setup_commit,
            "test_cmd": test_cmd
            if instance.test_cmd == SWEInstance.model_fields["test_cmd"].default
            else instance.test_cmd,
            "repo_in_image": True,
            "image": image,
            "FAIL_TO_PASS": instance.FAIL_TO_PASS,
            "PASS_TO_PASS": instance.PASS_TO_PASS,
        }
        lines = [
            f"id = {json.dumps(instance.instance_id)}",
            'family = "swe"',
            'tags = ["swe-bench"]',
            "",
            "[environment]",
            f"docker_image = {json.dumps(image)}",
            'workdir = "/testbed"',
            "",
            "[swe]",
        ]
        lines += [f"{key} = {_toml(value)}" for key, value in swe.items()]
        (task_dir / "task.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(task_dir)
    return written


def export_preds(
    run_dir: str | Path, out: str | Path | None = None, *, model_name: str | None = None, trial: int = 0
) -> Path:
    """Write SWE-bench's ``preds.jsonl`` for the SWE episodes of one trial of a run."""
    from agentenvs.harness.rundir import RunDir  # the run format's one reader

    run = RunDir(run_dir)
    meta = run.read_run()
    policy = meta.get("policy") or {}
    name = model_name or policy.get("model") or policy.get("name") or "agentenvs"
    target = Path(out) if out is not None else run.path / "preds.jsonl"
    preds = []
    for episode in sorted(run.read_episodes(), key=lambda e: e.get("task_id", "")):
        task_id = str(episode.get("task_id", ""))
        if not task_id.startswith("swe/") or int(episode.get("trial", 0)) != trial:
            continue
        final = _final_info(run.steps_of(episode), task_id.rsplit("/", 1)[-1])
        if final is None:
            raise ValueError(
                f"{task_id} trial {trial}: the run recorded no model_patch (was it an SWE episode that ended?)"
            )
        patch, instance_id = final
        preds.append({"instance_id": instance_id, "model_name_or_path": name, "model_patch": patch})
    if not preds:
        raise ValueError(f"{run_dir} has no finished SWE episodes for trial {trial}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
    return target


def _final_info(steps: list[dict[str, Any]], task_name: str) -> tuple[str, str] | None:
    """The last recorded ``model_patch`` and its ``instance_id`` (the task's name when unrecorded)."""
    found = None
    for record in steps:
        info = record.get("info") or {}
        if isinstance(info.get("model_patch"), str):
            found = (info["model_patch"], str(info.get("instance_id") or task_name))
    return found
