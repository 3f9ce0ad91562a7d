#!/usr/bin/env python3
"""Build the SWE task corpus (tasks/swe/) from the sources in swe-corpus/.

Every library under ``swe-corpus/<lib>/`` has its final source tree in
``repo/``, its commit history in ``history.toml`` and one bug per file in
``bugs/*.toml`` (format: swe-corpus/README.md; read and checked by
``swe_corpus.py`` beside this script). For each library this script
replays, for each bug, the history into a fresh git repository with fixed
authors and dates, where every file the regression edits is committed buggy
from the commit that first adds it: the bug arrives inside an ordinary feature
commit, and the fixed content of those files never exists in the history, so
neither ``git show``, ``git revert`` nor ``git log -p`` hands an agent the gold
patch. It bundles exactly that history, derives the gold, test and wrong
patches with ``git diff``, and proves the instance by running the tests:
FAIL_TO_PASS fail before the gold patch and pass after it, every other test
passes both times, the wrong patch leaves at least one FAIL_TO_PASS failing,
and no post-fix blob is reachable in the bundle. The output is byte-for-byte
reproducible.

Usage: python3 scripts/build-swe-repos.py [--python PY] [--only INSTANCE_ID ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from swe_corpus import ROOT, BuildError, Instance, Library, buggy_files, check_history, collect, replace_text

OUT = ROOT / "tasks" / "swe"
TEST_CMD = "python3 -m pytest -p no:cacheprovider"
PYTEST_TIMEOUT_SEC = 120
_RESULT_LINE = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED) (.+?)(?: - .*)?$")


def git_env(author: str, date: str) -> dict[str, str]:
    """An environment that makes git ignore user config and stamp fixed identities."""
    match = re.fullmatch(r"(.+?) <(.+)>", author)
    if not match:
        raise BuildError(f"author {author!r} must look like 'Name <email>'")
    name, email = match.groups()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=email,
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_NAME=name,
        GIT_COMMITTER_EMAIL=email,
        GIT_COMMITTER_DATE=date,
        TZ="UTC",
        LC_ALL="C",
    )
    return env


def git(repo: Path, *args: str, env: dict[str, str] | None = None, input_: bytes | None = None) -> str:
    env = env or git_env("agentenvs build <build@agentenvs.invalid>", "2024-01-01T00:00:00Z")
    proc = subprocess.run(
        ["git", "-c", "core.autocrlf=false", "-c", "pack.threads=1", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        env=env,
        input=input_,
        capture_output=True,
        timeout=60,
    )
    if proc.returncode != 0:
        raise BuildError(f"git {' '.join(args)} failed in {repo}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode()


def build_history(lib: Library, dest: Path, overrides: dict[str, str]) -> str:
    """Replay history.toml into ``dest``, committing ``overrides`` instead of repo/ content.

    A file is committed at its ``overrides`` content wherever history.toml
    lists it, so that content is the only one it ever has: the regression is
    part of the feature commit that adds the file. Returns the last commit.
    """
    tree = lib.root / "repo"
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    for commit in lib.commits:
        for rel in commit["files"]:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            if rel in overrides:
                (dest / rel).write_text(overrides[rel], encoding="utf-8")
            else:
                shutil.copyfile(tree / rel, dest / rel)
        env = git_env(commit.get("author", lib.author), commit["date"])
        git(dest, "add", "--", *commit["files"], env=env)
        git(dest, "commit", "-q", "-m", commit["message"].strip(), env=env)
    return git(dest, "rev-parse", "HEAD").strip()


def replace_once(path: Path, old: str, new: str, where: str) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(replace_text(text, old, new, f"{where} ({path.name})"), encoding="utf-8")


def assert_fix_unreachable(repo: Path, files: list[str], where: str) -> None:
    """The working tree's content of ``files`` (the fixed version) is no object of ``main``'s history."""
    fixed = set(git(repo, "hash-object", "--", *files).split())
    reachable = {line.split(" ", 1)[0] for line in git(repo, "rev-list", "--objects", "main").splitlines()}
    if fixed & reachable:
        raise BuildError(f"{where}: the fixed content of {files} exists in the history; the bundle would leak it")


def diff_and_restore(repo: Path) -> str:
    """The working tree's changes as a unified diff, then a clean working tree again."""
    patch = git(repo, "diff", "--no-color", "--no-ext-diff", "--no-renames")
    git(repo, "reset", "-q")
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "clean", "-qfdx")
    if not patch:
        raise BuildError(f"empty diff in {repo}")
    return patch


