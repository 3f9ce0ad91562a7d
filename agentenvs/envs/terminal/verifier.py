"""Harbor's verifier contract, run in a sealed sandbox: ``tests/`` uploaded, ``test.sh`` run, the reward read.

``/tests``, ``/logs/verifier`` and the run's HOME and TMPDIR are made fresh
after every agent process is gone (``Sandbox.seal``), so only this run writes
there. The reward comes from ``/logs/verifier/reward.json`` (Harbor reads it
first) or ``reward.txt``, never from printed output.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Sequence
from pathlib import Path

from agentenvs.core.checks import Verdict
from agentenvs.core.errors import SandboxError
from agentenvs.core.task import Task
from agentenvs.sandbox.agent_state import verifier_env
from agentenvs.sandbox.base import Sandbox
from agentenvs.sandbox.checks import EVALUATORS_ENV
from agentenvs.sandbox.egress import DEFAULT_ALLOW, EgressGate, lacking_hosts
from agentenvs.sandbox.images import substitution_warnings
from agentenvs.sandbox.package_pins import OTHER_INDEX_ENV, image_python, unavailable, verifier_pins

TESTS_DIR = "/tests"
VERIFIER_LOGS = "/logs/verifier"
#: The end of the verifier's output kept as the verdict's detail (what the report and ``show`` print).
DETAIL_CHARS = 4000


def _tail(output: str) -> str:
    """The last ``DETAIL_CHARS`` of the output, from a line's start, saying how much came before."""
    if len(output) <= DETAIL_CHARS:
        return output
    tail = output[-DETAIL_CHARS:]
    newline = tail.find("\n")
    if 0 <= newline < len(tail) - 1:
        tail = tail[newline + 1 :]
    return f"[... {len(output) - len(tail)} earlier characters]\n{tail}"


def run_verifier(
    sandbox: Sandbox,
    tests: Sequence[Path],
    *,
    timeout: float,
    env: dict[str, str],
    workdir: str,
    image_dirs: tuple[str, ...] = (),
) -> Verdict:
    """Upload each of ``tests`` to ``/tests`` in order (later ones override same-named files, as
    Harbor layers a step's tests over the task's), run ``test.sh`` and read the reward."""
    scratch = f"/tmp/.agentenvs-verifier-{secrets.token_hex(12)}"
    # /logs/verifier is left world-writable, as Harbor leaves it, for a verifier run as another user.
    prepare = (
        f"for d in {TESTS_DIR} {VERIFIER_LOGS}; do "
        'if [ -L "$d" ] || { [ -e "$d" ] && [ ! -d "$d" ]; }; then rm -f -- "$d" || exit 1; fi; '
        'mkdir -p -- "$d" && chmod -R u+rwX -- "$d" && find "$d" -mindepth 1 -delete || exit 1; done; '
        # TMPDIR keeps /tmp's rules (1777) under a folder others may pass but not list, so a test that runs
        # the agent's code as another user from a mkdtemp() folder works as on Harbor, whose TMPDIR is /tmp
        f"chmod 777 {VERIFIER_LOGS} && mkdir -m 711 {scratch} && mkdir {scratch}/home && mkdir -m 1777 {scratch}/tmp"
    )
    ready = sandbox.exec(["bash", "--noprofile", "--norc", "-c", prepare], timeout=30, cwd="/")
    if ready.exit_code != 0:
        # Only the agent shaped these paths (it can never reach them once sealed): its failure.
        return Verdict(score=0.0, success=False, detail=f"the verifier's directories: {ready.output[-300:]}")
    for folder in tests:
        sandbox.put(folder, TESTS_DIR)
    result = sandbox.exec(
        ["bash", "--noprofile", "--norc", f"{TESTS_DIR}/test.sh"],
        timeout=timeout,
        cwd=workdir,
        env=verifier_env(f"{scratch}/home", f"{scratch}/tmp", {**EVALUATORS_ENV, **env}, image_dirs),
    )
    if result.timed_out:
        return Verdict(score=0.0, success=False, detail=f"verifier timed out after {timeout:g}s")
    return read_reward(sandbox, result.output[-2000:])


