"""The web family's host processes on the local backend, confined as a local sandbox's are.

The sites parse what the agent sends (forms, queries, uploads) and Chromium
renders what it makes the sites show, so a bug in either must not hand the
agent the host. Each runs in bubblewrap as the unprivileged sandbox user
(``agentenvs/sandbox/confine.py``): the host's system read-only, a private
``/tmp``, nothing of ours in its environment, and only the paths it needs:
a site sees Python, our package, its snapshot and its own directory;
Chromium sees its profile directory. Both keep the host's loopback (the
sites serve there; Chromium reaches them only through the env's proxy).

In the web container the daemon turns this off: the container is the sandbox.
"""

from __future__ import annotations

import atexit
import os
import shlex
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from agentenvs.sandbox.confine import confined_argv
from agentenvs.sandbox.local_bwrap import SEARCH_PATH
from agentenvs.sandbox.local_system import sandbox_ids

#: Whether this process confines its sites and browsers (the web container's daemon sets False).
ENABLED = True
#: The whole environment of a confined site or browser.
ENV = {"PATH": SEARCH_PATH, "HOME": "/tmp", "LANG": "C.UTF-8"}
#: The repository root: our package is bound read-only at ``REPO/agentenvs``.
REPO = Path(__file__).resolve().parents[3]

_lock = threading.Lock()
_wrapper: str | None = None


def site_argv(argv: list[str], snapshot: Path, own: Path) -> list[str]:
    """A site server's command confined; ``own`` (its episode directory) is made the sandbox user's."""
    os.chown(own, *sandbox_ids())
    python = sorted({sys.base_prefix, sys.prefix})
    return confined_argv(argv, read_only=[*python, str(REPO / "agentenvs"), str(snapshot)], writable=[str(own)])


def chromium(executable: str) -> str:
    """A program Playwright can launch in place of ``executable``: a script that gives the profile
    directory Playwright made (``--user-data-dir``, in ``/tmp``) to the sandbox user and runs Chromium
    confined with it. Made once per process, removed at exit."""
    global _wrapper
    with _lock:
        if _wrapper is None or not os.path.exists(_wrapper):
            uid, gid = sandbox_ids()
            argv = confined_argv([executable])
            at = argv.index("--remount-ro")  # the profile's bind goes with the others, before / is sealed
            command = " ".join(map(shlex.quote, argv[:at])) + ' --bind "$profile" "$profile" '
            command += " ".join(map(shlex.quote, argv[at:]))
            script = (
                "#!/bin/sh\n"
                'profile=""\n'
                'for arg in "$@"; do case "$arg" in --user-data-dir=*) profile="${arg#--user-data-dir=}";; esac; done\n'
                '[ -d "$profile" ] || { echo "no --user-data-dir given" >&2; exit 2; }\n'
                f'chown {uid}:{gid} "$profile" || exit 2\n'
                f'exec {command} "$@"\n'
            )
            folder = tempfile.mkdtemp(prefix="agentenvs-chromium-")
            path = os.path.join(folder, "chromium")
            with open(path, "w") as f:
                f.write(script)
            os.chmod(path, 0o700)
            atexit.register(shutil.rmtree, folder, True)
            _wrapper = path
        return _wrapper
