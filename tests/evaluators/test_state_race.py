"""A racing process swaps a directory for symlinks out of the root while checks run thousands of times.

The swapper exchanges ``/app/d`` (a real directory) with symlinks to ``/``,
to an absolute host path outside the root, and to a ``../`` chain that
leads there when followed as usual, atomically (``renameat2(RENAME_EXCHANGE)``),
in a loop. Whatever the interleaving, no check may ever see a byte of the
outside tree.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import uuid

import pytest

from evaluators import _state, run_check
from tests.evaluators.conftest import put

SWAPPER = r"""
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
app, links = sys.argv[1], sys.argv[2:]
swaps = 0
def stop(*_):
    print(swaps, flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
d = os.path.join(app, "d").encode()
print("ready", flush=True)
while True:
    for link in links:
        other = os.path.join(app, link).encode()
        for _ in range(2):
            if libc.renameat2(-100, d, -100, other, 2) != 0:
                raise OSError(ctypes.get_errno(), "renameat2")
            swaps += 1
"""


@pytest.mark.slow
def test_swapping_a_directory_for_links_out_never_reads_outside(state_root, tmp_path):
    marker = f"OUTSIDE-{uuid.uuid4().hex}"
    outside = tmp_path / "outside"
    (outside / "etc").mkdir(parents=True)
    for name in ("secret.txt", "etc/passwd", "only-outside.txt"):
        (outside / name).write_text(marker)
    inside = "inside\n"
    put(state_root, "/etc/passwd", "stateuser:x:1:1::/:/bin/sh\n")
    put(state_root, "/app/d/secret.txt", inside)
    put(state_root, "/app/d/etc/passwd", inside)
    app = state_root / "app"
    (app / "to_slash").symlink_to("/")
    (app / "to_outside").symlink_to(outside)
    (app / "to_dotdot").symlink_to(os.path.relpath(outside, app))
    assert (app / "to_dotdot" / "secret.txt").read_text() == marker, "followed as usual, the chain does leave"
    outside_sha = hashlib.sha256(marker.encode()).hexdigest()
    checks = [
        ("file_contains", {"path": "/app/d/secret.txt", "text": "OUTSIDE"}),
        ("file_contains", {"path": "/app/d/etc/passwd", "text": "OUTSIDE"}),
        ("file_sha256", {"path": "/app/d/secret.txt", "sha256": outside_sha}),
        ("text_equals", {"path": "/app/d/etc/passwd", "expected": marker}),
        ("file_exists", {"path": "/app/d/only-outside.txt"}),
        ("dir_exists", {"path": "/app/d", "min_entries": 3}),
        ("file_matches", {"path": "/app/d/secret.txt", "pattern": "^OUTSIDE"}),
    ]
    seen_inside = 0
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(app), "to_slash", "to_outside", "to_dotdot"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        for _ in range(2000):
            for name, args in checks:
                res = run_check(name, args)
                assert not res["passed"], (name, res)
                assert marker not in res["detail"] and str(tmp_path) not in res["detail"], res
            read = run_check("file_contains", {"path": "/app/d/secret.txt", "text": "inside"})
            seen_inside += read["passed"]
            tree = run_check("tree_hash", {"path": "/app"})
            assert marker not in tree["detail"]
            for rel, *_ in _walk_quietly("/app"):
                assert "only-outside" not in rel, rel
    finally:
        proc.send_signal(signal.SIGTERM)
        swaps = int(proc.communicate(timeout=30)[0].strip() or 0)
    assert swaps > 0 and proc.returncode == 0, "the swapper ran"
    assert seen_inside > 0, "the real directory was read while it was in place"


def _walk_quietly(path: str):
    """The entries a walk reaches before the tree changes under it (an error then is expected)."""
    entries = []
    try:
        for item in _state.walk(path, lambda rel: True, 10_000):
            entries.append(item)
    except OSError:
        pass
    return entries
