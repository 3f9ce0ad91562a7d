"""Web family speed: our MiniWoB++ reset and step against BrowserGym's, side by side in one run.

Both sides run the same MiniWoB++ tasks (the `miniwob` wheel's pages) in the
same Debian Chromium, with the same modalities (an accessibility tree and a
screenshot every step), and the same step: ``scroll(0, 0)``, an action both
action sets share, then the observation. BrowserGym comes from PyPI and pins
``playwright==1.44``, so it runs in a virtualenv of its own (``--browsergym-python``)
with its launch pointed at the same Chromium and flags. It runs twice: as
shipped (``pre_observation_delay=0.5`` s) and with the delay at 0.

    .venv/bin/python benchmarks/web_speed.py --browsergym-python /path/to/bgym-venv/bin/python
    # make that venv with: python3 -m venv V && V/bin/pip install browsergym-core browsergym-miniwob
    .venv/bin/python benchmarks/web_speed.py --backends   # our docker backend against our local one
    .venv/bin/python benchmarks/web_speed.py --phases     # where our reset and step spend their time

Ours runs in a tight loop (the agent takes no time, so the episode prepared
ahead on the other browser lane competes with the steps for the CPU) and,
with ``--think X [Y ...]``, again with the agent taking X (then Y) untimed seconds per step.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import agentenvs
from agentenvs.envs.web import env as web_env
from agentenvs.envs.web import lanes, miniwob, session
from agentenvs.envs.web.browser import CHROMIUM, CHROMIUM_ARGS
from agentenvs.envs.web.miniwob import html_root

TASKS = ["click-button", "click-test", "enter-text", "login-user"]
#: ``--backends``: the docker backend against the local one, on MiniWoB++ pages and site tasks.
BACKEND_TASKS = ["web/miniwob.click-test", "web/miniwob.enter-text", "web/shop-price-0", "web/forum-upvote-0"]

BROWSERGYM = r"""
import json, os, statistics, sys, time
cfg = json.loads(sys.argv[1])
os.environ["MINIWOB_URL"] = "file://" + cfg["html"] + "/miniwob/"
import gymnasium as gym
import browsergym.miniwob  # registers browsergym/miniwob.*
from browsergym.core import _get_global_playwright
pw = _get_global_playwright()
launch = pw.chromium.launch
def debian_chromium(*args, **kwargs):
    kwargs.update(executable_path=cfg["chromium"], args=cfg["args"])
    return launch(*args, **kwargs)
pw.chromium.launch = debian_chromium
out = {}
for name in cfg["tasks"]:
    env = gym.make(f"browsergym/miniwob.{name}", headless=True, pre_observation_delay=cfg["delay"])
    resets, steps = [], []
    for seed in range(cfg["episodes"]):
        t = time.perf_counter(); obs, info = env.reset(seed=seed); resets.append(time.perf_counter() - t)
        for _ in range(cfg["steps"]):
            t = time.perf_counter(); env.step("scroll(0, 0)"); steps.append(time.perf_counter() - t)
    env.close()
    out[name] = {"reset": statistics.median(resets), "step": statistics.median(steps)}
