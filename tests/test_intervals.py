"""Every value's interval is the bootstrap of that value's own statistic: for each value of each
metric of the paper and study presets, the replicates equal the statistic recomputed by brute
force on the resampled sequences (a fresh metric fed each drawn sequence as often as it is drawn),
and the interval holds the value."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hydra.utils import get_class

from gesturebench.metrics.base import GestureMetric, annotated
from gesturebench.metrics.bc import BeatConsistency
from gesturebench.metrics.chamfer import Chamfer
from gesturebench.metrics.composite import PerSequence
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.coverage import Coverage
from gesturebench.metrics.density import Density
from gesturebench.metrics.dice import Dice
from gesturebench.metrics.diversity import Diversity
from gesturebench.metrics.fgd import FGD
from gesturebench.metrics.foot_contact import FootContact
from gesturebench.metrics.hausdorff import Hausdorff
from gesturebench.metrics.ldlj_rel import LDLJRel
from gesturebench.metrics.mjd import MeanJointDistance
from gesturebench.metrics.pair import MotionPair
from gesturebench.metrics.pck import PCK
from gesturebench.metrics.sc import SemanticScore
from gesturebench.metrics.srgr import SemanticRelevanceRecall
from gesturebench.stats.bootstrap import Resamples, percentile_interval
from tests.helpers import REPO, toy_context
from tests.metrics.bodies import synthetic_pair
from tests.metrics.speech import MEAN_SPEED, bc_pairs, srgr_pairs
from tests.metrics.tester import sc_pairs
from tests.support.feature_metrics import ENCODER_CONFIG, pair
from tests.support.sgp import hand_made, replay_metric
from tests.support.smooth_motions import motions

pytestmark = pytest.mark.usefixtures("one_thread")

RESAMPLES = 8
CONFIDENCE = 0.95


def preset_classes() -> set[str]:
    """The metric classes of one MotionPair the paper and study presets configure (div_sample's,
    of the samples together: tests/metrics/test_sample_diversity.py)."""
    text = "".join(
        (REPO / "conf" / "metrics" / f"{p}.yaml").read_text() for p in ("paper", "study")
    )
    targets = set(re.findall(r"_target_: ([\w.]+)", text))
    return {t.rsplit(".", 1)[1] for t in targets if not get_class(t).across_samples}


def brute_replicates(
    make: Callable[[], GestureMetric], pairs: list[MotionPair], resamples: Resamples
) -> dict[str, np.ndarray]:
    """Each value recomputed on each resample: a new metric fed every drawn sequence as often as
    the resample draws it."""
    out: dict[str, list[float]] = {}
    for counts in resamples.of([p.index for p in pairs]):
        metric = make()
        for p, count in zip(pairs, counts, strict=True):
            for _ in range(count):
                metric.update(p)
        for name, value in metric.compute().items():
            out.setdefault(name, []).append(np.nan if value is None else value)
    return {n: np.asarray(v) for n, v in out.items()}


def check(make: Callable[[], GestureMetric], pairs: list[MotionPair]) -> set[str]:
    """Asserts, for every value of the metric `make` builds, that its replicates equal the brute
    force's and its interval holds the value; returns the value names checked."""
    metric = make()
    for p in pairs:
        metric.update(p)
    values = metric.compute()
    resamples = Resamples.draw([p.index for p in pairs], RESAMPLES, seed=4)
    replicates = metric.bootstrap(resamples)
    brute = brute_replicates(make, pairs, resamples)
    scored = {n for n, v in values.items() if v is not None}
    assert scored and scored <= set(replicates), type(metric).__name__
    for name in scored:
        np.testing.assert_allclose(replicates[name], brute[name], rtol=1e-6, err_msg=name)
        finite = brute[name][np.isfinite(brute[name])]
        tail = (1 - CONFIDENCE) / 2
        q_lo, q_mid, q_hi = np.quantile(finite, [tail, 0.5, 1 - tail])
        if metric.distributional:
            # biased upwards on resamples (a drawn-twice sequence narrows the covariance): the
            # quantiles are shifted by the median bias and kept within the statistic's range
            lo, hi = percentile_interval(
                replicates[name], CONFIDENCE, values[name], metric.value_range
            )
            shift = q_mid - values[name]
            expected = np.clip([q_lo - shift, q_hi - shift], *metric.value_range)
        else:
            lo, hi = percentile_interval(replicates[name], CONFIDENCE)
            expected = np.array([q_lo, q_hi])
        assert [lo, hi] == pytest.approx(list(expected), rel=1e-6, abs=1e-12)
        assert lo - 1e-9 <= values[name] <= hi + 1e-9, (name, values[name], lo, hi)
    return scored


