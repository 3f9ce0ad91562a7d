"""The harness commands: ``run``, ``report``, ``show``, ``compare``, ``export-rl``.

``register(app)`` adds them to the ``agentenvs`` CLI; ``python -m
agentenvs.harness`` runs them on their own.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib.util
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from agentenvs.core.errors import AgentEnvsError
from agentenvs.core.registry import get_task, resolve_tasks
from agentenvs.harness.config import PolicySpec, RunConfig
from agentenvs.harness.policies import PolicyConfigError, make_policy
from agentenvs.harness.rundir import RunDir
from agentenvs.harness.runner import EnvArgsError, RunDirError, Runner
from agentenvs.harness.suites import SUITES, select_tasks

console = Console()


def _fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``message`` as it is (a ``[limits.max_steps]`` in it is text, not markup) and exit."""
    console.print(Text.assemble(("error: ", "red"), message), highlight=False)
    return typer.Exit(code)


def check_backend(value: str | None) -> str | None:
    """``--backend``: one of the registered sandbox backends, or a usage error naming them."""
    from agentenvs.sandbox import backends

    if value is not None and value not in backends():
        raise typer.BadParameter(f"unknown backend {value!r}; choose one of: {', '.join(backends())}")
    return value


#: Flags of the policy options whose names differ from their Python names.
POLICY_FLAGS = {"run": "--replay-from", "request_timeout_sec": "--request-timeout"}
#: The options each policy cannot start without.
REQUIRED_OPTIONS = {"openai": ("model",), "http": ("url",), "replay": ("run",)}


def _flag(option: str) -> str:
    return POLICY_FLAGS.get(option, "--" + option.replace("_", "-"))


