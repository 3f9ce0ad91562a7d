"""Hostile layouts an agent can leave behind: links out of the root, `..` chains, fifos, devices, huge files.

The fifo and device cases run through the command line in a subprocess with
a deadline, so a checker that blocked would fail the test instead of hanging it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators import _state, run_check
from evaluators.text import MAX_TEXT_BYTES
from tests.evaluators.conftest import put

ROOT = Path(__file__).resolve().parents[2]
STATE_PASSWD = "stateuser:x:4242:4242::/home/stateuser:/bin/sh\n"
#: Every file-reading checker pointed at one path, with arguments that would pass on ordinary content.
READERS = [
    ("file_exists", {}),
    ("file_sha256", {"sha256": "0" * 64}),
    ("file_contains", {"text": "x"}),
    ("file_matches", {"pattern": "."}),
    ("text_equals", {"expected": "x"}),
    ("text_match", {"expected": "x", "threshold": 0.0}),
    ("json_path_equals", {"json_path": "$", "expected": 1}),
    ("csv_query", {"op": "row_count", "expected": 0}),
    ("sqlite_query", {"query": "SELECT 1", "expected_scalar": 1}),
    ("junit_report", {}),
    ("pytest_report", {}),
    ("dir_exists", {}),
    ("tree_hash", {}),
]


def specs_for(path: str) -> list[dict]:
    return [{"check": name, "args": {"path": path, **args}} for name, args in READERS]


def batch(specs: list[dict], env: dict[str, str], stdin: int | None = None) -> list[dict]:
    """Run specs in a fresh interpreter; a hang is a ``TimeoutExpired``, i.e. a failed test."""
    out = subprocess.run(
        [sys.executable, "-m", "evaluators", "batch", json.dumps(specs)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        stdin=stdin,
        cwd="/",
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def hostile(state_root: Path) -> Path:
    put(state_root, "/etc/passwd", STATE_PASSWD)
    app = state_root / "app"
    app.mkdir()
    (app / "abs").symlink_to("/etc/passwd")
    (app / "up").symlink_to("../../../../../../../../etc/passwd")
    (app / "dangling").symlink_to("/no/such/file")
    (app / "loop").symlink_to("loop")
    (app / "etcdir").symlink_to("/")
    return state_root


@pytest.mark.parametrize(
    "path", ["/app/abs", "/app/up", "/app/etcdir/etc/passwd", "/../../../etc/passwd", "/app/../../../etc/./passwd"]
)
def test_links_and_dotdot_chains_resolve_to_the_roots_file(hostile, path):
    host_passwd = Path("/etc/passwd").read_text()
    assert host_passwd != STATE_PASSWD
    assert run_check("file_contains", {"path": path, "text": "stateuser:x:4242"})["passed"]
    assert run_check("text_equals", {"path": path, "expected": STATE_PASSWD})["passed"]
    digest = hashlib.sha256(STATE_PASSWD.encode()).hexdigest()
    assert run_check("file_sha256", {"path": path, "sha256": digest})["passed"]
    assert not run_check("file_contains", {"path": path, "text": host_passwd.splitlines()[0]})["passed"]


def test_a_link_to_an_outside_absolute_path_stays_inside(hostile, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("OUTSIDE")
    (hostile / "app/out").symlink_to(outside / "secret")
    rel = os.path.relpath(outside / "secret", hostile / "app")
    (hostile / "app/outrel").symlink_to(rel)
    assert (hostile / "app/out").read_text() == "OUTSIDE", "followed as usual, the link does leave the root"
    assert (hostile / "app/outrel").read_text() == "OUTSIDE"
    for path in ("/app/out", "/app/outrel"):
        for res in batch(specs_for(path), {"AGENTENVS_STATE_ROOT": str(hostile)}):
            assert not res["passed"], res
            assert "OUTSIDE" not in res["detail"] and str(tmp_path) not in res["detail"]
        assert not run_check("file_contains", {"path": path, "text": "OUTSIDE"})["passed"]


def test_dangling_and_looping_links(hostile):
    assert not run_check("file_absent", {"path": "/app/dangling"})["passed"], "a dangling link is still there"
    assert "missing" in run_check("file_exists", {"path": "/app/dangling"})["detail"]
    assert not run_check("file_contains", {"path": "/app/dangling", "text": "x"})["passed"]
    loop = run_check("file_exists", {"path": "/app/loop"})
    assert not loop["passed"] and "symbolic links" in loop["detail"]
    broken_parent = run_check("file_absent", {"path": "/app/loop/child"})
    assert not broken_parent["passed"], "a file behind a link loop is not known to be absent"
    assert run_check("file_absent", {"path": "/app/abs/child"})["passed"], "a file under a regular file is absent"
    assert run_check("file_mode", {"path": "/app/dangling", "mode": "0777"})["passed"], "the link itself"
    assert run_check("tree_hash", {"path": "/app"})["passed"], "links are hashed as links, never followed"


def _fifo_and_devices(base: Path) -> None:
    os.mkfifo(base / "fifo")
    (base / "dir").mkdir()
    os.mkfifo(base / "dir" / "fifo")
    try:
        os.mknod(base / "zero", 0o666 | 0o020000, os.makedev(1, 5))
    except PermissionError:
        (base / "zero").symlink_to("/dev/zero")


@pytest.mark.parametrize("rooted", [True, False], ids=["state-root", "no-root"])
def test_no_checker_blocks_on_a_fifo_or_reads_a_device(tmp_path, rooted):
    base = tmp_path / "state" / "app"
    base.mkdir(parents=True)
    _fifo_and_devices(base)
    env = {"AGENTENVS_STATE_ROOT": str(tmp_path / "state")} if rooted else {"AGENTENVS_STATE_ROOT": ""}
    prefix = "/app" if rooted else str(base)
    for name in ("fifo", "zero"):
        for spec, res in zip(READERS, batch(specs_for(f"{prefix}/{name}"), env)):
            assert not res["passed"], (spec, res)
            assert "fifo" in res["detail"] or "device" in res["detail"] or "not a directory" in res["detail"], res
    tree = batch([{"check": "tree_hash", "args": {"path": f"{prefix}/dir"}}], env)[0]
    assert tree["passed"], "a fifo inside a tree is hashed by type, not read"


def test_no_checker_blocks_on_stdin_or_dev_zero_without_a_root():
    read_end, write_end = os.pipe()
    try:
        for path in ("/dev/stdin", "/dev/zero", "/dev/null"):
            for res in batch(specs_for(path), {"AGENTENVS_STATE_ROOT": ""}, stdin=read_end):
                assert not res["passed"], (path, res)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_huge_files_are_refused_before_reading(state_root):
    huge = put(state_root, "/app/huge.txt", "")
    os.truncate(huge, MAX_TEXT_BYTES + 1)
    for name, args in READERS:
        if name in ("file_exists", "file_sha256", "dir_exists", "tree_hash", "sqlite_query"):
            continue
        res = run_check(name, {"path": "/app/huge.txt", **args})
        assert not res["passed"] and "larger than" in res["detail"], (name, res)


def test_hashing_is_bounded(state_root, monkeypatch):
    from evaluators import files

    monkeypatch.setattr(files, "MAX_HASH_BYTES", 1 << 20)
    big = put(state_root, "/app/t/big", "")
    os.truncate(big, (1 << 20) + 1)
    sha = run_check("file_sha256", {"path": "/app/t/big", "sha256": "0" * 64})
    assert not sha["passed"] and "bytes to hash" in sha["detail"]
    tree = run_check("tree_hash", {"path": "/app/t"})
    assert not tree["passed"] and "bytes to hash" in tree["detail"]
    os.truncate(big, 1 << 19)
    put(state_root, "/app/t/big2", b"\0" * ((1 << 19) + 1))
    assert not run_check("tree_hash", {"path": "/app/t"})["passed"], "the budget covers the whole tree"


def test_sqlite_copy_is_bounded(state_root, monkeypatch):
    from evaluators import data

    monkeypatch.setattr(data, "MAX_SQLITE_BYTES", 4096)
    db = put(state_root, "/app/big.db", "")
    os.truncate(db, 8192)
    res = run_check("sqlite_query", {"path": "/app/big.db", "query": "SELECT 1", "expected_scalar": 1})
    assert not res["passed"] and "larger than" in res["detail"]


def test_a_read_stops_at_the_limit_even_if_the_file_grows():
    with pytest.raises(_state.TooLarge):
        _state.read_limited(io.BytesIO(b"x" * 11), 10)
    assert _state.read_limited(io.BytesIO(b"x" * 10), 10) == b"x" * 10


def test_nul_bytes_and_deep_trees(state_root):
    assert not run_check("file_exists", {"path": "/app/a\x00b"})["passed"]
    fds = [os.open(state_root, os.O_RDONLY | os.O_DIRECTORY)]
    names = ["deep"] + ["d"] * 1100  # deeper than a path may be long
    try:
        for name in names:
            os.mkdir(name, dir_fd=fds[-1])
            fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        res = run_check("tree_hash", {"path": "/deep"})
        assert not res["passed"] and "cannot hash" in res["detail"]
    finally:  # pytest's own clean-up recurses and cannot remove a tree this deep
        for name, parent in zip(reversed(names[: len(fds) - 1]), reversed(fds[:-1])):
            os.rmdir(name, dir_fd=parent)
        for fd in fds:
            os.close(fd)
