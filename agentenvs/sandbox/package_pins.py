"""Package versions a task's verifier installs that the package index cannot give it.

A Harbor verifier often installs its test tools itself (``pip install
pytest==8.3.4`` in ``test.sh``). When the index this machine reaches lacks
that version, or has it only for a newer Python than the image's, the
verifier fails whatever the agent did: that is the machine's lack, not the
agent's failure. What the verifier printed cannot tell the two apart (the
agent's code runs in the same sandbox and can print anything), so both sides
are read from outside it: the requirements from the task's own ``tests/``
files, and the versions from the index, asked from the host.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

PYPI_SIMPLE = "https://pypi.org/simple/"
#: PEP 691: the index's project page as JSON (versions, files, each file's Requires-Python).
_ACCEPT = "application/vnd.pypi.simple.v1+json"
_INDEX_TIMEOUT_S = 10.0
#: At most this many requirements, and this long, are spent on one verdict: a bounded cost on a failing verifier.
MAX_LOOKUPS = 20
LOOKUP_BUDGET_S = 30.0
_TEXT_LIMIT = 1 << 20

#: Options of pip/uv that take a value (the value is not a requirement).
_VALUED = frozenset(
    "-c --constraint -t --target --prefix --root --python -p --platform --python-version --implementation --abi "
    "--progress-bar --cache-dir --src --upgrade-strategy --log --timeout --retries --proxy --cert --client-cert "
    "--exists-action --report --no-binary --only-binary --config-settings -C --global-option --trusted-host "
    "--editable -e --from --with-editable --group --extra --directory --project".split()
)
#: Options that send pip/uv to another index: then PyPI is not where the version would come from.
_OTHER_INDEX = frozenset("-i --index-url --extra-index-url -f --find-links --index --default-index --no-index".split())
#: Verifier settings that send pip or uv to another index than PyPI.
OTHER_INDEX_ENV = frozenset({"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX"})
_REQUIREMENT_FILES = frozenset({"-r", "--requirement", "--requirements", "--with-requirements"})
#: Words before a command that are not it: shell keywords and the wrappers that run what follows.
_PREFIXES = frozenset(
    {"if", "then", "else", "elif", "do", "while", "until", "!", "time", "{", "sudo", "env", "exec", "command"}
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Pin:
    """A requirement with a version constraint, and the task file that asks for it."""

    requirement: str
    source: str

    @property
    def parsed(self) -> Requirement:
        return Requirement(self.requirement)


def _commands(text: str) -> Iterator[list[str]]:
    """Each simple command of a shell text, as words (lines joined at backslashes, split at ; & | ( ))."""
    joined = text.replace("\\\n", " ")
    for line in joined.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            words = list(lexer)
        except ValueError:  # an unbalanced quote: not a line we can read as a command
            continue
        command: list[str] = []
        for word in words:
            if word and set(word) <= set(";&|()"):
                if command:
                    yield command
                command = []
            else:
                command.append(word)
        if command:
            yield command


def _installer_args(words: list[str]) -> list[str] | None:
    """The arguments after an installing command (pip/pip3/python -m pip/uv pip install, uv add, uvx,
    uv tool install/run, uv run --with), or None when ``words`` is not one."""
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _PREFIXES):
        words = words[1:]
    if not words:
        return None
    head = Path(words[0]).name
    rest = words[1:]
    if re.fullmatch(r"python(3(\.\d+)?)?", head) and rest[:2] == ["-m", "pip"]:
        head, rest = "pip", rest[2:]
    if re.fullmatch(r"pip(3(\.\d+)?)?", head):
        return rest[1:] if rest[:1] == ["install"] else None
    if head == "uv":
        if rest[:2] == ["pip", "install"]:
            return rest[2:]
        if rest[:1] == ["add"] or rest[:2] in (["tool", "install"], ["tool", "run"]):
            return rest[1:] if rest[:1] == ["add"] else rest[2:]
        if rest[:1] == ["run"]:  # only its --with requirements: the command after it is not one
            return [a for i, a in enumerate(rest) if i and rest[i - 1] == "--with"]
        return None
    if head == "uvx":
        return rest
    return None


def _requirement_words(args: list[str]) -> tuple[list[str], list[str]] | None:
    """(requirement strings, requirement files) of an installer's arguments; None if it names another index."""
    found: list[str] = []
    files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name in _OTHER_INDEX:
            return None
        if name in _REQUIREMENT_FILES:
            files.append(value if eq else (args[i + 1] if i + 1 < len(args) else ""))
            i += 1 if eq else 2
            continue
        if name in ("--with", "-w"):
            found += (value if eq else (args[i + 1] if i + 1 < len(args) else "")).split(",")
            i += 1 if eq else 2
            continue
        if arg.startswith("-"):
            i += 2 if (arg in _VALUED and not eq) else 1
            continue
        found.append(arg)
        i += 1
    return found, files


