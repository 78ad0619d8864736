"""The composite metrics (composite.py): `CompositeRatings` predicting ratings from its
sub-metrics, and `PerSequence` scoring a pooled metric on each sequence alone, in one process and
under two-process DDP."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from scipy.ndimage import gaussian_filter1d

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.encoders.checkpoint import motion_ae_path, save_motion_ae
from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.metrics.composite import CompositeRatings, PerSequence
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.coverage import Coverage
from gesturebench.metrics.fgd import FGD
from gesturebench.metrics.mjd import MeanJointDistance
from gesturebench.metrics.pair import MotionPair
from gesturebench.metrics.pck import PCK
from gesturebench.runtime.errors import ConfigError
from gesturebench.study.composites import (
    composites_document,
)
from tests.helpers import toy_context

pytestmark = pytest.mark.usefixtures("one_thread")


def joint_pairs(n: int, seed: int = 0) -> list[MotionPair]:
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(n):
        t = int(rng.integers(64, 80))
        motion = smooth_motion(rng, t)
        ref = torch.tensor(rng.normal(0, 0.2, (t, 55, 3)), dtype=torch.float32)
        gen = ref + torch.tensor(rng.normal(0, 0.05 * (i + 1), (t, 55, 3)), dtype=torch.float32)
        generated = smooth_motion(rng, t)
        pairs.append(
            MotionPair(i, f"s{i}", generated, motion, BodyOutput(gen, None), BodyOutput(ref, None))
        )
    return pairs


def smooth_motion(rng, t: int) -> Motion:
    poses = gaussian_filter1d(rng.normal(0, 0.6, (t, 165)), 4, axis=0)
    return Motion(
        poses, np.cumsum(rng.normal(0, 0.01, (t, 3)), 0), np.zeros(10), np.zeros((t, 100))
    )


def alone(metric_factory, pair) -> dict:
    metric = metric_factory()
    metric.update(pair)
    return metric.compute()


#: A composite of MJD and PCK with made-up standardisation and weights.
MJD_PCK_COMPOSITE = {
    "predictors": ["mjd", "pck"],
    "mean": [0.1, 0.5],
    "scale": [0.05, 0.2],
    "coef": [-0.7, 0.4],
    "intercept": 4.2,
}


def test_composite_ratings_metric_predicts_from_its_sub_metrics(tmp_path):
    composite = dict(MJD_PCK_COMPOSITE)
    other = {
        **composite,
        "predictors": ["pck"],
        "mean": [0.5],
        "scale": [0.2],
        "coef": [1.0],
        "intercept": 3.0,
    }
    configs = {
        "mjd": {"_target_": "gesturebench.metrics.mjd.MeanJointDistance", "name": "mjd"},
        "pck": {
            "_target_": "gesturebench.metrics.pck.PCK",
            "name": "pck",
            "threshold": 0.1,
        },
    }
    path = tmp_path / "composites.json"
    path.write_text(json.dumps(composites_document({"hl": composite, "cm": other}, configs, {})))
    metric = CompositeRatings(path=str(path))
    assert metric.value_names == ("composite_hl", "composite_cm") and metric.direction == "higher"
    pairs = joint_pairs(4)
    for p in pairs:
        metric.update(p)
    per_sequence = metric.per_sequence()
    for p in pairs:
        mjd = alone(MeanJointDistance, p)["mjd"]
        pck = alone(PCK, p)["pck"]
        hl = 4.2 - 0.7 * (mjd - 0.1) / 0.05 + 0.4 * (pck - 0.5) / 0.2
        assert per_sequence[p.index]["composite_hl"] == pytest.approx(hl, rel=1e-9)
        assert per_sequence[p.index]["composite_cm"] == pytest.approx(
            3.0 + (pck - 0.5) / 0.2, rel=1e-9
        )
    result = metric.compute()
    assert result["composite_hl"] == pytest.approx(
        np.mean([r["composite_hl"] for r in per_sequence.values()])
    )
    assert CompositeRatings(path=str(path), dimensions=["cm"]).value_names == ("composite_cm",)
    with pytest.raises(ConfigError, match="no composite for dimension"):
        CompositeRatings(path=str(path), dimensions=["st"])
    with pytest.raises(ConfigError, match="not found"):
        CompositeRatings(path=str(tmp_path / "none.json"))


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    checkpoints = tmp_path_factory.mktemp("checkpoints")
    torch.manual_seed(0)
    module = MotionAutoencoder(hidden_dim=16, latent_dim=8)
    module.set_normalisation(torch.zeros(333), torch.full((333,), 0.5))
    config = dataclasses.asdict(MotionAEConfig(hidden_dim=16, latent_dim=8, window=16, hop=8))
    save_motion_ae(module, motion_ae_path(checkpoints, "toy"), config, {})
    return toy_context(checkpoints)


def test_per_sequence_scores_a_pooled_metric_on_each_sequence_alone(tiny_encoder):
    encoder = {"hidden_dim": 16, "latent_dim": 8}
    wrapped = {
        "fgd": PerSequence(FGD(encoder_config=encoder)),
        "coverage": PerSequence(Coverage(encoder_config=encoder)),
    }
    for m in wrapped.values():
        m.prepare(tiny_encoder)
    assert (
        wrapped["fgd"].value_names == ("fgd", "fgd_raw_pose")
        and wrapped["fgd"].direction == "lower"
    )
    pairs = joint_pairs(3, seed=1)
    for p in pairs:
        for m in wrapped.values():
            m.update(p)
    for name, factory in (("fgd", FGD), ("coverage", Coverage)):
        per_sequence = wrapped[name].per_sequence()
        values = []
        for p in pairs:
            fresh = factory(encoder_config=encoder)
            fresh.prepare(tiny_encoder)
            fresh.update(p)
            expected = fresh.compute()
            for key, value in expected.items():
                assert per_sequence[p.index][key] == pytest.approx(value, rel=1e-9), (name, key)
            values.append(expected[name])
        assert wrapped[name].compute()[name] == pytest.approx(np.mean(values))
    with pytest.raises(ConfigError):
        PerSequence({"name": "fgd"})


def _ddp_scores(rank: int, world: int, composites_path: str, checkpoints: str) -> dict:
    """Each rank scores its share of the pairs; rank 0 returns the synced model-level values and
    per-sequence rows."""
    from pathlib import Path

    context = MetricContext(
        dataset_name="toy",
        split=lambda s: [],
        cache_dir=Path(checkpoints),
        checkpoints_dir=Path(checkpoints),
        body_model=None,
    )
    metrics = {
        "composite": CompositeRatings(path=composites_path),
        "coverage": PerSequence(Coverage(encoder_config={"hidden_dim": 16, "latent_dim": 8})),
    }
    metrics["coverage"].prepare(context)
    torch.set_num_threads(1)
    for p in joint_pairs(4, seed=2)[rank::world]:
        for m in metrics.values():
            m.update(p)
    out = {}
    for m in metrics.values():
        out.update(m.compute())
        with m.sync_context():
            out.update(
                {f"row{i}_{k}": v for i, row in m.per_sequence().items() for k, v in row.items()}
            )
    return out


@pytest.mark.slow  # two processes of the DDP pool (tests/distributed.py)
def test_two_process_ddp_equals_one_process(tmp_path, tiny_encoder):
    from tests.distributed import run_distributed

    composite = dict(MJD_PCK_COMPOSITE)
    configs = {
        "mjd": {"_target_": "gesturebench.metrics.mjd.MeanJointDistance", "name": "mjd"},
        "pck": {"_target_": "gesturebench.metrics.pck.PCK", "name": "pck"},
    }
    path = tmp_path / "composites.json"
    path.write_text(json.dumps(composites_document({"hl": composite}, configs, {})))
    args = (str(path), str(tiny_encoder.checkpoints_dir))
    single = _ddp_scores(0, 1, *args)
    assert (
        len([k for k in single if k.endswith("composite_hl")]) == 5
    )  # 4 rows + the model-level value
    distributed = run_distributed(_ddp_scores, *args)
    assert distributed.keys() == single.keys()
    for key, value in single.items():
        assert distributed[key] == pytest.approx(value, rel=1e-9), key
