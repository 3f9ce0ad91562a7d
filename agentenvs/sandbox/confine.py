"""A host program confined as a local sandbox confines its processes: for servers the agent's input reaches.

Some families run helper servers on the host that handle what the agent
sends (the web family's sites parse its forms and uploads). A bug in one must
not hand the agent the host: the program sees the host's system read-only,
our minimal /etc, only the paths it is given (read-only, or writable), a
private /tmp, and its own pid, IPC and UTS namespaces; it runs as the
unprivileged sandbox user with no capabilities and ``no_new_privs``, and
dies with the process that started it. The network is the host's (it serves
on loopback), so what reaches it is still up to the caller.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import PurePosixPath

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.holder import become
from agentenvs.sandbox.local_bwrap import host_system
from agentenvs.sandbox.local_system import sandbox_etc, sandbox_ids


def confined_argv(command: Sequence[str], *, read_only: Sequence[str] = (), writable: Sequence[str] = ()) -> list[str]:
    """``command`` run inside bubblewrap, each given path bound at its own place; ``writable`` paths
    must already be the sandbox user's (:func:`~agentenvs.sandbox.local_system.sandbox_ids`)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError("confining a helper server needs bubblewrap: apt-get install bubblewrap")
    if os.geteuid() != 0:
        raise SandboxError(
            "confining a helper server needs root, as the local sandbox does (it runs it as another"
            " user): run as root, or use the docker backend"
        )
    argv = [bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
    argv += host_system(sandbox_etc())
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    # The folders above each path, which bubblewrap would make 0700 (and so closed to the program).
    above = {str(parent) for path in (*read_only, *writable) for parent in PurePosixPath(path).parents}
    for folder in sorted(above - {"/", "/tmp"}, key=len):
        argv += ["--perms", "0755", "--dir", folder]
    for path in read_only:
        argv += ["--ro-bind", path, path]
    for path in writable:
        argv += ["--bind", path, path]
    argv += ["--remount-ro", "/", "--chdir", "/"]
    # bubblewrap runs as root (to bind paths under /root, say); the program never does.
    drop = [*become(sandbox_ids()), "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return [*argv, "--", *drop, *command]
