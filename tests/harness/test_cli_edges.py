"""The rough edges of the command line, each tried as a user meets it (issue 9, item 4)."""

from __future__ import annotations

import asyncio
import json

from conftest import run_config
from typer.testing import CliRunner

import agentenvs
from agentenvs.cli import app
from agentenvs.harness.policies.base import Decision, Policy
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import Runner
from agentenvs.harness.views import compare_runs

cli = CliRunner()


def invoke(*args: str, columns: int = 200):
    return cli.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": str(columns)})


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"agentenvs {agentenvs.__version__}"


def test_bracketed_text_survives_in_errors(tmp_path):
    """Rich markup must not eat a field name such as [limits.max_steps] from an error."""
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "task.toml").write_text('[limits]\nmax_steps = "many"\n')
    (bad / "instruction.md").write_text("Do it.\n")
    ran = invoke("run", str(bad), "--out", str(tmp_path / "run"))
    assert ran.exit_code == 2 and "[limits.max_steps]" in ran.output, ran.output
    validated = invoke("validate", str(bad), "--no-audit")
    assert validated.exit_code == 1 and "[limits.max_steps]" in validated.output, validated.output
    audited = invoke("audit", str(bad))
    assert audited.exit_code == 1 and "[limits.max_steps]" in audited.output and "1 tasks not loaded" in audited.output


class Typist(Policy):
    """Sends the text ``n[c]`` (an action error in the toy family), then gives up."""

    name = "typist"

    async def act(self, start, step):
        return Decision(action="n[c]" if step.step == 0 else "fail")


def test_show_prints_bracketed_actions_as_they_were(tmp_path):
    out = tmp_path / "run"
    asyncio.run(Runner(run_config(["toy/reach-1"], "oracle"), str(out), policy=Typist(), progress=False).run())
    shown = invoke("show", str(out), "--task", "toy/reach-1")
    assert shown.exit_code == 0
    assert "step 1 text: n[c]" in shown.output, shown.output
    assert "native actions look like 'add N'" in shown.output


def test_a_bad_backend_is_a_usage_error_not_a_traceback(tmp_path):
    for command in (["run", "--task", "toy/*", "--out", str(tmp_path / "r")], ["validate"], ["audit"]):
        result = cli.invoke(app, [*command, "--backend", "nope"], env={"COLUMNS": "200"})
        assert result.exit_code == 2, result.output
        assert "unknown backend 'nope'; choose one of: docker, local" in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "Traceback" not in result.output
    assert not (tmp_path / "r").exists()


def test_policy_errors_name_flags_not_python_signatures(tmp_path):
    for policy, flag in (("openai", "--model"), ("replay", "--replay-from"), ("http", "--url")):
        result = invoke("run", "--task", "toy/*", "--policy", policy, "--out", str(tmp_path / policy))
        assert result.exit_code == 2 and f"--policy {policy} needs {flag}" in result.output, result.output
        assert "__init__" not in result.output and "keyword" not in result.output


def test_unknown_filter_values_are_errors(tmp_path):
    cases = [
        (["list", "--family", "nope"], "unknown family 'nope'"),
        (["list", "--split", "training"], "unknown split 'training'; choose one of: test, train, valid"),
        (["list", "--difficulty", "trivial"], "unknown difficulty 'trivial'"),
        (["list", "--family", "toy", "--tag", "nope"], "no task has the tag 'nope'; tags in use: starter"),
        (["run", "--family", "toy", "--tag", "nope", "--out", str(tmp_path / "r")], "no task has the tag 'nope'"),
        (["run", "--task", "toy/*", "--split", "x", "--out", str(tmp_path / "r")], "unknown split 'x'"),
        (["validate", "--family", "nope"], "unknown family 'nope'"),
    ]
    for args, message in cases:
        result = invoke(*args)
        assert result.exit_code == 2 and message in result.output, (args, result.output)
    ok = invoke("list", "--family", "toy", "--tag", "starter", "--json")
    assert ok.exit_code == 0 and len(ok.stdout.splitlines()) == 3


