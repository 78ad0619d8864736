"""Speech audio in and out: any file libsndfile reads (WAV, FLAC, MP3, …) as float32 mono at
16 kHz, and the audio contract (docs/faults.md, "Readers").

`load_audio` returns validated samples or raises a one-line `DataError` naming the file: readable,
a plausible sample rate, at least one sample after conversion, finite, within a plausible peak.
`no_speech` is the speech-presence check: a file whose level is below `SPEECH_FLOOR_DBFS` holds no
speech, so the metrics of speech (BC's onsets) skip its sequence with the reason, rather than score
it 0 (`data.beat2.Beat2Dataset` records it in the sequence's `left_out`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import soundfile as sf

from gesturebench.data.records import SAMPLE_RATE
from gesturebench.runtime.atomic import atomic_path, one_line
from gesturebench.runtime.errors import DataError
from gesturebench.runtime.librosa_lock import librosa

log = logging.getLogger(__name__)

#: the (sample rate, channels) of the files already announced as converted: each kind is logged
#: once per process, not at every file or window
_ANNOUNCED: set[tuple[int, int]] = set()
#: Sample rates (Hz) accepted: speech needs 8 kHz (the telephone band's 4 kHz); no recorder
#: writes above 384 kHz, and a header's absurd rate would make the converted audio huge or empty.
SAMPLE_RATES = (8000, 384000)
#: Largest |sample| accepted (+60 dBFS): float files may pass full scale (1.0) after processing,
#: but not by orders of magnitude; onset detection squares samples in float32.
MAX_PEAK = 1000.0
#: Level (dBFS: RMS about the mean, relative to full scale 1.0) below which a file holds no speech:
#: speech is recorded at -30 to -15 dBFS (BEAT2's: -18), a quiet room's noise floor lies near
#: -60, digital silence and a constant (DC) offset at -inf.
SPEECH_FLOOR_DBFS = -60.0


def load_audio(path: str | Path, sr: int = SAMPLE_RATE) -> np.ndarray:
    """Read `path`, average its channels and resample to `sr` (soxr via librosa): a float32 1-D
    array.

    BEAT2's `wave16k/` files are already 16 kHz mono; others (e.g. a 44.1 kHz stereo MP3 saved as
    .wav) are converted, which is logged once per kind of file. Missing, unreadable, empty,
    non-finite audio, a rate outside `SAMPLE_RATES`, a peak above `MAX_PEAK`, or a WAV whose header
    declares more data than the file holds (libsndfile would read what is there), raises
    `DataError`.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "audio file not found")
    sizes = wav_data_sizes(path)
    if sizes is not None and sizes[0] > sizes[1]:
        raise DataError(
            path,
            f"WAV header declares {sizes[0]} bytes of audio but the file holds {sizes[1]}"
            " (truncated or damaged)",
        )
    try:
        data, file_sr = sf.read(path, dtype="float32", always_2d=True)
    except (RuntimeError, ValueError) as exc:
        raise DataError(path, f"not a readable audio file ({one_line(exc)})") from exc
    if data.size == 0:
        raise DataError(path, "audio is empty (0 samples)")
    if not SAMPLE_RATES[0] <= file_sr <= SAMPLE_RATES[1]:
        low, high = SAMPLE_RATES
        raise DataError(path, f"sample rate {file_sr} Hz is outside {low}-{high} Hz")
    bad = np.flatnonzero(~np.isfinite(data).all(axis=1))
    if bad.size:
        kind = "NaN" if np.isnan(data[bad[0]]).any() else "Inf"
        raise DataError(path, f"audio has {kind} at sample {bad[0]} ({bad[0] / file_sr:.3f} s)")
    loud = np.flatnonzero(np.abs(data).max(axis=1) > MAX_PEAK)
    if loud.size:
        raise DataError(
            path,
            f"audio reaches {np.abs(data[loud[0]]).max():.3g} at sample {loud[0]}, above the"
            f" plausible peak {MAX_PEAK:g} (+60 dBFS; full scale is 1)",
        )
    mono = data.mean(axis=1)
    if file_sr != sr or data.shape[1] != 1:
        announce_conversion(path, file_sr, data.shape[1], sr)
    if file_sr != sr:
        mono = librosa().resample(mono, orig_sr=file_sr, target_sr=sr)
    if mono.size == 0:
        raise DataError(path, f"audio is {len(data)} sample(s) at {file_sr} Hz: none at {sr} Hz")
    return np.ascontiguousarray(mono, dtype=np.float32)


def speech_level(audio: np.ndarray) -> float:
    """The level (dBFS, -inf for a constant signal) of (S,) samples: their RMS about their mean,
    so that a DC offset does not count as sound."""
    samples = np.asarray(audio, dtype=np.float64)
    rms = float(np.std(samples))
    return 20 * np.log10(rms) if rms > 0 else -np.inf


def no_speech(path: str | Path, audio: np.ndarray) -> str | None:
    """Why the (S,) samples read from `path` hold no speech (naming the file), or None: their
    level is below `SPEECH_FLOOR_DBFS`."""
    level = speech_level(audio)
    if level >= SPEECH_FLOOR_DBFS:
        return None
    return (
        f"{path}: no speech (level {level:.1f} dBFS, below the {SPEECH_FLOOR_DBFS:g} dBFS of"
        " speech)"
    )


def wav_data_sizes(path: Path) -> tuple[int, int] | None:
    """(bytes the data chunk of a RIFF/WAVE file declares, bytes the file holds after that chunk's
    header); None for other formats or where no data chunk is found."""
    with path.open("rb") as f:
        head = f.read(12)
        if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        while len(chunk := f.read(8)) == 8:
            size = int.from_bytes(chunk[4:], "little")
            if chunk[:4] == b"data":
                return size, os.fstat(f.fileno()).st_size - f.tell()
            f.seek(size + (size & 1), os.SEEK_CUR)
    return None


def announce_conversion(path: Path, file_sr: int, channels: int, sr: int) -> None:
    """Log, the first time only, that files like `path` are converted to `sr` Hz mono."""
    if (file_sr, channels) in _ANNOUNCED:
        return
    _ANNOUNCED.add((file_sr, channels))
    log.info(
        "audio at %d Hz with %d channel(s), e.g. %s: converted to %d Hz mono when read (said once)",
        file_sr,
        channels,
        path,
        sr,
    )


def write_wav(path: str | Path, audio: np.ndarray, sr: int = SAMPLE_RATE) -> None:
    """Write mono `audio` as a 32-bit float WAV (BEAT2's `wave16k` format), atomically."""
    with atomic_path(path) as tmp:
        sf.write(tmp, np.asarray(audio, dtype=np.float32), sr, format="WAV", subtype="FLOAT")
