"""The evaluators run under ``python3 -I -S``, and then nothing beside the trusted copy is imported.

A planted ``evaluators`` package, ``json.py``, ``sitecustomize.py`` and a
user-site ``usercustomize.py`` stand for what an agent could write to the
working directory, ``PYTHONPATH`` or its home.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evaluators.conftest import put

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "evaluators" / "_entry.py"
ONE_LINER = (
    f"import sys; sys.path.append({str(ROOT)!r}); from evaluators.__main__ import main; sys.exit(main(sys.argv[1:]))"
)
PLANT = "import pathlib; pathlib.Path({marker!r}).write_text('imported {name}')\n"
#: This interpreter and the system's (the host's own python, as a trusted checker would use).
PYTHONS = [sys.executable] + [p for p in ("/usr/bin/python3",) if os.path.exists(p)]


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A directory of look-alike modules, and an environment pointing every Python hook at it."""
    evil = tmp_path / "evil"
    marker = tmp_path / "hijacked"
    for name in ("evaluators/__init__.py", "evaluators/__main__.py", "json.py", "sitecustomize.py"):
        put(evil, name, PLANT.format(marker=str(marker), name=name))
    home = tmp_path / "home"
    user_site = home / ".local/lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    put(user_site, "usercustomize.py", PLANT.format(marker=str(marker), name="usercustomize"))
    env = {**os.environ, "PYTHONPATH": str(evil), "HOME": str(home), "PYTHONSTARTUP": str(evil / "json.py")}
    return evil, env


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def test_the_planted_modules_do_hijack_a_plain_run(planted, tmp_path):
    evil, env = planted
    run([sys.executable, "-m", "evaluators", "list"], {**env, "PYTHONPATH": f"{evil}:{ROOT}"}, evil)
    assert (tmp_path / "hijacked").exists(), "the attack is real for an interpreter that is not isolated"


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("form", ["entry", "one-liner"])
def test_isolated_run_imports_only_the_trusted_copy(planted, tmp_path, python, form):
    evil, env = planted
    state = tmp_path / "state"
    put(state, "/app/out.txt", "done\n")
    env["AGENTENVS_STATE_ROOT"] = str(state)
    specs = [
        {"check": "text_equals", "args": {"path": "/app/out.txt", "expected": "done"}},
        {"check": "sqlite_query", "args": {"path": "/app/none.db", "query": "SELECT 1", "expected_scalar": 1}},
        {"check": "command_exit", "args": {"command": "true"}},
    ]
    head = [ONE_LINER] if form == "one-liner" else [str(ENTRY)]
    argv = [python, "-I", "-S", "-B", *(["-c"] if form == "one-liner" else []), *head, "batch", json.dumps(specs)]
    out = run(argv, env, evil)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    assert [r["passed"] for r in results] == [True, False, False]
    assert "missing" in results[1]["detail"] and "live check" in results[2]["detail"]
    assert not (tmp_path / "hijacked").exists(), (tmp_path / "hijacked").read_text()


def test_isolated_reward_writes_the_reward(planted, tmp_path):
    evil, env = planted
    out_file = tmp_path / "out" / "reward.json"
    spec = json.dumps([{"check": "file_absent", "args": {"path": "/nowhere"}}])
    out = run([sys.executable, "-I", "-S", "-B", str(ENTRY), "reward", spec, "--out", str(out_file)], env, evil)
    assert out.returncode == 0, out.stderr
    assert json.loads(out_file.read_text())["reward"] == 1.0
    assert not (tmp_path / "hijacked").exists()
