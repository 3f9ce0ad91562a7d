"""``build``: a board's README.md and index.html from its accepted submissions.

A submission is on the board when its verdict (written by ``verify --accept``)
accepts exactly this bundle and the static checks still pass; anything else
is listed apart with the reason. Scores come from the harness's own
``scoring.summarize`` (the bundle is a run directory), so a board and a run's
report never disagree.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from pydantic import ValidationError

from agentenvs.harness.rundir import RunDir
from agentenvs.harness.scoring import summarize
from agentenvs.leaderboard.board import Board
from agentenvs.leaderboard.bundle import MANIFEST, BundleError, open_bundle, sha256_file
from agentenvs.leaderboard.checks import static_checks
from agentenvs.leaderboard.verdict import Verdict
from agentenvs.leaderboard.verify import PACKED, VERDICT_SUFFIX

VERIFIED, UNVERIFIED = "verified by replay", "not replayed"


@dataclass
class Entry:
    name: str
    policy: str
    verified: bool
    summary: dict[str, Any]


def _policy_label(meta: dict[str, Any]) -> str:
    policy = meta.get("policy", {})
    return str(policy.get("model") or policy.get("name") or meta.get("config", {}).get("policy", {}).get("name"))


def _filed(board: Board) -> list[tuple[str, Path]]:
    """Each filed submission by name: ``NAME.tar.gz`` (how ``--accept`` files them) or a ``NAME/`` directory."""
    packed = [(p.name.removesuffix(PACKED), p) for p in board.submissions.glob(f"*{PACKED}")]
    unpacked = [(p.parent.name, p.parent) for p in board.submissions.glob(f"*/{MANIFEST}")]
    return sorted(packed + unpacked)


def load_entries(board: Board) -> tuple[list[Entry], dict[str, str]]:
    """The accepted submissions, best first by the board's first metric, and the others with why."""
    entries, left_out = [], {}
    for name, path in _filed(board):
        verdict_file = board.submissions / f"{name}{VERDICT_SUFFIX}"
        if not verdict_file.is_file():
            left_out[name] = "no verdict: run `agentenvs leaderboard verify --accept`"
            continue
        try:
            verdict = Verdict.model_validate_json(verdict_file.read_text(encoding="utf-8"))
        except ValidationError as exc:
            left_out[name] = f"unreadable verdict: {exc.errors()[0]['msg']}"
            continue
        try:
            with open_bundle(path) as root:
                problems = static_checks(board, root)
                if verdict.bundle_sha256 != sha256_file(root / MANIFEST):
                    left_out[name] = "the verdict is about another bundle"
                elif not verdict.accepted or problems:
                    left_out[name] = "; ".join(str(p) for p in (verdict.problems or problems)[:3])
                else:
                    run = RunDir(root)
                    entries.append(
                        Entry(name, _policy_label(run.read_run()), verdict.verified_by_replay, summarize(run))
                    )
        except BundleError as exc:
            left_out[name] = str(exc)
    key = {"success": "success_rate", "steps": "steps_mean", "tokens": "tokens_mean"}.get(
        board.metrics[0], "mean_score"
    )
    lower_is_better = key in ("steps_mean", "tokens_mean")
    entries.sort(key=lambda e: (e.summary["overall"][key] or 0.0) * (1 if lower_is_better else -1))
    return entries, left_out


def _pct(value: float | None, ci: list[float] | None = None) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _cells(board: Board, group: dict[str, Any]) -> dict[str, str]:
    k = str(board.tasks.trials)
    return {
        "score": _pct(group["mean_score"], group["score_ci95"]),
        "success": _pct(group["success_rate"], group["success_ci95"]),
        "pass_at_k": _pct(group["pass_at_k"].get(k)),
        "steps": _num(group["steps_mean"]),
        "tokens": _num(group["tokens_mean"]) if group["tokens_total"] else "-",  # none recorded
    }


HEADERS = {
    "score": "score % [95% CI]",
    "success": "success % [95% CI]",
    "steps": "steps (mean)",
    "tokens": "tokens (mean)",
}


def tables(board: Board, entries: list[Entry]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows): overall, then one table per family and per difficulty."""
    header = [
        "#",
        "submission",
        "policy",
        "replay",
        *(HEADERS.get(m, f"pass@{board.tasks.trials}") for m in board.metrics),
    ]

    def rows(pick: Any) -> list[list[str]]:
        out = []
        for rank, e in enumerate(entries, start=1):
            group = pick(e.summary)
            if group:
                cells = _cells(board, group)
                out.append(
                    [
                        str(rank),
                        e.name,
                        e.policy,
                        VERIFIED if e.verified else UNVERIFIED,
                        *(cells[m] for m in board.metrics),
                    ]
                )
        return out

    found = [("Overall", header, rows(lambda s: s["overall"]))]
    for axis in ("family", "difficulty"):
        keys = sorted({k for e in entries for k in e.summary[f"by_{axis}"]})
        if len(keys) > 1:
            found += [(f"{axis}: {k}", header, rows(lambda s, k=k, a=axis: s[f"by_{a}"].get(k))) for k in keys]
    return found


def _md_cell(text: str) -> str:
    """A cell as text: a submitter's model name cannot end the cell, add rows, or become a link or markup."""
    text = " ".join(str(text).split())
    return "".join(f"\\{c}" if c in "\\|[]<>*_`" else c for c in text)


