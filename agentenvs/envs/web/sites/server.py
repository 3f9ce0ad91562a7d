"""A site's process: ``python -m agentenvs.envs.web.sites.server SITE SNAPSHOT DB``.

The control token arrives on stdin (never in argv, which other processes can
read); the two ports go to stdout as one JSON line once both listen. The
server then waits for stdin to close: the env keeps the pipe open, so when
the env's process dies, however it dies, the site goes with it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from agentenvs.envs.web.sites import site_module
from agentenvs.envs.web.sites.framework import serve


def main() -> None:
    name, snapshot, db_path = sys.argv[1:4]
    token = sys.stdin.readline().strip()
    app_server, control_server = serve(site_module(name).app, Path(snapshot), Path(db_path), token)
    print(json.dumps({"app_port": app_server.server_port, "control_port": control_server.server_port}), flush=True)
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
