"""The bug synthesizer on a real public library, fetched as its source distribution from PyPI.

    python benchmarks/swe_synthesis.py [--package tomlkit] [--tasks 22] [--timing-tasks 6]

1. Downloads the package's sdist (PyPI's JSON API) into a cache outside the
   repository (``~/.cache/agentenvs/sdists``) and unpacks it in a temporary
   directory: nothing of it is committed.
2. Runs ``agentenvs swe synthesize`` as a user would, interrupts it with
   SIGINT once half the tasks are written, checks they were kept, and
   finishes with ``--resume`` (no mutant tried twice).
3. Validates every task (oracle 1, no-op 0, wrong fix below 1).
4. Times ``--jobs 1`` against ``--jobs 2`` on fresh outputs (same seed, so
   the same mutants in the same order): mutants tried per second, tasks per
   minute.

Prints a JSON summary; its numbers go in docs/swe.md.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentenvs.core.task import load_task  # noqa: E402
from agentenvs.envs.swe.synth_output import MANIFEST_NAME, STATE_NAME  # noqa: E402
from agentenvs.envs.swe.synthesize import synthesize  # noqa: E402
from agentenvs.validate import validate_tasks  # noqa: E402

CACHE = Path.home() / ".cache" / "agentenvs" / "sdists"


def fetch_sdist(package: str, dest: Path) -> Path:
    """The package's newest sdist, unpacked under ``dest``; the archive is cached."""
    api = f"https://pypi.org/pypi/{package}/json"
    with urllib.request.urlopen(api, timeout=60) as response:
        meta = json.load(response)
    sdist = next(u for u in meta["urls"] if u["packagetype"] == "sdist")
    archive = CACHE / sdist["filename"]
    if not archive.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(urllib.parse.urljoin(api, sdist["url"]), timeout=120) as response:
            archive.write_bytes(response.read())
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return next(p for p in dest.iterdir() if p.is_dir())


def source_lines(tree: Path) -> int:
    return sum(
        len(p.read_text(encoding="utf-8", errors="replace").splitlines())
        for p in tree.rglob("*.py")
        if not {"tests", "test", "docs", "benchmarks", "examples"} & set(p.relative_to(tree).parts)
    )


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentenvs.cli", "swe", "synthesize", *args]


def tried(out: Path) -> list[str]:
    return [json.loads(ln)["tried"] for ln in (out / STATE_NAME).read_text().splitlines()[1:]]


