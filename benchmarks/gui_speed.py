"""Desktop speed, side by side on the same display: our step and reset against OSWorld's.

Step: ours is one pyautogui action run by the desktop's daemon (a forked
child of a warm interpreter) plus a settled screenshot (frames hashed until
three agree, never a fixed sleep). OSWorld's is a new
``python -c "import pyautogui; ..."`` process per action followed by its
fixed ``pause`` (``DesktopEnv.step(action, pause=2)``), then a screenshot;
here it runs in the same container, on the same display. Reset: ours is
``GuiEnv.reset`` with a warm pool, timed once the next desktop is ready (it
is prepared while an episode runs, and episodes outlast that); the baseline recreates the desktop container and runs
the task's config, which is what a reset costs without the pool (OSWorld's
own resets boot a VM and then sleep 60 s: not reproducible here, no KVM).

    PYTHONPATH=. .venv/bin/python benchmarks/gui_speed.py --steps 20 --resets 5 [--backend local]

On ``--backend local`` both sides run in a local sandbox over the same image instead of a container,
and the baseline is a fresh local sandbox's desktop + config.
"""

from __future__ import annotations

import argparse
import statistics
import time

from agentenvs.envs.gui.env import GuiEnv

OSWORLD_PREFIX = "import pyautogui; import time; pyautogui.FAILSAFE = False; "


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def summary(name: str, times: list[float]) -> float:
    p50 = statistics.median(times)
    p90 = sorted(times)[int(0.9 * (len(times) - 1))]
    print(f"{name:<44} p50 {p50 * 1000:8.1f} ms   p90 {p90 * 1000:8.1f} ms   (n={len(times)})")
    return p50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="mousepad-append-line")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--osworld-steps", type=int, default=5)
    parser.add_argument("--pause", type=float, default=2.0, help="OSWorld's fixed pause after each action")
    parser.add_argument("--resets", type=int, default=5)
    parser.add_argument("--backend", choices=["docker", "local"], default="docker")
    args = parser.parse_args()
    size = (1280, 800)
    env = GuiEnv(args.task, backend=args.backend, screen_size=size, observation_type="screenshot", pool_size=1)
    try:
        env.reset(seed=0)
        client = env.desktop.client
        action = "pyautogui.moveTo(400, 300); pyautogui.click(400, 300)"

        def ours_action() -> None:
            client.call("execute", code=action, timeout=10)

        def ours_step() -> None:
            ours_action()
            client.call("settle", timeout=3.0)

        def osworld_step() -> None:
            client.call("run", command=["python", "-c", OSWORLD_PREFIX + action], timeout=30)
            time.sleep(args.pause)
            client.call("screenshot")

        def osworld_process() -> None:
            client.call("run", command=["python", "-c", OSWORLD_PREFIX + action], timeout=30)

        print(f"desktop {size[0]}x{size[1]}, task {args.task}, backend {args.backend}")
        action_only = summary("ours: action (before settling)", timed(ours_action, args.steps))
        ours = summary("ours: action + settled screenshot", timed(ours_step, args.steps))
        spawn = summary("OSWorld-style: python -c per action", timed(osworld_process, args.osworld_steps))
        theirs = summary(
            f"OSWorld-style: + pause {args.pause:g}s + screenshot", timed(osworld_step, args.osworld_steps)
        )
        print(f"step speed-up: {theirs / ours:.1f}x (action alone: {spawn / action_only:.0f}x)")

        def pooled_reset() -> None:
            env._pool.wait(env.task.full_id)  # untimed: the episode before a reset outlasts the preparation
            t0 = time.perf_counter()
            env.reset(seed=0)
            pooled.append(time.perf_counter() - t0)

        pooled: list[float] = []
        for _ in range(args.resets):
            pooled_reset()
        warm = summary("ours: reset from the warm pool", pooled)
        cold = GuiEnv(args.task, backend=args.backend, screen_size=size, observation_type="screenshot")
        try:
            what = "container" if args.backend == "docker" else "local sandbox"
            recreate = summary(f"recreate the desktop {what} + config", timed(lambda: cold.reset(seed=0), args.resets))
        finally:
            cold.close()
        print(f"reset speed-up: {recreate / warm:.1f}x")
    finally:
        env.close()


if __name__ == "__main__":
    main()
