"""BC (bc.py, functional/bc.py) against plain-loop computations, constructed cases and the real
BEAT2 sample."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from gesturebench.body.joints import UPPER
from gesturebench.body.output import BodyOutput
from gesturebench.metrics import bc as bc_module
from gesturebench.metrics.bc import EMAGE_MEAN_SPEED, BeatConsistency
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.emage_eval_files import MEAN_SPEED as MEAN_SPEED_FILES
from gesturebench.metrics.functional.bc import (
    audio_onsets,
    beat_consistency,
    emage_segment_samples,
    joint_speeds,
    motion_beats,
    segment_onsets,
)
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.errors import CheckpointError, ConfigError
from gesturebench.runtime.weights import sha256_file
from tests.helpers import toy_context
from tests.metrics.speech import (
    MEAN_SPEED,
    SR,
    bc_pairs,
    click_track,
    first_of_clusters,
    make_pair,
    positions_with_speed_minima,
)
from tests.support.damage import damage
from tests.support.hf_cache import fake_hf_cache
from tests.support.requires import EMAGE_DIR

HOP_FPS = SR / 512  # 31.25 frames/s: motion frames fall exactly on librosa's onset times


def speeds_with_minima(n_frames: int, beat_frames: np.ndarray, n_joints: int = 3) -> torch.Tensor:
    """Speeds (T,J) with strict local minima (value 0.5) exactly at `beat_frames`, flat 1.5 far from
    them."""
    t = np.arange(n_frames)[:, None]
    dist = np.abs(t - np.asarray(beat_frames)[None, :]).min(axis=1)
    return torch.from_numpy(np.repeat((0.5 + np.minimum(dist, 10) / 10)[:, None], n_joints, axis=1))


# ---------- independent plain-loop BC ----------


def loop_minima(speed, order):
    """Strict local minima over ±order neighbours, neighbours past the ends clipped to the end
    value."""
    n = len(speed)
    out = []
    for i in range(n):
        neighbours = [speed[min(max(i + k, 0), n - 1)] for k in range(-order, order + 1) if k != 0]
        if all(speed[i] < v for v in neighbours):
            out.append(i)
    return out


def loop_bc(speeds, onsets, mean_speed, fps, sigma, order, threshold, direction):
    per_joint = []
    for j in range(speeds.shape[1]):
        beats = [
            i / fps
            for i in loop_minima(speeds[:, j], order)
            if speeds[i, j] / mean_speed[j] > threshold
        ]
        a, b = (beats, list(onsets)) if direction == "motion_to_audio" else (list(onsets), beats)
        if not a or not b:
            per_joint.append(0.0)
            continue
        total = 0.0
        for t in a:
            gap = min(abs(t - s) for s in b)
            total += math.exp(-gap * gap / (2 * sigma * sigma))
        per_joint.append(total / len(a))
    return sum(per_joint) / len(per_joint)


# ---------- functional BC ----------


@pytest.fixture(scope="module")
def clicks():
    return click_track(20.0)


def test_click_track_onsets_are_sparse(clicks):
    _, onsets = clicks
    bursts = first_of_clusters(onsets)
    assert len(bursts) >= 7
    assert np.all(np.diff(bursts) > 1.0)  # sparser than one onset per second


def test_bc_is_one_when_every_motion_beat_is_on_an_onset(clicks):
    _, times = clicks
    frames = np.round(first_of_clusters(times) * HOP_FPS).astype(int)
    speeds = speeds_with_minima(int(20 * HOP_FPS), frames)
    onsets, mean = torch.from_numpy(times), torch.ones(3)
    assert beat_consistency(speeds, onsets, mean, HOP_FPS) == pytest.approx(1.0, abs=1e-12)
    # every onset burst has a motion beat within one hop: audio→motion is close to 1 too
    assert beat_consistency(speeds, onsets, mean, HOP_FPS, direction="audio_to_motion") > 0.99


def test_one_second_shift_drops_bc_below_half(clicks):
    _, times = clicks
    frames = np.round(first_of_clusters(times) * HOP_FPS).astype(int)
    speeds = speeds_with_minima(int(20 * HOP_FPS), frames + int(HOP_FPS))
    onsets = torch.from_numpy(times)
    for direction in ("motion_to_audio", "audio_to_motion"):
        assert beat_consistency(speeds, onsets, torch.ones(3), HOP_FPS, direction=direction) < 0.5


@pytest.mark.parametrize("direction", ["motion_to_audio", "audio_to_motion"])
def test_bc_equals_plain_loop_on_irregular_motion(clicks, direction):
    _, onsets = clicks
    rng = np.random.default_rng(1)
    speeds = (
        np.abs(rng.standard_normal((600, 4))).cumsum(0) % 1.7 + 0.05
    )  # many minima, some below threshold
    mean = np.array([0.5, 1.0, 2.0, 20.0])  # the last joint's beats all fall below the threshold
    for sigma, order, thr in [(0.3, 7, 0.1), (0.15, 3, 0.4)]:
        got = beat_consistency(
            *(torch.from_numpy(a) for a in (speeds, onsets, mean)), 30, sigma, order, thr, direction
        )
        assert got == pytest.approx(
            loop_bc(speeds, onsets, mean, 30, sigma, order, thr, direction), abs=1e-12
        )


def test_bc_without_beats_or_onsets_is_zero():
    speeds = torch.ones(200, 2)  # constant speed: no strict minimum
    assert beat_consistency(speeds, torch.tensor([1.0, 3.0]), torch.ones(2), 30) == 0.0
    assert (
        beat_consistency(speeds_with_minima(200, [50, 120], 2), torch.zeros(0), torch.ones(2), 30)
        == 0.0
    )
    with pytest.raises(ValueError):
        beat_consistency(speeds, torch.tensor([1.0]), torch.ones(2), 30, direction="both")


def test_joint_speeds_match_finite_differences():
    rng = np.random.default_rng(0)
    p = rng.standard_normal((9, 2, 3))
    s = joint_speeds(torch.from_numpy(p), 30).numpy()
    assert s[4, 1] == pytest.approx(np.linalg.norm((p[5, 1] - p[3, 1]) * 15))
    assert s[0, 0] == pytest.approx(np.linalg.norm((p[1, 0] - p[0, 0]) * 30))
    assert s[8, 0] == pytest.approx(np.linalg.norm((p[8, 0] - p[7, 0]) * 30))


def test_bc_metric_reference_on_onsets_and_shift(clicks):
    metric = BeatConsistency(mean_speed=MEAN_SPEED, trim=0.0)
    audio, onsets = clicks
    frames = np.round(first_of_clusters(onsets) * 30).astype(int)
    ref = positions_with_speed_minima(600, frames, 30)
    gen = positions_with_speed_minima(600, frames + 30, 30)
    metric.update(make_pair(0, gen, ref, audio=audio))
    out = metric.compute()
    assert out["bc_ref"] > 0.998  # beats within half a frame (1/60 s) of each onset
    assert out["bc"] < 0.5


def test_bc_metric_trims_and_weights_by_trimmed_length(clicks):
    pairs = bc_pairs(3)
    metric = BeatConsistency(mean_speed=MEAN_SPEED, direction="audio_to_motion", sigma=0.25)
    expected, weights = [], []
    for p in pairs:
        metric.update(p)
        start, stop = 60, p.n_frames - 60
        onsets = audio_onsets(torch.from_numpy(p.audio[start * SR // 30 : stop * SR // 30]), SR)
        speeds = joint_speeds(p.gen_body.joints[:, list(UPPER)], 30)[start:stop].numpy()
        expected.append(loop_bc(speeds, onsets, [1.0] * 13, 30, 0.25, 7, 0.1, "audio_to_motion"))
        weights.append(stop - start)
    assert metric.compute()["bc"] == pytest.approx(np.average(expected, weights=weights), abs=1e-12)
    per_seq = metric.per_sequence()
    assert [per_seq[i]["bc"] for i in range(3)] == pytest.approx(expected, abs=1e-12)


def test_bc_caches_each_segments_onsets(tmp_path, monkeypatch):
    pairs = bc_pairs(2)
    fresh = BeatConsistency(mean_speed=MEAN_SPEED, direction="audio_to_motion")
    fresh.prepare(toy_context(tmp_path))
    for p in pairs:
        fresh.update(p)
    assert len(list((tmp_path / "onsets").glob("*.npy"))) == 2
    uncached = BeatConsistency(mean_speed=MEAN_SPEED, direction="audio_to_motion")
    for p in pairs:
        uncached.update(p)
    calls = []
    real = bc_module.segment_onsets
    monkeypatch.setattr(
        bc_module, "segment_onsets", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    cached = BeatConsistency(mean_speed=MEAN_SPEED, direction="audio_to_motion")
    cached.prepare(toy_context(tmp_path))
    for p in pairs:
        cached.update(p)
    assert calls == []  # read back, not recomputed
    assert cached.compute() == fresh.compute() == uncached.compute()
    other = BeatConsistency(mean_speed=MEAN_SPEED, hop_length=256)  # another key
    other.prepare(toy_context(tmp_path))
    other.update(pairs[0])
    assert calls == [1]


def test_bc_metric_skips_short_or_silent_sequences():
    metric = BeatConsistency(mean_speed=MEAN_SPEED)
    joints = np.zeros((90, 55, 3))
    metric.update(
        make_pair(0, joints, joints, audio=np.zeros(3 * SR, np.float32))
    )  # 3 s < 2 × trim
    metric.update(make_pair(1, joints, joints, audio=None))
    assert metric.compute() == {"bc": None, "bc_ref": None}
    assert metric.skip_reason().endswith("; 1 sequences had no audio")
    with pytest.raises(ConfigError):
        BeatConsistency(mean_speed=[1.0] * 13)
    with pytest.raises(ConfigError):  # no mean speeds: prepare() was not run
        BeatConsistency().update(
            make_pair(
                0,
                np.zeros((300, 55, 3)),
                np.zeros((300, 55, 3)),
                audio=np.zeros(10 * SR, np.float32),
            )
        )


def test_bc_says_windows_are_shorter_than_its_trim_with_the_numbers():
    metric = BeatConsistency(mean_speed=MEAN_SPEED)
    for index, seconds in enumerate((3, 4)):  # study windows, both with their audio
        joints = np.zeros((seconds * 30, 55, 3))
        metric.update(make_pair(index, joints, joints, audio=np.zeros(seconds * SR, np.float32)))
    assert metric.compute() == {"bc": None, "bc_ref": None}
    assert metric.skip_reason() == (
        "2 sequences too short for bc (the longest 4.00 s): it cuts metrics.bc.trim=2.0 s at each"
        " end and needs 15 frames (2·order+1) left"
    )


def test_bc_names_the_audio_the_dataset_left_out_between_short_and_silent_sequences():
    metric = BeatConsistency(mean_speed=MEAN_SPEED)
    joints = np.zeros((90, 55, 3))
    metric.update(make_pair(0, joints, joints, audio=np.zeros(3 * SR, np.float32)))  # too short
    for index, note in ((1, "/d/b.wav: audio is 0.10 s long"), (2, "/d/a.wav: header lies")):
        pair = make_pair(index, joints, joints)
        metric.update(dataclasses.replace(pair, left_out={"audio": note}))
    metric.update(make_pair(3, joints, joints))  # no audio file
    assert metric.skip_reason() == (
        "1 sequences too short for bc (the longest 3.00 s): it cuts metrics.bc.trim=2.0 s at each"
        " end and needs 15 frames (2·order+1) left; audio left out of 2 sequences: /d/a.wav:"
        " header lies (and 1 more); 1 sequences had no audio"
    )


class _Context:
    """The parts of MetricContext that BC's prepare uses, with a body model that returns given
    joints."""

    def __init__(self, tmp_path, records, joints):
        self.dataset_name, self.cache_dir = "toy", tmp_path
        self.records, self.joints, self.calls = records, joints, 0
        self.body_model = self

    def split(self, name):
        assert name == "train"
        return self.records

    def __call__(self, motion, vertices=True):
        self.calls += 1
        return BodyOutput(torch.as_tensor(self.joints[motion.n_frames]), None)


def test_bc_prepare_computes_train_mean_speed_once_and_caches(tmp_path):
    from gesturebench.data.records import SequenceRecord

    rng = np.random.default_rng(0)
    joints = {t: 0.01 * rng.standard_normal((t, 55, 3)).cumsum(0) for t in (40, 70)}  # ~0.5 m/s
    records = [
        SequenceRecord(f"r{t}", 1, make_pair(0, joints[t], joints[t]).reference) for t in joints
    ]
    ctx = _Context(tmp_path, records, joints)
    metric = BeatConsistency()
    metric.prepare(ctx)
    speeds = np.concatenate([joint_speeds(torch.from_numpy(j), 30) for j in joints.values()])
    assert metric.mean_speed == pytest.approx(speeds.mean(0))
    again = BeatConsistency()
    again.prepare(ctx)
    assert ctx.calls == 2 and again.mean_speed == pytest.approx(
        speeds.mean(0)
    )  # second prepare read the cache
    aligned = BeatConsistency(root_aligned=True)
    aligned.prepare(ctx)  # another option, another cache entry
    rel = np.concatenate(
        [joint_speeds(torch.from_numpy(j - j[:, :1]), 30) for j in joints.values()]
    )
    assert ctx.calls == 4 and aligned.mean_speed == pytest.approx(rel.mean(0))


@pytest.mark.parametrize("how", ["truncate", "garble"])
def test_a_damaged_onset_cache_entry_is_set_aside_and_recomputed(tmp_path, how, caplog):
    pair = bc_pairs(1)[0]
    fresh = BeatConsistency(mean_speed=MEAN_SPEED)
    fresh.prepare(toy_context(tmp_path))
    fresh.update(pair)
    (entry,) = (tmp_path / "onsets").glob("*.npy")
    original = np.load(entry)
    damage(entry, how)
    again = BeatConsistency(mean_speed=MEAN_SPEED)
    again.prepare(toy_context(tmp_path))
    again.update(pair)
    assert again.compute() == fresh.compute()
    np.testing.assert_array_equal(np.load(entry), original)
    assert entry.with_name(entry.name + ".corrupt").is_file() and str(entry) in caplog.text


@pytest.mark.parametrize("how", ["truncate", "garble"])
def test_a_damaged_mean_speed_cache_is_set_aside_and_recomputed(tmp_path, how, caplog):
    from gesturebench.data.records import SequenceRecord

    rng = np.random.default_rng(0)
    joints = {40: 0.01 * rng.standard_normal((40, 55, 3)).cumsum(0)}
    records = [SequenceRecord("r40", 1, make_pair(0, joints[40], joints[40]).reference)]
    ctx = _Context(tmp_path, records, joints)
    first = BeatConsistency()
    first.prepare(ctx)
    (entry,) = tmp_path.glob("bc_mean_speed-*-????????????????.json")  # not its sidecar
    damage(entry, how)
    again = BeatConsistency()
    again.prepare(ctx)
    assert ctx.calls == 2 and again.mean_speed.tolist() == first.mean_speed.tolist()
    assert entry.with_name(entry.name + ".corrupt").is_file() and str(entry) in caplog.text


def poison(entry: Path, data: bytes, resign: bool) -> None:
    """Replace the cache entry `entry` with `data`, a valid file; `resign`: update its sidecar's
    checksum too (an editor who knows the format)."""
    entry.write_bytes(data)
    if resign:
        sidecar = entry.with_name(entry.name + ".meta.json")
        meta = json.loads(sidecar.read_text())
        sidecar.write_text(json.dumps({**meta, "sha256": hashlib.sha256(data).hexdigest()}))


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "payload, resign",
    [
        (np.zeros(0), False),  # an empty array is valid (silent speech): only the checksum tells
        (np.full(5, np.nan), False),
        (np.full(5, np.nan), True),
        (np.zeros((3, 4)), True),
        (np.array([-1.0, 0.5]), True),
        (np.array([2.0, 1.0]), True),  # unsorted
        (np.array([0.5, 1e6]), True),  # past the audio's end
    ],
    ids=["empty", "nan", "nan-resigned", "2d", "negative", "unsorted", "past-the-audio"],
)
def test_a_poisoned_onset_cache_entry_is_set_aside_and_recomputed(
    tmp_path, payload, resign, caplog
):
    """A valid `.npy` put in place of an onset entry gave BC 0 (empty), NaN, or a cryptic error
    (2-D), exit 0; the sidecar's checksum and the onsets' schema catch it."""
    pair = bc_pairs(1)[0]
    fresh = BeatConsistency(mean_speed=MEAN_SPEED)
    fresh.prepare(toy_context(tmp_path))
    fresh.update(pair)
    (entry,) = (tmp_path / "onsets").glob("*.npy")
    original = np.load(entry)
    poison(entry, npy(payload), resign)
    again = BeatConsistency(mean_speed=MEAN_SPEED)
    again.prepare(toy_context(tmp_path))
    again.update(pair)
    assert again.compute() == fresh.compute()
    np.testing.assert_array_equal(np.load(entry), original)
    assert entry.with_name(entry.name + ".corrupt").is_file()
    assert f"{entry}: damaged cache entry" in caplog.text


def test_an_onset_entry_of_an_older_version_without_its_sidecar_is_recomputed(tmp_path, caplog):
    pair = bc_pairs(1)[0]
    fresh = BeatConsistency(mean_speed=MEAN_SPEED)
    fresh.prepare(toy_context(tmp_path))
    fresh.update(pair)
    (entry,) = (tmp_path / "onsets").glob("*.npy")
    entry.with_name(entry.name + ".meta.json").unlink()
    again = BeatConsistency(mean_speed=MEAN_SPEED)
    again.prepare(toy_context(tmp_path))
    again.update(pair)
    assert again.compute() == fresh.compute() and "no sidecar" in caplog.text


@pytest.mark.parametrize("edit", ["zeros", "negative", "x1000"])
@pytest.mark.parametrize("resign", [False, True], ids=["payload", "payload+checksum"])
def test_edited_speed_statistics_are_set_aside_and_recomputed(tmp_path, edit, resign, caplog):
    """Speed statistics edited to zeros, negatives or x1000 gave BC 0.907 or 0, exit 0."""
    from gesturebench.data.records import SequenceRecord

    rng = np.random.default_rng(0)
    joints = {40: 0.01 * rng.standard_normal((40, 55, 3)).cumsum(0)}
    records = [SequenceRecord("r40", 1, make_pair(0, joints[40], joints[40]).reference)]
    ctx = _Context(tmp_path, records, joints)
    first = BeatConsistency()
    first.prepare(ctx)
    (entry,) = tmp_path.glob("bc_mean_speed-*-????????????????.json")
    stored = json.loads(entry.read_text())
    speed = np.asarray(stored["mean_speed"])
    edited = {"zeros": 0 * speed, "negative": -speed, "x1000": 1000 * speed}[edit]
    poison(entry, json.dumps({**stored, "mean_speed": edited.tolist()}).encode(), resign)
    again = BeatConsistency()
    again.prepare(ctx)
    assert ctx.calls == 2 and again.mean_speed.tolist() == first.mean_speed.tolist()
    assert entry.with_name(entry.name + ".corrupt").is_file()
    assert f"{entry}: damaged cache entry" in caplog.text


# ---------- BC on the real BEAT2 sample ----------


@pytest.fixture(scope="module")
def real_bc(beat2_sample):
    """BC of the sample's own motion against its speech and against the unrelated 28 s recording."""
    from gesturebench.body.model import BodyModel
    from gesturebench.data.audio import load_audio
    from gesturebench.data.beat2 import read_motion_npz

    motion = read_motion_npz(beat2_sample / "2_scott_0_1_1.npz")
    own = load_audio(beat2_sample / "2_scott_0_1_1.wav")
    other = load_audio(beat2_sample / "2_scott_0_103_103_28s.wav")  # 44.1 kHz stereo → 16 kHz mono
    n = 20 * 30  # 20 s of both recordings keep the body-model forward short
    motion = motion.frames(0, n)
    body = BodyModel()(motion, vertices=False)
    # the mean speeds over this sequence stand in for a train split
    metric_args = dict(mean_speed=joint_speeds(body.joints, 30).numpy().mean(0).tolist())
    out = {}
    for name, audio in (("own", own), ("other", other)):
        for direction in ("motion_to_audio", "audio_to_motion"):
            m = BeatConsistency(direction=direction, **metric_args)
            m.update(MotionPair(0, "s", motion, motion, body, body, audio=audio[: n * SR // 30]))
            out[name, direction] = m.compute()["bc"]
    onsets = segment_onsets(torch.from_numpy(own), SR, 60, n - 60, 30)
    return out, len(onsets) / ((n - 120) / 30)


def test_bc_on_real_sample_is_in_unit_interval(real_bc):
    values, _ = real_bc
    for v in values.values():
        assert 0.0 < v <= 1.0 and math.isfinite(v)


def test_bc_real_sample_own_speech_versus_unrelated_speech(real_bc):
    """Speech has several onsets per second, so any beat lies near some onset and BC saturates.

    Measured on the sample (28 s): motion→audio 0.957 own vs 0.954 unrelated, audio→motion 0.657 vs
    0.645; with the\n    motion rolled by 5–15 s against its own speech 0.953–0.963 and 0.585–0.611.
    Own and unrelated speech differ by\n    hundredths only; the test pins that they are both high
    and close, which is the saturation docs/metrics.md warns about.
    """
    values, onset_rate = real_bc
    assert onset_rate > 2.0  # dense onsets: mean gap well below 2σ·√(2 ln 2) ≈ 0.7 s
    for direction in ("motion_to_audio", "audio_to_motion"):
        own, other = values["own", direction], values["other", direction]
        assert own > 0.5 and other > 0.5
        assert abs(own - other) < 0.15


# ---------- BC's EMAGE variants: parity with the official evaluation code ----------

REPO = Path(__file__).resolve().parents[2]


def variant_knobs(name: str) -> dict:
    """The knobs of BC's option file conf/metrics/bc/<name>.yaml, those of its `defaults` first."""
    node = OmegaConf.to_container(OmegaConf.load(REPO / "conf" / "metrics" / "bc" / f"{name}.yaml"))
    assert isinstance(node, dict)
    knobs: dict = {}
    for base in node.pop("defaults"):
        if not base.startswith(("/", "_self_")):  # another option file, not the schema
            knobs.update(variant_knobs(base))
    return {**knobs, **node}


def variant(name: str, **knobs) -> BeatConsistency:
    """BC with the knobs of option file `name`, then `knobs`."""
    return BeatConsistency(**{**variant_knobs(name), **knobs})


FIXTURE = json.loads((REPO / "tests" / "fixtures" / "bc_emage_official.json").read_text())


def context(tmp_path: Path, body_model=None) -> MetricContext:
    return MetricContext("beat2", lambda s: [], tmp_path, tmp_path, body_model)


@pytest.fixture(scope="module")
def official_inputs(beat2_sample, emage_mean_speed):
    """The sample's motion (reference), the same motion rolled along time (generated), its audio."""
    from gesturebench.body.model import BodyModel
    from gesturebench.data.audio import load_audio
    from gesturebench.data.beat2 import read_motion_npz

    motion = read_motion_npz(beat2_sample / "2_scott_0_1_1.npz")
    roll = FIXTURE["generated_roll_frames"]
    generated = dataclasses.replace(
        motion,
        **{k: np.roll(getattr(motion, k), roll, 0) for k in ("poses", "trans", "expressions")},
    )
    return motion, generated, load_audio(beat2_sample / "2_scott_0_1_1.wav"), BodyModel()


def emage_bc(inputs, tmp_path, name, **knobs) -> dict:
    motion, generated, audio, body_model = inputs
    metric = variant(name, mean_speed_file=str(EMAGE_DIR / EMAGE_MEAN_SPEED), **knobs)
    metric.prepare(context(tmp_path, body_model))
    # the EMAGE variants rerun the body model with zeroed translation (and orientation): the pair's
    # own bodies are not read, so placeholders stand in for them
    still = BodyOutput(torch.zeros(motion.n_frames, 55, 3), None)
    metric.update(MotionPair(0, "s", generated, motion, still, still, audio=audio))
    return metric.compute()


@pytest.mark.parametrize("name", ["emage2024", "emage2025"])
def test_emage_variants_equal_the_official_code_on_the_real_sample(official_inputs, tmp_path, name):
    official = FIXTURE["variants"][name]["values"]
    values = emage_bc(official_inputs, tmp_path, name)
    assert values["bc"] == pytest.approx(official["generated"], abs=1e-6)
    assert values["bc_ref"] == pytest.approx(official["reference"], abs=1e-6)


GENEA = json.loads((REPO / "tests" / "fixtures" / "genea_official.json").read_text())


@pytest.mark.parametrize("name", ["genea_a2m", "genea_m2a"])
def test_genea_variants_equal_the_leaderboard_code_on_the_real_sample(
    official_inputs, tmp_path, name
):
    assert GENEA["roll_frames"] == FIXTURE["generated_roll_frames"]  # the same generated motion
    official = GENEA["values"]["bc_" + name.removeprefix("genea_")]
    values = emage_bc(official_inputs, tmp_path, name)
    assert values["bc"] == pytest.approx(official["generated"], abs=1e-6)
    assert values["bc_ref"] == pytest.approx(official["reference"], abs=1e-6)


def test_testing_the_threshold_at_the_minimum_changes_the_value(official_inputs, tmp_path):
    # the knob the official code differs by: without it, the parity above would fail
    official = FIXTURE["variants"]["emage2024"]["values"]
    values = emage_bc(official_inputs, tmp_path, "emage2024", threshold_frame="minimum")
    assert abs(values["bc_ref"] - official["reference"]) > 1e-3


def test_official_offset_tests_the_threshold_at_the_segment_index_of_the_whole_sequence():
    speed = torch.tensor([5, 5, 0.5, 5, 5, 1.0, 5, 5, 0.1, 5, 5], dtype=torch.float64)  # 2, 5, 8
    assert motion_beats(speed, 1.0, threshold=0.3, order=1).tolist() == [2, 5]
    whole = torch.cat([torch.tensor([0.0, 9.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.0]).double(), speed])
    # minima found in whole[9:] (= speed) at 2, 5, 8; tested at whole[2], whole[5], whole[8]
    assert motion_beats(speed, 1.0, threshold=0.3, order=1, tested_speed=whole).tolist() == [8]


def test_emage_audio_segments_by_hand():
    # the sample: 1906 frames, 1 025 558 samples at 16 kHz; trimmed frames [60, 1846)
    assert emage_segment_samples(1025558, 16000, 60, 1846, 1906, 30, "emage2025") == (
        32000,
        984533,  # ⌊1846 / 30 · 16000⌋ = ⌊984533.3⌋
    )
    # 2024: the audio's end minus 2 s (1 025 558 − 32 000), before the motion's cut (1 016 533)
    assert emage_segment_samples(1025558, 16000, 60, 1846, 1906, 30, "emage2024") == (
        32000,
        993558,
    )
    # a shorter audio than motion: cut at its own end minus 2 s as well
    assert emage_segment_samples(900000, 16000, 60, 1846, 1906, 30, "emage2024") == (32000, 868000)


def test_the_defaults_are_the_papers_and_a_variant_sets_its_knobs(tmp_path):
    default = BeatConsistency().options()
    assert variant_knobs("paper") == {} and default["threshold"] == 0.1
    assert default["direction"] == "motion_to_audio" and default["threshold_frame"] == "minimum"
    emage = variant("emage2024", threshold=0.2)
    options = emage.options()
    assert options["threshold"] == 0.2 and options["direction"] == "audio_to_motion"
    assert options["translation"] == "zero" and options["global_orient"] == "keep"
    assert options["mean_speed_file"] == EMAGE_MEAN_SPEED and emage.values_reading("trans") == []
    assert variant("emage2025").options()["global_orient"] == "zero"
    with pytest.raises(
        CheckpointError,
        match=r"^metric bc: weights missing: .*emage_eval/EMAGE/test_sequences/weights/"
        r"mean_vel_smplxflame_30\.npy \(HF_HUB_OFFLINE is set\); put the files of"
        r" https://huggingface.co/spaces/H-Liu1997/EMAGE into .*emage_eval/ or set"
        r" metrics\.bc\.mean_speed_file=",
    ):
        emage.prepare(context(tmp_path))


def test_emage_mean_speed_file_is_resolved_like_released_weights(
    tmp_path, monkeypatch, emage_mean_speed
):
    """The official name (the EMAGE variants' default) is looked up in
    `<checkpoints>/emage_eval/` and then in the Hugging Face cache (offline here); results.json
    gets its SHA-256."""
    from huggingface_hub import constants

    official = np.load(emage_mean_speed)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    snapshot = fake_hf_cache(tmp_path / "hf", MEAN_SPEED_FILES, emage_mean_speed.read_bytes())
    metric = variant("emage2025")
    metric.prepare(context(tmp_path / "checkpoints"))
    assert metric.mean_speed.tolist() == official.astype(np.float64).reshape(-1).tolist()
    expected = {
        "path": str(snapshot / MEAN_SPEED_FILES.files[0]),
        "sha256": sha256_file(emage_mean_speed),
    }
    assert metric.provenance() == {"bc_mean_speed": expected}
    local = tmp_path / "checkpoints" / MEAN_SPEED_FILES.folder / MEAN_SPEED_FILES.files[0]
    local.parent.mkdir(parents=True)
    np.save(local, official * 2)
    metric = variant("emage2024")
    metric.prepare(context(tmp_path / "checkpoints"))
    assert metric.mean_speed.tolist() == (2 * official.astype(np.float64)).reshape(-1).tolist()


def test_mean_speed_file_is_read_as_given_or_from_the_checkpoints_folder(tmp_path):
    speeds = np.linspace(0.1, 0.6, 55, dtype=np.float32)
    np.save(tmp_path / "speeds.npy", speeds)
    for path in (str(tmp_path / "speeds.npy"), "speeds.npy"):  # relative: checkpoints/
        metric = BeatConsistency(mean_speed_file=path)
        metric.prepare(context(tmp_path))
        assert metric.mean_speed.tolist() == speeds.astype(np.float64).tolist()
        assert metric.options()["mean_speed_source"] == str(tmp_path / "speeds.npy")
    np.save(tmp_path / "short.npy", speeds[:13])
    with pytest.raises(ConfigError, match="one speed per SMPL-X joint"):
        BeatConsistency(mean_speed_file=str(tmp_path / "short.npy")).prepare(context(tmp_path))


def test_the_speed_statistics_are_recomputed_for_other_train_data_or_threads(tmp_path):
    """The cached statistics' key holds the train split's identity and torch's thread count:
    edited train motion or another thread count computes them again; the same reads the cache."""
    from gesturebench.data.records import SequenceRecord

    rng = np.random.default_rng(1)
    joints = {t: 0.01 * rng.standard_normal((t, 55, 3)).cumsum(0) for t in (40, 70)}
    records = [
        SequenceRecord(f"r{t}", 1, make_pair(0, joints[t], joints[t]).reference) for t in joints
    ]
    ctx = _Context(tmp_path, records, joints)
    BeatConsistency().prepare(ctx)
    BeatConsistency().prepare(ctx)
    assert ctx.calls == 2  # computed once (a forward per record), then read
    records[0].motion.poses[3, 4] += 0.1
    BeatConsistency().prepare(ctx)
    assert ctx.calls == 4
    threads = torch.get_num_threads()
    torch.set_num_threads(threads + 1)
    try:
        BeatConsistency().prepare(ctx)
    finally:
        torch.set_num_threads(threads)
    assert ctx.calls == 6
    assert len(list(tmp_path.glob("bc_mean_speed-*-????????????????.json"))) == 3


def test_a_beat2_folder_s_stamp_changes_with_a_replaced_motion_file(mini_beat2, tmp_path):
    """`Beat2Dataset.motion_stamp`: the same folder, the same stamp; a motion file rewritten (same
    bytes, new modification time) or replaced by another, another stamp."""
    import shutil

    from gesturebench.data.beat2 import MOTION_DIR, Beat2Dataset

    root = tmp_path / "beat2"
    shutil.copytree(mini_beat2, root)
    stamp = Beat2Dataset(root, "train", load_audio=False).motion_stamp()
    assert Beat2Dataset(root, "train", load_audio=False).motion_stamp() == stamp
    first = Beat2Dataset(root, "train", load_audio=False).ids[0]
    path = root / MOTION_DIR / f"{first}.npz"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert Beat2Dataset(root, "train", load_audio=False).motion_stamp() != stamp
