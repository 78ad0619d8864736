"""Whole runs on inputs nobody listed: `hypothesis` draws a hostile model output (NaN, ±Inf, huge,
tiny, constant, too few frames, wrong shapes and dtypes, in poses, translation or expressions) and
a hostile speech file (silence, clipping, DC offset, very short, other rates and widths, a lying
header) for one of two test sequences, and each run must end honestly (`tests.support.outcomes`):
refused in one line, or results whose every value is finite and whose unscored sequences are
absent with a reason. A run finished earlier stays intact whatever the next one met.

The fast tier tries a few cases per test; the slow tier more (`FUZZ_RUNS`): a whole run costs
seconds, so the many inputs are tried at the readers, where each costs milliseconds
(tests/test_readers_fuzz.py: thousands of motion files and WAVs)."""

from __future__ import annotations

import io
import json
import shutil
import wave
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from hypothesis import strategies as st

import tests.launch
from tests.support.fuzz import tiers
from tests.support.outcomes import honest

#: cases per test: the fast tier's, and the slow tier's
FAST_RUNS, FUZZ_RUNS = 1, 15
#: the metrics every case runs: the joint metrics and BC (the speech side)
METRICS = (
    "metrics=fast",
    "+metrics.bc._target_=gesturebench.metrics.bc.BeatConsistency",
    "+metrics.bc.name=bc",
    "logger=none",
    "task.render_clips=0",
)

# ------------------------------------------------------------------ motion a model may write

MotionEdit = Callable[[np.ndarray], np.ndarray]


def _scaled(factor: float) -> MotionEdit:
    return lambda a: a * factor


