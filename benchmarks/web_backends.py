"""Web family: the docker backend's reset and step against the local backend's, side by side in one run.

The same tasks (two MiniWoB++ pages, two site tasks), the same observation (the accessibility
tree and a screenshot every step), the same step (``scroll(0, 0)``). Each backend's env is made
once and kept warm, as a worker keeps it: the first reset (starting Chromium, the sites and, on
docker, the container) is reported apart, and the medians are over the warm episodes.

    .venv/bin/python benchmarks/web_backends.py --episodes 5 --steps 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import agentenvs

TASKS = ["miniwob.click-test", "miniwob.enter-text", "shop-price-0", "forum-upvote-0"]


def measure(backend: str, episodes: int, steps: int) -> dict[str, dict[str, float]]:
    env = agentenvs.make(f"web/{TASKS[0]}", backend=backend, screenshot=True).unwrapped
    out: dict[str, dict[str, float]] = {}
    try:
        t = time.perf_counter()
        env.reset(seed=0)
        out["first reset"] = {"reset": time.perf_counter() - t}
        for name in TASKS:
            resets, times = [], []
            for seed in range(episodes):
                t = time.perf_counter()
                env.reset(seed=seed, options={"task_id": f"web/{name}"})
                resets.append(time.perf_counter() - t)
                for _ in range(steps):
                    t = time.perf_counter()
                    env.step("scroll(0, 0)")
                    times.append(time.perf_counter() - t)
            out[name] = {"reset": statistics.median(resets), "step": statistics.median(times)}
    finally:
        env.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = parser.parse_args()
    results = {backend: measure(backend, args.episodes, args.steps) for backend in ("local", "docker")}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'task':24} {'local reset':>12} {'docker reset':>13} {'local step':>11} {'docker step':>12}")
    for name in ["first reset", *TASKS]:
        local, docker = results["local"][name], results["docker"][name]
        steps = f"{local['step']:>10.3f}s {docker['step']:>11.3f}s" if "step" in local else ""
        print(f"{name:24} {local['reset']:>11.3f}s {docker['reset']:>12.3f}s {steps}")


if __name__ == "__main__":
    main()
