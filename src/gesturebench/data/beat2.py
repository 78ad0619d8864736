"""BEAT2 on disk: motion `.npz` reading/writing, validated by the motion contract
(`data.motion`), and `Beat2Dataset`, a lazy per-sequence reader.

Layout of a BEAT2 language folder (e.g. ``beat_english_v2.0.0/``)::

    train_test_split.csv        id,type  (type: train / val / test / additional)
    smplxflame_30/{id}.npz      SMPL-X + FLAME parameters at 30 fps (required for every listed id)
    wave16k/{id}.wav            speech, 16 kHz mono (optional: audio is None without it)
    textgrid/{id}.TextGrid      word alignment, tier "words" (optional: words is None without it)
    sem/{id}.txt                semantic intervals (optional: sem is None without it)

Ids read ``{speaker}_{name}_{type}_{start}_{end}`` (e.g. ``2_scott_0_1_1``); the speaker is the
leading integer.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

import numpy as np
import pandas as pd

from gesturebench.data.annotations_io import read_sem, read_textgrid_words
from gesturebench.data.audio import load_audio, no_speech
from gesturebench.data.motion import validate_motion_arrays
from gesturebench.data.records import FPS, SAMPLE_RATE, Motion, SequenceRecord, content_digest
from gesturebench.runtime.atomic import atomic_path, one_line
from gesturebench.runtime.caches import file_state
from gesturebench.runtime.errors import ConfigError, DataError

log = logging.getLogger(__name__)

SPLIT_FILE = "train_test_split.csv"
MOTION_DIR = "smplxflame_30"
AUDIO_DIR = "wave16k"
TEXTGRID_DIR = "textgrid"
SEM_DIR = "sem"


@dataclass(frozen=True)
class SequencePaths:
    """Where the files of one sequence live in a BEAT2 folder (they need not exist)."""

    motion: Path
    audio: Path
    textgrid: Path
    sem: Path


def sequence_paths(root: str | Path, sequence_id: str) -> SequencePaths:
    """The BEAT2 paths of `sequence_id` under `root`."""
    root = Path(root)
    return SequencePaths(
        motion=root / MOTION_DIR / f"{sequence_id}.npz",
        audio=root / AUDIO_DIR / f"{sequence_id}.wav",
        textgrid=root / TEXTGRID_DIR / f"{sequence_id}.TextGrid",
        sem=root / SEM_DIR / f"{sequence_id}.txt",
    )


def speaker_of(sequence_id: str) -> int:
    """The speaker number that starts a BEAT2 id (``2_scott_0_1_1`` → 2); ValueError if there is
    none."""
    head = sequence_id.split("_", 1)[0]
    if not head.isdigit():
        raise ValueError(
            f"sequence id {sequence_id!r} does not start with a speaker number "
            "(e.g. '2_scott_0_1_1')"
        )
    return int(head)


def read_npz(path: str | Path, kind: str = "motion") -> dict[str, np.ndarray]:
    """All arrays of an `.npz` file (no pickles); a missing (``{kind} file not found``), truncated
    or corrupt file is a `DataError`."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, f"{kind} file not found")
    if not zipfile.is_zipfile(path):
        raise DataError(
            path,
            "not a readable npz archive (not a zip file: truncated, corrupt or another format)",
        )
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {key: _array(archive, key) for key in archive.files}
    except (zipfile.BadZipFile, zlib.error, ValueError, OSError, EOFError) as exc:
        raise DataError(path, f"not a readable npz archive ({one_line(exc)})") from exc


def _array(archive, key: str) -> np.ndarray:
    """One array of an open npz; a pickled object array (e.g. a config dict a model script saved
    beside its arrays) becomes an empty object array, so that the file is refused only if a needed
    key is one (as "not numeric")."""
    try:
        return archive[key]
    except ValueError as exc:
        if "allow_pickle" not in str(exc):
            raise
        return np.empty(0, dtype=object)


def read_motion_npz(path: str | Path, expected_fps: int = FPS) -> Motion:
    """Read a BEAT2 motion `.npz` (`read_npz`) and validate it (`validate_motion_arrays`)."""
    return validate_motion_arrays(Path(path), read_npz(path), expected_fps)


