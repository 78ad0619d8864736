"""Property tests of the motion and audio readers (docs/faults.md, "Readers"): on any generated
input — motion arrays (NaN, ±Inf, huge, tiny, constant, zero or one frame, wrong shapes and dtypes)
and WAV files (silence, clipping, DC offset, very short, odd rates and widths, lying headers) — a
reader returns data that keeps its contract or raises one line of `DataError` naming the file;
never anything else (another exception, a warning, NaN, a value past a bound)."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import soundfile as sf
from hypothesis import given, settings
from hypothesis import strategies as st

from gesturebench.data.audio import MAX_PEAK, load_audio, no_speech
from gesturebench.data.motion import BOUNDS, magnitudes, validate_motion_arrays
from gesturebench.data.records import N_EXPRESSIONS, POSE_DIM, Motion
from gesturebench.runtime.errors import DataError
from tests.support.fuzz import BASE, tiers

PATH = Path("/data/smplxflame_30/1_wayne_0_1_1.npz")

# ---------------------------------------------------------------------------------- motion

#: Scales of a generated array (times a unit normal draw, or as a constant): plausible ones
#: first, drawn more often.
SCALES = (0.0, 1e-30, 1e-3, 1.0, 0.0, 1e-30, 1e-3, 1.0, 3.0, 50.0, 1e3, 1e30, 1e300)
SPECIALS = (np.nan, np.inf, -np.inf, 1e30, -3e38, 5e-324)
#: Numeric dtypes, then the dtypes of no numbers.
NUMBERS = ("float64", "float32", "float16", "int64", "uint8")
NOT_NUMBERS = ("bool", "complex64", "U3")


@st.composite
def arrays(draw, shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    """An array of `shape` and `dtype`: a constant or scaled normal noise, perhaps one special
    value."""
    scale = draw(st.sampled_from(SCALES))
    seed = draw(st.integers(0, 2**16))
    values = np.random.default_rng(seed).standard_normal(shape) * scale
    if draw(st.booleans()):
        values = np.full(shape, scale * (1 if seed % 2 else -1))
    if values.size and draw(st.integers(0, 5)) == 0:
        values.flat[draw(st.integers(0, values.size - 1))] = draw(st.sampled_from(SPECIALS))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the casts of an input a model might write
        return values.astype(dtype)


@st.composite
def motion_files(draw) -> dict[str, np.ndarray]:
    """The arrays of a motion npz, the optional keys present or not; perhaps one key of a wrong
    shape or dtype."""
    n = draw(st.sampled_from([0, 1, 2, 5]))
    shapes = {
        "poses": [(n, POSE_DIM), (n, POSE_DIM - 1), (n, 55, 3), (POSE_DIM,), ()],
        "trans": [(n, 3), (n + 1, 3), (n,), (n, 3, 1)],
        "betas": [(300,), (0,), (1, 300), ()],
        "expressions": [(n, N_EXPRESSIONS), (n, 101), (n + 1, 100), (n, 50)],
    }
    wrong_shape, wrong_dtype = (draw(st.sampled_from([None] * 4 + [*shapes])) for _ in "ab")
    out = {}
    for key, (right, *wrong) in shapes.items():
        if key == "expressions" and draw(st.booleans()):
            continue  # a neutral face
        shape = draw(st.sampled_from(wrong)) if key == wrong_shape else right
        dtype = draw(st.sampled_from(NOT_NUMBERS if key == wrong_dtype else NUMBERS))
        out[key] = draw(arrays(shape, dtype))
    if draw(st.booleans()):
        out["mocap_frame_rate"] = draw(
            st.sampled_from([np.array(30), np.array(30.0), np.array(25), np.array(np.nan),
                             np.array([30, 30]), np.array("30")])
        )  # fmt: skip
    return out


def refused_in_one_line(err: DataError, path: Path) -> bool:
    return str(err).startswith(f"{path}: ") and "\n" not in str(err)


def motion_property(arrays):
    """A motion file's arrays give a motion that keeps the contract, or one line naming it."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            motion = validate_motion_arrays(PATH, arrays)
        except DataError as err:
            assert refused_in_one_line(err, PATH), err
            return
    assert isinstance(motion, Motion) and motion.n_frames >= 1
    assert motion.poses.shape == (motion.n_frames, POSE_DIM)
    assert motion.trans.shape == (motion.n_frames, 3)
    assert motion.expressions.shape == (motion.n_frames, N_EXPRESSIONS)
    for key, (bound, *_) in BOUNDS.items():
        values = getattr(motion, key)
        rows = values[:, None] if key == "betas" else values
        assert np.isfinite(values).all() and magnitudes(key, rows).max() <= bound, key


