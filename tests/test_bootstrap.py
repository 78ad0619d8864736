"""Bootstrap intervals (docs/statistics.md): coverage of the percentile interval, the metrics'
resampled values against brute-force recomputation on resampled data, DDP, and results.json."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.spatial.distance
import torch

from gesturebench.metrics.mjd import MeanJointDistance
from gesturebench.reporting.tables import write_summary
from gesturebench.stats.bootstrap import Resamples, percentile_interval, weighted_means
from tests.distributed import run_distributed
from tests.helpers import toy_context
from tests.launch import results
from tests.metrics.references import scipy_frechet
from tests.support.feature_metrics import make_metrics, pair
from tests.support.smooth_motions import motions

pytestmark = pytest.mark.usefixtures("one_thread")


def test_percentile_interval_covers_the_population_mean_95_percent_of_the_time():
    """400 test sets of 80 sequences drawn from a fixed population of skewed per-sequence values
    with weights: the 95 % interval of the weighted mean holds the population's in 93–97 % (0.940
    over 1000 such draws; a binomial standard error of 1.1 % over 400)."""
    rng = np.random.default_rng(1)
    values, weights = rng.gamma(4.0, 1.0, 20000), rng.uniform(0.5, 2.0, 20000)
    truth = (values * weights).sum() / weights.sum()
    hits = 0
    for draw in range(400):
        pick = rng.integers(0, len(values), 80)
        resamples = Resamples.draw(np.arange(80), 1000, seed=draw)
        replicates = weighted_means(values[pick, None], weights[pick], resamples.counts)[:, 0]
        lo, hi = percentile_interval(replicates, 0.95)
        hits += lo <= truth <= hi
    assert 0.93 <= hits / 400 <= 0.97


def test_weighted_means_hand_worked_and_undefined_values():
    values = np.array([[1.0, np.nan], [3.0, 5.0]])
    counts = np.array([[2, 0], [1, 1], [0, 2]])
    got = weighted_means(values, np.array([1.0, 3.0]), counts)
    assert got[:, 0].tolist() == [1.0, 2.5, 3.0]
    assert np.isnan(got[0, 1]) and got[1:, 1].tolist() == [5.0, 5.0]
    assert percentile_interval(np.array([np.nan]), 0.95) is None


def test_resamples_follow_split_indices_not_their_order():
    resamples = Resamples.draw([7, 3, 5], 4, seed=1)
    assert resamples.indices.tolist() == [3, 5, 7] and (resamples.counts.sum(1) == 3).all()
    assert np.array_equal(resamples.of([7, 3]), resamples.counts[:, [2, 0]])


def _brute_prdc(real, fake, radii, k):
    """Density and Coverage of explicit (repeated) feature sets whose balls keep `radii`."""
    d = scipy.spatial.distance.cdist(fake, real)
    inside = d < radii
    return inside.sum() / (k * len(fake)), inside.any(0).mean()


def test_fgd_density_coverage_bootstrap_equal_brute_force_on_resampled_features(ckpt):
    """Each replicate equals the statistic recomputed from the resampled sequences' features
    (FGD: numpy moments and scipy's sqrtm; Density/Coverage: distances by scipy, the balls of the
    full reference set)."""
    ckpt_dir, _ = ckpt
    refs, gens = motions(6, 5), motions(6, 6)
    metrics = make_metrics()
    for m in metrics.values():
        m.prepare(toy_context(ckpt_dir))
    for i in range(6):
        for m in metrics.values():
            m.update(pair(i, gens[i], refs[i]))
    values = {k: v for m in metrics.values() for k, v in m.compute().items()}
    resamples = Resamples.draw(range(6), 4, seed=3)
    boot = {k: v for m in metrics.values() for k, v in m.bootstrap(resamples).items()}
    probe = metrics["fgd"]
    feats = [[probe.encode(m)[1].numpy() for m in ms] for ms in (refs, gens)]
    raw = [[probe.encode(m)[0].mean(1).double().numpy() for m in ms] for ms in (refs, gens)]
    real_all = np.concatenate(feats[0])
    radii = np.sort(scipy.spatial.distance.cdist(real_all, real_all), axis=1)[:, 5]
    owner = np.repeat(np.arange(6), [len(f) for f in feats[0]])
    for b, counts in enumerate(resamples.counts):
        drawn = np.repeat(np.arange(6), counts)
        ref, gen = (np.concatenate([side[s] for s in drawn]) for side in feats)
        assert boot["fgd"][b] == pytest.approx(scipy_frechet(ref, gen), rel=1e-6)
        ref_raw, gen_raw = (np.concatenate([side[s] for s in drawn]) for side in raw)
        assert boot["fgd_raw_pose"][b] == pytest.approx(scipy_frechet(ref_raw, gen_raw), rel=1e-4)
        balls = np.concatenate([np.flatnonzero(owner == s) for s in drawn])
        density, coverage = _brute_prdc(real_all[balls], gen, radii[balls], 5)
        assert boot["density"][b] == pytest.approx(density, abs=1e-12)
        assert boot["coverage"][b] == pytest.approx(coverage, abs=1e-12)
    # every sequence drawn once: the metric's own values
    once = Resamples(np.arange(6), np.ones((1, 6), dtype=np.int64))
    for m in metrics.values():
        for k, v in m.bootstrap(once).items():
            assert v[0] == pytest.approx(values[k], rel=1e-9), k


def _bootstrap_on_rank(rank, world, ckpt_dir, gens, refs):
    torch.set_num_threads(1)
    metrics = {**make_metrics(), "mjd": MeanJointDistance()}
    for m in metrics.values():
        m.prepare(toy_context(ckpt_dir))
    for i in range(rank, len(refs), world):
        for m in metrics.values():
            m.update(pair(i, gens[i], refs[i]))
    resamples = Resamples.draw(range(len(refs)), 50, seed=0)
    out = {}
    for m in metrics.values():
        with m.sync_context():
            out.update(m.bootstrap(resamples))
    return out


@pytest.mark.slow  # two processes of the DDP pool (tests/distributed.py)
def test_ddp_bootstrap_equals_one_process(ckpt):
    """Two processes (sequences interleaved across ranks) give the single process's replicates."""
    ckpt_dir, _ = ckpt
    refs, gens = motions(5, 3), motions(5, 4)
    single = _bootstrap_on_rank(0, 1, ckpt_dir, gens, refs)
    ddp = run_distributed(_bootstrap_on_rank, ckpt_dir, gens, refs)
    assert set(ddp) == set(single) >= {"fgd", "fgd_raw_pose", "density", "coverage", "mjd"}
    for k in single:
        np.testing.assert_allclose(ddp[k], single[k], rtol=1e-9, atol=1e-12, err_msg=k)


