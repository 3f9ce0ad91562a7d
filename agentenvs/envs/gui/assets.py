"""Where an OSWorld download URL's bytes come from: a local assets tree, never the network.

Upstream tasks reuse file names (``setup.sh``, ``eval.sh``) for different
files, so a URL is matched by its whole address first: an entry in the
tree's ``urls.json`` (URL to relative path), or the tree mirroring
``host/path``. Only then by its percent-decoded file name (``%23`` is ``#``),
and only if exactly one file in the tree has it; more than one is an error
that names them.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from urllib.parse import unquote, urlparse

from agentenvs.core.errors import TaskFormatError

URL_MAP = "urls.json"


class AmbiguousAsset(TaskFormatError):
    """Several files in the assets tree could be this URL's."""


class AssetIndex:
    """A directory of assets, indexed by URL path and by file name."""

    def __init__(self, root: Path | None):
        self.root = root.resolve() if root is not None and root.is_dir() else None
        self._map: dict[str, str] = {}
        self._names: dict[str, list[Path]] | None = None
        if self.root is not None and (self.root / URL_MAP).is_file():
            self._map = json.loads((self.root / URL_MAP).read_text(encoding="utf-8"))

    def _inside(self, relative: str) -> Path | None:
        assert self.root is not None
        path = (self.root / relative.lstrip("/")).resolve()
        return path if path.is_file() and path.is_relative_to(self.root) else None

    def _by_name(self) -> dict[str, list[Path]]:
        if self._names is None:
            self._names = {}
            assert self.root is not None
            for path in sorted(self.root.rglob("*")):
                if path.is_file() and path.name != URL_MAP:
                    self._names.setdefault(path.name, []).append(path)
        return self._names

    def resolve(self, url: str) -> Path | None:
        """The file for ``url``, or None; ``AmbiguousAsset`` when only the name matches, more than once."""
        if self.root is None:
            return None
        if url in self._map:
            return self._inside(self._map[url])
        parsed = urlparse(url)
        mirrored = self._inside(unquote(parsed.netloc) + "/" + unquote(parsed.path))
        if mirrored is not None:
            return mirrored
        name = unquote(posixpath.basename(parsed.path))
        found = self._by_name().get(name, [])
        if len(found) > 1:
            listed = ", ".join(str(p.relative_to(self.root)) for p in found)
            raise AmbiguousAsset(url, f"the file name {name!r} matches {listed}: mirror the URL's path or map it")
        return found[0] if found else None

    @staticmethod
    def mirror_path(url: str) -> str:
        """Where an importer stores ``url``'s file so that its whole address finds it."""
        parsed = urlparse(url)
        return posixpath.normpath(unquote(parsed.netloc) + "/" + unquote(parsed.path).lstrip("/"))
