"""Audio written for the media metric tests: deterministic tones as WAV, MP3 by ``lame`` when asked."""

from __future__ import annotations

import io
import math
import subprocess
import wave


def melody(notes: list[float], beat: float = 0.5, rate: int = 22050, noise: float = 0.02, seed: int = 1) -> list[float]:
    """Each frequency (Hz; 0 is a rest) for ``beat`` seconds with a decaying envelope, over a little noise."""
    out, state = [], seed
    for freq in notes:
        for n in range(int(beat * rate)):
            state = (state * 1103515245 + 12345) % 2**31
            t = n / rate
            tone = math.sin(2 * math.pi * freq * t) + 0.3 * math.sin(4 * math.pi * freq * t) if freq else 0.0
            out.append(0.4 * tone * math.exp(-3 * t) + noise * (state / 2**30 - 1))
    return out


def wav(samples: list[float], rate: int = 22050, channels: int = 1) -> bytes:
    """16-bit PCM; with two channels the same samples on both."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        ints = [max(-32768, min(32767, round(s * 32767))) for s in samples for _ in range(channels)]
        w.writeframes(b"".join(v.to_bytes(2, "little", signed=True) for v in ints))
    return buf.getvalue()


def mp3(wav_bytes: bytes, bitrate: int = 128) -> bytes:
    """The WAV encoded by lame (scripts/apt-packages.txt), the bytes an app would embed."""
    done = subprocess.run(["lame", "--quiet", "-b", str(bitrate), "-", "-"], input=wav_bytes, capture_output=True, check=True)  # fmt: skip
    return done.stdout


SONG_A = [262, 330, 392, 523, 0, 440, 349, 294]
SONG_B = [98, 0, 110, 123, 880, 988, 0, 1047]