def test_list_never_cuts_an_id():
    ids = [t.full_id for t in agentenvs.list_tasks(family="terminal")]
    longest = max(ids, key=len)
    result = invoke("list", "--family", "terminal", columns=len(longest) + 20)
    assert result.exit_code == 0
    assert "…" not in result.output.split("┃ id")[1].split("│")[1]  # the first id cell
    cells = {line.split("│")[1].strip() for line in result.output.splitlines() if line.startswith("│")}
    assert set(ids) <= cells, sorted(set(ids) - cells)


def test_compare_says_when_the_task_sets_differ(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert (
        invoke("run", "--task", "toy/reach-1", "--task", "toy/reach-2", "--out", str(a), "--no-progress").exit_code == 0
    )
    assert (
        invoke("run", "--task", "toy/reach-2", "--task", "toy/reach-3", "--out", str(b), "--no-progress").exit_code == 0
    )
    result = invoke("compare", str(a), str(b))
    assert result.exit_code == 0
    assert f"warning: {a} has no episodes of 1 task(s) the others ran: toy/reach-3" in result.output
    assert f"warning: {b} has no episodes of 1 task(s) the others ran: toy/reach-1" in result.output
    assert "'overall' here covers only the 1 task(s) every run has" in result.output
    comparison = compare_runs([RunDir(a), RunDir(b)])
    assert comparison["shared"] == ["toy/reach-2"]
    assert [cell["scored"] for cell in comparison["rows"]["overall"]] == [1, 1]
    same = invoke("compare", str(a), str(a))
    assert same.exit_code == 0 and "warning" not in same.output


class Flood(Policy):
    """A 5 MB action and a 5 MB message on the first step, then done."""

    name = "flood"

    async def act(self, start, step):
        if step.step == 0:
            return Decision(action="x" * 5_000_000, message="y" * 5_000_000)
        return Decision(action="done")


def test_a_refused_huge_action_is_kept_as_a_bounded_prefix_and_its_size(tmp_path):
    out = tmp_path / "run"
    asyncio.run(Runner(run_config(["toy/reach-1"], "oracle"), str(out), policy=Flood(), progress=False).run())
    run = RunDir(out)
    assert run.read_episodes()[0]["steps_at"]["length"] < 300_000
    step = run.read_steps("toy/reach-1", 0)[1]
    assert step["action"] == ""
    refused = step["refused_action"]
    assert refused["chars"] == 5_000_000 and refused["prefix"] == "x" * 1000 and refused["type"] == "str"
    assert "larger than the limit" in refused["why"]
    assert step["policy"]["message_chars"] == 5_000_000 and len(step["policy"]["message"]) == 100_000


def test_env_args_read_json_values_so_false_is_false(tmp_path):
    """`--env-arg screenshot=false` once reached the env as the truthy string "false"."""
    from agentenvs.harness.cli import _parse_env_args

    assert _parse_env_args(["a=false", "b=[800, 600]", "c=plain text", "d="]) == {
        "a": False, "b": [800, 600], "c": "plain text", "d": ""}  # fmt: skip
    out = tmp_path / "run"
    result = invoke("run", "textgame/coin-easy-0", "--policy", "random", "--out", str(out), "--no-progress",
                    "--env-arg", "max_steps=3")  # fmt: skip
    assert result.exit_code == 0, result.stdout
    assert json.loads((out / "run.json").read_text())["config"]["env_kwargs"] == {"max_steps": 3}
    (steps,) = [RunDir(out).read_steps("textgame/coin-easy-0", 0)]
    assert len(steps) <= 4, "the env got 3, not the string '3'"


def test_an_env_arg_no_env_of_the_run_takes_is_a_usage_error_before_any_episode(tmp_path):
    """It made every episode an infra error ("unexpected keyword argument") after the run had started."""
    out = tmp_path / "run"
    result = invoke("run", "textgame/coin-easy-0", "--policy", "random", "--out", str(out), "--no-progress",
                    "--env-arg", "screenshot=true")  # fmt: skip
    assert result.exit_code != 0
    assert "the textgame env does not take screenshot" in result.output and "max_steps" in result.output
    assert not (out / "run.json").exists(), "a run was started"