def _at_frame(value: float) -> MotionEdit:
    def edit(a: np.ndarray) -> np.ndarray:
        a = a.copy()
        a[len(a) // 2] = value
        return a

    return edit


MOTION_EDITS: dict[str, MotionEdit] = {
    "nan": _at_frame(np.nan),
    "inf": _at_frame(np.inf),
    "-inf": _at_frame(-np.inf),
    "huge": _scaled(1e30),
    "huge frame": _at_frame(3e18),
    "tiny": _scaled(1e-30),
    "constant": lambda a: np.broadcast_to(a[:1], a.shape).copy(),
    "zeros": np.zeros_like,
    "one frame": lambda a: a[:1],
    "no frame": lambda a: a[:0],
    "a column short": lambda a: a[:, :-1],
    "transposed": lambda a: a.T,
    "3-D": lambda a: a[None],
    "int": lambda a: a.astype(np.int64),
    "complex": lambda a: a.astype(np.complex64),
    "strings": lambda a: a.astype(str),
    "float16": lambda a: a.astype(np.float16),
}
#: edits that leave a valid model output: it must be scored, not refused
VALID_MOTION = {"tiny", "constant", "zeros", "float16"}
motion_edits = st.tuples(
    st.sampled_from(["poses", "trans", "expressions"]), st.sampled_from(sorted(MOTION_EDITS))
)

# ------------------------------------------------------------------ speech a dataset may hold

AudioEdit = Callable[[np.ndarray, Path], None]


def _written(transform: Callable[[np.ndarray], np.ndarray], rate: int = 16000, subtype=None):
    def edit(audio: np.ndarray, path: Path) -> None:
        sf.write(path, transform(audio), rate, subtype=subtype, format="WAV")

    return edit


def _lying_header(audio: np.ndarray, path: Path) -> None:
    buffer = io.BytesIO()
    sf.write(buffer, audio, 16000, format="WAV", subtype="PCM_16")
    raw = bytearray(buffer.getvalue())
    at = raw.index(b"data") + 4
    raw[at : at + 4] = (len(raw) * 4).to_bytes(4, "little")
    path.write_bytes(bytes(raw))


def _eight_bit(audio: np.ndarray, path: Path) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(16000)
        w.writeframes(((np.clip(audio, -1, 1) * 127) + 128).astype(np.uint8).tobytes())


AUDIO_EDITS: dict[str, AudioEdit] = {
    "unchanged": lambda audio, path: None,
    "silence": _written(np.zeros_like),
    "near silence": _written(lambda a: a * 1e-6),
    "clipped": _written(lambda a: np.clip(a * 100, -1, 1)),
    "dc offset": _written(lambda a: np.clip(a + 0.5, -1, 1)),
    "very short": _written(lambda a: a[:400]),
    "8 kHz": _written(lambda a: a[::2], rate=8000),
    "44.1 kHz header": _written(lambda a: a, rate=44100),
    "24-bit": _written(lambda a: a, subtype="PCM_24"),
    "8-bit": _eight_bit,
    "lying header": _lying_header,
    "stereo": _written(lambda a: np.stack([a, -a], axis=1)),
}

#: edits that leave valid speech (silence included: BC skips it, the run goes on): scored
VALID_SPEECH = {
    "unchanged",
    "silence",
    "near silence",
    "clipped",
    "dc offset",
    "8 kHz",
    "24-bit",
    "8-bit",
    "stereo",
}

# ------------------------------------------------------------------ the folders a case runs on


@pytest.fixture(scope="module")
def fuzz_dataset(mini_beat2, tmp_path_factory) -> tuple[Path, list[str]]:
    """A view of mini-BEAT2 (its files linked, not copied) whose test split is two sequences, and
    their ids: a case replaces the first one's speech link by a file."""
    root = tmp_path_factory.mktemp("fuzz") / "mini_fuzz"
    for folder in sorted(p for p in mini_beat2.iterdir() if p.is_dir()):
        (root / folder.name).mkdir(parents=True)
        for f in folder.iterdir():
            (root / folder.name / f.name).symlink_to(f)
    rows = (mini_beat2 / "train_test_split.csv").read_text().splitlines()
    tests = [r.split(",")[0] for r in rows[1:] if r.split(",")[1].strip() == "test"][:2]
    kept = [r for r in rows[1:] if r.split(",")[1].strip() != "test" or r.split(",")[0] in tests]
    (root / "train_test_split.csv").write_text("\n".join([rows[0], *kept]) + "\n")
    return root, tests


def _with_speech(root: Path, sequence: str, edit: str) -> None:
    """The speech file of `sequence` in `root` (a view of mini-BEAT2, `fuzz_dataset`): a link to
    the original, or the original edited."""
    wav = root / "wave16k" / f"{sequence}.wav"
    original = Path(tests.launch.SANDBOX.data) / "mini_beat2_default" / "wave16k" / wav.name
    wav.unlink()
    if edit == "unchanged":
        wav.symlink_to(original)
        return
    audio, _ = sf.read(original, dtype="float32")
    AUDIO_EDITS[edit](audio, wav)


def _model_folder(root: Path, ids: list[str], out: Path, field: str, edit: str) -> Path:
    """A `model=precomputed` folder: the reference files of `ids`, the first one's `field`
    edited."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for i, sid in enumerate(ids):
        with np.load(root / "smplxflame_30" / f"{sid}.npz") as npz:
            fields = {k: npz[k] for k in npz.files}
        if i == 0:
            fields[field] = MOTION_EDITS[edit](fields[field])
        np.savez(out / f"{sid}.npz", **fields)
    return out


def _case(
    in_process, capsys, root: Path, work: Path, *overrides: str, valid: bool = False
) -> str | None:
    """One run on `root` into a fresh folder of `work`; why it was not honest (or, for a `valid`
    input, not scored), or None."""
    run = work / f"run-{len(list(work.glob('run-*')))}"
    capsys.readouterr()
    code: int | str | None = 0
    try:
        in_process(
            *METRICS,
            f"dataset.root={root}",
            "dataset.generate=false",
            "dataset.name=mini_fuzz",
            f"hydra.run.dir={run}",
            *overrides,
            encoders=False,  # the fast metrics and BC use no learned encoder
        )
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err
    if valid and code not in (0, None):
        return f"valid input refused: exit {code}, {err.strip()[-300:]}"
    return honest(code, err, run)


def _fuzz_motion(in_process, capsys, fuzz_dataset, tmp_path, edit: tuple[str, str]) -> None:
    """A model output with one field edited ends honestly, and is scored where still valid."""
    root, ids = fuzz_dataset
    _with_speech(root, ids[0], "unchanged")
    model = _model_folder(root, ids, tmp_path / "motion", *edit)
    args = ("model=precomputed", f"model.dir={model}")
    why = _case(in_process, capsys, root, tmp_path, *args, valid=edit[1] in VALID_MOTION)
    assert why is None, (edit, why)


def _fuzz_speech(in_process, capsys, fuzz_dataset, tmp_path, edit: str) -> None:
    """A speech file edited ends honestly, and is scored where still valid."""
    root, ids = fuzz_dataset
    _with_speech(root, ids[0], edit)
    try:
        why = _case(
            in_process, capsys, root, tmp_path, "model=ground_truth", valid=edit in VALID_SPEECH
        )
    finally:
        _with_speech(root, ids[0], "unchanged")
    assert why is None, (edit, why)


(
    test_hostile_model_output_ends_honestly,
    test_hostile_model_output_ends_honestly_many,
) = tiers(edit=motion_edits, fast=FAST_RUNS, slow=FUZZ_RUNS)(_fuzz_motion)
(
    test_hostile_speech_ends_honestly,
    test_hostile_speech_ends_honestly_many,
) = tiers(edit=st.sampled_from(sorted(AUDIO_EDITS)), fast=FAST_RUNS, slow=len(AUDIO_EDITS))(
    _fuzz_speech
)


def test_an_earlier_run_stays_intact(in_process, capsys, fuzz_dataset, tmp_path):
    """A finished run's files are byte-identical after a hostile run beside it was refused."""
    root, ids = fuzz_dataset
    _with_speech(root, ids[0], "unchanged")
    assert _case(in_process, capsys, root, tmp_path, "model=ground_truth") is None
    first = tmp_path / "run-0"
    before = {p.name: p.read_bytes() for p in first.iterdir() if p.is_file()}
    model = _model_folder(root, ids, tmp_path / "motion", "poses", "nan")
    assert (
        _case(in_process, capsys, root, tmp_path, "model=precomputed", f"model.dir={model}") is None
    )
    after = {p.name: p.read_bytes() for p in first.iterdir() if p.is_file()}
    assert after == before
    assert json.loads(before["results.json"])["complete"]
