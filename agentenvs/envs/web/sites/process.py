"""The env's handle on one site process: start it, talk to its control plane, notice when it dies."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from agentenvs.core.errors import InfraError
from agentenvs.envs.web import confined
from agentenvs.envs.web.proxy import public_origin
from agentenvs.envs.web.sites import snapshot


class SiteProcess:
    """One site server with its own episode database (so episodes never share state); confined on the
    host as a local sandbox's processes are (``confined.py``)."""

    def __init__(self, name: str, start_timeout: float = 30.0):
        self.name = name
        self._dir = tempfile.TemporaryDirectory(prefix=f"agentenvs-web-{name}-")
        self.db_path = Path(self._dir.name) / "episode.sqlite"
        self._token = secrets.token_hex(24)
        source = snapshot(name)
        argv = [sys.executable, "-m", "agentenvs.envs.web.sites.server", name, str(source), str(self.db_path)]
        if confined.ENABLED:
            argv = confined.site_argv(argv, source, Path(self._dir.name))
        env = {**confined.ENV, "PYTHONPATH": str(confined.REPO)}  # nothing of ours (API keys, tokens)
        self._proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
            start_new_session=True,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(self._token + "\n")
        self._proc.stdin.flush()  # kept open: the site exits when this process (and so the pipe) goes
        line = _read_line(self._proc, start_timeout)
        ports = json.loads(line)
        self.app_port: int = ports["app_port"]
        self.control_port: int = ports["control_port"]

    @property
    def origin(self) -> str:
        """Where the browser finds the site: the same in every session (the env's proxy maps it here)."""
        return public_origin(self.name)

    @property
    def address(self) -> str:
        """Where the app really listens: this process's loopback port (never shown to the agent)."""
        return f"http://127.0.0.1:{self.app_port}"

    @property
    def pid(self) -> int:
        return self._proc.pid

    def alive(self) -> bool:
        return self._proc.poll() is None

    def control(self, path: str, body: dict[str, Any] | None = None, timeout: float = 30.0) -> Any:
        """Call the control plane; a dead or failing site is infra, not the agent's doing."""
        if not self.alive():
            raise InfraError(f"the {self.name} site process exited ({self._proc.returncode})")
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.control_port}{path}",
            data=json.dumps(body or {}).encode(),
            headers={"X-Control-Token": self._token, "Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise InfraError(f"{self.name} control {path}: {exc.read()[:300].decode('utf-8', 'replace')}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise InfraError(f"{self.name} control {path}: {exc}") from None

    def fork_to(self, dest: Path) -> None:
        """A consistent backup of the episode's database at ``dest``: made in the site's own
        directory (the only place a confined site writes), then copied out without following
        a link or opening anything but a plain file (the site owns that directory)."""
        made = Path(self._dir.name) / f"fork-{secrets.token_hex(8)}.sqlite"
        try:
            self.control("/fork", {"dest": str(made)})
            fd = os.open(made, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as src:
                if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):
                    raise InfraError(f"the {self.name} site's fork is not a file")
                with open(dest, "xb") as out:
                    shutil.copyfileobj(src, out)
        except OSError as exc:
            raise InfraError(f"the {self.name} site's fork could not be read: {exc}") from None
        finally:
            made.unlink(missing_ok=True)

    def adopt(self, source: Path) -> None:
        """Make a forked database the episode's: copied into the site's own directory under a new
        name (created, never followed), adopted, then removed."""
        copy = Path(self._dir.name) / f"adopt-{secrets.token_hex(8)}.sqlite"
        try:
            fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
                shutil.copyfileobj(src, out)
            self.control("/adopt", {"source": str(copy)})
        finally:
            copy.unlink(missing_ok=True)

    def query(self, sql: str, params: list[Any] | None = None) -> list[list[Any]]:
        return self.control("/query", {"sql": sql, "params": params or []})["rows"]

    def digest_rows(self, digest: Any) -> None:
        """Feed ``digest`` (a hashlib hash) the rows of every table but sessions, for the env's state hash."""
        tables = [r[0] for r in self.query("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        for table in tables:
            if table != "sessions":
                rows = self.query(f'SELECT * FROM "{table}" ORDER BY rowid')
                digest.update(json.dumps([table, rows]).encode())

    def close(self) -> None:
        if self.alive():
            self._proc.kill()
        self._proc.wait(timeout=10)
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._dir.cleanup()


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """The server's first stdout line, or an ``InfraError`` if it dies or stays silent."""
    import selectors

    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            proc.kill()
            raise InfraError("a site process did not start in time")
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=10)
        raise InfraError(f"a site process exited at start ({proc.returncode})")
    return line
