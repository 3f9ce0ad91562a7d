"""Scores of a run, computed from its run directory alone (``run.json`` + ``episodes.jsonl``).

Success rate with a Wilson 95% interval; mean score with a Student-t 95%
interval; unbiased pass@k (Chen et al., 2021) and pass^k (all k trials
succeed; tau-bench) per task, averaged over tasks; steps, time and tokens.
Everything overall and per family, difficulty and tag. Infrastructure
failures are not scored: they are counted apart and listed, and the success
rate and mean score are also given with them counted as failures, so that a
run cannot look better by losing episodes. Episodes whose env raised
integrity flags (a hack it detected but could not prevent) are counted as
``flagged`` and listed.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from agentenvs.harness.rundir import RunDir, write_json_atomic

Z95 = 1.959963984540054
#: Two-sided 95% Student-t quantiles for 1..30 degrees of freedom.
T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t95(df: int) -> float:
    """The 97.5% quantile of Student's t; past 30 df, a first-order Cornish-Fisher expansion."""
    if df < 1:
        raise ValueError("needs at least 1 degree of freedom")
    if df <= len(T95):
        return T95[df - 1]
    return Z95 + (Z95**3 + Z95) / (4 * df)


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a binomial proportion; ``None`` when ``n`` is 0."""
    if n == 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: list[float]) -> tuple[float, float] | None:
    """The t interval of a mean, clipped to [0, 1]; ``None`` for fewer than two values."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t95(n - 1) * sd / math.sqrt(n)
    return (max(0.0, mean - half), min(1.0, mean + half))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased probability that at least one of k trials out of n (c successful) succeeds."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} trials, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased probability that all of k trials out of n (c successful) succeed."""
    if k > n:
        raise ValueError(f"pass^{k} needs at least {k} trials, got {n}")
    return math.comb(c, k) / math.comb(n, k)