def reward_of(metrics: dict[str, float]) -> tuple[float | None, str]:
    """The scalar reward of Harbor's reward dict: ``reward`` if present, else its only key.

    Several keys and no ``reward`` have no single reward: Harbor's default
    metric refuses such a dict ("expected exactly one key"), and so do we,
    saying so instead of picking one.
    """
    if "reward" in metrics:
        return metrics["reward"], ""
    if len(metrics) == 1:
        return next(iter(metrics.values())), ""
    if not metrics:
        return None, "reward.json holds no numeric value"
    return None, (
        f"reward.json has {len(metrics)} keys ({', '.join(sorted(metrics))}) and no 'reward' key: "
        "Harbor's mean metric needs exactly one key or a 'reward' key, so the task has no score; "
        "write 'reward' too"
    )


def read_reward(sandbox: Sandbox, verifier_output: str) -> Verdict:
    """Harbor's contract: named metrics in reward.json (read first), or a float in reward.txt."""
    for name in ("reward.json", "reward.txt"):
        try:
            raw = sandbox.get(f"{VERIFIER_LOGS}/{name}").decode("utf-8", "replace").strip()
        except FileNotFoundError:
            continue
        except OSError as exc:  # a directory or a special file where the reward should be
            return Verdict(score=0.0, success=False, detail=f"unreadable {name}: {exc}")
        metrics: dict[str, float] | None = None
        try:
            if name == "reward.json":
                data = json.loads(raw)
                numbers = data.items() if isinstance(data, dict) else [("reward", data)]
                metrics = {
                    str(k): float(v) for k, v in numbers if isinstance(v, (int, float)) and not isinstance(v, bool)
                }
                score, problem = reward_of(metrics)
            else:
                score, problem = float(raw.splitlines()[0] if raw else raw), ""
        except (ValueError, IndexError):
            return Verdict(score=0.0, success=False, detail=f"unreadable {name}: {raw[:200]!r}")
        if score is None or not math.isfinite(score):
            detail = problem or f"{name} holds {raw[:50]!r}, not a number"
            return Verdict(
                score=0.0, success=False, detail=f"{detail}\n{_tail(verifier_output)}", metrics=metrics,
                extra={"warnings": [detail]},
            )  # fmt: skip
        score = min(1.0, max(0.0, score))
        return Verdict(score=score, success=score >= 1.0, detail=_tail(verifier_output), metrics=metrics)
    return Verdict(score=0.0, success=False, detail=f"verifier wrote no reward file; output: {_tail(verifier_output)}")


def machine_lacks(gate: EgressGate, tests: Sequence[Path], task: Task, *, image: str, env: dict[str, str]) -> str:
    """Why a failed verifier could not have passed on this machine, whatever the agent did ("" if
    nothing says so): a host its task's files name that it could not reach, or a package version those
    files pin that the index lacks (or has only for a newer Python than a stand-in base image's: the
    real base would have had it). All of it is read from outside the sandbox."""
    # the default list is our stand-in for Harbor's open network; any other list is the task's own
    hosts = lacking_hosts(gate, tests, task_restricts=gate.allow != DEFAULT_ALLOW)
    if hosts:
        why = "; ".join(f"{host} {reason}" for host, reason in hosts.items())
        return f"needs network: {', '.join(hosts)}. The verifier asked for it and did not get it ({why})"
    if not (gate.allowed("pypi.org") and gate.allowed("files.pythonhosted.org")) or OTHER_INDEX_ENV & set(env):
        return ""  # pip could not reach PyPI by the task's own settings, or was sent to another index
    pins = verifier_pins(tests)
    missing = unavailable(pins, None) if pins else {}
    if pins and not missing and _stand_in(task):
        missing = unavailable(pins, image_python(image))
    if not missing:
        return ""
    sources = sorted({p.source for p in pins if p.requirement in missing})
    why = "; ".join(f"{pin}: {reason}" for pin, reason in missing.items())
    return f"the package mirror lacks {', '.join(missing)}. The verifier installs it ({', '.join(sources)}): {why}"


def _stand_in(task: Task) -> bool:
    """The task's base image is one of our stand-ins (its Python may be older than the one it names)."""
    try:
        return bool(substitution_warnings(task))
    except (SandboxError, OSError, ImportError):
        return False
