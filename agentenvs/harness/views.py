"""Terminal views of run directories: the summary table, one trajectory, runs side by side."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentenvs.harness.rendering import cut, diff_lines, episode_view, families, family_of, tokens_text
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.scoring import episodes_frame, group_metrics, summarize


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _ci(value: list[float] | None) -> str:
    return "" if not value else f"[{100 * value[0]:.0f}, {100 * value[1]:.0f}]"


def summary_table(summary: dict[str, Any]) -> Table:
    """Overall, then per family and difficulty: success with CI, score, steps, time, infra; the columns that
    would repeat another (infra as failure with no infra, pass@1) or say nothing (no tokens, no flags) are
    left out, so the table fits a terminal of 80 columns (100 with every column). The report and ``--json`` keep them all."""
    policy = summary["run"]["policy"].get("name", "?")
    overall = summary["overall"]
    table = Table(
        title=f"{summary['run']['path']} (policy {policy}, {summary['recorded']}/{summary['planned']} episodes)",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    columns: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("n", lambda g: str(g["scored"])),
        ("success [95% CI]", lambda g: f"{_pct(g['success_rate'])} {_ci(g['success_ci95'])}"),
    ]
    if overall["infra"]:
        columns.append(("infra as fail", lambda g: _pct(g["success_rate_infra_as_failure"])))
    columns.append(("score", lambda g: "-" if g["mean_score"] is None else f"{g['mean_score']:.2f}"))
    if len(overall["pass_at_k"]) > 1:
        columns.append(("pass@k", lambda g: " ".join(f"@{k}={v:.2f}" for k, v in g["pass_at_k"].items() if k != "1")))
    columns += [
        ("steps", lambda g: "-" if g["steps_mean"] is None else f"{g['steps_mean']:.1f}"),
        ("time s", lambda g: "-" if g["time_mean_sec"] is None else f"{g['time_mean_sec']:.1f}"),
    ]
    if overall["tokens_total"]:
        columns.append(("tokens", lambda g: str(g["tokens_total"])))
    columns.append(("infra", lambda g: str(g["infra"])))
    if overall["flagged"]:
        columns.append(("flagged", lambda g: str(g["flagged"])))
    table.add_column("group", no_wrap=True)
    for name, _ in columns:
        table.add_column(name, justify="right")
    rows = [("overall", overall), *summary["by_family"].items(), *summary["by_difficulty"].items()]
    for name, group in rows:
        table.add_row(name, *(cell(group) for _, cell in columns))
    return table


def show_episodes(run: RunDir, console: Console) -> None:
    table = Table(title=f"episodes of {run.path}")
    for column in ("task", "trial", "status", "success", "score", "steps", "time s", "error", "flags"):
        table.add_column(column)
    for e in sorted(run.read_episodes(), key=lambda e: (e["task_id"], int(e["trial"]))):
        table.add_row(
            Text(e["task_id"]), str(e["trial"]), e.get("status", ""), str(e.get("success")),
            "-" if e.get("score") is None else f"{e['score']:.3f}", str(e.get("steps", "-")),
            f"{e.get('elapsed_sec', 0):.2f}", Text(str(e.get("error") or "")),
            Text("; ".join(e.get("integrity_flags") or [])),
        )  # fmt: skip
    console.print(table)


#: Rich styles of a diff's lines (the report colours the same kinds with CSS).
DIFF_STYLES = {"meta": "bold", "hunk": "cyan", "add": "green", "del": "red", "ctx": ""}


def _plain(console: Console, text: str, style: str = "") -> None:
    """Print text as it is: brackets in an action or a path are never read as Rich markup."""
    console.print(Text(text, style=style), highlight=False)


def show_trajectory(run: RunDir, task_id: str, trial: int, console: Console, max_chars: int = 2000) -> None:
    """One episode as the report shows it: instruction, every step (action, tokens, what came back, checks,
    progress), the verifier's output and the submitted patch."""
    episodes = {(e["task_id"], int(e["trial"])): e for e in run.read_episodes()}
    steps = run.read_steps(task_id, trial)
    if not steps:
        known = sorted({t for t, _ in episodes})
        raise ValueError(
            f"no trajectory for {task_id} trial {trial} in {run.path}; tasks recorded: {', '.join(known) or 'none'}"
        )
    record = episodes.get((task_id, trial), {"task_id": task_id, "trial": trial, "status": "unfinished"})
    view = episode_view(record, steps, family_of(task_id, families(run.read_run())))
    console.rule(
        Text(f"{task_id} trial {trial} ({view.family}): {view.outcome}, score={record.get('score')}"),
    )
    for warning in record.get("warnings") or []:
        _plain(console, f"warning: {warning}", "yellow")
    for done in record.get("task_steps") or []:
        _plain(console, f"task step {done.get('name')}: reward {done.get('reward'):.3f}")
    for s in view.steps:
        if s.instruction is not None:
            _plain(console, "instruction" if s.step == 0 else f"instruction from step {s.step}", "bold")
            _plain(console, cut(s.instruction, max_chars))
        if s.step == 0:
            _plain(console, "reset", "bold")
        else:
            line = Text(f"step {s.step} ", style="bold")
            line.append(f"{s.kind}: ", style="dim")
            line.append(s.action or "", style="cyan")
            if s.tokens:
                line.append(f"  [{tokens_text(s.tokens)}]", style="dim")
            console.print(line, highlight=False)
        if s.note:
            _plain(console, f"({s.note})", "dim")
        if s.reward:
            _plain(console, f"reward {s.reward:.3f}")
        if s.task_step:
            _plain(console, f"now on task step {s.task_step}")
        if s.action_error:
            _plain(console, f"action error: {s.action_error}", "red")
        _plain(console, cut(s.text, max_chars))
        for key, value in s.extras.items():
            _plain(console, f"{key}: {value}", "dim")
        if s.images:
            where = run.path / record.get("trajectory", "")
            _plain(console, f"images: {', '.join(str(where / p) for p in s.images.values())}", "dim")
        if s.checks:
            marks = Text("checks: ")
            for name, ok in s.checks.items():
                marks.append(f"{'✓' if ok else '✗'} {name} ", style="green" if ok else "red")
            marks.append(f" progress {_pct(s.progress)}")
            console.print(marks, highlight=False)
    if view.verifier_detail:
        _plain(console, "verifier", "bold")
        _plain(console, cut(view.verifier_detail, max_chars))
    if view.patch:
        _plain(console, "submitted patch", "bold")
        for kind, line in diff_lines(view.patch):
            _plain(console, line, DIFF_STYLES[kind])