def reused(metric: GestureMetric, context: MetricContext) -> Callable[[], GestureMetric]:
    """A builder of `metric` prepared once (encoders load once), its states reset at each call."""
    metric.prepare(context)

    def fresh() -> GestureMetric:
        metric.reset()
        return metric

    return fresh


@pytest.mark.slow  # about 30-50 s: every metric refitted on each resample
def test_every_value_of_every_preset_metric_has_its_own_statistics_interval(
    ckpt, sc_checkpoint, tmp_path
):
    ckpt_dir, _ = ckpt
    bodies = [synthetic_pair(i, t=10 + 3 * i) for i in range(4)]
    refs = motions(5, 5)  # generated: another draw, faster (FGD clearly above 0)
    gens = [dataclasses.replace(m, poses=1.5 * m.poses) for m in motions(5, 6)]
    features = [pair(i, gens[i], refs[i]) for i in range(5)]
    sc_dir = Path(sc_checkpoint).parent
    sc_context = MetricContext("toy", lambda split: [], sc_dir, sc_dir, None)
    sgp_pairs = [p for p in hand_made(tmp_path) if p.sem is not None]
    sgp = replay_metric(tmp_path)  # annotates the pairs the SGP cases score
    sgp_pairs = [annotated(p, sgp) for p in sgp_pairs]
    cases: list[tuple[Callable[[], GestureMetric], list[MotionPair]]] = [
        *((cls, bodies) for cls in (MeanJointDistance, PCK, Diversity, Dice, FootContact)),
        *((cls, bodies) for cls in (Chamfer, Hausdorff, LDLJRel)),
        (lambda: BeatConsistency(mean_speed=MEAN_SPEED), bc_pairs(4)),
        (SemanticRelevanceRecall, srgr_pairs(4)),
        (reused(SemanticScore(checkpoint=sc_checkpoint), sc_context), sc_pairs(3)),
        (lambda: replay_metric(tmp_path), sgp_pairs),
        (reused(FGD(encoder_config=ENCODER_CONFIG), toy_context(ckpt_dir)), features),
        (reused(PerSequence(FGD(encoder_config=ENCODER_CONFIG)), toy_context(ckpt_dir)), features),
    ]
    covered, names = set(), set()
    for make, pairs in cases:
        names |= check(make, pairs)
        covered.add(type(make()).__name__)
    # Density and Coverage keep the full reference set's ball radii in every resample, so a
    # brute-force refit differs by design; tests/test_bootstrap.py recomputes them with those
    # radii. Here: every value they report has replicates and an interval.
    for cls in (Density, Coverage):
        metric = reused(cls(encoder_config=ENCODER_CONFIG), toy_context(ckpt_dir))()
        for p in features:
            metric.update(p)
        replicates = metric.bootstrap(Resamples.draw(range(5), RESAMPLES, seed=4))
        for name in metric.compute():
            assert percentile_interval(replicates[name], CONFIDENCE) is not None, name
        covered.add(cls.__name__)
    assert covered >= preset_classes()
    assert {"sgp_events", "sgp_invalid", "sgp_class_beat", "bc_ref", "diversity_ref"} <= names


def test_sgp_extra_values_intervals_are_of_totals_and_shares(tmp_path):
    """Hand-made stores: resampling every sequence once gives the values themselves, a resample
    drawing one sequence twice doubles its counts in the totals and the shares."""
    pairs = [p for p in hand_made(tmp_path) if p.sem is not None]
    metric = replay_metric(tmp_path)
    for p in pairs:
        metric.update(annotated(p, metric))
    values = metric.compute()
    indices = [p.index for p in pairs]
    once = Resamples(np.asarray(indices), np.ones((1, len(pairs)), dtype=np.int64))
    for name, drawn in metric.bootstrap(once).items():
        assert drawn[0] == pytest.approx(values[name]), name
    # sequence a (index 0) drawn twice, c (index 2) left out: a has 3 valid events (beat,
    # deictic, invalid), c two (none, uncertain)
    counts = np.array([[2 if i == 0 else 0 if i == 2 else 1 for i in indices]])
    twice = metric.bootstrap(Resamples(np.asarray(indices), counts))
    assert twice["sgp_events"][0] == values["sgp_events"] + 3 - 2
    assert twice["sgp_invalid"][0] == values["sgp_invalid"] + 1
    assert twice["sgp_class_beat"][0] == pytest.approx(3 / 7)  # beats 2 + 1 of 10 − 3 ok events
    assert twice["sgp"][0] == pytest.approx(np.mean([2 / 3, 2 / 3, 1.0, 2 / 3]))
