"""``agentenvs export-rl RUN_DIR``: a run's episodes as training records, in JSON lines or Parquet.

One record per episode (or, with ``per_step``, one per step): which task,
trial and seed, a group id shared by the episodes of one task and seed (the
trials of a ``--same-seed`` run: a group for GRPO-style training), each step's
action, reward, checks, progress and observation, the token ids and logprobs
the policy server sampled (when the run recorded them: ``--return-token-ids``),
the messages the model saw and produced (``--record-messages``), and the final
score, success and error kind. Read from the run directory alone
(docs/run-format.md); docs/training.md describes the records.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from agentenvs.harness.rundir import RunDir, encode_line

FORMATS = ("jsonl", "parquet")
#: Episode-level keys of a per-step record.
EPISODE_KEYS = (
    "task_id", "family", "trial", "seed", "group_id", "status", "success", "score", "error_kind", "error",
    "final_action", "policy", "model", "num_steps", "return",
)  # fmt: skip
#: Keys that hold JSON values of no fixed type, written as JSON text in Parquet.
JSON_KEYS = ("action", "messages", "prompt_messages", "completion_message")

console = Console()


class ExportError(Exception):
    """The run directory cannot be exported as asked (missing, corrupt, or a format that cannot be written)."""


def group_id(task_id: str, seed: int | None) -> str:
    """A stable id shared by every episode of one task and seed, in any run: 16 hex digits of a sha256."""
    return hashlib.sha256(json.dumps([task_id, seed]).encode("utf-8")).hexdigest()[:16]


def _requests(steps: list[dict[str, Any]]) -> list[list[dict[str, Any]] | None]:
    """Each step's request messages, rebuilt from the recorded deltas (``None`` where not recorded)."""
    out: list[list[dict[str, Any]] | None] = []
    previous: list[dict[str, Any]] | None = None
    for step in steps:
        request = (step.get("policy") or {}).get("request")
        if not isinstance(request, dict):
            out.append(None)
            continue
        keep = int(request.get("keep") or 0)
        add = list(request.get("add") or [])
        current = None if keep and (previous is None or keep > len(previous)) else [*(previous or [])[:keep], *add]
        out.append(current)
        previous = current
    return out


