"""Several samples per input (`model.samples`, docs/statistics.md): which models may draw more than
one, the seed of each sample in the cache key, the averaged values with their spread, the paired
comparison of a sampled model, and the run `launch.py model=perturbed model.samples=3` makes, end
to end in the test process."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gesturebench import api
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.base import GestureModel
from gesturebench.models.cache import MotionCache
from gesturebench.reporting.comparisons import compare_pair
from gesturebench.run.config import build_model
from gesturebench.run.evaluator import mean_values, sample_summary
from gesturebench.runtime.errors import ConfigError
from tests.helpers import CONF, composed, zero_motion
from tests.launch import error_line, results, stopped


def model_node(*overrides: str):
    return composed(*overrides).model


@pytest.mark.parametrize(
    ("overrides", "stochastic"),
    [
        (("model=perturbed", "model/perturbation=jitter"), True),
        (("model=perturbed", "model/perturbation=beat_collapse", "model.level=0.5"), True),
        (("model=random_clip",), True),
        (("model=perturbed", "model/perturbation=time_shift"), False),
        (("model=ground_truth",), False),
        (("model=mean_pose",), False),
    ],
)
def test_only_stochastic_models_take_several_samples(overrides, stochastic):
    assert build_model(model_node(*overrides)).samples == 1
    several = (*overrides, "model.samples=3")
    if stochastic:
        assert build_model(model_node(*several)).samples == 3
    else:
        with pytest.raises(ConfigError, match=r"model.samples=3: model=\S+ is deterministic"):
            build_model(model_node(*several))


def test_samples_must_be_a_whole_number_and_its_typo_fails_at_compose():
    with pytest.raises(ConfigError, match="whole number >= 1"):
        build_model(model_node("model=random_clip", "model.samples=0"))
    with pytest.raises(Exception, match="sampels"):
        composed("model=random_clip", "model.sampels=2")
    assert composed("model=emage", "model.samples=2").model.samples == 2  # its schema takes it


class Noisy(GestureModel):
    """A cacheable stochastic model: reference plus noise drawn from its seed."""

    stochastic = True

    def __init__(self, seed: int = 0):
        super().__init__("noisy", seed=seed)
        self.seed = seed
        self.calls = 0

    def generate(self, record: SequenceRecord) -> Motion:
        self.calls += 1
        m = record.motion
        noise = np.random.default_rng(self.seed).normal(size=m.poses.shape)
        return Motion(m.poses + noise, m.trans, m.betas, m.expressions)


def test_each_seed_is_generated_and_cached_separately(tmp_path):
    record = SequenceRecord("s0", 2, zero_motion(10), index=0)
    cache, model = MotionCache(tmp_path), Noisy(seed=5)
    drawn = {}
    for seed in (5, 6, 7):
        model.reseed(seed)
        drawn[seed] = cache.get(model, record).poses
    assert model.calls == 3 and len(list(tmp_path.rglob("*.npz"))) == 3
    assert not np.allclose(drawn[5], drawn[6])
    model.reseed(6)
    assert np.array_equal(cache.get(model, record).poses, drawn[6]) and model.calls == 3


def test_values_are_sample_means_and_the_spread_their_std():
    samples = [{"mjd": 1.0, "fgd": None}, {"mjd": 2.0, "fgd": 0.5}, {"mjd": 4.0, "fgd": 0.7}]
    assert mean_values(samples) == {"mjd": pytest.approx(7 / 3), "fgd": None}
    summary = sample_summary([0, 1, 2], samples)
    assert summary is not None and summary["k"] == 3 and summary["seeds"] == [0, 1, 2]
    assert summary["values"]["mjd"] == [1.0, 2.0, 4.0]
    assert summary["spread"] == {
        "mjd": pytest.approx(np.sqrt(((np.array([1, 2, 4]) - 7 / 3) ** 2).sum() / 2))
    }
    assert sample_summary([0], samples[:1]) is None


def test_a_sampled_model_is_compared_on_its_mean_per_sequence():
    sampled = {
        "per_sequence": [
            {"index": i, "sample": k, "mjd": float(i + k)} for i in range(4) for k in range(3)
        ]
    }
    single = {"per_sequence": [{"index": i, "mjd": float(i)} for i in range(4)]}
    difference, lo, hi, _, _, test, n = compare_pair(sampled, single, "mjd", 200, 0, 0.95)
    assert (difference, lo, hi, test, n) == (1.0, 1.0, 1.0, "sign-flip", 4)


@pytest.mark.slow
def test_launch_perturbed_with_three_samples_and_ground_truth_refusing_two(
    tmp_path, in_process, capsys
):
    common = ("metrics=fast", "logger=none", "dataset.max_sequences=3", "task.render_clips=0")
    out = tmp_path / "sampled"
    in_process(
        "model=perturbed", "model.samples=3", *common, f"hydra.run.dir={out}", encoders=False
    )
    res = results(out)
    samples = res["samples"]
    assert samples["k"] == 3 and samples["seeds"] == [0, 1, 2]
    mjd = samples["values"]["mjd"]
    assert len(set(mjd)) == 3 and res["metrics"]["mjd"] == pytest.approx(np.mean(mjd))
    assert samples["spread"]["mjd"] == pytest.approx(np.std(mjd, ddof=1)) and mjd[0] > 0
    table = pd.read_csv(out / "per_sequence.csv")
    assert sorted(table["sample"].unique()) == [0, 1, 2] and len(table) == 9
    per_input = table.groupby("index")["div_sample"].agg(["min", "max"])
    assert (per_input["min"] == per_input["max"]).all() and (per_input["min"] > 0).all()
    assert res["metrics"]["div_sample"] == pytest.approx(per_input["min"].mean())
    assert res["directions"]["div_sample"] == "higher" and "div_sample" in res["intervals"]
    lo, hi = res["intervals"]["mjd"]
    assert lo <= res["metrics"]["mjd"] <= hi

    refused = stopped(
        capsys, "model=ground_truth", "model.samples=2", *common, f"hydra.run.dir={tmp_path / 'gt'}"
    )
    assert "model=ground_truth is deterministic" in error_line(refused), refused.err


def test_a_preset_without_div_sample_gives_none(sandbox, mini_beat2, tmp_path):
    """Two samples, in process, of `metrics=fast` without its div_sample entry: no div_sample
    anywhere in the results (with it, the launch test above scores one)."""
    res = api.evaluate(
        *sandbox.overrides,
        "metrics=fast",
        "~metrics.div_sample",
        "model=perturbed",
        "model.samples=2",
        "dataset.max_sequences=1",
        "stats.bootstrap=0",
        "task.render_clips=0",
        f"hydra.run.dir={tmp_path}",
        logger="none",
        config_dir=CONF,
    )
    assert res["samples"]["k"] == 2 and res["metrics"]["mjd"] > 0
    rows = {name for row in res["per_sequence"] for name in row}
    parts = ("metrics", "options", "directions", "skipped", "intervals")
    assert not any("div_sample" in names for names in (rows, *(res[p] for p in parts)))