print(json.dumps(out))
"""


def time_episodes(
    env: Any, task_ids: list[str], episodes: int, steps: int, think: float = 0.0
) -> dict[str, dict[str, float]]:
    """Median reset and step (``scroll(0, 0)`` with the tree and a screenshot) per task on a warm env.

    ``think``: seconds the "agent" takes after each observation, untimed (a policy's own time,
    during which the env prepares the next episode on its other browser lane).
    """
    out = {}
    for task_id in task_ids:
        resets, times = [], []
        for seed in range(episodes):
            t = time.perf_counter()
            env.reset(seed=seed, options={"task_id": task_id})
            resets.append(time.perf_counter() - t)
            for _ in range(steps):
                t = time.perf_counter()
                env.step("scroll(0, 0)")
                times.append(time.perf_counter() - t)
                time.sleep(think)
        out[task_id] = {"reset": statistics.median(resets), "step": statistics.median(times)}
    return out


def ours(episodes: int, steps: int, think: float) -> dict[str, dict[str, float]]:
    env = agentenvs.make("web/miniwob.click-button", screenshot=True).unwrapped
    try:
        timed = time_episodes(env, [f"web/miniwob.{name}" for name in TASKS], episodes, steps, think)
    finally:
        env.close()
    return {name: timed[f"web/miniwob.{name}"] for name in TASKS}


def backend(name: str, episodes: int, steps: int) -> dict[str, dict[str, float]]:
    """One backend's warm env over BACKEND_TASKS; its first reset (Chromium, sites, container) apart."""
    env = agentenvs.make(BACKEND_TASKS[0], backend=name, screenshot=True).unwrapped
    try:
        t = time.perf_counter()
        env.reset(seed=0)
        first = time.perf_counter() - t
        return {"first reset": {"reset": first}, **time_episodes(env, BACKEND_TASKS, episodes, steps)}
    finally:
        env.close()


def compare_backends(episodes: int, steps: int) -> None:
    local, docker = backend("local", episodes, steps), backend("docker", episodes, steps)
    print(f"median seconds over {episodes} episodes x {steps} steps per task (tree + screenshot each step)")
    print(f"{'task':<28}{'local reset':>12}{'docker reset':>14}{'local step':>12}{'docker step':>13}")
    for name in ["first reset", *BACKEND_TASKS]:
        a, b = local[name], docker[name]
        step = f"{a['step']:>12.3f}{b['step']:>13.3f}" if "step" in a else ""
        print(f"{name:<28}{a['reset']:>12.3f}{b['reset']:>14.3f}{step}")


#: ``--phases``: (owner, attribute, label) of each timed phase, outermost first.
PHASES = [
    (web_env.WebEnv, "_end", "close the last context (queued on its lane)"),
    (lanes.Lanes, "take", "wait for the session prepared ahead"),
    (session.Session, "open", "new context + tab"),
    (miniwob, "load", "load the MiniWoB++ page"),
    (session.Session, "activate", "open the origins to the context"),
    (miniwob, "start", "seed + start the episode"),
    (session.Session, "act", "the action (+ its load wait)"),
    (web_env.WebEnv, "_miniwob_state", "read MiniWoB's reward"),
    (web_env.WebEnv, "_outcome", "observation (all of it)"),
    (session, "describe_page", "  the tree (bids, one evaluate)"),
    (session.Session, "_pixels", "  the screenshot"),
    (web_env.WebEnv, "_open", "prepare the next episode (other lane, overlaps)"),
]


def phases(episodes: int, steps: int, prepare_ahead: bool, think: float) -> None:
    """Time each phase of our reset and step (wrapping the env's own functions; ms per reset or step)."""
    section, ahead = {"now": ""}, threading.local()
    spent: dict[tuple[str, str], float] = collections.defaultdict(float)

    def timed(fn: Any, label: str) -> Any:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            nested = getattr(ahead, "on", False)
            ahead.on = nested or label.startswith("prepare")
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                where = "ahead" if nested or label.startswith("prepare") else section["now"]
                spent[(where, label)] += time.perf_counter() - t
                ahead.on = nested

        return run

    for owner, name, label in PHASES:
        setattr(owner, name, timed(getattr(owner, name), label))
    env = agentenvs.make("web/miniwob.click-button", screenshot=True, prepare_ahead=prepare_ahead).unwrapped
    counts = collections.Counter()
    totals = collections.defaultdict(float)
    try:
        env.reset(seed=0)
        spent.clear()
        for name in TASKS:
            for seed in range(episodes):
                section["now"] = "reset"
                t = time.perf_counter()
                env.reset(seed=seed, options={"task_id": f"web/miniwob.{name}"})
                totals["reset"] += time.perf_counter() - t
                counts["reset"] += 1
                for _ in range(steps):
                    section["now"] = "step"
                    t = time.perf_counter()
                    env.step("scroll(0, 0)")
                    totals["step"] += time.perf_counter() - t
                    counts["step"] += 1
                    section["now"] = "think"
                    time.sleep(think)
    finally:
        env.close()
    print(f"mean ms per reset / step over {episodes} episodes x {steps} steps x {len(TASKS)} tasks")
    print(f"{'phase':<50}{'reset':>8}{'step':>8}")
    for _, _, label in PHASES:
        r, s = spent.get(("reset", label), 0.0), spent.get(("step", label), 0.0)
        if r or s:
            print(f"{label:<50}{1000 * r / counts['reset']:>8.1f}{1000 * s / counts['step']:>8.1f}")
    print(
        f"{'total':<50}{1000 * totals['reset'] / counts['reset']:>8.1f}{1000 * totals['step'] / counts['step']:>8.1f}"
    )
    a = spent.get(("ahead", PHASES[-1][2]), 0.0)
    print(f"{'prepared ahead on the other lane, per episode':<50}{1000 * a / counts['reset']:>8.1f}")


