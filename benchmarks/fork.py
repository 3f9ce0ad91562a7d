"""Fork cost per family against the baseline of a fresh env, reset, plus replaying the k actions.

An episode is played to step k with a fixed, deterministic script. Then, side by side:

- ``fork()``: a new env (same class and arguments, its own sandbox) in the state at step k,
  by the family's copy where it has one, else by replay (``core/branching.py``);
- the baseline: a new env, ``reset(seed)`` and the same k actions stepped again (the
  recorded URLs of a web task sent to the new env's own sites, as a fork's replay does);
- ``restore(ref)`` of a snapshot taken at step k, in the same env, after going on past it,
  against ``reset(seed)`` plus the k actions in that env.

Every fork and baseline is checked to reach the same state hash. Prints medians and ratios
(below 1: faster than the baseline).

    .venv/bin/python benchmarks/fork.py [--rounds 5] [--families textgame,terminal,swe,web,terminal-docker,swe-docker,gui]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import agentenvs
from agentenvs.core.branching import _rebase

GUI = {"screen_size": (800, 600), "observation_type": "screenshot"}
SWE_EDIT = "printf '\\n# note {i}\\n' >> src/{pkg}/__init__.py && git status --short"


@dataclass
class Case:
    name: str
    task: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: The k actions, given the env just reset (some need its oracle or its paths).
    script: Callable[[Any], list[Any]] = lambda env: []
    #: Actions taken after the snapshot, before the restore.
    after: list[Any] = field(default_factory=list)


def _textgame(env: Any) -> list[Any]:
    return env.oracle_actions()[:-2]  # short of the goal: the episode goes on


def _terminal(env: Any) -> list[Any]:
    return ["cd /app", *(f"echo line {i} >> notes.txt && wc -l notes.txt" for i in range(7)), "export DONE_K=1"]


def _swe(env: Any) -> list[Any]:
    pkg = "calcy"
    return ["git log --oneline | head -3", *(SWE_EDIT.format(i=i, pkg=pkg) for i in range(5))]


def _web(env: Any) -> list[Any]:
    return env.oracle_actions()[:3]


CASES = {
    "textgame": Case("textgame", "textgame/coin-hard-0", script=_textgame, after=["look", "inventory"]),
    "terminal": Case("terminal local", "terminal/log-error-summary", {"backend": "local"}, _terminal, ["ls"]),
    "swe": Case("swe local", "swe/agentenvs__calcy-0001", {"backend": "local"}, _swe, ["echo x > scratch.txt"]),
    "web": Case("web local", "web/shop-buy-0", {}, _web, ["noop()"]),
    # Not run by default (--families terminal-docker,swe-docker,gui):
    "terminal-docker": Case("terminal docker", "terminal/log-error-summary", {"backend": "docker"}, _terminal, ["ls"]),
    "swe-docker": Case("swe docker", "swe/agentenvs__calcy-0001", {"backend": "docker"}, _swe, ["echo x > s.txt"]),
    "gui": Case("gui docker", "gui/mousepad-append-line", GUI, lambda env: env.oracle_actions()[:3], ["WAIT"]),
}
DEFAULT = "textgame,terminal,swe,web"


def _played(case: Case) -> tuple[Any, list[Any]]:
    env = agentenvs.make(case.task, **case.kwargs).unwrapped
    env.reset(seed=0)
    actions = case.script(env)
    for action in actions:
        env.step(action)
    return env, actions


def _baseline(env: Any, parent: Any, actions: list[Any]) -> None:
    """``reset(seed=0)`` and the k actions in ``env``, URLs rebased from ``parent``'s sites to its own."""
    env.reset(seed=0)
    theirs, ours = parent._addresses(), env._addresses()
    moved = {old: ours[k] for k, old in theirs.items() if ours.get(k, old) != old}
    for action in actions:
        env.step(_rebase(action, moved))


def bench(case: Case, rounds: int) -> dict[str, float]:
    parent, actions = _played(case)
    times: dict[str, list[float]] = {"fork": [], "fresh env + reset + replay": [], "restore": [], "reset + replay": []}
    try:
        at_k = parent._state_hash()
        ref = parent.snapshot()
        for _ in range(rounds):
            start = time.perf_counter()
            child = parent.fork()
            times["fork"].append(time.perf_counter() - start)
            assert child._state_hash() == at_k, f"{case.name}: the fork is not in the state at step k"
            child.close()

            start = time.perf_counter()
            fresh = agentenvs.make(case.task, **case.kwargs).unwrapped
            _baseline(fresh, parent, actions)
            times["fresh env + reset + replay"].append(time.perf_counter() - start)
            assert fresh._state_hash() == at_k, f"{case.name}: the baseline is not in the state at step k"
            fresh.close()

            for action in case.after:
                parent.step(action)
            start = time.perf_counter()
            parent.restore(ref)
            times["restore"].append(time.perf_counter() - start)

            start = time.perf_counter()
            _baseline(parent, parent, actions)
            times["reset + replay"].append(time.perf_counter() - start)
            assert parent._state_hash() == at_k
            parent.restore(ref)
        strategy = parent.snapshot_object(ref).strategy
    finally:
        parent.close()
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"\n{case.name} ({case.task}, k={len(actions)}, strategy: {strategy})")
    print(f"  {'':28} {'p50 ms':>9} {'x baseline':>11}")
    for name, baseline in (("fork", "fresh env + reset + replay"), ("restore", "reset + replay")):
        for row in (name, baseline):
            print(f"  {row:28} {medians[row] * 1e3:>9.1f} {medians[row] / medians[baseline]:>11.2f}")
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--families", default=DEFAULT, help=f"of {', '.join(CASES)}")
    args = parser.parse_args()
    for family in args.families.split(","):
        bench(CASES[family], args.rounds)


if __name__ == "__main__":
    main()
