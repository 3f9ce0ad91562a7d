"""How the grader runs the hidden tests: an isolated interpreter, a clean environment, a sealed record.

A task's ``test_cmd`` runs pytest (``python3 -m pytest ...``, or a shell prefix
that activates an environment and then ``python -m pytest``). The grader keeps
the prefix and the interpreter, and replaces ``-m pytest`` with
``-I -B`` and the launcher :mod:`.sealed_pytest`, whose
record (outcomes, exit code, what it saw) is read back here and believed only
if its HMAC checks out with the key only this run knew.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import posixpath
import re
import secrets
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from agentenvs.envs.swe.junit import Case, junit_key

LAUNCHER = Path(__file__).with_name("sealed_pytest.py")
_MODULE_PYTEST = re.compile(r"\s-m\s*pytest(?=\s|$)")
_BARE_PYTEST = re.compile(r"(?:^|(?<=[\s;&|(]))pytest(?=\s|$)")
#: Variables that steer Python or pytest; dropped from the test run's environment.
SCRUB = 'for v in $(compgen -e); do case "$v" in PYTHON*|PYTEST_*|VIRTUAL_ENV|COV_*) unset "$v";; esac; done'
#: Lists every top-level name the test interpreter can import (for the shadow-module rule).
LIST_IMPORTABLE = (
    "import sys, pkgutil; n = set(sys.builtin_module_names) | set(getattr(sys, 'stdlib_module_names', ())); "
    "n.update(m[1] for m in pkgutil.iter_modules()); sys.stdout.write(chr(10).join(sorted(n)))"
)


class TestCommandError(ValueError):
    """The task's ``test_cmd`` does not run pytest in a form the grader can isolate."""


def split_test_cmd(test_cmd: str) -> tuple[str, str]:
    """``(prefix through the interpreter, pytest's arguments)`` of ``test_cmd``."""
    found = list(_MODULE_PYTEST.finditer(test_cmd))
    if found:
        last = found[-1]
        return test_cmd[: last.start()], test_cmd[last.end() :]
    bare = list(_BARE_PYTEST.finditer(test_cmd))
    if bare:
        last = bare[-1]
        return test_cmd[: last.start()] + '"$(command -v python3 || command -v python)"', test_cmd[last.end() :]
    raise TestCommandError(
        f"test_cmd {test_cmd!r} does not run pytest; the grader needs `python -m pytest ...` or `pytest ...`"
    )


def interpreter_command(test_cmd: str, rest: str) -> str:
    """``test_cmd``'s prefix and interpreter, isolated (``-I``), followed by ``rest``."""
    head, _ = split_test_cmd(test_cmd)
    return f"{head} -I {rest}"


@dataclass(frozen=True)
class Seal:
    """The secret a test run signs its record with, and where the record goes.

    The record lives in ``out_dir``, a directory the run's script creates with
    ``mkdir`` (not ``-p``): it cannot have existed before the run.
    """

    key: bytes
    out_dir: str

    @classmethod
    def new(cls, stage: str) -> Seal:
        return cls(key=secrets.token_bytes(32), out_dir=f"{stage}/out-{secrets.token_hex(8)}")

    @property
    def record(self) -> str:
        return f"{self.out_dir}/record.json"

    def file_content(self) -> bytes:
        return json.dumps({"key": base64.b64encode(self.key).decode(), "record": self.record}).encode()


def test_command(test_cmd: str, *, workdir: str, launcher: str, seal: Seal, seal_file: str, args: list[str]) -> str:
    """The bash script that runs the tests isolated.

    HOME and TMPDIR are new directories next to the seal's output directory,
    with unpredictable names. (``-X pycache_prefix`` would also keep
    ``__pycache__`` in the tree from being read, but it makes Python ignore
    every cache, pytest's and the standard library's too: about 1.5 s a run.
    The grader removes any bytecode a patch adds instead.)
    """
    head, extra = split_test_cmd(test_cmd)
    tag = secrets.token_hex(6)
    parent = posixpath.dirname(seal.out_dir)
    home, tmp = (f"{parent}/{name}-{tag}" for name in ("home", "tmp"))
    q = shlex.quote
    pytest_args = " ".join(q(a) for a in args)
    return (
        f"{SCRUB}\n"
        f"mkdir -m 700 {q(seal.out_dir)} && mkdir -p {q(home)} {q(tmp)} || exit 97\n"
        f"export HOME={q(home)} TMPDIR={q(tmp)} PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONDONTWRITEBYTECODE=1\n"
        f"cd {q(workdir)} || exit 98\n"
        f"{head} -I -B {q(launcher)} {q(seal_file)}{extra} {pytest_args}\n"
    )


class RecordError(ValueError):
    """The run's record is missing, forged or malformed."""


@dataclass
class RunRecord:
    """What the launcher saw: pytest's exit code, each test's outcome, and any tampering."""

    exit_code: int
    cases: list[Case] = field(default_factory=list)
    tampered: list[str] = field(default_factory=list)
    observed: list[str] = field(default_factory=list)


def read_record(data: bytes, seal: Seal) -> RunRecord:
    """Check the record's HMAC against ``seal`` and decode it."""
    try:
        outer = json.loads(data)
        body, mac = outer["body"], outer["mac"]
        expected = hmac.new(seal.key, body.encode("utf-8"), hashlib.sha256).hexdigest()
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RecordError(f"malformed record: {exc}") from None
    if not isinstance(mac, str) or not hmac.compare_digest(mac, expected):
        raise RecordError("the record's signature does not match: it was not written by this run's launcher")
    inner = json.loads(body)
    cases = [Case(junit_key(nodeid), outcome, nodeid, message) for nodeid, outcome, message in inner["tests"]]
    return RunRecord(
        exit_code=int(inner["exit"]),
        cases=cases,
        tampered=[str(t) for t in inner.get("tampered", [])],
        observed=[str(t) for t in inner.get("observed", [])],
    )