(
    test_motion_is_valid_or_one_line_naming_the_file,
    test_motion_is_valid_or_one_line_naming_the_file_many,
) = tiers(motion_files(), fast=40, slow=2000)(motion_property)


# ---------------------------------------------------------------------------------- audio

RATES = (1, 4000, 7999, 8000, 11025, 16000, 22050, 44100, 96000, 384000, 384001, 1_000_000)
SUBTYPES = ("PCM_U8", "PCM_16", "PCM_24", "PCM_32", "FLOAT", "DOUBLE")
CONTENT = ("silence", "speech-like", "clipping", "dc offset", "huge", "nan", "inf")
#: (byte offset in a plain 44-byte WAV header, byte count): the fields a lying header changes.
FIELDS = {
    "riff size": (4, 4),
    "format tag": (20, 2),
    "channels": (22, 2),
    "rate": (24, 4),
    "byte rate": (28, 4),
    "block align": (32, 2),
    "bits": (34, 2),
    "data size": (40, 4),
}


def samples(content: str, frames: int, channels: int, seed: int) -> np.ndarray:
    """(frames, channels) float64 samples of `content`."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((frames, channels))
    return {
        "silence": np.zeros((frames, channels)),
        "speech-like": 0.1 * noise * (rng.random((frames, 1)) > 0.5),
        "clipping": np.clip(3 * noise, -1, 1),
        "dc offset": 0.5 + 1e-6 * noise,
        "huge": 1e30 * noise,
        "nan": np.where(noise > 2, np.nan, 0.1 * noise),
        "inf": np.where(noise > 2, np.inf, 0.1 * noise),
    }[content]


@st.composite
def wav_files(draw) -> bytes:
    """The bytes of a WAV file of drawn rate, width, channels, length and content, its header
    perhaps lying about one field (or the file cut short)."""
    channels = draw(st.sampled_from([1, 2, 3]))
    frames = draw(st.sampled_from([0, 1, 2, 100, 4000]))
    data = samples(draw(st.sampled_from(CONTENT)), frames, channels, draw(st.integers(0, 99)))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "a.wav"
        sf.write(
            path,
            data,
            draw(st.sampled_from(RATES)),
            subtype=draw(st.sampled_from(SUBTYPES)),
            format="WAV",
        )
        raw = bytearray(path.read_bytes())
    lie = draw(st.sampled_from([None, "cut", *FIELDS]))
    if lie == "cut":
        return bytes(raw[: draw(st.integers(0, len(raw)))])
    if lie is not None and raw[36:40] == b"data":  # a plain header (no fact/extensible chunk)
        at, size = FIELDS[lie]
        value = draw(st.sampled_from([0, 1, 7, 2 ** (8 * size) - 1]))
        raw[at : at + size] = value.to_bytes(size, "little")
    return bytes(raw)


def audio_property(data):
    """A speech file's bytes give finite mono audio, or one line naming it."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "2_scott_0_1_1.wav"
        path.write_bytes(data)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                audio = load_audio(path)
            except DataError as err:
                assert refused_in_one_line(err, path), err
                return
            silent = no_speech(path, audio)
    assert audio.dtype == np.float32 and audio.ndim == 1 and audio.size >= 1
    assert np.isfinite(audio).all() and np.abs(audio).max() <= 2 * MAX_PEAK
    assert silent is None or (silent.startswith(f"{path}: no speech") and "\n" not in silent)


(
    test_audio_is_valid_or_one_line_naming_the_file,
    test_audio_is_valid_or_one_line_naming_the_file_many,
) = tiers(wav_files(), fast=40, slow=1000)(audio_property)


@settings(BASE, max_examples=20)
@given(st.sampled_from(["silence", "dc offset"]), st.sampled_from(SUBTYPES[1:]))
def test_silence_and_a_constant_offset_hold_no_speech(content, subtype):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "a.wav"
        sf.write(path, samples(content, 16000, 1, 0), 16000, subtype=subtype)
        assert no_speech(path, load_audio(path)) is not None
