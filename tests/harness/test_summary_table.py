"""The summary table `agentenvs run` and `report` print: readable in a terminal of 80 columns."""

from __future__ import annotations

import asyncio
import copy
import io

from conftest import ALL_TOY, run_config
from rich.console import Console

from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.scoring import summarize
from agentenvs.harness.views import summary_table


def _summary(tmp_path, policy: str, trials: int) -> dict:
    out = tmp_path / policy
    asyncio.run(Runner(run_config(ALL_TOY, policy, trials=trials), str(out)).run())
    return summarize(RunDir(out))


def _render(summary: dict, width: int) -> tuple[list[str], str]:
    table = summary_table(summary)
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(table)
    return [str(column.header) for column in table.columns], buffer.getvalue()


def test_the_table_shows_what_says_something_and_fits_80_columns(tmp_path):
    random = _summary(tmp_path, "random", trials=2)
    headers, text = _render(random, 80)
    assert headers == ["group", "n", "success [95% CI]", "score", "pass@k", "steps", "time s", "infra"]
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    overall = next(line for line in text.splitlines() if line.strip().startswith("overall"))
    assert f"@2={random['overall']['pass_at_k']['2']:.2f}" in overall and "@1=" not in overall

    headers, _ = _render(_summary(tmp_path, "oracle", trials=1), 80)
    assert "pass@k" not in headers  # pass@1 is the success rate


def test_infra_tokens_and_flags_get_their_columns_when_there_are_some(tmp_path):
    summary = copy.deepcopy(_summary(tmp_path, "random", trials=2))
    for group in [summary["overall"], *summary["by_family"].values(), *summary["by_difficulty"].values()]:
        group.update(infra=1, flagged=2, tokens_total=123456, success_rate_infra_as_failure=0.125)
    headers, text = _render(summary, 100)
    assert {"infra as fail", "tokens", "flagged"} <= set(headers)
    assert "…" not in text and "12.5%" in text and "123456" in text
