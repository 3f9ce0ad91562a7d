"""Checks on files and directories: existence, digests, permissions, owners.

Every path is read through ``evaluators._state`` (beneath the state root
when one is set); messages show the in-sandbox path.
"""

from __future__ import annotations

import errno
import grp
import hashlib
import os
import pwd
import stat
from fnmatch import fnmatch

from evaluators import _state
from evaluators._registry import ArgumentError, Result, check, require, result

#: ``file_sha256`` and ``tree_hash`` read at most this much (an agent's sparse terabyte file must not stall them).
MAX_HASH_BYTES = 1 << 30


def _path(path: object) -> str:
    require(path, str, "path")
    if not path:
        raise ArgumentError("path must not be empty")
    return path


@check("file_exists")
def file_exists(path: str, nonempty: bool = False) -> Result:
    """A regular file exists at ``path`` (and has content, with ``nonempty``)."""
    path = _path(path)
    try:
        st = _state.stat_state(path)
    except (FileNotFoundError, NotADirectoryError):
        return result(False, f"{path}: missing, expected a file")
    except OSError as exc:
        return result(False, f"{path}: {_state.describe(exc)}")
    if not stat.S_ISREG(st.st_mode):
        return result(False, f"{path}: {_state.kind(st)}, expected a file")
    if nonempty and st.st_size == 0:
        return result(False, f"{path}: exists but is empty")
    return result(True, f"{path}: exists")


@check("file_absent")
def file_absent(path: str) -> Result:
    """Nothing (no file, directory or dangling link) exists at ``path``."""
    path = _path(path)
    try:
        present = _state.lexists(path)
    except OSError as exc:
        return result(False, f"{path}: cannot tell whether it exists: {_state.describe(exc)}")
    if present:
        return result(False, f"{path}: still exists")
    return result(True, f"{path}: absent")


@check("dir_exists")
def dir_exists(path: str, min_entries: int = 0) -> Result:
    """A directory exists at ``path`` with at least ``min_entries`` entries."""
    path = _path(path)
    require(min_entries, int, "min_entries")
    try:
        count = len(_state.listdir(path))
    except (FileNotFoundError, NotADirectoryError):
        return result(False, f"{path}: not a directory")
    except OSError as exc:
        return result(False, f"{path}: cannot list: {_state.describe(exc)}")
    if count < min_entries:
        return result(False, f"{path}: {count} entries, expected at least {min_entries}")
    return result(True, f"{path}: directory with {count} entries")


def sha256_of(fh, budget: list[int]) -> str:
    """SHA-256 of an open file, spending ``budget[0]`` bytes of reading (``TooLarge`` when spent)."""
    digest = hashlib.sha256()
    for block in iter(lambda: fh.read(1 << 20), b""):
        budget[0] -= len(block)
        if budget[0] < 0:
            raise _state.TooLarge(errno.EFBIG, f"more than {MAX_HASH_BYTES} bytes to hash")
        digest.update(block)
    return digest.hexdigest()


@check("file_sha256")
def file_sha256(path: str, sha256: str) -> Result:
    """The file's SHA-256 equals ``sha256`` (hex, case-insensitive)."""
    path = _path(path)
    require(sha256, str, "sha256")
    expected = sha256.strip().lower()
    if len(expected) != 64 or any(c not in "0123456789abcdef" for c in expected):
        raise ArgumentError(f"sha256 must be 64 hex digits, got {sha256!r}")
    try:
        with _state.open_regular(path) as fh:
            actual = sha256_of(fh, [MAX_HASH_BYTES])
    except (FileNotFoundError, NotADirectoryError):
        return result(False, f"{path}: missing")
    except OSError as exc:
        return result(False, f"{path}: cannot read: {_state.describe(exc)}")
    return result(
        actual == expected, f"{path}: sha256 {actual}" + ("" if actual == expected else f", expected {expected}")
    )


def _parse_mode(mode: object) -> int:
    if isinstance(mode, bool):
        raise ArgumentError("mode must be an octal string such as '0640'")
    if isinstance(mode, int):
        value = mode
    elif isinstance(mode, str):
        text = mode.strip().lower().removeprefix("0o")
        try:
            value = int(text, 8)
        except ValueError:
            raise ArgumentError(f"mode must be an octal string such as '0640', got {mode!r}") from None
    else:
        raise ArgumentError(f"mode must be an octal string such as '0640', got {type(mode).__name__}")
    if not 0 <= value <= 0o7777:
        raise ArgumentError(f"mode {mode!r} is out of range 0000-7777")
    return value