def compare_runs(runs: list[RunDir]) -> dict[str, Any]:
    """Per task and overall: each run's success rate and mean score.

    When the runs hold different tasks, ``overall`` is computed on the tasks every run has
    (``shared``), so that it compares like with like; ``missing`` says, per run, which of the
    others' tasks it lacks (each still has its own row).
    """
    summaries = [summarize(r) for r in runs]
    tasks = sorted({t for s in summaries for t in s["by_task"]})
    shared = [t for t in tasks if all(t in s["by_task"] for s in summaries)]
    missing = {str(r.path): [t for t in tasks if t not in s["by_task"]] for r, s in zip(runs, summaries, strict=True)}
    rows: dict[str, list[dict[str, Any] | None]] = {t: [s["by_task"].get(t) for s in summaries] for t in tasks}
    if len(shared) == len(tasks):
        rows["overall"] = [s["overall"] for s in summaries]
    else:
        frames = [episodes_frame(r) for r in runs]
        rows["overall"] = [group_metrics(df[df["task_id"].isin(shared)]) for df in frames]
    return {
        "runs": [str(r.path) for r in runs],
        "policies": [s["run"]["policy"].get("name") for s in summaries],
        "rows": rows,
        "shared": shared,
        "missing": {path: absent for path, absent in missing.items() if absent},
    }


def compare_table(comparison: dict[str, Any]) -> Table:
    table = Table(title="comparison (success rate, mean score)")
    table.add_column("task")
    for path, policy in zip(comparison["runs"], comparison["policies"], strict=True):
        table.add_column(f"{path}\n({policy})", justify="right")
    for task, cells in comparison["rows"].items():
        rendered = []
        for cell in cells:
            if cell is None:
                rendered.append("-")
            else:
                score = "-" if cell["mean_score"] is None else f"{cell['mean_score']:.2f}"
                rendered.append(f"{_pct(cell['success_rate'])} ({cell['successes']}/{cell['scored']}), {score}")
        table.add_row(Text(task), *rendered, style="bold" if task == "overall" else None)
    return table