class _Images:
    """``sha256:<hex>`` image references of recorded messages, resolved to the trajectory's image files."""

    def __init__(self, run: RunDir, trajectory: Path):
        self.run, self.trajectory = run, trajectory
        self._paths: dict[str, str] | None = None

    def path(self, ref: str) -> str:
        if self._paths is None:
            folder = self.trajectory / "images"
            files = sorted(folder.iterdir()) if folder.is_dir() else []
            self._paths = {
                "sha256:" + hashlib.sha256(f.read_bytes()).hexdigest(): str(f.relative_to(self.run.path)) for f in files
            }
        return self._paths.get(ref, ref)

    def resolve(self, messages: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        if messages is None:
            return None
        out = []
        for message in messages:
            content = message.get("content")
            if isinstance(content, list):
                parts = []
                for part in content:
                    url = (part.get("image_url") or {}).get("url") if isinstance(part, dict) else None
                    if isinstance(url, str) and url.startswith("sha256:"):
                        part = {**part, "image_url": {**part["image_url"], "url": self.path(url)}}
                    parts.append(part)
                message = {**message, "content": parts}
            out.append(message)
        return out


def _step(step: dict[str, Any], request: list[dict[str, Any]] | None, images: _Images) -> dict[str, Any]:
    info = step.get("info") or {}
    policy = step.get("policy") or {}
    return {
        "step": step.get("step"),
        "action": step.get("action"),
        "reward": float(step.get("reward") or 0.0),
        "terminated": bool(step.get("terminated")),
        "truncated": bool(step.get("truncated")),
        "checks": {str(k): bool(v) for k, v in (info.get("checks") or {}).items()},
        "progress": info.get("progress"),
        "action_error": info.get("action_error"),
        "observation": (step.get("observation") or {}).get("text"),
        "prompt_token_ids": step.get("prompt_token_ids"),
        "completion_token_ids": step.get("completion_token_ids"),
        "logprobs": step.get("logprobs"),
        "token_mismatch": step.get("token_mismatch"),
        "prompt_messages": images.resolve(request),
        "completion_message": policy.get("sampled"),
    }


def _mark_extensions(steps: list[dict[str, Any]]) -> None:
    """``extends_previous``: whether a step's prompt ids begin with the previous step's prompt and completion ids
    (then the two are one token sequence; a history the server renders differently breaks it). None without ids."""
    previous: dict[str, Any] | None = None
    for step in steps:
        step["extends_previous"] = None
        if previous is not None and step["prompt_token_ids"] is not None:
            before = (previous["prompt_token_ids"] or []) + (previous["completion_token_ids"] or [])
            if previous["prompt_token_ids"] is not None and previous["completion_token_ids"] is not None:
                step["extends_previous"] = step["prompt_token_ids"][: len(before)] == before
        previous = step


def _faithful(step: dict[str, Any]) -> bool:
    keys = ("prompt_token_ids", "completion_token_ids", "logprobs")
    return all(step[k] is not None for k in keys) and not step["token_mismatch"]


def episode_record(run: RunDir, run_info: dict[str, Any], episode: dict[str, Any]) -> dict[str, Any]:
    """One episode as a training record, its steps with their request messages (``prompt_messages``)."""
    task_id, trial = episode["task_id"], int(episode["trial"])
    lines = run.steps_of(episode)
    start = lines[0] if lines and lines[0].get("step") == 0 else {}
    taken = [s for s in lines if isinstance(s.get("step"), int) and s["step"] >= 1]
    images = _Images(run, run.trajectory_dir(task_id, trial))
    steps = [_step(s, r, images) for s, r in zip(taken, _requests(taken))]
    _mark_extensions(steps)
    last = next((s for s in reversed(steps) if s["prompt_messages"] is not None), None)
    messages = None
    if last is not None:
        messages = [*last["prompt_messages"], *([last["completion_message"]] if last["completion_message"] else [])]
    families = {t.get("id"): t.get("family") for t in run_info.get("tasks") or [] if isinstance(t, dict)}
    policy = run_info.get("policy") or {}
    return {
        "task_id": task_id,
        "family": families.get(task_id) or task_id.partition("/")[0],
        "trial": trial,
        "seed": episode.get("seed"),
        "group_id": group_id(task_id, episode.get("seed")),
        "status": episode.get("status"),
        "success": episode.get("success"),
        "score": episode.get("score"),
        "error_kind": episode.get("error_kind"),
        "error": episode.get("error"),
        "final_action": episode.get("final_action"),
        "policy": policy.get("name"),
        "model": policy.get("model"),
        "num_steps": len(steps),
        "return": sum(s["reward"] for s in steps),
        "token_faithful": bool(steps) and all(_faithful(s) for s in steps),
        "one_sequence": bool(steps)
        and all(_faithful(s) for s in steps)
        and all(s["extends_previous"] for s in steps[1:]),
        "context_trimmed": any(((s.get("policy") or {}).get("request") or {}).get("omitted_turns") for s in taken),
        "instruction": start.get("instruction"),
        "initial_observation": (start.get("observation") or {}).get("text"),
        "messages": messages,
        "steps": steps,
    }


def load_episodes(run_dir: str | Path, *, include_infra: bool = False) -> tuple[list[dict[str, Any]], int]:
    """Every recorded episode as a record (by task and trial), and how many infra episodes were left out."""
    run = RunDir(run_dir)
    if not run.path.is_dir() or not run.exists():
        raise ExportError(f"{run.path} is not a run directory (no run.json); `agentenvs run --out DIR` makes one")
    try:
        run_info = run.read_run()
        episodes = run.read_episodes()
    except (OSError, ValueError) as exc:
        raise ExportError(f"cannot read {run.path}: {exc}") from None
    kept = [e for e in episodes if include_infra or e.get("status") != "infra"]
    kept.sort(key=lambda e: (e["task_id"], int(e["trial"])))
    return [episode_record(run, run_info, e) for e in kept], len(episodes) - len(kept)


def step_rows(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per step: the episode's keys, then the step's."""
    return [{**{k: r[k] for k in EPISODE_KEYS}, **step} for r in records for step in r["steps"]]


def _without_requests(record: dict[str, Any]) -> dict[str, Any]:
    """An episode record keeps its ``messages`` once, not every step's request (that is ``per_step``)."""
    steps = [
        {k: v for k, v in s.items() if k not in ("prompt_messages", "completion_message")} for s in record["steps"]
    ]
    return {**record, "steps": steps}


def _write_jsonl(rows: list[dict[str, Any]], path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        for row in rows:
            fh.write(encode_line(row))
    os.replace(tmp, path)


def _write_parquet(rows: list[dict[str, Any]], path: Path, per_step: bool) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportError(
            "--format parquet needs pyarrow: pip install 'agentenvs[harness]' (or pip install pyarrow)"
        ) from None
    ids, text = pa.list_(pa.int64()), pa.string()
    step_fields = [
        ("step", pa.int64()), ("action", text), ("reward", pa.float64()), ("terminated", pa.bool_()),
        ("truncated", pa.bool_()), ("checks", pa.map_(text, pa.bool_())), ("progress", pa.float64()),
        ("action_error", text), ("observation", text), ("prompt_token_ids", ids), ("completion_token_ids", ids),
        ("logprobs", pa.list_(pa.float64())), ("token_mismatch", text), ("extends_previous", pa.bool_()),
    ]  # fmt: skip
    episode_fields = [
        ("task_id", text), ("family", text), ("trial", pa.int64()), ("seed", pa.int64()), ("group_id", text),
        ("status", text), ("success", pa.bool_()), ("score", pa.float64()), ("error_kind", text), ("error", text),
        ("final_action", text), ("policy", text), ("model", text), ("num_steps", pa.int64()),
        ("return", pa.float64()),
    ]  # fmt: skip
    if per_step:
        fields = [*episode_fields, *step_fields, ("prompt_messages", text), ("completion_message", text)]
    else:
        fields = [
            *episode_fields, ("token_faithful", pa.bool_()), ("one_sequence", pa.bool_()), ("context_trimmed", pa.bool_()),
            ("instruction", text), ("initial_observation", text), ("messages", text),
            ("steps", pa.list_(pa.struct(step_fields))),
        ]  # fmt: skip

    def encoded(row: dict[str, Any]) -> dict[str, Any]:
        out = {k: (None if v is None else json.dumps(v, ensure_ascii=False)) if k in JSON_KEYS else v
               for k, v in row.items()}  # fmt: skip
        if "steps" in out:
            out["steps"] = [encoded(s) for s in out["steps"]]
        return out

    try:
        table = pa.Table.from_pylist([encoded(r) for r in rows], schema=pa.schema(fields))
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise ExportError(f"cannot build the Parquet table: {exc}") from None
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def export_rl(
    run_dir: str | Path,
    fmt: str = "jsonl",
    out: str | Path | None = None,
    *,
    per_step: bool = False,
    include_infra: bool = False,
) -> tuple[Path, int, int]:
    """Write the run's training records; returns (the file, records written, infra episodes left out)."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    records, skipped = load_episodes(run_dir, include_infra=include_infra)
    rows = step_rows(records) if per_step else [_without_requests(r) for r in records]
    path = Path(out) if out is not None else Path(run_dir) / f"export-rl{'-steps' if per_step else ''}.{fmt}"
    if path.is_dir():
        raise ExportError(f"--out {path} is a directory; give a file path")
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        _write_jsonl(rows, path)
    else:
        _write_parquet(rows, path, per_step)
    return path, len(rows), skipped


def export_rl_command(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    fmt: Annotated[str, typer.Option("--format", help="jsonl or parquet")] = "jsonl",
    out: Annotated[
        Path | None, typer.Option(help="the file to write (default: RUN_DIR/export-rl[-steps].FORMAT)")
    ] = None,
    per_step: Annotated[
        bool, typer.Option(help="one record per step (with the step's request messages), not per episode")
    ] = False,
    include_infra: Annotated[
        bool, typer.Option(help="also the episodes that ended as infra errors (never scored)")
    ] = False,
) -> None:
    """Write a run's episodes as training records: tokens or messages, rewards, checks, scores, group ids."""
    try:
        path, count, skipped = export_rl(run_dir, fmt, out, per_step=per_step, include_infra=include_infra)
    except ExportError as exc:
        console.print(Text.assemble(("error: ", "red"), str(exc)), highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    kind = "step" if per_step else "episode"
    console.print(Text(f"wrote {count} {kind} record{'s' * (count != 1)} to {path}"), soft_wrap=True)
    if skipped:
        console.print(
            Text(f"left out {skipped} infra episode{'s' * (skipped != 1)} (never scored; --include-infra keeps them)")
        )
