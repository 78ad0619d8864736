"""Mini-BEAT2 generator: BEAT2's layout and dtypes, counts, determinism, and the audio–text–motion
structure (librosa onsets on syllables, gesture forms per semantic class, stroke timing, planted
feet).

The default dataset is generated once per module. Joint positions come from
`smplx.lbs.batch_rigid_transform` (the smplx package's own forward kinematics) over the procedural
body's rest skeleton, the one the generator's leg IK solves on.
"""

from __future__ import annotations

import json

import librosa
import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import torch
from scipy.signal import argrelextrema
from scipy.spatial.transform import Rotation
from smplx.lbs import batch_rigid_transform

from gesturebench.body.joints import LEFT_WRIST, PARENTS, RIGHT_WRIST
from gesturebench.body.procedural import REST_JOINTS
from gesturebench.data.annotations_io import read_sem, read_textgrid_words
from gesturebench.data.beat2 import Beat2Dataset, read_motion_npz, sequence_paths
from gesturebench.data.gesture_classes import sem_label
from gesturebench.runtime.errors import DataError
from gesturebench.synthesis.mini import dataset
from gesturebench.synthesis.mini.plan import CLASSES, KEYWORDS
from gesturebench.synthesis.mini.speakers import speaker_style

REAL_SEQUENCE = "2_scott_0_1_1.npz"
FPS = 30


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """mini-BEAT2 generated once (its time: benchmarks/bench_mini_beat2.py)."""
    return dataset.generate_mini_beat2(tmp_path_factory.mktemp("mini") / "beat2", seed=0)


@pytest.fixture(scope="module")
def split(root):
    return pd.read_csv(root / "train_test_split.csv")


@pytest.fixture(scope="module")
def test_sequences(split):
    """(spec, generated sequence) of the test split, regenerated in memory (plans hold syllables and
    strokes)."""
    specs = {s.id: s for s in dataset.sequence_specs(0, "default")}
    return [
        (specs[i], dataset.generate_sequence(0, specs[i]))
        for i in split.loc[split["type"] == "test", "id"]
    ]


def body_joints(poses: np.ndarray, trans: np.ndarray) -> np.ndarray:
    """(T, 22, 3) world positions of the body joints (smplx forward kinematics on the procedural
    body's `REST_JOINTS`)."""
    T = len(poses)
    rot = Rotation.from_rotvec(
        poses.reshape(T, -1, 3)[:, :22].reshape(-1, 3).astype(np.float64)
    ).as_matrix()
    rest = torch.tensor(REST_JOINTS[:22], dtype=torch.float64).expand(T, 22, 3)
    posed, _ = batch_rigid_transform(
        torch.tensor(rot).reshape(T, 22, 3, 3),
        rest,
        torch.tensor(PARENTS[:22]),
        dtype=torch.float64,
    )
    return posed.numpy() + np.asarray(trans, dtype=np.float64)[:, None]


def longest_run(mask: np.ndarray) -> int:
    """Length of the longest run of True in a 1-D boolean array."""
    edges = np.diff(np.concatenate([[0], mask.astype(int), [0]]))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max(initial=0))


def speed(positions: np.ndarray) -> np.ndarray:
    """(T-1,) speed in m/s of a (T, 3) trajectory; entry k is between frames k and k+1."""
    return np.linalg.norm(np.diff(positions, axis=0), axis=-1) * FPS


