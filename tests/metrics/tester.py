"""The checks every metric class passes, after torchmetrics' `MetricTester`: `compute` after one
`update` per sequence equals the metric's functional twin on the same sequences (and reading it
halfway changes nothing), two DDP processes give what one does (values, per-sequence table and
bootstrap replicates), and the bootstrap interval path runs on the metric's synced states and holds
the value (where the metric gives an interval).

`CASES` holds one `MetricCase` per metric class (some classes twice, under other options), each
built from module-level functions so that a DDP worker rebuilds it by name.
"""

from __future__ import annotations

import atexit
import functools
import math
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from gesturebench.body.joints import BODY_HANDS, UPPER
from gesturebench.body.output import BodyOutput
from gesturebench.data.records import N_JOINTS, Motion, Word
from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.encoders.representation import REP_DIM
from gesturebench.encoders.text_motion import TextMotionModel, save_text_motion, text_motion_path
from gesturebench.encoders.text_training import TextMotionConfig
from gesturebench.metrics.base import GestureMetric
from gesturebench.metrics.bc import BeatConsistency
from gesturebench.metrics.chamfer import Chamfer
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.coverage import Coverage
from gesturebench.metrics.density import Density
from gesturebench.metrics.dice import Dice
from gesturebench.metrics.div_k import PoseVariance
from gesturebench.metrics.diversity import Diversity
from gesturebench.metrics.fd_g import PoseFrechet
from gesturebench.metrics.fd_k import PoseDifferenceFrechet
from gesturebench.metrics.fgd import FGD
from gesturebench.metrics.foot_contact import FootContact
from gesturebench.metrics.functional import bc, coverage, density
from gesturebench.metrics.functional.dice import bone_raster, dice
from gesturebench.metrics.functional.div_k import pose_variance
from gesturebench.metrics.functional.diversity import l1_diversity
from gesturebench.metrics.functional.foot_contact import contact_rate
from gesturebench.metrics.functional.frechet import frechet_distance
from gesturebench.metrics.functional.ldlj_rel import windowed_ldlj
from gesturebench.metrics.functional.mjd import mean_joint_distance
from gesturebench.metrics.functional.pck import pck
from gesturebench.metrics.functional.sample_diversity import sample_diversity
from gesturebench.metrics.functional.srgr import semantic_weights, srgr
from gesturebench.metrics.functional.surface import chamfer_hausdorff, subsample_indices
from gesturebench.metrics.hausdorff import Hausdorff
from gesturebench.metrics.ldlj_rel import LDLJRel
from gesturebench.metrics.mjd import MeanJointDistance
from gesturebench.metrics.pair import MotionPair
from gesturebench.metrics.pck import PCK
from gesturebench.metrics.sample_diversity import SampleDiversity
from gesturebench.metrics.sc import SemanticScore
from gesturebench.metrics.srgr import SemanticRelevanceRecall
from gesturebench.stats.bootstrap import Resamples, percentile_interval, weighted_means
from tests.metrics import joints, poses
from tests.metrics.bodies import synthetic_pair
from tests.metrics.speech import MEAN_SPEED, bc_pairs, srgr_pairs
from tests.support.smooth_motions import mixing, smooth_motion

#: What a metric's `update` takes: a `MotionPair`, or (index, K samples' poses) for a metric of
#: the samples of one input together (`across_samples`).
Item = Any
#: A sequence twin: one item's [main, *extras] values (None: left out) and weight; None: the
#: sequence is not scored.
SequenceTwin = Callable[[Item], tuple[list[float | None], float] | None]
#: A pooled twin: the values of a distributional metric over all items.
PooledTwin = Callable[[list[Item]], dict[str, float | None]]

BOOTSTRAP, DISTRIBUTIONAL, CONFIDENCE, SEED = 200, 20, 0.95, 0