def _parse_env_args(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; a VALUE that reads as JSON (``true``, ``3``, ``[800, 600]``) is that
    value, anything else a string (``screenshot=false`` must not be the truthy "false")."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise _fail(f"--env-arg takes KEY=VALUE, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def _policy_options(policy: str, given: dict[str, Any]) -> dict[str, Any]:
    """Only the options that apply to ``policy``; one meant for another policy is an error."""
    applies = {
        "openai": {"model", "base_url", "api_key_env", "temperature", "top_p", "max_tokens", "context_tokens",
                   "max_images", "max_retries", "request_timeout_sec", "return_token_ids", "record_messages"},
        "http": {"url", "max_retries", "request_timeout_sec"},
        "random": {"seed"},
        "replay": {"run"},
        "oracle": set(),
        "human": set(),
    }.get(policy, set())  # fmt: skip
    options = {k: v for k, v in given.items() if v is not None}
    stray = sorted(k for k in options if k not in applies and k != "seed")
    if stray:
        names = ", ".join(_flag(k) for k in stray)
        raise _fail(f"not for --policy {policy}: {names} (does not apply; drop it or choose the policy it is for)")
    missing = [k for k in REQUIRED_OPTIONS.get(policy, ()) if k not in options]
    if missing:
        raise _fail(f"--policy {policy} needs {', '.join(_flag(k) for k in missing)}")
    return {k: v for k, v in options.items() if k in applies}


def _matches(task: Any, filters: dict[str, str | None]) -> bool:
    """Whether a task named by path passes --family, --split, --difficulty and --tag."""
    values = {"family": task.family, "split": task.split, "difficulty": task.difficulty}
    if filters.get("tag") and filters["tag"] not in task.tags:
        return False
    return all(not filters.get(k) or filters[k] == v for k, v in values.items())


def _registered(task: Any) -> bool:
    """Whether ``task`` is the registered task of its id (then the run names it by id)."""
    try:
        return get_task(task.full_id).path == task.path
    except AgentEnvsError:
        return False


def _selected(
    paths: list[str], suite: str | None, task: list[str] | None, filters: dict[str, str | None]
) -> tuple[list[Any], dict[str, str]]:
    """The tasks to run and the directories of those named by path.

    Paths and ids add up with ``--suite`` and ``--task``; the filters narrow the tasks named by
    path, or select registered tasks when nothing else does. Every problem is a clear error,
    before anything starts.
    """
    chosen: dict[str, Any] = {}
    dirs: dict[str, str] = {}
    try:
        if paths:
            named, broken = resolve_tasks(paths)
            if broken:
                lines = "\n".join(f"  {where}: {why}" for where, why in broken.items())
                raise _fail(f"{len(broken)} task director{'ies' if len(broken) > 1 else 'y'} did not load:\n{lines}")
            for t in named:
                if not _matches(t, filters):
                    continue
                chosen[t.full_id] = t
                if t.path is not None and not _registered(t):
                    dirs[t.full_id] = str(t.path)
        if suite or task or not paths:
            for t in select_tasks(suite, task, **filters):
                if t.full_id in dirs and t.path != Path(dirs[t.full_id]):
                    raise _fail(f"{t.full_id} is both the registered task and {dirs[t.full_id]}; run them apart")
                chosen.setdefault(t.full_id, t)
    except (ValueError, AgentEnvsError) as exc:
        raise _fail(str(exc)) from None
    if not chosen:
        raise _fail("no task matches the selection; `agentenvs list` shows what exists")
    return sorted(chosen.values(), key=lambda t: t.full_id), dirs


def _infra_reasons(run: RunDir) -> list[str]:
    """One line per episode that ended as an infra error: which, and why."""
    return [
        f"{e['task_id']} trial {e['trial']}: {e.get('error') or 'unknown'}"
        for e in sorted(run.read_episodes(), key=lambda e: (e["task_id"], int(e["trial"])))
        if e.get("status") == "infra"
    ]


def _check_executor(executor: str, ray_address: str | None) -> None:
    from agentenvs.harness.executor import EXECUTORS

    if executor not in EXECUTORS:
        raise _fail(f"unknown --executor {executor!r}; choose one of: {', '.join(EXECUTORS)}")
    if ray_address and executor != "ray":
        raise _fail("--ray-address is for --executor ray")
    if executor == "ray" and importlib.util.find_spec("ray") is None:
        raise _fail("--executor ray needs Ray: pip install 'agentenvs[ray]'")


def run_command(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="TASKS", help="task directories, folders of them, or registered task ids", show_default=False
        ),
    ] = None,
    suite: Annotated[str | None, typer.Option(help=f"named task selection: {', '.join(SUITES)}")] = None,
    task: Annotated[
        list[str] | None, typer.Option("--task", "-t", help="task id or glob (repeatable), e.g. 'terminal/*'")
    ] = None,
    family: Annotated[str | None, typer.Option(help="only this family")] = None,
    split: Annotated[str | None, typer.Option(help="train, valid or test")] = None,
    tag: Annotated[str | None, typer.Option(help="only tasks with this tag")] = None,
    difficulty: Annotated[str | None, typer.Option(help="easy, medium or hard")] = None,
    policy: Annotated[str, typer.Option(help="openai, http, oracle, random, replay or human")] = "oracle",
    backend: Annotated[
        str | None, typer.Option(callback=check_backend, help="sandbox backend: local or docker (default: local)")
    ] = None,
    trials: Annotated[int, typer.Option(min=1, help="episodes per task, with distinct seeds")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="episodes in flight")] = 4,
    max_sandboxes: Annotated[
        int | None, typer.Option(min=1, help="envs alive at once (default: --concurrency)")
    ] = None,
    max_policy_calls: Annotated[int | None, typer.Option(min=1, help="policy requests in flight")] = None,
    out: Annotated[Path | None, typer.Option(help="run directory (default runs/<time>-<policy>)")] = None,
    resume: Annotated[bool, typer.Option(help="continue the run in --out, playing only missing episodes")] = False,
    retry_infra: Annotated[
        bool, typer.Option(help="with --resume: also replay the episodes that ended as infra errors")
    ] = False,
    seed: Annotated[int, typer.Option(help="base seed; trial t uses seed + t")] = 0,
    same_seed: Annotated[
        bool, typer.Option(help="every trial of a task uses --seed: a group of rollouts of one initial state (GRPO)")
    ] = False,
    max_steps: Annotated[int | None, typer.Option(min=1, help="override every task's step budget")] = None,
    model: Annotated[str | None, typer.Option(help="openai: the model name")] = None,
    base_url: Annotated[str | None, typer.Option(help="openai: the server, e.g. http://127.0.0.1:8000/v1")] = None,
    api_key_env: Annotated[str | None, typer.Option(help="openai: env var holding the API key")] = None,
    temperature: Annotated[float | None, typer.Option(help="openai: sampling temperature")] = None,
    top_p: Annotated[float | None, typer.Option(help="openai: nucleus sampling")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="openai: completion tokens per step")] = None,
    context_tokens: Annotated[int | None, typer.Option(help="openai: history budget in tokens")] = None,
    max_images: Annotated[int | None, typer.Option(help="openai: latest turns that keep their images")] = None,
    return_token_ids: Annotated[
        bool, typer.Option(help="openai: record the token ids and logprobs a vLLM or SGLang server sampled")
    ] = False,
    record_messages: Annotated[
        bool, typer.Option(help="openai: record each request's messages and the sampled message")
    ] = False,
    url: Annotated[str | None, typer.Option(help="http: the policy server's base URL")] = None,
    replay_from: Annotated[Path | None, typer.Option(help="replay: the run directory to replay")] = None,
    max_retries: Annotated[int | None, typer.Option(help="openai/http: retries of a failed request")] = None,
    request_timeout: Annotated[float | None, typer.Option(help="openai/http: seconds per request")] = None,
    policy_timeout: Annotated[float | None, typer.Option(help="deadline of one policy decision, seconds")] = None,
    env_timeout: Annotated[float | None, typer.Option(help="deadline of one env call, seconds")] = None,
    episode_timeout: Annotated[float | None, typer.Option(help="deadline of one episode, seconds")] = None,
    max_infra_retries: Annotated[int, typer.Option(min=0, help="attempts after an infrastructure failure")] = 2,
    env_arg: Annotated[
        list[str] | None,
        typer.Option(
            help="KEY=VALUE passed to every env (repeatable); VALUE is JSON if it parses (true, 3, [800, 600]), else a string"
        ),
    ] = None,
    images: Annotated[bool, typer.Option(help="save screenshots in the trajectories")] = True,
    policy_feedback: Annotated[
        bool,
        typer.Option(
            help="training only: send the policy each step's reward, checks and progress "
            "(an evaluation must not: they reveal what the hidden tests check)"
        ),
    ] = False,
    progress: Annotated[bool, typer.Option(help="show a live progress bar")] = True,
    executor: Annotated[
        str, typer.Option(help="where envs live: local (this process) or ray (actors on a Ray cluster)")
    ] = "local",
    ray_address: Annotated[
        str | None, typer.Option(help="ray: the cluster to join (HOST:PORT or 'auto'; default: a local Ray)")
    ] = None,
) -> None:
    """Roll a policy through a suite of tasks and score it."""
    from agentenvs.harness.report import write_report  # pandas and matplotlib: only for commands that score
    from agentenvs.harness.scoring import write_summary
    from agentenvs.harness.views import summary_table

    if retry_infra and not resume:
        raise _fail("--retry-infra replays the infra episodes of an existing run: use it with --resume --out DIR")
    _check_executor(executor, ray_address)
    if resume:
        if out is None or not RunDir(out).exists():
            raise _fail("--resume needs --out pointing at an existing run directory")
        config = RunConfig.model_validate(RunDir(out).read_run()["config"])
    else:
        filters = {"family": family, "split": split, "tag": tag, "difficulty": difficulty}
        tasks, task_dirs = _selected(list(paths or []), suite, task, filters)
        options = _policy_options(
            policy,
            {
                "model": model, "base_url": base_url, "api_key_env": api_key_env, "temperature": temperature,
                "top_p": top_p, "max_tokens": max_tokens, "context_tokens": context_tokens, "max_images": max_images,
                "url": url, "run": str(replay_from) if replay_from else None, "max_retries": max_retries,
                "request_timeout_sec": request_timeout, "seed": seed, "return_token_ids": return_token_ids or None,
                "record_messages": record_messages or None,
            },
        )  # fmt: skip
        config = RunConfig(
            tasks=[t.full_id for t in tasks], task_dirs=task_dirs, backend=backend,
            selection={"paths": paths, "suite": suite, "task": task, **filters},
            policy=PolicySpec(name=policy, options=options),
            trials=trials, seed=seed, same_seed=same_seed, concurrency=concurrency, max_sandboxes=max_sandboxes,
            max_policy_calls=max_policy_calls, max_infra_retries=max_infra_retries, policy_timeout_sec=policy_timeout,
            env_timeout_sec=env_timeout, episode_timeout_sec=episode_timeout, max_steps=max_steps,
            env_kwargs=_parse_env_args(env_arg or []), save_images=images, policy_feedback=policy_feedback,
            executor=executor, executor_options={"address": ray_address} if executor == "ray" else {},
        )  # fmt: skip
        if out is None:
            out = Path("runs") / f"{dt.datetime.now():%Y%m%d-%H%M%S}-{policy}"
    try:
        policy_obj = make_policy(config.policy.name, **config.policy.options)
        runner = Runner(config, str(out), policy=policy_obj, resume=resume, retry_infra=retry_infra, progress=progress)
        outcome = asyncio.run(runner.run())
    except (PolicyConfigError, RunDirError, EnvArgsError) as exc:
        raise _fail(str(exc)) from None
    summary = write_summary(outcome.run_dir)
    report = write_report(outcome.run_dir, summary)
    console.print(summary_table(summary))
    console.print(f"report: {report}")
    if retry_infra:
        n = outcome.retried_infra
        console.print(f"replayed {n} episode{'s' * (n != 1)} that had ended as infra errors")
    _print_headline(summary)
    if outcome.interrupted:
        console.print(f"[yellow]stopped: {outcome.finished}/{outcome.planned} episodes recorded; "
                      f"continue with `agentenvs run --resume --out {out}`[/yellow]")  # fmt: skip
        raise typer.Exit(130)
    infra = _infra_reasons(outcome.run_dir)
    if infra:
        console.print(Text(f"{len(infra)} episode{'s' * (len(infra) != 1)} ended as infra errors:", style="red"))
        for line in infra:
            console.print(Text(f"  {line}"), soft_wrap=True)
        raise typer.Exit(1)


