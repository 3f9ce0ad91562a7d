"""The desktops' socket folders on the host outlive a killed owner only until the next desktop starts."""

from __future__ import annotations

import os
import subprocess

from agentenvs.envs.gui.desktop import SOCKDIR_PREFIX, sweep_socket_dirs
from agentenvs.sandbox.procs import proc_start_time


def test_the_sweep_removes_dead_owners_folders_and_keeps_live_ones(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    live = tmp_path / f"{SOCKDIR_PREFIX}{os.getpid()}-{proc_start_time(os.getpid())}-abc"
    dead = tmp_path / f"{SOCKDIR_PREFIX}{gone.pid}-12345-def"
    reused = tmp_path / f"{SOCKDIR_PREFIX}{os.getpid()}-1-ghi"  # this pid, but another process's start time
    older = tmp_path / f"{SOCKDIR_PREFIX}k2j3h4"  # an older version's name: no owner
    other = tmp_path / "agentenvs-other-1-2-x"
    for folder in (live, dead, reused, older, other):
        folder.mkdir()
    (dead / "daemon.sock").write_text("")
    assert sweep_socket_dirs(tmp_path) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])
