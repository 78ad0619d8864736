"""BEAT2 reader: motion npz validation, audio conversion, TextGrid/sem round trips and the
split-driven dataset.

Every test works on copies under tmp_path, built from the real BEAT2 sample (skipped where it is
absent).
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from praatio import textgrid
from praatio.data_classes.interval_tier import IntervalTier

from gesturebench.data import audio as audio_module
from gesturebench.data.annotations_io import (
    atomic_path,
    read_sem,
    read_textgrid_words,
    write_sem,
    write_textgrid_words,
)
from gesturebench.data.audio import load_audio, write_wav
from gesturebench.data.beat2 import (
    MOTION_DIR,
    SPLIT_FILE,
    Beat2Dataset,
    read_motion_npz,
    sequence_paths,
    speaker_of,
    write_motion_npz,
)
from gesturebench.data.gesture_classes import sem_label
from gesturebench.data.records import Motion, SemInterval, Word, records_digest
from gesturebench.run.datamodule import Beat2Source
from gesturebench.runtime.errors import ConfigError, DataError

SAMPLE_ID = "2_scott_0_1_1"
MP3_WAV = "2_scott_0_103_103_28s.wav"


def data_error(fn, *args, **kwargs) -> str:
    """Call `fn`, expect a DataError, check it is one line, and return its message."""
    with pytest.raises(DataError) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message, message
    return message


@pytest.fixture()
def sample_arrays(beat2_sample: Path) -> dict:
    with np.load(beat2_sample / f"{SAMPLE_ID}.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def save_variant(tmp_path: Path, arrays: dict, name: str = "variant.npz", **changes) -> Path:
    """Write the sample's arrays with some keys replaced (value None: key removed)."""
    out = dict(arrays)
    for key, value in changes.items():
        if value is None:
            out.pop(key)
        else:
            out[key] = value
    path = tmp_path / name
    np.savez(path, **out)
    return path


# ---------------------------------------------------------------- motion npz


def test_reads_real_sample(beat2_sample, sample_arrays):
    motion = read_motion_npz(beat2_sample / f"{SAMPLE_ID}.npz")
    assert motion.n_frames == 1906 and motion.fps == 30
    assert motion.betas.shape == (300,) and motion.poses.shape == (1906, 165)
    assert motion.trans.shape == (1906, 3) and motion.expressions.shape == (1906, 100)
    np.testing.assert_array_equal(motion.poses, sample_arrays["poses"])
    np.testing.assert_allclose(motion.trans, sample_arrays["trans"], rtol=1e-6)
    np.testing.assert_allclose(motion.expressions, sample_arrays["expressions"], rtol=1e-6)


