"""Exit 0 iff /app/start-worker.sh, run by the grader, leaves a worker.py running that processes a new job.

Nothing the agent left running is trusted: any worker still running is
stopped first, then the worker is started from the agent's script.
"""
import os
import random
import signal
import subprocess
import sys
import time


def cmdline(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as fh:
        return fh.read().replace(b"\0", b" ").decode(errors="replace")


def stop_workers():
    """Kill every worker.py left over from the agent's session."""
    for _ in range(50):
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if int(pid) != os.getpid() and "worker.py" in cmdline(pid):
                    found.append(int(pid))
            except OSError:
                continue
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)


def worker_command(pid):
    """The command line of `pid` once it has exec'd the worker (up to 10 s).

    `$!` names the background child before it execs (a subshell, then nohup,
    then python3), so a correct script can leave a pid whose command line
    is still the shell's for a moment on a loaded machine.
    """
    command = ""
    for _ in range(100):
        try:
            command = cmdline(pid)
        except OSError:
            return command
        if "worker.py" in command:
            return command
        time.sleep(0.1)
    return command


def main():
    stop_workers()
    if not os.access("/app/start-worker.sh", os.X_OK):
        print("/app/start-worker.sh is missing or not executable")
        return 1
    try:
        started = subprocess.run(
            ["/app/start-worker.sh"], cwd="/", stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30,
        )
    except subprocess.TimeoutExpired:
        print("/app/start-worker.sh did not return within 30 s (is the worker in the foreground?)")
        return 1
    if started.returncode != 0:
        print(f"/app/start-worker.sh exited {started.returncode}")
        return 1
    try:
        with open("/app/worker.pid") as fh:
            pid = int(fh.read().strip())
    except (OSError, ValueError) as exc:
        print(f"pid file: {exc}")
        return 1
    command = worker_command(pid)
    if "worker.py" not in command:
        print(f"pid {pid} is not the worker: {command!r}")
        return 1
    rng = random.Random()
    numbers = [rng.randint(-1000, 1000) for _ in range(5)]
    name = f"hidden-{rng.randrange(10**9)}"
    os.makedirs("/app/queue", exist_ok=True)
    with open(f"/app/queue/{name}.job.tmp", "w") as fh:
        fh.write("\n".join(map(str, numbers)) + "\n")
    os.replace(f"/app/queue/{name}.job.tmp", f"/app/queue/{name}.job")
    result = f"/app/done/{name}.result"
    for _ in range(300):  # 30 s: a loaded machine must not fail a working worker
        if os.path.exists(result):
            with open(result) as fh:
                got = fh.read().strip()
            print(f"result {got}, expected {sum(numbers)}")
            return 0 if float(got) == sum(numbers) else 1
        time.sleep(0.1)
    print("the new job was not processed within 30 s")
    return 1


sys.exit(main())