def _pin(word: str, source: str) -> Pin | None:
    """``word`` as a requirement with a version constraint (``pkg==1.2``, ``pkg>=1,<2``, uvx's ``pkg@1.2``)."""
    word = word.strip()
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?@[0-9][^\s/]*", word):
        word = word.replace("@", "==", 1)  # uvx's name@version
    if not word or "/" in word or word.startswith("."):
        return None  # a path or a URL: not from the index
    try:
        requirement = Requirement(word)
    except InvalidRequirement:
        return None
    if requirement.url or requirement.marker is not None or not requirement.specifier:
        return None
    return Pin(str(requirement), source)


def _requirements_file(text: str, source: str) -> list[Pin] | None:
    """The pins of a requirements file; None if it sends pip to another index."""
    pins: list[Pin] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            if line.split()[0].split("=")[0] in _OTHER_INDEX:
                return None
            continue
        pin = _pin(line, source)
        if pin is not None:
            pins.append(pin)
    return pins


def _find(name: str, folders: list[Path]) -> Path | None:
    """A requirements file a command names, in the task's tests folders (by its path under /tests, or its name)."""
    relative = name.removeprefix("/tests/")
    for folder in folders:
        for candidate in (folder / relative, folder / Path(name).name):
            if candidate.is_file() and folder.resolve() in candidate.resolve().parents:
                return candidate
    return None


def verifier_pins(folders: Iterable[Path]) -> list[Pin]:
    """The version-constrained requirements the task's ``tests/`` files install, in the order they appear."""
    folders = list(folders)
    pins: dict[str, Pin] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or path.stat().st_size > _TEXT_LIMIT:
                continue
            text = path.read_bytes().decode("utf-8", "replace")
            source = path.relative_to(folder).as_posix()
            for words in _commands(text):
                args = _installer_args(words)
                parsed = _requirement_words(args) if args is not None else None
                if parsed is None:
                    continue
                found = [p for p in (_pin(w, source) for w in parsed[0]) if p is not None]
                for name in parsed[1]:
                    listed = _find(name, folders)
                    if listed is not None:
                        found += _requirements_file(listed.read_text("utf-8", "replace"), name) or []
                for pin in found:
                    pins.setdefault(pin.requirement, pin)
    return list(pins.values())


@dataclass(frozen=True)
class Release:
    """One version on the index: its files' Requires-Python, and whether every file was yanked."""

    version: Version
    requires_python: tuple[str | None, ...]
    yanked: bool


@lru_cache(maxsize=256)
def _project(name: str, index: str) -> tuple[Release, ...] | None:
    """The project's releases on ``index`` (PEP 691), or None if it has no such project. An index that
    does not answer raises ``OSError``: nothing can be concluded then."""
    url = f"{index.rstrip('/')}/{canonicalize_name(name)}/"
    request = urllib.request.Request(url, headers={"Accept": _ACCEPT})
    try:
        with urllib.request.urlopen(request, timeout=_INDEX_TIMEOUT_S) as answer:
            page = json.loads(answer.read(32 << 20))
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise OSError(f"{url}: HTTP {exc.code}") from exc
    except ValueError as exc:
        raise OSError(f"{url}: not a PEP 691 JSON page") from exc
    files: dict[Version, list[dict]] = {}
    for item in page.get("files") or []:
        version = _file_version(str(item.get("filename") or ""), name)
        if version is not None:
            files.setdefault(version, []).append(item)
    return tuple(
        Release(v, tuple(f.get("requires-python") for f in fs), all(bool(f.get("yanked")) for f in fs))
        for v, fs in sorted(files.items())
    )