def write_motion_npz(path: str | Path, motion: Motion) -> None:
    """Write `motion` as a BEAT2 `smplxflame_30` npz (BEAT2's keys and dtypes, uncompressed),
    atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, **motion.to_npz_dict())


class Beat2Dataset:
    """The sequences of one split of a BEAT2 folder; each item is read from disk only when indexed.

    `speakers` keeps only those speaker numbers (None: all); `max_sequences` keeps the first N in
    the split file's order. Every kept id must have its motion npz (a missing one is a `DataError`,
    since dropping it would silently change results); audio, TextGrid and sem files are optional and
    give `None` when absent. Audio without speech (`data.audio.no_speech`) stays on the record,
    for the models that generate from it, and is named in its `left_out`, so that no metric scores
    against it.
    """

    def __init__(
        self,
        root: str | Path,
        split: str = "test",
        speakers: list[int] | None = None,
        load_audio: bool = True,
        max_sequences: int | None = None,
        audio_check: AudioCheck | None = None,
    ):
        self.root = Path(root)
        self.split = split
        self.with_audio = load_audio
        self.audio_check = audio_check or AudioCheck()
        split_file = self.root / SPLIT_FILE
        ids = _split_ids(split_file, split)
        try:
            speaker_ids = [(sid, speaker_of(sid)) for sid in ids]
        except ValueError as exc:
            raise DataError(split_file, str(exc)) from exc
        if speakers is not None:
            wanted = {int(s) for s in speakers}
            kept = [(sid, spk) for sid, spk in speaker_ids if spk in wanted]
            if not kept:
                present = sorted({spk for _, spk in speaker_ids})
                raise ConfigError(
                    f"{split_file}: split '{split}' has no sequence of speakers {sorted(wanted)}; "
                    f"speakers present: {present}"
                )
            speaker_ids = kept
        if max_sequences is not None:
            if max_sequences < 1:
                raise ConfigError(
                    f"max_sequences must be a positive number or null, got {max_sequences}"
                )
            speaker_ids = speaker_ids[:max_sequences]
        missing = [
            sid for sid, _ in speaker_ids if not sequence_paths(self.root, sid).motion.is_file()
        ]
        if missing:
            raise DataError(
                sequence_paths(self.root, missing[0]).motion,
                f"motion file missing for a sequence of split '{split}' in {SPLIT_FILE} "
                f"({len(missing)} of {len(speaker_ids)} missing)",
            )
        self._ids = [sid for sid, _ in speaker_ids]
        self._speakers = [spk for _, spk in speaker_ids]

    @property
    def ids(self) -> list[str]:
        return list(self._ids)

    def motion_stamp(self) -> str:
        """SHA-256 of each sequence's motion file path, size and modification time (ns): changes
        when a file is replaced or edited, without reading any."""
        digest = hashlib.sha256()
        for sequence_id in self._ids:
            path = sequence_paths(self.root, sequence_id).motion
            stat = path.stat()
            digest.update(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
        return digest.hexdigest()

    def digest(self) -> str:
        """`records_digest` of these sequences, computed once per process for each state of the
        files it reads (`file_state` of each motion and TextGrid file): each run of a process (each
        job of a sweep) checks its auto-trained encoders' training data against it, which would
        read the whole split again every time."""
        files = []
        for sequence_id in self._ids:
            paths = sequence_paths(self.root, sequence_id)
            for path in (paths.motion, paths.textgrid):
                files.append((str(path.resolve()), file_state(path) if path.is_file() else None))
        return _split_digest(_SplitFiles(tuple(files), self))

    def without_audio(self) -> Beat2Dataset:
        """The same sequences, read without their audio (a pass that needs only motion and
        annotations)."""
        view = copy.copy(self)
        view.with_audio = False
        return view

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i: int) -> SequenceRecord:
        index = range(len(self._ids))[i]
        sequence_id = self._ids[index]
        paths = sequence_paths(self.root, sequence_id)
        motion = read_motion_npz(paths.motion)
        audio = load_audio(paths.audio) if self.with_audio and paths.audio.is_file() else None
        problem = None if audio is None else self.audio_check(paths.audio, audio, motion)
        silent = None if audio is None or problem else no_speech(paths.audio, audio)
        if silent:
            log.warning("%s; the metrics of speech skip its sequence", silent)
        reason = problem or silent
        return SequenceRecord(
            id=sequence_id,
            speaker=self._speakers[index],
            motion=motion,
            audio=None if problem else audio,  # speechless audio is kept for models driven by it
            words=read_textgrid_words(paths.textgrid) if paths.textgrid.is_file() else None,
            sem=read_sem(paths.sem) if paths.sem.is_file() else None,
            index=index,
            meta={"split": self.split},
            left_out={"audio": reason} if reason else {},
        )


@dataclass(frozen=True)
class _SplitFiles:
    """The files a split's digest reads, in its sequences' order, with their states:
    `_split_digest`'s key (`dataset`, which reads them, is not part of it)."""

    files: tuple[tuple[str, tuple[int, ...] | None], ...]
    dataset: Beat2Dataset = field(compare=False, hash=False)