def markdown(board: Board, entries: list[Entry], left_out: dict[str, str]) -> str:
    lines = [f"# {board.title or board.name}", ""] + ([board.description, ""] if board.description else [])
    lines += [f"Tasks: {len(board.task_ids())} x {board.tasks.trials} trials; at most {board.budgets.max_steps} "
              f"steps and {board.budgets.episode_timeout_sec:g} s per episode. Replay required for: "
              f"{', '.join(board.rules.replay_families) or 'none'}. Built by `agentenvs leaderboard build`.", ""]  # fmt: skip
    if not entries:
        lines += ["No accepted submissions yet.", ""]
    for title, header, rows in tables(board, entries) if entries else []:
        lines += [f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in rows] + [""]
    if left_out:
        lines += (
            ["## Not on the board", ""]
            + [f"- {name}: {_md_cell(why)}" for name, why in sorted(left_out.items())]
            + [""]
        )
    return "\n".join(lines)


def score_svg(entries: list[Entry]) -> str:
    """Mean score per submission with its 95% interval, as inline SVG (no scripts, no network)."""
    width, bar, gap, label = 640, 18, 8, 200
    height = (bar + gap) * max(1, len(entries)) + 30
    scale = width - label - 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    for i, e in enumerate(entries):
        o = e.summary["overall"]
        y = 10 + i * (bar + gap)
        score = o["mean_score"] or 0.0
        parts.append(f'<text x="0" y="{y + 13}" font-size="12">{html.escape(e.name)}</text>')
        parts.append(f'<rect x="{label}" y="{y}" width="{score * scale:.1f}" height="{bar}" fill="#4c72b0"/>')
        if o["score_ci95"]:
            lo, hi = (label + v * scale for v in o["score_ci95"])
            parts.append(f'<line x1="{lo:.1f}" x2="{hi:.1f}" y1="{y + bar / 2}" y2="{y + bar / 2}" stroke="#222"/>')
    axis = height - 12
    parts.append(f'<line x1="{label}" x2="{label + scale}" y1="{axis}" y2="{axis}" stroke="#888"/>')
    parts += [
        f'<text x="{label + f * scale:.1f}" y="{axis + 11}" font-size="10" text-anchor="middle">{f:.0%}</text>'
        for f in (0, 0.5, 1)
    ]
    return "".join(parts) + "</svg>"


PAGE = jinja2.Template(
    """<!doctype html><html><head><meta charset="utf-8"><title>{{ title }}</title><style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin-bottom:1.5em}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}.verified{color:#1a7f37;font-weight:600}.unverified{color:#9a6700}
</style></head><body><h1>{{ title }}</h1><p>{{ description }}</p><p>{{ rules }}</p>
{% if not tables %}<p>No accepted submissions yet.</p>{% else %}<h2>Mean score (95% CI)</h2>{{ svg }}{% endif %}
{% for t, header, rows in tables %}<h2>{{ t }}</h2><table class="board"><tr>{% for h in header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in rows %}<tr>{% for cell in row %}<td{% if cell == verified %} class="verified"{% elif cell == unverified %} class="unverified"{% endif %}>{{ cell }}</td>{% endfor %}</tr>
{% endfor %}</table>{% endfor %}
{% if left_out %}<h2>Not on the board</h2><ul>{% for n, why in left_out %}<li>{{ n }}: {{ why }}</li>{% endfor %}</ul>{% endif %}
</body></html>
""",
    autoescape=True,
)


def build(board: Board) -> tuple[Path, Path]:
    """Write ``README.md`` and ``index.html`` into the board's directory."""
    assert board.path is not None
    entries, left_out = load_entries(board)
    readme = board.path / "README.md"
    readme.write_text(markdown(board, entries, left_out), encoding="utf-8")
    page = PAGE.render(
        title=board.title or board.name, description=board.description,
        rules=f"{len(board.task_ids())} tasks x {board.tasks.trials} trials; replay required for "
        f"{', '.join(board.rules.replay_families) or 'none'}.",
        svg=Markup(score_svg(entries)), tables=tables(board, entries) if entries else [],
        left_out=sorted(left_out.items()), verified=VERIFIED, unverified=UNVERIFIED,
    )  # fmt: skip
    index = board.path / "index.html"
    index.write_text(page, encoding="utf-8")
    return readme, index
