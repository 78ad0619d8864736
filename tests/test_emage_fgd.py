"""EMAGE's FGD encoder: the released layout loads strictly, and features equal the official class's
(tests/fixtures/emage_fgd_official.json) on the real BEAT2 sample."""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from gesturebench.encoders.emage_fgd import (
    FEATURE_DIM,
    FIXED,
    IGNORED,
    TRIM,
    EmageFGDEncoder,
    load_emage_fgd_encoder,
)
from gesturebench.runtime.errors import CheckpointError
from tests.emage_fgd_support import released_state

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "emage_fgd_official.json").read_text())


@pytest.fixture(scope="module")
def encoder() -> EmageFGDEncoder:
    module = EmageFGDEncoder()
    module.load_released(released_state(FIXTURE["seed"]), "seeded")
    return module.eval()


def test_features_match_the_official_class(encoder, beat2_sample):
    poses = torch.as_tensor(np.load(beat2_sample / FIXTURE["sample"])["poses"], dtype=torch.float32)
    for clip in FIXTURE["clips"]:
        a, b = clip["frames"]
        got = encoder.features(poses[a:b]).double()
        expected = torch.tensor(clip["features"], dtype=torch.float64)
        assert got.shape == expected.shape == ((b - a) // TRIM * TRIM // 16, FEATURE_DIM)
        torch.testing.assert_close(got, expected, atol=1e-5, rtol=0)


def test_masks_and_pools_equal_the_official_classs_own():
    """The skeleton topology, built from the hard-coded joint tree, gives the masks and pooling
    matrices the official class builds itself (the loaded weights of the parity test replace
    them, so this is checked separately)."""
    built = EmageFGDEncoder().state_dict()
    got = {
        k: hashlib.sha256(built[k].float().numpy().tobytes()).hexdigest()
        for k in FIXTURE["fixed_sha256"]
    }
    assert got == FIXTURE["fixed_sha256"]
    assert sorted(FIXTURE["fixed_sha256"]) == sorted(k for k in built if k.endswith(FIXED))


def test_sequences_are_cut_to_a_multiple_of_32_frames(encoder):
    assert encoder.features(torch.zeros(TRIM - 1, 165)).shape == (0, FEATURE_DIM)
    assert encoder.features(torch.zeros(2 * TRIM + 5, 165)).shape == (4, FEATURE_DIM)


def test_released_file_loads_with_module_prefix(tmp_path):
    state = {f"module.{k}": v for k, v in released_state(3).items()}
    path = tmp_path / "AESKConv_240_100.bin"
    torch.save({"model_state": state, "epoch": 100}, path)
    module = load_emage_fgd_encoder(path)
    assert not module.training
    weight = module.state_dict()["encoder.layers.0.0.residual.0.weight"]
    assert torch.equal(weight, state["module.encoder.layers.0.0.residual.0.weight"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.pop("decoder.main.14.bias"), r"missing \['decoder.main.14.bias'\]"),
        (lambda s: s.update(extra=torch.zeros(1)), r"unexpected \['extra'\]"),
        (lambda s: s.update({"fc_mu.bias": torch.zeros(3)}), r"fc_mu.bias has shape \(3,\)"),
        (
            lambda s: s.update({"encoder.layers.3.0.shortcut.bias": torch.zeros(7)}),
            "size mismatch",
        ),
        (
            lambda s: s["encoder.layers.1.0.residual.0.mask"].zero_(),
            "residual.0.mask differs from the SMPL-X tree's",
        ),
    ],
)
def test_other_layouts_are_one_line_errors(change, message):
    state = released_state(3)
    change(state)
    with pytest.raises(CheckpointError, match=message) as err:
        EmageFGDEncoder().load_released(state, "w.bin")
    assert "\n" not in str(err.value)


def test_unreadable_file_is_one_line(tmp_path):
    path = tmp_path / "w.bin"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="not a readable EMAGE FGD encoder file"):
        load_emage_fgd_encoder(path)


def test_ignored_keys_are_the_variational_heads_and_the_decoder():
    assert len(IGNORED) == 22
    assert all(k.startswith(("fc_mu.", "fc_logvar.", "decoder.")) for k in IGNORED)