def browsergym(python: str, delay: float, episodes: int, steps: int) -> dict[str, dict[str, float]]:
    cfg = {
        "html": str(html_root()),
        "chromium": CHROMIUM,
        "args": CHROMIUM_ARGS,
        "tasks": TASKS,
        "delay": delay,
        "episodes": episodes,
        "steps": steps,
    }
    result = subprocess.run([python, "-c", BROWSERGYM, json.dumps(cfg)], capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        sys.exit(f"BrowserGym failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--browsergym-python", help="python of a virtualenv with browsergym-miniwob")
    parser.add_argument("--backends", action="store_true", help="compare our docker backend with our local one instead")
    parser.add_argument("--phases", action="store_true", help="time the phases of our reset and step instead")
    parser.add_argument("--no-prepare-ahead", action="store_true", help="--phases with prepare_ahead=False")
    parser.add_argument(
        "--think",
        type=float,
        nargs="*",
        default=[],
        help="also time ours with the agent taking each of these many untimed seconds per step",
    )
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    if args.backends:
        compare_backends(args.episodes, args.steps)
        return
    if args.phases:
        phases(args.episodes, args.steps, not args.no_prepare_ahead, args.think[0] if args.think else 0.0)
        return
    if not args.browsergym_python:
        parser.error("--browsergym-python is required (or --backends)")
    runs = [("ours", ours(args.episodes, args.steps, 0.0))]
    runs += [(f"ours t={think:g}", ours(args.episodes, args.steps, think)) for think in args.think]
    shipped = browsergym(args.browsergym_python, 0.5, args.episodes, args.steps)
    no_delay = browsergym(args.browsergym_python, 0.0, args.episodes, args.steps)
    print(f"median seconds over {args.episodes} episodes x {args.steps} steps per task (tree + screenshot each step)")
    print("ours t=X: the agent takes X s after each observation (untimed); BrowserGym's agent none")
    head = "".join(f"{label:>12}{'/bgym':>7}{'/d=0':>7}" for label, _ in runs)
    print(f"{'task':<14}{'what':<7}{'bgym':>8}{'bgym d=0':>10}{head}")

    def row(name: str, what: str, pick: Any) -> None:
        b, c = pick(shipped, what), pick(no_delay, what)
        cells = "".join(f"{pick(m, what):>12.3f}{b / pick(m, what):>6.1f}x{c / pick(m, what):>6.1f}x" for _, m in runs)
        print(f"{name:<14}{what:<7}{b:>8.3f}{c:>10.3f}{cells}")

    for name in TASKS:
        for what in ("reset", "step"):
            row(name, what, lambda m, w, n=name: m[n][w])
    for what in ("reset", "step"):
        row("ALL (median)", what, lambda m, w: statistics.median(m[n][w] for n in TASKS))


if __name__ == "__main__":
    main()