def episodes_frame(run: RunDir) -> pd.DataFrame:
    """One row per recorded episode, joined with the task's family, difficulty and tags."""
    meta = {t["id"]: t for t in run.read_run().get("tasks", [])}
    rows = []
    for e in run.read_episodes():
        task = meta.get(e["task_id"], {})
        tokens = e.get("tokens") or {}
        rows.append(
            {
                "task_id": e["task_id"],
                "trial": int(e["trial"]),
                "status": e.get("status", "scored"),
                "success": bool(e["success"]) if e.get("success") is not None else None,
                "score": float(e["score"]) if e.get("score") is not None else None,
                "steps": e.get("steps"),
                "elapsed_sec": e.get("elapsed_sec"),
                "tokens": tokens.get("total", 0),
                "error_kind": e.get("error_kind"),
                "error": e.get("error"),
                "attempts": e.get("attempts", 1),
                "integrity_flags": list(e.get("integrity_flags") or []),
                "family": task.get("family") or e["task_id"].split("/", 1)[0],
                "difficulty": task.get("difficulty") or "unknown",
                "tags": list(task.get("tags") or []),
            }
        )
    columns = ["task_id", "trial", "status", "success", "score", "steps", "elapsed_sec", "tokens",
               "error_kind", "error", "attempts", "integrity_flags", "family", "difficulty", "tags"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _pass_metrics(scored: pd.DataFrame) -> tuple[dict[str, float], dict[str, float]]:
    per_task = scored.groupby("task_id")["success"].agg(n="count", c="sum")
    if per_task.empty:
        return {}, {}
    at: dict[str, float] = {}
    hat: dict[str, float] = {}
    for k in range(1, int(per_task["n"].max()) + 1):
        eligible = per_task[per_task["n"] >= k]
        if eligible.empty:
            break
        at[str(k)] = float(sum(pass_at_k(int(r.n), int(r.c), k) for r in eligible.itertuples()) / len(eligible))
        hat[str(k)] = float(sum(pass_hat_k(int(r.n), int(r.c), k) for r in eligible.itertuples()) / len(eligible))
    return at, hat


def _num(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def group_metrics(df: pd.DataFrame) -> dict[str, Any]:
    """The metrics of a set of episodes (scored ones count; infra ones are only counted)."""
    scored = df[df["status"] == "scored"].copy()
    scored["success"] = scored["success"].astype(bool)
    n = len(scored)
    successes = int(scored["success"].sum()) if n else 0
    scores = [float(s) for s in scored["score"]] if n else []
    at, hat = _pass_metrics(scored)
    ci = wilson_interval(successes, n)
    score_ci = mean_interval(scores)
    infra = int((df["status"] != "scored").sum())
    everyone = n + infra
    ci_all = wilson_interval(successes, everyone)
    return {
        "episodes": int(len(df)),
        "tasks": int(df["task_id"].nunique()),
        "scored": n,
        "infra": infra,
        "flagged": int(df["integrity_flags"].map(bool).sum()) if len(df) else 0,
        "successes": successes,
        "success_rate": successes / n if n else None,
        "success_ci95": list(ci) if ci else None,
        "success_rate_infra_as_failure": successes / everyone if everyone else None,
        "success_ci95_infra_as_failure": list(ci_all) if ci_all else None,
        "mean_score": sum(scores) / n if n else None,
        "mean_score_infra_as_failure": sum(scores) / everyone if everyone else None,
        "score_ci95": list(score_ci) if score_ci else None,
        "pass_at_k": at,
        "pass_hat_k": hat,
        "steps_mean": _num(scored["steps"].mean()) if n else None,
        "steps_median": _num(scored["steps"].median()) if n else None,
        "time_mean_sec": _num(scored["elapsed_sec"].mean()) if n else None,
        "time_median_sec": _num(scored["elapsed_sec"].median()) if n else None,
        "tokens_total": int(df["tokens"].fillna(0).sum()),
        "tokens_mean": _num(scored["tokens"].mean()) if n else None,
    }


def _by(df: pd.DataFrame, column: str) -> dict[str, Any]:
    if df.empty:
        return {}
    if column == "tags":
        exploded = df.explode("tags").dropna(subset=["tags"])
        return {str(tag): group_metrics(group) for tag, group in exploded.groupby("tags", sort=True)}
    return {str(key): group_metrics(group) for key, group in df.groupby(column, sort=True)}


def summarize(run: RunDir) -> dict[str, Any]:
    """The run's ``summary.json`` content."""
    meta = run.read_run()
    config = meta.get("config", {})
    df = episodes_frame(run)
    planned = len(config.get("tasks", [])) * int(config.get("trials", 1))
    by_task = {}
    for task_id, group in df.groupby("task_id", sort=True):
        g = group_metrics(group)
        by_task[str(task_id)] = {
            k: g[k]
            for k in ("scored", "infra", "flagged", "successes", "success_rate", "mean_score", "steps_mean",
                      "time_mean_sec")
        }  # fmt: skip
    infra = df[df["status"] != "scored"]
    flagged = df[df["integrity_flags"].map(bool)] if len(df) else df
    summary = {
        "run": {
            "path": str(run.path),
            "created_at": meta.get("created_at"),
            "policy": meta.get("policy", {}),
            "agentenvs_version": meta.get("agentenvs_version"),
            "trials": config.get("trials"),
            "tasks": len(config.get("tasks", [])),
        },
        "planned": planned,
        "recorded": int(len(df)),
        "complete": int(len(df)) >= planned,
        "overall": group_metrics(df),
        "by_family": _by(df, "family"),
        "by_difficulty": _by(df, "difficulty"),
        "by_tag": _by(df, "tags"),
        "by_task": by_task,
        "infra_errors": [
            {"task_id": r.task_id, "trial": int(r.trial), "attempts": int(r.attempts), "error": r.error}
            for r in infra.itertuples()
        ],
        "integrity_flags": [
            {"task_id": r.task_id, "trial": int(r.trial), "flags": list(r.integrity_flags)}
            for r in flagged.itertuples()
        ],
    }
    summary["headline"] = headline(summary)
    return summary


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


_ITEM = r"[^\s,;]*[^\s,;.]"  # a host or a package pin, without the sentence's full stop
_LACKS = re.compile(rf"((?:needs network:|the package mirror lacks) {_ITEM}(?:, {_ITEM})*)")


def machine_lacks(infra_errors: list[dict[str, Any]]) -> dict[str, int]:
    """What the machine lacked (``needs network: astral.sh``), with how many episodes it stopped."""
    counts: dict[str, int] = {}
    for row in infra_errors:
        for what in dict.fromkeys(_LACKS.findall(str(row.get("error") or ""))):
            counts[what] = counts.get(what, 0) + 1
    return counts


def headline(summary: dict[str, Any]) -> str:
    """One sentence a person reads first: the success rate both ways, and what is unresolved or flagged."""
    o = summary["overall"]
    parts = [
        f"Success {o['successes']}/{o['scored']} scored episodes ({_pct(o['success_rate'])}); "
        f"{_pct(o['success_rate_infra_as_failure'])} with infra counted as failure."
    ]
    lacking = machine_lacks(summary["infra_errors"])
    stopped = sum(1 for row in summary["infra_errors"] if _LACKS.search(str(row.get("error") or "")))
    if stopped:
        parts.append(
            f"{stopped} episode{'s' * (stopped != 1)} could not run on this machine (environment errors, not scored): "
            + "; ".join(f"{what} ({count})" for what, count in lacking.items())
            + "."
        )
    others = o["infra"] - stopped
    if others > 0:
        path = summary["run"]["path"]
        parts.append(
            f"{others} episode{'s' * (others != 1)} unresolved (infra errors, not scored): "
            f"replay {'them' if others != 1 else 'it'} with `agentenvs run --resume --retry-infra --out {path}`."
        )
    if not summary["complete"]:
        parts.append(f"Incomplete: {summary['recorded']} of {summary['planned']} episodes recorded.")
    if o["flagged"]:
        parts.append(f"{o['flagged']} episode{'s' * (o['flagged'] != 1)} flagged for integrity.")
    return " ".join(parts)


def write_summary(run: RunDir) -> dict[str, Any]:
    summary = summarize(run)
    write_json_atomic(run.summary_json, summary)
    return summary
