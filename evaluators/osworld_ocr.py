"""OSWorld's ``compare_image_text``: OCR of an image the agent saved, in the host's state checker.

Upstream OCRs the image with easyocr and looks for ``rule["text"]`` as a
substring (case-sensitive) of the boxes' texts joined by spaces. The checker
is standard-library Python, so Tesseract (``tesseract-ocr-eng``, a host
package: ``scripts/apt-packages.txt``) reads it here, fed the bytes on stdin
and bounded in time, its words joined by single spaces and the image read as
one block of text (``--psm 6``: its automatic layout found no text at all in a
terminal window on a black screen). PNG and JPEG are given to it as they
are, an X11 screen dump (``xwd``, which upstream also converts) is turned
into a PPM first; anything else, or an image over ``png.MAX_PIXELS``, scores 0.
"""

from __future__ import annotations

import errno
import hashlib
import struct
import subprocess
from typing import Any

from evaluators import _state
from evaluators.osworld import limits, metric
from evaluators.png import MAX_PIXELS

#: Tesseract gets this long (the check's deadline is 60 s); past it the image scores 0.
OCR_TIMEOUT = 25.0
_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_THREAD_LIMIT": "1"}


def _image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height of a PNG or JPEG from its header (None: neither)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24 and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    if data.startswith(b"\xff\xd8"):
        pos = 2
        while pos + 9 <= len(data):
            if data[pos] != 0xFF:
                return None
            kind = data[pos + 1]
            if kind in (0xD8, 0x01) or 0xD0 <= kind <= 0xD7:
                pos += 2
                continue
            length = struct.unpack(">H", data[pos + 2 : pos + 4])[0]
            if 0xC0 <= kind <= 0xCF and kind not in (0xC4, 0xC8, 0xCC):
                height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
                return width, height
            pos += 2 + length
    return None


def xwd_to_ppm(data: bytes) -> bytes:
    """An X11 window dump (ZPixmap, 24 or 32 bits a pixel, 8-bit masks) as a binary PPM; ValueError otherwise."""
    if len(data) < 100:
        raise ValueError("too short for an XWD header")
    for order in (">", "<"):
        fields = struct.unpack(order + "25I", data[:100])
        if fields[1] == 7:  # XWD_FILE_VERSION
            break
    else:
        raise ValueError("not an XWD file")
    header_size, _, pixmap_format, _, width, height = fields[:6]
    byte_order, bits_per_pixel, bytes_per_line = fields[7], fields[11], fields[12]
    masks, ncolors = fields[14:17], fields[19]
    if pixmap_format != 2 or bits_per_pixel not in (24, 32):
        raise ValueError(f"XWD format {pixmap_format} at {bits_per_pixel} bits a pixel")
    if width * height > MAX_PIXELS or width == 0 or height == 0:
        raise _state.TooLarge(errno.EFBIG, f"{width}x{height} pixels")
    step = bits_per_pixel // 8
    shifts = []
    for mask in masks:
        if mask not in (0xFF, 0xFF00, 0xFF0000, 0xFF000000):
            raise ValueError(f"XWD colour mask {mask:#x}")
        byte = (mask.bit_length() - 1) // 8
        shifts.append(byte if byte_order == 0 else step - 1 - byte)
    start = header_size + 12 * ncolors
    if start + bytes_per_line * (height - 1) + width * step > len(data):
        raise ValueError("XWD pixels cut short")
    out = bytearray(width * height * 3)
    for y in range(height):
        row = data[start + y * bytes_per_line : start + y * bytes_per_line + width * step]
        for channel, offset in enumerate(shifts):
            out[y * width * 3 + channel : (y + 1) * width * 3 : 3] = row[offset::step]
    return b"P6\n%d %d\n255\n" % (width, height) + bytes(out)


_OCR_SEEN: dict[str, str | None] = {}


def ocr_text(data: bytes) -> str | None:
    """The words Tesseract reads in the image, joined by single spaces (None: an image we do not read).

    Remembered by content: upstream's task grades one file by three rules, which must not take three
    OCR runs (each up to ``OCR_TIMEOUT``) within the check's deadline.
    """
    key = hashlib.sha256(data).hexdigest()
    if key not in _OCR_SEEN:
        if len(_OCR_SEEN) >= 16:
            _OCR_SEEN.clear()
        _OCR_SEEN[key] = _ocr(data)
    return _OCR_SEEN[key]


def _ocr(data: bytes) -> str | None:
    if data[4:8] in (b"\x00\x00\x00\x07", b"\x07\x00\x00\x00"):  # an XWD header's file_version
        try:
            data = xwd_to_ppm(data)
        except (ValueError, _state.TooLarge):
            return None
    else:
        size = _image_size(data)
        if size is None or size[0] * size[1] > MAX_PIXELS or 0 in size:
            return None
    try:
        done = subprocess.run(
            ["tesseract", "stdin", "stdout", "-l", "eng", "--psm", "6"],
            input=data,
            capture_output=True,
            timeout=OCR_TIMEOUT,
            env=_ENV,
            check=False,
        )
    except (subprocess.TimeoutExpired, OSError):
        return None
    if done.returncode != 0:
        return None
    return " ".join(done.stdout.decode("utf-8", "replace").split())


@metric
def compare_image_text(result: Any, rule: dict[str, Any]) -> float:
    """``rule["text"]`` in the image's OCR text (``type`` ``text``, the only one upstream has)."""
    if not result or not isinstance(result, bytes) or not isinstance(rule, dict) or rule.get("type") != "text":
        return 0.0
    text = ocr_text(result)
    return float(text is not None and str(rule.get("text", "")) in text)


@limits("compare_image_text")
def _image_text_limits(options: dict[str, Any], rule: Any) -> list[str]:
    kind = rule.get("type") if isinstance(rule, dict) else None
    return [] if kind == "text" else [f"compare_image_text rule type {kind!r}"]
