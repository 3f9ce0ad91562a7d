"""Every checker against a state root: in-sandbox paths resolve beneath it, never on the host."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from evaluators import ArgumentError, is_live, names, run_batch, run_check
from evaluators.procs import command_exit
from tests.evaluators.conftest import put

ROOT = Path(__file__).resolve().parents[2]
LIVE = {"command_exit", "process_running", "port_listening"}
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
REPORT = '<testsuite><testcase classname="tests.test_a" name="test_ok"/></testsuite>'


def build(root: Path) -> dict[str, str]:
    """An agent's filesystem: files at paths that do not exist on this host (``/app``, ``/srv``)."""
    put(root, "/app/note.txt", "hello from the sandbox\n")
    put(root, "/app/expected.txt", "hello from the sandbox")
    put(root, "/app/conf.json", json.dumps({"server": {"port": 8181}}))
    put(root, "/app/t.csv", "name,n\na,1\nb,2\n")
    put(root, "/app/report.xml", REPORT)
    put(root, "/app/tree/a.txt", "a")
    put(root, "/etc/passwd", "app:x:4242:4343::/app:/bin/sh\n")
    put(root, "/etc/group", "staff:x:4343:\n")
    os.chmod(root / "app/note.txt", 0o640)
    os.chown(root / "app/note.txt", 4242, 4343)
    with zipfile.ZipFile(root / "app/memo.docx", "w") as docx:  # the body is all docx_contains reads
        docx.writestr("word/document.xml", f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>Approved</w:t></w:r></w:p></w:body></w:document>')  # fmt: skip
    with zipfile.ZipFile(root / "app/deck.pptx", "w") as pptx:  # one slide, found by name: all pptx_contains needs
        pptx.writestr("ppt/slides/slide1.xml", f'<p:sld xmlns:p="p" xmlns:a="{A}"><a:p><a:r><a:t>Agenda</a:t></a:r></a:p></p:sld>')  # fmt: skip
    conn = sqlite3.connect(root / "app/shop.db")
    conn.executescript("CREATE TABLE t (id INTEGER); INSERT INTO t VALUES (1), (2);")
    conn.commit()
    conn.close()
    return {"note_sha": hashlib.sha256(b"hello from the sandbox\n").hexdigest()}


def passing_specs(facts: dict[str, str]) -> dict[str, dict]:
    """One spec per file-reading checker that passes only if paths resolve beneath the root."""
    return {
        "file_exists": {"path": "/app/note.txt", "nonempty": True},
        "file_absent": {"path": "/app/gone.txt"},
        "dir_exists": {"path": "/app/tree", "min_entries": 1},
        "file_sha256": {"path": "/app/note.txt", "sha256": facts["note_sha"]},
        "file_mode": {"path": "/app/note.txt", "mode": "0640"},
        "file_owner": {"path": "/app/note.txt", "user": "app", "group": "staff"},
        "tree_hash": {"path": "/app/tree"},
        "file_contains": {"path": "/app/note.txt", "text": "from the sandbox"},
        "file_matches": {"path": "/app/note.txt", "pattern": r"^hello \w+"},
        "text_equals": {"path": "/app/note.txt", "expected_file": "/app/expected.txt"},
        "text_match": {"path": "/app/note.txt", "expected": "hello from the sandbox", "threshold": 1.0},
        "json_path_equals": {"path": "/app/conf.json", "json_path": "server.port", "expected": 8181},
        "csv_query": {"path": "/app/t.csv", "op": "column_sum", "column": "n", "expected": 3},
        "sqlite_query": {"path": "/app/shop.db", "query": "SELECT COUNT(*) FROM t", "expected_scalar": 2},
        "junit_report": {"path": "/app/report.xml"},
        "pytest_report": {"path": "/app/report.xml", "tests": ["tests/test_a.py::test_ok"]},
        "docx_contains": {"path": "/app/memo.docx", "text": "Approved"},
        "pptx_contains": {"path": "/app/deck.pptx", "text": "Agenda", "slide": 1, "whole": True},
        "osworld": {
            "metrics": [
                {
                    "func": "compare_text_file",
                    "result": {"file": "/app/note.txt"},
                    "expected": {"value": "hello from the sandbox\n"},
                }
            ]
        },  # fmt: skip
    }


def test_every_checker_is_covered_or_live():
    assert set(passing_specs({"note_sha": ""})) | LIVE == set(names())
    assert {name for name in names() if is_live(name)} == LIVE
    with pytest.raises(ArgumentError):
        is_live("no_such_check")


@pytest.mark.parametrize("name", sorted(passing_specs({"note_sha": ""})))
def test_file_checker_reads_beneath_the_root(state_root, name):
    specs = passing_specs(build(state_root))
    res = run_check(name, specs[name])
    assert res["passed"], res
    assert str(state_root) not in res["detail"] and "/proc/self/fd" not in res["detail"]
    if name not in ("file_absent", "tree_hash", "osworld"):
        assert specs[name]["path"] in res["detail"], "messages name the in-sandbox path"


@pytest.mark.parametrize("name", sorted(passing_specs({"note_sha": ""})))
def test_the_same_checks_fail_on_an_empty_root(state_root, name):
    facts = build(state_root)
    specs = passing_specs(facts)
    empty = state_root.parent / "empty"
    empty.mkdir()
    os.environ["AGENTENVS_STATE_ROOT"] = str(empty)
    put(empty, "/app/gone.txt", "here")
    put(empty, "/app/expected.txt", "hello from the sandbox")
    res = run_check(name, specs[name])
    assert not res["passed"], res
    assert str(empty) not in res["detail"] and "/proc/self/fd" not in res["detail"]


def test_owner_names_come_from_the_roots_etc_not_the_hosts(state_root):
    build(state_root)
    put(state_root, "/app/rootfile", "x")
    os.chown(state_root / "app/rootfile", 0, 0)
    assert run_check("file_owner", {"path": "/app/rootfile", "user": 0, "group": "0"})["passed"]
    unknown = run_check("file_owner", {"path": "/app/rootfile", "user": "root"})
    assert not unknown["passed"], "'root' is not in the state root's /etc/passwd, whatever the host has"
    (state_root / "etc/passwd").unlink()
    (state_root / "etc/passwd").symlink_to("/etc/passwd")  # loops back onto itself beneath the root
    assert not run_check("file_owner", {"path": "/app/note.txt", "user": "app"})["passed"]
    assert run_check("file_owner", {"path": "/app/note.txt", "user": 4242})["passed"], "numeric ids still work"
    (state_root / "etc/group").unlink()
    assert not run_check("file_owner", {"path": "/app/note.txt", "group": "staff"})["passed"]
    assert run_check("file_owner", {"path": "/app/note.txt", "group": "4343"})["passed"]


def test_sqlite_sees_committed_wal_and_leaves_the_agents_files_alone(state_root):
    db = state_root / "app/wal.db"
    db.parent.mkdir(parents=True)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("CREATE TABLE t (v TEXT)")
    writer.execute("INSERT INTO t VALUES ('in the wal')")
    writer.commit()
    try:
        before = {p.name: p.read_bytes() for p in db.parent.iterdir()}
        assert (db.parent / "wal.db-wal").stat().st_size > 0, "the row is only in the WAL"
        res = run_check(
            "sqlite_query", {"path": "/app/wal.db", "query": "SELECT v FROM t", "expected_rows": [["in the wal"]]}
        )
        assert res["passed"], res
        assert {p.name: p.read_bytes() for p in db.parent.iterdir()} == before
    finally:
        writer.close()


def test_live_checks_refuse_on_a_state_root(state_root):
    for name, args in (
        ("command_exit", {"command": "true"}),
        ("process_running", {"pattern": "."}),
        ("port_listening", {"port": 22}),
    ):
        res = run_check(name, args)
        assert not res["passed"] and "live check" in res["detail"], res
    assert not command_exit("true")["passed"], "a direct call refuses too"


def test_unset_or_slash_means_paths_resolve_as_usual(monkeypatch, write):
    path = write("here.txt", "x")
    for value in (None, "", "/", "//"):
        if value is None:
            monkeypatch.delenv("AGENTENVS_STATE_ROOT", raising=False)
        else:
            monkeypatch.setenv("AGENTENVS_STATE_ROOT", value)
        assert run_check("command_exit", {"command": "true"})["passed"]
        assert run_check("file_exists", {"path": path})["passed"]


def test_relative_paths_are_bad_arguments_on_a_state_root(state_root):
    build(state_root)
    with pytest.raises(ArgumentError, match="absolute"):
        run_check("file_exists", {"path": "app/note.txt"})
    assert "bad check spec" in run_batch([{"check": "file_exists", "args": {"path": "app/note.txt"}}])[0]["detail"]


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evaluators", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        cwd="/",
        timeout=60,
    )


