"""Mini-BEAT2 on disk: its sizes, the sequences of each, and writing them in BEAT2's layout.

Every sequence depends only on (seed, speaker, take, length): its draws come from
``numpy.random.default_rng`` keyed by them, so the same seed gives byte-identical arrays whichever
other sequences are generated.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from gesturebench.data.annotations_io import write_sem, write_textgrid_words
from gesturebench.data.audio import write_wav
from gesturebench.data.beat2 import SPLIT_FILE, sequence_paths, write_motion_npz
from gesturebench.data.records import FPS, Motion
from gesturebench.runtime.errors import DataError
from gesturebench.runtime.stages import progress
from gesturebench.synthesis.mini.motion import synthesize_motion
from gesturebench.synthesis.mini.plan import SequencePlan, plan_sequence
from gesturebench.synthesis.mini.speakers import DEFAULT_SPEAKERS, SPEAKER_NAMES, speaker_style
from gesturebench.synthesis.mini.speech import synthesize_speech

# Part of the `.complete` marker: a folder written by another version is regenerated. 2: the legs
# are solved on the procedural body's rest skeleton.
GENERATOR_VERSION = 2
MARKER = ".complete"
#: the sizes of mini-BEAT2 (`dataset.size`)
MiniSize = Literal["default", "standard"]


@dataclass(frozen=True)
class SequenceSpec:
    """One sequence of a mini-BEAT2 size: its id, speaker, split and length."""

    id: str
    speaker: int
    take: int
    split: str
    n_frames: int


@dataclass(frozen=True)
class GeneratedSequence:
    """Everything generated for one sequence, before it is written to disk."""

    spec: SequenceSpec
    plan: SequencePlan
    motion: Motion
    audio: np.ndarray


def sequence_specs(seed: int, size: MiniSize) -> list[SequenceSpec]:
    """The sequences of a mini-BEAT2 `size`, in split-file order."""
    rng = np.random.default_rng([seed, 2])
    if size == "default":
        plan = [
            (spk, split) for spk in DEFAULT_SPEAKERS for split in ("train",) * 4 + ("val", "test")
        ]
        lengths = [
            rng.uniform(30, 36) if split == "test" else rng.uniform(30, 60) for _, split in plan
        ]
    else:
        speakers = sorted(SPEAKER_NAMES)
        test = [(speakers[i % len(speakers)], "test") for i in range(265)]
        plan = [(spk, "train") for spk in speakers] + [(spk, "val") for spk in speakers[:5]] + test
        test_lengths = rng.lognormal(np.log(24.0), 0.55, len(test))
        test_lengths = np.clip(test_lengths * 7200.0 / test_lengths.sum(), 10.0, 75.0)
        lengths = list(rng.uniform(30, 60, len(plan) - len(test))) + list(test_lengths)
    takes: dict[int, int] = {}
    specs = []
    for (spk, split), seconds in zip(plan, lengths, strict=True):
        take = takes[spk] = takes.get(spk, 0) + 1
        # A multiple of 3 frames = a whole number of 16 kHz samples.
        n_frames = 3 * round(float(seconds) * FPS / 3)
        specs.append(
            SequenceSpec(f"{spk}_{SPEAKER_NAMES[spk]}_0_{take}_{take}", spk, take, split, n_frames)
        )
    return specs


def generate_sequence(seed: int, spec: SequenceSpec) -> GeneratedSequence:
    """Plan, audio and motion of one sequence; depends only on (seed, speaker, take, length)."""
    style = speaker_style(seed, spec.speaker)
    rng = np.random.default_rng([seed, 1, spec.speaker, spec.take])
    plan = plan_sequence(rng, style, spec.n_frames)
    audio = synthesize_speech(rng, style, plan)
    return GeneratedSequence(spec, plan, synthesize_motion(rng, style, plan, audio), audio)


def _read_marker(root: Path) -> dict | None:
    """The `.complete` marker of a mini-BEAT2 folder; {} when unreadable; None when absent."""
    path = root / MARKER
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


@contextmanager
def _partial_folder(root: Path, marker: dict, specs: list[SequenceSpec]) -> Iterator[Path]:
    """A hidden sibling folder of `root` to write the sequences into; when the block ends without
    error, the split file and `marker` are written into it and it is moved onto `root` (replacing
    an older mini-BEAT2, keeping a concurrent identical one); it is removed in any case."""
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = root.with_name(f".{root.name}.partial-{uuid.uuid4().hex[:8]}")
    try:
        yield tmp
        pd.DataFrame({"id": [s.id for s in specs], "type": [s.split for s in specs]}).to_csv(
            tmp / SPLIT_FILE, index=False
        )
        (tmp / MARKER).write_text(json.dumps(marker))
        if _read_marker(root) not in (None, marker):
            old = root.with_name(f".{root.name}.old-{uuid.uuid4().hex[:8]}")
            os.replace(root, old)
            shutil.rmtree(old)
        try:
            os.replace(tmp, root)  # atomic onto a missing or empty folder
        except OSError as exc:
            if _read_marker(root) != marker:
                raise DataError(
                    root, f"could not move the generated mini-BEAT2 into place ({exc})"
                ) from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def generate_mini_beat2(root: str | Path, seed: int = 0, size: MiniSize = "default") -> Path:
    """Write mini-BEAT2 (`size` "default" or "standard") under `root` in BEAT2's layout and return
    `root`.

    Idempotent: a folder whose `.complete` marker names this generator version, seed and size is
    left as is. The data are written sequence by sequence into a hidden sibling folder whose marker
    is written last, then renamed onto `root`, so a crash never leaves a half dataset that looks
    complete. An older mini-BEAT2 (other version, seed or size) is replaced; a non-empty folder
    without a marker is refused (`DataError`), never overwritten.
    """
    root = Path(root).expanduser()
    marker = {
        "generator": "gesturebench.synthesis.mini",
        "version": GENERATOR_VERSION,
        "seed": int(seed),
        "size": size,
    }
    if _read_marker(root) == marker:
        return root
    specs = sequence_specs(int(seed), size)
    if root.is_dir() and _read_marker(root) is None and any(root.iterdir()):
        raise DataError(
            root,
            "exists, is not empty and is not a mini-BEAT2 folder (no .complete marker); "
            "refusing to overwrite it — choose another dataset root",
        )
    if root.exists() and not root.is_dir():
        raise DataError(root, "exists and is not a folder")
    with _partial_folder(root, marker, specs) as tmp:
        _write_sequences(
            tmp,
            int(seed),
            progress(
                specs,
                f"generating mini-BEAT2 ({size}, seed {seed}, {len(specs)} sequences)",
                "the built-in synthetic dataset",
                kept=str(root),
                label="mini-BEAT2",
            ),
        )
    return root


def _write_sequences(folder: Path, seed: int, specs: Iterable[SequenceSpec]) -> None:
    """Generate and write every sequence of `specs` in BEAT2's layout under `folder`."""
    for spec in specs:
        seq = generate_sequence(seed, spec)
        paths = sequence_paths(folder, spec.id)
        write_motion_npz(paths.motion, seq.motion)
        write_wav(paths.audio, seq.audio)
        write_textgrid_words(paths.textgrid, seq.plan.words, seq.plan.duration)
        write_sem(paths.sem, seq.plan.sem)


def ensure_mini_beat2(root: str | Path, seed: int = 0, size: MiniSize = "default") -> Path:
    """The mini-BEAT2 folder at `root`, generated first if it is missing or from another seed, size
    or version."""
    return generate_mini_beat2(root, seed, size)
