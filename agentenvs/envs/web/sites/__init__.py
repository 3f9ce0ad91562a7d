"""Our own web apps: each a module with an ``app``, a ``SCHEMA`` and a seeded ``generate``."""

from __future__ import annotations

import importlib
import os
import sqlite3
import stat
import tempfile
from pathlib import Path
from types import ModuleType

SITES = ("shop", "forum", "mail", "tracker")
#: Bump when a generator changes so cached snapshots are rebuilt.
DATA_VERSION = 2
DATA_SEED = 7


def session_cookie(site: str) -> str:
    """The site's session cookie name (cookies ignore ports, so each site needs its own)."""
    return f"{site}_sid"


def site_module(name: str) -> ModuleType:
    if name not in SITES:
        raise KeyError(f"no site {name!r}; sites: {', '.join(SITES)}")
    return importlib.import_module(f"agentenvs.envs.web.sites.{name}")


def cache_dir() -> Path:
    root = os.environ.get("AGENTENVS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "agentenvs")
    path = Path(root) / "web"
    path.mkdir(parents=True, exist_ok=True)
    return path


def snapshot(name: str) -> Path:
    """The site's seeded snapshot database, generated once and cached (atomically, so racing workers agree)."""
    path = cache_dir() / f"{name}-v{DATA_VERSION}-s{DATA_SEED}.sqlite"
    if path.is_file():
        if not path.stat().st_mode & stat.S_IROTH:  # made before sites ran as the sandbox user
            path.chmod(0o644)
        return path
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    db = sqlite3.connect(tmp)
    try:
        site_module(name).generate(db, DATA_SEED)
    finally:
        db.close()
    os.chmod(tmp, 0o644)  # read by the site, which runs as the sandbox user (``process.py``)
    os.replace(tmp, path)
    return path