def test_an_unusable_root_is_a_setup_error_not_a_zero(tmp_path):
    spec = json.dumps([{"check": "file_exists", "args": {"path": "/etc/hostname"}}])
    out = tmp_path / "reward.json"
    for bad in (str(tmp_path / "missing"), "relative/root"):
        batch = cli("batch", spec, env={"AGENTENVS_STATE_ROOT": bad})
        assert batch.returncode == 3 and "AGENTENVS_STATE_ROOT" in batch.stderr and not batch.stdout
        reward = cli("reward", spec, "--out", str(out), env={"AGENTENVS_STATE_ROOT": bad})
        assert reward.returncode == 3 and not out.exists(), "no reward is written for a broken setup"


def test_list_marks_the_live_checkers():
    out = cli("list", env={})
    lines = {line.split("(")[0]: line for line in out.stdout.splitlines()}
    assert {name for name, line in lines.items() if "[live" in line} == LIVE


def test_the_root_is_looked_up_afresh_for_every_check(state_root):
    put(state_root, "/app/v.txt", "first")
    assert run_check("file_contains", {"path": "/app/v.txt", "text": "first"})["passed"]
    state_root.rename(state_root.with_name("old"))
    put(state_root, "/app/v.txt", "second")
    assert run_check("file_contains", {"path": "/app/v.txt", "text": "second"})["passed"]


