"""GestureLSM's native module against the official code: key layout of the released checkpoints,
and the official test path's outputs on seeded weights, inputs and noise (tests/fixtures, made
outside the repository by running GestureLSM's classes on `gesturelsm_support` weights)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from gesturebench.encoders.representation import rotation_6d
from gesturebench.errors import DataError
from gesturebench.models.emage.codecs import JAW
from gesturebench.models.gesturelsm.config import PART_WIDTHS, CodecConfig, GeneratorConfig
from gesturebench.models.gesturelsm.generator import UNUSED_PREFIXES, GestureLSMGenerator
from gesturebench.models.gesturelsm.inference import generate
from gesturebench.models.gesturelsm.rvqvae import RVQVAE
from tests.gesturelsm_support import seeded_inputs, small_models

FIXTURES = Path(__file__).parent / "fixtures"


def _shapes(module: torch.nn.Module) -> dict[str, list[int]]:
    return {k: list(v.shape) for k, v in module.state_dict().items()}


def test_full_size_keys_and_shapes_are_the_released_ones():
    official = json.loads((FIXTURES / "gesturelsm_keys.json").read_text())
    with torch.device("meta"):
        generator = GestureLSMGenerator(GeneratorConfig())
        assert _shapes(generator) == official["generator"]
        for part, width in PART_WIDTHS.items():
            assert _shapes(RVQVAE(CodecConfig(width))) == official["rvqvae"][part]
    assert len(official["generator"]) == 334
    assert sum(p.numel() for p in generator.parameters()) == 37_785_124
    assert sum(k.startswith(UNUSED_PREFIXES) for k in official["generator"]) == 6


@pytest.fixture(scope="module")
def official() -> dict:
    return json.loads((FIXTURES / "gesturelsm_parity.json").read_text())


@pytest.fixture(scope="module")
def ours() -> dict[str, np.ndarray]:
    generator, codecs = small_models()
    x = seeded_inputs()
    out = generate(
        generator, codecs, x["norm"], x["audio"], x["words"], x["poses"], x["trans"], x["noise"]
    )
    six_d = rotation_6d(out["poses"][0].reshape(-1, 55, 3)).reshape(-1, 330)
    return {"rec_pose_6d": six_d.numpy(), "latents": out["latents"][0].numpy()}


def test_latents_match_the_official_sampling(official, ours):
    """Window 0's 32 latent frames; of window 1 the 28 kept (its first 4 overlap the seed)."""
    windows = np.array(official["latents"])  # (windows, frames 0, 4, …, 28, channels ::8)
    np.testing.assert_allclose(ours["latents"][:32:4, ::8], windows[0], atol=1e-5)
    np.testing.assert_allclose(ours["latents"][32::4, ::8], windows[1, 1:], atol=1e-5)


def test_generation_matches_the_official_test_path(official, ours):
    poses = ours["rec_pose_6d"]
    assert poses.shape == (official["frames"], 330) == (240, 330)
    np.testing.assert_allclose(poses[official["sample_frames"]], official["rec_pose_6d"], atol=1e-5)
    assert poses.sum() == pytest.approx(official["sums"]["rec_pose_6d"], rel=1e-7)
    assert np.abs(poses).sum() == pytest.approx(official["sums"]["abs_rec_pose_6d"], rel=1e-7)


def test_the_jaw_is_the_reference_and_the_noise_matters():
    generator, codecs = small_models()
    x = seeded_inputs()
    args = (generator, codecs, x["norm"], x["audio"], x["words"], x["poses"], x["trans"])
    a = generate(*args, x["noise"])["poses"]
    b = generate(
        *args,
        torch.randn(
            x["noise"].shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64
        ),
    )["poses"]
    jaw = slice(3 * JAW, 3 * JAW + 3)
    torch.testing.assert_close(a[..., jaw], x["poses"][:, :240, jaw], rtol=0, atol=0)
    assert (a - b).abs().max() > 1e-3


def test_too_little_motion_or_too_few_words_is_a_data_error():
    generator, codecs = small_models()
    x = seeded_inputs()
    with pytest.raises(DataError, match="at least 128 frames"):
        generate(
            generator,
            codecs,
            x["norm"],
            x["audio"],
            x["words"],
            x["poses"][:, :127],
            x["trans"],
            x["noise"],
        )
    with pytest.raises(DataError, match="word id per frame"):
        generate(
            generator,
            codecs,
            x["norm"],
            x["audio"],
            x["words"][:, :200],
            x["poses"],
            x["trans"],
            x["noise"],
        )