@dataclass(frozen=True)
class MetricCase:
    """A metric class under test: `build()` a fresh metric, the `data()` it is fed (one item per
    `update`, split indices in no order), and its functional twin, per sequence (`sequence`) or
    over all (`pooled`); `rel`/`abs` bound the class against the twin, `ddp_rel`/`ddp_abs` two
    processes against one."""

    build: Callable[[], GestureMetric]
    data: Callable[[], list[Item]]
    sequence: SequenceTwin | None = None
    pooled: PooledTwin | None = None
    rel: float = 1e-12
    abs: float = 0.0
    ddp_rel: float = 1e-12
    ddp_abs: float = 0.0
    #: False for a metric with no interval (`bootstrap` gives {}, the base's default)
    interval: bool = True

    def expected(self, items: list[Item]) -> dict[str, float | None]:
        """The twin's values of `items`: pooled, or the weighted mean of each value over the
        sequences that have it."""
        if self.pooled is not None:
            return self.pooled(items)
        rows = [r for r in self.twin_rows(items).values() if r is not None]
        names = self.build().value_names
        out: dict[str, float | None] = {}
        for k, name in enumerate(names):
            scored = [(v[k], w) for v, w in rows if v[k] is not None]
            total = sum(w for _, w in scored)
            out[name] = sum(v * w for v, w in scored) / total if total else None
        return out

    def twin_rows(self, items: list[Item]) -> dict[int, tuple[list[float | None], float] | None]:
        assert self.sequence is not None
        return {index_of(item): self.sequence(item) for item in items}


def index_of(item: Item) -> int:
    return item[0] if isinstance(item, tuple) else item.index


def feed(metric: GestureMetric, items: Sequence[Item]) -> None:
    for item in items:
        if metric.across_samples:
            metric.update(*item)
        else:
            metric.update(item)


def assert_values(got: dict, want: dict, rel: float, abs: float = 0.0, what: str = "") -> None:
    """Same names; None exactly where None (NaN exactly where NaN), the rest within tolerance."""
    assert set(got) == set(want), what
    for name, value in want.items():
        if value is None or got[name] is None:
            assert got[name] is value, f"{what} {name}"
        else:
            assert got[name] == pytest.approx(value, rel=rel, abs=abs, nan_ok=True), (
                f"{what} {name}"
            )


def resamples_of(items: list[Item]) -> Resamples:
    return Resamples.draw([index_of(i) for i in items], BOOTSTRAP, SEED)


# ---------------------------------------------------------------- the checks


def check_twin(case: MetricCase) -> None:
    """`compute` after half the updates, then after all, equals the twin; so does each row of the
    per-sequence table."""
    items = case.data()
    metric = case.build()
    half = len(items) // 2
    feed(metric, items[:half])
    assert_values(metric.compute(), case.expected(items[:half]), case.rel, case.abs, "half:")
    feed(metric, items[half:])
    value = metric.compute()
    assert list(value) == list(metric.value_names)
    assert_values(value, case.expected(items), case.rel, case.abs, "all:")
    rows = metric.per_sequence()
    if case.sequence is None:
        assert rows == {}  # distributional: no per-sequence table
        return
    want = {i: r for i, r in case.twin_rows(items).items() if r is not None}
    assert sorted(rows) == sorted(want)
    for index, (values, _) in want.items():
        nan = [math.nan if v is None else v for v in values]
        assert_values(rows[index], dict(zip(metric.value_names, nan)), case.rel, case.abs, "row")