def _file_version(filename: str, name: str) -> Version | None:
    """The version in a wheel's or an sdist's file name."""
    stem = re.sub(r"(\.tar\.gz|\.zip|\.tar\.bz2|\.whl|\.egg)$", "", filename)
    if filename.endswith(".whl"):
        parts = stem.split("-")
        text = parts[1] if len(parts) >= 5 else ""
    else:
        prefix = re.match(rf"^{re.escape(canonicalize_name(name)).replace('-', '[-_.]')}-", stem, re.IGNORECASE)
        text = stem[prefix.end() :] if prefix else ""
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _runs_on(release: Release, python: Version | None) -> bool:
    if python is None:
        return True
    for spec in release.requires_python:
        try:
            if not spec or python in SpecifierSet(spec):
                return True
        except ValueError:
            return True  # a file whose Requires-Python cannot be read: pip would try it
    return False


def unavailable(pins: Iterable[Pin], python: str | None, index: str = PYPI_SIMPLE) -> dict[str, str]:
    """The pins ``index`` cannot satisfy for ``python`` (``"3.11"``), each with why; pins the index could
    not be asked about are left out (nothing is known of them)."""
    interpreter = Version(python) if python else None
    lacking: dict[str, str] = {}
    deadline = time.monotonic() + LOOKUP_BUDGET_S
    for pin in list(pins)[:MAX_LOOKUPS]:
        if time.monotonic() > deadline:
            break
        requirement = pin.parsed
        try:
            releases = _project(requirement.name, index)
        except OSError:
            continue
        where = urlsplit(index).hostname or index
        if releases is None:
            lacking[pin.requirement] = f"{where} has no project {requirement.name}"
            continue
        exact = any(s.operator in ("==", "===") for s in requirement.specifier)
        matching = [r for r in releases if (exact or not r.yanked) and requirement.specifier.contains(r.version, True)]
        if not matching:
            newest = max((r.version for r in releases if not r.yanked), default=None)
            lacking[pin.requirement] = f"{where} has no version {requirement.specifier}" + (
                f" (newest {newest})" if newest else ""
            )
        elif not any(_runs_on(r, interpreter) for r in matching):
            needs = sorted({s for r in matching for s in r.requires_python if s})
            lacking[pin.requirement] = f"needs Python {' or '.join(needs) or 'another'}, the image has {python}"
    return lacking


@lru_cache(maxsize=64)
def image_python(image: str) -> str | None:
    """``major.minor`` of ``python3`` in ``image`` (a docker image; the host's own system when ``image`` is
    empty or a local template directory), asked of the image, never of an agent's sandbox."""
    code = "import sys; print('%d.%d' % sys.version_info[:2])"
    if image and not Path(image).is_dir():
        answer = _ask_image(image, ["python3", "-I", "-c", code])
    else:
        try:
            done = subprocess.run(["/usr/bin/python3", "-I", "-c", code], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        answer = done.stdout.strip() if done.returncode == 0 else ""
    return answer if re.fullmatch(r"\d+\.\d+", answer) else None


def _ask_image(image: str, argv: list[str]) -> str:
    """What ``argv`` prints in a throwaway, offline container of ``image`` ("" if it fails)."""
    import docker.errors

    from agentenvs.sandbox.docker_engine import docker_client, owner_labels

    try:
        out = docker_client().containers.run(
            image, argv, entrypoint=[], network_mode="none", remove=True, labels=owner_labels(), stderr=False
        )
    except docker.errors.DockerException:
        return ""
    return out.decode("utf-8", "replace").strip()