def report_command(run_dir: Annotated[Path, typer.Argument(help="a run directory")]) -> None:
    """Recompute summary.json and report.html from a run directory."""
    from agentenvs.harness.report import write_report  # pandas and matplotlib: only for commands that score
    from agentenvs.harness.scoring import write_summary
    from agentenvs.harness.views import summary_table

    run = RunDir(run_dir)
    if not run.exists():
        raise _fail(f"{run_dir} is not a run directory (no run.json)")
    summary = write_summary(run)
    console.print(summary_table(summary))
    console.print(f"report: {write_report(run, summary)}")
    _print_headline(summary)


def _print_headline(summary: dict[str, Any]) -> None:
    """The summary's headline, in yellow when episodes are unresolved, missing or flagged."""
    overall = summary["overall"]
    warn = overall["infra"] or overall["flagged"] or not summary["complete"]
    console.print(summary["headline"], style="yellow" if warn else None, markup=False, highlight=False, soft_wrap=True)


def show_command(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    task: Annotated[str | None, typer.Option("--task", "-t", help="show this task's trajectory")] = None,
    trial: Annotated[int, typer.Option(help="which trial of --task")] = 0,
) -> None:
    """List a run's episodes, or print one trajectory step by step."""
    from agentenvs.harness.views import show_episodes, show_trajectory

    run = RunDir(run_dir)
    if not run.exists():
        raise _fail(f"{run_dir} is not a run directory (no run.json)")
    if task is None:
        show_episodes(run, console)
        return
    try:
        show_trajectory(run, task, trial, console)
    except ValueError as exc:
        raise _fail(str(exc)) from None


