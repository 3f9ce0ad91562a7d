"""The file editor tool, run from the host on the sandbox's files.

Files are read with ``Sandbox.get`` and written by putting the new bytes to
a staging file and ``cat``-ing it over the target, which keeps the target's
mode and owner (so an edit shows up in ``git diff`` as an edit, not a mode
change). Each path keeps its own undo history for the episode. A file the
agent made unreadable or unwritable (a FIFO, a symlink loop, a full disk) is
the agent's error, reported as such, never an exception of the env.
"""

from __future__ import annotations

import posixpath
import secrets
import shlex
from typing import Any

from agentenvs.core.errors import ActionError
from agentenvs.envs.swe.repo import WORK
from agentenvs.envs.swe.tools import EDITOR_COMMANDS
from agentenvs.sandbox.base import Sandbox

SNIPPET_CONTEXT = 4
MAX_UNDO = 20


def numbered(lines: list[str], first: int) -> str:
    """``cat -n`` style: right-aligned line numbers, a tab, the line."""
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, start=first))


class Editor:
    """``view``/``create``/``str_replace``/``insert``/``undo_edit`` on files in one sandbox."""

    def __init__(self, sandbox: Sandbox, root: str, max_chars: int = 65536):
        self.sandbox = sandbox
        self.root = root
        self.max_chars = max_chars
        self._history: dict[str, list[bytes | None]] = {}

    def resolve(self, path: str) -> str:
        if not path.strip():
            raise ActionError("str_replace_editor needs a non-empty 'path'")
        return posixpath.normpath(posixpath.join(self.root, path))

    def run(self, arguments: dict[str, Any]) -> str:
        """Carry out one editor call; ``ActionError`` (costing the agent a step) on misuse."""
        command = arguments.get("command")
        if command not in EDITOR_COMMANDS:
            raise ActionError(
                f"str_replace_editor: 'command' must be one of {', '.join(EDITOR_COMMANDS)}, got {command!r}"
            )
        path = arguments.get("path")
        if not isinstance(path, str):
            raise ActionError("str_replace_editor needs a string 'path'")
        target = self.resolve(path)
        return getattr(self, f"_{command}")(target, arguments)

    # -- commands ---------------------------------------------------------------

    def _view(self, path: str, args: dict[str, Any]) -> str:
        if self._is_dir(path):
            if args.get("view_range") is not None:
                raise ActionError("view_range only applies to files, and this path is a directory")
            listing = self.sandbox.exec(
                f"find {shlex.quote(path)} -maxdepth 2 -not -path '*/.git' -not -path '*/.git/*' "
                "-not -name '*.pyc' -not -path '*/__pycache__*' | sort | head -n 1000",
                timeout=30,
                cwd="/",
            )
            return f"Files and directories up to 2 levels deep in {path}:\n{listing.stdout}"
        text = self._read_text(path)
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        first, last = 1, len(lines)
        view_range = args.get("view_range")
        if view_range is not None:
            if (
                not isinstance(view_range, list)
                or len(view_range) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in view_range)
            ):
                raise ActionError("view_range must be two integers [start, end] (end -1 for the end of the file)")
            start, end = view_range
            end = len(lines) if end == -1 else end
            if not 1 <= start <= max(len(lines), 1) or end < start or end > len(lines):
                raise ActionError(f"view_range {view_range} is outside the file's {len(lines)} lines")
            first, last = start, end
        body = numbered(lines[first - 1 : last], first)
        if len(body) > self.max_chars:
            body = body[: self.max_chars] + "\n[... file truncated: use view_range to see the rest ...]"
        return f"Here is {path} (lines {first}-{last} of {len(lines)}):\n{body}"

    def _create(self, path: str, args: dict[str, Any]) -> str:
        text = self._string(args, "file_text")
        if self._is_dir(path):
            raise ActionError(f"{path} is a directory")
        previous = self._read_bytes_or_none(path)
        self._write(path, text.encode("utf-8"), previous)
        verb = "Overwrote" if previous is not None else "Created"
        return f"{verb} {path} ({len(text.splitlines())} lines)."

    def _str_replace(self, path: str, args: dict[str, Any]) -> str:
        old = self._string(args, "old_str")
        new = args.get("new_str", "")
        if not isinstance(new, str):
            raise ActionError("str_replace: 'new_str' must be a string")
        if not old:
            raise ActionError("str_replace: 'old_str' must not be empty")
        text = self._read_text(path)
        count = text.count(old)
        if count == 0:
            raise ActionError(f"str_replace: old_str does not occur in {path}; view the file and copy it exactly")
        if count > 1:
            lines = [text[:m].count("\n") + 1 for m in _find_all(text, old)]
            raise ActionError(
                f"str_replace: old_str occurs {count} times in {path} (lines {lines}); include more context"
            )
        at = text.index(old)
        updated = text.replace(old, new, 1)
        self._write(path, updated.encode("utf-8"), text.encode("utf-8"))
        line = text[:at].count("\n") + 1
        return f"Edited {path}.\n{self._snippet(updated, line, new.count(chr(10)) + 1)}"

    def _insert(self, path: str, args: dict[str, Any]) -> str:
        new = self._string(args, "new_str")
        line = args.get("insert_line")
        if not isinstance(line, int) or isinstance(line, bool):
            raise ActionError("insert needs an integer 'insert_line' (0 puts the text at the top)")
        text = self._read_text(path)
        lines = text.split("\n")
        trailing = text.endswith("\n")
        if trailing:
            lines.pop()
        if not 0 <= line <= len(lines):
            raise ActionError(f"insert_line {line} is outside 0..{len(lines)}")
        added = new.split("\n")
        if new.endswith("\n"):
            added.pop()
        updated_lines = lines[:line] + added + lines[line:]
        updated = "\n".join(updated_lines) + ("\n" if trailing or not lines else "")
        self._write(path, updated.encode("utf-8"), text.encode("utf-8"))
        return f"Inserted {len(added)} line(s) after line {line} of {path}.\n{self._snippet(updated, line + 1, len(added))}"

    def _undo_edit(self, path: str, args: dict[str, Any]) -> str:
        history = self._history.get(path)
        if not history:
            raise ActionError(f"undo_edit: no edit of {path} to undo")
        previous = history.pop()
        if previous is None:
            self.sandbox.exec(["rm", "-f", "--", path], timeout=30, cwd="/")
            return f"Undid the creation of {path}; it no longer exists."
        self._put(path, previous)
        return f"Undid the last edit of {path}."

    # -- helpers ------------------------------------------------------------------

    @staticmethod
    def _string(args: dict[str, Any], key: str) -> str:
        value = args.get(key)
        if not isinstance(value, str):
            raise ActionError(f"str_replace_editor {args.get('command')}: needs a string {key!r}")
        return value

    def _is_dir(self, path: str) -> bool:
        return self.sandbox.exec(["test", "-d", path], timeout=30, cwd="/").exit_code == 0

    def _read_bytes_or_none(self, path: str) -> bytes | None:
        try:
            return self.sandbox.get(path)
        except (FileNotFoundError, IsADirectoryError):
            return None
        except OSError as exc:
            raise ActionError(f"cannot read {path}: {exc.strerror or exc}") from None

    def _read_text(self, path: str) -> str:
        try:
            data = self.sandbox.get(path)
        except FileNotFoundError:
            raise ActionError(f"{path} does not exist (create it with command 'create')") from None
        except IsADirectoryError:
            raise ActionError(f"{path} is a directory; use view on it, or name a file") from None
        except OSError as exc:
            raise ActionError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ActionError(f"{path} is not UTF-8 text; use bash for binary files") from None

    def _write(self, path: str, data: bytes, previous: bytes | None) -> None:
        self._put(path, data)
        history = self._history.setdefault(path, [])
        history.append(previous)
        del history[:-MAX_UNDO]

    def _put(self, path: str, data: bytes) -> None:
        staged = f"{WORK}/edit-{secrets.token_hex(6)}"
        self.sandbox.exec(["mkdir", "-p", WORK], timeout=30, cwd="/")
        try:
            self.sandbox.put(data, staged)
        except OSError as exc:
            raise ActionError(f"could not write {path}: {exc.strerror or exc}") from None
        quoted, src = shlex.quote(path), shlex.quote(staged)
        result = self.sandbox.exec(
            f'mkdir -p -- "$(dirname -- {quoted})" && cat -- {src} > {quoted}; rc=$?; rm -f -- {src}; exit $rc',
            timeout=30,
            cwd="/",
        )
        if result.exit_code != 0:
            raise ActionError(f"could not write {path}: {result.output.strip()[-300:]}")

    @staticmethod
    def _snippet(text: str, line: int, count: int) -> str:
        lines = text.split("\n")
        start = max(1, line - SNIPPET_CONTEXT)
        end = min(len(lines), line + count - 1 + SNIPPET_CONTEXT)
        return numbered(lines[start - 1 : end], start)


def _find_all(text: str, needle: str) -> list[int]:
    found, at = [], text.find(needle)
    while at >= 0:
        found.append(at)
        at = text.find(needle, at + 1)
    return found
