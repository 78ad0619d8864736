"""In-memory records shared by every part of the harness: motion, words, semantic intervals,
sequences."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from gesturebench.data.gesture_classes import sem_label

FPS = 30
SAMPLE_RATE = 16000
N_JOINTS = 55
POSE_DIM = 3 * N_JOINTS
N_EXPRESSIONS = 100


@dataclass(frozen=True)
class Motion:
    """SMPL-X parameters in BEAT2's format: axis-angle `poses` (T,165), `trans` (T,3), `betas`,
    `expressions` (T,100)."""

    poses: np.ndarray
    trans: np.ndarray
    betas: np.ndarray
    expressions: np.ndarray
    fps: int = FPS

    def __post_init__(self):
        object.__setattr__(self, "poses", np.asarray(self.poses, dtype=np.float32))
        object.__setattr__(self, "trans", np.asarray(self.trans, dtype=np.float32))
        object.__setattr__(self, "betas", np.asarray(self.betas, dtype=np.float32))
        object.__setattr__(self, "expressions", np.asarray(self.expressions, dtype=np.float32))

    @property
    def n_frames(self) -> int:
        return int(self.poses.shape[0])

    @property
    def duration(self) -> float:
        return self.n_frames / self.fps

    def frames(self, start: int, stop: int) -> Motion:
        """The frames [start, stop)."""
        return replace(
            self,
            poses=self.poses[start:stop],
            trans=self.trans[start:stop],
            expressions=self.expressions[start:stop],
        )

    def content_hash(self) -> str:
        """SHA-256 over the parameter arrays: the key of every motion cache."""
        h = hashlib.sha256()
        for a in (self.poses, self.trans, self.betas, self.expressions):
            h.update(np.ascontiguousarray(a).tobytes())
        h.update(str(self.fps).encode())
        return h.hexdigest()

    def to_npz_dict(self) -> dict:
        """The arrays of a BEAT2 `smplxflame_30/*.npz` file, with BEAT2's dtypes."""
        return {
            "betas": self.betas.astype(np.float32),
            "poses": self.poses.astype(np.float32),
            "expressions": self.expressions.astype(np.float64),
            "trans": self.trans.astype(np.float64),
            "model": np.array("smplx2020"),
            "gender": np.array("neutral"),
            "mocap_frame_rate": np.array(self.fps, dtype=np.int32),
        }


@dataclass(frozen=True)
class Word:
    """One transcript word with its start and end time in seconds."""

    word: str
    start: float
    end: float


@dataclass(frozen=True)
class SemInterval:
    """One row of a BEAT2 `sem` file: a semantically relevant gesture interval.

    `name` is BEAT2's coarse category column (e.g. ``deictic``), `score` its relevance weight in
    [0,1], `keywords` the words spoken. `label` is the true gesture class where a generator knows it
    (mini-BEAT2). `span` is the interval's [start, end] in its whole sequence once it has been cut
    to a study window (None: `start` and `end` are those); annotation event ids are made from it,
    so they do not change under windowing.
    """

    name: str
    start: float
    end: float
    score: float
    keywords: str = ""
    label: str | None = None
    span: tuple[float, float] | None = None

    @property
    def whole_span(self) -> tuple[float, float]:
        """[start, end] of the interval in its whole sequence."""
        return self.span or (self.start, self.end)

    @property
    def cut(self) -> bool:
        """Whether a window's edge cut part of the interval off."""
        a, b = self.whole_span
        return self.end - self.start < b - a - 1e-6

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def gesture_class(self) -> str | None:
        """The interval's gesture class: its `label`, else the class its name encodes."""
        return self.label or sem_label(self.name)


@dataclass
class SequenceRecord:
    """Everything the harness knows about one sequence; optional parts are `None`, never silently
    empty. `left_out` says why an optional part is not scored against though its file exists
    (input name → the problem, naming the file), so that the metrics needing it skip the sequence
    and say so: the part is `None`, or kept only for the models that generate from it (audio
    without speech)."""

    id: str
    speaker: int
    motion: Motion
    audio: np.ndarray | None = None
    words: list[Word] | None = None
    sem: list[SemInterval] | None = None
    index: int = -1
    meta: dict = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)

    @property
    def n_frames(self) -> int:
        return self.motion.n_frames

    @property
    def speech_seconds(self) -> float | None:
        """The audio's length in seconds (None without audio)."""
        return None if self.audio is None else len(self.audio) / SAMPLE_RATE


def records_digest(records: Sequence[SequenceRecord]) -> str:
    """SHA-256 of the content of `records` that what is learned or computed from them depends on
    (an encoder's training, BC's speed statistics), in order: each record's id, speaker, frame
    rate, motion arrays (dtype, shape and bytes) and words (start, end, text). A dataset that
    knows it without reading its records again (`Beat2Dataset.digest`) is asked for it."""
    known = getattr(records, "digest", None)
    return known() if callable(known) else content_digest(records)


def content_digest(records: Sequence[SequenceRecord]) -> str:
    """`records_digest`, from the records themselves."""
    digest = hashlib.sha256()
    for record in records:
        motion = record.motion
        digest.update(json.dumps([record.id, record.speaker, motion.fps]).encode())
        for array in (motion.poses, motion.trans, motion.betas, motion.expressions):
            a = np.ascontiguousarray(array)
            digest.update(f"{a.dtype.str}{a.shape}".encode())
            digest.update(a.tobytes())
        words = [[w.start, w.end, w.word] for w in record.words or ()]
        digest.update(json.dumps(words).encode())
    return digest.hexdigest()
