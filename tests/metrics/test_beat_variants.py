"""BC's EMAGE variants: parity with the official evaluation code on the real BEAT2 sample (fixture
numbers from that code, run outside the repository on the same joints and audio), and each knob
against a hand-worked case."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from gesturebench.body.output import BodyOutput
from gesturebench.errors import ConfigError
from gesturebench.metrics.beat import EMAGE_MEAN_SPEED, BeatConsistency
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.functional.beat import emage_segment_samples, motion_beats
from gesturebench.metrics.pair import MotionPair

REPO = Path(__file__).resolve().parents[2]
FIXTURE = json.loads((REPO / "tests" / "fixtures" / "bc_emage_official.json").read_text())
# EMAGE's speed normaliser, in the project's shared/ folder beside the checkout (never copied here)
EMAGE_DIR = REPO.parent / "shared" / "data" / "emage"


def context(tmp_path: Path, body_model=None) -> MetricContext:
    return MetricContext("beat2", lambda s: [], tmp_path, tmp_path, body_model)


@pytest.fixture(scope="module")
def official_inputs(beat2_sample):
    """The sample's motion (reference), the same motion rolled along time (generated), its audio."""
    if not (EMAGE_DIR / EMAGE_MEAN_SPEED).is_file():
        pytest.skip(f"EMAGE's {EMAGE_MEAN_SPEED} not found in {EMAGE_DIR} (the shared/ folder)")
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


def emage_bc(inputs, tmp_path, variant, **knobs) -> dict:
    motion, generated, audio, body_model = inputs
    metric = BeatConsistency(
        variant=variant, mean_speed_file=str(EMAGE_DIR / EMAGE_MEAN_SPEED), **knobs
    )
    metric.prepare(context(tmp_path, body_model))
    # the EMAGE variants rerun the body model with zeroed translation (and orientation): the pair's
    # own bodies are not read, so placeholders stand in for them
    still = BodyOutput(torch.zeros(motion.n_frames, 55, 3), None)
    metric.update(MotionPair(0, "s", generated, motion, still, still, audio=audio))
    return metric.compute()


@pytest.mark.parametrize("variant", ["emage2024", "emage2025"])
def test_emage_variants_equal_the_official_code_on_the_real_sample(
    official_inputs, tmp_path, variant
):
    official = FIXTURE["variants"][variant]["values"]
    values = emage_bc(official_inputs, tmp_path, variant)
    assert values["bc"] == pytest.approx(official["generated"], abs=1e-6)
    assert values["bc_ref"] == pytest.approx(official["reference"], abs=1e-6)


def test_testing_the_threshold_at_the_minimum_changes_the_value(official_inputs, tmp_path):
    # the knob the official code differs by: without it, the parity above would fail
    official = FIXTURE["variants"]["emage2024"]["values"]
    values = emage_bc(official_inputs, tmp_path, "emage2024", threshold_frame="minimum")
    assert abs(values["bc_ref"] - official["reference"]) > 1e-3


def test_official_offset_tests_the_threshold_at_the_segment_index_of_the_whole_sequence():
    speed = np.array([5, 5, 0.5, 5, 5, 1.0, 5, 5, 0.1, 5, 5], dtype=float)  # minima at 2, 5, 8
    assert motion_beats(speed, 1.0, threshold=0.3, order=1).tolist() == [2, 5]
    whole = np.concatenate([[0.0, 9.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.0], speed])
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


def test_variant_fills_unset_knobs_and_given_knobs_win(tmp_path):
    default = BeatConsistency().options()
    assert default["variant"] == "paper" and default["threshold"] == 0.1
    assert default["direction"] == "motion_to_audio" and default["threshold_frame"] == "minimum"
    emage = BeatConsistency(variant="emage2024", threshold=0.2)
    options = emage.options()
    assert options["threshold"] == 0.2 and options["direction"] == "audio_to_motion"
    assert options["translation"] == "zero" and options["global_orient"] == "keep"
    assert options["mean_speed_file"] == EMAGE_MEAN_SPEED and emage.values_reading("trans") == []
    assert BeatConsistency(variant="emage2025").options()["global_orient"] == "zero"
    with pytest.raises(ConfigError, match="variant must be one of"):
        BeatConsistency(variant="emage2023")
    with pytest.raises(ConfigError, match="threshold_frame must be one of"):
        BeatConsistency(threshold_frame="onset")
    with pytest.raises(ConfigError, match=r"mean_vel_smplxflame_30.npy not found.*huggingface"):
        emage.prepare(context(tmp_path))


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
