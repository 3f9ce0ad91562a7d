"""Command line: ``python3 -m evaluators {list,run,batch,reward}``.

``run`` is for one check in a shell script (exit 0 passed, 1 failed, 2 bad
arguments); ``batch`` prints one JSON result per spec; ``reward`` writes a
Harbor reward file (``{"reward": x, <check>: score, ...}``). ``list`` marks
the live checkers. A broken setup (an unusable ``AGENTENVS_STATE_ROOT``, no
/proc) exits 3 and writes no reward: that is the checker failing, not the agent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from evaluators import ArgumentError, SetupError, is_live, names, run_batch, run_check, signature


def _value(text: str) -> Any:
    """``--arg`` values are JSON when they parse as JSON, else plain strings."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _pairs(items: list[str], parse) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ArgumentError(f"expected key=value, got {item!r}")
        args[key] = parse(value)
    return args


def _load_specs(source: str) -> Any:
    if source == "-":
        text = sys.stdin.read()
    elif source.startswith("@"):
        with open(source[1:], encoding="utf-8") as fh:
            text = fh.read()
    else:
        text = source
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ArgumentError(f"the check list is not valid JSON: {exc}") from None


def _metric_names(specs: list[Any]) -> list[str]:
    out, seen = [], set()
    for i, spec in enumerate(specs):
        base = spec.get("name") if isinstance(spec, dict) else None
        if not isinstance(base, str) or not base or base == "reward":
            check = spec.get("check") if isinstance(spec, dict) else None
            base = f"{check if isinstance(check, str) else 'check'}_{i}"
        name, n = base, 2
        while name in seen:
            name, n = f"{base}_{n}", n + 1
        seen.add(name)
        out.append(name)
    return out


def _reward(specs: Any, mode: str) -> dict[str, float]:
    if not isinstance(specs, list) or not specs:
        raise ArgumentError('reward needs a non-empty JSON list of {"check", "args"[, "name", "weight"]}')
    results = run_batch(specs)
    for spec, res in zip(specs, results):
        label = spec.get("name", spec.get("check")) if isinstance(spec, dict) else spec
        print(f"{'PASS' if res['passed'] else 'FAIL'} {label}: {res['detail']}", file=sys.stderr)
    metrics = dict(zip(_metric_names(specs), (float(r["score"]) for r in results)))
    if mode == "all":
        reward = 1.0 if all(r["passed"] for r in results) else 0.0
    else:
        weights = [s.get("weight", 1.0) if isinstance(s, dict) else 1.0 for s in specs]
        if not all(isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0 for w in weights):
            raise ArgumentError("every weight must be a number >= 0")
        total = sum(weights)
        reward = sum(w * r["score"] for w, r in zip(weights, results)) / total if total > 0 else 0.0
    return {"reward": reward, **metrics}


def _write(path: str, payload: dict[str, float]) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status is the command's (3 for a broken setup)."""
    try:
        return _main(argv)
    except SetupError as exc:
        print(f"evaluators: {exc}", file=sys.stderr)
        return 3


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m evaluators", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the checkers and their arguments")
    run = sub.add_parser("run", help="run one check; exit 0 passed, 1 failed, 2 bad arguments")
    run.add_argument("name")
    run.add_argument(
        "--arg", action="append", default=[], metavar="KEY=VALUE", help="value parsed as JSON, else a string"
    )
    run.add_argument("--str", action="append", default=[], metavar="KEY=VALUE", help="value kept as a string")
    batch = sub.add_parser("batch", help="run a JSON list of checks and print a JSON list of results")
    batch.add_argument("specs", help="JSON text, - for stdin, or @FILE")
    reward = sub.add_parser("reward", help="run a JSON list of checks and write a Harbor reward.json")
    reward.add_argument("specs", help="JSON text, - for stdin, or @FILE")
    reward.add_argument("--out", default="/logs/verifier/reward.json")
    reward.add_argument("--mode", choices=("all", "mean"), default="all")
    opts = parser.parse_args(argv)

    if opts.command == "list":
        for name in names():
            print(signature(name) + ("  [live: needs the agent's processes]" if is_live(name) else ""))
        return 0
    if opts.command == "run":
        try:
            args = {**_pairs(opts.arg, _value), **_pairs(opts.str, str)}
            res = run_check(opts.name, args)
        except ArgumentError as exc:
            print(json.dumps({"passed": False, "score": 0.0, "detail": f"bad arguments: {exc}"}))
            return 2
        print(json.dumps(res))
        return 0 if res["passed"] else 1
    if opts.command == "batch":
        try:
            print(json.dumps(run_batch(_load_specs(opts.specs))))
        except (ArgumentError, OSError) as exc:
            print(f"evaluators batch: {exc}", file=sys.stderr)
            return 2
        return 0
    try:
        payload = _reward(_load_specs(opts.specs), opts.mode)
        status = 0
    except (ArgumentError, OSError) as exc:
        print(f"evaluators reward: {exc}; writing reward 0", file=sys.stderr)
        payload, status = {"reward": 0.0}, 2
    _write(opts.out, payload)
    print(json.dumps(payload))
    return status


if __name__ == "__main__":
    sys.exit(main())
