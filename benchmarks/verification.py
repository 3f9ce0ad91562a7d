"""What the hardened verifier costs, side by side with the unhardened way, on both backends.

For one terminal task whose verifier and checkpoints run the checkers:

- **verify**: the final verifier after the oracle's solution. Baseline: the
  old way, ``tests/test.sh`` run in place in the agent's sandbox with its
  processes alive. Hardened: ``seal()`` (every agent process killed; on
  docker a fresh container of the pristine image with the agent's changes
  copied in), fresh output directories, isolated environment.
- **dense checks**: the checkpoints evaluated once per step. Baseline: one
  ``python3 -m evaluators batch`` in the agent's sandbox through a persistent
  shell. Hardened: the state checker outside the sandbox.
- **step**: one shell command and the dense checks (baseline: both in the
  agent's sandbox; hardened: ``env.step``), which hardening must not slow down.

Prints medians and the ratio hardened / baseline (above 1 is slower).

    .venv/bin/python benchmarks/verification.py [--rounds N] [--backends local,docker]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import agentenvs
from agentenvs.envs.terminal.env import TESTS_DIR, VERIFIER_LOGS, TerminalEnv
from agentenvs.sandbox.checks import EVALUATORS_ENV, run_checks

TASK = "terminal/log-error-summary"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def solved(backend: str) -> TerminalEnv:
    env = agentenvs.make(TASK, backend=backend).unwrapped
    env.reset(seed=0)
    solve, _ = env.oracle_actions()
    env.step(solve)
    return env


def verify_in_place(env: TerminalEnv) -> float:
    """The unhardened verifier: tests uploaded and run in the live agent sandbox."""
    task, sandbox = env.task, env.sandbox
    assert task is not None
    sandbox.exec(f"rm -rf {TESTS_DIR} {VERIFIER_LOGS} && mkdir -p {TESTS_DIR} {VERIFIER_LOGS}", timeout=30)
    sandbox.put(task.dir("tests"), TESTS_DIR)
    sandbox.exec(f"bash {TESTS_DIR}/test.sh", timeout=120, cwd=task.config.environment.workdir, env=EVALUATORS_ENV)
    return json.loads(sandbox.get(f"{VERIFIER_LOGS}/reward.json"))["reward"]


def run(backend: str, rounds: int) -> dict[str, tuple[float, float]]:
    base_verify, hard_verify, base_checks, hard_checks, base_steps, steps = [], [], [], [], [], []
    for _ in range(rounds):
        env = solved(backend)
        try:
            base_verify.append(timed(lambda: verify_in_place(env)))
            checkpoints = env.task.config.checkpoints
            agent, checker = env.sandbox.shell(), env.sandbox.shell()
            batch = json.dumps([{"check": c.check, "args": c.args} for c in checkpoints])
            old = f"PYTHONPATH=/opt/agentenvs python3 -m evaluators batch '{batch}'"
            command = "ls /app > /dev/null"
            for _ in range(10):
                base_checks.append(timed(lambda: checker.run(old, timeout=30)))
                hard_checks.append(timed(lambda: run_checks(env.sandbox, checkpoints)))
                base_steps.append(timed(lambda: (agent.run(command, timeout=30), checker.run(old, timeout=30))))
                steps.append(timed(lambda: env.step(command)))
            result: dict = {}
            hard_verify.append(timed(lambda: result.update(env.step("done")[4])))
            assert result["score"] == 1.0, result.get("verifier_detail")
        finally:
            env.close()
    med = statistics.median
    return {
        "verify (s)": (med(base_verify), med(hard_verify)),
        "dense checks (ms)": (med(base_checks) * 1e3, med(hard_checks) * 1e3),
        "step with checks (ms)": (med(base_steps) * 1e3, med(steps) * 1e3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backends", default="local,docker")
    args = parser.parse_args()
    print(f"{'backend':8} {'what':24} {'baseline':>10} {'hardened':>10} {'ratio':>7}")
    for backend in args.backends.split(","):
        for what, (base, hard) in run(backend, args.rounds).items():
            print(f"{backend:8} {what:24} {base:10.3f} {hard:10.3f} {hard / base:7.2f}")


if __name__ == "__main__":
    main()
