"""OSWorld's ``compare_audios`` and its ``audio_in_slide`` getter, in the host's state checker.

Upstream's librosa pipeline (mono, 22050 Hz, default MFCC, each
coefficient's row divided by its maximum magnitude, fastdtw with radius 1
and the cosine distance, the distance divided by the path length,
``exp(-d)``). SoX (a host package: ``scripts/apt-packages.txt``) decodes and
resamples, fed a private copy and bounded in time (its ``rate`` effect, the
algorithm librosa's default ``soxr_hq`` grew from); MFCC and fastdtw are
ours, in pure Python, matching librosa 0.11 and fastdtw 0.3 to rounding. A
file longer than ``MAX_SECONDS`` scores 0 (pure Python takes about 0.1 s of
CPU per second of audio: a longer one could run the check past its
deadline, an unscored infrastructure error the agent could use to void a
failure). Upstream's edge cases are kept: both unreadable or empty is 1,
one of them is 0.
"""

from __future__ import annotations

import cmath
import errno
import math
import operator
import os
import posixpath
import struct
import subprocess
import tempfile
from typing import Any
from xml.etree import ElementTree as ET

from evaluators import _state
from evaluators.office import _PKG_REL, OfficeError, _open, member
from evaluators.osworld import metric

#: SoX gets this long (the check's deadline is 60 s); past it the file scores 0.
DECODE_TIMEOUT = 15.0
#: Longer audio scores 0: the MFCC of both files and the alignment stay within ~15 s on a loaded machine.
MAX_SECONDS = 60.0
MAX_INPUT = 64 * 1024 * 1024
SR, N_FFT, HOP, N_MELS, N_MFCC = 22050, 2048, 512, 128, 20
_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_THREAD_LIMIT": "1"}


def audio_in_slide(pptx: str, slide_index: int) -> bytes | None:
    """Upstream's ``audio_in_slide`` getter, read beneath the root: the first relationship of
    ``slideN.xml`` (by file name, ``slide_index`` + 1) whose type says ``audio``; a ``..`` target is
    the part in the file, a ``file://`` one the linked file (beneath the root). None: no such audio."""
    try:
        data = _state.read_bytes(pptx)
        with _open(data) as archive:
            rels = f"ppt/slides/_rels/slide{int(slide_index) + 1}.xml.rels"
            if rels not in archive.namelist():
                return None
            for rel in ET.fromstring(member(archive, rels)).iter(f"{_PKG_REL}Relationship"):
                if "audio" not in rel.get("Type", ""):
                    continue
                target = rel.get("Target", "")
                if target.startswith(".."):
                    return member(archive, posixpath.normpath(posixpath.join("ppt/slides", target)))
                if target.startswith("file://"):
                    return _state.read_bytes(target[len("file://") :], MAX_INPUT)
                return None
    except (OSError, OfficeError, ET.ParseError, ValueError):
        return None
    return None


# -- compare_audios -------------------------------------------------------------------------------


def _sox_type(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "wav"
    if data[:4] == b"OggS":
        return "ogg"
    if data[:4] == b"fLaC":
        return "flac"
    if data[:4] == b"FORM" and data[8:12] in (b"AIFF", b"AIFC"):
        return "aiff"
    if data[:3] == b"ID3" or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0):
        return "mp3"
    return None


def load_audio(data: bytes) -> list[float] | None:
    """The samples librosa's ``load`` gives (mono, 22050 Hz, float), decoded by SoX; None when unreadable.

    Raises ``_state.TooLarge`` for more than ``MAX_SECONDS`` of audio or bytes over ``MAX_INPUT``.
    """
    if len(data) > MAX_INPUT:
        raise _state.TooLarge(errno.EFBIG, f"{len(data)} bytes")
    kind = _sox_type(data)
    if kind is None:
        return None
    limit = int(MAX_SECONDS * SR)
    with tempfile.TemporaryDirectory() as tmp:  # the checker's own /tmp: SoX reads a seekable file
        path = os.path.join(tmp, "in." + kind)
        with open(path, "wb") as fh:
            fh.write(data)
        argv = ["sox", "-V1", "-t", kind, path, "-t", "raw", "-e", "floating-point", "-b", "32", "-L", "-c", "1"]
        argv += ["-", "rate", "-h", str(SR), "trim", "0", f"{limit + 1}s"]  # trim counts output samples
        try:
            done = subprocess.run(argv, capture_output=True, timeout=DECODE_TIMEOUT, env=_ENV, check=False)
        except subprocess.TimeoutExpired:
            raise _state.TooLarge(errno.EFBIG, "decoding took too long") from None
        except OSError:
            return None
    if done.returncode != 0:
        return None
    count = len(done.stdout) // 4
    if count > limit:
        raise _state.TooLarge(errno.EFBIG, f"longer than {MAX_SECONDS:g} s")
    return list(struct.unpack(f"<{count}f", done.stdout[: 4 * count]))


_FFT_TABLES: dict[int, tuple[list[int], list[complex]]] = {}


