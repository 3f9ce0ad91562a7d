"""What one check may spend on the agent's files: a bound on its work, so its time is bounded too.

A check that outruns its deadline is an unscored infrastructure error, so an
unbounded check is a way to void a failure: a zip of a few megabytes that
inflates to gigabytes, a workbook of many large sheets, a text of tens of
megabytes given to a similarity ratio. Each is under every per-file cap and
still takes minutes. So a check counts, from its start, the bytes it
inflates (zip and tar members, PDF streams) and the characters it compares
(weighted: a ratio costs more per character than parsing does), and past
``MAX_CHECK_WORK`` it fails at once (``TooLarge``, score 0). At that bound
the slowest reader here finishes in seconds on this project's machine;
OSWorld's documents are a few megabytes at most.
"""

from __future__ import annotations

import bz2
import difflib
import errno
import lzma
import zipfile
import zlib
from typing import IO, Any

from evaluators._state import TooLarge

#: Units one check may spend: a byte inflated is one, a character compared is ``COMPARE_WEIGHT``.
MAX_CHECK_WORK = 64 * 1024 * 1024
#: difflib's ratio costs about four times what parsing XML costs per character (measured here).
COMPARE_WEIGHT = 4
_spent = [0]


def begin_check() -> None:
    """A new check starts with the whole budget (the registry calls this before each check)."""
    _spent[0] = 0


def spend(units: int, what: str) -> None:
    """Count ``units`` of work on ``what``; ``TooLarge`` once the check has spent its budget."""
    _spent[0] += units
    if _spent[0] > MAX_CHECK_WORK:
        raise TooLarge(errno.EFBIG, f"{what}: past the {MAX_CHECK_WORK >> 20} MiB of work a check does")


def sequence_ratio(a: Any, b: Any, *, autojunk: bool = True) -> float:
    """difflib's ``SequenceMatcher(None, a, b, autojunk).ratio()``, counted against the budget first."""
    spend(COMPARE_WEIGHT * (len(a) + len(b)), "text compared")
    return difflib.SequenceMatcher(None, a, b, autojunk=autojunk).ratio()


class BoundedZipFile(zipfile.ZipFile):
    """A zip whose members count against the budget as they are opened, at the size the zip declares
    (``zipfile`` never inflates a member past it)."""

    def open(self, name: Any, mode: str = "r", pwd: bytes | None = None, *, force_zip64: bool = False) -> IO[bytes]:
        if mode == "r":
            info = name if isinstance(name, zipfile.ZipInfo) else self.getinfo(name)
            spend(info.file_size, f"zip member {info.filename}")
        return super().open(name, mode, pwd, force_zip64=force_zip64)


#: The first bytes of the compressed streams a tar may be wrapped in, and a decompressor for each.
_STREAMS = {
    b"\x1f\x8b": lambda: zlib.decompressobj(wbits=16 + zlib.MAX_WBITS),
    b"BZh": bz2.BZ2Decompressor,
    b"\xfd7zXZ\x00": lzma.LZMADecompressor,
}


def decompressed(data: bytes, what: str) -> bytes:
    """``data`` unwrapped from gzip, bzip2 or xz (concatenated streams too), inflated only while the budget
    lasts; other data as it is. ``ValueError`` for a corrupt stream."""
    out: list[bytes] = []
    while data:
        make = next((m for magic, m in _STREAMS.items() if data.startswith(magic)), None)
        if make is None:
            if out:  # what follows the last stream (tar's zero padding)
                break
            return data
        stream = make()
        room = MAX_CHECK_WORK - _spent[0] + 1
        try:
            chunk = stream.decompress(data, room)
        except (zlib.error, OSError, EOFError, lzma.LZMAError) as exc:
            raise ValueError(f"{what}: a compressed stream does not inflate: {exc}") from None
        spend(len(chunk), what)
        out.append(chunk)
        if not stream.eof:
            raise ValueError(f"{what}: a compressed stream is cut short")
        data = stream.unused_data
    return b"".join(out)