@check("file_mode")
def file_mode(path: str, mode: str | int) -> Result:
    """The permission bits of ``path`` (not following a final link) equal ``mode``."""
    path = _path(path)
    expected = _parse_mode(mode)
    try:
        actual = stat.S_IMODE(_state.stat_state(path, follow=False).st_mode)
    except OSError as exc:
        return result(False, f"{path}: {_state.describe(exc)}")
    ok = actual == expected
    return result(ok, f"{path}: mode {actual:04o}" + ("" if ok else f", expected {expected:04o}"))


def _resolve_id(value: object, what: str, table: str, lookup) -> int:
    """A numeric id, or a name looked up in the state root's ``/etc/<table>`` (the system's without a root)."""
    if isinstance(value, bool):
        raise ArgumentError(f"{what} must be a name or a numeric id")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, str) and value:
        ids = _state.account_ids(table)
        if ids is not None:
            return ids.get(value, -1)
        try:
            return lookup(value)
        except KeyError:
            return -1
    raise ArgumentError(f"{what} must be a name or a numeric id, got {value!r}")


@check("file_owner")
def file_owner(path: str, user: str | int | None = None, group: str | int | None = None) -> Result:
    """``path`` is owned by ``user`` and/or ``group`` (names or numeric ids)."""
    path = _path(path)
    if user is None and group is None:
        raise ArgumentError("file_owner needs user, group, or both")
    try:
        st = _state.stat_state(path, follow=False)
    except OSError as exc:
        return result(False, f"{path}: {_state.describe(exc)}")
    problems = []
    if user is not None:
        uid = _resolve_id(user, "user", "passwd", lambda n: pwd.getpwnam(n).pw_uid)
        if uid != st.st_uid:
            problems.append(f"owner uid {st.st_uid}, expected {user}")
    if group is not None:
        gid = _resolve_id(group, "group", "group", lambda n: grp.getgrnam(n).gr_gid)
        if gid != st.st_gid:
            problems.append(f"group gid {st.st_gid}, expected {group}")
    if problems:
        return result(False, f"{path}: " + "; ".join(problems))
    return result(True, f"{path}: owner {st.st_uid}:{st.st_gid}")


def _excluded(rel: str, patterns: list[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch(rel, p) or fnmatch(name, p) for p in patterns)


def digest_tree(root: str, exclude: list[str] | tuple[str, ...] = (), max_files: int = 200_000) -> str:
    """SHA-256 over a tree: relative paths, types, permission bits, link targets, contents.

    Modification times and owners are left out so the same state built twice
    hashes the same. Symlinks are hashed as their targets, never followed.
    Raises ``OSError`` if the tree cannot be read or changes under the walk.
    """
    digest = hashlib.sha256()
    budget = [MAX_HASH_BYTES]
    for rel, st, dir_fd, name in _state.walk(root, lambda rel: not _excluded(rel, exclude), max_files):
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            kind, payload = "l", os.fsencode(os.readlink(name, dir_fd=dir_fd))
        elif stat.S_ISDIR(st.st_mode):
            kind, payload = "d", b""
        elif stat.S_ISREG(st.st_mode):
            with _state.open_entry(dir_fd, name) as fh:
                kind, payload = "f", sha256_of(fh, budget).encode()
        else:
            kind, payload = "o", b""
        digest.update(f"{kind} {mode:04o} {rel}\0".encode())
        digest.update(payload + b"\0")
    return digest.hexdigest()


@check("tree_hash")
def tree_hash(path: str, expected: str | None = None, exclude: list[str] | None = None) -> Result:
    """Digest of a directory tree; the detail is the hex digest.

    With ``expected`` it passes only on that digest; without, it passes
    whenever the tree can be read (it is then a measurement, not a test).
    ``exclude`` holds glob patterns matched on relative paths and names.
    """
    path = _path(path)
    patterns = [] if exclude is None else require(exclude, list, "exclude")
    for p in patterns:
        require(p, str, "exclude entries")
    if expected is not None:
        require(expected, str, "expected")
    try:
        is_dir = stat.S_ISDIR(_state.stat_state(path).st_mode)
    except OSError:
        is_dir = False
    if not is_dir:
        return result(False, f"{path}: not a directory")
    try:
        value = digest_tree(path, patterns)
    except (OSError, RecursionError) as exc:
        reason = _state.describe(exc) if isinstance(exc, OSError) else "too deeply nested"
        return result(False, f"{path}: cannot hash: {reason}")
    if expected is None:
        return result(True, value)
    return result(value == expected.strip().lower(), value)
