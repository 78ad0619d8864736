"""Speech audio in and out: any file libsndfile reads (WAV, FLAC, MP3, …) as float32 mono at
16 kHz."""

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


def load_audio(path: str | Path, sr: int = SAMPLE_RATE) -> np.ndarray:
    """Read `path`, average its channels and resample to `sr` (soxr via librosa): a float32 1-D
    array.

    BEAT2's `wave16k/` files are already 16 kHz mono; others (e.g. a 44.1 kHz stereo MP3 saved as
    .wav) are converted, which is logged once per kind of file. Missing, unreadable, empty or
    non-finite audio, or a WAV whose header declares more data than the file holds (libsndfile
    would read what is there), raises `DataError`.
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
    mono = data.mean(axis=1)
    bad = np.flatnonzero(~np.isfinite(mono))
    if bad.size:
        kind = "NaN" if np.isnan(mono[bad[0]]) else "Inf"
        raise DataError(path, f"audio has {kind} at sample {bad[0]} ({bad[0] / file_sr:.3f} s)")
    if file_sr != sr or data.shape[1] != 1:
        announce_conversion(path, file_sr, data.shape[1], sr)
    if file_sr != sr:
        mono = librosa.resample(mono, orig_sr=file_sr, target_sr=sr)
    return np.ascontiguousarray(mono, dtype=np.float32)


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