def run_pytest(repo: Path, python: str) -> dict[str, str]:
    """Run the whole suite; returns {node id: outcome} from pytest's -rA summary."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    cmd = [python, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "--tb=no", "-q"]
    proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=PYTEST_TIMEOUT_SEC)
    results: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        match = _RESULT_LINE.match(line)
        if match:
            outcome, node_id = match.group(1), match.group(2)
            # PASSED lines carry the whole id; other outcomes append " - <message>".
            results[node_id if outcome != "PASSED" else line.split(" ", 1)[1]] = outcome
    if not results:
        raise BuildError(f"pytest reported nothing in {repo}:\n{proc.stdout}\n{proc.stderr}")
    return results


def apply_patch(repo: Path, patch: str) -> None:
    git(repo, "apply", "--whitespace=nowarn", "-", input_=patch.encode())


def build_instance(inst: Instance, work: Path, python: str) -> Instance:
    spec, lib = inst.spec, inst.lib
    where = str(inst.bug_file.relative_to(ROOT))
    repo = work / inst.instance_id
    extra = sorted(set(spec.get("regression", {})) - {"edits"})
    if extra:
        raise BuildError(f"{where}: [regression] takes only edits (the bug is folded into history), not {extra}")
    edits = spec["regression"]["edits"]
    inst.base_commit = build_history(lib, repo, buggy_files(lib, edits, where))
    # The last commit of the task's history is where its environment is set up.
    inst.setup_commit = inst.base_commit

    for edit in edits:
        if edit.get("revert", True):
            replace_once(repo / edit["file"], edit["buggy"], edit["clean"], where)
    assert_fix_unreachable(repo, sorted({e["file"] for e in edits if e.get("revert", True)}), where)
    inst.patch = diff_and_restore(repo)
    for edit in spec["wrong"]["edits"]:
        replace_once(repo / edit["file"], edit["find"], edit["replace"], where)
    inst.wrong_patch = diff_and_restore(repo)
    tests = spec["tests"]
    for test_edit in tests["edits"]:
        path = repo / test_edit["file"]
        if "append" in test_edit:
            path.parent.mkdir(parents=True, exist_ok=True)
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            path.write_text(old + test_edit["append"], encoding="utf-8")
        else:
            replace_once(path, test_edit["find"], test_edit["replace"], where)
    git(repo, "add", "-N", ".")
    inst.test_patch = diff_and_restore(repo)
    for name, patch in (("patch", inst.patch), ("wrong", inst.wrong_patch)):
        touched = re.findall(r"^diff --git a/(\S+)", patch, flags=re.M)
        if any(p.startswith("tests/") for p in touched):
            raise BuildError(f"{where}: the {name} patch must not touch tests: {touched}")

    apply_patch(repo, inst.test_patch)
    before = run_pytest(repo, python)
    apply_patch(repo, inst.patch)
    after = run_pytest(repo, python)
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "clean", "-qfdx")
    apply_patch(repo, inst.test_patch)
    apply_patch(repo, inst.wrong_patch)
    wrong = run_pytest(repo, python)

    declared = sorted(f"{t['file']}::{name}" for t in tests["edits"] for name in t.get("fail_to_pass", []))
    f2p = sorted(t for t in after if after[t] == "PASSED" and before.get(t) != "PASSED")
    if f2p != declared:
        seen = {t: (before.get(t), after.get(t)) for t in declared}
        raise BuildError(f"{where}: FAIL_TO_PASS should be {declared}, the tests say {f2p} (before, after: {seen})")
    broken = sorted(
        t for t in set(before) | set(after) if t not in f2p and (before.get(t), after.get(t)) != ("PASSED", "PASSED")
    )
    if broken:
        raise BuildError(f"{where}: tests not passing both before and after the fix: {broken}")
    if all(wrong.get(t) == "PASSED" for t in f2p):
        raise BuildError(f"{where}: the wrong patch passes every FAIL_TO_PASS test; make it miss a case")
    bad = [t for t in after if re.search(r"\s", t)]
    if bad:
        raise BuildError(f"{where}: test ids must not contain whitespace: {bad}")
    inst.fail_to_pass = f2p
    inst.pass_to_pass = sorted(t for t in after if t not in f2p)

    git(repo, "checkout", "-q", "--", ".")
    git(repo, "clean", "-qfdx")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    bundle = work / f"{inst.instance_id}.bundle"
    git(repo, "bundle", "create", "-q", str(bundle), "main")
    inst.bundle = bundle.read_bytes()
    return inst


def toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def toml_list(values: list[str]) -> str:
    if not values:
        return "[]"
    return "[\n" + "".join(f"    {toml_str(v)},\n" for v in values) + "]"


def task_toml(inst: Instance) -> str:
    spec = inst.spec
    tags = [inst.lib.name, *spec.get("tags", [])]
    return "\n".join(
        [
            f"id = {toml_str(inst.instance_id)}",
            'family = "swe"',
            'version = "1.0"',
            f"difficulty = {toml_str(spec['difficulty'])}",
            f"tags = {json.dumps(tags)}",
            "",
            "[metadata]",
            'author_name = "agentenvs"',
            'category = "software-engineering"',
            f"difficulty = {toml_str(spec['difficulty'])}",
            f"tags = {json.dumps(tags)}",
            "",
            "[environment]",
            'workdir = "/testbed"',
            "",
            "[limits]",
            "max_steps = 60",
            "",
            "[swe]",
            f"instance_id = {toml_str(inst.instance_id)}",
            f"repo = {toml_str(inst.lib.repo)}",
            f"base_commit = {toml_str(inst.base_commit)}",
            f"environment_setup_commit = {toml_str(inst.setup_commit)}",
            f"version = {toml_str(inst.lib.version)}",
            f"created_at = {toml_str(spec['created_at'])}",
            f"test_cmd = {toml_str(TEST_CMD)}",
            'bundle = "environment/repo.bundle"',
            'patch = "solution/patch.diff"',
            'wrong_patch = "solution/wrong.diff"',
            'test_patch = "tests/test_patch.diff"',
            f"FAIL_TO_PASS = {toml_list(inst.fail_to_pass)}",
            f"PASS_TO_PASS = {toml_list(inst.pass_to_pass)}",
            "",
        ]
    )


def instance_record(inst: Instance) -> dict[str, str]:
    """One line of instances.jsonl, with the fields and encodings of the HF SWE-bench datasets."""
    return {
        "repo": inst.lib.repo,
        "instance_id": inst.instance_id,
        "base_commit": inst.base_commit,
        "patch": inst.patch,
        "test_patch": inst.test_patch,
        "problem_statement": inst.spec["issue"]["statement"].strip() + "\n",
        "hints_text": inst.spec.get("hints_text", ""),
        "created_at": inst.spec["created_at"],
        "version": inst.lib.version,
        "FAIL_TO_PASS": json.dumps(inst.fail_to_pass),
        "PASS_TO_PASS": json.dumps(inst.pass_to_pass),
        "environment_setup_commit": inst.setup_commit,
    }


def write_task(inst: Instance, out: Path) -> None:
    task = out / inst.instance_id
    for sub in ("environment", "solution", "tests"):
        (task / sub).mkdir(parents=True)
    (task / "task.toml").write_text(task_toml(inst), encoding="utf-8")
    (task / "instruction.md").write_text(inst.spec["issue"]["statement"].strip() + "\n", encoding="utf-8")
    (task / "environment" / "repo.bundle").write_bytes(inst.bundle)
    (task / "solution" / "patch.diff").write_text(inst.patch, encoding="utf-8")
    (task / "solution" / "wrong.diff").write_text(inst.wrong_patch, encoding="utf-8")
    (task / "tests" / "test_patch.diff").write_text(inst.test_patch, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter with pytest, used to prove each task")
    parser.add_argument("--only", nargs="*", default=[], help="build only these instance ids")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    args.python = os.path.abspath(args.python) if os.sep in args.python else shutil.which(args.python) or args.python
    instances = collect(set(args.only))
    if not instances:
        raise BuildError("no bugs matched")
    with tempfile.TemporaryDirectory(prefix="swe-build-") as tmp:
        work = Path(tmp)
        for lib in {inst.lib.name: inst.lib for inst in instances}.values():
            check_history(lib)
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(build_instance, i, work, args.python) for i in instances]
            built = [f.result() for f in futures]
    OUT.mkdir(parents=True, exist_ok=True)
    for inst in built:
        shutil.rmtree(OUT / inst.instance_id, ignore_errors=True)
        write_task(inst, OUT)
    if not args.only:
        known = {i.instance_id for i in built}
        for stale in OUT.glob("*__*"):
            if stale.is_dir() and stale.name not in known:
                shutil.rmtree(stale)
        with open(OUT / "instances.jsonl", "w", encoding="utf-8") as fh:
            for inst in built:
                fh.write(json.dumps(instance_record(inst), ensure_ascii=False) + "\n")
    for inst in built:
        print(
            f"{inst.instance_id}  F2P={len(inst.fail_to_pass)} P2P={len(inst.pass_to_pass)}  base={inst.base_commit[:10]}"
        )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BuildError as exc:
        print(f"build-swe-repos: {exc}", file=sys.stderr)
        sys.exit(1)
