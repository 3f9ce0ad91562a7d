"""A desktop in a sandbox: the ``gui`` image's container, or a local sandbox over the same image,
with the control daemon started in it.

The daemon's code is bind-mounted read-only from ``guest/`` (never baked in,
so the image does not change when it does); its socket lives in a host
directory bind-mounted at ``/run/agentenvs-gui``. The sandbox keeps its
guarantees: network off, limits, labels for the sweep, and
``kill_all``/``state_checker`` for verification. On the local backend the
sandbox has the image's users (``SandboxSpec.users``: root, ``user`` and
``actor`` are three unprivileged host ids), so the desktop is the image's
with the same split between the agent's code and the desktop's files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox import create_sandbox
from agentenvs.sandbox.base import Sandbox, SandboxSpec
from agentenvs.sandbox.daemon_client import DaemonClient
from agentenvs.sandbox.local_system import sandbox_ids
from agentenvs.sandbox.local_userns import host_ids
from agentenvs.sandbox.procs import proc_start_time

GUEST_SOURCE = Path(__file__).resolve().parent / "guest"
#: The session bus's folder (``guest/session.py``): the image makes it the desktop user's.
UPSTREAM_BUS_DIR = "/run/user/1000"
GUEST_MOUNT = "/opt/agentenvs/gui"
SOCKET_MOUNT = "/run/agentenvs-gui"
IMAGE = "agentenvs/gui:latest"
USER, UID, HOME = "user", 1001, "/home/user"
ACTOR = "actor"
#: The daemon's socket folders on the host: ``agentenvs-gui-<owner pid>-<owner start time>-<random>``.
SOCKDIR_PREFIX = "agentenvs-gui-"
_SOCKDIR_NAME = re.compile(rf"^{SOCKDIR_PREFIX}(\d+)-(\d+)-")
_swept = threading.Event()


def sweep_socket_dirs(parent: Path | None = None) -> int:
    """Remove the socket folders of desktops whose owning process is gone (killed before ``close``).

    Returns how many. A folder whose name carries no owner is an older
    process's, and is removed too; an owner's pid reused by another process
    is told apart by its start time.
    """
    removed = 0
    for folder in Path(parent or tempfile.gettempdir()).glob(f"{SOCKDIR_PREFIX}*"):
        owner = _SOCKDIR_NAME.match(folder.name)
        if owner and proc_start_time(int(owner[1])) == owner[2]:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


def _socket_dir() -> str:
    """A new socket folder named after this process, after sweeping dead owners' folders once per process."""
    if not _swept.is_set():
        _swept.set()
        sweep_socket_dirs()
    return tempfile.mkdtemp(prefix=f"{SOCKDIR_PREFIX}{os.getpid()}-{proc_start_time(os.getpid())}-")


LABEL = "agentenvs.gui"


class Desktop:
    """One running desktop: ``sandbox`` (the container) and ``client`` (the daemon)."""

    def __init__(
        self,
        backend: str = "docker",
        *,
        width: int = 1920,
        height: int = 1080,
        image: str = IMAGE,
        memory_mb: int = 2048,
        ready_timeout: float = 60.0,
    ):
        if backend not in ("docker", "local"):
            raise SandboxError(f"the gui family runs on the docker or the local backend, not {backend!r}")
        self.width, self.height = width, height
        self.session_env: dict[str, str] = {}
        self._sockdir = _socket_dir()
        os.chown(self._sockdir, *(host_ids(UID, UID, sandbox_ids()) if backend == "local" else (UID, UID)))
        spec = SandboxSpec(
            image=image,
            workdir=HOME,
            cpus=1.0,
            memory_mb=memory_mb,
            pids=1024,
            mounts=((str(GUEST_SOURCE), GUEST_MOUNT, True), (self._sockdir, SOCKET_MOUNT, False)),
            labels={LABEL: "1"},
            users=True,
        )
        self.sandbox: Sandbox = create_sandbox(backend, spec, **({"image": image} if backend == "local" else {}))
        self.client = DaemonClient(os.path.join(self._sockdir, "daemon.sock"))
        try:
            if backend == "local":  # the image's home and bus folder are copied to the sandbox's own files, as root's
                self.sandbox.exec(["chown", "-R", f"{USER}:{USER}", HOME, UPSTREAM_BUS_DIR], timeout=60)
            self._start_daemon(ready_timeout)
        except BaseException:
            self.close()
            raise

    def _start_daemon(self, timeout: float) -> None:
        command = (
            f"python3 {GUEST_MOUNT}/daemon.py --socket {SOCKET_MOUNT}/daemon.sock"
            f" --width {self.width} --height {self.height}"
        )
        self.client.start_in(self.sandbox, command, timeout, user=USER, env={"HOME": HOME, "USER": USER})
        head, _ = self.client.call("health")  # recorded now, before the agent acts, for ``probe``
        self.session_env = {
            "DISPLAY": str(head["display"]),
            "DBUS_SESSION_BUS_ADDRESS": str(head["bus"]),
            "XDG_RUNTIME_DIR": f"/tmp/runtime-{UID}",
            "HOME": HOME,
            "USER": USER,
        }

    def probe(self, want: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        """The verifier's look at the live desktop (``guest/probe.py``): accessibility tree, windows, terminal, tabs.

        Every process of the agent's user is killed first, so no agent code runs
        while the desktop is read; the probe is a new process from the read-only
        mount under ``python3 -I`` (no PYTHONPATH, no user site, no script-dir
        imports), not the daemon the agent can reach. An unreadable answer is
        an empty one: the live getters then give None, which scores 0.
        """
        self.sandbox.exec(["pkill", "-KILL", "-u", ACTOR], timeout=15)
        argv = ["python3", "-I", f"{GUEST_MOUNT}/probe.py", json.dumps(want)]
        done = self.sandbox.exec(argv, timeout=timeout, user=USER, env=self.session_env)
        try:
            seen = json.loads(done.stdout)
        except ValueError:
            return {}
        return seen if isinstance(seen, dict) else {}

    def close(self) -> None:
        self.client.close()
        if getattr(self, "sandbox", None) is not None:
            self.sandbox.close()
        shutil.rmtree(self._sockdir, ignore_errors=True)