def check_interval(case: MetricCase) -> None:
    """The evaluator's bootstrap path (metrics/base.py, stats/bootstrap.py) on the metric's synced
    states: replicates of every value (a per-sequence metric's: the weighted means of the twin's
    rows as drawn), and a percentile interval holding each value."""
    items = case.data()
    metric = case.build()
    feed(metric, items)
    values = metric.compute()
    resamples = resamples_of(items)
    if metric.distributional:
        resamples = resamples.head(DISTRIBUTIONAL)
    with metric.sync_context():
        drawn = metric.bootstrap(resamples)
    assert set(drawn) == (set(metric.value_names) if case.interval else set())
    if not case.interval:
        return
    if case.sequence is not None:
        rows = {i: r for i, r in case.twin_rows(items).items() if r is not None}
        table = np.array([[np.nan if v is None else v for v in r[0]] for r in rows.values()])
        weights = np.array([r[1] for r in rows.values()])
        means = weighted_means(table, weights, resamples.of(list(rows)))
        for k, name in enumerate(metric.value_names):
            assert drawn[name] == pytest.approx(means[:, k], rel=1e-9, nan_ok=True), name
    for name, value in values.items():
        if value is None:
            continue
        assert len(drawn[name]) == len(resamples.counts)
        if metric.distributional:
            interval = percentile_interval(drawn[name], CONFIDENCE, value, metric.value_range)
        else:
            interval = percentile_interval(drawn[name], CONFIDENCE)
        assert interval is not None, name
        slack = 1e-12 * max(1.0, abs(value))  # a weighted mean of equal values may round
        assert interval[0] - slack <= value <= interval[1] + slack, (name, value, interval)


def on_rank(rank: int, world: int, names: Sequence[str]) -> dict[str, tuple]:
    """Each case's values, per-sequence table and bootstrap replicates from this rank's share of
    its items (every `world`-th), as the evaluator reads them (synced)."""
    torch.set_num_threads(1)  # as the single process: float32 convolutions give the same bits
    out = {}
    for name in names:
        case = CASES[name]
        metric, items = case.build(), case.data()
        feed(metric, items[rank::world])
        value = metric.compute()
        resamples = resamples_of(items)
        if metric.distributional:
            resamples = resamples.head(DISTRIBUTIONAL)
        with metric.sync_context():
            out[name] = (value, metric.per_sequence(), metric.bootstrap(resamples))
    return out


def check_ddp(name: str, ddp: tuple, single: tuple) -> None:
    """Two processes' (value, rows, replicates) equal one process's."""
    case = CASES[name]
    (value, rows, drawn), (value_1, rows_1, drawn_1) = ddp, single
    assert_values(value, value_1, case.ddp_rel, case.ddp_abs, "value")
    assert sorted(rows) == sorted(rows_1)
    for index, row in rows_1.items():
        assert_values(rows[index], row, case.ddp_rel, case.ddp_abs, f"row {index}")
    assert set(drawn) == set(drawn_1)
    for n, replicates in drawn_1.items():
        # a replicate is held to the value's own absolute bound where that is looser (SC: float32
        # sentence encodings, summed in another order on two processes)
        bound = max(1e-12, case.ddp_abs)
        assert drawn[n] == pytest.approx(replicates, rel=1e-9, abs=bound, nan_ok=True), n


# ---------------------------------------------------------------- data


def body_pairs() -> list[MotionPair]:
    """Synthetic bodies with vertices, 12–19 frames, split indices in no order."""
    return [synthetic_pair(i, t=12 + i) for i in (4, 1, 7, 0, 2)]


def joint_pairs() -> list[MotionPair]:
    return [joints.make_pair(i, i) for i in (3, 0, 4, 1, 2)]


def pose_pairs() -> list[MotionPair]:
    """Random-walk poses 300–460 frames, far (1e3) from the origin: moments must pool exactly."""
    return poses.pairs(5, offset=1e3)


def sample_sets() -> list[tuple[int, list[np.ndarray]]]:
    """Per input, 2–4 samples' poses of unequal lengths."""
    rng = np.random.default_rng(4)
    items = []
    for index, k in ((2, 3), (0, 2), (5, 4), (1, 3), (3, 2)):
        base = rng.normal(size=(30, 165))
        items.append(
            (
                index,
                [
                    base[: 20 + s] + rng.normal(scale=0.1 * (s + 1), size=(20 + s, 165))
                    for s in range(k)
                ],
            )
        )
    return items