def test_magic_links_are_refused_beneath_a_root():
    import errno

    from evaluators._beneath import open_beneath

    slash = os.open("/", os.O_PATH | os.O_DIRECTORY)
    try:
        for magic in ("/proc/self/root/etc/passwd", "/proc/self/cwd", "/proc/self/fd/0"):
            with pytest.raises(OSError) as info:
                os.close(open_beneath(slash, magic, os.O_PATH))
            assert info.value.errno in (errno.ELOOP, errno.EXDEV), magic
        os.close(open_beneath(slash, "/proc/self/status", os.O_RDONLY))
    finally:
        os.close(slash)


def test_without_proc_the_checker_fails_as_a_setup_error_not_as_missing_files(write):
    import shutil

    path = write("f.txt", "hi")
    spec = json.dumps([{"check": "file_contains", "args": {"path": path, "text": "hi"}}])
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        pytest.skip("needs unshare and root to hide /proc")
    script = f"mount -t tmpfs none /proc && exec {sys.executable} -I -S -B {ROOT}/evaluators/_entry.py batch '{spec}'"
    out = subprocess.run(
        [unshare, "--mount", "--propagation", "private", "sh", "-c", script], capture_output=True, text=True, timeout=60
    )
    if "mount" in out.stderr and out.returncode != 3:
        pytest.skip(f"cannot hide /proc here: {out.stderr.strip()}")
    assert out.returncode == 3 and "/proc" in out.stderr and not out.stdout
