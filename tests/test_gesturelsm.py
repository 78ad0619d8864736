"""GestureLSM's native module against the official code: key layout of the released checkpoints,
and the official test path's outputs on seeded weights, inputs and noise (tests/fixtures, made
outside the repository by running GestureLSM's classes on `gesturelsm_support` weights)."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from gesturebench.models.gesturelsm.config import PART_WIDTHS, CodecConfig, GeneratorConfig
from gesturebench.models.gesturelsm.generator import UNUSED_PREFIXES, GestureLSMGenerator
from gesturebench.models.gesturelsm.rvqvae import RVQVAE

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