def interrupted_then_resumed(src: Path, out: Path, name: str, tasks: int, log: Path) -> dict:
    """Start, SIGINT once half the tasks are written, then --resume to the end."""
    common = [str(src), "--out", str(out), "--name", name, "--jobs", "2", "--max", str(tasks)]
    started = time.monotonic()
    with open(log, "w") as err:
        # A shell's background job ignores SIGINT, and children inherit that: give Ctrl-C back its effect.
        proc = subprocess.Popen(
            cli(*common),
            cwd=ROOT,
            stderr=err,
            stdout=err,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        while proc.poll() is None and len(list(out.glob("*/task.toml"))) < tasks // 2:
            time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        first_rc = proc.wait(timeout=600)
    first_elapsed = time.monotonic() - started
    kept = sorted(p.parent.name for p in out.glob("*/task.toml"))
    tried_first = tried(out)
    started = time.monotonic()
    with open(log, "a") as err:
        second_rc = subprocess.run(cli(*common, "--resume"), cwd=ROOT, stderr=err, stdout=err, timeout=3600).returncode
    resume_elapsed = time.monotonic() - started
    tried_all = tried(out)
    final = sorted(p.parent.name for p in out.glob("*/task.toml"))
    listed = [json.loads(ln)["instance_id"] for ln in (out / MANIFEST_NAME).read_text().splitlines()]
    return {
        "interrupted_exit_code": first_rc,
        "tasks_kept_after_sigint": len(kept),
        "mutants_tried_before_sigint": len(tried_first),
        "seconds_before_sigint": round(first_elapsed, 1),
        "resume_exit_code": second_rc,
        "seconds_resumed": round(resume_elapsed, 1),
        "mutants_tried_in_all": len(tried_all),
        "mutant_tried_twice": len(tried_all) != len(set(tried_all)),
        "kept_tasks_survive_resume": set(kept) <= set(final),
        "tasks": len(final),
        "manifest_lists_each_task_once": sorted(listed) == final,
    }


def validate(out: Path) -> dict:
    tasks = [load_task(p.parent, family="swe") for p in sorted(out.glob("*/task.toml"))]
    results = validate_tasks(tasks, env_kwargs={"backend": "local", "dense_checks": False}, jobs=2)
    rows = {r.task_id: {v: e.score for v, e in r.episodes.items()} for r in results}
    return {
        "validated": len(rows),
        "oracle_1": sum(r["oracle"] == 1.0 for r in rows.values()),
        "noop_0": sum(r["noop"] == 0.0 for r in rows.values()),
        "wrong_below_1": sum(r["wrong"] is not None and r["wrong"] < 1.0 for r in rows.values()),
        "failures": {k: v for k, v in rows.items() if not (v["oracle"] == 1.0 and v["noop"] == 0.0)},
    }


def quality(out: Path) -> dict:
    tasks = [load_task(p.parent, family="swe") for p in sorted(out.glob("*/task.toml"))]
    categories: dict[str, int] = {}
    difficulty: dict[str, int] = {}
    for t in tasks:
        category = t.config.swe["mutation_kind"].split()[0]
        categories[category] = categories.get(category, 0) + 1
        difficulty[str(t.difficulty)] = difficulty.get(str(t.difficulty), 0) + 1
    return {
        "operators": categories,
        "difficulty": difficulty,
        "reproduced_statements": sum(bool(t.config.swe.get("reproduced")) for t in tasks),
        "with_wrong_fix": sum((p / "solution" / "wrong.diff").is_file() for p in (t.path for t in tasks) if p),
        "median_pass_to_pass": sorted(len(t.config.swe["PASS_TO_PASS"]) for t in tasks)[len(tasks) // 2],
    }


def timing(src: Path, work: Path, name: str, tasks: int) -> dict:
    rows = {}
    for jobs in (1, 2):
        result = synthesize(src, work / f"jobs{jobs}", max_tasks=tasks, jobs=jobs, name=name)
        rows[f"jobs{jobs}"] = {
            "tasks": len(result.tasks),
            "mutants_tried": result.tried,
            "seconds": round(result.elapsed, 1),
            "mutants_per_second": round(result.tried / result.elapsed, 3),
            "tasks_per_minute": round(60 * len(result.tasks) / result.elapsed, 2),
        }
    rows["jobs2_over_jobs1"] = round(rows["jobs1"]["seconds"] / rows["jobs2"]["seconds"], 2)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package", default="tomlkit")
    parser.add_argument("--tasks", type=int, default=22)
    parser.add_argument("--timing-tasks", type=int, default=6)
    parser.add_argument("--keep", type=Path, help="Copy the synthesized tasks here (outside the repository).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentenvs-bench-synth-") as tmp:
        work = Path(tmp)
        src = fetch_sdist(args.package, work / "sdist")
        out = work / "tasks"
        summary: dict = {"package": src.name, "source_lines": source_lines(src)}
        summary["interrupt_and_resume"] = interrupted_then_resumed(
            src, out, args.package, args.tasks, work / "progress.log"
        )
        summary["progress_log_tail"] = (work / "progress.log").read_text()[-600:]
        summary["quality"] = quality(out)
        summary["validation"] = validate(out)
        summary["timing"] = timing(src, work / "timing", args.package, args.timing_tasks)
        if args.keep:
            subprocess.run(["cp", "-r", str(out), str(args.keep)], check=True)
        print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