@functools.lru_cache(maxsize=16)
def _split_digest(split: _SplitFiles) -> str:
    return content_digest(cast(Sequence[SequenceRecord], split.dataset))


#: what to do with audio whose length disagrees with its motion's (`dataset.audio_mismatch`)
AudioMismatch = Literal["refuse", "skip"]


@dataclass(frozen=True)
class AudioCheck:
    """Audio against its motion: a length gap above `max_gap` seconds (None: not checked) is a
    `DataError` naming the audio file, or with `mismatch="skip"` the audio is left out, so that
    the audio metrics skip the sequence, saying why, rather than score a misaligned one."""

    max_gap: float | None = None
    mismatch: AudioMismatch = "refuse"

    def __call__(self, path: Path, audio: np.ndarray, motion: Motion) -> str | None:
        """None when `audio` goes with `motion`; else, with `mismatch="skip"`, why it is left out
        (naming `path`, logged; the record's `left_out`)."""
        seconds = len(audio) / SAMPLE_RATE
        if self.max_gap is None or abs(seconds - motion.duration) <= self.max_gap:
            return None
        problem = (
            f"audio is {seconds:.2f} s long, its motion {motion.duration:.2f} s: more than "
            f"max_length_gap={self.max_gap} s apart"
        )
        if self.mismatch == "refuse":
            raise DataError(path, f"{problem} (dataset.audio_mismatch=skip leaves the audio out)")
        log.warning(
            "%s: %s; its audio metrics are skipped (dataset.audio_mismatch=skip)", path, problem
        )
        return f"{path}: {problem} (dataset.audio_mismatch=skip)"


def _split_ids(split_file: Path, split: str) -> list[str]:
    """The ids of `split` in BEAT2's ``train_test_split.csv`` (columns ``id,type``), in file
    order."""
    table = read_split_table(split_file)
    types = set(table["type"])
    if split not in types:
        raise ConfigError(
            f"split '{split}' is not in {split_file}; available: {', '.join(sorted(types))}"
        )
    return list(table.loc[table["type"] == split, "id"])


def read_split_table(split_file: Path) -> pd.DataFrame:
    """BEAT2's ``train_test_split.csv`` as a table of stripped ``id`` and ``type`` strings, in file
    order; a missing or malformed file is a `DataError`."""
    if not split_file.is_file():
        raise DataError(
            split_file,
            f"split file not found; a BEAT2 folder holds {SPLIT_FILE}, {MOTION_DIR}/, "
            f"{AUDIO_DIR}/, {TEXTGRID_DIR}/ and {SEM_DIR}/",
        )
    try:
        table = pd.read_csv(split_file, dtype=str, na_filter=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataError(split_file, f"not a readable CSV ({one_line(exc)})") from exc
    table.columns = [str(c).strip() for c in table.columns]
    if not {"id", "type"} <= set(table.columns):
        raise DataError(split_file, f"needs columns 'id,type', has {','.join(table.columns)}")
    return pd.DataFrame({"id": table["id"].str.strip(), "type": table["type"].str.strip()})