def feature_pairs() -> list[MotionPair]:
    """Smooth motions of 90–200 frames (4–11 windows of 32 each) with bodies left empty."""
    rng, mix = np.random.default_rng(0), mixing()
    out = []
    for i in (2, 0, 4, 1, 3):
        ref, gen = (smooth_motion(rng, int(rng.integers(90, 200)), mix) for _ in range(2))
        body = BodyOutput(torch.zeros(1, N_JOINTS, 3), None)
        out.append(MotionPair(i, f"s{i}", gen, ref, body, body))
    return out


def sc_pairs(n: int) -> list[MotionPair]:
    """Sequences of 5–9 s with words; generated motion = reference motion plus noise (SC ignores the
    body)."""
    rng = np.random.default_rng(5)
    body = BodyOutput(torch.zeros(1, N_JOINTS, 3), None)
    pairs = []
    for i in range(n):
        t = 150 + 30 * i
        ref = Motion(
            rng.normal(0, 0.2, (t, 165)),
            rng.normal(0, 0.1, (t, 3)),
            np.zeros(10),
            np.zeros((t, 100)),
        )
        gen = Motion(
            ref.poses + rng.normal(0, 0.3, ref.poses.shape), ref.trans, ref.betas, ref.expressions
        )
        words = [
            Word(["there", "big", "idea", "really", "the"][k % 5], 0.6 * k, 0.6 * k + 0.4)
            for k in range(t // 18)
        ]
        pairs.append(MotionPair(i, f"s{i}", gen, ref, body, body, words=words))
    return pairs


def save_sc_checkpoint(folder: Path) -> str:
    """An untrained (seeded) text–motion model in `folder`: DDP equality does not need a good
    one."""
    torch.manual_seed(0)
    path = text_motion_path(folder, "toy")
    save_text_motion(TextMotionModel(), path, asdict(TextMotionConfig()), {})
    return str(path)


@functools.cache
def sc_checkpoint() -> str:
    """`save_sc_checkpoint` once per process, in a temporary folder removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix="gesturebench-sc-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return save_sc_checkpoint(folder)


# ---------------------------------------------------------------- builders and twins


def diversity_frames() -> Diversity:
    return Diversity(joints="all", weighting="frames", name="diversity_frames")


def surface(kind: type[Chamfer] | type[Hausdorff]) -> Callable[[], GestureMetric]:
    return lambda: kind(num_points=SURFACE_POINTS)


def feature_metric(kind: type[FGD] | type[Density] | type[Coverage]) -> Callable[[], GestureMetric]:
    """`kind` on a tiny untrained motion autoencoder (seeded: the same in every process)."""

    def build() -> GestureMetric:
        metric = kind(encoder_config=TINY_ENCODER, encoder="motion_ae")
        torch.manual_seed(0)
        encoder = MotionAutoencoder(
            hidden_dim=TINY_ENCODER["hidden_dim"], latent_dim=TINY_ENCODER["latent_dim"]
        )
        encoder.set_normalisation(torch.zeros(REP_DIM), torch.full((REP_DIM,), 0.5))
        metric.encoder = encoder.eval()
        return metric

    return build


def semantic_score() -> SemanticScore:
    checkpoint = sc_checkpoint()
    folder = Path(checkpoint).parent
    metric = SemanticScore(checkpoint=checkpoint)
    metric.prepare(MetricContext("toy", lambda split: [], folder, folder, None))
    return metric


def two(value: torch.Tensor | float, other: torch.Tensor | float) -> list[float | None]:
    return [float(value), float(other)]


def surface_twin(index: int) -> SequenceTwin:
    def twin(pair: MotionPair) -> tuple[list[float | None], float]:
        ref, gen = (b.root_aligned_vertices() for b in (pair.ref_body, pair.gen_body))
        idx = subsample_indices(ref.shape[1], SURFACE_POINTS, 0)
        per_frame = chamfer_hausdorff(ref[:, idx], gen[:, idx], "kdtree")[index]
        return [float(per_frame.mean())], 1.0

    return twin


def diversity_twin(joint_ids: Sequence[int], by_frames: bool) -> SequenceTwin:
    def twin(pair: MotionPair) -> tuple[list[float | None], float]:
        values = two(*(l1_diversity(b.joints, joint_ids) for b in (pair.gen_body, pair.ref_body)))
        return values, float(pair.n_frames) if by_frames else 1.0

    return twin


def dice_twin(pair: MotionPair) -> tuple[list[float | None], float]:
    return [float(dice(bone_raster(pair.ref_body.joints), bone_raster(pair.gen_body.joints)))], 1.0


def foot_contact_twin(pair: MotionPair) -> tuple[list[float | None], float]:
    r_gen, r_ref = (
        float(contact_rate(b.vertices, pair.fps)) for b in (pair.gen_body, pair.ref_body)
    )
    return [abs(r_ref - r_gen), r_gen, r_ref], 1.0


def ldlj_twin(pair: MotionPair) -> tuple[list[float | None], float] | None:
    gen, ref = (
        float(windowed_ldlj(b.joints[:, list(UPPER)] - b.joints[:, :1], pair.fps))
        for b in (pair.gen_body, pair.ref_body)
    )
    if math.isnan(gen) or math.isnan(ref):
        return None
    return [ref - gen, gen, ref], 1.0


def mjd_twin(pair: MotionPair) -> tuple[list[float | None], float]:
    return [float(mean_joint_distance(pair.gen_body.joints, pair.ref_body.joints))], 1.0


def pck_twin(pair: MotionPair) -> tuple[list[float | None], float]:
    return [float(pck(pair.gen_body.joints, pair.ref_body.joints, 0.1))], 1.0


def div_k_twin(pair: MotionPair) -> tuple[list[float | None], float]:
    gen, ref = (pose_variance(torch.from_numpy(m.poses)) for m in (pair.generated, pair.reference))
    return two(gen, ref), 1.0


def sample_diversity_twin(item: tuple[int, list[np.ndarray]]) -> tuple[list[float | None], float]:
    return [float(sample_diversity(item[1]))], 1.0


def srgr_twin(pair: MotionPair) -> tuple[list[float | None], float]:
    weights = semantic_weights(pair.sem or [], pair.n_frames, pair.fps)
    return [float(srgr(pair.gen_body.joints, pair.ref_body.joints, weights))], 1.0


def bc_twin(pair: MotionPair) -> tuple[list[float | None], float]:
    """The paper's BC: global joint speeds of the UPPER joints, the trimmed segment's onsets."""
    start, stop = bc.trim_frames(pair.n_frames, pair.fps, 2.0)
    assert pair.audio is not None
    onsets = bc.segment_onsets(
        torch.from_numpy(pair.audio), pair.sample_rate, start, stop, pair.fps
    )
    mean_speed = torch.tensor(MEAN_SPEED, dtype=torch.float64)[list(UPPER)]
    values = []
    for body in (pair.gen_body, pair.ref_body):
        speeds = bc.joint_speeds(body.joints.double()[:, list(UPPER)], pair.fps)[start:stop]
        values.append(float(bc.beat_consistency(speeds, onsets, mean_speed, pair.fps)))
    return values, float(stop - start)


def pose_frechet_twin(name: str, kinematic: bool) -> PooledTwin:
    """scipy's Fréchet distance on the pooled frames (or frame differences): FD_g and FD_k have no
    functional module of their own."""
    return lambda items: {name: poses.expected(items, kinematic)}


def frechet_of(x: torch.Tensor, y: torch.Tensor) -> float:
    """`frechet_distance` of the moments of feature rows `x` (reference) and `y` (generated)."""
    return float(frechet_distance(x.mean(0), torch.cov(x.T), y.mean(0), torch.cov(y.T)))


def encoded(items: list[MotionPair]) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """The reference's and generated motion's stacked encoder features and raw window means."""
    metric = feature_metric(FGD)()
    feat: dict[str, list[torch.Tensor]] = {"ref": [], "gen": []}
    raw: dict[str, list[torch.Tensor]] = {"ref": [], "gen": []}
    for pair in items:
        for side, motion in (("ref", pair.reference), ("gen", pair.generated)):
            windows, features = metric.encode(motion)
            feat[side].append(features)
            raw[side].append(windows.mean(1).double())
    return (
        {k: torch.cat(v) for k, v in feat.items()},
        {k: torch.cat(v) for k, v in raw.items()},
    )


def fgd_twin(items: list[MotionPair]) -> dict[str, float | None]:
    feat, raw = encoded(items)
    return {
        "fgd": frechet_of(feat["ref"], feat["gen"]),
        "fgd_raw_pose": frechet_of(raw["ref"], raw["gen"]),
    }


def neighbour_twin(name: str, statistic: Callable[..., torch.Tensor]) -> PooledTwin:
    def twin(items: list[MotionPair]) -> dict[str, float | None]:
        feat, _ = encoded(items)
        return {name: float(statistic(feat["ref"], feat["gen"], 5, 1024))}

    return twin


SURFACE_POINTS = 1000  # a subsample keeps two processes on two cores quick
TINY_ENCODER = {"hidden_dim": 16, "latent_dim": 8, "window": 32, "hop": 16}
FEATURES = {"rel": 1e-6, "abs": 1e-9, "ddp_rel": 1e-9, "ddp_abs": 1e-12}
#: FD_g and FD_k: scipy on the pooled frames stands in for a twin; no interval (distributional)
FRECHET = {"rel": 1e-6, "ddp_rel": 1e-9, "interval": False}

#: One case per metric class (Diversity twice: ours and EMAGE's frame-weighted convention), by
#: id; `SLOW` ones (by their class) load a sentence encoder.
CASES: dict[str, MetricCase] = {
    "diversity": MetricCase(Diversity, body_pairs, diversity_twin(BODY_HANDS, False)),
    "diversity_frames": MetricCase(
        diversity_frames, body_pairs, diversity_twin(range(N_JOINTS), True)
    ),
    "chamfer": MetricCase(surface(Chamfer), body_pairs, surface_twin(0)),
    "hausdorff": MetricCase(surface(Hausdorff), body_pairs, surface_twin(1)),
    "dice": MetricCase(Dice, body_pairs, dice_twin),
    "foot_contact": MetricCase(FootContact, body_pairs, foot_contact_twin),
    "ldlj_rel": MetricCase(LDLJRel, body_pairs, ldlj_twin),
    "mjd": MetricCase(MeanJointDistance, joint_pairs, mjd_twin),
    "pck": MetricCase(PCK, joint_pairs, pck_twin),
    "var_k": MetricCase(PoseVariance, pose_pairs, div_k_twin),
    "div_sample": MetricCase(SampleDiversity, sample_sets, sample_diversity_twin),
    "srgr": MetricCase(SemanticRelevanceRecall, lambda: srgr_pairs(5), srgr_twin),
    "bc": MetricCase(lambda: BeatConsistency(mean_speed=MEAN_SPEED), lambda: bc_pairs(5), bc_twin),
    "fd_g": MetricCase(PoseFrechet, pose_pairs, pooled=pose_frechet_twin("fd_g", False), **FRECHET),
    "fd_k": MetricCase(
        PoseDifferenceFrechet, pose_pairs, pooled=pose_frechet_twin("fd_k", True), **FRECHET
    ),
    "fgd": MetricCase(feature_metric(FGD), feature_pairs, pooled=fgd_twin, **FEATURES),
    "density": MetricCase(
        feature_metric(Density),
        feature_pairs,
        pooled=neighbour_twin("density", density.density),
        **FEATURES,
    ),
    "coverage": MetricCase(
        feature_metric(Coverage),
        feature_pairs,
        pooled=neighbour_twin("coverage", coverage.coverage),
        **FEATURES,
    ),
    # no functional twin (the learned encoder is the maths): DDP and the interval only
    "sc": MetricCase(semantic_score, lambda: sc_pairs(5), ddp_abs=1e-6, ddp_rel=0.0),
}
SLOW: dict[str, type[GestureMetric]] = {"sc": SemanticScore}
