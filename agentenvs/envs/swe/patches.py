"""Unified diffs read as text: a first check that a patch stays inside the repository.

A submission is a ``git diff``. Before it goes near a repository it is
checked here: absolute paths, ``..`` components, paths into ``.git`` and
symlinks that point outside the tree are refused. This is a first line only:
which paths a patch really changes is asked of git after it is applied
(:mod:`.landing`), and git refuses such paths too.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

_DIFF_GIT = re.compile(r"^diff --git (\"?)a/(.+?)\1 (\"?)b/(.+?)\3$")
_SIDE = re.compile(r"^(?:---|\+\+\+) (?:\"?[ab]/)?(.+?)\"?(?:\t.*)?$")
_PLAIN_HEADER = re.compile(r"^--- ")


class PatchError(ValueError):
    """A patch is malformed or reaches outside the repository."""


class OutsideRepoError(PatchError):
    """A patch names a path outside the repository (absolute, ``..``, ``.git``, or an escaping symlink)."""


@dataclass(frozen=True)
class FilePatch:
    """One file's section of a unified diff."""

    old_path: str | None
    new_path: str | None
    text: str
    symlink_target: str | None = None

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    @property
    def paths(self) -> set[str]:
        return {p for p in (self.old_path, self.new_path) if p}


def split_patch(patch: str) -> list[FilePatch]:
    """Split a ``git diff`` (or a plain unified diff) into per-file sections."""
    if not patch.strip():
        return []
    lines = patch.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("diff --git ")]
    if not starts:
        starts = [
            i
            for i, line in enumerate(lines)
            if _PLAIN_HEADER.match(line) and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
        ]
    if not starts:
        raise PatchError("not a unified diff: no 'diff --git' or '---/+++' file headers found")
    sections = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        sections.append(_parse_section(lines[start:end]))
    return sections


_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote(name: str) -> str:
    """A file name as git spells it in a diff: C-quoted (``"a/caf\\303\\251 \\"x\\".py"``) or bare."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    out, body, i = bytearray(), name[1:-1], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "0123":
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt) & 0xFF))
            i += 2
            continue
        out += ch.encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _strip_prefix(path: str) -> str | None:
    path = unquote(path.strip())
    if path == "/dev/null":
        return None
    if path[:2] in ("a/", "b/"):
        path = path[2:]
    return path


def _parse_section(lines: list[str]) -> FilePatch:
    old = new = None
    header = _DIFF_GIT.match(lines[0].rstrip("\n"))
    if header:
        old, new = (
            _strip_prefix(header.group(1) + "a/" + header.group(2) + header.group(1)),
            _strip_prefix(header.group(3) + "b/" + header.group(4) + header.group(3)),
        )
    symlink = False
    for line in lines[1:]:
        if line.startswith("@@"):
            break
        if line.startswith("--- "):
            old = _strip_prefix(line[4:].split("\t")[0].rstrip("\n"))
        elif line.startswith("+++ "):
            new = _strip_prefix(line[4:].split("\t")[0].rstrip("\n"))
        elif line.startswith(("new file mode 120000", "new mode 120000")):
            symlink = True
        elif line.startswith("deleted file mode"):
            new = None
        elif line.startswith(("rename from ", "copy from ")):
            old = unquote(line.split(" ", 2)[2].rstrip("\n"))
        elif line.startswith(("rename to ", "copy to ")):
            new = unquote(line.split(" ", 2)[2].rstrip("\n"))
    if not lines[0].startswith("diff --git") and old is None and new is None:
        raise PatchError(f"cannot read the file names of a diff section: {lines[0][:80]!r}")
    target = None
    if symlink:
        added = [ln[1:].rstrip("\n") for ln in lines if ln.startswith("+") and not ln.startswith("+++")]
        target = added[0] if added else ""
    return FilePatch(old_path=old, new_path=new, text="".join(lines), symlink_target=target)


def check_inside_repo(sections: list[FilePatch]) -> None:
    """Raise ``PatchError`` if any path could land outside the repository's working tree."""
    for section in sections:
        for path in section.paths:
            _check_path(path)
        if section.symlink_target is not None:
            link_dir = posixpath.dirname(section.path)
            target = section.symlink_target
            resolved = posixpath.normpath(posixpath.join(link_dir, target))
            if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
                raise OutsideRepoError(f"{section.path}: a symlink to {target!r} points outside the repository")


def _check_path(path: str) -> None:
    if not path or "\x00" in path:
        raise OutsideRepoError("a patch names an empty file path")
    if path.startswith("/") or path.startswith("~"):
        raise OutsideRepoError(f"{path}: absolute paths are outside the repository; use paths relative to its root")
    parts = path.split("/")
    if ".." in parts:
        raise OutsideRepoError(f"{path}: '..' leads outside the repository")
    if parts[0] == ".git" or ".git" in parts:
        raise OutsideRepoError(f"{path}: patches may not touch git's own files")
