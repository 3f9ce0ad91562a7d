"""The SWE corpus's sources as ``build-swe-repos.py`` reads them, checked before anything is built.

Each library under ``swe-corpus/<lib>/`` has its final tree in ``repo/``, its commits in
``history.toml`` and one bug per file in ``bugs/*.toml`` (format: swe-corpus/README.md);
a bug's instance carries what the build derives from it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "swe-corpus"


class BuildError(Exception):
    """A corpus source file is inconsistent; the message says which and why."""


@dataclass
class Library:
    name: str
    root: Path
    repo: str
    version: str
    author: str
    commits: list[dict]


@dataclass
class Instance:
    lib: Library
    bug_file: Path
    spec: dict
    instance_id: str
    base_commit: str = ""
    setup_commit: str = ""
    patch: str = ""
    test_patch: str = ""
    wrong_patch: str = ""
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    bundle: bytes = b""


def load_library(root: Path) -> Library:
    data = tomllib.loads((root / "history.toml").read_text(encoding="utf-8"))
    return Library(root.name, root, data["repo"], data["version"], data["author"], data["commits"])


def source_files(tree: Path) -> list[str]:
    skip = {"__pycache__", ".pytest_cache"}
    return sorted(
        str(p.relative_to(tree))
        for p in tree.rglob("*")
        if p.is_file() and not skip.intersection(p.relative_to(tree).parts) and p.suffix != ".pyc"
    )


def check_history(lib: Library) -> None:
    """Every file under repo/ is committed by history.toml, and only files that exist."""
    tree = lib.root / "repo"
    committed = {rel for commit in lib.commits for rel in commit["files"]}
    absent = sorted(rel for rel in committed if not (tree / rel).is_file())
    if absent:
        raise BuildError(f"{lib.root / 'history.toml'}: not files under repo/: {', '.join(absent)}")
    missing = sorted(set(source_files(tree)) - committed)
    if missing:
        raise BuildError(f"{lib.root / 'history.toml'}: files never committed: {', '.join(missing)}")


def buggy_files(lib: Library, edits: list[dict], where: str) -> dict[str, str]:
    """The content of every file the regression edits, with all of its edits applied."""
    contents: dict[str, str] = {}
    for edit in edits:
        rel = edit["file"]
        if rel not in contents:
            contents[rel] = (lib.root / "repo" / rel).read_text(encoding="utf-8")
        contents[rel] = replace_text(contents[rel], edit["clean"], edit["buggy"], f"{where} ({rel})")
    return contents


def replace_text(text: str, old: str, new: str, where: str) -> str:
    count = text.count(old)
    if count != 1:
        raise BuildError(f"{where}: expected the snippet exactly once, found {count}:\n{old}")
    return text.replace(old, new)


def collect(only: set[str]) -> list[Instance]:
    instances = []
    for root in sorted(p.parent for p in CORPUS.glob("*/history.toml")):
        lib = load_library(root)
        owner_name = lib.repo.replace("/", "__")
        for bug_file in sorted((root / "bugs").glob("*.toml")):
            spec = tomllib.loads(bug_file.read_text(encoding="utf-8"))
            instance_id = f"{owner_name}-{int(spec['number']):04d}"
            if not only or instance_id in only:
                instances.append(Instance(lib, bug_file, spec, instance_id))
    ids = [i.instance_id for i in instances]
    if len(ids) != len(set(ids)):
        raise BuildError(f"duplicate bug numbers: {sorted(i for i in ids if ids.count(i) > 1)}")
    return instances
