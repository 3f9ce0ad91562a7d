"""``report.html``: one self-contained file (no network): tables, plots and a trajectory viewer.

Reads only the run directory. Plots are matplotlib figures inlined as SVG;
screenshots are inlined as base64 PNG.
"""

from __future__ import annotations

import io
from collections import Counter
from typing import Any

import jinja2

from agentenvs.harness.observation import png_data_url
from agentenvs.harness.rendering import OUTCOMES, cut, diff_lines, families, load_episode
from agentenvs.harness.report_template import TEMPLATE
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.scoring import episodes_frame, summarize

#: Observation text longer than this is cut in the report (the run directory has it all).
MAX_TEXT_CHARS = 20_000
#: Trajectories shown in the viewer; the rest are listed without steps.
MAX_VIEWER_EPISODES = 300


def _svg(fig: Any) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


def _bar(groups: dict[str, Any], title: str) -> str | None:
    import matplotlib.pyplot as plt

    names = [k for k, g in groups.items() if g["scored"]]
    if not names:
        return None
    rates = [groups[k]["success_rate"] for k in names]
    lower = [max(0.0, r - (groups[k]["success_ci95"] or [r, r])[0]) for k, r in zip(names, rates, strict=True)]
    upper = [max(0.0, (groups[k]["success_ci95"] or [r, r])[1] - r) for k, r in zip(names, rates, strict=True)]
    fig, ax = plt.subplots(figsize=(max(3.5, 0.9 * len(names) + 2), 2.8))
    ax.bar(names, rates, yerr=[lower, upper], capsize=4, color="#4c72b0")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("success rate (95% CI)")
    ax.set_title(title)
    ax.tick_params(axis="x", labelrotation=20)
    return _svg(fig)


def _hist(values: list[float], title: str, xlabel: str) -> str | None:
    import matplotlib.pyplot as plt

    if not values:
        return None
    fig, ax = plt.subplots(figsize=(4.2, 2.8))
    ax.hist(values, bins=min(20, max(3, len(set(values)))), color="#55a868")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("episodes")
    return _svg(fig)


def plots(run: RunDir, summary: dict[str, Any]) -> list[dict[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    df = episodes_frame(run)
    scored = df[df["status"] == "scored"]
    candidates = [
        ("success-by-family", _bar(summary["by_family"], "Success by family")),
        ("success-by-difficulty", _bar(summary["by_difficulty"], "Success by difficulty")),
        ("steps", _hist([float(v) for v in scored["steps"].dropna()], "Steps per episode", "steps")),
        ("time", _hist([float(v) for v in scored["elapsed_sec"].dropna()], "Time per episode", "seconds")),
    ]
    return [{"id": name, "svg": svg} for name, svg in candidates if svg]


def _image_data(run: RunDir, trajectory: str, rel: str) -> str | None:
    path = run.path / trajectory / rel
    if not path.is_file():
        return None
    return png_data_url(path.read_bytes())


def trajectories(run: RunDir, meta: dict[str, Any]) -> list[dict[str, Any]]:
    """Episodes as ``rendering`` reads them (the same text ``agentenvs show`` prints), ready for the template."""
    known = families(meta)
    episodes = sorted(run.read_episodes(), key=lambda e: (e["task_id"], int(e["trial"])))
    out = []
    for index, e in enumerate(episodes):
        shown = index < MAX_VIEWER_EPISODES
        view = load_episode(run, e, known, with_steps=shown)
        steps = [
            {
                "view": s,
                "text": cut(s.text, MAX_TEXT_CHARS),
                "extras": {k: cut(v, MAX_TEXT_CHARS) for k, v in s.extras.items()},
                "images": [
                    {"name": k, "src": _image_data(run, e.get("trajectory", ""), v)} for k, v in s.images.items()
                ],
            }
            for s in view.steps
        ]
        out.append(
            {
                "id": f"ep-{index}",
                "record": e,
                "view": view,
                "instruction": None if view.instruction is None else cut(view.instruction, MAX_TEXT_CHARS),
                "verifier_detail": None if view.verifier_detail is None else cut(view.verifier_detail, MAX_TEXT_CHARS),
                "diff": diff_lines(view.patch) if view.patch else [],
                "tokens": sum((s.tokens or {}).get("total", 0) for s in view.steps),
                "steps": steps,
                "shown": shown,
            }
        )
    return out


def _missing(value: Any) -> bool:
    return value is None or isinstance(value, jinja2.Undefined)


def render_report(run: RunDir, summary: dict[str, Any] | None = None) -> str:
    summary = summary or summarize(run)
    env = jinja2.Environment(autoescape=True)
    env.filters["pct"] = lambda v: "-" if _missing(v) else f"{100 * v:.1f}%"
    env.filters["num"] = lambda v, d=2: "-" if _missing(v) else f"{v:.{d}f}"
    env.filters["ci"] = lambda v: "" if not v else f"[{100 * v[0]:.1f}, {100 * v[1]:.1f}]"
    meta = run.read_run()
    episodes = trajectories(run, meta)
    return env.from_string(TEMPLATE).render(
        summary=summary,
        plots=plots(run, summary),
        episodes=episodes,
        outcomes=[(o, sum(ep["view"].outcome == o for ep in episodes)) for o in OUTCOMES],
        families=sorted(Counter(ep["view"].family for ep in episodes).items()),
        meta=meta,
    )


def write_report(run: RunDir, summary: dict[str, Any] | None = None) -> str:
    html = render_report(run, summary)
    tmp = run.report_html.with_name("report.html.tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(run.report_html)
    return str(run.report_html)