def compare_command(run_dirs: Annotated[list[Path], typer.Argument(help="two or more run directories")]) -> None:
    """Runs side by side: success and mean score per task and overall."""
    from agentenvs.harness.views import compare_runs, compare_table

    runs = [RunDir(p) for p in run_dirs]
    missing = [str(r.path) for r in runs if not r.exists()]
    if missing:
        raise _fail(f"not run directories (no run.json): {', '.join(missing)}")
    comparison = compare_runs(runs)
    console.print(compare_table(comparison))
    for path, absent in comparison["missing"].items():
        console.print(
            Text(f"warning: {path} has no episodes of {len(absent)} task(s) the others ran: {', '.join(absent)}",
                 style="yellow"),
            soft_wrap=True,
        )  # fmt: skip
    if comparison["missing"]:
        console.print(
            Text(f"'overall' here covers only the {len(comparison['shared'])} task(s) every run has", style="yellow")
        )


def register(app: typer.Typer) -> None:
    """Add ``run``, ``report``, ``show``, ``compare`` and ``export-rl`` to a Typer app."""
    from agentenvs.harness.export_rl import export_rl_command

    app.command("run")(run_command)
    app.command("report")(report_command)
    app.command("show")(show_command)
    app.command("compare")(compare_command)
    app.command("export-rl")(export_rl_command)


app = typer.Typer(
    help="agentenvs harness: run, report, show, compare, export-rl.", no_args_is_help=True, add_completion=False
)
register(app)