def _fft(x: list[complex]) -> list[complex]:
    """Radix-2 FFT (len(x) a power of two): bit reversal, then each stage as a few list comprehensions
    over strided slices (the loop in Python runs at most about sqrt(n) times a stage)."""
    n = len(x)
    tables = _FFT_TABLES.get(n)
    if tables is None:
        bits = n.bit_length() - 1
        rev = [int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(n)]
        tables = _FFT_TABLES[n] = (rev, [cmath.exp(-2j * math.pi * k / n) for k in range(n // 2)])
    rev, tw = tables
    x = [x[i] for i in rev]
    h = 1
    while h < n:
        step = 2 * h
        if h < n // step:  # many short blocks: one pass per position in the block, over every block
            for j in range(h):
                w = tw[j * (n // step)]
                a, b = x[j::step], [w * v for v in x[j + h :: step]] if j else x[j + h :: step]
                x[j::step] = [p + q for p, q in zip(a, b)]
                x[j + h :: step] = [p - q for p, q in zip(a, b)]
        else:  # few long blocks: one pass per block
            ws = tw[:: n // step]
            for s in range(0, n, step):
                a, b = x[s : s + h], [w * v for w, v in zip(ws, x[s + h : s + step])]
                x[s : s + h] = [p + q for p, q in zip(a, b)]
                x[s + h : s + step] = [p - q for p, q in zip(a, b)]
        h = step
    return x


def _hz_to_mel(f: float) -> float:
    return f / (200.0 / 3) if f < 1000.0 else 15.0 + math.log(f / 1000.0) / (math.log(6.4) / 27.0)


def _mel_to_hz(m: float) -> float:
    return m * (200.0 / 3) if m < 15.0 else 1000.0 * math.exp((math.log(6.4) / 27.0) * (m - 15.0))


def _mel_filters() -> list[tuple[int, list[float]]]:
    """librosa's ``filters.mel`` (Slaney scale and area norm), each filter as (first bin, weights)."""
    bins = N_FFT // 2 + 1
    freqs = [SR / 2 * k / (bins - 1) for k in range(bins)]
    top = _hz_to_mel(SR / 2)
    mel_f = [_mel_to_hz(top * i / (N_MELS + 1)) for i in range(N_MELS + 2)]
    filters = []
    for i in range(N_MELS):
        lo, mid, hi = mel_f[i], mel_f[i + 1], mel_f[i + 2]
        enorm = 2.0 / (hi - lo)
        row = [max(0.0, min((f - lo) / (mid - lo), (hi - f) / (hi - mid))) * enorm for f in freqs]
        nonzero = [k for k, w in enumerate(row) if w > 0]
        first = nonzero[0] if nonzero else 0
        filters.append((first, row[first : nonzero[-1] + 1] if nonzero else []))
    return filters


def mfcc(y: list[float]) -> list[list[float]]:
    """librosa's default ``feature.mfcc`` of 22050 Hz samples: 20 coefficients (rows) by frame (columns)."""
    half = N_FFT // 2
    window = [0.5 - 0.5 * math.cos(2 * math.pi * n / N_FFT) for n in range(N_FFT)]  # periodic Hann
    padded = [0.0] * half + y + [0.0] * half  # center=True, pad_mode="constant"
    frames = 1 + len(y) // HOP
    filters = _mel_filters()
    # a real FFT of N_FFT points as a complex one of half as many: X[k] = (A + B - i w^k (A - B)) / 2,
    # A = Z[k], B = conj(Z[M - k]); the 1/4 of |X|^2 is folded into the filters
    turn = [1j * cmath.exp(-2j * math.pi * k / N_FFT) for k in range(1, half)]
    filters = [(first, [w / 4 for w in row]) for first, row in filters]
    mul = operator.mul
    mels = []
    for t in range(frames):
        seg = padded[t * HOP : t * HOP + N_FFT]
        if len(seg) < N_FFT:
            seg = seg + [0.0] * (N_FFT - len(seg))
        w = list(map(mul, seg, window))
        z = _fft(list(map(complex, w[0::2], w[1::2])))
        z0 = z[0]
        rest = [c.conjugate() for c in z[half - 1 : 0 : -1]]
        power = [4 * (z0.real + z0.imag) ** 2]
        power += [abs(a + b - r * (a - b)) ** 2 for a, b, r in zip(z[1:half], rest, turn)]
        power.append(4 * (z0.real - z0.imag) ** 2)
        mels.append([sum(map(mul, row, power[first : first + len(row)])) for first, row in filters])
    # power_to_db(ref=1, amin=1e-10, top_db=80) over the whole spectrogram
    db = [[10.0 * math.log10(max(1e-10, v)) for v in frame] for frame in mels]
    floor = max((max(frame) for frame in db), default=0.0) - 80.0
    scale = [math.sqrt(1.0 / N_MELS)] + [math.sqrt(2.0 / N_MELS)] * (N_MFCC - 1)
    basis = [
        [scale[k] * math.cos(math.pi * k * (2 * n + 1) / (2 * N_MELS)) for n in range(N_MELS)] for k in range(N_MFCC)
    ]
    columns = []
    for frame in db:
        frame = [max(v, floor) for v in frame]
        columns.append([sum(map(operator.mul, row, frame)) for row in basis])
    return [list(row) for row in zip(*columns)]


def normalize_rows(m: list[list[float]]) -> list[list[float]]:
    """librosa's ``util.normalize(axis=1)``: each row over its largest magnitude (rows of ~0 left alone)."""
    out = []
    for row in m:
        top = max((abs(v) for v in row), default=0.0)
        top = top if top >= 1.1754944e-38 else 1.0
        out.append([v / top for v in row])
    return out


def cosine(u: list[float], v: list[float]) -> float:
    """scipy's ``spatial.distance.cosine`` (nan for a zero vector, as scipy gives)."""
    uv = sum(a * b for a, b in zip(u, v))
    uu = sum(a * a for a in u)
    vv = sum(b * b for b in v)
    if uu == 0.0 or vv == 0.0:
        return math.nan
    return max(0.0, min(2.0, 1.0 - uv / math.sqrt(uu * vv)))


def _dtw(x: list[list[float]], y: list[list[float]], window: list[tuple[int, int]] | None):
    """fastdtw's ``__dtw``: the same cells, the same tie order (up, left, diagonal), the same path."""
    if window is None:
        window = [(i, j) for i in range(len(x)) for j in range(len(y))]
    inf = (math.inf, 0, 0)
    cost: dict[tuple[int, int], tuple[float, int, int]] = {(0, 0): (0.0, 0, 0)}
    for i, j in window:
        i, j = i + 1, j + 1
        d = cosine(x[i - 1], y[j - 1])
        best = (cost.get((i - 1, j), inf)[0] + d, i - 1, j)
        for cand in ((cost.get((i, j - 1), inf)[0] + d, i, j - 1), (cost.get((i - 1, j - 1), inf)[0] + d, i - 1, j - 1)):  # fmt: skip
            if cand[0] < best[0]:
                best = cand
        cost[i, j] = best
    path = []
    i, j = len(x), len(y)
    while not (i == j == 0):
        path.append((i - 1, j - 1))
        _, i, j = cost.get((i, j), inf)
    path.reverse()
    return cost.get((len(x), len(y)), inf)[0], path


def _half(x: list[list[float]]) -> list[list[float]]:
    return [[(a + b) / 2 for a, b in zip(x[i], x[i + 1])] for i in range(0, len(x) - len(x) % 2, 2)]


def _expand(path: list[tuple[int, int]], len_x: int, len_y: int, radius: int) -> list[tuple[int, int]]:
    near = set(path)
    for i, j in path:
        for a in range(-radius, radius + 1):
            for b in range(-radius, radius + 1):
                near.add((i + a, j + b))
    cells = set()
    for i, j in near:
        cells.update(((2 * i, 2 * j), (2 * i, 2 * j + 1), (2 * i + 1, 2 * j), (2 * i + 1, 2 * j + 1)))
    window, start = [], 0
    for i in range(len_x):
        new_start = None
        for j in range(start, len_y):
            if (i, j) in cells:
                window.append((i, j))
                if new_start is None:
                    new_start = j
            elif new_start is not None:
                break
        start = new_start if new_start is not None else start
    return window


def fastdtw(x: list[list[float]], y: list[list[float]], radius: int = 1):
    """fastdtw's ``fastdtw`` with the cosine distance: (distance, path)."""
    if len(x) < radius + 2 or len(y) < radius + 2:
        return _dtw(x, y, None)
    _, path = fastdtw(_half(x), _half(y), radius)
    return _dtw(x, y, _expand(path, len(x), len(y), radius))


def audio_similarity(y1: list[float], y2: list[float]) -> float:
    """Upstream's score of two loaded signals: exp(-DTW distance / path length) of their normalized MFCCs."""
    m1, m2 = normalize_rows(mfcc(y1)), normalize_rows(mfcc(y2))
    distance, path = fastdtw([list(c) for c in zip(*m1)], [list(c) for c in zip(*m2)])
    score = math.exp(-distance / len(path)) if path else 0.0
    return score if score == score else 0.0  # nan (a silent frame's cosine) scores 0


@metric
def compare_audios(result: Any, expected: Any) -> float:
    """Upstream's ``compare_audios``: in [0, 1], 1 for the same audio; both unreadable 1, one of them 0."""
    if result is None or expected is None:  # upstream: no path (a getter found nothing) is 0
        return 0.0
    try:
        y1 = load_audio(result) if isinstance(result, bytes) else None
        y2 = load_audio(expected) if isinstance(expected, bytes) else None
    except _state.TooLarge:
        return 0.0
    bad1, bad2 = not y1, not y2
    if bad1 and bad2:
        return 1.0
    if bad1 or bad2:
        return 0.0
    return audio_similarity(y1, y2)