def test_summary_shows_value_and_interval(tmp_path):
    rows = [
        {
            "job": "a",
            "status": "ok",
            "model": "m",
            "metrics": {"mjd": 0.5, "fgd": None},
            "intervals": {"mjd": [0.25, 0.75]},
            "directions": {"mjd": "lower", "fgd": "lower"},
        }
    ]
    write_summary(tmp_path, rows)
    csv = pd.read_csv(tmp_path / "summary.csv")
    assert csv.loc[0, ["mjd", "mjd_lo", "mjd_hi"]].tolist() == [0.5, 0.25, 0.75]
    assert "fgd_lo" not in csv.columns
    assert "0.5 [0.25, 0.75]" in (tmp_path / "summary.md").read_text()


@pytest.mark.slow
def test_evaluate_writes_intervals_and_bootstrap_0_writes_none(basic_sweep, tmp_path, in_process):
    """The sweep's results.json hold an interval for every scored value (none for skipped ones),
    its summary shows them; `stats.bootstrap=0` gives none."""
    sweep, proc = basic_sweep
    assert proc.returncode == 0, proc.stderr[-3000:]
    for job in sweep.glob("*/results.json"):
        res = results(job.parent)
        scored = {k for k, v in res["metrics"].items() if v is not None}
        assert set(res["intervals"]) == scored and "mjd" in scored
        assert all(lo <= hi for lo, hi in res["intervals"].values())
        lo, hi = res["intervals"]["mjd"]
        assert lo <= res["metrics"]["mjd"] <= hi
    assert {"mjd_lo", "mjd_hi"} <= set(pd.read_csv(sweep / "summary.csv").columns)
    assert "] |" in (sweep / "summary.md").read_text()
    in_process(
        "metrics=fast",
        "logger=none",
        "dataset.max_sequences=2",
        "task.render_clips=0",
        "stats.bootstrap=0",
        f"hydra.run.dir={tmp_path}",
    )
    res = results(tmp_path)
    assert res["intervals"] == {} and res["metrics"]["mjd"] is not None


def test_a_distributional_interval_is_shifted_by_the_median_bias_and_holds_its_value():
    # replicates 10..14 all above the value 5 (resampling's upward bias): the plain interval
    # [10.1, 13.9] misses it; shifted by median 12 - 5 = 7 it is [3.1, 6.9]
    replicates = np.array([10.0, 11.0, 12.0, 13.0, 14.0])
    assert percentile_interval(replicates, 0.95) == pytest.approx([10.1, 13.9])
    assert percentile_interval(replicates, 0.95, value=5.0) == pytest.approx([3.1, 6.9])
    # kept within the statistic's range: FGD of a perfect copy is 0, never below
    assert percentile_interval(replicates, 0.95, 5.0, (4.0, 6.0)) == pytest.approx([4.0, 6.0])
    copy = np.array([0.0, 1e-13, 2e-13])
    interval = percentile_interval(copy, 0.95, 0.0, (0, np.inf))
    assert interval == pytest.approx([0, 0.95e-13], abs=1e-20)
    # a value rounding put below its range (an FGD of -2.6e-4) is still inside its interval
    near_zero = np.array([1e-4, 2e-4, 3e-4])
    lo, hi = percentile_interval(near_zero, 0.95, -2.6e-4, (0, np.inf))
    assert lo <= -2.6e-4 <= hi
    assert (lo, hi) == pytest.approx((-2.6e-4, -2.6e-4 + 0.95e-4))