def test_a_split_s_digest_is_read_once_per_state_of_its_files(tmp_path, beat2_sample):
    """`Beat2Dataset.digest` is the records' own digest; it reads the records once while their
    motion and TextGrid files are unchanged (each run of a process asks), again after either is
    rewritten, even to the same size and modification time."""
    root = tmp_path / "beat2"
    (root / MOTION_DIR).mkdir(parents=True)
    for take in (1, 2):
        shutil.copy(
            beat2_sample / "2_scott_0_1_1.npz", root / MOTION_DIR / f"2_scott_0_{take}_{take}.npz"
        )
    (root / SPLIT_FILE).write_text("id,type\n2_scott_0_1_1,train\n2_scott_0_2_2,train\n")
    grid = sequence_paths(root, "2_scott_0_2_2").textgrid
    grid.parent.mkdir()
    write_textgrid_words(grid, [Word("so", 0.5, 0.9)], 30.0)
    read = []
    dataset = CountedReads(root, read)
    first = dataset.digest()
    assert first == records_digest(list(Beat2Dataset(root, split="train"))) and len(read) == 2
    assert CountedReads(root, read).digest() == first and len(read) == 2
    stat = grid.stat()
    write_textgrid_words(grid, [Word("no", 0.5, 0.9)], 30.0)
    os.utime(grid, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    changed = CountedReads(root, read).digest()
    assert changed != first and len(read) == 4
    assert changed == records_digest(list(Beat2Dataset(root, split="train")))


class CountedReads(Beat2Dataset):
    """The train split of `root`, each record read appended to `read`."""

    def __init__(self, root: Path, read: list):
        super().__init__(root, split="train", load_audio=False)
        self.read = read

    def __getitem__(self, i):
        record = super().__getitem__(i)
        self.read.append(record.id)
        return record


def test_write_motion_keeps_beat2_keys_and_dtypes(tmp_path, beat2_sample, sample_arrays):
    motion = read_motion_npz(beat2_sample / f"{SAMPLE_ID}.npz")
    out = tmp_path / "smplxflame_30" / "copy.npz"
    write_motion_npz(out, motion)
    with np.load(out, allow_pickle=False) as z:
        written = {k: z[k] for k in z.files}
    assert {k: (v.dtype, v.shape) for k, v in written.items()} == {
        k: (v.dtype, v.shape) for k, v in sample_arrays.items()
    }
    assert read_motion_npz(out).content_hash() == motion.content_hash()
    assert [p.name for p in out.parent.iterdir()] == ["copy.npz"]  # no temporary file left behind


def test_nan_in_poses_names_file_and_frame(tmp_path, sample_arrays):
    poses = sample_arrays["poses"].copy()
    poses[17, 5] = np.nan
    poses[40, 0] = np.inf
    path = save_variant(tmp_path, sample_arrays, poses=poses)
    message = data_error(read_motion_npz, path)
    assert (
        str(path) in message and "NaN" in message and "'poses'" in message and "frame 17" in message
    )


def test_inf_in_trans_is_reported_as_inf(tmp_path, sample_arrays):
    trans = sample_arrays["trans"].copy()
    trans[3, 1] = -np.inf
    message = data_error(read_motion_npz, save_variant(tmp_path, sample_arrays, trans=trans))
    assert (
        "Inf" in message and "NaN" not in message and "'trans'" in message and "frame 3" in message
    )


def test_truncated_npz_names_file(tmp_path, beat2_sample):
    data = (beat2_sample / f"{SAMPLE_ID}.npz").read_bytes()
    path = tmp_path / f"{SAMPLE_ID}.npz"
    path.write_bytes(data[: len(data) // 2])
    message = data_error(read_motion_npz, path)
    assert str(path) in message and "npz" in message


def test_corrupt_member_names_file(tmp_path, beat2_sample):
    data = bytearray((beat2_sample / f"{SAMPLE_ID}.npz").read_bytes())
    middle = len(data) // 2
    data[middle : middle + 512] = bytes(512)  # keeps the zip directory, breaks a member's CRC
    path = tmp_path / "corrupt.npz"
    path.write_bytes(bytes(data))
    assert str(path) in data_error(read_motion_npz, path)


def test_pickled_npz_is_refused(tmp_path):
    path = tmp_path / "pickled.npz"
    np.savez(path, poses=np.array([{"a": 1}], dtype=object))
    assert str(path) in data_error(read_motion_npz, path)


def test_25_fps_is_refused(tmp_path, sample_arrays):
    path = save_variant(tmp_path, sample_arrays, mocap_frame_rate=np.array(25, dtype=np.int32))
    message = data_error(read_motion_npz, path)
    assert str(path) in message and "25 fps" in message and "30 fps" in message


def test_missing_fps_is_taken_as_30(tmp_path, sample_arrays):
    assert read_motion_npz(save_variant(tmp_path, sample_arrays, mocap_frame_rate=None)).fps == 30


@pytest.mark.parametrize("key", ["poses", "trans", "betas"])
def test_missing_required_key(tmp_path, sample_arrays, key):
    path = save_variant(tmp_path, sample_arrays, **{key: None})
    message = data_error(read_motion_npz, path)
    assert str(path) in message and f"'{key}'" in message and "missing" in message


def test_missing_expressions_are_a_neutral_face(tmp_path, sample_arrays):
    motion = read_motion_npz(save_variant(tmp_path, sample_arrays, expressions=None))
    assert motion.expressions.shape == (1906, 100) and not motion.expressions.any()


def test_short_expressions_are_zero_padded(tmp_path, sample_arrays):
    motion = read_motion_npz(
        save_variant(tmp_path, sample_arrays, expressions=sample_arrays["expressions"][:, :50])
    )
    np.testing.assert_allclose(
        motion.expressions[:, :50], sample_arrays["expressions"][:, :50], rtol=1e-6
    )
    assert not motion.expressions[:, 50:].any()


@pytest.mark.parametrize(
    "key, make, needle",
    [
        ("poses", lambda a: a["poses"][:, :156], "(1906, 156)"),
        ("poses", lambda a: a["poses"].reshape(1906, 55, 3), "(1906, 55, 3)"),
        ("trans", lambda a: a["trans"][:-1], "(1905, 3)"),
        ("betas", lambda a: a["betas"][None], "(1, 300)"),
        ("expressions", lambda a: np.zeros((1906, 120)), "(1906, 120)"),
        ("expressions", lambda a: a["expressions"][:100], "(100, 100)"),
        ("poses", lambda a: a["poses"].astype(str), "not numeric"),
    ],
)
def test_wrong_shape_or_type(tmp_path, sample_arrays, key, make, needle):
    path = save_variant(tmp_path, sample_arrays, **{key: make(sample_arrays)})
    message = data_error(read_motion_npz, path)
    assert str(path) in message and f"'{key}'" in message and needle in message


def test_missing_motion_file(tmp_path):
    assert "not found" in data_error(read_motion_npz, tmp_path / "nope.npz")


def test_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "keep.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half-writ")
        raise RuntimeError("crash mid-write")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


# ---------------------------------------------------------------- audio


def test_16k_wav_loads_unchanged(beat2_sample):
    path = beat2_sample / f"{SAMPLE_ID}.wav"
    audio = load_audio(path)
    raw, sr = sf.read(path, dtype="float32")
    assert sr == 16000 and audio.dtype == np.float32 and audio.ndim == 1
    np.testing.assert_array_equal(audio, raw)
    assert abs(len(audio) / 16000 - 64.1) < 0.05


def test_44k_stereo_mp3_in_wav_becomes_16k_mono(tmp_path, beat2_sample):
    path = tmp_path / MP3_WAV
    shutil.copy(beat2_sample / MP3_WAV, path)
    info = sf.info(path)
    assert (info.samplerate, info.channels) == (44100, 2)  # the fixture is what the test claims
    audio = load_audio(path)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert abs(len(audio) / 16000 - info.duration) < 0.05
    # same loudness as the original's channel mean, and the same envelope (0.1 s RMS frames)
    raw = sf.read(path, dtype="float64")[0].mean(axis=1)
    rms = lambda x, hop: np.sqrt(np.mean(x[: len(x) // hop * hop].reshape(-1, hop) ** 2, axis=1))  # noqa: E731
    assert np.sqrt(np.mean(audio.astype(np.float64) ** 2)) == pytest.approx(
        np.sqrt(np.mean(raw**2)), rel=0.1
    )
    env_new, env_raw = rms(audio, 1600), rms(raw, 4410)
    n = min(len(env_new), len(env_raw))
    assert np.corrcoef(env_new[:n], env_raw[:n])[0, 1] > 0.99


def test_write_wav_round_trip(tmp_path):
    signal = np.sin(np.linspace(0, 200 * np.pi, 16000)).astype(np.float32) * 0.5
    path = tmp_path / "wave16k" / "x.wav"
    write_wav(path, signal, 16000)
    info = sf.info(path)
    assert (info.samplerate, info.channels, info.subtype) == (16000, 1, "FLOAT")
    np.testing.assert_array_equal(load_audio(path), signal)


def test_a_conversion_is_logged_once_per_kind_of_file(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(audio_module, "_ANNOUNCED", set())
    noise = np.random.default_rng(0).normal(0, 0.1, (4410, 2)).astype(np.float32)
    for name in ("a.wav", "b.wav"):
        sf.write(tmp_path / name, noise, 44100)
    write_wav(tmp_path / "c.wav", noise[:, 0], 16000)
    with caplog.at_level(logging.INFO, logger="gesturebench.data.audio"):
        for name in ("a.wav", "a.wav", "b.wav", "c.wav"):  # a window reads its file again
            load_audio(tmp_path / name)
    assert caplog.messages == [
        f"audio at 44100 Hz with 2 channel(s), e.g. {tmp_path / 'a.wav'}: converted to 16000 Hz"
        " mono when read (said once)"
    ]


@pytest.mark.parametrize("content", [b"", b"not audio at all"])
def test_unreadable_audio(tmp_path, content):
    path = tmp_path / "bad.wav"
    path.write_bytes(content)
    assert str(path) in data_error(load_audio, path)


def test_empty_and_nan_audio(tmp_path):
    empty = tmp_path / "empty.wav"
    sf.write(empty, np.zeros(0, dtype=np.float32), 16000, subtype="FLOAT")
    assert "empty" in data_error(load_audio, empty)
    nan = tmp_path / "nan.wav"
    signal = np.zeros(1000, dtype=np.float32)
    signal[321] = np.nan
    sf.write(nan, signal, 16000, subtype="FLOAT")
    message = data_error(load_audio, nan)
    assert str(nan) in message and "NaN" in message and "sample 321" in message


def test_a_wav_header_claiming_more_data_than_the_file_holds_is_refused(tmp_path):
    path = tmp_path / "liar.wav"
    write_wav(path, np.zeros(16000, dtype=np.float32))
    raw = bytearray(path.read_bytes())
    at = raw.index(b"data") + 4
    raw[at : at + 4] = (2_000_000_000).to_bytes(4, "little")  # 2 GB claimed, 64 kB held
    path.write_bytes(bytes(raw))
    message = data_error(load_audio, path)
    assert str(path) in message and "2000000000" in message and "64000" in message


@pytest.mark.parametrize("mismatch", ["refuse", "skip"])
def test_audio_much_shorter_than_its_motion(mini_beat2, tmp_path, mismatch, caplog):
    """A 0.1 s wav under seconds of motion is refused naming the file, or its audio left out
    (logged, and the reason kept in the record) when the user allows it: never scored against the
    wrong audio."""
    root = tmp_path / "mini"
    shutil.copytree(mini_beat2, root)
    first = Beat2Source("mini", str(root), max_audio_gap=1.0).open()
    wav = sequence_paths(root, first.ids[0]).audio
    write_wav(wav, load_audio(wav)[:1600])
    dataset = Beat2Source("mini", str(root), max_audio_gap=1.0, audio_mismatch=mismatch).open()
    if mismatch == "refuse":
        message = data_error(dataset.__getitem__, 0)
        assert message.startswith(f"{wav}: audio is 0.10 s long") and "max_length_gap" in message
    else:
        assert dataset[0].audio is None and dataset[1].audio is not None
        assert f"{wav}: audio is 0.10 s long" in caplog.text
        assert dataset[0].left_out["audio"].startswith(f"{wav}: audio is 0.10 s long")
        assert dataset[1].left_out == {}


# ---------------------------------------------------------------- TextGrid and sem

WORDS = [Word("well", 0.5, 0.82), Word("in", 0.9, 1.05), Word("Monday through", 1.3, 2.0)]


def test_textgrid_round_trip(tmp_path):
    path = tmp_path / "textgrid" / "a.TextGrid"
    write_textgrid_words(path, WORDS, duration=3.0)
    assert read_textgrid_words(path) == WORDS


def test_textgrid_tier_name_is_case_insensitive_and_blanks_dropped(tmp_path):
    tg = textgrid.Textgrid()
    tg.addTier(IntervalTier("phones", [(0.5, 0.6, "W")], 0, 2))
    tg.addTier(
        IntervalTier("Words", [(0.5, 0.8, "well"), (0.8, 1.0, "  "), (1.0, 1.4, "done")], 0, 2)
    )
    path = tmp_path / "b.TextGrid"
    tg.save(str(path), format="short_textgrid", includeBlankSpaces=True)
    assert read_textgrid_words(path) == [Word("well", 0.5, 0.8), Word("done", 1.0, 1.4)]


def test_textgrid_without_words_tier_and_garbage(tmp_path):
    tg = textgrid.Textgrid()
    tg.addTier(IntervalTier("phones", [(0.5, 0.6, "W")], 0, 2))
    path = tmp_path / "c.TextGrid"
    tg.save(str(path), format="long_textgrid", includeBlankSpaces=True)
    message = data_error(read_textgrid_words, path)
    assert str(path) in message and "'words'" in message and "phones" in message
    garbage = tmp_path / "d.TextGrid"
    garbage.write_text('File type = "ooTextFile"\nObject class = "TextGrid"\nxmin = 0\nxmax = ')
    assert str(garbage) in data_error(read_textgrid_words, garbage)


def test_reads_beat2_sem_layout(tmp_path):
    # the layout of BEAT2's sem/*.txt: no header, tabs, rows without keywords have five fields
    path = tmp_path / "sem.txt"
    path.write_text(
        "01_beat_align\t0\t3.119\t3.119\t0.1\n"
        "07_iconic_h\t3.119\t4.785\t1.666\t0.7\trelaxing\n"
        "10_metaphoric_h\t13.494\t15.358\t1.864\t1.0\tMonday through Friday\n"
        "02_deictic_l\t29.389\t30.494\t1.105\t0.2\tNA\n"
        "11_habit\t31\t32\t1\t0\t\n"
        "05_iconic_l\t33\t34\t1\t0.5\tbook\t\n"  # a trailing tab is tolerated
    )
    rows = read_sem(path)
    assert [(r.name, r.label, r.keywords) for r in rows] == [
        ("01_beat_align", "beat", ""),
        ("07_iconic_h", "iconic", "relaxing"),
        ("10_metaphoric_h", "metaphoric", "Monday through Friday"),
        ("02_deictic_l", "deictic", "NA"),
        ("11_habit", None, ""),
        ("05_iconic_l", "iconic", "book"),
    ]
    assert rows[2].start == 13.494 and rows[2].end == 15.358 and rows[2].score == 1.0
    assert rows[1].duration == pytest.approx(1.666)


@pytest.mark.parametrize(
    "name, label",
    [
        ("00_nogesture", "none"),
        ("01_beat_align", "beat"),
        ("04_deictic_h", "deictic"),
        ("06_iconic_m", "iconic"),
        ("09_metaphoric_m", "metaphoric"),
        ("iconic", "iconic"),
        ("12_need_cut", None),
        ("habit", None),
    ],
)
def test_sem_label_mapping(name, label):
    assert sem_label(name) == label
    assert SemInterval(name, 0.0, 1.0, 0.5).gesture_class == label  # no label: the name's class


def test_an_intervals_label_is_its_class_over_its_name():
    assert SemInterval("07_iconic_h", 0.0, 1.0, 0.5, label="beat").gesture_class == "beat"


def test_sem_round_trip(tmp_path):
    intervals = [
        SemInterval("01_beat_align", 0.0, 3.119, 0.1, "", "beat"),
        SemInterval("07_iconic_h", 3.119, 4.785, 0.7, 'a "big" one', "iconic"),
        SemInterval("deictic", 5.0, 5.5, 0.3, "there", "deictic"),
        SemInterval("11_habit", 6.0, 6.25, 0.0),
    ]
    path = tmp_path / "sem" / "a.txt"
    write_sem(path, intervals)
    assert read_sem(path) == intervals
    assert path.read_text().splitlines()[1].split("\t")[3] == repr(4.785 - 3.119)
    write_sem(path, [])
    assert read_sem(path) == []


def test_write_sem_refuses_a_label_the_file_cannot_hold(tmp_path):
    with pytest.raises(ValueError, match="label 'iconic'"):
        write_sem(tmp_path / "x.txt", [SemInterval("01_beat_align", 0.0, 1.0, 0.1, "", "iconic")])


@pytest.mark.parametrize(
    "text, needle",
    [
        ("01_beat_align\tabc\t3.1\t3.1\t0.1\n", "line 1: start 'abc'"),
        ("01_beat_align\t0\t3.1\t3.1\t0.1\n07_iconic_h\t3.1\n", "line 2: end ''"),
        ("01_beat_align\t0\t3.1\t3.1\t0.1\textra\tfield\n", "line 1 has more than 6 fields"),
        (
            "01_beat_align\t0\t3.1\t3.1\t0.1\n07_iconic_h\t3\t4\t1\t0.7\tbig\tx\ty\n",
            "6 tab-separated columns",
        ),
        ("01_beat_align\t5\t3.1\t-1.9\t0.1\n", "line 1: end 3.1 is before start 5.0"),
    ],
)
def test_malformed_sem(tmp_path, text, needle):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    message = data_error(read_sem, path)
    assert str(path) in message and needle in message


# ---------------------------------------------------------------- dataset


@pytest.fixture()
def beat2_root(tmp_path, beat2_sample) -> Path:
    """A tiny BEAT2 folder: the real sequence (with wav, TextGrid, sem) and two short ones cut from
    it."""
    root = tmp_path / "beat_english_v2.0.0"
    real = sequence_paths(root, SAMPLE_ID)
    real.motion.parent.mkdir(parents=True)
    shutil.copy(beat2_sample / f"{SAMPLE_ID}.npz", real.motion)
    real.audio.parent.mkdir(parents=True)
    shutil.copy(beat2_sample / f"{SAMPLE_ID}.wav", real.audio)
    write_textgrid_words(real.textgrid, WORDS, duration=64.0)
    write_sem(real.sem, [SemInterval("07_iconic_h", 3.119, 4.785, 0.7, "relaxing", "iconic")])
    motion = read_motion_npz(real.motion)
    write_motion_npz(sequence_paths(root, "4_lawrence_0_1_1").motion, motion.frames(0, 60))
    write_motion_npz(sequence_paths(root, "2_scott_0_2_2").motion, motion.frames(60, 90))
    (root / SPLIT_FILE).write_text(
        f"id,type\n{SAMPLE_ID},test\n4_lawrence_0_1_1,test\n2_scott_0_2_2,train\n9_missing_0_1_1,additional\n"
    )
    return root


def test_dataset_test_split(beat2_root, sample_arrays):
    ds = Beat2Dataset(beat2_root)
    assert ds.ids == [SAMPLE_ID, "4_lawrence_0_1_1"] and len(ds) == 2
    first = ds[0]
    assert (first.id, first.speaker, first.index, first.n_frames) == (SAMPLE_ID, 2, 0, 1906)
    np.testing.assert_array_equal(first.motion.poses, sample_arrays["poses"])
    assert first.audio is not None and abs(len(first.audio) / 16000 - 64.1) < 0.05
    assert first.words == WORDS and [s.label for s in first.sem] == ["iconic"]
    second = ds[-1]
    assert (second.id, second.speaker, second.index, second.n_frames) == (
        "4_lawrence_0_1_1",
        4,
        1,
        60,
    )
    assert second.audio is None and second.words is None and second.sem is None
    with pytest.raises(IndexError):
        ds[2]


def test_dataset_filters(beat2_root):
    assert Beat2Dataset(beat2_root, speakers=[4]).ids == ["4_lawrence_0_1_1"]
    assert Beat2Dataset(beat2_root, speakers=[2, 4], max_sequences=1).ids == [SAMPLE_ID]
    assert Beat2Dataset(beat2_root, split="train").ids == ["2_scott_0_2_2"]
    assert Beat2Dataset(beat2_root, load_audio=False)[0].audio is None
    with pytest.raises(ConfigError, match="speakers present: \\[2, 4\\]"):
        Beat2Dataset(beat2_root, speakers=[7])


def test_dataset_unknown_split_lists_available(beat2_root):
    with pytest.raises(ConfigError, match="available: additional, test, train"):
        Beat2Dataset(beat2_root, split="validation")


def test_dataset_missing_split_file(tmp_path):
    message = data_error(Beat2Dataset, tmp_path)
    assert str(tmp_path / SPLIT_FILE) in message and "not found" in message


def test_dataset_listed_sequence_without_motion(beat2_root):
    message = data_error(Beat2Dataset, beat2_root, split="additional")
    assert str(sequence_paths(beat2_root, "9_missing_0_1_1").motion) in message


def test_dataset_reads_lazily(beat2_root):
    motion_path = sequence_paths(beat2_root, "4_lawrence_0_1_1").motion
    motion_path.write_bytes(b"broken")
    ds = Beat2Dataset(beat2_root)  # nothing is read yet
    assert ds[0].id == SAMPLE_ID
    assert str(motion_path) in data_error(ds.__getitem__, 1)


def test_bad_split_csv_and_ids(tmp_path):
    (tmp_path / SPLIT_FILE).write_text("name,kind\na,test\n")
    assert "id,type" in data_error(Beat2Dataset, tmp_path)
    (tmp_path / SPLIT_FILE).write_text("id,type\nscott_0_1_1,test\n")
    assert "speaker number" in data_error(Beat2Dataset, tmp_path)
    assert speaker_of("30_katya_1_5_5") == 30


def test_motion_frames_write_read(tmp_path, beat2_sample):
    # a model output written by the harness reads back bit-identically (float32 poses, float64
    # trans/expressions)
    motion = read_motion_npz(beat2_sample / f"{SAMPLE_ID}.npz").frames(100, 400)
    path = tmp_path / "out.npz"
    write_motion_npz(path, motion)
    back = read_motion_npz(path)
    assert isinstance(back, Motion) and back.n_frames == 300
    for key in ("poses", "trans", "betas", "expressions"):
        np.testing.assert_array_equal(getattr(back, key), getattr(motion, key))


def test_max_sequences_cuts_the_evaluated_split_only(mini_beat2):
    """A quick run (`max_sequences`) scores the first N of its split against the references of a
    full run: the train and val splits they are made from stay whole; `speakers` holds on every
    split."""
    whole = Beat2Source("mini_beat2", str(mini_beat2), load_audio=False)
    quick = Beat2Source("mini_beat2", str(mini_beat2), max_sequences=2, load_audio=False)
    assert quick.open().ids == whole.open().ids[:2] and len(whole.open()) == 4
    for split in ("train", "val", "test"):
        assert quick.open(split=split).ids == whole.open(split=split).ids
    assert len(whole.open(split="train")) == 16
    one = Beat2Source("mini_beat2", str(mini_beat2), speakers=[4], max_sequences=2)
    assert one.open(split="train").ids == [i for i in whole.open(split="train").ids if i[0] == "4"]
    assert one.open(load_audio=False).ids == ["4_lawrence_0_6_6"]


def test_opened_splits_are_whole_and_read_without_audio_on_request(mini_beat2):
    """`Beat2Source.splits` opens each named split once (duplicates once, whole even in a quick
    run); `without_audio` gives the same sequences with the same motion and no audio, leaving the
    opened split's own records with theirs."""
    quick = Beat2Source("mini_beat2", str(mini_beat2), max_sequences=1)
    splits = quick.splits(["test", "val", "test"])
    assert list(splits.datasets) == ["test", "val"] and len(splits["test"]) == 4
    silent, full = splits.without_audio("test"), splits["test"]
    assert silent.ids == full.ids
    a, b = silent[1], full[1]
    assert a.audio is None and b.audio is not None and len(b.audio) > 0
    assert np.array_equal(a.motion.poses, b.motion.poses) and a.sem == b.sem
