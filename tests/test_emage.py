"""EMAGE's native generator against the official code: key layout of the released checkpoint, and
the official inference's outputs on seeded weights and inputs (tests/fixtures, made outside the
repository by running PantoMatrix's classes on `emage_support` weights)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from gesturebench.models.emage.config import GeneratorConfig
from gesturebench.models.emage.generator import TEMPLATE_PREFIXES, EmageGenerator
from gesturebench.models.emage.inference import generate, window_outputs
from gesturebench.runtime.errors import DataError
from tests.emage_support import seeded_inputs, small_models

FIXTURES = Path(__file__).parent / "fixtures"


def test_full_size_keys_and_shapes_are_the_released_ones():
    official = json.loads((FIXTURES / "emage_generator_keys.json").read_text())
    with torch.device("meta"):
        ours = EmageGenerator(GeneratorConfig()).state_dict()
    assert {k: list(v.shape) for k, v in ours.items()} == official
    assert len(official) == 608
    templates = [k for k in official if k.startswith(TEMPLATE_PREFIXES)]
    assert len(templates) == 12 + 18  # one encoder layer, one decoder layer, never run


@pytest.fixture(scope="module")
def official() -> dict:
    return json.loads((FIXTURES / "emage_layout.json").read_text())


@pytest.fixture(scope="module")
def ours() -> dict[str, np.ndarray]:
    generator, codec = small_models()
    inputs = seeded_inputs()
    motion = inputs["motion"]
    out = generate(
        generator, codec, inputs["audio"], seed=motion[:, :4], start_trans=motion[:, 0, 330:333]
    )
    out |= window_outputs(generator, codec, inputs["audio"], seed=motion[:, :4])
    return {k: v[0].numpy() for k, v in out.items()}


def test_network_outputs_match_the_official_ones(official, ours):
    """Latents and logits before the argmax: continuous, so they also see the seed frames."""
    frames = official["sample_frames"]
    for name, value in official["network"].items():
        np.testing.assert_allclose(ours[name][frames, ::4], value, atol=1e-5, err_msg=name)
    for part, codes in official["codes"].items():
        assert ours[f"cls_{part}"].argmax(-1).tolist() == codes


def test_generation_matches_the_official_inference(official, ours):
    frames = official["sample_frames"]
    assert ours["poses"].shape == (official["frames"], 165)
    np.testing.assert_allclose(ours["poses"][frames], official["poses"], atol=1e-5)
    np.testing.assert_allclose(
        ours["expressions"][frames, ::10], official["expressions"], atol=1e-5
    )
    np.testing.assert_allclose(ours["trans"], official["trans"], atol=1e-5)
    for name, value in official["sums"].items():
        array = ours[name.removeprefix("abs_")]
        total = np.abs(array).sum() if name.startswith("abs_") else array.sum()
        assert total == pytest.approx(value, rel=1e-7)


def test_the_seed_frames_enter_the_network():
    """Ours is given only the reference's first 4 frames (the official inference the whole
    reference, of which it reads those); on one window, another seed changes the logits."""
    generator, codec = small_models()
    inputs = seeded_inputs()
    audio = inputs["audio"][:, :34134]  # 64 frames: one window
    seeded = window_outputs(generator, codec, audio, seed=inputs["motion"][:, :4])
    unseeded = window_outputs(generator, codec, audio)
    assert seeded["cls_upper"].shape[1] == unseeded["cls_upper"].shape[1] == 60
    assert (seeded["cls_upper"] - unseeded["cls_upper"]).abs().max() > 1e-3


def test_too_short_audio_is_a_data_error():
    generator, codec = small_models()
    with pytest.raises(DataError, match="too few"):
        generate(generator, codec, torch.zeros(1, 16000 * 8 // 30, dtype=torch.float64))
