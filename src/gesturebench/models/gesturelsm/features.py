"""GestureLSM's inputs as its data loader builds them: the two audio channels (amplitude envelope
and onsets) and a word id per motion frame from BEAT2's ``vocab.pkl``.

The quirk, reproduced because the released model was trained on it: upstream marks onsets found
by ``librosa.onset.onset_detect(units="frames")`` (hop 512) at those *frame* numbers used as
*sample* indices, so all onset marks sit in the first 1/512 of the recording and the onset
channel carries almost no timing."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gesturebench.data.records import SAMPLE_RATE, Word
from gesturebench.runtime.errors import DataError

ENVELOPE_WINDOW = 1024
PAD, UNK = 0, 3


def amplitude_envelope(wave: np.ndarray, window: int = ENVELOPE_WINDOW) -> np.ndarray:
    """Max |sample| over the next `window` samples; the last `window` − 1 positions repeat the
    last full window's value."""
    peaks = np.lib.stride_tricks.sliding_window_view(np.abs(wave), window).max(axis=1)
    return np.pad(peaks, (0, window - 1), mode="edge")


def onset_amplitude(wave: np.ndarray, sr: int = SAMPLE_RATE) -> np.ndarray:
    """16 kHz mono `wave` (S,) → (S, 2) float: envelope, and 1 at each onset *frame* index (the
    quirk in the module docstring)."""
    from gesturebench.runtime.librosa_lock import librosa

    onsets = np.zeros(len(wave))
    onsets[librosa().onset.onset_detect(y=wave.astype(np.float32), sr=sr, units="frames")] = 1.0
    return np.stack([amplitude_envelope(wave), onsets], axis=1)


class _VocabUnpickler(pickle.Unpickler):
    """Reads BEAT2's ``vocab.pkl`` (a pickled ``Vocab`` object) without importing its code: the
    object comes back as a plain attribute holder; only numpy's array globals are allowed."""

    def find_class(self, module: str, name: str):
        if name == "Vocab":
            return type("Vocab", (), {})
        if module.split(".")[0] == "numpy" and name in {
            "_reconstruct",
            "ndarray",
            "dtype",
            "scalar",
        }:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"unexpected object {module}.{name}")


@dataclass(frozen=True)
class Vocab:
    """The word → row table and the (words, 300) fastText rows the generator's word embedding
    holds."""

    word2index: dict[str, int]
    embeddings: np.ndarray

    @classmethod
    def load(cls, path: str | Path) -> Vocab:
        path = Path(path)
        if not path.is_file():
            raise DataError(path, "vocab.pkl not found (it is in BEAT2's weights/ folder)")
        try:
            with open(path, "rb") as fh:
                raw = _VocabUnpickler(fh).load()
            return cls(dict(raw.word2index), np.asarray(raw.word_embedding_weights))
        except (pickle.UnpicklingError, AttributeError, EOFError, TypeError, ValueError) as exc:
            raise DataError(path, f"not BEAT2's vocab.pkl format ({exc})") from exc

    def save(self, path: str | Path) -> None:
        """Write the table in ``vocab.pkl``'s layout: a ``dataloaders.build_vocab.Vocab`` object
        (written by hand, without that class) whose state is this table (for data without one)."""
        state = {"word2index": self.word2index, "word_embedding_weights": self.embeddings}
        body = pickle.dumps(state, protocol=3)[2:-1]  # without its PROTO header and STOP
        header = b"\x80\x03cdataloaders.build_vocab\nVocab\n)\x81"
        Path(path).write_bytes(header + body + b"b.")


def word_ids(words: Sequence[Word], frames: int, vocab: Vocab, fps: int = 30) -> np.ndarray:
    """(frames,) ids: at t = i / fps the first TextGrid interval holding t (ends included) gives
    its word's row, unknown words and silences `UNK`. `words` omit silent intervals, so a frame on
    a word's start whose preceding interval was silence is `UNK`, as upstream (where that
    silence comes first), unless a word ends there."""
    ids = np.full(frames, UNK, dtype=np.int64)
    ends = {w.end for w in words}
    for i in range(frames):
        t = i / fps
        word = next((w for w in words if w.start <= t <= w.end), None)
        if word is None or (word.start == t and t > 0 and t not in ends):
            continue
        ids[i] = vocab.word2index.get(word.word, UNK)
    return ids