def test_layout_and_npz_format(root, split):
    for sid in split["id"]:
        paths = sequence_paths(root, sid)
        for path in (paths.motion, paths.audio, paths.textgrid, paths.sem):
            assert path.is_file(), path
        with np.load(paths.motion, allow_pickle=False) as npz:
            T = npz["poses"].shape[0]
            assert npz["poses"].shape == (T, 165) and npz["poses"].dtype == np.float32
            assert npz["trans"].shape == (T, 3) and npz["trans"].dtype == np.float64
            assert npz["expressions"].shape == (T, 100) and npz["expressions"].dtype == np.float64
            assert npz["betas"].shape == (300,) and npz["betas"].dtype == np.float32
            assert str(npz["model"]) == "smplx2020" and str(npz["gender"]) == "neutral"
            assert npz["mocap_frame_rate"].dtype == np.int32 and int(npz["mocap_frame_rate"]) == 30
        info = sf.info(paths.audio)
        assert (info.samplerate, info.channels, info.frames) == (16000, 1, T * 16000 // 30)
    assert json.loads((root / dataset.MARKER).read_text()) == {
        "generator": "gesturebench.synthesis.mini",
        "version": dataset.GENERATOR_VERSION,
        "seed": 0,
        "size": "default",
    }


def test_npz_keys_and_dtypes_match_real_beat2(root, split, beat2_sample):
    with (
        np.load(beat2_sample / REAL_SEQUENCE, allow_pickle=False) as real,
        np.load(sequence_paths(root, split["id"][0]).motion, allow_pickle=False) as ours,
    ):
        assert sorted(ours.files) == sorted(real.files)
        for key in real.files:
            assert ours[key].dtype.kind == real[key].dtype.kind, key
            assert (
                ours[key].dtype.itemsize == real[key].dtype.itemsize or ours[key].dtype.kind == "U"
            ), key
            assert ours[key].shape[1:] == real[key].shape[1:], key
            if ours[key].dtype.kind in "Ui":
                assert ours[key] == real[key], key


def test_counts_speakers_and_durations(root, split):
    assert list(split.columns) == ["id", "type"]
    assert split["type"].value_counts().to_dict() == {"train": 16, "val": 4, "test": 4}
    speakers = split["id"].str.split("_").str[0].astype(int)
    assert speakers.nunique() >= 4
    assert (split[split["type"] == "test"].assign(s=speakers).groupby("s").size() == 1).all()
    for sid, kind in zip(split["id"], split["type"], strict=True):
        name, take = sid.split("_")[1], sid.split("_")[3]
        assert sid == f"{speakers[split['id'] == sid].item()}_{name}_0_{take}_{take}"
        seconds = read_motion_npz(sequence_paths(root, sid).motion).duration
        assert (30.0 <= seconds <= 36.0) if kind == "test" else (30.0 <= seconds <= 60.0), (
            sid,
            seconds,
        )


def test_standard_size_is_beat2_sized():
    specs = dataset.sequence_specs(0, "standard")
    test = np.array([s.n_frames / FPS for s in specs if s.split == "test"])
    assert len(test) == 265 and 6600 <= test.sum() <= 7800
    assert (
        test.min() >= 10
        and test.max() <= 75
        and np.percentile(test, 10) < 20
        and np.percentile(test, 90) > 35
    )
    assert {s.split for s in specs} == {"train", "val", "test"} and len(
        {s.id for s in specs}
    ) == len(specs)


def test_reader_reads_what_the_generator_writes(root):
    data = Beat2Dataset(root, split="test")
    assert len(data) == 4
    record = data[0]
    assert record.audio is not None and len(record.audio) == record.n_frames * 16000 // 30
    assert record.words and record.sem and all(iv.label in CLASSES for iv in record.sem)


def test_same_seed_same_arrays_other_seed_differs(root, split):
    spec = next(s for s in dataset.sequence_specs(0, "default") if s.id == split["id"][5])
    again = dataset.generate_sequence(0, spec)
    with np.load(sequence_paths(root, spec.id).motion, allow_pickle=False) as on_disk:
        for key, value in again.motion.to_npz_dict().items():
            assert on_disk[key].tobytes() == value.tobytes(), key
    audio, _ = sf.read(sequence_paths(root, spec.id).audio, dtype="float32")
    assert np.array_equal(audio, again.audio)
    other = dataset.generate_sequence(1, spec)
    assert not np.allclose(other.motion.poses, again.motion.poses)
    assert not np.allclose(other.motion.betas, again.motion.betas)
    assert [s.n_frames for s in dataset.sequence_specs(1, "default")] != [
        s.n_frames for s in dataset.sequence_specs(0, "default")
    ]


def test_second_call_does_nothing(root, monkeypatch):
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*")}

    def regenerated(*args):
        raise AssertionError("a complete mini-BEAT2 was generated again")

    monkeypatch.setattr(dataset, "generate_sequence", regenerated)
    assert dataset.ensure_mini_beat2(root, seed=0) == root
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*")} == before


@pytest.fixture
def tiny(monkeypatch):
    """Shrink every size to two 10-second sequences so folder-handling tests run in a fraction of a
    second."""
    real_specs = dataset.sequence_specs

    def two_short(seed, size):
        return [
            s.__class__(s.id, s.speaker, s.take, s.split, 300) for s in real_specs(seed, size)[4:6]
        ]

    monkeypatch.setattr(dataset, "sequence_specs", two_short)


def test_other_seed_replaces_and_foreign_folders_are_refused(tiny, tmp_path):
    root = tmp_path / "data"
    dataset.generate_mini_beat2(root, seed=5)
    first = (root / "wave16k" / "2_scott_0_5_5.wav").read_bytes()
    dataset.generate_mini_beat2(root, seed=6)
    assert json.loads((root / dataset.MARKER).read_text())["seed"] == 6
    assert (root / "wave16k" / "2_scott_0_5_5.wav").read_bytes() != first
    assert [p.name for p in tmp_path.iterdir()] == ["data"]  # no partial or old folders left behind
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(DataError, match="refusing to overwrite"):
        dataset.generate_mini_beat2(foreign)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_crash_leaves_no_dataset(tiny, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(dataset, "write_sem", broken)
    with pytest.raises(OSError, match="disk full"):
        dataset.generate_mini_beat2(tmp_path / "data")
    assert list(tmp_path.iterdir()) == []


def test_librosa_onsets_fall_on_syllable_and_word_starts(root, test_sequences):
    for spec, seq in test_sequences:
        audio, sr = sf.read(sequence_paths(root, spec.id).audio, dtype="float32")
        onsets = librosa.onset.onset_detect(y=audio, sr=sr, hop_length=512, units="time")
        syllables = np.array([s.start for s in seq.plan.syllables])
        words = np.array(
            [w.start for w in read_textgrid_words(sequence_paths(root, spec.id).textgrid)]
        )
        assert len(onsets) > 0.5 * len(syllables)
        near_syllable = np.abs(onsets[:, None] - syllables[None]).min(axis=1) <= 0.05
        assert near_syllable.mean() >= 0.9, (
            f"{spec.id}: {near_syllable.mean():.2f} of onsets near a syllable start"
        )
        heard = np.abs(words[:, None] - onsets[None]).min(axis=1) <= 0.05
        assert heard.mean() >= 0.9, f"{spec.id}: {heard.mean():.2f} of word starts have an onset"


def test_textgrid_words_are_the_plan_words_and_span_their_syllables(root, test_sequences):
    for spec, seq in test_sequences:
        words = read_textgrid_words(sequence_paths(root, spec.id).textgrid)
        assert [w.word for w in words] == [w.word for w in seq.plan.words]
        np.testing.assert_allclose(
            [(w.start, w.end) for w in words], [(w.start, w.end) for w in seq.plan.words], atol=1e-3
        )
        starts, ends = (
            np.array([s.start for s in seq.plan.syllables]),
            np.array([s.end for s in seq.plan.syllables]),
        )
        for w in seq.plan.words:
            inside = (starts >= w.start - 1e-6) & (ends <= w.end + 1e-6)
            assert 1 <= inside.sum() <= 3 and starts[inside].min() == pytest.approx(w.start)
            assert ends[inside].max() == pytest.approx(w.end)
        durations = ends - starts
        assert durations.min() >= 0.12 - 1e-6 and durations.max() <= 0.25 + 1e-6


def test_semantic_intervals(root, split):
    labels = []
    for sid in split["id"]:
        intervals = read_sem(sequence_paths(root, sid).sem)
        words = read_textgrid_words(sequence_paths(root, sid).textgrid)
        duration = read_motion_npz(sequence_paths(root, sid).motion).duration
        assert 1 / 7 <= len(intervals) / duration <= 1 / 3.5, (sid, len(intervals), duration)
        for iv in intervals:
            labels.append(iv.label)
            assert iv.label == sem_label(iv.name) and iv.label in CLASSES
            assert 0.6 - 1e-6 <= iv.end - iv.start <= 1.5 + 1e-6 and 0.3 <= iv.score <= 1.0
            assert iv.keywords in KEYWORDS[iv.label]
            spoken = [w for w in words if w.end > iv.start and w.start < iv.end]
            assert iv.keywords in [w.word for w in spoken]
            grid = np.arange(iv.start, iv.end, 0.005)
            said = np.any([(grid >= w.start) & (grid <= w.end) for w in words], axis=0)
            assert longest_run(~said) * 0.005 <= 0.2, (
                f"{sid}: a pause inside {iv}"
            )  # words cover it
    assert set(labels) == set(CLASSES)


def test_deictic_holds_and_beat_strokes_stop_on_onsets(root, test_sequences):
    holds, minima = [], []
    for spec, seq in test_sequences:
        dominant = (LEFT_WRIST, RIGHT_WRIST)[speaker_style(0, spec.speaker).dominant]
        joints = body_joints(seq.motion.poses, seq.motion.trans)
        t = np.arange(seq.motion.n_frames) / FPS
        for iv in seq.plan.sem:
            hold = (t >= iv.start + 0.1) & (t <= iv.end - 0.1)
            if iv.label == "deictic":
                wrist = joints[:, dominant]
                holds.append(np.median(speed(wrist[hold])))
                raised = wrist[hold, 1].mean() - joints[t < iv.start - 0.5, dominant, 1].mean()
                assert raised > 0.15, (
                    f"{spec.id}: pointing wrist only {raised:.2f} m above its rest height"
                )
            if iv.label == "beat":
                for stroke in (s for s in seq.plan.strokes if iv.start <= s.time <= iv.end):
                    for arm in stroke.arms:
                        v = speed(joints[:, (LEFT_WRIST, RIGHT_WRIST)[arm]])
                        lows = (
                            argrelextrema(v, np.less_equal, order=2)[0] + 0.5
                        )  # between frames k and k+1
                        minima.append(np.abs(lows / FPS - stroke.time).min())
                        before = (t[:-1] > stroke.time - 0.25) & (t[:-1] < stroke.time)
                        assert v[before].max() > 0.3, (
                            f"{spec.id}: stroke at {stroke.time:.2f}s is too slow"
                        )
    assert holds and max(holds) < 0.08, f"deictic hold wrist speeds {np.round(holds, 3)} m/s"
    assert len(minima) >= 4 and np.mean(np.array(minima) <= 2.5 / FPS) >= 0.9, np.round(minima, 3)


def test_feet_stay_planted_while_the_body_sways(test_sequences):
    for spec, seq in test_sequences:
        joints = body_joints(seq.motion.poses, seq.motion.trans)
        feet = joints[:, [7, 8, 10, 11]]
        assert np.abs(feet - feet[:1]).max() < 0.01, f"{spec.id}: feet slide"
        assert np.ptp(joints[:, 0, 0]) > 0.01, f"{spec.id}: pelvis never shifts its weight"
        trans = seq.motion.trans
        assert (
            np.all(np.abs(trans[:, 1] - 1.29) < 0.03)
            and np.ptp(trans[:, [0, 2]], axis=0).max() < 0.15
        )
        assert np.abs(np.diff(trans, axis=0)).max() < 0.005  # < 15 cm/s
        assert (
            np.abs(np.diff(seq.motion.poses, axis=0)).max() < 0.3
        )  # no pops: < 0.3 rad per frame anywhere
        assert np.all(np.isfinite(seq.motion.poses)) and np.abs(seq.motion.poses).max() < np.pi


# Arms hang relaxed: shoulder and elbow rotations have the signs of the real sample's (left −,
# right +).
REST_ARM_SIGNS = {(16, 2): -1, (17, 2): 1, (18, 1): -1, (19, 1): 1}


def test_rest_pose_signs(test_sequences):
    ours = (
        np.concatenate([seq.motion.poses for _, seq in test_sequences])
        .reshape(-1, 55, 3)
        .mean(axis=0)
    )
    assert {k: int(np.sign(ours[k])) for k in REST_ARM_SIGNS} == REST_ARM_SIGNS


def test_rest_pose_signs_are_real_beat2s(beat2_sample):
    with np.load(beat2_sample / REAL_SEQUENCE, allow_pickle=False) as real:
        real_mean = real["poses"].reshape(-1, 55, 3).mean(axis=0)
    assert {k: int(np.sign(real_mean[k])) for k in REST_ARM_SIGNS} == REST_ARM_SIGNS


def test_jaw_follows_speech(root, test_sequences):
    for spec, seq in test_sequences:
        audio, _ = sf.read(sequence_paths(root, spec.id).audio, dtype="float32")
        frames = np.array_split(audio, seq.motion.n_frames)
        rms = np.array([np.sqrt(np.mean(f.astype(np.float64) ** 2)) for f in frames])
        jaw = seq.motion.poses.reshape(-1, 55, 3)[:, 22, 0]
        assert np.corrcoef(jaw, rms)[0, 1] > 0.7
        assert (
            np.abs(np.diff(seq.motion.expressions, axis=0)).max() < 0.3
        )  # smooth face (real BEAT2: p99 0.6)
